// SPDX-License-Identifier: MIT OR Apache-2.0
//! Kernel PCW simulated: `#[no_mangle] extern "system"` implementations of `PcwRegister`,
//! `PcwUnregister`, `PcwAddInstance`, `PcwCreateInstance` and `PcwCloseInstance` (wdm.h,
//! `docs/pcw-semantics.md`; Microsoft: the `PCW_CALLBACK` and Pcw* reference pages) with their
//! documented checks, and the consumer side that calls a
//! provider's `PCW_CALLBACK` the way PCW does.
//!
//! A driver built for the host declares these functions through windows-sys' `Wdk` bindings; in
//! a test binary that links this crate the symbols resolve here, so the provider code under test
//! is exactly the code PCW would call. What is simulated:
//!
//! * `PcwRegister`: `STATUS_INVALID_PARAMETER_2` for a missing, empty or odd-length name, a
//!   version the simulated OS build does not know (`PCW_VERSION_2` needs build 19645 or later),
//!   unknown flags, or a descriptor list that does not match `CounterCount`.
//! * `PcwAddInstance`: `STATUS_INVALID_BUFFER_SIZE` when a data block is missing or shorter than
//!   a descriptor's `Offset + Size`; values are copied at call time.
//! * `PcwCreateInstance`/`PcwCloseInstance`: the provider's blocks are read at collection time,
//!   under the same lock `PcwCloseInstance` takes, so once close returns no read is in flight.
//! * faults: any call can be made to fail at its n-th use (see [`Kernel::fail`]).
//! * what real PCW would bugcheck on (a NULL or stale handle to `PcwUnregister`, closing an
//!   instance twice) is recorded as a [`Bugcheck`] instead, and [`Kernel::teardown`] reports
//!   registrations and instances still open.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pcw_core::filter::{InstanceFilter, counter_wanted};
use pcw_core::wildcard;
use windows_sys::Wdk::Foundation::{KEVENT, PPCW_BUFFER, PPCW_INSTANCE, PPCW_REGISTRATION};
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR, PCW_COUNTER_INFORMATION, PCW_DATA,
    PCW_MASK_INFORMATION, PCW_REGISTRATION_INFORMATION, PCW_VERSION_1, PCW_VERSION_2,
    PcwCallbackAddCounter, PcwCallbackCollectData, PcwCallbackEnumerateInstances,
    PcwCallbackRemoveCounter, PcwRegistrationSiloNeutral,
};
use windows_sys::Win32::Foundation::{
    NTSTATUS, STATUS_INVALID_BUFFER_SIZE, STATUS_INVALID_PARAMETER_2, STATUS_SUCCESS,
    UNICODE_STRING,
};

/// First Windows build whose `PcwRegister` accepts `PCW_VERSION_2` (10.0.19645).
pub const FIRST_V2_BUILD: u32 = 19645;
/// A build that knows `PCW_VERSION_2` (Windows Server 2022).
pub const BUILD_SERVER_2022: u32 = 20348;
/// A build that only knows `PCW_VERSION_1` (Windows 10 1809 / Server 2019).
pub const BUILD_SERVER_2019: u32 = 17763;
pub use pcw_core::filter::PCW_ANY_INSTANCE_ID;

/// The real callback type (windows-sys types `PPCW_CALLBACK` as a zero-argument pointer).
type RealCallback =
    unsafe extern "system" fn(i32, *const PCW_CALLBACK_INFORMATION, *const c_void) -> NTSTATUS;

/// The PCW calls that can be made to fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PcwCall {
    /// `PcwRegister`.
    Register,
    /// `PcwAddInstance`.
    AddInstance,
    /// `PcwCreateInstance`.
    CreateInstance,
}

/// Something real PCW would have crashed the machine for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bugcheck {
    /// `PcwUnregister(NULL)`.
    UnregisterNull,
    /// `PcwUnregister` of a handle that is not (or no longer) registered.
    UnregisterStale(isize),
    /// `PcwCloseInstance` of NULL or of an instance that is not open.
    CloseStale(isize),
    /// `PcwCreateInstance` on a registration that is not open.
    CreateOnStale(isize),
}

/// A contract breach PCW tolerates but a provider should not commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// `PcwAddInstance` with a NULL, empty-for-multi or odd-length name.
    BadInstanceName,
    /// An instance id of `0xFFFFFFFE` or above (reserved: ids should stay below it).
    ReservedInstanceId(u32),
    /// Two instances with the same name (compared case-insensitively) in one collection.
    DuplicateName(String),
    /// `PcwAddInstance` called with a buffer handle that is not a live collection.
    StaleBuffer,
}

