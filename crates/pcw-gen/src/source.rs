// SPDX-License-Identifier: MIT OR Apache-2.0
//! Manifest bytes to text: the encodings real counter manifests come in (UTF-8 with or without
//! BOM, UTF-16LE/BE with BOM, and BOM-less UTF-16 recognised by its `<` pattern).

use crate::diag::{Pos, Sink};

/// Decodes a manifest file into text. Returns `None` (after reporting) when the bytes are not
/// valid text in any supported encoding.
pub(crate) fn decode(bytes: &[u8], sink: &mut Sink) -> Option<String> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return utf8(rest, sink);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, false, sink);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, true, sink);
    }
    // BOM-less UTF-16: the XML spec's autodetection table (`<` followed or preceded by NUL).
    match bytes {
        [b'<', 0, ..] => return utf16(bytes, false, sink),
        [0, b'<', ..] => return utf16(bytes, true, sink),
        _ => {}
    }
    utf8(bytes, sink)
}

fn utf8(bytes: &[u8], sink: &mut Sink) -> Option<String> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Some(s.to_owned()),
        Err(e) => {
            let good = bytes.get(..e.valid_up_to()).unwrap_or_default();
            let pos = end_pos(&String::from_utf8_lossy(good));
            sink.error_hint(
                pos,
                "the manifest is not valid utf-8",
                "save the manifest as utf-8, or as utf-16 with a byte order mark",
            );
            None
        }
    }
}

fn utf16(bytes: &[u8], big_endian: bool, sink: &mut Sink) -> Option<String> {
    if !bytes.len().is_multiple_of(2) {
        sink.error(
            Pos::new(1, 1),
            "the manifest looks like utf-16 but has an odd number of bytes",
        );
        return None;
    }
    let units = bytes.chunks_exact(2).map(|pair| match pair {
        [a, b] if big_endian => u16::from_be_bytes([*a, *b]),
        [a, b] => u16::from_le_bytes([*a, *b]),
        _ => 0,
    });
    let mut text = String::with_capacity(bytes.len() / 2);
    for c in char::decode_utf16(units) {
        if let Ok(c) = c {
            text.push(c);
        } else {
            sink.error(
                end_pos(&text),
                "the manifest contains an unpaired utf-16 surrogate",
            );
            return None;
        }
    }
    Some(text)
}

/// The 1-based position just after `text`.
fn end_pos(text: &str) -> Pos {
    let line = text.matches('\n').count() + 1;
    let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Pos::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
    fn decodes_all_supported_encodings() {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<a é='1'/>";
        let mut sink = Sink::new(Path::new("t.man"));
        for bytes in [
            text.as_bytes().to_vec(),
            [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
            enc16(text, false, true),
            enc16(text, true, true),
            enc16(text, false, false),
            enc16(text, true, false),
        ] {
            assert_eq!(decode(&bytes, &mut sink).as_deref(), Some(text));
        }
        assert!(sink.items.is_empty());
    }

    #[test]
    fn reports_bad_utf8_with_position() {
        let mut sink = Sink::new(Path::new("t.man"));
        assert!(decode(b"<a>\n  \xFF</a>", &mut sink).is_none());
        assert_eq!(sink.items[0].pos, Pos::new(2, 3));
    }
}
