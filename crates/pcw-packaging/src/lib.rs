//! pcw-packaging: checks, on any host, of the Windows developer flow that only Windows can run
//! (issue 8): `inf/pcw_driver.inx`, `Makefile.toml`, `scripts/vm/*.ps1` and the README's
//! "On Windows" section. The crate holds the small INF reader they need ([`inf`]); the checks
//! are its integration tests (`tests/`), which read the repository's files.

pub mod inf;

use std::path::PathBuf;

/// The repository root (this crate lives in `crates/pcw-packaging`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")))
}
