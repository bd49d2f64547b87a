// SPDX-License-Identifier: MIT OR Apache-2.0
//! Rust identifiers from manifest names (prost's `ident.rs` rules, written for this crate):
//! `snake_case` fields and modules, `UpperCamelCase` types, `SCREAMING_SNAKE_CASE` constants,
//! with keywords escaped so generated code always parses.

/// Splits an identifier-ish string into lowercase words at `_`, anything but ASCII letters and
/// digits (so every result is a valid Rust identifier), and case boundaries (`FreeMB` → `free`,
/// `mb`; `HTTPServer2Errors` → `http`, `server2`, `errors`).
fn words(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = chars.get(i.wrapping_sub(1)).copied().unwrap_or('_');
            let next = chars.get(i + 1).copied().unwrap_or('_');
            let boundary = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next.is_ascii_lowercase());
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Makes `s` a usable identifier: a leading digit gets `_`, keywords get `r#` (or a trailing
/// `_` for the four that cannot be raw: `self`, `Self`, `super`, `crate`), a name with no
/// ASCII letters or digits becomes `unnamed`.
fn escape(mut s: String) -> String {
    if s.is_empty() {
        return "unnamed".to_owned();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        if matches!(s.as_str(), "self" | "Self" | "super" | "crate") {
            s.push('_');
        } else {
            s.insert_str(0, "r#");
        }
    }
    s
}

/// `snake_case`.
pub fn snake(s: &str) -> String {
    escape(words(s).join("_"))
}

/// `UpperCamelCase`.
pub fn camel(s: &str) -> String {
    let mut out = String::new();
    for w in words(s) {
        let mut cs = w.chars();
        if let Some(first) = cs.next() {
            out.extend(first.to_uppercase());
            out.push_str(cs.as_str());
        }
    }
    escape(out)
}

/// `SCREAMING_SNAKE_CASE`.
pub fn screaming(s: &str) -> String {
    escape(words(s).join("_").to_uppercase())
}

/// Whether `s` is a C identifier (`[_a-zA-Z][_0-9a-zA-Z]*`), the manifest's `CSymbolType`.
pub fn is_c_symbol(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether `s` can name a module as written (`pcw_gen::Config::module_name`).
pub fn is_rust_ident(s: &str) -> bool {
    is_c_symbol(s) && s != "_" && !KEYWORDS.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(snake("FreeMegabytes"), "free_megabytes");
        assert_eq!(snake("FreeMB"), "free_mb");
        assert_eq!(snake("HTTPServer2Errors"), "http_server2_errors");
        assert_eq!(snake("XskFramesDelivered"), "xsk_frames_delivered");
        assert_eq!(snake("_XdpPcwRxQueue"), "xdp_pcw_rx_queue");
        assert_eq!(snake("type"), "r#type");
        assert_eq!(snake("Self"), "self_");
        assert_eq!(snake("2nd"), "_2nd");
        assert_eq!(camel("MY_LOGICALDISK_DATA"), "MyLogicaldiskData");
        assert_eq!(camel("GEOMETRIC_WAVE_VALUES"), "GeometricWaveValues");
        assert_eq!(screaming("TransferTime"), "TRANSFER_TIME");
        assert_eq!(
            screaming("MY_LOGICALDISK_FREE_MB"),
            "MY_LOGICALDISK_FREE_MB"
        );
        assert_eq!(snake("_"), "unnamed");
        assert_eq!(screaming("Größe² €"), "GR_E");
        assert_eq!(camel("über"), "Ber");
        assert!(is_rust_ident("counters") && !is_rust_ident("type") && !is_rust_ident("a-b"));
        assert!(
            is_c_symbol("_a1") && !is_c_symbol("1a") && !is_c_symbol("") && !is_c_symbol("a-b")
        );
    }
}
