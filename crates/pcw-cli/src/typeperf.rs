// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw typeperf`: typeperf's sampling loop — expand counter paths, prime, collect every
//! interval, cook with PDH's formulas, print PDH-CSV — over the driver's real countersets
//! running under pcw-sim's kernel PCW.
//!
//! ```text
//! pcw typeperf PATH… [-cf FILE] [-sc SAMPLES] [-si INTERVAL] [-o FILE [-f CSV|TSV]] [-y] [--raw]
//! pcw typeperf -q [OBJECT] | -qx [OBJECT]  [--manifest FILE]
//! (both forms) [--sim-queue NAME]… [--image SYS] [-provider driver|tidal]
//! ```
//!
//! `-cf FILE` adds the paths of a file (one a line, blank lines ignored). `-o FILE` writes the
//! samples to a file instead of stdout, as CSV or, with `-f TSV`, tab-separated under the
//! `(PDH-TSV 4.0)` tag; `-y` (typeperf's "overwrite without asking") is accepted, the file is
//! always overwritten. `--raw` follows every cooked column with three raw ones, headed
//! `PATH [first value]`, `PATH [second value]` and `PATH [time base]`: the `PDH_RAW_COUNTER`
//! values the cooked one came from and the counter's time base (blank when its type uses none),
//! so a wrong type or a missing base shows at a glance.
//!
//! `-q [OBJECT]` lists the counter paths of one object (any case) or of all, without
//! instances: `\Object(*)\Counter`, or `\Object\Counter` for sets whose paths name no instance.
//! `-qx` lists one path per live instance instead (counters outer, instances inner, `_Total`
//! last for a `multipleAggregate` set) and warns on stderr about instance names PDH or the
//! exporters mishandle. With `--manifest FILE` the manifest's sets are listed and, instance
//! names being run-time values, `-qx` lists `(*)` paths as `-q` does. An unknown object is an
//! error naming the objects there are. `--sim-queue NAME` creates a dynamic queue of that name
//! in the simulated driver before anything runs.
//!
//! `-provider tidal` samples the example user-mode service (`pcw-tidal`) instead of the
//! driver: the service runs on a thread against pcw-sim's simulated Perflib (user-mode V2
//! provider side), and collections read it through [`UserMode`]; paths, expansion, cooking
//! and output are the same code.
//!
//! What happens, in typeperf's order:
//!
//! 1. Every path (`\\computer\Object(Instance)\Counter`, `docs/pcw-semantics.md`) is parsed with
//!    [`CounterPath::parse`] and resolved against the driver's manifest (read with pcw-gen's
//!    `inspect`): the object must be a counterset, the counter pattern must match a displayed
//!    counter (counters without a name — bases, time stamps, `noDisplay` helpers — are never
//!    listed), a single-instance set takes no `(instance)` and a multi-instance set needs one.
//!    The computer, when given, must be [`MACHINE`], the simulated host's name.
//! 2. Each sampled counterset is told `PcwCallbackAddCounter` with the mask of the counters
//!    the query needs (PDH does this when a counter is added), then collected once: the
//!    *priming* collection. Instance wildcards are expanded against the instances it returned
//!    (typeperf expands once, at start), in PDH's order: counters outer, instances inner.
//! 3. `SAMPLES` times: wait `INTERVAL`, collect, cook every column from the previous and this
//!    collection ([`RawSample::for_counter`], [`cook`] with typeperf's [`FORMAT_FLAGS`]) and
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
//! Differences from typeperf, on purpose: `-sc` defaults to [`DEFAULT_SAMPLES`] instead of
//! "until Ctrl+C" (a simulated kernel has nothing to watch forever); times are UTC (the host's
//! time zone is not consulted); the binary log and SQL formats (`-f BIN`, `-f SQL`) and the
//! remote, configuration-file and sampling-rate options are not accepted.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcw_core::counter_type::CounterType;
use pcw_sim::kernel::{
    BOOT_SYSTEM_TIME, BUILD_SERVER_2022, Clock, Collection, Instance, Kernel, PERF_FREQUENCY,
    Request, SimError, Teardown,
};
use pcw_sim::pdh::{RawSample, SampleTimes, cook, timebase};
use pcw_sim::typeperf::{
    COMPLETED_MESSAGE, CounterPath, CsvTimestamp, EXITING_MESSAGE, FORMAT_FLAGS, HEADER_TAG,
    InstanceIndex, PathError, format_value, header_row, quote_field, sample_row, wildcard_match,
};

use crate::Failure;

/// The simulated computer's name: what `\\computer` may say and what the header shows.
pub const MACHINE: &str = "PCW-SIM";
/// Samples taken when `-sc` is not given (typeperf would run until Ctrl+C).
pub const DEFAULT_SAMPLES: u32 = 10;
/// The interval when `-si` is not given, as typeperf's.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// The name of the aggregate instance of a `multipleAggregate` set.
pub const TOTAL_INSTANCE: &str = "_Total";

/// `FILETIME` of the Unix epoch (100 ns units since 1601).
const UNIX_EPOCH_FILETIME: i64 = 116_444_736_000_000_000;

