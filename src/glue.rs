// SPDX-License-Identifier: MIT OR Apache-2.0
//! The only Windows-kernel-specific code of the driver, in one place: `DriverEntry` and
//! `DriverUnload`, the control device's IRP plumbing (the logic is [`crate::control`]), and —
//! for the non-WDK build
//! that is cross-compiled on Linux — a pool allocator and a panic handler (the WDK build gets
//! those from `wdk-alloc` and `wdk-panic`). Everything else the driver does is plain Rust that
//! the simulator runs on any host.

use alloc::vec::Vec;

use crate::control;
use crate::ffi::status::STATUS_INVALID_PARAMETER;
use crate::ffi::wdm::{
    DeviceObject, DriverObject, IRP_MJ_CLOSE, IRP_MJ_CREATE, IRP_MJ_DEVICE_CONTROL, Irp,
};
use crate::ffi::{self, NTSTATUS, STATUS_INSUFFICIENT_RESOURCES, STATUS_SUCCESS, UNICODE_STRING};

static DEVICE_NAME: [u16; control::DEVICE_NAME.len()] = ffi::ascii_units(control::DEVICE_NAME);
static SYMBOLIC_LINK: [u16; control::SYMBOLIC_LINK.len()] =
    ffi::ascii_units(control::SYMBOLIC_LINK);

/// `FILE_DEVICE_UNKNOWN`.
const FILE_DEVICE_UNKNOWN: u32 = 0x22;
/// `FILE_DEVICE_SECURE_OPEN`: the device's security descriptor also guards opens of names
/// below it.
const FILE_DEVICE_SECURE_OPEN: u32 = 0x100;
/// Largest input any control IOCTL takes (a 1023-unit queue name), rounded up.
const MAX_INPUT: usize = 2048;
/// Inputs up to this size are copied to the stack in dispatch; larger ones (queue names) to
/// pool.
const SMALL_INPUT: usize = 64;

