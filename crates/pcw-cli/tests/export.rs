// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw export` through the binary, for the driver's manifest and for a manifest shaped like a
//! public driver's (XDP's per-queue counters): the output is compared with the golden files in
//! `tests/golden/export`, parsed back with a YAML library, checked against each tool's
//! configuration schema (`tests/schemas`) and its documented rules, and its metric names are
//! checked against the counters they read. Bless intended changes with
//! `PCW_BLESS=1 cargo test -p pcw-cli --test export`.

mod common;

use std::collections::BTreeSet;

use common::{crate_file, pcw, validate};
use serde_json::Value;

/// The manifests exported, by golden-file stem.
const MANIFESTS: [(&str, &str); 2] = [
    ("pcw_driver", "../../manifest/pcw_driver.man"),
    ("xdp_like", "tests/fixtures/xdp_like.man"),
];

/// Runs `pcw export` with a path relative to the crate, so the file name in the output's
/// header comment is the same on every machine.
fn export(manifest: &str, target: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pcw"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["export", manifest, "--to", target])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn golden(stem: &str, target: &str, actual: &str) {
    let path = crate_file(&format!("tests/golden/export/{stem}.{target}.yaml"));
    if std::env::var_os("PCW_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}; bless with PCW_BLESS=1"));
    assert!(
        expected == actual,
        "{path} differs from `pcw export` (bless with PCW_BLESS=1 if intended):\n{actual}"
    );
}

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

/// The displayed counters of a manifest as (object, counter) pairs, from `pcw list`.
fn displayed(manifest: &str) -> BTreeSet<(String, String)> {
    let out = pcw(&["list", "--json", "--manifest", &crate_file(manifest)]);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut pairs = BTreeSet::new();
    for set in doc["countersets"].as_array().unwrap() {
        for c in set["counters"].as_array().unwrap() {
            pairs.insert((
                set["name"].as_str().unwrap().to_owned(),
                c["name"].as_str().unwrap().to_owned(),
            ));
        }
    }
    pairs
}

/// The metric name `pcw export` writes for a counter's `metric`, restated independently of
/// the code (object and counter under `windows_performancecounter_`, lowercase, `%` as
/// `percent`, parentheses dropped, other non-alphanumerics `_`, trimmed).
fn derived_metric(object: &str, counter: &str) -> String {
    let full = format!("windows_performancecounter_{object}_{counter}")
        .replace('%', "percent")
        .replace(['(', ')'], "")
        .to_lowercase();
    full.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .trim_matches('_')
        .to_owned()
}

#[test]
fn windows_exporter_configuration() {
    for (stem, manifest) in MANIFESTS {
        let text = export(manifest, "windows-exporter");
        golden(stem, "windows_exporter", &text);
        let config = yaml(&text);
        validate("windows_exporter_config.schema.json", &config)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        // The collector reads `objects` as a YAML document in a string.
        let objects = yaml(
            config["collector"]["performancecounter"]["objects"]
                .as_str()
                .unwrap(),
        );
        validate("windows_exporter_objects.schema.json", &objects)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));

        let mut names = BTreeSet::new();
        let mut metrics = BTreeSet::new();
        let mut exported = BTreeSet::new();
        for object in objects.as_array().unwrap() {
            assert!(
                names.insert(object["name"].as_str().unwrap().to_owned()),
                "{stem}: object names must be unique"
            );
            let set = object["object"].as_str().unwrap();
            let mut counters = BTreeSet::new();
            for counter in object["counters"].as_array().unwrap() {
                let name = counter["name"].as_str().unwrap();
                assert!(counters.insert(name), "{stem}: duplicated counter `{name}`");
                let metric = counter["metric"].as_str().unwrap();
                assert_eq!(metric, derived_metric(set, name), "{stem}");
                assert!(
                    metrics.insert(metric.to_owned()),
                    "{stem}: metric `{metric}` twice"
                );
                exported.insert((set.to_owned(), name.to_owned()));
                // Every metric is documented in the header, with its type.
                let ty = counter["type"].as_str().unwrap();
                assert!(
                    text.contains(&format!("#   {metric} {ty} ")),
                    "{stem}: {metric}"
                );
            }
            // `_Total` is asked for by name wherever the set has one.
            if let Some(instances) = object["instances"].as_array() {
                assert_eq!(instances[0], "*");
            }
        }
        assert_eq!(
            exported,
            displayed(manifest),
            "{stem}: every displayed counter, once"
        );
    }
}

