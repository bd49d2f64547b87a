// SPDX-License-Identifier: MIT OR Apache-2.0
//! The cdylib's replies inside a whole `PERF_DATA_BLOCK` (pcw-sim's `Perflib`, as
//! `RegQueryValueEx(HKEY_PERFORMANCE_DATA, "Global")` assembles it) decode with the real
//! `pcw dump` binary.
//!
//! **Finding `pcw`.** A test cannot depend on another package's binary on stable cargo, and a
//! nested build into this run's own target directory would wait on cargo's lock; so the test
//! uses `$PCW_BIN` when set, and otherwise builds `pcw-cli` with the same cargo into its own
//! target directory under `CARGO_TARGET_TMPDIR` (slow the first time, incremental after).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Dll, OBJECTS, strs, synthetic};
use pcw_sim::v1_host::block::{Grow, Perflib};

fn pcw_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("PCW_BIN") {
        return PathBuf::from(bin);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pcw-cli-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&workspace)
        .args(["build", "--quiet", "-p", "pcw-cli", "--bin", "pcw"])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(status.success(), "building pcw failed");
    target
        .join("debug")
        .join(format!("pcw{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn pcw_dump_decodes_a_perflib_block_of_the_dll() {
    let dll = Dll::load("dump");
    assert_eq!(dll.open_with(Some(&strs(&synthetic(30_000_000)))), 0);
    let mut perflib = Perflib::new("PCWTEST");
    // SAFETY: the export stays inside the buffers the host gives it (checked by the host).
    unsafe { perflib.add_extern("pcw_perfdll", dll.collect) };
    let block = perflib.query(Some("Global"), Grow::default()).unwrap();
    drop(perflib);
    assert_eq!(dll.close(), 0);

    let file = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pcw-perfdll-global-{}.bin", std::process::id()));
    std::fs::write(&file, &block).unwrap();
    let out = Command::new(pcw_bin())
        .arg("dump")
        .arg(&file)
        .arg("--json")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "pcw dump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["header"]["system_name"], "PCWTEST");
    assert_eq!(doc["header"]["num_object_types"], 3);
    let objects = doc["objects"].as_array().unwrap();
    let indexes: Vec<u64> = objects
        .iter()
        .map(|o| o["name_title_index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, OBJECTS.map(u64::from));
    let waves: Vec<(&str, Vec<u64>)> = objects[0]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap(),
                i["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        waves,
        [
            ("Small Wave", vec![48, 60]),
            ("Medium Wave", vec![46, 70]),
            ("Large Wave", vec![44, 80])
        ]
    );
    assert_eq!(objects[1]["instance_kind"], "single");
    assert_eq!(objects[2]["instances"].as_array().unwrap().len(), 2);
}
