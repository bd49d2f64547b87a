// SPDX-License-Identifier: MIT OR Apache-2.0
//! The committed seed corpus of the snapshot fuzz target must keep inputs the decoder accepts:
//! seeds of an older format version are all rejected at the version check, and a fuzzer
//! started from them alone would spend its time rediscovering the layout.

use std::path::Path;

use pcw_core::snapshot::{SNAPSHOT_VERSION, Snapshot};

#[test]
fn the_snapshot_fuzz_seeds_hold_snapshots_of_the_current_version() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/snapshot_decode");
    let mut accepted = 0;
    let mut instances = 0;
    for entry in std::fs::read_dir(&dir).expect("the seed corpus is committed") {
        let bytes = std::fs::read(entry.expect("readable").path()).expect("readable");
        if let Ok(snapshot) = Snapshot::parse(&bytes) {
            accepted += 1;
            instances += snapshot.sets().map(|s| s.instance_count()).sum::<usize>();
        }
    }
    assert!(
        accepted >= 3 && instances >= 8,
        "only {accepted} seeds ({instances} instances) in {} parse as version {SNAPSHOT_VERSION}",
        dir.display()
    );
}
