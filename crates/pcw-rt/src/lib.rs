// SPDX-License-Identifier: MIT OR Apache-2.0
//! The runtime contract pcw-gen's kernel-mode code is written against, for one of two bindings:
//! the PCW items under their WDK names, plus the few adapters where a binding departs from the
//! DDI — NULL handle constants, the callback type and its cast to the binding's
//! `PPCW_CALLBACK`, a `const` GUID constructor — and `UNICODE_STRING` helpers.
//!
//! Select the binding with a feature: `windows-sys` (Microsoft's metadata bindings; handles are
//! `isize`, `PPCW_CALLBACK` is typed as a zero-argument function) or `wdk-sys` (bindgen over the
//! WDK headers, as windows-drivers-rs generates it; handles are pointers, enums are modules of
//! constants, the flags enum is `PCW_REGISTRATION_FLAGS` without an underscore). Everything a
//! driver or generated code names is at the crate root.
//!
//! On top of the contract, the safe `PCW_CALLBACK` ([`Publish`], [`Visitor`], [`callback`]): a
//! driver implements [`Publish`] for a counterset and registers it with the generated
//! `register_publisher`; the library answers PCW's queries — `InstanceId`, `InstanceMask`,
//! `CounterMask`, enumeration, cancellation, the first `PcwAddInstance` failure — without the
//! driver writing `unsafe`.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]
#![no_std]
// Kernel-side code: the callback path never panics.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        reason = "the callback path runs in the kernel and never panics: every construct that can is a compile error outside tests"
    )
)]

#[cfg(not(any(feature = "windows-sys", feature = "wdk-sys")))]
compile_error!(
    "pcw-rt needs a binding: enable its `windows-sys` feature (any target) or its `wdk-sys` \
     feature (the WDK build on Windows)"
);

/// `unicode` and `units` over a binding's `UNICODE_STRING` (both bindings name its fields the
/// same way).
macro_rules! unicode_helpers {
    () => {
        /// A `UNICODE_STRING` over `units` (at most 32 767 of them; longer names are cut).
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
        /// `s` is NULL or points to a valid `UNICODE_STRING` whose buffer holds `Length` bytes
        /// and outlives `'a`.
        pub unsafe fn units<'a>(s: *const UNICODE_STRING) -> Option<&'a [u16]> {
            // SAFETY: per this function's contract.
            let s = unsafe { s.as_ref() }?;
            if s.Buffer.is_null() || s.Length == 0 {
                return Some(&[]);
            }
            // SAFETY: the buffer holds `Length` bytes (contract), i.e. `Length / 2` units.
            Some(unsafe { core::slice::from_raw_parts(s.Buffer, usize::from(s.Length / 2)) })
        }
    };
}

// With both features (a workspace that builds the WDK flavour of one crate and the windows-sys
// flavour of another), wdk-sys wins on Windows targets, where it exists.
#[cfg(all(feature = "windows-sys", not(all(feature = "wdk-sys", windows))))]
mod windows_sys_binding;
#[cfg(all(feature = "windows-sys", not(all(feature = "wdk-sys", windows))))]
pub use windows_sys_binding::*;

#[cfg(all(feature = "wdk-sys", windows))]
mod wdk_sys_binding;
#[cfg(all(feature = "wdk-sys", windows))]
pub use wdk_sys_binding::*;

#[cfg(any(feature = "windows-sys", all(feature = "wdk-sys", windows)))]
mod publish;
#[cfg(any(feature = "windows-sys", all(feature = "wdk-sys", windows)))]
pub use publish::{
    CounterMask, Counterset, Publish, Summary, ValuesOf, Visitor, callback, respond,
};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
