// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-um: a safe runtime for user-mode Perflib V2 counter providers — what a Rust service
//! depends on to publish counters declared in a `providerType="userMode"` manifest, usually
//! through the typed module pcw-gen generates from that manifest.
//!
//! * [`Provider::start`] calls `PerfStartProviderEx` and `PerfSetCounterSetInfo` for every
//!   counterset; dropping the provider calls `PerfStopProvider`.
//! * [`Provider::create_instance`] calls `PerfCreateInstance` and returns an [`Instance`]
//!   borrowing the provider, so no instance outlives it (use after stop does not compile);
//!   dropping the instance (or [`Instance::delete`]) calls `PerfDeleteInstance`.
//! * value counters: [`Instance::set_u32`]/[`Instance::set_u64`] and the increment/decrement
//!   forms (`PerfSetULongCounterValue` …); the counter id and value size are checked against
//!   the counterset's template first, so a wrong size or unknown id is an [`Error`], never a
//!   call Perflib would misinterpret.
//! * `reference` counters: at creation the instance allocates one atomic slot per counter of the
//!   template (a single allocation, made only for a set that has reference counters) and hands
//!   each reference counter's address to `PerfSetCounterRefValue`; the atomics live in the
//!   instance, which deletes the Perflib instance before freeing them. [`Instance::reference_u32`]
//!   and [`Instance::reference_u64`] lend them.
//! * the value setters allocate nothing and check a counter id below 64 with one bit test (the
//!   instance records, at creation, which ids are value counters of which size); a short ASCII
//!   instance name is converted on the stack.
//! * `callback="custom"`: [`Provider::start_with`] routes Perflib's `PERF_ADD_COUNTER`,
//!   `PERF_REMOVE_COUNTER`, `PERF_ENUM_INSTANCES`, `PERF_COLLECT_START` and `PERF_COLLECT_END`
//!   notifications to a [`Notifications`] implementation, by counterset GUID.
//!
//! # The FFI facade
//!
//! Every Perflib call goes through the private `sys` module, which names windows-sys'
//! `Win32_System_Performance` bindings. On Windows they link to `advapi32.dll`; on any other
//! host the same symbols resolve to pcw-sim's simulated Perflib (`pcw_sim::usermode`) in a
//! binary that links pcw-sim, so the code under test is the code Windows runs.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex, PoisonError};

mod sys {
    pub(crate) use windows_sys::Win32::Foundation::{GetLastError, HANDLE};
    pub(crate) use windows_sys::Win32::System::Performance::{
        PERF_ADD_COUNTER, PERF_COLLECT_END, PERF_COLLECT_START, PERF_COUNTER_IDENTITY,
        PERF_COUNTER_INFO, PERF_COUNTERSET_INFO, PERF_COUNTERSET_INSTANCE, PERF_ENUM_INSTANCES,
        PERF_PROVIDER_CONTEXT, PERF_REMOVE_COUNTER, PerfCreateInstance,
        PerfDecrementULongCounterValue, PerfDecrementULongLongCounterValue, PerfDeleteInstance,
        PerfIncrementULongCounterValue, PerfIncrementULongLongCounterValue, PerfSetCounterRefValue,
        PerfSetCounterSetInfo, PerfSetULongCounterValue, PerfSetULongLongCounterValue,
        PerfStartProviderEx, PerfStopProvider,
    };
    pub(crate) use windows_sys::core::GUID;
}

/// `PERF_ATTRIB_BY_REFERENCE`: the counter's value is read through an address.
pub const ATTRIB_BY_REFERENCE: u64 = 1;
/// `PERF_ATTRIB_NO_DISPLAYABLE`.
pub const ATTRIB_NO_DISPLAYABLE: u64 = 2;
/// `PERF_ATTRIB_NO_GROUP_SEPARATOR`.
pub const ATTRIB_NO_GROUP_SEPARATOR: u64 = 4;
/// `PERF_ATTRIB_DISPLAY_AS_REAL`.
pub const ATTRIB_DISPLAY_AS_REAL: u64 = 8;
/// `PERF_ATTRIB_DISPLAY_AS_HEX`.
pub const ATTRIB_DISPLAY_AS_HEX: u64 = 16;

