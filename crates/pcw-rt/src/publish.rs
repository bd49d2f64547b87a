// SPDX-License-Identifier: MIT OR Apache-2.0
//! The safe `PCW_CALLBACK`: a driver implements [`Publish`] for each counterset it answers, and
//! [`callback`] (registered by the generated `register_publisher`) does the rest.
//!
//! What the library does, so that no driver writes it again:
//!
//! * `InstanceId`: when the query names one id, [`Publish::visit_id`] is called instead of
//!   [`Publish::visit`] (override it for an O(1) lookup); any instance offered with another id
//!   is left out either way.
//! * `InstanceMask`: names are matched against the consumer's `*`/`?` wildcard, case-insensitively,
//!   in time linear in the name and mask (NULL, empty and `*` select every name).
//! * `CounterMask`: handed to the values closure as a [`CounterMask`], so a driver may compute
//!   only the counters asked for.
//! * `PcwCallbackEnumerateInstances`: names and ids only; the values closure is not called.
//! * The consumer's `CancelEvent` is polled before the first instance and every 16th after it;
//!   a cancelled query ends with `STATUS_CANCELLED`.
//! * The first `PcwAddInstance` failure ends the visit and is the callback's status; otherwise
//!   the status is a success (see [`Visitor::status`]).
//! * `PcwCallbackAddCounter` and `PcwCallbackRemoveCounter` reach [`Publish::counter_added`] and
//!   [`Publish::counter_removed`] (no-ops by default).
//!
//! Nothing here allocates or panics.

use core::marker::PhantomData;
use core::ops::ControlFlow;

use pcw_core::filter::InstanceFilter;

use crate::{
    NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, PCW_MASK_INFORMATION, PPCW_BUFFER,
    PcwAddInstance, STATUS_CANCELLED, STATUS_SUCCESS, UNICODE_STRING, event_signalled, unicode,
    units,
};

/// A counterset as pcw-gen generates it: the marker type `Set` of each counterset module, tying
/// the set to its value block and its `PcwAddInstance` helper. Generated code implements it; a
/// driver names it (`Publish<my_set::Set>`) but has no reason to implement it.
pub trait Counterset: 'static {
    /// The counterset's values: its value block (the generated `#[repr(C)]` struct, or the type
    /// bound to it), or a tuple of its blocks when the manifest declares several.
    type Values;

    /// Adds one instance with its values to a collect request (the generated `add`).
    ///
    /// # Safety
    /// `buffer` is the `Buffer` of the `PCW_CALLBACK_INFORMATION` of the callback now running.
    unsafe fn add(
        buffer: PPCW_BUFFER,
        name: &UNICODE_STRING,
        id: u32,
        values: &Self::Values,
    ) -> NTSTATUS;
}

/// The value block (or blocks) of counterset `S`: what [`Visitor::instance`]'s values closure
/// returns. Generated code implements it for each set's `Values` type, and only for that set,
/// so values of another counterset are refused at compile time with this trait's message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the values of the counterset `{S}`",
    label = "the values closure returns `{Self}`",
    note = "`Visitor<{S}>::instance` takes the values of its own counterset \
            (`<{S} as pcw_rt::Counterset>::Values`); was this publisher meant for another set?"
)]
pub trait ValuesOf<S: Counterset> {
    /// The values as the counterset's `Values` type.
    fn values(&self) -> &S::Values;
}

