// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counted strings: the `Rtl…String…` routines drivers use for names — instance names, device
//! names, registry values — over `UNICODE_STRING` and `STRING`/`ANSI_STRING` (the same layout:
//! `Length` u16, `MaximumLength` u16, `Buffer` at 8) read and written at the WDK's offsets.
//!
//! Every string passed in is checked as the routines assume it: `Length` not above
//! `MaximumLength`, an even byte count for UTF-16, a buffer when the length is not zero. Case
//! folding is pcw-core's (`wildcard::upcase`), the one PCW's instance filter uses.

use pcw_core::wildcard::upcase;

use super::memory::{poke, terminated_len};
use super::state::{NtStatus, STATUS_INVALID_PARAMETER, STATUS_SUCCESS, enter, violation};
use crate::layout::{Fields, unicode_string as us};

/// `STATUS_BUFFER_TOO_SMALL`.
const STATUS_BUFFER_TOO_SMALL: NtStatus = 0xC000_0023_u32.cast_signed();
/// `STATUS_BUFFER_OVERFLOW`.
const STATUS_BUFFER_OVERFLOW: NtStatus = 0x8000_0005_u32.cast_signed();
/// `UNICODE_STRING_MAX_BYTES`: the longest counted string (`MAXUSHORT` rounded down to even).
const MAX_BYTES: usize = 0xFFFE;

/// A counted string the image passed: its fields, checked.
struct Counted {
    fields: Fields,
    length: usize,
    maximum: usize,
    buffer: usize,
}

impl Counted {
    /// The string at `p` for `routine`; `None` (reported) when NULL or malformed. `units` is the
    /// code unit size (2 for `UNICODE_STRING`, 1 for `STRING`).
    fn read(routine: &'static str, p: *mut u8, units: usize) -> Option<Self> {
        if p.is_null() {
            violation(routine, "NULL string");
            return None;
        }
        // SAFETY: the image's counted string (the DDI's contract), at the WDK's layout.
        let fields = unsafe { Fields::new(p, us::SIZE) };
        let length = usize::from(fields.get_u16(us::LENGTH));
        let maximum = usize::from(fields.get_u16(us::MAXIMUM_LENGTH));
        let buffer = fields.get_usize(us::BUFFER);
        let problem = if length > maximum {
            Some(format!("Length {length} exceeds MaximumLength {maximum}"))
        } else if units == 2 && (length % 2 != 0 || maximum % 2 != 0) {
            Some(format!(
                "odd byte count (Length {length}, MaximumLength {maximum}) in a UNICODE_STRING"
            ))
        } else if buffer == 0 && maximum > 0 {
            Some(format!("NULL Buffer with MaximumLength {maximum}"))
        } else {
            None
        };
        if let Some(problem) = problem {
            violation(routine, format!("malformed string at {p:p}: {problem}"));
            return None;
        }
        Some(Self {
            fields,
            length,
            maximum,
            buffer,
        })
    }

    /// Its UTF-16 text.
    fn units(&self) -> Vec<u16> {
        if self.buffer == 0 {
            return Vec::new();
        }
        // SAFETY: `Length` bytes of the buffer are the string (checked above).
        let bytes = unsafe { core::slice::from_raw_parts(self.buffer as *const u8, self.length) };
        bytes
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect()
    }

    /// Replaces its text with `units` (which fit in `MaximumLength`), NUL-terminated when there
    /// is room, as the `Rtl` routines do.
    fn store(&mut self, units: &[u16]) {
        let bytes = units.len() * 2;
        debug_assert!(bytes <= self.maximum);
        let out = self.buffer as *mut u16;
        for (i, u) in units.iter().enumerate() {
            // SAFETY: `bytes` <= `MaximumLength`, which the buffer holds (the DDI's contract).
            unsafe { poke(out, i, *u) };
        }
        if bytes + 2 <= self.maximum {
            // SAFETY: as above, room for the terminator.
            unsafe { poke(out, units.len(), 0) };
        }
        self.length = bytes;
        self.fields
            .put_u16(us::LENGTH, u16::try_from(bytes).unwrap_or(u16::MAX));
    }
}

