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
//! Keys are matched case-insensitively after trimming blanks; entries without `=` (device
//! names, as the `OpenPerformanceData` page describes the value) and unknown keys are ignored, so
//! older DLLs accept newer settings. A
//! known key with a malformed value is an error: Open fails rather than guess.

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

/// A malformed setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkageError {
    /// The entry as written.
    pub entry: String,
}

impl core::fmt::Display for LinkageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "malformed Linkage\\Export entry `{}`", self.entry)
    }
}

impl Linkage {
    /// Parses the strings of a multi-string (already split).
    ///
    /// # Errors
    /// [`LinkageError`] for a known key with a bad value.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, LinkageError> {
        let mut out = Self::default();
        for entry in entries {
            let Some((key, value)) = entry.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            let bad = || LinkageError {
                entry: entry.to_owned(),
            };
            match key.as_str() {
                "source" => {
                    out.source = if value.eq_ignore_ascii_case("device") {
                        SourceKind::Device
                    } else if value.eq_ignore_ascii_case("synthetic") {
                        SourceKind::Synthetic
                    } else {
                        return Err(bad());
                    };
                }
                "first-counter" => out.first_counter = Some(value.parse().map_err(|_| bad())?),
                "first-help" => out.first_help = Some(value.parse().map_err(|_| bad())?),
                "clock" => out.clock = Some(value.parse().map_err(|_| bad())?),
                "clock-step" => out.clock_step = value.parse().map_err(|_| bad())?,
                "log-file" => out.log_file = Some(value.to_owned()),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Parses a multi-string given as UTF-16 units (the double NUL, or the end of the slice,
    /// ends it). Unpaired surrogates become U+FFFD.
    ///
    /// # Errors
    /// As [`Linkage::parse`].
    pub fn parse_multi_sz(units: &[u16]) -> Result<Self, LinkageError> {
        let strings: Vec<String> = split_multi_sz(units)
            .map(String::from_utf16_lossy)
            .collect();
        Self::parse(strings.iter().map(String::as_str))
    }
}

/// The strings of a multi-string: split at NULs, ending at the first empty string.
pub fn split_multi_sz(units: &[u16]) -> impl Iterator<Item = &[u16]> {
    units.split(|u| *u == 0).take_while(|s| !s.is_empty())
}

/// Copies a NULL-able `REG_MULTI_SZ` pointer into a vector: up to and including the double
/// NUL, at most [`MAX_CONTEXT_UNITS`] units.
///
/// # Safety
/// `p` is null or points to UTF-16 units readable up to its terminating double NUL (or for
/// [`MAX_CONTEXT_UNITS`] units).
pub unsafe fn read_multi_sz(p: *const u16) -> Vec<u16> {
    let mut out = Vec::new();
    if p.is_null() {
        return out;
    }
    let mut previous_nul = false;
    for i in 0..MAX_CONTEXT_UNITS {
        // SAFETY: the units before the double NUL are readable (precondition) and the loop
        // stops at the double NUL.
        let u = unsafe { p.wrapping_add(i).read_unaligned() };
        out.push(u);
        if u == 0 && (previous_nul || i == 0) {
            break;
        }
        previous_nul = u == 0;
    }
    out
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
            assert!(Linkage::parse_multi_sz(&multi(&[bad])).is_err(), "{bad}");
        }
    }

    #[test]
    fn reading_stops_at_the_double_nul() {
        let v = multi(&["a=1", "b=2"]);
        let mut padded = v.clone();
        padded.extend([0x41; 8]);
        // SAFETY: `padded` is readable and holds a double NUL.
        let read = unsafe { read_multi_sz(padded.as_ptr()) };
        assert_eq!(read, v);
        // SAFETY: null is allowed.
        assert!(unsafe { read_multi_sz(core::ptr::null()) }.is_empty());
        let empty = [0u16, 0x41];
        // SAFETY: readable, starts with a NUL (an empty multi-string).
        assert_eq!(unsafe { read_multi_sz(empty.as_ptr()) }, vec![0]);
    }
}
