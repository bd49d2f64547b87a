// SPDX-License-Identifier: MIT OR Apache-2.0
//! A declaration's problems: its own (syntax, value kinds) and those of its derived manifest,
//! each at the declaration token it is about; as `compile_error!`s for the macro and as
//! [`Diagnostic`]s (`file:line:column`) for build scripts and `pcw`.

use std::path::Path;

use proc_macro2::{Span, TokenStream};

use super::model::Declaration;
use super::xml::Derived;
use crate::diag::{Diagnostic, Pos, Severity};

/// One problem of a declaration.
#[derive(Clone, Debug)]
pub(crate) struct Problem {
    pub(crate) span: Span,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

impl Problem {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
            hint: None,
        }
    }

    pub(crate) fn hint(span: Span, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// `compile_error!("message\n= hint: …")` at the problem's token.
    pub(crate) fn compile_error(&self) -> TokenStream {
        let text = match &self.hint {
            Some(h) => format!("{}\n= hint: {h}", self.message),
            None => self.message.clone(),
        };
        syn::Error::new(self.span, text).to_compile_error()
    }

    /// The problem at `file:line:column` (spans carry positions outside a macro).
    pub(crate) fn diagnostic(self, file: &Path) -> Diagnostic {
        let start = self.span.start();
        Diagnostic {
            severity: Severity::Error,
            file: file.to_path_buf(),
            pos: Pos::new(
                u32::try_from(start.line).unwrap_or(u32::MAX),
                u32::try_from(start.column)
                    .unwrap_or(u32::MAX)
                    .saturating_add(1),
            ),
            message: self.message,
            hint: self.hint,
        }
    }
}

/// Every error of a `syn` parse, at its tokens.
pub(crate) fn from_syn(e: syn::Error) -> Vec<Problem> {
    e.into_iter()
        .map(|e| Problem::new(e.span(), e.to_string()))
        .collect()
}

/// An error about a whole file, at 1:1.
pub(crate) fn at_start(file: &Path, message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        file: file.to_path_buf(),
        pos: Pos::new(1, 1),
        message,
        hint: None,
    }
}

/// The derived manifest's diagnostics (every warning of the manifest rules an error; the
/// fleet-readiness advice of `pcw lint` is not checked here) and the declaration's own
/// checks that need the resolved model: a field's type must be the counter type's size.
pub(crate) fn check(decl: &Declaration, derived: &Derived) -> Vec<Problem> {
    let path = Path::new("derived.man");
    let bytes = derived.text.as_bytes();
    let analysis = crate::analyze(path, bytes);
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
