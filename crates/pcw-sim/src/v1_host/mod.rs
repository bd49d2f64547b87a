// SPDX-License-Identifier: MIT OR Apache-2.0
//! Perflib's V1 host, simulated: calls a `CollectPerformanceData` function (Microsoft: the
//! `PM_COLLECT_PROC` reference page) the way Windows does at `ExtCounterTestLevel` 1 and reports
//! every breach of the contract as a distinct [`HostViolation`] carrying the offset or values
//! involved.
//!
//! Per call, [`Host::call`]:
//! * allocates the buffer with [`GUARD_LEN`]-byte guard regions before and after it, filled
//!   with a pattern (the buffer itself is poisoned with [`HostConfig::buffer_fill`] so unwritten
//!   bytes show);
//! * passes the query as a NUL-terminated UTF-16 string (or NULL), `*lpcbTotalBytes` = the
//!   buffer size, and garbage in `*lpNumObjectTypes` (the `CollectPerformanceData` page says its
//!   input is garbage);
//! * afterwards checks, in this order: the return code (only `ERROR_SUCCESS`/`ERROR_MORE_DATA`);
//!   on `ERROR_MORE_DATA` or an empty reply the pointer unchanged, size 0 and count 0; on data
//!   the returned pointer inside the buffer (before the start, past the end = overrun, past the
//!   guard = heap corruption), both guard regions intact, size within the buffer, pointer ==
//!   start + size, size 8-aligned; then the returned bytes with
//!   [`pcw_core::v1::validate::validate_objects`] (which also checks the object count).
//!
//! [`TestLevel`] selects how much of this runs (the page's table: 1 everything, 2 pointers,
//! lengths and guards only, 3 and 4 nothing). [`HostConfig::check_untouched_on_failure`] adds a
//! check the page does not ask for but pcw-core promises: with no data returned, the buffer's bytes
//! are unchanged.
//!
//! [`block`] assembles whole `PERF_DATA_BLOCK` replies from several providers, as
//! `RegQueryValueEx(HKEY_PERFORMANCE_DATA, …)` does.

pub mod block;

use core::ffi::c_void;

use pcw_core::v1::collect::{self, ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::query::{self, Query};
use pcw_core::v1::validate::{self, Expect, Summary, Violation};
use pcw_core::v1::writer::ObjectSource;

/// The real ABI of an exported `CollectPerformanceData` (`PM_COLLECT_PROC`).
pub type CollectFn = unsafe extern "system" fn(
    lp_value_name: *mut u16,
    lpp_data: *mut *mut c_void,
    lpcb_total_bytes: *mut u32,
    lp_num_object_types: *mut u32,
) -> u32;

/// A collect function as a Rust closure with the same raw-pointer shape as [`CollectFn`].
///
/// The host always passes pointers that are valid for the duration of the call: a readable
/// NUL-terminated query (or NULL), a pointer to the buffer pointer, and pointers to the two
/// `u32`s; the buffer pointer addresses `*lpcbTotalBytes` writable bytes.
pub type RawCollect<'a> = dyn FnMut(*mut u16, *mut *mut c_void, *mut u32, *mut u32) -> u32 + 'a;

/// Bytes of each guard region (the `CollectPerformanceData` page's 1 KB guard regions).
pub const GUARD_LEN: usize = 1024;

/// `ExtCounterTestLevel`: how much the host checks (`docs/v1-format.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TestLevel {
    /// Level 1: pointers, buffers, guards and the structure of the returned objects.
    #[default]
    One,
    /// Level 2: pointers, buffer lengths and guards only.
    Two,
    /// Level 3: no tests (a copy of the buffer is still used).
    Three,
    /// Level 4: no tests.
    Four,
}

impl TestLevel {
    /// The level for a registry value 1..=4.
    pub const fn from_value(value: u32) -> Option<Self> {
        match value {
            1 => Some(Self::One),
            2 => Some(Self::Two),
            3 => Some(Self::Three),
            4 => Some(Self::Four),
            _ => None,
        }
    }

    const fn checks_pointers(self) -> bool {
        matches!(self, Self::One | Self::Two)
    }

    const fn checks_contents(self) -> bool {
        matches!(self, Self::One)
    }
}

