// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw`: the pcw-rs command line, one subcommand per module.
//!
//! Exit codes, for every subcommand: 0 success; 1 usage, I/O or other operational errors;
//! 2 the input was read but is invalid (for `dump`: malformed performance data). The manifest
//! commands exit 1 on a manifest with errors, as CTRPP does. A `typeperf` run stopped by
//! SIGINT (Ctrl+C) or SIGTERM keeps the samples it took and exits 128 + the signal's number
//! (130, 143), as a shell reports a command the signal ended; on Unix every other command,
//! and a `typeperf` run that a wait keeps from stopping within 2 seconds, is ended by the
//! signal itself once its outputs' temporary files are removed (`signals`). One more, from a driver image the
//! loader runs (`--image`): 86 when the image faults (a bad pointer, `ud2`, `int3`, a divide
//! error, a call through a NULL pointer), bugchecks, or does not return from a call within
//! `PCW_LOADER_TIMEOUT` seconds (30 by default) — the loader's stop, printed as
//! `pcw-loader: stopped: …` naming what and where in the image (pcw-loader's documentation).
//! Errors are printed to stderr as `error: …`.
//!
//! Files and streams go through pcw-io, the same way in every subcommand: inputs are read with
//! a size bound, text files decoded one way, outputs written all-or-nothing (never over an
//! input, never half-written), and a standard stream that is closed, broken or full ends the
//! command with exit status 1 instead of a panic.
//!
//! To add a command: a module with an `Args` struct (clap `Args` derive) and
//! `run(&Args) -> Result<(), E>` where `E: Failure`, a variant of [`Command`], and one arm in
//! [`main`].
#![forbid(
    unsafe_code,
    reason = "arguments, files and printing; loading and simulating drivers is unsafe work kept behind the safe APIs of pcw-harness and pcw-sim"
)]

mod dump;
mod export;
mod list;
mod manifest;
mod new;
mod signals;
mod typeperf;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tools for Windows performance counters.
#[derive(Debug, Parser)]
#[command(name = "pcw", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Decode, validate and print a binary `PERF_DATA_BLOCK` (a raw `HKEY_PERFORMANCE_DATA`
    /// reply saved to a file).
    Dump(dump::Args),
    /// Check counter manifests (`.man`) and print every diagnostic; exit 1 on any error.
    Lint(manifest::LintArgs),
    /// Generate the Rust register/add module (and `.rc`, lodctr `.ini`/`.h`) from a manifest;
    /// `--to-rust` writes its `counters!` declaration, `--from-rust` derives a declaration's
    /// manifest.
    Gen(manifest::GenArgs),
    /// Print a manifest's resolved counter layout (`--json`: the pcw-gen-inspect document).
    Inspect(manifest::InspectArgs),
    /// Sample a driver's countersets under the simulated kernel, typeperf-style: `pcw typeperf
    /// --image X.sys --manifest X.man "\Set(*)\*" -sc 5` (or the bundled reference driver's,
    /// without `--image`) prints PDH-CSV.
    Typeperf(typeperf::Args),
    /// Describe countersets like `Get-Counter -ListSet`: type, description, counters with type
    /// and help, paths and paths with instances (`--json` for the `pcw-list` document).
    List(list::Args),
    /// Write the `windows_exporter` `performancecounter` or OpenTelemetry `windowsperfcounters`
    /// configuration for a manifest's countersets, with the metrics they produce.
    Export(export::Args),
    /// Create a new WDM driver crate with counters — a manifest (fresh, or `--manifest` an
    /// existing one), its `Publish` impls, DriverEntry/unload, tests through pcw-harness that
    /// pass on Linux, the cargo-make flow and the INF.
    New(new::Args),
}

/// What a command's error must provide: a message (its `Display`) and an exit code.
trait Failure: std::fmt::Display {
    /// The process exit code for this error (1 operational, 2 invalid input).
    fn exit_code(&self) -> u8;
}

/// Exit code for usage, I/O and other operational errors.
const EXIT_FAILURE: u8 = 1;

fn report<E: Failure>(result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // When standard error itself is what failed, there is nowhere left to say so.
            let _ = pcw_io::console::err(&format!("error: {e}\n"));
            ExitCode::from(e.exit_code())
        }
    }
}

fn main() -> ExitCode {
    signals::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help`/`--version` print to stdout and succeed; usage errors exit 1 (clap's
            // default would be 2, which `pcw` keeps for invalid input).
            let stream = if e.use_stderr() {
                pcw_io::console::Stream::Stderr
            } else {
                pcw_io::console::Stream::Stdout
            };
            let printed = pcw_io::console::write(stream, &e.render().to_string());
            if let Err(failed) = &printed {
                let _ = pcw_io::console::err(&format!("error: {failed}\n"));
            }
            return if e.use_stderr() || printed.is_err() {
                ExitCode::from(EXIT_FAILURE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match &cli.command {
        Command::Dump(args) => report(dump::run(args)),
        Command::Lint(args) => report(manifest::lint(args)),
        Command::Gen(args) => report(manifest::gen_files(args)),
        Command::Inspect(args) => report(manifest::inspect(args)),
        Command::Typeperf(args) => report(typeperf::run(args)),
        Command::List(args) => report(list::run(args)),
        Command::Export(args) => report(export::run(args)),
        Command::New(args) => report(new::run(args)),
    }
}
