// SPDX-License-Identifier: MIT OR Apache-2.0
//! The "Geometric Waves" counterset: the example of Microsoft's `PCW_CALLBACK` reference page
//! (the KCS sample's), done right. Three
//! waves, each an instance with a distinct id that stays the same for as long as the driver is
//! loaded; the `PCW_CALLBACK` honours `InstanceId` (O(1) lookup), `InstanceMask` (linear-time
//! wildcards), `CounterMask` and the consumer's `CancelEvent`, never allocates and never panics.

use crate::countersets::pcw_driver::geometric_waves as set;
use crate::ffi::{
    self, NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, PCW_MASK_INFORMATION,
    STATUS_INSUFFICIENT_RESOURCES, STATUS_OBJECT_NAME_COLLISION, STATUS_SUCCESS,
};
use crate::stats::{Collected, STATS};
use pcw_core::filter::{InstanceFilter, counter_wanted};
use pcw_core::registry::{Registry, RegistryError};

/// One wave: its lowest value and its amplitude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wave {
    /// The value at the bottom of the wave.
    pub minimum: u32,
    /// Peak minus bottom.
    pub amplitude: u32,
}

/// The waves the driver publishes: name, minimum, amplitude (the `PCW_CALLBACK` page's values).
pub const WAVES: [(&str, Wave); 3] = [
    (
        "Small Wave",
        Wave {
            minimum: 40,
            amplitude: 20,
        },
    ),
    (
        "Medium Wave",
        Wave {
            minimum: 30,
            amplitude: 40,
        },
    ),
    (
        "Large Wave",
        Wave {
            minimum: 20,
            amplitude: 60,
        },
    ),
];

/// The live waves.
pub static REGISTRY: Registry<ffi::RegistryLock, Wave> = Registry::new(64);

/// Period of both waves, in seconds.
pub const PERIOD_SECONDS: i64 = 10;

/// Adds a wave; its id is stable until [`remove`].
///
/// # Errors
/// `STATUS_OBJECT_NAME_COLLISION` for a name in use (compared case-insensitively),
/// `STATUS_INSUFFICIENT_RESOURCES` when the registry is full or memory ran out, and
/// `STATUS_INVALID_PARAMETER_2` for an empty or over-long name.
pub fn add(name: &[u16], wave: Wave) -> Result<u32, NTSTATUS> {
    REGISTRY.insert(name, wave).map_err(|e| match e {
        RegistryError::NameTaken { .. } => STATUS_OBJECT_NAME_COLLISION,
        RegistryError::BadName => ffi::STATUS_INVALID_PARAMETER_2,
        RegistryError::Full | RegistryError::NoMemory => STATUS_INSUFFICIENT_RESOURCES,
    })
}

/// Removes a wave; `false` if no wave has this id.
pub fn remove(id: u32) -> bool {
    REGISTRY.remove(id).is_some()
}

/// Removes every wave (at unload).
pub fn clear() {
    let ids: [u32; 64] = REGISTRY.read(|v| {
        let mut ids = [u32::MAX; 64];
        for (slot, e) in ids.iter_mut().zip(v.iter()) {
            *slot = e.id();
        }
        ids
    });
    for id in ids.into_iter().filter(|id| *id != u32::MAX) {
        REGISTRY.remove(id);
    }
}

/// The wave's values at `time` (100 ns units), computing only the counters `counter_mask`
/// asks for (the others stay 0, as the `CounterMask` contract allows).
pub fn values(wave: Wave, time: i64, counter_mask: u64) -> set::GeometricWaveValues {
    // Position in the period, 0..10; the triangle falls then rises, the square is high for the
    // first half.
    let index = u32::try_from((time / 10_000_000).rem_euclid(PERIOD_SECONDS)).unwrap_or(0);
    let mut v = set::GeometricWaveValues::default();
    if counter_wanted(counter_mask, set::ids::WAVE_TRIANGLE) {
        v.triangle = wave.minimum + wave.amplitude * 5u32.abs_diff(index) / 5;
    }
    if counter_wanted(counter_mask, set::ids::WAVE_SQUARE) {
        v.square = wave.minimum + if index < 5 { wave.amplitude } else { 0 };
    }
    v
}

