// SPDX-License-Identifier: MIT OR Apache-2.0
//! PDH counter cooking (`docs/counter-types.md`): raw samples in, the value
//! `PdhGetFormattedCounterValue` would display out.
//!
//! The flow mirrors PDH. A collection gives, per counter, its raw value, the value of the counter
//! that follows it (a base, a multi count or a precision timestamp) and the time fields of the
//! `PERF_DATA_BLOCK` and `PERF_OBJECT_TYPE` it came in ([`SampleTimes`]).
//! [`RawSample::for_counter`] turns them into a [`RawSample`], the analogue of `PDH_RAW_COUNTER`,
//! choosing `FirstValue`, `SecondValue` and `MultiCount` by counter type the way PDH's
//! `FillInValues` does, so the caller needs no per-type rule. [`cook`]
//! then applies the type's formula to an older and a newer sample and post-processes the result
//! like PDH: `10^DefaultScale` unless [`FormatFlags::NOSCALE`], ×1000 with
//! [`FormatFlags::MULTIPLY_1000`], percentages capped at 100 unless [`FormatFlags::NOCAP100`].
//!
//! # Formulas
//!
//! N is `FirstValue`, D the time or base in `SecondValue`, B the base, F the time base
//! (frequency); index 0 is the older sample, 1 the newer. All arithmetic is done on exact 128-bit
//! differences, then in `f64` as PDH does in `double`.
//!
//! | types | value |
//! |---|---|
//! | raw counts (decimal and hex) | N1 |
//! | deltas | N1 − N0 |
//! | sample counter, counter, bulk count | (N1 − N0) / ((D1 − D0) / F) |
//! | queue lengths | (N1 − N0) / (D1 − D0) |
//! | timers, precision timers | 100 · (N1 − N0) / (D1 − D0) |
//! | inverse timers | 100 · (1 − (N1 − N0) / (D1 − D0)) |
//! | multi timers | 100 · ((N1 − N0) / (D1 − D0)) / B1, B = `MultiCount` |
//! | inverse multi timers | 100 · (B1 − (N1 − N0) / (D1 − D0)) |
//! | raw fractions | 100 · N1 / B1 |
//! | `PERF_SAMPLE_FRACTION` | 100 · (N1 − N0) / (B1 − B0) |
//! | `PERF_AVERAGE_TIMER` | ((N1 − N0) / F) / (B1 − B0) |
//! | `PERF_AVERAGE_BULK` | (N1 − N0) / (B1 − B0) |
//! | `PERF_ELAPSED_TIME` | (D1 − N1) / F |
//!
//! D is `PerfTime`, `PerfTime100nSec` or the object's `PerfTime` as the type's timer bits say
//! ([`CounterType::time_base`]), the following timestamp counter for precision timers. F is
//! `PerfFreq` for the rates and the average timer, the object's `PerfFreq` for elapsed time.
//! The hex raw counts cook to the same number as the decimal ones: hex is a way of showing it
//! (perfmon's), and typeperf prints every value in decimal.
//!
//! `PERF_COUNTER_TEXT`, `PERF_COUNTER_NODATA`, `PERF_COUNTER_HISTOGRAM_TYPE`, the base types and
//! unknown types have no displayable value: [`CookError::NotCookable`] (PDH refuses base types
//! in `PdhFormatFromRawValue` too).
//!
//! # Decisions where the sources disagree or are silent
//!
//! * **Multi timers.** Microsoft's cooking sample
//!   (`calculating-counter-values.md`) and the Windows CE table divide the tick-based `PERF_COUNTER_MULTI_TIMER`'s time delta by
//!   `PerfFreq` (`100·(ΔN/(ΔD/TB))/B1`), and .NET multiplies `FirstValue` by the frequency before
//!   handing it to PDH "to make PDH work like PERFMON". Both only make sense if N is not in the
//!   same unit as D. The Server 2003 Deployment Kit says N is active time and D elapsed time,
//!   both in ticks of the performance timer; with N in ticks, dividing ΔD by F multiplies the
//!   result by about 10^7 and every nonzero value would be capped at 100. This module therefore
//!   uses the unit-consistent `100·(ΔN/ΔD)/B1` for both multi timers, which is exactly the
//!   formula every source gives for `PERF_100NSEC_MULTI_TIMER`. For the inverse forms it uses
//!   `100·(B1 − ΔN/ΔD)`, on which the Server 2003 kit and Microsoft's sample agree; the CE
//!   table's extra `/B1` is the odd one out. What real PDH prints for a tick-based multi timer
//!   whose N is in ticks is not established by public material: test on Windows before relying
//!   on it. B1 is the newer sample's `MultiCount`.
//! * **Elapsed time.** The formula is often written `(D0 − N0)/F` with index 0; in Microsoft's
//!   sample that is the *only* sample passed, i.e. the current one, and .NET takes the time stamp
//!   from the newer sample. So [`cook`] uses the newer sample's object time, value and object
//!   frequency, accepts `older == None`, and ignores `older` when given. A start time of 0 means
//!   "no data" and gives 0 (as .NET does); a start time after the object time gives
//!   [`CookError::NegativeValue`].
//! * **Precision timers.** D is the following `PERF_PRECISION_TIMESTAMP` counter, in the same
//!   unit as N, so the ratio needs no frequency. The unit still depends on the variant (system
//!   timer: `PerfFreq`; 100 ns: 10^7; object: object `PerfFreq`), which [`timebase`] reports
//!   for callers that want it, as `PdhGetCounterTimeBase` does.
//! * **Zero denominators.** A zero *time* delta (two collections with the same time stamp)
//!   gives [`CookError::ZeroDenominator`]: there is no rate to show. A zero *base* or base delta
//!   (raw and sample fractions, averages, multi count) gives 0: an idle disk shows
//!   `Avg. Disk sec/Read` (a `PERF_AVERAGE_TIMER` whose operation count did not move) as 0, not
//!   as an error. **(inference)**
//! * **Negative results.** A counter that went backwards gives [`CookError::NegativeValue`]
//!   (`PDH_CALC_NEGATIVE_VALUE`), a time or base that went backwards
//!   [`CookError::NegativeDenominator`] (`PDH_CALC_NEGATIVE_DENOMINATOR`), a frequency ≤ 0
//!   [`CookError::NegativeTimebase`] (`PDH_CALC_NEGATIVE_TIMEBASE`). .NET maps the first two to
//!   0; typeperf writes no number for a value PDH did not compute, and this crate's CSV writer
//!   ([`crate::csv`]) shows every `Err` as the blank cell `" "`. An inverse timer whose
//!   idle time exceeds the interval would compute below 0; it is clamped to 0. **(inference)**
//! * **Raw values** are unsigned in `winperf.h`; [`RawSample`] stores them as PDH's `LONGLONG`
//!   (bit-for-bit), and single-sample raw counts are read back as unsigned.
//! * **Post-processing order**: formula, then scale, then ×1000, then the cap. The cap applies
//!   only to `PERF_DISPLAY_PERCENT` types (a rate of 500/sec is never capped).

