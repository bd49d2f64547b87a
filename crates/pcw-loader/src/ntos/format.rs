// SPDX-License-Identifier: MIT OR Apache-2.0
//! printf as the kernel's runtime does it — for `DbgPrint` and its siblings and for the
//! `_vsnwprintf`/`_vsnprintf` family that ntstrsafe's `RtlStringCch…Printf` and
//! `RtlUnicodeStringPrintf` call — over the image's own format string and argument slots.
//!
//! The Windows conventions: `l` is 32 bits (LLP64), `I64`/`ll` 64, `I`/`z`/`t`/`j` pointer-sized,
//! `h`/`hh` 16/8; `%p` is 16 upper-case hex digits; `%s`/`%c` take the function's own character
//! width and `%S`/`%C` the other one, `hs`/`hc` narrow and `ls`/`lc`/`ws`/`wc` wide whatever the
//! function; `%Z` prints an `ANSI_STRING` and `%wZ` a `UNICODE_STRING`; a NULL string prints
//! `(null)`. `%n` is refused (the kernel's printf refuses it too); an unknown conversion is
//! reported and copied as it is.
//!
//! On x64 a variadic call passes every argument in an 8-byte slot (the first four in registers,
//! which the callee spills to the caller's home area) and a `va_list` is a pointer to the next
//! slot; [`variadic!`] makes an `extern "win64"` entry that spills the registers and hands the
//! slot array to a Rust function, so no unstable C-variadic support is needed.

use super::memory::{STRING_LIMIT, peek, poke, terminated_len};

/// The printf conventions of [`format`], for the generated table.
pub const CONVENTIONS: &str = "`l` is 32 bits (LLP64), `ll` and `I64` 64, `I`, `z`, `t` and `j` \
pointer-sized, `h` 16 and `hh` 8; `%p` prints 16 upper-case hex digits; `%s` and `%c` take the \
function's own character width and `%S` and `%C` the other one, `hs`/`hc` are narrow and \
`ls`/`lc`/`ws`/`wc` wide in any function; `%Z` prints an `ANSI_STRING` and `%wZ` a \
`UNICODE_STRING`; a NULL string prints `(null)`; flags `-+ #0`, `*` widths and precisions, \
`%e`/`%f`/`%g`/`%a` from the argument's bits; `%n` is refused (nothing written) and an unknown \
conversion is flagged and copied as written.";
use super::state::{enter, violation};
use crate::layout::{Fields, unicode_string as us};

