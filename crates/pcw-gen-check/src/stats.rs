// SPDX-License-Identifier: MIT OR Apache-2.0
//! User-owned value blocks bound with `Config::bind_struct`: atomics in an order unlike the
//! manifest's, so the descriptors can only be right if offsets come from the type.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Bound to `FabQueue.QueueData`.
#[repr(C)]
#[derive(Debug, Default)]
pub struct QueueStats {
    /// `Completed`.
    pub completed: AtomicU64,
    /// `BytesTotal`.
    pub bytes_total: AtomicU64,
    /// Not a counter.
    pub private_state: AtomicU32,
    /// `Depth`.
    pub depth: AtomicU32,
    /// `CreatedAt`.
    pub created_at: AtomicU64,
    /// `Now`.
    pub now: AtomicU64,
    /// `Frequency`.
    pub frequency: AtomicU64,
    /// `Interrupts`.
    pub interrupts: AtomicU32,
    /// `WaitTicks`.
    pub wait_ticks: AtomicU32,
    /// `WaitCount`.
    pub wait_count: AtomicU32,
    /// `FullSamples`.
    pub full_samples: AtomicU32,
    /// `Samples`.
    pub samples: AtomicU32,
}

impl QueueStats {
    /// The value of the field a manifest `field` names.
    pub fn value_of(&self, field: &str) -> Option<u64> {
        let v = match field {
            "Completed" => self.completed.load(Ordering::Relaxed),
            "BytesTotal" => self.bytes_total.load(Ordering::Relaxed),
            "Depth" => u64::from(self.depth.load(Ordering::Relaxed)),
            "CreatedAt" => self.created_at.load(Ordering::Relaxed),
            "Now" => self.now.load(Ordering::Relaxed),
            "Frequency" => self.frequency.load(Ordering::Relaxed),
            "Interrupts" => u64::from(self.interrupts.load(Ordering::Relaxed)),
            "WaitTicks" => u64::from(self.wait_ticks.load(Ordering::Relaxed)),
            "WaitCount" => u64::from(self.wait_count.load(Ordering::Relaxed)),
            "FullSamples" => u64::from(self.full_samples.load(Ordering::Relaxed)),
            "Samples" => u64::from(self.samples.load(Ordering::Relaxed)),
            _ => return None,
        };
        Some(v)
    }
}

/// Bound to `FabDriver` (the counterset's implicit struct).
#[repr(C)]
#[derive(Debug, Default)]
pub struct DriverStats {
    /// `Flags`.
    pub flags: AtomicU32,
    /// `Queues`.
    pub queues: AtomicU32,
}
