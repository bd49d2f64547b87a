// SPDX-License-Identifier: MIT OR Apache-2.0
//! Parser + validator over arbitrary bytes: must never panic, and must return a manifest
//! exactly when it reports no error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let a = pcw_gen::analyze(&pcw_gen::Input::new("fuzz.man", data));
    assert_eq!(a.manifest.is_some(), !a.has_errors());
    for d in &a.diagnostics {
        assert!(d.pos.line >= 1 && d.pos.column >= 1);
        let _ = d.render();
    }
});
