// SPDX-License-Identifier: MIT OR Apache-2.0
//! The DDIs a provider calls: `PcwRegister`, `PcwUnregister`, `PcwAddInstance`,
//! `PcwCreateInstance`, `PcwCloseInstance` and `KeReadStateEvent`, as `#[no_mangle]` functions
//! with the documented argument checks, and the `PPCW_BUFFER` a callback adds instances to.

use std::collections::BTreeMap;

use pcw_core::filter::counter_wanted;
use windows_sys::Wdk::Foundation::{KEVENT, PPCW_BUFFER, PPCW_INSTANCE, PPCW_REGISTRATION};
use windows_sys::Wdk::System::SystemServices::{
    PCW_DATA, PCW_REGISTRATION_INFORMATION, PCW_VERSION_1, PCW_VERSION_2,
    PcwRegistrationSiloNeutral,
};
use windows_sys::Win32::Foundation::{
    NTSTATUS, STATUS_INVALID_BUFFER_SIZE, STATUS_INVALID_PARAMETER_2, STATUS_SUCCESS,
    UNICODE_STRING,
};

use super::FIRST_V2_BUILD;
use super::providers::{
    Bugcheck, Created, Descriptor, InDdi, Misuse, PcwCall, RealCallback, Registration, State,
    state, wait_for_callbacks,
};

/// `KeReadStateEvent`: the event's signal state.
///
/// # Safety
/// `event` points to a valid `KEVENT`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeReadStateEvent(event: *const KEVENT) -> i32 {
    let _sim = InDdi::enter();
    // SAFETY: the caller passes a valid event; the field is read, not referenced.
    unsafe { event.as_ref() }.map_or(0, |e| e.Header.SignalState)
}

/// One `PcwAddInstance`: name, id, and counter id → value.
pub(super) type Added = (Vec<u16>, u32, BTreeMap<u16, u64>);

/// The collection context a `PPCW_BUFFER` points at while a callback runs. `repr(C)` with the
/// magic value first: a handle is checked by reading its first 8 bytes alone, so a made-up or
/// stale handle pointing at less than a whole `CollectBuffer` is refused without reading past
/// those bytes.
#[repr(C)]
pub(super) struct CollectBuffer {
    pub(super) magic: u64,
    pub(super) enumerate: bool,
    pub(super) descriptors: Vec<Descriptor>,
    pub(super) added: Vec<Added>,
    pub(super) misuse: Vec<Misuse>,
}

pub(super) const BUFFER_MAGIC: u64 = 0x5043_5742_5546_4645;

/// Reads a `UNICODE_STRING`'s units; `None` for NULL, a NULL buffer with a length, or an odd
/// length.
///
/// # Safety
/// `s` is NULL or points to a `UNICODE_STRING` whose buffer holds `Length` bytes.
unsafe fn read_unicode(s: *const UNICODE_STRING) -> Option<Vec<u16>> {
    // SAFETY: the caller guarantees `s` is NULL or valid.
    let s = unsafe { s.as_ref() }?;
    let len = usize::from(s.Length);
    if len % 2 != 0 || len > usize::from(s.MaximumLength) {
        return None;
    }
    if len == 0 {
        return Some(Vec::new());
    }
    if s.Buffer.is_null() {
        return None;
    }
    // SAFETY: the buffer holds `Length` bytes (caller), i.e. `len / 2` units.
    let units = unsafe { std::slice::from_raw_parts(s.Buffer, len / 2) };
    Some(units.to_vec())
}

/// The (address, size) of each of the `count` `PCW_DATA` blocks at `data`; none for a count of
/// 0 or a NULL `data`.
///
/// # Safety
/// `data` is NULL or holds `count` readable `PCW_DATA` entries.
unsafe fn read_blocks(data: *const PCW_DATA, count: u32) -> Vec<(usize, u32)> {
    if count == 0 || data.is_null() {
        return Vec::new();
    }
    // SAFETY: checked non-NULL; `data` holds `count` entries (caller).
    unsafe { std::slice::from_raw_parts(data, count as usize) }
        .iter()
        .map(|d| (d.Data as usize, d.Size))
        .collect()
}

/// Why [`read_values`] refused an instance's blocks: the first counter whose bytes lie past the
/// end of its block (or in a block not passed, or passed NULL: `size` 0).
#[derive(Clone, Copy, Debug)]
pub(super) struct Short {
    counter: u16,
    block: u16,
    start: u32,
    end: u32,
    size: u32,
}

impl Short {
    /// The refusal as the misuse it is, naming the instance.
    fn misuse(self, name: &[u16]) -> Misuse {
        Misuse::ShortBlock {
            name: String::from_utf16_lossy(name),
            counter: self.counter,
            block: self.block,
            start: self.start,
            end: self.end,
            size: self.size,
        }
    }
}

