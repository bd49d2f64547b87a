// SPDX-License-Identifier: MIT OR Apache-2.0
//! One counterset of a validated snapshot (`crate::snapshot`) as a V1 object: the
//! [`ObjectSource`] the perf DLL hands the writer, reading the snapshot in place.
//!
//! The snapshot's records are the V1 instances themselves (definition, name, counter block), so
//! when the object's counter definitions lay the block out as the set does
//! ([`SetView::counter_layout`]: the same sizes at the same offsets), the writer sizes the
//! object from the set's length and copies the set's records as one block; a single-instance
//! object copies its instance's counter block.
//!
//! Mapping: instances in snapshot order; `UniqueID = PERF_NO_UNIQUE_ID` (V1's name-identified
//! convention); `ParentObjectTitleIndex = 0` and `ParentObjectInstance = 0` (the parent object is
//! the manifest's, not the snapshot's, concern); values as the set's counter blocks hold them (a
//! 4-byte counter keeps the low half). A single-instance object takes the set's one instance,
//! and reads zeros while the set has none (or is absent); a multi-instance object whose set is
//! absent has no instances. A set with instances whose layout differs from the object's makes
//! the writer refuse the reply (`WriteError::ValueCount`) before writing anything: its values
//! cannot be placed where the object's definitions say they are. (A set without instances has
//! no values to misplace: a multi-instance object is written without instances, a
//! single-instance one reads zeros.)

use crate::snapshot::{MAX_COUNTERS, SetView};
use crate::v1::wire::PERF_NO_UNIQUE_ID;
use crate::v1::writer::{
    CheckedCounters, CounterSpec, InstanceDesc, InstanceKind, InstanceName, InstanceSpec,
    ObjectHeader, ObjectSource, sealed,
};

/// One object over one snapshot set.
#[derive(Clone, Copy, Debug)]
pub struct SetObject<'a> {
    /// The header, counters and kind; for checked counters also their definitions' bytes and
    /// block length and, when the object can be written as its definitions and one copy, its
    /// instance count and what is copied — worked out once when it is made, and handed to the
    /// writer by reference ([`ObjectSource::ready`]).
    parts: sealed::Ready<'a>,
    /// The counters were checked already (`parts.block_len` is theirs).
    checked: bool,
    /// `parts` holds the whole object ready to write.
    prepared: bool,
    /// The set's counter blocks are laid out as the counters say.
    same_layout: bool,
    set: Option<SetView<'a>>,
}

impl<'a> SetObject<'a> {
    /// The object of `header` and `counters`, single- or multi-instance as `kind` says, over
    /// `set` (`None`: the snapshot has no set for it).
    pub fn new(
        header: ObjectHeader,
        counters: &'a [CounterSpec],
        kind: InstanceKind,
        set: Option<SetView<'a>>,
    ) -> Self {
        let same_layout = Self::laid_out_as(set, counters);
        Self {
            parts: sealed::Ready {
                header,
                counters,
                definitions: &[],
                block_len: 0,
                kind,
                instance_count: 0,
                body: &[],
            },
            checked: false,
            prepared: false,
            same_layout,
            set,
        }
    }

    /// [`SetObject::new`] for counter definitions checked already: the writer then takes their
    /// block length instead of checking them again on every reply.
    pub fn checked<C: AsRef<[CounterSpec]>>(
        header: ObjectHeader,
        counters: &'a CheckedCounters<C>,
        kind: InstanceKind,
        set: Option<SetView<'a>>,
    ) -> Self {
        let specs = counters.counters();
        let block_len = counters.block_len();
        // Counters laid out by their sizes alone (as the snapshot's sets are): the same layout
        // exactly when the sizes are the same.
        let same_layout = if counters.canonical() {
            set.is_some_and(|s| {
                let sizes = s.counter_sizes();
                sizes.len() == specs.len()
                    && sizes
                        .iter()
                        .zip(specs)
                        .all(|(s, c)| u32::from(*s) == c.size)
            })
        } else {
            Self::laid_out_as(set, specs)
        };
        // What is copied besides the definitions: the set's records (a multi-instance object;
        // none without a set) or its one counter block (a single-instance one), when they can
        // be.
        let copyable = set.filter(|s| same_layout && s.block_len() == block_len);
        let prepared = match (kind, set) {
            (InstanceKind::Multi, None) => Some((0, &[][..])),
            (InstanceKind::Multi, Some(_)) => copyable.map(|s| (s.instance_count(), s.records())),
            (InstanceKind::Single, _) => {
                Self::block_of(copyable, block_len).map(|block| (0, block))
            }
        };
        let (instance_count, body) = prepared.unwrap_or((0, &[]));
        Self {
            parts: sealed::Ready {
                header,
                counters: specs,
                definitions: counters.definition_bytes(),
                block_len,
                kind,
                instance_count,
                body,
            },
            checked: true,
            prepared: prepared.is_some(),
            same_layout,
            set,
        }
    }

