// SPDX-License-Identifier: MIT OR Apache-2.0
//! Names through the `pcw` binary: arbitrary text (every hostile class of pcw-gen's display-text
//! policy, YAML indicators, quotes, backslashes, non-ASCII and astral characters) as the
//! provider name, the counterset's name and description and a counter's name and description.
//! When `pcw lint` accepts it, both `pcw export` files parse as YAML with exactly the keys they
//! are meant to have (the `windows_exporter` `objects` string parsed as the YAML document it
//! is) and give the text back, as do `pcw list --json` and `pcw inspect --json`; when lint
//! refuses it, every attribute holding it has an error naming the character, and `pcw export`
//! writes nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::pcw;
use proptest::prelude::*;
use serde_json::Value;

/// What the policy table refuses, restated: controls, the line and paragraph separators,
/// noncharacters, the replacement character.
fn refused_by_policy(c: char) -> bool {
    let u = u32::from(c);
    c.is_control()
        || c == '\u{2028}'
        || c == '\u{2029}'
        || (0xFDD0..=0xFDEF).contains(&u)
        || u & 0xFFFE == 0xFFFE
        || c == '\u{FFFD}'
}

/// How the manifest spells a piece of text, and what the XML reader gives for it.
#[derive(Clone, Debug)]
struct Piece {
    xml: String,
    text: String,
}

fn literal(text: &str) -> Piece {
    Piece {
        xml: text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('"', "&quot;"),
        text: text.to_owned(),
    }
}

fn reference(c: char) -> Piece {
    Piece {
        xml: format!("&#x{:X};", u32::from(c)),
        text: c.to_string(),
    }
}

fn piece() -> impl Strategy<Value = Piece> {
    let plain = prop::sample::select(
        " aZ09\"'\\#:%{}$&*!|>-?[],@`<=;/()_.\u{a0}é日😀\u{1d11e}\u{301}"
            .chars()
            .collect::<Vec<_>>(),
    )
    .prop_map(|c| literal(&c.to_string()));
    let any_char = any::<char>().prop_filter(
        "an XML character",
        |c| !matches!(u32::from(*c), 0..=8 | 0xB | 0xC | 0xE..=0x1F | 0xFFFE | 0xFFFF),
    );
    let hostile = prop::sample::select(vec![
        '\t',
        '\n',
        '\r',
        '\u{7f}',
        '\u{85}',
        '\u{9f}',
        '\u{2028}',
        '\u{2029}',
        '\u{fdd0}',
        '\u{1fffe}',
        '\u{feff}',
        '\u{202e}',
    ]);
    let tokens = prop::sample::select(vec![
        "- ",
        "? ",
        ": ",
        "${x}",
        "{{x}}",
        "# c",
        "&a",
        "*a",
        "!t",
        "| ",
        "> ",
        "---",
        "...",
        "%YAML 1.2",
        "\"\"",
        "''",
        "\\n",
        "\\u0000",
        "\\",
        "[a, b]",
        "{a: b}",
        "\"a\"",
        "'a'",
    ])
    .prop_map(literal);
    prop_oneof![
        5 => plain,
        2 => any_char.prop_map(reference),
        2 => hostile.prop_map(reference),
        1 => Just(Piece { xml: "&#xD800;".to_owned(), text: "\u{fffd}".to_owned() }),
        3 => tokens,
    ]
}

