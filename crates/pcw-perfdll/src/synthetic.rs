// SPDX-License-Identifier: MIT OR Apache-2.0
//! `source=synthetic`: deterministic data for every counterset of the
//! driver's manifest, encoded as a driver snapshot so it takes the same path to V1 as the
//! device's data.
//!
//! * **Geometric Waves** (multi): the driver's three waves — `Small Wave` 40 + 20, `Medium Wave`
//!   30 + 40, `Large Wave` 20 + 60 (minimum + amplitude), ids 0, 1, 2 — with the driver's
//!   formulas over a ten-second period: at second `s = (t / 10⁷) mod 10`, `Triangle = min +
//!   amp·|5 − s| / 5`, `Square = min + (s < 5 ? amp : 0)`.
//! * **PCW Provider Statistics** (single), after `n` collections: `Collections = n`,
//!   `InstancesReturned = InstancesConsidered = 3n`, `CollectTicks = 1000n`,
//!   `TimedCollections = n`, `InstancesFiltered = 0`, `LoadedAt` = the clock at Open, `Now` =
//!   the clock, `Frequency` = 10⁷ (the clock is in 100 ns units and serves as `PerfTime`).
//! * **PCW Dynamic Queues** (multi): `Queue A` (id 0) and `Queue B` (id 1); at whole second
//!   `S = t / 10⁷`, `Packets = 100·S·(q+1)`, `Bytes = 512·Packets`, `Depth = (S + q) mod 8`.
//!
//! Counters are found by the manifest's set symbol and field name; a counter the manifest adds
//! later reads 0. The clock is the system clock, or fixed (`clock=`, advancing by
//! `clock-step=` per collection) so tests can predict every value.

use pcw_core::snapshot::{PARENT_NONE, SnapshotError, SnapshotHeader, SnapshotWriter};

use crate::tables::{OBJECTS, ObjectTable};

/// `PerfFreq` of the synthetic clock: 100 ns units.
pub const FREQUENCY: i64 = 10_000_000;

/// Most counters one synthetic set may have (the manifest's have at most 9).
const MAX_COUNTERS: usize = 64;

/// The driver's waves (`src/waves.rs`): name, minimum, amplitude.
pub const WAVES: [(&str, u64, u64); 3] = [
    ("Small Wave", 40, 20),
    ("Medium Wave", 30, 40),
    ("Large Wave", 20, 60),
];

/// The synthetic queues.
pub const QUEUES: [&str; 2] = ["Queue A", "Queue B"];

/// `s` (ASCII) as UTF-16, at compile time: the instance names need no allocation at Open.
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time only (`utf16!`), where a bad index fails the build; the loop bounds both"
)]
const fn ascii_utf16<const N: usize>(s: &str) -> [u16; N] {
    let bytes = s.as_bytes();
    let mut out = [0u16; N];
    let mut i = 0;
    while i < N && i < bytes.len() {
        assert!(bytes[i].is_ascii(), "instance names are ASCII");
        out[i] = bytes[i] as u16;
        i += 1;
    }
    out
}

/// A `&'static [u16]` of an ASCII string constant.
macro_rules! utf16 {
    ($s:expr) => {{
        const UNITS: [u16; $s.len()] = ascii_utf16($s);
        &UNITS
    }};
}

/// [`WAVES`]' names as UTF-16.
static WAVE_NAMES: [&[u16]; 3] = [utf16!(WAVES[0].0), utf16!(WAVES[1].0), utf16!(WAVES[2].0)];
/// [`QUEUES`] as UTF-16.
static QUEUE_NAMES: [&[u16]; 2] = [utf16!(QUEUES[0]), utf16!(QUEUES[1])];

/// Where the time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The system clock (100 ns since 1601).
    System,
    /// A fixed time, advanced by `step` after each collection.
    Fixed {
        /// The next collection's time.
        now: i64,
        /// Advance per collection.
        step: i64,
    },
}

/// The synthetic data's state.
#[derive(Debug)]
pub struct Synthetic {
    clock: Clock,
    now: i64,
    loaded_at: i64,
    collections: u64,
}

fn system_now() -> i64 {
    // 100 ns units between 1601-01-01 and 1970-01-01.
    const EPOCH_DIFF: i64 = 116_444_736_000_000_000;
    let since_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos() / 100).unwrap_or(i64::MAX));
    since_unix.saturating_add(EPOCH_DIFF)
}

