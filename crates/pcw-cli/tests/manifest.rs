// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw lint`, `pcw gen` and `pcw inspect` run through the real binary over pcw-gen's test
//! manifests: exit codes, diagnostics on stderr, and outputs identical to pcw-gen's golden files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gen_tests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcw-gen/tests")
}

fn manifest(name: &str) -> PathBuf {
    gen_tests().join("manifests").join(name)
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(gen_tests().join("golden").join(name))
        .unwrap()
        .replace("\r\n", "\n")
}

fn pcw(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcw"))
        .args(args)
        .output()
        .unwrap()
}

fn os<T: AsRef<std::ffi::OsStr> + ?Sized>(s: &T) -> &std::ffi::OsStr {
    s.as_ref()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pcw-cli-manifest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn lint_passes_good_manifests_and_fails_bad_ones_with_positions() {
    let good = [manifest("contoso_v11.man"), manifest("fabrikam_v2.man")];
    let out = pcw(&[os("lint"), good[0].as_os_str(), good[1].as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let dir = scratch("lint");
    let bad = dir.join("bad.man");
    std::fs::write(
        &bad,
        "<instrumentationManifest>\n<instrumentation>\n<counters schemaVersion=\"2.0\">\n\
         <provider providerType=\"kernelMode\" providerGuid=\"{x}\"/>\n\
         </counters>\n</instrumentation>\n</instrumentationManifest>\n",
    )
    .unwrap();
    let out = pcw(&[os("lint"), bad.as_os_str(), good[1].as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.man:4:1: error: `<provider>` is missing the `applicationIdentity`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`providerGuid` is not a braced guid: `{x}`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: 2 error(s) in the manifest"),
        "{stderr}"
    );

    let missing = dir.join("missing.man");
    let out = pcw(&[os("lint"), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the manifest"));
}

/// A lodctr `.ini`'s text, checked to be UTF-16LE with a byte order mark, as lodctr reads it.
fn ini_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..2],
        &[0xFF, 0xFE],
        "the lodctr .ini is UTF-16LE with a BOM"
    );
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).unwrap()
}

/// `pcw gen MANIFEST --ini INI --symbols SYMBOLS` and `extra`, run.
fn gen_lodctr(manifest: &Path, ini: &Path, symbols: &Path, extra: &[&std::ffi::OsStr]) -> Output {
    let mut args = vec![
        os("gen"),
        manifest.as_os_str(),
        os("--ini"),
        ini.as_os_str(),
        os("--symbols"),
        symbols.as_os_str(),
    ];
    args.extend_from_slice(extra);
    pcw(&args)
}

#[test]
fn gen_writes_the_golden_outputs() {
    let dir = scratch("gen");
    let (rs, rc, ini, h) = (
        dir.join("f.rs"),
        dir.join("f.rc"),
        dir.join("f.ini"),
        // The golden `.ini` names the symbol file `fabrikam_v2.h` (`symbolfile=`).
        dir.join("fabrikam_v2.h"),
    );
    let m = manifest("fabrikam_v2.man");
    let out = pcw(&[
        os("gen"),
        m.as_os_str(),
        os("-o"),
        rs.as_os_str(),
        os("--rc"),
        rc.as_os_str(),
        os("--ini"),
        ini.as_os_str(),
        os("--symbols"),
        h.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&rs).unwrap(),
        golden("fabrikam_v2.rs")
    );
    assert_eq!(
        std::fs::read_to_string(&rc).unwrap().replace("\r\n", "\n"),
        golden("fabrikam_v2.rc")
    );
    assert_eq!(
        std::fs::read_to_string(&h).unwrap().replace("\r\n", "\n"),
        golden("fabrikam_v2.h")
    );
    assert_eq!(
        ini_text(&ini).replace("\r\n", "\n"),
        golden("fabrikam_v2.ini")
    );
    // lodctr reads the symbol file the `.ini` names, from the `.ini`'s directory: the name
    // `--symbols` writes, whatever the manifest's.
    let other = dir.join("other.h");
    let out = gen_lodctr(&m, &ini, &other, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = ini_text(&ini);
    assert!(text.contains("\r\nsymbolfile=other.h\r\n"), "{text}");
    assert!(other.is_file());

    // Without -o the module goes to stdout; a user-mode provider gets its user-mode module
    // (the pcw-um code), and a kernel-mode value-block layout in it is refused.
    let out = pcw(&[os("gen"), m.as_os_str()]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        golden("fabrikam_v2.rs")
    );
    let user_out = dir.join("tidal_user.rs");
    let out = pcw(&[
        os("gen"),
        manifest("tidal_user.man").as_os_str(),
        os("-o"),
        user_out.as_os_str(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&user_out).unwrap(),
        golden("tidal_user.rs")
    );

    // --ini without --symbols is a usage error.
    let out = pcw(&[os("gen"), m.as_os_str(), os("--ini"), ini.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn gen_names_the_driver_service_and_refuses_a_name_no_service_can_have() {
    let dir = scratch("gen-driver-name");
    let (ini, other) = (dir.join("f.ini"), dir.join("other.h"));
    let m = manifest("fabrikam_v2.man");
    // `drivername=` is the driver's service: `--driver-name`, else the manifest's file stem. A
    // name no service can have is refused, naming where it came from, and nothing is written.
    let out = gen_lodctr(&m, &ini, &other, &[os("--driver-name"), os("fabq svc")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = ini_text(&ini);
    assert!(
        text.starts_with("[info]\r\ndrivername=fabq svc\r\n"),
        "{text}"
    );
    for bad in ["a/b", "a\\b", ""] {
        let out = gen_lodctr(&m, &ini, &other, &[os("--driver-name"), os(bad)]);
        assert_eq!(out.status.code(), Some(1), "{bad:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is not a service name"),
            "{bad:?}: {stderr}"
        );
        assert_eq!(ini_text(&ini), text, "{bad:?}: the .ini was changed");
    }
    #[cfg(unix)]
    {
        // A manifest whose file name holds a line break: the stem cannot be `drivername=`.
        let odd = dir.join("fab\nsymbolfile=x.man");
        std::fs::copy(&m, &odd).unwrap();
        let out = gen_lodctr(&odd, &ini, &other, &[]);
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(
                "`fab\\u{a}symbolfile=x` (the manifest's file stem) is not a service name: \
                 it holds U+000A (line feed)"
            ) && stderr.contains("--driver-name"),
            "{stderr}"
        );
        assert_eq!(ini_text(&ini), text, "the .ini was changed");
    }
}

#[test]
fn inspect_json_is_the_documented_document() {
    let m = manifest("contoso_v11.man");
    let out = pcw(&[os("inspect"), m.as_os_str(), os("--json")]);
    assert!(out.status.success());
    let mut got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut want: serde_json::Value =
        serde_json::from_str(&golden("contoso_v11.inspect.json")).unwrap();
    // `file` is the path as given on the command line; everything else must match.
    got["file"] = serde_json::Value::Null;
    want["file"] = serde_json::Value::Null;
    assert_eq!(got, want);

    let text = pcw(&[os("inspect"), m.as_os_str()]);
    let text = String::from_utf8(text.stdout).unwrap();
    for set in want["countersets"].as_array().unwrap() {
        assert!(text.contains(set["name"].as_str().unwrap()));
        for c in set["counters"].as_array().unwrap() {
            assert!(text.contains(&format!("0x{:08x}", c["counter_type"].as_u64().unwrap())));
        }
    }
}

/// `pcw lint` and `pcw gen` give one verdict: the issue's three manifests (a user-mode provider
/// with `<structs>`, once accepted by lint and refused by gen; a `reference` counter named
/// `Type`, once accepted by both and generated as a `compile_error!`; a carriage return in a
/// name, once accepted by both) each either fail both with the same diagnostics or pass both.
#[test]
fn lint_and_gen_give_one_verdict() {
    let dir = scratch("verdict");
    let tidal = std::fs::read_to_string(manifest("tidal_user.man")).unwrap();
    let cases = [
        (
            "structs.man",
            tidal.replacen(
                r#"instances="multipleAggregate">"#,
                r#"instances="multipleAggregate"><structs><struct name="S" type="S_T"/></structs>"#,
                1,
            ),
            Some("error: `<structs>` in a `userMode` counterset"),
        ),
        (
            "keyword.man",
            tidal.replacen(r#"name="Pull""#, r#"name="Type""#, 1),
            None,
        ),
        (
            "cr.man",
            tidal.replacen(r#"name="Water Level""#, r#"name="Water&#13;evil: 1""#, 1),
            Some("error: `name` of `<counter>` has U+000D (carriage return) at character 6"),
        ),
    ];
    for (file, text, error) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let lint = pcw(&[os("lint"), path.as_os_str()]);
        let out = dir.join("out.rs");
        let _ = std::fs::remove_file(&out);
        let generated = pcw(&[os("gen"), path.as_os_str(), os("-o"), out.as_os_str()]);
        let lint_err = String::from_utf8_lossy(&lint.stderr).into_owned();
        let gen_err = String::from_utf8_lossy(&generated.stderr).into_owned();
        if let Some(error) = error {
            assert_eq!(lint.status.code(), Some(1), "{file}: {lint_err}");
            assert_eq!(generated.status.code(), Some(1), "{file}: {gen_err}");
            assert!(lint_err.contains(error), "{file}: {lint_err}");
            // The same diagnostics, before each command's own last line.
            let diagnostics = |s: &str| {
                s.lines()
                    .filter(|l| !l.starts_with("error: "))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            };
            assert_eq!(diagnostics(&lint_err), diagnostics(&gen_err), "{file}");
            assert!(!out.exists(), "{file}: gen wrote a refused manifest's code");
        } else {
            assert!(lint.status.success(), "{file}: {lint_err}");
            assert!(generated.status.success(), "{file}: {gen_err}");
            let code = std::fs::read_to_string(&out).unwrap();
            assert!(!code.contains("compile_error!"), "{file}:\n{code}");
            assert!(code.contains("pub fn r#type("), "{file}:\n{code}");
        }
    }
}

/// `pcw gen --to-rust` writes a manifest's declaration; `pcw gen --from-rust` derives the
/// manifest back with its string table and lodctr files, which `pcw lint` passes and which equal
/// the original's outputs.
#[test]
fn gen_moves_a_manifest_to_rust_and_back() {
    let dir = scratch("to-rust");
    let decl = dir.join("northwind_user.rs");
    let out = pcw(&[
        os("gen"),
        os("--to-rust"),
        manifest("northwind_user.man").as_os_str(),
        os("-o"),
        decl.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&decl).unwrap();
    assert!(
        text.contains("pcw_declare::counters!") && text.contains("user_mode"),
        "{text}"
    );

    let man = dir.join("northwind_user.man");
    let (rc, ini, symbols) = (
        dir.join("n.rc"),
        dir.join("n.ini"),
        dir.join("northwind_user.h"),
    );
    let out = pcw(&[
        os("gen"),
        os("--from-rust"),
        decl.as_os_str(),
        os("-o"),
        man.as_os_str(),
        os("--rc"),
        rc.as_os_str(),
        os("--ini"),
        ini.as_os_str(),
        os("--symbols"),
        symbols.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // As `pcw gen` of a manifest: no fleet advice (that is `pcw lint`'s, which names the lines
    // of the manifest it reads, not of a file the user never gave).
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lint = pcw(&[os("lint"), man.as_os_str()]);
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stderr)
    );
    // The derived strings are the original's.
    let generate = |path: &Path| {
        let input = pcw_gen::Input::read(path).unwrap();
        pcw_gen::Config::new().generate(&input).unwrap()
    };
    let original = generate(&manifest("northwind_user.man"));
    let derived = generate(&man);
    assert_eq!(original.rust, derived.rust);
    assert_eq!(std::fs::read(&ini).unwrap(), original.ini);
    assert_eq!(std::fs::read_to_string(&rc).unwrap(), derived.rc);
}

/// A manifest `pcw lint` has fleet advice for (a `multipleAggregate` set's `_Total`,
/// `defaultScale` on raw counts): `pcw gen` of it and of its declaration alike say nothing of
/// it, where `--from-rust` printed lint's advice at lines of the derived manifest, under the
/// name of a file that was not its input.
#[test]
fn gen_from_rust_leaves_fleet_advice_to_lint_as_gen_does() {
    let dir = scratch("from-rust-quiet");
    let xdp = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/xdp_like.man");
    let lint = pcw(&[os("lint"), os(&xdp)]);
    assert!(
        String::from_utf8_lossy(&lint.stdout).contains("warning")
            || String::from_utf8_lossy(&lint.stderr).contains("warning"),
        "the fixture draws fleet advice"
    );
    let decl = dir.join("xdp_like.rs");
    let to = pcw(&[
        os("gen"),
        os("--to-rust"),
        os(&xdp),
        os("-o"),
        decl.as_os_str(),
    ]);
    assert!(to.status.success() && to.stderr.is_empty(), "{to:?}");
    let plain = pcw(&[os("gen"), os(&xdp)]);
    assert!(
        plain.status.success() && plain.stderr.is_empty(),
        "{plain:?}"
    );
    let from = pcw(&[os("gen"), os("--from-rust"), decl.as_os_str()]);
    assert!(from.status.success(), "{from:?}");
    assert!(
        from.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&from.stderr)
    );
}

/// A declaration with a problem writes nothing and names the problem at `file:line:column` of
/// the Rust file.
#[test]
fn gen_from_rust_reports_declaration_errors_at_their_tokens() {
    let dir = scratch("from-rust-error");
    let decl = dir.join("bad.rs");
    std::fs::write(
        &decl,
        "pcw_declare::counters! {\n    #[provider(name = \"Bad\", kernel_mode, application_identity = \"bad.sys\")]\n    pub mod bad {\n        #[counterset(name = \"Q\", description = \"q\", instances = multiple)]\n        struct Q {\n            #[counter(id = 1, type = perf_counter_rawcount, name = \"A\", description = \"a\")]\n            a: u32,\n            #[counter(id = 1, type = perf_counter_rawcount, name = \"B\", description = \"b\")]\n            b: u32,\n        }\n    }\n}\n",
    )
    .unwrap();
    let man = dir.join("bad.man");
    let out = pcw(&[
        os("gen"),
        os("--from-rust"),
        decl.as_os_str(),
        os("-o"),
        man.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.rs:8:28: error: counter id `1` is used twice in counterset `Q`"),
        "{stderr}"
    );
    assert!(!man.exists());
}

/// The example service's manifest, derived from its declaration, lints without an error and
/// without a warning of the manifest rules (the fleet-readiness advice about exporters, which its
/// `multipleAggregate` set and its scaled raw count draw, is all `pcw lint` says).
#[test]
#[cfg(feature = "example-service")]
fn the_example_service_s_derived_manifest_lints_clean() {
    let dir = scratch("tidal");
    let man = dir.join("tidal_service.man");
    std::fs::write(&man, pcw_tidal::MANIFEST).unwrap();
    let out = pcw(&[os("lint"), man.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains(": error:"), "{stderr}");
    let bytes = pcw_tidal::MANIFEST.as_bytes();
    let input = pcw_gen::Input::new(&man, bytes);
    assert!(pcw_gen::analyze(&input).diagnostics.is_empty());
    let advice = pcw_gen::lint(&input).len();
    assert_eq!(stderr.matches(": warning:").count(), advice, "{stderr}");
}