/// A kernel-mode manifest with the text in five attributes (each value on its own line, whose
/// positions are returned): a raw counter named with it, and a fraction with its base so that
/// `windows_exporter` gets a formatted object too.
fn manifest(name_xml: &str) -> (String, Vec<(u32, u32)>) {
    let mut lines: Vec<String> = Vec::new();
    let mut at = Vec::new();
    let mut text = |lines: &mut Vec<String>, prefix: &str, suffix: &str| {
        at.push((
            u32::try_from(lines.len() + 1).unwrap(),
            u32::try_from(prefix.chars().count() + 1).unwrap(),
        ));
        lines.push(format!("{prefix}{name_xml}{suffix}"));
    };
    lines.push(
        r#"<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">"#
            .to_owned(),
    );
    lines.push(r#"<instrumentation><counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="1.1">"#.to_owned());
    lines.push(r#"<provider providerType="kernelMode" applicationIdentity="names.sys""#.to_owned());
    text(&mut lines, r#"  providerName=""#, r#"""#);
    lines.push(r#"  providerGuid="{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d4c}">"#.to_owned());
    lines.push(r#"<counterSet guid="{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d01}" uri="Names.Set" symbol="NamesSet" instances="multiple""#.to_owned());
    text(&mut lines, r#"  name=""#, r#"""#);
    text(&mut lines, r#"  description=""#, r#"">"#);
    lines.push(r#"<counter id="1" uri="Names.One" field="One" type="perf_counter_rawcount" detailLevel="standard""#.to_owned());
    text(&mut lines, r#"  name=""#, r#"""#);
    text(&mut lines, r#"  description=""#, r#""/>"#);
    lines.push(r#"<counter id="2" uri="Names.Share" field="Share" name="Share" description="a fraction" type="perf_raw_fraction" baseID="3" detailLevel="standard"/>"#.to_owned());
    lines.push(r#"<counter id="3" uri="Names.Base" field="Base" type="perf_raw_base" detailLevel="standard"><counterAttributes><counterAttribute name="noDisplay"/></counterAttributes></counter>"#.to_owned());
    lines.push(
        "</counterSet></provider></counters></instrumentation></instrumentationManifest>"
            .to_owned(),
    );
    (lines.join("\n"), at)
}

fn stdout(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

/// The keys of a mapping, sorted.
fn keys(v: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("not a mapping: {v}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// The exports, `pcw list --json` and `pcw inspect --json` give `name` back.
fn check_outputs(file: &str, name: &str) {
    // What the exporters make of a metric name is lint's and export's own test (a clash or a
    // name an exporter cannot use is refused unless allowed); here the names are carried.
    // OpenTelemetry: one top-level key, one receiver; the object, the counter and its help.
    let text = stdout(
        &pcw(&["export", file, "--to", "otel", "--allow-bad-names"]),
        "export otel",
    );
    let doc = yaml(&text);
    assert_eq!(keys(&doc), ["receivers"], "{text}");
    let receivers = &doc["receivers"];
    assert_eq!(keys(receivers).len(), 1, "{text}");
    let receiver = receivers.as_object().unwrap().values().next().unwrap();
    assert_eq!(
        keys(receiver),
        ["collection_interval", "metrics", "perfcounters"],
        "{text}"
    );
    let object = &receiver["perfcounters"][0];
    assert_eq!(object["object"].as_str(), Some(name), "{text}");
    let counter = &object["counters"][0];
    assert_eq!(counter["name"].as_str(), Some(name), "{text}");
    let metric = counter["metric"].as_str().unwrap();
    assert_eq!(
        receiver["metrics"][metric]["description"].as_str(),
        Some(name),
        "{text}"
    );

    // windows_exporter: two top-level keys; `objects` is a YAML document in a string.
    let text = stdout(
        &pcw(&[
            "export",
            file,
            "--to",
            "windows-exporter",
            "--allow-bad-names",
        ]),
        "export windows-exporter",
    );
    let doc = yaml(&text);
    assert_eq!(keys(&doc), ["collector", "collectors"], "{text}");
    assert_eq!(keys(&doc["collector"]), ["performancecounter"], "{text}");
    let objects_text = doc["collector"]["performancecounter"]["objects"]
        .as_str()
        .unwrap_or_else(|| panic!("`objects` is not a string:\n{text}"));
    let objects = yaml(objects_text);
    let objects = objects.as_array().unwrap();
    assert_eq!(objects.len(), 2, "{objects_text}");
    for object in objects {
        assert_eq!(object["object"].as_str(), Some(name), "{objects_text}");
    }
    assert_eq!(
        objects[0]["counters"][0]["name"].as_str(),
        Some(name),
        "{objects_text}"
    );

    // pcw list --json.
    let list: Value = serde_json::from_str(&stdout(
        &pcw(&["list", "--json", "--manifest", file]),
        "list",
    ))
    .unwrap();
    let set = &list["countersets"][0];
    assert_eq!(set["name"].as_str(), Some(name));
    assert_eq!(set["description"].as_str(), Some(name));
    assert_eq!(set["counters"][0]["name"].as_str(), Some(name));
    assert_eq!(set["counters"][0]["help"].as_str(), Some(name));

    // pcw inspect --json.
    let inspect: Value =
        serde_json::from_str(&stdout(&pcw(&["inspect", file, "--json"]), "inspect")).unwrap();
    assert_eq!(inspect["provider"]["name"].as_str(), Some(name));
    let set = &inspect["countersets"][0];
    assert_eq!(set["name"].as_str(), Some(name));
    assert_eq!(set["description"].as_str(), Some(name));
    assert_eq!(set["counters"][0]["name"].as_str(), Some(name));
    assert_eq!(set["counters"][0]["description"].as_str(), Some(name));
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pcw-cli-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check(pieces: &[Piece], file: &Path) {
    let name: String = pieces.iter().map(|p| p.text.as_str()).collect();
    let xml: String = pieces.iter().map(|p| p.xml.as_str()).collect();
    let (text, places) = manifest(&xml);
    std::fs::write(file, text).unwrap();
    let file = file.to_str().unwrap();
    let lint = pcw(&["lint", file]);
    let stderr = String::from_utf8_lossy(&lint.stderr).into_owned();
    if let Some(c) = name.chars().find(|c| refused_by_policy(*c)) {
        assert!(!lint.status.success(), "{name:?} passed lint");
        let code = format!("U+{:04X}", u32::from(c));
        for (line, column) in places {
            let at = format!("{file}:{line}:{column}: error: ");
            assert!(
                stderr
                    .lines()
                    .any(|l| l.starts_with(&at) && l.contains(&code)),
                "no `{at}… {code}` for {name:?}:\n{stderr}"
            );
        }
        let export = pcw(&["export", file, "--to", "otel"]);
        assert!(!export.status.success() && export.stdout.is_empty());
        return;
    }
    // A case-insensitive clash with the other counter's name.
    if name.to_lowercase() == "share" {
        return;
    }
    assert!(lint.status.success(), "{name:?} refused:\n{stderr}");
    check_outputs(file, &name);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn names_survive_the_cli_outputs_or_are_refused_where_they_are(
        pieces in prop::collection::vec(piece(), 1..8),
    ) {
        check(&pieces, &scratch().join("random.man"));
    }
}

/// The issue's case (a carriage return and a line feed that would write a top-level YAML key)
/// and one of each class, whatever the random cases draw.
#[test]
fn known_hostile_names() {
    let file = scratch().join("known.man");
    let cases = [
        vec![Piece {
            xml: "Water&#13;evil: 1&#10;Level".to_owned(),
            text: "Water\revil: 1\nLevel".to_owned(),
        }],
        vec![reference('\u{85}'), literal("evil: 1")],
        vec![reference('\u{2028}'), literal("evil: 1")],
        vec![literal("evil: 1 # not a comment")],
        vec![literal("\"quoted\": 'both' \\ ${x} {{y}} - *a &b !c |")],
        vec![literal(" padded ")],
        // Mangles to the other counter's metric names (lint warns): still one key each.
        vec![literal("Share ")],
        vec![reference('\u{feff}'), literal("bom"), reference('\u{202e}')],
        vec![literal("日本語 😀 \u{1d11e}")],
    ];
    for pieces in &cases {
        check(pieces, &file);
    }
}
