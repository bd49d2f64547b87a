// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw export`: the scrape configuration fleets need for a manifest's countersets.
//!
//! ```text
//! pcw export FILE --to windows-exporter|otel [-o OUT] [--interval DURATION] [--allow-bad-names]
//! ```
//!
//! Before writing, the metric names are checked as `pcw lint` checks them
//! ([`pcw_gen::metric_name_warnings`], for the chosen tool only): two counters that get
//! the same metric name (a duplicate breaks the scrape or merges the two series), a name that
//! keeps no letter or digit of a counterset or counter name, or one the tool refuses. Each is
//! printed as a warning on stderr, naming the counters, and then nothing is written and the
//! exit code is 1; `--allow-bad-names` writes the configuration anyway (the warnings are still
//! printed).
//!
//! * `windows-exporter`: a `windows_exporter` configuration file enabling the
//!   `performancecounter` collector, whose `objects` value is a YAML document kept as a string
//!   (`|-`), as the collector requires. Per counterset, an object with `type: raw` holds the
//!   counters whose raw value is meaningful on its own (raw counts, counts and bulk counts,
//!   100 ns timers, elapsed time); the counters PDH must cook from two values or a base
//!   (fractions, averages, other timers) go to a second object `<name>_formatted` with
//!   `type: formatted`. Every counter gets its `metric` name, written out so that the
//!   collector's own derivation (which keeps some characters a Prometheus name cannot hold) is
//!   not used: `windows_performancecounter_<object>_<counter>`, lowercase, `%` as `percent`,
//!   other runs of non-alphanumerics `_` ([`pcw_gen::fleet::windows_exporter_metric`]), and its Prometheus
//!   `type` (`counter` for counts and timers, `gauge` otherwise). Sets with instances ask for
//!   `["*"]`, and `multipleAggregate` sets for `["*", "_Total"]`, because the collector drops
//!   `_Total` unless it is named.
//! * `otel`: an OpenTelemetry collector `receivers:` section with one `windowsperfcounters`
//!   receiver: every displayed counter in `perfcounters`, named `<object>.<counter>` (lowercase,
//!   `%` as `percent`, `/` as `per`, other runs of punctuation `_`) and declared in `metrics`
//!   as a gauge with the counter's help as description and a unit from its display suffix
//!   (`1/s`, `%`, `s`, `1`). The receiver reads formatted values, so rates are per second and
//!   fractions are percentages already. Instances as above.
//!
//! Every string the files hold (objects, counters, metric names, help texts) is a double-quoted
//! YAML scalar with escapes, also in the `objects` document, so no name can end a scalar or
//! start a key; names carrying what no output can (controls, line separators) never get here,
//! the analysis refuses them.
//!
//! Helper counters (bases, time stamps, `noDisplay`) are never exported: a consumer cannot ask
//! for them by name. Each file starts with comments listing every metric it produces: name,
//! type, unit or instance label, the counter path it reads and the counter's help.

use std::fmt::Write as _;
use std::path::PathBuf;

use pcw_core::counter_type::{CounterType, DisplaySuffix};
use pcw_gen::fleet::{
    Exporter, TOTAL_INSTANCE, is_exported, otel_metric, otel_part, windows_exporter_metric,
    windows_exporter_sanitize,
};
use pcw_gen::model::{Counter, Counterset, Instances, Manifest};

use crate::Failure;

/// Which tool's configuration to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Target {
    /// `windows_exporter`'s `performancecounter` collector.
    WindowsExporter,
    /// The OpenTelemetry collector's `windowsperfcounters` receiver.
    Otel,
}

/// Arguments of `pcw export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The counter manifest.
    file: PathBuf,
    /// The configuration to write.
    #[arg(long = "to", value_enum)]
    target: Target,
    /// Write the configuration here instead of stdout.
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// The OpenTelemetry receiver's `collection_interval`.
    #[arg(long, default_value = "30s")]
    interval: String,
    /// Write the configuration even when metric names clash (two counters, one name), keep
    /// nothing of a counterset's or counter's name, or are names the tool refuses. Without
    /// it, each such name is a warning on stderr and nothing is written (exit 1).
    #[arg(long)]
    allow_bad_names: bool,
}

