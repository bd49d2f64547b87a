// SPDX-License-Identifier: MIT OR Apache-2.0
//! `<counter>` on its own: id, type (and its size), detail level, scale, aggregation,
//! attributes, strings, and the struct and field that hold its value. References to other
//! counters are checked once every counter of the set has been read (`references`).

use std::collections::HashMap;

use pcw_core::counter_type::{CounterType, MANIFEST_SCHEMA_TYPE_NAMES, MANIFEST_TYPE_NAMES};

use crate::model::{Aggregate, CounterAttribute, DetailLevel, Pos, SchemaVersion, Struct};
use crate::parse::{Attr, RawCounter, backticked};

use super::context::Cx;
use super::strings::strings;

/// One counter checked on its own (cross-references come later).
pub(super) struct Parsed {
    pub(super) id: u32,
    pub(super) pos: Pos,
    pub(super) symbol: Option<String>,
    pub(super) uri: String,
    pub(super) name: Option<String>,
    pub(super) name_id: Option<u32>,
    pub(super) description: Option<String>,
    pub(super) description_id: Option<u32>,
    pub(super) counter_type: CounterType,
    pub(super) type_name: &'static str,
    pub(super) size: Option<u32>,
    pub(super) detail_level: DetailLevel,
    pub(super) default_scale: i32,
    pub(super) aggregate: Option<Aggregate>,
    pub(super) base_id: Option<u32>,
    pub(super) perf_time_id: Option<u32>,
    pub(super) perf_freq_id: Option<u32>,
    pub(super) multi_counter_id: Option<u32>,
    pub(super) attributes: Vec<CounterAttribute>,
    pub(super) struct_index: u16,
    pub(super) field: Option<String>,
}

