// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 view, for a driver that ships a V1 perf DLL: [`collect`] calls the DLL's
//! `CollectPerformanceData` (its host build, linked into the test) the way Perflib does at
//! `ExtCounterTestLevel` 1 — a buffer between guard regions, grown on `ERROR_MORE_DATA`, every
//! pointer, length and structure of the reply checked — and decodes what came back into
//! [`Object`]s a test can compare with what the driver's counters hold.
//!
//! Opening the DLL (`OpenPerformanceData` with its `Linkage\Export` strings) and routing its
//! requests to the driver are the DLL's business; its tests do that before calling this.

use pcw_core::v1::validate::{self, Expect};

pub use pcw_sim::v1_host::{CollectFn, Host, HostConfig, HostViolation};

/// The largest buffer [`collect`] offers before giving up on `ERROR_MORE_DATA`: 64 MiB.
pub const MAX_BUFFER: u32 = 64 << 20;

/// One object (counterset) of a V1 reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// `ObjectNameTitleIndex`.
    pub title_index: u32,
    /// Whether the object has no instances (`NumInstances` −1): one counter block.
    pub single_instance: bool,
    /// The counter definitions, in order.
    pub counters: Vec<Counter>,
    /// The instances (one, named `""`, for a single-instance object), in order.
    pub instances: Vec<Instance>,
}

/// One counter definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// `CounterNameTitleIndex`.
    pub title_index: u32,
    /// `CounterType` (`winperf.h`).
    pub counter_type: u32,
}

/// One instance and its raw values, one per counter definition (`None` for a size-0 counter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The instance name.
    pub name: String,
    /// The values, in counter-definition order.
    pub values: Vec<Option<u64>>,
}

/// Calls `collect` with `query` (`Global`, `Costly`, or title indexes separated by spaces) as
/// Perflib does, with a buffer grown from 4 KiB until the reply fits, and decodes the reply.
///
/// # Safety
/// `collect` honours the pointer side of its contract well enough not to corrupt memory (it
/// writes only inside the buffer, its guard regions and its two outputs, and keeps none of the
/// pointers); everything else is checked.
///
/// # Errors
/// The first [`HostViolation`] of a call.
pub unsafe fn collect(collect: CollectFn, query: &str) -> Result<Vec<Object>, HostViolation> {
    let host = Host::new(HostConfig {
        check_untouched_on_failure: true,
        ..HostConfig::default()
    });
    let mut capacity = 4096;
    loop {
        // SAFETY: this function's contract.
        let reply = unsafe { host.call_extern(collect, Some(query), capacity) }?;
        if !reply.is_more_data() || capacity >= MAX_BUFFER {
            return Ok(decode(&reply.data));
        }
        capacity = capacity.saturating_mul(2).min(MAX_BUFFER);
    }
}

/// The objects of a reply the host has already checked.
fn decode(data: &[u8]) -> Vec<Object> {
    validate::objects(data, 0, Expect::Data)
        .filter_map(Result::ok)
        .map(|object| {
            let counters: Vec<_> = object.counters().collect();
            Object {
                title_index: object.header().object_name_title_index,
                single_instance: object.is_single_instance(),
                counters: counters
                    .iter()
                    .map(|c| Counter {
                        title_index: c.counter_name_title_index,
                        counter_type: c.counter_type.raw(),
                    })
                    .collect(),
                instances: object
                    .instances()
                    .map(|i| Instance {
                        name: String::from_utf16_lossy(&i.name_utf16().collect::<Vec<u16>>()),
                        values: counters.iter().map(|c| i.value(c)).collect(),
                    })
                    .collect(),
            }
        })
        .collect()
}