#[test]
fn windows_exporter_types_and_modes() {
    let objects = yaml(
        yaml(&export("../../manifest/pcw_driver.man", "windows-exporter"))["collector"]
            ["performancecounter"]["objects"]
            .as_str()
            .unwrap(),
    );
    let find = |name: &str| {
        objects
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
            .unwrap_or_else(|| panic!("no object `{name}`"))
            .clone()
    };
    // Counts are Prometheus counters in raw mode; the average timer and the fraction need
    // PDH's cooking, so they are read formatted, as gauges.
    let raw = find("pcw_provider_statistics");
    assert_eq!(raw["type"], "raw");
    assert_eq!(raw["counters"][0]["name"], "Collections/sec");
    assert_eq!(raw["counters"][0]["type"], "counter");
    let formatted = find("pcw_provider_statistics_formatted");
    assert_eq!(formatted["type"], "formatted");
    let names: Vec<&str> = formatted["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Avg. Collect Time", "% Instances Filtered"]);
    assert!(
        raw.get("instances").is_none(),
        "a single-instance set names no instance"
    );
    let waves = find("geometric_waves");
    assert_eq!(waves["instances"], serde_json::json!(["*"]));
    assert_eq!(waves["instance_label"], "perf_instance");

    // A multipleAggregate set asks for `_Total`, which the collector drops otherwise.
    let xdp = yaml(
        yaml(&export("tests/fixtures/xdp_like.man", "windows-exporter"))["collector"]
            ["performancecounter"]["objects"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(xdp[0]["instances"], serde_json::json!(["*", "_Total"]));
    // Parentheses and colons in counter names mangle as the collector mangles them.
    let tx = xdp
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["object"] == "Sample XDP LWF Transmit Queue")
        .unwrap();
    assert_eq!(
        tx["counters"][0]["metric"],
        "windows_performancecounter_sample_xdp_lwf_transmit_queue_frames_dropped_ndis_pause"
    );
}

#[test]
fn opentelemetry_configuration() {
    for (stem, manifest) in MANIFESTS {
        let text = export(manifest, "otel");
        golden(stem, "otel", &text);
        let config = yaml(&text);
        let receivers = config["receivers"].as_object().unwrap();
        assert_eq!(receivers.len(), 1);
        let (key, receiver) = receivers.iter().next().unwrap();
        assert!(key.starts_with("windowsperfcounters/"), "{key}");
        validate("otel_windowsperfcounters.schema.json", receiver)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));

        // The receiver's own rules: every metric a counter names is defined under `metrics`,
        // and every defined metric is used.
        let defined: BTreeSet<&str> = receiver["metrics"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut used = BTreeSet::new();
        let mut exported = BTreeSet::new();
        for object in receiver["perfcounters"].as_array().unwrap() {
            let set = object["object"].as_str().unwrap();
            for counter in object["counters"].as_array().unwrap() {
                let metric = counter["metric"].as_str().unwrap();
                assert!(
                    defined.contains(metric),
                    "{stem}: `{metric}` is not defined"
                );
                assert!(used.insert(metric), "{stem}: `{metric}` used twice");
                exported.insert((set.to_owned(), counter["name"].as_str().unwrap().to_owned()));
                assert!(
                    text.contains(&format!("#   {metric} gauge ")),
                    "{stem}: {metric}"
                );
            }
        }
        assert_eq!(used, defined, "{stem}");
        assert_eq!(
            exported,
            displayed(manifest),
            "{stem}: every displayed counter, once"
        );
    }
}

