// SPDX-License-Identifier: MIT OR Apache-2.0
//! The privileged instructions the WDK's and mingw-w64's headers inline, emulated when the
//! image executes them: CR8 reads and writes (`KeGetCurrentIrql`, `KeRaiseIrql`, `KeLowerIrql`),
//! reads of `KUSER_SHARED_DATA` at `0xFFFFF78000000000` (`KeQuerySystemTime`,
//! `KeQueryInterruptTime`, `KeQueryTickCount`) and `gs:` reads of the processor control region
//! (`KeGetCurrentThread`, `KeGetPcr`, `KeGetCurrentProcessorNumber`).
//!
//! In a Linux process each of those faults: CR8 is inaccessible at CPL 3 (`#GP`), the kernel
//! half of the address space is unmapped for user code, and the user `gs` base is 0, so a
//! `gs:` read lands in the never-mapped first pages. A handler for every CPU fault signal
//! (`SIGSEGV`, `SIGILL`, `SIGTRAP`, `SIGFPE`, `SIGBUS`) installed when an image is mapped
//! decodes the faulting instruction with iced-x86 and, when its address is inside a mapped
//! image, emulates it with the IRQL and the time the loader keeps, writes the destination
//! register in the interrupted context and resumes after it. Anything else the image's code
//! raises — another privileged instruction, a read of a field the loader does not model, an
//! ordinary bad pointer, an invalid opcode (`ud2`), a breakpoint (`int3`), a divide error, a
//! bus error, or a call through a NULL or wild function pointer (a fetch fault outside every
//! image whose return address, at the faulting `rsp`, is in one) — stops the process with a
//! message naming the fault, the instruction and its place in the image (RVA, and the symbol
//! when the image has one) ([`super::state::stop`], exit code 86), never a signal. A fault
//! that is not the image's (outside every image, or a signal another process sent) goes to the
//! handler that was installed before (Rust's stack-overflow handler, a sanitizer's), or to the
//! default action. A call into the image that does not return in time is stopped the same way
//! ([`super::watch`]).
//!
//! Why a fault handler rather than patching the code at load time: [`WHY`].
//!
//! The handler runs on the thread that executed the instruction, synchronously: the interrupted
//! code is the image's, which holds none of the host's locks and is never inside the host's
//! allocator, so the handler may use them as any kernel routine does.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use iced_x86::{
    Code, Decoder, DecoderOptions, FlowControl, Formatter, Instruction, IntelFormatter, OpKind,
    Register,
};

use super::clock::{TIME_INCREMENT, interrupt_time, system_time, tick_count};
use super::irql::{self, DISPATCH_LEVEL, HIGH_LEVEL};
use super::processor::{self, PROCESSORS};
use super::state::{stop, violation};
use crate::layout::{kpcr, kuser_shared_data as kuser};

/// Why the loader emulates these instructions in a fault handler, for the generated table.
pub const WHY: &str = "In a Linux process each of these instructions faults: CR8 is inaccessible \
at CPL 3, the kernel half of the address space (where `KUSER_SHARED_DATA` is) is unmapped for \
user code, and the user `gs` base is 0, so a `gs:` read lands in the never-mapped first pages. \
The loader installs a handler for the CPU fault signals when it maps an image; for a fault inside an \
image it decodes the instruction with iced-x86, emulates it in the interrupted context with \
the IRQL and the time the loader keeps, and resumes after it. A fault handler rather than \
patching the code at load time, because the headers' `KUSER_SHARED_DATA` reads compute their \
address at run time (a constant in a register, an offset added), the instructions can be as \
short as 4 bytes (`mov rax, cr8`) so no jump fits in their place, and the image's bytes stay \
exactly those that ship. The cost is a signal per emulated instruction, microseconds, which a \
counters driver pays a few times per collection. The handler runs on the faulting thread's \
own stack (Rust's alternate signal stacks are too small to decode on in a debug build), so in \
a process with an image mapped a stack overflow ends with a plain `SIGSEGV` instead of Rust's \
message. Any other fault the image's code raises (`ud2`, `int3`, a divide error, a bad \
pointer, a call through a NULL or wild function pointer) stops the process (exit code 86) with \
a message naming the fault, the instruction and its address in the image; a fault that is not \
the image's goes to the handler installed before.";

