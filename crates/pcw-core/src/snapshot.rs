// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver↔DLL snapshot format: what `IOCTL_PCW_SNAPSHOT` returns, written by the
//! kernel driver into the caller's output buffer and read back by the V1 perf DLL from bytes it
//! must treat as untrusted.
//!
//! A snapshot is the state of every counterset the driver serves at one instant: a header with
//! the driver's clocks, then one *set* record per counterset, each followed by its *instance*
//! records carrying identity and one raw `u64` per counter, in counterset descriptor order.
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
//! | | +10 | 2 | reserved, zero |
//! | | +12 | 4 | instance count (≤ [`MAX_INSTANCES`]; ≤ 1 for a single-instance set) |
//! | | +16 | 4 × count | instance offset table: offset of each instance record from the start of the snapshot; zero-padded to a multiple of 8 |
//! | instance | +0 | 4 | id |
//! | | +4 | 4 | parent: zero-based position of the parent instance in the parent object, [`PARENT_NONE`] for none |
//! | | +8 | 2 | name length in UTF-16 units (≤ [`MAX_NAME_UNITS`]), no terminator |
//! | | +10 | 6 | reserved, zero |
//! | | +16 | 8 × counters | raw values, one `u64` per counter of the set |
//! | | then | `align8(2 × len + 2)` | name area: the name, UTF-16LE, no unit is 0; then a 0 unit and zero bytes to a multiple of 8 |
//!
//! An instance record is therefore `16 + 8 × counter count + align8(2 × name length + 2)`
//! bytes, and a set's name areas add up to its set length minus its fixed part, its offset
//! table and `16 + 8 × counter count` per instance ([`SetView::name_areas_len`]) — no pass over
//! the instances needed.
//!
//! The format is canonical: every reserved field and padding byte is zero, the offset table and
//! the set lengths hold the only values consistent with the records, and the records end exactly
//! at the total length, so two equal snapshots have equal bytes (the fuzz target re-encodes what
//! it accepts and compares).
//!
//! ## Choices
//!
//! - **Random access.** Instances are variable-length (names), so each set carries an offset table
//!   (4 bytes per instance): [`SetView::instance`] is O(1), which is what the V1 writer's
//!   `ObjectSource::instance(index)` wants. Sets are walked through their set length: finding a
//!   set is O(sets), never O(instances).
//! - **Single-instance sets** carry zero instances (the driver has no data for it yet) or exactly
//!   one, whose values are the counterset's; its id, parent and name are carried verbatim and are
//!   the DLL's to ignore.
//! - **Parent.** The parent object is a property of the manifest, known to the DLL from its tables,
//!   and is not carried here; the parent field is the instance's zero-based position in that
//!   object (`PERF_INSTANCE_DEFINITION.ParentObjectInstance`) or [`PARENT_NONE`]. The reader cannot
//!   know the parent object's instance count, so it does not bound this value.
//! - **Names** have no NUL unit because V1 names are NUL-terminated (an embedded NUL would cut
//!   the name); this also makes a corrupted name length detectable when it stays in the padding.
//! - **Version 2: names laid out as V1 lays them out.** The name area is exactly the name area
//!   of a V1 `PERF_INSTANCE_DEFINITION` (name, NUL, zero padding to 8 bytes), and values sit at
//!   a fixed offset. So the DLL's V1 writer copies a name as whole words, reads values without
//!   working out where the name ends, and knows a set's V1 size from its set length alone
//!   (version 1 put the name right after a 12-byte fixed part, whose padding did not follow
//!   the name's V1 padding, so the writer had to measure every name first).
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
//! once per set and its loop only copies, checks each record's length and fills its
//! offset-table entry; [`SnapshotWriter::instance`] adds one instance of any counter count. When
//! the buffer runs out it keeps counting, so [`SnapshotWriter::finish`] reports the exact size of
//! the whole snapshot in [`SnapshotError::NoSpace`] (the driver returns it with
//! `STATUS_BUFFER_TOO_SMALL`). Every byte up to the returned length is written, padding included,
//! so no earlier buffer content (kernel memory) leaks through; nothing is ever written outside
//! the buffer. When space ran out but the buffer holds at least [`HEADER_LEN`] bytes, those bytes
//! are a header whose total length is the needed size ([`required_len`] reads it back).
//!
//! # Reading
//!
//! [`Snapshot::parse`] checks everything up front — magic, version, every length, count, offset,
//! limit, alignment, name, reserved field and padding byte, and that the records end exactly at
//! the total length, which must be the length of the input. Iteration and accessors are then
//! infallible.
//!
//! # Panic freedom
//!
//! Nothing here panics or indexes out of bounds, whatever the bytes or the calls: every field
//! goes through `crate::bytes`, all arithmetic on untrusted values is checked, and views are
//! only handed out over validated bytes.

use crate::bytes::{self, align8, len32};

/// The snapshot's magic number, `"PCWS"`, as stored at offset 0.
pub const SNAPSHOT_MAGIC: [u8; 4] = *b"PCWS";
/// The format version this module writes and reads.
pub const SNAPSHOT_VERSION: u16 = 2;
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
    /// Set record offsets (the offset table follows the fixed part).
    pub mod set {
        pub const SET_LEN: usize = 0;
        pub const INDEX: usize = 4;
        pub const FLAGS: usize = 6;
        pub const COUNTER_COUNT: usize = 8;
        pub const RESERVED: usize = 10;
        pub const INSTANCE_COUNT: usize = 12;
        pub const OFFSETS: usize = 16;
        pub const LEN: usize = 16;
    }
    /// Instance record offsets (the name follows the fixed part, then the values).
    pub mod instance {
        pub const ID: usize = 0;
        pub const PARENT: usize = 4;
        pub const NAME_LEN: usize = 8;
        pub const RESERVED: usize = 10;
        pub const VALUES: usize = 16;
        pub const LEN: usize = 16;
    }
}

