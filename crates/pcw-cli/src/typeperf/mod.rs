// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw typeperf`: typeperf's sampling loop — expand counter paths, prime, collect every
//! interval, cook with PDH's formulas, print PDH-CSV — over a driver's real countersets
//! running under pcw-sim's kernel PCW: any driver's cross-built image with its manifest
//! (`--image SYS --manifest FILE`), or the bundled reference driver (its host build, or its
//! image with `--image` alone).
//!
//! ```text
//! pcw typeperf PATH… [-cf FILE] [-sc SAMPLES] [-si INTERVAL] [-o FILE [-f CSV|TSV]] [-y] [--raw]
//! pcw typeperf -q [OBJECT] | -qx [OBJECT]  [-o FILE [-y]] [--manifest FILE]
//! (both forms) [--image SYS [--manifest FILE]] [--sim-queue NAME]… [-provider driver|tidal]
//! ```
//!
//! `-cf FILE` adds the paths of a file (one a line, blank lines ignored; UTF-8 or UTF-16, as
//! every text file the tools read). `-o FILE` writes the
//! samples to a file instead of stdout, as CSV or, with `-f TSV`, tab-separated under the
//! `(PDH-TSV 4.0)` tag. As typeperf asks before overwriting, an existing file is refused unless
//! `-y` is given; the file is written beside its destination and renamed into place when the
//! last sample is written, so a run that fails (a path that does not resolve, a full disk)
//! leaves an existing file as it was and creates none. With `-q`/`-qx`, `-o FILE` (and `-y`)
//! take the listing instead, as typeperf's do; the sampling options (`-sc`, `-si`, `-f`,
//! `--raw`) are refused there. The output may not be one of the
//! inputs (`-cf`, `--manifest`, `--image`). `--raw` follows every cooked column with three raw ones, headed
//! `PATH [first value]`, `PATH [second value]` and `PATH [time base]`: the `PDH_RAW_COUNTER`
//! values the cooked one came from and the counter's time base (blank when its type uses none),
//! so a wrong type or a missing base shows at a glance.
//!
//! `-q [OBJECT]` lists the counter paths of one object (any case) or of all, without
//! instances: `\Object(*)\Counter`, or `\Object\Counter` for sets whose paths name no instance.
//! `-qx` lists one path per live instance instead (counters outer, instances inner, `_Total`
//! last for a `multipleAggregate` set) and warns on stderr about instance names PDH or the
//! exporters mishandle. With `--manifest FILE` alone the manifest's sets are listed and,
//! instance names being run-time values, `-qx` lists `(*)` paths as `-q` does; with
//! `--image` too, the image is loaded and `-qx` lists its live instances. An unknown object is an
//! error naming the objects there are. `--sim-queue NAME` creates a dynamic queue of that name
//! in the simulated driver before anything runs.
//!
//! `-provider tidal` samples the example user-mode service (`pcw-tidal`) instead of the
//! driver: the service runs on a thread against pcw-sim's simulated Perflib (user-mode V2
//! provider side), and collections read it through [`pcw_pdh::UserMode`]; paths,
//! expansion, cooking
//! and output are the same code.
//!
//! What happens, in typeperf's order:
//!
//! 1. Every path (`\\computer\Object(Instance)\Counter`, `docs/pcw-semantics.md`) is parsed with
//!    [`pcw_pdh::CounterPath::parse`] and resolved against the driver's manifest (read with pcw-gen's
//!    `inspect`): the object must be a counterset, the counter pattern must match a displayed
//!    counter (counters without a name — bases, time stamps, `noDisplay` helpers — are never
//!    listed), a single-instance set takes no `(instance)` and a multi-instance set needs one.
//!    The computer, when given, must be `MACHINE`, the simulated host's name.
//! 2. Each sampled counterset is told `PcwCallbackAddCounter` with the mask of the counters
//!    the query needs (PDH does this when a counter is added), then collected once: the
//!    *priming* collection. Instance wildcards are expanded against the instances it returned
//!    (typeperf expands once, at start), in PDH's order: counters outer, instances inner.
//! 3. `SAMPLES` times: wait `INTERVAL`, collect, cook every column from the previous and this
//!    collection (pcw-pdh's [`sample`](pcw_pdh::sample)) and
//!    print a row. Because of the priming collection the first row already shows rates.
//!    A value that cannot be computed (instance gone, negative delta, zero interval) is the
//!    blank cell.
//! 4. `PcwCallbackRemoveCounter` for every set, even after an error.
//!
//! Aggregation: a `globalAggregate` set is shown as one instance (no parentheses) and a
//! `multipleAggregate` set gains a `_Total` instance; their values are the providers'
//! instances combined per counter as the manifest's `aggregate` attribute says (`sum`, `avg`,
//! `min`, `max`; counters without the attribute are summed; `undefined` has no value, a blank
//! cell). Raw values are combined, then cooked, so a summed rate is the rate of the sum. Time
//! and frequency counters named by `perfTimeID`/`perfFreqID` are combined with `max`.
//!
//! Output, as typeperf prints it: an empty line, the header row (`"(PDH-CSV 4.0)"` then every
//! full path `\\PCW-SIM\Object(Instance)\Counter`), one row per sample (the simulated system
//! time, shown in UTC, as `MM/DD/YYYY HH:MM:SS.mmm`, then six-decimal values). typeperf's
//! closing messages (`Exiting, please wait...`, `The command completed successfully.`) go to
//! stderr, so stdout is exactly the CSV document.
//!
//! Ctrl+C (SIGINT, or SIGTERM; on Windows Ctrl+C and Ctrl+Break) stops a run as typeperf's
//! Ctrl+C does: at once, also in the middle of a long `-si` wait, keeping the rows already
//! printed. An `-o` file is committed with them (the header and whole rows: a complete CSV or
//! TSV document), replacing the old file as a finished run would, and no temporary file stays;
//! signals arriving during that commit are caught and change nothing. The command then prints
//! `Exiting, please wait...` and ``error: interrupted by SIGINT: N of M samples taken, kept
//! in `FILE` `` on stderr and exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)
//! rather than typeperf's 0, so that a script can tell a cut-short run from a complete one.
//! An interrupted `-q`/`-qx` listing writes no `-o` file.
//!
//! Differences from typeperf, on purpose: `-sc` defaults to [`options::DEFAULT_SAMPLES`] instead of
//! "until Ctrl+C" (a simulated kernel has nothing to watch forever); times are UTC (the host's
//! time zone is not consulted); the binary log and SQL formats (`-f BIN`, `-f SQL`) and the
//! remote, configuration-file and sampling-rate options are not accepted; an interrupted run
//! exits 130 (SIGINT) or 143 (SIGTERM), not 0.
//!
//! The query itself — catalog, paths, resolution, aggregation, sampling, listing, the CSV
//! format — is pcw-sim's [`pcw_pdh`]; this command parses the arguments
//! ([`options`]), runs the providers ([`host`]), and prints ([`output`]).

