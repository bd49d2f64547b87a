// SPDX-License-Identifier: MIT OR Apache-2.0
//! `scripts/vm/*.ps1` and the README's "On Windows" section agree with the manifest, the INF,
//! the driver's constants and each other: counterset and counter names, the service name,
//! paths, the provider GUID, the control device and its SDDL. PowerShell
//! does not run here, so the scripts are also checked for balanced brackets and strings.

mod common;

use common::{
    exists, inf, manifest, ps_list, ps_string, ps_table, read, rust_str_const, scripts, symbols_h,
    waves,
};

fn common_ps1() -> String {
    read("scripts/vm/Common.ps1")
}

fn readme_windows() -> String {
    let readme = read("README.md");
    let start = readme
        .find("## On Windows")
        .expect("README has an On Windows section");
    readme[start..].to_owned()
}

fn counter_names(set: &str) -> Vec<String> {
    manifest()
        .provider
        .countersets
        .iter()
        .find(|s| s.name == set)
        .unwrap_or_else(|| panic!("no counterset {set}"))
        .counters
        .iter()
        .filter_map(|c| c.name.clone())
        .collect()
}

#[test]
fn common_ps1_names_match_the_sources() {
    let ps = common_ps1();
    let m = manifest();
    let add_service = inf()
        .section("DefaultInstall.NT$ARCH$.Services")
        .and_then(|s| s.get("AddService"))
        .map(|e| e.first().to_owned())
        .expect("AddService");
    assert_eq!(ps_string(&ps, "PcwServiceName"), add_service);
    assert_eq!(
        ps_string(&ps, "PcwSysName"),
        m.provider.application_identity
    );
    assert_eq!(ps_string(&ps, "PcwInfName"), "pcw_driver.inf");
    assert_eq!(
        ps_string(&ps, "PcwCatName"),
        inf().value("Version", "CatalogFile").expect("CatalogFile")
    );
    assert_eq!(ps_string(&ps, "PcwManifestName"), "pcw_driver.man");
    assert!(exists(&format!(
        "manifest/{}",
        ps_string(&ps, "PcwManifestName")
    )));
    assert_eq!(
        ps_string(&ps, "PcwProviderGuid"),
        m.provider.guid.to_string()
    );
    let link = pcw_driver::control::SYMBOLIC_LINK
        .strip_prefix(r"\DosDevices\")
        .expect("a \\DosDevices link");
    assert_eq!(ps_string(&ps, "PcwDevicePath"), format!(r"\\.\{link}"));
    assert_eq!(
        ps_string(&ps, "PcwDeviceSddl"),
        pcw_driver::control::DEVICE_SDDL
    );
}

#[test]
fn countersets_and_counters_match_the_manifest() {
    let ps = common_ps1();
    let m = manifest();
    let h = symbols_h();
    let sets = ps_table(&ps, "PcwCounterSets");
    let expected: Vec<(String, String)> = m
        .provider
        .countersets
        .iter()
        .map(|s| (s.name.clone(), s.symbol.to_uppercase()))
        .collect();
    assert_eq!(
        sets, expected,
        "$PcwCounterSets: manifest names and V1 symbols"
    );
    for (_, symbol) in &sets {
        assert!(
            h.lines()
                .any(|l| l.starts_with(&format!("#define {symbol} "))),
            "{symbol} is not in the generated pcw_driver.h"
        );
    }
    let wave_counters = ps_list(&ps, "PcwWaveCounters");
    assert_eq!(wave_counters, counter_names("Geometric Waves"));
    for counter in &wave_counters {
        // Verify-PcwDriver.ps1 finds their V1 indexes as WAVE_<COUNTER> in pcw_driver.h.
        let symbol = format!("WAVE_{}", counter.to_uppercase());
        assert!(h.contains(&format!("#define {symbol} ")), "{symbol}");
    }
    let stats = counter_names("PCW Provider Statistics");
    for counter in ps_list(&ps, "PcwStatCounters") {
        assert!(
            stats.contains(&counter),
            "PCW Provider Statistics has no {counter}"
        );
    }
    assert_eq!(
        ps_list(&ps, "PcwQueueCounters"),
        counter_names("PCW Dynamic Queues")
    );
}

#[test]
fn v1_assets_are_what_pcw_perfdll_builds() {
    let register = read("scripts/vm/Register-PcwPerfDll.ps1");
    let build = read("crates/pcw-perfdll/build.rs");
    let ps = common_ps1();
    // The files the scripts take from pcw-perfdll's OUT_DIR are the ones its build.rs writes.
    for asset in ["pcw_perfdll.reg", "pcw_driver.ini", "pcw_driver.h"] {
        assert!(
            register.contains(&format!("'{asset}'")),
            "Register-PcwPerfDll.ps1: {asset}"
        );
        assert!(
            ps.contains(&format!("'{asset}'")),
            "Common.ps1 stages {asset}"
        );
        assert!(
            build.contains(&format!("out.join(\"{asset}\")")),
            "pcw-perfdll writes {asset}"
        );
    }
    // The DLL is the crate's cdylib, copied to where the .reg fragment's Library points.
    let dll = ps_string(&ps, "PcwPerfDllName");
    let cargo: toml::Table =
        toml::from_str(&read("crates/pcw-perfdll/Cargo.toml")).expect("pcw-perfdll Cargo.toml");
    let lib = cargo["package"]["name"]
        .as_str()
        .expect("name")
        .replace('-', "_");
    assert_eq!(dll, format!("{lib}.dll"));
    let library = rust_str_const("crates/pcw-perfdll/src/install.rs", "DEFAULT_LIBRARY");
    assert_eq!(library, format!(r"%SystemRoot%\System32\{dll}"));
    assert!(register.contains(r#"Join-Path $env:SystemRoot "System32\$PcwPerfDllName""#));
}

#[test]
fn waves_match_the_driver() {
    let table = ps_table(&common_ps1(), "PcwWaves");
    let expected: Vec<(String, String)> = waves()
        .into_iter()
        .map(|(name, low, high)| (name, format!("@({low}, {high})")))
        .collect();
    assert_eq!(table, expected, "$PcwWaves: (minimum, minimum + amplitude)");
}

#[test]
fn every_script_stops_on_errors_and_references_existing_scripts() {
    let ps = common_ps1();
    assert!(ps.contains("$ErrorActionPreference = 'Stop'"));
    assert!(ps.contains("Set-StrictMode -Version"));
    let all = scripts();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    for (name, text) in &all {
        assert!(
            text.starts_with('#'),
            "{name} starts with a comment saying what it does"
        );
        if name != "Common.ps1" {
            assert!(
                text.contains(". (Join-Path $PSScriptRoot 'Common.ps1')"),
                "{name} dot-sources Common.ps1 (which sets $ErrorActionPreference = 'Stop')"
            );
        }
        // Scripts named from other scripts exist.
        for (at, _) in text.match_indices(".ps1") {
            let start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(0, |i| i + 1);
            let referenced = format!("{}.ps1", &text[start..at]);
            if referenced != ".ps1" && referenced != "*.ps1" {
                assert!(
                    names.contains(&referenced.as_str()),
                    "{name} refers to {referenced}, which is not in scripts/vm"
                );
            }
        }
        balanced(name, text);
    }
}

/// Brackets balance outside strings and comments (a cheap stand-in for PowerShell's parser).
fn balanced(name: &str, text: &str) {
    let mut stack: Vec<(char, usize)> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_end();
        // Here-strings: from a line ending in @' or @" to a line starting with '@ or "@.
        if trimmed.ends_with("@'") || trimmed.ends_with("@\"") {
            let close = if trimmed.ends_with("@'") { "'@" } else { "\"@" };
            scan(name, &trimmed[..trimmed.len() - 2], i + 1, &mut stack);
            i += 1;
            while i < lines.len() && !lines[i].starts_with(close) {
                i += 1;
            }
            assert!(i < lines.len(), "{name}: unterminated here-string");
            scan(name, &lines[i][2..], i + 1, &mut stack);
        } else {
            scan(name, line, i + 1, &mut stack);
        }
        i += 1;
    }
    assert!(stack.is_empty(), "{name}: unclosed {stack:?}");
}

fn scan(name: &str, line: &str, number: usize, stack: &mut Vec<(char, usize)>) {
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') if chars.peek() == Some(&'\'') => {
                chars.next();
            }
            (Some('"') | None, '`') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (None, '#') => return,
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '{' | '[') => stack.push((c, number)),
            (None, ')' | '}' | ']') => {
                let open = match c {
                    ')' => '(',
                    '}' => '{',
                    _ => '[',
                };
                let top = stack.pop();
                assert_eq!(
                    top.map(|t| t.0),
                    Some(open),
                    "{name}:{number}: `{c}` closes {top:?}"
                );
            }
            _ => {}
        }
    }
    assert!(quote.is_none(), "{name}:{number}: unterminated string");
}

