// SPDX-License-Identifier: MIT OR Apache-2.0
//! The Windows-kernel side: `DriverEntry`, `DriverUnload`, the dispatch routines, and the few
//! kernel routines they call, over windows-sys or (feature `wdk`) wdk-sys. IRPs and the driver
//! object are read through [`crate::wdm`], the WDK's layouts, in both builds.

use core::ffi::c_void;

use crate::control::{self, DEVICE_NAME, STATUS_INVALID_PARAMETER, STATUS_SUCCESS, SYMBOLIC_LINK};
use crate::utf16;
use crate::wdm::{
    DeviceObject, DriverObject, IRP_MJ_CLOSE, IRP_MJ_CREATE, IRP_MJ_DEVICE_CONTROL, Irp, NtStatus,
};

static DEVICE_NAME_UTF16: [u16; DEVICE_NAME.len()] = utf16(DEVICE_NAME);
static SYMBOLIC_LINK_UTF16: [u16; SYMBOLIC_LINK.len()] = utf16(SYMBOLIC_LINK);

/// `FILE_DEVICE_UNKNOWN`.
const FILE_DEVICE_UNKNOWN: u32 = 0x22;
/// `FILE_DEVICE_SECURE_OPEN`: the device's security also applies to names opened below it.
const FILE_DEVICE_SECURE_OPEN: u32 = 0x100;

