// SPDX-License-Identifier: MIT OR Apache-2.0
//! The diagnostics table test: each invalid manifest pins the message, line and column
//! of the diagnostic that names its problem; plus "every problem in one run".

use std::path::Path;

use pcw_gen::{Diagnostic, Input, Severity, analyze};

/// A valid kernel-mode schema 2.0 manifest, one thing per line so positions are easy to read.
const BASE: &str = r#"<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
 <instrumentation>
  <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="2.0">
   <provider providerType="kernelMode" applicationIdentity="t.sys"
             providerGuid="{11111111-2222-3333-4444-555555555555}">
    <counterSet guid="{aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee}" uri="T.Set" symbol="TSet"
                name="T Set" nameID="1" description="d" descriptionID="3" instances="multiple">
     <counter id="1" uri="T.A" field="A" name="A" nameID="5" description="a" descriptionID="7"
              type="perf_average_timer" baseID="2" detailLevel="standard"/>
     <counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard"/>
     <counter id="3" uri="T.C" field="C" name="C" nameID="9" description="c" descriptionID="11"
              type="perf_counter_large_rawcount" detailLevel="advanced"/>
    </counterSet>
   </provider>
  </counters>
 </instrumentation>
</instrumentationManifest>
"#;

/// The third counter, to be replaced by cases about a single counter.
const C3: &str = r#"<counter id="3" uri="T.C" field="C" name="C" nameID="9" description="c" descriptionID="11"
              type="perf_counter_large_rawcount" detailLevel="advanced"/>"#;

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "case does not apply: {from}");
    BASE.replacen(from, to, 1)
}

/// Replaces the third counter by one with `attrs` (and `id="3"` unless `attrs` has an id).
fn c3(attrs: &str) -> String {
    let id = if attrs.contains("id=") {
        ""
    } else {
        r#"id="3" "#
    };
    with(
        C3,
        &format!(
            r#"<counter {id}uri="T.C" name="C" nameID="9" description="c" descriptionID="11"
              {attrs}/>"#
        ),
    )
}

struct Case {
    name: &'static str,
    text: String,
    severity: Severity,
    line: u32,
    column: u32,
    message: &'static str,
}

fn case(
    name: &'static str,
    text: String,
    severity: Severity,
    (line, column): (u32, u32),
    message: &'static str,
) -> Case {
    Case {
        name,
        text,
        severity,
        line,
        column,
        message,
    }
}

use Severity::{Error as E, Warning as W};

