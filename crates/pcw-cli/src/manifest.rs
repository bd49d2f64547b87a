// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw lint`, `pcw gen` and `pcw inspect`: the counter manifest compiler (pcw-gen) on the
//! command line, CTRPP's job for Rust drivers.
//!
//! * `pcw lint FILE…` prints every diagnostic of every file (`file:line:column: error: …`) and
//!   exits 1 if any is an error, 0 otherwise (warnings alone pass).
//! * `pcw gen FILE [-o OUT.rs] [--rc F] [--res F] [--ini F --symbols F]` writes the generated
//!   Rust module (to stdout without `-o`) and, on request, the `.rc` string table (also compiled,
//!   as a `.res`) and the lodctr `.ini` and
//!   symbol `.h`. Files are written only when their content changed. Warnings go to stderr;
//!   a manifest with errors writes nothing and exits 1.
//! * `pcw inspect FILE [--json]` prints the resolved layout: per counterset its name, GUID and
//!   instance kind, per counter its id, name, manifest type, V1 counter type, size, struct index
//!   and byte offset. `--json` prints the `pcw-gen-inspect` document whose schema the pcw-gen
//!   crate documents; tools and tests rely on it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use pcw_gen::{Config, Diagnostic, Error as GenError, Inspect};

use crate::Failure;

/// Arguments of `pcw lint`.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Counter manifests (`.man`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Arguments of `pcw gen`.
#[derive(Debug, clap::Args)]
pub struct GenArgs {
    /// The counter manifest.
    file: PathBuf,
    /// Write the Rust module here instead of stdout.
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// Write the `.rc` string table (counter names and help for lodctr) here.
    #[arg(long)]
    rc: Option<PathBuf>,
    /// Write the same string table compiled, as a `.res` file that `link.exe` and `lld-link`
    /// take as input, here.
    #[arg(long)]
    res: Option<PathBuf>,
    /// Write the lodctr `.ini` (UTF-16LE) here; needs `--symbols`.
    #[arg(long, requires = "symbols")]
    ini: Option<PathBuf>,
    /// Write the lodctr symbol `.h` here; needs `--ini`.
    #[arg(long, requires = "ini")]
    symbols: Option<PathBuf>,
    /// Path of the runtime module the generated code calls: the pcw-rt crate by default, or a
    /// driver's own FFI facade.
    #[arg(long, default_value = "::pcw_rt")]
    runtime_path: String,
    /// Register with `PcwRegistrationSiloNeutral` (`PCW_VERSION_2` only).
    #[arg(long)]
    silo_neutral: bool,
    /// Name of the generated module (default: the manifest's file stem).
    #[arg(long)]
    module: Option<String>,
}

/// Arguments of `pcw inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// The counter manifest.
    file: PathBuf,
    /// Print the `pcw-gen-inspect` JSON document.
    #[arg(long)]
    json: bool,
}

/// Errors of the manifest commands (all exit 1, as CTRPP does on a bad manifest).
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The manifest has errors (already printed to stderr, each with `file:line:column`).
    #[error("{errors} error(s) in the manifest; {what}")]
    Invalid {
        /// Number of errors.
        errors: usize,
        /// What happened as a result.
        what: &'static str,
    },
    /// Anything pcw-gen reports other than diagnostics (I/O, configuration).
    #[error("{0}")]
    Gen(GenError),
    /// Writing the output failed.
    #[error("cannot write {what}: {source}")]
    Write {
        /// What was being written.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Failure for ManifestError {
    fn exit_code(&self) -> u8 {
        1
    }
}

/// Prints the diagnostics of a refused manifest and turns pcw-gen's error into ours.
fn refused(e: GenError, what: &'static str) -> ManifestError {
    match e {
        GenError::Manifest { diagnostics } => {
            print_diagnostics(&diagnostics);
            ManifestError::Invalid {
                errors: diagnostics.iter().filter(|d| d.is_error()).count(),
                what,
            }
        }
        other => ManifestError::Gen(other),
    }
}

