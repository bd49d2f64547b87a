// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated kernel PCW against a small provider written the way a driver is: it calls the
//! DDIs through windows-sys' `Wdk` declarations, which resolve to pcw-sim's `#[no_mangle]`
//! functions in this test binary (the driver's FFI facade works the same way: ARCHITECTURE.md,
//! "Data flow").

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use pcw_sim::kernel_pcw::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Bugcheck, Descriptor, Kernel, Misuse,
    PCW_ANY_INSTANCE_ID, PcwCall, Request,
};
use pcw_sim::stress_scale;
use windows_sys::Wdk::Foundation::{PPCW_INSTANCE, PPCW_REGISTRATION};
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR, PCW_DATA, PCW_REGISTRATION_INFORMATION,
    PCW_VERSION_1, PCW_VERSION_2, PPCW_CALLBACK, PcwAddInstance, PcwCallbackAddCounter,
    PcwCallbackCollectData, PcwCallbackEnumerateInstances, PcwCloseInstance, PcwCreateInstance,
    PcwRegister, PcwUnregister,
};
use windows_sys::Win32::Foundation::{
    NTSTATUS, STATUS_INVALID_BUFFER_SIZE, STATUS_INVALID_PARAMETER_2, STATUS_SUCCESS,
    STATUS_UNSUCCESSFUL, UNICODE_STRING,
};

#[repr(C)]
struct Wave {
    triangle: u32,
    square: u64,
}

const WAVES: [(&str, u32); 3] = [("Small Wave", 1), ("Medium Wave", 2), ("Large Wave", 3)];

/// When set, the test callback filters by id itself; otherwise it adds everything.
static FILTER_IN_CALLBACK: AtomicBool = AtomicBool::new(true);
/// When set, `CollectData` leaves out "Medium Wave" although `EnumerateInstances` lists it.
static OVERFILTER: AtomicBool = AtomicBool::new(false);
/// When set, every instance the callback adds has id 1.
static SAME_ID: AtomicBool = AtomicBool::new(false);
/// When set, the callback passes a block too short for the descriptors.
static SHORT_BLOCK: AtomicBool = AtomicBool::new(false);
static ADD_COUNTER_CALLS: AtomicU32 = AtomicU32::new(0);
/// While set, an `AddCounter` callback waits (with `IN_ADD_COUNTER` set) until it is cleared.
static HOLD_ADD_COUNTER: AtomicBool = AtomicBool::new(false);
static IN_ADD_COUNTER: AtomicBool = AtomicBool::new(false);
/// When not 0, an `AddCounter` callback unregisters this registration (its own) and clears it.
static UNREGISTER_FROM_CALLBACK: std::sync::atomic::AtomicIsize =
    std::sync::atomic::AtomicIsize::new(0);

fn descriptors() -> [PCW_COUNTER_DESCRIPTOR; 2] {
    [
        PCW_COUNTER_DESCRIPTOR {
            Id: 0,
            StructIndex: 0,
            Offset: 0,
            Size: 4,
        },
        PCW_COUNTER_DESCRIPTOR {
            Id: 1,
            StructIndex: 0,
            Offset: 8,
            Size: 8,
        },
    ]
}

struct Utf16Name(Vec<u16>, UNICODE_STRING);

/// The units and a `UNICODE_STRING` over them (the units live on the heap, so moving the pair
/// keeps the pointer valid).
fn unicode(s: &str) -> Utf16Name {
    let mut b = Utf16Name(s.encode_utf16().collect(), UNICODE_STRING::default());
    let len = u16::try_from(b.0.len() * 2).unwrap();
    b.1 = UNICODE_STRING {
        Length: len,
        MaximumLength: len,
        Buffer: b.0.as_mut_ptr(),
    };
    b
}

