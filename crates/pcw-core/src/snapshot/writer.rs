// SPDX-License-Identifier: MIT OR Apache-2.0
//! The writer: sets opened in index order, their records written in batches straight into the
//! caller's buffer.

use crate::bytes::{self, len32};
use crate::v1::writer::place_counter;

use super::field::{block as bf, header as hf, identity as idf, instance as inf, set as sf};
use super::layout::{
    DEF_WORD1, NAME_OFFSET, SnapshotHeader, block_len_of, instance_len, name_area_len, round8,
    set_head_len, slots,
};
use super::{
    HEADER_LEN, MAX_COUNTERS, MAX_INSTANCES, MAX_NAME_UNITS, MAX_SETS, MAX_TOTAL_LEN,
    SET_FLAG_MULTI, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, SnapshotError,
};
/// The set being written.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenSet {
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
pub(super) const fn definition(units: usize) -> [[u8; 8]; 3] {
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
/// A name of fewer than 8 units takes its area's one or two words as [`short_name_words`]
/// builds them (the NUL and the padding in them); a longer one has the area's last word zeroed
/// first, then a name of 8 to 16 units is copied as its first and its last 8 units,
/// overlapping in the middle, so a usual name takes a few wide loads and stores whatever its
/// length, and a longer one eight units at a time and its last eight.
#[expect(
    clippy::inline_always,
    reason = "part of the per-record copy; measured with callgrind: a call per record costs \
              more than the copy of a short name"
)]
#[inline(always)]
pub(super) fn put_name(area: &mut [[u8; 8]], name: &[u16]) -> bool {
    let n = name.len();
    if n < 8 {
        let (low, high, zero) = short_name_words(name);
        for (word, value) in area.iter_mut().zip([low, high]) {
            *word = value.to_le_bytes();
        }
        return zero;
    }
    if let Some(last) = area.last_mut() {
        *last = [0; 8];
    }
    let flat = area.as_flattened_mut();
    match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
        (Some(head), Some(tail)) if n <= 16 => {
            let zero = copy_octet(flat.first_chunk_mut(), head);
            zero | copy_octet(
                flat.get_mut(2 * n - 16..).and_then(|d| d.first_chunk_mut()),
                tail,
            )
        }
        _ => put_long_name(flat, name),
    }
}

/// [`put_name`] for a name of more than 16 units into `flat`, its name area (the last word
/// already zeroed): eight units at a time, then the last eight, overlapping the copy before
/// them and ending at the name's end; whether a unit is 0 is asked once, of all the copies
/// together. Out of line: inlined, its loop took registers and instructions from every
/// record's copy in the batch (28 more instructions a collection at N = 1 for 12-unit names,
/// measured with callgrind), and a long name's copy pays the call back many times over.
#[inline(never)]
fn put_long_name(flat: &mut [u8], name: &[u16]) -> bool {
    let Some(tail) = name.last_chunk::<8>() else {
        return true;
    };
    let (octets, _) = name.as_chunks::<8>();
    let at = 2 * name.len() - 16;
    // `flat` is the whole area (`put_name`'s contract), 16 bytes or more for every octet, so
    // the zip ends with the octets and each is tested for a 0 unit. Driving the loop by the
    // octets alone, each given its destination when there is one, cost a 43-unit name 32
    // instructions more (callgrind) for an area its callers never shorten.
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_movemask_epi8, _mm_or_si128};
        let mut zeros = octet_zeros(None, tail);
        for (d, octet) in flat.as_chunks_mut::<16>().0.iter_mut().zip(octets) {
            // SAFETY: SSE2 is part of every x86-64 target.
            zeros = unsafe { _mm_or_si128(zeros, octet_zeros(Some(d), octet)) };
        }
        octet_zeros(flat.get_mut(at..).and_then(|d| d.first_chunk_mut()), tail);
        // SAFETY: SSE2 is part of every x86-64 target.
        let zeros = unsafe { _mm_movemask_epi8(zeros) };
        zeros != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut zero = false;
        for (d, octet) in flat.as_chunks_mut::<16>().0.iter_mut().zip(octets) {
            zero |= copy_octet(Some(d), octet);
        }
        zero | copy_octet(flat.get_mut(at..).and_then(|d| d.first_chunk_mut()), tail)
    }
}

