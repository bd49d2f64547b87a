// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fast path: the per-instance loop compiled for each usual counter-block layout.
//!
//! **When it applies.** [`write_instances`] is the writer's per-instance loop for every source
//! that does not write its instances itself (a snapshot set copies its records instead).
//! When an object's [`Plan`](sealed::Plan) has a [`Template`](sealed::Template) — no two counters
//! share a byte, and the block is at most [`sealed::TEMPLATE_WORDS`] words — the template's
//! *shape* (the kind of each word: `ByteLength` with a 4-byte value, two 4-byte values, one
//! 8-byte value, …) is looked up among `shapes!`, every block of up to 4 words that
//! [`assign_offsets`](super::assign_offsets) lays out for 4- and 8-byte counters. A listed shape
//! gets a loop of its own ([`write_instances_fixed`] with [`write_shaped`]): the block is that
//! many word stores whose value indices and masks are constants, the instance definition and
//! name as in the general loop. A template of another shape (a counter without data in
//! between, say) gets a loop per word count reading the template ([`write_template`]); any
//! other plan goes to the general loop, `emission::write_instances_any`.
//!
//! **Why it is equivalent.** Every loop here splits each record off `out` exactly as the
//! general one does (definition words, then block words; stop at the first record that does
//! not fit) and writes the definition with the same function; only the block differs, and a
//! template's word is `base | values[a] & mask_a | values[b] << 32 & mask_b`, which is what
//! [`write_block`](super::block::write_block) stores there: `ByteLength` in word 0's low half,
//! each value at its offset truncated to its size, zero elsewhere (the plan's template covers
//! every counter, and no two share a byte, so the order of the stores does not matter). An
//! instance with too few values takes [`write_block_words`], which stores 0 for the missing
//! ones as `write_block` does. Tests check it: a template writes what `write_block` writes
//! with any number of values, and every listed shape's loop writes the general loop's bytes.

use core::borrow::Borrow;

use crate::v1::writer::emission::{def_words, write_instance_def, write_instances_any};
use crate::v1::writer::{InstanceDesc, sealed};

/// The block shapes [`write_instances`] compiles a loop for, one hexadecimal digit per word,
/// word 0 lowest: `1` `ByteLength` and a 4-byte value, `2` `ByteLength` alone, `3` an 8-byte
/// value, `4` two 4-byte values, `5` a 4-byte value in the low half; values are taken in order
/// from index 0. These are all the blocks of up to 4 words that [`assign_offsets`](super::assign_offsets) lays out
/// for 4- and 8-byte counters (a test checks it): 40 loops per source type, about 1 KB each.
macro_rules! shapes {
    ($m:ident) => {
        $m!(
            (1, 0x1),
            (1, 0x2),
            (2, 0x31),
            (2, 0x41),
            (2, 0x51),
            (2, 0x32),
            (3, 0x331),
            (3, 0x431),
            (3, 0x531),
            (3, 0x341),
            (3, 0x441),
            (3, 0x541),
            (3, 0x351),
            (3, 0x332),
            (3, 0x432),
            (3, 0x532),
            (4, 0x3331),
            (4, 0x4331),
            (4, 0x5331),
            (4, 0x3431),
            (4, 0x4431),
            (4, 0x5431),
            (4, 0x3531),
            (4, 0x3341),
            (4, 0x4341),
            (4, 0x5341),
            (4, 0x3441),
            (4, 0x4441),
            (4, 0x5441),
            (4, 0x3541),
            (4, 0x3351),
            (4, 0x4351),
            (4, 0x5351),
            (4, 0x3332),
            (4, 0x4332),
            (4, 0x5332),
            (4, 0x3432),
            (4, 0x4432),
            (4, 0x5432),
            (4, 0x3532)
        )
    };
}

