// SPDX-License-Identifier: MIT OR Apache-2.0
//! `Makefile.toml`: it extends wdk-build's makefile the way windows-drivers-rs documents, builds
//! with the `wdk` feature, and every task names files and paths that exist in the repository.
//! cargo-make itself only runs on Windows.

mod common;

use common::{driver_fs_name, exists, read, root_cargo};

fn makefile() -> toml::Table {
    toml::from_str(&read("Makefile.toml")).expect("Makefile.toml parses")
}

fn task(name: &str) -> toml::Table {
    makefile()["tasks"]
        .get(name)
        .and_then(toml::Value::as_table)
        .unwrap_or_else(|| panic!("no [tasks.{name}]"))
        .clone()
}

fn args(task: &toml::Table) -> Vec<String> {
    task.get("args")
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().expect("string arg").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The repository path an argument names, if it names one (`scripts/…`, `manifest/…`,
/// `inf/…`, possibly after `/m:`), with cargo-make's working-directory variable removed.
fn repo_path(arg: &str) -> Option<String> {
    let arg = arg.strip_prefix("/m:").unwrap_or(arg);
    let arg = arg
        .strip_prefix("${CARGO_MAKE_WORKING_DIRECTORY}")
        .map_or(arg, |rest| rest.trim_start_matches(['/', '\\']));
    let normal = arg.replace('\\', "/");
    ["scripts/", "manifest/", "inf/"]
        .iter()
        .any(|p| normal.starts_with(p))
        .then_some(normal)
}

#[test]
fn extends_wdk_builds_makefile() {
    let m = makefile();
    assert_eq!(
        m["extend"].as_str(),
        Some("target/rust-driver-makefile.toml")
    );
    let config = m["config"].as_table().expect("[config]");
    let load = config["load_script"].as_str().expect("load_script");
    assert!(load.contains("wdk_build::cargo_make::load_rust_driver_makefile()"));
    // The script's wdk-build is the one build.rs uses (wdk-build refuses two versions).
    let cargo = root_cargo();
    let spec = &cargo["target"]["cfg(windows)"]["build-dependencies"]["wdk-build"];
    let build_dep = spec
        .as_str()
        .or_else(|| spec.get("version").and_then(toml::Value::as_str))
        .expect("wdk-build build-dependency version")
        .to_owned();
    assert!(
        load.contains(&format!("wdk-build = \"{build_dep}\"")),
        "load_script must use wdk-build {build_dep}"
    );
    assert_eq!(config["default_to_workspace"].as_bool(), Some(false));
}

#[test]
fn builds_with_the_wdk_feature() {
    let m = makefile();
    let flags = m["env"]["CARGO_MAKE_CARGO_BUILD_TEST_FLAGS"]
        .as_str()
        .expect("build flags");
    // The driver only: a bare `cargo build` at the root builds every default member.
    assert!(
        flags
            .split_whitespace()
            .eq(["--package", "pcw-driver", "--features", "wdk"])
    );
    let cargo = root_cargo();
    let feature: Vec<_> = cargo["features"]["wdk"]
        .as_array()
        .expect("feature wdk")
        .iter()
        .map(|v| v.as_str().expect("str"))
        .collect();
    for dep in ["wdk", "wdk-sys", "wdk-alloc", "wdk-panic"] {
        assert!(
            feature.contains(&format!("dep:{dep}").as_str()),
            "wdk enables {dep}"
        );
    }
    // pcw-gen's runtime contract switches to wdk-sys with the driver.
    assert!(
        feature.contains(&"pcw-rt/wdk-sys"),
        "wdk enables pcw-rt/wdk-sys"
    );
    // Optional and Windows-only: no Linux build ever compiles them.
    let windows = cargo["target"]["cfg(windows)"]
        .as_table()
        .expect("cfg(windows)");
    for dep in ["wdk", "wdk-sys", "wdk-alloc", "wdk-panic"] {
        assert_eq!(
            windows["dependencies"][dep]["optional"].as_bool(),
            Some(true),
            "{dep}"
        );
        assert!(
            cargo["dependencies"].get(dep).is_none(),
            "{dep} is Windows-only"
        );
    }
    // wdk-build is a build dependency of Windows hosts, not optional: wdk-build reads its own
    // package from `cargo metadata` with default features, where an optional one is missing.
    let wdk_build = &windows["build-dependencies"]["wdk-build"];
    assert!(
        wdk_build.is_str() || wdk_build.is_table(),
        "wdk-build is a Windows-host build dependency"
    );
    assert_ne!(
        wdk_build.get("optional").and_then(toml::Value::as_bool),
        Some(true),
        "wdk-build must not be optional"
    );
    assert!(cargo["build-dependencies"].get("wdk-build").is_none());
    assert_eq!(
        cargo["package"]["metadata"]["wdk"]["driver-model"]["driver-type"].as_str(),
        Some("WDM")
    );
    // wdk-build refuses to build a kernel driver without the static CRT.
    for triple in ["X86_64", "AARCH64"] {
        let key = format!("CARGO_TARGET_{triple}_PC_WINDOWS_MSVC_RUSTFLAGS");
        assert!(
            m["env"][key.as_str()]
                .as_str()
                .is_some_and(|f| f.contains("+crt-static"))
        );
    }
}

#[test]
fn the_inx_copy_step_points_at_inf() {
    let copy = task("copy-inx-to-output");
    assert_eq!(copy["clear"].as_bool(), Some(true));
    let script = copy["script"].as_str().expect("script");
    let fs_name = driver_fs_name();
    let source = format!("${{CARGO_MAKE_WORKING_DIRECTORY}}/inf/{fs_name}.inx");
    let target = format!("${{WDK_BUILD_OUTPUT_DIRECTORY}}/{fs_name}.inf");
    assert!(
        script.contains(&format!("cp {source} {target}")),
        "{script}"
    );
    assert!(exists(&format!("inf/{fs_name}.inx")));
}

#[test]
fn developer_flow_tasks_exist_and_name_existing_files() {
    let fs_name = driver_fs_name();
    for name in [
        "install-counters",
        "uninstall-counters",
        "perfdll-register",
        "perfdll-unregister",
        "deploy-vm",
        "verify-vm",
    ] {
        let t = task(name);
        assert!(t.contains_key("description"), "{name} has a description");
        assert_eq!(t["workspace"].as_bool(), Some(false), "{name}");
        let args = args(&t);
        let command = t["command"].as_str().expect("command");
        assert!(
            ["powershell.exe", "unlodctr.exe"].contains(&command),
            "{name}: {command}"
        );
        if command == "powershell.exe" {
            let file = args
                .iter()
                .position(|a| a == "-File")
                .map(|i| args[i + 1].clone())
                .expect("-File");
            assert!(file.starts_with("scripts/vm/"), "{name}: {file}");
        }
        for arg in &args {
            if let Some(p) = repo_path(arg) {
                assert!(
                    exists(&p),
                    "{name}: `{arg}` names {p}, which does not exist"
                );
            }
            if arg.contains("_package") {
                assert_eq!(
                    arg,
                    &format!("${{WDK_BUILD_OUTPUT_DIRECTORY}}/{fs_name}_package"),
                    "{name}: wdk-build's package directory"
                );
            }
        }
    }
    // The lodctr pair: install the manifest's counters, and remove them.
    assert!(args(&task("install-counters")).contains(&"manifest/pcw_driver.man".to_owned()));
    assert_eq!(
        args(&task("uninstall-counters")),
        ["/m:manifest\\pcw_driver.man"]
    );
}