unsafe extern "system" fn callback(
    kind: i32,
    info: *const PCW_CALLBACK_INFORMATION,
    _context: *const c_void,
) -> NTSTATUS {
    // SAFETY: PCW passes a valid information block for the call's kind.
    let info = unsafe { &*info };
    if kind == PcwCallbackAddCounter {
        ADD_COUNTER_CALLS.fetch_add(1, Ordering::Relaxed);
        let own = UNREGISTER_FROM_CALLBACK.swap(0, Ordering::SeqCst);
        if own != 0 {
            // SAFETY: a handle PcwRegister returned.
            unsafe { PcwUnregister(own) };
        }
        if HOLD_ADD_COUNTER.load(Ordering::SeqCst) {
            IN_ADD_COUNTER.store(true, Ordering::SeqCst);
            while HOLD_ADD_COUNTER.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            IN_ADD_COUNTER.store(false, Ordering::SeqCst);
        }
        return STATUS_SUCCESS;
    }
    {
        if kind == PcwCallbackEnumerateInstances || kind == PcwCallbackCollectData {
            // SAFETY: both kinds carry a PCW_MASK_INFORMATION.
            let mask = unsafe { info.CollectData };
            for (i, (name, id)) in WAVES.iter().enumerate() {
                let id = if SAME_ID.load(Ordering::Relaxed) {
                    &1
                } else {
                    id
                };
                if kind == PcwCallbackCollectData
                    && OVERFILTER.load(Ordering::Relaxed)
                    && *name == "Medium Wave"
                {
                    continue;
                }
                if FILTER_IN_CALLBACK.load(Ordering::Relaxed)
                    && mask.InstanceId != PCW_ANY_INSTANCE_ID
                    && mask.InstanceId != *id
                {
                    continue;
                }
                let name = unicode(name);
                let wave = Wave {
                    triangle: 10 * (u32::try_from(i).unwrap() + 1),
                    square: u64::MAX - i as u64,
                };
                let data = PCW_DATA {
                    Data: (&raw const wave).cast(),
                    Size: if SHORT_BLOCK.load(Ordering::Relaxed) {
                        8
                    } else {
                        u32::try_from(size_of::<Wave>()).unwrap()
                    },
                };
                let status = if kind == PcwCallbackEnumerateInstances {
                    // SAFETY: a name and no data, as EnumerateInstances allows.
                    unsafe {
                        PcwAddInstance(mask.Buffer, &raw const name.1, *id, 0, std::ptr::null())
                    }
                } else {
                    // SAFETY: the block lives across the call; PCW copies it.
                    unsafe {
                        PcwAddInstance(mask.Buffer, &raw const name.1, *id, 1, &raw const data)
                    }
                };
                if status != STATUS_SUCCESS {
                    return status;
                }
            }
        }
        STATUS_SUCCESS
    }
}

fn register(version: u32, flags: i32, name: &str) -> (NTSTATUS, PPCW_REGISTRATION) {
    let mut name = unicode(name);
    let mut counters = descriptors();
    let real: unsafe extern "system" fn(
        i32,
        *const PCW_CALLBACK_INFORMATION,
        *const c_void,
    ) -> NTSTATUS = callback;
    // SAFETY: windows-sys types PPCW_CALLBACK as a zero-argument pointer; PCW calls it with the
    // real PCW_CALLBACK signature.
    let cb: PPCW_CALLBACK = Some(unsafe {
        std::mem::transmute::<
            unsafe extern "system" fn(
                i32,
                *const PCW_CALLBACK_INFORMATION,
                *const c_void,
            ) -> NTSTATUS,
            unsafe extern "system" fn() -> NTSTATUS,
        >(real)
    });
    let info = PCW_REGISTRATION_INFORMATION {
        Version: version,
        Name: &raw mut name.1,
        CounterCount: 2,
        Counters: counters.as_mut_ptr(),
        Callback: cb,
        CallbackContext: std::ptr::null_mut(),
        Flags: flags,
    };
    let mut handle: PPCW_REGISTRATION = 0;
    // SAFETY: the information block and everything it points at live across the call.
    let status = unsafe { PcwRegister(&raw mut handle, &raw const info) };
    (status, handle)
}

fn unregister(handle: PPCW_REGISTRATION) {
    // SAFETY: any handle is accepted by the simulator.
    unsafe { PcwUnregister(handle) };
}

#[test]
fn version_2_needs_a_recent_build_and_version_1_works_everywhere() {
    let k = Kernel::boot(BUILD_SERVER_2019);
    assert_eq!(
        register(PCW_VERSION_2, 0, "Geometric Waves").0,
        STATUS_INVALID_PARAMETER_2
    );
    let (status, handle) = register(PCW_VERSION_1, 0, "Geometric Waves");
    assert_eq!(status, STATUS_SUCCESS);
    assert_eq!(
        k.registration_info("geometric waves"),
        Some((PCW_VERSION_1, 0))
    );
    unregister(handle);
    assert!(k.teardown().is_clean());

    let k = Kernel::boot(BUILD_SERVER_2022);
    let (status, handle) = register(PCW_VERSION_2, 1, "Geometric Waves");
    assert_eq!(status, STATUS_SUCCESS);
    assert_eq!(
        k.registration_info("Geometric Waves"),
        Some((PCW_VERSION_2, 1))
    );
    assert_eq!(
        k.descriptors("Geometric Waves").unwrap(),
        [
            Descriptor {
                id: 0,
                struct_index: 0,
                offset: 0,
                size: 4
            },
            Descriptor {
                id: 1,
                struct_index: 0,
                offset: 8,
                size: 8
            },
        ]
    );
    unregister(handle);
    assert!(k.teardown().is_clean());
}

