// SPDX-License-Identifier: MIT OR Apache-2.0
//! The snapshot format's tests: round trips, every rule of the reader, the writer's limits.

use super::writer::put_name;
use super::*;
use alloc::vec;
use alloc::vec::Vec;
use proptest::prelude::*;

/// An owned snapshot, the model the tests encode and compare decodings against.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MSet {
    index: u16,
    multi: bool,
    sizes: Vec<u8>,
    instances: Vec<MInst>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct MInst {
    id: u32,
    parent: u32,
    name: Vec<u16>,
    values: Vec<u64>,
}

const HDR: SnapshotHeader = SnapshotHeader {
    perf_time: 0x0123_4567_89AB_CDEF,
    perf_freq: 10_000_000,
    system_time: -2,
};

fn w(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn inst(id: u32, parent: u32, name: &str, values: &[u64]) -> MInst {
    MInst {
        id,
        parent,
        name: w(name),
        values: values.to_vec(),
    }
}

fn feed(wr: &mut SnapshotWriter<'_>, sets: &[MSet]) -> Result<(), SnapshotError> {
    for s in sets {
        wr.begin_set(s.index, s.multi, &s.sizes, s.instances.len() as u32)?;
        for i in &s.instances {
            wr.instance(i.id, i.parent, &i.name, &i.values)?;
        }
    }
    Ok(())
}

fn measure(header: SnapshotHeader, sets: &[MSet]) -> usize {
    let mut wr = SnapshotWriter::measuring(header);
    feed(&mut wr, sets).unwrap();
    wr.finish().unwrap()
}

fn encode(header: SnapshotHeader, sets: &[MSet]) -> Vec<u8> {
    let mut buf = vec![0u8; measure(header, sets)];
    let mut wr = SnapshotWriter::new(&mut buf, header);
    feed(&mut wr, sets).unwrap();
    assert_eq!(wr.finish(), Ok(buf.len()));
    buf
}

fn decode(s: &Snapshot<'_>) -> (SnapshotHeader, Vec<MSet>) {
    let sets = s
        .sets()
        .map(|set| {
            let instances: Vec<MInst> = set
                .instances()
                .map(|i| {
                    let values: Vec<u64> = i.values().collect();
                    for (k, v) in values.iter().enumerate() {
                        assert_eq!(i.value(k), Some(*v));
                    }
                    assert_eq!(i.value(values.len()), None);
                    assert_eq!(i.name_len(), i.name_utf16().len());
                    MInst {
                        id: i.id(),
                        parent: i.parent(),
                        name: i.name_utf16().collect(),
                        values,
                    }
                })
                .collect();
            assert_eq!(set.instance(instances.len()), None);
            MSet {
                index: set.index(),
                multi: set.multi(),
                sizes: set.counter_sizes().to_vec(),
                instances,
            }
        })
        .collect();
    (s.header(), sets)
}

fn round_trip(sets: &[MSet]) -> Vec<u8> {
    let bytes = encode(HDR, sets);
    let snap = Snapshot::parse(&bytes).unwrap();
    assert_eq!(decode(&snap), (HDR, sets.to_vec()));
    assert_eq!(snap.set_count(), sets.len());
    assert_eq!(required_len(&bytes), Ok(bytes.len()));
    bytes
}

fn hand_cases() -> Vec<MSet> {
    let max_name: Vec<u16> = (0..MAX_NAME_UNITS).map(|i| 0x4E00 + i).collect();
    vec![
        MSet {
            index: 0,
            multi: false,
            sizes: vec![4, 8, 0],
            instances: vec![inst(0, PARENT_NONE, "", &[1, u64::MAX, 0])],
        },
        MSet {
            index: 1,
            multi: false,
            sizes: vec![8, 8],
            instances: vec![],
        },
        MSet {
            index: 2,
            multi: true,
            sizes: vec![4, 4],
            instances: vec![],
        },
        MSet {
            index: 3,
            multi: true,
            sizes: vec![4],
            instances: vec![inst(7, PARENT_NONE, "_Total", &[42])],
        },
        MSet {
            index: 9,
            multi: true,
            sizes: vec![8, 4],
            instances: vec![
                inst(1, PARENT_NONE, "a", &[1, 2]),
                inst(2, 0, "Ünïcødé 名前 😀", &[3, 4]),
                MInst {
                    id: u32::MAX,
                    parent: 1,
                    name: max_name,
                    values: vec![5, 6],
                },
                MInst {
                    id: 4,
                    parent: 2,
                    name: vec![0xD800, 0x6F, 0xDC00],
                    values: vec![7, 8],
                },
            ],
        },
        MSet {
            index: u16::MAX,
            multi: true,
            sizes: vec![],
            instances: vec![inst(5, PARENT_NONE, "no counters", &[])],
        },
    ]
}

#[test]
fn names_of_every_length_are_copied_whole_and_a_zero_unit_anywhere_is_found() {
    for n in 0..=40usize {
        let name: Vec<u16> = (0..n).map(|i| 0x4100 + i as u16 * 7 + 1).collect();
        let mut area = vec![[0xEEu8; 8]; n / 4 + 1];
        assert!(!put_name(&mut area, &name), "{n}");
        let mut expected: Vec<u8> = name.iter().flat_map(|u| u.to_le_bytes()).collect();
        expected.resize(8 * (n / 4 + 1), 0);
        assert_eq!(area.as_flattened(), &expected[..], "{n}: units, then zeros");
        for at in 0..n {
            let mut holed = name.clone();
            holed[at] = 0;
            let mut area = vec![[0u8; 8]; n / 4 + 1];
            assert!(put_name(&mut area, &holed), "{n}: a 0 unit at {at}");
        }
    }
}

#[test]
fn golden_layout_of_a_small_snapshot() {
    let sets = [MSet {
        index: 5,
        multi: true,
        sizes: vec![4, 8],
        instances: vec![inst(
            0x11,
            PARENT_NONE,
            "ab",
            &[0x0506_0708, 0x0102_0304_0506_0708],
        )],
    }];
    let bytes = round_trip(&sets);
    let mut expect = Vec::new();
    expect.extend_from_slice(b"PCWS");
    expect.extend_from_slice(&3u16.to_le_bytes());
    expect.extend_from_slice(&40u16.to_le_bytes());
    expect.extend_from_slice(&120u32.to_le_bytes()); // total
    expect.extend_from_slice(&1u32.to_le_bytes()); // sets
    expect.extend_from_slice(&HDR.perf_time.to_le_bytes());
    expect.extend_from_slice(&HDR.perf_freq.to_le_bytes());
    expect.extend_from_slice(&HDR.system_time.to_le_bytes());
    // set at 40: len 80, index 5, multi, 2 counters, counter block 16 bytes, 1 instance,
    // the sizes 4 and 8 and their padding, the identity (id, parent)
    expect.extend_from_slice(&80u32.to_le_bytes());
    expect.extend_from_slice(&5u16.to_le_bytes());
    expect.extend_from_slice(&1u16.to_le_bytes());
    expect.extend_from_slice(&2u16.to_le_bytes());
    expect.extend_from_slice(&16u16.to_le_bytes());
    expect.extend_from_slice(&1u32.to_le_bytes());
    expect.extend_from_slice(&[4, 8, 0, 0, 0, 0, 0, 0]);
    expect.extend_from_slice(&0x11u32.to_le_bytes());
    expect.extend_from_slice(&u32::MAX.to_le_bytes());
    // instance at 72, a V1 instance: ByteLength 32, ParentObjectTitleIndex 0,
    // ParentObjectInstance 0, UniqueID -1, NameOffset 24, NameLength 6; "ab", the NUL and
    // padding to 8 bytes; the counter block: ByteLength 16, the 4-byte value at 4, the
    // 8-byte value at 8
    expect.extend_from_slice(&32u32.to_le_bytes());
    expect.extend_from_slice(&0u32.to_le_bytes());
    expect.extend_from_slice(&0u32.to_le_bytes());
    expect.extend_from_slice(&(-1i32).to_le_bytes());
    expect.extend_from_slice(&24u32.to_le_bytes());
    expect.extend_from_slice(&6u32.to_le_bytes());
    expect.extend_from_slice(b"a\0b\0\0\0\0\0");
    expect.extend_from_slice(&16u32.to_le_bytes());
    expect.extend_from_slice(&0x0506_0708u32.to_le_bytes());
    expect.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
    let snap = Snapshot::parse(&bytes).unwrap();
    let set = snap.sets().next().unwrap();
    assert_eq!(set.name_areas_len(), 8);
    assert_eq!(set.block_len(), 16);
    assert_eq!(set.counter_layout().collect::<Vec<_>>(), [(4, 4), (8, 8)]);
    assert_eq!(set.records(), &expect[72..]);
    let instance = set.instance(0).unwrap();
    assert_eq!(instance.name_area(), b"a\0b\0\0\0\0\0");
    assert_eq!(instance.block(), &expect[104..]);
    assert_eq!(instance.record(), &expect[72..]);
    assert_eq!(bytes, expect);
}

#[test]
fn hand_cases_round_trip() {
    let sets = hand_cases();
    let bytes = round_trip(&sets);
    let snap = Snapshot::parse(&bytes).unwrap();
    assert_eq!(snap.as_bytes(), &bytes[..]);
    // Random access agrees with iteration, and every record is 8-aligned.
    for set in snap.sets() {
        assert_eq!(set.offset() % 8, 0);
        assert_eq!(set.byte_len() % 8, 0);
        for (i, instance) in set.instances().enumerate() {
            assert_eq!(set.instance(i), Some(instance));
            assert_eq!(instance.offset() % 8, 0);
        }
    }
    let big = snap.find_set(9).unwrap();
    assert_eq!(
        big.instance(2).unwrap().name_len(),
        usize::from(MAX_NAME_UNITS)
    );
    assert_eq!(big.instance(1).unwrap().parent_position(), Some(0));
    assert_eq!(big.instance(0).unwrap().parent_position(), None);
    assert_eq!(
        big.instance(1).unwrap().name_bytes().len(),
        2 * w("Ünïcødé 名前 😀").len()
    );
    assert!(snap.find_set(4).is_none());
    // An empty snapshot is just the header.
    assert_eq!(round_trip(&[]).len(), HEADER_LEN);
}

/// Every buffer size: `NoSpace` with the exact size until it fits, never a write past the
/// slice, and once it fits every byte up to the length is written.
#[test]
fn every_buffer_size() {
    let sets = hand_cases();
    let reference = encode(HDR, &sets);
    let needed = reference.len();
    const GUARD: usize = 64;
    for size in 0..=needed + 8 {
        for poison in [0xA5u8, 0x00, 0xFF] {
            let mut backing = vec![poison; size + GUARD];
            let mut wr = SnapshotWriter::new(&mut backing[..size], HDR);
            feed(&mut wr, &sets).unwrap();
            let result = wr.finish();
            assert!(
                backing[size..].iter().all(|b| *b == poison),
                "write past the slice at size {size}"
            );
            if size < needed {
                assert_eq!(
                    result,
                    Err(SnapshotError::NoSpace { needed }),
                    "size {size}"
                );
                if size >= HEADER_LEN {
                    assert_eq!(required_len(&backing[..size]), Ok(needed));
                }
            } else {
                assert_eq!(result, Ok(needed));
                assert_eq!(
                    backing[..needed],
                    reference[..],
                    "unwritten byte, size {size}"
                );
                assert!(backing[needed..].iter().all(|b| *b == poison));
            }
        }
    }
}

#[test]
fn writer_rejects_misuse() {
    use SnapshotError as E;
    let run = |f: &dyn Fn(&mut SnapshotWriter<'_>) -> Result<(), E>| {
        let mut buf = [0u8; 4096];
        let mut wr = SnapshotWriter::new(&mut buf, HDR);
        let first = f(&mut wr);
        (first, wr.finish())
    };
    // Too few instances, then another set.
    let (r, fin) = run(&|wr| {
        wr.begin_set(0, true, &[8], 2)?;
        wr.instance(0, PARENT_NONE, &[], &[1])?;
        wr.begin_set(1, true, &[8], 0)
    });
    let mismatch = E::CountMismatch {
        expected: 2,
        found: 1,
    };
    assert_eq!(
        (r, fin),
        (Err(mismatch), Err(mismatch)),
        "errors are sticky"
    );
    // Too few instances at finish.
    let (r, fin) = run(&|wr| wr.begin_set(0, true, &[8], 1));
    assert_eq!(r, Ok(()));
    assert_eq!(fin, Err(mismatch_of(1, 0)));
    // Too many instances, and an instance without a set.
    let (r, _) = run(&|wr| {
        wr.begin_set(0, true, &[8], 1)?;
        wr.instance(0, PARENT_NONE, &[], &[1])?;
        wr.instance(1, PARENT_NONE, &[], &[1])
    });
    assert_eq!(r, Err(mismatch_of(0, 1)));
    let (r, _) = run(&|wr| wr.instance(1, PARENT_NONE, &[], &[]));
    assert_eq!(r, Err(mismatch_of(0, 1)));
    // Wrong number of values.
    let (r, _) = run(&|wr| {
        wr.begin_set(0, true, &[8, 4], 1)?;
        wr.instance(0, PARENT_NONE, &[], &[1])
    });
    assert_eq!(r, Err(mismatch_of(2, 1)));
    // Index order.
    let (r, _) = run(&|wr| {
        wr.begin_set(3, true, &[], 0)?;
        wr.begin_set(3, true, &[], 0)
    });
    assert_eq!(r, Err(E::BadIndex { offset: 56 + 4 }));
    // Limits.
    let (r, _) = run(&|wr| wr.begin_set(0, false, &[8], 2));
    assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 12 }));
    let (r, _) = run(&|wr| wr.begin_set(0, true, &[8], MAX_INSTANCES + 1));
    assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 12 }));
    let too_many = vec![4u8; usize::from(MAX_COUNTERS) + 1];
    let (r, _) = run(&|wr| wr.begin_set(0, true, &too_many, 0));
    assert_eq!(r, Err(E::LimitExceeded { offset: 40 + 8 }));
    // Counter sizes: only 0, 4 and 8.
    for size in [1u8, 2, 3, 5, 16, 255] {
        let (r, _) = run(&|wr| wr.begin_set(0, true, &[8, size], 0));
        assert_eq!(
            r,
            Err(E::BadCounterSize {
                offset: 40 + 16 + 1
            })
        );
    }
    let (r, _) = run(&|wr| {
        for i in 0..=MAX_SETS {
            wr.begin_set(i as u16, false, &[], 0)?;
        }
        Ok(())
    });
    assert_eq!(r, Err(E::LimitExceeded { offset: 12 }));
    // Names.
    let long = vec![0x41u16; usize::from(MAX_NAME_UNITS) + 1];
    let (r, _) = run(&|wr| {
        wr.begin_set(0, true, &[], 1)?;
        wr.instance(0, PARENT_NONE, &long, &[])
    });
    // The set at 40 takes 16 bytes and one identity: the record starts at 64.
    assert_eq!(r, Err(E::BadName { offset: 64 + 20 }));
    let (r, _) = run(&|wr| {
        wr.begin_set(0, true, &[], 1)?;
        wr.instance(0, PARENT_NONE, &[0x41, 0, 0x42], &[])
    });
    assert_eq!(
        r,
        Err(E::BadName {
            offset: 64 + 24 + 2
        })
    );
    // The total length is bounded without ever allocating it: MAX_SETS sets of
    // MAX_INSTANCES instances of MAX_COUNTERS counters exceed u32.
    let mut wr = SnapshotWriter::measuring(HDR);
    let values = vec![0u64; usize::from(MAX_COUNTERS)];
    let sizes = vec![8u8; usize::from(MAX_COUNTERS)];
    let mut result = Ok(());
    'outer: for s in 0..MAX_SETS {
        if let Err(e) = wr.begin_set(s as u16, true, &sizes, MAX_INSTANCES) {
            result = Err(e);
            break;
        }
        for i in 0..MAX_INSTANCES {
            if let Err(e) = wr.instance(i, PARENT_NONE, &[], &values) {
                result = Err(e);
                break 'outer;
            }
        }
    }
    assert_eq!(result, Err(E::LimitExceeded { offset: 8 }));
    assert!(wr.len() <= MAX_TOTAL_LEN);
    assert_eq!(wr.finish(), Err(E::LimitExceeded { offset: 8 }));
}

