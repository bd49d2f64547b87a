// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver↔DLL snapshot format: what `IOCTL_PCW_SNAPSHOT` returns, written by the
//! kernel driver into the caller's output buffer and read back by the V1 perf DLL from bytes it
//! must treat as untrusted.
//!
//! A snapshot is the state of every counterset the driver serves at one instant: a header with
//! the driver's clocks, then one *set* record per counterset, each carrying its counters' sizes,
//! its instances' identities and its *instance* records, in counterset descriptor order. An
//! instance record is byte for byte the V1 instance a perf DLL returns for it:
//! `PERF_INSTANCE_DEFINITION`, name, `PERF_COUNTER_BLOCK`.
//!
//! # Layout
//!
//! Little-endian, explicit offsets ([`field`]), every record starts 8-byte aligned (relative to
//! the start of the snapshot; the reader does not require the slice itself to be aligned).
//!
//! | record | offset | size | field |
//! |---|---|---|---|
//! | header | 0 | 4 | magic, [`SNAPSHOT_MAGIC`] (`"PCWS"`) |
//! | | 4 | 2 | format version, [`SNAPSHOT_VERSION`] |
//! | | 6 | 2 | header length, [`HEADER_LEN`] (40) |
//! | | 8 | 4 | total length of the snapshot, header included (multiple of 8) |
//! | | 12 | 4 | set count (≤ [`MAX_SETS`]) |
//! | | 16 | 8 | `perf_time`: the performance counter (`KeQueryPerformanceCounter`) at the snapshot |
//! | | 24 | 8 | `perf_freq`: its frequency in Hz |
//! | | 32 | 8 | `system_time`: UTC system time, 100 ns since 1601 (`KeQuerySystemTime`) |
//! | set | +0 | 4 | set length: from this record's start to the next set (multiple of 8) |
//! | | +4 | 2 | the counterset's index in the manifest (strictly increasing across sets) |
//! | | +6 | 2 | flags: bit 0 = multi-instance ([`SET_FLAG_MULTI`]); other bits zero |
//! | | +8 | 2 | counter count (≤ [`MAX_COUNTERS`]) |
//! | | +10 | 2 | counter block length: bytes of each instance's `PERF_COUNTER_BLOCK`, as the sizes below lay it out |
//! | | +12 | 4 | instance count (≤ [`MAX_INSTANCES`]; ≤ 1 for a single-instance set) |
//! | | +16 | 1 × counters | counter sizes, one byte per counter in descriptor order: 0, 4 or 8; zero-padded to a multiple of 8 |
//! | | then | 8 × instances | identities: per instance, its id (4 bytes) and its parent (4 bytes: zero-based position of the parent instance in the parent object, [`PARENT_NONE`] for none) |
//! | | then | | the instance records, back to back |
//! | instance | +0 | 4 | `ByteLength`: 24 + the name area |
//! | | +4 | 4 | `ParentObjectTitleIndex`: zero |
//! | | +8 | 4 | `ParentObjectInstance`: zero |
//! | | +12 | 4 | `UniqueID`: −1 (`PERF_NO_UNIQUE_ID`) |
//! | | +16 | 4 | `NameOffset`: 24 |
//! | | +20 | 4 | `NameLength`: 2 × name length in units + 2 (name length ≤ [`MAX_NAME_UNITS`]) |
//! | | +24 | `align8(NameLength)` | name area: the name, UTF-16LE, no unit is 0; then a 0 unit and zero bytes to a multiple of 8 |
//! | | then | counter block length | `PERF_COUNTER_BLOCK`: `ByteLength` (4 bytes, the counter block length), then each counter's value in its low `size` bytes at the offset the V1 layout gives it (after the 4-byte header, each counter aligned to its size, a size of 0 to 4, in order); every other byte zero |
//!
//! A set's records are therefore exactly the instances of the V1 object a perf DLL returns for
//! the counterset when its counter definitions have these sizes at those offsets (the layout
//! `pcw_core::v1::writer::assign_offsets` gives): the DLL copies them as one block
//! (`crate::v1::from_snapshot`), and a set's reply size follows from its length
//! ([`SetView::name_areas_len`]).
//!
//! The format is canonical: every reserved field and padding byte holds its fixed value, the
//! lengths hold the only values consistent with the records, and the records end exactly at the
//! total length, so two equal snapshots have equal bytes (the fuzz target re-encodes what it
//! accepts and compares).
//!
//! ## Choices
//!
//! - **Version 3: records the DLL copies.** The writer, in the driver, lays each instance out
//!   as V1 does, so the DLL's work per instance is a check while parsing and a share of one
//!   copy per set; the identities V1 does not carry (id, parent) sit in a table of their own
//!   instead of inside the records. Version 2 kept one `u64` per counter and an offset table,
//!   so the DLL re-encoded every record; version 1 also placed names differently.
//! - **Sequential access.** Instances are variable-length (names) and there is no offset table:
//!   [`SetView::instances`] walks them, [`SetView::instance`] is O(index). Sets are walked
//!   through their set length: finding a set is O(sets), never O(instances).
//! - **Counter sizes** are carried, not only the count, so a reader checks that the DLL's counter
//!   definitions lay the block out the same way before copying it, and reads values without
//!   knowing the manifest. A value stored in 4 bytes keeps its low 32 bits, as V1 shows it.
//! - **Single-instance sets** carry zero instances (the driver has no data for it yet) or exactly
//!   one, whose values are the counterset's; its id, parent and name are carried verbatim and are
//!   the DLL's to ignore.
//! - **Parent.** The parent object is a property of the manifest, known to the DLL from its tables,
//!   and is not carried here; the parent identity is the instance's zero-based position in that
//!   object or [`PARENT_NONE`]. The reader cannot know the parent object's instance count, so it
//!   does not bound this value. The records' own parent fields are zero, as the DLL returns them.
//! - **Names** have no NUL unit because V1 names are NUL-terminated (an embedded NUL would cut
//!   the name); this also makes a corrupted name length detectable when it stays in the padding.
//! - **Clocks** are carried as the driver read them and are not validated (a zero frequency is
//!   the consumer's concern).
//!
//! # Limits
//!
//! [`MAX_SETS`] sets, [`MAX_COUNTERS`] counters per set, [`MAX_INSTANCES`] instances per set,
//! [`MAX_NAME_UNITS`] UTF-16 units per name, [`MAX_TOTAL_LEN`] bytes in all (the total length is
//! a `u32`).
//!
//! # Writing
//!
//! [`SnapshotWriter`] writes into a caller's buffer without allocating, or only measures.
//! [`SnapshotWriter::instances`] adds a set's instances in one call when the counter count is
//! known where the records are made (the driver's and the benches' sets): its checks are made
//! once per set and its loop only copies each record (testing the name for NUL units as it
//! goes), checks its length and fills its identity;
//! [`SnapshotWriter::instance`] adds one instance of any counter count. When the buffer runs
//! out it keeps counting, so [`SnapshotWriter::finish`] reports the exact size of the whole
//! snapshot in [`SnapshotError::NoSpace`] (the driver returns it with `STATUS_BUFFER_TOO_SMALL`).
//! Every byte up to the returned length is written, padding included, so no earlier buffer
//! content (kernel memory) leaks through; nothing is ever written outside the buffer. When
//! space ran out but the buffer holds at least [`HEADER_LEN`] bytes, those bytes are a header
//! whose total length is the needed size ([`required_len`] reads it back).
//!
//! # Reading
//!
//! [`Snapshot::parse`] checks everything up front — magic, version, every length, count, size,
//! limit, alignment, name, fixed field and padding byte, and that the records end exactly at the
//! total length, which must be the length of the input. Iteration and accessors are then
//! infallible.
//!
//! # Panic freedom
//!
//! Nothing here panics or indexes out of bounds, whatever the bytes or the calls: every field
//! goes through `crate::bytes`, all arithmetic on untrusted values is checked, and views are
//! only handed out over validated bytes.

use crate::bytes::{self, len32};
use crate::v1::wire::PERF_NO_UNIQUE_ID;
use crate::v1::writer::place_counter;

/// The snapshot's magic number, `"PCWS"`, as stored at offset 0.
pub const SNAPSHOT_MAGIC: [u8; 4] = *b"PCWS";
/// The format version this module writes and reads.
pub const SNAPSHOT_VERSION: u16 = 3;
/// Length of the snapshot header in bytes.
pub const HEADER_LEN: usize = field::header::LEN;
/// Most sets (countersets) in one snapshot.
pub const MAX_SETS: u32 = 1024;
/// Most counters in one set.
pub const MAX_COUNTERS: u16 = 1024;
/// Most instances in one set.
pub const MAX_INSTANCES: u32 = 1 << 20;
/// Most UTF-16 units in an instance name (1024 with V1's terminating NUL).
pub const MAX_NAME_UNITS: u16 = 1023;
/// Largest snapshot: the biggest multiple of 8 that fits the `u32` total length.
pub const MAX_TOTAL_LEN: usize = 0xFFFF_FFF8;
/// Set flag: the counterset is multi-instance.
pub const SET_FLAG_MULTI: u16 = 1;
/// The parent of an instance that has none.
pub const PARENT_NONE: u32 = u32::MAX;

/// Field offsets, in bytes from the start of each record (see the module's layout table).
#[allow(
    missing_docs,
    reason = "each constant is the offset of the field of the layout table of that name"
)]
pub mod field {
    /// Snapshot header offsets.
    pub mod header {
        pub const MAGIC: usize = 0;
        pub const VERSION: usize = 4;
        pub const HEADER_LEN: usize = 6;
        pub const TOTAL_LEN: usize = 8;
        pub const SET_COUNT: usize = 12;
        pub const PERF_TIME: usize = 16;
        pub const PERF_FREQ: usize = 24;
        pub const SYSTEM_TIME: usize = 32;
        pub const LEN: usize = 40;
    }
    /// Set record offsets (the counter sizes follow the fixed part, then the identities).
    pub mod set {
        pub const SET_LEN: usize = 0;
        pub const INDEX: usize = 4;
        pub const FLAGS: usize = 6;
        pub const COUNTER_COUNT: usize = 8;
        pub const BLOCK_LEN: usize = 10;
        pub const INSTANCE_COUNT: usize = 12;
        pub const SIZES: usize = 16;
        pub const LEN: usize = 16;
    }
    /// Offsets in one entry of a set's identity table.
    pub mod identity {
        pub const ID: usize = 0;
        pub const PARENT: usize = 4;
        pub const LEN: usize = 8;
    }
    /// Counter block offsets: a V1 `PERF_COUNTER_BLOCK`, whose values follow its header.
    pub use crate::v1::wire::field::counter_block as block;
    /// Instance record offsets: a V1 `PERF_INSTANCE_DEFINITION`, whose name follows it.
    pub use crate::v1::wire::field::instance_definition as instance;
}

use field::{block as bf, header as hf, identity as idf, instance as inf, set as sf};

/// `NameOffset` of every instance record: the name follows the definition.
const NAME_OFFSET: u64 = inf::LEN as u64;
/// An instance definition's second word: `ParentObjectInstance` 0, `UniqueID` −1.
const DEF_WORD1: u64 = 0xFFFF_FFFF_0000_0000;
const _: () = assert!(
    PERF_NO_UNIQUE_ID == -1
        && inf::BYTE_LENGTH == 0
        && inf::PARENT_OBJECT_TITLE_INDEX == 4
        && inf::PARENT_OBJECT_INSTANCE == 8
        && inf::UNIQUE_ID == 12
        && inf::NAME_OFFSET == 16
        && inf::NAME_LENGTH == 20
        && inf::LEN == 24
        && bf::BYTE_LENGTH == 0
        && bf::LEN == 4
        && idf::LEN == 8
);

/// Why a snapshot could not be written or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// The buffer is too small; the whole snapshot needs `needed` bytes.
    NoSpace {
        /// Exact size of the whole snapshot.
        needed: usize,
    },
    /// The first four bytes are not [`SNAPSHOT_MAGIC`].
    BadMagic,
    /// The snapshot has a version this code does not read.
    UnsupportedVersion {
        /// The version found.
        found: u16,
        /// The version supported, [`SNAPSHOT_VERSION`].
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
    /// [`MAX_TOTAL_LEN`]).
    LimitExceeded {
        /// Offset of the field at fault.
        offset: usize,
    },
    /// The counter size at `offset` is not 0, 4 or 8.
    BadCounterSize {
        /// Offset of the size at fault.
        offset: usize,
    },
    /// The instance name at `offset` is longer than [`MAX_NAME_UNITS`] or contains a NUL unit
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

/// The clocks of a snapshot, as the driver read them at the instant of the snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotHeader {
    /// The performance counter (`KeQueryPerformanceCounter`): `PERF_DATA_BLOCK.PerfTime` and
    /// the objects' `PerfTime`.
    pub perf_time: i64,
    /// The performance counter's frequency in Hz: `PerfFreq`.
    pub perf_freq: i64,
    /// UTC system time in 100 ns units since 1601 (`KeQuerySystemTime`): `PerfTime100nSec`, and
    /// `SystemTime` once converted.
    pub system_time: i64,
}

/// Bytes of an instance's name area: the name, its NUL and zero padding to a multiple of 8.
/// For at most [`MAX_NAME_UNITS`] units, at most 2 048.
#[inline]
pub(crate) const fn name_area_len(name_units: usize) -> usize {
    (2 * name_units + 2 + 7) & !7
}

/// `n` rounded up to a multiple of 8 (for the small lengths of this format).
const fn round8(n: usize) -> usize {
    (n + 7) & !7
}

/// The counter block length of counters of `sizes` (each 0, 4 or 8); `Err` with the position
/// of the first other size.
fn block_len_of(sizes: &[u8]) -> Result<usize, usize> {
    // `place_counter`'s layout, for the three sizes only (measured with callgrind: 15 → 5
    // instructions a counter). At most 4 + 12 × 1 024 bytes for a set's sizes: no overflow.
    let mut end = bf::LEN;
    for (i, &size) in sizes.iter().enumerate() {
        end = match size {
            0 | 4 => end + usize::from(size),
            8 => round8(end) + 8,
            _ => return Err(i),
        };
    }
    Ok(round8(end))
}

/// Each counter's `(offset in the counter block, size)`, in order, for `sizes` a set's checked
/// sizes (an unchecked size takes no bytes).
fn slots(sizes: &[u8]) -> Slots<'_> {
    Slots {
        sizes: sizes.iter(),
        end: len32(bf::LEN),
    }
}

