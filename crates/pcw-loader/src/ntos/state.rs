// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel's state while an image is loaded, shared by every routine: what is allocated,
//! created and registered, what was flagged, the call counts and the fault injection. Every
//! other module of `ntos` reads and changes it only through the functions here.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::irql;
use crate::layout::{Fields, unicode_string as us};
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
pub(crate) struct PoolBlock {
    /// Owns the memory until it is freed.
    pub(crate) _memory: Block,
    pub(crate) size: usize,
    pub(crate) tag: u32,
    /// Paged pool (freed at or below `APC_LEVEL`).
    pub(crate) paged: bool,
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
pub(crate) struct Thunk {
    pub(crate) callback: usize,
    pub(crate) context: usize,
}

/// The kernel's state while an image is loaded.
#[derive(Debug, Default)]
pub struct State {
    pub(crate) driver_object: usize,
    pub(crate) pool: BTreeMap<usize, PoolBlock>,
    pub(crate) devices: BTreeMap<usize, Device>,
    /// Link name (lower case) → target device name.
    pub(crate) links: BTreeMap<String, String>,
    /// IRPs in flight → times completed.
    pub(crate) irps: BTreeMap<usize, u32>,
    pub(crate) registrations: BTreeMap<isize, Box<Thunk>>,
    pub(crate) violations: Vec<Violation>,
    fail_at: Option<usize>,
    fallible_calls: usize,
    failed: Option<&'static str>,
    calls: BTreeMap<&'static str, usize>,
    /// Spin locks held: the lock's address → the thread holding it.
    pub(crate) spin_locks: BTreeMap<usize, std::thread::ThreadId>,
    /// What the image printed with `DbgPrint` and its siblings.
    pub(crate) debug_log: Vec<DebugLine>,
}

/// One line the image printed with `DbgPrint`, `DbgPrintEx` or `vDbgPrintEx…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugLine {
    /// `ComponentId` (`DPFLTR_*_ID`); `DbgPrint` prints as `DPFLTR_DEFAULT_ID` (101).
    pub component: u32,
    /// `Level` (`DPFLTR_ERROR_LEVEL` 0 … or a mask); `DbgPrint` prints at `DPFLTR_INFO_LEVEL`
    /// (3).
    pub level: u32,
    /// The formatted text, as the debugger would show it (at most 512 bytes, like Windows).
    pub text: String,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Benchmark mode: `PcwAddInstance` only counts (see [`count_add_instance_only`]).
pub(crate) static COUNT_ONLY: AtomicBool = AtomicBool::new(false);
/// `PcwAddInstance` calls made in benchmark mode.
pub(crate) static COUNTED: AtomicUsize = AtomicUsize::new(0);

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
pub(crate) fn lock() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
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

/// Calls made to each routine since the image was loaded.
pub fn calls() -> BTreeMap<&'static str, usize> {
    with(|s| s.calls.clone())
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
    /// Spin locks still held (their addresses).
    pub spin_locks: Vec<usize>,
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
        spin_locks: s.spin_locks.keys().copied().collect(),
    })
}

pub(crate) fn tag_text(tag: u32) -> String {
    String::from_utf8_lossy(&tag.to_le_bytes()).into_owned()
}

/// What [`enter`] checks of a routine: the highest IRQL it may be called at and whether fault
/// injection may fail it. Installed once from the routine table (`ntos::ROUTINES`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_irql: u8,
    pub(crate) fallible: bool,
}

static LIMITS: OnceLock<BTreeMap<&'static str, Limits>> = OnceLock::new();

/// Installs the routines' limits (the first call wins: the table is a constant).
pub(crate) fn install_limits(limits: impl FnOnce() -> BTreeMap<&'static str, Limits>) {
    LIMITS.get_or_init(limits);
}

/// Counts a call of `routine`, checks the caller's IRQL against the routine's limit, and decides
/// whether this call fails (a fallible routine, at the position [`fail_at`] chose). None of it
/// in benchmark mode.
pub(crate) fn enter(routine: &'static str) -> bool {
    enter_as(routine, true)
}

/// [`enter`] for a call that must not be failed even if the routine can fail (an allocation
/// that would raise an exception on failure, which the loader cannot deliver).
pub(crate) fn enter_infallible(routine: &'static str) {
    enter_as(routine, false);
}

fn enter_as(routine: &'static str, may_fail: bool) -> bool {
    if COUNT_ONLY.load(Ordering::Relaxed) {
        return false;
    }
    let limits = LIMITS.get().and_then(|l| l.get(routine)).copied();
    let current = irql::current();
    if let Some(limits) = limits
        && current > limits.max_irql
    {
        violation(
            routine,
            format!(
                "called at {}; it must be called at or below {}",
                irql::name(current),
                irql::name(limits.max_irql)
            ),
        );
    }
    let fallible = may_fail && limits.is_some_and(|l| l.fallible);
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

pub(crate) fn text(units: &[u16]) -> String {
    String::from_utf16_lossy(units)
}

/// The exit code of a process the loader stopped because the image did something it cannot
/// continue from (a privileged instruction it does not emulate, a fault, `KeBugCheckEx`): the
/// message naming it is on standard error. [`crate::isolate`] reports it as such.
pub const STOP_EXIT_CODE: i32 = 86;

/// Stops the process: `message` on standard error after `pcw-loader: stopped: `, then exit
/// with [`STOP_EXIT_CODE`] without unwinding (the image's frames are on the stack). Used where
/// returning to the image is impossible; callable from the fault handler.
pub(crate) fn stop(message: &str) -> ! {
    let line = format!("pcw-loader: stopped: {message}\n");
    // SAFETY: writes a buffer we own to standard error; the result is irrelevant, the process
    // exits next.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    // SAFETY: ends the process at once; nothing of it is used afterwards.
    unsafe { libc::_exit(STOP_EXIT_CODE) }
}
