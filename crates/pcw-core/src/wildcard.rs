//! Instance-name matching as PCW defines it for `PCW_MASK_INFORMATION.InstanceMask`
//! (REFERENCE.md §4.2): `*` matches zero or more characters, `?` exactly one, and the
//! comparison is case-insensitive, over UTF-16 code units.
//!
//! Case-insensitivity folds each code unit to upper case one-to-one, the way
//! `RtlUpcaseUnicodeChar` does: a character whose upper case is not a single BMP character
//! (`ß` → `SS`) is left as it is, and surrogates are compared as they are.
//!
//! Matching never backtracks more than one star: the pattern is split at its stars, the first
//! piece is anchored at the start, the last at the end, and each middle piece is taken at its
//! leftmost occurrence. Leftmost placement is always safe for the pieces in between, so the cost
//! is O(|name| × |pattern|) in the worst case — linear in the name — and an adversarial mask such
//! as `*a*a*a*a*a*a*a*a*b` cannot trigger the exponential blow-up of a naive recursive matcher.

/// Upper-cases one UTF-16 code unit one-to-one (`RtlUpcaseUnicodeChar` semantics).
#[inline]
pub fn upcase(unit: u16) -> u16 {
    if unit < 0x80 {
        return u16::from(u8::try_from(unit).unwrap_or(0).to_ascii_uppercase());
    }
    let Some(c) = char::from_u32(u32::from(unit)) else {
        return unit; // a surrogate half
    };
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u16::try_from(u32::from(u)).unwrap_or(unit),
        _ => unit,
    }
}

/// Whether two UTF-16 strings are equal ignoring case (unit by unit, as [`upcase`]).
pub fn eq_ignore_case(a: &[u16], b: &[u16]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || upcase(*x) == upcase(*y))
}

const STAR: u16 = b'*' as u16;
const QUESTION: u16 = b'?' as u16;

/// Whether one pattern unit matches one name unit.
#[inline]
fn unit_matches(p: u16, n: u16) -> bool {
    p == QUESTION || p == n || upcase(p) == upcase(n)
}

/// Whether `piece` (no stars) matches `name` exactly at its start.
#[inline]
fn piece_at(piece: &[u16], name: &[u16]) -> bool {
    piece.len() <= name.len() && piece.iter().zip(name).all(|(p, n)| unit_matches(*p, *n))
}

/// Leftmost position where `piece` (no stars) matches inside `name`.
fn find_piece(piece: &[u16], name: &[u16]) -> Option<usize> {
    let last = name.len().checked_sub(piece.len())?;
    (0..=last).find(|&i| name.get(i..).is_some_and(|rest| piece_at(piece, rest)))
}

/// Whether `name` matches the wildcard `pattern`.
///
/// A pattern that is exactly `*` matches every name, the empty one included.
pub fn matches(pattern: &[u16], name: &[u16]) -> bool {
    let mut pieces = pattern.split(|u| *u == STAR);
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = name.get(first.len()..).filter(|_| piece_at(first, name)) else {
        return false;
    };
    // `split` yields a single piece when there is no star: the name must end there too.
    let Some(last) = pieces.next_back() else {
        return rest.is_empty();
    };
    // Anchor the last piece at the end before placing the middle ones.
    let Some(tail_start) = rest.len().checked_sub(last.len()) else {
        return false;
    };
    if !rest
        .get(tail_start..)
        .is_some_and(|tail| piece_at(last, tail))
    {
        return false;
    }
    rest = rest.get(..tail_start).unwrap_or_default();
    for piece in pieces {
        match find_piece(piece, rest) {
            Some(at) => rest = rest.get(at + piece.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    true
}

/// Whether `pattern` is the match-everything mask (`*`, or empty, which PCW treats as "all").
pub fn is_match_all(pattern: &[u16]) -> bool {
    pattern.is_empty() || pattern == [STAR]
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use proptest::prelude::*;
    use std::string::String;
    use std::vec::Vec;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn m(p: &str, n: &str) -> bool {
        matches(&w(p), &w(n))
    }

    /// The obvious recursive matcher, exponential in the worst case: the reference.
    fn reference(p: &[u16], n: &[u16]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some((&STAR, rest)) => (0..=n.len()).any(|i| reference(rest, &n[i..])),
            Some((&c, rest)) => n
                .split_first()
                .is_some_and(|(&x, nrest)| unit_matches(c, x) && reference(rest, nrest)),
        }
    }

    #[test]
    fn documented_examples() {
        assert!(m("*", ""));
        assert!(m("*", "Small Wave"));
        assert!(m("*Wave", "Small Wave"));
        assert!(m("?mall*", "Small Wave"));
        assert!(!m("?mall*", "mall Wave"));
        assert!(m("LARGE WAVE", "Large Wave"));
        assert!(m("large*", "LARGE WAVE"));
        assert!(!m("Large", "Large Wave"), "no star: whole-name match");
        assert!(m("S*W*e", "Small Wave"));
        assert!(!m("S*W*x", "Small Wave"));
        assert!(m("**", "x"));
        assert!(m("a*a", "aa"));
        assert!(!m("a*a", "a"), "anchored pieces must not overlap");
        assert!(m("", ""));
        assert!(!m("", "x"));
        assert!(!m("größe", "GRÖSSE"), "ß has no one-unit upper case");
        assert!(m("GRÖßE", "größe"));
        assert!(m("ΣΊΣΥΦΟΣ", "σίσυφος"), "non-Latin scripts fold too");
    }

    #[test]
    fn adversarial_mask_finishes() {
        let name: String = core::iter::repeat_n('a', 1000).collect();
        assert!(!m("*a*a*a*a*a*a*a*a*b", &name));
        let name_b = name.clone() + "b";
        assert!(m("*a*a*a*a*a*a*a*a*b", &name_b));
    }

    #[test]
    fn upcase_is_one_to_one() {
        assert_eq!(upcase(u16::from(b'a')), u16::from(b'A'));
        assert_eq!(upcase(0x00DF), 0x00DF, "ß stays");
        assert_eq!(upcase(0x00E9), 0x00C9, "é → É");
        assert_eq!(upcase(0xD800), 0xD800, "surrogates stay");
        assert!(eq_ignore_case(&w("Small Wave"), &w("SMALL wave")));
        assert!(!eq_ignore_case(&w("Small"), &w("Smal")));
    }

    proptest! {
        #[test]
        fn agrees_with_the_reference(
            p in proptest::collection::vec(prop_oneof![Just(STAR), Just(QUESTION), 0x61u16..0x64, 0x41u16..0x44], 0..8),
            n in proptest::collection::vec(prop_oneof![0x61u16..0x64, 0x41u16..0x44], 0..12),
        ) {
            prop_assert_eq!(matches(&p, &n), reference(&p, &n));
        }
    }
}
