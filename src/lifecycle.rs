// SPDX-License-Identifier: MIT OR Apache-2.0
//! Loading and unloading: what `DriverEntry` and `DriverUnload` do, as plain functions the
//! simulator drives on any host. Every counterset is registered through the code pcw-gen
//! generates from `manifest/pcw_driver.man`; if one registration fails, everything registered
//! before it is unregistered and the failure returned (the KCS sample unregisters the wrong
//! set here). Unload closes the dynamic instances, then unregisters in reverse order.

use crate::countersets::pcw_driver::{dynamic_queues, geometric_waves, provider_statistics};
use crate::ffi::{self, NTSTATUS};
use crate::sync::Global;
use crate::{queues, stats, waves};

/// The registrations of a loaded driver (the dynamic queues' is held by [`queues`], under which
/// it creates them). Dropping it unregisters each (NULL-safe); Rust drops fields in declaration
/// order, so they are declared in reverse order of registration.
#[derive(Debug)]
struct Loaded {
    #[expect(dead_code, reason = "held for its Drop, which unregisters the set")]
    statistics: provider_statistics::Registration,
    #[expect(dead_code, reason = "held for its Drop, which unregisters the set")]
    waves: geometric_waves::Registration,
}

static STATE: Global<Option<Loaded>> = Global::new(None);

/// What `DriverEntry` does: resets the statistics, installs the waves and freezes them (their
/// readers then take no lock), registers the three countersets.
///
/// # Errors
/// The first failing `NTSTATUS`; nothing stays registered or installed after a failure.
// An entry point the no-panic check roots at (`pcw-pecheck no-panic`): kept a function of
// its own in the image so the check can find it.
#[inline(never)]
pub fn load() -> Result<(), NTSTATUS> {
    if STATE.read(Option::is_some) {
        return Ok(());
    }
    // Frozen here only if another load is installing them now (DriverEntry runs once; a host
    // test could race two loads): that load's waves stay as they are.
    if waves::REGISTRY.is_frozen() {
        return Err(ffi::status::STATUS_INVALID_DEVICE_STATE);
    }
    stats::STATS.reset(ffi::perf_counter().0);
    let installed = waves::WAVES.into_iter().try_for_each(|(name, wave)| {
        let units: [u16; 16] = ffi::ascii_units(name);
        let len = name.len().min(units.len());
        waves::add(units.get(..len).unwrap_or_default(), wave).map(drop)
    });
    // The benchmark build's waves after them (never in a driver that ships).
    #[cfg(feature = "bench-waves")]
    let installed = installed.and_then(|()| {
        (0..waves::BENCH_WAVES - waves::WAVES.len()).try_for_each(|i| {
            let (name, wave) = waves::bench_wave(i);
            waves::add(&name, wave).map(drop)
        })
    });
    if let Err(status) = installed {
        // SAFETY: not frozen (tested above; only `load` freezes them), and nothing reads the
        // waves before they are registered.
        unsafe { discard_waves() };
        return Err(status);
    }
    // Fixed from here until unload: the callback and the snapshot IOCTL read them lock-free.
    waves::REGISTRY.freeze();
    let registered = register_all();
    match registered {
        Ok((loaded, queue_registration)) => {
            queues::registered(queue_registration);
            STATE.write(|s| *s = Some(loaded));
            Ok(())
        }
        Err(status) => {
            // SAFETY: the waves' registration failed or was dropped (unregistered) by
            // `register_all`, so no callback reads them, and the control device, the snapshot
            // IOCTL's reader, is created only after a successful load.
            unsafe { discard_waves() };
            Err(status)
        }
    }
}

/// Registers the three sets in order; on failure the ones already registered are dropped
/// (unregistered) as this function returns.
fn register_all() -> Result<(Loaded, dynamic_queues::Registration), NTSTATUS> {
    // SAFETY: the waves are frozen (by `load`, before calling this) until `unload` has
    // unregistered the publisher, or until a failed load has dropped its registration.
    let waves = geometric_waves::register_publisher(unsafe { waves::publisher() })?;
    let statistics = provider_statistics::register_publisher(&stats::STATS)?;
    // SAFETY: no callback: the set's instances are made with PcwCreateInstance.
    let queues = unsafe { dynamic_queues::register(None, core::ptr::null_mut()) }?;
    Ok((Loaded { statistics, waves }, queues))
}

/// What `DriverUnload` does. Safe to call when not loaded.
// An entry point the no-panic check roots at (`pcw-pecheck no-panic`): kept a function of
// its own in the image so the check can find it.
#[inline(never)]
pub fn unload() {
    // Close the dynamic instances while their counterset is still registered, then unregister
    // the sets in reverse order of registration.
    queues::close_all();
    queues::unregister();
    let loaded = STATE.write(Option::take);
    drop(loaded);
    // Free the (now empty) registries' tables: pool memory must not outlive the driver image.
    queues::REGISTRY.release();
    // SAFETY: the waves' counterset is unregistered (PCW runs none of its callbacks once
    // `PcwUnregister` has returned), and the control device is deleted before unload is
    // called (the I/O manager unloads a driver only when no request is in its dispatch).
    unsafe { discard_waves() };
}

/// Thaws the waves, removes them and frees their registry's tables (a failed load or an
/// unload).
///
/// # Safety
/// No reader of [`waves::REGISTRY`] (the waves' callback, the snapshot IOCTL) is running or
/// starts until the waves are frozen again ([`waves::REGISTRY`]'s `thaw` contract).
unsafe fn discard_waves() {
    // SAFETY: this function's contract.
    unsafe { waves::REGISTRY.thaw() };
    waves::clear();
    waves::REGISTRY.release();
}

/// Whether the countersets are registered.
pub fn is_loaded() -> bool {
    STATE.read(Option::is_some)
}
