// SPDX-License-Identifier: MIT OR Apache-2.0
//! Writes a generated benchmark manifest (`pcw_bench::manifests`) to standard output, for
//! `scripts/bench.sh`'s measurement of the `pcw lint` binary and for profiling the manifest
//! tools by hand:
//!
//! ```text
//! pcw-bench-manifest COUNTERS [--user] [--one-line] > bench.man
//! ```
//!
//! `--user`: a user-mode schema 1.1 provider instead of a kernel-mode schema 2.0 one;
//! `--one-line`: the whole document on one line.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

use std::io::Write as _;
use std::process::ExitCode;

use pcw_bench::manifests::{Spec, manifest};

// The library links the driver and pcw-um, whose PCW and Perflib routines every binary must
// resolve: nothing here calls them, but a build that keeps every reference (AddressSanitizer's)
// links them all.
pcw_bench::noop_pcw!();
pcw_bench::noop_perflib!();

fn main() -> ExitCode {
    let mut counters = None;
    let mut user = false;
    let mut one_line = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--user" => user = true,
            "--one-line" => one_line = true,
            n => match n.parse::<usize>() {
                Ok(n) if counters.is_none() => counters = Some(n),
                _ => {
                    eprintln!("usage: pcw-bench-manifest COUNTERS [--user] [--one-line]");
                    return ExitCode::from(2);
                }
            },
        }
    }
    let Some(counters) = counters else {
        eprintln!("usage: pcw-bench-manifest COUNTERS [--user] [--one-line]");
        return ExitCode::from(2);
    };
    let mut spec = if user {
        Spec::user(counters)
    } else {
        Spec::kernel(counters)
    };
    spec.one_line = one_line;
    let text = manifest(&spec);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        eprintln!("error: cannot write the manifest: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
