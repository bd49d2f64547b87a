// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fleet readiness: what PDH paths, the `windows_exporter` `performancecounter` collector and the
//! OpenTelemetry collector's `windowsperfcounters` receiver make of a manifest's names and
//! counters. Its warnings are what [`crate::lint`] adds after the manifest rules (it only
//! runs on a manifest without errors); the name manglers are shared with `pcw export`, so the
//! lint and the generated configuration agree on every metric name.
//!
//! The rules, each a warning with a hint:
//!
//! * **path characters**: a counterset name with `(`, `)`, `\`, `*` or `?`, or a counter name
//!   with `\`, `*` or `?`, cannot be written unambiguously in a counter path
//!   (`\Object(Instance)\Counter`), which is how PDH and both exporters address counters;
//!   leading or trailing blanks do not survive either.
//! * **name collisions**: `windows_exporter` builds a metric name from object and counter
//!   ([`windows_exporter_metric`]) and a record field from each counter name of an object
//!   ([`windows_exporter_field`]); two counters of one set with the same field make the object
//!   fail, and two counters (of any sets) with the same metric name clash in the registry. The
//!   same is checked for the OpenTelemetry metric names `pcw export` writes ([`otel_metric`]),
//!   and for counterset names that mangle to the same prefix. Metric names are checked for the
//!   counters `pcw export` writes ([`is_exported`]), and [`crate::metric_name_warnings`] gives it
//!   these warnings for the exporter it writes for.
//! * **unusable metric names**: a counterset or counter name with no ASCII letter or digit
//!   (`---`, `é`) leaves nothing of itself in either exporter's metric names (an OpenTelemetry
//!   name then starts with `.` or ends in one); an OpenTelemetry name must start with a letter
//!   (a counterset name starting with a digit breaks it) and have at most 255 characters
//!   ([`otel_name_problem`]), a Prometheus one match `[a-zA-Z_:][a-zA-Z0-9_:]*`
//!   ([`prometheus_name_problem`]). Each warning shows the name the exporter would get.
//! * **non-ASCII names**: both exporters look counters up by their English name; a name that
//!   is not ASCII is found only on systems whose English counter table has it verbatim.
//! * **base counters without `noDisplay`**: a displayed base is listed by `typeperf -q` and
//!   scraped as a meaningless series of its own.
//! * **`defaultScale` on raw counts**: PDH multiplies formatted values by 10^scale, so
//!   typeperf, `Get-Counter`, the OpenTelemetry receiver and `windows_exporter`'s `formatted`
//!   mode show the count scaled while `windows_exporter`'s `raw` mode does not.
//! * **aggregation**: in a `multipleAggregate` set the `_Total` instance exists, but
//!   `windows_exporter` drops every instance whose name ends in `_Total` unless the
//!   configuration lists `_Total` itself; a counter without `aggregate` is summed into it, which
//!   is wrong for a level such as a depth or a percentage. A `globalAggregate` set shows one
//!   instance only: the provider's instance names never reach a consumer.
//!
//! Instance names are chosen at run time, so they are not in a manifest; [`instance_name_issues`]
//! states the rules for them and `pcw list` applies it to the instances a provider reports.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pcw_core::counter_type::CounterType;

use crate::diag::{Diagnostic, Sink};
use crate::model::{Counter, CounterAttribute, Instances, Manifest, Pos};
use crate::parse::{Attrs, RawManifest, RawSet};

/// The instance name PDH and the exporters treat as the aggregate of a multi-instance set.
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::fleet::TOTAL_INSTANCE, "_Total");
/// ```
pub const TOTAL_INSTANCE: &str = "_Total";

/// Lowercases, spells `%` as `percent`, drops parentheses, turns every other character that is
/// not an ASCII letter or digit into `_` and trims `_` from both ends (consecutive `_` are
/// kept): how `pcw export` makes the names it writes into `windows_exporter`'s configuration.
/// The collector's own derivation, used only for a counter without a `metric`, differs (it
/// deletes `%` and keeps parentheses and non-ASCII letters); the exported configuration names
/// every metric, so these names are the ones scraped.
///
/// # Examples
///
/// ```
/// use pcw_gen::fleet::windows_exporter_sanitize;
///
/// assert_eq!(windows_exporter_sanitize("% Time (Busy)"), "percent_time_busy");
/// assert_eq!(windows_exporter_sanitize("Queue - Depth"), "queue___depth");
/// ```
pub fn windows_exporter_sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("percent"),
            '(' | ')' => {}
            c if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
            _ => out.push('_'),
        }
    }
    out.trim_matches('_').to_owned()
}

