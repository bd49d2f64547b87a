// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the simulated kernel tracks about providers: the registered countersets and their
//! descriptors, the instances made with `PcwCreateInstance`, injected faults, and what a real
//! kernel would have bugchecked on or a provider should not have done; and, per thread, whether
//! provider code (as opposed to the simulator's own) is running.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use windows_sys::Wdk::System::SystemServices::{PCW_CALLBACK_INFORMATION, PCW_COUNTER_DESCRIPTOR};
use windows_sys::Win32::Foundation::{NTSTATUS, STATUS_SUCCESS};

use super::BUILD_SERVER_2022;

/// The real callback type (windows-sys types `PPCW_CALLBACK` as a zero-argument pointer).
pub(super) type RealCallback =
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

/// Something real PCW would have crashed the machine for. `Display` says what was called and
/// the usual cause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Bugcheck {
    /// `PcwUnregister(NULL)`.
    #[error("PcwUnregister(NULL)")]
    UnregisterNull,
    /// `PcwUnregister` of a handle that is not (or no longer) registered.
    #[error(
        "PcwUnregister of registration handle {0:#x}, which is not registered in this kernel \
         (unregistered twice, or never handed out)"
    )]
    UnregisterStale(isize),
    /// `PcwCloseInstance` of NULL or of an instance that is not open.
    #[error(
        "PcwCloseInstance of instance handle {0:#x}, which is not open (NULL, closed twice, or \
         closed already by PcwUnregister of its registration)"
    )]
    CloseStale(isize),
    /// `PcwCreateInstance` on a registration that is not open.
    #[error(
        "PcwCreateInstance on registration handle {0:#x}, which is not registered in this kernel"
    )]
    CreateOnStale(isize),
}

/// A contract breach PCW tolerates but a provider should not commit. `Display` names the
/// instance or call and what the contract asks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Misuse {
    /// `PcwAddInstance` with a NULL, empty-for-multi or odd-length name.
    #[error("PcwAddInstance with a NULL name or one of an odd number of bytes")]
    BadInstanceName,
    /// An instance id of `0xFFFFFFFE` or above (reserved: ids should stay below it).
    #[error("instance id {0:#x} is reserved (ids must stay below 0xFFFFFFFE)")]
    ReservedInstanceId(u32),
    /// Two instances with the same name (compared case-insensitively) in one collection.
    #[error(
        "two instances named `{0}` in one collection (names must be unique, compared \
         case-insensitively)"
    )]
    DuplicateName(String),
    /// Two instances of one collection with the same id and different names (ids should be
    /// unique; a query by `InstanceId` then selects both).
    #[error("instances `{0}` and `{1}` of one collection both have id {2} (ids should be unique)")]
    DuplicateId(String, String, u32),
    /// `PcwAddInstance` refused an instance whose data blocks are shorter than the registered
    /// descriptors read (it returns `STATUS_INVALID_BUFFER_SIZE`, and the instance is lost).
    #[error(
        "PcwAddInstance refused instance `{name}`: counter {counter} reads bytes {start}..{end} \
         of data block {block}, which is {size} bytes (STATUS_INVALID_BUFFER_SIZE)"
    )]
    ShortBlock {
        /// The instance's name.
        name: String,
        /// The first counter id whose bytes lie past its block's end.
        counter: u16,
        /// Its block (`StructIndex`).
        block: u16,
        /// Where its bytes start in the block.
        start: u32,
        /// Where they end.
        end: u32,
        /// The block's size as passed (0 when `PcwAddInstance` had no such block).
        size: u32,
    },
    /// `PcwAddInstance` called with a buffer handle that is not a live collection.
    #[error("PcwAddInstance with a buffer handle that is not a collection in progress")]
    StaleBuffer,
    /// `PcwUnregister` of a registration from inside one of its own callbacks: real PCW waits
    /// for the registration's running callbacks, so it would wait for itself forever.
    #[error(
        "PcwUnregister of a registration from inside its own callback (real PCW would wait \
         for that callback forever)"
    )]
    UnregisterInCallback,
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
pub(super) struct Registration {
    pub(super) name: Vec<u16>,
    pub(super) version: u32,
    pub(super) flags: i32,
    pub(super) descriptors: Vec<Descriptor>,
    pub(super) callback: Option<RealCallback>,
    pub(super) context: usize,
}

