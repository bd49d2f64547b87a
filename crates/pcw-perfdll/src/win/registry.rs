// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `OpenPerformanceData` reference page has the DLL read `First Counter` and `First Help` from
//! its service's `Performance` key — `HKLM\SYSTEM\CurrentControlSet\Services\<svc>\Performance`,
//! read with `RegGetValueW` (`RRF_RT_REG_DWORD`).

use windows_sys::Win32::Foundation::ERROR_SUCCESS;
use windows_sys::Win32::System::Registry::{HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RegGetValueW};

use crate::nopanic::Wide;

/// One `REG_DWORD` under the service's `Performance` key; `None` when absent or unreadable.
fn dword(service: &str, value: &str) -> Option<u32> {
    // Built on the stack, not with `format!`: this runs at Collect while the indexes are
    // unknown (no allocation, no panic path there). Service names are at most 256 characters.
    let mut key = Wide::<320>::new();
    if !(key.push(r"SYSTEM\CurrentControlSet\Services\")
        && key.push(service)
        && key.push(r"\Performance"))
    {
        return None;
    }
    let name = Wide::<32>::of(value)?;
    let mut data: u32 = 0;
    let mut size: u32 = 4;
    // SAFETY: `key` and `name` are NUL-terminated and live across the call; `data` is 4
    // writable bytes, as `size` says; the type pointer may be NULL.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            name.as_ptr(),
            RRF_RT_REG_DWORD,
            core::ptr::null_mut(),
            (&raw mut data).cast(),
            &raw mut size,
        )
    };
    (status == ERROR_SUCCESS).then_some(data)
}

/// `First Counter` and `First Help` of `service`, when lodctr has written both.
pub fn first_indexes(service: &str) -> Option<(u32, u32)> {
    Some((
        dword(service, "First Counter")?,
        dword(service, "First Help")?,
    ))
}