/// An `extern "win64"` function `$name` taking C variadic arguments: it stores the four
/// register arguments in the caller's home area, so that with the stack arguments above them
/// every argument is in one array of 8-byte slots, and calls `$body(slots)` (an
/// `unsafe extern "win64" fn(*const u64) -> i32`), returning its result.
macro_rules! variadic {
    ($(#[$meta:meta])* $name:ident => $body:path) => {
        $(#[$meta])*
        #[unsafe(naked)]
        pub(super) unsafe extern "win64" fn $name() {
            core::arch::naked_asm!(
                "mov [rsp + 8], rcx",
                "mov [rsp + 16], rdx",
                "mov [rsp + 24], r8",
                "mov [rsp + 32], r9",
                "lea rcx, [rsp + 8]",
                // 32 bytes of home area for the callee and 8 to keep rsp 16-byte aligned.
                "sub rsp, 40",
                "call {body}",
                "add rsp, 40",
                "ret",
                body = sym $body,
            )
        }
    };
}
pub(super) use variadic;

/// The character width of a function's format string and output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chars {
    /// `char` (`DbgPrint`, `_vsnprintf`).
    Narrow,
    /// `wchar_t` (`_vsnwprintf`).
    Wide,
}

/// What formatting produced.
#[derive(Debug, Default)]
pub(crate) struct Formatted {
    /// The text.
    pub(crate) text: String,
    /// A Unicode conversion (`%C`, `%S`, `%lc`, `%ls`, `%wc`, `%ws`, `%wZ` in a narrow format)
    /// was used: the kernel allows those only at `PASSIVE_LEVEL`.
    pub(crate) unicode: bool,
}

/// The argument slots of a variadic call or a `va_list`.
struct Args {
    slots: *const u64,
    next: usize,
}

impl Args {
    fn next(&mut self) -> u64 {
        // SAFETY: the caller passed as many arguments as its format string asks for (printf's
        // contract); each is one 8-byte slot.
        let v = unsafe { peek(self.slots, self.next) };
        self.next += 1;
        v
    }
}

/// Reads up to `limit` units of a NUL-terminated string at `p` as text.
///
/// # Safety
/// `p` is readable up to its terminator or `limit` units.
pub(crate) unsafe fn c_string(
    routine: &'static str,
    p: u64,
    wide: bool,
    limit: Option<usize>,
) -> String {
    if p == 0 {
        return "(null)".into();
    }
    if wide {
        let p = p as *const u16;
        let n = match limit {
            // SAFETY: per this function's contract.
            Some(max) => (0..max.min(STRING_LIMIT))
                .take_while(|&i| unsafe { peek(p, i) } != 0)
                .count(),
            // SAFETY: per this function's contract.
            None => unsafe { terminated_len(routine, p) },
        };
        // SAFETY: `n` readable units.
        let units: Vec<u16> = (0..n).map(|i| unsafe { peek(p, i) }).collect();
        String::from_utf16_lossy(&units)
    } else {
        let p = p as *const u8;
        let n = match limit {
            // SAFETY: per this function's contract.
            Some(max) => (0..max.min(STRING_LIMIT))
                .take_while(|&i| unsafe { peek(p, i) } != 0)
                .count(),
            // SAFETY: per this function's contract.
            None => unsafe { terminated_len(routine, p) },
        };
        // SAFETY: `n` readable bytes.
        unsafe { core::slice::from_raw_parts(p, n) }
            .iter()
            .map(|&b| char::from(b))
            .collect()
    }
}

/// A counted string (`%Z`, `%wZ`) at `p` as text.
///
/// # Safety
/// `p` is 0 or a readable counted string whose buffer holds `Length` bytes.
unsafe fn counted(p: u64, wide: bool, limit: Option<usize>) -> String {
    if p == 0 {
        return "(null)".into();
    }
    // SAFETY: per this function's contract.
    let f = unsafe { Fields::new(p as *mut u8, us::SIZE) };
    let length = usize::from(f.get_u16(us::LENGTH));
    let buffer = f.get_usize(us::BUFFER);
    if buffer == 0 {
        return "(null)".into();
    }
    // SAFETY: the buffer holds `Length` bytes.
    let bytes = unsafe { core::slice::from_raw_parts(buffer as *const u8, length) };
    let text: String = if wide {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        bytes.iter().map(|&b| char::from(b)).collect()
    };
    match limit {
        Some(n) => text.chars().take(n).collect(),
        None => text,
    }
}

/// One conversion's flags, width and precision.
#[derive(Clone, Copy, Debug, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "printf's five flags, as the standard names them"
)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

impl Spec {
    /// `body` padded to the width.
    fn pad(&self, out: &mut String, body: &str) {
        let n = body.chars().count();
        let fill = self.width.saturating_sub(n);
        if !self.left {
            out.extend(core::iter::repeat_n(' ', fill));
        }
        out.push_str(body);
        if self.left {
            out.extend(core::iter::repeat_n(' ', fill));
        }
    }

    /// An integer: sign or prefix, precision's zeros, the zero flag's zeros, the width.
    fn number(&self, out: &mut String, prefix: &str, digits: &str) {
        let mut digits = digits.to_owned();
        if let Some(p) = self.precision {
            if p == 0 && digits == "0" {
                digits.clear();
            }
            while digits.len() < p {
                digits.insert(0, '0');
            }
        }
        if self.zero && !self.left && self.precision.is_none() {
            while prefix.len() + digits.len() < self.width {
                digits.insert(0, '0');
            }
        }
        self.pad(out, &format!("{prefix}{digits}"));
    }
}

/// The size modifier of a conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    Default,
    Char,
    Short,
    Long,
    Wide,
    Quad,
    Pointer,
}

