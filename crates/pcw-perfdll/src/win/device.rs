// SPDX-License-Identifier: MIT OR Apache-2.0
//! `source=device` on Windows: `IOCTL_PCW_SNAPSHOT` (`METHOD_BUFFERED`, read access) on the
//! driver's control device `\\.\PcwRs`, both from `pcw_core::protocol`, which the driver uses
//! too.
//!
//! The handle is opened on first use and kept until Close (or a failed call, after which the
//! next collection reopens it: the driver may have been restarted).

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_FILENAME_EXCED_RANGE, GENERIC_READ, GetLastError, HANDLE,
    INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_ATTRIBUTE_NORMAL, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
};
use windows_sys::Win32::System::IO::DeviceIoControl;

use crate::nopanic::Wide;

pub use pcw_core::protocol::{DEVICE_PATH, IOCTL_PCW_SNAPSHOT};

/// An open handle to the device.
#[derive(Debug)]
pub struct Device {
    handle: HANDLE,
}

// SAFETY: a file handle may be used from any thread; `Device` only passes it to
// DeviceIoControl and CloseHandle.
unsafe impl Send for Device {}

impl Device {
    /// Opens the device for reading.
    ///
    /// # Errors
    /// The Win32 error of `CreateFileW`.
    pub fn open() -> Result<Self, u32> {
        let Some(path) = Wide::<16>::of(DEVICE_PATH) else {
            return Err(ERROR_FILENAME_EXCED_RANGE);
        };
        // SAFETY: `path` is NUL-terminated and outlives the call; NULL security attributes and
        // template are allowed.
        let handle = unsafe {
            CreateFileW(
                path.as_ptr(),
                GENERIC_READ,
                FILE_SHARE_READ | FILE_SHARE_WRITE,
                core::ptr::null(),
                OPEN_EXISTING,
                FILE_ATTRIBUTE_NORMAL,
                core::ptr::null_mut(),
            )
        };
        if handle == INVALID_HANDLE_VALUE || handle.is_null() {
            // SAFETY: no precondition.
            return Err(unsafe { GetLastError() });
        }
        Ok(Self { handle })
    }

    /// One snapshot into `out`: what `DeviceIoControl` reported — whether it succeeded,
    /// `GetLastError()` when it did not, and the bytes it said it returned.
    pub fn snapshot(&self, out: &mut [u8]) -> (bool, u32, usize) {
        let len = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let mut returned: u32 = 0;
        // SAFETY: the handle is open; `out` is `len` writable bytes (or fewer: `len` is capped
        // at u32::MAX only above 4 GiB, which the buffer never reaches) alive across this
        // synchronous call; no input buffer; no OVERLAPPED.
        let ok = unsafe {
            DeviceIoControl(
                self.handle,
                IOCTL_PCW_SNAPSHOT,
                core::ptr::null(),
                0,
                out.as_mut_ptr().cast(),
                len,
                &raw mut returned,
                core::ptr::null_mut(),
            )
        };
        let error = if ok == 0 {
            // SAFETY: no precondition.
            unsafe { GetLastError() }
        } else {
            0
        };
        (ok != 0, error, returned as usize)
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: the handle came from CreateFileW and is closed once.
        unsafe { CloseHandle(self.handle) };
    }
}
