//! pcw-gen's runtime contract (see the `pcw_gen` crate docs, "Runtime contract") implemented
//! over windows-sys's `Wdk` bindings: the same shape as the driver's windows-sys facade. Each
//! difference from the DDI names is one item: NULL handle constants (windows-sys handles are
//! `isize`), the real callback type plus its cast to windows-sys's zero-argument
//! `PPCW_CALLBACK`, and a `const` GUID constructor.

pub use windows_sys::Wdk::Foundation::{PPCW_BUFFER, PPCW_INSTANCE, PPCW_REGISTRATION};
pub use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, PCW_COUNTER_DESCRIPTOR, PCW_DATA,
    PCW_REGISTRATION_INFORMATION, PCW_VERSION_1, PCW_VERSION_2, PPCW_CALLBACK, PcwAddInstance,
    PcwCloseInstance, PcwCreateInstance, PcwRegister, PcwRegistrationNone,
    PcwRegistrationSiloNeutral, PcwUnregister,
};
pub use windows_sys::Win32::Foundation::{NTSTATUS, STATUS_INVALID_PARAMETER_2, UNICODE_STRING};
pub use windows_sys::core::GUID;

/// The NULL registration handle.
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
        // SAFETY: windows-sys types `PPCW_CALLBACK` as a zero-argument function (a metadata
        // artifact, REFERENCE.md §4.5); PCW calls the pointer with the three arguments of
        // `PcwCallback`, so only the pointer's static type changes, not its ABI or target.
        unsafe { core::mem::transmute::<PcwCallback, unsafe extern "system" fn() -> NTSTATUS>(f) }
    })
}

/// A `GUID` from its 128-bit big-endian value.
pub const fn guid_from_u128(value: u128) -> GUID {
    GUID::from_u128(value)
}
