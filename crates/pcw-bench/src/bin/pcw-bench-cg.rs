// SPDX-License-Identifier: MIT OR Apache-2.0
//! The instruction-count driver of `scripts/bench.sh`: runs every scenario of
//! `pcw_bench::scenarios` a fixed number of times between callgrind client requests (zero the
//! counters, run, dump labelled), so `valgrind --tool=callgrind` reports the instructions of
//! exactly those calls. Links the no-op PCW, so the counts are the provider's own.
//!
//! Prints one tab-separated line per case: `case`, label, repetitions, units,
//! `PcwAddInstance` calls, allocations + frees, and names on which the naive C matcher hit its
//! cap, all in one call.
//! `--quick` runs N = 1 and 100 only; any other argument keeps only the cases whose label
//! contains it (for profiling one case).
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

use pcw_bench::alloc_count::{self, CountingAlloc};
use pcw_bench::{SIZES, c, noop_added, scenarios};

pcw_bench::noop_pcw!();
pcw_bench::noop_perflib!();

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Repetitions: a fixed function of the case, so runs are reproducible — about 20 000 units
/// of work, at least 3 and at most 200; 3 for a heavy case.
fn reps(case: &scenarios::Case) -> usize {
    if case.heavy {
        3
    } else {
        (20_000 / case.units.max(1)).clamp(3, 200)
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let filter = std::env::args().skip(1).find(|a| a != "--quick");
    let sizes: Vec<usize> = SIZES
        .iter()
        .copied()
        .filter(|n| !quick || *n <= 100)
        .collect();
    // SAFETY: a query of a constant.
    if unsafe { c::pcw_bench_cg_available() } == 0 {
        eprintln!("note: built without valgrind/callgrind.h; instruction counts are unavailable");
    }
    let groups = [
        scenarios::callback_cases(&sizes),
        scenarios::driver_cases(),
        scenarios::match_cases(),
        scenarios::v1_cases(&sizes),
        scenarios::snapshot_cases(&sizes),
        scenarios::device_cases(&sizes),
        scenarios::um_cases(),
    ];
    let wanted = |case: &scenarios::Case| filter.as_ref().is_none_or(|f| case.label.contains(f));
    for mut case in groups.into_iter().flatten().filter(wanted) {
        // A warm-up call (lazy binding, first-touch) that also counts allocations and adds.
        let added_before = noop_added();
        // SAFETY: reads and resets a counter of the C baseline.
        unsafe { c::kcs_take_capped() };
        let (r, allocations) = alloc_count::measure(|| (case.run)());
        let reps = reps(&case);
        std::hint::black_box(r);
        let added = noop_added() - added_before;
        // SAFETY: as above.
        let capped = unsafe { c::kcs_take_capped() };
        let label = std::ffi::CString::new(case.label.clone()).expect("no NUL in labels");
        // SAFETY: a callgrind client request (a no-op outside valgrind).
        unsafe { c::pcw_bench_cg_zero() };
        for _ in 0..reps {
            std::hint::black_box((case.run)());
        }
        // SAFETY: as above; `label` is a NUL-terminated string that outlives the call.
        unsafe { c::pcw_bench_cg_dump(label.as_ptr()) };
        println!(
            "case\t{}\t{reps}\t{}\t{added}\t{allocations}\t{capped}",
            case.label, case.units
        );
    }
}
