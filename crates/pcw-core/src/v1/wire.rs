// SPDX-License-Identifier: MIT OR Apache-2.0
//! Zero-copy views and `Repr`s of the V1 performance data structures of `winperf.h`
//! (layouts in `docs/v1-format.md`): `PERF_DATA_BLOCK`, `PERF_OBJECT_TYPE`,
//! `PERF_COUNTER_DEFINITION`, `PERF_INSTANCE_DEFINITION` and `PERF_COUNTER_BLOCK`.
//!
//! Every field is read and written at an explicit little-endian offset, never through a native
//! struct, so the layout is the Windows one on any host (the i686 `SysV` ABI, for one, would put
//! `PERF_DATA_BLOCK.PerfTime` at 52 instead of 56). A view is built with `new_checked`, which
//! verifies the buffer holds the whole fixed-size structure; accessors then cannot fail. Nothing
//! here panics: every read goes through the crate's byte helpers.

use crate::bytes;
use crate::counter_type::{CounterType, DetailLevel};

/// A buffer too short for the structure it was asked to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncated {
    /// Bytes the structure needs.
    pub needed: usize,
    /// Bytes the buffer has.
    pub available: usize,
}

impl core::fmt::Display for Truncated {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "buffer of {} bytes is shorter than the {} bytes the structure needs",
            self.available, self.needed
        )
    }
}

/// `PERF_NO_INSTANCES`: `NumInstances` of a single-instance object.
pub const PERF_NO_INSTANCES: i32 = -1;
/// `PERF_METADATA_MULTIPLE_INSTANCES`: `NumInstances` of a multi-instance object in a metadata reply.
pub const PERF_METADATA_MULTIPLE_INSTANCES: i32 = -2;
/// `PERF_METADATA_NO_INSTANCES`: `NumInstances` of a single-instance object in a metadata reply.
pub const PERF_METADATA_NO_INSTANCES: i32 = -3;
/// `PERF_NO_UNIQUE_ID`: `UniqueID` of an instance identified by its name.
pub const PERF_NO_UNIQUE_ID: i32 = -1;
/// `PERF_DATA_VERSION`.
pub const PERF_DATA_VERSION: u32 = 1;
/// `PERF_DATA_REVISION`.
pub const PERF_DATA_REVISION: u32 = 1;
/// The `PERF_DATA_BLOCK.Signature`, `L"PERF"`, as it is stored.
pub const PERF_SIGNATURE: [u8; 8] = *b"P\0E\0R\0F\0";

