// SPDX-License-Identifier: MIT OR Apache-2.0
//! Sizing: the checks of a description and the bytes it takes, all done before anything is
//! written (so a reply is all or nothing). A source that knows its name areas' total
//! ([`ObjectSource::name_areas_len`]) is sized without a pass over its instances.

use core::borrow::Borrow;

use crate::bytes::{align8, len32};
use crate::counter_type::CounterType;
use crate::v1::wire;
use crate::v1::writer::{
    CounterSpec, InstanceDesc, InstanceKind, Mode, ObjectSource, WriteError, sealed,
};

/// Where the V1 layout puts the next counter of `size` bytes when the block's first `end` bytes
/// are taken: its offset (aligned to its size; to 4 for a size of 0) and the new `end`. `None`
/// for a size other than 0, 4 or 8, or past `u32`. The one statement of the layout rule:
/// [`assign_offsets`] and the snapshot format's counter blocks both follow it.
#[inline]
pub(crate) const fn place_counter(end: u32, size: u32) -> Option<(u32, u32)> {
    let align = match size {
        0 | 4 => 4,
        8 => 8,
        _ => return None,
    };
    let Some(padded) = end.checked_add(align - 1) else {
        return None;
    };
    let offset = padded & !(align - 1);
    match offset.checked_add(size) {
        Some(next) => Some((offset, next)),
        None => None,
    }
}

/// Lays counters out one after another in the order given, each aligned to its size, starting
/// right after the `PERF_COUNTER_BLOCK` header; returns the counter block length (8-aligned).
/// Counters of size 0 get the offset where the next value would go.
///
/// # Errors
/// [`WriteError::BadCounterSize`] for a size other than 0, 4 or 8; [`WriteError::TooLarge`].
pub fn assign_offsets(counters: &mut [CounterSpec]) -> Result<u32, WriteError> {
    let mut next: u32 = len32(wire::field::counter_block::LEN);
    for (index, c) in counters.iter_mut().enumerate() {
        let (offset, end) = match place_counter(next, c.size) {
            Some(placed) => placed,
            None if matches!(c.size, 0 | 4 | 8) => return Err(WriteError::TooLarge),
            None => return Err(WriteError::BadCounterSize { counter: index }),
        };
        c.offset = offset;
        next = end;
    }
    let len = align8(next as usize).ok_or(WriteError::TooLarge)?;
    u32::try_from(len).map_err(|_| WriteError::TooLarge)
}

/// Checks one object's counter definitions and returns its counter block length (8-aligned,
/// at least 8).
pub(crate) fn check_counters(counters: &[CounterSpec]) -> Result<usize, WriteError> {
    let mut end = wire::field::counter_block::LEN;
    for (index, c) in counters.iter().enumerate() {
        let err_size = WriteError::BadCounterSize { counter: index };
        if !matches!(c.size, 0 | 4 | 8) {
            return Err(err_size);
        }
        if let Some(declared) = c.counter_type.size() {
            // PERF_AVERAGE_TIMER is declared DWORD but read as 64-bit by Microsoft's own sample
            // (`docs/counter-types.md`): both sizes are accepted for it, `CounterSize` rules.
            let average_timer = matches!(c.counter_type, CounterType::AverageTimer);
            if declared != c.size && !(average_timer && c.size == 8) {
                return Err(err_size);
            }
        }
        let offset = c.offset as usize;
        if offset < wire::field::counter_block::LEN {
            return Err(WriteError::CounterOffsetInHeader { counter: index });
        }
        if c.size != 0 && !offset.is_multiple_of(c.size as usize) {
            return Err(WriteError::MisalignedCounter { counter: index });
        }
        if let Some(base) = c.counter_type.required_follower() {
            let next = counters.get(index + 1).map(|n| n.counter_type);
            if next != Some(base) {
                return Err(WriteError::BaseNotFollowing { counter: index });
            }
        }
        end = end.max(
            offset
                .checked_add(c.size as usize)
                .ok_or(WriteError::TooLarge)?,
        );
    }
    align8(end).ok_or(WriteError::TooLarge)
}

pub(super) fn add(a: usize, b: usize) -> Result<usize, WriteError> {
    a.checked_add(b).ok_or(WriteError::TooLarge)
}

/// Bytes one object takes, after checking its description.
///
/// # Errors
/// Any [`WriteError`] other than `NoSpace`.
pub fn object_len(src: &dyn ObjectSource, mode: Mode) -> Result<usize, WriteError> {
    measure_object(src, mode).map(|(len, _)| len)
}

