// SPDX-License-Identifier: MIT OR Apache-2.0
//! `OpenPerformanceData(pContext)`'s argument (the `OpenPerformanceData` reference page): the
//! service's `Linkage\Export`
//! `REG_MULTI_SZ` — strings separated by a NUL and ended by two NULs, or NULL when the value
//! does not exist — read as `key=value` settings.
//!
//! | key | value | default |
//! |---|---|---|
//! | `source` | `device` (the driver's snapshot IOCTL) or `synthetic` (deterministic data, no driver) | `device` |
//! | `first-counter`, `first-help` | decimal; the lodctr indexes (the registry wins on Windows when present) | none |
//! | `clock` | decimal 100-ns time the synthetic source starts at (fixed, for tests) | the system clock |
//! | `clock-step` | decimal 100-ns units the fixed clock advances per collection | 0 |
//! | `log-file` | a path the non-Windows log sink appends events to | none |
//!
//! Keys are matched case-insensitively after trimming ASCII blanks; entries without `=` (device
//! names, as the `OpenPerformanceData` page describes the value) and unknown keys are ignored, so
//! older DLLs accept newer settings. A
//! known key with a malformed value is an error: Open fails rather than guess.
//!
//! Reading and parsing allocate only fallibly (the copy of `pContext`, its UTF-8 text, the
//! `log-file` path) and have no panic path (no `char` pattern searches, whose searcher links a
//! slice-index panic; numbers parsed by hand), so Open can be proven panic-free: an allocation
//! failure is [`LinkageError::NoMemory`], which Open answers with `ERROR_NOT_ENOUGH_MEMORY`.

use crate::nopanic::{push_reserved, with_capacity};

/// Longest `pContext` read, in UTF-16 units (a guard against a missing double NUL).
pub const MAX_CONTEXT_UNITS: usize = 32 * 1024;

/// Where the data comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceKind {
    /// `DeviceIoControl(IOCTL_PCW_SNAPSHOT)` on the driver's control device.
    #[default]
    Device,
    /// The DLL's own deterministic Geometric-Waves-style data.
    Synthetic,
}

/// The settings `Linkage\Export` gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Linkage {
    /// `source=`.
    pub source: SourceKind,
    /// `first-counter=`.
    pub first_counter: Option<u32>,
    /// `first-help=`.
    pub first_help: Option<u32>,
    /// `clock=`.
    pub clock: Option<i64>,
    /// `clock-step=`.
    pub clock_step: i64,
    /// `log-file=`.
    pub log_file: Option<String>,
}

/// Why `Linkage\Export` gives no settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkageError {
    /// A known key with a malformed value.
    Malformed {
        /// The entry's position among the strings, from 0.
        index: usize,
    },
    /// Memory for a copy of the settings could not be allocated.
    NoMemory,
}

impl core::fmt::Display for LinkageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Malformed { index } => {
                write!(f, "malformed Linkage\\Export entry (string {index})")
            }
            Self::NoMemory => f.write_str("out of memory reading Linkage\\Export"),
        }
    }
}

