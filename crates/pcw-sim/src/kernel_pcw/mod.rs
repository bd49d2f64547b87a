// SPDX-License-Identifier: MIT OR Apache-2.0
//! Kernel PCW simulated: `#[no_mangle] extern "system"` implementations of `PcwRegister`,
//! `PcwUnregister`, `PcwAddInstance`, `PcwCreateInstance` and `PcwCloseInstance` (wdm.h,
//! `docs/pcw-semantics.md`; Microsoft: the `PCW_CALLBACK` and Pcw* reference pages) with their
//! documented checks, and the consumer side that calls a
//! provider's `PCW_CALLBACK` the way PCW does.
//!
//! A driver built for the host declares these functions through windows-sys' `Wdk` bindings; in
//! a test binary that links this crate the symbols resolve here, so the provider code under test
//! is exactly the code PCW would call. What is simulated:
//!
//! * `PcwRegister`: `STATUS_INVALID_PARAMETER_2` for a missing, empty or odd-length name, a
//!   version the simulated OS build does not know (`PCW_VERSION_2` needs build 19645 or later),
//!   unknown flags, or a descriptor list that does not match `CounterCount`.
//! * `PcwAddInstance`: `STATUS_INVALID_BUFFER_SIZE` when a data block is missing or shorter than
//!   a descriptor's `Offset + Size`; values are copied at call time.
//! * `PcwCreateInstance`/`PcwCloseInstance`: the provider's blocks are read at collection time,
//!   under the same lock `PcwCloseInstance` takes, so once close returns no read is in flight.
//! * `PcwUnregister`: no callback of the registration starts once it is called, and it waits
//!   for the running ones to return (providers free what their callbacks read right after).
//! * faults: any call can be made to fail at its n-th use (see [`Kernel::fail`]).
//! * what real PCW would bugcheck on (a NULL or stale handle to `PcwUnregister`, closing an
//!   instance twice) is recorded as a [`Bugcheck`] instead, and [`Kernel::teardown`] reports
//!   registrations and instances still open.
//! * boots: no two kernels of a process hand out the same handle, and the handles of a kernel
//!   dropped without its teardown (its test panicked) are ignored when a driver's statics
//!   release them under a later kernel (see [`Kernel`]).
//!
//! One concept a file:
//!
//! * [`ddi`]: the `Pcw*` DDIs a provider calls (and `KeReadStateEvent`), with their argument
//!   checks, and the `PPCW_BUFFER` a callback adds instances to;
//! * [`clock`]: the simulated clock (manual or real) behind `KeQueryPerformanceCounter` and
//!   `KeQuerySystemTimePrecise`;
//! * [`providers`]: what the kernel tracks about providers — registrations, created instances,
//!   injected faults, bugchecks and misuse — and whether provider code is running on a thread;
//! * [`consumer`]: [`Kernel`], the session a test or `pcw typeperf` holds, which calls the
//!   providers' callbacks to enumerate, collect and notify, and reports at teardown.

pub mod clock;
pub mod consumer;
pub mod ddi;
pub mod providers;

pub use clock::{
    BOOT_SYSTEM_TIME, Clock, KeQueryPerformanceCounter, KeQuerySystemTimePrecise, PERF_FREQUENCY,
};
pub use consumer::{Collection, Instance, Kernel, Request, SimError, Teardown};
pub use ddi::{
    KeReadStateEvent, PcwAddInstance, PcwCloseInstance, PcwCreateInstance, PcwRegister,
    PcwUnregister,
};
pub use providers::{Bugcheck, Descriptor, Misuse, PcwCall, as_provider, in_provider_code};

/// First Windows build whose `PcwRegister` accepts `PCW_VERSION_2` (10.0.19645).
pub const FIRST_V2_BUILD: u32 = 19645;
/// A build that knows `PCW_VERSION_2` (Windows Server 2022).
pub const BUILD_SERVER_2022: u32 = 20348;
/// A build that only knows `PCW_VERSION_1` (Windows 10 1809 / Server 2019).
pub const BUILD_SERVER_2019: u32 = 17763;
pub use pcw_core::filter::PCW_ANY_INSTANCE_ID;
