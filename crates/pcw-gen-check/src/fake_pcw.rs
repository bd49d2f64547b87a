// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fake kernel PCW exports for a non-Windows host: the `#[unsafe(no_mangle)]` definitions the
//! windows-sys `PcwRegister`… imports resolve to, recording every call (with copies of what the
//! pointers referenced) and answering as the test scripts them. Not a simulator: pcw-sim is.

#![cfg(not(windows))]

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::pcw_rt::{
    NTSTATUS, PCW_COUNTER_DESCRIPTOR, PCW_DATA, PCW_REGISTRATION_INFORMATION, PPCW_BUFFER,
    PPCW_INSTANCE, PPCW_REGISTRATION, STATUS_INVALID_PARAMETER_2, UNICODE_STRING,
};

/// One `PcwRegister` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterCall {
    /// `Version`.
    pub version: u32,
    /// `Flags`.
    pub flags: i32,
    /// `Name`, decoded.
    pub name: String,
    /// `(Id, StructIndex, Offset, Size)` of each descriptor.
    pub descriptors: Vec<(u16, u16, u16, u16)>,
    /// Whether a callback was given.
    pub has_callback: bool,
    /// The handle returned (0 when the call failed).
    pub handle: PPCW_REGISTRATION,
}

/// One `PcwAddInstance` or `PcwCreateInstance` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceCall {
    /// The buffer (add) or registration (create) handle.
    pub target: isize,
    /// `Name`, decoded.
    pub name: String,
    /// `Id` (0 for create).
    pub id: u32,
    /// `Count`.
    pub count: u32,
    /// Whether `Data` was NULL.
    pub data_null: bool,
    /// A copy of each block.
    pub blocks: Vec<Vec<u8>>,
}

/// What the fake has seen, and how it will answer.
#[derive(Debug, Default)]
pub struct Recorder {
    /// `PcwRegister` calls.
    pub registers: Vec<RegisterCall>,
    /// `PcwUnregister` arguments.
    pub unregisters: Vec<PPCW_REGISTRATION>,
    /// `PcwAddInstance` calls.
    pub adds: Vec<InstanceCall>,
    /// `PcwCreateInstance` calls.
    pub creates: Vec<InstanceCall>,
    /// `PcwCloseInstance` arguments.
    pub closes: Vec<PPCW_INSTANCE>,
    /// Answer `PCW_VERSION_2` registrations with `STATUS_INVALID_PARAMETER_2`.
    pub reject_v2: bool,
    /// Fail every registration / creation with this status.
    pub fail_with: Option<NTSTATUS>,
    /// Return success with a NULL handle.
    pub succeed_with_null: bool,
    next_handle: isize,
}

static RECORDER: Mutex<Recorder> = Mutex::new(Recorder {
    registers: Vec::new(),
    unregisters: Vec::new(),
    adds: Vec::new(),
    creates: Vec::new(),
    closes: Vec::new(),
    reject_v2: false,
    fail_with: None,
    succeed_with_null: false,
    next_handle: 0,
});

/// Serialises tests that use the recorder (hold it for the whole test).
pub static SERIAL: Mutex<()> = Mutex::new(());

/// The recorder (do not hold it across a PCW call).
pub fn recorder() -> MutexGuard<'static, Recorder> {
    RECORDER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Clears the recorder and its answers.
pub fn reset() {
    *recorder() = Recorder::default();
}

fn next_handle(r: &mut Recorder) -> isize {
    r.next_handle += 0x10;
    0x1000 + r.next_handle
}

/// Decodes a `UNICODE_STRING`.
///
/// # Safety
///
/// `s` must be NULL or point at a valid `UNICODE_STRING` whose buffer holds `Length` bytes.
unsafe fn decode(s: *const UNICODE_STRING) -> String {
    // SAFETY: NULL or valid, per this function's contract.
    let Some(s) = (unsafe { s.as_ref() }) else {
        return String::new();
    };
    if s.Buffer.is_null() {
        return String::new();
    }
    // SAFETY: `Buffer` holds `Length` bytes, per this function's contract.
    let units = unsafe { std::slice::from_raw_parts(s.Buffer, usize::from(s.Length) / 2) };
    String::from_utf16_lossy(units)
}

