// SPDX-License-Identifier: MIT OR Apache-2.0
//! Data sources of the V1 shim: whatever the source, one collection starts
//! with a snapshot in pcw-core's driver↔DLL format (`pcw_core::snapshot`) written into the
//! DLL's reusable [`SnapshotBuf`]; the same code then turns it into V1 objects
//! (`crate::objects`).
//!
//! * [`SyntheticSource`] (`source=synthetic`) encodes its own deterministic snapshot with
//!   `SnapshotWriter`: no driver needed (Wine, host tests).
//! * [`DeviceSource`] (`source=device`) asks the driver with `IOCTL_PCW_SNAPSHOT`: on Windows
//!   through `DeviceIoControl` on `\\.\PcwRs` (`crate::win::device`); on other hosts through
//!   an in-process function the tests install with [`set_host_ioctl`] (the driver's
//!   `device_control` under pcw-sim).

use std::sync::{Arc, RwLock};

use crate::buffer::SnapshotBuf;
use crate::synthetic::Synthetic;

/// Why a snapshot could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceError {
    /// The driver cannot be reached (not loaded, access denied, no IOCTL installed): the Win32
    /// error, retried at the next collection.
    Unavailable(u32),
    /// The snapshot would exceed the DLL's limit.
    TooLarge,
    /// The source failed to produce a snapshot (code for the log).
    Failed(u32),
}

/// A producer of snapshots.
pub trait SnapshotSource: Send {
    /// Writes a fresh snapshot at the start of `buf` (growing it when the snapshot needs more
    /// room) and returns its length.
    ///
    /// # Errors
    /// [`SourceError`].
    fn fetch(&mut self, buf: &mut SnapshotBuf) -> Result<usize, SourceError>;
}

/// The source Open configured, held by value: choosing it allocates nothing.
#[derive(Debug)]
pub enum Source {
    /// `source=device`.
    Device(DeviceSource),
    /// `source=synthetic`.
    Synthetic(SyntheticSource),
}

impl SnapshotSource for Source {
    fn fetch(&mut self, buf: &mut SnapshotBuf) -> Result<usize, SourceError> {
        match self {
            Self::Device(s) => s.fetch(buf),
            Self::Synthetic(s) => s.fetch(buf),
        }
    }
}

/// What one `IOCTL_PCW_SNAPSHOT` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoctlReply {
    /// Success: the snapshot's length.
    Done(usize),
    /// The output buffer is too small; the size needed (0 if not known).
    TooSmall(usize),
    /// Another failure: a Win32 error code.
    Failed(u32),
}

/// `ERROR_INSUFFICIENT_BUFFER`.
const ERROR_INSUFFICIENT_BUFFER: u32 = 122;
/// `ERROR_MORE_DATA`.
const ERROR_MORE_DATA: u32 = 234;
/// `STATUS_BUFFER_OVERFLOW`: the warning the driver answers a short buffer with when the
/// snapshot header fits.
const STATUS_BUFFER_OVERFLOW: i32 = 0x8000_0005_u32.cast_signed();
/// `STATUS_BUFFER_TOO_SMALL`.
const STATUS_BUFFER_TOO_SMALL: i32 = 0xC000_0023_u32.cast_signed();

impl IoctlReply {
    /// What `DeviceIoControl` reported: `ok` its result, `error` `GetLastError()` when it
    /// failed, `returned` the bytes it said it returned (`lpBytesReturned` of them). On
    /// `ERROR_MORE_DATA` those bytes are the snapshot header, which carries the size needed.
    pub fn from_win32(ok: bool, error: u32, returned: &[u8]) -> Self {
        if ok {
            return Self::Done(returned.len());
        }
        match error {
            ERROR_MORE_DATA | ERROR_INSUFFICIENT_BUFFER => {
                Self::TooSmall(pcw_core::snapshot::required_len(returned).unwrap_or(0))
            }
            code => Self::Failed(code),
        }
    }

    /// What `DeviceIoControl` reports for a driver that completed a `METHOD_BUFFERED` request
    /// with `status` and `information` over the output buffer `out`, as the I/O manager and
    /// kernel32 turn one into the other: a success returns `information` bytes; a warning
    /// returns them too but fails the call (`STATUS_BUFFER_OVERFLOW` is `ERROR_MORE_DATA`); an
    /// error returns nothing (`STATUS_BUFFER_TOO_SMALL` is `ERROR_INSUFFICIENT_BUFFER`; other
    /// statuses are passed on as the code). For hosts that run the driver's dispatch in
    /// process.
    pub fn from_completion(status: i32, information: usize, out: &[u8]) -> Self {
        let returned = out.get(..information.min(out.len())).unwrap_or_default();
        match status {
            0.. => Self::from_win32(true, 0, returned),
            STATUS_BUFFER_OVERFLOW => Self::from_win32(false, ERROR_MORE_DATA, returned),
            STATUS_BUFFER_TOO_SMALL => Self::from_win32(false, ERROR_INSUFFICIENT_BUFFER, &[]),
            s => Self::Failed(s.cast_unsigned()),
        }
    }
}

