// SPDX-License-Identifier: MIT OR Apache-2.0
//! The one decoding of the tools' text files (counter manifests, typeperf counter files).
//!
//! Accepted, as Windows tools write them: UTF-8 with or without a byte order mark, UTF-16LE
//! and UTF-16BE with a byte order mark, and UTF-16 without one when its first character is
//! ASCII (an ASCII byte next to a NUL byte cannot start UTF-8 text, so the guess is safe; it is
//! the XML specification's autodetection for `<`, extended to any first ASCII character). The
//! byte order mark is not part of the decoded text. An invalid byte or an unpaired surrogate
//! is an error with the 1-based line and column (in characters) where the text stops being
//! valid, which is where an editor shows the problem.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use thiserror::Error;

/// The encoding a text was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (with or without a byte order mark).
    Utf8,
    /// UTF-16, little-endian.
    Utf16Le,
    /// UTF-16, big-endian.
    Utf16Be,
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Utf8 => "utf-8",
            Self::Utf16Le => "utf-16le",
            Self::Utf16Be => "utf-16be",
        })
    }
}

/// What is wrong with a text file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A byte sequence that is not UTF-8.
    InvalidUtf8,
    /// UTF-16 with an odd number of bytes (the last character is cut in half).
    OddLength,
    /// A UTF-16 surrogate without its pair.
    UnpairedSurrogate,
}

/// Why bytes are not text, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{}", self.message())]
pub struct TextError {
    /// What is wrong.
    pub problem: Problem,
    /// The encoding the bytes were read as.
    pub encoding: Encoding,
    /// 1-based line of the first invalid character.
    pub line: u32,
    /// 1-based column, in characters, of the first invalid character.
    pub column: u32,
}

impl TextError {
    /// The problem in words (lowercase, no position).
    pub fn message(&self) -> String {
        match self.problem {
            Problem::InvalidUtf8 => "not valid utf-8".to_owned(),
            Problem::OddLength => {
                format!(
                    "{} with an odd number of bytes: the text is cut short",
                    self.encoding
                )
            }
            Problem::UnpairedSurrogate => {
                format!("{} with an unpaired surrogate", self.encoding)
            }
        }
    }
}

/// Decodes a text file's bytes (see the module docs for what is accepted).
///
/// # Errors
/// [`TextError`] with the position of the first invalid character.
pub fn decode(bytes: &[u8]) -> Result<(String, Encoding), TextError> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return utf8(rest);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, Encoding::Utf16Le);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, Encoding::Utf16Be);
    }
    match bytes {
        [a, 0, ..] if *a != 0 && a.is_ascii() => utf16(bytes, Encoding::Utf16Le),
        [0, b, ..] if *b != 0 && b.is_ascii() => utf16(bytes, Encoding::Utf16Be),
        _ => utf8(bytes),
    }
}

fn utf8(bytes: &[u8]) -> Result<(String, Encoding), TextError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((s.to_owned(), Encoding::Utf8)),
        Err(e) => {
            let good = bytes.get(..e.valid_up_to()).unwrap_or_default();
            let (line, column) = end_of(&String::from_utf8_lossy(good));
            Err(TextError {
                problem: Problem::InvalidUtf8,
                encoding: Encoding::Utf8,
                line,
                column,
            })
        }
    }
}

fn utf16(bytes: &[u8], encoding: Encoding) -> Result<(String, Encoding), TextError> {
    let units = bytes.chunks_exact(2).map(|pair| match (pair, encoding) {
        ([a, b], Encoding::Utf16Be) => u16::from_be_bytes([*a, *b]),
        ([a, b], _) => u16::from_le_bytes([*a, *b]),
        _ => 0,
    });
    let mut text = String::with_capacity(bytes.len() / 2);
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => text.push(c),
            Err(_) => return Err(at_end(&text, Problem::UnpairedSurrogate, encoding)),
        }
    }
    if !bytes.len().is_multiple_of(2) {
        return Err(at_end(&text, Problem::OddLength, encoding));
    }
    Ok((text, encoding))
}

fn at_end(text: &str, problem: Problem, encoding: Encoding) -> TextError {
    let (line, column) = end_of(text);
    TextError {
        problem,
        encoding,
        line,
        column,
    }
}