#[test]
fn bad_registrations_are_refused() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    assert_eq!(
        register(PCW_VERSION_2, 0, "").0,
        STATUS_INVALID_PARAMETER_2,
        "empty name"
    );
    assert_eq!(
        register(PCW_VERSION_2, 2, "x").0,
        STATUS_INVALID_PARAMETER_2,
        "unknown flag"
    );
    assert_eq!(
        register(0x300, 0, "x").0,
        STATUS_INVALID_PARAMETER_2,
        "unknown version"
    );
    let mut odd = unicode("xy");
    odd.1.Length = 3;
    let info = PCW_REGISTRATION_INFORMATION {
        Version: PCW_VERSION_1,
        Name: &raw mut odd.1,
        ..Default::default()
    };
    let mut h = 0;
    // SAFETY: valid pointers; the simulator checks the odd length.
    let status = unsafe { PcwRegister(&raw mut h, &raw const info) };
    assert_eq!(status, STATUS_INVALID_PARAMETER_2);
    assert!(k.countersets().is_empty());
    assert!(k.teardown().is_clean());
}

#[test]
fn collection_applies_pcw_filters_and_reports_callback_filtering() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    FILTER_IN_CALLBACK.store(true, Ordering::Relaxed);
    let (_, handle) = register(PCW_VERSION_2, 0, "Geometric Waves");

    let all = k.collect("GEOMETRIC WAVES", &Request::default()).unwrap();
    let names: Vec<_> = all
        .instances
        .iter()
        .map(|i| (i.name.as_str(), i.id))
        .collect();
    assert_eq!(
        names,
        [("Small Wave", 1), ("Medium Wave", 2), ("Large Wave", 3)]
    );
    assert_eq!(all.instances[2].values[&0], 30);
    assert_eq!(all.instances[2].values[&1], u64::MAX - 2);

    let masked = Request {
        instance_mask: Some("?mall*".into()),
        ..Request::default()
    };
    let c = k.collect("Geometric Waves", &masked).unwrap();
    assert_eq!(c.instances.len(), 1);
    assert_eq!(
        c.unfiltered,
        ["Medium Wave", "Large Wave"],
        "the callback ignores masks"
    );

    let by_id = Request {
        instance_id: 2,
        ..Request::default()
    };
    let c = k.collect("Geometric Waves", &by_id).unwrap();
    assert_eq!(c.instances[0].name, "Medium Wave");
    assert!(c.unfiltered.is_empty(), "the callback filters ids itself");

    FILTER_IN_CALLBACK.store(false, Ordering::Relaxed);
    let c = k.collect("Geometric Waves", &by_id).unwrap();
    assert_eq!(
        c.instances.len(),
        1,
        "PCW filters what the callback did not"
    );
    assert_eq!(c.unfiltered, ["Small Wave", "Large Wave"]);
    FILTER_IN_CALLBACK.store(true, Ordering::Relaxed);

    let one_counter = Request {
        counter_mask: 0b10,
        ..Request::default()
    };
    let c = k.collect("Geometric Waves", &one_counter).unwrap();
    assert!(c.instances.iter().all(|i| i.values.keys().eq([&1u16])));

    let names = k.enumerate("Geometric Waves", &Request::default()).unwrap();
    assert_eq!(names.len(), 3);
    assert!(k.collect("No Such Set", &Request::default()).is_err());

    assert_eq!(
        k.notify("Geometric Waves", true, 1).unwrap(),
        [STATUS_SUCCESS]
    );
    assert!(ADD_COUNTER_CALLS.load(Ordering::Relaxed) >= 1);
    unregister(handle);
    assert!(k.teardown().is_clean());
}

