// SPDX-License-Identifier: MIT OR Apache-2.0
//! What compilers and checked builds reach for: MSVC's `__C_specific_handler` (imported by any
//! function with `__try`), `RtlAssert` (the `ASSERT` of a checked build), `DbgBreakPoint` and
//! `KeBugCheckEx`; and `KeSaveFloatingPointState`/`KeRestoreFloatingPointState`, which on x64
//! have nothing to save (the host thread's floating-point state is its own) but must pair.
//!
//! The loader dispatches no exceptions: `__try` blocks run, but an exception inside one is not
//! delivered to its `__except` filter (a fault in the image stops the process, naming it), so
//! `__C_specific_handler` is bound and never called; if it is, that is reported.

use std::cell::Cell;

use super::state::{NtStatus, STATUS_SUCCESS, enter, stop, violation};

/// `ExceptionContinueSearch`.
const EXCEPTION_CONTINUE_SEARCH: i32 = 1;

pub(super) unsafe extern "win64" fn c_specific_handler(
    _record: *mut u8,
    _frame: *mut u8,
    _context: *mut u8,
    _dispatcher: *mut u8,
) -> i32 {
    enter("__C_specific_handler");
    violation(
        "__C_specific_handler",
        "called to dispatch an exception, which the loader does not do",
    );
    EXCEPTION_CONTINUE_SEARCH
}

pub(super) unsafe extern "win64" fn rtl_assert(
    assertion: *const u8,
    file: *const u8,
    line: u32,
    message: *const u8,
) {
    enter("RtlAssert");
    let text = |p: *const u8| {
        // SAFETY: NULL or a NUL-terminated string (the DDI's contract).
        unsafe { super::format::c_string("RtlAssert", p as u64, false, None) }
    };
    let mut what = format!(
        "assertion `{}` failed at {}:{line}",
        text(assertion),
        text(file)
    );
    if !message.is_null() {
        what.push_str(": ");
        what.push_str(&text(message));
    }
    violation("RtlAssert", what);
}

pub(super) unsafe extern "win64" fn dbg_break_point() {
    enter("DbgBreakPoint");
    violation(
        "DbgBreakPoint",
        "a breakpoint with no kernel debugger attached (Windows bugchecks)",
    );
}

pub(super) unsafe extern "win64" fn ke_bug_check_ex(
    code: u32,
    p1: usize,
    p2: usize,
    p3: usize,
    p4: usize,
) -> ! {
    enter("KeBugCheckEx");
    stop(&format!(
        "the image called KeBugCheckEx({code:#X}, {p1:#x}, {p2:#x}, {p3:#x}, {p4:#x})"
    ))
}

std::thread_local! {
    /// `KeSaveFloatingPointState` calls not yet restored on this thread.
    static FLOAT_SAVES: Cell<u32> = const { Cell::new(0) };
}

pub(super) unsafe extern "win64" fn ke_save_floating_point_state(save: *mut u8) -> NtStatus {
    enter("KeSaveFloatingPointState");
    if save.is_null() {
        violation("KeSaveFloatingPointState", "NULL KFLOATING_SAVE");
    }
    FLOAT_SAVES.with(|c| c.set(c.get() + 1));
    STATUS_SUCCESS
}

pub(super) unsafe extern "win64" fn ke_restore_floating_point_state(save: *mut u8) -> NtStatus {
    enter("KeRestoreFloatingPointState");
    if save.is_null() {
        violation("KeRestoreFloatingPointState", "NULL KFLOATING_SAVE");
    }
    if FLOAT_SAVES.with(Cell::get) == 0 {
        violation(
            "KeRestoreFloatingPointState",
            "a restore without a save on this thread",
        );
    } else {
        FLOAT_SAVES.with(|c| c.set(c.get() - 1));
    }
    STATUS_SUCCESS
}
