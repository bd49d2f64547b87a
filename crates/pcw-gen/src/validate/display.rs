// SPDX-License-Identifier: MIT OR Apache-2.0
//! The display-text rule of [`crate::text`] applied to a manifest's attributes.

use std::collections::BTreeMap;

use crate::diag::Sink;
use crate::parse::{Attr, Attrs, RawManifest};
use crate::text;

use super::context::string_ref;

/// The display-text rule ([`crate::text`]): every attribute whose text reaches an output, with
/// `$(string.…)` resolved, holds no character the policy refuses. One error per attribute, at its
/// value, naming the first such character.
pub(super) fn display_texts(raw: &RawManifest, sink: &mut Sink) {
    const SET_TEXTS: &[&str] = &["name", "description", "uri"];
    let Some(counters) = &raw.counters else {
        return;
    };
    for p in &counters.providers {
        let provider_texts = &["providerName", "applicationIdentity"];
        display_text_attrs(&raw.strings, &p.attrs, "provider", provider_texts, sink);
        for s in &p.sets {
            display_text_attrs(&raw.strings, &s.attrs, "counterSet", SET_TEXTS, sink);
            for c in &s.counters {
                display_text_attrs(&raw.strings, &c.attrs, "counter", SET_TEXTS, sink);
            }
        }
    }
}

fn display_text_attrs(
    strings: &BTreeMap<String, Attr>,
    attrs: &Attrs,
    elem: &str,
    names: &[&str],
    sink: &mut Sink,
) {
    for name in names {
        let Some(a) = attrs.get(name) else {
            continue;
        };
        // `name` and `description` may refer to the string table; the others are literal. An
        // unknown string is reported where references are resolved; the text as written is
        // checked here, since its id is what a reader of that error sees.
        let reference = string_ref(&a.value)
            .filter(|_| matches!(*name, "name" | "description"))
            .and_then(|id| strings.get(id).map(|s| (id, s)));
        let (value, via) = match reference {
            Some((id, s)) => (s.value.as_str(), format!(" (string `{id}`)")),
            None => (a.value.as_str(), String::new()),
        };
        if let Some((at, c, why)) = text::first_refused(value) {
            sink.error_hint(
                a.pos,
                format!(
                    "`{name}` of `<{elem}>`{via} has {} at character {at}: {}",
                    text::describe(c),
                    why.why()
                ),
                format!(
                    "remove the character; the text reads `{}`",
                    text::visible(value)
                ),
            );
        }
    }
}
