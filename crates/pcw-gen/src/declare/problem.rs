// SPDX-License-Identifier: MIT OR Apache-2.0
//! A declaration's problem, at the declaration token it is about; as a `compile_error!` for the
//! macro and as a [`Diagnostic`] (`file:line:column`) for build scripts and `pcw`.

use std::path::Path;

use proc_macro2::{Span, TokenStream};

use crate::diag::{Diagnostic, Severity};
use crate::model::Pos;

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
        Diagnostic::new(
            Severity::Error,
            file.to_path_buf(),
            Pos::new(
                u32::try_from(start.line).unwrap_or(u32::MAX),
                u32::try_from(start.column)
                    .unwrap_or(u32::MAX)
                    .saturating_add(1),
            ),
            self.message,
            self.hint,
        )
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
    Diagnostic::new(
        Severity::Error,
        file.to_path_buf(),
        Pos::new(1, 1),
        message,
        None,
    )
}
