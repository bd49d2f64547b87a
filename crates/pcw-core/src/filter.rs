// SPDX-License-Identifier: MIT OR Apache-2.0
//! The instance filter of a PCW query (`PCW_MASK_INFORMATION`, `docs/pcw-semantics.md`):
//! `InstanceId` (`PCW_ANY_INSTANCE_ID` = all) and `InstanceMask` (NULL or `*` = all, otherwise a
//! case-insensitive `*`/`?` wildcard), plus the `CounterMask` bit test. Pure logic, shared by the
//! driver's callback and by the simulator that checks it.

use crate::wildcard;

/// `PCW_ANY_INSTANCE_ID`: the query is not restricted to one instance id.
pub const PCW_ANY_INSTANCE_ID: u32 = 0xFFFF_FFFF;

/// Which instances a query asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceFilter<'a> {
    id: u32,
    /// `None` when every name passes (a NULL, empty or `*` mask).
    mask: Option<&'a [u16]>,
}

impl<'a> InstanceFilter<'a> {
    /// The filter for an `InstanceId` and an `InstanceMask` (UTF-16, no NUL; `None` for NULL).
    #[inline]
    pub fn new(id: u32, mask: Option<&'a [u16]>) -> Self {
        Self {
            id,
            mask: mask.filter(|m| !wildcard::is_match_all(m)),
        }
    }

    /// Whether every instance passes (any id, every name), so a caller may skip
    /// [`InstanceFilter::selects`] altogether.
    #[inline]
    pub const fn passes_all(&self) -> bool {
        self.id == PCW_ANY_INSTANCE_ID && self.mask.is_none()
    }

    /// The same name mask with any id: what a caller that has already looked up the one id a
    /// query names (or walks every instance once per id) filters by, without re-examining the
    /// mask.
    #[must_use]
    #[inline]
    pub const fn with_any_id(self) -> Self {
        Self {
            id: PCW_ANY_INSTANCE_ID,
            mask: self.mask,
        }
    }

    /// The filter that passes everything.
    #[inline]
    pub const fn all() -> Self {
        Self {
            id: PCW_ANY_INSTANCE_ID,
            mask: None,
        }
    }

    /// The one instance id asked for, if the query names one.
    #[inline]
    pub const fn single_id(&self) -> Option<u32> {
        if self.id == PCW_ANY_INSTANCE_ID {
            None
        } else {
            Some(self.id)
        }
    }

    /// Whether the filter restricts names at all.
    #[inline]
    pub const fn has_name_mask(&self) -> bool {
        self.mask.is_some()
    }

    /// Whether an instance passes.
    ///
    /// A name whose first unit already fails the mask is rejected inline
    /// ([`wildcard::first_unit_rejects`]); any other is matched out of line.
    /// Inlined, with the name matching kept out of line: a caller's loop
    /// then folds the id and mask tests away for a filter it knows (as `InstanceFilter::all()`)
    /// and keeps its state in registers. Without this, an optimiser that inlines the matcher
    /// into this function finds it too big to inline into the loop (the cross-built driver:
    /// a call per instance, 28 instructions for a filter that passes everything).
    #[expect(
        clippy::inline_always,
        reason = "seen in the cross-built driver: left out of line, the call takes the filter's \
                  address, and with it the callback's whole visitor is kept in memory"
    )]
    #[inline(always)]
    pub fn selects(&self, name: &[u16], id: u32) -> bool {
        self.selects_led(self.lead(), name, id)
    }

    /// The mask's first unit as [`InstanceFilter::selects_led`] tests names against it: for a
    /// loop over many names, worked out once before it (measured with callgrind: examining the
    /// mask again for each name cost 3 to 7 instructions an instance).
    #[inline]
    pub fn lead(&self) -> wildcard::Lead {
        self.mask.map_or(wildcard::Lead::none(), wildcard::Lead::of)
    }

    /// [`InstanceFilter::selects`] with the mask's [`InstanceFilter::lead`] given: `lead` must be
    /// this filter's `lead()` (another may reject names the mask matches).
    #[expect(clippy::inline_always, reason = "as for `selects`")]
    #[inline(always)]
    pub fn selects_led(&self, lead: wildcard::Lead, name: &[u16], id: u32) -> bool {
        (self.id == PCW_ANY_INSTANCE_ID || self.id == id)
            && self
                .mask
                .is_none_or(|m| !lead.rejects(name) && name_matches(m, name))
    }
}

/// [`wildcard::matches`], never inlined (see [`InstanceFilter::selects`]).
#[inline(never)]
fn name_matches(mask: &[u16], name: &[u16]) -> bool {
    wildcard::matches(mask, name)
}

/// Whether `CounterMask` asks for counter `id` (ids of 64 and above cannot be selected).
pub const fn counter_wanted(counter_mask: u64, id: u16) -> bool {
    id < 64 && counter_mask & (1u64 << id) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn id_and_mask_combine() {
        let star = w("*");
        let small = w("?mall*");
        assert!(InstanceFilter::new(PCW_ANY_INSTANCE_ID, None).selects(&w("x"), 5));
        assert!(!InstanceFilter::new(PCW_ANY_INSTANCE_ID, Some(&star)).has_name_mask());
        assert!(!InstanceFilter::new(PCW_ANY_INSTANCE_ID, Some(&[])).has_name_mask());
        let f = InstanceFilter::new(3, Some(&small));
        assert_eq!(f.single_id(), Some(3));
        assert!(f.selects(&w("SMALL wave"), 3));
        assert!(!f.selects(&w("Small Wave"), 4));
        assert!(!f.selects(&w("Large Wave"), 3));
        assert_eq!(InstanceFilter::all().single_id(), None);
    }

    #[test]
    fn passes_all_only_without_an_id_or_a_real_mask() {
        let star = w("*");
        let small = w("?mall*");
        assert!(InstanceFilter::all().passes_all());
        assert!(InstanceFilter::new(PCW_ANY_INSTANCE_ID, None).passes_all());
        assert!(InstanceFilter::new(PCW_ANY_INSTANCE_ID, Some(&star)).passes_all());
        assert!(!InstanceFilter::new(PCW_ANY_INSTANCE_ID, Some(&small)).passes_all());
        assert!(!InstanceFilter::new(0, None).passes_all());
        let named = InstanceFilter::new(7, Some(&small)).with_any_id();
        assert_eq!(named.single_id(), None);
        assert!(named.selects(&w("small wave"), 3));
        assert!(!named.selects(&w("Large Wave"), 3));
    }

    #[test]
    fn counter_mask_bits() {
        assert!(counter_wanted(0b10, 1));
        assert!(!counter_wanted(0b10, 0));
        assert!(counter_wanted(u64::MAX, 63));
        assert!(
            !counter_wanted(u64::MAX, 64),
            "ids above 63 have no mask bit"
        );
    }
}
