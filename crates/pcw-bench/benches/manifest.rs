// SPDX-License-Identifier: MIT OR Apache-2.0
//! Criterion benches of the manifest tools over large generated manifests
//! (`pcw_bench::manifests`), to show that their time grows linearly with the counters:
//!
//! * `manifest/lint/N`: what `pcw lint` does with a file's bytes — `pcw_gen::lint`: the
//!   analysis, the fleet-readiness pass, every diagnostic in file order;
//! * `manifest/generate/N`: `Config::generate`, every output (Rust module, `.rc`, `.res`,
//!   lodctr `.ini` and `.h`, the `inspect` document);
//! * `manifest/inspect/N`: `Config::inspect` and its JSON, what `pcw inspect --json` prints;
//!
//! each over a kernel-mode schema 2.0 manifest of N counters (N = 16 000, 32 000, 64 000,
//! 100 000 and 128 000), and `manifest/lint-user/N` (user mode, schema 1.1) and
//! `manifest/lint-one-line/N` (the kernel-mode manifest written on one line) at 64 000 and
//! 128 000. `scripts/bench.sh` reports the ratio of the 128 000 and 64 000 times: of the
//! criterion figures, and of every operation timed again in interleaved pairs of a 64 000 and a
//! 128 000 call, printed as `manifest-pair` lines after criterion's output. The time is
//! the benchmarking thread's CPU time (`ThreadTime`): on a shared machine the wall clock also
//! counts the time other work held the CPUs.
//!
//! `PCW_BENCH_QUICK=1` divides every N by 8. Outside `cargo bench` (criterion's test mode, as
//! `cargo test --benches` runs it) every case runs once, over N / 200 counters.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};
use pcw_bench::manifests::{Spec, manifest};
use pcw_gen::{Config, Diagnostic, Input, lint};

/// The CPU time of the calling thread, user and system (`CLOCK_THREAD_CPUTIME_ID`, in
/// nanoseconds), where there is one, else the wall-clock time. On a shared machine whose other
/// work takes the CPUs away, CPU time is what a call costs; wall-clock time adds however long
/// the thread waited.
struct ThreadTime {
    /// `None` when the thread's CPU time can be read; the wall clock's origin otherwise.
    wall: Option<Instant>,
}

impl ThreadTime {
    fn new() -> Self {
        let wall = thread_cpu_ns().is_none().then(Instant::now);
        if wall.is_some() {
            eprintln!("note: no thread CPU clock: measuring wall-clock time");
        }
        Self { wall }
    }

    fn now(&self) -> u64 {
        match self.wall {
            Some(origin) => u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX),
            None => thread_cpu_ns().unwrap_or(0),
        }
    }
}

#[cfg(unix)]
fn thread_cpu_ns() -> Option<u64> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a live, writable `timespec` for the duration of the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut now) };
    let seconds = u64::try_from(now.tv_sec).ok()?;
    let nanos = u64::try_from(now.tv_nsec).ok()?;
    (status == 0).then(|| seconds * 1_000_000_000 + nanos)
}

#[cfg(not(unix))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

impl Measurement for ThreadTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now()
    }

    fn end(&self, start: u64) -> u64 {
        self.now().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "criterion's statistics are `f64`s; a duration loses precision only beyond 2^53 ns, \
                  about 104 days"
    )]
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &Nanoseconds
    }
}

/// Nanoseconds shown in the unit that suits them, as criterion shows wall-clock times.
struct Nanoseconds;

impl ValueFormatter for Nanoseconds {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(&self, _: f64, _: &Throughput, values: &mut [f64]) -> &'static str {
        // No benchmark here declares a throughput.
        for v in values {
            *v = 0.0;
        }
        "-"
    }

    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// A manifest the tools accept: no error among its diagnostics.
