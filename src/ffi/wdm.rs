// SPDX-License-Identifier: MIT OR Apache-2.0
//! The I/O manager's structures that the driver reads or writes field by field — `DRIVER_OBJECT`,
//! `IRP`, `IO_STACK_LOCATION` — declared here from the WDK's declarations for x64 (wdm.h, as the
//! WDK reference pages of those three structures document them), with every offset the driver
//! uses pinned by a `const` assertion.
//!
//! They are not taken from windows-sys: its metadata drops the WDK's `POINTER_ALIGNMENT` on
//! `IO_STACK_LOCATION.Parameters.DeviceIoControl.InputBufferLength` and `IoControlCode`, which
//! puts them 4 and 8 bytes early (0x0C and 0x10 instead of 0x10 and 0x18). A driver reading
//! those fields through windows-sys sees `InputBufferLength` in the padding and the input length
//! as the control code, and rejects every IOCTL. The rule kept here: a field's offset is what
//! the WDK's declaration and alignment rules give, written out as a number, and the binding in
//! use must agree with it (see `docs/kernel-layouts.md` for the audit of every structure).
//!
//! Only the fields the driver touches are public; the others are private padding of the
//! declared size, so the layouts are complete and the sizes match the WDK's.

use core::ffi::c_void;
use core::mem::{offset_of, size_of};

/// `NTSTATUS`.
pub type NtStatus = i32;

/// `DRIVER_DISPATCH`: an `IRP_MJ_*` routine.
pub type DriverDispatch = unsafe extern "system" fn(*mut DeviceObject, *mut Irp) -> NtStatus;
/// `DRIVER_UNLOAD`.
pub type DriverUnload = unsafe extern "system" fn(*mut DriverObject);

/// `IRP_MJ_MAXIMUM_FUNCTION + 1`: the size of `DRIVER_OBJECT.MajorFunction`.
pub const IRP_MJ_COUNT: usize = 28;
/// `IRP_MJ_CREATE`.
pub const IRP_MJ_CREATE: usize = 0x00;
/// `IRP_MJ_CLOSE`.
pub const IRP_MJ_CLOSE: usize = 0x02;
/// `IRP_MJ_DEVICE_CONTROL`.
pub const IRP_MJ_DEVICE_CONTROL: usize = 0x0e;

/// An opaque `DEVICE_OBJECT`: the driver only passes pointers to it.
#[repr(C)]
pub struct DeviceObject {
    _opaque: [u8; 0],
}

/// `UNICODE_STRING`: `Length` and `MaximumLength` in bytes, then the buffer pointer at 8.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct UnicodeString {
    /// Bytes in use.
    pub length: u16,
    /// Bytes the buffer holds.
    pub maximum_length: u16,
    /// The UTF-16 units.
    pub buffer: *mut u16,
}

/// `DRIVER_OBJECT` (0x150 bytes on x64).
#[repr(C)]
pub struct DriverObject {
    r#type: i16,
    size: i16,
    /// The head of the driver's device list (`DeviceObject`, 0x08).
    pub device_object: *mut DeviceObject,
    flags: u32,
    driver_start: *mut c_void,
    driver_size: u32,
    driver_section: *mut c_void,
    driver_extension: *mut c_void,
    driver_name: UnicodeString,
    hardware_database: *mut UnicodeString,
    fast_io_dispatch: *mut c_void,
    driver_init: *mut c_void,
    driver_start_io: *mut c_void,
    /// `DriverUnload` (0x68).
    pub driver_unload: Option<DriverUnload>,
    /// `MajorFunction` (0x70), indexed by `IRP_MJ_*`.
    pub major_function: [Option<DriverDispatch>; IRP_MJ_COUNT],
}

/// `IO_STATUS_BLOCK`: a union of `Status` and a pointer, then `Information`.
#[repr(C)]
pub struct IoStatusBlock {
    /// `Status` (the low half of the pointer-sized union).
    pub status: NtStatus,
    pointer_high: u32,
    /// `Information`.
    pub information: usize,
}

