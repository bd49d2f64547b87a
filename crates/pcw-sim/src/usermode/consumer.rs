// SPDX-License-Identifier: MIT OR Apache-2.0
//! What a consumer sees: the registered countersets, a collection of one, and the
//! add/remove notifications Perflib sends a provider with a custom callback.

use std::collections::BTreeMap;

use windows_sys::Win32::Foundation::ERROR_SUCCESS;
use windows_sys::Win32::System::Performance::{
    PERF_ADD_COUNTER, PERF_COLLECT_END, PERF_COLLECT_START, PERF_COUNTER_IDENTITY,
    PERF_REMOVE_COUNTER, PERFLIBREQUEST,
};
use windows_sys::core::GUID;

use super::state::{CounterDef, Live, state};

/// One instance as a consumer reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The name given to `PerfCreateInstance`.
    pub name: String,
    /// The id given to `PerfCreateInstance`.
    pub id: u32,
    /// Counter id → raw value (reference counters read through their address; one whose
    /// address was never set reads 0).
    pub values: BTreeMap<u32, u64>,
}

/// A registered counterset, as a consumer enumerates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetInfo {
    /// The counterset GUID (big-endian `u128`, as `GUID::from_u128`).
    pub guid: u128,
    /// The provider GUID.
    pub provider: u128,
    /// `InstanceType`.
    pub instance_type: u32,
    /// The counters, in template order.
    pub counters: Vec<CounterDef>,
}

/// Every registered counterset.
pub fn counter_sets() -> Vec<SetInfo> {
    let s = state();
    s.sets
        .iter()
        .map(|(guid, set)| SetInfo {
            guid: *guid,
            provider: s.providers.get(&set.provider).map_or(0, |p| p.guid),
            instance_type: set.instance_type,
            counters: set.counters.clone(),
        })
        .collect()
}

fn call(callback: PERFLIBREQUEST, code: u32, identity: &mut PERF_COUNTER_IDENTITY) -> u32 {
    let Some(f) = callback else {
        return ERROR_SUCCESS;
    };
    // SAFETY: the provider registered this callback with `PerfStartProviderEx`; the buffer is a
    // live `PERF_COUNTER_IDENTITY` of the size passed.
    unsafe {
        f(
            code,
            std::ptr::from_mut(identity).cast(),
            u32::try_from(size_of::<PERF_COUNTER_IDENTITY>()).unwrap_or(0),
        )
    }
}

fn guid_from_u128(v: u128) -> GUID {
    GUID::from_u128(v)
}

fn identity(set: u128, counter: u32) -> PERF_COUNTER_IDENTITY {
    PERF_COUNTER_IDENTITY {
        CounterSetGuid: guid_from_u128(set),
        BufferSize: u32::try_from(size_of::<PERF_COUNTER_IDENTITY>()).unwrap_or(0),
        CounterId: counter,
        InstanceId: u32::MAX,
        MachineOffset: 0,
        NameOffset: 0,
        Reserved: 0,
    }
}

fn callback_of(set: u128) -> Option<PERFLIBREQUEST> {
    let s = state();
    let provider = s.sets.get(&set)?.provider;
    s.providers.get(&provider).map(|p| p.callback)
}

/// What a consumer adding (`add`) or removing a counter makes Perflib send a provider with
/// `callback="custom"`: `PERF_ADD_COUNTER` / `PERF_REMOVE_COUNTER` with the counter's identity.
/// Returns the callback's status (`ERROR_SUCCESS` without a callback), or `None` when the set
/// is not registered.
pub fn notify(set: u128, add: bool, counter: u32) -> Option<u32> {
    let callback = callback_of(set)?;
    let code = if add {
        PERF_ADD_COUNTER
    } else {
        PERF_REMOVE_COUNTER
    };
    Some(call(callback, code, &mut identity(set, counter)))
}

/// One collection of counterset `set`: `PERF_COLLECT_START`, the instances (in creation order)
/// with their values
/// (reference counters read through their addresses, under the lock `PerfDeleteInstance`
/// takes), `PERF_COLLECT_END`. `None` when the set is not registered.
pub fn collect(set: u128) -> Option<Vec<Instance>> {
    let callback = callback_of(set)?;
    call(callback, PERF_COLLECT_START, &mut identity(set, u32::MAX));
    let out = {
        let s = state();
        let def = s.sets.get(&set)?;
        let mut live: Vec<&Live> = s.instances.values().filter(|i| i.set == set).collect();
        live.sort_by_key(|i| i.seq);
        live.into_iter()
            .map(|i| Instance {
                name: i.name.clone(),
                id: i.id,
                values: def
                    .counters
                    .iter()
                    .enumerate()
                    .map(|(k, c)| {
                        let address = i.refs.get(k).copied().unwrap_or(0);
                        let value = if c.by_reference() {
                            read_ref(address, c.size)
                        } else {
                            i.values.get(k).copied().unwrap_or(0)
                        };
                        (c.id, value)
                    })
                    .collect(),
            })
            .collect()
    };
    call(callback, PERF_COLLECT_END, &mut identity(set, u32::MAX));
    Some(out)
}

fn read_ref(address: usize, size: u32) -> u64 {
    if address == 0 {
        return 0;
    }
    if size == 4 {
        // SAFETY: the provider promised with `PerfSetCounterRefValue` that the address holds a
        // value of the counter's size until the instance is deleted, which needs the lock held
        // here; read volatile, as the provider changes it concurrently.
        u64::from(unsafe { std::ptr::read_volatile(address as *const u32) })
    } else {
        // SAFETY: as above, for an 8-byte counter.
        unsafe { std::ptr::read_volatile(address as *const u64) }
    }
}

/// Providers, countersets and instances still registered (a test's leak check).
pub fn live() -> (usize, usize, usize) {
    let s = state();
    (s.providers.len(), s.sets.len(), s.instances.len())
}
