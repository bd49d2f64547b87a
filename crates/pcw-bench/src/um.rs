// SPDX-License-Identifier: MIT OR Apache-2.0
//! The user-mode provider scenario: the "Bench Queue" counterset (1 Depth, a 4-byte value; 2
//! Bytes, an 8-byte value; 3 Packets, a 4-byte value incremented; 4 Level, a 4-byte reference
//! counter; laid out Depth, Packets, Bytes, Level) published by pcw-um and by the C baseline of `c/um.c`, which makes the same Perflib
//! calls Microsoft's samples make. One update is one Perflib setter (or, for the reference
//! counter, one store); the same updates on both sides.

use std::sync::atomic::{AtomicU32, Ordering};

use pcw_um::{ATTRIB_BY_REFERENCE, CounterInfo, CounterSetInfo, Instance, Provider};
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE;
use windows_sys::core::GUID;

use crate::c::{self, UmCRefs};
use crate::utf16;

/// The counter ids.
pub mod ids {
    /// `Depth`: a 4-byte value.
    pub const DEPTH: u32 = 1;
    /// `Bytes`: an 8-byte value.
    pub const BYTES: u32 = 2;
    /// `Packets`: a 4-byte value, incremented.
    pub const PACKETS: u32 = 3;
    /// `Level`: a 4-byte reference counter.
    pub const LEVEL: u32 = 4;
}

const fn counter(id: u32, counter_type: u32, attrib: u64, size: u32, offset: u32) -> CounterInfo {
    CounterInfo {
        id,
        counter_type,
        attrib,
        size,
        detail_level: 100,
        scale: 0,
        offset,
    }
}

/// The counterset as pcw-gen's user-mode code declares one (the C side's template is the same).
pub static SET: CounterSetInfo = CounterSetInfo {
    guid: 0xBE7C_0000_0000_0000_0000_0000_0000_0001,
    instance_type: 2,
    counters: &[
        counter(ids::DEPTH, 0x0001_0000, 0, 4, 0),
        counter(ids::BYTES, 0x0001_0100, 0, 8, 8),
        counter(ids::PACKETS, 0x1041_0400, 0, 4, 4),
        counter(ids::LEVEL, 0x0001_0000, ATTRIB_BY_REFERENCE, 4, 16),
    ],
};

/// The C side's counterset GUID (another set: both providers may run at once under pcw-sim).
pub const C_SET: u128 = 0xBE7C_0000_0000_0000_0000_0000_0000_0002;
/// The providers' GUIDs.
pub const PROVIDER: u128 = 0xBE7C_0000_0000_0000_0000_0000_0000_0000;
/// The C provider's GUID.
pub const C_PROVIDER: u128 = 0xBE7C_0000_0000_0000_0000_0000_0000_00C0;

/// The instance names, `Queue 000000`, ….
pub fn name(i: usize) -> String {
    format!("Queue {i:06}")
}

/// The C provider: its handle and instances (with the structure each binds its reference
/// counter to), stopped on drop.
pub struct CProvider {
    handle: HANDLE,
    set: GUID,
    /// The instances and their reference storage (boxed: Perflib holds their addresses).
    pub instances: Vec<(*mut PERF_COUNTERSET_INSTANCE, Box<UmCRefs>)>,
    names: Vec<Vec<u16>>,
}

impl std::fmt::Debug for CProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CProvider")
            .field("handle", &self.handle)
            .field("instances", &self.instances.len())
            .finish_non_exhaustive()
    }
}

impl CProvider {
    /// The C provider started, with `n` instances.
    ///
    /// # Panics
    /// If Perflib refuses (a bench setup error).
    pub fn start(n: usize) -> Self {
        let (provider, set) = (GUID::from_u128(C_PROVIDER), GUID::from_u128(C_SET));
        // SAFETY: both GUIDs are locals that outlive the call.
        let handle = unsafe { c::um_c_start(&raw const provider, &raw const set) };
        assert!(!handle.is_null(), "C provider started");
        let mut me = Self {
            handle,
            set,
            instances: Vec::new(),
            names: Vec::new(),
        };
        for i in 0..n {
            let wide: Vec<u16> = utf16(&name(i)).into_iter().chain([0]).collect();
            let mut refs = Box::<UmCRefs>::default();
            // SAFETY: a live handle, a local GUID, a NUL-terminated name, and a boxed structure
            // kept (with its address) until the instance is deleted.
            let instance = unsafe {
                c::um_c_create(
                    handle,
                    &raw const me.set,
                    wide.as_ptr(),
                    u32::try_from(i).expect("few"),
                    &raw mut *refs,
                )
            };
            assert!(!instance.is_null(), "C instance {i}");
            me.instances.push((instance, refs));
            me.names.push(wide);
        }
        me
    }

