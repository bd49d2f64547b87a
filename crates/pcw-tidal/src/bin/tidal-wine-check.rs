// SPDX-License-Identifier: MIT OR Apache-2.0
//! `tidal-wine-check`: makes every Perflib call the example service makes, resolving each
//! function at run time, and reports per function whether the system exports it and per call
//! its Win32 result. Exit status 1 when an exported function's call fails (or nothing could be
//! started), 0 otherwise; functions the system does not export are named, not skipped
//! silently. Built for Windows and run under Wine by `scripts/wine-test.sh` (Wine 8.0's
//! advapi32 has no `PerfSetULong…`/`PerfIncrement…`/`PerfDecrement…` setters, which an import
//! of them would make the whole executable fail to load); on other hosts it runs against
//! pcw-sim's simulated Perflib, where every function exists.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use pcw_tidal::counters::{self, tidal_harbors as harbors, tidal_moon as moon};

type Handle = *mut c_void;
type Guid = [u8; 16];

/// The functions the example calls, in call order.
const FUNCTIONS: [&str; 12] = [
    "PerfStartProviderEx",
    "PerfSetCounterSetInfo",
    "PerfCreateInstance",
    "PerfSetCounterRefValue",
    "PerfSetULongCounterValue",
    "PerfSetULongLongCounterValue",
    "PerfIncrementULongCounterValue",
    "PerfIncrementULongLongCounterValue",
    "PerfDecrementULongCounterValue",
    "PerfDecrementULongLongCounterValue",
    "PerfDeleteInstance",
    "PerfStopProvider",
];

type StartFn = unsafe extern "system" fn(*const Guid, *const c_void, *mut Handle) -> u32;
type SetInfoFn = unsafe extern "system" fn(Handle, *mut c_void, u32) -> u32;
type CreateFn = unsafe extern "system" fn(Handle, *const Guid, *const u16, u32) -> *mut c_void;
type RefFn = unsafe extern "system" fn(Handle, *mut c_void, u32, *const c_void) -> u32;
type U32Fn = unsafe extern "system" fn(Handle, *mut c_void, u32, u32) -> u32;
type U64Fn = unsafe extern "system" fn(Handle, *mut c_void, u32, u64) -> u32;
type DeleteFn = unsafe extern "system" fn(Handle, *mut c_void) -> u32;
type StopFn = unsafe extern "system" fn(Handle) -> u32;

#[cfg(windows)]
fn resolve(name: &str) -> Option<*const c_void> {
    use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
    let dll: Vec<u16> = "advapi32.dll\0".encode_utf16().collect();
    let symbol = format!("{name}\0");
    // SAFETY: NUL-terminated strings; the module stays loaded for the process.
    let module = unsafe { LoadLibraryW(dll.as_ptr()) };
    if module.is_null() {
        return None;
    }
    // SAFETY: as above.
    let f = unsafe { GetProcAddress(module, symbol.as_ptr()) }?;
    Some(f as *const c_void)
}

#[cfg(not(windows))]
fn resolve(name: &str) -> Option<*const c_void> {
    use pcw_sim::usermode as u;
    let f: *const c_void = match name {
        "PerfStartProviderEx" => u::PerfStartProviderEx as *const c_void,
        "PerfSetCounterSetInfo" => u::PerfSetCounterSetInfo as *const c_void,
        "PerfCreateInstance" => u::PerfCreateInstance as *const c_void,
        "PerfSetCounterRefValue" => u::PerfSetCounterRefValue as *const c_void,
        "PerfSetULongCounterValue" => u::PerfSetULongCounterValue as *const c_void,
        "PerfSetULongLongCounterValue" => u::PerfSetULongLongCounterValue as *const c_void,
        "PerfIncrementULongCounterValue" => u::PerfIncrementULongCounterValue as *const c_void,
        "PerfIncrementULongLongCounterValue" => {
            u::PerfIncrementULongLongCounterValue as *const c_void
        }
        "PerfDecrementULongCounterValue" => u::PerfDecrementULongCounterValue as *const c_void,
        "PerfDecrementULongLongCounterValue" => {
            u::PerfDecrementULongLongCounterValue as *const c_void
        }
        "PerfDeleteInstance" => u::PerfDeleteInstance as *const c_void,
        "PerfStopProvider" => u::PerfStopProvider as *const c_void,
        _ => return None,
    };
    Some(f)
}

/// The calling thread's last Win32 error.
#[cfg(windows)]
fn last_error() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The calling thread's last Win32 error, as the simulated Perflib set it.
#[cfg(not(windows))]
fn last_error() -> u32 {
    pcw_sim::usermode::GetLastError()
}

