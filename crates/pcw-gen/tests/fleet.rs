// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fleet-readiness lints: each case is a manifest with one problem `windows_exporter`, the
//! OpenTelemetry receiver or PDH paths trip on, and the warning `pcw lint` pins for it
//! (line, column, message). A clean manifest gets none of them.

use pcw_gen::{Diagnostic, Input, Severity};

/// A fleet-ready kernel-mode manifest, one thing per line so positions are easy to read.
const CLEAN: &str = r#"<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
 <instrumentation>
  <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="2.0">
   <provider providerType="kernelMode" applicationIdentity="t.sys"
             providerGuid="{11111111-2222-3333-4444-555555555555}">
    <counterSet guid="{aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee}" uri="T.Set" symbol="TSet"
                name="T Set" nameID="1" description="d" descriptionID="3" instances="multiple">
     <counter id="1" uri="T.A" field="A" name="A Time" nameID="5" description="a" descriptionID="7"
              type="perf_average_timer" baseID="2" detailLevel="standard"/>
     <counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard">
      <counterAttributes><counterAttribute name="noDisplay"/></counterAttributes>
     </counter>
     <counter id="3" uri="T.C" field="C" name="C Count" nameID="9" description="c" descriptionID="11"
              type="perf_counter_large_rawcount" detailLevel="advanced"/>
    </counterSet>
   </provider>
  </counters>
 </instrumentation>
</instrumentationManifest>
"#;

fn with(from: &str, to: &str) -> String {
    assert!(CLEAN.contains(from), "case does not apply: {from}");
    CLEAN.replacen(from, to, 1)
}

fn warnings(text: &str) -> Vec<Diagnostic> {
    let input = Input::new("t.man", text);
    let analysis = pcw_gen::analyze(&input);
    assert!(!analysis.has_errors(), "{:#?}", analysis.diagnostics);
    // What lint adds to the analysis.
    let found: Vec<Diagnostic> = pcw_gen::lint(&input)
        .into_iter()
        .filter(|d| !analysis.diagnostics.contains(d))
        .collect();
    assert!(found.iter().all(|d| d.severity == Severity::Warning));
    assert!(
        found.iter().all(|d| d.hint.is_some()),
        "every fleet warning has a hint"
    );
    found
}

/// Asserts exactly one fleet warning, at `line:column`, with `message`.
fn pin(case: &str, text: &str, line: u32, column: u32, message: &str) {
    let found = warnings(text);
    let rendered: Vec<String> = found.iter().map(Diagnostic::render).collect();
    assert_eq!(found.len(), 1, "{case}: {rendered:#?}");
    let d = &found[0];
    assert_eq!(
        (d.pos.line, d.pos.column, d.message.as_str()),
        (line, column, message),
        "{case}: {}",
        d.render()
    );
}

#[test]
fn a_clean_manifest_has_no_fleet_warning() {
    assert_eq!(warnings(CLEAN), []);
}