/// `IOCTL_PCW_SNAPSHOT` as an in-process function: fills the output buffer.
pub type HostIoctl = dyn Fn(&mut [u8]) -> IoctlReply + Send + Sync;

static HOST_IOCTL: RwLock<Option<Arc<HostIoctl>>> = RwLock::new(None);

/// Installs (or, with `None`, removes) the function the device source calls instead of
/// `DeviceIoControl` on hosts other than Windows. Tests install the driver's dispatch here.
pub fn set_host_ioctl(f: Option<Arc<HostIoctl>>) {
    *HOST_IOCTL
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = f;
}

/// `ERROR_FILE_NOT_FOUND`: what opening a device that does not exist fails with.
pub const ERROR_FILE_NOT_FOUND: u32 = 2;

/// Most attempts per collection when the snapshot keeps growing between calls.
const ATTEMPTS: usize = 4;

/// The driver's snapshot device.
#[derive(Default)]
pub struct DeviceSource {
    #[cfg(windows)]
    device: Option<crate::win::device::Device>,
}

impl core::fmt::Debug for DeviceSource {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeviceSource").finish_non_exhaustive()
    }
}

impl DeviceSource {
    /// A source that opens the device on first use (and again after a failure).
    pub fn new() -> Self {
        Self::default()
    }

    #[cfg(windows)]
    fn ioctl(&mut self, out: &mut [u8]) -> IoctlReply {
        let device = match self.device.take() {
            Some(d) => d,
            None => match crate::win::device::Device::open() {
                Ok(d) => d,
                Err(code) => return IoctlReply::Failed(code),
            },
        };
        let (ok, error, returned) = device.snapshot(out);
        let reply = IoctlReply::from_win32(ok, error, out.get(..returned).unwrap_or(out));
        // A failed handle is reopened next time (the driver may have been reloaded).
        if !matches!(reply, IoctlReply::Failed(_)) {
            self.device = Some(device);
        }
        reply
    }

    #[cfg(not(windows))]
    #[expect(
        clippy::unused_self,
        reason = "the host's stand-in for the Windows `ioctl`, which keeps its device handle in \
                  `self`; the two share one signature"
    )]
    fn ioctl(&mut self, out: &mut [u8]) -> IoctlReply {
        let f = HOST_IOCTL
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match f {
            Some(f) => f(out),
            None => IoctlReply::Failed(ERROR_FILE_NOT_FOUND),
        }
    }
}

impl SnapshotSource for DeviceSource {
    fn fetch(&mut self, buf: &mut SnapshotBuf) -> Result<usize, SourceError> {
        for _ in 0..ATTEMPTS {
            match self.ioctl(buf.bytes_mut()) {
                IoctlReply::Done(len) if len <= buf.len() => return Ok(len),
                IoctlReply::Done(_) => return Err(SourceError::Failed(0)),
                IoctlReply::TooSmall(needed) => {
                    let want = needed.max(buf.len().saturating_mul(2)).max(4096);
                    if !buf.grow_to(want) {
                        return Err(SourceError::TooLarge);
                    }
                }
                IoctlReply::Failed(code) => return Err(SourceError::Unavailable(code)),
            }
        }
        Err(SourceError::TooLarge)
    }
}

/// `source=synthetic`: the DLL's own snapshot.
#[derive(Debug)]
pub struct SyntheticSource {
    data: Synthetic,
}

impl SyntheticSource {
    /// A synthetic source on `data`.
    pub const fn new(data: Synthetic) -> Self {
        Self { data }
    }
}

impl SnapshotSource for SyntheticSource {
    fn fetch(&mut self, buf: &mut SnapshotBuf) -> Result<usize, SourceError> {
        self.data.tick();
        for _ in 0..2 {
            match self.data.encode(buf.bytes_mut()) {
                Ok(len) => return Ok(len),
                Err(pcw_core::snapshot::SnapshotError::NoSpace { needed }) => {
                    if !buf.grow_to(needed) {
                        return Err(SourceError::TooLarge);
                    }
                }
                Err(_) => return Err(SourceError::Failed(1)),
            }
        }
        Err(SourceError::TooLarge)
    }
}