use core::fmt;
use core::ops::BitOr;

use pcw_core::counter_type::{CounterType, DisplaySuffix, TimeBase};

/// `PDH_CALC_NEGATIVE_DENOMINATOR` (pdhmsg.h).
pub const PDH_CALC_NEGATIVE_DENOMINATOR: u32 = 0x8000_07D6;
/// `PDH_CALC_NEGATIVE_TIMEBASE` (pdhmsg.h).
pub const PDH_CALC_NEGATIVE_TIMEBASE: u32 = 0x8000_07D7;
/// `PDH_CALC_NEGATIVE_VALUE` (pdhmsg.h).
pub const PDH_CALC_NEGATIVE_VALUE: u32 = 0x8000_07D8;
/// `PDH_CSTATUS_INVALID_DATA` (pdhmsg.h): what PDH reports for a rate counter cooked from one
/// raw value.
pub const PDH_CSTATUS_INVALID_DATA: u32 = 0xC000_0BBA;
/// `PDH_INVALID_ARGUMENT` (pdhmsg.h).
pub const PDH_INVALID_ARGUMENT: u32 = 0xC000_0BBD;

/// The 100 ns clock's frequency: `PerfTime100nSec` ticks per second.
pub const FREQ_100NS: i64 = 10_000_000;

/// The time fields of one collection: the `PERF_DATA_BLOCK` and the counter's
/// `PERF_OBJECT_TYPE`, as a V1 consumer reads them or as PCW fills them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SampleTimes {
    /// `PERF_DATA_BLOCK.PerfTime`: the performance counter (QPC) at collection.
    pub perf_time: i64,
    /// `PERF_DATA_BLOCK.PerfFreq`: `PerfTime` ticks per second.
    pub perf_freq: i64,
    /// `PERF_DATA_BLOCK.PerfTime100nSec`: the time at collection in 100 ns units.
    pub perf_time_100ns: i64,
    /// `PERF_OBJECT_TYPE.PerfTime`: the object's own time, for object timers and elapsed time.
    pub object_time: i64,
    /// `PERF_OBJECT_TYPE.PerfFreq`: object time ticks per second.
    pub object_freq: i64,
}

/// One raw sample of one counter, like PDH's `PDH_RAW_COUNTER`, plus the collection's time
/// fields (PDH keeps those beside the raw counter, as the counter's time base).
///
/// Build it with [`RawSample::for_counter`]; the fields are public so tests and tools can
/// write the exact values PDH would hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RawSample {
    /// `FirstValue`: the counter's raw value N, bit-for-bit (`LONGLONG`).
    pub first_value: i64,
    /// `SecondValue`: the time value D or the base B, per counter type (0 if the type uses
    /// neither).
    pub second_value: i64,
    /// `MultiCount`: B of the multi timers (1 for other types, as PDH fills it).
    pub multi_count: u32,
    /// The collection's time fields.
    pub times: SampleTimes,
}

impl RawSample {
    /// Builds the raw sample PDH would hold for a counter of type `counter_type` whose raw value
    /// is `value` (a DWORD counter's value zero-extended), given the value of the counter that
    /// follows it and the collection's time fields.
    ///
    /// `SecondValue` is chosen from [`CounterType::time_base`]: `PerfTime`, `PerfTime100nSec` or
    /// the object's `PerfTime` for the time-based types, the following counter's value for the
    /// precision timers; for the fractions and averages it is the base (the following counter).
    /// Multi timers put the following counter's value (their `PERF_COUNTER_MULTI_BASE`) into
    /// `MultiCount`, saturated at `u32::MAX` (PDH's field is a DWORD). Raw counts, deltas and
    /// types without a formula get `SecondValue` 0.
    ///
    /// `follower_value` is read only for types with a [`CounterType::required_follower`]; it
    /// is ignored otherwise. Read `value` with the definition's `CounterSize`, not the type's
    /// declared size: `PERF_AVERAGE_TIMER` is declared DWORD but Microsoft's sample reads it as
    /// 64 bits (`docs/counter-types.md`).
    ///
    /// # Errors
    ///
    /// [`CookError::MissingFollower`] if the type needs the following counter's value and
    /// `follower_value` is `None`.
    pub fn for_counter(
        counter_type: CounterType,
        value: u64,
        follower_value: Option<u64>,
        times: &SampleTimes,
    ) -> Result<Self, CookError> {
        let canonical = CounterType::from_raw(counter_type.raw());
        let follower = match canonical.required_follower() {
            Some(expected) => Some(follower_value.ok_or(CookError::MissingFollower {
                counter: canonical,
                expected,
            })?),
            None => None,
        };
        let mut sample = Self {
            first_value: value.cast_signed(),
            second_value: 0,
            multi_count: 1,
            times: *times,
        };
        match canonical.time_base() {
            TimeBase::PerfTime => sample.second_value = times.perf_time,
            TimeBase::PerfTime100ns => sample.second_value = times.perf_time_100ns,
            TimeBase::ObjectTime => sample.second_value = times.object_time,
            TimeBase::FollowingCounter => {
                sample.second_value = follower.unwrap_or(0).cast_signed();
            }
            TimeBase::None => {
                if let Some(base) = follower {
                    sample.second_value = base.cast_signed();
                }
            }
        }
        if canonical.is_multi()
            && let Some(count) = follower
        {
            sample.multi_count = u32::try_from(count).unwrap_or(u32::MAX);
        }
        Ok(sample)
    }
}