/// One counter of a counterset template (`PERF_COUNTER_INFO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterInfo {
    /// `CounterId`.
    pub id: u32,
    /// `Type`: the V1 counter type.
    pub counter_type: u32,
    /// `Attrib`: `ATTRIB_*` bits.
    pub attrib: u64,
    /// `Size`: 4 or 8 bytes.
    pub size: u32,
    /// `DetailLevel`: 100 or 200.
    pub detail_level: u32,
    /// `Scale`: the default scale.
    pub scale: i32,
    /// `Offset`.
    pub offset: u32,
}

impl CounterInfo {
    /// Whether the counter is read by reference.
    pub fn by_reference(&self) -> bool {
        self.attrib & ATTRIB_BY_REFERENCE != 0
    }
}

/// A counterset template (`PERF_COUNTERSET_INFO` and its counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterSetInfo {
    /// The counterset GUID (big-endian `u128`).
    pub guid: u128,
    /// `InstanceType` (`PERF_COUNTERSET_SINGLE_INSTANCE` …).
    pub instance_type: u32,
    /// The counters, in manifest order.
    pub counters: &'static [CounterInfo],
}

impl CounterSetInfo {
    fn counter(&self, id: u32) -> Result<(usize, &CounterInfo), Error> {
        self.counters
            .iter()
            .enumerate()
            .find(|(_, c)| c.id == id)
            .ok_or(Error::UnknownCounter { set: self.guid, id })
    }
}

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Perflib call failed.
    #[error("`{operation}` failed with win32 error {code}")]
    Win32 {
        /// The function called.
        operation: &'static str,
        /// Its Win32 error code.
        code: u32,
    },
    /// The counterset has no counter with this id.
    #[error("counterset {set:#034x} has no counter {id}")]
    UnknownCounter {
        /// The counterset GUID.
        set: u128,
        /// The id asked for.
        id: u32,
    },
    /// The value's size is not the counter's.
    #[error("counter {id} holds {size}-byte values; a {given}-byte value was given")]
    WrongSize {
        /// The counter id.
        id: u32,
        /// The counter's size.
        size: u32,
        /// The size given.
        given: u32,
    },
    /// A value setter was used on a `reference` counter, or a reference asked of a value
    /// counter.
    #[error("counter {id} is {} counter", if *by_reference { "a `reference`" } else { "not a `reference`" })]
    Reference {
        /// The counter id.
        id: u32,
        /// Whether the counter is a reference counter.
        by_reference: bool,
    },
    /// The counterset was not started with this provider.
    #[error("counterset {0:#034x} is not one of this provider's")]
    UnknownCounterSet(u128),
    /// The instance name is empty, too long or contains a NUL.
    #[error("instance name `{0}` is empty, longer than 1023 characters or contains a nul")]
    InstanceName(String),
}

/// A notification Perflib sends a `callback="custom"` provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// `PERF_ADD_COUNTER`: a consumer added counter `counter` (`u32::MAX`: all).
    AddCounter {
        /// The counterset GUID.
        set: u128,
        /// The counter id.
        counter: u32,
    },
    /// `PERF_REMOVE_COUNTER`.
    RemoveCounter {
        /// The counterset GUID.
        set: u128,
        /// The counter id.
        counter: u32,
    },
    /// `PERF_ENUM_INSTANCES`: a consumer lists the set's instances.
    EnumInstances {
        /// The counterset GUID.
        set: u128,
    },
    /// `PERF_COLLECT_START`: a collection of the set begins.
    CollectStart {
        /// The counterset GUID.
        set: u128,
    },
    /// `PERF_COLLECT_END`: it ended.
    CollectEnd {
        /// The counterset GUID.
        set: u128,
    },
}

