//! Little-endian field access on byte slices that can never panic: the one place where
//! pcw-core turns offsets into integers (DESIGN.md, "wire formats like smoltcp").
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

/// Writes a little-endian `u64` at `offset` (dropped if out of range).
#[inline]
pub(crate) fn set_u64(buf: &mut [u8], offset: usize, value: u64) {
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
    fn align8_rounds_up() {
        assert_eq!(align8(0), Some(0));
        assert_eq!(align8(1), Some(8));
        assert_eq!(align8(88), Some(88));
        assert_eq!(align8(89), Some(96));
        assert_eq!(align8(usize::MAX), None);
    }
}