/// The 1-based line and column just after `text`.
pub fn end_of(text: &str) -> (u32, u32) {
    let line = text.bytes().filter(|b| *b == b'\n').count() + 1;
    let last = text.rsplit('\n').next().unwrap_or_default();
    let column = last.chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// `text` with every character a terminal would not show as itself (control and format
/// characters, byte order marks, line and paragraph separators, and any white space but the
/// plain space) written as `\u{…}`, for messages that quote user input: whatever the input
/// holds, the message keeps its lines.
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_io::text::visible("a\nb\u{2028}c"), "a\\u{a}b\\u{2028}c");
/// assert_eq!(pcw_io::text::visible("plain"), "plain");
/// ```
pub fn visible(text: &str) -> Cow<'_, str> {
    escape_where(text, hidden)
}

/// Whether a terminal would not show `c` as itself: what [`visible`] escapes (control and
/// format characters — the soft hyphen, zero-width and bidirectional marks, word joiners,
/// byte order marks, interlinear annotations — line and paragraph separators, and any white
/// space but the plain space).
///
/// # Examples
///
/// ```
/// assert!(pcw_io::text::hidden('\u{200b}'));
/// assert!(pcw_io::text::hidden('\u{a0}'));
/// assert!(!pcw_io::text::hidden(' '));
/// ```
pub fn hidden(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}')
        || matches!(c, '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

/// A path as a message shows it: [`visible`] over its text (bytes that are not UTF-8 shown as
/// `U+FFFD`), so that a file name with a line break or a control character stays on its line.
///
/// # Examples
///
/// ```
/// use std::path::Path;
///
/// assert_eq!(pcw_io::text::shown(Path::new("bad\nname.man")), "bad\\u{a}name.man");
/// ```
pub fn shown(path: &std::path::Path) -> String {
    visible(&path.to_string_lossy()).into_owned()
}

/// `text` with the characters `which` selects written as `\u{…}` (lowercase hexadecimal, as
/// Rust writes them); text without them is returned as it is.
pub fn escape_where(text: &str, which: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&which) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if which(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc16(s: &str, be: bool, bom: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if bom {
            out.extend_from_slice(if be { &[0xFE, 0xFF] } else { &[0xFF, 0xFE] });
        }
        for u in s.encode_utf16() {
            out.extend_from_slice(&if be { u.to_be_bytes() } else { u.to_le_bytes() });
        }
        out
    }

    #[test]
    fn every_supported_encoding_gives_the_same_text_without_the_bom() {
        for text in ["<a é='1'/>\r\nline 2 \u{1F600}", r"\Geometric Waves(*)\*"] {
            for (bytes, enc) in [
                (text.as_bytes().to_vec(), Encoding::Utf8),
                (
                    [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
                    Encoding::Utf8,
                ),
                (enc16(text, false, true), Encoding::Utf16Le),
                (enc16(text, true, true), Encoding::Utf16Be),
                (enc16(text, false, false), Encoding::Utf16Le),
                (enc16(text, true, false), Encoding::Utf16Be),
            ] {
                assert_eq!(decode(&bytes), Ok((text.to_owned(), enc)));
            }
        }
        assert_eq!(decode(b""), Ok((String::new(), Encoding::Utf8)));
    }

    #[test]
    fn errors_point_at_the_first_bad_character() {
        let e = decode(b"<a>\n  \xFF</a>").unwrap_err();
        assert_eq!((e.problem, e.line, e.column), (Problem::InvalidUtf8, 2, 3));
        assert_eq!(e.to_string(), "not valid utf-8");
        let mut bytes = enc16("ab\ncd", false, true);
        bytes.push(b'x');
        let e = decode(&bytes).unwrap_err();
        assert_eq!((e.problem, e.line, e.column), (Problem::OddLength, 2, 3));
        assert_eq!(
            e.to_string(),
            "utf-16le with an odd number of bytes: the text is cut short"
        );
        let mut bytes = enc16("a\nb", true, true);
        bytes.extend_from_slice(&[0xD8, 0x00, 0x00, 0x41]);
        let e = decode(&bytes).unwrap_err();
        assert_eq!(
            (e.problem, e.encoding, e.line, e.column),
            (Problem::UnpairedSurrogate, Encoding::Utf16Be, 2, 2)
        );
    }

    #[test]
    fn hidden_characters_are_shown() {
        assert!(matches!(visible(r"\A(b c)\*"), Cow::Borrowed(_)));
        assert_eq!(
            visible("\u{feff}\\A\t\r\u{200b}é"),
            "\\u{feff}\\A\\u{9}\\u{d}\\u{200b}é"
        );
    }
}
