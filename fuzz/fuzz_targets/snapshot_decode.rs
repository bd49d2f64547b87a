// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fuzzes the driver↔DLL snapshot decoder (`pcw_core::snapshot`): any bytes must be accepted or
//! reported, never panic; whatever is accepted must be fully readable, random access must agree
//! with iteration, and re-encoding it must give the very same bytes (the format is canonical).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcw_core::snapshot::{self, Snapshot, SnapshotError, SnapshotWriter};

fuzz_target!(|data: &[u8]| {
    let _ = snapshot::required_len(data);
    let Ok(snap) = Snapshot::parse(data) else {
        return;
    };
    let mut out = vec![0xA5u8; data.len()];
    let mut writer = SnapshotWriter::new(&mut out, snap.header());
    let mut measuring = SnapshotWriter::measuring(snap.header());
    for set in snap.sets() {
        let count = u32::try_from(set.instance_count()).expect("bounded by MAX_INSTANCES");
        for w in [&mut writer, &mut measuring] {
            w.begin_set(set.index(), set.multi(), set.counter_sizes(), count)
                .expect("an accepted set re-encodes");
        }
        for (i, instance) in set.instances().enumerate() {
            // Random access walks the records: checked for the first few only.
            if i < 8 {
                assert_eq!(set.instance(i), Some(instance));
            }
            let name: Vec<u16> = instance.name_utf16().collect();
            assert_eq!(name.len(), instance.name_len());
            let values: Vec<u64> = instance.values().collect();
            assert_eq!(values.len(), usize::from(set.counter_count()));
            for (k, v) in values.iter().enumerate() {
                assert_eq!(instance.value(k), Some(*v));
            }
            assert_eq!(instance.value(values.len()), None);
            for w in [&mut writer, &mut measuring] {
                w.instance(instance.id(), instance.parent(), &name, &values)
                    .expect("an accepted instance re-encodes");
            }
        }
        assert_eq!(set.instance(set.instance_count()), None);
    }
    assert_eq!(measuring.finish(), Ok(data.len()));
    assert_eq!(writer.finish(), Ok(data.len()));
    assert_eq!(out, data, "re-encoding gives the same bytes");
    // One byte short: the exact size is reported.
    if let Some(short) = data.len().checked_sub(1) {
        let mut small = vec![0u8; short];
        let mut w = SnapshotWriter::new(&mut small, snap.header());
        for set in snap.sets() {
            let count = u32::try_from(set.instance_count()).expect("bounded");
            w.begin_set(set.index(), set.multi(), set.counter_sizes(), count)
                .expect("accepted");
            for instance in set.instances() {
                let name: Vec<u16> = instance.name_utf16().collect();
                let values: Vec<u64> = instance.values().collect();
                w.instance(instance.id(), instance.parent(), &name, &values)
                    .expect("accepted");
            }
        }
        assert_eq!(
            w.finish(),
            Err(SnapshotError::NoSpace { needed: data.len() })
        );
    }
});
