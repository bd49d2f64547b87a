// SPDX-License-Identifier: MIT OR Apache-2.0
//! The I/O manager's routines: devices, symbolic links, IRP completion and the device's
//! security descriptor, over the driver object and IRPs the loader builds at the WDK's offsets.

use std::collections::BTreeMap;

use super::state::{
    Block, DACL_SECURITY_INFORMATION, Device, NtStatus, STATUS_INSUFFICIENT_RESOURCES,
    STATUS_INVALID_PARAMETER, STATUS_OBJECT_NAME_COLLISION, STATUS_OBJECT_NAME_NOT_FOUND,
    STATUS_SUCCESS, State, Violation, enter, lock, read_unicode, text, violation, with,
};
use crate::layout::{Fields, device_object as dev, driver_object as drv};
use crate::security;

/// A device the driver created, as the object manager sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Its name (`\Device\…`).
    pub name: String,
    /// The DACL `ObSetSecurityObjectByPointer` set, if any.
    pub dacl: Option<security::Dacl>,
}

/// The driver's devices and the symbolic links (lower-case name → target).
pub fn objects() -> (Vec<DeviceInfo>, BTreeMap<String, String>) {
    with(|s| {
        let devices = s
            .devices
            .values()
            .map(|d| DeviceInfo {
                name: d.name.clone(),
                dacl: d.dacl.clone(),
            })
            .collect();
        (devices, s.links.clone())
    })
}

/// Records an IRP the I/O manager is about to dispatch.
pub(crate) fn irp_issued(irp: usize) {
    with(|s| s.irps.insert(irp, 0));
}

/// Forgets a dispatched IRP and returns how many times it was completed.
pub(crate) fn irp_retired(irp: usize) -> u32 {
    with(|s| s.irps.remove(&irp).unwrap_or(0))
}