/// Adds every wave of `registry` the query selects to PCW's buffer; returns the first failure of
/// `PcwAddInstance`, or success.
fn answer(
    registry: &Registry<ffi::RegistryLock, Wave>,
    mask: &PCW_MASK_INFORMATION,
    collect: bool,
) -> NTSTATUS {
    // SAFETY: PCW passes a NULL or valid instance mask that lives across the callback.
    let name_mask = unsafe { ffi::units(mask.InstanceMask) };
    let filter = InstanceFilter::new(mask.InstanceId, name_mask);
    let started = if collect { STATS.start() } else { None };
    let now = if collect { ffi::system_time() } else { 0 };
    let mut counted = Collected::default();
    let status = registry.read(|view| {
        let mut add = |entry: &pcw_core::registry::Entry<Wave>| -> NTSTATUS {
            // Poll the cancel event before the first instance and every 16th after it.
            // SAFETY: PCW passes NULL or a valid event that lives across the callback.
            if counted.considered % 16 == 0 && unsafe { ffi::cancelled(mask.CancelEvent) } {
                return ffi::STATUS_CANCELLED;
            }
            counted.considered = counted.considered.saturating_add(1);
            if !filter.selects(entry.name(), entry.id()) {
                return STATUS_SUCCESS;
            }
            let name = ffi::unicode(entry.name());
            let status = if collect {
                let values = values(*entry.value(), now, mask.CounterMask);
                // SAFETY: `mask.Buffer` is this callback's PCW buffer; the name and the block
                // live across the call, in which PCW copies them.
                unsafe { set::add(mask.Buffer, &name, entry.id(), &values) }
            } else {
                // SAFETY: as above, without values (EnumerateInstances).
                unsafe { set::enumerate(mask.Buffer, &name, entry.id()) }
            };
            if status >= 0 {
                counted.returned = counted.returned.saturating_add(1);
            }
            status
        };
        match filter.single_id() {
            // One id asked for: look it up instead of walking every instance.
            Some(id) => view.get(id).map_or(STATUS_SUCCESS, &mut add),
            None => view
                .iter()
                .map(&mut add)
                .find(|s| *s < 0)
                .unwrap_or(STATUS_SUCCESS),
        }
    });
    if collect {
        STATS.record(started, counted);
    }
    status
}

/// The counterset's `PCW_CALLBACK`: [`respond`] over [`REGISTRY`].
///
/// # Safety
/// Called by PCW with a valid information block for `kind`.
pub unsafe extern "system" fn callback(
    kind: PCW_CALLBACK_TYPE,
    info: *const PCW_CALLBACK_INFORMATION,
    _context: *const core::ffi::c_void,
) -> NTSTATUS {
    // SAFETY: forwarded from PCW under this function's contract.
    unsafe { respond(&REGISTRY, kind, info) }
}

/// What [`callback`] does, over any registry of waves. The driver has one, [`REGISTRY`], limited
/// to 64 waves; the benchmarks (crates/pcw-bench) run this same code over registries of up to
/// 100 000 instances.
///
/// # Safety
/// `info` is NULL or a valid information block for `kind`, as PCW passes it to a callback.
pub unsafe fn respond(
    registry: &Registry<ffi::RegistryLock, Wave>,
    kind: PCW_CALLBACK_TYPE,
    info: *const PCW_CALLBACK_INFORMATION,
) -> NTSTATUS {
    // SAFETY: NULL or a valid information block (contract).
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_SUCCESS;
    };
    match kind {
        ffi::PcwCallbackEnumerateInstances => {
            // SAFETY: the EnumerateInstances member is the active one for this kind.
            answer(registry, unsafe { &info.EnumerateInstances }, false)
        }
        ffi::PcwCallbackCollectData => {
            // SAFETY: the CollectData member is the active one for this kind.
            answer(registry, unsafe { &info.CollectData }, true)
        }
        _ => STATUS_SUCCESS,
    }
}
