// SPDX-License-Identifier: MIT OR Apache-2.0
//! `RegQueryValueEx(HKEY_PERFORMANCE_DATA, query)`, simulated: a whole `PERF_DATA_BLOCK`
//! reply assembled from several providers (`docs/v1-format.md`, `docs/wine.md`; Microsoft: the
//! `CollectPerformanceData` reference page).
//!
//! Layout (the Windows behaviour Wine's tests assert): the 88-byte header, the computer name as
//! NUL-terminated UTF-16 at offset 88, `HeaderLength = (88 + SystemNameLength + 7) & !7` with
//! the padding bytes left untouched, then the objects of every provider in order, each provider
//! called through a checking [`Host`] with the room that is left. `TotalByteLength` and the
//! returned size are the end of the last object; `NumObjectTypes` is the sum of the providers'
//! counts; the times come from a [`SimClock`] the caller controls. A provider's
//! `ERROR_MORE_DATA` makes the whole query `ERROR_MORE_DATA`, with no size reported;
//! [`Perflib::query`] then grows the buffer by a fixed increment and retries, as consumers do
//! (`retrieving-counter-data.md`).
//!
//! [`Placement::WineCompat`] reproduces Wine's `query_perf_data` offset bug (`docs/wine.md`)
//! so that later tests can compare: objects start at `base + 88 + HeaderLength`, providers are
//! told 88 bytes more room than is left, `TotalByteLength` leaves the last 88 bytes out and
//! `DefaultObject` is 0. The default, [`Placement::Windows`], is correct.

use core::ffi::c_void;

use pcw_core::v1::collect::{ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::wire::{
    self, DataBlock, DataBlockRepr, PERF_DATA_REVISION, PERF_DATA_VERSION, SystemTime,
};
use pcw_core::v1::writer::ObjectSource;

use super::{CollectFn, Host, HostViolation, RawCollect, collect_sources};

const PDB: usize = wire::field::data_block::LEN;
/// `SystemNameOffset`: the name follows the 88-byte header.
const SYSTEM_NAME_OFFSET: u32 = 88;
const _: () = assert!(SYSTEM_NAME_OFFSET as usize == PDB);

/// The clock Perflib reads for the header's times; the caller sets and advances it, so replies
/// are deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimClock {
    /// `SystemTime` (UTC).
    pub system_time: SystemTime,
    /// `PerfTime`: performance-counter (QPC) ticks.
    pub perf_time: i64,
    /// `PerfFreq`: QPC ticks per second.
    pub perf_freq: i64,
    /// `PerfTime100nSec`: 100 ns units since 1601 (a `FILETIME`).
    pub perf_time_100nsec: i64,
}

impl Default for SimClock {
    /// 2026-01-01 00:00:00 UTC (a Thursday), a 10 MHz QPC at one hour of uptime.
    fn default() -> Self {
        Self {
            system_time: SystemTime {
                year: 2026,
                month: 1,
                day_of_week: 4,
                day: 1,
                hour: 0,
                minute: 0,
                second: 0,
                milliseconds: 0,
            },
            perf_time: 36_000_000_000,
            perf_freq: 10_000_000,
            // 2026-01-01T00:00:00Z as a FILETIME.
            perf_time_100nsec: 134_116_992_000_000_000,
        }
    }
}

impl SimClock {
    /// Advances `PerfTime` by `ticks` QPC ticks and `PerfTime100nSec` by the same duration
    /// (`SystemTime` is left for the caller to set).
    pub fn advance(&mut self, ticks: i64) {
        self.perf_time = self.perf_time.saturating_add(ticks);
        if self.perf_freq > 0 {
            let hns = i128::from(ticks) * 10_000_000 / i128::from(self.perf_freq);
            let hns = i64::try_from(hns).unwrap_or(if ticks < 0 { i64::MIN } else { i64::MAX });
            self.perf_time_100nsec = self.perf_time_100nsec.saturating_add(hns);
        }
    }
}

/// Where the objects go in the reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// At `HeaderLength`, as Windows does.
    #[default]
    Windows,
    /// At `88 + HeaderLength`, as Wine's `query_perf_data` does (`docs/wine.md`).
    WineCompat,
}