use field::{header as hf, instance as inf, set as sf};

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
    /// its set or the snapshot, an offset-table entry is not where the instance is, bytes are
    /// left over, or the input is longer than the total length).
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
    /// The instance name at `offset` is longer than [`MAX_NAME_UNITS`] or contains a NUL unit.
    BadName {
        /// Offset of the length field or of the offending unit.
        offset: usize,
    },
    /// A reserved field, flag bit or padding byte at `offset` is not zero.
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
            Self::BadName { offset } => write!(f, "bad instance name at byte {offset}"),
            Self::Reserved { offset } => write!(f, "reserved byte not zero at byte {offset}"),
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

/// Bytes of an instance record, or `None` past any sane size.
fn instance_len(name_units: usize, counter_count: usize) -> Option<usize> {
    if name_units > usize::from(MAX_NAME_UNITS) {
        return None;
    }
    counter_count
        .checked_mul(8)?
        .checked_add(inf::LEN + name_area_len(name_units))
}

/// Bytes of a set record's fixed part and offset table.
fn set_head_len(instance_count: usize) -> Option<usize> {
    align8(instance_count.checked_mul(4)?)?.checked_add(sf::LEN)
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
    if bytes::u16_at(bytes, at(sf::RESERVED)) != 0 {
        return Err(SnapshotError::Reserved {
            offset: at(sf::RESERVED),
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
    let count = count as usize;
    let head = set_head_len(count).ok_or(bad_len)?;
    if head > set_len {
        return Err(bad_len);
    }
    let table_end = at(sf::OFFSETS).saturating_add(count.saturating_mul(4));
    check_zero(bytes, table_end, at(head))?;
    let mut ipos = at(head);
    let counters = usize::from(counters);
    // `head <= set_len`: the table is inside the set. The records are whole words: the set
    // and its head are multiples of 8 bytes.
    let table = bytes.get(at(sf::OFFSETS)..table_end).unwrap_or(&[]);
    let mut rest = bytes.get(ipos..end).unwrap_or(&[]).as_chunks::<8>().0;
    for entry in table.as_chunks::<4>().0 {
        if u32::from_le_bytes(*entry) as usize != ipos {
            // The entry's offset, worked out only here (the loop keeps no index).
            let i = entry.as_ptr().addr().wrapping_sub(table.as_ptr().addr());
            return Err(SnapshotError::BadLength {
                offset: at(sf::OFFSETS).saturating_add(i),
            });
        }
        // The usual case in one pass over the record; anything it does not accept is
        // examined field by field, for the exact error.
        if let Some(after) = valid_instance(rest, counters) {
            // Inside the set: no overflow.
            ipos = ipos.wrapping_add(8 * (rest.len() - after.len()));
            rest = after;
        } else {
            ipos = check_instance(bytes, ipos, end, counters)?;
            rest = bytes.get(ipos..end).unwrap_or(&[]).as_chunks::<8>().0;
        }
    }
    if ipos != end {
        return Err(bad_len);
    }
    Ok(index)
}

/// Whether `records` (whole words) starts with a valid instance record of `counters` values;
/// the words after it if so. Accepts only what [`check_instance`] accepts (word by word: the
/// name length and reserved bytes, then the name area's whole words of units, then its last
/// word of units, NUL and padding); `None` sends the record to [`check_instance`].
#[inline]
fn valid_instance(records: &[[u8; 8]], counters: usize) -> Option<&[[u8; 8]]> {
    let [_, len, tail @ ..] = records else {
        return None;
    };
    let word = u64::from_le_bytes(*len);
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the low 16 bits: the name length field"
    )]
    let units = usize::from(word as u16);
    if word >> 16 != 0 || units > usize::from(MAX_NAME_UNITS) {
        return None;
    }
    let (_, tail) = tail.split_at_checked(counters)?;
    // The name area: `units / 4` whole words of units, then a last word.
    let (full, tail) = tail.split_at_checked(units / 4)?;
    let (last, after) = tail.split_first()?;
    // Whole words of units: no lane is 0 (`zero_lanes`, its mask applied once at the end).
    let zero = full.iter().fold(0, |z, w| {
        let w = u64::from_le_bytes(*w);
        z | (w.wrapping_sub(bytes::LANE_ONES) & !w)
    }) & bytes::LANE_HIGHS;
    // The last word: `units % 4` units, then zeroes (the NUL and the padding).
    let last = u64::from_le_bytes(*last);
    let name = (1u64 << (16 * (units % 4))) - 1;
    let zero = zero | bytes::zero_lanes(last | !name);
    (zero == 0 && last & !name == 0).then_some(after)
}

/// Validates the instance record at `pos` (8-aligned) that must end by `end`; returns its end.
fn check_instance(
    bytes: &[u8],
    pos: usize,
    end: usize,
    counters: usize,
) -> Result<usize, SnapshotError> {
    let at = |off: usize| pos.saturating_add(off);
    let bad_len = SnapshotError::BadLength { offset: pos };
    if at(inf::LEN) > end {
        return Err(bad_len);
    }
    // The name length and the reserved bytes after it, as one word.
    let word = bytes::array::<8>(bytes, at(inf::NAME_LEN)).map_or(0, u64::from_le_bytes);
    if word >> 16 != 0 {
        check_zero(bytes, at(inf::RESERVED), at(inf::LEN))?;
    }
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the low 16 bits: the name length field"
    )]
    let units = word as u16;
    if units > MAX_NAME_UNITS {
        return Err(SnapshotError::BadName {
            offset: at(inf::NAME_LEN),
        });
    }
    let units = usize::from(units);
    let len = instance_len(units, counters).ok_or(bad_len)?;
    let next = pos.checked_add(len).ok_or(bad_len)?;
    if next > end {
        return Err(bad_len);
    }
    let name_at = next.saturating_sub(name_area_len(units));
    let name_end = name_at.saturating_add(2 * units);
    let name = bytes.get(name_at..name_end).unwrap_or(&[]);
    if bytes::has_zero_unit_le(name)
        && let Some(u) = name.as_chunks::<2>().0.iter().position(|u| *u == [0, 0])
    {
        return Err(SnapshotError::BadName {
            offset: name_at.saturating_add(2 * u),
        });
    }
    // The NUL and the padding: the top 2 to 8 bytes of the record's last word.
    let tail = next.saturating_sub(name_end).clamp(1, 8);
    let last = bytes::array::<8>(bytes, next.saturating_sub(8)).map_or(0, u64::from_le_bytes);
    if last >> (64 - 8 * tail) != 0 {
        check_zero(bytes, name_end, next)?;
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
        let set = SetView {
            bytes: self.bytes,
            pos: self.pos,
        };
        self.pos = self.pos.saturating_add(set.byte_len());
        Some(set)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Sets<'_> {}

/// One validated set (counterset) of a [`Snapshot`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetView<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> SetView<'a> {
    /// Offset of this record in the snapshot.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes of this record, its instances included.
    pub fn byte_len(&self) -> usize {
        bytes::u32_at(self.bytes, self.pos.saturating_add(sf::SET_LEN)) as usize
    }

    /// The counterset's index in the manifest.
    pub fn index(&self) -> u16 {
        bytes::u16_at(self.bytes, self.pos.saturating_add(sf::INDEX))
    }

    /// Whether the counterset is multi-instance.
    pub fn multi(&self) -> bool {
        bytes::u16_at(self.bytes, self.pos.saturating_add(sf::FLAGS)) & SET_FLAG_MULTI != 0
    }

    /// Number of counters, hence of values per instance.
    pub fn counter_count(&self) -> u16 {
        bytes::u16_at(self.bytes, self.pos.saturating_add(sf::COUNTER_COUNT))
    }

    /// Number of instances (0 or 1 for a single-instance set).
    pub fn instance_count(&self) -> usize {
        bytes::u32_at(self.bytes, self.pos.saturating_add(sf::INSTANCE_COUNT)) as usize
    }

    /// Instance `i` in O(1) through the offset table, or `None` if `i >= instance_count()`.
    pub fn instance(&self, i: usize) -> Option<InstanceView<'a>> {
        if i >= self.instance_count() {
            return None;
        }
        let entry = self.pos.saturating_add(sf::OFFSETS).saturating_add(4 * i);
        Some(InstanceView {
            bytes: self.bytes,
            pos: bytes::u32_at(self.bytes, entry) as usize,
            counters: usize::from(self.counter_count()),
        })
    }

    /// The instances, in order.
    pub fn instances(&self) -> Instances<'a> {
        let count = self.instance_count();
        Instances {
            bytes: self.bytes,
            pos: self.instance(0).map_or(0, |i| i.pos),
            counters: usize::from(self.counter_count()),
            remaining: count,
        }
    }

    /// The instance records, back to back, from the first to the end of the set.
    pub(crate) fn records(&self) -> &'a [u8] {
        let start = self.instance(0).map_or(0, |i| i.pos);
        let end = self.pos.saturating_add(self.byte_len());
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// Bytes of all the instances' name areas together (see [`InstanceView::name_area`]),
    /// worked out from the set's length without reading the instances: what a V1 reply's
    /// instance names take, padding included.
    pub fn name_areas_len(&self) -> usize {
        let count = self.instance_count();
        let fixed = inf::LEN + 8 * usize::from(self.counter_count());
        // `parse` checked that the set length is exactly its head and its records.
        self.byte_len()
            .saturating_sub(set_head_len(count).unwrap_or(0))
            .saturating_sub(count.saturating_mul(fixed))
    }
}

