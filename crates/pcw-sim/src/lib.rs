//! pcw-sim: the Windows side of performance counters, played on any host.
//!
//! * [`kernel`]: kernel PCW — `PcwRegister`, `PcwAddInstance`, … as `#[no_mangle]` functions
//!   a host build of the driver links to, and the consumer side that calls its `PCW_CALLBACK`.
//! * [`v1_host`]: Perflib's V1 host — calls `CollectPerformanceData` with guard regions and
//!   `ExtCounterTestLevel` checks, and assembles `PERF_DATA_BLOCK` replies like
//!   `RegQueryValueEx(HKEY_PERFORMANCE_DATA)`.

pub mod kernel;
pub mod v1_host;
