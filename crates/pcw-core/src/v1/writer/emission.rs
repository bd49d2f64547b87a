// SPDX-License-Identifier: MIT OR Apache-2.0
//! Emission: the all-or-nothing entry points ([`write_objects`]: size, then write), the object
//! and counter definitions, and the general per-instance loop ([`write_instances_any`]) with the
//! instance definition and name stores the fast path (`shaped`) shares.

use core::borrow::Borrow;

use crate::bytes::{len32, units_le};
use crate::v1::wire::{self, CounterDefinitionRepr, ObjectTypeRepr};
use crate::v1::writer::block::write_block;
use crate::v1::writer::sizing::{add, check_counters, fits_u32, measure_ready, measure_unready};
use crate::v1::writer::{
    CheckedName, CounterSpec, InstanceDesc, InstanceKind, InstanceName, InstanceSpec, Mode,
    ObjectHeader, ObjectSource, WriteError, Written, sealed,
};

/// Objects whose counter block length the sizing pass of [`write_objects`] keeps for the
/// writing pass (the others' are worked out again).
const KEPT_BLOCKS: usize = 16;

/// Writes `objects` at the start of `buf`, all or nothing.
///
/// The sources must not change during the call (the driver and the DLL hand the writer a
/// snapshot): sizes are measured in a first pass and bytes written in a second.
///
/// # Errors
/// [`WriteError::NoSpace`] (and nothing written) if `buf` is too small; otherwise any other
/// [`WriteError`] for a description that cannot be written correctly, also before writing.
pub fn write_objects(
    objects: &[&dyn ObjectSource],
    mode: Mode,
    buf: &mut [u8],
) -> Result<Written, WriteError> {
    write_selected(objects, |_, _| true, mode, buf)
}

/// [`write_objects`] for the objects of `objects` that `wanted` accepts, given each object's
/// index and the object (asked twice per object, in the sizing and the writing pass: it must
/// answer the same both times).
#[inline]
pub(crate) fn write_selected(
    objects: &[&dyn ObjectSource],
    wanted: impl Fn(usize, &dyn ObjectSource) -> bool,
    mode: Mode,
    buf: &mut [u8],
) -> Result<Written, WriteError> {
    // Block lengths fit in u32: each object's length does.
    let mut blocks = [0u32; KEPT_BLOCKS];
    let mut needed = 0usize;
    let mut index = 0usize;
    for (i, &o) in objects.iter().enumerate() {
        if !wanted(i, o) {
            continue;
        }
        let (len, block) = match o.ready(sealed::Token) {
            Some(ready) => measure_ready(ready, mode)?,
            None => measure_unready(o, mode)?,
        };
        if let Some(slot) = blocks.get_mut(index) {
            *slot = len32(block);
        }
        index += 1;
        needed = add(needed, len)?;
    }
    let needed = fits_u32(needed)?;
    let out = buf
        .get_mut(..needed)
        .ok_or(WriteError::NoSpace { needed })?;
    let mut at = 0usize;
    let mut written = 0usize;
    for (i, &o) in objects.iter().enumerate() {
        if !wanted(i, o) {
            continue;
        }
        let block_len = match blocks.get(written) {
            Some(block) => *block as usize,
            None => o
                .checked_block_len(sealed::Token)
                .unwrap_or_else(|| check_counters(o.counters()).unwrap_or(0)),
        };
        let rest = out.get_mut(at..).unwrap_or_default();
        at += emit_object(o, o.ready(sealed::Token), mode, block_len, rest);
        written += 1;
    }
    Ok(Written {
        bytes: at,
        objects: written,
    })
}

/// [`write_selected`] of one object: asked whether it is ready once for both passes.
#[inline]
pub(crate) fn write_one(
    object: &dyn ObjectSource,
    mode: Mode,
    buf: &mut [u8],
) -> Result<Written, WriteError> {
    if let Some(ready) = object.ready(sealed::Token) {
        return write_ready(ready, mode, buf).map(|bytes| Written { bytes, objects: 1 });
    }
    let (needed, block_len) = measure_unready(object, mode)?;
    let out = buf
        .get_mut(..needed)
        .ok_or(WriteError::NoSpace { needed })?;
    let bytes = emit_object(object, None, mode, block_len, out);
    Ok(Written { bytes, objects: 1 })
}

