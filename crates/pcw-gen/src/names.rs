// SPDX-License-Identifier: MIT OR Apache-2.0
//! Rust identifiers from manifest names (prost's `ident.rs` rules, written for this crate):
//! `snake_case` fields and modules, `UpperCamelCase` types, `SCREAMING_SNAKE_CASE` constants,
//! with keywords escaped so generated code always parses, and a [`Scope`] per namespace so that
//! no two generated items share a name.

use std::collections::HashSet;

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

/// Rust's strict and reserved keywords, edition 2024's `gen` included. Weak keywords (`union`,
/// `macro_rules`, `raw`, `safe`) are identifiers wherever a generated name goes.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// The keywords that cannot be raw identifiers (`r#self` is refused): they get a trailing `_`.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// The words of `s` joined in one case style, a leading digit prefixed with `_`; `None` when
/// `s` has no ASCII letter or digit.
fn joined(s: &str, sep: &str, word: impl Fn(&str) -> String) -> Option<String> {
    let words = words(s);
    if words.is_empty() {
        return None;
    }
    let mut out = words.iter().map(|w| word(w)).collect::<Vec<_>>().join(sep);
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    Some(out)
}

/// `snake_case` words of `s`, not yet escaped; `None` when it has no ASCII letter or digit.
pub(crate) fn snake_words(s: &str) -> Option<String> {
    joined(s, "_", str::to_owned)
}

/// `UpperCamelCase` words of `s`, not yet escaped.
pub(crate) fn camel_words(s: &str) -> Option<String> {
    joined(s, "", |w| {
        let mut cs = w.chars();
        cs.next().map_or_else(String::new, |first| {
            first.to_ascii_uppercase().to_string() + cs.as_str()
        })
    })
}

/// `SCREAMING_SNAKE_CASE` words of `s`, not yet escaped.
pub(crate) fn screaming_words(s: &str) -> Option<String> {
    joined(s, "_", str::to_ascii_uppercase)
}

/// Makes an identifier-shaped `s` usable: a keyword gets `r#`, or a trailing `_` for those that
/// cannot be raw (`self`, `Self`, `super`, `crate`, `_`).
pub(crate) fn escape(s: &str) -> String {
    if NOT_RAW.contains(&s) {
        format!("{s}_")
    } else if KEYWORDS.contains(&s) {
        format!("r#{s}")
    } else {
        s.to_owned()
    }
}

/// `snake_case`, escaped; `unnamed` when `s` has no ASCII letter or digit.
pub fn snake(s: &str) -> String {
    escape(&snake_words(s).unwrap_or_else(|| "unnamed".to_owned()))
}

/// `SCREAMING_SNAKE_CASE` (never a keyword); `UNNAMED` when `s` has no ASCII letter or digit.
pub fn screaming(s: &str) -> String {
    escape(&screaming_words(s).unwrap_or_else(|| "UNNAMED".to_owned()))
}

/// The identifier an escaped name spells: `r#type` and `type` are the same identifier.
fn key(ident: &str) -> &str {
    ident.strip_prefix("r#").unwrap_or(ident)
}

/// The `syn` identifier of an escaped name (`r#type` becomes a raw identifier).
pub(crate) fn ident(s: &str) -> syn::Ident {
    match s.strip_prefix("r#") {
        Some(raw) => syn::Ident::new_raw(raw, proc_macro2::Span::call_site()),
        None => syn::Ident::new(s, proc_macro2::Span::call_site()),
    }
}

/// The identifiers taken in one namespace of one generated scope (a module's types, a set's
/// counter constants, an instance's methods): what the generator emits itself, then each name
/// it derives from the manifest, in manifest order. Both generators disambiguate the same way:
/// a derived name already taken gets the suffix its call site gives (the counter id for
/// counters, an ordinal for countersets), so no two items of a scope share a name.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    taken: HashSet<String>,
}