/// Mapped images: `(start, end)` address pairs, 0 when free.
static RANGES: [(AtomicUsize, AtomicUsize); 8] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; 8];
/// Symbols of the mapped images, by image start: `(rva, name)` sorted by RVA.
static SYMBOLS: Mutex<Vec<(usize, Symbols)>> = Mutex::new(Vec::new());
/// An image's symbols: `(rva, name)`.
type Symbols = Vec<(u32, String)>;
/// The actions installed before ours, one per entry of [`SIGNALS`].
static PREVIOUS: OnceLock<[libc::sigaction; 5]> = OnceLock::new();
/// `REG_RIP`'s index in the saved registers.
const RIP: usize = libc::REG_RIP as usize;
/// `REG_RSP`'s index in the saved registers.
const RSP: usize = libc::REG_RSP as usize;
/// The signals the handler takes: every CPU fault a user-mode instruction can raise.
const SIGNALS: [libc::c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGFPE,
    libc::SIGBUS,
];

/// Instructions emulated since the image was loaded: CR8 reads, CR8 writes, `KUSER_SHARED_DATA`
/// loads, `gs:` loads.
static EMULATED: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// How many instructions of each emulated kind the image executed since it was loaded.
pub fn emulated() -> [(&'static str, usize); 4] {
    let n = |i: usize| EMULATED[i].load(Ordering::Relaxed);
    [
        ("mov r64, cr8", n(0)),
        ("mov cr8, r64", n(1)),
        ("KUSER_SHARED_DATA load", n(2)),
        ("gs: load", n(3)),
    ]
}

/// Starts the counts of [`emulated`] again.
pub(crate) fn reset_counts() {
    for c in &EMULATED {
        c.store(0, Ordering::Relaxed);
    }
}

fn count(kind: usize) {
    EMULATED[kind].fetch_add(1, Ordering::Relaxed);
}

/// One instruction form the loader emulates, for the generated table.
#[derive(Debug)]
pub struct Form {
    /// The instruction, as the headers produce it.
    pub instruction: &'static str,
    /// The header routine that inlines it.
    pub source: &'static str,
    /// What the emulation does.
    pub emulation: &'static str,
}

/// Every instruction form emulated: the one list of them.
pub static FORMS: &[Form] = &[
    Form {
        instruction: "`mov r64, cr8`",
        source: "`KeGetCurrentIrql`, `KeRaiseIrql`, `KeRaiseIrqlToDpcLevel`",
        emulation: "the register receives this thread's IRQL",
    },
    Form {
        instruction: "`mov cr8, r64`",
        source: "`KeRaiseIrql`, `KeLowerIrql`",
        emulation: "this thread's IRQL becomes the register's value; a value above 15, or \
                    going below `DISPATCH_LEVEL` while holding a spin lock, is flagged",
    },
    Form {
        instruction: "`mov`, `movzx`, `movsx`, `movsxd` of a general register from \
                      `KUSER_SHARED_DATA` (`0xFFFFF78000000000`)",
        source: "`KeQuerySystemTime`, `KeQueryInterruptTime`, `KeQueryTickCount`, \
                 `SharedUserData->…`",
        emulation: "the modelled fields, consistent within one read: `TickCountLowDeprecated`, \
                    `TickCountMultiplier`, `InterruptTime`, `SystemTime`, `TimeZoneBias` (0, \
                    UTC), `NtMajorVersion` (10), `NtMinorVersion` (0), `KdDebuggerEnabled` (0), \
                    `TickCount`, `ActiveProcessorCount` (4); a read touching any other byte \
                    stops the image, naming the offset",
    },
    Form {
        instruction: "`movd`, `movq`, `movups`, `movdqu`, `movaps`, `movdqa` of an XMM register \
                      from `KUSER_SHARED_DATA`",
        source: "a copy of a `KSYSTEM_TIME` or of several fields",
        emulation: "as the general-register reads (the upper bits zeroed as the instruction does)",
    },
    Form {
        instruction: "`mov`, `movzx` of a general register from `gs:[0x18]`, `gs:[0x20]`, \
                      `gs:[0x184]`, `gs:[0x188]`, `gs:[0x1A4]`",
        source: "`KeGetPcr`, `KeGetCurrentPrcb`, `KeGetCurrentProcessorNumber` (mingw-w64: \
                 `gs:[0x184]`, the WDK: `gs:[0x1A4]`), `KeGetCurrentThread`",
        emulation: "a per-thread KPCR block whose `Self`, `CurrentPrcb`, `Prcb.CurrentThread` (a \
                    per-thread zeroed block standing for the `KTHREAD`) and processor numbers \
                    (0–3) are real memory, so reads through the pointers are consistent; any \
                    other `gs:` offset stops the image, naming it",
    },
    Form {
        instruction: "every other privileged instruction (`cli`, `sti`, `hlt`, `rdmsr`, \
                      `wrmsr`, `in`, `out`, other control and debug registers, `invlpg`, …), \
                      `int 0x29` (`__fastfail`), `int 0x2c` (`NT_ASSERT`), and writes to \
                      `KUSER_SHARED_DATA` or through `gs:`",
        source: "",
        emulation: "not emulated: the process stops (exit code 86) with a message naming the \
                    instruction and its address in the image, as it does for any other fault \
                    of the image's code (`ud2`, `int3`, a divide error, a call through a NULL \
                    pointer)",
    },
];

/// Marks `start..start + len` as image code for the handler, installing the handler first;
/// `symbols` (`(rva, name)`) name the image's routines in the handler's messages.
pub(crate) fn register(start: usize, len: usize, mut symbols: Vec<(u32, String)>) {
    install();
    symbols.sort_unstable();
    {
        let mut all = SYMBOLS.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|(s, _)| *s != start);
        all.push((start, symbols));
    }
    for (s, e) in &RANGES {
        if s.compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            e.store(start + len, Ordering::Release);
            return;
        }
    }
}

