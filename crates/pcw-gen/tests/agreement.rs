// SPDX-License-Identifier: MIT OR Apache-2.0
//! Lint and gen share one analysis: over every manifest in the repository (`git ls-files
//! '*.man'`: the project's, the golden and the CLI fixtures) and both fuzz corpora of manifests,
//! `pcw lint` ([`pcw_gen::lint`]) reports an error exactly when [`Config::generate`]
//! refuses the manifest, and then with the same diagnostics; what it accepts generates Rust that
//! parses and is no `compile_error!`. What only the V1 tables refuse ([`Config::v1_tables`]), lint
//! warns about.

mod common;

use std::path::{Path, PathBuf};

use common::{root, tracked_manifests};
use pcw_gen::{Config, Diagnostic, Error, Input};

/// Every file of a fuzz corpus.
fn corpus(name: &str) -> Vec<PathBuf> {
    let dir = root().join("fuzz/corpus").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn errors(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    diagnostics.iter().filter(|d| d.is_error()).collect()
}

/// The counter a V1 diagnostic is about: the number in its leading "counter `N`".
fn counter_of(message: &str) -> &str {
    message
        .strip_prefix("counter `")
        .and_then(|r| r.split('`').next())
        .unwrap_or_else(|| panic!("no counter in `{message}`"))
}

/// The verdicts agree for one file; returns whether it was accepted.
fn agree(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    let lint = pcw_gen::lint(&Input::new(path, &bytes));
    let shown = path.display();
    match Config::new().generate(&Input::new(path, &bytes)) {
        Ok(generated) => {
            assert!(
                errors(&lint).is_empty(),
                "{shown}: generated, but lint reports\n{}",
                Diagnostic::render_all(&lint)
            );
            assert!(
                !generated.rust.contains("compile_error!"),
                "{shown}:\n{}",
                generated.rust
            );
            syn::parse_file(&generated.rust).unwrap_or_else(|e| panic!("{shown}: {e}"));
            match Config::new().v1_tables(&Input::new(path, &bytes)) {
                Ok(_) => {}
                Err(Error::Manifest { diagnostics }) => {
                    for d in errors(&diagnostics) {
                        let counter = format!("counter `{}`", counter_of(&d.message));
                        assert!(
                            lint.iter().any(|w| !w.is_error()
                                && w.message.contains(&counter)
                                && w.message.contains("v1")),
                            "{shown}: lint does not warn about what the v1 tables refuse: {}\n{}",
                            d.render(),
                            Diagnostic::render_all(&lint)
                        );
                    }
                }
                Err(e) => panic!("{shown}: {e}"),
            }
            true
        }
        Err(Error::Manifest { diagnostics }) => {
            assert!(
                !errors(&diagnostics).is_empty(),
                "{shown}: refused without an error"
            );
            assert_eq!(
                lint, diagnostics,
                "{shown}: lint and gen report differently"
            );
            false
        }
        Err(e) => panic!("{shown}: not a manifest diagnostic: {e}"),
    }
}

#[test]
fn lint_and_gen_agree_on_every_manifest_and_corpus_file() {
    let tracked = tracked_manifests();
    assert!(
        tracked.len() >= 10,
        "the repository's manifests were not found: {tracked:?}"
    );
    let analyze = corpus("manifest_analyze");
    let generate = corpus("manifest_generate");
    assert!(!analyze.is_empty() && !generate.is_empty());
    let all: Vec<&PathBuf> = tracked.iter().chain(&analyze).chain(&generate).collect();
    let accepted = all.iter().filter(|path| agree(path)).count();
    // Both verdicts occur: the repository's manifests are valid, the corpora hold broken ones.
    assert!(
        accepted > 0 && accepted < all.len(),
        "{accepted} of {} accepted",
        all.len()
    );
}

/// The divergences this test exists for, as manifests of their own: a `userMode` provider with
/// `<structs>` (lint used to accept it, gen refused it), a counterset whose counters name
/// different object-time counters (only the V1 tables refuse it; lint warns), and an ignored
/// `baseID` (the V1 tables used to refuse it).
#[test]
fn former_divergences() {
    let dir = std::env::temp_dir().join(format!("pcw-gen-agreement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests");

    let northwind = std::fs::read_to_string(manifests.join("northwind_user.man")).unwrap();
    let structs = northwind.replacen(
        r#"instances="multiple">"#,
        r#"instances="multiple"><structs><struct name="Orders" type="ORDERS"/></structs>"#,
        1,
    );
    let path = dir.join("user_structs.man");
    std::fs::write(&path, structs).unwrap();
    assert!(!agree(&path));

    let fabrikam = std::fs::read_to_string(manifests.join("fabrikam_v2.man")).unwrap();
    // A second elapsed-time counter reading another time counter than counter 10 does.
    let two_times = fabrikam.replacen(
        r#"<counter id="11" "#,
        r#"<counter id="13" uri="Fabrikam.Queue.PerQueue.Age2" field="CreatedAt2" name="Queue Age 2" nameID="900" description="Age again." descriptionID="902" type="perf_elapsed_time" perfTimeID="12" perfFreqID="12" detailLevel="standard"/>
          <counter id="11" "#,
        1,
    );
    let path = dir.join("two_times.man");
    std::fs::write(&path, &two_times).unwrap();
    assert!(agree(&path));
    let Err(Error::Manifest { .. }) =
        Config::new().v1_tables(&Input::new(&path, two_times.as_bytes()))
    else {
        panic!("the v1 tables accepted two time counters");
    };

    // A `baseID` on a type that reads no base is ignored (lint warns so), by the V1 tables too.
    let ignored = fabrikam.replacen(
        r#"<counter id="2" uri="Fabrikam.Queue.PerQueue.Completed""#,
        r#"<counter id="2" baseID="9" uri="Fabrikam.Queue.PerQueue.Completed""#,
        1,
    );
    let path = dir.join("ignored_base.man");
    std::fs::write(&path, &ignored).unwrap();
    assert!(agree(&path));
    assert!(
        pcw_gen::lint(&Input::new(&path, &ignored))
            .iter()
            .any(|w| w.message.starts_with("`baseID` is ignored"))
    );
    Config::new()
        .v1_tables(&Input::new(&path, ignored.as_bytes()))
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
}
