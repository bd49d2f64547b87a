// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counter types of `winperf.h`, as described in `docs/counter-types.md`.
//!
//! [`CounterType`] is a lossless view of the `CounterType` field of a
//! `PERF_COUNTER_DEFINITION`: every named type of `winperf.h` has a variant, and any
//! other value is kept in [`CounterType::Unknown`], so `from_raw(x).raw() == x` for every
//! `u32`. On top of the raw value it answers the questions a writer, a validator, a code
//! generator and a cooker ask: the value size, the base or follower counter a type needs,
//! which time value (D) a cooker divides by, the display suffix, whether two samples are
//! needed, and the type's names in `winperf.h` and in the counter manifest (`.man`) schema.
//!
//! # Sources
//!
//! * Bit fields and values: `docs/counter-types.md` (from mingw-w64's `winperf.h`, .NET's
//!   interop constants and the WMI "`CounterType` Qualifier" table).
//! * Manifest type names: the `type` attribute of the `counter` complex type in the
//!   Performance Counters Schema (see [`MANIFEST_SCHEMA_TYPE_NAMES`]).
//!
//! # Canonical values
//!
//! [`CounterType::from_raw`] is the way to build a value: it maps every named value to its
//! variant. `Unknown(v)` built by hand with a named `v` compares unequal to the named variant
//! (the derives are structural), but every method here treats it exactly like that variant.
//!
//! Nothing in this module panics, allocates or indexes.

/// Mask of the size field (`PERF_SIZE_*`).
const SIZE_MASK: u32 = 0x0000_0300;
/// Mask of the type field (`PERF_TYPE_*`).
const TYPE_MASK: u32 = 0x0000_0C00;
/// Mask of the subtype field (`PERF_NUMBER_*`, `PERF_COUNTER_*` subtypes, `PERF_TEXT_*`).
const SUBTYPE_MASK: u32 = 0x000F_0000;
/// Mask of the timer field (`PERF_TIMER_TICK`, `PERF_TIMER_100NS`, `PERF_OBJECT_TIMER`).
const TIMER_MASK: u32 = 0x0030_0000;
/// Mask of the display field (`PERF_DISPLAY_*`).
const DISPLAY_MASK: u32 = 0xF000_0000;

/// `PERF_SIZE_DWORD`.
const SIZE_DWORD: u32 = 0x0000_0000;
/// `PERF_SIZE_LARGE`.
const SIZE_LARGE: u32 = 0x0000_0100;
/// `PERF_SIZE_ZERO`.
const SIZE_ZERO: u32 = 0x0000_0200;
/// `PERF_TYPE_COUNTER`.
const TYPE_COUNTER: u32 = 0x0000_0400;
/// `PERF_COUNTER_BASE` (a subtype of `PERF_TYPE_COUNTER`).
const SUBTYPE_BASE: u32 = 0x0003_0000;
/// `PERF_DELTA_COUNTER`.
const DELTA_COUNTER: u32 = 0x0040_0000;
/// `PERF_DELTA_BASE`.
const DELTA_BASE: u32 = 0x0080_0000;
/// `PERF_INVERSE_COUNTER`.
const INVERSE_COUNTER: u32 = 0x0100_0000;
/// `PERF_MULTI_COUNTER`.
const MULTI_COUNTER: u32 = 0x0200_0000;
/// `PERF_DISPLAY_PER_SEC`.
const DISPLAY_PER_SEC: u32 = 0x1000_0000;
/// `PERF_DISPLAY_PERCENT`.
const DISPLAY_PERCENT: u32 = 0x2000_0000;
/// `PERF_DISPLAY_SECONDS`.
const DISPLAY_SECONDS: u32 = 0x3000_0000;
/// `PERF_DISPLAY_NOSHOW`.
const DISPLAY_NOSHOW: u32 = 0x4000_0000;

/// The value the WMI "`CounterType` Qualifier" table gives for `PERF_LARGE_RAW_BASE`.
///
/// The SDK-derived headers define `PERF_LARGE_RAW_BASE` (and `PERF_PRECISION_TIMESTAMP`) as
/// `0x40030500`, which this crate treats as canonical (`docs/counter-types.md`). The WMI table
/// lists `0x40030503` instead. [`CounterType::from_raw`] maps this value to
/// `CounterType::Unknown(0x40030503)`, not to [`CounterType::LargeRawBase`], so that raw values
/// round-trip; a validator may use this constant to say what such a value probably meant.
pub const WMI_LARGE_RAW_BASE: u32 = 0x4003_0503;

/// A counter type: the `CounterType` field of a `PERF_COUNTER_DEFINITION`.
///
/// One variant per named type of `winperf.h`, plus [`CounterType::Unknown`] for any
/// other value. Build values with [`CounterType::from_raw`]; read them back with
/// [`CounterType::raw`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterType {
    /// `PERF_COUNTER_RAWCOUNT_HEX` (`0x00000000`): instantaneous 32-bit value shown in hex.
    RawcountHex,
    /// `PERF_COUNTER_LARGE_RAWCOUNT_HEX` (`0x00000100`): instantaneous 64-bit value shown in
    /// hex.
    LargeRawcountHex,
    /// `PERF_COUNTER_TEXT` (`0x00000B00`): variable-length Unicode text, never cooked.
    Text,
    /// `PERF_COUNTER_RAWCOUNT` (`0x00010000`): instantaneous 32-bit value.
    Rawcount,
    /// `PERF_COUNTER_LARGE_RAWCOUNT` (`0x00010100`): instantaneous 64-bit value.
    LargeRawcount,
    /// `PERF_COUNTER_DELTA` (`0x00400400`): 32-bit difference between two samples.
    Delta,
    /// `PERF_COUNTER_LARGE_DELTA` (`0x00400500`): 64-bit difference between two samples.
    LargeDelta,
    /// `PERF_SAMPLE_COUNTER` (`0x00410400`): 32-bit count per second of `PerfTime`, no
    /// suffix.
    SampleCounter,
    /// `PERF_COUNTER_COUNTER` (`0x10410400`): 32-bit count per second of `PerfTime`.
    Counter,
    /// `PERF_COUNTER_BULK_COUNT` (`0x10410500`): 64-bit count per second of `PerfTime`.
    BulkCount,
    /// `PERF_COUNTER_QUEUELEN_TYPE` (`0x00450400`): 32-bit queue length averaged over
    /// `PerfTime` ticks.
    Queuelen,
    /// `PERF_COUNTER_LARGE_QUEUELEN_TYPE` (`0x00450500`): 64-bit queue length averaged over
    /// `PerfTime` ticks.
    LargeQueuelen,
    /// `PERF_COUNTER_100NS_QUEUELEN_TYPE` (`0x00550500`): queue length averaged over
    /// `PerfTime100nSec`.
    Queuelen100ns,
    /// `PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE` (`0x00650500`): queue length averaged over the
    /// object's `PerfTime`.
    ObjTimeQueuelen,
    /// `PERF_COUNTER_TIMER` (`0x20410500`): percentage of `PerfTime` that was busy.
    Timer,
    /// `PERF_COUNTER_TIMER_INV` (`0x21410500`): percentage of `PerfTime` that was idle.
    TimerInv,
    /// `PERF_100NSEC_TIMER` (`0x20510500`): percentage of 100 ns time that was busy.
    Timer100ns,
    /// `PERF_100NSEC_TIMER_INV` (`0x21510500`): percentage of 100 ns time that was idle.
    Timer100nsInv,
    /// `PERF_OBJ_TIME_TIMER` (`0x20610500`): percentage of the object's time that was busy.
    ObjTimeTimer,
    /// `PERF_PRECISION_SYSTEM_TIMER` (`0x20470500`): busy percentage whose time value is the
    /// following counter, in `PerfFreq` ticks.
    PrecisionSystemTimer,
    /// `PERF_PRECISION_100NS_TIMER` (`0x20570500`): busy percentage whose time value is the
    /// following counter, in 100 ns units.
    Precision100nsTimer,
    /// `PERF_PRECISION_OBJECT_TIMER` (`0x20670500`): busy percentage whose time value is the
    /// following counter, in the object's `PerfFreq` ticks.
    PrecisionObjectTimer,
    /// `PERF_COUNTER_MULTI_TIMER` (`0x22410500`): busy percentage over several items, divided
    /// by a [`CounterType::MultiBase`] count.
    MultiTimer,
    /// `PERF_COUNTER_MULTI_TIMER_INV` (`0x23410500`): inverse of
    /// [`CounterType::MultiTimer`].
    MultiTimerInv,
    /// `PERF_100NSEC_MULTI_TIMER` (`0x22510500`): [`CounterType::MultiTimer`] over 100 ns
    /// time.
    MultiTimer100ns,
    /// `PERF_100NSEC_MULTI_TIMER_INV` (`0x23510500`): inverse of
    /// [`CounterType::MultiTimer100ns`].
    MultiTimer100nsInv,
    /// `PERF_COUNTER_MULTI_BASE` (`0x42030500`): the item count of the multi-timer types.
    MultiBase,
    /// `PERF_RAW_FRACTION` (`0x20020400`): 32-bit numerator of a percentage whose denominator
    /// is the following [`CounterType::RawBase`].
    RawFraction,
    /// `PERF_LARGE_RAW_FRACTION` (`0x20020500`): 64-bit numerator of a percentage whose
    /// denominator is the following [`CounterType::LargeRawBase`].
    LargeRawFraction,
    /// `PERF_RAW_BASE` (`0x40030403`): 32-bit denominator of [`CounterType::RawFraction`].
    RawBase,
    /// `PERF_LARGE_RAW_BASE` (`0x40030500`), also spelled `PERF_PRECISION_TIMESTAMP`.
    ///
    /// The 64-bit denominator of [`CounterType::LargeRawFraction`], and the time value that
    /// follows each precision timer. The WMI table's `0x40030503` is not this variant; see
    /// [`WMI_LARGE_RAW_BASE`].
    LargeRawBase,
    /// `PERF_SAMPLE_FRACTION` (`0x20C20400`): percentage of the numerator's change over the
    /// following [`CounterType::SampleBase`]'s change.
    SampleFraction,
    /// `PERF_SAMPLE_BASE` (`0x40030401`): denominator of [`CounterType::SampleFraction`].
    SampleBase,
    /// `PERF_AVERAGE_TIMER` (`0x30020400`): average time per operation, in seconds.
    ///
    /// Declared `PERF_SIZE_DWORD`, but Microsoft's cooking sample reads it as a 64-bit value
    /// (`docs/counter-types.md`): readers should honour the definition's `CounterSize`.
    AverageTimer,
    /// `PERF_AVERAGE_BULK` (`0x40020500`): average count per operation.
    AverageBulk,
    /// `PERF_AVERAGE_BASE` (`0x40030402`): operation count of [`CounterType::AverageTimer`]
    /// and [`CounterType::AverageBulk`].
    AverageBase,
    /// `PERF_ELAPSED_TIME` (`0x30240500`): start time, shown as the time elapsed since it,
    /// measured against the object's `PerfTime` and `PerfFreq`.
    ElapsedTime,
    /// `PERF_COUNTER_NODATA` (`0x40000200`): a zero-length counter with no data.
    NoData,
    /// `PERF_COUNTER_HISTOGRAM_TYPE` (`0x80000000`): a histogram; not supported by the
    /// cookers.
    Histogram,
    /// Any value that is not one of the named types, kept as it came.
    Unknown(u32),
}