fn mismatch_of(expected: u32, found: u32) -> SnapshotError {
    SnapshotError::CountMismatch { expected, found }
}

/// `good` with `patch` written at `off`, parsed.
fn parse_patched(good: &[u8], off: usize, patch: &[u8]) -> Result<(), SnapshotError> {
    let mut b = good.to_vec();
    b[off..off + patch.len()].copy_from_slice(patch);
    Snapshot::parse(&b).map(|_| ())
}

#[test]
fn parse_rejects_hand_corruptions() {
    use SnapshotError as E;
    let sets = hand_cases();
    let good = encode(HDR, &sets);
    let with = |off: usize, patch: &[u8]| parse_patched(&good, off, patch);
    assert_eq!(with(0, b"PCWX"), Err(E::BadMagic));
    assert_eq!(
        with(4, &1u16.to_le_bytes()),
        Err(E::UnsupportedVersion {
            found: 1,
            supported: 3
        }),
        "version 1 put names before values, padded differently"
    );
    assert_eq!(
        with(4, &2u16.to_le_bytes()),
        Err(E::UnsupportedVersion {
            found: 2,
            supported: 3
        }),
        "version 2 kept u64 values and an offset table"
    );
    assert_eq!(
        with(6, &48u16.to_le_bytes()),
        Err(E::BadLength { offset: 6 })
    );
    assert_eq!(
        with(12, &(MAX_SETS + 1).to_le_bytes()),
        Err(E::LimitExceeded { offset: 12 })
    );
    // Trailing bytes are not a snapshot.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 8]);
    assert_eq!(Snapshot::parse(&longer), Err(E::BadLength { offset: 8 }));
    // A version-4 header is reported as such even when it is shorter than ours.
    assert_eq!(
        Snapshot::parse(b"PCWS\x04\x00"),
        Err(E::UnsupportedVersion {
            found: 4,
            supported: 3
        })
    );
    assert_eq!(Snapshot::parse(b"PCW"), Err(E::Truncated { offset: 3 }));
    assert_eq!(Snapshot::parse(b"XXXXXXXX"), Err(E::BadMagic));
    // Reserved fields, flag bits and padding.
    let snap = Snapshot::parse(&good).unwrap();
    let first = snap.sets().next().unwrap().offset();
    assert_eq!(
        with(first + 6, &3u16.to_le_bytes()),
        Err(E::Reserved { offset: first + 6 })
    );
    assert_eq!(
        with(first + 10, &8u16.to_le_bytes()),
        Err(E::BadLength { offset: first + 10 }),
        "a counter block length other than the sizes give"
    );
    assert_eq!(
        with(first + 17, &[3]),
        Err(E::BadCounterSize { offset: first + 17 })
    );
    let set = snap.find_set(3).unwrap();
    assert_eq!(
        with(set.offset() + 17, &[1]),
        Err(E::Reserved {
            offset: set.offset() + 17
        }),
        "counter-size padding"
    );
    // Index order.
    let second = snap.sets().nth(1).unwrap().offset();
    assert_eq!(
        with(second + 4, &0u16.to_le_bytes()),
        Err(E::BadIndex { offset: second + 4 })
    );
    // Single-instance set with 2 instances.
    assert_eq!(
        with(first + 12, &2u32.to_le_bytes()),
        Err(E::LimitExceeded { offset: first + 12 })
    );
}

