//! The driver's FFI facade for the WDK build (`--features wdk`, cargo-make on Windows): the same
//! names as `src/pcw_rt.rs`, taken from wdk-sys instead of windows-sys (DESIGN.md, "FFI: one
//! facade, two bindings"). `src/lib.rs` swaps this file in with `#[path]`.
//!
//! NOT COMPILED on the machines this project is developed on: wdk-sys's build script runs
//! bindgen over the WDK headers. It is written to bindgen's conventions as wdk-build configures
//! them, the shapes `crates/pcw-gen-check/src/wdk_style_rt.rs` proves pcw-gen's generated code
//! against: enums as modules of constants (`_PCW_CALLBACK_TYPE::Type`), handles as pointers to
//! opaque structs (`*mut _PCW_REGISTRATION`), `*mut` `Info`/`Data` typedefs, functions under
//! `wdk_sys::ntddk`, callbacks as `Option<unsafe extern "C" fn(…)>` with their real arguments.
//!
//! Besides `use`s, it holds pcw-gen's four adapter items (`NULL_*`, `PcwCallback`,
//! `pcw_callback`, `guid_from_u128`), the driver's own helpers over the same DDIs, and the
//! WDK build's allocator and panic handler (wdk-alloc, wdk-panic), which replace the ones
//! `src/kernel.rs` defines for the non-WDK build.

pub use wdk_sys::_PCW_CALLBACK_TYPE::{
    PcwCallbackAddCounter, PcwCallbackCollectData, PcwCallbackEnumerateInstances,
    PcwCallbackRemoveCounter,
};
pub use wdk_sys::_PCW_REGISTRATION_FLAGS::{PcwRegistrationNone, PcwRegistrationSiloNeutral};
pub use wdk_sys::ntddk::{
    PcwAddInstance, PcwCloseInstance, PcwCreateInstance, PcwRegister, PcwUnregister,
};
pub use wdk_sys::{
    GUID, NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, PCW_COUNTER_DESCRIPTOR, PCW_DATA,
    PCW_MASK_INFORMATION, PCW_REGISTRATION_INFORMATION, PCW_VERSION_1, PCW_VERSION_2, PPCW_BUFFER,
    PPCW_CALLBACK, PPCW_INSTANCE, PPCW_REGISTRATION, STATUS_CANCELLED,
    STATUS_INSUFFICIENT_RESOURCES, STATUS_INVALID_PARAMETER_2, STATUS_OBJECT_NAME_COLLISION,
    STATUS_SUCCESS, UNICODE_STRING,
};

// The WDK build's runtime (what `kernel::runtime` is for the non-WDK build).
extern crate wdk_panic;
#[global_allocator]
static GLOBAL_ALLOCATOR: wdk_alloc::WdkAllocator = wdk_alloc::WdkAllocator;

/// The NULL registration handle (bindgen types handles as pointers).
pub const NULL_REGISTRATION: PPCW_REGISTRATION = core::ptr::null_mut();
/// The NULL instance handle.
pub const NULL_INSTANCE: PPCW_INSTANCE = core::ptr::null_mut();

/// The driver's `PCW_CALLBACK` signature, as `waves::callback` and `stats::callback` declare it
/// (shared with the windows-sys facade, so the callbacks are written once).
pub type PcwCallback = unsafe extern "system" fn(
    PCW_CALLBACK_TYPE,
    *const PCW_CALLBACK_INFORMATION,
    *const core::ffi::c_void,
) -> NTSTATUS;

/// bindgen's callback type: the same arguments as `*mut` typedefs, `extern "C"`.
type BindgenCallback = unsafe extern "C" fn(
    PCW_CALLBACK_TYPE,
    wdk_sys::PPCW_CALLBACK_INFORMATION,
    wdk_sys::PVOID,
) -> NTSTATUS;

/// Converts a callback to the type of `PCW_REGISTRATION_INFORMATION.Callback`
/// (`Option<BindgenCallback>`; a different alias there fails to compile rather than mis-cast).
pub fn pcw_callback(callback: Option<PcwCallback>) -> PPCW_CALLBACK {
    callback.map(|f| {
        // SAFETY: on the targets the WDK supports (x64, arm64) "system" is the "C" ABI, and
        // `*const T`/`*mut T` arguments are passed identically; only the static type changes.
        unsafe { core::mem::transmute::<PcwCallback, BindgenCallback>(f) }
    })
}

/// A GUID from its 128-bit big-endian form (bindgen's `GUID` has no constructor).
pub const fn guid_from_u128(value: u128) -> GUID {
    let [a0, a1, a2, a3, b0, b1, c0, c1, data4 @ ..] = value.to_be_bytes();
    GUID {
        Data1: u32::from_be_bytes([a0, a1, a2, a3]),
        Data2: u16::from_be_bytes([b0, b1]),
        Data3: u16::from_be_bytes([c0, c1]),
        Data4: data4,
    }
}

/// The lock of the driver's instance registries: a kernel push lock.
pub type RegistryLock = crate::kernel::PushLock;

/// The performance counter and its frequency (`KeQueryPerformanceCounter`).
pub fn perf_counter() -> (i64, i64) {
    let mut frequency = wdk_sys::LARGE_INTEGER::default();
    // SAFETY: `frequency` is a writable local.
    let now = unsafe { wdk_sys::ntddk::KeQueryPerformanceCounter(&raw mut frequency) };
    // SAFETY: every bit pattern of the union is a valid `QuadPart`.
    let now = unsafe { now.QuadPart };
    // SAFETY: as above.
    (now, unsafe { frequency.QuadPart })
}

/// The system time in 100 ns units since 1601 (`KeQuerySystemTimePrecise`).
pub fn system_time() -> i64 {
    let mut now = wdk_sys::LARGE_INTEGER::default();
    // SAFETY: `now` is a writable local.
    unsafe { wdk_sys::ntddk::KeQuerySystemTimePrecise(&raw mut now) };
    // SAFETY: every bit pattern of the union is a valid `QuadPart`.
    unsafe { now.QuadPart }
}

/// Whether the consumer cancelled the query (`PCW_MASK_INFORMATION.CancelEvent` signalled).
///
/// # Safety
/// `event` is NULL or a valid `KEVENT` (as PCW passes it to the callback).
pub unsafe fn cancelled(event: wdk_sys::PKEVENT) -> bool {
    if event.is_null() {
        return false;
    }
    // SAFETY: non-NULL, so valid per this function's contract.
    unsafe { wdk_sys::ntddk::KeReadStateEvent(event) != 0 }
}

// `unicode` and `units`: the same text for both bindings, whose `UNICODE_STRING`s share
// their field names; resolved against this module's `UNICODE_STRING`.
include!("pcw_rt_strings.rs");
