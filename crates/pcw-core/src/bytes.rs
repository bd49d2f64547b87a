// SPDX-License-Identifier: MIT OR Apache-2.0
//! Little-endian field access on byte slices that can never panic: the one place where
//! pcw-core turns offsets into integers (wire formats in the manner of smoltcp: explicit
//! little-endian offsets, never native struct casts).
//!
//! Reads outside the slice yield 0 and writes outside it are dropped. Views only hand out
//! accessors after a length check, so these fallbacks are unreachable from checked code; they
//! exist so that no input, however malformed, can make the core panic.

/// Reads `N` bytes at `offset`, or `None` if they are not all inside `buf`.
#[inline]
pub(crate) fn array<const N: usize>(buf: &[u8], offset: usize) -> Option<[u8; N]> {
    let end = offset.checked_add(N)?;
    buf.get(offset..end)?.try_into().ok()
}

/// Reads a little-endian `u16` at `offset` (0 if out of range).
#[inline]
pub(crate) fn u16_at(buf: &[u8], offset: usize) -> u16 {
    array::<2>(buf, offset).map_or(0, u16::from_le_bytes)
}

/// Reads a little-endian `u32` at `offset` (0 if out of range).
#[inline]
pub(crate) fn u32_at(buf: &[u8], offset: usize) -> u32 {
    array::<4>(buf, offset).map_or(0, u32::from_le_bytes)
}

/// Reads a little-endian `i32` at `offset` (0 if out of range).
#[inline]
pub(crate) fn i32_at(buf: &[u8], offset: usize) -> i32 {
    array::<4>(buf, offset).map_or(0, i32::from_le_bytes)
}

/// Reads a little-endian `i64` at `offset` (0 if out of range).
#[inline]
pub(crate) fn i64_at(buf: &[u8], offset: usize) -> i64 {
    array::<8>(buf, offset).map_or(0, i64::from_le_bytes)
}

/// Copies `src` to `buf[offset..]`; returns false (and writes nothing) if it does not fit.
#[inline]
pub(crate) fn put(buf: &mut [u8], offset: usize, src: &[u8]) -> bool {
    let Some(end) = offset.checked_add(src.len()) else {
        return false;
    };
    match buf.get_mut(offset..end) {
        Some(dst) => {
            dst.copy_from_slice(src);
            true
        }
        None => false,
    }
}

/// Writes a little-endian `u16` at `offset` (dropped if out of range).
#[inline]
pub(crate) fn set_u16(buf: &mut [u8], offset: usize, value: u16) {
    put(buf, offset, &value.to_le_bytes());
}

/// Writes a little-endian `u32` at `offset` (dropped if out of range).
#[inline]
pub(crate) fn set_u32(buf: &mut [u8], offset: usize, value: u32) {
    put(buf, offset, &value.to_le_bytes());
}

/// Writes a little-endian `i32` at `offset` (dropped if out of range).
#[inline]
pub(crate) fn set_i32(buf: &mut [u8], offset: usize, value: i32) {
    put(buf, offset, &value.to_le_bytes());
}

/// Writes a little-endian `i64` at `offset` (dropped if out of range).
#[inline]
pub(crate) fn set_i64(buf: &mut [u8], offset: usize, value: i64) {
    put(buf, offset, &value.to_le_bytes());
}

/// Fills `buf[offset..offset + len]` with zeroes (clamped to the slice).
#[inline]
pub(crate) fn zero(buf: &mut [u8], offset: usize, len: usize) {
    let end = offset.saturating_add(len).min(buf.len());
    if let Some(dst) = buf.get_mut(offset..end) {
        dst.fill(0);
    }
}

/// A length as the format's `u32`, saturating. Callers have bounded `n` beforehand (the writer
/// refuses replies whose total does not fit in 32 bits), so saturation is never observed.
#[inline]
pub(crate) fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Rounds `n` up to a multiple of 8, or `None` on overflow.
#[inline]
pub const fn align8(n: usize) -> Option<usize> {
    match n.checked_add(7) {
        Some(v) => Some(v & !7),
        None => None,
    }
}

/// Lanes of four `u16`s in a `u64`, each holding 1.
pub(crate) const LANE_ONES: u64 = 0x0001_0001_0001_0001;
/// Lanes of four `u16`s in a `u64`, each holding its high bit.
pub(crate) const LANE_HIGHS: u64 = 0x8000_8000_8000_8000;

/// The high bit of every `u16` lane of `w` that is 0, and possibly of lanes above a zero lane
/// (subtracting 1 borrows into the high bit of a zero lane whose own high bit is clear; a
/// borrow only propagates past a zero lane), so the result is non-zero exactly when some
/// lane is 0.
#[inline]
pub(crate) const fn zero_lanes(w: u64) -> u64 {
    w.wrapping_sub(LANE_ONES) & !w & LANE_HIGHS
}