#[test]
fn record_fields_are_checked() {
    use SnapshotError as E;
    let good = encode(HDR, &hand_cases());
    let with = |off: usize, patch: &[u8]| parse_patched(&good, off, patch);
    let snap = Snapshot::parse(&good).unwrap();
    let set = snap.find_set(3).unwrap();
    // The instance definition's fixed fields, and the counter block's.
    let i = set.instance(0).unwrap();
    for fixed in 4..12 {
        assert_eq!(
            with(i.offset() + fixed, &[1]),
            Err(E::Reserved {
                offset: i.offset() + fixed
            }),
            "ParentObjectTitleIndex and ParentObjectInstance are zero"
        );
    }
    assert_eq!(
        with(i.offset() + 12, &[0, 0, 0, 0]),
        Err(E::Reserved {
            offset: i.offset() + 12
        }),
        "UniqueID is PERF_NO_UNIQUE_ID"
    );
    assert_eq!(
        with(i.offset() + 16, &32u32.to_le_bytes()),
        Err(E::BadLength {
            offset: i.offset() + 16
        }),
        "NameOffset is 24"
    );
    assert_eq!(
        with(i.offset(), &48u32.to_le_bytes()),
        Err(E::BadLength { offset: i.offset() }),
        "ByteLength covers the definition and the name area"
    );
    let block = i.offset() + i.byte_len() - i.block().len();
    assert_eq!(
        with(block, &16u32.to_le_bytes()),
        Err(E::BadLength { offset: block }),
        "the counter block's ByteLength"
    );
    // Set 3 has one 4-byte counter: its block is 8 bytes, the value in the second half.
    assert_eq!(i.block(), [8, 0, 0, 0, 42, 0, 0, 0]);
    let set0 = snap.find_set(0).unwrap().instance(0).unwrap();
    // Set 0's counters: 4 bytes at 4, 8 bytes at 8, none at 16; the block is 16 bytes.
    assert_eq!(set0.block().len(), 16);
    let block0 = set0.offset() + set0.byte_len() - 16;
    assert_eq!(
        with(block0 + 4, &[9]),
        Ok(()),
        "a value byte takes any value"
    );
    let big = snap.find_set(9).unwrap().instance(0).unwrap();
    // Set 9's counters: 8 bytes at 8, 4 bytes at 16; bytes 4..8 and 20..24 are padding.
    let block9 = big.offset() + big.byte_len() - 24;
    for pad in [4, 7, 20, 23] {
        assert_eq!(
            with(block9 + pad, &[1]),
            Err(E::Reserved {
                offset: block9 + pad
            }),
            "counter-block padding at {pad}"
        );
    }
}

/// Every byte of a counter block that no counter covers must be zero, and every byte a
/// counter covers may hold anything: for a block checked through its gap halves (at most
/// 64 words, size-0 counters between the others) and one checked counter by counter (more
/// than 64 words).
#[test]
fn counter_block_gaps_are_checked_byte_by_byte() {
    use SnapshotError as E;
    let mixed = vec![0u8, 4, 0, 0, 8, 0, 4, 8, 8, 0, 4, 0];
    let long = vec![4u8; 130];
    for sizes in [mixed, long] {
        let values: Vec<u64> = sizes.iter().map(|s| if *s == 0 { 0 } else { 7 }).collect();
        let sets = [MSet {
            index: 1,
            multi: true,
            sizes: sizes.clone(),
            instances: vec![inst(3, PARENT_NONE, "abc", &values)],
        }];
        let good = round_trip(&sets);
        let snap = Snapshot::parse(&good).unwrap();
        let set = snap.sets().next().unwrap();
        let i = set.instance(0).unwrap();
        let block_at = i.offset() + i.byte_len() - set.block_len();
        let mut covered = vec![false; set.block_len()];
        covered[..4].fill(true);
        for (offset, size) in set.counter_layout() {
            covered[offset..offset + size].fill(true);
        }
        assert!(covered.iter().any(|c| !c), "the layout has gaps");
        for (k, is_value) in covered.iter().enumerate().skip(4) {
            let mut b = good.clone();
            b[block_at + k] ^= 0x5A;
            let result = Snapshot::parse(&b).map(|_| ());
            if *is_value {
                assert_eq!(result, Ok(()), "value byte {k} of {sizes:?}");
            } else {
                assert_eq!(
                    result,
                    Err(E::Reserved {
                        offset: block_at + k
                    }),
                    "gap byte {k} of {sizes:?}"
                );
            }
        }
    }
}

/// The verdict on `bytes`, a valid snapshot but for the records of `set`, had those records
/// been checked by `check_record` alone (the other sets pass, and none after a refused set is
/// read).
fn verdict_by_fields(bytes: &[u8], set: &SetView<'_>) -> Result<(), SnapshotError> {
    let end = set.offset() + set.byte_len();
    let start = end - set.records().len();
    let records = (start, end, set.instance_count());
    match check::walk_by_fields(bytes, records, set.counter_sizes()) {
        Err(e) => Err(e),
        Ok(at) if at != end => Err(SnapshotError::BadLength {
            offset: set.offset(),
        }),
        Ok(_) => Ok(()),
    }
}

