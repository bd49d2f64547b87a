// SPDX-License-Identifier: MIT OR Apache-2.0
//! `<counterSet>`: its attributes, its counters (each checked on its own, then their
//! references), what must be unique among them (ids, names, symbols), and the resolved
//! counterset, its value blocks laid out and its counters in V1 order.

use std::collections::{HashMap, HashSet};

use crate::model::{Counter, Counterset, Instances};
use crate::parse::RawSet;

use super::context::{Cx, parse_uint, resolved};
use super::counter::{Parsed, counter};
use super::layout;
use super::order::v1_order;
use super::references::references;
use super::strings::strings;

#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
pub(super) fn counterset(cx: &mut Cx<'_>, s: &RawSet, next_rid: &mut u32) -> Option<Counterset> {
    let a = &s.attrs;
    let guid = cx
        .required(a, "counterSet", "guid")
        .and_then(|g| cx.guid(g, "guid"));
    let uri = cx.required(a, "counterSet", "uri").map(|u| u.value.clone());
    let symbol = cx
        .required(a, "counterSet", "symbol")
        .filter(|sym| cx.symbol(sym, "symbol"))
        .map(|sym| sym.value.clone());
    cx.required(a, "counterSet", "name");
    cx.required(a, "counterSet", "description");
    let st = strings(cx, a, "counterSet", next_rid, false);
    let instances = match a.get("instances") {
        Some(i) => cx.value(i),
        None => Some(Instances::Single),
    };
    if s.counters.is_empty() {
        cx.sink.error(
            a.pos,
            "`<counterSet>` has no `<counter>`; the schema requires at least one",
        );
    }

    let mut blocks = layout::declared(cx, s, symbol.as_deref());

    // Counters, first on their own.
    let mut parsed: Vec<Option<Parsed>> = Vec::new();
    for c in &s.counters {
        parsed.push(counter(
            cx,
            c,
            next_rid,
            &blocks.structs,
            &blocks.names,
            blocks.implicit,
            blocks.ok,
        ));
    }

    // Uniqueness within the set, from the raw attributes (a counter with another error still
    // takes part).
    let mut ids: HashSet<u32> = HashSet::new();
    let mut names_seen: HashMap<String, String> = HashMap::new();
    let mut symbols: HashMap<String, String> = HashMap::new();
    for raw in &s.counters {
        let ra = &raw.attrs;
        let id = ra.get("id").and_then(|i| parse_uint(&i.value));
        let label = id.map_or_else(|| format!("at line {}", ra.pos.line), |i| i.to_string());
        if let (Some(id), Some(ia)) = (id, ra.get("id"))
            && !ids.insert(id)
        {
            cx.sink.error(
                ia.pos,
                format!(
                    "counter id `{id}` is used twice in counterset `{}`",
                    symbol.as_deref().unwrap_or("?")
                ),
            );
        }
        if let Some(n) = ra.get("name")
            && let Some(name) = resolved(cx.strings, &n.value)
            && let Some(prev) = names_seen.insert(name.to_lowercase(), label.clone())
        {
            cx.sink.error(
                n.pos,
                format!("counter name `{name}` is already used by counter `{prev}`"),
            );
        }
        if let Some(sym) = ra.get("symbol")
            && let Some(prev) = symbols.insert(sym.value.clone(), label.clone())
        {
            cx.sink.error(
                sym.pos,
                format!(
                    "counter symbol `{}` is already used by counter `{prev}`",
                    sym.value
                ),
            );
        }
    }

    references(cx, &s.counters, &parsed);
    if let Some(inst) = instances.filter(|i| !i.is_aggregate()) {
        for raw in &s.counters {
            if let Some(g) = raw.attrs.get("aggregate") {
                cx.sink.warning_hint(
                    g.pos,
                    format!("`aggregate` has no effect in a `{}` counterset", inst.as_str()),
                    "aggregation applies to `globalAggregate`, `multipleAggregate` and `globalAggregateHistory` countersets",
                );
            }
        }
    }

    let layout_ok = blocks.lay_out(cx, s, &parsed);

    let parsed: Vec<Parsed> = parsed.into_iter().collect::<Option<Vec<_>>>()?;
    if !layout_ok || !blocks.ok {
        return None;
    }
    let mut counters = Vec::new();
    for p in parsed {
        let field = p.field.clone().unwrap_or_default();
        let offset = blocks.offset(p.struct_index, &field);
        counters.push(Counter {
            id: u16::try_from(p.id).ok()?,
            symbol: p.symbol,
            uri: p.uri,
            name: p.name,
            name_id: p.name_id,
            description: p.description,
            description_id: p.description_id,
            counter_type: p.counter_type,
            type_name: p.type_name,
            size: p.size?,
            detail_level: p.detail_level,
            default_scale: p.default_scale,
            aggregate: p.aggregate,
            base_id: p.base_id.and_then(|v| u16::try_from(v).ok()),
            perf_time_id: p.perf_time_id.and_then(|v| u16::try_from(v).ok()),
            perf_freq_id: p.perf_freq_id.and_then(|v| u16::try_from(v).ok()),
            multi_counter_id: p.multi_counter_id.and_then(|v| u16::try_from(v).ok()),
            attributes: p.attributes,
            struct_index: p.struct_index,
            field,
            offset,
            pos: p.pos,
        });
    }
    Some(Counterset {
        counters: v1_order(&counters),
        guid: guid?,
        symbol: symbol?,
        uri: uri?,
        name: st.name?,
        name_id: st.name_id?,
        description: st.description?,
        description_id: st.description_id?,
        instances: instances?,
        structs: blocks.structs,
        pos: a.pos,
    })
}
