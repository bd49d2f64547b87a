// SPDX-License-Identifier: MIT OR Apache-2.0
//! The counter manifest rules (what the Performance Counters Schema and CTRPP require of a
//! `.man` file, plus the limits PCW puts on what it registers): raw tree in, resolved
//! [`Manifest`] out, every problem of the file reported in one run.

use std::collections::{BTreeMap, HashMap, HashSet};

use pcw_core::counter_type::{
    CounterType, DetailLevel, MANIFEST_SCHEMA_TYPE_NAMES, MANIFEST_TYPE_NAMES, TimeBase,
};

use crate::diag::{Pos, Sink};
use crate::ir::{
    Aggregate, Counter, CounterAttribute, CounterSet, Field, Guid, Instances, Manifest, Provider,
    ProviderType, SchemaVersion, Struct,
};
use crate::parse::{Attr, Attrs, RawCounter, RawManifest, RawProvider, RawSet, backticked};
use crate::{names, text};

/// Longest `name` the schema allows.
const MAX_NAME_CHARS: usize = 1023;
/// Longest text a string resource holds: its length is a 16-bit count of UTF-16 units.
const MAX_STRING_UNITS: usize = 0xFFFF;
/// Largest string resource id: `STRINGTABLE` ids are 16 bits.
const MAX_STRING_ID: u32 = 0xFFFF;
/// First resource id pcw-gen assigns in a schema 1.1 manifest without `resourceBase`.
pub(crate) const DEFAULT_RESOURCE_BASE: u32 = 1000;

struct Cx<'a> {
    sink: &'a mut Sink,
    strings: &'a BTreeMap<String, Attr>,
    version: Option<SchemaVersion>,
    kernel: bool,
}

impl Cx<'_> {
    fn required<'r>(&mut self, attrs: &'r Attrs, elem: &str, name: &str) -> Option<&'r Attr> {
        let a = attrs.get(name);
        if a.is_none() {
            self.sink.error(
                attrs.pos,
                format!("`<{elem}>` is missing the `{name}` attribute"),
            );
        }
        a
    }

    /// `UInt32Type`: decimal or `0x` + 1..8 hex digits.
    fn uint(&mut self, a: &Attr, name: &str) -> Option<u32> {
        let parsed = parse_uint(&a.value);
        if parsed.is_none() {
            self.sink.error_hint(
                a.pos,
                format!(
                    "`{name}` must be a 32-bit unsigned number, not `{}`",
                    a.value
                ),
                "write a decimal number or `0x` followed by 1 to 8 hex digits",
            );
        }
        parsed
    }

    fn symbol(&mut self, a: &Attr, name: &str) -> bool {
        let ok = names::is_c_symbol(&a.value);
        if !ok {
            self.sink.error_hint(
                a.pos,
                format!("`{name}` must be a c identifier, not `{}`", a.value),
                "use letters, digits and `_`, not starting with a digit",
            );
        }
        ok
    }

    fn guid(&mut self, a: &Attr, name: &str) -> Option<Guid> {
        let g = Guid::parse_braced(a.value.trim());
        if g.is_none() {
            self.sink.error_hint(
                a.pos,
                format!("`{name}` is not a braced guid: `{}`", a.value),
                "write it as `{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}`",
            );
        }
        g
    }

    /// Resolves `$(string.id)` through the string table; checks the length limit.
    fn text(&mut self, a: &Attr, name: &str) -> Option<String> {
        let v = a.value.as_str();
        let resolved = if let Some(id) = v
            .strip_prefix("$(string.")
            .and_then(|r| r.strip_suffix(')'))
        {
            if let Some(s) = self.strings.get(id) {
                s.value.clone()
            } else {
                self.sink.error_hint(
                    a.pos,
                    format!("`{name}` refers to string `{id}`, which no `<stringTable>` defines"),
                    "add `<string id=\"…\" value=\"…\"/>` under `<localization><resources culture=\"en-US\"><stringTable>`",
                );
                return None;
            }
        } else {
            v.to_owned()
        };
        if resolved.chars().count() > MAX_NAME_CHARS && name == "name" {
            self.sink.error(
                a.pos,
                format!("`name` is longer than {MAX_NAME_CHARS} characters"),
            );
            return None;
        }
        if resolved.encode_utf16().count() > MAX_STRING_UNITS {
            self.sink.error_hint(
                a.pos,
                format!("`{name}` is longer than {MAX_STRING_UNITS} UTF-16 units"),
                "a string resource holds at most 65535 units; shorten the text",
            );
            return None;
        }
        Some(resolved)
    }

    fn one_of<T: Copy>(
        &mut self,
        a: &Attr,
        name: &str,
        all: &[T],
        as_str: impl Fn(T) -> &'static str,
    ) -> Option<T> {
        let found = all.iter().copied().find(|v| as_str(*v) == a.value);
        if found.is_none() {
            let names: Vec<&str> = all.iter().map(|v| as_str(*v)).collect();
            let exact_case = names.iter().find(|n| n.eq_ignore_ascii_case(&a.value));
            let hint = match exact_case {
                Some(n) => format!("values are case-sensitive: write `{n}`"),
                None => format!("expected one of {}", backticked(&names)),
            };
            self.sink
                .error_hint(a.pos, format!("invalid `{name}` value `{}`", a.value), hint);
        }
        found
    }
}

