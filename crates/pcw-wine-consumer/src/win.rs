// SPDX-License-Identifier: MIT OR Apache-2.0
//! The consumer on Windows (or Wine): registry reads, `RegQueryValueExW(HKEY_PERFORMANCE_DATA)`
//! and `LoadLibraryW`/`GetProcAddress`.
//!
//! 1. **Wine's Perflib.** With nothing of the DLL loaded by this process (so that Wine's own
//!    `OpenPerformanceData` call configures it from `Linkage\Export` on every query), the
//!    value names `Global`, one object's index, an unrelated index, NULL data, a 10-byte
//!    buffer, and a sweep of buffer sizes around the exact size needed, which finds the
//!    smallest buffer that succeeds. Every successful reply is decoded with pcw-core after
//!    [`normalize_reply`] has recognised Wine 8.0's offset bug explicitly; bytes past the
//!    buffer are watched (88 bytes of slack absorb that same bug's overrun, which is measured
//!    and reported, and anything further is a deviation).
//! 2. **The DLL under the real PE loader.** `LoadLibraryW` of the registered `Library`,
//!    `GetProcAddress` of the three exports, Open with the registered `Linkage\Export`, then
//!    every query form at every buffer size 0..=needed+64 through pcw-sim's guarded
//!    Perflib host (guard regions, test level 1, buffer untouched when no data), then Close.
//! 3. **Agreement.** What Wine returned equals what the DLL returns for the same query, byte
//!    for byte (the registered linkage fixes the synthetic clock) except the values of the
//!    counters that change between two consecutive direct collections (the DLL's statistics
//!    of itself), and the smallest buffer Wine accepts is `HeaderLength` + what the DLL needs.

use std::process::ExitCode;

use pcw_core::v1::collect::{ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::validate::Expect;
use pcw_sim::v1_host::{CallResult, CollectFn, Host, HostConfig, HostViolation};
use pcw_wine_consumer::{
    Layout, PERF_DATA_BLOCK_LEN, Report, Volatile, collect_indexes, compare_replies,
    normalize_reply, summarize, volatile_counters,
};
use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
use windows_sys::Win32::System::Registry::{
    HKEY_LOCAL_MACHINE, HKEY_PERFORMANCE_DATA, REG_BINARY, RRF_NOEXPAND, RRF_RT_REG_EXPAND_SZ,
    RRF_RT_REG_MULTI_SZ, RRF_RT_REG_SZ, RegCloseKey, RegGetValueW, RegQueryValueExW,
};

/// The service the script registers (the DLL's own lodctr `drivername=`).
const SERVICE: &str = r"System\CurrentControlSet\Services\pcw_driver";
/// What buffers are filled with before a query (the Wine tests' pattern).
const FILL: u8 = 0x77;
/// Bytes allocated past the size passed: Wine 8.0's known overrun (88) and a watched margin.
const SLACK: usize = PERF_DATA_BLOCK_LEN + 256;
/// An index no object of the DLL has (Processor on Windows; nothing under Wine).
const UNRELATED: u32 = 238;

type OpenFn = unsafe extern "system" fn(*mut u16) -> u32;
/// One guarded `CollectPerformanceData` call: query and buffer size in, checked result out.
type GuardedCall<'a> = dyn Fn(Option<&str>, u32) -> Result<CallResult, HostViolation> + 'a;
type CloseFn = unsafe extern "system" fn() -> u32;

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain([0]).collect()
}

/// A registry value of `HKLM\<SERVICE>\<sub>` as UTF-16 units (terminators included).
fn reg_units(sub: &str, value: &str, flags: u32) -> Result<Vec<u16>, String> {
    let key = wide(&format!(r"{SERVICE}\{sub}"));
    let name = wide(value);
    let mut bytes = 0u32;
    // SAFETY: key and value names are NUL-terminated; a NULL data pointer asks for the size.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            name.as_ptr(),
            flags,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            &raw mut bytes,
        )
    };
    if status != ERROR_SUCCESS {
        return Err(format!(
            r"HKLM\{SERVICE}\{sub}\{value}: RegGetValueW returned {status}"
        ));
    }
    let mut units = vec![0u16; (bytes as usize).div_ceil(2)];
    // SAFETY: `units` holds `bytes` writable bytes; names as above.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            name.as_ptr(),
            flags,
            core::ptr::null_mut(),
            units.as_mut_ptr().cast(),
            &raw mut bytes,
        )
    };
    if status != ERROR_SUCCESS {
        return Err(format!(
            r"HKLM\{SERVICE}\{sub}\{value}: RegGetValueW returned {status}"
        ));
    }
    units.truncate((bytes as usize) / 2);
    Ok(units)
}

