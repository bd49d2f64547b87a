// SPDX-License-Identifier: MIT OR Apache-2.0
//! Golden tests: every output for the project's own manifests, compared with the files in
//! `tests/golden/` (line endings normalised to LF before comparing). Regenerate with
//! `PCW_BLESS=1 cargo test -p pcw-gen --test golden`.

use std::fs;
use std::path::{Path, PathBuf};

use pcw_gen::{Config, Input};

mod common;
use common::{rc_strings, res_strings, utf16le};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(sub)
}

fn normalise(s: &str) -> String {
    s.replace("\r\n", "\n")
}

fn check(name: &str, actual: &str) {
    let path = dir("golden").join(name);
    if std::env::var_os("PCW_BLESS").is_some() {
        fs::create_dir_all(dir("golden")).unwrap();
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `PCW_BLESS=1 cargo test -p pcw-gen --test golden`",
            path.display()
        )
    });
    let (expected, actual) = (normalise(&expected), normalise(actual));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from the golden file at line {}:\n  expected: {:?}\n  actual:   {:?}\n\
             (bless with PCW_BLESS=1 if the change is intended)",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

fn generate(config: &Config, manifest: &str, golden_stem: &str) {
    let path = dir("manifests").join(manifest);
    let bytes = fs::read(&path).unwrap();
    // Label with the bare file name so golden files do not depend on the checkout path.
    let generated = match config.generate(&Input::new(manifest, &bytes)) {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    check(&format!("{golden_stem}.rs"), &generated.rust);
    check(&format!("{golden_stem}.rc"), &generated.rc);
    assert_eq!(
        res_strings(&generated.res),
        rc_strings(&generated.rc),
        "{golden_stem}: the compiled string table must hold exactly the .rc's strings"
    );
    check(&format!("{golden_stem}.h"), &generated.symbols_h);
    check(&format!("{golden_stem}.ini"), &utf16le(&generated.ini));
    check(
        &format!("{golden_stem}.inspect.json"),
        &generated.inspect.to_json(),
    );
    let v1 = match config.v1_tables(&Input::new(manifest, &bytes)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    check(&format!("{golden_stem}.v1.rs"), &v1);
    let warnings: String = generated
        .warnings
        .iter()
        .map(|w| w.render() + "\n")
        .collect();
    check(&format!("{golden_stem}.warnings.txt"), &warnings);
}

#[test]
fn fabrikam_v2() {
    generate(&Config::new(), "fabrikam_v2.man", "fabrikam_v2");
}

#[test]
fn fabrikam_v2_bound_silo_neutral() {
    let mut config = Config::new();
    config
        .silo_neutral(true)
        .runtime_path("::pcw_runtime")
        .module_name("fabrikam_bound")
        .bind_struct("FabDriver", "crate::stats::DriverStats")
        .bind_struct("FabQueue.QueueData", "crate::stats::QueueStats");
    generate(&config, "fabrikam_v2.man", "fabrikam_v2_bound");
}

#[test]
fn contoso_v11() {
    generate(&Config::new(), "contoso_v11.man", "contoso_v11");
}

#[test]
fn user_mode_tidal() {
    generate(&Config::new(), "tidal_user.man", "tidal_user");
}

#[test]
fn user_mode_estuary() {
    generate(&Config::new(), "estuary_user.man", "estuary_user");
}

#[test]
fn user_mode_northwind_custom_runtime() {
    let mut config = Config::new();
    config.user_mode_runtime_path("crate::perflib");
    generate(&config, "northwind_user.man", "northwind_user");
}

#[test]
fn user_mode_struct_layout_is_refused_naming_struct() {
    let path = dir("manifests").join("northwind_user.man");
    let text = fs::read_to_string(&path).unwrap();
    let text = text
        .replacen(
            r#"instances="multiple">"#,
            r#"instances="multiple">
          <structs><struct name="Orders" type="ORDERS"/></structs>"#,
            1,
        )
        .replacen(
            r#"<counter id="1" "#,
            r#"<counter id="1" struct="Orders" field="Open" "#,
            1,
        );
    // Lint (`analyze`), generation and inspect refuse it alike, with one error at `<structs>`.
    let analysis = pcw_gen::analyze(&Input::new(&path, text.as_bytes()));
    let errors: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    assert_eq!(errors.len(), 1, "{:#?}", analysis.diagnostics);
    assert_eq!((errors[0].pos.line, errors[0].pos.column), (13, 11));
    assert!(
        errors[0]
            .message
            .starts_with("`<structs>` in a `userMode` counterset"),
        "{}",
        errors[0].message
    );
    for err in [
        Config::new()
            .generate(&Input::new(&path, text.as_bytes()))
            .map(|_| ())
            .unwrap_err(),
        Config::new()
            .inspect(&Input::new(&path, text.as_bytes()))
            .map(|_| ())
            .unwrap_err(),
    ] {
        let pcw_gen::Error::Manifest { diagnostics } = err else {
            panic!("expected manifest diagnostics, got {err}");
        };
        assert_eq!(diagnostics, analysis.diagnostics);
    }
}

#[test]
fn utf16_and_bomless_variants_generate_the_same_code() {
    let path = dir("manifests").join("fabrikam_v2.man");
    let text = fs::read_to_string(&path).unwrap();
    let reference = Config::new()
        .generate(&Input::new("fabrikam_v2.man", text.as_bytes()))
        .unwrap()
        .rust;
    let utf16le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let utf16be: Vec<u8> = [0xFE, 0xFF]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
        .collect();
    let no_decl = text.replacen("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "", 1);
    let bom8: Vec<u8> = [0xEF, 0xBB, 0xBF]
        .into_iter()
        .chain(no_decl.bytes())
        .collect();
    let crlf = text.replace('\n', "\r\n");
    for bytes in [utf16le, utf16be, bom8, crlf.into_bytes()] {
        let g = Config::new()
            .generate(&Input::new("fabrikam_v2.man", &bytes))
            .unwrap();
        assert_eq!(g.rust, reference);
    }
}

#[test]
fn compile_writes_only_when_changed() {
    let out = std::env::temp_dir().join(format!("pcw-gen-test-{}", std::process::id()));
    let _ = fs::remove_dir_all(&out);
    let manifest = dir("manifests").join("contoso_v11.man");
    let mut config = Config::new();
    config.out_dir(&out).cargo_protocol(false);
    let written = config.compile(&manifest).unwrap();
    let t1 = fs::metadata(&written.rust).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    config.compile(&manifest).unwrap();
    let t2 = fs::metadata(&written.rust).unwrap().modified().unwrap();
    assert_eq!(t1, t2, "unchanged output must not be rewritten");
    assert!(written.ini.exists() && written.rc.exists() && written.symbols_h.exists());
    assert!(written.res.exists());
    // The header is written under the name the `.ini` gives lodctr (`symbolfile=`).
    config.symbol_file("nested/contoso_symbols.h");
    let written = config.compile(&manifest).unwrap();
    assert_eq!(written.symbols_h, out.join("contoso_symbols.h"));
    assert!(written.symbols_h.is_file());
    let ini = fs::read(&written.ini).unwrap();
    let units: Vec<u16> = ini[2..]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let text = String::from_utf16(&units).unwrap();
    assert!(
        text.contains("\r\nsymbolfile=contoso_symbols.h\r\n"),
        "{text}"
    );
    let _ = fs::remove_dir_all(&out);
}

#[test]
fn a_path_a_cargo_directive_cannot_name_is_refused_before_anything_is_written() {
    // A manifest, or an output directory, whose name holds a line break: printed in a
    // `cargo:rerun-if-changed=` or `cargo:rustc-link-arg=` line, the rest of the name would be
    // a directive of its own (`cargo:rustc-link-lib=…`, say).
    let base = std::env::temp_dir().join(format!("pcw-gen-cargo-path-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    fs::create_dir_all(&base).unwrap();
    let text = fs::read(dir("manifests").join("contoso_v11.man")).unwrap();
    let forged = base.join("x\ncargo:rustc-link-lib=evil\n.man");
    fs::write(&forged, &text).unwrap();
    let plain = base.join("contoso_v11.man");
    fs::write(&plain, &text).unwrap();
    for (manifest, out) in [
        (&forged, base.join("out")),
        (&plain, base.join("out\rcargo:rustc-link-lib=evil")),
    ] {
        let err = Config::new().out_dir(&out).compile(manifest).unwrap_err();
        assert!(matches!(err, pcw_gen::Error::CargoPath { .. }), "{err}");
        let message = err.to_string();
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.contains("line break"), "{message}");
        assert!(!out.exists(), "nothing is written for {}", out.display());
    }
    // A declaration source named so is refused the same way, before anything is written.
    let declaration = pcw_gen::declare::to_rust(&Input::new("contoso_v11.man", &text)).unwrap();
    let source = base.join("src\ncargo:rustc-link-lib=evil\n.rs");
    fs::write(&source, declaration).unwrap();
    let out = base.join("declared");
    let err = Config::new()
        .out_dir(&out)
        .compile_declarations(&source)
        .unwrap_err();
    assert!(matches!(err, pcw_gen::Error::CargoPath { .. }), "{err}");
    assert!(!out.exists());
    // Outside a build script the same names are only files, once the driver's service is
    // named: the manifest's file stem, holding a line break, cannot be the `.ini`'s
    // `drivername=` (refused too, before anything is written).
    let out = base.join("out\nplain");
    let err = Config::new()
        .out_dir(&out)
        .cargo_protocol(false)
        .compile(&forged)
        .unwrap_err();
    assert!(
        matches!(
            err,
            pcw_gen::Error::DriverName {
                defaulted: true,
                ..
            }
        ),
        "{err}"
    );
    assert!(!out.exists());
    let written = Config::new()
        .out_dir(&out)
        .cargo_protocol(false)
        .driver_name("contoso")
        .compile(&forged)
        .unwrap();
    assert!(written.rust.exists());
    let _ = fs::remove_dir_all(&base);
}

#[test]
fn unknown_binding_is_a_config_error() {
    let path = dir("manifests").join("fabrikam_v2.man");
    let bytes = fs::read(&path).unwrap();
    let err = Config::new()
        .bind_struct("FabQueue.Nope", "crate::X")
        .generate(&Input::new(&path, &bytes))
        .unwrap_err();
    assert!(err.to_string().contains("`FabQueue.QueueData`"), "{err}");
}

#[test]
fn golden_manifests_cover_every_fixed_size_counter_type() {
    let mut seen = std::collections::BTreeSet::new();
    for m in ["fabrikam_v2.man", "contoso_v11.man"] {
        let bytes = fs::read(dir("manifests").join(m)).unwrap();
        let inspect = Config::new().inspect(&Input::new(m, &bytes)).unwrap();
        for set in &inspect.countersets {
            seen.extend(set.counters.iter().map(|c| c.type_name.clone()));
        }
    }
    let expected: std::collections::BTreeSet<String> = pcw_core::counter_type::MANIFEST_TYPE_NAMES
        .iter()
        .filter(|(_, t)| matches!(t.size(), Some(4 | 8)))
        .map(|(n, _)| (*n).to_owned())
        .collect();
    assert_eq!(expected.len(), 36);
    assert_eq!(seen, expected);
}

#[test]
fn golden_manifests_cover_every_instance_kind() {
    let mut seen = std::collections::BTreeSet::new();
    for m in ["fabrikam_v2.man", "contoso_v11.man"] {
        let bytes = fs::read(dir("manifests").join(m)).unwrap();
        let inspect = Config::new().inspect(&Input::new(m, &bytes)).unwrap();
        seen.extend(inspect.countersets.iter().map(|s| s.instances));
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        pcw_gen::model::Instances::ALL
    );
}

mod arbitrary_text {
    use super::*;
    use proptest::prelude::*;

    fn xml_escape(s: &str) -> String {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('"', "&quot;")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any counter or counterset name/description text yields code that parses (names
        /// flow into string literals, doc comments, identifiers, the `.rc` and the `.ini`).
        #[test]
        fn generated_code_always_parses(
            name in "[^\u{0}-\u{1f}]{1,40}",
            description in "[^\u{0}-\u{1f}]{0,80}",
        ) {
            let text = fs::read_to_string(dir("manifests").join("fabrikam_v2.man")).unwrap();
            let text = text
                .replace("name=\"Queue Depth\"", &format!("name=\"{}\"", xml_escape(&name)))
                .replace(
                    "description=\"Requests waiting in the queue.\"",
                    &format!("description=\"{}\"", xml_escape(&description)),
                )
                .replace(
                    "name=\"Fabrikam Queue\"",
                    &format!("name=\"{} Set\"", xml_escape(&name)),
                );
            match Config::new().generate(&Input::new("p.man", text.as_bytes())) {
                Ok(g) => {
                    prop_assert!(syn::parse_file(&g.rust).is_ok(), "{}", g.rust);
                }
                // A name can collide with another one (case-insensitively) or look like a
                // `$(string.…)` reference: those are reported, not generated.
                Err(pcw_gen::Error::Manifest { diagnostics }) => {
                    prop_assert!(diagnostics.iter().any(pcw_gen::Diagnostic::is_error));
                }
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}

#[test]
fn errors_debug_print_like_display_for_build_scripts() {
    let err = Config::new()
        .generate(&Input::new("bad.man", b"<instrumentationManifest/>"))
        .unwrap_err();
    assert_eq!(format!("{err:?}"), err.to_string());
    assert!(
        err.to_string()
            .starts_with("bad.man:1:1: error: the manifest has no `<counters>` section\n"),
        "{err}"
    );
}

/// The inspect document's `v1_offset`s are the `.h` symbol file's values, in its order: the
/// object, then each non-base counter; base counters have none.
#[test]
fn inspect_v1_offsets_match_the_symbol_file() {
    for manifest in ["contoso_v11.man", "fabrikam_v2.man"] {
        let bytes = fs::read(dir("manifests").join(manifest)).unwrap();
        let generated = Config::new()
            .generate(&Input::new(manifest, &bytes))
            .unwrap();
        let from_h: Vec<u32> = generated
            .symbols_h
            .lines()
            .filter_map(|l| l.strip_prefix("#define "))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        let mut from_inspect = Vec::new();
        for set in &generated.inspect.countersets {
            from_inspect.push(set.v1_offset);
            for c in &set.counters {
                let base = pcw_core::counter_type::CounterType::from_raw(c.counter_type).is_base();
                assert_eq!(c.v1_offset.is_none(), base, "{manifest}: {:?}", c.symbol);
                from_inspect.extend(c.v1_offset);
            }
        }
        assert_eq!(from_inspect, from_h, "{manifest}");
    }
}

/// Countersets, structs, fields and counters named like generated items, parameters and Rust
/// keywords: the generator renames or escapes them (`tests/golden/hostile_names.rs`), and
/// pcw-gen-check compiles and uses the result (`tests/ui-pass/hostile_names.rs`).
#[test]
fn hostile_names_are_renamed_or_escaped() {
    generate(&Config::new(), "hostile_names.man", "hostile_names");
}

#[test]
fn the_driver_service_name_is_one_a_service_key_can_have() {
    let path = dir("manifests").join("fabrikam_v2.man");
    let bytes = fs::read(&path).unwrap();
    let input = Input::new(&path, &bytes);
    // 256 UTF-16 units is the longest service name: 255 units and a character outside the BMP
    // (two units) is 257.
    let longest = "s".repeat(256);
    let tables = Config::new()
        .driver_name(longest.clone())
        .v1_tables(&input)
        .unwrap();
    assert!(tables.contains(&format!("\"{longest}\"")));
    for (name, reason) in [
        (format!("{}😀", "s".repeat(255)), "257 UTF-16 units"),
        (String::new(), "it is empty"),
        ("fab\\queue".to_owned(), "holds no `/` or `\\`"),
        ("fab\u{200f}queue".to_owned(), "it holds U+200F"),
    ] {
        for refused in [
            Config::new()
                .driver_name(name.clone())
                .generate(&input)
                .err(),
            Config::new()
                .driver_name(name.clone())
                .v1_tables(&input)
                .err(),
        ] {
            let err = refused.unwrap_or_else(|| panic!("{name:?} was taken as a service name"));
            assert!(
                matches!(
                    err,
                    pcw_gen::Error::DriverName {
                        defaulted: false,
                        ..
                    }
                ),
                "{err}"
            );
            let message = err.to_string();
            assert!(message.contains(reason), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
        }
    }
}
