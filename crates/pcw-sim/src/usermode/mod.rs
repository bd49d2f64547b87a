// SPDX-License-Identifier: MIT OR Apache-2.0
//! Perflib's user-mode V2 provider side, simulated: `#[no_mangle] extern "system"`
//! implementations of `PerfStartProviderEx`, `PerfSetCounterSetInfo`, `PerfCreateInstance`,
//! `PerfDeleteInstance`, `PerfSetULongCounterValue`, `PerfSetULongLongCounterValue`, the
//! increment and decrement functions, `PerfSetCounterRefValue` and `PerfStopProvider` (perflib.h),
//! plus `GetLastError`/`SetLastError`, and a consumer ([`collect`], [`notify`]) that reads what
//! the provider published the way Perflib's collection does.
//!
//! A provider built for the host declares these functions through windows-sys'
//! `Win32_System_Performance` bindings; in a binary that links this crate they resolve here.
//! The argument checks, each returning the Win32 error Perflib documents or the closest one:
//!
//! * `PerfStartProviderEx`: NULL GUID, handle or context, or a `ContextSize` smaller than
//!   `PERF_PROVIDER_CONTEXT` → `ERROR_INVALID_PARAMETER`; a provider GUID already started →
//!   `ERROR_ALREADY_EXISTS`.
//! * `PerfSetCounterSetInfo`: an unknown provider handle → `ERROR_INVALID_HANDLE`; a template
//!   smaller than its header plus `NumCounters` `PERF_COUNTER_INFO`s, a `ProviderGuid` other
//!   than the provider's, an unknown `InstanceType`, two counters with one id, or a counter
//!   `Size` other than 4 or 8 → `ERROR_INVALID_PARAMETER`; a counterset GUID already
//!   registered → `ERROR_ALREADY_EXISTS`.
//! * `PerfCreateInstance` (NULL plus the error in `GetLastError`): an unknown provider or
//!   counterset → `ERROR_NOT_FOUND`; a NULL or empty name, or one of 1024 or more characters →
//!   `ERROR_INVALID_PARAMETER`; a second instance of a single-instance set, or an instance with
//!   the name (case-insensitive) or the id of a live one of the set (the documentation asks for
//!   a unique name and a unique id; Wine 8.0 refuses a repeated id too) →
//!   `ERROR_ALREADY_EXISTS`.
//! * the setters: an unknown provider or instance block → `ERROR_INVALID_PARAMETER`; an
//!   unknown counter id → `ERROR_NOT_FOUND`; a `ULong` setter on an 8-byte counter, a
//!   `ULongLong` setter on a 4-byte one, or a value setter on a `reference` counter →
//!   `ERROR_INVALID_PARAMETER`. `PerfSetCounterRefValue` on a counter without
//!   `PERF_ATTRIB_BY_REFERENCE` or with a NULL address → `ERROR_INVALID_PARAMETER`.
//! * `PerfDeleteInstance` of an unknown block → `ERROR_NOT_FOUND`; `PerfStopProvider` of an
//!   unknown handle → `ERROR_INVALID_HANDLE`. Stopping deletes the provider's instances.
//!
//! Reference counters are read through the registered address at collection time, under the
//! simulator's lock, which `PerfDeleteInstance` and `PerfStopProvider` also take: once they
//! return no read is in flight, so a provider may free the memory then.
//!
//! The symbols are exported unmangled only on hosts other than Windows: a Windows binary that
//! links this crate (the Wine consumer) gets the real ones from kernel32 and advapi32, and two
//! definitions of `GetLastError` would not link.
#![cfg_attr(
    windows,
    allow(
        non_snake_case,
        reason = "the Perflib and kernel32 names, exported unmangled only off Windows"
    )
)]

mod consumer;
mod provider;
mod state;
mod values;

pub use consumer::{Instance, SetInfo, collect, counter_sets, live, notify};
pub use provider::{
    PerfCreateInstance, PerfDeleteInstance, PerfSetCounterSetInfo, PerfStartProviderEx,
    PerfStopProvider,
};
pub use state::{CounterDef, GetLastError, MAX_INSTANCE_NAME, SetLastError};
pub use values::{
    PerfDecrementULongCounterValue, PerfDecrementULongLongCounterValue,
    PerfIncrementULongCounterValue, PerfIncrementULongLongCounterValue, PerfSetCounterRefValue,
    PerfSetULongCounterValue, PerfSetULongLongCounterValue,
};

#[cfg(test)]
mod tests;
