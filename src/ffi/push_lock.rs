// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel push lock behind the driver's instance registries on Windows, over the facade's
//! push-lock routines.

use core::cell::UnsafeCell;

use pcw_core::registry::RawRwLock;

use super::{
    acquire_push_lock_exclusive, acquire_push_lock_shared, enter_critical_region,
    leave_critical_region, release_push_lock_exclusive, release_push_lock_shared,
};

/// An `EX_PUSH_LOCK`: shared/exclusive, taken with normal kernel APCs disabled, as the push
/// lock routines require.
#[derive(Debug)]
pub struct PushLock {
    lock: UnsafeCell<usize>,
}

// SAFETY: the push lock word is only ever touched by the kernel's push lock routines, which are
// safe to call from any thread at IRQL <= APC_LEVEL.
unsafe impl Sync for PushLock {}
// SAFETY: as above; the word carries no thread affinity.
unsafe impl Send for PushLock {}

// SAFETY: `ExAcquirePushLock{Shared,Exclusive}Ex` provide the reader/writer exclusion the trait
// requires.
unsafe impl RawRwLock for PushLock {
    // An initialised push lock is zero (`ExInitializePushLock`).
    const INIT: Self = Self {
        lock: UnsafeCell::new(0),
    };

    fn lock_shared(&self) {
        enter_critical_region();
        // SAFETY: a valid push lock word; APCs are disabled just above.
        unsafe { acquire_push_lock_shared(self.lock.get()) };
    }

    unsafe fn unlock_shared(&self) {
        // SAFETY: held shared by this thread (caller's contract).
        unsafe { release_push_lock_shared(self.lock.get()) };
        // SAFETY: pairs with the enter_critical_region of `lock_shared`.
        unsafe { leave_critical_region() };
    }

    fn lock_exclusive(&self) {
        enter_critical_region();
        // SAFETY: a valid push lock word; APCs are disabled just above.
        unsafe { acquire_push_lock_exclusive(self.lock.get()) };
    }

    unsafe fn unlock_exclusive(&self) {
        // SAFETY: held exclusively by this thread (caller's contract).
        unsafe { release_push_lock_exclusive(self.lock.get()) };
        // SAFETY: pairs with the enter_critical_region of `lock_exclusive`.
        unsafe { leave_critical_region() };
    }
}
