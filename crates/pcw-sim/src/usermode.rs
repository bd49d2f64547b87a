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

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, PoisonError};

use windows_sys::Win32::Foundation::{
    ERROR_ALREADY_EXISTS, ERROR_INVALID_HANDLE, ERROR_INVALID_PARAMETER, ERROR_NOT_FOUND,
    ERROR_SUCCESS, HANDLE,
};
use windows_sys::Win32::System::Performance::{
    PERF_ADD_COUNTER, PERF_ATTRIB_BY_REFERENCE, PERF_COLLECT_END, PERF_COLLECT_START,
    PERF_COUNTER_IDENTITY, PERF_COUNTER_INFO, PERF_COUNTERSET_INFO, PERF_COUNTERSET_INSTANCE,
    PERF_PROVIDER_CONTEXT, PERF_REMOVE_COUNTER, PERFLIBREQUEST,
};
use windows_sys::core::GUID;

/// `InstanceType` values Perflib accepts (`PERF_COUNTERSET_SINGLE_INSTANCE` … the
/// `_INSTANCE_AGGREGATE` and history forms).
const INSTANCE_TYPES: [u32; 6] = [0, 2, 4, 6, 0xC, 0x16];
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
    fn by_reference(&self) -> bool {
        self.attrib & PERF_ATTRIB_BY_REFERENCE != 0
    }
}

#[derive(Debug)]
struct Set {
    provider: usize,
    instance_type: u32,
    counters: Vec<CounterDef>,
}

#[derive(Debug)]
struct Live {
    /// Creation order: consumers see instances in the order they were created.
    seq: u64,
    provider: usize,
    set: u128,
    name: String,
    id: u32,
    values: Vec<u64>,
    /// The address a reference counter reads from (0: none yet).
    refs: Vec<usize>,
}

#[derive(Debug)]
struct Provider {
    guid: u128,
    callback: PERFLIBREQUEST,
}

#[derive(Debug, Default)]
struct State {
    next_handle: usize,
    next_seq: u64,
    providers: BTreeMap<usize, Provider>,
    sets: BTreeMap<u128, Set>,
    /// Keyed by the address of the `PERF_COUNTERSET_INSTANCE` handed out.
    instances: BTreeMap<usize, Live>,
}

static STATE: Mutex<State> = Mutex::new(State {
    next_handle: 0x5000,
    next_seq: 0,
    providers: BTreeMap::new(),
    sets: BTreeMap::new(),
    instances: BTreeMap::new(),
});

fn state() -> MutexGuard<'static, State> {
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

fn guid_u128(g: &GUID) -> u128 {
    (u128::from(g.data1) << 96)
        | (u128::from(g.data2) << 80)
        | (u128::from(g.data3) << 64)
        | u128::from(u64::from_be_bytes(g.data4))
}