/// Every named [`CounterType`] (all variants but [`CounterType::Unknown`]), in the order of
/// the table in `docs/counter-types.md`.
pub const ALL: [CounterType; 39] = [
    CounterType::RawcountHex,
    CounterType::LargeRawcountHex,
    CounterType::Text,
    CounterType::Rawcount,
    CounterType::LargeRawcount,
    CounterType::Delta,
    CounterType::LargeDelta,
    CounterType::SampleCounter,
    CounterType::Counter,
    CounterType::BulkCount,
    CounterType::Queuelen,
    CounterType::LargeQueuelen,
    CounterType::Queuelen100ns,
    CounterType::ObjTimeQueuelen,
    CounterType::Timer,
    CounterType::TimerInv,
    CounterType::Timer100ns,
    CounterType::Timer100nsInv,
    CounterType::ObjTimeTimer,
    CounterType::PrecisionSystemTimer,
    CounterType::Precision100nsTimer,
    CounterType::PrecisionObjectTimer,
    CounterType::MultiTimer,
    CounterType::MultiTimerInv,
    CounterType::MultiTimer100ns,
    CounterType::MultiTimer100nsInv,
    CounterType::MultiBase,
    CounterType::RawFraction,
    CounterType::LargeRawFraction,
    CounterType::RawBase,
    CounterType::LargeRawBase,
    CounterType::SampleFraction,
    CounterType::SampleBase,
    CounterType::AverageTimer,
    CounterType::AverageBulk,
    CounterType::AverageBase,
    CounterType::ElapsedTime,
    CounterType::NoData,
    CounterType::Histogram,
];

/// Every value the counter manifest schema allows in a `counter` element's `type` attribute,
/// in schema order.
///
/// Source: the enumeration of the `type` attribute of the `counter` complex type in the
/// Performance Counters Schema (`counters` section of an instrumentation manifest, as read by
/// CTRPP), published at
/// <https://learn.microsoft.com/windows/win32/perfctrs/performance-counters-counter-complex-type>
/// and in the full schema listing of the same documentation set.
///
/// There are 38 names. 37 of them are the lower-case spellings of named `winperf.h` types and
/// appear in [`MANIFEST_TYPE_NAMES`]. The last, `perf_counter_composite`, has no `winperf.h`
/// value and no documented meaning, so it maps to no [`CounterType`]. Conversely,
/// `PERF_COUNTER_NODATA` and `PERF_COUNTER_HISTOGRAM_TYPE` have no manifest name.
pub const MANIFEST_SCHEMA_TYPE_NAMES: [&str; 38] = [
    "perf_counter_counter",
    "perf_counter_timer",
    "perf_counter_queuelen_type",
    "perf_counter_large_queuelen_type",
    "perf_counter_100ns_queuelen_type",
    "perf_counter_obj_time_queuelen_type",
    "perf_counter_bulk_count",
    "perf_counter_text",
    "perf_counter_rawcount",
    "perf_counter_large_rawcount",
    "perf_counter_rawcount_hex",
    "perf_counter_large_rawcount_hex",
    "perf_sample_fraction",
    "perf_sample_counter",
    "perf_counter_timer_inv",
    "perf_sample_base",
    "perf_average_timer",
    "perf_average_base",
    "perf_average_bulk",
    "perf_obj_time_timer",
    "perf_100nsec_timer",
    "perf_100nsec_timer_inv",
    "perf_counter_multi_timer",
    "perf_counter_multi_timer_inv",
    "perf_counter_multi_base",
    "perf_100nsec_multi_timer",
    "perf_100nsec_multi_timer_inv",
    "perf_raw_fraction",
    "perf_large_raw_fraction",
    "perf_raw_base",
    "perf_large_raw_base",
    "perf_elapsed_time",
    "perf_counter_delta",
    "perf_counter_large_delta",
    "perf_precision_system_timer",
    "perf_precision_100ns_timer",
    "perf_precision_object_timer",
    "perf_counter_composite",
];

/// The manifest `type` attribute names that have a counter type, in schema order, with the
/// type each one stands for.
///
/// These are the entries of [`MANIFEST_SCHEMA_TYPE_NAMES`] (same source) except
/// `perf_counter_composite`, which has no `winperf.h` value: 37 of the schema's 38 names.
/// The schema compares names exactly (they are case-sensitive and lower case), and so does
/// [`CounterType::from_manifest_name`].
pub const MANIFEST_TYPE_NAMES: [(&str, CounterType); 37] = [
    ("perf_counter_counter", CounterType::Counter),
    ("perf_counter_timer", CounterType::Timer),
    ("perf_counter_queuelen_type", CounterType::Queuelen),
    (
        "perf_counter_large_queuelen_type",
        CounterType::LargeQueuelen,
    ),
    (
        "perf_counter_100ns_queuelen_type",
        CounterType::Queuelen100ns,
    ),
    (
        "perf_counter_obj_time_queuelen_type",
        CounterType::ObjTimeQueuelen,
    ),
    ("perf_counter_bulk_count", CounterType::BulkCount),
    ("perf_counter_text", CounterType::Text),
    ("perf_counter_rawcount", CounterType::Rawcount),
    ("perf_counter_large_rawcount", CounterType::LargeRawcount),
    ("perf_counter_rawcount_hex", CounterType::RawcountHex),
    (
        "perf_counter_large_rawcount_hex",
        CounterType::LargeRawcountHex,
    ),
    ("perf_sample_fraction", CounterType::SampleFraction),
    ("perf_sample_counter", CounterType::SampleCounter),
    ("perf_counter_timer_inv", CounterType::TimerInv),
    ("perf_sample_base", CounterType::SampleBase),
    ("perf_average_timer", CounterType::AverageTimer),
    ("perf_average_base", CounterType::AverageBase),
    ("perf_average_bulk", CounterType::AverageBulk),
    ("perf_obj_time_timer", CounterType::ObjTimeTimer),
    ("perf_100nsec_timer", CounterType::Timer100ns),
    ("perf_100nsec_timer_inv", CounterType::Timer100nsInv),
    ("perf_counter_multi_timer", CounterType::MultiTimer),
    ("perf_counter_multi_timer_inv", CounterType::MultiTimerInv),
    ("perf_counter_multi_base", CounterType::MultiBase),
    ("perf_100nsec_multi_timer", CounterType::MultiTimer100ns),
    (
        "perf_100nsec_multi_timer_inv",
        CounterType::MultiTimer100nsInv,
    ),
    ("perf_raw_fraction", CounterType::RawFraction),
    ("perf_large_raw_fraction", CounterType::LargeRawFraction),
    ("perf_raw_base", CounterType::RawBase),
    ("perf_large_raw_base", CounterType::LargeRawBase),
    ("perf_elapsed_time", CounterType::ElapsedTime),
    ("perf_counter_delta", CounterType::Delta),
    ("perf_counter_large_delta", CounterType::LargeDelta),
    (
        "perf_precision_system_timer",
        CounterType::PrecisionSystemTimer,
    ),
    (
        "perf_precision_100ns_timer",
        CounterType::Precision100nsTimer,
    ),
    (
        "perf_precision_object_timer",
        CounterType::PrecisionObjectTimer,
    ),
];

/// The time value (D in `docs/counter-types.md`) a cooker divides by for a counter type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeBase {
    /// The formula uses no time value (it may still use a base counter or `PerfFreq`).
    None,
    /// `PERF_DATA_BLOCK.PerfTime`, in `PERF_DATA_BLOCK.PerfFreq` ticks.
    PerfTime,
    /// `PERF_DATA_BLOCK.PerfTime100nSec`, in 100 ns units.
    PerfTime100ns,
    /// `PERF_OBJECT_TYPE.PerfTime`, in `PERF_OBJECT_TYPE.PerfFreq` ticks.
    ObjectTime,
    /// The value of the counter that follows this one (`PERF_PRECISION_TIMESTAMP`).
    FollowingCounter,
}

/// The suffix a consumer shows after a cooked value (the `PERF_DISPLAY_*` field, mask
/// `0xF0000000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DisplaySuffix {
    /// `PERF_DISPLAY_NO_SUFFIX`, and any display value `winperf.h` does not name.
    None,
    /// `PERF_DISPLAY_PER_SEC`: "/sec".
    PerSec,
    /// `PERF_DISPLAY_PERCENT`: "%".
    Percent,
    /// `PERF_DISPLAY_SECONDS`: "secs".
    Seconds,
    /// `PERF_DISPLAY_NOSHOW`: the value is not displayed (bases, helpers).
    NoShow,
}