/// Bytes one object takes and its counter block length, after checking its description.
pub(super) fn measure_object(
    src: &dyn ObjectSource,
    mode: Mode,
) -> Result<(usize, usize), WriteError> {
    match src.ready(sealed::Token) {
        Some(ready) => measure_ready(ready, mode),
        None => measure_unready(src, mode),
    }
}

/// [`measure_object`] of an object its source holds ready.
#[inline]
pub(super) fn measure_ready(
    ready: &sealed::Ready<'_>,
    mode: Mode,
) -> Result<(usize, usize), WriteError> {
    let len = ready_len(ready, mode).ok_or(WriteError::TooLarge)?;
    Ok((fits_u32(len)?, ready.block_len))
}

/// [`measure_object`] of an object its source does not hold ready.
pub(super) fn measure_unready(
    src: &dyn ObjectSource,
    mode: Mode,
) -> Result<(usize, usize), WriteError> {
    let counters = src.counters();
    let block = match src.checked_block_len(sealed::Token) {
        Some(block) => block,
        None => check_counters(counters)?,
    };
    let defs = counters
        .len()
        .checked_mul(wire::field::counter_definition::LEN)
        .ok_or(WriteError::TooLarge)?;
    let mut len = add(wire::field::object_type::LEN, defs)?;
    if mode == Mode::Data {
        match src.kind() {
            InstanceKind::Single => {
                if src.counter_block(block, sealed::Token).is_none()
                    && src.instance(0).values.len() != counters.len()
                {
                    return Err(WriteError::ValueCount { instance: 0 });
                }
                len = add(len, block)?;
            }
            InstanceKind::Multi => {
                let instances = match src.name_areas_len() {
                    // Known: the fixed parts of the definitions and the blocks are all alike.
                    Some(names) => add(
                        names,
                        src.instance_count()
                            .checked_mul(add(wire::field::instance_definition::LEN, block)?)
                            .ok_or(WriteError::TooLarge)?,
                    )?,
                    None => src.instances_len(block, sealed::Token)?,
                };
                len = add(len, instances)?;
            }
        }
    }
    Ok((fits_u32(len)?, block))
}

/// Bytes of an instance definition of that many UTF-16 units of name bytes plus the NUL
/// (`NameLength`, at most 2 048 for a checked name), padding included.
#[inline]
const fn def_len(name_length: usize) -> usize {
    wire::field::instance_definition::LEN + ((name_length + 7) & !7)
}

/// [`ObjectSource::instances_len`]: one pass over the instances, checking each name and value
/// count in instance order.
#[inline]
pub(super) fn instances_len<'a, D, I>(
    instances: I,
    counters: usize,
    block_len: usize,
) -> Result<usize, WriteError>
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
{
    // The padded names here; the fixed parts of the definitions and the counter blocks (all
    // alike) after the loop.
    let mut names = 0usize;
    let mut count = 0usize;
    for instance in instances {
        let instance = instance.borrow();
        let name_length = instance
            .spec
            .name
            .checked_name_length()
            .ok_or(WriteError::BadInstanceName { instance: count })?;
        if instance.values.len() != counters {
            return Err(WriteError::ValueCount { instance: count });
        }
        // A checked name takes at most 2 048 bytes with its NUL and padding.
        names = add(
            names,
            def_len(name_length) - wire::field::instance_definition::LEN,
        )?;
        count += 1;
    }
    let record = add(wire::field::instance_definition::LEN, block_len)?;
    add(
        names,
        count.checked_mul(record).ok_or(WriteError::TooLarge)?,
    )
}

pub(super) fn fits_u32(len: usize) -> Result<usize, WriteError> {
    u32::try_from(len)
        .map(|_| len)
        .map_err(|_| WriteError::TooLarge)
}

/// Bytes all `objects` take together.
///
/// # Errors
/// As [`object_len`].
pub fn objects_len(objects: &[&dyn ObjectSource], mode: Mode) -> Result<usize, WriteError> {
    let mut total = 0usize;
    for o in objects {
        total = add(total, object_len(*o, mode)?)?;
    }
    fits_u32(total)
}

