// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-driver: the kernel-mode PCW counterset provider (WDM) of pcw-rs.
//!
//! Its countersets come from `manifest/pcw_driver.man`, compiled at build time by pcw-gen into
//! [`countersets`]; [`lifecycle::load`] and [`lifecycle::unload`] are what `DriverEntry` and
//! `DriverUnload` do; [`waves`] and [`stats`] hold the two `PCW_CALLBACK`s and [`queues`] the
//! `PcwCreateInstance` instances. Every Windows item goes through [`ffi`].
//!
//! On a Windows target the crate is `no_std`; everywhere else it is an ordinary library whose
//! PCW imports resolve to pcw-sim, which is how its tests and `pcw typeperf` run the driver's
//! real code. The kernel paths (callbacks, unload) never panic and never allocate.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]
#![cfg_attr(target_os = "windows", no_std)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        reason = "the kernel paths never panic: every construct that can is a compile error outside tests"
    )
)]

extern crate alloc;

/// The register/add layer pcw-gen generated from `manifest/pcw_driver.man`.
pub mod countersets {
    include!(concat!(env!("OUT_DIR"), "/pcw_driver.rs"));
}

pub mod control;
pub mod ffi;
#[cfg(target_os = "windows")]
mod glue;
pub mod lifecycle;
pub mod queues;
pub mod security;
pub mod snapshot;
pub mod stats;
mod sync;
pub mod waves;

/// The driver's counter manifest, for tools that need its names and layout (`pcw typeperf`).
pub const MANIFEST: &str = include_str!("../manifest/pcw_driver.man");
