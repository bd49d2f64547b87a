// SPDX-License-Identifier: MIT OR Apache-2.0
//! `<provider>`: its attributes, the countersets it holds, what must be unique across them
//! (GUIDs, names, symbols, resource ids), and what a `userMode` provider cannot declare.

use std::collections::{HashMap, HashSet};

use crate::diag::Sink;
use crate::model::{Callback, Guid, Pos, Provider, ProviderType, SchemaVersion};
use crate::parse::{RawManifest, RawProvider};

use super::context::{Cx, parse_uint, resolved};
use super::counterset::counterset;
use super::strings::DEFAULT_RESOURCE_BASE;

#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
pub(super) fn provider(cx: &mut Cx<'_>, p: &RawProvider) -> Option<Provider> {
    let a = &p.attrs;
    let provider_type = match a.get("providerType") {
        Some(t) => cx.value(t),
        None => Some(ProviderType::UserMode),
    };
    cx.kernel = provider_type != Some(ProviderType::UserMode);
    let guid = cx
        .required(a, "provider", "providerGuid")
        .and_then(|g| cx.guid(g, "providerGuid"));
    let app = cx.required(a, "provider", "applicationIdentity").cloned();
    if let Some(app) = &app {
        if app.value.trim().is_empty() {
            cx.sink.error(app.pos, "`applicationIdentity` is empty");
        } else if app.value.contains(['\\', '/']) {
            cx.sink.warning_hint(
                app.pos,
                format!(
                    "`applicationIdentity` `{}` contains a path",
                    app.value
                ),
                "give the binary's file name only; `lodctr /m:<manifest> <directory>` supplies the directory",
            );
        }
    }
    let callback = match a.get("callback") {
        Some(c) => cx.value(c),
        None => Some(Callback::Default),
    };
    let symbol = a.get("symbol").map(|s| {
        cx.symbol(s, "symbol");
        s.value.clone()
    });
    if !cx.kernel && symbol.is_none() {
        cx.sink.error_hint(
            a.pos,
            "a `userMode` `<provider>` needs a `symbol`",
            "the symbol names the provider handle in generated user-mode code",
        );
    }
    let mut resource_base = None;
    if let Some(rb) = a.get("resourceBase") {
        if cx.version == Some(SchemaVersion::V2_0) {
            cx.sink.error_hint(
                rb.pos,
                "`resourceBase` is not allowed with `schemaVersion=\"2.0\"`",
                "schema 2.0 gives every string its own `nameID`/`descriptionID`",
            );
        } else {
            resource_base = cx.uint(rb, "resourceBase");
        }
    }
    if p.sets.is_empty() {
        cx.sink
            .warning(a.pos, "the `<provider>` defines no `<counterSet>`");
    }

    let mut next_rid = resource_base.unwrap_or(DEFAULT_RESOURCE_BASE);
    let mut sets = Vec::new();
    for s in &p.sets {
        sets.push(counterset(cx, s, &mut next_rid));
    }

    // Uniqueness across the provider, from the raw attributes so that a set with some other
    // error still takes part.
    let mut guids: HashMap<Guid, String> = HashMap::new();
    let mut set_names: HashMap<String, String> = HashMap::new();
    let mut set_symbols: HashSet<String> = HashSet::new();
    let mut rids: HashMap<u32, Pos> = HashMap::new();
    for raw in &p.sets {
        let ra = &raw.attrs;
        let label = ra
            .get("symbol")
            .map_or_else(|| format!("at line {}", ra.pos.line), |s| s.value.clone());
        if let Some(g) = ra.get("guid")
            && let Some(guid) = Guid::parse_braced(g.value.trim())
            && let Some(prev) = guids.insert(guid, label.clone())
        {
            cx.sink.error(
                g.pos,
                format!("counterset guid `{guid}` is already used by counterset `{prev}`"),
            );
        }
        if let Some(n) = ra.get("name")
            && let Some(name) = resolved(cx.strings, &n.value)
            && let Some(prev) = set_names.insert(name.to_lowercase(), label.clone())
        {
            cx.sink.error_hint(
                n.pos,
                format!("counterset name `{name}` is already used by counterset `{prev}`"),
                "pcw compares counterset names case-insensitively and merges equal ones",
            );
        }
        if let Some(sym) = ra.get("symbol")
            && !set_symbols.insert(sym.value.clone())
        {
            cx.sink.error(
                sym.pos,
                format!("counterset symbol `{}` is used twice", sym.value),
            );
        }
        if cx.version == Some(SchemaVersion::V2_0) {
            let all = std::iter::once(ra).chain(raw.counters.iter().map(|c| &c.attrs));
            for attrs in all {
                for id_attr in ["nameID", "descriptionID"] {
                    let Some(at) = attrs.get(id_attr) else {
                        continue;
                    };
                    let Some(id) = parse_uint(&at.value) else {
                        continue;
                    };
                    if let Some(prev) = rids.insert(id, at.pos) {
                        cx.sink.error_hint(
                            at.pos,
                            format!("resource id `{id}` is already used at line {}", prev.line),
                            "every `nameID` and `descriptionID` names its own string resource",
                        );
                    }
                }
            }
        }
    }

    Some(Provider {
        name: a
            .get("providerName")
            .map_or_else(|| "Counters".to_owned(), |n| n.value.clone()),
        guid: guid?,
        provider_type: provider_type?,
        application_identity: app?.value,
        callback: callback?,
        symbol,
        resource_base,
        pos: a.pos,
        countersets: sets.into_iter().collect::<Option<Vec<_>>>()?,
    })
}

/// What a `userMode` provider cannot declare: value blocks (`<structs>`), a kernel-mode layout
/// that Perflib's user-mode API has no use for (it sets counters by id). One error per
/// `<structs>` element.
pub(super) fn user_mode_rules(raw: &RawManifest, kernel: bool, sink: &mut Sink) {
    if kernel {
        return;
    }
    let sets = raw
        .counters
        .iter()
        .filter_map(|c| c.providers.first())
        .flat_map(|p| &p.sets);
    for set in sets {
        for pos in &set.structs_elements {
            sink.error_hint(
                *pos,
                "`<structs>` in a `userMode` counterset: value blocks are a kernel-mode layout, and a `userMode` provider sets its counters through perflib by id",
                "remove `<structs>` and the counters' `struct` attributes, or set `providerType=\"kernelMode\"`",
            );
        }
    }
}
