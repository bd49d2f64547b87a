// SPDX-License-Identifier: MIT OR Apache-2.0
//! A loaded driver image and what the I/O manager does with one: calls `DriverEntry` with a
//! driver object, sends it IRPs built at the WDK's offsets (`IRP_MJ_CREATE`, `IRP_MJ_CLOSE`,
//! `IRP_MJ_DEVICE_CONTROL` with `METHOD_BUFFERED`'s rules), turns each completion into what a
//! `DeviceIoControl` caller sees, and calls `DriverUnload`.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::image::{LoadError, MappedImage};
use crate::layout::{
    Fields, device_object as dev, driver_object as drv, irp, stack_location as sl,
    unicode_string as us,
};
use crate::ntos::{self, Block, NtStatus};

/// `STATUS_PENDING`.
const STATUS_PENDING: NtStatus = 0x0000_0103;
/// `STATUS_INVALID_DEVICE_REQUEST`: what the I/O manager completes an IRP with when the driver
/// has no routine for its major function.
pub const STATUS_INVALID_DEVICE_REQUEST: NtStatus = 0xC000_0010_u32.cast_signed();

/// `IRP_MJ_CREATE`.
pub const IRP_MJ_CREATE: u8 = 0x00;
/// `IRP_MJ_CLOSE`.
pub const IRP_MJ_CLOSE: u8 = 0x02;
/// `IRP_MJ_DEVICE_CONTROL`.
pub const IRP_MJ_DEVICE_CONTROL: u8 = 0x0e;

/// The service key the loader passes as `DriverEntry`'s registry path.
pub const REGISTRY_PATH: &str = r"\Registry\Machine\System\CurrentControlSet\Services\pcw_driver";

type EntryFn = unsafe extern "win64" fn(*mut u8, *const u8) -> NtStatus;
type DispatchFn = unsafe extern "win64" fn(*mut u8, *mut u8) -> NtStatus;
type UnloadFn = unsafe extern "win64" fn(*mut u8);
/// A host build's routines: the host's `extern "system"` convention.
type HostEntryFn = unsafe extern "system" fn(*mut u8, *const u8) -> NtStatus;
type HostDispatchFn = unsafe extern "system" fn(*mut u8, *mut u8) -> NtStatus;
type HostUnloadFn = unsafe extern "system" fn(*mut u8);

/// One image loaded at a time per process: the kernel routines' state is global.
static LOADED: AtomicBool = AtomicBool::new(false);

/// What a `DeviceIoControl` caller sees, next to what the driver completed the IRP with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoResult {
    /// `IoStatus.Status`.
    pub status: NtStatus,
    /// `IoStatus.Information`.
    pub information: usize,
    /// The bytes copied back to the caller's output buffer: `Information` of them when the
    /// status is a success or a warning, none for an error.
    pub output: Vec<u8>,
    /// `DeviceIoControl`'s result.
    pub ok: bool,
    /// `GetLastError()` after a failed call (`RtlNtStatusToDosError` of the status), else 0.
    pub win32_error: u32,
}

impl core::fmt::Display for IoResult {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "status {:#010X}, Information {}, {} bytes back",
            self.status.cast_unsigned(),
            self.information,
            self.output.len()
        )?;
        if !self.ok {
            write!(
                f,
                ", DeviceIoControl fails with Win32 error {}",
                self.win32_error
            )?;
        }
        Ok(())
    }
}

/// `NT_ERROR`: severity 3.
fn is_error(status: NtStatus) -> bool {
    status.cast_unsigned() >> 30 == 3
}

