// SPDX-License-Identifier: MIT OR Apache-2.0
//! The checks of the reader: each set's fixed part, then its records, a word at a time, before
//! any view is handed out.

use crate::bytes::{self};
use crate::v1::wire::PERF_NO_UNIQUE_ID;

use super::field::{block as bf, instance as inf, set as sf};
use super::layout::{
    DEF_WORD1, NAME_OFFSET, block_len_of, instance_len, name_area_len, round8, set_head_len, slots,
};
use super::{MAX_COUNTERS, MAX_INSTANCES, MAX_NAME_UNITS, SET_FLAG_MULTI, SnapshotError};
/// Validates the set record at `pos` (8-aligned, inside `bytes`), whose index must be at least
/// `*min_index`, which becomes the index after the set's; returns the set's end.
pub(super) fn check_set(
    bytes: &[u8],
    pos: usize,
    min_index: &mut u32,
) -> Result<usize, SnapshotError> {
    let total = bytes.len();
    let at = |off: usize| pos.saturating_add(off);
    let bad_len = SnapshotError::BadLength { offset: pos };
    // The fixed part, read once: its fields need no bounds check of their own.
    let Some(fixed) = bytes
        .get(pos..)
        .and_then(<[u8]>::first_chunk::<{ sf::LEN }>)
    else {
        return Err(bad_len);
    };
    let u16_at = |off: usize| bytes::u16_at(fixed, off);
    let set_len = bytes::u32_at(fixed, sf::SET_LEN) as usize;
    let end = pos.checked_add(set_len).ok_or(bad_len)?;
    if set_len < sf::LEN || !set_len.is_multiple_of(8) || end > total {
        return Err(bad_len);
    }
    let index = u16_at(sf::INDEX);
    if u32::from(index) < *min_index {
        return Err(SnapshotError::BadIndex {
            offset: at(sf::INDEX),
        });
    }
    let flags = u16_at(sf::FLAGS);
    if flags & !SET_FLAG_MULTI != 0 {
        return Err(SnapshotError::Reserved {
            offset: at(sf::FLAGS),
        });
    }
    let counters = u16_at(sf::COUNTER_COUNT);
    if counters > MAX_COUNTERS {
        return Err(SnapshotError::LimitExceeded {
            offset: at(sf::COUNTER_COUNT),
        });
    }
    let count = bytes::u32_at(fixed, sf::INSTANCE_COUNT);
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
    let (block_len, covered) = check_sizes(bytes, pos, counters, u16_at(sf::BLOCK_LEN))?;
    // The identities hold any values. The records are whole words: the set and its head are
    // multiples of 8 bytes. As many as the one-pass tests accept are read here (compiled for
    // the usual block lengths, the block's masks constant-sized); from the first they refuse,
    // `walk_rest` goes on (a record to examine field by field, for the exact error).
    let records = bytes.get(at(head)..end).unwrap_or(&[]).as_chunks::<8>().0;
    let block = (block_len, covered);
    let (words, left) = match block_len / 8 {
        1 => accepted_records::<1>(records, count, block),
        2 => accepted_records::<2>(records, count, block),
        3 => accepted_records::<3>(records, count, block),
        4 => accepted_records::<4>(records, count, block),
        _ => (records.len(), count),
    };
    // The records end the set: none is left and no word after them, or the field-by-field
    // walk from the first refused record ends at `end`.
    let ends = if left == 0 {
        words == 0
    } else {
        walk_rest(bytes, pos, (end - 8 * words, end, left))? == end
    };
    if !ends {
        return Err(bad_len);
    }
    *min_index = u32::from(index) + 1;
    Ok(end)
}

/// The `counters` counter sizes of the set at `pos`, whose fixed part says `block_len` bytes of
/// counter block, checked (sizes, block length, padding) when the set's head is inside it:
/// the block length and [`covered_halves`].
#[expect(
    clippy::inline_always,
    reason = "part of `check_set`, once per set: measured, a call costs more than its work"
)]
#[inline(always)]
fn check_sizes(
    bytes: &[u8],
    pos: usize,
    counters: usize,
    block_len: u16,
) -> Result<(usize, u64), SnapshotError> {
    let at = |off: usize| pos.saturating_add(off);
    // The sizes, whole words with their padding.
    let area = bytes
        .get(at(sf::SIZES)..at(sf::SIZES + round8(counters)))
        .unwrap_or(&[]);
    let (len, covered) = match sizes_layout(area.as_chunks::<8>().0, counters) {
        Some(layout) => layout,
        None => sizes_by_field(bytes, pos, area.get(..counters).unwrap_or(&[]))?,
    };
    if usize::from(block_len) != len {
        return Err(SnapshotError::BadLength {
            offset: at(sf::BLOCK_LEN),
        });
    }
    Ok((len, covered))
}