/// The metric name `pcw export` gives a counter in `windows_exporter`'s configuration (its
/// `metric`): `windows_performancecounter_<object>_<counter>`, sanitised as
/// [`windows_exporter_sanitize`] says.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     pcw_gen::fleet::windows_exporter_metric("Fabrikam Queue", "Bytes/sec"),
///     "windows_performancecounter_fabrikam_queue_bytes_sec"
/// );
/// ```
pub fn windows_exporter_metric(object: &str, counter: &str) -> String {
    windows_exporter_sanitize(&format!("windows_performancecounter_{object}_{counter}"))
}

/// The record field `windows_exporter` derives from a counter name within one object (two
/// counters with the same field cannot be collected together).
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::fleet::windows_exporter_field("Bytes/sec"), "BYTES_SEC");
/// ```
pub fn windows_exporter_field(counter: &str) -> String {
    windows_exporter_sanitize(counter).to_ascii_uppercase()
}

/// One part of an OpenTelemetry metric name as `pcw export` writes it: lowercase, `%` as
/// `percent`, `/` as `per`, every run of other non-alphanumeric characters one `_`, trimmed.
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::fleet::otel_part("% Time Full"), "percent_time_full");
/// assert_eq!(pcw_gen::fleet::otel_part("Bytes/sec"), "bytes_per_sec");
/// ```
pub fn otel_part(text: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        let spelled = match c {
            '%' => Some("percent"),
            '/' => Some("per"),
            c if c.is_ascii_alphanumeric() => {
                word.push(c.to_ascii_lowercase());
                continue;
            }
            _ => None,
        };
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if let Some(s) = spelled {
            words.push(s.to_owned());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words.join("_")
}

/// The OpenTelemetry metric name `pcw export` gives a counter: `<object>.<counter>`, each part
/// as [`otel_part`] makes it.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     pcw_gen::fleet::otel_metric("Fabrikam Queue", "Bytes/sec"),
///     "fabrikam_queue.bytes_per_sec"
/// );
/// ```
pub fn otel_metric(object: &str, counter: &str) -> String {
    format!("{}.{}", otel_part(object), otel_part(counter))
}

/// The exporters whose metric names `pcw lint` checks and `pcw export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Exporter {
    /// `windows_exporter`'s `performancecounter` collector (Prometheus metric names).
    WindowsExporter,
    /// The OpenTelemetry collector's `windowsperfcounters` receiver (instrument names).
    OpenTelemetry,
}

impl Exporter {
    /// The exporter's name in messages.
    fn label(self) -> &'static str {
        match self {
            Self::WindowsExporter => "windows_exporter",
            Self::OpenTelemetry => "OpenTelemetry",
        }
    }

    /// What the exporter's metric names keep of one counterset or counter name.
    fn part(self, name: &str) -> String {
        match self {
            Self::WindowsExporter => windows_exporter_sanitize(name),
            Self::OpenTelemetry => otel_part(name),
        }
    }

    /// The metric name `pcw export` gives a counter for this exporter.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::fleet::Exporter;
    ///
    /// assert_eq!(Exporter::OpenTelemetry.metric("S", "Bytes/sec"), "s.bytes_per_sec");
    /// assert_eq!(
    ///     Exporter::WindowsExporter.metric("S", "Bytes/sec"),
    ///     "windows_performancecounter_s_bytes_sec"
    /// );
    /// ```
    pub fn metric(self, object: &str, counter: &str) -> String {
        match self {
            Self::WindowsExporter => windows_exporter_metric(object, counter),
            Self::OpenTelemetry => otel_metric(object, counter),
        }
    }

    /// Why the exporter refuses `metric` as a metric name, if it does: a lowercase clause
    /// after "which" ([`prometheus_name_problem`], [`otel_name_problem`]).
    pub fn name_problem(self, metric: &str) -> Option<String> {
        match self {
            Self::WindowsExporter => prometheus_name_problem(metric),
            Self::OpenTelemetry => otel_name_problem(metric),
        }
    }

    /// The naming rule, as a hint.
    fn rule(self) -> &'static str {
        match self {
            Self::WindowsExporter => {
                "Prometheus metric names match `[a-zA-Z_:][a-zA-Z0-9_:]*`; rename the counterset or the counter"
            }
            Self::OpenTelemetry => {
                "OpenTelemetry instrument names are an ASCII letter and at most 254 more letters, digits, `_`, `.`, `-` or `/`; shorten or rename the counterset or the counter"
            }
        }
    }
}

