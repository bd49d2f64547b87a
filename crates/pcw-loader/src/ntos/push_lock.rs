// SPDX-License-Identifier: MIT OR Apache-2.0
//! Critical regions and push locks: `KeEnterCriticalRegion`, `KeLeaveCriticalRegion` and the
//! four `Ex…PushLock…Ex` routines, each acquire and release checked to be inside a critical
//! region.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::state::{enter, violation};

std::thread_local! {
    /// `KeEnterCriticalRegion` depth of this thread.
    static CRITICAL: Cell<u32> = const { Cell::new(0) };
}

pub(super) unsafe extern "win64" fn ke_enter_critical_region() {
    CRITICAL.with(|c| c.set(c.get() + 1));
}

pub(super) unsafe extern "win64" fn ke_leave_critical_region() {
    let depth = CRITICAL.with(Cell::get);
    if depth == 0 {
        violation(
            "KeLeaveCriticalRegion",
            "left a critical region that was not entered",
        );
        return;
    }
    CRITICAL.with(|c| c.set(depth - 1));
}

/// Exclusive owner bit of a push lock word; shared holders count in the bits above it.
const EXCLUSIVE: usize = 1;
const SHARED_ONE: usize = 2;

fn push_lock_word<'a>(routine: &'static str, lock: *mut usize) -> Option<&'a AtomicUsize> {
    if CRITICAL.with(Cell::get) == 0 {
        violation(
            routine,
            "push lock used outside a critical region (normal kernel APCs enabled)",
        );
    }
    if lock.is_null() || !(lock as usize).is_multiple_of(align_of::<usize>()) {
        violation(
            routine,
            format!("push lock at {lock:p} is NULL or misaligned"),
        );
        return None;
    }
    // SAFETY: a non-NULL, aligned pointer to the image's push lock word, which only these
    // routines touch (atomically) from now on.
    Some(unsafe { AtomicUsize::from_ptr(lock) })
}

pub(super) unsafe extern "win64" fn ex_acquire_push_lock_exclusive_ex(
    lock: *mut usize,
    _flags: u32,
) {
    enter("ExAcquirePushLockExclusiveEx");
    let Some(word) = push_lock_word("ExAcquirePushLockExclusiveEx", lock) else {
        return;
    };
    while word
        .compare_exchange_weak(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
}

pub(super) unsafe extern "win64" fn ex_release_push_lock_exclusive_ex(
    lock: *mut usize,
    _flags: u32,
) {
    enter("ExReleasePushLockExclusiveEx");
    let Some(word) = push_lock_word("ExReleasePushLockExclusiveEx", lock) else {
        return;
    };
    if word
        .compare_exchange(EXCLUSIVE, 0, Ordering::Release, Ordering::Relaxed)
        .is_err()
    {
        violation(
            "ExReleasePushLockExclusiveEx",
            "released a push lock not held exclusively",
        );
    }
}

pub(super) unsafe extern "win64" fn ex_acquire_push_lock_shared_ex(lock: *mut usize, _flags: u32) {
    enter("ExAcquirePushLockSharedEx");
    let Some(word) = push_lock_word("ExAcquirePushLockSharedEx", lock) else {
        return;
    };
    loop {
        let v = word.load(Ordering::Relaxed);
        if v & EXCLUSIVE == 0
            && word
                .compare_exchange_weak(v, v + SHARED_ONE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
        std::thread::yield_now();
    }
}

pub(super) unsafe extern "win64" fn ex_release_push_lock_shared_ex(lock: *mut usize, _flags: u32) {
    enter("ExReleasePushLockSharedEx");
    let Some(word) = push_lock_word("ExReleasePushLockSharedEx", lock) else {
        return;
    };
    let released = word.fetch_update(Ordering::Release, Ordering::Relaxed, |v| {
        (v & EXCLUSIVE == 0 && v >= SHARED_ONE).then(|| v - SHARED_ONE)
    });
    if released.is_err() {
        violation(
            "ExReleasePushLockSharedEx",
            "released a push lock not held shared",
        );
    }
}