#[test]
fn readme_agrees_with_the_scripts_and_the_makefile() {
    let readme = readme_windows();
    let makefile: toml::Table = toml::from_str(&read("Makefile.toml")).expect("Makefile.toml");
    let tasks = makefile["tasks"].as_table().expect("tasks");
    // Every `cargo make <task>` the README names is a task of Makefile.toml (or the default).
    for (at, _) in readme.match_indices("cargo make") {
        let task: String = readme[at + "cargo make".len()..]
            .trim_start_matches(' ')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !task.is_empty() {
            assert!(
                tasks.contains_key(&task),
                "README: `cargo make {task}` is no task"
            );
        }
    }
    // Every scripts\vm\*.ps1 and repository path it names exists.
    for script in scripts().iter().map(|(n, _)| n) {
        if script != "Common.ps1" && !script.starts_with("Unregister") {
            // The user-facing scripts are all explained.
            let documented = readme.contains(script.as_str())
                || ["Register-PcwCounters.ps1", "Test-PcwDriverOnVm.ps1"]
                    .contains(&script.as_str());
            assert!(documented, "README does not mention {script}");
        }
    }
    for path in [
        r"inf\pcw_driver.inx",
        r"manifest\pcw_driver.man",
        r"scripts\vm",
        r"src\ffi\wdk_sys.rs",
    ] {
        assert!(readme.contains(path), "README names {path}");
        assert!(exists(path), "{path} exists");
    }
    // The same names as the manifest, the INF and the scripts.
    let ps = common_ps1();
    let service = ps_string(&ps, "PcwServiceName");
    assert!(readme.contains(&format!("sc start {service}")));
    assert!(readme.contains(&manifest().provider.guid.to_string()));
    for set in manifest()
        .provider
        .countersets
        .iter()
        .map(|s| s.name.clone())
    {
        assert!(readme.contains(&set), "README names counterset {set}");
    }
    for (wave, low, high) in waves() {
        assert!(
            readme.contains(&format!("{wave} stays within {low}–{high}"))
                || readme.contains(&format!("{wave} {low}–{high}")),
            "README range of {wave}"
        );
    }
    // The exact commands a user runs, in the README and in the verification script.
    let typeperf = r#"typeperf "\Geometric Waves(*)\*" -sc 3"#;
    assert!(readme.contains(typeperf));
    assert!(
        read("scripts/vm/Verify-PcwDriver.ps1").contains(r"'\Geometric Waves(*)\*', '-sc', '3'")
    );
    assert!(readme.contains(r"lodctr /m:manifest\pcw_driver.man <dir of the installed .sys>"));
    assert!(readme.contains(r"unlodctr /m:manifest\pcw_driver.man"));
    assert!(readme.contains("lodctr /R"));
    assert!(readme.contains(&ps_string(&ps, "PcwVmRoot")));
}

#[test]
fn readme_keeps_its_two_linux_commands_at_the_top() {
    let readme = read("README.md");
    let first_block = &readme[readme.find("```sh\n").expect("a sh block") + 6..];
    let first_block = &first_block[..first_block.find("```").expect("closed")];
    let commands: Vec<&str> = first_block
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(
        commands,
        [
            r#"cargo run -q -p pcw-cli -- typeperf "\Geometric Waves(*)\*" -sc 5 -si 1"#,
            "bash scripts/test.sh"
        ]
    );
    assert!(readme.find("```sh\n") < readme.find("## On Windows"));
}
