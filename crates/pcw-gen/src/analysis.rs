// SPDX-License-Identifier: MIT OR Apache-2.0
//! The one analysis of a manifest — bytes decoded, XML parsed, every rule checked — and lint,
//! which adds the fleet-readiness warnings.

use crate::diag::{Diagnostic, Sink};
use crate::input::Input;
use crate::model::Manifest;
use crate::parse::RawManifest;
use crate::{fleet, parse, source, validate};

/// The result of reading one manifest: the resolved model when there is no error, and every
/// diagnostic (errors and warnings) in file order.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("contoso_v11.man", include_str!("../tests/manifests/contoso_v11.man"));
/// let analysis = pcw_gen::analyze(&input);
/// assert!(!analysis.has_errors());
/// assert_eq!(analysis.manifest.map(|m| m.provider.countersets.len()), Some(3));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Analysis {
    /// The validated manifest; `None` when any error was reported.
    pub manifest: Option<Manifest>,
    /// All diagnostics, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Analysis {
    /// Whether any diagnostic is an error.
    ///
    /// # Examples
    ///
    /// ```
    /// let analysis = pcw_gen::analyze(&pcw_gen::Input::new("empty.man", ""));
    /// assert!(analysis.has_errors() && analysis.manifest.is_none());
    /// ```
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses and validates a manifest (any supported encoding): what `pcw lint` reports apart from
/// the fleet-readiness warnings, and the verdict every generator takes. Pure: the input's path
/// only labels the diagnostics. Never panics, whatever the input (fuzzed and property-tested).
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("t.man", "<instrumentationManifest/>");
/// let analysis = pcw_gen::analyze(&input);
/// assert_eq!(
///     analysis.diagnostics[0].message,
///     "the manifest has no `<counters>` section"
/// );
/// ```
pub fn analyze(input: &Input<'_>) -> Analysis {
    resolve(input).0
}

/// The analysis and the raw tree it was made from.
fn resolve(input: &Input<'_>) -> (Analysis, Option<RawManifest>) {
    let mut sink = Sink::new(input.path());
    let raw =
        source::decode(input.bytes(), &mut sink).and_then(|text| parse::parse(&text, &mut sink));
    let manifest = raw
        .as_ref()
        .and_then(|raw| validate::validate(raw, &mut sink));
    let manifest = if sink.has_errors() { None } else { manifest };
    let analysis = Analysis {
        manifest,
        diagnostics: sink.into_sorted(),
    };
    (analysis, raw)
}

/// What `pcw lint` reports for a manifest: every diagnostic of [`analyze`] and, for a manifest
/// without errors, the fleet-readiness warnings of [`crate::fleet`] (what PDH paths and the
/// exporters will make of its names), in file order.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
/// let lint = pcw_gen::lint(&input);
/// // Advice, not errors: the manifest generates.
/// assert!(!lint.is_empty() && !lint.iter().any(pcw_gen::Diagnostic::is_error));
/// ```
pub fn lint(input: &Input<'_>) -> Vec<Diagnostic> {
    let (analysis, raw) = resolve(input);
    let mut diagnostics = analysis.diagnostics;
    if let (Some(manifest), Some(raw)) = (&analysis.manifest, &raw) {
        diagnostics.extend(fleet::check(manifest, raw, input.path()));
        diagnostics.sort_by(|a, b| a.pos.cmp(&b.pos).then(b.severity.cmp(&a.severity)));
    }
    diagnostics
}

/// The warnings about the metric names `exporter` gets for a manifest's counters (those of
/// [`lint`] for that exporter: names that clash, come out empty or are refused), with the
/// analysis of the manifest; no warnings when the analysis has errors. What `pcw export`
/// checks before it writes a configuration.
///
/// # Examples
///
/// ```
/// use pcw_gen::fleet::Exporter;
///
/// let input = pcw_gen::Input::new(
///     "fabrikam_v2.man",
///     include_str!("../tests/manifests/fabrikam_v2.man"),
/// );
/// let (analysis, warnings) = pcw_gen::metric_name_warnings(&input, Exporter::OpenTelemetry);
/// assert!(analysis.manifest.is_some());
/// assert_eq!(warnings, []);
/// ```
pub fn metric_name_warnings(
    input: &Input<'_>,
    exporter: fleet::Exporter,
) -> (Analysis, Vec<Diagnostic>) {
    let (analysis, raw) = resolve(input);
    let warnings = match (&analysis.manifest, &raw) {
        (Some(manifest), Some(raw)) => {
            fleet::metric_name_check(manifest, raw, input.path(), exporter)
        }
        _ => Vec::new(),
    };
    (analysis, warnings)
}
