// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 (`HKEY_PERFORMANCE_DATA` / `CollectPerformanceData`) side of performance data:
//! wire structures, the object writer, query classification, the collect contract and the
//! structural validator shared by Perflib's simulated host and `pcw dump`.

pub mod collect;
pub mod from_snapshot;
pub mod query;
pub mod validate;
pub mod wire;
pub mod writer;