fn valid(spec: &Spec) -> Vec<u8> {
    let bytes = manifest(spec).into_bytes();
    let errors: Vec<String> = lint(&Input::new("bench.man", &bytes))
        .iter()
        .filter(|d| d.is_error())
        .take(5)
        .map(Diagnostic::render)
        .collect();
    assert!(
        errors.is_empty(),
        "{spec:?} has errors:\n{}",
        errors.join("\n")
    );
    bytes
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var_os("PCW_BENCH_QUICK").is_some();
    let scale = |n: usize| {
        if !bench {
            n / 200
        } else if quick {
            n / 8
        } else {
            n
        }
    };
    let sizes: Vec<usize> = [16_000, 32_000, 64_000, 100_000, 128_000]
        .into_iter()
        .map(scale)
        .collect();
    let pair: Vec<usize> = [64_000, 128_000].into_iter().map(scale).collect();
    // Every call takes far longer than the target times, so criterion times each alone: one
    // warm-up call, then ten samples of one call (its flat sampling).
    let mut c = Criterion::default()
        .with_measurement(ThreadTime::new())
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1))
        .without_plots()
        .configure_from_args();
    let file = "bench.man";
    let config = Config::new();
    // One operation over every size before the next operation; `scripts/bench.sh` runs each
    // operation in a process of its own (its argument filters the rest out), since in one
    // process an operation that follows a heavier one is measured on the heap that one left.
    let manifests: Vec<(usize, Vec<u8>)> = sizes
        .iter()
        .map(|&n| (n, valid(&Spec::kernel(n))))
        .collect();
    for (n, bytes) in &manifests {
        c.bench_function(&format!("manifest/lint/{n}"), |b| {
            b.iter(|| black_box(lint(&Input::new(file, black_box(bytes)))));
        });
    }
    for (n, bytes) in &manifests {
        c.bench_function(&format!("manifest/inspect/{n}"), |b| {
            b.iter(|| {
                black_box(
                    config
                        .inspect(&Input::new(file, black_box(bytes)))
                        .map(|i| i.to_json()),
                )
            });
        });
    }
    for (n, bytes) in &manifests {
        c.bench_function(&format!("manifest/generate/{n}"), |b| {
            b.iter(|| black_box(config.generate(&Input::new(file, black_box(bytes)))));
        });
    }
    // Each size's manifests made just before its calls are timed, as the kernel-mode sizes'
    // were (the calls of 64 000 counters timed with no larger manifest made yet: with all four
    // made first, the user-mode and one-line lints at 64 000 took about twice as long as in the
    // runs before), and kept for the interleaved pairs.
    let (mut users, mut one_lines) = (Vec::new(), Vec::new());
    for &n in &pair {
        let user = valid(&Spec::user(n));
        c.bench_function(&format!("manifest/lint-user/{n}"), |b| {
            b.iter(|| black_box(lint(&Input::new(file, black_box(&user)))));
        });
        let one_line = valid(&Spec {
            one_line: true,
            ..Spec::kernel(n)
        });
        c.bench_function(&format!("manifest/lint-one-line/{n}"), |b| {
            b.iter(|| black_box(lint(&Input::new(file, black_box(&one_line)))));
        });
        users.push(user);
        one_lines.push(one_line);
    }
    c.final_summary();

    // The growth of each operation from the pair's smaller N to its larger, timed in
    // interleaved pairs.
    let kernel = |n: usize| {
        manifests
            .iter()
            .find(|(m, _)| *m == n)
            .map(|(_, bytes)| bytes.as_slice())
    };
    if let (Some(half), Some(full)) = (kernel(pair[0]), kernel(pair[1])) {
        let inputs = Inputs {
            kernel: [half, full],
            user: [&users[0], &users[1]],
            one_line: [&one_lines[0], &one_lines[1]],
        };
        growth_in_pairs(&config, &inputs, [pair[0], pair[1]], bench);
    }
}

/// An operation's name, its two manifests and its call.
type Operation<'a> = (&'static str, [&'a [u8]; 2], &'a dyn Fn(&[u8]));

/// The manifests of the pair's two sizes, smaller first.
struct Inputs<'a> {
    kernel: [&'a [u8]; 2],
    user: [&'a [u8]; 2],
    one_line: [&'a [u8]; 2],
}

/// Every operation the command line's filter selects (all without one), timed in interleaved
/// pairs over `inputs`, whose sizes are `ns`.
fn growth_in_pairs(config: &Config, inputs: &Inputs<'_>, ns: [usize; 2], bench: bool) {
    let file = "bench.man";
    let do_lint = |bytes: &[u8]| drop(black_box(lint(&Input::new(file, bytes))));
    let do_inspect = |bytes: &[u8]| {
        drop(black_box(
            config
                .inspect(&Input::new(file, bytes))
                .map(|i| i.to_json()),
        ));
    };
    let do_generate = |bytes: &[u8]| drop(black_box(config.generate(&Input::new(file, bytes))));
    let ops: [Operation<'_>; 5] = [
        ("lint", inputs.kernel, &do_lint),
        ("inspect", inputs.kernel, &do_inspect),
        ("generate", inputs.kernel, &do_generate),
        ("lint-user", inputs.user, &do_lint),
        ("lint-one-line", inputs.one_line, &do_lint),
    ];
    // Criterion's listing and profiling modes time nothing.
    if std::env::args().any(|a| a == "--list" || a == "--profile-time") {
        return;
    }
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    let clock = ThreadTime::new();
    for (op, [half, full], call) in ops {
        // What `scripts/bench.sh` passes: `manifest/<operation>/`, or a prefix of several.
        if format!("manifest/{op}/").contains(&filter) {
            interleaved(op, ns, bench, &clock, |large| {
                call(if large { full } else { half });
            });
        }
    }
}

/// Times `call` on the smaller (`false`) and the larger (`true`) manifest of `ns` in
/// interleaved pairs, the order alternating from pair to pair, and prints each pair as
/// `manifest-pair <op> <n small> <n large> <ns small> <ns large>`: anything that slows the
/// machine for a while slows both calls of a pair, so the ratio of each pair's two calls is a
/// steadier estimate of the growth than the ratio of two sizes timed minutes apart. Twenty
/// pairs, or as many as a minute of calls allows and at least six, an even number (as many of
/// each order); one outside `cargo bench`.
fn interleaved(op: &str, ns: [usize; 2], bench: bool, clock: &ThreadTime, call: impl Fn(bool)) {
    let (most, least) = if bench { (20, 6) } else { (1, 1) };
    let budget = Duration::from_secs(60);
    let started = Instant::now();
    for k in 0..most {
        // Whole rounds of both orders.
        if k >= least && k % 2 == 0 && started.elapsed() > budget {
            break;
        }
        let mut times = [0u64; 2];
        let order = if k % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for large in order {
            let start = clock.start();
            call(large);
            times[usize::from(large)] = clock.end(start);
        }
        println!(
            "manifest-pair\t{op}\t{}\t{}\t{}\t{}",
            ns[0], ns[1], times[0], times[1]
        );
    }
}
