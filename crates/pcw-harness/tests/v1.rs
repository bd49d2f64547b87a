// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 view: a perf DLL's `CollectPerformanceData` called through the simulated Perflib and
//! its reply decoded. The DLL here is pcw-rs's own, serving its synthetic data.

use pcw_perfdll::{ClosePerformanceData, CollectPerformanceData, OpenPerformanceData};

#[test]
fn a_perf_dll_answers_through_the_simulated_perflib() {
    let mut export: Vec<u16> = "source=synthetic\0first-counter=1000\0first-help=1001\0\0"
        .encode_utf16()
        .collect();
    // SAFETY: a double-NUL-terminated multi-string alive across the call.
    assert_eq!(unsafe { OpenPerformanceData(export.as_mut_ptr()) }, 0);
    // SAFETY: the DLL honours the pointer side of the contract; the harness checks the rest.
    let objects = unsafe { pcw_harness::v1::collect(CollectPerformanceData, "Global") }.unwrap();
    // SAFETY: no pointers.
    assert_eq!(unsafe { ClosePerformanceData() }, 0);
    assert!(!objects.is_empty());
    for object in &objects {
        assert!(object.title_index >= 1000, "{object:?}");
        assert!(!object.instances.is_empty(), "{object:?}");
        for instance in &object.instances {
            assert_eq!(instance.values.len(), object.counters.len());
        }
    }
}
