// SPDX-License-Identifier: MIT OR Apache-2.0
//! The checks of a declaration that need its derived manifest: the manifest rules' diagnostics
//! at the declaration's tokens, in its words, and the sizes of its fields.

use super::model::Declaration;
use super::problem::Problem;
use super::xml::Derived;
use crate::diag::{Diagnostic, Severity};
use crate::input::Input;

/// The derived manifest's diagnostics (every warning of the manifest rules an error; the
/// fleet-readiness advice of `pcw lint` is not checked here) and the declaration's own
/// checks that need the resolved model: a field's type must be the counter type's size.
pub(crate) fn check(decl: &Declaration, derived: &Derived) -> Vec<Problem> {
    let analysis = crate::analyze(&Input::new("derived.man", &derived.text));
    let mut found: Vec<Problem> = analysis
        .diagnostics
        .iter()
        .map(|d| at_line(decl, derived, d))
        .collect();
    let Some(manifest) = analysis.manifest else {
        return found;
    };
    for (set, dset) in manifest.provider.countersets.iter().zip(&decl.sets) {
        for c in &set.counters {
            let Some(dc) = dset.counters.iter().find(|dc| {
                dc.elem
                    .get("id")
                    .is_some_and(|i| i.value == c.id.to_string())
            }) else {
                continue;
            };
            let want = if c.size == 8 { "u64" } else { "u32" };
            if (dc.ty.value == "u32" || dc.ty.value == "u64") && dc.ty.value != want {
                found.push(Problem::hint(
                    dc.ty.span,
                    format!(
                        "`{}` is `{}`, but `{}` values are {} bytes",
                        dc.field.value, dc.ty.value, c.type_name, c.size
                    ),
                    format!("declare it `{}: {want}`", dc.field.value),
                ));
            }
        }
    }
    found
}

/// A diagnostic of the derived manifest at the declaration token its line came from, in the
/// declaration's words.
fn at_line(decl: &Declaration, derived: &Derived, d: &Diagnostic) -> Problem {
    let span = usize::try_from(d.pos.line)
        .ok()
        .and_then(|l| l.checked_sub(1))
        .and_then(|l| derived.lines.get(l))
        .copied()
        .unwrap_or(decl.module.span);
    let mut p = Problem {
        span,
        message: in_declaration_words(&d.message),
        hint: d.hint.as_deref().map(in_declaration_words),
    };
    if d.severity == Severity::Warning {
        p.message = format!(
            "{} (a warning of the manifest rules is an error in a declaration)",
            p.message
        );
    }
    p
}

/// A manifest diagnostic's backticked attribute and element names as the declaration spells
/// them (`nameID` → `name_id`, `<counterSet>` → `#[counterset]`).
fn in_declaration_words(text: &str) -> String {
    let mut out = text.to_owned();
    for (elem, attr) in [
        ("<counterSet>", "#[counterset]"),
        ("<counter>", "#[counter]"),
        ("<provider>", "#[provider]"),
        ("<struct>", "`structs(…)`"),
    ] {
        out = out.replace(&format!("`{elem}`"), &format!("`{attr}`"));
    }
    for (key, name) in super::syntax::manifest_names() {
        if key != name {
            out = out.replace(&format!("`{name}`"), &format!("`{key}`"));
        }
    }
    out.replace("`providerType`", "`kernel_mode` or `user_mode`")
}