/// A `PCW_COUNTER_DESCRIPTOR` as registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Descriptor {
    /// Counter id (its bit in `CounterMask` when below 64).
    pub id: u16,
    /// Which `PCW_DATA` block the value is in.
    pub struct_index: u16,
    /// Byte offset of the value in that block.
    pub offset: u16,
    /// Byte size of the value.
    pub size: u16,
}

impl From<PCW_COUNTER_DESCRIPTOR> for Descriptor {
    fn from(d: PCW_COUNTER_DESCRIPTOR) -> Self {
        Self {
            id: d.Id,
            struct_index: d.StructIndex,
            offset: d.Offset,
            size: d.Size,
        }
    }
}

/// One registered counterset.
#[derive(Clone, Debug)]
struct Registration {
    name: Vec<u16>,
    version: u32,
    flags: i32,
    descriptors: Vec<Descriptor>,
    callback: Option<RealCallback>,
    context: usize,
}

/// One instance made with `PcwCreateInstance`.
#[derive(Clone, Debug)]
struct Created {
    registration: isize,
    name: Vec<u16>,
    id: u32,
    blocks: Vec<(usize, u32)>,
}

#[derive(Debug, Default)]
struct State {
    build: u32,
    next_handle: isize,
    registrations: BTreeMap<isize, Registration>,
    created: BTreeMap<isize, Created>,
    calls: BTreeMap<PcwCall, usize>,
    faults: BTreeMap<PcwCall, (usize, NTSTATUS)>,
    bugchecks: Vec<Bugcheck>,
    misuse: Vec<Misuse>,
    next_instance_id: u32,
}

static STATE: Mutex<State> = Mutex::new(State {
    build: BUILD_SERVER_2022,
    next_handle: 0x1000,
    registrations: BTreeMap::new(),
    created: BTreeMap::new(),
    calls: BTreeMap::new(),
    faults: BTreeMap::new(),
    bugchecks: Vec::new(),
    misuse: Vec::new(),
    next_instance_id: 0,
});

/// The simulated clock behind `KeQueryPerformanceCounter` and `KeQuerySystemTimePrecise`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Time moves only when [`Kernel::advance`] moves it: deterministic tests.
    Manual,
    /// Time follows the host's monotonic clock from boot: demos and `pcw typeperf`.
    Real,
}

/// Ticks per second of the simulated performance counter (what Windows reports on most
/// machines since Windows 10).
pub const PERF_FREQUENCY: i64 = 10_000_000;
/// The simulated system time at boot: 2026-11-22 00:00:00 UTC as a `FILETIME` (100 ns units
/// since 1601).
pub const BOOT_SYSTEM_TIME: i64 = 134_397_792_000_000_000;

#[derive(Debug)]
struct ClockState {
    mode: Clock,
    /// Manual time since boot, in 100 ns units.
    manual: i64,
    started: Option<std::time::Instant>,
}

static CLOCK: Mutex<ClockState> = Mutex::new(ClockState {
    mode: Clock::Manual,
    manual: 0,
    started: None,
});

/// Time since boot, in 100 ns units.
fn since_boot() -> i64 {
    let c = CLOCK.lock().unwrap_or_else(PoisonError::into_inner);
    match (c.mode, c.started) {
        (Clock::Real, Some(start)) => i64::try_from(start.elapsed().as_nanos() / 100)
            .unwrap_or(i64::MAX)
            .saturating_add(c.manual),
        _ => c.manual,
    }
}

/// `KeQueryPerformanceCounter`: ticks since boot at [`PERF_FREQUENCY`].
///
/// # Safety
/// `frequency` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeQueryPerformanceCounter(frequency: *mut i64) -> i64 {
    let _sim = InDdi::enter();
    if !frequency.is_null() {
        // SAFETY: checked non-NULL; the caller provides a writable i64.
        unsafe { frequency.write(PERF_FREQUENCY) };
    }
    since_boot()
}

/// `KeReadStateEvent`: the event's signal state.
///
/// # Safety
/// `event` points to a valid `KEVENT`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeReadStateEvent(event: *const KEVENT) -> i32 {
    let _sim = InDdi::enter();
    // SAFETY: the caller passes a valid event; the field is read, not referenced.
    unsafe { event.as_ref() }.map_or(0, |e| e.Header.SignalState)
}

/// `KeQuerySystemTimePrecise`: [`BOOT_SYSTEM_TIME`] plus the time since boot.
///
/// # Safety
/// `current_time` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeQuerySystemTimePrecise(current_time: *mut i64) {
    let _sim = InDdi::enter();
    if !current_time.is_null() {
        // SAFETY: checked non-NULL; the caller provides a writable i64.
        unsafe { current_time.write(BOOT_SYSTEM_TIME + since_boot()) };
    }
}