/// The instances of a [`SetView`], walked record by record (the records of a set follow one
/// another, as the offset table says).
#[derive(Clone, Debug)]
pub struct Instances<'a> {
    bytes: &'a [u8],
    pos: usize,
    counters: usize,
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
            counters: self.counters,
        };
        self.pos = self.pos.saturating_add(instance.byte_len());
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
    counters: usize,
}

impl<'a> InstanceView<'a> {
    /// Offset of this record in the snapshot.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    /// The instance id.
    pub fn id(&self) -> u32 {
        bytes::u32_at(self.bytes, self.pos.saturating_add(inf::ID))
    }

    /// The raw parent field: position in the parent object, or [`PARENT_NONE`].
    pub fn parent(&self) -> u32 {
        bytes::u32_at(self.bytes, self.pos.saturating_add(inf::PARENT))
    }

    /// The parent's position, `None` for [`PARENT_NONE`].
    pub fn parent_position(&self) -> Option<u32> {
        Some(self.parent()).filter(|p| *p != PARENT_NONE)
    }

    /// Name length in UTF-16 units.
    pub fn name_len(&self) -> usize {
        usize::from(bytes::u16_at(
            self.bytes,
            self.pos.saturating_add(inf::NAME_LEN),
        ))
    }

    /// The name as UTF-16LE bytes (`2 × name_len()`, no terminator).
    pub fn name_bytes(&self) -> &'a [u8] {
        let start = self.name_at();
        let end = start.saturating_add(2 * self.name_len());
        self.bytes.get(start..end).unwrap_or(&[])
    }

    /// Offset of the name area in the snapshot.
    fn name_at(&self) -> usize {
        self.pos
            .saturating_add(inf::VALUES)
            .saturating_add(8 * self.counters)
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
        instance_len(self.name_len(), self.counters).unwrap_or(0)
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

    /// The raw values as little-endian bytes (8 per counter).
    pub fn values_bytes(&self) -> &'a [u8] {
        let start = self.pos.saturating_add(inf::VALUES);
        self.bytes
            .get(start..start.saturating_add(8 * self.counters))
            .unwrap_or(&[])
    }

    /// The raw values, one per counter in counterset descriptor order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = u64> + use<'a> {
        self.values_bytes()
            .as_chunks::<8>()
            .0
            .iter()
            .map(|c| u64::from_le_bytes(*c))
    }

    /// The raw value of counter `i`, `None` past the set's counter count.
    pub fn value(&self, i: usize) -> Option<u64> {
        if i >= self.counters {
            return None;
        }
        bytes::array::<8>(self.values_bytes(), 8 * i).map(u64::from_le_bytes)
    }
}

