// SPDX-License-Identifier: MIT OR Apache-2.0
//! The "PCW Dynamic Queues" counterset: instances created and closed at run time with
//! `PcwCreateInstance`. PCW reads each queue's counter block whenever a consumer collects, so
//! the block's 64-bit counters are atomics (no torn reads while PCW copies them), and an
//! instance is always closed before its block is freed (xdp-for-windows' rule).

use alloc::boxed::Box;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::countersets::pcw_driver::{Instance, dynamic_queues as set};
use crate::ffi::{self, NTSTATUS, STATUS_INSUFFICIENT_RESOURCES, STATUS_OBJECT_NAME_COLLISION};
use crate::sync::Global;
use pcw_core::registry::{Registry, RegistryError};

/// A queue's counter block, as PCW reads it (bound to the manifest's `QueueCounters` struct;
/// the generated code checks every field's size at compile time).
#[repr(C)]
#[derive(Debug, Default)]
pub struct QueueCounters {
    /// `Packets/sec` (cooked as a rate by consumers).
    pub packets: AtomicU64,
    /// `Bytes Total`.
    pub bytes: AtomicU64,
    /// `Depth`.
    pub depth: AtomicU32,
}

/// One live queue. Field order is drop order: the PCW instance is closed before the block it
/// points at is freed.
#[derive(Debug)]
pub struct Queue {
    instance: Instance,
    counters: Box<QueueCounters>,
}

/// Most queues at once.
pub const MAX_QUEUES: usize = 4096;

/// The live queues, by id.
pub static REGISTRY: Registry<ffi::RegistryLock, Queue> = Registry::new(MAX_QUEUES);

/// The set's registration while the driver is loaded (`lifecycle` registers it and hands it
/// over); queues are created under it.
static REGISTRATION: Global<Option<set::Registration>> = Global::new(None);

/// Keeps the set's registration for the queues created from now on.
pub(crate) fn registered(registration: set::Registration) {
    REGISTRATION.write(|r| *r = Some(registration));
}

/// Unregisters the set (its queues must be closed first: [`close_all`]). Safe when not
/// registered.
pub(crate) fn unregister() {
    let registration = REGISTRATION.write(Option::take);
    drop(registration);
}

/// Why a queue could not be created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The driver's countersets are not registered (not loaded, or unloading).
    NotLoaded,
    /// A queue of that name exists (names compare case-insensitively).
    NameTaken,
    /// Empty or longer than 1023 UTF-16 units.
    BadName,
    /// Too many queues, or no memory.
    NoResources,
    /// `PcwCreateInstance` failed.
    Pcw(NTSTATUS),
}

impl QueueError {
    /// The `NTSTATUS` for this error.
    pub const fn status(self) -> NTSTATUS {
        match self {
            Self::NotLoaded => ffi::status::STATUS_DEVICE_NOT_READY,
            Self::NameTaken => STATUS_OBJECT_NAME_COLLISION,
            Self::BadName => ffi::STATUS_INVALID_PARAMETER_2,
            Self::NoResources => STATUS_INSUFFICIENT_RESOURCES,
            Self::Pcw(status) => status,
        }
    }
}

/// Creates a queue and publishes it to PCW; returns its id.
///
/// # Errors
/// [`QueueError`].
// An entry point the no-panic check roots at (`pcw-pecheck no-panic`): kept a function of
// its own in the image so the check can find it.
#[inline(never)]
pub fn create(name: &[u16]) -> Result<u32, QueueError> {
    if REGISTRY.read(|v| v.by_name(name).is_some()) {
        return Err(QueueError::NameTaken);
    }
    let counters = new_block().ok_or(QueueError::NoResources)?;
    let instance = REGISTRATION
        .read(|r| {
            r.as_ref().map(|registration| {
                let unicode = ffi::unicode(name);
                // SAFETY: the block is heap-allocated, never moves, and is freed only after the
                // instance is closed (`Queue`'s field order); PCW copies the name during the
                // call.
                unsafe { set::create(registration, &unicode, &raw const *counters) }
            })
        })
        .ok_or(QueueError::NotLoaded)?
        .map_err(QueueError::Pcw)?;
    REGISTRY
        .insert(name, Queue { instance, counters })
        .map_err(|e| match e {
            // A racing create of the same name won; our instance is closed as `Queue` drops.
            RegistryError::NameTaken { .. } => QueueError::NameTaken,
            RegistryError::BadName => QueueError::BadName,
            // The queues' registry is never frozen (IOCTLs change it while collections read it).
            RegistryError::Full | RegistryError::NoMemory | RegistryError::Frozen => {
                QueueError::NoResources
            }
        })
}

/// A zeroed counter block on the heap, or `None` when memory ran out (`Box::new` would call
/// the allocation-error handler instead: an abort, in the kernel a bugcheck).
fn new_block() -> Option<Box<QueueCounters>> {
    const { assert!(size_of::<QueueCounters>() != 0) };
    let layout = core::alloc::Layout::new::<QueueCounters>();
    // SAFETY: the layout's size is not zero (asserted above).
    let raw = unsafe { alloc::alloc::alloc_zeroed(layout) };
    #[expect(
        clippy::cast_ptr_alignment,
        reason = "allocated with `QueueCounters`'s layout, so aligned for it"
    )]
    let ptr = raw.cast::<QueueCounters>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with `QueueCounters`'s layout, and all-zero
    // bytes are a valid `QueueCounters` (three atomics at 0, its `Default`).
    Some(unsafe { Box::from_raw(ptr) })
}

/// Closes a queue: its PCW instance first, then its block. `false` if no queue has this id.
pub fn close(id: u32) -> bool {
    REGISTRY.remove(id).is_some()
}

/// Closes every queue (at unload, before the counterset is unregistered).
// An entry point the no-panic check roots at (`pcw-pecheck no-panic`): kept a function of
// its own in the image so the check can find it.
#[inline(never)]
pub fn close_all() {
    loop {
        let Some(id) = REGISTRY.read(|v| v.iter().next().map(pcw_core::registry::Entry::id)) else {
            return;
        };
        REGISTRY.remove(id);
    }
}

/// Records traffic on a queue: `packets` and `bytes` are added, `depth` replaces the depth.
/// `false` if no queue has this id.
pub fn record(id: u32, packets: u64, bytes: u64, depth: u32) -> bool {
    REGISTRY.read(|v| {
        v.get(id).is_some_and(|q| {
            let c = &q.value().counters;
            c.packets.fetch_add(packets, Ordering::Relaxed);
            c.bytes.fetch_add(bytes, Ordering::Relaxed);
            c.depth.store(depth, Ordering::Relaxed);
            true
        })
    })
}

impl Queue {
    /// The queue's counter block.
    pub fn counters(&self) -> &QueueCounters {
        &self.counters
    }

    /// The PCW instance handle.
    pub fn handle(&self) -> ffi::PPCW_INSTANCE {
        self.instance.handle()
    }
}