/// The iterator of [`slots`].
#[derive(Clone, Debug)]
struct Slots<'a> {
    sizes: core::slice::Iter<'a, u8>,
    end: u32,
}

impl Iterator for Slots<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        let size = *self.sizes.next()?;
        let (offset, next) =
            place_counter(self.end, u32::from(size)).unwrap_or((self.end, self.end));
        self.end = next;
        Some((offset as usize, usize::from(size)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.sizes.size_hint()
    }
}

impl ExactSizeIterator for Slots<'_> {}

/// Bytes of an instance record, or `None` past any sane size.
fn instance_len(name_units: usize, block_len: usize) -> Option<usize> {
    if name_units > usize::from(MAX_NAME_UNITS) {
        return None;
    }
    block_len.checked_add(inf::LEN + name_area_len(name_units))
}

/// Bytes of a set record's fixed part, counter sizes and identity table.
fn set_head_len(counters: usize, instance_count: usize) -> Option<usize> {
    instance_count
        .checked_mul(idf::LEN)?
        .checked_add(sf::LEN + round8(counters))
}

/// Reads the header of a snapshot, complete or not, and returns the total length it announces:
/// what the DLL reads after a `STATUS_BUFFER_TOO_SMALL` reply that carries the header (see
/// [`SnapshotWriter::finish`]).
///
/// # Errors
/// [`SnapshotError::BadMagic`], [`SnapshotError::UnsupportedVersion`],
/// [`SnapshotError::Truncated`] if `bytes` is shorter than the header, [`SnapshotError::BadLength`]
/// if the header length or total length is malformed.
pub fn required_len(bytes: &[u8]) -> Result<usize, SnapshotError> {
    let truncated = SnapshotError::Truncated {
        offset: bytes.len(),
    };
    let magic = bytes::array::<4>(bytes, hf::MAGIC).ok_or(truncated)?;
    if magic != SNAPSHOT_MAGIC {
        return Err(SnapshotError::BadMagic);
    }
    let version = bytes::array::<2>(bytes, hf::VERSION)
        .map(u16::from_le_bytes)
        .ok_or(truncated)?;
    if version != SNAPSHOT_VERSION {
        return Err(SnapshotError::UnsupportedVersion {
            found: version,
            supported: SNAPSHOT_VERSION,
        });
    }
    let header_len = bytes::array::<2>(bytes, hf::HEADER_LEN)
        .map(u16::from_le_bytes)
        .ok_or(truncated)?;
    if usize::from(header_len) != HEADER_LEN {
        return Err(SnapshotError::BadLength {
            offset: hf::HEADER_LEN,
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(truncated);
    }
    let total = bytes::u32_at(bytes, hf::TOTAL_LEN) as usize;
    if total < HEADER_LEN || !total.is_multiple_of(8) {
        return Err(SnapshotError::BadLength {
            offset: hf::TOTAL_LEN,
        });
    }
    Ok(total)
}

/// A validated snapshot over borrowed bytes. Built by [`Snapshot::parse`]; every accessor and
/// iterator is then infallible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot<'a> {
    bytes: &'a [u8],
}

impl<'a> Snapshot<'a> {
    /// Validates `bytes`, which must be exactly one snapshot (see the module docs for what is
    /// checked).
    ///
    /// # Errors
    /// The first problem found, with the offset of the field at fault; a truncated snapshot
    /// always yields [`SnapshotError::Truncated`], another version
    /// [`SnapshotError::UnsupportedVersion`].
    pub fn parse(bytes: &'a [u8]) -> Result<Self, SnapshotError> {
        let total = required_len(bytes)?;
        if bytes.len() < total {
            return Err(SnapshotError::Truncated {
                offset: bytes.len(),
            });
        }
        if bytes.len() > total {
            return Err(SnapshotError::BadLength {
                offset: hf::TOTAL_LEN,
            });
        }
        let set_count = bytes::u32_at(bytes, hf::SET_COUNT);
        if set_count > MAX_SETS {
            return Err(SnapshotError::LimitExceeded {
                offset: hf::SET_COUNT,
            });
        }
        let mut pos = HEADER_LEN;
        let mut last_index: Option<u16> = None;
        for _ in 0..set_count {
            let index = check_set(bytes, pos, last_index)?;
            last_index = Some(index);
            // check_set verified the set length keeps the set inside `bytes`.
            pos = pos.saturating_add(bytes::u32_at(bytes, pos) as usize);
        }
        if pos != total {
            return Err(SnapshotError::BadLength { offset: pos });
        }
        Ok(Self { bytes })
    }

    /// The clocks.
    pub fn header(&self) -> SnapshotHeader {
        SnapshotHeader {
            perf_time: bytes::i64_at(self.bytes, hf::PERF_TIME),
            perf_freq: bytes::i64_at(self.bytes, hf::PERF_FREQ),
            system_time: bytes::i64_at(self.bytes, hf::SYSTEM_TIME),
        }
    }

    /// Number of sets.
    pub fn set_count(&self) -> usize {
        bytes::u32_at(self.bytes, hf::SET_COUNT) as usize
    }

    /// The whole snapshot (its total length).
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The sets, in order of increasing index.
    pub fn sets(&self) -> Sets<'a> {
        Sets {
            bytes: self.bytes,
            pos: HEADER_LEN,
            remaining: self.set_count(),
        }
    }

    /// The set of manifest index `index`, if present (O(sets)).
    pub fn find_set(&self, index: u16) -> Option<SetView<'a>> {
        self.sets().find(|s| s.index() == index)
    }
}

/// Validates the set record at `pos` (8-aligned, inside `bytes`) and returns its index.
fn check_set(bytes: &[u8], pos: usize, last: Option<u16>) -> Result<u16, SnapshotError> {
    let total = bytes.len();
    let at = |off: usize| pos.saturating_add(off);
    let bad_len = SnapshotError::BadLength { offset: pos };
    if at(sf::LEN) > total {
        return Err(bad_len);
    }
    let set_len = bytes::u32_at(bytes, at(sf::SET_LEN)) as usize;
    let end = pos.checked_add(set_len).ok_or(bad_len)?;
    if set_len < sf::LEN || !set_len.is_multiple_of(8) || end > total {
        return Err(bad_len);
    }
    let index = bytes::u16_at(bytes, at(sf::INDEX));
    if last.is_some_and(|l| index <= l) {
        return Err(SnapshotError::BadIndex {
            offset: at(sf::INDEX),
        });
    }
    let flags = bytes::u16_at(bytes, at(sf::FLAGS));
    if flags & !SET_FLAG_MULTI != 0 {
        return Err(SnapshotError::Reserved {
            offset: at(sf::FLAGS),
        });
    }
    let counters = bytes::u16_at(bytes, at(sf::COUNTER_COUNT));
    if counters > MAX_COUNTERS {
        return Err(SnapshotError::LimitExceeded {
            offset: at(sf::COUNTER_COUNT),
        });
    }
    let count = bytes::u32_at(bytes, at(sf::INSTANCE_COUNT));
    let max = if flags & SET_FLAG_MULTI != 0 {
        MAX_INSTANCES
    } else {
        1
    };
    if count > max {
        return Err(SnapshotError::LimitExceeded {
            offset: at(sf::INSTANCE_COUNT),
        });
    }
    let (counters, count) = (usize::from(counters), count as usize);
    let head = set_head_len(counters, count).ok_or(bad_len)?;
    if head > set_len {
        return Err(bad_len);
    }
    // `head <= set_len`: the sizes and the identities are inside the set.
    let sizes = bytes
        .get(at(sf::SIZES)..at(sf::SIZES + counters))
        .unwrap_or(&[]);
    let block_len = block_len_of(sizes).map_err(|i| SnapshotError::BadCounterSize {
        offset: at(sf::SIZES + i),
    })?;
    if usize::from(bytes::u16_at(bytes, at(sf::BLOCK_LEN))) != block_len {
        return Err(SnapshotError::BadLength {
            offset: at(sf::BLOCK_LEN),
        });
    }
    check_zero(
        bytes,
        at(sf::SIZES + counters),
        at(sf::SIZES + round8(counters)),
    )?;
    // The identities hold any values. The records are whole words: the set and its head are
    // multiples of 8 bytes.
    let block = BlockCheck::new(sizes, block_len);
    // The loop compiled for the usual block lengths (the block's masks constant-sized).
    let records = (at(head), end, count);
    let ipos = match block.words {
        1 => walk::<1>(bytes, records, &block, sizes)?,
        2 => walk::<2>(bytes, records, &block, sizes)?,
        3 => walk::<3>(bytes, records, &block, sizes)?,
        4 => walk::<4>(bytes, records, &block, sizes)?,
        _ => walk::<0>(bytes, records, &block, sizes)?,
    };
    if ipos != end {
        return Err(bad_len);
    }
    Ok(index)
}

/// Checks the `count` instance records from `start` to `end` whose counter blocks `block`
/// describes (`W` words; 0 for a length checked field by field); returns where they end.
#[inline]
fn walk<const W: usize>(
    bytes: &[u8],
    (start, end, count): (usize, usize, usize),
    block: &BlockCheck,
    sizes: &[u8],
) -> Result<usize, SnapshotError> {
    // The records are whole words, ending at `end`: the set and its head are multiples of 8
    // bytes. So a record's position is `end` less the words left.
    let mut rest = bytes.get(start..end).unwrap_or(&[]).as_chunks::<8>().0;
    let mut left = count;
    let zero = block.zero.first_chunk::<W>().copied();
    while left > 0 {
        // The usual case, in one pass over each record, for as many records as it accepts;
        // a record it does not accept is examined field by field, for the exact error.
        if let Some(zero) = &zero
            && W > 0
        {
            while let Some(after) = valid_record::<W>(rest, zero, block.byte_length) {
                rest = after;
                left -= 1;
                if left == 0 {
                    return Ok(end - 8 * rest.len());
                }
            }
        }
        let next = check_record(bytes, (end - 8 * rest.len(), end), sizes, block)?;
        rest = bytes.get(next..end).unwrap_or(&[]).as_chunks::<8>().0;
        left -= 1;
    }
    Ok(end - 8 * rest.len())
}

/// Most counter-block words [`BlockCheck`] holds masks for.
const MASKED_WORDS: usize = 4;

/// A set's counter block as masks over its words: word 0's low half is `ByteLength`, and the
/// bits set in `zero` must be zero (the bytes no counter covers).
struct BlockCheck {
    words: usize,
    byte_length: u64,
    zero: [u64; MASKED_WORDS],
    /// For a block of 5 to 64 words: [`gap_halves`], so that [`check_record`]'s work per
    /// record follows the block's bytes rather than its counter count (counters of size 0 take
    /// no bytes).
    gaps: Option<[u64; 2]>,
}

impl BlockCheck {
    /// The masks of a block of `block_len` bytes holding counters of `sizes`, each 0, 4 or 8
    /// (checked by `block_len_of`), laid out as `slots` lays them out.
    fn new(sizes: &[u8], block_len: usize) -> Self {
        let mut zero = [u64::MAX; MASKED_WORDS];
        if let Some(first) = zero.first_mut() {
            *first = 0xFFFF_FFFF_0000_0000;
        }
        let words = block_len / 8;
        // `slots`' layout, for the three sizes only (measured with callgrind: 30 → 10
        // instructions a counter).
        let mut end = bf::LEN;
        for &size in sizes {
            let (offset, covered) = match size {
                8 => (round8(end), u64::MAX),
                4 => (end, 0xFFFF_FFFF << (8 * (end % 8))),
                _ => (end, 0),
            };
            end = offset + usize::from(size);
            if let Some(word) = zero.get_mut(offset / 8) {
                *word &= !covered;
            }
        }
        Self {
            words,
            byte_length: block_len as u64,
            zero,
            // Needed for every record only when no masks apply; otherwise worked out by
            // `check_record` when it reports an error.
            gaps: (words > MASKED_WORDS && words <= 64).then(|| gap_halves(sizes, words)),
        }
    }
}

/// The 4-byte halves of a counter block of `words` words (at most 64) that no counter of
/// `sizes` covers, one bit each; half 0, `ByteLength`, is not one.
fn gap_halves(sizes: &[u8], words: usize) -> [u64; 2] {
    let mut gaps = [0u64; 2];
    for (i, g) in gaps.iter_mut().enumerate() {
        let halves = (2 * words).saturating_sub(64 * i).min(64);
        *g = if halves == 64 {
            u64::MAX
        } else {
            (1u64 << halves) - 1
        };
    }
    if let Some(first) = gaps.first_mut() {
        *first &= !1;
    }
    for (offset, size) in slots(sizes) {
        // The counter's halves (offsets are multiples of 4).
        for half in (offset / 4)..(offset + size) / 4 {
            if let Some(g) = gaps.get_mut(half / 64) {
                *g &= !(1u64 << (half % 64));
            }
        }
    }
    gaps
}

/// Whether `records` (whole words) starts with a valid instance record whose counter block is
/// `W` words, `zero` the bits of each that must be zero and `byte_length` its length; the words
/// after it if so. Accepts only what [`check_record`] accepts (word by word: the definition,
/// the name area's whole words of units, its last word of units, NUL and padding, then the
/// counter block); `None` sends the record to [`check_record`].
#[allow(
    clippy::inline_always,
    reason = "the per-record test of the parse loop; measured: a call per record costs more"
)]
#[inline(always)]
fn valid_record<'r, const W: usize>(
    records: &'r [[u8; 8]],
    zero: &[u64; W],
    byte_length: u64,
) -> Option<&'r [[u8; 8]]> {
    let ([w0, w1, w2], tail) = records.split_first_chunk::<3>()?;
    let w2 = u64::from_le_bytes(*w2);
    // `NameOffset` 24 and an even `NameLength` (its bit 0 is the word's bit 32) from 2 to
    // 2 × MAX_NAME_UNITS + 2 (below 2 wraps to a large value).
    let name_length = (w2 >> 32) as usize;
    if w2 & 0x1_FFFF_FFFF != NAME_OFFSET
        || name_length.wrapping_sub(2) > 2 * usize::from(MAX_NAME_UNITS)
    {
        return None;
    }
    // Words of the name area (at least 1): its units, the NUL and the padding.
    let area = name_length.div_ceil(8);
    if u64::from_le_bytes(*w0) != (inf::LEN + 8 * area) as u64
        || u64::from_le_bytes(*w1) != DEF_WORD1
    {
        return None;
    }
    let units = name_length / 2 - 1;
    // The name area's words, then the counter block's.
    let name = tail.get(..area)?;
    let (block, after) = tail.get(area..)?.split_first_chunk::<W>()?;
    // Non-zero if a unit is 0 or a byte after the units is not.
    let mut stray = match tail.first_chunk::<4>() {
        // A short name (at most 15 units: up to 4 words) with 32 bytes to read: tested 16
        // bytes at a time.
        Some(words) if area <= 4 => short_name_stray(words, area, units),
        _ => name_stray(name, units),
    };
    // The counter block: `ByteLength`, and nothing where no counter is.
    for (w, z) in block.iter().zip(zero) {
        stray |= u64::from_le_bytes(*w) & z;
    }
    let first = block
        .first()
        .map_or(0, |w| u64::from_le_bytes(*w) & 0xFFFF_FFFF);
    (stray == 0 && first == byte_length).then_some(after)
}