std::thread_local! {
    /// (a provider callback is running on this thread, simulator DDIs entered from it).
    static PROVIDER: std::cell::Cell<(bool, u32)> = const { std::cell::Cell::new((false, 0)) };
}

/// Whether the current thread is running provider code: inside a `PCW_CALLBACK` the simulator
/// called, and not inside one of the simulator's own DDIs. A counting allocator in a test
/// binary uses this to prove the provider's callback allocates nothing (the simulator's own
/// bookkeeping allocates, and is excluded).
pub fn in_provider_code() -> bool {
    PROVIDER.with(|p| {
        let (callback, ddi) = p.get();
        callback && ddi == 0
    })
}

/// Runs `f` as provider code outside any callback, as `DriverEntry`, `DriverUnload` or an IRP
/// dispatch routine runs: [`in_provider_code`] is true for its duration except inside the
/// simulator's own DDIs. A fault-injecting allocator in a test binary uses this to fail the
/// driver's allocations in turn, never the simulator's.
pub fn as_provider<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the caller's state even if `f` unwinds.
    struct Restore((bool, u32));
    impl Drop for Restore {
        fn drop(&mut self) {
            PROVIDER.with(|p| p.set(self.0));
        }
    }
    let _restore = Restore(PROVIDER.with(|p| {
        let saved = p.get();
        p.set((true, 0));
        saved
    }));
    f()
}

/// Marks the simulator's own code while alive (see [`in_provider_code`]).
struct InDdi;

impl InDdi {
    fn enter() -> Self {
        PROVIDER.with(|p| {
            let (c, d) = p.get();
            p.set((c, d + 1));
        });
        Self
    }
}

impl Drop for InDdi {
    fn drop(&mut self) {
        PROVIDER.with(|p| {
            let (c, d) = p.get();
            p.set((c, d.saturating_sub(1)));
        });
    }
}

/// Calls a provider callback with [`in_provider_code`] true for its duration.
///
/// # Safety
/// As calling `f` directly.
unsafe fn call_provider(
    f: RealCallback,
    kind: i32,
    info: *const PCW_CALLBACK_INFORMATION,
    context: *const c_void,
) -> NTSTATUS {
    let outer = PROVIDER.with(|p| {
        let saved = p.get();
        p.set((true, 0));
        saved
    });
    // SAFETY: per this function's contract.
    let status = unsafe { f(kind, info, context) };
    PROVIDER.with(|p| p.set(outer));
    status
}

/// Held by whoever drives the simulated kernel; one at a time, as there is one kernel.
static SESSION: Mutex<()> = Mutex::new(());

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Exclusive use of the simulated kernel, from boot to teardown.
///
/// Tests in one binary run on several threads; each takes a `Kernel` so that their drivers do
/// not see each other's registrations. Consumers (collect, enumerate) may then be called from
/// as many threads as the test likes.
#[derive(Debug)]
pub struct Kernel {
    _session: MutexGuard<'static, ()>,
}

/// What was still open, or went wrong, when the kernel was torn down.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Teardown {
    /// Names of countersets still registered.
    pub registrations: Vec<String>,
    /// Names of `PcwCreateInstance` instances still open.
    pub instances: Vec<String>,
    /// What would have crashed a real machine.
    pub bugchecks: Vec<Bugcheck>,
    /// Tolerated contract breaches.
    pub misuse: Vec<Misuse>,
}

impl Teardown {
    /// Whether nothing was left open and nothing went wrong.
    pub fn is_clean(&self) -> bool {
        *self == Self::default()
    }
}

/// How a consumer asks for data (the fields of `PCW_MASK_INFORMATION` it controls).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Bit *x* set: counter id *x* is wanted.
    pub counter_mask: u64,
    /// `*`, `?` wildcard over instance names; `None` passes a NULL mask (everything).
    pub instance_mask: Option<String>,
    /// A single instance id, or [`PCW_ANY_INSTANCE_ID`].
    pub instance_id: u32,
    /// `FALSE` when the consumer treats the set as single-instance.
    pub collect_multiple: bool,
    /// Pass a `CancelEvent` that is already signalled (the consumer cancelled).
    pub cancelled: bool,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            counter_mask: u64::MAX,
            instance_mask: Some("*".to_owned()),
            instance_id: PCW_ANY_INSTANCE_ID,
            collect_multiple: true,
            cancelled: false,
        }
    }
}

impl Request {
    /// Whether an instance passes PCW's own filter.
    pub fn selects(&self, name: &[u16], id: u32) -> bool {
        let mask: Option<Vec<u16>> = self.instance_mask.as_deref().map(utf16_string);
        InstanceFilter::new(self.instance_id, mask.as_deref()).selects(name, id)
    }
}

