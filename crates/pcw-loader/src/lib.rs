// SPDX-License-Identifier: MIT OR Apache-2.0
//! Runs a cross-built Windows kernel driver image (`pcw_driver.sys`) in a Linux process, so that
//! the bytes that ship are exercised on every CI run, not only a host rebuild of their source.
//!
//! * [`image`]: maps a PE32+ image with the `object` crate — sections with their protections,
//!   base relocations, imports bound by name — and refuses malformed images with an error that
//!   names the problem.
//! * [`ntos`]: the `ntoskrnl.exe` routines the driver imports, as `extern "win64"` shims over
//!   pcw-sim (PCW, clock, events) and the loader's own pool, push locks and I/O manager, each
//!   checking its documented contract; fault injection at any fallible call.
//! * [`driver`]: `DriverEntry`, IRPs (`METHOD_BUFFERED` device controls) and `DriverUnload`
//!   through the image's own routines, with the I/O manager's copy-back rules.
//! * [`layout`]: the WDK's x64 offsets of every structure the loader builds or reads, written
//!   independently of windows-sys and of the driver's declarations.
//! * [`security`]: the device DACL the driver sets, decoded and compared with its SDDL.
//! * [`routines_doc`]: `docs/loader-routines.md`, generated from the routine and instruction
//!   tables.
//! * [`isolate`]: scenarios in child processes, so a fault in the image is a failed test naming
//!   the signal, not a dead test runner.
//!
//! x86-64 only: the image's code runs natively, called through `extern "win64"` pointers.
#![cfg(all(target_arch = "x86_64", unix))]

pub mod driver;
pub mod image;
pub mod isolate;
pub mod layout;
pub mod ntos;
pub mod routines_doc;
pub mod security;

pub use driver::{IoResult, LoadedDriver};
pub use image::{LoadError, MappedImage};
