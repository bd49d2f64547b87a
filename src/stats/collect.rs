// SPDX-License-Identifier: MIT OR Apache-2.0
//! The lock-free statistics behind the driver's "PCW Provider Statistics" counterset: updated by
//! every collection of the driver's `PCW_CALLBACK`s, read by that counterset's own collection
//! and by the snapshot IOCTL, from any number of threads at once.
//!
//! What a reader of [`CollectStats::read`] is promised, whatever the interleaving:
//!
//! * **Everything is gated by the watchers.** Collections are counted and timed only while at
//!   least one consumer has the statistics' counters added (`PcwCallbackAddCounter` →
//!   [`CollectStats::add_watcher`], `RemoveCounter` → [`CollectStats::remove_watcher`]); the
//!   driver's publisher does the gating (`stats::timed`), so that a collection nobody watches
//!   executes no locked instruction. The watcher count never wraps: an unmatched
//!   `RemoveCounter` at zero is ignored (a wrap to `u32::MAX` would count every collection
//!   forever), and an add at `u32::MAX` saturates.
//! * **Pairs are whole.** `CollectTicks` and `TimedCollections` (a `PERF_AVERAGE_TIMER` and its
//!   base) live in one 64-bit word, as do `InstancesConsidered` and `InstancesFiltered` (a
//!   `PERF_RAW_FRACTION` and its base): a reader sees both halves of each pair from the same
//!   set of collections, so the average time is never skewed by half a collection and the
//!   filtered share never exceeds 100 %.
//! * **Counts bound each other.** `TimedCollections ≤ Collections` and `InstancesConsidered −
//!   InstancesFiltered ≤ InstancesReturned` (until a 32-bit half wraps, which PDH's cooking of
//!   differences tolerates): a collection updates the counts before the pairs (release), and a
//!   reader loads the pairs (acquire) before the counts.
//!
//! The loom model at the end of this file (`scripts/loom.sh`) checks these promises over every
//! interleaving of small cases.

#[cfg(not(all(loom_driver, test)))]
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
// The loom model (`scripts/loom.sh`, `RUSTFLAGS="--cfg loom_driver"`) swaps in loom's atomics so that
// every interleaving, and every value a relaxed load may legally return, is explored. Only in
// the test build: loom is a dev-dependency, and the driver links this module (its loom build is tests/loom_stats.rs).
#[cfg(all(loom_driver, test))]
use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// What one collection did (instances considered and returned), as the safe callback's visitor
/// reports it.
pub use pcw_rt::Summary;

/// The statistics, updated lock-free.
#[derive(Debug)]
pub struct CollectStats {
    collections: AtomicU64,
    returned: AtomicU64,
    /// `InstancesFiltered` in the low half, `InstancesConsidered` in the high half: a collection
    /// that filters nothing (the usual one) adds to the high half alone, with one atomic add
    /// (a carry out of the high half falls off the word, which is the half's own wrap).
    instances: AtomicU64,
    /// `CollectTicks` in the low half, `TimedCollections` in the high half.
    timing: AtomicU64,
    loaded_at: AtomicU64,
    /// Consumers that currently have the statistics' counters added.
    watchers: AtomicU32,
}

/// The statistics as read at one instant ([`CollectStats::read`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// `CollectData` callbacks answered.
    pub collections: u64,
    /// Instances added to PCW buffers.
    pub instances_returned: u64,
    /// Performance-counter ticks spent in timed collections (wraps; PDH cooks differences).
    pub collect_ticks: u32,
    /// Collections that were timed.
    pub timed_collections: u32,
    /// Instances the filters left out.
    pub instances_filtered: u32,
    /// Instances looked at.
    pub instances_considered: u32,
    /// The performance counter at load.
    pub loaded_at: u64,
}

/// The low half of a packed pair.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the truncation is the point: the low 32 bits"
)]
const fn low(word: u64) -> u32 {
    word as u32
}

/// The high half of a packed pair.
const fn high(word: u64) -> u32 {
    low(word >> 32)
}

/// A pair from its halves.
const fn pair(low: u32, high: u32) -> u64 {
    ((high as u64) << 32) | low as u64
}