/// Non-zero unless the name area `name` (whole words) holds `units` units (`units < 4 ×
/// name.len()`) none of which is 0, then only zero units (the NUL and the padding). Word by
/// word (`zero_lanes`, its mask applied once at the end).
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "part of the per-record test (see `valid_record`)"
)]
fn name_stray(name: &[[u8; 8]], units: usize) -> u64 {
    let Some((last, full)) = name.split_last() else {
        return 1;
    };
    let mut zero_units = 0;
    for w in full {
        let w = u64::from_le_bytes(*w);
        zero_units |= w.wrapping_sub(bytes::LANE_ONES) & !w;
    }
    // The last word: its units (4 per whole word before it), then zeroes.
    let last = u64::from_le_bytes(*last);
    let mask = (1u64 << (16 * (units % 4))) - 1;
    (zero_units & bytes::LANE_HIGHS) | bytes::zero_lanes(last | !mask) | (last & !mask)
}

/// [`name_stray`] for a name area of `area` words (1 to 4) at the start of `words`, 16 bytes at
/// a time where the target has a 16-byte compare (reading the 32 bytes of `words`, whatever
/// follows the area), else word by word.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "part of the per-record test (see `valid_record`)"
)]
fn short_name_stray(words: &[[u8; 8]; 4], area: usize, units: usize) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_setzero_si128,
        };
        #[allow(
            clippy::cast_ptr_alignment,
            reason = "read with unaligned loads (`_mm_loadu_si128`), which take any address"
        )]
        let at = words.as_ptr().cast::<__m128i>();
        // SAFETY: `words` is 32 readable bytes: two unaligned 16-byte loads at 0 and 16.
        let low = unsafe { _mm_loadu_si128(at) };
        // SAFETY: as above.
        let high = unsafe { _mm_loadu_si128(at.wrapping_add(1)) };
        // SAFETY: SSE2 is part of every x86-64 target.
        let zero = unsafe { _mm_setzero_si128() };
        // SAFETY: SSE2 is part of every x86-64 target.
        let low = unsafe { _mm_cmpeq_epi16(low, zero) };
        // SAFETY: SSE2 is part of every x86-64 target.
        let high = unsafe { _mm_cmpeq_epi16(high, zero) };
        // Two bits per unit, set for a zero unit: units 0 to 7, then 8 to 15.
        // SAFETY: SSE2 is part of every x86-64 target.
        let low = unsafe { _mm_movemask_epi8(low) };
        // SAFETY: SSE2 is part of every x86-64 target.
        let high = unsafe { _mm_movemask_epi8(high) };
        #[allow(clippy::cast_sign_loss, reason = "a 16-bit movemask, never negative")]
        let zeros = low as u32 | (high as u32) << 16;
        // The area's bits must be set exactly past the units.
        let in_area = u32::MAX >> (32 - 8 * area);
        let past_units = in_area & (u32::MAX << (2 * units));
        u64::from((zeros & in_area) ^ past_units)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        name_stray(words.get(..area).unwrap_or_default(), units)
    }
}

/// Validates the instance record at `pos` (8-aligned) that must end by `end`, whose counter
/// block has counters of `sizes` as `block` describes; returns its end.
fn check_record(
    bytes: &[u8],
    (pos, end): (usize, usize),
    sizes: &[u8],
    block: &BlockCheck,
) -> Result<usize, SnapshotError> {
    let block_len = 8 * block.words;
    let at = |off: usize| pos.saturating_add(off);
    let bad_len = SnapshotError::BadLength { offset: pos };
    if at(inf::LEN) > end {
        return Err(bad_len);
    }
    check_zero(
        bytes,
        at(inf::PARENT_OBJECT_TITLE_INDEX),
        at(inf::UNIQUE_ID),
    )?;
    if bytes::i32_at(bytes, at(inf::UNIQUE_ID)) != PERF_NO_UNIQUE_ID {
        return Err(SnapshotError::Reserved {
            offset: at(inf::UNIQUE_ID),
        });
    }
    if u64::from(bytes::u32_at(bytes, at(inf::NAME_OFFSET))) != NAME_OFFSET {
        return Err(SnapshotError::BadLength {
            offset: at(inf::NAME_OFFSET),
        });
    }
    let name_length = bytes::u32_at(bytes, at(inf::NAME_LENGTH)) as usize;
    if !name_length.is_multiple_of(2)
        || name_length < 2
        || name_length > 2 * usize::from(MAX_NAME_UNITS) + 2
    {
        return Err(SnapshotError::BadName {
            offset: at(inf::NAME_LENGTH),
        });
    }
    let units = name_length / 2 - 1;
    let area = name_area_len(units);
    if bytes::u32_at(bytes, at(inf::BYTE_LENGTH)) as usize != inf::LEN + area {
        return Err(bad_len);
    }
    let len = instance_len(units, block_len).ok_or(bad_len)?;
    let next = pos.checked_add(len).ok_or(bad_len)?;
    if next > end {
        return Err(bad_len);
    }
    let name_at = at(inf::LEN);
    let name_end = name_at.saturating_add(2 * units);
    let name = bytes.get(name_at..name_end).unwrap_or(&[]);
    if bytes::has_zero_unit_le(name)
        && let Some(u) = name.as_chunks::<2>().0.iter().position(|u| *u == [0, 0])
    {
        return Err(SnapshotError::BadName {
            offset: name_at.saturating_add(2 * u),
        });
    }
    // The NUL and the padding.
    let block_at = name_at.saturating_add(area);
    check_zero(bytes, name_end, block_at)?;
    if bytes::u32_at(bytes, block_at) as usize != block_len {
        return Err(SnapshotError::BadLength { offset: block_at });
    }
    // The bytes between the counters, and after the last: the halves no counter covers (in
    // order, so the first byte at fault is reported), or, for a block of more than 64 words,
    // counter by counter (at most 1 024 counters for more than 512 bytes of block).
    let gaps = block
        .gaps
        .or_else(|| (block.words <= 64).then(|| gap_halves(sizes, block.words)));
    if let Some(gaps) = gaps {
        for (i, mut bits) in gaps.into_iter().enumerate() {
            while bits != 0 {
                let half = 64 * i + bits.trailing_zeros() as usize;
                let start = block_at.saturating_add(4 * half);
                check_zero(bytes, start, start.saturating_add(4))?;
                bits &= bits - 1;
            }
        }
    } else {
        let mut covered = block_at.saturating_add(bf::LEN);
        for (offset, size) in slots(sizes) {
            let start = block_at.saturating_add(offset);
            check_zero(bytes, covered, start)?;
            covered = start.saturating_add(size);
        }
        check_zero(bytes, covered, next)?;
    }
    Ok(next)
}

/// Checks `bytes[from..to]` is all zero.
fn check_zero(bytes: &[u8], from: usize, to: usize) -> Result<(), SnapshotError> {
    let pad = bytes.get(from..to).unwrap_or(&[]);
    match pad.iter().position(|b| *b != 0) {
        Some(i) => Err(SnapshotError::Reserved {
            offset: from.saturating_add(i),
        }),
        None => Ok(()),
    }
}

/// The sets of a [`Snapshot`].
#[derive(Clone, Debug)]
pub struct Sets<'a> {
    bytes: &'a [u8],
    pos: usize,
    remaining: usize,
}

impl<'a> Iterator for Sets<'a> {
    type Item = SetView<'a>;

    fn next(&mut self) -> Option<SetView<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let set = SetView::at(self.bytes, self.pos);
        self.pos = self.pos.saturating_add(set.byte_len());
        Some(set)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Sets<'_> {}

/// One validated set (counterset) of a [`Snapshot`]. Its fixed fields are read once, when the
/// view is made, so its accessors are plain field reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetView<'a> {
    bytes: &'a [u8],
    pos: usize,
    len: u32,
    index: u16,
    flags: u16,
    counters: u16,
    block_len: u16,
    count: u32,
}

impl<'a> SetView<'a> {
    /// The set record at `pos` of validated `bytes`.
    #[inline]
    fn at(bytes: &'a [u8], pos: usize) -> Self {
        let fixed = bytes
            .get(pos..)
            .and_then(|b| b.first_chunk::<{ sf::LEN }>())
            .copied()
            .unwrap_or([0; sf::LEN]);
        let u16_at = |off: usize| bytes::u16_at(&fixed, off);
        Self {
            bytes,
            pos,
            len: bytes::u32_at(&fixed, sf::SET_LEN),
            index: u16_at(sf::INDEX),
            flags: u16_at(sf::FLAGS),
            counters: u16_at(sf::COUNTER_COUNT),
            block_len: u16_at(sf::BLOCK_LEN),
            count: bytes::u32_at(&fixed, sf::INSTANCE_COUNT),
        }
    }

    /// Offset of this record in the snapshot.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes of this record, its instances included.
    pub const fn byte_len(&self) -> usize {
        self.len as usize
    }

    /// The counterset's index in the manifest.
    pub const fn index(&self) -> u16 {
        self.index
    }

    /// Whether the counterset is multi-instance.
    pub const fn multi(&self) -> bool {
        self.flags & SET_FLAG_MULTI != 0
    }

    /// Number of counters, hence of values per instance.
    pub const fn counter_count(&self) -> u16 {
        self.counters
    }

    /// The counters' sizes in bytes (0, 4 or 8), in descriptor order.
    pub fn counter_sizes(&self) -> &'a [u8] {
        let start = self.pos.saturating_add(sf::SIZES);
        let end = start.saturating_add(usize::from(self.counter_count()));
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// Each counter's `(CounterOffset, CounterSize)` in the records' counter blocks, in
    /// descriptor order: what a V1 counter definition must say for the DLL to copy the records.
    pub fn counter_layout(&self) -> impl ExactSizeIterator<Item = (usize, usize)> + use<'a> {
        slots(self.counter_sizes())
    }

    /// Bytes of each instance's counter block (`PERF_COUNTER_BLOCK` and the values).
    pub const fn block_len(&self) -> usize {
        self.block_len as usize
    }

    /// Number of instances (0 or 1 for a single-instance set).
    pub const fn instance_count(&self) -> usize {
        self.count as usize
    }

    /// Offset of the identity table in the snapshot.
    fn identities_at(&self) -> usize {
        self.pos
            .saturating_add(sf::SIZES)
            .saturating_add(round8(usize::from(self.counter_count())))
    }

    /// Offset of the first instance record in the snapshot.
    fn records_at(&self) -> usize {
        self.identities_at()
            .saturating_add(idf::LEN.saturating_mul(self.instance_count()))
    }

    /// Instance `i`, or `None` if `i >= instance_count()`: O(`i`), the records being walked.
    pub fn instance(&self, i: usize) -> Option<InstanceView<'a>> {
        self.instances().nth(i)
    }

    /// The instances, in order.
    pub fn instances(&self) -> Instances<'a> {
        Instances {
            bytes: self.bytes,
            pos: self.records_at(),
            ident: self.identities_at(),
            sizes: self.counter_sizes(),
            block_len: self.block_len(),
            remaining: self.instance_count(),
        }
    }

    /// The instance records, back to back, from the first to the end of the set: exactly the
    /// instance definitions, names and counter blocks of the V1 object of this set, for counter
    /// definitions laid out as [`Self::counter_layout`] says.
    pub fn records(&self) -> &'a [u8] {
        let end = self.pos.saturating_add(self.byte_len());
        self.bytes.get(self.records_at()..end).unwrap_or(&[])
    }

    /// Bytes of all the instances' name areas together (see [`InstanceView::name_area`]),
    /// worked out from the set's length without reading the instances: what a V1 reply's
    /// instance names take, padding included.
    pub fn name_areas_len(&self) -> usize {
        let fixed = inf::LEN + self.block_len();
        // `parse` checked that the set length is exactly its head and its records.
        self.records()
            .len()
            .saturating_sub(self.instance_count().saturating_mul(fixed))
    }
}

/// The instances of a [`SetView`], walked record by record.
#[derive(Clone, Debug)]
pub struct Instances<'a> {
    bytes: &'a [u8],
    pos: usize,
    ident: usize,
    sizes: &'a [u8],
    block_len: usize,
    remaining: usize,
}

impl<'a> Iterator for Instances<'a> {
    type Item = InstanceView<'a>;

    #[inline]
    fn next(&mut self) -> Option<InstanceView<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let instance = InstanceView {
            bytes: self.bytes,
            pos: self.pos,
            ident: self.ident,
            sizes: self.sizes,
            block_len: self.block_len,
        };
        self.pos = self.pos.saturating_add(instance.byte_len());
        self.ident = self.ident.saturating_add(idf::LEN);
        Some(instance)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Instances<'_> {}

/// One validated instance of a [`SetView`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceView<'a> {
    bytes: &'a [u8],
    pos: usize,
    ident: usize,
    sizes: &'a [u8],
    block_len: usize,
}

impl<'a> InstanceView<'a> {
    /// Offset of this record in the snapshot.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    /// The instance id.
    pub fn id(&self) -> u32 {
        bytes::u32_at(self.bytes, self.ident.saturating_add(idf::ID))
    }

    /// The raw parent identity: position in the parent object, or [`PARENT_NONE`].
    pub fn parent(&self) -> u32 {
        bytes::u32_at(self.bytes, self.ident.saturating_add(idf::PARENT))
    }

    /// The parent's position, `None` for [`PARENT_NONE`].
    pub fn parent_position(&self) -> Option<u32> {
        Some(self.parent()).filter(|p| *p != PARENT_NONE)
    }

    /// Name length in UTF-16 units.
    pub fn name_len(&self) -> usize {
        (bytes::u32_at(self.bytes, self.pos.saturating_add(inf::NAME_LENGTH)) as usize / 2)
            .saturating_sub(1)
    }