/// Forgets the image at `start`.
pub(crate) fn unregister(start: usize) {
    SYMBOLS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|(s, _)| *s != start);
    for (s, e) in &RANGES {
        if s.load(Ordering::Acquire) == start {
            e.store(0, Ordering::Release);
            s.store(0, Ordering::Release);
        }
    }
}

/// Where `address` is in the image starting at `start`, for a message: `image+0x1234
/// (DriverEntry+0x4, 0x7f…)`, the symbol when the image has a symbol table (its routines and
/// exports) and the handler can look it up without waiting.
pub(crate) fn place(address: usize, start: usize, out: &mut impl core::fmt::Write) {
    let rva = address - start;
    let _ = write!(out, "image+{rva:#x} (");
    if let Ok(all) = SYMBOLS.try_lock()
        && let Some((_, symbols)) = all.iter().find(|(s, _)| *s == start)
        && let Some((at, name)) = symbols
            .iter()
            .take_while(|(at, _)| *at as usize <= rva)
            .last()
    {
        let _ = write!(out, "{name}+{:#x}, ", rva - *at as usize);
    }
    let _ = write!(out, "{address:#x})");
}

/// [`place`] as a string.
fn placed(address: usize, start: usize) -> String {
    let mut s = String::new();
    place(address, start, &mut s);
    s
}

/// The image range containing `address`.
pub(crate) fn image_of(address: usize) -> Option<(usize, usize)> {
    RANGES.iter().find_map(|(s, e)| {
        let (start, end) = (s.load(Ordering::Acquire), e.load(Ordering::Acquire));
        (start != 0 && (start..end).contains(&address)).then_some((start, end))
    })
}

/// Installs the handler for the fault [`SIGNALS`] once per process, keeping the previous
/// actions to pass other faults on to.
fn install() {
    PREVIOUS.get_or_init(|| {
        // SAFETY: zeroed `sigaction` structures are valid (empty masks, no flags); filled below.
        let mut previous: [libc::sigaction; 5] = unsafe { core::mem::zeroed() };
        for (signal, old) in SIGNALS.iter().zip(previous.iter_mut()) {
            *old = install_one(*signal, handler);
        }
        previous
    });
}

/// Installs `f` as the `SA_SIGINFO` handler of `signal` and returns the action it replaces.
pub(super) fn install_one(
    signal: libc::c_int,
    f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void),
) -> libc::sigaction {
    // SAFETY: zeroed `sigaction` structures are valid (empty masks, no flags); filled below.
    let mut action: libc::sigaction = unsafe { core::mem::zeroed() };
    // SAFETY: as above; `old` receives the previous action.
    let mut old: libc::sigaction = unsafe { core::mem::zeroed() };
    action.sa_sigaction = f as *const () as usize;
    action.sa_flags = libc::SA_SIGINFO;
    // SAFETY: empties a mask we own.
    unsafe { libc::sigemptyset(&raw mut action.sa_mask) };
    // SAFETY: installs a handler for `signal`; `old` receives the previous action.
    unsafe { libc::sigaction(signal, &raw const action, &raw mut old) };
    old
}

/// Hands a fault that is not the image's to the action installed before ours.
///
/// # Safety
/// The arguments of a signal handler invocation.
unsafe fn pass_on(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    let index = SIGNALS.iter().position(|s| *s == signal);
    let previous = PREVIOUS.get().zip(index).map(|(p, i)| p[i]);
    // SAFETY: this function's contract.
    unsafe { pass_on_to(previous, signal, info, context) };
}

