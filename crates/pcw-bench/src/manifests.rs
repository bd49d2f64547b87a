// SPDX-License-Identifier: MIT OR Apache-2.0
//! Large, varied counter manifests for the manifest tools' scaling benchmark
//! (`benches/manifest.rs`, the `pcw-bench-manifest` driver): any number of counters over many
//! countersets, valid (so every tool runs all of its passes) and using what real manifests use.
//!
//! What a generated manifest has:
//!
//! * every counter type a manifest can publish (every manifest `type` with a 4- or 8-byte
//!   value), each with what it needs: fractions, averages, multi-timers and precision timers
//!   their base counter (`baseID`, or `multiCounterID` for every other multi-timer), declared
//!   after the counter or — every other time — before it, so the V1 order moves it; object-time
//!   counters `perfTimeID`/`perfFreqID` naming the set's two time helpers;
//! * countersets of every instance kind, one big set holding a quarter of the counters (in
//!   user mode at most 6 000) and the others of assorted sizes (one set per 500 counters); in
//!   the aggregate kinds the named counters say how they aggregate;
//! * kernel mode: a `<structs>` declaration in every other set (and in any set too big for one
//!   value block), counters spread over the structs with `struct`, each with its own `field`
//!   except a `perf_counter_bulk_count`/`perf_counter_large_rawcount` pair sharing one; user
//!   mode: no structs or fields, some `reference` counters;
//! * names, descriptions and symbols: every fourth displayable counter is named and described
//!   (schema 2.0 `nameID`/`descriptionID`, numbered by `resourceBase` in 1.1; the 16-bit string
//!   ids cap a valid manifest at about 32 000 named counters, so the rest are `noDisplay`
//!   helpers), some through the string table, some over 200 characters long, every third
//!   counter with a `symbol`; counter attributes, detail levels, `defaultScale`;
//! * what the fleet lints warn about, in moderation: twin countersets whose names mangle alike
//!   (so their counters' exporter metric names collide), counter names mangling to the same
//!   `windows_exporter` field, `defaultScale` on raw counts, unaggregated counters of a
//!   `multipleAggregate` set; and ids of 64 and above, which every big set has.
//!
//! The output depends only on the [`Spec`].

use std::fmt::Write as _;

use pcw_core::counter_type::{ALL, CounterType, TimeBase};

/// The `schemaVersion` of a generated manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// `1.1`: strings numbered from `resourceBase`.
    V1_1,
    /// `2.0`: explicit `nameID`/`descriptionID`.
    V2_0,
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Counters in the whole manifest.
    pub counters: usize,
    /// Schema version.
    pub schema: Schema,
    /// `providerType="userMode"` instead of `kernelMode`.
    pub user_mode: bool,
    /// Everything on one line (as a tool that minifies XML writes it) instead of one element
    /// per line.
    pub one_line: bool,
}

impl Spec {
    /// A kernel-mode schema 2.0 manifest of `counters` counters, one element per line.
    pub fn kernel(counters: usize) -> Self {
        Self {
            counters,
            schema: Schema::V2_0,
            user_mode: false,
            one_line: false,
        }
    }

    /// A user-mode schema 1.1 manifest of `counters` counters, one element per line.
    pub fn user(counters: usize) -> Self {
        Self {
            counters,
            schema: Schema::V1_1,
            user_mode: true,
            one_line: false,
        }
    }

    /// How many countersets the manifest has.
    pub fn sets(&self) -> usize {
        (self.counters / 500).max(4)
    }

