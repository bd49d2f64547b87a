// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the packaging tests share: the repository's files, the manifest as pcw-gen resolves it,
//! the root package's build facts, and the constants the driver's sources define.

#![expect(
    dead_code,
    reason = "each test file checks one part of the flow and uses only the readers it needs"
)]

use std::path::PathBuf;

use pcw_packaging::inf::Inf;

/// A path inside the repository.
pub(crate) fn path(relative: &str) -> PathBuf {
    pcw_packaging::repo_root().join(relative)
}

/// A repository file as text, line ends normalised to `\n` (a Windows checkout has CRLF).
pub(crate) fn read(relative: &str) -> String {
    std::fs::read_to_string(path(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
        .replace("\r\n", "\n")
}

/// Whether a repository path exists; `\` separators (Windows, as scripts write them) accepted.
pub(crate) fn exists(relative: &str) -> bool {
    path(&relative.replace('\\', "/")).exists()
}

/// The driver's counter manifest, resolved by pcw-gen.
pub(crate) fn manifest() -> pcw_gen::model::Manifest {
    let text = read("manifest/pcw_driver.man");
    let analysis = pcw_gen::analyze(&pcw_gen::Input::new("manifest/pcw_driver.man", &text));
    analysis
        .manifest
        .expect("the driver manifest has no errors")
}

/// The lodctr `.h` pcw-gen generates for the manifest (what pcw-perfdll's build writes).
pub(crate) fn symbols_h() -> String {
    pcw_gen::Config::new()
        .generate(&pcw_gen::Input::new(
            "pcw_driver.man",
            &read("manifest/pcw_driver.man"),
        ))
        .expect("the manifest generates")
        .symbols_h
}

/// The driver INF template.
pub(crate) fn inf() -> Inf {
    Inf::parse(&read("inf/pcw_driver.inx")).unwrap_or_else(|e| panic!("inf/pcw_driver.inx: {e}"))
}

/// The root `Cargo.toml`.
pub(crate) fn root_cargo() -> toml::Table {
    toml::from_str(&read("Cargo.toml")).expect("Cargo.toml parses")
}

/// The name cargo gives the driver's library (package name with `-` → `_`), which is
/// `CARGO_MAKE_CRATE_FS_NAME`: wdk-build names the `.sys`, `.inf`, `.cat` and the package
/// directory after it.
pub(crate) fn driver_fs_name() -> String {
    let cargo = root_cargo();
    let package = cargo["package"].as_table().expect("[package]");
    let name = package["name"].as_str().expect("package.name");
    let lib = cargo["lib"].as_table().expect("[lib]");
    if let Some(lib_name) = lib.get("name") {
        return lib_name.as_str().expect("lib.name").to_owned();
    }
    name.replace('-', "_")
}

/// A `pub const NAME: &str = "…";` (raw or plain string) of a Rust source file.
pub(crate) fn rust_str_const(relative: &str, name: &str) -> String {
    let source = read(relative);
    let marker = format!("const {name}: &str = ");
    let start = source
        .find(&marker)
        .unwrap_or_else(|| panic!("{relative} defines no `{name}`"))
        + marker.len();
    let rest = &source[start..];
    let (open, close) = if rest.starts_with("r\"") {
        ("r\"", "\";")
    } else {
        ("\"", "\";")
    };
    let body = &rest[open.len()..];
    body[..body.find(close).expect("terminated string")].to_owned()
}

/// The `(name, lowest, highest)` value of every wave the driver publishes (`src/waves.rs`).
pub(crate) fn waves() -> Vec<(String, u32, u32)> {
    pcw_driver::waves::WAVES
        .iter()
        .map(|(name, w)| ((*name).to_owned(), w.minimum, w.minimum + w.amplitude))
        .collect()
}

/// The PowerShell scripts of `scripts/vm`, sorted, as `(file name, text)`.
pub(crate) fn scripts() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(path("scripts/vm"))
        .expect("scripts/vm")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ps1"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p)
                .expect("readable")
                .replace("\r\n", "\n");
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// The value of `$Name = '…'` in a PowerShell script (single-quoted literal).
pub(crate) fn ps_string(script: &str, name: &str) -> String {
    let marker = format!("${name} ");
    let line = script
        .lines()
        .find(|l| l.trim_start().starts_with(&marker) && l.contains('='))
        .unwrap_or_else(|| panic!("no `${name} = …`"));
    let value = &line[line.find('=').expect("=") + 1..];
    let start = value.find('\'').expect("quoted") + 1;
    let end = start + value[start..].find('\'').expect("closing quote");
    value[start..end].to_owned()
}

/// The `'key' = value` lines of an `[ordered]@{ … }` table `$Name` in a PowerShell script.
pub(crate) fn ps_table(script: &str, name: &str) -> Vec<(String, String)> {
    let start = script
        .find(&format!("${name} = [ordered]@{{"))
        .unwrap_or_else(|| panic!("no `${name} = [ordered]@{{`"));
    let body = &script[start..];
    let body = &body[body.find('\n').expect("newline") + 1..body.find("\n}").expect("}")];
    body.lines()
        .filter(|l| l.trim_start().starts_with('\''))
        .map(|l| {
            let l = l.trim();
            let key_end = 1 + l[1..].find('\'').expect("key quote");
            let value = l[l.find('=').expect("=") + 1..].trim();
            (
                l[1..key_end].to_owned(),
                value.trim_matches('\'').to_owned(),
            )
        })
        .collect()
}

/// The single-quoted items of `$Name = @('a', 'b')` in a PowerShell script.
pub(crate) fn ps_list(script: &str, name: &str) -> Vec<String> {
    let marker = format!("${name} ");
    let line = script
        .lines()
        .find(|l| l.starts_with(&marker) && l.contains("= @("))
        .unwrap_or_else(|| panic!("no `${name} = @(…)`"));
    let body = &line[line.find("@(").expect("@(") + 2..];
    let body = &body[..body.find(')').expect(")")];
    body.split(',')
        .map(|s| s.trim().trim_matches('\'').to_owned())
        .collect()
}
