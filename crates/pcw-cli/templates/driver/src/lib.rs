//! {{name}}: a WDM driver whose counters are declared in `{{snake}}.man`.
//!
//! `DriverEntry` ([`kernel`]) registers the countersets ([`counters`]) and creates a control
//! device (`\\.\{{device}}`) that answers create and close and refuses every device-control
//! code; the requests it receives are counted ([`stats`]).
//!
//! On a Windows target the crate is `no_std` and the kernel side is compiled over windows-sys,
//! or wdk-sys with the `wdk` feature. On an x86-64 Linux host the same kernel side is compiled
//! for the tests, whose harness (pcw-harness) supplies the kernel routines.
#![cfg_attr(target_os = "windows", no_std)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod counters;
#[cfg(any(target_os = "windows", all(target_arch = "x86_64", unix)))]
pub mod kernel;
pub mod stats;
#[cfg(target_pointer_width = "64")]
pub mod wdm;

/// The control device's name in the object manager's namespace.
pub const DEVICE_NAME: &str = r"\Device\{{device}}";
/// The symbolic link user mode opens (`\\.\{{device}}`).
pub const SYMBOLIC_LINK: &str = r"\DosDevices\{{device}}";

/// An ASCII string as UTF-16, at compile time.
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated at compile time only; `i` < N bounds both indexes"
)]
pub(crate) const fn utf16<const N: usize>(s: &str) -> [u16; N] {
    let bytes = s.as_bytes();
    let mut out = [0u16; N];
    let mut i = 0;
    while i < N {
        out[i] = bytes[i] as u16;
        i += 1;
    }
    out
}