impl Synthetic {
    /// Synthetic data on `clock`; `LoadedAt` is the clock now.
    pub fn new(clock: Clock) -> Self {
        let now = match clock {
            Clock::System => system_now(),
            Clock::Fixed { now, .. } => now,
        };
        Self {
            clock,
            now,
            loaded_at: now,
            collections: 0,
        }
    }

    /// Moves to the next collection: reads the clock, counts the collection.
    pub fn tick(&mut self) {
        self.now = match &mut self.clock {
            Clock::System => system_now(),
            Clock::Fixed { now, step } => {
                let t = *now;
                *now = now.saturating_add(*step);
                t
            }
        };
        self.collections = self.collections.saturating_add(1);
    }

    /// The time of the current collection (100 ns units).
    pub const fn now(&self) -> i64 {
        self.now
    }

    fn names(table: &ObjectTable) -> &'static [&'static [u16]] {
        match table.symbol {
            "GeometricWaves" => &WAVE_NAMES,
            "DynamicQueues" => &QUEUE_NAMES,
            _ => &[],
        }
    }

    /// The raw value of `field` of set `table` for instance `instance`.
    pub fn value(&self, table: &ObjectTable, field: &str, instance: usize) -> u64 {
        let t = u64::try_from(self.now).unwrap_or(0);
        let seconds = t / 10_000_000;
        let n = self.collections;
        let q = instance as u64;
        match (table.symbol, field) {
            ("GeometricWaves", _) => {
                let Some(&(_, min, amp)) = WAVES.get(instance) else {
                    return 0;
                };
                let s = seconds % 10;
                match field {
                    "Triangle" => min + amp * 5u64.abs_diff(s) / 5,
                    "Square" => min + if s < 5 { amp } else { 0 },
                    _ => 0,
                }
            }
            ("ProviderStatistics", "Collections" | "TimedCollections") => n,
            ("ProviderStatistics", "InstancesReturned" | "InstancesConsidered") => 3 * n,
            ("ProviderStatistics", "CollectTicks") => 1000 * n,
            ("ProviderStatistics", "LoadedAt") => u64::try_from(self.loaded_at).unwrap_or(0),
            ("ProviderStatistics", "Now") => t,
            ("ProviderStatistics", "Frequency") => FREQUENCY.unsigned_abs(),
            ("DynamicQueues", "Packets") => 100 * seconds * (q + 1),
            ("DynamicQueues", "Bytes") => 512 * 100 * seconds * (q + 1),
            ("DynamicQueues", "Depth") => (seconds + q) % 8,
            _ => 0,
        }
    }

    /// Encodes the current collection's snapshot into `buf`.
    ///
    /// # Errors
    /// `NoSpace` with the size needed; a writer error for a manifest beyond the synthetic
    /// source's limits.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, SnapshotError> {
        let mut w = SnapshotWriter::new(
            buf,
            SnapshotHeader {
                perf_time: self.now,
                perf_freq: FREQUENCY,
                system_time: self.now,
            },
        );
        let too_many = SnapshotError::LimitExceeded { offset: 0 };
        for (index, table) in OBJECTS.iter().enumerate() {
            let index = u16::try_from(index).map_err(|_| too_many)?;
            let counters = table.counters.len();
            // The counter blocks laid out as the tables' sizes say (a size the format does
            // not know is refused by the writer).
            let mut sizes = [0u8; MAX_COUNTERS];
            for (size, c) in sizes.iter_mut().zip(table.counters) {
                *size = u8::try_from(c.size).unwrap_or(u8::MAX);
            }
            let sizes = sizes.get(..counters).ok_or(too_many)?;
            let names = Self::names(table);
            let instances = if table.has_instances { names.len() } else { 1 };
            let count = u32::try_from(instances).map_err(|_| too_many)?;
            w.begin_set(index, table.has_instances, sizes, count)?;
            let mut values = [0u64; MAX_COUNTERS];
            let values = values.get_mut(..counters).ok_or(too_many)?;
            for i in 0..instances {
                for (slot, c) in values.iter_mut().zip(table.counters) {
                    *slot = self.value(table, c.field, i);
                }
                let name = names.get(i).copied().unwrap_or_default();
                let id = u32::try_from(i).map_err(|_| too_many)?;
                w.instance(id, PARENT_NONE, name, values)?;
            }
        }
        w.finish()
    }
}