/// Adds to both halves of the pair in `word` at once, each half wrapping on its own (a plain
/// 64-bit add would carry a wrapping low half into the high one). Release: a reader that
/// acquires the new pair sees every update this thread made before. A compare-and-swap loop
/// from [`first_guess`].
fn add_pair(word: &AtomicU64, add_low: u32, add_high: u32) {
    let mut current = first_guess(word);
    loop {
        let next = pair(
            low(current).wrapping_add(add_low),
            high(current).wrapping_add(add_high),
        );
        match word.compare_exchange(current, next, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(actual) => current = actual,
        }
    }
}

/// Where [`add_pair`]'s loop starts. The loop is correct from any guess (the compare-and-swap
/// stores only when the guess is the word's value, and a failure hands back the value), so the
/// guess only decides how many attempts it takes:
///
/// * on the processor, the word as loaded: the first attempt succeeds unless another collection
///   updated the pair in between (measured with callgrind: the constant guess it replaces failed
///   on every collection but the first, a failed `lock cmpxchg` and 8 instructions each time);
/// * in the loom model, a constant: a leading load would hide interleavings from loom (see
///   [`update_watchers`]), and the model checks the loop, which is the same.
#[cfg(not(all(loom_driver, test)))]
fn first_guess(word: &AtomicU64) -> u64 {
    word.load(Ordering::Relaxed)
}

/// Where [`add_pair`]'s loop starts, in the loom model: a constant (see the processor's version).
#[cfg(all(loom_driver, test))]
fn first_guess(_word: &AtomicU64) -> u64 {
    0
}

/// `fetch_update` for the watcher count: stores `f(count)` unless `f` refuses, and returns
/// whether it stored.
///
/// Like [`add_pair`], a compare-and-swap loop whose first access is the compare-and-swap (on a
/// guess) rather than a load: with a leading load, loom 0.7 does not explore the interleavings
/// where another thread's load of the word comes between (the thread's own load replaces the
/// other's as the word's last access; tokio-rs/loom#166, #392), so a model of `fetch_update`
/// would check one interleaving and pass. On the processor both forms are one `lock cmpxchg`
/// per attempt.
fn update_watchers(word: &AtomicU32, guess: u32, f: impl Fn(u32) -> Option<u32>) -> bool {
    let mut current = guess;
    loop {
        let Some(next) = f(current) else {
            return false;
        };
        match word.compare_exchange(current, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(actual) => current = actual,
        }
    }
}

impl CollectStats {
    /// Zeroed statistics, nobody watching.
    #[cfg(not(all(loom_driver, test)))]
    pub const fn new() -> Self {
        Self {
            collections: AtomicU64::new(0),
            returned: AtomicU64::new(0),
            instances: AtomicU64::new(0),
            timing: AtomicU64::new(0),
            loaded_at: AtomicU64::new(0),
            watchers: AtomicU32::new(0),
        }
    }

    /// Zeroed statistics, nobody watching (loom's atomics cannot be made in a constant).
    #[cfg(all(loom_driver, test))]
    pub fn new() -> Self {
        Self {
            collections: AtomicU64::new(0),
            returned: AtomicU64::new(0),
            instances: AtomicU64::new(0),
            timing: AtomicU64::new(0),
            loaded_at: AtomicU64::new(0),
            watchers: AtomicU32::new(0),
        }
    }