/// The counter sizes of the set at `pos` checked field by field, for the exact error: each
/// size (`BadCounterSize`), then the counter block length, then the sizes' padding
/// (`Reserved`); the block length and [`covered_halves`] if all hold.
#[cold]
pub(super) fn sizes_by_field(
    bytes: &[u8],
    pos: usize,
    sizes: &[u8],
) -> Result<(usize, u64), SnapshotError> {
    let at = |off: usize| pos.saturating_add(off);
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
        at(sf::SIZES + sizes.len()),
        at(sf::SIZES + round8(sizes.len())),
    )?;
    Ok((block_len, covered_halves(sizes)))
}

/// The 4-byte halves of the first 64 of a counter block of counters of `sizes` (each 0, 4 or
/// 8) that `ByteLength` or a counter covers, one bit each (bit 0 `ByteLength`), counter by
/// counter as `slots` lays them out: what [`sizes_layout`] works out four counters at a time.
pub(super) fn covered_halves(sizes: &[u8]) -> u64 {
    let mut covered = 1u64;
    let mut half = 1u32;
    for &size in sizes {
        let n = u32::from(size / 4);
        if n == 2 {
            half += half & 1;
        }
        covered |= ((1u64 << n) - 1).checked_shl(half).unwrap_or(0);
        half += n;
    }
    covered
}

/// The block length and [`covered_halves`] of `counters` counters whose sizes, then zero
/// padding, are `words` (`counters` rounded up to whole words), if every size is 0, 4 or 8 and
/// the padding is zero: whole words at a time, a table lookup per four counters. `None` sends
/// the sizes to [`sizes_by_field`], which gives the same length and halves for what this
/// accepts, and the exact error for the rest.
#[expect(
    clippy::inline_always,
    reason = "called once per set; measured: the call and its result in memory cost more than \
              the usual case's work"
)]
#[inline(always)]
pub(super) fn sizes_layout(words: &[[u8; 8]], counters: usize) -> Option<(usize, u64)> {
    // The one-word case reads the padding from `counters`: right only for exactly the words
    // the sizes fill (`check_sizes` passes the area its set's head is known to contain).
    debug_assert_eq!(words.len(), counters.div_ceil(8), "the sizes' words, whole");
    match words {
        // No counter: `ByteLength` and 4 bytes of padding.
        [] => Some((8, 1)),
        [word] => {
            // Up to 8 counters, the common case: placed from half 1.
            let w = u64::from_le_bytes(*word);
            // The bytes after the sizes, shifted in two steps (8 × counters is up to 64).
            let padding = (w >> 1) >> (8 * counters).saturating_sub(1);
            let quarters = (w >> 2) & QUARTERS;
            let first = quad(quarters, 1);
            let mut covered = 1 | u64::from(first & QUAD_COVERED);
            let mut half = u32::from(first >> QUAD_END_SHIFT);
            if counters > 4 {
                // From the even half at or before `half`, at most 10.
                let base = half & !1;
                let second = quad(quarters >> 32, half);
                covered |= u64::from(second & QUAD_COVERED).wrapping_shl(base);
                half = base + u32::from(second >> QUAD_END_SHIFT);
            }
            ((not_sizes(w) | padding) == 0).then_some((round8(4 * half as usize), covered))
        }
        _ => sizes_layout_words(words, counters),
    }
}