#[test]
fn a_callback_that_filters_too_much_is_caught() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, handle) = register(PCW_VERSION_2, 0, "Over");
    assert!(
        k.collect("Over", &Request::default())
            .unwrap()
            .missing
            .is_empty()
    );
    OVERFILTER.store(true, Ordering::Relaxed);
    let c = k.collect("Over", &Request::default()).unwrap();
    let masked = k.collect(
        "Over",
        &Request {
            instance_mask: Some("S*".into()),
            ..Request::default()
        },
    );
    OVERFILTER.store(false, Ordering::Relaxed);
    assert_eq!(c.missing, ["Medium Wave"]);
    assert!(
        masked.unwrap().missing.is_empty(),
        "not missing when the request excludes it"
    );
    unregister(handle);
    assert!(k.teardown().is_clean());
}

#[test]
fn short_blocks_get_invalid_buffer_size() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, handle) = register(PCW_VERSION_2, 0, "Short");
    SHORT_BLOCK.store(true, Ordering::Relaxed);
    let c = k.collect("Short", &Request::default()).unwrap();
    // A second collection breaks the same rule: the teardown names it once.
    let again = k.collect("Short", &Request::default()).unwrap();
    SHORT_BLOCK.store(false, Ordering::Relaxed);
    assert_eq!(again, c);
    assert_eq!(c.statuses, [STATUS_INVALID_BUFFER_SIZE]);
    assert!(c.instances.is_empty());
    unregister(handle);
    // The teardown names the refused instance, the counter and the sizes.
    let misuse = k.teardown().misuse;
    let short = Misuse::ShortBlock {
        name: "Small Wave".to_owned(),
        counter: 1,
        block: 0,
        start: 8,
        end: 16,
        size: 8,
    };
    assert_eq!(misuse, std::slice::from_ref(&short));
    assert_eq!(
        short.to_string(),
        "PcwAddInstance refused instance `Small Wave`: counter 1 reads bytes 8..16 of data \
         block 0, which is 8 bytes (STATUS_INVALID_BUFFER_SIZE)"
    );
}

#[test]
fn two_instances_with_one_id_are_misuse() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, handle) = register(PCW_VERSION_2, 0, "Same Id");
    FILTER_IN_CALLBACK.store(false, Ordering::Relaxed);
    SAME_ID.store(true, Ordering::Relaxed);
    let c = k.collect("Same Id", &Request::default());
    SAME_ID.store(false, Ordering::Relaxed);
    FILTER_IN_CALLBACK.store(true, Ordering::Relaxed);
    assert_eq!(c.unwrap().instances.len(), 3, "PCW passes them through");
    unregister(handle);
    let misuse = k.teardown().misuse;
    assert_eq!(
        misuse,
        [
            Misuse::DuplicateId("Small Wave".into(), "Medium Wave".into(), 1),
            Misuse::DuplicateId("Small Wave".into(), "Large Wave".into(), 1),
        ]
    );
    assert_eq!(
        misuse[0].to_string(),
        "instances `Small Wave` and `Medium Wave` of one collection both have id 1 (ids should \
         be unique)"
    );
}

#[test]
fn created_instances_are_read_at_collection_time() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, handle) = register(PCW_VERSION_2, 0, "Dynamic");
    let wave = Box::new(Wave {
        triangle: 1,
        square: 2,
    });
    let data = PCW_DATA {
        Data: (&raw const *wave).cast(),
        Size: u32::try_from(size_of::<Wave>()).unwrap(),
    };
    let name = unicode("queue 0");
    let mut instance: PPCW_INSTANCE = 0;
    // SAFETY: the block outlives the instance (closed below before `wave` is dropped).
    let status = unsafe {
        PcwCreateInstance(
            &raw mut instance,
            handle,
            &raw const name.1,
            1,
            &raw const data,
        )
    };
    assert_eq!(status, STATUS_SUCCESS);
    let wave_ptr = Box::into_raw(wave);
    // SAFETY: the test owns the block; no collection runs concurrently here.
    unsafe { (*wave_ptr).square = 99 };
    FILTER_IN_CALLBACK.store(true, Ordering::Relaxed);
    let c = k.collect(
        "Dynamic",
        &Request {
            instance_mask: Some("queue*".into()),
            ..Request::default()
        },
    );
    let c = c.unwrap();
    assert_eq!(c.instances.len(), 1);
    assert_eq!(
        c.instances[0].values[&1], 99,
        "read at collection, not at create"
    );
    // A request that excludes the created instance: PCW filters it itself, so it is not one
    // the callback added too many of (the waves, which this callback filters by id only, are).
    let c = k
        .collect(
            "Dynamic",
            &Request {
                instance_mask: Some("Small*".into()),
                ..Request::default()
            },
        )
        .unwrap();
    assert_eq!(c.unfiltered, ["Medium Wave", "Large Wave"]);
    // SAFETY: closing before freeing, as the contract requires.
    unsafe { PcwCloseInstance(instance) };
    // SAFETY: allocated by Box::into_raw above; no longer referenced by PCW.
    drop(unsafe { Box::from_raw(wave_ptr) });
    // SAFETY: deliberately wrong, to check the simulator records it.
    unsafe { PcwCloseInstance(instance) };
    unregister(handle);
    unregister(0);
    let report = k.teardown();
    assert_eq!(
        report.bugchecks,
        [Bugcheck::CloseStale(instance), Bugcheck::UnregisterNull]
    );
}

