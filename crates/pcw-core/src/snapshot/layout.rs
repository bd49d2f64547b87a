// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the reader and the writer share of the layout: the field aliases, the fixed words of an
//! instance definition, the clocks, and the lengths of names, blocks, records and sets.

use crate::bytes::len32;
use crate::v1::wire::PERF_NO_UNIQUE_ID;
use crate::v1::writer::place_counter;

use super::MAX_NAME_UNITS;
use super::field::{block as bf, identity as idf, instance as inf, set as sf};

/// `NameOffset` of every instance record: the name follows the definition.
pub(super) const NAME_OFFSET: u64 = inf::LEN as u64;
/// An instance definition's second word: `ParentObjectInstance` 0, `UniqueID` −1.
pub(super) const DEF_WORD1: u64 = 0xFFFF_FFFF_0000_0000;
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
pub(super) const fn round8(n: usize) -> usize {
    (n + 7) & !7
}

/// The counter block length of counters of `sizes` (each 0, 4 or 8); `Err` with the position
/// of the first other size.
pub(super) fn block_len_of(sizes: &[u8]) -> Result<usize, usize> {
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
pub(super) fn slots(sizes: &[u8]) -> Slots<'_> {
    Slots {
        sizes: sizes.iter(),
        end: len32(bf::LEN),
    }
}

/// The iterator of [`slots`].
#[derive(Clone, Debug)]
pub(super) struct Slots<'a> {
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
pub(super) fn instance_len(name_units: usize, block_len: usize) -> Option<usize> {
    if name_units > usize::from(MAX_NAME_UNITS) {
        return None;
    }
    block_len.checked_add(inf::LEN + name_area_len(name_units))
}

/// Bytes of a set record's fixed part, counter sizes and identity table.
pub(super) fn set_head_len(counters: usize, instance_count: usize) -> Option<usize> {
    instance_count
        .checked_mul(idf::LEN)?
        .checked_add(sf::LEN + round8(counters))
}
