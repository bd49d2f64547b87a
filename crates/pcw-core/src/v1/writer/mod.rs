// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 object writer: turns a description of performance objects into the `PERF_OBJECT_TYPE`
//! blocks `CollectPerformanceData` returns (object shapes in `docs/v1-format.md`; Microsoft: the
//! `PM_COLLECT_PROC` reference page).
//!
//! Contract:
//! * every object, instance definition and counter block starts and ends 8-byte aligned, so
//!   the total is a multiple of 8;
//! * every byte inside the reported length is written: padding after names and inside counter
//!   blocks is zeroed (padding reaches the consumer: a trust boundary, `docs/v1-format.md`);
//! * the size is measured first; if the buffer is too small nothing at all is written;
//! * nothing outside the given slice is touched, nothing allocates, nothing panics — a
//!   description that cannot be written correctly is refused with a [`WriteError`].
//!
//! One concept per file:
//! * `model` — what the writer is given: [`ObjectSource`] (and [`ObjectDesc`], fixed data),
//!   counter definitions, instance identities and names ([`CheckedName`] and [`PaddedName`] for
//!   names already known to be writable);
//! * `sizing` — the checks of a description and the reply's size, before anything is written
//!   ([`objects_len`], [`assign_offsets`]);
//! * `emission` — the all-or-nothing entry points ([`write_objects`]), the object and counter
//!   definitions, and the general per-instance loop with the name stores;
//! * `block` — the counter block of an object, planned once per object (which words hold which
//!   values, which must be zeroed) and written by the general loop;
//! * `shaped` — the fast path: the per-instance loop compiled for each usual block layout.

mod block;
mod emission;
mod model;
mod shaped;
mod sizing;

pub use emission::{write_object, write_objects};
pub(crate) use emission::{write_one, write_selected};
pub use model::{
    CheckedCounters, CheckedName, CounterSpec, InstanceDesc, InstanceKind, InstanceName,
    InstanceSpec, InstancesDesc, MAX_INSTANCE_NAME_UNITS, ObjectDesc, ObjectHeader, ObjectSource,
    PaddedName,
};
pub(crate) use sizing::place_counter;
pub use sizing::{assign_offsets, object_len, objects_len};

/// Keeps the per-instance loops of [`ObjectSource`] the writer's own: implementors outside this
/// crate cannot name [`sealed::Token`], so they cannot override the methods that take one
/// (the crate's own snapshot source does, to walk its records in order).
pub(crate) mod sealed {
    /// Passed by the writer to the sealed methods of `ObjectSource`.
    #[derive(Clone, Copy, Debug)]
    pub struct Token;

    pub(crate) use super::block::{Plan, TEMPLATE_WORDS, Template};

    /// Everything about an object whose reply a source holds ready (its counter definitions
    /// checked, its instances or counter block as the reply holds them), which the source keeps
    /// (worked out once, when it is made) and lends through one call of `ObjectSource::ready`:
    /// the writer sizes it from these lengths and writes it as its `PERF_OBJECT_TYPE`, one copy
    /// of its definitions (when the source has them rendered) and one copy of `body`.
    #[derive(Clone, Copy, Debug)]
    pub struct Ready<'a> {
        /// As `ObjectSource::header`.
        pub header: super::ObjectHeader,
        /// As `ObjectSource::counters`, checked.
        pub counters: &'a [super::CounterSpec],
        /// Their `PERF_COUNTER_DEFINITION`s as the reply holds them, when the source has them
        /// (empty otherwise: the writer builds them).
        pub definitions: &'a [[u8; crate::v1::wire::field::counter_definition::LEN]],
        /// Their counter block length.
        pub block_len: usize,
        /// As `ObjectSource::kind`.
        pub kind: super::InstanceKind,
        /// As `ObjectSource::instance_count` (0 for a single-instance object).
        pub instance_count: usize,
        /// The instance definitions and counter blocks (multi-instance), or the counter block
        /// (single-instance), as the reply holds them.
        pub body: &'a [u8],
    }
}

