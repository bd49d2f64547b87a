// SPDX-License-Identifier: MIT OR Apache-2.0
//! The IRQL of each thread that runs image code, as the processor's CR8 would hold it: raised
//! and lowered by the spin-lock and IRQL routines and by the image's own `mov cr8, …` (emulated
//! in [`super::cpu`]), read by `KeGetCurrentIrql` and `mov …, cr8`, and checked against each
//! routine's limit when it is called.
//!
//! A leaf: it imports nothing else of `ntos`.

use std::cell::Cell;

/// `PASSIVE_LEVEL`.
pub const PASSIVE_LEVEL: u8 = 0;
/// `APC_LEVEL`.
pub const APC_LEVEL: u8 = 1;
/// `DISPATCH_LEVEL`.
pub const DISPATCH_LEVEL: u8 = 2;
/// `HIGH_LEVEL`: the highest IRQL (CR8 holds 4 bits).
pub const HIGH_LEVEL: u8 = 15;

std::thread_local! {
    /// This thread's IRQL. Const-initialised, so reading it from the fault handler neither
    /// allocates nor registers a destructor.
    static IRQL: Cell<u8> = const { Cell::new(PASSIVE_LEVEL) };
    /// Spin locks this thread holds.
    static SPIN_LOCKS: Cell<u32> = const { Cell::new(0) };
}

/// Spin locks this thread holds.
pub(crate) fn spin_locks_held() -> u32 {
    SPIN_LOCKS.with(Cell::get)
}

/// Counts a spin lock this thread acquired (`+1`) or released (`-1`).
pub(crate) fn count_spin_lock(acquired: bool) {
    SPIN_LOCKS.with(|c| {
        c.set(if acquired {
            c.get().saturating_add(1)
        } else {
            c.get().saturating_sub(1)
        });
    });
}

/// This thread's IRQL.
pub(crate) fn current() -> u8 {
    IRQL.with(Cell::get)
}

/// Sets this thread's IRQL (the caller checks the transition).
pub(crate) fn set(irql: u8) {
    IRQL.with(|c| c.set(irql));
}

/// The usual name of an IRQL, for messages.
pub(crate) fn name(irql: u8) -> String {
    match irql {
        PASSIVE_LEVEL => "PASSIVE_LEVEL".into(),
        APC_LEVEL => "APC_LEVEL".into(),
        DISPATCH_LEVEL => "DISPATCH_LEVEL".into(),
        HIGH_LEVEL => "HIGH_LEVEL".into(),
        n => format!("IRQL {n}"),
    }
}