/// [`ObjectSource::write_instances`](super::ObjectSource::write_instances): each instance definition and counter block is written
/// into its own sub-slice of `out`, split off once per record, so the stores inside need no
/// further checks against `out`. Records are whole 8-byte words, so `out` is handled as words.
/// Stops at the first record that does not fit.
///
/// The loop is compiled once per block shape of [`shapes!`], so that a counter block is written
/// as that many word stores with the template's indices and masks as constants; other blocks
/// of up to [`sealed::TEMPLATE_WORDS`] words by a loop per word count reading the template.
#[inline]
pub(crate) fn write_instances<'a, D, I>(
    instances: I,
    plan: &sealed::Plan<'_>,
    out: &mut [u8],
) -> usize
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
{
    const _: () = assert!(sealed::TEMPLATE_WORDS == 4);
    let Some(t) = plan.template else {
        return write_instances_any(instances, plan, out);
    };
    // A usual layout: the loop compiled with its block's stores (indices and masks constants).
    macro_rules! shaped {
        ($(($w:literal, $s:literal)),*) => {
            match shape_of(&t) {
                $($s if t == const { shape_template($s) } => {
                    return write_instances_fixed::<D, I, $w, _>(
                        instances,
                        out,
                        write_shaped::<$w, $s>,
                    );
                })*
                _ => {}
            }
        };
    }
    shapes!(shaped);
    match plan.words {
        1 => write_instances_fixed::<D, I, 1, _>(instances, out, |b, v| write_template(b, &t, v)),
        2 => write_instances_fixed::<D, I, 2, _>(instances, out, |b, v| write_template(b, &t, v)),
        3 => write_instances_fixed::<D, I, 3, _>(instances, out, |b, v| write_template(b, &t, v)),
        4 => write_instances_fixed::<D, I, 4, _>(instances, out, |b, v| write_template(b, &t, v)),
        _ => write_instances_any(instances, plan, out),
    }
}

/// [`write_instances`] for a block of `W` words, each written by `write_block`.
#[inline]
fn write_instances_fixed<'a, D, I, const W: usize, B>(
    instances: I,
    out: &mut [u8],
    write_block: B,
) -> usize
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
    B: Fn(&mut [[u8; 8]; W], &[u64]),
{
    let mut rest = out.as_chunks_mut::<8>().0;
    // The words written are those no longer in `rest`.
    let all = rest.len();
    for instance in instances {
        let instance = instance.borrow();
        let (def_words, name_length) = def_words(&instance.spec.name);
        let Some((def, tail)) = core::mem::take(&mut rest).split_at_mut_checked(def_words) else {
            break;
        };
        let Some((block, tail)) = tail.split_first_chunk_mut::<W>() else {
            break;
        };
        #[expect(
            clippy::cast_possible_truncation,
            reason = "both are at most the reply's length, which fits in u32"
        )]
        let (def_bytes, name_length) = ((def.len() * 8) as u32, name_length as u32);
        write_instance_def(&instance.spec, def_bytes, name_length, def);
        write_block(block, instance.values);
        rest = tail;
    }
    (all - rest.len()) * 8
}

/// A block of `W` words described by `template`: one store per word.
#[inline]
fn write_template<const W: usize>(
    block: &mut [[u8; 8]; W],
    template: &sealed::Template,
    values: &[u64],
) {
    // The template's words, as arrays of the block's length.
    let (Some(base), Some(a), Some(b)) = (
        template.base.first_chunk::<W>(),
        template.a.first_chunk::<W>(),
        template.b.first_chunk::<W>(),
    ) else {
        return;
    };
    if values.len() >= template.need {
        for (((dst, base), (ia, ma)), (ib, mb)) in block.iter_mut().zip(base).zip(a).zip(b) {
            // SAFETY: `Template::new` made every index below `need`, and
            // `values.len() >= need`.
            let va = unsafe { *values.get_unchecked(*ia) };
            // SAFETY: as above.
            let vb = unsafe { *values.get_unchecked(*ib) };
            *dst = (*base | va & *ma | (vb << 32) & *mb).to_le_bytes();
        }
    } else {
        write_block_words(block, template, values);
    }
}