impl Scope {
    /// A scope holding the generator's own items.
    pub(crate) fn new<'a>(reserved: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            taken: reserved.into_iter().map(|r| key(r).to_owned()).collect(),
        }
    }

    /// Whether the identifier (escaped or not) is still free.
    pub(crate) fn is_free(&self, ident: &str) -> bool {
        !self.taken.contains(key(ident))
    }

    /// Takes the identifier (escaped or not); `false` when it was taken already.
    pub(crate) fn take(&mut self, ident: &str) -> bool {
        self.taken.insert(key(ident).to_owned())
    }

    /// Claims `first`, else `next(1)`, `next(2)`, …: the first of them that is free, escaped.
    /// The candidates are unescaped words (`type`, `type_7`).
    pub(crate) fn claim(&mut self, first: &str, next: impl Fn(u32) -> String) -> String {
        let mut candidate = first.to_owned();
        let mut n = 0;
        loop {
            let ident = escape(&candidate);
            if self.take(&ident) {
                return ident;
            }
            n += 1;
            candidate = next(n);
        }
    }
}

/// The suffix sequence of a counter's derived name: `{base}_{id}`, then `{base}_{id}_2`, ….
pub(crate) fn with_id(base: &str, id: u16) -> impl Fn(u32) -> String + '_ {
    move |n| {
        if n == 1 {
            format!("{base}_{id}")
        } else {
            format!("{base}_{id}_{n}")
        }
    }
}

/// The suffix sequence of a counterset's derived name: `{base}_2`, `{base}_3`, ….
pub(crate) fn with_ordinal(base: &str) -> impl Fn(u32) -> String + '_ {
    move |n| format!("{base}_{}", n + 1)
}

/// The module of each counterset (the `snake_case` of its symbol, `_2`, `_3` … on a clash), in
/// manifest order: the same in both generators and in `inspect`.
pub(crate) fn set_modules(manifest: &crate::ir::Manifest) -> Vec<String> {
    let mut scope = Scope::default();
    manifest
        .provider
        .countersets
        .iter()
        .map(|set| {
            let base = snake_words(&set.symbol).unwrap_or_else(|| "set".to_owned());
            scope.claim(&base, with_ordinal(&base))
        })
        .collect()
}

/// Whether `s` is a C identifier (`[_a-zA-Z][_0-9a-zA-Z]*`), the manifest's `CSymbolType`.
pub fn is_c_symbol(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether `s` can name a module as written (`pcw_gen::Config::module_name`).
pub fn is_rust_ident(s: &str) -> bool {
    is_c_symbol(s) && !NOT_RAW.contains(&s) && !KEYWORDS.contains(&s)
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
        let camel = |s| camel_words(s).unwrap();
        assert_eq!(camel("MY_LOGICALDISK_DATA"), "MyLogicaldiskData");
        assert_eq!(camel("GEOMETRIC_WAVE_VALUES"), "GeometricWaveValues");
        assert_eq!(screaming("TransferTime"), "TRANSFER_TIME");
        assert_eq!(
            screaming("MY_LOGICALDISK_FREE_MB"),
            "MY_LOGICALDISK_FREE_MB"
        );
        assert_eq!(snake("_"), "unnamed");
        assert_eq!(camel_words("%"), None);
        assert_eq!(screaming("%"), "UNNAMED");
        assert_eq!(escape(&camel_words("self").unwrap()), "Self_");
        assert_eq!(snake("gen"), "r#gen");
        assert_eq!(screaming("Größe² €"), "GR_E");
        assert_eq!(camel("über"), "Ber");
        assert_eq!(snake_words("%"), None);
        assert!(is_rust_ident("counters") && !is_rust_ident("type") && !is_rust_ident("a-b"));
        assert!(
            is_c_symbol("_a1") && !is_c_symbol("1a") && !is_c_symbol("") && !is_c_symbol("a-b")
        );
    }

    #[test]
    fn scopes_disambiguate() {
        let mut scope = Scope::new(["create", "r#type"]);
        assert!(!scope.is_free("type") && scope.is_free("r#fn"));
        assert_eq!(scope.claim("type", with_id("type", 7)), "type_7");
        assert_eq!(scope.claim("type", with_id("type", 7)), "type_7_2");
        assert_eq!(scope.claim("fn", with_ordinal("fn")), "r#fn");
        assert_eq!(scope.claim("fn", with_ordinal("fn")), "fn_2");
        assert_eq!(scope.claim("self", with_ordinal("self")), "self_");
        assert_eq!(scope.claim("self", with_ordinal("self")), "self_2");
    }
}
