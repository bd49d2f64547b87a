// SPDX-License-Identifier: MIT OR Apache-2.0
//! The loom model of the driver's statistics (`src/stats/collect.rs`), compiled here as a module
//! of its own under `--cfg loom_driver` (`scripts/loom.sh`): the file's atomics become loom's
//! while the driver library it belongs to keeps its ordinary ones (its `static` statistics need
//! `const` constructors, which loom's atomics lack). Empty in every other build.
#![cfg(loom_driver)]

#[path = "../src/stats/collect.rs"]
#[expect(
    dead_code,
    unreachable_pub,
    reason = "only the model's tests use the module here, and its `pub` items are the driver's"
)]
mod collect;