    /// Offset of the name area in the snapshot.
    fn name_at(&self) -> usize {
        self.pos.saturating_add(inf::LEN)
    }

    /// The name as UTF-16LE bytes (`2 × name_len()`, no terminator).
    pub fn name_bytes(&self) -> &'a [u8] {
        let start = self.name_at();
        let end = start.saturating_add(2 * self.name_len());
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// The name area: the name as UTF-16LE, a 0 unit, then zero bytes to a multiple of 8 —
    /// the bytes of a V1 instance definition's name, padding included.
    pub fn name_area(&self) -> &'a [u8] {
        let start = self.name_at();
        let end = start.saturating_add(name_area_len(self.name_len()));
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// Bytes of the whole record.
    pub fn byte_len(&self) -> usize {
        instance_len(self.name_len(), self.block_len).unwrap_or(0)
    }

    /// The whole record: the V1 instance definition, its name and its counter block.
    pub fn record(&self) -> &'a [u8] {
        self.bytes
            .get(self.pos..self.pos.saturating_add(self.byte_len()))
            .unwrap_or(&[])
    }

    /// The name for the V1 writer: checked already (at most [`MAX_NAME_UNITS`] units, no NUL)
    /// when the snapshot was parsed, so the writer does not scan it again.
    pub fn checked_name(&self) -> crate::v1::writer::CheckedName<'a> {
        const _: () =
            assert!(MAX_NAME_UNITS as usize == crate::v1::writer::MAX_INSTANCE_NAME_UNITS);
        crate::v1::writer::CheckedName::from_checked_le_bytes(self.name_bytes())
    }

    /// The name area for the V1 writer, which copies it as whole words: checked already (at
    /// most [`MAX_NAME_UNITS`] units, no NUL, then a NUL and zero padding) when the snapshot was
    /// parsed.
    #[inline]
    pub fn padded_name(&self) -> crate::v1::writer::PaddedName<'a> {
        crate::v1::writer::PaddedName::from_checked(
            self.name_area().as_chunks::<8>().0,
            self.name_len(),
        )
    }

    /// The name's UTF-16 units (none is 0).
    pub fn name_utf16(&self) -> impl ExactSizeIterator<Item = u16> + use<'a> {
        self.name_bytes()
            .as_chunks::<2>()
            .0
            .iter()
            .map(|c| u16::from_le_bytes(*c))
    }

    /// The counter block: `PERF_COUNTER_BLOCK` and the values, as a V1 reply holds them.
    pub fn block(&self) -> &'a [u8] {
        let start = self
            .name_at()
            .saturating_add(name_area_len(self.name_len()));
        self.bytes
            .get(start..start.saturating_add(self.block_len))
            .unwrap_or(&[])
    }

    /// The raw values, one per counter in counterset descriptor order (a 4-byte counter's
    /// zero-extended, a 0-byte counter's 0).
    pub fn values(&self) -> impl ExactSizeIterator<Item = u64> + use<'a> {
        let block = self.block();
        slots(self.sizes).map(move |(offset, size)| {
            let mut value = [0u8; 8];
            if let (Some(dst), Some(src)) = (
                value.get_mut(..size),
                block.get(offset..offset.saturating_add(size)),
            ) {
                dst.copy_from_slice(src);
            }
            u64::from_le_bytes(value)
        })
    }

    /// The raw value of counter `i`, `None` past the set's counter count.
    pub fn value(&self, i: usize) -> Option<u64> {
        self.values().nth(i)
    }
}

/// The set being written.
#[derive(Clone, Copy, Debug)]
struct OpenSet {
    start: usize,
    /// Offset of the next instance's entry in the identity table.
    ident: usize,
    written: bool,
    counters: u16,
    block_len: usize,
    count: u32,
    added: u32,
}

/// The first three words of an instance definition for a name of `units` units (at most
/// [`MAX_NAME_UNITS`]): `ByteLength` and the zero `ParentObjectTitleIndex`; the zero
/// `ParentObjectInstance` and `UniqueID` −1; `NameOffset` and `NameLength`.
#[inline]
const fn definition(units: usize) -> [[u8; 8]; 3] {
    let area = name_area_len(units);
    [
        ((inf::LEN + area) as u64).to_le_bytes(),
        DEF_WORD1.to_le_bytes(),
        (NAME_OFFSET | ((2 * units + 2) as u64) << 32).to_le_bytes(),
    ]
}

/// Copies `name` into its name area `area` (exactly `units / 4 + 1` words: four units per word;
/// the last word holds the last 0 to 3 units, the NUL and the padding). Returns whether the
/// name holds a 0 unit (found while copying: the caller refuses the instance).
///
/// The last word is zeroed first; then a name of 4 to 16 units is copied as its first and its
/// last 8 (or 4) units, overlapping in the middle, so a usual name takes a few wide loads and
/// stores whatever its length; a longer one four units at a time, a shorter one unit by unit.
#[allow(
    clippy::inline_always,
    reason = "part of the per-record copy; measured with callgrind: a call per record costs \
              more than the copy of a short name"
)]
#[inline(always)]
fn put_name(area: &mut [[u8; 8]], name: &[u16]) -> bool {
    let n = name.len();
    if let Some(last) = area.last_mut() {
        *last = [0; 8];
    }
    let flat = area.as_flattened_mut();
    match n {
        8..=16 => match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
            (Some(head), Some(tail)) => {
                let mut zero = copy_octet(flat.first_chunk_mut(), head);
                zero |= copy_octet(
                    flat.get_mut(2 * n - 16..).and_then(|d| d.first_chunk_mut()),
                    tail,
                );
                zero
            }
            _ => true,
        },
        4..=7 => match (name.first_chunk::<4>(), name.last_chunk::<4>()) {
            (Some(head), Some(tail)) => {
                let (head, tail) = (bytes::pack4(*head), bytes::pack4(*tail));
                if let Some(d) = flat.first_chunk_mut::<8>() {
                    *d = head.to_le_bytes();
                }
                if let Some(d) = flat.get_mut(2 * n - 8..).and_then(|d| d.first_chunk_mut()) {
                    *d = tail.to_le_bytes();
                }
                bytes::zero_lanes(head) | bytes::zero_lanes(tail) != 0
            }
            _ => true,
        },
        _ => {
            // Four units at a time, then the last 0 to 3 (their word zeroed above).
            let (quads, tail) = name.as_chunks::<4>();
            let Some((last, words)) = area.split_last_mut() else {
                return false;
            };
            let mut zero_lanes = 0;
            for (d, quad) in words.iter_mut().zip(quads) {
                let w = bytes::pack4(*quad);
                zero_lanes |= w.wrapping_sub(bytes::LANE_ONES) & !w;
                *d = w.to_le_bytes();
            }
            let mut zero = zero_lanes & bytes::LANE_HIGHS != 0;
            let mut w = 0u64;
            for (k, unit) in tail.iter().enumerate() {
                zero |= *unit == 0;
                w |= u64::from(*unit) << (16 * k);
            }
            *last = w.to_le_bytes();
            zero
        }
    }
}

/// Copies eight units into `dst` (when given); whether one of them is 0. Sixteen bytes at a
/// time where the target has 16-byte loads and compares.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "part of the per-record copy (see `put_name`)"
)]
#[allow(
    clippy::cast_ptr_alignment,
    reason = "unaligned loads and stores (`_mm_loadu_si128`, `_mm_storeu_si128`) take any address"
)]
fn copy_octet(dst: Option<&mut [u8; 16]>, units: &[u16; 8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_setzero_si128,
            _mm_storeu_si128,
        };
        // SAFETY: `units` is 16 readable bytes (an unaligned load).
        let v = unsafe { _mm_loadu_si128(units.as_ptr().cast::<__m128i>()) };
        if let Some(dst) = dst {
            // SAFETY: `dst` is 16 writable bytes (an unaligned store).
            unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast::<__m128i>(), v) };
        }
        // SAFETY: SSE2 is part of every x86-64 target.
        let zero = unsafe { _mm_setzero_si128() };
        // SAFETY: SSE2 is part of every x86-64 target.
        let z = unsafe { _mm_cmpeq_epi16(v, zero) };
        // SAFETY: SSE2 is part of every x86-64 target.
        unsafe { _mm_movemask_epi8(z) != 0 }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (a, b) = units.split_at(4);
        let mut zero = 0;
        let mut out = [0u8; 16];
        for (d, q) in out.chunks_exact_mut(8).zip([a, b]) {
            let w = q.iter().rev().fold(0u64, |w, u| w << 16 | u64::from(*u));
            zero |= bytes::zero_lanes(w);
            d.copy_from_slice(&w.to_le_bytes());
        }
        if let Some(dst) = dst {
            *dst = out;
        }
        zero != 0
    }
}

/// Writes a counter block into `block` (exactly its words): `ByteLength`, each value's low
/// bytes where `slots` puts it, zeros elsewhere.
#[inline]
fn put_block(block: &mut [[u8; 8]], slots: impl Iterator<Item = (usize, usize)>, values: &[u64]) {
    let byte_length = len32(8 * block.len());
    block.fill([0; 8]);
    let flat = block.as_flattened_mut();
    if let Some(dst) = flat.first_chunk_mut::<4>() {
        *dst = byte_length.to_le_bytes();
    }
    for ((offset, size), value) in slots.zip(values) {
        let bytes = value.to_le_bytes();
        if let (Some(dst), Some(src)) = (
            flat.get_mut(offset..offset.saturating_add(size)),
            bytes.get(..size),
        ) {
            dst.copy_from_slice(src);
        }
    }
}

/// Writes an instance record into `record` (exactly its words): the definition, the name area
/// (`name.len() / 4 + 1` words), then the counter block in the words after it, by
/// `write_block`. Every byte is written. Returns whether the name holds a 0 unit.
#[inline]
fn write_record(
    record: &mut [[u8; 8]],
    name: &[u16],
    write_block: impl FnOnce(&mut [[u8; 8]]),
) -> bool {
    let Some((def, rest)) = record.split_first_chunk_mut::<3>() else {
        return false;
    };
    *def = definition(name.len());
    let (area, block) = rest.split_at_mut((name.len() / 4 + 1).min(rest.len()));
    write_block(block);
    put_name(area, name)
}

/// The sizes of a set's counters (0, 4 or 8 bytes each, in descriptor order) as a type: what
/// [`SnapshotWriter::instances`] compiles its counter-block stores for. Implemented by the
/// driver for each counterset, from its descriptors.
pub trait CounterSizes<const N: usize> {
    /// The sizes, as given to [`SnapshotWriter::begin_set`].
    const SIZES: [u8; N];
}

/// One instance for [`SnapshotWriter::instances`]: its id, its parent ([`PARENT_NONE`] for
/// none), its name (at most [`MAX_NAME_UNITS`] units, none 0) and its `N` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'n, const N: usize> {
    /// The instance id.
    pub id: u32,
    /// Zero-based position of the parent instance in the parent object, or [`PARENT_NONE`].
    pub parent: u32,
    /// The name, UTF-16, no terminator.
    pub name: &'n [u16],
    /// One raw value per counter, in counterset descriptor order.
    pub values: [u64; N],
}

/// An identity table entry: the id, then the parent.
#[inline]
fn identity(id: u32, parent: u32) -> [u8; 8] {
    (u64::from(id) | u64::from(parent) << 32).to_le_bytes()
}

/// Where [`SnapshotWriter::batch`] stopped: the position after the last record written, how
/// many it wrote, the record it refused (id, parent, name), and whether for a NUL unit.
struct BatchEnd<'n> {
    pos: usize,
    filled: u32,
    refused: Option<(u32, u32, &'n [u16])>,
    nul: bool,
}

/// A counter block for records of `N` values of known sizes, worked out at compile time:
/// `ByteLength`, its words, and per value its word, the shift into it and the mask of its size
/// (0 for a counter of no bytes), as `slots` places it.
#[derive(Clone, Copy, Debug)]
struct BlockPlan<const N: usize> {
    byte_length: u32,
    words: usize,
    at: [(usize, u32, u64); N],
}

impl<const N: usize> BlockPlan<N> {
    /// The plan of counters of `sizes` (each 0, 4 or 8: another size takes no bytes, and the
    /// writer never uses the plan of such sizes, which no set can have).
    #[allow(
        clippy::indexing_slicing,
        reason = "below N, checked; evaluated at compile time only"
    )]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the 4-byte block header; offsets within a block of at most 8 200 bytes"
    )]
    const fn of(sizes: &[u8; N]) -> Self {
        let mut at = [(0, 0, 0); N];
        let mut end = bf::LEN as u32;
        let mut rest: &[u8] = sizes;
        let mut i = 0;
        while let [size, tail @ ..] = rest {
            let (offset, next) = match place_counter(end, *size as u32) {
                Some(placed) => placed,
                None => (end, end),
            };
            let mask = match *size {
                8 => u64::MAX,
                4 => 0xFFFF_FFFF,
                _ => 0,
            };
            if i < N {
                at[i] = ((offset / 8) as usize, 8 * (offset % 8), mask);
            }
            end = next;
            rest = tail;
            i += 1;
        }
        let block_len = round8(end as usize);
        Self {
            byte_length: block_len as u32,
            words: block_len / 8,
            at,
        }
    }

    /// The block of `W` words: zeros and `ByteLength`, then each value's bytes, all plain
    /// stores at offsets that are constants for a constant plan (building the words in a local
    /// array first sent the block through the stack, whose wider reloads stalled).
    #[inline]
    fn write<const W: usize>(&self, block: &mut [[u8; 8]], values: &[u64; N]) {
        let Some(block) = block.first_chunk_mut::<W>() else {
            return;
        };
        *block = [[0; 8]; W];
        let flat = block.as_flattened_mut();
        if let Some(dst) = flat.first_chunk_mut::<4>() {
            *dst = self.byte_length.to_le_bytes();
        }
        for ((word, shift, mask), value) in self.at.iter().zip(values) {
            let at = 8 * word + (*shift as usize) / 8;
            let Some(dst) = flat.get_mut(at..) else {
                continue;
            };
            match *mask {
                u64::MAX => {
                    if let Some(dst) = dst.first_chunk_mut::<8>() {
                        *dst = value.to_le_bytes();
                    }
                }
                0xFFFF_FFFF => {
                    if let Some(dst) = dst.first_chunk_mut::<4>() {
                        #[allow(
                            clippy::cast_possible_truncation,
                            reason = "a 4-byte counter keeps the low half"
                        )]
                        let low = *value as u32;
                        *dst = low.to_le_bytes();
                    }
                }
                _ => {}
            }
        }
    }
}