impl CounterType {
    /// Every named counter type; the same list as the module-level [`ALL`].
    pub const ALL: [CounterType; 39] = ALL;

    /// The counter type for a raw `CounterType` value.
    ///
    /// Named values give their variant; anything else gives [`CounterType::Unknown`], so
    /// `from_raw(x).raw() == x` for every `x`. In particular `from_raw(0x40030503)` (the WMI
    /// table's value for `PERF_LARGE_RAW_BASE`, see [`WMI_LARGE_RAW_BASE`]) is
    /// `Unknown(0x40030503)`; only `0x40030500` is [`CounterType::LargeRawBase`].
    pub const fn from_raw(raw: u32) -> Self {
        match raw {
            0x0000_0000 => Self::RawcountHex,
            0x0000_0100 => Self::LargeRawcountHex,
            0x0000_0B00 => Self::Text,
            0x0001_0000 => Self::Rawcount,
            0x0001_0100 => Self::LargeRawcount,
            0x0040_0400 => Self::Delta,
            0x0040_0500 => Self::LargeDelta,
            0x0041_0400 => Self::SampleCounter,
            0x1041_0400 => Self::Counter,
            0x1041_0500 => Self::BulkCount,
            0x0045_0400 => Self::Queuelen,
            0x0045_0500 => Self::LargeQueuelen,
            0x0055_0500 => Self::Queuelen100ns,
            0x0065_0500 => Self::ObjTimeQueuelen,
            0x2041_0500 => Self::Timer,
            0x2141_0500 => Self::TimerInv,
            0x2051_0500 => Self::Timer100ns,
            0x2151_0500 => Self::Timer100nsInv,
            0x2061_0500 => Self::ObjTimeTimer,
            0x2047_0500 => Self::PrecisionSystemTimer,
            0x2057_0500 => Self::Precision100nsTimer,
            0x2067_0500 => Self::PrecisionObjectTimer,
            0x2241_0500 => Self::MultiTimer,
            0x2341_0500 => Self::MultiTimerInv,
            0x2251_0500 => Self::MultiTimer100ns,
            0x2351_0500 => Self::MultiTimer100nsInv,
            0x4203_0500 => Self::MultiBase,
            0x2002_0400 => Self::RawFraction,
            0x2002_0500 => Self::LargeRawFraction,
            0x4003_0403 => Self::RawBase,
            0x4003_0500 => Self::LargeRawBase,
            0x20C2_0400 => Self::SampleFraction,
            0x4003_0401 => Self::SampleBase,
            0x3002_0400 => Self::AverageTimer,
            0x4002_0500 => Self::AverageBulk,
            0x4003_0402 => Self::AverageBase,
            0x3024_0500 => Self::ElapsedTime,
            0x4000_0200 => Self::NoData,
            0x8000_0000 => Self::Histogram,
            other => Self::Unknown(other),
        }
    }

    /// The raw `CounterType` value, as written in a `PERF_COUNTER_DEFINITION`.
    pub const fn raw(self) -> u32 {
        match self {
            Self::RawcountHex => 0x0000_0000,
            Self::LargeRawcountHex => 0x0000_0100,
            Self::Text => 0x0000_0B00,
            Self::Rawcount => 0x0001_0000,
            Self::LargeRawcount => 0x0001_0100,
            Self::Delta => 0x0040_0400,
            Self::LargeDelta => 0x0040_0500,
            Self::SampleCounter => 0x0041_0400,
            Self::Counter => 0x1041_0400,
            Self::BulkCount => 0x1041_0500,
            Self::Queuelen => 0x0045_0400,
            Self::LargeQueuelen => 0x0045_0500,
            Self::Queuelen100ns => 0x0055_0500,
            Self::ObjTimeQueuelen => 0x0065_0500,
            Self::Timer => 0x2041_0500,
            Self::TimerInv => 0x2141_0500,
            Self::Timer100ns => 0x2051_0500,
            Self::Timer100nsInv => 0x2151_0500,
            Self::ObjTimeTimer => 0x2061_0500,
            Self::PrecisionSystemTimer => 0x2047_0500,
            Self::Precision100nsTimer => 0x2057_0500,
            Self::PrecisionObjectTimer => 0x2067_0500,
            Self::MultiTimer => 0x2241_0500,
            Self::MultiTimerInv => 0x2341_0500,
            Self::MultiTimer100ns => 0x2251_0500,
            Self::MultiTimer100nsInv => 0x2351_0500,
            Self::MultiBase => 0x4203_0500,
            Self::RawFraction => 0x2002_0400,
            Self::LargeRawFraction => 0x2002_0500,
            Self::RawBase => 0x4003_0403,
            Self::LargeRawBase => 0x4003_0500,
            Self::SampleFraction => 0x20C2_0400,
            Self::SampleBase => 0x4003_0401,
            Self::AverageTimer => 0x3002_0400,
            Self::AverageBulk => 0x4002_0500,
            Self::AverageBase => 0x4003_0402,
            Self::ElapsedTime => 0x3024_0500,
            Self::NoData => 0x4000_0200,
            Self::Histogram => 0x8000_0000,
            Self::Unknown(raw) => raw,
        }
    }

    /// The same type with a hand-built `Unknown(v)` of a named `v` turned into its variant.
    const fn canonical(self) -> Self {
        Self::from_raw(self.raw())
    }

    /// Whether this is a named type (not [`CounterType::Unknown`] of an unnamed value).
    pub const fn is_known(self) -> bool {
        !matches!(self.canonical(), Self::Unknown(_))
    }

    /// The size field, `raw & 0x00000300` (`PERF_SIZE_DWORD`, `_LARGE`, `_ZERO` or
    /// `_VARIABLE_LEN`), unshifted.
    pub const fn size_bits(self) -> u32 {
        self.raw() & SIZE_MASK
    }

    /// The type field, `raw & 0x00000C00` (`PERF_TYPE_NUMBER`, `_COUNTER`, `_TEXT` or
    /// `_ZERO`), unshifted.
    pub const fn type_bits(self) -> u32 {
        self.raw() & TYPE_MASK
    }

    /// The subtype field, `raw & 0x000F0000`, unshifted. Its meaning depends on
    /// [`CounterType::type_bits`]: `PERF_NUMBER_*`, the `PERF_COUNTER_*` subtypes
    /// (`VALUE`, `RATE`, `FRACTION`, `BASE`, `ELAPSED`, `QUEUELEN`, `HISTOGRAM`,
    /// `PRECISION`) or `PERF_TEXT_*`.
    pub const fn subtype_bits(self) -> u32 {
        self.raw() & SUBTYPE_MASK
    }

    /// The timer field, `raw & 0x00300000` (`PERF_TIMER_TICK`, `PERF_TIMER_100NS` or
    /// `PERF_OBJECT_TIMER`), unshifted.
    pub const fn timer_bits(self) -> u32 {
        self.raw() & TIMER_MASK
    }

    /// The display field, `raw & 0xF0000000` (`PERF_DISPLAY_*`), unshifted. Unlike
    /// [`CounterType::display_suffix`] this keeps values `winperf.h` does not name.
    pub const fn display_bits(self) -> u32 {
        self.raw() & DISPLAY_MASK
    }

    /// Whether `PERF_DELTA_COUNTER` (`0x00400000`) is set: the value is cooked from the
    /// difference of two samples.
    pub const fn is_delta_counter(self) -> bool {
        self.raw() & DELTA_COUNTER != 0
    }

    /// Whether `PERF_DELTA_BASE` (`0x00800000`) is set: the base is cooked from the
    /// difference of two samples.
    pub const fn is_delta_base(self) -> bool {
        self.raw() & DELTA_BASE != 0
    }

    /// Whether `PERF_INVERSE_COUNTER` (`0x01000000`) is set: the cooked value is the
    /// complement (idle rather than busy).
    pub const fn is_inverse(self) -> bool {
        self.raw() & INVERSE_COUNTER != 0
    }

    /// Whether `PERF_MULTI_COUNTER` (`0x02000000`) is set: the value covers several items
    /// and is divided by a count.
    pub const fn is_multi(self) -> bool {
        self.raw() & MULTI_COUNTER != 0
    }

    /// The size in bytes of the counter's value, from the size field: 4 for
    /// `PERF_SIZE_DWORD`, 8 for `PERF_SIZE_LARGE`, 0 for `PERF_SIZE_ZERO`, and `None` for
    /// `PERF_SIZE_VARIABLE_LEN` ([`CounterType::Text`] and any unknown type with that size).
    ///
    /// This is the declared size. [`CounterType::AverageTimer`] gives 4 although
    /// Microsoft's cooking sample reads it as 8 bytes (`docs/counter-types.md`): readers
    /// should honour the definition's `CounterSize` over this value. No source gives a
    /// size for [`CounterType::Histogram`]; its size field says DWORD, so this gives 4.
    pub const fn size(self) -> Option<u32> {
        match self.size_bits() {
            SIZE_DWORD => Some(4),
            SIZE_LARGE => Some(8),
            SIZE_ZERO => Some(0),
            _ => None,
        }
    }

    /// Whether this is a base type (`PERF_TYPE_COUNTER` with subtype `PERF_COUNTER_BASE`):
    /// [`CounterType::MultiBase`], [`CounterType::RawBase`], [`CounterType::LargeRawBase`],
    /// [`CounterType::SampleBase`], [`CounterType::AverageBase`], or an unknown value with
    /// the same fields.
    pub const fn is_base(self) -> bool {
        self.type_bits() == TYPE_COUNTER && self.subtype_bits() == SUBTYPE_BASE
    }