fn units_to_string(units: &[u16]) -> String {
    let end = units.iter().position(|u| *u == 0).unwrap_or(units.len());
    String::from_utf16_lossy(units.get(..end).unwrap_or_default())
}

/// One `RegQueryValueExW(HKEY_PERFORMANCE_DATA, name)` call.
struct Reply {
    status: u32,
    ty: u32,
    size: u32,
    /// The whole allocation: `capacity` bytes passed, [`SLACK`] watched after them.
    buf: Vec<u8>,
    capacity: usize,
}

impl Reply {
    /// How many bytes past `capacity` changed (0 when none did).
    fn past_buffer(&self) -> usize {
        self.buf
            .get(self.capacity..)
            .unwrap_or_default()
            .iter()
            .rposition(|b| *b != FILL)
            .map_or(0, |p| p + 1)
    }
}

/// Queries `name` with `capacity` bytes (`None`: a NULL data pointer, with `*lpcbData` = 1024).
fn query(name: &str, capacity: Option<usize>) -> Reply {
    let name = wide(name);
    let cap = capacity.unwrap_or(0);
    let mut buf = vec![FILL; cap + SLACK];
    let data = if capacity.is_some() {
        buf.as_mut_ptr()
    } else {
        core::ptr::null_mut()
    };
    let mut size = capacity.map_or(1024, |c| u32::try_from(c).unwrap_or(u32::MAX));
    let mut ty = 0u32;
    // SAFETY: the name is NUL-terminated; `data` is NULL or points to `buf`, which holds
    // `size` bytes (and SLACK more, for Wine's known overrun); the out-pointers are live.
    let status = unsafe {
        RegQueryValueExW(
            HKEY_PERFORMANCE_DATA,
            name.as_ptr(),
            core::ptr::null(),
            &raw mut ty,
            data,
            &raw mut size,
        )
    };
    Reply {
        status,
        ty,
        size,
        buf,
        capacity: cap,
    }
}

/// What a successful Wine reply held, for comparison with the DLL.
struct WineData {
    objects: Vec<u8>,
    count: u32,
    header_length: usize,
    /// Bytes Wine's placement ran past the caller's buffer (`docs/wine.md`, consequence 3).
    past_buffer: usize,
}

/// Checks a reply that must succeed; returns its objects.
fn expect_data(report: &mut Report, what: &str, r: &Reply) -> Option<WineData> {
    report.expect_eq(&format!("{what}: status"), ERROR_SUCCESS, r.status);
    if r.status != ERROR_SUCCESS {
        return None;
    }
    report.expect_eq(&format!("{what}: value type"), REG_BINARY, r.ty);
    let n = report.expect_ok(
        &format!("{what}: reply"),
        normalize_reply(&r.buf, r.capacity, r.size as usize, FILL),
    )?;
    let allowed = match n.layout {
        Layout::Documented => 0,
        Layout::Wine80Offset { past_buffer } => past_buffer,
    };
    let past = r.past_buffer();
    if past > allowed {
        report.fail(format!(
            "{what}: bytes changed up to {past} past the {}-byte buffer; expected at most {allowed}",
            r.capacity
        ));
    }
    let block = report.expect_ok(&format!("{what}: decode"), n.decode())?;
    let layout = match n.layout {
        Layout::Documented => "documented layout".to_owned(),
        Layout::Wine80Offset { past_buffer } => format!(
            "Wine 8.0 layout: data at HeaderLength+88, TotalByteLength short by 88 \
             (docs/wine.md){}",
            if past_buffer > 0 {
                format!(", {past_buffer} bytes written past the caller's buffer")
            } else {
                String::new()
            }
        ),
    };
    println!("  {what}: {} [{layout}]", summarize(&block));
    let h = block.header();
    Some(WineData {
        objects: n.objects().to_vec(),
        count: h.num_object_types,
        header_length: h.header_length as usize,
        past_buffer: allowed,
    })
}

