// SPDX-License-Identifier: MIT OR Apache-2.0
//! typeperf's output format: the PDH CSV it prints (header of full counter paths, one row per
//! sample), the tab-separated variant of `-f TSV`, and a strict reader of it, as pure
//! functions.
//!
//! What typeperf prints to the console, as seen in published captures of its output:
//!
//! ```text
//!
//! "(PDH-CSV 4.0)","\\HOST\Processor(_Total)\% Processor Time","\\HOST\Memory\Available MBytes"
//! "04/19/2013 21:43:48.823","0.005660","14015.000000"
//! Exiting, please wait...
//! The command completed successfully.
//! ```
//!
//! * an empty line, then the header: [`HEADER_TAG`] and the full path of every counter,
//!   `\\COMPUTER\Object(Instance)\Counter`, wildcards already expanded ([`header_row`]);
//! * one row per sample: the local time as `MM/DD/YYYY HH:MM:SS.mmm`, then each value with six
//!   decimals ([`sample_row`], [`format_value`]);
//! * every field in double quotes, separated by commas; a quote inside a field is doubled
//!   ([`quote_field`]; typeperf's own fields never contain one);
//! * a value PDH could not compute is the blank field `" "` ([`BLANK_VALUE`]). PDH-CSV logs show
//!   it in the first row for counters that need two samples. typeperf itself collects once
//!   before its first row (`typeperf … -sc 1` prints rates, not blanks), so a faithful driver
//!   primes with one collection; a value that still fails (negative delta, zero interval) is
//!   printed blank. Map a [`crate::cook::cook`] result with `.ok()`.
//! * then the two closing messages [`EXITING_MESSAGE`] and [`COMPLETED_MESSAGE`]. Lines end with
//!   `\r\n` on Windows ([`LINE_END`]); the functions here return lines without the terminator.
//!
//! relog and Performance Monitor logs add the time zone to the first field
//! (`"(PDH-CSV 4.0) (GMT Standard Time)(-60)"`) and print full precision; typeperf's console
//! output has neither. Whether typeperf asks PDH for `PDH_FMT_NOCAP100` is not established by
//! public material; [`FORMAT_FLAGS`] is PDH's default (capped). **(inference)**

use core::fmt;

use crate::cook::FormatFlags;

/// The first field of the header row.
pub const HEADER_TAG: &str = "(PDH-CSV 4.0)";
/// The field printed for a value PDH could not compute (a single space).
pub const BLANK_VALUE: &str = " ";
/// typeperf's message after the last sample.
pub const EXITING_MESSAGE: &str = "Exiting, please wait...";
/// typeperf's last line on success.
pub const COMPLETED_MESSAGE: &str = "The command completed successfully.";
/// The line terminator typeperf writes on Windows.
pub const LINE_END: &str = "\r\n";
/// The format flags to cook typeperf's values with: PDH's default (scaled, capped at 100).
pub const FORMAT_FLAGS: FormatFlags = FormatFlags::NONE;
/// The first field of the header row of the tab-separated format (`-f TSV`).
pub const TSV_HEADER_TAG: &str = "(PDH-TSV 4.0)";
/// The header suffixes of the three raw columns `pcw typeperf --raw` adds after each cooked
/// column: the raw sample's first value, second value and the counter's time base.
pub const RAW_PARTS: [&str; 3] = ["[first value]", "[second value]", "[time base]"];

/// `FILETIME` of the Unix epoch (100 ns units since 1601).
const UNIX_EPOCH_FILETIME: i64 = 116_444_736_000_000_000;

/// Quotes one CSV field: wraps it in double quotes and doubles any quote inside.
pub fn quote_field(field: &str) -> String {
    let mut out = String::with_capacity(field.len() + 2);
    out.push('"');
    for c in field.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// typeperf's header row: [`HEADER_TAG`] and the given full counter paths, quoted and
/// comma-separated, without a line terminator.
pub fn header_row<P: AsRef<str>>(paths: &[P]) -> String {
    let mut row = quote_field(HEADER_TAG);
    for path in paths {
        row.push(',');
        row.push_str(&quote_field(path.as_ref()));
    }
    row
}

/// A value as typeperf prints it, unquoted: six decimals (`12.000000`), or [`BLANK_VALUE`] for
/// `None` and for values that are not finite. `-0.0` prints as `0.000000`.
pub fn format_value(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => {
            // Adding 0.0 turns -0.0 into +0.0; a tiny negative rounds to "-0.000000" in C's
            // printf as in Rust, which is what typeperf would print too.
            format!("{:.6}", v + 0.0)
        }
        _ => BLANK_VALUE.to_owned(),
    }
}

/// One sample row: the time stamp and every value ([`format_value`]), quoted and
/// comma-separated, without a line terminator.
pub fn sample_row(time: &CsvTimestamp, values: &[Option<f64>]) -> String {
    let mut row = quote_field(&time.to_string());
    for value in values {
        row.push(',');
        row.push_str(&quote_field(&format_value(*value)));
    }
    row
}