/// Declares a checked view type over `T: AsRef<[u8]>` with one getter (and setter) per field.
macro_rules! view {
    (
        $(#[$meta:meta])*
        $name:ident, $len:expr;
        $( $(#[$fmeta:meta])* $field:ident / $setter:ident : $ty:ident @ $off:expr; )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Size of the fixed part of the structure, in bytes.
            pub const LEN: usize = $len;

            /// Wraps `buffer` after checking it holds the whole structure.
            ///
            /// # Errors
            /// [`Truncated`] if the buffer is shorter than [`Self::LEN`].
            pub fn new_checked(buffer: T) -> Result<Self, Truncated> {
                let available = buffer.as_ref().len();
                if available < Self::LEN {
                    return Err(Truncated { needed: Self::LEN, available });
                }
                Ok(Self { buffer })
            }

            /// Gives the buffer back.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The whole underlying buffer (the structure is at its start).
            pub fn as_bytes(&self) -> &[u8] {
                self.buffer.as_ref()
            }

            $(
                $(#[$fmeta])*
                #[inline]
                pub fn $field(&self) -> view!(@ty $ty) {
                    view!(@get $ty, self.buffer.as_ref(), $off)
                }
            )*
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            $(
                #[doc = concat!("Sets the field read by [`Self::", stringify!($field), "`].")]
                #[inline]
                pub fn $setter(&mut self, value: view!(@ty $ty)) {
                    view!(@set $ty, self.buffer.as_mut(), $off, value)
                }
            )*
        }
    };
    (@ty u16) => { u16 };
    (@ty u32) => { u32 };
    (@ty i32) => { i32 };
    (@ty i64) => { i64 };
    (@get u16, $b:expr, $o:expr) => { bytes::u16_at($b, $o) };
    (@get u32, $b:expr, $o:expr) => { bytes::u32_at($b, $o) };
    (@get i32, $b:expr, $o:expr) => { bytes::i32_at($b, $o) };
    (@get i64, $b:expr, $o:expr) => { bytes::i64_at($b, $o) };
    (@set u16, $b:expr, $o:expr, $v:expr) => { bytes::set_u16($b, $o, $v) };
    (@set u32, $b:expr, $o:expr, $v:expr) => { bytes::set_u32($b, $o, $v) };
    (@set i32, $b:expr, $o:expr, $v:expr) => { bytes::set_i32($b, $o, $v) };
    (@set i64, $b:expr, $o:expr, $v:expr) => { bytes::set_i64($b, $o, $v) };
}

/// Field offsets, in bytes from the start of each structure (`docs/v1-format.md`). Each constant
/// is named after the `winperf.h` field it locates; `LEN` is the structure's size.
#[expect(
    missing_docs,
    reason = "each constant is the offset of the winperf.h field of that name"
)]
pub mod field {
    /// `PERF_DATA_BLOCK` offsets.
    pub mod data_block {
        pub const SIGNATURE: usize = 0;
        pub const LITTLE_ENDIAN: usize = 8;
        pub const VERSION: usize = 12;
        pub const REVISION: usize = 16;
        pub const TOTAL_BYTE_LENGTH: usize = 20;
        pub const HEADER_LENGTH: usize = 24;
        pub const NUM_OBJECT_TYPES: usize = 28;
        pub const DEFAULT_OBJECT: usize = 32;
        pub const SYSTEM_TIME: usize = 36;
        pub const PERF_TIME: usize = 56;
        pub const PERF_FREQ: usize = 64;
        pub const PERF_TIME_100NSEC: usize = 72;
        pub const SYSTEM_NAME_LENGTH: usize = 80;
        pub const SYSTEM_NAME_OFFSET: usize = 84;
        pub const LEN: usize = 88;
    }
    /// `PERF_OBJECT_TYPE` offsets.
    pub mod object_type {
        pub const TOTAL_BYTE_LENGTH: usize = 0;
        pub const DEFINITION_LENGTH: usize = 4;
        pub const HEADER_LENGTH: usize = 8;
        pub const OBJECT_NAME_TITLE_INDEX: usize = 12;
        pub const OBJECT_NAME_TITLE: usize = 16;
        pub const OBJECT_HELP_TITLE_INDEX: usize = 20;
        pub const OBJECT_HELP_TITLE: usize = 24;
        pub const DETAIL_LEVEL: usize = 28;
        pub const NUM_COUNTERS: usize = 32;
        pub const DEFAULT_COUNTER: usize = 36;
        pub const NUM_INSTANCES: usize = 40;
        pub const CODE_PAGE: usize = 44;
        pub const PERF_TIME: usize = 48;
        pub const PERF_FREQ: usize = 56;
        pub const LEN: usize = 64;
    }
    /// `PERF_COUNTER_DEFINITION` offsets.
    pub mod counter_definition {
        pub const BYTE_LENGTH: usize = 0;
        pub const COUNTER_NAME_TITLE_INDEX: usize = 4;
        pub const COUNTER_NAME_TITLE: usize = 8;
        pub const COUNTER_HELP_TITLE_INDEX: usize = 12;
        pub const COUNTER_HELP_TITLE: usize = 16;
        pub const DEFAULT_SCALE: usize = 20;
        pub const DETAIL_LEVEL: usize = 24;
        pub const COUNTER_TYPE: usize = 28;
        pub const COUNTER_SIZE: usize = 32;
        pub const COUNTER_OFFSET: usize = 36;
        pub const LEN: usize = 40;
    }
    /// `PERF_INSTANCE_DEFINITION` offsets.
    pub mod instance_definition {
        pub const BYTE_LENGTH: usize = 0;
        pub const PARENT_OBJECT_TITLE_INDEX: usize = 4;
        pub const PARENT_OBJECT_INSTANCE: usize = 8;
        pub const UNIQUE_ID: usize = 12;
        pub const NAME_OFFSET: usize = 16;
        pub const NAME_LENGTH: usize = 20;
        pub const LEN: usize = 24;
    }
    /// `PERF_COUNTER_BLOCK` offsets.
    pub mod counter_block {
        pub const BYTE_LENGTH: usize = 0;
        pub const LEN: usize = 4;
    }
}

use field::{counter_block as cb, counter_definition as cd, data_block as db};
use field::{instance_definition as id, object_type as ot};

view! {
    /// `PERF_DATA_BLOCK` (88 bytes): the header of a whole `HKEY_PERFORMANCE_DATA` reply.
    DataBlock, db::LEN;
    /// `LittleEndian`: 1 for little-endian data.
    little_endian / set_little_endian: u32 @ db::LITTLE_ENDIAN;
    /// `Version` (`PERF_DATA_VERSION`).
    version / set_version: u32 @ db::VERSION;
    /// `Revision` (`PERF_DATA_REVISION`).
    revision / set_revision: u32 @ db::REVISION;
    /// `TotalByteLength`: the whole block.
    total_byte_length / set_total_byte_length: u32 @ db::TOTAL_BYTE_LENGTH;
    /// `HeaderLength`: offset of the first `PERF_OBJECT_TYPE`.
    header_length / set_header_length: u32 @ db::HEADER_LENGTH;
    /// `NumObjectTypes`.
    num_object_types / set_num_object_types: u32 @ db::NUM_OBJECT_TYPES;
    /// `DefaultObject` (documented as reserved).
    default_object / set_default_object: i32 @ db::DEFAULT_OBJECT;
    /// `PerfTime` in performance-counter (QPC) counts.
    perf_time / set_perf_time: i64 @ db::PERF_TIME;
    /// `PerfFreq`: QPC counts per second.
    perf_freq / set_perf_freq: i64 @ db::PERF_FREQ;
    /// `PerfTime100nSec`, in 100 ns units.
    perf_time_100nsec / set_perf_time_100nsec: i64 @ db::PERF_TIME_100NSEC;
    /// `SystemNameLength`, in bytes including the NUL.
    system_name_length / set_system_name_length: u32 @ db::SYSTEM_NAME_LENGTH;
    /// `SystemNameOffset`, from the start of the block.
    system_name_offset / set_system_name_offset: u32 @ db::SYSTEM_NAME_OFFSET;
}

impl<T: AsRef<[u8]>> DataBlock<T> {
    /// `Signature`, the 8 bytes of `L"PERF"` on a well-formed block.
    pub fn signature(&self) -> [u8; 8] {
        bytes::array(self.buffer.as_ref(), db::SIGNATURE).unwrap_or([0; 8])
    }

    /// `SystemTime` (UTC).
    pub fn system_time(&self) -> SystemTime {
        let b = self.buffer.as_ref();
        let at = |i: usize| bytes::u16_at(b, db::SYSTEM_TIME + 2 * i);
        SystemTime {
            year: at(0),
            month: at(1),
            day_of_week: at(2),
            day: at(3),
            hour: at(4),
            minute: at(5),
            second: at(6),
            milliseconds: at(7),
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> DataBlock<T> {
    /// Writes `Signature`.
    pub fn set_signature(&mut self, value: [u8; 8]) {
        bytes::put(self.buffer.as_mut(), db::SIGNATURE, &value);
    }

    /// Writes `SystemTime`.
    pub fn set_system_time(&mut self, t: SystemTime) {
        let parts = [
            t.year,
            t.month,
            t.day_of_week,
            t.day,
            t.hour,
            t.minute,
            t.second,
            t.milliseconds,
        ];
        for (i, v) in parts.into_iter().enumerate() {
            bytes::set_u16(self.buffer.as_mut(), db::SYSTEM_TIME + 2 * i, v);
        }
    }
}

/// Win32 `SYSTEMTIME` as stored in `PERF_DATA_BLOCK.SystemTime`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SystemTime {
    /// `wYear`.
    pub year: u16,
    /// `wMonth` (1–12).
    pub month: u16,
    /// `wDayOfWeek` (0 = Sunday).
    pub day_of_week: u16,
    /// `wDay`.
    pub day: u16,
    /// `wHour`.
    pub hour: u16,
    /// `wMinute`.
    pub minute: u16,
    /// `wSecond`.
    pub second: u16,
    /// `wMilliseconds`.
    pub milliseconds: u16,
}

view! {
    /// `PERF_OBJECT_TYPE` (64 bytes): one object (counterset) in a V1 reply.
    ObjectType, ot::LEN;
    /// `TotalByteLength`: offset from this object to the next.
    total_byte_length / set_total_byte_length: u32 @ ot::TOTAL_BYTE_LENGTH;
    /// `DefinitionLength`: 64 + 40·NumCounters; offset to the first instance or counter block.
    definition_length / set_definition_length: u32 @ ot::DEFINITION_LENGTH;
    /// `HeaderLength` (64): offset to the first counter definition.
    header_length / set_header_length: u32 @ ot::HEADER_LENGTH;
    /// `ObjectNameTitleIndex`.
    object_name_title_index / set_object_name_title_index: u32 @ ot::OBJECT_NAME_TITLE_INDEX;
    /// `ObjectNameTitle` (reserved; 4 bytes on x86 and x64).
    object_name_title / set_object_name_title: u32 @ ot::OBJECT_NAME_TITLE;
    /// `ObjectHelpTitleIndex`.
    object_help_title_index / set_object_help_title_index: u32 @ ot::OBJECT_HELP_TITLE_INDEX;
    /// `ObjectHelpTitle` (reserved).
    object_help_title / set_object_help_title: u32 @ ot::OBJECT_HELP_TITLE;
    /// `DetailLevel`, raw (see [`ObjectTypeRepr::detail_level`]).
    detail_level_raw / set_detail_level_raw: u32 @ ot::DETAIL_LEVEL;
    /// `NumCounters`.
    num_counters / set_num_counters: u32 @ ot::NUM_COUNTERS;
    /// `DefaultCounter` (−1 = none).
    default_counter / set_default_counter: i32 @ ot::DEFAULT_COUNTER;
    /// `NumInstances`: [`PERF_NO_INSTANCES`], 0..N, or a metadata marker.
    num_instances / set_num_instances: i32 @ ot::NUM_INSTANCES;
    /// `CodePage`: 0 = instance names are UTF-16.
    code_page / set_code_page: u32 @ ot::CODE_PAGE;
    /// `PerfTime` for object timers.
    perf_time / set_perf_time: i64 @ ot::PERF_TIME;
    /// `PerfFreq` for object timers.
    perf_freq / set_perf_freq: i64 @ ot::PERF_FREQ;
}

view! {
    /// `PERF_COUNTER_DEFINITION` (40 bytes).
    CounterDefinition, cd::LEN;
    /// `ByteLength` (40).
    byte_length / set_byte_length: u32 @ cd::BYTE_LENGTH;
    /// `CounterNameTitleIndex`.
    counter_name_title_index / set_counter_name_title_index: u32 @ cd::COUNTER_NAME_TITLE_INDEX;
    /// `CounterNameTitle` (reserved).
    counter_name_title / set_counter_name_title: u32 @ cd::COUNTER_NAME_TITLE;
    /// `CounterHelpTitleIndex`.
    counter_help_title_index / set_counter_help_title_index: u32 @ cd::COUNTER_HELP_TITLE_INDEX;
    /// `CounterHelpTitle` (reserved).
    counter_help_title / set_counter_help_title: u32 @ cd::COUNTER_HELP_TITLE;
    /// `DefaultScale`: the displayed value is multiplied by 10^scale.
    default_scale / set_default_scale: i32 @ cd::DEFAULT_SCALE;
    /// `DetailLevel`, raw.
    detail_level_raw / set_detail_level_raw: u32 @ cd::DETAIL_LEVEL;
    /// `CounterType`, raw.
    counter_type_raw / set_counter_type_raw: u32 @ cd::COUNTER_TYPE;
    /// `CounterSize` in bytes.
    counter_size / set_counter_size: u32 @ cd::COUNTER_SIZE;
    /// `CounterOffset` from the start of the `PERF_COUNTER_BLOCK`.
    counter_offset / set_counter_offset: u32 @ cd::COUNTER_OFFSET;
}

view! {
    /// `PERF_INSTANCE_DEFINITION` (24 bytes, followed by the name and padding).
    InstanceDefinition, id::LEN;
    /// `ByteLength`: this struct, the name and its padding (a multiple of 8).
    byte_length / set_byte_length: u32 @ id::BYTE_LENGTH;
    /// `ParentObjectTitleIndex` (0 = no parent).
    parent_object_title_index / set_parent_object_title_index: u32 @ id::PARENT_OBJECT_TITLE_INDEX;
    /// `ParentObjectInstance`: zero-based position of the parent instance.
    parent_object_instance / set_parent_object_instance: u32 @ id::PARENT_OBJECT_INSTANCE;
    /// `UniqueID` ([`PERF_NO_UNIQUE_ID`] when the name identifies the instance).
    unique_id / set_unique_id: i32 @ id::UNIQUE_ID;
    /// `NameOffset` from the start of this struct.
    name_offset / set_name_offset: u32 @ id::NAME_OFFSET;
    /// `NameLength` in bytes, including the NUL, excluding padding.
    name_length / set_name_length: u32 @ id::NAME_LENGTH;
}

view! {
    /// `PERF_COUNTER_BLOCK` (4 bytes, followed by the counter data).
    CounterBlock, cb::LEN;
    /// `ByteLength`: this header plus the data, a multiple of 8.
    byte_length / set_byte_length: u32 @ cb::BYTE_LENGTH;
}

impl<T: AsRef<[u8]>> ObjectType<T> {
    /// `DetailLevel`.
    pub fn detail_level(&self) -> DetailLevel {
        DetailLevel::from_raw(self.detail_level_raw())
    }
}

impl<T: AsRef<[u8]>> CounterDefinition<T> {
    /// `DetailLevel`.
    pub fn detail_level(&self) -> DetailLevel {
        DetailLevel::from_raw(self.detail_level_raw())
    }
    /// `CounterType`.
    pub fn counter_type(&self) -> CounterType {
        CounterType::from_raw(self.counter_type_raw())
    }
}

/// High-level form of a `PERF_DATA_BLOCK` header (the computer name is not part of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataBlockRepr {
    /// `LittleEndian`.
    pub little_endian: u32,
    /// `Version`.
    pub version: u32,
    /// `Revision`.
    pub revision: u32,
    /// `TotalByteLength`.
    pub total_byte_length: u32,
    /// `HeaderLength`.
    pub header_length: u32,
    /// `NumObjectTypes`.
    pub num_object_types: u32,
    /// `DefaultObject`.
    pub default_object: i32,
    /// `SystemTime`.
    pub system_time: SystemTime,
    /// `PerfTime`.
    pub perf_time: i64,
    /// `PerfFreq`.
    pub perf_freq: i64,
    /// `PerfTime100nSec`.
    pub perf_time_100nsec: i64,
    /// `SystemNameLength`.
    pub system_name_length: u32,
    /// `SystemNameOffset`.
    pub system_name_offset: u32,
}

impl DataBlockRepr {
    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        db::LEN
    }

    /// Reads every field; the signature is returned by the view, not kept here.
    pub fn parse<T: AsRef<[u8]>>(v: &DataBlock<T>) -> Self {
        Self {
            little_endian: v.little_endian(),
            version: v.version(),
            revision: v.revision(),
            total_byte_length: v.total_byte_length(),
            header_length: v.header_length(),
            num_object_types: v.num_object_types(),
            default_object: v.default_object(),
            system_time: v.system_time(),
            perf_time: v.perf_time(),
            perf_freq: v.perf_freq(),
            perf_time_100nsec: v.perf_time_100nsec(),
            system_name_length: v.system_name_length(),
            system_name_offset: v.system_name_offset(),
        }
    }

    /// Writes all 88 bytes, the `L"PERF"` signature and the padding at 52 included.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut DataBlock<T>) {
        v.set_signature(PERF_SIGNATURE);
        v.set_little_endian(self.little_endian);
        v.set_version(self.version);
        v.set_revision(self.revision);
        v.set_total_byte_length(self.total_byte_length);
        v.set_header_length(self.header_length);
        v.set_num_object_types(self.num_object_types);
        v.set_default_object(self.default_object);
        v.set_system_time(self.system_time);
        bytes::zero(v.buffer.as_mut(), db::SYSTEM_TIME + 16, 4);
        v.set_perf_time(self.perf_time);
        v.set_perf_freq(self.perf_freq);
        v.set_perf_time_100nsec(self.perf_time_100nsec);
        v.set_system_name_length(self.system_name_length);
        v.set_system_name_offset(self.system_name_offset);
    }
}

