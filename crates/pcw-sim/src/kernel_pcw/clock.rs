// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated clock: manual (moved only by [`Kernel::advance`](super::Kernel::advance)) or real (the host's monotonic
//! clock from boot), read by the driver through `KeQueryPerformanceCounter` and
//! `KeQuerySystemTimePrecise`.

use std::sync::{Mutex, PoisonError};

use super::providers::InDdi;

/// The simulated clock behind `KeQueryPerformanceCounter` and `KeQuerySystemTimePrecise`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Time moves only when [`Kernel::advance`](super::Kernel::advance) moves it: deterministic tests.
    Manual,
    /// Time follows the host's monotonic clock from boot: demos and `pcw typeperf`.
    Real,
}

/// Ticks per second of the simulated performance counter (what Windows reports on most
/// machines since Windows 10).
pub const PERF_FREQUENCY: i64 = 10_000_000;
/// The simulated system time at boot: 2026-11-22 00:00:00 UTC as a `FILETIME` (100 ns units
/// since 1601).
pub const BOOT_SYSTEM_TIME: i64 = 134_397_792_000_000_000;

#[derive(Debug)]
struct ClockState {
    mode: Clock,
    /// Manual time since boot, in 100 ns units.
    manual: i64,
    started: Option<std::time::Instant>,
}

static CLOCK: Mutex<ClockState> = Mutex::new(ClockState {
    mode: Clock::Manual,
    manual: 0,
    started: None,
});

/// Time since boot, in 100 ns units.
pub(super) fn since_boot() -> i64 {
    let c = CLOCK.lock().unwrap_or_else(PoisonError::into_inner);
    match (c.mode, c.started) {
        (Clock::Real, Some(start)) => i64::try_from(start.elapsed().as_nanos() / 100)
            .unwrap_or(i64::MAX)
            .saturating_add(c.manual),
        _ => c.manual,
    }
}

/// `KeQueryPerformanceCounter`: ticks since boot at [`PERF_FREQUENCY`].
///
/// # Safety
/// `frequency` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeQueryPerformanceCounter(frequency: *mut i64) -> i64 {
    let _sim = InDdi::enter();
    if !frequency.is_null() {
        // SAFETY: checked non-NULL; the caller provides a writable i64.
        unsafe { frequency.write(PERF_FREQUENCY) };
    }
    since_boot()
}

/// `KeQuerySystemTimePrecise`: [`BOOT_SYSTEM_TIME`] plus the time since boot.
///
/// # Safety
/// `current_time` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeQuerySystemTimePrecise(current_time: *mut i64) {
    let _sim = InDdi::enter();
    if !current_time.is_null() {
        // SAFETY: checked non-NULL; the caller provides a writable i64.
        unsafe { current_time.write(BOOT_SYSTEM_TIME + since_boot()) };
    }
}

/// Restarts the clock at boot in `mode`: no manual time, the real clock from now.
pub(super) fn reset(mode: Clock) {
    *CLOCK.lock().unwrap_or_else(PoisonError::into_inner) = ClockState {
        mode,
        manual: 0,
        started: Some(std::time::Instant::now()),
    };
}

/// Moves the clock forward by `hundred_ns` (100 ns units, negative values ignored).
pub(super) fn advance(hundred_ns: i64) {
    let mut c = CLOCK.lock().unwrap_or_else(PoisonError::into_inner);
    c.manual = c.manual.saturating_add(hundred_ns.max(0));
}