/// Every diagnostic, rendered by pcw-gen (`file:line:column: severity: message`, hints and a
/// count line), to stderr.
fn print_diagnostics(diagnostics: &[Diagnostic]) {
    if !diagnostics.is_empty() {
        eprint!("{}", pcw_gen::render_all(diagnostics));
    }
}

fn write_stdout(text: &str) -> Result<(), ManifestError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(ManifestError::Write {
            what: "standard output".to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// `pcw lint`.
///
/// # Errors
/// [`ManifestError::Diagnostics`] when any file has an error.
pub fn lint(args: &LintArgs) -> Result<(), ManifestError> {
    let diagnostics = pcw_gen::lint_files(&args.files);
    print_diagnostics(&diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        return Err(ManifestError::Invalid {
            errors,
            what: "see the diagnostics above",
        });
    }
    Ok(())
}

/// `pcw gen`.
///
/// # Errors
/// Diagnostics, configuration and write failures.
pub fn gen_files(args: &GenArgs) -> Result<(), ManifestError> {
    let mut config = Config::new();
    config
        .runtime_path(args.runtime_path.clone())
        .silo_neutral(args.silo_neutral)
        .cargo_protocol(false);
    if let Some(m) = &args.module {
        config.module_name(m.clone());
    }
    let generated = config
        .generate_file(&args.file)
        .map_err(|e| refused(e, "nothing was written"))?;
    print_diagnostics(&generated.warnings);
    let outputs: [(&Option<PathBuf>, &[u8]); 4] = [
        (&args.rc, generated.rc.as_bytes()),
        (&args.res, &generated.res),
        (&args.ini, &generated.ini),
        (&args.symbols, generated.symbols_h.as_bytes()),
    ];
    for (path, bytes) in outputs {
        if let Some(path) = path {
            write_file(path, bytes)?;
        }
    }
    match &args.out {
        Some(path) => write_file(path, generated.rust.as_bytes()),
        None => write_stdout(&generated.rust),
    }
}

fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), ManifestError> {
    pcw_gen::write_if_changed(path, bytes)
        .map(|_| ())
        .map_err(|e| refused(e, "nothing was written"))
}

/// `pcw inspect`.
///
/// # Errors
/// Diagnostics and I/O failures.
pub fn inspect(args: &InspectArgs) -> Result<(), ManifestError> {
    let doc = Config::new()
        .inspect_file(&args.file)
        .map_err(|e| refused(e, "there is no layout to show"))?;
    if args.json {
        write_stdout(&(doc.to_json() + "\n"))
    } else {
        write_stdout(&render_text(&doc))
    }
}

/// The layout as a table a person reads.
fn render_text(doc: &Inspect) -> String {
    let mut out = String::new();
    let p = &doc.provider;
    let _ = writeln!(
        out,
        "provider {} {} ({}), schema {}",
        p.name, p.guid, p.provider_type, doc.schema_version
    );
    for set in &doc.countersets {
        let _ = writeln!(
            out,
            "\ncounterset \"{}\" {} instances={} module={}",
            set.name, set.guid, set.instances, set.rust_module
        );
        let _ = writeln!(
            out,
            "  {:>5}  {:<32} {:<36} {:>10}  {:>4}  {:>6}  {:>6}",
            "id", "name", "type", "v1 type", "size", "struct", "offset"
        );
        for c in &set.counters {
            let offset = c
                .offset
                .map_or_else(|| "bound".to_owned(), |o| o.to_string());
            let _ = writeln!(
                out,
                "  {:>5}  {:<32} {:<36} 0x{:08x}  {:>4}  {:>6}  {:>6}",
                c.id,
                c.name.as_deref().unwrap_or("-"),
                c.type_name,
                c.counter_type,
                c.size,
                c.struct_index,
                offset
            );
        }
    }
    out
}
