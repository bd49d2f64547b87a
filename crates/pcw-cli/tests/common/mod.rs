// SPDX-License-Identifier: MIT OR Apache-2.0
//! Helpers shared by the `pcw` command's tests: running the binary, reading a file of the crate,
//! and checking a document against a JSON schema held in `tests/schemas`.

#![allow(
    dead_code,
    reason = "export.rs and list.rs use every helper, so an expectation would go unfulfilled there; the other tests leave `validate` (and some `crate_file`) unused"
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