/// Writes a snapshot into a caller's buffer, or measures it, without allocating or panicking.
///
/// Call [`begin_set`](Self::begin_set) for each counterset in increasing index order, then
/// [`instance`](Self::instance) exactly as many times as announced, then
/// [`finish`](Self::finish). Running out of space is not reported until `finish` (which then
/// gives the exact size of the whole snapshot); misuse is reported at once and again by every
/// later call.
#[derive(Debug)]
pub struct SnapshotWriter<'a> {
    buf: &'a mut [u8],
    measuring: bool,
    header: SnapshotHeader,
    /// Bytes of snapshot so far (written or not).
    pos: usize,
    /// Some record did not fit: nothing more is written.
    overflow: bool,
    error: Option<SnapshotError>,
    set_count: u32,
    last_index: Option<u16>,
    set: Option<OpenSet>,
}

impl<'a> SnapshotWriter<'a> {
    /// A writer into `buf` (any length, any alignment).
    pub fn new(buf: &'a mut [u8], header: SnapshotHeader) -> Self {
        let overflow = buf.len() < HEADER_LEN;
        Self {
            buf,
            measuring: false,
            header,
            pos: HEADER_LEN,
            overflow,
            error: None,
            set_count: 0,
            last_index: None,
            set: None,
        }
    }