/// Copies eight units into `dst` (when given); each unit's 16 bits set where it is 0.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[expect(
    clippy::cast_ptr_alignment,
    reason = "unaligned loads and stores (`_mm_loadu_si128`, `_mm_storeu_si128`) take any address"
)]
fn octet_zeros(dst: Option<&mut [u8; 16]>, units: &[u16; 8]) -> core::arch::x86_64::__m128i {
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_setzero_si128, _mm_storeu_si128,
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
    unsafe { _mm_cmpeq_epi16(v, zero) }
}

/// Copies eight units into `dst` (when given); whether one of them is 0. Sixteen bytes at a
/// time where the target has 16-byte loads and compares.
#[inline(always)]
pub(super) fn copy_octet(dst: Option<&mut [u8; 16]>, units: &[u16; 8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::_mm_movemask_epi8;
        let zeros = octet_zeros(dst, units);
        // SAFETY: SSE2 is part of every x86-64 target.
        unsafe { _mm_movemask_epi8(zeros) != 0 }
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
pub(super) fn put_block(
    block: &mut [[u8; 8]],
    slots: impl Iterator<Item = (usize, usize)>,
    values: &[u64],
) {
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
pub(super) fn write_record(
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

/// [`write_record`] for the loop of [`SnapshotWriter::instances`], which gives `record` as
/// exactly `4 + name.len() / 4 + W` words (the definition, the name area, a counter block of
/// `W` words, `W` at least 1): the same bytes, with the name of a usual length (8 to 16
/// units) copied through a window of the record's first eight words rather than through its
/// name area. The window's length is a constant and the name's a known range, so the copy
/// takes no bounds check, where the area's length, known only at run time, took ten
/// instructions of them (measured with callgrind). A name of 2 to 7 units is copied the same
/// way with pieces of 2 or 4 units through a window of the record's first five or six words
/// (measured with callgrind: 70 → 62 instructions a record for 4 to 7 units, 72 → 62 for 2 and
/// 3, 61 → 58 for one unit, against 55 for the usual lengths, at N = 100); a name of one unit
/// or none is built as its area's word and stored with the word after it. A record of fewer
/// than eight words (a block of one word and a name of 8 to 11 units) takes [`put_name`].
///
/// The stores go in the order of their addresses, the name's NUL and padding after the name:
/// zeroing the area's last word first, as `put_name` does, put a store 24 bytes or more
/// ahead of the definition's, and the bench took about 8% longer with the same instructions
/// (the two orders timed against each other in one process).
#[expect(
    clippy::inline_always,
    reason = "the loop's body; measured with callgrind: a call per record costs more than \
              the copy of a short name"
)]
#[inline(always)]
fn write_record_batch(
    record: &mut [[u8; 8]],
    name: &[u16],
    write_block: impl FnOnce(&mut [[u8; 8]]),
) -> bool {
    let n = name.len();
    let quads = n / 4;
    // The words `definition` gives, each from what the loop has at hand: `ByteLength` from
    // the area's words, the third word as `NameOffset` (the name follows the definition) and
    // `NameLength` apart. Built as `definition` builds them, they took two more registers
    // where the loop has none to spare, and it spilled and shuffled others (measured with
    // callgrind: 71 → 58 instructions per record in the bench).
    if let Some([byte_length, fixed, name_at]) = record.first_chunk_mut::<3>() {
        *byte_length = ((inf::LEN + 8 + 8 * quads) as u64).to_le_bytes();
        *fixed = DEF_WORD1.to_le_bytes();
        if let Some((offset, length)) = name_at.split_first_chunk_mut::<4>()
            && let Some(length) = length.first_chunk_mut::<4>()
        {
            *offset = len32(inf::LEN).to_le_bytes();
            *length = len32(2 * n + 2).to_le_bytes();
        }
    }
    let window = match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
        (Some(head), Some(tail)) if n <= 16 => record
            .first_chunk_mut::<8>()
            .map(|window| (head, tail, window.as_flattened_mut())),
        _ => None,
    };
    let zero = match window {
        // The name starts at byte 24 of the record and ends at byte 24 + 2n, at least 16
        // bytes after its start and at most 56, so its two copies and the 8 bytes after it
        // lie in the window (every range below exists). Those 8 bytes hold the area's last 2
        // to 8 bytes (the NUL and the padding) and then, when the area ends before them, the
        // counter block's first bytes, which the block then overwrites.
        Some((head, tail, flat)) => {
            let end = inf::LEN + 2 * n;
            let zero = copy_octet(
                flat.get_mut(inf::LEN..inf::LEN + 16)
                    .and_then(|d| d.try_into().ok()),
                head,
            );
            let zero = copy_octet(
                flat.get_mut(end - 16..end).and_then(|d| d.try_into().ok()),
                tail,
            ) | zero;
            if let Some(after) = flat.get_mut(end..end + 8)
                && let Ok(after) = <&mut [u8; 8]>::try_from(after)
            {
                *after = [0; 8];
            }
            zero
        }
        // A name of 2 to 7 units, as the window above copies one of 8 to 16, with pieces of
        // 4 units (or 2, below 4 units): its first and last piece (overlapping), then 8 zero
        // bytes. The name ends at byte 28 to 38 of the record, which has at least 6 words from
        // 4 units (the definition, an area of two and a block of one or more) and 5 below, so
        // the zero bytes end inside it: the area's last 2 to 8 bytes (the NUL and the
        // padding) and, when the area ends before them, the block's first bytes, which the
        // block then overwrites.
        None if (4..8).contains(&n) => 'piece: {
            let (Some(head), Some(tail), Some(window)) = (
                name.first_chunk::<4>(),
                name.last_chunk::<4>(),
                record.first_chunk_mut::<6>(),
            ) else {
                // Not reached: 4 units or more, and a record of 6 words or more.
                break 'piece false;
            };
            let (head, tail) = (bytes::pack4(*head), bytes::pack4(*tail));
            put_pieces(
                window.as_flattened_mut(),
                n,
                head.to_le_bytes(),
                tail.to_le_bytes(),
            );
            zero_unit_in(head, tail)
        }
        None if (2..4).contains(&n) => 'piece: {
            let (Some(&[h0, h1]), Some(&[t0, t1]), Some(window)) = (
                name.first_chunk::<2>(),
                name.last_chunk::<2>(),
                record.first_chunk_mut::<5>(),
            ) else {
                // Not reached: 2 units or more, and a record of 5 words or more.
                break 'piece false;
            };
            let head = u32::from(h0) | u32::from(h1) << 16;
            let tail = u32::from(t0) | u32::from(t1) << 16;
            put_pieces(
                window.as_flattened_mut(),
                n,
                head.to_le_bytes(),
                tail.to_le_bytes(),
            );
            bytes::zero_lanes(u64::from(head) | u64::from(tail) << 32) != 0
        }
        // A name of fewer than 2 units: its area (one word) built in registers and stored
        // whole, the NUL and the padding with it, and the word after it (the counter block's
        // first: the record has at least 5), which the block then overwrites.
        None if n < 8 => {
            let (low, high, zero) = short_name_words(name);
            if let Some([w3, w4]) = record.get_mut(3..5).and_then(|w| w.first_chunk_mut()) {
                *w3 = low.to_le_bytes();
                *w4 = high.to_le_bytes();
            }
            zero
        }
        None => match record.get_mut(3..4 + quads) {
            Some(area) => put_name(area, name),
            None => false,
        },
    };
    if let Some(block) = record.get_mut(4 + quads..) {
        write_block(block);
    }
    zero
}

