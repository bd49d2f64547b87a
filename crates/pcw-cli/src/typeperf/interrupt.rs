// SPDX-License-Identifier: MIT OR Apache-2.0
//! Ctrl+C for `pcw typeperf`: SIGINT, SIGTERM and SIGHUP (on Windows Ctrl+C, Ctrl+Break and SIGTERM)
//! stop the sampling instead of ending the process, so that the rows already written are kept
//! and an `-o` file is committed whole, as typeperf keeps its log when it is stopped with
//! Ctrl+C.
//!
//! The handler only records the signal in a flag (signal-hook's [`flag`]); the command looks at
//! it between samples, and [`Interrupt::wait`] waits out an interval in short slices so that a
//! long `-si` ends at once. Every later signal is caught the same way, so a second Ctrl+C while
//! the file is renamed into place cannot end the process half-way. A run that waits where the
//! flag is not looked at (a FIFO with no writer, a full pipe) is ended by the process-wide
//! handler ([`crate::signals`]) after its grace, its `-o` temporary removed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use signal_hook::flag;

use super::Error;

/// The signals that stop a run: those that end any command (but the ones it was started with
/// ignored, which stay ignored).
#[cfg(unix)]
fn signals() -> &'static [i32] {
    crate::signals::watched()
}
/// The signals that stop a run: Ctrl+C, Ctrl+Break and SIGTERM.
#[cfg(windows)]
fn signals() -> &'static [i32] {
    &[
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGBREAK,
        signal_hook::consts::SIGTERM,
    ]
}

/// The longest time a wait goes without looking at the flag.
const SLICE: Duration = Duration::from_millis(20);

/// The signal that stopped the run, if any (0: none yet).
#[derive(Debug, Default)]
pub(crate) struct Interrupt(Arc<AtomicUsize>);

impl Interrupt {
    /// Catches [`signals`] from now on: each records itself in the flag instead of ending the
    /// process.
    ///
    /// # Errors
    /// [`Error::Signals`] when a handler cannot be installed.
    pub(crate) fn watch() -> Result<Self, Error> {
        // The process-wide handler ends the process only if the run has not stopped by itself
        // within this grace (a wait the flag cannot end: a FIFO, a full pipe).
        crate::signals::grace(crate::signals::TYPEPERF_GRACE);
        let caught = Arc::new(AtomicUsize::new(0));
        for &signal in signals() {
            let number = usize::try_from(signal).unwrap_or(usize::MAX);
            flag::register_usize(signal, Arc::clone(&caught), number).map_err(Error::Signals)?;
        }
        Ok(Self(caught))
    }

    /// The signal caught, if one was.
    pub(crate) fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            n => Some(i32::try_from(n).unwrap_or(i32::MAX)),
        }
    }

    /// Waits `interval` (sampling's sleep), or less if a signal is or gets caught: `true` when
    /// the whole interval passed, `false` when the run is to stop.
    pub(crate) fn wait(&self, interval: Duration) -> bool {
        let end = Instant::now().checked_add(interval);
        loop {
            if self.signal().is_some() {
                return false;
            }
            let left = end.map_or(SLICE, |end| end.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(SLICE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_without_a_signal_lasts_its_interval_and_one_with_a_signal_ends_at_once() {
        let interrupt = Interrupt::default();
        let start = Instant::now();
        assert!(interrupt.wait(Duration::from_millis(50)));
        assert!(start.elapsed() >= Duration::from_millis(50));
        interrupt.0.store(2, Ordering::SeqCst);
        let start = Instant::now();
        assert!(!interrupt.wait(Duration::from_secs(3600)));
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(interrupt.signal(), Some(2));
    }
}
