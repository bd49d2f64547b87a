// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 object writer: turns a description of performance objects into the `PERF_OBJECT_TYPE`
//! blocks `CollectPerformanceData` returns (object shapes in `docs/v1-format.md`; Microsoft: the
//! `PM_COLLECT_PROC` reference page).
//!
//! Contract:
//! * every object, instance definition and counter block starts and ends 8-byte aligned, so
//!   the total is a multiple of 8;
//! * every byte inside the reported length is written: padding after names and inside counter
//!   blocks is zeroed (padding reaches the consumer: a trust boundary, `docs/v1-format.md`);
//! * the size is measured first; if the buffer is too small nothing at all is written;
//! * nothing outside the given slice is touched, nothing allocates, nothing panics — a
//!   description that cannot be written correctly is refused with a [`WriteError`].

use core::borrow::Borrow;

use crate::bytes::{self, align8, len32};
use crate::counter_type::{CounterType, DetailLevel};
use crate::v1::wire::{self, CounterDefinition, CounterDefinitionRepr, ObjectType, ObjectTypeRepr};

/// Longest instance name, in UTF-16 units without the NUL (`PERF_MAX_INSTANCE_NAME` is 1024
/// including the NUL).
pub const MAX_INSTANCE_NAME_UNITS: usize = 1023;

/// Why a description could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The buffer is too small; `needed` bytes would have been written.
    NoSpace {
        /// Bytes the whole reply needs.
        needed: usize,
    },
    /// A counter's offset lies inside the 4-byte `PERF_COUNTER_BLOCK` header.
    CounterOffsetInHeader {
        /// Index of the counter in its object.
        counter: usize,
    },
    /// A counter is not aligned to its size (8-byte values must sit at multiples of 8).
    MisalignedCounter {
        /// Index of the counter in its object.
        counter: usize,
    },
    /// `CounterSize` is not 0, 4 or 8, or disagrees with the counter type's size bits.
    BadCounterSize {
        /// Index of the counter in its object.
        counter: usize,
    },
    /// A fraction/average/multi counter is not directly followed by the base it needs, or a
    /// precision timer by its timestamp counter.
    BaseNotFollowing {
        /// Index of the counter whose base is missing.
        counter: usize,
    },
    /// An instance name is longer than [`MAX_INSTANCE_NAME_UNITS`] or contains a NUL.
    BadInstanceName {
        /// Index of the instance in its object.
        instance: usize,
    },
    /// An instance gave a number of values different from the number of counters.
    ValueCount {
        /// Index of the instance (0 for a single-instance object).
        instance: usize,
    },
    /// The reply would not fit the 32-bit lengths of the format.
    TooLarge,
    /// A query selected more objects than one reply may carry
    /// ([`crate::v1::collect::MAX_OBJECTS`]).
    TooManyObjects,
}

/// How objects are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Definitions, instances and values.
    Data,
    /// A metadata reply (`MetadataGlobal`/`MetadataCostly`): definitions only, `NumInstances`
    /// set to `PERF_METADATA_MULTIPLE_INSTANCES` or `PERF_METADATA_NO_INSTANCES`, and no
    /// instance definitions or counter blocks.
    Metadata,
}

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
    area: &'a [[u8; 8]],
    /// `NameLength`: the name's bytes and the NUL's.
    name_length: u32,
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
        #[allow(
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
pub struct CheckedName<'a>(&'a [u8]);

