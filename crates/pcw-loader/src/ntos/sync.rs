// SPDX-License-Identifier: MIT OR Apache-2.0
//! IRQL, spin locks and events: the synchronisation a counters driver does around its values.
//!
//! IRQL is kept per thread ([`super::irql`]); the image's own CR8 reads and writes (the headers'
//! inline `KeGetCurrentIrql`, `KeRaiseIrql`, `KeLowerIrql`) reach the same value through the
//! instruction emulation. A spin lock is the image's own `KSPIN_LOCK` word, taken atomically;
//! the loader also records which thread holds it, so that a recursive acquire (a deadlock on
//! Windows) or a release by a thread that does not hold it is reported instead of hanging. An
//! event is the image's `KEVENT` at the WDK's offsets (`Header.Type` at 0, `Header.Size` at 2,
//! `Header.SignalState` at 4, `Header.WaitListHead` at 8), waited on by polling its signal
//! state. Timers, DPCs, mutexes and semaphores are not emulated: a counters driver needs none.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::irql::{self, APC_LEVEL, DISPATCH_LEVEL, HIGH_LEVEL, PASSIVE_LEVEL};
use super::state::{NtStatus, STATUS_SUCCESS, enter, violation, with};
use crate::layout::{Fields, kevent, lock_queue_handle as lqh};

/// `STATUS_TIMEOUT`.
const STATUS_TIMEOUT: NtStatus = 0x0000_0102;
/// How long a wait with no timeout may last before the loader calls it a hang.
const HANG: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// IRQL.

/// Raises this thread's IRQL to `new` for `routine`, returning the old one.
fn raise(routine: &'static str, new: u8) -> u8 {
    let old = irql::current();
    if new < old {
        violation(
            routine,
            format!(
                "raised to {} from the higher {}",
                irql::name(new),
                irql::name(old)
            ),
        );
    }
    irql::set(new.min(HIGH_LEVEL));
    old
}

/// Lowers this thread's IRQL to `new` for `routine`.
fn lower(routine: &'static str, new: u8) {
    let old = irql::current();
    if new > old {
        violation(
            routine,
            format!(
                "lowered to {} from the lower {}",
                irql::name(new),
                irql::name(old)
            ),
        );
    }
    if new < DISPATCH_LEVEL && irql::spin_locks_held() > 0 {
        violation(
            routine,
            format!(
                "lowered to {} while holding {} spin lock(s)",
                irql::name(new),
                irql::spin_locks_held()
            ),
        );
    }
    irql::set(new.min(HIGH_LEVEL));
}

pub(super) unsafe extern "win64" fn ke_get_current_irql() -> u8 {
    enter("KeGetCurrentIrql");
    irql::current()
}

pub(super) unsafe extern "win64" fn kf_raise_irql(new: u8) -> u8 {
    enter("KfRaiseIrql");
    raise("KfRaiseIrql", new)
}

pub(super) unsafe extern "win64" fn ke_raise_irql_to_dpc_level() -> u8 {
    enter("KeRaiseIrqlToDpcLevel");
    raise("KeRaiseIrqlToDpcLevel", DISPATCH_LEVEL)
}

pub(super) unsafe extern "win64" fn ke_lower_irql(new: u8) {
    enter("KeLowerIrql");
    lower("KeLowerIrql", new);
}

// ---------------------------------------------------------------------------------------------
// Spin locks.

/// The image's lock word, if it is usable.
fn lock_word<'a>(routine: &'static str, lock: *mut usize) -> Option<&'a AtomicUsize> {
    if lock.is_null() || !(lock as usize).is_multiple_of(align_of::<usize>()) {
        violation(
            routine,
            format!("spin lock at {lock:p} is NULL or misaligned"),
        );
        return None;
    }
    // SAFETY: a non-NULL, aligned pointer to the image's KSPIN_LOCK, which only these routines
    // touch (atomically) while it is in use.
    Some(unsafe { AtomicUsize::from_ptr(lock) })
}

/// Takes `lock` for this thread (the IRQL is the caller's business); `false` when it could not
/// be taken without deadlocking.
fn acquire(routine: &'static str, lock: *mut usize) -> bool {
    let Some(word) = lock_word(routine, lock) else {
        return false;
    };
    let me = std::thread::current().id();
    if with(|s| s.spin_locks.get(&(lock as usize)) == Some(&me)) {
        violation(
            routine,
            format!("spin lock {lock:p} acquired again by the thread holding it (a deadlock)"),
        );
        return false;
    }
    while word
        .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
        std::thread::yield_now();
    }
    with(|s| s.spin_locks.insert(lock as usize, me));
    irql::count_spin_lock(true);
    true
}

