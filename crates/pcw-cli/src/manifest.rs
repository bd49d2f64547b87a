// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw lint`, `pcw gen` and `pcw inspect`: the counter manifest compiler (pcw-gen) on the
//! command line, CTRPP's job for Rust drivers.
//!
//! * `pcw lint FILE…` prints every diagnostic of every file (`file:line:column: error: …`) and
//!   exits 1 if any is an error, 0 otherwise (warnings alone pass).
//! * `pcw gen FILE [-o OUT.rs] [--rc F] [--res F] [--ini F --symbols F]` writes the generated
//!   Rust module (to stdout without `-o`) and, on request, the `.rc` string table (also compiled,
//!   as a `.res`) and the lodctr `.ini` and
//!   symbol `.h`. All of them or none: every output is checked first (none may be the manifest
//!   or another output), then staged and renamed into place together, and a file whose content
//!   did not change is left untouched. Warnings go to stderr; a manifest with errors writes
//!   nothing and exits 1.
//! * `pcw gen --to-rust FILE.man [-o OUT.rs]` writes the `counters!` declaration equivalent
//!   to the manifest (the migration to counters declared in Rust; to stdout without `-o`).
//! * `pcw gen --from-rust FILE.rs [-o OUT.man] [--rc F] [--res F] [--ini F --symbols F]` derives
//!   the manifest from the one `counters!` declaration of a Rust file, as a build script's
//!   `Config::compile_declarations` does, without a build (for review and CI): `-o` (else
//!   stdout) gets the manifest, the other flags what they get for a manifest. A declaration
//!   with problems writes nothing and exits 1, each problem at `file:line:column`.
//! * `pcw inspect FILE [--json]` prints the resolved layout: per counterset its name, GUID and
//!   instance kind, per counter its id, name, manifest type, V1 counter type, size, struct index
//!   and byte offset. `--json` prints the `pcw-gen-inspect` document whose schema the pcw-gen
//!   crate documents; tools and tests rely on it.

use std::fmt::Write as _;
use std::path::PathBuf;

use pcw_gen::model::{Inspect, Pos};
use pcw_gen::{Config, Diagnostic, Error as GenError, Input};

use crate::Failure;

