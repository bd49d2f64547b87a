// SPDX-License-Identifier: MIT OR Apache-2.0
//! The checker itself, on crafted images: a good image passes, and breaking one fact at a time
//! fails with a message that names that fact.

mod common;

use common::{MEM_WRITE, Spec};
use pcw_pecheck::{Fact, Image, check_driver, check_perf_dll};

/// The failures of `check`, as messages; panics when the image passes.
fn failures(check: fn(&[u8]) -> Result<Image, Vec<Fact>>, image: &[u8]) -> Vec<String> {
    match check(image) {
        Ok(_) => panic!("the crafted image passed every check"),
        Err(facts) => facts.iter().map(ToString::to_string).collect(),
    }
}

/// Exactly one failure, whose message contains every part of `expected`.
fn fails_with(check: fn(&[u8]) -> Result<Image, Vec<Fact>>, spec: &Spec, expected: &[&str]) {
    let got = failures(check, &spec.build());
    assert_eq!(got.len(), 1, "expected one failure, got {got:#?}");
    for part in expected {
        assert!(
            got[0].contains(part),
            "`{}` does not contain `{part}`",
            got[0]
        );
    }
}

#[test]
fn a_good_driver_passes_and_its_facts_are_read() {
    let image = check_driver(&Spec::driver().build()).expect("the good driver passes");
    assert_eq!(image.subsystem, 1);
    assert_eq!(image.dll_characteristics, 0x01e0);
    assert_eq!(image.entry_point, 0x1040);
    assert_eq!(image.sections.len(), 2);
    assert_eq!(image.sections[0].name, ".text");
    assert!(image.tls.is_none());
    let functions: Vec<&str> = image.imports.iter().map(|i| i.function.as_str()).collect();
    for required in pcw_pecheck::DRIVER_REQUIRED_IMPORTS {
        assert!(functions.contains(required), "{required} not read");
    }
    assert!(
        image
            .imports
            .iter()
            .any(|i| i.dll == "HAL.dll" && i.function == "KeQueryPerformanceCounter")
    );
    assert_eq!(image.exports.len(), 1);
    assert_eq!(image.exports[0].name, "DriverEntry");
    assert_eq!(image.exports[0].rva, Some(0x1040));
}

#[test]
fn driver_import_from_kernel32_is_named() {
    fails_with(
        check_driver,
        &Spec::driver().import("kernel32.dll", "CreateFileW"),
        &["imports:", "`CreateFileW`", "`kernel32.dll`", "not allowed"],
    );
}

#[test]
fn driver_import_dll_names_compare_case_insensitively() {
    let mut spec = Spec::driver();
    spec.imports[0].0 = "NTOSKRNL.EXE".to_owned();
    spec.imports[1].0 = "hal.DLL".to_owned();
    check_driver(&spec.build()).expect("DLL names are case-insensitive");
}

#[test]
fn driver_subsystem_is_named() {
    let mut spec = Spec::driver();
    spec.subsystem = 2;
    fails_with(
        check_driver,
        &spec,
        &["subsystem: expected NATIVE (1), found WINDOWS_GUI (2)"],
    );
}

#[test]
fn driver_entry_point_elsewhere_is_named() {
    let mut spec = Spec::driver();
    spec.entry = 0x1080;
    fails_with(
        check_driver,
        &spec,
        &["entry point: AddressOfEntryPoint is 0x1080 but `DriverEntry` is at 0x1040"],
    );
}

#[test]
fn driver_entry_symbol_missing_is_named() {
    let mut spec = Spec::driver();
    spec.exports.clear();
    fails_with(
        check_driver,
        &spec,
        &["entry point: `DriverEntry` is not exported"],
    );
}

#[test]
fn driver_force_integrity_and_nx_are_named() {
    let mut spec = Spec::driver();
    spec.dll_characteristics &= !0x0080;
    fails_with(
        check_driver,
        &spec,
        &["DllCharacteristics: FORCE_INTEGRITY (0x0080)"],
    );
    let mut spec = Spec::driver();
    spec.dll_characteristics &= !0x0100;
    fails_with(
        check_driver,
        &spec,
        &["DllCharacteristics: NX_COMPAT (0x0100)"],
    );
}

#[test]
fn driver_missing_required_imports_are_named() {
    let spec = Spec::driver()
        .without_import("PcwUnregister")
        .without_import("IofCompleteRequest");
    fails_with(
        check_driver,
        &spec,
        &["imports: not imported: `PcwUnregister`, `IofCompleteRequest`"],
    );
    for function in pcw_pecheck::DRIVER_REQUIRED_IMPORTS {
        fails_with(
            check_driver,
            &Spec::driver().without_import(function),
            &[&format!("imports: not imported: `{function}`")],
        );
    }
}

#[test]
fn driver_writable_code_section_is_named() {
    let mut spec = Spec::driver();
    spec.text_characteristics |= MEM_WRITE;
    fails_with(
        check_driver,
        &spec,
        &["sections: `.text` is both writable and executable"],
    );
}

#[test]
fn driver_tls_directory_is_named() {
    let mut spec = Spec::driver();
    spec.tls = true;
    fails_with(check_driver, &spec, &["TLS: the image has a TLS directory"]);
}

#[test]
fn every_broken_driver_fact_is_reported_at_once() {
    let mut spec = Spec::driver()
        .import("KERNEL32.dll", "Sleep")
        .without_import("PcwRegister");
    spec.subsystem = 3;
    spec.tls = true;
    let got = failures(check_driver, &spec.build());
    assert_eq!(got.len(), 4, "{got:#?}");
    assert!(got[0].starts_with("subsystem:"));
    assert!(got[1].contains("`KERNEL32.dll`"));
    assert_eq!(got[2], "imports: not imported: `PcwRegister`");
    assert!(got[3].starts_with("TLS:"));
}

#[test]
fn a_good_perf_dll_passes() {
    let image = check_perf_dll(&Spec::perf_dll().build()).expect("the good DLL passes");
    let mut names: Vec<&str> = image.exports.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "ClosePerformanceData",
            "CollectPerformanceData",
            "OpenPerformanceData"
        ]
    );
}

#[test]
fn perf_dll_extra_export_is_named() {
    fails_with(
        check_perf_dll,
        &Spec::perf_dll().export("DllMain", 0x1050),
        &[
            "exports: expected exactly OpenPerformanceData, CollectPerformanceData, ClosePerformanceData",
            "unexpected: DllMain",
            "missing: none",
        ],
    );
}

#[test]
fn perf_dll_missing_export_is_named() {
    let mut spec = Spec::perf_dll();
    spec.exports.retain(|(n, _)| n != "ClosePerformanceData");
    fails_with(
        check_perf_dll,
        &spec,
        &["unexpected: none", "missing: ClosePerformanceData"],
    );
}

#[test]
fn perf_dll_import_outside_the_allow_list_is_named() {
    fails_with(
        check_perf_dll,
        &Spec::perf_dll().import("user32.dll", "MessageBoxW"),
        &["imports: `MessageBoxW` is imported from `user32.dll`, which is not allowed"],
    );
}

#[test]
fn garbage_is_malformed() {
    let got = failures(check_driver, b"MZ not a PE image at all");
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("not a readable PE32+ image"),
        "{}",
        got[0]
    );
    let mut truncated = Spec::driver().build();
    truncated.truncate(0x100);
    let got = failures(check_perf_dll, &truncated);
    assert!(
        got[0].starts_with("not a readable PE32+ image"),
        "{}",
        got[0]
    );
}
