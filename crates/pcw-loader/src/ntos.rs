// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel a loaded image runs against: every `ntoskrnl.exe` routine the driver imports, as an
//! `extern "win64"` function (the image's calling convention), backed by pcw-sim's simulated PCW
//! and clock and by the loader's own I/O manager, pool and push locks.
//!
//! Each routine checks its documented contract and records what a checked kernel (Driver
//! Verifier) would flag as a [`Violation`] instead of crashing: pool freed twice or with another
//! tag, a push lock taken outside a critical region, an IRP completed twice, a symbolic link to a
//! device that does not exist. [`State::leaks`] lists what is still allocated, registered or
//! created. Any fallible routine can be made to fail at its n-th call ([`fail_at`]).
//!
//! A `PCW_CALLBACK` pointer that came from the image is only ever called as `extern "win64"`:
//! pcw-sim calls an `extern "system"` trampoline (the host's convention), which re-lays the
//! callback information out at the WDK's offsets ([`crate::layout`]) and calls the image.

use std::alloc::Layout;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use windows_sys::Wdk::Foundation::{KEVENT, PPCW_BUFFER};
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR, PCW_DATA, PCW_REGISTRATION_INFORMATION,
    PcwCallbackAddCounter, PcwCallbackCollectData, PcwCallbackEnumerateInstances,
    PcwCallbackRemoveCounter,
};
use windows_sys::Win32::Foundation::UNICODE_STRING;

use crate::layout::{
    Fields, device_object as dev, driver_object as drv, pcw_callback_information as cbi,
    pcw_registration as reg, unicode_string as us,
};
use crate::security;

/// `NTSTATUS`.
pub type NtStatus = i32;

/// `STATUS_SUCCESS`.
pub const STATUS_SUCCESS: NtStatus = 0;
/// `STATUS_INSUFFICIENT_RESOURCES`: what an injected fault returns.
pub const STATUS_INSUFFICIENT_RESOURCES: NtStatus = 0xC000_009A_u32.cast_signed();
/// `STATUS_INVALID_PARAMETER`.
pub const STATUS_INVALID_PARAMETER: NtStatus = 0xC000_000D_u32.cast_signed();
/// `STATUS_OBJECT_NAME_COLLISION`.
pub const STATUS_OBJECT_NAME_COLLISION: NtStatus = 0xC000_0035_u32.cast_signed();
/// `STATUS_OBJECT_NAME_NOT_FOUND`.
pub const STATUS_OBJECT_NAME_NOT_FOUND: NtStatus = 0xC000_0034_u32.cast_signed();
/// `DACL_SECURITY_INFORMATION`.
pub const DACL_SECURITY_INFORMATION: u32 = 4;

/// `POOL_FLAG_UNINITIALIZED`.
const POOL_FLAG_UNINITIALIZED: u64 = 0x2;
/// `POOL_FLAG_NON_PAGED`.
const POOL_FLAG_NON_PAGED: u64 = 0x40;
/// `POOL_FLAG_NON_PAGED_EXECUTE`.
const POOL_FLAG_NON_PAGED_EXECUTE: u64 = 0x80;
/// `POOL_FLAG_PAGED`.
const POOL_FLAG_PAGED: u64 = 0x100;

/// Something a checked kernel would have flagged (or bugchecked on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The routine that saw it.
    pub routine: &'static str,
    /// What was wrong.
    pub what: String,
}

impl core::fmt::Display for Violation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.routine, self.what)
    }
}