/// [`measure_ready`] and [`emit_ready`] in one pass, all or nothing: an object whose source has
/// its definitions rendered is sized once, from the lengths it copies (the same figures, and
/// the same errors, as `measure_ready`'s), and written as those copies and its
/// `PERF_OBJECT_TYPE`.
#[inline]
fn write_ready(ready: &sealed::Ready<'_>, mode: Mode, buf: &mut [u8]) -> Result<usize, WriteError> {
    if ready.definitions.len() != ready.counters.len() {
        let (needed, _) = measure_ready(ready, mode)?;
        let out = buf
            .get_mut(..needed)
            .ok_or(WriteError::NoSpace { needed })?;
        return Ok(emit_ready(ready, mode, out));
    }
    let definitions = ready.definitions.as_flattened();
    let body = match mode {
        Mode::Data => ready.body,
        Mode::Metadata => &[],
    };
    // One definition of 40 bytes per counter: `ready_len`'s sums.
    let definition_length = add(wire::field::object_type::LEN, definitions.len())?;
    let needed = fits_u32(add(definition_length, body.len())?)?;
    let out = buf
        .get_mut(..needed)
        .ok_or(WriteError::NoSpace { needed })?;
    if let Some((head, rest)) = out.split_first_chunk_mut::<{ wire::field::object_type::LEN }>()
        && let Some((defs, dst)) = rest.split_at_mut_checked(definitions.len())
        && dst.len() == body.len()
    {
        defs.copy_from_slice(definitions);
        dst.copy_from_slice(body);
        *head = object_type_bytes(
            &ready.header,
            [needed, definition_length, ready.counters.len()],
            num_instances(mode, ready.kind, ready.instance_count),
        );
        return Ok(needed);
    }
    // `out` is exactly the head, the definitions and the body: never reached.
    Ok(emit_ready(ready, mode, out))
}

/// Writes one object at the start of `buf` and returns its length, all or nothing.
///
/// # Errors
/// As [`write_objects`].
pub fn write_object(
    src: &dyn ObjectSource,
    mode: Mode,
    buf: &mut [u8],
) -> Result<usize, WriteError> {
    write_objects(&[src], mode, buf).map(|w| w.bytes)
}

/// Emits an object whose description `object_len` has accepted and whose bytes fit in `buf`;
/// returns the bytes written. Every store is bounds-checked (per definition for the object's
/// definitions, per record for its instances), so a source that changed since it was measured
/// yields a short object inside `buf`, never a write outside it.
fn emit_object(
    src: &dyn ObjectSource,
    ready: Option<&sealed::Ready<'_>>,
    mode: Mode,
    block_len: usize,
    buf: &mut [u8],
) -> usize {
    if let Some(ready) = ready {
        return emit_ready(ready, mode, buf);
    }
    let counters = src.counters();
    let kind = src.kind();
    let instance_count = match kind {
        InstanceKind::Single => 0,
        InstanceKind::Multi => src.instance_count(),
    };
    emit_with(
        (src.header(), counters, kind, instance_count),
        &[],
        mode,
        buf,
        |rest| {
            // What the source holds ready is copied; anything else is written to a plan of the
            // block, worked out only then.
            let ready = match kind {
                InstanceKind::Single => src.counter_block(block_len, sealed::Token),
                InstanceKind::Multi => src.instance_records(block_len, sealed::Token),
            };
            if let Some(ready) = ready {
                return match rest.get_mut(..ready.len()) {
                    Some(dst) => {
                        dst.copy_from_slice(ready);
                        ready.len()
                    }
                    None => 0,
                };
            }
            let plan = sealed::Plan::new(counters, block_len);
            match kind {
                InstanceKind::Single => match rest.as_chunks_mut::<8>().0.get_mut(..plan.words) {
                    Some(block) => {
                        write_block(block, &plan, src.instance(0).values);
                        block_len
                    }
                    None => 0,
                },
                InstanceKind::Multi => src.write_instances(&plan, rest, sealed::Token),
            }
        },
    )
}