    /// Counters per set: a quarter in the first (in user mode at most 6 000: a user-mode set
    /// has no `<structs>` to spread its values over, and their layout must fit 64 KiB), the
    /// rest by weights 1 to 4 (at least 4 each).
    fn set_sizes(&self) -> Vec<usize> {
        let sets = self.sets();
        let big = if self.user_mode {
            (self.counters / 4).min(6000)
        } else {
            self.counters / 4
        };
        let rest = self.counters - big;
        let weights: Vec<usize> = (1..sets).map(|j| 1 + j % 4).collect();
        let total: usize = weights.iter().sum();
        let mut sizes = vec![big];
        let mut given = 0;
        for (k, w) in weights.iter().enumerate() {
            let size = if k + 1 == weights.len() {
                rest - given
            } else {
                rest * w / total
            };
            given += size;
            sizes.push(size);
        }
        sizes.iter().map(|s| (*s).max(4)).collect()
    }
}

const INSTANCES: [&str; 5] = [
    "multiple",
    "single",
    "multipleAggregate",
    "globalAggregate",
    "globalAggregateHistory",
];
const AGGREGATES: [&str; 5] = ["sum", "avg", "max", "min", "undefined"];

/// One counter as written.
#[derive(Default)]
struct Counter {
    id: usize,
    ty: &'static str,
    name: Option<String>,
    symbol: bool,
    base_attr: Option<(&'static str, usize)>,
    time: bool,
    scale: Option<i32>,
    attributes: Vec<&'static str>,
    /// Shares the field of the counter with this id.
    field_of: Option<usize>,
}

/// The writer's state across the manifest.
struct Writer {
    spec: Spec,
    out: String,
    strings: String,
    /// Next resource id (schema 2.0).
    next_rid: u32,
    /// Displayable counters so far (every fourth is named).
    displayable: usize,
    /// Named counters so far (for long names and string-table names).
    named: usize,
    /// The name of the current set's last named counter.
    last_name: Option<String>,
}

impl Writer {
    fn nl(&mut self) {
        if !self.spec.one_line {
            self.out.push('\n');
        }
    }

    fn indent(&mut self, depth: usize) {
        if !self.spec.one_line {
            for _ in 0..depth {
                self.out.push_str("  ");
            }
        }
    }

    fn rid(&mut self) -> u32 {
        let r = self.next_rid;
        self.next_rid += 1;
        r
    }

