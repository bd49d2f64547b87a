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

/// Declares [`CounterType`], [`ALL`], [`MANIFEST_TYPE_NAMES`] and every per-type accessor from
/// one row per named type, in the style of smoltcp's `enum_with_unknown!`.
///
/// A row is `Variant = value, "winperf.h name", manifest: name, time: D, next: counter;`:
///
/// * `value` is the raw `CounterType` value, the only place it is written; the bit-field
///   accessors (size, display suffix, delta, inverse, multi) read it.
/// * `manifest` is `Some` of the `type` attribute name in a counter manifest, or `None` when
///   the schema has no name for the type.
/// * `time` is the [`TimeBase`] variant a cooker divides by.
/// * `next` is the type the counter after this one must have, or `None`: the base the
///   formula divides by or, when `time` is `FollowingCounter`, the counter holding the time
///   value D.
///
/// The rows' doc comments document the variants, after a generated "`NAME` (`value`):".
macro_rules! counter_types {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $raw:literal, $name:literal,
            manifest: $manifest:expr, time: $time:ident, next: $next:ident;
    )*) => {
        /// A counter type: the `CounterType` field of a `PERF_COUNTER_DEFINITION`.
        ///
        /// One variant per named type of `winperf.h`, plus [`CounterType::Unknown`] for any
        /// other value. Build values with [`CounterType::from_raw`]; read them back with
        /// [`CounterType::raw`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum CounterType {
            $(
                #[doc = concat!("`", $name, "` (`", stringify!($raw), "`):")]
                $(#[doc = $doc])*
                $variant,
            )*
            /// Any value that is not one of the named types, kept as it came.
            Unknown(u32),
        }

        /// Every named [`CounterType`] (all variants but [`CounterType::Unknown`]), in the
        /// order of the table in `docs/counter-types.md`.
        pub const ALL: [CounterType; [$(stringify!($variant)),*].len()] = [$(CounterType::$variant),*];

        impl CounterType {
            /// The counter type for a raw `CounterType` value.
            ///
            /// Named values give their variant; anything else gives [`CounterType::Unknown`],
            /// so `from_raw(x).raw() == x` for every `x`. In particular
            /// `from_raw(0x40030503)` (the WMI table's value for `PERF_LARGE_RAW_BASE`, see
            /// [`WMI_LARGE_RAW_BASE`]) is `Unknown(0x40030503)`; only `0x40030500` is
            /// [`CounterType::LargeRawBase`].
            pub const fn from_raw(raw: u32) -> Self {
                match raw {
                    $($raw => Self::$variant,)*
                    other => Self::Unknown(other),
                }
            }

            /// The raw `CounterType` value, as written in a `PERF_COUNTER_DEFINITION`.
            pub const fn raw(self) -> u32 {
                match self {
                    $(Self::$variant => $raw,)*
                    Self::Unknown(raw) => raw,
                }
            }

            /// The `winperf.h` name, such as `"PERF_COUNTER_RAWCOUNT"`; `"UNKNOWN"` for an
            /// unknown type. [`CounterType::LargeRawBase`] gives `"PERF_LARGE_RAW_BASE"` (its
            /// other name is `PERF_PRECISION_TIMESTAMP`).
            pub const fn name(self) -> &'static str {
                match self.canonical() {
                    $(Self::$variant => $name,)*
                    Self::Unknown(_) => "UNKNOWN",
                }
            }

            /// The name of this type in a counter manifest's `type` attribute, such as
            /// `"perf_counter_rawcount"` (see [`MANIFEST_TYPE_NAMES`]).
            ///
            /// `None` for [`CounterType::NoData`], [`CounterType::Histogram`] and unknown
            /// types, which the manifest schema cannot express.
            pub const fn manifest_name(self) -> Option<&'static str> {
                match self.canonical() {
                    $(Self::$variant => $manifest,)*
                    Self::Unknown(_) => None,
                }
            }

            /// Which time value (D) a cooker uses for this type, per the table in
            /// `docs/counter-types.md`.
            ///
            /// Types whose formula has no D give [`TimeBase::None`]; that includes
            /// [`CounterType::AverageTimer`], which still converts ticks to seconds with
            /// `PERF_DATA_BLOCK.PerfFreq`. Unknown types give [`TimeBase::None`]: this crate
            /// does not guess formulas from bits.
            pub const fn time_base(self) -> TimeBase {
                match self.canonical() {
                    $(Self::$variant => TimeBase::$time,)*
                    Self::Unknown(_) => TimeBase::None,
                }
            }

            /// The type the next counter of a V1 object must have for this one to be
            /// cooked: the row's `next`.
            const fn next(self) -> Option<CounterType> {
                match self.canonical() {
                    $(Self::$variant => next_counter!($next),)*
                    Self::Unknown(_) => None,
                }
            }
        }
    };
}