/// [`emit_object`] of an object its source holds ready: its `PERF_OBJECT_TYPE`, its
/// definitions as one copy (when the source has them all), and (for a data reply) one copy of
/// the body; the bytes written. An object that does not fit `buf` whole (never, for a buffer
/// of the length measured) is written as [`emit_with`] writes it.
#[inline]
fn emit_ready(ready: &sealed::Ready<'_>, mode: Mode, buf: &mut [u8]) -> usize {
    let definitions = ready.definitions.as_flattened();
    let body = match mode {
        Mode::Data => ready.body,
        Mode::Metadata => &[],
    };
    if ready.definitions.len() == ready.counters.len()
        && let Some((head, rest)) = buf.split_first_chunk_mut::<{ wire::field::object_type::LEN }>()
        && let Some((defs, rest)) = rest.split_at_mut_checked(definitions.len())
        && let Some(dst) = rest.get_mut(..body.len())
    {
        defs.copy_from_slice(definitions);
        dst.copy_from_slice(body);
        // Each part lies inside `buf`: these sums cannot overflow.
        let definition_length = wire::field::object_type::LEN + definitions.len();
        let total = definition_length + body.len();
        *head = object_type_bytes(
            &ready.header,
            [total, definition_length, ready.counters.len()],
            num_instances(mode, ready.kind, ready.instance_count),
        );
        return total;
    }
    emit_with(
        (
            ready.header,
            ready.counters,
            ready.kind,
            ready.instance_count,
        ),
        ready.definitions,
        mode,
        buf,
        |rest| match rest.get_mut(..ready.body.len()) {
            Some(dst) => {
                dst.copy_from_slice(ready.body);
                ready.body.len()
            }
            None => 0,
        },
    )
}

/// `NumInstances` of an object of `kind` with `instance_count` instances.
#[inline]
fn num_instances(mode: Mode, kind: InstanceKind, instance_count: usize) -> i32 {
    match (mode, kind) {
        (Mode::Metadata, InstanceKind::Single) => wire::PERF_METADATA_NO_INSTANCES,
        (Mode::Metadata, InstanceKind::Multi) => wire::PERF_METADATA_MULTIPLE_INSTANCES,
        (Mode::Data, InstanceKind::Single) => wire::PERF_NO_INSTANCES,
        (Mode::Data, InstanceKind::Multi) => i32::try_from(instance_count).unwrap_or(i32::MAX),
    }
}

/// The `PERF_OBJECT_TYPE` of `header` with `TotalByteLength`, `DefinitionLength` and
/// `NumCounters` as `lengths` says, and `num_instances`.
#[expect(
    clippy::inline_always,
    reason = "measured with callgrind: out of line, its call and the copy of its result cost \
              15 instructions an object"
)]
#[inline(always)]
fn object_type_bytes(
    header: &ObjectHeader,
    [total, definition_length, num_counters]: [usize; 3],
    num_instances: i32,
) -> [u8; wire::field::object_type::LEN] {
    // `object_len` bounded every length here by a total that fits in u32.
    ObjectTypeRepr {
        total_byte_length: len32(total),
        definition_length: len32(definition_length),
        header_length: len32(wire::field::object_type::LEN),
        object_name_title_index: header.name_title_index,
        object_help_title_index: header.help_title_index,
        detail_level: header.detail_level,
        num_counters: len32(num_counters),
        default_counter: header.default_counter,
        num_instances,
        code_page: 0,
        perf_time: header.perf_time,
        perf_freq: header.perf_freq,
    }
    .to_bytes()
}

/// The 40 bytes of `c`'s `PERF_COUNTER_DEFINITION`.
#[inline]
pub(super) fn definition_bytes(c: &CounterSpec) -> [u8; wire::field::counter_definition::LEN] {
    CounterDefinitionRepr {
        byte_length: len32(wire::field::counter_definition::LEN),
        counter_name_title_index: c.name_title_index,
        counter_help_title_index: c.help_title_index,
        default_scale: c.default_scale,
        detail_level: c.detail_level,
        counter_type: c.counter_type,
        counter_size: c.size,
        counter_offset: c.offset,
    }
    .to_bytes()
}

/// The object of `header`, `counters`, `kind` and `instance_count` into `buf`: its definitions
/// (copied from `definitions` when it holds one per counter, else built), then (for a data
/// reply) what `body` writes after them, then the `PERF_OBJECT_TYPE` with the total; the bytes
/// written.
#[inline]
fn emit_with(
    (header, counters, kind, instance_count): (ObjectHeader, &[CounterSpec], InstanceKind, usize),
    definitions: &[[u8; wire::field::counter_definition::LEN]],
    mode: Mode,
    buf: &mut [u8],
    body: impl FnOnce(&mut [u8]) -> usize,
) -> usize {
    let definition_length =
        wire::field::object_type::LEN + counters.len() * wire::field::counter_definition::LEN;
    let mut at = wire::field::object_type::LEN;
    // The definitions copied whole when the source has them; else each built whole and
    // copied into the next 40 bytes that fit.
    let defs = buf.get_mut(at..).unwrap_or_default().as_chunks_mut().0;
    if definitions.len() == counters.len() {
        for (dst, d) in defs.iter_mut().zip(definitions) {
            *dst = *d;
        }
    } else {
        for (dst, c) in defs.iter_mut().zip(counters) {
            *dst = definition_bytes(c);
        }
    }
    at += counters.len() * wire::field::counter_definition::LEN;
    if mode == Mode::Data {
        at += body(buf.get_mut(at..).unwrap_or_default());
    }
    let at = at.min(buf.len());
    if let Some(dst) = buf.first_chunk_mut() {
        *dst = object_type_bytes(
            &header,
            [at, definition_length, counters.len()],
            num_instances(mode, kind, instance_count),
        );
    }
    at
}