    /// The base type this type's formula divides by, which must be the next counter in a V1
    /// object (the `baseID` counter in a manifest).
    ///
    /// * [`CounterType::AverageTimer`] and [`CounterType::AverageBulk`] need
    ///   [`CounterType::AverageBase`].
    /// * [`CounterType::RawFraction`] needs [`CounterType::RawBase`].
    /// * [`CounterType::LargeRawFraction`] needs [`CounterType::LargeRawBase`].
    /// * [`CounterType::SampleFraction`] needs [`CounterType::SampleBase`].
    /// * The four multi-timer types need [`CounterType::MultiBase`] (a manifest names the
    ///   count with `multiCounterID` instead).
    ///
    /// `None` for every other type, including unknown ones. The precision timers also read
    /// the next counter, but as a time value, not a base: see
    /// [`CounterType::required_follower`].
    pub const fn required_base(self) -> Option<CounterType> {
        match self.canonical() {
            Self::AverageTimer | Self::AverageBulk => Some(Self::AverageBase),
            Self::RawFraction => Some(Self::RawBase),
            Self::LargeRawFraction => Some(Self::LargeRawBase),
            Self::SampleFraction => Some(Self::SampleBase),
            Self::MultiTimer
            | Self::MultiTimerInv
            | Self::MultiTimer100ns
            | Self::MultiTimer100nsInv => Some(Self::MultiBase),
            _ => None,
        }
    }

    /// The type the next counter must have for this one to be cooked.
    ///
    /// This is [`CounterType::required_base`], except for the three precision timers
    /// ([`CounterType::PrecisionSystemTimer`], [`CounterType::Precision100nsTimer`],
    /// [`CounterType::PrecisionObjectTimer`]): their time value D is the next counter, a
    /// `PERF_PRECISION_TIMESTAMP`, which is the same value as `PERF_LARGE_RAW_BASE`, so
    /// they give `Some(`[`CounterType::LargeRawBase`]`)`.
    pub const fn required_follower(self) -> Option<CounterType> {
        match self.canonical() {
            Self::PrecisionSystemTimer | Self::Precision100nsTimer | Self::PrecisionObjectTimer => {
                Some(Self::LargeRawBase)
            }
            other => other.required_base(),
        }
    }

    /// Which time value (D) a cooker uses for this type, per the table in `docs/counter-types.md`.
    ///
    /// Types whose formula has no D give [`TimeBase::None`]; that includes
    /// [`CounterType::AverageTimer`], which still converts ticks to seconds with
    /// `PERF_DATA_BLOCK.PerfFreq`. Unknown types give [`TimeBase::None`]: this crate does not
    /// guess formulas from bits.
    pub const fn time_base(self) -> TimeBase {
        match self.canonical() {
            Self::SampleCounter
            | Self::Counter
            | Self::BulkCount
            | Self::Queuelen
            | Self::LargeQueuelen
            | Self::Timer
            | Self::TimerInv
            | Self::MultiTimer
            | Self::MultiTimerInv => TimeBase::PerfTime,
            Self::Queuelen100ns
            | Self::Timer100ns
            | Self::Timer100nsInv
            | Self::MultiTimer100ns
            | Self::MultiTimer100nsInv => TimeBase::PerfTime100ns,
            Self::ObjTimeQueuelen | Self::ObjTimeTimer | Self::ElapsedTime => TimeBase::ObjectTime,
            Self::PrecisionSystemTimer | Self::Precision100nsTimer | Self::PrecisionObjectTimer => {
                TimeBase::FollowingCounter
            }
            _ => TimeBase::None,
        }
    }

    /// The display suffix, from the display field (`raw & 0xF0000000`).
    ///
    /// Display values `winperf.h` does not name give [`DisplaySuffix::None`]; that includes
    /// [`CounterType::Histogram`], whose `0x80000000` sits in the display field but is a
    /// type flag rather than a suffix. Use [`CounterType::display_bits`] to see the raw field.
    pub const fn display_suffix(self) -> DisplaySuffix {
        match self.display_bits() {
            DISPLAY_PER_SEC => DisplaySuffix::PerSec,
            DISPLAY_PERCENT => DisplaySuffix::Percent,
            DISPLAY_SECONDS => DisplaySuffix::Seconds,
            DISPLAY_NOSHOW => DisplaySuffix::NoShow,
            // PERF_DISPLAY_NO_SUFFIX and unnamed values.
            _ => DisplaySuffix::None,
        }
    }

    /// Whether cooking needs two samples (an older and a newer one).
    ///
    /// True when `PERF_DELTA_COUNTER` or `PERF_DELTA_BASE` is set (deltas, rates, queue
    /// lengths, timers, precision and multi timers, [`CounterType::SampleFraction`]), and
    /// for [`CounterType::AverageTimer`] and [`CounterType::AverageBulk`], which lack the
    /// delta bit but difference both value and base (`docs/counter-types.md`). False for raw
    /// counts, raw fractions, bases, [`CounterType::ElapsedTime`], text, no-data and
    /// histograms. Unknown types answer from the delta bits alone.
    pub const fn needs_two_samples(self) -> bool {
        self.is_delta_counter()
            || self.is_delta_base()
            || matches!(self.canonical(), Self::AverageTimer | Self::AverageBulk)
    }

    /// The `winperf.h` name, such as `"PERF_COUNTER_RAWCOUNT"`; `"UNKNOWN"` for an unknown
    /// type. [`CounterType::LargeRawBase`] gives `"PERF_LARGE_RAW_BASE"` (its other name is
    /// `PERF_PRECISION_TIMESTAMP`).
    pub const fn name(self) -> &'static str {
        match self.canonical() {
            Self::RawcountHex => "PERF_COUNTER_RAWCOUNT_HEX",
            Self::LargeRawcountHex => "PERF_COUNTER_LARGE_RAWCOUNT_HEX",
            Self::Text => "PERF_COUNTER_TEXT",
            Self::Rawcount => "PERF_COUNTER_RAWCOUNT",
            Self::LargeRawcount => "PERF_COUNTER_LARGE_RAWCOUNT",
            Self::Delta => "PERF_COUNTER_DELTA",
            Self::LargeDelta => "PERF_COUNTER_LARGE_DELTA",
            Self::SampleCounter => "PERF_SAMPLE_COUNTER",
            Self::Counter => "PERF_COUNTER_COUNTER",
            Self::BulkCount => "PERF_COUNTER_BULK_COUNT",
            Self::Queuelen => "PERF_COUNTER_QUEUELEN_TYPE",
            Self::LargeQueuelen => "PERF_COUNTER_LARGE_QUEUELEN_TYPE",
            Self::Queuelen100ns => "PERF_COUNTER_100NS_QUEUELEN_TYPE",
            Self::ObjTimeQueuelen => "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE",
            Self::Timer => "PERF_COUNTER_TIMER",
            Self::TimerInv => "PERF_COUNTER_TIMER_INV",
            Self::Timer100ns => "PERF_100NSEC_TIMER",
            Self::Timer100nsInv => "PERF_100NSEC_TIMER_INV",
            Self::ObjTimeTimer => "PERF_OBJ_TIME_TIMER",
            Self::PrecisionSystemTimer => "PERF_PRECISION_SYSTEM_TIMER",
            Self::Precision100nsTimer => "PERF_PRECISION_100NS_TIMER",
            Self::PrecisionObjectTimer => "PERF_PRECISION_OBJECT_TIMER",
            Self::MultiTimer => "PERF_COUNTER_MULTI_TIMER",
            Self::MultiTimerInv => "PERF_COUNTER_MULTI_TIMER_INV",
            Self::MultiTimer100ns => "PERF_100NSEC_MULTI_TIMER",
            Self::MultiTimer100nsInv => "PERF_100NSEC_MULTI_TIMER_INV",
            Self::MultiBase => "PERF_COUNTER_MULTI_BASE",
            Self::RawFraction => "PERF_RAW_FRACTION",
            Self::LargeRawFraction => "PERF_LARGE_RAW_FRACTION",
            Self::RawBase => "PERF_RAW_BASE",
            Self::LargeRawBase => "PERF_LARGE_RAW_BASE",
            Self::SampleFraction => "PERF_SAMPLE_FRACTION",
            Self::SampleBase => "PERF_SAMPLE_BASE",
            Self::AverageTimer => "PERF_AVERAGE_TIMER",
            Self::AverageBulk => "PERF_AVERAGE_BULK",
            Self::AverageBase => "PERF_AVERAGE_BASE",
            Self::ElapsedTime => "PERF_ELAPSED_TIME",
            Self::NoData => "PERF_COUNTER_NODATA",
            Self::Histogram => "PERF_COUNTER_HISTOGRAM_TYPE",
            Self::Unknown(_) => "UNKNOWN",
        }
    }

    /// The name of this type in a counter manifest's `type` attribute, such as
    /// `"perf_counter_rawcount"` (see [`MANIFEST_TYPE_NAMES`]).
    ///
    /// `None` for [`CounterType::NoData`], [`CounterType::Histogram`] and unknown types,
    /// which the manifest schema cannot express.
    pub const fn manifest_name(self) -> Option<&'static str> {
        match self.canonical() {
            Self::NoData | Self::Histogram | Self::Unknown(_) => None,
            // The schema's names are the lower-case `winperf.h` names; the test module checks
            // this table against MANIFEST_TYPE_NAMES.
            Self::RawcountHex => Some("perf_counter_rawcount_hex"),
            Self::LargeRawcountHex => Some("perf_counter_large_rawcount_hex"),
            Self::Text => Some("perf_counter_text"),
            Self::Rawcount => Some("perf_counter_rawcount"),
            Self::LargeRawcount => Some("perf_counter_large_rawcount"),
            Self::Delta => Some("perf_counter_delta"),
            Self::LargeDelta => Some("perf_counter_large_delta"),
            Self::SampleCounter => Some("perf_sample_counter"),
            Self::Counter => Some("perf_counter_counter"),
            Self::BulkCount => Some("perf_counter_bulk_count"),
            Self::Queuelen => Some("perf_counter_queuelen_type"),
            Self::LargeQueuelen => Some("perf_counter_large_queuelen_type"),
            Self::Queuelen100ns => Some("perf_counter_100ns_queuelen_type"),
            Self::ObjTimeQueuelen => Some("perf_counter_obj_time_queuelen_type"),
            Self::Timer => Some("perf_counter_timer"),
            Self::TimerInv => Some("perf_counter_timer_inv"),
            Self::Timer100ns => Some("perf_100nsec_timer"),
            Self::Timer100nsInv => Some("perf_100nsec_timer_inv"),
            Self::ObjTimeTimer => Some("perf_obj_time_timer"),
            Self::PrecisionSystemTimer => Some("perf_precision_system_timer"),
            Self::Precision100nsTimer => Some("perf_precision_100ns_timer"),
            Self::PrecisionObjectTimer => Some("perf_precision_object_timer"),
            Self::MultiTimer => Some("perf_counter_multi_timer"),
            Self::MultiTimerInv => Some("perf_counter_multi_timer_inv"),
            Self::MultiTimer100ns => Some("perf_100nsec_multi_timer"),
            Self::MultiTimer100nsInv => Some("perf_100nsec_multi_timer_inv"),
            Self::MultiBase => Some("perf_counter_multi_base"),
            Self::RawFraction => Some("perf_raw_fraction"),
            Self::LargeRawFraction => Some("perf_large_raw_fraction"),
            Self::RawBase => Some("perf_raw_base"),
            Self::LargeRawBase => Some("perf_large_raw_base"),
            Self::SampleFraction => Some("perf_sample_fraction"),
            Self::SampleBase => Some("perf_sample_base"),
            Self::AverageTimer => Some("perf_average_timer"),
            Self::AverageBulk => Some("perf_average_bulk"),
            Self::AverageBase => Some("perf_average_base"),
            Self::ElapsedTime => Some("perf_elapsed_time"),
        }
    }

    /// The counter type a manifest `type` attribute names, or `None`.
    ///
    /// Matching is exact, as in the schema: names are case-sensitive and lower case, so
    /// `"PERF_COUNTER_RAWCOUNT"` gives `None`. `"perf_counter_composite"` is valid in the
    /// schema but has no `winperf.h` value, so it also gives `None`; check
    /// [`MANIFEST_SCHEMA_TYPE_NAMES`] to tell it apart from a misspelling.
    pub fn from_manifest_name(name: &str) -> Option<Self> {
        MANIFEST_TYPE_NAMES
            .iter()
            .find(|(candidate, _)| *candidate == name)
            .map(|&(_, ty)| ty)
    }
}

