// SPDX-License-Identifier: MIT OR Apache-2.0
//! `OpenPerformanceData` under allocation failure: a global allocator that fails the Nth
//! allocation of the test's thread, swept over every allocation Open makes. Each failure must
//! give `ERROR_NOT_ENOUGH_MEMORY` and leave nothing behind (no Open counted, the next Open
//! configures afresh and serves data) — not abort the consumer's process. Its own test binary,
//! because the allocator is process-wide.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pcw_core::v1::collect::Collected;

/// `ERROR_NOT_ENOUGH_MEMORY` (winerror.h).
const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;

thread_local! {
    /// Allocations of this thread still to succeed before one fails; `None` when disarmed.
    static COUNTDOWN: Cell<Option<usize>> = const { Cell::new(None) };
    /// Whether the armed failure happened.
    static FAILED: Cell<bool> = const { Cell::new(false) };
}

/// Whether this allocation is the one to fail.
fn fail_now() -> bool {
    COUNTDOWN
        .try_with(|c| match c.get() {
            Some(0) => {
                c.set(None);
                let _ = FAILED.try_with(|f| f.set(true));
                true
            }
            Some(n) => {
                c.set(Some(n - 1));
                false
            }
            None => false,
        })
        .unwrap_or(false)
}

struct FailNth;

// SAFETY: every call is forwarded to `System` unchanged, or answered with NULL, which
// `GlobalAlloc` allows for any allocation failure.
unsafe impl GlobalAlloc for FailNth {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if fail_now() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if fail_now() {
            return std::ptr::null_mut();
        }
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if fail_now() {
            return std::ptr::null_mut();
        }
        // SAFETY: as above; `ptr` came from `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: FailNth = FailNth;

/// `Linkage\Export` as Perflib passes it: synthetic data, known indexes, a log file (every
/// setting that makes Open allocate).
fn context() -> Vec<u16> {
    let log = std::env::temp_dir().join(format!("pcw-perfdll-oom-{}.log", std::process::id()));
    let mut units = Vec::new();
    for entry in [
        "source=synthetic".to_owned(),
        "first-counter=2000".to_owned(),
        "clock=133000000000000000".to_owned(),
        format!("log-file={}", log.display()),
        r"\Device\PcwRs".to_owned(),
    ] {
        units.extend(entry.encode_utf16());
        units.push(0);
    }
    units.push(0);
    units
}

/// Open with the Nth allocation failing; whether that allocation happened, and Open's answer.
fn open_failing(n: usize, context: &mut [u16]) -> (bool, u32) {
    FAILED.with(|f| f.set(false));
    COUNTDOWN.with(|c| c.set(Some(n)));
    // SAFETY: `context` is a double-NUL-terminated multi-string that outlives the call.
    let status = unsafe { pcw_perfdll::OpenPerformanceData(context.as_mut_ptr()) };
    COUNTDOWN.with(|c| c.set(None));
    (FAILED.with(Cell::get), status)
}

/// A collection of everything succeeds: the DLL is open and configured.
fn serves_data() -> bool {
    let query: Vec<u16> = "Global".encode_utf16().collect();
    let mut buf = vec![0u8; 1 << 20];
    matches!(
        pcw_perfdll::collect(Some(&query), &mut buf),
        Collected::Success { .. }
    )
}

#[test]
fn every_allocation_failure_of_open_is_a_clean_error() {
    let mut context = context();
    let mut failures = 0;
    for n in 0.. {
        let (failed, status) = open_failing(n, &mut context);
        if !failed {
            // Open made fewer than n + 1 allocations: every one of them has failed once.
            assert_eq!(status, 0, "open with allocation {n} untouched");
            assert_eq!(pcw_perfdll::open_count(), 1);
            assert!(serves_data());
            assert_eq!(pcw_perfdll::close(), 0);
            break;
        }
        failures += 1;
        assert_eq!(
            status, ERROR_NOT_ENOUGH_MEMORY,
            "allocation {n} failed: Open must say so"
        );
        assert_eq!(
            pcw_perfdll::open_count(),
            0,
            "allocation {n} failed: no Open may be counted"
        );
        // Nothing is left behind: a later Open configures afresh and serves data.
        assert_eq!(open_failing(usize::MAX, &mut context), (false, 0));
        assert!(serves_data(), "after failing allocation {n}");
        assert_eq!(pcw_perfdll::close(), 0);
        assert_eq!(pcw_perfdll::open_count(), 0);
    }
    println!("Open made {failures} allocations, each failed once");
    assert!(
        failures > 0,
        "Open allocates (its buffers), so the sweep saw failures"
    );
}
