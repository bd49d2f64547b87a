// SPDX-License-Identifier: MIT OR Apache-2.0
//! A value behind the driver's registry lock, for the few globals a driver must keep between
//! `DriverEntry`, its callbacks and `DriverUnload` (no allocation, no panic).

use core::cell::UnsafeCell;

use pcw_core::registry::RawRwLock;

use crate::ffi::RegistryLock;

/// `T` guarded by a [`RegistryLock`].
pub(crate) struct Global<T> {
    lock: RegistryLock,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through `read` (shared lock) and `write` (exclusive lock).
unsafe impl<T: Send + Sync> Sync for Global<T> {}

impl<T> Global<T> {
    /// A global holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self {
            lock: RegistryLock::INIT,
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value under the shared lock.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.lock.lock_shared();
        // SAFETY: the shared lock is held until after `f` returns; writers need it exclusive.
        let r = f(unsafe { &*self.value.get() });
        // SAFETY: taken shared just above.
        unsafe { self.lock.unlock_shared() };
        r
    }

    /// Runs `f` on the value under the exclusive lock.
    pub(crate) fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.lock.lock_exclusive();
        // SAFETY: the exclusive lock is held until after `f` returns; no other reference exists.
        let r = f(unsafe { &mut *self.value.get() });
        // SAFETY: taken exclusively just above.
        unsafe { self.lock.unlock_exclusive() };
        r
    }
}
