// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fuzzes the V1 decoder/validator (`pcw_core::v1::validate`): any bytes, as a whole
//! `PERF_DATA_BLOCK` and as a bare run of objects, must be accepted or reported, never panic,
//! and whatever is accepted must be fully readable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcw_core::v1::validate::{self, DataBlockRef, Expect};

fuzz_target!(|data: &[u8]| {
    if let Ok(block) = DataBlockRef::parse(data) {
        let _ = block.system_name_utf16().count();
        for object in block.objects() {
            read_all(&object);
        }
    }
    let count = usize::from(data.first().copied().unwrap_or(0) & 7);
    for expect in [Expect::Data, Expect::Metadata, Expect::Any] {
        if validate::validate_objects(data, count, expect).is_ok() {
            for object in validate::objects(data, 0, expect) {
                let object = object.expect("validate_objects accepted these bytes");
                read_all(&object);
            }
        }
    }
});

fn read_all(object: &validate::ObjectRef<'_>) {
    let counters: Vec<_> = object.counters().collect();
    assert_eq!(counters.len(), object.header().num_counters as usize);
    for instance in object.instances() {
        let _ = instance.name_utf16().count();
        for counter in &counters {
            let _ = instance.value(counter);
        }
    }
}