/// The set being written.
#[derive(Clone, Copy, Debug)]
struct OpenSet {
    start: usize,
    /// Offset of the next instance's entry in the offset table.
    entry: usize,
    written: bool,
    counters: u16,
    count: u32,
    added: u32,
}

// `write_instance` stores the fixed fields in this order.
const _: () = assert!(
    inf::ID == 0
        && inf::PARENT == 4
        && inf::NAME_LEN == 8
        && inf::RESERVED == 10
        && inf::VALUES == 16
        && inf::LEN == 16
);

/// Stores `values` as little-endian words at the start of `dst`: up to 8 values as a fixed
/// number of stores (measured: the general loop becomes a `memcpy` call, which costs more than
/// the copy for a few counters).
#[inline]
fn put_values(dst: &mut [[u8; 8]], values: &[u64]) {
    macro_rules! fixed {
        ($($n:literal)*) => {
            match values.len() {
                $($n => {
                    if let (Some(d), Some(v)) = (dst.first_chunk_mut::<$n>(), values.first_chunk::<$n>()) {
                        for (d, v) in d.iter_mut().zip(v) {
                            *d = v.to_le_bytes();
                        }
                    }
                })*
                _ => {
                    for (d, v) in dst.iter_mut().zip(values) {
                        *d = v.to_le_bytes();
                    }
                }
            }
        };
    }
    fixed!(1 2 3 4 5 6 7 8);
}