/// The most characters an OpenTelemetry instrument name may have (the metrics API's
/// instrument name syntax).
pub const OTEL_NAME_MAX: usize = 255;

/// Why `name` is no OpenTelemetry instrument name, if it is not one: the metrics API's
/// syntax is an ASCII letter and then at most 254 ASCII letters, digits, `_`, `.`, `-` or `/`.
/// The answer is a lowercase clause after "which".
///
/// # Examples
///
/// ```
/// use pcw_gen::fleet::otel_name_problem;
///
/// assert_eq!(otel_name_problem("s.bytes_per_sec"), None);
/// assert_eq!(otel_name_problem(".x").as_deref(), Some("starts with `.`, not a letter"));
/// assert!(otel_name_problem(&"a".repeat(256)).is_some());
/// ```
pub fn otel_name_problem(name: &str) -> Option<String> {
    let Some(first) = name.chars().next() else {
        return Some("is empty".to_owned());
    };
    if !first.is_ascii_alphabetic() {
        return Some(format!("starts with `{first}`, not a letter"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "_.-/".contains(*c)))
    {
        return Some(format!("has `{c}`, which instrument names cannot hold"));
    }
    let length = name.chars().count();
    (length > OTEL_NAME_MAX).then(|| {
        format!(
            "has {length} characters, more than the {OTEL_NAME_MAX} an instrument name may have"
        )
    })
}

/// Why `name` is no Prometheus metric name, if it is not one: `[a-zA-Z_:][a-zA-Z0-9_:]*`
/// (Prometheus sets no length limit). The answer is a lowercase clause after "which".
///
/// # Examples
///
/// ```
/// use pcw_gen::fleet::prometheus_name_problem;
///
/// assert_eq!(prometheus_name_problem("windows_performancecounter_s_x"), None);
/// assert_eq!(prometheus_name_problem("1x").as_deref(), Some("starts with `1`"));
/// ```
pub fn prometheus_name_problem(name: &str) -> Option<String> {
    let Some(first) = name.chars().next() else {
        return Some("is empty".to_owned());
    };
    if !(first.is_ascii_alphabetic() || first == '_' || first == ':') {
        return Some(format!("starts with `{first}`"));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == ':'))
        .map(|c| format!("has `{c}`, which metric names cannot hold"))
}

/// Whether `pcw export` writes a counter: it has a name and is neither a base nor `noDisplay`
/// (a consumer cannot ask for those by name).
pub fn is_exported(counter: &Counter) -> bool {
    counter.name.is_some()
        && !counter.counter_type.is_base()
        && !counter.attributes.contains(&CounterAttribute::NoDisplay)
}

/// What is wrong with a run-time instance name for PDH paths and the exporters (empty when
/// nothing): each entry is a lowercase sentence with the offending token in backticks.
///
/// # Examples
///
/// ```
/// use pcw_gen::fleet::instance_name_issues;
///
/// assert!(instance_name_issues("queue 1").is_empty());
/// assert_eq!(
///     instance_name_issues("queue#1"),
///     ["`#` in the name: PDH reads `#n` as a duplicate-instance index"]
/// );
/// assert!(instance_name_issues("queue\t1")[0].starts_with("a control character (U+0009)"));
/// ```
pub fn instance_name_issues(name: &str) -> Vec<String> {
    let mut issues = Vec::new();
    if name.is_empty() {
        issues.push("the name is empty: PDH shows it as the set's only instance".to_owned());
    }
    if name.trim() != name {
        issues.push("leading or trailing blanks: paths typed by people will not match".to_owned());
    }
    for (c, why) in [
        ('#', "PDH reads `#n` as a duplicate-instance index"),
        ('/', "PDH reads `parent/instance` as a parent instance"),
        ('\\', "`\\` separates the parts of a counter path"),
        ('(', "parentheses delimit the instance in a counter path"),
        (')', "parentheses delimit the instance in a counter path"),
        ('*', "`*` is a wildcard in counter paths"),
        ('?', "`?` is a wildcard in counter paths"),
    ] {
        if name.contains(c) {
            issues.push(format!("`{c}` in the name: {why}"));
        }
    }
    if name != TOTAL_INSTANCE && name.ends_with(TOTAL_INSTANCE) {
        issues.push(format!(
            "the name ends in `{TOTAL_INSTANCE}`: windows_exporter drops it unless `{TOTAL_INSTANCE}` is configured"
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        issues.push(format!(
            "a control character (U+{:04X}) in the name: typeperf's CSV, PDH's paths and the \
             exporters' labels show or split it",
            u32::from(c)
        ));
    }
    if !name.is_ascii() {
        issues.push("non-ascii characters: exporters' label values may be mangled".to_owned());
    }
    issues
}

/// Duplicate names among run-time instances (compared as PDH does, ignoring ASCII case): PDH
/// numbers them `name#1`, `name#2`, and exporters merge or drop them.
///
/// # Examples
///
/// ```
/// let names = ["Queue", "queue", "other"];
/// assert_eq!(pcw_gen::fleet::duplicate_instances(names), ["queue"]);
/// ```
pub fn duplicate_instances<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for n in names {
        *seen.entry(n.to_ascii_lowercase()).or_default() += 1;
    }
    seen.into_iter()
        .filter(|(_, count)| *count > 1)
        .map(|(name, _)| name)
        .collect()
}

/// The positions of one counterset's and its counters' `name` attributes.
struct Places<'a> {
    set: &'a Attrs,
    counters: Vec<Option<&'a Attrs>>,
}

