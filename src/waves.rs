// SPDX-License-Identifier: MIT OR Apache-2.0
//! The "Geometric Waves" counterset: the example of Microsoft's `PCW_CALLBACK` reference page
//! (the KCS sample's), done right. Three
//! waves, each an instance with a distinct id that stays the same for as long as the driver is
//! loaded, published through pcw-rt's safe callback ([`Waves`]), which honours `InstanceId`
//! (O(1) lookup here), `InstanceMask` (linear-time wildcards), `CounterMask` and the consumer's
//! `CancelEvent`, never allocates and never panics.

use core::ops::ControlFlow;

use crate::countersets::pcw_driver::geometric_waves as set;
use crate::ffi::{
    self, CounterMask, NTSTATUS, PCW_CALLBACK_INFORMATION, PCW_CALLBACK_TYPE, Publish,
    STATUS_INSUFFICIENT_RESOURCES, STATUS_OBJECT_NAME_COLLISION, Visitor,
};
use crate::stats::timed;
use pcw_core::filter::counter_wanted;
use pcw_core::registry::{Entry, Registry, RegistryError, View};

/// One wave: its lowest value and its amplitude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wave {
    /// The value at the bottom of the wave.
    pub minimum: u32,
    /// Peak minus bottom.
    pub amplitude: u32,
}

/// The waves the driver publishes: name, minimum, amplitude (the `PCW_CALLBACK` page's values).
pub const WAVES: [(&str, Wave); 3] = [
    (
        "Small Wave",
        Wave {
            minimum: 40,
            amplitude: 20,
        },
    ),
    (
        "Medium Wave",
        Wave {
            minimum: 30,
            amplitude: 40,
        },
    ),
    (
        "Large Wave",
        Wave {
            minimum: 20,
            amplitude: 60,
        },
    ),
];

/// Most waves the driver holds: its registry's capacity.
pub const CAPACITY: usize = 64;

/// How many waves the benchmark build (the `bench-waves` feature) has in all: [`WAVES`], then
/// [`bench_wave`]`(0..BENCH_WAVES - WAVES.len())`, filling the registry. Measured at 3 and at
/// this many waves, the image's callback gives its cost per instance apart from its cost per
/// call (its 3 waves alone mix the two). No driver that ships has the feature.
pub const BENCH_WAVES: usize = CAPACITY;

const _: () = assert!(
    BENCH_WAVES <= CAPACITY && BENCH_WAVES >= WAVES.len() && BENCH_WAVES - WAVES.len() <= 100,
    "the benchmark waves fill the registry at most, and their names have two digits"
);

/// The `i`th wave the benchmark build adds after [`WAVES`] (`i` below
/// `BENCH_WAVES - WAVES.len()`): `Wave NN`, `NN` the two-digit `i`, with the values of `WAVES`'
/// waves in turn.
pub fn bench_wave(i: usize) -> ([u16; 7], Wave) {
    let [(_, small), (_, medium), (_, large)] = WAVES;
    let wave = match i % 3 {
        0 => small,
        1 => medium,
        _ => large,
    };
    let digit = |d: usize| u16::try_from(d % 10).map_or(u16::from(b'?'), |d| u16::from(b'0') + d);
    let name = [
        u16::from(b'W'),
        u16::from(b'a'),
        u16::from(b'v'),
        u16::from(b'e'),
        u16::from(b' '),
        digit(i / 10),
        digit(i),
    ];
    (name, wave)
}

/// The live waves. Added at load, then frozen while the counterset is registered (its readers,
/// the callback and the snapshot IOCTL, take no lock), thawed and emptied at unload.
pub static REGISTRY: Registry<ffi::RegistryLock, Wave> = Registry::new(CAPACITY);

/// Period of both waves, in seconds.
pub const PERIOD_SECONDS: i64 = 10;

