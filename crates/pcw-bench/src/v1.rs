// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 collect scenario: one multi-instance object of N instances and 4 counters (two
//! `PERF_COUNTER_RAWCOUNT`, two `PERF_COUNTER_BULK_COUNT`), described for pcw-core's `collect`
//! twice — as the DLL hands it over (a `SetObject` copying a snapshot's records) and as fixed
//! data (an `ObjectDesc`) — and once for the PerfGen-style C baseline (a `PG_OBJECT`), plus the
//! `memcpy` floor of the same output size.

use pcw_core::counter_type::{CounterType, DetailLevel};
use pcw_core::snapshot::{Snapshot, SnapshotError};
use pcw_core::v1::collect::{self, Collected};
use pcw_core::v1::from_snapshot::SetObject;
use pcw_core::v1::writer::{
    CheckedCounters, CheckedName, CounterSpec, InstanceDesc, InstanceKind, InstanceName,
    InstanceSpec, InstancesDesc, ObjectDesc, ObjectHeader, ObjectSource, assign_offsets,
};

use crate::c::{self, PgCounter, PgInstance, PgObject};
use crate::snap::{COUNTERS, NameLength, SIZES, SnapshotData};

/// [`COUNTERS`] as the C side's `u32`.
const COUNTERS_U32: u32 = 4;
const _: () = assert!(COUNTERS_U32 as usize == COUNTERS);

/// N instances' names and values, and both descriptions of the object.
pub struct V1Object {
    /// The instances, as the driver encodes them (the snapshot scenario's data).
    data: SnapshotData,
    counters: [CounterSpec; COUNTERS],
    /// `counters`, checked once (as the DLL's catalog checks its definitions when it builds
    /// them).
    checked: CheckedCounters<[CounterSpec; COUNTERS]>,
    block_len: u32,
    header: ObjectHeader,
    c_counters: [PgCounter; COUNTERS],
    c_instances: Vec<PgInstance>,
}

impl V1Object {
    /// An object of `n` instances named `Queue 000000`, … with distinct values.
    ///
    /// # Panics
    /// Never for the layouts used here.
    pub fn new(n: usize) -> Self {
        Self::with_names(n, NameLength::Queue)
    }

    /// An object of `n` instances named as `names` says.
    ///
    /// # Panics
    /// Never for the layouts used here.
    pub fn with_names(n: usize, names: NameLength) -> Self {
        let data = SnapshotData::with_names(n, names);
        let counter = |index: u32, counter_type: CounterType, size: u32| CounterSpec {
            name_title_index: 1002 + 2 * index,
            help_title_index: 1003 + 2 * index,
            default_scale: 0,
            detail_level: DetailLevel::Novice,
            counter_type,
            size,
            offset: 0,
        };
        let mut counters = [
            counter(0, CounterType::Rawcount, 4),
            counter(1, CounterType::Rawcount, 4),
            counter(2, CounterType::BulkCount, 8),
            counter(3, CounterType::BulkCount, 8),
        ];
        let block_len = assign_offsets(&mut counters).expect("fixed layout");
        assert!(
            counters
                .iter()
                .zip(SIZES)
                .all(|(c, s)| c.size == u32::from(s)),
            "SIZES describes the counters"
        );
        let header = ObjectHeader {
            name_title_index: 1000,
            help_title_index: 1001,
            detail_level: DetailLevel::Novice,
            default_counter: 0,
            perf_time: 123_456_789,
            perf_freq: 10_000_000,
            costly: false,
        };
        let c_counters = counters.map(|c| PgCounter {
            name_title_index: c.name_title_index,
            help_title_index: c.help_title_index,
            default_scale: c.default_scale,
            detail_level: c.detail_level.raw(),
            counter_type: c.counter_type.raw(),
            size: c.size,
            offset: c.offset,
        });
        let c_instances = data
            .names()
            .iter()
            .zip(data.values())
            .map(|(name, v)| {
                let mut values = [0u64; 8];
                values[..COUNTERS].copy_from_slice(v);
                PgInstance {
                    name: name.as_ptr(),
                    name_units: u32::try_from(name.len()).expect("short name"),
                    unique_id: -1,
                    values,
                }
            })
            .collect();
        Self {
            data,
            counters,
            checked: {
                let mut checked = CheckedCounters::new(counters).expect("checked layout");
                checked.render_definitions().expect("memory");
                checked
            },
            block_len,
            header,
            c_counters,
            c_instances,
        }
    }