/// Arguments of `pcw typeperf`, taken as typeperf takes them.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Counter paths (`\Object(Instance)\Counter`, `*` for instance and counter) and the
    /// options `-sc SAMPLES` (default 10) and `-si INTERVAL` (seconds, fractional allowed, or
    /// `[[hh:]mm:]ss`; default 1); `--image PATH` samples a cross-built `pcw_driver.sys` run by
    /// the loader instead of the host build of the driver.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Why `pcw typeperf` failed. Every error exits with status 1.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad option or a missing path.
    #[error("{0}")]
    Usage(String),
    /// A path that does not parse.
    #[error("bad counter path `{path}`: {source}")]
    Path {
        /// The path as given.
        path: String,
        /// What is wrong.
        source: PathError,
    },
    /// `\\computer` names another machine.
    #[error(
        "counter path `{path}`: unknown computer `{machine}` (the simulated computer is `{MACHINE}`)"
    )]
    UnknownComputer {
        /// The path as given.
        path: String,
        /// The computer it names.
        machine: String,
    },
    /// No counterset has the object's name.
    #[error("counter path `{path}`: unknown object `{object}`")]
    UnknownObject {
        /// The path as given.
        path: String,
        /// The object it names.
        object: String,
    },
    /// No displayed counter of the object matches.
    #[error("counter path `{path}`: object `{object}` has no counter `{counter}`")]
    UnknownCounter {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
        /// The counter name or pattern.
        counter: String,
    },
    /// `(instance)` on a single-instance set.
    #[error("counter path `{path}`: object `{object}` is single-instance; remove `({instance})`")]
    UnexpectedInstance {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
        /// The instance part given.
        instance: String,
    },
    /// No `(instance)` on a multi-instance set.
    #[error("counter path `{path}`: object `{object}` has instances; name one or use `(*)`")]
    MissingInstance {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
    },
    /// The instance part matched no instance of the priming collection.
    #[error("counter path `{path}`: no instance of `{object}` matches `{instance}`")]
    NoInstance {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
        /// The instance part given.
        instance: String,
    },
    /// `-q OBJECT`/`-qx OBJECT` names no counterset.
    #[error("object `{object}` not found (the objects are {known})")]
    NoObject {
        /// The object asked for.
        object: String,
        /// The objects there are, backticked and comma-separated.
        known: String,
    },
    /// A file (`-cf`, `-o`, `--manifest`) could not be read or written.
    #[error("{what} `{path}`: {source}")]
    File {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A `--sim-queue` could not be created.
    #[error("cannot create the simulated queue `{0}`")]
    Queue(String),
    /// The manifest could not be read.
    #[error("the counter manifest: {0}")]
    Manifest(#[from] pcw_gen::Error),
    /// The driver failed to load.
    #[error("the driver failed to load: NTSTATUS 0x{0:08X}")]
    Load(u32),
    /// `--image` names a file that cannot be read or mapped.
    #[error("--image {path}: {reason}")]
    Image {
        /// The path as given.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The image left something behind or broke a kernel rule while it ran.
    #[error("the image {0}")]
    ImageCheck(String),
    /// The simulated kernel refused a collection.
    #[error("{0}")]
    Sim(#[from] SimError),
    /// Writing the output failed.
    #[error("writing the output: {0}")]
    Io(#[from] std::io::Error),
    /// The simulated clock left the years a time stamp can show.
    #[error("the simulated clock is outside the years 1 to 9999")]
    ClockRange,
    /// No running user-mode provider registered the counterset.
    #[error("counterset `{0}` is not registered by a running user-mode provider")]
    NotRunning(String),
    /// The example service failed.
    #[error("the example service: {0}")]
    Service(#[from] pcw_um::Error),
    /// The driver left something behind at unload.
    #[error("the driver did not unload cleanly: {0:?}")]
    Teardown(Teardown),
}

impl Failure for Error {
    fn exit_code(&self) -> u8 {
        crate::EXIT_FAILURE
    }
}

/// Which provider `pcw typeperf` samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderChoice {
    /// The kernel driver under the simulated kernel (the default).
    Driver,
    /// The example user-mode service `pcw-tidal` under the simulated Perflib.
    Tidal,
}

/// The parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `-provider`.
    pub provider: ProviderChoice,
    /// Counter paths as given (then those of `-cf`, in file order).
    pub paths: Vec<String>,
    /// `-sc`.
    pub samples: u32,
    /// `-si`.
    pub interval: Duration,
    /// `-q [object]` / `-qx [object]`: list counter paths instead of sampling.
    pub query: Option<Query>,
    /// `-cf FILE`: a file of counter paths, one a line.
    pub counter_file: Option<PathBuf>,
    /// `-o FILE`: write the samples there instead of stdout.
    pub output: Option<PathBuf>,
    /// `-f CSV|TSV`.
    pub format: FileFormat,
    /// `--raw`: each cooked column is followed by the raw sample's first value, second value
    /// and time base.
    pub raw: bool,
    /// `--manifest FILE`: list (`-q`/`-qx`) the countersets of this manifest instead of the
    /// simulated driver's.
    pub manifest: Option<PathBuf>,
    /// `--sim-queue NAME`: create a dynamic queue of that name in the simulated driver first.
    pub sim_queues: Vec<String>,
}

/// A `-q` or `-qx` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The object to list; every object when `None`.
    pub object: Option<String>,
    /// `-qx`: one path per instance instead of `(*)`.
    pub instances: bool,
}

/// `-f`: the sample file's format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileFormat {
    /// Comma-separated, `(PDH-CSV 4.0)`.
    #[default]
    Csv,
    /// Tab-separated, `(PDH-TSV 4.0)`.
    Tsv,
}

impl FileFormat {
    fn separator(self) -> char {
        match self {
            Self::Csv => ',',
            Self::Tsv => '\t',
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Self::Csv => HEADER_TAG,
            Self::Tsv => "(PDH-TSV 4.0)",
        }
    }
}

impl Options {
    /// Parses typeperf's arguments: paths and the options `-sc N`, `-si INTERVAL` (option
    /// names case-insensitive, `-` or `/`, as typeperf accepts them).
    ///
    /// # Errors
    /// [`Error::Usage`] for an unknown option, a missing or bad option value, or no path.
    #[allow(clippy::too_many_lines)] // one arm per typeperf option
    pub fn parse(args: &[String]) -> Result<Self, Error> {
        let mut options = Self {
            provider: ProviderChoice::Driver,
            paths: Vec::new(),
            samples: DEFAULT_SAMPLES,
            interval: DEFAULT_INTERVAL,
            query: None,
            counter_file: None,
            output: None,
            format: FileFormat::Csv,
            raw: false,
            manifest: None,
            sim_queues: Vec::new(),
        };
        let mut args = args.iter().peekable();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--raw" => {
                    options.raw = true;
                    continue;
                }
                "--manifest" | "--sim-queue" => {
                    let v = args
                        .next()
                        .ok_or_else(|| Error::Usage(format!("`{arg}` needs a value")))?;
                    if arg == "--manifest" {
                        options.manifest = Some(PathBuf::from(v));
                    } else {
                        options.sim_queues.push(v.clone());
                    }
                    continue;
                }
                _ => {}
            }
            if let Some(option) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('/'))
                && matches!(option.to_ascii_lowercase().as_str(), "q" | "qx")
            {
                // The object is optional: the next argument, unless it is an option or a path.
                let object = args
                    .next_if(|next| !next.starts_with(['-', '/', '\\']))
                    .cloned();
                options.query = Some(Query {
                    object,
                    instances: option.eq_ignore_ascii_case("qx"),
                });
                continue;
            }
            let Some(option) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('/')) else {
                options.paths.push(arg.clone());
                continue;
            };
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| Error::Usage(format!("`-{name}` needs a value")))
            };
            match option.to_ascii_lowercase().as_str() {
                "sc" => {
                    let v = value("sc")?;
                    options.samples =
                        v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                            Error::Usage(format!("`-sc {v}`: expected a sample count of 1 or more"))
                        })?;
                }
                "provider" => {
                    let v = value("provider")?;
                    options.provider = match v.to_ascii_lowercase().as_str() {
                        "driver" => ProviderChoice::Driver,
                        "tidal" => ProviderChoice::Tidal,
                        _ => {
                            return Err(Error::Usage(format!(
                                "`-provider {v}`: expected `driver` or `tidal`"
                            )));
                        }
                    };
                }
                "si" => {
                    let v = value("si")?;
                    options.interval = parse_interval(v).ok_or_else(|| {
                        Error::Usage(format!(
                            "`-si {v}`: expected seconds (fractions allowed) or `[[hh:]mm:]ss`, \
                             more than 0"
                        ))
                    })?;
                }
                "cf" => options.counter_file = Some(PathBuf::from(value("cf")?)),
                "o" => options.output = Some(PathBuf::from(value("o")?)),
                "f" => {
                    let v = value("f")?;
                    options.format = match v.to_ascii_uppercase().as_str() {
                        "CSV" => FileFormat::Csv,
                        "TSV" => FileFormat::Tsv,
                        _ => {
                            return Err(Error::Usage(format!(
                                "`-f {v}`: expected `CSV` or `TSV` (the binary `BIN` and SQL \
                                 formats are not supported)"
                            )));
                        }
                    };
                }
                "y" => {}
                _ => {
                    return Err(Error::Usage(format!(
                        "unknown option `{arg}` (pcw typeperf takes `-sc SAMPLES`, \
                         `-si INTERVAL`, `-cf FILE`, `-o FILE`, `-f CSV|TSV`, `-q [OBJECT]`, \
                         `-qx [OBJECT]`, `-y`, `--raw`, `--manifest FILE`, `--sim-queue NAME`, `--image SYS`, \
                         `-provider driver|tidal`)"
                    )));
                }
            }
        }
        if options.query.is_some() {
            if !options.paths.is_empty() || options.counter_file.is_some() {
                return Err(Error::Usage(
                    "`-q`/`-qx` list counters and take no counter path or `-cf`".to_owned(),
                ));
            }
            return Ok(options);
        }
        if options.manifest.is_some() {
            return Err(Error::Usage(
                "`--manifest` only works with `-q`/`-qx`: samples come from the simulated driver"
                    .to_owned(),
            ));
        }
        if options.paths.is_empty() && options.counter_file.is_none() {
            return Err(Error::Usage(
                "no counter path given (for example `\\Geometric Waves(*)\\*`)".to_owned(),
            ));
        }
        Ok(options)
    }
}

/// `-si`'s value: `ss[.fff]`, `mm:ss[.fff]` or `hh:mm:ss[.fff]`; `None` if malformed, zero
/// or absurdly long.
fn parse_interval(text: &str) -> Option<Duration> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let (seconds_part, whole) = parts.split_last()?;
    let mut total = 0.0f64;
    for part in whole {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        total = total * 60.0 + part.parse::<f64>().ok()?;
    }
    let seconds: f64 = seconds_part.parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 || seconds_part.starts_with('+') {
        return None;
    }
    let total = total * 60.0 + seconds;
    (total > 0.0 && total < 1e9).then(|| Duration::from_secs_f64(total))
}

/// How a counterset's instances are presented (`<counterSet instances>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `single`: one unnamed instance.
    Single,
    /// `multiple`: the provider's instances.
    Multiple,
    /// `globalAggregate` (and `globalAggregateHistory`): one instance combining the
    /// provider's.
    GlobalAggregate,
    /// `multipleAggregate`: the provider's instances plus [`TOTAL_INSTANCE`].
    MultipleAggregate,
}

impl Kind {
    fn from_manifest(instances: &str) -> Self {
        match instances {
            "single" => Self::Single,
            "globalAggregate" | "globalAggregateHistory" => Self::GlobalAggregate,
            "multipleAggregate" => Self::MultipleAggregate,
            _ => Self::Multiple,
        }
    }

