// SPDX-License-Identifier: MIT OR Apache-2.0
//! One counterset of a validated snapshot (`crate::snapshot`) as a V1 object: the
//! [`ObjectSource`] the perf DLL hands the writer, reading the snapshot in place.
//!
//! The snapshot's layout makes this cheap: a set knows the bytes its names take in a reply from
//! its length alone ([`SetView::name_areas_len`]), so the writer skips its sizing pass; names
//! are stored as V1 name areas and copied as words; values are lent as `u64`s where they lie.
//! Instances are walked record by record.
//!
//! Mapping: instances in snapshot order; `UniqueID = PERF_NO_UNIQUE_ID` (V1's name-identified
//! convention); `ParentObjectTitleIndex = 0` and `ParentObjectInstance = 0` (the parent object is
//! the manifest's, not the snapshot's, concern); values one per counter, 4-byte counters written
//! from the low half. A single-instance object takes the set's one instance, and reads zeros
//! while the set has none (or is absent); a multi-instance object whose set is absent has no
//! instances. A set whose counter count differs from the object's makes the writer refuse the
//! reply (`WriteError::ValueCount`), as values that cannot be lent do (an unaligned snapshot
//! or a big-endian host).

use crate::snapshot::field::instance as inf;
use crate::snapshot::{InstanceView, MAX_COUNTERS, SetView, name_area_len};
use crate::v1::wire::PERF_NO_UNIQUE_ID;
use crate::v1::writer::{
    self, CounterSpec, InstanceDesc, InstanceKind, InstanceName, InstanceSpec, ObjectHeader,
    ObjectSource, PaddedName, sealed,
};

/// One object over one snapshot set.
#[derive(Clone, Copy, Debug)]
pub struct SetObject<'a> {
    header: ObjectHeader,
    counters: &'a [CounterSpec],
    kind: InstanceKind,
    set: Option<SetView<'a>>,
}

impl<'a> SetObject<'a> {
    /// The object of `header` and `counters`, single- or multi-instance as `kind` says, over
    /// `set` (`None`: the snapshot has no set for it).
    pub const fn new(
        header: ObjectHeader,
        counters: &'a [CounterSpec],
        kind: InstanceKind,
        set: Option<SetView<'a>>,
    ) -> Self {
        Self {
            header,
            counters,
            kind,
            set,
        }
    }

    /// The set read, if any.
    pub const fn set(&self) -> Option<SetView<'a>> {
        self.set
    }

    /// Instance `view` as the writer takes it.
    #[inline]
    fn desc(view: &InstanceView<'a>) -> InstanceDesc<'a> {
        InstanceDesc {
            spec: InstanceSpec {
                name: InstanceName::Padded(view.padded_name()),
                parent_title_index: 0,
                parent_instance: 0,
                unique_id: PERF_NO_UNIQUE_ID,
            },
            values: lend(view.values_bytes()).unwrap_or_default(),
        }
    }
}

/// The values of a single-instance object without data yet (a set has at most
/// [`MAX_COUNTERS`] counters).
static ZEROS: [u64; MAX_COUNTERS as usize] = [0; MAX_COUNTERS as usize];

/// Little-endian `u64`s lent in place: `None` unless they are 8-aligned (the snapshot format
/// puts values at multiples of 8 from its start, so they are whenever the snapshot is) and the
/// host is little-endian.
#[inline]
#[allow(clippy::cast_ptr_alignment, reason = "the alignment is checked first")]
fn lend(bytes: &[u8]) -> Option<&[u64]> {
    if cfg!(target_endian = "big")
        || !bytes.as_ptr().addr().is_multiple_of(align_of::<u64>())
        || !bytes.len().is_multiple_of(8)
    {
        return None;
    }
    // SAFETY: the pointer is 8-aligned (checked) and valid for `bytes.len()` bytes, which are
    // `len / 8` whole, initialised `u64`s (any bit pattern is one; on a little-endian host they
    // read as the little-endian values); the shared borrow keeps them alive and unchanged.
    Some(unsafe { core::slice::from_raw_parts(bytes.as_ptr().cast::<u64>(), bytes.len() / 8) })
}

