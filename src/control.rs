// SPDX-License-Identifier: MIT OR Apache-2.0
//! The control device's `IRP_MJ_DEVICE_CONTROL` logic: IOCTL codes, input validation
//! and output formats, as plain Rust over the `METHOD_BUFFERED` system buffer's two views, so the
//! simulator can drive it with hostile inputs. `src/glue.rs` only moves IRPs in and out.
//!
//! | IOCTL | access | input | output |
//! |---|---|---|---|
//! | [`IOCTL_PCW_SNAPSHOT`] | read | none | the snapshot (pcw-core `snapshot` format) |
//! | [`IOCTL_PCW_CREATE_QUEUE`] | write | queue name, UTF-16LE, 1..=1023 units, no NUL | queue id, `u32` LE |
//! | [`IOCTL_PCW_CLOSE_QUEUE`] | write | queue id, `u32` LE | none |
//! | [`IOCTL_PCW_RECORD_QUEUE`] | write | id `u32`, depth `u32`, packets `u64`, bytes `u64` (LE, 24 bytes) | none |
//!
//! Lengths are checked before anything is read; a request with the wrong input length, an
//! output buffer too small, or an unknown code changes nothing. The access bits in each code are
//! enforced by the I/O manager against the device's security descriptor, [`DEVICE_SDDL`]:
//! SYSTEM and Administrators may control, Performance Monitor Users may only read snapshots.
//! `src/glue.rs` sets it on the device right after `IoCreateDevice`, before the symbolic link
//! exists, from the binary form in `src/security.rs` (what `IoCreateDeviceSecure` would do).
//! `Information` is the number of output bytes written, all of them initialised, and never more
//! than the output buffer holds: the I/O manager copies exactly that many bytes back to the
//! caller, and only when the status is a success or a warning. So a snapshot that does not fit
//! is answered the way `DeviceIoControl` callers expect: when the buffer holds at least the
//! snapshot header, the header (whose total length is the size needed) with
//! `STATUS_BUFFER_OVERFLOW`, a warning that reaches the caller as `ERROR_MORE_DATA` with the
//! header's bytes; when it cannot hold even that, `STATUS_BUFFER_TOO_SMALL` and nothing
//! (`ERROR_INSUFFICIENT_BUFFER`). A queue creation with no room for the id is
//! `STATUS_BUFFER_TOO_SMALL`.

use crate::ffi::NTSTATUS;
use crate::ffi::status::{
    STATUS_BUFFER_OVERFLOW, STATUS_BUFFER_TOO_SMALL, STATUS_INVALID_DEVICE_REQUEST,
    STATUS_INVALID_PARAMETER, STATUS_NOT_FOUND, STATUS_UNSUCCESSFUL,
};
use crate::ffi::{STATUS_INSUFFICIENT_RESOURCES, STATUS_SUCCESS};
use pcw_core::fallible;

use crate::queues;

pub use pcw_core::protocol::{
    DEVICE_NAME, IOCTL_PCW_CLOSE_QUEUE, IOCTL_PCW_CREATE_QUEUE, IOCTL_PCW_RECORD_QUEUE,
    IOCTL_PCW_SNAPSHOT, SYMBOLIC_LINK,
};

/// The device's security descriptor: full access for SYSTEM and Administrators, read access
/// (snapshots only, by the IOCTL access bits) for Performance Monitor Users. A legacy device
/// cannot take it from an INF; the driver applies it itself (see the module docs).
pub const DEVICE_SDDL: &str = "D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GR;;;MU)";

/// Longest queue name, in UTF-16 units.
pub const MAX_QUEUE_NAME_UNITS: usize = 1023;
/// Size of the `IOCTL_PCW_RECORD_QUEUE` input.
pub const RECORD_INPUT_LEN: usize = 24;

/// The outcome of one request: status and `IoStatus.Information`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// `IoStatus.Status`.
    pub status: NTSTATUS,
    /// `IoStatus.Information`: bytes of output written (or needed, see the module docs).
    pub information: usize,
}

const fn done(status: NTSTATUS, information: usize) -> Completion {
    Completion {
        status,
        information,
    }
}

