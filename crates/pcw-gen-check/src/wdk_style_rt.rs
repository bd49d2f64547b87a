// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-gen's runtime contract satisfied by bindings written to bindgen's conventions as
//! wdk-build configures them for wdk-sys (the WDK side of the driver's FFI facade): handles
//! are pointers to opaque structs, enums are modules of constants, `Info`/`Data` parameters are
//! `*mut` typedefs, the callback pointer is an `Option<extern "C" fn(…)>` with its real
//! arguments. wdk-sys itself cannot be built here, so [`bindings`] stands in for it with the same
//! shapes; the facade part below it is what a driver's wdk-sys facade looks like. The functions
//! forward to [`crate::fake_pcw`] so the generated code can run against it.

#![cfg(not(windows))]
#![expect(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    reason = "the stand-in bindings keep the WDK's C names, as bindgen does"
)]

/// Stand-in for the wdk-sys items the facade re-exports (bindgen shapes, hand-written).
pub mod bindings {
    use core::ffi::c_void;

    /// `NTSTATUS`.
    pub type NTSTATUS = i32;
    /// `ULONG`.
    pub type ULONG = u32;
    /// `USHORT`.
    pub type USHORT = u16;

    /// `GUID` with bindgen's field names.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct GUID {
        /// `Data1`.
        pub Data1: ULONG,
        /// `Data2`.
        pub Data2: USHORT,
        /// `Data3`.
        pub Data3: USHORT,
        /// `Data4`.
        pub Data4: [u8; 8],
    }

    /// `UNICODE_STRING`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct _UNICODE_STRING {
        /// `Length`.
        pub Length: USHORT,
        /// `MaximumLength`.
        pub MaximumLength: USHORT,
        /// `Buffer` (`PWCH`).
        pub Buffer: *mut u16,
    }
    /// `UNICODE_STRING`.
    pub type UNICODE_STRING = _UNICODE_STRING;
    /// `PCUNICODE_STRING`.
    pub type PCUNICODE_STRING = *const UNICODE_STRING;

    /// Opaque `_PCW_REGISTRATION`.
    #[repr(C)]
    pub struct _PCW_REGISTRATION {
        _private: [u8; 0],
    }
    /// Opaque `_PCW_INSTANCE`.
    #[repr(C)]
    pub struct _PCW_INSTANCE {
        _private: [u8; 0],
    }
    /// Opaque `_PCW_BUFFER`.
    #[repr(C)]
    pub struct _PCW_BUFFER {
        _private: [u8; 0],
    }
    /// `PPCW_REGISTRATION`.
    pub type PPCW_REGISTRATION = *mut _PCW_REGISTRATION;
    /// `PPCW_INSTANCE`.
    pub type PPCW_INSTANCE = *mut _PCW_INSTANCE;
    /// `PPCW_BUFFER`.
    pub type PPCW_BUFFER = *mut _PCW_BUFFER;

    /// `PCW_COUNTER_DESCRIPTOR`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct _PCW_COUNTER_DESCRIPTOR {
        /// `Id`.
        pub Id: USHORT,
        /// `StructIndex`.
        pub StructIndex: USHORT,
        /// `Offset`.
        pub Offset: USHORT,
        /// `Size`.
        pub Size: USHORT,
    }
    /// `PCW_COUNTER_DESCRIPTOR`.
    pub type PCW_COUNTER_DESCRIPTOR = _PCW_COUNTER_DESCRIPTOR;
    /// `PPCW_COUNTER_DESCRIPTOR`.
    pub type PPCW_COUNTER_DESCRIPTOR = *mut PCW_COUNTER_DESCRIPTOR;

    /// `PCW_DATA`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct _PCW_DATA {
        /// `Data`.
        pub Data: *const c_void,
        /// `Size`.
        pub Size: ULONG,
    }
    /// `PCW_DATA`.
    pub type PCW_DATA = _PCW_DATA;
    /// `PPCW_DATA`.
    pub type PPCW_DATA = *mut PCW_DATA;

    /// `_PCW_CALLBACK_TYPE` as a module of constants.
    pub mod _PCW_CALLBACK_TYPE {
        /// The enum's type.
        pub type Type = core::ffi::c_int;
        /// `PcwCallbackCollectData`.
        pub const PcwCallbackCollectData: Type = 2;
    }
    /// `PCW_REGISTRATION_FLAGS` as a module of constants (the WDK declares the enum without a
    /// leading underscore, so bindgen's module has none either).
    pub mod PCW_REGISTRATION_FLAGS {
        /// The enum's type.
        pub type Type = core::ffi::c_int;
        /// `PcwRegistrationNone`.
        pub const PcwRegistrationNone: Type = 0;
        /// `PcwRegistrationSiloNeutral`.
        pub const PcwRegistrationSiloNeutral: Type = 1;
    }

    /// Opaque stand-in for `PCW_CALLBACK_INFORMATION` (a union in the WDK).
    #[repr(C)]
    pub struct _PCW_CALLBACK_INFORMATION {
        _private: [u8; 0],
    }
    /// `PPCW_CALLBACK_INFORMATION`.
    pub type PPCW_CALLBACK_INFORMATION = *mut _PCW_CALLBACK_INFORMATION;
    /// `PPCW_CALLBACK`: bindgen's nullable function pointer with the real arguments.
    pub type PPCW_CALLBACK = Option<
        unsafe extern "C" fn(
            Type: _PCW_CALLBACK_TYPE::Type,
            Info: PPCW_CALLBACK_INFORMATION,
            Context: *mut c_void,
        ) -> NTSTATUS,
    >;

    /// `PCW_REGISTRATION_INFORMATION` (with `Flags`).
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct _PCW_REGISTRATION_INFORMATION {
        /// `Version`.
        pub Version: ULONG,
        /// `Name`.
        pub Name: PCUNICODE_STRING,
        /// `CounterCount`.
        pub CounterCount: ULONG,
        /// `Counters`.
        pub Counters: PPCW_COUNTER_DESCRIPTOR,
        /// `Callback`.
        pub Callback: PPCW_CALLBACK,
        /// `CallbackContext`.
        pub CallbackContext: *mut c_void,
        /// `Flags`.
        pub Flags: PCW_REGISTRATION_FLAGS::Type,
    }
    /// `PCW_REGISTRATION_INFORMATION`.
    pub type PCW_REGISTRATION_INFORMATION = _PCW_REGISTRATION_INFORMATION;
    /// `PPCW_REGISTRATION_INFORMATION`.
    pub type PPCW_REGISTRATION_INFORMATION = *mut PCW_REGISTRATION_INFORMATION;

    /// `PCW_VERSION_1`.
    pub const PCW_VERSION_1: ULONG = 0x100;
    /// `PCW_VERSION_2`.
    pub const PCW_VERSION_2: ULONG = 0x200;
    /// `STATUS_INVALID_PARAMETER_2` (bindgen gives the macro's value as `NTSTATUS`).
    pub const STATUS_INVALID_PARAMETER_2: NTSTATUS = 0xC000_00F0_u32.cast_signed();

    /// `PcwRegister` with bindgen's parameter types, forwarding to the fake.
    ///
    /// # Safety
    ///
    /// As the DDI.
    pub unsafe extern "C" fn PcwRegister(
        Registration: *mut PPCW_REGISTRATION,
        Info: PPCW_REGISTRATION_INFORMATION,
    ) -> NTSTATUS {
        // SAFETY: forwarded with the DDI's contract; the structures have the same layout, and
        // the handle is an integer round-tripped through a pointer-typed slot.
        unsafe { crate::fake_pcw::PcwRegister(Registration.cast(), Info.cast()) }
    }

    /// `PcwUnregister`, forwarding to the fake.
    ///
    /// # Safety
    ///
    /// As the DDI.
    pub unsafe extern "C" fn PcwUnregister(Registration: PPCW_REGISTRATION) {
        // SAFETY: forwarded with the DDI's contract.
        unsafe { crate::fake_pcw::PcwUnregister(Registration as isize) }
    }

    /// `PcwAddInstance`, forwarding to the fake.
    ///
    /// # Safety
    ///
    /// As the DDI.
    pub unsafe extern "C" fn PcwAddInstance(
        Buffer: PPCW_BUFFER,
        Name: PCUNICODE_STRING,
        Id: ULONG,
        Count: ULONG,
        Data: PPCW_DATA,
    ) -> NTSTATUS {
        // SAFETY: forwarded with the DDI's contract; same layouts.
        unsafe {
            crate::fake_pcw::PcwAddInstance(Buffer as isize, Name.cast(), Id, Count, Data.cast())
        }
    }

    /// `PcwCreateInstance`, forwarding to the fake.
    ///
    /// # Safety
    ///
    /// As the DDI.
    pub unsafe extern "C" fn PcwCreateInstance(
        Instance: *mut PPCW_INSTANCE,
        Registration: PPCW_REGISTRATION,
        Name: PCUNICODE_STRING,
        Count: ULONG,
        Data: PPCW_DATA,
    ) -> NTSTATUS {
        // SAFETY: forwarded with the DDI's contract; same layouts.
        unsafe {
            crate::fake_pcw::PcwCreateInstance(
                Instance.cast(),
                Registration as isize,
                Name.cast(),
                Count,
                Data.cast(),
            )
        }
    }

    /// `PcwCloseInstance`, forwarding to the fake.
    ///
    /// # Safety
    ///
    /// As the DDI.
    pub unsafe extern "C" fn PcwCloseInstance(Instance: PPCW_INSTANCE) {
        // SAFETY: forwarded with the DDI's contract.
        unsafe { crate::fake_pcw::PcwCloseInstance(Instance as isize) }
    }
}

