// The windows-sys differences from the DDI names, shared by the driver's windows-sys facade
// (`src/pcw_rt.rs`) and pcw-gen-check's (`crates/pcw-gen-check/src/pcw_rt.rs`), which both
// `include!` it: NULL handle constants (windows-sys handles are `isize`), the real callback
// type plus its cast to windows-sys's zero-argument `PPCW_CALLBACK`, and a `const` GUID
// constructor. (An included file cannot carry inner `//!` docs.)

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
        // SAFETY: windows-sys types `PPCW_CALLBACK` as a zero-argument function (a metadata
        // artifact, REFERENCE.md §4.5); PCW calls the pointer with the three arguments of
        // `PcwCallback`, so only the pointer's static type changes, not its ABI or target.
        unsafe { core::mem::transmute::<PcwCallback, unsafe extern "system" fn() -> NTSTATUS>(f) }
    })
}

/// A `GUID` from its 128-bit big-endian value, as the manifest writes it.
pub const fn guid_from_u128(value: u128) -> GUID {
    GUID::from_u128(value)
}