/// One instance as a consumer receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// Instance name.
    pub name: String,
    /// Instance id.
    pub id: u32,
    /// Counter id → raw value, for the counters the request's mask selects (4- and 8-byte
    /// counters; other sizes are read as their first 8 bytes, zero-extended).
    pub values: BTreeMap<u16, u64>,
}

/// The result of one collection of a counterset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collection {
    /// Instances after PCW's own filtering, in the order providers added them.
    pub instances: Vec<Instance>,
    /// Instances the callback added although the request excluded them (the callback filtered
    /// too little; PCW drops them, and the docs allow it, but our provider claims to filter).
    pub unfiltered: Vec<String>,
    /// Instances the request selects and the provider's unfiltered enumeration lists, but the
    /// collection left out (the callback filtered too much). Only checked when the callback
    /// succeeded.
    pub missing: Vec<String>,
    /// Return codes of the callbacks (informational only, as the docs say).
    pub statuses: Vec<NTSTATUS>,
}

/// Errors of the consumer side.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// No counterset of that name is registered.
    #[error("no counterset named `{0}` is registered")]
    UnknownCounterset(String),
}

/// One `PcwAddInstance`: name, id, and counter id → value.
type Added = (Vec<u16>, u32, BTreeMap<u16, u64>);

/// The collection context a `PPCW_BUFFER` points at while a callback runs.
struct CollectBuffer {
    magic: u64,
    enumerate: bool,
    descriptors: Vec<Descriptor>,
    added: Vec<Added>,
    misuse: Vec<Misuse>,
}

const BUFFER_MAGIC: u64 = 0x5043_5742_5546_4645;

fn utf16_string(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// Reads a `UNICODE_STRING`'s units; `None` for NULL, a NULL buffer with a length, or an odd
/// length.
///
/// # Safety
/// `s` is NULL or points to a `UNICODE_STRING` whose buffer holds `Length` bytes.
unsafe fn read_unicode(s: *const UNICODE_STRING) -> Option<Vec<u16>> {
    // SAFETY: the caller guarantees `s` is NULL or valid.
    let s = unsafe { s.as_ref() }?;
    let len = usize::from(s.Length);
    if len % 2 != 0 || len > usize::from(s.MaximumLength) {
        return None;
    }
    if len == 0 {
        return Some(Vec::new());
    }
    if s.Buffer.is_null() {
        return None;
    }
    // SAFETY: the buffer holds `Length` bytes (caller), i.e. `len / 2` units.
    let units = unsafe { std::slice::from_raw_parts(s.Buffer, len / 2) };
    Some(units.to_vec())
}

/// Reads the values of `descriptors` out of provider blocks, `None` if a block is missing or too
/// short.
///
/// # Safety
/// Each `(ptr, size)` in `blocks` is readable for `size` bytes.
unsafe fn read_values(
    descriptors: &[Descriptor],
    blocks: &[(usize, u32)],
    counter_mask: u64,
) -> Option<BTreeMap<u16, u64>> {
    let mut values = BTreeMap::new();
    for d in descriptors {
        let &(ptr, size) = blocks.get(usize::from(d.struct_index))?;
        let end = usize::from(d.offset) + usize::from(d.size);
        if end > size as usize || ptr == 0 {
            return None;
        }
        if !counter_wanted(counter_mask, d.id) {
            continue;
        }
        let at = ptr + usize::from(d.offset);
        let value = match d.size {
            // Aligned 4- and 8-byte values are read with one load, as PCW's copy does on x64;
            // a provider that updates them with atomics is never seen half-written.
            8 if at % 8 == 0 => {
                // SAFETY: inside the readable block (checked above), aligned for u64.
                unsafe { std::ptr::read_volatile(at as *const u64) }
            }
            4 if at % 4 == 0 => {
                // SAFETY: inside the readable block (checked above), aligned for u32.
                u64::from(unsafe { std::ptr::read_volatile(at as *const u32) })
            }
            _ => {
                let mut raw = [0u8; 8];
                let n = usize::from(d.size).min(8);
                // SAFETY: `at..at + n` lies inside the block (checked against `size` above);
                // unaligned bytes are copied, not referenced.
                unsafe { std::ptr::copy_nonoverlapping(at as *const u8, raw.as_mut_ptr(), n) };
                u64::from_le_bytes(raw)
            }
        };
        values.insert(d.id, value);
    }
    Some(values)
}

fn take_fault(st: &mut State, call: PcwCall) -> Option<NTSTATUS> {
    let n = st.calls.entry(call).or_insert(0);
    let index = *n;
    *n += 1;
    match st.faults.get(&call) {
        Some(&(at, status)) if at == index => Some(status),
        _ => None,
    }
}

/// `PcwRegister`.
///
/// # Safety
/// As the DDI: `registration` is writable, `info` points to a valid
/// `PCW_REGISTRATION_INFORMATION` whose name and `CounterCount` descriptors are readable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwRegister(
    registration: *mut PPCW_REGISTRATION,
    info: *const PCW_REGISTRATION_INFORMATION,
) -> NTSTATUS {
    let _sim = InDdi::enter();
    let mut st = state();
    if let Some(status) = take_fault(&mut st, PcwCall::Register) {
        return status;
    }
    // SAFETY: the caller passes NULL or a valid registration information.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_INVALID_PARAMETER_2;
    };
    if registration.is_null() {
        return windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER_1;
    }
    let version_ok = info.Version == PCW_VERSION_1
        || (info.Version == PCW_VERSION_2 && st.build >= FIRST_V2_BUILD);
    // The V1 structure has no Flags field: only V2 reads it.
    let flags_ok = info.Version == PCW_VERSION_1 || info.Flags & !PcwRegistrationSiloNeutral == 0;
    // SAFETY: the name is NULL or a valid UNICODE_STRING (DDI contract).
    let name = unsafe { read_unicode(info.Name) };
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return STATUS_INVALID_PARAMETER_2;
    };
    if !version_ok || !flags_ok || (info.CounterCount > 0 && info.Counters.is_null()) {
        return STATUS_INVALID_PARAMETER_2;
    }
    let descriptors = if info.CounterCount == 0 {
        Vec::new()
    } else {
        // SAFETY: `Counters` holds `CounterCount` descriptors (DDI contract), checked non-NULL.
        unsafe { std::slice::from_raw_parts(info.Counters, info.CounterCount as usize) }
            .iter()
            .map(|d| Descriptor::from(*d))
            .collect()
    };
    let callback = info.Callback.map(|f| {
        // SAFETY: windows-sys types `PPCW_CALLBACK` as a zero-argument pointer; what a provider
        // stores there is a `PCW_CALLBACK`, the signature called here.
        unsafe { std::mem::transmute::<unsafe extern "system" fn() -> NTSTATUS, RealCallback>(f) }
    });
    let handle = st.next_handle;
    st.next_handle += 0x10;
    st.registrations.insert(
        handle,
        Registration {
            name,
            version: info.Version,
            flags: info.Flags,
            descriptors,
            callback,
            context: info.CallbackContext as usize,
        },
    );
    // SAFETY: checked non-NULL above; the caller provides a writable handle slot.
    unsafe { registration.write(handle) };
    STATUS_SUCCESS
}