/// Why a query failed other than by `ERROR_MORE_DATA`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PerflibError {
    /// A provider broke the `CollectPerformanceData` contract (Windows would discard its data
    /// and log an event; the simulator stops).
    #[error("provider `{provider}` (#{index}): {violation}")]
    Provider {
        /// Name the provider was registered under.
        provider: String,
        /// Its position among the providers.
        index: usize,
        /// What it did.
        violation: HostViolation,
    },
    /// In [`Placement::WineCompat`], a provider's data would end past the caller's buffer:
    /// the overrun Wine really commits.
    #[error(
        "Wine-compat placement: a provider's data would end at byte {end} of a {len}-byte buffer, {} bytes past it",
        end - len
    )]
    WineOverrun {
        /// Where the data would end.
        end: usize,
        /// The caller's buffer size.
        len: usize,
    },
    /// [`Perflib::query`] reached its size limit without the reply fitting.
    #[error("the reply did not fit in {limit} bytes")]
    BufferLimit {
        /// The limit.
        limit: usize,
    },
    /// The computer name does not fit the 32-bit lengths of the header.
    #[error("the computer name is too long")]
    ComputerName,
}

/// What one [`Perflib::query_value`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryValue {
    /// `ERROR_SUCCESS`; the reply is the first `size` bytes of the buffer.
    Data {
        /// `*lpcbData` (equal to `TotalByteLength`).
        size: usize,
    },
    /// `ERROR_MORE_DATA`: the buffer is too small (no size is reported; grow and retry).
    MoreData,
}

/// How [`Perflib::query`] sizes its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grow {
    /// First buffer size.
    pub initial: usize,
    /// Bytes added after each `ERROR_MORE_DATA`.
    pub increment: usize,
    /// Largest buffer tried.
    pub limit: usize,
    /// Byte each new buffer is filled with before the query.
    pub fill: u8,
}

impl Default for Grow {
    /// 48 KiB growing by 16 KiB up to 64 MiB, filled with 0x77 (the Wine test's pattern).
    fn default() -> Self {
        Self {
            initial: 48 * 1024,
            increment: 16 * 1024,
            limit: 64 * 1024 * 1024,
            fill: 0x77,
        }
    }
}

/// One registered provider.
struct Provider<'a> {
    name: String,
    collect: Box<RawCollect<'a>>,
}

/// The `HKEY_PERFORMANCE_DATA` side of Perflib: a computer name, a clock and providers.
pub struct Perflib<'a> {
    /// The computer name written after the header.
    pub computer_name: String,
    /// The clock the header's times come from.
    pub clock: SimClock,
    /// The host that calls and checks each provider.
    pub host: Host,
    /// Where objects go.
    pub placement: Placement,
    /// `DefaultObject` (238, the Processor object, on Windows; Wine always writes 0).
    pub default_object: i32,
    providers: Vec<Provider<'a>>,
}

