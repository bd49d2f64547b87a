// SPDX-License-Identifier: MIT OR Apache-2.0
//! SIGINT, SIGTERM and SIGHUP, for every command (on Unix): a thread waits for them and then removes
//! the temporaries the command's outputs are staged in (`pcw_io::staged::discard`) and ends
//! the process by the signal's default action, so that a shell sees a command the signal ended
//! (and a script's loop stops with it) — at once, or, for a command that stops itself on a
//! signal (`typeperf`, [`grace`]), only if it has not ended within its grace.
//!
//! Without it, a signal while a command waited (to open a FIFO that has no reader, to write to
//! a full pipe) either killed it with its `.NAME.XXXX.tmp` files left beside the user's, or,
//! in `typeperf`, whose handler only records the signal for the sampling loop, was never acted
//! on while the wait lasted. On Windows nothing changes: Ctrl+C ends a console process there
//! as it always did (and `typeperf` stops itself as on Unix).

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

/// The signals that end a command (and stop `typeperf`'s sampling): Ctrl+C, SIGTERM, and
/// SIGHUP, which a closed terminal or ssh session sends.
#[cfg(unix)]
pub(crate) const STOPPING: &[i32] = &[
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
];

/// The [`STOPPING`] signals this process acts on: those it was not started with ignored. A
/// signal ignored at the start stays ignored, the Unix rule for a program that catches
/// signals: `nohup pcw typeperf … &` keeps sampling after its terminal is closed, and a
/// background job of a script is not stopped by the terminal's Ctrl+C. Worked out once, by
/// [`install`], before any handler is set.
#[cfg(unix)]
pub(crate) fn watched() -> &'static [i32] {
    static WATCHED: std::sync::OnceLock<Vec<i32>> = std::sync::OnceLock::new();
    WATCHED.get_or_init(|| {
        let ignored = ignored_at_start();
        STOPPING
            .iter()
            .copied()
            .filter(|s| u32::try_from(*s - 1).is_ok_and(|bit| ignored & (1 << bit) == 0))
            .collect()
    })
}

/// The signals this process was started with ignored, as the bit `signal - 1` of the
/// `SigIgn` mask Linux shows in `/proc/self/status`; none where that cannot be read (other
/// Unixes: every stopping signal is then caught).
#[cfg(unix)]
fn ignored_at_start() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        })
        .unwrap_or(0)
}

/// Starts the thread that ends the process on the [`watched`] signals. Where no thread can be
/// started, the signals keep their default actions.
///
/// Also catches SIGXFSZ, which a file-size limit (`ulimit -f`) sends to a write that would
/// pass it: its default action ends the process at once, with its staged temporaries left
/// beside the user's files and no word said. Caught, the write fails with `EFBIG` instead, and
/// the command reports it and removes what it staged, as on a full disk.
#[cfg(unix)]
pub(crate) fn install() {
    // A flag nobody reads: all that matters is that the signal is caught.
    let watched = watched();
    let caught = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, caught);
    let Ok(mut signals) = signal_hook::iterator::Signals::new(watched) else {
        return;
    };
    let started = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let grace = GRACE_MS.load(Ordering::SeqCst);
                if grace > 0 {
                    std::thread::sleep(Duration::from_millis(grace));
                }
                // Held until the process has ended: nothing is staged or renamed after it.
                let _held = pcw_io::staged::discard();
                tell(signal);
                // Ended by the signal itself; should that fail, `_exit` with the status a shell
                // gives a command the signal ended (no destructor, no flush of a buffer whose
                // pipe may be full).
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                signal_hook::low_level::exit(i32::from(exit_code(signal)));
            }
        });
    if started.is_err() {
        // The handlers the iterator installed stay (unregistered, a signal would be ignored):
        // each now takes the default action.
        for &signal in watched {
            let always = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
            let _ = signal_hook::flag::register_conditional_default(signal, always);
        }
    }
}

/// One line on standard error, when it is a terminal, saying why the command ended: written
/// through a descriptor of its own, as the command's thread may hold the stream's lock.
#[cfg(unix)]
fn tell(signal: i32) {
    use std::io::{IsTerminal, Write};
    use std::os::fd::AsFd;
    let stderr = std::io::stderr();
    if !stderr.is_terminal() {
        return;
    }
    if let Ok(fd) = stderr.as_fd().try_clone_to_owned() {
        let line = format!(
            "error: interrupted by {}; files not yet in place were removed\n",
            name(signal)
        );
        let _ = std::fs::File::from(fd).write_all(line.as_bytes());
    }
}

/// Signals keep their default actions (Windows ends a console process on Ctrl+C itself).
#[cfg(not(unix))]
pub(crate) fn install() {}

/// How a message names `signal`.
pub(crate) fn name(signal: i32) -> String {
    match signal {
        #[cfg(windows)]
        signal_hook::consts::SIGINT => "Ctrl+C".to_owned(),
        #[cfg(windows)]
        signal_hook::consts::SIGBREAK => "Ctrl+Break".to_owned(),
        #[cfg(not(windows))]
        signal_hook::consts::SIGINT => "SIGINT".to_owned(),
        signal_hook::consts::SIGTERM => "SIGTERM".to_owned(),
        #[cfg(unix)]
        signal_hook::consts::SIGHUP => "SIGHUP".to_owned(),
        other => format!("signal {other}"),
    }
}

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