/// The time base (frequency, ticks per second) PDH associates with a counter of this type, as
/// `PdhGetCounterTimeBase` reports it, read from `times`.
///
/// `PerfFreq` for the types timed by `PerfTime` and for `PERF_AVERAGE_TIMER` and
/// `PERF_PRECISION_SYSTEM_TIMER`; [`FREQ_100NS`] for the 100 ns types and
/// `PERF_PRECISION_100NS_TIMER`; the object's `PerfFreq` for object timers,
/// `PERF_PRECISION_OBJECT_TIMER` and `PERF_ELAPSED_TIME`. `None` for types whose formula uses
/// no frequency and no time.
pub fn timebase(counter_type: CounterType, times: &SampleTimes) -> Option<i64> {
    let canonical = CounterType::from_raw(counter_type.raw());
    match canonical {
        CounterType::AverageTimer | CounterType::PrecisionSystemTimer => Some(times.perf_freq),
        CounterType::Precision100nsTimer => Some(FREQ_100NS),
        CounterType::PrecisionObjectTimer => Some(times.object_freq),
        _ => match canonical.time_base() {
            TimeBase::PerfTime => Some(times.perf_freq),
            TimeBase::PerfTime100ns => Some(FREQ_100NS),
            TimeBase::ObjectTime => Some(times.object_freq),
            TimeBase::FollowingCounter | TimeBase::None => None,
        },
    }
}

/// Format flags of `PdhGetFormattedCounterValue` that change the value (the `PDH_FMT_*` bits;
/// the result type bits do not matter here, the value is always an `f64`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FormatFlags(u32);

impl FormatFlags {
    /// No flag: PDH's default, scaled and capped.
    pub const NONE: Self = Self(0);
    /// `PDH_FMT_NOSCALE` (`0x1000`): do not apply the counter's default scale.
    pub const NOSCALE: Self = Self(0x0000_1000);
    /// `PDH_FMT_1000` (`0x2000`): multiply the final value by 1000.
    pub const MULTIPLY_1000: Self = Self(0x0000_2000);
    /// `PDH_FMT_NOCAP100` (`0x8000`): do not cap percentages at 100.
    pub const NOCAP100: Self = Self(0x0000_8000);

