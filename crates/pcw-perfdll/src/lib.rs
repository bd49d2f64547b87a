// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-perfdll: the V1 perf DLL shim, implementing the contracts of Microsoft's
//! `CollectPerformanceData` and `OpenPerformanceData` reference pages (summarised in
//! `docs/v1-format.md`) — and `ClosePerformanceData` — over pcw-core, for the countersets of the
//! driver's manifest.
//!
//! # Exports (`extern "system"`, C names)
//!
//! * [`OpenPerformanceData`]`(LPWSTR pContext) -> DWORD`: reads `Linkage\Export`
//!   ([`linkage`]), reference-counted (only the first Open configures; later ones count).
//!   First Counter / First Help come from `HKLM\…\Services\pcw_driver\Performance` on Windows
//!   (they win), else from `first-counter=`/`first-help=` (`first-help` defaults to
//!   First Counter + 1, as lodctr assigns them). Unknown indexes or an unreachable driver are
//!   recoverable: Open returns `ERROR_SUCCESS`, logs, and Collect retries (a failing Open gets
//!   a DLL disabled, `docs/v1-format.md`). A
//!   malformed setting returns `ERROR_INVALID_DATA` (the DLL is then not called again). An
//!   allocation failure returns `ERROR_NOT_ENOUGH_MEMORY` and leaves nothing configured: Open
//!   allocates only fallibly (the settings' copy, the catalog, the snapshot buffer; the source
//!   is held by value) and has no panic path (`pcw-pecheck no-panic` roots it).
//! * [`CollectPerformanceData`]`(LPWSTR, LPVOID*, LPDWORD, LPDWORD) -> DWORD`: NULL output
//!   pointers or a NULL query fail early with no data (as the `CollectPerformanceData` page's
//!   note allows). Queries that cannot
//!   concern this DLL (foreign, name tables, index lists without its objects) are answered
//!   without touching the source. Otherwise: snapshot from the source into the buffer
//!   allocated at Open ([`buffer`]), checked by `Snapshot::parse`, one `ObjectSource` per
//!   object ([`objects`]) in a fixed array, and `pcw_core::v1::collect::collect` into the
//!   caller's buffer. Outcomes map exactly to the contract: `Success` advances `*lppData` and sets
//!   the counts; `MoreData`, `NotMine` and `Failed` leave `*lppData` (and the buffer)
//!   unchanged with both counts 0; only `ERROR_SUCCESS`/`ERROR_MORE_DATA` are returned; every
//!   failure but `MoreData` is logged ([`log`]).
//! * [`ClosePerformanceData`]`() -> DWORD`: decrements the count; the last Close drops the
//!   source (and with it the device handle) and the buffer.
//!
//! All three serialise on one mutex, so Open/Collect/Close from many threads never see a
//! half-built state and every reply is one consistent snapshot. The crate is built with
//! `panic = "abort"` (workspace profiles) and denies `unwrap`/`expect`/`panic`/indexing, so
//! nothing unwinds across the FFI boundary.
//!
//! # Layout
//!
//! [`tables`] (generated from the manifest by `build.rs`), [`linkage`], [`source`] (the
//! [`source::SnapshotSource`] trait, device and synthetic), [`synthetic`], [`buffer`],
//! [`objects`], [`log`], [`install`] (the `.reg` fragment), `win` (Windows-only edges).
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        reason = "Perflib calls the DLL across a C ABI in a host process: nothing may panic \
                  (tests may, to report a failure)"
    )
)]

pub mod buffer;
pub mod install;
pub mod linkage;
pub mod log;
pub mod nopanic;
pub mod objects;
pub mod source;
pub mod synthetic;
pub mod tables;
#[cfg(windows)]
pub mod win;