/// The receiver of a `callback="custom"` provider's notifications. Return a Win32 code
/// (`0` = `ERROR_SUCCESS`); Perflib treats a failure of `PERF_ADD_COUNTER` as refusing the
/// counter.
pub trait Notifications: Send + Sync {
    /// One notification.
    fn notify(&self, request: Request) -> u32;
}

/// Handlers by counterset GUID: Perflib's callback has no context argument.
static HANDLERS: Mutex<Vec<(u128, Arc<dyn Notifications>)>> = Mutex::new(Vec::new());

fn guid(v: u128) -> sys::GUID {
    sys::GUID::from_u128(v)
}

fn guid_value(g: &sys::GUID) -> u128 {
    (u128::from(g.data1) << 96)
        | (u128::from(g.data2) << 80)
        | (u128::from(g.data3) << 64)
        | u128::from(u64::from_be_bytes(g.data4))
}

unsafe extern "system" fn control_callback(code: u32, buffer: *mut c_void, size: u32) -> u32 {
    if buffer.is_null() || (size as usize) < size_of::<sys::PERF_COUNTER_IDENTITY>() {
        return 0;
    }
    // SAFETY: Perflib passes a `PERF_COUNTER_IDENTITY` of `size` bytes (checked above).
    let identity = unsafe { buffer.cast::<sys::PERF_COUNTER_IDENTITY>().read_unaligned() };
    let set = guid_value(&identity.CounterSetGuid);
    let counter = identity.CounterId;
    let request = match code {
        sys::PERF_ADD_COUNTER => Request::AddCounter { set, counter },
        sys::PERF_REMOVE_COUNTER => Request::RemoveCounter { set, counter },
        sys::PERF_ENUM_INSTANCES => Request::EnumInstances { set },
        sys::PERF_COLLECT_START => Request::CollectStart { set },
        sys::PERF_COLLECT_END => Request::CollectEnd { set },
        _ => return 0,
    };
    let handler = HANDLERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(s, _)| *s == set)
        .map(|(_, h)| Arc::clone(h));
    handler.map_or(0, |h| h.notify(request))
}

/// Appends the bytes of a padding-free `repr(C)` Perflib structure.
fn push_bytes<T: Copy>(out: &mut Vec<u8>, value: &T) {
    // SAFETY: `value` is a live `T` of `size_of::<T>()` bytes; the Perflib structures passed
    // here have no padding, so every byte is initialised.
    let bytes = unsafe {
        std::slice::from_raw_parts(std::ptr::from_ref(value).cast::<u8>(), size_of::<T>())
    };
    out.extend_from_slice(bytes);
}

#[inline]
fn check(operation: &'static str, code: u32) -> Result<(), Error> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::Win32 { operation, code })
    }
}

/// A started provider. Stopped (`PerfStopProvider`) on drop; instances borrow it.
#[derive(Debug)]
pub struct Provider {
    handle: sys::HANDLE,
    sets: Vec<Template>,
    routed: bool,
}

/// A counterset given to Perflib, with what its instances are made from, worked out once at
/// start rather than at every [`Provider::create_instance`].
#[derive(Clone, Copy, Debug)]
struct Template {
    set: &'static CounterSetInfo,
    kinds: Kinds,
    /// The reference slots an instance allocates ([`Kinds::slots`]).
    slots: usize,
    /// Whether they are indexed by id ([`Kinds::refs_by_id`]).
    by_id: bool,
}

impl Template {
    fn of(set: &'static CounterSetInfo) -> Self {
        let kinds = Kinds::of(set);
        Self {
            set,
            kinds,
            slots: kinds.slots(set),
            by_id: kinds.refs_by_id(set),
        }
    }
}

// SAFETY: the handle is an opaque Perflib token; Perflib's functions may be called from any
// thread with it.
unsafe impl Send for Provider {}
// SAFETY: as above; `&Provider` only passes the handle to thread-safe Perflib functions.
unsafe impl Sync for Provider {}