/// The first piece `head` of a name of `units` units at its place in the record `window` (byte
/// 24), its last piece `tail` ending where the name ends, then 8 zero bytes from there: the
/// stores of [`write_record_batch`]'s copy of a name of 2 to 7 units, in the order of their
/// addresses.
#[expect(
    clippy::inline_always,
    reason = "part of the per-record copy (see `write_record_batch`)"
)]
#[inline(always)]
fn put_pieces<const P: usize>(window: &mut [u8], units: usize, head: [u8; P], tail: [u8; P]) {
    let end = inf::LEN + 2 * units;
    if let Some(d) = window.get_mut(inf::LEN..inf::LEN + P)
        && let Ok(d) = <&mut [u8; P]>::try_from(d)
    {
        *d = head;
    }
    if let Some(d) = window.get_mut(end - P..end)
        && let Ok(d) = <&mut [u8; P]>::try_from(d)
    {
        *d = tail;
    }
    if let Some(d) = window.get_mut(end..end + 8)
        && let Ok(d) = <&mut [u8; 8]>::try_from(d)
    {
        *d = [0; 8];
    }
}

/// The name area of a name of fewer than 8 units as two words (the second zero below 4
/// units): the units, then zeros (the NUL and the padding); and whether a unit is 0. Read as
/// overlapping pieces of the name (its first and last 4 units, or 2, or its one unit), so
/// nothing past it is read.
#[inline]
fn short_name_words(name: &[u16]) -> (u64, u64, bool) {
    let n = name.len();
    match (name.first_chunk::<4>(), name.last_chunk::<4>()) {
        // 4 to 7 units: the last 4 shifted past the first, the units they overlap alike.
        (Some(head), Some(tail)) => {
            let (head, tail) = (bytes::pack4(*head), bytes::pack4(*tail));
            // 0 to 48 bits (the mask keeps it so for any length); `high` takes the bits
            // shifted out of `low` (none at 0: two shifts, neither of 64).
            let shift = 16 * ((n - 4) & 3);
            let low = head | tail << shift;
            let high = tail >> 1 >> (63 - shift);
            (low, high, zero_unit_in(head, tail))
        }
        _ => match (name.first_chunk::<2>(), name.last_chunk::<2>()) {
            // 2 or 3 units, likewise two at a time; the upper lanes are made non-zero for the
            // test.
            (Some(&[h0, h1]), Some(&[t0, t1])) => {
                let head = u64::from(h0) | u64::from(h1) << 16;
                let tail = u64::from(t0) | u64::from(t1) << 16;
                let low = head | tail << (16 * ((n - 2) & 1));
                let zero = bytes::zero_lanes(head | tail << 32) != 0;
                (low, 0, zero)
            }
            _ => match name.first() {
                Some(&unit) => (u64::from(unit), 0, unit == 0),
                None => (0, 0, false),
            },
        },
    }
}

