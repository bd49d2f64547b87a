// SPDX-License-Identifier: MIT OR Apache-2.0
//! Structural decoder and validator of V1 performance data: the checks Perflib makes at
//! `ExtCounterTestLevel` 1 (the `CollectPerformanceData` reference page) plus the layout rules of
//! `docs/v1-format.md` (sizes multiple of 8, `DefinitionLength`, the instance chain ending on
//! `TotalByteLength`, `NumInstances` matching the query, bases after their counters, name and
//! counter bounds), each a distinct [`Rule`] reported with the byte offset where it was broken.
//!
//! `parse_objects` walks a run of `PERF_OBJECT_TYPE` blocks (what `CollectPerformanceData`
//! returns); [`DataBlockRef::parse`] a whole `PERF_DATA_BLOCK` reply. An [`ObjectRef`] is only
//! handed out after its whole object — definitions, instance chain, counter blocks — has been
//! checked, so reading it afterwards cannot fail. Nothing here allocates or panics.

use crate::bytes::{self, align8};
use crate::counter_type::CounterType;
use crate::v1::wire::{
    self, CounterBlock, CounterDefinition, CounterDefinitionRepr, DataBlock, DataBlockRepr,
    InstanceDefinition, InstanceDefinitionRepr, ObjectType, ObjectTypeRepr,
};

const OBJ: usize = wire::field::object_type::LEN;
const CTR: usize = wire::field::counter_definition::LEN;
const INST: usize = wire::field::instance_definition::LEN;
const BLOCK: usize = wire::field::counter_block::LEN;
const PDB: usize = wire::field::data_block::LEN;

/// A broken rule and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Byte offset of the structure (or field) that breaks the rule, from the start of the
    /// bytes given to the validator.
    pub offset: usize,
    /// The rule.
    pub rule: Rule,
}

impl core::fmt::Display for Violation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "at offset {} (0x{:x}): {}",
            self.offset, self.offset, self.rule
        )
    }
}

/// The rules the validator enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `PERF_DATA_BLOCK.Signature` is not `L"PERF"`.
    Signature,
    /// `PERF_DATA_BLOCK.LittleEndian` is not 1.
    NotLittleEndian,
    /// `PERF_DATA_BLOCK.Version`/`Revision` is not 1.
    Version,
    /// `PERF_DATA_BLOCK.HeaderLength` is not `(88 + SystemNameLength + 7) & !7`.
    DataBlockHeaderLength,
    /// The computer name does not lie inside the header, or is not UTF-16 with a NUL.
    SystemName,
    /// `PERF_DATA_BLOCK.TotalByteLength` exceeds the bytes available.
    DataBlockTotalLength,
    /// A structure is cut off by the end of the data.
    Truncated,
    /// `PERF_OBJECT_TYPE.HeaderLength` is not 64.
    ObjectHeaderLength,
    /// `DefinitionLength` is not `64 + 40 × NumCounters`.
    DefinitionLength,
    /// `PERF_OBJECT_TYPE.TotalByteLength` is not a multiple of 8.
    ObjectLengthUnaligned,
    /// `PERF_OBJECT_TYPE.TotalByteLength` runs past the data or is shorter than the definitions.
    ObjectLengthOutOfBounds,
    /// `DefaultCounter` is neither −1 nor the index of a counter.
    DefaultCounter,
    /// `NumInstances` is not valid for this kind of reply (−1 or 0..N for data; −2/−3 only in
    /// metadata replies).
    NumInstances,
    /// `PERF_COUNTER_DEFINITION.ByteLength` is not 40.
    CounterByteLength,
    /// `CounterSize` is not 0, 4 or 8, or disagrees with the counter type's size bits.
    CounterSize,
    /// A fraction, average or multi counter is not directly followed by its base counter, or a
    /// precision timer by its `PERF_PRECISION_TIMESTAMP` (`PERF_LARGE_RAW_BASE`) counter.
    BaseNotFollowing,
    /// `PERF_INSTANCE_DEFINITION.ByteLength` is not a multiple of 8 or is less than 24.
    InstanceLength,
    /// An instance name does not lie inside its instance definition (`NameOffset` before the
    /// end of the fixed part, or `NameOffset + NameLength > ByteLength`).
    NameOutsideInstance,
    /// A UTF-16 instance name has an odd length or does not end with a NUL.
    NameNotTerminated,
    /// `PERF_COUNTER_BLOCK.ByteLength` is not a multiple of 8 or is less than 4.
    BlockLength,
    /// A counter's `CounterOffset + CounterSize` lies outside a counter block (or inside its
    /// 4-byte header).
    CounterOutsideBlock,
    /// The instance chain (or the single counter block) does not end exactly at the end of its
    /// object.
    InstanceChain,
    /// The sum of the objects' `TotalByteLength` differs from the reported total.
    TotalLengthMismatch,
    /// The number of objects differs from the reported count.
    ObjectCount,
}