/// `UInt32Type` without reporting: decimal or `0x` + 1..8 hex digits.
fn parse_uint(value: &str) -> Option<u32> {
    let v = value.trim();
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        if (1..=8).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            u32::from_str_radix(hex, 16).ok()
        } else {
            None
        }
    } else if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        v.parse::<u32>().ok()
    } else {
        None
    }
}

/// A name as consumers see it (string reference resolved), without reporting.
fn resolved(strings: &BTreeMap<String, Attr>, value: &str) -> Option<String> {
    match value
        .strip_prefix("$(string.")
        .and_then(|r| r.strip_suffix(')'))
    {
        Some(id) => strings.get(id).map(|s| s.value.clone()),
        None => Some(value.to_owned()),
    }
}

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
        cx.version = match v.value.as_str() {
            "1.1" => Some(SchemaVersion::V1_1),
            "2.0" => Some(SchemaVersion::V2_0),
            other => {
                cx.sink.error_hint(
                    v.pos,
                    format!("unsupported `schemaVersion` `{other}`"),
                    "use `1.1` or `2.0`",
                );
                None
            }
        };
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
            provider(&mut cx, first)
        }
    };
    display_texts(raw, cx.sink);
    user_mode_rules(raw, cx.kernel, cx.sink);
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

#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
fn provider(cx: &mut Cx<'_>, p: &RawProvider) -> Option<Provider> {
    let a = &p.attrs;
    let provider_type = match a.get("providerType") {
        Some(t) => cx.one_of(
            t,
            "providerType",
            &[ProviderType::UserMode, ProviderType::KernelMode],
            ProviderType::as_str,
        ),
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
    let custom_callback = match a.get("callback") {
        Some(c) => cx.one_of(c, "callback", &[true, false], |b| {
            if b { "custom" } else { "default" }
        }),
        None => Some(false),
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
        sets.push(counter_set(cx, s, &mut next_rid));
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
        custom_callback: custom_callback?,
        symbol,
        resource_base,
        pos: a.pos,
        countersets: sets.into_iter().collect::<Option<Vec<_>>>()?,
    })
}

fn attr_pos(attrs: &Attrs, name: &str) -> Pos {
    attrs.get(name).map_or(attrs.pos, |a| a.pos)
}

/// Name and description with their resource ids, per schema version.
struct Strings {
    name: Option<String>,
    name_id: Option<u32>,
    description: Option<String>,
    description_id: Option<u32>,
}

