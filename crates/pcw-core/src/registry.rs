// SPDX-License-Identifier: MIT OR Apache-2.0
//! The instance registry of a multi-instance counterset (`docs/pcw-semantics.md`): stable
//! ids below `0xFFFFFFFE` that are never reused while their instance lives, names unique under
//! case-insensitive comparison, O(1) lookup by id, iteration in a stable order, and readers (the
//! `PCW_CALLBACK`) that run concurrently with adds and removes.
//!
//! The registry is generic over a shared/exclusive lock ([`RawRwLock`]) so the kernel can use a
//! push lock and tests a host lock. Adding an instance allocates (fallibly: an allocation
//! failure is an error, never an abort); reading and removing never allocate, so the collect
//! path stays allocation-free.
//!
//! A registry whose instances are fixed for a while (a driver's instances added at load and
//! removed at unload, say) can be *frozen* ([`Registry::freeze`]): until it is thawed
//! ([`Registry::thaw`]) its readers take no lock at all, which on Windows saves each reader the
//! push lock's and the critical region's calls, and every change is refused.
//!
//! Ids are `generation << 20 | slot`: slot numbers are reused after an instance is removed, with
//! the next generation, so an id names one instance for as long as it lives and a stale id finds
//! nothing. Names are indexed in an open-addressing hash table of their upper-cased form.

use alloc::vec::Vec;
#[cfg(not(loom))]
use core::cell::UnsafeCell;
#[cfg(not(loom))]
use core::hint::spin_loop;
#[cfg(not(loom))]
use core::sync::atomic::{AtomicU32, Ordering};
// The loom model (`scripts/loom.sh`, `RUSTFLAGS="--cfg loom"`) swaps in loom's atomics, cell
// and spin hint so that every interleaving of the lock and of the accesses it guards is explored.
#[cfg(loom)]
use loom::cell::UnsafeCell;
#[cfg(loom)]
use loom::hint::spin_loop;
#[cfg(loom)]
use loom::sync::atomic::{AtomicU32, Ordering};

use crate::fallible::push_reserved;
use crate::wildcard;

/// A shared/exclusive lock without data, as the kernel's push locks and `ERESOURCE`s are.
///
/// # Safety
/// Implementations must provide mutual exclusion: while the lock is held exclusively no other
/// holder exists, and while it is held shared only shared holders exist.
pub unsafe trait RawRwLock {
    /// A new, unlocked lock.
    #[cfg(not(loom))]
    const INIT: Self;
    /// A new, unlocked lock (loom's atomics cannot be made in a constant).
    #[cfg(loom)]
    fn init() -> Self;
    /// Acquires the lock shared, waiting as needed.
    fn lock_shared(&self);
    /// Releases a shared hold.
    ///
    /// # Safety
    /// The caller holds the lock shared.
    unsafe fn unlock_shared(&self);
    /// Acquires the lock exclusively, waiting as needed.
    fn lock_exclusive(&self);
    /// Releases an exclusive hold.
    ///
    /// # Safety
    /// The caller holds the lock exclusively.
    unsafe fn unlock_exclusive(&self);
}

/// A spinning reader/writer lock on one atomic word, for hosts and tests (the kernel build uses
/// a push lock instead). Writers take precedence: once a writer waits, new readers hold back, so
/// a steady stream of readers cannot starve it.
///
/// A reader enters with one atomic increment whose result's sign it tests, and leaves with one
/// atomic decrement, as a reader count kept by hand would: the increment is undone at once when
/// it finds a writer holding or waiting for the lock (the sign bit), and the reader then waits
/// for the writers to be done before trying again.
#[derive(Debug, Default)]
pub struct SpinRwLock {
    /// The readers in the low 30 bits (with, transiently, readers about to back off), plus
    /// `WRITER` while a writer waits for the lock or holds it, and `WRITER_HELD` while one holds
    /// it (never without `WRITER`).
    state: AtomicU32,
}

/// A writer waits for the lock or holds it: the sign bit, which a reader's increment tests.
const WRITER: u32 = 0x8000_0000;
const WRITER_HELD: u32 = 0x4000_0000;
const READERS: u32 = WRITER_HELD - 1;

/// Whether a state (after a reader's increment) lets the reader in: no writer waits or holds.
#[inline]
const fn no_writer(state: u32) -> bool {
    state & WRITER == 0
}

// SAFETY: a reader holds the lock only after an increment that found no writer (`WRITER` is
// set while a writer waits or holds, and before it tests for readers); the reader count never
// reaches `READERS` (that would take 2^30 - 1 threads inside the lock at once), so no increment
// carries into the writer bits. A writer holds the lock only after moving the state from
// "`WRITER`, no reader counted, not held" to held: while a reader holds it, the count is not
// zero, so no writer enters; while a writer holds it, `WRITER` is set, so every reader's
// increment is undone before the reader goes on.
unsafe impl RawRwLock for SpinRwLock {
    #[cfg(not(loom))]
    const INIT: Self = Self {
        state: AtomicU32::new(0),
    };

    #[cfg(loom)]
    fn init() -> Self {
        Self {
            state: AtomicU32::new(0),
        }
    }

    #[inline]
    fn lock_shared(&self) {
        loop {
            if no_writer(self.state.fetch_add(1, Ordering::Acquire).wrapping_add(1)) {
                return;
            }
            self.state.fetch_sub(1, Ordering::Relaxed);
            while !no_writer(self.state.load(Ordering::Relaxed)) {
                spin_loop();
            }
        }
    }

    #[inline]
    unsafe fn unlock_shared(&self) {
        self.state.fetch_sub(1, Ordering::Release);
    }

    fn lock_exclusive(&self) {
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & WRITER == 0 {
                // Readers arriving from now on hold back; then try at once.
                self.state.fetch_or(WRITER, Ordering::Relaxed);
                continue;
            }
            if s & (WRITER_HELD | READERS) == 0
                && self
                    .state
                    .compare_exchange_weak(s, s | WRITER_HELD, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            spin_loop();
        }
    }

    unsafe fn unlock_exclusive(&self) {
        // A subtract, not a store: readers backing off keep their counts. Another writer still
        // waiting sets `WRITER` again.
        self.state
            .fetch_sub(WRITER | WRITER_HELD, Ordering::Release);
    }
}