/// High-level form of a `PERF_OBJECT_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectTypeRepr {
    /// `TotalByteLength`.
    pub total_byte_length: u32,
    /// `DefinitionLength`.
    pub definition_length: u32,
    /// `HeaderLength`.
    pub header_length: u32,
    /// `ObjectNameTitleIndex`.
    pub object_name_title_index: u32,
    /// `ObjectHelpTitleIndex`.
    pub object_help_title_index: u32,
    /// `DetailLevel`.
    pub detail_level: DetailLevel,
    /// `NumCounters`.
    pub num_counters: u32,
    /// `DefaultCounter`.
    pub default_counter: i32,
    /// `NumInstances`.
    pub num_instances: i32,
    /// `CodePage`.
    pub code_page: u32,
    /// `PerfTime`.
    pub perf_time: i64,
    /// `PerfFreq`.
    pub perf_freq: i64,
}

impl ObjectTypeRepr {
    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        ot::LEN
    }

    /// The 64 bytes [`Self::emit`] writes, as an array (its stores need no bounds checks, and
    /// the caller copies it whole).
    #[inline]
    pub fn to_bytes(&self) -> [u8; ot::LEN] {
        let mut bytes = [0u8; ot::LEN];
        if let Ok(mut v) = ObjectType::new_checked(&mut bytes[..]) {
            self.emit(&mut v);
        }
        bytes
    }

    /// Reads every field (the reserved title pointers are ignored).
    pub fn parse<T: AsRef<[u8]>>(v: &ObjectType<T>) -> Self {
        Self {
            total_byte_length: v.total_byte_length(),
            definition_length: v.definition_length(),
            header_length: v.header_length(),
            object_name_title_index: v.object_name_title_index(),
            object_help_title_index: v.object_help_title_index(),
            detail_level: v.detail_level(),
            num_counters: v.num_counters(),
            default_counter: v.default_counter(),
            num_instances: v.num_instances(),
            code_page: v.code_page(),
            perf_time: v.perf_time(),
            perf_freq: v.perf_freq(),
        }
    }

    /// Writes all 64 bytes; the reserved title fields are written as 0.
    #[expect(
        clippy::inline_always,
        reason = "inlined into `to_bytes`, as the counter definition's `emit` is, its stores into \
                  a fixed-size array need no bounds checks"
    )]
    #[inline(always)]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut ObjectType<T>) {
        v.set_total_byte_length(self.total_byte_length);
        v.set_definition_length(self.definition_length);
        v.set_header_length(self.header_length);
        v.set_object_name_title_index(self.object_name_title_index);
        v.set_object_name_title(0);
        v.set_object_help_title_index(self.object_help_title_index);
        v.set_object_help_title(0);
        v.set_detail_level_raw(self.detail_level.raw());
        v.set_num_counters(self.num_counters);
        v.set_default_counter(self.default_counter);
        v.set_num_instances(self.num_instances);
        v.set_code_page(self.code_page);
        v.set_perf_time(self.perf_time);
        v.set_perf_freq(self.perf_freq);
    }
}