/// One instance made with `PcwCreateInstance`.
#[derive(Clone, Debug)]
pub(super) struct Created {
    pub(super) registration: isize,
    pub(super) name: Vec<u16>,
    pub(super) id: u32,
    pub(super) blocks: Vec<(usize, u32)>,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) build: u32,
    /// The first handle this boot handed out (handles grow across boots).
    pub(super) first_handle: isize,
    pub(super) registrations: BTreeMap<isize, Registration>,
    pub(super) created: BTreeMap<isize, Created>,
    pub(super) calls: BTreeMap<PcwCall, usize>,
    pub(super) faults: BTreeMap<PcwCall, (usize, NTSTATUS)>,
    pub(super) bugchecks: Vec<Bugcheck>,
    pub(super) misuse: Vec<Misuse>,
    pub(super) next_instance_id: u32,
    /// Callbacks running now, by registration handle (see [`Running`]).
    pub(super) running: BTreeMap<isize, usize>,
}

static STATE: Mutex<State> = Mutex::new(State {
    build: BUILD_SERVER_2022,
    first_handle: FIRST_HANDLE,
    registrations: BTreeMap::new(),
    created: BTreeMap::new(),
    calls: BTreeMap::new(),
    faults: BTreeMap::new(),
    bugchecks: Vec::new(),
    misuse: Vec::new(),
    next_instance_id: 0,
    running: BTreeMap::new(),
});

/// Signalled whenever a callback returns (see [`Running`]).
static CALLBACK_RETURNED: Condvar = Condvar::new();

/// One callback of a registration running, as PCW's rundown protection of a registration
/// counts it: `PcwUnregister` removes the registration, so that no callback of it starts, then
/// waits for the ones running to return ([`wait_for_callbacks`]). Providers rely on this: once
/// `PcwUnregister` returns, nothing of the registration runs, and the driver may free what its
/// callback reads (its image itself goes at unload).
pub(super) struct Running(isize);

impl Running {
    /// Counts a callback of `registration` as running; `None` if the registration is gone.
    pub(super) fn enter(registration: isize) -> Option<Self> {
        let mut st = state();
        if !st.registrations.contains_key(&registration) {
            return None;
        }
        *st.running.entry(registration).or_default() += 1;
        RUNNING_HERE.with(|r| r.borrow_mut().push(registration));
        Some(Self(registration))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING_HERE.with(|r| {
            let mut r = r.borrow_mut();
            if let Some(at) = r.iter().rposition(|h| *h == self.0) {
                r.remove(at);
            }
        });
        let mut st = state();
        if let Some(n) = st.running.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                st.running.remove(&self.0);
            }
        }
        drop(st);
        CALLBACK_RETURNED.notify_all();
    }
}

/// Waits, releasing `st` meanwhile, until no callback of `registration` runs — unless this
/// thread is itself running a callback of `registration`, whose own return the wait would
/// need (real PCW would hang there; the simulator records [`Misuse::UnregisterInCallback`]
/// and goes on).
pub(super) fn wait_for_callbacks(
    mut st: MutexGuard<'static, State>,
    registration: isize,
) -> MutexGuard<'static, State> {
    if RUNNING_HERE.with(|r| r.borrow().contains(&registration)) {
        st.misuse.push(Misuse::UnregisterInCallback);
        return st;
    }
    CALLBACK_RETURNED
        .wait_while(st, |s| s.running.contains_key(&registration))
        .unwrap_or_else(PoisonError::into_inner)
}