/// Bits of an id that number the slot.
const SLOT_BITS: u32 = 20;
/// Most instances one registry can hold.
pub const MAX_INSTANCES: usize = 1 << SLOT_BITS;
/// Generations run `0..=MAX_GENERATION` so that every id stays below `0xFFFFFFFE`.
const MAX_GENERATION: u32 = (0xFFFF_FFFD >> SLOT_BITS) - 1;
/// Longest instance name, in UTF-16 units (`PERF_MAX_INSTANCE_NAME` less the NUL).
pub const MAX_NAME_UNITS: usize = 1023;

/// Why an instance could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryError {
    /// An instance with this name (compared case-insensitively) exists.
    NameTaken {
        /// Its id.
        existing: u32,
    },
    /// The name is empty or longer than [`MAX_NAME_UNITS`].
    BadName,
    /// The registry holds its limit of instances.
    Full,
    /// Memory for the instance could not be allocated.
    NoMemory,
    /// The registry is frozen ([`Registry::freeze`]): no instance is added until it is thawed.
    Frozen,
}

/// One live instance.
#[derive(Debug)]
pub struct Entry<T> {
    id: u32,
    /// Exactly as long as the name (reserved exactly; a `Vec` rather than a boxed slice, whose
    /// conversion would link a reallocation path).
    name: Vec<u16>,
    value: T,
}

impl<T> Entry<T> {
    /// The instance id.
    pub const fn id(&self) -> u32 {
        self.id
    }
    /// The instance name, UTF-16 without a NUL, at most [`MAX_NAME_UNITS`] units.
    #[inline]
    pub fn name(&self) -> &[u16] {
        // SAFETY: an entry is made only by `Registry::insert`, which refuses a name longer than
        // `MAX_NAME_UNITS` and copies it whole; the name is never changed after. Stated here
        // so that a caller's length arithmetic needs no overflow handling (a `UNICODE_STRING`'s
        // byte length then always fits its `u16`, callgrind: 3 instructions per instance).
        unsafe { core::hint::assert_unchecked(self.name.len() <= MAX_NAME_UNITS) };
        &self.name
    }
    /// The provider's data for the instance.
    pub const fn value(&self) -> &T {
        &self.value
    }
}

/// One place for an instance. `tag` answers by itself whether the slot holds an entry and
/// which: the entry's id when there is one, otherwise [`Slot::vacant_id`] of the slot, which no
/// id of this slot can equal and which is at least [`VACANT`], above every id. Only
/// [`Slot::vacant`], [`Slot::fill`] and [`Slot::take`] change `tag` and `entry`, and they keep
/// the two in step.
#[derive(Debug)]
struct Slot<T> {
    tag: u32,
    generation: u32,
    entry: Option<Entry<T>>,
}

/// The least `tag` of an empty slot: every id is below it (its generation bits are at most
/// [`MAX_GENERATION`]), every [`Slot::vacant_id`] at or above it (those bits all ones).
const VACANT: u32 = !((1 << SLOT_BITS) - 1);
const _: () = assert!(
    (MAX_GENERATION << SLOT_BITS) | ((1 << SLOT_BITS) - 1) < VACANT,
    "every id is below an empty slot's `tag`"
);

impl<T> Slot<T> {
    /// What `tag` holds while slot `index` (below [`MAX_INSTANCES`]) is empty: `index` with
    /// every bit inverted, so that it differs from every id numbering this slot (an id's slot
    /// bits are `index`) and, its generation bits all ones, is at least [`VACANT`].
    const fn vacant_id(index: u32) -> u32 {
        !index
    }

    /// A new, empty slot `index`.
    const fn vacant(index: u32) -> Self {
        Self {
            tag: Self::vacant_id(index),
            generation: 0,
            entry: None,
        }
    }

    /// Puts `entry` in the slot.
    fn fill(&mut self, entry: Entry<T>) {
        self.tag = entry.id;
        self.entry = Some(entry);
    }

    /// Takes the entry out of slot `index`, leaving it empty.
    fn take(&mut self, index: u32) -> Option<Entry<T>> {
        self.tag = Self::vacant_id(index);
        self.entry.take()
    }

    /// The entry whose id is `id`.
    ///
    /// # Safety
    /// `id`'s slot bits number this slot (`id & ((1 << SLOT_BITS) - 1)` is its index): an id
    /// with other slot bits may equal an empty slot's tag.
    #[inline]
    unsafe fn get(&self, id: u32) -> Option<&Entry<T>> {
        if self.tag != id {
            return None;
        }
        // SAFETY: `tag` is an entry's id only while the slot holds that entry (`fill` and
        // `take` set both), and an empty slot's tag has other slot bits than `id` (this
        // function's contract). Said so that the lookup tests one word rather than the id and
        // the option (measured with callgrind: 3 instructions an `InstanceId` query).
        unsafe { core::hint::assert_unchecked(self.entry.is_some()) };
        self.entry.as_ref()
    }

    /// The entry, if the slot holds one.
    #[inline]
    fn entry(&self) -> Option<&Entry<T>> {
        if self.tag >= VACANT {
            return None;
        }
        // SAFETY: `tag` is below `VACANT` only while the slot holds an entry (`fill` stores the
        // entry's id, below `VACANT`; `vacant` and `take` store `vacant_id` of the slot's index,
        // at or above it, since `insert` makes no slot numbered `MAX_INSTANCES` or above).
        // Said so that a walk of the slots tests one word against a small constant rather than
        // the option's niche against a 64-bit one, which would take a register for the walk.
        unsafe { core::hint::assert_unchecked(self.entry.is_some()) };
        self.entry.as_ref()
    }
}

/// The data the lock protects.
#[derive(Debug)]
struct Inner<T> {
    slots: Vec<Slot<T>>,
    /// Free slot numbers; its capacity always covers every slot, so pushing never allocates.
    free: Vec<u32>,
    /// Open-addressing index of names: 0 = empty, `TOMBSTONE` = deleted, else slot + 1.
    names: Vec<u32>,
    /// Used (live + tombstone) entries of `names`.
    names_used: usize,
    live: usize,
    limit: usize,
}

const TOMBSTONE: u32 = u32::MAX;