/// A floating-point conversion (`e`, `f`, `g`, `a`, upper or lower case).
fn float(spec: &Spec, conversion: char, value: f64) -> String {
    let precision = spec.precision.unwrap_or(6);
    let upper = conversion.is_ascii_uppercase();
    let exponent_form = |v: f64, p: usize| {
        let s = format!("{v:.p$e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = exponent.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", e.unsigned_abs())
    };
    let mut body = if value.is_nan() {
        "nan".into()
    } else if value.is_infinite() {
        "inf".into()
    } else {
        match conversion.to_ascii_lowercase() {
            'f' => format!("{value:.precision$}"),
            'e' => exponent_form(value, precision),
            'a' => format!("{value:e}"),
            _ => {
                let p = precision.max(1);
                // The decimal exponent, from the `e` form Rust prints exactly.
                let e: i32 = if value == 0.0 {
                    0
                } else {
                    format!("{value:e}")
                        .split_once('e')
                        .and_then(|(_, e)| e.parse().ok())
                        .unwrap_or(0)
                };
                let s = if e < -4 || e >= i32::try_from(p).unwrap_or(i32::MAX) {
                    exponent_form(value, p - 1)
                } else {
                    let decimals =
                        usize::try_from(i32::try_from(p).unwrap_or(0) - 1 - e).unwrap_or(0);
                    format!("{value:.decimals$}")
                };
                if spec.alternate {
                    s
                } else if let Some((m, e)) = s.split_once('e') {
                    let m = if m.contains('.') {
                        m.trim_end_matches('0').trim_end_matches('.')
                    } else {
                        m
                    };
                    format!("{m}e{e}")
                } else if s.contains('.') {
                    s.trim_end_matches('0').trim_end_matches('.').to_owned()
                } else {
                    s
                }
            }
        }
    };
    if upper {
        body = body.to_ascii_uppercase();
    }
    if value.is_sign_positive() && !value.is_nan() {
        if spec.plus {
            body.insert(0, '+');
        } else if spec.space {
            body.insert(0, ' ');
        }
    }
    body
}