/// High-level form of a `PERF_COUNTER_DEFINITION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterDefinitionRepr {
    /// `ByteLength`.
    pub byte_length: u32,
    /// `CounterNameTitleIndex`.
    pub counter_name_title_index: u32,
    /// `CounterHelpTitleIndex`.
    pub counter_help_title_index: u32,
    /// `DefaultScale`.
    pub default_scale: i32,
    /// `DetailLevel`.
    pub detail_level: DetailLevel,
    /// `CounterType`.
    pub counter_type: CounterType,
    /// `CounterSize`.
    pub counter_size: u32,
    /// `CounterOffset`.
    pub counter_offset: u32,
}

impl CounterDefinitionRepr {
    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        cd::LEN
    }

    /// Reads every field (the reserved title pointers are ignored).
    pub fn parse<T: AsRef<[u8]>>(v: &CounterDefinition<T>) -> Self {
        Self {
            byte_length: v.byte_length(),
            counter_name_title_index: v.counter_name_title_index(),
            counter_help_title_index: v.counter_help_title_index(),
            default_scale: v.default_scale(),
            detail_level: v.detail_level(),
            counter_type: v.counter_type(),
            counter_size: v.counter_size(),
            counter_offset: v.counter_offset(),
        }
    }

    /// The 40 bytes [`Self::emit`] writes, as an array (its stores need no bounds checks, and
    /// the caller copies it whole).
    #[inline]
    pub fn to_bytes(&self) -> [u8; cd::LEN] {
        let mut bytes = [0u8; cd::LEN];
        if let Ok(mut v) = CounterDefinition::new_checked(&mut bytes[..]) {
            self.emit(&mut v);
        }
        bytes
    }

    /// Writes all 40 bytes; the reserved title fields are written as 0.
    #[expect(
        clippy::inline_always,
        reason = "inlined into `to_bytes`, its stores into a fixed-size array need no bounds \
                  checks (measured with callgrind: out of line, 51 instructions a definition)"
    )]
    #[inline(always)]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut CounterDefinition<T>) {
        v.set_byte_length(self.byte_length);
        v.set_counter_name_title_index(self.counter_name_title_index);
        v.set_counter_name_title(0);
        v.set_counter_help_title_index(self.counter_help_title_index);
        v.set_counter_help_title(0);
        v.set_default_scale(self.default_scale);
        v.set_detail_level_raw(self.detail_level.raw());
        v.set_counter_type_raw(self.counter_type.raw());
        v.set_counter_size(self.counter_size);
        v.set_counter_offset(self.counter_offset);
    }
}

