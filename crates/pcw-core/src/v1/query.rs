// SPDX-License-Identifier: MIT OR Apache-2.0
//! The query string a V1 perf DLL receives in `CollectPerformanceData(lpValueName, …)`
//! (the `CollectPerformanceData` reference page; the vocabulary in `docs/v1-queries.md`),
//! classified without allocating.
//!
//! Rules, and where they come from:
//! * keywords are matched **case-insensitively** (the current consumer documentation says value
//!   names are not case-sensitive) and **whole**, after trimming blanks: `Global`,
//!   `OLD_Global`, `Costly`, `MetadataGlobal`, `MetadataCostly` and their `OLD_` forms. The
//!   classic sample's prefix test (`"G"` counts as Global) and the current sample's substring
//!   test (`"xglobalx"` counts as Global) are both looser than the vocabulary; we follow the
//!   vocabulary.
//! * `Foreign…` and the literal `Foreigh…` (sic: the spelling DLLs receive) are foreign-computer
//!   requests: a local provider answers none of them. `Counter…` and `Help…` are name-table
//!   requests Perflib answers itself (case-insensitive prefix, as Windows matches them).
//! * anything else is an item list: decimal object indexes separated by spaces or tabs. A token
//!   matches an index only if it is entirely digits and equal in value (`"0238"` is 238; `"23"`
//!   does not match 238 and `"238"` does not match 23 — the current sample's `wcsstr` test gets
//!   this wrong). A token that is not a number, or overflows 32 bits, matches nothing.
//! * a NULL query: the `CollectPerformanceData` page's note says it never happens in practice and
//!   the provider should fail early, returning no data; we do. An empty (or all-blank) query is the
//!   default value name, which the classic sample and Wine's `RegQueryValueEx` both treat as
//!   `Global`.
//! * the string ends at the first NUL, or at the end of the slice.

/// What a query asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query<'a> {
    /// No query at all (a NULL pointer).
    Null,
    /// `Global`, `OLD_Global`, or the empty query: every object that is not costly.
    Global,
    /// `Costly`: the objects that are expensive to collect.
    Costly,
    /// `MetadataGlobal`/`MetadataCostly` (and `OLD_` forms): definitions only.
    Metadata {
        /// `true` for the costly variant.
        costly: bool,
    },
    /// `Foreign…` / `Foreigh…`: data of another computer.
    Foreign,
    /// `Counter…` / `Help…`: a name-table request, answered by Perflib itself.
    NameTable,
    /// A list of object indexes.
    Items(ItemList<'a>),
}

/// A list of decimal object indexes, kept as the caller's UTF-16 and scanned on demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemList<'a> {
    text: &'a [u16],
}

const SPACE: u16 = b' ' as u16;
const TAB: u16 = b'\t' as u16;

fn is_blank(u: u16) -> bool {
    u == SPACE || u == TAB
}

impl<'a> ItemList<'a> {
    /// The list as given (ending before the NUL).
    pub const fn as_utf16(&self) -> &'a [u16] {
        self.text
    }

    /// The numbers in the list, in order; tokens that are not whole decimal numbers fitting in
    /// 32 bits are skipped.
    pub fn indexes(&self) -> impl Iterator<Item = u32> + 'a {
        self.text.split(|u| is_blank(*u)).filter_map(parse_index)
    }

    /// Whether `index` is one of the list's numbers (whole-token, exact value).
    pub fn contains(&self, index: u32) -> bool {
        self.indexes().any(|i| i == index)
    }
}

/// Parses a whole token as a decimal `u32`.
fn parse_index(token: &[u16]) -> Option<u32> {
    if token.is_empty() {
        return None;
    }
    let mut value: u32 = 0;
    for &u in token {
        let digit = u.checked_sub(u16::from(b'0')).filter(|d| *d <= 9)?;
        value = value.checked_mul(10)?.checked_add(u32::from(digit))?;
    }
    Some(value)
}

/// Case-insensitive ASCII comparison of UTF-16 `text` with `keyword`.
fn eq_ignore_case(text: &[u16], keyword: &str) -> bool {
    text.len() == keyword.len()
        && text
            .iter()
            .zip(keyword.bytes())
            .all(|(&u, k)| u8::try_from(u).is_ok_and(|b| b.eq_ignore_ascii_case(&k)))
}

/// Case-insensitive ASCII prefix test.
fn starts_with_ignore_case(text: &[u16], prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| eq_ignore_case(head, prefix))
}

/// The query up to its first NUL, with leading and trailing blanks removed.
fn trimmed(query: &[u16]) -> &[u16] {
    let end = query.iter().position(|u| *u == 0).unwrap_or(query.len());
    let text = query.get(..end).unwrap_or_default();
    let start = text
        .iter()
        .position(|u| !is_blank(*u))
        .unwrap_or(text.len());
    let stop = text
        .iter()
        .rposition(|u| !is_blank(*u))
        .map_or(start, |p| p + 1);
    text.get(start..stop).unwrap_or_default()
}

/// Whether `query` is exactly `Global` in any case, NUL-terminated or at its end: what Perflib
/// passes on almost every collection, recognised with two word compares (a letter's case is
/// its bit 5).
#[inline]
fn is_global(query: &[u16]) -> bool {
    const LOWER: [u16; 6] = [0x67, 0x6C, 0x6F, 0x62, 0x61, 0x6C];
    query
        .first_chunk::<6>()
        .is_some_and(|head| head.iter().zip(LOWER).all(|(u, l)| u | 0x20 == l))
        && query.get(6).is_none_or(|u| *u == 0)
}