/// Adds a wave; its id is stable until [`remove`].
///
/// # Errors
/// `STATUS_OBJECT_NAME_COLLISION` for a name in use (compared case-insensitively),
/// `STATUS_INSUFFICIENT_RESOURCES` when the registry is full or memory ran out,
/// `STATUS_INVALID_PARAMETER_2` for an empty or over-long name, and
/// `STATUS_INVALID_DEVICE_STATE` while the waves are frozen (the driver is loaded).
pub fn add(name: &[u16], wave: Wave) -> Result<u32, NTSTATUS> {
    REGISTRY.insert(name, wave).map_err(|e| match e {
        RegistryError::NameTaken { .. } => STATUS_OBJECT_NAME_COLLISION,
        RegistryError::BadName => ffi::STATUS_INVALID_PARAMETER_2,
        RegistryError::Full | RegistryError::NoMemory => STATUS_INSUFFICIENT_RESOURCES,
        RegistryError::Frozen => ffi::status::STATUS_INVALID_DEVICE_STATE,
    })
}

/// Removes a wave; `false` if no wave has this id or the waves are frozen.
pub fn remove(id: u32) -> bool {
    REGISTRY.remove(id).is_some()
}

/// Removes every wave (at unload, once thawed: a frozen registry keeps them).
pub fn clear() {
    let ids: [u32; CAPACITY] = REGISTRY.read(|v| {
        let mut ids = [u32::MAX; CAPACITY];
        for (slot, e) in ids.iter_mut().zip(v.iter()) {
            *slot = e.id();
        }
        ids
    });
    for id in ids.into_iter().filter(|id| *id != u32::MAX) {
        REGISTRY.remove(id);
    }
}

/// The wave's values at `time` (100 ns units), computing only the counters `counter_mask`
/// asks for (the others stay 0, as the `CounterMask` contract allows).
#[inline]
pub fn values(wave: Wave, time: i64, counter_mask: u64) -> set::GeometricWaveValues {
    values_at(wave, phase(time), counter_mask)
}

/// Where in the period the waves are, as their values need it: computed once per collection,
/// so that each wave's values take a multiplication and a mask.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Phase {
    /// Whole seconds from the middle of the period (0..=5): the triangle falls then rises.
    from_middle: u32,
    /// All ones in the first half of the period, where the square is high; else 0.
    high: u32,
}

/// The phase at `time` (100 ns units): the position in the period, 0..10 whole seconds.
#[inline]
fn phase(time: i64) -> Phase {
    // System time is never negative (100 ns units since 1601), so it is divided as unsigned:
    // a multiply per constant, about half the instructions of the signed `rem_euclid` (a
    // negative time, which no clock returns, still gives a phase in 0..10).
    // The position in the period first, then its whole seconds: the second division is of a
    // 32-bit number (one instruction fewer than the seconds since 1601 modulo the period).
    const TICKS_PER_SECOND: u32 = 10_000_000;
    const PERIOD_TICKS: u64 = PERIOD_SECONDS.unsigned_abs() * TICKS_PER_SECOND as u64;
    const _: () = assert!(
        PERIOD_TICKS <= u32::MAX as u64,
        "a position in the period fits 32 bits"
    );
    // A remainder of the division by the period's ticks, which fit 32 bits (asserted).
    let within = (time.cast_unsigned() % PERIOD_TICKS) as u32;
    let index = within / TICKS_PER_SECOND;
    Phase {
        from_middle: 5u32.abs_diff(index),
        // All ones below 5 (the sign of `index − 5`, spread): an `and` per wave rather than a
        // comparison and a select.
        high: (index.cast_signed().wrapping_sub(5) >> 31).cast_unsigned(),
    }
}

/// A phase [`phase`] never returns: not read yet.
const NO_PHASE: Phase = Phase {
    from_middle: u32::MAX,
    high: 0,
};

/// [`values`] at a [`phase`]. With every counter asked for (the usual query) both values are
/// computed without a test of the mask; otherwise the ones not asked for are left 0.
#[expect(
    clippy::inline_always,
    reason = "measured with callgrind: out of line (as LLVM left it for the `InstanceId` and \
              `CounterMask` queries), the call and its arguments cost about as much as the body"
)]
#[inline(always)]
fn values_at(wave: Wave, at: Phase, counter_mask: u64) -> set::GeometricWaveValues {
    let mut v = set::GeometricWaveValues::default();
    let all = counter_mask == u64::MAX;
    if all || counter_wanted(counter_mask, set::ids::WAVE_TRIANGLE) {
        v.triangle = triangle(wave, at);
    }
    if all || counter_wanted(counter_mask, set::ids::WAVE_SQUARE) {
        v.square = square(wave, at);
    }
    v
}