/// Bytes of an object given [ready](sealed::Ready): its definitions, and its body for a data
/// reply; `None` past `usize`.
pub(super) fn ready_len(ready: &sealed::Ready<'_>, mode: Mode) -> Option<usize> {
    let defs = ready
        .counters
        .len()
        .checked_mul(wire::field::counter_definition::LEN)?
        .checked_add(wire::field::object_type::LEN)?;
    match mode {
        Mode::Data => defs.checked_add(ready.body.len()),
        Mode::Metadata => Some(defs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::v1::validate::{self, Expect};
    use crate::v1::writer::tests::{counter, header, write_both};
    use crate::v1::writer::*;

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn bad_descriptions_are_refused_before_writing() {
        let cases: [(&[CounterSpec], WriteError); 5] = [
            (
                &[counter(CounterType::Rawcount, 4, 0)],
                WriteError::CounterOffsetInHeader { counter: 0 },
            ),
            (
                &[counter(CounterType::LargeRawcount, 8, 12)],
                WriteError::MisalignedCounter { counter: 0 },
            ),
            (
                &[counter(CounterType::LargeRawcount, 4, 4)],
                WriteError::BadCounterSize { counter: 0 },
            ),
            (
                &[
                    counter(CounterType::RawFraction, 4, 4),
                    counter(CounterType::Rawcount, 4, 8),
                ],
                WriteError::BaseNotFollowing { counter: 0 },
            ),
            (
                &[
                    counter(CounterType::Rawcount, 4, 4),
                    counter(CounterType::RawFraction, 4, 8),
                ],
                WriteError::BaseNotFollowing { counter: 1 },
            ),
        ];
        for (counters, expected) in cases {
            let values = vec![0u64; counters.len()];
            let obj = ObjectDesc {
                header: header(10, false),
                counters,
                instances: InstancesDesc::Single(&values),
            };
            let mut buf = [0x77u8; 512];
            assert_eq!(write_objects(&[&obj], Mode::Data, &mut buf), Err(expected));
            assert!(buf.iter().all(|b| *b == 0x77));
        }
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let long: Vec<u16> = vec![u16::from(b'a'); MAX_INSTANCE_NAME_UNITS + 1];
        let bad_names = [InstanceName::Str("a\0b"), InstanceName::Utf16(&long)];
        for name in bad_names {
            let instances = [InstanceDesc {
                spec: InstanceSpec {
                    name,
                    unique_id: -1,
                    parent_title_index: 0,
                    parent_instance: 0,
                },
                values: &[1],
            }];
            let obj = ObjectDesc {
                header: header(10, false),
                counters: &counters,
                instances: InstancesDesc::Multi(&instances),
            };
            let mut buf = [0u8; 4096];
            assert_eq!(
                write_objects(&[&obj], Mode::Data, &mut buf),
                Err(WriteError::BadInstanceName { instance: 0 })
            );
        }
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[1, 2]),
        };
        assert_eq!(
            write_objects(&[&obj], Mode::Data, &mut [0u8; 512]),
            Err(WriteError::ValueCount { instance: 0 })
        );
    }

    #[test]
    fn assign_offsets_aligns_each_counter_to_its_size() {
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::LargeRawcount, 8, 0),
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::NoData, 0, 0),
            counter(CounterType::RawFraction, 4, 0),
            counter(CounterType::RawBase, 4, 0),
        ];
        let block = assign_offsets(&mut counters).unwrap();
        let offsets: Vec<u32> = counters.iter().map(|c| c.offset).collect();
        assert_eq!(offsets, [4, 8, 16, 20, 20, 24]);
        assert_eq!(block, 32);
        counters[1].size = 3;
        assert_eq!(
            assign_offsets(&mut counters),
            Err(WriteError::BadCounterSize { counter: 1 })
        );
    }

    #[test]
    fn precision_timers_need_their_timestamp_next() {
        let alone = [counter(CounterType::Precision100nsTimer, 8, 8)];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &alone,
            instances: InstancesDesc::Single(&[1]),
        };
        assert_eq!(
            write_objects(&[&obj], Mode::Data, &mut [0u8; 256]),
            Err(WriteError::BaseNotFollowing { counter: 0 })
        );
        let paired = [
            counter(CounterType::Precision100nsTimer, 8, 8),
            counter(CounterType::LargeRawBase, 8, 16),
        ];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &paired,
            instances: InstancesDesc::Single(&[1, 2]),
        };
        let out = write_both(&[&obj], Mode::Data);
        validate::validate_objects(&out, 1, Expect::Data).unwrap();
    }

    #[test]
    fn average_timer_may_be_eight_bytes() {
        let counters = [
            counter(CounterType::AverageTimer, 8, 8),
            counter(CounterType::AverageBase, 4, 16),
        ];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[u64::MAX, 3]),
        };
        let out = write_both(&[&obj], Mode::Data);
        validate::validate_objects(&out, 1, Expect::Data).unwrap();
    }
}
