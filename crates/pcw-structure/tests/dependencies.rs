// SPDX-License-Identifier: MIT OR Apache-2.0
//! The dependency rules between the workspace's crates (ARCHITECTURE.md, "Dependency rules"),
//! read from `cargo metadata`: each crate's normal and build dependencies on crates of ours are
//! among those its rule allows. Dev-dependencies are free: tests may link anything.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Every crate of the workspace and the crates of ours it may depend on; `None`: a leaf that
/// ties things together (commands, benches, test crates), which nothing depends on.
const RULES: &[(&str, Option<&[&str]>)] = &[
    ("pcw-core", Some(&[])),
    ("pcw-io", Some(&[])),
    ("pcw-um", Some(&[])),
    ("pcw-rt", Some(&["pcw-core"])),
    ("pcw-gen", Some(&["pcw-core", "pcw-io"])),
    // The `counters!` macro is pcw-gen at compile time, nothing more.
    ("pcw-declare", Some(&["pcw-gen"])),
    // The simulated Windows knows no manifest.
    ("pcw-sim", Some(&["pcw-core"])),
    ("pcw-pdh", Some(&["pcw-core", "pcw-sim", "pcw-gen"])),
    // The driver: never the simulator, never the DLL; its layer is generated at build time.
    ("pcw-driver", Some(&["pcw-core", "pcw-rt", "pcw-gen"])),
    ("checksum-driver", Some(&["pcw-rt", "pcw-gen"])),
    // The shipped DLL carries no simulator.
    ("pcw-perfdll", Some(&["pcw-core", "pcw-gen", "pcw-io"])),
    ("pcw-loader", Some(&["pcw-core", "pcw-sim"])),
    // The published test harness: the simulated Windows, its consumer and the loader, for a
    // driver's own tests; no driver of ours and no command.
    (
        "pcw-harness",
        Some(&[
            "pcw-core",
            "pcw-sim",
            "pcw-pdh",
            "pcw-gen",
            "pcw-io",
            "pcw-loader",
        ]),
    ),
    ("pcw-pecheck", Some(&[])),
    ("pcw-structure", Some(&[])),
    (
        "pcw-tidal",
        Some(&["pcw-um", "pcw-sim", "pcw-gen", "pcw-declare"]),
    ),
    ("pcw-wine-consumer", Some(&["pcw-core", "pcw-sim"])),
    ("pcw-cli", None),
    ("pcw-bench", None),
    ("pcw-gen-check", None),
    ("pcw-packaging", None),
];

#[test]
fn every_crate_depends_only_on_what_its_rule_allows() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let rules: BTreeMap<&str, Option<&[&str]>> = RULES.iter().copied().collect();
    let mut problems = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap();
        let Some(rule) = rules.get(name) else {
            problems.push(format!(
                "`{name}` has no dependency rule: add one here and in ARCHITECTURE.md"
            ));
            continue;
        };
        let Some(allowed) = rule else { continue };
        for dep in p["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let dev = dep["kind"].as_str() == Some("dev");
            if ours.contains(dep_name) && !dev && !allowed.contains(&dep_name) {
                problems.push(format!(
                    "`{name}` depends on `{dep_name}`, which its rule does not allow"
                ));
            }
        }
    }
    for (name, _) in RULES {
        if !ours.contains(name) {
            problems.push(format!(
                "the rule for `{name}` names no crate of the workspace"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