    /// The flags from raw `PDH_FMT_*` bits; bits other than the three above are kept but have
    /// no effect.
    pub const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The raw `PDH_FMT_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every bit of `other` is set in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for FormatFlags {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl fmt::Display for FormatFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

/// Why a counter has no displayable value: PDH's calculation statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CookError {
    /// The type needs an older and a newer sample and only one was given (the first collection
    /// of a rate, timer, average, …). PDH reports `PDH_CSTATUS_INVALID_DATA`.
    #[error("`{}` needs two samples; only one was given", .0.name())]
    NeedsTwoSamples(CounterType),
    /// The counter's value went backwards between the samples, or a value is negative
    /// (`PDH_CALC_NEGATIVE_VALUE`).
    #[error("the counter value went backwards between samples (PDH_CALC_NEGATIVE_VALUE)")]
    NegativeValue,
    /// The time or base went backwards between the samples, or a base is negative
    /// (`PDH_CALC_NEGATIVE_DENOMINATOR`).
    #[error("the time or base went backwards between samples (PDH_CALC_NEGATIVE_DENOMINATOR)")]
    NegativeDenominator,
    /// The two samples have the same time: no interval to divide by.
    #[error("the two samples have the same time; there is no interval to divide by")]
    ZeroDenominator,
    /// The frequency the formula divides by is zero or negative (`PDH_CALC_NEGATIVE_TIMEBASE`).
    #[error("time base (frequency) {0} is not positive (PDH_CALC_NEGATIVE_TIMEBASE)")]
    NegativeTimebase(i64),
    /// The type has no displayable value: text, no-data, histogram, a base type, or a type
    /// this crate does not know.
    #[error("`{}` (0x{:08X}) has no displayable value", .0.name(), .0.raw())]
    NotCookable(CounterType),
    /// The type needs the value of the counter that follows it and none was given.
    #[error("`{}` needs the value of the following `{}` counter", counter.name(), expected.name())]
    MissingFollower {
        /// The counter being sampled.
        counter: CounterType,
        /// The type the following counter must have.
        expected: CounterType,
    },
}

impl CookError {
    /// The PDH status code closest to this error, as `PDH_FMT_COUNTERVALUE.CStatus` or a
    /// function result would carry it.
    pub const fn pdh_status(self) -> u32 {
        match self {
            Self::NegativeValue => PDH_CALC_NEGATIVE_VALUE,
            Self::NegativeDenominator => PDH_CALC_NEGATIVE_DENOMINATOR,
            Self::NegativeTimebase(_) => PDH_CALC_NEGATIVE_TIMEBASE,
            Self::NeedsTwoSamples(_) | Self::ZeroDenominator => PDH_CSTATUS_INVALID_DATA,
            Self::NotCookable(_) | Self::MissingFollower { .. } => PDH_INVALID_ARGUMENT,
        }
    }
}

/// Cooks a counter's displayed value from its raw samples, like `PdhFormatFromRawValue` with
/// `PDH_FMT_DOUBLE`.
///
/// `scale` is the counter's `DefaultScale` (the value is multiplied by `10^scale` unless
/// [`FormatFlags::NOSCALE`]). `older` is the previous sample, `None` on the first collection;
/// types that need two samples ([`CounterType::needs_two_samples`]) then fail. See the module
/// documentation for the formulas and decisions.
///
/// # Errors
///
/// [`CookError::NotCookable`] for types without a formula; [`CookError::NeedsTwoSamples`] when
/// `older` is `None` for a two-sample type; [`CookError::NegativeValue`],
/// [`CookError::NegativeDenominator`], [`CookError::ZeroDenominator`] and
/// [`CookError::NegativeTimebase`] as described in the module documentation.
pub fn cook(
    counter_type: CounterType,
    scale: i32,
    older: Option<&RawSample>,
    newer: &RawSample,
    flags: FormatFlags,
) -> Result<f64, CookError> {
    let canonical = CounterType::from_raw(counter_type.raw());
    let value = formula(canonical, older, newer)?;
    Ok(post_process(canonical, scale, value, flags))
}

/// Applies PDH's post-processing: scale, ×1000, percentage cap.
fn post_process(counter_type: CounterType, scale: i32, value: f64, flags: FormatFlags) -> f64 {
    let mut value = value;
    if !flags.contains(FormatFlags::NOSCALE) && scale != 0 {
        value *= 10f64.powi(scale);
    }
    if flags.contains(FormatFlags::MULTIPLY_1000) {
        value *= 1000.0;
    }
    if counter_type.display_suffix() == DisplaySuffix::Percent
        && !flags.contains(FormatFlags::NOCAP100)
        && value > 100.0
    {
        value = 100.0;
    }
    value
}

/// The formula of `docs/counter-types.md` for a canonical counter type, before post-processing.
fn formula(
    counter_type: CounterType,
    older: Option<&RawSample>,
    newer: &RawSample,
) -> Result<f64, CookError> {
    use CounterType as T;

    let n1 = newer.first_value;
    // Single-sample types first: they never look at `older`.
    match counter_type {
        T::RawcountHex | T::LargeRawcountHex | T::Rawcount | T::LargeRawcount => {
            return Ok(to_f64(i128::from(n1.cast_unsigned())));
        }
        T::RawFraction | T::LargeRawFraction => {
            let n = non_negative_value(i128::from(n1))?;
            return Ok(match base(i128::from(newer.second_value))? {
                Some(b) => 100.0 * n / b,
                None => 0.0,
            });
        }
        T::ElapsedTime => return elapsed_time(newer),
        T::Text
        | T::NoData
        | T::Histogram
        | T::MultiBase
        | T::RawBase
        | T::LargeRawBase
        | T::SampleBase
        | T::AverageBase
        | T::Unknown(_) => return Err(CookError::NotCookable(counter_type)),
        _ => {}
    }

    let older = older.ok_or(CookError::NeedsTwoSamples(counter_type))?;
    let dn = non_negative_value(i128::from(n1) - i128::from(older.first_value))?;
    // D or B, newer minus older.
    let d_delta = i128::from(newer.second_value) - i128::from(older.second_value);
    let b1 = f64::from(newer.multi_count);

    match counter_type {
        T::Delta | T::LargeDelta => Ok(dn),
        T::SampleCounter | T::Counter | T::BulkCount => {
            let seconds = time_delta(d_delta)? / frequency(newer.times.perf_freq)?;
            Ok(dn / seconds)
        }
        T::Queuelen | T::LargeQueuelen | T::Queuelen100ns | T::ObjTimeQueuelen => {
            Ok(dn / time_delta(d_delta)?)
        }
        T::Timer
        | T::Timer100ns
        | T::ObjTimeTimer
        | T::PrecisionSystemTimer
        | T::Precision100nsTimer
        | T::PrecisionObjectTimer => Ok(100.0 * dn / time_delta(d_delta)?),
        T::TimerInv | T::Timer100nsInv => Ok((100.0 * (1.0 - dn / time_delta(d_delta)?)).max(0.0)),
        T::MultiTimer | T::MultiTimer100ns => {
            let busy = dn / time_delta(d_delta)?;
            Ok(if b1 > 0.0 { 100.0 * busy / b1 } else { 0.0 })
        }
        T::MultiTimerInv | T::MultiTimer100nsInv => {
            let idle = dn / time_delta(d_delta)?;
            Ok((100.0 * (b1 - idle)).max(0.0))
        }
        T::SampleFraction => Ok(match base(d_delta)? {
            Some(b) => 100.0 * dn / b,
            None => 0.0,
        }),
        T::AverageTimer => {
            let f = frequency(newer.times.perf_freq)?;
            Ok(match base(d_delta)? {
                Some(b) => dn / f / b,
                None => 0.0,
            })
        }
        T::AverageBulk => Ok(match base(d_delta)? {
            Some(b) => dn / b,
            None => 0.0,
        }),
        // Every other type returned above.
        _ => Err(CookError::NotCookable(counter_type)),
    }
}

/// `PERF_ELAPSED_TIME` from the newer sample alone: (object time − start) / object frequency.
fn elapsed_time(newer: &RawSample) -> Result<f64, CookError> {
    let start = newer.first_value;
    if start == 0 {
        return Ok(0.0);
    }
    let f = frequency(newer.times.object_freq)?;
    let elapsed = non_negative_value(i128::from(newer.second_value) - i128::from(start))?;
    Ok(elapsed / f)
}

/// A numerator: negative means the counter went backwards.
fn non_negative_value(v: i128) -> Result<f64, CookError> {
    if v < 0 {
        Err(CookError::NegativeValue)
    } else {
        Ok(to_f64(v))
    }
}

/// A time delta: must be positive.
fn time_delta(d: i128) -> Result<f64, CookError> {
    match d {
        ..0 => Err(CookError::NegativeDenominator),
        0 => Err(CookError::ZeroDenominator),
        _ => Ok(to_f64(d)),
    }
}

/// A base or base delta: negative is an error, zero means "nothing happened" (`None`).
fn base(b: i128) -> Result<Option<f64>, CookError> {
    match b {
        ..0 => Err(CookError::NegativeDenominator),
        0 => Ok(None),
        _ => Ok(Some(to_f64(b))),
    }
}

/// A frequency: must be positive.
fn frequency(f: i64) -> Result<f64, CookError> {
    if f <= 0 {
        Err(CookError::NegativeTimebase(f))
    } else {
        Ok(to_f64(i128::from(f)))
    }
}

/// Converts an exact difference to `f64`, rounding beyond 2^53 as PDH's `double` does.
#[expect(
    clippy::cast_precision_loss,
    reason = "PDH computes in double; counters beyond 2^53 lose precision there too"
)]
fn to_f64(v: i128) -> f64 {
    v as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcw_core::counter_type::ALL;

    /// Older and newer collections: 2 s apart on every clock.
    /// `PerfFreq` 10 MHz (20 000 000 ticks), 100 ns (20 000 000 units), object clock 1 kHz
    /// (2 000 ticks).
    const T0: SampleTimes = SampleTimes {
        perf_time: 1_000_000_000,
        perf_freq: 10_000_000,
        perf_time_100ns: 5_000_000_000,
        object_time: 300_000,
        object_freq: 1_000,
    };
    const T1: SampleTimes = SampleTimes {
        perf_time: 1_020_000_000,
        perf_freq: 10_000_000,
        perf_time_100ns: 5_020_000_000,
        object_time: 302_000,
        object_freq: 1_000,
    };

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0)
    }

    /// Cooks `ty` from (value, follower) at T0 and T1, scale 0, default flags.
    fn two(ty: CounterType, old: (u64, Option<u64>), new: (u64, Option<u64>)) -> f64 {
        let s0 = RawSample::for_counter(ty, old.0, old.1, &T0).unwrap();
        let s1 = RawSample::for_counter(ty, new.0, new.1, &T1).unwrap();
        cook(ty, 0, Some(&s0), &s1, FormatFlags::NONE).unwrap()
    }

    /// Cooks `ty` from one sample at T1.
    fn one(ty: CounterType, new: (u64, Option<u64>)) -> Result<f64, CookError> {
        let s1 = RawSample::for_counter(ty, new.0, new.1, &T1)?;
        cook(ty, 0, None, &s1, FormatFlags::NONE)
    }

    /// One row per counter type with a formula: the raw inputs and the value worked out by
    /// hand (in the comment) from the formulas of `docs/counter-types.md`.
    struct Case {
        ty: CounterType,
        old: (u64, Option<u64>),
        new: (u64, Option<u64>),
        expected: f64,
    }

    fn formula_cases() -> Vec<Case> {
        use CounterType as T;
        let c = |ty, old, new, expected| Case {
            ty,
            old,
            new,
            expected,
        };
        vec![
            // N1 = 0xFF.
            c(T::RawcountHex, (1, None), (0xFF, None), 255.0),
            // N1 = 2^32.
            c(
                T::LargeRawcountHex,
                (1, None),
                (0x1_0000_0000, None),
                4_294_967_296.0,
            ),
            c(T::Rawcount, (7, None), (42, None), 42.0),
            c(
                T::LargeRawcount,
                (7, None),
                (5_000_000_000, None),
                5_000_000_000.0,
            ),
            // 250 - 100.
            c(T::Delta, (100, None), (250, None), 150.0),
            // (10^10 + 7) - 10^10.
            c(
                T::LargeDelta,
                (10_000_000_000, None),
                (10_000_000_007, None),
                7.0,
            ),
            // 600 events / (20 000 000 ticks / 10 MHz = 2 s) = 300.
            c(T::SampleCounter, (1000, None), (1600, None), 300.0),
            c(T::Counter, (1000, None), (1600, None), 300.0),
            // 2 * 10^9 / 2 s.
            c(T::BulkCount, (0, None), (2_000_000_000, None), 1e9),
            // 60 000 000 / 20 000 000 ticks.
            c(T::Queuelen, (0, None), (60_000_000, None), 3.0),
            c(T::LargeQueuelen, (0, None), (60_000_000, None), 3.0),
            // 40 000 000 / 20 000 000 (100 ns).
            c(T::Queuelen100ns, (10, None), (40_000_010, None), 2.0),
            // 5000 / 2000 object ticks.
            c(T::ObjTimeQueuelen, (0, None), (5000, None), 2.5),
            // 100 * 5 000 000 / 20 000 000.
            c(T::Timer, (0, None), (5_000_000, None), 25.0),
            // 100 * (1 - 15 000 000 / 20 000 000).
            c(T::TimerInv, (0, None), (15_000_000, None), 25.0),
            // 100 * 10 000 000 / 20 000 000.
            c(T::Timer100ns, (0, None), (10_000_000, None), 50.0),
            // 100 * (1 - 4 000 000 / 20 000 000).
            c(T::Timer100nsInv, (0, None), (4_000_000, None), 80.0),
            // 100 * 500 / 2000.
            c(T::ObjTimeTimer, (1000, None), (1500, None), 25.0),
            // 100 * 3000 / (14 000 - 10 000): D is the following timestamp.
            c(
                T::PrecisionSystemTimer,
                (0, Some(10_000)),
                (3000, Some(14_000)),
                75.0,
            ),
            // 100 * 1000 / 4000.
            c(
                T::Precision100nsTimer,
                (500, Some(1_000)),
                (1500, Some(5_000)),
                25.0,
            ),
            // 100 * 1 / 8.
            c(T::PrecisionObjectTimer, (2, Some(8)), (3, Some(16)), 12.5),
            // 100 * (40 000 000 / 20 000 000) / 4.
            c(T::MultiTimer, (0, Some(4)), (40_000_000, Some(4)), 50.0),
            // 100 * (4 - 70 000 000 / 20 000 000) = 100 * 0.5.
            c(T::MultiTimerInv, (0, Some(4)), (70_000_000, Some(4)), 50.0),
            // 100 * (30 000 000 / 20 000 000) / 2.
            c(
                T::MultiTimer100ns,
                (0, Some(2)),
                (30_000_000, Some(2)),
                75.0,
            ),
            // 100 * (2 - 36 000 000 / 20 000 000) = 100 * 0.2.
            c(
                T::MultiTimer100nsInv,
                (0, Some(2)),
                (36_000_000, Some(2)),
                20.0,
            ),
            // 100 * 30 / 120: the newer sample alone.
            c(T::RawFraction, (99, Some(100)), (30, Some(120)), 25.0),
            // 100 * 1 / 8.
            c(T::LargeRawFraction, (5, Some(5)), (1, Some(8)), 12.5),
            // 100 * (40 - 10) / (200 - 100).
            c(T::SampleFraction, (10, Some(100)), (40, Some(200)), 30.0),
            // (30 000 000 ticks / 10 MHz = 3 s) / 6 operations.
            c(T::AverageTimer, (0, Some(0)), (30_000_000, Some(6)), 0.5),
            // (1100 - 100) / (30 - 10).
            c(T::AverageBulk, (100, Some(10)), (1100, Some(30)), 50.0),
            // (302 000 - 2000) object ticks / 1000 Hz: the newer object time.
            c(T::ElapsedTime, (2000, None), (2000, None), 300.0),
        ]
    }

    fn not_cookable() -> [CounterType; 8] {
        use CounterType as T;
        [
            T::Text,
            T::NoData,
            T::Histogram,
            T::MultiBase,
            T::RawBase,
            T::LargeRawBase,
            T::SampleBase,
            T::AverageBase,
        ]
    }

    #[test]
    fn every_formula_against_a_hand_computation() {
        for case in formula_cases() {
            let got = two(case.ty, case.old, case.new);
            assert!(
                close(got, case.expected),
                "{}: got {got}, expected {}",
                case.ty.name(),
                case.expected
            );
        }
    }

    #[test]
    fn every_named_type_is_tested_or_refused() {
        let cases = formula_cases();
        for ty in ALL {
            let with_formula = cases.iter().any(|c| c.ty == ty);
            let refused = not_cookable().contains(&ty);
            assert!(with_formula ^ refused, "{}", ty.name());
        }
        for ty in not_cookable() {
            let s = RawSample::for_counter(ty, 1, Some(1), &T1).unwrap();
            assert_eq!(
                cook(ty, 0, Some(&s), &s, FormatFlags::NONE),
                Err(CookError::NotCookable(ty))
            );
        }
        let unknown = CounterType::from_raw(0x1234_5678);
        let s = RawSample::for_counter(unknown, 1, None, &T1).unwrap();
        assert_eq!(
            cook(unknown, 0, Some(&s), &s, FormatFlags::NONE),
            Err(CookError::NotCookable(unknown))
        );
    }

    #[test]
    fn first_sample_of_two_sample_types() {
        for case in formula_cases() {
            let result = one(case.ty, case.new);
            if case.ty.needs_two_samples() {
                assert_eq!(result, Err(CookError::NeedsTwoSamples(case.ty)));
                assert_eq!(
                    CookError::NeedsTwoSamples(case.ty).pdh_status(),
                    PDH_CSTATUS_INVALID_DATA
                );
            } else {
                // One-sample types give the same value with or without the older sample.
                assert!(close(result.unwrap(), case.expected), "{}", case.ty.name());
            }
        }
    }

    #[test]
    fn fill_in_values() {
        use CounterType as T;
        let s = |ty, v, f| RawSample::for_counter(ty, v, f, &T1).unwrap();
        // Time-based: SecondValue is the clock the type names.
        assert_eq!(s(T::Counter, 5, None).second_value, T1.perf_time);
        assert_eq!(s(T::Timer100ns, 5, None).second_value, T1.perf_time_100ns);
        assert_eq!(s(T::ObjTimeTimer, 5, None).second_value, T1.object_time);
        assert_eq!(s(T::ElapsedTime, 5, None).second_value, T1.object_time);
        // Precision timers: the following timestamp.
        assert_eq!(s(T::PrecisionSystemTimer, 5, Some(77)).second_value, 77);
        // Fractions and averages: the base.
        assert_eq!(s(T::RawFraction, 5, Some(9)).second_value, 9);
        assert_eq!(s(T::AverageTimer, 5, Some(9)).second_value, 9);
        // Multi timers: time in SecondValue, base in MultiCount.
        let multi = s(T::MultiTimer, 5, Some(8));
        assert_eq!((multi.second_value, multi.multi_count), (T1.perf_time, 8));
        let saturated = s(T::MultiTimer100ns, 5, Some(u64::from(u32::MAX) + 1));
        assert_eq!(saturated.multi_count, u32::MAX);
        // Raw counts: no second value; a follower is ignored.
        let raw = s(T::Rawcount, 5, Some(9));
        assert_eq!(
            (raw.first_value, raw.second_value, raw.multi_count),
            (5, 0, 1)
        );
        // u64 values are kept bit-for-bit and read back unsigned.
        let big = s(T::LargeRawcount, u64::MAX, None);
        assert_eq!(big.first_value, -1);
        let got = cook(T::LargeRawcount, 0, None, &big, FormatFlags::NONE).unwrap();
        assert!(close(got, 18_446_744_073_709_551_615.0));
        // A missing base or timestamp is an error naming both types.
        assert_eq!(
            RawSample::for_counter(T::SampleFraction, 5, None, &T1),
            Err(CookError::MissingFollower {
                counter: T::SampleFraction,
                expected: T::SampleBase
            })
        );
        assert_eq!(
            RawSample::for_counter(T::PrecisionObjectTimer, 5, None, &T1),
            Err(CookError::MissingFollower {
                counter: T::PrecisionObjectTimer,
                expected: T::LargeRawBase
            })
        );
        // A hand-built Unknown of a named value is treated as that value.
        let alias = CounterType::Unknown(T::Counter.raw());
        assert_eq!(
            RawSample::for_counter(alias, 5, None, &T1)
                .unwrap()
                .second_value,
            T1.perf_time
        );
    }

    #[test]
    fn timebases() {
        use CounterType as T;
        assert_eq!(timebase(T::Counter, &T1), Some(10_000_000));
        assert_eq!(timebase(T::AverageTimer, &T1), Some(10_000_000));
        assert_eq!(timebase(T::PrecisionSystemTimer, &T1), Some(10_000_000));
        assert_eq!(timebase(T::Timer100ns, &T1), Some(FREQ_100NS));
        assert_eq!(timebase(T::Precision100nsTimer, &T1), Some(FREQ_100NS));
        assert_eq!(timebase(T::ObjTimeTimer, &T1), Some(1_000));
        assert_eq!(timebase(T::PrecisionObjectTimer, &T1), Some(1_000));
        assert_eq!(timebase(T::ElapsedTime, &T1), Some(1_000));
        assert_eq!(timebase(T::RawFraction, &T1), None);
        assert_eq!(timebase(T::Rawcount, &T1), None);
    }

    #[test]
    fn scale_and_multiply() {
        use CounterType as T;
        let s = RawSample::for_counter(T::Rawcount, 42, None, &T1).unwrap();
        let f = |scale, flags| cook(T::Rawcount, scale, None, &s, flags).unwrap();
        // 42 * 10^2, 42 * 10^-3, NOSCALE ignores the scale, PDH_FMT_1000 multiplies.
        assert!(close(f(2, FormatFlags::NONE), 4200.0));
        assert!(close(f(-3, FormatFlags::NONE), 0.042));
        assert!(close(f(2, FormatFlags::NOSCALE), 42.0));
        assert!(close(f(0, FormatFlags::MULTIPLY_1000), 42_000.0));
        assert!(close(
            f(1, FormatFlags::NOSCALE | FormatFlags::MULTIPLY_1000),
            42_000.0
        ));
        // A rate is scaled too: 300/sec * 10^-1.
        let s0 = RawSample::for_counter(T::Counter, 1000, None, &T0).unwrap();
        let s1 = RawSample::for_counter(T::Counter, 1600, None, &T1).unwrap();
        let rate = cook(T::Counter, -1, Some(&s0), &s1, FormatFlags::NONE).unwrap();
        assert!(close(rate, 30.0));
    }

    #[test]
    fn percent_cap() {
        use CounterType as T;
        // 100 * 30 000 000 / 20 000 000 = 150 %: capped unless NOCAP100.
        let s0 = RawSample::for_counter(T::Timer, 0, None, &T0).unwrap();
        let s1 = RawSample::for_counter(T::Timer, 30_000_000, None, &T1).unwrap();
        let f = |scale, flags| cook(T::Timer, scale, Some(&s0), &s1, flags).unwrap();
        assert!(close(f(0, FormatFlags::NONE), 100.0));
        assert!(close(f(0, FormatFlags::NOCAP100), 150.0));
        // The cap comes after the scale: 25 % * 10 = 250 -> 100.
        let q1 = RawSample::for_counter(T::Timer, 5_000_000, None, &T1).unwrap();
        let scaled = cook(T::Timer, 1, Some(&s0), &q1, FormatFlags::NONE).unwrap();
        assert!(close(scaled, 100.0));
        // Raw fraction above 100 %: 100 * 300 / 200 = 150.
        let r = RawSample::for_counter(T::RawFraction, 300, Some(200), &T1).unwrap();
        assert!(close(
            cook(T::RawFraction, 0, None, &r, FormatFlags::NONE).unwrap(),
            100.0
        ));
        assert!(close(
            cook(T::RawFraction, 0, None, &r, FormatFlags::NOCAP100).unwrap(),
            150.0
        ));
        // Not a percentage: a rate of 10^9/sec is not capped.
        let b0 = RawSample::for_counter(T::BulkCount, 0, None, &T0).unwrap();
        let b1 = RawSample::for_counter(T::BulkCount, 2_000_000_000, None, &T1).unwrap();
        assert!(close(
            cook(T::BulkCount, 0, Some(&b0), &b1, FormatFlags::NONE).unwrap(),
            1e9
        ));
        // Inverse multi timer: 100 * (4 - 1) = 300 % on four idle-ish items, capped.
        let m0 = RawSample::for_counter(T::MultiTimerInv, 0, Some(4), &T0).unwrap();
        let m1 = RawSample::for_counter(T::MultiTimerInv, 20_000_000, Some(4), &T1).unwrap();
        let m = |flags| cook(T::MultiTimerInv, 0, Some(&m0), &m1, flags).unwrap();
        assert!(close(m(FormatFlags::NONE), 100.0));
        assert!(close(m(FormatFlags::NOCAP100), 300.0));
    }

    #[test]
    fn negative_and_zero_denominators() {
        use CounterType as T;
        let at = |ty, v, f, t: &SampleTimes| RawSample::for_counter(ty, v, f, t).unwrap();
        let cooked = |ty, a: &RawSample, b: &RawSample| cook(ty, 0, Some(a), b, FormatFlags::NONE);

        // The counter went backwards: 1600 -> 1000.
        let e = cooked(
            T::Counter,
            &at(T::Counter, 1600, None, &T0),
            &at(T::Counter, 1000, None, &T1),
        );
        assert_eq!(e, Err(CookError::NegativeValue));
        assert_eq!(CookError::NegativeValue.pdh_status(), 0x8000_07D8);
        assert_eq!(
            cooked(
                T::Delta,
                &at(T::Delta, 5, None, &T0),
                &at(T::Delta, 4, None, &T1)
            ),
            Err(CookError::NegativeValue)
        );

        // The time went backwards: samples swapped.
        let e = cooked(
            T::Timer,
            &at(T::Timer, 0, None, &T1),
            &at(T::Timer, 10, None, &T0),
        );
        assert_eq!(e, Err(CookError::NegativeDenominator));
        assert_eq!(CookError::NegativeDenominator.pdh_status(), 0x8000_07D6);

        // Same time stamp twice.
        let e = cooked(
            T::Counter,
            &at(T::Counter, 0, None, &T1),
            &at(T::Counter, 10, None, &T1),
        );
        assert_eq!(e, Err(CookError::ZeroDenominator));
        let e = cooked(
            T::Queuelen100ns,
            &at(T::Queuelen100ns, 0, None, &T1),
            &at(T::Queuelen100ns, 10, None, &T1),
        );
        assert_eq!(e, Err(CookError::ZeroDenominator));

        // A base that went backwards.
        let e = cooked(
            T::SampleFraction,
            &at(T::SampleFraction, 0, Some(200), &T0),
            &at(T::SampleFraction, 10, Some(100), &T1),
        );
        assert_eq!(e, Err(CookError::NegativeDenominator));
        let e = cooked(
            T::AverageBulk,
            &at(T::AverageBulk, 0, Some(20), &T0),
            &at(T::AverageBulk, 10, Some(10), &T1),
        );
        assert_eq!(e, Err(CookError::NegativeDenominator));

        // A base that did not move: nothing happened, 0 (an idle disk's Avg. Disk sec/Read).
        for ty in [T::AverageTimer, T::AverageBulk, T::SampleFraction] {
            let v = cooked(ty, &at(ty, 7, Some(3), &T0), &at(ty, 7, Some(3), &T1)).unwrap();
            assert!(close(v, 0.0), "{}", ty.name());
        }
        // A zero raw base and a zero multi count give 0 too.
        let r = at(T::RawFraction, 5, Some(0), &T1);
        assert_eq!(
            cook(T::RawFraction, 0, None, &r, FormatFlags::NONE),
            Ok(0.0)
        );
        let v = cooked(
            T::MultiTimer,
            &at(T::MultiTimer, 0, Some(0), &T0),
            &at(T::MultiTimer, 10, Some(0), &T1),
        );
        assert_eq!(v, Ok(0.0));

        // A frequency of zero.
        let zero_freq = SampleTimes { perf_freq: 0, ..T1 };
        let e = cooked(
            T::Counter,
            &at(T::Counter, 0, None, &T0),
            &at(T::Counter, 10, None, &zero_freq),
        );
        assert_eq!(e, Err(CookError::NegativeTimebase(0)));
        assert_eq!(CookError::NegativeTimebase(0).pdh_status(), 0x8000_07D7);
        let e = cooked(
            T::AverageTimer,
            &at(T::AverageTimer, 0, Some(0), &T0),
            &at(T::AverageTimer, 10, Some(1), &zero_freq),
        );
        assert_eq!(e, Err(CookError::NegativeTimebase(0)));

        // Inverse timers whose idle time exceeds the interval are clamped to 0:
        // 100 * (1 - 30 000 000 / 20 000 000) = -50 -> 0.
        let v = cooked(
            T::TimerInv,
            &at(T::TimerInv, 0, None, &T0),
            &at(T::TimerInv, 30_000_000, None, &T1),
        );
        assert_eq!(v, Ok(0.0));
        // 100 * (2 - 50 000 000 / 20 000 000) = -50 -> 0.
        let v = cooked(
            T::MultiTimer100nsInv,
            &at(T::MultiTimer100nsInv, 0, Some(2), &T0),
            &at(T::MultiTimer100nsInv, 50_000_000, Some(2), &T1),
        );
        assert_eq!(v, Ok(0.0));
    }

    #[test]
    fn elapsed_time_uses_the_newer_sample() {
        use CounterType as T;
        // Older sample with another object time and frequency: ignored.
        let stale = SampleTimes {
            object_time: 1,
            object_freq: 7,
            ..T0
        };
        let s0 = RawSample::for_counter(T::ElapsedTime, 9, None, &stale).unwrap();
        let s1 = RawSample::for_counter(T::ElapsedTime, 2000, None, &T1).unwrap();
        // (302 000 - 2000) / 1000.
        let v = cook(T::ElapsedTime, 0, Some(&s0), &s1, FormatFlags::NONE).unwrap();
        assert!(close(v, 300.0));
        // A start time of 0 is "no data": 0 seconds.
        let none = RawSample::for_counter(T::ElapsedTime, 0, None, &T1).unwrap();
        assert_eq!(
            cook(T::ElapsedTime, 0, None, &none, FormatFlags::NONE),
            Ok(0.0)
        );
        // A start time after the object time.
        let future = RawSample::for_counter(T::ElapsedTime, 400_000, None, &T1).unwrap();
        assert_eq!(
            cook(T::ElapsedTime, 0, None, &future, FormatFlags::NONE),
            Err(CookError::NegativeValue)
        );
        // The object frequency must be positive.
        let bad = SampleTimes {
            object_freq: -1,
            ..T1
        };
        let s = RawSample::for_counter(T::ElapsedTime, 2000, None, &bad).unwrap();
        assert_eq!(
            cook(T::ElapsedTime, 0, None, &s, FormatFlags::NONE),
            Err(CookError::NegativeTimebase(-1))
        );
    }

    #[test]
    fn format_flags_and_messages() {
        let both = FormatFlags::NOSCALE | FormatFlags::NOCAP100;
        assert_eq!(both.bits(), 0x9000);
        assert!(both.contains(FormatFlags::NOCAP100));
        assert!(!both.contains(FormatFlags::MULTIPLY_1000));
        assert_eq!(FormatFlags::from_bits(0x2000), FormatFlags::MULTIPLY_1000);
        assert_eq!(both.to_string(), "0x00009000");
        assert_eq!(
            CookError::NeedsTwoSamples(CounterType::Counter).to_string(),
            "`PERF_COUNTER_COUNTER` needs two samples; only one was given"
        );
        assert_eq!(
            CookError::NotCookable(CounterType::Text).to_string(),
            "`PERF_COUNTER_TEXT` (0x00000B00) has no displayable value"
        );
        assert_eq!(
            CookError::MissingFollower {
                counter: CounterType::RawFraction,
                expected: CounterType::RawBase
            }
            .to_string(),
            "`PERF_RAW_FRACTION` needs the value of the following `PERF_RAW_BASE` counter"
        );
    }
}