/// The install assets `build.rs` generated from the driver's manifest, for
/// installers and tools that write them next to the DLL.
pub mod assets {
    /// The lodctr `.ini` (UTF-16LE with a BOM; `drivername=pcw_driver`,
    /// `symbolfile=pcw_driver.h`).
    pub const LODCTR_INI: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pcw_driver.ini"));
    /// The lodctr symbol file `pcw_driver.h`.
    pub const LODCTR_H: &str = include_str!(concat!(env!("OUT_DIR"), "/pcw_driver.h"));
    /// The registry fragment `pcw_perfdll.reg` (UTF-16LE with a BOM), as
    /// [`crate::install::RegFragment`] writes it with the defaults.
    pub const REG_FRAGMENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pcw_perfdll.reg"));
}

use core::ffi::c_void;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pcw_core::snapshot::Snapshot;
use pcw_core::v1::collect::{self, Collected, ERROR_SUCCESS};
use pcw_core::v1::from_snapshot::SetObject;
use pcw_core::v1::query::{self, Query};
use pcw_core::v1::writer::{ObjectSource, WriteError};

use crate::buffer::SnapshotBuf;
use crate::linkage::{Linkage, SourceKind};
use crate::log::{DefaultLogger, Event, EventKind, Logger};
use crate::source::{DeviceSource, SnapshotSource, Source, SourceError, SyntheticSource};
use crate::synthetic::{Clock, Synthetic};
use crate::tables::{Catalog, CatalogError, OBJECT_COUNT, SERVICE};

/// `ERROR_INVALID_DATA`: Open's answer to a malformed `Linkage\Export`.
pub const ERROR_INVALID_DATA: u32 = 13;

/// `ERROR_NOT_ENOUGH_MEMORY`: Open's answer when an allocation fails.
pub const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;

/// Initial size of the snapshot buffer.
pub const INITIAL_SNAPSHOT_LEN: usize = 64 * 1024;

/// Longest query read, in UTF-16 units (a query is a few words; this bounds a missing NUL).
pub const MAX_QUERY_UNITS: usize = 64 * 1024;

/// The DLL between the first Open and the last Close.
struct Dll {
    linkage: Linkage,
    logger: DefaultLogger,
    catalog: Option<Catalog>,
    source: Source,
    buf: SnapshotBuf,
    last_event: Option<Event>,
}

impl Dll {
    /// Logs `event` unless it repeats the previous one (a failing driver would otherwise log
    /// on every collection).
    fn log(&mut self, event: Event) {
        if self.last_event != Some(event) {
            self.logger.log(event);
            self.last_event = Some(event);
        }
    }

    /// Builds the catalog if the indexes are known now.
    fn resolve(&mut self) -> Resolved {
        if self.catalog.is_some() {
            return Resolved::Ready;
        }
        let Some((first_counter, first_help)) = first_indexes(&self.linkage) else {
            self.log(Event {
                kind: EventKind::NoIndexes,
                code: 0,
            });
            return Resolved::NotYet;
        };
        match Catalog::new(first_counter, first_help) {
            Ok(c) => {
                self.catalog = Some(c);
                Resolved::Ready
            }
            Err(CatalogError::NoMemory) => {
                self.log(Event {
                    kind: EventKind::NoMemory,
                    code: 0,
                });
                Resolved::NoMemory
            }
            Err(_) => {
                self.log(Event {
                    kind: EventKind::NoIndexes,
                    code: first_counter,
                });
                Resolved::NotYet
            }
        }
    }
}

/// Whether the catalog is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolved {
    /// Built.
    Ready,
    /// The indexes are unknown or unusable (logged; retried at the next Collect).
    NotYet,
    /// Its allocation failed (logged).
    NoMemory,
}

/// The registry's indexes on Windows when present, else the linkage's.
fn first_indexes(linkage: &Linkage) -> Option<(u32, u32)> {
    #[cfg(windows)]
    if let Some(pair) = win::registry::first_indexes(SERVICE) {
        return Some(pair);
    }
    let _ = SERVICE;
    let first_counter = linkage.first_counter?;
    let first_help = linkage
        .first_help
        .or_else(|| first_counter.checked_add(1))?;
    Some((first_counter, first_help))
}

