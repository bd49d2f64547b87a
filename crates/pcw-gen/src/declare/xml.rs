// SPDX-License-Identifier: MIT OR Apache-2.0
//! The manifest a declaration derives: the defaults filled in, then one attribute per line so
//! that every line of the text (and so every diagnostic of its analysis) points back at one
//! declaration token.
//!
//! Defaults, for what the declaration does not say:
//!
//! * `providerGuid`: [`name_guid`] of the provider's name; a counterset's `guid`: [`name_guid`]
//!   of `<provider name>/<counterset name>`;
//! * `schemaVersion`: `2.0` when any `name_id`/`description_id` is given, else `1.1` (resource
//!   ids numbered from `resource_base`, default 1000);
//! * a counterset's `uri`: `<provider>.<SYMBOL>`, `<provider>` being the provider's `symbol`, or
//!   its name without the characters a URI segment should not hold; a counter's `uri`: the
//!   set's `uri`, `.`, and its `symbol` or else its field, then `.<id>` if a counter before it
//!   took that;
//! * `detailLevel`: `standard`.

use std::fmt::Write as _;

use proc_macro2::Span;

use super::guid::name_guid;
use super::model::{Attr, Declaration, Element};
use super::problem::Problem;

/// A derived manifest and, per line, the declaration token it came from.
#[derive(Clone, Debug)]
pub(crate) struct Derived {
    pub(crate) text: String,
    pub(crate) lines: Vec<Span>,
}

struct Writer {
    text: String,
    lines: Vec<Span>,
}

impl Writer {
    fn line(&mut self, span: Span, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
        self.lines.push(span);
    }

    /// `<name` then each attribute on its own line, then `>` or `/>`.
    fn open(&mut self, depth: usize, name: &str, elem: &Element, close: bool) {
        let pad = "  ".repeat(depth);
        self.line(elem.span, &format!("{pad}<{name}"));
        let last = elem.attrs.len().saturating_sub(1);
        for (i, a) in elem.attrs.iter().enumerate() {
            let end = match (i == last, close) {
                (false, _) => "",
                (true, true) => "/>",
                (true, false) => ">",
            };
            self.line(
                a.span,
                &format!("{pad}    {}=\"{}\"{end}", a.name, escape(&a.value)),
            );
        }
        if elem.attrs.is_empty() {
            self.line(
                elem.span,
                &format!("{pad}{}", if close { "/>" } else { ">" }),
            );
        }
    }
}

/// `&`, `<`, `>`, `"` and the blanks XML would normalise, as references.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' | '\n' | '\r' => {
                let _ = write!(out, "&#x{:x};", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out
}

/// Characters no XML 1.0 document can hold, even as a reference.
fn unrepresentable(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

/// Writes the manifest of `decl`, defaults filled in.
pub(crate) fn write(decl: &Declaration) -> Result<Derived, Vec<Problem>> {
    let mut decl = decl.clone();
    fill_defaults(&mut decl);
    let mut problems = Vec::new();
    let elements = std::iter::once(&decl.provider).chain(decl.sets.iter().flat_map(|s| {
        std::iter::once(&s.elem)
            .chain(&s.structs)
            .chain(s.counters.iter().map(|c| &c.elem))
    }));
    for elem in elements {
        for a in &elem.attrs {
            if let Some(c) = a.value.chars().find(|c| unrepresentable(*c)) {
                problems.push(Problem::hint(
                    a.span,
                    format!(
                        "`{}` holds {}, which no manifest can hold",
                        a.name,
                        crate::text::describe(c)
                    ),
                    "XML 1.0 has no way to write this character; remove it",
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let schema = if decl.sets.iter().any(|s| {
        std::iter::once(&s.elem)
            .chain(s.counters.iter().map(|c| &c.elem))
            .any(|e| e.get("nameID").is_some() || e.get("descriptionID").is_some())
    }) {
        "2.0"
    } else {
        "1.1"
    };
    let top = decl.module.span;
    let mut w = Writer {
        text: String::new(),
        lines: Vec::new(),
    };
    w.line(top, "<?xml version=\"1.0\" encoding=\"utf-8\"?>");
    w.line(
        top,
        &format!(
            "<!-- Derived by pcw-gen from the `counters!` declaration of module `{}`. Do not edit: change the declaration. -->",
            decl.module.value
        ),
    );
    w.line(
        top,
        "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">",
    );
    w.line(top, "  <instrumentation>");
    w.line(
        top,
        &format!(
            "    <counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" schemaVersion=\"{schema}\">"
        ),
    );
    w.open(3, "provider", &decl.provider, false);
    for set in &decl.sets {
        w.open(4, "counterSet", &set.elem, false);
        if !set.structs.is_empty() {
            w.line(set.elem.span, "          <structs>");
            for st in &set.structs {
                w.open(6, "struct", st, true);
            }
            w.line(set.elem.span, "          </structs>");
        }
        for c in &set.counters {
            let leaf = c.attributes.is_empty();
            w.open(5, "counter", &c.elem, leaf);
            if !leaf {
                w.line(c.elem.span, "            <counterAttributes>");
                for a in &c.attributes {
                    w.line(
                        a.span,
                        &format!("              <counterAttribute name=\"{}\"/>", a.value),
                    );
                }
                w.line(c.elem.span, "            </counterAttributes>");
                w.line(c.elem.span, "          </counter>");
            }
        }
        w.line(set.elem.span, "        </counterSet>");
    }
    w.line(decl.provider.span, "      </provider>");
    w.line(top, "    </counters>");
    w.line(top, "  </instrumentation>");
    w.line(top, "</instrumentationManifest>");
    Ok(Derived {
        text: w.text,
        lines: w.lines,
    })
}

fn value<'e>(elem: &'e Element, name: &str) -> Option<&'e str> {
    elem.get(name).map(|a| a.value.as_str())
}

fn fill_defaults(decl: &mut Declaration) {
    let provider_name = value(&decl.provider, "providerName")
        .unwrap_or("Counters")
        .to_owned();
    decl.provider
        .default("providerGuid", || name_guid(&provider_name).to_string());
    let prefix = value(&decl.provider, "symbol").map_or_else(
        || {
            let p: String = provider_name
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                .collect();
            if p.is_empty() {
                "Counters".to_owned()
            } else {
                p
            }
        },
        str::to_owned,
    );
    for set in &mut decl.sets {
        let set_name = value(&set.elem, "name").unwrap_or_default().to_owned();
        set.elem.default("guid", || {
            name_guid(&format!("{provider_name}/{set_name}")).to_string()
        });
        let symbol = value(&set.elem, "symbol").unwrap_or_default().to_owned();
        set.elem.default("uri", || format!("{prefix}.{symbol}"));
        let set_uri = value(&set.elem, "uri").unwrap_or_default().to_owned();
        let mut taken: Vec<String> = set
            .counters
            .iter()
            .filter_map(|c| value(&c.elem, "uri").map(str::to_owned))
            .collect();
        for c in &mut set.counters {
            if c.elem.get("uri").is_none() {
                let leaf = value(&c.elem, "symbol")
                    .unwrap_or(&c.field.value)
                    .to_owned();
                let mut uri = format!("{set_uri}.{leaf}");
                if taken.contains(&uri) {
                    uri = format!("{uri}.{}", value(&c.elem, "id").unwrap_or_default());
                }
                taken.push(uri.clone());
                let span = c.field.span;
                c.elem.attrs.push(Attr {
                    name: "uri",
                    value: uri,
                    span,
                });
            }
            c.elem.default("detailLevel", || "standard".to_owned());
        }
    }
}