#[test]
fn opentelemetry_metrics_carry_help_and_units() {
    let config = yaml(&export("../../manifest/pcw_driver.man", "otel"));
    let receiver = &config["receivers"]["windowsperfcounters/pcw_rs_reference_driver"];
    assert_eq!(receiver["collection_interval"], "30s");
    let metrics = &receiver["metrics"];
    let rate = &metrics["pcw_dynamic_queues.packets_per_sec"];
    assert_eq!(rate["unit"], "1/s");
    assert_eq!(rate["description"], "Packets through the queue per second.");
    assert!(rate.as_object().unwrap().contains_key("gauge"));
    assert_eq!(
        metrics["pcw_provider_statistics.percent_instances_filtered"]["unit"],
        "%"
    );
    assert_eq!(
        metrics["pcw_provider_statistics.avg_collect_time"]["unit"],
        "s"
    );
    assert_eq!(metrics["geometric_waves.triangle"]["unit"], "1");
}

#[test]
fn the_schemas_catch_what_the_tools_refuse() {
    // Not vacuous: configurations the tools reject fail the schemas.
    let objects: Value =
        yaml("- name: a\n  object: A\n  type: cooked\n  counters:\n    - name: X\n");
    assert!(validate("windows_exporter_objects.schema.json", &objects).is_err());
    let objects: Value = yaml("- object: A\n  counters:\n    - name: X\n");
    assert!(validate("windows_exporter_objects.schema.json", &objects).is_err());
    let receiver: Value = yaml("perfcounters:\n  - object: A\n    counters: []\n");
    assert!(validate("otel_windowsperfcounters.schema.json", &receiver).is_err());
    let receiver: Value = yaml(
        "metrics:\n  m:\n    gauge:\n    sum:\n      aggregation: cumulative\nperfcounters:\n  - object: A\n    counters:\n      - name: X\n        metric: m\n",
    );
    assert!(validate("otel_windowsperfcounters.schema.json", &receiver).is_err());
    let receiver: Value = yaml(
        "perfcounters:\n  - object: A\n    instances: [\"\"]\n    counters:\n      - name: X\n",
    );
    assert!(validate("otel_windowsperfcounters.schema.json", &receiver).is_err());
}

