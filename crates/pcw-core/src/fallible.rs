// SPDX-License-Identifier: MIT OR Apache-2.0
//! Growing a `Vec` without a panic path (RELIABILITY.md, "No panic, proven"): the kernel image
//! and the perf DLL's collect path must not link Rust's allocation-failure or capacity-overflow
//! panics, which `Vec::push`, `resize`, `extend_from_slice` and `collect` carry even after a
//! successful `try_reserve` (their growth paths are still compiled in). `pcw-pecheck no-panic`
//! checks the cross-built artifacts for them.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;

/// Appends `value` if `v` has spare capacity (reserved beforehand with `try_reserve*`);
/// `false`, dropping `value` and leaving `v` unchanged, when it has none. Never grows, so
/// never panics.
pub fn push_reserved<T>(v: &mut Vec<T>, value: T) -> bool {
    let len = v.len();
    let Some(slot) = v.spare_capacity_mut().first_mut() else {
        return false;
    };
    slot.write(value);
    // SAFETY: the element at `len` was just initialised and `len < capacity`.
    unsafe { v.set_len(len + 1) };
    true
}

/// An empty vector with room for at least `n` elements, or the allocation error.
///
/// # Errors
/// The allocation failed, or `n` elements exceed `isize::MAX` bytes.
pub fn with_capacity<T>(n: usize) -> Result<Vec<T>, TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)?;
    Ok(v)
}

/// Grows `v` to `len` elements, the new ones `value`; `false` (and `v` unchanged) when the
/// allocation fails. Never shrinks.
pub fn grow_filled<T: Copy>(v: &mut Vec<T>, len: usize, value: T) -> bool {
    let Some(more) = len.checked_sub(v.len()) else {
        return true;
    };
    if v.try_reserve_exact(more).is_err() {
        return false;
    }
    let old = v.len();
    for slot in v.spare_capacity_mut().iter_mut().take(more) {
        slot.write(value);
    }
    // SAFETY: `try_reserve_exact` made room for `more` elements past `old`, and the loop above
    // initialised each of them.
    unsafe { v.set_len(old + more) };
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn push_reserved_fills_only_reserved_room() {
        let mut v: Vec<u32> = with_capacity(2).unwrap();
        let room = v.capacity();
        for i in 0..room {
            assert!(push_reserved(&mut v, u32::try_from(i).unwrap()));
        }
        assert!(!push_reserved(&mut v, 99));
        assert_eq!(v.len(), room);
        assert_eq!(v.capacity(), room, "never grows");
    }

    #[test]
    fn grow_filled_grows_with_the_value_and_never_shrinks() {
        let mut v = vec![7u64; 2];
        assert!(grow_filled(&mut v, 5, 0));
        assert_eq!(v, [7, 7, 0, 0, 0]);
        assert!(grow_filled(&mut v, 1, 0));
        assert_eq!(v.len(), 5);
        assert!(
            !grow_filled(&mut v, usize::MAX / 4, 0),
            "refused, not a panic"
        );
        assert_eq!(v, [7, 7, 0, 0, 0]);
    }

    #[test]
    fn an_impossible_capacity_is_an_error() {
        assert!(with_capacity::<u64>(usize::MAX / 4).is_err());
    }
}