    /// Whether `set`'s counter blocks are laid out as `counters` say (false without a set).
    fn laid_out_as(set: Option<SetView<'a>>, counters: &[CounterSpec]) -> bool {
        set.is_some_and(|s| {
            let layout = s.counter_layout();
            layout.len() == counters.len()
                && layout.zip(counters).all(|((offset, size), c)| {
                    c.offset as usize == offset && c.size as usize == size
                })
        })
    }

    /// The single instance's counter block of `set`, when it takes `block_len` bytes.
    fn block_of(set: Option<SetView<'a>>, block_len: usize) -> Option<&'a [u8]> {
        let block = set?.instance(0)?.block();
        (block.len() == block_len).then_some(block)
    }

    /// The set read, if any.
    pub const fn set(&self) -> Option<SetView<'a>> {
        self.set
    }

    /// Whether the set's counter blocks are laid out as the object's counter definitions say
    /// (false without a set).
    pub const fn same_layout(&self) -> bool {
        self.same_layout
    }

    /// The set, when its records can be copied into a reply whose counter blocks take
    /// `block_len` bytes.
    fn copyable(&self, block_len: usize) -> Option<SetView<'a>> {
        self.set
            .filter(|s| self.same_layout && s.block_len() == block_len)
    }
}

/// The values of a single-instance object without data yet (a set has at most
/// [`MAX_COUNTERS`] counters).
static ZEROS: [u64; MAX_COUNTERS as usize] = [0; MAX_COUNTERS as usize];

