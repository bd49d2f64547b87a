// SPDX-License-Identifier: MIT OR Apache-2.0
//! A declaration as read: the manifest attributes it gives, already in the manifest's
//! spelling, each with the token it came from.

use proc_macro2::Span;

/// A value and the token it came from.
#[derive(Clone, Debug)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// One manifest attribute: its manifest name, its value as the manifest writes it, and where
/// the declaration gives it (or, for a default, the item it is the default of).
#[derive(Clone, Debug)]
pub(crate) struct Attr {
    pub(crate) name: &'static str,
    pub(crate) value: String,
    pub(crate) span: Span,
}

/// An element's attributes and the token that stands for the element itself.
#[derive(Clone, Debug)]
pub(crate) struct Element {
    pub(crate) span: Span,
    pub(crate) attrs: Vec<Attr>,
}

impl Element {
    pub(crate) fn new(span: Span) -> Self {
        Self {
            span,
            attrs: Vec::new(),
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Adds `name` unless the declaration gave it, at the element's own token.
    pub(crate) fn default(&mut self, name: &'static str, value: impl FnOnce() -> String) {
        if self.get(name).is_none() {
            let span = self.span;
            self.attrs.push(Attr {
                name,
                value: value(),
                span,
            });
        }
    }
}

/// `counters! { #[provider(…)] pub mod NAME { … } }`.
#[derive(Clone, Debug)]
pub(crate) struct Declaration {
    /// `NAME`: the generated module.
    pub(crate) module: Spanned<String>,
    /// `<provider>`.
    pub(crate) provider: Element,
    /// `runtime = "…"`: where the generated code finds its runtime.
    pub(crate) runtime: Option<Spanned<String>>,
    /// `silo_neutral`: register with `PcwRegistrationSiloNeutral`.
    pub(crate) silo_neutral: bool,
    /// The countersets, in declaration order.
    pub(crate) sets: Vec<Set>,
}

/// `#[counterset(…)] struct SYMBOL { … }`.
#[derive(Clone, Debug)]
pub(crate) struct Set {
    /// `<counterSet>`; its span is `SYMBOL`'s.
    pub(crate) elem: Element,
    /// `structs(NAME = TYPE, …)`: `<struct>` elements.
    pub(crate) structs: Vec<Element>,
    /// The counters, in declaration order.
    pub(crate) counters: Vec<Counter>,
}

/// `#[counter(…)] FIELD: TYPE`.
#[derive(Clone, Debug)]
pub(crate) struct Counter {
    /// `<counter>`; its span is `FIELD`'s.
    pub(crate) elem: Element,
    /// `<counterAttribute name>`s, in declaration order.
    pub(crate) attributes: Vec<Spanned<String>>,
    /// `FIELD`.
    pub(crate) field: Spanned<String>,
    /// `TYPE`: `u32` or `u64`.
    pub(crate) ty: Spanned<String>,
}
