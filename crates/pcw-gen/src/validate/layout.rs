// SPDX-License-Identifier: MIT OR Apache-2.0
//! A counterset's value blocks: the `<struct>`s it declares (or the one implicit struct), and
//! their layout — fields in order of first appearance among the counters, sized by type and
//! naturally aligned, shared by counters naming the same field.

use std::collections::HashMap;

use crate::model::{Field, Pos, Struct};
use crate::names;
use crate::parse::RawSet;

use super::context::{Cx, attr_pos};
use super::counter::Parsed;

/// The value blocks of one counterset.
pub(super) struct Blocks {
    /// In `StructIndex` order; fields are filled by [`Blocks::lay_out`].
    pub(super) structs: Vec<Struct>,
    /// Struct name → index in `structs`.
    pub(super) names: HashMap<String, u16>,
    /// Where each declared `<struct>` is.
    pos: Vec<Pos>,
    /// Whether every `<struct>` is well-formed.
    pub(super) ok: bool,
    /// Whether the set declares no `<structs>` (one implicit struct).
    pub(super) implicit: bool,
    /// Per struct, field name → index in its `fields`.
    field_index: Vec<HashMap<String, usize>>,
}

/// The structs `s` declares, checked (one `<structs>`, each with a name and a type that are C
/// symbols, no name twice); the implicit struct, named `symbol`, when it declares none.
pub(super) fn declared(cx: &mut Cx<'_>, s: &RawSet, symbol: Option<&str>) -> Blocks {
    for extra in s.structs_elements.iter().skip(1) {
        cx.sink
            .error(*extra, "a `<counterSet>` may contain only one `<structs>`");
    }
    let mut structs: Vec<Struct> = Vec::new();
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
        struct_names.insert(symbol.unwrap_or_default().to_owned(), 0);
        structs.push(Struct {
            index: 0,
            name: symbol.unwrap_or_default().to_owned(),
            c_type: None,
            fields: Vec::new(),
            size: 0,
        });
    }
    let field_index = vec![HashMap::new(); structs.len()];
    Blocks {
        structs,
        names: struct_names,
        pos: struct_pos,
        ok: struct_ok,
        implicit: s.structs.is_empty(),
        field_index,
    }
}

impl Blocks {
    /// Lays out the fields the counters name (`parsed`, in order with `s.counters`): a field
    /// shared by counters of different sizes, two fields with the same Rust name and a struct
    /// past 65535 bytes are errors, a declared struct no counter uses a warning. Whether the
    /// layout holds.
    pub(super) fn lay_out(
        &mut self,
        cx: &mut Cx<'_>,
        s: &RawSet,
        parsed: &[Option<Parsed>],
    ) -> bool {
        let a = &s.attrs;
        let mut layout_ok = true;
        let mut snake_names: HashMap<(u16, String), String> = HashMap::new();
        for (raw, p) in s.counters.iter().zip(parsed) {
            let Some(p) = p else { continue };
            let (Some(size), Some(field)) = (p.size, &p.field) else {
                continue;
            };
            let (Some(st), Some(index)) = (
                self.structs.get_mut(usize::from(p.struct_index)),
                self.field_index.get_mut(usize::from(p.struct_index)),
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
        for (i, st) in self.structs.iter_mut().enumerate() {
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
            if !self.implicit && st.fields.is_empty() && cx.kernel {
                cx.sink.warning(
                    self.pos.get(i).copied().unwrap_or(a.pos),
                    format!("struct `{}` is not used by any counter", st.name),
                );
            }
        }
        layout_ok
    }

    /// The offset of `field` in struct `struct_index` (0 for one that is not laid out).
    pub(super) fn offset(&self, struct_index: u16, field: &str) -> u32 {
        self.field_index
            .get(usize::from(struct_index))
            .and_then(|index| index.get(field))
            .and_then(|&i| self.structs.get(usize::from(struct_index))?.fields.get(i))
            .map_or(0, |f| f.offset)
    }
}