    /// Resets everything at load (before the counterset is registered: nothing runs
    /// concurrently); `now` is the performance counter.
    pub fn reset(&self, now: i64) {
        for a in [
            &self.collections,
            &self.returned,
            &self.instances,
            &self.timing,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.watchers.store(0, Ordering::Relaxed);
        self.loaded_at.store(now.unsigned_abs(), Ordering::Relaxed);
    }

    /// A consumer added the statistics' counters (`PcwCallbackAddCounter`). Saturates at
    /// `u32::MAX` instead of wrapping to "nobody".
    pub fn add_watcher(&self) {
        // Guess: the first consumer.
        update_watchers(&self.watchers, 0, |w| w.checked_add(1));
    }

    /// A consumer removed them (`PcwCallbackRemoveCounter`). Returns whether there was a
    /// watcher to remove; an unmatched remove at zero changes nothing (never wraps).
    pub fn remove_watcher(&self) -> bool {
        // Guess: the last consumer.
        update_watchers(&self.watchers, 1, |w| w.checked_sub(1))
    }

    /// Whether a consumer currently has the statistics' counters added: collections starting
    /// now are counted and timed.
    pub fn watched(&self) -> bool {
        self.watchers.load(Ordering::Relaxed) > 0
    }

    /// How many consumers have the counters added.
    pub fn watchers(&self) -> u32 {
        self.watchers.load(Ordering::Relaxed)
    }

    /// Records one collection; `elapsed` is its duration in performance-counter ticks when it
    /// was timed (it started while [`CollectStats::watched`]), else `None`. A negative duration
    /// (a clock that went back) counts as 0, one over `u32::MAX` as `u32::MAX`.
    pub fn record(&self, elapsed: Option<i64>, c: Summary) {
        self.collections.fetch_add(1, Ordering::Relaxed);
        self.returned
            .fetch_add(u64::from(c.returned), Ordering::Relaxed);
        if c.considered == c.returned {
            // Nothing filtered: the high half alone. A plain add suffices (no carry can reach
            // another half), and it is one instruction where the compare-and-swap loop is ten.
            self.instances
                .fetch_add(u64::from(c.considered) << 32, Ordering::Release);
        } else {
            add_pair(
                &self.instances,
                c.considered.saturating_sub(c.returned),
                c.considered,
            );
        }
        if let Some(ticks) = elapsed {
            // PERF_AVERAGE_TIMER is a 32-bit counter: PDH cooks the difference of two samples,
            // so wrapping is harmless as long as less than 2^32 ticks pass between samples.
            add_pair(
                &self.timing,
                u32::try_from(ticks.max(0)).unwrap_or(u32::MAX),
                1,
            );
        }
    }

    /// The statistics now. The pairs are acquired before the counts they bound (see the module
    /// documentation).
    pub fn read(&self) -> Totals {
        let timing = self.timing.load(Ordering::Acquire);
        let instances = self.instances.load(Ordering::Acquire);
        Totals {
            instances_returned: self.returned.load(Ordering::Relaxed),
            collections: self.collections.load(Ordering::Relaxed),
            collect_ticks: low(timing),
            timed_collections: high(timing),
            instances_considered: high(instances),
            instances_filtered: low(instances),
            loaded_at: self.loaded_at.load(Ordering::Relaxed),
        }
    }
}

impl Default for CollectStats {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(loom_driver)))]
mod tests {
    use super::*;

    #[test]
    fn timing_follows_the_watchers_and_unmatched_removes_are_ignored() {
        let s = CollectStats::new();
        assert!(!s.remove_watcher(), "nothing to remove");
        assert_eq!(s.watchers(), 0, "an unmatched remove does not wrap");
        assert!(!s.watched());
        s.add_watcher();
        s.add_watcher();
        assert!(s.remove_watcher());
        assert!(s.watched(), "one consumer still watches");
        assert!(s.remove_watcher());
        assert!(!s.watched());
        s.watchers.store(u32::MAX, Ordering::Relaxed);
        s.add_watcher();
        assert_eq!(
            s.watchers(),
            u32::MAX,
            "saturates instead of wrapping to nobody"
        );
    }

    #[test]
    fn each_half_of_a_pair_wraps_on_its_own() {
        let s = CollectStats::new();
        s.record(Some(i64::from(u32::MAX)), Summary::default());
        s.record(Some(2), Summary::default());
        let t = s.read();
        assert_eq!(t.collect_ticks, 1, "u32::MAX + 2 wraps to 1");
        assert_eq!(
            t.timed_collections, 2,
            "the wrap did not carry into the count"
        );
        s.record(Some(-5), Summary::default());
        s.record(Some(1 << 40), Summary::default());
        let t = s.read();
        assert_eq!(
            t.collect_ticks, 0,
            "a negative duration adds 0, a huge one u32::MAX"
        );
        assert_eq!((t.timed_collections, t.collections), (4, 4));
    }

