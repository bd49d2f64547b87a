// SPDX-License-Identifier: MIT OR Apache-2.0
//! Instance-name matching as PCW defines it for `PCW_MASK_INFORMATION.InstanceMask`
//! (`docs/pcw-semantics.md`): `*` matches zero or more characters, `?` exactly one, and the
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

/// Units scanned at a time when looking for a piece's first literal unit (see [`position_of`]).
const SCAN_BLOCK: usize = 64;
/// The indices of a block, as the unit type (a loop over them vectorises; see
/// [`position_of`]).
const BLOCK_INDICES: core::ops::Range<u16> = 0..64;

/// The name units that can match one literal pattern unit, for a fast scan of the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Candidates {
    /// A unit that upper-cases to ASCII: the name units `u` with `u | fold == folded` or
    /// `u == other`. For a letter, `fold` is 0x20 and `folded` its lower case (so both cases
    /// pass), and `other` is the one non-ASCII unit that upper-cases to it, if any (`ı` → `I`,
    /// `ſ` → `S`; else `other` repeats `folded`). For any other ASCII unit, `fold` is 0 and
    /// both are the unit. Exactly the units that match the literal.
    Ascii { fold: u16, folded: u16, other: u16 },
    /// A unit that upper-cases to non-ASCII: only non-ASCII name units can match it (ASCII
    /// upper-cases to ASCII), and each of those must be folded to know.
    NonAscii,
}

impl Candidates {
    fn of(unit: u16) -> Self {
        let upper = upcase(unit);
        let Ok(byte) = u8::try_from(upper) else {
            return Self::NonAscii;
        };
        if !byte.is_ascii() {
            return Self::NonAscii;
        }
        if !byte.is_ascii_alphabetic() {
            return Self::Ascii {
                fold: 0,
                folded: upper,
                other: upper,
            };
        }
        let folded = upper | 0x20;
        let other = match byte {
            b'I' => 0x0131, // ı (dotless i)
            b'S' => 0x017F, // ſ (long s)
            _ => folded,
        };
        Self::Ascii {
            fold: 0x20,
            folded,
            other,
        }
    }

    /// Whether `unit` is a candidate.
    #[cfg(test)]
    fn admits(self, unit: u16) -> bool {
        match self {
            Self::Ascii {
                fold,
                folded,
                other,
            } => unit | fold == folded || unit == other,
            Self::NonAscii => unit >= 0x80,
        }
    }

    /// Index of the first unit of `units` that may match.
    #[inline]
    fn position(self, units: &[u16]) -> Option<usize> {
        match self {
            Self::Ascii {
                fold,
                folded,
                other,
            } => position_of(units, fold, folded, other),
            Self::NonAscii => units.iter().position(|&u| u >= 0x80),
        }
    }
}

/// Index of the first of `units` with `u | fold == folded` or `u == other`.
///
/// A name of at least one block is taken in fixed blocks; each is tested without a branch for
/// any hit, and the block with the first hit is reduced, again without a branch, to the index
/// of that hit (a minimum over the block). The compiler vectorises both loops: about one
/// instruction per unit on x86-64 with SSE2 (callgrind), against 5–10 for a `position` loop.
/// The part after the last whole block is scanned as the block ending at the end of the name
/// (overlapping units already known to miss). Shorter names take the plain loop. Kept out of
/// line: inlined into [`matches`], the loops were no longer vectorised.
#[inline(never)]
fn position_of(units: &[u16], fold: u16, folded: u16, other: u16) -> Option<usize> {
    if other == folded {
        scan(units, |u| u | fold == folded)
    } else {
        #[expect(
            clippy::needless_bitwise_bool,
            reason = "`|` instead of `||` keeps the test free of branches, so the loops vectorise"
        )]
        scan(units, |u| (u | fold == folded) | (u == other))
    }
}

