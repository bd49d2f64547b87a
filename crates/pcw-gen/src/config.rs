// SPDX-License-Identifier: MIT OR Apache-2.0
//! The build API, prost-build style: a [`Config`] builder, pure operations on an [`Input`]
//! ([`Config::generate`], [`Config::inspect`], [`Config::v1_tables`]) separate from I/O, and
//! [`Config::compile`] which writes into `OUT_DIR` only when content changed and speaks cargo's
//! build-script protocol.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::analysis::analyze;
use crate::declare::{self, Declared};
use crate::diag::Diagnostic;
use crate::error::Error;
use crate::input::Input;
use crate::kernel::{self, Options};
use crate::model::{Inspect, Manifest, ProviderType};
use crate::{inspect, names, resources, user_mode, v1_tables};

/// Everything generated from one manifest.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("contoso_v11.man", include_str!("../tests/manifests/contoso_v11.man"));
/// let generated = pcw_gen::Config::new().generate(&input)?;
/// assert!(generated.rust.contains("pub mod contoso_v11"));
/// assert!(generated.rc.starts_with("// @generated"));
/// assert_eq!(&generated.ini[..2], &[0xFF, 0xFE]); // UTF-16LE with a byte order mark
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Generated {
    /// The Rust module (`include!` it).
    pub rust: String,
    /// The `.rc` string table.
    pub rc: String,
    /// The same string table compiled: a `.res` file, which `link.exe` and `lld-link` link
    /// into the binary as its `.rsrc` section.
    pub res: Vec<u8>,
    /// The lodctr `.ini`, UTF-16LE with BOM.
    pub ini: Vec<u8>,
    /// The lodctr symbol `.h`.
    pub symbols_h: String,
    /// The resolved layout.
    pub inspect: Inspect,
    /// Warnings found in the manifest.
    pub warnings: Vec<Diagnostic>,
}

/// Paths written by [`Config::compile`] (and, per declaration, by
/// [`Config::compile_declarations`]).
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("pcw-gen-written-{}", std::process::id()));
/// let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifests/contoso_v11.man");
/// let written = pcw_gen::Config::new().out_dir(&dir).cargo_protocol(false).compile(manifest)?;
/// assert_eq!(written.rust, dir.join("contoso_v11.rs"));
/// assert!(written.symbols_h.exists());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Written {
    /// `<out>/<stem>.rs`.
    pub rust: PathBuf,
    /// `<out>/<stem>.rc`.
    pub rc: PathBuf,
    /// `<out>/<stem>.res`, the compiled `.rc` (see [`Config::link_resources`]).
    pub res: PathBuf,
    /// `<out>/<stem>.ini`.
    pub ini: PathBuf,
    /// `<out>/<stem>.h`.
    pub symbols_h: PathBuf,
    /// Warnings found in the manifest (already printed as `cargo:warning` when in a build
    /// script).
    pub warnings: Vec<Diagnostic>,
}

/// Generator configuration (prost-build style builder): the switches below, then one
/// operation — [`Config::compile`] in a build script, or the pure [`Config::generate`],
/// [`Config::inspect`] and [`Config::v1_tables`] on an [`Input`].
///
/// # Examples
///
/// ```no_run
/// // build.rs of a driver
/// fn main() -> Result<(), pcw_gen::Error> {
///     pcw_gen::Config::new()
///         .silo_neutral(true)
///         .bind_struct("FabQueue", "crate::stats::QueueStats")
///         .compile("manifest/fabrikam.man")?;
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent builder switches, each set by its own method"
)]
pub struct Config {
    runtime_path: String,
    silo_neutral: bool,
    bindings: BTreeMap<String, String>,
    module_name: Option<String>,
    out_dir: Option<PathBuf>,
    driver_name: Option<String>,
    symbol_file: Option<String>,
    cargo_protocol: bool,
    user_runtime_path: String,
    publisher: bool,
    link_resources: bool,
}