/// A block of [`write_template`] for an instance with too few values: those it lacks
/// are stored as 0, as [`write_block`](super::block::write_block) does.
#[cold]
fn write_block_words(block: &mut [[u8; 8]], template: &sealed::Template, values: &[u64]) {
    let value = |(index, mask): (usize, u64)| values.get(index).copied().unwrap_or(0) & mask;
    for (((dst, base), a), b) in block
        .iter_mut()
        .zip(template.base)
        .zip(template.a)
        .zip(template.b)
    {
        let (b_index, b_mask) = b;
        let high = values.get(b_index).copied().unwrap_or(0) << 32 & b_mask;
        *dst = (base | value(a) | high).to_le_bytes();
    }
}

/// The shape (as in [`shapes!`]) `template` would have if it were one: the kind of each word
/// read from its masks. [`write_instances`] then compares the whole template with that shape's.
fn shape_of(template: &sealed::Template) -> u32 {
    const LOW: u64 = 0xFFFF_FFFF;
    const HIGH: u64 = !LOW;
    let words = template.base.first().map_or(0, |b| *b / 8);
    let mut shape = 0;
    for (word, ((_, a), (_, b))) in template.a.iter().zip(&template.b).enumerate().rev() {
        if word as u64 >= words {
            continue;
        }
        let kind = match (word, *a, *b) {
            (0, 0, HIGH) => 1,
            (0, 0, 0) => 2,
            (_, u64::MAX, 0) => 3,
            (_, LOW, HIGH) => 4,
            (_, LOW, 0) => 5,
            _ => return 0,
        };
        shape = shape << 4 | kind;
    }
    shape
}

/// The template of block shape `shape` (as in [`shapes!`]). Evaluated at compile time only
/// (outside tests).
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated in const blocks only, where an index out of range is a compile error; \
              every index is below TEMPLATE_WORDS anyway"
)]
const fn shape_template(shape: u32) -> sealed::Template {
    const LOW: u64 = 0xFFFF_FFFF;
    const HIGH: u64 = !LOW;
    let mut t = sealed::Template {
        base: [0; sealed::TEMPLATE_WORDS],
        a: [(0, 0); sealed::TEMPLATE_WORDS],
        b: [(0, 0); sealed::TEMPLATE_WORDS],
        need: 1,
    };
    let mut next = 0;
    let mut word = 0;
    while word < sealed::TEMPLATE_WORDS && (shape >> (4 * word)) & 0xF != 0 {
        match (shape >> (4 * word)) & 0xF {
            1 => {
                t.b[word] = (next, HIGH);
                next += 1;
            }
            3 => {
                t.a[word] = (next, u64::MAX);
                next += 1;
            }
            4 => {
                t.a[word] = (next, LOW);
                t.b[word] = (next + 1, HIGH);
                next += 2;
            }
            5 => {
                t.a[word] = (next, LOW);
                next += 1;
            }
            _ => {}
        }
        word += 1;
    }
    t.base[0] = 8 * word as u64;
    if next > 1 {
        t.need = next;
    }
    t
}