/// Releases `lock`, which this thread must hold.
fn release(routine: &'static str, lock: *mut usize) {
    let Some(word) = lock_word(routine, lock) else {
        return;
    };
    let me = std::thread::current().id();
    let held = with(|s| match s.spin_locks.get(&(lock as usize)) {
        Some(owner) if *owner == me => {
            s.spin_locks.remove(&(lock as usize));
            true
        }
        _ => false,
    });
    if !held {
        violation(
            routine,
            format!("spin lock {lock:p} released by a thread that does not hold it"),
        );
        return;
    }
    word.store(0, Ordering::Release);
    irql::count_spin_lock(false);
}

pub(super) unsafe extern "win64" fn ke_acquire_spin_lock_raise_to_dpc(lock: *mut usize) -> u8 {
    enter("KeAcquireSpinLockRaiseToDpc");
    let old = raise("KeAcquireSpinLockRaiseToDpc", DISPATCH_LEVEL);
    acquire("KeAcquireSpinLockRaiseToDpc", lock);
    old
}

pub(super) unsafe extern "win64" fn kf_acquire_spin_lock(lock: *mut usize) -> u8 {
    enter("KfAcquireSpinLock");
    let old = raise("KfAcquireSpinLock", DISPATCH_LEVEL);
    acquire("KfAcquireSpinLock", lock);
    old
}

/// `KeReleaseSpinLock` / `KfReleaseSpinLock`: at `DISPATCH_LEVEL`, back to `old`.
fn release_and_lower(routine: &'static str, lock: *mut usize, old: u8) {
    if irql::current() != DISPATCH_LEVEL {
        violation(
            routine,
            format!(
                "called at {}; a spin lock is held at DISPATCH_LEVEL",
                irql::name(irql::current())
            ),
        );
    }
    if old > DISPATCH_LEVEL {
        violation(
            routine,
            format!("NewIrql {} is above DISPATCH_LEVEL", irql::name(old)),
        );
    }
    release(routine, lock);
    lower(routine, old);
}

pub(super) unsafe extern "win64" fn ke_release_spin_lock(lock: *mut usize, old: u8) {
    enter("KeReleaseSpinLock");
    release_and_lower("KeReleaseSpinLock", lock, old);
}

pub(super) unsafe extern "win64" fn kf_release_spin_lock(lock: *mut usize, old: u8) {
    enter("KfReleaseSpinLock");
    release_and_lower("KfReleaseSpinLock", lock, old);
}

/// The `…AtDpcLevel` routines are called at `DISPATCH_LEVEL` exactly.
fn at_dpc_level(routine: &'static str) {
    if irql::current() != DISPATCH_LEVEL {
        violation(
            routine,
            format!(
                "called at {}; it must be called at DISPATCH_LEVEL",
                irql::name(irql::current())
            ),
        );
    }
}

pub(super) unsafe extern "win64" fn ke_acquire_spin_lock_at_dpc_level(lock: *mut usize) {
    enter("KeAcquireSpinLockAtDpcLevel");
    at_dpc_level("KeAcquireSpinLockAtDpcLevel");
    acquire("KeAcquireSpinLockAtDpcLevel", lock);
}

pub(super) unsafe extern "win64" fn ke_release_spin_lock_from_dpc_level(lock: *mut usize) {
    enter("KeReleaseSpinLockFromDpcLevel");
    at_dpc_level("KeReleaseSpinLockFromDpcLevel");
    release("KeReleaseSpinLockFromDpcLevel", lock);
}

pub(super) unsafe extern "win64" fn ke_try_to_acquire_spin_lock_at_dpc_level(
    lock: *mut usize,
) -> u8 {
    const ROUTINE: &str = "KeTryToAcquireSpinLockAtDpcLevel";
    enter(ROUTINE);
    at_dpc_level(ROUTINE);
    let Some(word) = lock_word(ROUTINE, lock) else {
        return 0;
    };
    if word
        .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return 0;
    }
    let me = std::thread::current().id();
    with(|s| s.spin_locks.insert(lock as usize, me));
    irql::count_spin_lock(true);
    1
}

/// The `KLOCK_QUEUE_HANDLE` the image passed, as a structure.
fn queue_handle(routine: &'static str, handle: *mut u8) -> Option<Fields> {
    if handle.is_null() {
        violation(routine, "NULL KLOCK_QUEUE_HANDLE");
        return None;
    }
    // SAFETY: the image's KLOCK_QUEUE_HANDLE (the DDI's contract: writable, alive until the
    // release), at the WDK's layout.
    Some(unsafe { Fields::new(handle, lqh::SIZE) })
}