/// Why `pcw export` failed (exit 1).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    /// The manifest could not be read or has errors (diagnostics already printed).
    #[error("{0}")]
    Manifest(String),
    /// The output file could not be written (it is unchanged).
    #[error(transparent)]
    Output(#[from] pcw_io::OutputError),
    /// Standard output or error failed.
    #[error(transparent)]
    Stream(#[from] pcw_io::StreamError),
    /// `--interval` is longer than the collector can represent.
    #[error(
        "`--interval {}`: too large: the collector takes at most about 2562047h (292 years)",
        pcw_io::text::visible(.0)
    )]
    IntervalTooLarge(String),
    /// Metric names clash or are unusable, and `--allow-bad-names` was not given (the
    /// warnings are printed already).
    #[error(
        "{0} metric name warning(s) for {1}; nothing was written (`--allow-bad-names` writes it anyway)"
    )]
    BadNames(usize, &'static str),
    /// `--interval` is not a duration the collector accepts.
    #[error(
        "`--interval {}`: expected a positive duration such as `30s`, `1m` or `500ms`",
        pcw_io::text::visible(.0)
    )]
    Interval(String),
}

impl Failure for ExportError {
    fn exit_code(&self) -> u8 {
        1
    }
}

/// Whether `windows_exporter`'s `raw` mode gives a meaningful value for this type on its own
/// (no base, no second sample needed to read it).
fn raw_is_meaningful(t: CounterType) -> bool {
    matches!(
        t,
        CounterType::Rawcount
            | CounterType::LargeRawcount
            | CounterType::RawcountHex
            | CounterType::LargeRawcountHex
            | CounterType::Counter
            | CounterType::BulkCount
            | CounterType::Timer100ns
            | CounterType::Precision100nsTimer
            | CounterType::ElapsedTime
    )
}

/// The Prometheus type `windows_exporter` reports for a raw-mode counter.
fn prometheus_type(t: CounterType) -> &'static str {
    match t {
        CounterType::Counter
        | CounterType::BulkCount
        | CounterType::Timer100ns
        | CounterType::Precision100nsTimer => "counter",
        _ => "gauge",
    }
}

/// What the value of a raw-mode counter means in `windows_exporter`.
fn raw_meaning(t: CounterType) -> &'static str {
    match t {
        CounterType::Counter | CounterType::BulkCount => "cumulative count",
        CounterType::Timer100ns | CounterType::Precision100nsTimer => "cumulative seconds",
        CounterType::ElapsedTime => "seconds since the start time",
        _ => "the raw value",
    }
}

/// The OpenTelemetry unit of a counter's formatted value.
fn otel_unit(t: CounterType) -> &'static str {
    match t.display_suffix() {
        DisplaySuffix::PerSec => "1/s",
        DisplaySuffix::Percent => "%",
        DisplaySuffix::Seconds => "s",
        DisplaySuffix::None | DisplaySuffix::NoShow => {
            if t == CounterType::ElapsedTime {
                "s"
            } else {
                "1"
            }
        }
    }
}