struct State {
    refs: u32,
    dll: Option<Dll>,
}

static STATE: Mutex<State> = Mutex::new(State { refs: 0, dll: None });

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Open's answer to an allocation failure, logged.
fn no_memory() -> u32 {
    DefaultLogger::default().log(Event {
        kind: EventKind::NoMemory,
        code: ERROR_NOT_ENOUGH_MEMORY,
    });
    ERROR_NOT_ENOUGH_MEMORY
}

/// Opens (or counts another Open of) the DLL with `linkage`; the pure part of
/// [`OpenPerformanceData`]. Nothing is configured unless it returns `ERROR_SUCCESS`.
pub fn open(linkage: Result<Linkage, linkage::LinkageError>) -> u32 {
    let mut state = state();
    if state.refs > 0 {
        state.refs = state.refs.saturating_add(1);
        return ERROR_SUCCESS;
    }
    let mut linkage = match linkage {
        Ok(linkage) => linkage,
        Err(linkage::LinkageError::NoMemory) => return no_memory(),
        Err(linkage::LinkageError::Malformed { .. }) => {
            DefaultLogger::default().log(Event {
                kind: EventKind::BadLinkage,
                code: ERROR_INVALID_DATA,
            });
            return ERROR_INVALID_DATA;
        }
    };
    let source = match linkage.source {
        SourceKind::Synthetic => {
            let clock = linkage.clock.map_or(Clock::System, |now| Clock::Fixed {
                now,
                step: linkage.clock_step,
            });
            Source::Synthetic(SyntheticSource::new(Synthetic::new(clock)))
        }
        SourceKind::Device => Source::Device(DeviceSource::new()),
    };
    let Some(buf) = SnapshotBuf::with_len(INITIAL_SNAPSHOT_LEN) else {
        return no_memory();
    };
    let mut dll = Dll {
        logger: DefaultLogger::new(linkage.log_file.take()),
        linkage,
        catalog: None,
        source,
        buf,
        last_event: None,
    };
    // Unknown indexes are recoverable (lodctr may run later): logged, retried at Collect.
    if dll.resolve() == Resolved::NoMemory {
        return no_memory();
    }
    state.dll = Some(dll);
    state.refs = 1;
    ERROR_SUCCESS
}

/// Counts one Close; the last one releases everything. The pure part of
/// [`ClosePerformanceData`].
pub fn close() -> u32 {
    let mut state = state();
    if state.refs == 0 {
        return ERROR_SUCCESS;
    }
    state.refs -= 1;
    if state.refs == 0 {
        state.dll = None;
    }
    ERROR_SUCCESS
}

/// How many Opens are outstanding.
pub fn open_count() -> u32 {
    state().refs
}

/// Whether `query` might select one of this DLL's objects (First Counter known or not).
fn may_concern_us(query: Query<'_>, catalog: Option<&Catalog>) -> bool {
    match query {
        Query::Null | Query::Foreign | Query::NameTable => false,
        Query::Global | Query::Costly | Query::Metadata { .. } => true,
        Query::Items(list) => catalog.is_none_or(|c| {
            c.objects
                .iter()
                .any(|o| list.contains(o.header.name_title_index))
        }),
    }
}