impl<'a> CheckedName<'a> {
    /// `units` (without a terminating NUL), or `None` if they are longer than
    /// [`MAX_INSTANCE_NAME_UNITS`] or contain a NUL — or the host is big-endian (then use
    /// [`Self::from_le_bytes`] or [`InstanceName::Utf16`]).
    pub fn new(units: &'a [u16]) -> Option<Self> {
        if units.len() > MAX_INSTANCE_NAME_UNITS || bytes::has_zero_unit(units) {
            return None;
        }
        units_le(units).map(Self)
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

/// `units` as their UTF-16LE bytes, without copying: `None` on a big-endian host.
#[inline]
fn units_le(units: &[u16]) -> Option<&[u8]> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: the bytes are those of `units`' own allocation (`2 * len` of them, which is
    // `size_of_val(units)` and so at most `isize::MAX`), `u8` has alignment 1 and every byte
    // of an initialised `u16` is an initialised `u8`; the shared borrow keeps the lifetime.
    // On a little-endian host those bytes are the UTF-16LE encoding.
    Some(unsafe { core::slice::from_raw_parts(units.as_ptr().cast::<u8>(), size_of_val(units)) })
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
    fn name_length(&self) -> usize {
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
    fn checked_name_length(&self) -> Option<usize> {
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
    /// counter (`values.len()` must equal `counters().len()`). For a single-instance object,
    /// `instance(0)` gives the values of its one instance and its identity is ignored.
    fn instance(&self, index: usize) -> InstanceDesc<'_>;

    /// The bytes all instances' names take in the reply — each `NameLength` rounded up to 8,
    /// summed — when the source knows them without a pass over its instances (a snapshot set
    /// does: [`crate::snapshot::SetView::name_areas_len`]); `None` (the default) otherwise.
    ///
    /// `Some` vouches that every instance has a writable name and exactly one value per
    /// counter: the writer then skips its sizing pass, so the source is read once. The reply is
    /// still all or nothing (its size is known before anything is written); a wrong figure
    /// yields a wrong reply inside the buffer, never a write outside it.
    fn name_areas_len(&self) -> Option<usize> {
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

/// Keeps the per-instance loops of [`ObjectSource`] the writer's own: implementors outside this
/// crate cannot name [`sealed::Token`], so they cannot override the methods that take one
/// (the crate's own snapshot source does, to walk its records in order).
pub(crate) mod sealed {
    /// Passed by the writer to the sealed methods of `ObjectSource`.
    #[derive(Clone, Copy, Debug)]
    pub struct Token;

    /// One object's counter block, worked out once per object for all its instances.
    #[derive(Clone, Copy, Debug)]
    pub struct Plan<'c> {
        /// The object's counters (checked by `check_counters`).
        pub(super) counters: &'c [super::CounterSpec],
        /// Block length in 8-byte words.
        pub(super) words: usize,
        /// `block_gaps` of the object.
        pub(super) gaps: Option<u64>,
        /// The stores of [`super::write_block`], sorted by size, when no two counters share a
        /// byte (so their order does not matter) and there are at most [`SLOTS`] of each
        /// size: `(value index, word index)` of the 8-byte counters…
        pub(super) eights: [(u16, u16); SLOTS],
        /// … and `(value index, 4-byte half index)` of the 4-byte ones.
        pub(super) fours: [(u16, u16); SLOTS],
        /// How many of `eights` and `fours` are used; `None` to store counter by counter.
        pub(super) direct: Option<(usize, usize)>,
        /// The block as whole words, for a `direct` plan of at most [`TEMPLATE_WORDS`] words.
        pub(super) template: Option<Template>,
    }

    /// Most words a [`Template`] describes.
    pub const TEMPLATE_WORDS: usize = 4;

    /// A counter block as a fixed list of words, each `base | values[a] & mask_a |
    /// values[b] << 32 & mask_b`: `ByteLength`, the zeros and the values in one store per word.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Template {
        /// Per word: the constant bits (`ByteLength` in word 0, zero elsewhere).
        pub(super) base: [u64; TEMPLATE_WORDS],
        /// Per word: the value stored in it whole or in its low half (mask 0: none)…
        pub(super) a: [(usize, u64); TEMPLATE_WORDS],
        /// … and the value stored in its high half (mask 0: none).
        pub(super) b: [(usize, u64); TEMPLATE_WORDS],
        /// Values an instance must have (at least 1): every index above is below it.
        pub(super) need: usize,
    }

    impl Template {
        /// The template of a `direct` plan.
        fn new(plan: &Plan<'_>, (n8, n4): (usize, usize)) -> Option<Self> {
            if plan.words == 0 || plan.words > TEMPLATE_WORDS {
                return None;
            }
            let mut t = Self {
                base: [0; TEMPLATE_WORDS],
                a: [(0, 0); TEMPLATE_WORDS],
                b: [(0, 0); TEMPLATE_WORDS],
                need: 1,
            };
            *t.base.first_mut()? = u64::try_from(plan.words * 8).ok()?;
            for (value, word) in plan.eights.iter().take(n8) {
                let (value, word) = (usize::from(*value), usize::from(*word));
                *t.a.get_mut(word)? = (value, u64::MAX);
                t.need = t.need.max(value + 1);
            }
            for (value, half) in plan.fours.iter().take(n4) {
                let (value, half) = (usize::from(*value), usize::from(*half));
                if half % 2 == 0 {
                    *t.a.get_mut(half / 2)? = (value, 0xFFFF_FFFF);
                } else {
                    *t.b.get_mut(half / 2)? = (value, 0xFFFF_FFFF_0000_0000);
                }
                t.need = t.need.max(value + 1);
            }
            Some(t)
        }
    }

    /// Most counters of each size a [`Plan`] lists.
    pub const SLOTS: usize = 16;

    impl<'c> Plan<'c> {
        /// The plan of a block of `block_len` bytes (a multiple of 8).
        pub(super) fn new(counters: &'c [super::CounterSpec], block_len: usize) -> Self {
            let mut plan = Self {
                counters,
                words: block_len / 8,
                gaps: super::block_gaps(counters, block_len),
                eights: [(0, 0); SLOTS],
                fours: [(0, 0); SLOTS],
                direct: None,
                template: None,
            };
            plan.direct = plan.slots();
            plan.template = plan.direct.and_then(|n| Template::new(&plan, n));
            plan
        }

        /// Fills `eights` and `fours`; `None` when counters overlap or do not fit the lists.
        fn slots(&mut self) -> Option<(usize, usize)> {
            let (mut n8, mut n4) = (0, 0);
            // The 4-byte halves already stored to, one bit each (`ByteLength` is half 0).
            let mut taken = [0u64; 2];
            if let Some(first) = taken.first_mut() {
                *first = 1;
            }
            for (index, c) in self.counters.iter().enumerate() {
                let value = u16::try_from(index).ok()?;
                let half = usize::try_from(c.offset / 4).ok()?;
                let (list, n, halves) = match c.size {
                    0 => continue,
                    4 => (&mut self.fours, &mut n4, 1u64),
                    _ => (&mut self.eights, &mut n8, 3u64),
                };
                // Inside the block, aligned (`check_counters`), and not overlapping another.
                if half + usize::from(halves == 3) >= 2 * self.words
                    || (halves == 3 && half % 2 != 0)
                {
                    return None;
                }
                let bits = halves << (half % 64);
                let word = taken.get_mut(half / 64)?;
                if *word & bits != 0 {
                    return None;
                }
                *word |= bits;
                let slot = u16::try_from(if halves == 3 { half / 2 } else { half }).ok()?;
                *list.get_mut(*n)? = (value, slot);
                *n += 1;
            }
            Some((n8, n4))
        }
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

/// What [`write_objects`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Bytes written (a multiple of 8): the value for `*lpcbTotalBytes`.
    pub bytes: usize,
    /// Objects written: the value for `*lpNumObjectTypes`.
    pub objects: usize,
}

/// Lays counters out one after another in the order given, each aligned to its size, starting
/// right after the `PERF_COUNTER_BLOCK` header; returns the counter block length (8-aligned).
/// Counters of size 0 get the offset where the next value would go.
///
/// # Errors
/// [`WriteError::BadCounterSize`] for a size other than 0, 4 or 8; [`WriteError::TooLarge`].
pub fn assign_offsets(counters: &mut [CounterSpec]) -> Result<u32, WriteError> {
    let mut next: u32 = len32(wire::field::counter_block::LEN);
    for (index, c) in counters.iter_mut().enumerate() {
        let align = match c.size {
            0 | 4 => 4,
            8 => 8,
            _ => return Err(WriteError::BadCounterSize { counter: index }),
        };
        next = next.checked_add(align - 1).ok_or(WriteError::TooLarge)? & !(align - 1);
        c.offset = next;
        next = next.checked_add(c.size).ok_or(WriteError::TooLarge)?;
    }
    let len = align8(next as usize).ok_or(WriteError::TooLarge)?;
    u32::try_from(len).map_err(|_| WriteError::TooLarge)
}

/// Checks one object's counter definitions and returns its counter block length (8-aligned,
/// at least 8).
fn check_counters(counters: &[CounterSpec]) -> Result<usize, WriteError> {
    let mut end = wire::field::counter_block::LEN;
    for (index, c) in counters.iter().enumerate() {
        let err_size = WriteError::BadCounterSize { counter: index };
        if !matches!(c.size, 0 | 4 | 8) {
            return Err(err_size);
        }
        if let Some(declared) = c.counter_type.size() {
            // PERF_AVERAGE_TIMER is declared DWORD but read as 64-bit by Microsoft's own sample
            // (`docs/counter-types.md`): both sizes are accepted for it, `CounterSize` rules.
            let average_timer = matches!(c.counter_type, CounterType::AverageTimer);
            if declared != c.size && !(average_timer && c.size == 8) {
                return Err(err_size);
            }
        }
        let offset = c.offset as usize;
        if offset < wire::field::counter_block::LEN {
            return Err(WriteError::CounterOffsetInHeader { counter: index });
        }
        if c.size != 0 && !offset.is_multiple_of(c.size as usize) {
            return Err(WriteError::MisalignedCounter { counter: index });
        }
        if let Some(base) = c.counter_type.required_follower() {
            let next = counters.get(index + 1).map(|n| n.counter_type);
            if next != Some(base) {
                return Err(WriteError::BaseNotFollowing { counter: index });
            }
        }
        end = end.max(
            offset
                .checked_add(c.size as usize)
                .ok_or(WriteError::TooLarge)?,
        );
    }
    align8(end).ok_or(WriteError::TooLarge)
}

fn add(a: usize, b: usize) -> Result<usize, WriteError> {
    a.checked_add(b).ok_or(WriteError::TooLarge)
}

/// Bytes one object takes, after checking its description.
///
/// # Errors
/// Any [`WriteError`] other than `NoSpace`.
pub fn object_len(src: &dyn ObjectSource, mode: Mode) -> Result<usize, WriteError> {
    measure_object(src, mode).map(|(len, _)| len)
}

/// Bytes one object takes and its counter block length, after checking its description.
fn measure_object(src: &dyn ObjectSource, mode: Mode) -> Result<(usize, usize), WriteError> {
    let counters = src.counters();
    let block = check_counters(counters)?;
    let defs = counters
        .len()
        .checked_mul(wire::field::counter_definition::LEN)
        .ok_or(WriteError::TooLarge)?;
    let mut len = add(wire::field::object_type::LEN, defs)?;
    if mode == Mode::Data {
        match src.kind() {
            InstanceKind::Single => {
                if src.instance(0).values.len() != counters.len() {
                    return Err(WriteError::ValueCount { instance: 0 });
                }
                len = add(len, block)?;
            }
            InstanceKind::Multi => {
                let instances = match src.name_areas_len() {
                    // Known: the fixed parts of the definitions and the blocks are all alike.
                    Some(names) => add(
                        names,
                        src.instance_count()
                            .checked_mul(add(wire::field::instance_definition::LEN, block)?)
                            .ok_or(WriteError::TooLarge)?,
                    )?,
                    None => src.instances_len(block, sealed::Token)?,
                };
                len = add(len, instances)?;
            }
        }
    }
    Ok((fits_u32(len)?, block))
}

/// Bytes of an instance definition of that many UTF-16 units of name bytes plus the NUL
/// (`NameLength`, at most 2 048 for a checked name), padding included.
#[inline]
const fn def_len(name_length: usize) -> usize {
    wire::field::instance_definition::LEN + ((name_length + 7) & !7)
}

/// [`ObjectSource::instances_len`]: one pass over the instances, checking each name and value
/// count in instance order.
#[inline]
fn instances_len<'a, D, I>(
    instances: I,
    counters: usize,
    block_len: usize,
) -> Result<usize, WriteError>
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
{
    // The padded names here; the fixed parts of the definitions and the counter blocks (all
    // alike) after the loop.
    let mut names = 0usize;
    let mut count = 0usize;
    for instance in instances {
        let instance = instance.borrow();
        let name_length = instance
            .spec
            .name
            .checked_name_length()
            .ok_or(WriteError::BadInstanceName { instance: count })?;
        if instance.values.len() != counters {
            return Err(WriteError::ValueCount { instance: count });
        }
        // A checked name takes at most 2 048 bytes with its NUL and padding.
        names = add(
            names,
            def_len(name_length) - wire::field::instance_definition::LEN,
        )?;
        count += 1;
    }
    let record = add(wire::field::instance_definition::LEN, block_len)?;
    add(
        names,
        count.checked_mul(record).ok_or(WriteError::TooLarge)?,
    )
}

fn fits_u32(len: usize) -> Result<usize, WriteError> {
    u32::try_from(len)
        .map(|_| len)
        .map_err(|_| WriteError::TooLarge)
}

/// Bytes all `objects` take together.
///
/// # Errors
/// As [`object_len`].
pub fn objects_len(objects: &[&dyn ObjectSource], mode: Mode) -> Result<usize, WriteError> {
    let mut total = 0usize;
    for o in objects {
        total = add(total, object_len(*o, mode)?)?;
    }
    fits_u32(total)
}

/// Objects whose counter block length the sizing pass of [`write_objects`] keeps for the
/// writing pass (the others' are worked out again).
const KEPT_BLOCKS: usize = 16;

/// Writes `objects` at the start of `buf`, all or nothing.
///
/// The sources must not change during the call (the driver and the DLL hand the writer a
/// snapshot): sizes are measured in a first pass and bytes written in a second.
///
/// # Errors
/// [`WriteError::NoSpace`] (and nothing written) if `buf` is too small; otherwise any other
/// [`WriteError`] for a description that cannot be written correctly, also before writing.
pub fn write_objects(
    objects: &[&dyn ObjectSource],
    mode: Mode,
    buf: &mut [u8],
) -> Result<Written, WriteError> {
    // Block lengths fit in u32: each object's length does.
    let mut blocks = [0u32; KEPT_BLOCKS];
    let mut needed = 0usize;
    for (index, o) in objects.iter().enumerate() {
        let (len, block) = measure_object(*o, mode)?;
        if let Some(slot) = blocks.get_mut(index) {
            *slot = len32(block);
        }
        needed = add(needed, len)?;
    }
    let needed = fits_u32(needed)?;
    let out = buf
        .get_mut(..needed)
        .ok_or(WriteError::NoSpace { needed })?;
    let mut at = 0usize;
    for (index, o) in objects.iter().enumerate() {
        let block_len = match blocks.get(index) {
            Some(block) => *block as usize,
            None => check_counters(o.counters()).unwrap_or(0),
        };
        let rest = out.get_mut(at..).unwrap_or_default();
        at += emit_object(*o, mode, block_len, rest);
    }
    Ok(Written {
        bytes: at,
        objects: objects.len(),
    })
}

/// Writes one object at the start of `buf` and returns its length, all or nothing.
///
/// # Errors
/// As [`write_objects`].
pub fn write_object(
    src: &dyn ObjectSource,
    mode: Mode,
    buf: &mut [u8],
) -> Result<usize, WriteError> {
    write_objects(&[src], mode, buf).map(|w| w.bytes)
}

/// Emits an object whose description `object_len` has accepted and whose bytes fit in `buf`;
/// returns the bytes written. Every store is bounds-checked (per field for the object's
/// definitions, per record for its instances), so a source that changed since it was measured
/// yields a short object inside `buf`, never a write outside it.
fn emit_object(src: &dyn ObjectSource, mode: Mode, block_len: usize, buf: &mut [u8]) -> usize {
    let counters = src.counters();
    let header = src.header();
    let definition_length =
        wire::field::object_type::LEN + counters.len() * wire::field::counter_definition::LEN;
    let instance_count = match src.kind() {
        InstanceKind::Single => 0,
        InstanceKind::Multi => src.instance_count(),
    };
    let num_instances = match (mode, src.kind()) {
        (Mode::Metadata, InstanceKind::Single) => wire::PERF_METADATA_NO_INSTANCES,
        (Mode::Metadata, InstanceKind::Multi) => wire::PERF_METADATA_MULTIPLE_INSTANCES,
        (Mode::Data, InstanceKind::Single) => wire::PERF_NO_INSTANCES,
        (Mode::Data, InstanceKind::Multi) => i32::try_from(instance_count).unwrap_or(i32::MAX),
    };
    // `object_len` bounded every length below by a total that fits in u32.
    let mut repr = ObjectTypeRepr {
        total_byte_length: 0,
        definition_length: len32(definition_length),
        header_length: len32(wire::field::object_type::LEN),
        object_name_title_index: header.name_title_index,
        object_help_title_index: header.help_title_index,
        detail_level: header.detail_level,
        num_counters: len32(counters.len()),
        default_counter: header.default_counter,
        num_instances,
        code_page: 0,
        perf_time: header.perf_time,
        perf_freq: header.perf_freq,
    };
    let mut at = wire::field::object_type::LEN;
    for c in counters {
        let repr = CounterDefinitionRepr {
            byte_length: len32(wire::field::counter_definition::LEN),
            counter_name_title_index: c.name_title_index,
            counter_help_title_index: c.help_title_index,
            default_scale: c.default_scale,
            detail_level: c.detail_level,
            counter_type: c.counter_type,
            counter_size: c.size,
            counter_offset: c.offset,
        };
        if let Some(Ok(mut view)) = buf.get_mut(at..).map(CounterDefinition::new_checked) {
            repr.emit(&mut view);
        }
        at += wire::field::counter_definition::LEN;
    }
    if mode == Mode::Data {
        let rest = buf.get_mut(at..).unwrap_or_default();
        let plan = sealed::Plan::new(counters, block_len);
        match src.kind() {
            InstanceKind::Single => {
                if let Some(block) = rest.as_chunks_mut::<8>().0.get_mut(..plan.words) {
                    write_block(block, &plan, src.instance(0).values);
                    at += block_len;
                }
            }
            InstanceKind::Multi => at += src.write_instances(&plan, rest, sealed::Token),
        }
    }
    let at = at.min(buf.len());
    repr.total_byte_length = len32(at);
    if let Ok(mut view) = ObjectType::new_checked(&mut *buf) {
        repr.emit(&mut view);
    }
    at
}

/// The block shapes [`write_instances`] compiles a loop for, one hexadecimal digit per word,
/// word 0 lowest: `1` `ByteLength` and a 4-byte value, `2` `ByteLength` alone, `3` an 8-byte
/// value, `4` two 4-byte values, `5` a 4-byte value in the low half; values are taken in order
/// from index 0. These are all the blocks of up to 4 words that [`assign_offsets`] lays out
/// for 4- and 8-byte counters (a test checks it): 40 loops per source type, about 1 KB each.
macro_rules! shapes {
    ($m:ident) => {
        $m!(
            (1, 0x1),
            (1, 0x2),
            (2, 0x31),
            (2, 0x41),
            (2, 0x51),
            (2, 0x32),
            (3, 0x331),
            (3, 0x431),
            (3, 0x531),
            (3, 0x341),
            (3, 0x441),
            (3, 0x541),
            (3, 0x351),
            (3, 0x332),
            (3, 0x432),
            (3, 0x532),
            (4, 0x3331),
            (4, 0x4331),
            (4, 0x5331),
            (4, 0x3431),
            (4, 0x4431),
            (4, 0x5431),
            (4, 0x3531),
            (4, 0x3341),
            (4, 0x4341),
            (4, 0x5341),
            (4, 0x3441),
            (4, 0x4441),
            (4, 0x5441),
            (4, 0x3541),
            (4, 0x3351),
            (4, 0x4351),
            (4, 0x5351),
            (4, 0x3332),
            (4, 0x4332),
            (4, 0x5332),
            (4, 0x3432),
            (4, 0x4432),
            (4, 0x5432),
            (4, 0x3532)
        )
    };
}

/// [`ObjectSource::write_instances`]: each instance definition and counter block is written
/// into its own sub-slice of `out`, split off once per record, so the stores inside need no
/// further checks against `out`. Records are whole 8-byte words, so `out` is handled as words.
/// Stops at the first record that does not fit.
///
/// The loop is compiled once per block shape of [`shapes!`], so that a counter block is written
/// as that many word stores with the template's indices and masks as constants; other blocks
/// of up to [`sealed::TEMPLATE_WORDS`] words by a loop per word count reading the template.
#[inline]
pub(crate) fn write_instances<'a, D, I>(
    instances: I,
    plan: &sealed::Plan<'_>,
    out: &mut [u8],
) -> usize
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
{
    const _: () = assert!(sealed::TEMPLATE_WORDS == 4);
    let Some(t) = plan.template else {
        return write_instances_any(instances, plan, out);
    };
    // A usual layout: the loop compiled with its block's stores (indices and masks constants).
    macro_rules! shaped {
        ($(($w:literal, $s:literal)),*) => {
            match shape_of(&t) {
                $($s if t == const { shape_template($s) } => {
                    return write_instances_fixed::<D, I, $w, _>(
                        instances,
                        out,
                        write_shaped::<$w, $s>,
                    );
                })*
                _ => {}
            }
        };
    }
    shapes!(shaped);
    match plan.words {
        1 => write_instances_fixed::<D, I, 1, _>(instances, out, |b, v| write_template(b, &t, v)),
        2 => write_instances_fixed::<D, I, 2, _>(instances, out, |b, v| write_template(b, &t, v)),
        3 => write_instances_fixed::<D, I, 3, _>(instances, out, |b, v| write_template(b, &t, v)),
        4 => write_instances_fixed::<D, I, 4, _>(instances, out, |b, v| write_template(b, &t, v)),
        _ => write_instances_any(instances, plan, out),
    }
}

/// [`write_instances`] for a block of `W` words, each written by `write_block`.
#[inline]
fn write_instances_fixed<'a, D, I, const W: usize, B>(
    instances: I,
    out: &mut [u8],
    write_block: B,
) -> usize
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
    B: Fn(&mut [[u8; 8]; W], &[u64]),
{
    let mut rest = out.as_chunks_mut::<8>().0;
    // The words written are those no longer in `rest`.
    let all = rest.len();
    for instance in instances {
        let instance = instance.borrow();
        let (def_words, name_length) = def_words(&instance.spec.name);
        let Some((def, tail)) = core::mem::take(&mut rest).split_at_mut_checked(def_words) else {
            break;
        };
        let Some((block, tail)) = tail.split_first_chunk_mut::<W>() else {
            break;
        };
        #[allow(
            clippy::cast_possible_truncation,
            reason = "both are at most the reply's length, which fits in u32"
        )]
        let (def_bytes, name_length) = ((def.len() * 8) as u32, name_length as u32);
        write_instance_def(&instance.spec, def_bytes, name_length, def);
        write_block(block, instance.values);
        rest = tail;
    }
    (all - rest.len()) * 8
}