/// The records of a set of each counter-block length the parse loop has masks for (1 to 4
/// words) and of one it has none for, with names short and long (so some records are read
/// through a window of the longest short record, some through the exact record, the last of
/// a set with the room it leaves): any change to a byte of them, or to the name's and the
/// definition's lengths together, gets the verdict and the offset `check_record` alone gives.
#[test]
fn the_record_tests_of_the_parse_loop_agree_with_the_field_by_field_check() {
    let layouts: [&[u8]; 8] = [
        &[],
        &[4],
        &[8],
        &[4, 4, 8],
        &[0, 8, 4, 0, 4],
        &[4, 4, 8, 8],
        &[4, 0, 0, 0, 4, 8, 4],
        &[8, 8, 8, 8],
    ];
    let lengths = (0..=17u16).chain([30, 31, 43, 64, 1]);
    for sizes in layouts {
        let values: Vec<u64> = sizes
            .iter()
            .map(|s| {
                0x0102_0304_0506_0708u64
                    .checked_shr(64 - 8 * u32::from(*s))
                    .unwrap_or(0)
            })
            .collect();
        let instances: Vec<MInst> = lengths
            .clone()
            .enumerate()
            .map(|(k, n)| MInst {
                id: k as u32,
                parent: PARENT_NONE,
                // Every other name ASCII (the 43-unit one among them), so that a changed byte
                // can make a unit 0.
                name: (0..n)
                    .map(|i| {
                        if k % 2 == 1 {
                            0x0141 + i
                        } else {
                            0x41 + i % 26
                        }
                    })
                    .collect(),
                values: values.clone(),
            })
            .collect();
        let sets = [MSet {
            index: 1,
            multi: true,
            sizes: sizes.to_vec(),
            instances,
        }];
        let good = round_trip(&sets);
        let snap = Snapshot::parse(&good).unwrap();
        let set = snap.sets().next().unwrap();
        let start = set.offset() + set.byte_len() - set.records().len();
        let mut checked = 0;
        let mut refused = 0;
        let mut agree = |b: &[u8], what: &dyn Fn() -> alloc::string::String| {
            let expected = verdict_by_fields(b, &set);
            assert_eq!(
                Snapshot::parse(b).map(|_| ()),
                expected,
                "{sizes:?}: {}",
                what()
            );
            checked += 1;
            refused += usize::from(expected.is_err());
        };
        for at in start..good.len() {
            for x in [0x01, 0x02, 0x04, 0x10, 0x80, 0xFF, good[at]] {
                let mut b = good.clone();
                b[at] ^= x;
                agree(&b, &|| alloc::format!("byte {at} ^ {x:#04x}"));
            }
        }
        // A name length other than the record's, its `ByteLength` following it or not.
        for i in set.instances() {
            for name_length in 0..=40u32 {
                for area in 0..=6u32 {
                    let mut b = good.clone();
                    b[i.offset()..i.offset() + 4].copy_from_slice(&(24 + 8 * area).to_le_bytes());
                    b[i.offset() + 20..i.offset() + 24].copy_from_slice(&name_length.to_le_bytes());
                    agree(&b, &|| {
                        alloc::format!(
                            "record at {}: NameLength {name_length}, area {area}",
                            i.offset()
                        )
                    });
                }
            }
        }
        assert!(
            refused > 0 && refused < checked,
            "{sizes:?}: both verdicts occur"
        );
    }
}

/// The parse loop's 16-byte name tests give the word-by-word test's verdict on the name area of
/// every length they can be handed (up to 80 units, and the longest ones): a good area (which
/// they must accept, so that the fast path takes it), each unit of the name made 0, and each
/// unit after it (the NUL and the padding) made non-zero in either byte. A refusal the
/// word-by-word test would not make sends a good record to the slow exact check, which no
/// verdict shows; this test does.
#[test]
fn the_wide_name_tests_agree_with_the_word_by_word_one() {
    let longest = usize::from(MAX_NAME_UNITS);
    for units in (0..=80).chain([511, longest - 1, longest]) {
        let area = (2 * units + 2).div_ceil(8);
        let unit_at = |words: &mut [[u8; 8]], at: usize, unit: u16| {
            words[at / 4][2 * (at % 4)..2 * (at % 4) + 2].copy_from_slice(&unit.to_le_bytes());
        };
        let mut good = vec![[0u8; 8]; area];
        for at in 0..units {
            unit_at(&mut good, at, 0x0141 + (at % 64) as u16);
        }
        let mut cases = vec![(good.clone(), alloc::string::String::from("good"))];
        for at in 0..4 * area {
            for unit in if at < units {
                &[0u16][..]
            } else {
                &[1, 0x0100][..]
            } {
                let mut c = good.clone();
                unit_at(&mut c, at, *unit);
                cases.push((c, alloc::format!("unit {at} = {unit:#06x}")));
            }
        }
        for (words, what) in &cases {
            let expected = check::name_stray(words, units) != 0;
            assert_eq!(expected, what != "good", "{units} units, {what}");
            assert_eq!(
                check::long_name_stray(words, units) != 0,
                expected,
                "long: {units} units, {what}"
            );
            if area <= 4 {
                // What follows the area in the 4 words it reads is anything.
                let mut four = [[0xA5u8; 8]; 4];
                four[..area].copy_from_slice(words);
                assert_eq!(
                    check::short_name_stray(&four, area, units) != 0,
                    expected,
                    "short: {units} units, {what}"
                );
            }
        }
    }
}

/// The halves `covered_halves` marks are those of `ByteLength` and of the counters where
/// `slots` (the V1 layout) puts them.
#[test]
fn covered_halves_are_the_layouts() {
    let mut sizes = Vec::new();
    for pattern in 0..3u32.pow(9) {
        sizes.clear();
        let mut p = pattern;
        for _ in 0..9 {
            sizes.push([0, 4, 8][(p % 3) as usize]);
            p /= 3;
        }
        for n in 0..=sizes.len() {
            let mut expected = 1u64;
            for (offset, size) in layout::slots(&sizes[..n]) {
                for half in offset / 4..(offset + size) / 4 {
                    expected |= 1u64.checked_shl(half as u32).unwrap_or(0);
                }
            }
            assert_eq!(
                check::covered_halves(&sizes[..n]),
                expected,
                "{:?}",
                &sizes[..n]
            );
        }
    }
}

/// The masks of a block the parse loop tests whole are exactly its layout's: every half
/// `gap_halves` names and `ByteLength`'s are masked, no half a counter covers is, and the
/// first word is compared with the block length (counters of every size pattern up to 8,
/// blocks of 1 to 4 words).
#[test]
fn block_masks_are_the_layouts_gaps() {
    fn check<const W: usize>(sizes: &[u8]) {
        let block_len = layout::block_len_of(sizes).unwrap();
        let masks = check::BlockMasks::<W>::new(block_len, check::covered_halves(sizes));
        let [gaps, _] = check::gap_halves(sizes, W);
        for k in 0..W {
            let half = |h: usize| {
                if gaps >> (2 * k + h) & 1 == 1 || (k == 0 && h == 0) {
                    0xFFFF_FFFFu64 << (32 * h)
                } else {
                    0
                }
            };
            assert_eq!(masks.mask[k], half(0) | half(1), "{sizes:?} word {k}");
            assert_eq!(masks.xor[k], if k == 0 { block_len as u64 } else { 0 });
        }
    }
    each_masked_block(|sizes, words| match words {
        1 => check::<1>(sizes),
        2 => check::<2>(sizes),
        3 => check::<3>(sizes),
        _ => check::<4>(sizes),
    });
}

/// Calls `f` with every size pattern of up to 8 counters (each 0, 4 or 8) whose counter block
/// has 1 to `MASKED_WORDS` words, and the block's words.
fn each_masked_block(mut f: impl FnMut(&[u8], usize)) {
    let mut sizes = Vec::new();
    for pattern in 0..3u32.pow(8) {
        sizes.clear();
        let mut p = pattern;
        for _ in 0..8 {
            sizes.push([0, 4, 8][(p % 3) as usize]);
            p /= 3;
        }
        for n in 0..=sizes.len() {
            let words = layout::block_len_of(&sizes[..n]).unwrap() / 8;
            if (1..=check::MASKED_WORDS).contains(&words) {
                f(&sizes[..n], words);
            }
        }
    }
}

/// The counter block's test two words at a time (`BlockMasks::stray`) against the word-by-word
/// one, for blocks of every size pattern up to 8 counters: the block as a valid record holds
/// it (its `ByteLength`, values of all ones), then each of its bytes changed to 0, 1 and 0x80
/// in turn — a verdict of each test for each, and they agree (a too strict or too lax mask in
/// either half of a pair fails).
#[test]
fn the_block_test_by_pairs_agrees_with_the_word_by_word_one() {
    fn check<const W: usize>(sizes: &[u8], verdicts: &mut [usize; 2]) {
        let block_len = layout::block_len_of(sizes).unwrap();
        let masks = check::BlockMasks::<W>::new(block_len, check::covered_halves(sizes));
        let mut good = [[0u8; 8]; W];
        let flat = good.as_flattened_mut();
        flat[..4].copy_from_slice(&(block_len as u32).to_le_bytes());
        for (offset, size) in layout::slots(sizes) {
            flat[offset..offset + size].fill(0xFF);
        }
        assert_eq!(masks.stray(&good), 0, "{sizes:?}: the valid block");
        assert_eq!(masks.stray_by_word(&good), 0, "{sizes:?}: the valid block");
        for at in 0..8 * W {
            for byte in [0u8, 1, 0x80] {
                let mut block = good;
                block.as_flattened_mut()[at] = byte;
                let expected = masks.stray_by_word(&block) != 0;
                assert_eq!(
                    masks.stray(&block) != 0,
                    expected,
                    "{sizes:?}: byte {at} = {byte:#04x}"
                );
                verdicts[usize::from(expected)] += 1;
            }
        }
    }
    let mut verdicts = [0; 2];
    each_masked_block(|sizes, words| match words {
        1 => check::<1>(sizes, &mut verdicts),
        2 => check::<2>(sizes, &mut verdicts),
        3 => check::<3>(sizes, &mut verdicts),
        _ => check::<4>(sizes, &mut verdicts),
    });
    // Both verdicts were reached, many times.
    assert!(verdicts.iter().all(|v| *v > 10_000), "{verdicts:?}");
}

