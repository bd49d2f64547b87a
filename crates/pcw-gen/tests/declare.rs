// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counters declared in Rust (`pcw_gen::declare`): the migration round trip manifest →
//! declaration → derived manifest over every manifest of the repository (`git ls-files
//! '*.man'`) and, when `PCW_MS_SAMPLES` names a directory, over the `.man` files in it
//! (Microsoft's KCS, UCS and GAS samples: see `docs/declaring-counters-in-rust.md` for how to
//! fetch them); and the macro's expansion against the manifest path's generated code, token for
//! token.

use std::path::{Path, PathBuf};
use std::process::Command;

use pcw_gen::declare::{analyze_declarations, expand, to_rust};
use pcw_gen::model::{Manifest, Pos};
use pcw_gen::{Config, Input, analyze};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.man` the repository tracks.
fn repository_manifests() -> Vec<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "*.man"])
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<PathBuf> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| root().join(l))
        .collect();
    assert!(files.len() >= 10, "git ls-files found {files:?}");
    files
}

/// A template's `{{placeholder}}`s (the driver scaffold of `pcw new`) filled as `pcw new`
/// would: GUIDs for `…guid`, a name for the rest; other manifests are left as they are.
fn filled(bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&bytes);
    if !text.contains("{{") {
        return bytes;
    }
    let mut out = String::new();
    let mut rest = text.as_ref();
    while let Some(start) = rest.find("{{") {
        let end = start + rest[start..].find("}}").unwrap();
        let key = &rest[start + 2..end];
        out.push_str(&rest[..start]);
        if key.ends_with("guid") {
            out.push_str(&pcw_gen::declare::name_guid(key).to_string());
        } else {
            out.push_str("sample_driver");
        }
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out.into_bytes()
}

/// The model without positions (the derived manifest has its own line numbers).
fn without_positions(mut m: Manifest) -> Manifest {
    m.provider.pos = Pos::default();
    for set in &mut m.provider.countersets {
        set.pos = Pos::default();
        for c in &mut set.counters {
            c.pos = Pos::default();
        }
    }
    m
}

/// Manifest → declaration → derived manifest: the same resolved model (provider, sets, GUIDs,
/// counters in V1 order, ids, types, names, descriptions, resource ids, attributes, struct
/// layouts) and the same generated outputs. Returns the declaration.
fn round_trip(path: &Path) -> String {
    let bytes = filled(std::fs::read(path).unwrap());
    let original = analyze(&Input::new(path, &bytes));
    let Some(manifest) = original.manifest else {
        panic!("{}: {:?}", path.display(), original.diagnostics);
    };
    let declaration = to_rust(&Input::new(path, &bytes)).unwrap();
    let decl_file = path.with_extension("rs");
    let analysis = analyze_declarations(&Input::new(&decl_file, declaration.as_bytes()));
    assert_eq!(analysis.declared.len(), 1, "{}", path.display());
    let declared = &analysis.declared[0];
    // Errors of the declaration itself would leave no model; a warning (an error for a
    // declaration) still leaves the derived manifest, which must be the original's equal.
    let derived = analyze(&declared.input());
    let Some(again) = derived.manifest else {
        panic!(
            "{}: the derived manifest has errors: {:#?}\n{}\n{declaration}",
            path.display(),
            derived.diagnostics,
            declared.manifest
        );
    };
    assert_eq!(
        without_positions(again),
        without_positions(manifest),
        "{}: the round trip changed the model\n{declaration}\n{}",
        path.display(),
        declared.manifest
    );
    // Warnings of the original are the derived manifest's, no more and no fewer.
    assert_eq!(
        derived.diagnostics.len(),
        original.diagnostics.len(),
        "{}: {:#?}",
        path.display(),
        derived.diagnostics
    );
    // The same outputs, the file name aside.
    let name = Path::new(path.file_name().unwrap());
    let a = Config::new().generate(&Input::new(name, &bytes)).unwrap();
    let b = Config::new()
        .generate(&Input::new(name, declared.manifest.as_bytes()))
        .unwrap();
    assert_eq!(a.rust, b.rust, "{}", path.display());
    assert_eq!(a.rc, b.rc, "{}", path.display());
    assert_eq!(a.res, b.res, "{}", path.display());
    assert_eq!(a.ini, b.ini, "{}", path.display());
    assert_eq!(a.symbols_h, b.symbols_h, "{}", path.display());
    declaration
}

/// Every repository manifest, among them our own in the shape of Microsoft's samples: the
/// kernel-mode KCS (`manifest/pcw_driver.man`, `examples/c-driver/c_driver.man`), the user-mode
/// UCS (`tidal_user.man`: schema 1.1, `reference` counters, a base before its fraction) and the
/// global-aggregate GAS (`estuary_user.man`).
#[test]
fn every_repository_manifest_round_trips_through_a_declaration() {
    let files = repository_manifests();
    for shaped in [
        "pcw_driver.man",
        "c_driver.man",
        "tidal_user.man",
        "estuary_user.man",
    ] {
        assert!(
            files.iter().any(|f| f.ends_with(shaped)),
            "{shaped} is not tracked"
        );
    }
    for path in files {
        round_trip(&path);
    }
}

/// Microsoft's sample manifests, when a directory of them is given (they are not ours to
/// commit): `PCW_MS_SAMPLES=/path/to/dir cargo test -p pcw-gen --test declare`.
#[test]
fn microsoft_sample_manifests_round_trip_when_given() {
    let Some(dir) = std::env::var_os("PCW_MS_SAMPLES") else {
        eprintln!("PCW_MS_SAMPLES is not set: Microsoft's samples are not checked");
        return;
    };
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "man") {
            round_trip(&path);
            seen += 1;
        }
    }
    assert!(seen > 0, "no .man file in {}", Path::new(&dir).display());
}

/// The macro's expansion is the manifest path's generated module, token for token, for every
/// repository manifest without warnings (a declaration must have none: its warnings are errors).
#[test]
fn the_declaration_expands_to_the_manifest_generated_code() {
    let mut compared = Vec::new();
    for path in repository_manifests() {
        let bytes = filled(std::fs::read(&path).unwrap());
        let clean = analyze(&Input::new(&path, &bytes)).diagnostics.is_empty();
        if !clean {
            continue;
        }
        let declaration = to_rust(&Input::new(&path, &bytes)).unwrap();
        let file: syn::File = syn::parse_str(&declaration).unwrap();
        let syn::Item::Macro(m) = &file.items[0] else {
            panic!("{declaration}")
        };
        let expanded = expand(m.mac.tokens.clone());
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let from_manifest = Config::new()
            .generate(&Input::new(Path::new(&format!("{stem}.man")), &bytes))
            .unwrap()
            .rust;
        let from_manifest: proc_macro2::TokenStream = from_manifest.parse().unwrap();
        assert_eq!(
            expanded.to_string(),
            from_manifest.to_string(),
            "{}",
            path.display()
        );
        compared.push(stem);
    }
    // Both generators are compared: a kernel-mode and a user-mode manifest at least.
    for must in ["pcw_driver", "checksum_driver", "northwind_user"] {
        assert!(
            compared.iter().any(|c| c == must),
            "{must} not compared: {compared:?}"
        );
    }
}

#[test]
fn a_file_nested_too_deep_is_refused_at_its_bracket_without_exhausting_the_stack() {
    let man = root().join("manifest/pcw_driver.man");
    let declaration = to_rust(&Input::new(&man, &std::fs::read(&man).unwrap())).unwrap();
    let lines = declaration.lines().count();
    // A constant of `depth` nested parentheses after the declaration, on a line of its own.
    let with_depth = |depth: usize| {
        format!(
            "{declaration}\nconst X: u8 = {}1{};\n",
            "(".repeat(depth),
            ")".repeat(depth)
        )
    };
    let analyse = |source: String| {
        // A thread of Rust's default 2 MiB: the analysis must fit there, unoptimised too.
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || analyze_declarations(&Input::new("deep.rs", source.as_bytes())))
            .unwrap()
            .join()
            .expect("the analysis returns")
    };
    let deepest = analyse(with_depth(128));
    assert_eq!(deepest.declared.len(), 1, "{:?}", deepest.diagnostics);
    assert!(deepest.diagnostics.is_empty(), "{:?}", deepest.diagnostics);
    for depth in [129, 100_000] {
        let refused = analyse(with_depth(depth));
        assert!(refused.declared.is_empty());
        let [d] = refused.diagnostics.as_slice() else {
            panic!("{:?}", refused.diagnostics);
        };
        assert!(
            d.message.contains("nested more than 128 deep"),
            "{}",
            d.message
        );
        // At the 129th parenthesis: the constant's line, after `const X: u8 = ` and 128 of them.
        assert_eq!((d.pos.line as usize, d.pos.column), (lines + 2, 15 + 128));
    }
    // Nesting that is not brackets: the rest of the file is not parsed, so none of it is
    // refused and none of it exhausts the stack (syn's parser of the whole file overflowed
    // the main thread's 8 MiB on a few hundred levels of each).
    for (what, code) in [
        (
            "generics",
            format!(
                "type T = {}u8{};",
                "Vec<".repeat(20_000),
                ">".repeat(20_000)
            ),
        ),
        ("references", format!("type T = {}u8;", "&".repeat(100_000))),
        (
            "pointers",
            format!("type T = {}u8;", "*const ".repeat(50_000)),
        ),
        (
            "unary operators",
            format!("const X: i8 = {}1;", "- ".repeat(100_000)),
        ),
        (
            "closures",
            format!("fn f() {{ let _ = {}0; }}", "|| ".repeat(50_000)),
        ),
        (
            "else-if chains",
            format!(
                "fn f(x: bool) {{ if x {{}} {} }}",
                "else if x {} ".repeat(20_000)
            ),
        ),
    ] {
        let analysis = analyse(format!("{declaration}\n{code}\n"));
        assert_eq!(
            analysis.declared.len(),
            1,
            "{what}: {:?}",
            analysis.diagnostics
        );
        assert!(
            analysis.diagnostics.is_empty(),
            "{what}: {:?}",
            analysis.diagnostics
        );
    }
    // A file that does not lex is refused where it stops being Rust.
    let broken = analyse(format!("{declaration}\nconst S: &str = \"unterminated;\n"));
    let [d] = broken.diagnostics.as_slice() else {
        panic!("{:?}", broken.diagnostics);
    };
    assert!(
        d.message.starts_with("the file is not Rust"),
        "{}",
        d.message
    );
    assert_eq!(d.pos.line as usize, lines + 2, "{}", d.message);
    // The macro itself refuses the same nesting inside a declaration's tokens.
    let body: proc_macro2::TokenStream = format!(
        "pub mod m {{ const X: u8 = {}1{}; }}",
        "(".repeat(200),
        ")".repeat(200)
    )
    .parse()
    .unwrap();
    let expanded = expand(body).to_string();
    assert!(
        expanded.contains("compile_error") && expanded.contains("nested more than 128 deep"),
        "{expanded}"
    );
}

#[test]
fn declarations_are_found_in_the_files_order_in_inline_modules_and_after_attributes() {
    let man = root().join("manifest/pcw_driver.man");
    let declaration = to_rust(&Input::new(&man, &std::fs::read(&man).unwrap())).unwrap();
    let renamed =
        |module: &str| declaration.replacen("pub mod pcw_driver", &format!("pub mod {module}"), 1);
    assert_ne!(
        renamed("x"),
        declaration,
        "the declaration names its module"
    );
    let source = format!(
        "#![allow(dead_code)]\n{}\npub(crate) mod outer {{\n    #[cfg(all())]\n    mod inner {{\n{}\n    }}\n    fn not_an_item() {{ let _ = 1; }}\n}}\n{}\nfn f() {{ {} }}\n",
        renamed("first"),
        renamed("second"),
        renamed("third"),
        // In a function body: not an item of the file or of a module.
        renamed("ignored"),
    );
    let analysis = analyze_declarations(&Input::new("many.rs", source.as_bytes()));
    let modules: Vec<&str> = analysis
        .declared
        .iter()
        .map(|d| d.module.as_str())
        .collect();
    assert_eq!(
        modules,
        ["first", "second", "third"],
        "{:?}",
        analysis.diagnostics
    );
}