impl Provider {
    /// `PerfStartProviderEx` without a callback, then `PerfSetCounterSetInfo` per set.
    ///
    /// # Errors
    /// [`Error::Win32`] naming the call that failed (the provider is stopped again).
    pub fn start(provider: u128, sets: &[&'static CounterSetInfo]) -> Result<Self, Error> {
        Self::start_inner(provider, sets, None)
    }

    /// As [`Provider::start`], routing `callback="custom"` notifications for `sets` to
    /// `handler`.
    ///
    /// # Errors
    /// As [`Provider::start`].
    pub fn start_with(
        provider: u128,
        sets: &[&'static CounterSetInfo],
        handler: Arc<dyn Notifications>,
    ) -> Result<Self, Error> {
        Self::start_inner(provider, sets, Some(handler))
    }

    fn start_inner(
        provider: u128,
        sets: &[&'static CounterSetInfo],
        handler: Option<Arc<dyn Notifications>>,
    ) -> Result<Self, Error> {
        let mut context = sys::PERF_PROVIDER_CONTEXT {
            ContextSize: u32::try_from(size_of::<sys::PERF_PROVIDER_CONTEXT>()).unwrap_or(0),
            ..Default::default()
        };
        let routed = handler.is_some();
        if let Some(h) = handler {
            context.ControlCallback = Some(control_callback);
            let mut handlers = HANDLERS.lock().unwrap_or_else(PoisonError::into_inner);
            for set in sets {
                handlers.push((set.guid, Arc::clone(&h)));
            }
        }
        let mut handle: sys::HANDLE = std::ptr::null_mut();
        let provider_guid = guid(provider);
        // SAFETY: all three pointers are valid locals for the call.
        let code = unsafe {
            sys::PerfStartProviderEx(
                &raw const provider_guid,
                &raw const context,
                &raw mut handle,
            )
        };
        let me = Self {
            handle,
            sets: Vec::new(),
            routed,
        };
        if let Err(e) = check("PerfStartProviderEx", code) {
            me.unroute(|guid| sets.iter().any(|set| set.guid == guid));
            std::mem::forget(me);
            return Err(e);
        }
        let mut me = me;
        // Recorded first, so a failure below unroutes every set when `me` drops (and stops).
        me.sets = sets.iter().map(|set| Template::of(set)).collect();
        for set in sets {
            me.add_set(provider_guid, set)?;
        }
        Ok(me)
    }

    fn add_set(&mut self, provider: sys::GUID, set: &'static CounterSetInfo) -> Result<(), Error> {
        // The template: a `PERF_COUNTERSET_INFO` followed by its `PERF_COUNTER_INFO`s (neither
        // has padding), copied into a u64 buffer so both are aligned.
        let info = sys::PERF_COUNTERSET_INFO {
            CounterSetGuid: guid(set.guid),
            ProviderGuid: provider,
            NumCounters: u32::try_from(set.counters.len()).unwrap_or(u32::MAX),
            InstanceType: set.instance_type,
        };
        let mut bytes = Vec::new();
        push_bytes(&mut bytes, &info);
        for c in set.counters {
            let counter = sys::PERF_COUNTER_INFO {
                CounterId: c.id,
                Type: c.counter_type,
                Attrib: c.attrib,
                Size: c.size,
                DetailLevel: c.detail_level,
                Scale: c.scale,
                Offset: c.offset,
            };
            push_bytes(&mut bytes, &counter);
        }
        let size = bytes.len();
        let mut buffer = vec![0u64; size.div_ceil(8)];
        // SAFETY: the buffer holds at least `size` bytes; the two allocations do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.as_mut_ptr().cast::<u8>(), size);
        }
        // SAFETY: the handle is live; the template is valid for `size` bytes and 8-aligned.
        let code = unsafe {
            sys::PerfSetCounterSetInfo(
                self.handle,
                buffer.as_mut_ptr().cast(),
                u32::try_from(size).unwrap_or(u32::MAX),
            )
        };
        check("PerfSetCounterSetInfo", code)
    }

    /// Forgets the notification routes of the sets whose GUIDs `listed` accepts.
    fn unroute(&self, listed: impl Fn(u128) -> bool) {
        if self.routed {
            HANDLERS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|(s, _)| !listed(*s));
        }
    }

    /// `PerfCreateInstance` of `set` named `name` with id `id`; reference counters are bound
    /// to atomics the instance owns. The instance follows the template given to Perflib at
    /// start for `set`'s GUID (Perflib checks counter ids against that one).
    ///
    /// # Errors
    /// [`Error::UnknownCounterSet`], [`Error::InstanceName`], or [`Error::Win32`] with
    /// `GetLastError`'s code (`ERROR_ALREADY_EXISTS` for a duplicate instance, …).
    pub fn create_instance(
        &self,
        set: &'static CounterSetInfo,
        name: &str,
        id: u32,
    ) -> Result<Instance<'_>, Error> {
        let Some(template) = self.sets.iter().find(|t| t.set.guid == set.guid) else {
            return Err(Error::UnknownCounterSet(set.guid));
        };
        // The name as NUL-terminated UTF-16: on the stack when it is short ASCII (the usual
        // case: no allocation), else on the heap; at most 1023 units and the NUL.
        let mut short = [0u16; SHORT_NAME];
        let long: Vec<u16>;
        let wide: &[u16] =
            if (1..SHORT_NAME).contains(&name.len()) && widen_ascii(name.as_bytes(), &mut short) {
                // The terminator is already 0.
                &short[..=name.len()]
            } else {
                if name.is_empty() || name.contains('\0') {
                    return Err(Error::InstanceName(name.to_owned()));
                }
                long = name.encode_utf16().chain(Some(0)).collect();
                &long
            };
        if wide.len() > 1024 {
            return Err(Error::InstanceName(name.to_owned()));
        }
        let set_guid = guid(set.guid);
        // SAFETY: the handle is live, the GUID a local, the name NUL-terminated.
        let block =
            unsafe { sys::PerfCreateInstance(self.handle, &raw const set_guid, wide.as_ptr(), id) };
        if block.is_null() {
            // SAFETY: no preconditions.
            let code = unsafe { sys::GetLastError() };
            return Err(Error::Win32 {
                operation: "PerfCreateInstance",
                code,
            });
        }
        let instance = Instance {
            handle: self.handle,
            provider: PhantomData,
            block,
            set: template.set,
            kinds: template.kinds,
            // Reference counters only, one allocation for all of them: a set without them
            // allocates nothing here.
            refs: (0..template.slots).map(|_| AtomicU64::new(0)).collect(),
        };
        if template.slots == 0 {
            return Ok(instance);
        }
        for (i, c) in template.set.counters.iter().enumerate() {
            if !c.by_reference() {
                continue;
            }
            let index = if template.by_id { c.id as usize } else { i };
            let Some(slot) = instance.refs.get(index) else {
                continue;
            };
            let address = slot.as_ptr().cast_const().cast::<c_void>();
            // SAFETY: live handle and block; the address stays valid until the instance is
            // deleted (the slots are freed only after `PerfDeleteInstance`, in `Drop`).
            let code = unsafe { sys::PerfSetCounterRefValue(self.handle, block, c.id, address) };
            // On failure the instance is dropped: deleted before its slots are freed.
            check("PerfSetCounterRefValue", code)?;
        }
        Ok(instance)
    }
}