/// Whether one of the 8 units of `a` and `b` (4 each, as [`bytes::pack4`] packs them) is 0:
/// one 16-byte compare where the target has it.
#[inline]
fn zero_unit_in(a: u64, b: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            _mm_cmpeq_epi16, _mm_movemask_epi8, _mm_set_epi64x, _mm_setzero_si128,
        };
        // SAFETY: SSE2 is part of every x86-64 target.
        let both = unsafe { _mm_set_epi64x(b.cast_signed(), a.cast_signed()) };
        // SAFETY: SSE2 is part of every x86-64 target.
        let zero = unsafe { _mm_setzero_si128() };
        // SAFETY: SSE2 is part of every x86-64 target.
        let zeros = unsafe { _mm_cmpeq_epi16(both, zero) };
        // SAFETY: SSE2 is part of every x86-64 target.
        unsafe { _mm_movemask_epi8(zeros) != 0 }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes::zero_lanes(a) | bytes::zero_lanes(b) != 0
    }
}

/// The sizes of a set's counters (0, 4 or 8 bytes each, in descriptor order) as a type: what
/// [`SnapshotWriter::instances`] compiles its counter-block stores for. Implemented by the
/// driver for each counterset, from its descriptors.
pub trait CounterSizes<const N: usize> {
    /// The sizes, as given to [`SnapshotWriter::begin_set`].
    const SIZES: [u8; N];
}

/// One instance for [`SnapshotWriter::instances`]: its id, its parent ([`PARENT_NONE`](super::PARENT_NONE) for
/// none), its name (at most [`MAX_NAME_UNITS`] units, none 0) and its `N` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'n, const N: usize> {
    /// The instance id.
    pub id: u32,
    /// Zero-based position of the parent instance in the parent object, or [`PARENT_NONE`](super::PARENT_NONE).
    pub parent: u32,
    /// The name, UTF-16, no terminator.
    pub name: &'n [u16],
    /// One raw value per counter, in counterset descriptor order.
    pub values: [u64; N],
}

/// An identity table entry: the id, then the parent.
#[inline]
pub(super) fn identity(id: u32, parent: u32) -> [u8; 8] {
    (u64::from(id) | u64::from(parent) << 32).to_le_bytes()
}

/// Where [`SnapshotWriter::batch`] stopped: the position after the last record written, how
/// many it wrote, the record it refused (id, parent, name), and whether for a NUL unit.
pub(super) struct BatchEnd<'n> {
    pos: usize,
    filled: u32,
    refused: Option<(u32, u32, &'n [u16])>,
    nul: bool,
}