    /// The handle.
    pub fn handle(&self) -> HANDLE {
        self.handle
    }

    /// The counterset GUID.
    pub fn set(&self) -> &GUID {
        &self.set
    }

    /// One instance made and deleted the C way (bound to `refs`); its status.
    pub fn create_delete(&self, name: &[u16], id: u32, refs: &mut UmCRefs) -> u32 {
        // SAFETY: a live handle, the set's GUID, a NUL-terminated name; `refs` outlives the
        // instance, which is deleted before the call returns.
        unsafe { c::um_c_create_delete(self.handle, &raw const self.set, name.as_ptr(), id, refs) }
    }
}

impl Drop for CProvider {
    fn drop(&mut self) {
        // SAFETY: a live handle; stopping deletes the provider's instances.
        unsafe { windows_sys::Win32::System::Performance::PerfStopProvider(self.handle) };
    }
}

/// pcw-um's provider of [`SET`].
///
/// # Panics
/// If Perflib refuses (a bench setup error).
pub fn start() -> Provider {
    Provider::start(PROVIDER, &[&SET]).expect("pcw-um provider started")
}

/// pcw-um's instances of a provider, as a service keeps them.
///
/// # Panics
/// If Perflib refuses (a bench setup error).
pub fn instances(provider: &Provider, n: usize) -> Vec<Instance<'_>> {
    (0..n)
        .map(|i| {
            provider
                .create_instance(&SET, &name(i), u32::try_from(i).expect("few"))
                .expect("pcw-um instance")
        })
        .collect()
}

/// Three updates by pcw-um's checked setters (what pcw-gen's typed setters call): Depth set,
/// Bytes set, Packets + 1.
#[inline(never)]
pub fn update_ours(instance: &Instance<'_>, depth: u32, bytes: u64) -> bool {
    instance.set_u32(ids::DEPTH, depth).is_ok()
        && instance.set_u64(ids::BYTES, bytes).is_ok()
        && instance.increment_u32(ids::PACKETS, 1).is_ok()
}

/// The three updates by the C baseline.
///
/// # Safety
/// `provider` is a live handle ([`CProvider::handle`]) and `instance` one of its instance
/// blocks.
#[inline(never)]
pub unsafe fn update_c(
    provider: HANDLE,
    instance: *mut PERF_COUNTERSET_INSTANCE,
    depth: u32,
    bytes: u64,
) -> bool {
    // SAFETY: per this function's contract.
    unsafe { c::um_c_update(provider, instance, depth, bytes) == 0 }
}

/// The three updates by the C baseline as stores into the block's counter data (no call, no
/// check: what a C provider may do instead of the setters).
///
/// # Safety
/// `instance` is writable with room for the set's counter data after its header (the stand-in
/// Perflib's block, [`crate::noop_block`]: pcw-sim's blocks hold no counter data).
#[inline(never)]
pub unsafe fn update_c_direct(instance: *mut PERF_COUNTERSET_INSTANCE, depth: u32, bytes: u64) {
    // SAFETY: per this function's contract.
    unsafe { c::um_c_update_direct(instance, depth, bytes) };
}

/// The reference counter's update by pcw-um: a store into the atomic it lends.
#[inline(never)]
pub fn store_ours(level: &AtomicU32, value: u32) {
    level.store(value, Ordering::Relaxed);
}

/// The reference counter's update as pcw-gen's typed code makes it: the atomic looked up by id,
/// then the store.
#[inline(never)]
pub fn store_looked_up(instance: &Instance<'_>, value: u32) -> bool {
    instance
        .reference_u32(ids::LEVEL)
        .map(|a| a.store(value, Ordering::Relaxed))
        .is_ok()
}

/// The reference counter's update by the C baseline: a store into its structure.
#[inline(never)]
pub fn store_c(refs: &mut UmCRefs, value: u32) {
    // SAFETY: a live structure.
    unsafe { c::um_c_store(refs, value) };
}

/// One instance made and deleted by pcw-um.
#[inline(never)]
pub fn create_delete_ours(provider: &Provider, name: &str, id: u32) -> bool {
    provider
        .create_instance(&SET, name, id)
        .and_then(Instance::delete)
        .is_ok()
}