impl From<u32> for CounterType {
    fn from(raw: u32) -> Self {
        Self::from_raw(raw)
    }
}

impl From<CounterType> for u32 {
    fn from(ty: CounterType) -> Self {
        ty.raw()
    }
}

/// The detail level of an object or counter (`DetailLevel` / `DefaultDetailLevel`,
/// `PERF_DETAIL_*`): who the counter is meant for.
///
/// Lossless like [`CounterType`]: values other than 100, 200, 300 and 400 are kept in
/// [`DetailLevel::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DetailLevel {
    /// `PERF_DETAIL_NOVICE` (100); a manifest's `standard`.
    Novice,
    /// `PERF_DETAIL_ADVANCED` (200); a manifest's `advanced`.
    Advanced,
    /// `PERF_DETAIL_EXPERT` (300).
    Expert,
    /// `PERF_DETAIL_WIZARD` (400).
    Wizard,
    /// Any other value, kept as it came.
    Unknown(u32),
}

impl DetailLevel {
    /// The detail level for a raw value; `from_raw(x).raw() == x` for every `x`.
    pub const fn from_raw(raw: u32) -> Self {
        match raw {
            100 => Self::Novice,
            200 => Self::Advanced,
            300 => Self::Expert,
            400 => Self::Wizard,
            other => Self::Unknown(other),
        }
    }

    /// The raw value, as written in `PERF_OBJECT_TYPE` or `PERF_COUNTER_DEFINITION`.
    pub const fn raw(self) -> u32 {
        match self {
            Self::Novice => 100,
            Self::Advanced => 200,
            Self::Expert => 300,
            Self::Wizard => 400,
            Self::Unknown(raw) => raw,
        }
    }

    /// The detail level a manifest `detailLevel` attribute names: `standard` is
    /// [`DetailLevel::Novice`] and `advanced` is [`DetailLevel::Advanced`]; anything else
    /// (including other capitalisations, since the schema is case-sensitive) gives `None`.
    pub fn from_manifest_name(name: &str) -> Option<Self> {
        match name {
            "standard" => Some(Self::Novice),
            "advanced" => Some(Self::Advanced),
            _ => None,
        }
    }

    /// The manifest `detailLevel` name for this level: `Some("standard")` for
    /// [`DetailLevel::Novice`], `Some("advanced")` for [`DetailLevel::Advanced`], `None`
    /// otherwise (the schema has no other names).
    pub const fn manifest_name(self) -> Option<&'static str> {
        match Self::from_raw(self.raw()) {
            Self::Novice => Some("standard"),
            Self::Advanced => Some("advanced"),
            _ => None,
        }
    }
}

impl From<u32> for DetailLevel {
    fn from(raw: u32) -> Self {
        Self::from_raw(raw)
    }
}

