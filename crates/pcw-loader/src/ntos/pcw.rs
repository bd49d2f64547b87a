// SPDX-License-Identifier: MIT OR Apache-2.0
//! PCW, forwarded to pcw-sim: `PcwRegister`, `PcwUnregister`, `PcwAddInstance`,
//! `PcwCreateInstance`, `PcwCloseInstance`. The image's structures are re-read at the WDK's
//! offsets, and a `PCW_CALLBACK` from the image is only ever called as `extern "win64"` through
//! [`trampoline`], which lays the callback information out at the WDK's offsets.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use windows_sys::Wdk::Foundation::PPCW_BUFFER;
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR, PCW_DATA, PCW_REGISTRATION_INFORMATION,
    PcwCallbackAddCounter, PcwCallbackCollectData, PcwCallbackEnumerateInstances,
    PcwCallbackRemoveCounter,
};
use windows_sys::Win32::Foundation::UNICODE_STRING;

use super::state::{
    Block, COUNT_ONLY, COUNTED, NtStatus, STATUS_INSUFFICIENT_RESOURCES, STATUS_INVALID_PARAMETER,
    STATUS_SUCCESS, Thunk, enter, read_unicode, violation, with,
};
use crate::layout::{Fields, pcw_callback_information as cbi, pcw_registration as reg};

/// The `PCW_CALLBACK` addresses the image registered and has not unregistered, in registration
/// order (0 for a registration without a callback).
pub fn callbacks() -> Vec<usize> {
    with(|s| s.registrations.values().map(|t| t.callback).collect())
}

/// A `PcwCallbackCollectData` request laid out at the WDK's offsets, to call an image's
/// callback directly (benchmarks).
#[derive(Debug)]
pub struct CollectRequest {
    block: Block,
}

impl CollectRequest {
    /// Every counter, every instance (`InstanceMask` NULL, `PCW_ANY_INSTANCE_ID`), with `buffer`
    /// as the `PPCW_BUFFER` handle passed back to `PcwAddInstance`.
    pub fn everything(buffer: usize) -> Self {
        let block = Block::zeroed(cbi::SIZE);
        let f = block.fields();
        f.put(cbi::COUNTER_MASK, u64::MAX.to_le_bytes());
        f.put_u32(cbi::INSTANCE_ID, u32::MAX);
        f.put_u8(cbi::COLLECT_MULTIPLE, 1);
        f.put_usize(cbi::BUFFER, buffer);
        Self { block }
    }

    /// Calls the image's `callback` (registered with `context`) with this request.
    ///
    /// # Safety
    /// `callback` is a `PCW_CALLBACK` of the loaded image and `context` the context it was
    /// registered with; `PcwAddInstance` must be in benchmark mode (the buffer handle is not a
    /// pcw-sim collection).
    pub unsafe fn call(&self, callback: usize, context: usize) -> NtStatus {
        // SAFETY: per this function's contract, the address of a win64 PCW_CALLBACK.
        let f = unsafe { core::mem::transmute::<usize, ImageCallback>(callback) };
        // SAFETY: a valid CollectData request for the duration of the call.
        unsafe { f(PcwCallbackCollectData, self.block.ptr(), context) }
    }
}

/// The contexts registered with [`callbacks`], in the same order.
pub fn callback_contexts() -> Vec<usize> {
    with(|s| s.registrations.values().map(|t| t.context).collect())
}

/// A `PCW_CALLBACK` inside the image: its convention is win64.
type ImageCallback = unsafe extern "win64" fn(i32, *const u8, usize) -> NtStatus;