/// `DriverEntry`: registers the countersets (see [`crate::lifecycle::load`]), creates the control
/// device and its symbolic link, and sets the dispatch and unload routines. On any failure
/// everything done so far is undone and the status returned.
///
/// # Safety
/// Called once by the I/O manager with a valid driver object.
#[unsafe(export_name = "DriverEntry")]
pub unsafe extern "system" fn driver_entry(
    driver: *mut DriverObject,
    _registry_path: *const UNICODE_STRING,
) -> NTSTATUS {
    // SAFETY: the I/O manager passes a valid, writable driver object.
    let Some(driver) = (unsafe { driver.as_mut() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    if let Err(status) = crate::lifecycle::load() {
        return status;
    }
    let name = ffi::unicode(&DEVICE_NAME);
    let link = ffi::unicode(&SYMBOLIC_LINK);
    let mut device: *mut DeviceObject = core::ptr::null_mut();
    // SAFETY: the driver object DriverEntry received, a valid name and out-pointer.
    let status = unsafe {
        ffi::io_create_device(
            &raw mut *driver,
            &name,
            FILE_DEVICE_UNKNOWN,
            FILE_DEVICE_SECURE_OPEN,
            &mut device,
        )
    };
    if status < 0 {
        crate::lifecycle::unload();
        return status;
    }
    // Restrict the device before user mode can name it (the link does not exist yet).
    // SAFETY: `device` was created just above and is valid.
    let status = unsafe { secure(device) };
    if status < 0 {
        // SAFETY: created just above and not yet visible to user mode.
        unsafe { ffi::io_delete_device(device) };
        crate::lifecycle::unload();
        return status;
    }
    // SAFETY: both names are valid UNICODE_STRINGs over static buffers.
    let status = unsafe { ffi::io_create_symbolic_link(&link, &name) };
    if status < 0 {
        // SAFETY: created just above and not yet visible to user mode.
        unsafe { ffi::io_delete_device(device) };
        crate::lifecycle::unload();
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

/// `DACL_SECURITY_INFORMATION`.
const DACL_SECURITY_INFORMATION: u32 = 4;

/// Replaces the device's default DACL with [`crate::security::DEVICE_SECURITY_DESCRIPTOR`]
/// (`DEVICE_SDDL`), what `IoCreateDeviceSecure` would do.
///
/// # Safety
/// `device` is a valid device object created by this driver.
unsafe fn secure(device: *mut DeviceObject) -> NTSTATUS {
    let sd = &crate::security::DEVICE_SECURITY_DESCRIPTOR.0;
    // SAFETY: a valid device object (contract) and a valid self-relative descriptor, which the
    // object manager copies.
    unsafe { ffi::set_security(device.cast(), DACL_SECURITY_INFORMATION, sd.as_ptr().cast()) }
}

/// `DriverUnload`: removes the symbolic link and the device, closes the dynamic instances and
/// unregisters every counterset.
unsafe extern "system" fn driver_unload(driver: *mut DriverObject) {
    let link = ffi::unicode(&SYMBOLIC_LINK);
    // SAFETY: the link was created in DriverEntry; deleting it is allowed at unload.
    let _ = unsafe { ffi::io_delete_symbolic_link(&link) };
    // SAFETY: the I/O manager passes the driver object; its device list holds our one device.
    if let Some(device) = unsafe { driver.as_ref() }.map(|d| d.device_object) {
        if !device.is_null() {
            // SAFETY: created in DriverEntry, deleted once here.
            unsafe { ffi::io_delete_device(device) };
        }
    }
    crate::lifecycle::unload();
}

/// Completes `irp` with `status` and `information`.
///
/// # Safety
/// `irp` is a valid IRP owned by this driver, not yet completed.
unsafe fn complete(irp: &mut Irp, status: NTSTATUS, information: usize) -> NTSTATUS {
    irp.io_status.status = status;
    irp.io_status.information = information;
    // SAFETY: per this function's contract; IO_NO_INCREMENT.
    unsafe { ffi::complete_request(&raw mut *irp) };
    status
}

/// `IRP_MJ_CREATE` / `IRP_MJ_CLOSE`: nothing to set up or tear down per handle.
unsafe extern "system" fn dispatch_create_close(
    _device: *mut DeviceObject,
    irp: *mut Irp,
) -> NTSTATUS {
    // SAFETY: the I/O manager passes a valid IRP.
    let Some(irp) = (unsafe { irp.as_mut() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    // SAFETY: our IRP, completed once here.
    unsafe { complete(irp, STATUS_SUCCESS, 0) }
}

/// `IRP_MJ_DEVICE_CONTROL` (METHOD_BUFFERED): copies the input out of the shared system
/// buffer, runs [`control::device_control`] over the output view, and completes.
unsafe extern "system" fn dispatch_device_control(
    _device: *mut DeviceObject,
    irp: *mut Irp,
) -> NTSTATUS {
    // SAFETY: the I/O manager passes a valid IRP.
    let Some(irp) = (unsafe { irp.as_mut() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    // For a dispatched IRP, Tail.Overlay.CurrentStackLocation is this driver's stack location
    // (what IoGetCurrentIrpStackLocation reads); the layouts are the WDK's (`crate::ffi::wdm`).
    let stack = irp.current_stack_location;
    // SAFETY: valid for the IRP's lifetime.
    let Some(stack) = (unsafe { stack.as_ref() }) else {
        // SAFETY: our IRP, completed once.
        return unsafe { complete(irp, STATUS_INVALID_PARAMETER, 0) };
    };
    // The DeviceIoControl member is the active one for IRP_MJ_DEVICE_CONTROL.
    let params = stack.device_io_control;
    let (in_len, out_len) = (
        params.input_buffer_length.0 as usize,
        params.output_buffer_length as usize,
    );
    // METHOD_BUFFERED: AssociatedIrp.SystemBuffer is the system buffer.
    let buffer = irp.system_buffer.cast::<u8>();
    if in_len > MAX_INPUT || (buffer.is_null() && (in_len > 0 || out_len > 0)) {
        // SAFETY: our IRP, completed once.
        return unsafe { complete(irp, STATUS_INVALID_PARAMETER, 0) };
    }
    // The input is copied out of the system buffer first (the output overwrites it): to the
    // stack when small (every IOCTL but a queue creation), else to pool, so that no dispatch
    // frame holds a 2 KiB array (RELIABILITY.md, "Kernel constraints").
    let mut small = [0u8; SMALL_INPUT];
    let mut large: Vec<u8> = Vec::new();
    let copy_to: *mut u8 = if in_len <= SMALL_INPUT {
        small.as_mut_ptr()
    } else {
        if large.try_reserve_exact(in_len).is_err() {
            // SAFETY: our IRP, completed once.
            return unsafe { complete(irp, STATUS_INSUFFICIENT_RESOURCES, 0) };
        }
        large.as_mut_ptr()
    };
    if in_len > 0 {
        // SAFETY: the system buffer holds max(in, out) bytes, so `in_len` are readable; the
        // destination holds at least `in_len` writable bytes (the stack array, or the capacity
        // reserved just above) and does not overlap it.
        unsafe { core::ptr::copy_nonoverlapping(buffer, copy_to, in_len) };
    }
    let input: &[u8] = if in_len <= SMALL_INPUT {
        small.get(..in_len).unwrap_or_default()
    } else {
        // SAFETY: the copy above initialised the `in_len` reserved bytes.
        unsafe { large.set_len(in_len) };
        &large
    };
    let output: &mut [u8] = if out_len == 0 {
        &mut []
    } else {
        // SAFETY: the system buffer holds at least `out_len` bytes and nothing else references
        // it while this IRP is ours.
        unsafe { core::slice::from_raw_parts_mut(buffer, out_len) }
    };
    let c = control::device_control(params.io_control_code.0, input, output);
    // SAFETY: our IRP, completed once.
    unsafe { complete(irp, c.status, c.information) }
}

/// The non-WDK build's allocator and panic handler.
#[cfg(not(feature = "wdk"))]
mod runtime {
    use core::alloc::{GlobalAlloc, Layout};

    use crate::ffi::{allocate_pool, free_pool};

    /// The pool tag of every allocation: `PcwR` (read backwards in pool dumps).
    const POOL_TAG: u32 = u32::from_le_bytes(*b"PcwR");
    /// `POOL_FLAG_NON_PAGED`: the registries are read at APC_LEVEL (the queues' under a push
    /// lock; the waves', frozen, with none).
    const POOL_FLAG_NON_PAGED: u64 = 0x40;

    /// Non-paged pool, zeroed by `ExAllocatePool2`.
    struct PoolAllocator;

    // SAFETY: pool allocations are 16-byte aligned on x64; larger alignments are refused
    // (null), which the allocation APIs treat as an allocation failure.
    unsafe impl GlobalAlloc for PoolAllocator {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if layout.align() > 16 {
                return core::ptr::null_mut();
            }
            // SAFETY: callable at IRQL <= DISPATCH_LEVEL for non-paged pool.
            unsafe { allocate_pool(POOL_FLAG_NON_PAGED, layout.size(), POOL_TAG) }.cast()
        }

        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            // SAFETY: `ptr` came from `alloc` above, with this tag.
            unsafe { free_pool(ptr.cast(), POOL_TAG) };
        }
    }

    #[global_allocator]
    static ALLOCATOR: PoolAllocator = PoolAllocator;

    /// The MSVC CRT's marker that floating point is in use; core references it and a driver
    /// links no CRT (the WDK build gets it from wdk-sys).
    #[unsafe(no_mangle)]
    #[used]
    static _fltused: i32 = 0;

    /// No kernel path of the driver panics (clippy denies the panicking constructs and
    /// `pcw-pecheck no-panic` proves it on the image, RELIABILITY.md); should one ever be
    /// reached, stop this thread rather than unwind.
    #[panic_handler]
    fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}
