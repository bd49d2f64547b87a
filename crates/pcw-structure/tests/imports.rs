// SPDX-License-Identifier: MIT OR Apache-2.0
//! No import circle in any crate of the workspace: for every crate root (libraries, binaries,
//! the driver, the examples), the files of its module tree import each other in one direction
//! only (`pcw_structure`'s docs say what counts as an import).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every crate root under `src/`, `crates/*/src` and `examples/*/src`.
fn crate_roots() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs = vec![root.join("src")];
    for parent in ["crates", "examples"] {
        for entry in std::fs::read_dir(root.join(parent)).unwrap() {
            dirs.push(entry.unwrap().path().join("src"));
        }
    }
    let mut roots = Vec::new();
    for dir in dirs {
        for name in ["lib.rs", "main.rs"] {
            if dir.join(name).exists() {
                roots.push(dir.join(name));
            }
        }
        if let Ok(bins) = std::fs::read_dir(dir.join("bin")) {
            for bin in bins {
                roots.push(bin.unwrap().path());
            }
        }
    }
    roots.sort();
    roots
}

#[test]
fn no_crate_has_an_import_circle() {
    let roots = crate_roots();
    assert!(roots.len() > 15, "{roots:?}");
    let mut report = String::new();
    for root in &roots {
        let arrows = pcw_structure::arrows(root).unwrap_or_else(|e| panic!("{e}"));
        for circle in pcw_structure::circles(&arrows) {
            let text = circle.to_string();
            report.push_str(&text.replace(&format!("{}/", workspace().display()), ""));
        }
    }
    assert!(
        report.is_empty(),
        "import circles (break each by moving what both sides need to one place, or by reversing an arrow):\n{report}"
    );
}
