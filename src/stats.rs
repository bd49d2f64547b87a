// SPDX-License-Identifier: MIT OR Apache-2.0
//! The "PCW Provider Statistics" counterset: how often and how fast the driver answers PCW
//! (single instance). The Geometric Waves collections are counted and timed only while a PCW
//! consumer has these counters added (`PcwCallbackAddCounter`/`RemoveCounter`, pcw-rt's
//! `Publish` hooks), so that an unwatched driver's collection reads no clock and executes no
//! locked instruction. What a consumer reads follows from that:
//!
//! * `Collections/sec` and `Avg. Collect Time` are cooked from the difference of two samples,
//!   both taken while the query watches: exact for it.
//! * `Instances Returned` and `% Instances Filtered` (a raw fraction, cooked from one sample)
//!   are totals over every collection made while some consumer watched, since the load.
//! * The snapshot IOCTL (the V1 perf DLL) reads the same totals and changes nothing: it sends
//!   no `AddCounter`, so a V1 reader sees what the PCW consumers' watching kept. (Keeping the
//!   statistics for good on the first snapshot was tried: any V1 query of the system's objects
//!   reaches the DLL, so the unwatched path would soon be gone wherever the DLL is installed.)
//!
//! The lock-free counters and their promises (gating, whole pairs, bounded counts) are
//! [`collect`], model-checked with loom there.

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

    /// Whether a consumer currently has statistics counters added.
    pub fn watched(&self) -> bool {
        self.0.watched()
    }

    /// Records one collection, watched, that started at `started` (the performance counter).
    pub fn record(&self, started: i64, c: Summary) {
        let elapsed = ffi::perf_counter().0.saturating_sub(started);
        self.0.record(Some(elapsed), c);
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
        STATS.record(started, visitor.summary());
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
