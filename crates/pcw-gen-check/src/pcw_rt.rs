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

include!("../../../src/pcw_rt_windows_sys.rs");