/// A local date and time as typeperf prints it: `MM/DD/YYYY HH:MM:SS.mmm`.
///
/// Built from a Unix time and a UTC offset the caller supplies, so nothing here reads a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CsvTimestamp {
    /// Year, 1 to 9999.
    pub year: u16,
    /// Month, 1 to 12.
    pub month: u8,
    /// Day of the month, 1 to 31.
    pub day: u8,
    /// Hour, 0 to 23.
    pub hour: u8,
    /// Minute, 0 to 59.
    pub minute: u8,
    /// Second, 0 to 59.
    pub second: u8,
    /// Millisecond, 0 to 999.
    pub millisecond: u16,
}

impl CsvTimestamp {
    /// The local time of `unix_millis` (milliseconds since 1970-01-01 00:00:00 UTC) at
    /// `utc_offset_minutes` east of UTC (for example 60 for CET, −300 for EST), in the
    /// proleptic Gregorian calendar. `None` outside years 1 to 9999.
    pub fn from_unix_millis(unix_millis: i64, utc_offset_minutes: i32) -> Option<Self> {
        let local = unix_millis.checked_add(i64::from(utc_offset_minutes).checked_mul(60_000)?)?;
        let days = local.div_euclid(86_400_000);
        let in_day = local.rem_euclid(86_400_000);
        let (year, month, day) = civil_from_days(days);
        Some(Self {
            year: u16::try_from(year)
                .ok()
                .filter(|y| (1..=9999).contains(y))?,
            month,
            day,
            hour: u8::try_from(in_day / 3_600_000).ok()?,
            minute: u8::try_from(in_day / 60_000 % 60).ok()?,
            second: u8::try_from(in_day / 1000 % 60).ok()?,
            millisecond: u16::try_from(in_day % 1000).ok()?,
        })
    }
}

impl fmt::Display for CsvTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}/{:02}/{:04} {:02}:{:02}:{:02}.{:03}",
            self.month, self.day, self.year, self.hour, self.minute, self.second, self.millisecond
        )
    }
}

/// Year, month and day of a count of days since 1970-01-01 (Howard Hinnant's `civil_from_days`
/// algorithm, proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let month = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u8::try_from(month).unwrap_or(0),
        u8::try_from(day).unwrap_or(0),
    )
}

impl CsvTimestamp {
    /// The row time stamp of a `FILETIME` (100 ns units since 1601), in UTC; `None` outside
    /// the years 1 to 9999.
    pub fn from_filetime(filetime: i64) -> Option<Self> {
        Self::from_unix_millis((filetime - UNIX_EPOCH_FILETIME).div_euclid(10_000), 0)
    }
}

/// Why a line is not a row of typeperf's CSV.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CsvError {
    /// A field does not open with a quote (typeperf quotes every field).
    #[error("field {field} does not start with a quote")]
    Unquoted {
        /// 0-based field number.
        field: usize,
    },
    /// A field's closing quote is missing.
    #[error("field {field} is not closed")]
    Unterminated {
        /// 0-based field number.
        field: usize,
    },
    /// Something other than a comma follows a field.
    #[error("{found:?} after field {field}")]
    Trailing {
        /// 0-based field number.
        field: usize,
        /// The character found.
        found: char,
    },
}