/// A zeroed, 16-byte-aligned block the loader or the pool owns.
#[derive(Debug)]
pub(crate) struct Block {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: plain memory owned by the block; access is synchronised by whoever holds it.
unsafe impl Send for Block {}

impl Block {
    pub(crate) fn zeroed(size: usize) -> Self {
        let layout = Layout::from_size_align(size.max(1), 16).unwrap_or(Layout::new::<u128>());
        // SAFETY: a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Self { ptr, layout }
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The block as a structure.
    pub(crate) fn fields(&self) -> Fields {
        // SAFETY: the block owns `layout.size()` readable and writable bytes for its lifetime.
        unsafe { Fields::new(self.ptr, self.layout.size()) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// One pool allocation.
#[derive(Debug)]
struct PoolBlock {
    /// Owns the memory until it is freed.
    _memory: Block,
    size: usize,
    tag: u32,
}

/// A device the driver created.
#[derive(Debug)]
pub(crate) struct Device {
    pub(crate) name: String,
    pub(crate) block: Block,
    /// The DACL set with `ObSetSecurityObjectByPointer`, decoded.
    pub(crate) dacl: Option<security::Dacl>,
}

/// The image's callback, as registered.
#[derive(Debug)]
struct Thunk {
    callback: usize,
    context: usize,
}

/// The kernel's state while an image is loaded.
#[derive(Debug, Default)]
pub struct State {
    pub(crate) driver_object: usize,
    pool: BTreeMap<usize, PoolBlock>,
    pub(crate) devices: BTreeMap<usize, Device>,
    /// Link name (lower case) → target device name.
    pub(crate) links: BTreeMap<String, String>,
    /// IRPs in flight → times completed.
    pub(crate) irps: BTreeMap<usize, u32>,
    registrations: BTreeMap<isize, Box<Thunk>>,
    violations: Vec<Violation>,
    fail_at: Option<usize>,
    fallible_calls: usize,
    failed: Option<&'static str>,
    calls: BTreeMap<&'static str, usize>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Benchmark mode: `PcwAddInstance` only counts (see [`count_add_instance_only`]).
static COUNT_ONLY: AtomicBool = AtomicBool::new(false);
/// `PcwAddInstance` calls made in benchmark mode.
static COUNTED: AtomicUsize = AtomicUsize::new(0);

/// Benchmark mode: with `true`, the kernel routines cost what the host build's benchmarks'
/// no-op PCW costs — `PcwAddInstance` only counts, the clock routines return a constant, no
/// routine records its call or can be made to fail — so that an instruction count of the
/// image's callback is the image's own cost. Push locks and critical regions keep working.
pub fn count_add_instance_only(on: bool) {
    COUNT_ONLY.store(on, Ordering::Relaxed);
}

/// `PcwAddInstance` calls counted in benchmark mode.
pub fn counted_add_instances() -> usize {
    COUNTED.load(Ordering::Relaxed)
}

/// The kernel's state. Poisoning is ignored: a failed scenario still reports what it saw.
fn lock() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = lock();
    f(guard.get_or_insert_with(State::default))
}

/// Resets the kernel's state for a new image (keeping nothing of the last one).
pub(crate) fn reset(driver_object: usize) {
    *lock() = Some(State {
        driver_object,
        ..State::default()
    });
}

/// Makes the `n`-th (0-based) fallible call from now on fail, or none with `None`.
pub fn fail_at(n: Option<usize>) {
    with(|s| {
        s.fail_at = n;
        s.fallible_calls = 0;
        s.failed = None;
    });
}

/// The routine an injected fault hit, if one did.
pub fn failed() -> Option<&'static str> {
    with(|s| s.failed)
}

/// How many fallible calls were made since [`fail_at`].
pub fn fallible_calls() -> usize {
    with(|s| s.fallible_calls)
}

/// A device the driver created, as the object manager sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Its name (`\Device\…`).
    pub name: String,
    /// The DACL `ObSetSecurityObjectByPointer` set, if any.
    pub dacl: Option<security::Dacl>,
}

/// The driver's devices and the symbolic links (lower-case name → target).
pub fn objects() -> (Vec<DeviceInfo>, BTreeMap<String, String>) {
    with(|s| {
        let devices = s
            .devices
            .values()
            .map(|d| DeviceInfo {
                name: d.name.clone(),
                dacl: d.dacl.clone(),
            })
            .collect();
        (devices, s.links.clone())
    })
}

/// The `PCW_CALLBACK` addresses the image registered and has not unregistered, in registration
/// order (0 for a registration without a callback).
pub fn callbacks() -> Vec<usize> {
    with(|s| s.registrations.values().map(|t| t.callback).collect())
}

/// A `PcwCallbackCollectData` request laid out at the WDK's offsets, to call an image's
/// callback directly (benchmarks).
#[derive(Debug)]
pub struct CollectRequest {
    block: Block,
}

impl CollectRequest {
    /// Every counter, every instance (`InstanceMask` NULL, `PCW_ANY_INSTANCE_ID`), with `buffer`
    /// as the `PPCW_BUFFER` handle passed back to `PcwAddInstance`.
    pub fn everything(buffer: usize) -> Self {
        let block = Block::zeroed(cbi::SIZE);
        let f = block.fields();
        f.put(cbi::COUNTER_MASK, u64::MAX.to_le_bytes());
        f.put_u32(cbi::INSTANCE_ID, u32::MAX);
        f.put_u8(cbi::COLLECT_MULTIPLE, 1);
        f.put_usize(cbi::BUFFER, buffer);
        Self { block }
    }

    /// Calls the image's `callback` (registered with `context`) with this request.
    ///
    /// # Safety
    /// `callback` is a `PCW_CALLBACK` of the loaded image and `context` the context it was
    /// registered with; `PcwAddInstance` must be in benchmark mode (the buffer handle is not a
    /// pcw-sim collection).
    pub unsafe fn call(&self, callback: usize, context: usize) -> NtStatus {
        // SAFETY: per this function's contract, the address of a win64 PCW_CALLBACK.
        let f = unsafe { core::mem::transmute::<usize, ImageCallback>(callback) };
        // SAFETY: a valid CollectData request for the duration of the call.
        unsafe { f(PcwCallbackCollectData, self.block.ptr(), context) }
    }
}

/// The contexts registered with [`callbacks`], in the same order.
pub fn callback_contexts() -> Vec<usize> {
    with(|s| s.registrations.values().map(|t| t.context).collect())
}

/// Calls made to each routine since the image was loaded.
pub fn calls() -> BTreeMap<&'static str, usize> {
    with(|s| s.calls.clone())
}

/// Records an IRP the I/O manager is about to dispatch.
pub(crate) fn irp_issued(irp: usize) {
    with(|s| s.irps.insert(irp, 0));
}

/// Forgets a dispatched IRP and returns how many times it was completed.
pub(crate) fn irp_retired(irp: usize) -> u32 {
    with(|s| s.irps.remove(&irp).unwrap_or(0))
}

/// What was flagged so far.
pub fn violations() -> Vec<Violation> {
    with(|s| s.violations.clone())
}

pub(crate) fn violation(routine: &'static str, what: impl Into<String>) {
    with(|s| {
        s.violations.push(Violation {
            routine,
            what: what.into(),
        });
    });
}

/// What is still held: pool blocks (tag and size), devices, symbolic links, registrations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Leaks {
    /// Pool blocks still allocated: (tag as text, size).
    pub pool: Vec<(String, usize)>,
    /// Device names.
    pub devices: Vec<String>,
    /// Symbolic link names.
    pub links: Vec<String>,
    /// Counterset registrations the image made and did not unregister.
    pub registrations: usize,
}

impl Leaks {
    /// Nothing left.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// What is still held now.
pub fn leaks() -> Leaks {
    with(|s| Leaks {
        pool: s.pool.values().map(|b| (tag_text(b.tag), b.size)).collect(),
        devices: s.devices.values().map(|d| d.name.clone()).collect(),
        links: s.links.keys().cloned().collect(),
        registrations: s.registrations.len(),
    })
}

fn tag_text(tag: u32) -> String {
    String::from_utf8_lossy(&tag.to_le_bytes()).into_owned()
}

/// Counts a call and decides whether this fallible call fails (neither in benchmark mode).
fn enter(routine: &'static str, fallible: bool) -> bool {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        return false;
    }
    with(|s| {
        *s.calls.entry(routine).or_default() += 1;
        if !fallible {
            return false;
        }
        let n = s.fallible_calls;
        s.fallible_calls += 1;
        if s.fail_at == Some(n) {
            s.failed = Some(routine);
            return true;
        }
        false
    })
}

/// The UTF-16 text of a `UNICODE_STRING` the image passed, read at the WDK's offsets.
///
/// # Safety
/// `s` is NULL or a readable `UNICODE_STRING` whose buffer holds `Length` bytes.
pub(crate) unsafe fn read_unicode(s: *const u8) -> Option<Vec<u16>> {
    if s.is_null() {
        return None;
    }
    // SAFETY: a readable UNICODE_STRING (contract), only read.
    let string = unsafe { Fields::new(s.cast_mut(), us::SIZE) };
    let length = string.get_u16(us::LENGTH);
    let buffer = string.get_usize(us::BUFFER) as *const u8;
    if buffer.is_null() || length == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the buffer holds `Length` bytes (contract); only read, as bytes.
    let bytes = unsafe { core::slice::from_raw_parts(buffer, usize::from(length & !1)) };
    Some(
        bytes
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect(),
    )
}

fn text(units: &[u16]) -> String {
    String::from_utf16_lossy(units)
}

// ---------------------------------------------------------------------------------------------
// Pool.

unsafe extern "win64" fn ex_allocate_pool2(flags: u64, size: usize, tag: u32) -> *mut c_void {
    if enter("ExAllocatePool2", true) {
        return core::ptr::null_mut();
    }
    let kinds = flags & (POOL_FLAG_NON_PAGED | POOL_FLAG_NON_PAGED_EXECUTE | POOL_FLAG_PAGED);
    if kinds.count_ones() != 1 {
        violation(
            "ExAllocatePool2",
            format!("flags {flags:#x} name no single pool type"),
        );
    }
    if kinds == POOL_FLAG_NON_PAGED_EXECUTE {
        violation(
            "ExAllocatePool2",
            "executable non-paged pool (POOL_FLAG_NON_PAGED_EXECUTE)",
        );
    }
    if tag == 0 {
        violation("ExAllocatePool2", "pool tag 0");
    }
    if size == 0 {
        return core::ptr::null_mut();
    }
    let block = Block::zeroed(size);
    if flags & POOL_FLAG_UNINITIALIZED != 0 {
        // SAFETY: the block holds `size` bytes; poisoned so that reads of uninitialised pool
        // show up as garbage, as they would on Windows.
        unsafe { core::ptr::write_bytes(block.ptr(), 0xCD, size) };
    }
    let ptr = block.ptr();
    with(|s| {
        s.pool.insert(
            ptr as usize,
            PoolBlock {
                _memory: block,
                size,
                tag,
            },
        )
    });
    ptr.cast()
}

unsafe extern "win64" fn ex_free_pool_with_tag(ptr: *mut c_void, tag: u32) {
    free_pool("ExFreePoolWithTag", ptr, Some(tag));
}

/// `ExFreePool`: what wdk-alloc (the WDK build's allocator) frees with; no tag to check.
unsafe extern "win64" fn ex_free_pool(ptr: *mut c_void) {
    free_pool("ExFreePool", ptr, None);
}

/// Frees a pool block for `routine`; with `tag`, a block allocated under another tag is a
/// violation.
fn free_pool(routine: &'static str, ptr: *mut c_void, tag: Option<u32>) {
    enter(routine, false);
    let removed = with(|s| {
        let found = s.pool.remove(&(ptr as usize));
        if let Some(block) = &found
            && let Some(tag) = tag
            && block.tag != tag
        {
            s.violations.push(Violation {
                routine,
                what: format!(
                    "block {ptr:p} allocated with tag `{}` freed with tag `{}`",
                    tag_text(block.tag),
                    tag_text(tag)
                ),
            });
        }
        found
    });
    if removed.is_none() {
        violation(
            routine,
            format!("{ptr:p} is not an allocated pool block (double free or foreign pointer)"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Critical regions and push locks.

std::thread_local! {
    /// `KeEnterCriticalRegion` depth of this thread.
    static CRITICAL: Cell<u32> = const { Cell::new(0) };
}

unsafe extern "win64" fn ke_enter_critical_region() {
    CRITICAL.with(|c| c.set(c.get() + 1));
}

unsafe extern "win64" fn ke_leave_critical_region() {
    let depth = CRITICAL.with(Cell::get);
    if depth == 0 {
        violation(
            "KeLeaveCriticalRegion",
            "left a critical region that was not entered",
        );
        return;
    }
    CRITICAL.with(|c| c.set(depth - 1));
}

/// Exclusive owner bit of a push lock word; shared holders count in the bits above it.
const EXCLUSIVE: usize = 1;
const SHARED_ONE: usize = 2;

fn push_lock_word<'a>(routine: &'static str, lock: *mut usize) -> Option<&'a AtomicUsize> {
    if CRITICAL.with(Cell::get) == 0 {
        violation(
            routine,
            "push lock used outside a critical region (normal kernel APCs enabled)",
        );
    }
    if lock.is_null() || !(lock as usize).is_multiple_of(align_of::<usize>()) {
        violation(
            routine,
            format!("push lock at {lock:p} is NULL or misaligned"),
        );
        return None;
    }
    // SAFETY: a non-NULL, aligned pointer to the image's push lock word, which only these
    // routines touch (atomically) from now on.
    Some(unsafe { AtomicUsize::from_ptr(lock) })
}

unsafe extern "win64" fn ex_acquire_push_lock_exclusive_ex(lock: *mut usize, _flags: u32) {
    enter("ExAcquirePushLockExclusiveEx", false);
    let Some(word) = push_lock_word("ExAcquirePushLockExclusiveEx", lock) else {
        return;
    };
    while word
        .compare_exchange_weak(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
}

unsafe extern "win64" fn ex_release_push_lock_exclusive_ex(lock: *mut usize, _flags: u32) {
    enter("ExReleasePushLockExclusiveEx", false);
    let Some(word) = push_lock_word("ExReleasePushLockExclusiveEx", lock) else {
        return;
    };
    if word
        .compare_exchange(EXCLUSIVE, 0, Ordering::Release, Ordering::Relaxed)
        .is_err()
    {
        violation(
            "ExReleasePushLockExclusiveEx",
            "released a push lock not held exclusively",
        );
    }
}

unsafe extern "win64" fn ex_acquire_push_lock_shared_ex(lock: *mut usize, _flags: u32) {
    enter("ExAcquirePushLockSharedEx", false);
    let Some(word) = push_lock_word("ExAcquirePushLockSharedEx", lock) else {
        return;
    };
    loop {
        let v = word.load(Ordering::Relaxed);
        if v & EXCLUSIVE == 0
            && word
                .compare_exchange_weak(v, v + SHARED_ONE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
        std::thread::yield_now();
    }
}

unsafe extern "win64" fn ex_release_push_lock_shared_ex(lock: *mut usize, _flags: u32) {
    enter("ExReleasePushLockSharedEx", false);
    let Some(word) = push_lock_word("ExReleasePushLockSharedEx", lock) else {
        return;
    };
    let released = word.fetch_update(Ordering::Release, Ordering::Relaxed, |v| {
        (v & EXCLUSIVE == 0 && v >= SHARED_ONE).then(|| v - SHARED_ONE)
    });
    if released.is_err() {
        violation(
            "ExReleasePushLockSharedEx",
            "released a push lock not held shared",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Clock and events: pcw-sim's.

/// What the clock routines return in benchmark mode: the constant of the host build's no-op PCW
/// (`pcw_bench::NOOP_TIME`, 2026-01-01 plus 3 s in 100 ns units since 1601), so the image
/// computes the same wave values as the host build it is compared with.
const BENCHMARK_TIME: i64 = 134_116_992_000_000_000 + 30_000_000;

unsafe extern "win64" fn ke_query_performance_counter(frequency: *mut i64) -> i64 {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        if !frequency.is_null() {
            // SAFETY: the caller passes NULL or a writable i64.
            unsafe { frequency.write(10_000_000) };
        }
        return BENCHMARK_TIME;
    }
    enter("KeQueryPerformanceCounter", false);
    // SAFETY: the caller passes NULL or a writable i64, as the DDI requires.
    unsafe { pcw_sim::kernel_pcw::KeQueryPerformanceCounter(frequency) }
}

unsafe extern "win64" fn ke_query_system_time_precise(now: *mut i64) {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        // SAFETY: as the DDI: a writable i64.
        unsafe { now.write(BENCHMARK_TIME) };
        return;
    }
    enter("KeQuerySystemTimePrecise", false);
    // SAFETY: as the DDI: a writable i64.
    unsafe { pcw_sim::kernel_pcw::KeQuerySystemTimePrecise(now) }
}

unsafe extern "win64" fn ke_read_state_event(event: *const KEVENT) -> i32 {
    enter("KeReadStateEvent", false);
    if event.is_null() {
        violation("KeReadStateEvent", "NULL event");
        return 0;
    }
    // SAFETY: the event PCW passed in the callback information.
    unsafe { pcw_sim::kernel_pcw::KeReadStateEvent(event) }
}

// ---------------------------------------------------------------------------------------------
// PCW, forwarded to pcw-sim.

/// A `PCW_CALLBACK` inside the image: its convention is win64.
type ImageCallback = unsafe extern "win64" fn(i32, *const u8, usize) -> NtStatus;

/// `PCW_CALLBACK` of pcw-sim's type (the host's `extern "system"`): calls the image's callback
/// as `extern "win64"` with the callback information re-laid out at the WDK's offsets.
unsafe extern "system" fn trampoline(
    kind: i32,
    info: *const PCW_CALLBACK_INFORMATION,
    context: *const c_void,
) -> NtStatus {
    // SAFETY: `context` is the `Thunk` registered with this trampoline, alive until the
    // registration is removed, which pcw-sim does not do while calling it.
    let Some(thunk) = (unsafe { context.cast::<Thunk>().as_ref() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    // SAFETY: pcw-sim passes valid callback information for the duration of the call.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_INVALID_PARAMETER;
    };
    let wdk = Block::zeroed(cbi::SIZE);
    let out = wdk.fields();
    if kind == PcwCallbackAddCounter || kind == PcwCallbackRemoveCounter {
        // SAFETY: the AddCounter/RemoveCounter member is the active one for these kinds.
        let c = unsafe { info.AddCounter };
        out.put(cbi::COUNTER_MASK, c.CounterMask.to_le_bytes());
        out.put_usize(cbi::INSTANCE_MASK, c.InstanceMask as usize);
    } else if kind == PcwCallbackEnumerateInstances || kind == PcwCallbackCollectData {
        // SAFETY: pcw-sim fills the mask information for both kinds.
        let m = unsafe { info.CollectData };
        out.put(cbi::COUNTER_MASK, m.CounterMask.to_le_bytes());
        out.put_usize(cbi::INSTANCE_MASK, m.InstanceMask as usize);
        out.put_u32(cbi::INSTANCE_ID, m.InstanceId);
        out.put_u8(cbi::COLLECT_MULTIPLE, u8::from(m.CollectMultiple));
        out.put_usize(cbi::BUFFER, m.Buffer.cast_unsigned());
        out.put_usize(cbi::CANCEL_EVENT, m.CancelEvent as usize);
    }
    // SAFETY: the image registered this address as its PCW_CALLBACK; the image's convention is
    // win64.
    let callback = unsafe { core::mem::transmute::<usize, ImageCallback>(thunk.callback) };
    // SAFETY: the callback's contract: a kind, valid information for it, the context the image
    // registered.
    unsafe { callback(kind, out.base(), thunk.context) }
}

unsafe extern "win64" fn pcw_register(registration: *mut isize, info: *const u8) -> NtStatus {
    if enter("PcwRegister", true) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if registration.is_null() || info.is_null() {
        violation("PcwRegister", "NULL registration or information pointer");
        return STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the image passes a readable PCW_REGISTRATION_INFORMATION (the DDI's contract),
    // only read here.
    let info = unsafe { Fields::new(info.cast_mut(), reg::SIZE) };
    let (version, name, count, counters, callback, context, flags) = (
        info.get_u32(reg::VERSION),
        info.get_usize(reg::NAME),
        info.get_u32(reg::COUNTER_COUNT),
        info.get_usize(reg::COUNTERS),
        info.get_usize(reg::CALLBACK),
        info.get_usize(reg::CALLBACK_CONTEXT),
        info.get_u32(reg::FLAGS),
    );
    let thunk = Box::new(Thunk { callback, context });
    let sim_info = PCW_REGISTRATION_INFORMATION {
        Version: version,
        Name: name as *mut UNICODE_STRING,
        CounterCount: count,
        Counters: counters as *mut PCW_COUNTER_DESCRIPTOR,
        Callback: (callback != 0).then(|| {
            // SAFETY: windows-sys types the callback as a zero-argument function; pcw-sim
            // calls it with the three arguments `trampoline` takes, in the host convention.
            unsafe {
                core::mem::transmute::<
                    unsafe extern "system" fn(
                        i32,
                        *const PCW_CALLBACK_INFORMATION,
                        *const c_void,
                    ) -> NtStatus,
                    unsafe extern "system" fn() -> NtStatus,
                >(trampoline)
            }
        }),
        CallbackContext: (&raw const *thunk).cast_mut().cast(),
        Flags: flags.cast_signed(),
    };
    let mut handle: isize = 0;
    // SAFETY: valid out-pointer and information; the name and descriptors are the image's,
    // readable as the DDI requires.
    let status = unsafe { pcw_sim::kernel_pcw::PcwRegister(&raw mut handle, &raw const sim_info) };
    if status >= 0 {
        with(|s| s.registrations.insert(handle, thunk));
        // SAFETY: checked non-NULL above; the image's out-pointer.
        unsafe { registration.write_unaligned(handle) };
    }
    status
}

unsafe extern "win64" fn pcw_unregister(registration: isize) {
    enter("PcwUnregister", false);
    // SAFETY: pcw-sim checks the handle and records a bugcheck for a stale one.
    unsafe { pcw_sim::kernel_pcw::PcwUnregister(registration) };
    with(|s| s.registrations.remove(&registration));
}

/// The image's `PCW_DATA` array, re-read at the WDK's offsets (`Data` pointer, `Size` u32).
///
/// # Safety
/// `data` holds `count` readable `PCW_DATA`.
unsafe fn read_data(count: u32, data: *const u8) -> Vec<PCW_DATA> {
    if data.is_null() {
        return Vec::new();
    }
    // SAFETY: per this function's contract: `count` entries of 16 bytes, only read.
    let array = unsafe { Fields::new(data.cast_mut(), 16 * count as usize) };
    (0..count as usize)
        .map(|i| PCW_DATA {
            Data: array.get_usize(16 * i) as *const c_void,
            Size: array.get_u32(16 * i + 8),
        })
        .collect()
}

/// A `UNICODE_STRING` of pcw-sim's type over `units`.
fn sim_unicode(units: &[u16]) -> UNICODE_STRING {
    let bytes = u16::try_from(units.len() * 2).unwrap_or(u16::MAX);
    UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: units.as_ptr().cast_mut(),
    }
}

unsafe extern "win64" fn pcw_add_instance(
    buffer: PPCW_BUFFER,
    name: *const u8,
    id: u32,
    count: u32,
    data: *const u8,
) -> NtStatus {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        COUNTED.fetch_add(1, Ordering::Relaxed);
        return STATUS_SUCCESS;
    }
    if enter("PcwAddInstance", true) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    // SAFETY: the image passes a valid name (the DDI's contract).
    let units = unsafe { read_unicode(name) }.unwrap_or_default();
    // SAFETY: and `count` blocks.
    let blocks = unsafe { read_data(count, data) };
    let name = sim_unicode(&units);
    // SAFETY: the buffer handle the trampoline passed on; a name and blocks alive for the
    // call.
    unsafe {
        pcw_sim::kernel_pcw::PcwAddInstance(buffer, &raw const name, id, count, blocks.as_ptr())
    }
}

unsafe extern "win64" fn pcw_create_instance(
    instance: *mut isize,
    registration: isize,
    name: *const u8,
    count: u32,
    data: *const u8,
) -> NtStatus {
    if enter("PcwCreateInstance", true) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if instance.is_null() {
        violation("PcwCreateInstance", "NULL instance out-pointer");
        return STATUS_INVALID_PARAMETER;
    }
    // SAFETY: as the DDI: a valid name.
    let units = unsafe { read_unicode(name) }.unwrap_or_default();
    // SAFETY: and `count` blocks that stay readable until close.
    let blocks = unsafe { read_data(count, data) };
    let name = sim_unicode(&units);
    let mut handle: isize = 0;
    // SAFETY: pcw-sim copies the name and the block descriptions; the blocks themselves are
    // the image's, readable until close (contract).
    let status = unsafe {
        pcw_sim::kernel_pcw::PcwCreateInstance(
            &raw mut handle,
            registration,
            &raw const name,
            count,
            blocks.as_ptr(),
        )
    };
    if status >= 0 {
        // SAFETY: checked non-NULL; the image's out-pointer.
        unsafe { instance.write_unaligned(handle) };
    }
    status
}

unsafe extern "win64" fn pcw_close_instance(instance: isize) {
    enter("PcwCloseInstance", false);
    // SAFETY: pcw-sim checks the handle and records a bugcheck for a stale one.
    unsafe { pcw_sim::kernel_pcw::PcwCloseInstance(instance) };
}

// ---------------------------------------------------------------------------------------------
// The I/O manager: devices, symbolic links, IRP completion, security.

unsafe extern "win64" fn io_create_device(
    driver: *mut u8,
    extension_size: u32,
    name: *const u8,
    device_type: u32,
    characteristics: u32,
    _exclusive: u8,
    device: *mut *mut u8,
) -> NtStatus {
    if enter("IoCreateDevice", true) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if device.is_null() {
        violation("IoCreateDevice", "NULL DeviceObject out-pointer");
        return STATUS_INVALID_PARAMETER;
    }
    if with(|s| s.driver_object) != driver as usize {
        violation(
            "IoCreateDevice",
            format!("{driver:p} is not the driver object DriverEntry received"),
        );
        return STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a readable UNICODE_STRING or NULL (the DDI's contract).
    let name = unsafe { read_unicode(name) }.map(|u| text(&u));
    let name = name.unwrap_or_default();
    if with(|s| {
        s.devices
            .values()
            .any(|d| d.name.eq_ignore_ascii_case(&name))
    }) {
        return STATUS_OBJECT_NAME_COLLISION;
    }
    let block = Block::zeroed(dev::SIZE + extension_size as usize);
    let p = block.ptr();
    let object = block.fields();
    // SAFETY: `driver` is the loader's driver object (checked above).
    let driver_object = unsafe { Fields::new(driver, drv::SIZE) };
    object.put(dev::TYPE, dev::IO_TYPE_DEVICE.to_le_bytes());
    object.put_u16(dev::SIZE_FIELD, u16::try_from(dev::SIZE).unwrap_or(0));
    object.put_usize(dev::DRIVER_OBJECT, driver as usize);
    object.put_usize(
        dev::NEXT_DEVICE,
        driver_object.get_usize(drv::DEVICE_OBJECT),
    );
    object.put_u32(dev::FLAGS, dev::DO_DEVICE_INITIALIZING);
    object.put_u32(dev::CHARACTERISTICS, characteristics);
    if extension_size > 0 {
        object.put_usize(dev::DEVICE_EXTENSION, p as usize + dev::SIZE);
    }
    object.put_u32(dev::DEVICE_TYPE, device_type);
    object.put_u8(dev::STACK_SIZE, 1);
    driver_object.put_usize(drv::DEVICE_OBJECT, p as usize);
    // SAFETY: checked non-NULL; the image's out-pointer.
    unsafe { device.write_unaligned(p) };
    with(|s| {
        s.devices.insert(
            p as usize,
            Device {
                name,
                block,
                dacl: None,
            },
        )
    });
    STATUS_SUCCESS
}

unsafe extern "win64" fn io_delete_device(device: *mut u8) {
    enter("IoDeleteDevice", false);
    let mut guard = lock();
    let s = guard.get_or_insert_with(State::default);
    let Some(removed) = s.devices.remove(&(device as usize)) else {
        s.violations.push(Violation {
            routine: "IoDeleteDevice",
            what: format!("{device:p} is not a device of this driver (deleted twice?)"),
        });
        return;
    };
    // Unlink `device` from the driver's list: the loader's driver object and device blocks.
    let next = removed.block.fields().get_usize(dev::NEXT_DEVICE);
    // SAFETY: the loader's driver object, alive while the image is loaded.
    let mut at = (
        unsafe { Fields::new(s.driver_object as *mut u8, drv::SIZE) },
        drv::DEVICE_OBJECT,
    );
    loop {
        let current = at.0.get_usize(at.1);
        if current == 0 {
            break;
        }
        if current == device as usize {
            at.0.put_usize(at.1, next);
            break;
        }
        let Some(d) = s.devices.get(&current) else {
            break;
        };
        at = (d.block.fields(), dev::NEXT_DEVICE);
    }
    if let Some(link) = s
        .links
        .iter()
        .find(|(_, target)| target.eq_ignore_ascii_case(&removed.name))
    {
        s.violations.push(Violation {
            routine: "IoDeleteDevice",
            what: format!(
                "device `{}` deleted while symbolic link `{}` still names it",
                removed.name, link.0
            ),
        });
    }
    drop(removed);
}

unsafe extern "win64" fn io_create_symbolic_link(link: *const u8, target: *const u8) -> NtStatus {
    if enter("IoCreateSymbolicLink", true) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    // SAFETY: a readable UNICODE_STRING (the DDI's contract).
    let link = unsafe { read_unicode(link) };
    // SAFETY: as above.
    let target = unsafe { read_unicode(target) };
    let (Some(link), Some(target)) = (link.map(|u| text(&u)), target.map(|u| text(&u))) else {
        violation("IoCreateSymbolicLink", "NULL name");
        return STATUS_INVALID_PARAMETER;
    };
    with(|s| {
        if !s
            .devices
            .values()
            .any(|d| d.name.eq_ignore_ascii_case(&target))
        {
            s.violations.push(Violation {
                routine: "IoCreateSymbolicLink",
                what: format!("link `{link}` to `{target}`, which is not a device"),
            });
        }
        let key = link.to_ascii_lowercase();
        if s.links.contains_key(&key) {
            return STATUS_OBJECT_NAME_COLLISION;
        }
        s.links.insert(key, target);
        STATUS_SUCCESS
    })
}

unsafe extern "win64" fn io_delete_symbolic_link(link: *const u8) -> NtStatus {
    enter("IoDeleteSymbolicLink", false);
    // SAFETY: a readable UNICODE_STRING (the DDI's contract).
    let Some(link) = (unsafe { read_unicode(link) }).map(|u| text(&u)) else {
        violation("IoDeleteSymbolicLink", "NULL name");
        return STATUS_INVALID_PARAMETER;
    };
    with(|s| {
        if s.links.remove(&link.to_ascii_lowercase()).is_some() {
            STATUS_SUCCESS
        } else {
            STATUS_OBJECT_NAME_NOT_FOUND
        }
    })
}

unsafe extern "win64" fn iof_complete_request(irp: *mut u8, _boost: i8) {
    enter("IofCompleteRequest", false);
    with(|s| match s.irps.get_mut(&(irp as usize)) {
        Some(n) => {
            *n += 1;
            if *n > 1 {
                s.violations.push(Violation {
                    routine: "IofCompleteRequest",
                    what: format!("IRP {irp:p} completed {n} times"),
                });
            }
        }
        None => s.violations.push(Violation {
            routine: "IofCompleteRequest",
            what: format!("{irp:p} is not an IRP in flight"),
        }),
    });
}

unsafe extern "win64" fn ob_set_security_object_by_pointer(
    object: *mut u8,
    information: u32,
    descriptor: *const u8,
) -> NtStatus {
    if enter("ObSetSecurityObjectByPointer", true) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if information != DACL_SECURITY_INFORMATION {
        violation(
            "ObSetSecurityObjectByPointer",
            format!("SecurityInformation {information:#x}, expected DACL_SECURITY_INFORMATION"),
        );
    }
    // SAFETY: a self-relative descriptor is readable from its start; `decode` bounds every
    // read by the lengths it finds, within 64 KiB.
    let decoded = unsafe { security::decode_self_relative(descriptor) };
    with(|s| {
        let Some(device) = s.devices.get_mut(&(object as usize)) else {
            s.violations.push(Violation {
                routine: "ObSetSecurityObjectByPointer",
                what: format!("{object:p} is not a device of this driver"),
            });
            return STATUS_INVALID_PARAMETER;
        };
        match decoded {
            Ok(dacl) => {
                device.dacl = Some(dacl);
                STATUS_SUCCESS
            }
            Err(e) => {
                s.violations.push(Violation {
                    routine: "ObSetSecurityObjectByPointer",
                    what: format!("malformed security descriptor: {e}"),
                });
                STATUS_INVALID_PARAMETER
            }
        }
    })
}

/// Every routine the loader implements, with its shim's address: the one list of them.
fn table() -> [(&'static str, usize); 23] {
    [
        ("ExAllocatePool2", ex_allocate_pool2 as *const () as usize),
        (
            "ExFreePoolWithTag",
            ex_free_pool_with_tag as *const () as usize,
        ),
        ("ExFreePool", ex_free_pool as *const () as usize),
        (
            "KeEnterCriticalRegion",
            ke_enter_critical_region as *const () as usize,
        ),
        (
            "KeLeaveCriticalRegion",
            ke_leave_critical_region as *const () as usize,
        ),
        (
            "ExAcquirePushLockExclusiveEx",
            ex_acquire_push_lock_exclusive_ex as *const () as usize,
        ),
        (
            "ExReleasePushLockExclusiveEx",
            ex_release_push_lock_exclusive_ex as *const () as usize,
        ),
        (
            "ExAcquirePushLockSharedEx",
            ex_acquire_push_lock_shared_ex as *const () as usize,
        ),
        (
            "ExReleasePushLockSharedEx",
            ex_release_push_lock_shared_ex as *const () as usize,
        ),
        (
            "KeQueryPerformanceCounter",
            ke_query_performance_counter as *const () as usize,
        ),
        (
            "KeQuerySystemTimePrecise",
            ke_query_system_time_precise as *const () as usize,
        ),
        (
            "KeReadStateEvent",
            ke_read_state_event as *const () as usize,
        ),
        ("PcwRegister", pcw_register as *const () as usize),
        ("PcwUnregister", pcw_unregister as *const () as usize),
        ("PcwAddInstance", pcw_add_instance as *const () as usize),
        (
            "PcwCreateInstance",
            pcw_create_instance as *const () as usize,
        ),
        ("PcwCloseInstance", pcw_close_instance as *const () as usize),
        ("IoCreateDevice", io_create_device as *const () as usize),
        ("IoDeleteDevice", io_delete_device as *const () as usize),
        (
            "IoCreateSymbolicLink",
            io_create_symbolic_link as *const () as usize,
        ),
        (
            "IoDeleteSymbolicLink",
            io_delete_symbolic_link as *const () as usize,
        ),
        (
            "IofCompleteRequest",
            iof_complete_request as *const () as usize,
        ),
        (
            "ObSetSecurityObjectByPointer",
            ob_set_security_object_by_pointer as *const () as usize,
        ),
    ]
}

/// The module a routine is imported from: the HAL's performance counter (which the import
/// libraries still place in `hal.dll`), everything else from the kernel.
fn module_of(name: &str) -> &'static str {
    if name == "KeQueryPerformanceCounter" {
        "hal.dll"
    } else {
        "ntoskrnl.exe"
    }
}

/// The address of the shim for `dll!name` (`dll` in lower case), or `None` if the loader does
/// not implement it.
pub fn resolve(dll: &str, name: &str) -> Option<usize> {
    if dll != module_of(name) {
        return None;
    }
    table()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, address)| address)
}

/// The routines the loader implements, as `module!name`.
pub fn shimmed() -> Vec<String> {
    table()
        .into_iter()
        .map(|(n, _)| format!("{}!{n}", module_of(n)))
        .collect()
}