    /// `name="…" nameID="…"` (the id in 2.0 only), through the string table every eighth time.
    fn text_attr(&mut self, attr: &str, value: &str, string_id: Option<String>) {
        let written = match string_id {
            Some(id) => {
                let _ = write!(
                    self.strings,
                    "<string id=\"{id}\" value=\"{}\"/>",
                    escape(value)
                );
                if !self.spec.one_line {
                    self.strings.push_str("\n        ");
                }
                format!("$(string.{id})")
            }
            None => escape(value),
        };
        let _ = write!(self.out, " {attr}=\"{written}\"");
        if self.spec.schema == Schema::V2_0 {
            let r = self.rid();
            let _ = write!(self.out, " {attr}ID=\"{r}\"");
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

/// Generates the manifest `spec` describes.
pub fn manifest(spec: &Spec) -> String {
    let mut w = Writer {
        spec: *spec,
        out: String::with_capacity(spec.counters * 300),
        strings: String::new(),
        next_rid: 1,
        displayable: 0,
        named: 0,
        last_name: None,
    };
    w.out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    w.nl();
    w.out.push_str(
        "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\" \
         xmlns:win=\"http://manifests.microsoft.com/win/2004/08/windows/events\">",
    );
    w.nl();
    w.indent(1);
    w.out.push_str("<instrumentation>");
    w.nl();
    w.indent(2);
    let version = match spec.schema {
        Schema::V1_1 => "1.1",
        Schema::V2_0 => "2.0",
    };
    let _ = write!(
        w.out,
        "<counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" schemaVersion=\"{version}\">"
    );
    w.nl();
    w.indent(3);
    let (kind, app) = if spec.user_mode {
        ("userMode", "bench.exe")
    } else {
        ("kernelMode", "bench.sys")
    };
    let _ = write!(
        w.out,
        "<provider providerType=\"{kind}\" applicationIdentity=\"{app}\" providerName=\"Bench Provider\" \
         providerGuid=\"{{6d0b1c2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d}}\" callback=\"custom\""
    );
    if spec.user_mode {
        w.out.push_str(" symbol=\"BenchProvider\"");
    }
    if spec.schema == Schema::V1_1 {
        w.out.push_str(" resourceBase=\"1\"");
    }
    w.out.push('>');
    w.nl();
    for (set, size) in spec.set_sizes().into_iter().enumerate() {
        counter_set(&mut w, set, size);
    }
    w.indent(3);
    w.out.push_str("</provider>");
    w.nl();
    w.indent(2);
    w.out.push_str("</counters>");
    w.nl();
    w.indent(1);
    w.out.push_str("</instrumentation>");
    w.nl();
    w.indent(1);
    w.out.push_str("<localization>");
    // A culture that is not chosen, then the one that is.
    w.out.push_str(
        "<resources culture=\"de-DE\"><stringTable><string id=\"unused\" value=\"Nicht benutzt\"/></stringTable></resources>",
    );
    w.out.push_str("<resources culture=\"en-US\"><stringTable>");
    let strings = std::mem::take(&mut w.strings);
    w.out.push_str(&strings);
    w.out.push_str("</stringTable></resources></localization>");
    w.nl();
    w.out.push_str("</instrumentationManifest>");
    w.nl();
    w.out
}

/// The manifest types a counter can be declared with (4- or 8-byte values), bases excluded:
/// they come with the counters naming them.
fn primary_types() -> Vec<CounterType> {
    ALL.iter()
        .copied()
        .filter(|t| t.manifest_name().is_some() && matches!(t.size(), Some(4 | 8)) && !t.is_base())
        .collect()
}

fn needs_time(t: CounterType) -> bool {
    t.time_base() == TimeBase::ObjectTime || t == CounterType::PrecisionObjectTimer
}

/// A display name for a counter of type `t` with id `id`.
fn counter_name(t: CounterType, id: usize) -> String {
    use pcw_core::counter_type::DisplaySuffix;
    match t.display_suffix() {
        DisplaySuffix::PerSec => format!("Requests {id}/sec"),
        DisplaySuffix::Percent => format!("% Busy Time {id}"),
        DisplaySuffix::Seconds => format!("Avg. Wait sec/Request {id}"),
        DisplaySuffix::None | DisplaySuffix::NoShow => format!("Queue Depth {id}"),
    }
}

/// The counters of set `set` (`size` of them), before they are written: the two time helpers
/// (ids 0 and 1), then one group per type in turn — a counter, with its base when it needs one
/// — and once per cycle of the types a pair sharing a field.
fn plan_counters(writer: &mut Writer, set: usize, size: usize) -> Vec<Counter> {
    let types = primary_types();
    let mut counters: Vec<Counter> = Vec::with_capacity(size);
    for id in [0, 1] {
        counters.push(Counter {
            id,
            ty: "perf_counter_large_rawcount",
            attributes: vec!["noDisplay"],
            ..Counter::default()
        });
    }
    let mut group = 0usize;
    while counters.len() < size {
        let id = counters.len();
        let room_for_two = size - counters.len() >= 2;
        let ty = types[(group + set) % types.len()];
        group += 1;
        if group.is_multiple_of(types.len() + 1) && room_for_two {
            let bulk = primary(writer, CounterType::BulkCount, id);
            let mut total = primary(writer, CounterType::LargeRawcount, id + 1);
            total.field_of = Some(id);
            counters.push(bulk);
            counters.push(total);
            continue;
        }
        match ty.required_follower() {
            Some(base_type) if room_for_two => {
                // Every other base is declared before the counter naming it.
                let base_first = group.is_multiple_of(2);
                let (counter_id, base_id) = if base_first {
                    (id + 1, id)
                } else {
                    (id, id + 1)
                };
                let mut counter = primary(writer, ty, counter_id);
                let multi = ty.required_base() == Some(CounterType::MultiBase);
                let attr = if multi && group % 4 < 2 {
                    "multiCounterID"
                } else {
                    "baseID"
                };
                counter.base_attr = Some((attr, base_id));
                let base = Counter {
                    id: base_id,
                    ty: base_type.manifest_name().unwrap_or_default(),
                    attributes: vec!["noDisplay"],
                    ..Counter::default()
                };
                if base_first {
                    counters.extend([base, counter]);
                } else {
                    counters.extend([counter, base]);
                }
            }
            Some(_) => counters.push(primary(writer, CounterType::Rawcount, id)),
            None => counters.push(primary(writer, ty, id)),
        }
    }
    counters
}

fn counter_set(writer: &mut Writer, set: usize, size: usize) {
    let spec = writer.spec;
    let instances = if set == 0 {
        "multiple"
    } else {
        INSTANCES[set % INSTANCES.len()]
    };
    let aggregated = instances.contains("ggregate");
    // Every sixteenth set is the twin of the one before: the names differ, the mangled ones
    // do not.
    let name = if set % 16 == 15 {
        format!("Bench-Set {}", set - 1)
    } else {
        format!("Bench Set {set}")
    };
    writer.indent(4);
    let _ = write!(
        writer.out,
        "<counterSet guid=\"{{{set:08x}-0000-4000-8000-00000000beef}}\" uri=\"Bench.Set{set}\" symbol=\"BenchSet{set}\" instances=\"{instances}\""
    );
    writer.text_attr("name", &name, None);
    writer.text_attr(
        "description",
        &format!("Counters of benchmark set {set}, {size} of them & their helpers."),
        None,
    );
    writer.out.push('>');
    writer.nl();
    writer.last_name = None;
    let counters = plan_counters(writer, set, size);

    // Structs: kernel mode, every other set and every set too big for one value block (each
    // struct holds at most 32 KiB).
    let structs = if spec.user_mode {
        0
    } else if set % 2 == 1 || counters.len() > 4000 {
        (counters.len() * 8).div_ceil(32_768).max(2)
    } else {
        0
    };
    if structs > 0 {
        writer.indent(5);
        writer.out.push_str("<structs>");
        for index in 0..structs {
            let _ = write!(
                writer.out,
                "<struct name=\"Block{index}\" type=\"BENCH_SET{set}_BLOCK{index}\"/>"
            );
        }
        writer.out.push_str("</structs>");
        writer.nl();
    }
    for counter in &counters {
        // A shared field lives in the struct of the counter it is shared with.
        let field = counter.field_of.unwrap_or(counter.id);
        writer.indent(5);
        let _ = write!(
            writer.out,
            "<counter id=\"{0}\" uri=\"Bench.Set{set}.C{0}\" type=\"{1}\" detailLevel=\"{2}\"",
            counter.id,
            counter.ty,
            if counter.id % 3 == 0 {
                "advanced"
            } else {
                "standard"
            }
        );
        if counter.symbol {
            let _ = write!(writer.out, " symbol=\"S{set}_C{}\"", counter.id);
        }
        if !spec.user_mode {
            let _ = write!(writer.out, " field=\"F{field}\"");
            if structs > 0 {
                let _ = write!(writer.out, " struct=\"Block{}\"", field % structs);
            }
        }
        if let Some((attr, id)) = counter.base_attr {
            let _ = write!(writer.out, " {attr}=\"{id}\"");
        }
        if counter.time {
            writer.out.push_str(" perfTimeID=\"0\" perfFreqID=\"1\"");
        }
        if let Some(scale) = counter.scale {
            let _ = write!(writer.out, " defaultScale=\"{scale}\"");
        }
        // In aggregate sets every counter says how it aggregates, but in the
        // `multipleAggregate` ones every eighth (a fleet warning).
        let unaggregated = set % 5 == 2 && counter.id.is_multiple_of(8);
        if aggregated && counter.attributes.is_empty() && !unaggregated {
            let aggregate = AGGREGATES[counter.id % AGGREGATES.len()];
            let _ = write!(writer.out, " aggregate=\"{aggregate}\"");
        }
        if let Some(name) = &counter.name {
            names(writer, set, counter, name);
        }
        if counter.attributes.is_empty() {
            writer.out.push_str("/>");
        } else {
            writer.out.push_str("><counterAttributes>");
            for attribute in &counter.attributes {
                let _ = write!(writer.out, "<counterAttribute name=\"{attribute}\"/>");
            }
            writer.out.push_str("</counterAttributes></counter>");
        }
        writer.nl();
    }
    writer.indent(4);
    writer.out.push_str("</counterSet>");
    writer.nl();
}

/// A named counter's `name` and `description` (every 16th name over 200 characters long,
/// every 8th pair through the string table).
fn names(writer: &mut Writer, set: usize, counter: &Counter, name: &str) {
    writer.named += 1;
    let n = writer.named;
    let name = if n % 16 == 5 {
        format!(
            "{name} counted over every request the benchmark provider has seen since it started, \
             including the ones it refused, retried, cancelled or completed with an error status"
        )
    } else {
        name.to_owned()
    };
    let via_table = n % 8 == 3;
    let id = via_table.then(|| format!("s{set}.c{}.name", counter.id));
    writer.text_attr("name", &name, id);
    let id = via_table.then(|| format!("s{set}.c{}.help", counter.id));
    writer.text_attr(
        "description",
        &format!(
            "The {} counter {} of set {set}: what it counts, in a sentence or two of help text.",
            counter.ty, counter.id
        ),
        id,
    );
}

/// A counter of type `ty` that a consumer may display: named every fourth time (a `noDisplay`
/// helper otherwise), with a symbol every third id.
fn primary(writer: &mut Writer, ty: CounterType, id: usize) -> Counter {
    writer.displayable += 1;
    let named = writer.displayable % 4 == 1;
    let mut attributes = Vec::new();
    let name = if named {
        // Every 64th named counter takes the name of the set's previous one with a `.` after
        // it: a different name, the same `windows_exporter` field.
        let name = match writer.last_name.take() {
            Some(last) if writer.displayable % 256 == 5 => format!("{last}."),
            _ => counter_name(ty, id),
        };
        writer.last_name = Some(name.clone());
        Some(name)
    } else {
        attributes.push("noDisplay");
        None
    };
    if named {
        match ty {
            CounterType::RawcountHex | CounterType::LargeRawcountHex => {
                attributes.push("displayAsHex");
            }
            CounterType::AverageTimer => attributes.push("displayAsReal"),
            CounterType::Rawcount if writer.spec.user_mode && id.is_multiple_of(2) => {
                attributes.push("reference");
            }
            _ if id.is_multiple_of(5) => attributes.push("noDigitGrouping"),
            _ => {}
        }
    }
    let scale = match (id % 7, ty) {
        // On a raw count, a fleet warning; elsewhere a graph hint.
        (0, CounterType::Rawcount) | (3, _) => Some(-1),
        _ => None,
    };
    Counter {
        id,
        ty: ty.manifest_name().unwrap_or_default(),
        name,
        symbol: id.is_multiple_of(3),
        time: needs_time(ty),
        scale,
        attributes,
        ..Counter::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_add_up() {
        for n in [16, 400, 16_000, 128_000] {
            for spec in [Spec::kernel(n), Spec::user(n)] {
                let sizes = spec.set_sizes();
                assert_eq!(sizes.len(), spec.sets());
                assert!(sizes.iter().sum::<usize>() >= n, "{spec:?}");
                assert!(sizes.iter().sum::<usize>() <= n + 16, "{spec:?}");
            }
        }
    }

    #[test]
    fn every_publishable_type_appears() {
        let text = manifest(&Spec::kernel(2000));
        for t in ALL {
            if let (Some(name), Some(4 | 8)) = (t.manifest_name(), t.size()) {
                assert!(text.contains(&format!("type=\"{name}\"")), "{name}");
            }
        }
    }
}
