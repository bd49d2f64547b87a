// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-harness: a driver's performance counters, tested by its own `cargo test` on Linux.
//!
//! The pieces, each usable alone:
//!
//! * **The simulated kernel** ([`Kernel`], pcw-sim's): a test boots one, registers counters
//!   with it — a publisher alone through the generated `register_publisher`, or a whole
//!   driver — and collects or enumerates them with any `InstanceId`/`InstanceMask`/
//!   `CounterMask` ([`Request`]), as PCW calls a provider's callback;
//!   [`requests::answers`] sends a counterset the requests PDH sends (each instance by id, by
//!   name in another case, by `*` and `?` wildcards) and names the first one answered wrong.
//!   One kernel at a time per process: [`Kernel::boot`] waits for the previous test's to be
//!   torn down. [`finish`] tears it down and fails, naming it, on a counterset still
//!   registered, an instance still open, anything real PCW would have bugchecked on, or a
//!   contract PCW tolerates broken (two instances of one name or one id, a data block shorter
//!   than the counters registered).
//!
//!   Tests of one binary share the driver's statics, as its host build is linked once. A test
//!   that panics before its unload leaves its registrations there; the next test's
//!   `DriverEntry` (or `register`) replaces and so unregisters them. That touches nothing of
//!   the next test's kernel: no two kernels of a process hand out the same handle, and the
//!   handles of a kernel dropped without its teardown (the panicking test's) are ignored by
//!   later kernels; nor do a torn-down kernel's handles its teardown reported leaked (a
//!   driver that does not unregister at unload fails its own test, not the next one). So a
//!   failing test fails alone, whatever runs beside or after it. Any other handle of a kernel
//!   that *was* torn down is stale for good: releasing it again is a bugcheck.
//! * **Drivers** ([`Driver`], x86-64 Linux): the driver's host build (its `DriverEntry`
//!   compiled for the host, its kernel calls reaching the loader's routines through the
//!   `extern "system"` entry points of [`host`]) or its cross-built `.sys` (mapped and bound by
//!   pcw-loader). [`Driver::start`] runs `DriverEntry`; [`Loaded`] sends create, close and
//!   device-control requests to its device as the I/O manager does; [`Loaded::unload`] runs
//!   `DriverUnload` and fails on anything left behind or any kernel rule broken, naming it.
//!   [`fault_sweep`] fails each fallible kernel call `DriverEntry` makes in turn and checks
//!   each failure is rolled back. [`scenario`] runs a test on the host build and, in a child
//!   process (a fault in an image kills only the child), on the image an environment variable
//!   names.
//! * **Consumers** ([`Counters`]): the driver's manifest read as PDH reads counters — typeperf
//!   paths with wildcards, cooked and raw values over samples on the kernel's manual clock,
//!   `-q`/`-qx` listings — and, for a driver that ships a V1 perf DLL, its
//!   `CollectPerformanceData` called through a simulated Perflib ([`v1`]).
//!
//! A publisher alone, with a hand-written counterset (what pcw-gen generates from a manifest
//! looks the same: a `Set` marker, its values, and `register_publisher`):
//!
//! ```
//! use pcw_harness::{BUILD_SERVER_2022, Kernel, Request, finish};
//!
//! let kernel = Kernel::boot(BUILD_SERVER_2022);
//! // In a driver's test: `let registration = my_set::register_publisher(&PUBLISHER)?;`
//! assert!(kernel.countersets().is_empty());
//! assert!(kernel.collect("No Such Set", &Request::default()).is_err());
//! finish(kernel)?;
//! # Ok::<(), pcw_harness::Unclean>(())
//! ```
//!
//! `docs/testing-your-driver.md` in the pcw-rs repository walks through a driver's tests,
//! and says what only a Windows machine proves.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

pub mod counters;
#[cfg(all(target_arch = "x86_64", unix))]
pub mod driver;
#[cfg(all(target_arch = "x86_64", unix))]
pub mod faults;
#[cfg(all(target_arch = "x86_64", unix))]
pub mod host;
#[cfg(all(target_arch = "x86_64", unix))]
pub mod isolate;
pub mod requests;
pub mod unclean;
pub mod v1;

pub use counters::{Counters, Samples};
#[cfg(all(target_arch = "x86_64", unix))]
pub use driver::{Driver, Error, IoResult, Loaded};
#[cfg(all(target_arch = "x86_64", unix))]
pub use faults::{Fault, FaultFailure, fault_sweep};
#[cfg(all(target_arch = "x86_64", unix))]
pub use isolate::scenario;
pub use pcw_sim::kernel_pcw::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Clock, Collection, Descriptor, Instance, Kernel,
    PCW_ANY_INSTANCE_ID, PcwCall, Request,
};
pub use unclean::{Unclean, finish};
