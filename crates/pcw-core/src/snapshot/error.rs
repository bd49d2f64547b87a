// SPDX-License-Identifier: MIT OR Apache-2.0
//! Why a snapshot could not be written or read.

/// Why a snapshot could not be written or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// The buffer is too small; the whole snapshot needs `needed` bytes.
    NoSpace {
        /// Exact size of the whole snapshot.
        needed: usize,
    },
    /// The first four bytes are not [`SNAPSHOT_MAGIC`](super::SNAPSHOT_MAGIC).
    BadMagic,
    /// The snapshot has a version this code does not read.
    UnsupportedVersion {
        /// The version found.
        found: u16,
        /// The version supported, [`SNAPSHOT_VERSION`](super::SNAPSHOT_VERSION).
        supported: u16,
    },
    /// The input ends at `offset`, before the end its header announces.
    Truncated {
        /// Length of the input.
        offset: usize,
    },
    /// A length, offset or count at `offset` is inconsistent with the records (a record overruns
    /// its set or the snapshot, a `ByteLength` or `NameOffset` is not where the record puts it,
    /// bytes are left over, or the input is longer than the total length).
    BadLength {
        /// Offset of the field or record at fault.
        offset: usize,
    },
    /// A count at `offset` exceeds the format's limits (or the total would exceed
    /// [`MAX_TOTAL_LEN`](super::MAX_TOTAL_LEN)).
    LimitExceeded {
        /// Offset of the field at fault.
        offset: usize,
    },
    /// The counter size at `offset` is not 0, 4 or 8.
    BadCounterSize {
        /// Offset of the size at fault.
        offset: usize,
    },
    /// The instance name at `offset` is longer than [`MAX_NAME_UNITS`](super::MAX_NAME_UNITS) or contains a NUL unit
    /// (or its `NameLength` is odd or less than 2).
    BadName {
        /// Offset of the length field or of the offending unit.
        offset: usize,
    },
    /// A reserved field, flag bit or padding byte at `offset` does not hold the value the format
    /// fixes (zero; −1 for `UniqueID`).
    Reserved {
        /// Offset of the field or byte at fault.
        offset: usize,
    },
    /// The set index at `offset` does not exceed the previous set's (indexes strictly increase).
    BadIndex {
        /// Offset of the index field.
        offset: usize,
    },
    /// Writer misuse: a set got a number of instances, or an instance a number of values, other
    /// than announced (an instance with no set open counts as one more than the 0 announced).
    CountMismatch {
        /// What was announced.
        expected: u32,
        /// What was given.
        found: u32,
    },
}

impl core::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::NoSpace { needed } => {
                write!(f, "buffer too small: snapshot needs {needed} bytes")
            }
            Self::BadMagic => f.write_str("not a snapshot: bad magic"),
            Self::UnsupportedVersion { found, supported } => write!(
                f,
                "snapshot version {found} is not supported (this build reads version {supported})"
            ),
            Self::Truncated { offset } => {
                write!(f, "snapshot truncated: input ends at byte {offset}")
            }
            Self::BadLength { offset } => {
                write!(f, "inconsistent length or offset at byte {offset}")
            }
            Self::LimitExceeded { offset } => write!(f, "limit exceeded at byte {offset}"),
            Self::BadCounterSize { offset } => {
                write!(f, "counter size other than 0, 4 or 8 at byte {offset}")
            }
            Self::BadName { offset } => write!(f, "bad instance name at byte {offset}"),
            Self::Reserved { offset } => {
                write!(f, "reserved field or padding not as fixed at byte {offset}")
            }
            Self::BadIndex { offset } => {
                write!(f, "set index not increasing at byte {offset}")
            }
            Self::CountMismatch { expected, found } => {
                write!(f, "count mismatch: announced {expected}, given {found}")
            }
        }
    }
}