impl Rule {
    /// A short description of the rule.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Signature => "PERF_DATA_BLOCK signature is not \"PERF\"",
            Self::NotLittleEndian => "PERF_DATA_BLOCK.LittleEndian is not 1",
            Self::Version => "PERF_DATA_BLOCK version or revision is not 1",
            Self::DataBlockHeaderLength => {
                "PERF_DATA_BLOCK.HeaderLength is not (88 + SystemNameLength + 7) & ~7"
            }
            Self::SystemName => "the computer name is not a NUL-terminated name inside the header",
            Self::DataBlockTotalLength => "PERF_DATA_BLOCK.TotalByteLength exceeds the data",
            Self::Truncated => "structure cut off by the end of the data",
            Self::ObjectHeaderLength => "PERF_OBJECT_TYPE.HeaderLength is not 64",
            Self::DefinitionLength => "DefinitionLength is not 64 + 40 * NumCounters",
            Self::ObjectLengthUnaligned => "PERF_OBJECT_TYPE.TotalByteLength is not 8-aligned",
            Self::ObjectLengthOutOfBounds => {
                "PERF_OBJECT_TYPE.TotalByteLength is past the data or before the definitions end"
            }
            Self::DefaultCounter => "DefaultCounter is neither -1 nor a counter index",
            Self::NumInstances => "NumInstances is not valid for this kind of reply",
            Self::CounterByteLength => "PERF_COUNTER_DEFINITION.ByteLength is not 40",
            Self::CounterSize => "CounterSize is not 0, 4 or 8 or disagrees with the counter type",
            Self::BaseNotFollowing => "base counter does not directly follow its counter",
            Self::InstanceLength => {
                "PERF_INSTANCE_DEFINITION.ByteLength is not 8-aligned or is below 24"
            }
            Self::NameOutsideInstance => "instance name lies outside its instance definition",
            Self::NameNotTerminated => "UTF-16 instance name has an odd length or no NUL",
            Self::BlockLength => "PERF_COUNTER_BLOCK.ByteLength is not 8-aligned or is below 4",
            Self::CounterOutsideBlock => "counter offset + size lies outside the counter block",
            Self::InstanceChain => "instances do not end exactly at the end of their object",
            Self::TotalLengthMismatch => "sum of objects' TotalByteLength differs from the total",
            Self::ObjectCount => "number of objects differs from the reported count",
        }
    }

    /// A stable kebab-case name for the rule (used in JSON and by tests).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Signature => "signature",
            Self::NotLittleEndian => "not-little-endian",
            Self::Version => "version",
            Self::DataBlockHeaderLength => "data-block-header-length",
            Self::SystemName => "system-name",
            Self::DataBlockTotalLength => "data-block-total-length",
            Self::Truncated => "truncated",
            Self::ObjectHeaderLength => "object-header-length",
            Self::DefinitionLength => "definition-length",
            Self::ObjectLengthUnaligned => "object-length-unaligned",
            Self::ObjectLengthOutOfBounds => "object-length-out-of-bounds",
            Self::DefaultCounter => "default-counter",
            Self::NumInstances => "num-instances",
            Self::CounterByteLength => "counter-byte-length",
            Self::CounterSize => "counter-size",
            Self::BaseNotFollowing => "base-not-following",
            Self::InstanceLength => "instance-length",
            Self::NameOutsideInstance => "name-outside-instance",
            Self::NameNotTerminated => "name-not-terminated",
            Self::BlockLength => "block-length",
            Self::CounterOutsideBlock => "counter-outside-block",
            Self::InstanceChain => "instance-chain",
            Self::TotalLengthMismatch => "total-length-mismatch",
            Self::ObjectCount => "object-count",
        }
    }
}

impl core::fmt::Display for Rule {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} [{}]", self.describe(), self.name())
    }
}