impl State {
    /// The live instance `block` of `provider`, the definition of its counter `counter`, and
    /// the counter's index in its set; `ERROR_INVALID_PARAMETER` for a block that is not the
    /// provider's live instance, `ERROR_NOT_FOUND` for a counter its set does not have.
    fn counter_of(
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

fn handle_key(h: HANDLE) -> usize {
    h as usize
}

/// `PerfStartProviderEx`.
///
/// # Safety
/// Non-NULL pointers are valid for their types, as the Win32 contract requires.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub unsafe extern "system" fn PerfStartProviderEx(
    provider_guid: *const GUID,
    context: *const PERF_PROVIDER_CONTEXT,
    provider: *mut HANDLE,
) -> u32 {
    if provider_guid.is_null() || context.is_null() || provider.is_null() {
        return ERROR_INVALID_PARAMETER;
    }
    // SAFETY: non-NULL and valid per the contract.
    let context = unsafe { &*context };
    if (context.ContextSize as usize) < size_of::<PERF_PROVIDER_CONTEXT>() {
        return ERROR_INVALID_PARAMETER;
    }
    // SAFETY: non-NULL and valid per the contract.
    let guid = guid_u128(unsafe { &*provider_guid });
    let mut s = state();
    if s.providers.values().any(|p| p.guid == guid) {
        return ERROR_ALREADY_EXISTS;
    }
    s.next_handle += 0x10;
    let handle = s.next_handle;
    s.providers.insert(
        handle,
        Provider {
            guid,
            callback: context.ControlCallback,
        },
    );
    // SAFETY: non-NULL and writable per the contract.
    unsafe { provider.write(handle as HANDLE) };
    ERROR_SUCCESS
}

/// `PerfSetCounterSetInfo`.
///
/// # Safety
/// `template` is valid for `template_size` bytes.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub unsafe extern "system" fn PerfSetCounterSetInfo(
    provider: HANDLE,
    template: *mut PERF_COUNTERSET_INFO,
    template_size: u32,
) -> u32 {
    let mut s = state();
    let key = handle_key(provider);
    let Some(p) = s.providers.get(&key) else {
        return ERROR_INVALID_HANDLE;
    };
    let header = size_of::<PERF_COUNTERSET_INFO>();
    if template.is_null() || (template_size as usize) < header {
        return ERROR_INVALID_PARAMETER;
    }
    // SAFETY: valid for `template_size` bytes, at least a header.
    let info = unsafe { template.read_unaligned() };
    let count = info.NumCounters as usize;
    let needed = count
        .checked_mul(size_of::<PERF_COUNTER_INFO>())
        .and_then(|n| n.checked_add(header));
    if needed.is_none_or(|n| n > template_size as usize)
        || guid_u128(&info.ProviderGuid) != p.guid
        || !INSTANCE_TYPES.contains(&info.InstanceType)
    {
        return ERROR_INVALID_PARAMETER;
    }
    let mut counters: Vec<CounterDef> = Vec::with_capacity(count);
    for i in 0..count {
        let at = header + i * size_of::<PERF_COUNTER_INFO>();
        // SAFETY: `at` plus one entry lies in bounds of the template (checked above).
        let entry = unsafe { template.cast::<u8>().add(at) };
        // SAFETY: as above; the entry may be unaligned.
        let c = unsafe { entry.cast::<PERF_COUNTER_INFO>().read_unaligned() };
        if !matches!(c.Size, 4 | 8) || counters.iter().any(|o| o.id == c.CounterId) {
            return ERROR_INVALID_PARAMETER;
        }
        counters.push(CounterDef {
            id: c.CounterId,
            counter_type: c.Type,
            attrib: c.Attrib,
            size: c.Size,
        });
    }
    let set = guid_u128(&info.CounterSetGuid);
    if s.sets.contains_key(&set) {
        return ERROR_ALREADY_EXISTS;
    }
    s.sets.insert(
        set,
        Set {
            provider: key,
            instance_type: info.InstanceType,
            counters,
        },
    );
    ERROR_SUCCESS
}

/// `PerfCreateInstance`: the instance block, or NULL with the reason in `GetLastError`.
///
/// # Safety
/// `set` is NULL or a valid GUID; `name` is NULL or NUL-terminated.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub unsafe extern "system" fn PerfCreateInstance(
    provider: HANDLE,
    set: *const GUID,
    name: *const u16,
    id: u32,
) -> *mut PERF_COUNTERSET_INSTANCE {
    let fail = |code| {
        SetLastError(code);
        std::ptr::null_mut()
    };
    let mut s = state();
    let key = handle_key(provider);
    if !s.providers.contains_key(&key) || set.is_null() {
        return fail(ERROR_NOT_FOUND);
    }
    // SAFETY: non-NULL and valid per the contract.
    let set_guid_raw = unsafe { *set };
    let set_guid = guid_u128(&set_guid_raw);
    let Some(info) = s.sets.get(&set_guid).filter(|i| i.provider == key) else {
        return fail(ERROR_NOT_FOUND);
    };
    if name.is_null() {
        return fail(ERROR_INVALID_PARAMETER);
    }
    let mut units = Vec::new();
    // Reading stops at the terminator or past the longest allowed name.
    while units.len() <= MAX_INSTANCE_NAME {
        // SAFETY: NUL-terminated per the contract, and no unit past the terminator is read.
        let unit = unsafe { name.add(units.len()) };
        // SAFETY: as above.
        let u = unsafe { unit.read() };
        if u == 0 {
            break;
        }
        units.push(u);
    }
    if units.is_empty() || units.len() > MAX_INSTANCE_NAME {
        return fail(ERROR_INVALID_PARAMETER);
    }
    let text = String::from_utf16_lossy(&units);
    let single = info.instance_type & 2 == 0;
    let counters = info.counters.len();
    let clash = s
        .instances
        .values()
        .any(|i| i.set == set_guid && (single || i.id == id || i.name.eq_ignore_ascii_case(&text)));
    if clash {
        return fail(ERROR_ALREADY_EXISTS);
    }
    let block = Box::into_raw(Box::new(PERF_COUNTERSET_INSTANCE {
        CounterSetGuid: set_guid_raw,
        dwSize: u32::try_from(size_of::<PERF_COUNTERSET_INSTANCE>()).unwrap_or(0),
        InstanceId: id,
        InstanceNameOffset: 0,
        InstanceNameSize: 0,
    }));
    s.next_seq += 1;
    let seq = s.next_seq;
    s.instances.insert(
        block as usize,
        Live {
            seq,
            provider: key,
            set: set_guid,
            name: text,
            id,
            values: vec![0; counters],
            refs: vec![0; counters],
        },
    );
    block
}