    /// The instance descriptions an [`ObjectDesc`] borrows (built once, outside the timing),
    /// with names checked here once, as the DLL's names are by its snapshot parser.
    ///
    /// # Panics
    /// Never for the names of [`Self::new`] (short, no NUL) on a little-endian host.
    pub fn instances(&self) -> Vec<InstanceDesc<'_>> {
        self.data
            .names()
            .iter()
            .zip(self.data.values())
            .map(|(name, values)| InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::Checked(CheckedName::new(name).expect("short, no NUL")),
                    unique_id: pcw_core::v1::wire::PERF_NO_UNIQUE_ID,
                    parent_title_index: 0,
                    parent_instance: 0,
                },
                values,
            })
            .collect()
    }

    /// Whole 8-byte words of the longest name's area (name, NUL, padding).
    pub fn max_name_words(&self) -> usize {
        self.data
            .names()
            .iter()
            .map(|n| (2 * n.len() + 2).div_ceil(8))
            .max()
            .unwrap_or(0)
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.data.names().len()
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The instances' names and values as the driver writes them for `IOCTL_PCW_SNAPSHOT`
    /// (`src/snapshot.rs`): one multi-instance set of 4 counters, into `buf`; the bytes of the
    /// snapshot.
    ///
    /// # Errors
    /// As `SnapshotWriter` (`NoSpace` with the size needed).
    #[inline(never)]
    pub fn encode_snapshot(&self, buf: &mut [u8]) -> Result<usize, SnapshotError> {
        self.data.encode(buf)
    }

    /// The object as the DLL hands it to the writer: set 0 of `snapshot`, whose records it
    /// copies.
    pub fn set_object<'a>(&'a self, snapshot: &Snapshot<'a>) -> SetObject<'a> {
        SetObject::checked(
            ObjectHeader {
                perf_time: snapshot.header().perf_time,
                ..self.header
            },
            &self.checked,
            InstanceKind::Multi,
            snapshot.find_set(0),
        )
    }

    /// The object for pcw-core.
    pub fn desc<'a>(&'a self, instances: &'a [InstanceDesc<'a>]) -> ObjectDesc<'a> {
        ObjectDesc {
            header: self.header,
            counters: &self.counters,
            instances: InstancesDesc::Multi(instances),
        }
    }

    /// The object for the C baseline (points into `self`).
    pub fn pg(&self) -> PgObject {
        PgObject {
            name_title_index: self.header.name_title_index,
            help_title_index: self.header.help_title_index,
            detail_level: self.header.detail_level.raw(),
            default_counter: self.header.default_counter,
            perf_time: self.header.perf_time,
            perf_freq: self.header.perf_freq,
            counters: self.c_counters.as_ptr(),
            num_counters: COUNTERS_U32,
            block_length: self.block_len,
            instances: self.c_instances.as_ptr(),
            num_instances: self.c_instances.len(),
        }
    }
}

/// An 8-aligned output buffer of at least `len` bytes, poisoned.
pub fn out_buffer(len: usize) -> Vec<u64> {
    vec![0xA5A5_A5A5_A5A5_A5A5; len.div_ceil(8)]
}

/// Bytes of an 8-aligned buffer.
pub fn bytes_mut(buf: &mut [u64]) -> &mut [u8] {
    let len = size_of_val(buf);
    // SAFETY: `buf` is valid for `len` bytes, any byte pattern is a valid u8 and u64 alike, and
    // the returned slice borrows `buf` mutably for its lifetime.
    unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), len) }
}

/// `Global`, NUL-terminated, as Perflib passes it.
const GLOBAL: [u16; 7] = [71, 108, 111, 98, 97, 108, 0];

/// One `CollectPerformanceData` (`Global` query) by pcw-core over the DLL's source.
#[inline(never)]
pub fn collect_ours(object: &SetObject<'_>, buf: &mut [u8]) -> Collected {
    collect::collect(Some(&GLOBAL), &[object], buf)
}

/// One `CollectPerformanceData` (`Global` query) by pcw-core over fixed data.
#[inline(never)]
pub fn collect_desc(object: &ObjectDesc<'_>, buf: &mut [u8]) -> Collected {
    collect::collect(Some(&GLOBAL), &[object as &dyn ObjectSource], buf)
}

/// An 8-aligned buffer holding `len` bytes of `words`.
pub fn bytes_of(words: &[u64], len: usize) -> &[u8] {
    // SAFETY: `words` is valid for `8 × words.len()` initialised bytes, `u8` has alignment 1,
    // and the shared borrow keeps them alive; `min` keeps the length inside.
    unsafe { core::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len.min(size_of_val(words))) }
}

/// One collect by the PerfGen-style C baseline; the bytes written (0 = no space).
#[inline(never)]
pub fn collect_c(object: &PgObject, buf: &mut [u8]) -> usize {
    // SAFETY: `object` points into a live `V1Object`; `buf` is writable for its length.
    unsafe { c::pg_collect(object, buf.as_mut_ptr(), buf.len()) }
}

/// The floor: `memcpy` of `src` into `dst`.
#[inline(never)]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    c::memcpy(dst, src);
}
