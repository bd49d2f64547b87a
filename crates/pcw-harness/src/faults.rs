// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fault injection across `DriverEntry`: [`fault_sweep`] makes each fallible kernel call the
//! driver's `DriverEntry` makes fail in turn, with `STATUS_INSUFFICIENT_RESOURCES`, and checks
//! that every failure is handled: a `DriverEntry` that fails leaves nothing behind and breaks
//! no kernel rule; one that absorbs the failure and succeeds unloads cleanly.

use pcw_loader::ntos;
use pcw_sim::kernel_pcw::{Kernel, PcwCall};

use crate::driver::{Driver, Error, leftovers, tear_down};
use crate::unclean::Unclean;

/// `STATUS_INSUFFICIENT_RESOURCES`, what every injected fault returns.
pub const INJECTED: i32 = 0xC000_009A_u32.cast_signed();

/// One injected fault and what `DriverEntry` made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The routine that failed (`IoCreateDevice`, `PcwRegister`, …).
    pub routine: String,
    /// What `DriverEntry` returned.
    pub status: i32,
}

/// A fault the driver did not handle, or a sweep that could not run. `Debug` prints the same
/// text as `Display`, so a test's `unwrap()` reads as a sentence.
#[derive(thiserror::Error)]
pub enum FaultFailure {
    /// The driver could not be loaded.
    #[error(transparent)]
    Load(#[from] Error),
    /// With no fault injected, `DriverEntry` failed.
    #[error("{what}: DriverEntry failed with NTSTATUS {status:#010X} with no fault injected")]
    Baseline {
        /// The driver.
        what: String,
        /// What it returned.
        status: u32,
    },
    /// With no fault injected, the run left something behind or broke a rule.
    #[error("{what}, with no fault injected (DriverEntry returned {status:#010X}): {unclean}")]
    Unclean {
        /// The driver.
        what: String,
        /// What `DriverEntry` returned.
        status: u32,
        /// What was left or broken.
        unclean: Unclean,
    },
    /// A failing call left something behind or broke a rule.
    #[error("{what}, DriverEntry with a failing `{routine}` (returned {status:#010X}): {unclean}")]
    Unhandled {
        /// The driver.
        what: String,
        /// The routine made to fail.
        routine: String,
        /// What `DriverEntry` returned.
        status: u32,
        /// What was left or broken.
        unclean: Unclean,
    },
}

impl std::fmt::Debug for FaultFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// How one fault is injected.
#[derive(Clone, Copy, Debug)]
enum Injection {
    /// The `n`-th fallible call to a loader routine.
    Loader(usize),
    /// The `n`-th call of a PCW routine to the simulated kernel (a host build's PCW calls go
    /// there directly).
    Pcw(PcwCall, usize),
}

/// What one run of `DriverEntry` with a fault did.
struct Run {
    /// The routine that failed, if the fault was reached.
    failed: Option<String>,
    status: i32,
    /// Fallible loader calls made during the run.
    loader_calls: usize,
}

fn run(driver: &Driver, build: u32, injection: Injection) -> Result<Run, FaultFailure> {
    let kernel = Kernel::boot(build);
    let loaded = driver.load()?;
    match injection {
        Injection::Loader(n) => ntos::fail_at(Some(n)),
        Injection::Pcw(call, n) => {
            ntos::fail_at(None);
            kernel.fail(call, n, INJECTED);
        }
    }
    let status = loaded.entry();
    let failed = match injection {
        Injection::Loader(_) => ntos::failed().map(str::to_owned),
        Injection::Pcw(call, n) => (kernel.calls(call) > n).then(|| pcw_name(call).to_owned()),
    };
    let loader_calls = ntos::fallible_calls();
    ntos::fail_at(None);
    let what = driver.describe().to_owned();
    let unclean = if status >= 0 {
        match loaded.unload(kernel) {
            Ok(()) => Unclean::default(),
            Err(u) => u,
        }
    } else {
        let mut unclean = Unclean::default();
        let registrations = leftovers(&mut unclean);
        drop(loaded);
        tear_down(&mut unclean, registrations, kernel);
        unclean
    };
    match (&failed, unclean.is_empty()) {
        (None, _) if status < 0 => Err(FaultFailure::Baseline {
            what,
            status: status.cast_unsigned(),
        }),
        (_, true) => Ok(Run {
            failed,
            status,
            loader_calls,
        }),
        (None, false) => Err(FaultFailure::Unclean {
            what,
            status: status.cast_unsigned(),
            unclean,
        }),
        (Some(routine), false) => Err(FaultFailure::Unhandled {
            what,
            routine: routine.clone(),
            status: status.cast_unsigned(),
            unclean,
        }),
    }
}

fn pcw_name(call: PcwCall) -> &'static str {
    match call {
        PcwCall::Register => "PcwRegister",
        PcwCall::AddInstance => "PcwAddInstance",
        PcwCall::CreateInstance => "PcwCreateInstance",
    }
}

/// Runs `DriverEntry` once per fallible kernel call it makes, on a kernel of Windows build
/// `build`, that call failing; returns the faults in call order with what `DriverEntry`
/// returned. Each run must leave nothing behind when `DriverEntry` fails, and unload cleanly
/// when it succeeds anyway; the sweep ends with a run where no call failed, which must
/// succeed and unload cleanly.
///
/// For an image every fallible routine is the loader's. A host build's PCW calls go to the
/// simulated kernel directly; they are failed there, and placed in the order by how many of
/// the loader's fallible calls came before them.
///
/// # Errors
/// The first [`FaultFailure`].
pub fn fault_sweep(driver: &Driver, build: u32) -> Result<Vec<Fault>, FaultFailure> {
    // (loader calls before it, tie-break, fault)
    let mut faults: Vec<(usize, usize, Fault)> = Vec::new();
    for n in 0.. {
        let r = run(driver, build, Injection::Loader(n))?;
        let Some(routine) = r.failed else { break };
        faults.push((
            n,
            1,
            Fault {
                routine,
                status: r.status,
            },
        ));
    }
    if !driver.is_image() {
        for call in [PcwCall::Register, PcwCall::CreateInstance] {
            for n in 0.. {
                let r = run(driver, build, Injection::Pcw(call, n))?;
                let Some(routine) = r.failed else { break };
                faults.push((
                    r.loader_calls,
                    0,
                    Fault {
                        routine,
                        status: r.status,
                    },
                ));
            }
        }
    }
    faults.sort_by_key(|(before, tie, _)| (*before, *tie));
    Ok(faults.into_iter().map(|(_, _, f)| f).collect())
}