/// Formats the image's `format` (narrow or wide, per `chars`) with the arguments at `slots`,
/// reporting misuse for `routine`.
///
/// # Safety
/// `format` is a NUL-terminated string of `chars`; `slots` holds the arguments it asks for, and
/// every pointer among them is what its conversion expects.
#[expect(
    clippy::too_many_lines,
    reason = "one pass over the format string, one arm per conversion"
)]
pub(crate) unsafe fn format(
    routine: &'static str,
    chars: Chars,
    format: *const u8,
    slots: *const u64,
) -> Formatted {
    let mut out = Formatted::default();
    if format.is_null() {
        violation(routine, "NULL format string");
        return out;
    }
    // SAFETY: a NUL-terminated format string (this function's contract).
    let pattern: Vec<char> =
        unsafe { c_string(routine, format as u64, chars == Chars::Wide, None) }
            .chars()
            .collect();
    let mut args = Args { slots, next: 0 };
    let mut i = 0;
    let text = &mut out.text;
    while i < pattern.len() {
        let c = pattern[i];
        i += 1;
        if c != '%' {
            text.push(c);
            continue;
        }
        let start = i - 1;
        let mut spec = Spec::default();
        while let Some(&f) = pattern.get(i) {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => spec.alternate = true,
                '0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if pattern.get(i) == Some(&'*') {
            i += 1;
            let w = (args.next() & 0xFFFF_FFFF) as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = w.unsigned_abs() as usize;
        } else {
            while let Some(d) = pattern.get(i).and_then(|c| c.to_digit(10)) {
                spec.width = spec.width.saturating_mul(10).saturating_add(d as usize);
                i += 1;
            }
        }
        if pattern.get(i) == Some(&'.') {
            i += 1;
            if pattern.get(i) == Some(&'*') {
                i += 1;
                let p = (args.next() & 0xFFFF_FFFF) as i32;
                spec.precision = usize::try_from(p).ok();
            } else {
                let mut p = 0usize;
                while let Some(d) = pattern.get(i).and_then(|c| c.to_digit(10)) {
                    p = p.saturating_mul(10).saturating_add(d as usize);
                    i += 1;
                }
                spec.precision = Some(p);
            }
        }
        let rest: String = pattern[i..pattern.len().min(i + 3)].iter().collect();
        let size = if rest.starts_with("I64") {
            i += 3;
            Size::Quad
        } else if rest.starts_with("I32") {
            i += 3;
            Size::Long
        } else if rest.starts_with("hh") {
            i += 2;
            Size::Char
        } else if rest.starts_with("ll") {
            i += 2;
            Size::Quad
        } else {
            let s = match pattern.get(i) {
                Some('h') => Size::Short,
                Some('l') => Size::Long,
                Some('w') => Size::Wide,
                Some('I' | 'z' | 't' | 'j') => Size::Pointer,
                Some('L') => Size::Quad,
                _ => Size::Default,
            };
            if s != Size::Default {
                i += 1;
            }
            s
        };
        let Some(&conversion) = pattern.get(i) else {
            violation(routine, "the format string ends inside a conversion");
            text.extend(&pattern[start..]);
            break;
        };
        i += 1;
        // The character width of %s/%c/%Z: the modifier's, else the function's (%S: the other).
        let wide_for = |upper: bool| match size {
            Size::Short => false,
            Size::Long | Size::Wide => true,
            _ => (chars == Chars::Wide) != upper,
        };
        match conversion {
            '%' => text.push('%'),
            'd' | 'i' | 'u' | 'x' | 'X' | 'o' => {
                let raw = args.next();
                let (value, bits): (u64, u32) = match size {
                    Size::Char => (raw & 0xFF, 8),
                    Size::Short => (raw & 0xFFFF, 16),
                    Size::Quad | Size::Pointer => (raw, 64),
                    _ => (raw & 0xFFFF_FFFF, 32),
                };
                let signed = matches!(conversion, 'd' | 'i');
                let negative = signed && bits > 0 && value >> (bits - 1) & 1 == 1;
                let magnitude = if negative {
                    (!value).wrapping_add(1) & (u64::MAX >> (64 - bits))
                } else {
                    value
                };
                let digits = match conversion {
                    'x' => format!("{magnitude:x}"),
                    'X' => format!("{magnitude:X}"),
                    'o' => format!("{magnitude:o}"),
                    _ => magnitude.to_string(),
                };
                let prefix = match conversion {
                    _ if negative => "-",
                    'd' | 'i' if spec.plus => "+",
                    'd' | 'i' if spec.space => " ",
                    'x' if spec.alternate && magnitude != 0 => "0x",
                    'X' if spec.alternate && magnitude != 0 => "0X",
                    'o' if spec.alternate && magnitude != 0 => "0",
                    _ => "",
                };
                spec.number(text, prefix, &digits);
            }
            'p' => {
                let value = args.next();
                spec.pad(text, &format!("{value:016X}"));
            }
            'c' | 'C' => {
                let wide = wide_for(conversion == 'C');
                out.unicode |= wide && chars == Chars::Narrow;
                let raw = args.next();
                let ch = if wide {
                    char::decode_utf16([(raw & 0xFFFF) as u16])
                        .next()
                        .and_then(Result::ok)
                        .unwrap_or('\u{FFFD}')
                } else {
                    char::from((raw & 0xFF) as u8)
                };
                spec.pad(text, &ch.to_string());
            }
            's' | 'S' => {
                let wide = wide_for(conversion == 'S');
                out.unicode |= wide && chars == Chars::Narrow;
                let p = args.next();
                // SAFETY: printf's contract: a NUL-terminated string (or `precision` units).
                let s = unsafe { c_string(routine, p, wide, spec.precision) };
                spec.pad(text, &s);
            }
            'Z' => {
                let wide = size == Size::Wide || size == Size::Long;
                out.unicode |= wide && chars == Chars::Narrow;
                let p = args.next();
                // SAFETY: printf's contract: a counted string.
                let s = unsafe { counted(p, wide, spec.precision) };
                spec.pad(text, &s);
            }
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'a' | 'A' => {
                let value = f64::from_bits(args.next());
                let body = float(&spec, conversion, value);
                let mut spec = spec;
                spec.precision = None;
                if spec.zero && !spec.left {
                    let (sign, digits) = match body.strip_prefix(['-', '+', ' ']) {
                        Some(d) => (&body[..1], d),
                        None => ("", body.as_str()),
                    };
                    spec.number(text, sign, digits);
                } else {
                    spec.pad(text, &body);
                }
            }
            'n' => {
                args.next();
                violation(
                    routine,
                    "`%n` is not supported (the kernel's printf refuses it)",
                );
            }
            other => {
                violation(
                    routine,
                    format!(
                        "unknown conversion `{}`",
                        pattern[start..i].iter().collect::<String>()
                    ),
                );
                let _ = other;
                text.extend(&pattern[start..i]);
            }
        }
    }
    out
}

