// SPDX-License-Identifier: MIT OR Apache-2.0
//! Processors: the loader presents [`PROCESSORS`] active processors in one group, and each host
//! thread runs on the one its host CPU maps to, so per-processor arrays sized from
//! `KeQueryMaximumProcessorCountEx` are indexed in range by `KeGetCurrentProcessorNumberEx` and by
//! the headers' inline `KeGetCurrentProcessorNumber` (a `gs:` read, through [`super::cpu`]).

use super::state::{enter, violation};

/// Active (and maximum) processors, in group 0.
pub const PROCESSORS: u32 = 4;
/// `ALL_PROCESSOR_GROUPS`.
const ALL_PROCESSOR_GROUPS: u16 = 0xFFFF;

/// The processor the calling thread runs on, `0..PROCESSORS`.
pub(crate) fn current() -> u32 {
    // SAFETY: no arguments; returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).unwrap_or(0) % PROCESSORS
}

/// The count for `group`: all of them in group 0 (or all groups), none elsewhere.
fn in_group(routine: &'static str, group: u16) -> u32 {
    match group {
        0 | ALL_PROCESSOR_GROUPS => PROCESSORS,
        other => {
            violation(routine, format!("group {other} does not exist (one group)"));
            0
        }
    }
}

pub(super) unsafe extern "win64" fn ke_query_active_processor_count(affinity: *mut u64) -> u32 {
    enter("KeQueryActiveProcessorCount");
    if !affinity.is_null() {
        // SAFETY: the image's writable KAFFINITY (the DDI's contract).
        unsafe { affinity.write_unaligned((1u64 << PROCESSORS) - 1) };
    }
    PROCESSORS
}

pub(super) unsafe extern "win64" fn ke_query_active_processor_count_ex(group: u16) -> u32 {
    enter("KeQueryActiveProcessorCountEx");
    in_group("KeQueryActiveProcessorCountEx", group)
}

pub(super) unsafe extern "win64" fn ke_query_maximum_processor_count() -> u32 {
    enter("KeQueryMaximumProcessorCount");
    PROCESSORS
}

pub(super) unsafe extern "win64" fn ke_query_maximum_processor_count_ex(group: u16) -> u32 {
    enter("KeQueryMaximumProcessorCountEx");
    in_group("KeQueryMaximumProcessorCountEx", group)
}

pub(super) unsafe extern "win64" fn ke_get_current_processor_number_ex(number: *mut u8) -> u32 {
    enter("KeGetCurrentProcessorNumberEx");
    let n = current();
    if !number.is_null() {
        // PROCESSOR_NUMBER: Group (u16), Number (u8), Reserved (u8).
        let bytes = [0, 0, u8::try_from(n).unwrap_or(0), 0];
        // SAFETY: the image's writable PROCESSOR_NUMBER (the DDI's contract).
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), number, 4) };
    }
    n
}