/// The sizes of a set read a word at a time (`sizes_layout`, its one-word case and its
/// general one) against the field-by-field check: for counters of every valid size pattern
/// up to 8 counters (and some of 9 to 24), then each size or padding byte made a value other
/// than 0, 4 or 8 (or, for padding, 4 or 8), the same block length and halves when it
/// accepts, and a refusal from the field-by-field check when it does not.
#[test]
fn the_sizes_read_by_words_agree_with_the_field_by_field_check() {
    use check::{sizes_by_field, sizes_layout, sizes_layout_words};
    // A set's fixed part (`BLOCK_LEN` the valid sizes' length), then the sizes and padding.
    let set_of = |sizes: &[u8], block_len: usize| {
        let mut b = vec![0u8; field::set::LEN];
        b[field::set::BLOCK_LEN..][..2].copy_from_slice(&(block_len as u16).to_le_bytes());
        b.extend_from_slice(sizes);
        b.resize(field::set::LEN + sizes.len().div_ceil(8) * 8, 0);
        b
    };
    let mut accepted = 0;
    let mut refused = 0;
    let mut agree = |b: &[u8], counters: usize, what: &dyn Fn() -> alloc::string::String| {
        let area = &b[field::set::LEN..];
        let words = area.as_chunks::<8>().0;
        let exact = sizes_by_field(b, 0, &area[..counters]);
        let fast = sizes_layout(words, counters);
        assert_eq!(fast, sizes_layout_words(words, counters), "{}", what());
        if let Some(layout) = fast {
            assert_eq!(exact, Ok(layout), "{}", what());
            accepted += 1;
        } else {
            assert!(
                matches!(
                    exact,
                    Err(SnapshotError::BadCounterSize { .. } | SnapshotError::Reserved { .. })
                ),
                "{}: {exact:?}",
                what()
            );
            refused += 1;
        }
    };
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut patterns: Vec<Vec<u8>> = Vec::new();
    for n in 0..=8u32 {
        for pattern in 0..3u32.pow(n) {
            let mut p = pattern;
            patterns.push(
                (0..n)
                    .map(|_| {
                        let s = [0, 4, 8][(p % 3) as usize];
                        p /= 3;
                        s
                    })
                    .collect(),
            );
        }
    }
    for n in 9..=24 {
        for _ in 0..64 {
            patterns.push(
                (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        [0, 4, 8][(seed % 3) as usize]
                    })
                    .collect(),
            );
        }
    }
    for sizes in &patterns {
        let block_len = layout::block_len_of(sizes).unwrap();
        let good = set_of(sizes, block_len);
        agree(&good, sizes.len(), &|| alloc::format!("{sizes:?}"));
        for at in field::set::LEN..good.len() {
            let padding = at - field::set::LEN >= sizes.len();
            for bad in [1u8, 2, 3, 12, 0x10, 0x40, 0x84, 0xFF, 4, 8] {
                if !padding && (bad == 4 || bad == 8) {
                    continue;
                }
                let mut b = good.clone();
                b[at] = bad;
                agree(&b, sizes.len(), &|| {
                    alloc::format!("{sizes:?}, byte {at} = {bad}")
                });
            }
        }
    }
    assert!(accepted == patterns.len() && refused > 0);
}

/// The header's fixed fields compared as one word, then its total length, give what
/// `required_len` (field by field) gives: its error, or the total length it reads (which the
/// input's length must then equal).
#[test]
fn the_header_read_as_words_agrees_with_required_len() {
    use SnapshotError as E;
    let good = encode(HDR, &hand_cases());
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for at in 0..field::header::PERF_TIME {
        for x in [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x80, 0xFF] {
            let mut b = good.clone();
            b[at] ^= x;
            inputs.push(b);
        }
    }
    for len in 0..=HEADER_LEN + 8 {
        inputs.push(good[..len].to_vec());
        let mut b = good[..len].to_vec();
        if len >= 12 {
            b[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        }
        inputs.push(b);
    }
    let mut wrong_len = 0;
    for b in &inputs {
        let parsed = Snapshot::parse(b).map(|_| ());
        match required_len(b) {
            Err(e) => assert_eq!(parsed, Err(e), "{:?}", &b[..b.len().min(16)]),
            Ok(total) if total > b.len() => {
                assert_eq!(parsed, Err(E::Truncated { offset: b.len() }));
                wrong_len += 1;
            }
            Ok(total) if total < b.len() => {
                assert_eq!(parsed, Err(E::BadLength { offset: 8 }));
                wrong_len += 1;
            }
            // The sets are read: what they give is not the header's concern.
            Ok(_) => {}
        }
    }
    assert!(wrong_len > 0);
}

/// The 16-byte test of a short name's units against the unit-by-unit one, for every pattern of
/// zero and non-zero units (a non-zero unit with either byte zero, or both set).
#[test]
fn unit_zeros_finds_exactly_the_zero_units() {
    use super::check::{unit_zeros, unit_zeros_by_unit};
    for pattern in 0..=u16::MAX {
        let mut units = [0u8; 32];
        for (k, unit) in units.chunks_exact_mut(2).enumerate() {
            if pattern & (1 << k) == 0 {
                unit.copy_from_slice(&[[0x41, 0], [0, 0x41], [0x80, 0xFF]][k % 3]);
            }
        }
        let words: Vec<[u8; 8]> = units
            .chunks_exact(8)
            .map(|c| c.try_into().unwrap())
            .collect();
        let name = [&words[0], &words[1], &words[2], &words[3]];
        assert_eq!(unit_zeros(name), u32::from(pattern));
        assert_eq!(unit_zeros_by_unit(name), u32::from(pattern));
    }
}

#[test]
fn name_areas_are_checked_and_add_up() {
    use SnapshotError as E;
    let good = encode(HDR, &hand_cases());
    let with = |off: usize, patch: &[u8]| parse_patched(&good, off, patch);
    let snap = Snapshot::parse(&good).unwrap();
    // "a" in set 9: the name at +24, its NUL at +26, padding from +28 to +32.
    let a = snap.find_set(9).unwrap().instance(0).unwrap();
    for (at, what) in [
        (26, "the NUL"),
        (27, "the NUL"),
        (29, "name padding"),
        (31, "name padding"),
    ] {
        assert_eq!(
            with(a.offset() + at, &[9]),
            Err(E::Reserved {
                offset: a.offset() + at
            }),
            "{what}"
        );
    }
    assert_eq!(
        with(a.offset() + 24, &[0, 0]),
        Err(E::BadName {
            offset: a.offset() + 24
        }),
        "NUL unit"
    );
    for name_length in [2 * u32::from(MAX_NAME_UNITS) + 4, 0, 3, 5] {
        assert_eq!(
            with(a.offset() + 20, &name_length.to_le_bytes()),
            Err(E::BadName {
                offset: a.offset() + 20
            }),
            "NameLength {name_length}"
        );
    }
    // Every name area ends its record, and each set knows their total without a walk.
    for set in snap.sets() {
        let areas: usize = set.instances().map(|i| i.name_area().len()).sum();
        assert_eq!(set.name_areas_len(), areas);
        for i in set.instances() {
            assert_eq!(i.name_area().len() % 8, 0);
            assert_eq!(&i.name_area()[..i.name_bytes().len()], i.name_bytes());
            assert!(
                i.name_area()[i.name_bytes().len()..]
                    .iter()
                    .all(|b| *b == 0)
            );
            assert_eq!(
                i.offset() + i.byte_len(),
                i.name_area().as_ptr() as usize - good.as_ptr() as usize
                    + i.name_area().len()
                    + set.block_len()
            );
            assert_eq!(i.block().len(), set.block_len());
        }
    }
}

#[test]
fn errors_display() {
    use alloc::string::ToString;
    let cases = [
        SnapshotError::NoSpace { needed: 96 },
        SnapshotError::BadMagic,
        SnapshotError::UnsupportedVersion {
            found: 2,
            supported: 1,
        },
        SnapshotError::Truncated { offset: 3 },
        SnapshotError::BadLength { offset: 8 },
        SnapshotError::LimitExceeded { offset: 12 },
        SnapshotError::BadCounterSize { offset: 57 },
        SnapshotError::BadName { offset: 76 },
        SnapshotError::Reserved { offset: 46 },
        SnapshotError::BadIndex { offset: 44 },
        SnapshotError::CountMismatch {
            expected: 2,
            found: 1,
        },
    ];
    for e in cases {
        let s = e.to_string();
        assert!(
            !s.is_empty() && s.chars().next().unwrap().is_lowercase(),
            "{s}"
        );
    }
    assert_eq!(
        SnapshotError::NoSpace { needed: 96 }.to_string(),
        "buffer too small: snapshot needs 96 bytes"
    );
}

/// A value that fits a counter of `size` bytes (so that it decodes as given).
fn arb_value(size: u8) -> BoxedStrategy<u64> {
    match size {
        8 => any::<u64>().boxed(),
        4 => any::<u32>().prop_map(u64::from).boxed(),
        _ => Just(0).boxed(),
    }
}

fn arb_inst(sizes: Vec<u8>) -> impl Strategy<Value = MInst> {
    (
        any::<u32>(),
        prop_oneof![Just(PARENT_NONE), 0u32..8],
        prop_oneof![
            4 => proptest::collection::vec(1u16..=u16::MAX, 0..12),
            1 => proptest::collection::vec(1u16..=u16::MAX, 1000..=1023),
        ],
        sizes.into_iter().map(arb_value).collect::<Vec<_>>(),
    )
        .prop_map(|(id, parent, name, values)| MInst {
            id,
            parent,
            name,
            values,
        })
}

fn arb_sizes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![3 => Just(8u8), 3 => Just(4u8), 1 => Just(0u8)],
        0..6,
    )
}