/// `RtlNtStatusToDosError` for the statuses the driver completes IRPs with.
pub fn dos_error(status: NtStatus) -> u32 {
    match status.cast_unsigned() {
        0 => 0,
        0x8000_0005 => 234,  // STATUS_BUFFER_OVERFLOW → ERROR_MORE_DATA
        0xC000_0023 => 122,  // STATUS_BUFFER_TOO_SMALL → ERROR_INSUFFICIENT_BUFFER
        0xC000_000D => 87,   // STATUS_INVALID_PARAMETER → ERROR_INVALID_PARAMETER
        0xC000_0010 => 1,    // STATUS_INVALID_DEVICE_REQUEST → ERROR_INVALID_FUNCTION
        0xC000_0225 => 1168, // STATUS_NOT_FOUND → ERROR_NOT_FOUND
        0xC000_0035 => 183,  // STATUS_OBJECT_NAME_COLLISION → ERROR_ALREADY_EXISTS
        0xC000_009A => 1450, // STATUS_INSUFFICIENT_RESOURCES → ERROR_NO_SYSTEM_RESOURCES
        0xC000_0022 => 5,    // STATUS_ACCESS_DENIED → ERROR_ACCESS_DENIED
        0xC000_0001 => 31,   // STATUS_UNSUCCESSFUL → ERROR_GEN_FAILURE
        _ => 317,            // ERROR_MR_MID_NOT_FOUND, what unmapped statuses become
    }
}

/// A dispatch routine as the time limit's message names it.
fn dispatch_name(major: u8) -> &'static str {
    match major {
        IRP_MJ_CREATE => "the IRP_MJ_CREATE dispatch routine",
        IRP_MJ_CLOSE => "the IRP_MJ_CLOSE dispatch routine",
        IRP_MJ_DEVICE_CONTROL => "the IRP_MJ_DEVICE_CONTROL dispatch routine",
        _ => "a dispatch routine",
    }
}

/// A driver image mapped into this process, with the driver object the I/O manager made for
/// it. Dropping it unmaps the image (call [`LoadedDriver::unload`] first).
///
/// A driver's host build — its kernel code compiled for this host, its kernel routines
/// resolved to `extern "system"` entry points over the same kernel — is driven the same way
/// from [`LoadedDriver::host`]: no image, and its routines called in the host's convention.
pub struct LoadedDriver {
    /// `None` for a host build.
    image: Option<MappedImage>,
    /// `DriverEntry`'s address, in the image or in this process (a host build).
    entry_point: usize,
    driver_object: Block,
    registry_path: Block,
    _path_units: Vec<u16>,
}

// SAFETY: the I/O manager calls a driver's routines from any thread, and the image is built for
// that; the loader's own mutable state is behind `ntos`'s lock, and the blocks owned here are
// written only by the image (its driver object) or before they are shared.
unsafe impl Send for LoadedDriver {}
// SAFETY: as above.
unsafe impl Sync for LoadedDriver {}

impl Drop for LoadedDriver {
    fn drop(&mut self) {
        LOADED.store(false, Ordering::Release);
    }
}

impl core::fmt::Debug for LoadedDriver {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LoadedDriver")
            .field("image", &self.image)
            .finish_non_exhaustive()
    }
}

fn unicode_block(units: &[u16]) -> Block {
    let block = Block::zeroed(us::SIZE);
    let bytes = u16::try_from(units.len() * 2).unwrap_or(u16::MAX);
    let string = block.fields();
    string.put_u16(us::LENGTH, bytes);
    string.put_u16(us::MAXIMUM_LENGTH, bytes);
    string.put_usize(us::BUFFER, units.as_ptr() as usize);
    block
}

impl LoadedDriver {
    /// Maps `file`, binds its imports to the loader's kernel routines and makes its driver
    /// object.
    ///
    /// # Errors
    /// [`LoadError`]: the image is malformed or imports something the loader does not
    /// implement, or another image is loaded in this process ([`LoadError::Busy`]).
    pub fn load(file: &[u8]) -> Result<Self, LoadError> {
        if LOADED.swap(true, Ordering::Acquire) {
            return Err(LoadError::Busy);
        }
        let image = match MappedImage::map(file, &ntos::resolve) {
            Ok(image) => image,
            Err(LoadError::UnsupportedImports(missing)) => {
                LOADED.store(false, Ordering::Release);
                let described = missing
                    .iter()
                    .map(|i| ntos::describe_unsupported(i))
                    .collect();
                return Err(LoadError::UnsupportedImports(described));
            }
            Err(e) => {
                LOADED.store(false, Ordering::Release);
                return Err(e);
            }
        };
        let driver_object = Block::zeroed(drv::SIZE);
        let path_units: Vec<u16> = REGISTRY_PATH.encode_utf16().collect();
        let registry_path = unicode_block(&path_units);
        let object = driver_object.fields();
        object.put(drv::TYPE, drv::IO_TYPE_DRIVER.to_le_bytes());
        object.put_u16(drv::SIZE_FIELD, u16::try_from(drv::SIZE).unwrap_or(0));
        object.put_usize(drv::DRIVER_START, image.base());
        object.put_u32(
            drv::DRIVER_SIZE,
            u32::try_from(image.size()).unwrap_or(u32::MAX),
        );
        object.put_usize(drv::DRIVER_INIT, image.entry_point());
        ntos::reset(driver_object.ptr() as usize);
        Ok(Self {
            entry_point: image.entry_point(),
            image: Some(image),
            driver_object,
            registry_path,
            _path_units: path_units,
        })
    }