/// [`sizes_layout`] for any number of words.
pub(super) fn sizes_layout_words(words: &[[u8; 8]], counters: usize) -> Option<(usize, u64)> {
    let mut stray = 0;
    let mut covered = 1u64;
    // The next free half (from the block's start).
    let mut half = 1u32;
    // Counters left from the word's first.
    let mut left = counters;
    for w in words {
        let w = u64::from_le_bytes(*w);
        stray |= not_sizes(w);
        let quarters = (w >> 2) & QUARTERS;
        for (k, quarters) in [quarters, quarters >> 32].into_iter().enumerate() {
            // The second four only if they are not all padding.
            if k == 1 && left <= 4 {
                break;
            }
            let base = half & !1;
            let group = quad(quarters, half);
            covered |= u64::from(group & QUAD_COVERED)
                .checked_shl(base)
                .unwrap_or(0);
            half = base + u32::from(group >> QUAD_END_SHIFT);
        }
        left = left.saturating_sub(8);
    }
    // The padding after the sizes (which the above places as sizes: the zero bytes it
    // accepts take no room).
    let used = 8 * (counters % 8);
    if let Some(last) = words.last()
        && used != 0
    {
        stray |= u64::from_le_bytes(*last) >> used;
    }
    (stray == 0).then_some((round8(4 * half as usize), covered))
}

/// Non-zero if a byte of `w` is not 0, 4 or 8: it has a bit other than 4's and 8's, or both.
#[inline]
const fn not_sizes(w: u64) -> u64 {
    (w & 0xF3F3_F3F3_F3F3_F3F3) | (w & (w >> 1) & 0x0404_0404_0404_0404)
}

/// The low 2 bits of each byte: a size's quarters of 8 bytes (0, 1 or 2), once shifted right by
/// 2.
const QUARTERS: u64 = 0x0303_0303_0303_0303;

/// The [`QUADS`] entry of the four counters whose quarters are the low 2 bits of the four low
/// bytes of `quarters`, placed from a half of the parity of `half`.
#[inline]
fn quad(quarters: u64, half: u32) -> u16 {
    // Byte k's bits move to bits 24 + 2k; no two products overlap below bit 32 (nor carry).
    let [_, _, _, index, ..] = (quarters & 0x0303_0303)
        .wrapping_mul(0x0104_1040)
        .to_le_bytes();
    QUADS
        .get(usize::from(index) | (half as usize & 1) << 8)
        .copied()
        .unwrap_or(0)
}

/// [`QUADS`]' bits of the halves covered, from the group's first even half.
const QUAD_COVERED: u16 = 0x03FF;
/// Where [`QUADS`] holds the half after the group, from the group's first even half.
const QUAD_END_SHIFT: u32 = 12;

/// For each four counters of sizes (in quarters: 0, 1 or 2, index bits `2k..2k + 2` for
/// counter `k`) placed from an odd half (index bit 8) or an even one: the halves they cover
/// from the even half at or before the start, and (from bit [`QUAD_END_SHIFT`]) the half
/// after them, as `slots` lays them out. A quarter of 3 is no size (such entries are 0).
static QUADS: [u16; 512] = quads();

#[expect(
    clippy::indexing_slicing,
    reason = "evaluated only at compile time, where an index out of bounds fails the build"
)]
const fn quads() -> [u16; 512] {
    let mut table = [0u16; 512];
    let mut index = 0u16;
    while index < 512 {
        // The half, from the even half at or before the first counter.
        let mut half = index >> 8;
        let mut covered = 0u16;
        let mut counter = 0;
        let mut valid = true;
        while counter < 4 {
            let quarters = (index >> (2 * counter)) & 3;
            valid &= quarters < 3;
            if quarters == 2 {
                half += half & 1;
            }
            covered |= ((1 << quarters) - 1) << half;
            half += quarters;
            counter += 1;
        }
        if valid {
            table[index as usize] = covered | half << QUAD_END_SHIFT;
        }
        index += 1;
    }
    table
}

/// [`walk`] over the `left` records from `next` to `end` of the set at `pos`, whose sizes and
/// block length [`check_sizes`] accepted: read again here, out of the usual path, rather than
/// kept across it.
#[inline(never)]
#[cold]
fn walk_rest(
    bytes: &[u8],
    pos: usize,
    records: (usize, usize, usize),
) -> Result<usize, SnapshotError> {
    let at = |off: usize| pos.saturating_add(off);
    let counters = usize::from(bytes::u16_at(bytes, at(sf::COUNTER_COUNT)));
    let sizes = bytes
        .get(at(sf::SIZES)..at(sf::SIZES + counters))
        .unwrap_or(&[]);
    let block = (
        usize::from(bytes::u16_at(bytes, at(sf::BLOCK_LEN))),
        covered_halves(sizes),
    );
    match block.0 / 8 {
        1 => walk::<1>(bytes, records, block, sizes),
        2 => walk::<2>(bytes, records, block, sizes),
        3 => walk::<3>(bytes, records, block, sizes),
        4 => walk::<4>(bytes, records, block, sizes),
        _ => walk::<0>(bytes, records, block, sizes),
    }
}