/// `GUID` bytes (little-endian `Data1..3`, as in memory) of a big-endian `u128`.
fn guid(v: u128) -> Guid {
    let b = v.to_be_bytes();
    [
        b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15],
    ]
}

/// A `PERF_COUNTERSET_INFO` template with its `PERF_COUNTER_INFO`s, as u64 words.
fn template(set: &pcw_um::CounterSetInfo) -> Vec<u64> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&guid(set.guid));
    bytes.extend_from_slice(&guid(counters::PROVIDER_GUID));
    bytes.extend_from_slice(&u32::try_from(set.counters.len()).unwrap_or(0).to_le_bytes());
    bytes.extend_from_slice(&set.instance_type.to_le_bytes());
    for c in set.counters {
        bytes.extend_from_slice(&c.id.to_le_bytes());
        bytes.extend_from_slice(&c.counter_type.to_le_bytes());
        bytes.extend_from_slice(&c.attrib.to_le_bytes());
        bytes.extend_from_slice(&c.size.to_le_bytes());
        bytes.extend_from_slice(&c.detail_level.to_le_bytes());
        bytes.extend_from_slice(&c.scale.to_le_bytes());
        bytes.extend_from_slice(&c.offset.to_le_bytes());
    }
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

struct Report {
    failures: u32,
}

impl Report {
    fn call(&mut self, what: &str, code: u32) -> bool {
        if code == 0 {
            println!("ok       {what} -> 0 (ERROR_SUCCESS)");
            true
        } else {
            println!("FAILED   {what} -> win32 error {code}");
            self.failures += 1;
            false
        }
    }