/// Copies the blocks of a `PCW_DATA` array.
///
/// # Safety
///
/// `data` must be NULL or point at `count` entries, each `Data` valid for `Size` bytes.
unsafe fn blocks(count: u32, data: *const PCW_DATA) -> Vec<Vec<u8>> {
    if data.is_null() {
        return Vec::new();
    }
    // SAFETY: `count` entries, per this function's contract.
    let entries = unsafe { std::slice::from_raw_parts(data, count as usize) };
    entries
        .iter()
        .map(|d| {
            if d.Data.is_null() {
                Vec::new()
            } else {
                // SAFETY: `Data` is valid for `Size` bytes, per this function's contract.
                unsafe { std::slice::from_raw_parts(d.Data.cast::<u8>(), d.Size as usize) }.to_vec()
            }
        })
        .collect()
}

/// Fake `PcwRegister`.
///
/// # Safety
///
/// As the DDI: `registration` writable, `info` a valid registration description.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwRegister(
    registration: *mut PPCW_REGISTRATION,
    info: *const PCW_REGISTRATION_INFORMATION,
) -> NTSTATUS {
    // SAFETY: valid per the DDI contract.
    let info = unsafe { &*info };
    // SAFETY: `Counters` holds `CounterCount` descriptors per the DDI contract.
    let descriptors: &[PCW_COUNTER_DESCRIPTOR] =
        unsafe { std::slice::from_raw_parts(info.Counters, info.CounterCount as usize) };
    // SAFETY: `Name` is a valid string per the DDI contract.
    let name = unsafe { decode(info.Name) };
    let mut r = recorder();
    let status = if let Some(s) = r.fail_with {
        s
    } else if r.reject_v2 && info.Version != crate::pcw_rt::PCW_VERSION_1 {
        STATUS_INVALID_PARAMETER_2
    } else {
        0
    };
    let handle = if status >= 0 && !r.succeed_with_null {
        next_handle(&mut r)
    } else {
        0
    };
    if status >= 0 {
        // SAFETY: writable per the DDI contract.
        unsafe { registration.write(handle) };
    }
    r.registers.push(RegisterCall {
        version: info.Version,
        flags: info.Flags,
        name,
        descriptors: descriptors
            .iter()
            .map(|d| (d.Id, d.StructIndex, d.Offset, d.Size))
            .collect(),
        has_callback: info.Callback.is_some(),
        handle,
    });
    status
}

/// Fake `PcwUnregister`.
///
/// # Safety
///
/// None beyond the DDI's (a live handle); the fake only records it.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwUnregister(registration: PPCW_REGISTRATION) {
    recorder().unregisters.push(registration);
}

/// Fake `PcwAddInstance`.
///
/// # Safety
///
/// As the DDI: `name` valid, `data` NULL (with `count` 0) or `count` valid blocks.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwAddInstance(
    buffer: PPCW_BUFFER,
    name: *const UNICODE_STRING,
    id: u32,
    count: u32,
    data: *const PCW_DATA,
) -> NTSTATUS {
    // SAFETY: valid per the DDI contract.
    let name = unsafe { decode(name) };
    // SAFETY: valid per the DDI contract.
    let blocks = unsafe { blocks(count, data) };
    recorder().adds.push(InstanceCall {
        target: buffer,
        name,
        id,
        count,
        data_null: data.is_null(),
        blocks,
    });
    0
}

/// Fake `PcwCreateInstance`.
///
/// # Safety
///
/// As the DDI.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwCreateInstance(
    instance: *mut PPCW_INSTANCE,
    registration: PPCW_REGISTRATION,
    name: *const UNICODE_STRING,
    count: u32,
    data: *const PCW_DATA,
) -> NTSTATUS {
    // SAFETY: valid per the DDI contract.
    let name = unsafe { decode(name) };
    // SAFETY: valid per the DDI contract.
    let blocks = unsafe { blocks(count, data) };
    let mut r = recorder();
    let status = r.fail_with.unwrap_or(0);
    if status >= 0 {
        let h = next_handle(&mut r);
        // SAFETY: writable per the DDI contract.
        unsafe { instance.write(h) };
    }
    r.creates.push(InstanceCall {
        target: registration,
        name,
        id: 0,
        count,
        data_null: data.is_null(),
        blocks,
    });
    status
}

/// Fake `PcwCloseInstance`.
///
/// # Safety
///
/// None beyond the DDI's; the fake only records it.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwCloseInstance(instance: PPCW_INSTANCE) {
    recorder().closes.push(instance);
}

/// Fake `KeReadStateEvent` (pcw-rt's safe callback polls the consumer's cancel event): never
/// signalled, the fake has no consumers that cancel.
///
/// # Safety
///
/// None: the event is not read.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeReadStateEvent(_event: *const core::ffi::c_void) -> i32 {
    0
}