/// `PcwUnregister`. Instances still open on the registration are closed with it.
///
/// # Safety
/// None beyond the DDI's: any handle value is accepted and checked.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwUnregister(registration: PPCW_REGISTRATION) {
    let _sim = InDdi::enter();
    let mut st = state();
    if registration == 0 {
        st.bugchecks.push(Bugcheck::UnregisterNull);
        return;
    }
    if st.registrations.remove(&registration).is_none() {
        st.bugchecks.push(Bugcheck::UnregisterStale(registration));
        return;
    }
    st.created.retain(|_, c| c.registration != registration);
}

/// `PcwAddInstance`.
///
/// # Safety
/// As the DDI: `buffer` is the handle PCW passed to the callback, `name` a valid
/// `UNICODE_STRING`, `data` holds `count` readable blocks.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwAddInstance(
    buffer: PPCW_BUFFER,
    name: *const UNICODE_STRING,
    id: u32,
    count: u32,
    data: *const PCW_DATA,
) -> NTSTATUS {
    let _sim = InDdi::enter();
    if let Some(status) = take_fault(&mut state(), PcwCall::AddInstance) {
        return status;
    }
    let ptr = buffer as *mut CollectBuffer;
    // SAFETY: a live buffer handle is a pointer to the `CollectBuffer` of the collection in
    // progress on this thread; the magic value is read first to catch stale handles.
    let Some(buf) = (unsafe { ptr.as_mut() }).filter(|b| b.magic == BUFFER_MAGIC) else {
        state().misuse.push(Misuse::StaleBuffer);
        return STATUS_INVALID_PARAMETER_2;
    };
    // SAFETY: `name` is NULL or a valid UNICODE_STRING (DDI contract).
    let Some(name) = (unsafe { read_unicode(name) }) else {
        buf.misuse.push(Misuse::BadInstanceName);
        return STATUS_INVALID_PARAMETER_2;
    };
    if id >= 0xFFFF_FFFE {
        buf.misuse.push(Misuse::ReservedInstanceId(id));
    }
    let values = if buf.enumerate && count == 0 {
        BTreeMap::new()
    } else {
        let blocks: Vec<(usize, u32)> = if count == 0 || data.is_null() {
            Vec::new()
        } else {
            // SAFETY: `data` holds `count` PCW_DATA entries (DDI contract), checked non-NULL.
            unsafe { std::slice::from_raw_parts(data, count as usize) }
                .iter()
                .map(|d| (d.Data as usize, d.Size))
                .collect()
        };
        // SAFETY: each block is readable for its stated size (DDI contract).
        match unsafe { read_values(&buf.descriptors, &blocks, u64::MAX) } {
            Some(v) => v,
            None => return STATUS_INVALID_BUFFER_SIZE,
        }
    };
    buf.added.push((name, id, values));
    STATUS_SUCCESS
}