/// `PerfDeleteInstance`.
///
/// # Safety
/// None beyond the Win32 contract: the block is only compared, never read.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub unsafe extern "system" fn PerfDeleteInstance(
    provider: HANDLE,
    block: *const PERF_COUNTERSET_INSTANCE,
) -> u32 {
    let mut s = state();
    let key = block as usize;
    match s.instances.get(&key) {
        Some(i) if i.provider == handle_key(provider) => {
            s.instances.remove(&key);
            // SAFETY: the block came from `Box::into_raw` in `PerfCreateInstance` and is freed
            // once: it has just left the table.
            drop(unsafe { Box::from_raw(key as *mut PERF_COUNTERSET_INSTANCE) });
            ERROR_SUCCESS
        }
        _ => ERROR_NOT_FOUND,
    }
}

/// `PerfStopProvider`: removes the provider, its countersets and its instances.
#[cfg_attr(not(windows), unsafe(no_mangle))]
pub extern "system" fn PerfStopProvider(provider: HANDLE) -> u32 {
    let mut s = state();
    let key = handle_key(provider);
    if s.providers.remove(&key).is_none() {
        return ERROR_INVALID_HANDLE;
    }
    s.sets.retain(|_, set| set.provider != key);
    let dead: Vec<usize> = s
        .instances
        .iter()
        .filter(|(_, i)| i.provider == key)
        .map(|(k, _)| *k)
        .collect();
    for k in dead {
        s.instances.remove(&k);
        // SAFETY: as in `PerfDeleteInstance`: allocated by `PerfCreateInstance`, freed once.
        drop(unsafe { Box::from_raw(k as *mut PERF_COUNTERSET_INSTANCE) });
    }
    ERROR_SUCCESS
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn counter_info(id: u32, size: u32, attrib: u64) -> PERF_COUNTER_INFO {
        PERF_COUNTER_INFO {
            CounterId: id,
            Type: 0x0001_0000,
            Attrib: attrib,
            Size: size,
            DetailLevel: 100,
            Scale: 0,
            Offset: 0,
        }
    }

    /// A `PERF_COUNTERSET_INFO` template with its counters, in one aligned buffer.
    #[repr(C)]
    struct Template<const N: usize> {
        info: PERF_COUNTERSET_INFO,
        counters: [PERF_COUNTER_INFO; N],
    }

    fn template<const N: usize>(
        set: u128,
        provider: u128,
        instance_type: u32,
        counters: [PERF_COUNTER_INFO; N],
    ) -> Template<N> {
        Template {
            info: PERF_COUNTERSET_INFO {
                CounterSetGuid: GUID::from_u128(set),
                ProviderGuid: GUID::from_u128(provider),
                NumCounters: u32::try_from(N).unwrap(),
                InstanceType: instance_type,
            },
            counters,
        }
    }

    fn register<const N: usize>(h: HANDLE, t: &mut Template<N>, size: usize) -> u32 {
        // SAFETY: `t` is valid for `size_of::<Template<N>>()` bytes, which `size` never exceeds.
        unsafe {
            PerfSetCounterSetInfo(
                h,
                std::ptr::from_mut(t).cast(),
                u32::try_from(size).unwrap(),
            )
        }
    }

    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain(Some(0)).collect()
    }

    #[test]
    #[allow(
        clippy::too_many_lines,
        reason = "one check after another, in call order"
    )]
    fn perflib_argument_checks() {
        let provider_guid = GUID::from_u128(0x7777);
        let context = PERF_PROVIDER_CONTEXT {
            ContextSize: u32::try_from(size_of::<PERF_PROVIDER_CONTEXT>()).unwrap(),
            ..Default::default()
        };
        let mut h: HANDLE = std::ptr::null_mut();
        // SAFETY: valid locals.
        let code = unsafe {
            PerfStartProviderEx(&raw const provider_guid, &raw const context, &raw mut h)
        };
        assert_eq!(code, ERROR_SUCCESS);
        let small = PERF_PROVIDER_CONTEXT {
            ContextSize: 4,
            ..context
        };
        let mut h2: HANDLE = std::ptr::null_mut();
        let other = GUID::from_u128(0x7778);
        // SAFETY: valid locals.
        let code = unsafe { PerfStartProviderEx(&raw const other, &raw const small, &raw mut h2) };
        assert_eq!(code, ERROR_INVALID_PARAMETER, "ContextSize too small");

        let full = size_of::<Template<2>>();
        let mut t = template(
            0x7001,
            0x7777,
            2,
            [counter_info(1, 4, 0), counter_info(2, 8, 0)],
        );
        assert_eq!(
            register(h, &mut t, full - 1),
            ERROR_INVALID_PARAMETER,
            "short template"
        );
        let mut wrong_provider = template(
            0x7001,
            0x9999,
            2,
            [counter_info(1, 4, 0), counter_info(2, 8, 0)],
        );
        assert_eq!(
            register(h, &mut wrong_provider, full),
            ERROR_INVALID_PARAMETER
        );
        let mut dup_id = template(
            0x7001,
            0x7777,
            2,
            [counter_info(1, 4, 0), counter_info(1, 8, 0)],
        );
        assert_eq!(register(h, &mut dup_id, full), ERROR_INVALID_PARAMETER);
        let mut odd_size = template(
            0x7001,
            0x7777,
            2,
            [counter_info(1, 4, 0), counter_info(2, 2, 0)],
        );
        assert_eq!(register(h, &mut odd_size, full), ERROR_INVALID_PARAMETER);
        assert_eq!(register(h, &mut t, full), ERROR_SUCCESS);
        assert_eq!(
            register(h, &mut t, full),
            ERROR_ALREADY_EXISTS,
            "duplicate counterset"
        );
        assert_eq!(register(0x1 as HANDLE, &mut t, full), ERROR_INVALID_HANDLE);

        let set = GUID::from_u128(0x7001);
        let name = wide("a");
        // SAFETY: valid GUID and NUL-terminated name.
        let block = unsafe { PerfCreateInstance(h, &raw const set, name.as_ptr(), 0) };
        assert!(!block.is_null());
        // SAFETY: as above.
        let again = unsafe { PerfCreateInstance(h, &raw const set, wide("A").as_ptr(), 0) };
        assert!(again.is_null());
        assert_eq!(
            GetLastError(),
            ERROR_ALREADY_EXISTS,
            "names compare case-insensitively"
        );
        // SAFETY: as above.
        let same_id = unsafe { PerfCreateInstance(h, &raw const set, wide("b").as_ptr(), 0) };
        assert!(same_id.is_null());
        assert_eq!(GetLastError(), ERROR_ALREADY_EXISTS, "ids are unique too");
        for bad in [wide(""), wide(&"n".repeat(MAX_INSTANCE_NAME + 1))] {
            // SAFETY: as above.
            let b = unsafe { PerfCreateInstance(h, &raw const set, bad.as_ptr(), 1) };
            assert!(b.is_null());
            assert_eq!(GetLastError(), ERROR_INVALID_PARAMETER);
        }
        // SAFETY: a NULL name is checked, never read.
        let b = unsafe { PerfCreateInstance(h, &raw const set, std::ptr::null(), 1) };
        assert!(b.is_null());
        let unknown = GUID::from_u128(0x7002);
        // SAFETY: as above.
        let b = unsafe { PerfCreateInstance(h, &raw const unknown, name.as_ptr(), 1) };
        assert!(b.is_null());
        assert_eq!(GetLastError(), ERROR_NOT_FOUND);

        assert_eq!(PerfSetULongCounterValue(h, block, 1, 5), ERROR_SUCCESS);
        assert_eq!(
            PerfSetULongCounterValue(h, block, 2, 5),
            ERROR_INVALID_PARAMETER,
            "8-byte counter"
        );
        assert_eq!(
            PerfSetULongLongCounterValue(h, block, 1, 5),
            ERROR_INVALID_PARAMETER,
            "4-byte counter"
        );
        assert_eq!(
            PerfSetULongCounterValue(h, block, 9, 5),
            ERROR_NOT_FOUND,
            "unknown counter id"
        );
        let value = 3u32;
        assert_eq!(
            PerfSetCounterRefValue(h, block, 1, std::ptr::from_ref(&value).cast()),
            ERROR_INVALID_PARAMETER,
            "not a reference counter"
        );
        assert_eq!(
            PerfDecrementULongCounterValue(h, block, 1, 6),
            ERROR_SUCCESS
        );
        assert_eq!(
            collect(0x7001).unwrap()[0].values[&1],
            u64::from(u32::MAX),
            "4-byte wrap"
        );

        // SAFETY: the block is only compared.
        assert_eq!(unsafe { PerfDeleteInstance(h, block) }, ERROR_SUCCESS);
        // SAFETY: as above.
        assert_eq!(unsafe { PerfDeleteInstance(h, block) }, ERROR_NOT_FOUND);
        assert_eq!(
            PerfSetULongCounterValue(h, block, 1, 5),
            ERROR_INVALID_PARAMETER,
            "deleted instance"
        );
        assert_eq!(PerfStopProvider(h), ERROR_SUCCESS);
        assert_eq!(PerfStopProvider(h), ERROR_INVALID_HANDLE);
        assert!(collect(0x7001).is_none());
    }
}