/// Checks a reply that must be `ERROR_MORE_DATA` with nothing written past the buffer.
fn expect_more_data(report: &mut Report, what: &str, r: &Reply) {
    report.expect_eq(&format!("{what}: status"), ERROR_MORE_DATA, r.status);
    if r.status == ERROR_MORE_DATA {
        // Wine sets *lpcbData to 0 up front; the documentation leaves it undefined.
        report.expect_eq(&format!("{what}: *lpcbData (Wine)"), 0, r.size);
    }
    report.expect_eq(
        &format!("{what}: bytes changed past the buffer"),
        0,
        r.past_buffer(),
    );
}

/// Step 1: Wine's Perflib. Returns the `Global` and one-object replies and the smallest
/// capacity that succeeded.
struct WineResults {
    global: Option<WineData>,
    one: Option<(u32, WineData)>,
    smallest: Option<usize>,
    /// The successful replies of the size sweep: (buffer size, data).
    sweep: Vec<(usize, WineData)>,
}

fn wine_perflib(report: &mut Report) -> WineResults {
    println!("== Wine's RegQueryValueExW(HKEY_PERFORMANCE_DATA)");
    let r = query("Global", None);
    report.expect_eq("Global, NULL data: status", ERROR_MORE_DATA, r.status);
    report.expect_eq("Global, NULL data: *lpcbData", 0, r.size);
    let r = query("Global", Some(10));
    report.expect_eq("Global, 10-byte buffer: status", ERROR_MORE_DATA, r.status);
    // Windows leaves 10 here, Wine 0 (`docs/wine.md`); both are within the contract.
    if r.size != 0 && r.size != 10 {
        report.fail(format!(
            "Global, 10-byte buffer: *lpcbData: expected 0 (Wine) or 10 (Windows), got {}",
            r.size
        ));
    }

    let global = expect_data(report, "Global (64 KiB)", &query("Global", Some(64 * 1024)));
    // Wine skips a provider it cannot load or that fails, silently: no objects is a failure.
    if let Some(g) = &global {
        report.expect_eq(
            "Global: the registered DLL's objects are present",
            true,
            g.count > 0,
        );
    }
    let first = global.as_ref().and_then(|g| {
        collect_indexes(&g.objects, g.count, Expect::Data)
            .ok()
            .and_then(|ids| ids.first().copied())
    });
    let one = first.and_then(|index| {
        let name = index.to_string();
        let d = expect_data(
            report,
            &format!("\"{name}\""),
            &query(&name, Some(64 * 1024)),
        )?;
        report.expect_eq(
            &format!("\"{name}\": object indexes"),
            Ok(vec![index]),
            collect_indexes(&d.objects, d.count, Expect::Data),
        );
        Some((index, d))
    });
    if let Some(d) = expect_data(
        report,
        &format!("\"{UNRELATED}\" (unrelated index)"),
        &query(&UNRELATED.to_string(), Some(64 * 1024)),
    ) {
        report.expect_eq("unrelated index: NumObjectTypes", 0, d.count);
        report.expect_eq("unrelated index: object bytes", 0, d.objects.len());
    }

    let (smallest, sweep) = global
        .as_ref()
        .map_or((None, Vec::new()), |g| size_sweep(report, g));
    WineResults {
        global,
        one,
        smallest,
        sweep,
    }
}

