// SPDX-License-Identifier: MIT OR Apache-2.0
//! Compile-fail tests of the safe callback's types (trybuild; the expected compiler output is
//! committed next to each case in `tests/ui/`): a publisher registered for a counterset it does
//! not implement `Publish` for, a values closure returning another counterset's values, and a
//! publisher that is not `Sync`; plus one case that must compile and run, the generated code of a
//! manifest whose names collide with generated items and keywords. Re-bless with `TRYBUILD=overwrite` after a compiler upgrade
//! changes the wording, and review the diff.

#[test]
fn misuse_of_the_safe_callback_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

/// The generated code of a manifest whose names collide with generated items and Rust
/// keywords compiles and registers (`tests/ui-pass/hostile_names.rs`).
#[test]
fn colliding_manifest_names_are_made_safe() {
    trybuild::TestCases::new().pass("tests/ui-pass/*.rs");
}

/// Invalid `counters!` declarations are compile errors at the token each problem is about
/// (`tests/ui-declare/`): a duplicate id, a base counter no counter names, an unknown type, an
/// aggregate on a single-instance set, two sets with one GUID, a field of the wrong size, an
/// unknown key, a provider of no mode.
#[test]
fn invalid_declarations_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/ui-declare/*.rs");
}

/// Declarations of both modes compile against the runtimes and work as the manifest path's
/// code does (`tests/ui-pass-declare/`).
#[test]
fn declared_counters_compile_and_register() {
    trybuild::TestCases::new().pass("tests/ui-pass-declare/*.rs");
}

/// pcw-rt built with neither binding feature stops at its `compile_error!`, which says which
/// features to choose (checked by building it alone, in a target directory of its own).
#[test]
fn pcw_rt_without_a_binding_names_the_features() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["check", "--quiet", "--offline", "--locked", "-p", "pcw-rt"])
        .env("CARGO_TARGET_DIR", root.join("target/compile-fail-pcw-rt"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "pcw-rt compiled without a binding:\n{stderr}"
    );
    assert!(
        stderr.contains("error: pcw-rt needs a binding: enable its `windows-sys` feature")
            && stderr.contains("or its `wdk-sys`"),
        "{stderr}"
    );
    // The one error is the hint: no cascade of unresolved items after it.
    assert_eq!(stderr.matches("error[").count(), 0, "{stderr}");
}
