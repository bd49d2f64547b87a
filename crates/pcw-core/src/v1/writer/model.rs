// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the writer is given: an object ([`ObjectSource`], implemented by [`ObjectDesc`] for
//! fixed data and by live sources such as the DLL's snapshot view), its counters
//! ([`CounterSpec`]) and its instances ([`InstanceDesc`]: identity and values), with the forms an
//! instance name takes — text or UTF-16 checked while writing, or [`CheckedName`] and
//! [`PaddedName`], checked once where they are made so that the writer only copies them.

use crate::bytes;
use crate::counter_type::{CounterType, DetailLevel};
use crate::v1::wire;
use crate::v1::writer::shaped::write_instances;
use crate::v1::writer::sizing::instances_len;
use crate::v1::writer::{WriteError, sealed};

/// Longest instance name, in UTF-16 units without the NUL (`PERF_MAX_INSTANCE_NAME` is 1024
/// including the NUL).
pub const MAX_INSTANCE_NAME_UNITS: usize = 1023;

/// Whether an object has one unnamed instance or a list of named ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceKind {
    /// `NumInstances = PERF_NO_INSTANCES`; one counter block follows the definitions.
    Single,
    /// Zero or more `PERF_INSTANCE_DEFINITION` + counter block pairs.
    Multi,
}

/// Object-level fields of a `PERF_OBJECT_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// `ObjectNameTitleIndex` (First Counter + the object's symbol offset).
    pub name_title_index: u32,
    /// `ObjectHelpTitleIndex`.
    pub help_title_index: u32,
    /// `DetailLevel` of the object.
    pub detail_level: DetailLevel,
    /// `DefaultCounter`: index of the default counter, −1 for none.
    pub default_counter: i32,
    /// `PerfTime` for object-timer counters (0 when unused).
    pub perf_time: i64,
    /// `PerfFreq` for object-timer counters (0 when unused).
    pub perf_freq: i64,
    /// Whether the object answers only `Costly` queries.
    pub costly: bool,
}

/// One counter of an object: the fields of its `PERF_COUNTER_DEFINITION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterSpec {
    /// `CounterNameTitleIndex` (0 for base counters is customary).
    pub name_title_index: u32,
    /// `CounterHelpTitleIndex`.
    pub help_title_index: u32,
    /// `DefaultScale` (power of ten applied for display).
    pub default_scale: i32,
    /// `DetailLevel`.
    pub detail_level: DetailLevel,
    /// `CounterType`.
    pub counter_type: CounterType,
    /// `CounterSize`: 0, 4 or 8.
    pub size: u32,
    /// `CounterOffset`, from the start of the `PERF_COUNTER_BLOCK` (so at least 4).
    pub offset: u32,
}

/// An instance name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceName<'a> {
    /// No name (`NameLength = 0`); the instance is identified by its unique id.
    None,
    /// UTF-16 code units, without a terminating NUL.
    Utf16(&'a [u16]),
    /// Text, written as UTF-16.
    Str(&'a str),
    /// A name already known to be writable: measured without scanning it again.
    Checked(CheckedName<'a>),
    /// A name already laid out as the reply holds it, NUL and padding included: copied as
    /// whole words.
    Padded(PaddedName<'a>),
}

/// An instance name as a `PERF_INSTANCE_DEFINITION` holds it: the UTF-16LE units (at most
/// [`MAX_INSTANCE_NAME_UNITS`], none of them NUL), a NUL unit, then zero bytes up to a multiple
/// of 8 — the *name area*. The snapshot format stores names so
/// ([`crate::snapshot::InstanceView::padded_name`]), and the writer copies the area as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaddedName<'a> {
    pub(super) area: &'a [[u8; 8]],
    /// `NameLength`: the name's bytes and the NUL's.
    pub(super) name_length: u32,
}

impl<'a> PaddedName<'a> {
    /// The name area `area`, or `None` unless it is one: a multiple of 8 bytes, a NUL unit
    /// after at most [`MAX_INSTANCE_NAME_UNITS`] units, nothing but zero bytes after it, and no
    /// whole word of them (the area is the shortest that holds the name and its NUL).
    pub fn new(area: &'a [u8]) -> Option<Self> {
        let (words, rest) = area.as_chunks::<8>();
        if !rest.is_empty() {
            return None;
        }
        let units = area.as_chunks::<2>().0.iter().position(|u| *u == [0, 0])?;
        let padded = (2 * units + 2 + 7) & !7;
        let tail = area.get(2 * units..)?;
        (units <= MAX_INSTANCE_NAME_UNITS && padded == area.len() && tail.iter().all(|b| *b == 0))
            .then(|| Self::from_checked(words, units))
    }

    /// A name area a decoder of this crate has already checked as [`Self::new`] does, with
    /// its name's length in units. A wrong area here yields a wrong name in the reply, never a
    /// write outside it.
    #[inline]
    pub(crate) const fn from_checked(area: &'a [[u8; 8]], units: usize) -> Self {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked names have at most MAX_INSTANCE_NAME_UNITS units"
        )]
        let name_length = (2 * units + 2) as u32;
        Self { area, name_length }
    }

    /// Length in UTF-16 units (at most [`MAX_INSTANCE_NAME_UNITS`]).
    pub const fn units(&self) -> usize {
        (self.name_length as usize / 2).saturating_sub(1)
    }

    /// The area's bytes: the name, the NUL and the padding.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.area.as_flattened()
    }
}

