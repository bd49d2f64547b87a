// SPDX-License-Identifier: MIT OR Apache-2.0
//! The snapshot buffer (no allocation on the collect path): allocated at
//! Open, reused by every collection, grown only when a source reports that a snapshot needs
//! more room — at most once per growth of the driver's data, never in steady state.
//!
//! It is backed by `u64`s so the bytes are 8-aligned: instance names, which the snapshot
//! format places at even offsets from its 8-aligned start, can then be read as `&[u16]`
//! without copying ([`units`]).

/// Largest snapshot the DLL accepts (64 MiB).
pub const MAX_SNAPSHOT_LEN: usize = 64 * 1024 * 1024;

/// An 8-aligned, growable byte buffer.
#[derive(Debug, Default)]
pub struct SnapshotBuf {
    words: Vec<u64>,
}

impl SnapshotBuf {
    /// A buffer of at least `len` bytes; `None` when it cannot be allocated (or `len` exceeds
    /// [`MAX_SNAPSHOT_LEN`]).
    pub fn with_len(len: usize) -> Option<Self> {
        let mut b = Self::default();
        b.grow_to(len).then_some(b)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.words.len().saturating_mul(8)
    }

    /// Whether the buffer has no room at all.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Grows to at least `len` bytes (capped at [`MAX_SNAPSHOT_LEN`]); returns whether the
    /// buffer now has `len` bytes (`false` also when the allocation fails: this runs while
    /// collecting, where an allocation failure must not abort the consumer's process).
    pub fn grow_to(&mut self, len: usize) -> bool {
        if len > MAX_SNAPSHOT_LEN {
            return false;
        }
        crate::nopanic::grow_zeroed(&mut self.words, len.div_ceil(8))
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: a `u64` slice is valid as `8 × len` initialised bytes, `u8` has alignment 1,
        // and the borrow of `self` keeps the storage alive and unaliased by writers.
        unsafe { core::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len()) }
    }

    /// The bytes, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        // SAFETY: as in `bytes`; any byte pattern is a valid `u64`, and the exclusive borrow
        // of `self` makes this the only access.
        unsafe { core::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), len) }
    }
}

/// `bytes` (UTF-16LE) as units without copying, when they are 2-aligned and the host is
/// little-endian (every Windows target); `None` otherwise.
pub fn units(bytes: &[u8]) -> Option<&[u16]> {
    if cfg!(target_endian = "big") || !bytes.len().is_multiple_of(2) {
        return None;
    }
    // SAFETY: every bit pattern is a valid `u16`; `align_to` only puts correctly aligned,
    // whole `u16`s in the middle part.
    let (head, middle, tail) = unsafe { bytes.align_to::<u16>() };
    (head.is_empty() && tail.is_empty()).then_some(middle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_names_are_borrowed() {
        let mut b = SnapshotBuf::with_len(13).unwrap();
        assert_eq!(b.len(), 16);
        b.bytes_mut()[2..6].copy_from_slice(&[0x41, 0, 0x42, 0]);
        assert_eq!(units(&b.bytes()[2..6]), Some(&[0x41u16, 0x42][..]));
        assert_eq!(units(&b.bytes()[1..5]), None);
        assert!(!b.grow_to(MAX_SNAPSHOT_LEN + 1));
    }
}