pub(super) unsafe extern "win64" fn io_create_device(
    driver: *mut u8,
    extension_size: u32,
    name: *const u8,
    device_type: u32,
    characteristics: u32,
    _exclusive: u8,
    device: *mut *mut u8,
) -> NtStatus {
    if enter("IoCreateDevice") {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if device.is_null() {
        violation("IoCreateDevice", "NULL DeviceObject out-pointer");
        return STATUS_INVALID_PARAMETER;
    }
    if with(|s| s.driver_object) != driver as usize {
        violation(
            "IoCreateDevice",
            format!("{driver:p} is not the driver object DriverEntry received"),
        );
        return STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a readable UNICODE_STRING or NULL (the DDI's contract).
    let name = unsafe { read_unicode(name) }.map(|u| text(&u));
    let name = name.unwrap_or_default();
    if with(|s| {
        s.devices
            .values()
            .any(|d| d.name.eq_ignore_ascii_case(&name))
    }) {
        return STATUS_OBJECT_NAME_COLLISION;
    }
    let block = Block::zeroed(dev::SIZE + extension_size as usize);
    let p = block.ptr();
    let object = block.fields();
    // SAFETY: `driver` is the loader's driver object (checked above).
    let driver_object = unsafe { Fields::new(driver, drv::SIZE) };
    object.put(dev::TYPE, dev::IO_TYPE_DEVICE.to_le_bytes());
    object.put_u16(dev::SIZE_FIELD, u16::try_from(dev::SIZE).unwrap_or(0));
    object.put_usize(dev::DRIVER_OBJECT, driver as usize);
    object.put_usize(
        dev::NEXT_DEVICE,
        driver_object.get_usize(drv::DEVICE_OBJECT),
    );
    object.put_u32(dev::FLAGS, dev::DO_DEVICE_INITIALIZING);
    object.put_u32(dev::CHARACTERISTICS, characteristics);
    if extension_size > 0 {
        object.put_usize(dev::DEVICE_EXTENSION, p as usize + dev::SIZE);
    }
    object.put_u32(dev::DEVICE_TYPE, device_type);
    object.put_u8(dev::STACK_SIZE, 1);
    driver_object.put_usize(drv::DEVICE_OBJECT, p as usize);
    // SAFETY: checked non-NULL; the image's out-pointer.
    unsafe { device.write_unaligned(p) };
    with(|s| {
        s.devices.insert(
            p as usize,
            Device {
                name,
                block,
                dacl: None,
            },
        )
    });
    STATUS_SUCCESS
}

pub(super) unsafe extern "win64" fn io_delete_device(device: *mut u8) {
    enter("IoDeleteDevice");
    let mut guard = lock();
    let s = guard.get_or_insert_with(State::default);
    let Some(removed) = s.devices.remove(&(device as usize)) else {
        s.violations.push(Violation {
            routine: "IoDeleteDevice",
            what: format!("{device:p} is not a device of this driver (deleted twice?)"),
        });
        return;
    };
    // Unlink `device` from the driver's list: the loader's driver object and device blocks.
    let next = removed.block.fields().get_usize(dev::NEXT_DEVICE);
    // SAFETY: the loader's driver object, alive while the image is loaded.
    let mut at = (
        unsafe { Fields::new(s.driver_object as *mut u8, drv::SIZE) },
        drv::DEVICE_OBJECT,
    );
    loop {
        let current = at.0.get_usize(at.1);
        if current == 0 {
            break;
        }
        if current == device as usize {
            at.0.put_usize(at.1, next);
            break;
        }
        let Some(d) = s.devices.get(&current) else {
            break;
        };
        at = (d.block.fields(), dev::NEXT_DEVICE);
    }
    if let Some(link) = s
        .links
        .iter()
        .find(|(_, target)| target.eq_ignore_ascii_case(&removed.name))
    {
        s.violations.push(Violation {
            routine: "IoDeleteDevice",
            what: format!(
                "device `{}` deleted while symbolic link `{}` still names it",
                removed.name, link.0
            ),
        });
    }
    drop(removed);
}

pub(super) unsafe extern "win64" fn io_create_symbolic_link(
    link: *const u8,
    target: *const u8,
) -> NtStatus {
    if enter("IoCreateSymbolicLink") {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    // SAFETY: a readable UNICODE_STRING (the DDI's contract).
    let link = unsafe { read_unicode(link) };
    // SAFETY: as above.
    let target = unsafe { read_unicode(target) };
    let (Some(link), Some(target)) = (link.map(|u| text(&u)), target.map(|u| text(&u))) else {
        violation("IoCreateSymbolicLink", "NULL name");
        return STATUS_INVALID_PARAMETER;
    };
    with(|s| {
        if !s
            .devices
            .values()
            .any(|d| d.name.eq_ignore_ascii_case(&target))
        {
            s.violations.push(Violation {
                routine: "IoCreateSymbolicLink",
                what: format!("link `{link}` to `{target}`, which is not a device"),
            });
        }
        let key = link.to_ascii_lowercase();
        if s.links.contains_key(&key) {
            return STATUS_OBJECT_NAME_COLLISION;
        }
        s.links.insert(key, target);
        STATUS_SUCCESS
    })
}

pub(super) unsafe extern "win64" fn io_delete_symbolic_link(link: *const u8) -> NtStatus {
    enter("IoDeleteSymbolicLink");
    // SAFETY: a readable UNICODE_STRING (the DDI's contract).
    let Some(link) = (unsafe { read_unicode(link) }).map(|u| text(&u)) else {
        violation("IoDeleteSymbolicLink", "NULL name");
        return STATUS_INVALID_PARAMETER;
    };
    with(|s| {
        if s.links.remove(&link.to_ascii_lowercase()).is_some() {
            STATUS_SUCCESS
        } else {
            STATUS_OBJECT_NAME_NOT_FOUND
        }
    })
}

pub(super) unsafe extern "win64" fn iof_complete_request(irp: *mut u8, _boost: i8) {
    enter("IofCompleteRequest");
    with(|s| match s.irps.get_mut(&(irp as usize)) {
        Some(n) => {
            *n += 1;
            if *n > 1 {
                s.violations.push(Violation {
                    routine: "IofCompleteRequest",
                    what: format!("IRP {irp:p} completed {n} times"),
                });
            }
        }
        None => s.violations.push(Violation {
            routine: "IofCompleteRequest",
            what: format!("{irp:p} is not an IRP in flight"),
        }),
    });
}

pub(super) unsafe extern "win64" fn ob_set_security_object_by_pointer(
    object: *mut u8,
    information: u32,
    descriptor: *const u8,
) -> NtStatus {
    if enter("ObSetSecurityObjectByPointer") {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if information != DACL_SECURITY_INFORMATION {
        violation(
            "ObSetSecurityObjectByPointer",
            format!("SecurityInformation {information:#x}, expected DACL_SECURITY_INFORMATION"),
        );
    }
    // SAFETY: a self-relative descriptor is readable from its start; `decode` bounds every
    // read by the lengths it finds, within 64 KiB.
    let decoded = unsafe { security::decode_self_relative(descriptor) };
    with(|s| {
        let Some(device) = s.devices.get_mut(&(object as usize)) else {
            s.violations.push(Violation {
                routine: "ObSetSecurityObjectByPointer",
                what: format!("{object:p} is not a device of this driver"),
            });
            return STATUS_INVALID_PARAMETER;
        };
        match decoded {
            Ok(dacl) => {
                device.dacl = Some(dacl);
                STATUS_SUCCESS
            }
            Err(e) => {
                s.violations.push(Violation {
                    routine: "ObSetSecurityObjectByPointer",
                    what: format!("malformed security descriptor: {e}"),
                });
                STATUS_INVALID_PARAMETER
            }
        }
    })
}