    /// Whether paths name an instance.
    fn has_instances(self) -> bool {
        matches!(self, Self::Multiple | Self::MultipleAggregate)
    }
}

/// How an aggregate instance combines a counter's raw values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Sum (also for counters without an `aggregate` attribute).
    Sum,
    /// Arithmetic mean, rounded down.
    Avg,
    /// Smallest.
    Min,
    /// Largest.
    Max,
    /// `undefined`: no aggregate value.
    Undefined,
}

impl Aggregate {
    fn from_manifest(aggregate: Option<&str>) -> Self {
        match aggregate {
            Some("avg") => Self::Avg,
            Some("min") => Self::Min,
            Some("max") => Self::Max,
            Some("undefined") => Self::Undefined,
            _ => Self::Sum,
        }
    }

    fn combine(self, values: &[u64]) -> Option<u64> {
        if values.is_empty() {
            return None;
        }
        match self {
            Self::Sum => Some(values.iter().fold(0u64, |a, v| a.wrapping_add(*v))),
            Self::Avg => {
                let sum: u128 = values.iter().map(|v| u128::from(*v)).sum();
                u64::try_from(sum / values.len() as u128).ok()
            }
            Self::Min => values.iter().copied().min(),
            Self::Max => values.iter().copied().max(),
            Self::Undefined => None,
        }
    }
}

/// One counter as the manifest declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterInfo {
    /// Descriptor id.
    pub id: u16,
    /// Display name; `None` for helper counters, which are never listed.
    pub name: Option<String>,
    /// V1 counter type.
    pub counter_type: CounterType,
    /// `defaultScale`.
    pub scale: i32,
    /// `baseID`.
    pub base_id: Option<u16>,
    /// `perfTimeID`.
    pub perf_time_id: Option<u16>,
    /// `perfFreqID`.
    pub perf_freq_id: Option<u16>,
    /// `multiCounterID`.
    pub multi_id: Option<u16>,
    /// How an aggregate instance combines it.
    pub aggregate: Aggregate,
}

impl CounterInfo {
    /// The ids this counter's cooking reads: itself and its helpers.
    fn ids(&self) -> impl Iterator<Item = u16> {
        [
            Some(self.id),
            self.base_id,
            self.perf_time_id,
            self.perf_freq_id,
            self.multi_id,
        ]
        .into_iter()
        .flatten()
    }
}

/// One counterset as the manifest declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct SetInfo {
    /// The registered name, which is the object name in paths.
    pub name: String,
    /// The counterset GUID (big-endian), which identifies a user-mode set.
    pub guid: u128,
    /// How instances are presented.
    pub kind: Kind,
    /// Counters in manifest order.
    pub counters: Vec<CounterInfo>,
}

impl SetInfo {
    fn counter(&self, id: u16) -> Option<&CounterInfo> {
        self.counters.iter().find(|c| c.id == id)
    }

    /// How an aggregate combines counter `id`: `max` for the time and frequency helpers,
    /// otherwise the counter's own attribute.
    fn aggregate_of(&self, id: u16) -> Aggregate {
        let is_clock = self
            .counters
            .iter()
            .any(|c| c.perf_time_id == Some(id) || c.perf_freq_id == Some(id));
        if is_clock {
            return Aggregate::Max;
        }
        self.counter(id).map_or(Aggregate::Sum, |c| c.aggregate)
    }
}

/// The countersets typeperf can sample, from a counter manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    /// In manifest order.
    pub sets: Vec<SetInfo>,
}

impl Catalog {
    /// Reads a manifest's countersets with pcw-gen.
    ///
    /// # Errors
    /// [`Error::Manifest`] when the manifest does not compile.
    pub fn from_manifest(file: &str, text: &str) -> Result<Self, Error> {
        let inspect = pcw_gen::Config::new().inspect(Path::new(file), text.as_bytes())?;
        let sets = inspect
            .countersets
            .into_iter()
            .map(|set| SetInfo {
                guid: pcw_gen::Guid::parse_braced(&set.guid).map_or(0, |g| g.0),
                kind: Kind::from_manifest(&set.instances),
                name: set.name,
                counters: set
                    .counters
                    .into_iter()
                    .map(|c| CounterInfo {
                        id: c.id,
                        // Base and `noDisplay` counters are helpers, never listed, even when
                        // the manifest names them (as Microsoft's user-mode samples do).
                        name: c.name.filter(|_| {
                            !CounterType::from_raw(c.counter_type).is_base()
                                && !c.attributes.iter().any(|a| a == "noDisplay")
                        }),
                        counter_type: CounterType::from_raw(c.counter_type),
                        scale: c.default_scale,
                        base_id: c.base_id,
                        perf_time_id: c.perf_time_id,
                        perf_freq_id: c.perf_freq_id,
                        multi_id: c.multi_counter_id,
                        aggregate: Aggregate::from_manifest(c.aggregate.as_deref()),
                    })
                    .collect(),
            })
            .collect();
        Ok(Self { sets })
    }

    /// The driver's countersets ([`pcw_driver::MANIFEST`]).
    ///
    /// # Errors
    /// As [`Catalog::from_manifest`].
    pub fn driver() -> Result<Self, Error> {
        Self::from_manifest("pcw_driver.man", pcw_driver::MANIFEST)
    }

    /// The example user-mode service's countersets ([`pcw_tidal::MANIFEST`]).
    ///
    /// # Errors
    /// As [`Catalog::from_manifest`].
    pub fn tidal() -> Result<Self, Error> {
        Self::from_manifest("tidal_service.man", pcw_tidal::MANIFEST)
    }

    fn find(&self, object: &str) -> Option<usize> {
        self.sets
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(object))
    }
}

/// Where collections come from: the simulated kernel's PCW or the simulated Perflib's
/// user-mode providers. Everything after the collection is shared.
pub trait Source {
    /// Tells the provider a consumer added (`add`) or removed the counters of `mask`.
    ///
    /// # Errors
    /// The set is not registered.
    fn notify(&self, set: &SetInfo, add: bool, mask: u64) -> Result<(), Error>;

    /// Collects one set.
    ///
    /// # Errors
    /// The set is not registered.
    fn collect(&self, set: &SetInfo, request: &Request) -> Result<Collection, Error>;
}

impl Source for Kernel {
    fn notify(&self, set: &SetInfo, add: bool, mask: u64) -> Result<(), Error> {
        Kernel::notify(self, &set.name, add, mask)?;
        Ok(())
    }

    fn collect(&self, set: &SetInfo, request: &Request) -> Result<Collection, Error> {
        Ok(Kernel::collect(self, &set.name, request)?)
    }
}

/// User-mode providers under pcw-sim's simulated Perflib, found by counterset GUID.
#[derive(Clone, Copy, Debug, Default)]
pub struct UserMode;

impl Source for UserMode {
    fn notify(&self, set: &SetInfo, add: bool, mask: u64) -> Result<(), Error> {
        // Perflib sends `PERF_ADD_COUNTER`/`PERF_REMOVE_COUNTER` per counter.
        for c in &set.counters {
            let wanted = 1u64
                .checked_shl(u32::from(c.id))
                .is_none_or(|bit| mask & bit != 0);
            if wanted && pcw_sim::usermode::notify(set.guid, add, u32::from(c.id)).is_none() {
                return Err(Error::NotRunning(set.name.clone()));
            }
        }
        Ok(())
    }

    fn collect(&self, set: &SetInfo, request: &Request) -> Result<Collection, Error> {
        let instances = pcw_sim::usermode::collect(set.guid)
            .ok_or_else(|| Error::NotRunning(set.name.clone()))?;
        let instances = instances
            .into_iter()
            .map(|i| Instance {
                name: i.name,
                id: i.id,
                values: i
                    .values
                    .into_iter()
                    .filter_map(|(id, v)| u16::try_from(id).ok().map(|id| (id, v)))
                    .filter(|(id, _)| {
                        1u64.checked_shl(u32::from(*id))
                            .is_none_or(|bit| request.counter_mask & bit != 0)
                    })
                    .collect(),
            })
            .collect();
        Ok(Collection {
            instances,
            ..Collection::default()
        })
    }
}

/// A path resolved against the catalog, instances not yet expanded.
#[derive(Clone, Debug, PartialEq)]
struct Selector {
    path: String,
    parsed: CounterPath,
    set: usize,
    /// Indices into the set's counters, in manifest order.
    counters: Vec<usize>,
}

/// Which instance of a set a column reads.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    /// The one instance of a single-instance or global-aggregate set.
    Only,
    /// A named instance (including [`TOTAL_INSTANCE`]).
    Named(String),
}