/// An instance name known to be writable: at most [`MAX_INSTANCE_NAME_UNITS`] UTF-16 units,
/// none of them NUL. Checked once where it is made, so the writer only adds up lengths (the
/// snapshot decoder has checked the DLL's names already: [`crate::snapshot::InstanceView`]).
/// Kept as the UTF-16LE bytes the writer copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckedName<'a>(pub(super) &'a [u8]);

impl<'a> CheckedName<'a> {
    /// `units` (without a terminating NUL), or `None` if they are longer than
    /// [`MAX_INSTANCE_NAME_UNITS`] or contain a NUL — or the host is big-endian (then use
    /// [`Self::from_le_bytes`] or [`InstanceName::Utf16`]).
    pub fn new(units: &'a [u16]) -> Option<Self> {
        if units.len() > MAX_INSTANCE_NAME_UNITS || bytes::has_zero_unit(units) {
            return None;
        }
        bytes::units_le(units).map(Self)
    }

    /// UTF-16LE `bytes` (without a terminating NUL), or `None` if their length is odd or more
    /// than [`MAX_INSTANCE_NAME_UNITS`] units, or they contain a NUL unit.
    pub fn from_le_bytes(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len().is_multiple_of(2)
            && bytes.len() <= 2 * MAX_INSTANCE_NAME_UNITS
            && !bytes::has_zero_unit_le(bytes))
        .then_some(Self(bytes))
    }

    /// UTF-16LE bytes a decoder of this crate has already checked as [`Self::from_le_bytes`]
    /// does. A wrong name here yields a wrong name in the reply, never a write outside it.
    pub(crate) const fn from_checked_le_bytes(bytes: &'a [u8]) -> Self {
        Self(bytes)
    }

    /// Length in UTF-16 units (at most [`MAX_INSTANCE_NAME_UNITS`]).
    pub const fn units(&self) -> usize {
        self.0.len() / 2
    }
}