fn strings(
    cx: &mut Cx<'_>,
    a: &Attrs,
    elem: &str,
    next_rid: &mut u32,
    name_optional: bool,
) -> Strings {
    let name = a.get("name").and_then(|n| cx.text(n, "name"));
    let description = a.get("description").and_then(|d| cx.text(d, "description"));
    let mut out = Strings {
        name,
        name_id: None,
        description,
        description_id: None,
    };
    match cx.version {
        Some(SchemaVersion::V2_0) => {
            for (attr, id_attr, present) in [
                ("name", "nameID", a.get("name").is_some()),
                (
                    "description",
                    "descriptionID",
                    a.get("description").is_some(),
                ),
            ] {
                let id = a.get(id_attr).and_then(|i| cx.uint(i, id_attr));
                if let (Some(v), Some(i)) = (id, a.get(id_attr))
                    && v > MAX_STRING_ID
                {
                    cx.sink.error_hint(
                        i.pos,
                        format!("`{id_attr}` `{v}` is not a string resource id, which is 16 bits"),
                        "string resource ids run from 0 to 65535",
                    );
                }
                if present && a.get(id_attr).is_none() {
                    cx.sink.error_hint(
                        a.pos,
                        format!("`<{elem}>` has a `{attr}` but no `{id_attr}`"),
                        format!(
                            "schema 2.0 needs `{id_attr}`: the resource id of the `{attr}` string"
                        ),
                    );
                }
                if !present && let Some(i) = a.get(id_attr) {
                    cx.sink.error(
                        i.pos,
                        format!("`{id_attr}` without a `{attr}` on `<{elem}>`"),
                    );
                }
                if attr == "name" {
                    out.name_id = id;
                } else {
                    out.description_id = id;
                }
            }
        }
        Some(SchemaVersion::V1_1) => {
            for id_attr in ["nameID", "descriptionID"] {
                if let Some(i) = a.get(id_attr) {
                    cx.sink.error_hint(
                        i.pos,
                        format!("`{id_attr}` is not allowed with `schemaVersion=\"1.1\"`"),
                        "use `schemaVersion=\"2.0\"`, or remove it and let `resourceBase` number the strings",
                    );
                }
            }
            if out.name.is_some() || !name_optional {
                out.name_id = Some(*next_rid);
                *next_rid = next_rid.saturating_add(1);
            }
            if out.description.is_some() || !name_optional {
                out.description_id = Some(*next_rid);
                *next_rid = next_rid.saturating_add(1);
            }
            if let Some(last) = out.description_id.or(out.name_id)
                && last > MAX_STRING_ID
            {
                cx.sink.error_hint(
                    a.pos,
                    format!(
                        "`<{elem}>`'s strings are numbered {last}, past 65535, the largest string resource id"
                    ),
                    "lower `resourceBase` on `<provider>`",
                );
            }
        }
        None => {}
    }
    out
}

