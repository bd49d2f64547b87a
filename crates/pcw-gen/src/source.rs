// SPDX-License-Identifier: MIT OR Apache-2.0
//! Manifest bytes to text: the encodings real counter manifests come in (UTF-8 with or without
//! BOM, UTF-16LE/BE with BOM, and BOM-less UTF-16), decoded as every pcw command decodes text,
//! with an error diagnostic at the first character that is not valid.

use pcw_io::text::{self, Problem};

use crate::diag::Sink;
use crate::model::Pos;

/// Decodes a manifest file into text ([`pcw_io::text::decode`], the decoding every pcw command
/// uses). Returns `None` (after reporting at the first invalid character) when the bytes are
/// not valid text in any supported encoding.
pub(crate) fn decode(bytes: &[u8], sink: &mut Sink) -> Option<String> {
    match text::decode(bytes) {
        // XML reads a line break as LF whether it was written CR LF, LF or a lone CR (XML 1.0,
        // section 2.11); the positions in diagnostics count lines the same way.
        Ok((text, _)) if text.contains('\r') => {
            Some(text.replace("\r\n", "\n").replace('\r', "\n"))
        }
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

    #[test]
    fn a_utf16_manifest_is_text_and_broken_text_a_diagnostic() {
        let mut sink = Sink::new(Path::new("t.man"));
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend("<a/>".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(&bytes, &mut sink).as_deref(), Some("<a/>"));
        bytes.push(0);
        assert!(decode(&bytes, &mut sink).is_none());
        assert_eq!(sink.items[0].pos, Pos::new(1, 5));
        assert!(
            sink.items[0]
                .message
                .starts_with("the manifest is utf-16le")
        );
    }

    #[test]
    fn reports_bad_utf8_with_position() {
        let mut sink = Sink::new(Path::new("t.man"));
        assert!(decode(b"<a>\n  \xFF</a>", &mut sink).is_none());
        assert_eq!(sink.items[0].pos, Pos::new(2, 3));
    }
}
