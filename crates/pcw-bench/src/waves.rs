// SPDX-License-Identifier: MIT OR Apache-2.0
//! The callback scenarios: N "Geometric Waves" instances held twice, once in a
//! `pcw_core::registry::Registry` answered by the driver's own code (`pcw_driver::waves::respond`,
//! the body of its `PCW_CALLBACK`) and once in the C baseline's array; a query
//! (`PCW_CALLBACK_INFORMATION`) built the way PCW builds it; and one call of either callback.

use core::ffi::c_void;

use pcw_core::registry::Registry;
use pcw_driver::ffi::{self, RegistryLock};
use pcw_driver::waves::{self as driver_waves, Wave};
use windows_sys::Wdk::System::SystemServices::{
    PCW_CALLBACK_INFORMATION, PCW_MASK_INFORMATION, PcwCallbackCollectData,
};
use windows_sys::Win32::Foundation::{NTSTATUS, UNICODE_STRING};

use crate::c::{self, KcsInstance};
use crate::utf16;

/// Units of a long name.
pub const LONG_NAME_UNITS: usize = 1000;

/// The adversarial mask of the matcher scenarios (BENCHMARKS.md).
pub const ADVERSARIAL: &str = "*a*a*a*a*a*a*a*a*b";

/// How instance names are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Names {
    /// `Small Wave 000001`, `Medium Wave 000002`, `Large Wave 000003`, … in turn.
    Short,
    /// 1000 units: `a` × 994 then six digits. The naive matcher explodes on [`ADVERSARIAL`]
    /// (every split of the `a`s is tried); a linear matcher rejects at the missing final `b`.
    LongA,
    /// 1000 units: six digits, `x` × 985, `a` × 8, `b`. Matches [`ADVERSARIAL`]; a linear
    /// matcher must scan the whole name for the first `a`.
    LongScan,
}

impl Names {
    /// The name of instance `i`.
    pub fn name(self, i: usize) -> Vec<u16> {
        match self {
            Self::Short => {
                let kind = ["Small", "Medium", "Large"][i % 3];
                utf16(&format!("{kind} Wave {i:06}"))
            }
            Self::LongA => utf16(&format!("{}{i:06}", "a".repeat(LONG_NAME_UNITS - 6))),
            Self::LongScan => utf16(&format!("{i:06}{}aaaaaaaab", "x".repeat(985))),
        }
    }

    /// Short label for reports.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Short => "short",
            Self::LongA => "long-a",
            Self::LongScan => "long-scan",
        }
    }
}

/// N waves, in the driver's registry and in the C baseline's array.
pub struct Population {
    /// The instances as the driver keeps them.
    pub registry: Registry<RegistryLock, Wave>,
    /// The names the C array points into (kept alive and unmoved here).
    names: Vec<Vec<u16>>,
    /// The C baseline's instances, same ids and names, same order.
    kcs: Vec<KcsInstance>,
    /// Ids in registry order.
    pub ids: Vec<u32>,
}

impl Population {
    /// `n` waves named by `names`.
    ///
    /// # Panics
    /// If the registry refuses an instance (a bench setup error).
    pub fn new(n: usize, names: Names) -> Self {
        let registry = Registry::new(n.max(1));
        let names: Vec<Vec<u16>> = (0..n).map(|i| names.name(i)).collect();
        let mut ids = Vec::with_capacity(n);
        let mut kcs = Vec::with_capacity(n);
        for (i, name) in names.iter().enumerate() {
            let (_, wave) = driver_waves::WAVES[i % 3];
            let id = registry.insert(name, wave).expect("bench instance");
            ids.push(id);
            kcs.push(KcsInstance {
                id,
                name: ffi::unicode(name),
                minimum: wave.minimum,
                amplitude: wave.amplitude,
            });
        }
        // As the driver's are between load and unload: read without a lock.
        registry.freeze();
        Self {
            registry,
            names,
            kcs,
            ids,
        }
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Makes this population the C baseline's (its array is global state in `c/kcs.c`).
    pub fn install_c(&self) {
        // SAFETY: the array lives as long as `self`; the benches install a population before
        // running the C callback over it and never run it after dropping the population.
        unsafe { c::kcs_set_instances(self.kcs.as_ptr(), self.kcs.len()) };
    }

    /// The name of instance `i`.
    pub fn name(&self, i: usize) -> &[u16] {
        &self.names[i]
    }
}

/// What a query asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// Everything.
    Full,
    /// One instance id.
    Id(u32),
    /// An instance name mask.
    Mask(String),
    /// One counter of the two (`CounterMask` = 1 << id).
    OneCounter,
}

