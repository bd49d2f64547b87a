// SPDX-License-Identifier: MIT OR Apache-2.0
//! Random object descriptions written by pcw-core's `collect` through the
//! simulated Perflib host at every buffer size from 0 to needed + 64. Below `needed` the reply
//! is `ERROR_MORE_DATA` with the buffer untouched; from `needed` on it is a success that passes
//! every level-1 check and decodes back to exactly the description. Buffers are poisoned with
//! 0xA5 and 0xCC so any byte the writer forgets shows up as a difference.

use pcw_core::counter_type::{CounterType, DetailLevel};
use pcw_core::v1::collect::{ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::validate::{self, Expect};
use pcw_core::v1::wire::{self, CounterDefinitionRepr};
use pcw_core::v1::writer::{
    self, CounterSpec, InstanceDesc, InstanceName, InstanceSpec, InstancesDesc, Mode, ObjectDesc,
    ObjectHeader, ObjectSource,
};
use pcw_sim::v1_host::{Host, HostConfig};
use proptest::prelude::*;

/// An owned instance: name (`None` = no name), unique id, parent, values.
#[derive(Clone, Debug)]
struct Inst {
    name: Option<String>,
    unique_id: i32,
    parent_title_index: u32,
    parent_instance: u32,
    values: Vec<u64>,
}

#[derive(Clone, Debug)]
enum Kind {
    Single(Vec<u64>),
    Multi(Vec<Inst>),
}

#[derive(Clone, Debug)]
struct Obj {
    header: ObjectHeader,
    counters: Vec<CounterSpec>,
    kind: Kind,
}

fn detail() -> impl Strategy<Value = DetailLevel> {
    prop_oneof![
        Just(DetailLevel::Novice),
        Just(DetailLevel::Advanced),
        Just(DetailLevel::Expert),
        Just(DetailLevel::Wizard),
    ]
}

/// Counter types a counter may start with: every named type except the bases, which are added
/// right after the types that need them.
fn leading_types() -> Vec<CounterType> {
    CounterType::ALL
        .into_iter()
        .filter(|t| !t.is_base())
        .collect()
}

/// One counter (and its base, if its type needs one), sizes valid for the type.
fn counter_group() -> impl Strategy<Value = Vec<CounterSpec>> {
    let types = leading_types();
    (
        prop::sample::select(types),
        any::<bool>(),
        any::<u32>(),
        -7i32..=7,
        detail(),
    )
        .prop_map(|(ty, wide, index, scale, detail_level)| {
            let size_of = |t: CounterType| match t.size() {
                Some(4) if t == CounterType::AverageTimer && wide => 8,
                Some(s) => s,
                None => {
                    if wide {
                        8
                    } else {
                        4
                    }
                }
            };
            let spec = |t: CounterType, name: u32| CounterSpec {
                name_title_index: name,
                help_title_index: name.wrapping_add(1),
                default_scale: scale,
                detail_level,
                counter_type: t,
                size: size_of(t),
                offset: 0,
            };
            let mut group = vec![spec(ty, index)];
            if let Some(base) = ty.required_follower() {
                group.push(spec(base, 0));
            }
            group
        })
}

/// A name: empty, ASCII, or mixed with non-ASCII (Latin-1, CJK, astral) characters.
fn name() -> impl Strategy<Value = Option<String>> {
    let ch = prop_oneof![
        3 => prop::char::range('a', 'z'),
        1 => prop::char::range('\u{a0}', '\u{ff}'),
        1 => prop::char::range('\u{4e00}', '\u{4e20}'),
        1 => prop::char::range('\u{1f600}', '\u{1f610}'),
    ];
    prop_oneof![
        1 => Just(None),
        4 => prop::collection::vec(ch, 0..10).prop_map(|c| Some(c.into_iter().collect())),
    ]
}

fn object() -> impl Strategy<Value = Obj> {
    (
        prop::collection::vec(counter_group(), 0..4),
        any::<(u32, u32, i64, i64)>(),
        detail(),
        any::<bool>(),
        any::<u16>(),
    )
        .prop_flat_map(|(groups, (index, help, time, freq), level, single, pick)| {
            let mut counters: Vec<CounterSpec> = groups.into_iter().flatten().collect();
            writer::assign_offsets(&mut counters).unwrap();
            let n = counters.len();
            let default_counter = if n == 0 {
                -1
            } else {
                i32::try_from(usize::from(pick) % (n + 1)).unwrap() - 1
            };
            let header = ObjectHeader {
                name_title_index: index,
                help_title_index: help,
                detail_level: level,
                default_counter,
                perf_time: time,
                perf_freq: freq,
                costly: false,
            };
            let values = prop::collection::vec(any::<u64>(), n);
            let kind = if single {
                values.prop_map(Kind::Single).boxed()
            } else {
                let inst = (name(), any::<(i32, u32, u32)>(), values).prop_map(
                    |(name, (unique_id, parent_title_index, parent_instance), values)| Inst {
                        name,
                        unique_id,
                        parent_title_index,
                        parent_instance,
                        values,
                    },
                );
                prop::collection::vec(inst, 0..4)
                    .prop_map(Kind::Multi)
                    .boxed()
            };
            kind.prop_map(move |kind| Obj {
                header,
                counters: counters.clone(),
                kind,
            })
        })
}

/// Checks the decoded objects against the description.
fn assert_decodes_to(data: &[u8], objs: &[Obj]) {
    let decoded: Vec<_> = validate::objects(data, 0, Expect::Data)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(decoded.len(), objs.len());
    for (o, want) in decoded.iter().zip(objs) {
        let h = o.header();
        assert_eq!(h.object_name_title_index, want.header.name_title_index);
        assert_eq!(h.object_help_title_index, want.header.help_title_index);
        assert_eq!(h.detail_level, want.header.detail_level);
        assert_eq!(h.default_counter, want.header.default_counter);
        assert_eq!(h.perf_time, want.header.perf_time);
        assert_eq!(h.perf_freq, want.header.perf_freq);
        assert_eq!(h.code_page, 0);
        let counters: Vec<CounterDefinitionRepr> = o.counters().collect();
        assert_eq!(counters.len(), want.counters.len());
        for (c, w) in counters.iter().zip(&want.counters) {
            assert_eq!(c.counter_name_title_index, w.name_title_index);
            assert_eq!(c.counter_help_title_index, w.help_title_index);
            assert_eq!(c.default_scale, w.default_scale);
            assert_eq!(c.detail_level, w.detail_level);
            assert_eq!(c.counter_type, w.counter_type);
            assert_eq!(c.counter_size, w.size);
            assert_eq!(c.counter_offset, w.offset);
        }
        let expect_values = |got: &validate::InstanceRef<'_>, values: &[u64]| {
            for ((c, w), v) in counters.iter().zip(&want.counters).zip(values) {
                let truncated = match w.size {
                    4 => Some(v & 0xFFFF_FFFF),
                    8 => Some(*v),
                    _ => None,
                };
                assert_eq!(got.value(c), truncated);
            }
        };
        let instances: Vec<_> = o.instances().collect();
        match &want.kind {
            Kind::Single(values) => {
                assert_eq!(h.num_instances, wire::PERF_NO_INSTANCES);
                assert_eq!(instances.len(), 1);
                assert!(instances[0].definition().is_none());
                expect_values(&instances[0], values);
            }
            Kind::Multi(list) => {
                assert_eq!(h.num_instances, i32::try_from(list.len()).unwrap());
                assert_eq!(instances.len(), list.len());
                for (got, w) in instances.iter().zip(list) {
                    let def = got.definition().unwrap();
                    assert_eq!(def.unique_id, w.unique_id);
                    assert_eq!(def.parent_object_title_index, w.parent_title_index);
                    assert_eq!(def.parent_object_instance, w.parent_instance);
                    match &w.name {
                        None => {
                            assert_eq!(def.name_length, 0);
                            assert!(got.name_bytes().is_empty());
                        }
                        Some(n) => {
                            let units: Vec<u16> = got.name_utf16().collect();
                            assert_eq!(String::from_utf16(&units).unwrap(), *n);
                            assert_eq!(def.name_length as usize, 2 * (units.len() + 1));
                        }
                    }
                    expect_values(got, &w.values);
                }
            }
        }
    }
}

