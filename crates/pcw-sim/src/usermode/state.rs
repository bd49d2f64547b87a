// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulator's one lock over Perflib's state: providers, countersets and live instances by
//! handle, and the thread's last error.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use windows_sys::Win32::Foundation::{ERROR_INVALID_PARAMETER, ERROR_NOT_FOUND, HANDLE};
use windows_sys::Win32::System::Performance::{
    PERF_ATTRIB_BY_REFERENCE, PERF_COUNTERSET_INSTANCE, PERFLIBREQUEST,
};
use windows_sys::core::GUID;

/// `InstanceType` values Perflib accepts (`PERF_COUNTERSET_SINGLE_INSTANCE` … the
/// `_INSTANCE_AGGREGATE` and history forms).
pub(super) const INSTANCE_TYPES: [u32; 6] = [0, 2, 4, 6, 0xC, 0x16];
/// Longest instance name, in UTF-16 units, without the terminator.
pub const MAX_INSTANCE_NAME: usize = 1023;

/// One counter as `PerfSetCounterSetInfo` registered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterDef {
    /// `CounterId`.
    pub id: u32,
    /// `Type` (the V1 counter type).
    pub counter_type: u32,
    /// `Attrib`.
    pub attrib: u64,
    /// `Size`: 4 or 8.
    pub size: u32,
}

impl CounterDef {
    pub(super) fn by_reference(&self) -> bool {
        self.attrib & PERF_ATTRIB_BY_REFERENCE != 0
    }
}

#[derive(Debug)]
pub(super) struct Set {
    pub(super) provider: usize,
    pub(super) instance_type: u32,
    pub(super) counters: Vec<CounterDef>,
}

#[derive(Debug)]
pub(super) struct Live {
    /// Creation order: consumers see instances in the order they were created.
    pub(super) seq: u64,
    pub(super) provider: usize,
    pub(super) set: u128,
    pub(super) name: String,
    pub(super) id: u32,
    pub(super) values: Vec<u64>,
    /// The address a reference counter reads from (0: none yet).
    pub(super) refs: Vec<usize>,
}

#[derive(Debug)]
pub(super) struct Provider {
    pub(super) guid: u128,
    pub(super) callback: PERFLIBREQUEST,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) next_handle: usize,
    pub(super) next_seq: u64,
    pub(super) providers: BTreeMap<usize, Provider>,
    pub(super) sets: BTreeMap<u128, Set>,
    /// Keyed by the address of the `PERF_COUNTERSET_INSTANCE` handed out.
    pub(super) instances: BTreeMap<usize, Live>,
}

static STATE: Mutex<State> = Mutex::new(State {
    next_handle: 0x5000,
    next_seq: 0,
    providers: BTreeMap::new(),
    sets: BTreeMap::new(),
    instances: BTreeMap::new(),
});

pub(super) fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

std::thread_local! {
    static LAST_ERROR: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// `GetLastError`: the calling thread's last error, as the simulated functions set it.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn GetLastError() -> u32 {
    LAST_ERROR.with(std::cell::Cell::get)
}

/// `SetLastError`.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn SetLastError(code: u32) {
    LAST_ERROR.with(|e| e.set(code));
}

pub(super) fn guid_u128(g: &GUID) -> u128 {
    (u128::from(g.data1) << 96)
        | (u128::from(g.data2) << 80)
        | (u128::from(g.data3) << 64)
        | u128::from(u64::from_be_bytes(g.data4))
}

impl State {
    /// The live instance `block` of `provider`, the definition of its counter `counter`, and
    /// the counter's index in its set; `ERROR_INVALID_PARAMETER` for a block that is not the
    /// provider's live instance, `ERROR_NOT_FOUND` for a counter its set does not have.
    pub(super) fn counter_of(
        &mut self,
        provider: HANDLE,
        block: *mut PERF_COUNTERSET_INSTANCE,
        counter: u32,
    ) -> Result<(&mut Live, CounterDef, usize), u32> {
        let live = self
            .instances
            .get_mut(&(block as usize))
            .filter(|i| i.provider == handle_key(provider))
            .ok_or(ERROR_INVALID_PARAMETER)?;
        let set = self.sets.get(&live.set).ok_or(ERROR_INVALID_PARAMETER)?;
        let index = set
            .counters
            .iter()
            .position(|c| c.id == counter)
            .ok_or(ERROR_NOT_FOUND)?;
        Ok((live, set.counters[index], index))
    }
}

pub(super) fn handle_key(h: HANDLE) -> usize {
    h as usize
}
