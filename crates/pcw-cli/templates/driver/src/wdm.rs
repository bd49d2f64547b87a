// SPDX-License-Identifier: MIT OR Apache-2.0
//! The three I/O manager structures the driver reads or writes — `DRIVER_OBJECT`, `IRP` and
//! `IO_STACK_LOCATION` — at the offsets the WDK's `wdm.h` gives them on x64, written out as
//! numbers and pinned by `const` assertions.
//!
//! They are deliberately not taken from windows-sys, whose metadata loses the WDK's
//! `POINTER_ALIGNMENT` on `Parameters.DeviceIoControl.InputBufferLength` and `IoControlCode`
//! (it puts them at 0x0C and 0x10 of the stack location instead of 0x10 and 0x18); a driver
//! reading a control code through that layout reads the input length instead. Each structure
//! here is the fields the driver uses with explicit byte padding between them, so a field sits
//! where the number in its comment says and nowhere else.

use core::ffi::c_void;
use core::mem::{offset_of, size_of};

/// `NTSTATUS`.
pub type NtStatus = i32;

/// An opaque `DEVICE_OBJECT`: the driver only passes pointers to it.
#[repr(C)]
pub struct DeviceObject {
    _opaque: [u8; 0],
}

/// `DRIVER_DISPATCH`.
pub type DispatchRoutine = unsafe extern "system" fn(*mut DeviceObject, *mut Irp) -> NtStatus;
/// `DRIVER_UNLOAD`.
pub type UnloadRoutine = unsafe extern "system" fn(*mut DriverObject);

/// `IRP_MJ_CREATE`.
pub const IRP_MJ_CREATE: usize = 0x00;
/// `IRP_MJ_CLOSE`.
pub const IRP_MJ_CLOSE: usize = 0x02;
/// `IRP_MJ_DEVICE_CONTROL`.
pub const IRP_MJ_DEVICE_CONTROL: usize = 0x0E;

/// `DRIVER_OBJECT` (0x150 bytes).
#[repr(C)]
pub struct DriverObject {
    _type_size: [u8; 0x08],
    /// `DeviceObject` (0x08): the first device the driver created.
    pub device_object: *mut DeviceObject,
    _flags_to_start_io: [u8; 0x68 - 0x10],
    /// `DriverUnload` (0x68).
    pub driver_unload: Option<UnloadRoutine>,
    /// `MajorFunction[IRP_MJ_MAXIMUM_FUNCTION + 1]` (0x70).
    pub major_function: [Option<DispatchRoutine>; 28],
}

/// `IRP` (0xD0 bytes without its stack locations), as a `METHOD_BUFFERED` dispatch routine
/// uses it.
#[repr(C)]
pub struct Irp {
    _type_to_flags: [u8; 0x18],
    /// `AssociatedIrp.SystemBuffer` (0x18): input in, output out.
    pub system_buffer: *mut c_void,
    _thread_list_entry: [u8; 0x30 - 0x20],
    /// `IoStatus.Status` (0x30; the low half of a pointer-sized union).
    pub status: NtStatus,
    _status_high: u32,
    /// `IoStatus.Information` (0x38): the bytes of output.
    pub information: usize,
    _requestor_mode_to_tail: [u8; 0xB8 - 0x40],
    /// `Tail.Overlay.CurrentStackLocation` (0xB8): what `IoGetCurrentIrpStackLocation` reads.
    pub current_stack_location: *mut StackLocation,
    _tail_rest: [u8; 0xD0 - 0xC0],
}

/// `IO_STACK_LOCATION` (0x48 bytes), its `Parameters` union read as `DeviceIoControl`.
#[repr(C)]
pub struct StackLocation {
    /// `MajorFunction` (0x00).
    pub major_function: u8,
    _minor_flags_control: [u8; 0x08 - 0x01],
    /// `Parameters.DeviceIoControl.OutputBufferLength` (0x08).
    pub output_buffer_length: u32,
    _pad_0c: u32,
    /// `Parameters.DeviceIoControl.InputBufferLength` (0x10, `POINTER_ALIGNMENT`).
    pub input_buffer_length: u32,
    _pad_14: u32,
    /// `Parameters.DeviceIoControl.IoControlCode` (0x18, `POINTER_ALIGNMENT`).
    pub io_control_code: u32,
    _pad_1c: u32,
    _type3_input_to_context: [u8; 0x48 - 0x20],
}

// The WDK's x64 offsets, as numbers: a change above that moves any of them fails the build.
const _: () = {
    assert!(offset_of!(DriverObject, device_object) == 0x08);
    assert!(offset_of!(DriverObject, driver_unload) == 0x68);
    assert!(offset_of!(DriverObject, major_function) == 0x70);
    assert!(size_of::<DriverObject>() == 0x150);

    assert!(offset_of!(Irp, system_buffer) == 0x18);
    assert!(offset_of!(Irp, status) == 0x30);
    assert!(offset_of!(Irp, information) == 0x38);
    assert!(offset_of!(Irp, current_stack_location) == 0xB8);
    assert!(size_of::<Irp>() == 0xD0);

    assert!(offset_of!(StackLocation, output_buffer_length) == 0x08);
    assert!(offset_of!(StackLocation, input_buffer_length) == 0x10);
    assert!(offset_of!(StackLocation, io_control_code) == 0x18);
    assert!(size_of::<StackLocation>() == 0x48);
};