/// A block of `W` words described by `template`: one store per word.
#[inline]
fn write_template<const W: usize>(
    block: &mut [[u8; 8]; W],
    template: &sealed::Template,
    values: &[u64],
) {
    // The template's words, as arrays of the block's length.
    let (Some(base), Some(a), Some(b)) = (
        template.base.first_chunk::<W>(),
        template.a.first_chunk::<W>(),
        template.b.first_chunk::<W>(),
    ) else {
        return;
    };
    if values.len() >= template.need {
        for (((dst, base), (ia, ma)), (ib, mb)) in block.iter_mut().zip(base).zip(a).zip(b) {
            // SAFETY: `Template::new` made every index below `need`, and
            // `values.len() >= need`.
            let va = unsafe { *values.get_unchecked(*ia) };
            // SAFETY: as above.
            let vb = unsafe { *values.get_unchecked(*ib) };
            *dst = (*base | va & *ma | (vb << 32) & *mb).to_le_bytes();
        }
    } else {
        write_block_words(block, template, values);
    }
}

/// A block of [`write_template`] for an instance with too few values: those it lacks
/// are stored as 0, as [`write_block`] does.
#[cold]
fn write_block_words(block: &mut [[u8; 8]], template: &sealed::Template, values: &[u64]) {
    let value = |(index, mask): (usize, u64)| values.get(index).copied().unwrap_or(0) & mask;
    for (((dst, base), a), b) in block
        .iter_mut()
        .zip(template.base)
        .zip(template.a)
        .zip(template.b)
    {
        let (b_index, b_mask) = b;
        let high = values.get(b_index).copied().unwrap_or(0) << 32 & b_mask;
        *dst = (base | value(a) | high).to_le_bytes();
    }
}