/// [`write_instances`](super::shaped::write_instances) for any plan.
#[inline]
pub(crate) fn write_instances_any<'a, D, I>(
    instances: I,
    plan: &sealed::Plan<'_>,
    out: &mut [u8],
) -> usize
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
{
    let mut rest = out.as_chunks_mut::<8>().0;
    let mut words = 0usize;
    for instance in instances {
        let instance = instance.borrow();
        let (def_words, name_length) = def_words(&instance.spec.name);
        let Some((def, tail)) = core::mem::take(&mut rest).split_at_mut_checked(def_words) else {
            break;
        };
        let Some((block, tail)) = tail.split_at_mut_checked(plan.words) else {
            break;
        };
        // `def` lies inside the reply, whose length fits in u32 (`measure_object`), so does it;
        // and `name_length` is at most its length.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "both are at most the reply's length, which fits in u32"
        )]
        let (def_bytes, name_length) = ((def.len() * 8) as u32, name_length as u32);
        write_instance_def(&instance.spec, def_bytes, name_length, def);
        write_block(block, plan, instance.values);
        rest = tail;
        words += def_words + plan.words;
    }
    words * 8
}

/// Words of the instance definition of an instance named `name`, and its `NameLength`.
#[expect(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
pub(super) fn def_words(name: &InstanceName<'_>) -> (usize, usize) {
    match name {
        InstanceName::Padded(p) => (INSTANCE_DEF_WORDS + p.area.len(), p.name_length as usize),
        // An even number of bytes, plus the NUL, rounded up to a word: one word more than
        // the name's whole words.
        InstanceName::Checked(CheckedName(bytes)) => {
            (INSTANCE_DEF_WORDS + bytes.len() / 8 + 1, bytes.len() + 2)
        }
        other => {
            let name_length = other.name_length();
            // `name_length` may saturate for an over-long `Str`: then the record does not fit.
            (INSTANCE_DEF_WORDS + name_length.div_ceil(8), name_length)
        }
    }
}

/// Words of a `PERF_INSTANCE_DEFINITION` without its name.
const INSTANCE_DEF_WORDS: usize = wire::field::instance_definition::LEN / 8;

// `write_instance_def` stores the fields in this order, two `u32`s per word.
const _: () = {
    use wire::field::instance_definition as f;
    assert!(
        f::BYTE_LENGTH == 0
            && f::PARENT_OBJECT_TITLE_INDEX == 4
            && f::PARENT_OBJECT_INSTANCE == 8
            && f::UNIQUE_ID == 12
            && f::NAME_OFFSET == 16
            && f::NAME_LENGTH == 20
            && f::LEN == 8 * INSTANCE_DEF_WORDS
            && INSTANCE_DEF_WORDS == 3
    );
};

/// Two `u32` fields as one little-endian word, `lo` first.
#[inline]
const fn pair(lo: u32, hi: u32) -> [u8; 8] {
    (lo as u64 | (hi as u64) << 32).to_le_bytes()
}

/// Writes an instance definition, its name, the NUL and zeroed padding into `def`, which is
/// exactly the definition's length.
#[expect(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
pub(super) fn write_instance_def(
    spec: &InstanceSpec<'_>,
    byte_length: u32,
    name_length: u32,
    def: &mut [[u8; 8]],
) {
    let Some((head, name)) = def.split_first_chunk_mut::<INSTANCE_DEF_WORDS>() else {
        return;
    };
    *head = [
        pair(byte_length, spec.parent_title_index),
        pair(spec.parent_instance, spec.unique_id.cast_unsigned()),
        pair(len32(wire::field::instance_definition::LEN), name_length),
    ];
    match &spec.name {
        InstanceName::Padded(p) => put_words(name, p.area),
        InstanceName::Checked(CheckedName(bytes)) => put_le(name, bytes),
        other => put_name(name, *other),
    }
}

