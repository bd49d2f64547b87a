// SPDX-License-Identifier: MIT OR Apache-2.0
//! The DLL's object and counter tables, generated at build time by pcw-gen from the
//! driver's manifest, and the [`Catalog`] Open builds from them: `PERF_OBJECT_TYPE` and
//! `PERF_COUNTER_DEFINITION` fields with title indexes = First Counter / First Help + the
//! lodctr symbol offset (`docs/v1-format.md`, "Installation"), base counters at name index 0
//! as Windows' own objects have them (the `PERF_COUNTER_DEFINITION` page says it should be zero
//! for them), counter offsets from pcw-core's `assign_offsets`.

use pcw_core::counter_type::{CounterType, DetailLevel};
use pcw_core::v1::writer::{
    CheckedCounters, CounterSpec, ObjectHeader, WriteError, assign_offsets,
};

use crate::nopanic;

// `ObjectTable`, `CounterTable`, `SERVICE` and `OBJECTS`: pcw-gen's V1 tables for the driver's
// manifest (`build.rs`).
include!(concat!(env!("OUT_DIR"), "/tables.rs"));

/// Number of objects the DLL serves.
pub const OBJECT_COUNT: usize = OBJECTS.len();

/// One object ready to be written: its header and counter definitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogObject {
    /// The manifest's description.
    pub table: &'static ObjectTable,
    /// `PERF_OBJECT_TYPE` fields (times are filled per collection).
    pub header: ObjectHeader,
    /// `PERF_COUNTER_DEFINITION`s, manifest order, checked once here (so a collection does
    /// not check them again).
    pub counters: CheckedCounters<Vec<CounterSpec>>,
}

/// Why the catalog cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogError {
    /// First Counter or First Help plus an offset overflows 32 bits.
    IndexOverflow,
    /// The counter layout is refused by pcw-core.
    Layout(WriteError),
    /// The catalog could not be allocated.
    NoMemory,
}

/// Every object's header and counters for one First Counter / First Help pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    /// First Counter.
    pub first_counter: u32,
    /// First Help.
    pub first_help: u32,
    /// Objects in manifest order.
    pub objects: Vec<CatalogObject>,
}

impl Catalog {
    /// Builds the catalog. It allocates, at Open or — when First Counter was not known yet — at
    /// the first Collect after lodctr ran; fallibly, so that the collect path has no panic path
    /// (`pcw-pecheck no-panic`).
    ///
    /// # Errors
    /// [`CatalogError`].
    pub fn new(first_counter: u32, first_help: u32) -> Result<Self, CatalogError> {
        let index =
            |base: u32, offset: u32| base.checked_add(offset).ok_or(CatalogError::IndexOverflow);
        let mut objects =
            nopanic::with_capacity(OBJECTS.len()).map_err(|_| CatalogError::NoMemory)?;
        for table in &OBJECTS {
            let mut counters =
                nopanic::with_capacity(table.counters.len()).map_err(|_| CatalogError::NoMemory)?;
            for c in table.counters {
                let spec = CounterSpec {
                    name_title_index: c.v1_offset.map_or(Ok(0), |o| index(first_counter, o))?,
                    help_title_index: c.v1_offset.map_or(Ok(0), |o| index(first_help, o))?,
                    default_scale: c.default_scale,
                    detail_level: DetailLevel::from_raw(c.detail_level),
                    counter_type: CounterType::from_raw(c.counter_type),
                    size: c.size,
                    offset: 0,
                };
                if !nopanic::push_reserved(&mut counters, spec) {
                    return Err(CatalogError::NoMemory);
                }
            }
            assign_offsets(&mut counters).map_err(CatalogError::Layout)?;
            let mut counters = CheckedCounters::new(counters).map_err(CatalogError::Layout)?;
            counters
                .render_definitions()
                .map_err(|_| CatalogError::NoMemory)?;
            let object = CatalogObject {
                table,
                header: ObjectHeader {
                    name_title_index: index(first_counter, table.v1_offset)?,
                    help_title_index: index(first_help, table.v1_offset)?,
                    detail_level: DetailLevel::from_raw(table.detail_level),
                    default_counter: table.default_counter,
                    perf_time: 0,
                    perf_freq: 0,
                    costly: false,
                },
                counters,
            };
            if !nopanic::push_reserved(&mut objects, object) {
                return Err(CatalogError::NoMemory);
            }
        }
        Ok(Self {
            first_counter,
            first_help,
            objects,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_are_first_counter_plus_offsets() {
        let c = Catalog::new(1000, 1001).unwrap();
        for (entry, table) in c.objects.iter().zip(&OBJECTS) {
            assert_eq!(entry.header.name_title_index, 1000 + table.v1_offset);
            assert_eq!(entry.header.help_title_index, 1001 + table.v1_offset);
            for (spec, counter) in entry.counters.counters().iter().zip(table.counters) {
                let expected = counter.v1_offset.map_or((0, 0), |o| (1000 + o, 1001 + o));
                assert_eq!((spec.name_title_index, spec.help_title_index), expected);
                assert_eq!(spec.offset % spec.size.max(4), 0, "aligned to its size");
            }
        }
    }

    #[test]
    fn overflowing_indexes_are_refused() {
        assert_eq!(
            Catalog::new(u32::MAX - 1, 0).unwrap_err(),
            CatalogError::IndexOverflow
        );
    }
}