/// A driver's instances of counterset `S`, visited on each collection.
///
/// Register with the generated `my_set::register_publisher(&PUBLISHER)`: PCW then calls
/// [`callback::<S, Self>`](callback) with the publisher as context.
///
/// ```
/// use core::ops::ControlFlow;
/// use pcw_rt::{Counterset, CounterMask, Publish, ValuesOf, Visitor};
///
/// // What pcw-gen generates for a counterset with one counter `Value` (id 0).
/// pub struct Set;
/// #[repr(C)]
/// #[derive(Default)]
/// pub struct Values {
///     pub value: u32,
/// }
/// impl Counterset for Set {
///     type Values = Values;
///     unsafe fn add(
///         buffer: pcw_rt::PPCW_BUFFER,
///         name: &pcw_rt::UNICODE_STRING,
///         id: u32,
///         values: &Values,
///     ) -> pcw_rt::NTSTATUS {
///         let mut data = [pcw_rt::PCW_DATA {
///             Data: core::ptr::from_ref(values).cast(),
///             Size: 4,
///         }];
///         // SAFETY: `buffer` is the running callback's (this function's contract).
///         unsafe { pcw_rt::PcwAddInstance(buffer, name, id, 1, data.as_mut_ptr()) }
///     }
/// }
/// impl ValuesOf<Set> for Values {
///     fn values(&self) -> &Values {
///         self
///     }
/// }
///
/// // The driver's side: its instances, offered one by one.
/// struct Disks([(&'static [u16], u32, u32); 2]);
///
/// impl Publish<Set> for Disks {
///     fn visit(&self, visitor: &mut Visitor<'_, Set>) -> ControlFlow<()> {
///         for &(name, id, queued) in &self.0 {
///             // The closure runs only for instances the query selects, and only when PCW
///             // collects data (not for EnumerateInstances).
///             visitor.instance(name, id, |counters: CounterMask| Values {
///                 value: if counters.wants(0) { queued } else { 0 },
///             })?;
///         }
///         ControlFlow::Continue(())
///     }
/// }
///
/// static DISK0: [u16; 5] = [b'd' as u16, b'i' as u16, b's' as u16, b'k' as u16, b'0' as u16];
/// static DISK1: [u16; 5] = [b'd' as u16, b'i' as u16, b's' as u16, b'k' as u16, b'1' as u16];
/// static DISKS: Disks = Disks([(&DISK0, 0, 7), (&DISK1, 1, 3)]);
/// // In DriverEntry: `let registration = my_set::register_publisher(&DISKS)?;`
/// # let _ = &DISKS;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not publish the counterset `{S}`",
    label = "no `impl pcw_rt::Publish<{S}>` for `{Self}`",
    note = "a counterset's `register_publisher` takes a type implementing `pcw_rt::Publish<Set>` \
            for that counterset's own `Set` marker; its `visit` offers instances with that set's \
            values type (`<{S} as pcw_rt::Counterset>::Values`)"
)]
pub trait Publish<S: Counterset> {
    /// Offers every instance to `visitor` ([`Visitor::instance`]), in any order, each with a
    /// stable id unique in the set; stops when `instance` returns `Break` (cancel or failure;
    /// further offers would be ignored anyway). Called for `PcwCallbackCollectData` and
    /// `PcwCallbackEnumerateInstances`.
    fn visit(&self, visitor: &mut Visitor<'_, S>) -> ControlFlow<()>;

    /// Offers the instance whose id is `id`, if there is one: called instead of
    /// [`Publish::visit`] when the query names a single `InstanceId`. The default visits
    /// everything (the visitor drops other ids); override it for an O(1) lookup.
    fn visit_id(&self, id: u32, visitor: &mut Visitor<'_, S>) -> ControlFlow<()> {
        let _ = id;
        self.visit(visitor)
    }

    /// `PcwCallbackAddCounter`: a consumer added counters (`counters`) of instances matching
    /// `instance_mask` (`None` for all). The default does nothing.
    fn counter_added(&self, counters: CounterMask, instance_mask: Option<&[u16]>) {
        let _ = (counters, instance_mask);
    }

    /// `PcwCallbackRemoveCounter`: the consumer removed them again. The default does nothing.
    fn counter_removed(&self, counters: CounterMask, instance_mask: Option<&[u16]>) {
        let _ = (counters, instance_mask);
    }
}

/// The query's `CounterMask`: bit `id` set for each counter the consumer asks for (counters
/// with ids of 64 and above cannot be selected and are never wanted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterMask(pub u64);

impl CounterMask {
    /// Every counter.
    pub const ALL: Self = Self(u64::MAX);

    /// Whether the consumer asks for counter `id`.
    #[inline]
    pub const fn wants(self, id: u16) -> bool {
        id < 64 && self.0 & (1u64 << id) != 0
    }

    /// The raw mask.
    #[inline]
    pub const fn bits(self) -> u64 {
        self.0
    }
}

/// What one visit did (the publisher may feed it to its statistics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Instances offered to the visitor before it stopped (wrapping at 2^32: no collection
    /// comes near, and the statistics it feeds are wrapping counters).
    pub considered: u32,
    /// Instances the filters selected and `PcwAddInstance` accepted.
    pub returned: u32,
}

/// One collection (or enumeration) in progress, handed to [`Publish::visit`]: filters the
/// instances offered and adds the selected ones to PCW's buffer. Only [`callback`] makes one.
///
/// It holds the query where PCW put it (its buffer handle, counter mask and cancel event are
/// read from PCW's information block when needed, so they take no register in an offering
/// loop), the instance filter, decided once when the visit starts, and what the visit has done.
pub struct Visitor<'q, S: Counterset> {
    query: &'q PCW_MASK_INFORMATION,
    filter: InstanceFilter<'q>,
    collect: bool,
    summary: Summary,
    status: NTSTATUS,
    set: PhantomData<fn() -> S>,
}

