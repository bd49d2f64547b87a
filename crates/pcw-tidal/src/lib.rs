// SPDX-License-Identifier: MIT OR Apache-2.0
//! An example service publishing user-mode Perflib V2 counters declared in Rust
//! (`src/declaration.rs`, pcw-declare's `counters!`): the macro expands pcw-gen's typed module,
//! `build.rs` derives the manifest from the same declaration, and pcw-um runs it.
//! On Windows the counters go to Perflib; on other hosts to pcw-sim's simulated Perflib, where
//! `pcw typeperf -provider tidal` samples them.
//!
//! What the service publishes at tick `n` ([`expected`] says the same as numbers):
//! harbor `North` has water level `100 + n`, harbor `South` `200 - n` (floored at 0), each with
//! `n / 2` ships moored (a 64-bit counter); the moon's `Pull` is `10 n` (capped at 1000) and
//! `Phase` `n mod 30` (reference counters, set through their atomics), `Full Pull` (the base)
//! is 1000 and `Pull Fraction` equals `Pull`, so it cooks to `Pull / 10` percent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

// Off Windows, links the simulated Perflib the generated code calls.
#[cfg(not(windows))]
use pcw_sim as _;

mod declaration;

pub use declaration::tidal_service;
pub use tidal_service as counters;
use tidal_service::{tidal_harbors as harbors, tidal_moon as moon};

/// The manifest derived from the declaration by `build.rs`, for consumers that resolve counter
/// paths (`pcw typeperf`) and for `lodctr /m:`.
pub const MANIFEST: &str = include_str!(concat!(env!("OUT_DIR"), "/tidal_service.man"));

/// The values of tick `n`: `(north level, south level, ships per harbor, pull, phase, full
/// pull)`.
pub fn expected(n: u32) -> (u32, u32, u64, u32, u32, u32) {
    let pull = n.saturating_mul(10).min(1000);
    (
        100u32.saturating_add(n),
        200u32.saturating_sub(n),
        u64::from(n / 2),
        pull,
        n % 30,
        1000,
    )
}

/// The service's instances on a started provider; [`Publisher::publish`] writes one tick.
#[derive(Debug)]
pub struct Publisher<'p> {
    north: harbors::Instance<'p>,
    south: harbors::Instance<'p>,
    moon: moon::Instance<'p>,
}

impl<'p> Publisher<'p> {
    /// Creates the harbors `North` and `South` and the moon's single instance.
    ///
    /// # Errors
    /// The runtime's error.
    pub fn new(provider: &'p pcw_um::Provider) -> Result<Self, pcw_um::Error> {
        Ok(Self {
            north: harbors::Instance::create(provider, "North", 1)?,
            south: harbors::Instance::create(provider, "South", 2)?,
            moon: moon::Instance::create(provider)?,
        })
    }

    /// Publishes tick `n` (see the crate docs).
    ///
    /// # Errors
    /// The runtime's error.
    pub fn publish(&self, n: u32) -> Result<(), pcw_um::Error> {
        let (north, south, ships, pull, phase, full) = expected(n);
        self.north.set_water_level(north)?;
        self.south.set_water_level(south)?;
        self.north.set_ships_moored(ships)?;
        self.south.set_ships_moored(0)?;
        self.south.increment_ships_moored(ships)?;
        self.moon.set_pull(pull)?;
        self.moon.phase()?.store(phase, Ordering::Relaxed);
        self.moon.set_full_pull(full)?;
        self.moon.set_pull_fraction(pull)?;
        Ok(())
    }
}

/// The service running on its own thread: a tick every `period` until dropped.
#[derive(Debug)]
pub struct Service {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<u32, pcw_um::Error>>>,
}

impl Service {
    /// Starts the provider and the publishing thread; tick 0 is published before this
    /// returns.
    ///
    /// # Errors
    /// The runtime's error when the provider or its instances cannot be created.
    pub fn start(period: Duration) -> Result<Self, pcw_um::Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let provider = match tidal_service::start() {
                Ok(p) => p,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return Ok(0);
                }
            };
            let publisher = match Publisher::new(&provider).and_then(|p| p.publish(0).map(|()| p)) {
                Ok(p) => p,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return Ok(0);
                }
            };
            let _ = ready_tx.send(Ok(()));
            let mut n = 0;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(period);
                n += 1;
                publisher.publish(n)?;
            }
            // Instances go before the provider (the borrow makes any other order impossible).
            drop(publisher);
            drop(provider);
            Ok(n)
        });
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self {
                stop,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(pcw_um::Error::Win32 {
                operation: "the service thread",
                code: 0,
            }),
        }
    }

    /// Stops publishing, deletes the instances and stops the provider; returns the last tick.
    ///
    /// # Errors
    /// The runtime's error from a publish.
    pub fn stop(mut self) -> Result<u32, pcw_um::Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<u32, pcw_um::Error> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) | None => Ok(0),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