impl Default for Config {
    /// [`Config::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// The defaults: runtime at `::pcw_rt` (the pcw-rt crate), not silo-neutral, no bound
    /// structs, module named after the manifest file, output to `OUT_DIR`.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let rust = pcw_gen::Config::new().generate(&input)?.rust;
    /// assert!(rust.contains("pub mod fabrikam_v2") && rust.contains("::pcw_rt::PcwRegister"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn new() -> Self {
        Self {
            runtime_path: "::pcw_rt".to_owned(),
            silo_neutral: false,
            bindings: BTreeMap::new(),
            module_name: None,
            out_dir: None,
            driver_name: None,
            symbol_file: None,
            cargo_protocol: true,
            user_runtime_path: "::pcw_um".to_owned(),
            publisher: true,
            link_resources: true,
        }
    }

    /// The absolute path (`crate::…` or `::…`) of the runtime module implementing the
    /// contract in the crate docs. The default, `::pcw_rt`, is the pcw-rt crate; a driver with
    /// its own FFI facade re-exporting it (or implementing the contract itself) names that
    /// module instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let rust = pcw_gen::Config::new().runtime_path("crate::ffi").generate(&input)?.rust;
    /// assert!(rust.contains("crate::ffi::PcwRegister"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn runtime_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.runtime_path = path.into();
        self
    }

    /// The absolute path of the user-mode runtime that code for a `providerType="userMode"`
    /// manifest calls (default `::pcw_um`, the pcw-um crate; see the crate docs, "User-mode
    /// providers").
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("tidal_user.man", include_str!("../tests/manifests/tidal_user.man"));
    /// let mut config = pcw_gen::Config::new();
    /// let rust = config.user_mode_runtime_path("crate::perflib").generate(&input)?.rust;
    /// assert!(rust.contains("crate::perflib::Provider"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn user_mode_runtime_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.user_runtime_path = path.into();
        self
    }

    /// Whether each counterset module gets the safe callback (default: yes): a `Set` marker
    /// implementing the runtime's `Counterset` and `register_publisher(&'static P)` for a `P`
    /// implementing the runtime's `Publish<Set>`, answered by the runtime's generic `callback`.
    /// pcw-rt provides those three items; a runtime of its own that does not (it would have to
    /// re-export pcw-rt's with pcw-rt's types) turns this off and keeps `register(callback,
    /// context)`.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let rust = pcw_gen::Config::new().publisher(false).generate(&input)?.rust;
    /// assert!(!rust.contains("register_publisher") && rust.contains("pub unsafe fn register("));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn publisher(&mut self, yes: bool) -> &mut Self {
        self.publisher = yes;
        self
    }

    /// Register with `PcwRegistrationSiloNeutral` (V2 only; dropped on the V1 fallback).
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let rust = pcw_gen::Config::new().silo_neutral(true).generate(&input)?.rust;
    /// assert!(rust.contains("PcwRegistrationSiloNeutral"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn silo_neutral(&mut self, yes: bool) -> &mut Self {
        self.silo_neutral = yes;
        self
    }

    /// Use the user type at `rust_path` (absolute, e.g. `crate::stats::QueueStats`) instead of
    /// a generated struct. `key` is the counterset symbol (for a set with one struct, implicit
    /// or declared) or `Symbol.StructName`. The generated code asserts at compile time that
    /// every manifest field exists in the type (as the `snake_case` of `field`) with the
    /// manifest's size; offsets come from the type via `offset_of!`.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let mut config = pcw_gen::Config::new();
    /// config.bind_struct("FabDriver", "crate::stats::DriverStats");
    /// assert!(config.generate(&input)?.rust.contains("crate::stats::DriverStats"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn bind_struct(
        &mut self,
        key: impl Into<String>,
        rust_path: impl Into<String>,
    ) -> &mut Self {
        self.bindings.insert(key.into(), rust_path.into());
        self
    }

    /// Name of the generated top-level module (default: the manifest file stem in
    /// `snake_case`).
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let rust = pcw_gen::Config::new().module_name("counters").generate(&input)?.rust;
    /// assert!(rust.contains("pub mod counters {"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn module_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.module_name = Some(name.into());
        self
    }

    /// Whether `name` can be given to [`Config::module_name`] as it is: a C-style identifier
    /// that is no Rust keyword (strict, reserved, or edition 2024's `gen`) and not `_`. (A name
    /// made from a manifest's symbols is escaped instead, `r#type`; a module name given is
    /// used as written.)
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::Config;
    ///
    /// assert!(Config::is_module_name("my_driver"));
    /// assert!(!Config::is_module_name("gen") && !Config::is_module_name("self"));
    /// assert!(!Config::is_module_name("my-driver"));
    /// ```
    pub fn is_module_name(name: &str) -> bool {
        names::is_rust_ident(name)
    }

    /// Where [`Config::compile`] writes (default: `OUT_DIR`).
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("pcw-gen-out-dir-{}", std::process::id()));
    /// let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifests/fabrikam_v2.man");
    /// pcw_gen::Config::new().out_dir(&dir).cargo_protocol(false).compile(manifest)?;
    /// assert!(dir.join("fabrikam_v2.rs").exists());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn out_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// `drivername=` of the lodctr `.ini` (the service key name; default: the file stem), and
    /// `SERVICE` of the V1 tables. [`Config::generate`], [`Config::v1_tables`] and what calls
    /// them refuse a name that cannot be a service's ([`Error::DriverName`]), whether given here
    /// or taken from the file stem, and whether or not the `.ini` is written: empty, longer than
    /// 256 UTF-16 units, holding `/` or `\`, or a control, line-break or invisible character.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let tables = pcw_gen::Config::new().driver_name("fabqueue").v1_tables(&input)?;
    /// assert!(tables.contains(r#"pub const SERVICE: &str = "fabqueue";"#));
    /// let refused = pcw_gen::Config::new().driver_name("fab\nqueue").generate(&input);
    /// assert!(matches!(refused, Err(pcw_gen::Error::DriverName { defaulted: false, .. })));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn driver_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.driver_name = Some(name.into());
        self
    }

    /// `symbolfile=` of the lodctr `.ini`: the name of the symbol header written beside it
    /// (default: the file stem with `.h`). lodctr looks for it in the `.ini`'s directory, so
    /// only the name's last component is used. [`Config::compile`] and
    /// [`Config::compile_declarations`] write the header under that name.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let ini = pcw_gen::Config::new().symbol_file("fabsyms.h").generate(&input)?.ini;
    /// let text = String::from_utf16(&ini[2..].chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect::<Vec<_>>()).unwrap();
    /// assert!(text.contains("symbolfile=fabsyms.h\r\n"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn symbol_file(&mut self, name: impl Into<String>) -> &mut Self {
        self.symbol_file = Some(name.into());
        self
    }

    /// The driver's service name for the manifest `file`: [`Config::driver_name`], else the
    /// file stem; refused if it cannot name a service key.
    fn service_name(&self, file: &Path) -> Result<String, Error> {
        let (name, defaulted) = match &self.driver_name {
            Some(name) => (name.clone(), false),
            None => (Self::stem(file), true),
        };
        let units = name.encode_utf16().count();
        let reason = if name.is_empty() {
            Some("it is empty".to_owned())
        } else if units > 256 {
            Some(format!(
                "it is {units} UTF-16 units long, and a service name is at most 256"
            ))
        } else if name.contains(['/', '\\']) {
            Some("a service name holds no `/` or `\\`".to_owned())
        } else {
            name.chars()
                .find(|c| crate::text::is_invisible(*c))
                .map(|c| format!("it holds {}", crate::text::describe(c)))
        };
        match reason {
            None => Ok(name),
            Some(reason) => Err(Error::DriverName {
                name,
                defaulted,
                reason,
            }),
        }
    }

    /// The symbol header's file name for a manifest whose file stem is `stem`.
    fn symbol_file_for(&self, stem: &str) -> String {
        self.symbol_file
            .as_deref()
            .and_then(|name| Path::new(name).file_name())
            .map_or_else(
                || format!("{stem}.h"),
                |name| name.to_string_lossy().into_owned(),
            )
    }

    /// Whether [`Config::compile`] prints `cargo:rerun-if-changed` and `cargo:warning` lines
    /// (default: yes).
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("pcw-gen-cargo-protocol-{}", std::process::id()));
    /// let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifests/contoso_v11.man");
    /// // Outside a build script: write the files, print nothing.
    /// pcw_gen::Config::new().out_dir(&dir).cargo_protocol(false).compile(manifest)?;
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn cargo_protocol(&mut self, yes: bool) -> &mut Self {
        self.cargo_protocol = yes;
        self
    }

    /// Whether [`Config::compile`], in a build script for a Windows target, links the compiled
    /// string table (`<stem>.res`) into what the package links (default: yes). The provider's
    /// `applicationIdentity` binary must carry these strings: `lodctr /m:` and every consumer
    /// read the counterset and counter names and descriptions from its resources. A package
    /// that links the `.rc` or `.res` itself, or whose binary is not the provider's, turns this
    /// off.
    ///
    /// For an MSVC target the `.res` goes to the linker as it is (`link.exe` and `lld-link` both
    /// take `.res` inputs). GNU `ld` does not, so for a GNU target the `.res` is first converted
    /// to a COFF object with binutils' `windres` (`<arch>-w64-mingw32-windres`, else `windres`;
    /// a conversion, no resource script is compiled); without one, a `cargo:warning` says the
    /// strings were not linked and what to install.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// // build.rs of a driver whose own resource script includes the generated `.rc`
    /// fn main() -> Result<(), pcw_gen::Error> {
    ///     pcw_gen::Config::new()
    ///         .link_resources(false)
    ///         .compile("manifest/fabrikam.man")?;
    ///     Ok(())
    /// }
    /// ```
    pub fn link_resources(&mut self, yes: bool) -> &mut Self {
        self.link_resources = yes;
        self
    }

    /// The `cargo:` lines [`Config::compile`] prints to link `res` for the target cargo is
    /// building (`CARGO_CFG_TARGET_OS`, `_ENV`, `_ARCH`): a link argument for a Windows target
    /// (the `.res` itself for MSVC, its COFF conversion for GNU), a warning when the GNU
    /// conversion is impossible, nothing otherwise.
    fn resource_link_lines(&self, res: &Path) -> Vec<String> {
        if !self.link_resources {
            return Vec::new();
        }
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        if var("CARGO_CFG_TARGET_OS") != "windows" {
            return Vec::new();
        }
        if var("CARGO_CFG_TARGET_ENV") == "msvc" {
            return vec![format!("cargo:rustc-link-arg={}", res.display())];
        }
        let object = res.with_extension("res.o");
        let tools = [
            format!("{}-w64-mingw32-windres", var("CARGO_CFG_TARGET_ARCH")),
            "windres".to_owned(),
        ];
        let mut tried = Vec::new();
        for tool in &tools {
            let run = std::process::Command::new(tool)
                .args(["-J", "res", "-O", "coff", "-i"])
                .arg(res)
                .arg("-o")
                .arg(&object)
                .output();
            match run {
                Ok(out) if out.status.success() => {
                    return vec![format!("cargo:rustc-link-arg={}", object.display())];
                }
                // Its messages may span lines: escaped, they stay in this one warning.
                Ok(out) => tried.push(format!(
                    "`{tool}` failed: {}",
                    pcw_io::text::visible(String::from_utf8_lossy(&out.stderr).trim())
                )),
                Err(e) => tried.push(format!("`{tool}`: {e}")),
            }
        }
        vec![format!(
            "cargo:warning=the counter name resources `{}` are not linked: a GNU target needs \
             windres to convert them to an object ({}; on Debian, install \
             binutils-mingw-w64-x86-64)",
            res.display(),
            tried.join("; ")
        )]
    }

    fn stem(file: &Path) -> String {
        file.file_stem().map_or_else(
            || "manifest".to_owned(),
            |s| s.to_string_lossy().into_owned(),
        )
    }

    pub(crate) fn options(&self, manifest: &Manifest, file: &Path) -> Result<Options, Error> {
        let runtime_path: syn::Path = syn::parse_str(&self.runtime_path)
            .map_err(|_| Error::RuntimePath(self.runtime_path.clone()))?;
        let mut known = Vec::new();
        for set in &manifest.provider.countersets {
            for st in &set.structs {
                known.extend(kernel::struct_keys(set, st));
            }
        }
        let mut bindings = BTreeMap::new();
        for (key, path) in &self.bindings {
            if !known.contains(key) {
                return Err(Error::UnknownBinding {
                    key: key.clone(),
                    known: known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            let parsed: syn::Path = syn::parse_str(path).map_err(|_| Error::BindingPath {
                key: key.clone(),
                path: path.clone(),
            })?;
            bindings.insert(key.clone(), parsed);
        }
        let module_name = match &self.module_name {
            Some(m) if names::is_rust_ident(m) => m.clone(),
            Some(m) => return Err(Error::ModuleName(m.clone())),
            None => names::snake(&Self::stem(file)),
        };
        Ok(Options {
            runtime_path,
            silo_neutral: self.silo_neutral,
            publisher: self.publisher,
            module_name,
            bindings,
            source_name: file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        })
    }

    /// The analysis's verdict for generation: the resolved model and its warnings, or every
    /// diagnostic when there is an error.
    pub(crate) fn resolved(input: &Input<'_>) -> Result<(Manifest, Vec<Diagnostic>), Error> {
        let analysis = analyze(input);
        match analysis.manifest {
            Some(manifest) => Ok((manifest, analysis.diagnostics)),
            None => Err(Error::Manifest {
                diagnostics: analysis.diagnostics,
            }),
        }
    }

    /// Generates every output of a manifest, without touching the file system. The verdict is
    /// [`crate::analyze`]'s, what `pcw lint` reports: no manifest is accepted by one and
    /// refused by the other.
    ///
    /// # Errors
    ///
    /// [`Error::Manifest`] with every diagnostic when the manifest has errors, or a
    /// configuration error.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("contoso_v11.man", include_str!("../tests/manifests/contoso_v11.man"));
    /// let generated = pcw_gen::Config::new().generate(&input)?;
    /// assert!(generated.rust.contains("pub unsafe fn register("));
    /// assert!(generated.warnings.is_empty());
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn generate(&self, input: &Input<'_>) -> Result<Generated, Error> {
        let file = input.path();
        let (manifest, warnings) = Self::resolved(input)?;
        let opts = self.options(&manifest, file)?;
        let stem = Self::stem(file);
        let driver = self.service_name(file)?;
        let rust = if manifest.provider.provider_type == ProviderType::UserMode {
            let runtime_path: syn::Path = syn::parse_str(&self.user_runtime_path)
                .map_err(|_| Error::RuntimePath(self.user_runtime_path.clone()))?;
            user_mode::generate(
                &manifest,
                &user_mode::UmOptions {
                    runtime_path: &runtime_path,
                    module_name: &opts.module_name,
                    source_name: &opts.source_name,
                },
            )
        } else {
            kernel::generate(&manifest, &opts)
        };
        Ok(Generated {
            rust,
            rc: resources::rc(&manifest, &opts.source_name),
            res: resources::res(&manifest),
            ini: resources::utf16le_with_bom(&resources::ini(
                &manifest,
                &driver,
                &self.symbol_file_for(&stem),
            )),
            symbols_h: resources::symbols_h(&manifest, &opts.source_name),
            inspect: inspect::build(&manifest, &opts, &file.display().to_string()),
            warnings,
        })
    }

    /// The V1 tables a perf DLL serves the manifest's countersets from (crate docs, "V1
    /// tables"), without touching the file system. `SERVICE` is [`Config::driver_name`] (default:
    /// the file stem).
    ///
    /// # Errors
    ///
    /// As [`Config::generate`], and [`Error::Manifest`] with an error per counter a V1 object
    /// cannot express: a base counter that cannot follow the counter naming it (a base shared
    /// by two counters), or counters naming different `perfTimeID`s or `perfFreqID`s.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("contoso_v11.man", include_str!("../tests/manifests/contoso_v11.man"));
    /// let tables = pcw_gen::Config::new().v1_tables(&input)?;
    /// assert!(tables.contains("pub static OBJECTS: [ObjectTable; 3]"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn v1_tables(&self, input: &Input<'_>) -> Result<String, Error> {
        let file = input.path();
        let (manifest, warnings) = Self::resolved(input)?;
        let opts = self.options(&manifest, file)?;
        let errors = v1_tables::check(&manifest, file);
        if !errors.is_empty() {
            let mut diagnostics = warnings;
            diagnostics.extend(errors);
            diagnostics.sort_by(|a, b| a.pos.cmp(&b.pos).then(b.severity.cmp(&a.severity)));
            return Err(Error::Manifest { diagnostics });
        }
        let service = self.service_name(file)?;
        Ok(v1_tables::generate(&manifest, &opts.source_name, &service))
    }

    /// The `inspect` document of a manifest (no file system access): what `pcw inspect --json`
    /// prints, and the layout the generated code has with this configuration.
    ///
    /// # Errors
    ///
    /// As [`Config::generate`].
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", include_str!("../tests/manifests/fabrikam_v2.man"));
    /// let doc = pcw_gen::Config::new().inspect(&input)?;
    /// assert_eq!(doc.countersets[0].rust_module, "fab_queue");
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn inspect(&self, input: &Input<'_>) -> Result<Inspect, Error> {
        let file = input.path();
        let (manifest, _) = Self::resolved(input)?;
        let opts = self.options(&manifest, file)?;
        Ok(inspect::build(
            &manifest,
            &opts,
            &file.display().to_string(),
        ))
    }

    /// Reads `manifest`, generates, and writes `<stem>.rs`, `<stem>.rc`, `<stem>.res`,
    /// `<stem>.ini` and `<stem>.h` into the output directory, each only if its content changed.
    /// In a build script it prints `cargo:rerun-if-changed` for the manifest, one
    /// `cargo:warning` per manifest warning, and, building for a Windows target, the link
    /// argument that puts the string table into the binary ([`Config::link_resources`]).
    ///
    /// # Errors
    ///
    /// I/O failures and everything [`Config::generate`] reports; with the cargo protocol on,
    /// [`Error::CargoPath`] for a manifest or output path a `cargo:` line cannot name (a line
    /// break in it, or not UTF-8), before anything is printed for it or written.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// // build.rs
    /// fn main() -> Result<(), pcw_gen::Error> {
    ///     let written = pcw_gen::Config::new().compile("manifest/fabrikam.man")?;
    ///     assert!(written.rust.ends_with("fabrikam.rs"));
    ///     Ok(())
    /// }
    /// ```
    pub fn compile(&self, manifest: impl AsRef<Path>) -> Result<Written, Error> {
        let path = manifest.as_ref();
        if self.cargo_protocol {
            pcw_io::console::out(&format!("cargo:rerun-if-changed={}\n", cargo_path(path)?))?;
        }
        let mut cargo = Vec::new();
        let generated = self.generate(&Input::read(path)?)?;
        if self.cargo_protocol {
            for w in &generated.warnings {
                for line in w.render().lines() {
                    cargo.push(format!("cargo:warning={line}"));
                }
            }
        }
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        let stem = Self::stem(path);
        let written = Written {
            rust: out.join(format!("{stem}.rs")),
            rc: out.join(format!("{stem}.rc")),
            res: out.join(format!("{stem}.res")),
            ini: out.join(format!("{stem}.ini")),
            symbols_h: out.join(self.symbol_file_for(&stem)),
            warnings: generated.warnings.clone(),
        };
        if self.cargo_protocol {
            cargo_path(&written.res)?;
        }
        // All five or none: each is checked (not the manifest, not named twice), staged beside
        // its destination, and renamed only when all were written; unchanged files are kept.
        let mut outputs = pcw_io::Outputs::new();
        outputs.create_dirs(true).input(path);
        outputs
            .add(&written.rust, generated.rust)?
            .add(&written.rc, generated.rc)?
            .add(&written.res, generated.res)?
            .add(&written.ini, generated.ini)?
            .add(&written.symbols_h, generated.symbols_h)?;
        outputs.commit()?;
        if self.cargo_protocol {
            cargo.extend(self.resource_link_lines(&written.res));
            let mut text = cargo.join("\n");
            text.push('\n');
            pcw_io::console::out(&text)?;
        }
        Ok(written)
    }
}

impl Declared {
    /// The configuration the declaration asks for: its module name, and its `runtime` and
    /// `silo_neutral` when given, over [`Config::new`]'s defaults.
    ///
    /// # Examples
    ///
    /// ```
    /// let source = br#"pcw_declare::counters! {
    ///     #[provider(name = "Tide", application_identity = "tide.exe", user_mode, symbol = Tide)]
    ///     pub mod tide {
    ///         #[counterset(name = "Tide", description = "Tide levels.", instances = single)]
    ///         struct Level {
    ///             #[counter(id = 1, type = perf_counter_rawcount, name = "Height", description = "Water height.")]
    ///             height: u32,
    ///         }
    ///     }
    /// }"#;
    /// let analysis = pcw_gen::declare::analyze_declarations(&pcw_gen::Input::new("tide.rs", source));
    /// let declared = &analysis.declared[0];
    /// let generated = declared.config().generate(&declared.input())?;
    /// assert!(generated.rust.contains("pub mod tide"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn config(&self) -> Config {
        let mut config = Config::new();
        config
            .module_name(self.module.clone())
            .silo_neutral(self.silo_neutral);
        if let Some(rt) = &self.runtime {
            config
                .runtime_path(rt.clone())
                .user_mode_runtime_path(rt.clone());
        }
        config
    }
}

