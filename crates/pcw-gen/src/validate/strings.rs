// SPDX-License-Identifier: MIT OR Apache-2.0
//! Names and descriptions: `$(string.…)` references resolved through the string table, the
//! length limits of a name and of a string resource, and the resource id of each string —
//! `nameID`/`descriptionID` as written (schema 2.0), or numbered from `resourceBase` (1.1).

use crate::model::SchemaVersion;
use crate::parse::{Attr, Attrs};

use super::context::{Cx, string_ref};

/// Longest `name` the schema allows.
const MAX_NAME_CHARS: usize = 1023;
/// Longest text a string resource holds: its length is a 16-bit count of UTF-16 units.
const MAX_STRING_UNITS: usize = 0xFFFF;
/// Largest string resource id: `STRINGTABLE` ids are 16 bits.
const MAX_STRING_ID: u32 = 0xFFFF;
/// First resource id pcw-gen assigns in a schema 1.1 manifest without `resourceBase`.
pub(super) const DEFAULT_RESOURCE_BASE: u32 = 1000;

impl Cx<'_> {
    /// Resolves `$(string.id)` through the string table; checks the length limit.
    pub(super) fn text(&mut self, a: &Attr, name: &str) -> Option<String> {
        let v = a.value.as_str();
        let resolved = if let Some(id) = string_ref(v) {
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
}

/// Name and description with their resource ids, per schema version.
pub(super) struct Strings {
    pub(super) name: Option<String>,
    pub(super) name_id: Option<u32>,
    pub(super) description: Option<String>,
    pub(super) description_id: Option<u32>,
}

pub(super) fn strings(
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