/// Which `NumInstances` forms a reply may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A data reply: −1 (single instance) or 0..N.
    Data,
    /// A metadata reply: −2 or −3, definitions only.
    Metadata,
    /// Either (for decoding captures of unknown origin).
    Any,
}

fn violation(offset: usize, rule: Rule) -> Violation {
    Violation { offset, rule }
}

/// A checked `PERF_OBJECT_TYPE` with its definitions, instances and counter blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    offset: usize,
    bytes: &'a [u8],
    header: ObjectTypeRepr,
}

/// A checked instance (or the single counter block of a single-instance object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceRef<'a> {
    offset: usize,
    definition: Option<InstanceDefinitionRepr>,
    name: &'a [u8],
    block: &'a [u8],
    code_page: u32,
}

impl<'a> ObjectRef<'a> {
    /// Offset of the object from the start of the validated bytes.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The object header.
    pub const fn header(&self) -> &ObjectTypeRepr {
        &self.header
    }

    /// The object's bytes (`TotalByteLength` of them).
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Whether the object is single-instance (`NumInstances` is −1 or −3).
    pub const fn is_single_instance(&self) -> bool {
        matches!(
            self.header.num_instances,
            wire::PERF_NO_INSTANCES | wire::PERF_METADATA_NO_INSTANCES
        )
    }

    /// The counter definitions, in order.
    pub fn counters(&self) -> impl Iterator<Item = CounterDefinitionRepr> + 'a {
        let bytes = self.bytes;
        (0..self.header.num_counters as usize).filter_map(move |i| {
            let at = OBJ + i * CTR;
            let view = CounterDefinition::new_checked(bytes.get(at..)?).ok()?;
            Some(CounterDefinitionRepr::parse(&view))
        })
    }

    /// The instances in order; a single-instance data object yields one [`InstanceRef`] without
    /// a definition; a metadata object yields none.
    pub fn instances(&self) -> Instances<'a> {
        let remaining = match self.header.num_instances {
            wire::PERF_NO_INSTANCES => 1,
            n => usize::try_from(n).unwrap_or(0),
        };
        Instances {
            bytes: self.bytes,
            base: self.offset,
            at: self.header.definition_length as usize,
            remaining,
            single: self.header.num_instances == wire::PERF_NO_INSTANCES,
            code_page: self.header.code_page,
        }
    }
}

/// Iterator over the instances of a checked object.
#[derive(Clone, Debug)]
pub struct Instances<'a> {
    bytes: &'a [u8],
    base: usize,
    at: usize,
    remaining: usize,
    single: bool,
    code_page: u32,
}

impl<'a> Iterator for Instances<'a> {
    type Item = InstanceRef<'a>;

    fn next(&mut self) -> Option<InstanceRef<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let offset = self.base + self.at;
        let (definition, name) = if self.single {
            (None, &[][..])
        } else {
            let view = InstanceDefinition::new_checked(self.bytes.get(self.at..)?).ok()?;
            let def = InstanceDefinitionRepr::parse(&view);
            // `NameOffset` is only checked when there is a name: with `NameLength` 0 it may
            // point anywhere, and must not end the iteration.
            let name = if def.name_length == 0 {
                &[][..]
            } else {
                let name_at = self.at + def.name_offset as usize;
                self.bytes
                    .get(name_at..name_at + def.name_length as usize)?
            };
            self.at += def.byte_length as usize;
            (Some(def), name)
        };
        let len = CounterBlock::new_checked(self.bytes.get(self.at..)?)
            .ok()?
            .byte_length() as usize;
        let block = self.bytes.get(self.at..self.at + len)?;
        self.at += len;
        Some(InstanceRef {
            offset,
            definition,
            name,
            block,
            code_page: self.code_page,
        })
    }
}

impl<'a> InstanceRef<'a> {
    /// Offset of the instance definition (or of the counter block of a single-instance object).
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The instance definition, `None` for the single instance of a single-instance object.
    pub const fn definition(&self) -> Option<&InstanceDefinitionRepr> {
        self.definition.as_ref()
    }

