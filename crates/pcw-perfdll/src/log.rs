// SPDX-License-Identifier: MIT OR Apache-2.0
//! Error reporting of the V1 contract (the `CollectPerformanceData` reference page sends every
//! error but an insufficient buffer to the Application event log): every failure other than
//! `ERROR_MORE_DATA`
//! becomes an [`Event`] handed to a [`Logger`].
//!
//! Sinks: on Windows the Application event log (`ReportEventW`, source `pcw_perfdll`, see
//! `win::eventlog`); everywhere, a bounded in-memory ring ([`recent`]) that tests of the rlib
//! read, and — when `Linkage\Export` names one with `log-file=` — a file the host tests of the
//! cdylib read (one line per event: `id kind code message`; not on Windows).

#[cfg(not(windows))]
use std::io::Write as _;
use std::sync::Mutex;

/// Event ids (the `dwEventID` of `ReportEventW`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EventKind {
    /// `Linkage\Export` holds a malformed setting; Open failed.
    BadLinkage = 1000,
    /// First Counter / First Help are not known yet (lodctr not run?); retried at Collect.
    NoIndexes = 1001,
    /// The data source could not be opened or read; retried at the next Collect.
    SourceUnavailable = 1002,
    /// The source returned data the DLL cannot serve (malformed snapshot).
    BadData = 1003,
    /// pcw-core refused to write the reply (`Collected::Failed`).
    WriteFailed = 1004,
    /// Collect was called without a successful Open.
    NotOpen = 1005,
    /// Collect got a NULL query or NULL output pointer and returned nothing.
    BadArguments = 1006,
    /// An allocation failed: Open failed (`ERROR_NOT_ENOUGH_MEMORY`), or Collect served no data.
    NoMemory = 1007,
}

impl EventKind {
    /// A fixed, human-readable description.
    pub const fn message(self) -> &'static str {
        match self {
            Self::BadLinkage => "pcw_perfdll: malformed Linkage\\Export setting; Open failed",
            Self::NoIndexes => {
                "pcw_perfdll: First Counter/First Help unknown (run lodctr); no data served"
            }
            Self::SourceUnavailable => {
                "pcw_perfdll: the data source is unavailable; no data served"
            }
            Self::BadData => "pcw_perfdll: the data source returned malformed data",
            Self::WriteFailed => "pcw_perfdll: the reply could not be written",
            Self::NotOpen => "pcw_perfdll: CollectPerformanceData called without Open",
            Self::BadArguments => "pcw_perfdll: NULL argument to CollectPerformanceData",
            Self::NoMemory => "pcw_perfdll: out of memory",
        }
    }
}

/// One logged failure: a kind and a code (a Win32 error or a detail number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// Detail: the Win32 error, the failing counter, … (0 when none).
    pub code: u32,
}

/// Where events go.
pub trait Logger: Send + Sync {
    /// Records one event. Must not panic.
    fn log(&self, event: Event);
}

/// Most events kept in memory.
pub const RING_LEN: usize = 256;

/// The last [`RING_LEN`] events, in a fixed array: a heap-backed ring would stay allocated when
/// the DLL is unloaded (statics are not dropped), leaking its buffer once per load; the leak checker
/// of `scripts/asan.sh` reported exactly that.
struct Ring {
    events: [Option<Event>; RING_LEN],
    /// Where the next event goes.
    next: usize,
}

static RING: Mutex<Ring> = Mutex::new(Ring {
    events: [None; RING_LEN],
    next: 0,
});

/// The in-memory ring (oldest first).
pub fn recent() -> Vec<Event> {
    RING.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .oldest_first()
}

impl Ring {
    fn push(&mut self, event: Event) {
        if let Some(slot) = self.events.get_mut(self.next) {
            *slot = Some(event);
        }
        self.next = (self.next + 1) % RING_LEN;
    }

    fn oldest_first(&self) -> Vec<Event> {
        let (newer, older) = self.events.split_at(self.next);
        older.iter().chain(newer).filter_map(|e| *e).collect()
    }
}

/// The default sink: the ring, the optional file, and on Windows the event log.
#[derive(Debug, Default)]
pub struct DefaultLogger {
    #[cfg_attr(
        windows,
        expect(dead_code, reason = "the file sink is not built on Windows")
    )]
    file: Option<String>,
}

impl DefaultLogger {
    /// A logger that also appends to `file`.
    pub fn new(file: Option<String>) -> Self {
        Self { file }
    }
}

impl Logger for DefaultLogger {
    fn log(&self, event: Event) {
        {
            let mut ring = RING
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            ring.push(event);
        }
        // The file sink is for the host tests of the cdylib (`log-file=` is documented as the
        // non-Windows sink). On Windows it is left out: std's file and `fmt` machinery links
        // panic paths, and the collect path that logs must have none (`pcw-pecheck no-panic`).
        #[cfg(not(windows))]
        if let Some(path) = &self.file
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            let _ = writeln!(
                f,
                "{} {:?} {} {}",
                event.kind as u32,
                event.kind,
                event.code,
                event.kind.message()
            );
        }
        #[cfg(windows)]
        crate::win::eventlog::report(event.kind as u32, event.kind.message(), event.code);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_events_oldest_first() {
        const N: u32 = 256;
        assert_eq!(N as usize, RING_LEN);
        let ev = |code| Event {
            kind: EventKind::BadData,
            code,
        };
        let mut ring = Ring {
            events: [None; RING_LEN],
            next: 0,
        };
        for code in 0..3 {
            ring.push(ev(code));
        }
        assert_eq!(ring.oldest_first(), vec![ev(0), ev(1), ev(2)]);
        for code in 3..N + 5 {
            ring.push(ev(code));
        }
        let kept = ring.oldest_first();
        assert_eq!(kept.len(), RING_LEN);
        assert_eq!(kept.first(), Some(&ev(5)));
        assert_eq!(kept.last(), Some(&ev(N + 4)));
    }
}
