// SPDX-License-Identifier: MIT OR Apache-2.0
//! The counter block of an object: planned once per object ([`Plan`]: which words hold which
//! values, which words the values leave to be zeroed, and — for blocks of up to
//! [`TEMPLATE_WORDS`] words — a [`Template`] that writes each word with one store), and written
//! by [`write_block`], the general writer every other path must agree with.

use crate::bytes::len32;
use crate::v1::writer::CounterSpec;

/// One object's counter block, worked out once per object for all its instances.
#[derive(Clone, Copy, Debug)]
pub struct Plan<'c> {
    /// The object's counters (checked by `check_counters`).
    pub(in crate::v1::writer) counters: &'c [CounterSpec],
    /// Block length in 8-byte words.
    pub(in crate::v1::writer) words: usize,
    /// `block_gaps` of the object.
    pub(in crate::v1::writer) gaps: Option<u64>,
    /// The stores of [`write_block`], sorted by size, when no two counters share a
    /// byte (so their order does not matter) and there are at most [`SLOTS`] of each
    /// size: `(value index, word index)` of the 8-byte counters…
    pub(in crate::v1::writer) eights: [(u16, u16); SLOTS],
    /// … and `(value index, 4-byte half index)` of the 4-byte ones.
    pub(in crate::v1::writer) fours: [(u16, u16); SLOTS],
    /// How many of `eights` and `fours` are used; `None` to store counter by counter.
    pub(in crate::v1::writer) direct: Option<(usize, usize)>,
    /// The block as whole words, for a `direct` plan of at most [`TEMPLATE_WORDS`] words.
    pub(in crate::v1::writer) template: Option<Template>,
}

/// Most words a [`Template`] describes.
pub(crate) const TEMPLATE_WORDS: usize = 4;

/// A counter block as a fixed list of words, each `base | values[a] & mask_a |
/// values[b] << 32 & mask_b`: `ByteLength`, the zeros and the values in one store per word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Template {
    /// Per word: the constant bits (`ByteLength` in word 0, zero elsewhere).
    pub(in crate::v1::writer) base: [u64; TEMPLATE_WORDS],
    /// Per word: the value stored in it whole or in its low half (mask 0: none)…
    pub(in crate::v1::writer) a: [(usize, u64); TEMPLATE_WORDS],
    /// … and the value stored in its high half (mask 0: none).
    pub(in crate::v1::writer) b: [(usize, u64); TEMPLATE_WORDS],
    /// Values an instance must have (at least 1): every index above is below it.
    pub(in crate::v1::writer) need: usize,
}

impl Template {
    /// The template of a `direct` plan.
    fn new(plan: &Plan<'_>, (n8, n4): (usize, usize)) -> Option<Self> {
        if plan.words == 0 || plan.words > TEMPLATE_WORDS {
            return None;
        }
        let mut t = Self {
            base: [0; TEMPLATE_WORDS],
            a: [(0, 0); TEMPLATE_WORDS],
            b: [(0, 0); TEMPLATE_WORDS],
            need: 1,
        };
        *t.base.first_mut()? = u64::try_from(plan.words * 8).ok()?;
        for (value, word) in plan.eights.iter().take(n8) {
            let (value, word) = (usize::from(*value), usize::from(*word));
            *t.a.get_mut(word)? = (value, u64::MAX);
            t.need = t.need.max(value + 1);
        }
        for (value, half) in plan.fours.iter().take(n4) {
            let (value, half) = (usize::from(*value), usize::from(*half));
            if half % 2 == 0 {
                *t.a.get_mut(half / 2)? = (value, 0xFFFF_FFFF);
            } else {
                *t.b.get_mut(half / 2)? = (value, 0xFFFF_FFFF_0000_0000);
            }
            t.need = t.need.max(value + 1);
        }
        Some(t)
    }
}

/// Most counters of each size a [`Plan`] lists.
pub(crate) const SLOTS: usize = 16;

impl<'c> Plan<'c> {
    /// The plan of a block of `block_len` bytes (a multiple of 8).
    pub(in crate::v1::writer) fn new(counters: &'c [CounterSpec], block_len: usize) -> Self {
        let mut plan = Self {
            counters,
            words: block_len / 8,
            gaps: block_gaps(counters, block_len),
            eights: [(0, 0); SLOTS],
            fours: [(0, 0); SLOTS],
            direct: None,
            template: None,
        };
        plan.direct = plan.slots();
        plan.template = plan.direct.and_then(|n| Template::new(&plan, n));
        plan
    }

    /// Fills `eights` and `fours`; `None` when counters overlap or do not fit the lists.
    fn slots(&mut self) -> Option<(usize, usize)> {
        let (mut n8, mut n4) = (0, 0);
        // The 4-byte halves already stored to, one bit each (`ByteLength` is half 0).
        let mut taken = [0u64; 2];
        if let Some(first) = taken.first_mut() {
            *first = 1;
        }
        for (index, c) in self.counters.iter().enumerate() {
            let value = u16::try_from(index).ok()?;
            let half = usize::try_from(c.offset / 4).ok()?;
            let (list, n, halves) = match c.size {
                0 => continue,
                4 => (&mut self.fours, &mut n4, 1u64),
                _ => (&mut self.eights, &mut n8, 3u64),
            };
            // Inside the block, aligned (`check_counters`), and not overlapping another.
            if half + usize::from(halves == 3) >= 2 * self.words || (halves == 3 && half % 2 != 0) {
                return None;
            }
            let bits = halves << (half % 64);
            let word = taken.get_mut(half / 64)?;
            if *word & bits != 0 {
                return None;
            }
            *word |= bits;
            let slot = u16::try_from(if halves == 3 { half / 2 } else { half }).ok()?;
            *list.get_mut(*n)? = (value, slot);
            *n += 1;
        }
        Some((n8, n4))
    }
}