/// A row's `next` as an `Option<CounterType>`: `None` stays `None`, a variant name `T` is
/// `Some(CounterType::T)`.
macro_rules! next_counter {
    (None) => {
        None
    };
    ($next:ident) => {
        Some(CounterType::$next)
    };
}

counter_types! {
    /// instantaneous 32-bit value shown in hex.
    RawcountHex = 0x0000_0000, "PERF_COUNTER_RAWCOUNT_HEX",
        manifest: Some("perf_counter_rawcount_hex"), time: None, next: None;
    /// instantaneous 64-bit value shown in hex.
    LargeRawcountHex = 0x0000_0100, "PERF_COUNTER_LARGE_RAWCOUNT_HEX",
        manifest: Some("perf_counter_large_rawcount_hex"), time: None, next: None;
    /// variable-length Unicode text, never cooked.
    Text = 0x0000_0B00, "PERF_COUNTER_TEXT",
        manifest: Some("perf_counter_text"), time: None, next: None;
    /// instantaneous 32-bit value.
    Rawcount = 0x0001_0000, "PERF_COUNTER_RAWCOUNT",
        manifest: Some("perf_counter_rawcount"), time: None, next: None;
    /// instantaneous 64-bit value.
    LargeRawcount = 0x0001_0100, "PERF_COUNTER_LARGE_RAWCOUNT",
        manifest: Some("perf_counter_large_rawcount"), time: None, next: None;
    /// 32-bit difference between two samples.
    Delta = 0x0040_0400, "PERF_COUNTER_DELTA",
        manifest: Some("perf_counter_delta"), time: None, next: None;
    /// 64-bit difference between two samples.
    LargeDelta = 0x0040_0500, "PERF_COUNTER_LARGE_DELTA",
        manifest: Some("perf_counter_large_delta"), time: None, next: None;
    /// 32-bit count per second of `PerfTime`, no suffix.
    SampleCounter = 0x0041_0400, "PERF_SAMPLE_COUNTER",
        manifest: Some("perf_sample_counter"), time: PerfTime, next: None;
    /// 32-bit count per second of `PerfTime`.
    Counter = 0x1041_0400, "PERF_COUNTER_COUNTER",
        manifest: Some("perf_counter_counter"), time: PerfTime, next: None;
    /// 64-bit count per second of `PerfTime`.
    BulkCount = 0x1041_0500, "PERF_COUNTER_BULK_COUNT",
        manifest: Some("perf_counter_bulk_count"), time: PerfTime, next: None;
    /// 32-bit queue length averaged over `PerfTime` ticks.
    Queuelen = 0x0045_0400, "PERF_COUNTER_QUEUELEN_TYPE",
        manifest: Some("perf_counter_queuelen_type"), time: PerfTime, next: None;
    /// 64-bit queue length averaged over `PerfTime` ticks.
    LargeQueuelen = 0x0045_0500, "PERF_COUNTER_LARGE_QUEUELEN_TYPE",
        manifest: Some("perf_counter_large_queuelen_type"), time: PerfTime, next: None;
    /// queue length averaged over `PerfTime100nSec`.
    Queuelen100ns = 0x0055_0500, "PERF_COUNTER_100NS_QUEUELEN_TYPE",
        manifest: Some("perf_counter_100ns_queuelen_type"), time: PerfTime100ns, next: None;
    /// queue length averaged over the object's `PerfTime`.
    ObjTimeQueuelen = 0x0065_0500, "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE",
        manifest: Some("perf_counter_obj_time_queuelen_type"), time: ObjectTime, next: None;
    /// percentage of `PerfTime` that was busy.
    Timer = 0x2041_0500, "PERF_COUNTER_TIMER",
        manifest: Some("perf_counter_timer"), time: PerfTime, next: None;
    /// percentage of `PerfTime` that was idle.
    TimerInv = 0x2141_0500, "PERF_COUNTER_TIMER_INV",
        manifest: Some("perf_counter_timer_inv"), time: PerfTime, next: None;
    /// percentage of 100 ns time that was busy.
    Timer100ns = 0x2051_0500, "PERF_100NSEC_TIMER",
        manifest: Some("perf_100nsec_timer"), time: PerfTime100ns, next: None;
    /// percentage of 100 ns time that was idle.
    Timer100nsInv = 0x2151_0500, "PERF_100NSEC_TIMER_INV",
        manifest: Some("perf_100nsec_timer_inv"), time: PerfTime100ns, next: None;
    /// percentage of the object's time that was busy.
    ObjTimeTimer = 0x2061_0500, "PERF_OBJ_TIME_TIMER",
        manifest: Some("perf_obj_time_timer"), time: ObjectTime, next: None;
    /// busy percentage whose time value is the following counter, in `PerfFreq` ticks.
    PrecisionSystemTimer = 0x2047_0500, "PERF_PRECISION_SYSTEM_TIMER",
        manifest: Some("perf_precision_system_timer"), time: FollowingCounter, next: LargeRawBase;
    /// busy percentage whose time value is the following counter, in 100 ns units.
    Precision100nsTimer = 0x2057_0500, "PERF_PRECISION_100NS_TIMER",
        manifest: Some("perf_precision_100ns_timer"), time: FollowingCounter, next: LargeRawBase;
    /// busy percentage whose time value is the following counter, in the object's
    /// `PerfFreq` ticks.
    PrecisionObjectTimer = 0x2067_0500, "PERF_PRECISION_OBJECT_TIMER",
        manifest: Some("perf_precision_object_timer"), time: FollowingCounter, next: LargeRawBase;
    /// busy percentage over several items, divided by a [`CounterType::MultiBase`] count.
    MultiTimer = 0x2241_0500, "PERF_COUNTER_MULTI_TIMER",
        manifest: Some("perf_counter_multi_timer"), time: PerfTime, next: MultiBase;
    /// inverse of [`CounterType::MultiTimer`].
    MultiTimerInv = 0x2341_0500, "PERF_COUNTER_MULTI_TIMER_INV",
        manifest: Some("perf_counter_multi_timer_inv"), time: PerfTime, next: MultiBase;
    /// [`CounterType::MultiTimer`] over 100 ns time.
    MultiTimer100ns = 0x2251_0500, "PERF_100NSEC_MULTI_TIMER",
        manifest: Some("perf_100nsec_multi_timer"), time: PerfTime100ns, next: MultiBase;
    /// inverse of [`CounterType::MultiTimer100ns`].
    MultiTimer100nsInv = 0x2351_0500, "PERF_100NSEC_MULTI_TIMER_INV",
        manifest: Some("perf_100nsec_multi_timer_inv"), time: PerfTime100ns, next: MultiBase;
    /// the item count of the multi-timer types.
    MultiBase = 0x4203_0500, "PERF_COUNTER_MULTI_BASE",
        manifest: Some("perf_counter_multi_base"), time: None, next: None;
    /// 32-bit numerator of a percentage whose denominator is the following
    /// [`CounterType::RawBase`].
    RawFraction = 0x2002_0400, "PERF_RAW_FRACTION",
        manifest: Some("perf_raw_fraction"), time: None, next: RawBase;
    /// 64-bit numerator of a percentage whose denominator is the following
    /// [`CounterType::LargeRawBase`].
    LargeRawFraction = 0x2002_0500, "PERF_LARGE_RAW_FRACTION",
        manifest: Some("perf_large_raw_fraction"), time: None, next: LargeRawBase;
    /// 32-bit denominator of [`CounterType::RawFraction`].
    RawBase = 0x4003_0403, "PERF_RAW_BASE",
        manifest: Some("perf_raw_base"), time: None, next: None;
    /// also spelled `PERF_PRECISION_TIMESTAMP`.
    ///
    /// The 64-bit denominator of [`CounterType::LargeRawFraction`], and the time value that
    /// follows each precision timer. The WMI table's `0x40030503` is not this variant; see
    /// [`WMI_LARGE_RAW_BASE`].
    LargeRawBase = 0x4003_0500, "PERF_LARGE_RAW_BASE",
        manifest: Some("perf_large_raw_base"), time: None, next: None;
    /// percentage of the numerator's change over the following [`CounterType::SampleBase`]'s
    /// change.
    SampleFraction = 0x20C2_0400, "PERF_SAMPLE_FRACTION",
        manifest: Some("perf_sample_fraction"), time: None, next: SampleBase;
    /// denominator of [`CounterType::SampleFraction`].
    SampleBase = 0x4003_0401, "PERF_SAMPLE_BASE",
        manifest: Some("perf_sample_base"), time: None, next: None;
    /// average time per operation, in seconds.
    ///
    /// Declared `PERF_SIZE_DWORD`, but Microsoft's cooking sample reads it as a 64-bit value
    /// (`docs/counter-types.md`): readers should honour the definition's `CounterSize`.
    AverageTimer = 0x3002_0400, "PERF_AVERAGE_TIMER",
        manifest: Some("perf_average_timer"), time: None, next: AverageBase;
    /// average count per operation.
    AverageBulk = 0x4002_0500, "PERF_AVERAGE_BULK",
        manifest: Some("perf_average_bulk"), time: None, next: AverageBase;
    /// operation count of [`CounterType::AverageTimer`] and [`CounterType::AverageBulk`].
    AverageBase = 0x4003_0402, "PERF_AVERAGE_BASE",
        manifest: Some("perf_average_base"), time: None, next: None;
    /// start time, shown as the time elapsed since it, measured against the object's
    /// `PerfTime` and `PerfFreq`.
    ElapsedTime = 0x3024_0500, "PERF_ELAPSED_TIME",
        manifest: Some("perf_elapsed_time"), time: ObjectTime, next: None;
    /// a zero-length counter with no data.
    NoData = 0x4000_0200, "PERF_COUNTER_NODATA",
        manifest: None, time: None, next: None;
    /// a histogram; not supported by the cookers.
    Histogram = 0x8000_0000, "PERF_COUNTER_HISTOGRAM_TYPE",
        manifest: None, time: None, next: None;
}