/// Every buffer size from 0 to needed + 64, poisoned with 0xA5 and with 0xCC.
fn check_every_size(objs: &[Obj]) {
    let instances: Vec<Vec<InstanceDesc<'_>>> = objs
        .iter()
        .map(|o| match &o.kind {
            Kind::Single(_) => Vec::new(),
            Kind::Multi(list) => list
                .iter()
                .map(|i| InstanceDesc {
                    spec: InstanceSpec {
                        name: i
                            .name
                            .as_deref()
                            .map_or(InstanceName::None, InstanceName::Str),
                        unique_id: i.unique_id,
                        parent_title_index: i.parent_title_index,
                        parent_instance: i.parent_instance,
                    },
                    values: &i.values,
                })
                .collect(),
        })
        .collect();
    let descs: Vec<ObjectDesc<'_>> = objs
        .iter()
        .zip(&instances)
        .map(|(o, insts)| ObjectDesc {
            header: o.header,
            counters: &o.counters,
            instances: match &o.kind {
                Kind::Single(values) => InstancesDesc::Single(values),
                Kind::Multi(_) => InstancesDesc::Multi(insts),
            },
        })
        .collect();
    let sources: Vec<&dyn ObjectSource> = descs.iter().map(|d| d as &dyn ObjectSource).collect();
    let needed = writer::objects_len(&sources, Mode::Data).unwrap();
    let mut reference: Option<Vec<u8>> = None;
    for size in 0..=needed + 64 {
        for fill in [0xA5, 0xCC] {
            let host = Host::new(HostConfig {
                check_untouched_on_failure: true,
                buffer_fill: fill,
                ..HostConfig::default()
            });
            let r = host
                .call_sources(&sources, Some("Global"), u32::try_from(size).unwrap())
                .unwrap_or_else(|v| panic!("size {size}, fill {fill:#x}: {v}"));
            if size < needed {
                assert_eq!(r.status, ERROR_MORE_DATA, "size {size}");
                assert!(r.buffer.iter().all(|b| *b == fill), "size {size}");
                continue;
            }
            assert_eq!(r.status, ERROR_SUCCESS, "size {size}");
            assert_eq!(r.data.len(), needed, "size {size}");
            assert_eq!(r.num_object_types as usize, objs.len());
            assert!(
                r.buffer[needed..].iter().all(|b| *b == fill),
                "size {size}: bytes past the reply were touched"
            );
            // Identical under both poisons and at every size: no byte is left unwritten.
            if let Some(first) = &reference {
                assert_eq!(&r.data, first, "size {size}, fill {fill:#x}");
            } else {
                assert_decodes_to(&r.data, objs);
                reference = Some(r.data);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn writer_through_host_at_every_buffer_size(objs in prop::collection::vec(object(), 1..=4)) {
        check_every_size(&objs);
    }
}

#[test]
fn a_fixed_mixed_description() {
    let mut counters = vec![
        CounterSpec {
            name_title_index: 2,
            help_title_index: 3,
            default_scale: 0,
            detail_level: DetailLevel::Novice,
            counter_type: CounterType::LargeRawFraction,
            size: 8,
            offset: 0,
        },
        CounterSpec {
            name_title_index: 0,
            help_title_index: 5,
            default_scale: 0,
            detail_level: DetailLevel::Novice,
            counter_type: CounterType::LargeRawBase,
            size: 8,
            offset: 0,
        },
        CounterSpec {
            name_title_index: 6,
            help_title_index: 7,
            default_scale: -2,
            detail_level: DetailLevel::Wizard,
            counter_type: CounterType::Rawcount,
            size: 4,
            offset: 0,
        },
    ];
    writer::assign_offsets(&mut counters).unwrap();
    let header = ObjectHeader {
        name_title_index: 1000,
        help_title_index: 1001,
        detail_level: DetailLevel::Novice,
        default_counter: 2,
        perf_time: 1,
        perf_freq: 2,
        costly: false,
    };
    let objs = vec![
        Obj {
            header,
            counters: counters.clone(),
            kind: Kind::Multi(vec![
                Inst {
                    name: Some(String::new()),
                    unique_id: -1,
                    parent_title_index: 0,
                    parent_instance: 0,
                    values: vec![u64::MAX, 2, 0x1_2345_6789],
                },
                Inst {
                    name: Some("Ωmega😀".into()),
                    unique_id: -1,
                    parent_title_index: 1002,
                    parent_instance: 3,
                    values: vec![4, 5, 6],
                },
                Inst {
                    name: None,
                    unique_id: 7,
                    parent_title_index: 0,
                    parent_instance: 0,
                    values: vec![7, 8, 9],
                },
            ]),
        },
        Obj {
            header: ObjectHeader {
                name_title_index: 1002,
                default_counter: -1,
                ..header
            },
            counters: Vec::new(),
            kind: Kind::Multi(Vec::new()),
        },
        Obj {
            header: ObjectHeader {
                name_title_index: 1004,
                ..header
            },
            counters,
            kind: Kind::Single(vec![10, 11, 12]),
        },
    ];
    check_every_size(&objs);
}