/// The records at the start of `records` (whole words) that [`short_record`] or
/// [`valid_record`] accept, at most `count`, for a counter block of `block_len` bytes (`W`
/// words, 1 to [`MASKED_WORDS`]) whose first 64 halves `covered` marks as [`covered_halves`]
/// does: the words after them and the records left (none, or from the first refused).
#[inline]
pub(super) fn accepted_records<const W: usize>(
    mut records: &[[u8; 8]],
    count: usize,
    (block_len, covered): (usize, u64),
) -> (usize, usize) {
    let masks = BlockMasks::<W>::new(block_len, covered);
    let mut left = count;
    while left > 0 {
        // A short name with the room of the longest short record behind it, then any name.
        if let Some(after) = short_record::<W>(records, &masks) {
            records = after;
        } else if let Some(after) = valid_record::<W>(records, &masks) {
            records = after;
        } else {
            break;
        }
        left -= 1;
    }
    (records.len(), left)
}

/// Checks the `count` instance records from `start` to `end` of a set whose counter block is
/// `block_len` bytes (`W` words; 0 for a block checked field by field) holding counters of
/// `sizes`, `covered` its first 64 halves as [`covered_halves`] gives them; returns where the
/// records end.
pub(super) fn walk<const W: usize>(
    bytes: &[u8],
    (start, end, count): (usize, usize, usize),
    (block_len, covered): (usize, u64),
    sizes: &[u8],
) -> Result<usize, SnapshotError> {
    // The records are whole words, ending at `end`: the set and its head are multiples of 8
    // bytes. So a record's position is `end` less the words left.
    let mut pos = start;
    let mut left = count;
    // What `check_record` needs, made for the first record it examines.
    let mut block = None;
    while left > 0 {
        // As many records as the one-pass tests accept; a record they refuse is examined
        // field by field, for the exact error.
        if W > 0 {
            let records = bytes.get(pos..end).unwrap_or(&[]).as_chunks::<8>().0;
            let (words, rest) = accepted_records::<W>(records, left, (block_len, covered));
            pos = end - 8 * words;
            left = rest;
            if left == 0 {
                break;
            }
        }
        let block = block.get_or_insert_with(|| BlockCheck::new(sizes, block_len));
        pos = check_record(bytes, (pos, end), sizes, block)?;
        left -= 1;
    }
    Ok(pos)
}

/// Most counter-block words [`BlockMasks`] are made for.
pub(super) const MASKED_WORDS: usize = 4;

/// What [`check_record`] needs of a set's counter block besides its sizes.
pub(super) struct BlockCheck {
    words: usize,
    /// For a block of 5 to 64 words: [`gap_halves`], so that [`check_record`]'s work per
    /// record follows the block's bytes rather than its counter count (counters of size 0 take
    /// no bytes).
    gaps: Option<[u64; 2]>,
}

impl BlockCheck {
    /// For a block of `block_len` bytes holding counters of `sizes`, each 0, 4 or 8 (checked by
    /// `block_len_of`).
    fn new(sizes: &[u8], block_len: usize) -> Self {
        let words = block_len / 8;
        Self {
            words,
            // Needed for every record only when no masks apply; otherwise worked out by
            // `check_record` when it reports an error.
            gaps: (words > MASKED_WORDS && words <= 64).then(|| gap_halves(sizes, words)),
        }
    }
}

