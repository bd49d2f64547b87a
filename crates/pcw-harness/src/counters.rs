// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counters as a consumer reads them: [`Counters`] holds the countersets of the driver's
//! manifest (pcw-pdh's catalog) over a booted kernel, and answers typeperf's questions — the
//! samples of counter paths with wildcards, cooked with PDH's formulas and raw, on the
//! kernel's clock, which the test moves; and the `-q`/`-qx` listings.

use std::path::Path;
use std::time::Duration;

use pcw_gen::model::{Aggregate, Instances};
use pcw_pdh::csv::{CsvTimestamp, header_row, sample_row};
use pcw_pdh::listing::{self, SetListing};
use pcw_pdh::{Catalog, CounterPath, Row, Sampler, TOTAL_INSTANCE};
use pcw_sim::kernel_pcw::Kernel;

pub use pcw_pdh::Error as QueryError;
pub use pcw_pdh::sample::RawValues;

/// The countersets of a manifest, read by consumers of a running kernel.
///
/// ```
/// use pcw_harness::{BUILD_SERVER_2022, Counters, Kernel};
///
/// let kernel = Kernel::boot(BUILD_SERVER_2022);
/// let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcw-gen/tests/manifests/contoso_v11.man");
/// let counters = Counters::from_manifest(&kernel, manifest)?;
/// // `-q`: the paths, without instances; a global aggregate's name none.
/// assert!(counters.list(None)?.contains(&r"\Contoso Timers\% Busy Time".to_owned()));
/// // Sampling needs the provider registered: nothing is, so the path resolves but the
/// // collection is refused.
/// assert!(counters.typeperf(&[r"\Contoso Timers\*"], 1, std::time::Duration::from_secs(1)).is_err());
/// # drop(counters);
/// # pcw_harness::finish(kernel)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Counters<'k> {
    kernel: &'k Kernel,
    catalog: Catalog,
}

/// What a typeperf run printed: its columns (full paths, in PDH's order) and a row per sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    /// `\\PCW-SIM\Object(Instance)\Counter`, one per column.
    pub columns: Vec<String>,
    /// One per sample: the time, cooked values and raw samples of every column.
    pub rows: Vec<Row>,
}

impl Samples {
    /// The index of the column whose path is `path` (any case; the `\\PCW-SIM` prefix may
    /// be left out).
    pub fn column(&self, path: &str) -> Option<usize> {
        let full = |c: &str| {
            c.eq_ignore_ascii_case(path)
                || c.strip_prefix(r"\\PCW-SIM")
                    .is_some_and(|rest| rest.eq_ignore_ascii_case(path))
        };
        self.columns.iter().position(|c| full(c))
    }

    /// The cooked values of column `path`, one per row (`None` where PDH has no value).
    ///
    /// # Panics
    /// When no column has that path, naming the columns there are.
    pub fn cooked(&self, path: &str) -> Vec<Option<f64>> {
        let i = self.expect_column(path);
        self.rows.iter().map(|r| r.values[i]).collect()
    }

    /// The raw samples of column `path`, one per row.
    ///
    /// # Panics
    /// When no column has that path, naming the columns there are.
    pub fn raw(&self, path: &str) -> Vec<Option<RawValues>> {
        let i = self.expect_column(path);
        self.rows.iter().map(|r| r.raw[i]).collect()
    }

