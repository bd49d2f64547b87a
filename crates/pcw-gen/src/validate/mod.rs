// SPDX-License-Identifier: MIT OR Apache-2.0
//! The counter manifest rules (what the Performance Counters Schema and CTRPP require of a
//! `.man` file, plus the limits PCW puts on what it registers): raw tree in, resolved
//! [`Manifest`] out, every problem of the file reported in one run.
//!
//! One concept a file: [`context`] reads attributes (numbers, symbols, GUIDs, enumerated
//! values), [`strings`] names, descriptions and their resource ids, [`display`] the display-text
//! policy, [`provider`], [`counterset`] and [`counter`] the elements, [`layout`] the value
//! blocks, [`references`] the references between counters and [`order`] the V1 order of
//! their bases.

mod context;
mod counter;
mod counterset;
mod display;
mod layout;
mod order;
mod provider;
mod references;
mod strings;

use crate::diag::Sink;
use crate::model::{Manifest, SchemaVersion};
use crate::parse::RawManifest;

use context::Cx;

/// Validates and resolves a parsed manifest. Returns `None` when any error was reported.
pub(crate) fn validate(raw: &RawManifest, sink: &mut Sink) -> Option<Manifest> {
    let counters = raw.counters.as_ref()?;
    let mut cx = Cx {
        sink,
        strings: &raw.strings,
        version: None,
        kernel: true,
    };
    if let Some(v) = cx.required(&counters.attrs, "counters", "schemaVersion") {
        cx.version = v.value.parse().ok();
        if cx.version.is_none() {
            let known: Vec<String> = SchemaVersion::ALL
                .iter()
                .map(|s| format!("`{s}`"))
                .collect();
            cx.sink.error_hint(
                v.pos,
                format!("unsupported `schemaVersion` `{}`", v.value),
                format!("use {}", known.join(" or ")),
            );
        }
    }
    let provider = match counters.providers.as_slice() {
        [] => {
            cx.sink
                .error(counters.attrs.pos, "`<counters>` has no `<provider>`");
            None
        }
        [first, rest @ ..] => {
            for p in rest {
                cx.sink.error_hint(
                    p.attrs.pos,
                    "a manifest may contain only one `<provider>`",
                    "put each provider in its own manifest",
                );
            }
            provider::provider(&mut cx, first)
        }
    };
    display::display_texts(raw, cx.sink);
    provider::user_mode_rules(raw, cx.kernel, cx.sink);
    let version = cx.version;
    if cx.sink.has_errors() {
        return None;
    }
    let manifest = Manifest {
        schema_version: version?,
        provider: provider?,
    };
    v1_rules(&manifest, cx.sink);
    Some(manifest)
}

/// What the V1 tables ([`crate::Config::v1_tables`]) refuse and every other output accepts, as
/// warnings: counters of one set naming different object time or frequency counters. (A base
/// shared by two counters, the other thing V1 cannot express, is warned about where the second
/// counter names it.)
fn v1_rules(manifest: &Manifest, sink: &mut Sink) {
    let file = sink.file().to_path_buf();
    for d in crate::v1_tables::check_time_bases(manifest, &file) {
        sink.warning_hint(
            d.pos,
            d.message,
            format!(
                "{}; the perf DLL's v1 tables (`Config::v1_tables`) refuse it",
                d.hint.unwrap_or_default()
            ),
        );
    }
}
