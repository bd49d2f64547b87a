// SPDX-License-Identifier: MIT OR Apache-2.0
//! The walkthroughs cannot drift from the code they show: every code block of
//! `docs/adding-counters.md`, `docs/testing-your-driver.md` and
//! `docs/declaring-counters-in-rust.md` is preceded by
//! `<!-- verbatim: PATH -->` and must appear in that repository file line for line (a block may
//! be dedented as a whole, and a line `// …` or `# …` skips lines of the file). A block without
//! the marker, a marker naming a missing file, or a block the file does not contain fails,
//! naming the block's line in the document.

use std::path::{Path, PathBuf};

const DOC: &str = "docs/adding-counters.md";
const TESTING: &str = "docs/testing-your-driver.md";
const DECLARING: &str = "docs/declaring-counters-in-rust.md";
const MARKER: &str = "<!-- verbatim: ";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fenced code block of the document: the line its fence opens on (1-based), the file its
/// marker names (if any), and its lines.
#[derive(Debug)]
struct Block {
    line: usize,
    file: Option<String>,
    lines: Vec<String>,
}

fn blocks(name: &str, doc: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut lines = doc.lines().enumerate().peekable();
    let mut marker: Option<String> = None;
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix(MARKER) {
            let file = rest
                .strip_suffix("-->")
                .ok_or(format!("{name}:{}: unterminated marker", i + 1))?;
            marker = Some(file.trim().to_owned());
            continue;
        }
        if trimmed.starts_with("```") {
            let mut body = Vec::new();
            loop {
                let Some((_, l)) = lines.next() else {
                    return Err(format!("{name}:{}: unclosed code block", i + 1));
                };
                if l.trim_start().starts_with("```") {
                    break;
                }
                body.push(l.to_owned());
            }
            // The marker is the last non-empty line before the fence (any other text resets it).
            let file = marker.take();
            out.push(Block {
                line: i + 1,
                file,
                lines: body,
            });
            continue;
        }
        if !trimmed.is_empty() {
            marker = None;
        }
    }
    Ok(out)
}

fn is_elision(line: &str) -> bool {
    matches!(line.trim(), "// …" | "# …" | "<!-- … -->")
}

/// Whether `segment` matches `file` at `at`, every line with the same extra indentation.
fn matches_at(file: &[&str], at: usize, segment: &[String]) -> bool {
    let mut indent: Option<&str> = None;
    for (k, want) in segment.iter().enumerate() {
        let Some(have) = file.get(at + k) else {
            return false;
        };
        if want.trim().is_empty() {
            if !have.trim().is_empty() {
                return false;
            }
            continue;
        }
        let Some(prefix) = have.strip_suffix(want.as_str()) else {
            return false;
        };
        if !prefix.chars().all(char::is_whitespace) {
            return false;
        }
        match indent {
            None => indent = Some(prefix),
            Some(i) if i == prefix => {}
            Some(_) => return false,
        }
    }
    true
}

/// Whether `block` appears in `file`: its segments (split at elision lines) in order.
fn contains(file: &str, block: &[String]) -> bool {
    let file: Vec<&str> = file.lines().collect();
    let segments: Vec<&[String]> = block
        .split(|l| is_elision(l))
        .filter(|s| !s.is_empty())
        .collect();
    let mut from = 0;
    for segment in segments {
        let Some(at) = (from..=file.len()).find(|&at| matches_at(&file, at, segment)) else {
            return false;
        };
        from = at + segment.len();
    }
    true
}

fn check(doc: &str) -> Vec<String> {
    check_doc(DOC, doc)
}

fn check_doc(name: &str, doc: &str) -> Vec<String> {
    let blocks = match blocks(name, doc) {
        Ok(b) => b,
        Err(e) => return vec![e],
    };
    let mut errors = Vec::new();
    if blocks.is_empty() {
        errors.push(format!("{name}: no code blocks"));
    }
    for b in &blocks {
        let Some(file) = &b.file else {
            errors.push(format!(
                "{name}:{}: code block without a `{MARKER}PATH -->` marker right before it",
                b.line
            ));
            continue;
        };
        let text = match std::fs::read_to_string(root().join(file)) {
            Ok(t) => t,
            Err(e) => {
                errors.push(format!("{name}:{}: `{file}`: {e}", b.line));
                continue;
            }
        };
        if !contains(&text, &b.lines) {
            errors.push(format!(
                "{name}:{}: this block does not appear verbatim in `{file}`",
                b.line
            ));
        }
    }
    errors
}

fn doc() -> String {
    read(DOC)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap()
}

