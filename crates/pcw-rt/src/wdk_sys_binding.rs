// SPDX-License-Identifier: MIT OR Apache-2.0
//! The contract over wdk-sys, bindgen's output for the WDK headers as windows-drivers-rs
//! configures it: enums as modules of constants, handles as pointers to opaque structs,
//! functions in `wdk_sys::ntddk`, callbacks as `Option<unsafe extern "C" fn(…)>`.

pub use wdk_sys::_PCW_CALLBACK_TYPE::{
    PcwCallbackAddCounter, PcwCallbackCollectData, PcwCallbackEnumerateInstances,
    PcwCallbackRemoveCounter,
};
// The WDK declares this one `typedef enum PCW_REGISTRATION_FLAGS {…}`: no leading underscore.
pub use wdk_sys::PCW_REGISTRATION_FLAGS::{PcwRegistrationNone, PcwRegistrationSiloNeutral};
pub use wdk_sys::ntddk::{
    PcwAddInstance, PcwCloseInstance, PcwCreateInstance, PcwRegister, PcwUnregister,
};
pub use wdk_sys::{
    GUID, KEVENT, NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, PCW_COUNTER_DESCRIPTOR,
    PCW_DATA, PCW_MASK_INFORMATION, PCW_REGISTRATION_INFORMATION, PCW_VERSION_1, PCW_VERSION_2,
    PPCW_BUFFER, PPCW_CALLBACK, PPCW_INSTANCE, PPCW_REGISTRATION, STATUS_CANCELLED,
    STATUS_INSUFFICIENT_RESOURCES, STATUS_INVALID_PARAMETER_2, STATUS_OBJECT_NAME_COLLISION,
    STATUS_SUCCESS, UNICODE_STRING,
};

/// The NULL registration handle (bindgen types handles as pointers).
pub const NULL_REGISTRATION: PPCW_REGISTRATION = core::ptr::null_mut();
/// The NULL instance handle.
pub const NULL_INSTANCE: PPCW_INSTANCE = core::ptr::null_mut();

/// The real `PCW_CALLBACK` signature, as drivers declare their callbacks (the same for both
/// bindings, so a callback is written once).
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

/// The value for `PCW_REGISTRATION_INFORMATION.Callback`.
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

/// Whether `event` is signalled (`KeReadStateEvent`); `false` for NULL.
///
/// # Safety
/// `event` is NULL or a valid `KEVENT`.
#[inline]
pub(crate) unsafe fn event_signalled(event: *mut KEVENT) -> bool {
    if event.is_null() {
        return false;
    }
    // SAFETY: non-NULL, so valid per this function's contract.
    unsafe { wdk_sys::ntddk::KeReadStateEvent(event) != 0 }
}

unicode_helpers!();