/// Widens `bytes` into the first units of `out` and tells whether they were all ASCII and none
/// NUL (if not, what was written is to be ignored). One pass with no early exit, so the
/// compiler can check and widen several bytes at a time.
#[inline]
fn widen_ascii(bytes: &[u8], out: &mut [u16]) -> bool {
    let mut outside = 0u8;
    for (unit, &byte) in out.iter_mut().zip(bytes) {
        *unit = u16::from(byte);
        // A byte of 0x80 or more has its top bit set, and so has a NUL once 1 is taken from it.
        outside |= byte | byte.wrapping_sub(1);
    }
    outside < 0x80 && out.len() > bytes.len()
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.unroute(|guid| self.sets.iter().any(|t| t.set.guid == guid));
        // SAFETY: the handle came from a successful `PerfStartProviderEx` and is stopped once.
        let _ = unsafe { sys::PerfStopProvider(self.handle) };
    }
}

/// A counterset instance (`PerfCreateInstance`), deleted on drop. It borrows its provider, so
/// it cannot outlive `PerfStopProvider`; [`Instance::delete`] consumes it, so a deleted
/// instance cannot be used.
#[derive(Debug)]
pub struct Instance<'p> {
    /// The provider's handle (kept here: a setter passes it without reaching the provider).
    handle: sys::HANDLE,
    /// Borrows the provider: the instance cannot outlive `PerfStopProvider`.
    provider: PhantomData<&'p Provider>,
    block: *mut sys::PERF_COUNTERSET_INSTANCE,
    set: &'static CounterSetInfo,
    /// Which ids below 64 are value counters of which size, worked out at creation.
    kinds: Kinds,
    /// The reference counters' values, one 8-byte slot each (a 4-byte counter uses its first
    /// 4): indexed by id when every reference counter's id is below 64, else by template
    /// position; empty without reference counters.
    refs: Box<[AtomicU64]>,
}