impl ObjectSource for SetObject<'_> {
    fn header(&self) -> ObjectHeader {
        self.header
    }

    fn counters(&self) -> &[CounterSpec] {
        self.counters
    }

    fn kind(&self) -> InstanceKind {
        self.kind
    }

    fn instance_count(&self) -> usize {
        self.set.map_or(0, |s| s.instance_count())
    }

    fn instance(&self, index: usize) -> InstanceDesc<'_> {
        if let Some(view) = self.set.and_then(|s| s.instance(index)) {
            return Self::desc(&view);
        }
        // A single-instance object without data yet reads zeros.
        let values = match self.kind {
            InstanceKind::Multi => &[][..],
            InstanceKind::Single => ZEROS.get(..self.counters.len()).unwrap_or_default(),
        };
        InstanceDesc {
            values,
            ..InstanceDesc::EMPTY
        }
    }

    fn name_areas_len(&self) -> Option<usize> {
        let Some(set) = self.set else {
            return Some(0);
        };
        // Vouched for only when every instance has one value per counter and they can be
        // lent (the first instance's are aligned if all are); otherwise the sizing pass finds
        // the instance at fault.
        let lendable = set
            .instance(0)
            .is_none_or(|i| lend(i.values_bytes()).is_some());
        (usize::from(set.counter_count()) == self.counters.len() && lendable)
            .then(|| set.name_areas_len())
    }

    fn write_instances(&self, plan: &sealed::Plan<'_>, out: &mut [u8], _: sealed::Token) -> usize {
        match self.set {
            // Records 8-aligned in memory: values lent in place, through the shaped loops.
            Some(set) => match Walk::lent(&set) {
                Some(walk) => writer::write_instances(walk, plan, out),
                // Values that cannot be lent are lent as none: the sizing pass has refused such
                // a set unless it has no counters or no instances, so this writes only
                // definitions and empty blocks.
                None => writer::write_instances_any(Walk::<false>::unlent(&set), plan, out),
            },
            None => 0,
        }
    }
}

/// The instances of a parsed set as the writer takes them, walked over the record bytes with
/// one length check per record (`Snapshot::parse` has checked everything else).
///
/// `LEND`: the values are lent in place, which [`Walk::lent`] allows when the records start
/// 8-aligned in memory (checked once per set): every record is `16 + 8 × counters + name area`
/// bytes, a multiple of 8, so every record's values are aligned too. Otherwise (or on a
/// big-endian host) they are lent as none, which the writer refuses before writing unless there
/// are no counters (`ObjectSource::name_areas_len` then vouches for nothing).
struct Walk<'a, const LEND: bool> {
    rest: &'a [u8],
    counters: u16,
}

impl<'a> Walk<'a, true> {
    /// The walk lending `set`'s values in place, if it can: a little-endian host and records
    /// that start 8-aligned in memory.
    fn lent(set: &SetView<'a>) -> Option<Self> {
        let rest = set.records();
        (cfg!(target_endian = "little") && rest.as_ptr().addr().is_multiple_of(align_of::<u64>()))
            .then(|| Self {
                rest,
                counters: set.counter_count(),
            })
    }
}

impl<'a> Walk<'a, false> {
    /// The walk lending no values.
    fn unlent(set: &SetView<'a>) -> Self {
        Self {
            rest: set.records(),
            counters: set.counter_count(),
        }
    }
}

impl<'a, const LEND: bool> Iterator for Walk<'a, LEND> {
    type Item = InstanceDesc<'a>;