/// High-level form of a `PERF_INSTANCE_DEFINITION` header (the name is written separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceDefinitionRepr {
    /// `ByteLength`.
    pub byte_length: u32,
    /// `ParentObjectTitleIndex`.
    pub parent_object_title_index: u32,
    /// `ParentObjectInstance`.
    pub parent_object_instance: u32,
    /// `UniqueID`.
    pub unique_id: i32,
    /// `NameOffset`.
    pub name_offset: u32,
    /// `NameLength`.
    pub name_length: u32,
}

impl InstanceDefinitionRepr {
    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        id::LEN
    }

    /// Reads every field.
    pub fn parse<T: AsRef<[u8]>>(v: &InstanceDefinition<T>) -> Self {
        Self {
            byte_length: v.byte_length(),
            parent_object_title_index: v.parent_object_title_index(),
            parent_object_instance: v.parent_object_instance(),
            unique_id: v.unique_id(),
            name_offset: v.name_offset(),
            name_length: v.name_length(),
        }
    }

    /// Writes all 24 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut InstanceDefinition<T>) {
        v.set_byte_length(self.byte_length);
        v.set_parent_object_title_index(self.parent_object_title_index);
        v.set_parent_object_instance(self.parent_object_instance);
        v.set_unique_id(self.unique_id);
        v.set_name_offset(self.name_offset);
        v.set_name_length(self.name_length);
    }
}

