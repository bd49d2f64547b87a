// SPDX-License-Identifier: MIT OR Apache-2.0
//! What `pcw typeperf` prints: the samples of a [`Sampler`] as typeperf's PDH-CSV (or TSV, with
//! `--raw` columns), and `-q`/`-qx` listings one path a line.

use std::io::Write;
use std::time::Duration;

use pcw_gen::text::visible;
use pcw_pdh::csv::{CsvTimestamp, RAW_PARTS, format_value, header_row, quote_field, sample_row};
use pcw_pdh::listing;
use pcw_pdh::{Catalog, Row, Sampler, Source};
use pcw_sim::kernel_pcw::Kernel;

use super::Error;
use super::options::{FileFormat, Query};

/// The line terminator of the host (typeperf's `\r\n` on Windows).
pub(crate) const EOL: &str = if cfg!(windows) { "\r\n" } else { "\n" };

/// How samples are written: [`FileFormat`] and whether raw values follow each cooked one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// CSV or TSV.
    pub format: FileFormat,
    /// `--raw`.
    pub raw: bool,
}

impl Layout {
    fn plain(self) -> bool {
        self.format == FileFormat::Csv && !self.raw
    }

    fn cells(self, cells: &[String]) -> String {
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
        self.cells(&cells)
    }

    fn row(self, time: &CsvTimestamp, row: &Row) -> String {
        if self.plain() {
            return sample_row(time, &row.values);
        }
        let mut cells = vec![time.to_string()];
        for (value, raw) in row.values.iter().zip(&row.raw) {
            cells.push(format_value(*value));
            if self.raw {
                match raw {
                    None => cells.extend([String::new(), String::new(), String::new()]),
                    Some(raw) => cells.extend([
                        raw.first.to_string(),
                        raw.second.to_string(),
                        raw.time_base.map_or_else(String::new, |t| t.to_string()),
                    ]),
                }
            }
        }
        self.cells(&cells)
    }
}

/// typeperf's whole run on a booted kernel: start a [`Sampler`] over `source` (resolve,
/// `AddCounter`, prime, expand; the kernel keeps the clock, and is the source for the driver's
/// countersets), print the header, then `samples` times `wait(interval)`, sample and print a
/// row; stop the sampler (`RemoveCounter`) at the end, also after an error. `wait` really
/// waits on the real clock and returns `false` to stop early (Ctrl+C,
/// [`Interrupt::wait`](super::interrupt::Interrupt::wait)); tests advance the manual clock in
/// it (and may drive the driver between samples). Returns the number of rows printed, fewer
/// than `samples` when `wait` stopped the run.
///
/// # Errors
/// Every query error of resolution and expansion (before anything is printed), and write or
/// collection errors.
#[expect(
    clippy::too_many_arguments,
    reason = "what to sample, from where, how often, and how to print it"
)]
pub(crate) fn sample(
    kernel: &Kernel,
    source: &dyn Source,
    catalog: &Catalog,
    paths: &[String],
    (samples, interval): (u32, Duration),
    layout: Layout,
    wait: &mut dyn FnMut(Duration) -> bool,
    out: &mut dyn Write,
) -> Result<u32, Error> {
    let mut sampler = Sampler::start(kernel, source, catalog, paths)?;
    let printed = print_samples(&mut sampler, (samples, interval), layout, wait, out);
    let stopped = sampler.stop();
    let taken = printed?;
    stopped?;
    Ok(taken)
}

/// The header and up to `samples` rows of a started sampler (fewer when `wait` says stop);
/// the number of rows. Each row is written whole before the next wait, so a stopped run's
/// output is a complete document.
fn print_samples(
    sampler: &mut Sampler<'_>,
    (samples, interval): (u32, Duration),
    layout: Layout,
    wait: &mut dyn FnMut(Duration) -> bool,
    out: &mut dyn Write,
) -> Result<u32, Error> {
    let paths: Vec<&str> = sampler.columns().iter().map(|c| c.path.as_str()).collect();
    write!(out, "{EOL}{}{EOL}", layout.header(&paths))?;
    out.flush()?;
    let mut taken = 0;
    while taken < samples && wait(interval) {
        let row = sampler.sample()?;
        let time = CsvTimestamp::from_filetime(row.system_time).ok_or(Error::ClockRange)?;
        write!(out, "{}{EOL}", layout.row(&time, &row))?;
        out.flush()?;
        taken += 1;
    }
    Ok(taken)
}

/// `-q`/`-qx`: the counter paths of the selected sets, one a line ([`listing::list`]), each
/// through [`visible`] as `pcw list` shows them: an instance name with a line break or another
/// control character stays on its line (`\u{a}`) instead of adding a line of its own.
/// Returns the instance-name warnings to print.
///
/// # Errors
/// The listing's query errors and write errors.
pub(crate) fn print_listing(
    kernel: Option<&Kernel>,
    catalog: &Catalog,
    query: &Query,
    out: &mut dyn Write,
) -> Result<Vec<String>, Error> {
    let mut warnings = Vec::new();
    for set in listing::list(kernel, catalog, query.object.as_deref(), query.instances)? {
        let set = set?;
        warnings.extend(set.warnings);
        for path in set.paths {
            write!(out, "{}{EOL}", visible(&path))?;
        }
    }
    out.flush()?;
    Ok(warnings)
}