    /// A driver's host build: `entry` is the address of its `DriverEntry` compiled for this
    /// host (an `unsafe extern "system" fn(*mut DRIVER_OBJECT, *const UNICODE_STRING) ->
    /// NTSTATUS`), whose kernel calls reach this loader's routines through `extern "system"`
    /// entry points (the pcw-harness crate defines them). Its driver object is made as for an
    /// image, and every routine it installs is called in the host's convention.
    ///
    /// # Safety
    /// `entry` is the address of such a function, and so is every routine it installs in the
    /// driver object.
    ///
    /// # Errors
    /// [`LoadError::Busy`] when another driver is loaded in this process.
    pub unsafe fn host(entry: usize) -> Result<Self, LoadError> {
        if LOADED.swap(true, Ordering::Acquire) {
            return Err(LoadError::Busy);
        }
        let driver_object = Block::zeroed(drv::SIZE);
        let path_units: Vec<u16> = REGISTRY_PATH.encode_utf16().collect();
        let registry_path = unicode_block(&path_units);
        let object = driver_object.fields();
        object.put(drv::TYPE, drv::IO_TYPE_DRIVER.to_le_bytes());
        object.put_u16(drv::SIZE_FIELD, u16::try_from(drv::SIZE).unwrap_or(0));
        object.put_usize(drv::DRIVER_INIT, entry);
        ntos::reset(driver_object.ptr() as usize);
        Ok(Self {
            image: None,
            entry_point: entry,
            driver_object,
            registry_path,
            _path_units: path_units,
        })
    }

    /// The mapped image; `None` for a host build.
    pub fn image(&self) -> Option<&MappedImage> {
        self.image.as_ref()
    }

    /// The driver object's address.
    pub fn driver_object(&self) -> *mut u8 {
        self.driver_object.ptr()
    }

    /// Calls `DriverEntry`. On success, clears `DO_DEVICE_INITIALIZING` on the devices it
    /// created, as the I/O manager does.
    pub fn entry(&self) -> NtStatus {
        let (object, path) = (
            self.driver_object.ptr(),
            self.registry_path.ptr().cast_const(),
        );
        let status = if self.image.is_some() {
            // SAFETY: the image's entry point, in its convention (win64).
            let entry = unsafe { core::mem::transmute::<usize, EntryFn>(self.entry_point) };
            // SAFETY: DriverEntry's contract: a driver object and a registry path, both valid
            // for the driver's lifetime.
            let run = || unsafe { entry(object, path) };
            ntos::watch::call("DriverEntry", run)
        } else {
            // SAFETY: a host build's entry point, in the host's convention (`host`'s contract).
            let entry = unsafe { core::mem::transmute::<usize, HostEntryFn>(self.entry_point) };
            // SAFETY: as above.
            unsafe { entry(object, path) }
        };
        ntos::sync::check_return("DriverEntry");
        if status >= 0 {
            for device in self.devices() {
                let flags = device.get_u32(dev::FLAGS);
                device.put_u32(dev::FLAGS, flags & !dev::DO_DEVICE_INITIALIZING);
            }
        }
        status
    }