/// Reads the values of `descriptors` out of provider blocks; [`Short`] if a block is missing or
/// too short.
///
/// # Safety
/// Each `(ptr, size)` in `blocks` is readable for `size` bytes.
pub(super) unsafe fn read_values(
    descriptors: &[Descriptor],
    blocks: &[(usize, u32)],
    counter_mask: u64,
) -> Result<BTreeMap<u16, u64>, Short> {
    let mut values = BTreeMap::new();
    for d in descriptors {
        let (ptr, size) = blocks
            .get(usize::from(d.struct_index))
            .copied()
            .unwrap_or((0, 0));
        let start = u32::from(d.offset);
        let end = start + u32::from(d.size);
        if end > size || ptr == 0 {
            return Err(Short {
                counter: d.id,
                block: d.struct_index,
                start,
                end,
                size: if ptr == 0 { 0 } else { size },
            });
        }
        if !counter_wanted(counter_mask, d.id) {
            continue;
        }
        let at = ptr + usize::from(d.offset);
        let value = match d.size {
            // Aligned 4- and 8-byte values are read with one load, as PCW's copy does on x64;
            // a provider that updates them with atomics is never seen half-written.
            8 if at % 8 == 0 => {
                // SAFETY: inside the readable block (checked above), aligned for u64.
                unsafe { std::ptr::read_volatile(at as *const u64) }
            }
            4 if at % 4 == 0 => {
                // SAFETY: inside the readable block (checked above), aligned for u32.
                u64::from(unsafe { std::ptr::read_volatile(at as *const u32) })
            }
            _ => {
                let mut raw = [0u8; 8];
                let n = usize::from(d.size).min(8);
                // SAFETY: `at..at + n` lies inside the block (checked against `size` above);
                // unaligned bytes are copied, not referenced.
                unsafe { std::ptr::copy_nonoverlapping(at as *const u8, raw.as_mut_ptr(), n) };
                u64::from_le_bytes(raw)
            }
        };
        values.insert(d.id, value);
    }
    Ok(values)
}

/// `PcwRegister`.
///
/// # Safety
/// As the DDI: `registration` is writable, `info` points to a valid
/// `PCW_REGISTRATION_INFORMATION` whose name and `CounterCount` descriptors are readable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwRegister(
    registration: *mut PPCW_REGISTRATION,
    info: *const PCW_REGISTRATION_INFORMATION,
) -> NTSTATUS {
    let _sim = InDdi::enter();
    let mut st = state();
    if let Some(status) = st.take_fault(PcwCall::Register) {
        return status;
    }
    // SAFETY: the caller passes NULL or a valid registration information.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_INVALID_PARAMETER_2;
    };
    if registration.is_null() {
        return windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER_1;
    }
    let version_ok = info.Version == PCW_VERSION_1
        || (info.Version == PCW_VERSION_2 && st.build >= FIRST_V2_BUILD);
    // The V1 structure has no Flags field: only V2 reads it.
    let flags_ok = info.Version == PCW_VERSION_1 || info.Flags & !PcwRegistrationSiloNeutral == 0;
    // SAFETY: the name is NULL or a valid UNICODE_STRING (DDI contract).
    let name = unsafe { read_unicode(info.Name) };
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return STATUS_INVALID_PARAMETER_2;
    };
    if !version_ok || !flags_ok || (info.CounterCount > 0 && info.Counters.is_null()) {
        return STATUS_INVALID_PARAMETER_2;
    }
    let descriptors = if info.CounterCount == 0 {
        Vec::new()
    } else {
        // SAFETY: `Counters` holds `CounterCount` descriptors (DDI contract), checked non-NULL.
        unsafe { std::slice::from_raw_parts(info.Counters, info.CounterCount as usize) }
            .iter()
            .map(|d| Descriptor::from(*d))
            .collect()
    };
    let callback = info.Callback.map(|f| {
        // SAFETY: windows-sys types `PPCW_CALLBACK` as a zero-argument pointer; what a provider
        // stores there is a `PCW_CALLBACK`, the signature called here.
        unsafe { std::mem::transmute::<unsafe extern "system" fn() -> NTSTATUS, RealCallback>(f) }
    });
    let registered = Registration {
        name,
        version: info.Version,
        flags: info.Flags,
        descriptors,
        callback,
        context: info.CallbackContext as usize,
    };
    // SAFETY: `registration` was checked non-NULL above; the caller provides a writable slot.
    unsafe { st.hand_out(registration, |s| &mut s.registrations, registered) }
}

/// `PcwUnregister`. Instances still open on the registration are closed with it.
///
/// # Safety
/// None beyond the DDI's: any handle value is accepted and checked.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwUnregister(registration: PPCW_REGISTRATION) {
    let _sim = InDdi::enter();
    let mut st = state();
    if registration == 0 {
        st.bugchecks.push(Bugcheck::UnregisterNull);
        return;
    }
    if st.registrations.remove(&registration).is_none() {
        if !State::abandoned(registration) {
            st.bugchecks.push(Bugcheck::UnregisterStale(registration));
        }
        return;
    }
    st.created.retain(|_, c| c.registration != registration);
    // No callback of the registration starts now; wait for the running ones, as PCW does.
    drop(wait_for_callbacks(st, registration));
}

