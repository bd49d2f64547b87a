//! pcw-sim: the Windows side of performance counters, played on any host.
//!
//! * [`kernel`]: kernel PCW — `PcwRegister`, `PcwAddInstance`, … as `#[no_mangle]` functions
//!   a host build of the driver links to, and the consumer side that calls its `PCW_CALLBACK`.
//! * [`v1_host`]: Perflib's V1 host — calls `CollectPerformanceData` with guard regions and
//!   `ExtCounterTestLevel` checks, and assembles `PERF_DATA_BLOCK` replies like
//!   `RegQueryValueEx(HKEY_PERFORMANCE_DATA)`.
//! * [`pdh`]: PDH's counter cooking — raw samples to displayed values with the formulas of
//!   REFERENCE.md §2.2, scale, the 100 % cap and PDH's calculation errors.
//! * [`typeperf`]: typeperf's PDH-CSV output (header, sample rows, value format) and counter-path
//!   parsing with wildcards (REFERENCE.md §4.4).

pub mod kernel;
pub mod pdh;
pub mod typeperf;
pub mod v1_host;
