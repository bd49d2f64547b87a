// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel a loaded image runs against: every `ntoskrnl.exe` and `hal.dll` routine the loader
//! implements, as an `extern "win64"` function (the image's calling convention), backed by
//! pcw-sim's simulated PCW and clock and by the loader's own I/O manager, pool, locks and debug
//! log.
//!
//! Each routine checks its documented contract — the IRQL it may be called at among it — and
//! records what a checked kernel (Driver Verifier) would flag as a [`Violation`] instead of
//! crashing: pool freed twice or with another tag, a push lock taken outside a critical region,
//! a spin lock released by a thread that does not hold it, an IRP completed twice, a symbolic
//! link to a device that does not exist. [`leaks`] lists what is still allocated, registered or
//! created. Any fallible routine can be made to fail at its n-th call ([`fail_at`]).
//!
//! [`ROUTINES`] is the one list of them: name, the modules that export it, the highest IRQL
//! it may be called at, whether it can fail, the contract its shim checks, and the shim. The
//! loader binds imports from it, `MmGetSystemRoutineAddress` answers from it, and
//! `docs/loader-routines.md` is generated from it.
//!
//! One file per concept. The routine modules import only `state` (the shared state),
//! `irql` (each thread's IRQL) and the helpers `memory` (pointer reads) and `format` (printf);
//! `table` imports the routine modules and nothing but this file imports `table`, so there is
//! no cycle between them.

mod clock;
pub(crate) mod cpu;
mod debug_print;
mod format;
mod io;
pub(crate) mod irql;
mod memory;
mod pcw;
mod pool;
pub(crate) mod processor;
mod push_lock;
mod refused;
mod runtime;
mod state;
mod strings;
pub(crate) mod sync;
mod table;
pub(crate) mod watch;

pub use clock::TIME_INCREMENT;
pub use cpu::{FORMS, Form, WHY, emulated};
pub use debug_print::debug_log;
pub use format::CONVENTIONS as PRINTF_CONVENTIONS;
pub use io::{DeviceInfo, objects};
pub(crate) use io::{irp_issued, irp_retired};
pub use irql::{APC_LEVEL, DISPATCH_LEVEL, HIGH_LEVEL, PASSIVE_LEVEL};
pub use pcw::{CollectRequest, callback_contexts, callbacks};
pub use processor::PROCESSORS;
pub use refused::REFUSED;
pub(crate) use state::{Block, violation};
pub use state::{
    DACL_SECURITY_INFORMATION, DebugLine, Leaks, NtStatus, STATUS_INSUFFICIENT_RESOURCES,
    STATUS_INVALID_PARAMETER, STATUS_OBJECT_NAME_COLLISION, STATUS_OBJECT_NAME_NOT_FOUND,
    STATUS_SUCCESS, STOP_EXIT_CODE, State, Violation, calls, count_add_instance_only,
    counted_add_instances, fail_at, failed, fallible_calls, leaks, violations,
};
pub use table::{ROUTINES, Routine, Shim};
pub use watch::{DEFAULT_TIMEOUT, TIMEOUT_ENV, timeout};

/// The routines' limits, for [`state::enter`].
fn install_limits() {
    state::install_limits(|| {
        ROUTINES
            .iter()
            .map(|r| {
                (
                    r.name,
                    state::Limits {
                        max_irql: r.max_irql,
                        fallible: r.fallible,
                    },
                )
            })
            .collect()
    });
}

/// The calling thread's IRQL, as the image sees it (`KeGetCurrentIrql`, CR8).
pub fn current_irql() -> u8 {
    irql::current()
}

/// Resets the kernel's state for a new image (keeping nothing of the last one).
pub(crate) fn reset(driver_object: usize) {
    install_limits();
    cpu::reset_counts();
    state::reset(driver_object);
}

/// The routine `name` as an image may import it from `dll` (lower case).
pub fn routine_for(dll: &str, name: &str) -> Option<&'static Routine> {
    ROUTINES
        .iter()
        .find(|r| r.name == name && r.modules.contains(&dll))
}

/// The address of the shim for `dll!name` (`dll` in lower case), or `None` if the loader does
/// not implement it.
pub fn resolve(dll: &str, name: &str) -> Option<usize> {
    install_limits();
    routine_for(dll, name).map(Routine::address)
}

/// `dll!name` as the load error shows it: with the reason when the loader deliberately lacks
/// the routine.
pub fn describe_unsupported(import: &str) -> String {
    let name = import.rsplit('!').next().unwrap_or(import);
    match REFUSED.iter().find(|(n, _)| *n == name) {
        Some((_, why)) => format!("{import} ({why})"),
        None => import.to_owned(),
    }
}

/// The routines the loader implements, as `module!name` (one entry per module exporting it).
pub fn shimmed() -> Vec<String> {
    ROUTINES
        .iter()
        .flat_map(|r| r.modules.iter().map(move |m| format!("{m}!{}", r.name)))
        .collect()
}