    fn lacking(what: &str, function: &str) {
        println!("lacking  {what}: `{function}` is not exported by this system; call not made");
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "the exports table, then every Perflib call of the example in `FUNCTIONS` order, each printed with its result"
)]
fn main() -> std::process::ExitCode {
    println!("== exports (advapi32.dll)");
    let mut found = std::collections::BTreeMap::new();
    for name in FUNCTIONS {
        let f = resolve(name);
        println!(
            "{}  {name}",
            if f.is_some() { "exported" } else { "MISSING " }
        );
        found.insert(name, f);
    }
    let get = |name: &str| found.get(name).copied().flatten();
    let mut report = Report { failures: 0 };
    println!("== calls");
    let (Some(start), Some(set_info), Some(create), Some(stop)) = (
        get("PerfStartProviderEx"),
        get("PerfSetCounterSetInfo"),
        get("PerfCreateInstance"),
        get("PerfStopProvider"),
    ) else {
        println!("FAILED   the provider cannot be started without these functions");
        return std::process::ExitCode::FAILURE;
    };
    // SAFETY: each pointer is the system's export of that name, whose signature is the
    // documented one the type spells (the same holds for every transmute below).
    let start: StartFn = unsafe { std::mem::transmute(start) };
    // SAFETY: as above.
    let set_info: SetInfoFn = unsafe { std::mem::transmute(set_info) };
    // SAFETY: as above.
    let create: CreateFn = unsafe { std::mem::transmute(create) };
    // SAFETY: as above.
    let stop: StopFn = unsafe { std::mem::transmute(stop) };

    // PERF_PROVIDER_CONTEXT: ContextSize, Reserved, then three pointers and a context (no
    // callback: the service uses the default).
    let mut context = [0u64; 5];
    context[0] = 40;
    let provider_guid = guid(counters::PROVIDER_GUID);
    let mut handle: Handle = std::ptr::null_mut();
    // SAFETY: valid locals.
    let code = unsafe {
        start(
            &raw const provider_guid,
            context.as_ptr().cast(),
            &raw mut handle,
        )
    };
    if !report.call("PerfStartProviderEx(tidal provider)", code) {
        return std::process::ExitCode::FAILURE;
    }
    for set in counters::COUNTER_SETS {
        let mut words = template(set);
        let size = u32::try_from(40 + 32 * set.counters.len()).unwrap_or(0);
        // SAFETY: the template holds `size` bytes.
        let code = unsafe { set_info(handle, words.as_mut_ptr().cast(), size) };
        report.call(&format!("PerfSetCounterSetInfo({:#034x})", set.guid), code);
    }
    let mut blocks = Vec::new();
    // The service's instances, with its ids (`pcw_tidal::Publisher::new`).
    for (set, name, id) in [
        (harbors::GUID, "North", 1),
        (harbors::GUID, "South", 2),
        (moon::GUID, "_Default", 0),
    ] {
        let set_guid = guid(set);
        let n = wide(name);
        // SAFETY: valid GUID and NUL-terminated name.
        let block = unsafe { create(handle, &raw const set_guid, n.as_ptr(), id) };
        if block.is_null() {
            println!(
                "FAILED   PerfCreateInstance({name}, {id}) -> NULL, last error {}",
                last_error()
            );
            report.failures += 1;
        } else {
            println!("ok       PerfCreateInstance({name}, {id}) -> an instance block");
        }
        blocks.push(block);
    }
    let (north, moon_block) = (blocks[0], blocks[2]);
    let references = [AtomicU32::new(40), AtomicU32::new(7), AtomicU32::new(40)];
    match get("PerfSetCounterRefValue") {
        Some(f) if !moon_block.is_null() => {
            // SAFETY: as above.
            let f: RefFn = unsafe { std::mem::transmute(f) };
            for (id, value) in [moon::ids::PULL, moon::ids::PHASE, moon::ids::PULL_FRACTION]
                .into_iter()
                .zip(&references)
            {
                // SAFETY: live handle and block; the atomic outlives the instance (deleted
                // below, before `references` goes).
                let code = unsafe { f(handle, moon_block, id, std::ptr::from_ref(value).cast()) };
                report.call(&format!("PerfSetCounterRefValue(moon, counter {id})"), code);
            }
            references[0].store(41, Ordering::Relaxed);
        }
        Some(_) => {}
        None => Report::lacking("reference counters", "PerfSetCounterRefValue"),
    }
    let u32_calls = [
        (
            "PerfSetULongCounterValue",
            "north water level = 120",
            north,
            harbors::ids::WATER_LEVEL,
            120,
        ),
        (
            "PerfIncrementULongCounterValue",
            "north water level += 5",
            north,
            harbors::ids::WATER_LEVEL,
            5,
        ),
        (
            "PerfDecrementULongCounterValue",
            "north water level -= 2",
            north,
            harbors::ids::WATER_LEVEL,
            2,
        ),
        (
            "PerfSetULongCounterValue",
            "moon full pull = 1000",
            moon_block,
            moon::ids::FULL_PULL,
            1000,
        ),
    ];
    for (function, what, block, id, value) in u32_calls {
        match get(function) {
            Some(f) if !block.is_null() => {
                // SAFETY: as above.
                let f: U32Fn = unsafe { std::mem::transmute(f) };
                // SAFETY: live handle and block.
                let code = unsafe { f(handle, block, id, value) };
                report.call(&format!("{function}({what})"), code);
            }
            Some(_) => {}
            None => Report::lacking(what, function),
        }
    }
    let u64_calls = [
        (
            "PerfSetULongLongCounterValue",
            "north ships moored = 3",
            harbors::ids::SHIPS_MOORED,
            3u64,
        ),
        (
            "PerfIncrementULongLongCounterValue",
            "north ships moored += 2",
            harbors::ids::SHIPS_MOORED,
            2,
        ),
        (
            "PerfDecrementULongLongCounterValue",
            "north ships moored -= 1",
            harbors::ids::SHIPS_MOORED,
            1,
        ),
    ];
    for (function, what, id, value) in u64_calls {
        match get(function) {
            Some(f) if !north.is_null() => {
                // SAFETY: as above.
                let f: U64Fn = unsafe { std::mem::transmute(f) };
                // SAFETY: live handle and block.
                let code = unsafe { f(handle, north, id, value) };
                report.call(&format!("{function}({what})"), code);
            }
            Some(_) => {}
            None => Report::lacking(what, function),
        }
    }
    match get("PerfDeleteInstance") {
        Some(f) => {
            // SAFETY: as above.
            let f: DeleteFn = unsafe { std::mem::transmute(f) };
            for block in blocks.into_iter().filter(|b| !b.is_null()) {
                // SAFETY: each block came from `PerfCreateInstance` and is deleted once.
                let code = unsafe { f(handle, block) };
                report.call("PerfDeleteInstance", code);
            }
        }
        None => Report::lacking("deleting instances", "PerfDeleteInstance"),
    }
    // SAFETY: the handle came from `PerfStartProviderEx` and is stopped once.
    let code = unsafe { stop(handle) };
    report.call("PerfStopProvider", code);
    // The reference counters' memory is released only now, after the instances are deleted.
    let _ = references;
    let lacking: Vec<&str> = FUNCTIONS
        .iter()
        .copied()
        .filter(|f| get(f).is_none())
        .collect();
    println!(
        "== {} call(s) failed; not exported here: {}",
        report.failures,
        if lacking.is_empty() {
            "none".to_owned()
        } else {
            lacking.join(", ")
        }
    );
    if report.failures == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
