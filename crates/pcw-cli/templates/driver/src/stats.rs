//! What the control device counts: the requests it received, by kind. Relaxed atomics: each
//! value is exact on its own.

use core::sync::atomic::{AtomicU64, Ordering};

/// Request counts of one kind.
#[derive(Debug)]
pub struct Count(AtomicU64);

impl Count {
    const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// The count.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// One more.
    pub fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Back to zero.
    pub fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// `IRP_MJ_CREATE` requests.
pub static CREATES: Count = Count::new();
/// `IRP_MJ_CLOSE` requests.
pub static CLOSES: Count = Count::new();
/// `IRP_MJ_DEVICE_CONTROL` requests.
pub static DEVICE_CONTROLS: Count = Count::new();

/// Every count back to zero (at load).
pub fn reset() {
    for count in [&CREATES, &CLOSES, &DEVICE_CONTROLS] {
        count.reset();
    }
}
