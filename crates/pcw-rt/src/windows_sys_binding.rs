// SPDX-License-Identifier: MIT OR Apache-2.0
//! The contract over windows-sys's `Wdk` bindings.

pub use windows_sys::Wdk::Foundation::{KEVENT, PPCW_BUFFER, PPCW_INSTANCE, PPCW_REGISTRATION};
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

/// The NULL registration handle (windows-sys types handles as `isize`).
pub const NULL_REGISTRATION: PPCW_REGISTRATION = 0;
/// The NULL instance handle.
pub const NULL_INSTANCE: PPCW_INSTANCE = 0;

/// The real `PCW_CALLBACK` signature (windows-sys's `PCW_CALLBACK` without the `Option`).
pub type PcwCallback = unsafe extern "system" fn(
    PCW_CALLBACK_TYPE,
    *const PCW_CALLBACK_INFORMATION,
    *const core::ffi::c_void,
) -> NTSTATUS;

/// The value for `PCW_REGISTRATION_INFORMATION.Callback`.
pub fn pcw_callback(callback: Option<PcwCallback>) -> PPCW_CALLBACK {
    callback.map(|f| {
        // SAFETY: windows-sys types `PPCW_CALLBACK` as a zero-argument function (an artifact of
        // the metadata); PCW calls the pointer with the three arguments of `PcwCallback`, so
        // only the pointer's static type changes, not its ABI or target.
        unsafe { core::mem::transmute::<PcwCallback, unsafe extern "system" fn() -> NTSTATUS>(f) }
    })
}

/// A `GUID` from its 128-bit big-endian value, as the manifest writes it.
pub const fn guid_from_u128(value: u128) -> GUID {
    GUID::from_u128(value)
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
    unsafe { windows_sys::Wdk::System::SystemServices::KeReadStateEvent(event) != 0 }
}

unicode_helpers!();
