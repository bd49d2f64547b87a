// SPDX-License-Identifier: MIT OR Apache-2.0
//! Bindings to the C baselines compiled by `build.rs`: `c/kcs.c` (a KCS-style `PCW_CALLBACK`),
//! `c/perfgen.c` (a PerfGen-style V1 collect, the device path done the plain way, and `memcpy`),
//! `c/um.c` (a user-mode Perflib V2 provider as Microsoft's samples write it) and `c/cg.c`
//! (callgrind client requests). Layouts are declared here by hand and checked against the C
//! compiler's in tests.

use core::ffi::{c_char, c_void};

use windows_sys::Wdk::System::SystemServices::PCW_CALLBACK_INFORMATION;
use windows_sys::Win32::Foundation::{HANDLE, NTSTATUS, UNICODE_STRING};
use windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE;
use windows_sys::core::GUID;

/// `UM_C_REFS` of `c/um.c`: the provider's own storage of its reference counter.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct UmCRefs {
    /// Counter 4, `Level`.
    pub level: u32,
}

/// `KCS_INSTANCE` of `c/kcs.c`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KcsInstance {
    /// Instance id.
    pub id: u32,
    /// Name (points into memory the caller keeps alive).
    pub name: UNICODE_STRING,
    /// The wave's minimum.
    pub minimum: u32,
    /// The wave's amplitude.
    pub amplitude: u32,
}

/// `PG_INSTANCE` of `c/perfgen.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PgInstance {
    /// UTF-16 name, no NUL.
    pub name: *const u16,
    /// Units of `name`.
    pub name_units: u32,
    /// `UniqueID`.
    pub unique_id: i32,
    /// One value per counter (up to 8).
    pub values: [u64; 8],
}

/// `PG_COUNTER` of `c/perfgen.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PgCounter {
    /// `CounterNameTitleIndex`.
    pub name_title_index: u32,
    /// `CounterHelpTitleIndex`.
    pub help_title_index: u32,
    /// `DefaultScale`.
    pub default_scale: i32,
    /// `DetailLevel`.
    pub detail_level: u32,
    /// `CounterType`.
    pub counter_type: u32,
    /// `CounterSize`.
    pub size: u32,
    /// `CounterOffset`.
    pub offset: u32,
}

/// `PG_OBJECT` of `c/perfgen.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PgObject {
    /// `ObjectNameTitleIndex`.
    pub name_title_index: u32,
    /// `ObjectHelpTitleIndex`.
    pub help_title_index: u32,
    /// `DetailLevel`.
    pub detail_level: u32,
    /// `DefaultCounter`.
    pub default_counter: i32,
    /// `PerfTime`.
    pub perf_time: i64,
    /// `PerfFreq`.
    pub perf_freq: i64,
    /// The counters.
    pub counters: *const PgCounter,
    /// Number of counters (≤ 8).
    pub num_counters: u32,
    /// Counter block length, 8-aligned.
    pub block_length: u32,
    /// The instances.
    pub instances: *const PgInstance,
    /// Number of instances.
    pub num_instances: usize,
}

