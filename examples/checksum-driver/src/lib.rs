// SPDX-License-Identifier: MIT OR Apache-2.0
//! checksum-driver: an example WDM driver that is not about counters. It creates a control
//! device (`\\.\PcwRsChecksum`) whose two `METHOD_BUFFERED` IOCTLs return the CRC-32 or the
//! Adler-32 of the input buffer, and counts the requests, bytes and refusals per algorithm.
//!
//! Those statistics are published as the PCW counterset `Checksum Driver Algorithms` (one
//! instance per algorithm), added the way `docs/adding-counters.md` walks through: a manifest
//! (`checksum_driver.man`), one line in `build.rs`, the `pcw-rt` dependency and [`counters`].
//!
//! On a Windows target the crate is `no_std` and the kernel side ([`kernel`]: `DriverEntry`,
//! `DriverUnload`, the dispatch routines) is compiled over windows-sys, or wdk-sys with the
//! `wdk` feature. On an x86-64 Linux host the same kernel side is compiled over windows-sys
//! for the tests, whose harness (pcw-harness) supplies the kernel routines; elsewhere only the
//! plain-Rust parts are built. Kernel paths never panic and never allocate (the crate has no
//! allocator).
#![cfg_attr(target_os = "windows", no_std)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        reason = "a kernel path must not panic: a driver cannot unwind, its panic handler only parks the thread"
    )
)]

pub mod checksum;
pub mod control;
pub mod counters;
// Also compiled for the x86-64 Linux host, where the test harness runs it over the same kernel
// routines a cross-built image is bound to (pcw-harness).
#[cfg(any(target_os = "windows", all(target_arch = "x86_64", unix)))]
pub mod kernel;
// The crate's own unit tests link the kernel side too; on the host its kernel routines resolve
// to the harness's (an unused reference is kept by an instrumented build's linker).
#[cfg(all(test, target_arch = "x86_64", unix))]
use pcw_harness as _;
#[cfg(target_pointer_width = "64")]
pub mod wdm;

/// An ASCII string as UTF-16, at compile time.
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time only; `i` < N bounds both indexes"
)]
pub(crate) const fn utf16<const N: usize>(s: &str) -> [u16; N] {
    let bytes = s.as_bytes();
    let mut out = [0u16; N];
    let mut i = 0;
    while i < N {
        out[i] = bytes[i] as u16;
        i += 1;
    }
    out
}