impl<S: Counterset> core::fmt::Debug for Visitor<'_, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Visitor")
            .field("filter", &self.filter)
            .field("counters", &self.counters())
            .field("collect", &self.collect)
            .field("summary", &self.summary)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// Instances between two polls of the cancel event: it is polled before the first instance and
/// every 16th after it.
const POLL_EVERY: u32 = 16;

/// What an offering loop keeps in registers: the visit's counts and status.
#[derive(Clone, Copy)]
struct Progress {
    considered: u32,
    returned: u32,
    status: NTSTATUS,
}

#[expect(
    clippy::elidable_lifetime_names,
    reason = "named, so compiler messages keep calling the methods `Visitor::<'q, S>::…` (the \
              compile-fail tests of pcw-gen-check hold those messages)"
)]
impl<'q, S: Counterset> Visitor<'q, S> {
    /// Offers one instance: its name (UTF-16, no terminator; empty in a `single` set), its id,
    /// and its values, computed by `values` only if the query selects the instance and
    /// collects data. Returns `Break` once the visit is over (cancelled, or `PcwAddInstance`
    /// failed): stop offering then.
    #[expect(
        clippy::inline_always,
        reason = "the per-instance hot path: measured with callgrind, a call per instance costs \
                  more than the body"
    )]
    #[inline(always)]
    pub fn instance<V>(
        &mut self,
        name: &[u16],
        id: u32,
        values: impl FnOnce(CounterMask) -> V,
    ) -> ControlFlow<()>
    where
        V: ValuesOf<S>,
    {
        if self.status < 0 {
            return ControlFlow::Break(());
        }
        let mut progress = self.progress();
        let filter = self.filter;
        let flow = offer::<true, S, V>(
            self.query,
            self.collect,
            &mut progress,
            #[inline(always)]
            || (name, id),
            #[inline(always)]
            |name, id| filter.selects(name, id).then_some(id),
            values,
        );
        self.set_progress(progress);
        flow
    }

    /// Offers every item of `items` as [`Visitor::instance`] does — `name_id` gives an item's
    /// name and id, `values` its values when selected — and stops at the first `Break`. The same
    /// as calling `instance` in a loop (but for a success status other than `STATUS_SUCCESS`,
    /// which it does not keep: [`Visitor::status`]), but the visit's state is kept in locals for
    /// the loop, so offering from behind a closure (a lock guard's, say) costs no memory traffic
    /// per instance: the fast way to offer many instances. `name_id` is called for an item after
    /// the cancel event's poll, so not for the item at which a cancelled query stops.
    #[expect(
        clippy::inline_always,
        reason = "inlined into the publisher's visit, and with it into the callback, the loop's \
                  state stays in registers (measured with callgrind)"
    )]
    #[inline(always)]
    pub fn instances<T, V>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        name_id: impl FnMut(&T) -> (&[u16], u32),
        values: impl FnMut(&T, CounterMask) -> V,
    ) -> ControlFlow<()>
    where
        V: ValuesOf<S>,
    {
        if self.status < 0 {
            return ControlFlow::Break(());
        }
        let mut progress = self.progress();
        // The loop three times, each with what it can fold, chosen when the visit starts: a
        // query that selects everything (the common case, decided when the filter was built)
        // with no cancel event to poll tests nothing per instance and counts one number; with an
        // event, it polls; any other query tests names and, for a query naming one id, ids.
        let flow = if self.filter.passes_all() {
            if self.query.CancelEvent.is_null() {
                offer_every::<S, _, _, _, _>(
                    self.query,
                    self.collect,
                    &mut progress,
                    items,
                    name_id,
                    values,
                )
            } else {
                offer_each::<S, _, _, _, _>(
                    self.query,
                    self.collect,
                    &mut progress,
                    items,
                    name_id,
                    #[inline(always)]
                    |_, id| Some(id),
                    values,
                )
            }
        } else {
            let filter = self.filter;
            let lead = filter.lead();
            offer_each::<S, _, _, _, _>(
                self.query,
                self.collect,
                &mut progress,
                items,
                name_id,
                #[inline(always)]
                move |name, id| filter.selects_led(lead, name, id).then_some(id),
                values,
            )
        };
        self.set_progress(progress);
        flow
    }

    /// The state an offering loop starts from, for a visit not over yet (whose status is
    /// therefore a success: a visit's status is a success until it ends). It starts from
    /// `STATUS_SUCCESS`, dropping any other success status an earlier offer kept.
    #[inline]
    fn progress(&self) -> Progress {
        Progress {
            considered: self.summary.considered,
            returned: self.summary.returned,
            status: STATUS_SUCCESS,
        }
    }

    #[inline]
    fn set_progress(&mut self, p: Progress) {
        self.summary = Summary {
            considered: p.considered,
            returned: p.returned,
        };
        self.status = p.status;
    }

    /// Whether the query selects every instance offered (it names no `InstanceId`, and its
    /// `InstanceMask` is NULL, empty or `*`): a publisher may then prepare what every
    /// instance's values need before offering the first.
    #[inline]
    pub fn selects_all(&self) -> bool {
        self.filter.passes_all()
    }

    /// Whether PCW collects data (`PcwCallbackCollectData`) rather than enumerating names.
    pub fn collecting(&self) -> bool {
        self.collect
    }

    /// The query's `CounterMask`.
    pub fn counters(&self) -> CounterMask {
        CounterMask(self.query.CounterMask)
    }

    /// What the visit has done so far.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// The status the callback will return: `STATUS_CANCELLED`, the first `PcwAddInstance`
    /// failure, or else a success: `STATUS_SUCCESS`, unless the visit's last offer was a
    /// [`Visitor::instance`] that was added and `PcwAddInstance` returned another success status
    /// for it, which is then kept (it documents none: a single offer keeps it to save the
    /// instructions of folding it).
    pub fn status(&self) -> NTSTATUS {
        self.status
    }
}