mod host;
mod interrupt;
mod options;
mod output;

use pcw_pdh::csv::{COMPLETED_MESSAGE, EXITING_MESSAGE};

pub(crate) use host::{Target, driver_inspect, manifest_catalog, with_driver};
pub(crate) use options::Args;

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use crate::Failure;
use host::tidal_catalog;
use interrupt::Interrupt;
use options::{Options, ProviderChoice, counter_file, take_image};
use output::{Layout, print_listing, sample};

/// Why `pcw typeperf` failed. Every error exits with status 1 but an interrupt, which exits
/// with 128 + the signal's number.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A bad option or a missing path.
    #[error("{0}")]
    Usage(String),
    /// The query failed: a path that does not resolve, an unknown object, a manifest that does
    /// not compile, a collection the simulator refused.
    #[error(transparent)]
    Query(#[from] pcw_pdh::Error),
    /// An input (`-cf`, `--manifest`, `--image`) could not be read.
    #[error(transparent)]
    Input(#[from] pcw_io::InputError),
    /// A text input is not valid text.
    #[error("the {what} `{}` is not text: line {}, column {}: {error}", pcw_io::text::shown(path), error.line, error.column)]
    Text {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Where and why.
        error: pcw_io::TextError,
    },
    /// The `-o` file could not be written (nothing was).
    #[error(transparent)]
    Output(#[from] pcw_io::OutputError),
    /// Standard output or error failed.
    #[error(transparent)]
    Stream(#[from] pcw_io::StreamError),
    /// A `--sim-queue` could not be created.
    #[error(
        "cannot create the simulated queue `{}`: {reason}",
        pcw_gen::text::visible(name)
    )]
    Queue {
        /// The queue name.
        name: String,
        /// Why the driver refused it.
        reason: String,
    },
    /// The manifest could not be read.
    #[error("the counter manifest: {0}")]
    Manifest(#[from] pcw_gen::Error),
    /// The driver failed to load.
    #[error("the driver failed to load: NTSTATUS 0x{0:08X}")]
    Load(u32),
    /// `--image` names a file that cannot be read or mapped.
    #[error("--image {}: {reason}", pcw_io::text::visible(path))]
    Image {
        /// The path as given.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The image left something behind or broke a kernel rule while it ran.
    #[error("the image left something behind or broke a kernel rule: {0}")]
    ImageCheck(String),
    /// Writing the samples failed.
    #[error("writing the output: {0}")]
    Io(#[from] std::io::Error),
    /// The simulated clock left the years a time stamp can show.
    #[error("the simulated clock is outside the years 1 to 9999")]
    ClockRange,
    /// The example service failed.
    #[cfg(feature = "example-service")]
    #[error("the example service: {0}")]
    Service(#[from] pcw_um::Error),
    /// The driver left something behind at unload.
    #[cfg(any(feature = "reference-driver", feature = "example-service"))]
    #[error("the driver did not unload cleanly: {0:?}")]
    Teardown(pcw_sim::kernel_pcw::Teardown),
    /// A counter path of the `-cf` file failed: the query's error, at the path's line.
    #[error("{}:{line}: {source}", pcw_io::text::shown(file))]
    CounterFileLine {
        /// The `-cf` file.
        file: PathBuf,
        /// The path's line (from 1).
        line: usize,
        /// The query's error.
        source: pcw_pdh::Error,
    },
    /// A signal handler could not be installed.
    #[error("cannot catch Ctrl+C: {0}")]
    Signals(std::io::Error),
    /// SIGINT or SIGTERM (Ctrl+C, Ctrl+Break) stopped the run; what was done is kept.
    #[error("interrupted by {}: {kept}", crate::signals::name(*signal))]
    Interrupted {
        /// The signal.
        signal: i32,
        /// What the run leaves: the samples taken and where they are.
        kept: String,
    },
}

impl Failure for Error {
    fn exit_code(&self) -> u8 {
        match self {
            Self::Interrupted { signal, .. } => crate::signals::exit_code(*signal),
            _ => crate::EXIT_FAILURE,
        }
    }
}

/// `pcw typeperf`: lists (`-q`/`-qx`) or samples the simulated driver's countersets (or lists
/// a manifest's with `--manifest`).
///
/// # Errors
/// [`Error`].
pub(crate) fn run(args: &Args) -> Result<(), Error> {
    let (image, rest) = take_image(&args.args)?;
    let mut options = Options::parse(&rest)?;
    if let Some(query_args) = &options.query {
        let (interrupt, mut file) = open_output(&options, image.as_deref())?;
        let mut stdout = pcw_io::console::Writer::new(pcw_io::console::Stream::Stdout);
        let out: &mut dyn Write = match &mut file {
            Some(f) => f,
            None => &mut stdout,
        };
        let listed = match (&options.manifest, &image) {
            (Some(manifest), None) => manifest_catalog(manifest)
                .and_then(|(_, catalog)| print_listing(None, &catalog, query_args, out)),
            _ if options.provider == ProviderChoice::Tidal => {
                tidal_catalog().and_then(|catalog| print_listing(None, &catalog, query_args, out))
            }
            _ => with_driver(&target(&options, image.as_deref()), |kernel, catalog| {
                print_listing(Some(kernel), catalog, query_args, out)
            }),
        };
        let warnings = listed.map_err(|e| written_to(e, file.as_ref()))?;
        if let Some(signal) = interrupt.signal() {
            // The listing is not committed (dropping the file removes it): the run was stopped.
            let kept = file.as_ref().map_or_else(String::new, |f| {
                format!("`{}` left as it was", pcw_io::text::shown(f.path()))
            });
            return Err(Error::Interrupted { signal, kept });
        }
        if let Some(file) = file {
            file.commit()?;
        }
        let mut text = String::new();
        for w in warnings {
            let _ = writeln!(text, "warning: {w}");
        }
        let _ = writeln!(text, "{COMPLETED_MESSAGE}");
        pcw_io::console::err(&text)?;
        return Ok(());
    }
    if options.manifest.is_some() && image.is_none() {
        return Err(Error::Usage(
            "`--manifest` samples only with `--image` (the driver whose countersets it \
             declares); alone it lists them with `-q`/`-qx`"
                .to_owned(),
        ));
    }
    // The `-cf` paths' lines, to say where a path that fails is.
    let mut lines = Vec::new();
    if let Some(file) = &options.counter_file {
        lines = counter_file(file)?;
        let given = options.paths.len();
        options.paths.extend(lines.iter().map(|(p, _)| p.clone()));
        lines.retain(|(p, _)| !options.paths.iter().take(given).any(|q| q == p));
        if options.paths.is_empty() {
            return Err(Error::Usage(format!(
                "the counter file `{}` has no counter path",
                pcw_io::text::shown(file)
            )));
        }
    }
    let (interrupt, mut file) = open_output(&options, image.as_deref())?;
    let mut stdout = pcw_io::console::Writer::new(pcw_io::console::Stream::Stdout);
    let out: &mut dyn Write = match &mut file {
        Some(f) => f,
        None => &mut stdout,
    };
    let mut wait = |interval| interrupt.wait(interval);
    let sampled = if options.provider == ProviderChoice::Tidal {
        run_tidal(&options, &mut wait, out)
    } else {
        with_driver(&target(&options, image.as_deref()), |kernel, catalog| {
            sample(
                kernel,
                kernel,
                catalog,
                &options.paths,
                (options.samples, options.interval),
                layout(&options),
                &mut wait,
                out,
            )
        })
    };
    let taken = sampled
        .map_err(|e| at_line(e, options.counter_file.as_deref(), &lines))
        .map_err(|e| written_to(e, file.as_ref()))?;
    // Stopped early or not, the rows written are a whole document: the file is committed.
    let kept = file.as_ref().map_or_else(String::new, |f| {
        format!(", kept in `{}`", pcw_io::text::shown(f.path()))
    });
    if let Some(file) = file {
        file.commit()?;
    }
    if taken < options.samples {
        let signal = interrupt.signal().unwrap_or(0);
        // A closed terminal (SIGHUP) takes no more text: the run still ends as the signal says.
        let _ = pcw_io::console::err(&format!("{EXITING_MESSAGE}\n"));
        let kept = format!("{taken} of {} samples taken{kept}", options.samples);
        return Err(Error::Interrupted { signal, kept });
    }
    pcw_io::console::err(&format!("{EXITING_MESSAGE}\n{COMPLETED_MESSAGE}\n"))?;
    Ok(())
}

/// A query's error about a path that only the `-cf` file gave, with the file and the line.
fn at_line(e: Error, file: Option<&std::path::Path>, lines: &[(String, usize)]) -> Error {
    let line = match (&e, file) {
        // Too many columns is the total's fault, not one line's.
        (Error::Query(pcw_pdh::Error::TooManyColumns { .. }), _) => None,
        (Error::Query(q), Some(_)) => q
            .path()
            .and_then(|p| lines.iter().find(|(l, _)| l == p))
            .map(|(_, n)| *n),
        _ => None,
    };
    match (e, file, line) {
        (Error::Query(source), Some(file), Some(line)) => Error::CounterFileLine {
            file: file.to_path_buf(),
            line,
            source,
        },
        (e, ..) => e,
    }
}

/// A failed write named by where it went: standard output, or the `-o` file.
fn written_to(e: Error, file: Option<&pcw_io::OutputFile>) -> Error {
    match (e, file) {
        (Error::Io(source), None) => Error::Stream(pcw_io::StreamError {
            stream: pcw_io::console::Stream::Stdout,
            source,
        }),
        (Error::Io(source), Some(file)) => Error::Output(pcw_io::OutputError::Write {
            path: file.path().to_path_buf(),
            source,
        }),
        (other, _) => other,
    }
}

/// The driver the options name.
fn target<'a>(options: &'a Options, image: Option<&'a str>) -> Target<'a> {
    Target {
        image,
        manifest: options.manifest.as_deref(),
        queues: &options.sim_queues,
    }
}

fn layout(options: &Options) -> Layout {
    Layout {
        format: options.format,
        raw: options.raw,
    }
}

/// Ctrl+C caught from now on, and `-o`'s file, checked before anything runs (not an input;
/// an existing file only with `-y`) and staged beside its destination, which it replaces only
/// when committed.
///
/// Signals are caught before the temporary file exists, so that no interrupt can leave it
/// behind; but after a FIFO or device is opened, as that open waits for a reader and Ctrl+C
/// must still end the wait.
fn open_output(
    options: &Options,
    image: Option<&str>,
) -> Result<(Interrupt, Option<pcw_io::OutputFile>), Error> {
    let Some(path) = &options.output else {
        return Ok((Interrupt::watch()?, None));
    };
    let staged = std::fs::metadata(path).map_or(true, |m| m.is_file() || m.is_dir());
    let early = if staged {
        Some(Interrupt::watch()?)
    } else {
        None
    };
    let mut outputs = pcw_io::Outputs::new();
    for input in [&options.counter_file, &options.manifest]
        .into_iter()
        .flatten()
    {
        outputs.input(input);
    }
    if let Some(image) = image {
        outputs.input(std::path::Path::new(image));
    }
    let overwrite = (!options.overwrite).then_some("add `-y` to overwrite it");
    let file = outputs.open(path, overwrite)?;
    let interrupt = match early {
        Some(interrupt) => interrupt,
        None => Interrupt::watch()?,
    };
    Ok((interrupt, Some(file)))
}

/// `pcw typeperf -provider tidal`: boots the simulated kernel (for its clock), starts the
/// example service (a tick every 100 ms on the real clock), samples it through the simulated
/// Perflib, and stops it.
///
/// # Errors
/// [`Error`].
fn run_tidal(
    options: &Options,
    wait: &mut dyn FnMut(std::time::Duration) -> bool,
    out: &mut dyn Write,
) -> Result<u32, Error> {
    let catalog = tidal_catalog()?;
    #[cfg(not(feature = "example-service"))]
    {
        let _ = (options, wait, out, catalog);
        Ok(0)
    }
    #[cfg(feature = "example-service")]
    run_service(options, wait, out, &catalog)
}

/// The example service started, sampled and stopped.
#[cfg(feature = "example-service")]
fn run_service(
    options: &Options,
    wait: &mut dyn FnMut(std::time::Duration) -> bool,
    out: &mut dyn Write,
    catalog: &pcw_pdh::Catalog,
) -> Result<u32, Error> {
    use pcw_pdh::UserMode;
    use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Clock, Kernel};
    use std::time::Duration;

    let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Real);
    let service = pcw_tidal::Service::start(Duration::from_millis(100))?;
    let result = sample(
        &kernel,
        &UserMode,
        catalog,
        &options.paths,
        (options.samples, options.interval),
        layout(options),
        wait,
        out,
    );
    let stopped = service.stop();
    let report = kernel.teardown();
    let taken = result?;
    stopped?;
    if !report.is_clean() {
        return Err(Error::Teardown(report));
    }
    Ok(taken)
}

#[cfg(all(test, feature = "reference-driver", feature = "example-service"))]
mod tests {
    use std::time::Duration;

    use pcw_gen::model::Instances;
    use pcw_pdh::TOTAL_INSTANCE;
    use pcw_pdh::csv::CsvTimestamp;
    use pcw_pdh::listing::{live_instances, set_paths};
    use pcw_sim::kernel_pcw::{BOOT_SYSTEM_TIME, PERF_FREQUENCY, Request};

    use super::host::driver_catalog;
    use super::options::{FileFormat, Query};
    use super::*;
    use pcw_pdh::{Catalog, UserMode};
    use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Clock, Kernel};

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    /// Runs typeperf on the manual clock; `between` runs in every sleep, before the clock
    /// moves by the interval.
    fn run_manual(
        kernel: &Kernel,
        paths: &[&str],
        samples: u32,
        interval: Duration,
        between: &mut dyn FnMut(&Kernel),
    ) -> Result<Vec<Vec<String>>, Error> {
        let catalog = driver_catalog().unwrap();
        let mut out = Vec::new();
        let mut sleep = |d: Duration| {
            between(kernel);
            kernel.advance(i64::try_from(d.as_nanos() / 100).unwrap());
            true
        };
        sample(
            kernel,
            kernel,
            &catalog,
            &args(paths),
            (samples, interval),
            Layout::default(),
            &mut sleep,
            &mut out,
        )?;
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with('\n'), "typeperf starts with an empty line");
        Ok(text.lines().skip(1).map(parse_csv_line).collect())
    }

    fn parse_csv_line(line: &str) -> Vec<String> {
        pcw_pdh::csv::parse_row(line).unwrap()
    }

    fn boot() -> Kernel {
        let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Manual);
        // Start away from 0 so the load time is a real time stamp.
        kernel.advance(5 * 10_000_000);
        pcw_driver::lifecycle::load().unwrap();
        kernel
    }

    fn finish(kernel: Kernel) {
        pcw_driver::lifecycle::unload();
        let report = kernel.teardown();
        assert!(report.is_clean(), "{report:?}");
    }

    fn num(s: &str) -> f64 {
        s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
    }

    /// The example user-mode service under the simulated Perflib, sampled by the same code as
    /// the driver: every cooked value is what the service published at that tick.
    #[test]
    fn tidal_service_values_follow_what_it_set() {
        let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Manual);
        kernel.advance(5 * 10_000_000);
        let catalog = tidal_catalog().unwrap();
        let provider = pcw_tidal::counters::start().unwrap();
        let publisher = pcw_tidal::Publisher::new(&provider).unwrap();
        publisher.publish(0).unwrap();
        let mut tick = 0;
        let mut sleep = |d: Duration| {
            tick += 7;
            publisher.publish(tick).unwrap();
            kernel.advance(i64::try_from(d.as_nanos() / 100).unwrap());
            true
        };
        let mut out = Vec::new();
        sample(
            &kernel,
            &UserMode,
            &catalog,
            &args(&[r"\Tidal Harbors(*)\Water Level", r"\Tidal Moon\*"]),
            (3, Duration::from_secs(1)),
            Layout::default(),
            &mut sleep,
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<Vec<String>> = text.lines().skip(1).map(parse_csv_line).collect();
        assert_eq!(
            rows[0][1..],
            [
                r"\\PCW-SIM\Tidal Harbors(North)\Water Level",
                r"\\PCW-SIM\Tidal Harbors(South)\Water Level",
                r"\\PCW-SIM\Tidal Harbors(_Total)\Water Level",
                r"\\PCW-SIM\Tidal Moon\Pull",
                r"\\PCW-SIM\Tidal Moon\Phase",
                r"\\PCW-SIM\Tidal Moon\Pull Fraction",
            ],
            "the base `Full Pull` (named, `noDisplay`) is not listed"
        );
        for (row, n) in rows[1..].iter().zip([7u32, 14, 21]) {
            let (north, south, _, pull, phase, full) = pcw_tidal::expected(n);
            let got: Vec<f64> = row[1..].iter().map(|v| num(v)).collect();
            let want = [
                f64::from(north),
                f64::from(south),
                f64::from(north + south),
                f64::from(pull),
                // `defaultScale="1"`: shown ×10.
                f64::from(phase) * 10.0,
                // `perf_raw_fraction` over its base (declared before it): 100 N / B.
                100.0 * f64::from(pull) / f64::from(full),
            ];
            assert_eq!(got, want, "tick {n}");
        }
        drop(publisher);
        drop(provider);
        assert!(kernel.teardown().is_clean());
    }

    #[test]
    fn waves_on_the_manual_clock() {
        let kernel = boot();
        let rows = run_manual(
            &kernel,
            &[
                r"\Geometric Waves(Small Wave)\*",
                r"\\pcw-sim\Geometric Waves(*)\Square",
            ],
            2,
            Duration::from_secs(1),
            &mut |_| {},
        )
        .unwrap();
        finish(kernel);
        assert_eq!(
            rows[0],
            [
                "(PDH-CSV 4.0)",
                r"\\PCW-SIM\Geometric Waves(Small Wave)\Triangle",
                r"\\PCW-SIM\Geometric Waves(Small Wave)\Square",
                r"\\PCW-SIM\Geometric Waves(Small Wave)\Square",
                r"\\PCW-SIM\Geometric Waves(Medium Wave)\Square",
                r"\\PCW-SIM\Geometric Waves(Large Wave)\Square",
            ]
        );
        // Boot at BOOT_SYSTEM_TIME (a midnight, UTC, at the start of a wave period), +5 s
        // before load, +1 s per sample. At 6 s into the ten-second period the triangle of the
        // small wave (40 + 20·|5−6|/5) is 44 and every square is low (its minimum); at 7 s the
        // triangle is 48.
        let at = |seconds: i64| {
            CsvTimestamp::from_filetime(BOOT_SYSTEM_TIME + seconds * 10_000_000)
                .unwrap()
                .to_string()
        };
        assert!(at(6).ends_with(" 00:00:06.000"), "{}", at(6));
        assert_eq!(
            rows[1],
            [
                at(6).as_str(),
                "44.000000",
                "40.000000",
                "40.000000",
                "30.000000",
                "20.000000"
            ]
        );
        assert_eq!(rows[2][0], at(7));
        assert_eq!(rows[2][1], "48.000000");
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn statistics_are_cooked() {
        let kernel = boot();
        let waves = Request {
            instance_mask: Some("Small*".to_owned()),
            ..Request::default()
        };
        // Four collections of the waves between samples, each keeping 1 of 3 instances.
        let rows = run_manual(
            &kernel,
            &[r"\PCW Provider Statistics\*"],
            3,
            Duration::from_millis(500),
            &mut |k| {
                for _ in 0..4 {
                    k.collect("Geometric Waves", &waves).unwrap();
                }
            },
        )
        .unwrap();
        finish(kernel);
        assert_eq!(
            rows[0],
            [
                "(PDH-CSV 4.0)",
                r"\\PCW-SIM\PCW Provider Statistics\Collections/sec",
                r"\\PCW-SIM\PCW Provider Statistics\Instances Returned",
                r"\\PCW-SIM\PCW Provider Statistics\Avg. Collect Time",
                r"\\PCW-SIM\PCW Provider Statistics\% Instances Filtered",
                r"\\PCW-SIM\PCW Provider Statistics\Time Since Load",
            ]
        );
        assert_eq!(rows.len(), 4);
        for (i, row) in rows[1..].iter().enumerate() {
            let n = f64::from(u32::try_from(i).unwrap() + 1);
            // 4 collections in 0.5 s.
            assert_eq!(row[1], "8.000000", "{row:?}");
            // One instance returned per collection, cumulative.
            assert!((num(&row[2]) - 4.0 * n).abs() < 1e-9, "{row:?}");
            // The manual clock does not move during a callback: every timed collection took
            // 0 ticks, and the average timer's base moved, so 0 s.
            assert_eq!(row[3], "0.000000", "{row:?}");
            // 2 of 3 considered instances filtered out, from load on.
            assert_eq!(row[4], "66.666667", "{row:?}");
            // Loaded at 5 s; now 0.5 s per sample later.
            assert!((num(&row[5]) - 0.5 * n).abs() < 1e-9, "{row:?}");
        }
    }

    #[test]
    fn dynamic_queues_rates() {
        let kernel = boot();
        let name: Vec<u16> = "rx0".encode_utf16().collect();
        let rx = pcw_driver::queues::create(&name).unwrap();
        let name: Vec<u16> = "tx0".encode_utf16().collect();
        let tx = pcw_driver::queues::create(&name).unwrap();
        let mut step = 0u64;
        let rows = run_manual(
            &kernel,
            &[r"\PCW Dynamic Queues(*)\*"],
            3,
            Duration::from_secs(2),
            &mut |_| {
                step += 1;
                assert!(pcw_driver::queues::record(rx, 100 * step, 1500 * step, 7));
                assert!(pcw_driver::queues::record(tx, 10, 64, 0));
            },
        )
        .unwrap();
        assert!(pcw_driver::queues::close(tx));
        finish(kernel);
        assert_eq!(
            rows[0][1..],
            [
                r"\\PCW-SIM\PCW Dynamic Queues(rx0)\Packets/sec",
                r"\\PCW-SIM\PCW Dynamic Queues(tx0)\Packets/sec",
                r"\\PCW-SIM\PCW Dynamic Queues(rx0)\Bytes Total",
                r"\\PCW-SIM\PCW Dynamic Queues(tx0)\Bytes Total",
                r"\\PCW-SIM\PCW Dynamic Queues(rx0)\Depth",
                r"\\PCW-SIM\PCW Dynamic Queues(tx0)\Depth",
            ]
        );
        // rx: 100, 200, 300 packets per 2 s; tx: 10 per 2 s.
        let expected = [
            [
                "50.000000",
                "5.000000",
                "1500.000000",
                "64.000000",
                "7.000000",
                "0.000000",
            ],
            [
                "100.000000",
                "5.000000",
                "4500.000000",
                "128.000000",
                "7.000000",
                "0.000000",
            ],
            [
                "150.000000",
                "5.000000",
                "9000.000000",
                "192.000000",
                "7.000000",
                "0.000000",
            ],
        ];
        for (row, want) in rows[1..].iter().zip(expected) {
            assert_eq!(row[1..], want);
        }
    }

    #[test]
    fn a_closed_instance_prints_blank_cells() {
        let kernel = boot();
        let name: Vec<u16> = "gone".encode_utf16().collect();
        let id = pcw_driver::queues::create(&name).unwrap();
        let mut first = true;
        let rows = run_manual(
            &kernel,
            &[r"\PCW Dynamic Queues(gone)\Depth"],
            2,
            Duration::from_secs(1),
            &mut |_| {
                if !first {
                    assert!(pcw_driver::queues::close(id));
                }
                first = false;
            },
        )
        .unwrap();
        finish(kernel);
        assert_eq!(rows[1][1], "0.000000");
        assert_eq!(rows[2][1], " ");
    }

    #[test]
    fn resolution_errors() {
        let kernel = boot();
        let run = |path: &str| {
            run_manual(&kernel, &[path], 1, Duration::from_secs(1), &mut |_| {}).unwrap_err()
        };
        for (path, want) in [
            (r"\Nope\*", "UnknownObject"),
            (r"\Geometric Waves(*)\Sine", "UnknownCounter"),
            // Helper counters are not counters one can name.
            (r"\PCW Provider Statistics\Now", "UnknownCounter"),
            (r"Geometric Waves\x", "Path"),
            (r"\\OTHER\Geometric Waves(*)\*", "UnknownComputer"),
            (r"\PCW Provider Statistics(x)\*", "UnexpectedInstance"),
            (r"\Geometric Waves\Square", "MissingInstance"),
            (r"\Geometric Waves(Tiny*)\Square", "NoInstance"),
            (r"\Geometric Waves(Small Wave#1)\Square", "NoInstance"),
            // An empty dynamic set has nothing to expand to.
            (r"\PCW Dynamic Queues(*)\*", "NoInstance"),
        ] {
            let Error::Query(e) = run(path) else {
                panic!("{path}: not a query error");
            };
            let got = format!("{e:?}");
            assert!(got.starts_with(&format!("{want} {{")), "{path}: {got}");
        }
        finish(kernel);
    }

    fn query_text(
        kernel: Option<&Kernel>,
        catalog: &Catalog,
        q: &Query,
    ) -> (Vec<String>, Vec<String>) {
        let mut out = Vec::new();
        let warnings = print_listing(kernel, catalog, q, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        (text.lines().map(str::to_owned).collect(), warnings)
    }

    #[test]
    fn qx_lists_the_three_sets_with_their_instances() {
        let kernel = boot();
        let name: Vec<u16> = "eth0 rx#1".encode_utf16().collect();
        let queue = pcw_driver::queues::create(&name).unwrap();
        let catalog = driver_catalog().unwrap();
        let all = Query {
            object: None,
            instances: true,
        };
        let (lines, warnings) = query_text(Some(&kernel), &catalog, &all);
        let (listed, _) = query_text(
            Some(&kernel),
            &catalog,
            &Query {
                object: Some("pcw dynamic queues".to_owned()),
                instances: false,
            },
        );
        assert!(pcw_driver::queues::close(queue));
        finish(kernel);
        let mut expected: Vec<String> = Vec::new();
        for counter in ["Triangle", "Square"] {
            for (wave, _) in pcw_driver::waves::WAVES {
                expected.push(format!(r"\Geometric Waves({wave})\{counter}"));
            }
        }
        for counter in [
            "Collections/sec",
            "Instances Returned",
            "Avg. Collect Time",
            "% Instances Filtered",
            "Time Since Load",
        ] {
            expected.push(format!(r"\PCW Provider Statistics\{counter}"));
        }
        for counter in ["Packets/sec", "Bytes Total", "Depth"] {
            expected.push(format!(r"\PCW Dynamic Queues(eth0 rx#1)\{counter}"));
        }
        assert_eq!(lines, expected);
        assert_eq!(
            warnings,
            [
                "instance `eth0 rx#1` of `PCW Dynamic Queues`: `#` in the name: PDH reads `#n` as a duplicate-instance index"
            ]
        );
        assert_eq!(
            listed,
            [
                r"\PCW Dynamic Queues(*)\Packets/sec",
                r"\PCW Dynamic Queues(*)\Bytes Total",
                r"\PCW Dynamic Queues(*)\Depth",
            ]
        );
    }

    #[test]
    fn raw_columns_follow_the_cooked_ones() {
        let kernel = boot();
        let catalog = driver_catalog().unwrap();
        let mut out = Vec::new();
        let mut sleep = |d: Duration| {
            kernel
                .collect("Geometric Waves", &Request::default())
                .unwrap();
            kernel.advance(i64::try_from(d.as_nanos() / 100).unwrap());
            true
        };
        sample(
            &kernel,
            &kernel,
            &catalog,
            &args(&[
                r"\PCW Provider Statistics\Avg. Collect Time",
                r"\Geometric Waves(Small Wave)\Triangle",
            ]),
            (2, Duration::from_secs(1)),
            Layout {
                format: FileFormat::Tsv,
                raw: true,
            },
            &mut sleep,
            &mut out,
        )
        .unwrap();
        finish(kernel);
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<Vec<String>> = text
            .lines()
            .skip(1)
            .map(|l| {
                l.split('\t')
                    .map(|c| c.trim_matches('"').to_owned())
                    .collect()
            })
            .collect();
        let avg = r"\\PCW-SIM\PCW Provider Statistics\Avg. Collect Time";
        let tri = r"\\PCW-SIM\Geometric Waves(Small Wave)\Triangle";
        assert_eq!(
            rows[0],
            [
                "(PDH-TSV 4.0)".to_owned(),
                avg.to_owned(),
                format!("{avg} [first value]"),
                format!("{avg} [second value]"),
                format!("{avg} [time base]"),
                tri.to_owned(),
                format!("{tri} [first value]"),
                format!("{tri} [second value]"),
                format!("{tri} [time base]"),
            ]
        );
        for row in &rows[1..] {
            assert_eq!(row.len(), 9, "{row:?}");
            // The average timer: ticks (0 on the manual clock), the count of timed
            // collections as its base, and the performance counter's frequency.
            assert_eq!(row[2], "0");
            assert!(row[3].parse::<u64>().unwrap() >= 1, "{row:?}");
            assert_eq!(row[4], PERF_FREQUENCY.to_string());
            // A raw count: the value itself, no second value, no time base.
            assert_eq!(format!("{}.000000", row[6]), row[5], "{row:?}");
            assert_eq!((row[7].as_str(), row[8].as_str()), ("0", ""));
        }
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn a_multiple_aggregate_set_lists_its_total() {
        // The driver's queue set seen as `multipleAggregate`: the provider's instances, then
        // `_Total`, as PDH enumerates an aggregate set.
        let kernel = boot();
        let name: Vec<u16> = "q1".encode_utf16().collect();
        let queue = pcw_driver::queues::create(&name).unwrap();
        let mut set = driver_catalog().unwrap().sets.remove(2);
        set.instances = Instances::MultipleAggregate;
        let live = live_instances(&kernel, &set).unwrap();
        set.instances = Instances::GlobalAggregate;
        let global = live_instances(&kernel, &set).unwrap();
        assert!(pcw_driver::queues::close(queue));
        finish(kernel);
        assert_eq!(live, ["q1", TOTAL_INSTANCE]);
        assert!(global.is_empty(), "a global aggregate names no instance");
        set.instances = Instances::MultipleAggregate;
        assert_eq!(
            set_paths(&set, Some(&live))[..2],
            [
                r"\PCW Dynamic Queues(q1)\Packets/sec",
                r"\PCW Dynamic Queues(_Total)\Packets/sec"
            ]
        );
    }
}
