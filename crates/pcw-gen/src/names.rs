// SPDX-License-Identifier: MIT OR Apache-2.0
//! Rust identifiers from manifest names (prost's `ident.rs` rules, written for this crate):
//! `snake_case` fields and modules, `UpperCamelCase` types, `SCREAMING_SNAKE_CASE` constants,
//! with keywords escaped so generated code always parses, and a [`Scope`] per namespace so that
//! no two generated items share a name.

use std::collections::{HashMap, HashSet};

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
pub(crate) fn snake(s: &str) -> String {
    escape(&snake_words(s).unwrap_or_else(|| "unnamed".to_owned()))
}

/// `SCREAMING_SNAKE_CASE` (never a keyword); `UNNAMED` when `s` has no ASCII letter or digit.
pub(crate) fn screaming(s: &str) -> String {
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

/// How a derived name that is taken already is told apart: the candidates after the name
/// itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Suffix {
    /// `{base}{s}`, `{base}{s}{s}`, … (`Values` for types, `_values` for parameters).
    Repeat(&'static str),
    /// `{base}_2`, `{base}_3`, … (countersets' modules, lodctr symbols).
    Ordinal,
    /// `{base}_{id}`, then `{base}_{id}_2`, … (counters, by their id).
    Id(u16),
}

impl Suffix {
    /// The `n`th candidate after `base` itself (`n` from 1).
    pub(crate) fn candidate(self, base: &str, n: u32) -> String {
        match self {
            Self::Repeat(s) => format!("{base}{}", s.repeat(n as usize)),
            Self::Ordinal => format!("{base}_{}", n + 1),
            Self::Id(id) if n == 1 => format!("{base}_{id}"),
            Self::Id(id) => format!("{base}_{id}_{n}"),
        }
    }
}

/// The names taken in one namespace of one generated scope (a module's types, a set's counter
/// constants, an instance's methods, the lodctr symbols): what the generator emits itself, then
/// each name it derives from the manifest, in manifest order. Every generator disambiguates the
/// same way: a derived name already taken gets the next free candidate of the [`Suffix`] its
/// call site gives, so no two items of a scope share a name.
///
/// Work stays proportional to the names given out: the scope remembers, per base and suffix,
/// how far the candidates are known to be taken (names are never given back), so `k` clashing
/// names cost `k` tries, not `k²`.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    taken: HashSet<String>,
    tried: HashMap<(String, Suffix), u32>,
    /// Plain names (C symbols): not Rust identifiers, never escaped.
    plain: bool,
}

impl Scope {
    /// A scope of Rust identifiers holding the generator's own items.
    pub(crate) fn new<'a>(reserved: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            taken: reserved.into_iter().map(|r| key(r).to_owned()).collect(),
            ..Self::default()
        }
    }

    /// A scope of plain names (lodctr symbols), never escaped.
    pub(crate) fn plain() -> Self {
        Self {
            plain: true,
            ..Self::default()
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

    /// Claims `base`, else the first free candidate of `suffix`, escaped (unless the scope is
    /// plain). The candidates are unescaped words (`type`, `type_7`).
    pub(crate) fn claim(&mut self, base: &str, suffix: Suffix) -> String {
        let memo = (base.to_owned(), suffix);
        let mut n = self.tried.get(&memo).copied().unwrap_or(0);
        loop {
            let candidate = if n == 0 {
                base.to_owned()
            } else {
                suffix.candidate(base, n)
            };
            let name = if self.plain {
                candidate
            } else {
                escape(&candidate)
            };
            if self.take(&name) {
                self.tried.insert(memo, n + 1);
                return name;
            }
            n += 1;
        }
    }
}

/// The module of each counterset (the `snake_case` of its symbol, `_2`, `_3` … on a clash), in
/// manifest order: the same in both generators and in `inspect`.
pub(crate) fn set_modules(manifest: &crate::model::Manifest) -> Vec<String> {
    let mut scope = Scope::default();
    manifest
        .provider
        .countersets
        .iter()
        .map(|set| {
            let base = snake_words(&set.symbol).unwrap_or_else(|| "set".to_owned());
            scope.claim(&base, Suffix::Ordinal)
        })
        .collect()
}

/// Whether `s` is a C identifier (`[_a-zA-Z][_0-9a-zA-Z]*`), the manifest's `CSymbolType`.
pub(crate) fn is_c_symbol(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether `s` can name a module as written (`pcw_gen::Config::module_name`).
pub(crate) fn is_rust_ident(s: &str) -> bool {
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
        assert_eq!(scope.claim("type", Suffix::Id(7)), "type_7");
        assert_eq!(scope.claim("type", Suffix::Id(7)), "type_7_2");
        assert_eq!(scope.claim("fn", Suffix::Ordinal), "r#fn");
        assert_eq!(scope.claim("fn", Suffix::Ordinal), "fn_2");
        assert_eq!(scope.claim("self", Suffix::Ordinal), "self_");
        assert_eq!(scope.claim("self", Suffix::Ordinal), "self_2");
    }

    /// What the generators did before the memo: append until new.
    fn naive(used: &mut HashSet<String>, mut name: String, suffix: &str) -> String {
        while !used.insert(name.clone()) {
            name.push_str(suffix);
        }
        name
    }

    #[test]
    fn remembered_tries_give_what_appending_until_new_gives() {
        // Bases that clash with each other's suffixed forms, and reserved names among them.
        let reserved = ["a_", "b", "a___"];
        let bases = [
            "a", "a", "a_", "b", "a", "a__", "b_", "b", "a", "a_", "c", "a", "b",
        ];
        let mut fast = Scope::plain();
        for r in reserved {
            fast.take(r);
        }
        let mut used: HashSet<String> = reserved.iter().map(|s| (*s).to_owned()).collect();
        for base in bases {
            assert_eq!(
                fast.claim(base, Suffix::Repeat("_")),
                naive(&mut used, base.to_owned(), "_"),
                "{base}"
            );
        }
    }

    #[test]
    fn many_clashes_cost_one_try_each() {
        let mut scope = Scope::plain();
        for k in 0..2000 {
            let name = scope.claim("Values", Suffix::Repeat("Values"));
            assert_eq!(name.len(), "Values".len() * (k + 1));
        }
        // Each claim after the first started where the last one stopped.
        assert_eq!(
            scope.tried[&("Values".to_owned(), Suffix::Repeat("Values"))],
            2000
        );
    }
}
