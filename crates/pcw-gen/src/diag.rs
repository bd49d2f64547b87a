// SPDX-License-Identifier: MIT OR Apache-2.0
//! Manifest diagnostics: the error/warning contract shared by `pcw lint`, `pcw gen` and
//! `build.rs` (the project's convention, `serde_json`'s style: 1-based line and column, lowercase
//! message, tokens in backticks, plus file and hint).

use std::borrow::Cow;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::Pos;

/// How bad a diagnostic is. Ordered: an error is worse than a warning.
///
/// # Examples
///
/// ```
/// use pcw_gen::Severity;
///
/// assert!(Severity::Error > Severity::Warning);
/// assert_eq!(Severity::Warning.to_string(), "warning");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// The manifest is usable, but something is probably not what the author meant.
    Warning,
    /// The manifest cannot be compiled.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Warning => "warning",
            Self::Error => "error",
        })
    }
}

/// One problem found in a manifest (or in a `counters!` declaration), at `file:line:column`.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("t.man", "<counters/>");
/// let diagnostics = pcw_gen::analyze(&input).diagnostics;
/// assert!(diagnostics[0].is_error());
/// assert_eq!((diagnostics[0].pos.line, diagnostics[0].pos.column), (1, 1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The manifest the problem is in (as given by the caller).
    pub file: PathBuf,
    /// Where the problem is (the attribute value, or the element's `<`).
    pub pos: Pos,
    /// What is wrong: lowercase, tokens in backticks, no trailing period.
    pub message: String,
    /// What to do about it, when there is something useful to say.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error without a hint: how a tool reports, in the same form, a problem of a file that
    /// is not the manifest's own (`pcw lint` for a file it cannot read).
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::Diagnostic;
    /// use pcw_gen::model::Pos;
    ///
    /// let d = Diagnostic::error("gone.man", Pos::new(1, 1), "cannot read the manifest");
    /// assert_eq!(d.render(), "gone.man:1:1: error: cannot read the manifest");
    /// ```
    pub fn error(file: impl Into<PathBuf>, pos: Pos, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, file.into(), pos, message.into(), None)
    }

    /// Every diagnostic is made here: a manifest's text quoted in the message or the hint may
    /// hold a line break, a bidi control or another character display text refuses, written
    /// as `\u{…}` ([`crate::text::visible`]) so that the diagnostic keeps its lines. The
    /// characters display text accepts (non-breaking spaces, joiners) stay as they are.
    pub(crate) fn new(
        severity: Severity,
        file: PathBuf,
        pos: Pos,
        message: String,
        hint: Option<String>,
    ) -> Self {
        let one_line = |text: String| match crate::text::visible(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(escaped) => escaped,
        };
        Self {
            severity,
            file,
            pos,
            message: one_line(message),
            hint: hint.map(one_line),
        }
    }

    /// Is this an error (as opposed to a warning)?
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::{Diagnostic, model::Pos};
    ///
    /// assert!(Diagnostic::error("x.man", Pos::new(1, 1), "broken").is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders the diagnostic like a compiler does:
    /// `file:line:col: error: message` and an indented `= hint:` line when there is a hint.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("t.man", "<a>\n <b></c></a>");
    /// let diagnostics = pcw_gen::analyze(&input).diagnostics;
    /// assert_eq!(
    ///     diagnostics[0].render(),
    ///     "t.man:2:5: error: invalid xml: expected `b` tag, not `c`"
    /// );
    /// ```
    pub fn render(&self) -> String {
        // `new` escaped the message and the hint already; a diagnostic read back from JSON or
        // changed by its owner did not pass there, and escaping twice changes nothing.
        let mut out = format!(
            "{}:{}:{}: {}: {}",
            pcw_io::text::shown(&self.file),
            self.pos.line,
            self.pos.column,
            self.severity,
            crate::text::visible(&self.message)
        );
        if let Some(hint) = &self.hint {
            out.push_str("\n  = hint: ");
            out.push_str(&crate::text::visible(hint));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl Diagnostic {
    /// Renders many diagnostics, one block per diagnostic, followed by a summary line (nothing
    /// for none): what `pcw lint` prints.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::{Diagnostic, model::Pos};
    ///
    /// let all = [Diagnostic::error("x.man", Pos::new(2, 3), "broken")];
    /// assert_eq!(
    ///     Diagnostic::render_all(&all),
    ///     "x.man:2:3: error: broken\n1 error, 0 warnings\n"
    /// );
    /// assert_eq!(Diagnostic::render_all(&[]), "");
    /// ```
    pub fn render_all(diagnostics: &[Self]) -> String {
        let mut out = String::new();
        for d in diagnostics {
            out.push_str(&d.render());
            out.push('\n');
        }
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let warnings = diagnostics.len() - errors;
        if !diagnostics.is_empty() {
            let _ = writeln!(
                out,
                "{errors} error{}, {warnings} warning{}",
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" }
            );
        }
        out
    }
}

/// Collects diagnostics for one file while it is parsed and validated.
#[derive(Debug)]
pub(crate) struct Sink {
    file: PathBuf,
    pub(crate) items: Vec<Diagnostic>,
}

impl Sink {
    pub(crate) fn new(file: &Path) -> Self {
        Self {
            file: file.to_path_buf(),
            items: Vec::new(),
        }
    }

    pub(crate) fn push(
        &mut self,
        severity: Severity,
        pos: Pos,
        message: String,
        hint: Option<String>,
    ) {
        self.items.push(Diagnostic::new(
            severity,
            self.file.clone(),
            pos,
            message,
            hint,
        ));
    }

    pub(crate) fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(Severity::Error, pos, message.into(), None);
    }

    pub(crate) fn error_hint(
        &mut self,
        pos: Pos,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.push(Severity::Error, pos, message.into(), Some(hint.into()));
    }

    pub(crate) fn warning(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(Severity::Warning, pos, message.into(), None);
    }

    pub(crate) fn warning_hint(
        &mut self,
        pos: Pos,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.push(Severity::Warning, pos, message.into(), Some(hint.into()));
    }

    /// The file the diagnostics are about.
    pub(crate) fn file(&self) -> &Path {
        &self.file
    }

    pub(crate) fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    /// Diagnostics in file order (line, column), errors before warnings at the same place.
    pub(crate) fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items
            .sort_by(|a, b| a.pos.cmp(&b.pos).then(b.severity.cmp(&a.severity)));
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_has_file_line_column_and_hint() {
        let d = Diagnostic {
            severity: Severity::Error,
            file: PathBuf::from("x.man"),
            pos: Pos::new(3, 7),
            message: "unknown counter type `perf_foo`".into(),
            hint: Some("use one of ...".into()),
        };
        assert_eq!(
            d.render(),
            "x.man:3:7: error: unknown counter type `perf_foo`\n  = hint: use one of ..."
        );
        assert!(Diagnostic::render_all(&[d]).ends_with("1 error, 0 warnings\n"));
    }
}
