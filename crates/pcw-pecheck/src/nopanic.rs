// SPDX-License-Identifier: MIT OR Apache-2.0
//! Which entry points of the cross-built artifacts can reach Rust's panic machinery.
//!
//! * The driver (`.sys` + PDB) is rooted at [`DRIVER_ROOTS`]: `DriverEntry`, the PCW
//!   callbacks, the IOCTL dispatch, the snapshot encoder, load/unload and queue
//!   creation/closing. Every function whose name contains a root's path is a root.
//! * The perf DLL (COFF symbols) is rooted at `OpenPerformanceData`, `CollectPerformanceData`
//!   and `ClosePerformanceData`, each alone and all three together with every function of the
//!   vtables that hold one of the DLL's trait implementations (`drop_in_place` included): a
//!   trait object one export builds may be called or dropped by another, whose code does not
//!   reach the builder. Open allocates only fallibly, so the exits of Rust's infallible
//!   allocation (`handle_alloc_error`, `capacity_overflow`) are sinks for it as for the others. The DLL is a `std`
//!   cdylib: its image holds std's panic machinery; the claim is that none of it is reachable
//!   from these roots.
//!
//! A root that cannot be found is a failure: a renamed function must not silently turn the
//! check into a pass.
//!
//! Sinks ([`is_sink`]): `core::panicking::*`/`std::panicking::*`, the panic handler and
//! `rust_panic`, `handle_alloc_error`, `capacity_overflow`, the alloc error handlers,
//! `panic_on_ord_violation`, `unwrap_failed`/`expect_failed`, `*_fail`, `panic_bounds_check`,
//! and for the DLL std's fatal exits ([`is_fatal`]: `abort_internal`, `process::abort`): a perf
//! DLL that aborts kills the consumer it was loaded into just as a panic would.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::code::{Graph, Program};

/// The driver's roots: (title, a substring of the mangled name).
pub const DRIVER_ROOTS: &[(&str, &str)] = &[
    ("DriverEntry", "DriverEntry"),
    // pcw-rt's safe PCW_CALLBACK, one instance per counterset registered with
    // `register_publisher` (Geometric Waves, Provider Statistics): same path, different hashes.
    ("pcw_rt::callback", "6pcw_rt7publish8callback"),
    (
        "control::device_control",
        "10pcw_driver7control14device_control",
    ),
    ("snapshot::write", "10pcw_driver8snapshot5write"),
    ("lifecycle::load", "10pcw_driver9lifecycle4load"),
    ("lifecycle::unload", "10pcw_driver9lifecycle6unload"),
    ("queues::create", "10pcw_driver6queues6create"),
    ("queues::close_all", "10pcw_driver6queues9close_all"),
];

/// The perf DLL's exports, each a root.
pub const DLL_EXPORTS: [&str; 3] = [
    "CollectPerformanceData",
    "OpenPerformanceData",
    "ClosePerformanceData",
];

const SINK_PARTS: &[&str] = &[
    "9panicking",
    "handle_alloc_error",
    "capacity_overflow",
    "alloc_error_handler",
    "panic_on_ord_violation",
    "unwrap_failed",
    "expect_failed",
    "begin_unwind",
    "panic_bounds_check",
    "rust_panic",
    "__rust_start_panic",
    "rust_begin_unwind",
];

/// Whether a mangled name is panic machinery.
pub fn is_sink(name: &str) -> bool {
    SINK_PARTS.iter().any(|p| name.contains(p))
        || name.match_indices("_fail").any(|(i, m)| {
            name[i + m.len()..].chars().next().is_none_or(|c| {
                c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '.'
            })
        })
}

/// Whether a mangled name is one of std's fatal exits.
pub fn is_fatal(name: &str) -> bool {
    name.contains("abort_internal") || name.contains("7process5abort")
}

/// Whether a mangled name is a trait implementation of the DLL's (v0 `_RNvX`/`_RNvY` impl
/// paths naming `ObjectSource`, `SnapshotSource` or `Logger::log`).
pub fn is_dll_trait_impl(name: &str) -> bool {
    (name.starts_with("_RNvX") || name.starts_with("_RNvY"))
        && ["12ObjectSource", "14SnapshotSource", "6Logger3log"]
            .iter()
            .any(|t| name.contains(t))
}

/// Whether a name is pcw-rs code (for the places-to-fix list).
pub fn is_ours(name: &str) -> bool {
    name.contains("pcw_") || DLL_EXPORTS.contains(&name) || name == "DriverEntry"
}

/// A root's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No function of this name is in the image.
    Missing,
    /// Nothing reachable is a sink.
    PanicFree {
        /// Functions reachable.
        reachable: usize,
        /// How many of them are pcw-rs code.
        ours: usize,
        /// Accepted exits reached (demangled).
        allowed_exits: Vec<String>,
    },
    /// A sink is reachable.
    ReachesPanic {
        /// The shortest chain, sink first (demangled).
        chain: Vec<String>,
        /// Calls from pcw-rs code into code that reaches a sink: (caller, callee), demangled.
        frontier: Vec<(String, String)>,
    },
}

