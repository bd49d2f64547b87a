// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `CollectPerformanceData` reference page sends every error but an insufficient buffer to
//! the Application event log: `ReportEventW` under the event source `pcw_perfdll`, the event's
//! fixed message as the one insertion string and its code as 4 bytes of raw data.

use windows_sys::Win32::System::EventLog::{
    DeregisterEventSource, EVENTLOG_ERROR_TYPE, RegisterEventSourceW, ReportEventW,
};

use crate::nopanic::Wide;

/// The event source name.
pub const SOURCE: &str = "pcw_perfdll";

/// Reports an event: its id (`dwEventID`), fixed message and code; failures to log are
/// ignored (there is nowhere else to report them).
pub fn report(id: u32, message: &str, code: u32) {
    // Fixed buffers on the stack: this runs while collecting (no allocation, no panic path).
    let (Some(source), Some(message)) = (Wide::<16>::of(SOURCE), Wide::<128>::of(message)) else {
        return;
    };
    // SAFETY: NULL means the local computer; `source` is NUL-terminated and outlives the call.
    let handle = unsafe { RegisterEventSourceW(core::ptr::null(), source.as_ptr()) };
    if handle.is_null() {
        return;
    }
    let strings = [message.as_ptr()];
    let data = code.to_le_bytes();
    // SAFETY: `handle` is a live event source; `strings` holds one NUL-terminated string and
    // `data` 4 readable bytes, all alive across the call; a NULL SID is allowed.
    unsafe {
        ReportEventW(
            handle,
            EVENTLOG_ERROR_TYPE,
            0,
            id,
            core::ptr::null_mut(),
            1,
            4,
            strings.as_ptr(),
            data.as_ptr().cast(),
        )
    };
    // SAFETY: `handle` came from RegisterEventSourceW and is released once.
    unsafe { DeregisterEventSource(handle) };
}
