// UNICODE_STRING helpers shared by both FFI facades (`src/pcw_rt.rs` over windows-sys,
// `src/pcw_rt_wdk.rs` over wdk-sys): `include!`d by each, so `UNICODE_STRING` is that facade's
// type. (An included file cannot carry inner `//!` docs.)

/// A `UNICODE_STRING` over `units` (at most 32 767 of them; longer names are cut, which the
/// registries' 1023-unit limit never reaches).
pub fn unicode(units: &[u16]) -> UNICODE_STRING {
    let bytes = u16::try_from(units.len().saturating_mul(2)).unwrap_or(0xFFFE);
    UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: units.as_ptr().cast_mut(),
    }
}

/// The units of a `UNICODE_STRING`, or `None` for a NULL pointer.
///
/// # Safety
/// `s` is NULL or points to a valid `UNICODE_STRING` whose buffer holds `Length` bytes and
/// outlives `'a`.
pub unsafe fn units<'a>(s: *const UNICODE_STRING) -> Option<&'a [u16]> {
    // SAFETY: per this function's contract.
    let s = unsafe { s.as_ref() }?;
    if s.Buffer.is_null() || s.Length == 0 {
        return Some(&[]);
    }
    // SAFETY: the buffer holds `Length` bytes (contract), i.e. `Length / 2` units.
    Some(unsafe { core::slice::from_raw_parts(s.Buffer, usize::from(s.Length / 2)) })
}
