// SPDX-License-Identifier: MIT OR Apache-2.0
//! Generates the code under test from pcw-gen's golden manifests, through the same build API a
//! driver uses, plus the `inspect` document of each configuration for the tests to compare
//! against; and, from manifests written here, a kernel-mode and a user-mode module whose every
//! manifest-derived identifier is a Rust keyword or a name the generated code or the prelude
//! uses ([`KEYWORDS`]), which the crate compiles.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pcw_gen::Config;

fn run() -> Result<(), pcw_gen::Error> {
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcw-gen/tests/manifests");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or(pcw_gen::Error::NoOutDir)?);
    println!("cargo:rerun-if-changed=build.rs");

    let fabrikam = manifests.join("fabrikam_v2.man");
    let contoso = manifests.join("contoso_v11.man");
    let mut bound = Config::new();
    bound
        .silo_neutral(true)
        .module_name("fabrikam_bound")
        .bind_struct("FabDriver", "crate::stats::DriverStats")
        .bind_struct("FabQueue.QueueData", "crate::stats::QueueStats")
        .out_dir(out.join("bound"));

    let mut wdk_style = Config::new();
    wdk_style
        .runtime_path("crate::wdk_style_rt")
        .publisher(false)
        .module_name("fabrikam_wdk")
        .silo_neutral(true)
        .out_dir(out.join("wdk"));

    // The one-liner, as a driver's build.rs would call it.
    pcw_gen::compile(&fabrikam)?;
    pcw_gen::compile(&contoso)?;
    bound.compile(&fabrikam)?;
    wdk_style.compile(&fabrikam)?;

    for (config, manifest, name) in [
        (&Config::new(), &fabrikam, "fabrikam_v2"),
        (&Config::new(), &contoso, "contoso_v11"),
        (&bound, &fabrikam, "fabrikam_bound"),
    ] {
        let inspect = config.inspect(&pcw_gen::Input::read(manifest)?)?;
        let mut outputs = pcw_io::Outputs::new();
        outputs.add(&out.join(format!("{name}.inspect.json")), inspect.to_json())?;
        outputs.commit()?;
    }
    keywords(&out)
}

/// Every word a generated identifier could clash with, written here and not taken from
/// pcw-gen: Rust's strict keywords (2015 to 2024), reserved keywords (`gen` of 2024 included),
/// weak keywords, `_`, the primitive types, prelude and standard names, and the items, parameters
/// and locals the generators emit themselves. All are C identifiers, so a manifest may use each
/// as a symbol, struct name or type, field, or name.
const KEYWORDS: &[&str] = &[
    // Strict.
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    // Reserved.
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "gen",
    "macro",
    "override",
    "priv",
    "try",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    // Weak, and the underscore.
    "union",
    "macro_rules",
    "raw",
    "safe",
    "_",
    // Primitive types.
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
    "bool",
    "char",
    "str",
    // Prelude and standard names.
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Box",
    "Vec",
    "String",
    "Copy",
    "Clone",
    "Debug",
    "Default",
    "PartialEq",
    "Eq",
    "Send",
    "Sync",
    "Sized",
    "Drop",
    "core",
    "std",
    "alloc",
    // What the generators emit.
    "ids",
    "register",
    "register_publisher",
    "register_with_fallback",
    "add",
    "enumerate",
    "create",
    "delete",
    "into_raw",
    "Set",
    "Registration",
    "Instance",
    "Values",
    "values",
    "buffer",
    "name",
    "id",
    "data",
    "handle",
    "status",
    "info",
    "context",
    "callback",
    "publisher",
    "GUID",
    "NAME",
    "URI",
    "INFO",
    "COUNTERS",
    "COUNTER_SETS",
    "DESCRIPTORS",
    "NAME_UTF16",
    "start",
    "start_with",
    "field_size",
    "assert_size",
    "PROVIDER_NAME",
    "set_type",
    "increment_type",
];

/// The `<counters>` of a manifest, with the XML around it.
fn manifest(provider: &str, sets: &str) -> String {
    format!(
        r#"<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
 <instrumentation>
  <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="1.1">
{provider}
{sets}
   </provider>
  </counters>
 </instrumentation>
</instrumentationManifest>
"#
    )
}

fn guid(set: usize) -> String {
    format!("{{7c2e0d3e-4c5f-4b7f-9e8d-{set:012x}}}")
}