/// The counter block of shape `S` (of `W` words): as [`write_template`] with
/// `shape_template(S)`, whose constants are folded into the code.
#[expect(
    clippy::inline_always,
    reason = "the block stores of the per-instance loop compiled for this shape"
)]
#[inline(always)]
fn write_shaped<const W: usize, const S: u32>(block: &mut [[u8; 8]; W], values: &[u64]) {
    // A reference to a constant (a read-only static): its fields fold into the code, and the
    // template is never copied onto the stack (measured: LLVM copied it once per instance).
    let template: &'static sealed::Template = &const { shape_template(S) };
    if values.len() < template.need {
        write_block_words(block, template, values);
        return;
    }
    for (((dst, base), (ia, ma)), (ib, mb)) in block
        .iter_mut()
        .zip(template.base)
        .zip(template.a)
        .zip(template.b)
    {
        // Every index is below `need` (constants: the checks fold away).
        let va = values.get(ia).copied().unwrap_or(0);
        let vb = values.get(ib).copied().unwrap_or(0);
        *dst = (base | va & ma | (vb << 32) & mb).to_le_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::v1::writer::block::write_block;
    use crate::v1::writer::tests::counter;
    use crate::v1::writer::*;

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn templates_write_as_write_block_does() {
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::BulkCount, 8, 0),
            counter(CounterType::NoData, 0, 0),
            counter(CounterType::BulkCount, 8, 0),
        ];
        let block_len = assign_offsets(&mut counters).unwrap() as usize;
        let plan = sealed::Plan::new(&counters, block_len);
        let template = plan.template.unwrap();
        let values = [0x1_0000_0001u64, 0x2_0000_0002, 3, 4, u64::MAX];
        for n in 0..=values.len() {
            let mut expected = vec![[0xA5u8; 8]; plan.words];
            write_block(&mut expected, &plan, &values[..n]);
            let mut short = vec![[0xCCu8; 8]; plan.words];
            write_block_words(&mut short, &template, &values[..n]);
            assert_eq!(short, expected, "{n} values");
        }
    }

    /// Whether `template` is one of the `shapes!` (then `write_instances` compiles its loop).
    fn listed(template: &sealed::Template) -> bool {
        macro_rules! listed {
            ($(($w:literal, $s:literal)),*) => {
                matches!(shape_of(template), $($s)|*)
            };
        }
        shapes!(listed) && *template == shape_template(shape_of(template))
    }

    #[test]
    fn every_small_block_of_assign_offsets_has_a_shaped_writer() {
        // Every sequence of 4- and 8-byte counters whose block is at most 4 words, written
        // as `write_instances_any` writes it, with all values, some, and none.
        let write = |counters: &[CounterSpec], block_len: usize, any: bool| {
            let plan = sealed::Plan::new(counters, block_len);
            let values: Vec<u64> = (0..counters.len() as u64)
                .map(|i| (0x0101_0101_0101_0101 * (i + 1)) ^ 0x8000_0000_8000_0000)
                .collect();
            let instances: Vec<InstanceDesc<'_>> = (0..=values.len())
                .map(|k| InstanceDesc {
                    spec: InstanceSpec::named("x"),
                    values: &values[..k],
                })
                .collect();
            let mut out = vec![0xA5u8; instances.len() * (32 + block_len)];
            let len = if any {
                write_instances_any(instances.iter(), &plan, &mut out)
            } else {
                write_instances(instances.iter(), &plan, &mut out)
            };
            assert_eq!(len, out.len());
            out
        };
        let mut covered = 0;
        for n in 0..=7u32 {
            for bits in 0..1u32 << n {
                let mut counters: Vec<CounterSpec> = (0..n)
                    .map(|i| {
                        if bits >> i & 1 == 0 {
                            counter(CounterType::Rawcount, 4, 0)
                        } else {
                            counter(CounterType::BulkCount, 8, 0)
                        }
                    })
                    .collect();
                let block_len = assign_offsets(&mut counters).unwrap() as usize;
                if block_len > 32 {
                    continue;
                }
                let plan = sealed::Plan::new(&counters, block_len);
                assert!(
                    listed(&plan.template.unwrap()),
                    "{n} counters, sizes {bits:b}"
                );
                covered += 1;
                assert_eq!(
                    write(&counters, block_len, false),
                    write(&counters, block_len, true),
                    "{n} counters, sizes {bits:b}"
                );
            }
        }
        assert_eq!(covered, 40, "the shapes! list");
        // A layout outside the list (a counter without data) keeps the template loop.
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::NoData, 0, 0),
            counter(CounterType::Rawcount, 4, 0),
        ];
        let block_len = assign_offsets(&mut counters).unwrap() as usize;
        let plan = sealed::Plan::new(&counters, block_len);
        assert!(!listed(&plan.template.unwrap()));
        assert_eq!(
            write(&counters, block_len, false),
            write(&counters, block_len, true)
        );
    }
}