/// The shape (as in [`shapes!`]) `template` would have if it were one: the kind of each word
/// read from its masks. [`write_instances`] then compares the whole template with that shape's.
fn shape_of(template: &sealed::Template) -> u32 {
    const LOW: u64 = 0xFFFF_FFFF;
    const HIGH: u64 = !LOW;
    let words = template.base.first().map_or(0, |b| *b / 8);
    let mut shape = 0;
    for (word, ((_, a), (_, b))) in template.a.iter().zip(&template.b).enumerate().rev() {
        if word as u64 >= words {
            continue;
        }
        let kind = match (word, *a, *b) {
            (0, 0, HIGH) => 1,
            (0, 0, 0) => 2,
            (_, u64::MAX, 0) => 3,
            (_, LOW, HIGH) => 4,
            (_, LOW, 0) => 5,
            _ => return 0,
        };
        shape = shape << 4 | kind;
    }
    shape
}

/// The template of block shape `shape` (as in [`shapes!`]). Evaluated at compile time only
/// (outside tests).
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated in const blocks only, where an index out of range is a compile error; \
              every index is below TEMPLATE_WORDS anyway"
)]
const fn shape_template(shape: u32) -> sealed::Template {
    const LOW: u64 = 0xFFFF_FFFF;
    const HIGH: u64 = !LOW;
    let mut t = sealed::Template {
        base: [0; sealed::TEMPLATE_WORDS],
        a: [(0, 0); sealed::TEMPLATE_WORDS],
        b: [(0, 0); sealed::TEMPLATE_WORDS],
        need: 1,
    };
    let mut next = 0;
    let mut word = 0;
    while word < sealed::TEMPLATE_WORDS && (shape >> (4 * word)) & 0xF != 0 {
        match (shape >> (4 * word)) & 0xF {
            1 => {
                t.b[word] = (next, HIGH);
                next += 1;
            }
            3 => {
                t.a[word] = (next, u64::MAX);
                next += 1;
            }
            4 => {
                t.a[word] = (next, LOW);
                t.b[word] = (next + 1, HIGH);
                next += 2;
            }
            5 => {
                t.a[word] = (next, LOW);
                next += 1;
            }
            _ => {}
        }
        word += 1;
    }
    t.base[0] = 8 * word as u64;
    if next > 1 {
        t.need = next;
    }
    t
}