/// Kernel mode: per keyword a counterset with it as symbol (the module), struct name and type
/// (the value block's type and parameter), field and counter symbol (the id constant); one set
/// with every keyword as a counter name (id constants from names); one whose counters' names
/// clash after `snake_case`.
fn kernel_manifest() -> String {
    let mut sets = String::new();
    for (i, k) in KEYWORDS.iter().enumerate() {
        let _ = write!(
            sets,
            r#"    <counterSet guid="{}" uri="Kw.{i}" symbol="{k}" name="Set {i}" description="d" instances="multiple">
     <structs><struct name="{k}" type="{k}"/></structs>
     <counter id="0" uri="Kw.{i}.0" symbol="{k}" field="{k}" name="{k}" description="d" type="perf_counter_rawcount" detailLevel="standard"/>
     <counter id="1" uri="Kw.{i}.1" field="f1" name="{k} 1" description="d" type="perf_counter_large_rawcount" detailLevel="standard"/>
    </counterSet>
"#,
            guid(i)
        );
    }
    // Names compare case-insensitively: of `self` and `Self` (`name` and `NAME`, …) the second
    // goes to a set of its own.
    let (mut named, mut upper) = (String::new(), String::new());
    let mut seen = std::collections::BTreeSet::new();
    for (i, k) in KEYWORDS.iter().enumerate() {
        let to = if seen.insert(k.to_lowercase()) {
            &mut named
        } else {
            &mut upper
        };
        let _ = writeln!(
            to,
            r#"     <counter id="{i}" uri="Kw.Named.{i}" field="f{i}" name="{k}" description="d" type="perf_counter_rawcount" detailLevel="standard"/>"#
        );
    }
    let n = KEYWORDS.len();
    let _ = write!(
        sets,
        r#"    <counterSet guid="{}" uri="Kw.Named" symbol="Named" name="Named" description="d" instances="single">
{named}    </counterSet>
    <counterSet guid="{}" uri="Kw.Upper" symbol="Upper" name="Upper" description="d" instances="single">
{upper}    </counterSet>
    <counterSet guid="{}" uri="Kw.Clash" symbol="Clash" name="Clash" description="d" instances="single">
     <counter id="1" uri="Kw.Clash.1" field="a" name="Bytes/sec" description="d" type="perf_counter_bulk_count" detailLevel="standard"/>
     <counter id="2" uri="Kw.Clash.2" field="b" name="Bytes sec" description="d" type="perf_counter_bulk_count" detailLevel="standard"/>
     <counter id="3" uri="Kw.Clash.3" field="c" symbol="BYTES_SEC_2" name="Third" description="d" type="perf_counter_bulk_count" detailLevel="standard"/>
     <counter id="4" uri="Kw.Clash.4" field="d" name="%" description="d" type="perf_counter_rawcount" detailLevel="standard"/>
     <counter id="5" uri="Kw.Clash.5" field="e" name="%%" description="d" type="perf_counter_rawcount" detailLevel="standard"/>
    </counterSet>"#,
        guid(n),
        guid(n + 1),
        guid(n + 2)
    );
    manifest(
        r#"   <provider providerType="kernelMode" applicationIdentity="keywords.sys" providerName="Keywords" providerGuid="{7c2e0d3e-4c5f-4b7f-9e8d-ffffffffffff}">"#,
        &sets,
    )
}

/// User mode: per keyword a counterset with it as symbol, a `reference` counter with it as name
/// (the getter `<k>` and `set_<k>`) and a value counter with it as symbol (`set_<k>` clashes, so
/// `set_`, `increment_`, `decrement_<k>_2`); one set whose counters' names clash after
/// `snake_case`.
fn user_manifest() -> String {
    let mut sets = String::new();
    for (i, k) in KEYWORDS.iter().enumerate() {
        let _ = write!(
            sets,
            r#"    <counterSet guid="{}" uri="Kw.{i}" symbol="{k}" name="Set {i}" description="d" instances="multiple">
     <counter id="1" uri="Kw.{i}.1" name="{k}" description="d" type="perf_counter_large_rawcount" detailLevel="standard">
      <counterAttributes><counterAttribute name="reference"/></counterAttributes>
     </counter>
     <counter id="2" uri="Kw.{i}.2" symbol="{k}" name="value" description="d" type="perf_counter_rawcount" detailLevel="standard"/>
    </counterSet>
"#,
            guid(i)
        );
    }
    let _ = write!(
        sets,
        r#"    <counterSet guid="{}" uri="Kw.Clash" symbol="Clash" name="Clash" description="d" instances="single">
     <counter id="1" uri="Kw.Clash.1" name="Bytes/sec" description="d" type="perf_counter_bulk_count" detailLevel="standard"/>
     <counter id="2" uri="Kw.Clash.2" name="Bytes sec" description="d" type="perf_counter_bulk_count" detailLevel="standard"/>
     <counter id="3" uri="Kw.Clash.3" name="Set Bytes Sec" description="d" type="perf_counter_rawcount" detailLevel="standard">
      <counterAttributes><counterAttribute name="reference"/></counterAttributes>
     </counter>
     <counter id="4" uri="Kw.Clash.4" name="%" description="d" type="perf_counter_rawcount" detailLevel="standard"/>
     <counter id="5" uri="Kw.Clash.5" name="2nd Pass" description="d" type="perf_counter_rawcount" detailLevel="standard"/>
     <counter id="6" uri="Kw.Clash.6" name="3rd Pass" description="d" type="perf_counter_rawcount" detailLevel="standard">
      <counterAttributes><counterAttribute name="reference"/></counterAttributes>
     </counter>
    </counterSet>"#,
        guid(KEYWORDS.len())
    );
    manifest(
        r#"   <provider providerType="userMode" callback="custom" symbol="KeywordsProvider" applicationIdentity="keywords.exe" providerName="Keywords" providerGuid="{7c2e0d3e-4c5f-4b7f-9e8d-fffffffffffe}">"#,
        &sets,
    )
}

/// Writes the keyword manifests and compiles them into `kernel_keywords.rs` and
/// `user_keywords.rs`; pcw-gen must accept them (their only diagnostics are warnings).
fn keywords(out: &Path) -> Result<(), pcw_gen::Error> {
    for (stem, text) in [
        ("kernel_keywords", kernel_manifest()),
        ("user_keywords", user_manifest()),
    ] {
        let path = out.join(format!("{stem}.man"));
        let mut outputs = pcw_io::Outputs::new();
        outputs.add(&path, text)?;
        outputs.commit()?;
        let mut config = Config::new();
        config.out_dir(out).cargo_protocol(false);
        config.compile(&path)?;
    }
    Ok(())
}

// pcw-gen's `Error` prints its rendered diagnostics for `Debug` too, so the build script can
// return it.
fn main() -> Result<(), pcw_gen::Error> {
    run()
}