/// One root's report.
#[derive(Clone, Debug)]
pub struct RootReport {
    /// What was rooted.
    pub title: String,
    /// The verdict.
    pub verdict: Verdict,
    /// With `list`: every reachable function (demangled, sorted).
    pub listing: Vec<String>,
}

impl RootReport {
    /// Whether this root passes.
    pub fn ok(&self) -> bool {
        matches!(self.verdict, Verdict::PanicFree { .. })
    }
}

impl std::fmt::Display for RootReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.verdict {
            Verdict::Missing => write!(
                f,
                "{}: NOT FOUND in the image (renamed, inlined or stripped: the check cannot \
                 vouch for it)",
                self.title
            )?,
            Verdict::PanicFree {
                reachable,
                ours,
                allowed_exits,
            } => {
                write!(
                    f,
                    "{}: panic-free ({reachable} functions reachable, {ours} of them pcw-rs code)",
                    self.title
                )?;
                if !allowed_exits.is_empty() {
                    write!(f, "; allowed exits reached: {}", allowed_exits.join(", "))?;
                }
            }
            Verdict::ReachesPanic { chain, frontier } => {
                write!(
                    f,
                    "{}: REACHES PANIC via\n      {}",
                    self.title,
                    chain.join("\n   <- ")
                )?;
                write!(
                    f,
                    "\n    {} calls from pcw-rs code into code that reaches a sink:",
                    frontier.len()
                )?;
                for (a, b) in frontier {
                    write!(f, "\n      {a}\n        -> {b}")?;
                }
            }
        }
        for n in &self.listing {
            write!(f, "\n    {n}")?;
        }
        Ok(())
    }
}

/// Checks one root set: `sink` names panic machinery, `allowed` accepted exits (reached, not
/// walked into).
pub fn check_root(
    g: &Graph<'_>,
    title: &str,
    roots: &[u64],
    sink: &dyn Fn(&str) -> bool,
    allowed: &dyn Fn(&str) -> bool,
    list: bool,
) -> RootReport {
    let p = g.program;
    let mut report = RootReport {
        title: title.to_owned(),
        verdict: Verdict::Missing,
        listing: vec![],
    };
    if roots.is_empty() {
        return report;
    }
    let stop = |a: u64| allowed(&p.label(a));
    let reach = g.reach(roots, &g.edges, &stop);
    let hit = reach.order.iter().copied().find(|&a| {
        let n = p.label(a);
        sink(&n) && !allowed(&n)
    });
    report.verdict = if let Some(hit) = hit {
        Verdict::ReachesPanic {
            chain: reach.chain(hit).into_iter().map(|a| p.pretty(a)).collect(),
            frontier: frontier(g, &reach.order, sink, &stop),
        }
    } else {
        let exits: BTreeSet<String> = reach
            .order
            .iter()
            .filter(|&&a| allowed(&p.label(a)))
            .map(|&a| p.pretty(a))
            .collect();
        Verdict::PanicFree {
            reachable: reach.order.len(),
            ours: reach
                .order
                .iter()
                .filter(|&&a| is_ours(&p.label(a)))
                .count(),
            allowed_exits: exits.into_iter().collect(),
        }
    };
    if list {
        let mut l: Vec<String> = reach.order.iter().map(|&a| p.pretty(a)).collect();
        l.sort();
        report.listing = l;
    }
    report
}

/// Every call from pcw-rs code into other code that can reach a sink: the places to fix.
fn frontier(
    g: &Graph<'_>,
    reached: &[u64],
    sink: &dyn Fn(&str) -> bool,
    stop: &dyn Fn(u64) -> bool,
) -> Vec<(String, String)> {
    let p = g.program;
    let succ = |a: u64| -> Vec<u64> {
        if stop(a) {
            vec![]
        } else {
            g.edges.get(&a).into_iter().flatten().copied().collect()
        }
    };
    let mut reverse: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for &a in reached {
        for b in succ(a) {
            reverse.entry(b).or_default().insert(a);
        }
    }
    let mut todo: Vec<u64> = reached
        .iter()
        .copied()
        .filter(|&a| sink(&p.label(a)))
        .collect();
    let mut bad: BTreeSet<u64> = todo.iter().copied().collect();
    while let Some(b) = todo.pop() {
        for &a in reverse.get(&b).into_iter().flatten() {
            if !bad.contains(&a) && !is_ours(&p.label(a)) {
                bad.insert(a);
                todo.push(a);
            }
        }
    }
    let mut pairs = BTreeSet::new();
    for &a in reached.iter().filter(|&&a| is_ours(&p.label(a))) {
        for b in succ(a).into_iter().filter(|b| bad.contains(b)) {
            pairs.insert((p.pretty(a), p.pretty(b)));
        }
    }
    pairs.into_iter().collect()
}

