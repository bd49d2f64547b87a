// SPDX-License-Identifier: MIT OR Apache-2.0
//! Helpers shared by the `pcw` command's tests: running the binary, reading a file of the crate,
//! checking a document against a JSON schema held in `tests/schemas`, and the XDP-shaped
//! fixture with names of a test's choosing.

#![allow(
    dead_code,
    reason = "each test binary uses some of these helpers, none all of them; an expectation would go unfulfilled where a binary uses the ones it names"
)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `pcw` with `args`.
pub(crate) fn pcw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcw"))
        .args(args)
        .output()
        .unwrap()
}

/// A file under the crate's directory.
pub(crate) fn crate_file(relative: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(relative)
        .display()
        .to_string()
}

/// Validates `value` against `tests/schemas/<schema>` (JSON Schema 2020-12); the error names
/// the failing location.
pub(crate) fn validate(schema: &str, value: &serde_json::Value) -> Result<(), String> {
    let path = crate_file(&format!("tests/schemas/{schema}"));
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource(&path, json).unwrap();
    let index = compiler.compile(&path, &mut schemas).unwrap();
    schemas.validate(value, index).map_err(|e| format!("{e:#}"))
}

/// The XDP-shaped fixture manifest with its first counterset named `set` and its first two
/// counters `first` and `second`, written as `m.man` in a directory of its own (named by the
/// test binary, `case` and the process) under the temporary directory.
pub(crate) fn xdp_renamed(case: &str, set: &str, first: &str, second: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(crate_file("tests/fixtures/xdp_like.man"))
        .unwrap()
        .replacen(
            r#"name="Sample XDP Receive Queue""#,
            &format!(r#"name="{set}""#),
            1,
        )
        .replacen(
            r#"name="AF_XDP Frames Delivered""#,
            &format!(r#"name="{first}""#),
            1,
        )
        .replacen(
            r#"name="AF_XDP Frames Dropped""#,
            &format!(r#"name="{second}""#),
            1,
        );
    let binary = std::env::current_exe()
        .ok()
        .and_then(|e| e.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("pcw-{binary}-{}-{case}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.man");
    std::fs::write(&path, text).unwrap();
    path
}