/// The counter block of shape `S` (of `W` words): as [`write_template`] with
/// `shape_template(S)`, whose constants are folded into the code.
#[allow(
    clippy::inline_always,
    reason = "the block stores of the per-instance loop compiled for this shape"
)]
#[inline(always)]
fn write_shaped<const W: usize, const S: u32>(block: &mut [[u8; 8]; W], values: &[u64]) {
    // A reference to a constant (a read-only static): its fields fold into the code, and the
    // template is never copied onto the stack (measured: LLVM copied it once per instance).
    let template: &'static sealed::Template = &const { shape_template(S) };
    if values.len() < template.need {
        write_block_words(block, template, values);
        return;
    }
    for (((dst, base), (ia, ma)), (ib, mb)) in block
        .iter_mut()
        .zip(template.base)
        .zip(template.a)
        .zip(template.b)
    {
        // Every index is below `need` (constants: the checks fold away).
        let va = values.get(ia).copied().unwrap_or(0);
        let vb = values.get(ib).copied().unwrap_or(0);
        *dst = (base | va & ma | (vb << 32) & mb).to_le_bytes();
    }
}

/// [`write_instances`] for any plan.
#[inline]
fn write_instances_any<'a, D, I>(instances: I, plan: &sealed::Plan<'_>, out: &mut [u8]) -> usize
where
    D: Borrow<InstanceDesc<'a>>,
    I: Iterator<Item = D>,
{
    let mut rest = out.as_chunks_mut::<8>().0;
    let mut words = 0usize;
    for instance in instances {
        let instance = instance.borrow();
        let (def_words, name_length) = def_words(&instance.spec.name);
        let Some((def, tail)) = core::mem::take(&mut rest).split_at_mut_checked(def_words) else {
            break;
        };
        let Some((block, tail)) = tail.split_at_mut_checked(plan.words) else {
            break;
        };
        // `def` lies inside the reply, whose length fits in u32 (`measure_object`), so does it;
        // and `name_length` is at most its length.
        #[allow(
            clippy::cast_possible_truncation,
            reason = "both are at most the reply's length, which fits in u32"
        )]
        let (def_bytes, name_length) = ((def.len() * 8) as u32, name_length as u32);
        write_instance_def(&instance.spec, def_bytes, name_length, def);
        write_block(block, plan, instance.values);
        rest = tail;
        words += def_words + plan.words;
    }
    words * 8
}

/// Words of the instance definition of an instance named `name`, and its `NameLength`.
#[allow(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
fn def_words(name: &InstanceName<'_>) -> (usize, usize) {
    match name {
        InstanceName::Padded(p) => (INSTANCE_DEF_WORDS + p.area.len(), p.name_length as usize),
        // An even number of bytes, plus the NUL, rounded up to a word: one word more than
        // the name's whole words.
        InstanceName::Checked(CheckedName(bytes)) => {
            (INSTANCE_DEF_WORDS + bytes.len() / 8 + 1, bytes.len() + 2)
        }
        other => {
            let name_length = other.name_length();
            // `name_length` may saturate for an over-long `Str`: then the record does not fit.
            (INSTANCE_DEF_WORDS + name_length.div_ceil(8), name_length)
        }
    }
}

/// Words of a `PERF_INSTANCE_DEFINITION` without its name.
const INSTANCE_DEF_WORDS: usize = wire::field::instance_definition::LEN / 8;

// `write_instance_def` stores the fields in this order, two `u32`s per word.
const _: () = {
    use wire::field::instance_definition as f;
    assert!(
        f::BYTE_LENGTH == 0
            && f::PARENT_OBJECT_TITLE_INDEX == 4
            && f::PARENT_OBJECT_INSTANCE == 8
            && f::UNIQUE_ID == 12
            && f::NAME_OFFSET == 16
            && f::NAME_LENGTH == 20
            && f::LEN == 8 * INSTANCE_DEF_WORDS
            && INSTANCE_DEF_WORDS == 3
    );
};

/// Two `u32` fields as one little-endian word, `lo` first.
#[inline]
const fn pair(lo: u32, hi: u32) -> [u8; 8] {
    (lo as u64 | (hi as u64) << 32).to_le_bytes()
}

/// Writes an instance definition, its name, the NUL and zeroed padding into `def`, which is
/// exactly the definition's length.
#[allow(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
fn write_instance_def(
    spec: &InstanceSpec<'_>,
    byte_length: u32,
    name_length: u32,
    def: &mut [[u8; 8]],
) {
    let Some((head, name)) = def.split_first_chunk_mut::<INSTANCE_DEF_WORDS>() else {
        return;
    };
    *head = [
        pair(byte_length, spec.parent_title_index),
        pair(spec.parent_instance, spec.unique_id.cast_unsigned()),
        pair(len32(wire::field::instance_definition::LEN), name_length),
    ];
    match &spec.name {
        InstanceName::Padded(p) => put_words(name, p.area),
        InstanceName::Checked(CheckedName(bytes)) => put_le(name, bytes),
        other => put_name(name, *other),
    }
}

/// The name stores of [`write_instance_def`] for names not yet checked (or none).
#[inline(never)]
fn put_name(name: &mut [[u8; 8]], spec_name: InstanceName<'_>) {
    match spec_name {
        InstanceName::Checked(CheckedName(bytes)) => put_le(name, bytes),
        InstanceName::Padded(p) => put_words(name, p.area),
        InstanceName::None => name.fill([0; 8]),
        InstanceName::Utf16(units) => match units_le(units) {
            Some(bytes) => put_le(name, bytes),
            None => put_units(name, units),
        },
        InstanceName::Str(s) => put_str(name.as_flattened_mut(), s),
    }
}

/// Copies a name area into `area` (the same number of words for a name measured as it is):
/// short names as two possibly overlapping pairs of words, without the set-up of a loop.
#[allow(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
fn put_words(area: &mut [[u8; 8]], words: &[[u8; 8]]) {
    let n = words.len();
    if area.len() == n && n.wrapping_sub(2) <= 2 {
        if let (Some(d), Some(w)) = (area.first_chunk_mut::<2>(), words.first_chunk::<2>()) {
            *d = *w;
        }
        if let (Some(d), Some(w)) = (area.last_chunk_mut::<2>(), words.last_chunk::<2>()) {
            *d = *w;
        }
    } else {
        for (d, w) in area.iter_mut().zip(words) {
            *d = *w;
        }
    }
}

/// Writes `units` as UTF-16LE at the start of `area`, the name's slot (whole words, at least
/// one unit longer than the name), and zeroes the rest of it: the NUL and the padding.
#[inline]
fn put_units(area: &mut [[u8; 8]], units: &[u16]) {
    // The NUL and the padding lie in the last word; the name then overwrites its start.
    if let Some(last) = area.last_mut() {
        *last = [0; 8];
    }
    let (pairs, _) = area.as_flattened_mut().as_chunks_mut::<2>();
    // One block copy (the loop is a `memcpy` of the units' little-endian bytes).
    for (dst, unit) in pairs.iter_mut().zip(units) {
        *dst = unit.to_le_bytes();
    }
}