/// The name stores of [`write_instance_def`] for names not yet checked (or none).
#[inline(never)]
fn put_name(name: &mut [[u8; 8]], spec_name: InstanceName<'_>) {
    match spec_name {
        InstanceName::Checked(CheckedName(bytes)) => put_le(name, bytes),
        InstanceName::Padded(p) => put_words(name, p.area),
        InstanceName::None => name.fill([0; 8]),
        InstanceName::Utf16(units) => match units_le(units) {
            Some(bytes) => put_le(name, bytes),
            None => put_units(name, units),
        },
        InstanceName::Str(s) => put_str(name.as_flattened_mut(), s),
    }
}

/// Copies a name area into `area` (the same number of words for a name measured as it is):
/// short names as two possibly overlapping pairs of words, without the set-up of a loop.
#[expect(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
fn put_words(area: &mut [[u8; 8]], words: &[[u8; 8]]) {
    let n = words.len();
    if area.len() == n && n.wrapping_sub(2) <= 2 {
        if let (Some(d), Some(w)) = (area.first_chunk_mut::<2>(), words.first_chunk::<2>()) {
            *d = *w;
        }
        if let (Some(d), Some(w)) = (area.last_chunk_mut::<2>(), words.last_chunk::<2>()) {
            *d = *w;
        }
    } else {
        for (d, w) in area.iter_mut().zip(words) {
            *d = *w;
        }
    }
}

/// Writes `units` as UTF-16LE at the start of `area`, the name's slot (whole words, at least
/// one unit longer than the name), and zeroes the rest of it: the NUL and the padding.
#[inline]
fn put_units(area: &mut [[u8; 8]], units: &[u16]) {
    // The NUL and the padding lie in the last word; the name then overwrites its start.
    if let Some(last) = area.last_mut() {
        *last = [0; 8];
    }
    let (pairs, _) = area.as_flattened_mut().as_chunks_mut::<2>();
    // One block copy (the loop is a `memcpy` of the units' little-endian bytes).
    for (dst, unit) in pairs.iter_mut().zip(units) {
        *dst = unit.to_le_bytes();
    }
}

/// [`put_units`] for a name in UTF-16LE bytes (an even number): `area` has one word more
/// than the name has whole words; that last word takes the name's tail, the NUL and the
/// padding.
#[expect(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
fn put_le(area: &mut [[u8; 8]], bytes: &[u8]) {
    let (words, tail) = bytes.as_chunks::<8>();
    // The name's last 0 to 3 units, the NUL and the padding: the last word. For a name of at
    // least one word, the top `tail.len()` bytes of its last 8 (0, 2, 4 or 6: the length is
    // even), shifted down without a branch (in two shifts, so that a tail of 0 bytes shifts
    // all 64 bits out).
    let last = match bytes.last_chunk::<8>() {
        Some(end) => (u64::from_le_bytes(*end) >> 1) >> (63 - 8 * tail.len()),
        None => short_tail(tail),
    };
    let n = words.len();
    if area.len() != n + 1 {
        return put_le_any(area, words, last);
    }
    // Names are short: 2 to 4 words as two (possibly overlapping) pairs, without the set-up
    // of a vectorised loop. (The checks below fold away given the lengths tested here.)
    if n.wrapping_sub(2) <= 2 {
        if let (Some(d), Some(w)) = (area.first_chunk_mut::<2>(), words.first_chunk::<2>()) {
            *d = *w;
        }
        let end = area
            .get_mut(n - 2..n)
            .and_then(|s| s.first_chunk_mut::<2>());
        if let (Some(d), Some(w)) = (end, words.last_chunk::<2>()) {
            *d = *w;
        }
    } else {
        for (d, w) in area.iter_mut().zip(words) {
            *d = *w;
        }
    }
    if let Some(dst) = area.get_mut(n) {
        *dst = last.to_le_bytes();
    }
}

/// The last word of [`put_le`] for a name shorter than a word: its units, zero-extended.
#[inline]
fn short_tail(tail: &[u8]) -> u64 {
    match *tail {
        [b0, b1] => u64::from(u16::from_le_bytes([b0, b1])),
        [b0, b1, b2, b3] => u64::from(u32::from_le_bytes([b0, b1, b2, b3])),
        [b0, b1, b2, b3, b4, b5] => u64::from_le_bytes([b0, b1, b2, b3, b4, b5, 0, 0]),
        // No tail, or (for a name of odd length, which a `CheckedName` is not) a lone byte.
        _ => 0,
    }
}

