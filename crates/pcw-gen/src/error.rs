// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-gen's one error type.

use crate::diag::Diagnostic;

/// Everything that can go wrong when reading, generating or writing.
///
/// `Debug` prints the same text as `Display`, so that `fn main() -> Result<(), pcw_gen::Error>`
/// in a build script shows the rendered diagnostics rather than a struct dump.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("broken.man", "<counters/>");
/// let Err(pcw_gen::Error::Manifest { diagnostics }) = pcw_gen::Config::new().generate(&input)
/// else {
///     panic!("a manifest without a provider generates nothing");
/// };
/// assert!(diagnostics.iter().any(pcw_gen::Diagnostic::is_error));
/// ```
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The manifest could not be read (missing, a directory, larger than
    /// [`pcw_io::input::MANIFEST`] allows, an I/O error).
    #[error(transparent)]
    Read(#[from] pcw_io::InputError),
    /// An output could not be written (or is also the manifest, or is named twice); no output
    /// was changed.
    #[error(transparent)]
    Write(#[from] pcw_io::OutputError),
    /// Standard output, where a build script's `cargo:` lines go, could not be written.
    #[error(transparent)]
    Stream(#[from] pcw_io::StreamError),
    /// The manifest has errors (all of them are here, warnings included).
    #[error("{}", Diagnostic::render_all(diagnostics))]
    Manifest {
        /// Every diagnostic of the file.
        diagnostics: Vec<Diagnostic>,
    },
    /// A `counters!` declaration has problems (every one, at `file:line:column` of the Rust
    /// source; see [`crate::declare`]).
    #[error("{}", Diagnostic::render_all(diagnostics))]
    Declaration {
        /// Every problem of the file.
        diagnostics: Vec<Diagnostic>,
    },
    /// Neither [`crate::Config::out_dir`] nor `OUT_DIR` says where to write.
    #[error(
        "no output directory: `OUT_DIR` is not set (call `Config::out_dir` outside build scripts)"
    )]
    NoOutDir,
    /// A build script's `cargo:` directive would have to name this path (the manifest or
    /// declaration source, or a string table to link), and it cannot: a directive ends at the
    /// line's end, so a path holding a line break would end it early and make the rest of the
    /// path a line of its own, and a path that is not UTF-8 would be named wrongly. Nothing was
    /// written.
    #[error(
        "`{}` cannot be named in a cargo directive: {}; rename it (or call \
         `Config::cargo_protocol(false)` outside build scripts)",
        pcw_io::text::shown(path),
        if path.to_str().is_some() { "it holds a line break, and a build script's `cargo:` lines end at one" } else { "it is not UTF-8" }
    )]
    CargoPath {
        /// The path.
        path: std::path::PathBuf,
    },
    /// [`crate::Config::module_name`] is not a plain Rust identifier.
    #[error(
        "module name `{}` is not a rust identifier such as `counters`",
        crate::text::visible(.0)
    )]
    ModuleName(String),
    /// The name the lodctr `.ini` gives as `drivername=` and the V1 tables as `SERVICE` (the
    /// driver's service key) cannot be one: [`crate::Config::driver_name`]'s, or when none was
    /// given, the manifest's file stem.
    #[error(
        "`{}`{} is not a service name: {reason}; {}",
        crate::text::visible(name),
        if *defaulted { " (the manifest's file stem)" } else { "" },
        if *defaulted { "name the driver's service (`pcw gen --driver-name`, `Config::driver_name`)" } else { "give the name of the driver's service key" }
    )]
    DriverName {
        /// The name.
        name: String,
        /// Whether it is the manifest's file stem, no name having been given.
        defaulted: bool,
        /// What is wrong with it.
        reason: String,
    },
    /// [`crate::Config::runtime_path`] is not a Rust path.
    #[error(
        "runtime path `{}` is not a rust path such as `crate::pcw_rt`",
        crate::text::visible(.0)
    )]
    RuntimePath(String),
    /// [`crate::Config::bind_struct`] names a struct the manifest does not have.
    #[error(
        "`bind_struct(\"{}\", …)` matches no struct of the manifest; known keys: {known}",
        crate::text::visible(key)
    )]
    UnknownBinding {
        /// The key given.
        key: String,
        /// The keys that exist, backticked and comma-separated.
        known: String,
    },
    /// [`crate::Config::bind_struct`] was given something that is not a Rust type path.
    #[error(
        "`bind_struct(\"{}\", \"{p}\")`: `{p}` is not a rust type path",
        crate::text::visible(key),
        p = crate::text::visible(path)
    )]
    BindingPath {
        /// The struct key.
        key: String,
        /// The path given.
        path: String,
    },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