impl core::fmt::Debug for Perflib<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Perflib")
            .field("computer_name", &self.computer_name)
            .field("clock", &self.clock)
            .field("host", &self.host)
            .field("placement", &self.placement)
            .field("default_object", &self.default_object)
            .field(
                "providers",
                &self.providers.iter().map(|p| &p.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<'a> Perflib<'a> {
    /// A Perflib for `computer_name` with the default clock and host and no providers.
    pub fn new(computer_name: &str) -> Self {
        Self {
            computer_name: computer_name.to_owned(),
            clock: SimClock::default(),
            host: Host::default(),
            placement: Placement::Windows,
            default_object: 238,
            providers: Vec::new(),
        }
    }

    /// Registers a collect function given as a closure (see [`RawCollect`]).
    pub fn add_provider(
        &mut self,
        name: &str,
        collect: impl FnMut(*mut u16, *mut *mut c_void, *mut u32, *mut u32) -> u32 + 'a,
    ) {
        self.providers.push(Provider {
            name: name.to_owned(),
            collect: Box::new(collect),
        });
    }

    /// Registers `objects`, served by pcw-core's `collect` (see [`collect_sources`]).
    pub fn add_sources(&mut self, name: &str, objects: &'a [&'a dyn ObjectSource]) {
        self.add_provider(name, move |q, d, s, c| {
            // SAFETY: the host passes pointers valid as `RawCollect` describes, which is what
            // `collect_sources` requires.
            unsafe { collect_sources(objects, q, d, s, c) }
        });
    }

    /// Registers an exported `CollectPerformanceData`.
    ///
    /// # Safety
    /// As [`Host::call_extern`]: `f` may write only inside the buffer, its guard regions and
    /// the two `u32` outputs, and keeps none of the pointers.
    pub unsafe fn add_extern(&mut self, name: &str, f: CollectFn) {
        self.add_provider(name, move |q, d, s, c| {
            // SAFETY: the host passes valid pointers; that `f` stays inside them is this
            // function's precondition.
            unsafe { f(q, d, s, c) }
        });
    }

    /// `RegQueryValueEx(HKEY_PERFORMANCE_DATA, query, …, data, &size)` with `data.len()` as
    /// the size (`None` for a NULL data pointer). A NULL or empty query is sent to providers as
    /// `Global`, as Perflib and Wine do.
    ///
    /// # Errors
    /// A provider's [`HostViolation`], or a Wine-compat overrun.
    pub fn query_value(
        &mut self,
        query: Option<&str>,
        data: Option<&mut [u8]>,
    ) -> Result<QueryValue, PerflibError> {
        let Some(buf) = data else {
            return Ok(QueryValue::MoreData);
        };
        let name: Vec<u16> = self.computer_name.encode_utf16().chain([0]).collect();
        let name_len = name.len() * 2;
        let header_len = (PDB + name_len + 7) & !7;
        let name_len32 = u32::try_from(name_len).map_err(|_| PerflibError::ComputerName)?;
        let header_len32 = u32::try_from(header_len).map_err(|_| PerflibError::ComputerName)?;
        if buf.len() < header_len {
            return Ok(QueryValue::MoreData);
        }
        for (i, unit) in name.iter().enumerate() {
            if let Some(slot) = buf.get_mut(PDB + 2 * i..PDB + 2 * i + 2) {
                slot.copy_from_slice(&unit.to_le_bytes());
            }
        }
        let query = match query {
            None | Some("") => "Global",
            Some(q) => q,
        };
        let shift = match self.placement {
            Placement::Windows => 0,
            Placement::WineCompat => PDB,
        };
        // `told` is what providers are told is left; data goes at `told_at + shift`.
        let mut told_at = header_len;
        let mut objects = 0u32;
        for (index, p) in self.providers.iter_mut().enumerate() {
            let room = u32::try_from(buf.len() - told_at).unwrap_or(u32::MAX);
            let result = self
                .host
                .call(p.collect.as_mut(), Some(query), room)
                .map_err(|violation| PerflibError::Provider {
                    provider: p.name.clone(),
                    index,
                    violation,
                })?;
            if result.status == ERROR_MORE_DATA {
                return Ok(QueryValue::MoreData);
            }
            if result.status != ERROR_SUCCESS {
                // Only reachable below test level 1: an unknown code counts as no data.
                continue;
            }
            let at = told_at + shift;
            let end = at + result.data.len();
            let Some(dest) = buf.get_mut(at..end) else {
                return Err(PerflibError::WineOverrun {
                    end,
                    len: buf.len(),
                });
            };
            dest.copy_from_slice(&result.data);
            told_at += result.data.len();
            objects = objects.wrapping_add(result.num_object_types);
        }
        let total = u32::try_from(told_at).unwrap_or(u32::MAX);
        let header = DataBlockRepr {
            little_endian: 1,
            version: PERF_DATA_VERSION,
            revision: PERF_DATA_REVISION,
            total_byte_length: total,
            header_length: header_len32,
            num_object_types: objects,
            default_object: match self.placement {
                Placement::Windows => self.default_object,
                Placement::WineCompat => 0,
            },
            system_time: self.clock.system_time,
            perf_time: self.clock.perf_time,
            perf_freq: self.clock.perf_freq,
            perf_time_100nsec: self.clock.perf_time_100nsec,
            system_name_length: name_len32,
            system_name_offset: SYSTEM_NAME_OFFSET,
        };
        if let Ok(mut view) = DataBlock::new_checked(&mut *buf) {
            header.emit(&mut view);
        }
        Ok(QueryValue::Data { size: told_at })
    }

    /// Queries with a buffer that grows by `grow.increment` after each `ERROR_MORE_DATA`, the
    /// way consumers call `RegQueryValueEx`; returns the reply (`TotalByteLength` bytes).
    ///
    /// # Errors
    /// As [`Perflib::query_value`], or [`PerflibError::BufferLimit`].
    pub fn query(&mut self, query: Option<&str>, grow: Grow) -> Result<Vec<u8>, PerflibError> {
        let mut size = grow.initial;
        loop {
            let mut buf = vec![grow.fill; size];
            match self.query_value(query, Some(&mut buf))? {
                QueryValue::Data { size } => {
                    buf.truncate(size);
                    return Ok(buf);
                }
                QueryValue::MoreData => {
                    if size >= grow.limit || grow.increment == 0 {
                        return Err(PerflibError::BufferLimit { limit: grow.limit });
                    }
                    size = size.saturating_add(grow.increment).min(grow.limit);
                }
            }
        }
    }
}