    /// The raw name bytes (`NameLength` of them, NUL included).
    pub const fn name_bytes(&self) -> &'a [u8] {
        self.name
    }

    /// The name as UTF-16 units without the terminating NUL (empty for code-page names).
    pub fn name_utf16(&self) -> impl Iterator<Item = u16> + 'a {
        let units = if self.code_page == 0 {
            self.name.len() / 2
        } else {
            0
        };
        let name = self.name;
        (0..units)
            .map(move |i| bytes::u16_at(name, 2 * i))
            .take_while(|u| *u != 0)
    }

    /// The counter block, header included.
    pub const fn block(&self) -> &'a [u8] {
        self.block
    }

    /// The raw value of `counter` in this instance's block (`None` for size 0).
    pub fn value(&self, counter: &CounterDefinitionRepr) -> Option<u64> {
        let at = counter.counter_offset as usize;
        match counter.counter_size {
            4 => bytes::array::<4>(self.block, at).map(|b| u64::from(u32::from_le_bytes(b))),
            8 => bytes::array::<8>(self.block, at).map(u64::from_le_bytes),
            _ => None,
        }
    }
}

/// Checks one counter definition list and returns the lowest block length the counters need.
fn check_counters(obj: &[u8], base: usize, num_counters: usize) -> Result<usize, Violation> {
    let mut needed = BLOCK;
    let mut previous: Option<CounterType> = None;
    for i in 0..num_counters {
        let at = OBJ + i * CTR;
        let view = obj
            .get(at..)
            .and_then(|b| CounterDefinition::new_checked(b).ok())
            .ok_or(violation(base + at, Rule::Truncated))?;
        let c = CounterDefinitionRepr::parse(&view);
        if c.byte_length as usize != CTR {
            return Err(violation(base + at, Rule::CounterByteLength));
        }
        if previous
            .and_then(CounterType::required_follower)
            .is_some_and(|base_type| base_type != c.counter_type)
        {
            return Err(violation(base + at - CTR, Rule::BaseNotFollowing));
        }
        let size_ok = matches!(c.counter_size, 0 | 4 | 8)
            && c.counter_type.size().is_none_or(|declared| {
                declared == c.counter_size
                    || (c.counter_type == CounterType::AverageTimer && c.counter_size == 8)
            });
        if !size_ok {
            return Err(violation(base + at, Rule::CounterSize));
        }
        if c.counter_size > 0 {
            if (c.counter_offset as usize) < BLOCK {
                return Err(violation(base + at, Rule::CounterOutsideBlock));
            }
            needed = needed.max(c.counter_offset as usize + c.counter_size as usize);
        }
        previous = Some(c.counter_type);
    }
    if previous.and_then(CounterType::required_follower).is_some() {
        return Err(violation(
            base + OBJ + (num_counters - 1) * CTR,
            Rule::BaseNotFollowing,
        ));
    }
    Ok(needed)
}

/// Checks a counter block at `at` inside the object and returns its length.
fn check_block(obj: &[u8], base: usize, at: usize, needed: usize) -> Result<usize, Violation> {
    let view = obj
        .get(at..)
        .and_then(|b| CounterBlock::new_checked(b).ok())
        .ok_or(violation(base + at, Rule::Truncated))?;
    let len = view.byte_length() as usize;
    if len < BLOCK || !len.is_multiple_of(8) {
        return Err(violation(base + at, Rule::BlockLength));
    }
    if at.checked_add(len).is_none_or(|end| end > obj.len()) {
        return Err(violation(base + at, Rule::InstanceChain));
    }
    if needed > len {
        return Err(violation(base + at, Rule::CounterOutsideBlock));
    }
    Ok(len)
}

/// Checks one instance definition at `at` and returns its `ByteLength`.
fn check_instance(obj: &[u8], base: usize, at: usize, code_page: u32) -> Result<usize, Violation> {
    let view = obj
        .get(at..)
        .and_then(|b| InstanceDefinition::new_checked(b).ok())
        .ok_or(violation(base + at, Rule::Truncated))?;
    let def = InstanceDefinitionRepr::parse(&view);
    let len = def.byte_length as usize;
    if len < INST || !len.is_multiple_of(8) {
        return Err(violation(base + at, Rule::InstanceLength));
    }
    if at.checked_add(len).is_none_or(|end| end > obj.len()) {
        return Err(violation(base + at, Rule::InstanceChain));
    }
    let name_len = def.name_length as usize;
    if name_len > 0 {
        let name_end = (def.name_offset as usize).checked_add(name_len);
        if (def.name_offset as usize) < INST || name_end.is_none_or(|e| e > len) {
            return Err(violation(base + at, Rule::NameOutsideInstance));
        }
        if code_page == 0 {
            let nul_at = at + def.name_offset as usize + name_len - 2;
            if !name_len.is_multiple_of(2) || bytes::u16_at(obj, nul_at) != 0 {
                return Err(violation(base + at, Rule::NameNotTerminated));
            }
        }
    }
    Ok(len)
}

