// SPDX-License-Identifier: MIT OR Apache-2.0
//! The declaration of a manifest (`pcw gen --to-rust`): the resolved model written back in the
//! declaration's syntax, everything explicit that the manifest made explicit (GUIDs, `uri`s,
//! symbols, resource ids of a 2.0 manifest, `resourceBase`), counters in the manifest's
//! document order (so the value structs' fields come out in the same order).

use std::fmt::Write as _;

use super::syntax::snake;
use crate::model::{Callback, Counter, Counterset, DetailLevel, Manifest, SchemaVersion};

/// A symbol as a declaration token: keywords that can be raw get `r#`; the rest are written as
/// they are (the declaration reads any identifier token, `self` and `_` included).
fn ident(s: &str) -> String {
    let escaped = crate::names::escape(s);
    if escaped.starts_with("r#") {
        escaped
    } else {
        s.to_owned()
    }
}

/// A Rust string literal holding exactly `s`.
fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// Writes the declaration of `m` as module `module`.
pub(crate) fn write(m: &Manifest, module: &str) -> String {
    let p = &m.provider;
    let v2 = m.schema_version == SchemaVersion::V2_0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// The counters of provider `{}`, declared in Rust (written by `pcw gen --to-rust`).",
        crate::text::visible(&p.name).replace('\n', " ")
    );
    out.push_str("pcw_declare::counters! {\n    #[provider(\n");
    let item = |out: &mut String, depth: usize, text: String| {
        let _ = writeln!(out, "{}{text},", "    ".repeat(depth));
    };
    item(&mut out, 2, format!("name = {}", lit(&p.name)));
    item(&mut out, 2, format!("guid = \"{}\"", p.guid));
    item(&mut out, 2, snake(p.provider_type.as_str()));
    item(
        &mut out,
        2,
        format!("application_identity = {}", lit(&p.application_identity)),
    );
    if p.callback != Callback::Default {
        item(
            &mut out,
            2,
            format!("callback = {}", snake(p.callback.as_str())),
        );
    }
    if let Some(s) = &p.symbol {
        item(&mut out, 2, format!("symbol = {}", ident(s)));
    }
    if let Some(b) = p.resource_base {
        item(&mut out, 2, format!("resource_base = {b}"));
    }
    let _ = writeln!(out, "    )]\n    pub mod {module} {{");
    for (i, set) in p.countersets.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        write_set(&mut out, set, v2);
    }
    out.push_str("    }\n}\n");
    out
}

fn write_set(out: &mut String, set: &Counterset, v2: bool) {
    let line = |out: &mut String, text: String| {
        let _ = writeln!(out, "            {text},");
    };
    out.push_str("        #[counterset(\n");
    line(out, format!("name = {}", lit(&set.name)));
    line(out, format!("description = {}", lit(&set.description)));
    line(out, format!("guid = \"{}\"", set.guid));
    line(out, format!("uri = {}", lit(&set.uri)));
    line(
        out,
        format!("instances = {}", snake(set.instances.as_str())),
    );
    if v2 {
        line(out, format!("name_id = {}", set.name_id));
        line(out, format!("description_id = {}", set.description_id));
    }
    let declared: Vec<_> = set.structs.iter().filter(|s| s.c_type.is_some()).collect();
    if !declared.is_empty() {
        let list: Vec<String> = declared
            .iter()
            .map(|s| {
                format!(
                    "{} = {}",
                    ident(&s.name),
                    ident(s.c_type.as_deref().unwrap_or_default())
                )
            })
            .collect();
        line(out, format!("structs({})", list.join(", ")));
    }
    let _ = writeln!(out, "        )]\n        struct {} {{", ident(&set.symbol));
    let mut counters: Vec<&Counter> = set.counters.iter().collect();
    counters.sort_by_key(|c| c.pos);
    for c in counters {
        write_counter(out, set, c, v2);
    }
    out.push_str("        }\n");
}

fn write_counter(out: &mut String, set: &Counterset, c: &Counter, v2: bool) {
    let mut keys = vec![format!("id = {}", c.id), format!("type = {}", c.type_name)];
    if let Some(n) = &c.name {
        keys.push(format!("name = {}", lit(n)));
    }
    if let Some(d) = &c.description {
        keys.push(format!("description = {}", lit(d)));
    }
    keys.push(format!("uri = {}", lit(&c.uri)));
    if let Some(s) = &c.symbol {
        keys.push(format!("symbol = {}", ident(s)));
    }
    if v2 {
        if let Some(i) = c.name_id {
            keys.push(format!("name_id = {i}"));
        }
        if let Some(i) = c.description_id {
            keys.push(format!("description_id = {i}"));
        }
    }
    if c.detail_level != DetailLevel::Standard {
        keys.push(format!("detail_level = {}", snake(c.detail_level.as_str())));
    }
    if c.default_scale != 0 {
        keys.push(format!("default_scale = {}", c.default_scale));
    }
    if let Some(a) = c.aggregate {
        keys.push(format!("aggregate = {}", a.as_str()));
    }
    for (key, id) in [
        ("base_id", c.base_id),
        ("perf_time_id", c.perf_time_id),
        ("perf_freq_id", c.perf_freq_id),
        ("multi_counter_id", c.multi_counter_id),
    ] {
        if let Some(id) = id {
            keys.push(format!("{key} = {id}"));
        }
    }
    if let Some(st) = set
        .structs
        .iter()
        .find(|s| s.index == c.struct_index && s.c_type.is_some())
    {
        keys.push(format!("struct = {}", ident(&st.name)));
    }
    for a in &c.attributes {
        keys.push(snake(a.as_str()));
    }
    out.push_str("            #[counter(\n");
    for k in keys {
        let _ = writeln!(out, "                {k},");
    }
    let ty = if c.size == 8 { "u64" } else { "u32" };
    let _ = writeln!(
        out,
        "            )]\n            {}: {ty},",
        ident(&c.field)
    );
}