/// How the host calls and checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// `ExtCounterTestLevel`.
    pub test_level: TestLevel,
    /// Also require the buffer's bytes to be unchanged when no data is returned (pcw-core's
    /// promise; the V1 contract only constrains the pointer). Applies at test level 1.
    pub check_untouched_on_failure: bool,
    /// Byte the buffer is filled with before the call.
    pub buffer_fill: u8,
    /// Pattern the guard regions are filled with (repeated).
    pub guard_pattern: [u8; 4],
    /// Value placed in `*lpNumObjectTypes` before the call.
    pub garbage_count: u32,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            test_level: TestLevel::One,
            check_untouched_on_failure: false,
            buffer_fill: 0xA5,
            guard_pattern: [0xFD, 0xFD, 0xEE, 0xFE],
            garbage_count: 0xBAAD_F00D,
        }
    }
}

/// Which guard region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GuardRegion {
    /// The region before the buffer.
    Prefix,
    /// The region after the buffer.
    Suffix,
}

impl core::fmt::Display for GuardRegion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Prefix => "prefix",
            Self::Suffix => "suffix",
        })
    }
}

/// A breach of the `CollectPerformanceData` contract found by the host. Offsets are from the
/// start of the caller's buffer (guard offsets from the start of their region).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostViolation {
    /// The return code is neither `ERROR_SUCCESS` nor `ERROR_MORE_DATA`.
    #[error(
        "collect returned {status} ({status:#x}); only ERROR_SUCCESS (0) and ERROR_MORE_DATA (234) are allowed"
    )]
    UnexpectedStatus {
        /// The code returned.
        status: u32,
    },
    /// `ERROR_MORE_DATA` with a non-zero `*lpcbTotalBytes`.
    #[error("ERROR_MORE_DATA returned with *lpcbTotalBytes = {size}; it must be 0")]
    SizeOnMoreData {
        /// The size returned.
        size: u32,
    },
    /// `*lppData` moved although no data was returned (`ERROR_MORE_DATA`).
    #[error(
        "*lppData moved by {moved} bytes although ERROR_MORE_DATA was returned; it must stay unchanged"
    )]
    PointerMovedWithoutData {
        /// How far the pointer moved, in bytes.
        moved: isize,
    },
    /// `*lpNumObjectTypes` is not 0 although no data was returned.
    #[error(
        "*lpNumObjectTypes = {count} (status {status}) although no data was returned; it must be 0"
    )]
    CountWithoutData {
        /// The return code.
        status: u32,
        /// The count returned.
        count: u32,
    },
    /// A byte of the buffer changed although no data was returned (the stricter check).
    #[error(
        "buffer byte at offset {offset} changed from {before:#04x} to {after:#04x} although no data was returned"
    )]
    BufferModifiedWithoutData {
        /// Offset of the first changed byte.
        offset: usize,
        /// The byte before the call.
        before: u8,
        /// The byte after the call.
        after: u8,
    },
    /// The returned pointer lies before the start of the buffer.
    #[error("*lppData returned {offset} bytes from the start of the buffer, before it")]
    PointerBeforeBuffer {
        /// Offset of the returned pointer (negative).
        offset: isize,
    },
    /// The returned pointer lies past the end of the buffer but inside the suffix guard: a
    /// buffer overrun.
    #[error(
        "*lppData returned at offset {offset}, past the end of the {capacity}-byte buffer: buffer overrun"
    )]
    BufferOverrun {
        /// Offset of the returned pointer.
        offset: isize,
        /// Size of the buffer.
        capacity: u32,
    },
    /// The returned pointer lies past the end of the suffix guard: the heap may be corrupt.
    #[error(
        "*lppData returned at offset {offset}, past the end of the guard region at {limit}: heap corruption"
    )]
    PointerPastGuard {
        /// Offset of the returned pointer.
        offset: isize,
        /// Offset of the end of the suffix guard.
        limit: usize,
    },
    /// A guard region was modified.
    #[error(
        "{region} guard region modified at byte {offset} of the region: {before:#04x} became {after:#04x}"
    )]
    GuardModified {
        /// Which region.
        region: GuardRegion,
        /// Offset of the first modified byte inside the region.
        offset: usize,
        /// The pattern byte.
        before: u8,
        /// The byte found.
        after: u8,
    },
    /// `*lpcbTotalBytes` is larger than the buffer.
    #[error("*lpcbTotalBytes = {size} exceeds the buffer size {capacity}")]
    SizeExceedsBuffer {
        /// The size returned.
        size: u32,
        /// Size of the buffer.
        capacity: u32,
    },
    /// The returned pointer is not the buffer start plus `*lpcbTotalBytes`.
    #[error("*lppData returned at offset {offset} but *lpcbTotalBytes = {size}; they must agree")]
    PointerSizeMismatch {
        /// Offset of the returned pointer.
        offset: isize,
        /// The size returned.
        size: u32,
    },
    /// `*lpcbTotalBytes` is not a multiple of 8.
    #[error("*lpcbTotalBytes = {size} is not a multiple of 8")]
    SizeUnaligned {
        /// The size returned.
        size: u32,
    },
    /// The returned objects break a structural rule (or their count disagrees with
    /// `*lpNumObjectTypes`).
    #[error("returned data is malformed {0}")]
    Structure(Violation),
}