    #[inline]
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "lent only when aligned: see the SAFETY note"
    )]
    fn next(&mut self) -> Option<InstanceDesc<'a>> {
        let [_, _, _, _, _, _, _, _, n0, n1, ..] = *self.rest.first_chunk::<{ inf::LEN }>()?;
        let units = usize::from(u16::from_le_bytes([n0, n1]));
        // At most 8 × 65 535 and 131 080 bytes: the sum cannot overflow, so the splits of
        // `record` below need no checks of their own.
        let values_len = 8 * usize::from(self.counters);
        let (record, rest) = self
            .rest
            .split_at_checked(inf::LEN + values_len + name_area_len(units))?;
        self.rest = rest;
        let (values, area) = record.get(inf::LEN..)?.split_at_checked(values_len)?;
        let values: &'a [u64] = if LEND {
            // SAFETY: `values` starts 8-aligned: `rest` did when the walk began (a `Walk<true>`
            // is made only by `Walk::lent`, which checks it), each record is a multiple of 8
            // bytes long (16, 8 per counter, and a name area rounded up to 8), and the values
            // start 16 bytes into their record. Its
            // `values_len` bytes are `counters` whole, initialised `u64`s (any bit pattern is
            // one; little-endian values on this little-endian host), borrowed for `'a`.
            unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u64>(), values_len / 8) }
        } else {
            &[]
        };
        Some(InstanceDesc {
            spec: InstanceSpec {
                name: InstanceName::Padded(PaddedName::from_checked(
                    area.as_chunks::<8>().0,
                    units,
                )),
                parent_title_index: 0,
                parent_instance: 0,
                unique_id: PERF_NO_UNIQUE_ID,
            },
            values,
        })
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

    /// `names` and their values (`counters` each) encoded as set 0 (multi-instance) and set 1
    /// (single, if `single` has values), into an 8-aligned buffer.
    fn encode(
        names: &[String],
        values: &[Vec<u64>],
        counters: usize,
        single: Option<&[u64]>,
    ) -> Vec<u64> {
        let counters = counters as u16;
        let write = |w: &mut SnapshotWriter<'_>| {
            w.begin_set(0, true, counters, names.len() as u32).unwrap();
            for (i, (name, v)) in names.iter().zip(values).enumerate() {
                let units: Vec<u16> = name.encode_utf16().collect();
                w.instance(i as u32, PARENT_NONE, &units, v).unwrap();
            }
            if let Some(s) = single {
                w.begin_set(1, false, s.len() as u16, 1).unwrap();
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
        let mut words = encode(names, values, announced, None);
        let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
        let ours = SetObject::new(
            header(10, false),
            counters,
            InstanceKind::Multi,
            snapshot.find_set(0),
        );
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
    fn single_instance_objects_and_absent_sets() {
        let c = counters(3);
        let mut words = encode(&[], &[], 0, Some(&[7, 8, 9]));
        let snapshot = Snapshot::parse(bytes_of(&mut words)).unwrap();
        let single = SetObject::new(
            header(12, false),
            &c,
            InstanceKind::Single,
            snapshot.find_set(1),
        );
        assert_eq!(single.instance(0).values, &[7, 8, 9]);
        let empty = SetObject::new(header(14, false), &c, InstanceKind::Single, None);
        assert_eq!(empty.instance(0).values, &[0, 0, 0]);
        let absent = SetObject::new(header(16, false), &c, InstanceKind::Multi, None);
        assert_eq!(absent.name_areas_len(), Some(0));
        let objects: [&dyn ObjectSource; 3] = [&single, &empty, &absent];
        let needed = objects_len(&objects, Mode::Data).unwrap();
        let mut buf = vec![0u8; needed];
        write_objects(&objects, Mode::Data, &mut buf).unwrap();
        validate::validate_objects(&buf, 3, Expect::Data).unwrap();
    }

    #[test]
    fn unaligned_snapshots_are_refused_not_misread() {
        let names = [String::from("abc")];
        let c = counters(2);
        let words = encode(&names, &[vec![1, 2]], 2, None);
        let mut shifted = vec![0u8; words.len() * 8 + 1];
        for (i, w) in words.iter().enumerate() {
            shifted[1 + 8 * i..9 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        let snapshot = Snapshot::parse(&shifted[1..]).unwrap();
        let o = SetObject::new(
            header(10, false),
            &c,
            InstanceKind::Multi,
            snapshot.find_set(0),
        );
        assert_eq!(o.name_areas_len(), None);
        let mut buf = [0x11u8; 512];
        assert_eq!(
            write_objects(&[&o], Mode::Data, &mut buf),
            Err(WriteError::ValueCount { instance: 0 })
        );
        assert!(buf.iter().all(|b| *b == 0x11));
    }

    #[test]
    fn unaligned_snapshots_without_counters_write_as_aligned_ones() {
        // No values to lend: the instances (names, empty blocks) are written all the same.
        let names = [String::from("abc"), String::from("Queue 000001")];
        let c = counters(0);
        let words = encode(&names, &[vec![], vec![]], 0, None);
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
        // Object 64 + per instance: definition 24 + name area (8, 32) + block 8.
        assert_eq!(expected.len(), 64 + (24 + 8 + 8) + (24 + 32 + 8));
        assert_eq!(write(&shifted[1..]), expected);
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