impl InstanceName<'_> {
    /// Length in UTF-16 units, without the NUL.
    pub fn units(&self) -> usize {
        match self {
            Self::None => 0,
            Self::Utf16(u) => u.len(),
            Self::Str(s) => s.encode_utf16().count(),
            Self::Checked(c) => c.units(),
            Self::Padded(p) => p.units(),
        }
    }

    /// `NameLength`: bytes including the NUL, 0 for no name.
    #[inline]
    pub(super) fn name_length(&self) -> usize {
        match self {
            Self::None => 0,
            // A `[u16]` spans at most `isize::MAX` bytes: this cannot overflow.
            Self::Utf16(u) => 2 * u.len() + 2,
            Self::Str(_) => self.units().saturating_add(1).saturating_mul(2),
            Self::Checked(c) => c.0.len() + 2,
            Self::Padded(p) => p.name_length as usize,
        }
    }

    /// `NameLength`, or `None` for a name longer than [`MAX_INSTANCE_NAME_UNITS`] or containing
    /// a NUL.
    #[inline]
    pub(super) fn checked_name_length(&self) -> Option<usize> {
        // Checked where it was made (tested first: the usual case, without a jump table).
        if let Self::Checked(c) = self {
            return Some(c.0.len() + 2);
        }
        self.unchecked_name_length()
    }

    /// [`Self::checked_name_length`] of a name not checked yet: scans it.
    #[inline(never)]
    fn unchecked_name_length(&self) -> Option<usize> {
        let units = match self {
            Self::None => return Some(0),
            Self::Utf16(u) => {
                if u.len() > MAX_INSTANCE_NAME_UNITS || bytes::has_zero_unit(u) {
                    return None;
                }
                u.len()
            }
            Self::Str(s) => {
                if s.contains('\0') {
                    return None;
                }
                s.encode_utf16().count()
            }
            // Checked where it was made.
            Self::Checked(c) => return Some(c.0.len() + 2),
            Self::Padded(p) => return Some(p.name_length as usize),
        };
        (units <= MAX_INSTANCE_NAME_UNITS).then_some(2 * (units + 1))
    }
}

/// The identity of one instance.
///
/// Laid out in declaration order, with `parent_instance` and `unique_id` next to each other
/// as in `PERF_INSTANCE_DEFINITION`, so the writer loads them as one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct InstanceSpec<'a> {
    /// The instance name.
    pub name: InstanceName<'a>,
    /// `ParentObjectTitleIndex` (0 = no parent).
    pub parent_title_index: u32,
    /// `ParentObjectInstance`: the parent's zero-based position in the parent object.
    pub parent_instance: u32,
    /// `UniqueID`, or [`wire::PERF_NO_UNIQUE_ID`] when the name identifies the instance.
    pub unique_id: i32,
}

impl<'a> InstanceSpec<'a> {
    /// A named instance with no unique id and no parent.
    pub const fn named(name: &'a str) -> Self {
        Self {
            name: InstanceName::Str(name),
            unique_id: wire::PERF_NO_UNIQUE_ID,
            parent_title_index: 0,
            parent_instance: 0,
        }
    }
}

/// A performance object as the writer sees it. Implemented by [`ObjectDesc`] for fixed data and
/// by any live source (the DLL's snapshot view, the driver's registry) without allocating.
///
/// The writer makes a constant number of dynamic calls per object: the loops over instances
/// run inside provided methods (sealed: they cannot be overridden), which are compiled for each
/// implementor, so [`instance`](Self::instance) is called directly and can be inlined.
pub trait ObjectSource {
    /// Object-level fields.
    fn header(&self) -> ObjectHeader;
    /// The counter definitions, in the order they are returned on every query.
    fn counters(&self) -> &[CounterSpec];
    /// Single- or multi-instance.
    fn kind(&self) -> InstanceKind;
    /// Number of instances (ignored for [`InstanceKind::Single`]).
    fn instance_count(&self) -> usize;
    /// Instance `index` (`index < instance_count()`): its identity and its raw values, one per
    /// counter (`values.len()` must equal `counters().len()`, or the writer refuses the reply).
    /// For a single-instance object, `instance(0)` gives the values of its one instance and its
    /// identity is ignored. A source that writes its instances itself (a snapshot set, which
    /// copies its records: [`crate::v1::from_snapshot::SetObject`]) is not asked for them when
    /// it vouches through [`Self::name_areas_len`] or gives its counter block.
    fn instance(&self, index: usize) -> InstanceDesc<'_>;

    /// The bytes all instances' names take in the reply — each `NameLength` rounded up to 8,
    /// summed — when the source knows them without a pass over its instances (a snapshot set
    /// does: [`crate::snapshot::SetView::name_areas_len`]); `None` (the default) otherwise.
    ///
    /// `Some` vouches that every instance has a writable name and exactly one value per
    /// counter — or, for a source that writes its instances itself, that what it writes takes
    /// exactly that many bytes besides the definitions' fixed parts and the counter blocks: the
    /// writer then skips its sizing pass, so the source is read once. The reply is
    /// still all or nothing (its size is known before anything is written); a wrong figure
    /// yields a wrong reply inside the buffer, never a write outside it.
    fn name_areas_len(&self) -> Option<usize> {
        None
    }