/// One CSV column: a counter of an instance.
#[derive(Clone, Debug, PartialEq)]
struct Column {
    /// Full path, as in the header.
    path: String,
    set: usize,
    counter: usize,
    target: Target,
}

/// Resolves every path's computer, object and counters (no instance expansion yet).
fn resolve(catalog: &Catalog, paths: &[String]) -> Result<Vec<Selector>, Error> {
    paths
        .iter()
        .map(|path| {
            let parsed = CounterPath::parse(path).map_err(|source| Error::Path {
                path: path.clone(),
                source,
            })?;
            if let Some(machine) = &parsed.machine
                && !machine.eq_ignore_ascii_case(MACHINE)
            {
                return Err(Error::UnknownComputer {
                    path: path.clone(),
                    machine: machine.clone(),
                });
            }
            let set = catalog
                .find(&parsed.object)
                .ok_or_else(|| Error::UnknownObject {
                    path: path.clone(),
                    object: parsed.object.clone(),
                })?;
            let info = &catalog.sets[set];
            let counters: Vec<usize> = info
                .counters
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    c.name
                        .as_deref()
                        .is_some_and(|name| wildcard_match(&parsed.counter, name))
                })
                .map(|(i, _)| i)
                .collect();
            if counters.is_empty() {
                return Err(Error::UnknownCounter {
                    path: path.clone(),
                    object: info.name.clone(),
                    counter: parsed.counter.clone(),
                });
            }
            match (&parsed.instance, info.kind.has_instances()) {
                (Some(_), false) => {
                    return Err(Error::UnexpectedInstance {
                        path: path.clone(),
                        object: info.name.clone(),
                        instance: instance_text(&parsed),
                    });
                }
                (None, true) => {
                    return Err(Error::MissingInstance {
                        path: path.clone(),
                        object: info.name.clone(),
                    });
                }
                _ => {}
            }
            Ok(Selector {
                path: path.clone(),
                parsed,
                set,
                counters,
            })
        })
        .collect()
}

/// The text between the parentheses of a parsed path.
fn instance_text(path: &CounterPath) -> String {
    let shown = path.to_string();
    match (shown.find('('), shown.rfind(')')) {
        (Some(open), Some(close)) if open < close => shown[open + 1..close].to_owned(),
        _ => String::new(),
    }
}

/// The raw values of one set in one collection, aggregates added, with the collection's
/// time fields.
#[derive(Clone, Debug, PartialEq)]
pub struct SetSample {
    /// `PERF_DATA_BLOCK` time fields at collection (object time and frequency are those of
    /// the block; counters with `perfTimeID`/`perfFreqID` use their helpers instead).
    pub times: SampleTimes,
    /// Instances as a consumer sees them: for a global aggregate, the single combined
    /// instance; for a multiple aggregate, the provider's plus [`TOTAL_INSTANCE`].
    pub instances: Vec<Instance>,
}

impl SetSample {
    /// The consumer's view of a collection of `set`.
    pub fn new(set: &SetInfo, collection: Collection, times: SampleTimes) -> Self {
        let mut instances = collection.instances;
        match set.kind {
            Kind::Single | Kind::Multiple => {}
            Kind::GlobalAggregate => instances = vec![aggregate(set, "", &instances)],
            Kind::MultipleAggregate => {
                let total = aggregate(set, TOTAL_INSTANCE, &instances);
                instances.push(total);
            }
        }
        Self { times, instances }
    }

    fn instance(&self, target: &Target) -> Option<&Instance> {
        match target {
            Target::Only => self.instances.first(),
            Target::Named(name) => self
                .instances
                .iter()
                .find(|i| i.name.eq_ignore_ascii_case(name)),
        }
    }
}

/// Combines the instances' raw values counter by counter.
fn aggregate(set: &SetInfo, name: &str, instances: &[Instance]) -> Instance {
    let mut ids: Vec<u16> = instances
        .iter()
        .flat_map(|i| i.values.keys().copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let values = ids
        .into_iter()
        .filter_map(|id| {
            let raw: Vec<u64> = instances
                .iter()
                .filter_map(|i| i.values.get(&id).copied())
                .collect();
            set.aggregate_of(id).combine(&raw).map(|v| (id, v))
        })
        .collect();
    Instance {
        name: name.to_owned(),
        id: 0,
        values,
    }
}

/// Expands instance wildcards against the priming collection; columns in PDH's order.
fn expand(
    catalog: &Catalog,
    selectors: &[Selector],
    primed: &BTreeMap<usize, SetSample>,
) -> Result<Vec<Column>, Error> {
    let mut columns = Vec::new();
    for selector in selectors {
        let info = &catalog.sets[selector.set];
        let targets: Vec<(Target, Option<String>)> = match &selector.parsed.instance {
            None => vec![(Target::Only, None)],
            Some(spec) => {
                let names: Vec<String> = primed.get(&selector.set).map_or_else(Vec::new, |s| {
                    s.instances.iter().map(|i| i.name.clone()).collect()
                });
                // No parent instances in PCW; names are unique, so only index 0 exists.
                let index_ok = matches!(
                    spec.index,
                    None | Some(InstanceIndex::Any | InstanceIndex::Number(0))
                );
                let matched: Vec<(Target, Option<String>)> = names
                    .into_iter()
                    .filter(|n| index_ok && spec.parent.is_none() && wildcard_match(&spec.name, n))
                    .map(|n| (Target::Named(n.clone()), Some(n)))
                    .collect();
                if matched.is_empty() {
                    return Err(Error::NoInstance {
                        path: selector.path.clone(),
                        object: info.name.clone(),
                        instance: instance_text(&selector.parsed),
                    });
                }
                matched
            }
        };
        for &counter in &selector.counters {
            for (target, instance) in &targets {
                let full = CounterPath {
                    machine: Some(MACHINE.to_owned()),
                    object: info.name.clone(),
                    instance: instance
                        .as_ref()
                        .map(|name| pcw_sim::typeperf::InstanceSpec {
                            parent: None,
                            name: name.clone(),
                            index: None,
                        }),
                    counter: info.counters[counter].name.clone().unwrap_or_default(),
                };
                columns.push(Column {
                    path: full.to_string(),
                    set: selector.set,
                    counter,
                    target: target.clone(),
                });
            }
        }
    }
    Ok(columns)
}

/// One collection of every sampled set, and when it was taken.
#[derive(Clone, Debug, PartialEq)]
struct Frame {
    /// Simulated system time (`FILETIME`) at collection.
    system_time: i64,
    sets: BTreeMap<usize, SetSample>,
}

/// The raw sample PDH would hold for `counter` of `instance`.
fn raw_sample(
    counter: &CounterInfo,
    instance: &Instance,
    times: &SampleTimes,
) -> Option<RawSample> {
    let value = *instance.values.get(&counter.id)?;
    let helper = |id: Option<u16>| id.and_then(|id| instance.values.get(&id).copied());
    let follower = helper(counter.base_id)
        .or_else(|| helper(counter.multi_id))
        .or_else(|| helper(counter.perf_time_id));
    let mut times = *times;
    if let (Some(time), Some(freq)) = (helper(counter.perf_time_id), helper(counter.perf_freq_id)) {
        times.object_time = time.cast_signed();
        times.object_freq = freq.cast_signed();
    }
    RawSample::for_counter(counter.counter_type, value, follower, &times).ok()
}

/// Cooks one row: every column from the older and newer frames.
fn cook_row(
    catalog: &Catalog,
    columns: &[Column],
    older: Option<&Frame>,
    newer: &Frame,
) -> Vec<Option<f64>> {
    columns
        .iter()
        .map(|column| {
            let counter = &catalog.sets[column.set].counters[column.counter];
            let sample = |frame: &Frame| {
                let set = frame.sets.get(&column.set)?;
                raw_sample(counter, set.instance(&column.target)?, &set.times)
            };
            let new = sample(newer)?;
            let old = older.and_then(sample);
            cook(
                counter.counter_type,
                counter.scale,
                old.as_ref(),
                &new,
                FORMAT_FLAGS,
            )
            .ok()
        })
        .collect()
}

/// The counter mask each sampled set's columns need: their counters and helpers (bit *x* for
/// counter id *x*; an id of 64 or above cannot be expressed, so such a set asks for every
/// counter).
fn masks(catalog: &Catalog, selectors: &[Selector]) -> BTreeMap<usize, u64> {
    let mut masks = BTreeMap::new();
    for selector in selectors {
        let info = &catalog.sets[selector.set];
        let mask = masks.entry(selector.set).or_insert(0u64);
        for &i in &selector.counters {
            for id in info.counters[i].ids() {
                *mask |= 1u64.checked_shl(u32::from(id)).unwrap_or(u64::MAX);
            }
        }
    }
    masks
}

/// Collects every set once.
fn collect_frame(
    kernel: &Kernel,
    source: &dyn Source,
    catalog: &Catalog,
    masks: &BTreeMap<usize, u64>,
) -> Result<Frame, Error> {
    let mut sets = BTreeMap::new();
    let mut system_time = None;
    for (&set, &mask) in masks {
        let info = &catalog.sets[set];
        let perf_time = kernel.perf_counter();
        let time_100ns = BOOT_SYSTEM_TIME + perf_time.saturating_mul(10_000_000) / PERF_FREQUENCY;
        system_time.get_or_insert(time_100ns);
        let request = Request {
            counter_mask: mask,
            collect_multiple: info.kind != Kind::Single,
            ..Request::default()
        };
        let collection = source.collect(info, &request)?;
        let times = SampleTimes {
            perf_time,
            perf_freq: PERF_FREQUENCY,
            perf_time_100ns: time_100ns,
            object_time: perf_time,
            object_freq: PERF_FREQUENCY,
        };
        sets.insert(set, SetSample::new(info, collection, times));
    }
    Ok(Frame {
        system_time: system_time.unwrap_or(BOOT_SYSTEM_TIME),
        sets,
    })
}

/// The row time stamp of a `FILETIME`, in UTC.
fn timestamp(system_time: i64) -> Option<CsvTimestamp> {
    CsvTimestamp::from_unix_millis((system_time - UNIX_EPOCH_FILETIME).div_euclid(10_000), 0)
}

/// The line terminator of the host (typeperf's `\r\n` on Windows).
const EOL: &str = if cfg!(windows) { "\r\n" } else { "\n" };

/// How samples are written: [`FileFormat`] and whether raw values follow each cooked one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// CSV or TSV.
    pub format: FileFormat,
    /// `--raw`.
    pub raw: bool,
}