/// Undersized buffers: every size up to the header and around the size needed, sampled in
/// between. Each must be `ERROR_MORE_DATA` below the smallest size that succeeds and data from
/// there on (compared with the DLL's reply later). Returns that smallest size and the replies.
fn size_sweep(report: &mut Report, g: &WineData) -> (Option<usize>, Vec<(usize, WineData)>) {
    let mut smallest = None;
    let mut sweep = Vec::new();
    let needed = g.header_length + g.objects.len();
    let mut sizes: Vec<usize> = (0..=g.header_length + 8).collect();
    sizes.extend((g.header_length..needed.saturating_sub(16)).step_by(64));
    sizes.extend(needed.saturating_sub(16)..=needed + PERF_DATA_BLOCK_LEN + 16);
    sizes.sort_unstable();
    sizes.dedup();
    let mut failures = 0;
    for &size in &sizes {
        let r = query("Global", Some(size));
        let what = format!("Global at {size} bytes");
        if r.status == ERROR_SUCCESS {
            smallest.get_or_insert(size);
            let before = report.failures.len();
            if let Some(d) = expect_data_quiet(report, &what, &r) {
                sweep.push((size, d));
            }
            failures += report.failures.len() - before;
        } else {
            let before = report.failures.len();
            if smallest.is_some() {
                report.fail(format!(
                    "{what}: status: expected 0 (a smaller buffer succeeded), got {}",
                    r.status
                ));
            }
            expect_more_data(report, &what, &r);
            failures += report.failures.len() - before;
        }
        if failures > 20 {
            report.fail("too many failures in the size sweep; stopping it".to_owned());
            break;
        }
    }
    println!(
        "  size sweep: {} sizes from 0 to {}, smallest that succeeds: {smallest:?}",
        sizes.len(),
        sizes.last().copied().unwrap_or(0)
    );
    let overruns: Vec<(usize, usize)> = sweep
        .iter()
        .filter(|(_, d)| d.past_buffer > 0)
        .map(|(size, d)| (*size, d.past_buffer))
        .collect();
    if let (Some(first), Some(last)) = (overruns.first(), overruns.last()) {
        println!(
            "  known Wine 8.0 bug (docs/wine.md, consequence 3): with buffers of {} to {} \
             bytes the provider data ran {} to {} bytes past the buffer passed (this \
             program's 88-byte slack absorbed it)",
            first.0, last.0, first.1, last.1
        );
    }
    (smallest, sweep)
}

/// As [`expect_data`] without printing the summary (for the size sweep).
fn expect_data_quiet(report: &mut Report, what: &str, r: &Reply) -> Option<WineData> {
    report.expect_eq(&format!("{what}: value type"), REG_BINARY, r.ty);
    let n = report.expect_ok(
        &format!("{what}: reply"),
        normalize_reply(&r.buf, r.capacity, r.size as usize, FILL),
    )?;
    let allowed = match n.layout {
        Layout::Documented => 0,
        Layout::Wine80Offset { past_buffer } => past_buffer,
    };
    report.expect_eq(
        &format!("{what}: bytes changed past the buffer beyond Wine's known overrun"),
        0,
        r.past_buffer().saturating_sub(allowed),
    );
    let block = report.expect_ok(&format!("{what}: decode"), n.decode())?;
    Some(WineData {
        objects: n.objects().to_vec(),
        count: block.header().num_object_types,
        header_length: block.header().header_length as usize,
        past_buffer: allowed,
    })
}

/// The DLL's three exports.
struct Dll {
    open: OpenFn,
    collect: CollectFn,
    close: CloseFn,
}

fn load_dll(library: &str) -> Result<Dll, String> {
    let path = wide(library);
    // SAFETY: a NUL-terminated path; loading runs the DLL's initialisers, which is what is
    // under test.
    let module = unsafe { LoadLibraryW(path.as_ptr()) };
    if module.is_null() {
        return Err(format!("LoadLibraryW({library}) failed"));
    }
    let proc = |name: &[u8]| {
        // SAFETY: `module` is a loaded module and `name` is NUL-terminated.
        unsafe { GetProcAddress(module, name.as_ptr()) }.ok_or_else(|| {
            format!(
                "GetProcAddress({}) failed",
                String::from_utf8_lossy(name.strip_suffix(b"\0").unwrap_or(name))
            )
        })
    };
    let open = proc(b"OpenPerformanceData\0")?;
    let collect = proc(b"CollectPerformanceData\0")?;
    let close = proc(b"ClosePerformanceData\0")?;
    Ok(Dll {
        // SAFETY: `OpenPerformanceData` has the `PM_OPEN_PROC` signature (the PE check and the
        // DLL's own tests pin its exports); only the pointer's type changes.
        open: unsafe { core::mem::transmute::<unsafe extern "system" fn() -> isize, OpenFn>(open) },
        // SAFETY: as above, `PM_COLLECT_PROC`.
        collect: unsafe {
            core::mem::transmute::<unsafe extern "system" fn() -> isize, CollectFn>(collect)
        },
        // SAFETY: as above, `PM_CLOSE_PROC`.
        close: unsafe {
            core::mem::transmute::<unsafe extern "system" fn() -> isize, CloseFn>(close)
        },
    })
}

