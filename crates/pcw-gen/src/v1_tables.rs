// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 tables a perf DLL serves a manifest's countersets from: per counterset the
//! `PERF_OBJECT_TYPE` facts (lodctr symbol offset, whether it has instances, detail level,
//! default counter, which counters hold the object's time and frequency) and per counter, in
//! V1 order, the `PERF_COUNTER_DEFINITION` facts (symbol offset — none for a base —, V1 type,
//! size, detail level, scale). Title indexes are First Counter / First Help plus the offsets,
//! known only at run time, so the tables hold offsets.
//!
//! The output is self-contained Rust (`ObjectTable`, `CounterTable`, `SERVICE`, `OBJECTS`),
//! formatted as every generated file is (`render`). [`check`] refuses what a V1
//! object cannot express, with a diagnostic at the counter: a base counter that does not follow
//! the counter naming it (a base shared by two counters) and counters that name different
//! object time or frequency counters (a V1 object has one `PerfTime` and one `PerfFreq`).

use std::collections::HashMap;
use std::path::Path;

use pcw_core::counter_type::CounterType;
use proc_macro2::{Literal, Span, TokenStream};
use quote::quote;

use crate::diag::{Diagnostic, Severity};
use crate::model::Pos;
use crate::model::{Counterset, Manifest};
use crate::render;
use crate::resources;

/// What a V1 object cannot express: one error per offending counter, at its `<counter>`
/// ([`check_bases`] and [`check_time_bases`]).
pub(crate) fn check(manifest: &Manifest, file: &Path) -> Vec<Diagnostic> {
    let mut out = check_bases(manifest, file);
    out.extend(check_time_bases(manifest, file));
    out
}

fn error(file: &Path, pos: Pos, message: String, hint: &str) -> Diagnostic {
    Diagnostic::new(
        Severity::Error,
        file.to_path_buf(),
        pos,
        message,
        Some(hint.to_owned()),
    )
}

/// A counter whose base cannot directly follow it in V1 order (a base shared by two counters;
/// the analysis warns about it where the second counter names it).
pub(crate) fn check_bases(manifest: &Manifest, file: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for set in &manifest.provider.countersets {
        // Id → the first counter with it (what `Counterset::counter` finds), built once.
        let mut by_id: HashMap<u16, &crate::model::Counter> = HashMap::new();
        for c in &set.counters {
            by_id.entry(c.id).or_insert(c);
        }
        for (i, c) in set.counters.iter().enumerate() {
            // The base as V1 order places it: only a type that reads one has it, a multi-timer's
            // from `multiCounterID` (else `baseID`); any other `baseID` is ignored.
            let named = if c.counter_type.required_base() == Some(CounterType::MultiBase) {
                c.multi_counter_id.or(c.base_id)
            } else {
                c.base_id
            };
            let Some(base) = c
                .counter_type
                .required_follower()
                .and(named)
                .filter(|b| by_id.get(b).is_some_and(|b| b.counter_type.is_base()))
            else {
                continue;
            };
            let next = set.counters.get(i + 1);
            if next.is_none_or(|n| n.id != base) {
                let follower = next.map_or_else(
                    || "nothing follows it".to_owned(),
                    |n| format!("counter `{}` does", n.id),
                );
                out.push(error(
                    file,
                    c.pos,
                    format!(
                        "counter `{}`'s base counter `{base}` cannot follow it in v1 order \
                         ({follower}): a v1 consumer reads the base from the next counter \
                         definition",
                        c.id
                    ),
                    "give each fraction counter its own base counter",
                ));
            }
        }
    }
    out
}