    #[test]
    fn the_instance_pair_wraps_each_half_on_its_own() {
        let s = CollectStats::new();
        let all = |n| Summary {
            considered: n,
            returned: n,
        };
        // Nothing filtered: the considered half alone, whose carry falls off the word.
        s.record(None, all(u32::MAX));
        s.record(None, all(3));
        let t = s.read();
        assert_eq!(
            (t.instances_considered, t.instances_filtered),
            (2, 0),
            "u32::MAX + 3 wraps to 2 and leaves the filtered half alone"
        );
        // Some filtered: both halves, the filtered one wrapping without a carry.
        s.record(
            None,
            Summary {
                considered: u32::MAX,
                returned: 0,
            },
        );
        s.record(
            None,
            Summary {
                considered: 2,
                returned: 0,
            },
        );
        let t = s.read();
        assert_eq!(
            (t.instances_considered, t.instances_filtered),
            (3, 1),
            "2 + u32::MAX + 2 = 3 and u32::MAX + 2 = 1: no carry from one half into the other"
        );
        assert_eq!(t.instances_returned, u64::from(u32::MAX) + 3);
    }

    #[test]
    fn record_and_read() {
        let s = CollectStats::new();
        s.reset(-7);
        s.record(
            None,
            Summary {
                returned: 1,
                considered: 3,
            },
        );
        s.record(
            Some(10),
            Summary {
                returned: 2,
                considered: 2,
            },
        );
        assert_eq!(
            s.read(),
            Totals {
                collections: 2,
                instances_returned: 3,
                collect_ticks: 10,
                timed_collections: 1,
                instances_filtered: 2,
                instances_considered: 5,
                loaded_at: 7,
            }
        );
        s.reset(1);
        assert_eq!(
            s.read(),
            Totals {
                loaded_at: 1,
                ..Totals::default()
            }
        );
    }
}

/// The loom model of the AddCounter/RemoveCounter gating and of the statistics' readers
/// (`scripts/loom.sh`): every interleaving, up to loom's preemption bound, of consumers adding
/// and removing the counters, collections (timed as the driver's callback times them: decided
/// by [`CollectStats::watched`] when the collection starts) and readers. Each model also
/// collects what its racing threads observed across all interleavings and asserts that every
/// possible outcome was reached, so a model cannot pass by exploring too little (loom 0.7
/// skips interleavings of some access patterns, see [`update_watchers`]).
#[cfg(all(test, loom_driver))]
mod loom_model {
    extern crate std;

    use super::*;
    use loom::sync::Arc;
    use loom::thread;
    use std::collections::BTreeSet;
    use std::fmt::Debug;

