// SPDX-License-Identifier: MIT OR Apache-2.0
//! References between the counters of a set: `baseID`, `multiCounterID`, `perfTimeID` and
//! `perfFreqID` name a counter of the right type, a base is named by one counter only, and
//! every base is used.

use std::collections::HashMap;

use pcw_core::counter_type::{CounterType, TimeBase};

use crate::parse::RawCounter;

use super::context::{Cx, attr_pos, parse_uint};
use super::counter::Parsed;

/// `baseID` / `multiCounterID` / `perfTimeID` / `perfFreqID` and base placement.
#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
pub(super) fn references(cx: &mut Cx<'_>, raws: &[RawCounter], parsed: &[Option<Parsed>]) {
    // Look ids up among all counters: one that failed its own checks still exists (its
    // problems are reported already), so references to it are only checked further when it
    // parsed.
    // Id → index of the first counter with it.
    let mut first_with_id: HashMap<u32, usize> = HashMap::with_capacity(raws.len());
    for (i, r) in raws.iter().enumerate() {
        if let Some(id) = r.attrs.get("id").and_then(|i| parse_uint(&i.value)) {
            first_with_id.entry(id).or_insert(i);
        }
    }
    let index_of = |id: u32| first_with_id.get(&id).copied();
    // Base index → index of the first counter naming it.
    let mut referenced_bases: HashMap<usize, usize> = HashMap::new();
    for (i, (raw, p)) in raws.iter().zip(parsed).enumerate() {
        let Some(p) = p else { continue };
        let ty = p.counter_type;
        let tn = p.type_name;
        let a = &raw.attrs;

        // Which counter must follow, and which attribute names it.
        let follower = ty.required_follower();
        let multi = ty.required_base() == Some(CounterType::MultiBase);
        let (ref_attr, ref_id) = if multi {
            match (p.multi_counter_id, p.base_id) {
                (Some(m), _) => ("multiCounterID", Some(m)),
                (None, b) => ("baseID", b),
            }
        } else {
            ("baseID", p.base_id)
        };
        if let Some(need) = follower {
            let need_name = need.manifest_name().unwrap_or("?");
            match ref_id {
                None => {
                    let attr = if multi { "multiCounterID" } else { "baseID" };
                    cx.sink.error_hint(
                        a.pos,
                        format!("`{tn}` counter `{}` has no `{attr}`", p.id),
                        format!("name the `{need_name}` counter that directly follows it with `{attr}=\"…\"`"),
                    );
                }
                Some(rid) => {
                    let pos = attr_pos(a, ref_attr);
                    match index_of(rid) {
                        None => cx.sink.error(
                            pos,
                            format!(
                                "`{ref_attr}` `{rid}` does not name a counter of this counterset"
                            ),
                        ),
                        Some(j) => {
                            let other = parsed.get(j).and_then(Option::as_ref);
                            if let Some(o) = other {
                                if o.counter_type != need {
                                    cx.sink.error_hint(
                                        pos,
                                        format!(
                                            "`{ref_attr}` `{rid}` names a `{}` counter, but `{tn}` needs a `{need_name}`",
                                            o.type_name
                                        ),
                                        format!("change counter `{rid}` to `type=\"{need_name}\"` or point `{ref_attr}` at one"),
                                    );
                                } else if let Some(&first) = referenced_bases.get(&j) {
                                    // V2 consumers pair by id, and V1 output places a base
                                    // right after the counter naming it (wherever the
                                    // manifest declares it); only one counter can have it
                                    // there, so V1 consumers of the other misread.
                                    let first_id = parsed
                                        .get(first)
                                        .and_then(Option::as_ref)
                                        .map_or(0, |f| f.id);
                                    cx.sink.warning_hint(
                                        pos,
                                        format!("base counter `{rid}` is already the base of counter `{first_id}`: v1 output places it right after that counter, so v1 consumers read counter `{}`'s base from whatever follows it", p.id),
                                        "give each fraction counter its own base counter",
                                    );
                                }
                            }
                            referenced_bases.entry(j).or_insert(i);
                        }
                    }
                }
            }
        } else if let Some(b) = a.get("baseID") {
            cx.sink.warning(
                b.pos,
                format!("`baseID` is ignored: `{tn}` does not use a base counter"),
            );
        }
        if !multi && let Some(m) = a.get("multiCounterID") {
            cx.sink.warning(
                m.pos,
                format!("`multiCounterID` is ignored: `{tn}` is not a multi-timer"),
            );
        }

        // Object time and frequency.
        let needs_time =
            ty.time_base() == TimeBase::ObjectTime || ty == CounterType::PrecisionObjectTimer;
        for (attr, val) in [
            ("perfTimeID", p.perf_time_id),
            ("perfFreqID", p.perf_freq_id),
        ] {
            if needs_time {
                match val {
                    None => cx.sink.error_hint(
                        a.pos,
                        format!("`{tn}` counter `{}` has no `{attr}`", p.id),
                        format!("object-time counters read their time and frequency from other counters: add `{attr}=\"…\"` naming an 8-byte counter"),
                    ),
                    Some(rid) => {
                        let pos = attr_pos(a, attr);
                        let target = index_of(rid).map(|j| parsed.get(j).and_then(Option::as_ref));
                        match target {
                            None => cx.sink.error(
                                pos,
                                format!("`{attr}` `{rid}` does not name a counter of this counterset"),
                            ),
                            Some(Some(o)) if o.size != Some(8) || o.counter_type.is_base() || o.id == p.id => {
                                let what = if o.id == p.id {
                                    "the counter itself".to_owned()
                                } else if o.counter_type.is_base() {
                                    format!("the base counter `{}`", o.type_name)
                                } else {
                                    format!("a {}-byte `{}` counter", o.size.unwrap_or(0), o.type_name)
                                };
                                cx.sink.error_hint(
                                    pos,
                                    format!("`{attr}` `{rid}` names {what}, not an 8-byte time value"),
                                    "point it at a `perf_counter_large_rawcount` counter holding the time or frequency",
                                );
                            }
                            // A valid target, or one with its own errors (reported already).
                            Some(_) => {}
                        }
                    }
                }
            } else if val.is_some() || a.get(attr).is_some() {
                cx.sink.warning(
                    attr_pos(a, attr),
                    format!("`{attr}` is ignored: `{tn}` does not use an object time"),
                );
            }
        }
    }
    for (j, (raw, p)) in raws.iter().zip(parsed).enumerate() {
        let Some(p) = p else { continue };
        if p.counter_type.is_base() && !referenced_bases.contains_key(&j) {
            cx.sink.warning_hint(
                raw.attrs.pos,
                format!("base counter `{}` is not used by any counter", p.id),
                "name it with `baseID` (or `multiCounterID`) on the counter that uses it",
            );
        }
    }
}