/// The 4-byte halves of a counter block of `words` words (at most 64) that no counter of
/// `sizes` covers, one bit each; half 0, `ByteLength`, is not one.
pub(super) fn gap_halves(sizes: &[u8], words: usize) -> [u64; 2] {
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

/// Words of the longest record [`short_record`] reads: the definition, a name area of 4 words
/// and a counter block of [`MASKED_WORDS`].
const SHORT_WINDOW: usize = 3 + SHORT_AREA + MASKED_WORDS;
/// Most words of a short name's area: 15 units and the NUL.
const SHORT_AREA: usize = 4;
/// Most units of a short name.
const SHORT_UNITS: usize = 4 * SHORT_AREA - 1;

/// What a record whose name has `units` units (at most [`SHORT_UNITS`]) holds, indexed by
/// `units`: its definition's first and third words (`ByteLength` with
/// `ParentObjectTitleIndex`; `NameOffset` with `NameLength`), and of the bits of
/// [`unit_zeros`] over the 16 units that follow the definition, those of the name area
/// (`in_area`) and those of them that must be set (`past`: the NUL and the padding).
struct ShortNames {
    word0: [u64; SHORT_UNITS + 1],
    word2: [u64; SHORT_UNITS + 1],
    in_area: [u32; SHORT_UNITS + 1],
    past: [u32; SHORT_UNITS + 1],
}

/// [`ShortNames`] for every short name length (a static: one base address for the loop).
static SHORT_NAMES: ShortNames = short_names();

#[expect(
    clippy::indexing_slicing,
    reason = "evaluated only at compile time, where an index out of bounds fails the build"
)]
const fn short_names() -> ShortNames {
    let mut t = ShortNames {
        word0: [0; SHORT_UNITS + 1],
        word2: [0; SHORT_UNITS + 1],
        in_area: [0; SHORT_UNITS + 1],
        past: [0; SHORT_UNITS + 1],
    };
    let mut units = 0;
    while units <= SHORT_UNITS {
        let area = name_area_len(units);
        t.word0[units] = (inf::LEN + area) as u64;
        t.word2[units] = NAME_OFFSET | ((2 * units as u64 + 2) << 32);
        t.in_area[units] = (1u32 << (area / 2)) - 1;
        t.past[units] = t.in_area[units] & (u32::MAX << units);
        units += 1;
    }
    t
}

/// A set's counter block of `W` words (at most [`MASKED_WORDS`]) as [`short_record`] and
/// [`valid_record`] test it: each word XOR `xor`, masked by `mask`, is zero (word 0's low half,
/// `ByteLength`, compared through `xor`; elsewhere the bits no counter covers, which must be
/// zero).
pub(super) struct BlockMasks<const W: usize> {
    pub(super) xor: [u64; W],
    pub(super) mask: [u64; W],
}

/// Two words' masks from their four halves' bits (bit 0 the first word's low half), set for
/// each half no counter covers: a lookup per two words.
static PAIR_MASKS: [[u64; 2]; 16] = pair_masks();

#[expect(
    clippy::indexing_slicing,
    reason = "evaluated only at compile time, where an index out of bounds fails the build"
)]
const fn pair_masks() -> [[u64; 2]; 16] {
    let mut table = [[0u64; 2]; 16];
    let mut bits = 0;
    while bits < 16 {
        let mut half = 0;
        while half < 4 {
            if bits & (1 << half) != 0 {
                table[bits][half / 2] |= 0xFFFF_FFFF << (32 * (half % 2));
            }
            half += 1;
        }
        bits += 1;
    }
    table
}

impl<const W: usize> BlockMasks<W> {
    /// For a block of `block_len` bytes whose first 64 halves `covered` marks as
    /// [`covered_halves`] does.
    #[inline]
    pub(super) fn new(block_len: usize, covered: u64) -> Self {
        // Half 0, `ByteLength`, compared through `xor`: masked whole.
        let gaps = !covered | 1;
        let mut xor = [0; W];
        let mut mask = [0; W];
        for (k, pair) in mask.chunks_mut(2).enumerate() {
            let [bits, ..] = (gaps >> (4 * k)).to_le_bytes();
            let masks = PAIR_MASKS
                .get(usize::from(bits & 0xF))
                .copied()
                .unwrap_or([u64::MAX; 2]);
            for (m, v) in pair.iter_mut().zip(masks) {
                *m = v;
            }
        }
        if let Some(x) = xor.first_mut() {
            *x = block_len as u64;
        }
        Self { xor, mask }
    }