fn cases() -> Vec<Case> {
    let second_set = r#"    <counterSet guid="{aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee}" uri="T.Set2" symbol="TSet2"
                name="T Set 2" nameID="21" description="d" descriptionID="23">
     <counter id="1" uri="T.Z" field="Z" name="Z" nameID="25" description="z" descriptionID="27"
              type="perf_counter_rawcount" detailLevel="standard"/>
    </counterSet>
   </provider>"#;
    vec![
        case("xml syntax", with("    </counterSet>\n", ""), E, (13, 4), "invalid xml: expected `counterSet` tag, not `provider`"),
        case("no counters", with("counters xmlns", "countersX xmlns").replace("</counters>", "</countersX>"), E, (1, 1), "the manifest has no `<counters>` section"),
        case("schema version", with(r#"schemaVersion="2.0""#, r#"schemaVersion="3.0""#), E, (3, 86), "unsupported `schemaVersion` `3.0`"),
        case("provider type", with(r#"providerType="kernelMode""#, r#"providerType="kernel""#), E, (4, 28), "invalid `providerType` value `kernel`"),
        case("provider guid", with("{11111111-2222-3333-4444-555555555555}", "11111111-2222-3333-4444-555555555555"), E, (5, 28), "`providerGuid` is not a braced guid: `11111111-2222-3333-4444-555555555555`"),
        case("application identity missing", with(r#" applicationIdentity="t.sys""#, ""), E, (4, 4), "`<provider>` is missing the `applicationIdentity` attribute"),
        case("resource base in 2.0", with(r#"applicationIdentity="t.sys""#, r#"applicationIdentity="t.sys" resourceBase="10""#), E, (4, 82), "`resourceBase` is not allowed with `schemaVersion=\"2.0\"`"),
        case("set uri missing", with(r#" uri="T.Set""#, ""), E, (6, 5), "`<counterSet>` is missing the `uri` attribute"),
        case("set symbol", with(r#"symbol="TSet""#, r#"symbol="1Set""#), E, (6, 83), "`symbol` must be a c identifier, not `1Set`"),
        case("instances", with(r#"instances="multiple""#, r#"instances="many""#), E, (7, 86), "invalid `instances` value `many`"),
        case("set nameID missing", with(r#" nameID="1""#, ""), E, (6, 5), "`<counterSet>` has a `name` but no `nameID`"),
        case("nameID in 1.1", with(r#"schemaVersion="2.0""#, r#"schemaVersion="1.1""#), E, (7, 38), "`nameID` is not allowed with `schemaVersion=\"1.1\"`"),
        case("counter id syntax", c3(r#"id="x3" field="C" type="perf_counter_rawcount" detailLevel="standard""#), E, (12, 19), "`id` must be a 32-bit unsigned number, not `x3`"),
        case("counter id too large", c3(r#"id="70000" field="C" type="perf_counter_rawcount" detailLevel="standard""#), E, (12, 19), "counter id `70000` does not fit `PCW_COUNTER_DESCRIPTOR.Id`, which is 16 bits"),
        case("counter id duplicate", with(r#"<counter id="3""#, r#"<counter id="1""#), E, (11, 19), "counter id `1` is used twice in counterset `TSet`"),
        case("counter name duplicate", with(r#"name="C" nameID="9""#, r#"name="a" nameID="9""#), E, (11, 48), "counter name `a` is already used by counter `1`"),
        case("unknown type", c3(r#"field="C" type="perf_counter_rawcnt" detailLevel="standard""#), E, (12, 31), "unknown counter type `perf_counter_rawcnt`"),
        case("uppercase type", c3(r#"field="C" type="PERF_COUNTER_RAWCOUNT" detailLevel="standard""#), E, (12, 31), "unknown counter type `PERF_COUNTER_RAWCOUNT`"),
        case("text type", c3(r#"field="C" type="perf_counter_text" detailLevel="standard""#), E, (12, 31), "counter type `perf_counter_text` has no fixed 4- or 8-byte value"),
        case("composite type", c3(r#"field="C" type="perf_counter_composite" detailLevel="standard""#), E, (12, 31), "counter type `perf_counter_composite` has no `winperf.h` value"),
        case("detail level", c3(r#"field="C" type="perf_counter_rawcount" detailLevel="expert""#), E, (12, 67), "invalid `detailLevel` value `expert`"),
        case("default scale", c3(r#"field="C" type="perf_counter_rawcount" detailLevel="standard" defaultScale="11""#), E, (12, 91), "`defaultScale` must be an integer from -10 to 10, not `11`"),
        case("aggregate", c3(r#"field="C" type="perf_counter_rawcount" detailLevel="standard" aggregate="median""#), E, (12, 88), "invalid `aggregate` value `median`"),
        case("counter attribute", with(r#"detailLevel="advanced"/>"#, r#"detailLevel="advanced"><counterAttributes><counterAttribute name="bold"/></counterAttributes></counter>"#), E, (12, 116), "invalid `counterAttribute` value `bold`"),
        case("baseID missing", with(r#" baseID="2""#, ""), E, (8, 6), "`perf_average_timer` counter `1` has no `baseID`"),
        case("baseID unknown", with(r#"baseID="2""#, r#"baseID="9""#), E, (9, 49), "`baseID` `9` does not name a counter of this counterset"),
        case("baseID wrong type", with(r#"baseID="2""#, r#"baseID="3""#), E, (9, 49), "`baseID` `3` names a `perf_counter_large_rawcount` counter, but `perf_average_timer` needs a `perf_average_base`"),
        case("shared base", c3(r#"field="C" type="perf_average_timer" baseID="2" detailLevel="standard""#), W, (12, 59), "base counter `2` is already the base of counter `1`: v1 output places it right after that counter, so v1 consumers read counter `3`'s base from whatever follows it"),
        case("perfTimeID missing", c3(r#"field="C" type="perf_elapsed_time" perfFreqID="1" detailLevel="standard""#), E, (11, 6), "`perf_elapsed_time` counter `3` has no `perfTimeID`"),
        case("perfFreqID wrong size", c3(r#"field="C" type="perf_elapsed_time" perfTimeID="3" perfFreqID="2" detailLevel="standard""#), E, (12, 62), "`perfTimeID` `3` names the counter itself, not an 8-byte time value"),
        case("unknown struct", c3(r#"field="C" struct="Nope" type="perf_counter_rawcount" detailLevel="standard""#), E, (12, 33), "counter names struct `Nope` but its counterset has no `<structs>`"),
        case("unknown declared struct", c3(r#"field="C" struct="Nope" type="perf_counter_rawcount" detailLevel="standard""#).replace(r#"instances="multiple">"#, r#"instances="multiple">
     <structs><struct name="S1" type="S1_T"/><struct name="S2" type="S2_T"/></structs>"#), E, (13, 33), "unknown struct `Nope`"),
        case("struct not named", with(r#"instances="multiple">"#, r#"instances="multiple">
     <structs><struct name="S1" type="S1_T"/><struct name="S2" type="S2_T"/></structs>"#), E, (9, 6), "`<counter>` does not say which `struct` holds it"),
        case("field missing", c3(r#"type="perf_counter_rawcount" detailLevel="standard""#), E, (11, 6), "`<counter>` has no `field`"),
        case("shared field size", c3(r#"field="A" type="perf_counter_large_rawcount" detailLevel="standard""#), E, (12, 22), "field `A` is 4 bytes for an earlier counter but `perf_counter_large_rawcount` values are 8 bytes"),
        case("field symbol", c3(r#"field="C-1" type="perf_counter_rawcount" detailLevel="standard""#), E, (12, 22), "`field` must be a c identifier, not `C-1`"),
        case("field rust collision", c3(r#"field="a" type="perf_counter_rawcount" detailLevel="standard""#), E, (12, 22), "fields `A` and `a` both become the rust field `a`"),
        case("duplicate set guid", with("   </provider>", second_set), E, (14, 23), "counterset guid `{aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee}` is already used by counterset `TSet`"),
        case("duplicate resource id", with(r#"descriptionID="11""#, r#"descriptionID="7""#), E, (11, 93), "resource id `7` is already used at line 8"),
        case("undefined string", with(r#"name="T Set""#, r#"name="$(string.Missing)""#), E, (7, 23), "`name` refers to string `Missing`, which no `<stringTable>` defines"),
        case("string id too large", with(r#"nameID="5""#, r#"nameID="70000""#), E, (8, 59), "`nameID` `70000` is not a string resource id, which is 16 bits"),
        case("description too long", with(r#"description="a""#, &format!(r#"description="{}""#, "a".repeat(65536))), E, (8, 75), "`description` is longer than 65535 UTF-16 units"),
        case("name too long", with(r#"name="T Set""#, &format!(r#"name="{}""#, "n".repeat(1024))), E, (7, 23), "`name` is longer than 1023 characters"),
        case("two providers", with("  </counters>", "   <provider providerGuid=\"{11111111-2222-3333-4444-555555555556}\" applicationIdentity=\"u.sys\"/>\n  </counters>"), E, (15, 4), "a manifest may contain only one `<provider>`"),
        case("empty set", with(&format!("{C3}\n"), "").replace(r#"     <counter id="1" uri="T.A" field="A" name="A" nameID="5" description="a" descriptionID="7"
              type="perf_average_timer" baseID="2" detailLevel="standard"/>
     <counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard"/>
"#, ""), E, (6, 5), "`<counterSet>` has no `<counter>`; the schema requires at least one"),
        case("multi timer", c3(r#"field="C" type="perf_counter_multi_timer" detailLevel="standard""#), E, (11, 6), "`perf_counter_multi_timer` counter `3` has no `multiCounterID`"),
        case("id beyond mask", with(r#"<counter id="3""#, r#"<counter id="64""#), W, (11, 19), "counter id `64` can never be selected through `CounterMask`, which has bits 0 to 63"),
        case("unknown attribute", with(r#"baseID="2""#, r#"baseId="2""#), W, (9, 41), "unknown attribute `baseId` on `<counter>`"),
        case("application identity path", with(r#"applicationIdentity="t.sys""#, r#"applicationIdentity="C:\drivers\t.sys""#), W, (4, 61), "`applicationIdentity` `C:\\drivers\\t.sys` contains a path"),
        case("user-mode provider symbol", with(r#"providerType="kernelMode""#, r#"providerType="userMode""#), E, (4, 4), "a `userMode` `<provider>` needs a `symbol`"),
        case("user-mode structs", with(r#"providerType="kernelMode""#, r#"providerType="userMode" symbol="P""#).replace(r#"instances="multiple">"#, r#"instances="multiple">
     <structs><struct name="S1" type="S1_T"/></structs>"#), E, (8, 6), "`<structs>` in a `userMode` counterset: value blocks are a kernel-mode layout, and a `userMode` provider sets its counters through perflib by id"),
        case("carriage return in a name", with(r#"name="T Set""#, r#"name="T&#13;Set""#), E, (7, 23), "`name` of `<counterSet>` has U+000D (carriage return) at character 2: control characters are dropped or end the line in lodctr's `.ini`, the registry, counter paths and YAML"),
        case("line separator in a description", with(r#"description="a""#, r#"description="a&#x2028;""#), E, (8, 75), "`description` of `<counter>` has U+2028 (line separator) at character 2: YAML readers, editors and older JavaScript take it for a line break"),
        case("lone surrogate in the provider name", with(r#"applicationIdentity="t.sys""#, r#"applicationIdentity="t.sys" providerName="P&#xD800;""#), E, (4, 82), "`providerName` of `<provider>` has U+FFFD (replacement character) at character 2: it marks text already lost: the XML reader gives it for a lone surrogate such as `&#xD800;` or a reference past `U+10FFFF`"),
        case("noncharacter in a uri", with(r#"uri="T.C""#, r#"uri="T.&#xFDD0;""#), E, (11, 27), "`uri` of `<counter>` has U+FDD0 at character 3: noncharacters are reserved for internal use, not interchange"),
        case("two object times", c3(r#"field="C" type="perf_elapsed_time" perfTimeID="1" perfFreqID="2" detailLevel="standard""#).replace(r#"type="perf_average_timer" baseID="2""#, r#"type="perf_elapsed_time" perfTimeID="2" perfFreqID="2""#).replace(r#"field="B" type="perf_average_base""#, r#"field="B" name="B" nameID="13" description="b" descriptionID="15" type="perf_counter_large_rawcount""#), W, (11, 6), "counter `3` names `perfTimeID` `1`, but counter `1` of the same counterset names `2`: a v1 object has one `PerfTime`"),
    ]
}

#[test]
fn table() {
    let print = std::env::var_os("PCW_GEN_PRINT").is_some();
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 25);
    for c in &all {
        let a = analyze(&Input::new("t.man", c.text.as_bytes()));
        if print {
            println!("== {}", c.name);
            for d in &a.diagnostics {
                println!(
                    "   {:?} {}:{} {}",
                    d.severity, d.pos.line, d.pos.column, d.message
                );
            }
        }
        let found = a.diagnostics.iter().any(|d| {
            d.severity == c.severity
                && d.pos.line == c.line
                && d.pos.column == c.column
                && d.message == c.message
        });
        if !found {
            failures.push(format!(
                "{}: expected {:?} {}:{} {:?}, got {:#?}",
                c.name, c.severity, c.line, c.column, c.message, a.diagnostics
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn base_is_valid() {
    let a = analyze(&Input::new("t.man", BASE.as_bytes()));
    assert!(a.diagnostics.is_empty(), "{:#?}", a.diagnostics);
    assert!(a.manifest.is_some());
}

#[test]
fn every_problem_is_reported_in_one_run() {
    let text = BASE
        .replace(r#"providerType="kernelMode""#, r#"providerType="kernel""#)
        .replace(r#"instances="multiple""#, r#"instances="many""#)
        .replace(r#"baseID="2""#, r#"baseID="9""#)
        .replace(
            r#"type="perf_counter_large_rawcount""#,
            r#"type="perf_counter_rawcnt""#,
        )
        .replace(r#"detailLevel="advanced""#, r#"detailLevel="expert""#);
    let a = analyze(&Input::new("t.man", text.as_bytes()));
    let errors: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}:{} {}", d.pos.line, d.pos.column, d.message))
        .collect();
    assert_eq!(
        errors,
        [
            "4:28 invalid `providerType` value `kernel`",
            "7:86 invalid `instances` value `many`",
            "9:49 `baseID` `9` does not name a counter of this counterset",
            "12:21 unknown counter type `perf_counter_rawcnt`",
            "12:55 invalid `detailLevel` value `expert`",
        ]
    );
    assert!(a.manifest.is_none());
    // Diagnostics come sorted by position.
    let positions: Vec<_> = a.diagnostics.iter().map(|d| d.pos).collect();
    let mut sorted = positions.clone();
    sorted.sort();
    assert_eq!(positions, sorted);
}

#[test]
fn rendered_diagnostics_name_file_line_and_column() {
    let text = with(r#"instances="multiple""#, r#"instances="Multiple""#);
    let a = analyze(&Input::new("dir/t.man", text.as_bytes()));
    assert_eq!(
        Diagnostic::render_all(&a.diagnostics),
        "dir/t.man:7:86: error: invalid `instances` value `Multiple`\n  \
         = hint: values are case-sensitive: write `multiple`\n1 error, 0 warnings\n"
    );
}

#[test]
fn lines_ended_by_cr_lf_or_a_lone_cr_are_counted_as_lf_lines() {
    // Two problems, on lines 7 and 10: the same positions whichever line ends the file uses.
    let text = with(r#"instances="multiple""#, r#"instances="Multiple""#)
        .replace(r#"detailLevel="advanced""#, r#"detailLevel="Advanced""#);
    let lf = analyze(&Input::new("t.man", text.as_bytes()));
    let at = |a: &pcw_gen::Analysis| {
        a.diagnostics
            .iter()
            .map(|d| (d.pos.line, d.pos.column, d.message.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(at(&lf).len(), 2, "{:?}", lf.diagnostics);
    for ending in ["\r\n", "\r"] {
        let other = analyze(&Input::new("t.man", text.replace('\n', ending).as_bytes()));
        assert_eq!(at(&other), at(&lf), "lines ended by {ending:?}");
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = analyze(&Input::new("f.man", &bytes));
        }

        #[test]
        fn on_mutated_manifests(pos in 0usize..BASE.len(), len in 0usize..40, insert in "[<>\"=a-z0-9{}/ -]{0,12}") {
            let mut text = BASE.to_owned();
            let start = (0..=pos).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let end = (start + len).min(text.len());
            let end = (end..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
            text.replace_range(start..end, &insert);
            let a = analyze(&Input::new("f.man", text.as_bytes()));
            // Either a manifest or at least one error, never both.
            prop_assert_eq!(a.manifest.is_some(), !a.has_errors());
        }
    }
}

#[test]
fn lint_reports_the_fleet_advice_and_a_missing_file_cannot_be_read() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests");
    let lint = |name: &str| pcw_gen::lint(&Input::read(dir.join(name)).unwrap());
    // fabrikam's displayed `perf_raw_base` draws the one fleet-readiness warning `pcw lint`
    // adds; northwind is clean.
    let diagnostics = lint("fabrikam_v2.man");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert!(!diagnostics[0].is_error());
    assert!(
        diagnostics[0]
            .message
            .contains("has no `noDisplay` attribute")
    );
    assert_eq!(lint("northwind_user.man"), []);
    let missing = dir.join("does-not-exist.man");
    let Err(pcw_gen::Error::Read(e)) = Input::read(&missing) else {
        panic!("a missing manifest reads");
    };
    assert!(
        e.describe().starts_with("cannot read the manifest: "),
        "{e}"
    );
}

#[test]
fn a_broken_counter_neither_hides_nor_fakes_other_problems() {
    // The base counter has its own error: the fraction counter's `baseID` must not be reported
    // as dangling, and a duplicate id on the broken counter is still found.
    let text = with(
        r#"<counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard"/>"#,
        r#"<counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="expert"/>"#,
    )
    .replacen(r#"<counter id="3""#, r#"<counter id="2""#, 1);
    let a = analyze(&Input::new("t.man", text.as_bytes()));
    let messages: Vec<&str> = a.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "invalid `detailLevel` value `expert`",
            "counter id `2` is used twice in counterset `TSet`",
        ]
    );
}

/// Manifests in the shape of Microsoft's user-mode counter samples: a `perf_raw_base` declared
/// before the `perf_raw_fraction` naming it with `baseID`, no `<structs>`, `reference` and
/// `noDisplay` attributes. V2 consumers pair a counter with its base by id, so this is valid;
/// every V1 emitter sees the base moved right after its fraction.
#[test]
fn base_before_its_fraction_is_valid_and_v1_order_moves_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests");
    for name in ["tidal_user.man", "estuary_user.man"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let a = analyze(&Input::new(name, &bytes));
        assert!(a.diagnostics.is_empty(), "{name}: {:#?}", a.diagnostics);
        let m = a.manifest.unwrap();
        let set = m.provider.countersets.last().unwrap();
        let ids: Vec<u16> = set.counters.iter().map(|c| c.id).collect();
        assert_eq!(ids, [1, 2, 4, 3], "{name}: the base follows its fraction");
    }
    // The same in the kernel test manifest: base first, fraction after, another counter last.
    let swapped = BASE.replacen(
        r#"     <counter id="1" uri="T.A" field="A" name="A" nameID="5" description="a" descriptionID="7"
              type="perf_average_timer" baseID="2" detailLevel="standard"/>
     <counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard"/>"#,
        r#"     <counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard"/>
     <counter id="1" uri="T.A" field="A" name="A" nameID="5" description="a" descriptionID="7"
              type="perf_average_timer" baseID="2" detailLevel="standard"/>"#,
        1,
    );
    assert_ne!(swapped, BASE);
    let a = analyze(&Input::new("t.man", swapped.as_bytes()));
    assert!(a.diagnostics.is_empty(), "{:#?}", a.diagnostics);
    let set = &a.manifest.unwrap().provider.countersets[0];
    let order: Vec<u16> = set.counters.iter().map(|c| c.id).collect();
    assert_eq!(order, [1, 2, 3]);
    // Struct fields keep the manifest's order of first appearance: B was declared first.
    let fields: Vec<&str> = set.structs[0]
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(fields, ["B", "A", "C"]);
}

/// The errors of the perf DLL's V1 tables (`Config::v1_tables`): what a V1 object cannot
/// express, at the counter, while the other outputs only warn.
fn v1_errors(text: &str) -> Vec<Diagnostic> {
    let err = pcw_gen::Config::new()
        .v1_tables(&Input::new("t.man", text.as_bytes()))
        .unwrap_err();
    let pcw_gen::Error::Manifest { diagnostics } = err else {
        panic!("expected manifest diagnostics, got {err}");
    };
    diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect()
}

#[test]
fn v1_tables_refuse_a_shared_base() {
    // Counter 3 names counter 2, which V1 order already placed after counter 1.
    let shared = c3(r#"field="C" type="perf_average_timer" baseID="2" detailLevel="advanced""#);
    assert!(
        pcw_gen::Config::new()
            .generate(&Input::new("t.man", shared.as_bytes()))
            .is_ok()
    );
    let errors = v1_errors(&shared);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!((errors[0].pos.line, errors[0].pos.column), (11, 6));
    assert_eq!(
        errors[0].message,
        "counter `3`'s base counter `2` cannot follow it in v1 order (nothing follows it): \
         a v1 consumer reads the base from the next counter definition"
    );
    assert_eq!(
        errors[0].hint.as_deref(),
        Some("give each fraction counter its own base counter")
    );
    // The base-less manifest generates tables whose base follows its fraction.
    let tables = pcw_gen::Config::new()
        .v1_tables(&Input::new("t.man", BASE.as_bytes()))
        .unwrap();
    let ids: Vec<&str> = tables
        .lines()
        .filter_map(|l| l.trim().strip_prefix("id: "))
        .collect();
    assert_eq!(ids, ["1,", "2,", "3,"]);
}

#[test]
fn v1_tables_refuse_two_object_times() {
    let times = with(
        C3,
        &[
            (3, "C", "perf_counter_large_rawcount", ""),
            (4, "D", "perf_counter_large_rawcount", ""),
            (5, "E", "perf_counter_large_rawcount", ""),
            (6, "F", "perf_elapsed_time", r#"perfTimeID="3" perfFreqID="5""#),
            (7, "G", "perf_elapsed_time", r#"perfTimeID="4" perfFreqID="5""#),
        ]
        .iter()
        .map(|(id, f, ty, refs)| {
            format!(
                r#"<counter id="{id}" uri="T.{f}" field="{f}" name="{f}" nameID="{}" description="{f}" descriptionID="{}" type="{ty}" {refs} detailLevel="standard"/>"#,
                id * 4,
                id * 4 + 2
            )
        })
        .collect::<Vec<_>>()
        .join("\n     "),
    );
    let errors = v1_errors(&times);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!((errors[0].pos.line, errors[0].pos.column), (15, 6));
    assert_eq!(
        errors[0].message,
        "counter `7` names `perfTimeID` `4`, but counter `6` of the same counterset names `3`: \
         a v1 object has one `PerfTime`"
    );
}

#[test]
fn deeply_nested_elements_are_walked_without_exhausting_the_stack() {
    // The `<counters>` section below 200 000 unknown elements (about 1.6 MB), and as many
    // elements with no counters at all: each is analysed, on a thread with a small stack, and
    // gives its diagnostics. A walk that recursed once per level overflowed the stack at about
    // 25 000 levels on the main thread's 8 MiB.
    let depth = 200_000;
    let (open, close) = ("<x>".repeat(depth), "</x>".repeat(depth));
    // A deep branch with no counters before the wrapped ones: the walk climbs back out of it.
    let wrapped = with(
        "  <counters",
        &format!("<empty>{open}{close}</empty>{open}<counters"),
    )
    .replacen("</counters>", &format!("</counters>{close}"), 1);
    let bare = format!("<a>{open}{close}</a>");
    let run = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            (
                analyze(&Input::new("wrapped.man", wrapped.as_bytes())),
                analyze(&Input::new("bare.man", bare.as_bytes())),
            )
        })
        .unwrap();
    let (wrapped, bare) = run.join().expect("the analysis returns");
    assert!(!wrapped.has_errors(), "{:?}", wrapped.diagnostics);
    assert!(wrapped.manifest.is_some());
    assert!(bare.has_errors());
    assert!(
        bare.diagnostics
            .iter()
            .any(|d| d.message.contains("no `<counters>` section")),
        "{:?}",
        bare.diagnostics
    );
}

#[test]
fn an_element_with_too_many_attributes_is_refused_at_its_tag() {
    // roxmltree compares each attribute with every earlier one of its element: 80 000 of them
    // (1 MB) took it about a minute. More than 64 are refused before it reads the text, at the
    // tag; quoted `=` and `>`, comments and CDATA count nothing.
    let attrs = |n: usize| {
        let mut out = String::new();
        for k in 0..n {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!(" a{k}=\"x=>y\""));
        }
        out
    };
    let at = |extra: &str| with(" <instrumentation>", &format!(" <instrumentation{extra}>"));
    let over = analyze(&Input::new("t.man", at(&attrs(80_000)).as_bytes()));
    let [d] = over.diagnostics.as_slice() else {
        panic!("{:?}", over.diagnostics);
    };
    assert!(
        d.message.contains("more than 64 attributes"),
        "{}",
        d.message
    );
    assert_eq!((d.pos.line, d.pos.column), (2, 2));
    let just = analyze(&Input::new("t.man", at(&attrs(65)).as_bytes()));
    assert!(just.has_errors());
    let quoted = |n: usize| {
        let mut out = String::new();
        for k in 0..n {
            let _ =
                std::fmt::Write::write_fmt(&mut out, format_args!(" q{k}=\"it's\" s{k}='say \"='"));
        }
        out
    };
    for fine in [
        at(&attrs(64)),
        // Values holding the other quote and `=`: 32 + 32 attributes.
        at(&quoted(32)),
        // A processing instruction's pseudo-attributes are not an element's.
        with(
            " <instrumentation>",
            &format!(" <?pi{}?><instrumentation>", attrs(70)),
        ),
        with(
            " <instrumentation>",
            &format!(
                " <!--<x{}/>--><![CDATA[<y{}>]]><instrumentation>",
                attrs(70),
                attrs(70)
            ),
        ),
    ] {
        let a = analyze(&Input::new("t.man", fine.as_bytes()));
        assert!(
            a.diagnostics
                .iter()
                .all(|d| !d.message.contains("attributes")),
            "{:?}",
            a.diagnostics
        );
    }
}