/// The value and reference counters of a counterset with ids below 64, by size: one bit per id,
/// so a setter checks its id and size with one bit test, and a reference counter's slot is found
/// by its id (other ids are looked up in the template).
#[derive(Clone, Copy, Debug, Default)]
struct Kinds {
    value32: u64,
    value64: u64,
    /// The reference counters, when every one of them has an id below 64: their slots are then
    /// indexed by id (both 0 otherwise: slots by template position, found by lookup).
    reference32: u64,
    reference64: u64,
}

impl Kinds {
    fn of(set: &CounterSetInfo) -> Self {
        let mut k = Self::default();
        for c in set.counters.iter().filter(|c| c.id < 64) {
            match (c.by_reference(), c.size) {
                (false, 4) => k.value32 |= 1 << c.id,
                (false, 8) => k.value64 |= 1 << c.id,
                (true, 4) => k.reference32 |= 1 << c.id,
                (true, 8) => k.reference64 |= 1 << c.id,
                _ => {}
            }
        }
        if set.counters.iter().any(|c| c.id >= 64 && c.by_reference()) {
            k.reference32 = 0;
            k.reference64 = 0;
        }
        k
    }

    /// Whether the reference counters' slots are indexed by id (else by template position).
    fn refs_by_id(self, set: &CounterSetInfo) -> bool {
        self.reference32 | self.reference64 != 0
            || !set.counters.iter().any(CounterInfo::by_reference)
    }

    /// The slots a set's reference counters take: one per id up to the highest, or one per
    /// counter of the template; none without reference counters.
    fn slots(self, set: &CounterSetInfo) -> usize {
        if !set.counters.iter().any(CounterInfo::by_reference) {
            0
        } else if self.refs_by_id(set) {
            64 - (self.reference32 | self.reference64).leading_zeros() as usize
        } else {
            set.counters.len()
        }
    }

    /// Whether `id` is a reference counter of `size` bytes whose slot is at index `id`
    /// (`false`: not known to be; look it up).
    #[inline]
    fn is_reference(self, id: u32, size: u32) -> bool {
        let mask = if size == 8 {
            self.reference64
        } else {
            self.reference32
        };
        id < 64 && mask >> id & 1 != 0
    }