/// A YAML double-quoted scalar: every string the files carry is written so, whatever it holds,
/// so no text of the manifest can end the scalar, start a line, or be read as anything but
/// itself. `"` and `\` are escaped, and so is every character a YAML reader would refuse or
/// take for a line break (controls, NEL, `U+2028`, `U+2029`), `U+FEFF` (which a reader may drop)
/// and the noncharacters: the scalar is one line of printable text, also inside the block
/// scalar that holds `windows_exporter`'s `objects`.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c == '\u{feff}' || pcw_gen::text::refused(c).is_some() => {
                let u = u32::from(c);
                if u > 0xFFFF {
                    let _ = write!(out, "\\U{u:08X}");
                } else {
                    let _ = write!(out, "\\u{u:04X}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The counters a consumer can ask for by name.
fn displayed(set: &Counterset) -> impl Iterator<Item = (&Counter, &str)> {
    set.counters
        .iter()
        .filter(|c| is_exported(c))
        .filter_map(|c| Some((c, c.name.as_deref()?)))
}

/// The label `windows_exporter` puts the instance name in. Not `instance`, which Prometheus
/// gives every scraped series for its target (it would rename ours `exported_instance`).
pub(crate) const INSTANCE_LABEL: &str = "perf_instance";

/// The counter path a metric reads, `(*)` standing for the instances.
fn doc_path(set: &Counterset, counter: &str) -> String {
    if set.instances.has_instances() {
        format!("\\{}(*)\\{counter}", set.name)
    } else {
        format!("\\{}\\{counter}", set.name)
    }
}

/// The `instances` list for a set, as a YAML flow sequence; `None` for sets without instances.
fn instances_yaml(set: &Counterset) -> Option<String> {
    match set.instances {
        Instances::Multiple => Some(r#"["*"]"#.to_owned()),
        Instances::MultipleAggregate => Some(format!(r#"["*", "{TOTAL_INSTANCE}"]"#)),
        _ => None,
    }
}

/// Notes a `defaultScale` PDH applies to formatted values.
fn scale_note(doc: &mut String, c: &Counter) {
    if c.default_scale != 0 {
        let _ = writeln!(
            doc,
            "    note: PDH multiplies the formatted value by 1e{} (`defaultScale`)",
            c.default_scale
        );
    }
}

/// `text` as comment lines, one per `\n`; what a YAML reader would take for another line break
/// (or refuse) is written as `\u{…}`, so every line stays a comment.
fn comment_lines(out: &mut String, text: &str) {
    for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {}", pcw_gen::text::visible(line));
        }
    }
}

fn header(out: &mut String, manifest: &Manifest, file: &str, tool: &str) {
    let p = &manifest.provider;
    comment_lines(
        out,
        &format!(
            "{tool} configuration for the countersets of `{}` ({}),\nwritten by `pcw export` from {file}.\n",
            p.name, p.guid
        ),
    );
}

/// The `windows_exporter` configuration file.
pub(crate) fn windows_exporter(manifest: &Manifest, file: &str) -> String {
    let mut out = String::new();
    header(&mut out, manifest, file, "windows_exporter");
    let mut doc =
        String::from("\nMetrics (Prometheus name, type, labels; the counter path read; help):\n");
    let mut objects = String::new();
    for set in &manifest.provider.countersets {
        let label = if set.instances.has_instances() {
            format!("{{{INSTANCE_LABEL}}}")
        } else {
            "-".to_owned()
        };
        let object_name = windows_exporter_sanitize(&set.name);
        let (raw, formatted): (Vec<_>, Vec<_>) =
            displayed(set).partition(|(c, _)| raw_is_meaningful(c.counter_type));
        for (kind, counters, name) in [
            ("raw", raw, object_name.clone()),
            ("formatted", formatted, format!("{object_name}_formatted")),
        ] {
            if counters.is_empty() {
                continue;
            }
            let _ = writeln!(objects, "- name: {}", quoted(&name));
            let _ = writeln!(objects, "  object: {}", quoted(&set.name));
            let _ = writeln!(objects, "  type: {kind}");
            if let Some(instances) = instances_yaml(set) {
                let _ = writeln!(objects, "  instances: {instances}");
                let _ = writeln!(objects, "  instance_label: {INSTANCE_LABEL}");
            }
            let _ = writeln!(objects, "  counters:");
            for (c, cname) in counters {
                let metric = windows_exporter_metric(&set.name, cname);
                let (ptype, meaning) = if kind == "raw" {
                    (prometheus_type(c.counter_type), raw_meaning(c.counter_type))
                } else {
                    ("gauge", "the formatted value, as typeperf shows it")
                };
                let _ = writeln!(objects, "    - name: {}", quoted(cname));
                let _ = writeln!(objects, "      metric: {}", quoted(&metric));
                let _ = writeln!(objects, "      type: {ptype}");
                let _ = writeln!(
                    doc,
                    "  {metric} {ptype} {label}\n    {} ({}, {kind}: {meaning})",
                    doc_path(set, cname),
                    c.counter_type.name(),
                );
                if kind == "formatted" {
                    scale_note(&mut doc, c);
                }
                if let Some(help) = c.description.as_deref().filter(|h| !h.is_empty()) {
                    let _ = writeln!(doc, "    {help}");
                }
            }
        }
    }
    comment_lines(&mut out, &doc);
    out.push_str(
        "#\n# `enabled` lists only this collector: add it to the collectors you already run.\n",
    );
    out.push_str("collectors:\n  enabled: performancecounter\n");
    out.push_str("collector:\n  performancecounter:\n");
    out.push_str("    # The collector reads `objects` as a YAML document in a string.\n");
    out.push_str("    objects: |-\n");
    for line in objects.lines() {
        let _ = writeln!(out, "      {line}");
    }
    out
}

/// The OpenTelemetry collector `receivers:` section.
pub(crate) fn otel(manifest: &Manifest, file: &str, interval: &str) -> String {
    let mut out = String::new();
    header(
        &mut out,
        manifest,
        file,
        "OpenTelemetry collector (windowsperfcounters receiver)",
    );
    let mut doc = String::from(
        "\nMetrics (name, type, unit, attributes; the counter path read; help).\nThe receiver reads formatted values: rates per second, fractions in percent.\n",
    );
    let mut metrics = String::new();
    let mut declared = std::collections::BTreeSet::new();
    let mut perfcounters = String::new();
    for set in &manifest.provider.countersets {
        let counters: Vec<_> = displayed(set).collect();
        if counters.is_empty() {
            continue;
        }
        let attrs = if set.instances.has_instances() {
            "{instance}"
        } else {
            "-"
        };
        let _ = writeln!(perfcounters, "      - object: {}", quoted(&set.name));
        if let Some(instances) = instances_yaml(set) {
            let _ = writeln!(perfcounters, "        instances: {instances}");
        }
        let _ = writeln!(perfcounters, "        counters:");
        for (c, cname) in counters {
            let metric = otel_metric(&set.name, cname);
            let unit = otel_unit(c.counter_type);
            let help = c.description.as_deref().unwrap_or("");
            // Two counters whose names mangle alike (`pcw lint` warns) share one declaration: a
            // mapping cannot hold a key twice.
            if declared.insert(metric.clone()) {
                let _ = writeln!(metrics, "      {}:", quoted(&metric));
                let _ = writeln!(metrics, "        description: {}", quoted(help));
                let _ = writeln!(metrics, "        unit: {}", quoted(unit));
                let _ = writeln!(metrics, "        gauge:");
            }
            let _ = writeln!(perfcounters, "          - name: {}", quoted(cname));
            let _ = writeln!(perfcounters, "            metric: {}", quoted(&metric));
            let _ = writeln!(
                doc,
                "  {metric} gauge {unit} {attrs}\n    {} ({})",
                doc_path(set, cname),
                c.counter_type.name()
            );
            scale_note(&mut doc, c);
            if !help.is_empty() {
                let _ = writeln!(doc, "    {help}");
            }
        }
    }
    comment_lines(&mut out, &doc);
    out.push_str("#\n# Add the receiver to a metrics pipeline under `service.pipelines`.\n");
    out.push_str("receivers:\n");
    let receiver = match otel_part(&manifest.provider.name) {
        name if name.is_empty() => "windowsperfcounters".to_owned(),
        name => format!("windowsperfcounters/{name}"),
    };
    let _ = writeln!(out, "  {}:", quoted(&receiver));
    let _ = writeln!(out, "    collection_interval: {interval}");
    out.push_str("    metrics:\n");
    out.push_str(&metrics);
    out.push_str("    perfcounters:\n");
    out.push_str(&perfcounters);
    out
}

/// A Go duration the collector accepts: digits (a fraction allowed) and a unit, repeated.
/// The nanoseconds a Go duration string (`1m30s`, `500ms`, `1.5h`) stands for, if it is one and
/// more than zero.
fn duration_nanos(text: &str) -> Option<f64> {
    let mut rest = text;
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits);
        let value = number.parse::<f64>().ok()?;
        let (unit, scale) = [
            ("ns", 1.0),
            ("us", 1e3),
            ("µs", 1e3),
            ("ms", 1e6),
            ("s", 1e9),
            ("m", 60e9),
            ("h", 3600e9),
        ]
        .into_iter()
        .filter(|(u, _)| tail.starts_with(u))
        .max_by_key(|(u, _)| u.len())?;
        total += value * scale;
        rest = tail.get(unit.len()..)?;
    }
    (total > 0.0).then_some(total)
}

/// `pcw export`.
///
/// # Errors
/// [`ExportError`].
pub(crate) fn run(args: &Args) -> Result<(), ExportError> {
    match duration_nanos(&args.interval) {
        None => return Err(ExportError::Interval(args.interval.clone())),
        // Go's `time.Duration` is an `int64` of nanoseconds: the collector refuses more.
        Some(ns) if ns > 9.2e18 => {
            return Err(ExportError::IntervalTooLarge(args.interval.clone()));
        }
        Some(_) => {}
    }
    let input =
        pcw_gen::Input::read(&args.file).map_err(|e| ExportError::Manifest(e.to_string()))?;
    let (exporter, tool) = match args.target {
        Target::WindowsExporter => (Exporter::WindowsExporter, "windows_exporter"),
        Target::Otel => (Exporter::OpenTelemetry, "the OpenTelemetry receiver"),
    };
    let (analysis, names) = pcw_gen::metric_name_warnings(&input, exporter);
    let Some(manifest) = analysis.manifest else {
        pcw_io::console::err(&pcw_gen::Diagnostic::render_all(&analysis.diagnostics))?;
        let errors = analysis.diagnostics.iter().filter(|d| d.is_error()).count();
        return Err(ExportError::Manifest(format!(
            "{errors} error(s) in the manifest; nothing was written"
        )));
    };
    if !names.is_empty() {
        pcw_io::console::err(&pcw_gen::Diagnostic::render_all(&names))?;
        if !args.allow_bad_names {
            return Err(ExportError::BadNames(names.len(), tool));
        }
    }
    let file = args.file.display().to_string();
    let text = match args.target {
        Target::WindowsExporter => windows_exporter(&manifest, &file),
        Target::Otel => otel(&manifest, &file, &args.interval),
    };
    if let Some(path) = &args.out {
        let mut outputs = pcw_io::Outputs::new();
        outputs.input(&args.file).add(path, text)?;
        outputs.commit()?;
        return Ok(());
    }
    Ok(pcw_io::console::out(&text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        for ok in ["30s", "1m", "1m30s", "500ms", "1.5h"] {
            assert!(duration_nanos(ok).is_some(), "{ok}");
        }
        for bad in ["", "30", "s", "0s", "-1s", "1x", "1 s"] {
            assert!(duration_nanos(bad).is_none(), "{bad}");
        }
        assert_eq!(duration_nanos("1m30s"), Some(90e9));
        assert_eq!(duration_nanos("2562048h").map(|ns| ns > 9.2e18), Some(true));
    }

    #[test]
    fn yaml_quoting() {
        assert_eq!(quoted(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(
            quoted("a\rb\u{85}\u{2028}\u{feff}\u{1fffe}: #é"),
            r#""a\u000Db\u0085\u2028\uFEFF\U0001FFFE: #é""#
        );
    }
}