impl ObjectSource for SetObject<'_> {
    fn header(&self) -> ObjectHeader {
        self.parts.header
    }

    fn counters(&self) -> &[CounterSpec] {
        self.parts.counters
    }

    fn selection_key(&self, _: sealed::Token) -> (bool, u32) {
        (self.parts.header.costly, self.parts.header.name_title_index)
    }

    fn kind(&self) -> InstanceKind {
        self.parts.kind
    }

    fn instance_count(&self) -> usize {
        self.set.map_or(0, |s| s.instance_count())
    }

    /// An instance of the set: its name, and values whose count is never the object's — the
    /// values stay in the record's counter block, which the writer copies (through
    /// [`ObjectSource::name_areas_len`] and the copy of the records, or the single instance's
    /// counter block) when the layouts agree; otherwise the writer refuses the reply. Without
    /// an instance, a single-instance object reads zeros.
    fn instance(&self, index: usize) -> InstanceDesc<'_> {
        if let Some(view) = self.set.and_then(|s| s.instance(index)) {
            let never = if self.parts.counters.is_empty() {
                ZEROS.get(..1).unwrap_or_default()
            } else {
                &[]
            };
            return InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::Padded(view.padded_name()),
                    parent_title_index: 0,
                    parent_instance: 0,
                    unique_id: PERF_NO_UNIQUE_ID,
                },
                values: never,
            };
        }
        let values = match self.parts.kind {
            InstanceKind::Multi => &[][..],
            InstanceKind::Single => ZEROS.get(..self.parts.counters.len()).unwrap_or_default(),
        };
        InstanceDesc {
            values,
            ..InstanceDesc::EMPTY
        }
    }

    fn name_areas_len(&self) -> Option<usize> {
        match self.set {
            None => Some(0),
            // Vouched for only when the records can be copied as they are; otherwise the
            // sizing pass refuses the first instance.
            Some(set) => self.same_layout.then(|| set.name_areas_len()),
        }
    }

    /// The object ready to write when its counter definitions were checked and the set's
    /// records (a multi-instance object; none without a set) or its one counter block (a
    /// single-instance one) can be copied.
    fn ready(&self, _: sealed::Token) -> Option<&sealed::Ready<'_>> {
        self.prepared.then_some(&self.parts)
    }

    fn checked_block_len(&self, _: sealed::Token) -> Option<usize> {
        self.checked.then_some(self.parts.block_len)
    }

    /// The set's records, copied whole by the writer.
    fn instance_records(&self, block_len: usize, _: sealed::Token) -> Option<&[u8]> {
        self.copyable(block_len).map(|s| s.records())
    }

    /// Never reached for a set the writer accepted (it copies [`Self::instance_records`]);
    /// writes nothing.
    fn write_instances(&self, _: &sealed::Plan<'_>, _: &mut [u8], _: sealed::Token) -> usize {
        0
    }

    fn counter_block(&self, block_len: usize, _: sealed::Token) -> Option<&[u8]> {
        Self::block_of(self.copyable(block_len), block_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::snapshot::{PARENT_NONE, Snapshot, SnapshotHeader, SnapshotWriter};
    use crate::v1::validate::{self, Expect};
    use crate::v1::writer::tests::{counter, header};
    use crate::v1::writer::{
        InstancesDesc, Mode, ObjectDesc, PaddedName, WriteError, assign_offsets, objects_len,
        write_objects,
    };

    extern crate std;
    use proptest::prelude::*;
    use std::format;
    use std::string::String;
    use std::vec;
    use std::vec::Vec;

    /// The sizes of `n` counters laid out as [`counters`] lays them out.
    fn sizes(n: usize) -> Vec<u8> {
        (0..n).map(|i| if i % 3 == 2 { 8 } else { 4 }).collect()
    }

    /// `names` and their values encoded as set 0 (multi-instance, counters of `sizes`) and set
    /// 1 (single, if `single` has values: 8-byte counters), into an 8-aligned buffer.
    fn encode(
        names: &[String],
        values: &[Vec<u64>],
        sizes: &[u8],
        single: Option<&[u64]>,
    ) -> Vec<u64> {
        let write = |w: &mut SnapshotWriter<'_>| {
            w.begin_set(0, true, sizes, names.len() as u32).unwrap();
            for (i, (name, v)) in names.iter().zip(values).enumerate() {
                let units: Vec<u16> = name.encode_utf16().collect();
                w.instance(i as u32, PARENT_NONE, &units, v).unwrap();
            }
            if let Some(s) = single {
                w.begin_set(1, false, &vec![8; s.len()], 1).unwrap();
                w.instance(0, PARENT_NONE, &[], s).unwrap();
            }
        };
        let mut m = SnapshotWriter::measuring(SnapshotHeader::default());
        write(&mut m);
        let len = m.finish().unwrap();
        let mut words = vec![0u64; len / 8];
        let mut w = SnapshotWriter::new(bytes_of(&mut words), SnapshotHeader::default());
        write(&mut w);
        assert_eq!(w.finish(), Ok(len));
        words
    }

    fn bytes_of(words: &mut [u64]) -> &mut [u8] {
        let len = words.len() * 8;
        // SAFETY: the words' own bytes, borrowed for as long as `words`.
        unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
    }

    fn counters(n: usize) -> Vec<CounterSpec> {
        let mut c: Vec<CounterSpec> = (0..n)
            .map(|i| {
                if i % 3 == 2 {
                    counter(CounterType::BulkCount, 8, 0)
                } else {
                    counter(CounterType::Rawcount, 4, 0)
                }
            })
            .collect();
        assign_offsets(&mut c).unwrap();
        c
    }

    /// The reply over the snapshot and the reply over the same data as an `ObjectDesc` with
    /// unchecked names, with every too-small buffer left untouched on the snapshot side.
    fn both(names: &[String], values: &[Vec<u64>], counters: &[CounterSpec]) -> (Vec<u8>, Vec<u8>) {
        let announced = values.first().map_or(counters.len(), Vec::len);
        let mut words = encode(names, values, &sizes(announced), None);
        let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
        let ours = SetObject::new(
            header(10, false),
            counters,
            InstanceKind::Multi,
            snapshot.find_set(0),
        );
        assert_eq!(ours.same_layout(), announced == counters.len());
        assert_eq!(ours.name_areas_len().is_some(), announced == counters.len());
        let instances: Vec<InstanceDesc<'_>> = names
            .iter()
            .zip(values)
            .map(|(n, v)| InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::Str(n),
                    parent_title_index: 0,
                    parent_instance: 0,
                    unique_id: PERF_NO_UNIQUE_ID,
                },
                values: v,
            })
            .collect();
        let desc = ObjectDesc {
            header: header(10, false),
            counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let write = |o: &dyn ObjectSource| -> Vec<u8> {
            match objects_len(&[o], Mode::Data) {
                Ok(needed) => {
                    let mut buf = vec![0x5Au8; needed];
                    let w = write_objects(&[o], Mode::Data, &mut buf).unwrap();
                    assert_eq!(w.bytes, needed);
                    buf
                }
                Err(e) => {
                    let mut buf = [0x5Au8; 64];
                    assert_eq!(write_objects(&[o], Mode::Data, &mut buf), Err(e));
                    assert!(buf.iter().all(|b| *b == 0x5A), "refused: nothing written");
                    format!("{e:?}").into_bytes()
                }
            }
        };
        let mine = write(&ours);
        // The same object over checked definitions (the writer's ready path, when the layout
        // agrees) writes the same bytes, or is refused the same way; so does its metadata.
        // Definitions built per reply, then rendered once and copied.
        let mut both = CheckedCounters::new(counters).map(|c| (c.clone(), c));
        if let Ok((_, rendered)) = &mut both {
            rendered.render_definitions().unwrap();
            assert_eq!(rendered.definition_bytes().len(), counters.len());
        }
        for checked in both.iter().flat_map(|(a, b)| [a, b]) {
            let fast = SetObject::checked(
                header(10, false),
                checked,
                InstanceKind::Multi,
                snapshot.find_set(0),
            );
            assert_eq!(write(&fast), mine, "checked definitions");
            for mode in [Mode::Data, Mode::Metadata] {
                assert_eq!(objects_len(&[&fast], mode), objects_len(&[&ours], mode));
                if let Ok(needed) = objects_len(&[&ours], mode) {
                    let (mut a, mut b) = (vec![0x11u8; needed], vec![0x22u8; needed]);
                    write_objects(&[&ours], mode, &mut a).unwrap();
                    write_objects(&[&fast], mode, &mut b).unwrap();
                    assert_eq!(a, b, "{mode:?}");
                }
            }
        }
        if let Ok(needed) = objects_len(&[&ours], Mode::Data) {
            for size in [0, needed / 2, needed - 8, needed - 1] {
                let mut buf = vec![0x77u8; size];
                assert_eq!(
                    write_objects(&[&ours], Mode::Data, &mut buf),
                    Err(WriteError::NoSpace { needed })
                );
                assert!(buf.iter().all(|b| *b == 0x77), "all or nothing");
            }
            if !counters.is_empty() {
                // (`DefaultCounter` 0 needs a counter.)
                validate::validate_objects(&mine, 1, Expect::Data).unwrap();
            }
        }
        (mine, write(&desc))
    }

    #[test]
    fn a_snapshot_set_writes_what_the_same_description_writes() {
        let names: Vec<String> = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "Queue 000001",
            "0123456789abcdef",
            "Größe ✓ 😀",
            "0123456789abcdefghijklmnopqrstuvwxyz0123",
        ]
        .iter()
        .map(|s| String::from(*s))
        .collect();
        for n in [0, 1, 2, 3, 4, 5, 7] {
            let values: Vec<Vec<u64>> = (0..names.len() as u64)
                .map(|i| {
                    (0..n as u64)
                        .map(|k| (i << 40) ^ (k * 0x1_0000_0001) ^ 0x8000_0000)
                        .collect()
                })
                .collect();
            let (ours, theirs) = both(&names, &values, &counters(n));
            assert_eq!(ours, theirs, "{n} counters");
        }
        let long: String = "x".repeat(usize::from(crate::snapshot::MAX_NAME_UNITS));
        let (ours, theirs) = both(&[long], &[vec![1, 2]], &counters(2));
        assert_eq!(ours, theirs);
    }

    #[test]
    fn a_set_with_another_counter_count_is_refused_before_writing() {
        let names = [String::from("a"), String::from("b")];
        let values = [vec![1, 2, 3], vec![4, 5, 6]];
        let (ours, theirs) = both(&names, &values, &counters(2));
        assert_eq!(ours, b"ValueCount { instance: 0 }");
        assert_eq!(theirs, ours);
    }

    #[test]
    fn a_set_laid_out_otherwise_is_refused_before_writing() {
        let names = [String::from("a"), String::from("b")];
        let values = [vec![1, 2, 3], vec![4, 5, 6]];
        let c = counters(3);
        for other in [vec![8u8, 8, 8], vec![4, 4, 4], vec![0, 4, 8]] {
            let mut words = encode(&names, &values, &other, None);
            let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
            let o = SetObject::new(
                header(10, false),
                &c,
                InstanceKind::Multi,
                snapshot.find_set(0),
            );
            assert!(!o.same_layout(), "{other:?}");
            let mut buf = [0x11u8; 512];
            assert_eq!(
                write_objects(&[&o], Mode::Data, &mut buf),
                Err(WriteError::ValueCount { instance: 0 })
            );
            assert!(buf.iter().all(|b| *b == 0x11), "nothing written");
        }
        // An object without counters over a set with one.
        let mut words = encode(&names, &[vec![1], vec![2]], &[4], None);
        let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
        let o = SetObject::new(
            header(10, false),
            &[],
            InstanceKind::Multi,
            snapshot.find_set(0),
        );
        assert_eq!(
            objects_len(&[&o], Mode::Data),
            Err(WriteError::ValueCount { instance: 0 })
        );
    }

    /// A set whose blocks take the object's block length but place the values elsewhere is
    /// refused over checked definitions as over unchecked ones (the length alone would let its
    /// records or its block be copied under definitions that read them wrongly).
    #[test]
    fn a_set_of_the_same_block_length_laid_out_otherwise_is_refused_over_checked_definitions() {
        // Counters of 4, 4 and 8 bytes: a 24-byte block, as sets of 8, 4, 4 and of 8, 8 take.
        let c = counters(3);
        let mut rendered = CheckedCounters::new(&c[..]).unwrap();
        rendered.render_definitions().unwrap();
        let plain = CheckedCounters::new(&c[..]).unwrap();
        let names = [String::from("a")];
        let mut multi = encode(&names, &[vec![1, 2, 3]], &[8, 4, 4], Some(&[7, 8]));
        let snapshot = Snapshot::parse(bytes_of(&mut multi)).unwrap();
        for (kind, index) in [(InstanceKind::Multi, 0), (InstanceKind::Single, 1)] {
            let set = snapshot.find_set(index);
            assert_eq!(set.map(|s| s.block_len()), Some(24), "{kind:?}");
            let objects = [
                SetObject::new(header(10, false), &c, kind, set),
                SetObject::checked(header(10, false), &plain, kind, set),
                SetObject::checked(header(10, false), &rendered, kind, set),
            ];
            for (i, o) in objects.iter().enumerate() {
                assert!(!o.same_layout(), "{kind:?}, object {i}");
                let mut buf = [0x11u8; 512];
                assert_eq!(
                    write_objects(&[o], Mode::Data, &mut buf),
                    Err(WriteError::ValueCount { instance: 0 }),
                    "{kind:?}, object {i}"
                );
                assert!(
                    buf.iter().all(|b| *b == 0x11),
                    "{kind:?}, object {i}: nothing written"
                );
            }
        }
    }

    #[test]
    fn single_instance_objects_and_absent_sets() {
        let mut c: Vec<CounterSpec> = (0..3)
            .map(|_| counter(CounterType::BulkCount, 8, 0))
            .collect();
        assign_offsets(&mut c).unwrap();
        let mut words = encode(&[], &[], &[], Some(&[7, 8, 9]));
        let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
        let single = SetObject::new(
            header(12, false),
            &c,
            InstanceKind::Single,
            snapshot.find_set(1),
        );
        assert!(single.same_layout());
        let empty = SetObject::new(header(14, false), &c, InstanceKind::Single, None);
        assert_eq!(empty.instance(0).values, &[0, 0, 0]);
        let absent = SetObject::new(header(16, false), &c, InstanceKind::Multi, None);
        assert_eq!(absent.name_areas_len(), Some(0));
        let objects: [&dyn ObjectSource; 3] = [&single, &empty, &absent];
        let needed = objects_len(&objects, Mode::Data).unwrap();
        let mut buf = vec![0u8; needed];
        write_objects(&objects, Mode::Data, &mut buf).unwrap();
        validate::validate_objects(&buf, 3, Expect::Data).unwrap();
        // The same bytes as fixed data.
        let fixed = [
            ObjectDesc {
                header: header(12, false),
                counters: &c,
                instances: InstancesDesc::Single(&[7, 8, 9]),
            },
            ObjectDesc {
                header: header(14, false),
                counters: &c,
                instances: InstancesDesc::Single(&[0, 0, 0]),
            },
            ObjectDesc {
                header: header(16, false),
                counters: &c,
                instances: InstancesDesc::Multi(&[]),
            },
        ];
        let fixed: [&dyn ObjectSource; 3] = [&fixed[0], &fixed[1], &fixed[2]];
        let mut expected = vec![0u8; needed];
        write_objects(&fixed, Mode::Data, &mut expected).unwrap();
        assert_eq!(buf, expected);
        // Over checked definitions too (the single and the absent set ready, the empty one
        // written from its zeros).
        let mut checked = CheckedCounters::new(&c[..]).unwrap();
        checked.render_definitions().unwrap();
        let objects = [
            SetObject::checked(
                header(12, false),
                &checked,
                InstanceKind::Single,
                snapshot.find_set(1),
            ),
            SetObject::checked(header(14, false), &checked, InstanceKind::Single, None),
            SetObject::checked(header(16, false), &checked, InstanceKind::Multi, None),
        ];
        assert!(objects[0].ready(sealed::Token).is_some());
        assert!(objects[1].ready(sealed::Token).is_none());
        assert!(objects[2].ready(sealed::Token).is_some());
        let objects: [&dyn ObjectSource; 3] = [&objects[0], &objects[1], &objects[2]];
        let mut again = vec![0u8; needed];
        assert_eq!(objects_len(&objects, Mode::Data), Ok(needed));
        write_objects(&objects, Mode::Data, &mut again).unwrap();
        assert_eq!(again, expected);
    }

    #[test]
    fn checked_counters_refuse_what_the_writer_refuses() {
        let mut c = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::BulkCount, 8, 0),
        ];
        assign_offsets(&mut c).unwrap();
        assert_eq!(CheckedCounters::new(&c[..]).map(|c| c.block_len()), Ok(16));
        let mut misaligned = c;
        misaligned[1].offset = 12;
        assert_eq!(
            CheckedCounters::new(&misaligned[..]),
            Err(WriteError::MisalignedCounter { counter: 1 })
        );
        let mut bad_size = c;
        bad_size[0].size = 8;
        assert_eq!(
            CheckedCounters::new(&bad_size[..]),
            Err(WriteError::BadCounterSize { counter: 0 })
        );
    }

    #[test]
    fn checked_objects_see_the_layout_new_sees() {
        // The set: sizes 4, 4, 8 (offsets 4, 8, 16).
        let names = [String::from("a")];
        let mut words = encode(&names, &[vec![1, 2, 3]], &sizes(3), None);
        let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
        let set = snapshot.find_set(0);
        let canonical = counters(3);
        // The same sizes elsewhere in the block (not as assign_offsets lays them out).
        let mut moved = canonical.clone();
        moved[0].offset = 12;
        moved[1].offset = 8;
        let mut other_sizes = counters(2);
        other_sizes.push(counter(CounterType::Rawcount, 4, 0));
        assign_offsets(&mut other_sizes).unwrap();
        for (c, same) in [
            (&canonical, true),
            (&moved, false),
            (&other_sizes, false),
            (&counters(2), false),
            (&counters(4), false),
        ] {
            let checked = CheckedCounters::new(&c[..]).unwrap();
            assert_eq!(checked.canonical(), *c != moved, "{c:?}");
            let fast = SetObject::checked(header(10, false), &checked, InstanceKind::Multi, set);
            let slow = SetObject::new(header(10, false), c, InstanceKind::Multi, set);
            assert_eq!(
                (fast.same_layout(), slow.same_layout()),
                (same, same),
                "{c:?}"
            );
        }
    }

    #[test]
    fn a_query_selects_a_set_object_by_its_header() {
        let c = counters(2);
        let checked = CheckedCounters::new(&c[..]).unwrap();
        for (index, costly) in [(10, false), (12, true)] {
            let new = SetObject::new(header(index, costly), &c, InstanceKind::Multi, None);
            let fast =
                SetObject::checked(header(index, costly), &checked, InstanceKind::Multi, None);
            for o in [&new as &dyn ObjectSource, &fast] {
                let h = o.header();
                assert_eq!(h.name_title_index, index);
                assert_eq!(
                    o.selection_key(sealed::Token),
                    (h.costly, h.name_title_index)
                );
            }
        }
    }

    #[test]
    fn unaligned_snapshots_write_as_aligned_ones() {
        // The records are copied as bytes: where the snapshot lies in memory does not matter.
        let names = [String::from("abc"), String::from("Queue 000001")];
        for n in [0, 2, 3] {
            let c = counters(n);
            let values: Vec<Vec<u64>> = (0..2u64)
                .map(|i| (0..n as u64).map(|k| i * 10 + k).collect())
                .collect();
            let words = encode(&names, &values, &sizes(n), None);
            let mut shifted = vec![0u8; words.len() * 8 + 1];
            for (i, w) in words.iter().enumerate() {
                shifted[1 + 8 * i..9 + 8 * i].copy_from_slice(&w.to_le_bytes());
            }
            let aligned: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let write = |bytes: &[u8]| {
                let snapshot = Snapshot::parse(bytes).unwrap();
                let o = SetObject::new(
                    header(10, false),
                    &c,
                    InstanceKind::Multi,
                    snapshot.find_set(0),
                );
                let mut buf = vec![0x11u8; 512];
                let len = write_objects(&[&o], Mode::Data, &mut buf).unwrap().bytes;
                buf.truncate(len);
                buf
            };
            let expected = write(&aligned);
            assert_eq!(crate::bytes::i32_at(&expected, 40), 2, "NumInstances");
            assert_eq!(write(&shifted[1..]), expected);
        }
    }

    #[test]
    fn padded_names_are_checked() {
        assert_eq!(
            PaddedName::new(b"a\0\0\0\0\0\0\0").map(|p| p.units()),
            Some(1)
        );
        assert_eq!(
            PaddedName::new(b"a\0b\0c\0\0\0").map(|p| p.units()),
            Some(3)
        );
        assert_eq!(
            PaddedName::new(b"\0\0\0\0\0\0\0\0").map(|p| p.units()),
            Some(0)
        );
        assert!(PaddedName::new(b"a\0b\0c\0d\0").is_none(), "no NUL");
        assert!(
            PaddedName::new(b"a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0").is_none(),
            "a word too many"
        );
        assert!(
            PaddedName::new(b"a\0\0\0x\0\0\0").is_none(),
            "bytes after the NUL"
        );
        assert!(PaddedName::new(b"a\0\0\0\0\0").is_none(), "not whole words");
        assert!(PaddedName::new(b"").is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn any_set_writes_what_the_same_description_writes(
            names in proptest::collection::vec("[a-zA-Zé✓😀 0-9]{0,40}", 0..12),
            n in 0usize..6,
            seed in any::<u64>(),
        ) {
            let values: Vec<Vec<u64>> = (0..names.len() as u64)
                .map(|i| (0..n as u64).map(|k| seed.rotate_left((i * 7 + k) as u32) ^ k).collect())
                .collect();
            let (ours, theirs) = both(&names, &values, &counters(n));
            prop_assert_eq!(ours, theirs);
        }
    }
}