    /// Non-zero unless the counter block `words` holds this set's `ByteLength` and nothing
    /// where no counter is: each word XOR `xor`, masked by `mask`, OR-ed. On x86-64 two words
    /// at a time with SSE2 (the compiled parse loop keeps the masks in vector registers), else
    /// word by word. Part of the per-record test (see `valid_record`).
    #[inline(always)]
    pub(super) fn stray(&self, words: &[[u8; 8]; W]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{
                __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
                _mm_or_si128, _mm_set_epi64x, _mm_setzero_si128, _mm_xor_si128,
            };
            let (pairs, last) = words.as_chunks::<2>();
            let (xor_pairs, xor_last) = self.xor.as_chunks::<2>();
            let (mask_pairs, mask_last) = self.mask.as_chunks::<2>();
            // SAFETY: SSE2 is part of every x86-64 target.
            let mut acc = unsafe { _mm_setzero_si128() };
            for ((pair, &[x0, x1]), &[m0, m1]) in pairs.iter().zip(xor_pairs).zip(mask_pairs) {
                #[expect(
                    clippy::cast_ptr_alignment,
                    reason = "read with an unaligned load (`_mm_loadu_si128`), which takes any \
                              address"
                )]
                let at = pair.as_ptr().cast::<__m128i>();
                // SAFETY: `pair` is 16 readable bytes.
                let w = unsafe { _mm_loadu_si128(at) };
                let [x0, x1, m0, m1] = [x0, x1, m0, m1].map(u64::cast_signed);
                // SAFETY: SSE2 is part of every x86-64 target.
                let x = unsafe { _mm_set_epi64x(x1, x0) };
                // SAFETY: as above.
                let m = unsafe { _mm_set_epi64x(m1, m0) };
                // SAFETY: as above.
                let w = unsafe { _mm_xor_si128(w, x) };
                // SAFETY: as above.
                let w = unsafe { _mm_and_si128(w, m) };
                // SAFETY: as above.
                acc = unsafe { _mm_or_si128(acc, w) };
            }
            // SAFETY: as above.
            let zero = unsafe { _mm_setzero_si128() };
            // SAFETY: as above.
            let equal = unsafe { _mm_cmpeq_epi8(acc, zero) };
            // SAFETY: as above.
            let equal = unsafe { _mm_movemask_epi8(equal) };
            // The 16 bytes' bits set where a byte is 0: all of them unless a word strayed.
            #[expect(clippy::cast_sign_loss, reason = "a 16-bit movemask, never negative")]
            let mut stray = u64::from(equal as u32 ^ 0xFFFF);
            for ((w, x), m) in last.iter().zip(xor_last).zip(mask_last) {
                stray |= (u64::from_le_bytes(*w) ^ x) & m;
            }
            stray
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.stray_by_word(words)
        }
    }

    /// [`Self::stray`] word by word: the other targets' version, and on x86-64 what the tests
    /// compare the 16-byte version with.
    #[cfg_attr(target_arch = "x86_64", cfg(test))]
    pub(super) fn stray_by_word(&self, words: &[[u8; 8]; W]) -> u64 {
        let mut stray = 0;
        for ((w, x), m) in words.iter().zip(&self.xor).zip(&self.mask) {
            stray |= (u64::from_le_bytes(*w) ^ x) & m;
        }
        stray
    }
}

/// [`valid_record`] for a record whose name has at most [`SHORT_UNITS`] units and that has
/// [`SHORT_WINDOW`] words of `records` to read from its start (whatever follows it): its fixed
/// words compared with [`SHORT_NAMES`]' for its name length, without a bounds check between
/// them; the words after it if it is valid. `None` sends the record to [`valid_record`], which
/// accepts the same records and others.
#[expect(
    clippy::inline_always,
    reason = "the per-record test of the parse loop; measured: a call per record costs more"
)]
#[inline(always)]
fn short_record<'r, const W: usize>(
    records: &'r [[u8; 8]],
    block: &BlockMasks<W>,
) -> Option<&'r [[u8; 8]]> {
    let (window, _) = records.split_first_chunk::<SHORT_WINDOW>()?;
    let [w0, w1, w2, n0, n1, n2, n3, ..] = window;
    let w2 = u64::from_le_bytes(*w2);
    // The units `NameLength` announces if it is one of a short name (`NameLength` is twice
    // the units and the NUL): the table's word then holds it (an odd or out-of-range
    // `NameLength`, or a `NameOffset` other than 24, differs).
    let units = ((w2 >> 33) as usize).wrapping_sub(1) & SHORT_UNITS;
    let t = &SHORT_NAMES;
    if w2 != *t.word2.get(units)?
        || u64::from_le_bytes(*w0) != *t.word0.get(units)?
        || u64::from_le_bytes(*w1) != DEF_WORD1
        || unit_zeros([n0, n1, n2, n3]) & *t.in_area.get(units)? != *t.past.get(units)?
    {
        return None;
    }
    // The definition and the name area (a word per 4 units and the NUL) precede the block:
    // at most 7 words, so the block is inside the window.
    let head = 3 + units / 4 + 1;
    let (words, _) = window.get(head..)?.split_first_chunk::<W>()?;
    if block.stray(words) != 0 {
        return None;
    }
    records.get(head + W..)
}

