//! The "PCW Provider Statistics" counterset: how often and how fast the driver answers PCW
//! (single instance). Timing is only taken while a consumer has these counters added
//! (`PcwCallbackAddCounter`/`RemoveCounter`), so an unwatched driver pays two atomic adds per
//! collection and no clock reads.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::countersets::pcw_driver::provider_statistics as set;
use crate::pcw_rt::{self, NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, STATUS_SUCCESS};

/// The statistics, updated lock-free by the callbacks.
#[derive(Debug)]
pub struct Stats {
    collections: AtomicU64,
    instances_returned: AtomicU64,
    collect_ticks: AtomicU32,
    timed_collections: AtomicU32,
    filtered: AtomicU32,
    considered: AtomicU32,
    loaded_at: AtomicU64,
    watchers: AtomicU32,
}

/// The driver's statistics.
pub static STATS: Stats = Stats {
    collections: AtomicU64::new(0),
    instances_returned: AtomicU64::new(0),
    collect_ticks: AtomicU32::new(0),
    timed_collections: AtomicU32::new(0),
    filtered: AtomicU32::new(0),
    considered: AtomicU32::new(0),
    loaded_at: AtomicU64::new(0),
    watchers: AtomicU32::new(0),
};

/// What one collection did, for [`Stats::record`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// Instances the query's filters let through and the callback added.
    pub returned: u32,
    /// Instances the callback looked at.
    pub considered: u32,
}

impl Stats {
    /// Resets everything at load; `now` is the performance counter.
    pub fn reset(&self, now: i64) {
        for a in [&self.collections, &self.instances_returned] {
            a.store(0, Ordering::Relaxed);
        }
        for a in [
            &self.collect_ticks,
            &self.timed_collections,
            &self.filtered,
            &self.considered,
            &self.watchers,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.loaded_at.store(now.unsigned_abs(), Ordering::Relaxed);
    }

    /// Whether a consumer currently has statistics counters added.
    pub fn watched(&self) -> bool {
        self.watchers.load(Ordering::Relaxed) > 0
    }

    /// The performance counter when timing is wanted, else `None`.
    pub fn start(&self) -> Option<i64> {
        self.watched().then(|| pcw_rt::perf_counter().0)
    }

    /// Records one collection that started at `started` (from [`Stats::start`]).
    pub fn record(&self, started: Option<i64>, c: Collected) {
        self.collections.fetch_add(1, Ordering::Relaxed);
        self.instances_returned
            .fetch_add(u64::from(c.returned), Ordering::Relaxed);
        self.considered.fetch_add(c.considered, Ordering::Relaxed);
        self.filtered
            .fetch_add(c.considered.saturating_sub(c.returned), Ordering::Relaxed);
        if let Some(t0) = started {
            let ticks = pcw_rt::perf_counter().0.saturating_sub(t0);
            // PERF_AVERAGE_TIMER is a 32-bit counter: PDH cooks the difference of two samples,
            // so wrapping is harmless as long as less than 2^32 ticks pass between samples.
            self.collect_ticks
                .fetch_add(u32::try_from(ticks).unwrap_or(u32::MAX), Ordering::Relaxed);
            self.timed_collections.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The values as the counterset's block, read now.
    pub fn snapshot(&self) -> set::Values {
        let (now, frequency) = pcw_rt::perf_counter();
        set::Values {
            collections: self.collections.load(Ordering::Relaxed),
            instances_returned: self.instances_returned.load(Ordering::Relaxed),
            collect_ticks: self.collect_ticks.load(Ordering::Relaxed),
            timed_collections: self.timed_collections.load(Ordering::Relaxed),
            instances_filtered: self.filtered.load(Ordering::Relaxed),
            instances_considered: self.considered.load(Ordering::Relaxed),
            loaded_at: self.loaded_at.load(Ordering::Relaxed),
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
    let name = pcw_rt::unicode(&[]);
    match kind {
        pcw_rt::PcwCallbackAddCounter => {
            STATS.watchers.fetch_add(1, Ordering::Relaxed);
            STATUS_SUCCESS
        }
        pcw_rt::PcwCallbackRemoveCounter => {
            let _ = STATS
                .watchers
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| w.checked_sub(1));
            STATUS_SUCCESS
        }
        pcw_rt::PcwCallbackEnumerateInstances => {
            // SAFETY: the EnumerateInstances member is the active one for this kind; the buffer
            // is PCW's and the blank name (a single-instance set) lives across the call.
            unsafe { set::enumerate(info.EnumerateInstances.Buffer, &name, 0) }
        }
        pcw_rt::PcwCallbackCollectData => {
            let values = STATS.snapshot();
            // SAFETY: the CollectData member is the active one for this kind; PCW copies the
            // name and the block during the call.
            unsafe { set::add(info.CollectData.Buffer, &name, 0, &values) }
        }
        _ => STATUS_SUCCESS,
    }
}
