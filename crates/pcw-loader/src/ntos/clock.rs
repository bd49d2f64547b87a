// SPDX-License-Identifier: MIT OR Apache-2.0
//! Time: pcw-sim's simulated performance counter and system time, and what derives from them —
//! interrupt time (100 ns units since boot), tick count (interrupt time over the 15.625 ms clock
//! interval) — both for the routines that return them and for the `KUSER_SHARED_DATA` fields the
//! headers read inline (`KeQuerySystemTime`, `KeQueryInterruptTime`, `KeQueryTickCount`, through
//! [`super::cpu`]).

use std::sync::atomic::Ordering;

use super::state::{COUNT_ONLY, enter};

/// What the clock routines return in benchmark mode: the constant of the host build's no-op PCW
/// (`pcw_bench::NOOP_TIME`, 2026-01-01 plus 3 s in 100 ns units since 1601), so the image
/// computes the same wave values as the host build it is compared with.
const BENCHMARK_TIME: i64 = 134_116_992_000_000_000 + 30_000_000;

pub(super) unsafe extern "win64" fn ke_query_performance_counter(frequency: *mut i64) -> i64 {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        if !frequency.is_null() {
            // SAFETY: the caller passes NULL or a writable i64.
            unsafe { frequency.write(10_000_000) };
        }
        return BENCHMARK_TIME;
    }
    enter("KeQueryPerformanceCounter");
    // SAFETY: the caller passes NULL or a writable i64, as the DDI requires.
    unsafe { pcw_sim::kernel_pcw::KeQueryPerformanceCounter(frequency) }
}

pub(super) unsafe extern "win64" fn ke_query_system_time_precise(now: *mut i64) {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        // SAFETY: as the DDI: a writable i64.
        unsafe { now.write(BENCHMARK_TIME) };
        return;
    }
    enter("KeQuerySystemTimePrecise");
    // SAFETY: as the DDI: a writable i64.
    unsafe { pcw_sim::kernel_pcw::KeQuerySystemTimePrecise(now) }
}

/// `KeQueryTimeIncrement`: the clock interval, 15.625 ms in 100 ns units (Windows' default).
pub const TIME_INCREMENT: u32 = 156_250;

/// The performance counter and its frequency.
fn performance_counter() -> (i64, i64) {
    let mut frequency = 0i64;
    // SAFETY: a writable i64.
    let counter = unsafe { pcw_sim::kernel_pcw::KeQueryPerformanceCounter(&raw mut frequency) };
    (counter, frequency.max(1))
}

/// Interrupt time: 100 ns units since boot.
pub(crate) fn interrupt_time() -> u64 {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        return 30_000_000;
    }
    let (counter, frequency) = performance_counter();
    let t = i128::from(counter) * 10_000_000 / i128::from(frequency);
    u64::try_from(t).unwrap_or(0)
}

/// System time: 100 ns units since 1601-01-01, UTC.
pub(crate) fn system_time() -> u64 {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        return BENCHMARK_TIME.cast_unsigned();
    }
    let mut now = 0i64;
    // SAFETY: a writable i64.
    unsafe { pcw_sim::kernel_pcw::KeQuerySystemTimePrecise(&raw mut now) };
    now.cast_unsigned()
}

/// Clock ticks since boot.
pub(crate) fn tick_count() -> u64 {
    interrupt_time() / u64::from(TIME_INCREMENT)
}

pub(super) unsafe extern "win64" fn ke_query_time_increment() -> u32 {
    enter("KeQueryTimeIncrement");
    TIME_INCREMENT
}

pub(super) unsafe extern "win64" fn ke_query_interrupt_time_precise(qpc: *mut i64) -> u64 {
    enter("KeQueryInterruptTimePrecise");
    if qpc.is_null() {
        super::state::violation("KeQueryInterruptTimePrecise", "NULL QpcTimeStamp");
    } else {
        // SAFETY: the image's writable ULONG64 (the DDI's contract).
        unsafe { qpc.write_unaligned(performance_counter().0) };
    }
    interrupt_time()
}

pub(super) unsafe extern "win64" fn ke_query_unbiased_interrupt_time() -> u64 {
    enter("KeQueryUnbiasedInterruptTime");
    interrupt_time()
}