std::thread_local! {
    /// (a provider callback is running on this thread, simulator DDIs entered from it).
    static PROVIDER: std::cell::Cell<(bool, u32)> = const { std::cell::Cell::new((false, 0)) };
    /// The registrations whose callbacks this thread is running (innermost last).
    static RUNNING_HERE: std::cell::RefCell<Vec<isize>> = const { std::cell::RefCell::new(Vec::new()) };
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
pub(super) struct InDdi;

impl InDdi {
    pub(super) fn enter() -> Self {
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
pub(super) unsafe fn call_provider(
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

/// The kernel's provider state, locked.
pub(super) fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The first handle the process's first kernel hands out; handles step by 0x10.
const FIRST_HANDLE: isize = 0x1000;

/// The next handle to hand out. Never reset, so no two kernels of one process hand out the
/// same handle: a driver's host build keeps its statics across the tests of a binary, and a
/// handle a test left there must never name a later test's registration.
static NEXT_HANDLE: AtomicIsize = AtomicIsize::new(FIRST_HANDLE);

/// The handles of the kernels dropped without their teardown ([`State::abandon`]).
static ABANDONED: Mutex<Vec<Range<isize>>> = Mutex::new(Vec::new());

/// The handles torn-down kernels reported still registered or open, until their first release
/// ([`State::abandon_leaked`]).
static LEAKED: Mutex<BTreeSet<isize>> = Mutex::new(BTreeSet::new());

impl State {
    /// The state of a freshly booted kernel of Windows build `build`.
    pub(super) fn booted(build: u32) -> Self {
        Self {
            build,
            first_handle: NEXT_HANDLE.load(Ordering::Relaxed),
            ..Self::default()
        }
    }

    /// Records the handles this boot handed out as abandoned: its kernel was dropped without
    /// its teardown — the test holding it panicked — so nothing reported what it left open.
    /// A driver's host build may still hold them in its statics, and the next `DriverEntry`
    /// (or `register`) of another test, replacing them, releases them: no concern of that
    /// test's kernel, which ignores them ([`State::abandoned`]).
    pub(super) fn abandon(&self) {
        let handed_out = self.first_handle..NEXT_HANDLE.load(Ordering::Relaxed);
        if !handed_out.is_empty() {
            ABANDONED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(handed_out);
        }
    }

    /// Records the handles still registered or open at this kernel's teardown as abandoned:
    /// the teardown reports them as leaks, in the test that leaked them. A driver's host build
    /// may still hold them in its statics, and another test's `DriverEntry` (or `register`)
    /// replacing them releases them: the same leak, not a fault of that test. A handle that
    /// was released before the teardown stays stale: releasing it again is a bugcheck, and so
    /// is a second release of a leaked one.
    pub(super) fn abandon_leaked(&self) {
        let leaked = self.registrations.keys().chain(self.created.keys());
        LEAKED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(leaked);
    }

    /// Whether releasing `handle` is no concern of this kernel: a handle an abandoned kernel
    /// handed out ([`State::abandon`]), or a leaked one's first release
    /// ([`State::abandon_leaked`]), which this call uses up.
    pub(super) fn abandoned(handle: isize) -> bool {
        let leaked = LEAKED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&handle);
        leaked
            || ABANDONED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|r| r.contains(&handle))
    }

    /// Stores `value` under a new handle in the table `table` picks (registrations or created
    /// instances), writes the handle to the DDI's out-parameter `slot`, and succeeds.
    ///
    /// # Safety
    /// `slot` is non-NULL and writable.
    pub(super) unsafe fn hand_out<T>(
        &mut self,
        slot: *mut isize,
        table: fn(&mut Self) -> &mut BTreeMap<isize, T>,
        value: T,
    ) -> NTSTATUS {
        let handle = NEXT_HANDLE.fetch_add(0x10, Ordering::Relaxed);
        table(self).insert(handle, value);
        // SAFETY: the caller guarantees a non-NULL, writable slot.
        unsafe { slot.write(handle) };
        STATUS_SUCCESS
    }

    /// Counts a call of `call` and returns the status it was made to fail with, if this is
    /// the call [`crate::kernel_pcw::Kernel::fail`] chose.
    pub(super) fn take_fault(&mut self, call: PcwCall) -> Option<NTSTATUS> {
        let n = self.calls.entry(call).or_insert(0);
        let index = *n;
        *n += 1;
        match self.faults.get(&call) {
            Some(&(at, status)) if at == index => Some(status),
            _ => None,
        }
    }
}