impl From<DetailLevel> for u32 {
    fn from(level: DetailLevel) -> Self {
        level.raw()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::collections::HashSet;
    use std::vec::Vec;
    use windows_sys::Win32::System::Performance as ws;

    // Bit-field constants of winperf.h, written out again here (`docs/counter-types.md`) so the
    // composition test does not depend on the module's own constants.
    const PERF_SIZE_DWORD: u32 = 0x0000_0000;
    const PERF_SIZE_LARGE: u32 = 0x0000_0100;
    const PERF_SIZE_ZERO: u32 = 0x0000_0200;
    const PERF_SIZE_VARIABLE_LEN: u32 = 0x0000_0300;
    const PERF_TYPE_NUMBER: u32 = 0x0000_0000;
    const PERF_TYPE_COUNTER: u32 = 0x0000_0400;
    const PERF_TYPE_TEXT: u32 = 0x0000_0800;
    const PERF_TYPE_ZERO: u32 = 0x0000_0C00;
    const PERF_NUMBER_HEX: u32 = 0x0000_0000;
    const PERF_NUMBER_DECIMAL: u32 = 0x0001_0000;
    const PERF_NUMBER_DEC_1000: u32 = 0x0002_0000;
    const PERF_COUNTER_VALUE: u32 = 0x0000_0000;
    const PERF_COUNTER_RATE: u32 = 0x0001_0000;
    const PERF_COUNTER_FRACTION: u32 = 0x0002_0000;
    const PERF_COUNTER_BASE: u32 = 0x0003_0000;
    const PERF_COUNTER_ELAPSED: u32 = 0x0004_0000;
    const PERF_COUNTER_QUEUELEN: u32 = 0x0005_0000;
    const PERF_COUNTER_HISTOGRAM: u32 = 0x0006_0000;
    const PERF_COUNTER_PRECISION: u32 = 0x0007_0000;
    const PERF_TEXT_UNICODE: u32 = 0x0000_0000;
    const PERF_TEXT_ASCII: u32 = 0x0001_0000;
    const PERF_TIMER_TICK: u32 = 0x0000_0000;
    const PERF_TIMER_100NS: u32 = 0x0010_0000;
    const PERF_OBJECT_TIMER: u32 = 0x0020_0000;
    const PERF_DELTA_COUNTER: u32 = 0x0040_0000;
    const PERF_DELTA_BASE: u32 = 0x0080_0000;
    const PERF_INVERSE_COUNTER: u32 = 0x0100_0000;
    const PERF_MULTI_COUNTER: u32 = 0x0200_0000;
    const PERF_DISPLAY_NO_SUFFIX: u32 = 0x0000_0000;
    const PERF_DISPLAY_PER_SEC: u32 = 0x1000_0000;
    const PERF_DISPLAY_PERCENT: u32 = 0x2000_0000;
    const PERF_DISPLAY_SECONDS: u32 = 0x3000_0000;
    const PERF_DISPLAY_NOSHOW: u32 = 0x4000_0000;

    /// The named types of `docs/counter-types.md`, written out literally: type, hex value,
    /// winperf.h name.
    const TABLE: [(CounterType, u32, &str); 39] = [
        (
            CounterType::RawcountHex,
            0x0000_0000,
            "PERF_COUNTER_RAWCOUNT_HEX",
        ),
        (
            CounterType::LargeRawcountHex,
            0x0000_0100,
            "PERF_COUNTER_LARGE_RAWCOUNT_HEX",
        ),
        (CounterType::Text, 0x0000_0B00, "PERF_COUNTER_TEXT"),
        (CounterType::Rawcount, 0x0001_0000, "PERF_COUNTER_RAWCOUNT"),
        (
            CounterType::LargeRawcount,
            0x0001_0100,
            "PERF_COUNTER_LARGE_RAWCOUNT",
        ),
        (CounterType::Delta, 0x0040_0400, "PERF_COUNTER_DELTA"),
        (
            CounterType::LargeDelta,
            0x0040_0500,
            "PERF_COUNTER_LARGE_DELTA",
        ),
        (
            CounterType::SampleCounter,
            0x0041_0400,
            "PERF_SAMPLE_COUNTER",
        ),
        (CounterType::Counter, 0x1041_0400, "PERF_COUNTER_COUNTER"),
        (
            CounterType::BulkCount,
            0x1041_0500,
            "PERF_COUNTER_BULK_COUNT",
        ),
        (
            CounterType::Queuelen,
            0x0045_0400,
            "PERF_COUNTER_QUEUELEN_TYPE",
        ),
        (
            CounterType::LargeQueuelen,
            0x0045_0500,
            "PERF_COUNTER_LARGE_QUEUELEN_TYPE",
        ),
        (
            CounterType::Queuelen100ns,
            0x0055_0500,
            "PERF_COUNTER_100NS_QUEUELEN_TYPE",
        ),
        (
            CounterType::ObjTimeQueuelen,
            0x0065_0500,
            "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE",
        ),
        (CounterType::Timer, 0x2041_0500, "PERF_COUNTER_TIMER"),
        (CounterType::TimerInv, 0x2141_0500, "PERF_COUNTER_TIMER_INV"),
        (CounterType::Timer100ns, 0x2051_0500, "PERF_100NSEC_TIMER"),
        (
            CounterType::Timer100nsInv,
            0x2151_0500,
            "PERF_100NSEC_TIMER_INV",
        ),
        (
            CounterType::ObjTimeTimer,
            0x2061_0500,
            "PERF_OBJ_TIME_TIMER",
        ),
        (
            CounterType::PrecisionSystemTimer,
            0x2047_0500,
            "PERF_PRECISION_SYSTEM_TIMER",
        ),
        (
            CounterType::Precision100nsTimer,
            0x2057_0500,
            "PERF_PRECISION_100NS_TIMER",
        ),
        (
            CounterType::PrecisionObjectTimer,
            0x2067_0500,
            "PERF_PRECISION_OBJECT_TIMER",
        ),
        (
            CounterType::MultiTimer,
            0x2241_0500,
            "PERF_COUNTER_MULTI_TIMER",
        ),
        (
            CounterType::MultiTimerInv,
            0x2341_0500,
            "PERF_COUNTER_MULTI_TIMER_INV",
        ),
        (
            CounterType::MultiTimer100ns,
            0x2251_0500,
            "PERF_100NSEC_MULTI_TIMER",
        ),
        (
            CounterType::MultiTimer100nsInv,
            0x2351_0500,
            "PERF_100NSEC_MULTI_TIMER_INV",
        ),
        (
            CounterType::MultiBase,
            0x4203_0500,
            "PERF_COUNTER_MULTI_BASE",
        ),
        (CounterType::RawFraction, 0x2002_0400, "PERF_RAW_FRACTION"),
        (
            CounterType::LargeRawFraction,
            0x2002_0500,
            "PERF_LARGE_RAW_FRACTION",
        ),
        (CounterType::RawBase, 0x4003_0403, "PERF_RAW_BASE"),
        (
            CounterType::LargeRawBase,
            0x4003_0500,
            "PERF_LARGE_RAW_BASE",
        ),
        (
            CounterType::SampleFraction,
            0x20C2_0400,
            "PERF_SAMPLE_FRACTION",
        ),
        (CounterType::SampleBase, 0x4003_0401, "PERF_SAMPLE_BASE"),
        (CounterType::AverageTimer, 0x3002_0400, "PERF_AVERAGE_TIMER"),
        (CounterType::AverageBulk, 0x4002_0500, "PERF_AVERAGE_BULK"),
        (CounterType::AverageBase, 0x4003_0402, "PERF_AVERAGE_BASE"),
        (CounterType::ElapsedTime, 0x3024_0500, "PERF_ELAPSED_TIME"),
        (CounterType::NoData, 0x4000_0200, "PERF_COUNTER_NODATA"),
        (
            CounterType::Histogram,
            0x8000_0000,
            "PERF_COUNTER_HISTOGRAM_TYPE",
        ),
    ];

    /// Each type's value recomposed from its winperf.h definition in bit fields.
    const COMPOSED: [(CounterType, u32); 39] = [
        (
            CounterType::RawcountHex,
            PERF_SIZE_DWORD | PERF_TYPE_NUMBER | PERF_NUMBER_HEX | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::LargeRawcountHex,
            PERF_SIZE_LARGE | PERF_TYPE_NUMBER | PERF_NUMBER_HEX | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::Text,
            PERF_SIZE_VARIABLE_LEN | PERF_TYPE_TEXT | PERF_TEXT_UNICODE | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::Rawcount,
            PERF_SIZE_DWORD | PERF_TYPE_NUMBER | PERF_NUMBER_DECIMAL | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::LargeRawcount,
            PERF_SIZE_LARGE | PERF_TYPE_NUMBER | PERF_NUMBER_DECIMAL | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::Delta,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_VALUE
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::LargeDelta,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_VALUE
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::SampleCounter,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::Counter,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PER_SEC,
        ),
        (
            CounterType::BulkCount,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PER_SEC,
        ),
        (
            CounterType::Queuelen,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_QUEUELEN
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::LargeQueuelen,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_QUEUELEN
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::Queuelen100ns,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_QUEUELEN
                | PERF_TIMER_100NS
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::ObjTimeQueuelen,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_QUEUELEN
                | PERF_OBJECT_TIMER
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_NO_SUFFIX,
        ),
        (
            CounterType::Timer,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::TimerInv,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT
                | PERF_INVERSE_COUNTER,
        ),
        (
            CounterType::Timer100ns,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_100NS
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::Timer100nsInv,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_TIMER_100NS
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT
                | PERF_INVERSE_COUNTER,
        ),
        (
            CounterType::ObjTimeTimer,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_OBJECT_TIMER
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::PrecisionSystemTimer,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_PRECISION
                | PERF_TIMER_TICK
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::Precision100nsTimer,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_PRECISION
                | PERF_TIMER_100NS
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::PrecisionObjectTimer,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_PRECISION
                | PERF_OBJECT_TIMER
                | PERF_DELTA_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::MultiTimer,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_DELTA_COUNTER
                | PERF_TIMER_TICK
                | PERF_MULTI_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::MultiTimerInv,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_DELTA_COUNTER
                | PERF_TIMER_TICK
                | PERF_MULTI_COUNTER
                | PERF_DISPLAY_PERCENT
                | PERF_INVERSE_COUNTER,
        ),
        (
            CounterType::MultiTimer100ns,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_DELTA_COUNTER
                | PERF_TIMER_100NS
                | PERF_MULTI_COUNTER
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::MultiTimer100nsInv,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_RATE
                | PERF_DELTA_COUNTER
                | PERF_TIMER_100NS
                | PERF_MULTI_COUNTER
                | PERF_DISPLAY_PERCENT
                | PERF_INVERSE_COUNTER,
        ),
        (
            CounterType::MultiBase,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_BASE
                | PERF_MULTI_COUNTER
                | PERF_DISPLAY_NOSHOW,
        ),
        (
            CounterType::RawFraction,
            PERF_SIZE_DWORD | PERF_TYPE_COUNTER | PERF_COUNTER_FRACTION | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::LargeRawFraction,
            PERF_SIZE_LARGE | PERF_TYPE_COUNTER | PERF_COUNTER_FRACTION | PERF_DISPLAY_PERCENT,
        ),
        // The DWORD bases are told apart by a small number in the low byte.
        (
            CounterType::RawBase,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_BASE
                | PERF_DISPLAY_NOSHOW
                | 0x0000_0003,
        ),
        (
            CounterType::LargeRawBase,
            PERF_SIZE_LARGE | PERF_TYPE_COUNTER | PERF_COUNTER_BASE | PERF_DISPLAY_NOSHOW,
        ),
        (
            CounterType::SampleFraction,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_FRACTION
                | PERF_DELTA_COUNTER
                | PERF_DELTA_BASE
                | PERF_DISPLAY_PERCENT,
        ),
        (
            CounterType::SampleBase,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_BASE
                | PERF_DISPLAY_NOSHOW
                | 0x0000_0001,
        ),
        (
            CounterType::AverageTimer,
            PERF_SIZE_DWORD | PERF_TYPE_COUNTER | PERF_COUNTER_FRACTION | PERF_DISPLAY_SECONDS,
        ),
        (
            CounterType::AverageBulk,
            PERF_SIZE_LARGE | PERF_TYPE_COUNTER | PERF_COUNTER_FRACTION | PERF_DISPLAY_NOSHOW,
        ),
        (
            CounterType::AverageBase,
            PERF_SIZE_DWORD
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_BASE
                | PERF_DISPLAY_NOSHOW
                | 0x0000_0002,
        ),
        (
            CounterType::ElapsedTime,
            PERF_SIZE_LARGE
                | PERF_TYPE_COUNTER
                | PERF_COUNTER_ELAPSED
                | PERF_OBJECT_TIMER
                | PERF_DISPLAY_SECONDS,
        ),
        (CounterType::NoData, PERF_SIZE_ZERO | PERF_DISPLAY_NOSHOW),
        // winperf.h defines the histogram type as a bare high bit.
        (CounterType::Histogram, 0x8000_0000),
    ];

    #[test]
    fn values_match_reference_table() {
        for (ty, value, name) in TABLE {
            assert_eq!(ty.raw(), value, "{name}");
            assert_eq!(CounterType::from_raw(value), ty, "{name}");
            assert_eq!(ty.name(), name);
            assert!(ty.is_known(), "{name}");
        }
    }

    #[test]
    fn values_match_bit_field_composition() {
        for ((ty, value), listed) in COMPOSED.into_iter().zip(ALL) {
            assert_eq!(ty, listed);
            assert_eq!(ty.raw(), value, "{}", ty.name());
        }
        // PERF_PRECISION_TIMESTAMP is defined as PERF_LARGE_RAW_BASE.
        let precision_timestamp =
            PERF_SIZE_LARGE | PERF_TYPE_COUNTER | PERF_COUNTER_BASE | PERF_DISPLAY_NOSHOW;
        assert_eq!(
            CounterType::from_raw(precision_timestamp),
            CounterType::LargeRawBase
        );
    }

    #[test]
    fn all_lists_every_named_type_once() {
        assert_eq!(ALL.len(), TABLE.len());
        assert_eq!(CounterType::ALL, ALL);
        for ((listed, _, _), ty) in TABLE.iter().zip(ALL) {
            assert_eq!(*listed, ty);
        }
        let raws: HashSet<u32> = ALL.iter().map(|t| t.raw()).collect();
        assert_eq!(raws.len(), ALL.len());
        let names: HashSet<&str> = ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names.len(), ALL.len());
        assert!(!names.contains("UNKNOWN"));
    }

