//! The only Windows-kernel-specific code of the driver, in one place: `DriverEntry` and
//! `DriverUnload`, the push lock behind the instance registries, and — for the non-WDK build
//! that is cross-compiled on Linux — a pool allocator and a panic handler (the WDK build gets
//! those from `wdk-alloc` and `wdk-panic`). Everything else the driver does is plain Rust that
//! the simulator runs on any host.

use core::cell::UnsafeCell;

use pcw_core::registry::RawRwLock;
use windows_sys::Wdk::Foundation::DRIVER_OBJECT;
use windows_sys::Wdk::System::SystemServices::{
    ExAcquirePushLockExclusiveEx, ExAcquirePushLockSharedEx, ExReleasePushLockExclusiveEx,
    ExReleasePushLockSharedEx, KeEnterCriticalRegion, KeLeaveCriticalRegion,
};
use windows_sys::Win32::Foundation::{NTSTATUS, STATUS_SUCCESS, UNICODE_STRING};

/// An `EX_PUSH_LOCK`: shared/exclusive, taken with normal kernel APCs disabled, as the push
/// lock routines require.
#[derive(Debug)]
pub struct PushLock {
    lock: UnsafeCell<usize>,
}

// SAFETY: the push lock word is only ever touched by the kernel's push lock routines, which are
// safe to call from any thread at IRQL <= APC_LEVEL.
unsafe impl Sync for PushLock {}
// SAFETY: as above; the word carries no thread affinity.
unsafe impl Send for PushLock {}

// SAFETY: `ExAcquirePushLock{Shared,Exclusive}Ex` provide the reader/writer exclusion the trait
// requires.
unsafe impl RawRwLock for PushLock {
    // An initialised push lock is zero (`ExInitializePushLock`).
    const INIT: Self = Self {
        lock: UnsafeCell::new(0),
    };

    fn lock_shared(&self) {
        // SAFETY: callable at IRQL <= APC_LEVEL, where the driver's callers run.
        unsafe { KeEnterCriticalRegion() };
        // SAFETY: a valid push lock word; APCs are disabled just above.
        unsafe { ExAcquirePushLockSharedEx(self.lock.get(), 0) };
    }

    unsafe fn unlock_shared(&self) {
        // SAFETY: held shared by this thread (caller's contract).
        unsafe { ExReleasePushLockSharedEx(self.lock.get(), 0) };
        // SAFETY: pairs with the KeEnterCriticalRegion of `lock_shared`.
        unsafe { KeLeaveCriticalRegion() };
    }

    fn lock_exclusive(&self) {
        // SAFETY: callable at IRQL <= APC_LEVEL.
        unsafe { KeEnterCriticalRegion() };
        // SAFETY: a valid push lock word; APCs are disabled just above.
        unsafe { ExAcquirePushLockExclusiveEx(self.lock.get(), 0) };
    }

    unsafe fn unlock_exclusive(&self) {
        // SAFETY: held exclusively by this thread (caller's contract).
        unsafe { ExReleasePushLockExclusiveEx(self.lock.get(), 0) };
        // SAFETY: pairs with the KeEnterCriticalRegion of `lock_exclusive`.
        unsafe { KeLeaveCriticalRegion() };
    }
}

/// `DriverEntry`: registers the countersets (see [`crate::driver::load`]) and sets the unload
/// routine. A failure is returned as is, with nothing left registered.
///
/// # Safety
/// Called once by the I/O manager with a valid driver object.
#[unsafe(export_name = "DriverEntry")]
pub unsafe extern "system" fn driver_entry(
    driver: *mut DRIVER_OBJECT,
    _registry_path: *const UNICODE_STRING,
) -> NTSTATUS {
    if let Err(status) = crate::driver::load() {
        return status;
    }
    // SAFETY: the I/O manager passes a valid, writable driver object.
    if let Some(driver) = unsafe { driver.as_mut() } {
        driver.DriverUnload = Some(driver_unload);
    }
    STATUS_SUCCESS
}

/// `DriverUnload`: closes the dynamic instances and unregisters every counterset.
unsafe extern "system" fn driver_unload(_driver: *const DRIVER_OBJECT) {
    crate::driver::unload();
}

/// The non-WDK build's allocator and panic handler.
#[cfg(not(feature = "wdk"))]
mod runtime {
    use core::alloc::{GlobalAlloc, Layout};

    use windows_sys::Wdk::System::SystemServices::{ExAllocatePool2, ExFreePoolWithTag};

    /// The pool tag of every allocation: `PcwR` (read backwards in pool dumps).
    const POOL_TAG: u32 = u32::from_le_bytes(*b"PcwR");
    /// `POOL_FLAG_NON_PAGED`: the registries are read at APC_LEVEL under a push lock.
    const POOL_FLAG_NON_PAGED: u64 = 0x40;

    /// Non-paged pool, zeroed by `ExAllocatePool2`.
    struct PoolAllocator;

    // SAFETY: pool allocations are 16-byte aligned on x64; larger alignments are refused
    // (null), which the allocation APIs treat as an allocation failure.
    unsafe impl GlobalAlloc for PoolAllocator {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if layout.align() > 16 {
                return core::ptr::null_mut();
            }
            // SAFETY: callable at IRQL <= DISPATCH_LEVEL for non-paged pool.
            unsafe { ExAllocatePool2(POOL_FLAG_NON_PAGED, layout.size(), POOL_TAG) }.cast()
        }

        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            // SAFETY: `ptr` came from `alloc` above, with this tag.
            unsafe { ExFreePoolWithTag(ptr.cast(), POOL_TAG) };
        }
    }

    #[global_allocator]
    static ALLOCATOR: PoolAllocator = PoolAllocator;

    /// The MSVC CRT's marker that floating point is in use; core references it and a driver
    /// links no CRT (the WDK build gets it from wdk-sys).
    #[unsafe(no_mangle)]
    #[used]
    static _fltused: i32 = 0;

    /// No kernel path of the driver panics (clippy denies the panicking constructs and issue 9
    /// proves it); should one ever be reached, stop this thread rather than unwind.
    #[panic_handler]
    fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}