/// Answers one collection into `buf`: the pure part of [`CollectPerformanceData`].
pub fn collect(query: Option<&[u16]>, buf: &mut [u8]) -> Collected {
    let mut state = state();
    let Some(dll) = state.dll.as_mut() else {
        DefaultLogger::default().log(Event {
            kind: EventKind::NotOpen,
            code: 0,
        });
        return Collected::NotMine;
    };
    let parsed = query::classify(query);
    if !may_concern_us(parsed, dll.catalog.as_ref()) {
        return Collected::NotMine;
    }
    if dll.resolve() != Resolved::Ready {
        return Collected::NotMine;
    }
    let len = match dll.source.fetch(&mut dll.buf) {
        Ok(len) => len,
        Err(e) => {
            let code = match e {
                SourceError::Unavailable(c) | SourceError::Failed(c) => c,
                SourceError::TooLarge => 0,
            };
            dll.log(Event {
                kind: EventKind::SourceUnavailable,
                code,
            });
            return Collected::NotMine;
        }
    };
    let Dll {
        catalog, buf: snap, ..
    } = &*dll;
    let Some(catalog) = catalog.as_ref() else {
        return Collected::NotMine;
    };
    let parsed_snapshot = snap
        .bytes()
        .get(..len)
        .ok_or(0u32)
        .and_then(|b| Snapshot::parse(b).map_err(|_| 1u32))
        .and_then(|s| {
            objects::check(&catalog.objects, &s)
                .map(|()| s)
                .map_err(|_| 2u32)
        });
    let snapshot = match parsed_snapshot {
        Ok(s) => s,
        Err(code) => {
            dll.log(Event {
                kind: EventKind::BadData,
                code,
            });
            return Collected::NotMine;
        }
    };
    let mut sources: [Option<SetObject<'_>>; OBJECT_COUNT] = [None; OBJECT_COUNT];
    for (position, (slot, entry)) in sources.iter_mut().zip(&catalog.objects).enumerate() {
        *slot = Some(objects::object(entry, position, &snapshot));
    }
    let mut refs: [&dyn ObjectSource; OBJECT_COUNT] = [&NoObject; OBJECT_COUNT];
    let mut count = 0;
    for (slot, o) in refs.iter_mut().zip(sources.iter().flatten()) {
        *slot = o;
        count += 1;
    }
    let outcome = collect::collect(query, refs.get(..count).unwrap_or_default(), buf);
    if let Collected::Failed(e) = outcome {
        let code = match e {
            WriteError::ValueCount { instance } | WriteError::BadInstanceName { instance } => {
                u32::try_from(instance).unwrap_or(u32::MAX)
            }
            _ => 0,
        };
        dll.log(Event {
            kind: EventKind::WriteFailed,
            code,
        });
    } else {
        // Healthy again: the next failure is news and is logged.
        dll.last_event = None;
    }
    outcome
}

/// A filler for the unused slots of the fixed source array; never handed to the writer.
struct NoObject;

impl ObjectSource for NoObject {
    fn header(&self) -> pcw_core::v1::writer::ObjectHeader {
        pcw_core::v1::writer::ObjectHeader {
            name_title_index: 0,
            help_title_index: 0,
            detail_level: pcw_core::counter_type::DetailLevel::Novice,
            default_counter: -1,
            perf_time: 0,
            perf_freq: 0,
            costly: false,
        }
    }
    fn counters(&self) -> &[pcw_core::v1::writer::CounterSpec] {
        &[]
    }
    fn kind(&self) -> pcw_core::v1::writer::InstanceKind {
        pcw_core::v1::writer::InstanceKind::Multi
    }
    fn instance_count(&self) -> usize {
        0
    }
    fn instance(&self, _: usize) -> pcw_core::v1::writer::InstanceDesc<'_> {
        pcw_core::v1::writer::InstanceDesc::EMPTY
    }
}

/// `OpenPerformanceData` (Microsoft: the `OpenPerformanceData` reference page).
///
/// # Safety
/// `context` is NULL or points to a `REG_MULTI_SZ` readable up to its double NUL (at most
/// [`linkage::MAX_CONTEXT_UNITS`] units are read).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn OpenPerformanceData(context: *mut u16) -> u32 {
    // SAFETY: the caller's contract is `read_multi_sz`'s.
    match unsafe { linkage::read_multi_sz(context) } {
        Ok(units) => open(Linkage::parse_multi_sz(&units)),
        Err(e) => open(Err(e)),
    }
}

