// SPDX-License-Identifier: MIT OR Apache-2.0
//! What every rule reads an attribute through: the context of one manifest's validation (its
//! diagnostics, string table, schema version and provider kind) and the readers of required
//! attributes, numbers, symbols, GUIDs and enumerated values, each reporting what is wrong at
//! the attribute.

use std::collections::BTreeMap;
use std::str::FromStr;

use crate::diag::Sink;
use crate::model::{Guid, Pos, SchemaVersion, UnknownValue};
use crate::names;
use crate::parse::{Attr, Attrs};

/// The validation of one manifest.
pub(super) struct Cx<'a> {
    pub(super) sink: &'a mut Sink,
    /// The `$(string.…)` table.
    pub(super) strings: &'a BTreeMap<String, Attr>,
    /// `schemaVersion`, once read.
    pub(super) version: Option<SchemaVersion>,
    /// Whether the provider is a kernel-mode one (the default until `providerType` is read).
    pub(super) kernel: bool,
}

impl Cx<'_> {
    pub(super) fn required<'r>(
        &mut self,
        attrs: &'r Attrs,
        elem: &str,
        name: &str,
    ) -> Option<&'r Attr> {
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
    pub(super) fn uint(&mut self, a: &Attr, name: &str) -> Option<u32> {
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

    pub(super) fn symbol(&mut self, a: &Attr, name: &str) -> bool {
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

    pub(super) fn guid(&mut self, a: &Attr, name: &str) -> Option<Guid> {
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

    /// An enumerated value (`instances`, `aggregate`, …), spelled as its table in
    /// [`crate::model`] spells it; an error naming the values otherwise.
    pub(super) fn value<T: FromStr<Err = UnknownValue>>(&mut self, a: &Attr) -> Option<T> {
        match a.value.parse() {
            Ok(v) => Some(v),
            Err(e) => {
                let e: UnknownValue = e;
                self.sink.error_hint(a.pos, e.to_string(), e.hint());
                None
            }
        }
    }
}

/// `UInt32Type` without reporting: decimal or `0x` + 1..8 hex digits.
pub(super) fn parse_uint(value: &str) -> Option<u32> {
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

/// The id of a whole-value string reference, `x` of `$(string.x)`.
pub(super) fn string_ref(value: &str) -> Option<&str> {
    value
        .strip_prefix("$(string.")
        .and_then(|r| r.strip_suffix(')'))
}

/// A name as consumers see it (string reference resolved), without reporting.
pub(super) fn resolved(strings: &BTreeMap<String, Attr>, value: &str) -> Option<String> {
    match string_ref(value) {
        Some(id) => strings.get(id).map(|s| s.value.clone()),
        None => Some(value.to_owned()),
    }
}

/// Where attribute `name` of an element is, or the element when it has none.
pub(super) fn attr_pos(attrs: &Attrs, name: &str) -> Pos {
    attrs.get(name).map_or(attrs.pos, |a| a.pos)
}