/// Checks the object at the start of `rest` (found at `base`) and returns it.
fn parse_object(rest: &[u8], base: usize, expect: Expect) -> Result<ObjectRef<'_>, Violation> {
    let view = ObjectType::new_checked(rest).map_err(|_| violation(base, Rule::Truncated))?;
    let header = ObjectTypeRepr::parse(&view);
    let total = header.total_byte_length as usize;
    let num_counters = header.num_counters as usize;
    if header.header_length as usize != OBJ {
        return Err(violation(base, Rule::ObjectHeaderLength));
    }
    let defs_end = num_counters
        .checked_mul(CTR)
        .and_then(|d| d.checked_add(OBJ));
    if defs_end != Some(header.definition_length as usize) {
        return Err(violation(base, Rule::DefinitionLength));
    }
    let defs_end = header.definition_length as usize;
    if !total.is_multiple_of(8) {
        return Err(violation(base, Rule::ObjectLengthUnaligned));
    }
    if total > rest.len() || total < defs_end {
        return Err(violation(base, Rule::ObjectLengthOutOfBounds));
    }
    if header.default_counter != -1
        && usize::try_from(header.default_counter).is_ok_and(|d| d >= num_counters)
        || header.default_counter < -1
    {
        return Err(violation(base, Rule::DefaultCounter));
    }
    let obj = rest.get(..total).unwrap_or_default();
    let needed = check_counters(obj, base, num_counters)?;
    let n = header.num_instances;
    let end = match (n, expect) {
        (
            wire::PERF_METADATA_MULTIPLE_INSTANCES | wire::PERF_METADATA_NO_INSTANCES,
            Expect::Metadata | Expect::Any,
        ) => defs_end,
        (wire::PERF_NO_INSTANCES, Expect::Data | Expect::Any) => {
            defs_end + check_block(obj, base, defs_end, needed)?
        }
        (0.., Expect::Data | Expect::Any) => {
            let mut at = defs_end;
            for _ in 0..n {
                at += check_instance(obj, base, at, header.code_page)?;
                at += check_block(obj, base, at, needed)?;
            }
            at
        }
        _ => return Err(violation(base, Rule::NumInstances)),
    };
    if end != total {
        return Err(violation(base + end, Rule::InstanceChain));
    }
    Ok(ObjectRef {
        offset: base,
        bytes: obj,
        header,
    })
}

/// Iterator over the objects of a run of `PERF_OBJECT_TYPE` blocks; stops after the first
/// violation (which it yields).
#[derive(Clone, Debug)]
pub struct Objects<'a> {
    bytes: &'a [u8],
    base: usize,
    at: usize,
    expect: Expect,
    failed: bool,
}

impl<'a> Iterator for Objects<'a> {
    type Item = Result<ObjectRef<'a>, Violation>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        let result = parse_object(rest, self.base + self.at, self.expect);
        match &result {
            Ok(o) => self.at += o.header.total_byte_length as usize,
            Err(_) => self.failed = true,
        }
        Some(result)
    }
}

/// Walks the objects in `bytes`, reporting offsets as `base + position`.
pub fn objects(bytes: &[u8], base: usize, expect: Expect) -> Objects<'_> {
    Objects {
        bytes,
        base,
        at: 0,
        expect,
        failed: false,
    }
}

/// What a run of objects holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Objects found.
    pub objects: usize,
    /// Instances found over all objects (a single-instance object counts one).
    pub instances: usize,
}

/// Validates what `CollectPerformanceData` returned: `bytes` must be exactly `num_objects`
/// objects whose lengths add up to `bytes.len()`.
///
/// # Errors
/// The first [`Violation`] found.
pub fn validate_objects(
    bytes: &[u8],
    num_objects: usize,
    expect: Expect,
) -> Result<Summary, Violation> {
    let mut summary = Summary::default();
    let mut end = 0usize;
    for o in objects(bytes, 0, expect) {
        let o = o?;
        summary.objects += 1;
        summary.instances += o.instances().count();
        end = o.offset() + o.header().total_byte_length as usize;
        if summary.objects > num_objects {
            return Err(violation(o.offset(), Rule::ObjectCount));
        }
    }
    if end != bytes.len() {
        return Err(violation(end, Rule::TotalLengthMismatch));
    }
    if summary.objects != num_objects {
        return Err(violation(end, Rule::ObjectCount));
    }
    Ok(summary)
}

