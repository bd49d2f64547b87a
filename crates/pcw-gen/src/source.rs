// SPDX-License-Identifier: MIT OR Apache-2.0
//! Manifest bytes to text: the encodings real counter manifests come in (UTF-8 with or without
//! BOM, UTF-16LE/BE with BOM, and BOM-less UTF-16), decoded as every pcw command decodes text,
//! with an error diagnostic at the first character that is not valid.

use pcw_io::text::{self, Problem};

use crate::diag::{Pos, Sink};

/// Decodes a manifest file into text ([`pcw_io::text::decode`], the decoding every pcw command
/// uses). Returns `None` (after reporting at the first invalid character) when the bytes are
/// not valid text in any supported encoding.
pub(crate) fn decode(bytes: &[u8], sink: &mut Sink) -> Option<String> {
    match text::decode(bytes) {
        Ok((text, _)) => Some(text),
        Err(e) => {
            let pos = Pos::new(e.line, e.column);
            let message = format!("the manifest is {}", e.message());
            match e.problem {
                Problem::InvalidUtf8 => sink.error_hint(
                    pos,
                    message,
                    "save the manifest as utf-8, or as utf-16 with a byte order mark",
                ),
                Problem::OddLength | Problem::UnpairedSurrogate => sink.error(pos, message),
            }
            None
        }
    }
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
