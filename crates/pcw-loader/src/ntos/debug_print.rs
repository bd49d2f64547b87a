// SPDX-License-Identifier: MIT OR Apache-2.0
//! Debug output: `DbgPrint`, `DbgPrintEx`, `vDbgPrintEx` and `vDbgPrintExWithPrefix`, formatted
//! by [`super::format`] into the harness's debug log ([`debug_log`]) instead of a kernel
//! debugger. As on Windows, one call prints at most 512 bytes, and the Unicode conversions
//! (`%C`, `%S`, `%lc`, `%ls`, `%wc`, `%ws`, `%wZ`) are allowed only at `PASSIVE_LEVEL`.

use super::format::{Chars, c_string, format, variadic};
use super::irql::{self, PASSIVE_LEVEL};
use super::memory::peek;
use super::state::{DebugLine, NtStatus, STATUS_SUCCESS, enter, violation, with};

/// `DPFLTR_DEFAULT_ID`: the component `DbgPrint` prints as.
const DPFLTR_DEFAULT_ID: u32 = 101;
/// `DPFLTR_INFO_LEVEL`: the level `DbgPrint` prints at.
const DPFLTR_INFO_LEVEL: u32 = 3;
/// The most one call prints.
const MAX_BYTES: usize = 512;

/// What the image printed since it was loaded, in order.
pub fn debug_log() -> Vec<DebugLine> {
    with(|s| s.debug_log.clone())
}

/// Formats and logs one print.
///
/// # Safety
/// `format` and `slots` as printf's contract.
unsafe fn print(
    routine: &'static str,
    component: u32,
    level: u32,
    prefix: *const u8,
    format_string: *const u8,
    slots: *const u64,
) -> NtStatus {
    enter(routine);
    // SAFETY: printf's contract, passed on.
    let f = unsafe { format(routine, Chars::Narrow, format_string, slots) };
    if f.unicode && irql::current() > PASSIVE_LEVEL {
        violation(
            routine,
            format!(
                "a Unicode conversion at {} (allowed only at PASSIVE_LEVEL)",
                irql::name(irql::current())
            ),
        );
    }
    let mut text = String::new();
    if !prefix.is_null() {
        // SAFETY: a NUL-terminated prefix (the DDI's contract).
        text.push_str(&unsafe { c_string(routine, prefix as u64, false, None) });
    }
    text.push_str(&f.text);
    let mut cut = MAX_BYTES.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    with(|s| {
        s.debug_log.push(DebugLine {
            component,
            level,
            text,
        });
    });
    STATUS_SUCCESS
}

/// `DbgPrint(format, ...)` over its slots.
unsafe extern "win64" fn dbg_print_slots(slots: *const u64) -> i32 {
    // SAFETY: the slots of a variadic call: the format, then its arguments.
    let format_string = unsafe { peek(slots, 0) } as *const u8;
    // SAFETY: as above.
    unsafe {
        print(
            "DbgPrint",
            DPFLTR_DEFAULT_ID,
            DPFLTR_INFO_LEVEL,
            core::ptr::null(),
            format_string,
            slots.wrapping_add(1),
        )
    }
}

/// `DbgPrintEx(component, level, format, ...)` over its slots.
unsafe extern "win64" fn dbg_print_ex_slots(slots: *const u64) -> i32 {
    // SAFETY: the slots of a variadic call: component, level, format, then the arguments.
    let [component, level, format_string] = [0, 1, 2].map(|i| unsafe { peek(slots, i) });
    // SAFETY: as above.
    unsafe {
        print(
            "DbgPrintEx",
            (component & 0xFFFF_FFFF) as u32,
            (level & 0xFFFF_FFFF) as u32,
            core::ptr::null(),
            format_string as *const u8,
            slots.wrapping_add(3),
        )
    }
}

variadic!(
    /// `DbgPrint`.
    dbg_print => dbg_print_slots
);
variadic!(
    /// `DbgPrintEx`.
    dbg_print_ex => dbg_print_ex_slots
);

pub(super) unsafe extern "win64" fn v_dbg_print_ex(
    component: u32,
    level: u32,
    format_string: *const u8,
    args: *const u64,
) -> NtStatus {
    // SAFETY: the DDI's contract: a format and its `va_list`.
    unsafe {
        print(
            "vDbgPrintEx",
            component,
            level,
            core::ptr::null(),
            format_string,
            args,
        )
    }
}

pub(super) unsafe extern "win64" fn v_dbg_print_ex_with_prefix(
    prefix: *const u8,
    component: u32,
    level: u32,
    format_string: *const u8,
    args: *const u64,
) -> NtStatus {
    // SAFETY: the DDI's contract: a prefix, a format and its `va_list`.
    unsafe {
        print(
            "vDbgPrintExWithPrefix",
            component,
            level,
            prefix,
            format_string,
            args,
        )
    }
}
