// SPDX-License-Identifier: MIT OR Apache-2.0
//! `requests::answers` against a small provider written the way a C driver's is (the DDIs
//! through windows-sys' declarations, which resolve to the simulated kernel's), whose callback
//! filters right or in one of the wrong ways drivers do.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};

use pcw_harness::requests::{Filtering, answers};
use pcw_harness::{BUILD_SERVER_2022, Kernel, Request, finish};
use windows_sys::Wdk::Foundation::PPCW_REGISTRATION;
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR, PCW_DATA, PCW_REGISTRATION_INFORMATION,
    PCW_VERSION_2, PPCW_CALLBACK, PcwAddInstance, PcwCallbackCollectData,
    PcwCallbackEnumerateInstances, PcwRegister, PcwUnregister,
};
use windows_sys::Win32::Foundation::{
    NTSTATUS, STATUS_SUCCESS, STATUS_UNSUCCESSFUL, UNICODE_STRING,
};

const SET: &str = "Request Test Queues";
/// ASCII names, and one that starts outside the BMP (two UTF-16 units, which PCW's `?`
/// matches one at a time) and holds the wildcard characters themselves.
const INSTANCES: [(&str, u32); 4] = [
    ("Disk q0", 0),
    ("Disk q1", 1),
    ("Net q0", 7),
    ("\u{1d538} q*?", 9),
];

/// How the callback filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Behaviour {
    /// As PCW's own filter does.
    Right,
    /// Masks compared as exact, case-sensitive strings (`*` alone excepted).
    CaseSensitive,
    /// `InstanceId` ignored.
    IgnoresId,
    /// Everything added; PCW filters.
    AddsAll,
    /// `CollectData` fails.
    Fails,
}

static BEHAVIOUR: AtomicU8 = AtomicU8::new(0);

fn behaviour() -> Behaviour {
    match BEHAVIOUR.load(Ordering::SeqCst) {
        0 => Behaviour::Right,
        1 => Behaviour::CaseSensitive,
        2 => Behaviour::IgnoresId,
        3 => Behaviour::AddsAll,
        _ => Behaviour::Fails,
    }
}

fn unicode(units: &mut [u16]) -> UNICODE_STRING {
    let len = u16::try_from(units.len() * 2).unwrap();
    UNICODE_STRING {
        Length: len,
        MaximumLength: len,
        Buffer: units.as_mut_ptr(),
    }
}

unsafe extern "system" fn callback(
    kind: i32,
    info: *const PCW_CALLBACK_INFORMATION,
    _context: *const c_void,
) -> NTSTATUS {
    if kind != PcwCallbackEnumerateInstances && kind != PcwCallbackCollectData {
        return STATUS_SUCCESS;
    }
    let how = behaviour();
    if how == Behaviour::Fails && kind == PcwCallbackCollectData {
        return STATUS_UNSUCCESSFUL;
    }
    // SAFETY: PCW passes a valid information block for the call's kind.
    let info = unsafe { &*info };
    // SAFETY: both kinds carry a PCW_MASK_INFORMATION.
    let mask = unsafe { info.CollectData };
    let wanted_mask = if mask.InstanceMask.is_null() {
        None
    } else {
        // SAFETY: a non-NULL mask is a valid UNICODE_STRING for the call.
        let m = unsafe { &*mask.InstanceMask };
        // SAFETY: `Buffer` holds `Length` bytes.
        let units = unsafe { std::slice::from_raw_parts(m.Buffer, usize::from(m.Length / 2)) };
        Some(String::from_utf16_lossy(units))
    };
    for (name, id) in INSTANCES {
        let request = Request {
            instance_id: mask.InstanceId,
            instance_mask: wanted_mask.clone(),
            ..Request::default()
        };
        let mut units: Vec<u16> = name.encode_utf16().collect();
        let selected = match how {
            Behaviour::Right | Behaviour::Fails => request.selects(&units, id),
            Behaviour::CaseSensitive => {
                request.selects(&units, id)
                    && wanted_mask.as_deref().is_none_or(|m| m == "*" || m == name)
            }
            Behaviour::IgnoresId => Request {
                instance_id: Request::default().instance_id,
                ..request
            }
            .selects(&units, id),
            Behaviour::AddsAll => true,
        };
        if !selected {
            continue;
        }
        let name = unicode(&mut units);
        let value = u64::from(id) * 10;
        let data = PCW_DATA {
            Data: (&raw const value).cast(),
            Size: 8,
        };
        // SAFETY: the name and block live across the call; PCW copies them.
        let status =
            unsafe { PcwAddInstance(mask.Buffer, &raw const name, id, 1, &raw const data) };
        if status < 0 {
            return status;
        }
    }
    STATUS_SUCCESS
}