/// Writes an instance record into `record`, exactly its length: the fixed fields, the values
/// as one block of little-endian `u64`s, then the name area (four units per word; the last
/// word holds the last 0 to 3 units, the NUL and the padding). Every byte is written. Returns
/// whether the name holds a 0 unit (found while copying: the caller refuses the instance).
#[inline]
fn write_instance(
    record: &mut [u8],
    id: u32,
    parent: u32,
    units: u16,
    name: &[u16],
    values: &[u64],
) -> bool {
    let Some((fixed, rest)) = record.split_first_chunk_mut::<{ inf::LEN }>() else {
        return false;
    };
    // Two words: id and parent, then the name length and the reserved zeros.
    let [i0, i1, i2, i3] = id.to_le_bytes();
    let [p0, p1, p2, p3] = parent.to_le_bytes();
    if let Some((head, tail)) = fixed.split_first_chunk_mut::<8>()
        && let Some(tail) = tail.first_chunk_mut::<8>()
    {
        *head = [i0, i1, i2, i3, p0, p1, p2, p3];
        *tail = u64::from(units).to_le_bytes();
    }
    let Some((values_area, name_area)) = rest.split_at_mut_checked(8 * values.len()) else {
        return false;
    };
    put_values(values_area.as_chunks_mut::<8>().0, values);
    let words = name_area.as_chunks_mut::<8>().0;
    let (quads, tail) = name.as_chunks::<4>();
    let mut zero = 0;
    for (dst, quad) in words.iter_mut().zip(quads) {
        let w = bytes::pack4(*quad);
        zero |= bytes::zero_lanes(w);
        *dst = w.to_le_bytes();
    }
    // 0 to 3 units, then the NUL and the padding.
    let mut last = 0u64;
    for (k, unit) in tail.iter().enumerate() {
        zero |= u64::from(*unit == 0);
        last |= u64::from(*unit) << (16 * k);
    }
    if let Some(dst) = words.get_mut(quads.len()) {
        *dst = last.to_le_bytes();
    }
    zero != 0
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

/// Writes `record` into `dst`, exactly its words (`2 + N + name length / 4 + 1`): the fixed
/// fields, the values, then the name area (four units per word; the last word holds the last 0
/// to 3 units, the NUL and the padding). Every byte is written. Returns whether the name holds
/// a 0 unit (found while copying: the caller refuses the instance).
#[inline]
fn write_record<const N: usize>(dst: &mut [[u8; 8]], record: &Record<'_, N>) -> bool {
    let Some(([head, len], rest)) = dst.split_first_chunk_mut::<2>() else {
        return false;
    };
    let [i0, i1, i2, i3] = record.id.to_le_bytes();
    let [p0, p1, p2, p3] = record.parent.to_le_bytes();
    *head = [i0, i1, i2, i3, p0, p1, p2, p3];
    *len = (record.name.len() as u64).to_le_bytes();
    let Some((values, area)) = rest.split_first_chunk_mut::<N>() else {
        return false;
    };
    for (d, v) in values.iter_mut().zip(&record.values) {
        *d = v.to_le_bytes();
    }
    let (quads, tail) = record.name.as_chunks::<4>();
    let Some((last, full)) = area.split_last_mut() else {
        return false;
    };
    // Whole words of units: no lane is 0 (`zero_lanes`, its mask applied once at the end).
    let mut zero = 0;
    for (d, quad) in full.iter_mut().zip(quads) {
        let w = bytes::pack4(*quad);
        zero |= w.wrapping_sub(bytes::LANE_ONES) & !w;
        *d = w.to_le_bytes();
    }
    zero &= bytes::LANE_HIGHS;
    // 0 to 3 units, then the NUL and the padding.
    let mut w = 0u64;
    for (k, unit) in tail.iter().enumerate() {
        zero |= u64::from(*unit == 0);
        w |= u64::from(*unit) << (16 * k);
    }
    *last = w.to_le_bytes();
    zero != 0
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

    /// Starts the set of counterset `index`, which must exceed the previous set's, with
    /// `counter_count` values per instance and `instance_count` instances to follow (at most 1
    /// for a single-instance set).
    ///
    /// # Errors
    /// [`SnapshotError::CountMismatch`] if the previous set is incomplete,
    /// [`SnapshotError::BadIndex`], [`SnapshotError::LimitExceeded`] past a limit; an earlier
    /// error again. Never [`SnapshotError::NoSpace`].
    pub fn begin_set(
        &mut self,
        index: u16,
        multi: bool,
        counter_count: u16,
        instance_count: u32,
    ) -> Result<(), SnapshotError> {
        let result = self.begin_set_inner(index, multi, counter_count, instance_count);
        self.sticky(result)
    }

    fn begin_set_inner(
        &mut self,
        index: u16,
        multi: bool,
        counter_count: u16,
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
        if counter_count > MAX_COUNTERS {
            return Err(SnapshotError::LimitExceeded {
                offset: at(sf::COUNTER_COUNT),
            });
        }
        if instance_count > (if multi { MAX_INSTANCES } else { 1 }) {
            return Err(SnapshotError::LimitExceeded {
                offset: at(sf::INSTANCE_COUNT),
            });
        }
        let len = set_head_len(instance_count as usize).ok_or(SnapshotError::LimitExceeded {
            offset: at(sf::INSTANCE_COUNT),
        })?;
        let written = self.reserve(len, true)?;
        if written {
            let flags = if multi { SET_FLAG_MULTI } else { 0 };
            bytes::set_u16(self.buf, at(sf::INDEX), index);
            bytes::set_u16(self.buf, at(sf::FLAGS), flags);
            bytes::set_u16(self.buf, at(sf::COUNTER_COUNT), counter_count);
            bytes::set_u32(self.buf, at(sf::INSTANCE_COUNT), instance_count);
        }
        self.set_count += 1;
        self.last_index = Some(index);
        self.set = Some(OpenSet {
            start,
            entry: at(sf::OFFSETS),
            written,
            counters: counter_count,
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
    /// counter announced.
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
        // The usual case: no error so far, a set open and written, the right number of values,
        // a name of a valid length, and room for the record.
        if self.error.is_none()
            && !self.overflow
            && let Some(set) = self.set.as_mut()
            && set.written
            && values.len() == usize::from(set.counters)
            && name.len() <= usize::from(MAX_NAME_UNITS)
        {
            let start = self.pos;
            // Small: at most 16 + 8 × 1024 + 2 048 bytes past a position inside the buffer.
            let end = start.saturating_add(inf::LEN + 8 * values.len() + name_area_len(name.len()));
            if end <= MAX_TOTAL_LEN
                && let Some(record) = self.buf.get_mut(start..end)
            {
                #[allow(
                    clippy::cast_possible_truncation,
                    reason = "at most MAX_NAME_UNITS, checked above"
                )]
                let units = name.len() as u16;
                if !write_instance(record, id, parent, units, name, values) {
                    bytes::set_u32(self.buf, set.entry, len32(start));
                    set.entry = set.entry.saturating_add(4);
                    set.added += 1;
                    self.pos = end;
                    if set.added == set.count {
                        self.close_set();
                    }
                    return Ok(());
                }
                // A NUL unit: reported by the general path below.
            }
        }
        self.instance_general(id, parent, name, values)
    }

    /// Adds the next instances of the open set, as many calls of [`instance`](Self::instance)
    /// would, with `N` values each (a counter count known where the records are made): the
    /// checks that hold for the whole set (no error so far, a set open and written with `N`
    /// counters) are made once, and the loop keeps its position in registers, so each record
    /// costs its copy, its length check and its offset-table entry.
    ///
    /// # Errors
    /// As [`instance`](Self::instance), for the first record refused; the records after it are
    /// not read.
    pub fn instances<'n, const N: usize, I>(&mut self, records: I) -> Result<(), SnapshotError>
    where
        I: IntoIterator<Item = Record<'n, N>>,
    {
        let mut records = records.into_iter();
        let Some(set) = self.set else {
            return self.instances_general(None, records);
        };
        if self.error.is_some() || self.overflow || !set.written || usize::from(set.counters) != N {
            return self.instances_general(None, records);
        }
        // The table's entries still to fill, then the space left for records (the format's
        // limit included) as whole words: records are whole words from a multiple of 8.
        let limit = self.buf.len().min(MAX_TOTAL_LEN);
        let buf = self.buf.get_mut(..limit).unwrap_or_default();
        let (head, rest) = buf.split_at_mut_checked(self.pos).unwrap_or_default();
        let mut rest = rest.as_chunks_mut::<8>().0;
        let mut table = head
            .get_mut(set.entry..)
            .unwrap_or_default()
            .as_chunks_mut::<4>()
            .0
            .iter_mut()
            .take((set.count - set.added) as usize);
        let mut pos = self.pos;
        // A record the loop does not write goes to the general path, which refuses it (too
        // many records, a name too long) or only counts it (no room): so its values are never
        // written and need not be kept. A name with a NUL unit is reported here, its record
        // left as written, as `instance` leaves it.
        let mut refused = None;
        let mut nul = false;
        let mut filled = 0;
        for record in records.by_ref() {
            let units = record.name.len();
            let Some(slot) = table.next() else {
                refused = Some((record.id, record.parent, record.name));
                break;
            };
            // At most 2 + 1 024 + 256 words (a longer name is refused below).
            let words = 2 + N + units / 4 + 1;
            let dst = if units > usize::from(MAX_NAME_UNITS) {
                None
            } else {
                rest.split_at_mut_checked(words)
            };
            let Some((dst, after)) = dst else {
                refused = Some((record.id, record.parent, record.name));
                break;
            };
            if write_record(dst, &record) {
                refused = Some((record.id, record.parent, record.name));
                nul = true;
                break;
            }
            #[allow(
                clippy::cast_possible_truncation,
                reason = "inside the buffer, which is cut at MAX_TOTAL_LEN"
            )]
            {
                *slot = (pos as u32).to_le_bytes();
            }
            pos += 8 * words;
            rest = after;
            filled += 1;
        }
        let added = set.added + filled;
        self.pos = pos;
        self.set = Some(OpenSet {
            entry: set.entry.saturating_add(4 * filled as usize),
            added,
            ..set
        });
        if added == set.count {
            self.close_set();
        }
        if nul && let Some((_, _, name)) = refused {
            return self.nul_unit(pos.saturating_add(inf::VALUES + 8 * N), name);
        }
        let refused = refused.map(|(id, parent, name)| Record {
            id,
            parent,
            name,
            values: [0; N],
        });
        self.instances_general(refused, records)
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

    /// [`Self::instance`] for every other case (errors, a measuring writer, no room): kept out
    /// of line so the usual case saves and restores fewer registers.
    #[cold]
    #[inline(never)]
    fn instance_general(
        &mut self,
        id: u32,
        parent: u32,
        name: &[u16],
        values: &[u64],
    ) -> Result<(), SnapshotError> {
        let result = self.instance_inner(id, parent, name, values);
        self.sticky(result)
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
        let units = u16::try_from(name.len())
            .ok()
            .filter(|n| *n <= MAX_NAME_UNITS)
            .ok_or(SnapshotError::BadName {
                offset: at(inf::NAME_LEN),
            })?;
        let len = instance_len(name.len(), values.len()).ok_or(SnapshotError::LimitExceeded {
            offset: hf::TOTAL_LEN,
        })?;
        // The name is checked for NUL units while it is copied (a refused instance leaves its
        // bytes in the buffer, but no snapshot is ever returned after an error); a measuring
        // writer, or one out of space, checks it apart.
        let nul = match self.buf.get_mut(start..at(len)) {
            Some(record) if !self.overflow => {
                write_instance(record, id, parent, units, name, values)
            }
            _ => bytes::has_zero_unit(name),
        };
        if nul && let Some(i) = name.iter().position(|u| *u == 0) {
            return Err(SnapshotError::BadName {
                offset: at(inf::VALUES + 8 * values.len()).saturating_add(2 * i),
            });
        }
        self.reserve(len, false)?;
        if set.written {
            bytes::set_u32(self.buf, set.entry, len32(start));
        }
        set.entry = set.entry.saturating_add(4);
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

    /// Counts `len` more bytes; returns true if they fit (and everything before did), then
    /// zeroes them if `zero` (so the caller writes its fields over zeroes; otherwise the caller
    /// writes every byte).
    fn reserve(&mut self, len: usize, zero: bool) -> Result<bool, SnapshotError> {
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
        if zero {
            bytes::zero(self.buf, start, len);
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
        counters: u16,
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
            wr.begin_set(s.index, s.multi, s.counters, s.instances.len() as u32)?;
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
                    counters: set.counter_count(),
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
                counters: 3,
                instances: vec![inst(0, PARENT_NONE, "", &[1, u64::MAX, 0])],
            },
            MSet {
                index: 1,
                multi: false,
                counters: 2,
                instances: vec![],
            },
            MSet {
                index: 2,
                multi: true,
                counters: 2,
                instances: vec![],
            },
            MSet {
                index: 3,
                multi: true,
                counters: 1,
                instances: vec![inst(7, PARENT_NONE, "_Total", &[42])],
            },
            MSet {
                index: 9,
                multi: true,
                counters: 2,
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
                counters: 0,
                instances: vec![inst(5, PARENT_NONE, "no counters", &[])],
            },
        ]
    }

    #[test]
    fn golden_layout_of_a_small_snapshot() {
        let sets = [MSet {
            index: 5,
            multi: true,
            counters: 1,
            instances: vec![inst(0x11, PARENT_NONE, "ab", &[0x0102_0304_0506_0708])],
        }];
        let bytes = round_trip(&sets);
        let mut expect = Vec::new();
        expect.extend_from_slice(b"PCWS");
        expect.extend_from_slice(&2u16.to_le_bytes());
        expect.extend_from_slice(&40u16.to_le_bytes());
        expect.extend_from_slice(&96u32.to_le_bytes()); // total
        expect.extend_from_slice(&1u32.to_le_bytes()); // sets
        expect.extend_from_slice(&HDR.perf_time.to_le_bytes());
        expect.extend_from_slice(&HDR.perf_freq.to_le_bytes());
        expect.extend_from_slice(&HDR.system_time.to_le_bytes());
        // set at 40: len 56, index 5, multi, 1 counter, reserved, 1 instance, table [64] + pad
        expect.extend_from_slice(&56u32.to_le_bytes());
        expect.extend_from_slice(&5u16.to_le_bytes());
        expect.extend_from_slice(&1u16.to_le_bytes());
        expect.extend_from_slice(&1u16.to_le_bytes());
        expect.extend_from_slice(&0u16.to_le_bytes());
        expect.extend_from_slice(&1u32.to_le_bytes());
        expect.extend_from_slice(&64u32.to_le_bytes());
        expect.extend_from_slice(&[0; 4]);
        // instance at 64: id, parent, name len 2, reserved, the value, then "ab", the NUL and
        // padding to 8 bytes (a V1 name area)
        expect.extend_from_slice(&0x11u32.to_le_bytes());
        expect.extend_from_slice(&u32::MAX.to_le_bytes());
        expect.extend_from_slice(&2u16.to_le_bytes());
        expect.extend_from_slice(&[0; 6]);
        expect.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        expect.extend_from_slice(b"a\0b\0\0\0\0\0");
        let snap = Snapshot::parse(&bytes).unwrap();
        let set = snap.sets().next().unwrap();
        assert_eq!(set.name_areas_len(), 8);
        assert_eq!(set.instance(0).unwrap().name_area(), b"a\0b\0\0\0\0\0");
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
            wr.begin_set(0, true, 1, 2)?;
            wr.instance(0, PARENT_NONE, &[], &[1])?;
            wr.begin_set(1, true, 1, 0)
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
        let (r, fin) = run(&|wr| wr.begin_set(0, true, 1, 1));
        assert_eq!(r, Ok(()));
        assert_eq!(fin, Err(mismatch_of(1, 0)));
        // Too many instances, and an instance without a set.
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, 1, 1)?;
            wr.instance(0, PARENT_NONE, &[], &[1])?;
            wr.instance(1, PARENT_NONE, &[], &[1])
        });
        assert_eq!(r, Err(mismatch_of(0, 1)));
        let (r, _) = run(&|wr| wr.instance(1, PARENT_NONE, &[], &[]));
        assert_eq!(r, Err(mismatch_of(0, 1)));
        // Wrong number of values.
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, 2, 1)?;
            wr.instance(0, PARENT_NONE, &[], &[1])
        });
        assert_eq!(r, Err(mismatch_of(2, 1)));
        // Index order.
        let (r, _) = run(&|wr| {
            wr.begin_set(3, true, 0, 0)?;
            wr.begin_set(3, true, 0, 0)
        });
        assert_eq!(r, Err(E::BadIndex { offset: 56 + 4 }));
        // Limits.
        let (r, _) = run(&|wr| wr.begin_set(0, false, 1, 2));
        assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 12 }));
        let (r, _) = run(&|wr| wr.begin_set(0, true, 1, MAX_INSTANCES + 1));
        assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 12 }));
        let (r, _) = run(&|wr| wr.begin_set(0, true, MAX_COUNTERS + 1, 0));
        assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 8 }));
        let (r, _) = run(&|wr| {
            for i in 0..=MAX_SETS {
                wr.begin_set(i as u16, false, 0, 0)?;
            }
            Ok(())
        });
        assert_eq!(r, Err(E::LimitExceeded { offset: 12 }));
        // Names.
        let long = vec![0x41u16; usize::from(MAX_NAME_UNITS) + 1];
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, 0, 1)?;
            wr.instance(0, PARENT_NONE, &long, &[])
        });
        assert_eq!(r, Err(E::BadName { offset: 64 + 8 }));
        let (r, _) = run(&|wr| {
            wr.begin_set(0, true, 0, 1)?;
            wr.instance(0, PARENT_NONE, &[0x41, 0, 0x42], &[])
        });
        assert_eq!(
            r,
            Err(E::BadName {
                offset: 64 + 16 + 2
            })
        );
        // The total length is bounded without ever allocating it: MAX_SETS sets of
        // MAX_INSTANCES instances of MAX_COUNTERS counters exceed u32.
        let mut wr = SnapshotWriter::measuring(HDR);
        let values = vec![0u64; usize::from(MAX_COUNTERS)];
        let mut result = Ok(());
        'outer: for s in 0..MAX_SETS {
            if let Err(e) = wr.begin_set(s as u16, true, MAX_COUNTERS, MAX_INSTANCES) {
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

    #[test]
    fn parse_rejects_hand_corruptions() {
        use SnapshotError as E;
        let sets = hand_cases();
        let good = encode(HDR, &sets);
        let with = |off: usize, patch: &[u8]| {
            let mut b = good.clone();
            b[off..off + patch.len()].copy_from_slice(patch);
            Snapshot::parse(&b).map(|_| ())
        };
        assert_eq!(with(0, b"PCWX"), Err(E::BadMagic));
        assert_eq!(
            with(4, &1u16.to_le_bytes()),
            Err(E::UnsupportedVersion {
                found: 1,
                supported: 2
            }),
            "version 1 put names before values, padded differently"
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
        // A version-3 header is reported as such even when it is shorter than ours.
        assert_eq!(
            Snapshot::parse(b"PCWS\x03\x00"),
            Err(E::UnsupportedVersion {
                found: 3,
                supported: 2
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
            with(first + 10, &1u16.to_le_bytes()),
            Err(E::Reserved { offset: first + 10 })
        );
        let set = snap.find_set(3).unwrap();
        assert_eq!(
            with(set.offset() + 20, &[1]),
            Err(E::Reserved {
                offset: set.offset() + 20
            }),
            "offset-table padding"
        );
        let big = snap.find_set(9).unwrap();
        let entry = big.offset() + 16 + 4;
        let moved = (big.instance(1).unwrap().offset() as u32 + 8).to_le_bytes();
        assert_eq!(
            with(entry, &moved),
            Err(E::BadLength { offset: entry }),
            "an offset-table entry that is not where its instance is"
        );
        let i = set.instance(0).unwrap();
        for reserved in 10..16 {
            assert_eq!(
                with(i.offset() + reserved, &[1]),
                Err(E::Reserved {
                    offset: i.offset() + reserved
                })
            );
        }
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
    fn name_areas_are_checked_and_add_up() {
        use SnapshotError as E;
        let good = encode(HDR, &hand_cases());
        let with = |off: usize, patch: &[u8]| {
            let mut b = good.clone();
            b[off..off + patch.len()].copy_from_slice(patch);
            Snapshot::parse(&b).map(|_| ())
        };
        let snap = Snapshot::parse(&good).unwrap();
        // "a" in set 9 (2 counters): values at +16, the name at +32, its NUL at +34, padding
        // from +36 to +40.
        let a = snap.find_set(9).unwrap().instance(0).unwrap();
        for (at, what) in [
            (34, "the NUL"),
            (35, "the NUL"),
            (37, "name padding"),
            (39, "name padding"),
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
            with(a.offset() + 32, &[0, 0]),
            Err(E::BadName {
                offset: a.offset() + 32
            }),
            "NUL unit"
        );
        assert_eq!(
            with(a.offset() + 8, &(MAX_NAME_UNITS + 1).to_le_bytes()),
            Err(E::BadName {
                offset: a.offset() + 8
            })
        );
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
                    i.name_area().as_ptr() as usize - good.as_ptr() as usize + i.name_area().len()
                );
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

    fn arb_inst(counters: u16) -> impl Strategy<Value = MInst> {
        (
            any::<u32>(),
            prop_oneof![Just(PARENT_NONE), 0u32..8],
            prop_oneof![
                4 => proptest::collection::vec(1u16..=u16::MAX, 0..12),
                1 => proptest::collection::vec(1u16..=u16::MAX, 1000..=1023),
            ],
            proptest::collection::vec(any::<u64>(), usize::from(counters)),
        )
            .prop_map(|(id, parent, name, values)| MInst {
                id,
                parent,
                name,
                values,
            })
    }

    fn arb_sets() -> impl Strategy<Value = Vec<MSet>> {
        proptest::collection::vec(
            (any::<bool>(), 0u16..6, 1u16..200).prop_flat_map(|(multi, counters, step)| {
                let max = if multi { 6 } else { 1 };
                (
                    Just(step),
                    Just(multi),
                    Just(counters),
                    proptest::collection::vec(arb_inst(counters), 0..=max),
                )
            }),
            0..5,
        )
        .prop_map(|raw| {
            let mut index = 0u16;
            raw.into_iter()
                .map(|(step, multi, counters, instances)| {
                    index = index.saturating_add(step);
                    MSet {
                        index,
                        multi,
                        counters,
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
            if set.instance_count() > 0 {
                // With no instance the counter count is not observable in the bytes.
                fields.push(Field {
                    offset: p + 8,
                    size: 2,
                    what: "counter count",
                });
            }
            fields.push(Field {
                offset: p + 12,
                size: 4,
                what: "instance count",
            });
            for (i, instance) in set.instances().enumerate() {
                fields.push(Field {
                    offset: p + 16 + 4 * i,
                    size: 4,
                    what: "offset table entry",
                });
                fields.push(Field {
                    offset: instance.offset() + 8,
                    size: 2,
                    what: "name length",
                });
            }
        }
        fields
    }

    /// Whether `err` is a right rejection of the field `what` bumped. A bumped count moves
    /// the records it describes, so the mismatch may surface as the count itself (a limit) or
    /// as the first length, offset, padding byte or name unit that no longer lines up.
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
            // The offset table grows over its padding or the first instance; a bumped counter
            // count moves the name areas, which start after the values.
            Err(E::Reserved { .. }) => {
                matches!(what, "name length" | "instance count" | "counter count")
            }
            Err(E::BadName { .. }) => matches!(what, "name length" | "counter count"),
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
            for version in [0u16, 1, 3, u16::MAX] {
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
            counters in prop_oneof![4 => Just(3u16), 1 => Just(2u16)],
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
                    wr.begin_set(2, true, counters, announced)?;
                    if batch {
                        let (a, b) = records.split_at(split.min(records.len()));
                        wr.instances(a.iter().copied())?;
                        wr.instances(b.iter().copied())?;
                    } else {
                        for r in &records {
                            wr.instance(r.id, r.parent, r.name, &r.values)?;
                        }
                    }
                    wr.begin_set(5, false, 1, 1)?;
                    wr.instances([Record { id: 0, parent: PARENT_NONE, name: &[], values: [9] }])
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
                    .map(|r| (r.id, r.parent, r.name.to_vec(), r.values.to_vec()))
                    .collect();
                prop_assert_eq!(decoded, given);
            }
        }
    }
}