// ---- The facade: what a driver's wdk-sys facade would contain. ----

pub use bindings::PCW_REGISTRATION_FLAGS::{PcwRegistrationNone, PcwRegistrationSiloNeutral};
pub use bindings::{
    GUID, NTSTATUS, PCW_COUNTER_DESCRIPTOR, PCW_DATA, PCW_REGISTRATION_INFORMATION, PCW_VERSION_1,
    PCW_VERSION_2, PPCW_BUFFER, PPCW_CALLBACK, PPCW_INSTANCE, PPCW_REGISTRATION, PcwAddInstance,
    PcwCloseInstance, PcwCreateInstance, PcwRegister, PcwUnregister, STATUS_INVALID_PARAMETER_2,
    UNICODE_STRING,
};

/// The NULL registration handle.
pub const NULL_REGISTRATION: PPCW_REGISTRATION = core::ptr::null_mut();
/// The NULL instance handle.
pub const NULL_INSTANCE: PPCW_INSTANCE = core::ptr::null_mut();

/// The callback type: bindgen's, without the `Option`.
pub type PcwCallback = unsafe extern "C" fn(
    bindings::_PCW_CALLBACK_TYPE::Type,
    bindings::PPCW_CALLBACK_INFORMATION,
    *mut core::ffi::c_void,
) -> NTSTATUS;

/// Identity: bindgen already types `Callback` with the real signature.
pub const fn pcw_callback(callback: Option<PcwCallback>) -> PPCW_CALLBACK {
    callback
}

/// A `GUID` from its 128-bit big-endian value (bindgen's GUID has no constructor).
pub const fn guid_from_u128(value: u128) -> GUID {
    let bytes = value.to_be_bytes();
    GUID {
        Data1: u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        Data2: u16::from_be_bytes([bytes[4], bytes[5]]),
        Data3: u16::from_be_bytes([bytes[6], bytes[7]]),
        Data4: [
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15],
        ],
    }
}
