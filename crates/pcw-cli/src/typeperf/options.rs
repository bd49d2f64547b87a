// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw typeperf`'s command line, taken as typeperf takes it: option names in any case, with
//! `-` or `/`, paths anywhere among them; and the `-cf` file of paths.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pcw_gen::text::visible;
use pcw_pdh::csv::{HEADER_TAG, TSV_HEADER_TAG};

use super::Error;

/// Samples taken when `-sc` is not given (typeperf would run until Ctrl+C).
pub(crate) const DEFAULT_SAMPLES: u32 = 10;
/// The longest `-si` accepted: 10⁹ seconds.
pub(crate) const MAX_INTERVAL: Duration = Duration::from_secs(1_000_000_000);
/// The interval when `-si` is not given, as typeperf's.
pub(crate) const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// Arguments of `pcw typeperf`, taken as typeperf takes them.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Counter paths (`\Object(Instance)\Counter`, `*` for instance and counter) and the
    /// options `-sc SAMPLES` (default 10) and `-si INTERVAL` (seconds, fractional allowed, or
    /// `[[hh:]mm:]ss`; default 1); `--image PATH` samples a cross-built `.sys` run by the
    /// loader (with `--manifest FILE`, any driver's; alone, the reference driver's image)
    /// instead of the host build of the reference driver. `-o FILE` writes the samples, or the
    /// `-q`/`-qx` listing, to FILE (`-y` to replace an existing one). Ctrl+C (SIGINT) or
    /// SIGTERM stops sampling at once and keeps the rows taken, in the `-o` file too, then
    /// exits with 130 (SIGINT) or 143 (SIGTERM).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(super) args: Vec<String>,
}

/// Which provider `pcw typeperf` samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProviderChoice {
    /// The kernel driver under the simulated kernel (the default).
    Driver,
    /// The example user-mode service `pcw-tidal` under the simulated Perflib.
    Tidal,
}

/// The parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Options {
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
    /// `-o FILE`: write the samples (or the `-q`/`-qx` listing) there instead of stdout.
    pub output: Option<PathBuf>,
    /// `-f CSV|TSV`.
    pub format: FileFormat,
    /// `-y`: overwrite an existing `-o` file.
    pub overwrite: bool,
    /// `--raw`: each cooked column is followed by the raw sample's first value, second value
    /// and time base.
    pub raw: bool,
    /// `--manifest FILE`: the countersets of this manifest instead of the reference driver's:
    /// listed alone (`-q`/`-qx`), or sampled from the driver `--image` names.
    pub manifest: Option<PathBuf>,
    /// `--sim-queue NAME`: create a dynamic queue of that name in the simulated driver first.
    pub sim_queues: Vec<String>,
    /// The options given that only sampling uses (`-sc`, `-si`, `-f`, `--raw`), refused with
    /// `-q`/`-qx`.
    pub for_sampling: Vec<&'static str>,
}

/// A `-q` or `-qx` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Query {
    /// The object to list; every object when `None`.
    pub object: Option<String>,
    /// `-qx`: one path per instance instead of `(*)`.
    pub instances: bool,
}

/// `-f`: the sample file's format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FileFormat {
    /// Comma-separated, `(PDH-CSV 4.0)`.
    #[default]
    Csv,
    /// Tab-separated, `(PDH-TSV 4.0)`.
    Tsv,
}

impl FileFormat {
    pub(super) fn separator(self) -> char {
        match self {
            Self::Csv => ',',
            Self::Tsv => '\t',
        }
    }

    pub(super) fn tag(self) -> &'static str {
        match self {
            Self::Csv => HEADER_TAG,
            Self::Tsv => TSV_HEADER_TAG,
        }
    }
}