/// `PcwAddInstance`.
///
/// # Safety
/// As the DDI: `buffer` is the handle PCW passed to the callback, `name` a valid
/// `UNICODE_STRING`, `data` holds `count` readable blocks.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwAddInstance(
    buffer: PPCW_BUFFER,
    name: *const UNICODE_STRING,
    id: u32,
    count: u32,
    data: *const PCW_DATA,
) -> NTSTATUS {
    let _sim = InDdi::enter();
    if let Some(status) = state().take_fault(PcwCall::AddInstance) {
        return status;
    }
    let ptr = buffer as *mut CollectBuffer;
    // SAFETY: a buffer handle points at 8 readable bytes at least (a live one at the
    // `CollectBuffer` of the collection in progress on this thread, whose first field is the
    // magic value); only those are read, unaligned, before the handle is trusted.
    let live = !ptr.is_null() && unsafe { ptr.cast::<u64>().read_unaligned() } == BUFFER_MAGIC;
    let buf = if live {
        // SAFETY: a handle carrying the magic value is a live `CollectBuffer` (see above).
        unsafe { ptr.as_mut() }
    } else {
        None
    };
    let Some(buf) = buf else {
        state().misuse.push(Misuse::StaleBuffer);
        return STATUS_INVALID_PARAMETER_2;
    };
    // SAFETY: `name` is NULL or a valid UNICODE_STRING (DDI contract).
    let Some(name) = (unsafe { read_unicode(name) }) else {
        buf.misuse.push(Misuse::BadInstanceName);
        return STATUS_INVALID_PARAMETER_2;
    };
    if id >= 0xFFFF_FFFE {
        buf.misuse.push(Misuse::ReservedInstanceId(id));
    }
    let values = if buf.enumerate && count == 0 {
        BTreeMap::new()
    } else {
        // SAFETY: `data` is NULL or holds `count` PCW_DATA entries (DDI contract).
        let blocks = unsafe { read_blocks(data, count) };
        // SAFETY: each block is readable for its stated size (DDI contract).
        match unsafe { read_values(&buf.descriptors, &blocks, u64::MAX) } {
            Ok(values) => values,
            Err(short) => {
                buf.misuse.push(short.misuse(&name));
                return STATUS_INVALID_BUFFER_SIZE;
            }
        }
    };
    buf.added.push((name, id, values));
    STATUS_SUCCESS
}

/// `PcwCreateInstance`: the blocks are read at every collection until `PcwCloseInstance`.
///
/// # Safety
/// As the DDI: `instance` writable, `name` a valid `UNICODE_STRING`, `data` holds `count`
/// blocks that stay readable until the instance is closed or the set unregistered.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwCreateInstance(
    instance: *mut PPCW_INSTANCE,
    registration: PPCW_REGISTRATION,
    name: *const UNICODE_STRING,
    count: u32,
    data: *const PCW_DATA,
) -> NTSTATUS {
    let _sim = InDdi::enter();
    let mut st = state();
    if let Some(status) = st.take_fault(PcwCall::CreateInstance) {
        return status;
    }
    let Some(reg) = st.registrations.get(&registration) else {
        st.bugchecks.push(Bugcheck::CreateOnStale(registration));
        return STATUS_INVALID_PARAMETER_2;
    };
    // SAFETY: `name` is NULL or a valid UNICODE_STRING (DDI contract).
    let Some(name) = (unsafe { read_unicode(name) }) else {
        return windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER_3;
    };
    if instance.is_null() || (count > 0 && data.is_null()) {
        return windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER;
    }
    // SAFETY: `data` holds `count` entries (DDI contract), checked non-NULL when `count > 0`.
    let blocks = unsafe { read_blocks(data, count) };
    // SAFETY: the blocks are readable (DDI contract); only their sizes are checked here.
    if unsafe { read_values(&reg.descriptors, &blocks, 0) }.is_err() {
        return STATUS_INVALID_BUFFER_SIZE;
    }
    let id = st.next_instance_id;
    st.next_instance_id += 1;
    let created = Created {
        registration,
        name,
        id,
        blocks,
    };
    // SAFETY: `instance` was checked non-NULL above; the caller provides a writable slot.
    unsafe { st.hand_out(instance, |s| &mut s.created, created) }
}

/// `PcwCloseInstance`.
///
/// # Safety
/// None beyond the DDI's: any handle value is accepted and checked.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwCloseInstance(instance: PPCW_INSTANCE) {
    let _sim = InDdi::enter();
    let mut st = state();
    if st.created.remove(&instance).is_none() && !State::abandoned(instance) {
        st.bugchecks.push(Bugcheck::CloseStale(instance));
    }
}
