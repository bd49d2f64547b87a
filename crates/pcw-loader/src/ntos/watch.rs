// SPDX-License-Identifier: MIT OR Apache-2.0
//! The time limit on a call into the image: `DriverEntry`, a dispatch routine, a PCW callback or
//! `DriverUnload` that has not returned after [`TIMEOUT_ENV`] seconds (30 by default) stops the
//! process the loader's one way ([`super::state::stop`], exit code 86), naming the routine, the
//! limit and where in the image the thread was, instead of hanging.
//!
//! Each watched call is listed (its thread, its deadline) while it runs; one watchdog thread,
//! started with the first watched call, sleeps until the earliest deadline. At a deadline it
//! writes the message into a static buffer and sends `SIGXCPU` to the thread still in the call;
//! that thread's handler adds where the image was and stops the process using only
//! async-signal-safe calls (the thread may be anywhere, inside the allocator included). A
//! thread that does not answer within 2 s is stopped by the watchdog itself. A call pays one
//! uncontended lock to be listed and one to leave the list; the watchdog wakes at most once
//! per limit while calls keep coming, and sleeps without a timeout when none is running. Only
//! the outermost call on a thread is watched (a PCW callback run inside `DriverEntry` is part of
//! it).

use core::cell::Cell;
use core::ffi::c_void;
use core::fmt::Write as _;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::cpu;
use super::state::{STOP_EXIT_CODE, stop};

/// The environment variable that sets the limit, in seconds (`0.5`, `30`, `600`); `0` or `off`
/// turns it off.
pub const TIMEOUT_ENV: &str = "PCW_LOADER_TIMEOUT";
/// The limit without [`TIMEOUT_ENV`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The signal the watchdog sends to a thread past its deadline.
const SIGNAL: libc::c_int = libc::SIGXCPU;
/// How long the watchdog waits for that thread to stop the process itself.
const GRACE: Duration = Duration::from_secs(2);

/// One call in the image that has not returned.
struct Active {
    id: u64,
    thread: libc::pthread_t,
    what: &'static str,
    deadline: Instant,
}

struct Table {
    calls: Vec<Active>,
    /// The watchdog sleeps with no timeout: a new call must wake it.
    idle: bool,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    calls: Vec::new(),
    idle: false,
});
static WAKE: Condvar = Condvar::new();
static WATCHDOG: OnceLock<Option<libc::sigaction>> = OnceLock::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// The call the watchdog signalled, and its message (`MESSAGE[..LENGTH]`), written before it.
static FIRED: AtomicU64 = AtomicU64::new(0);
static MESSAGE: [AtomicU8; 256] = [const { AtomicU8::new(0) }; 256];
static LENGTH: AtomicUsize = AtomicUsize::new(0);

std::thread_local! {
    /// The watched call this thread is in, 0 for none.
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

fn table() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The limit: [`TIMEOUT_ENV`] read once, `None` when it turns the limit off.
pub fn timeout() -> Option<Duration> {
    static LIMIT: OnceLock<Option<Duration>> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let Some(value) = std::env::var_os(TIMEOUT_ENV) else {
            return Some(DEFAULT_TIMEOUT);
        };
        let text = value.to_string_lossy();
        match text.trim() {
            "0" | "off" => None,
            t => match t
                .parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
            {
                Some(d) if !d.is_zero() => Some(d),
                _ => {
                    eprintln!(
                        "pcw-loader: {TIMEOUT_ENV}=`{text}` is not a number of seconds; the \
                         limit stays {} s",
                        DEFAULT_TIMEOUT.as_secs()
                    );
                    Some(DEFAULT_TIMEOUT)
                }
            },
        }
    })
}

/// Runs `f`, a call into the image named `what` (`DriverEntry`, …), under the time limit.
pub(crate) fn call<R>(what: &'static str, f: impl FnOnce() -> R) -> R {
    let _watched = Watched::start(what);
    f()
}

/// A listed call; dropping it (the call returned) unlists it.
struct Watched(u64);

impl Watched {
    fn start(what: &'static str) -> Option<Self> {
        let limit = timeout()?;
        if CURRENT.with(Cell::get) != 0 || !watchdog() {
            return None;
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        {
            let mut table = table();
            table.calls.push(Active {
                id,
                // SAFETY: pthread_self has no preconditions.
                thread: unsafe { libc::pthread_self() },
                what,
                deadline: Instant::now() + limit,
            });
            if table.idle {
                table.idle = false;
                WAKE.notify_one();
            }
        }
        CURRENT.with(|c| c.set(id));
        Some(Self(id))
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(0));
        table().calls.retain(|c| c.id != self.0);
    }
}

