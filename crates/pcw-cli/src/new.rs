// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw new`: a new driver crate with counters, in the shape windows-drivers-rs's `cargo wdk
//! new` gives a driver, whose `cargo test` passes on Linux at once.
//!
//! ```text
//! pcw new PATH [--wdm] [--manifest FILE] [--pcw-rs DIR] [--force]
//! ```
//!
//! The last component of `PATH` is the crate's name (lower-case words joined by `-` or `_`).
//! The crate is a WDM driver: `NAME.man` (a fresh manifest with new GUIDs counting the control
//! device's requests, or with `--manifest` a copy of an existing CTRPP manifest — porting a C
//! driver, say — with a `Publish` skeleton per counterset that offers one zero-valued
//! instance), `build.rs` (pcw-gen, and wdk-build on Windows), `src/` (`DriverEntry` and
//! `DriverUnload`, a control device, the `Publish` impls, the WDK's IRP layouts),
//! `tests/` through pcw-harness, the cargo-make `Makefile.toml` and `NAME.inx`. Its pcw-rs
//! dependencies are this `pcw`'s version, or with `--pcw-rs DIR` the crates of that checkout.
//!
//! KMDF (`--kmdf`) and UMDF are refused, with what differs: a KMDF driver's counters are the
//! same `Publish` impls, but its `DriverEntry` goes through WDF (`WdfDriverCreate`,
//! `EvtDriverDeviceAdd`), which the harness's kernel does not implement.
//!
//! The directory is written all or nothing (pcw-io's `Tree`): an existing one is refused
//! unless `--force` is given, and then replaced whole.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use pcw_gen::model::{Inspect, InspectCounterset, Instances, ProviderType};

use crate::Failure;

/// Arguments of `pcw new`.
#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "the driver-model flags of `cargo wdk new`, and `--force`"
)]
pub(crate) struct Args {
    /// Where to create the crate; its last component is the crate's name.
    path: PathBuf,
    /// A WDM driver (the default).
    #[arg(long)]
    wdm: bool,
    /// A KMDF driver: refused, with what differs.
    #[arg(long, conflicts_with = "wdm")]
    kmdf: bool,
    /// A UMDF driver: refused (a user-mode driver's counters are Perflib V2's, pcw-um).
    #[arg(long, conflicts_with_all = ["wdm", "kmdf"])]
    umdf: bool,
    /// Start from this counter manifest (copied as `NAME.man`) instead of a fresh one.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Depend on the pcw-rs crates of this checkout by path instead of by version.
    #[arg(long = "pcw-rs", value_name = "DIR")]
    pcw_rs: Option<PathBuf>,
    /// Replace an existing directory.
    #[arg(long)]
    force: bool,
}