/// Four UTF-16 units as the `u64` whose little-endian bytes are their UTF-16LE encoding.
#[inline]
pub(crate) fn pack4(units: [u16; 4]) -> u64 {
    let [u0, u1, u2, u3] = units;
    u64::from(u0) | u64::from(u1) << 16 | u64::from(u2) << 32 | u64::from(u3) << 48
}

/// Whether `units` contains a 0, eight units at a time and without early exit (names are
/// short; a branch per unit costs more than the scan).
#[inline]
pub(crate) fn has_zero_unit(units: &[u16]) -> bool {
    let (octs, rest) = units.as_chunks::<8>();
    let flags = octs.iter().fold(0u64, |acc, o| {
        let [u0, u1, u2, u3, u4, u5, u6, u7] = *o;
        acc | zero_lanes(pack4([u0, u1, u2, u3])) | zero_lanes(pack4([u4, u5, u6, u7]))
    });
    let (quads, tail) = rest.as_chunks::<4>();
    let flags = quads
        .iter()
        .fold(flags, |acc, q| acc | zero_lanes(pack4(*q)));
    flags != 0 || tail.contains(&0)
}

/// Whether the UTF-16LE `bytes` (an even number) contain a 0 unit, as [`has_zero_unit`].
#[inline]
pub(crate) fn has_zero_unit_le(bytes: &[u8]) -> bool {
    let (words, rest) = bytes.as_chunks::<8>();
    let flags = words
        .iter()
        .fold(0u64, |acc, w| acc | zero_lanes(u64::from_le_bytes(*w)));
    let (units, _) = rest.as_chunks::<2>();
    flags != 0 || units.contains(&[0, 0])
}

/// `units` as their UTF-16LE bytes, without copying: `None` on a big-endian host.
#[inline]
pub(crate) fn units_le(units: &[u16]) -> Option<&[u8]> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: the bytes are those of `units`' own allocation (`2 * len` of them, which is
    // `size_of_val(units)` and so at most `isize::MAX`), `u8` has alignment 1 and every byte
    // of an initialised `u16` is an initialised `u8`; the shared borrow keeps the lifetime.
    // On a little-endian host those bytes are the UTF-16LE encoding.
    Some(unsafe { core::slice::from_raw_parts(units.as_ptr().cast::<u8>(), size_of_val(units)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_little_endian_and_bounded() {
        let buf = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(u16_at(&buf, 0), 0x0201);
        assert_eq!(u32_at(&buf, 1), 0x0504_0302);
        assert_eq!(u32_at(&buf, 6), 0, "a read crossing the end yields 0");
        assert_eq!(i64_at(&buf, usize::MAX), 0, "offset overflow yields 0");
        assert_eq!(len32(usize::MAX), u32::MAX);
        assert_eq!(len32(88), 88);
        assert_eq!(i32_at(&[0xff; 4], 0), -1);
        assert_eq!(
            i64_at(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 0),
            -2
        );
    }

    #[test]
    fn writes_outside_are_dropped_whole() {
        let mut buf = [0xA5u8; 6];
        set_u32(&mut buf, 4, 0x1122_3344);
        assert_eq!(buf, [0xA5; 6], "a partial write must not happen");
        set_u16(&mut buf, 4, 0x1122);
        assert_eq!(buf, [0xA5, 0xA5, 0xA5, 0xA5, 0x22, 0x11]);
        zero(&mut buf, 3, 100);
        assert_eq!(buf, [0xA5, 0xA5, 0xA5, 0, 0, 0]);
        assert!(!put(&mut buf, usize::MAX, &[1]));
    }

    #[test]
    fn zero_units_are_found_wherever_they_are() {
        extern crate std;
        use std::vec::Vec;
        for len in 0..40usize {
            let clean: Vec<u16> = (0..len)
                .map(|i| [1u16, 0x100, 0x8000, 0xFFFF][i % 4])
                .collect();
            let le = |u: &[u16]| u.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            assert!(!has_zero_unit(&clean));
            assert!(!has_zero_unit_le(&le(&clean)));
            for at in 0..len {
                let mut dirty = clean.clone();
                dirty[at] = 0;
                assert!(has_zero_unit(&dirty), "len {len}, 0 at {at}");
                assert!(has_zero_unit_le(&le(&dirty)), "len {len}, 0 at {at}");
            }
        }
    }

    #[test]
    fn align8_rounds_up() {
        assert_eq!(align8(0), Some(0));
        assert_eq!(align8(1), Some(8));
        assert_eq!(align8(88), Some(88));
        assert_eq!(align8(89), Some(96));
        assert_eq!(align8(usize::MAX), None);
    }
}
