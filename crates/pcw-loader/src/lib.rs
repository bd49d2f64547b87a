// SPDX-License-Identifier: MIT OR Apache-2.0
//! Runs a cross-built Windows kernel driver image (`pcw_driver.sys`, or any driver that uses the
//! routines it provides, such as the C example built with mingw-w64) in a Linux process, so that
//! the bytes that ship are exercised on every CI run, not only a host rebuild of their source.
//!
//! * [`image`]: maps a PE32+ image with the `object` crate — sections with their protections,
//!   base relocations (or the preferred base of a relocation-stripped image), imports bound by
//!   name, the `/GS` cookie initialised — and refuses malformed images with an error that names
//!   the problem (every unsupported import at once).
//! * [`ntos`]: the kernel the image runs against — every `ntoskrnl.exe` and `hal.dll` routine
//!   the loader binds (one table, [`ntos::ROUTINES`]: pool, locks, events, strings, printf and
//!   debug output, time, PCW over pcw-sim, the I/O manager), each checking its documented
//!   contract and the IRQL it is called at, with fault injection at any fallible call; and the
//!   privileged instructions the headers inline (CR8, `KUSER_SHARED_DATA`, `gs:`), emulated in
//!   a fault handler.
//! * [`driver`]: `DriverEntry`, IRPs (`METHOD_BUFFERED` device controls) and `DriverUnload`
//!   through the image's own routines, with the I/O manager's copy-back rules.
//! * [`layout`]: the WDK's x64 offsets of every structure the loader builds or reads, written
//!   independently of windows-sys and of the driver's declarations.
//! * [`security`]: the device DACL the driver sets, decoded and compared with its SDDL.
//! * [`routines_doc`]: `docs/loader-routines.md`, generated from the routine and instruction
//!   tables.
//! * [`isolate`]: scenarios in child processes, so a fault in the image is a failed test naming
//!   the instruction the loader stopped at (or the signal), not a dead test runner.
//!
//! A fault the image's code raises (a bad pointer, `ud2`, `int3`, a divide error, a call
//! through a NULL function pointer, an instruction the loader does not emulate), `KeBugCheckEx`,
//! and a call into the image — `DriverEntry`, a dispatch routine, a PCW callback,
//! `DriverUnload` — that has not returned after 30 s stop the process with exit code 86
//! ([`ntos::STOP_EXIT_CODE`]) and one line on standard error, `pcw-loader: stopped: …`, naming
//! what and where in the image. The environment variable `PCW_LOADER_TIMEOUT`
//! ([`ntos::TIMEOUT_ENV`]) sets that limit in seconds (`0.5`, `600`; `0` or `off`: none).
//!
//! x86-64 only: the image's code runs natively, called through `extern "win64"` pointers.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]
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