/// `_vsnwprintf` / `_vsnprintf`'s result: writes at most `count` units of `text` to `buffer`,
/// NUL-terminated when it fits with room to spare; returns the length, or -1 when cut.
///
/// # Safety
/// `buffer` holds `count` writable units of `T`.
unsafe fn emit<T: Copy>(buffer: *mut T, count: usize, units: &[T], nul: T) -> i32 {
    let n = units.len().min(count);
    for (k, u) in units[..n].iter().enumerate() {
        // SAFETY: `k` < `count` (this function's contract).
        unsafe { poke(buffer, k, *u) };
    }
    if units.len() < count {
        // SAFETY: as above.
        unsafe { poke(buffer, units.len(), nul) };
    }
    if units.len() <= count {
        i32::try_from(units.len()).unwrap_or(i32::MAX)
    } else {
        -1
    }
}

/// The `_vsn(w)printf` family's body over a `va_list`.
///
/// # Safety
/// The C contract of `_vsnwprintf`/`_vsnprintf`.
unsafe fn vsnprintf(
    routine: &'static str,
    chars: Chars,
    buffer: *mut u8,
    count: usize,
    format: *const u8,
    slots: *const u64,
) -> i32 {
    enter(routine);
    if buffer.is_null() && count > 0 {
        violation(routine, format!("NULL buffer with count {count}"));
        return -1;
    }
    // SAFETY: the C contract.
    let f = unsafe { self::format(routine, chars, format, slots) };
    match chars {
        Chars::Wide => {
            let units: Vec<u16> = f.text.encode_utf16().collect();
            #[expect(clippy::cast_ptr_alignment, reason = "`emit` writes unaligned")]
            let wide = buffer.cast::<u16>();
            // SAFETY: `count` writable wide characters.
            unsafe { emit(wide, count, &units, 0) }
        }
        Chars::Narrow => {
            let bytes: Vec<u8> = f
                .text
                .chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect();
            // SAFETY: `count` writable bytes.
            unsafe { emit(buffer, count, &bytes, 0) }
        }
    }
}

pub(super) unsafe extern "win64" fn vsnwprintf(
    buffer: *mut u8,
    count: usize,
    format: *const u8,
    args: *const u64,
) -> i32 {
    // SAFETY: the C contract.
    unsafe { vsnprintf("_vsnwprintf", Chars::Wide, buffer, count, format, args) }
}

pub(super) unsafe extern "win64" fn vsnprintf_narrow(
    buffer: *mut u8,
    count: usize,
    format: *const u8,
    args: *const u64,
) -> i32 {
    // SAFETY: the C contract.
    unsafe { vsnprintf("_vsnprintf", Chars::Narrow, buffer, count, format, args) }
}

/// `_snwprintf(buffer, count, format, ...)` over its slots.
unsafe extern "win64" fn snwprintf_slots(slots: *const u64) -> i32 {
    // SAFETY: the slots of a variadic call: buffer, count, format, then the arguments.
    let [buffer, count, format] = [0, 1, 2].map(|i| unsafe { peek(slots, i) });
    // SAFETY: the C contract.
    unsafe {
        vsnprintf(
            "_snwprintf",
            Chars::Wide,
            buffer as *mut u8,
            usize::try_from(count).unwrap_or(0),
            format as *const u8,
            slots.wrapping_add(3),
        )
    }
}

/// `_snprintf(buffer, count, format, ...)` over its slots.
unsafe extern "win64" fn snprintf_slots(slots: *const u64) -> i32 {
    // SAFETY: the slots of a variadic call: buffer, count, format, then the arguments.
    let [buffer, count, format] = [0, 1, 2].map(|i| unsafe { peek(slots, i) });
    // SAFETY: the C contract.
    unsafe {
        vsnprintf(
            "_snprintf",
            Chars::Narrow,
            buffer as *mut u8,
            usize::try_from(count).unwrap_or(0),
            format as *const u8,
            slots.wrapping_add(3),
        )
    }
}

variadic!(
    /// `_snwprintf`.
    snwprintf => snwprintf_slots
);
variadic!(
    /// `_snprintf`.
    snprintf => snprintf_slots
);