    /// A writer that only measures: [`finish`](Self::finish) returns the size the snapshot needs.
    pub fn measuring(header: SnapshotHeader) -> SnapshotWriter<'static> {
        SnapshotWriter {
            measuring: true,
            ..SnapshotWriter::new(&mut [], header)
        }
    }

    /// Bytes of snapshot so far (written or only counted).
    pub const fn len(&self) -> usize {
        self.pos
    }

    /// Whether nothing but the header has been added.
    pub const fn is_empty(&self) -> bool {
        self.pos == HEADER_LEN
    }

    /// Starts the set of counterset `index`, which must exceed the previous set's, with one
    /// counter per entry of `sizes` (each counter's size in bytes in the V1 counter block: 0, 4
    /// or 8, in descriptor order) and `instance_count` instances to follow (at most 1 for a
    /// single-instance set).
    ///
    /// # Errors
    /// [`SnapshotError::CountMismatch`] if the previous set is incomplete,
    /// [`SnapshotError::BadIndex`], [`SnapshotError::BadCounterSize`],
    /// [`SnapshotError::LimitExceeded`] past a limit; an earlier error again. Never
    /// [`SnapshotError::NoSpace`].
    pub fn begin_set(
        &mut self,
        index: u16,
        multi: bool,
        sizes: &[u8],
        instance_count: u32,
    ) -> Result<(), SnapshotError> {
        let result = self.begin_set_inner(index, multi, sizes, instance_count);
        self.sticky(result)
    }

    fn begin_set_inner(
        &mut self,
        index: u16,
        multi: bool,
        sizes: &[u8],
        instance_count: u32,
    ) -> Result<(), SnapshotError> {
        if let Some(set) = self.set {
            return Err(SnapshotError::CountMismatch {
                expected: set.count,
                found: set.added,
            });
        }
        let start = self.pos;
        let at = |off: usize| start.saturating_add(off);
        if self.set_count >= MAX_SETS {
            return Err(SnapshotError::LimitExceeded {
                offset: hf::SET_COUNT,
            });
        }
        if self.last_index.is_some_and(|l| index <= l) {
            return Err(SnapshotError::BadIndex {
                offset: at(sf::INDEX),
            });
        }
        let counters = u16::try_from(sizes.len())
            .ok()
            .filter(|c| *c <= MAX_COUNTERS)
            .ok_or(SnapshotError::LimitExceeded {
                offset: at(sf::COUNTER_COUNT),
            })?;
        let block_len = block_len_of(sizes).map_err(|i| SnapshotError::BadCounterSize {
            offset: at(sf::SIZES).saturating_add(i),
        })?;
        if instance_count > (if multi { MAX_INSTANCES } else { 1 }) {
            return Err(SnapshotError::LimitExceeded {
                offset: at(sf::INSTANCE_COUNT),
            });
        }
        let len = set_head_len(sizes.len(), instance_count as usize).ok_or(
            SnapshotError::LimitExceeded {
                offset: at(sf::INSTANCE_COUNT),
            },
        )?;
        let written = self.reserve(len)?;
        if written {
            // The fixed part and the sizes with their padding; each identity is written with
            // its instance (a set ends only when all its instances are in).
            bytes::zero(self.buf, start, sf::SIZES + round8(sizes.len()));
            let flags = if multi { SET_FLAG_MULTI } else { 0 };
            bytes::set_u16(self.buf, at(sf::INDEX), index);
            bytes::set_u16(self.buf, at(sf::FLAGS), flags);
            bytes::set_u16(self.buf, at(sf::COUNTER_COUNT), counters);
            bytes::set_u16(
                self.buf,
                at(sf::BLOCK_LEN),
                u16::try_from(block_len).unwrap_or(u16::MAX),
            );
            bytes::set_u32(self.buf, at(sf::INSTANCE_COUNT), instance_count);
            bytes::put(self.buf, at(sf::SIZES), sizes);
        }
        self.set_count += 1;
        self.last_index = Some(index);
        self.set = Some(OpenSet {
            start,
            ident: at(sf::SIZES + round8(sizes.len())),
            written,
            counters,
            block_len,
            count: instance_count,
            added: 0,
        });
        if instance_count == 0 {
            self.close_set();
        }
        Ok(())
    }

    /// Adds the next instance of the open set: its `id`, its `parent` ([`PARENT_NONE`] for
    /// none), its `name` (at most [`MAX_NAME_UNITS`] units, none 0) and exactly one value per
    /// counter announced (a counter of 4 bytes keeps the value's low 32 bits, one of 0 none).
    ///
    /// # Errors
    /// [`SnapshotError::CountMismatch`] if the set already has all its instances (or none is
    /// open) or `values` has the wrong length, [`SnapshotError::BadName`],
    /// [`SnapshotError::LimitExceeded`] if the snapshot would exceed [`MAX_TOTAL_LEN`]; an
    /// earlier error again. Never [`SnapshotError::NoSpace`].
    pub fn instance(
        &mut self,
        id: u32,
        parent: u32,
        name: &[u16],
        values: &[u64],
    ) -> Result<(), SnapshotError> {
        let result = self.instance_inner(id, parent, name, values);
        self.sticky(result)
    }

    /// Adds the next instances of the open set, as many calls of [`instance`](Self::instance)
    /// would, with `N` values each, for a set begun with the sizes `L` names (a layout known
    /// where the records are made, as the driver's and the benches' sets are): the counter
    /// block's stores are worked out at compile time, the checks that hold for the whole set
    /// (no error so far, a set open and written with those sizes) are made once, and the loop
    /// keeps its position in registers, so each record costs its copy, its length check and its
    /// identity. A set begun with other sizes takes the general path, one record at a time.
    ///
    /// # Errors
    /// As [`instance`](Self::instance), for the first record refused; the records after it are
    /// not read.
    pub fn instances<'n, L, const N: usize, I>(&mut self, records: I) -> Result<(), SnapshotError>
    where
        L: CounterSizes<N>,
        I: IntoIterator<Item = Record<'n, N>>,
    {
        let mut records = records.into_iter();
        let Some(set) = self.set else {
            return self.instances_general(None, records);
        };
        let sizes = self
            .buf
            .get(set.start.saturating_add(sf::SIZES)..)
            .and_then(|s| s.first_chunk::<N>());
        if self.error.is_some()
            || self.overflow
            || !set.written
            || usize::from(set.counters) != N
            || sizes != Some(&L::SIZES)
        {
            return self.instances_general(None, records);
        }
        let plan = const { BlockPlan::<N>::of(&L::SIZES) };
        // One loop, for the block's length, with the block built in registers and stored whole.
        let end = match plan.words {
            1 => self.batch(set, &mut records, 1, |b, v| plan.write::<1>(b, v)),
            2 => self.batch(set, &mut records, 2, |b, v| plan.write::<2>(b, v)),
            3 => self.batch(set, &mut records, 3, |b, v| plan.write::<3>(b, v)),
            4 => self.batch(set, &mut records, 4, |b, v| plan.write::<4>(b, v)),
            words => self.batch(set, &mut records, words, |b, v| {
                put_block(b, slots(&L::SIZES), v);
            }),
        };
        let BatchEnd {
            pos,
            filled,
            refused,
            nul,
        } = end;
        let added = set.added + filled;
        self.pos = pos;
        self.set = Some(OpenSet {
            ident: set.ident.saturating_add(idf::LEN * filled as usize),
            added,
            ..set
        });
        if added == set.count {
            self.close_set();
        }
        if nul && let Some((_, _, name)) = refused {
            return self.nul_unit(pos.saturating_add(inf::LEN), name);
        }
        let refused = refused.map(|(id, parent, name)| Record {
            id,
            parent,
            name,
            values: [0; N],
        });
        self.instances_general(refused, records)
    }

    /// The loop of [`Self::instances`] over the open set `set` (written, `N` counters), each
    /// counter block of `block_words` words written by `write_block`; stops at the first record
    /// it does not write.
    #[inline]
    fn batch<'n, const N: usize, I, B>(
        &mut self,
        set: OpenSet,
        records: &mut I,
        block_words: usize,
        write_block: B,
    ) -> BatchEnd<'n>
    where
        I: Iterator<Item = Record<'n, N>>,
        B: Fn(&mut [[u8; 8]], &[u64; N]),
    {
        // The identities still to fill, then the space left for records (the format's limit
        // included) as whole words: records are whole words from a multiple of 8.
        let limit = self.buf.len().min(MAX_TOTAL_LEN);
        let buf = self.buf.get_mut(..limit).unwrap_or_default();
        let (head, rest) = buf.split_at_mut_checked(self.pos).unwrap_or_default();
        let mut rest = rest.as_chunks_mut::<8>().0;
        let table = head
            .get_mut(set.ident..)
            .unwrap_or_default()
            .as_chunks_mut::<8>()
            .0;
        let table = table
            .get_mut(..(set.count - set.added) as usize)
            .unwrap_or_default();
        let mut refused = None;
        let mut nul = false;
        // A record the loop does not write goes to the general path, which refuses it (too
        // many records, a name too long) or only counts it (no room): so its values are never
        // written and need not be kept. A name with a NUL unit is reported here, its record
        // left as written, as `instance` leaves it. The position and the count are worked out
        // after the loop, from the words and the identities it took.
        let (mut filled, mut used) = (0usize, 0usize);
        for entry in table.iter_mut() {
            let Some(record) = records.next() else {
                break;
            };
            let units = record.name.len();
            // At most 3 + 256 + 1 025 words (a longer name is refused below).
            let record_words = 3 + units / 4 + 1 + block_words;
            if units > usize::from(MAX_NAME_UNITS) || rest.len() < record_words {
                refused = Some((record.id, record.parent, record.name));
                break;
            }
            let Some((dst, after)) = core::mem::take(&mut rest).split_at_mut_checked(record_words)
            else {
                // Not reached: the length was checked just above.
                break;
            };
            if write_record(dst, record.name, |b| {
                write_block(b, &record.values);
            }) {
                refused = Some((record.id, record.parent, record.name));
                nul = true;
                break;
            }
            *entry = identity(record.id, record.parent);
            rest = after;
            used += record_words;
            filled += 1;
        }
        // Every identity filled: a record more is one too many.
        if refused.is_none()
            && filled == table.len()
            && let Some(record) = records.next()
        {
            refused = Some((record.id, record.parent, record.name));
        }
        BatchEnd {
            pos: self.pos + 8 * used,
            #[allow(
                clippy::cast_possible_truncation,
                reason = "at most the set's instance count, a u32"
            )]
            filled: filled as u32,
            refused,
            nul,
        }
    }

    /// Reports the first NUL unit of the name whose area starts at `name_at`, as
    /// [`Self::instance`] does.
    #[cold]
    #[inline(never)]
    fn nul_unit(&mut self, name_at: usize, name: &[u16]) -> Result<(), SnapshotError> {
        let i = name.iter().position(|u| *u == 0).unwrap_or(0);
        self.sticky(Err(SnapshotError::BadName {
            offset: name_at.saturating_add(2 * i),
        }))
    }

    /// The rest of [`Self::instances`]: the record refused by its loop, if any, then any other,
    /// one by one (errors, a measuring writer, no room, too many records).
    #[cold]
    #[inline(never)]
    fn instances_general<'n, const N: usize, I>(
        &mut self,
        refused: Option<Record<'n, N>>,
        records: I,
    ) -> Result<(), SnapshotError>
    where
        I: Iterator<Item = Record<'n, N>>,
    {
        for record in refused.into_iter().chain(records) {
            self.instance(record.id, record.parent, record.name, &record.values)?;
        }
        Ok(())
    }

    fn instance_inner(
        &mut self,
        id: u32,
        parent: u32,
        name: &[u16],
        values: &[u64],
    ) -> Result<(), SnapshotError> {
        let Some(mut set) = self.set else {
            return Err(SnapshotError::CountMismatch {
                expected: 0,
                found: 1,
            });
        };
        if values.len() != usize::from(set.counters) {
            return Err(SnapshotError::CountMismatch {
                expected: u32::from(set.counters),
                found: len32(values.len()),
            });
        }
        let start = self.pos;
        let at = |off: usize| start.saturating_add(off);
        if name.len() > usize::from(MAX_NAME_UNITS) {
            return Err(SnapshotError::BadName {
                offset: at(inf::NAME_LENGTH),
            });
        }
        let len = instance_len(name.len(), set.block_len).ok_or(SnapshotError::LimitExceeded {
            offset: hf::TOTAL_LEN,
        })?;
        // The name is checked for NUL units while it is copied (a refused instance leaves its
        // bytes in the buffer, but no snapshot is ever returned after an error); a measuring
        // writer, or one out of space, checks it apart. The sizes are read back from the set
        // written before the record.
        let (head, tail) = self.buf.split_at_mut_checked(start).unwrap_or_default();
        let record = tail
            .get_mut(..len)
            .filter(|_| !self.overflow && set.written);
        let nul = match record {
            Some(record) => {
                let sizes = head
                    .get(set.start.saturating_add(sf::SIZES)..)
                    .and_then(|s| s.get(..usize::from(set.counters)))
                    .unwrap_or_default();
                write_record(record.as_chunks_mut::<8>().0, name, |block| {
                    put_block(block, slots(sizes), values);
                })
            }
            None => bytes::has_zero_unit(name),
        };
        if nul && let Some(i) = name.iter().position(|u| *u == 0) {
            return Err(SnapshotError::BadName {
                offset: at(inf::LEN).saturating_add(2 * i),
            });
        }
        self.reserve(len)?;
        if set.written {
            bytes::put(self.buf, set.ident, &identity(id, parent));
        }
        set.ident = set.ident.saturating_add(idf::LEN);
        set.added += 1;
        self.set = Some(set);
        if set.added == set.count {
            self.close_set();
        }
        Ok(())
    }

    /// Completes the snapshot.
    ///
    /// Returns its length: the bytes written at the start of the buffer (all of them, padding
    /// included), or the bytes needed for a measuring writer.
    ///
    /// # Errors
    /// [`SnapshotError::NoSpace`] with the exact size of the whole snapshot if the buffer is too
    /// small; the buffer then holds, if it is at least [`HEADER_LEN`] long, a header announcing
    /// that size and otherwise nothing meaningful. [`SnapshotError::CountMismatch`] if the last
    /// set is incomplete; an earlier error again.
    pub fn finish(self) -> Result<usize, SnapshotError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if let Some(set) = self.set {
            return Err(SnapshotError::CountMismatch {
                expected: set.count,
                found: set.added,
            });
        }
        if self.buf.len() >= HEADER_LEN {
            let buf = &mut *self.buf;
            bytes::put(buf, hf::MAGIC, &SNAPSHOT_MAGIC);
            bytes::set_u16(buf, hf::VERSION, SNAPSHOT_VERSION);
            bytes::set_u16(
                buf,
                hf::HEADER_LEN,
                u16::try_from(HEADER_LEN).unwrap_or(u16::MAX),
            );
            bytes::set_u32(buf, hf::TOTAL_LEN, len32(self.pos));
            bytes::set_u32(buf, hf::SET_COUNT, self.set_count);
            bytes::set_i64(buf, hf::PERF_TIME, self.header.perf_time);
            bytes::set_i64(buf, hf::PERF_FREQ, self.header.perf_freq);
            bytes::set_i64(buf, hf::SYSTEM_TIME, self.header.system_time);
        }
        if self.overflow && !self.measuring {
            return Err(SnapshotError::NoSpace { needed: self.pos });
        }
        Ok(self.pos)
    }

    /// Records the first error and returns it from then on.
    fn sticky(&mut self, result: Result<(), SnapshotError>) -> Result<(), SnapshotError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if let Err(error) = result {
            self.error = Some(error);
        }
        result
    }

    /// Counts `len` more bytes; returns true if they fit (and everything before did): the
    /// caller then writes every one of them.
    fn reserve(&mut self, len: usize) -> Result<bool, SnapshotError> {
        let start = self.pos;
        let end = start
            .checked_add(len)
            .filter(|e| *e <= MAX_TOTAL_LEN)
            .ok_or(SnapshotError::LimitExceeded {
                offset: hf::TOTAL_LEN,
            })?;
        self.pos = end;
        if self.overflow || end > self.buf.len() {
            self.overflow = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// Writes the open set's length and closes it.
    fn close_set(&mut self) {
        if let Some(set) = self.set.take()
            && set.written
        {
            let len = self.pos.saturating_sub(set.start);
            bytes::set_u32(self.buf, set.start.saturating_add(sf::SET_LEN), len32(len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// An owned snapshot, the model the tests encode and compare decodings against.
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct MSet {
        index: u16,
        multi: bool,
        sizes: Vec<u8>,
        instances: Vec<MInst>,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct MInst {
        id: u32,
        parent: u32,
        name: Vec<u16>,
        values: Vec<u64>,
    }

    const HDR: SnapshotHeader = SnapshotHeader {
        perf_time: 0x0123_4567_89AB_CDEF,
        perf_freq: 10_000_000,
        system_time: -2,
    };

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn inst(id: u32, parent: u32, name: &str, values: &[u64]) -> MInst {
        MInst {
            id,
            parent,
            name: w(name),
            values: values.to_vec(),
        }
    }

    fn feed(wr: &mut SnapshotWriter<'_>, sets: &[MSet]) -> Result<(), SnapshotError> {
        for s in sets {
            wr.begin_set(s.index, s.multi, &s.sizes, s.instances.len() as u32)?;
            for i in &s.instances {
                wr.instance(i.id, i.parent, &i.name, &i.values)?;
            }
        }
        Ok(())
    }

    fn measure(header: SnapshotHeader, sets: &[MSet]) -> usize {
        let mut wr = SnapshotWriter::measuring(header);
        feed(&mut wr, sets).unwrap();
        wr.finish().unwrap()
    }

    fn encode(header: SnapshotHeader, sets: &[MSet]) -> Vec<u8> {
        let mut buf = vec![0u8; measure(header, sets)];
        let mut wr = SnapshotWriter::new(&mut buf, header);
        feed(&mut wr, sets).unwrap();
        assert_eq!(wr.finish(), Ok(buf.len()));
        buf
    }

    fn decode(s: &Snapshot<'_>) -> (SnapshotHeader, Vec<MSet>) {
        let sets = s
            .sets()
            .map(|set| {
                let instances: Vec<MInst> = set
                    .instances()
                    .map(|i| {
                        let values: Vec<u64> = i.values().collect();
                        for (k, v) in values.iter().enumerate() {
                            assert_eq!(i.value(k), Some(*v));
                        }
                        assert_eq!(i.value(values.len()), None);
                        assert_eq!(i.name_len(), i.name_utf16().len());
                        MInst {
                            id: i.id(),
                            parent: i.parent(),
                            name: i.name_utf16().collect(),
                            values,
                        }
                    })
                    .collect();
                assert_eq!(set.instance(instances.len()), None);
                MSet {
                    index: set.index(),
                    multi: set.multi(),
                    sizes: set.counter_sizes().to_vec(),
                    instances,
                }
            })
            .collect();
        (s.header(), sets)
    }

    fn round_trip(sets: &[MSet]) -> Vec<u8> {
        let bytes = encode(HDR, sets);
        let snap = Snapshot::parse(&bytes).unwrap();
        assert_eq!(decode(&snap), (HDR, sets.to_vec()));
        assert_eq!(snap.set_count(), sets.len());
        assert_eq!(required_len(&bytes), Ok(bytes.len()));
        bytes
    }

    fn hand_cases() -> Vec<MSet> {
        let max_name: Vec<u16> = (0..MAX_NAME_UNITS).map(|i| 0x4E00 + i).collect();
        vec![
            MSet {
                index: 0,
                multi: false,
                sizes: vec![4, 8, 0],
                instances: vec![inst(0, PARENT_NONE, "", &[1, u64::MAX, 0])],
            },
            MSet {
                index: 1,
                multi: false,
                sizes: vec![8, 8],
                instances: vec![],
            },
            MSet {
                index: 2,
                multi: true,
                sizes: vec![4, 4],
                instances: vec![],
            },
            MSet {
                index: 3,
                multi: true,
                sizes: vec![4],
                instances: vec![inst(7, PARENT_NONE, "_Total", &[42])],
            },
            MSet {
                index: 9,
                multi: true,
                sizes: vec![8, 4],
                instances: vec![
                    inst(1, PARENT_NONE, "a", &[1, 2]),
                    inst(2, 0, "Ünïcødé 名前 😀", &[3, 4]),
                    MInst {
                        id: u32::MAX,
                        parent: 1,
                        name: max_name,
                        values: vec![5, 6],
                    },
                    MInst {
                        id: 4,
                        parent: 2,
                        name: vec![0xD800, 0x6F, 0xDC00],
                        values: vec![7, 8],
                    },
                ],
            },
            MSet {
                index: u16::MAX,
                multi: true,
                sizes: vec![],
                instances: vec![inst(5, PARENT_NONE, "no counters", &[])],
            },
        ]
    }

    #[test]
    fn names_of_every_length_are_copied_whole_and_a_zero_unit_anywhere_is_found() {
        for n in 0..=40usize {
            let name: Vec<u16> = (0..n).map(|i| 0x4100 + i as u16 * 7 + 1).collect();
            let mut area = vec![[0xEEu8; 8]; n / 4 + 1];
            assert!(!put_name(&mut area, &name), "{n}");
            let mut expected: Vec<u8> = name.iter().flat_map(|u| u.to_le_bytes()).collect();
            expected.resize(8 * (n / 4 + 1), 0);
            assert_eq!(area.as_flattened(), &expected[..], "{n}: units, then zeros");
            for at in 0..n {
                let mut holed = name.clone();
                holed[at] = 0;
                let mut area = vec![[0u8; 8]; n / 4 + 1];
                assert!(put_name(&mut area, &holed), "{n}: a 0 unit at {at}");
            }
        }
    }

    #[test]
    fn golden_layout_of_a_small_snapshot() {
        let sets = [MSet {
            index: 5,
            multi: true,
            sizes: vec![4, 8],
            instances: vec![inst(
                0x11,
                PARENT_NONE,
                "ab",
                &[0x0506_0708, 0x0102_0304_0506_0708],
            )],
        }];
        let bytes = round_trip(&sets);
        let mut expect = Vec::new();
        expect.extend_from_slice(b"PCWS");
        expect.extend_from_slice(&3u16.to_le_bytes());
        expect.extend_from_slice(&40u16.to_le_bytes());
        expect.extend_from_slice(&120u32.to_le_bytes()); // total
        expect.extend_from_slice(&1u32.to_le_bytes()); // sets
        expect.extend_from_slice(&HDR.perf_time.to_le_bytes());
        expect.extend_from_slice(&HDR.perf_freq.to_le_bytes());
        expect.extend_from_slice(&HDR.system_time.to_le_bytes());
        // set at 40: len 80, index 5, multi, 2 counters, counter block 16 bytes, 1 instance,
        // the sizes 4 and 8 and their padding, the identity (id, parent)
        expect.extend_from_slice(&80u32.to_le_bytes());
        expect.extend_from_slice(&5u16.to_le_bytes());
        expect.extend_from_slice(&1u16.to_le_bytes());
        expect.extend_from_slice(&2u16.to_le_bytes());
        expect.extend_from_slice(&16u16.to_le_bytes());
        expect.extend_from_slice(&1u32.to_le_bytes());
        expect.extend_from_slice(&[4, 8, 0, 0, 0, 0, 0, 0]);
        expect.extend_from_slice(&0x11u32.to_le_bytes());
        expect.extend_from_slice(&u32::MAX.to_le_bytes());
        // instance at 72, a V1 instance: ByteLength 32, ParentObjectTitleIndex 0,
        // ParentObjectInstance 0, UniqueID -1, NameOffset 24, NameLength 6; "ab", the NUL and
        // padding to 8 bytes; the counter block: ByteLength 16, the 4-byte value at 4, the
        // 8-byte value at 8
        expect.extend_from_slice(&32u32.to_le_bytes());
        expect.extend_from_slice(&0u32.to_le_bytes());
        expect.extend_from_slice(&0u32.to_le_bytes());
        expect.extend_from_slice(&(-1i32).to_le_bytes());
        expect.extend_from_slice(&24u32.to_le_bytes());
        expect.extend_from_slice(&6u32.to_le_bytes());
        expect.extend_from_slice(b"a\0b\0\0\0\0\0");
        expect.extend_from_slice(&16u32.to_le_bytes());
        expect.extend_from_slice(&0x0506_0708u32.to_le_bytes());
        expect.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        let snap = Snapshot::parse(&bytes).unwrap();
        let set = snap.sets().next().unwrap();
        assert_eq!(set.name_areas_len(), 8);
        assert_eq!(set.block_len(), 16);
        assert_eq!(set.counter_layout().collect::<Vec<_>>(), [(4, 4), (8, 8)]);
        assert_eq!(set.records(), &expect[72..]);
        let instance = set.instance(0).unwrap();
        assert_eq!(instance.name_area(), b"a\0b\0\0\0\0\0");
        assert_eq!(instance.block(), &expect[104..]);
        assert_eq!(instance.record(), &expect[72..]);
        assert_eq!(bytes, expect);
    }

    #[test]
    fn hand_cases_round_trip() {
        let sets = hand_cases();
        let bytes = round_trip(&sets);
        let snap = Snapshot::parse(&bytes).unwrap();
        assert_eq!(snap.as_bytes(), &bytes[..]);
        // Random access agrees with iteration, and every record is 8-aligned.
        for set in snap.sets() {
            assert_eq!(set.offset() % 8, 0);
            assert_eq!(set.byte_len() % 8, 0);
            for (i, instance) in set.instances().enumerate() {
                assert_eq!(set.instance(i), Some(instance));
                assert_eq!(instance.offset() % 8, 0);
            }
        }
        let big = snap.find_set(9).unwrap();
        assert_eq!(
            big.instance(2).unwrap().name_len(),
            usize::from(MAX_NAME_UNITS)
        );
        assert_eq!(big.instance(1).unwrap().parent_position(), Some(0));
        assert_eq!(big.instance(0).unwrap().parent_position(), None);
        assert_eq!(
            big.instance(1).unwrap().name_bytes().len(),
            2 * w("Ünïcødé 名前 😀").len()
        );
        assert!(snap.find_set(4).is_none());
        // An empty snapshot is just the header.
        assert_eq!(round_trip(&[]).len(), HEADER_LEN);
    }

    /// Every buffer size: `NoSpace` with the exact size until it fits, never a write past the
    /// slice, and once it fits every byte up to the length is written.
    #[test]
    fn every_buffer_size() {
        let sets = hand_cases();
        let reference = encode(HDR, &sets);
        let needed = reference.len();
        const GUARD: usize = 64;
        for size in 0..=needed + 8 {
            for poison in [0xA5u8, 0x00, 0xFF] {
                let mut backing = vec![poison; size + GUARD];
                let mut wr = SnapshotWriter::new(&mut backing[..size], HDR);
                feed(&mut wr, &sets).unwrap();
                let result = wr.finish();
                assert!(
                    backing[size..].iter().all(|b| *b == poison),
                    "write past the slice at size {size}"
                );
                if size < needed {
                    assert_eq!(
                        result,
                        Err(SnapshotError::NoSpace { needed }),
                        "size {size}"
                    );
                    if size >= HEADER_LEN {
                        assert_eq!(required_len(&backing[..size]), Ok(needed));
                    }
                } else {
                    assert_eq!(result, Ok(needed));
                    assert_eq!(
                        backing[..needed],
                        reference[..],
                        "unwritten byte, size {size}"
                    );
                    assert!(backing[needed..].iter().all(|b| *b == poison));
                }
            }
        }
    }

    #[test]
    fn writer_rejects_misuse() {
        use SnapshotError as E;
        let run = |f: &dyn Fn(&mut SnapshotWriter<'_>) -> Result<(), E>| {
            let mut buf = [0u8; 4096];
            let mut wr = SnapshotWriter::new(&mut buf, HDR);
            let first = f(&mut wr);
            (first, wr.finish())
        };
        // Too few instances, then another set.
        let (r, fin) = run(&|wr| {
            wr.begin_set(0, true, &[8], 2)?;
            wr.instance(0, PARENT_NONE, &[], &[1])?;
            wr.begin_set(1, true, &[8], 0)
        });
        let mismatch = E::CountMismatch {
            expected: 2,
            found: 1,
        };
        assert_eq!(
            (r, fin),
            (Err(mismatch), Err(mismatch)),
            "errors are sticky"
        );
        // Too few instances at finish.
        let (r, fin) = run(&|wr| wr.begin_set(0, true, &[8], 1));
        assert_eq!(r, Ok(()));
        assert_eq!(fin, Err(mismatch_of(1, 0)));
        // Too many instances, and an instance without a set.
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, &[8], 1)?;
            wr.instance(0, PARENT_NONE, &[], &[1])?;
            wr.instance(1, PARENT_NONE, &[], &[1])
        });
        assert_eq!(r, Err(mismatch_of(0, 1)));
        let (r, _) = run(&|wr| wr.instance(1, PARENT_NONE, &[], &[]));
        assert_eq!(r, Err(mismatch_of(0, 1)));
        // Wrong number of values.
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, &[8, 4], 1)?;
            wr.instance(0, PARENT_NONE, &[], &[1])
        });
        assert_eq!(r, Err(mismatch_of(2, 1)));
        // Index order.
        let (r, _) = run(&|wr| {
            wr.begin_set(3, true, &[], 0)?;
            wr.begin_set(3, true, &[], 0)
        });
        assert_eq!(r, Err(E::BadIndex { offset: 56 + 4 }));
        // Limits.
        let (r, _) = run(&|wr| wr.begin_set(0, false, &[8], 2));
        assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 12 }));
        let (r, _) = run(&|wr| wr.begin_set(0, true, &[8], MAX_INSTANCES + 1));
        assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 12 }));
        let too_many = vec![4u8; usize::from(MAX_COUNTERS) + 1];
        let (r, _) = run(&|wr| wr.begin_set(0, true, &too_many, 0));
        assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 8 }));
        // Counter sizes: only 0, 4 and 8.
        for size in [1u8, 2, 3, 5, 16, 255] {
            let (r, _) = run(&|wr| wr.begin_set(0, true, &[8, size], 0));
            assert_eq!(
                r,
                Err(E::BadCounterSize {
                    offset: 40 + 16 + 1
                })
            );
        }
        let (r, _) = run(&|wr| {
            for i in 0..=MAX_SETS {
                wr.begin_set(i as u16, false, &[], 0)?;
            }
            Ok(())
        });
        assert_eq!(r, Err(E::LimitExceeded { offset: 12 }));
        // Names.
        let long = vec![0x41u16; usize::from(MAX_NAME_UNITS) + 1];
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, &[], 1)?;
            wr.instance(0, PARENT_NONE, &long, &[])
        });
        // The set at 40 takes 16 bytes and one identity: the record starts at 64.
        assert_eq!(r, Err(E::BadName { offset: 64 + 20 }));
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, &[], 1)?;
            wr.instance(0, PARENT_NONE, &[0x41, 0, 0x42], &[])
        });
        assert_eq!(
            r,
            Err(E::BadName {
                offset: 64 + 24 + 2
            })
        );
        // The total length is bounded without ever allocating it: MAX_SETS sets of
        // MAX_INSTANCES instances of MAX_COUNTERS counters exceed u32.
        let mut wr = SnapshotWriter::measuring(HDR);
        let values = vec![0u64; usize::from(MAX_COUNTERS)];
        let sizes = vec![8u8; usize::from(MAX_COUNTERS)];
        let mut result = Ok(());
        'outer: for s in 0..MAX_SETS {
            if let Err(e) = wr.begin_set(s as u16, true, &sizes, MAX_INSTANCES) {
                result = Err(e);
                break;
            }
            for i in 0..MAX_INSTANCES {
                if let Err(e) = wr.instance(i, PARENT_NONE, &[], &values) {
                    result = Err(e);
                    break 'outer;
                }
            }
        }
        assert_eq!(result, Err(E::LimitExceeded { offset: 8 }));
        assert!(wr.len() <= MAX_TOTAL_LEN);
        assert_eq!(wr.finish(), Err(E::LimitExceeded { offset: 8 }));
    }

    fn mismatch_of(expected: u32, found: u32) -> SnapshotError {
        SnapshotError::CountMismatch { expected, found }
    }

    /// `good` with `patch` written at `off`, parsed.
    fn parse_patched(good: &[u8], off: usize, patch: &[u8]) -> Result<(), SnapshotError> {
        let mut b = good.to_vec();
        b[off..off + patch.len()].copy_from_slice(patch);
        Snapshot::parse(&b).map(|_| ())
    }

    #[test]
    fn parse_rejects_hand_corruptions() {
        use SnapshotError as E;
        let sets = hand_cases();
        let good = encode(HDR, &sets);
        let with = |off: usize, patch: &[u8]| parse_patched(&good, off, patch);
        assert_eq!(with(0, b"PCWX"), Err(E::BadMagic));
        assert_eq!(
            with(4, &1u16.to_le_bytes()),
            Err(E::UnsupportedVersion {
                found: 1,
                supported: 3
            }),
            "version 1 put names before values, padded differently"
        );
        assert_eq!(
            with(4, &2u16.to_le_bytes()),
            Err(E::UnsupportedVersion {
                found: 2,
                supported: 3
            }),
            "version 2 kept u64 values and an offset table"
        );
        assert_eq!(
            with(6, &48u16.to_le_bytes()),
            Err(E::BadLength { offset: 6 })
        );
        assert_eq!(
            with(12, &(MAX_SETS + 1).to_le_bytes()),
            Err(E::LimitExceeded { offset: 12 })
        );
        // Trailing bytes are not a snapshot.
        let mut longer = good.clone();
        longer.extend_from_slice(&[0; 8]);
        assert_eq!(Snapshot::parse(&longer), Err(E::BadLength { offset: 8 }));
        // A version-4 header is reported as such even when it is shorter than ours.
        assert_eq!(
            Snapshot::parse(b"PCWS\x04\x00"),
            Err(E::UnsupportedVersion {
                found: 4,
                supported: 3
            })
        );
        assert_eq!(Snapshot::parse(b"PCW"), Err(E::Truncated { offset: 3 }));
        assert_eq!(Snapshot::parse(b"XXXXXXXX"), Err(E::BadMagic));
        // Reserved fields, flag bits and padding.
        let snap = Snapshot::parse(&good).unwrap();
        let first = snap.sets().next().unwrap().offset();
        assert_eq!(
            with(first + 6, &3u16.to_le_bytes()),
            Err(E::Reserved { offset: first + 6 })
        );
        assert_eq!(
            with(first + 10, &8u16.to_le_bytes()),
            Err(E::BadLength { offset: first + 10 }),
            "a counter block length other than the sizes give"
        );
        assert_eq!(
            with(first + 17, &[3]),
            Err(E::BadCounterSize { offset: first + 17 })
        );
        let set = snap.find_set(3).unwrap();
        assert_eq!(
            with(set.offset() + 17, &[1]),
            Err(E::Reserved {
                offset: set.offset() + 17
            }),
            "counter-size padding"
        );
        // Index order.
        let second = snap.sets().nth(1).unwrap().offset();
        assert_eq!(
            with(second + 4, &0u16.to_le_bytes()),
            Err(E::BadIndex { offset: second + 4 })
        );
        // Single-instance set with 2 instances.
        assert_eq!(
            with(first + 12, &2u32.to_le_bytes()),
            Err(E::LimitExceeded { offset: first + 12 })
        );
    }

    #[test]
    fn record_fields_are_checked() {
        use SnapshotError as E;
        let good = encode(HDR, &hand_cases());
        let with = |off: usize, patch: &[u8]| parse_patched(&good, off, patch);
        let snap = Snapshot::parse(&good).unwrap();
        let set = snap.find_set(3).unwrap();
        // The instance definition's fixed fields, and the counter block's.
        let i = set.instance(0).unwrap();
        for fixed in 4..12 {
            assert_eq!(
                with(i.offset() + fixed, &[1]),
                Err(E::Reserved {
                    offset: i.offset() + fixed
                }),
                "ParentObjectTitleIndex and ParentObjectInstance are zero"
            );
        }
        assert_eq!(
            with(i.offset() + 12, &[0, 0, 0, 0]),
            Err(E::Reserved {
                offset: i.offset() + 12
            }),
            "UniqueID is PERF_NO_UNIQUE_ID"
        );
        assert_eq!(
            with(i.offset() + 16, &32u32.to_le_bytes()),
            Err(E::BadLength {
                offset: i.offset() + 16
            }),
            "NameOffset is 24"
        );
        assert_eq!(
            with(i.offset(), &48u32.to_le_bytes()),
            Err(E::BadLength { offset: i.offset() }),
            "ByteLength covers the definition and the name area"
        );
        let block = i.offset() + i.byte_len() - i.block().len();
        assert_eq!(
            with(block, &16u32.to_le_bytes()),
            Err(E::BadLength { offset: block }),
            "the counter block's ByteLength"
        );
        // Set 3 has one 4-byte counter: its block is 8 bytes, the value in the second half.
        assert_eq!(i.block(), [8, 0, 0, 0, 42, 0, 0, 0]);
        let set0 = snap.find_set(0).unwrap().instance(0).unwrap();
        // Set 0's counters: 4 bytes at 4, 8 bytes at 8, none at 16; the block is 16 bytes.
        assert_eq!(set0.block().len(), 16);
        let block0 = set0.offset() + set0.byte_len() - 16;
        assert_eq!(
            with(block0 + 4, &[9]),
            Ok(()),
            "a value byte takes any value"
        );
        let big = snap.find_set(9).unwrap().instance(0).unwrap();
        // Set 9's counters: 8 bytes at 8, 4 bytes at 16; bytes 4..8 and 20..24 are padding.
        let block9 = big.offset() + big.byte_len() - 24;
        for pad in [4, 7, 20, 23] {
            assert_eq!(
                with(block9 + pad, &[1]),
                Err(E::Reserved {
                    offset: block9 + pad
                }),
                "counter-block padding at {pad}"
            );
        }
    }

    /// Every byte of a counter block that no counter covers must be zero, and every byte a
    /// counter covers may hold anything: for a block checked through its gap halves (at most
    /// 64 words, size-0 counters between the others) and one checked counter by counter (more
    /// than 64 words).
    #[test]
    fn counter_block_gaps_are_checked_byte_by_byte() {
        use SnapshotError as E;
        let mixed = vec![0u8, 4, 0, 0, 8, 0, 4, 8, 8, 0, 4, 0];
        let long = vec![4u8; 130];
        for sizes in [mixed, long] {
            let values: Vec<u64> = sizes.iter().map(|s| if *s == 0 { 0 } else { 7 }).collect();
            let sets = [MSet {
                index: 1,
                multi: true,
                sizes: sizes.clone(),
                instances: vec![inst(3, PARENT_NONE, "abc", &values)],
            }];
            let good = round_trip(&sets);
            let snap = Snapshot::parse(&good).unwrap();
            let set = snap.sets().next().unwrap();
            let i = set.instance(0).unwrap();
            let block_at = i.offset() + i.byte_len() - set.block_len();
            let mut covered = vec![false; set.block_len()];
            covered[..4].fill(true);
            for (offset, size) in set.counter_layout() {
                covered[offset..offset + size].fill(true);
            }
            assert!(covered.iter().any(|c| !c), "the layout has gaps");
            for (k, is_value) in covered.iter().enumerate().skip(4) {
                let mut b = good.clone();
                b[block_at + k] ^= 0x5A;
                let result = Snapshot::parse(&b).map(|_| ());
                if *is_value {
                    assert_eq!(result, Ok(()), "value byte {k} of {sizes:?}");
                } else {
                    assert_eq!(
                        result,
                        Err(E::Reserved {
                            offset: block_at + k
                        }),
                        "gap byte {k} of {sizes:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn name_areas_are_checked_and_add_up() {
        use SnapshotError as E;
        let good = encode(HDR, &hand_cases());
        let with = |off: usize, patch: &[u8]| parse_patched(&good, off, patch);
        let snap = Snapshot::parse(&good).unwrap();
        // "a" in set 9: the name at +24, its NUL at +26, padding from +28 to +32.
        let a = snap.find_set(9).unwrap().instance(0).unwrap();
        for (at, what) in [
            (26, "the NUL"),
            (27, "the NUL"),
            (29, "name padding"),
            (31, "name padding"),
        ] {
            assert_eq!(
                with(a.offset() + at, &[9]),
                Err(E::Reserved {
                    offset: a.offset() + at
                }),
                "{what}"
            );
        }
        assert_eq!(
            with(a.offset() + 24, &[0, 0]),
            Err(E::BadName {
                offset: a.offset() + 24
            }),
            "NUL unit"
        );
        for name_length in [2 * u32::from(MAX_NAME_UNITS) + 4, 0, 3, 5] {
            assert_eq!(
                with(a.offset() + 20, &name_length.to_le_bytes()),
                Err(E::BadName {
                    offset: a.offset() + 20
                }),
                "NameLength {name_length}"
            );
        }
        // Every name area ends its record, and each set knows their total without a walk.
        for set in snap.sets() {
            let areas: usize = set.instances().map(|i| i.name_area().len()).sum();
            assert_eq!(set.name_areas_len(), areas);
            for i in set.instances() {
                assert_eq!(i.name_area().len() % 8, 0);
                assert_eq!(&i.name_area()[..i.name_bytes().len()], i.name_bytes());
                assert!(
                    i.name_area()[i.name_bytes().len()..]
                        .iter()
                        .all(|b| *b == 0)
                );
                assert_eq!(
                    i.offset() + i.byte_len(),
                    i.name_area().as_ptr() as usize - good.as_ptr() as usize
                        + i.name_area().len()
                        + set.block_len()
                );
                assert_eq!(i.block().len(), set.block_len());
            }
        }
    }

    #[test]
    fn errors_display() {
        use alloc::string::ToString;
        let cases = [
            SnapshotError::NoSpace { needed: 96 },
            SnapshotError::BadMagic,
            SnapshotError::UnsupportedVersion {
                found: 2,
                supported: 1,
            },
            SnapshotError::Truncated { offset: 3 },
            SnapshotError::BadLength { offset: 8 },
            SnapshotError::LimitExceeded { offset: 12 },
            SnapshotError::BadCounterSize { offset: 57 },
            SnapshotError::BadName { offset: 76 },
            SnapshotError::Reserved { offset: 46 },
            SnapshotError::BadIndex { offset: 44 },
            SnapshotError::CountMismatch {
                expected: 2,
                found: 1,
            },
        ];
        for e in cases {
            let s = e.to_string();
            assert!(
                !s.is_empty() && s.chars().next().unwrap().is_lowercase(),
                "{s}"
            );
        }
        assert_eq!(
            SnapshotError::NoSpace { needed: 96 }.to_string(),
            "buffer too small: snapshot needs 96 bytes"
        );
    }

    /// A value that fits a counter of `size` bytes (so that it decodes as given).
    fn arb_value(size: u8) -> BoxedStrategy<u64> {
        match size {
            8 => any::<u64>().boxed(),
            4 => any::<u32>().prop_map(u64::from).boxed(),
            _ => Just(0).boxed(),
        }
    }

    fn arb_inst(sizes: Vec<u8>) -> impl Strategy<Value = MInst> {
        (
            any::<u32>(),
            prop_oneof![Just(PARENT_NONE), 0u32..8],
            prop_oneof![
                4 => proptest::collection::vec(1u16..=u16::MAX, 0..12),
                1 => proptest::collection::vec(1u16..=u16::MAX, 1000..=1023),
            ],
            sizes.into_iter().map(arb_value).collect::<Vec<_>>(),
        )
            .prop_map(|(id, parent, name, values)| MInst {
                id,
                parent,
                name,
                values,
            })
    }

    fn arb_sizes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![3 => Just(8u8), 3 => Just(4u8), 1 => Just(0u8)],
            0..6,
        )
    }

    fn arb_sets() -> impl Strategy<Value = Vec<MSet>> {
        proptest::collection::vec(
            (any::<bool>(), arb_sizes(), 1u16..200).prop_flat_map(|(multi, sizes, step)| {
                let max = if multi { 6 } else { 1 };
                (
                    Just(step),
                    Just(multi),
                    Just(sizes.clone()),
                    proptest::collection::vec(arb_inst(sizes), 0..=max),
                )
            }),
            0..5,
        )
        .prop_map(|raw| {
            let mut index = 0u16;
            raw.into_iter()
                .map(|(step, multi, sizes, instances)| {
                    index = index.saturating_add(step);
                    MSet {
                        index,
                        multi,
                        sizes,
                        instances,
                    }
                })
                .collect()
        })
    }

    fn arb_header() -> impl Strategy<Value = SnapshotHeader> {
        (any::<i64>(), any::<i64>(), any::<i64>()).prop_map(
            |(perf_time, perf_freq, system_time)| SnapshotHeader {
                perf_time,
                perf_freq,
                system_time,
            },
        )
    }

    /// A length or count field of an encoded snapshot, and the errors bumping it may give.
    struct Field {
        offset: usize,
        size: usize,
        what: &'static str,
    }

    fn length_fields(bytes: &[u8]) -> Vec<Field> {
        let snap = Snapshot::parse(bytes).unwrap();
        let mut fields = vec![
            Field {
                offset: 6,
                size: 2,
                what: "header length",
            },
            Field {
                offset: 8,
                size: 4,
                what: "total length",
            },
            Field {
                offset: 12,
                size: 4,
                what: "set count",
            },
        ];
        for set in snap.sets() {
            let p = set.offset();
            fields.push(Field {
                offset: p,
                size: 4,
                what: "set length",
            });
            // The counter count is left out: one more counter of size 0 (the padding byte
            // after the sizes) lays the block out the same, so the result is a valid snapshot.
            fields.push(Field {
                offset: p + 10,
                size: 2,
                what: "block length",
            });
            fields.push(Field {
                offset: p + 12,
                size: 4,
                what: "instance count",
            });
            for instance in set.instances() {
                fields.push(Field {
                    offset: instance.offset(),
                    size: 4,
                    what: "byte length",
                });
                fields.push(Field {
                    offset: instance.offset() + 16,
                    size: 4,
                    what: "name offset",
                });
                fields.push(Field {
                    offset: instance.offset() + 20,
                    size: 4,
                    what: "name length",
                });
                let block = instance.offset() + instance.byte_len() - set.block_len();
                fields.push(Field {
                    offset: block,
                    size: 4,
                    what: "block byte length",
                });
            }
        }
        fields
    }

    /// Whether `err` is a right rejection of the field `what` bumped. A bumped count moves
    /// the records it describes, so the mismatch may surface as the count itself (a limit) or
    /// as the first length, size, padding byte or name that no longer lines up.
    fn expected_rejection(
        what: &str,
        err: Result<Snapshot<'_>, SnapshotError>,
        len: usize,
    ) -> bool {
        use SnapshotError as E;
        match err {
            Err(E::BadLength { .. }) => true,
            Err(E::Truncated { offset }) => what == "total length" && offset == len,
            Err(E::LimitExceeded { .. }) => {
                matches!(what, "set count" | "counter count" | "instance count")
            }
            // A count moves the sizes, the identities or the records over bytes of another
            // kind.
            Err(E::BadCounterSize { .. }) => what == "counter count",
            Err(E::Reserved { .. }) => {
                matches!(what, "instance count" | "counter count")
            }
            Err(E::BadName { .. }) => {
                matches!(what, "name length" | "instance count" | "counter count")
            }
            _ => false,
        }
    }

    fn read_field(b: &[u8], f: &Field) -> u64 {
        let mut v = [0u8; 8];
        v[..f.size].copy_from_slice(&b[f.offset..f.offset + f.size]);
        u64::from_le_bytes(v)
    }

    fn write_field(b: &mut [u8], f: &Field, value: u64) {
        b[f.offset..f.offset + f.size].copy_from_slice(&value.to_le_bytes()[..f.size]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn encode_decode_is_identity(header in arb_header(), sets in arb_sets()) {
            let bytes = encode(header, &sets);
            prop_assert_eq!(bytes.len(), measure(header, &sets));
            let snap = Snapshot::parse(&bytes).unwrap();
            prop_assert_eq!(decode(&snap), (header, sets));
        }

        #[test]
        fn corruptions_are_rejected(header in arb_header(), sets in arb_sets(), delta in prop_oneof![Just(1u64), Just(8), Just(u64::MAX)]) {
            use SnapshotError as E;
            let good = encode(header, &sets);
            // Truncation at every length.
            for len in 0..good.len() {
                prop_assert_eq!(Snapshot::parse(&good[..len]), Err(E::Truncated { offset: len }));
            }
            // Version and magic.
            for version in [0u16, 1, 2, 4, u16::MAX] {
                let mut b = good.clone();
                b[4..6].copy_from_slice(&version.to_le_bytes());
                prop_assert_eq!(Snapshot::parse(&b), Err(E::UnsupportedVersion { found: version, supported: SNAPSHOT_VERSION }));
            }
            for i in 0..4 {
                let mut b = good.clone();
                b[i] ^= 0x20;
                prop_assert_eq!(Snapshot::parse(&b), Err(E::BadMagic));
            }
            // Each length and count field bumped (by +1, +8 or -1, wrapping).
            for f in length_fields(&good) {
                let mut b = good.clone();
                let old = read_field(&b, &f);
                let new = old.wrapping_add(delta);
                write_field(&mut b, &f, new);
                if read_field(&b, &f) == old {
                    continue;
                }
                let err = Snapshot::parse(&b);
                let ok = expected_rejection(f.what, err, good.len());
                prop_assert!(ok, "{} at {} bumped {} -> {}: {:?}", f.what, f.offset, old, new, err);
            }
        }

        /// Random bytes and random single-byte damage to valid snapshots: never a panic, and
        /// whatever is accepted decodes and re-encodes to the same bytes (the format is canonical).
        #[test]
        fn anything_accepted_reencodes_identically(
            header in arb_header(),
            sets in arb_sets(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            noise in proptest::collection::vec(any::<u8>(), 0..128),
        ) {
            let mut damaged = encode(header, &sets);
            for (at, x) in flips {
                let n = damaged.len();
                damaged[at % n] ^= x;
            }
            for bytes in [damaged, noise] {
                if let Ok(snap) = Snapshot::parse(&bytes) {
                    let (h, s) = decode(&snap);
                    prop_assert_eq!(encode(h, &s), bytes);
                }
            }
        }
    }

    /// The layout [`batch_writes_what_single_calls_write`] compiles its batches for (a set of
    /// other sizes takes the general path).
    struct Layout;
    impl CounterSizes<3> for Layout {
        const SIZES: [u8; 3] = [8, 8, 4];
    }
    struct One;
    impl CounterSizes<1> for One {
        const SIZES: [u8; 1] = [8];
    }

    /// A layout whose block (40 bytes) is longer than the ones the batch loop builds in
    /// registers.
    struct Wide;
    impl CounterSizes<5> for Wide {
        const SIZES: [u8; 5] = [4, 8, 8, 8, 4];
    }

    #[test]
    fn batch_of_a_long_counter_block_writes_what_single_calls_write() {
        let names: Vec<Vec<u16>> = ["", "a", "abcd", "Queue 000001"]
            .iter()
            .map(|n| w(n))
            .collect();
        let records: Vec<Record<'_, 5>> = names
            .iter()
            .enumerate()
            .map(|(i, name)| Record {
                id: i as u32,
                parent: PARENT_NONE,
                name,
                values: [i as u64 + 1, u64::MAX - i as u64, 3, 4, 0x1_0000_0005],
            })
            .collect();
        let run = |batch: bool| {
            let mut buf = vec![0xA5u8; 1024];
            let mut wr = SnapshotWriter::new(&mut buf, HDR);
            wr.begin_set(4, true, &Wide::SIZES, records.len() as u32)
                .unwrap();
            if batch {
                wr.instances::<Wide, _, _>(records.iter().copied()).unwrap();
            } else {
                for r in &records {
                    wr.instance(r.id, r.parent, r.name, &r.values).unwrap();
                }
            }
            let len = wr.finish().unwrap();
            buf.truncate(len);
            buf
        };
        let bytes = run(true);
        assert_eq!(bytes, run(false));
        let snap = Snapshot::parse(&bytes).unwrap();
        let set = snap.find_set(4).unwrap();
        assert_eq!(set.block_len(), 40);
        let values: Vec<Vec<u64>> = set.instances().map(|i| i.values().collect()).collect();
        assert_eq!(
            values[3],
            [4, u64::MAX - 3, 3, 4, 5],
            "4-byte counters keep the low half"
        );
    }

    /// Names for [`batch_writes_what_single_calls_write`]: mostly valid, some with NUL units,
    /// some too long.
    fn arb_batch_name() -> impl Strategy<Value = Vec<u16>> {
        prop_oneof![
            4 => proptest::collection::vec(1u16..=u16::MAX, 0..12),
            1 => proptest::collection::vec(prop_oneof![1u16..=u16::MAX, Just(0)], 1..6),
            1 => proptest::collection::vec(1u16..=u16::MAX, 1020..=1030),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// `instances` writes the same bytes and reports the same errors as `instance` called
        /// once per record, whatever the buffer (too small included), the announced counts
        /// (too many or too few records, another counter count) and the names (NUL units, too
        /// long), when a set is filled in two batch calls and another set follows.
        #[test]
        fn batch_writes_what_single_calls_write(
            names in proptest::collection::vec(arb_batch_name(), 0..8),
            announced in 0u32..10,
            sizes in prop_oneof![
                3 => Just(vec![8u8, 8, 4]),
                1 => Just(vec![8u8, 4, 8]),
                1 => Just(vec![8u8, 8])
            ],
            cap in prop_oneof![Just(4096usize), 0usize..3000],
            measuring in any::<bool>(),
            split in 0usize..8,
        ) {
            let records: Vec<Record<'_, 3>> = names
                .iter()
                .enumerate()
                .map(|(i, name)| Record {
                    id: i as u32,
                    parent: if i % 2 == 0 { PARENT_NONE } else { i as u32 - 1 },
                    name,
                    values: [i as u64, u64::MAX - i as u64, 7],
                })
                .collect();
            let run = |batch: bool| {
                let mut buf = vec![0xA5u8; cap];
                let mut wr = if measuring {
                    SnapshotWriter::measuring(HDR)
                } else {
                    SnapshotWriter::new(&mut buf, HDR)
                };
                let mut feed = || {
                    wr.begin_set(2, true, &sizes, announced)?;
                    if batch {
                        let (a, b) = records.split_at(split.min(records.len()));
                        wr.instances::<Layout, _, _>(a.iter().copied())?;
                        wr.instances::<Layout, _, _>(b.iter().copied())?;
                    } else {
                        for r in &records {
                            wr.instance(r.id, r.parent, r.name, &r.values)?;
                        }
                    }
                    wr.begin_set(5, false, &[8], 1)?;
                    wr.instances::<One, _, _>([Record { id: 0, parent: PARENT_NONE, name: &[], values: [9] }])
                };
                let result = feed();
                let finished = wr.finish();
                (result, finished, buf)
            };
            let (batch, single) = (run(true), run(false));
            prop_assert_eq!(&batch, &single);
            // A complete snapshot parses back to the records given.
            if let (Ok(()), Ok(len)) = (batch.0, batch.1)
                && !measuring
            {
                let snap = Snapshot::parse(&batch.2[..len]).unwrap();
                let set = snap.find_set(2).unwrap();
                let decoded: Vec<(u32, u32, Vec<u16>, Vec<u64>)> = set
                    .instances()
                    .map(|i| (i.id(), i.parent(), i.name_utf16().collect(), i.values().collect()))
                    .collect();
                let given: Vec<(u32, u32, Vec<u16>, Vec<u64>)> = records
                    .iter()
                    .map(|r| {
                        // A 4-byte counter keeps the low half.
                        let values = r.values.iter().zip(&sizes).map(|(v, s)| match s {
                            4 => v & 0xFFFF_FFFF,
                            _ => *v,
                        });
                        (r.id, r.parent, r.name.to_vec(), values.collect())
                    })
                    .collect();
                prop_assert_eq!(decoded, given);
            }
        }
    }
}