/// Starts the watchdog thread and installs the handler of [`SIGNAL`], once; whether it runs.
fn watchdog() -> bool {
    WATCHDOG
        .get_or_init(|| {
            let previous = cpu::install_one(SIGNAL, on_signal);
            std::thread::Builder::new()
                .name("pcw-loader watchdog".into())
                .spawn(run)
                .ok()
                .map(|_| previous)
        })
        .is_some()
}

/// The watchdog: sleeps until the earliest deadline, then stops the call past it.
fn run() {
    let Some(limit) = timeout() else { return };
    let mut table = table();
    loop {
        let now = Instant::now();
        let Some(next) = table.calls.iter().min_by_key(|c| c.deadline) else {
            // No call running: sleep until one starts.
            table.idle = true;
            table = WAKE
                .wait_while(table, |t| t.idle)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        if next.deadline > now {
            let wait = next.deadline - now;
            table = WAKE
                .wait_timeout(table, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        let (id, thread) = (next.id, next.thread);
        let message = format!(
            "{} did not return within {} s ({TIMEOUT_ENV} sets the limit)",
            next.what,
            limit.as_secs_f64()
        );
        for (slot, byte) in MESSAGE.iter().zip(message.bytes()) {
            slot.store(byte, Ordering::Relaxed);
        }
        LENGTH.store(message.len().min(MESSAGE.len()), Ordering::Relaxed);
        FIRED.store(id, Ordering::Release);
        // SAFETY: `thread` is in the call listed under `id`, which it cannot leave while this
        // thread holds the table's lock: it is alive.
        unsafe { libc::pthread_kill(thread, SIGNAL) };
        let asked = Instant::now();
        while table.calls.iter().any(|c| c.id == id) {
            let Some(left) = GRACE.checked_sub(asked.elapsed()) else {
                stop(&message);
            };
            table = WAKE
                .wait_timeout(table, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        // It returned just at its deadline: nothing to stop.
    }
}

/// A line in a fixed buffer, written without allocating.
struct Line {
    bytes: [u8; 512],
    len: usize,
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// [`SIGNAL`]'s handler: stops the process when the watchdog sent it to this thread for the
/// call it is in; passes any other `SIGXCPU` on.
extern "C" fn on_signal(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: the kernel's siginfo for this signal.
    let siginfo = unsafe { &*info };
    // SAFETY: `si_pid` is set for a signal sent with tgkill, and read only as a number.
    let (code, pid) = (siginfo.si_code, unsafe { siginfo.si_pid() });
    // SAFETY: getpid has no preconditions.
    let ours = code == libc::SI_TKILL && pid == unsafe { libc::getpid() };
    if !ours {
        let previous = WATCHDOG.get().copied().flatten();
        // SAFETY: this handler's own arguments.
        unsafe { cpu::pass_on_to(previous, signal, info, context) };
        return;
    }
    let current = CURRENT.with(Cell::get);
    if current == 0 || FIRED.load(Ordering::Acquire) != current {
        // Late: the call it was sent for has returned.
        return;
    }
    let mut line = Line {
        bytes: [0; 512],
        len: 0,
    };
    let _ = line.write_str("pcw-loader: stopped: ");
    for slot in MESSAGE.iter().take(LENGTH.load(Ordering::Relaxed)) {
        let _ = line.write_char(char::from(slot.load(Ordering::Relaxed)));
    }
    // SAFETY: the kernel passes the interrupted thread's `ucontext_t` to a SA_SIGINFO handler.
    let uc = unsafe { &*context.cast::<libc::ucontext_t>() };
    let rip =
        usize::try_from(uc.uc_mcontext.gregs[libc::REG_RIP as usize].cast_unsigned()).unwrap_or(0);
    if let Some((start, _)) = cpu::image_of(rip) {
        let _ = line.write_str("; the image was at ");
        cpu::place(rip, start, &mut line);
    } else {
        let _ = line.write_str("; the image was in a kernel routine");
    }
    let _ = line.write_str("\n");
    // SAFETY: writes a buffer we own to standard error; the process exits next.
    unsafe { libc::write(2, line.bytes.as_ptr().cast(), line.len) };
    // SAFETY: ends the process at once, as `stop` does.
    unsafe { libc::_exit(STOP_EXIT_CODE) }
}