/// Whether the kernel raised this signal for an instruction (a fault or a trap), rather than
/// a process sending it (`kill`, `raise`, `sigqueue`: `si_code` <= 0).
///
/// # Safety
/// `info` is a signal handler's `siginfo_t`.
pub(super) unsafe fn from_the_cpu(info: *const libc::siginfo_t) -> bool {
    // SAFETY: the kernel's siginfo for this signal (contract).
    unsafe { (*info).si_code > 0 }
}

/// Hands a signal to `previous`, the action installed before ours: its handler, or the default
/// action — restored, then the signal raised again (or, for a fault, the instruction
/// re-executed), which ends the process with the signal as it would have without us.
///
/// # Safety
/// The arguments of a signal handler invocation.
pub(super) unsafe fn pass_on_to(
    previous: Option<libc::sigaction>,
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut c_void,
) {
    match previous {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: a SA_SIGINFO handler, called as the kernel would call it.
                let f = unsafe {
                    core::mem::transmute::<
                        usize,
                        extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void),
                    >(p.sa_sigaction)
                };
                f(signal, info, context);
            } else {
                // SAFETY: a plain handler, called as the kernel would call it.
                let f = unsafe {
                    core::mem::transmute::<usize, extern "C" fn(libc::c_int)>(p.sa_sigaction)
                };
                f(signal);
            }
        }
        // An ignored signal that no instruction raised: ignored, as before us.
        // SAFETY: the handler's `info` (contract).
        Some(p) if p.sa_sigaction == libc::SIG_IGN && !unsafe { from_the_cpu(info) } => {}
        _ => {
            // The default action: restore it. A fault re-executes its instruction on return,
            // which faults again; a trap (`int3`) or a sent signal does not, so it is raised
            // again (blocked in this handler, delivered as it returns).
            // SAFETY: zeroed is SIG_DFL with an empty mask.
            let mut action: libc::sigaction = unsafe { core::mem::zeroed() };
            action.sa_sigaction = libc::SIG_DFL;
            // SAFETY: resets the action of the signal being handled.
            unsafe { libc::sigaction(signal, &raw const action, core::ptr::null_mut()) };
            // SAFETY: the handler's `info` (contract).
            if signal == libc::SIGTRAP || !unsafe { from_the_cpu(info) } {
                // SAFETY: raises the signal on this thread; pending until the handler returns.
                unsafe { libc::raise(signal) };
            }
        }
    }
}

/// Reads 8 bytes at `address` without faulting: `None` when they are not readable (or the
/// kernel refuses `process_vm_readv` on this process).
fn read_u64(address: usize) -> Option<u64> {
    let mut value = 0u64;
    let local = libc::iovec {
        iov_base: (&raw mut value).cast(),
        iov_len: 8,
    };
    let remote = libc::iovec {
        iov_base: address as *mut c_void,
        iov_len: 8,
    };
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    // SAFETY: copies 8 bytes of this process's memory into `value`; the kernel checks
    // `address` and fails with EFAULT instead of faulting.
    let n = unsafe { libc::process_vm_readv(pid, &raw const local, 1, &raw const remote, 1, 0) };
    (n == 8).then_some(value)
}

/// The `call` instruction that ends at `ret` in the image `start..end`, if one does.
fn call_before(ret: usize, start: usize, end: usize) -> Option<Instruction> {
    (2..=9).rev().find_map(|len| {
        let at = ret
            .checked_sub(len)
            .filter(|at| *at >= start && ret <= end)?;
        // SAFETY: `len` bytes of the image's mapping (inside `start..end`).
        let bytes = unsafe { core::slice::from_raw_parts(at as *const u8, len) };
        let instruction = Decoder::with_ip(64, bytes, at as u64, DecoderOptions::NONE).decode();
        (!instruction.is_invalid()
            && instruction.len() == len
            && matches!(
                instruction.flow_control(),
                FlowControl::Call | FlowControl::IndirectCall
            ))
        .then_some(instruction)
    })
}

/// A `SIGSEGV` at `rip` outside every image that is the image's own: an instruction fetch from
/// an address that is not mapped code (`si_addr` is `rip`) right after a call from the image
/// (the return address at the faulting `rsp` is in an image) — a call through a NULL or wild
/// function pointer. The message, or `None` for a fault that is not the image's.
fn wild_call(uc: &libc::ucontext_t, address: usize, rip: usize) -> Option<String> {
    if address != rip {
        return None;
    }
    let rsp = usize::try_from(uc.uc_mcontext.gregs[RSP].cast_unsigned()).ok()?;
    let ret = usize::try_from(read_u64(rsp)?).ok()?;
    let (start, end) = image_of(ret).or_else(|| image_of(ret.wrapping_sub(1)))?;
    Some(match call_before(ret, start, end) {
        Some(call) => {
            let mut text = String::new();
            IntelFormatter::new().format(&call, &mut text);
            format!(
                "`{text}` at {}: call to address {rip:#x}, which is not mapped code",
                placed(usize::try_from(call.ip()).unwrap_or(0), start)
            )
        }
        None => format!(
            "call to address {rip:#x}, which is not mapped code, returning to {}",
            placed(ret, start)
        ),
    })
}