    /// The driver's devices, following `DeviceObject` / `NextDevice`.
    fn devices(&self) -> Vec<Fields> {
        let mut out = Vec::new();
        let mut at = self.driver_object.fields().get_usize(drv::DEVICE_OBJECT);
        while at != 0 && out.len() < 64 {
            // SAFETY: `IoCreateDevice` made every device on the list, and they live until
            // `IoDeleteDevice` unlinks them.
            let device = unsafe { Fields::new(at as *mut u8, dev::SIZE) };
            out.push(device);
            at = device.get_usize(dev::NEXT_DEVICE);
        }
        out
    }

    fn major(&self, major: u8) -> usize {
        self.driver_object
            .fields()
            .get_usize(drv::MAJOR_FUNCTION + 8 * usize::from(major))
    }

    /// Whether `DriverEntry` set a routine for `major` (`IRP_MJ_*`).
    pub fn handles(&self, major: u8) -> bool {
        self.major(major) != 0
    }

    /// The address of the `DriverUnload` routine, if set.
    pub fn unload_routine(&self) -> usize {
        self.driver_object.fields().get_usize(drv::DRIVER_UNLOAD)
    }

    /// Calls `DriverUnload` if `DriverEntry` set one; returns whether it did.
    pub fn unload(&self) -> bool {
        let routine = self.unload_routine();
        if routine == 0 {
            return false;
        }
        if self.image.is_some() {
            // SAFETY: the image's unload routine, in its convention (win64).
            let unload = unsafe { core::mem::transmute::<usize, UnloadFn>(routine) };
            let object = self.driver_object.ptr();
            // SAFETY: called once with its driver object.
            let run = || unsafe { unload(object) };
            ntos::watch::call("DriverUnload", run);
        } else {
            // SAFETY: a host build's unload routine, in the host's convention.
            let unload = unsafe { core::mem::transmute::<usize, HostUnloadFn>(routine) };
            // SAFETY: called once with its driver object.
            unsafe { unload(self.driver_object.ptr()) };
        }
        ntos::sync::check_return("DriverUnload");
        true
    }

    /// Sends an IRP with no buffers (`IRP_MJ_CREATE`, `IRP_MJ_CLOSE`).
    pub fn send(&self, major: u8) -> IoResult {
        self.dispatch(major, 0, &[], 0)
    }

    /// `DeviceIoControl(code, input, output of output_len bytes)` on the driver's first device,
    /// as a `METHOD_BUFFERED` request: one system buffer of `max(input, output)` bytes holding
    /// the input (the rest poisoned with `0xCC`), `Information` bytes copied back unless the
    /// status is an error.
    pub fn ioctl(&self, code: u32, input: &[u8], output_len: usize) -> IoResult {
        self.dispatch(IRP_MJ_DEVICE_CONTROL, code, input, output_len)
    }

    /// Builds the IRP and its one stack location as the I/O manager does for a request from
    /// user mode.
    fn build_irp(
        major: u8,
        code: u32,
        device: usize,
        system: usize,
        lens: (usize, usize),
    ) -> Block {
        let (input_len, output_len) = lens;
        let packet = Block::zeroed(irp::SIZE + sl::SIZE);
        let p = packet.fields();
        let stack_at = p.base() as usize + irp::SIZE;
        p.put(irp::TYPE, irp::IO_TYPE_IRP.to_le_bytes());
        p.put_u16(
            irp::SIZE_FIELD,
            u16::try_from(irp::SIZE + sl::SIZE).unwrap_or(0),
        );
        p.put_usize(irp::SYSTEM_BUFFER, system);
        // An empty ThreadListEntry points at itself.
        let list = p.base() as usize + irp::THREAD_LIST_ENTRY;
        p.put_usize(irp::THREAD_LIST_ENTRY, list);
        p.put_usize(irp::THREAD_LIST_ENTRY + 8, list);
        p.put_u32(irp::IO_STATUS_STATUS, STATUS_PENDING.cast_unsigned());
        p.put_u8(irp::REQUESTOR_MODE, 1); // UserMode
        p.put_u8(irp::STACK_COUNT, 1);
        p.put_u8(irp::CURRENT_LOCATION, 1);
        p.put_usize(irp::CURRENT_STACK_LOCATION, stack_at);
        let stack = irp::SIZE;
        p.put_u8(stack + sl::MAJOR_FUNCTION, major);
        if major == IRP_MJ_DEVICE_CONTROL {
            let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            p.put_u32(stack + sl::OUTPUT_BUFFER_LENGTH, len(output_len));
            p.put_u32(stack + sl::INPUT_BUFFER_LENGTH, len(input_len));
            p.put_u32(stack + sl::IO_CONTROL_CODE, code);
        }
        p.put_usize(stack + sl::DEVICE_OBJECT, device);
        packet
    }