/// `PcwCreateInstance`: the blocks are read at every collection until `PcwCloseInstance`.
///
/// # Safety
/// As the DDI: `instance` writable, `name` a valid `UNICODE_STRING`, `data` holds `count`
/// blocks that stay readable until the instance is closed or the set unregistered.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwCreateInstance(
    instance: *mut PPCW_INSTANCE,
    registration: PPCW_REGISTRATION,
    name: *const UNICODE_STRING,
    count: u32,
    data: *const PCW_DATA,
) -> NTSTATUS {
    let _sim = InDdi::enter();
    let mut st = state();
    if let Some(status) = take_fault(&mut st, PcwCall::CreateInstance) {
        return status;
    }
    let Some(reg) = st.registrations.get(&registration) else {
        st.bugchecks.push(Bugcheck::CreateOnStale(registration));
        return STATUS_INVALID_PARAMETER_2;
    };
    // SAFETY: `name` is NULL or a valid UNICODE_STRING (DDI contract).
    let Some(name) = (unsafe { read_unicode(name) }) else {
        return windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER_3;
    };
    if instance.is_null() || (count > 0 && data.is_null()) {
        return windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER;
    }
    let blocks: Vec<(usize, u32)> = if count == 0 {
        Vec::new()
    } else {
        // SAFETY: `data` holds `count` entries (DDI contract), checked non-NULL.
        unsafe { std::slice::from_raw_parts(data, count as usize) }
            .iter()
            .map(|d| (d.Data as usize, d.Size))
            .collect()
    };
    // SAFETY: the blocks are readable (DDI contract); only their sizes are checked here.
    if unsafe { read_values(&reg.descriptors, &blocks, 0) }.is_none() {
        return STATUS_INVALID_BUFFER_SIZE;
    }
    let id = st.next_instance_id;
    st.next_instance_id += 1;
    let handle = st.next_handle;
    st.next_handle += 0x10;
    st.created.insert(
        handle,
        Created {
            registration,
            name,
            id,
            blocks,
        },
    );
    // SAFETY: checked non-NULL; the caller provides a writable handle slot.
    unsafe { instance.write(handle) };
    STATUS_SUCCESS
}

/// `PcwCloseInstance`.
///
/// # Safety
/// None beyond the DDI's: any handle value is accepted and checked.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn PcwCloseInstance(instance: PPCW_INSTANCE) {
    let _sim = InDdi::enter();
    let mut st = state();
    if st.created.remove(&instance).is_none() {
        st.bugchecks.push(Bugcheck::CloseStale(instance));
    }
}

impl Kernel {
    /// Boots a fresh simulated kernel of the given Windows build, waiting for any other user to
    /// tear theirs down.
    pub fn boot(build: u32) -> Self {
        Self::boot_with_clock(build, Clock::Manual)
    }

    /// Boots with the given clock.
    pub fn boot_with_clock(build: u32, clock: Clock) -> Self {
        let session = SESSION.lock().unwrap_or_else(PoisonError::into_inner);
        *CLOCK.lock().unwrap_or_else(PoisonError::into_inner) = ClockState {
            mode: clock,
            manual: 0,
            started: Some(std::time::Instant::now()),
        };
        let mut st = state();
        *st = State {
            build,
            next_handle: 0x1000,
            ..State::default()
        };
        drop(st);
        Self { _session: session }
    }

    /// Moves the clock forward by `hundred_ns` (100 ns units), in either clock mode.
    pub fn advance(&self, hundred_ns: i64) {
        let mut c = CLOCK.lock().unwrap_or_else(PoisonError::into_inner);
        c.manual = c.manual.saturating_add(hundred_ns.max(0));
    }

    /// The performance counter now, as the driver sees it.
    pub fn perf_counter(&self) -> i64 {
        since_boot()
    }

    /// Makes the `nth` (0-based, counted from boot) call of `call` return `status`.
    pub fn fail(&self, call: PcwCall, nth: usize, status: NTSTATUS) {
        state().faults.insert(call, (nth, status));
    }

    /// How many times `call` was made since boot.
    pub fn calls(&self, call: PcwCall) -> usize {
        state().calls.get(&call).copied().unwrap_or(0)
    }