#[test]
fn export_errors() {
    let out = pcw(&["export", "/nonexistent.man", "--to", "otel"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: cannot read"));
    let out = pcw(&[
        "export",
        &crate_file("tests/fixtures/xdp_like.man"),
        "--to",
        "otel",
        "--interval",
        "soon",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`--interval soon`"));
    let out = pcw(&[
        "export",
        &crate_file("tests/fixtures/xdp_like.man"),
        "--to",
        "statsd",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

/// Runs `pcw export MANIFEST --to TARGET -o OUT [extra]`: the exit code, stderr and whether OUT
/// was written.
fn export_to_file(
    manifest: &std::path::Path,
    target: &str,
    extra: &[&str],
) -> (Option<i32>, String, bool) {
    let out_path = manifest.with_extension(format!("{target}.yaml"));
    let _ = std::fs::remove_file(&out_path);
    let mut args = vec![
        "export",
        manifest.to_str().unwrap(),
        "--to",
        target,
        "-o",
        out_path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = pcw(&args);
    let written = out_path.exists();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        written,
    )
}

#[test]
fn clashing_metric_names_are_refused_unless_allowed() {
    // Before: each of these exported with exit 0, nothing on stderr and the duplicate metric
    // names in the file.
    for (case, first, second, we, otel) in [
        (
            "blank-dash",
            "Foo Bar",
            "Foo-Bar",
            "windows_performancecounter_sample_xdp_receive_queue_foo_bar",
            "sample_xdp_receive_queue.foo_bar",
        ),
        (
            "underscore",
            "Bytes sec",
            "Bytes_sec",
            "windows_performancecounter_sample_xdp_receive_queue_bytes_sec",
            "sample_xdp_receive_queue.bytes_sec",
        ),
        (
            "accents",
            "é",
            "è",
            "windows_performancecounter_sample_xdp_receive_queue",
            "sample_xdp_receive_queue.",
        ),
    ] {
        let manifest = common::xdp_renamed(case, "Sample XDP Receive Queue", first, second);
        for (target, tool, metric) in [
            ("windows-exporter", "windows_exporter", we),
            ("otel", "OpenTelemetry", otel),
        ] {
            let clash = format!(
                r"warning: `Sample XDP Receive Queue\{second}` and `Sample XDP Receive Queue\{first}` both become {tool} metric `{metric}`"
            );
            let (code, stderr, written) = export_to_file(&manifest, target, &[]);
            assert_eq!(code, Some(1), "{case} {target}: {stderr}");
            assert!(!written, "{case} {target}: nothing is written");
            assert!(stderr.contains(&clash), "{case} {target}: {stderr}");
            assert!(
                stderr.ends_with("nothing was written (`--allow-bad-names` writes it anyway)\n"),
                "{case} {target}: {stderr}"
            );
            let (code, stderr, written) = export_to_file(&manifest, target, &["--allow-bad-names"]);
            assert_eq!(code, Some(0), "{case} {target}: {stderr}");
            assert!(written, "{case} {target}");
            assert!(stderr.contains(&clash), "{case} {target}: {stderr}");
        }
        let _ = std::fs::remove_dir_all(manifest.parent().unwrap());
    }
}

#[test]
fn unusable_metric_names_are_refused_for_the_tool_that_refuses_them() {
    let long_set = "S".repeat(300);
    let long_counter = "C".repeat(300);
    // (case, set, first counter, warning for windows_exporter, for OpenTelemetry); `None`
    // when that tool takes the names.
    let cases: [(&str, &str, &str, Option<&str>, &str); 5] = [
        (
            "dashes",
            "---",
            "!!!",
            Some(
                r"counter name `!!!` has no ascii letter or digit for windows_exporter: `---\!!!` becomes metric `windows_performancecounter`",
            ),
            r"counter name `!!!` has no ascii letter or digit for OpenTelemetry: `---\!!!` becomes metric `.`",
        ),
        (
            "emoji",
            "é中文😀",
            "é中文😀",
            Some("counterset name `é中文😀` has no ascii letter or digit for windows_exporter"),
            r"`é中文😀\é中文😀` becomes metric `.`",
        ),
        (
            "accent",
            "S",
            "é",
            Some(r"`S\é` becomes metric `windows_performancecounter_s`"),
            r"`S\é` becomes metric `s.`",
        ),
        (
            "digit",
            "1abc",
            "2x",
            None,
            "counterset name `1abc` starts its OpenTelemetry metric names with a digit",
        ),
        (
            "long",
            &long_set,
            &long_counter,
            None,
            "which has 601 characters, more than the 255 an instrument name may have",
        ),
    ];
    for (case, set, first, we, otel) in cases {
        // Before: every case exported with exit 0 and nothing on stderr.
        let manifest = common::xdp_renamed(case, set, first, "AF_XDP Frames Dropped");
        for (target, warning) in [("windows-exporter", we), ("otel", Some(otel))] {
            let (code, stderr, written) = export_to_file(&manifest, target, &[]);
            if let Some(warning) = warning {
                assert_eq!(code, Some(1), "{case} {target}: {stderr}");
                assert!(!written, "{case} {target}");
                assert!(stderr.contains(warning), "{case} {target}: {stderr}");
            } else {
                assert_eq!(code, Some(0), "{case} {target}: {stderr}");
                assert!(written && stderr.is_empty(), "{case} {target}: {stderr}");
            }
        }
        let _ = std::fs::remove_dir_all(manifest.parent().unwrap());
    }
}

#[test]
fn the_flag_is_in_the_help() {
    let out = pcw(&["export", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--allow-bad-names"), "{help}");
    assert!(help.contains("nothing is written (exit 1)"), "{help}");
}
