// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 consumer `scripts/wine-test.sh` runs under Wine: Wine's real
//! `RegQueryValueExW(HKEY_PERFORMANCE_DATA)` over the perf DLL the script registered, then the
//! DLL's `CollectPerformanceData` contract under the real PE loader. Exits 1 on any deviation,
//! printing what was expected and what came back. On other hosts it only says so (exit 2): its
//! host-testable parts are the library's tests.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

#[cfg(windows)]
mod win;

fn main() -> std::process::ExitCode {
    #[cfg(windows)]
    {
        win::run()
    }
    #[cfg(not(windows))]
    {
        eprintln!(
            "pcw-wine-consumer runs on Windows or under Wine (scripts/wine-test.sh); \
             its host-testable parts are the pcw-wine-consumer library's tests"
        );
        std::process::ExitCode::from(2)
    }
}