/// What a `SIGFPE`'s `si_code` says (Linux's `FPE_*` values, which the libc crate lacks).
fn arithmetic(code: libc::c_int) -> &'static str {
    match code {
        1 => "divide error (an integer division by zero, or a quotient too large)", // FPE_INTDIV
        2 => "integer overflow",                                                    // FPE_INTOVF
        3 => "floating-point exception (division by zero)",                         // FPE_FLTDIV
        4 => "floating-point exception (overflow)",                                 // FPE_FLTOVF
        5 => "floating-point exception (underflow)",                                // FPE_FLTUND
        6 => "floating-point exception (inexact result)",                           // FPE_FLTRES
        7 => "floating-point exception (invalid operation)",                        // FPE_FLTINV
        _ => "arithmetic exception",
    }
}

/// The instruction at `at` in the image `start..end`, decoded.
fn decode_at(at: usize, end: usize) -> Instruction {
    // SAFETY: up to 15 bytes of the image's code at `at`, inside its mapping (bounded by its
    // end).
    let bytes = unsafe { core::slice::from_raw_parts(at as *const u8, (end - at).min(15)) };
    Decoder::with_ip(64, bytes, at as u64, DecoderOptions::NONE).decode()
}

extern "C" fn handler(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: the kernel passes the interrupted thread's `ucontext_t` to a SA_SIGINFO handler.
    let uc = unsafe { &mut *context.cast::<libc::ucontext_t>() };
    let rip = usize::try_from(uc.uc_mcontext.gregs[RIP].cast_unsigned()).unwrap_or(0);
    // SAFETY: the handler's own `info`.
    if !unsafe { from_the_cpu(info) } {
        // Sent by a process, not raised by an instruction: not the image's.
        // SAFETY: this handler's own arguments.
        unsafe { pass_on(signal, info, context) };
        return;
    }
    // SAFETY: the kernel's siginfo for this fault.
    let siginfo = unsafe { &*info };
    let code = siginfo.si_code;
    // SAFETY: a fault's siginfo carries `si_addr`, the faulting address (0 for a #GP).
    let address = unsafe { siginfo.si_addr() } as usize;
    // A trap reports the address after the instruction (`int3`'s next byte).
    let at = if signal == libc::SIGTRAP {
        rip.wrapping_sub(1)
    } else {
        rip
    };
    let Some((start, end)) = image_of(at) else {
        if signal == libc::SIGSEGV
            && let Some(message) = wild_call(uc, address, rip)
        {
            stop(&message);
        }
        // SAFETY: this handler's own arguments.
        unsafe { pass_on(signal, info, context) };
        return;
    };
    let named = |instruction: &Instruction, reason: &str| -> ! {
        let mut text = String::new();
        IntelFormatter::new().format(instruction, &mut text);
        stop(&format!(
            "`{text}` at {}: {reason}",
            placed(usize::try_from(instruction.ip()).unwrap_or(0), start)
        ))
    };
    match signal {
        libc::SIGTRAP => {
            // `int3` (0xCC) just executed, or `int 3` (CD 03), or a single step.
            let int3 = decode_at(at, end);
            if int3.code() == Code::Int3 {
                named(&int3, "breakpoint (int3)");
            }
            if let Some(int_3) = rip
                .checked_sub(2)
                .filter(|a| *a >= start)
                .map(|a| decode_at(a, end))
                .filter(|i| i.code() == Code::Int_imm8 && i.immediate8() == 3)
            {
                named(&int_3, "breakpoint (int 3)");
            }
            stop(&format!(
                "a trap (single step or debug exception) before {}",
                placed(rip.min(end - 1), start)
            ));
        }
        libc::SIGFPE => named(&decode_at(rip, end), arithmetic(code)),
        libc::SIGBUS => named(
            &decode_at(rip, end),
            &format!(
                "bus error{} (fault address {address:#x})",
                if code == libc::BUS_ADRALN {
                    ", a misaligned access"
                } else {
                    ""
                }
            ),
        ),
        _ => {}
    }
    let instruction = decode_at(rip, end);
    if signal == libc::SIGILL && !instruction.is_privileged() {
        named(&instruction, "invalid opcode");
    }
    match emulate(&instruction, uc) {
        Ok(()) => {
            uc.uc_mcontext.gregs[RIP] = instruction.next_ip().cast_signed();
        }
        Err(reason) => named(
            &instruction,
            &format!("{reason} (fault address {address:#x})"),
        ),
    }
}

