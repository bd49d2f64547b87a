// SPDX-License-Identifier: MIT OR Apache-2.0
//! Display text: what a manifest's names, descriptions and other strings may contain, and how
//! each output carries them.
//!
//! Every string of a manifest that reaches an output — the provider's `providerName` and
//! `applicationIdentity`, and each counterset's and counter's `name`, `description` and `uri`,
//! `$(string.…)` references resolved — is checked character by character. A character that some
//! output or consumer would drop, cut a line at, or silently replace is an error at the
//! attribute (`line:column` of its value), naming the character as `U+XXXX` and the reason
//! ([`refused`]). Everything else is carried exactly, each output escaping it its own way.
//!
//! | characters | verdict | why |
//! |---|---|---|
//! | NUL and C0 controls `U+0001`–`U+001F`, TAB, LF and CR included | error | lodctr reads one `.ini` line per string and the registry keeps names as NUL-terminated strings; YAML and most readers break lines at CR as at LF (the manifest's own line breaks inside an attribute are already spaces, as XML normalises them; only `&#9;`, `&#10;` and `&#13;` produce these) |
//! | DEL `U+007F` and C1 controls `U+0080`–`U+009F` | error | invisible controls; NEL `U+0085` ends a line for YAML 1.1 readers |
//! | `U+2028` LINE SEPARATOR, `U+2029` PARAGRAPH SEPARATOR | error | line breaks for YAML 1.1 readers, editors and older JavaScript |
//! | noncharacters `U+FDD0`–`U+FDEF` and `U+xFFFE`, `U+xFFFF` | error | reserved for a program's internal use, not for interchange; XML itself refuses `U+FFFE` and `U+FFFF` |
//! | `U+FFFD` REPLACEMENT CHARACTER | error | it stands for text already lost: the XML reader gives it for a lone surrogate (`&#xD800;`) or a reference past `U+10FFFF` |
//! | lone surrogates | error (as `U+FFFD`) | see above; Rust strings cannot hold them |
//! | leading and trailing blanks | accepted (a name gets `pcw lint`'s fleet warning) | the lodctr `.ini` quotes such a value so that the profile reader's trimming keeps them |
//! | `"`, `'`, `\` | accepted | escaped in every output: `""` and `\\` in the `.rc`, Rust and YAML escapes, a quoted `.ini` value when the text starts or ends with a quote |
//! | `#`, `:`, `%`, `{`, `}`, `$`, `&`, `*`, `!`, `\|`, `>`, `-`, `?`, `[`, `]`, `,` | accepted | YAML strings are always double-quoted; no other output gives them a meaning |
//! | `(`, `)`, `\`, `*`, `?` in names | accepted with a warning | counter paths cannot carry them ([`crate::fleet`]) |
//! | non-ASCII letters, astral characters, combining marks, format characters (ZWJ, bidi controls, `U+FEFF`) | accepted (a name that is not ASCII gets the fleet warning) | the `.rc` declares UTF-8 (`#pragma code_page(65001)`), the `.res` and `.ini` are UTF-16; Rust string literals and doc comments escape what rustc would refuse (bidi controls), YAML escapes `U+FEFF` |
//!
//! [`visible`] is the lossy form for comments and messages: the refused characters, bidi
//! controls and `U+FEFF` written as `\u{…}`, so that a comment line stays one line and shows
//! what is there.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Why a character cannot be in a manifest's display text.
///
/// # Examples
///
/// ```
/// use pcw_gen::text::{Refused, refused};
///
/// assert_eq!(refused('\u{2028}'), Some(Refused::LineSeparator));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// A C0 or C1 control character or DEL (TAB, LF and CR included).
    Control,
    /// `U+2028` or `U+2029`.
    LineSeparator,
    /// A Unicode noncharacter.
    Noncharacter,
    /// `U+FFFD`, what the XML reader leaves for a lone surrogate or an out-of-range reference.
    Replacement,
}

impl Refused {
    /// Why the character is refused: a lowercase clause for a diagnostic.
    ///
    /// # Examples
    ///
    /// ```
    /// use pcw_gen::text::Refused;
    ///
    /// assert!(Refused::Noncharacter.why().starts_with("noncharacters are reserved"));
    /// ```
    pub fn why(self) -> &'static str {
        match self {
            Self::Control => {
                "control characters are dropped or end the line in lodctr's `.ini`, the registry, \
                 counter paths and YAML"
            }
            Self::LineSeparator => {
                "YAML readers, editors and older JavaScript take it for a line break"
            }
            Self::Noncharacter => "noncharacters are reserved for internal use, not interchange",
            Self::Replacement => {
                "it marks text already lost: the XML reader gives it for a lone surrogate such as \
                 `&#xD800;` or a reference past `U+10FFFF`"
            }
        }
    }
}

