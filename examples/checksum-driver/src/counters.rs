// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver's counters: the `Checksum Driver Algorithms` counterset of
//! `checksum_driver.man`, one instance per algorithm, its values read from the statistics the
//! control device keeps ([`crate::control::Stats`]).

use core::cell::UnsafeCell;
use core::ops::ControlFlow;

use pcw_rt::{CounterMask, Publish, Visitor};

use crate::control::Algorithm;
use crate::utf16;

/// The register/add layer pcw-gen generated from `checksum_driver.man`.
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/checksum_driver.rs"));
}

use generated::checksum_driver::checksum_algorithms::{self as set, Set, Values};

/// The instances' names in UTF-16, in [`Algorithm::ALL`] order (the instance id is the index).
static NAMES: [&[u16]; 2] = [&utf16::<5>("CRC32"), &utf16::<7>("Adler32")];

/// The driver's instances of the counterset: one per algorithm, its id the algorithm's index.
pub struct Algorithms;

impl Publish<Set> for Algorithms {
    fn visit(&self, visitor: &mut Visitor<'_, Set>) -> ControlFlow<()> {
        for (id, (algorithm, name)) in (0u32..).zip(Algorithm::ALL.into_iter().zip(NAMES)) {
            visitor.instance(name, id, |_: CounterMask| values(algorithm))?;
        }
        ControlFlow::Continue(())
    }
}

/// An algorithm's counter values, read from the statistics the control device keeps.
fn values(algorithm: Algorithm) -> Values {
    let stats = algorithm.stats();
    Values {
        requests: stats.requests(),
        bytes: stats.bytes(),
        rejected: stats.rejected(),
    }
}

/// What PCW's callback answers from.
static ALGORITHMS: Algorithms = Algorithms;

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
    let registration = set::register_publisher(&ALGORITHMS)?;
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