#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
fn counter_set(cx: &mut Cx<'_>, s: &RawSet, next_rid: &mut u32) -> Option<CounterSet> {
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
        Some(i) => cx.one_of(i, "instances", &Instances::ALL, Instances::as_str),
        None => Some(Instances::Single),
    };
    if s.counters.is_empty() {
        cx.sink.error(
            a.pos,
            "`<counterSet>` has no `<counter>`; the schema requires at least one",
        );
    }

    // Structs.
    for extra in s.structs_elements.iter().skip(1) {
        cx.sink
            .error(*extra, "a `<counterSet>` may contain only one `<structs>`");
    }
    let mut structs: Vec<Struct> = Vec::new();
    // Struct name → index in `structs`.
    let mut struct_names: HashMap<String, u16> = HashMap::new();
    let mut struct_pos: Vec<Pos> = Vec::new();
    let mut struct_ok = true;
    for st_attrs in &s.structs {
        let name = cx.required(st_attrs, "struct", "name").cloned();
        let ty = cx.required(st_attrs, "struct", "type").cloned();
        let (Some(name), Some(ty)) = (name, ty) else {
            struct_ok = false;
            continue;
        };
        struct_ok &= cx.symbol(&name, "name") & cx.symbol(&ty, "type");
        if struct_names.contains_key(&name.value) {
            cx.sink.error(
                name.pos,
                format!("struct `{}` is declared twice", name.value),
            );
            struct_ok = false;
            continue;
        }
        let index = u16::try_from(structs.len()).unwrap_or(u16::MAX);
        struct_names.insert(name.value.clone(), index);
        struct_pos.push(st_attrs.pos);
        structs.push(Struct {
            index,
            name: name.value,
            c_type: Some(ty.value),
            fields: Vec::new(),
            size: 0,
        });
    }
    if structs.is_empty() {
        struct_names.insert(symbol.clone().unwrap_or_default(), 0);
        structs.push(Struct {
            index: 0,
            name: symbol.clone().unwrap_or_default(),
            c_type: None,
            fields: Vec::new(),
            size: 0,
        });
    }
    let implicit = s.structs.is_empty();

    // Counters, first on their own.
    let mut parsed: Vec<Option<Parsed>> = Vec::new();
    for c in &s.counters {
        parsed.push(counter(
            cx,
            c,
            next_rid,
            &structs,
            &struct_names,
            implicit,
            struct_ok,
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

    // Layout: fields in order of first appearance, sized by type; shared fields must agree.
    let mut layout_ok = true;
    let mut snake_names: HashMap<(u16, String), String> = HashMap::new();
    // Per struct, field name → index in its `fields`.
    let mut field_index: Vec<HashMap<String, usize>> = vec![HashMap::new(); structs.len()];
    for (raw, p) in s.counters.iter().zip(&parsed) {
        let Some(p) = p else { continue };
        let (Some(size), Some(field)) = (p.size, &p.field) else {
            continue;
        };
        let (Some(st), Some(index)) = (
            structs.get_mut(usize::from(p.struct_index)),
            field_index.get_mut(usize::from(p.struct_index)),
        ) else {
            continue;
        };
        if let Some(existing) = index.get(field).and_then(|&i| st.fields.get(i)) {
            if existing.size != size {
                layout_ok = false;
                cx.sink.error_hint(
                    attr_pos(&raw.attrs, "field"),
                    format!(
                        "field `{field}` is {} bytes for an earlier counter but `{}` values are {size} bytes",
                        existing.size, p.type_name
                    ),
                    "counters share a field only when their types have the same size",
                );
            }
            continue;
        }
        let sn = names::snake(field);
        if let Some(other) = snake_names.insert((p.struct_index, sn.clone()), field.clone()) {
            layout_ok = false;
            cx.sink.error_hint(
                attr_pos(&raw.attrs, "field"),
                format!("fields `{other}` and `{field}` both become the rust field `{sn}`"),
                "rename one of them",
            );
            continue;
        }
        index.insert(field.clone(), st.fields.len());
        st.fields.push(Field {
            name: field.clone(),
            size,
            offset: 0,
        });
    }
    for (i, st) in structs.iter_mut().enumerate() {
        let mut offset: u32 = 0;
        let mut align: u32 = 1;
        for f in &mut st.fields {
            offset = offset.next_multiple_of(f.size);
            f.offset = offset;
            offset += f.size;
            align = align.max(f.size);
        }
        st.size = offset.next_multiple_of(align);
        if st.size > u32::from(u16::MAX) {
            layout_ok = false;
            cx.sink.error(
                a.pos,
                format!(
                    "struct `{}` is {} bytes; `PCW_COUNTER_DESCRIPTOR.Offset` cannot reach past 65535",
                    st.name, st.size
                ),
            );
        }
        if !implicit && st.fields.is_empty() && cx.kernel {
            cx.sink.warning(
                struct_pos.get(i).copied().unwrap_or(a.pos),
                format!("struct `{}` is not used by any counter", st.name),
            );
        }
    }

    let parsed: Vec<Parsed> = parsed.into_iter().collect::<Option<Vec<_>>>()?;
    if !layout_ok || !struct_ok {
        return None;
    }
    let mut counters = Vec::new();
    for p in parsed {
        let field = p.field.clone().unwrap_or_default();
        let offset = field_index
            .get(usize::from(p.struct_index))
            .and_then(|index| index.get(&field))
            .and_then(|&i| structs.get(usize::from(p.struct_index))?.fields.get(i))
            .map_or(0, |f| f.offset);
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
    Some(CounterSet {
        counters: v1_order(&counters),
        guid: guid?,
        symbol: symbol?,
        uri: uri?,
        name: st.name?,
        name_id: st.name_id?,
        description: st.description?,
        description_id: st.description_id?,
        instances: instances?,
        structs,
        pos: a.pos,
    })
}

/// The counters in V1 order: manifest order, except that each base counter (the follower a
/// fraction, average or multi-timer names with `baseID`/`multiCounterID`) is moved right after
/// the first counter naming it. A V2 consumer pairs a counter with its base by id, so a
/// manifest may declare the base anywhere; a V1 consumer reads the base from the counter
/// definition that directly follows, so every V1 emitter (descriptors, the perf DLL's tables)
/// takes this order. Bases nobody names stay where they are.
fn v1_order(counters: &[Counter]) -> Vec<Counter> {
    let follower = |c: &Counter| {
        c.counter_type.required_follower()?;
        if c.counter_type.required_base() == Some(CounterType::MultiBase) {
            c.multi_counter_id.or(c.base_id)
        } else {
            c.base_id
        }
    };
    let named: HashSet<u16> = counters.iter().filter_map(follower).collect();
    let moved = |c: &Counter| c.counter_type.is_base() && named.contains(&c.id);
    // Id → the first moved counter with it.
    let mut moved_by_id: HashMap<u16, &Counter> = HashMap::new();
    for c in counters.iter().filter(|c| moved(c)) {
        moved_by_id.entry(c.id).or_insert(c);
    }
    let mut out: Vec<Counter> = Vec::with_capacity(counters.len());
    // The ids in `out`.
    let mut placed: HashSet<u16> = HashSet::with_capacity(counters.len());
    for c in counters.iter().filter(|c| !moved(c)) {
        out.push(c.clone());
        placed.insert(c.id);
        if let Some(base) = follower(c)
            && !placed.contains(&base)
            && let Some(b) = moved_by_id.get(&base)
        {
            out.push((*b).clone());
            placed.insert(base);
        }
    }
    // Nothing is lost, whatever the references say.
    for c in counters {
        if placed.insert(c.id) {
            out.push(c.clone());
        }
    }
    out
}

/// One counter checked on its own (cross-references come later).
struct Parsed {
    id: u32,
    pos: Pos,
    symbol: Option<String>,
    uri: String,
    name: Option<String>,
    name_id: Option<u32>,
    description: Option<String>,
    description_id: Option<u32>,
    counter_type: CounterType,
    type_name: &'static str,
    size: Option<u32>,
    detail_level: DetailLevel,
    default_scale: i32,
    aggregate: Option<Aggregate>,
    base_id: Option<u32>,
    perf_time_id: Option<u32>,
    perf_freq_id: Option<u32>,
    multi_counter_id: Option<u32>,
    attributes: Vec<CounterAttribute>,
    struct_index: u16,
    field: Option<String>,
}

#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
fn counter(
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
    let detail_level = cx.required(a, "counter", "detailLevel").and_then(|d| {
        let lvl = DetailLevel::from_manifest_name(&d.value);
        if lvl.is_none() {
            cx.sink.error_hint(
                d.pos,
                format!("invalid `detailLevel` value `{}`", d.value),
                "expected `standard` or `advanced`",
            );
        }
        lvl
    });
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
            let v = cx.one_of(g, "aggregate", &Aggregate::ALL, Aggregate::as_str);
            (v, v.is_some())
        }
        None => (None, true),
    };

    let is_base = counter_type.is_some_and(CounterType::is_base);
    let mut attributes = Vec::new();
    for at in &c.attributes {
        if let Some(v) = cx.one_of(
            at,
            "counterAttribute",
            &CounterAttribute::ALL,
            CounterAttribute::as_str,
        ) {
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

/// `baseID` / `multiCounterID` / `perfTimeID` / `perfFreqID` and base placement.
#[allow(
    clippy::too_many_lines,
    reason = "one rule after another, in schema order"
)]
fn references(cx: &mut Cx<'_>, raws: &[RawCounter], parsed: &[Option<Parsed>]) {
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

/// The display-text rule ([`crate::text`]): every attribute whose text reaches an output, with
/// `$(string.…)` resolved, holds no character the policy refuses. One error per attribute, at its
/// value, naming the first such character.
fn display_texts(raw: &RawManifest, sink: &mut Sink) {
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
        // `name` and `description` may refer to the string table; the others are literal.
        let reference = a
            .value
            .strip_prefix("$(string.")
            .and_then(|r| r.strip_suffix(')'))
            .filter(|_| matches!(*name, "name" | "description"));
        let (value, via) = match reference {
            // An unknown string is reported where references are resolved.
            Some(id) => match strings.get(id) {
                Some(s) => (s.value.as_str(), format!(" (string `{id}`)")),
                None => continue,
            },
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

/// What a `userMode` provider cannot declare: value blocks (`<structs>`), a kernel-mode layout
/// that Perflib's user-mode API has no use for (it sets counters by id). One error per
/// `<structs>` element.
fn user_mode_rules(raw: &RawManifest, kernel: bool, sink: &mut Sink) {
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

/// What the V1 tables ([`crate::Config::v1_tables`]) refuse and every other output accepts, as
/// warnings: counters of one set naming different object time or frequency counters. (A base
/// shared by two counters, the other thing V1 cannot express, is warned about where the second
/// counter names it.)
fn v1_rules(manifest: &Manifest, sink: &mut Sink) {
    let file = sink.file().to_path_buf();
    for d in crate::v1::check_time_bases(manifest, &file) {
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