pub(super) unsafe extern "win64" fn ke_acquire_in_stack_queued_spin_lock(
    lock: *mut usize,
    handle: *mut u8,
) {
    const ROUTINE: &str = "KeAcquireInStackQueuedSpinLock";
    enter(ROUTINE);
    let Some(h) = queue_handle(ROUTINE, handle) else {
        return;
    };
    let old = raise(ROUTINE, DISPATCH_LEVEL);
    acquire(ROUTINE, lock);
    h.put_usize(lqh::NEXT, 0);
    h.put_usize(lqh::LOCK, lock as usize);
    h.put_u8(lqh::OLD_IRQL, old);
}

pub(super) unsafe extern "win64" fn ke_release_in_stack_queued_spin_lock(handle: *mut u8) {
    const ROUTINE: &str = "KeReleaseInStackQueuedSpinLock";
    enter(ROUTINE);
    let Some(h) = queue_handle(ROUTINE, handle) else {
        return;
    };
    let old = h.get::<1>(lqh::OLD_IRQL)[0];
    release_and_lower(ROUTINE, h.get_usize(lqh::LOCK) as *mut usize, old);
}

pub(super) unsafe extern "win64" fn ke_acquire_in_stack_queued_spin_lock_at_dpc_level(
    lock: *mut usize,
    handle: *mut u8,
) {
    const ROUTINE: &str = "KeAcquireInStackQueuedSpinLockAtDpcLevel";
    enter(ROUTINE);
    at_dpc_level(ROUTINE);
    let Some(h) = queue_handle(ROUTINE, handle) else {
        return;
    };
    acquire(ROUTINE, lock);
    h.put_usize(lqh::NEXT, 0);
    h.put_usize(lqh::LOCK, lock as usize);
}

pub(super) unsafe extern "win64" fn ke_release_in_stack_queued_spin_lock_from_dpc_level(
    handle: *mut u8,
) {
    const ROUTINE: &str = "KeReleaseInStackQueuedSpinLockFromDpcLevel";
    enter(ROUTINE);
    at_dpc_level(ROUTINE);
    let Some(h) = queue_handle(ROUTINE, handle) else {
        return;
    };
    release(ROUTINE, h.get_usize(lqh::LOCK) as *mut usize);
}

// ---------------------------------------------------------------------------------------------
// Events.

/// The image's event: its header fields, and its signal state as an atomic.
fn event<'a>(routine: &'static str, event: *mut u8) -> Option<(Fields, &'a AtomicI32)> {
    if event.is_null() || !(event as usize).is_multiple_of(8) {
        violation(routine, format!("event at {event:p} is NULL or misaligned"));
        return None;
    }
    // SAFETY: the image's KEVENT (the DDI's contract), at the WDK's layout; its signal state is
    // only touched atomically by these routines (and read by PCW's KeReadStateEvent).
    let fields = unsafe { Fields::new(event, kevent::SIZE) };
    // SAFETY: as above; 4-byte aligned inside an 8-byte-aligned event.
    let state = unsafe { AtomicI32::from_ptr(event.wrapping_add(kevent::SIGNAL_STATE).cast()) };
    Some((fields, state))
}

pub(super) unsafe extern "win64" fn ke_initialize_event(ptr: *mut u8, kind: u32, state: u8) {
    const ROUTINE: &str = "KeInitializeEvent";
    enter(ROUTINE);
    let Some((fields, signal)) = event(ROUTINE, ptr) else {
        return;
    };
    if kind > 1 {
        violation(
            ROUTINE,
            format!(
                "event type {kind} is neither NotificationEvent (0) nor SynchronizationEvent (1)"
            ),
        );
    }
    fields.put_u8(kevent::TYPE, u8::try_from(kind.min(1)).unwrap_or(0));
    fields.put_u8(
        kevent::SIZE_FIELD,
        u8::try_from(kevent::SIZE / 4).unwrap_or(0),
    );
    signal.store(i32::from(state != 0), Ordering::Release);
    let list = ptr as usize + kevent::WAIT_LIST_HEAD;
    fields.put_usize(kevent::WAIT_LIST_HEAD, list);
    fields.put_usize(kevent::WAIT_LIST_HEAD + 8, list);
}

pub(super) unsafe extern "win64" fn ke_set_event(ptr: *mut u8, _increment: i32, wait: u8) -> i32 {
    const ROUTINE: &str = "KeSetEvent";
    enter(ROUTINE);
    if wait != 0 {
        violation(
            ROUTINE,
            "Wait = TRUE (the caller would wait at DISPATCH_LEVEL next; not emulated)",
        );
    }
    event(ROUTINE, ptr).map_or(0, |(_, signal)| signal.swap(1, Ordering::AcqRel))
}