/// [`put_le`] into an `area` of another length (never, for a consistent one): the words that
/// fit, then `last`, then zeros.
#[cold]
#[inline(never)]
fn put_le_any(area: &mut [[u8; 8]], words: &[[u8; 8]], last: u64) {
    let (head, rest) = area.split_at_mut(words.len().min(area.len()));
    for (dst, word) in head.iter_mut().zip(words) {
        *dst = *word;
    }
    if let Some((dst, rest)) = rest.split_first_mut() {
        *dst = last.to_le_bytes();
        rest.fill([0; 8]);
    }
}

/// Writes `s` as UTF-16LE at the start of `area`, then zeroes the rest of it.
fn put_str(area: &mut [u8], s: &str) {
    let (pairs, odd) = area.as_chunks_mut::<2>();
    odd.fill(0);
    let mut written = 0;
    for (dst, unit) in pairs.iter_mut().zip(s.encode_utf16()) {
        *dst = unit.to_le_bytes();
        written += 1;
    }
    if let Some(rest) = pairs.get_mut(written..) {
        rest.fill([0; 2]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::testing::{counter, header};
    use crate::v1::writer::assign_offsets;
    use crate::v1::writer::sizing::ready_len;

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    /// An object held ready writes what the general emission writes from the same parts, into
    /// a buffer of its length (the one copy of its definitions and body) and into every shorter
    /// one (where it falls back to the general emission), with or without rendered definitions.
    #[test]
    fn ready_objects_write_as_the_general_emission_writes() {
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::BulkCount, 8, 0),
            counter(CounterType::Rawcount, 4, 0),
        ];
        let block_len = assign_offsets(&mut counters).unwrap() as usize;
        let rendered: Vec<_> = counters.iter().map(definition_bytes).collect();
        let body: Vec<u8> = (0..3 * (24 + 16 + block_len))
            .map(|i| i as u8 | 1)
            .collect();
        for (kind, instance_count, body) in [
            (InstanceKind::Multi, 3, &body[..]),
            (InstanceKind::Multi, 0, &[][..]),
            (InstanceKind::Single, 0, &body[..block_len]),
        ] {
            for definitions in [&rendered[..], &[]] {
                let ready = sealed::Ready {
                    header: header(10, false),
                    counters: &counters,
                    definitions,
                    block_len,
                    kind,
                    instance_count,
                    body,
                };
                for mode in [Mode::Data, Mode::Metadata] {
                    let needed = ready_len(&ready, mode).unwrap();
                    for len in 0..=needed {
                        let mut fast = vec![0x5Au8; len];
                        let mut general = vec![0x5Au8; len];
                        let n = emit_ready(&ready, mode, &mut fast);
                        let m = emit_with(
                            (ready.header, ready.counters, kind, instance_count),
                            definitions,
                            mode,
                            &mut general,
                            |rest| match rest.get_mut(..body.len()) {
                                Some(dst) => {
                                    dst.copy_from_slice(body);
                                    body.len()
                                }
                                None => 0,
                            },
                        );
                        assert_eq!((n, &fast), (m, &general), "{kind:?} {mode:?} {len}");
                        if len == needed {
                            assert_eq!(n, needed);
                        }
                        // Sized and written in one pass: the same bytes into a buffer of the
                        // length measured or longer, nothing into a shorter one.
                        let mut once = vec![0x5Au8; len + 8];
                        let written = write_ready(&ready, mode, &mut once[..len]);
                        if len < needed {
                            assert_eq!(written, Err(WriteError::NoSpace { needed }));
                            assert!(once.iter().all(|b| *b == 0x5A), "{kind:?} {mode:?} {len}");
                        } else {
                            assert_eq!(written, Ok(needed));
                            assert_eq!(&once[..len], &general[..], "{kind:?} {mode:?}");
                        }
                        if len == needed {
                            let mut roomy = vec![0x5Au8; needed + 16];
                            assert_eq!(write_ready(&ready, mode, &mut roomy), Ok(needed));
                            assert_eq!(roomy[..needed], general[..]);
                            assert!(roomy[needed..].iter().all(|b| *b == 0x5A));
                        }
                    }
                }
            }
        }
    }
}
