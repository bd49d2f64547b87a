// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated Perflib's argument checks and collections.

use windows_sys::Win32::Foundation::{
    ERROR_ALREADY_EXISTS, ERROR_INVALID_HANDLE, ERROR_INVALID_PARAMETER, ERROR_NOT_FOUND,
    ERROR_SUCCESS, HANDLE,
};
use windows_sys::Win32::System::Performance::{
    PERF_COUNTER_INFO, PERF_COUNTERSET_INFO, PERF_PROVIDER_CONTEXT,
};
use windows_sys::core::GUID;

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
#[expect(
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
    let code =
        unsafe { PerfStartProviderEx(&raw const provider_guid, &raw const context, &raw mut h) };
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
