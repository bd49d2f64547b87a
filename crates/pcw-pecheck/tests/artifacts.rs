// SPDX-License-Identifier: MIT OR Apache-2.0
//! The real artifacts of `scripts/cross-windows.sh`, checked when `PCW_WINDOWS_ARTIFACTS`
//! names their directory (`scripts/test.sh` sets it after cross-building). Set but missing
//! files fail; unset skips with a note (the checker's own tests in `crafted.rs` always run).
//!
//! Besides passing every check, each artifact is broken on purpose by patching its bytes (the
//! subsystem, the DLL characteristics, an imported DLL's name, an export's name) and the
//! checks must then name the broken fact. The drivers must also carry their manifests' counter
//! names in their string resources, and a string changed in the image must be named.

mod common;

use std::io::Write as _;
use std::path::PathBuf;

use pcw_pecheck::{Fact, Image, check_driver, check_perf_dll, strings};

const DRIVER: &str = "pcw_driver.sys";
const PERF_DLL: &str = "pcw_perfdll.dll";

/// The artifact's bytes, or `None` when `PCW_WINDOWS_ARTIFACTS` is unset (with a note when
/// `note` says so: one per artifact is enough).
fn artifact(name: &str, note: bool) -> Option<Vec<u8>> {
    let Some(dir) = std::env::var_os("PCW_WINDOWS_ARTIFACTS") else {
        if !note {
            return None;
        }
        // Straight to stderr: the test harness captures `eprintln!`, and the note must show.
        let _ = writeln!(
            std::io::stderr(),
            "note: PCW_WINDOWS_ARTIFACTS is not set; skipping the check of {name} \
             (run scripts/cross-windows.sh, then set it to target/windows)"
        );
        return None;
    };
    let mut path = PathBuf::from(dir);
    if path.is_relative() {
        // Relative to the workspace root, where scripts/test.sh runs.
        path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path);
    }
    let path = path.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) => panic!(
            "PCW_WINDOWS_ARTIFACTS is set but {} cannot be read: {e}",
            path.display()
        ),
    }
}

fn messages(result: Result<Image, Vec<Fact>>) -> Vec<String> {
    match result {
        Ok(_) => panic!("the patched artifact passed every check"),
        Err(facts) => facts.iter().map(ToString::to_string).collect(),
    }
}

/// Offset of the optional header (PE32+): `e_lfanew` + 4 + 20.
fn optional_header(bytes: &[u8]) -> usize {
    let lfanew = u32::from_le_bytes(bytes[0x3c..0x40].try_into().unwrap());
    lfanew as usize + 24
}

/// Replaces the first occurrence of `from` (a NUL-terminated name in a string table) by `to`
/// of the same length.
fn patch_name(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let at = bytes
        .windows(from.len() + 1)
        .position(|w| &w[..from.len()] == from && w[from.len()] == 0)
        .unwrap_or_else(|| panic!("{} not found", String::from_utf8_lossy(from)));
    bytes[at..at + to.len()].copy_from_slice(to);
}

#[test]
fn driver_artifact_has_every_fact() {
    let Some(bytes) = artifact(DRIVER, true) else {
        return;
    };
    let image = match check_driver(&bytes) {
        Ok(image) => image,
        Err(facts) => panic!(
            "{DRIVER} breaks PE facts:\n  {}",
            facts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n  ")
        ),
    };
    let mut dlls: Vec<&str> = image.imports.iter().map(|i| i.dll.as_str()).collect();
    dlls.dedup();
    eprintln!(
        "{DRIVER}: subsystem {}, DllCharacteristics {:#06x}, entry {:#x}, {} imports from {dlls:?}, exports {:?}",
        image.subsystem,
        image.dll_characteristics,
        image.entry_point,
        image.imports.len(),
        image.exports.iter().map(|e| &e.name).collect::<Vec<_>>()
    );
}

#[test]
fn driver_artifact_broken_on_purpose_names_the_fact() {
    let Some(bytes) = artifact(DRIVER, false) else {
        return;
    };
    let o = optional_header(&bytes);

    let mut gui = bytes.clone();
    common::put16(&mut gui, o + 68, 2);
    let got = messages(check_driver(&gui));
    assert!(
        got.iter()
            .any(|m| m == "subsystem: expected NATIVE (1), found WINDOWS_GUI (2)"),
        "{got:#?}"
    );

    let mut unsigned = bytes.clone();
    let flags = u16::from_le_bytes([unsigned[o + 70], unsigned[o + 71]]);
    common::put16(&mut unsigned, o + 70, flags & !0x0080);
    let got = messages(check_driver(&unsigned));
    assert!(
        got.iter().any(|m| m.contains("FORCE_INTEGRITY")),
        "{got:#?}"
    );

    // The HAL import renamed to a user-mode DLL of the same length.
    let mut user = bytes.clone();
    let from: &[u8] = if bytes.windows(8).any(|w| w == b"HAL.dll\0") {
        b"HAL.dll"
    } else {
        b"ntoskrnl.exe"
    };
    let to: &[u8] = if from.len() == 7 {
        b"k32.dll"
    } else {
        b"kernel32.dll"
    };
    patch_name(&mut user, from, to);
    let got = messages(check_driver(&user));
    let to = String::from_utf8_lossy(to);
    assert!(
        got.iter()
            .any(|m| m.starts_with("imports:") && m.contains(&format!("`{to}`"))),
        "{got:#?}"
    );
}

