// SPDX-License-Identifier: MIT OR Apache-2.0
//! A provider's lifetime: starting, registering a counterset, creating and deleting
//! instances, stopping.

use windows_sys::Win32::Foundation::{
    ERROR_ALREADY_EXISTS, ERROR_INVALID_HANDLE, ERROR_INVALID_PARAMETER, ERROR_NOT_FOUND,
    ERROR_SUCCESS, HANDLE,
};
use windows_sys::Win32::System::Performance::{
    PERF_COUNTER_INFO, PERF_COUNTERSET_INFO, PERF_COUNTERSET_INSTANCE, PERF_PROVIDER_CONTEXT,
};
use windows_sys::core::GUID;

use super::state::{
    CounterDef, INSTANCE_TYPES, Live, MAX_INSTANCE_NAME, Provider, Set, SetLastError, guid_u128,
    handle_key, state,
};

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