/// One bit per UTF-16 unit of the 4 words `name`, set for a unit that is 0 (bit 0 the first
/// unit): 16 bytes at a time where the target has a 16-byte compare.
#[inline(always)]
pub(super) fn unit_zeros(name: [&[u8; 8]; 4]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            _mm_cmpeq_epi16, _mm_movemask_epi8, _mm_packs_epi16, _mm_set_epi64x, _mm_setzero_si128,
        };
        // Two pairs of adjacent words: each made one 16-byte load by the compiler.
        let [n0, n1, n2, n3] = name.map(|w| i64::from_le_bytes(*w));
        // SAFETY: SSE2 is part of every x86-64 target.
        let low = unsafe { _mm_set_epi64x(n1, n0) };
        // SAFETY: as above.
        let high = unsafe { _mm_set_epi64x(n3, n2) };
        // SAFETY: as above.
        let zero = unsafe { _mm_setzero_si128() };
        // SAFETY: as above.
        let low = unsafe { _mm_cmpeq_epi16(low, zero) };
        // SAFETY: as above.
        let high = unsafe { _mm_cmpeq_epi16(high, zero) };
        // Each unit's 0 or −1 saturated to a byte: units 0 to 7, then 8 to 15.
        // SAFETY: as above.
        let both = unsafe { _mm_packs_epi16(low, high) };
        // SAFETY: as above.
        let bits = unsafe { _mm_movemask_epi8(both) };
        #[expect(clippy::cast_sign_loss, reason = "a 16-bit movemask, never negative")]
        let bits = bits as u32;
        bits
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        unit_zeros_by_unit(name)
    }
}

/// [`unit_zeros`] unit by unit: the other targets' version, and on x86-64 what the tests
/// compare the 16-byte version with.
#[cfg_attr(target_arch = "x86_64", cfg(test))]
pub(super) fn unit_zeros_by_unit(name: [&[u8; 8]; 4]) -> u32 {
    let mut bits = 0;
    for (i, unit) in name.iter().flat_map(|w| w.as_chunks::<2>().0).enumerate() {
        if *unit == [0, 0] {
            bits |= 1 << i;
        }
    }
    bits
}

/// The `count` records from `start` to `end` checked by [`check_record`] alone, as [`walk`]
/// checks them for a block it holds no masks for: the verdict every faster test of a record
/// must reproduce (tests).
#[cfg(test)]
pub(super) fn walk_by_fields(
    bytes: &[u8],
    records: (usize, usize, usize),
    sizes: &[u8],
) -> Result<usize, SnapshotError> {
    let block_len = block_len_of(sizes).unwrap_or(0);
    walk::<0>(bytes, records, (block_len, covered_halves(sizes)), sizes)
}

/// Whether `records` (whole words) starts with a valid instance record whose counter block is
/// `W` words as `masks` describes it; the words after it if so. Accepts only what
/// [`check_record`] accepts (the definition's words, the name area's units, NUL and padding,
/// then the counter block); `None` sends the record to [`check_record`].
#[expect(
    clippy::inline_always,
    reason = "the per-record test of the parse loop; measured: a call per record costs more"
)]
#[inline(always)]
pub(super) fn valid_record<'r, const W: usize>(
    records: &'r [[u8; 8]],
    masks: &BlockMasks<W>,
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
        _ => long_name_stray(name, units),
    };
    // The counter block: `ByteLength`, and nothing where no counter is.
    stray |= masks.stray(block);
    (stray == 0).then_some(after)
}