/// The query forms of `docs/v1-queries.md` for a DLL whose objects are `ids`.
fn query_forms(ids: &[u32]) -> Vec<Option<String>> {
    let mut forms: Vec<Option<String>> = [
        "Global",
        "global",
        "OLD_Global",
        "",
        " \t ",
        "Costly",
        "MetadataGlobal",
        "OLD_MetadataGlobal",
        "MetadataCostly",
        "Foreigh",
        "Foreign server 238",
        "Counter 9",
        "Help 9",
    ]
    .iter()
    .map(|s| Some((*s).to_owned()))
    .collect();
    for id in ids {
        forms.push(Some(id.to_string()));
        forms.push(Some(format!("0{id}")));
        forms.push(Some(format!("{id}0")));
    }
    let all: Vec<String> = ids.iter().rev().map(ToString::to_string).collect();
    forms.push(Some(all.join(" ")));
    forms.push(Some(format!("{UNRELATED}")));
    forms.push(Some(format!(
        "{UNRELATED}x {}",
        ids.first().copied().unwrap_or(0)
    )));
    forms.push(None);
    forms
}

/// Calls `q` at every buffer size 0..=needed+64: `ERROR_MORE_DATA` below what `full` needed,
/// the same reply (but `volatile` values) from there on. Returns the number of calls.
fn every_size(
    report: &mut Report,
    call: &GuardedCall<'_>,
    q: Option<&str>,
    full: &CallResult,
    volatile: &Volatile,
) -> usize {
    let needed = full.data.len();
    let before = report.failures.len();
    let mut calls = 0;
    for size in 0..=needed + 64 {
        calls += 1;
        let capacity = u32::try_from(size).unwrap_or(u32::MAX);
        match call(q, capacity) {
            Err(v) => report.fail(format!("Collect({q:?}, {size} bytes): {v}")),
            Ok(r) if size < needed => {
                report.expect_eq(
                    &format!("Collect({q:?}, {size} bytes): status"),
                    ERROR_MORE_DATA,
                    r.status,
                );
            }
            Ok(r) => {
                report.expect_eq(
                    &format!("Collect({q:?}, {size} bytes): status"),
                    ERROR_SUCCESS,
                    r.status,
                );
                report.expect_ok(
                    &format!("Collect({q:?}, {size} bytes): data"),
                    compare_replies(
                        &full.data,
                        full.num_object_types,
                        &r.data,
                        r.num_object_types,
                        volatile,
                    ),
                );
            }
        }
        if report.failures.len() - before > 10 {
            report.fail(format!(
                "Collect({q:?}): too many failures; next query form"
            ));
            break;
        }
    }
    calls
}

/// Step 2: the DLL under the real loader and pcw-sim's guarded host. Returns the DLL's replies
/// to `Global` and to `one`.
fn direct(report: &mut Report, library: &str, export: &mut [u16], one: Option<u32>) -> Direct {
    println!("== LoadLibraryW({library}) and the Collect contract under guard regions");
    let mut out = Direct::default();
    let Some(dll) = report.expect_ok("load the DLL", load_dll(library)) else {
        return out;
    };
    // SAFETY: `export` is a REG_MULTI_SZ (double-NUL-terminated) the DLL only reads.
    let status = unsafe { (dll.open)(export.as_mut_ptr()) };
    report.expect_eq("OpenPerformanceData", ERROR_SUCCESS, status);
    let host = Host::new(HostConfig {
        check_untouched_on_failure: true,
        ..HostConfig::default()
    });
    let call = |query: Option<&str>, capacity: u32| {
        // SAFETY: the export writes only inside the buffer pcw-sim's host lends it (its
        // guard regions catch anything else), as the contract under test requires.
        unsafe { host.call_extern(dll.collect, query, capacity) }
    };
    let ids = match call(Some("Global"), 1 << 20) {
        Ok(r) => collect_indexes(&r.data, r.num_object_types, Expect::Data).unwrap_or_default(),
        Err(v) => {
            report.fail(format!("Collect(\"Global\", 1 MiB): {v}"));
            Vec::new()
        }
    };
    report.expect_eq("objects of Global: none missing", true, !ids.is_empty());
    let mut calls = 0usize;
    for form in query_forms(&ids) {
        let q = form.as_deref();
        let full = match call(q, 1 << 20) {
            Ok(r) => r,
            Err(v) => {
                report.fail(format!("Collect({q:?}, 1 MiB): {v}"));
                continue;
            }
        };
        report.expect_eq(
            &format!("Collect({q:?}, 1 MiB): status"),
            ERROR_SUCCESS,
            full.status,
        );
        let needed = full.data.len();
        // A second collection tells the DLL's own statistics (which count collections) from
        // the data, which the fixed clock keeps identical.
        let volatile = match call(q, 1 << 20) {
            Ok(again) => report
                .expect_ok(
                    &format!("Collect({q:?}) twice: same shape"),
                    volatile_counters(
                        &full.data,
                        full.num_object_types,
                        &again.data,
                        again.num_object_types,
                    ),
                )
                .unwrap_or_default(),
            Err(v) => {
                report.fail(format!("Collect({q:?}, 1 MiB), again: {v}"));
                Volatile::new()
            }
        };
        if q == Some("Global") {
            out.global = Some((full.data.clone(), full.num_object_types));
            out.volatile.extend(volatile.iter().copied());
            println!("  counters that change between collections (object, position): {volatile:?}");
        }
        if one.is_some_and(|i| q == Some(i.to_string().as_str())) {
            out.one = Some((full.data.clone(), full.num_object_types));
        }
        calls += every_size(report, &call, q, &full, &volatile);
        println!(
            "  {q:?}: {needed} bytes, {} objects; sizes 0..={} checked",
            full.num_object_types,
            needed + 64
        );
    }
    // SAFETY: pairs with the Open above.
    let status = unsafe { (dll.close)() };
    report.expect_eq("ClosePerformanceData", ERROR_SUCCESS, status);
    println!("  {calls} guarded Collect calls");
    out
}

