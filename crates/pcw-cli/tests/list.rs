// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw list` through the binary: the driver's countersets under the simulator and a
//! manifest's, as `Get-Counter -ListSet` describes them; the JSON document validates against
//! the schema in `tests/schemas/pcw-list.schema.json`.

mod common;

use common::{crate_file, pcw, validate};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = pcw(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_drivers_sets_under_the_simulator() {
    let doc = json(&["list", "--json", "--sim-queue", "rx0"]);
    validate("pcw-list.schema.json", &doc).unwrap();
    assert_eq!(doc["source"], "simulator");
    assert_eq!(doc["machine"], "PCW-SIM");
    let sets = doc["countersets"].as_array().unwrap();
    let names: Vec<&str> = sets.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Geometric Waves",
            "PCW Provider Statistics",
            "PCW Dynamic Queues"
        ]
    );

    let waves = &sets[0];
    assert_eq!(waves["counter_set_type"], "MultiInstance");
    assert_eq!(waves["instance_kind"], "multiple");
    assert_eq!(
        waves["paths"],
        serde_json::json!([
            r"\Geometric Waves(*)\Triangle",
            r"\Geometric Waves(*)\Square"
        ])
    );
    assert_eq!(
        waves["instances"],
        serde_json::json!(["Small Wave", "Medium Wave", "Large Wave"])
    );
    assert_eq!(waves["paths_with_instances"].as_array().unwrap().len(), 6);
    assert_eq!(waves["counters"][0]["type"], "PERF_COUNTER_RAWCOUNT");
    assert_eq!(
        waves["counters"][0]["help"],
        "Triangle wave with a ten-second period."
    );

    let stats = &sets[1];
    assert_eq!(stats["counter_set_type"], "SingleInstance");
    assert_eq!(stats["paths_with_instances"], serde_json::json!([]));
    // Only displayed counters: the base and the clock helpers are not listed.
    let counters: Vec<&str> = stats["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        counters,
        [
            "Collections/sec",
            "Instances Returned",
            "Avg. Collect Time",
            "% Instances Filtered",
            "Time Since Load"
        ]
    );

    let queues = &sets[2];
    assert_eq!(queues["instances"], serde_json::json!(["rx0"]));
    assert_eq!(
        queues["paths_with_instances"][0],
        r"\PCW Dynamic Queues(rx0)\Packets/sec"
    );
}

#[test]
fn a_pattern_and_instance_warnings() {
    let doc = json(&["list", "pcw dyn*", "--json", "--sim-queue", "eth0/rx"]);
    validate("pcw-list.schema.json", &doc).unwrap();
    let sets = doc["countersets"].as_array().unwrap();
    assert_eq!(sets.len(), 1);
    assert_eq!(
        sets[0]["warnings"],
        serde_json::json!([
            "instance `eth0/rx` of `PCW Dynamic Queues`: `/` in the name: PDH reads `parent/instance` as a parent instance"
        ])
    );
}

#[test]
fn a_manifest_file() {
    let manifest = crate_file("tests/fixtures/xdp_like.man");
    let doc = json(&["list", "--json", "--manifest", &manifest]);
    validate("pcw-list.schema.json", &doc).unwrap();
    assert_eq!(doc["source"], "manifest");
    assert_eq!(doc["machine"], Value::Null);
    let sets = doc["countersets"].as_array().unwrap();
    assert_eq!(sets.len(), 3);
    for set in sets {
        assert_eq!(set["instance_kind"], "multipleAggregate");
        assert_eq!(
            set["instances"],
            Value::Null,
            "instances are run-time values"
        );
        assert_eq!(set["paths_with_instances"], serde_json::json!([]));
    }
    assert_eq!(sets[2]["counters"][0]["default_scale"], 1);
    assert_eq!(sets[2]["counters"][0]["aggregate"], "sum");
}

#[test]
fn the_schema_rejects_a_broken_document() {
    // The schema is not vacuous: a document missing a field or with a wrong type fails it.
    let mut doc = json(&[
        "list",
        "--json",
        "--manifest",
        &crate_file("tests/fixtures/xdp_like.man"),
    ]);
    doc["countersets"][0]["counter_set_type"] = "Multi".into();
    assert!(validate("pcw-list.schema.json", &doc).is_err());
    let mut doc = json(&[
        "list",
        "--json",
        "--manifest",
        &crate_file("tests/fixtures/xdp_like.man"),
    ]);
    doc["countersets"][0]
        .as_object_mut()
        .unwrap()
        .remove("paths");
    assert!(validate("pcw-list.schema.json", &doc).is_err());
}

#[test]
fn plain_text_for_people() {
    let out = pcw(&["list", "Geometric*"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("CounterSetName     : Geometric Waves\n"),
        "{text}"
    );
    assert!(
        text.contains("CounterSetType     : MultiInstance (multiple)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            r"Paths              : {\Geometric Waves(*)\Triangle, \Geometric Waves(*)\Square}"
        ),
        "{text}"
    );
    assert!(text.contains("    Triangle (PERF_COUNTER_RAWCOUNT)\n        Triangle wave with a ten-second period.\n"), "{text}");
}

#[test]
fn nothing_matching_fails() {
    let out = pcw(&["list", "No Such*"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("error: no counterset matches `No Such*`")
    );
}
