// SPDX-License-Identifier: MIT OR Apache-2.0
//! SIGINT and SIGTERM, for every command (on Unix): a thread waits for them and then removes
//! the temporaries the command's outputs are staged in (`pcw_io::staged::discard`) and ends
//! the process with 128 + the signal's number, at once — or, for a command that stops itself
//! on a signal (`typeperf`, [`grace`]), only if it has not ended within its grace.
//!
//! Without it, a signal while a command waited (to open a FIFO that has no reader, to write to
//! a full pipe) either killed it with its `.NAME.XXXX.tmp` files left beside the user's, or,
//! in `typeperf`, whose handler only records the signal for the sampling loop, was never acted
//! on while the wait lasted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a command that stops itself on a signal has before the process is ended (0: it
/// does not stop itself).
static GRACE_MS: AtomicU64 = AtomicU64::new(0);

/// The grace `typeperf` has: it stops sampling within 20 ms of a signal, then commits its
/// `-o` file and prints its last lines.
pub(crate) const TYPEPERF_GRACE: Duration = Duration::from_secs(2);

/// From now on, a signal ends the process only if the command has not ended `grace` after it
/// (the command handles signals itself and has been told of this one).
pub(crate) fn grace(grace: Duration) {
    let ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
    GRACE_MS.store(ms, Ordering::SeqCst);
}

/// Starts the thread that ends the process on SIGINT or SIGTERM. Where it cannot be started
/// (no thread, no pipe for the signals), the signals keep their default action.
#[cfg(unix)]
pub(crate) fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    // A process that cannot start one more thread is about to fail anyway; its signals are
    // then caught and left for the command's own handling, if any.
    let _ = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let grace = GRACE_MS.load(Ordering::SeqCst);
                if grace > 0 {
                    std::thread::sleep(Duration::from_millis(grace));
                }
                // Held until the process has ended: nothing is staged or renamed after it.
                let _held = pcw_io::staged::discard();
                // `_exit`: no destructor, no flush of a buffer whose pipe may be full.
                signal_hook::low_level::exit(i32::from(exit_code(signal)));
            }
        });
}

/// Signals keep their default actions (Windows ends a console process on Ctrl+C itself).
#[cfg(not(unix))]
pub(crate) fn install() {}

/// The exit status after `signal`: 128 + its number, as a shell reports a command the signal
/// ended (130 for SIGINT, 143 for SIGTERM).
pub(crate) fn exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal.clamp(1, 127)).unwrap_or(u8::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(exit_code(signal_hook::consts::SIGINT), 130);
        assert_eq!(exit_code(signal_hook::consts::SIGTERM), 143);
        assert_eq!(exit_code(1000), 255);
    }
}
