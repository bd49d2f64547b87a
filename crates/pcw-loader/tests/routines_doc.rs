// SPDX-License-Identifier: MIT OR Apache-2.0
//! `docs/loader-routines.md` is what the loader's tables say: fails when the committed file
//! differs from `pcw_loader::routines_doc::markdown()`. `PCW_BLESS=1` rewrites it.

use pcw_loader::routines_doc::{PATH, markdown};

#[test]
fn the_committed_routine_table_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(PATH);
    let generated = markdown();
    if std::env::var_os("PCW_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{PATH} differs from the loader's tables; regenerate it with \
         `PCW_BLESS=1 cargo test -p pcw-loader --test routines_doc`"
    );
}

/// Every routine is listed once, with a module and a contract, is not also refused, and has
/// exactly one row in the generated file.
#[test]
fn the_table_is_well_formed() {
    let mut names: Vec<&str> = pcw_loader::ntos::ROUTINES.iter().map(|r| r.name).collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "a routine listed twice");
    for r in pcw_loader::ntos::ROUTINES {
        assert!(
            !r.modules.is_empty() && !r.contract.is_empty(),
            "{}",
            r.name
        );
        assert!(
            pcw_loader::ntos::REFUSED
                .iter()
                .all(|(name, _)| *name != r.name),
            "{} is both bound and refused",
            r.name
        );
    }
    let text = markdown();
    for r in pcw_loader::ntos::ROUTINES {
        assert_eq!(
            text.matches(&format!("| `{}` |", r.name)).count(),
            1,
            "{}",
            r.name
        );
    }
}