#[derive(Default)]
struct Direct {
    global: Option<(Vec<u8>, u32)>,
    one: Option<(Vec<u8>, u32)>,
    volatile: Volatile,
}

/// Runs every step; the exit code says whether anything deviated.
pub(crate) fn run() -> ExitCode {
    let mut report = Report::default();
    let library = reg_units(
        "Performance",
        "Library",
        RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ | RRF_NOEXPAND,
    )
    .map(|u| units_to_string(&u));
    let export = reg_units("Linkage", "Export", RRF_RT_REG_MULTI_SZ);
    let (Some(library), Some(mut export)) = (
        report.expect_ok("registered Performance\\Library", library),
        report.expect_ok("registered Linkage\\Export", export),
    ) else {
        return finish(&report);
    };
    export.extend([0, 0]);

    let wine = wine_perflib(&mut report);
    // SAFETY: HKEY_PERFORMANCE_DATA may always be closed; it unloads the providers.
    let status = unsafe { RegCloseKey(HKEY_PERFORMANCE_DATA) };
    report.expect_eq("RegCloseKey(HKEY_PERFORMANCE_DATA)", ERROR_SUCCESS, status);

    let dll = direct(
        &mut report,
        &library,
        &mut export,
        wine.one.as_ref().map(|o| o.0),
    );

    println!("== agreement between Wine's replies and the DLL's");
    let volatile = &dll.volatile;
    if let (Some(w), Some((data, count))) = (&wine.global, &dll.global) {
        report.expect_ok(
            "Global: objects (Wine vs DLL)",
            compare_replies(data, *count, &w.objects, w.count, volatile),
        );
        report.expect_eq(
            "smallest buffer Wine accepts = HeaderLength + the DLL's Global reply",
            Some(w.header_length + data.len()),
            wine.smallest,
        );
        for (size, d) in &wine.sweep {
            report.expect_ok(
                &format!("Global at {size} bytes: objects (Wine vs DLL)"),
                compare_replies(data, *count, &d.objects, d.count, volatile),
            );
        }
    } else {
        report.fail("Global: no reply to compare (see above)".to_owned());
    }
    match (&wine.one, &dll.one) {
        (Some((index, w)), Some((data, count))) => {
            report.expect_ok(
                &format!("\"{index}\": objects (Wine vs DLL)"),
                compare_replies(data, *count, &w.objects, w.count, volatile),
            );
        }
        _ => report.fail("one-object query: no reply to compare (see above)".to_owned()),
    }
    finish(&report)
}

fn finish(report: &Report) -> ExitCode {
    println!();
    println!(
        "wine-consumer: {} passed, {} failed",
        report.passed,
        report.failures.len()
    );
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