/// Why `pcw new` failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A bad name or option.
    #[error("{0}")]
    Usage(String),
    /// The manifest could not be read.
    #[error(transparent)]
    Input(#[from] pcw_io::InputError),
    /// The manifest has errors.
    #[error("{0}")]
    Manifest(#[from] pcw_gen::Error),
    /// The crate could not be written (nothing was).
    #[error(transparent)]
    Write(#[from] pcw_io::TreeError),
    /// Standard error failed.
    #[error(transparent)]
    Stream(#[from] pcw_io::StreamError),
}

impl Failure for Error {
    fn exit_code(&self) -> u8 {
        crate::EXIT_FAILURE
    }
}

/// The template's files (`crates/pcw-cli/templates/driver/`) by the path they are written to,
/// with `{{…}}` placeholders.
const TEMPLATE: &[(&str, &str)] = &[
    // Not `Cargo.toml` in the template directory, which would make it a package of its own
    // (and `cargo package` would leave it out of pcw-cli's).
    (
        "Cargo.toml",
        include_str!("../templates/driver/Cargo.toml.in"),
    ),
    ("build.rs", include_str!("../templates/driver/build.rs")),
    (
        "Makefile.toml",
        include_str!("../templates/driver/Makefile.toml"),
    ),
    ("README.md", include_str!("../templates/driver/README.md")),
    (".gitignore", include_str!("../templates/driver/gitignore")),
    (
        ".cargo/config.toml",
        include_str!("../templates/driver/cargo-config.toml"),
    ),
    ("src/lib.rs", include_str!("../templates/driver/src/lib.rs")),
    (
        "src/kernel.rs",
        include_str!("../templates/driver/src/kernel.rs"),
    ),
    (
        "src/stats.rs",
        include_str!("../templates/driver/src/stats.rs"),
    ),
    ("src/wdm.rs", include_str!("../templates/driver/src/wdm.rs")),
    (
        "tests/driver.rs",
        include_str!("../templates/driver/tests/driver.rs"),
    ),
];
/// The INF, written as `NAME.inx`.
const INX: &str = include_str!("../templates/driver/driver.inx");
/// The fresh manifest, written as `NAME.man`.
const FRESH_MANIFEST: &str = include_str!("../templates/driver/manifest.man");
/// The fresh manifest's test of its counters.
const FRESH_TEST: &str = include_str!("../templates/driver/tests/requests.rs");

/// The names a crate name gives.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Names {
    /// The package name as given (`my-driver`).
    name: String,
    /// The library, manifest and generated module name (`my_driver`).
    snake: String,
    /// `MY_DRIVER`.
    upper: String,
    /// The device name (`MyDriver`).
    device: String,
    /// The counterset and service display name (`My Driver`).
    display: String,
}

/// The standard library's crates, which cargo refuses as package names. (Rust's keywords,
/// which a library name cannot be either, are pcw-gen's: [`pcw_gen::Config::is_module_name`].)
const STD_CRATES: &[&str] = &["std", "core", "alloc", "test"];

/// The library names of the crates a driver crate depends on, directly or not (pcw-rs's, and
/// windows-sys's and the WDK's of the template): a driver crate named like one would not build
/// (two crates of one name in its graph).
const DEPENDENCIES: &[&str] = &[
    "windows_sys",
    "wdk",
    "wdk_sys",
    "wdk_alloc",
    "wdk_panic",
    "wdk_build",
    "pcw_core",
    "pcw_io",
    "pcw_rt",
    "pcw_gen",
    "pcw_declare",
    "pcw_um",
    "pcw_sim",
    "pcw_pdh",
    "pcw_loader",
    "pcw_harness",
    "pcw_driver",
    "pcw_tidal",
    "pcw_cli",
];

/// Whether Windows reserves `name` (lower case) for a device, whatever the extension after it.
fn is_reserved_on_windows(name: &str) -> bool {
    matches!(name, "con" | "prn" | "aux" | "nul")
        || ["com", "lpt"].iter().any(|port| {
            name.strip_prefix(port)
                .is_some_and(|n| n.len() == 1 && n.bytes().all(|b| (b'1'..=b'9').contains(&b)))
        })
}

/// The longest crate name `pcw new` takes (crates.io's limit).
const MAX_NAME: usize = 64;

impl Names {
    /// The names of a crate called `name`: lower-case ASCII words of letters and digits, the
    /// first starting with a letter, joined by single `-` or `_`.
    fn new(name: &str) -> Result<Self, Error> {
        let words: Vec<&str> = name.split(['-', '_']).collect();
        let valid = words.iter().all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        }) && name.starts_with(|c: char| c.is_ascii_lowercase());
        let snake = words.join("_");
        // Its length is told only of a name of the right characters (ASCII: a character a
        // byte); any other is told what a name may hold, below.
        if valid && name.len() > MAX_NAME {
            return Err(Error::Usage(format!(
                "`{name}` cannot name a driver crate: it has {} characters, and a crate name at \
                 most {MAX_NAME}",
                name.len()
            )));
        }
        if DEPENDENCIES.contains(&snake.as_str()) {
            return Err(Error::Usage(format!(
                "`{name}` cannot name a driver crate: it is the name of a crate the driver \
                 depends on"
            )));
        }
        if snake == "counters" {
            return Err(Error::Usage(
                "`counters` cannot name a driver crate: it is the name of the crate's module of \
                 counters, which its tests import"
                    .to_owned(),
            ));
        }
        if is_reserved_on_windows(&snake) {
            return Err(Error::Usage(format!(
                "`{name}` cannot name a driver crate: Windows reserves it for a device (CON, \
                 PRN, AUX, NUL, COM1 to COM9, LPT1 to LPT9), so no `{name}.sys`, `.inx` or \
                 `.man` can be made"
            )));
        }
        if !valid
            || !pcw_gen::Config::is_module_name(&snake)
            || STD_CRATES.contains(&snake.as_str())
        {
            return Err(Error::Usage(format!(
                "`{}` cannot name a driver crate: use lower-case words of letters and digits \
                 joined by `-` or `_`, starting with a letter (for example `my-driver`), and not \
                 a rust keyword",
                pcw_gen::text::visible(name)
            )));
        }
        let capital = |w: &&str| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_ascii_uppercase().to_string() + cs.as_str())
                .unwrap_or_default()
        };
        Ok(Self {
            name: name.to_owned(),
            upper: snake.to_ascii_uppercase(),
            snake,
            device: words.iter().map(capital).collect(),
            display: words.iter().map(capital).collect::<Vec<_>>().join(" "),
        })
    }
}