    /// Runs `f` in every interleaving and returns the outcomes it returned.
    fn explore<T: Ord + Clone + Debug + Send + 'static>(
        f: impl Fn() -> T + Sync + Send + 'static,
    ) -> BTreeSet<T> {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
        let sink = std::sync::Arc::clone(&seen);
        loom::model(move || {
            let outcome = f();
            sink.lock().expect("outcomes").insert(outcome);
        });
        seen.lock().expect("outcomes").clone()
    }

    /// One collection as the waves' publisher (`stats::timed`) makes it: counted and timed if
    /// watched when it starts, taking `ticks`. Returns whether it was.
    fn collect(s: &CollectStats, considered: u32, returned: u32, ticks: i64) -> bool {
        let timed = s.watched();
        if timed {
            s.record(
                Some(ticks),
                Summary {
                    returned,
                    considered,
                },
            );
        }
        timed
    }

    /// What every reader may rely on; collections in these models take distinct powers of two
    /// of ticks, so the tick total names the timed collections and must count exactly
    /// `timed_collections` of them.
    fn consistent(t: Totals) -> Totals {
        assert!(u64::from(t.timed_collections) <= t.collections, "{t:?}");
        assert!(t.instances_filtered <= t.instances_considered, "{t:?}");
        assert!(
            u64::from(t.instances_considered - t.instances_filtered) <= t.instances_returned,
            "{t:?}"
        );
        assert_eq!(t.collect_ticks.count_ones(), t.timed_collections, "{t:?}");
        t
    }

    #[test]
    fn loom_a_consumer_that_added_is_timed_while_another_removes() {
        let seen = explore(|| {
            let s = Arc::new(CollectStats::new());
            s.add_watcher(); // consumer 1
            let first = {
                let s = Arc::clone(&s);
                thread::spawn(move || assert!(s.remove_watcher(), "consumer 1 was watching"))
            };
            // Consumer 2 adds, then collects: its collection is timed whatever consumer 1 does.
            s.add_watcher();
            let watchers = s.watchers();
            assert!(collect(&s, 3, 1, 1), "added, so timed");
            first.join().expect("consumer 1");
            assert_eq!(s.watchers(), 1, "consumer 2 still watches");
            assert!(s.remove_watcher());
            assert!(!collect(&s, 3, 1, 2), "nobody watches: not counted");
            let t = consistent(s.read());
            assert_eq!(
                (t.collections, t.timed_collections, t.collect_ticks),
                (1, 1, 1)
            );
            watchers
        });
        assert_eq!(
            seen,
            [1, 2].into(),
            "consumer 1 removed before or after the add"
        );
    }

    #[test]
    fn loom_unmatched_removes_never_wrap_the_watchers() {
        let seen = explore(|| {
            let s = Arc::new(CollectStats::new());
            s.add_watcher();
            let other = {
                let s = Arc::clone(&s);
                thread::spawn(move || s.remove_watcher())
            };
            let mine = s.remove_watcher();
            let theirs = other.join().expect("remover");
            assert!(mine ^ theirs, "exactly one remove matched the add");
            assert_eq!(s.watchers(), 0, "the unmatched one did not wrap");
            assert!(!collect(&s, 1, 1, 1), "nobody watches: not timed");
            s.add_watcher();
            assert!(s.remove_watcher());
            assert!(
                !s.watched(),
                "a later add/remove pair leaves nobody watching"
            );
            mine
        });
        assert_eq!(seen, [false, true].into(), "either remove came first");
    }

    #[test]
    fn loom_a_collection_racing_add_counter_is_timed_wholly_or_not_at_all() {
        let seen = explore(|| {
            let s = Arc::new(CollectStats::new());
            let adder = {
                let s = Arc::clone(&s);
                thread::spawn(move || s.add_watcher())
            };
            let timed = collect(&s, 2, 1, 1);
            let seen = consistent(s.read());
            assert_eq!(seen.timed_collections, u32::from(timed));
            adder.join().expect("adder");
            assert!(collect(&s, 2, 1, 2), "after the add returned: timed");
            let t = consistent(s.read());
            assert_eq!(t.timed_collections, 1 + u32::from(timed));
            timed
        });
        assert_eq!(seen, [false, true].into(), "the add came before or after");
    }

    #[test]
    fn loom_readers_see_whole_collections() {
        let seen = explore(|| {
            let s = Arc::new(CollectStats::new());
            s.add_watcher();
            let collectors: [_; 2] = [(1, 1, 1), (2, 0, 2)].map(|(considered, returned, ticks)| {
                let s = Arc::clone(&s);
                thread::spawn(move || assert!(collect(&s, considered, returned, ticks)))
            });
            let first = consistent(s.read());
            // Collection k takes k ticks and considers k instances: bit sets of collections.
            assert_eq!(
                first.collect_ticks & !first.instances_considered,
                0,
                "a collection seen timed is seen in the instance pair too: {first:?}"
            );
            let second = consistent(s.read());
            assert!(
                second.collections >= first.collections,
                "counts never go back"
            );
            assert!(second.timed_collections >= first.timed_collections);
            for c in collectors {
                c.join().expect("collector");
            }
            let t = consistent(s.read());
            assert_eq!(
                (
                    t.collections,
                    t.timed_collections,
                    t.collect_ticks,
                    t.instances_considered,
                    t.instances_filtered,
                    t.instances_returned
                ),
                (2, 2, 3, 3, 2, 1)
            );
            (first.collect_ticks, first.instances_considered)
        });
        // Every subset of the collections in the timing pair, with every superset of it in the
        // instance pair (the pairs are read in that order).
        let expected: BTreeSet<(u32, u32)> = (0..4)
            .flat_map(|t| (0..4).filter(move |c| t & !c == 0).map(move |c| (t, c)))
            .collect();
        assert_eq!(expected.len(), 9);
        assert_eq!(seen, expected);
    }
}