/// What one call returned, after the checks passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallResult {
    /// The return code.
    pub status: u32,
    /// The returned bytes (`*lpcbTotalBytes` of them; empty when no data was returned).
    pub data: Vec<u8>,
    /// `*lpNumObjectTypes`.
    pub num_object_types: u32,
    /// The whole buffer as the call left it.
    pub buffer: Vec<u8>,
    /// What the validator found (test level 1 with data only).
    pub summary: Option<Summary>,
}

impl CallResult {
    /// Whether the call returned `ERROR_MORE_DATA`.
    pub const fn is_more_data(&self) -> bool {
        self.status == ERROR_MORE_DATA
    }
}

/// Perflib's side of one `CollectPerformanceData` call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Host {
    /// How calls are made and checked.
    pub config: HostConfig,
}

/// The caller's buffer between two guard regions.
struct Guarded {
    bytes: Vec<u8>,
    capacity: usize,
}

impl Guarded {
    fn new(capacity: usize, config: &HostConfig) -> Self {
        let guard = guard_bytes(config.guard_pattern);
        let mut bytes = Vec::with_capacity(GUARD_LEN + capacity + GUARD_LEN);
        bytes.extend_from_slice(&guard);
        bytes.resize(GUARD_LEN + capacity, config.buffer_fill);
        bytes.extend_from_slice(&guard);
        Self { bytes, capacity }
    }

    fn buffer(&self) -> &[u8] {
        self.bytes
            .get(GUARD_LEN..GUARD_LEN + self.capacity)
            .unwrap_or_default()
    }

    fn check_guards(&self, pattern: [u8; 4]) -> Result<(), HostViolation> {
        let expected = guard_bytes(pattern);
        let regions = [
            (GuardRegion::Prefix, 0),
            (GuardRegion::Suffix, GUARD_LEN + self.capacity),
        ];
        for (region, start) in regions {
            let guard = self.bytes.get(start..start + GUARD_LEN).unwrap_or_default();
            if guard == expected {
                continue;
            }
            if let Some((offset, (after, before))) = guard
                .iter()
                .copied()
                .zip(expected)
                .enumerate()
                .find(|(_, (a, b))| a != b)
            {
                return Err(HostViolation::GuardModified {
                    region,
                    offset,
                    before,
                    after,
                });
            }
        }
        Ok(())
    }

    /// The first byte of the buffer that differs from `fill`, with its value.
    fn first_changed(&self, fill: u8) -> Option<(usize, u8)> {
        let buffer = self.buffer();
        // Compare in blocks first: this runs for every buffer size in the property tests.
        let block = [fill; 64];
        let start = buffer
            .chunks(block.len())
            .position(|c| c != block.get(..c.len()).unwrap_or_default())?
            * block.len();
        buffer
            .iter()
            .copied()
            .enumerate()
            .skip(start)
            .find(|(_, b)| *b != fill)
    }
}

/// A guard region's contents: `pattern` repeated.
fn guard_bytes(pattern: [u8; 4]) -> [u8; GUARD_LEN] {
    let mut guard = [0u8; GUARD_LEN];
    for chunk in guard.chunks_exact_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern);
    }
    guard
}

impl Host {
    /// A host with `config`.
    pub const fn new(config: HostConfig) -> Self {
        Self { config }
    }

    /// Calls `collect` once with `query` (`None` passes NULL) and a buffer of `capacity` bytes,
    /// then checks the result as the configured test level requires.
    ///
    /// # Errors
    /// The first [`HostViolation`] found.
    pub fn call(
        &self,
        collect: &mut RawCollect<'_>,
        query: Option<&str>,
        capacity: u32,
    ) -> Result<CallResult, HostViolation> {
        let units = query.map(|q| q.encode_utf16().collect::<Vec<u16>>());
        self.call_utf16(collect, units.as_deref(), capacity)
    }

