// SPDX-License-Identifier: MIT OR Apache-2.0
//! The value setters: set, increment, decrement, and a reference counter's address.

use std::ffi::c_void;

use windows_sys::Win32::Foundation::{ERROR_INVALID_PARAMETER, ERROR_SUCCESS, HANDLE};
use windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE;

use super::state::state;

/// How a value setter changes the value.
#[derive(Clone, Copy)]
enum Op {
    Set,
    Add,
    Sub,
}

fn update(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    size: u32,
    op: Op,
    value: u64,
) -> u32 {
    let mut s = state();
    let (live, def, index) = match s.counter_of(provider, block, counter) {
        Ok(found) => found,
        Err(code) => return code,
    };
    if def.size != size || def.by_reference() {
        return ERROR_INVALID_PARAMETER;
    }
    let mask = if size == 4 {
        u64::from(u32::MAX)
    } else {
        u64::MAX
    };
    let slot = &mut live.values[index];
    *slot = match op {
        Op::Set => value,
        Op::Add => slot.wrapping_add(value),
        Op::Sub => slot.wrapping_sub(value),
    } & mask;
    ERROR_SUCCESS
}

/// `PerfSetULongCounterValue`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfSetULongCounterValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    value: u32,
) -> u32 {
    update(provider, block, counter, 4, Op::Set, u64::from(value))
}

/// `PerfSetULongLongCounterValue`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfSetULongLongCounterValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    value: u64,
) -> u32 {
    update(provider, block, counter, 8, Op::Set, value)
}

/// `PerfIncrementULongCounterValue`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfIncrementULongCounterValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    value: u32,
) -> u32 {
    update(provider, block, counter, 4, Op::Add, u64::from(value))
}

/// `PerfIncrementULongLongCounterValue`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfIncrementULongLongCounterValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    value: u64,
) -> u32 {
    update(provider, block, counter, 8, Op::Add, value)
}

/// `PerfDecrementULongCounterValue`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfDecrementULongCounterValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    value: u32,
) -> u32 {
    update(provider, block, counter, 4, Op::Sub, u64::from(value))
}

/// `PerfDecrementULongLongCounterValue`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfDecrementULongLongCounterValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    value: u64,
) -> u32 {
    update(provider, block, counter, 8, Op::Sub, value)
}

/// `PerfSetCounterRefValue`: the counter is read from `address` at every collection until the
/// instance is deleted.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfSetCounterRefValue(
    provider: HANDLE,
    block: *mut PERF_COUNTERSET_INSTANCE,
    counter: u32,
    address: *const c_void,
) -> u32 {
    let mut s = state();
    let (live, def, index) = match s.counter_of(provider, block, counter) {
        Ok(found) => found,
        Err(code) => return code,
    };
    if address.is_null() || !def.by_reference() {
        return ERROR_INVALID_PARAMETER;
    }
    live.refs[index] = address as usize;
    ERROR_SUCCESS
}