    fn dispatch(&self, major: u8, code: u32, input: &[u8], output_len: usize) -> IoResult {
        let routine = self.major(major);
        if routine == 0 {
            return IoResult {
                status: STATUS_INVALID_DEVICE_REQUEST,
                information: 0,
                output: Vec::new(),
                ok: false,
                win32_error: dos_error(STATUS_INVALID_DEVICE_REQUEST),
            };
        }
        let device = self.devices().first().map_or(0, |d| d.base() as usize);
        let system_len = input.len().max(output_len);
        let system = (system_len > 0).then(|| Block::zeroed(system_len));
        if let Some(buffer) = &system {
            // SAFETY: the system buffer holds `system_len` >= `input.len()` bytes.
            let view = unsafe { core::slice::from_raw_parts_mut(buffer.ptr(), system_len) };
            view.fill(0xCC);
            view[..input.len()].copy_from_slice(input);
        }
        let system_ptr = system.as_ref().map_or(0, |b| b.ptr() as usize);
        let packet = Self::build_irp(major, code, device, system_ptr, (input.len(), output_len));
        let p = packet.fields();
        ntos::irp_issued(p.base() as usize);
        let returned = if self.image.is_some() {
            // SAFETY: the routine DriverEntry set for `major`, in the image's convention
            // (win64).
            let f = unsafe { core::mem::transmute::<usize, DispatchFn>(routine) };
            let irp = p.base();
            // SAFETY: a dispatch routine's contract: its device and an IRP that stay valid
            // until it returns.
            let run = || unsafe { f(device as *mut u8, irp) };
            ntos::watch::call(dispatch_name(major), run)
        } else {
            // SAFETY: a host build's dispatch routine, in the host's convention.
            let f = unsafe { core::mem::transmute::<usize, HostDispatchFn>(routine) };
            // SAFETY: as above.
            unsafe { f(device as *mut u8, p.base()) }
        };
        ntos::sync::check_return("an IRP dispatch routine");
        let completions = ntos::irp_retired(p.base() as usize);
        let status = p.get_u32(irp::IO_STATUS_STATUS).cast_signed();
        let information = p.get_usize(irp::IO_STATUS_INFORMATION);
        if returned == STATUS_PENDING {
            ntos::violation(
                "IRP dispatch",
                format!("major {major:#x} returned STATUS_PENDING, which this driver never marks"),
            );
        }
        if completions != 1 {
            ntos::violation(
                "IRP dispatch",
                format!("major {major:#x} (code {code:#x}) completed {completions} times"),
            );
        }
        if returned != status {
            ntos::violation(
                "IRP dispatch",
                format!(
                    "major {major:#x} (code {code:#x}) returned {returned:#x} but completed with \
                     {status:#x}"
                ),
            );
        }
        let mut output = Vec::new();
        if !is_error(status) {
            if information > output_len {
                ntos::violation(
                    "IRP dispatch",
                    format!(
                        "code {code:#x}: Information {information} exceeds OutputBufferLength \
                         {output_len}: the I/O manager would copy past the caller's buffer"
                    ),
                );
            }
            let n = information.min(output_len);
            if let Some(buffer) = &system {
                // SAFETY: `n` <= `output_len` <= the system buffer's length.
                output = unsafe { core::slice::from_raw_parts(buffer.ptr(), n) }.to_vec();
            }
        }
        IoResult {
            status,
            information,
            output,
            ok: status >= 0,
            win32_error: if status >= 0 { 0 } else { dos_error(status) },
        }
    }
}