/// Writes an initialised counted string over a NUL-terminated source (`RtlInit…String`).
///
/// # Safety
/// `dest` is a writable counted string; `source` is NULL or NUL-terminated.
unsafe fn init<T: Copy + PartialEq + Default>(
    routine: &'static str,
    dest: *mut u8,
    source: *const T,
) {
    enter(routine);
    if dest.is_null() {
        violation(routine, "NULL DestinationString");
        return;
    }
    // SAFETY: the image's writable counted string (the DDI's contract).
    let fields = unsafe { Fields::new(dest, us::SIZE) };
    let unit = size_of::<T>();
    let (length, maximum) = if source.is_null() {
        (0, 0)
    } else {
        // SAFETY: a NUL-terminated source (the DDI's contract).
        let n = unsafe { terminated_len(routine, source) } * unit;
        // `MaximumLength` (the length and the terminator) must fit the u16 field.
        let limit = MAX_BYTES - unit;
        if n > limit {
            violation(
                routine,
                format!("a {n}-byte source does not fit a counted string (at most {limit})"),
            );
        }
        let n = n.min(limit);
        (n, n + unit)
    };
    fields.put_u16(us::LENGTH, u16::try_from(length).unwrap_or(0));
    fields.put_u16(us::MAXIMUM_LENGTH, u16::try_from(maximum).unwrap_or(0));
    fields.put_usize(us::BUFFER, source as usize);
}

pub(super) unsafe extern "win64" fn rtl_init_unicode_string(dest: *mut u8, source: *const u16) {
    // SAFETY: the DDI's contract.
    unsafe { init("RtlInitUnicodeString", dest, source) };
}

pub(super) unsafe extern "win64" fn rtl_init_string(dest: *mut u8, source: *const u8) {
    // SAFETY: the DDI's contract.
    unsafe { init("RtlInitString", dest, source) };
}

pub(super) unsafe extern "win64" fn rtl_init_ansi_string(dest: *mut u8, source: *const u8) {
    // SAFETY: the DDI's contract.
    unsafe { init("RtlInitAnsiString", dest, source) };
}

pub(super) unsafe extern "win64" fn rtl_copy_unicode_string(dest: *mut u8, source: *mut u8) {
    const ROUTINE: &str = "RtlCopyUnicodeString";
    enter(ROUTINE);
    let Some(mut d) = Counted::read(ROUTINE, dest, 2) else {
        return;
    };
    if source.is_null() {
        d.store(&[]);
        return;
    }
    let Some(s) = Counted::read(ROUTINE, source, 2) else {
        return;
    };
    let units = s.units();
    let fit = units.len().min(d.maximum / 2);
    d.store(&units[..fit]);
}

/// Appends `extra` to `dest` for the `RtlAppend…` routines: all of it or nothing.
fn append(routine: &'static str, dest: *mut u8, extra: &[u16]) -> NtStatus {
    let Some(mut d) = Counted::read(routine, dest, 2) else {
        return STATUS_INVALID_PARAMETER;
    };
    let mut units = d.units();
    if d.length + extra.len() * 2 > d.maximum {
        return STATUS_BUFFER_TOO_SMALL;
    }
    units.extend_from_slice(extra);
    d.store(&units);
    STATUS_SUCCESS
}

pub(super) unsafe extern "win64" fn rtl_append_unicode_to_string(
    dest: *mut u8,
    source: *const u16,
) -> NtStatus {
    const ROUTINE: &str = "RtlAppendUnicodeToString";
    enter(ROUTINE);
    if source.is_null() {
        return STATUS_SUCCESS;
    }
    // SAFETY: a NUL-terminated source (the DDI's contract).
    let n = unsafe { terminated_len(ROUTINE, source) };
    // SAFETY: `n` readable units.
    let extra = unsafe { core::slice::from_raw_parts(source, n) }.to_vec();
    append(ROUTINE, dest, &extra)
}

pub(super) unsafe extern "win64" fn rtl_append_unicode_string_to_string(
    dest: *mut u8,
    source: *mut u8,
) -> NtStatus {
    const ROUTINE: &str = "RtlAppendUnicodeStringToString";
    enter(ROUTINE);
    let Some(s) = Counted::read(ROUTINE, source, 2) else {
        return STATUS_INVALID_PARAMETER;
    };
    append(ROUTINE, dest, &s.units())
}

/// `RtlCompareUnicodeString`'s order: unit by unit (upcased when asked), then by length.
fn compare(a: &[u16], b: &[u16], case_insensitive: bool) -> i32 {
    let fold = |u: u16| if case_insensitive { upcase(u) } else { u };
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (fold(*x), fold(*y));
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    i32::try_from(a.len()).unwrap_or(i32::MAX) - i32::try_from(b.len()).unwrap_or(i32::MAX)
}

/// Both strings' text for a comparison routine.
fn pair(routine: &'static str, a: *mut u8, b: *mut u8) -> Option<(Vec<u16>, Vec<u16>)> {
    let a = Counted::read(routine, a, 2)?;
    let b = Counted::read(routine, b, 2)?;
    Some((a.units(), b.units()))
}