#[test]
fn perf_dll_artifact_has_every_fact() {
    let Some(bytes) = artifact(PERF_DLL, true) else {
        return;
    };
    let image = match check_perf_dll(&bytes) {
        Ok(image) => image,
        Err(facts) => panic!(
            "{PERF_DLL} breaks PE facts:\n  {}",
            facts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n  ")
        ),
    };
    let mut dlls: Vec<String> = image.imports.iter().map(|i| i.dll.to_lowercase()).collect();
    dlls.sort();
    dlls.dedup();
    eprintln!(
        "{PERF_DLL}: exports {:?}, imports from {dlls:?}",
        image.exports.iter().map(|e| &e.name).collect::<Vec<_>>()
    );
}

#[test]
fn perf_dll_artifact_broken_on_purpose_names_the_fact() {
    let Some(bytes) = artifact(PERF_DLL, false) else {
        return;
    };
    // An export renamed: one extra, one missing.
    let mut renamed = bytes.clone();
    patch_name(&mut renamed, b"OpenPerformanceData", b"OpenPerformanceDatX");
    let got = messages(check_perf_dll(&renamed));
    assert!(
        got.iter().any(|m| m.starts_with("exports:")
            && m.contains("unexpected: OpenPerformanceDatX")
            && m.contains("missing: OpenPerformanceData")),
        "{got:#?}"
    );
    // An imported DLL renamed to one outside the allow-list.
    let mut user = bytes.clone();
    patch_name(&mut user, b"KERNEL32.dll", b"USER32XX.dll");
    let got = messages(check_perf_dll(&user));
    assert!(
        got.iter()
            .any(|m| m.starts_with("imports:") && m.contains("`USER32XX.dll`")),
        "{got:#?}"
    );
}

/// The manifest each driver image was generated from, relative to the workspace root.
const MANIFESTS: [(&str, &str); 2] = [
    (DRIVER, "manifest/pcw_driver.man"),
    (
        "checksum_driver.sys",
        "examples/checksum-driver/checksum_driver.man",
    ),
];

fn manifest_strings(manifest: &str) -> std::collections::BTreeMap<u32, String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(manifest);
    let xml = std::fs::read_to_string(&path).unwrap();
    strings::manifest_strings(&xml).unwrap()
}

#[test]
fn driver_artifact_carries_the_manifest_strings() {
    for (name, manifest) in MANIFESTS {
        let Some(bytes) = artifact(name, name == DRIVER) else {
            return;
        };
        let expected = manifest_strings(manifest);
        let found = strings::image_strings(&bytes).unwrap();
        let mismatches = strings::compare(&expected, &found);
        assert!(
            mismatches.is_empty(),
            "{name} lacks its counter names, so lodctr /m: and perfmon would show none:\n  {}",
            mismatches
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n  ")
        );
        eprintln!(
            "{name}: all {} strings of {manifest} in RT_STRING",
            expected.len()
        );
    }
}

#[test]
fn driver_artifact_with_a_string_changed_names_it() {
    let Some(mut bytes) = artifact(DRIVER, false) else {
        return;
    };
    // The string table entry: its length in units, then the units (the image also holds the
    // name as the UTF-16 string given to PcwRegister, which the resources do not share).
    let entry = |s: &str| -> Vec<u8> {
        let units: Vec<u16> = s.encode_utf16().collect();
        let mut out = u16::try_from(units.len()).unwrap().to_le_bytes().to_vec();
        out.extend(units.iter().flat_map(|u| u.to_le_bytes()));
        out
    };
    let (from, to) = (entry("Geometric Waves"), entry("Geometric Wavez"));
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("the counterset name is in the image's string table");
    bytes[at..at + to.len()].copy_from_slice(&to);
    let mismatches = strings::compare(
        &manifest_strings("manifest/pcw_driver.man"),
        &strings::image_strings(&bytes).unwrap(),
    );
    let got: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].ends_with(r#"the image has "Geometric Wavez", the manifest says "Geometric Waves""#),
        "{got:#?}"
    );
}