    /// As [`Host::call`], with the query as UTF-16 units (without the NUL, which the host adds).
    ///
    /// # Errors
    /// The first [`HostViolation`] found.
    pub fn call_utf16(
        &self,
        collect: &mut RawCollect<'_>,
        query: Option<&[u16]>,
        capacity: u32,
    ) -> Result<CallResult, HostViolation> {
        let cap = capacity as usize;
        let mut guarded = Guarded::new(cap, &self.config);
        let mut name: Option<Vec<u16>> = query.map(|q| q.iter().copied().chain([0]).collect());
        let name_ptr = name.as_mut().map_or(core::ptr::null_mut(), Vec::as_mut_ptr);
        let start: *mut u8 = guarded.bytes.as_mut_ptr().wrapping_add(GUARD_LEN);
        let mut data: *mut c_void = start.cast();
        let mut size = capacity;
        let mut count = self.config.garbage_count;
        let status = collect(name_ptr, &raw mut data, &raw mut size, &raw mut count);
        // Offsets only: the returned pointer is never dereferenced.
        let offset = (data as usize).wrapping_sub(start as usize).cast_signed();
        self.check(&guarded, status, offset, size, count)?;
        let buffer = guarded.buffer().to_vec();
        let returned = if status == ERROR_SUCCESS {
            buffer.get(..(size as usize).min(cap)).unwrap_or_default()
        } else {
            &[]
        };
        let summary = if self.config.test_level.checks_contents() && status == ERROR_SUCCESS {
            Some(
                validate::validate_objects(returned, count as usize, expect_for(query))
                    .map_err(HostViolation::Structure)?,
            )
        } else {
            None
        };
        Ok(CallResult {
            status,
            data: returned.to_vec(),
            num_object_types: count,
            buffer,
            summary,
        })
    }

    /// Calls an exported `CollectPerformanceData` through [`Host::call`].
    ///
    /// # Safety
    /// `f` must honour the pointer side of its contract well enough not to corrupt memory: it
    /// may write only inside the buffer and its guard regions and into the two `u32` outputs,
    /// and must not keep any of the pointers after returning.
    ///
    /// # Errors
    /// The first [`HostViolation`] found.
    pub unsafe fn call_extern(
        &self,
        f: CollectFn,
        query: Option<&str>,
        capacity: u32,
    ) -> Result<CallResult, HostViolation> {
        let mut collect = |name, data, size, count| {
            // SAFETY: the host passes valid pointers (see `RawCollect`); that `f` stays inside
            // them is this function's precondition.
            unsafe { f(name, data, size, count) }
        };
        self.call(&mut collect, query, capacity)
    }

    /// Serves `objects` with pcw-core's `collect` through [`collect_sources`] and checks the
    /// call: the reference provider.
    ///
    /// # Errors
    /// The first [`HostViolation`] found.
    pub fn call_sources(
        &self,
        objects: &[&dyn ObjectSource],
        query: Option<&str>,
        capacity: u32,
    ) -> Result<CallResult, HostViolation> {
        let mut collect = |name, data, size, count| {
            // SAFETY: `Host::call` passes pointers valid as `RawCollect` describes, which is
            // what `collect_sources` requires.
            unsafe { collect_sources(objects, name, data, size, count) }
        };
        self.call(&mut collect, query, capacity)
    }

    fn check(
        &self,
        guarded: &Guarded,
        status: u32,
        offset: isize,
        size: u32,
        count: u32,
    ) -> Result<(), HostViolation> {
        let level = self.config.test_level;
        if !level.checks_pointers() {
            return Ok(());
        }
        if level.checks_contents() && status != ERROR_SUCCESS && status != ERROR_MORE_DATA {
            return Err(HostViolation::UnexpectedStatus { status });
        }
        let no_data = status != ERROR_SUCCESS || (size == 0 && offset == 0);
        if status == ERROR_MORE_DATA {
            if offset != 0 {
                return Err(HostViolation::PointerMovedWithoutData { moved: offset });
            }
            if size != 0 {
                return Err(HostViolation::SizeOnMoreData { size });
            }
        }
        if status == ERROR_SUCCESS {
            Self::check_pointer(guarded.capacity, offset)?;
        }
        guarded.check_guards(self.config.guard_pattern)?;
        if no_data {
            if level.checks_contents() && count != 0 {
                return Err(HostViolation::CountWithoutData { status, count });
            }
            if level.checks_contents() && self.config.check_untouched_on_failure {
                let fill = self.config.buffer_fill;
                if let Some((offset, after)) = guarded.first_changed(fill) {
                    return Err(HostViolation::BufferModifiedWithoutData {
                        offset,
                        before: fill,
                        after,
                    });
                }
            }
            return Ok(());
        }
        let capacity = u32::try_from(guarded.capacity).unwrap_or(u32::MAX);
        if size > capacity {
            return Err(HostViolation::SizeExceedsBuffer { size, capacity });
        }
        if usize::try_from(offset).ok() != Some(size as usize) {
            return Err(HostViolation::PointerSizeMismatch { offset, size });
        }
        if !size.is_multiple_of(8) {
            return Err(HostViolation::SizeUnaligned { size });
        }
        Ok(())
    }

