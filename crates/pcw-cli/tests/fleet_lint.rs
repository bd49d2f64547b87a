// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw lint` on a manifest shaped like a public driver's: the fleet-readiness warnings come
//! out in the `file:line:column` format with hints, and warnings alone exit 0.

mod common;

use common::{crate_file, pcw};

#[test]
fn an_xdp_shaped_manifest_gets_fleet_warnings_and_passes() {
    let manifest = crate_file("tests/fixtures/xdp_like.man");
    let out = pcw(&["lint", &manifest]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{manifest}:24:57: warning: `defaultScale` 1 on raw count `AF_XDP Frames Delivered`: formatted readers show the count times 1e1\n  = hint: "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{manifest}:17:32: warning: `multipleAggregate` counterset `Sample XDP Receive Queue` has a `_Total` instance"
        )),
        "{stderr}"
    );
    // Three sets with the `_Total` note, seven scaled raw counts.
    assert!(stderr.ends_with("0 errors, 10 warnings\n"), "{stderr}");
}

#[test]
fn the_drivers_manifest_is_fleet_ready() {
    let out = pcw(&["lint", &crate_file("../../manifest/pcw_driver.man")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn names_the_exporters_cannot_use_are_warned_about_where_they_are() {
    // Before: `---` and `!!!` drew no warning, `1abc` none either; export wrote the
    // OpenTelemetry metrics `.` and `1abc.2x`.
    let manifest = common::xdp_renamed("dashes", "---", "!!!", "AF_XDP Frames Dropped")
        .display()
        .to_string();
    let out = pcw(&["lint", &manifest]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for line in [
        r#":15:44: warning: counterset name `---` has no ascii letter or digit for windows_exporter: its object gets the `name` `""` and its metrics `windows_performancecounter_<counter>`"#,
        ":15:44: warning: counterset name `---` has no ascii letter or digit for OpenTelemetry: its metrics become `.<counter>`, which is no valid instrument name",
        r":21:74: warning: counter name `!!!` has no ascii letter or digit for windows_exporter: `---\!!!` becomes metric `windows_performancecounter`, which does not name the counter",
        r":21:74: warning: counter name `!!!` has no ascii letter or digit for OpenTelemetry: `---\!!!` becomes metric `.`, which does not name the counter",
    ] {
        assert!(
            stderr.contains(&format!("{manifest}{line}\n  = hint: ")),
            "{line}\n{stderr}"
        );
    }
    assert!(stderr.ends_with("0 errors, 14 warnings\n"), "{stderr}");
    let _ = std::fs::remove_file(&manifest);

    let manifest = common::xdp_renamed("digit", "1abc", "2x", "AF_XDP Frames Dropped")
        .display()
        .to_string();
    let out = pcw(&["lint", &manifest]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{manifest}:15:44: warning: counterset name `1abc` starts its OpenTelemetry metric names with a digit: `1abc.<counter>` is no valid instrument name\n"
        )),
        "{stderr}"
    );
    assert!(stderr.ends_with("0 errors, 11 warnings\n"), "{stderr}");
    let _ = std::fs::remove_file(&manifest);
}
