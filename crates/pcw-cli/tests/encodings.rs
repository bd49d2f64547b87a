// SPDX-License-Identifier: MIT OR Apache-2.0
//! One reading of text files: every command that takes a manifest, and `typeperf -cf`, accepts
//! UTF-8 with or without a byte order mark and UTF-16 LE or BE with one, and answers the same
//! for each; a file that is not text is reported at its line and column.

mod common;

use std::path::Path;

use common::pcw;

fn encodings(text: &str) -> Vec<(&'static str, Vec<u8>)> {
    let utf16 = |big: bool| {
        let mut out: Vec<u8> = if big {
            vec![0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE]
        };
        for u in text.encode_utf16() {
            out.extend_from_slice(&if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        out
    };
    vec![
        ("utf-8", text.as_bytes().to_vec()),
        (
            "utf-8 with bom",
            [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
        ),
        ("utf-16le", utf16(false)),
        ("utf-16be", utf16(true)),
    ]
}

#[test]
fn every_manifest_command_reads_every_encoding_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../manifest/pcw_driver.man"),
    )
    .unwrap();
    let mut first: Option<Vec<String>> = None;
    for (name, bytes) in encodings(&text) {
        // The same file name each time, since some outputs quote it.
        let path = dir.path().join("m.man");
        std::fs::write(&path, &bytes).unwrap();
        let m = path.to_str().unwrap();
        let mut outputs = Vec::new();
        for args in [
            &["lint", m][..],
            &["gen", m],
            &["inspect", m, "--json"],
            &["export", m, "--to", "otel"],
            &["export", m, "--to", "windows-exporter"],
            &["list", "--manifest", m, "--json"],
            &["typeperf", "-qx", "--manifest", m],
        ] {
            let out = pcw(args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{name}: {args:?}: {stderr}");
            outputs.push(String::from_utf8(out.stdout).unwrap());
        }
        match &first {
            None => first = Some(outputs),
            Some(expected) => assert_eq!(&outputs, expected, "{name}"),
        }
    }
}

#[test]
fn a_counter_file_is_read_in_every_encoding_without_its_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in encodings("\\Geometric Waves(Small Wave)\\Triangle\r\n\r\n") {
        let path = dir.path().join("paths.txt");
        std::fs::write(&path, &bytes).unwrap();
        let out = pcw(&[
            "typeperf",
            "-cf",
            path.to_str().unwrap(),
            "-sc",
            "1",
            "-si",
            "0.01",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("\"\\\\PCW-SIM\\Geometric Waves(Small Wave)\\Triangle\""),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn text_that_is_not_text_is_reported_where_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let cf = dir.path().join("paths.txt");
    std::fs::write(&cf, b"\\A\\B\n\\C\xFF\\D\n").unwrap();
    let out = pcw(&["typeperf", "-cf", cf.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not text: line 2, column 3: not valid utf-8"),
        "{stderr}"
    );
    // A UTF-16 manifest cut in the middle of a character.
    let man = dir.path().join("cut.man");
    let mut bytes = encodings("<a>\n<b/>\n</a>").swap_remove(2).1;
    bytes.pop();
    std::fs::write(&man, &bytes).unwrap();
    let out = pcw(&["lint", man.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "cut.man:3:4: error: the manifest is utf-16le with an odd number of bytes: the text is cut short"
        ),
        "{stderr}"
    );
}