    /// The counter block of a single-instance object as the reply holds it (`ByteLength` and
    /// the values, `block_len` bytes), when the source holds it ready to copy (a snapshot set
    /// does); `None` (the default) to have the writer build it from `instance(0)`'s values.
    #[doc(hidden)]
    fn counter_block(&self, _block_len: usize, _: sealed::Token) -> Option<&[u8]> {
        None
    }

    /// What a query selects the object by: its header's `costly` and `name_title_index`, read
    /// without copying the whole header (a source that keeps its header overrides it).
    #[doc(hidden)]
    fn selection_key(&self, _: sealed::Token) -> (bool, u32) {
        let header = self.header();
        (header.costly, header.name_title_index)
    }

    /// The whole object ready to write, when the source holds its reply so (a snapshot set over
    /// checked counter definitions does); `None` (the default) to have the writer ask the
    /// methods above one by one.
    #[doc(hidden)]
    fn ready(&self, _: sealed::Token) -> Option<&sealed::Ready<'_>> {
        None
    }

    /// The counter block length of [`Self::counters`] when they were checked already (a source
    /// built from [`CheckedCounters`]); `None` (the default) to have the writer check them for
    /// every reply.
    #[doc(hidden)]
    fn checked_block_len(&self, _: sealed::Token) -> Option<usize> {
        None
    }

    /// The instance definitions and counter blocks of a multi-instance object as the reply
    /// holds them, for counter blocks of `block_len` bytes, when the source holds them ready to
    /// copy (a snapshot set does); `None` (the default) to have the writer write them from
    /// [`Self::instance`].
    #[doc(hidden)]
    fn instance_records(&self, _block_len: usize, _: sealed::Token) -> Option<&[u8]> {
        None
    }

    /// Bytes of the instance definitions and counter blocks of a multi-instance object whose
    /// counter blocks take `block_len` bytes, after checking every name and value count.
    #[doc(hidden)]
    fn instances_len(&self, block_len: usize, _: sealed::Token) -> Result<usize, WriteError> {
        instances_len(
            (0..self.instance_count()).map(|i| self.instance(i)),
            self.counters().len(),
            block_len,
        )
    }

    /// Writes the instance definitions and counter blocks of a multi-instance object at the
    /// start of `out`; returns the bytes written.
    #[doc(hidden)]
    fn write_instances(&self, plan: &sealed::Plan<'_>, out: &mut [u8], _: sealed::Token) -> usize {
        write_instances(
            (0..self.instance_count()).map(|i| self.instance(i)),
            plan,
            out,
        )
    }
}

/// An object's counter definitions, checked once ([`CheckedCounters::new`]: sizes, types,
/// offsets, bases; what the writer checks for every reply of a source without them), with the
/// counter block length they give and, once [rendered](CheckedCounters::render_definitions)
/// (with the `alloc` feature), their `PERF_COUNTER_DEFINITION`s as the reply holds them. A
/// source built from them (`SetObject::checked`) is sized and written without checking them
/// again, its definitions copied when rendered: the V1 DLL checks and renders its catalog's
/// definitions when it builds it, not on every collection.
///
/// `C` holds the definitions: a slice, or (with the `alloc` feature) a `Vec`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedCounters<C> {
    counters: C,
    block_len: usize,
    /// Each counter at the offset [`assign_offsets`](super::assign_offsets) gives its size after
    /// the previous ones: the layout is then a function of the sizes alone.
    canonical: bool,
    /// The definitions' bytes, one 40-byte `PERF_COUNTER_DEFINITION` per counter, once
    /// rendered (empty before).
    #[cfg(any(feature = "alloc", test))]
    definitions: alloc::vec::Vec<[u8; wire::field::counter_definition::LEN]>,
}

