// SPDX-License-Identifier: MIT OR Apache-2.0
//! Snapshot → V1 objects: each counterset of the DLL's catalog becomes one
//! `pcw_core::v1::writer::ObjectSource` over the validated snapshot, so pcw-core's `collect`
//! does the query, selection and all-or-nothing writing the `CollectPerformanceData` contract
//! asks for. Nothing here allocates.
//!
//! Mapping, per catalog object (manifest index `i`), from the snapshot set of index `i`:
//! * kind: the manifest's (a snapshot whose flag disagrees is refused in [`check`]);
//! * instances: the set's, in order, copied by `pcw_core::v1::from_snapshot::SetObject`: the
//!   snapshot's records are the V1 instance definitions, names and counter blocks
//!   (`UniqueID = PERF_NO_UNIQUE_ID`, V1's name-identified convention;
//!   `ParentObjectTitleIndex = 0` since the manifest declares no parent objects, so the
//!   snapshot's parent identities are not used);
//! * values: the counter blocks as the driver laid them out from its descriptors' sizes, copied
//!   when they agree with the catalog's counter definitions (sizes and offsets); a set with
//!   instances laid out otherwise makes pcw-core refuse the reply (`ValueCount`), which is
//!   logged;
//! * sizes: a set's reply size follows from its length, so nothing is walked before copying;
//! * a single-instance object takes the set's one instance; while the driver has none yet
//!   (or the set is absent), its counters read 0;
//! * a multi-instance object whose set is absent has no instances (`NumInstances = 0`);
//! * `PerfTime`/`PerfFreq`: the values of the counters the manifest names as `perfTimeID`/
//!   `perfFreqID` (object-timer counters such as `PERF_ELAPSED_TIME`), else the snapshot's clock.

use pcw_core::snapshot::Snapshot;
use pcw_core::v1::from_snapshot::SetObject;
use pcw_core::v1::writer::{InstanceKind, ObjectHeader};

use crate::tables::CatalogObject;

/// Why a snapshot does not fit the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// A set's single/multi flag disagrees with the manifest; the set's index.
    Kind(u16),
}

/// Checks what the writer cannot: kinds agree. O(sets), not O(instances): `Snapshot::parse`
/// has checked every record, and the writer checks each set's counter layout.
///
/// # Errors
/// The first [`Mismatch`].
pub fn check(catalog: &[CatalogObject], snapshot: &Snapshot<'_>) -> Result<(), Mismatch> {
    for set in snapshot.sets() {
        let Some(entry) = catalog.get(usize::from(set.index())) else {
            continue;
        };
        if set.multi() != entry.table.has_instances {
            return Err(Mismatch::Kind(set.index()));
        }
    }
    Ok(())
}

/// The object for catalog entry `position` (its manifest index) over `snapshot`: pcw-core's
/// reader of one snapshot set, with the catalog's definitions and the object's clocks.
pub fn object<'a>(
    entry: &'a CatalogObject,
    position: usize,
    snapshot: &Snapshot<'a>,
) -> SetObject<'a> {
    let set = u16::try_from(position)
        .ok()
        .and_then(|i| snapshot.find_set(i));
    let header = snapshot.header();
    let first = set.and_then(|s| s.instance(0));
    let counter_value = |c: Option<usize>| {
        c.and_then(|c| first.and_then(|i| i.value(c)))
            .map(u64::cast_signed)
    };
    let header = ObjectHeader {
        perf_time: counter_value(entry.table.perf_time_counter).unwrap_or(header.perf_time),
        perf_freq: counter_value(entry.table.perf_freq_counter).unwrap_or(header.perf_freq),
        ..entry.header
    };
    let kind = if entry.table.has_instances {
        InstanceKind::Multi
    } else {
        InstanceKind::Single
    };
    SetObject::checked(header, &entry.counters, kind, set)
}
