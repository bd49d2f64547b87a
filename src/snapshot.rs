// SPDX-License-Identifier: MIT OR Apache-2.0
//! What `IOCTL_PCW_SNAPSHOT` returns: every counterset's instances and raw values at one
//! instant, in pcw-core's snapshot format, for the V1 DLL. The values are exactly those the
//! `PCW_CALLBACK`s hand PCW at the same instant (same code paths: [`waves::values`],
//! [`STATS`]`.snapshot()`, the queues' counter blocks). Sets are numbered by their position in
//! the manifest; values are in descriptor (manifest) order. No allocation, no panic.

use core::sync::atomic::Ordering;

use pcw_core::snapshot::{
    CounterSizes, PARENT_NONE, Record, SnapshotError, SnapshotHeader, SnapshotWriter,
};

use crate::countersets::pcw_driver::{dynamic_queues, geometric_waves, provider_statistics};
use crate::ffi;
use crate::stats::STATS;
use crate::{queues, waves};

/// Manifest position of "Geometric Waves".
pub const SET_WAVES: u16 = 0;
/// Manifest position of "PCW Provider Statistics".
pub const SET_STATISTICS: u16 = 1;
/// Manifest position of "PCW Dynamic Queues".
pub const SET_QUEUES: u16 = 2;

/// Writes a snapshot into `out` and returns the bytes written, every one initialised.
///
/// # Errors
/// The bytes needed when `out` is too small (0 for a snapshot the format cannot hold).
// An entry point the no-panic check roots at (`pcw-pecheck no-panic`): kept a function of
// its own in the image so the check can find it.
#[inline(never)]
pub fn write(out: &mut [u8]) -> Result<usize, usize> {
    let (perf_time, perf_freq) = ffi::perf_counter();
    let now = ffi::system_time();
    let mut w = SnapshotWriter::new(
        out,
        SnapshotHeader {
            perf_time,
            perf_freq,
            system_time: now,
        },
    );
    let filled = fill(&mut w, now);
    let result = filled.and_then(|()| w.finish());
    match result {
        Ok(n) => Ok(n),
        Err(SnapshotError::NoSpace { needed }) => Err(needed),
        Err(_) => Err(0),
    }
}

/// Each descriptor's `Size`, in descriptor order, as the snapshot's counter sizes: the layout
/// of the V1 counter blocks the DLL copies (it checks the sizes against its own definitions).
/// A size the format does not know becomes one the writer refuses, and the build fails on it
/// below.
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time, where an index out of range fails the build"
)]
const fn sizes<const N: usize>(descriptors: &[pcw_rt::PCW_COUNTER_DESCRIPTOR; N]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = match descriptors[i].Size {
            0 => 0,
            4 => 4,
            8 => 8,
            _ => u8::MAX,
        };
        i += 1;
    }
    out
}

/// Whether every size is one the snapshot format knows.
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time, where an index out of range fails the build"
)]
const fn known(sizes: &[u8]) -> bool {
    let mut i = 0;
    while i < sizes.len() {
        if sizes[i] == u8::MAX {
            return false;
        }
        i += 1;
    }
    true
}

/// The counter sizes of "Geometric Waves".
struct WavesSizes;
impl CounterSizes<{ geometric_waves::DESCRIPTORS.len() }> for WavesSizes {
    const SIZES: [u8; geometric_waves::DESCRIPTORS.len()] = sizes(&geometric_waves::DESCRIPTORS);
}
/// The counter sizes of "PCW Dynamic Queues".
struct QueuesSizes;
impl CounterSizes<{ dynamic_queues::DESCRIPTORS.len() }> for QueuesSizes {
    const SIZES: [u8; dynamic_queues::DESCRIPTORS.len()] = sizes(&dynamic_queues::DESCRIPTORS);
}
/// The counter sizes of "PCW Provider Statistics" (written one instance at a time).
const STATISTICS_SIZES: [u8; provider_statistics::DESCRIPTORS.len()] =
    sizes(&provider_statistics::DESCRIPTORS);
const _: () =
    assert!(known(&WavesSizes::SIZES) && known(&STATISTICS_SIZES) && known(&QueuesSizes::SIZES));

fn fill(w: &mut SnapshotWriter<'_>, now: i64) -> Result<(), SnapshotError> {
    waves::REGISTRY.read(|view| {
        let count = u32::try_from(view.len()).unwrap_or(u32::MAX);
        w.begin_set(SET_WAVES, true, &WavesSizes::SIZES, count)?;
        w.instances::<WavesSizes, _, _>(view.iter().map(|e| {
            let v = waves::values(*e.value(), now, u64::MAX);
            Record {
                id: e.id(),
                parent: PARENT_NONE,
                name: e.name(),
                values: [u64::from(v.triangle), u64::from(v.square)],
            }
        }))
    })?;
    let s = STATS.snapshot();
    w.begin_set(SET_STATISTICS, false, &STATISTICS_SIZES, 1)?;
    w.instance(
        0,
        PARENT_NONE,
        &[],
        &[
            s.collections,
            s.instances_returned,
            u64::from(s.collect_ticks),
            u64::from(s.timed_collections),
            u64::from(s.instances_filtered),
            u64::from(s.instances_considered),
            s.loaded_at,
            s.now,
            s.frequency,
        ],
    )?;
    queues::REGISTRY.read(|view| {
        let count = u32::try_from(view.len()).unwrap_or(u32::MAX);
        w.begin_set(SET_QUEUES, true, &QueuesSizes::SIZES, count)?;
        w.instances::<QueuesSizes, _, _>(view.iter().map(|e| {
            let c = e.value().counters();
            Record {
                id: e.id(),
                parent: PARENT_NONE,
                name: e.name(),
                values: [
                    c.packets.load(Ordering::Relaxed),
                    c.bytes.load(Ordering::Relaxed),
                    u64::from(c.depth.load(Ordering::Relaxed)),
                ],
            }
        }))
    })
}
