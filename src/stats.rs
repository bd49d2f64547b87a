// SPDX-License-Identifier: MIT OR Apache-2.0
//! The "PCW Provider Statistics" counterset: how often and how fast the driver answers PCW
//! (single instance). Collections are counted and timed only while a consumer has these counters
//! added (`PcwCallbackAddCounter`/`RemoveCounter`, pcw-rt's `Publish` hooks), or for good once
//! the snapshot IOCTL (the V1 perf DLL) has read them, so that an unwatched driver's collection
//! reads no clock and executes no locked instruction. The counts are therefore those of the
//! collections made while watched: what the rates (`Collections/sec`) and the filtered share
//! need, as PDH cooks them from two samples a watching query takes. The lock-free counters and their promises (gating, whole pairs, bounded
//! counts) are [`collect`], model-checked with loom there.

pub mod collect;

use core::ops::ControlFlow;

use collect::CollectStats;
pub use collect::Summary;

use crate::countersets::pcw_driver::provider_statistics as set;
use crate::ffi::{self, CounterMask, Counterset, Publish, Visitor};

/// The statistics, updated lock-free by the callbacks; the counterset's publisher.
#[derive(Debug)]
pub struct Stats(CollectStats);

/// The driver's statistics.
pub static STATS: Stats = Stats(CollectStats::new());

impl Stats {
    /// Resets everything at load; `now` is the performance counter.
    pub fn reset(&self, now: i64) {
        self.0.reset(now);
    }

    /// Whether a consumer currently has statistics counters added (or they are kept for good).
    pub fn watched(&self) -> bool {
        self.0.watched()
    }

    /// Keeps the statistics from now until the next load, whoever watches: the snapshot IOCTL's
    /// readers (the V1 perf DLL) send no `AddCounter`.
    pub fn watch_for_good(&self) {
        self.0.watch_for_good();
    }

    /// The performance counter when timing is wanted, else `None`.
    pub fn start(&self) -> Option<i64> {
        self.watched().then(|| ffi::perf_counter().0)
    }

    /// Records one collection that started at `started` (from [`Stats::start`]).
    pub fn record(&self, started: Option<i64>, c: Summary) {
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

/// Runs one visit of another counterset's publisher, `visit`, and records it in [`STATS`], timed,
/// when it collects data while the statistics are watched ([`Stats::watched`]); an unwatched
/// collection is only the visit.
#[expect(
    clippy::inline_always,
    reason = "measured with callgrind: out of line, the visitor's state crosses it in memory"
)]
#[inline(always)]
pub fn timed<S: Counterset>(
    visitor: &mut Visitor<'_, S>,
    visit: impl FnOnce(&mut Visitor<'_, S>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    // The visit compiled twice, recorded and not: the usual, unwatched one then keeps no
    // clock reading, count or flag across its loop, and makes no locked read-modify-write
    // (measured with callgrind: the three locked adds and the counts they need were 8 of the
    // 160 instructions of a one-instance collection, and 30 of a filtered one).
    if visitor.collecting() && STATS.watched() {
        let started = ffi::perf_counter().0;
        let flow = visit(visitor);
        STATS.record(Some(started), visitor.summary());
        flow
    } else {
        visit(visitor)
    }
}

/// The single instance (blank name, id 0), and the watcher count that gates the statistics.
impl Publish<set::Set> for Stats {
    fn visit(&self, visitor: &mut Visitor<'_, set::Set>) -> ControlFlow<()> {
        visitor.instance(&[], 0, |_| self.snapshot())
    }

    fn counter_added(&self, _counters: CounterMask, _instance_mask: Option<&[u16]>) {
        self.0.add_watcher();
    }

    fn counter_removed(&self, _counters: CounterMask, _instance_mask: Option<&[u16]>) {
        // An unmatched RemoveCounter changes nothing (the count never wraps).
        let _ = self.0.remove_watcher();
    }
}