/// [`put_units`] for a name in UTF-16LE bytes (an even number): `area` has one word more
/// than the name has whole words; that last word takes the name's tail, the NUL and the
/// padding.
#[allow(
    clippy::inline_always,
    reason = "part of the per-instance loop; measured: outlined, it costs a call per instance"
)]
#[inline(always)]
fn put_le(area: &mut [[u8; 8]], bytes: &[u8]) {
    let (words, tail) = bytes.as_chunks::<8>();
    // The name's last 0 to 3 units, the NUL and the padding: the last word. For a name of at
    // least one word, the top `tail.len()` bytes of its last 8 (0, 2, 4 or 6: the length is
    // even), shifted down without a branch (in two shifts, so that a tail of 0 bytes shifts
    // all 64 bits out).
    let last = match bytes.last_chunk::<8>() {
        Some(end) => (u64::from_le_bytes(*end) >> 1) >> (63 - 8 * tail.len()),
        None => short_tail(tail),
    };
    let n = words.len();
    if area.len() != n + 1 {
        return put_le_any(area, words, last);
    }
    // Names are short: 2 to 4 words as two (possibly overlapping) pairs, without the set-up
    // of a vectorised loop. (The checks below fold away given the lengths tested here.)
    if n.wrapping_sub(2) <= 2 {
        if let (Some(d), Some(w)) = (area.first_chunk_mut::<2>(), words.first_chunk::<2>()) {
            *d = *w;
        }
        let end = area
            .get_mut(n - 2..n)
            .and_then(|s| s.first_chunk_mut::<2>());
        if let (Some(d), Some(w)) = (end, words.last_chunk::<2>()) {
            *d = *w;
        }
    } else {
        for (d, w) in area.iter_mut().zip(words) {
            *d = *w;
        }
    }
    if let Some(dst) = area.get_mut(n) {
        *dst = last.to_le_bytes();
    }
}

/// The last word of [`put_le`] for a name shorter than a word: its units, zero-extended.
#[inline]
fn short_tail(tail: &[u8]) -> u64 {
    match *tail {
        [b0, b1] => u64::from(u16::from_le_bytes([b0, b1])),
        [b0, b1, b2, b3] => u64::from(u32::from_le_bytes([b0, b1, b2, b3])),
        [b0, b1, b2, b3, b4, b5] => u64::from_le_bytes([b0, b1, b2, b3, b4, b5, 0, 0]),
        // No tail, or (for a name of odd length, which a `CheckedName` is not) a lone byte.
        _ => 0,
    }
}

/// [`put_le`] into an `area` of another length (never, for a consistent one): the words that
/// fit, then `last`, then zeros.
#[cold]
#[inline(never)]
fn put_le_any(area: &mut [[u8; 8]], words: &[[u8; 8]], last: u64) {
    let (head, rest) = area.split_at_mut(words.len().min(area.len()));
    for (dst, word) in head.iter_mut().zip(words) {
        *dst = *word;
    }
    if let Some((dst, rest)) = rest.split_first_mut() {
        *dst = last.to_le_bytes();
        rest.fill([0; 8]);
    }
}

/// Writes `s` as UTF-16LE at the start of `area`, then zeroes the rest of it.
fn put_str(area: &mut [u8], s: &str) {
    let (pairs, odd) = area.as_chunks_mut::<2>();
    odd.fill(0);
    let mut written = 0;
    for (dst, unit) in pairs.iter_mut().zip(s.encode_utf16()) {
        *dst = unit.to_le_bytes();
        written += 1;
    }
    if let Some(rest) = pairs.get_mut(written..) {
        rest.fill([0; 2]);
    }
}

/// The 8-byte words of a counter block of `block_len` bytes that `ByteLength` and the counters
/// do not cover entirely, one bit per word: the only ones [`write_block`] must zero. `None` for
/// a block of more than 64 words (then it is zeroed whole). Counters are aligned to their size
/// (`check_counters`), so each lies inside one word; one that did not would only count as
/// covering less, which zeroes more.
fn block_gaps(counters: &[CounterSpec], block_len: usize) -> Option<u64> {
    let words = block_len / 8;
    let mut covered = [0u8; 64];
    if words > covered.len() {
        return None;
    }
    if let Some(first) = covered.first_mut() {
        *first = 0x0F; // ByteLength
    }
    for c in counters {
        let (size, bytes) = match c.size {
            4 => (4, 0x0Fu8),
            8 => (8, 0xFFu8),
            _ => continue,
        };
        let offset = c.offset as usize;
        if offset.checked_add(size).is_none_or(|end| end > block_len) {
            continue;
        }
        if let Some(word) = covered.get_mut(offset / 8) {
            *word |= bytes << (offset % 8);
        }
    }
    let gaps = covered
        .iter()
        .take(words)
        .enumerate()
        .filter(|(_, bytes)| **bytes != 0xFF)
        .fold(0u64, |gaps, (word, _)| gaps | 1 << word);
    Some(gaps)
}