/// Whether `c` is refused in display text, and why (the policy table in the module docs).
///
/// # Examples
///
/// ```
/// use pcw_gen::text::{Refused, refused};
///
/// assert_eq!(refused('\t'), Some(Refused::Control));
/// assert_eq!(refused('é'), None);
/// ```
pub fn refused(c: char) -> Option<Refused> {
    let u = u32::from(c);
    if c.is_control() {
        Some(Refused::Control)
    } else if matches!(c, '\u{2028}' | '\u{2029}') {
        Some(Refused::LineSeparator)
    } else if (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE {
        Some(Refused::Noncharacter)
    } else if c == char::REPLACEMENT_CHARACTER {
        Some(Refused::Replacement)
    } else {
        None
    }
}

/// `U+000D` and, for the characters people meet, its name: `U+000D (carriage return)`.
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::text::describe('\r'), "U+000D (carriage return)");
/// assert_eq!(pcw_gen::text::describe('é'), "U+00E9");
/// ```
pub fn describe(c: char) -> String {
    let name = match c {
        '\0' => Some("null"),
        '\t' => Some("tab"),
        '\n' => Some("line feed"),
        '\r' => Some("carriage return"),
        '\u{7f}' => Some("delete"),
        '\u{85}' => Some("next line"),
        '\u{2028}' => Some("line separator"),
        '\u{2029}' => Some("paragraph separator"),
        '\u{feff}' => Some("byte order mark"),
        '\u{fffd}' => Some("replacement character"),
        _ => None,
    };
    let mut out = format!("U+{:04X}", u32::from(c));
    if let Some(name) = name {
        let _ = write!(out, " ({name})");
    }
    out
}

/// The first refused character of `text`: its 1-based position in characters, the character
/// and why.
///
/// # Examples
///
/// ```
/// use pcw_gen::text::{Refused, first_refused};
///
/// assert_eq!(first_refused("a\tb"), Some((2, '\t', Refused::Control)));
/// assert_eq!(first_refused("fine"), None);
/// ```
pub fn first_refused(text: &str) -> Option<(usize, char, Refused)> {
    text.chars()
        .enumerate()
        .find_map(|(i, c)| refused(c).map(|r| (i + 1, c, r)))
}

/// Whether [`visible`] writes `c` as an escape: a character the manifest rules refuse, or one
/// a terminal would not show as itself (`pcw_io::text::hidden`: among them the bidirectional
/// formatting controls, which rustc refuses in comments and literals unless escaped, and the
/// zero-width and other invisible characters that would make two names look alike).
///
/// # Examples
///
/// ```
/// assert!(pcw_gen::text::is_invisible('\u{feff}'));
/// assert!(!pcw_gen::text::is_invisible(' '));
/// ```
pub fn is_invisible(c: char) -> bool {
    refused(c).is_some() || pcw_io::text::hidden(c)
}

/// `text` for a comment or a message: every character [`is_invisible`] selects written as
/// `\u{…}`, so the result is one line and shows what it holds. Text without them is returned as
/// it is.
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::text::visible("a\u{2028}b"), "a\\u{2028}b");
/// // Two names that would look alike, told apart.
/// assert_eq!(pcw_gen::text::visible("Queue\u{200b}"), "Queue\\u{200b}");
/// assert_eq!(pcw_gen::text::visible("plain"), "plain");
/// ```
pub fn visible(text: &str) -> Cow<'_, str> {
    pcw_io::text::escape_where(text, is_invisible)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        for c in [
            '\0', '\t', '\n', '\r', '\u{1f}', '\u{7f}', '\u{85}', '\u{9f}',
        ] {
            assert_eq!(refused(c), Some(Refused::Control), "{c:?}");
        }
        assert_eq!(refused('\u{2028}'), Some(Refused::LineSeparator));
        assert_eq!(refused('\u{2029}'), Some(Refused::LineSeparator));
        for c in [
            '\u{fdd0}',
            '\u{fdef}',
            '\u{fffe}',
            '\u{ffff}',
            '\u{1fffe}',
            '\u{10ffff}',
        ] {
            assert_eq!(refused(c), Some(Refused::Noncharacter), "{c:?}");
        }
        assert_eq!(refused('\u{fffd}'), Some(Refused::Replacement));
        for c in [
            ' ', '"', '\\', '#', ':', '%', '\u{a0}', 'é', '\u{301}', '\u{200d}', '\u{202e}',
            '\u{feff}', '\u{fdcf}', '\u{fdf0}', '\u{fffc}', '😀', '\u{e000}',
        ] {
            assert_eq!(refused(c), None, "{c:?}");
        }
    }

    #[test]
    fn descriptions_and_visible_text() {
        assert_eq!(describe('\r'), "U+000D (carriage return)");
        assert_eq!(describe('\u{1fffe}'), "U+1FFFE");
        assert_eq!(
            first_refused("ab\u{85}c\r"),
            Some((3, '\u{85}', Refused::Control))
        );
        assert_eq!(first_refused("plain"), None);
        assert_eq!(visible("a\rb\u{202e}c"), "a\\u{d}b\\u{202e}c");
        assert!(matches!(visible("plain é"), Cow::Borrowed("plain é")));
    }
}