fn name_pos(attrs: &Attrs) -> Pos {
    attrs.get("name").map_or(attrs.pos, |a| a.pos)
}

fn attr_pos(attrs: Option<&Attrs>, name: &str, fallback: Pos) -> Pos {
    attrs
        .and_then(|a| a.get(name).map(|v| v.pos).or(Some(a.pos)))
        .unwrap_or(fallback)
}

/// The fleet-readiness warnings of a valid manifest (`manifest`, resolved from `raw`; what
/// [`crate::lint`] adds to the analysis). `file` only labels the diagnostics.
pub(crate) fn check(manifest: &Manifest, raw: &RawManifest, file: &Path) -> Vec<Diagnostic> {
    let mut sink = Sink::new(file);
    rules(manifest, raw, &mut sink);
    sink.into_sorted()
}

/// Pairs every counterset and counter of the model with its attributes in the raw tree (by
/// `uri`, which validation keeps unique; were one repeated, the first element with it is
/// taken).
fn places<'a>(manifest: &Manifest, raw: &'a RawManifest) -> Vec<Option<Places<'a>>> {
    let raw_sets: Vec<&RawSet> = raw
        .counters
        .iter()
        .flat_map(|c| &c.providers)
        .flat_map(|p| &p.sets)
        .collect();
    // Trimmed `uri` → the first raw set with it.
    let mut set_by_uri: HashMap<&str, usize> = HashMap::new();
    for (i, rs) in raw_sets.iter().enumerate() {
        if let Some(u) = rs.attrs.get("uri") {
            set_by_uri.entry(u.value.trim()).or_insert(i);
        }
    }
    // Per raw set, trimmed `uri` → the first counter with it; built once, when a set of the
    // model first needs it.
    let mut counter_by_uri: Vec<Option<HashMap<&str, &Attrs>>> = vec![None; raw_sets.len()];
    manifest
        .provider
        .countersets
        .iter()
        .map(|set| {
            let i = *set_by_uri.get(set.uri.as_str())?;
            let rs = *raw_sets.get(i)?;
            let by_uri = counter_by_uri.get_mut(i)?.get_or_insert_with(|| {
                let mut map = HashMap::with_capacity(rs.counters.len());
                for rc in &rs.counters {
                    if let Some(u) = rc.attrs.get("uri") {
                        map.entry(u.value.trim()).or_insert(&rc.attrs);
                    }
                }
                map
            });
            let counters = set
                .counters
                .iter()
                .map(|c| by_uri.get(c.uri.as_str()).copied())
                .collect();
            Some(Places {
                set: &rs.attrs,
                counters,
            })
        })
        .collect()
}