fn arb_sets() -> impl Strategy<Value = Vec<MSet>> {
    proptest::collection::vec(
        (any::<bool>(), arb_sizes(), 1u16..200).prop_flat_map(|(multi, sizes, step)| {
            let max = if multi { 6 } else { 1 };
            (
                Just(step),
                Just(multi),
                Just(sizes.clone()),
                proptest::collection::vec(arb_inst(sizes), 0..=max),
            )
        }),
        0..5,
    )
    .prop_map(|raw| {
        let mut index = 0u16;
        raw.into_iter()
            .map(|(step, multi, sizes, instances)| {
                index = index.saturating_add(step);
                MSet {
                    index,
                    multi,
                    sizes,
                    instances,
                }
            })
            .collect()
    })
}

fn arb_header() -> impl Strategy<Value = SnapshotHeader> {
    (any::<i64>(), any::<i64>(), any::<i64>()).prop_map(|(perf_time, perf_freq, system_time)| {
        SnapshotHeader {
            perf_time,
            perf_freq,
            system_time,
        }
    })
}

/// A length or count field of an encoded snapshot, and the errors bumping it may give.
struct Field {
    offset: usize,
    size: usize,
    what: &'static str,
}

fn length_fields(bytes: &[u8]) -> Vec<Field> {
    let snap = Snapshot::parse(bytes).unwrap();
    let mut fields = vec![
        Field {
            offset: 6,
            size: 2,
            what: "header length",
        },
        Field {
            offset: 8,
            size: 4,
            what: "total length",
        },
        Field {
            offset: 12,
            size: 4,
            what: "set count",
        },
    ];
    for set in snap.sets() {
        let p = set.offset();
        fields.push(Field {
            offset: p,
            size: 4,
            what: "set length",
        });
        // The counter count is left out: one more counter of size 0 (the padding byte
        // after the sizes) lays the block out the same, so the result is a valid snapshot.
        fields.push(Field {
            offset: p + 10,
            size: 2,
            what: "block length",
        });
        fields.push(Field {
            offset: p + 12,
            size: 4,
            what: "instance count",
        });
        for instance in set.instances() {
            fields.push(Field {
                offset: instance.offset(),
                size: 4,
                what: "byte length",
            });
            fields.push(Field {
                offset: instance.offset() + 16,
                size: 4,
                what: "name offset",
            });
            fields.push(Field {
                offset: instance.offset() + 20,
                size: 4,
                what: "name length",
            });
            let block = instance.offset() + instance.byte_len() - set.block_len();
            fields.push(Field {
                offset: block,
                size: 4,
                what: "block byte length",
            });
        }
    }
    fields
}

/// Whether `err` is a right rejection of the field `what` bumped. A bumped count moves
/// the records it describes, so the mismatch may surface as the count itself (a limit) or
/// as the first length, size, padding byte or name that no longer lines up.
fn expected_rejection(what: &str, err: Result<Snapshot<'_>, SnapshotError>, len: usize) -> bool {
    use SnapshotError as E;
    match err {
        Err(E::BadLength { .. }) => true,
        Err(E::Truncated { offset }) => what == "total length" && offset == len,
        Err(E::LimitExceeded { .. }) => {
            matches!(what, "set count" | "counter count" | "instance count")
        }
        // A count moves the sizes, the identities or the records over bytes of another
        // kind.
        Err(E::BadCounterSize { .. }) => what == "counter count",
        Err(E::Reserved { .. }) => {
            matches!(what, "instance count" | "counter count")
        }
        Err(E::BadName { .. }) => {
            matches!(what, "name length" | "instance count" | "counter count")
        }
        _ => false,
    }
}

fn read_field(b: &[u8], f: &Field) -> u64 {
    let mut v = [0u8; 8];
    v[..f.size].copy_from_slice(&b[f.offset..f.offset + f.size]);
    u64::from_le_bytes(v)
}

fn write_field(b: &mut [u8], f: &Field, value: u64) {
    b[f.offset..f.offset + f.size].copy_from_slice(&value.to_le_bytes()[..f.size]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn encode_decode_is_identity(header in arb_header(), sets in arb_sets()) {
        let bytes = encode(header, &sets);
        prop_assert_eq!(bytes.len(), measure(header, &sets));
        let snap = Snapshot::parse(&bytes).unwrap();
        prop_assert_eq!(decode(&snap), (header, sets));
    }

    /// The views locate what the layout places: each set's sizes, identities and records at
    /// the offsets its fixed fields give (read here byte by byte), and `find_set`, which stops
    /// at the first index at or past the one wanted, finds what a search of every set finds.
    #[test]
    fn views_locate_the_layouts_parts(header in arb_header(), sets in arb_sets()) {
        let bytes = encode(header, &sets);
        let snap = Snapshot::parse(&bytes).unwrap();
        let field = |at: usize, n: usize| {
            bytes[at..at + n].iter().rev().fold(0usize, |v, b| v << 8 | usize::from(*b))
        };
        for set in snap.sets() {
            let pos = set.offset();
            let (len, counters, count) = (field(pos, 4), field(pos + 8, 2), field(pos + 12, 4));
            let sizes = &bytes[pos + 16..pos + 16 + counters];
            let ident = pos + 16 + counters.div_ceil(8) * 8;
            let records = &bytes[ident + 8 * count..pos + len];
            prop_assert_eq!(set.counter_sizes().as_ptr(), sizes.as_ptr());
            prop_assert_eq!(set.counter_sizes(), sizes);
            prop_assert_eq!(set.records().as_ptr(), records.as_ptr());
            prop_assert_eq!(set.records(), records);
            let mut at = ident + 8 * count;
            for (i, instance) in set.instances().enumerate() {
                prop_assert_eq!(instance.offset(), at);
                prop_assert_eq!(instance.id() as usize, field(ident + 8 * i, 4));
                prop_assert_eq!(instance.parent() as usize, field(ident + 8 * i + 4, 4));
                at += instance.byte_len();
            }
            prop_assert_eq!(at, pos + len);
        }
        let mut wanted = vec![0, u16::MAX];
        for set in &sets {
            wanted.extend([set.index - 1, set.index, set.index.saturating_add(1)]);
        }
        for index in wanted {
            let found = snap.find_set(index);
            prop_assert_eq!(found, snap.sets().find(|s| s.index() == index));
            prop_assert_eq!(found.is_some(), sets.iter().any(|s| s.index == index));
        }
    }

    #[test]
    fn corruptions_are_rejected(header in arb_header(), sets in arb_sets(), delta in prop_oneof![Just(1u64), Just(8), Just(u64::MAX)]) {
        use SnapshotError as E;
        let good = encode(header, &sets);
        // Truncation at every length.
        for len in 0..good.len() {
            prop_assert_eq!(Snapshot::parse(&good[..len]), Err(E::Truncated { offset: len }));
        }
        // Version and magic.
        for version in [0u16, 1, 2, 4, u16::MAX] {
            let mut b = good.clone();
            b[4..6].copy_from_slice(&version.to_le_bytes());
            prop_assert_eq!(Snapshot::parse(&b), Err(E::UnsupportedVersion { found: version, supported: SNAPSHOT_VERSION }));
        }
        for i in 0..4 {
            let mut b = good.clone();
            b[i] ^= 0x20;
            prop_assert_eq!(Snapshot::parse(&b), Err(E::BadMagic));
        }
        // Each length and count field bumped (by +1, +8 or -1, wrapping).
        for f in length_fields(&good) {
            let mut b = good.clone();
            let old = read_field(&b, &f);
            let new = old.wrapping_add(delta);
            write_field(&mut b, &f, new);
            if read_field(&b, &f) == old {
                continue;
            }
            let err = Snapshot::parse(&b);
            let ok = expected_rejection(f.what, err, good.len());
            prop_assert!(ok, "{} at {} bumped {} -> {}: {:?}", f.what, f.offset, old, new, err);
        }
    }

    /// Random bytes and random single-byte damage to valid snapshots: never a panic, and
    /// whatever is accepted decodes and re-encodes to the same bytes (the format is canonical).
    #[test]
    fn anything_accepted_reencodes_identically(
        header in arb_header(),
        sets in arb_sets(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        noise in proptest::collection::vec(any::<u8>(), 0..128),
    ) {
        let mut damaged = encode(header, &sets);
        for (at, x) in flips {
            let n = damaged.len();
            damaged[at % n] ^= x;
        }
        for bytes in [damaged, noise] {
            if let Ok(snap) = Snapshot::parse(&bytes) {
                let (h, s) = decode(&snap);
                prop_assert_eq!(encode(h, &s), bytes);
            }
        }
    }
}

/// The layout [`batch_writes_what_single_calls_write`] compiles its batches for (a set of
/// other sizes takes the general path).
struct Layout;
impl CounterSizes<3> for Layout {
    const SIZES: [u8; 3] = [8, 8, 4];
}
struct One;
impl CounterSizes<1> for One {
    const SIZES: [u8; 1] = [8];
}

/// A layout whose block (40 bytes) is longer than the ones the batch loop builds in
/// registers.
struct Wide;
impl CounterSizes<5> for Wide {
    const SIZES: [u8; 5] = [4, 8, 8, 8, 4];
}

#[test]
fn batch_of_a_long_counter_block_writes_what_single_calls_write() {
    let names: Vec<Vec<u16>> = ["", "a", "abcd", "Queue 000001"]
        .iter()
        .map(|n| w(n))
        .collect();
    let records: Vec<Record<'_, 5>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Record {
            id: i as u32,
            parent: PARENT_NONE,
            name,
            values: [i as u64 + 1, u64::MAX - i as u64, 3, 4, 0x1_0000_0005],
        })
        .collect();
    let run = |batch: bool| {
        let mut buf = vec![0xA5u8; 1024];
        let mut wr = SnapshotWriter::new(&mut buf, HDR);
        wr.begin_set(4, true, &Wide::SIZES, records.len() as u32)
            .unwrap();
        if batch {
            wr.instances::<Wide, _, _>(records.iter().copied()).unwrap();
        } else {
            for r in &records {
                wr.instance(r.id, r.parent, r.name, &r.values).unwrap();
            }
        }
        let len = wr.finish().unwrap();
        buf.truncate(len);
        buf
    };
    let bytes = run(true);
    assert_eq!(bytes, run(false));
    let snap = Snapshot::parse(&bytes).unwrap();
    let set = snap.find_set(4).unwrap();
    assert_eq!(set.block_len(), 40);
    let values: Vec<Vec<u64>> = set.instances().map(|i| i.values().collect()).collect();
    assert_eq!(
        values[3],
        [4, u64::MAX - 3, 3, 4, 5],
        "4-byte counters keep the low half"
    );
}

