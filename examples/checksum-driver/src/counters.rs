// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver's counters: the `Checksum Driver Algorithms` counterset of
//! `checksum_driver.man`, one instance per algorithm, its values read from the statistics the
//! control device keeps ([`crate::control::Stats`]).

use core::cell::UnsafeCell;
use core::ffi::c_void;

use crate::control::Algorithm;

/// The register/add layer pcw-gen generated from `checksum_driver.man`.
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/checksum_driver.rs"));
}

use generated::checksum_driver::checksum_algorithms as set;

/// The instances' names in UTF-16, in [`Algorithm::ALL`] order (the instance id is the index).
static NAMES: [&[u16]; 2] = [
    &[
        b'C' as u16,
        b'R' as u16,
        b'C' as u16,
        b'3' as u16,
        b'2' as u16,
    ],
    &[
        b'A' as u16,
        b'd' as u16,
        b'l' as u16,
        b'e' as u16,
        b'r' as u16,
        b'3' as u16,
        b'2' as u16,
    ],
];

/// `PCW_ANY_INSTANCE_ID`.
const ANY_INSTANCE_ID: u32 = u32::MAX;

/// The counterset's `PCW_CALLBACK`: every algorithm's instance, or the one `InstanceId` names;
/// PCW applies `InstanceMask` itself.
unsafe extern "system" fn callback(
    kind: pcw_rt::PCW_CALLBACK_TYPE,
    info: *const pcw_rt::PCW_CALLBACK_INFORMATION,
    _context: *const c_void,
) -> pcw_rt::NTSTATUS {
    let enumerate = kind == pcw_rt::PcwCallbackEnumerateInstances;
    if !enumerate && kind != pcw_rt::PcwCallbackCollectData {
        return pcw_rt::STATUS_SUCCESS;
    }
    // SAFETY: PCW passes valid information for the call; for both kinds the active member is a
    // PCW_MASK_INFORMATION.
    let Some(mask) = (unsafe { info.as_ref() }).map(|i| {
        // SAFETY: as above: `CollectData` and `EnumerateInstances` share one layout.
        unsafe { i.CollectData }
    }) else {
        return pcw_rt::STATUS_SUCCESS;
    };
    for (id, (algorithm, name)) in (0u32..).zip(Algorithm::ALL.into_iter().zip(NAMES)) {
        if mask.InstanceId != ANY_INSTANCE_ID && mask.InstanceId != id {
            continue;
        }
        let name = pcw_rt::unicode(name);
        let status = if enumerate {
            // SAFETY: the buffer PCW passed to this running callback.
            unsafe { set::enumerate(mask.Buffer, &name, id) }
        } else {
            let stats = algorithm.stats();
            let values = set::Values {
                requests: stats.requests(),
                bytes: stats.bytes(),
                rejected: stats.rejected(),
            };
            // SAFETY: as above.
            unsafe { set::add(mask.Buffer, &name, id, &values) }
        };
        if status < 0 {
            return status;
        }
    }
    pcw_rt::STATUS_SUCCESS
}

/// The registration, between `DriverEntry` and `DriverUnload`.
struct Slot(UnsafeCell<Option<set::Registration>>);

// SAFETY: only `register` and `unregister` touch the slot, and the I/O manager never runs
// `DriverEntry` and `DriverUnload` at the same time.
unsafe impl Sync for Slot {}

static REGISTRATION: Slot = Slot(UnsafeCell::new(None));

/// Registers the counterset (from `DriverEntry`).
///
/// # Errors
/// `PcwRegister`'s status.
pub fn register() -> Result<(), pcw_rt::NTSTATUS> {
    // SAFETY: `callback` ignores its context and stays valid while the image is loaded, which
    // outlasts the registration (dropped in `DriverUnload` at the latest).
    let registration = unsafe { set::register(Some(callback), core::ptr::null_mut()) }?;
    // SAFETY: `DriverEntry` and `DriverUnload` never overlap (see `Slot`).
    unsafe { *REGISTRATION.0.get() = Some(registration) };
    Ok(())
}

/// Unregisters the counterset (from `DriverUnload`, or a failing `DriverEntry`).
pub fn unregister() {
    // SAFETY: as in `register`.
    let registration = unsafe { (*REGISTRATION.0.get()).take() };
    drop(registration);
}