/// `PCW_CALLBACK` of pcw-sim's type (the host's `extern "system"`): calls the image's callback
/// as `extern "win64"` with the callback information re-laid out at the WDK's offsets.
unsafe extern "system" fn trampoline(
    kind: i32,
    info: *const PCW_CALLBACK_INFORMATION,
    context: *const c_void,
) -> NtStatus {
    // SAFETY: `context` is the `Thunk` registered with this trampoline, alive until the
    // registration is removed, which pcw-sim does not do while calling it.
    let Some(thunk) = (unsafe { context.cast::<Thunk>().as_ref() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    // SAFETY: pcw-sim passes valid callback information for the duration of the call.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    let wdk = Block::zeroed(cbi::SIZE);
    let out = wdk.fields();
    if kind == PcwCallbackAddCounter || kind == PcwCallbackRemoveCounter {
        // SAFETY: the AddCounter/RemoveCounter member is the active one for these kinds.
        let c = unsafe { info.AddCounter };
        out.put(cbi::COUNTER_MASK, c.CounterMask.to_le_bytes());
        out.put_usize(cbi::INSTANCE_MASK, c.InstanceMask as usize);
    } else if kind == PcwCallbackEnumerateInstances || kind == PcwCallbackCollectData {
        // SAFETY: pcw-sim fills the mask information for both kinds.
        let m = unsafe { info.CollectData };
        out.put(cbi::COUNTER_MASK, m.CounterMask.to_le_bytes());
        out.put_usize(cbi::INSTANCE_MASK, m.InstanceMask as usize);
        out.put_u32(cbi::INSTANCE_ID, m.InstanceId);
        out.put_u8(cbi::COLLECT_MULTIPLE, u8::from(m.CollectMultiple));
        out.put_usize(cbi::BUFFER, m.Buffer.cast_unsigned());
        out.put_usize(cbi::CANCEL_EVENT, m.CancelEvent as usize);
    }
    // SAFETY: the image registered this address as its PCW_CALLBACK; the image's convention is
    // win64.
    let callback = unsafe { core::mem::transmute::<usize, ImageCallback>(thunk.callback) };
    let what = [
        (
            PcwCallbackAddCounter,
            "the PCW callback (PcwCallbackAddCounter)",
        ),
        (
            PcwCallbackRemoveCounter,
            "the PCW callback (PcwCallbackRemoveCounter)",
        ),
        (
            PcwCallbackEnumerateInstances,
            "the PCW callback (PcwCallbackEnumerateInstances)",
        ),
        (
            PcwCallbackCollectData,
            "the PCW callback (PcwCallbackCollectData)",
        ),
    ]
    .into_iter()
    .find_map(|(k, name)| (k == kind).then_some(name))
    .unwrap_or("the PCW callback");
    // SAFETY: the callback's contract: a kind, valid information for it, the context the image
    // registered.
    let run = || unsafe { callback(kind, out.base(), thunk.context) };
    let status = super::watch::call(what, run);
    super::sync::check_return("a PCW callback");
    status
}

pub(super) unsafe extern "win64" fn pcw_register(
    registration: *mut isize,
    info: *const u8,
) -> NtStatus {
    if enter("PcwRegister") {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if registration.is_null() || info.is_null() {
        violation("PcwRegister", "NULL registration or information pointer");
        return STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the image passes a readable PCW_REGISTRATION_INFORMATION (the DDI's contract),
    // only read here.
    let info = unsafe { Fields::new(info.cast_mut(), reg::SIZE) };
    let (version, name, count, counters, callback, context, flags) = (
        info.get_u32(reg::VERSION),
        info.get_usize(reg::NAME),
        info.get_u32(reg::COUNTER_COUNT),
        info.get_usize(reg::COUNTERS),
        info.get_usize(reg::CALLBACK),
        info.get_usize(reg::CALLBACK_CONTEXT),
        info.get_u32(reg::FLAGS),
    );
    let thunk = Box::new(Thunk { callback, context });
    let sim_info = PCW_REGISTRATION_INFORMATION {
        Version: version,
        Name: name as *mut UNICODE_STRING,
        CounterCount: count,
        Counters: counters as *mut PCW_COUNTER_DESCRIPTOR,
        Callback: (callback != 0).then(|| {
            // SAFETY: windows-sys types the callback as a zero-argument function; pcw-sim
            // calls it with the three arguments `trampoline` takes, in the host convention.
            unsafe {
                core::mem::transmute::<
                    unsafe extern "system" fn(
                        i32,
                        *const PCW_CALLBACK_INFORMATION,
                        *const c_void,
                    ) -> NtStatus,
                    unsafe extern "system" fn() -> NtStatus,
                >(trampoline)
            }
        }),
        CallbackContext: (&raw const *thunk).cast_mut().cast(),
        Flags: flags.cast_signed(),
    };
    let mut handle: isize = 0;
    // SAFETY: valid out-pointer and information; the name and descriptors are the image's,
    // readable as the DDI requires.
    let status = unsafe { pcw_sim::kernel_pcw::PcwRegister(&raw mut handle, &raw const sim_info) };
    if status >= 0 {
        with(|s| s.registrations.insert(handle, thunk));
        // SAFETY: checked non-NULL above; the image's out-pointer.
        unsafe { registration.write_unaligned(handle) };
    }
    status
}

pub(super) unsafe extern "win64" fn pcw_unregister(registration: isize) {
    enter("PcwUnregister");
    // SAFETY: pcw-sim checks the handle and records a bugcheck for a stale one.
    unsafe { pcw_sim::kernel_pcw::PcwUnregister(registration) };
    with(|s| s.registrations.remove(&registration));
}

/// The image's `PCW_DATA` array, re-read at the WDK's offsets (`Data` pointer, `Size` u32).
///
/// # Safety
/// `data` holds `count` readable `PCW_DATA`.
unsafe fn read_data(count: u32, data: *const u8) -> Vec<PCW_DATA> {
    if data.is_null() {
        return Vec::new();
    }
    // SAFETY: per this function's contract: `count` entries of 16 bytes, only read.
    let array = unsafe { Fields::new(data.cast_mut(), 16 * count as usize) };
    (0..count as usize)
        .map(|i| PCW_DATA {
            Data: array.get_usize(16 * i) as *const c_void,
            Size: array.get_u32(16 * i + 8),
        })
        .collect()
}

/// A `UNICODE_STRING` of pcw-sim's type over `units`.
fn sim_unicode(units: &[u16]) -> UNICODE_STRING {
    let bytes = u16::try_from(units.len() * 2).unwrap_or(u16::MAX);
    UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: units.as_ptr().cast_mut(),
    }
}

pub(super) unsafe extern "win64" fn pcw_add_instance(
    buffer: PPCW_BUFFER,
    name: *const u8,
    id: u32,
    count: u32,
    data: *const u8,
) -> NtStatus {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        COUNTED.fetch_add(1, Ordering::Relaxed);
        return STATUS_SUCCESS;
    }
    if enter("PcwAddInstance") {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    // SAFETY: the image passes a valid name (the DDI's contract).
    let units = unsafe { read_unicode(name) }.unwrap_or_default();
    // SAFETY: and `count` blocks.
    let blocks = unsafe { read_data(count, data) };
    let name = sim_unicode(&units);
    // SAFETY: the buffer handle the trampoline passed on; a name and blocks alive for the
    // call.
    unsafe {
        pcw_sim::kernel_pcw::PcwAddInstance(buffer, &raw const name, id, count, blocks.as_ptr())
    }
}

pub(super) unsafe extern "win64" fn pcw_create_instance(
    instance: *mut isize,
    registration: isize,
    name: *const u8,
    count: u32,
    data: *const u8,
) -> NtStatus {
    if enter("PcwCreateInstance") {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if instance.is_null() {
        violation("PcwCreateInstance", "NULL instance out-pointer");
        return STATUS_INVALID_PARAMETER;
    }
    // SAFETY: as the DDI: a valid name.
    let units = unsafe { read_unicode(name) }.unwrap_or_default();
    // SAFETY: and `count` blocks that stay readable until close.
    let blocks = unsafe { read_data(count, data) };
    let name = sim_unicode(&units);
    let mut handle: isize = 0;
    // SAFETY: pcw-sim copies the name and the block descriptions; the blocks themselves are
    // the image's, readable until close (contract).
    let status = unsafe {
        pcw_sim::kernel_pcw::PcwCreateInstance(
            &raw mut handle,
            registration,
            &raw const name,
            count,
            blocks.as_ptr(),
        )
    };
    if status >= 0 {
        // SAFETY: checked non-NULL; the image's out-pointer.
        unsafe { instance.write_unaligned(handle) };
    }
    status
}

pub(super) unsafe extern "win64" fn pcw_close_instance(instance: isize) {
    enter("PcwCloseInstance");
    // SAFETY: pcw-sim checks the handle and records a bugcheck for a stale one.
    unsafe { pcw_sim::kernel_pcw::PcwCloseInstance(instance) };
}