/// The loop of [`Visitor::instances`]: offers each item, `select` deciding from its name and id
/// whether it is in (and with which id), until an offer ends the visit.
#[expect(
    clippy::inline_always,
    reason = "one copy per filter kind, each inlined where it runs"
)]
#[inline(always)]
fn offer_each<S, T, V, I, N>(
    query: &PCW_MASK_INFORMATION,
    collect: bool,
    progress: &mut Progress,
    items: I,
    mut name_id: N,
    select: impl Fn(&[u16], u32) -> Option<u32>,
    mut values: impl FnMut(&T, CounterMask) -> V,
) -> ControlFlow<()>
where
    S: Counterset,
    V: ValuesOf<S>,
    I: IntoIterator<Item = T>,
    N: FnMut(&T) -> (&[u16], u32),
{
    let mut p = *progress;
    let mut flow = ControlFlow::Continue(());
    for item in items {
        flow = offer::<false, S, V>(
            query,
            collect,
            &mut p,
            // Read after the cancel event's poll: read before, the name and id would be kept
            // across its call (measured with callgrind: spilled, 3 stores and their loads per
            // instance).
            #[inline(always)]
            || name_id(&item),
            #[inline(always)]
            |name, id| select(name, id),
            #[inline(always)]
            |c| values(&item, c),
        );
        if flow.is_break() {
            break;
        }
    }
    *progress = p;
    flow
}