#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
pub(super) fn counter(
    cx: &mut Cx<'_>,
    c: &RawCounter,
    next_rid: &mut u32,
    structs: &[Struct],
    struct_names: &HashMap<String, u16>,
    implicit: bool,
    struct_ok: bool,
) -> Option<Parsed> {
    let a = &c.attrs;
    let id = cx
        .required(a, "counter", "id")
        .and_then(|i| cx.uint(i, "id"));
    if let (Some(id), Some(ia)) = (id, a.get("id")) {
        if id > u32::from(u16::MAX) {
            cx.sink.error_hint(
                ia.pos,
                format!(
                    "counter id `{id}` does not fit `PCW_COUNTER_DESCRIPTOR.Id`, which is 16 bits"
                ),
                "use ids below 65536 (ids below 64 can also be selected through `CounterMask`)",
            );
        } else if id >= 64 {
            cx.sink.warning_hint(
                ia.pos,
                format!("counter id `{id}` can never be selected through `CounterMask`, which has bits 0 to 63"),
                "with ids of 64 and above the callback cannot skip unrequested counters; use ids below 64",
            );
        }
    }
    let uri = cx.required(a, "counter", "uri").map(|u| u.value.clone());
    let symbol = a
        .get("symbol")
        .filter(|s| cx.symbol(s, "symbol"))
        .map(|s| s.value.clone());
    let type_attr = cx.required(a, "counter", "type");
    let counter_type = type_attr.and_then(|t| counter_type(cx, t));
    let type_name = counter_type
        .and_then(CounterType::manifest_name)
        .unwrap_or("");
    let size = match (counter_type, type_attr) {
        (Some(ty), Some(t)) => {
            if let Some(n @ (4 | 8)) = ty.size() {
                Some(n)
            } else {
                cx.sink.error_hint(
                    t.pos,
                    format!("counter type `{type_name}` has no fixed 4- or 8-byte value"),
                    "pcw publishes counters as 4- or 8-byte values; text counters are not supported",
                );
                None
            }
        }
        _ => None,
    };
    let detail_level = cx
        .required(a, "counter", "detailLevel")
        .and_then(|d| cx.value::<DetailLevel>(d));
    let default_scale = match a.get("defaultScale") {
        Some(d) => match d.value.trim().parse::<i32>() {
            Ok(v) if (-10..=10).contains(&v) => Some(v),
            _ => {
                cx.sink.error_hint(
                    d.pos,
                    format!(
                        "`defaultScale` must be an integer from -10 to 10, not `{}`",
                        d.value
                    ),
                    "the displayed value is multiplied by 10 to the power of `defaultScale`",
                );
                None
            }
        },
        None => Some(0),
    };
    let (aggregate, aggregate_ok) = match a.get("aggregate") {
        Some(g) => {
            let v = cx.value::<Aggregate>(g);
            (v, v.is_some())
        }
        None => (None, true),
    };

    let is_base = counter_type.is_some_and(CounterType::is_base);
    let mut attributes = Vec::new();
    for at in &c.attributes {
        if let Some(v) = cx.value::<CounterAttribute>(at) {
            if attributes.contains(&v) {
                cx.sink.error(
                    at.pos,
                    format!("counter attribute `{}` is given twice", at.value),
                );
            } else {
                attributes.push(v);
            }
        }
    }
    let no_display = attributes.contains(&CounterAttribute::NoDisplay);
    let st = strings(cx, a, "counter", next_rid, true);
    if st.name.is_none() && a.get("name").is_none() && !is_base && !no_display {
        if cx.version == Some(SchemaVersion::V2_0) {
            cx.sink.error_hint(
                a.pos,
                "`<counter>` has no `name`",
                "schema 2.0 requires a name on every displayed counter (base and `noDisplay` counters may omit it)",
            );
        } else {
            cx.sink.warning(
                a.pos,
                "`<counter>` has no `name`; consumers will show it without one",
            );
        }
    }

    if cx.version == Some(SchemaVersion::V2_0)
        && a.get("name").is_some()
        && a.get("description").is_none()
    {
        cx.sink.warning_hint(
            a.pos,
            "`<counter>` has a `name` but no `description`",
            "schema 2.0 expects a description (with `descriptionID`) for every named counter; consumers show it as the counter's explanation",
        );
    }

    let ids: Vec<Option<u32>> = ["baseID", "perfTimeID", "perfFreqID", "multiCounterID"]
        .iter()
        .map(|n| a.get(n).and_then(|v| cx.uint(v, n)))
        .collect();

    // Struct and field.
    let mut struct_index = 0u16;
    if let Some(sa) = a.get("struct") {
        if implicit {
            cx.sink.error_hint(
                sa.pos,
                format!("counter names struct `{}` but its counterset has no `<structs>`", sa.value),
                "declare it in `<structs><struct name=\"…\" type=\"…\"/></structs>` or remove `struct`",
            );
        } else if let Some(&index) = struct_names.get(&sa.value) {
            struct_index = index;
        } else if struct_ok {
            let known: Vec<&str> = structs.iter().map(|s| s.name.as_str()).collect();
            cx.sink.error_hint(
                sa.pos,
                format!("unknown struct `{}`", sa.value),
                format!("the counterset declares {}", backticked(&known)),
            );
        }
    } else if structs.len() > 1 && cx.kernel {
        cx.sink.error_hint(
            a.pos,
            "`<counter>` does not say which `struct` holds it",
            format!(
                "the counterset has {} structs; add `struct=\"…\"`",
                structs.len()
            ),
        );
    }
    let field = match a.get("field") {
        Some(f) => cx.symbol(f, "field").then(|| f.value.clone()),
        None if cx.kernel => {
            cx.sink.error_hint(
                a.pos,
                "`<counter>` has no `field`",
                "kernel-mode counters live in a struct field: add `field=\"…\"`",
            );
            None
        }
        // User-mode counters need no storage; name one for the IR.
        None => Some(
            symbol
                .clone()
                .unwrap_or_else(|| format!("Counter{}", id.unwrap_or(0))),
        ),
    };

    if !aggregate_ok {
        return None;
    }
    Some(Parsed {
        id: id.filter(|i| u16::try_from(*i).is_ok())?,
        pos: a.pos,
        symbol,
        uri: uri?,
        name: st.name,
        name_id: st.name_id,
        description: st.description,
        description_id: st.description_id,
        counter_type: counter_type?,
        type_name,
        size,
        detail_level: detail_level?,
        default_scale: default_scale?,
        aggregate,
        base_id: ids.first().copied().flatten(),
        perf_time_id: ids.get(1).copied().flatten(),
        perf_freq_id: ids.get(2).copied().flatten(),
        multi_counter_id: ids.get(3).copied().flatten(),
        attributes,
        struct_index,
        field,
    })
}

fn counter_type(cx: &mut Cx<'_>, t: &Attr) -> Option<CounterType> {
    if let Some(ty) = CounterType::from_manifest_name(&t.value) {
        return Some(ty);
    }
    if MANIFEST_SCHEMA_TYPE_NAMES.contains(&t.value.as_str()) {
        cx.sink.error_hint(
            t.pos,
            format!("counter type `{}` has no `winperf.h` value", t.value),
            "pcw-gen cannot publish it; pick a concrete counter type",
        );
        return None;
    }
    let lower = t.value.to_lowercase();
    let hint = if CounterType::from_manifest_name(&lower).is_some() {
        format!("type names are lowercase: `{lower}`")
    } else {
        let best = MANIFEST_TYPE_NAMES
            .iter()
            .map(|(n, _)| (levenshtein(&lower, n), *n))
            .min();
        match best {
            Some((d, n)) if d <= 4 => format!("did you mean `{n}`?"),
            _ => "see the `type` list of the performance counters schema".to_owned(),
        }
    };
    cx.sink
        .error_hint(t.pos, format!("unknown counter type `{}`", t.value), hint);
    None
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}