impl<C: AsRef<[CounterSpec]>> CheckedCounters<C> {
    /// Checks `counters` as the writer would for a reply.
    ///
    /// # Errors
    /// The [`WriteError`] the writer would refuse a reply with.
    pub fn new(counters: C) -> Result<Self, WriteError> {
        let block_len = super::sizing::check_counters(counters.as_ref())?;
        let mut end = bytes::len32(wire::field::counter_block::LEN);
        let canonical = counters.as_ref().iter().all(|c| {
            let placed = super::place_counter(end, c.size);
            end = placed.map_or(end, |(_, next)| next);
            placed.is_some_and(|(offset, _)| offset == c.offset)
        });
        Ok(Self {
            counters,
            block_len,
            canonical,
            #[cfg(any(feature = "alloc", test))]
            definitions: alloc::vec::Vec::new(),
        })
    }

    /// Renders the definitions' bytes once, so that every reply copies them instead of building
    /// them (measured with callgrind: 4 definitions, 135 instructions a reply). Allocates
    /// without a panic path.
    ///
    /// # Errors
    /// The allocation failed (the definitions are then built per reply, as before).
    #[cfg(any(feature = "alloc", test))]
    pub fn render_definitions(&mut self) -> Result<(), alloc::collections::TryReserveError> {
        let counters = self.counters.as_ref();
        let mut definitions = crate::fallible::with_capacity(counters.len())?;
        for c in counters {
            // Room was reserved for every counter: this always succeeds.
            let _ = crate::fallible::push_reserved(
                &mut definitions,
                super::emission::definition_bytes(c),
            );
        }
        self.definitions = definitions;
        Ok(())
    }

    /// The definitions.
    pub fn counters(&self) -> &[CounterSpec] {
        self.counters.as_ref()
    }

    /// Bytes of each instance's counter block (a multiple of 8, at least 8).
    pub const fn block_len(&self) -> usize {
        self.block_len
    }

    /// Whether every counter is at the offset `assign_offsets` gives its size after the previous
    /// ones (so two such lists with the same sizes lay the block out alike).
    pub const fn canonical(&self) -> bool {
        self.canonical
    }

    /// The definitions as the reply holds them, once rendered (empty before, or without the
    /// `alloc` feature: the writer then builds them).
    pub fn definition_bytes(&self) -> &[[u8; wire::field::counter_definition::LEN]] {
        #[cfg(any(feature = "alloc", test))]
        return &self.definitions;
        #[cfg(not(any(feature = "alloc", test)))]
        return &[];
    }
}

/// One instance: identity and values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceDesc<'a> {
    /// Identity.
    pub spec: InstanceSpec<'a>,
    /// One raw value per counter.
    pub values: &'a [u64],
}

impl InstanceDesc<'_> {
    /// No name, no unique id, no parent, no values: what [`ObjectSource::instance`] returns for
    /// an index it does not have.
    pub const EMPTY: InstanceDesc<'static> = InstanceDesc {
        spec: InstanceSpec {
            name: InstanceName::None,
            unique_id: wire::PERF_NO_UNIQUE_ID,
            parent_title_index: 0,
            parent_instance: 0,
        },
        values: &[],
    };
}

/// Instances of an [`ObjectDesc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstancesDesc<'a> {
    /// A single-instance object and its values, one per counter.
    Single(&'a [u64]),
    /// A multi-instance object.
    Multi(&'a [InstanceDesc<'a>]),
}

/// A fixed description of one object, borrowing everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectDesc<'a> {
    /// Object-level fields.
    pub header: ObjectHeader,
    /// Counter definitions.
    pub counters: &'a [CounterSpec],
    /// Instances and values.
    pub instances: InstancesDesc<'a>,
}