pub(super) unsafe extern "win64" fn ke_reset_event(ptr: *mut u8) -> i32 {
    enter("KeResetEvent");
    event("KeResetEvent", ptr).map_or(0, |(_, signal)| signal.swap(0, Ordering::AcqRel))
}

pub(super) unsafe extern "win64" fn ke_clear_event(ptr: *mut u8) {
    enter("KeClearEvent");
    if let Some((_, signal)) = event("KeClearEvent", ptr) {
        signal.store(0, Ordering::Release);
    }
}

pub(super) unsafe extern "win64" fn ke_read_state_event(ptr: *mut u8) -> i32 {
    enter("KeReadStateEvent");
    event("KeReadStateEvent", ptr).map_or(0, |(_, signal)| signal.load(Ordering::Acquire))
}

/// How long a `KeWaitForSingleObject` timeout lets the caller wait: `None` for ever.
fn deadline(timeout: *const i64) -> Option<Instant> {
    if timeout.is_null() {
        return None;
    }
    // SAFETY: the image's LARGE_INTEGER (the DDI's contract), only read.
    let t = unsafe { timeout.read_unaligned() };
    let wait = if t <= 0 {
        // Relative, in 100 ns units.
        Duration::from_nanos(t.unsigned_abs().saturating_mul(100))
    } else {
        // Absolute system time: from the simulated clock's now.
        let mut now = 0i64;
        // SAFETY: a writable i64.
        unsafe { pcw_sim::kernel_pcw::KeQuerySystemTimePrecise(&raw mut now) };
        Duration::from_nanos(u64::try_from(t.saturating_sub(now)).unwrap_or(0) * 100)
    };
    Some(Instant::now() + wait)
}

pub(super) unsafe extern "win64" fn ke_wait_for_single_object(
    object: *mut u8,
    _reason: u32,
    _mode: u8,
    alertable: u8,
    timeout: *const i64,
) -> NtStatus {
    const ROUTINE: &str = "KeWaitForSingleObject";
    enter(ROUTINE);
    // SAFETY: NULL or the image's LARGE_INTEGER.
    let zero = !timeout.is_null() && unsafe { timeout.read_unaligned() } == 0;
    let limit = if zero { DISPATCH_LEVEL } else { APC_LEVEL };
    if irql::current() > limit {
        violation(
            ROUTINE,
            format!(
                "called at {} with {} timeout",
                irql::name(irql::current()),
                if zero { "a zero" } else { "a non-zero" }
            ),
        );
    }
    if alertable != 0 {
        violation(ROUTINE, "alertable waits are not emulated");
    }
    let Some((fields, signal)) = event(ROUTINE, object) else {
        return STATUS_SUCCESS;
    };
    let kind = fields.get::<1>(kevent::TYPE)[0];
    if kind > 1 {
        violation(
            ROUTINE,
            format!(
                "waiting on a dispatcher object of type {kind}: only events (0, 1) are emulated"
            ),
        );
        return STATUS_SUCCESS;
    }
    let until = deadline(timeout);
    let started = Instant::now();
    loop {
        let taken = if kind == 1 {
            // A synchronization event is reset by the wait it satisfies.
            signal
                .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        } else {
            signal.load(Ordering::Acquire) != 0
        };
        if taken {
            return STATUS_SUCCESS;
        }
        if until.is_some_and(|d| Instant::now() >= d) {
            return STATUS_TIMEOUT;
        }
        if until.is_none() && started.elapsed() > HANG {
            violation(
                ROUTINE,
                format!(
                    "waited {} s without a timeout for an event nobody set",
                    HANG.as_secs()
                ),
            );
            return STATUS_TIMEOUT;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// What a thread must have undone when the image returns to the kernel (from `DriverEntry`, a
/// dispatch routine, `DriverUnload` or a PCW callback): its IRQL back at `PASSIVE_LEVEL` and
/// no spin lock held. Resets both so that the next call starts clean.
pub(crate) fn check_return(what: &str) {
    let level = irql::current();
    if level != PASSIVE_LEVEL {
        violation("IRQL", format!("{what} returned at {}", irql::name(level)));
        irql::set(PASSIVE_LEVEL);
    }
    let held = irql::spin_locks_held();
    if held > 0 {
        violation(
            "spin lock",
            format!("{what} returned holding {held} spin lock(s)"),
        );
    }
}