/// Writes a counter block into `block` (exactly its length, in words): `ByteLength`, zeros,
/// and the values at their offsets.
#[inline]
fn write_block(block: &mut [[u8; 8]], plan: &sealed::Plan<'_>, values: &[u64]) {
    // `block` lies inside a buffer of at most `isize::MAX` bytes.
    let byte_length = len32(block.len() * 8);
    match plan.gaps {
        // Every counter gets a value, so only the gaps need zeroing.
        Some(mut gaps) if values.len() >= plan.counters.len() => {
            while gaps != 0 {
                if let Some(word) = block.get_mut(gaps.trailing_zeros() as usize) {
                    *word = [0; 8];
                }
                gaps &= gaps - 1;
            }
        }
        _ => block.fill([0; 8]),
    }
    if let Some(dst) = block.first_mut().and_then(|w| w.first_chunk_mut::<4>()) {
        *dst = byte_length.to_le_bytes();
    }
    if let Some((n8, n4)) = plan.direct {
        // Disjoint stores, checked against `block` and `values` only for memory safety
        // (`Plan::slots` placed every slot inside the block).
        for (index, word) in plan.eights.iter().take(n8) {
            if let (Some(dst), Some(value)) = (
                block.get_mut(usize::from(*word)),
                values.get(usize::from(*index)),
            ) {
                *dst = value.to_le_bytes();
            }
        }
        let (halves, _) = block.as_flattened_mut().as_chunks_mut::<4>();
        for (index, half) in plan.fours.iter().take(n4) {
            if let (Some(dst), Some(value)) = (
                halves.get_mut(usize::from(*half)),
                values.get(usize::from(*index)),
            ) {
                *dst = ((*value & 0xFFFF_FFFF) as u32).to_le_bytes();
            }
        }
        return;
    }
    // Counters are aligned to their size (`check_counters`): each lies inside one word, a
    // 4-byte one in its low or high half.
    for (c, value) in plan.counters.iter().zip(values) {
        let offset = c.offset as usize;
        let Some(word) = block.get_mut(offset / 8) else {
            continue;
        };
        match c.size {
            8 => *word = value.to_le_bytes(),
            // A 4-byte counter keeps the low 32 bits: the format's definition of the value.
            4 => {
                if let Some(half) = word.as_chunks_mut::<4>().0.get_mut((offset / 4) % 2) {
                    *half = ((*value & 0xFFFF_FFFF) as u32).to_le_bytes();
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bytes::{i32_at, u16_at, u32_at};
    use crate::v1::validate::{self, Expect};

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    pub(crate) fn counter(counter_type: CounterType, size: u32, offset: u32) -> CounterSpec {
        CounterSpec {
            name_title_index: 1000 + offset,
            help_title_index: 1001 + offset,
            default_scale: 0,
            detail_level: DetailLevel::Novice,
            counter_type,
            size,
            offset,
        }
    }

    pub(crate) fn header(index: u32, costly: bool) -> ObjectHeader {
        ObjectHeader {
            name_title_index: index,
            help_title_index: index + 1,
            detail_level: DetailLevel::Novice,
            default_counter: 0,
            perf_time: 0,
            perf_freq: 0,
            costly,
        }
    }

    /// Writes with two different poisons; both results must be identical, so every reported
    /// byte was written.
    fn write_both(objects: &[&dyn ObjectSource], mode: Mode) -> Vec<u8> {
        let needed = objects_len(objects, mode).unwrap();
        let mut a = vec![0xA5u8; needed + 16];
        let mut b = vec![0xCCu8; needed + 16];
        let wa = write_objects(objects, mode, &mut a).unwrap();
        let wb = write_objects(objects, mode, &mut b).unwrap();
        assert_eq!(wa, wb);
        assert_eq!(wa.bytes, needed);
        assert_eq!(
            &a[..needed],
            &b[..needed],
            "a byte inside the reply was left unwritten"
        );
        assert!(
            a[needed..].iter().all(|x| *x == 0xA5),
            "wrote past the reported length"
        );
        a.truncate(needed);
        a
    }

    #[test]
    fn single_instance_layout() {
        let counters = [
            counter(CounterType::Rawcount, 4, 4),
            counter(CounterType::LargeRawcount, 8, 8),
        ];
        let obj = ObjectDesc {
            header: header(1000, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[0x1_2345_6789, 0x1122_3344_5566_7788]),
        };
        let out = write_both(&[&obj], Mode::Data);
        // OBJ 64 + 2 CTR 80 = 144; block 4 + 4 + 8 = 16.
        assert_eq!(out.len(), 160);
        assert_eq!(u32_at(&out, 0), 160, "TotalByteLength");
        assert_eq!(u32_at(&out, 4), 144, "DefinitionLength");
        assert_eq!(u32_at(&out, 8), 64, "HeaderLength");
        assert_eq!(u32_at(&out, 12), 1000);
        assert_eq!(u32_at(&out, 32), 2, "NumCounters");
        assert_eq!(i32_at(&out, 40), -1, "NumInstances = PERF_NO_INSTANCES");
        assert_eq!(u32_at(&out, 64), 40, "first counter ByteLength");
        assert_eq!(u32_at(&out, 64 + 28), 0x0001_0000, "CounterType");
        assert_eq!(u32_at(&out, 104 + 36), 8, "second CounterOffset");
        assert_eq!(u32_at(&out, 144), 16, "counter block ByteLength");
        assert_eq!(
            u32_at(&out, 148),
            0x2345_6789,
            "4-byte value keeps the low 32 bits"
        );
        assert_eq!(&out[152..160], &0x1122_3344_5566_7788u64.to_le_bytes());
        let s = validate::validate_objects(&out, 1, Expect::Data).unwrap();
        assert_eq!(s.instances, 1);
    }

    #[test]
    fn multi_instance_names_are_utf16_nul_terminated_and_padded() {
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let utf16: Vec<u16> = "Größe ✓".encode_utf16().collect();
        let instances = [
            InstanceDesc {
                spec: InstanceSpec::named("Small Wave"),
                values: &[1],
            },
            InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::Utf16(&utf16),
                    unique_id: 7,
                    parent_title_index: 230,
                    parent_instance: 3,
                },
                values: &[2],
            },
            InstanceDesc {
                spec: InstanceSpec {
                    name: InstanceName::None,
                    unique_id: 9,
                    parent_title_index: 0,
                    parent_instance: 0,
                },
                values: &[3],
            },
        ];
        let obj = ObjectDesc {
            header: header(2000, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let out = write_both(&[&obj], Mode::Data);
        assert_eq!(i32_at(&out, 40), 3, "NumInstances");
        let inst = 104;
        // "Small Wave": 10 units + NUL = 22 bytes; 24 + 22 = 46 -> 48.
        assert_eq!(u32_at(&out, inst), 48);
        assert_eq!(i32_at(&out, inst + 12), -1, "PERF_NO_UNIQUE_ID");
        assert_eq!(u32_at(&out, inst + 16), 24, "NameOffset");
        assert_eq!(
            u32_at(&out, inst + 20),
            22,
            "NameLength includes the NUL, not padding"
        );
        assert_eq!(u16_at(&out, inst + 24), u16::from(b'S'));
        assert_eq!(u16_at(&out, inst + 24 + 20), 0, "NUL");
        assert_eq!(&out[inst + 46..inst + 48], &[0, 0], "padding is zeroed");
        let block = inst + 48;
        assert_eq!(u32_at(&out, block), 8);
        assert_eq!(u32_at(&out, block + 4), 1);
        let second = block + 8;
        assert_eq!(i32_at(&out, second + 12), 7);
        assert_eq!(u32_at(&out, second + 4), 230);
        assert_eq!(u32_at(&out, second + 8), 3);
        assert_eq!(u32_at(&out, second + 20), 2 * (utf16.len() as u32 + 1));
        let objects: Vec<_> = validate::objects(&out, 0, Expect::Data).collect();
        let o = objects[0].unwrap();
        let names: Vec<Vec<u16>> = o.instances().map(|i| i.name_utf16().collect()).collect();
        assert_eq!(names[0], "Small Wave".encode_utf16().collect::<Vec<_>>());
        assert_eq!(names[1], utf16);
        assert!(names[2].is_empty());
        assert_eq!(
            o.instances()
                .nth(2)
                .unwrap()
                .definition()
                .unwrap()
                .name_length,
            0
        );
    }

    #[test]
    fn zero_instances_and_metadata() {
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let multi = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&[]),
        };
        let single = ObjectDesc {
            header: header(12, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[5]),
        };
        let out = write_both(&[&multi], Mode::Data);
        assert_eq!(out.len(), 104);
        assert_eq!(i32_at(&out, 40), 0);
        let out = write_both(&[&multi, &single], Mode::Metadata);
        assert_eq!(out.len(), 208, "definitions only");
        assert_eq!(i32_at(&out, 40), wire::PERF_METADATA_MULTIPLE_INSTANCES);
        assert_eq!(i32_at(&out, 104 + 40), wire::PERF_METADATA_NO_INSTANCES);
        validate::validate_objects(&out, 2, Expect::Metadata).unwrap();
        assert!(validate::validate_objects(&out, 2, Expect::Data).is_err());
    }

    #[test]
    fn too_small_buffers_are_left_untouched() {
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let instances = [InstanceDesc {
            spec: InstanceSpec::named("x"),
            values: &[1],
        }];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let needed = objects_len(&[&obj], Mode::Data).unwrap();
        for size in 0..needed {
            let mut buf = vec![0x5Au8; size];
            assert_eq!(
                write_objects(&[&obj], Mode::Data, &mut buf),
                Err(WriteError::NoSpace { needed })
            );
            assert!(buf.iter().all(|b| *b == 0x5A));
        }
    }

    #[test]
    fn bad_descriptions_are_refused_before_writing() {
        let cases: [(&[CounterSpec], WriteError); 5] = [
            (
                &[counter(CounterType::Rawcount, 4, 0)],
                WriteError::CounterOffsetInHeader { counter: 0 },
            ),
            (
                &[counter(CounterType::LargeRawcount, 8, 12)],
                WriteError::MisalignedCounter { counter: 0 },
            ),
            (
                &[counter(CounterType::LargeRawcount, 4, 4)],
                WriteError::BadCounterSize { counter: 0 },
            ),
            (
                &[
                    counter(CounterType::RawFraction, 4, 4),
                    counter(CounterType::Rawcount, 4, 8),
                ],
                WriteError::BaseNotFollowing { counter: 0 },
            ),
            (
                &[
                    counter(CounterType::Rawcount, 4, 4),
                    counter(CounterType::RawFraction, 4, 8),
                ],
                WriteError::BaseNotFollowing { counter: 1 },
            ),
        ];
        for (counters, expected) in cases {
            let values = vec![0u64; counters.len()];
            let obj = ObjectDesc {
                header: header(10, false),
                counters,
                instances: InstancesDesc::Single(&values),
            };
            let mut buf = [0x77u8; 512];
            assert_eq!(write_objects(&[&obj], Mode::Data, &mut buf), Err(expected));
            assert!(buf.iter().all(|b| *b == 0x77));
        }
        let counters = [counter(CounterType::Rawcount, 4, 4)];
        let long: Vec<u16> = vec![u16::from(b'a'); MAX_INSTANCE_NAME_UNITS + 1];
        let bad_names = [InstanceName::Str("a\0b"), InstanceName::Utf16(&long)];
        for name in bad_names {
            let instances = [InstanceDesc {
                spec: InstanceSpec {
                    name,
                    unique_id: -1,
                    parent_title_index: 0,
                    parent_instance: 0,
                },
                values: &[1],
            }];
            let obj = ObjectDesc {
                header: header(10, false),
                counters: &counters,
                instances: InstancesDesc::Multi(&instances),
            };
            let mut buf = [0u8; 4096];
            assert_eq!(
                write_objects(&[&obj], Mode::Data, &mut buf),
                Err(WriteError::BadInstanceName { instance: 0 })
            );
        }
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[1, 2]),
        };
        assert_eq!(
            write_objects(&[&obj], Mode::Data, &mut [0u8; 512]),
            Err(WriteError::ValueCount { instance: 0 })
        );
    }

    #[test]
    fn assign_offsets_aligns_each_counter_to_its_size() {
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::LargeRawcount, 8, 0),
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::NoData, 0, 0),
            counter(CounterType::RawFraction, 4, 0),
            counter(CounterType::RawBase, 4, 0),
        ];
        let block = assign_offsets(&mut counters).unwrap();
        let offsets: Vec<u32> = counters.iter().map(|c| c.offset).collect();
        assert_eq!(offsets, [4, 8, 16, 20, 20, 24]);
        assert_eq!(block, 32);
        counters[1].size = 3;
        assert_eq!(
            assign_offsets(&mut counters),
            Err(WriteError::BadCounterSize { counter: 1 })
        );
    }

    #[test]
    fn precision_timers_need_their_timestamp_next() {
        let alone = [counter(CounterType::Precision100nsTimer, 8, 8)];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &alone,
            instances: InstancesDesc::Single(&[1]),
        };
        assert_eq!(
            write_objects(&[&obj], Mode::Data, &mut [0u8; 256]),
            Err(WriteError::BaseNotFollowing { counter: 0 })
        );
        let paired = [
            counter(CounterType::Precision100nsTimer, 8, 8),
            counter(CounterType::LargeRawBase, 8, 16),
        ];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &paired,
            instances: InstancesDesc::Single(&[1, 2]),
        };
        let out = write_both(&[&obj], Mode::Data);
        validate::validate_objects(&out, 1, Expect::Data).unwrap();
    }

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

    #[test]
    fn overlapping_counters_keep_the_last_value() {
        // Shared bytes: the plan falls back to storing counter by counter, in order.
        let counters = [
            counter(CounterType::LargeRawcount, 8, 8),
            counter(CounterType::Rawcount, 4, 12),
            counter(CounterType::Rawcount, 4, 4),
        ];
        let instances = [InstanceDesc {
            spec: InstanceSpec::named("x"),
            values: &[0x1111_1111_2222_2222, 0x3333_3333, 0x4444_4444],
        }];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let out = write_both(&[&obj], Mode::Data);
        let block = out.len() - 16;
        assert_eq!(u32_at(&out, block), 16);
        assert_eq!(u32_at(&out, block + 4), 0x4444_4444);
        assert_eq!(u32_at(&out, block + 8), 0x2222_2222);
        assert_eq!(
            u32_at(&out, block + 12),
            0x3333_3333,
            "the later counter wins"
        );
    }

    #[test]
    fn templates_write_as_write_block_does() {
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::BulkCount, 8, 0),
            counter(CounterType::NoData, 0, 0),
            counter(CounterType::BulkCount, 8, 0),
        ];
        let block_len = assign_offsets(&mut counters).unwrap() as usize;
        let plan = sealed::Plan::new(&counters, block_len);
        let template = plan.template.unwrap();
        let values = [0x1_0000_0001u64, 0x2_0000_0002, 3, 4, u64::MAX];
        for n in 0..=values.len() {
            let mut expected = vec![[0xA5u8; 8]; plan.words];
            write_block(&mut expected, &plan, &values[..n]);
            let mut short = vec![[0xCCu8; 8]; plan.words];
            write_block_words(&mut short, &template, &values[..n]);
            assert_eq!(short, expected, "{n} values");
        }
    }

    /// Whether `template` is one of the `shapes!` (then `write_instances` compiles its loop).
    fn listed(template: &sealed::Template) -> bool {
        macro_rules! listed {
            ($(($w:literal, $s:literal)),*) => {
                matches!(shape_of(template), $($s)|*)
            };
        }
        shapes!(listed) && *template == shape_template(shape_of(template))
    }

    #[test]
    fn every_small_block_of_assign_offsets_has_a_shaped_writer() {
        // Every sequence of 4- and 8-byte counters whose block is at most 4 words, written
        // as `write_instances_any` writes it, with all values, some, and none.
        let write = |counters: &[CounterSpec], block_len: usize, any: bool| {
            let plan = sealed::Plan::new(counters, block_len);
            let values: Vec<u64> = (0..counters.len() as u64)
                .map(|i| (0x0101_0101_0101_0101 * (i + 1)) ^ 0x8000_0000_8000_0000)
                .collect();
            let instances: Vec<InstanceDesc<'_>> = (0..=values.len())
                .map(|k| InstanceDesc {
                    spec: InstanceSpec::named("x"),
                    values: &values[..k],
                })
                .collect();
            let mut out = vec![0xA5u8; instances.len() * (32 + block_len)];
            let len = if any {
                write_instances_any(instances.iter(), &plan, &mut out)
            } else {
                write_instances(instances.iter(), &plan, &mut out)
            };
            assert_eq!(len, out.len());
            out
        };
        let mut covered = 0;
        for n in 0..=7u32 {
            for bits in 0..1u32 << n {
                let mut counters: Vec<CounterSpec> = (0..n)
                    .map(|i| {
                        if bits >> i & 1 == 0 {
                            counter(CounterType::Rawcount, 4, 0)
                        } else {
                            counter(CounterType::BulkCount, 8, 0)
                        }
                    })
                    .collect();
                let block_len = assign_offsets(&mut counters).unwrap() as usize;
                if block_len > 32 {
                    continue;
                }
                let plan = sealed::Plan::new(&counters, block_len);
                assert!(
                    listed(&plan.template.unwrap()),
                    "{n} counters, sizes {bits:b}"
                );
                covered += 1;
                assert_eq!(
                    write(&counters, block_len, false),
                    write(&counters, block_len, true),
                    "{n} counters, sizes {bits:b}"
                );
            }
        }
        assert_eq!(covered, 40, "the shapes! list");
        // A layout outside the list (a counter without data) keeps the template loop.
        let mut counters = [
            counter(CounterType::Rawcount, 4, 0),
            counter(CounterType::NoData, 0, 0),
            counter(CounterType::Rawcount, 4, 0),
        ];
        let block_len = assign_offsets(&mut counters).unwrap() as usize;
        let plan = sealed::Plan::new(&counters, block_len);
        assert!(!listed(&plan.template.unwrap()));
        assert_eq!(
            write(&counters, block_len, false),
            write(&counters, block_len, true)
        );
    }

    #[test]
    fn average_timer_may_be_eight_bytes() {
        let counters = [
            counter(CounterType::AverageTimer, 8, 8),
            counter(CounterType::AverageBase, 4, 16),
        ];
        let obj = ObjectDesc {
            header: header(10, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[u64::MAX, 3]),
        };
        let out = write_both(&[&obj], Mode::Data);
        validate::validate_objects(&out, 1, Expect::Data).unwrap();
    }
}