/// The manifest `type` attribute names that have a counter type, in the order of [`ALL`],
/// with the type each one stands for: every [`CounterType::manifest_name`].
///
/// These are 37 of the 38 names of [`MANIFEST_SCHEMA_TYPE_NAMES`]: all but
/// `perf_counter_composite`, which has no `winperf.h` value. The schema compares names
/// exactly (they are case-sensitive and lower case), and so does
/// [`CounterType::from_manifest_name`].
pub const MANIFEST_TYPE_NAMES: [(&str, CounterType); 37] = manifest_type_names();

/// The schema's one `type` name with no `winperf.h` value and no documented meaning.
const MANIFEST_COMPOSITE: &str = "perf_counter_composite";

/// Every value the counter manifest schema allows in a `counter` element's `type` attribute:
/// the names of [`MANIFEST_TYPE_NAMES`], then `perf_counter_composite`.
///
/// Source: the enumeration of the `type` attribute of the `counter` complex type in the
/// Performance Counters Schema (`counters` section of an instrumentation manifest, as read by
/// CTRPP), published at
/// <https://learn.microsoft.com/windows/win32/perfctrs/performance-counters-counter-complex-type>
/// and in the full schema listing of the same documentation set. Its 37 other names are the
/// lower-case spellings of named `winperf.h` types; `perf_counter_composite` maps to no
/// [`CounterType`]. Conversely, `PERF_COUNTER_NODATA` and `PERF_COUNTER_HISTOGRAM_TYPE` have
/// no manifest name.
pub const MANIFEST_SCHEMA_TYPE_NAMES: [&str; 38] = manifest_schema_type_names();