/// The loop of [`Visitor::instances`] for a query that selects everything and has no cancel
/// event: adds each item until `PcwAddInstance` fails. Every instance considered is returned but
/// the one that failed, so one count serves for both.
#[expect(
    clippy::inline_always,
    reason = "one copy per filter kind, each inlined where it runs"
)]
#[inline(always)]
fn offer_every<S, T, V, I, N>(
    query: &PCW_MASK_INFORMATION,
    collect: bool,
    progress: &mut Progress,
    items: I,
    mut name_id: N,
    mut values: impl FnMut(&T, CounterMask) -> V,
) -> ControlFlow<()>
where
    S: Counterset,
    V: ValuesOf<S>,
    I: IntoIterator<Item = T>,
    N: FnMut(&T) -> (&[u16], u32),
{
    let mut items = items.into_iter();
    let mut status = STATUS_SUCCESS;
    // Read once: the compiler cannot tell that `PcwAddInstance` leaves PCW's information block
    // alone, and would read both again for every instance (measured with callgrind).
    let (buffer, counters) = (query.Buffer, CounterMask(query.CounterMask));
    // An iterator whose size is exact (a registry's view, say) is walked without a count: all of
    // it is taken unless an add fails, and then what is left is its size then.
    let taken = match items.size_hint() {
        (n, Some(m)) if n == m => {
            for item in items.by_ref() {
                let (name, id) = name_id(&item);
                status = add::<S, V>(
                    buffer,
                    counters,
                    collect,
                    name,
                    id,
                    #[inline(always)]
                    |c| values(&item, c),
                );
                if status < 0 {
                    break;
                }
            }
            // What is left is read from the size hint too: a walk of the rest to count it
            // would be a loop the compiler cannot prove finite, kept (with its setup) where the
            // counts are not even read (measured with callgrind: 4 instructions a collection).
            // An iterator whose hint is exact (an `ExactSizeIterator`, a registry's view) is
            // counted exactly; one whose hint lies only skews the `Summary`, clamped to 0..=n.
            if status < 0 {
                n.saturating_sub(items.size_hint().0)
            } else {
                n
            }
        }
        _ => {
            let mut taken = 0usize;
            for item in items {
                let (name, id) = name_id(&item);
                status = add::<S, V>(
                    buffer,
                    counters,
                    collect,
                    name,
                    id,
                    #[inline(always)]
                    |c| values(&item, c),
                );
                taken += 1;
                if status < 0 {
                    break;
                }
            }
            taken
        }
    };
    // The counts wrap at 2^32 (see `Summary`).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the counts wrap at 2^32 (see `Summary`)"
    )]
    let (taken, added) = (
        taken as u32,
        taken.saturating_sub(usize::from(status < 0)) as u32,
    );
    progress.considered = progress.considered.wrapping_add(taken);
    progress.returned = progress.returned.wrapping_add(added);
    if status < 0 {
        progress.status = status;
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

/// Offers one instance of a visit not yet over (`progress.status` is not an error): polls the
/// cancel event when it is due, counts the instance, then reads its name and id (`name_id`,
/// after the poll) and adds it when `select` gives its id.
#[expect(
    clippy::inline_always,
    reason = "the per-instance hot path (see `Visitor::instance`)"
)]
#[inline(always)]
fn offer<'n, const KEEP_SUCCESS: bool, S: Counterset, V: ValuesOf<S>>(
    query: &PCW_MASK_INFORMATION,
    collect: bool,
    progress: &mut Progress,
    name_id: impl FnOnce() -> (&'n [u16], u32),
    select: impl FnOnce(&[u16], u32) -> Option<u32>,
    values: impl FnOnce(CounterMask) -> V,
) -> ControlFlow<()> {
    // Poll the cancel event before the first instance and every 16th after it.
    if progress.considered.is_multiple_of(POLL_EVERY)
        // SAFETY: PCW passes NULL or an event that lives across the callback, which outlives
        // this visit.
        && unsafe { event_signalled(query.CancelEvent) }
    {
        progress.status = STATUS_CANCELLED;
        return ControlFlow::Break(());
    }
    progress.considered = progress.considered.wrapping_add(1);
    let (name, id) = name_id();
    let Some(id) = select(name, id) else {
        return ControlFlow::Continue(());
    };
    let status = add::<S, V>(
        query.Buffer,
        CounterMask(query.CounterMask),
        collect,
        name,
        id,
        values,
    );
    // A failure ends the visit. A success status (`PcwAddInstance` documents only
    // `STATUS_SUCCESS`) is kept too when `KEEP_SUCCESS`, for a single offer (measured with
    // callgrind: folding it to `STATUS_SUCCESS` cost 3 instructions an `InstanceId` query), but
    // not in a loop, where it would be carried from one instance to the next in a register
    // (3 instructions an instance of a filtered loop, kept across the matcher's call).
    if KEEP_SUCCESS || status < 0 {
        progress.status = status;
    }
    if status < 0 {
        return ControlFlow::Break(());
    }
    progress.returned = progress.returned.wrapping_add(1);
    ControlFlow::Continue(())
}

/// The `PCW_CALLBACK` of publisher `P` for counterset `S`; `context` is the `&'static P` the
/// generated `register_publisher` registered.
///
/// # Safety
/// PCW's contract: `info` is NULL or a valid information block for `kind`, and `context` is
/// NULL or points to a `P` that lives across the call (`register_publisher` passes a
/// `&'static P`).
pub unsafe extern "system" fn callback<S: Counterset, P: Publish<S> + Sync>(
    kind: PCW_CALLBACK_TYPE,
    info: *const PCW_CALLBACK_INFORMATION,
    context: *const core::ffi::c_void,
) -> NTSTATUS {
    // SAFETY: NULL or a live `P` (contract).
    let Some(publisher) = (unsafe { context.cast::<P>().as_ref() }) else {
        return STATUS_SUCCESS;
    };
    // SAFETY: forwarded from PCW (contract).
    unsafe { respond::<S, P>(publisher, kind, info) }
}