    #[test]
    fn raw_round_trips_for_any_u32() {
        let mut samples: Vec<u32> = std::vec![
            0,
            1,
            2,
            0xFF,
            0x0000_0300,
            0x0000_0C00,
            0x4003_0503,
            0x7FFF_FFFF,
            0x8000_0001,
            0xF000_0000,
            0xFFFF_FFFE,
            0xFFFF_FFFF,
        ];
        for ty in ALL {
            let raw = ty.raw();
            samples.extend([
                raw.wrapping_sub(1),
                raw,
                raw.wrapping_add(1),
                raw ^ 0x0000_0003,
            ]);
        }
        // A spread over the whole range.
        samples.extend((0..=u32::MAX).step_by(65_521));
        for raw in samples {
            let ty = CounterType::from_raw(raw);
            assert_eq!(ty.raw(), raw, "{raw:#010x}");
            assert_eq!(u32::from(CounterType::from(raw)), raw);
            if !ty.is_known() {
                assert_eq!(ty, CounterType::Unknown(raw));
                assert_eq!(ty.name(), "UNKNOWN");
                assert_eq!(ty.manifest_name(), None);
            }
        }
    }

    #[test]
    fn wmi_large_raw_base_is_unknown() {
        let ty = CounterType::from_raw(WMI_LARGE_RAW_BASE);
        assert_eq!(ty, CounterType::Unknown(0x4003_0503));
        assert!(!ty.is_known());
        // Its bit fields still read as a 64-bit base.
        assert!(ty.is_base());
        assert_eq!(ty.size(), Some(8));
        assert_eq!(ty.display_suffix(), DisplaySuffix::NoShow);
        assert_eq!(
            CounterType::from_raw(0x4003_0500),
            CounterType::LargeRawBase
        );
    }

    #[test]
    fn hand_built_unknown_of_named_value_behaves_like_the_variant() {
        for ty in ALL {
            let unknown = CounterType::Unknown(ty.raw());
            assert!(unknown.is_known());
            assert_eq!(unknown.name(), ty.name());
            assert_eq!(unknown.manifest_name(), ty.manifest_name());
            assert_eq!(unknown.required_base(), ty.required_base());
            assert_eq!(unknown.required_follower(), ty.required_follower());
            assert_eq!(unknown.time_base(), ty.time_base());
            assert_eq!(unknown.needs_two_samples(), ty.needs_two_samples());
            assert_eq!(unknown.size(), ty.size());
        }
    }

    #[test]
    fn manifest_schema_has_38_distinct_names() {
        assert_eq!(MANIFEST_SCHEMA_TYPE_NAMES.len(), 38);
        let names: HashSet<&str> = MANIFEST_SCHEMA_TYPE_NAMES.iter().copied().collect();
        assert_eq!(names.len(), 38);
        // All but perf_counter_composite map to a type, in schema order.
        let mapped: Vec<&str> = MANIFEST_TYPE_NAMES.iter().map(|(n, _)| *n).collect();
        let expected: Vec<&str> = MANIFEST_SCHEMA_TYPE_NAMES
            .iter()
            .copied()
            .filter(|n| *n != "perf_counter_composite")
            .collect();
        assert_eq!(mapped, expected);
        assert_eq!(
            CounterType::from_manifest_name("perf_counter_composite"),
            None
        );
        let types: HashSet<CounterType> = MANIFEST_TYPE_NAMES.iter().map(|(_, t)| *t).collect();
        assert_eq!(types.len(), MANIFEST_TYPE_NAMES.len());
    }

    #[test]
    fn manifest_names_round_trip() {
        let mut with_name = 0;
        for ty in ALL {
            match ty.manifest_name() {
                Some(name) => {
                    with_name += 1;
                    assert_eq!(CounterType::from_manifest_name(name), Some(ty));
                    // The schema spells the winperf.h name in lower case.
                    assert_eq!(name, ty.name().to_ascii_lowercase());
                }
                None => assert!(
                    matches!(ty, CounterType::NoData | CounterType::Histogram),
                    "{}",
                    ty.name()
                ),
            }
        }
        assert_eq!(with_name, MANIFEST_TYPE_NAMES.len());
        for (name, ty) in MANIFEST_TYPE_NAMES {
            assert_eq!(ty.manifest_name(), Some(name));
        }
    }

    #[test]
    fn manifest_names_match_exactly() {
        assert_eq!(
            CounterType::from_manifest_name("perf_counter_rawcount"),
            Some(CounterType::Rawcount)
        );
        assert_eq!(
            CounterType::from_manifest_name("perf_counter_bulk_count"),
            Some(CounterType::BulkCount)
        );
        assert_eq!(
            CounterType::from_manifest_name("perf_precision_100ns_timer"),
            Some(CounterType::Precision100nsTimer)
        );
        assert_eq!(
            CounterType::from_manifest_name("PERF_COUNTER_RAWCOUNT"),
            None
        );
        assert_eq!(
            CounterType::from_manifest_name("Perf_Counter_Rawcount"),
            None
        );
        assert_eq!(
            CounterType::from_manifest_name(" perf_counter_rawcount"),
            None
        );
        assert_eq!(CounterType::from_manifest_name("perf_counter_nodata"), None);
        assert_eq!(CounterType::from_manifest_name(""), None);
    }

    #[test]
    fn pinned_sizes() {
        use CounterType as T;

        assert_eq!(T::Rawcount.size(), Some(4));
        assert_eq!(T::LargeRawcount.size(), Some(8));
        assert_eq!(T::AverageTimer.size(), Some(4));
        assert_eq!(T::NoData.size(), Some(0));
        assert_eq!(T::Text.size(), None);
        assert_eq!(T::Unknown(0x0000_0300).size(), None);
        assert_eq!(T::Unknown(0x0000_0100).size(), Some(8));
    }

    #[test]
    fn bases_and_followers() {
        use CounterType as T;

        let bases: Vec<T> = ALL.iter().copied().filter(|t| t.is_base()).collect();
        assert_eq!(
            bases,
            [
                T::MultiBase,
                T::RawBase,
                T::LargeRawBase,
                T::SampleBase,
                T::AverageBase
            ]
        );

        assert_eq!(T::AverageTimer.required_base(), Some(T::AverageBase));
        assert_eq!(T::AverageBulk.required_base(), Some(T::AverageBase));
        assert_eq!(T::RawFraction.required_base(), Some(T::RawBase));
        assert_eq!(T::LargeRawFraction.required_base(), Some(T::LargeRawBase));
        assert_eq!(T::SampleFraction.required_base(), Some(T::SampleBase));
        for multi in [
            T::MultiTimer,
            T::MultiTimerInv,
            T::MultiTimer100ns,
            T::MultiTimer100nsInv,
        ] {
            assert_eq!(multi.required_base(), Some(T::MultiBase));
            assert_eq!(multi.required_follower(), Some(T::MultiBase));
            assert!(multi.is_multi());
        }
        for precision in [
            T::PrecisionSystemTimer,
            T::Precision100nsTimer,
            T::PrecisionObjectTimer,
        ] {
            assert_eq!(precision.required_base(), None);
            assert_eq!(precision.required_follower(), Some(T::LargeRawBase));
            assert_eq!(precision.time_base(), TimeBase::FollowingCounter);
        }
        assert_eq!(T::Counter.required_base(), None);
        assert_eq!(T::Counter.required_follower(), None);
        assert_eq!(T::Unknown(0x1234_5678).required_follower(), None);
        // Every required base or follower is a base type.
        for ty in ALL {
            if let Some(follower) = ty.required_follower() {
                assert!(follower.is_base(), "{}", ty.name());
            }
        }
    }

    #[test]
    fn time_bases() {
        use CounterType as T;

        assert_eq!(T::Counter.time_base(), TimeBase::PerfTime);
        assert_eq!(T::SampleCounter.time_base(), TimeBase::PerfTime);
        assert_eq!(T::Timer100ns.time_base(), TimeBase::PerfTime100ns);
        assert_eq!(T::Queuelen100ns.time_base(), TimeBase::PerfTime100ns);
        assert_eq!(T::ObjTimeTimer.time_base(), TimeBase::ObjectTime);
        assert_eq!(T::ElapsedTime.time_base(), TimeBase::ObjectTime);
        assert_eq!(T::AverageTimer.time_base(), TimeBase::None);
        assert_eq!(T::RawFraction.time_base(), TimeBase::None);
        assert_eq!(T::Unknown(0x2047_0501).time_base(), TimeBase::None);
        // Where the formula uses a system time, the timer field agrees with it.
        for ty in ALL {
            match ty.time_base() {
                TimeBase::PerfTime => assert_eq!(ty.timer_bits(), PERF_TIMER_TICK),
                TimeBase::PerfTime100ns => assert_eq!(ty.timer_bits(), PERF_TIMER_100NS),
                TimeBase::ObjectTime => assert_eq!(ty.timer_bits(), PERF_OBJECT_TIMER),
                TimeBase::FollowingCounter => {
                    assert_eq!(ty.subtype_bits(), PERF_COUNTER_PRECISION);
                }
                TimeBase::None => {}
            }
        }
    }