/// The outcome of checking one artifact.
#[derive(Clone, Debug)]
pub struct ArtifactReport {
    /// The header line (image, function count, sinks present).
    pub header: String,
    /// The sinks present in the image (demangled).
    pub sinks: Vec<String>,
    /// Per-root reports.
    pub roots: Vec<RootReport>,
    /// Further lines (counts of indirect calls and the like).
    pub notes: Vec<String>,
}

impl ArtifactReport {
    /// Whether every root passes.
    pub fn ok(&self) -> bool {
        self.roots.iter().all(RootReport::ok)
    }
}

impl std::fmt::Display for ArtifactReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.header)?;
        for s in &self.sinks {
            writeln!(f, "  sink: {s}")?;
        }
        for r in &self.roots {
            writeln!(f, "{r}")?;
        }
        for n in &self.notes {
            writeln!(f, "{n}")?;
        }
        Ok(())
    }
}

/// Checks a driver program (names from its PDB) against `roots`.
pub fn check_driver(program: &Program, roots: &[(&str, &str)], list: bool) -> ArtifactReport {
    let g = Graph::build(program);
    let sinks: Vec<String> = program
        .names
        .iter()
        .filter(|(_, n)| is_sink(n))
        .map(|(&a, _)| program.pretty(a))
        .collect();
    let header = format!(
        "driver: {} functions, {} of them panic machinery",
        g.starts.len(),
        sinks.len()
    );
    let reports = roots
        .iter()
        .map(|&(title, needle)| {
            let found = program.find(needle);
            let title = if found.len() > 1 {
                format!("{title} ({} functions)", found.len())
            } else {
                title.to_owned()
            };
            check_root(&g, &title, &found, &is_sink, &|_| false, list)
        })
        .collect();
    ArtifactReport {
        header,
        sinks,
        roots: reports,
        notes: vec![],
    }
}

/// Checks the perf DLL program (names from its COFF symbols).
pub fn check_dll(program: &Program, list: bool) -> ArtifactReport {
    let g = Graph::build(program);
    let sink = |n: &str| is_sink(n) || is_fatal(n);
    let n_sinks = program.names.values().filter(|n| sink(n)).count();
    let header = format!(
        "perf DLL: {} functions, {n_sinks} of them panic machinery (std's; present, to be \
         unreachable)",
        g.starts.len()
    );
    let export = |e: &str| -> Vec<u64> {
        program
            .names
            .iter()
            .filter(|(_, n)| n.as_str() == e)
            .map(|(&a, _)| a)
            .take(1)
            .collect()
    };
    let [collect, open, close] = DLL_EXPORTS.map(export);
    let impls: BTreeSet<u64> = program
        .names
        .iter()
        .filter(|(_, n)| is_dll_trait_impl(n))
        .map(|(&a, _)| a)
        .collect();
    let vtables: Vec<&Vec<u64>> = g
        .vtables
        .values()
        .filter(|fns| fns.iter().any(|f| impls.contains(f)))
        .collect();
    let mut dyn_roots: BTreeSet<u64> = vtables.iter().flat_map(|v| v.iter().copied()).collect();
    dyn_roots.extend(impls.iter().copied());
    let mut together: Vec<u64> = collect.iter().chain(&close).chain(&open).copied().collect();
    let mut roots = vec![
        check_root(
            &g,
            "CollectPerformanceData",
            &collect,
            &sink,
            &|_| false,
            list,
        ),
        check_root(&g, "ClosePerformanceData", &close, &sink, &|_| false, list),
        check_root(&g, "OpenPerformanceData", &open, &sink, &|_| false, list),
    ];
    if !collect.is_empty() && !close.is_empty() && !open.is_empty() {
        together.extend(dyn_roots.iter().copied());
        let title = format!(
            "OpenPerformanceData + CollectPerformanceData + ClosePerformanceData + {} functions \
             of the {} vtables of the DLL's trait objects",
            dyn_roots.len(),
            vtables.len()
        );
        roots.push(check_root(&g, &title, &together, &sink, &|_| false, list));
    }
    let mut notes = vec![];
    if vtables.is_empty() {
        // Without the vtables the combined root would silently lose the `dyn` methods.
        roots.push(RootReport {
            title: "the vtables of the DLL's trait objects (`ObjectSource`, `SnapshotSource`, \
                    `Logger`)"
                .into(),
            verdict: Verdict::Missing,
            listing: vec![],
        });
    }
    let reach = g.reach(&together, &g.edges, &|_| false);
    let mut sites = String::new();
    let mut n = 0;
    for &f in &reach.order {
        for &a in g.indirect.get(&f).into_iter().flatten() {
            n += 1;
            if list {
                let _ = write!(sites, "\n    {a:#x} in {}", program.pretty(f));
            }
        }
    }
    notes.push(format!(
        "indirect calls in code reachable from Collect/Close: {n} (their targets: the vtables \
         above and the address-taken functions){sites}"
    ));
    ArtifactReport {
        header,
        sinks: vec![],
        roots,
        notes,
    }
}
