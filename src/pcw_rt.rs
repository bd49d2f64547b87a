//! The driver's one FFI facade (DESIGN.md, "FFI: one facade, two bindings"): every PCW and
//! kernel item the driver and its pcw-gen generated code use is named here, and nowhere else.
//!
//! It implements pcw-gen's runtime contract (see the pcw-gen crate docs) over windows-sys' `Wdk`
//! bindings. On a Windows target those link to `ntoskrnl.exe`/`hal.dll`; on any other host the
//! same symbols resolve to pcw-sim's `#[no_mangle]` implementations in the test or tool binary
//! that links pcw-sim, so the code under test is the code PCW calls. The WDK build (cargo-make,
//! issue 8) provides the same names from wdk-sys; the differences between the two bindings are
//! kept behind the names below (`NULL_*`, `PcwCallback`, `pcw_callback`).

pub use windows_sys::Wdk::Foundation::{PPCW_BUFFER, PPCW_INSTANCE, PPCW_REGISTRATION};
pub use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, PCW_COUNTER_DESCRIPTOR, PCW_DATA,
    PCW_MASK_INFORMATION, PCW_REGISTRATION_INFORMATION, PCW_VERSION_1, PCW_VERSION_2,
    PPCW_CALLBACK, PcwAddInstance, PcwCallbackAddCounter, PcwCallbackCollectData,
    PcwCallbackEnumerateInstances, PcwCallbackRemoveCounter, PcwCloseInstance, PcwCreateInstance,
    PcwRegister, PcwRegistrationNone, PcwRegistrationSiloNeutral, PcwUnregister,
};
pub use windows_sys::Win32::Foundation::{
    NTSTATUS, STATUS_CANCELLED, STATUS_INSUFFICIENT_RESOURCES, STATUS_INVALID_PARAMETER_2,
    STATUS_OBJECT_NAME_COLLISION, STATUS_SUCCESS, UNICODE_STRING,
};
pub use windows_sys::core::GUID;

include!("pcw_rt_windows_sys.rs");

/// The lock of the driver's instance registries.
#[cfg(not(target_os = "windows"))]
pub type RegistryLock = pcw_core::registry::SpinRwLock;
/// The lock of the driver's instance registries: a kernel push lock.
#[cfg(target_os = "windows")]
pub type RegistryLock = crate::kernel::PushLock;

/// The performance counter and its frequency (`KeQueryPerformanceCounter`).
pub fn perf_counter() -> (i64, i64) {
    let mut frequency = 0i64;
    // SAFETY: `frequency` is a writable local.
    let now = unsafe {
        windows_sys::Wdk::System::SystemServices::KeQueryPerformanceCounter(&raw mut frequency)
    };
    (now, frequency)
}

/// The system time in 100 ns units since 1601 (`KeQuerySystemTimePrecise`).
pub fn system_time() -> i64 {
    let mut now = 0i64;
    // SAFETY: `now` is a writable local.
    unsafe { windows_sys::Wdk::System::SystemServices::KeQuerySystemTimePrecise(&raw mut now) };
    now
}

/// Whether the consumer cancelled the query: `PCW_MASK_INFORMATION.CancelEvent`, when present,
/// is signalled on cancel (one `KeReadStateEvent`, cheap enough to poll every few instances).
///
/// # Safety
/// `event` is NULL or a valid `KEVENT` (as PCW passes it to the callback).
pub unsafe fn cancelled(event: *mut windows_sys::Wdk::Foundation::KEVENT) -> bool {
    if event.is_null() {
        return false;
    }
    // SAFETY: non-NULL, so valid per this function's contract.
    unsafe { windows_sys::Wdk::System::SystemServices::KeReadStateEvent(event) != 0 }
}

// `unicode` and `units`: the same text for both bindings, whose `UNICODE_STRING`s share
// their field names; resolved against this module's `UNICODE_STRING`.
include!("pcw_rt_strings.rs");