/// A checked `PERF_DATA_BLOCK` reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataBlockRef<'a> {
    bytes: &'a [u8],
    header: DataBlockRepr,
}

impl<'a> DataBlockRef<'a> {
    /// Checks a whole reply: header fields, the computer name, every object, and that the
    /// objects fill `HeaderLength..TotalByteLength` exactly with `NumObjectTypes` objects.
    ///
    /// # Errors
    /// The first [`Violation`] found.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Violation> {
        let view = DataBlock::new_checked(bytes).map_err(|_| violation(0, Rule::Truncated))?;
        if view.signature() != wire::PERF_SIGNATURE {
            return Err(violation(0, Rule::Signature));
        }
        let header = DataBlockRepr::parse(&view);
        let f = &wire::field::data_block::LITTLE_ENDIAN;
        if header.little_endian != 1 {
            return Err(violation(*f, Rule::NotLittleEndian));
        }
        if header.version != wire::PERF_DATA_VERSION || header.revision != wire::PERF_DATA_REVISION
        {
            return Err(violation(wire::field::data_block::VERSION, Rule::Version));
        }
        let total = header.total_byte_length as usize;
        if total > bytes.len() || total < PDB {
            return Err(violation(
                wire::field::data_block::TOTAL_BYTE_LENGTH,
                Rule::DataBlockTotalLength,
            ));
        }
        let name_len = header.system_name_length as usize;
        let expected_header = align8(PDB + name_len);
        if expected_header != Some(header.header_length as usize)
            || header.header_length as usize > total
        {
            return Err(violation(
                wire::field::data_block::HEADER_LENGTH,
                Rule::DataBlockHeaderLength,
            ));
        }
        let name_at = header.system_name_offset as usize;
        if name_len > 0 {
            let end = name_at.checked_add(name_len);
            let inside = name_at >= PDB && end.is_some_and(|e| e <= header.header_length as usize);
            if !inside
                || !name_len.is_multiple_of(2)
                || bytes::u16_at(bytes, name_at + name_len - 2) != 0
            {
                return Err(violation(
                    wire::field::data_block::SYSTEM_NAME_OFFSET,
                    Rule::SystemName,
                ));
            }
        }
        let objects_bytes = bytes
            .get(header.header_length as usize..total)
            .unwrap_or_default();
        let mut count = 0usize;
        let mut end = header.header_length as usize;
        for o in objects(objects_bytes, header.header_length as usize, Expect::Any) {
            let o = o?;
            count += 1;
            end = o.offset() + o.header().total_byte_length as usize;
        }
        if end != total {
            return Err(violation(end, Rule::TotalLengthMismatch));
        }
        if count != header.num_object_types as usize {
            return Err(violation(
                wire::field::data_block::NUM_OBJECT_TYPES,
                Rule::ObjectCount,
            ));
        }
        Ok(Self {
            bytes: bytes.get(..total).unwrap_or_default(),
            header,
        })
    }

    /// The header fields.
    pub const fn header(&self) -> &DataBlockRepr {
        &self.header
    }

    /// The computer name, as UTF-16 units without the NUL.
    pub fn system_name_utf16(&self) -> impl Iterator<Item = u16> + 'a {
        let at = self.header.system_name_offset as usize;
        let units = (self.header.system_name_length as usize) / 2;
        let bytes = self.bytes;
        (0..units)
            .map(move |i| bytes::u16_at(bytes, at + 2 * i))
            .take_while(|u| *u != 0)
    }

    /// The objects (already checked).
    pub fn objects(&self) -> impl Iterator<Item = ObjectRef<'a>> + 'a {
        let start = self.header.header_length as usize;
        objects(
            self.bytes.get(start..).unwrap_or_default(),
            start,
            Expect::Any,
        )
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::DetailLevel;
    use crate::v1::writer::{
        CounterSpec, InstanceDesc, InstanceSpec, InstancesDesc, Mode, ObjectDesc, ObjectHeader,
        write_objects,
    };

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    fn spec(counter_type: CounterType, size: u32, offset: u32) -> CounterSpec {
        CounterSpec {
            name_title_index: 2,
            help_title_index: 3,
            default_scale: 0,
            detail_level: DetailLevel::Novice,
            counter_type,
            size,
            offset,
        }
    }

    const HEADER: ObjectHeader = ObjectHeader {
        name_title_index: 100,
        help_title_index: 101,
        detail_level: DetailLevel::Novice,
        default_counter: 0,
        perf_time: 0,
        perf_freq: 0,
        costly: false,
    };

    /// One multi-instance object: 3 counters (fraction + base + 8-byte), two instances.
    /// Layout: OBJ 0..64, CTR 64..184, INST0 184..216 ("ab": 24+6 -> 32), BLOCK0 216..240,
    /// INST1 240..272, BLOCK1 272..296.
    fn sample() -> Vec<u8> {
        let counters = [
            spec(CounterType::RawFraction, 4, 4),
            spec(CounterType::RawBase, 4, 8),
            spec(CounterType::LargeRawcount, 8, 16),
        ];
        let instances = [
            InstanceDesc {
                spec: InstanceSpec::named("ab"),
                values: &[1, 2, 3],
            },
            InstanceDesc {
                spec: InstanceSpec::named("cd"),
                values: &[4, 5, 6],
            },
        ];
        let obj = ObjectDesc {
            header: HEADER,
            counters: &counters,
            instances: InstancesDesc::Multi(&instances),
        };
        let mut buf = vec![0u8; 296];
        let w = write_objects(&[&obj], Mode::Data, &mut buf).unwrap();
        assert_eq!(w.bytes, 296);
        buf
    }

    fn set(buf: &mut [u8], at: usize, v: u32) {
        buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn rule_of(buf: &[u8]) -> (usize, Rule) {
        let v = validate_objects(buf, 1, Expect::Data).unwrap_err();
        (v.offset, v.rule)
    }

    #[test]
    fn sample_is_valid_and_decodes() {
        let buf = sample();
        let s = validate_objects(&buf, 1, Expect::Data).unwrap();
        assert_eq!(
            s,
            Summary {
                objects: 1,
                instances: 2
            }
        );
        let o = objects(&buf, 0, Expect::Data).next().unwrap().unwrap();
        let counters: Vec<_> = o.counters().collect();
        let values: Vec<Vec<u64>> = o
            .instances()
            .map(|i| counters.iter().filter_map(|c| i.value(c)).collect())
            .collect();
        assert_eq!(values, [[1, 2, 3], [4, 5, 6]]);
    }

    #[test]
    fn each_corruption_is_named_with_its_offset() {
        type Patch = fn(&mut Vec<u8>);
        let cases: [(Patch, usize, Rule); 16] = [
            (|b| b.truncate(200), 0, Rule::ObjectLengthOutOfBounds),
            (|b| b.truncate(40), 0, Rule::Truncated),
            (|b| set(b, 0, 300), 0, Rule::ObjectLengthUnaligned),
            (|b| set(b, 0, 304), 0, Rule::ObjectLengthOutOfBounds),
            (|b| set(b, 4, 150), 0, Rule::DefinitionLength),
            (|b| set(b, 8, 60), 0, Rule::ObjectHeaderLength),
            (|b| set(b, 36, 3), 0, Rule::DefaultCounter),
            (|b| set(b, 40, 0xFFFF_FFFE), 0, Rule::NumInstances),
            (|b| set(b, 64 + 40, 36), 104, Rule::CounterByteLength),
            (
                |b| set(b, 64 + 40 + 28, 0x0001_0000),
                64,
                Rule::BaseNotFollowing,
            ),
            (|b| set(b, 144 + 32, 4), 144, Rule::CounterSize),
            (|b| set(b, 184, 28), 184, Rule::InstanceLength),
            (|b| set(b, 184 + 20, 10), 184, Rule::NameOutsideInstance),
            (|b| set(b, 184 + 20, 5), 184, Rule::NameNotTerminated),
            (|b| set(b, 216, 12), 216, Rule::BlockLength),
            (|b| set(b, 144 + 36, 24), 216, Rule::CounterOutsideBlock),
        ];
        for (i, (patch, offset, rule)) in cases.into_iter().enumerate() {
            let mut buf = sample();
            patch(&mut buf);
            assert_eq!(rule_of(&buf), (offset, rule), "case {i}");
        }
    }

    #[test]
    fn instance_chain_and_totals() {
        // One instance fewer than the chain holds: the chain ends 56 bytes early.
        let mut buf = sample();
        set(&mut buf, 40, 1);
        assert_eq!(rule_of(&buf), (240, Rule::InstanceChain));
        // An instance whose block runs past the object.
        let mut buf = sample();
        set(&mut buf, 272, 32);
        assert_eq!(rule_of(&buf), (272, Rule::InstanceChain));
        // Extra bytes after the last object are a total mismatch.
        let mut buf = sample();
        buf.extend_from_slice(&[0; 8]);
        let v = validate_objects(&buf, 1, Expect::Data).unwrap_err();
        assert_eq!(v.rule, Rule::Truncated, "8 stray bytes are not an object");
        let buf = sample();
        assert_eq!(
            validate_objects(&buf, 2, Expect::Data).unwrap_err().rule,
            Rule::ObjectCount
        );
        assert_eq!(
            validate_objects(&buf, 0, Expect::Data).unwrap_err().rule,
            Rule::ObjectCount
        );
        assert_eq!(
            validate_objects(&[], 0, Expect::Data),
            Ok(Summary::default())
        );
    }

    fn data_block(objects: &[u8], count: u32, name: &str) -> Vec<u8> {
        let name: Vec<u16> = name.encode_utf16().chain([0]).collect();
        let name_len = name.len() * 2;
        let header_len = (88 + name_len + 7) & !7;
        let mut buf = vec![0x77u8; header_len + objects.len()];
        let repr = DataBlockRepr {
            little_endian: 1,
            version: 1,
            revision: 1,
            total_byte_length: buf.len() as u32,
            header_length: header_len as u32,
            num_object_types: count,
            default_object: 238,
            system_name_length: name_len as u32,
            system_name_offset: 88,
            ..DataBlockRepr::default()
        };
        repr.emit(&mut DataBlock::new_checked(&mut buf[..]).unwrap());
        for (i, u) in name.iter().enumerate() {
            buf[88 + 2 * i..90 + 2 * i].copy_from_slice(&u.to_le_bytes());
        }
        buf[header_len..].copy_from_slice(objects);
        buf
    }

    #[test]
    fn data_block_checks() {
        let good = data_block(&sample(), 1, "HOST");
        let block = DataBlockRef::parse(&good).unwrap();
        let name: Vec<u16> = block.system_name_utf16().collect();
        assert_eq!(name, "HOST".encode_utf16().collect::<Vec<_>>());
        assert_eq!(block.objects().count(), 1);
        assert_eq!(block.header().header_length, 104, "(88 + 10 + 7) & ~7");

        type Patch = fn(&mut Vec<u8>);
        let cases: [(Patch, Rule); 8] = [
            (|b| b[0] = b'X', Rule::Signature),
            (|b| set(b, 8, 0), Rule::NotLittleEndian),
            (|b| set(b, 12, 2), Rule::Version),
            (|b| set(b, 20, 10_000), Rule::DataBlockTotalLength),
            (|b| set(b, 24, 112), Rule::DataBlockHeaderLength),
            (|b| set(b, 28, 2), Rule::ObjectCount),
            (|b| b[96] = b'!', Rule::SystemName),
            (|b| b.truncate(87), Rule::Truncated),
        ];
        for (patch, rule) in cases {
            let mut buf = good.clone();
            patch(&mut buf);
            assert_eq!(DataBlockRef::parse(&buf).unwrap_err().rule, rule);
        }
        // A total that stops inside the object.
        let mut buf = good.clone();
        set(&mut buf, 20, (good.len() - 8) as u32);
        assert_eq!(
            DataBlockRef::parse(&buf).unwrap_err().rule,
            Rule::ObjectLengthOutOfBounds
        );
        let empty = data_block(&[], 0, "");
        assert_eq!(DataBlockRef::parse(&empty).unwrap().objects().count(), 0);
    }

    #[test]
    fn no_input_panics() {
        // A cheap deterministic sweep: every single-byte corruption of a valid block, and
        // every truncation, is either accepted or reported, never a panic.
        let good = data_block(&sample(), 1, "HOST");
        for len in 0..good.len() {
            let _ = DataBlockRef::parse(&good[..len]);
        }
        for at in 0..good.len() {
            for v in [0u8, 1, 7, 0x80, 0xFF] {
                let mut buf = good.clone();
                buf[at] = v;
                if let Ok(b) = DataBlockRef::parse(&buf) {
                    for o in b.objects() {
                        let counters: Vec<_> = o.counters().collect();
                        for i in o.instances() {
                            let _ = i.name_utf16().count();
                            for c in &counters {
                                let _ = i.value(c);
                            }
                        }
                    }
                }
            }
        }
    }
}