/// FNV-1a over the upper-cased units.
fn name_hash(name: &[u16]) -> u64 {
    name.iter().fold(0xcbf2_9ce4_8422_2325, |h, u| {
        (h ^ u64::from(wildcard::upcase(*u))).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl<T> Inner<T> {
    const fn empty(limit: usize) -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            names: Vec::new(),
            names_used: 0,
            live: 0,
            limit: if limit < MAX_INSTANCES {
                limit
            } else {
                MAX_INSTANCES
            },
        }
    }

    fn find_name(&self, name: &[u16]) -> Option<usize> {
        let mask = self.names.len().checked_sub(1)?;
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the hash is cut to the table's size by the mask anyway, so its high bits may go"
        )]
        let mut at = (name_hash(name) as usize) & mask;
        for _ in 0..self.names.len() {
            match self.names.get(at).copied() {
                Some(0) | None => return None,
                Some(TOMBSTONE) => {}
                Some(s) => {
                    let slot = (s - 1) as usize;
                    let hit = self
                        .slots
                        .get(slot)
                        .and_then(|s| s.entry.as_ref())
                        .is_some_and(|e| wildcard::eq_ignore_case(&e.name, name));
                    if hit {
                        return Some(at);
                    }
                }
            }
            at = (at + 1) & mask;
        }
        None
    }

    /// Grows (and cleans) the name index so one more name fits under a load of one half.
    fn reserve_name(&mut self) -> Result<(), RegistryError> {
        if (self.names_used + 1) * 2 <= self.names.len() {
            return Ok(());
        }
        let want = ((self.live + 1) * 4).next_power_of_two().max(16);
        let mut table: Vec<u32> = Vec::new();
        table
            .try_reserve_exact(want)
            .map_err(|_| RegistryError::NoMemory)?;
        for _ in 0..want {
            push_reserved(&mut table, 0);
        }
        let mask = want - 1;
        for (slot, s) in self.slots.iter().enumerate() {
            if let Some(e) = &s.entry {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "the hash is cut to the table's size by the mask anyway, so its high bits may go"
                )]
                let mut at = (name_hash(&e.name) as usize) & mask;
                while table.get(at).is_some_and(|v| *v != 0) {
                    at = (at + 1) & mask;
                }
                if let Some(v) = table.get_mut(at) {
                    // slot < MAX_INSTANCES, so slot + 1 fits in u32.
                    *v = u32::try_from(slot + 1).unwrap_or(TOMBSTONE);
                }
            }
        }
        self.names = table;
        self.names_used = self.live;
        Ok(())
    }

    fn index_name(&mut self, name: &[u16], slot: u32) {
        let Some(mask) = self.names.len().checked_sub(1) else {
            return;
        };
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the hash is cut to the table's size by the mask anyway, so its high bits may go"
        )]
        let mut at = (name_hash(name) as usize) & mask;
        while self
            .names
            .get(at)
            .is_some_and(|v| *v != 0 && *v != TOMBSTONE)
        {
            at = (at + 1) & mask;
        }
        if let Some(v) = self.names.get_mut(at) {
            if *v == 0 {
                self.names_used += 1;
            }
            *v = slot + 1;
        }
    }
}

/// The registry. `L` is the lock, `T` the provider's per-instance data.
pub struct Registry<L: RawRwLock, T> {
    lock: L,
    /// Non-zero while frozen: readers then take no lock, and writers change nothing. Set and
    /// cleared under the exclusive lock.
    frozen: AtomicU32,
    inner: UnsafeCell<Inner<T>>,
}

// SAFETY: all access to `inner` happens under `lock` (shared for reads, exclusive for writes),
// or, while the registry is frozen, by readers alone (a frozen registry's writers change
// nothing, and `thaw`'s caller guarantees that no lock-free reader remains), so sharing the
// registry shares `T` by reference (needs Sync) and moves it between threads on removal (needs
// Send).
unsafe impl<L: RawRwLock + Sync, T: Send + Sync> Sync for Registry<L, T> {}
// SAFETY: the registry owns its entries; sending it sends them.
unsafe impl<L: RawRwLock + Send, T: Send> Send for Registry<L, T> {}

/// Releases a reader's shared hold, if it took one, on drop (so a panicking reader in a test
/// does not leave the lock held).
struct ReadGuard<'a, L: RawRwLock> {
    lock: &'a L,
    /// Whether the reader took the shared lock (it takes none from a frozen registry).
    locked: bool,
}
impl<L: RawRwLock> Drop for ReadGuard<'_, L> {
    #[inline]
    fn drop(&mut self) {
        if self.locked {
            // SAFETY: `locked` is set only when `lock_shared` was called on the same lock
            // just before the guard was made.
            unsafe { self.lock.unlock_shared() };
        }
    }
}

/// Releases an exclusive hold on drop.
struct ExclusiveGuard<'a, L: RawRwLock>(&'a L);
impl<L: RawRwLock> Drop for ExclusiveGuard<'_, L> {
    fn drop(&mut self) {
        // SAFETY: constructed only right after `lock_exclusive` on the same lock.
        unsafe { self.0.unlock_exclusive() };
    }
}

/// A read-only view of the registry, valid while the shared lock is held or the registry is
/// frozen.
pub struct View<'a, T> {
    inner: &'a Inner<T>,
}

impl<'a, T> View<'a, T> {
    /// The instance with this id, in O(1).
    pub fn get(&self, id: u32) -> Option<&'a Entry<T>> {
        let slot = (id & ((1 << SLOT_BITS) - 1)) as usize;
        // SAFETY: the slot is the one `id`'s slot bits number.
        unsafe { self.inner.slots.get(slot)?.get(id) }
    }

    /// The instance with this name (case-insensitive).
    pub fn by_name(&self, name: &[u16]) -> Option<&'a Entry<T>> {
        let at = self.inner.find_name(name)?;
        let slot = self.inner.names.get(at)?.checked_sub(1)? as usize;
        self.inner.slots.get(slot)?.entry.as_ref()
    }

    /// Live instances, in slot order (stable between changes).
    #[inline]
    pub fn iter(&self) -> Live<'a, T> {
        Live {
            slots: &self.inner.slots,
            left: self.inner.live,
        }
    }

    /// Number of live instances.
    pub const fn len(&self) -> usize {
        self.inner.live
    }

    /// Whether there are no instances.
    pub const fn is_empty(&self) -> bool {
        self.inner.live == 0
    }
}

