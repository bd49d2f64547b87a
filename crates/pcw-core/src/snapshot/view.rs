// SPDX-License-Identifier: MIT OR Apache-2.0
//! The reader: a snapshot checked once ([`Snapshot::parse`]), then read through views of its
//! sets and instances that need no further checks.

use crate::bytes::{self};

use super::check::check_set;
use super::field::{header as hf, identity as idf, instance as inf, set as sf};
use super::layout::{SnapshotHeader, instance_len, name_area_len, round8, slots};
use super::{
    HEADER_LEN, MAX_NAME_UNITS, MAX_SETS, PARENT_NONE, SET_FLAG_MULTI, SNAPSHOT_MAGIC,
    SNAPSHOT_VERSION, SnapshotError,
};
/// Reads the header of a snapshot, complete or not, and returns the total length it announces:
/// what the DLL reads after a `STATUS_BUFFER_TOO_SMALL` reply that carries the header (see
/// [`SnapshotWriter::finish`](super::SnapshotWriter::finish)).
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
    total_len(bytes::u32_at(bytes, hf::TOTAL_LEN))
}

/// The header's total length `total`, checked.
fn total_len(total: u32) -> Result<usize, SnapshotError> {
    let total = total as usize;
    if total < HEADER_LEN || !total.is_multiple_of(8) {
        return Err(SnapshotError::BadLength {
            offset: hf::TOTAL_LEN,
        });
    }
    Ok(total)
}

/// The header's first word when its magic, version and header length are this module's: the
/// one comparison [`Snapshot::parse`] makes before it reads the total length.
const HEADER_WORD: u64 = {
    let [m0, m1, m2, m3] = SNAPSHOT_MAGIC;
    let [v0, v1] = SNAPSHOT_VERSION.to_le_bytes();
    // 40: its two low bytes are the whole value.
    let [h0, h1, ..] = HEADER_LEN.to_le_bytes();
    u64::from_le_bytes([m0, m1, m2, m3, v0, v1, h0, h1])
};
const _: () = assert!(hf::MAGIC == 0 && hf::VERSION == 4 && hf::HEADER_LEN == 6);
const _: () = assert!(hf::TOTAL_LEN == 8 && hf::SET_COUNT == 12);

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
        // The header's first two words, read once; zero if `bytes` is shorter.
        let head = bytes.first_chunk::<16>().copied().unwrap_or([0; 16]);
        let word = head
            .first_chunk::<8>()
            .map_or(0, |w| u64::from_le_bytes(*w));
        // The usual header in one comparison; any other goes field by field, for the error.
        let total = if word == HEADER_WORD && bytes.len() >= HEADER_LEN {
            total_len(bytes::u32_at(&head, hf::TOTAL_LEN))?
        } else {
            required_len(bytes)?
        };
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
        // `required_len` accepted: `bytes` holds the header.
        let set_count = bytes::u32_at(&head, hf::SET_COUNT);
        if set_count > MAX_SETS {
            return Err(SnapshotError::LimitExceeded {
                offset: hf::SET_COUNT,
            });
        }
        let mut pos = HEADER_LEN;
        let mut min_index = 0;
        for _ in 0..set_count {
            pos = check_set(bytes, pos, &mut min_index)?;
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

    /// The set of manifest index `index`, if present: O(sets before it), the sets being in
    /// order of increasing index (`parse` checked), read only for their length and index until
    /// the one wanted.
    pub fn find_set(&self, index: u16) -> Option<SetView<'a>> {
        let mut pos = HEADER_LEN;
        for _ in 0..self.set_count() {
            let [l0, l1, l2, l3, i0, i1, ..] = fixed_part(self.bytes, pos);
            let found = u16::from_le_bytes([i0, i1]);
            if found >= index {
                return (found == index).then(|| SetView::at(self.bytes, pos));
            }
            pos = pos.wrapping_add(u32::from_le_bytes([l0, l1, l2, l3]) as usize);
        }
        None
    }
}

/// The fixed part of the set record at `pos` of `bytes` (zeros if out of range, which a set of
/// a parsed snapshot never is).
#[inline]
fn fixed_part(bytes: &[u8], pos: usize) -> [u8; sf::LEN] {
    bytes
        .get(pos..)
        .and_then(<[u8]>::first_chunk::<{ sf::LEN }>)
        .copied()
        .unwrap_or([0; sf::LEN])
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

    #[inline]
    fn next(&mut self) -> Option<SetView<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let set = SetView::at(self.bytes, self.pos);
        // Inside the snapshot (`parse` checked): no overflow.
        self.pos = self.pos.wrapping_add(set.byte_len());
        Some(set)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Sets<'_> {}

/// One validated set (counterset) of a [`Snapshot`]. Its fixed fields, counter sizes and
/// records are located once, when the view is made, so its accessors are plain field reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetView<'a> {
    bytes: &'a [u8],
    pos: usize,
    sizes: &'a [u8],
    records: &'a [u8],
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
        let fixed = fixed_part(bytes, pos);
        let u16_at = |off: usize| bytes::u16_at(&fixed, off);
        let len = bytes::u32_at(&fixed, sf::SET_LEN);
        let counters = u16_at(sf::COUNTER_COUNT);
        let count = bytes::u32_at(&fixed, sf::INSTANCE_COUNT);
        // The record, its sizes and its records, whose bounds `parse` checked: the sizes
        // follow the fixed part, the records the sizes' words and the identity table.
        let set = bytes
            .get(pos..)
            .and_then(|b| b.get(..len as usize))
            .unwrap_or(&[]);
        let sizes_end = sf::SIZES + usize::from(counters);
        let records_at = (sf::SIZES + round8(usize::from(counters)))
            .saturating_add((count as usize).saturating_mul(idf::LEN));
        Self {
            bytes,
            pos,
            sizes: set.get(sf::SIZES..sizes_end).unwrap_or(&[]),
            records: set.get(records_at..).unwrap_or(&[]),
            len,
            index: u16_at(sf::INDEX),
            flags: u16_at(sf::FLAGS),
            counters,
            block_len: u16_at(sf::BLOCK_LEN),
            count,
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
    pub const fn counter_sizes(&self) -> &'a [u8] {
        self.sizes
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

    /// Offset of the first instance record in the snapshot: the records end the set.
    fn records_at(&self) -> usize {
        self.pos
            .wrapping_add(self.byte_len())
            .wrapping_sub(self.records.len())
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
            // The identity table precedes the records.
            ident: self
                .records_at()
                .wrapping_sub(idf::LEN.wrapping_mul(self.instance_count())),
            sizes: self.sizes,
            block_len: self.block_len(),
            remaining: self.instance_count(),
        }
    }

    /// The instance records, back to back, from the first to the end of the set: exactly the
    /// instance definitions, names and counter blocks of the V1 object of this set, for counter
    /// definitions laid out as [`Self::counter_layout`] says.
    pub const fn records(&self) -> &'a [u8] {
        self.records
    }

    /// Bytes of all the instances' name areas together (see [`InstanceView::name_area`]),
    /// worked out from the set's length without reading the instances: what a V1 reply's
    /// instance names take, padding included.
    pub fn name_areas_len(&self) -> usize {
        let fixed = inf::LEN + self.block_len();
        // `parse` checked that the set length is exactly its head and its records.
        self.records
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