#[test]
fn teardown_reports_what_is_left_open_and_faults_fire_on_time() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    k.fail(PcwCall::Register, 1, STATUS_UNSUCCESSFUL);
    let (first, _) = register(PCW_VERSION_2, 0, "One");
    let (second, _) = register(PCW_VERSION_2, 0, "Two");
    assert_eq!((first, second), (STATUS_SUCCESS, STATUS_UNSUCCESSFUL));
    assert_eq!(k.calls(PcwCall::Register), 2);
    let report = k.teardown();
    assert_eq!(report.registrations, ["One"]);
    assert!(report.bugchecks.is_empty());
}

#[test]
fn merged_registrations_and_stale_buffers() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, a) = register(PCW_VERSION_2, 0, "Twice");
    let (_, b) = register(PCW_VERSION_2, 0, "twice");
    let c = k.collect("Twice", &Request::default()).unwrap();
    assert_eq!(
        c.instances.len(),
        6,
        "registrations with one name are merged for consumers"
    );
    unregister(a);
    unregister(b);
    let report = k.teardown();
    assert!(
        report.misuse.is_empty(),
        "names repeat across registrations, not within one"
    );
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, a) = register(PCW_VERSION_2, 0, "Once");
    let mut stale = 0isize;
    // SAFETY: a made-up buffer handle, which the simulator must refuse.
    let status = unsafe {
        PcwAddInstance(
            &raw mut stale as isize,
            std::ptr::null(),
            0,
            0,
            std::ptr::null(),
        )
    };
    assert_eq!(status, STATUS_INVALID_PARAMETER_2);
    unregister(a);
    assert_eq!(k.teardown().misuse, [Misuse::StaleBuffer]);
}

/// Providers free what their callback reads once `PcwUnregister` returns (the driver's image
/// itself goes at unload), so, as PCW does, it waits for the registration's running callbacks.
#[test]
fn unregister_waits_for_a_running_callback_of_the_registration() {
    /// Releases the held callback however the scope ends (a failed assertion must not leave
    /// the consumer thread waiting, which would hang the scope's join).
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            HOLD_ADD_COUNTER.store(false, Ordering::SeqCst);
        }
    }
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (status, handle) = register(PCW_VERSION_2, 0, "Held Waves");
    assert_eq!(status, STATUS_SUCCESS);
    HOLD_ADD_COUNTER.store(true, Ordering::SeqCst);
    let unregistered = AtomicBool::new(false);
    let release = Release;
    // `release` is moved into the scope's closure: dropped below, or as the closure unwinds,
    // before the scope joins the consumer.
    std::thread::scope(|s| {
        let consumer = s.spawn(|| k.notify("Held Waves", true, 1));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !IN_ADD_COUNTER.load(Ordering::SeqCst) {
            assert!(
                !consumer.is_finished() && std::time::Instant::now() < deadline,
                "the callback never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let provider = s.spawn(|| {
            unregister(handle);
            unregistered.store(true, Ordering::SeqCst);
        });
        // Not a timing test: an unregister that does not wait returns at once, and one that
        // waits cannot return before the callback is released below.
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(
            !unregistered.load(Ordering::SeqCst),
            "PcwUnregister returned while a callback of the registration was running"
        );
        assert!(IN_ADD_COUNTER.load(Ordering::SeqCst));
        drop(release);
        provider.join().unwrap();
        assert!(
            !IN_ADD_COUNTER.load(Ordering::SeqCst),
            "the callback returned first"
        );
        assert_eq!(consumer.join().unwrap().unwrap(), [STATUS_SUCCESS]);
    });
    assert!(unregistered.load(Ordering::SeqCst));
    // Gone: no callback of it runs any more.
    assert!(k.notify("Held Waves", true, 1).is_err());
    assert!(k.teardown().is_clean());
}