/// The 8-byte words of a counter block of `block_len` bytes that `ByteLength` and the counters
/// do not cover entirely, one bit per word: the only ones [`write_block`] must zero. `None` for
/// a block of more than 64 words (then it is zeroed whole). Counters are aligned to their size
/// (`check_counters`), so each lies inside one word; one that did not would only count as
/// covering less, which zeroes more.
fn block_gaps(counters: &[CounterSpec], block_len: usize) -> Option<u64> {
    let words = block_len / 8;
    let mut covered = [0u8; 64];
    if words > covered.len() {
        return None;
    }
    if let Some(first) = covered.first_mut() {
        *first = 0x0F; // ByteLength
    }
    for c in counters {
        let (size, bytes) = match c.size {
            4 => (4, 0x0Fu8),
            8 => (8, 0xFFu8),
            _ => continue,
        };
        let offset = c.offset as usize;
        if offset.checked_add(size).is_none_or(|end| end > block_len) {
            continue;
        }
        if let Some(word) = covered.get_mut(offset / 8) {
            *word |= bytes << (offset % 8);
        }
    }
    let gaps = covered
        .iter()
        .take(words)
        .enumerate()
        .filter(|(_, bytes)| **bytes != 0xFF)
        .fold(0u64, |gaps, (word, _)| gaps | 1 << word);
    Some(gaps)
}

/// Writes a counter block into `block` (exactly its length, in words): `ByteLength`, zeros,
/// and the values at their offsets.
#[inline]
pub(super) fn write_block(block: &mut [[u8; 8]], plan: &Plan<'_>, values: &[u64]) {
    // `block` lies inside a buffer of at most `isize::MAX` bytes.
    let byte_length = len32(block.len() * 8);
    match plan.gaps {
        // Every counter gets a value, so only the gaps need zeroing.
        Some(mut gaps) if values.len() >= plan.counters.len() => {
            while gaps != 0 {
                if let Some(word) = block.get_mut(gaps.trailing_zeros() as usize) {
                    *word = [0; 8];
                }
                gaps &= gaps - 1;
            }
        }
        _ => block.fill([0; 8]),
    }
    if let Some(dst) = block.first_mut().and_then(|w| w.first_chunk_mut::<4>()) {
        *dst = byte_length.to_le_bytes();
    }
    if let Some((n8, n4)) = plan.direct {
        // Disjoint stores, checked against `block` and `values` only for memory safety
        // (`Plan::slots` placed every slot inside the block).
        for (index, word) in plan.eights.iter().take(n8) {
            if let (Some(dst), Some(value)) = (
                block.get_mut(usize::from(*word)),
                values.get(usize::from(*index)),
            ) {
                *dst = value.to_le_bytes();
            }
        }
        let (halves, _) = block.as_flattened_mut().as_chunks_mut::<4>();
        for (index, half) in plan.fours.iter().take(n4) {
            if let (Some(dst), Some(value)) = (
                halves.get_mut(usize::from(*half)),
                values.get(usize::from(*index)),
            ) {
                *dst = ((*value & 0xFFFF_FFFF) as u32).to_le_bytes();
            }
        }
        return;
    }
    // Counters are aligned to their size (`check_counters`): each lies inside one word, a
    // 4-byte one in its low or high half.
    for (c, value) in plan.counters.iter().zip(values) {
        let offset = c.offset as usize;
        let Some(word) = block.get_mut(offset / 8) else {
            continue;
        };
        match c.size {
            8 => *word = value.to_le_bytes(),
            // A 4-byte counter keeps the low 32 bits: the format's definition of the value.
            4 => {
                if let Some(half) = word.as_chunks_mut::<4>().0.get_mut((offset / 4) % 2) {
                    *half = ((*value & 0xFFFF_FFFF) as u32).to_le_bytes();
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bytes::u32_at;
    use crate::counter_type::CounterType;
    use crate::v1::writer::tests::{counter, header, write_both};
    use crate::v1::writer::*;

    #[test]
    fn overlapping_counters_keep_the_last_value() {
        // Shared bytes: the plan falls back to storing counter by counter, in order.
        let counters = [
            counter(CounterType::LargeRawcount, 8, 8),
            counter(CounterType::Rawcount, 4, 12),
            counter(CounterType::Rawcount, 4, 4),
        ];
        let instances = [InstanceDesc {
            spec: InstanceSpec::named("x"),
            values: &[0x1111_1111_2222_2222, 0x3333_3333, 0x4444_4444],
        }];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let out = write_both(&[&obj], Mode::Data);
        let block = out.len() - 16;
        assert_eq!(u32_at(&out, block), 16);
        assert_eq!(u32_at(&out, block + 4), 0x4444_4444);
        assert_eq!(u32_at(&out, block + 8), 0x2222_2222);
        assert_eq!(
            u32_at(&out, block + 12),
            0x3333_3333,
            "the later counter wins"
        );
    }
}
