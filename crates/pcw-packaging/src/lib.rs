// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-packaging: checks, on any host, of the Windows developer flow that only Windows can run:
//! `inf/pcw_driver.inx`, `Makefile.toml`, `scripts/vm/*.ps1` and the README's "On Windows"
//! section. The crate holds the small INF reader they need ([`inf`]); the checks
//! are its integration tests (`tests/`), which read the repository's files.
#![forbid(
    unsafe_code,
    reason = "it reads repository files and parses INF text; nothing here touches raw memory"
)]

pub mod inf;

use std::path::PathBuf;

/// The repository root (this crate lives in `crates/pcw-packaging`).
///
/// Taken from `CARGO_MANIFEST_DIR` as cargo sets it when it runs this crate's tests (the only
/// callers), falling back to the compile-time value: cargo reuses a workspace member's build
/// from a shared target directory for another checkout at another path, so the compile-time
/// path can name a different checkout's files.
pub fn repo_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let root = manifest_dir.join("../..");
    root.canonicalize().unwrap_or(root)
}
