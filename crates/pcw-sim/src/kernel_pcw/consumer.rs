// SPDX-License-Identifier: MIT OR Apache-2.0
//! The consumer side: [`Kernel`], one session of the simulated kernel from boot to teardown,
//! which enumerates and collects a counterset by calling its providers' `PCW_CALLBACK`s as PCW
//! does, applies PCW's own filter, notifies providers of added and removed counters, and
//! reports at teardown what was left open or went wrong.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pcw_core::filter::{InstanceFilter, counter_wanted};
use pcw_core::wildcard;
use windows_sys::Wdk::Foundation::KEVENT;
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_COUNTER_INFORMATION, PCW_MASK_INFORMATION, PcwCallbackAddCounter,
    PcwCallbackCollectData, PcwCallbackEnumerateInstances, PcwCallbackRemoveCounter,
};
use windows_sys::Win32::Foundation::{NTSTATUS, UNICODE_STRING};

use super::PCW_ANY_INSTANCE_ID;
use super::clock::{self, Clock};
use super::ddi::{Added, BUFFER_MAGIC, CollectBuffer, read_values};
use super::providers::{
    Bugcheck, Descriptor, Misuse, PcwCall, RealCallback, Running, State, call_provider, state,
};

/// Held by whoever drives the simulated kernel; one at a time, as there is one kernel.
static SESSION: Mutex<()> = Mutex::new(());

/// Exclusive use of the simulated kernel, from boot to teardown.
///
/// Tests in one binary run on several threads; each takes a `Kernel` so that their drivers do
/// not see each other's registrations. Consumers (collect, enumerate) may then be called from
/// as many threads as the test likes.
///
/// No two kernels of a process hand out the same handle. A kernel dropped without
/// [`Kernel::teardown`] (its test panicked) is abandoned: the handles it handed out, which a
/// driver's host build may still hold in its statics, are ignored by `PcwUnregister` and
/// `PcwCloseInstance` under any later kernel — the next test's `DriverEntry` replacing them
/// neither unregisters its own counterset nor fails. So are the handles a teardown reports
/// still registered or open: the test that leaked them fails for it, and a later test
/// releasing them does not. The other handles of a torn-down kernel stay stale: releasing one
/// again later is recorded as [`Bugcheck::UnregisterStale`] or [`Bugcheck::CloseStale`], as
/// real PCW would bugcheck.
#[derive(Debug)]
pub struct Kernel {
    _session: MutexGuard<'static, ()>,
    /// Set by [`Kernel::teardown`]; a kernel dropped without it is abandoned.
    torn_down: bool,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        if !self.torn_down {
            state().abandon();
        }
    }
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
    /// Tolerated contract breaches, each once.
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
    /// `PcwCreateInstance` instances, which PCW filters itself, are never here.
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

pub(super) fn utf16_string(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
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
        clock::reset(clock);
        *state() = State::booted(build);
        Self {
            _session: session,
            torn_down: false,
        }
    }

    /// Moves the clock forward by `hundred_ns` (100 ns units), in either clock mode.
    pub fn advance(&self, hundred_ns: i64) {
        clock::advance(hundred_ns);
    }

    /// The performance counter now, as the driver sees it.
    pub fn perf_counter(&self) -> i64 {
        clock::since_boot()
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
            .filter_map(|(handle, cb, ctx)| cb.map(|f| (handle, f, ctx)))
            .filter_map(|(handle, f, ctx)| {
                let _running = Running::enter(handle)?;
                // SAFETY: `f` is the provider's registered PCW_CALLBACK and `ctx` its context;
                // `info` lives across the call.
                Some(unsafe { call_provider(f, kind, &raw const info, ctx as *const c_void) })
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
            // Counted as running while its callbacks run (PcwUnregister waits for them); a
            // registration unregistered since it was looked up is skipped, as PCW would.
            let running = Running::enter(handle);
            if let (Some(f), Some(_)) = (callback, &running) {
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
                    let returned: HashSet<(u32, Vec<u16>)> =
                        added.iter().map(|(n, i, _)| (*i, folded(n))).collect();
                    for (name, id, _) in &universe {
                        if request.selects(name, *id) && !returned.contains(&(*id, folded(name))) {
                            out.missing.push(String::from_utf16_lossy(name));
                        }
                    }
                }
            }
            let mut st = state();
            st.misuse.append(&mut misuse);
            // The callback's instances come first; PCW filters the created ones itself.
            let by_callback = added.len();
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
            // Names as PCW compares them, and each id's first name.
            let mut names: HashSet<Vec<u16>> = HashSet::new();
            let mut ids: HashMap<u32, Vec<u16>> = HashMap::new();
            for (at, (name, id, values)) in added.into_iter().enumerate() {
                if !names.insert(folded(&name)) {
                    st.misuse
                        .push(Misuse::DuplicateName(String::from_utf16_lossy(&name)));
                } else if let Some(other) = ids.get(&id) {
                    st.misuse.push(Misuse::DuplicateId(
                        String::from_utf16_lossy(other),
                        String::from_utf16_lossy(&name),
                        id,
                    ));
                }
                ids.entry(id).or_insert_with(|| name.clone());
                let display = String::from_utf16_lossy(&name);
                if !request.selects(&name, id) {
                    if at < by_callback {
                        out.unfiltered.push(display);
                    }
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
    pub fn teardown(mut self) -> Teardown {
        self.torn_down = true;
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
            // Each breach once, in the order first seen: a callback that breaks a rule breaks it
            // at every collection.
            misuse: std::mem::take(&mut st.misuse)
                .into_iter()
                .fold(Vec::new(), |mut seen, m| {
                    if !seen.contains(&m) {
                        seen.push(m);
                    }
                    seen
                }),
        };
        st.abandon_leaked();
        *st = State::default();
        report
    }
}

/// A name as PCW compares names: unit by unit, upper-cased.
fn folded(name: &[u16]) -> Vec<u16> {
    name.iter().map(|u| wildcard::upcase(*u)).collect()
}