impl Layout {
    fn plain(self) -> bool {
        self.format == FileFormat::Csv && !self.raw
    }

    fn row(self, cells: &[String]) -> String {
        let mut row = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                row.push(self.format.separator());
            }
            row.push_str(&quote_field(cell));
        }
        row
    }

    fn header(self, paths: &[&str]) -> String {
        if self.plain() {
            return header_row(paths);
        }
        let mut cells = vec![self.format.tag().to_owned()];
        for path in paths {
            cells.push((*path).to_owned());
            if self.raw {
                for part in RAW_PARTS {
                    cells.push(format!("{path} {part}"));
                }
            }
        }
        self.row(&cells)
    }
}

/// The header suffixes of the three raw columns `--raw` adds after each cooked column.
pub const RAW_PARTS: [&str; 3] = ["[first value]", "[second value]", "[time base]"];

/// The raw sample of every column in `frame`: first value, second value and time base, each
/// blank when there is no sample (or, for the time base, when the type uses none).
fn raw_row(catalog: &Catalog, columns: &[Column], frame: &Frame) -> Vec<[String; 3]> {
    columns
        .iter()
        .map(|column| {
            let counter = &catalog.sets[column.set].counters[column.counter];
            let sample = frame
                .sets
                .get(&column.set)
                .and_then(|set| raw_sample(counter, set.instance(&column.target)?, &set.times));
            match sample {
                None => [String::new(), String::new(), String::new()],
                Some(raw) => [
                    raw.first_value.to_string(),
                    raw.second_value.to_string(),
                    timebase(counter.counter_type, &raw.times)
                        .map_or_else(String::new, |t| t.to_string()),
                ],
            }
        })
        .collect()
}

/// typeperf's whole run on a booted kernel with the driver loaded, as CSV on `out`:
/// [`sample_with`] and the default [`Layout`].
///
/// # Errors
/// As [`sample_with`].
#[cfg(test)]
pub fn sample(
    kernel: &Kernel,
    catalog: &Catalog,
    paths: &[String],
    samples: u32,
    interval: Duration,
    sleep: &mut dyn FnMut(Duration),
    out: &mut dyn Write,
) -> Result<(), Error> {
    sample_with(
        kernel,
        catalog,
        paths,
        (samples, interval),
        Layout::default(),
        sleep,
        out,
    )
}

/// typeperf's whole run on a booted kernel with the driver loaded: resolve, `AddCounter`,
/// prime, expand, then `samples` times `sleep(interval)`, collect and print a row;
/// `RemoveCounter` at the end, also after an error. `sleep` really sleeps on the real clock;
/// tests advance the manual clock in it (and may drive the driver between samples).
///
/// # Errors
/// Every [`Error`] of resolution and expansion (before anything is printed), and write or
/// collection errors.
pub fn sample_with(
    kernel: &Kernel,
    catalog: &Catalog,
    paths: &[String],
    (samples, interval): (u32, Duration),
    layout: Layout,
    sleep: &mut dyn FnMut(Duration),
    out: &mut dyn Write,
) -> Result<(), Error> {
    sample_from(
        kernel,
        kernel,
        catalog,
        paths,
        (samples, interval),
        layout,
        sleep,
        out,
    )
}

/// [`sample`] with collections from `source` (the kernel still keeps the clock).
///
/// # Errors
/// As [`sample`].
#[allow(
    clippy::too_many_arguments,
    reason = "`sample`'s arguments plus the source"
)]
pub fn sample_from(
    kernel: &Kernel,
    source: &dyn Source,
    catalog: &Catalog,
    paths: &[String],
    (samples, interval): (u32, Duration),
    layout: Layout,
    sleep: &mut dyn FnMut(Duration),
    out: &mut dyn Write,
) -> Result<(), Error> {
    let selectors = resolve(catalog, paths)?;
    let masks = masks(catalog, &selectors);
    let mut added = Vec::new();
    let result = (|| {
        for (&set, &mask) in &masks {
            source.notify(&catalog.sets[set], true, mask)?;
            added.push((set, mask));
        }
        let mut previous = collect_frame(kernel, source, catalog, &masks)?;
        let columns = expand(catalog, &selectors, &previous.sets)?;
        let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
        write!(out, "{EOL}{}{EOL}", layout.header(&paths))?;
        out.flush()?;
        for _ in 0..samples {
            sleep(interval);
            let frame = collect_frame(kernel, source, catalog, &masks)?;
            let values = cook_row(catalog, &columns, Some(&previous), &frame);
            let time = timestamp(frame.system_time).ok_or(Error::ClockRange)?;
            let row = if layout.plain() {
                sample_row(&time, &values)
            } else {
                let raws = if layout.raw {
                    raw_row(catalog, &columns, &frame)
                } else {
                    Vec::new()
                };
                let mut cells = vec![time.to_string()];
                for (i, value) in values.iter().enumerate() {
                    cells.push(format_value(*value));
                    if let Some(raw) = raws.get(i) {
                        cells.extend(raw.iter().cloned());
                    }
                }
                layout.row(&cells)
            };
            write!(out, "{row}{EOL}")?;
            out.flush()?;
            previous = frame;
        }
        Ok(())
    })();
    for (set, mask) in added {
        let removed = source.notify(&catalog.sets[set], false, mask);
        if result.is_ok() {
            removed?;
        }
    }
    result
}

/// Splits `--image PATH` (anywhere among the arguments) from the rest.
fn take_image(args: &[String]) -> Result<(Option<String>, Vec<String>), Error> {
    let mut image = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--image" {
            let path = it
                .next()
                .ok_or_else(|| Error::Usage("--image needs a path to a .sys file".into()))?;
            image = Some(path.clone());
        } else if let Some(path) = a.strip_prefix("--image=") {
            image = Some(path.to_owned());
        } else {
            rest.push(a.clone());
        }
    }
    Ok((image, rest))
}

/// The driver under sampling: the host build of its code, or the shipped image run by the
/// loader.
enum Loaded {
    Host,
    /// The loaded image and the queues `--sim-queue` created in it.
    #[cfg(all(target_arch = "x86_64", unix))]
    Image(pcw_loader::LoadedDriver, std::sync::Mutex<Vec<u32>>),
}