pub(super) unsafe extern "win64" fn rtl_compare_unicode_string(
    a: *mut u8,
    b: *mut u8,
    case_insensitive: u8,
) -> i32 {
    enter("RtlCompareUnicodeString");
    pair("RtlCompareUnicodeString", a, b).map_or(0, |(a, b)| compare(&a, &b, case_insensitive != 0))
}

pub(super) unsafe extern "win64" fn rtl_equal_unicode_string(
    a: *mut u8,
    b: *mut u8,
    case_insensitive: u8,
) -> u8 {
    enter("RtlEqualUnicodeString");
    pair("RtlEqualUnicodeString", a, b).map_or(0, |(a, b)| {
        u8::from(a.len() == b.len() && compare(&a, &b, case_insensitive != 0) == 0)
    })
}

pub(super) unsafe extern "win64" fn rtl_prefix_unicode_string(
    prefix: *mut u8,
    string: *mut u8,
    case_insensitive: u8,
) -> u8 {
    enter("RtlPrefixUnicodeString");
    pair("RtlPrefixUnicodeString", prefix, string).map_or(0, |(p, s)| {
        u8::from(p.len() <= s.len() && compare(&p, &s[..p.len()], case_insensitive != 0) == 0)
    })
}

pub(super) unsafe extern "win64" fn rtl_upcase_unicode_char(unit: u16) -> u16 {
    enter("RtlUpcaseUnicodeChar");
    upcase(unit)
}

/// The value of a digit in `base`.
fn digit(unit: u16, base: u32) -> Option<u32> {
    char::from_u32(u32::from(unit))?.to_digit(base)
}

pub(super) unsafe extern "win64" fn rtl_unicode_string_to_integer(
    string: *mut u8,
    base: u32,
    value: *mut u32,
) -> NtStatus {
    const ROUTINE: &str = "RtlUnicodeStringToInteger";
    enter(ROUTINE);
    if !matches!(base, 0 | 2 | 8 | 10 | 16) {
        return STATUS_INVALID_PARAMETER;
    }
    if value.is_null() {
        violation(ROUTINE, "NULL Value");
        return STATUS_INVALID_PARAMETER;
    }
    let Some(s) = Counted::read(ROUTINE, string, 2) else {
        return STATUS_INVALID_PARAMETER;
    };
    let units = s.units();
    let mut rest = &units[..];
    while let [u, tail @ ..] = rest
        && *u <= u16::from(b' ')
    {
        rest = tail;
    }
    let mut negative = false;
    if let [u, tail @ ..] = rest
        && (*u == u16::from(b'-') || *u == u16::from(b'+'))
    {
        negative = *u == u16::from(b'-');
        rest = tail;
    }
    let mut base = base;
    if base == 0 {
        base = 10;
        if let [z, p, tail @ ..] = rest
            && *z == u16::from(b'0')
        {
            let prefixed = match u8::try_from(*p).unwrap_or(0) {
                b'x' | b'X' => Some(16),
                b'o' | b'O' => Some(8),
                b'b' | b'B' => Some(2),
                _ => None,
            };
            if let Some(b) = prefixed {
                base = b;
                rest = tail;
            }
        }
    }
    // Like Windows: digits up to the first that is not one; no digit at all gives 0.
    let mut n: u32 = 0;
    for u in rest {
        let Some(d) = digit(*u, base) else {
            break;
        };
        n = n.wrapping_mul(base).wrapping_add(d);
    }
    let n = if negative { n.wrapping_neg() } else { n };
    // SAFETY: checked non-NULL; the image's writable ULONG.
    unsafe { value.write_unaligned(n) };
    STATUS_SUCCESS
}

pub(super) unsafe extern "win64" fn rtl_integer_to_unicode_string(
    value: u32,
    base: u32,
    string: *mut u8,
) -> NtStatus {
    const ROUTINE: &str = "RtlIntegerToUnicodeString";
    enter(ROUTINE);
    let base = if base == 0 { 10 } else { base };
    let text = match base {
        2 => format!("{value:b}"),
        8 => format!("{value:o}"),
        10 => value.to_string(),
        16 => format!("{value:X}"),
        _ => return STATUS_INVALID_PARAMETER,
    };
    let Some(mut s) = Counted::read(ROUTINE, string, 2) else {
        return STATUS_INVALID_PARAMETER;
    };
    let units: Vec<u16> = text.encode_utf16().collect();
    if units.len() * 2 > s.maximum {
        return STATUS_BUFFER_OVERFLOW;
    }
    s.store(&units);
    STATUS_SUCCESS
}
