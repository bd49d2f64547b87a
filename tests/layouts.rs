// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel-structure audit behind `docs/kernel-layouts.md`: for every structure the driver
//! reads or writes by field, the WDK's x64 offset (a number from the WDK declaration), the offset
//! windows-sys gives, and the driver's own declaration (`pcw_driver::ffi::wdm`). The driver's
//! declarations are also pinned by `const` assertions at compile time; this test records where
//! windows-sys agrees and where it does not, so that the table cannot drift from the bindings.

use core::mem::{offset_of, size_of};

use pcw_driver::ffi::wdm;
use windows_sys::Wdk::Foundation::{DRIVER_OBJECT, IO_STACK_LOCATION, IRP};
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR, PCW_COUNTER_INFORMATION, PCW_DATA,
    PCW_MASK_INFORMATION, PCW_REGISTRATION_INFORMATION,
};
use windows_sys::Win32::Foundation::UNICODE_STRING;

/// `IO_STACK_LOCATION.Parameters` (a union) starts at 8 in both.
const PARAMETERS: usize = 8;

#[test]
fn windows_sys_misplaces_the_pointer_aligned_device_io_control_fields() {
    // windows-sys's generated name for `Parameters.DeviceIoControl`.
    type DeviceIoControl = windows_sys::Wdk::Foundation::IO_STACK_LOCATION_0_16;
    assert_eq!(offset_of!(IO_STACK_LOCATION, Parameters), PARAMETERS);
    let ws = |field: usize| PARAMETERS + field;
    // (field, WDK, windows-sys, the driver's declaration)
    let rows = [
        (
            "OutputBufferLength",
            0x08,
            ws(offset_of!(DeviceIoControl, OutputBufferLength)),
            PARAMETERS + offset_of!(wdm::DeviceIoControlParameters, output_buffer_length),
        ),
        (
            "InputBufferLength",
            0x10,
            ws(offset_of!(DeviceIoControl, InputBufferLength)),
            PARAMETERS + offset_of!(wdm::DeviceIoControlParameters, input_buffer_length),
        ),
        (
            "IoControlCode",
            0x18,
            ws(offset_of!(DeviceIoControl, IoControlCode)),
            PARAMETERS + offset_of!(wdm::DeviceIoControlParameters, io_control_code),
        ),
        (
            "Type3InputBuffer",
            0x20,
            ws(offset_of!(DeviceIoControl, Type3InputBuffer)),
            PARAMETERS + offset_of!(wdm::DeviceIoControlParameters, type3_input_buffer),
        ),
    ];
    for (field, wdk, _, ours) in rows {
        assert_eq!(ours, wdk, "the driver's {field}");
    }
    let windows_sys: Vec<(&str, usize)> = rows.iter().map(|r| (r.0, r.2)).collect();
    assert_eq!(
        windows_sys,
        [
            ("OutputBufferLength", 0x08),
            ("InputBufferLength", 0x0C),
            ("IoControlCode", 0x10),
            ("Type3InputBuffer", 0x18),
        ],
        "windows-sys's layout changed: update docs/kernel-layouts.md"
    );
    assert_eq!(size_of::<IO_STACK_LOCATION>(), 0x48);
    assert_eq!(size_of::<wdm::IoStackLocation>(), 0x48);
}

#[test]
fn windows_sys_agrees_with_the_wdk_elsewhere() {
    // IRP
    assert_eq!(offset_of!(IRP, AssociatedIrp), 0x18);
    assert_eq!(offset_of!(IRP, IoStatus), 0x30);
    assert_eq!(offset_of!(IRP, Tail), 0x78);
    assert_eq!(size_of::<IRP>(), 0xD0);
    assert_eq!(offset_of!(wdm::Irp, system_buffer), 0x18);
    assert_eq!(offset_of!(wdm::Irp, io_status), 0x30);
    assert_eq!(offset_of!(wdm::Irp, current_stack_location), 0xB8);
    // DRIVER_OBJECT
    assert_eq!(offset_of!(DRIVER_OBJECT, DeviceObject), 0x08);
    assert_eq!(offset_of!(DRIVER_OBJECT, DriverUnload), 0x68);
    assert_eq!(offset_of!(DRIVER_OBJECT, MajorFunction), 0x70);
    assert_eq!(size_of::<DRIVER_OBJECT>(), 0x150);
    assert_eq!(offset_of!(wdm::DriverObject, device_object), 0x08);
    assert_eq!(offset_of!(wdm::DriverObject, driver_unload), 0x68);
    assert_eq!(offset_of!(wdm::DriverObject, major_function), 0x70);
    // UNICODE_STRING
    assert_eq!(offset_of!(UNICODE_STRING, Buffer), 0x08);
    assert_eq!(size_of::<UNICODE_STRING>(), 0x10);
    // PCW
    assert_eq!(offset_of!(PCW_REGISTRATION_INFORMATION, Name), 0x08);
    assert_eq!(offset_of!(PCW_REGISTRATION_INFORMATION, CounterCount), 0x10);
    assert_eq!(offset_of!(PCW_REGISTRATION_INFORMATION, Counters), 0x18);
    assert_eq!(offset_of!(PCW_REGISTRATION_INFORMATION, Callback), 0x20);
    assert_eq!(
        offset_of!(PCW_REGISTRATION_INFORMATION, CallbackContext),
        0x28
    );
    assert_eq!(offset_of!(PCW_REGISTRATION_INFORMATION, Flags), 0x30);
    assert_eq!(size_of::<PCW_REGISTRATION_INFORMATION>(), 0x38);
    assert_eq!(offset_of!(PCW_MASK_INFORMATION, InstanceMask), 0x08);
    assert_eq!(offset_of!(PCW_MASK_INFORMATION, InstanceId), 0x10);
    assert_eq!(offset_of!(PCW_MASK_INFORMATION, CollectMultiple), 0x14);
    assert_eq!(offset_of!(PCW_MASK_INFORMATION, Buffer), 0x18);
    assert_eq!(offset_of!(PCW_MASK_INFORMATION, CancelEvent), 0x20);
    assert_eq!(size_of::<PCW_MASK_INFORMATION>(), 0x28);
    assert_eq!(size_of::<PCW_CALLBACK_INFORMATION>(), 0x28);
    assert_eq!(offset_of!(PCW_COUNTER_INFORMATION, InstanceMask), 0x08);
    assert_eq!(size_of::<PCW_COUNTER_DESCRIPTOR>(), 8);
    assert_eq!(offset_of!(PCW_COUNTER_DESCRIPTOR, Size), 6);
    assert_eq!(offset_of!(PCW_DATA, Size), 0x08);
    assert_eq!(size_of::<PCW_DATA>(), 0x10);
}
