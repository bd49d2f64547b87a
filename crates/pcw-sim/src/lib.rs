// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-sim: the Windows side of performance counters, played on any host.
//!
//! * [`kernel_pcw`]: kernel PCW — `PcwRegister`, `PcwAddInstance`, … as `#[no_mangle]` functions
//!   a host build of the driver links to, and the consumer side that calls its `PCW_CALLBACK`.
//! * [`usermode`]: Perflib's user-mode V2 provider side — `PerfStartProviderEx`,
//!   `PerfSetCounterSetInfo`, `PerfCreateInstance`, the value setters, `PerfSetCounterRefValue`,
//!   … as `#[no_mangle]` functions with their argument checks, and a consumer that reads them.
//! * [`v1_host`]: Perflib's V1 host — calls `CollectPerformanceData` with guard regions and
//!   `ExtCounterTestLevel` checks, and assembles `PERF_DATA_BLOCK` replies like
//!   `RegQueryValueEx(HKEY_PERFORMANCE_DATA)`.
//!
//! The simulator knows no counter manifest: what a consumer does with one (PDH's cooking,
//! counter paths, typeperf's query) is the pcw-pdh crate, over this one.

pub mod kernel_pcw;
pub mod usermode;
pub mod v1_host;

/// Multiplies the stress tests' round counts (the driver's, the simulator's and the perf
/// DLL's): `PCW_STRESS_SCALE`, which `scripts/stress.sh` sets when it runs them in release
/// mode; 1 by default.
///
/// # Panics
/// If `PCW_STRESS_SCALE` is set to anything but a positive integer (a test setting).
pub fn stress_scale() -> usize {
    std::env::var("PCW_STRESS_SCALE").map_or(1, |v| {
        v.parse()
            .ok()
            .filter(|n| *n > 0)
            .expect("PCW_STRESS_SCALE is a positive integer")
    })
}
