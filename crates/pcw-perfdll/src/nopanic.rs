// SPDX-License-Identifier: MIT OR Apache-2.0
//! Allocation and string helpers without panic paths (RELIABILITY.md, "No panic, proven").
//!
//! `CollectPerformanceData` runs inside whatever process consumes counters (perfmon, WMI, a
//! service); a panic there aborts that process. `pcw-pecheck no-panic` proves on the
//! cross-built DLL that nothing reachable from the collect path can reach Rust's panic
//! machinery. `Vec::push`, `resize`, `collect` and `format!` all link it (their growth paths end
//! in `handle_alloc_error` / `capacity_overflow`) even after a successful `try_reserve`, so the
//! collect path allocates, when it must, through these instead, and builds the NUL-terminated
//! UTF-16 strings Win32 wants in a fixed buffer on the stack.

pub use pcw_core::fallible::{push_reserved, with_capacity};

/// Grows `v` to `len` words, the new ones zero; `false` (and `v` unchanged) when the
/// allocation fails.
pub fn grow_zeroed(v: &mut Vec<u64>, len: usize) -> bool {
    pcw_core::fallible::grow_filled(v, len, 0)
}

/// A NUL-terminated UTF-16 string of at most `N - 1` units, on the stack.
#[derive(Clone, Copy, Debug)]
pub struct Wide<const N: usize> {
    units: [u16; N],
    len: usize,
}

impl<const N: usize> Wide<N> {
    /// The empty string.
    pub const fn new() -> Self {
        Self {
            units: [0; N],
            len: 0,
        }
    }

    /// `s` as a wide string; `None` if it does not fit.
    pub fn of(s: &str) -> Option<Self> {
        let mut w = Self::new();
        w.push(s).then_some(w)
    }

    /// Appends `s`; `false` if it does not fit (the string then holds a prefix of it).
    pub fn push(&mut self, s: &str) -> bool {
        for unit in s.encode_utf16() {
            // The last unit stays 0: the terminating NUL.
            match self.units.get_mut(self.len) {
                Some(slot) if self.len + 1 < N => *slot = unit,
                _ => return false,
            }
            self.len += 1;
        }
        true
    }

    /// The units before the NUL.
    pub fn units(&self) -> &[u16] {
        self.units.get(..self.len).unwrap_or_default()
    }

    /// The string for Win32: NUL-terminated (every unit from `len` on is 0), valid while
    /// `self` is.
    pub const fn as_ptr(&self) -> *const u16 {
        self.units.as_ptr()
    }
}

impl<const N: usize> Default for Wide<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_strings_are_nul_terminated_and_bounded() {
        let w = Wide::<8>::of("PcwRs").unwrap();
        assert_eq!(String::from_utf16(w.units()).unwrap(), "PcwRs");
        // SAFETY: `as_ptr` points to N = 8 initialised units.
        let all = unsafe { core::slice::from_raw_parts(w.as_ptr(), 8) };
        assert_eq!(all[5..], [0, 0, 0]);
        assert!(
            Wide::<8>::of("1234567").is_some(),
            "7 units and the NUL fit"
        );
        assert!(Wide::<8>::of("12345678").is_none());
        let mut w = Wide::<8>::of("ab").unwrap();
        assert!(w.push("cd"));
        assert!(!w.push("efgh"));
        assert_eq!(w.units().len(), 7);
    }
}