/// A counter block for records of `N` values of known sizes, worked out at compile time:
/// `ByteLength`, its words, and per value its word, the shift into it and the mask of its size
/// (0 for a counter of no bytes), as `slots` places it; and which of the block's first 64
/// bytes `ByteLength` and the values cover (bit `k` for byte `k`).
#[derive(Clone, Copy, Debug)]
pub(super) struct BlockPlan<const N: usize> {
    byte_length: u32,
    words: usize,
    at: [(usize, u32, u64); N],
    covered: u64,
}

impl<const N: usize> BlockPlan<N> {
    /// The plan of counters of `sizes` (each 0, 4 or 8: another size takes no bytes, and the
    /// writer never uses the plan of such sizes, which no set can have).
    #[expect(
        clippy::indexing_slicing,
        reason = "below N, checked; evaluated at compile time only"
    )]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the 4-byte block header; offsets within a block of at most 8 200 bytes"
    )]
    const fn of(sizes: &[u8; N]) -> Self {
        let mut at = [(0, 0, 0); N];
        let mut covered: u64 = (1 << bf::LEN) - 1;
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
            if offset < next && next <= 64 {
                covered |= ((1 << (next - offset)) - 1) << offset;
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
            covered,
        }
    }

    /// The block of `W` words: zeros in the words that have a gap, `ByteLength`, then each
    /// value's bytes, all plain stores at offsets that are constants for a constant plan
    /// (building the words in a local array first sent the block through the stack, whose
    /// wider reloads stalled). Zeroing only the words with a gap leaves no store that a later
    /// one overwrites whole: the compiler kept those (measured with callgrind: 87 → 84
    /// instructions per instance for the bench's block of four counters).
    #[inline]
    fn write<const W: usize>(&self, block: &mut [[u8; 8]], values: &[u64; N]) {
        let Some(block) = block.first_chunk_mut::<W>() else {
            return;
        };
        for (k, word) in block.iter_mut().enumerate() {
            if k >= 8 || (self.covered >> (8 * k)) & 0xFF != 0xFF {
                *word = [0; 8];
            }
        }
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
                        #[expect(
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

/// A set record's fixed part: its length 0 (written when the set closes), `index`, the flags,
/// the counter count, the block length (at most 4 + 8 × [`MAX_COUNTERS`] rounded up to 8) and the instance
/// count, as two little-endian words built in registers.
#[inline]
fn set_fixed(
    index: u16,
    multi: bool,
    counters: u16,
    block_len: usize,
    instance_count: u32,
) -> [u8; sf::LEN] {
    const _: () = assert!(
        sf::SET_LEN == 0
            && sf::INDEX == 4
            && sf::FLAGS == 6
            && sf::COUNTER_COUNT == 8
            && sf::BLOCK_LEN == 10
            && sf::INSTANCE_COUNT == 12
            && sf::LEN == 16
    );
    let flags = if multi { SET_FLAG_MULTI } else { 0 };
    let block_len = u16::try_from(block_len).unwrap_or(u16::MAX);
    let low = u64::from(index) << 32 | u64::from(flags) << 48;
    let high = u64::from(counters) | u64::from(block_len) << 16 | u64::from(instance_count) << 32;
    let mut fixed = [0; sf::LEN];
    if let Some((l, h)) = fixed.split_first_chunk_mut::<8>()
        && let Some(h) = h.first_chunk_mut::<8>()
    {
        *l = low.to_le_bytes();
        *h = high.to_le_bytes();
    }
    fixed
}

/// Writes a set's counter `sizes` into `words`, eight a word, the last word's bytes after
/// them zero (the words past those stay as they are).
#[expect(
    clippy::inline_always,
    reason = "a few stores for a set's usual handful of sizes; measured with callgrind: the \
              call cost more than its body"
)]
#[inline(always)]
fn put_sizes(words: &mut [[u8; 8]], sizes: &[u8]) {
    let (full, tail) = sizes.as_chunks::<8>();
    let (words, rest) = words.split_at_mut_checked(full.len()).unwrap_or_default();
    for (d, s) in words.iter_mut().zip(full) {
        *d = *s;
    }
    if !tail.is_empty()
        && let Some(d) = rest.first_mut()
    {
        let w = tail.iter().rev().fold(0u64, |w, b| w << 8 | u64::from(*b));
        *d = w.to_le_bytes();
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
        // The fixed part and the sizes with their padding, all within the room `reserve` found
        // (taken once: the fields are then stored as whole words, with no check of their own);
        // each identity is written with its instance (a set ends only when all its instances
        // are in). `reserve` counted the `len` bytes from `start` within the format's limit, so
        // these sums cannot overflow.
        if written
            && let Some((fixed, rest)) = self
                .buf
                .get_mut(start..start + len)
                .and_then(|b| b.split_first_chunk_mut::<{ sf::LEN }>())
        {
            *fixed = set_fixed(index, multi, counters, block_len, instance_count);
            put_sizes(rest.as_chunks_mut::<8>().0, sizes);
        }
        self.set_count += 1;
        self.last_index = Some(index);
        let set = OpenSet {
            start,
            ident: start + sf::SIZES + round8(sizes.len()),
            written,
            counters,
            block_len,
            count: instance_count,
            added: 0,
        };
        // A set of no instances ends here.
        if instance_count == 0 {
            self.set = None;
            self.write_set_len(set);
        } else {
            self.set = Some(set);
        }
        Ok(())
    }

    /// Adds the next instance of the open set: its `id`, its `parent` ([`PARENT_NONE`](super::PARENT_NONE) for
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
    #[expect(
        clippy::inline_always,
        reason = "measured with callgrind: left to LTO, it was inlined into one caller and not \
                  another from one build to the next (its constant sizes then unused: 41 \
                  instructions more a one-record snapshot, 3 more a record)"
    )]
    #[inline(always)]
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
        if added == set.count {
            self.set = None;
            self.write_set_len(set);
        } else {
            self.set = Some(OpenSet {
                ident: set.ident.saturating_add(idf::LEN * filled as usize),
                added,
                ..set
            });
        }
        // The loop wrote every record it was given (it stopped at the records' end, or took
        // the set's last and found no record more): done, and `records` is not asked again
        // after it ended, so an iterator that is not fused cannot add records past its end.
        let Some((id, parent, name)) = refused else {
            return Ok(());
        };
        if nul {
            return self.nul_unit(pos.saturating_add(inf::LEN), name);
        }
        let refused = Record {
            id,
            parent,
            name,
            values: [0; N],
        };
        self.instances_general(Some(refused), records)
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
            // At most 4 + 255 + 1 025 words (a longer name is refused below).
            let record_words = 4 + units / 4 + block_words;
            if units > usize::from(MAX_NAME_UNITS) || rest.len() < record_words {
                refused = Some((record.id, record.parent, record.name));
                break;
            }
            let Some((dst, after)) = core::mem::take(&mut rest).split_at_mut_checked(record_words)
            else {
                // Not reached: the length was checked just above.
                break;
            };
            if write_record_batch(dst, record.name, |b| {
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
            #[expect(
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
        mut records: I,
    ) -> Result<(), SnapshotError>
    where
        I: Iterator<Item = Record<'n, N>>,
    {
        // The record the batch refused, else the first of `records` (a writer the batch does
        // not serve: an error so far, no set open, a measuring writer, other sizes). A call
        // with no record after an error still reports it, as every call after one does.
        let Some(first) = refused.or_else(|| records.next()) else {
            return self.sticky(Ok(()));
        };
        self.instances_each(&first, records)
    }

    /// [`Self::instances_general`]'s records from `first` on, one by one.
    #[cold]
    #[inline(never)]
    fn instances_each<'n, const N: usize, I>(
        &mut self,
        first: &Record<'n, N>,
        records: I,
    ) -> Result<(), SnapshotError>
    where
        I: Iterator<Item = Record<'n, N>>,
    {
        self.instance(first.id, first.parent, first.name, &first.values)?;
        for record in records {
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
        // The position never passes the limit: one comparison, no overflow.
        if len > MAX_TOTAL_LEN.saturating_sub(start) {
            return Err(SnapshotError::LimitExceeded {
                offset: hf::TOTAL_LEN,
            });
        }
        let end = start + len;
        self.pos = end;
        if self.overflow || end > self.buf.len() {
            self.overflow = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// Writes the open set's length and closes it.
    fn close_set(&mut self) {
        if let Some(set) = self.set.take() {
            self.write_set_len(set);
        }
    }

    /// Writes the length of `set`, which ends here, if it is written.
    #[inline]
    fn write_set_len(&mut self, set: OpenSet) {
        if set.written
            && let Some(set_len) = self
                .buf
                .get_mut(set.start..)
                .and_then(|b| b.first_chunk_mut::<4>())
        {
            *set_len = len32(self.pos.saturating_sub(set.start)).to_le_bytes();
        }
    }
}