/// Why a description could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The buffer is too small; `needed` bytes would have been written.
    NoSpace {
        /// Bytes the whole reply needs.
        needed: usize,
    },
    /// A counter's offset lies inside the 4-byte `PERF_COUNTER_BLOCK` header.
    CounterOffsetInHeader {
        /// Index of the counter in its object.
        counter: usize,
    },
    /// A counter is not aligned to its size (8-byte values must sit at multiples of 8).
    MisalignedCounter {
        /// Index of the counter in its object.
        counter: usize,
    },
    /// `CounterSize` is not 0, 4 or 8, or disagrees with the counter type's size bits.
    BadCounterSize {
        /// Index of the counter in its object.
        counter: usize,
    },
    /// A fraction/average/multi counter is not directly followed by the base it needs, or a
    /// precision timer by its timestamp counter.
    BaseNotFollowing {
        /// Index of the counter whose base is missing.
        counter: usize,
    },
    /// An instance name is longer than [`MAX_INSTANCE_NAME_UNITS`] or contains a NUL.
    BadInstanceName {
        /// Index of the instance in its object.
        instance: usize,
    },
    /// An instance gave a number of values different from the number of counters.
    ValueCount {
        /// Index of the instance (0 for a single-instance object).
        instance: usize,
    },
    /// The reply would not fit the 32-bit lengths of the format.
    TooLarge,
    /// A query selected more objects than one reply may carry
    /// ([`crate::v1::collect::MAX_OBJECTS`]).
    TooManyObjects,
}

/// How objects are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Definitions, instances and values.
    Data,
    /// A metadata reply (`MetadataGlobal`/`MetadataCostly`): definitions only, `NumInstances`
    /// set to `PERF_METADATA_MULTIPLE_INSTANCES` or `PERF_METADATA_NO_INSTANCES`, and no
    /// instance definitions or counter blocks.
    Metadata,
}