/// The triangle wave's value at a phase: down from the top to the bottom and back up.
#[inline]
const fn triangle(wave: Wave, at: Phase) -> u32 {
    wave.minimum + wave.amplitude * at.from_middle / 5
}

/// The square wave's value at a phase: the top in the first half of the period.
#[inline]
const fn square(wave: Wave, at: Phase) -> u32 {
    wave.minimum + (wave.amplitude & at.high)
}

/// The wave's values at a phase, computing the triangle if `TRIANGLE` and the square if
/// `SQUARE` (the others stay 0): [`values_at`] for a mask known when the loop is chosen.
#[expect(clippy::inline_always, reason = "as for `values_at`")]
#[inline(always)]
fn values_of<const TRIANGLE: bool, const SQUARE: bool>(
    wave: Wave,
    at: Phase,
) -> set::GeometricWaveValues {
    let mut v = set::GeometricWaveValues::default();
    if TRIANGLE {
        v.triangle = triangle(wave, at);
    }
    if SQUARE {
        v.square = square(wave, at);
    }
    v
}

/// Offers every wave of `view` to a query selecting all of them, their values computed at
/// `at` by [`values_of`].
#[expect(
    clippy::inline_always,
    reason = "inlined into the callback with the visitor, whose state then stays in registers"
)]
#[inline(always)]
fn walk<const TRIANGLE: bool, const SQUARE: bool>(
    visitor: &mut Visitor<'_, set::Set>,
    view: &View<'_, Wave>,
    at: Phase,
) -> ControlFlow<()> {
    visitor.instances(
        view.iter(),
        #[inline(always)]
        |e| (e.name(), e.id()),
        #[inline(always)]
        |e, _| values_of::<TRIANGLE, SQUARE>(*e.value(), at),
    )
}

/// The waves of a frozen registry as the counterset's publisher: pcw-rt's safe callback
/// filters, adds and polls the cancel event; this only offers the waves (all of them, or the
/// one an `InstanceId` names, found in O(1)) and computes the values of the ones selected. It
/// reads the registry with no lock ([`Registry::read_frozen`]).
pub struct Waves<'r>(&'r Registry<ffi::RegistryLock, Wave>);

impl<'r> Waves<'r> {
    /// The publisher of `registry`'s waves.
    ///
    /// # Safety
    /// The publisher is visited only while `registry` is frozen ([`Registry::freeze`]): it is
    /// registered after the freeze, and the registry is thawed only once `PcwUnregister` has
    /// returned (or the publisher is visited no more).
    pub const unsafe fn new(registry: &'r Registry<ffi::RegistryLock, Wave>) -> Self {
        Self(registry)
    }
}

/// The driver's publisher, over [`REGISTRY`]: private, so that no safe code can register it
/// (the generated `register_publisher` is safe) while the waves are thawed; [`publisher`] hands
/// it out under its contract.
// SAFETY: handed out only by `publisher`, whose callers visit it only while `REGISTRY` is
// frozen.
static PUBLISHER: Waves<'static> = unsafe { Waves::new(&REGISTRY) };

/// The driver's publisher, over [`REGISTRY`] (registered with `register_publisher`).
///
/// # Safety
/// It is visited only while [`REGISTRY`] is frozen: `lifecycle::load` freezes the waves before
/// registering it, and `lifecycle::unload` thaws them only after unregistering it.
pub const unsafe fn publisher() -> &'static Waves<'static> {
    &PUBLISHER
}

/// Offers the wave `id` names (the `InstanceId` lookup found `entry` by it), its values computed
/// now if the query selects it.
#[expect(
    clippy::inline_always,
    reason = "inlined into the callback with the visitor, whose state then stays in registers"
)]
#[inline(always)]
fn offer(visitor: &mut Visitor<'_, set::Set>, id: u32, entry: &Entry<Wave>) -> ControlFlow<()> {
    let wave = *entry.value();
    // `id`, not `entry.id()` (the same number): the filter then compares the query's id with
    // itself, which the compiler folds (measured with callgrind: 2 instructions).
    visitor.instance(
        entry.name(),
        id,
        #[inline(always)]
        |counters| values(wave, ffi::system_time(), counters.bits()),
    )
}