fn u32_at(input: &[u8], at: usize) -> Option<u32> {
    let bytes = input.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn u64_at(input: &[u8], at: usize) -> Option<u64> {
    let bytes = input.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// Handles one `IRP_MJ_DEVICE_CONTROL`: `input` is the system buffer as the caller filled it
/// (`InputBufferLength` bytes), `output` the same buffer's output view (`OutputBufferLength`
/// bytes). Never panics, never reads or writes past either slice.
// An entry point the no-panic check roots at (`pcw-pecheck no-panic`): kept a function of
// its own in the image so the check can find it.
#[inline(never)]
pub fn device_control(code: u32, input: &[u8], output: &mut [u8]) -> Completion {
    match code {
        IOCTL_PCW_SNAPSHOT => snapshot(input, output),
        IOCTL_PCW_CREATE_QUEUE => create_queue(input, output),
        IOCTL_PCW_CLOSE_QUEUE => {
            if input.len() != 4 {
                return done(STATUS_INVALID_PARAMETER, 0);
            }
            let Some(id) = u32_at(input, 0) else {
                return done(STATUS_INVALID_PARAMETER, 0);
            };
            if queues::close(id) {
                done(STATUS_SUCCESS, 0)
            } else {
                done(STATUS_NOT_FOUND, 0)
            }
        }
        IOCTL_PCW_RECORD_QUEUE => {
            if input.len() != RECORD_INPUT_LEN {
                return done(STATUS_INVALID_PARAMETER, 0);
            }
            let fields = (
                u32_at(input, 0),
                u32_at(input, 4),
                u64_at(input, 8),
                u64_at(input, 16),
            );
            let (Some(id), Some(depth), Some(packets), Some(bytes)) = fields else {
                return done(STATUS_INVALID_PARAMETER, 0);
            };
            if queues::record(id, packets, bytes, depth) {
                done(STATUS_SUCCESS, 0)
            } else {
                done(STATUS_NOT_FOUND, 0)
            }
        }
        _ => done(STATUS_INVALID_DEVICE_REQUEST, 0),
    }
}

fn create_queue(input: &[u8], output: &mut [u8]) -> Completion {
    if input.is_empty() || !input.len().is_multiple_of(2) || input.len() > 2 * MAX_QUEUE_NAME_UNITS
    {
        return done(STATUS_INVALID_PARAMETER, 0);
    }
    if output.len() < 4 {
        return done(STATUS_BUFFER_TOO_SMALL, 0);
    }
    // Decoded into pool rather than a 2 KiB stack array (kernel stacks are small; RELIABILITY.md
    // "Kernel constraints"), without Vec's panicking growth path.
    let Ok(mut units) = fallible::with_capacity::<u16>(input.len() / 2) else {
        return done(STATUS_INSUFFICIENT_RESOURCES, 0);
    };
    for pair in input.chunks_exact(2) {
        let unit = match pair {
            [lo, hi] => u16::from_le_bytes([*lo, *hi]),
            _ => return done(STATUS_INVALID_PARAMETER, 0),
        };
        if unit == 0 || !fallible::push_reserved(&mut units, unit) {
            return done(STATUS_INVALID_PARAMETER, 0);
        }
    }
    let name = units.as_slice();
    match queues::create(name) {
        Ok(id) => {
            if let Some(out) = output.get_mut(..4) {
                out.copy_from_slice(&id.to_le_bytes());
            }
            done(STATUS_SUCCESS, 4)
        }
        Err(e) => done(e.status(), 0),
    }
}

fn snapshot(input: &[u8], output: &mut [u8]) -> Completion {
    if !input.is_empty() {
        return done(STATUS_INVALID_PARAMETER, 0);
    }
    match crate::snapshot::write(output) {
        Ok(written) => done(STATUS_SUCCESS, written),
        // Too small: the writer has put the header, carrying the size needed, at the start of
        // `output` when it fits.
        Err(needed) if needed > output.len() && output.len() >= pcw_core::snapshot::HEADER_LEN => {
            done(STATUS_BUFFER_OVERFLOW, pcw_core::snapshot::HEADER_LEN)
        }
        Err(needed) if needed > output.len() => done(STATUS_BUFFER_TOO_SMALL, 0),
        Err(_) => done(STATUS_UNSUCCESSFUL, 0),
    }
}