    fn expect_column(&self, path: &str) -> usize {
        self.column(path).unwrap_or_else(|| {
            panic!(
                "no column `{path}`; the columns are {}",
                self.columns
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// The run as typeperf prints it: an empty line, the header row, a row per sample (PDH-CSV,
    /// `\n` line ends).
    pub fn csv(&self) -> String {
        let mut out = format!("\n{}\n", header_row(&self.columns));
        for row in &self.rows {
            // A time outside the years 1 to 9999 shows as its raw FILETIME.
            match CsvTimestamp::from_filetime(row.system_time) {
                Some(t) => out.push_str(&sample_row(&t, &row.values)),
                None => out.push_str(&row.system_time.to_string()),
            }
            out.push('\n');
        }
        out
    }
}

impl<'k> Counters<'k> {
    /// The countersets of the manifest at `path`, read as the tools read a manifest.
    ///
    /// # Errors
    /// [`QueryError::Manifest`] when it cannot be read or does not compile.
    pub fn from_manifest(kernel: &'k Kernel, path: impl AsRef<Path>) -> Result<Self, QueryError> {
        let input = pcw_gen::Input::read(path)?;
        let inspect = pcw_gen::Config::new().inspect(&input)?;
        Ok(Self::from_catalog(kernel, Catalog::from_inspect(inspect)))
    }

    /// The countersets of a manifest's text; `file` names it in diagnostics.
    ///
    /// # Errors
    /// [`QueryError::Manifest`] when it does not compile.
    pub fn from_text(kernel: &'k Kernel, file: &str, text: &str) -> Result<Self, QueryError> {
        Ok(Self::from_catalog(
            kernel,
            Catalog::from_manifest(file, text)?,
        ))
    }

    /// The countersets of a catalog.
    pub fn from_catalog(kernel: &'k Kernel, catalog: Catalog) -> Self {
        Self { kernel, catalog }
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Whether PDH shows column `path` (a path of [`Samples::columns`]) blank whatever the
    /// provider publishes: the column reads an aggregate instance — a `globalAggregate` or
    /// `globalAggregateHistory` set's one instance, a `multipleAggregate` set's `_Total` — and
    /// its counter, or a counter its value is cooked from, does not aggregate
    /// (`aggregate="undefined"` in the manifest). Every other column of an instance the
    /// provider offers has a value in every sample. `false` for a path that names no counter
    /// of the catalog.
    ///
    /// ```
    /// use pcw_harness::{BUILD_SERVER_2022, Counters, Kernel};
    ///
    /// let kernel = Kernel::boot(BUILD_SERVER_2022);
    /// let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcw-gen/tests/manifests/contoso_v11.man");
    /// let counters = Counters::from_manifest(&kernel, manifest)?;
    /// // A globalAggregate set: `% Idle Time (100ns)` says aggregate="undefined", `% Busy Time` "avg".
    /// assert!(counters.aggregates_to_blank(r"\\PCW-SIM\Contoso Timers\% Idle Time (100ns)"));
    /// assert!(!counters.aggregates_to_blank(r"\\PCW-SIM\Contoso Timers\% Busy Time"));
    /// # drop(counters);
    /// # pcw_harness::finish(kernel)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregates_to_blank(&self, path: &str) -> bool {
        let Ok(parsed) = CounterPath::parse(path) else {
            return false;
        };
        let Some(set) = self
            .catalog
            .find(&parsed.object)
            .and_then(|i| self.catalog.sets.get(i))
        else {
            return false;
        };
        let aggregated = match set.instances {
            Instances::GlobalAggregate | Instances::GlobalAggregateHistory => true,
            Instances::MultipleAggregate => parsed
                .instance
                .as_ref()
                .is_some_and(|i| i.parent.is_none() && i.name.eq_ignore_ascii_case(TOTAL_INSTANCE)),
            Instances::Single | Instances::Multiple => false,
        };
        aggregated
            && set
                .counters
                .iter()
                .filter(|c| {
                    c.name
                        .as_deref()
                        .is_some_and(|n| n.eq_ignore_ascii_case(&parsed.counter))
                })
                .any(|c| {
                    c.ids()
                        .any(|id| set.aggregate_of(id) == Aggregate::Undefined)
                })
    }

    /// typeperf `PATHS -sc samples -si interval` on the kernel's manual clock: the paths are
    /// resolved, the counters added, one priming collection taken and the instance wildcards
    /// expanded against it; then `samples` times the clock moves by `interval` and a row is
    /// collected and cooked against the previous collection.
    ///
    /// # Errors
    /// A path that does not resolve or matches no instance, or a collection the kernel refuses.
    pub fn typeperf(
        &self,
        paths: &[&str],
        samples: u32,
        interval: Duration,
    ) -> Result<Samples, QueryError> {
        self.typeperf_with(paths, samples, interval, |_| {})
    }

    /// As [`Counters::typeperf`], with `between(i)` run before sample `i` (0-based), after the
    /// priming collection and before the clock moves: where a test makes the driver count.
    ///
    /// # Errors
    /// As [`Counters::typeperf`].
    pub fn typeperf_with(
        &self,
        paths: &[&str],
        samples: u32,
        interval: Duration,
        mut between: impl FnMut(u32),
    ) -> Result<Samples, QueryError> {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        let mut sampler = Sampler::start(self.kernel, self.kernel, &self.catalog, &paths)?;
        let columns = sampler.columns().iter().map(|c| c.path.clone()).collect();
        let mut rows = Vec::new();
        let ticks = i64::try_from(interval.as_nanos() / 100).unwrap_or(i64::MAX);
        let sampled: Result<(), QueryError> = (0..samples).try_for_each(|i| {
            between(i);
            self.kernel.advance(ticks);
            rows.push(sampler.sample()?);
            Ok(())
        });
        let stopped = sampler.stop();
        sampled?;
        stopped?;
        Ok(Samples { columns, rows })
    }

    /// typeperf `-q [object]`: the counter paths without instances (`\Object(*)\Counter`).
    ///
    /// # Errors
    /// [`QueryError::NoObject`] for an unknown object.
    pub fn list(&self, object: Option<&str>) -> Result<Vec<String>, QueryError> {
        Ok(self.listing(object, false)?.0)
    }

    /// typeperf `-qx [object]`: one path per counter and live instance (`_Total` last for a
    /// `multipleAggregate` set), and the warnings about instance names PDH or the exporters
    /// mishandle.
    ///
    /// # Errors
    /// [`QueryError::NoObject`] for an unknown object, the kernel's refusals.
    pub fn list_instances(
        &self,
        object: Option<&str>,
    ) -> Result<(Vec<String>, Vec<String>), QueryError> {
        self.listing(object, true)
    }

    fn listing(
        &self,
        object: Option<&str>,
        instances: bool,
    ) -> Result<(Vec<String>, Vec<String>), QueryError> {
        let mut paths = Vec::new();
        let mut warnings = Vec::new();
        for set in listing::list(Some(self.kernel), &self.catalog, object, instances)? {
            let SetListing {
                paths: p,
                warnings: w,
            } = set?;
            paths.extend(p);
            warnings.extend(w);
        }
        Ok((paths, warnings))
    }
}
