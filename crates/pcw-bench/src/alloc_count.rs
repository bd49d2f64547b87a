// SPDX-License-Identifier: MIT OR Apache-2.0
//! A counting global allocator for the bench binaries and tests: every allocation,
//! reallocation and deallocation a thread makes while it counts is tallied, so a measured path
//! can be shown to allocate nothing. Install it with
//! `#[global_allocator] static A: CountingAlloc = CountingAlloc;`. Counting is per thread, so
//! tests running in parallel do not see each other's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator and counts while [`measure`] runs on the calling thread.
#[derive(Debug)]
pub struct CountingAlloc;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static EVENTS: Cell<u64> = const { Cell::new(0) };
}

fn tally() {
    // `try_with`: during thread teardown the locals may be gone; nothing is counted then.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = EVENTS.try_with(|e| e.set(e.get() + 1));
    }
}

// SAFETY: forwards every call to the system allocator unchanged; the counters are atomics.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        tally();
        // SAFETY: the caller's layout contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        tally();
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        tally();
        // SAFETY: as `GlobalAlloc::realloc`'s contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result with the allocations, reallocations and frees it made on
/// this thread. Only meaningful in a binary that installed [`CountingAlloc`].
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = EVENTS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (r, EVENTS.with(Cell::get) - before)
}