/// Block layouts for [`batch_writes_what_single_calls_write_for_names_of_every_length`], with
/// [`Layout`] and [`Wide`]: of one to four words (the blocks whose stores the batch loop
/// compiles from a plan; the bench's is `Quad`), with gaps and counters of no bytes — a gap in
/// the first word included, where the zero bytes after a short name land.
struct Quad;
impl CounterSizes<4> for Quad {
    const SIZES: [u8; 4] = [4, 4, 8, 8];
}
struct Half;
impl CounterSizes<1> for Half {
    const SIZES: [u8; 1] = [4];
}
struct Gapped;
impl CounterSizes<3> for Gapped {
    const SIZES: [u8; 3] = [0, 4, 8];
}
struct Spread;
impl CounterSizes<5> for Spread {
    const SIZES: [u8; 5] = [8, 4, 0, 4, 8];
}
struct Three;
impl CounterSizes<3> for Three {
    const SIZES: [u8; 3] = [4, 8, 4];
}
struct Nothing;
impl CounterSizes<1> for Nothing {
    const SIZES: [u8; 1] = [0];
}

/// What a set of `L`'s layout of `records` writes into a buffer of `cap` bytes of 0xA5,
/// through `instances` (`batch`) or one `instance` call per record: the calls' result,
/// `finish`'s, and the buffer.
fn write_set<L: CounterSizes<N>, const N: usize>(
    records: &[Record<'_, N>],
    cap: usize,
    batch: bool,
) -> (
    Result<(), SnapshotError>,
    Result<usize, SnapshotError>,
    Vec<u8>,
) {
    let mut buf = vec![0xA5u8; cap];
    let mut wr = SnapshotWriter::new(&mut buf, HDR);
    let result = wr
        .begin_set(3, true, &L::SIZES, records.len() as u32)
        .and_then(|()| {
            if batch {
                wr.instances::<L, _, _>(records.iter().copied())
            } else {
                records
                    .iter()
                    .try_for_each(|r| wr.instance(r.id, r.parent, r.name, &r.values))
            }
        });
    let finished = wr.finish();
    (result, finished, buf)
}

/// `instances` writes the bytes `instance` writes for names of every length from 0 to 40
/// units (the batch copies the usual lengths its own way), with a 0 unit anywhere, and in a
/// buffer that ends at every byte of the snapshot; the parser reads every name back.
#[test]
fn batch_writes_what_single_calls_write_for_names_of_every_length() {
    fn records<const N: usize>(names: &[Vec<u16>]) -> Vec<Record<'_, N>> {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| Record {
                id: 0x1000 + i as u32,
                parent: if i % 2 == 0 {
                    PARENT_NONE
                } else {
                    i as u32 - 1
                },
                name,
                values: core::array::from_fn(|k| {
                    0x0102_0304_0506_0708u64.wrapping_mul((N * i + k + 1) as u64)
                }),
            })
            .collect()
    }
    fn check<L: CounterSizes<N>, const N: usize>() {
        let names: Vec<Vec<u16>> = (0..=40u16)
            .map(|n| (0..n).map(|i| 0x4101 + 0x0100 * n + i).collect())
            .collect();
        let all = records::<N>(&names);
        let full = {
            let mut wr = SnapshotWriter::measuring(HDR);
            wr.begin_set(3, true, &L::SIZES, all.len() as u32).unwrap();
            wr.instances::<L, _, _>(all.iter().copied()).unwrap();
            wr.finish().unwrap()
        };
        for cap in 0..=full + 8 {
            let batch = write_set::<L, N>(&all, cap, true);
            assert_eq!(
                batch,
                write_set::<L, N>(&all, cap, false),
                "{:?}: {cap} bytes",
                L::SIZES
            );
            assert_eq!(batch.1.is_ok(), cap >= full, "{cap}");
        }
        // Both paths share the copy of a name outside the batch's own lengths: the parser,
        // which shares none of the writer's code, reads back every name as given.
        let (_, len, bytes) = write_set::<L, N>(&all, full, true);
        let snapshot = Snapshot::parse(&bytes[..len.unwrap()]).unwrap();
        let decoded: Vec<Vec<u16>> = snapshot
            .find_set(3)
            .unwrap()
            .instances()
            .map(|i| i.name_utf16().collect())
            .collect();
        assert_eq!(decoded, names, "{:?}", L::SIZES);
        for n in 1..names.len() {
            for at in 0..n {
                let mut holed = names.clone();
                holed[n][at] = 0;
                let holed = records::<N>(&holed);
                let batch = write_set::<L, N>(&holed, full, true);
                assert_eq!(
                    batch,
                    write_set::<L, N>(&holed, full, false),
                    "{:?}: a 0 unit at {at} of {n}",
                    L::SIZES
                );
                assert!(
                    matches!(batch.0, Err(SnapshotError::BadName { .. })),
                    "{n}, {at}"
                );
            }
        }
    }
    check::<Quad, 4>();
    check::<Half, 1>();
    check::<Gapped, 3>();
    check::<Spread, 5>();
    check::<Three, 3>();
    check::<Nothing, 1>();
    check::<Layout, 3>();
    check::<Wide, 5>();
}