#[cfg(test)]
mod tests {
    //! Layout tests: every size and field offset against windows-sys, so a typo cannot pass.
    use super::*;
    use core::mem::{offset_of, size_of};
    use windows_sys::Win32::System::Performance as wp;

    #[test]
    fn data_block_matches_windows_sys() {
        assert_eq!(size_of::<wp::PERF_DATA_BLOCK>(), db::LEN);
        assert_eq!(offset_of!(wp::PERF_DATA_BLOCK, Signature), db::SIGNATURE);
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, LittleEndian),
            db::LITTLE_ENDIAN
        );
        assert_eq!(offset_of!(wp::PERF_DATA_BLOCK, Version), db::VERSION);
        assert_eq!(offset_of!(wp::PERF_DATA_BLOCK, Revision), db::REVISION);
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, TotalByteLength),
            db::TOTAL_BYTE_LENGTH
        );
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, HeaderLength),
            db::HEADER_LENGTH
        );
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, NumObjectTypes),
            db::NUM_OBJECT_TYPES
        );
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, DefaultObject),
            db::DEFAULT_OBJECT
        );
        assert_eq!(offset_of!(wp::PERF_DATA_BLOCK, SystemTime), db::SYSTEM_TIME);
        assert_eq!(offset_of!(wp::PERF_DATA_BLOCK, PerfTime), db::PERF_TIME);
        assert_eq!(offset_of!(wp::PERF_DATA_BLOCK, PerfFreq), db::PERF_FREQ);
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, PerfTime100nSec),
            db::PERF_TIME_100NSEC
        );
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, SystemNameLength),
            db::SYSTEM_NAME_LENGTH
        );
        assert_eq!(
            offset_of!(wp::PERF_DATA_BLOCK, SystemNameOffset),
            db::SYSTEM_NAME_OFFSET
        );
    }

    #[test]
    fn object_type_matches_windows_sys() {
        type O = wp::PERF_OBJECT_TYPE;
        assert_eq!(size_of::<O>(), ot::LEN);
        assert_eq!(offset_of!(O, TotalByteLength), ot::TOTAL_BYTE_LENGTH);
        assert_eq!(offset_of!(O, DefinitionLength), ot::DEFINITION_LENGTH);
        assert_eq!(offset_of!(O, HeaderLength), ot::HEADER_LENGTH);
        assert_eq!(
            offset_of!(O, ObjectNameTitleIndex),
            ot::OBJECT_NAME_TITLE_INDEX
        );
        assert_eq!(offset_of!(O, ObjectNameTitle), ot::OBJECT_NAME_TITLE);
        assert_eq!(
            offset_of!(O, ObjectHelpTitleIndex),
            ot::OBJECT_HELP_TITLE_INDEX
        );
        assert_eq!(offset_of!(O, ObjectHelpTitle), ot::OBJECT_HELP_TITLE);
        assert_eq!(offset_of!(O, DetailLevel), ot::DETAIL_LEVEL);
        assert_eq!(offset_of!(O, NumCounters), ot::NUM_COUNTERS);
        assert_eq!(offset_of!(O, DefaultCounter), ot::DEFAULT_COUNTER);
        assert_eq!(offset_of!(O, NumInstances), ot::NUM_INSTANCES);
        assert_eq!(offset_of!(O, CodePage), ot::CODE_PAGE);
        assert_eq!(offset_of!(O, PerfTime), ot::PERF_TIME);
        assert_eq!(offset_of!(O, PerfFreq), ot::PERF_FREQ);
    }

    #[test]
    fn counter_definition_matches_windows_sys() {
        type C = wp::PERF_COUNTER_DEFINITION;
        assert_eq!(size_of::<C>(), cd::LEN);
        assert_eq!(offset_of!(C, ByteLength), cd::BYTE_LENGTH);
        assert_eq!(
            offset_of!(C, CounterNameTitleIndex),
            cd::COUNTER_NAME_TITLE_INDEX
        );
        assert_eq!(offset_of!(C, CounterNameTitle), cd::COUNTER_NAME_TITLE);
        assert_eq!(
            offset_of!(C, CounterHelpTitleIndex),
            cd::COUNTER_HELP_TITLE_INDEX
        );
        assert_eq!(offset_of!(C, CounterHelpTitle), cd::COUNTER_HELP_TITLE);
        assert_eq!(offset_of!(C, DefaultScale), cd::DEFAULT_SCALE);
        assert_eq!(offset_of!(C, DetailLevel), cd::DETAIL_LEVEL);
        assert_eq!(offset_of!(C, CounterType), cd::COUNTER_TYPE);
        assert_eq!(offset_of!(C, CounterSize), cd::COUNTER_SIZE);
        assert_eq!(offset_of!(C, CounterOffset), cd::COUNTER_OFFSET);
    }

    #[test]
    fn instance_definition_and_block_match_windows_sys() {
        type I = wp::PERF_INSTANCE_DEFINITION;
        assert_eq!(size_of::<I>(), id::LEN);
        assert_eq!(offset_of!(I, ByteLength), id::BYTE_LENGTH);
        assert_eq!(
            offset_of!(I, ParentObjectTitleIndex),
            id::PARENT_OBJECT_TITLE_INDEX
        );
        assert_eq!(
            offset_of!(I, ParentObjectInstance),
            id::PARENT_OBJECT_INSTANCE
        );
        assert_eq!(offset_of!(I, UniqueID), id::UNIQUE_ID);
        assert_eq!(offset_of!(I, NameOffset), id::NAME_OFFSET);
        assert_eq!(offset_of!(I, NameLength), id::NAME_LENGTH);
        assert_eq!(size_of::<wp::PERF_COUNTER_BLOCK>(), cb::LEN);
        assert_eq!(
            offset_of!(wp::PERF_COUNTER_BLOCK, ByteLength),
            cb::BYTE_LENGTH
        );
    }

    #[test]
    fn constants_match_windows_sys() {
        assert_eq!(PERF_NO_INSTANCES, wp::PERF_NO_INSTANCES);
        assert_eq!(
            PERF_METADATA_MULTIPLE_INSTANCES,
            wp::PERF_METADATA_MULTIPLE_INSTANCES
        );
        assert_eq!(PERF_METADATA_NO_INSTANCES, wp::PERF_METADATA_NO_INSTANCES);
        assert_eq!(PERF_NO_UNIQUE_ID, wp::PERF_NO_UNIQUE_ID);
        assert_eq!(PERF_DATA_VERSION, wp::PERF_DATA_VERSION);
        assert_eq!(PERF_DATA_REVISION, wp::PERF_DATA_REVISION);
    }

    #[test]
    fn new_checked_refuses_short_buffers() {
        assert_eq!(
            DataBlock::new_checked(&[0u8; 87][..]),
            Err(Truncated {
                needed: 88,
                available: 87
            })
        );
        assert!(ObjectType::new_checked(&[0u8; 63][..]).is_err());
        assert!(CounterDefinition::new_checked(&[0u8; 39][..]).is_err());
        assert!(InstanceDefinition::new_checked(&[0u8; 23][..]).is_err());
        assert!(CounterBlock::new_checked(&[0u8; 3][..]).is_err());
        assert!(CounterBlock::new_checked(&[0u8; 4][..]).is_ok());
    }

    #[test]
    fn data_block_emit_writes_every_byte_and_parses_back() {
        let repr = DataBlockRepr {
            // Eight distinct bytes, to see each land, and a negative time, to see the sign.
            perf_time: 0x0102_0304_0506_0708,
            perf_time_100nsec: -2,
            ..crate::testing::data_block_header(0x1122_3344, 112, 3, 20)
        };
        let mut buf = [0xA5u8; 88];
        repr.emit(&mut DataBlock::new_checked(&mut buf[..]).unwrap());
        let view = DataBlock::new_checked(&buf[..]).unwrap();
        assert_eq!(view.signature(), PERF_SIGNATURE);
        assert_eq!(DataBlockRepr::parse(&view), repr);
        assert_eq!(
            &buf[52..56],
            &[0, 0, 0, 0],
            "padding before PerfTime is zeroed"
        );
        assert_eq!(&buf[56..64], &0x0102_0304_0506_0708i64.to_le_bytes());
        // Compare with the native windows-sys struct read from the same bytes.
        // SAFETY: PERF_DATA_BLOCK is plain old data of exactly 88 bytes; read_unaligned copes
        // with the byte array's alignment.
        let native: wp::PERF_DATA_BLOCK = unsafe { core::ptr::read_unaligned(buf.as_ptr().cast()) };
        assert_eq!(native.TotalByteLength, 0x1122_3344);
        assert_eq!(native.PerfTime, 0x0102_0304_0506_0708);
        assert_eq!(native.PerfTime100nSec, -2);
        assert_eq!(native.SystemTime.wMilliseconds, 789);
        assert_eq!(native.SystemNameOffset, 88);
    }

    #[test]
    fn object_and_counter_emit_cover_every_byte() {
        let obj = ObjectTypeRepr {
            total_byte_length: 200,
            definition_length: 144,
            header_length: 64,
            object_name_title_index: 1000,
            object_help_title_index: 1001,
            detail_level: DetailLevel::Advanced,
            num_counters: 2,
            default_counter: -1,
            num_instances: PERF_NO_INSTANCES,
            code_page: 0,
            perf_time: 7,
            perf_freq: 9,
        };
        let mut buf = [0xCCu8; 64];
        obj.emit(&mut ObjectType::new_checked(&mut buf[..]).unwrap());
        let view = ObjectType::new_checked(&buf[..]).unwrap();
        assert_eq!(ObjectTypeRepr::parse(&view), obj);
        assert_eq!(view.object_name_title(), 0);
        assert!(
            !buf.windows(4).any(|w| w == [0xCC; 4]),
            "a field was left unwritten"
        );

        let ctr = CounterDefinitionRepr {
            byte_length: 40,
            counter_name_title_index: 1002,
            counter_help_title_index: 1003,
            default_scale: -3,
            detail_level: DetailLevel::Novice,
            counter_type: CounterType::from_raw(0x1041_0500),
            counter_size: 8,
            counter_offset: 8,
        };
        let mut buf = [0xCCu8; 40];
        ctr.emit(&mut CounterDefinition::new_checked(&mut buf[..]).unwrap());
        let view = CounterDefinition::new_checked(&buf[..]).unwrap();
        assert_eq!(CounterDefinitionRepr::parse(&view), ctr);
        assert!(
            !buf.windows(4).any(|w| w == [0xCC; 4]),
            "a field was left unwritten"
        );

        let inst = InstanceDefinitionRepr {
            byte_length: 48,
            parent_object_title_index: 0,
            parent_object_instance: 0,
            unique_id: PERF_NO_UNIQUE_ID,
            name_offset: 24,
            name_length: 12,
        };
        let mut buf = [0xCCu8; 24];
        inst.emit(&mut InstanceDefinition::new_checked(&mut buf[..]).unwrap());
        let view = InstanceDefinition::new_checked(&buf[..]).unwrap();
        assert_eq!(InstanceDefinitionRepr::parse(&view), inst);
        assert!(
            !buf.windows(4).any(|w| w == [0xCC; 4]),
            "a field was left unwritten"
        );
    }
}