impl<'a, T> IntoIterator for &View<'a, T> {
    type Item = &'a Entry<T>;
    type IntoIter = Live<'a, T>;

    fn into_iter(self) -> Live<'a, T> {
        self.iter()
    }
}

/// The live instances of a [`View`], in slot order ([`View::iter`]), with an exact size (the
/// registry keeps the number of live instances): a caller that walks them all knows how many it
/// walked without counting.
#[derive(Clone, Debug)]
pub struct Live<'a, T> {
    slots: &'a [Slot<T>],
    /// Live instances not yet taken.
    left: usize,
}

impl<'a, T> Iterator for Live<'a, T> {
    type Item = &'a Entry<T>;

    #[inline]
    fn next(&mut self) -> Option<&'a Entry<T>> {
        while let [first, rest @ ..] = self.slots {
            self.slots = rest;
            if let Some(entry) = first.entry() {
                self.left = self.left.saturating_sub(1);
                return Some(entry);
            }
        }
        None
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for Live<'_, T> {}

impl<T> core::iter::FusedIterator for Live<'_, T> {}

impl<L: RawRwLock, T> Registry<L, T> {
    /// An empty registry holding at most `limit` instances (capped at [`MAX_INSTANCES`]).
    #[cfg(not(loom))]
    pub const fn new(limit: usize) -> Self {
        Self {
            lock: L::INIT,
            frozen: AtomicU32::new(0),
            inner: UnsafeCell::new(Inner::empty(limit)),
        }
    }

    /// An empty registry holding at most `limit` instances (the loom model's constructor).
    #[cfg(loom)]
    pub fn new(limit: usize) -> Self {
        Self {
            lock: L::init(),
            frozen: AtomicU32::new(0),
            inner: UnsafeCell::new(Inner::empty(limit)),
        }
    }

