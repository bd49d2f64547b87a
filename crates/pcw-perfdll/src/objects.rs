//! Snapshot → V1 objects (issue 5 point 3): each counterset of the DLL's catalog becomes one
//! `pcw_core::v1::writer::ObjectSource` over the validated snapshot, so pcw-core's `collect`
//! does the query, selection and all-or-nothing writing of seed 000. Nothing here allocates.
//!
//! Mapping, per catalog object (manifest index `i`), from the snapshot set of index `i`:
//! * kind: the manifest's (a snapshot whose flag disagrees is refused in [`check`]);
//! * instances: the set's, in order; names as UTF-16 (`UniqueID = PERF_NO_UNIQUE_ID`, V1's
//!   name-identified convention); `ParentObjectTitleIndex = 0` since the manifest declares no
//!   parent objects (the snapshot's parent positions are therefore not used);
//! * values: the instance's raw `u64`s in manifest order, one per counter definition, lent
//!   without copying (pcw-core writes 4-byte counters from the low half); a set with a
//!   different counter count makes pcw-core refuse the reply (`ValueCount`), which is logged;
//! * a single-instance object takes the set's one instance; while the driver has none yet
//!   (or the set is absent), its counters read 0;
//! * a multi-instance object whose set is absent has no instances (`NumInstances = 0`);
//! * `PerfTime`/`PerfFreq`: the values of the counters the manifest names as `perfTimeID`/
//!   `perfFreqID` (object-timer counters such as `PERF_ELAPSED_TIME`), else the snapshot's clock.

use pcw_core::snapshot::{MAX_COUNTERS, SetView, Snapshot};
use pcw_core::v1::wire::PERF_NO_UNIQUE_ID;
use pcw_core::v1::writer::{
    CounterSpec, InstanceDesc, InstanceKind, InstanceName, InstanceSpec, ObjectHeader, ObjectSource,
};

use crate::buffer::units;
use crate::tables::CatalogObject;

/// Why a snapshot does not fit the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// A set's single/multi flag disagrees with the manifest; the set's index.
    Kind(u16),
    /// A name could not be lent as UTF-16 (misaligned bytes or a big-endian host).
    Name,
    /// Values could not be lent as `u64`s (misaligned bytes or a big-endian host).
    Values,
}

/// Checks what the writer cannot: kinds agree and names and values can be lent.
///
/// # Errors
/// The first [`Mismatch`].
pub fn check(catalog: &[CatalogObject], snapshot: &Snapshot<'_>) -> Result<(), Mismatch> {
    for set in snapshot.sets() {
        let Some(entry) = catalog.get(usize::from(set.index())) else {
            continue;
        };
        if set.multi() != entry.table.multi {
            return Err(Mismatch::Kind(set.index()));
        }
        for i in set.instances() {
            if units(i.name_bytes()).is_none() {
                return Err(Mismatch::Name);
            }
            if words(i.values_bytes()).is_none() {
                return Err(Mismatch::Values);
            }
        }
    }
    Ok(())
}

/// One catalog object over one snapshot.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotObject<'a> {
    entry: &'a CatalogObject,
    set: Option<SetView<'a>>,
    perf_time: i64,
    perf_freq: i64,
}

impl<'a> SnapshotObject<'a> {
    /// The object for catalog entry `position` (its manifest index) over `snapshot`.
    pub fn new(entry: &'a CatalogObject, position: usize, snapshot: &Snapshot<'a>) -> Self {
        let set = u16::try_from(position)
            .ok()
            .and_then(|i| snapshot.find_set(i));
        let header = snapshot.header();
        let first = set.and_then(|s| s.instance(0));
        let counter_value = |c: Option<usize>| {
            c.and_then(|c| first.and_then(|i| i.value(c)))
                .map(u64::cast_signed)
        };
        let perf_time = counter_value(entry.table.perf_time_counter).unwrap_or(header.perf_time);
        let perf_freq = counter_value(entry.table.perf_freq_counter).unwrap_or(header.perf_freq);
        Self {
            entry,
            set,
            perf_time,
            perf_freq,
        }
    }
}

impl ObjectSource for SnapshotObject<'_> {
    fn header(&self) -> ObjectHeader {
        ObjectHeader {
            perf_time: self.perf_time,
            perf_freq: self.perf_freq,
            ..self.entry.header
        }
    }

    fn counters(&self) -> &[CounterSpec] {
        &self.entry.counters
    }

    fn kind(&self) -> InstanceKind {
        if self.entry.table.multi {
            InstanceKind::Multi
        } else {
            InstanceKind::Single
        }
    }

    fn instance_count(&self) -> usize {
        self.set.map_or(0, |s| s.instance_count())
    }

    fn instance(&self, index: usize) -> InstanceDesc<'_> {
        let Some(i) = self.set.and_then(|s| s.instance(index)) else {
            // A single-instance object without data yet reads zeros.
            let values = if self.entry.table.multi {
                &[][..]
            } else {
                ZEROS.get(..self.entry.counters.len()).unwrap_or_default()
            };
            return InstanceDesc {
                values,
                ..InstanceDesc::EMPTY
            };
        };
        InstanceDesc {
            spec: InstanceSpec {
                // Checked by the snapshot's parser: the writer only adds up lengths.
                name: InstanceName::Checked(i.checked_name()),
                unique_id: PERF_NO_UNIQUE_ID,
                parent_title_index: 0,
                parent_instance: 0,
            },
            // `check` made sure values can be lent; an empty slice makes the writer refuse.
            values: words(i.values_bytes()).unwrap_or_default(),
        }
    }
}

/// The values of a single-instance object the driver has no data for yet (a snapshot set has
/// at most [`MAX_COUNTERS`] counters).
static ZEROS: [u64; MAX_COUNTERS as usize] = [0; MAX_COUNTERS as usize];

/// `bytes` (little-endian `u64`s) as `u64`s without copying, when they are 8-aligned and the
/// host is little-endian (every Windows target); `None` otherwise. The snapshot format places
/// values at multiples of 8 from its start, and the DLL's buffer is 8-aligned.
pub fn words(bytes: &[u8]) -> Option<&[u64]> {
    if cfg!(target_endian = "big") || !bytes.len().is_multiple_of(8) {
        return None;
    }
    // SAFETY: every bit pattern is a valid `u64`; `align_to` only puts correctly aligned,
    // whole `u64`s in the middle part.
    let (head, middle, tail) = unsafe { bytes.align_to::<u64>() };
    (head.is_empty() && tail.is_empty()).then_some(middle)
}
