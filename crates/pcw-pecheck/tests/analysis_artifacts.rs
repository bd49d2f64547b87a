// SPDX-License-Identifier: MIT OR Apache-2.0
//! The code analyses on the real artifacts of `scripts/cross-windows.sh`, when
//! `PCW_WINDOWS_ARTIFACTS` names their directory and `PCW_DRIVER_PDB` the driver's PDB
//! (`scripts/test.sh` sets both after cross-building; unset skips with a note).
//!
//! Each check passes on the artifacts as built, and fails when the artifact (or the check's
//! input) is given the bug the check exists for: a root the image does not have, a frame over
//! the limit, an x87 or AVX instruction patched into a callback, a DLL without its
//! `CollectPerformanceData` symbol.

use std::io::Write as _;
use std::path::PathBuf;

use pcw_pecheck::code::Program;
use pcw_pecheck::{constraints, nopanic};

fn from_env(var: &str, file: Option<&str>) -> Option<String> {
    let Some(v) = std::env::var_os(var) else {
        let _ = writeln!(
            std::io::stderr(),
            "note: {var} is not set; skipping (run scripts/cross-windows.sh, then set \
             PCW_WINDOWS_ARTIFACTS=target/windows and PCW_DRIVER_PDB to the driver's PDB)"
        );
        return None;
    };
    let mut path = PathBuf::from(v);
    if path.is_relative() {
        path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path);
    }
    if let Some(f) = file {
        path.push(f);
    }
    assert!(path.is_file(), "{var}: {} is missing", path.display());
    Some(path.to_string_lossy().into_owned())
}

fn driver() -> Option<Program> {
    let sys = from_env("PCW_WINDOWS_ARTIFACTS", Some("pcw_driver.sys"))?;
    let pdb = from_env("PCW_DRIVER_PDB", None)?;
    let mut p = Program::open(&sys, false).unwrap();
    p.add_pdb_publics(&sys, &pdb).unwrap();
    Some(p)
}

fn dll() -> Option<Program> {
    let path = from_env("PCW_WINDOWS_ARTIFACTS", Some("pcw_perfdll.dll"))?;
    Some(Program::open(&path, true).unwrap())
}

#[test]
fn the_driver_is_panic_free_and_a_missing_root_fails() {
    let Some(p) = driver() else { return };
    let r = nopanic::check_driver(&p, nopanic::DRIVER_ROOTS, false);
    assert!(r.ok(), "{r}");
    assert_eq!(r.roots.len(), nopanic::DRIVER_ROOTS.len());

    let mut roots = nopanic::DRIVER_ROOTS.to_vec();
    roots.push(("waves::collect (renamed)", "10pcw_driver5waves7collect"));
    let r = nopanic::check_driver(&p, &roots, false);
    assert!(!r.ok(), "{r}");
    assert_eq!(r.roots.last().unwrap().verdict, nopanic::Verdict::Missing);
}

#[test]
fn a_pdb_of_another_build_is_refused() {
    let (Some(sys), Some(pdb)) = (
        from_env("PCW_WINDOWS_ARTIFACTS", Some("pcw_driver.sys")),
        from_env("PCW_DRIVER_PDB", None),
    ) else {
        return;
    };
    // The image's CodeView record names the PDB's GUID: change one byte of it in a copy.
    let mut image = std::fs::read(&sys).unwrap();
    let file = object::read::pe::PeFile64::parse(&*image).unwrap();
    let guid = object::Object::pdb_info(&file).unwrap().unwrap().guid();
    let at = image.windows(16).position(|w| w == guid).unwrap();
    image[at] ^= 0xFF;
    let copy = std::env::temp_dir().join(format!("pcw-pecheck-stale-{}.sys", std::process::id()));
    std::fs::write(&copy, &image).unwrap();
    let copy = copy.to_string_lossy().into_owned();
    let mut p = Program::open(&copy, false).unwrap();
    let err = p.add_pdb_publics(&copy, &pdb).unwrap_err();
    let _ = std::fs::remove_file(&copy);
    assert!(
        matches!(err, pcw_pecheck::code::AnalysisError::PdbMismatch { .. }),
        "{err}"
    );
    assert!(p.names.is_empty());
}

#[test]
fn the_driver_keeps_the_kernel_constraints_and_each_one_fails_on_its_bug() {
    let Some(mut p) = driver() else { return };
    let r = constraints::check(&p, constraints::ROOTS, constraints::FRAME_LIMIT, false).unwrap();
    assert!(r.failures.is_empty(), "{r}");
    assert!(r.sse_data > 0, "{r}");

    // A limit just below the largest frame reachable from a root: that frame is named.
    let largest = r.roots.iter().map(|x| x.largest.clone()).max().unwrap();
    let limit = largest.0 - 1;
    let tight = constraints::check(&p, constraints::ROOTS, limit, false).unwrap();
    let needle = format!("{}: frame {} B > {limit} B", largest.1, largest.0);
    assert!(
        tight.failures.iter().any(|f| f.contains(&needle)),
        "{tight}"
    );

    // A root the image lacks.
    let mut roots = constraints::ROOTS.to_vec();
    roots.push(("renamed", "10pcw_driver5waves7collect"));
    let r = constraints::check(&p, &roots, constraints::FRAME_LIMIT, false).unwrap();
    assert!(
        r.failures.iter().any(|f| f.contains("renamed: not found")),
        "{r}"
    );

    // x87 (`fld dword ptr [rax]`), then AVX (`vzeroupper`), patched over the start of the
    // PCW callbacks (pcw-rt's safe callback).
    let callback = p.find("6pcw_rt7publish8callback")[0];
    let off = usize::try_from(callback - p.text_va).unwrap();
    let text = p.regions.iter().position(|r| r.name == ".text").unwrap();
    let original = p.regions[text].data[off..off + 3].to_vec();
    for (patch, what) in [
        (&[0xD9, 0x00, 0x90][..], "x87 instruction in "),
        (&[0xC5, 0xF8, 0x77], "AVX"),
    ] {
        p.regions[text].data[off..off + 3].copy_from_slice(patch);
        let r =
            constraints::check(&p, constraints::ROOTS, constraints::FRAME_LIMIT, false).unwrap();
        assert!(
            r.failures
                .iter()
                .any(|f| f.starts_with(what) && f.contains("pcw_rt::publish::callback")),
            "{r}"
        );
    }
    p.regions[text].data[off..off + 3].copy_from_slice(&original);
}

#[test]
fn the_dll_exports_are_panic_free() {
    let Some(p) = dll() else { return };
    let r = nopanic::check_dll(&p, false);
    assert!(r.ok(), "{r}");
    // Open is a root of its own, held to every sink (allocation failure included) ...
    assert_eq!(r.roots[2].title, "OpenPerformanceData", "{r}");
    // ... and the trait objects' vtables were found: the combined root names them.
    assert!(r.roots[3].title.contains("vtables"), "{r}");

    // A DLL whose Collect symbol is gone fails rather than passing vacuously.
    let mut stripped = p.clone();
    stripped.names.retain(|_, n| n != "CollectPerformanceData");
    let r = nopanic::check_dll(&stripped, false);
    assert!(!r.ok(), "{r}");
}