fn load(image: Option<&str>) -> Result<Loaded, Error> {
    let Some(path) = image else {
        pcw_driver::driver::load().map_err(|status| Error::Load(status.cast_unsigned()))?;
        return Ok(Loaded::Host);
    };
    #[cfg(all(target_arch = "x86_64", unix))]
    {
        let failed = |reason: String| Error::Image {
            path: path.to_owned(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| failed(e.to_string()))?;
        let driver = pcw_loader::LoadedDriver::load(&bytes).map_err(|e| failed(e.to_string()))?;
        let status = driver.entry();
        if status < 0 {
            return Err(Error::Load(status.cast_unsigned()));
        }
        Ok(Loaded::Image(driver, std::sync::Mutex::default()))
    }
    #[cfg(not(all(target_arch = "x86_64", unix)))]
    Err(Error::Image {
        path: path.to_owned(),
        reason: "the image loader runs on x86-64 Linux only".into(),
    })
}

fn unload(loaded: Loaded) -> Result<(), Error> {
    match loaded {
        Loaded::Host => {
            pcw_driver::queues::close_all();
            pcw_driver::driver::unload();
            Ok(())
        }
        #[cfg(all(target_arch = "x86_64", unix))]
        Loaded::Image(driver, ids) => {
            let ids = ids
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for id in ids {
                driver.ioctl(
                    pcw_driver::control::IOCTL_PCW_CLOSE_QUEUE,
                    &id.to_le_bytes(),
                    0,
                );
            }
            driver.unload();
            let leaks = pcw_loader::ntos::leaks();
            let violations = pcw_loader::ntos::violations();
            if !leaks.is_empty() {
                return Err(Error::ImageCheck(format!(
                    "left behind at unload: {leaks:?}"
                )));
            }
            if let Some(v) = violations.first() {
                return Err(Error::ImageCheck(format!("broke a kernel rule: {v}")));
            }
            Ok(())
        }
    }
}

/// The instances a consumer lists for set `set` right now (PDH's `PdhEnumObjectItems`): the
/// provider's instances from `PcwCallbackEnumerateInstances`, plus [`TOTAL_INSTANCE`] for a
/// `multipleAggregate` set; empty for sets whose paths name no instance.
///
/// # Errors
/// [`Error::Sim`] when the set is not registered.
pub fn live_instances(kernel: &Kernel, set: &SetInfo) -> Result<Vec<String>, Error> {
    if !set.kind.has_instances() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = kernel
        .enumerate(&set.name, &Request::default())?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    if set.kind == Kind::MultipleAggregate {
        names.push(TOTAL_INSTANCE.to_owned());
    }
    Ok(names)
}

/// The counterset `object` names (any case), or every set when `None`.
///
/// # Errors
/// [`Error::NoObject`] when no set has that name.
pub fn select_sets<'a>(
    catalog: &'a Catalog,
    object: Option<&str>,
) -> Result<Vec<&'a SetInfo>, Error> {
    match object {
        None => Ok(catalog.sets.iter().collect()),
        Some(object) => catalog
            .find(object)
            .map(|i| vec![&catalog.sets[i]])
            .ok_or_else(|| Error::NoObject {
                object: object.to_owned(),
                known: catalog
                    .sets
                    .iter()
                    .map(|s| format!("`{}`", s.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
    }
}

/// A counter path as `-q`/`-qx` and `Get-Counter -ListSet` print it (no computer):
/// `\Object\Counter`, or `\Object(instance)\Counter`.
pub fn list_path(object: &str, instance: Option<&str>, counter: &str) -> String {
    CounterPath {
        machine: None,
        object: object.to_owned(),
        instance: instance.map(|name| pcw_sim::typeperf::InstanceSpec {
            parent: None,
            name: name.to_owned(),
            index: None,
        }),
        counter: counter.to_owned(),
    }
    .to_string()
}

/// The paths of one set: without instances (`(*)` for sets with instances) when `instances`
/// is `None`, else one per counter and instance, counters outer (as the sampling expands
/// them). Helper counters without a name are never listed.
pub fn set_paths(set: &SetInfo, instances: Option<&[String]>) -> Vec<String> {
    let mut paths = Vec::new();
    for name in set.counters.iter().filter_map(|c| c.name.as_deref()) {
        match (set.kind.has_instances(), instances) {
            (false, _) => paths.push(list_path(&set.name, None, name)),
            (true, None) => paths.push(list_path(&set.name, Some("*"), name)),
            (true, Some(list)) => {
                for instance in list {
                    paths.push(list_path(&set.name, Some(instance), name));
                }
            }
        }
    }
    paths
}

/// Warnings about run-time instance names (PDH path characters, exporters' `_Total` rule,
/// duplicates), one line each, for stderr.
pub fn instance_warnings(set: &SetInfo, instances: &[String]) -> Vec<String> {
    let mut warnings = Vec::new();
    for name in instances.iter().filter(|n| n.as_str() != TOTAL_INSTANCE) {
        for issue in pcw_gen::fleet::instance_name_issues(name) {
            warnings.push(format!("instance `{name}` of `{}`: {issue}", set.name));
        }
    }
    for dup in pcw_gen::fleet::duplicate_instances(instances.iter().map(String::as_str)) {
        warnings.push(format!(
            "instance `{dup}` of `{}` appears more than once: PDH numbers the copies `#1`, `#2` and exporters merge or drop them",
            set.name
        ));
    }
    warnings
}

/// `-q`/`-qx`: the counter paths of the selected sets, one a line. With a kernel, `-qx` lists
/// the live instances; without one (a manifest file) instance names are unknown, so `-qx`
/// lists `(*)` paths like `-q`. Returns the instance-name warnings to print.
///
/// # Errors
/// [`Error::NoObject`], collection and write errors.
pub fn query(
    kernel: Option<&Kernel>,
    catalog: &Catalog,
    query: &Query,
    out: &mut dyn Write,
) -> Result<Vec<String>, Error> {
    let mut warnings = Vec::new();
    for set in select_sets(catalog, query.object.as_deref())? {
        let instances = match kernel {
            Some(kernel) if query.instances => {
                let live = live_instances(kernel, set)?;
                warnings.extend(instance_warnings(set, &live));
                Some(live)
            }
            _ => None,
        };
        for path in set_paths(set, instances.as_deref()) {
            write!(out, "{path}{EOL}")?;
        }
    }
    out.flush()?;
    Ok(warnings)
}

/// Boots the simulated kernel on the real clock, loads the driver (its host build, or with
/// `image` the cross-built `.sys` through the loader), creates `queues` (dynamic queue
/// instances), runs `f`, then closes the queues, unloads and checks the teardown.
///
/// # Errors
/// [`Error::Load`], [`Error::Image`], [`Error::Queue`], `f`'s error, [`Error::ImageCheck`],
/// [`Error::Teardown`].
pub fn with_driver<R>(
    image: Option<&str>,
    queues: &[String],
    f: impl FnOnce(&Kernel, &Catalog) -> Result<R, Error>,
) -> Result<R, Error> {
    let catalog = Catalog::driver()?;
    let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Real);
    let result = load(image).and_then(|loaded| {
        let ran = create_queues(&loaded, queues).and_then(|()| f(&kernel, &catalog));
        let unloaded = unload(loaded);
        let value = ran?;
        unloaded?;
        Ok(value)
    });
    let report = kernel.teardown();
    let value = result?;
    if !report.is_clean() {
        return Err(Error::Teardown(report));
    }
    Ok(value)
}

/// Creates the dynamic queue instances `--sim-queue` names: directly in the host build, through
/// `IOCTL_PCW_CREATE_QUEUE` in an image (closed again by [`unload`]).
fn create_queues(loaded: &Loaded, queues: &[String]) -> Result<(), Error> {
    for name in queues {
        let wide: Vec<u16> = name.encode_utf16().collect();
        let created = match loaded {
            Loaded::Host => pcw_driver::queues::create(&wide).is_ok(),
            #[cfg(all(target_arch = "x86_64", unix))]
            Loaded::Image(driver, ids) => {
                let input: Vec<u8> = wide.iter().flat_map(|u| u.to_le_bytes()).collect();
                let r = driver.ioctl(pcw_driver::control::IOCTL_PCW_CREATE_QUEUE, &input, 4);
                if let (true, Ok(id)) = (r.ok, <[u8; 4]>::try_from(r.output.as_slice())) {
                    ids.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(u32::from_le_bytes(id));
                }
                r.ok
            }
        };
        if !created {
            return Err(Error::Queue(name.clone()));
        }
    }
    Ok(())
}

/// Reads `-cf`'s file: one counter path a line; blank lines and surrounding blanks ignored.
fn counter_file(path: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::File {
        what: "counter file",
        path: path.to_path_buf(),
        source,
    })?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// `pcw typeperf`: lists (`-q`/`-qx`) or samples the simulated driver's countersets (or lists
/// a manifest's with `--manifest`).
///
/// # Errors
/// [`Error`].
pub fn run(args: &Args) -> Result<(), Error> {
    let (image, rest) = take_image(&args.args)?;
    let mut options = Options::parse(&rest)?;
    if options.provider == ProviderChoice::Tidal {
        return run_tidal(&options);
    }
    if let Some(query_args) = &options.query {
        let mut stdout = std::io::stdout().lock();
        let warnings = if let Some(file) = &options.manifest {
            let text = std::fs::read_to_string(file).map_err(|source| Error::File {
                what: "manifest",
                path: file.clone(),
                source,
            })?;
            let catalog = Catalog::from_manifest(&file.display().to_string(), &text)?;
            query(None, &catalog, query_args, &mut stdout)?
        } else {
            with_driver(image.as_deref(), &options.sim_queues, |kernel, catalog| {
                query(Some(kernel), catalog, query_args, &mut stdout)
            })?
        };
        for w in warnings {
            eprintln!("warning: {w}");
        }
        eprintln!("{COMPLETED_MESSAGE}");
        return Ok(());
    }
    if let Some(file) = &options.counter_file {
        options.paths.extend(counter_file(file)?);
        if options.paths.is_empty() {
            return Err(Error::Usage(format!(
                "the counter file `{}` has no counter path",
                file.display()
            )));
        }
    }
    let layout = Layout {
        format: options.format,
        raw: options.raw,
    };
    let mut file = match &options.output {
        Some(path) => Some(std::fs::File::create(path).map_err(|source| Error::File {
            what: "output file",
            path: path.clone(),
            source,
        })?),
        None => None,
    };
    with_driver(image.as_deref(), &options.sim_queues, |kernel, catalog| {
        let mut stdout = std::io::stdout().lock();
        let out: &mut dyn Write = match &mut file {
            Some(f) => f,
            None => &mut stdout,
        };
        sample_with(
            kernel,
            catalog,
            &options.paths,
            (options.samples, options.interval),
            layout,
            &mut std::thread::sleep,
            out,
        )
    })?;
    eprintln!("{EXITING_MESSAGE}");
    eprintln!("{COMPLETED_MESSAGE}");
    Ok(())
}

/// `pcw typeperf -provider tidal`: boots the simulated kernel (for its clock), starts the
/// example service (a tick every 100 ms on the real clock), samples it through the simulated
/// Perflib, and stops it.
///
/// # Errors
/// [`Error`].
fn run_tidal(options: &Options) -> Result<(), Error> {
    let catalog = Catalog::tidal()?;
    let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Real);
    let service = pcw_tidal::Service::start(Duration::from_millis(100))?;
    let mut stdout = std::io::stdout().lock();
    let result = sample_from(
        &kernel,
        &UserMode,
        &catalog,
        &options.paths,
        (options.samples, options.interval),
        Layout {
            format: options.format,
            raw: options.raw,
        },
        &mut std::thread::sleep,
        &mut stdout,
    );
    let stopped = service.stop();
    let report = kernel.teardown();
    result?;
    stopped?;
    if !report.is_clean() {
        return Err(Error::Teardown(report));
    }
    eprintln!("{EXITING_MESSAGE}");
    eprintln!("{COMPLETED_MESSAGE}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let catalog = Catalog::driver().unwrap();
        let mut out = Vec::new();
        let mut sleep = |d: Duration| {
            between(kernel);
            kernel.advance(i64::try_from(d.as_nanos() / 100).unwrap());
        };
        sample(
            kernel,
            &catalog,
            &args(paths),
            samples,
            interval,
            &mut sleep,
            &mut out,
        )?;
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with('\n'), "typeperf starts with an empty line");
        Ok(text.lines().skip(1).map(parse_csv_line).collect())
    }

    fn parse_csv_line(line: &str) -> Vec<String> {
        pcw_sim::typeperf::parse_row(line).unwrap()
    }

    fn boot() -> Kernel {
        let kernel = Kernel::boot_with_clock(BUILD_SERVER_2022, Clock::Manual);
        // Start away from 0 so the load time is a real time stamp.
        kernel.advance(5 * 10_000_000);
        pcw_driver::driver::load().unwrap();
        kernel
    }

    fn finish(kernel: Kernel) {
        pcw_driver::driver::unload();
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
        let catalog = Catalog::tidal().unwrap();
        let provider = pcw_tidal::counters::start().unwrap();
        let publisher = pcw_tidal::Publisher::new(&provider).unwrap();
        publisher.publish(0).unwrap();
        let mut tick = 0;
        let mut sleep = |d: Duration| {
            tick += 7;
            publisher.publish(tick).unwrap();
            kernel.advance(i64::try_from(d.as_nanos() / 100).unwrap());
        };
        let mut out = Vec::new();
        sample_from(
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
    fn timestamps_are_utc_filetimes() {
        let show = |t| timestamp(t).unwrap().to_string();
        assert_eq!(show(UNIX_EPOCH_FILETIME), "01/01/1970 00:00:00.000");
        // 2026-11-22 00:00:00.123 UTC.
        assert_eq!(
            show(134_397_792_000_000_000 + 1_230_000),
            "11/22/2026 00:00:00.123"
        );
    }

    #[test]
    fn options() {
        let o = Options::parse(&args(&[r"\A\B", "-sc", "3", "-si", "0.25", r"\C\D"])).unwrap();
        assert_eq!(o.paths, [r"\A\B", r"\C\D"]);
        assert_eq!((o.samples, o.interval), (3, Duration::from_millis(250)));
        let o = Options::parse(&args(&[r"\A\B", "/SI", "01:02:03"])).unwrap();
        assert_eq!(o.interval, Duration::from_secs(3723));
        assert_eq!(o.samples, DEFAULT_SAMPLES);
        assert_eq!(
            Options::parse(&args(&[r"\A\B", "-si", "1:30"]))
                .unwrap()
                .interval,
            Duration::from_secs(90)
        );
        for bad in [
            &["-sc", "3"][..],
            &[r"\A\B", "-sc"],
            &[r"\A\B", "-sc", "0"],
            &[r"\A\B", "-sc", "x"],
            &[r"\A\B", "-si", "0"],
            &[r"\A\B", "-si", "-1"],
            &[r"\A\B", "-si", "a:1"],
            &[r"\A\B", "-si", "1:2:3:4"],
            &[r"\A\B", "-si", "nan"],
            &[r"\A\B", "-f", "BIN"],
            &[r"\A\B", "-o"],
            &["-q", r"\A\B"],
            &[r"\A\B", "--manifest", "x.man"],
        ] {
            assert!(
                matches!(Options::parse(&args(bad)), Err(Error::Usage(_))),
                "{bad:?}"
            );
        }
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
            timestamp(BOOT_SYSTEM_TIME + seconds * 10_000_000)
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
        assert!(matches!(run(r"\Nope\*"), Error::UnknownObject { .. }));
        assert!(matches!(
            run(r"\Geometric Waves(*)\Sine"),
            Error::UnknownCounter { .. }
        ));
        // Helper counters are not counters one can name.
        assert!(matches!(
            run(r"\PCW Provider Statistics\Now"),
            Error::UnknownCounter { .. }
        ));
        assert!(matches!(run(r"Geometric Waves\x"), Error::Path { .. }));
        assert!(matches!(
            run(r"\\OTHER\Geometric Waves(*)\*"),
            Error::UnknownComputer { .. }
        ));
        assert!(matches!(
            run(r"\PCW Provider Statistics(x)\*"),
            Error::UnexpectedInstance { .. }
        ));
        assert!(matches!(
            run(r"\Geometric Waves\Square"),
            Error::MissingInstance { .. }
        ));
        assert!(matches!(
            run(r"\Geometric Waves(Tiny*)\Square"),
            Error::NoInstance { .. }
        ));
        assert!(matches!(
            run(r"\Geometric Waves(Small Wave#1)\Square"),
            Error::NoInstance { .. }
        ));
        // An empty dynamic set has nothing to expand to.
        assert!(matches!(
            run(r"\PCW Dynamic Queues(*)\*"),
            Error::NoInstance { .. }
        ));
        finish(kernel);
    }

    /// pcw-gen's globalAggregate test manifest (contoso), as a multiple aggregate too.
    fn contoso(kind: &str) -> Catalog {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../pcw-gen/tests/manifests/contoso_v11.man"
        ))
        .unwrap()
        .replace(
            "instances=\"globalAggregate\"",
            &format!("instances=\"{kind}\""),
        );
        Catalog::from_manifest("contoso_v11.man", &text).unwrap()
    }

    fn instance(name: &str, values: &[(u16, u64)]) -> Instance {
        Instance {
            name: name.to_owned(),
            id: 0,
            values: values.iter().copied().collect(),
        }
    }

    #[test]
    fn aggregation_follows_the_manifest() {
        let catalog = contoso("globalAggregate");
        let set = catalog.find("Contoso Timers").unwrap();
        let info = &catalog.sets[set];
        assert_eq!(info.kind, Kind::GlobalAggregate);
        // id 1 avg, 2 max, 3 min, 4 undefined, 5 sum with perfTime 7 / perfFreq 8 (max).
        let a = instance(
            "a",
            &[
                (1, 10),
                (2, 10),
                (3, 10),
                (4, 10),
                (5, 10),
                (7, 900),
                (8, 1000),
            ],
        );
        let b = instance(
            "b",
            &[
                (1, 21),
                (2, 30),
                (3, 2),
                (4, 5),
                (5, 5),
                (7, 1000),
                (8, 1000),
            ],
        );
        let sample = SetSample::new(
            info,
            Collection {
                instances: vec![a, b],
                ..Collection::default()
            },
            SampleTimes::default(),
        );
        assert_eq!(sample.instances.len(), 1);
        let total = &sample.instances[0];
        let want: BTreeMap<u16, u64> = [(1, 15), (2, 30), (3, 2), (5, 15), (7, 1000), (8, 1000)]
            .into_iter()
            .collect();
        assert_eq!(total.values, want);

        // Paths: no parentheses for the global aggregate, instances refused.
        let selectors = resolve(&catalog, &args(&[r"\Contoso Timers\% Busy*"])).unwrap();
        let primed: BTreeMap<usize, SetSample> = [(set, sample)].into_iter().collect();
        let columns = expand(&catalog, &selectors, &primed).unwrap();
        let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                r"\\PCW-SIM\Contoso Timers\% Busy Time",
                r"\\PCW-SIM\Contoso Timers\% Busy Time (100ns)"
            ]
        );
        assert!(matches!(
            resolve(&catalog, &args(&[r"\Contoso Timers(_Total)\% Busy Time"])),
            Err(Error::UnexpectedInstance { .. })
        ));
    }

    #[test]
    fn multiple_aggregate_has_a_total_that_cooks() {
        let catalog = contoso("multipleAggregate");
        let set = catalog.find("Contoso Timers").unwrap();
        let info = &catalog.sets[set];
        assert_eq!(info.kind, Kind::MultipleAggregate);
        let times = |perf_time| SampleTimes {
            perf_time,
            perf_freq: 1000,
            perf_time_100ns: perf_time * 10_000,
            object_time: perf_time,
            object_freq: 1000,
        };
        // "% Object Busy" (id 5, perf_obj_time_timer, aggregate sum, object time from ids 7/8).
        let frame = |t: u64, busy: [u64; 2]| {
            let collection = Collection {
                instances: vec![
                    instance("disk0", &[(5, busy[0]), (7, t), (8, 1000)]),
                    instance("disk1", &[(5, busy[1]), (7, t), (8, 1000)]),
                ],
                ..Collection::default()
            };
            Frame {
                system_time: BOOT_SYSTEM_TIME,
                sets: [(set, SetSample::new(info, collection, times(0)))]
                    .into_iter()
                    .collect(),
            }
        };
        let older = frame(1000, [0, 0]);
        let newer = frame(2000, [250, 500]);
        let selectors = resolve(&catalog, &args(&[r"\Contoso Timers(*)\% Object Busy"])).unwrap();
        let columns = expand(&catalog, &selectors, &older.sets).unwrap();
        let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                r"\\PCW-SIM\Contoso Timers(disk0)\% Object Busy",
                r"\\PCW-SIM\Contoso Timers(disk1)\% Object Busy",
                r"\\PCW-SIM\Contoso Timers(_Total)\% Object Busy",
            ]
        );
        // 100 · ΔN / ΔobjectTime: 25 %, 50 %, and the summed total 75 %.
        let row = cook_row(&catalog, &columns, Some(&older), &newer);
        assert_eq!(row, [Some(25.0), Some(50.0), Some(75.0)]);
        // A `(_Total)` path selects only the aggregate.
        let selectors =
            resolve(&catalog, &args(&[r"\Contoso Timers(_total)\% Object Busy"])).unwrap();
        let columns = expand(&catalog, &selectors, &older.sets).unwrap();
        assert_eq!(columns.len(), 1);
        assert_eq!(
            cook_row(&catalog, &columns, Some(&older), &newer),
            [Some(75.0)]
        );
    }

    #[test]
    fn listing_and_file_options() {
        let o = Options::parse(&args(&["-q"])).unwrap();
        assert_eq!(
            o.query,
            Some(Query {
                object: None,
                instances: false
            })
        );
        let o = Options::parse(&args(&["/QX", "Geometric Waves", "--sim-queue", "rx"])).unwrap();
        assert_eq!(
            o.query,
            Some(Query {
                object: Some("Geometric Waves".to_owned()),
                instances: true
            })
        );
        assert_eq!(o.sim_queues, ["rx"]);
        let o = Options::parse(&args(&[
            "-cf",
            "paths.txt",
            "-o",
            "out.tsv",
            "-f",
            "tsv",
            "--raw",
            "-y",
        ]))
        .unwrap();
        assert_eq!(o.counter_file.as_deref(), Some(Path::new("paths.txt")));
        assert_eq!(o.output.as_deref(), Some(Path::new("out.tsv")));
        assert_eq!((o.format, o.raw, o.query), (FileFormat::Tsv, true, None));
    }

    fn query_text(
        kernel: Option<&Kernel>,
        catalog: &Catalog,
        q: &Query,
    ) -> (Vec<String>, Vec<String>) {
        let mut out = Vec::new();
        let warnings = query(kernel, catalog, q, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        (text.lines().map(str::to_owned).collect(), warnings)
    }

    #[test]
    fn qx_lists_the_three_sets_with_their_instances() {
        let kernel = boot();
        let name: Vec<u16> = "eth0 rx#1".encode_utf16().collect();
        let queue = pcw_driver::queues::create(&name).unwrap();
        let catalog = Catalog::driver().unwrap();
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
    fn q_on_a_manifest_and_unknown_objects() {
        let catalog = contoso("multipleAggregate");
        let (lines, warnings) = query_text(
            None,
            &catalog,
            &Query {
                object: None,
                instances: true,
            },
        );
        assert!(warnings.is_empty());
        assert!(!lines.is_empty());
        // Instance names are run-time values: from a manifest `-qx` lists `(*)`; the
        // global-aggregate set has no instance part at all.
        assert_eq!(lines[0], r"\Contoso Timers(*)\% Busy Time");
        assert!(
            lines.contains(&r"\Contoso History\Resets".to_owned()),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .all(|l| l.contains("(*)") != l.starts_with(r"\Contoso History\")),
            "{lines:?}"
        );
        let err = query(
            None,
            &catalog,
            &Query {
                object: Some("Nope".to_owned()),
                instances: false,
            },
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::NoObject { .. }));
        assert!(
            err.to_string()
                .starts_with("object `Nope` not found (the objects are `"),
            "{err}"
        );
    }

    #[test]
    fn raw_columns_follow_the_cooked_ones() {
        let kernel = boot();
        let catalog = Catalog::driver().unwrap();
        let mut out = Vec::new();
        let mut sleep = |d: Duration| {
            kernel
                .collect("Geometric Waves", &Request::default())
                .unwrap();
            kernel.advance(i64::try_from(d.as_nanos() / 100).unwrap());
        };
        sample_with(
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
        let mut set = Catalog::driver().unwrap().sets.remove(2);
        set.kind = Kind::MultipleAggregate;
        let live = live_instances(&kernel, &set).unwrap();
        set.kind = Kind::GlobalAggregate;
        let global = live_instances(&kernel, &set).unwrap();
        assert!(pcw_driver::queues::close(queue));
        finish(kernel);
        assert_eq!(live, ["q1", TOTAL_INSTANCE]);
        assert!(global.is_empty(), "a global aggregate names no instance");
        set.kind = Kind::MultipleAggregate;
        assert_eq!(
            set_paths(&set, Some(&live))[..2],
            [
                r"\PCW Dynamic Queues(q1)\Packets/sec",
                r"\PCW Dynamic Queues(_Total)\Packets/sec"
            ]
        );
    }
}