/// A fresh GUID (version 4, random from the standard library's hash seeds, the time and the
/// process), lower-case and braced as manifests write them.
fn fresh_guid() -> String {
    let half = |salt: u64| {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    };
    let (hi, lo) = (half(1), half(2));
    let hi = (hi & !0xF000) | 0x4000; // version 4
    let lo = (lo & !(0xC0 << 56)) | (0x80 << 56); // variant 10
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// The `{{key}}` placeholders of a template filled in.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

/// `--pcw-rs DIR` as the new crate's manifest names it: absolute (cargo reads a relative path
/// from the new crate's directory, not from where `pcw new` ran), and a pcw-rs checkout.
fn checkout(dir: &Path) -> Result<PathBuf, Error> {
    let absolute = std::path::absolute(dir)
        .map_err(|e| Error::Usage(format!("`--pcw-rs {}`: {e}", pcw_io::text::shown(dir))))?;
    let marker = absolute.join("crates").join("pcw-rt").join("Cargo.toml");
    if !marker.is_file() {
        return Err(Error::Usage(format!(
            "`--pcw-rs {}` is not a pcw-rs checkout: there is no `crates/pcw-rt/Cargo.toml` in it",
            pcw_io::text::shown(dir)
        )));
    }
    Ok(absolute)
}

/// A dependency on pcw-rs crate `name`: this `pcw`'s version, or the checkout's path.
fn dependency(pcw_rs: Option<&Path>, name: &str, features: &str) -> String {
    let features = if features.is_empty() {
        String::new()
    } else {
        format!(", features = [{features}]")
    };
    match pcw_rs {
        Some(root) => {
            let path = root.join("crates").join(name);
            format!(
                "{{ path = {}{features} }}",
                toml_string(&path.to_string_lossy())
            )
        }
        None => format!(
            "{{ version = \"{}\"{features} }}",
            env!("CARGO_PKG_VERSION")
        ),
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Rust identifier in `UpperCamelCase` from a generated module name.
fn camel(module: &str) -> String {
    module
        .trim_start_matches("r#")
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_ascii_uppercase().to_string() + cs.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The fresh manifest's publisher: the control device's request counts, one instance per kind.
fn fresh_publisher(out: &mut String, set: &InspectCounterset, module: &str, publisher: &str) {
    let field = set
        .structs
        .first()
        .and_then(|s| s.fields.first())
        .map_or_else(|| "requests".to_owned(), |f| f.rust_name.clone());
    let _ = writeln!(
        out,
        "///\n/// One instance per kind of request the control device counts ([`crate::stats`]).\n\
         pub struct {publisher};\n\n\
         /// The instances' names in UTF-16; the instance id is the index.\n\
         static NAMES: [&[u16]; 3] = [\n    &crate::utf16::<6>(\"Create\"),\n    &crate::utf16::<5>(\"Close\"),\n    &crate::utf16::<14>(\"Device Control\"),\n];\n\n\
         impl Publish<{module}::Set> for {publisher} {{\n    \
             fn visit(&self, visitor: &mut Visitor<'_, {module}::Set>) -> ControlFlow<()> {{\n        \
                 let counts = [\n            &crate::stats::CREATES,\n            &crate::stats::CLOSES,\n            &crate::stats::DEVICE_CONTROLS,\n        ];\n        \
                 for (id, (name, count)) in (0u32..).zip(NAMES.into_iter().zip(counts)) {{\n            \
                     visitor.instance(name, id, |_: CounterMask| {module}::Values {{\n                \
                         {field}: count.get(),\n            }})?;\n        }}\n        \
                 ControlFlow::Continue(())\n    }}\n}}\n"
    );
}

/// A skeleton publisher for a counterset of an existing manifest: one zero-valued instance.
fn skeleton_publisher(out: &mut String, kind: Instances, module: &str, publisher: &str) {
    let (name, units) = if kind.has_instances() && kind != Instances::GlobalAggregate {
        (
            "one instance (`Default`)",
            "&crate::utf16::<7>(\"Default\")",
        )
    } else {
        ("its one instance", "&[]")
    };
    let _ = writeln!(
        out,
        "///\n/// Offer the driver's instances of this counterset in `visit`: each with a UTF-16\n\
         /// name, an id unique in the set and a closure computing its values (it runs only\n\
         /// for instances a query selects). As made by `pcw new`, {name}, with every\n\
         /// value zero.\n\
         pub struct {publisher};\n\n\
         impl Publish<{module}::Set> for {publisher} {{\n    \
             fn visit(&self, visitor: &mut Visitor<'_, {module}::Set>) -> ControlFlow<()> {{\n        \
                 visitor.instance({units}, 0, |_: CounterMask| {{\n            \
                     <{module}::Set as pcw_rt::Counterset>::Values::default()\n        }})\n    }}\n}}\n"
    );
}

/// `src/counters.rs`: the generated module, a `Publish` impl per counterset, and `register`/
/// `unregister` for all of them. `fresh`: the fresh manifest's one set, publishing the
/// control device's request counts.
fn counters_rs(inspect: &Inspect, names: &Names, fresh: bool) -> String {
    let snake = &names.snake;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! The driver's counters: the countersets of `{snake}.man`, compiled by pcw-gen at build\n\
         //! time, one `Publish` impl each, registered together from `DriverEntry` and dropped at\n\
         //! unload.\n\n\
         use core::cell::UnsafeCell;\n\
         use core::ops::ControlFlow;\n\n\
         use pcw_rt::{{CounterMask, Publish, Visitor}};\n\n\
         /// The register/add layer pcw-gen generated from `{snake}.man`.\n\
         pub mod generated {{\n    include!(concat!(env!(\"OUT_DIR\"), \"/{snake}.rs\"));\n}}\n"
    );
    // Every set's module is named by its path, never imported, and its publisher and the
    // static holding it by names with a suffix, distinct from each other's: a set's symbol
    // (`Q`, `Slot`, `core`, `register`) can then clash with nothing this file declares or uses.
    let mut taken: Vec<String> = Vec::new();
    let mut unique = |base: String| {
        let mut name = base.clone();
        for n in 2.. {
            if !taken.contains(&name) {
                break;
            }
            name = format!("{base}{n}");
        }
        taken.push(name.clone());
        name
    };
    let sets: Vec<(String, String, String)> = inspect
        .countersets
        .iter()
        .map(|s| {
            let bare = s.rust_module.trim_start_matches("r#");
            (
                format!("generated::{snake}::{}", s.rust_module),
                unique(format!("{}Publisher", camel(bare))),
                unique(format!("{}_PUBLISHER", bare.to_ascii_uppercase())),
            )
        })
        .collect();
    for (set, (module, publisher, _)) in inspect.countersets.iter().zip(&sets) {
        let kind = set.instances;
        // As pcw-gen writes a manifest's text into doc comments: what rustc refuses there (bidi
        // controls, a bare CR) and other invisible characters as `\u{…}`.
        let _ = writeln!(
            out,
            "\n/// `{}` ({kind} instances): {}",
            pcw_gen::text::visible(&set.name.replace('`', "'")),
            pcw_gen::text::visible(&set.description.replace('`', "'").replace('\n', " "))
        );
        if fresh {
            fresh_publisher(&mut out, set, module, publisher);
        } else {
            skeleton_publisher(&mut out, set.instances, module, publisher);
        }
    }
    let _ = writeln!(out, "/// What PCW's callbacks answer from.");
    for (_, publisher, holder) in &sets {
        let _ = writeln!(out, "static {holder}: {publisher} = {publisher};");
    }
    let _ = writeln!(
        out,
        "\n/// The registrations, between `DriverEntry` and `DriverUnload`.\n#[derive(Default)]\nstruct Registrations {{"
    );
    for ((module, _, _), set) in sets.iter().zip(&inspect.countersets) {
        let _ = writeln!(
            out,
            "    {}: Option<{module}::Registration>,",
            set.rust_module
        );
    }
    let _ = writeln!(
        out,
        "}}\n\nstruct Slot(UnsafeCell<Option<Registrations>>);\n\n\
         // SAFETY: only `register` and `unregister` touch the slot, and the I/O manager never runs\n\
         // `DriverEntry` and `DriverUnload` at the same time.\n\
         unsafe impl Sync for Slot {{}}\n\n\
         static REGISTRATIONS: Slot = Slot(UnsafeCell::new(None));\n\n\
         /// Registers every counterset (from `DriverEntry`); on a failure, those already\n\
         /// registered are unregistered again.\n///\n/// # Errors\n/// `PcwRegister`'s status.\n\
         pub fn register() -> Result<(), pcw_rt::NTSTATUS> {{\n    \
             // SAFETY: `DriverEntry` and `DriverUnload` never overlap (see `Slot`).\n    \
             let slot = unsafe {{ &mut *REGISTRATIONS.0.get() }};\n    \
             let registrations = slot.get_or_insert_with(Registrations::default);\n    \
             let registered = (|| {{"
    );
    for ((module, _, holder), set) in sets.iter().zip(&inspect.countersets) {
        let _ = writeln!(
            out,
            "        registrations.{} = Some({module}::register_publisher(&{holder})?);",
            set.rust_module
        );
    }
    let _ = writeln!(
        out,
        "        Ok(())\n    }})();\n    \
         if registered.is_err() {{\n        *slot = None;\n    }}\n    \
         registered\n}}\n\n\
         /// Unregisters every counterset (from `DriverUnload`, or a failing `DriverEntry`).\n\
         pub fn unregister() {{\n    \
             // SAFETY: as in `register`.\n    \
             let registrations = unsafe {{ (*REGISTRATIONS.0.get()).take() }};\n    \
             drop(registrations);\n}}"
    );
    out
}

/// The fresh manifest of a crate, with new GUIDs.
fn fresh_manifest(names: &Names) -> String {
    fill(
        FRESH_MANIFEST,
        &[
            ("name", &names.name),
            ("snake", &names.snake),
            ("device", &names.device),
            ("display", &names.display),
            ("provider_guid", &fresh_guid()),
            ("set_guid", &fresh_guid()),
        ],
    )
}

/// `--kmdf` and `--umdf`, refused with what differs.
fn refuse_other_models(args: &Args) -> Result<(), Error> {
    if args.kmdf {
        return Err(Error::Usage(
            "`--kmdf`: pcw new makes WDM drivers. A KMDF driver gets its counters the same way \
             (the manifest, build.rs, pcw-rt and a `Publish` impl registered with \
             `register_publisher`, from EvtDriverDeviceAdd or DriverEntry after WdfDriverCreate), \
             but its DriverEntry and devices go through WDF, which pcw-harness's kernel does not \
             implement: test its counters as the publisher alone (see docs/testing-your-driver.md)"
                .to_owned(),
        ));
    }
    if args.umdf {
        return Err(Error::Usage(
            "`--umdf`: a user-mode driver publishes its counters through Perflib V2 (pcw-gen's \
             userMode code over pcw-um, as crates/pcw-tidal does), not kernel PCW; pcw new makes \
             kernel-mode drivers"
                .to_owned(),
        ));
    }
    Ok(())
}

/// `pcw new`.
///
/// # Errors
/// [`Error`]; nothing is written then.
pub(crate) fn run(args: &Args) -> Result<(), Error> {
    refuse_other_models(args)?;
    let name = args
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            Error::Usage(format!(
                "`{}` does not end in a crate name",
                pcw_io::text::shown(&args.path)
            ))
        })?;
    let names = Names::new(name)?;
    let manifest_name = format!("{}.man", names.snake);
    let (manifest_bytes, fresh) = if let Some(path) = &args.manifest {
        (pcw_io::input::read(path, pcw_io::input::MANIFEST)?, false)
    } else {
        (fresh_manifest(&names).into_bytes(), true)
    };
    let shown = args
        .manifest
        .clone()
        .unwrap_or_else(|| PathBuf::from(&manifest_name));
    let inspect = pcw_gen::Config::new().inspect(&pcw_gen::Input::new(&shown, &manifest_bytes))?;
    if inspect.provider.provider_type != ProviderType::KernelMode {
        return Err(Error::Usage(format!(
            "`{}` declares a user-mode provider; pcw new makes kernel-mode drivers (a user-mode \
             provider's counters go through pcw-um)",
            pcw_io::text::shown(&shown)
        )));
    }
    let pcw_rs = args.pcw_rs.as_deref().map(checkout).transpose()?;
    let pcw_rs = pcw_rs.as_deref();
    let deps = [
        ("pcw_rt", dependency(pcw_rs, "pcw-rt", "\"windows-sys\"")),
        ("pcw_gen", dependency(pcw_rs, "pcw-gen", "")),
        ("pcw_harness", dependency(pcw_rs, "pcw-harness", "")),
    ];
    let mut values: Vec<(&str, &str)> = vec![
        ("name", &names.name),
        ("snake", &names.snake),
        ("upper", &names.upper),
        ("device", &names.device),
        ("display", &names.display),
    ];
    values.extend(deps.iter().map(|(k, v)| (*k, v.as_str())));
    let mut tree = pcw_io::Tree::new(&args.path);
    if let Some(path) = &args.manifest {
        tree.input(path);
    }
    for (file, template) in TEMPLATE {
        tree.file(file, fill(template, &values))?;
    }
    tree.file(format!("{}.inx", names.snake), fill(INX, &values))?;
    tree.file(&manifest_name, manifest_bytes)?;
    tree.file("src/counters.rs", counters_rs(&inspect, &names, fresh))?;
    if fresh {
        tree.file("tests/requests.rs", fill(FRESH_TEST, &values))?;
    }
    let written = tree.commit((!args.force).then_some("add `--force` to replace it"))?;
    let mut note = format!(
        "created the WDM driver crate `{}` in `{}` ({} counterset(s) from `{}`); `cargo test` there \
         runs its tests\n",
        names.name,
        pcw_io::text::shown(&written),
        inspect.countersets.len(),
        pcw_io::text::shown(&shown)
    );
    let identity = &inspect.provider.application_identity;
    if !identity.eq_ignore_ascii_case(&format!("{}.sys", names.snake)) {
        let _ = writeln!(
            note,
            "note: the manifest's `applicationIdentity` is `{}`: lodctr reads the counter \
             names from that file, so change it to `{}.sys` or name the driver's image so",
            pcw_gen::text::visible(identity),
            names.snake
        );
    }
    if args.pcw_rs.is_none() {
        let _ = writeln!(
            note,
            "note: it depends on pcw-rs's crates at version {} from the package registry; where \
             the registry does not have them (they are not published there yet, or you are \
             offline), or to build against your own checkout, run `pcw new` again with \
             `--pcw-rs DIR`, DIR a pcw-rs checkout, and `--force`",
            env!("CARGO_PKG_VERSION")
        );
    }
    pcw_io::console::err(&note)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_a_crate() {
        let n = Names::new("my-driver2").unwrap();
        assert_eq!(
            (
                n.snake.as_str(),
                n.upper.as_str(),
                n.device.as_str(),
                n.display.as_str()
            ),
            ("my_driver2", "MY_DRIVER2", "MyDriver2", "My Driver2")
        );
        for bad in [
            "My", "1x", "a--b", "a-", "_a", "fn", "gen", "std", "a b", "é",
        ] {
            assert!(Names::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fresh_guids_are_version_4_and_differ() {
        let (a, b) = (fresh_guid(), fresh_guid());
        assert_ne!(a, b);
        assert!(pcw_gen::model::Guid::parse_braced(&a).is_some(), "{a}");
        assert_eq!(&a[15..16], "4", "{a}");
        assert!(matches!(&a[20..21], "8" | "9" | "a" | "b"), "{a}");
    }

    #[test]
    fn the_template_s_irp_layouts_are_the_example_s() {
        let example = include_str!("../../../examples/checksum-driver/src/wdm.rs");
        assert_eq!(
            TEMPLATE
                .iter()
                .find(|(f, _)| *f == "src/wdm.rs")
                .map(|(_, t)| *t),
            Some(example),
            "templates/driver/src/wdm.rs must stay a copy of the example's"
        );
    }

    #[test]
    fn every_placeholder_is_filled() {
        let names = Names::new("x").unwrap();
        let values = [
            ("name", "x"),
            ("snake", "x"),
            ("upper", "X"),
            ("device", "X"),
            ("display", "X"),
            ("pcw_rt", "\"0\""),
            ("pcw_gen", "\"0\""),
            ("pcw_harness", "\"0\""),
            ("provider_guid", "{g}"),
            ("set_guid", "{g}"),
        ];
        for (file, template) in
            TEMPLATE
                .iter()
                .chain(&[("inx", INX), ("man", FRESH_MANIFEST), ("test", FRESH_TEST)])
        {
            let filled = fill(template, &values);
            assert!(!filled.contains("{{"), "{file}: {filled}");
        }
        let _ = names;
    }
}