#[expect(
    clippy::too_many_lines,
    reason = "one pass over the countersets applies every rule, in the order the module docs list them"
)]
fn rules(manifest: &Manifest, raw: &RawManifest, sink: &mut Sink) {
    let places = places(manifest, raw);
    let mut set_prefixes: BTreeMap<String, String> = BTreeMap::new();
    for (set, place) in manifest.provider.countersets.iter().zip(&places) {
        let set_attrs = place.as_ref().map(|p| p.set);
        let set_name_pos = set_attrs.map_or(set.pos, name_pos);

        // Path characters and blanks in the counterset name.
        if let Some(c) = set.name.chars().find(|c| "()\\*?".contains(*c)) {
            sink.warning_hint(
                set_name_pos,
                format!(
                    "counterset name `{}` has `{c}`, which counter paths cannot carry in an object name",
                    set.name
                ),
                "PDH, typeperf and both exporters parse `\\Object(Instance)\\Counter`; rename the counterset without `(`, `)`, `\\`, `*` and `?`",
            );
        }
        if set.name.trim() != set.name {
            sink.warning_hint(
                set_name_pos,
                format!("counterset name `{}` starts or ends with a blank", set.name),
                "paths typed in configurations are trimmed and will not match; remove the blanks",
            );
        }
        if !set.name.is_ascii() {
            sink.warning_hint(
                set_name_pos,
                format!("counterset name `{}` is not ascii", set.name),
                "windows_exporter and the OpenTelemetry receiver look objects up by their English name; give the set an ASCII English `name` and put translations in a localized string table",
            );
        }
        let prefix = windows_exporter_sanitize(&set.name);
        if let Some(first) = set_prefixes.get(&prefix) {
            sink.warning_hint(
                set_name_pos,
                format!(
                    "counterset name `{}` mangles to `{prefix}`, as `{first}` does",
                    set.name
                ),
                "exporters' metric names start with the mangled object name, so the two sets' metrics can clash; make the names differ in letters or digits",
            );
        } else {
            set_prefixes.insert(prefix, set.name.clone());
        }

        // Aggregation behaviour of the instance kind.
        match set.instances {
            Instances::GlobalAggregate | Instances::GlobalAggregateHistory => sink.warning_hint(
                attr_pos(set_attrs, "instances", set.pos),
                format!(
                    "`{}` counterset `{}` shows one combined instance: the provider's instance names never reach typeperf or the exporters",
                    set.instances.as_str(),
                    set.name
                ),
                "use `multipleAggregate` to publish the instances and a `_Total`, or `single` when there is only ever one",
            ),
            Instances::MultipleAggregate => sink.warning_hint(
                attr_pos(set_attrs, "instances", set.pos),
                format!(
                    "`multipleAggregate` counterset `{}` has a `{TOTAL_INSTANCE}` instance that windows_exporter drops unless its `instances` list names `{TOTAL_INSTANCE}`",
                    set.name
                ),
                "list `_Total` next to `*` in the exporter's `instances` (`pcw export` does), or sum the instances in queries instead",
            ),
            Instances::Single | Instances::Multiple => {}
        }

        let mut fields: BTreeMap<String, String> = BTreeMap::new();
        for (i, counter) in set.counters.iter().enumerate() {
            let attrs = place
                .as_ref()
                .and_then(|p| p.counters.get(i).copied().flatten());
            let cpos = attrs.map_or(counter.pos, |a| a.pos);
            let no_display = counter.attributes.contains(&CounterAttribute::NoDisplay);

            if counter.counter_type.is_base() && !no_display {
                sink.warning_hint(
                    cpos,
                    format!(
                        "base counter `{}` (`{}`) has no `noDisplay` attribute",
                        counter.uri, counter.type_name
                    ),
                    "add `<counterAttributes><counterAttribute name=\"noDisplay\"/></counterAttributes>` so consumers do not list and scrape the base as a series of its own",
                );
            }
            if counter.default_scale != 0
                && matches!(
                    counter.counter_type,
                    CounterType::Rawcount
                        | CounterType::LargeRawcount
                        | CounterType::RawcountHex
                        | CounterType::LargeRawcountHex
                )
            {
                sink.warning_hint(
                    attr_pos(attrs, "defaultScale", cpos),
                    format!(
                        "`defaultScale` {} on raw count `{}`: formatted readers show the count times 1e{}",
                        counter.default_scale,
                        counter.name.as_deref().unwrap_or(&counter.uri),
                        counter.default_scale
                    ),
                    "typeperf, Get-Counter, the OpenTelemetry receiver and windows_exporter's `formatted` mode apply the scale, its `raw` mode does not; remove `defaultScale` (it is a graph hint, 0 keeps the value)",
                );
            }
            if set.instances == Instances::MultipleAggregate
                && counter.aggregate.is_none()
                && !counter.counter_type.is_base()
                && counter.name.is_some()
                && !no_display
            {
                sink.warning_hint(
                    cpos,
                    format!(
                        "counter `{}` has no `aggregate` attribute: the `{TOTAL_INSTANCE}` instance sums it",
                        counter.name.as_deref().unwrap_or(&counter.uri)
                    ),
                    "say how `_Total` combines it: `aggregate=\"sum\"` for counts and rates, `avg`, `min` or `max` for levels, `undefined` for none",
                );
            }

            let Some(name) = counter.name.as_deref() else {
                continue;
            };
            if no_display {
                continue;
            }
            let npos = attr_pos(attrs, "name", cpos);
            if let Some(c) = name.chars().find(|c| "\\*?".contains(*c)) {
                sink.warning_hint(
                    npos,
                    format!("counter name `{name}` has `{c}`, which counter paths cannot carry"),
                    "`\\` separates path parts and `*`, `?` are wildcards in PDH paths; rename the counter",
                );
            }
            if name.trim() != name {
                sink.warning_hint(
                    npos,
                    format!("counter name `{name}` starts or ends with a blank"),
                    "paths typed in configurations are trimmed and will not match; remove the blanks",
                );
            }
            if !name.is_ascii() {
                sink.warning_hint(
                    npos,
                    format!("counter name `{name}` is not ascii"),
                    "windows_exporter and the OpenTelemetry receiver look counters up by their English name; use an ASCII English `name` and put translations in a localized string table",
                );
            }
            let field = windows_exporter_field(name);
            if let Some(first) = fields.get(&field) {
                sink.warning_hint(
                    npos,
                    format!(
                        "counter name `{name}` mangles to windows_exporter field `{field}`, as `{first}` in the same set does"
                    ),
                    "windows_exporter cannot collect both; make the names differ in letters or digits",
                );
            } else {
                fields.insert(field, name.to_owned());
            }
        }
    }
    for exporter in [Exporter::WindowsExporter, Exporter::OpenTelemetry] {
        metric_names(manifest, &places, exporter, sink);
    }
}