/// A general register's slot in the interrupted context, its width in bytes and bit shift.
fn gpr_slot(register: Register) -> Option<(usize, usize, u32)> {
    let full = register.full_register();
    let index = match full {
        Register::RAX => libc::REG_RAX,
        Register::RBX => libc::REG_RBX,
        Register::RCX => libc::REG_RCX,
        Register::RDX => libc::REG_RDX,
        Register::RSI => libc::REG_RSI,
        Register::RDI => libc::REG_RDI,
        Register::RBP => libc::REG_RBP,
        Register::RSP => libc::REG_RSP,
        Register::R8 => libc::REG_R8,
        Register::R9 => libc::REG_R9,
        Register::R10 => libc::REG_R10,
        Register::R11 => libc::REG_R11,
        Register::R12 => libc::REG_R12,
        Register::R13 => libc::REG_R13,
        Register::R14 => libc::REG_R14,
        Register::R15 => libc::REG_R15,
        _ => return None,
    };
    let shift = if matches!(
        register,
        Register::AH | Register::BH | Register::CH | Register::DH
    ) {
        8
    } else {
        0
    };
    Some((usize::try_from(index).ok()?, register.size(), shift))
}

fn read_gpr(uc: &libc::ucontext_t, register: Register) -> Option<u64> {
    let (index, size, shift) = gpr_slot(register)?;
    let full = uc.uc_mcontext.gregs[index].cast_unsigned();
    let mask = if size == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    };
    Some((full >> shift) & mask)
}

/// Writes `value` to a general register as an instruction does: a 32-bit write zero-extends, 8-
/// and 16-bit writes keep the other bits.
fn write_gpr(uc: &mut libc::ucontext_t, register: Register, value: u64) -> Result<(), String> {
    let (index, size, shift) =
        gpr_slot(register).ok_or_else(|| format!("`{register:?}` is not a general register"))?;
    let old = uc.uc_mcontext.gregs[index].cast_unsigned();
    let new = match size {
        8 => value,
        4 => value & 0xFFFF_FFFF,
        _ => {
            let mask = ((1u64 << (8 * size)) - 1) << shift;
            (old & !mask) | ((value << shift) & mask)
        }
    };
    uc.uc_mcontext.gregs[index] = new.cast_signed();
    Ok(())
}

/// Writes `bytes` (up to 16) to an XMM register, zeroing the rest of it.
fn write_xmm(uc: &mut libc::ucontext_t, register: Register, bytes: &[u8]) -> Result<(), String> {
    let n = register.number();
    if !register.is_xmm() || n >= 16 {
        return Err(format!(
            "`{register:?}` is not an XMM register the context holds"
        ));
    }
    let mut value = [0u8; 16];
    value[..bytes.len()].copy_from_slice(bytes);
    let fp = uc.uc_mcontext.fpregs;
    if fp.is_null() {
        return Err("the signal context has no floating-point state".into());
    }
    let mut element = [0u32; 4];
    for (k, e) in element.iter_mut().enumerate() {
        *e = u32::from_le_bytes([
            value[4 * k],
            value[4 * k + 1],
            value[4 * k + 2],
            value[4 * k + 3],
        ]);
    }
    // SAFETY: the interrupted thread's saved FPU/SSE state, which the kernel restores on return.
    unsafe { (*fp)._xmm[n].element = element };
    Ok(())
}

std::thread_local! {
    /// This thread's KPCR as the image sees it through `gs:` (and through `KeGetPcr`'s pointer).
    static KPCR: UnsafeCell<[u64; kpcr::SIZE / 8]> = const { UnsafeCell::new([0; kpcr::SIZE / 8]) };
    /// What stands for this thread's `KTHREAD`: zeroed memory with a stable address.
    static KTHREAD: UnsafeCell<[u64; 0x100]> = const { UnsafeCell::new([0; 0x100]) };
}