    /// Runs `f` with a consistent view: under the shared lock, or with no lock at all while the
    /// registry is frozen ([`Registry::freeze`]). Never allocates.
    #[expect(
        clippy::inline_always,
        reason = "a wrapper around the caller's closure: measured with callgrind, left out of \
                  line it cost a callback a call, six register saves and restores, and the \
                  caller's state passed through memory (about 16 instructions)"
    )]
    #[inline(always)]
    pub fn read<R>(&self, f: impl FnOnce(View<'_, T>) -> R) -> R {
        // Acquire: pairs with `freeze`'s release, so every change made before the registry
        // was frozen is seen. One body for both cases (measured with callgrind: the caller's
        // closure inlined twice, locked and not, cost the frozen loop a register).
        let frozen = self.frozen.load(Ordering::Acquire) != 0;
        if !frozen {
            self.lock.lock_shared();
        }
        let _guard = ReadGuard {
            lock: &self.lock,
            locked: !frozen,
        };
        self.shared_cell(|inner| {
            // SAFETY: either the shared lock is held until `_guard` drops, after `f` returns
            // (writers need the exclusive lock, so nothing mutates `inner` meanwhile), or the
            // registry is frozen: writers change nothing until `thaw`, whose caller guarantees
            // that no reader which saw the registry frozen is still running.
            let inner = unsafe { &*inner };
            f(View { inner })
        })
    }

    /// Runs `f` with a view of a frozen registry ([`Registry::freeze`]), taking no lock and
    /// testing nothing: the read of a `PCW_CALLBACK` that is registered only while the registry
    /// is frozen (measured with callgrind: [`Registry::read`]'s test of the freeze costs such a
    /// callback as many instructions as the lock it saves). Never allocates.
    ///
    /// # Safety
    /// The registry is frozen for the whole call: the freeze happens before this call (as it
    /// does when the callback is registered after freezing), and the call returns before any
    /// thaw ([`Registry::thaw`]'s contract).
    #[expect(
        clippy::inline_always,
        reason = "a wrapper around the caller's closure, as `read`"
    )]
    #[inline(always)]
    pub unsafe fn read_frozen<R>(&self, f: impl FnOnce(View<'_, T>) -> R) -> R {
        self.shared_cell(|inner| {
            // SAFETY: frozen for the whole call (this function's contract): writers change
            // nothing until `thaw`, which the caller calls only after this returns.
            let inner = unsafe { &*inner };
            f(View { inner })
        })
    }

    /// Runs `f` with a pointer for reading `inner` (through loom's cell in the loom model, which
    /// then checks that no write overlaps).
    #[cfg(not(loom))]
    fn shared_cell<R>(&self, f: impl FnOnce(*const Inner<T>) -> R) -> R {
        f(self.inner.get())
    }

    #[cfg(loom)]
    fn shared_cell<R>(&self, f: impl FnOnce(*const Inner<T>) -> R) -> R {
        self.inner.with(f)
    }

    /// Runs `f` with a pointer for writing `inner` (through loom's cell in the loom model, which
    /// then checks that no other access overlaps).
    #[cfg(not(loom))]
    fn exclusive_cell<R>(&self, f: impl FnOnce(*mut Inner<T>) -> R) -> R {
        f(self.inner.get())
    }

    #[cfg(loom)]
    fn exclusive_cell<R>(&self, f: impl FnOnce(*mut Inner<T>) -> R) -> R {
        self.inner.with_mut(f)
    }

    /// Runs `f` on the data under the exclusive lock, or returns `None` without running it if
    /// the registry is frozen.
    fn write<R>(&self, f: impl FnOnce(&mut Inner<T>) -> R) -> Option<R> {
        self.lock.lock_exclusive();
        let _guard = ExclusiveGuard(&self.lock);
        // Relaxed: `frozen` changes only under the exclusive lock, which is held.
        if self.frozen.load(Ordering::Relaxed) != 0 {
            return None;
        }
        Some(self.exclusive_cell(|inner| {
            // SAFETY: the exclusive lock is held until `_guard` drops and the registry is not
            // frozen, so no lock-free reader exists either (`thaw`'s contract); no other
            // reference to `inner` exists meanwhile.
            let inner = unsafe { &mut *inner };
            f(inner)
        }))
    }

    /// Freezes the registry: from now on its readers take no lock, and [`Registry::insert`]
    /// (`RegistryError::Frozen`), [`Registry::remove`] (`None`) and [`Registry::release`]
    /// (`false`) change nothing, until [`Registry::thaw`]. Waits for the readers and writers
    /// already inside. Freezing a frozen registry changes nothing.
    ///
    /// For instances that are fixed while readers may run: a driver adds them at load, freezes
    /// the registry, then registers the callback that reads it; at unload it unregisters the
    /// callback, thaws the registry and removes them.
    pub fn freeze(&self) {
        self.lock.lock_exclusive();
        let _guard = ExclusiveGuard(&self.lock);
        // Release: a reader that sees the registry frozen (acquire) sees every change made
        // before, each of which this thread acquired with the lock.
        self.frozen.store(1, Ordering::Release);
    }

    /// Thaws a frozen registry ([`Registry::freeze`]): readers take the lock again and changes
    /// are allowed. Thawing a registry that is not frozen changes nothing.
    ///
    /// # Safety
    /// Every reader that may have found the registry frozen has returned, and its return
    /// happens before this call (lock-free readers leave nothing behind that this call could
    /// wait for); readers that start later may run concurrently (they find it thawed and take
    /// the lock). For a `PCW_CALLBACK` reading the registry: call this after `PcwUnregister`
    /// has returned (PCW runs no callback of a registration after that: the callback's code
    /// goes with the driver image).
    pub unsafe fn thaw(&self) {
        self.lock.lock_exclusive();
        let _guard = ExclusiveGuard(&self.lock);
        self.frozen.store(0, Ordering::Relaxed);
    }

    /// Whether the registry is frozen ([`Registry::freeze`]).
    pub fn is_frozen(&self) -> bool {
        self.frozen.load(Ordering::Acquire) != 0
    }

    /// Adds an instance and returns its id.
    ///
    /// # Errors
    /// [`RegistryError`]: the name is taken or invalid, the registry is full, or memory ran out.
    pub fn insert(&self, name: &[u16], value: T) -> Result<u32, RegistryError> {
        if name.is_empty() || name.len() > MAX_NAME_UNITS {
            return Err(RegistryError::BadName);
        }
        let mut owned: Vec<u16> = Vec::new();
        owned
            .try_reserve_exact(name.len())
            .map_err(|_| RegistryError::NoMemory)?;
        for unit in name {
            push_reserved(&mut owned, *unit);
        }
        let added = self.write(|inner| {
            if let Some(at) = inner.find_name(name) {
                let slot = inner.names.get(at).copied().unwrap_or(1).saturating_sub(1);
                let existing = inner
                    .slots
                    .get(slot as usize)
                    .and_then(|s| s.entry.as_ref())
                    .map_or(0, |e| e.id);
                return Err(RegistryError::NameTaken { existing });
            }
            if inner.live >= inner.limit {
                return Err(RegistryError::Full);
            }
            inner.reserve_name()?;
            let slot = if let Some(slot) = inner.free.pop() {
                slot
            } else {
                let n = inner.slots.len();
                inner
                    .slots
                    .try_reserve(1)
                    .map_err(|_| RegistryError::NoMemory)?;
                // Keep `free` able to hold every slot, so `remove` never allocates.
                let want = inner.slots.capacity().saturating_sub(inner.free.len());
                inner
                    .free
                    .try_reserve(want)
                    .map_err(|_| RegistryError::NoMemory)?;
                // Slot numbers stay below `MAX_INSTANCES` (the limit is capped to it), which
                // an empty slot's tag relies on (`Slot::vacant_id`): said here as well.
                if n >= MAX_INSTANCES {
                    return Err(RegistryError::Full);
                }
                let index = u32::try_from(n).map_err(|_| RegistryError::Full)?;
                if !push_reserved(&mut inner.slots, Slot::vacant(index)) {
                    return Err(RegistryError::NoMemory);
                }
                index
            };
            let Some(s) = inner.slots.get_mut(slot as usize) else {
                return Err(RegistryError::Full);
            };
            let id = (s.generation << SLOT_BITS) | slot;
            s.fill(Entry {
                id,
                name: owned,
                value,
            });
            inner.live += 1;
            inner.index_name(name, slot);
            Ok(id)
        });
        added.unwrap_or(Err(RegistryError::Frozen))
    }

    /// Removes the instance with this id and returns its data; `None` if no such instance lives
    /// or the registry is frozen. Never allocates.
    pub fn remove(&self, id: u32) -> Option<T> {
        self.write(|inner| {
            let slot = id & ((1 << SLOT_BITS) - 1);
            let live = |inner: &Inner<T>| {
                inner
                    .slots
                    .get(slot as usize)
                    // SAFETY: the slot is the one `id`'s slot bits number.
                    .and_then(|s| unsafe { s.get(id) })
                    .map(|e| inner.find_name(&e.name))
            };
            let name_at = live(inner)?;
            if let Some(v) = name_at.and_then(|at| inner.names.get_mut(at)) {
                *v = TOMBSTONE;
            }
            let s = inner.slots.get_mut(slot as usize)?;
            let entry = s.take(slot)?;
            s.generation = if s.generation >= MAX_GENERATION {
                0
            } else {
                s.generation + 1
            };
            inner.live -= 1;
            // Capacity was reserved for every slot when the slot was made.
            push_reserved(&mut inner.free, slot);
            if inner.live == 0 {
                // Emptied (an unload): reuse slots from the first again, so a reload lists its
                // instances in the order it adds them. Every slot is free now, so the list is
                // rewritten in place, last slot first (popped last): no allocation, and no
                // comparison sort (whose order-violation check is a panic path).
                let n = inner.free.len();
                for (i, v) in inner.free.iter_mut().enumerate() {
                    *v = u32::try_from(n - 1 - i).unwrap_or(u32::MAX);
                }
            }
            Some(entry.value)
        })
        .flatten()
    }

    /// Frees the registry's tables if it holds no instance, so that nothing stays allocated
    /// after the driver unloads (a pool allocation that outlives the image is a leak Driver
    /// Verifier reports) and a reload starts from nothing. Returns `false`, freeing nothing, if
    /// an instance is still live or the registry is frozen. Ids issued before a release may be
    /// issued again after it.
    pub fn release(&self) -> bool {
        self.write(|inner| {
            if inner.live != 0 {
                return false;
            }
            inner.slots = Vec::new();
            inner.free = Vec::new();
            inner.names = Vec::new();
            inner.names_used = 0;
            true
        })
        .unwrap_or(false)
    }

    /// Number of live instances.
    pub fn len(&self) -> usize {
        self.read(|v| v.len())
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    extern crate std;
    use std::string::String;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::vec;

    type Reg = Registry<SpinRwLock, u64>;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn release_frees_only_an_empty_registry() {
        let r = Reg::new(16);
        let a = r.insert(&w("a"), 1).unwrap();
        assert!(!r.release(), "an instance is live");
        assert_eq!(r.read(|v| v.get(a).map(|e| *e.value())), Some(1));
        assert_eq!(r.remove(a), Some(1));
        assert!(r.release());
        let b = r.insert(&w("B"), 2).unwrap();
        r.read(|v| assert_eq!(v.by_name(&w("b")).map(Entry::id), Some(b)));
        assert_eq!(r.remove(b), Some(2));
        assert!(r.release());
    }

    #[test]
    fn names_are_unique_case_insensitively() {
        let r = Reg::new(16);
        let small = r.insert(&w("Small Wave"), 1).unwrap();
        assert_eq!(
            r.insert(&w("SMALL WAVE"), 2),
            Err(RegistryError::NameTaken { existing: small })
        );
        assert_eq!(r.insert(&w(""), 2), Err(RegistryError::BadName));
        assert_eq!(
            r.insert(&vec![b'a'.into(); 1024], 2),
            Err(RegistryError::BadName)
        );
        let medium = r.insert(&w("Medium Wave"), 2).unwrap();
        assert_ne!(small, medium);
        r.read(|v| {
            assert_eq!(v.get(medium).unwrap().value(), &2);
            assert_eq!(v.by_name(&w("medium wave")).unwrap().id(), medium);
            let names: Vec<String> = v
                .iter()
                .map(|e| String::from_utf16_lossy(e.name()))
                .collect();
            assert_eq!(names, ["Small Wave", "Medium Wave"]);
        });
    }

    #[test]
    fn ids_are_not_reused_while_alive_and_stale_ids_find_nothing() {
        let r = Reg::new(4);
        let a = r.insert(&w("a"), 1).unwrap();
        let b = r.insert(&w("b"), 2).unwrap();
        assert_eq!(r.remove(a), Some(1));
        assert_eq!(r.remove(a), None, "removed twice");
        let c = r.insert(&w("a"), 3).unwrap();
        assert_ne!(c, a, "the slot is reused with a new generation");
        assert_eq!(c & 0xFFFFF, a & 0xFFFFF);
        r.read(|v| {
            assert!(v.get(a).is_none());
            assert_eq!(v.get(c).unwrap().value(), &3);
            assert_eq!(v.get(b).unwrap().value(), &2);
        });
        r.insert(&w("x"), 0).unwrap();
        r.insert(&w("y"), 0).unwrap();
        assert_eq!(r.insert(&w("z"), 0), Err(RegistryError::Full));
    }

    #[test]
    fn lookups_and_walks_find_exactly_the_live_instances_whatever_id_is_asked() {
        // Slots filled, emptied and refilled in a pattern, then every id that could confuse
        // the one-word lookup asked: each issued id (live or stale), each slot's number under
        // every generation the test made and the last, an empty slot's marker and its
        // neighbours, and the reserved ids.
        let r = Reg::new(64);
        let mut live = std::collections::BTreeMap::new();
        let mut issued = Vec::new();
        for round in 0..4u64 {
            for i in 0..24u64 {
                let name = w(&std::format!("i{i}"));
                if let Ok(id) = r.insert(&name, round * 100 + i) {
                    live.insert(id, round * 100 + i);
                    issued.push(id);
                }
            }
            let doomed: Vec<u32> = live
                .keys()
                .copied()
                .filter(|id| (id & 0xFFFFF) % 3 == round as u32 % 3)
                .collect();
            for id in doomed {
                assert_eq!(r.remove(id), live.remove(&id));
            }
        }
        // Live instances of several generations beside emptied slots: what the lookups below
        // must tell apart.
        assert!(live.len() >= 8 && live.keys().any(|id| id >> SLOT_BITS > 0));
        assert!(live.len() < 24, "some slots are empty");
        let last = MAX_GENERATION << SLOT_BITS;
        let mut asked = issued.clone();
        for slot in 0..70u32 {
            for generation in [0, 1, 2, 3, 4, MAX_GENERATION, MAX_GENERATION + 1] {
                asked.push((generation << SLOT_BITS) | slot);
            }
            for near in [!slot, (!slot).wrapping_sub(1), (!slot).wrapping_add(1)] {
                asked.push(near);
            }
            asked.push(last | slot);
        }
        asked.extend([0, u32::MAX, u32::MAX - 1, VACANT, VACANT - 1]);
        r.read(|v| {
            for id in &asked {
                assert_eq!(
                    v.get(*id).map(|e| (e.id(), *e.value())),
                    live.get(id).map(|value| (*id, *value)),
                    "id {id:#x}"
                );
            }
            let mut walked: Vec<u32> = v.iter().map(Entry::id).collect();
            assert_eq!(v.iter().len(), live.len());
            walked.sort_unstable();
            assert!(walked.iter().copied().eq(live.keys().copied()));
        });
        // Emptied, released and filled again: the slots made anew answer the same way.
        for id in live.keys().copied().collect::<Vec<_>>() {
            r.remove(id);
        }
        assert!(r.release());
        let fresh = r.insert(&w("again"), 7).unwrap();
        r.read(|v| {
            assert_eq!(v.get(fresh).map(|e| *e.value()), Some(7));
            for id in issued.iter().filter(|id| **id != fresh) {
                assert!(v.get(*id).is_none(), "id {id:#x} after the release");
            }
            assert_eq!(v.iter().count(), 1);
        });
    }

    #[test]
    fn an_emptied_registry_lists_new_instances_in_insertion_order() {
        let r = Reg::new(8);
        let ids: Vec<u32> = ["a", "b", "c"]
            .iter()
            .map(|n| r.insert(&w(n), 0).unwrap())
            .collect();
        for id in ids {
            r.remove(id);
        }
        for n in ["x", "y", "z"] {
            r.insert(&w(n), 0).unwrap();
        }
        let names: Vec<String> = r.read(|v| {
            v.iter()
                .map(|e| String::from_utf16_lossy(e.name()))
                .collect()
        });
        assert_eq!(names, ["x", "y", "z"]);
    }

    #[test]
    fn ids_stay_below_the_reserved_values_through_generation_wrap() {
        let r = Reg::new(1);
        let mut seen_max = 0;
        for i in 0..(MAX_GENERATION as usize + 3) {
            let id = r.insert(&w("only"), i as u64).unwrap();
            assert!(id < 0xFFFF_FFFE);
            seen_max = seen_max.max(id);
            r.remove(id).unwrap();
        }
        assert_eq!(seen_max >> SLOT_BITS, MAX_GENERATION);
    }

    #[test]
    fn many_instances_keep_the_index_consistent() {
        let r = Reg::new(MAX_INSTANCES);
        let ids: Vec<u32> = (0..5000)
            .map(|i| r.insert(&w(&std::format!("inst {i}")), i).unwrap())
            .collect();
        for (i, id) in ids.iter().enumerate().step_by(2) {
            assert_eq!(r.remove(*id), Some(i as u64));
        }
        for i in (0..5000).step_by(2) {
            r.insert(&w(&std::format!("INST {i}")), i + 10_000).unwrap();
        }
        assert_eq!(r.len(), 5000);
        r.read(|v| {
            for i in 0..5000u64 {
                let e = v.by_name(&w(&std::format!("Inst {i}"))).unwrap();
                assert_eq!(*e.value(), if i % 2 == 0 { i + 10_000 } else { i });
                assert_eq!(v.get(e.id()).unwrap().id(), e.id());
            }
            assert_eq!(v.iter().count(), 5000);
        });
    }

    /// Multiplies the stress tests' round counts: `PCW_STRESS_SCALE` (`scripts/stress.sh` runs
    /// them in release mode with a larger one), 1 by default.
    fn stress_scale() -> usize {
        std::env::var("PCW_STRESS_SCALE").map_or(1, |v| {
            v.parse()
                .ok()
                .filter(|n| *n > 0)
                .expect("PCW_STRESS_SCALE is a positive integer")
        })
    }

    #[test]
    fn a_frozen_registry_reads_as_before_and_refuses_every_change_until_thawed() {
        let r = Reg::new(8);
        let a = r.insert(&w("a"), 1).unwrap();
        let b = r.insert(&w("b"), 2).unwrap();
        r.freeze();
        r.freeze();
        assert!(r.is_frozen());
        r.read(|v| {
            assert_eq!(v.len(), 2);
            assert_eq!(v.get(b).map(|e| *e.value()), Some(2));
            assert_eq!(v.by_name(&w("A")).map(Entry::id), Some(a));
        });
        assert_eq!(r.insert(&w("c"), 3), Err(RegistryError::Frozen));
        assert_eq!(r.remove(a), None, "a frozen registry keeps its instances");
        assert_eq!(r.len(), 2);
        // SAFETY: no reader is running.
        unsafe { r.thaw() };
        assert!(!r.is_frozen());
        assert_eq!(r.remove(a), Some(1));
        assert_eq!(r.remove(b), Some(2));
        r.freeze();
        assert!(
            !r.release(),
            "a frozen registry keeps its tables, even empty"
        );
        // SAFETY: no reader is running.
        unsafe { r.thaw() };
        assert!(r.release());
        let c = r.insert(&w("c"), 3).unwrap();
        assert_eq!(r.read(|v| v.iter().map(Entry::id).collect::<Vec<_>>()), [c]);
    }

    /// Counts its shared acquisitions (a `SpinRwLock` underneath).
    #[derive(Default)]
    struct CountingLock(SpinRwLock, AtomicUsize);

    // SAFETY: the exclusion is the inner `SpinRwLock`'s; the count only observes.
    unsafe impl RawRwLock for CountingLock {
        const INIT: Self = Self(SpinRwLock::INIT, AtomicUsize::new(0));
        fn lock_shared(&self) {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.lock_shared();
        }
        unsafe fn unlock_shared(&self) {
            // SAFETY: forwarded (the caller holds the lock shared).
            unsafe { self.0.unlock_shared() };
        }
        fn lock_exclusive(&self) {
            self.0.lock_exclusive();
        }
        unsafe fn unlock_exclusive(&self) {
            // SAFETY: forwarded (the caller holds the lock exclusively).
            unsafe { self.0.unlock_exclusive() };
        }
    }

    #[test]
    fn readers_of_a_frozen_registry_take_no_lock_and_others_do() {
        let r: Registry<CountingLock, u64> = Registry::new(8);
        r.insert(&w("a"), 1).unwrap();
        let shared = |r: &Registry<CountingLock, u64>| r.lock.1.load(Ordering::Relaxed);
        assert_eq!(r.read(|v| v.len()), 1);
        assert_eq!(shared(&r), 1, "a thawed registry is read under the lock");
        r.freeze();
        assert_eq!(r.read(|v| v.len()), 1);
        // SAFETY: frozen just above, thawed only below.
        assert_eq!(unsafe { r.read_frozen(|v| v.len()) }, 1);
        assert_eq!(shared(&r), 1, "a frozen registry is read with no lock");
        // SAFETY: both readers have returned.
        unsafe { r.thaw() };
        assert_eq!(r.read(|v| v.len()), 1);
        assert_eq!(shared(&r), 2);
    }

    #[test]
    fn readers_run_while_writers_churn() {
        // A fixed number of reads per reader, every one of them while the writer churns: it
        // stops only after all readers are done (and after at least `2000 * scale` rounds).
        let (reads, min_rounds) = (1000 * stress_scale(), 2000 * stress_scale());
        let r = Arc::new(Reg::new(1024));
        for i in 0..16 {
            r.insert(&w(&std::format!("stable {i}")), 7).unwrap();
        }
        let done = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (r, done) = (Arc::clone(&r), Arc::clone(&done));
                std::thread::spawn(move || {
                    for _ in 0..reads {
                        r.read(|v| {
                            let stable = v
                                .iter()
                                .filter(|e| e.name().starts_with(&w("stable")))
                                .count();
                            assert_eq!(stable, 16, "no lost or duplicated instance");
                            assert_eq!(v.iter().count(), v.len());
                        });
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        let mut round = 0u64;
        while round < min_rounds as u64 || done.load(Ordering::Relaxed) < readers.len() {
            let id = r
                .insert(&w(&std::format!("churn {}", round % 7)), round)
                .unwrap();
            assert_eq!(r.remove(id), Some(round));
            round += 1;
        }
        for t in readers {
            t.join().unwrap();
        }
        assert_eq!(r.len(), 16);
        std::eprintln!(
            "stress: registry: {} reads by 4 readers during {round} insert/remove rounds",
            4 * reads
        );
    }
}

/// The loom model of the registry and its lock (`scripts/loom.sh`): every interleaving, up to
/// loom's preemption bound, of small concurrent create/close/collect cases. Loom's cell checks
/// that no access to the registry's data overlaps a write (the lock's exclusion and its
/// acquire/release edges); the assertions check what readers see.
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    type Reg = Registry<SpinRwLock, u32>;

    /// `loom::model` with room for the lock's spinning: a relaxed load may keep seeing the old
    /// state until the spinner yields, so a spin lock needs more branches than loom's default.
    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = 100_000;
        builder.check(f);
    }

    const A: &[u16] = &[0x61];
    const B: &[u16] = &[0x62];

    /// A reader sees a consistent registry: its count agrees with its iteration, and every
    /// listed entry is found by id and by name.
    fn consistent(r: &Reg) -> usize {
        r.read(|v| {
            let n = v.iter().count();
            assert_eq!(n, v.len());
            for e in v.iter() {
                assert_eq!(v.get(e.id()).map(Entry::id), Some(e.id()));
                assert_eq!(v.by_name(e.name()).map(Entry::id), Some(e.id()));
            }
            n
        })
    }

    /// The lock alone: who is inside is kept in an atomic, whose updates on entry and exit are
    /// points where loom switches threads, so a reader let in while a writer is inside, or a
    /// second writer, is seen (both shown by breaking the lock's tests: each fails this model).
    #[test]
    fn loom_the_lock_excludes_readers_from_a_writer_and_writers_from_each_other() {
        const WRITING: u32 = 1 << 16;
        model(|| {
            let lock = Arc::new(SpinRwLock::init());
            let inside = Arc::new(AtomicU32::new(0));
            let writer = |lock: Arc<SpinRwLock>, inside: Arc<AtomicU32>| {
                move || {
                    lock.lock_exclusive();
                    let before = inside.fetch_add(WRITING, Ordering::SeqCst);
                    assert_eq!(before, 0, "a writer entered with someone inside");
                    inside.fetch_sub(WRITING, Ordering::SeqCst);
                    // SAFETY: taken just above.
                    unsafe { lock.unlock_exclusive() };
                }
            };
            let w = thread::spawn(writer(Arc::clone(&lock), Arc::clone(&inside)));
            lock.lock_shared();
            let before = inside.fetch_add(1, Ordering::SeqCst);
            assert_eq!(
                before & WRITING,
                0,
                "a reader entered while a writer was inside"
            );
            inside.fetch_sub(1, Ordering::SeqCst);
            // SAFETY: taken just above.
            unsafe { lock.unlock_shared() };
            writer(Arc::clone(&lock), Arc::clone(&inside))();
            w.join().expect("writer");
        });
    }

    #[test]
    fn loom_insert_races_remove_and_reads() {
        model(|| {
            let r = Arc::new(Reg::new(4));
            let a = r.insert(A, 1).expect("first insert");
            let adder = {
                let r = Arc::clone(&r);
                thread::spawn(move || {
                    let b = r.insert(B, 2);
                    let seen = consistent(&r);
                    assert!((1..=2).contains(&seen));
                    b
                })
            };
            assert_eq!(r.remove(a), Some(1));
            let seen = consistent(&r);
            assert!(seen <= 1);
            let b = adder.join().expect("adder").expect("B is new");
            assert_eq!(consistent(&r), 1);
            r.read(|v| {
                assert!(v.get(a).is_none(), "a removed id finds nothing");
                assert_eq!(v.get(b).map(|e| *e.value()), Some(2));
            });
        });
    }

    #[test]
    fn loom_two_inserts_of_one_name_admit_exactly_one() {
        model(|| {
            let r = Arc::new(Reg::new(4));
            let racer = {
                let r = Arc::clone(&r);
                thread::spawn(move || r.insert(A, 1))
            };
            let mine = r.insert(&[0x41], 2);
            let theirs = racer.join().expect("racer");
            match (mine, theirs) {
                (Ok(m), Err(RegistryError::NameTaken { existing })) => assert_eq!(existing, m),
                (Err(RegistryError::NameTaken { existing }), Ok(t)) => assert_eq!(existing, t),
                other => panic!("exactly one insert wins: {other:?}"),
            }
            assert_eq!(consistent(&r), 1);
        });
    }

    /// A reader racing an insert and the freeze reads under the lock or, once it sees the
    /// registry frozen, without it; either way it sees a consistent registry, and loom's cell
    /// sees no access overlap a write. Once frozen, an insert is refused and writes nothing.
    #[test]
    fn loom_a_reader_races_a_freeze() {
        model(|| {
            let r = Arc::new(Reg::new(4));
            r.insert(A, 1).expect("insert");
            let reader = {
                let r = Arc::clone(&r);
                thread::spawn(move || consistent(&r))
            };
            r.insert(B, 2).expect("insert");
            r.freeze();
            assert_eq!(r.insert(&[0x63], 3), Err(RegistryError::Frozen));
            let seen = reader.join().expect("reader");
            assert!((1..=2).contains(&seen));
            assert_eq!(consistent(&r), 2);
        });
    }

    #[test]
    fn loom_a_reader_races_a_close() {
        model(|| {
            let r = Arc::new(Reg::new(4));
            let a = r.insert(A, 1).expect("insert");
            let reader = {
                let r = Arc::clone(&r);
                thread::spawn(move || r.read(|v| v.get(a).map(|e| *e.value())))
            };
            assert_eq!(r.remove(a), Some(1));
            let v = reader.join().expect("reader");
            assert!(v.is_none() || v == Some(1));
            assert_eq!(consistent(&r), 0);
            assert!(r.release());
        });
    }
}