impl ObjectSource for ObjectDesc<'_> {
    fn header(&self) -> ObjectHeader {
        self.header
    }
    fn counters(&self) -> &[CounterSpec] {
        self.counters
    }
    fn kind(&self) -> InstanceKind {
        match self.instances {
            InstancesDesc::Single(_) => InstanceKind::Single,
            InstancesDesc::Multi(_) => InstanceKind::Multi,
        }
    }
    fn instance_count(&self) -> usize {
        match self.instances {
            InstancesDesc::Single(_) => 0,
            InstancesDesc::Multi(list) => list.len(),
        }
    }
    #[inline]
    fn instance(&self, index: usize) -> InstanceDesc<'_> {
        match self.instances {
            InstancesDesc::Multi(list) => list.get(index).copied().unwrap_or(InstanceDesc::EMPTY),
            InstancesDesc::Single(values) => InstanceDesc {
                values,
                ..InstanceDesc::EMPTY
            },
        }
    }

    // The loops walk the list itself rather than looking each index up.
    fn instances_len(&self, block_len: usize, _: sealed::Token) -> Result<usize, WriteError> {
        match self.instances {
            InstancesDesc::Multi(list) => {
                instances_len(list.iter(), self.counters.len(), block_len)
            }
            InstancesDesc::Single(_) => Ok(0),
        }
    }

    fn write_instances(&self, plan: &sealed::Plan<'_>, out: &mut [u8], _: sealed::Token) -> usize {
        match self.instances {
            InstancesDesc::Multi(list) => write_instances(list.iter(), plan, out),
            InstancesDesc::Single(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::v1::writer::tests::{counter, header, write_both};
    use crate::v1::writer::*;

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn checked_names_write_as_unchecked_ones() {
        let counters = [
            counter(CounterType::Rawcount, 4, 4),
            counter(CounterType::LargeRawcount, 8, 8),
        ];
        let names: [&str; 14] = [
            "",
            "a",
            "abc",
            "abcd",
            "abcde",
            "Queue 000001",
            "abcdefgh",
            "Größe ✓ 0123456",
            "0123456789abcdef",
            "0123456789abcdefgh",
            "0123456789abcdefghij",
            "0123456789abcdefghijklmnopqrstuvwxyz",
            "0123456789abcdefghijklmnopqrstuvwxyz0123",
            "0123456789abcdefghijklmnopqrstuvwxyz01234",
        ];
        let units: Vec<Vec<u16>> = names.iter().map(|n| n.encode_utf16().collect()).collect();
        let le: Vec<Vec<u8>> = units
            .iter()
            .map(|u| u.iter().flat_map(|x| x.to_le_bytes()).collect())
            .collect();
        let values: Vec<[u64; 2]> = (0..names.len() as u64).map(|i| [2 * i, !i]).collect();
        let write = |names: &[InstanceName<'_>]| {
            let instances: Vec<InstanceDesc<'_>> = names
                .iter()
                .zip(&values)
                .map(|(name, values)| InstanceDesc {
                    spec: InstanceSpec {
                        name: *name,
                        unique_id: -1,
                        parent_title_index: 0,
                        parent_instance: 0,
                    },
                    values,
                })
                .collect();
            let obj = ObjectDesc {
                header: header(10, false),
                counters: &counters,
                instances: InstancesDesc::Multi(&instances),
            };
            write_both(&[&obj], Mode::Data)
        };
        let strs: Vec<_> = names.iter().map(|n| InstanceName::Str(n)).collect();
        let expected = write(&strs);
        let utf16: Vec<_> = units.iter().map(|u| InstanceName::Utf16(u)).collect();
        assert_eq!(write(&utf16), expected);
        let checked: Vec<_> = units
            .iter()
            .map(|u| InstanceName::Checked(CheckedName::new(u).unwrap()))
            .collect();
        assert_eq!(write(&checked), expected);
        let checked_le: Vec<_> = le
            .iter()
            .map(|b| InstanceName::Checked(CheckedName::from_le_bytes(b).unwrap()))
            .collect();
        assert_eq!(write(&checked_le), expected);
        assert!(CheckedName::new(&[u16::from(b'a'), 0]).is_none());
        assert!(CheckedName::from_le_bytes(b"a").is_none());
        assert!(CheckedName::from_le_bytes(b"a\0\0\0").is_none());
        let long = vec![u16::from(b'a'); MAX_INSTANCE_NAME_UNITS + 1];
        assert!(CheckedName::new(&long).is_none());
        assert!(CheckedName::new(&long[1..]).is_some());
    }
}