/// The modelled bytes of `KUSER_SHARED_DATA`: each field's offset and value.
fn kuser_fields() -> Vec<(usize, Vec<u8>)> {
    let ksystem_time = |v: u64| {
        let mut b = v.to_le_bytes().to_vec();
        b.extend_from_slice(&v.to_le_bytes()[4..]);
        b
    };
    let ticks = tick_count();
    vec![
        (
            kuser::TICK_COUNT_LOW_DEPRECATED,
            ticks.to_le_bytes()[..4].to_vec(),
        ),
        (
            kuser::TICK_COUNT_MULTIPLIER,
            ((u64::from(TIME_INCREMENT) << 24) / 10_000).to_le_bytes()[..4].to_vec(),
        ),
        (kuser::INTERRUPT_TIME, ksystem_time(interrupt_time())),
        (kuser::SYSTEM_TIME, ksystem_time(system_time())),
        (kuser::TIME_ZONE_BIAS, ksystem_time(0)),
        (kuser::NT_MAJOR_VERSION, 10u32.to_le_bytes().to_vec()),
        (kuser::NT_MINOR_VERSION, 0u32.to_le_bytes().to_vec()),
        (kuser::KD_DEBUGGER_ENABLED, vec![0]),
        (kuser::TICK_COUNT, ksystem_time(ticks)),
        (
            kuser::ACTIVE_PROCESSOR_COUNT,
            PROCESSORS.to_le_bytes().to_vec(),
        ),
    ]
}

/// `len` bytes of `KUSER_SHARED_DATA` at `offset`, all of them modelled.
fn kuser_read(offset: usize, len: usize) -> Result<Vec<u8>, String> {
    let fields = kuser_fields();
    (offset..offset + len)
        .map(|at| {
            fields
                .iter()
                .find_map(|(start, bytes)| {
                    at.checked_sub(*start).and_then(|k| bytes.get(k)).copied()
                })
                .ok_or_else(|| {
                    format!(
                        "a read of KUSER_SHARED_DATA+{offset:#x} ({len} bytes) touches +{at:#x}, \
                         which the loader does not model"
                    )
                })
        })
        .collect()
}

/// `len` bytes of this thread's KPCR at `offset`, all within the modelled fields.
fn gs_read(offset: usize, len: usize) -> Result<Vec<u8>, String> {
    let base = KPCR.with(|k| k.get() as usize);
    let thread = KTHREAD.with(|k| k.get() as usize);
    let number = processor::current();
    let fields: [(usize, Vec<u8>); 5] = [
        (kpcr::SELF, (base as u64).to_le_bytes().to_vec()),
        (
            kpcr::CURRENT_PRCB,
            ((base + kpcr::PRCB) as u64).to_le_bytes().to_vec(),
        ),
        // LegacyNumber and the byte after it (ReservedMustBeZero), read as a word by mingw-w64.
        (kpcr::LEGACY_NUMBER, vec![number.to_le_bytes()[0], 0]),
        (kpcr::CURRENT_THREAD, (thread as u64).to_le_bytes().to_vec()),
        (kpcr::NUMBER, number.to_le_bytes().to_vec()),
    ];
    // Keep the block itself in step, for reads through `Self` or `CurrentPrcb`.
    for (at, bytes) in &fields {
        // SAFETY: this thread's own KPCR block, `kpcr::SIZE` bytes; every field lies inside it.
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), (base + at) as *mut u8, bytes.len());
        }
    }
    (offset..offset + len)
        .map(|at| {
            fields
                .iter()
                .find_map(|(start, bytes)| {
                    at.checked_sub(*start).and_then(|k| bytes.get(k)).copied()
                })
                .ok_or_else(|| {
                    format!(
                        "a read of gs:[{offset:#x}] ({len} bytes) touches KPCR+{at:#x}, which \
                         the loader does not model"
                    )
                })
        })
        .collect()
}

/// Sign- or zero-extends `bytes` (little-endian) to 64 bits.
fn extend(bytes: &[u8], signed: bool) -> u64 {
    let mut v = [0u8; 8];
    v[..bytes.len()].copy_from_slice(bytes);
    let raw = u64::from_le_bytes(v);
    let bits = 8 * u32::try_from(bytes.len()).unwrap_or(8);
    if signed && bits < 64 && raw >> (bits - 1) & 1 == 1 {
        raw | (u64::MAX << bits)
    } else {
        raw
    }
}

/// Emulates `instruction` in the interrupted context `uc`, or says why not.
fn emulate(instruction: &Instruction, uc: &mut libc::ucontext_t) -> Result<(), String> {
    if emulate_privileged(instruction, uc)? {
        return Ok(());
    }
    emulate_load(instruction, uc)
}

