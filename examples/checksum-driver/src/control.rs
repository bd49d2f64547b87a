// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the control device does, as plain Rust: the IOCTLs, their answers, and the statistics
//! the driver keeps per algorithm. The kernel plumbing around it is in `kernel.rs`.
//!
//! Each IOCTL is `METHOD_BUFFERED`: the input is the bytes to checksum (any length, empty
//! included), the output the checksum as a little-endian `u32`. An output buffer shorter than
//! four bytes is refused with `STATUS_BUFFER_TOO_SMALL` and counted as rejected.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::checksum;

/// The device's name in the object manager's namespace.
pub const DEVICE_NAME: &str = r"\Device\PcwRsChecksum";
/// The symbolic link user mode opens (`\\.\PcwRsChecksum`).
pub const SYMBOLIC_LINK: &str = r"\DosDevices\PcwRsChecksum";

/// `CTL_CODE(FILE_DEVICE_UNKNOWN, function, METHOD_BUFFERED, FILE_ANY_ACCESS)`.
const fn ctl_code(function: u32) -> u32 {
    (0x22 << 16) | (function << 2)
}

/// CRC-32 of the input buffer.
pub const IOCTL_CHECKSUM_CRC32: u32 = ctl_code(0x900);
/// Adler-32 of the input buffer.
pub const IOCTL_CHECKSUM_ADLER32: u32 = ctl_code(0x901);

/// `STATUS_SUCCESS`.
pub const STATUS_SUCCESS: i32 = 0;
/// `STATUS_INVALID_DEVICE_REQUEST`: not one of the driver's IOCTLs.
pub const STATUS_INVALID_DEVICE_REQUEST: i32 = 0xC000_0010_u32.cast_signed();
/// `STATUS_BUFFER_TOO_SMALL`: the output cannot hold the checksum.
pub const STATUS_BUFFER_TOO_SMALL: i32 = 0xC000_0023_u32.cast_signed();
/// `STATUS_INVALID_PARAMETER`.
pub const STATUS_INVALID_PARAMETER: i32 = 0xC000_000D_u32.cast_signed();

/// A checksum algorithm the device offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// CRC-32 (IEEE).
    Crc32,
    /// Adler-32.
    Adler32,
}

impl Algorithm {
    /// Every algorithm, in instance-id order.
    pub const ALL: [Self; 2] = [Self::Crc32, Self::Adler32];

    /// The algorithm an IOCTL asks for.
    pub fn from_ioctl(code: u32) -> Option<Self> {
        match code {
            IOCTL_CHECKSUM_CRC32 => Some(Self::Crc32),
            IOCTL_CHECKSUM_ADLER32 => Some(Self::Adler32),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Crc32 => "CRC32",
            Self::Adler32 => "Adler32",
        }
    }

    /// Its statistics.
    pub fn stats(self) -> &'static Stats {
        match self {
            Self::Crc32 => &CRC32_STATS,
            Self::Adler32 => &ADLER32_STATS,
        }
    }

    fn compute(self, data: &[u8]) -> u32 {
        match self {
            Self::Crc32 => checksum::crc32(data),
            Self::Adler32 => checksum::adler32(data),
        }
    }
}

/// What the driver counts per algorithm. Updated with relaxed atomics: each value is exact on
/// its own; a reader may see one request's bytes before its request count.
#[derive(Debug)]
pub struct Stats {
    requests: AtomicU64,
    bytes: AtomicU64,
    rejected: AtomicU64,
}

impl Stats {
    const fn new() -> Self {
        Self {
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
        }
    }

    /// Requests answered.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Input bytes checksummed.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Requests refused for a short output buffer.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// Back to zero (at load).
    pub fn reset(&self) {
        self.requests.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
        self.rejected.store(0, Ordering::Relaxed);
    }
}

static CRC32_STATS: Stats = Stats::new();
static ADLER32_STATS: Stats = Stats::new();

/// How an IOCTL completes: `IoStatus.Status` and `IoStatus.Information`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// `IoStatus.Status`.
    pub status: i32,
    /// `IoStatus.Information`: bytes written to the output.
    pub information: usize,
}

/// Answers IOCTL `code` with `input`, writing into `output`; counts the request.
pub fn device_control(code: u32, input: &[u8], output: &mut [u8]) -> Completion {
    let Some(algorithm) = Algorithm::from_ioctl(code) else {
        return Completion {
            status: STATUS_INVALID_DEVICE_REQUEST,
            information: 0,
        };
    };
    let stats = algorithm.stats();
    let Some(out) = output.get_mut(..4) else {
        stats.rejected.fetch_add(1, Ordering::Relaxed);
        return Completion {
            status: STATUS_BUFFER_TOO_SMALL,
            information: 0,
        };
    };
    out.copy_from_slice(&algorithm.compute(input).to_le_bytes());
    stats.requests.fetch_add(1, Ordering::Relaxed);
    stats.bytes.fetch_add(input.len() as u64, Ordering::Relaxed);
    Completion {
        status: STATUS_SUCCESS,
        information: 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_codes_are_method_buffered_any_access() {
        assert_eq!(IOCTL_CHECKSUM_CRC32, 0x0022_2400);
        assert_eq!(IOCTL_CHECKSUM_ADLER32, 0x0022_2404);
    }

    #[test]
    fn answers_and_counts() {
        let before = Algorithm::Crc32.stats().requests();
        let mut out = [0u8; 8];
        let c = device_control(IOCTL_CHECKSUM_CRC32, b"123456789", &mut out);
        assert_eq!(
            c,
            Completion {
                status: 0,
                information: 4
            }
        );
        assert_eq!(
            u32::from_le_bytes(out[..4].try_into().unwrap()),
            0xCBF4_3926
        );
        assert!(Algorithm::Crc32.stats().requests() > before);

        let rejected = Algorithm::Adler32.stats().rejected();
        let c = device_control(IOCTL_CHECKSUM_ADLER32, b"abc", &mut out[..3]);
        assert_eq!(c.status, STATUS_BUFFER_TOO_SMALL);
        assert_eq!(Algorithm::Adler32.stats().rejected(), rejected + 1);

        let c = device_control(0x0022_2408, b"abc", &mut out);
        assert_eq!(c.status, STATUS_INVALID_DEVICE_REQUEST);
    }
}