/// Real PCW would wait forever for the callback that is unregistering its own registration; the
/// simulator says so instead of hanging.
#[test]
fn unregistering_from_the_registrations_own_callback_is_misuse() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (status, handle) = register(PCW_VERSION_2, 0, "Self Waves");
    assert_eq!(status, STATUS_SUCCESS);
    UNREGISTER_FROM_CALLBACK.store(handle, Ordering::SeqCst);
    assert_eq!(k.notify("Self Waves", true, 1).unwrap(), [STATUS_SUCCESS]);
    assert!(k.notify("Self Waves", true, 1).is_err(), "unregistered");
    let report = k.teardown();
    assert_eq!(report.misuse, [Misuse::UnregisterInCallback]);
    assert!(report.bugchecks.is_empty());
}

#[test]
fn concurrent_collection_from_eight_threads() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    FILTER_IN_CALLBACK.store(true, Ordering::Relaxed);
    let (_, handle) = register(PCW_VERSION_2, 0, "Geometric Waves");
    let rounds = 200 * stress_scale();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..rounds {
                    let c = k.collect("Geometric Waves", &Request::default()).unwrap();
                    assert_eq!(c.instances.len(), 3);
                }
            });
        }
    });
    eprintln!("stress: pcw-sim: {} collections by 8 threads", 8 * rounds);
    unregister(handle);
    assert!(k.teardown().is_clean());
}

#[test]
fn a_handle_of_an_abandoned_kernel_never_names_a_later_registration() {
    // A driver's host build keeps its handles in statics across the tests of a binary: one
    // test's kernel is dropped without its teardown (the test panicked) while the
    // registration is still in the driver's slot.
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (status, abandoned) = register(PCW_VERSION_2, 0, "Left Behind");
    assert_eq!(status, STATUS_SUCCESS);
    drop(k);
    // The next test's DriverEntry registers, then drops what the slot held: ignored.
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (status, later) = register(PCW_VERSION_2, 0, "Left Behind");
    assert_eq!(status, STATUS_SUCCESS);
    assert_ne!(
        later, abandoned,
        "handles are never handed out twice in a process"
    );
    unregister(abandoned);
    assert_eq!(k.countersets(), ["Left Behind"]);
    assert!(k.collect("Left Behind", &Request::default()).is_ok());
    unregister(later);
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
    // A torn-down kernel's handle stays stale: releasing it is a bugcheck of the next boot.
    let k = Kernel::boot(BUILD_SERVER_2022);
    unregister(later);
    assert_eq!(k.teardown().bugchecks, [Bugcheck::UnregisterStale(later)]);
}

#[test]
fn a_leak_fails_the_test_that_leaked_and_not_the_next_one() {
    // A driver that does not unregister at unload: its test's teardown reports the leak…
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, leaked) = register(PCW_VERSION_2, 0, "Leaked");
    assert_eq!(k.teardown().registrations, ["Leaked"]);
    // …and the next test's DriverEntry, replacing the handle its statics still hold, releases
    // it under a new kernel: the same leak, not a fault of that test.
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, handle) = register(PCW_VERSION_2, 0, "Leaked");
    unregister(leaked);
    assert_eq!(
        k.countersets(),
        ["Leaked"],
        "the new registration is untouched"
    );
    unregister(handle);
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
    // Released once, the leaked handle is stale like any other: a second release is a bugcheck.
    let k = Kernel::boot(BUILD_SERVER_2022);
    unregister(leaked);
    assert_eq!(k.teardown().bugchecks, [Bugcheck::UnregisterStale(leaked)]);
    // A handle released twice is still a bugcheck, named in words.
    let k = Kernel::boot(BUILD_SERVER_2022);
    let (_, handle) = register(PCW_VERSION_2, 0, "Twice");
    unregister(handle);
    unregister(handle);
    let bugchecks = k.teardown().bugchecks;
    assert_eq!(bugchecks, [Bugcheck::UnregisterStale(handle)]);
    assert!(
        bugchecks[0].to_string().starts_with(&format!(
            "PcwUnregister of registration handle {handle:#x}, which is not registered"
        )),
        "{}",
        bugchecks[0]
    );
}
