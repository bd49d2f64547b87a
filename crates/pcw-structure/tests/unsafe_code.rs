// SPDX-License-Identifier: MIT OR Apache-2.0
//! A crate that needs no `unsafe` says so: its root forbids `unsafe_code`, so that the first
//! `unsafe` block written into it is a compile error and a decision, not an accident. A crate
//! "needs" `unsafe` when the keyword appears among its source tokens (inside macro invocations
//! too, which errs towards needing it: a generator quoting `unsafe` code is not held to the rule).

use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn has_unsafe(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => ident == "unsafe",
        TokenTree::Group(group) => has_unsafe(group.stream()),
        _ => false,
    })
}

/// The crate's roots forbid (or deny) `unsafe_code` crate-wide.
fn forbids_unsafe(src: &Path) -> bool {
    let roots = ["lib.rs", "main.rs"].map(|name| src.join(name));
    let roots: Vec<_> = roots.iter().filter(|p| p.exists()).collect();
    !roots.is_empty()
        && roots.iter().all(|root| {
            let file = syn::parse_file(&std::fs::read_to_string(root).unwrap()).unwrap();
            file.attrs.iter().any(|attr| {
                (attr.path().is_ident("forbid") || attr.path().is_ident("deny"))
                    && attr
                        .meta
                        .require_list()
                        .is_ok_and(|list| list.tokens.to_string().contains("unsafe_code"))
            })
        })
}

fn crate_dirs() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs = vec![root.clone()];
    for parent in ["crates", "examples"] {
        for entry in std::fs::read_dir(root.join(parent)).unwrap() {
            let dir = entry.unwrap().path();
            if dir.join("Cargo.toml").exists() {
                dirs.push(dir);
            }
        }
    }
    dirs.sort();
    dirs
}

fn needs_unsafe(src: &Path) -> bool {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.into_iter().any(|file| {
        let text = std::fs::read_to_string(&file).unwrap();
        let tokens: TokenStream = text
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        has_unsafe(tokens)
    })
}

#[test]
fn every_crate_without_unsafe_forbids_it() {
    let dirs = crate_dirs();
    assert!(dirs.len() > 15, "{dirs:?}");
    let missing: Vec<_> = dirs
        .iter()
        .filter(|dir| !needs_unsafe(&dir.join("src")) && !forbids_unsafe(&dir.join("src")))
        .map(|dir| dir.strip_prefix(workspace()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these crates contain no `unsafe` but their roots do not say `#![forbid(unsafe_code)]`: {missing:?}"
    );
}

#[test]
fn the_check_sees_unsafe_inside_macros_and_attributes_at_the_root() {
    assert!(has_unsafe(
        "fn f() { m!(x, { unsafe { g() } }) }".parse().unwrap()
    ));
    assert!(!has_unsafe(
        r#"fn f() { let s = "unsafe"; } // unsafe"#.parse().unwrap()
    ));
    let dir = std::env::temp_dir().join(format!("pcw-structure-unsafe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "//! Doc.\n#![deny(unsafe_code)]\npub fn f() {}\n",
    )
    .unwrap();
    assert!(forbids_unsafe(&dir));
    std::fs::write(
        dir.join("lib.rs"),
        "//! Doc.\n#![deny(missing_docs)]\npub fn f() {}\n",
    )
    .unwrap();
    assert!(!forbids_unsafe(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}