    /// Whether `id` is a value counter of `size` bytes (`false`: not known to be; look it up).
    #[inline]
    fn is_value(self, id: u32, size: u32) -> bool {
        let mask = if size == 8 {
            self.value64
        } else {
            self.value32
        };
        id < 64 && mask >> id & 1 != 0
    }
}

// SAFETY: the block is Perflib's; every access goes through thread-safe Perflib functions, and
// the reference slots are atomics.
unsafe impl Send for Instance<'_> {}
// SAFETY: as above.
unsafe impl Sync for Instance<'_> {}

/// Longest instance name (in bytes, without the NUL) copied on the stack when it is ASCII.
const SHORT_NAME: usize = 128;

/// The value setters, by operation and size.
type Setter32 =
    unsafe extern "system" fn(sys::HANDLE, *mut sys::PERF_COUNTERSET_INSTANCE, u32, u32) -> u32;
type Setter64 =
    unsafe extern "system" fn(sys::HANDLE, *mut sys::PERF_COUNTERSET_INSTANCE, u32, u64) -> u32;

impl Instance<'_> {
    /// The counterset template: the one given to [`Provider::start`] for the GUID of the set
    /// passed to [`Provider::create_instance`] (the template Perflib checks the instance's
    /// counters against).
    pub fn counter_set(&self) -> &'static CounterSetInfo {
        self.set
    }

    #[inline]
    fn value_counter(&self, id: u32, given: u32) -> Result<(), Error> {
        if self.kinds.is_value(id, given) {
            return Ok(());
        }
        self.value_counter_slow(id, given)
    }

    /// [`Self::value_counter`] by the template: the id's counter, or why it is not one of
    /// `given` bytes.
    #[cold]
    fn value_counter_slow(&self, id: u32, given: u32) -> Result<(), Error> {
        let (_, c) = self.set.counter(id)?;
        if c.by_reference() {
            return Err(Error::Reference {
                id,
                by_reference: true,
            });
        }
        if c.size != given {
            return Err(Error::WrongSize {
                id,
                size: c.size,
                given,
            });
        }
        Ok(())
    }

    #[inline]
    fn call32(&self, name: &'static str, f: Setter32, id: u32, v: u32) -> Result<(), Error> {
        self.value_counter(id, 4)?;
        // SAFETY: live handle and block (both outlive `self`), a checked counter id.
        check(name, unsafe { f(self.handle, self.block, id, v) })
    }

    #[inline]
    fn call64(&self, name: &'static str, f: Setter64, id: u32, v: u64) -> Result<(), Error> {
        self.value_counter(id, 8)?;
        // SAFETY: as in `call32`.
        check(name, unsafe { f(self.handle, self.block, id, v) })
    }

    /// `PerfSetULongCounterValue`.
    ///
    /// # Errors
    /// Unknown id, an 8-byte or `reference` counter, or the call's Win32 error.
    #[inline]
    pub fn set_u32(&self, id: u32, value: u32) -> Result<(), Error> {
        self.call32(
            "PerfSetULongCounterValue",
            sys::PerfSetULongCounterValue,
            id,
            value,
        )
    }

    /// `PerfSetULongLongCounterValue`.
    ///
    /// # Errors
    /// As [`Instance::set_u32`], for 8-byte counters.
    #[inline]
    pub fn set_u64(&self, id: u32, value: u64) -> Result<(), Error> {
        self.call64(
            "PerfSetULongLongCounterValue",
            sys::PerfSetULongLongCounterValue,
            id,
            value,
        )
    }

    /// `PerfIncrementULongCounterValue`.
    ///
    /// # Errors
    /// As [`Instance::set_u32`].
    #[inline]
    pub fn increment_u32(&self, id: u32, by: u32) -> Result<(), Error> {
        self.call32(
            "PerfIncrementULongCounterValue",
            sys::PerfIncrementULongCounterValue,
            id,
            by,
        )
    }

    /// `PerfIncrementULongLongCounterValue`.
    ///
    /// # Errors
    /// As [`Instance::set_u64`].
    #[inline]
    pub fn increment_u64(&self, id: u32, by: u64) -> Result<(), Error> {
        self.call64(
            "PerfIncrementULongLongCounterValue",
            sys::PerfIncrementULongLongCounterValue,
            id,
            by,
        )
    }

    /// `PerfDecrementULongCounterValue`.
    ///
    /// # Errors
    /// As [`Instance::set_u32`].
    #[inline]
    pub fn decrement_u32(&self, id: u32, by: u32) -> Result<(), Error> {
        self.call32(
            "PerfDecrementULongCounterValue",
            sys::PerfDecrementULongCounterValue,
            id,
            by,
        )
    }

    /// `PerfDecrementULongLongCounterValue`.
    ///
    /// # Errors
    /// As [`Instance::set_u64`].
    #[inline]
    pub fn decrement_u64(&self, id: u32, by: u64) -> Result<(), Error> {
        self.call64(
            "PerfDecrementULongLongCounterValue",
            sys::PerfDecrementULongLongCounterValue,
            id,
            by,
        )
    }

    /// Reference counter `id`'s slot, if it is one of `size` bytes.
    #[inline]
    fn slot(&self, id: u32, size: u32) -> Result<&AtomicU64, Error> {
        if self.kinds.is_reference(id, size)
            && let Some(slot) = self.refs.get(id as usize)
        {
            return Ok(slot);
        }
        self.slot_slow(id, size)
    }

    /// [`Self::slot`] by the template: the slot, or why `id` is not a reference counter of
    /// `size` bytes.
    #[cold]
    fn slot_slow(&self, id: u32, size: u32) -> Result<&AtomicU64, Error> {
        let (i, c) = self.set.counter(id)?;
        let index = if self.kinds.refs_by_id(self.set) {
            id as usize
        } else {
            i
        };
        let slot = self
            .refs
            .get(index)
            .filter(|_| c.by_reference())
            .ok_or(Error::Reference {
                id,
                by_reference: false,
            })?;
        if c.size == size {
            Ok(slot)
        } else {
            Err(Error::WrongSize {
                id,
                size: c.size,
                given: size,
            })
        }
    }

    /// The atomic a 4-byte `reference` counter is read from.
    ///
    /// # Errors
    /// Unknown id, a value counter, or an 8-byte counter.
    #[inline]
    pub fn reference_u32(&self, id: u32) -> Result<&AtomicU32, Error> {
        let slot = self.slot(id, 4)?;
        // SAFETY: the slot's first 4 bytes, aligned for a `u32`, live as long as `&self`; a
        // 4-byte counter's slot is only ever accessed as this `AtomicU32` (never as the
        // `AtomicU64` it is allocated as), so accesses never mix sizes.
        Ok(unsafe { AtomicU32::from_ptr(slot.as_ptr().cast::<u32>()) })
    }

    /// The atomic an 8-byte `reference` counter is read from.
    ///
    /// # Errors
    /// Unknown id, a value counter, or a 4-byte counter.
    #[inline]
    pub fn reference_u64(&self, id: u32) -> Result<&AtomicU64, Error> {
        self.slot(id, 8)
    }

    /// `PerfDeleteInstance` now, reporting its result (dropping deletes too, silently).
    ///
    /// # Errors
    /// The call's Win32 error.
    pub fn delete(mut self) -> Result<(), Error> {
        let code = self.delete_block();
        check("PerfDeleteInstance", code)
    }

    fn delete_block(&mut self) -> u32 {
        if self.block.is_null() {
            return 0;
        }
        // SAFETY: the block came from a successful `PerfCreateInstance` on this live provider
        // and is deleted once: it is reset to NULL right after.
        let code = unsafe { sys::PerfDeleteInstance(self.handle, self.block) };
        self.block = std::ptr::null_mut();
        code
    }
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        // Delete the Perflib instance before `refs` (the reference counters' memory) is freed.
        let _ = self.delete_block();
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