    fn check_pointer(capacity: usize, offset: isize) -> Result<(), HostViolation> {
        let Ok(at) = usize::try_from(offset) else {
            return Err(HostViolation::PointerBeforeBuffer { offset });
        };
        let limit = capacity + GUARD_LEN;
        if at > limit {
            return Err(HostViolation::PointerPastGuard { offset, limit });
        }
        if at > capacity {
            return Err(HostViolation::BufferOverrun {
                offset,
                capacity: u32::try_from(capacity).unwrap_or(u32::MAX),
            });
        }
        Ok(())
    }
}

/// Which `NumInstances` forms a reply to `query` may use.
fn expect_for(query: Option<&[u16]>) -> Expect {
    match query::classify(query) {
        Query::Metadata { .. } => Expect::Metadata,
        _ => Expect::Data,
    }
}

/// `CollectPerformanceData` for `objects`, served by [`pcw_core::v1::collect::collect`]: the
/// raw-pointer adapter a perf DLL export is made of. Reads the query up to its NUL, lends the
/// buffer to `collect` as a slice, and writes the three outputs as the outcome says.
///
/// Null `lpp_data`, `lpcb_total_bytes` or `lp_num_object_types` get `ERROR_SUCCESS` and nothing
/// written; a null buffer pointer is a buffer of 0 bytes.
///
/// # Safety
/// `lp_value_name` is null or points to a readable NUL-terminated UTF-16 string; each other
/// pointer is null or valid for reads and writes of its pointee; `*lpp_data` is null or points
/// to `*lpcb_total_bytes` writable bytes that nothing else accesses during the call.
pub unsafe fn collect_sources(
    objects: &[&dyn ObjectSource],
    lp_value_name: *mut u16,
    lpp_data: *mut *mut c_void,
    lpcb_total_bytes: *mut u32,
    lp_num_object_types: *mut u32,
) -> u32 {
    if lpp_data.is_null() || lpcb_total_bytes.is_null() || lp_num_object_types.is_null() {
        return ERROR_SUCCESS;
    }
    let query: Option<&[u16]> = if lp_value_name.is_null() {
        None
    } else {
        let mut len = 0usize;
        // SAFETY: the string is readable up to and including its NUL (precondition), and the
        // loop stops at the NUL.
        while unsafe { lp_value_name.wrapping_add(len).read() } != 0 {
            len += 1;
        }
        // SAFETY: `len` units before the NUL were just read, so they are readable; nothing
        // writes the query during the call.
        Some(unsafe { core::slice::from_raw_parts(lp_value_name, len) })
    };
    // SAFETY: `lpp_data` is valid for reads (precondition).
    let start = unsafe { lpp_data.read() }.cast::<u8>();
    // SAFETY: `lpcb_total_bytes` is valid for reads (precondition).
    let capacity = unsafe { lpcb_total_bytes.read() } as usize;
    let buf: &mut [u8] = if start.is_null() || capacity == 0 {
        &mut []
    } else {
        // SAFETY: `start` points to `capacity` writable bytes that nothing else accesses during
        // the call (precondition).
        unsafe { core::slice::from_raw_parts_mut(start, capacity) }
    };
    let outcome = collect::collect(query, objects, buf);
    let bytes = outcome.bytes();
    if bytes > 0 {
        // SAFETY: `lpp_data` is valid for writes (precondition).
        unsafe { lpp_data.write(start.wrapping_add(bytes).cast()) };
    }
    // `collect` bounds both values by the buffer size and `MAX_OBJECTS`, which fit in u32.
    let total = u32::try_from(bytes).unwrap_or(0);
    let count = u32::try_from(outcome.objects()).unwrap_or(0);
    // SAFETY: `lpcb_total_bytes` is valid for writes (precondition).
    unsafe { lpcb_total_bytes.write(total) };
    // SAFETY: `lp_num_object_types` is valid for writes (precondition).
    unsafe { lp_num_object_types.write(count) };
    outcome.status()
}