fn register() -> PPCW_REGISTRATION {
    let mut units: Vec<u16> = SET.encode_utf16().collect();
    let mut name = unicode(&mut units);
    let mut counters = [PCW_COUNTER_DESCRIPTOR {
        Id: 0,
        StructIndex: 0,
        Offset: 0,
        Size: 8,
    }];
    let real: unsafe extern "system" fn(
        i32,
        *const PCW_CALLBACK_INFORMATION,
        *const c_void,
    ) -> NTSTATUS = callback;
    // SAFETY: windows-sys types PPCW_CALLBACK as a zero-argument pointer; PCW calls it with the
    // real PCW_CALLBACK signature.
    let cb: PPCW_CALLBACK = Some(unsafe {
        std::mem::transmute::<
            unsafe extern "system" fn(
                i32,
                *const PCW_CALLBACK_INFORMATION,
                *const c_void,
            ) -> NTSTATUS,
            unsafe extern "system" fn() -> NTSTATUS,
        >(real)
    });
    let info = PCW_REGISTRATION_INFORMATION {
        Version: PCW_VERSION_2,
        Name: &raw mut name,
        CounterCount: 1,
        Counters: counters.as_mut_ptr(),
        Callback: cb,
        CallbackContext: std::ptr::null_mut(),
        Flags: 0,
    };
    let mut handle: PPCW_REGISTRATION = 0;
    // SAFETY: the information block and everything it points at live across the call.
    let status = unsafe { PcwRegister(&raw mut handle, &raw const info) };
    assert!(status >= 0, "{status:#x}");
    handle
}

/// `answers` for the callback behaving as `how`, under `filtering`.
fn run(how: Behaviour, filtering: Filtering) -> Result<usize, String> {
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    BEHAVIOUR.store(how as u8, Ordering::SeqCst);
    let handle = register();
    let result = answers(&kernel, SET, filtering).map_err(|e| e.to_string());
    // SAFETY: the handle `register` returned.
    unsafe { PcwUnregister(handle) };
    finish(kernel).unwrap();
    result
}

#[test]
fn a_callback_that_filters_right_answers_every_request() {
    // One unfiltered request, then for each of 4 instances its id and 3 masks, one mask that
    // matches nothing and counter 0 alone.
    assert_eq!(
        run(Behaviour::Right, Filtering::Exact),
        Ok(1 + 4 * 4 + 1 + 1)
    );
    assert_eq!(run(Behaviour::Right, Filtering::LeftToPcw), Ok(19));
}

#[test]
fn each_wrong_way_of_filtering_is_named_with_the_request_that_shows_it() {
    assert_eq!(
        run(Behaviour::CaseSensitive, Filtering::LeftToPcw),
        Err(
            "counterset `Request Test Queues`, InstanceMask \"dISK Q0\": the callback left out \
             instances it selects: [\"Disk q0\"]"
                .to_owned()
        )
    );
    assert_eq!(
        run(Behaviour::IgnoresId, Filtering::Exact),
        Err(
            "counterset `Request Test Queues`, InstanceId 0: the callback added instances it \
             excludes: [\"Disk q1\", \"Net q0\", \"\u{1d538} q*?\"]"
                .to_owned()
        )
    );
    assert_eq!(
        run(Behaviour::AddsAll, Filtering::Exact),
        Err(
            "counterset `Request Test Queues`, InstanceId 0: the callback added instances it \
             excludes: [\"Disk q1\", \"Net q0\", \"\u{1d538} q*?\"]"
                .to_owned()
        )
    );
    assert_eq!(
        run(Behaviour::Fails, Filtering::LeftToPcw),
        Err(
            "counterset `Request Test Queues`, InstanceMask \"*\": the callback failed with \
             NTSTATUS 0xC0000001 (STATUS_UNSUCCESSFUL)"
                .to_owned()
        )
    );
    // Leaving the filter to PCW is allowed when the test says the callback does.
    assert_eq!(run(Behaviour::IgnoresId, Filtering::LeftToPcw), Ok(19));
    assert_eq!(run(Behaviour::AddsAll, Filtering::LeftToPcw), Ok(19));
}