/// Names for [`batch_writes_what_single_calls_write`]: mostly valid, some with NUL units,
/// some too long; of every length the writer copies its own way (under 4 units, 4 to 7, 8 to
/// 16, longer).
fn arb_batch_name() -> impl Strategy<Value = Vec<u16>> {
    prop_oneof![
        4 => proptest::collection::vec(1u16..=u16::MAX, 0..12),
        2 => proptest::collection::vec(1u16..=u16::MAX, 12..80),
        1 => proptest::collection::vec(prop_oneof![1u16..=u16::MAX, Just(0)], 1..6),
        1 => proptest::collection::vec(prop_oneof![8 => 1u16..=u16::MAX, 1 => Just(0)], 6..80),
        1 => proptest::collection::vec(1u16..=u16::MAX, 1020..=1030),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `instances` writes the same bytes and reports the same errors as `instance` called
    /// once per record, whatever the buffer (too small included), the announced counts
    /// (too many or too few records, another counter count) and the names (NUL units, too
    /// long), when a set is filled in two batch calls and another set follows.
    #[test]
    fn batch_writes_what_single_calls_write(
        names in proptest::collection::vec(arb_batch_name(), 0..8),
        announced in 0u32..10,
        sizes in prop_oneof![
            3 => Just(vec![8u8, 8, 4]),
            1 => Just(vec![8u8, 4, 8]),
            1 => Just(vec![8u8, 8])
        ],
        cap in prop_oneof![Just(4096usize), 0usize..3000],
        measuring in any::<bool>(),
        split in 0usize..8,
    ) {
        let records: Vec<Record<'_, 3>> = names
            .iter()
            .enumerate()
            .map(|(i, name)| Record {
                id: i as u32,
                parent: if i % 2 == 0 { PARENT_NONE } else { i as u32 - 1 },
                name,
                values: [i as u64, u64::MAX - i as u64, 7],
            })
            .collect();
        let run = |batch: bool| {
            let mut buf = vec![0xA5u8; cap];
            let mut wr = if measuring {
                SnapshotWriter::measuring(HDR)
            } else {
                SnapshotWriter::new(&mut buf, HDR)
            };
            let mut feed = || {
                wr.begin_set(2, true, &sizes, announced)?;
                if batch {
                    let (a, b) = records.split_at(split.min(records.len()));
                    wr.instances::<Layout, _, _>(a.iter().copied())?;
                    wr.instances::<Layout, _, _>(b.iter().copied())?;
                } else {
                    for r in &records {
                        wr.instance(r.id, r.parent, r.name, &r.values)?;
                    }
                }
                wr.begin_set(5, false, &[8], 1)?;
                wr.instances::<One, _, _>([Record { id: 0, parent: PARENT_NONE, name: &[], values: [9] }])
            };
            let result = feed();
            let finished = wr.finish();
            (result, finished, buf)
        };
        let (batch, single) = (run(true), run(false));
        prop_assert_eq!(&batch, &single);
        // A complete snapshot parses back to the records given.
        if let (Ok(()), Ok(len)) = (batch.0, batch.1)
            && !measuring
        {
            let snap = Snapshot::parse(&batch.2[..len]).unwrap();
            let set = snap.find_set(2).unwrap();
            let decoded: Vec<(u32, u32, Vec<u16>, Vec<u64>)> = set
                .instances()
                .map(|i| (i.id(), i.parent(), i.name_utf16().collect(), i.values().collect()))
                .collect();
            let given: Vec<(u32, u32, Vec<u16>, Vec<u64>)> = records
                .iter()
                .map(|r| {
                    // A 4-byte counter keeps the low half.
                    let values = r.values.iter().zip(&sizes).map(|(v, s)| match s {
                        4 => v & 0xFFFF_FFFF,
                        _ => *v,
                    });
                    (r.id, r.parent, r.name.to_vec(), values.collect())
                })
                .collect();
            prop_assert_eq!(decoded, given);
        }
    }
}

/// The format's limit is exact: a measuring writer takes records up to the last byte of
/// [`MAX_TOTAL_LEN`] and refuses one that would end 8 bytes past it.
#[test]
fn the_total_length_reaches_its_limit_exactly() {
    let sizes = vec![8u8; usize::from(MAX_COUNTERS)];
    let values = vec![0u64; sizes.len()];
    let name = vec![0x41u16; usize::from(MAX_NAME_UNITS)];
    let writer = || {
        let mut wr = SnapshotWriter::measuring(SnapshotHeader::default());
        wr.begin_set(0, true, &sizes, MAX_INSTANCES).unwrap();
        wr
    };
    // The shortest record: an empty name (one word of name area).
    let mut wr = writer();
    let start = wr.len();
    wr.instance(0, 0, &[], &values).unwrap();
    let shortest = wr.len() - start;
    // A writer filled to exactly `end`: records of 3 to 1 023 units, their areas 8 to
    // 2 048 bytes, so whatever is left over after whole shortest records goes into a
    // few longer names.
    let filled = |end: usize| {
        let mut wr = writer();
        let mut id = 0;
        while wr.len() < end {
            let extra = ((end - wr.len()) % shortest).min(2040);
            wr.instance(id, 0, &name[..extra / 2 + 3], &values).unwrap();
            id += 1;
        }
        assert_eq!(wr.len(), end);
        (wr, id)
    };
    let (mut wr, id) = filled(MAX_TOTAL_LEN);
    assert_eq!(
        wr.instance(id, 0, &[], &values),
        Err(SnapshotError::LimitExceeded { offset: 8 })
    );
    let (mut wr, id) = filled(MAX_TOTAL_LEN - shortest + 8);
    assert_eq!(
        wr.instance(id, 0, &[], &values),
        Err(SnapshotError::LimitExceeded { offset: 8 })
    );
}

/// A set of more instances than 16 bits count (70 001, through the batch into a buffer the
/// measuring writer sized): the instance count, every id and every value read back whole.
#[test]
fn a_set_of_more_than_65_535_instances_is_written_and_read_back_whole() {
    const COUNT: u32 = 70_001;
    let names: Vec<Vec<u16>> = (0..COUNT)
        // Names of 0 to 9 units.
        .map(|i| w(&alloc::format!("{i:09}")[..(i % 10) as usize]))
        .collect();
    let records: Vec<Record<'_, 1>> = names
        .iter()
        .zip(0..COUNT)
        .map(|(name, id)| Record {
            id,
            parent: PARENT_NONE,
            name,
            values: [u64::from(id) * 3],
        })
        .collect();
    let feed = |wr: &mut SnapshotWriter<'_>| {
        wr.begin_set(0, true, &Half::SIZES, COUNT)?;
        wr.instances::<Half, _, _>(records.iter().copied())
    };
    let mut measuring = SnapshotWriter::measuring(HDR);
    feed(&mut measuring).unwrap();
    let len = measuring.finish().unwrap();
    let mut buf = vec![0xA5u8; len];
    let mut wr = SnapshotWriter::new(&mut buf, HDR);
    feed(&mut wr).unwrap();
    assert_eq!(wr.finish(), Ok(len));
    let snap = Snapshot::parse(&buf).unwrap();
    let set = snap.find_set(0).unwrap();
    assert_eq!(set.instance_count(), COUNT as usize);
    let mut read = 0u32;
    for (i, instance) in set.instances().enumerate() {
        assert_eq!(instance.id(), read, "instance {i}");
        assert_eq!(instance.values().collect::<Vec<_>>(), [u64::from(read) * 3]);
        assert_eq!(instance.name_utf16().collect::<Vec<_>>(), names[i]);
        read += 1;
    }
    assert_eq!(read, COUNT);
}

/// Every call after an error reports it again, a batch of no records included.
#[test]
fn an_error_is_reported_again_by_a_batch_of_no_records() {
    let mut buf = vec![0u8; 256];
    let mut wr = SnapshotWriter::new(&mut buf, HDR);
    wr.begin_set(0, true, &Half::SIZES, 1).unwrap();
    let refused = wr.instance(0, PARENT_NONE, &[0x41, 0], &[1]);
    assert!(
        matches!(refused, Err(SnapshotError::BadName { .. })),
        "{refused:?}"
    );
    assert_eq!(wr.instances::<Half, _, _>([]), refused);
    assert_eq!(wr.finish(), Err(refused.unwrap_err()));
}

/// An iterator that yields its records, then `None`, then records again (legal for an iterator
/// that does not implement `FusedIterator`).
struct Unfused<'n> {
    items: [Option<Record<'n, 1>>; 3],
    at: usize,
}

impl<'n> Iterator for Unfused<'n> {
    type Item = Record<'n, 1>;
    fn next(&mut self) -> Option<Record<'n, 1>> {
        let item = self.items.get(self.at).copied().flatten();
        self.at += 1;
        item
    }
}

#[test]
fn a_batch_ends_at_its_records_first_end() {
    const NAME: [u16; 9] = [0x41; 9];
    let record = |id| Record {
        id,
        parent: PARENT_NONE,
        name: &NAME,
        values: [7],
    };
    for count in [1, 2] {
        let mut buf = vec![0u8; 512];
        let mut wr = SnapshotWriter::new(&mut buf, HDR);
        wr.begin_set(0, true, &Half::SIZES, count).unwrap();
        let records = Unfused {
            items: [Some(record(1)), None, Some(record(2))],
            at: 0,
        };
        // The batch stops at the first `None`: with a set of one it has taken the set's last
        // record (and asked for one more, which is `None`), with a set of two it ran out.
        assert_eq!(wr.instances::<Half, 1, _>(records), Ok(()));
        if count == 1 {
            let len = wr.finish().unwrap();
            let snap = Snapshot::parse(&buf[..len]).unwrap();
            let set = snap.find_set(0).unwrap();
            assert_eq!(set.instances().map(|i| i.id()).collect::<Vec<_>>(), [1]);
        } else {
            assert_eq!(
                wr.finish(),
                Err(SnapshotError::CountMismatch {
                    expected: 2,
                    found: 1
                })
            );
        }
    }
}