    #[test]
    fn display_suffixes_and_bits() {
        use CounterType as T;

        assert_eq!(T::Counter.display_suffix(), DisplaySuffix::PerSec);
        assert_eq!(T::Timer.display_suffix(), DisplaySuffix::Percent);
        assert_eq!(T::ElapsedTime.display_suffix(), DisplaySuffix::Seconds);
        assert_eq!(T::AverageTimer.display_suffix(), DisplaySuffix::Seconds);
        assert_eq!(T::AverageBulk.display_suffix(), DisplaySuffix::NoShow);
        assert_eq!(T::Rawcount.display_suffix(), DisplaySuffix::None);
        assert_eq!(T::Histogram.display_suffix(), DisplaySuffix::None);
        assert_eq!(T::Histogram.display_bits(), 0x8000_0000);

        assert!(T::TimerInv.is_inverse());
        assert!(!T::Timer.is_inverse());
        assert!(T::SampleFraction.is_delta_counter());
        assert!(T::SampleFraction.is_delta_base());
        assert!(!T::AverageTimer.is_delta_counter());
        assert_eq!(T::Text.type_bits(), PERF_TYPE_TEXT);
        assert_eq!(T::Text.size_bits(), PERF_SIZE_VARIABLE_LEN);
        assert_eq!(T::NoData.type_bits(), PERF_TYPE_NUMBER);
        assert_eq!(T::Unknown(0x0000_0C00).type_bits(), PERF_TYPE_ZERO);
        assert_eq!(T::LargeRawcount.subtype_bits(), PERF_NUMBER_DECIMAL);
        assert_eq!(
            T::Unknown(PERF_TYPE_NUMBER | PERF_NUMBER_DEC_1000).subtype_bits(),
            PERF_NUMBER_DEC_1000
        );
        assert_eq!(
            T::Unknown(PERF_TYPE_TEXT | PERF_TEXT_ASCII | PERF_SIZE_VARIABLE_LEN).subtype_bits(),
            PERF_TEXT_ASCII
        );
        assert_eq!(
            T::Unknown(PERF_TYPE_COUNTER | PERF_COUNTER_HISTOGRAM).subtype_bits(),
            PERF_COUNTER_HISTOGRAM
        );
    }

    #[test]
    fn two_samples() {
        use CounterType as T;
        let two = [
            T::Delta,
            T::LargeDelta,
            T::SampleCounter,
            T::Counter,
            T::BulkCount,
            T::Queuelen,
            T::LargeQueuelen,
            T::Queuelen100ns,
            T::ObjTimeQueuelen,
            T::Timer,
            T::TimerInv,
            T::Timer100ns,
            T::Timer100nsInv,
            T::ObjTimeTimer,
            T::PrecisionSystemTimer,
            T::Precision100nsTimer,
            T::PrecisionObjectTimer,
            T::MultiTimer,
            T::MultiTimerInv,
            T::MultiTimer100ns,
            T::MultiTimer100nsInv,
            T::SampleFraction,
            T::AverageTimer,
            T::AverageBulk,
        ];
        let one = [
            T::RawcountHex,
            T::LargeRawcountHex,
            T::Text,
            T::Rawcount,
            T::LargeRawcount,
            T::MultiBase,
            T::RawFraction,
            T::LargeRawFraction,
            T::RawBase,
            T::LargeRawBase,
            T::SampleBase,
            T::AverageBase,
            T::ElapsedTime,
            T::NoData,
            T::Histogram,
        ];
        assert_eq!(two.len() + one.len(), ALL.len());
        for ty in two {
            assert!(ty.needs_two_samples(), "{}", ty.name());
        }
        for ty in one {
            assert!(!ty.needs_two_samples(), "{}", ty.name());
        }
        assert!(T::Unknown(0x0040_0401).needs_two_samples());
        assert!(!T::Unknown(0x0000_0001).needs_two_samples());
    }

    #[test]
    fn windows_sys_agrees() {
        // windows-sys 0.61.2 has the bit fields, the detail levels and the histogram type;
        // the composite types are C macros it does not carry.
        assert_eq!(
            ws::PERF_COUNTER_HISTOGRAM_TYPE,
            CounterType::Histogram.raw()
        );
        let fields = [
            (ws::PERF_SIZE_DWORD, PERF_SIZE_DWORD),
            (ws::PERF_SIZE_LARGE, PERF_SIZE_LARGE),
            (ws::PERF_SIZE_ZERO, PERF_SIZE_ZERO),
            (ws::PERF_SIZE_VARIABLE_LEN, PERF_SIZE_VARIABLE_LEN),
            (ws::PERF_TYPE_NUMBER, PERF_TYPE_NUMBER),
            (ws::PERF_TYPE_COUNTER, PERF_TYPE_COUNTER),
            (ws::PERF_TYPE_TEXT, PERF_TYPE_TEXT),
            (ws::PERF_TYPE_ZERO, PERF_TYPE_ZERO),
            (ws::PERF_NUMBER_HEX, PERF_NUMBER_HEX),
            (ws::PERF_NUMBER_DECIMAL, PERF_NUMBER_DECIMAL),
            (ws::PERF_NUMBER_DEC_1000, PERF_NUMBER_DEC_1000),
            (ws::PERF_COUNTER_VALUE, PERF_COUNTER_VALUE),
            (ws::PERF_COUNTER_RATE, PERF_COUNTER_RATE),
            (ws::PERF_COUNTER_FRACTION, PERF_COUNTER_FRACTION),
            (ws::PERF_COUNTER_BASE, PERF_COUNTER_BASE),
            (ws::PERF_COUNTER_ELAPSED, PERF_COUNTER_ELAPSED),
            (ws::PERF_COUNTER_QUEUELEN, PERF_COUNTER_QUEUELEN),
            (ws::PERF_COUNTER_HISTOGRAM, PERF_COUNTER_HISTOGRAM),
            (ws::PERF_COUNTER_PRECISION, PERF_COUNTER_PRECISION),
            (ws::PERF_TEXT_UNICODE, PERF_TEXT_UNICODE),
            (ws::PERF_TEXT_ASCII, PERF_TEXT_ASCII),
            (ws::PERF_TIMER_TICK, PERF_TIMER_TICK),
            (ws::PERF_TIMER_100NS, PERF_TIMER_100NS),
            (ws::PERF_OBJECT_TIMER, PERF_OBJECT_TIMER),
            (ws::PERF_DELTA_COUNTER, PERF_DELTA_COUNTER),
            (ws::PERF_DELTA_BASE, PERF_DELTA_BASE),
            (ws::PERF_INVERSE_COUNTER, PERF_INVERSE_COUNTER),
            (ws::PERF_MULTI_COUNTER, PERF_MULTI_COUNTER),
            (ws::PERF_DISPLAY_NO_SUFFIX, PERF_DISPLAY_NO_SUFFIX),
            (ws::PERF_DISPLAY_PER_SEC, PERF_DISPLAY_PER_SEC),
            (ws::PERF_DISPLAY_PERCENT, PERF_DISPLAY_PERCENT),
            (ws::PERF_DISPLAY_SECONDS, PERF_DISPLAY_SECONDS),
            (ws::PERF_DISPLAY_NOSHOW, PERF_DISPLAY_NOSHOW),
        ];
        for (i, (theirs, ours)) in fields.into_iter().enumerate() {
            assert_eq!(theirs, ours, "field constant #{i}");
        }
        // The module's private constants agree too.
        assert_eq!(SIZE_LARGE, ws::PERF_SIZE_LARGE);
        assert_eq!(SIZE_ZERO, ws::PERF_SIZE_ZERO);
        assert_eq!(SUBTYPE_BASE, ws::PERF_COUNTER_BASE);
        assert_eq!(DELTA_COUNTER, ws::PERF_DELTA_COUNTER);
        assert_eq!(DELTA_BASE, ws::PERF_DELTA_BASE);
        assert_eq!(INVERSE_COUNTER, ws::PERF_INVERSE_COUNTER);
        assert_eq!(MULTI_COUNTER, ws::PERF_MULTI_COUNTER);
        assert_eq!(DISPLAY_SECONDS, ws::PERF_DISPLAY_SECONDS);

        assert_eq!(DetailLevel::Novice.raw(), ws::PERF_DETAIL_NOVICE);
        assert_eq!(DetailLevel::Advanced.raw(), ws::PERF_DETAIL_ADVANCED);
        assert_eq!(DetailLevel::Expert.raw(), ws::PERF_DETAIL_EXPERT);
        assert_eq!(DetailLevel::Wizard.raw(), ws::PERF_DETAIL_WIZARD);
    }

    #[test]
    fn detail_level() {
        assert_eq!(DetailLevel::from_raw(100), DetailLevel::Novice);
        assert_eq!(DetailLevel::from_raw(200), DetailLevel::Advanced);
        assert_eq!(DetailLevel::from_raw(300), DetailLevel::Expert);
        assert_eq!(DetailLevel::from_raw(400), DetailLevel::Wizard);
        for raw in [0, 1, 99, 101, 250, 500, u32::MAX, 100, 200, 300, 400] {
            assert_eq!(DetailLevel::from_raw(raw).raw(), raw);
            assert_eq!(u32::from(DetailLevel::from(raw)), raw);
        }
        assert_eq!(DetailLevel::from_raw(250), DetailLevel::Unknown(250));
        assert_eq!(
            DetailLevel::from_manifest_name("standard"),
            Some(DetailLevel::Novice)
        );
        assert_eq!(
            DetailLevel::from_manifest_name("advanced"),
            Some(DetailLevel::Advanced)
        );
        assert_eq!(DetailLevel::from_manifest_name("Standard"), None);
        assert_eq!(DetailLevel::from_manifest_name("novice"), None);
        assert_eq!(DetailLevel::from_manifest_name("expert"), None);
        assert_eq!(DetailLevel::Novice.manifest_name(), Some("standard"));
        assert_eq!(DetailLevel::Advanced.manifest_name(), Some("advanced"));
        assert_eq!(DetailLevel::Wizard.manifest_name(), None);
        assert_eq!(DetailLevel::Unknown(100).manifest_name(), Some("standard"));
    }
}
