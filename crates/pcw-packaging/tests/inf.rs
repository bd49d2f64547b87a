// SPDX-License-Identifier: MIT OR Apache-2.0
//! `inf/pcw_driver.inx`: the sections and keys a primitive kernel-driver package needs, every
//! reference resolved, and every file it copies produced by the build.

mod common;

use common::{driver_fs_name, inf, manifest, root_cargo, rust_str_const};

/// The system-defined `SoftwareComponent` setup class.
const SOFTWARE_COMPONENT_GUID: &str = "{5c4c3332-344d-483c-8739-259e934c9cc8}";

/// Every architecture decoration `$ARCH$` becomes after stampinf.
const INSTALL: &str = "DefaultInstall.NT$ARCH$";

#[test]
fn version_section() {
    let inf = inf();
    let version = |key: &str| {
        inf.value("Version", key)
            .unwrap_or_else(|| panic!("[Version] has no {key}"))
            .to_owned()
    };
    assert_eq!(version("Signature"), "$WINDOWS NT$");
    assert_eq!(version("Class"), "SoftwareComponent");
    assert!(version("ClassGuid").eq_ignore_ascii_case(SOFTWARE_COMPONENT_GUID));
    let provider = inf.expand(&version("Provider")).expect("Provider's string");
    assert!(!provider.is_empty());
    assert_eq!(version("CatalogFile"), format!("{}.cat", driver_fs_name()));
    assert_eq!(version("PnpLockdown"), "1");
    // The placeholder stampinf fills (`-d * -v *`).
    assert_eq!(version("DriverVer"), "");
}

#[test]
fn primitive_driver_install_and_service() {
    let inf = inf();
    // A primitive driver: DefaultInstall, no PnP models, no uninstall script.
    for absent in [
        "Manufacturer",
        "DefaultUninstall",
        "DefaultUninstall.NT$ARCH$",
    ] {
        assert!(inf.section(absent).is_none(), "[{absent}] must not exist");
    }
    assert_eq!(inf.value("DestinationDirs", "DefaultDestDir"), Some("13"));
    let install = inf.section(INSTALL).expect("[DefaultInstall.NT$ARCH$]");
    assert!(install.get("CopyFiles").is_some());

    let services = inf
        .section(&format!("{INSTALL}.Services"))
        .expect("[DefaultInstall.NT$ARCH$.Services]");
    let add: Vec<_> = services.all("AddService").collect();
    assert_eq!(add.len(), 1, "one service");
    let add = &add[0].values;
    assert_eq!(add.len(), 3, "AddService = name, flags, section");
    assert_eq!(add[0], "pcw_driver");
    assert_eq!(
        add[0],
        rust_str_const("crates/pcw-perfdll/build.rs", "SERVICE"),
        "the service key is where the V1 DLL's Performance values go"
    );
    let service = inf.section(&add[2]).expect("the service-install section");
    let key = |k: &str| service.get(k).unwrap_or_else(|| panic!("no {k}")).first();
    assert_eq!(key("ServiceType"), "1", "SERVICE_KERNEL_DRIVER");
    assert_eq!(key("StartType"), "3", "SERVICE_DEMAND_START");
    assert_eq!(key("ErrorControl"), "1", "SERVICE_ERROR_NORMAL");
    let sys = format!("{}.sys", driver_fs_name());
    assert_eq!(key("ServiceBinary"), format!("%13%\\{sys}"));
    assert!(
        !inf.expand(key("DisplayName"))
            .unwrap_or_default()
            .is_empty()
    );
}

#[test]
fn every_copied_file_is_built_and_sourced() {
    let inf = inf();
    let fs_name = driver_fs_name();
    // The root package's cdylib is `<fs_name>.dll`, which wdk-build's
    // `generate-driver-binary-file` renames to `<fs_name>.sys` (scripts/cross-windows.sh too).
    let crate_types = root_cargo()["lib"]["crate-type"]
        .as_array()
        .expect("lib.crate-type")
        .clone();
    assert!(crate_types.iter().any(|t| t.as_str() == Some("cdylib")));
    let built = [format!("{fs_name}.sys")];
    // The manifest names the same binary: lodctr /m: loads the counter strings from it.
    assert_eq!(manifest().provider.application_identity, built[0]);

    let mut copied = Vec::new();
    for section in &inf.sections {
        for entry in section.all("CopyFiles") {
            for list in &entry.values {
                let files = inf
                    .section(list)
                    .unwrap_or_else(|| panic!("CopyFiles section [{list}] is missing"));
                copied.extend(files.bare().map(str::to_owned));
            }
        }
    }
    assert!(!copied.is_empty());
    let sourced = inf.section("SourceDisksFiles").expect("[SourceDisksFiles]");
    let disks = inf.section("SourceDisksNames").expect("[SourceDisksNames]");
    for file in &copied {
        assert!(built.contains(file), "{file} is copied but not built");
        let entry = sourced
            .get(file)
            .unwrap_or_else(|| panic!("{file} not in [SourceDisksFiles]"));
        assert!(
            disks.get(entry.first()).is_some(),
            "{file}'s disk {} is not in [SourceDisksNames]",
            entry.first()
        );
    }
}

#[test]
fn every_reference_resolves() {
    let inf = inf();
    for section in &inf.sections {
        for entry in &section.entries {
            for value in entry.values.iter().chain(entry.key.iter()) {
                assert!(
                    inf.expand(value).is_some(),
                    "[{}] line {}: `{value}` uses an undefined %string%",
                    section.name,
                    entry.line
                );
            }
        }
    }
    for (section, key) in [(INSTALL, "CopyFiles")] {
        for entry in inf.section(section).expect("section").all(key) {
            for target in &entry.values {
                assert!(inf.section(target).is_some(), "[{target}] is missing");
            }
        }
    }
}

#[test]
fn control_device_security_is_documented_not_misapplied() {
    let inf = inf();
    let sddl = pcw_driver::control::DEVICE_SDDL;
    // An INF Security value cannot reach a legacy device object (see the INF's comment); none
    // may pretend to.
    for section in &inf.sections {
        for entry in &section.entries {
            let security = entry
                .values
                .iter()
                .any(|v| v.eq_ignore_ascii_case("Security"));
            assert!(
                !security,
                "[{}] line {}: a Security value does not protect \\Device\\PcwRs",
                section.name, entry.line
            );
        }
    }
    // The comment quotes the SDDL verbatim, so changing it in src/control.rs finds this file.
    assert!(
        inf.comments.iter().any(|c| c == sddl),
        "the INF's security comment must quote DEVICE_SDDL `{sddl}`"
    );
    assert!(
        inf.comments
            .iter()
            .any(|c| c.contains("IoCreateDeviceSecure"))
    );
    assert!(
        inf.comments
            .iter()
            .any(|c| c.contains(pcw_driver::control::DEVICE_NAME))
    );
}
