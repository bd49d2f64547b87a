// SPDX-License-Identifier: MIT OR Apache-2.0
//! The snapshot scenario (the driver↔DLL path of the V1 shim): N instances of a 4-counter set
//! encoded with `pcw_core::snapshot::SnapshotWriter` (what the driver does for
//! `IOCTL_PCW_SNAPSHOT`) and decoded as the DLL does before writing V1 objects
//! (`Snapshot::parse` and its checks; the V1 writer then copies the records), each
//! compared with a `memcpy` of the snapshot's bytes.

use pcw_core::snapshot::{
    CounterSizes, PARENT_NONE, Record, Snapshot, SnapshotError, SnapshotHeader, SnapshotWriter,
};

use crate::utf16;

/// Counters per instance (the V1 scenario's object has the same: [`crate::v1::V1Object`]).
pub const COUNTERS: usize = 4;

/// The counters' sizes, as the snapshot carries them: two `PERF_COUNTER_RAWCOUNT` (4 bytes),
/// two `PERF_COUNTER_BULK_COUNT` (8 bytes).
pub const SIZES: [u8; COUNTERS] = [4, 4, 8, 8];

/// [`SIZES`] as the snapshot writer's batch call takes them.
pub struct Sizes;
impl CounterSizes<COUNTERS> for Sizes {
    const SIZES: [u8; COUNTERS] = SIZES;
}

/// The data to encode: the instances of the V1 scenario's object too ([`crate::v1::V1Object`]
/// encodes through this), so both scenarios measure one copy of the driver's loop.
pub struct SnapshotData {
    names: Vec<Vec<u16>>,
    values: Vec<[u64; COUNTERS]>,
}

/// The snapshot's clocks; `perf_time` is the V1 object's `PerfTime` ([`crate::v1::V1Object`]).
const HEADER: SnapshotHeader = SnapshotHeader {
    perf_time: 123_456_789,
    perf_freq: 10_000_000,
    system_time: crate::NOOP_TIME,
};

/// How long the instances' names are. The writer copies names of 8 to 16 UTF-16 units inline
/// and others another way, so an optimisation measured on one length can cost the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameLength {
    /// `Queue 000000`, …: 12 units, the scenarios' names.
    Queue,
    /// `Q000`, …: 4 units.
    Short,
    /// `Queue 000000 of the receive side of adapter`, …: 43 units.
    Long,
}

impl NameLength {
    /// Every length, the scenarios' own first.
    pub const ALL: [Self; 3] = [Self::Queue, Self::Short, Self::Long];

    /// Instance `i`'s name.
    pub fn name(self, i: usize) -> String {
        match self {
            Self::Queue => format!("Queue {i:06}"),
            Self::Short => format!("Q{:03}", i % 1000),
            Self::Long => format!("Queue {i:06} of the receive side of adapter"),
        }
    }

    /// What a case's variant adds for this length: nothing for the scenarios' own names.
    pub fn suffix(self) -> &'static str {
        match self {
            Self::Queue => "",
            Self::Short => "-short",
            Self::Long => "-long",
        }
    }
}

impl SnapshotData {
    /// `n` instances named `Queue 000000`, ….
    pub fn new(n: usize) -> Self {
        Self::with_names(n, NameLength::Queue)
    }

    /// `n` instances named as `names` says.
    pub fn with_names(n: usize, names: NameLength) -> Self {
        Self {
            names: (0..n).map(|i| utf16(&names.name(i))).collect(),
            values: (0..n as u64)
                .map(|i| [i, i * 3, i << 33 | 7, u64::MAX - i])
                .collect(),
        }
    }

    /// The instances' names.
    pub fn names(&self) -> &[Vec<u16>] {
        &self.names
    }

    /// The instances' values, one array per instance.
    pub fn values(&self) -> &[[u64; COUNTERS]] {
        &self.values
    }

    /// The bytes the snapshot takes.
    ///
    /// # Panics
    /// If the data cannot be encoded (a bench setup error).
    pub fn len(&self) -> usize {
        let mut w = SnapshotWriter::measuring(HEADER);
        self.write(&mut w).expect("measurable");
        w.finish().expect("measurable")
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The driver's side: the set's sizes, then its records in one batch, numbered from 0 (ids
    /// wrap at 2^32, as the writer's set of at most `MAX_INSTANCES` never reaches).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "ids are positions below the writer's instance limit; a checked conversion per \
                  record cost the loop 2 instructions (callgrind)"
    )]
    fn write(&self, w: &mut SnapshotWriter<'_>) -> Result<(), SnapshotError> {
        let count = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        w.begin_set(0, true, &SIZES, count)?;
        w.instances::<Sizes, _, _>(self.names.iter().zip(&self.values).enumerate().map(
            |(i, (name, values))| Record {
                id: i as u32,
                parent: PARENT_NONE,
                name,
                values: *values,
            },
        ))
    }

    /// Encodes into `buf`; the bytes written.
    ///
    /// # Errors
    /// As `SnapshotWriter`.
    #[inline(never)]
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, SnapshotError> {
        let mut w = SnapshotWriter::new(buf, HEADER);
        self.write(&mut w)?;
        w.finish()
    }
}

/// What the DLL does with a snapshot before writing V1 objects from it: `Snapshot::parse`
/// (which checks every length, name, padding byte and offset) and its own checks; the records
/// are then copied by the V1 writer. Returns a figure of the snapshot so nothing is
/// optimised away.
///
/// # Errors
/// As `Snapshot::parse`.
#[inline(never)]
pub fn decode(bytes: &[u8]) -> Result<u64, SnapshotError> {
    let snapshot = Snapshot::parse(bytes)?;
    let aligned = u64::from(dll_check(&snapshot));
    Ok(snapshot
        .sets()
        .map(|s| s.instance_count() as u64)
        .sum::<u64>()
        + aligned)
}

/// The DLL's check of a parsed snapshot before it builds its objects
/// (`pcw_perfdll::objects::check`): the set's kind is the object's.
pub fn dll_check(snapshot: &Snapshot<'_>) -> bool {
    snapshot.sets().all(|s| s.index() != 0 || s.multi())
}