/// Counters of one counterset naming different `perfTimeID`s or `perfFreqID`s (a V1 object has
/// one `PerfTime` and one `PerfFreq`).
pub(crate) fn check_time_bases(manifest: &Manifest, file: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for set in &manifest.provider.countersets {
        for (attr, id_of) in [
            (
                "perfTimeID",
                (|c| c.perf_time_id) as fn(&crate::model::Counter) -> Option<u16>,
            ),
            ("perfFreqID", |c| c.perf_freq_id),
        ] {
            let mut first: Option<(u16, u16)> = None;
            for c in &set.counters {
                let Some(id) = id_of(c) else { continue };
                match first {
                    None => first = Some((c.id, id)),
                    Some((by, chosen)) if chosen != id => out.push(error(
                        file,
                        c.pos,
                        format!(
                            "counter `{}` names `{attr}` `{id}`, but counter `{by}` of the same \
                             counterset names `{chosen}`: a v1 object has one {}",
                            c.id,
                            if attr == "perfTimeID" {
                                "`PerfTime`"
                            } else {
                                "`PerfFreq`"
                            }
                        ),
                        "let every object-time counter of a counterset read the same time and frequency counters",
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    out
}

/// An unsuffixed integer literal (`-1`, `100`): the type comes from the field.
fn int(value: impl Into<i64>) -> TokenStream {
    let value: i64 = value.into();
    let abs = Literal::u64_unsuffixed(value.unsigned_abs());
    if value < 0 {
        quote!(-#abs)
    } else {
        quote!(#abs)
    }
}

/// `Some(n)` or `None`.
fn option<T: TryInto<i64>>(value: Option<T>) -> TokenStream {
    value.and_then(|v| v.try_into().ok()).map_or_else(
        || quote!(None),
        |v: i64| {
            let v = int(v);
            quote!(Some(#v))
        },
    )
}

/// The position of the counter with `id` in the set's V1 order.
fn position(set: &Counterset, id: Option<u16>) -> Option<usize> {
    id.and_then(|id| set.counters.iter().position(|c| c.id == id))
}

/// The tables for a manifest that passed [`check`]; `service` is the lodctr `drivername=`.
pub(crate) fn generate(manifest: &Manifest, source_name: &str, service: &str) -> String {
    let offsets = resources::v1_offsets(manifest);
    let count = Literal::usize_unsuffixed(manifest.provider.countersets.len());
    let objects = manifest.provider.countersets.iter().zip(offsets).map(
        |(set, (set_offset, counter_offsets))| {
            let (symbol, name) = (&set.symbol, &set.name);
            let has_instances = set.instances.has_instances();
            let set_offset = int(set_offset);
            let detail = set
                .counters
                .iter()
                .map(|c| c.detail_level.level().raw())
                .min()
                .unwrap_or(100);
            // The first counter is the default unless it is a base (which has no title).
            let default_counter = int(if counter_offsets.first().is_some_and(Option::is_some) {
                0
            } else {
                -1
            });
            let detail = int(detail);
            let perf_time = option(position(
                set,
                set.counters.iter().find_map(|c| c.perf_time_id),
            ));
            let perf_freq = option(position(
                set,
                set.counters.iter().find_map(|c| c.perf_freq_id),
            ));
            let counters = set.counters.iter().zip(counter_offsets).map(|(c, offset)| {
                let field = &c.field;
                let (id, size, scale) = (int(c.id), int(c.size), int(c.default_scale));
                let offset = option(offset);
                let raw = c.counter_type.raw();
                let counter_type = syn::LitInt::new(
                    &format!("0x{:04x}_{:04x}", raw >> 16, raw & 0xFFFF),
                    Span::call_site(),
                );
                let detail = int(c.detail_level.level().raw());
                quote! {
                    CounterTable {
                        id: #id,
                        field: #field,
                        v1_offset: #offset,
                        counter_type: #counter_type,
                        size: #size,
                        detail_level: #detail,
                        default_scale: #scale,
                    }
                }
            });
            quote! {
                ObjectTable {
                    symbol: #symbol,
                    name: #name,
                    v1_offset: #set_offset,
                    has_instances: #has_instances,
                    detail_level: #detail,
                    default_counter: #default_counter,
                    perf_time_counter: #perf_time,
                    perf_freq_counter: #perf_freq,
                    counters: &[#(#counters),*],
                }
            }
        },
    );
    let file = quote! {
        /// One counterset as a V1 object.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct ObjectTable {
            /// The counterset's `symbol`.
            pub symbol: &'static str,
            /// The counterset's name.
            pub name: &'static str,
            /// The object's lodctr symbol offset: `ObjectNameTitleIndex` = First Counter +
            /// offset, `ObjectHelpTitleIndex` = First Help + offset.
            pub v1_offset: u32,
            /// Whether the object has instance definitions (`multiple` and
            /// `multipleAggregate`).
            pub has_instances: bool,
            /// The object's detail level: the lowest of its counters'.
            pub detail_level: u32,
            /// `DefaultCounter`: 0 (the first counter), or -1 when the first is a base.
            pub default_counter: i32,
            /// Position of the counter holding the object's `PerfTime` (`perfTimeID`), if any.
            pub perf_time_counter: Option<usize>,
            /// Position of the counter holding the object's `PerfFreq` (`perfFreqID`), if any.
            pub perf_freq_counter: Option<usize>,
            /// Counters in V1 order: each base right after the counter naming it (the
            /// descriptor order, in which a provider's values come).
            pub counters: &'static [CounterTable],
        }

        /// One counter as a V1 counter definition.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct CounterTable {
            /// The counter's `id`.
            pub id: u16,
            /// The manifest `field`.
            pub field: &'static str,
            /// The lodctr symbol offset; `None` for a base counter (title index 0).
            pub v1_offset: Option<u32>,
            /// The V1 `CounterType`.
            pub counter_type: u32,
            /// `CounterSize`.
            pub size: u32,
            /// `DetailLevel`.
            pub detail_level: u32,
            /// `DefaultScale`.
            pub default_scale: i32,
        }

        /// The service key name (lodctr `drivername=`).
        pub const SERVICE: &str = #service;

        /// The objects, in manifest order.
        pub static OBJECTS: [ObjectTable; #count] = [#(#objects),*];
    };
    render::file(file, source_name)
}