/// What [`write_objects`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Bytes written (a multiple of 8): the value for `*lpcbTotalBytes`.
    pub bytes: usize,
    /// Objects written: the value for `*lpNumObjectTypes`.
    pub objects: usize,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bytes::{i32_at, u16_at, u32_at};
    use crate::counter_type::CounterType;
    use crate::v1::validate::{self, Expect};
    use crate::v1::wire;

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    pub(crate) use crate::testing::header;

    pub(crate) fn counter(counter_type: CounterType, size: u32, offset: u32) -> CounterSpec {
        crate::testing::titled_counter(1000 + offset, counter_type, size, offset)
    }

    /// Writes with two different poisons; both results must be identical, so every reported
    /// byte was written.
    pub(crate) fn write_both(objects: &[&dyn ObjectSource], mode: Mode) -> Vec<u8> {
        let needed = objects_len(objects, mode).unwrap();
        let mut a = vec![0xA5u8; needed + 16];
        let mut b = vec![0xCCu8; needed + 16];
        let wa = write_objects(objects, mode, &mut a).unwrap();
        let wb = write_objects(objects, mode, &mut b).unwrap();
        assert_eq!(wa, wb);
        assert_eq!(wa.bytes, needed);
        assert_eq!(
            &a[..needed],
            &b[..needed],
            "a byte inside the reply was left unwritten"
        );
        assert!(
            a[needed..].iter().all(|x| *x == 0xA5),
            "wrote past the reported length"
        );
        a.truncate(needed);
        a
    }

    #[test]
    fn single_instance_layout() {
        let counters = [
            counter(CounterType::Rawcount, 4, 4),
            counter(CounterType::LargeRawcount, 8, 8),
        ];
        let obj = ObjectDesc {
            header: header(1000, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[0x1_2345_6789, 0x1122_3344_5566_7788]),
        };
        let out = write_both(&[&obj], Mode::Data);
        // OBJ 64 + 2 CTR 80 = 144; block 4 + 4 + 8 = 16.
        assert_eq!(out.len(), 160);
        assert_eq!(u32_at(&out, 0), 160, "TotalByteLength");
        assert_eq!(u32_at(&out, 4), 144, "DefinitionLength");
        assert_eq!(u32_at(&out, 8), 64, "HeaderLength");
        assert_eq!(u32_at(&out, 12), 1000);
        assert_eq!(u32_at(&out, 32), 2, "NumCounters");
        assert_eq!(i32_at(&out, 40), -1, "NumInstances = PERF_NO_INSTANCES");
        assert_eq!(u32_at(&out, 64), 40, "first counter ByteLength");
        assert_eq!(u32_at(&out, 64 + 28), 0x0001_0000, "CounterType");
        assert_eq!(u32_at(&out, 104 + 36), 8, "second CounterOffset");
        assert_eq!(u32_at(&out, 144), 16, "counter block ByteLength");
        assert_eq!(
            u32_at(&out, 148),
            0x2345_6789,
            "4-byte value keeps the low 32 bits"
        );
        assert_eq!(&out[152..160], &0x1122_3344_5566_7788u64.to_le_bytes());
        let s = validate::validate_objects(&out, 1, Expect::Data).unwrap();
        assert_eq!(s.instances, 1);
    }

    #[test]
    fn multi_instance_names_are_utf16_nul_terminated_and_padded() {
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let utf16: Vec<u16> = "Größe ✓".encode_utf16().collect();
        let instances = [
            InstanceDesc {
                spec: InstanceSpec::named("Small Wave"),
                values: &[1],
            },
            InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::Utf16(&utf16),
                    unique_id: 7,
                    parent_title_index: 230,
                    parent_instance: 3,
                },
                values: &[2],
            },
            InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::None,
                    unique_id: 9,
                    parent_title_index: 0,
                    parent_instance: 0,
                },
                values: &[3],
            },
        ];
        let obj = ObjectDesc {
            header: header(2000, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let out = write_both(&[&obj], Mode::Data);
        assert_eq!(i32_at(&out, 40), 3, "NumInstances");
        let inst = 104;
        // "Small Wave": 10 units + NUL = 22 bytes; 24 + 22 = 46 -> 48.
        assert_eq!(u32_at(&out, inst), 48);
        assert_eq!(i32_at(&out, inst + 12), -1, "PERF_NO_UNIQUE_ID");
        assert_eq!(u32_at(&out, inst + 16), 24, "NameOffset");
        assert_eq!(
            u32_at(&out, inst + 20),
            22,
            "NameLength includes the NUL, not padding"
        );
        assert_eq!(u16_at(&out, inst + 24), u16::from(b'S'));
        assert_eq!(u16_at(&out, inst + 24 + 20), 0, "NUL");
        assert_eq!(&out[inst + 46..inst + 48], &[0, 0], "padding is zeroed");
        let block = inst + 48;
        assert_eq!(u32_at(&out, block), 8);
        assert_eq!(u32_at(&out, block + 4), 1);
        let second = block + 8;
        assert_eq!(i32_at(&out, second + 12), 7);
        assert_eq!(u32_at(&out, second + 4), 230);
        assert_eq!(u32_at(&out, second + 8), 3);
        assert_eq!(u32_at(&out, second + 20), 2 * (utf16.len() as u32 + 1));
        let objects: Vec<_> = validate::objects(&out, 0, Expect::Data).collect();
        let o = objects[0].unwrap();
        let names: Vec<Vec<u16>> = o.instances().map(|i| i.name_utf16().collect()).collect();
        assert_eq!(names[0], "Small Wave".encode_utf16().collect::<Vec<_>>());
        assert_eq!(names[1], utf16);
        assert!(names[2].is_empty());
        assert_eq!(
            o.instances()
                .nth(2)
                .unwrap()
                .definition()
                .unwrap()
                .name_length,
            0
        );
    }

    #[test]
    fn zero_instances_and_metadata() {
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let multi = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&[]),
        };
        let single = ObjectDesc {
            header: header(12, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[5]),
        };
        let out = write_both(&[&multi], Mode::Data);
        assert_eq!(out.len(), 104);
        assert_eq!(i32_at(&out, 40), 0);
        let out = write_both(&[&multi, &single], Mode::Metadata);
        assert_eq!(out.len(), 208, "definitions only");
        assert_eq!(i32_at(&out, 40), wire::PERF_METADATA_MULTIPLE_INSTANCES);
        assert_eq!(i32_at(&out, 104 + 40), wire::PERF_METADATA_NO_INSTANCES);
        validate::validate_objects(&out, 2, Expect::Metadata).unwrap();
        assert!(validate::validate_objects(&out, 2, Expect::Data).is_err());
    }

    #[test]
    fn too_small_buffers_are_left_untouched() {
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let instances = [InstanceDesc {
            spec: InstanceSpec::named("x"),
            values: &[1],
        }];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let needed = objects_len(&[&obj], Mode::Data).unwrap();
        for size in 0..needed {
            let mut buf = vec![0x5Au8; size];
            assert_eq!(
                write_objects(&[&obj], Mode::Data, &mut buf),
                Err(WriteError::NoSpace { needed })
            );
            assert!(buf.iter().all(|b| *b == 0x5A));
        }
    }
}