/// `DriverEntry`: registers the counters, creates the control device and its symbolic link,
/// and sets the dispatch and unload routines. A failure undoes what was done and is returned.
///
/// # Safety
/// Called once by the I/O manager, with a valid driver object.
#[unsafe(export_name = "DriverEntry")]
pub unsafe extern "system" fn driver_entry(
    driver: *mut DriverObject,
    _registry_path: *const c_void,
) -> NtStatus {
    // SAFETY: the I/O manager passes a valid, writable driver object.
    let Some(driver) = (unsafe { driver.as_mut() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    for algorithm in control::Algorithm::ALL {
        algorithm.stats().reset();
    }
    if let Err(status) = crate::counters::register() {
        return status;
    }
    let mut device: *mut DeviceObject = core::ptr::null_mut();
    // SAFETY: the driver object DriverEntry received; a valid out-pointer.
    let status = unsafe { sys::create_device(driver, &DEVICE_NAME_UTF16, &mut device) };
    if status < 0 {
        crate::counters::unregister();
        return status;
    }
    // SAFETY: two valid names; IRQL PASSIVE_LEVEL in DriverEntry.
    let status = unsafe { sys::create_symbolic_link(&SYMBOLIC_LINK_UTF16, &DEVICE_NAME_UTF16) };
    if status < 0 {
        // SAFETY: created above, not yet reachable from user mode.
        unsafe { sys::delete_device(device) };
        crate::counters::unregister();
        return status;
    }
    for major in [IRP_MJ_CREATE, IRP_MJ_CLOSE] {
        if let Some(slot) = driver.major_function.get_mut(major) {
            *slot = Some(dispatch_create_close);
        }
    }
    if let Some(slot) = driver.major_function.get_mut(IRP_MJ_DEVICE_CONTROL) {
        *slot = Some(dispatch_device_control);
    }
    driver.driver_unload = Some(driver_unload);
    STATUS_SUCCESS
}

/// `DriverUnload`: the link, the device, then the counters.
unsafe extern "system" fn driver_unload(driver: *mut DriverObject) {
    // SAFETY: created in DriverEntry; IRQL PASSIVE_LEVEL at unload.
    unsafe { sys::delete_symbolic_link(&SYMBOLIC_LINK_UTF16) };
    // SAFETY: the I/O manager passes the driver object, whose device list holds our one device.
    let device = unsafe { driver.as_ref() }.map_or(core::ptr::null_mut(), |d| d.device_object);
    if !device.is_null() {
        // SAFETY: created in DriverEntry, deleted once here.
        unsafe { sys::delete_device(device) };
    }
    crate::counters::unregister();
}

/// Completes `irp` with `status` and `information` and returns `status`.
///
/// # Safety
/// `irp` is an IRP this driver owns and has not completed.
unsafe fn complete(irp: &mut Irp, status: NtStatus, information: usize) -> NtStatus {
    irp.status = status;
    irp.information = information;
    // SAFETY: per this function's contract; completed exactly once.
    unsafe { sys::complete_request(irp) };
    status
}

/// `IRP_MJ_CREATE` and `IRP_MJ_CLOSE`: nothing to do per handle.
unsafe extern "system" fn dispatch_create_close(_: *mut DeviceObject, irp: *mut Irp) -> NtStatus {
    // SAFETY: the I/O manager passes a valid IRP.
    let Some(irp) = (unsafe { irp.as_mut() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    // SAFETY: our IRP, completed once.
    unsafe { complete(irp, STATUS_SUCCESS, 0) }
}

/// `IRP_MJ_DEVICE_CONTROL`, `METHOD_BUFFERED`: the checksum of the system buffer's input,
/// written over the same buffer.
unsafe extern "system" fn dispatch_device_control(_: *mut DeviceObject, irp: *mut Irp) -> NtStatus {
    // SAFETY: the I/O manager passes a valid IRP.
    let Some(irp) = (unsafe { irp.as_mut() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    // SAFETY: a dispatched IRP's current stack location is valid while the IRP is ours.
    let Some(stack) = (unsafe { irp.current_stack_location.as_ref() }) else {
        // SAFETY: our IRP, completed once.
        return unsafe { complete(irp, STATUS_INVALID_PARAMETER, 0) };
    };
    let (code, in_len, out_len) = (
        stack.io_control_code,
        stack.input_buffer_length as usize,
        stack.output_buffer_length as usize,
    );
    let buffer = irp.system_buffer.cast::<u8>();
    if buffer.is_null() && (in_len > 0 || out_len > 0) {
        // SAFETY: our IRP, completed once.
        return unsafe { complete(irp, STATUS_INVALID_PARAMETER, 0) };
    }
    // The checksum is computed over the input before anything is written to the output, which
    // shares the buffer: 4 bytes from a stack copy.
    let mut checksum = [0u8; 4];
    let input: &[u8] = if in_len == 0 {
        &[]
    } else {
        // SAFETY: the system buffer holds max(in, out) bytes, so `in_len` are readable; nothing
        // writes it while this shared view lives (the output below is made after it ends).
        unsafe { core::slice::from_raw_parts(buffer, in_len) }
    };
    let c = control::device_control(
        code,
        input,
        checksum.get_mut(..out_len.min(4)).unwrap_or_default(),
    );
    if c.information > 0 {
        let n = c.information.min(out_len);
        // SAFETY: `n` <= `out_len` bytes of the system buffer are writable, and the input view
        // is no longer used.
        let output = unsafe { core::slice::from_raw_parts_mut(buffer, n) };
        output.copy_from_slice(checksum.get(..n).unwrap_or_default());
    }
    // SAFETY: our IRP, completed once.
    unsafe { complete(irp, c.status, c.information) }
}

/// The kernel routines over windows-sys.
#[cfg(not(feature = "wdk"))]
mod sys {
    use windows_sys::Wdk::System::SystemServices as ss;
    use windows_sys::Win32::Foundation::UNICODE_STRING;

    use crate::wdm::{DeviceObject, DriverObject, Irp, NtStatus};

    fn unicode(units: &[u16]) -> UNICODE_STRING {
        let bytes = u16::try_from(units.len() * 2).unwrap_or(0xFFFE);
        UNICODE_STRING {
            Length: bytes,
            MaximumLength: bytes,
            Buffer: units.as_ptr().cast_mut(),
        }
    }

    /// `IoCreateDevice` without an extension, not exclusive.
    ///
    /// # Safety
    /// `driver` is the object `DriverEntry` received.
    pub(crate) unsafe fn create_device(
        driver: &mut DriverObject,
        name: &[u16],
        device: &mut *mut DeviceObject,
    ) -> NtStatus {
        let name = unicode(name);
        // SAFETY: per this function's contract; `name` and the out-pointer are valid locals.
        unsafe {
            ss::IoCreateDevice(
                core::ptr::from_mut(driver).cast(),
                0,
                &raw const name,
                super::FILE_DEVICE_UNKNOWN,
                super::FILE_DEVICE_SECURE_OPEN,
                false,
                core::ptr::from_mut(device).cast(),
            )
        }
    }

    /// `IoDeleteDevice`.
    ///
    /// # Safety
    /// A device this driver created, deleted once.
    pub(crate) unsafe fn delete_device(device: *mut DeviceObject) {
        // SAFETY: per this function's contract.
        unsafe { ss::IoDeleteDevice(device.cast()) };
    }

    /// `IoCreateSymbolicLink`.
    ///
    /// # Safety
    /// IRQL `PASSIVE_LEVEL`.
    pub(crate) unsafe fn create_symbolic_link(link: &[u16], target: &[u16]) -> NtStatus {
        let (link, target) = (unicode(link), unicode(target));
        // SAFETY: two valid strings (locals), per this function's contract otherwise.
        unsafe { ss::IoCreateSymbolicLink(&raw const link, &raw const target) }
    }

    /// `IoDeleteSymbolicLink`.
    ///
    /// # Safety
    /// IRQL `PASSIVE_LEVEL`.
    pub(crate) unsafe fn delete_symbolic_link(link: &[u16]) {
        let link = unicode(link);
        // SAFETY: a valid string (a local), per this function's contract otherwise.
        let _ = unsafe { ss::IoDeleteSymbolicLink(&raw const link) };
    }

    /// `IofCompleteRequest` with `IO_NO_INCREMENT`.
    ///
    /// # Safety
    /// An IRP this driver owns, completed once.
    pub(crate) unsafe fn complete_request(irp: &mut Irp) {
        // SAFETY: per this function's contract.
        unsafe { ss::IofCompleteRequest(core::ptr::from_mut(irp).cast(), 0) };
    }

    /// The MSVC CRT's floating-point marker, which `core` references; a driver links no CRT
    /// (wdk-sys defines it in the WDK build).
    #[cfg(target_os = "windows")]
    #[unsafe(no_mangle)]
    #[used]
    static _fltused: i32 = 0;

    /// No kernel path of the driver panics (clippy denies the panicking constructs, and
    /// `pcw-pecheck no-panic` checks the image); should one be reached, stop this thread
    /// rather than unwind through the kernel.
    #[cfg(target_os = "windows")]
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}

/// The kernel routines over wdk-sys (the WDK build).
#[cfg(feature = "wdk")]
mod sys {
    use wdk_sys::UNICODE_STRING;
    use wdk_sys::ntddk as nt;

    use crate::wdm::{DeviceObject, DriverObject, Irp, NtStatus};

    // The WDK build's panic handler.
    extern crate wdk_panic;

    fn unicode(units: &[u16]) -> UNICODE_STRING {
        let bytes = u16::try_from(units.len() * 2).unwrap_or(0xFFFE);
        UNICODE_STRING {
            Length: bytes,
            MaximumLength: bytes,
            Buffer: units.as_ptr().cast_mut(),
        }
    }

    /// `IoCreateDevice` without an extension, not exclusive.
    ///
    /// # Safety
    /// `driver` is the object `DriverEntry` received.
    pub(crate) unsafe fn create_device(
        driver: &mut DriverObject,
        name: &[u16],
        device: &mut *mut DeviceObject,
    ) -> NtStatus {
        let mut name = unicode(name);
        // SAFETY: per this function's contract; `name` and the out-pointer are valid locals.
        unsafe {
            nt::IoCreateDevice(
                core::ptr::from_mut(driver).cast(),
                0,
                &raw mut name,
                super::FILE_DEVICE_UNKNOWN,
                super::FILE_DEVICE_SECURE_OPEN,
                0,
                core::ptr::from_mut(device).cast(),
            )
        }
    }

    /// `IoDeleteDevice`.
    ///
    /// # Safety
    /// A device this driver created, deleted once.
    pub(crate) unsafe fn delete_device(device: *mut DeviceObject) {
        // SAFETY: per this function's contract.
        unsafe { nt::IoDeleteDevice(device.cast()) };
    }

    /// `IoCreateSymbolicLink`.
    ///
    /// # Safety
    /// IRQL `PASSIVE_LEVEL`.
    pub(crate) unsafe fn create_symbolic_link(link: &[u16], target: &[u16]) -> NtStatus {
        let (mut link, mut target) = (unicode(link), unicode(target));
        // SAFETY: two valid strings (locals), per this function's contract otherwise.
        unsafe { nt::IoCreateSymbolicLink(&raw mut link, &raw mut target) }
    }

    /// `IoDeleteSymbolicLink`.
    ///
    /// # Safety
    /// IRQL `PASSIVE_LEVEL`.
    pub(crate) unsafe fn delete_symbolic_link(link: &[u16]) {
        let mut link = unicode(link);
        // SAFETY: a valid string (a local), per this function's contract otherwise.
        let _ = unsafe { nt::IoDeleteSymbolicLink(&raw mut link) };
    }

    /// `IofCompleteRequest` with `IO_NO_INCREMENT`.
    ///
    /// # Safety
    /// An IRP this driver owns, completed once.
    pub(crate) unsafe fn complete_request(irp: &mut Irp) {
        // SAFETY: per this function's contract.
        unsafe { nt::IofCompleteRequest(core::ptr::from_mut(irp).cast(), 0) };
    }
}
