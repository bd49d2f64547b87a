// SPDX-License-Identifier: MIT OR Apache-2.0
//! Readers of pcw-gen's non-Rust outputs for the tests, written from the formats' documentation
//! rather than from the generator: the `.rc` string table, the compiled `.res`, the lodctr
//! `.ini` (as the profile API reads it) and symbol `.h`.

// Each test crate that includes this module uses a subset of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `(id, text)` pairs of a generated `.rc` `STRINGTABLE` (`    id, "text"` lines, `""` for a
/// quote, `\\`, `\n` and `\t` escapes), sorted by id.
pub fn rc_strings(rc: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for line in rc.lines() {
        let Some((id, quoted)) = line.trim().split_once(", \"") else {
            continue;
        };
        let Ok(id) = id.parse::<u32>() else { continue };
        let body = quoted.strip_suffix('"').unwrap();
        let (mut text, mut chars) = (String::new(), body.chars());
        while let Some(c) = chars.next() {
            match (c, c == '"' || c == '\\') {
                (_, false) => text.push(c),
                ('"', true) => text.push(chars.next().unwrap()),
                (_, true) => match chars.next().unwrap() {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    other => text.push(other),
                },
            }
        }
        out.push((id, text));
    }
    out.sort();
    out
}

/// The `(id, text)` pairs of a `.res` file's `RT_STRING` blocks, read as the `RESOURCEHEADER`
/// documentation lays them out (ordinal type and name only, which is all a string table has):
/// the 32-byte empty entry first, then per entry `DataSize`, `HeaderSize`, type and name as
/// `0xFFFF` + ordinal, the rest of the header, the data, padding to 4 bytes. Block `b` holds ids
/// `16 * (b - 1)` to `16 * b - 1`; empty strings are absent ids. Sorted by id.
pub fn res_strings(res: &[u8]) -> Vec<(u32, String)> {
    let u16_at = |at: usize| u16::from_le_bytes([res[at], res[at + 1]]);
    let u32_at = |at: usize| u32::from_le_bytes(res[at..at + 4].try_into().unwrap());
    assert_eq!(
        &res[..32],
        &[
            0, 0, 0, 0, 32, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0
        ],
        "a .res file starts with the empty entry"
    );
    let mut out = Vec::new();
    let mut at = 32;
    while at < res.len() {
        let (data_len, header_len) = (u32_at(at) as usize, u32_at(at + 4) as usize);
        assert_eq!(header_len, 32, "ordinal type and name: a 32-byte header");
        assert_eq!((u16_at(at + 8), u16_at(at + 10)), (0xFFFF, 6), "RT_STRING");
        assert_eq!(u16_at(at + 12), 0xFFFF, "an ordinal name");
        assert_eq!(u16_at(at + 22), 0x0409, "English (United States)");
        let block = u32::from(u16_at(at + 14));
        let mut p = at + 32;
        let end = p + data_len;
        for index in 0..16 {
            let len = usize::from(u16_at(p));
            let units: Vec<u16> = (0..len).map(|i| u16_at(p + 2 + 2 * i)).collect();
            p += 2 + 2 * len;
            if len > 0 {
                out.push((
                    (block - 1) * 16 + index,
                    String::from_utf16(&units).unwrap(),
                ));
            }
        }
        assert_eq!(p, end, "block {block}: 16 strings fill its data exactly");
        at = end.next_multiple_of(4);
    }
    assert_eq!(at, res.len());
    out.sort();
    out
}

/// The text of a UTF-16LE file with a byte order mark.
pub fn utf16le(bytes: &[u8]) -> String {
    assert_eq!(bytes.get(..2), Some(&[0xFF, 0xFE][..]), "a UTF-16LE BOM");
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    String::from_utf16(&units).unwrap()
}

/// An `.ini` file's sections and keys as the Windows profile API (`GetPrivateProfileString`,
/// what lodctr reads them with) returns them: lines end at CR LF, `[section]` starts a section,
/// `key=value` splits at the first `=`, blanks around key and value are trimmed, and one pair of
/// matching quotes (`"` or `'`) enclosing the value is removed. Section and key names as
/// written (the API ignores their case; these files never differ in it).
pub fn ini_profile(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section = String::new();
    for line in text.split("\r\n") {
        assert!(
            !line.contains(['\r', '\n']),
            "a line break inside an .ini line: {line:?}"
        );
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            name.clone_into(&mut section);
            continue;
        }
        let (key, value) = line.split_once('=').expect("key=value");
        let value = value.trim();
        let mut chars = value.chars();
        let unquoted = match (chars.next(), chars.next_back()) {
            (Some(a), Some(b)) if a == b && (a == '"' || a == '\'') => chars.as_str(),
            _ => value,
        };
        let previous = out
            .entry(section.clone())
            .or_default()
            .insert(key.trim().to_owned(), unquoted.to_owned());
        assert!(previous.is_none(), "key `{key}` twice in [{section}]");
    }
    out
}

/// The lodctr symbol file's `#define SYMBOL offset` lines (every other line is a `//` comment
/// or empty), as symbol → offset.
pub fn h_symbols(text: &str) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for line in text.split("\r\n") {
        assert!(
            !line.contains(['\r', '\n']),
            "a line break inside a line: {line:?}"
        );
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let rest = line
            .strip_prefix("#define ")
            .expect("#define SYMBOL offset");
        let (symbol, offset) = rest.split_once(' ').expect("#define SYMBOL offset");
        assert!(
            symbol.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
                && symbol
                    .chars()
                    .all(|c| c == '_' || c.is_ascii_alphanumeric()),
            "`{symbol}` is not a C identifier"
        );
        assert!(
            out.insert(symbol.to_owned(), offset.parse().unwrap())
                .is_none()
        );
    }
    out
}

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every tracked `.man` file.
pub fn tracked_manifests() -> Vec<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z", "*.man"])
        .current_dir(root())
        .output()
        .expect("git runs (the test reads the tracked manifests from a checkout)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(|p| root().join(p))
        .collect()
}