/// The metric-name rules for one exporter, over the counters `pcw export` writes
/// ([`is_exported`]): a counterset or counter name that leaves nothing of itself in the name
/// (no ASCII letter or digit), a metric name the exporter refuses, and two counters getting
/// the same metric name.
fn metric_names(
    manifest: &Manifest,
    places: &[Option<Places<'_>>],
    exporter: Exporter,
    sink: &mut Sink,
) {
    let tool = exporter.label();
    // Metric name -> (object, counter) of the first counter that produced it.
    let mut seen: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (set, place) in manifest.provider.countersets.iter().zip(places) {
        let set_attrs = place.as_ref().map(|p| p.set);
        let set_name_pos = set_attrs.map_or(set.pos, name_pos);
        let exported: Vec<(usize, &str)> = set
            .counters
            .iter()
            .enumerate()
            .filter(|(_, c)| is_exported(c))
            .filter_map(|(i, c)| Some((i, c.name.as_deref()?)))
            .collect();
        if exported.is_empty() {
            continue;
        }
        // What the set's name makes of every metric name, reported once at the set's name.
        let prefix = exporter.part(&set.name);
        let mut prefix_reported = false;
        if prefix.is_empty() {
            prefix_reported = true;
            let (message, hint) = match exporter {
                Exporter::WindowsExporter => (
                    format!(
                        "counterset name `{}` has no ascii letter or digit for windows_exporter: its object gets the `name` `\"\"` and its metrics `windows_performancecounter_<counter>`",
                        set.name
                    ),
                    "windows_exporter's metric names keep only the ASCII letters and digits of the object and counter names, so nothing tells this set's metrics from another's; give the counterset an ASCII English `name`",
                ),
                Exporter::OpenTelemetry => (
                    format!(
                        "counterset name `{}` has no ascii letter or digit for OpenTelemetry: its metrics become `.<counter>`, which is no valid instrument name",
                        set.name
                    ),
                    "OpenTelemetry instrument names start with an ASCII letter and `pcw export` keeps only the ASCII letters and digits of the names; give the counterset an ASCII English `name`",
                ),
            };
            sink.warning_hint(set_name_pos, message, hint);
        } else if exporter == Exporter::OpenTelemetry
            && !prefix.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            prefix_reported = true;
            sink.warning_hint(
                set_name_pos,
                format!(
                    "counterset name `{}` starts its OpenTelemetry metric names with a digit: `{prefix}.<counter>` is no valid instrument name",
                    set.name
                ),
                "OpenTelemetry instrument names start with an ASCII letter; start the counterset's `name` with one",
            );
        }
        for (i, name) in exported {
            let Some(counter) = set.counters.get(i) else {
                continue;
            };
            let attrs = place
                .as_ref()
                .and_then(|p| p.counters.get(i).copied().flatten());
            let npos = attr_pos(attrs, "name", attrs.map_or(counter.pos, |a| a.pos));
            let metric = exporter.metric(&set.name, name);
            if exporter.part(name).is_empty() {
                sink.warning_hint(
                    npos,
                    format!(
                        "counter name `{name}` has no ascii letter or digit for {tool}: `{}\\{name}` becomes metric `{metric}`, which does not name the counter",
                        set.name
                    ),
                    "the exporters' metric names keep only the ASCII letters and digits of the counter name; give the counter an ASCII English `name`",
                );
            }
            // A name the set's name breaks is reported once, at the set.
            if !prefix_reported && let Some(problem) = exporter.name_problem(&metric) {
                sink.warning_hint(
                    npos,
                    format!(
                        "`{}\\{name}` becomes {tool} metric `{metric}`, which {problem}",
                        set.name
                    ),
                    exporter.rule(),
                );
            }
            if let Some((object, other)) = seen.get(&metric) {
                if object != &set.name || other != name {
                    sink.warning_hint(
                        npos,
                        format!(
                            "`{}\\{name}` and `{object}\\{other}` both become {tool} metric `{metric}`",
                            set.name
                        ),
                        "the two series clash when scraped together; make the names differ in letters or digits",
                    );
                }
            } else {
                seen.insert(metric, (set.name.clone(), name.to_owned()));
            }
        }
    }
}