/// A collect query with the memory PCW would own for it, built once and reused.
pub struct Call {
    _mask_units: Vec<u16>,
    _mask: Box<UNICODE_STRING>,
    info: Box<PCW_CALLBACK_INFORMATION>,
}

impl Call {
    /// A `PcwCallbackCollectData` query; `buffer` is the opaque `PPCW_BUFFER` handed to
    /// `PcwAddInstance` (the no-op PCW ignores it).
    pub fn new(query: &Query, buffer: isize) -> Self {
        let mut mask_units = match query {
            Query::Mask(m) => utf16(m),
            _ => Vec::new(),
        };
        let mut mask = Box::new(ffi::unicode(&mask_units));
        mask.Buffer = mask_units.as_mut_ptr();
        let info = PCW_MASK_INFORMATION {
            CounterMask: match query {
                Query::OneCounter => {
                    1 << pcw_driver::countersets::pcw_driver::geometric_waves::ids::WAVE_TRIANGLE
                }
                _ => u64::MAX,
            },
            InstanceMask: if matches!(query, Query::Mask(_)) {
                &raw mut *mask
            } else {
                core::ptr::null_mut()
            },
            InstanceId: match query {
                Query::Id(id) => *id,
                _ => pcw_core::filter::PCW_ANY_INSTANCE_ID,
            },
            CollectMultiple: true,
            Buffer: buffer,
            CancelEvent: core::ptr::null_mut(),
        };
        Self {
            _mask_units: mask_units,
            _mask: mask,
            info: Box::new(PCW_CALLBACK_INFORMATION { CollectData: info }),
        }
    }

    /// The information block PCW passes to the callback.
    pub fn info(&self) -> *const PCW_CALLBACK_INFORMATION {
        &raw const *self.info
    }
}

/// The driver's callback body over `registry`, entered the way PCW enters a `PCW_CALLBACK`
/// (through a function pointer, with the registry as the callback context).
///
/// # Safety
/// As a `PCW_CALLBACK`: `info` is valid for `kind`; `context` points to a live, frozen
/// `Registry<RegistryLock, Wave>` (a [`Population`]'s, frozen when it is made and never thawed).
pub unsafe extern "system" fn registry_callback(
    kind: i32,
    info: *const PCW_CALLBACK_INFORMATION,
    context: *const c_void,
) -> NTSTATUS {
    // SAFETY: the context registered with this callback is always a live registry of waves.
    let registry = unsafe { &*context.cast::<Registry<RegistryLock, Wave>>() };
    // SAFETY: `info` is valid for `kind` (PCW_CALLBACK contract, forwarded); the registry is
    // frozen for good (contract).
    unsafe { driver_waves::respond(registry, kind, info) }
}

/// One collection by the driver's code.
#[inline(never)]
pub fn collect_ours(population: &Population, call: &Call) -> NTSTATUS {
    let callback: unsafe extern "system" fn(
        i32,
        *const PCW_CALLBACK_INFORMATION,
        *const c_void,
    ) -> NTSTATUS = core::hint::black_box(registry_callback);
    let context = (&raw const population.registry).cast::<c_void>();
    // SAFETY: `call` holds a valid CollectData block and the context is a live registry.
    unsafe { callback(PcwCallbackCollectData, call.info(), context) }
}

/// One collection by the C baseline over the population last [`Population::install_c`]ed.
#[inline(never)]
pub fn collect_c(call: &Call) -> NTSTATUS {
    // SAFETY: `call` holds a valid CollectData block; the installed population is alive.
    unsafe { c::kcs_callback(PcwCallbackCollectData, call.info(), core::ptr::null_mut()) }
}

/// pcw-core's matcher on one name, for the matcher-level comparison.
#[inline(never)]
pub fn match_ours(mask: &[u16], name: &[u16]) -> bool {
    pcw_core::wildcard::matches(mask, name)
}

/// The naive C matcher on one name (subject to its cap).
#[inline(never)]
pub fn match_c(mask: &[u16], name: &[u16]) -> bool {
    let m = ffi::unicode(mask);
    let n = ffi::unicode(name);
    // SAFETY: both strings point at live slices of the stated lengths.
    unsafe { c::kcs_match(&raw const m, &raw const n) != 0 }
}