/// The CR8 moves and the software interrupts: `Ok(true)` when emulated, `Ok(false)` when
/// `instruction` is none of them.
fn emulate_privileged(
    instruction: &Instruction,
    uc: &mut libc::ucontext_t,
) -> Result<bool, String> {
    match instruction.code() {
        Code::Mov_r64_cr if instruction.op1_register() == Register::CR8 => {
            write_gpr(uc, instruction.op0_register(), u64::from(irql::current()))?;
            count(0);
            return Ok(true);
        }
        Code::Mov_cr_r64 if instruction.op0_register() == Register::CR8 => {
            let value = read_gpr(uc, instruction.op1_register()).unwrap_or(0);
            if value > u64::from(HIGH_LEVEL) {
                violation(
                    "mov cr8",
                    format!("IRQL {value} written to CR8 (reserved bits set)"),
                );
            }
            let new = (value & 0xF) as u8;
            if new < DISPATCH_LEVEL && irql::spin_locks_held() > 0 {
                violation(
                    "mov cr8",
                    format!(
                        "IRQL lowered to {} while holding {} spin lock(s)",
                        irql::name(new),
                        irql::spin_locks_held()
                    ),
                );
            }
            irql::set(new);
            count(1);
            return Ok(true);
        }
        Code::Int_imm8 if instruction.immediate8() == 0x29 => {
            let code = read_gpr(uc, Register::RCX).unwrap_or(0);
            return Err(format!("`__fastfail({code:#x})`"));
        }
        Code::Int_imm8 if instruction.immediate8() == 0x2C => {
            return Err("an assertion failed (`NT_ASSERT`)".into());
        }
        _ if instruction.is_privileged() => {
            return Err("a privileged instruction the loader does not emulate".into());
        }
        _ => {}
    }
    Ok(false)
}

/// A load from `KUSER_SHARED_DATA` or through `gs:` into a register.
fn emulate_load(instruction: &Instruction, uc: &mut libc::ucontext_t) -> Result<(), String> {
    let memory = (0..instruction.op_count()).find(|&k| instruction.op_kind(k) == OpKind::Memory);
    let Some(operand) = memory else {
        return Err("an instruction the loader does not emulate".into());
    };
    let gs = instruction.memory_segment() == Register::GS;
    let address = instruction
        .virtual_address(operand, 0, |register, _, _| {
            if register.is_segment_register() {
                Some(0)
            } else {
                read_gpr(uc, register)
            }
        })
        .ok_or("its address could not be computed")?;
    let len = instruction.memory_size().size();
    let in_kuser = (kuser::ADDRESS..kuser::ADDRESS + kuser::SIZE as u64).contains(&address);
    if !gs && !in_kuser {
        return Err("a fault in the image (not a read the loader emulates)".into());
    }
    let area = if gs { "gs:" } else { "KUSER_SHARED_DATA" };
    if operand != 1 || instruction.op_kind(0) != OpKind::Register {
        return Err(format!(
            "only loads into a register from {area} are emulated, not this access"
        ));
    }
    let bytes = if gs {
        gs_read(usize::try_from(address).unwrap_or(usize::MAX), len)?
    } else {
        kuser_read(
            usize::try_from(address - kuser::ADDRESS).unwrap_or(usize::MAX),
            len,
        )?
    };
    let target = instruction.op0_register();
    count(if gs { 3 } else { 2 });
    match instruction.code() {
        Code::Mov_r64_rm64
        | Code::Mov_r32_rm32
        | Code::Mov_r16_rm16
        | Code::Mov_r8_rm8
        | Code::Mov_RAX_moffs64
        | Code::Mov_EAX_moffs32
        | Code::Mov_AX_moffs16
        | Code::Mov_AL_moffs8
        | Code::Movzx_r16_rm8
        | Code::Movzx_r32_rm8
        | Code::Movzx_r64_rm8
        | Code::Movzx_r16_rm16
        | Code::Movzx_r32_rm16
        | Code::Movzx_r64_rm16 => write_gpr(uc, target, extend(&bytes, false)),
        Code::Movsx_r16_rm8
        | Code::Movsx_r32_rm8
        | Code::Movsx_r64_rm8
        | Code::Movsx_r16_rm16
        | Code::Movsx_r32_rm16
        | Code::Movsx_r64_rm16
        | Code::Movsxd_r64_rm32
        | Code::Movsxd_r32_rm32 => write_gpr(uc, target, extend(&bytes, true)),
        Code::Movd_xmm_rm32
        | Code::Movq_xmm_rm64
        | Code::Movq_xmm_xmmm64
        | Code::Movups_xmm_xmmm128
        | Code::Movupd_xmm_xmmm128
        | Code::Movdqu_xmm_xmmm128
        | Code::Movaps_xmm_xmmm128
        | Code::Movapd_xmm_xmmm128
        | Code::Movdqa_xmm_xmmm128 => write_xmm(uc, target, &bytes),
        _ => Err(format!(
            "only `mov`/`movzx`/`movsx`/`movsxd` and SSE moves from {area} are emulated"
        )),
    }
}