/// `CollectPerformanceData` (Microsoft: the `PM_COLLECT_PROC` / `CollectPerformanceData` reference
/// page).
///
/// # Safety
/// `value_name` is NULL or a readable NUL-terminated UTF-16 string; each other pointer is NULL
/// or valid for reads and writes of its pointee; `*data` is NULL or points to `*total_bytes`
/// writable bytes nothing else accesses during the call.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn CollectPerformanceData(
    value_name: *mut u16,
    data: *mut *mut c_void,
    total_bytes: *mut u32,
    num_object_types: *mut u32,
) -> u32 {
    if data.is_null() || total_bytes.is_null() || num_object_types.is_null() {
        if !total_bytes.is_null() {
            // SAFETY: non-null, so valid for writes (contract).
            unsafe { total_bytes.write(0) };
        }
        if !num_object_types.is_null() {
            // SAFETY: non-null, so valid for writes (contract).
            unsafe { num_object_types.write(0) };
        }
        DefaultLogger::default().log(Event {
            kind: EventKind::BadArguments,
            code: 1,
        });
        return ERROR_SUCCESS;
    }
    let outcome = if value_name.is_null() {
        // The CollectPerformanceData page's note: a NULL query never legitimately happens;
        // fail early, no data.
        DefaultLogger::default().log(Event {
            kind: EventKind::BadArguments,
            code: 0,
        });
        Collected::NotMine
    } else {
        // SAFETY: readable up to its NUL (contract); the helper stops there.
        let query = unsafe { query_units(value_name) };
        // SAFETY: `data` is non-null, so valid for reads (contract).
        let start = unsafe { data.read() }.cast::<u8>();
        // SAFETY: `total_bytes` is non-null, so valid for reads (contract).
        let capacity = unsafe { total_bytes.read() } as usize;
        let buf: &mut [u8] = if start.is_null() || capacity == 0 {
            &mut []
        } else {
            // SAFETY: `start` points to `capacity` writable bytes that nothing else accesses
            // during the call (contract).
            unsafe { core::slice::from_raw_parts_mut(start, capacity) }
        };
        let outcome = collect(Some(query), buf);
        let bytes = outcome.bytes();
        if bytes > 0 {
            // SAFETY: `data` is valid for writes (contract); `bytes` ≤ `capacity`, so the new
            // pointer stays inside (one past) the caller's buffer.
            unsafe { data.write(start.wrapping_add(bytes).cast()) };
        }
        outcome
    };
    // pcw-core bounds both by the buffer size and MAX_OBJECTS, which fit in u32.
    let total = u32::try_from(outcome.bytes()).unwrap_or(0);
    let count = u32::try_from(outcome.objects()).unwrap_or(0);
    // SAFETY: non-null, so valid for writes (contract).
    unsafe { total_bytes.write(total) };
    // SAFETY: non-null, so valid for writes (contract).
    unsafe { num_object_types.write(count) };
    outcome.status()
}

/// The query's units before its NUL (at most [`MAX_QUERY_UNITS`]).
///
/// # Safety
/// `p` is non-null and readable up to its NUL.
unsafe fn query_units<'a>(p: *const u16) -> &'a [u16] {
    let mut len = 0usize;
    while len < MAX_QUERY_UNITS {
        // SAFETY: the string is readable up to its NUL (precondition) and the loop stops there.
        let unit = unsafe { p.wrapping_add(len).read_unaligned() };
        if unit == 0 {
            break;
        }
        len += 1;
    }
    // SAFETY: the `len` units before the NUL were just read, so they are readable; nothing
    // writes the query during the call. A UTF-16 string from Perflib is 2-aligned.
    unsafe { core::slice::from_raw_parts(p, len) }
}

/// `ClosePerformanceData` (`PM_CLOSE_PROC`).
///
/// # Safety
/// None beyond the V1 host's protocol (it takes no pointers); `unsafe` like the other two
/// exports so the three share the shape Perflib calls.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn ClosePerformanceData() -> u32 {
    close()
}