/// Counters declared in Rust (`counters!`, see [`crate::declare`]).
impl Config {
    /// The build-script call for counters declared in Rust: reads the Rust source file
    /// `source` (for example `src/counters.rs`), and for each `counters!` declaration in it
    /// writes into the output directory the derived manifest `<module>.man` and everything
    /// [`Config::compile`] writes for a manifest (`<module>.rs`, `.rc`, `.res`, `.ini`, `.h`),
    /// all of them or none. The declaration's own `runtime` and `silo_neutral` apply; the
    /// other switches of this `Config` (output directory, cargo protocol, resource linking,
    /// driver name) apply to every declaration. In a build script it prints
    /// `cargo:rerun-if-changed` for the source and links each string table as
    /// [`Config::compile`] does. (A declaration has no warnings to print: they are its errors.)
    ///
    /// # Errors
    ///
    /// [`Error::Read`], [`Error::Declaration`] with every problem of every declaration (a
    /// warning of a derived manifest is an error of its declaration), [`Error::CargoPath`] as
    /// [`Config::compile`], a configuration error (such as [`Error::DriverName`]), and write
    /// failures.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// // build.rs of a service whose counters are declared in `src/counters.rs`
    /// fn main() -> Result<(), pcw_gen::Error> {
    ///     pcw_gen::Config::new().compile_declarations("src/counters.rs")?;
    ///     Ok(())
    /// }
    /// ```
    pub fn compile_declarations(&self, source: impl AsRef<Path>) -> Result<Vec<Written>, Error> {
        let path = source.as_ref();
        if self.cargo_protocol {
            pcw_io::console::out(&format!("cargo:rerun-if-changed={}\n", cargo_path(path)?))?;
        }
        let analysis = declare::analyze_declarations(&Input::read(path)?);
        if analysis.has_errors() {
            return Err(Error::Declaration {
                diagnostics: analysis.diagnostics,
            });
        }
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        let mut outputs = pcw_io::Outputs::new();
        outputs.create_dirs(true).input(path);
        let mut all = Vec::new();
        for declared in &analysis.declared {
            let mut config = declared.config();
            config.driver_name.clone_from(&self.driver_name);
            config.symbol_file.clone_from(&self.symbol_file);
            config.publisher = self.publisher;
            let generated = config.generate(&declared.input())?;
            let stem = &declared.module;
            let written = Written {
                rust: out.join(format!("{stem}.rs")),
                rc: out.join(format!("{stem}.rc")),
                res: out.join(format!("{stem}.res")),
                ini: out.join(format!("{stem}.ini")),
                symbols_h: out.join(config.symbol_file_for(stem)),
                warnings: generated.warnings.clone(),
            };
            if self.cargo_protocol {
                cargo_path(&written.res)?;
            }
            outputs
                .add(&out.join(&declared.file_name), declared.manifest.clone())?
                .add(&written.rust, generated.rust)?
                .add(&written.rc, generated.rc)?
                .add(&written.res, generated.res)?
                .add(&written.ini, generated.ini)?
                .add(&written.symbols_h, generated.symbols_h)?;
            all.push(written);
        }
        outputs.commit()?;
        if self.cargo_protocol {
            let mut cargo = Vec::new();
            for w in &all {
                cargo.extend(self.resource_link_lines(&w.res));
            }
            if !cargo.is_empty() {
                let mut text = cargo.join("\n");
                text.push('\n');
                pcw_io::console::out(&text)?;
            }
        }
        Ok(all)
    }
}

/// `path` as a cargo directive names it: its text, when that is UTF-8 without a line break
/// (cargo reads a build script's output line by line); otherwise [`Error::CargoPath`], so that
/// no path can end a directive early and add one of its own.
fn cargo_path(path: &Path) -> Result<&str, Error> {
    path.to_str()
        .filter(|text| !text.contains(['\n', '\r']))
        .ok_or_else(|| Error::CargoPath {
            path: path.to_owned(),
        })
}

/// Compiles one manifest with the default [`Config`] (the build-script one-liner).
///
/// # Errors
///
/// As [`Config::compile`].
///
/// # Examples
///
/// ```no_run
/// // build.rs of a driver
/// fn main() -> Result<(), pcw_gen::Error> {
///     pcw_gen::compile("manifest/my_driver.man")?;
///     Ok(())
/// }
/// ```
pub fn compile(manifest: impl AsRef<Path>) -> Result<Written, Error> {
    Config::new().compile(manifest)
}
