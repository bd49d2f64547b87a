// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fuzzes the query parser and the `CollectPerformanceData` contract: for any query string and
//! any buffer size, the reply is either a valid run of objects of exactly the reported length or
//! nothing at all with the buffer untouched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcw_core::counter_type::CounterType;
use pcw_core::testing::{counter, header};
use pcw_core::v1::collect::{Collected, collect};
use pcw_core::v1::query::{self, Query};
use pcw_core::v1::validate::{self, Expect};
use pcw_core::v1::writer::{
    CounterSpec, InstanceDesc, InstanceSpec, InstancesDesc, ObjectDesc, ObjectSource,
};

const COUNTERS: [CounterSpec; 3] = [
    counter(CounterType::RawFraction, 4, 4),
    counter(CounterType::RawBase, 4, 8),
    counter(CounterType::BulkCount, 8, 16),
];

fuzz_target!(|data: &[u8]| {
    let Some((size, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let size = usize::from(u16::from_le_bytes(*size)) % 1024;
    let units: Vec<u16> = rest
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    if let Query::Items(list) = query::classify(Some(&units)) {
        for index in list.indexes() {
            assert!(list.contains(index));
        }
    }
    let instances = [
        InstanceDesc { spec: InstanceSpec::named("Small Wave"), values: &[1, 2, 3] },
        InstanceDesc { spec: InstanceSpec::named("Große"), values: &[4, 5, 6] },
    ];
    let a = ObjectDesc {
        header: header(238, false),
        counters: &COUNTERS,
        instances: InstancesDesc::Multi(&instances),
    };
    let b = ObjectDesc {
        header: header(240, true),
        counters: &COUNTERS,
        instances: InstancesDesc::Single(&[7, 8, 9]),
    };
    let objects: [&dyn ObjectSource; 2] = [&a, &b];
    let mut buf = vec![0xA5u8; size];
    let out = collect(Some(&units), &objects, &mut buf);
    match out {
        Collected::Success { bytes, objects } => {
            assert_eq!(bytes % 8, 0);
            assert!(bytes <= size);
            validate::validate_objects(&buf[..bytes], objects, Expect::Any)
                .expect("collect wrote an invalid reply");
            assert!(buf[bytes..].iter().all(|b| *b == 0xA5), "wrote past the reply");
        }
        _ => assert!(buf.iter().all(|b| *b == 0xA5), "buffer changed without success"),
    }
});