/// [`position_of`]'s loops for one branch-free test `hit`.
#[expect(
    clippy::inline_always,
    reason = "each of `position_of`'s two tests needs its own copy of the loops, inlined, for \
              them to vectorise"
)]
#[inline(always)]
fn scan(units: &[u16], hit: impl Fn(u16) -> bool + Copy) -> Option<usize> {
    let any = |block: &[u16; SCAN_BLOCK]| block.iter().fold(false, |any, &u| any | hit(u));
    let first = |block: &[u16; SCAN_BLOCK]| {
        let mut at = u16::MAX;
        for (i, &u) in BLOCK_INDICES.zip(block) {
            at = at.min(if hit(u) { i } else { u16::MAX });
        }
        usize::from(at)
    };
    let Some(last) = units.last_chunk::<SCAN_BLOCK>() else {
        return units.iter().position(|&u| hit(u));
    };
    let (blocks, tail) = units.as_chunks::<SCAN_BLOCK>();
    let mut base = 0;
    for block in blocks {
        if any(block) {
            return Some(base + first(block));
        }
        base += SCAN_BLOCK;
    }
    if tail.is_empty() || !any(last) {
        return None;
    }
    Some(units.len() - SCAN_BLOCK + first(last))
}

/// Leftmost position where `piece` (no stars) matches inside `name`.
///
/// Positions are skipped quickly: the name is scanned for the units that can match the
/// piece's first literal (non-`?`) unit, and only there is the whole piece compared. The cost
/// is linear in the name with a small constant unless many positions are candidates.
fn find_piece(piece: &[u16], name: &[u16]) -> Option<usize> {
    let last = name.len().checked_sub(piece.len())?;
    // The first literal unit and its offset in the piece; an all-`?` piece fits at 0.
    let Some((offset, &literal)) = piece.iter().enumerate().find(|(_, u)| **u != QUESTION) else {
        return Some(0);
    };
    let candidates = Candidates::of(literal);
    // Positions `start..=last` of the piece put its literal at `start + offset`.
    let mut start = 0;
    while start <= last {
        let window = name.get(start + offset..=last + offset).unwrap_or_default();
        let found = start + candidates.position(window)?;
        // An ASCII candidate set is exact, so a one-unit piece has matched already.
        let exact = piece.len() == 1 && matches!(candidates, Candidates::Ascii { .. });
        if exact || name.get(found..).is_some_and(|rest| piece_at(piece, rest)) {
            return Some(found);
        }
        start = found + 1;
    }
    None
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

/// Whether `name` surely fails `pattern` at its first unit: the pattern starts with a literal
/// ASCII unit (not `*` or `?`), which the name must match at its start, and the name is empty or
/// starts with an ASCII unit that differs from it ignoring case. (A non-ASCII name unit may
/// upper-case to ASCII — `ı`, `ſ` — so it is left to [`matches()`].) A few instructions that
/// settle most names of a prefix mask before the matcher is called; `false` decides nothing.
#[inline]
pub fn first_unit_rejects(pattern: &[u16], name: &[u16]) -> bool {
    Lead::of(pattern).rejects(name)
}

/// A pattern's first unit as [`first_unit_rejects`] tests names against it, worked out once:
/// a caller testing many names against one pattern keeps this rather than examining the
/// pattern again for each name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lead(u16);

impl Lead {
    /// No literal ASCII first unit (not one: every literal lead is below 0x80).
    const NONE: u16 = u16::MAX;

    /// The lead that rejects nothing.
    pub const fn none() -> Self {
        Self(Self::NONE)
    }

    /// The lead of `pattern`: its first unit folded to upper case if that is a literal ASCII
    /// unit, otherwise [`Lead::none`].
    #[inline]
    pub fn of(pattern: &[u16]) -> Self {
        match pattern.first() {
            Some(&p) if p != STAR && p != QUESTION && p < 0x80 => Self(fold_ascii(p)),
            _ => Self::none(),
        }
    }

    /// [`first_unit_rejects`] of this lead's pattern and `name`.
    #[inline]
    pub fn rejects(self, name: &[u16]) -> bool {
        if self.0 == Self::NONE {
            return false;
        }
        let Some(&n) = name.first() else {
            return true;
        };
        n < 0x80 && fold_ascii(n) != self.0
    }
}

/// An ASCII unit with a lower-case letter made upper case (`u` below 0x80).
#[inline]
const fn fold_ascii(u: u16) -> u16 {
    if u.wrapping_sub(b'a' as u16) < 26 {
        u ^ 0x20
    } else {
        u
    }
}

/// Whether `pattern` is the match-everything mask (`*`, or empty, which PCW treats as "all").
#[inline]
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
    fn the_first_unit_rejects_only_names_that_do_not_match() {
        for (p, n) in [
            ("Large*", "Small Wave"),
            ("large*", "LARGE wave"),
            ("L", ""),
            ("1*", "2"),
            ("S*", "\u{17f}mall"),
            ("I*", "\u{131}"),
            ("?mall*", "Small"),
            ("*x", "ab"),
            ("", "x"),
            ("\u{e9}*", "E"),
        ] {
            let (pw, nw) = (w(p), w(n));
            if first_unit_rejects(&pw, &nw) {
                assert!(!matches(&pw, &nw), "{p:?} {n:?}");
            }
        }
        assert!(first_unit_rejects(&w("Large*"), &w("Small Wave")));
        assert!(first_unit_rejects(&w("L*"), &w("")));
        assert!(!first_unit_rejects(&w("large*"), &w("LARGE wave")));
        assert!(
            !first_unit_rejects(&w("S*"), &w("\u{17f}mall")),
            "ſ upper-cases to S"
        );
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

    #[test]
    fn candidates_are_exactly_the_units_that_can_match() {
        // Exhaustive over the BMP: the fast scan must not skip a unit that matches, and an
        // ASCII candidate set must hold nothing else (one-unit pieces are not re-compared).
        let upper: Vec<u16> = (0..=u16::MAX).map(upcase).collect();
        let mut literals: Vec<u16> = (0..=u16::MAX).filter(|u| upcase(*u) < 0x80).collect();
        literals.extend([0xE9, 0xC9, 0x3C3, 0x3A3, 0x3C2, 0xDF, 0xD800]);
        for literal in literals {
            let candidates = Candidates::of(literal);
            let wanted = upcase(literal);
            for (unit, &folded) in (0..=u16::MAX).zip(&upper) {
                let can_match = folded == wanted;
                match candidates {
                    Candidates::Ascii { .. } => assert_eq!(
                        candidates.admits(unit),
                        can_match,
                        "unit {unit:#06x}, literal {literal:#06x}"
                    ),
                    Candidates::NonAscii => assert!(
                        !can_match || candidates.admits(unit),
                        "{unit:#06x} matches {literal:#06x} but is never scanned for"
                    ),
                }
            }
            assert_eq!(
                matches!(candidates, Candidates::NonAscii),
                wanted >= 0x80,
                "{literal:#06x}"
            );
        }
    }

    #[test]
    fn pieces_are_found_across_scan_blocks() {
        for at in [0, 1, 15, 16, 17, 31, 32, 33, 100] {
            let name: String = core::iter::repeat_n('x', at)
                .chain("ſmall".chars())
                .collect();
            assert!(m("*SMALL", &name), "at {at}");
            assert!(m("*?mall", &name), "at {at}");
            assert!(m("*s*l", &name), "at {at}");
            assert!(!m("*small*q", &name), "at {at}");
            let name: String = core::iter::repeat_n('x', at)
                .chain("Éclair".chars())
                .collect();
            assert!(m("*éCL*", &name), "at {at}");
        }
    }

    proptest! {
        #[test]
        fn agrees_with_the_reference_over_long_names(
            p in proptest::collection::vec(prop_oneof![Just(STAR), Just(QUESTION), Just(0x61u16), Just(0x53), Just(0x73), Just(0x17F), Just(0xE9), Just(0xC9)], 0..7),
            n in proptest::collection::vec(prop_oneof![Just(0x61u16), Just(0x78), Just(0x53), Just(0x73), Just(0x17F), Just(0xE9), Just(0xC9), Just(0x3A3)], 0..70),
        ) {
            prop_assert_eq!(matches(&p, &n), reference(&p, &n));
        }

        #[test]
        fn agrees_with_the_reference(
            p in proptest::collection::vec(prop_oneof![Just(STAR), Just(QUESTION), 0x61u16..0x64, 0x41u16..0x44], 0..8),
            n in proptest::collection::vec(prop_oneof![0x61u16..0x64, 0x41u16..0x44], 0..12),
        ) {
            prop_assert_eq!(matches(&p, &n), reference(&p, &n));
        }

        #[test]
        fn the_first_unit_rejects_no_name_that_matches(
            p in proptest::collection::vec(prop_oneof![Just(STAR), Just(QUESTION), Just(0x49u16), Just(0x53), Just(0x31), Just(0xE9), 0x61u16..0x64, 0x41u16..0x44], 0..6),
            n in proptest::collection::vec(prop_oneof![Just(0x69u16), Just(0x131), Just(0x17F), Just(0x73), Just(0x31), Just(0xC9), 0x61u16..0x64, 0x41u16..0x44], 0..8),
        ) {
            if first_unit_rejects(&p, &n) {
                prop_assert!(!reference(&p, &n));
            }
        }
    }
}
