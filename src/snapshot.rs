// SPDX-License-Identifier: MIT OR Apache-2.0
//! What `IOCTL_PCW_SNAPSHOT` returns: every counterset's instances and raw values at one
//! instant, in pcw-core's snapshot format, for the V1 DLL. The values are exactly those the
//! `PCW_CALLBACK`s hand PCW at the same instant (same code paths: [`waves::values`],
//! [`STATS`]`.snapshot()`, the queues' counter blocks). Sets are numbered by their position in
//! the manifest; values are in descriptor (manifest) order. No allocation, no panic.

use core::sync::atomic::Ordering;

use pcw_core::snapshot::{PARENT_NONE, Record, SnapshotError, SnapshotHeader, SnapshotWriter};

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

/// A descriptor count as the snapshot's `u16` (the manifest compiler keeps it far below).
fn counters(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn fill(w: &mut SnapshotWriter<'_>, now: i64) -> Result<(), SnapshotError> {
    waves::REGISTRY.read(|view| {
        let count = u32::try_from(view.len()).unwrap_or(u32::MAX);
        w.begin_set(
            SET_WAVES,
            true,
            counters(geometric_waves::DESCRIPTORS.len()),
            count,
        )?;
        w.instances(view.iter().map(|e| {
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
    w.begin_set(
        SET_STATISTICS,
        false,
        counters(provider_statistics::DESCRIPTORS.len()),
        1,
    )?;
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
        w.begin_set(
            SET_QUEUES,
            true,
            counters(dynamic_queues::DESCRIPTORS.len()),
            count,
        )?;
        w.instances(view.iter().map(|e| {
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
