// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel routines the driver calls outside PCW, over wdk-sys (the WDK build: cargo-make on
//! Windows, and the Linux stage that builds it from wdk-sys's own generated bindings). The same
//! functions with the same facade types as `windows_sys.rs`; the WDK build's allocator and panic
//! handler (wdk-alloc, wdk-panic) are declared here too.

use wdk_sys::ntddk as ss;

/// The performance counter and its frequency (`KeQueryPerformanceCounter`).
pub fn perf_counter() -> (i64, i64) {
    let mut frequency = wdk_sys::LARGE_INTEGER::default();
    // SAFETY: `frequency` is a writable local.
    let now = unsafe { ss::KeQueryPerformanceCounter(&raw mut frequency) };
    // SAFETY: every bit pattern of the union is a valid `QuadPart`.
    let now = unsafe { now.QuadPart };
    // SAFETY: as above.
    (now, unsafe { frequency.QuadPart })
}

/// The system time in 100 ns units since 1601 (`KeQuerySystemTimePrecise`).
pub fn system_time() -> i64 {
    // Left uninitialised, as in `windows_sys.rs`: the routine always stores the time.
    let mut now = core::mem::MaybeUninit::<wdk_sys::LARGE_INTEGER>::uninit();
    // SAFETY: `now` is a writable local of the routine's out type.
    unsafe { ss::KeQuerySystemTimePrecise(now.as_mut_ptr()) };
    // SAFETY: `KeQuerySystemTimePrecise` has no failure and writes its out-parameter whole;
    // every bit pattern of the union is a valid `QuadPart`.
    unsafe { now.assume_init().QuadPart }
}

// The WDK build's runtime (what `glue::runtime` is for the other builds).
extern crate wdk_panic;
#[global_allocator]
static GLOBAL_ALLOCATOR: wdk_alloc::WdkAllocator = wdk_alloc::WdkAllocator;

/// The routines only a Windows kernel provides.
mod kernel_only {
    use core::ffi::c_void;

    use super::ss;
    use crate::ffi::wdm::{DeviceObject, DriverObject, Irp};
    use crate::ffi::{NTSTATUS, UNICODE_STRING};

    /// `IoCreateDevice` with no device extension, not exclusive.
    ///
    /// # Safety
    /// As the DDI: a valid driver object (in `DriverEntry`), a valid name.
    pub unsafe fn io_create_device(
        driver: *mut DriverObject,
        name: &UNICODE_STRING,
        device_type: u32,
        characteristics: u32,
        device: &mut *mut DeviceObject,
    ) -> NTSTATUS {
        // SAFETY: per this function's contract; the out-pointer is a valid local.
        unsafe {
            ss::IoCreateDevice(
                driver.cast(),
                0,
                core::ptr::from_ref(name).cast_mut(),
                device_type,
                characteristics,
                0,
                core::ptr::from_mut(device).cast(),
            )
        }
    }

    /// `IoDeleteDevice`.
    ///
    /// # Safety
    /// A device this driver created, deleted once.
    pub unsafe fn io_delete_device(device: *mut DeviceObject) {
        // SAFETY: per this function's contract.
        unsafe { ss::IoDeleteDevice(device.cast()) };
    }

    /// `IoCreateSymbolicLink`.
    ///
    /// # Safety
    /// As the DDI (IRQL PASSIVE_LEVEL).
    pub unsafe fn io_create_symbolic_link(
        link: &UNICODE_STRING,
        target: &UNICODE_STRING,
    ) -> NTSTATUS {
        // SAFETY: per this function's contract; both strings are valid references.
        unsafe {
            ss::IoCreateSymbolicLink(
                core::ptr::from_ref(link).cast_mut(),
                core::ptr::from_ref(target).cast_mut(),
            )
        }
    }

    /// `IoDeleteSymbolicLink`.
    ///
    /// # Safety
    /// As the DDI (IRQL PASSIVE_LEVEL).
    pub unsafe fn io_delete_symbolic_link(link: &UNICODE_STRING) -> NTSTATUS {
        // SAFETY: per this function's contract.
        unsafe { ss::IoDeleteSymbolicLink(core::ptr::from_ref(link).cast_mut()) }
    }

    /// `IofCompleteRequest` with `IO_NO_INCREMENT`.
    ///
    /// # Safety
    /// An IRP this driver owns, completed once.
    pub unsafe fn complete_request(irp: *mut Irp) {
        // SAFETY: per this function's contract.
        unsafe { ss::IofCompleteRequest(irp.cast(), 0) };
    }

    /// `ObSetSecurityObjectByPointer`.
    ///
    /// # Safety
    /// A valid object and a valid self-relative descriptor.
    pub unsafe fn set_security(
        object: *mut c_void,
        information: u32,
        descriptor: *const c_void,
    ) -> NTSTATUS {
        // SAFETY: per this function's contract.
        unsafe { ss::ObSetSecurityObjectByPointer(object, information, descriptor.cast_mut()) }
    }

    /// `KeEnterCriticalRegion`.
    pub fn enter_critical_region() {
        // SAFETY: callable at IRQL <= APC_LEVEL, where the driver's callers run.
        unsafe { ss::KeEnterCriticalRegion() };
    }

    /// `KeLeaveCriticalRegion`.
    ///
    /// # Safety
    /// Pairs with an earlier [`enter_critical_region`] on this thread.
    pub unsafe fn leave_critical_region() {
        // SAFETY: per this function's contract.
        unsafe { ss::KeLeaveCriticalRegion() };
    }

    /// `ExAcquirePushLockSharedEx`.
    ///
    /// # Safety
    /// A valid push lock; inside a critical region.
    pub unsafe fn acquire_push_lock_shared(lock: *mut usize) {
        // SAFETY: per this function's contract.
        unsafe { ss::ExAcquirePushLockSharedEx(lock.cast(), 0) };
    }

    /// `ExReleasePushLockSharedEx`.
    ///
    /// # Safety
    /// Held shared by this thread.
    pub unsafe fn release_push_lock_shared(lock: *mut usize) {
        // SAFETY: per this function's contract.
        unsafe { ss::ExReleasePushLockSharedEx(lock.cast(), 0) };
    }

    /// `ExAcquirePushLockExclusiveEx`.
    ///
    /// # Safety
    /// A valid push lock; inside a critical region.
    pub unsafe fn acquire_push_lock_exclusive(lock: *mut usize) {
        // SAFETY: per this function's contract.
        unsafe { ss::ExAcquirePushLockExclusiveEx(lock.cast(), 0) };
    }

    /// `ExReleasePushLockExclusiveEx`.
    ///
    /// # Safety
    /// Held exclusively by this thread.
    pub unsafe fn release_push_lock_exclusive(lock: *mut usize) {
        // SAFETY: per this function's contract.
        unsafe { ss::ExReleasePushLockExclusiveEx(lock.cast(), 0) };
    }

    /// `ExAllocatePool2`.
    ///
    /// # Safety
    /// As the DDI: IRQL <= DISPATCH_LEVEL for non-paged pool.
    pub unsafe fn allocate_pool(flags: u64, size: usize, tag: u32) -> *mut c_void {
        // SAFETY: per this function's contract.
        unsafe { ss::ExAllocatePool2(flags, size as u64, tag) }
    }

    /// `ExFreePoolWithTag`.
    ///
    /// # Safety
    /// A block from [`allocate_pool`] with this tag, freed once.
    pub unsafe fn free_pool(block: *mut c_void, tag: u32) {
        // SAFETY: per this function's contract.
        unsafe { ss::ExFreePoolWithTag(block, tag) };
    }
}
pub use kernel_only::*;
