// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-core: the `no_std` runtime shared by the kernel driver and the V1 perf DLL.
//!
//! It implements the byte-level contracts of Windows performance data: the V1
//! `PERF_DATA_BLOCK` family of structures (`winperf.h`), the counter-type table, the
//! writer used by `CollectPerformanceData`, and the query-string rules (`docs/v1-queries.md`).
//!
//! # Panic freedom
//!
//! Nothing in this crate panics or indexes out of bounds, whatever the input: clippy's
//! `unwrap_used`, `expect_used`, `panic` and `indexing_slicing` are denied outside tests, and
//! every wire accessor goes through a length check first.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]
#![no_std]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        reason = "the driver and the V1 collect path run this code: it must not panic, whatever \
                  the input (tests may, to report a failure)"
    )
)]
#![cfg_attr(
    test,
    expect(
        clippy::cast_possible_truncation,
        clippy::items_after_statements,
        reason = "test fixtures are a few hundred bytes, so their sizes fit any integer type; a \
                  test declares its helper items beside the step that uses them"
    )
)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;

pub mod counter_type;
#[cfg(any(feature = "alloc", test))]
pub mod fallible;
pub mod filter;
pub mod protocol;
#[cfg(any(feature = "alloc", test))]
pub mod registry;
pub mod snapshot;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod v1;
pub mod wildcard;

pub(crate) mod bytes;
pub use bytes::align8;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