impl Publish<set::Set> for Waves<'_> {
    #[expect(
        clippy::inline_always,
        reason = "measured with callgrind: inlined into pcw-rt's callback, the visitor's state \
                  stays in registers"
    )]
    #[inline(always)]
    fn visit(&self, visitor: &mut Visitor<'_, set::Set>) -> ControlFlow<()> {
        timed(
            visitor,
            #[inline(always)]
            |visitor| {
                // `instances`, not `instance` in a loop: the visitor's state stays in registers
                // (measured with callgrind: a loop of `instance` calls behind the registry's closure
                // cost 37 instructions per instance against 16).
                // SAFETY: visited only while the registry is frozen (`Waves::new`'s contract).
                unsafe {
                    self.0.read_frozen(
                        #[inline(always)]
                        |view| {
                            // The phase the values are computed at: the clock read once per collection,
                            // and not for an enumeration. When every instance is selected (the usual
                            // query), before the loop, whose values then need no test of the phase nor
                            // of the mask (a loop for each pair of counters the mask can ask for) —
                            // without testing for an empty registry first (measured with callgrind; the
                            // driver's waves are never empty while registered); otherwise when the first
                            // instance is selected (`NO_PHASE` until then), so that a query which
                            // selects none reads no clock.
                            if visitor.collecting() && visitor.selects_all() {
                                let at = phase(ffi::system_time());
                                let counters = visitor.counters();
                                // Every counter asked for (the usual query): decided by one test.
                                if counters == CounterMask::ALL {
                                    return walk::<true, true>(visitor, &view, at);
                                }
                                // Some counters: computing only those, with no test per instance
                                // (measured with callgrind: testing the mask per counter and
                                // instance cost 6 instructions an instance).
                                return match (
                                    counters.wants(set::ids::WAVE_TRIANGLE),
                                    counters.wants(set::ids::WAVE_SQUARE),
                                ) {
                                    (true, true) => walk::<true, true>(visitor, &view, at),
                                    (true, false) => walk::<true, false>(visitor, &view, at),
                                    (false, true) => walk::<false, true>(visitor, &view, at),
                                    (false, false) => walk::<false, false>(visitor, &view, at),
                                };
                            }
                            let mut at = NO_PHASE;
                            visitor.instances(
                                view.iter(),
                                #[inline(always)]
                                |e| (e.name(), e.id()),
                                #[inline(always)]
                                |e, counters| {
                                    if at == NO_PHASE {
                                        at = phase(ffi::system_time());
                                    }
                                    values_at(*e.value(), at, counters.bits())
                                },
                            )
                        },
                    )
                }
            },
        )
    }

    #[expect(clippy::inline_always, reason = "as for `visit`")]
    #[inline(always)]
    fn visit_id(&self, id: u32, visitor: &mut Visitor<'_, set::Set>) -> ControlFlow<()> {
        timed(
            visitor,
            #[inline(always)]
            |visitor| {
                // SAFETY: visited only while the registry is frozen (`Waves::new`'s contract).
                unsafe {
                    self.0.read_frozen(
                        #[inline(always)]
                        |view| {
                            // A `match`, not `map_or`: a closure left out of line would take the visitor's
                            // address and keep its state in memory for the whole callback.
                            match view.get(id) {
                                Some(e) => offer(visitor, id, e),
                                None => ControlFlow::Continue(()),
                            }
                        },
                    )
                }
            },
        )
    }
}

/// What the registered callback does, over any registry of waves (pcw-rt's `respond` with a
/// [`Waves`] publisher). The driver has one registry, [`REGISTRY`], limited to 64 waves; the
/// benchmarks (crates/pcw-bench) run this same code over registries of up to 100 000 instances.
///
/// # Safety
/// `info` is NULL or a valid information block for `kind`, as PCW passes it to a callback, and
/// `registry` is frozen for the whole call ([`Waves::new`]).
pub unsafe fn respond(
    registry: &Registry<ffi::RegistryLock, Wave>,
    kind: PCW_CALLBACK_TYPE,
    info: *const PCW_CALLBACK_INFORMATION,
) -> NTSTATUS {
    // SAFETY: frozen for the call (contract).
    let publisher = unsafe { Waves::new(registry) };
    // SAFETY: forwarded under this function's contract.
    unsafe { ffi::respond::<set::Set, _>(&publisher, kind, info) }
}
