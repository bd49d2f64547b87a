// SPDX-License-Identifier: MIT OR Apache-2.0
//! The "PCW Provider Statistics" counterset: how often and how fast the driver answers PCW
//! (single instance). Timing is only taken while a consumer has these counters added
//! (`PcwCallbackAddCounter`/`RemoveCounter`), so an unwatched driver reads no clock. The
//! lock-free counters and their promises (gating, whole pairs, bounded counts) are
//! `pcw_core::stats`, model-checked with loom there.

use pcw_core::stats::CollectStats;
pub use pcw_core::stats::Collected;

use crate::countersets::pcw_driver::provider_statistics as set;
use crate::ffi::{self, NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, STATUS_SUCCESS};

/// The statistics, updated lock-free by the callbacks.
#[derive(Debug)]
pub struct Stats(CollectStats);

/// The driver's statistics.
pub static STATS: Stats = Stats(CollectStats::new());

impl Stats {
    /// Resets everything at load; `now` is the performance counter.
    pub fn reset(&self, now: i64) {
        self.0.reset(now);
    }

    /// Whether a consumer currently has statistics counters added.
    pub fn watched(&self) -> bool {
        self.0.watched()
    }

    /// The performance counter when timing is wanted, else `None`.
    pub fn start(&self) -> Option<i64> {
        self.watched().then(|| ffi::perf_counter().0)
    }

    /// Records one collection that started at `started` (from [`Stats::start`]).
    pub fn record(&self, started: Option<i64>, c: Collected) {
        let elapsed = started.map(|t0| ffi::perf_counter().0.saturating_sub(t0));
        self.0.record(elapsed, c);
    }

    /// The values as the counterset's block, read now.
    pub fn snapshot(&self) -> set::Values {
        let t = self.0.read();
        let (now, frequency) = ffi::perf_counter();
        set::Values {
            collections: t.collections,
            instances_returned: t.instances_returned,
            collect_ticks: t.collect_ticks,
            timed_collections: t.timed_collections,
            instances_filtered: t.instances_filtered,
            instances_considered: t.instances_considered,
            loaded_at: t.loaded_at,
            now: now.unsigned_abs(),
            frequency: frequency.unsigned_abs(),
        }
    }
}

/// The counterset's `PCW_CALLBACK`.
///
/// # Safety
/// Called by PCW with a valid information block for `kind`.
pub unsafe extern "system" fn callback(
    kind: PCW_CALLBACK_TYPE,
    info: *const PCW_CALLBACK_INFORMATION,
    _context: *const core::ffi::c_void,
) -> NTSTATUS {
    // SAFETY: PCW passes a valid information block (contract).
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_SUCCESS;
    };
    let name = ffi::unicode(&[]);
    match kind {
        ffi::PcwCallbackAddCounter => {
            STATS.0.add_watcher();
            STATUS_SUCCESS
        }
        ffi::PcwCallbackRemoveCounter => {
            // An unmatched RemoveCounter changes nothing (the count never wraps).
            let _ = STATS.0.remove_watcher();
            STATUS_SUCCESS
        }
        ffi::PcwCallbackEnumerateInstances => {
            // SAFETY: the EnumerateInstances member is the active one for this kind; the buffer
            // is PCW's and the blank name (a single-instance set) lives across the call.
            unsafe { set::enumerate(info.EnumerateInstances.Buffer, &name, 0) }
        }
        ffi::PcwCallbackCollectData => {
            let values = STATS.snapshot();
            // SAFETY: the CollectData member is the active one for this kind; PCW copies the
            // name and the block during the call.
            unsafe { set::add(info.CollectData.Buffer, &name, 0, &values) }
        }
        _ => STATUS_SUCCESS,
    }
}