    /// Names of the registered countersets, in registration order.
    pub fn countersets(&self) -> Vec<String> {
        state()
            .registrations
            .values()
            .map(|r| String::from_utf16_lossy(&r.name))
            .collect()
    }

    /// The version and flags a counterset was registered with.
    pub fn registration_info(&self, name: &str) -> Option<(u32, i32)> {
        let wanted = utf16_string(name);
        state()
            .registrations
            .values()
            .find(|r| wildcard::eq_ignore_case(&r.name, &wanted))
            .map(|r| (r.version, r.flags))
    }

    /// The descriptors a counterset was registered with.
    pub fn descriptors(&self, name: &str) -> Option<Vec<Descriptor>> {
        let wanted = utf16_string(name);
        state()
            .registrations
            .values()
            .find(|r| wildcard::eq_ignore_case(&r.name, &wanted))
            .map(|r| r.descriptors.clone())
    }

    /// Calls every callback of the counterset with `PcwCallbackEnumerateInstances` and returns
    /// the (name, id) pairs PCW's filter keeps.
    ///
    /// # Errors
    /// [`SimError::UnknownCounterset`].
    pub fn enumerate(
        &self,
        counterset: &str,
        request: &Request,
    ) -> Result<Vec<(String, u32)>, SimError> {
        let c = Self::run(counterset, request, true)?;
        Ok(c.instances.into_iter().map(|i| (i.name, i.id)).collect())
    }

    /// Calls every callback of the counterset with `PcwCallbackCollectData`, adds the
    /// `PcwCreateInstance` instances, and applies PCW's filter. Safe to call from many threads.
    ///
    /// # Errors
    /// [`SimError::UnknownCounterset`].
    pub fn collect(&self, counterset: &str, request: &Request) -> Result<Collection, SimError> {
        Self::run(counterset, request, false)
    }

    /// Tells the provider a consumer started (`AddCounter`) or stopped (`RemoveCounter`)
    /// querying counters of `mask`.
    ///
    /// # Errors
    /// [`SimError::UnknownCounterset`].
    pub fn notify(
        &self,
        counterset: &str,
        add: bool,
        mask: u64,
    ) -> Result<Vec<NTSTATUS>, SimError> {
        let callbacks = Self::callbacks(counterset)?;
        let info = PCW_CALLBACK_INFORMATION {
            AddCounter: PCW_COUNTER_INFORMATION {
                CounterMask: mask,
                InstanceMask: std::ptr::null_mut(),
            },
        };
        let kind = if add {
            PcwCallbackAddCounter
        } else {
            PcwCallbackRemoveCounter
        };
        Ok(callbacks
            .into_iter()
            .filter_map(|(_, cb, ctx)| cb.map(|f| (f, ctx)))
            .map(|(f, ctx)| {
                // SAFETY: `f` is the provider's registered PCW_CALLBACK and `ctx` its context;
                // `info` lives across the call.
                unsafe { call_provider(f, kind, &raw const info, ctx as *const c_void) }
            })
            .collect())
    }

    /// The registrations (handle, callback, context) named `counterset`.
    fn callbacks(counterset: &str) -> Result<Vec<(isize, Option<RealCallback>, usize)>, SimError> {
        let wanted = utf16_string(counterset);
        let st = state();
        let found: Vec<_> = st
            .registrations
            .iter()
            .filter(|(_, r)| wildcard::eq_ignore_case(&r.name, &wanted))
            .map(|(h, r)| (*h, r.callback, r.context))
            .collect();
        if found.is_empty() {
            return Err(SimError::UnknownCounterset(counterset.to_owned()));
        }
        Ok(found)
    }