#[test]
fn the_drivers_manifest_has_no_fleet_warning() {
    let text = include_str!("../../../manifest/pcw_driver.man");
    let found = warnings(text);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_manifest_with_errors_gets_no_fleet_pass() {
    let broken = with(
        r#"type="perf_counter_large_rawcount""#,
        r#"type="perf_nope""#,
    );
    let input = Input::new("t.man", &broken);
    assert_eq!(pcw_gen::lint(&input), pcw_gen::analyze(&input).diagnostics);
}

#[test]
fn object_name_with_path_characters() {
    pin(
        "parentheses",
        &with(r#"name="T Set""#, r#"name="T Set (v2)""#),
        7,
        23,
        "counterset name `T Set (v2)` has `(`, which counter paths cannot carry in an object name",
    );
}

#[test]
fn counter_name_with_path_characters() {
    pin(
        "backslash",
        &with(r#"name="C Count""#, r#"name="C\Count""#),
        13,
        48,
        r"counter name `C\Count` has `\`, which counter paths cannot carry",
    );
}

#[test]
fn names_with_blanks_around() {
    pin(
        "trailing blank",
        &with(r#"name="C Count""#, r#"name="C Count ""#),
        13,
        48,
        "counter name `C Count ` starts or ends with a blank",
    );
}

#[test]
fn non_ascii_names() {
    pin(
        "counter",
        &with(r#"name="C Count""#, r#"name="Zähler""#),
        13,
        48,
        "counter name `Zähler` is not ascii",
    );
    pin(
        "counterset",
        &with(r#"name="T Set""#, r#"name="Größe""#),
        7,
        23,
        "counterset name `Größe` is not ascii",
    );
}

#[test]
fn counters_colliding_in_windows_exporter() {
    // `A Time` and `A-Time` are different PDH counters but the same exporter field and metric.
    let text = with(r#"name="C Count""#, r#"name="A-Time""#);
    let found = warnings(&text);
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "counter name `A-Time` mangles to windows_exporter field `A_TIME`, as `A Time` in the same set does",
            r"`T Set\A-Time` and `T Set\A Time` both become windows_exporter metric `windows_performancecounter_t_set_a_time`",
            r"`T Set\A-Time` and `T Set\A Time` both become OpenTelemetry metric `t_set.a_time`",
        ]
    );
    assert!(found.iter().all(|d| (d.pos.line, d.pos.column) == (13, 48)));
}

#[test]
fn countersets_colliding_after_mangling() {
    // A second set named `T-Set`: the same metric prefix, and the same metric for `C Count`.
    let second = r#"<counterSet guid="{aaaaaaaa-bbbb-cccc-dddd-ffffffffffff}" uri="T.Set2" symbol="TSet2"
                name="T-Set" nameID="13" description="d" descriptionID="15" instances="single">
     <counter id="1" uri="T2.C" field="C" name="C Count" nameID="17" description="c" descriptionID="19"
              type="perf_counter_large_rawcount" detailLevel="standard"/>
    </counterSet>
   </provider>"#;
    let text = with(
        "</counterSet>\n   </provider>",
        &format!("</counterSet>\n    {second}"),
    );
    let found = warnings(&text);
    let rendered: Vec<String> = found.iter().map(Diagnostic::render).collect();
    assert_eq!(found.len(), 3, "{rendered:#?}");
    assert_eq!(
        found[0].message,
        "counterset name `T-Set` mangles to `t_set`, as `T Set` does"
    );
    assert_eq!((found[0].pos.line, found[0].pos.column), (17, 23));
    assert_eq!(
        found[1].message,
        r"`T-Set\C Count` and `T Set\C Count` both become windows_exporter metric `windows_performancecounter_t_set_c_count`"
    );
    assert_eq!(
        found[2].message,
        r"`T-Set\C Count` and `T Set\C Count` both become OpenTelemetry metric `t_set.c_count`"
    );
}

#[test]
fn base_without_no_display() {
    let text = with(
        r#"<counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard">
      <counterAttributes><counterAttribute name="noDisplay"/></counterAttributes>
     </counter>"#,
        r#"<counter id="2" uri="T.B" field="B" type="perf_average_base" detailLevel="standard"/>"#,
    );
    pin(
        "base",
        &text,
        10,
        6,
        "base counter `T.B` (`perf_average_base`) has no `noDisplay` attribute",
    );
}

#[test]
fn default_scale_on_raw_counts() {
    pin(
        "rawcount",
        &with(
            r#"type="perf_counter_large_rawcount" detailLevel="advanced""#,
            r#"type="perf_counter_large_rawcount" detailLevel="advanced" defaultScale="1""#,
        ),
        14,
        87,
        "`defaultScale` 1 on raw count `C Count`: formatted readers show the count times 1e1",
    );
    // A scale on a rate is what the attribute is for: no warning.
    let rate = with(
        r#"type="perf_counter_large_rawcount" detailLevel="advanced""#,
        r#"type="perf_counter_bulk_count" detailLevel="advanced" defaultScale="-3""#,
    );
    assert_eq!(warnings(&rate), []);
}

#[test]
fn multiple_aggregate_total_and_unaggregated_counters() {
    let text = with(
        r#"instances="multiple""#,
        r#"instances="multipleAggregate""#,
    );
    let found = warnings(&text);
    let got: Vec<(u32, u32, &str)> = found
        .iter()
        .map(|d| (d.pos.line, d.pos.column, d.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                7,
                86,
                "`multipleAggregate` counterset `T Set` has a `_Total` instance that windows_exporter drops unless its `instances` list names `_Total`"
            ),
            (
                8,
                6,
                "counter `A Time` has no `aggregate` attribute: the `_Total` instance sums it"
            ),
            (
                13,
                6,
                "counter `C Count` has no `aggregate` attribute: the `_Total` instance sums it"
            ),
        ]
    );
    // Saying how `_Total` combines each counter leaves only the `_Total` note.
    let explicit = text
        .replace(r#"baseID="2""#, r#"baseID="2" aggregate="avg""#)
        .replace(
            r#"detailLevel="advanced""#,
            r#"detailLevel="advanced" aggregate="max""#,
        );
    assert_eq!(warnings(&explicit).len(), 1);
}

#[test]
fn global_aggregate_hides_instance_names() {
    pin(
        "globalAggregate",
        &with(r#"instances="multiple""#, r#"instances="globalAggregate""#),
        7,
        86,
        "`globalAggregate` counterset `T Set` shows one combined instance: the provider's instance names never reach typeperf or the exporters",
    );
}

#[test]
fn lint_reports_fleet_warnings_with_the_manifest_rules() {
    let dir = std::env::temp_dir().join(format!("pcw-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scaled.man");
    std::fs::write(
        &path,
        with(
            r#"type="perf_counter_large_rawcount" detailLevel="advanced""#,
            r#"type="perf_counter_large_rawcount" detailLevel="advanced" defaultScale="2""#,
        ),
    )
    .unwrap();
    let all = pcw_gen::lint(&Input::read(&path).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    let rendered = Diagnostic::render_all(&all);
    assert!(
        rendered.contains("scaled.man:14:87: warning: `defaultScale` 2 on raw count `C Count`"),
        "{rendered}"
    );
    assert!(
        rendered.contains("  = hint: typeperf, Get-Counter"),
        "{rendered}"
    );
}

/// `(line, column, message)` of every fleet warning.
fn found(text: &str) -> Vec<(u32, u32, String)> {
    warnings(text)
        .into_iter()
        .map(|d| (d.pos.line, d.pos.column, d.message))
        .collect()
}

/// The clean manifest with its counterset named `set` and its `C Count` counter `counter`.
fn named(set: &str, counter: &str) -> String {
    with(r#"name="T Set""#, &format!(r#"name="{set}""#)).replacen(
        r#"name="C Count""#,
        &format!(r#"name="{counter}""#),
        1,
    )
}

#[test]
fn names_with_no_letter_or_digit() {
    // Before: no warning at all, while `pcw export` wrote the OpenTelemetry metric `.` and a
    // windows_exporter object named `""` with the metric `windows_performancecounter`.
    assert_eq!(
        found(&named("---", "!!!")),
        [
            (
                7,
                23,
                r#"counterset name `---` has no ascii letter or digit for windows_exporter: its object gets the `name` `""` and its metrics `windows_performancecounter_<counter>`"#
                    .to_owned()
            ),
            (
                7,
                23,
                "counterset name `---` has no ascii letter or digit for OpenTelemetry: its metrics become `.<counter>`, which is no valid instrument name"
                    .to_owned()
            ),
            (
                13,
                48,
                r"counter name `!!!` has no ascii letter or digit for windows_exporter: `---\!!!` becomes metric `windows_performancecounter`, which does not name the counter"
                    .to_owned()
            ),
            (
                13,
                48,
                r"counter name `!!!` has no ascii letter or digit for OpenTelemetry: `---\!!!` becomes metric `.`, which does not name the counter"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn non_ascii_names_that_leave_nothing() {
    // Before: only the two "not ascii" warnings.
    let got = found(&named("é中文😀", "é中文😀"));
    let messages: Vec<&str> = got.iter().map(|(_, _, m)| m.as_str()).collect();
    assert_eq!(messages.len(), 6, "{messages:#?}");
    assert!(messages.contains(
        &"counterset name `é中文😀` has no ascii letter or digit for OpenTelemetry: its metrics become `.<counter>`, which is no valid instrument name"
    ));
    assert!(messages.contains(
        &r"counter name `é中文😀` has no ascii letter or digit for OpenTelemetry: `é中文😀\é中文😀` becomes metric `.`, which does not name the counter"
    ));
    // One non-ASCII counter in an ASCII set: its metric is the set's alone.
    assert_eq!(
        found(&named("S", "é")),
        [
            (13, 48, "counter name `é` is not ascii".to_owned()),
            (
                13,
                48,
                r"counter name `é` has no ascii letter or digit for windows_exporter: `S\é` becomes metric `windows_performancecounter_s`, which does not name the counter"
                    .to_owned()
            ),
            (
                13,
                48,
                r"counter name `é` has no ascii letter or digit for OpenTelemetry: `S\é` becomes metric `s.`, which does not name the counter"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn otel_names_starting_with_a_digit() {
    // Before: no warning; `pcw export` wrote the instrument name `1abc.2x`.
    pin(
        "digit",
        &named("1abc", "2x"),
        7,
        23,
        "counterset name `1abc` starts its OpenTelemetry metric names with a digit: `1abc.<counter>` is no valid instrument name",
    );
    // A counter name starting with a digit is fine after the `.`.
    assert_eq!(found(&named("S", "2x")), []);
}

#[test]
fn otel_names_over_255_characters() {
    // Before: no warning for a 601-character instrument name.
    let set = "S".repeat(300);
    let counter = "C".repeat(300);
    let metric = format!("{}.{}", "s".repeat(300), "c".repeat(300));
    let got = found(&named(&set, &counter));
    assert_eq!(got.len(), 2, "{got:#?}");
    // `A Time` at its name, then the renamed counter.
    assert_eq!((got[0].0, got[0].1), (8, 48));
    assert_eq!(
        got[1],
        (
            13,
            48,
            format!(
                r"`{set}\{counter}` becomes OpenTelemetry metric `{metric}`, which has 601 characters, more than the 255 an instrument name may have"
            )
        )
    );
    // 255 characters are allowed, 256 are not.
    let set = "S".repeat(100);
    assert_eq!(found(&named(&set, &"C".repeat(154))), []);
    let got = found(&named(&set, &"C".repeat(155)));
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0]
            .2
            .ends_with("which has 256 characters, more than the 255 an instrument name may have")
    );
}

#[test]
fn exported_names_for_one_exporter() {
    use pcw_gen::fleet::Exporter;
    use pcw_gen::metric_name_warnings;
    let text = with(r#"name="C Count""#, r#"name="A-Time""#);
    let input = Input::new("t.man", &text);
    let (analysis, otel) = metric_name_warnings(&input, Exporter::OpenTelemetry);
    assert!(analysis.manifest.is_some());
    let messages: Vec<&str> = otel.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [r"`T Set\A-Time` and `T Set\A Time` both become OpenTelemetry metric `t_set.a_time`"]
    );
    let (_, we) = metric_name_warnings(&input, Exporter::WindowsExporter);
    assert_eq!(we.len(), 1);
    assert!(we[0].message.contains("windows_exporter metric"));
    let (_, clean) = metric_name_warnings(&Input::new("t.man", CLEAN), Exporter::OpenTelemetry);
    assert_eq!(clean, []);
}