/// What [`callback`] does with its publisher, for a caller that holds the publisher itself
/// (a driver's own `PCW_CALLBACK`, a benchmark).
///
/// # Safety
/// `info` is NULL or a valid information block for `kind`, as PCW passes it to a callback.
#[expect(
    clippy::inline_always,
    reason = "one body with `callback`: out of line, `callback` is a two-instruction thunk that \
              the compiler may keep local to its codegen unit, and the image's PDB then has no \
              public `pcw_rt::callback` for the no-panic and kernel-constraint checks to root at"
)]
#[inline(always)]
pub unsafe fn respond<S: Counterset, P: Publish<S> + ?Sized>(
    publisher: &P,
    kind: PCW_CALLBACK_TYPE,
    info: *const PCW_CALLBACK_INFORMATION,
) -> NTSTATUS {
    // SAFETY: NULL or a valid information block (contract).
    let Some(info) = (unsafe { info.as_ref() }) else {
        return STATUS_SUCCESS;
    };
    match kind {
        crate::PcwCallbackEnumerateInstances => {
            // SAFETY: the EnumerateInstances member is the active one for this kind.
            visit(publisher, unsafe { &info.EnumerateInstances }, false)
        }
        crate::PcwCallbackCollectData => {
            // SAFETY: the CollectData member is the active one for this kind.
            visit(publisher, unsafe { &info.CollectData }, true)
        }
        crate::PcwCallbackAddCounter => {
            // SAFETY: the AddCounter member is the active one for this kind.
            let c = unsafe { &info.AddCounter };
            // SAFETY: PCW passes a NULL or valid instance mask that lives across the callback.
            let mask = unsafe { units(c.InstanceMask) };
            publisher.counter_added(CounterMask(c.CounterMask), mask);
            STATUS_SUCCESS
        }
        crate::PcwCallbackRemoveCounter => {
            // SAFETY: the RemoveCounter member is the active one for this kind.
            let c = unsafe { &info.RemoveCounter };
            // SAFETY: as for AddCounter.
            let mask = unsafe { units(c.InstanceMask) };
            publisher.counter_removed(CounterMask(c.CounterMask), mask);
            STATUS_SUCCESS
        }
        _ => STATUS_SUCCESS,
    }
}

/// One `EnumerateInstances` (`collect` false) or `CollectData` visit.
#[expect(
    clippy::inline_always,
    reason = "measured with callgrind: out of line, the visitor is built in memory for the call"
)]
#[inline(always)]
fn visit<S: Counterset, P: Publish<S> + ?Sized>(
    publisher: &P,
    query: &PCW_MASK_INFORMATION,
    collect: bool,
) -> NTSTATUS {
    // SAFETY: PCW passes a NULL or valid instance mask that lives across the callback.
    let name_mask = unsafe { units(query.InstanceMask) };
    let filter = InstanceFilter::new(query.InstanceId, name_mask);
    let mut visitor = Visitor::<S> {
        query,
        filter,
        collect,
        summary: Summary::default(),
        status: STATUS_SUCCESS,
        set: PhantomData,
    };
    let _ = match filter.single_id() {
        Some(id) => publisher.visit_id(id, &mut visitor),
        None => publisher.visit(&mut visitor),
    };
    visitor.status
}

/// Adds one selected instance to PCW's buffer: with its values when collecting, its name and id
/// only when enumerating. The status of `PcwAddInstance`.
#[expect(
    clippy::inline_always,
    reason = "the per-instance hot path (see `Visitor::instance`)"
)]
#[inline(always)]
fn add<S: Counterset, V: ValuesOf<S>>(
    buffer: PPCW_BUFFER,
    counters: CounterMask,
    collect: bool,
    name: &[u16],
    id: u32,
    values: impl FnOnce(CounterMask) -> V,
) -> NTSTATUS {
    let name = unicode(name);
    if collect {
        let values = values(counters);
        // SAFETY: `Buffer` is the running callback's (only `respond` makes a visitor, from the
        // information block PCW passed); the name and values live across the call, in which PCW
        // copies them.
        unsafe { S::add(buffer, &name, id, values.values()) }
    } else {
        // SAFETY: as above; no data is what EnumerateInstances expects.
        unsafe { PcwAddInstance(buffer, &raw const name, id, 0, core::ptr::null_mut()) }
    }
}