    /// Calls one provider callback for a collection or an enumeration and returns what it
    /// added, what it did wrong, and its status.
    fn invoke(
        f: RealCallback,
        context: usize,
        descriptors: &[Descriptor],
        request: &Request,
        enumerate: bool,
    ) -> (Vec<Added>, Vec<Misuse>, NTSTATUS) {
        let mut mask_units: Vec<u16> = request
            .instance_mask
            .as_deref()
            .map(utf16_string)
            .unwrap_or_default();
        let mut mask_string = UNICODE_STRING {
            Length: u16::try_from(mask_units.len() * 2).unwrap_or(u16::MAX),
            MaximumLength: u16::try_from(mask_units.len() * 2).unwrap_or(u16::MAX),
            Buffer: mask_units.as_mut_ptr(),
        };
        let mut cancel = Box::new(KEVENT::default());
        cancel.Header.SignalState = 1;
        let mut buffer = Box::new(CollectBuffer {
            magic: BUFFER_MAGIC,
            enumerate,
            descriptors: descriptors.to_vec(),
            added: Vec::new(),
            misuse: Vec::new(),
        });
        let info = PCW_MASK_INFORMATION {
            CounterMask: request.counter_mask,
            InstanceMask: if request.instance_mask.is_some() {
                &raw mut mask_string
            } else {
                std::ptr::null_mut()
            },
            InstanceId: request.instance_id,
            CollectMultiple: request.collect_multiple,
            Buffer: (&raw mut *buffer) as isize,
            CancelEvent: if request.cancelled {
                &raw mut *cancel
            } else {
                std::ptr::null_mut()
            },
        };
        let (info, kind) = if enumerate {
            (
                PCW_CALLBACK_INFORMATION {
                    EnumerateInstances: info,
                },
                PcwCallbackEnumerateInstances,
            )
        } else {
            (
                PCW_CALLBACK_INFORMATION { CollectData: info },
                PcwCallbackCollectData,
            )
        };
        // SAFETY: `f` is the provider's registered PCW_CALLBACK with its context; `info` and the
        // buffer it points at outlive the call.
        let status = unsafe { call_provider(f, kind, &raw const info, context as *const c_void) };
        buffer.magic = 0;
        let added = std::mem::take(&mut buffer.added);
        let misuse = std::mem::take(&mut buffer.misuse);
        (added, misuse, status)
    }

    fn run(counterset: &str, request: &Request, enumerate: bool) -> Result<Collection, SimError> {
        let regs = Self::callbacks(counterset)?;
        let mut out = Collection::default();
        for (handle, callback, context) in regs {
            let descriptors = state()
                .registrations
                .get(&handle)
                .map(|r| r.descriptors.clone())
                .unwrap_or_default();
            let mut added = Vec::new();
            let mut misuse = Vec::new();
            let mut universe = Vec::new();
            if let Some(f) = callback {
                if !enumerate {
                    // What the provider says exists, unfiltered: a collection that leaves out an
                    // instance the request selects has filtered too much.
                    let everything = Request {
                        instance_mask: None,
                        instance_id: PCW_ANY_INSTANCE_ID,
                        cancelled: false,
                        ..request.clone()
                    };
                    let (listed, _, _) = Self::invoke(f, context, &descriptors, &everything, true);
                    universe = listed;
                }
                let (a, m, status) = Self::invoke(f, context, &descriptors, request, enumerate);
                added = a;
                misuse = m;
                out.statuses.push(status);
                if status >= 0 && !request.cancelled {
                    for (name, id, _) in &universe {
                        let returned = added
                            .iter()
                            .any(|(n, i, _)| i == id && wildcard::eq_ignore_case(n, name));
                        if request.selects(name, *id) && !returned {
                            out.missing.push(String::from_utf16_lossy(name));
                        }
                    }
                }
            }
            let mut st = state();
            st.misuse.append(&mut misuse);
            // PcwCreateInstance instances, read now, under the lock PcwCloseInstance takes.
            for c in st.created.values().filter(|c| c.registration == handle) {
                // SAFETY: the provider keeps created blocks readable until close (DDI
                // contract); close cannot run while this lock is held.
                let values = unsafe { read_values(&descriptors, &c.blocks, u64::MAX) };
                added.push((
                    c.name.clone(),
                    c.id,
                    if enumerate {
                        BTreeMap::new()
                    } else {
                        values.unwrap_or_default()
                    },
                ));
            }
            let mut seen: Vec<Vec<u16>> = Vec::new();
            for (name, id, values) in added {
                if seen.iter().any(|s| wildcard::eq_ignore_case(s, &name)) {
                    st.misuse
                        .push(Misuse::DuplicateName(String::from_utf16_lossy(&name)));
                }
                seen.push(name.clone());
                let display = String::from_utf16_lossy(&name);
                if !request.selects(&name, id) {
                    out.unfiltered.push(display);
                    continue;
                }
                let values = values
                    .into_iter()
                    .filter(|(cid, _)| counter_wanted(request.counter_mask, *cid))
                    .collect();
                out.instances.push(Instance {
                    name: display,
                    id,
                    values,
                });
            }
        }
        Ok(out)
    }

    /// Ends the session: reports what is still open and what went wrong, and resets the kernel.
    pub fn teardown(self) -> Teardown {
        let mut st = state();
        let report = Teardown {
            registrations: st
                .registrations
                .values()
                .map(|r| String::from_utf16_lossy(&r.name))
                .collect(),
            instances: st
                .created
                .values()
                .map(|c| String::from_utf16_lossy(&c.name))
                .collect(),
            bugchecks: std::mem::take(&mut st.bugchecks),
            misuse: std::mem::take(&mut st.misuse),
        };
        *st = State::default();
        report
    }
}