#[test]
fn every_code_block_of_the_walkthrough_is_in_the_example() {
    let errors = check(&doc());
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_walkthrough_shows_each_step_from_the_example_s_own_files() {
    let doc = doc();
    let blocks = blocks(DOC, &doc).unwrap();
    for file in [
        "examples/checksum-driver/checksum_driver.man",
        "examples/checksum-driver/build.rs",
        "examples/checksum-driver/Cargo.toml",
        "examples/checksum-driver/src/counters.rs",
        "examples/checksum-driver/src/kernel.rs",
        "scripts/test.sh",
    ] {
        assert!(
            blocks.iter().any(|b| b.file.as_deref() == Some(file)),
            "the walkthrough has no block from `{file}`"
        );
    }
}

#[test]
fn every_code_block_of_the_testing_walkthrough_is_in_the_repository() {
    let errors = check_doc(TESTING, &read(TESTING));
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_testing_walkthrough_shows_the_example_s_tests_and_the_test_command() {
    let doc = read(TESTING);
    let blocks = blocks(TESTING, &doc).unwrap();
    for file in [
        "examples/checksum-driver/Cargo.toml",
        "examples/checksum-driver/src/lib.rs",
        "examples/checksum-driver/tests/publisher.rs",
        "examples/checksum-driver/tests/driver.rs",
        "crates/pcw-harness/tests/v1.rs",
        "scripts/test.sh",
        "scripts/cross-windows.sh",
    ] {
        assert!(
            blocks.iter().any(|b| b.file.as_deref() == Some(file)),
            "the testing walkthrough has no block from `{file}`"
        );
    }
    // An edited block of it fails like one of the first walkthrough.
    let edited = doc.replacen(
        "fault_sweep(build, BUILD_SERVER_2022)",
        "fault_sweep(build, 1)",
        1,
    );
    assert_ne!(edited, doc, "the walkthrough shows the fault sweep");
    let errors = check_doc(TESTING, &edited);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("docs/testing-your-driver.md:"),
        "{errors:?}"
    );
}

/// The check itself: an edited block, a missing marker and a wrong file are each caught.
#[test]
fn an_edited_walkthrough_fails_the_check() {
    let doc = doc();
    // Change one character inside the build.rs line the walkthrough shows.
    let edited = doc.replacen(
        "pcw_gen::compile(\"checksum_driver.man\")",
        "pcw_gen::compile(\"checksum.man\")",
        1,
    );
    assert_ne!(edited, doc, "the walkthrough shows the build.rs line");
    let errors = check(&edited);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("does not appear verbatim in `examples/checksum-driver/build.rs`"));

    let unmarked = doc.replacen(MARKER, "<!-- ", 1);
    assert!(
        check(&unmarked)
            .iter()
            .any(|e| e.contains("without a `<!-- verbatim: PATH -->` marker"))
    );

    let moved = doc.replacen(
        "<!-- verbatim: examples/checksum-driver/build.rs -->",
        "<!-- verbatim: examples/checksum-driver/Cargo.toml -->",
        1,
    );
    assert!(!check(&moved).is_empty());
}

#[test]
fn matching_rules() {
    let file = "fn main() {\n    let a = 1;\n\n    let b = 2;\n    let c = 3;\n}\n";
    let lines = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(contains(file, &lines("let a = 1;\n\nlet b = 2;")));
    assert!(contains(file, &lines("fn main() {\n// …\n}")));
    assert!(!contains(file, &lines("let a = 1;\nlet b = 2;")));
    assert!(!contains(file, &lines("let b = 2;\n// …\nlet a = 1;")));
    assert!(!contains(file, &lines("let a = 2;")));
    // One indentation for the whole block.
    assert!(!contains("  a\n    b\n", &lines("a\nb")));
}

/// `docs/declaring-counters-in-rust.md`, the walkthrough of counters declared in Rust, is held to
/// the same rule, over the files it shows: pcw-tidal's declaration and build script, a
/// kernel-mode declaration that compiles, a compile error's committed output.
#[test]
fn every_code_block_of_the_declaration_walkthrough_is_in_the_repository() {
    let doc = read(DECLARING);
    let errors = check_doc(DECLARING, &doc);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let blocks = blocks(DECLARING, &doc).unwrap();
    for file in [
        "crates/pcw-tidal/src/declaration.rs",
        "crates/pcw-tidal/build.rs",
        "crates/pcw-tidal/src/lib.rs",
        "crates/pcw-gen-check/tests/ui-pass-declare/kernel_mode.rs",
        "crates/pcw-gen-check/tests/ui-declare/duplicate_id.stderr",
        "scripts/cross-windows.sh",
    ] {
        assert!(
            blocks.iter().any(|b| b.file.as_deref() == Some(file)),
            "the walkthrough has no block from `{file}`"
        );
    }
}