/// `IRP` (0xD0 bytes on x64), as far as a dispatch routine of a `METHOD_BUFFERED` device needs.
#[repr(C)]
pub struct Irp {
    r#type: i16,
    size: u16,
    allocation_processor_number: u16,
    reserved: u16,
    mdl_address: *mut c_void,
    flags: u32,
    /// `AssociatedIrp.SystemBuffer` (0x18): the `METHOD_BUFFERED` system buffer.
    pub system_buffer: *mut c_void,
    thread_list_entry: [*mut c_void; 2],
    /// `IoStatus` (0x30).
    pub io_status: IoStatusBlock,
    requestor_mode_to_allocation_flags: [u8; 8],
    user_iosb: *mut c_void,
    user_event: *mut c_void,
    overlay: [u64; 2],
    cancel_routine: *mut c_void,
    user_buffer: *mut c_void,
    driver_context: [*mut c_void; 4],
    thread: *mut c_void,
    auxiliary_buffer: *mut c_void,
    list_entry: [*mut c_void; 2],
    /// `Tail.Overlay.CurrentStackLocation` (0xB8): what `IoGetCurrentIrpStackLocation` reads.
    pub current_stack_location: *mut IoStackLocation,
    original_file_object: *mut c_void,
    /// The rest of `Tail` (its `KAPC` member is 0x58 bytes).
    tail_rest: [u8; 8],
}

/// A `ULONG` declared with `POINTER_ALIGNMENT` in the WDK: aligned (and so padded) to 8 on x64.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug)]
pub struct PointerAligned(pub u32);

/// `IO_STACK_LOCATION.Parameters.DeviceIoControl`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DeviceIoControlParameters {
    /// `OutputBufferLength` (+0x00).
    pub output_buffer_length: u32,
    /// `InputBufferLength` (+0x08, `POINTER_ALIGNMENT`).
    pub input_buffer_length: PointerAligned,
    /// `IoControlCode` (+0x10, `POINTER_ALIGNMENT`).
    pub io_control_code: PointerAligned,
    /// `Type3InputBuffer` (+0x18).
    pub type3_input_buffer: *mut c_void,
}

/// `IO_STACK_LOCATION` (0x48 bytes on x64), with `Parameters` read as `DeviceIoControl` (the
/// union's largest member is 0x20 bytes, as this one is).
#[repr(C)]
pub struct IoStackLocation {
    /// `MajorFunction`.
    pub major_function: u8,
    minor_function: u8,
    flags: u8,
    control: u8,
    /// `Parameters.DeviceIoControl` (the union starts pointer-aligned, at 0x08).
    pub device_io_control: DeviceIoControlParameters,
    device_object: *mut DeviceObject,
    file_object: *mut c_void,
    completion_routine: *mut c_void,
    context: *mut c_void,
}

// The WDK's offsets on x64. Each is a number from the declaration, never computed from a
// binding; a change of any field above that moves one of them fails the build.
const _: () = {
    assert!(size_of::<UnicodeString>() == 0x10);
    assert!(offset_of!(UnicodeString, maximum_length) == 0x02);
    assert!(offset_of!(UnicodeString, buffer) == 0x08);

    assert!(size_of::<DriverObject>() == 0x150);
    assert!(offset_of!(DriverObject, device_object) == 0x08);
    assert!(offset_of!(DriverObject, driver_name) == 0x38);
    assert!(offset_of!(DriverObject, driver_unload) == 0x68);
    assert!(offset_of!(DriverObject, major_function) == 0x70);

    assert!(size_of::<IoStatusBlock>() == 0x10);
    assert!(offset_of!(IoStatusBlock, information) == 0x08);

    assert!(size_of::<Irp>() == 0xD0);
    assert!(offset_of!(Irp, system_buffer) == 0x18);
    assert!(offset_of!(Irp, io_status) == 0x30);
    assert!(offset_of!(Irp, cancel_routine) == 0x68);
    assert!(offset_of!(Irp, current_stack_location) == 0xB8);

    assert!(size_of::<IoStackLocation>() == 0x48);
    assert!(offset_of!(IoStackLocation, device_io_control) == 0x08);
    assert!(offset_of!(IoStackLocation, device_object) == 0x28);
    assert!(offset_of!(IoStackLocation, context) == 0x40);
    // OutputBufferLength 0x08, InputBufferLength 0x10, IoControlCode 0x18, Type3InputBuffer
    // 0x20 within IO_STACK_LOCATION.
    assert!(offset_of!(DeviceIoControlParameters, output_buffer_length) == 0x00);
    assert!(offset_of!(DeviceIoControlParameters, input_buffer_length) == 0x08);
    assert!(offset_of!(DeviceIoControlParameters, io_control_code) == 0x10);
    assert!(offset_of!(DeviceIoControlParameters, type3_input_buffer) == 0x18);
    assert!(size_of::<DeviceIoControlParameters>() == 0x20);
};