impl Options {
    /// Parses typeperf's arguments: paths and the options `-sc N`, `-si INTERVAL` (option
    /// names case-insensitive, `-` or `/`, as typeperf accepts them).
    ///
    /// # Errors
    /// [`Error::Usage`] for an unknown option, a missing or bad option value, or no path.
    #[expect(
        clippy::too_many_lines,
        reason = "one match arm per option, typeperf's and pcw's own, each checking its value where it is read"
    )]
    pub(crate) fn parse(args: &[String]) -> Result<Self, Error> {
        let mut options = Self {
            provider: ProviderChoice::Driver,
            paths: Vec::new(),
            samples: DEFAULT_SAMPLES,
            interval: DEFAULT_INTERVAL,
            query: None,
            counter_file: None,
            output: None,
            format: FileFormat::Csv,
            overwrite: false,
            raw: false,
            manifest: None,
            sim_queues: Vec::new(),
            for_sampling: Vec::new(),
        };
        let mut args = args.iter().peekable();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--raw" => {
                    options.raw = true;
                    options.for_sampling.push("--raw");
                    continue;
                }
                "--manifest" | "--sim-queue" => {
                    let v = args
                        .next()
                        .ok_or_else(|| Error::Usage(format!("`{}` needs a value", visible(arg))))?;
                    if arg == "--manifest" {
                        options.manifest = Some(PathBuf::from(v));
                    } else if options
                        .sim_queues
                        .iter()
                        .any(|q| q.to_lowercase() == v.to_lowercase())
                    {
                        return Err(Error::Usage(format!(
                            "`--sim-queue {}` is given twice: queue names are unique, and \
                             compare without regard to case",
                            visible(v)
                        )));
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
                    options.for_sampling.push("-sc");
                    let v = value("sc")?;
                    options.samples = parse_count(v)?;
                }
                "provider" => {
                    let v = value("provider")?;
                    options.provider = match v.to_ascii_lowercase().as_str() {
                        "driver" => ProviderChoice::Driver,
                        "tidal" => ProviderChoice::Tidal,
                        _ => {
                            return Err(Error::Usage(format!(
                                "`-provider {}`: expected `driver` or `tidal`",
                                visible(v)
                            )));
                        }
                    };
                }
                "si" => {
                    options.for_sampling.push("-si");
                    let v = value("si")?;
                    options.interval = parse_interval(v).ok_or_else(|| {
                        Error::Usage(format!(
                            "`-si {}`: expected seconds (fractions allowed) or `[[hh:]mm:]ss`, \
                             more than 0",
                            visible(v)
                        ))
                    })?;
                    if options.interval > MAX_INTERVAL {
                        return Err(Error::Usage(format!(
                            "`-si {}`: too large: at most {} seconds (about 31 years)",
                            visible(v),
                            MAX_INTERVAL.as_secs()
                        )));
                    }
                }
                "cf" => options.counter_file = Some(PathBuf::from(value("cf")?)),
                "o" => options.output = Some(PathBuf::from(value("o")?)),
                "f" => {
                    options.for_sampling.push("-f");
                    let v = value("f")?;
                    options.format = match v.to_ascii_uppercase().as_str() {
                        "CSV" => FileFormat::Csv,
                        "TSV" => FileFormat::Tsv,
                        _ => {
                            return Err(Error::Usage(format!(
                                "`-f {}`: expected `CSV` or `TSV` (the binary `BIN` and SQL \
                                 formats are not supported)",
                                visible(v)
                            )));
                        }
                    };
                }
                "y" => options.overwrite = true,
                _ => {
                    return Err(Error::Usage(format!(
                        "unknown option `{}` (pcw typeperf takes `-sc SAMPLES`, \
                         `-si INTERVAL`, `-cf FILE`, `-o FILE`, `-f CSV|TSV`, `-q [OBJECT]`, \
                         `-qx [OBJECT]`, `-y`, `--raw`, `--manifest FILE`, `--sim-queue NAME`, `--image SYS`, \
                         `-provider driver|tidal`)",
                        visible(arg)
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
            if let Some(option) = options.for_sampling.first() {
                return Err(Error::Usage(format!(
                    "`{option}` is for sampling; `-q`/`-qx` list counter paths and take only \
                     `-o FILE` and `-y` (and the provider options)"
                )));
            }
            return Ok(options);
        }
        if options.paths.is_empty() && options.counter_file.is_none() {
            return Err(Error::Usage(
                "no counter path given (for example `\\Geometric Waves(*)\\*`)".to_owned(),
            ));
        }
        Ok(options)
    }
}

/// `-sc`'s value: a whole number from 1 to [`u32::MAX`], each way of missing it named.
fn parse_count(text: &str) -> Result<u32, Error> {
    let usage = |why: &str| Error::Usage(format!("`-sc {}`: {why}", visible(text)));
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(usage("expected a whole number of samples, 1 or more"));
    }
    match text.parse::<u32>() {
        Ok(0) => Err(usage("the sample count must be 1 or more")),
        Ok(n) => Ok(n),
        Err(_) => Err(usage(&format!("too large: at most {} samples", u32::MAX))),
    }
}

/// `-si`'s value: `ss[.fff]`, `mm:ss[.fff]` or `hh:mm:ss[.fff]`; `None` if malformed or zero
/// (longer than [`MAX_INTERVAL`] is the caller's "too large").
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
    (total > 0.0).then(|| Duration::try_from_secs_f64(total.min(1e12)).ok())?
}

/// Splits `--image PATH` (anywhere among the arguments) from the rest.
pub(super) fn take_image(args: &[String]) -> Result<(Option<String>, Vec<String>), Error> {
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

/// Reads `-cf`'s file: one counter path a line, with its line number (from 1); blank lines
/// and surrounding blanks ignored. The file is read as every text input is (bounded, UTF-8 or
/// UTF-16, byte order mark dropped).
pub(super) fn counter_file(path: &Path) -> Result<Vec<(String, usize)>, Error> {
    let bytes = pcw_io::input::read(path, pcw_io::input::COUNTER_FILE)?;
    let (text, _) = pcw_io::text::decode(&bytes).map_err(|error| Error::Text {
        what: pcw_io::input::COUNTER_FILE.noun,
        path: path.to_path_buf(),
        error,
    })?;
    Ok(text
        .lines()
        .zip(1..)
        .map(|(l, n)| (l.trim(), n))
        .filter(|(l, _)| !l.is_empty())
        .map(|(l, n)| (l.to_owned(), n))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
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
            &["-q", "-sc", "1"],
            &["-qx", "Geometric Waves", "-si", "1"],
            &["-f", "TSV", "-q"],
            &["-q", "--raw"],
        ] {
            assert!(
                matches!(Options::parse(&args(bad)), Err(Error::Usage(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn listing_and_file_options() {
        let o = Options::parse(&args(&["-q"])).unwrap();
        assert_eq!(o.output, None);
        let o = Options::parse(&args(&["-q", "-o", "list.txt", "-y"])).unwrap();
        assert_eq!(o.output.as_deref(), Some(Path::new("list.txt")));
        assert!(o.overwrite);
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
}