/// Non-zero unless the name area `name` (whole words) holds `units` units (`units < 4 ×
/// name.len()`) none of which is 0, then only zero units (the NUL and the padding). Word by
/// word (`zero_lanes`, its mask applied once at the end).
#[inline(always)]
#[expect(
    clippy::inline_always,
    reason = "part of the per-record test (see `valid_record`)"
)]
pub(super) fn name_stray(name: &[[u8; 8]], units: usize) -> u64 {
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
pub(super) fn short_name_stray(words: &[[u8; 8]; 4], area: usize, units: usize) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_setzero_si128,
        };
        #[expect(
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
        #[expect(clippy::cast_sign_loss, reason = "a 16-bit movemask, never negative")]
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

/// [`name_stray`] for the name area `name` of a name of `units` units (the area
/// `valid_record` derives from the name's length), 16 bytes at a time where the target has a
/// 16-byte compare and the area has 4 words or more: every 8 units before the area's last 8
/// must hold no 0 unit (the last of them read as the 16 bytes ending where those 8 start,
/// overlapping the one before), and the last 8 must be 0 exactly past `units` (the NUL and
/// the padding, 1 to 4 units). Word by word otherwise.
#[inline(always)]
pub(super) fn long_name_stray(name: &[[u8; 8]], units: usize) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_setzero_si128,
        };
        let flat = name.as_flattened();
        // The last 8 units, and before them the units that must all be non-zero: at least 8
        // (an area of 4 words or more holds at most 4 zero units), so at least one full octet.
        let Some((body, tail)) = flat.split_last_chunk::<16>() else {
            return name_stray(name, units);
        };
        let Some(last) = body.last_chunk::<16>() else {
            return name_stray(name, units);
        };
        // SAFETY: SSE2 is part of every x86-64 target.
        let zero = unsafe { _mm_setzero_si128() };
        // Each unit of 16 bytes compared with 0.
        let zero_units = |octet: &[u8; 16]| {
            #[expect(
                clippy::cast_ptr_alignment,
                reason = "an unaligned load (`_mm_loadu_si128`) takes any address"
            )]
            let at = octet.as_ptr().cast::<__m128i>();
            // SAFETY: `octet` is 16 readable bytes (an unaligned load).
            let v = unsafe { _mm_loadu_si128(at) };
            // SAFETY: SSE2 is part of every x86-64 target.
            unsafe { _mm_cmpeq_epi16(v, zero) }
        };
        // SAFETY: SSE2 is part of every x86-64 target.
        let or = |a, b| unsafe { _mm_or_si128(a, b) };
        let mut zeros = zero;
        for octet in body.as_chunks::<16>().0 {
            zeros = or(zeros, zero_units(octet));
        }
        let zeros = or(zeros, zero_units(last));
        let tail = zero_units(tail);
        // SAFETY: SSE2 is part of every x86-64 target.
        let zeros = unsafe { _mm_movemask_epi8(zeros) };
        // SAFETY: SSE2 is part of every x86-64 target.
        let tail = unsafe { _mm_movemask_epi8(tail) };
        // Two bits per unit of the last 8, set exactly for the units past `units`: the area
        // ends 4 − `units % 4` units after them (4 when it is 0), so 8 + 2 × (`units % 4`)
        // bits are clear.
        let expected = (0xFFFF_u32 << (8 + 2 * (units % 4))) & 0xFFFF;
        #[expect(clippy::cast_sign_loss, reason = "16-bit movemasks, never negative")]
        let stray = zeros as u32 | (tail as u32 ^ expected);
        u64::from(stray)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        name_stray(name, units)
    }
}

/// Validates the instance record at `pos` (8-aligned) that must end by `end`, whose counter
/// block has counters of `sizes` as `block` describes; returns its end.
pub(super) fn check_record(
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
pub(super) fn check_zero(bytes: &[u8], from: usize, to: usize) -> Result<(), SnapshotError> {
    let pad = bytes.get(from..to).unwrap_or(&[]);
    match pad.iter().position(|b| *b != 0) {
        Some(i) => Err(SnapshotError::Reserved {
            offset: from.saturating_add(i),
        }),
        None => Ok(()),
    }
}