/// `s` in a new `String`, allocated fallibly.
fn owned(s: &str) -> Result<String, LinkageError> {
    let mut bytes = with_capacity(s.len()).map_err(|_| LinkageError::NoMemory)?;
    for &b in s.as_bytes() {
        if !push_reserved(&mut bytes, b) {
            return Err(LinkageError::NoMemory);
        }
    }
    // SAFETY: the bytes are a copy of the `str` `s`, so UTF-8.
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

/// `s` split at its first `sep` byte (an ASCII character): the parts before and after it.
fn split_at_byte(s: &str, sep: u8) -> Option<(&str, &str)> {
    let at = s.bytes().position(|b| b == sep)?;
    let (before, rest) = s.split_at_checked(at)?;
    Some((before, rest.get(1..)?))
}

/// A decimal number as `str::parse` reads one (an optional sign, `-` only when `signed`, then
/// one or more ASCII digits), without its panic paths.
fn decimal(s: &str, signed: bool) -> Option<i128> {
    let (negative, digits) = match s.as_bytes() {
        [b'+', rest @ ..] => (false, rest),
        [b'-', rest @ ..] if signed => (true, rest),
        all => (false, all),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i128 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value
            .checked_mul(10)?
            .checked_add(i128::from(d.wrapping_sub(b'0')))?;
    }
    if negative {
        value.checked_neg()
    } else {
        Some(value)
    }
}

fn parse_u32(s: &str) -> Option<u32> {
    decimal(s, false).and_then(|v| u32::try_from(v).ok())
}

fn parse_i64(s: &str) -> Option<i64> {
    decimal(s, true).and_then(|v| i64::try_from(v).ok())
}

/// Appends `c` as UTF-8 to `out` (reserved beforehand); `false` when it has no room.
fn push_utf8(out: &mut Vec<u8>, c: char) -> bool {
    let c = u32::from(c);
    // The lead byte, then 6-bit continuation bytes, as RFC 3629 encodes a scalar value.
    let (lead, continuations): (u32, u32) = match c {
        0..0x80 => (c, 0),
        0x80..0x800 => (0xC0 | (c >> 6), 1),
        0x800..0x1_0000 => (0xE0 | (c >> 12), 2),
        _ => (0xF0 | (c >> 18), 3),
    };
    let byte = |v: u32| u8::try_from(v & 0xFF).unwrap_or(0);
    let mut ok = push_reserved(out, byte(lead));
    for shift in (0..continuations).rev() {
        ok &= push_reserved(out, byte(0x80 | ((c >> (6 * shift)) & 0x3F)));
    }
    ok
}

impl Linkage {
    /// Parses the strings of a multi-string (already split).
    ///
    /// # Errors
    /// [`LinkageError`] for a known key with a bad value.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, LinkageError> {
        let mut out = Self::default();
        for (index, entry) in entries.into_iter().enumerate() {
            let Some((key, value)) = split_at_byte(entry, b'=') else {
                continue;
            };
            let (key, value) = (key.trim_ascii(), value.trim_ascii());
            let bad = || LinkageError::Malformed { index };
            let key = [
                "source",
                "first-counter",
                "first-help",
                "clock",
                "clock-step",
                "log-file",
            ]
            .into_iter()
            .find(|k| k.eq_ignore_ascii_case(key))
            .unwrap_or_default();
            match key {
                "source" => {
                    out.source = if value.eq_ignore_ascii_case("device") {
                        SourceKind::Device
                    } else if value.eq_ignore_ascii_case("synthetic") {
                        SourceKind::Synthetic
                    } else {
                        return Err(bad());
                    };
                }
                "first-counter" => out.first_counter = Some(parse_u32(value).ok_or_else(bad)?),
                "first-help" => out.first_help = Some(parse_u32(value).ok_or_else(bad)?),
                "clock" => out.clock = Some(parse_i64(value).ok_or_else(bad)?),
                "clock-step" => out.clock_step = parse_i64(value).ok_or_else(bad)?,
                "log-file" => out.log_file = Some(owned(value)?),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Parses a multi-string given as UTF-16 units (the double NUL, or the end of the slice,
    /// ends it). Unpaired surrogates become U+FFFD.
    ///
    /// # Errors
    /// As [`Linkage::parse`]; [`LinkageError::NoMemory`] when the text's copy cannot be
    /// allocated.
    pub fn parse_multi_sz(units: &[u16]) -> Result<Self, LinkageError> {
        // One UTF-16 unit is at most 3 UTF-8 bytes (a surrogate pair, 2 units, is 4); a NUL
        // after each string.
        let mut text = with_capacity(units.len().saturating_mul(3).saturating_add(1))
            .map_err(|_| LinkageError::NoMemory)?;
        for string in split_multi_sz(units) {
            for c in char::decode_utf16(string.iter().copied()) {
                if !push_utf8(&mut text, c.unwrap_or(char::REPLACEMENT_CHARACTER)) {
                    return Err(LinkageError::NoMemory);
                }
            }
            if !push_reserved(&mut text, 0) {
                return Err(LinkageError::NoMemory);
            }
        }
        // SAFETY: `push_utf8` wrote the UTF-8 encoding of whole `char`s, and NUL bytes.
        let mut rest = unsafe { core::str::from_utf8_unchecked(&text) };
        // The strings, each ended by its NUL.
        Self::parse(core::iter::from_fn(move || {
            let (string, after) = split_at_byte(rest, 0)?;
            rest = after;
            Some(string)
        }))
    }
}

/// The strings of a multi-string: split at NULs, ending at the first empty string.
pub fn split_multi_sz(units: &[u16]) -> impl Iterator<Item = &[u16]> {
    units.split(|u| *u == 0).take_while(|s| !s.is_empty())
}

/// The length of a NULL-able `REG_MULTI_SZ` in units, up to and including the double NUL, at
/// most [`MAX_CONTEXT_UNITS`].
///
/// # Safety
/// As [`read_multi_sz`].
unsafe fn multi_sz_len(p: *const u16) -> usize {
    if p.is_null() {
        return 0;
    }
    let mut previous_nul = false;
    for i in 0..MAX_CONTEXT_UNITS {
        // SAFETY: the units before the double NUL are readable (precondition) and the loop
        // stops at the double NUL.
        let u = unsafe { p.wrapping_add(i).read_unaligned() };
        if u == 0 && (previous_nul || i == 0) {
            return i + 1;
        }
        previous_nul = u == 0;
    }
    MAX_CONTEXT_UNITS
}

/// Copies a NULL-able `REG_MULTI_SZ` pointer into a vector: up to and including the double
/// NUL, at most [`MAX_CONTEXT_UNITS`] units.
///
/// # Safety
/// `p` is null or points to UTF-16 units readable up to its terminating double NUL (or for
/// [`MAX_CONTEXT_UNITS`] units).
///
/// # Errors
/// [`LinkageError::NoMemory`] when the copy cannot be allocated.
pub unsafe fn read_multi_sz(p: *const u16) -> Result<Vec<u16>, LinkageError> {
    // SAFETY: the caller's contract.
    let len = unsafe { multi_sz_len(p) };
    let mut out = with_capacity(len).map_err(|_| LinkageError::NoMemory)?;
    for i in 0..len {
        // SAFETY: the first `len` units were just read, so they are readable.
        let u = unsafe { p.wrapping_add(i).read_unaligned() };
        if !push_reserved(&mut out, u) {
            return Err(LinkageError::NoMemory);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn multi(strings: &[&str]) -> Vec<u16> {
        let mut v: Vec<u16> = Vec::new();
        for s in strings {
            v.extend(s.encode_utf16());
            v.push(0);
        }
        v.push(0);
        v
    }

    #[test]
    fn keys_values_and_defaults() {
        let l = Linkage::parse_multi_sz(&multi(&[
            " Source = Synthetic ",
            "first-counter=2000",
            "FIRST-HELP=2001",
            r"\Device\PcwRs",
            "future-key=1",
        ]))
        .unwrap();
        assert_eq!(l.source, SourceKind::Synthetic);
        assert_eq!((l.first_counter, l.first_help), (Some(2000), Some(2001)));
        assert_eq!(Linkage::parse_multi_sz(&[]).unwrap(), Linkage::default());
        assert_eq!(
            Linkage::parse_multi_sz(&[0, 0]).unwrap(),
            Linkage::default()
        );
    }

    #[test]
    fn bad_values_are_errors() {
        for bad in ["source=pipe", "first-counter=-1", "first-help=", "clock=x"] {
            assert_eq!(
                Linkage::parse_multi_sz(&multi(&["source=device", bad])),
                Err(LinkageError::Malformed { index: 1 }),
                "{bad}"
            );
        }
    }

    /// The hand-written number parsers accept and refuse exactly what `str::parse` does.
    #[test]
    fn numbers_parse_as_std_parses_them() {
        for s in [
            "0",
            "+7",
            "-7",
            "-0",
            "",
            "+",
            "-",
            "4294967295",
            "4294967296",
            "1 2",
            "0x10",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "１",
            "99999999999999999999999999999999999999999",
        ] {
            assert_eq!(parse_u32(s), s.parse::<u32>().ok(), "{s:?}");
            assert_eq!(parse_i64(s), s.parse::<i64>().ok(), "{s:?}");
        }
    }

    /// The hand-written UTF-8 encoder agrees with std's for every length class and for
    /// unpaired surrogates (U+FFFD).
    #[test]
    fn text_is_decoded_as_std_decodes_it() {
        let path = "C:\\logs\\é€𝄞.log";
        let mut units = multi(&["log-file=x"]);
        units.truncate(units.len() - 3);
        units.extend(path.encode_utf16());
        units.push(0xD800);
        units.extend([0, 0]);
        let l = Linkage::parse_multi_sz(&units).unwrap();
        assert_eq!(
            l.log_file.as_deref(),
            Some(format!("{path}\u{FFFD}").as_str())
        );
    }

    #[test]
    fn reading_stops_at_the_double_nul() {
        let v = multi(&["a=1", "b=2"]);
        let mut padded = v.clone();
        padded.extend([0x41; 8]);
        // SAFETY: `padded` is readable and holds a double NUL.
        let read = unsafe { read_multi_sz(padded.as_ptr()) };
        assert_eq!(read, Ok(v));
        // SAFETY: null is allowed.
        assert_eq!(unsafe { read_multi_sz(core::ptr::null()) }, Ok(vec![]));
        let empty = [0u16, 0x41];
        // SAFETY: readable, starts with a NUL (an empty multi-string).
        assert_eq!(unsafe { read_multi_sz(empty.as_ptr()) }, Ok(vec![0]));
    }
}