unsafe extern "C" {
    /// Points the KCS baseline at its instance array (kept alive by the caller).
    pub fn kcs_set_instances(instances: *const KcsInstance, count: usize);
    /// Sets how many recursive steps the naive matcher may take per name.
    pub fn kcs_set_match_cap(cap: u64);
    /// Matches that hit the cap since the last call.
    pub fn kcs_take_capped() -> u64;
    /// The naive matcher alone (with the cap).
    pub fn kcs_match(mask: *const UNICODE_STRING, name: *const UNICODE_STRING) -> i32;
    /// The KCS-style `PCW_CALLBACK`.
    pub fn kcs_callback(
        kind: i32,
        info: *const PCW_CALLBACK_INFORMATION,
        context: *mut c_void,
    ) -> NTSTATUS;
    /// `sizeof(KCS_INSTANCE)`.
    pub fn kcs_instance_size() -> usize;
    /// `sizeof(PCW_MASK_INFORMATION)` as the C side declares it.
    pub fn kcs_mask_information_size() -> usize;
    /// `offsetof(PCW_MASK_INFORMATION, Buffer)`.
    pub fn kcs_mask_buffer_offset() -> usize;
    /// `offsetof(PCW_MASK_INFORMATION, InstanceId)`.
    pub fn kcs_mask_instance_id_offset() -> usize;
    /// The PerfGen-style collect: bytes written, 0 if `len` is too small.
    pub fn pg_collect(object: *const PgObject, buf: *mut u8, len: usize) -> usize;
    /// `memcpy`, out of line.
    pub fn pg_memcpy(dst: *mut u8, src: *const u8, len: usize);
    /// The device path the plain way: snapshot `object`'s instances into `snap`, decode them
    /// into `scratch` (room for `object.num_instances`), write V1 into `out`; the V1 bytes, 0
    /// on failure (a snapshot buffer too small included).
    pub fn dp_path(
        object: *const PgObject,
        snap: *mut u8,
        snap_len: usize,
        scratch: *mut PgInstance,
        out: *mut u8,
        out_len: usize,
    ) -> usize;
    /// `PerfStartProviderEx` and `PerfSetCounterSetInfo` of the "Bench Queue" set; NULL on
    /// failure.
    pub fn um_c_start(provider: *const GUID, set: *const GUID) -> HANDLE;
    /// `PerfCreateInstance` with the reference counter bound to `refs.level`; NULL on failure.
    pub fn um_c_create(
        provider: HANDLE,
        set: *const GUID,
        name: *const u16,
        id: u32,
        refs: *mut UmCRefs,
    ) -> *mut PERF_COUNTERSET_INSTANCE;
    /// One instance made and deleted; the first failure's status, else 0.
    pub fn um_c_create_delete(
        provider: HANDLE,
        set: *const GUID,
        name: *const u16,
        id: u32,
        refs: *mut UmCRefs,
    ) -> u32;
    /// Three updates through Perflib (Depth set, Bytes set, Packets + 1), statuses checked.
    pub fn um_c_update(
        provider: HANDLE,
        instance: *mut PERF_COUNTERSET_INSTANCE,
        depth: u32,
        bytes: u64,
    ) -> u32;
    /// The reference counter's store into the provider's structure.
    pub fn um_c_store(refs: *mut UmCRefs, level: u32);
    /// The three updates as stores into the block's counter data, unchecked.
    pub fn um_c_update_direct(instance: *mut PERF_COUNTERSET_INSTANCE, depth: u32, bytes: u64);
    /// `sizeof` of the C side's template, `PERF_COUNTER_INFO`, `PERF_PROVIDER_CONTEXT` and
    /// `PERF_COUNTERSET_INSTANCE`, for the layout test.
    pub fn um_c_template_size() -> usize;
    /// As above.
    pub fn um_c_counter_info_size() -> usize;
    /// As above.
    pub fn um_c_context_size() -> usize;
    /// As above.
    pub fn um_c_instance_size() -> usize;
    /// `CALLGRIND_ZERO_STATS`.
    pub fn pcw_bench_cg_zero();
    /// `CALLGRIND_DUMP_STATS_AT(label)`.
    pub fn pcw_bench_cg_dump(label: *const c_char);
    /// Whether the shim was built with the valgrind headers.
    pub fn pcw_bench_cg_available() -> i32;
}

/// `memcpy` of `src` into the start of `dst`, in C.
///
/// # Panics
/// If `dst` is shorter than `src`.
pub fn memcpy(dst: &mut [u8], src: &[u8]) {
    assert!(dst.len() >= src.len(), "memcpy: destination too short");
    // SAFETY: both ranges are valid for `src.len()` bytes and do not overlap (`&mut` vs `&`).
    unsafe { pg_memcpy(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}