/// Classifies a query string (`None` for a NULL pointer).
pub fn classify(query: Option<&[u16]>) -> Query<'_> {
    let Some(query) = query else {
        return Query::Null;
    };
    if is_global(query) {
        return Query::Global;
    }
    let text = trimmed(query);
    if text.is_empty() {
        return Query::Global;
    }
    let keyword = |k: &str| eq_ignore_case(text, k);
    if keyword("Global") || keyword("OLD_Global") {
        Query::Global
    } else if keyword("Costly") || keyword("OLD_Costly") {
        Query::Costly
    } else if keyword("MetadataGlobal") || keyword("OLD_MetadataGlobal") {
        Query::Metadata { costly: false }
    } else if keyword("MetadataCostly") || keyword("OLD_MetadataCostly") {
        Query::Metadata { costly: true }
    } else if starts_with_ignore_case(text, "Foreign") || starts_with_ignore_case(text, "Foreigh") {
        Query::Foreign
    } else if starts_with_ignore_case(text, "Counter") || starts_with_ignore_case(text, "Help") {
        Query::NameTable
    } else {
        Query::Items(ItemList { text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every query string the tests classified, alive for the test binary's life (a `Query`
    /// borrows its units); held by a static so that nothing is leaked.
    static KEPT: std::sync::Mutex<Vec<&'static [u16]>> = std::sync::Mutex::new(Vec::new());

    fn q(s: &str) -> Query<'static> {
        let units: &'static [u16] =
            Box::leak(s.encode_utf16().collect::<Vec<_>>().into_boxed_slice());
        KEPT.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(units);
        classify(Some(units))
    }

    extern crate std;
    use std::boxed::Box;
    use std::vec::Vec;

    #[test]
    fn global_is_recognised_first_in_any_case_and_only_whole() {
        for g in [
            "Global",
            "GLOBAL",
            "gLoBaL",
            "Global\0junk",
            " Global ",
            "\tglobal",
        ] {
            assert_eq!(q(g), Query::Global, "{g:?}");
        }
        for other in ["Globalx", "Globa", "Glob@l", "G1obal", "Global2"] {
            assert_ne!(q(other), Query::Global, "{other:?}");
        }
        // Only the two cases of each letter fold onto it (a unit's high byte is compared too).
        assert!(!is_global(&[0x147, 0x6C, 0x6F, 0x62, 0x61, 0x6C]));
        assert!(!is_global(&[0x67, 0x6C, 0x6F, 0x62, 0x41 ^ 0x60, 0x6C]));
    }

    #[test]
    fn keywords_are_case_insensitive_and_whole() {
        assert_eq!(q("Global"), Query::Global);
        assert_eq!(q("gLoBaL"), Query::Global);
        assert_eq!(q("OLD_Global"), Query::Global);
        assert_eq!(q("  Global\t"), Query::Global);
        assert_eq!(q("Costly"), Query::Costly);
        assert_eq!(q("COSTLY"), Query::Costly);
        assert_eq!(q("MetadataGlobal"), Query::Metadata { costly: false });
        assert_eq!(q("old_metadataglobal"), Query::Metadata { costly: false });
        assert_eq!(q("MetadataCostly"), Query::Metadata { costly: true });
        assert_eq!(q("OLD_MetadataCostly"), Query::Metadata { costly: true });
        assert!(
            matches!(q("G"), Query::Items(_)),
            "no prefix match for keywords"
        );
        assert!(matches!(q("Globalx"), Query::Items(_)));
        assert!(
            matches!(q("xglobal"), Query::Items(_)),
            "no substring match"
        );
    }

    #[test]
    fn foreign_and_name_tables() {
        assert_eq!(q("Foreign"), Query::Foreign);
        assert_eq!(q("Foreign \\\\host 238"), Query::Foreign);
        assert_eq!(
            q("Foreigh"),
            Query::Foreign,
            "the literal misspelling Perflib sends"
        );
        assert_eq!(q("foreigh"), Query::Foreign);
        assert_eq!(q("Counter 009"), Query::NameTable);
        assert_eq!(q("cOuNtErwine"), Query::NameTable);
        assert_eq!(q("Help 9"), Query::NameTable);
    }

    #[test]
    fn null_and_empty() {
        assert_eq!(classify(None), Query::Null);
        assert_eq!(classify(Some(&[])), Query::Global);
        assert_eq!(
            classify(Some(&[0, u16::from(b'2')])),
            Query::Global,
            "ends at the NUL"
        );
        assert_eq!(q(" \t "), Query::Global);
    }

    #[test]
    fn item_lists_match_whole_tokens() {
        let Query::Items(list) = q("238 2\t0740 23x 99999999999") else {
            panic!("not an item list")
        };
        assert!(list.contains(238));
        assert!(list.contains(2));
        assert!(list.contains(740), "leading zeros are fine");
        assert!(!list.contains(23), "23 must not match 238 or 23x");
        assert!(!list.contains(0));
        assert_eq!(list.indexes().collect::<Vec<_>>(), [238, 2, 740]);
        let Query::Items(list) = q("23") else {
            panic!()
        };
        assert!(!list.contains(238), "238 must not match 23");
        assert!(!list.contains(2));
        let Query::Items(list) = q("4294967295 4294967296") else {
            panic!()
        };
        assert_eq!(list.indexes().collect::<Vec<_>>(), [u32::MAX]);
    }

    #[test]
    fn non_ascii_never_matches_a_keyword() {
        // U+0147 lowercases to nothing ASCII; a byte-truncating compare would see 'G' (0x47).
        let units: Vec<u16> = "\u{0147}lobal".encode_utf16().collect();
        assert!(matches!(classify(Some(&units)), Query::Items(_)));
    }
}
