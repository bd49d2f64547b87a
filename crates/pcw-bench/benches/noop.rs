// SPDX-License-Identifier: MIT OR Apache-2.0
//! Criterion benches of every scenario against the no-op PCW (the provider's own cost): the
//! driver's callback vs the KCS-style C callback, the matchers, pcw-core's V1 collect vs the
//! PerfGen-style C and `memcpy`, the snapshot codec vs `memcpy`. Same cases as the callgrind
//! driver (`pcw_bench::scenarios`). `PCW_BENCH_QUICK=1` runs N = 1 and 100 only; times are
//! kept short on purpose (shared 2-core machines): `scripts/bench.sh` reports ratios.

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use pcw_bench::{SIZES, scenarios};

pcw_bench::noop_pcw!();
pcw_bench::noop_perflib!();

fn main() {
    let quick = std::env::var_os("PCW_BENCH_QUICK").is_some();
    let sizes: Vec<usize> = SIZES
        .iter()
        .copied()
        .filter(|n| !quick || *n <= 100)
        .collect();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(300))
        .without_plots()
        .configure_from_args();
    let groups = [
        scenarios::callback_cases(&sizes),
        scenarios::match_cases(),
        scenarios::v1_cases(&sizes),
        scenarios::snapshot_cases(&sizes),
        scenarios::device_cases(&sizes),
        scenarios::um_cases(),
    ];
    for mut case in groups.into_iter().flatten() {
        c.bench_function(&case.label, |b| b.iter(|| black_box((case.run)())));
    }
    c.final_summary();
}
