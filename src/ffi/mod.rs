// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver's one FFI facade: every Windows item the driver and its pcw-gen generated code
//! name — PCW, the I/O manager, Ex/Ke, security, status codes, the I/O manager's structure
//! layouts — is reached through this module tree, and no other module of the driver names
//! windows-sys or wdk-sys.
//!
//! * the PCW runtime contract of the generated code comes from `pcw-rt` (windows-sys's `Wdk`
//!   bindings, or wdk-sys's bindgen output in the WDK build);
//! * [`wdm`]: `DRIVER_OBJECT`, `IRP`, `IO_STACK_LOCATION` as the WDK lays them out, pinned by
//!   `const` assertions (never a binding's layout);
//! * [`status`]: the `NTSTATUS` values the driver returns;
//! * the kernel routines the driver calls outside PCW, with the facade's types: from
//!   `windows_sys.rs` in every build but the WDK one, from `wdk_sys.rs` in the WDK one.
//!
//! On a Windows target windows-sys's functions link to `ntoskrnl.exe`/`hal.dll` by raw-dylib;
//! on any other host the PCW and clock symbols resolve to pcw-sim's `#[no_mangle]`
//! implementations, so the code under test is the code PCW calls.

pub use pcw_rt::*;

#[cfg(all(feature = "wdk", target_os = "windows"))]
#[path = "wdk_sys.rs"]
mod binding;
#[cfg(not(all(feature = "wdk", target_os = "windows")))]
#[path = "windows_sys.rs"]
mod binding;
pub use binding::*;

pub mod status;
#[cfg(target_pointer_width = "64")]
pub mod wdm;

/// The lock of the driver's instance registries.
#[cfg(not(target_os = "windows"))]
pub type RegistryLock = pcw_core::registry::SpinRwLock;
#[cfg(target_os = "windows")]
mod push_lock;
/// The lock of the driver's instance registries: a kernel push lock.
#[cfg(target_os = "windows")]
pub type RegistryLock = push_lock::PushLock;

/// An ASCII name as the UTF-16 units the kernel takes (`UNICODE_STRING` buffers), in a fixed
/// array: usable in a `static` and at run time alike, with no allocation. Units past the name
/// are 0; a name longer than `N` is cut at `N`.
#[expect(
    clippy::indexing_slicing,
    reason = "the loop condition keeps `i` below both lengths; a `const fn` cannot use iterators"
)]
pub const fn ascii_units<const N: usize>(s: &str) -> [u16; N] {
    let bytes = s.as_bytes();
    let mut out = [0u16; N];
    let mut i = 0;
    while i < N && i < bytes.len() {
        out[i] = bytes[i] as u16;
        i += 1;
    }
    out
}