/// [`MANIFEST_TYPE_NAMES`], collected from the rows at compile time.
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated only at compile time, where an index out of bounds fails the build"
)]
const fn manifest_type_names() -> [(&'static str, CounterType); 37] {
    let mut names = [("", CounterType::Unknown(0)); 37];
    let mut filled = 0;
    let mut i = 0;
    while i < ALL.len() {
        if let Some(name) = ALL[i].manifest_name() {
            names[filled] = (name, ALL[i]);
            filled += 1;
        }
        i += 1;
    }
    assert!(filled == names.len(), "one manifest name per slot");
    names
}

/// [`MANIFEST_SCHEMA_TYPE_NAMES`], from [`MANIFEST_TYPE_NAMES`] at compile time.
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated only at compile time, where an index out of bounds fails the build"
)]
const fn manifest_schema_type_names() -> [&'static str; 38] {
    let mut names = [MANIFEST_COMPOSITE; 38];
    let mut i = 0;
    while i < MANIFEST_TYPE_NAMES.len() {
        names[i] = MANIFEST_TYPE_NAMES[i].0;
        i += 1;
    }
    names
}

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
    pub const ALL: [CounterType; ALL.len()] = ALL;

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
        match self.time_base() {
            // The next counter is the time value D, not a base.
            TimeBase::FollowingCounter => None,
            _ => self.next(),
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
        self.next()
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

/// `From<u32>` and `From<T> for u32` through `from_raw` and `raw`, for the lossless enums of
/// this module.
macro_rules! raw_conversions {
    ($($ty:ident),*) => {$(
        impl From<u32> for $ty {
            fn from(raw: u32) -> Self {
                Self::from_raw(raw)
            }
        }

        impl From<$ty> for u32 {
            fn from(value: $ty) -> Self {
                value.raw()
            }
        }
    )*};
}

raw_conversions!(CounterType, DetailLevel);

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::collections::HashSet;
    use std::vec::Vec;
    use windows_sys::Win32::System::Performance::{
        PERF_COUNTER_BASE as BASE, PERF_COUNTER_ELAPSED as ELAPSED,
        PERF_COUNTER_FRACTION as FRACTION, PERF_COUNTER_HISTOGRAM, PERF_COUNTER_HISTOGRAM_TYPE,
        PERF_COUNTER_PRECISION as PRECISION, PERF_COUNTER_QUEUELEN as QUEUELEN,
        PERF_COUNTER_RATE as RATE, PERF_COUNTER_VALUE as VALUE, PERF_DELTA_BASE as D_BASE,
        PERF_DELTA_COUNTER as D_CTR, PERF_DETAIL_ADVANCED, PERF_DETAIL_EXPERT, PERF_DETAIL_NOVICE,
        PERF_DETAIL_WIZARD, PERF_DISPLAY_NO_SUFFIX as NO_SUFFIX, PERF_DISPLAY_NOSHOW as NOSHOW,
        PERF_DISPLAY_PER_SEC as PER_SEC, PERF_DISPLAY_PERCENT as PERCENT,
        PERF_DISPLAY_SECONDS as SECONDS, PERF_INVERSE_COUNTER as INVERSE,
        PERF_MULTI_COUNTER as MULTI, PERF_NUMBER_DEC_1000, PERF_NUMBER_DECIMAL as DECIMAL,
        PERF_NUMBER_HEX as HEX, PERF_OBJECT_TIMER as OBJ_TIMER, PERF_SIZE_DWORD as DWORD,
        PERF_SIZE_LARGE as LARGE, PERF_SIZE_VARIABLE_LEN as VARIABLE_LEN,
        PERF_SIZE_ZERO as ZERO_SIZE, PERF_TEXT_ASCII, PERF_TEXT_UNICODE as UNICODE,
        PERF_TIMER_100NS as T100NS, PERF_TIMER_TICK as TICK, PERF_TYPE_COUNTER as COUNTER,
        PERF_TYPE_NUMBER as NUMBER, PERF_TYPE_TEXT as TEXT, PERF_TYPE_ZERO,
    };

    /// Each type's value composed from its `winperf.h` definition, with the bit fields
    /// windows-sys defines (it carries the fields and the histogram type, not the composite
    /// types). This is the independent check of the values in the `counter_types!` rows.
    #[rustfmt::skip]
    const COMPOSED: [(CounterType, u32); 39] = {
        use CounterType as T;
        [
            (T::RawcountHex, DWORD | NUMBER | HEX | NO_SUFFIX),
            (T::LargeRawcountHex, LARGE | NUMBER | HEX | NO_SUFFIX),
            (T::Text, VARIABLE_LEN | TEXT | UNICODE | NO_SUFFIX),
            (T::Rawcount, DWORD | NUMBER | DECIMAL | NO_SUFFIX),
            (T::LargeRawcount, LARGE | NUMBER | DECIMAL | NO_SUFFIX),
            (T::Delta, DWORD | COUNTER | VALUE | D_CTR | NO_SUFFIX),
            (T::LargeDelta, LARGE | COUNTER | VALUE | D_CTR | NO_SUFFIX),
            (T::SampleCounter, DWORD | COUNTER | RATE | TICK | D_CTR | NO_SUFFIX),
            (T::Counter, DWORD | COUNTER | RATE | TICK | D_CTR | PER_SEC),
            (T::BulkCount, LARGE | COUNTER | RATE | TICK | D_CTR | PER_SEC),
            (T::Queuelen, DWORD | COUNTER | QUEUELEN | TICK | D_CTR | NO_SUFFIX),
            (T::LargeQueuelen, LARGE | COUNTER | QUEUELEN | TICK | D_CTR | NO_SUFFIX),
            (T::Queuelen100ns, LARGE | COUNTER | QUEUELEN | T100NS | D_CTR | NO_SUFFIX),
            (T::ObjTimeQueuelen, LARGE | COUNTER | QUEUELEN | OBJ_TIMER | D_CTR | NO_SUFFIX),
            (T::Timer, LARGE | COUNTER | RATE | TICK | D_CTR | PERCENT),
            (T::TimerInv, LARGE | COUNTER | RATE | TICK | D_CTR | PERCENT | INVERSE),
            (T::Timer100ns, LARGE | COUNTER | RATE | T100NS | D_CTR | PERCENT),
            (T::Timer100nsInv, LARGE | COUNTER | RATE | T100NS | D_CTR | PERCENT | INVERSE),
            (T::ObjTimeTimer, LARGE | COUNTER | RATE | OBJ_TIMER | D_CTR | PERCENT),
            (T::PrecisionSystemTimer, LARGE | COUNTER | PRECISION | TICK | D_CTR | PERCENT),
            (T::Precision100nsTimer, LARGE | COUNTER | PRECISION | T100NS | D_CTR | PERCENT),
            (T::PrecisionObjectTimer, LARGE | COUNTER | PRECISION | OBJ_TIMER | D_CTR | PERCENT),
            (T::MultiTimer, LARGE | COUNTER | RATE | D_CTR | TICK | MULTI | PERCENT),
            (T::MultiTimerInv, LARGE | COUNTER | RATE | D_CTR | TICK | MULTI | PERCENT | INVERSE),
            (T::MultiTimer100ns, LARGE | COUNTER | RATE | D_CTR | T100NS | MULTI | PERCENT),
            (T::MultiTimer100nsInv, LARGE | COUNTER | RATE | D_CTR | T100NS | MULTI | PERCENT | INVERSE),
            (T::MultiBase, LARGE | COUNTER | BASE | MULTI | NOSHOW),
            (T::RawFraction, DWORD | COUNTER | FRACTION | PERCENT),
            (T::LargeRawFraction, LARGE | COUNTER | FRACTION | PERCENT),
            // The DWORD bases are told apart by a small number in the low byte.
            (T::RawBase, DWORD | COUNTER | BASE | NOSHOW | 0x0000_0003),
            (T::LargeRawBase, LARGE | COUNTER | BASE | NOSHOW),
            (T::SampleFraction, DWORD | COUNTER | FRACTION | D_CTR | D_BASE | PERCENT),
            (T::SampleBase, DWORD | COUNTER | BASE | NOSHOW | 0x0000_0001),
            (T::AverageTimer, DWORD | COUNTER | FRACTION | SECONDS),
            (T::AverageBulk, LARGE | COUNTER | FRACTION | NOSHOW),
            (T::AverageBase, DWORD | COUNTER | BASE | NOSHOW | 0x0000_0002),
            (T::ElapsedTime, LARGE | COUNTER | ELAPSED | OBJ_TIMER | SECONDS),
            (T::NoData, ZERO_SIZE | NOSHOW),
            (T::Histogram, PERF_COUNTER_HISTOGRAM_TYPE),
        ]
    };

    #[test]
    fn values_match_bit_field_composition() {
        for ((ty, value), listed) in COMPOSED.into_iter().zip(ALL) {
            assert_eq!(ty, listed, "COMPOSED follows the order of ALL");
            assert_eq!(ty.raw(), value, "{}", ty.name());
            assert_eq!(CounterType::from_raw(value), ty, "{}", ty.name());
            assert!(ty.is_known(), "{}", ty.name());
        }
        assert_eq!(COMPOSED.len(), ALL.len());
        // PERF_PRECISION_TIMESTAMP is defined as PERF_LARGE_RAW_BASE.
        let precision_timestamp = LARGE | COUNTER | BASE | NOSHOW;
        assert_eq!(
            CounterType::from_raw(precision_timestamp),
            CounterType::LargeRawBase
        );
        // The histogram type is a bare high bit.
        assert_eq!(CounterType::Histogram.raw(), 0x8000_0000);
    }

    #[test]
    fn all_lists_every_named_type_once() {
        assert_eq!(ALL.len(), 39);
        assert_eq!(CounterType::ALL, ALL);
        let raws: HashSet<u32> = ALL.iter().map(|t| t.raw()).collect();
        assert_eq!(raws.len(), ALL.len());
        let names: HashSet<&str> = ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names.len(), ALL.len());
        assert!(!names.contains("UNKNOWN"));
        for ty in ALL {
            assert!(ty.name().starts_with("PERF_"), "{}", ty.name());
        }
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
        // All but perf_counter_composite map to a type.
        let unmapped: Vec<&str> = MANIFEST_SCHEMA_TYPE_NAMES
            .iter()
            .copied()
            .filter(|n| CounterType::from_manifest_name(n).is_none())
            .collect();
        assert_eq!(unmapped, ["perf_counter_composite"]);
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
        let cases = [
            ("perf_counter_rawcount", Some(CounterType::Rawcount)),
            ("perf_counter_bulk_count", Some(CounterType::BulkCount)),
            (
                "perf_precision_100ns_timer",
                Some(CounterType::Precision100nsTimer),
            ),
            // Case, spaces and names the schema lacks all miss.
            ("PERF_COUNTER_RAWCOUNT", None),
            ("Perf_Counter_Rawcount", None),
            (" perf_counter_rawcount", None),
            ("perf_counter_nodata", None),
            ("", None),
        ];
        for (name, expected) in cases {
            assert_eq!(CounterType::from_manifest_name(name), expected, "{name:?}");
        }
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
    fn time_bases_follow_the_bit_fields() {
        // A formula has a time value D exactly when the type is a rate, a queue length, an
        // elapsed time or a precision timer; the timer field says which system time it is,
        // and a precision timer reads it from the next counter.
        for ty in ALL {
            let expected = match (ty.type_bits(), ty.subtype_bits(), ty.timer_bits()) {
                (COUNTER, PRECISION, _) => TimeBase::FollowingCounter,
                (COUNTER, RATE | QUEUELEN | ELAPSED, TICK) => TimeBase::PerfTime,
                (COUNTER, RATE | QUEUELEN | ELAPSED, T100NS) => TimeBase::PerfTime100ns,
                (COUNTER, RATE | QUEUELEN | ELAPSED, OBJ_TIMER) => TimeBase::ObjectTime,
                _ => TimeBase::None,
            };
            assert_eq!(ty.time_base(), expected, "{}", ty.name());
        }
        // AverageTimer converts ticks with PerfFreq but has no D; unknown types are not
        // guessed from their bits.
        assert_eq!(CounterType::AverageTimer.time_base(), TimeBase::None);
        assert_eq!(
            CounterType::Unknown(0x2047_0501).time_base(),
            TimeBase::None
        );
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
        assert_eq!(T::Text.type_bits(), TEXT);
        assert_eq!(T::Text.size_bits(), VARIABLE_LEN);
        assert_eq!(T::NoData.type_bits(), NUMBER);
        assert_eq!(T::Unknown(0x0000_0C00).type_bits(), PERF_TYPE_ZERO);
        assert_eq!(T::LargeRawcount.subtype_bits(), DECIMAL);
        assert_eq!(
            T::Unknown(NUMBER | PERF_NUMBER_DEC_1000).subtype_bits(),
            PERF_NUMBER_DEC_1000
        );
        assert_eq!(
            T::Unknown(TEXT | PERF_TEXT_ASCII | VARIABLE_LEN).subtype_bits(),
            PERF_TEXT_ASCII
        );
        assert_eq!(
            T::Unknown(COUNTER | PERF_COUNTER_HISTOGRAM).subtype_bits(),
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
        // Everything else is cooked from one sample.
        for ty in ALL {
            assert_eq!(ty.needs_two_samples(), two.contains(&ty), "{}", ty.name());
        }
        assert!(T::Unknown(0x0040_0401).needs_two_samples());
        assert!(!T::Unknown(0x0000_0001).needs_two_samples());
    }

    #[test]
    fn windows_sys_agrees() {
        // The module's private bit-field constants and the detail levels, against
        // windows-sys (the type values are checked by `values_match_bit_field_composition`).
        let ours_and_theirs = [
            (SIZE_DWORD, DWORD),
            (SIZE_LARGE, LARGE),
            (SIZE_ZERO, ZERO_SIZE),
            (SIZE_MASK, VARIABLE_LEN),
            (TYPE_COUNTER, COUNTER),
            (TYPE_MASK, PERF_TYPE_ZERO),
            (SUBTYPE_BASE, BASE),
            (TIMER_MASK, T100NS | OBJ_TIMER),
            (DELTA_COUNTER, D_CTR),
            (DELTA_BASE, D_BASE),
            (INVERSE_COUNTER, INVERSE),
            (MULTI_COUNTER, MULTI),
            (DISPLAY_PER_SEC, PER_SEC),
            (DISPLAY_PERCENT, PERCENT),
            (DISPLAY_SECONDS, SECONDS),
            (DISPLAY_NOSHOW, NOSHOW),
            (DetailLevel::Novice.raw(), PERF_DETAIL_NOVICE),
            (DetailLevel::Advanced.raw(), PERF_DETAIL_ADVANCED),
            (DetailLevel::Expert.raw(), PERF_DETAIL_EXPERT),
            (DetailLevel::Wizard.raw(), PERF_DETAIL_WIZARD),
        ];
        for (i, (ours, theirs)) in ours_and_theirs.into_iter().enumerate() {
            assert_eq!(ours, theirs, "constant #{i}");
        }
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
        // The schema's two names, exactly, and both ways.
        assert_eq!(DetailLevel::Novice.manifest_name(), Some("standard"));
        assert_eq!(DetailLevel::Advanced.manifest_name(), Some("advanced"));
        for level in [DetailLevel::Novice, DetailLevel::Advanced] {
            let name = level.manifest_name().unwrap();
            assert_eq!(DetailLevel::from_manifest_name(name), Some(level));
        }
        for other in ["Standard", "novice", "expert", ""] {
            assert_eq!(DetailLevel::from_manifest_name(other), None, "{other:?}");
        }
        assert_eq!(DetailLevel::Wizard.manifest_name(), None);
        assert_eq!(DetailLevel::Unknown(100).manifest_name(), Some("standard"));
    }
}