/// Reads one row of typeperf's CSV (every field quoted, `""` inside a field for a quote): the
/// inverse of [`header_row`] and [`sample_row`], strict, for tools and tests that read the output.
///
/// # Errors
/// [`CsvError`] naming the field where the line breaks the format.
pub fn parse_row(line: &str) -> Result<Vec<String>, CsvError> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let field = fields.len();
        if chars.next() != Some('"') {
            return Err(CsvError::Unquoted { field });
        }
        let mut text = String::new();
        loop {
            match chars.next() {
                Some('"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    text.push('"');
                }
                Some('"') => break,
                Some(c) => text.push(c),
                None => return Err(CsvError::Unterminated { field }),
            }
        }
        fields.push(text);
        match chars.next() {
            Some(',') => {}
            None => return Ok(fields),
            Some(found) => return Err(CsvError::Trailing { field, found }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cook::{RawSample, SampleTimes, cook};
    use pcw_core::counter_type::CounterType;

    fn parse_csv_line(line: &str) -> Vec<String> {
        parse_row(line).unwrap()
    }

    #[test]
    fn header_golden() {
        let paths = [
            r"\\HOST\Geometric Waves(Small Wave)\Triangle",
            r"\\HOST\Processor(_Total)\% Processor Time",
        ];
        assert_eq!(
            header_row(&paths),
            concat!(
                r#""(PDH-CSV 4.0)","\\HOST\Geometric Waves(Small Wave)\Triangle","#,
                r#""\\HOST\Processor(_Total)\% Processor Time""#
            )
        );
        assert_eq!(header_row::<&str>(&[]), r#""(PDH-CSV 4.0)""#);
        // Parses back field for field.
        let fields = parse_csv_line(&header_row(&paths));
        assert_eq!(fields, [HEADER_TAG, paths[0], paths[1]]);
    }

    #[test]
    fn row_golden() {
        // 2013-04-19 21:43:48.823 UTC.
        let t = CsvTimestamp::from_unix_millis(1_366_407_828_823, 0).unwrap();
        let row = sample_row(&t, &[Some(12.0), None, Some(0.005_66), Some(176_361_472.0)]);
        assert_eq!(
            row,
            r#""04/19/2013 21:43:48.823","12.000000"," ","0.005660","176361472.000000""#
        );
        assert_eq!(
            parse_csv_line(&row),
            [
                "04/19/2013 21:43:48.823",
                "12.000000",
                " ",
                "0.005660",
                "176361472.000000"
            ]
        );
        assert_eq!(sample_row(&t, &[]), r#""04/19/2013 21:43:48.823""#);
    }

    #[test]
    fn values() {
        assert_eq!(format_value(Some(12.0)), "12.000000");
        assert_eq!(format_value(Some(0.024_353_4)), "0.024353");
        assert_eq!(format_value(Some(2.5e-7)), "0.000000");
        assert_eq!(format_value(Some(1e9)), "1000000000.000000");
        assert_eq!(format_value(Some(-3.25)), "-3.250000");
        assert_eq!(format_value(Some(-0.0)), "0.000000");
        assert_eq!(format_value(None), " ");
        assert_eq!(format_value(Some(f64::NAN)), " ");
        assert_eq!(format_value(Some(f64::INFINITY)), " ");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_field(""), r#""""#);
        assert_eq!(quote_field("a,b"), r#""a,b""#);
        assert_eq!(quote_field(r#"say "hi""#), r#""say ""hi""""#);
        assert_eq!(parse_csv_line(&quote_field(r#"x"",y"#)), [r#"x"",y"#]);
    }

    #[test]
    fn timestamps() {
        let at = |ms, off| CsvTimestamp::from_unix_millis(ms, off).unwrap().to_string();
        assert_eq!(at(0, 0), "01/01/1970 00:00:00.000");
        // One millisecond before the epoch.
        assert_eq!(at(-1, 0), "12/31/1969 23:59:59.999");
        // 2024-02-29 12:00:00 UTC, a leap day; shown at UTC+1 and UTC-5.
        assert_eq!(at(1_709_208_000_000, 0), "02/29/2024 12:00:00.000");
        assert_eq!(at(1_709_208_000_000, 60), "02/29/2024 13:00:00.000");
        assert_eq!(at(1_709_208_000_000, -300), "02/29/2024 07:00:00.000");
        // Crossing midnight backwards into the previous year.
        assert_eq!(at(1_704_067_200_500, -1), "12/31/2023 23:59:00.500");
        // 9999-12-31 23:59:59.999 is the last representable instant.
        assert_eq!(at(253_402_300_799_999, 0), "12/31/9999 23:59:59.999");
        assert_eq!(CsvTimestamp::from_unix_millis(253_402_300_800_000, 0), None);
        assert_eq!(CsvTimestamp::from_unix_millis(i64::MAX, 60), None);
        assert_eq!(CsvTimestamp::from_unix_millis(i64::MIN, 0), None);
    }

    #[test]
    fn whole_output_parses_as_csv() {
        // Two collections of a rate counter and a raw count, cooked and printed.
        let ty = CounterType::Counter;
        let times = |perf_time| SampleTimes {
            perf_time,
            perf_freq: 1000,
            ..SampleTimes::default()
        };
        let s0 = RawSample::for_counter(ty, 10, None, &times(0)).unwrap();
        let s1 = RawSample::for_counter(ty, 40, None, &times(1500)).unwrap();
        let first = cook(ty, 0, None, &s0, FORMAT_FLAGS).ok();
        // (40 - 10) / (1500 / 1000 s) = 20.
        let second = cook(ty, 0, Some(&s0), &s1, FORMAT_FLAGS).ok();
        let t0 = CsvTimestamp::from_unix_millis(1_700_000_000_000, 0).unwrap();
        let t1 = CsvTimestamp::from_unix_millis(1_700_000_001_500, 0).unwrap();
        let lines = [
            String::new(),
            header_row(&[r"\\H\S\Rate", r"\\H\S\Count"]),
            sample_row(&t0, &[first, Some(7.0)]),
            sample_row(&t1, &[second, Some(8.0)]),
        ];
        assert_eq!(lines[2], r#""11/14/2023 22:13:20.000"," ","7.000000""#);
        assert_eq!(
            lines[3],
            r#""11/14/2023 22:13:21.500","20.000000","8.000000""#
        );
        let output = lines.join(LINE_END);
        let rows: Vec<Vec<String>> = output
            .split(LINE_END)
            .filter(|l| !l.is_empty())
            .map(parse_csv_line)
            .collect();
        assert!(rows.iter().all(|r| r.len() == 3));
        assert_eq!(rows[0][0], HEADER_TAG);
    }

    #[test]
    fn timestamps_are_utc_filetimes() {
        let show = |t| CsvTimestamp::from_filetime(t).unwrap().to_string();
        assert_eq!(show(UNIX_EPOCH_FILETIME), "01/01/1970 00:00:00.000");
        // 2026-11-22 00:00:00.123 UTC.
        assert_eq!(
            show(134_397_792_000_000_000 + 1_230_000),
            "11/22/2026 00:00:00.123"
        );
    }
}
