// SPDX-License-Identifier: MIT OR Apache-2.0
//! Tests of one binary run on several threads, and a driver's host build keeps its statics for
//! the whole process: a test that panics with the driver's counterset registered leaves its
//! handle in the driver's static slot, and the next `DriverEntry` (or `register`) of any test
//! replaces it — unregistering that stale handle. Whatever runs beside or before it, a test's
//! scenario must see only its own kernel's registrations.

#![cfg(all(target_arch = "x86_64", unix))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use pcw_harness::{BUILD_SERVER_2022, Driver, Kernel, Request, finish};
use windows_sys::Wdk::Foundation::PPCW_REGISTRATION;
use windows_sys::Wdk::System::SystemServices::{
    PCW_COUNTER_DESCRIPTOR, PCW_REGISTRATION_INFORMATION, PCW_VERSION_2, PcwRegister, PcwUnregister,
};
use windows_sys::Win32::Foundation::UNICODE_STRING;

/// The counterset the small driver below registers.
const SET: &str = "Independence Set";

/// The driver's registration, between `DriverEntry` and `DriverUnload`, in a static as a
/// driver keeps it (the crates `pcw new` writes keep theirs the same way).
static REGISTRATION: Mutex<Option<PPCW_REGISTRATION>> = Mutex::new(None);

fn slot() -> std::sync::MutexGuard<'static, Option<PPCW_REGISTRATION>> {
    REGISTRATION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Registers the counterset (no callback: an empty set is enough to be found) and stores the
/// handle, dropping — unregistering — whatever the slot held, as the generated
/// `registrations.set = Some(register_publisher(..)?)` does.
fn register() -> i32 {
    let mut name: Vec<u16> = SET.encode_utf16().collect();
    let len = u16::try_from(name.len() * 2).unwrap_or(u16::MAX);
    let mut name = UNICODE_STRING {
        Length: len,
        MaximumLength: len,
        Buffer: name.as_mut_ptr(),
    };
    let mut counters = [PCW_COUNTER_DESCRIPTOR {
        Id: 0,
        StructIndex: 0,
        Offset: 0,
        Size: 8,
    }];
    let info = PCW_REGISTRATION_INFORMATION {
        Version: PCW_VERSION_2,
        Name: &raw mut name,
        CounterCount: 1,
        Counters: counters.as_mut_ptr(),
        Callback: None,
        CallbackContext: std::ptr::null_mut(),
        Flags: 0,
    };
    let mut handle: PPCW_REGISTRATION = 0;
    // SAFETY: the information block and everything it points at live across the call.
    let status = unsafe { PcwRegister(&raw mut handle, &raw const info) };
    if status >= 0 {
        let stale = slot().replace(handle);
        if let Some(stale) = stale {
            // SAFETY: any handle value is accepted and checked.
            unsafe { PcwUnregister(stale) };
        }
    }
    status
}

fn unregister() {
    let handle = slot().take();
    if let Some(handle) = handle {
        // SAFETY: the handle `register` stored.
        unsafe { PcwUnregister(handle) };
    }
}

/// `DriverUnload`.
unsafe extern "system" fn driver_unload(_driver: *mut u8) {
    unregister();
}

/// `DriverEntry`: registers the counterset and sets `DriverUnload`.
///
/// # Safety
/// `driver` is a driver object, as the loader passes it.
unsafe extern "system" fn driver_entry(driver: *mut u8, _registry_path: *const u8) -> i32 {
    let status = register();
    if status >= 0 {
        let unload: unsafe extern "system" fn(*mut u8) = driver_unload;
        let field = driver.wrapping_add(pcw_loader::layout::driver_object::DRIVER_UNLOAD);
        // SAFETY: the `DriverUnload` field of the loader's driver object, writable.
        unsafe { field.cast::<usize>().write_unaligned(unload as usize) };
    }
    status
}

/// The name of the test below, which `scenario` would ask a child to run.
const TEST: &str = "a_test_that_panics_with_the_driver_loaded_breaks_no_other_test";
/// Never set: the scenarios run on the host build only.
const NO_IMAGE: &str = "PCW_HARNESS_INDEPENDENCE_TEST_IMAGE_NEVER_SET";

/// A scenario that goes well: the driver's counterset is found, and everything is unloaded.
fn loads_collects_and_unloads(host: &Driver) {
    pcw_harness::scenario(TEST, host, NO_IMAGE, |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
        assert_eq!(kernel.countersets(), [SET]);
        kernel.collect(SET, &Request::default()).unwrap();
        driver.unload(kernel).unwrap();
    });
}

/// The counters alone, as the crates `pcw new` writes test them first.
fn registers_alone_and_collects() {
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    assert!(register() >= 0);
    kernel.collect(SET, &Request::default()).unwrap();
    unregister();
    finish(kernel).unwrap();
}

/// A scenario that panics with the driver loaded and its counterset registered.
fn panics_with_the_driver_loaded(host: &Driver) {
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        pcw_harness::scenario(TEST, host, NO_IMAGE, |build| {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let _driver = build.start().unwrap();
            kernel.collect(SET, &Request::default()).unwrap();
            panic!("an assertion of this scenario failed, before the driver's unload");
        });
    }));
    assert!(panicked.is_err());
}

#[test]
fn a_test_that_panics_with_the_driver_loaded_breaks_no_other_test() {
    let host = Driver::host(driver_entry);
    std::thread::scope(|s| {
        for thread in 0..4_usize {
            let host = &host;
            s.spawn(move || {
                for round in 0..30_usize {
                    match (thread + round) % 3 {
                        0 => panics_with_the_driver_loaded(host),
                        1 => loads_collects_and_unloads(host),
                        _ => registers_alone_and_collects(),
                    }
                }
            });
        }
    });
}

#[test]
fn after_a_panicking_test_the_next_one_sees_its_own_registration() {
    let host = Driver::host(driver_entry);
    panics_with_the_driver_loaded(&host);
    registers_alone_and_collects();
    panics_with_the_driver_loaded(&host);
    loads_collects_and_unloads(&host);
}

/// A driver that does not unregister at unload fails its own test, naming the counterset; the
/// next test's `register`, which releases the handle the static slot still holds, passes.
#[test]
fn a_leaked_registration_fails_its_own_test_and_not_the_next_one() {
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    assert!(register() >= 0);
    let unclean = finish(kernel).unwrap_err();
    assert_eq!(
        unclean.to_string(),
        format!("counterset `{SET}` is still registered")
    );
    registers_alone_and_collects();
}
