// SPDX-License-Identifier: MIT OR Apache-2.0
//! Memory and C string routines the kernel exports and compilers call for struct copies and
//! clears (`memset`, `memcpy`, `memmove`, `memcmp`), the `Rtl…Memory` routines the headers turn
//! into them or import, and `strlen`/`wcslen`. A NULL pointer with a non-zero length is
//! reported (and the call skipped); `memcpy` and `RtlCopyMemory` over overlapping ranges are
//! reported (and done as a move).

use std::ffi::c_void;

use super::state::{enter, violation};

/// Whether a `len`-byte range at `p` may be used; reports a NULL one.
fn usable(routine: &'static str, p: *const c_void, len: usize) -> bool {
    if p.is_null() && len > 0 {
        violation(routine, format!("NULL pointer with length {len}"));
        return false;
    }
    len > 0
}

/// A copy: a move, with overlap reported when the routine forbids it.
///
/// # Safety
/// As the routine's contract: `len` readable bytes at `src`, writable at `dst`.
unsafe fn copy(
    routine: &'static str,
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    overlap_ok: bool,
) {
    if !usable(routine, dst, len) || !usable(routine, src, len) {
        return;
    }
    let (d, s) = (dst as usize, src as usize);
    if !overlap_ok && d < s.saturating_add(len) && s < d.saturating_add(len) && d != s {
        violation(
            routine,
            format!("overlapping {len}-byte ranges {src:p} and {dst:p} (use memmove)"),
        );
    }
    // SAFETY: per this function's contract; `copy` allows overlap.
    unsafe { core::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), len) };
}

pub(super) unsafe extern "win64" fn memset(
    dst: *mut c_void,
    value: i32,
    len: usize,
) -> *mut c_void {
    enter("memset");
    if usable("memset", dst, len) {
        // SAFETY: the caller's `len` writable bytes (the C contract).
        unsafe { core::ptr::write_bytes(dst.cast::<u8>(), value.to_le_bytes()[0], len) };
    }
    dst
}

pub(super) unsafe extern "win64" fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
) -> *mut c_void {
    enter("memcpy");
    // SAFETY: the C contract.
    unsafe { copy("memcpy", dst, src, len, false) };
    dst
}

pub(super) unsafe extern "win64" fn memmove(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
) -> *mut c_void {
    enter("memmove");
    // SAFETY: the C contract.
    unsafe { copy("memmove", dst, src, len, true) };
    dst
}

/// The first `len` bytes at `a` and `b`.
///
/// # Safety
/// Both readable for `len` bytes.
unsafe fn both<'a>(a: *const c_void, b: *const c_void, len: usize) -> (&'a [u8], &'a [u8]) {
    // SAFETY: per this function's contract.
    let x = unsafe { core::slice::from_raw_parts(a.cast::<u8>(), len) };
    // SAFETY: as above.
    let y = unsafe { core::slice::from_raw_parts(b.cast::<u8>(), len) };
    (x, y)
}

pub(super) unsafe extern "win64" fn memcmp(a: *const c_void, b: *const c_void, len: usize) -> i32 {
    enter("memcmp");
    if !usable("memcmp", a, len) || !usable("memcmp", b, len) {
        return 0;
    }
    // SAFETY: the C contract: `len` readable bytes each.
    let (x, y) = unsafe { both(a, b, len) };
    x.iter()
        .zip(y)
        .find(|(p, q)| p != q)
        .map_or(0, |(p, q)| i32::from(*p) - i32::from(*q))
}

pub(super) unsafe extern "win64" fn rtl_compare_memory(
    a: *const c_void,
    b: *const c_void,
    len: usize,
) -> usize {
    enter("RtlCompareMemory");
    if !usable("RtlCompareMemory", a, len) || !usable("RtlCompareMemory", b, len) {
        return 0;
    }
    // SAFETY: the DDI's contract: `len` readable bytes each.
    let (x, y) = unsafe { both(a, b, len) };
    x.iter().zip(y).take_while(|(p, q)| p == q).count()
}

pub(super) unsafe extern "win64" fn rtl_copy_memory(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
) {
    enter("RtlCopyMemory");
    // SAFETY: the DDI's contract.
    unsafe { copy("RtlCopyMemory", dst, src, len, false) };
}

pub(super) unsafe extern "win64" fn rtl_move_memory(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
) {
    enter("RtlMoveMemory");
    // SAFETY: the DDI's contract.
    unsafe { copy("RtlMoveMemory", dst, src, len, true) };
}

pub(super) unsafe extern "win64" fn rtl_zero_memory(dst: *mut c_void, len: usize) {
    enter("RtlZeroMemory");
    if usable("RtlZeroMemory", dst, len) {
        // SAFETY: the DDI's contract: `len` writable bytes.
        unsafe { core::ptr::write_bytes(dst.cast::<u8>(), 0, len) };
    }
}

pub(super) unsafe extern "win64" fn rtl_fill_memory(dst: *mut c_void, len: usize, fill: u8) {
    enter("RtlFillMemory");
    if usable("RtlFillMemory", dst, len) {
        // SAFETY: the DDI's contract: `len` writable bytes.
        unsafe { core::ptr::write_bytes(dst.cast::<u8>(), fill, len) };
    }
}

/// The `i`-th `T` at `p`, read unaligned.
///
/// # Safety
/// `p + i` is readable as a `T`.
pub(crate) unsafe fn peek<T: Copy>(p: *const T, i: usize) -> T {
    // SAFETY: per this function's contract.
    unsafe { p.wrapping_add(i).read_unaligned() }
}

/// Writes `value` as the `i`-th `T` at `p`, unaligned.
///
/// # Safety
/// `p + i` is writable as a `T`.
pub(crate) unsafe fn poke<T: Copy>(p: *mut T, i: usize, value: T) {
    // SAFETY: per this function's contract.
    unsafe { p.wrapping_add(i).write_unaligned(value) };
}

/// The longest string the loader reads from an image before calling it unterminated.
pub(crate) const STRING_LIMIT: usize = 1 << 20;

/// The length of the NUL-terminated string of `T` units at `p` (at most [`STRING_LIMIT`]
/// units; longer is reported for `routine` and cut there).
///
/// # Safety
/// `p` is readable up to its terminator (or the limit).
pub(crate) unsafe fn terminated_len<T: Copy + PartialEq + Default>(
    routine: &'static str,
    p: *const T,
) -> usize {
    let mut n = 0;
    // SAFETY: per this function's contract, each unit up to the terminator is readable.
    while n < STRING_LIMIT && unsafe { peek(p, n) } != T::default() {
        n += 1;
    }
    if n == STRING_LIMIT {
        violation(
            routine,
            format!("no terminator within {STRING_LIMIT} units of {p:p}"),
        );
    }
    n
}

pub(super) unsafe extern "win64" fn strlen(s: *const u8) -> usize {
    enter("strlen");
    if s.is_null() {
        violation("strlen", "NULL string");
        return 0;
    }
    // SAFETY: the C contract: a NUL-terminated string.
    unsafe { terminated_len("strlen", s) }
}

pub(super) unsafe extern "win64" fn wcslen(s: *const u16) -> usize {
    enter("wcslen");
    if s.is_null() {
        violation("wcslen", "NULL string");
        return 0;
    }
    // SAFETY: the C contract: a NUL-terminated wide string.
    unsafe { terminated_len("wcslen", s) }
}