/// The warnings about the metric names `exporter` gets for a valid manifest's counters
/// (`manifest`, resolved from `raw`): those of [`crate::lint`] for that exporter, names that
/// clash, come out empty or are refused. [`crate::metric_name_warnings`] reads a manifest for
/// them.
pub(crate) fn metric_name_check(
    manifest: &Manifest,
    raw: &RawManifest,
    file: &Path,
    exporter: Exporter,
) -> Vec<Diagnostic> {
    let mut sink = Sink::new(file);
    metric_names(manifest, &places(manifest, raw), exporter, &mut sink);
    sink.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_exporter_names() {
        assert_eq!(
            windows_exporter_metric("Memory", "Cache Faults/sec"),
            "windows_performancecounter_memory_cache_faults_sec"
        );
        assert_eq!(
            windows_exporter_metric("Processor Information", "% Processor Time"),
            "windows_performancecounter_processor_information_percent_processor_time"
        );
        assert_eq!(
            windows_exporter_sanitize("Frames Dropped (NDIS Pause)"),
            "frames_dropped_ndis_pause"
        );
        assert_eq!(
            windows_exporter_sanitize("Forwarding Failures: Allocation"),
            "forwarding_failures__allocation"
        );
        assert_eq!(
            windows_exporter_field("Avg. Collect Time"),
            "AVG__COLLECT_TIME"
        );
    }

    #[test]
    fn otel_names() {
        assert_eq!(
            otel_metric("PCW Dynamic Queues", "Packets/sec"),
            "pcw_dynamic_queues.packets_per_sec"
        );
        assert_eq!(
            otel_metric("X", "% Instances Filtered"),
            "x.percent_instances_filtered"
        );
        assert_eq!(
            otel_part("Forwarding Failures: Allocation"),
            "forwarding_failures_allocation"
        );
        assert_eq!(otel_part("Avg. Collect Time"), "avg_collect_time");
    }

    #[test]
    fn instance_rules() {
        assert!(instance_name_issues("queue-1").is_empty());
        assert!(instance_name_issues(TOTAL_INSTANCE).is_empty());
        let issues = instance_name_issues("eth0#2/rx (a)");
        assert_eq!(issues.len(), 4, "{issues:?}");
        assert!(instance_name_issues("Queue_Total")[0].contains("windows_exporter drops"));
        assert_eq!(duplicate_instances(["a", "B", "A", "c"]), ["a"]);
    }
}