/// Arguments of `pcw lint`.
#[derive(Debug, clap::Args)]
pub(crate) struct LintArgs {
    /// Counter manifests (`.man`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Arguments of `pcw gen`.
#[derive(Debug, clap::Args)]
pub(crate) struct GenArgs {
    /// The counter manifest (with `--from-rust`: a Rust file with a `counters!` declaration).
    file: PathBuf,
    /// Write the `counters!` declaration equivalent to the manifest (to `-o`, else stdout)
    /// instead of the generated module.
    #[arg(long, conflicts_with_all = ["from_rust", "rc", "res", "ini", "symbols", "module", "silo_neutral", "driver_name"])]
    to_rust: bool,
    /// Read FILE as Rust and derive the manifest of its `counters!` declaration (to `-o`, else
    /// stdout); `--rc`, `--res`, `--ini` and `--symbols` write that manifest's outputs.
    #[arg(long, conflicts_with_all = ["module", "silo_neutral"])]
    from_rust: bool,
    /// Write the Rust module here instead of stdout (`--to-rust`: the declaration;
    /// `--from-rust`: the derived manifest).
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
    /// The driver's service name, which the lodctr `.ini` gives as `drivername=` (default: the
    /// manifest's file stem; with `--from-rust`, the declaration's module name).
    #[arg(long)]
    driver_name: Option<String>,
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
pub(crate) struct InspectArgs {
    /// The counter manifest.
    file: PathBuf,
    /// Print the `pcw-gen-inspect` JSON document.
    #[arg(long)]
    json: bool,
}

/// Errors of the manifest commands (all exit 1, as CTRPP does on a bad manifest).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ManifestError {
    /// The manifest has errors (already printed to stderr, each with `file:line:column`).
    #[error("{errors} error(s) in the manifest; {what}")]
    Invalid {
        /// Number of errors.
        errors: usize,
        /// What happened as a result.
        what: &'static str,
    },
    /// `--from-rust` on a file without exactly one `counters!` declaration.
    #[error(
        "`--from-rust` needs a file with exactly one `counters!` declaration; this one has {0}"
    )]
    Declarations(usize),
    /// Anything pcw-gen reports other than diagnostics (I/O, configuration).
    #[error("{0}")]
    Gen(GenError),
    /// An output file could not be written (nothing was).
    #[error(transparent)]
    Output(#[from] pcw_io::OutputError),
    /// Standard output or error failed.
    #[error(transparent)]
    Stream(#[from] pcw_io::StreamError),
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
            if let Err(e) = print_diagnostics(&diagnostics) {
                return e;
            }
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
fn print_diagnostics(diagnostics: &[Diagnostic]) -> Result<(), ManifestError> {
    if !diagnostics.is_empty() {
        pcw_io::console::err(&Diagnostic::render_all(diagnostics))?;
    }
    Ok(())
}

/// `pcw lint`.
///
/// # Errors
/// [`ManifestError::Invalid`] when any file has an error.
pub(crate) fn lint(args: &LintArgs) -> Result<(), ManifestError> {
    let mut diagnostics = Vec::new();
    for file in &args.files {
        match Input::read(file) {
            Ok(input) => diagnostics.extend(pcw_gen::lint(&input)),
            // A file that cannot be read is one error among the others, at its start.
            Err(GenError::Read(e)) => {
                diagnostics.push(Diagnostic::error(file, Pos::new(1, 1), e.describe()));
            }
            Err(e) => return Err(ManifestError::Gen(e)),
        }
    }
    print_diagnostics(&diagnostics)?;
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
pub(crate) fn gen_files(args: &GenArgs) -> Result<(), ManifestError> {
    if args.to_rust {
        return to_rust(args);
    }
    if args.from_rust {
        return from_rust(args);
    }
    let mut config = Config::new();
    config
        .runtime_path(args.runtime_path.clone())
        .silo_neutral(args.silo_neutral)
        .cargo_protocol(false);
    if let Some(m) = &args.module {
        config.module_name(m.clone());
    }
    if let Some(name) = symbol_file_name(args) {
        config.symbol_file(name);
    }
    if let Some(name) = &args.driver_name {
        config.driver_name(name.clone());
    }
    let input = Input::read(&args.file).map_err(ManifestError::Gen)?;
    let generated = config
        .generate(&input)
        .map_err(|e| refused(e, "nothing was written"))?;
    // Every output checked before anything is printed or written: none may be the manifest or
    // another output.
    let mut outputs = pcw_io::Outputs::new();
    outputs.input(&args.file);
    let files: [(&Option<PathBuf>, Vec<u8>); 5] = [
        (&args.rc, generated.rc.into_bytes()),
        (&args.res, generated.res),
        (&args.ini, generated.ini),
        (&args.symbols, generated.symbols_h.into_bytes()),
        (&args.out, generated.rust.clone().into_bytes()),
    ];
    for (path, bytes) in files {
        if let Some(path) = path {
            outputs.add(path, bytes)?;
        }
    }
    print_diagnostics(&generated.warnings)?;
    outputs.commit()?;
    if args.out.is_none() {
        pcw_io::console::out(&generated.rust)?;
    }
    Ok(())
}

/// The `.ini`'s `symbolfile=`: the name `--symbols` writes (lodctr finds it beside the `.ini`).
fn symbol_file_name(args: &GenArgs) -> Option<String> {
    args.symbols
        .as_deref()
        .and_then(std::path::Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
}

/// `pcw gen --to-rust`: the declaration of a manifest.
fn to_rust(args: &GenArgs) -> Result<(), ManifestError> {
    let input = Input::read(&args.file).map_err(ManifestError::Gen)?;
    let declaration =
        pcw_gen::declare::to_rust(&input).map_err(|e| refused(e, "nothing was written"))?;
    write_or_print(args, args.out.as_deref(), declaration)
}

/// `pcw gen --from-rust`: the manifest (and its outputs) of a declaration.
fn from_rust(args: &GenArgs) -> Result<(), ManifestError> {
    let input = Input::read(&args.file).map_err(ManifestError::Gen)?;
    let analysis = pcw_gen::declare::analyze_declarations(&input);
    if analysis.has_errors() {
        print_diagnostics(&analysis.diagnostics)?;
        return Err(ManifestError::Invalid {
            errors: analysis.diagnostics.len(),
            what: "nothing was written",
        });
    }
    let [declared] = analysis.declared.as_slice() else {
        return Err(ManifestError::Declarations(analysis.declared.len()));
    };
    let mut config = declared.config();
    if let Some(name) = symbol_file_name(args) {
        config.symbol_file(name);
    }
    if let Some(name) = &args.driver_name {
        config.driver_name(name.clone());
    }
    let generated = config
        .generate(&declared.input())
        .map_err(|e| refused(e, "nothing was written"))?;
    let mut outputs = pcw_io::Outputs::new();
    outputs.input(&args.file);
    let files: [(&Option<PathBuf>, Vec<u8>); 5] = [
        (&args.rc, generated.rc.into_bytes()),
        (&args.res, generated.res),
        (&args.ini, generated.ini),
        (&args.symbols, generated.symbols_h.into_bytes()),
        (&args.out, declared.manifest.clone().into_bytes()),
    ];
    for (path, bytes) in files {
        if let Some(path) = path {
            outputs.add(path, bytes)?;
        }
    }
    // What `pcw gen` reports of a manifest, no more: the fleet-readiness advice is `pcw lint`'s
    // (run on the derived manifest, it names its lines), and a location here would name lines
    // of a file that is not the input.
    print_diagnostics(&generated.warnings)?;
    outputs.commit()?;
    if args.out.is_none() {
        pcw_io::console::out(&declared.manifest)?;
    }
    Ok(())
}

/// Writes `text` to `out` (never over the input), or prints it.
fn write_or_print(
    args: &GenArgs,
    out: Option<&std::path::Path>,
    text: String,
) -> Result<(), ManifestError> {
    match out {
        Some(path) => {
            let mut outputs = pcw_io::Outputs::new();
            outputs.input(&args.file);
            outputs.add(path, text.into_bytes())?;
            outputs.commit()?;
            Ok(())
        }
        None => Ok(pcw_io::console::out(&text)?),
    }
}

/// `pcw inspect`.
///
/// # Errors
/// Diagnostics and I/O failures.
pub(crate) fn inspect(args: &InspectArgs) -> Result<(), ManifestError> {
    let input = Input::read(&args.file).map_err(ManifestError::Gen)?;
    let doc = Config::new()
        .inspect(&input)
        .map_err(|e| refused(e, "there is no layout to show"))?;
    let text = if args.json {
        doc.to_json() + "\n"
    } else {
        render_text(&doc)
    };
    Ok(pcw_io::console::out(&text)?)
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
