// SPDX-License-Identifier: MIT OR Apache-2.0
//! Kernel constraints of the cross-built driver: stack frames and floating point.
//!
//! **Stack.** Every function's fixed frame is read from its x64 unwind information (the
//! `PUSH_NONVOL`/`ALLOC_*` codes of its `.pdata` entry, what the kernel's unwinder relies on),
//! cross-checked against the prologue's own `push`/`sub rsp, N`, plus 8 bytes of return address.
//! A `__chkstk` call (frames of a page or more) or a `sub rsp, <register>` (a dynamic
//! allocation) is a finding. For each root the call graph is walked ([`Graph::calls`]: call,
//! tail-jump and fall-through edges; an address taken is not a nested call) for the largest
//! frame and the deepest chain; a cycle (recursion) makes the depth unbounded. The check FAILS
//! when any function reachable from a root — the PCW callbacks, `DriverEntry`, the IRP
//! dispatch and unload routines it installs (every function whose address it takes) — has a
//! frame over the limit (1 KiB, the WDK code analysis threshold C6262) or a root's chain is
//! unbounded, and when a root is missing. The x64 kernel stack is 24 KiB, shared with whoever
//! called PCW: the callbacks run on the stack of the thread that queried the counters.
//!
//! **Floating point.** "Using Floating Point in a WDM Driver" (Microsoft Learn): on x64 kernel
//! code must not touch the x87/MMX registers; SSE needs no state saving; AVX (any VEX/EVEX/XOP
//! encoded instruction, YMM/ZMM/mask registers) needs `KeSaveExtendedProcessorState`. So the
//! check FAILS on any x87, MMX, 3DNow! or AVX instruction and on FP state manipulation
//! (`ldmxcsr`, `fxsave`, `xsave`, `emms`…) anywhere in the image, and on SSE floating-point
//! arithmetic or conversion (`addsd`, `cvtsi2sd`, `ucomiss`…): the driver computes nothing in
//! floating point, so one means a float path crept in. SSE as the compiler uses it to copy and
//! zero memory (`movups`, `xorps`, `movq`, shuffles) is counted and allowed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use iced_x86::{
    CpuidFeature, EncodingKind, Formatter as _, Instruction, IntelFormatter, Mnemonic, OpKind,
    Register,
};

use crate::code::{AnalysisError, Graph, Program};

/// The per-frame limit: the WDK's C6262 threshold for kernel-mode code.
pub const FRAME_LIMIT: u64 = 1024;

/// Roots: (title, a substring of the mangled name). The routines `DriverEntry` installs are
/// added to these.
pub const ROOTS: &[(&str, &str)] = &[
    // pcw-rt's safe callback, once per counterset registered with `register_publisher`.
    (
        "pcw_rt::callback (PCW callbacks)",
        "6pcw_rt7publish8callback",
    ),
    ("DriverEntry", "DriverEntry"),
    (
        "control::device_control",
        "10pcw_driver7control14device_control",
    ),
    ("lifecycle::unload", "10pcw_driver9lifecycle6unload"),
];

const UWOP_PUSH_NONVOL: u8 = 0;
const UWOP_ALLOC_LARGE: u8 = 1;
const UWOP_ALLOC_SMALL: u8 = 2;
const UWOP_SAVE_NONVOL: u8 = 4;
const UWOP_SAVE_NONVOL_FAR: u8 = 5;
const UWOP_SAVE_XMM128: u8 = 8;
const UWOP_SAVE_XMM128_FAR: u8 = 9;
const UWOP_PUSH_MACHFRAME: u8 = 10;
const UNW_FLAG_CHAININFO: u8 = 4;

/// The bytes a function's prologue pushes and allocates, from its unwind information (`None`
/// without a `.pdata` entry: a leaf that does not move RSP).
///
/// # Errors
/// [`AnalysisError::Unwind`] when the unwind information is not in the image.
pub fn unwind_frame(program: &Program, f: u64) -> Result<Option<u64>, AnalysisError> {
    let Some(entry) = program.pdata.iter().find(|p| p.begin == f) else {
        return Ok(None);
    };
    let bad = || AnalysisError::Unwind(f);
    let mut size = 0u64;
    let mut u = entry.unwind;
    for _ in 0..32 {
        let hdr = program.read(u, 4).ok_or_else(bad)?;
        let (flags, count) = (hdr[0] >> 3, usize::from(hdr[2]));
        let codes = program.read(u + 4, 2 * count).ok_or_else(bad)?;
        let slot = |k: usize| -> Result<u64, AnalysisError> {
            let b = codes.get(2 * k..2 * k + 2).ok_or_else(bad)?;
            Ok(u64::from(u16::from_le_bytes([b[0], b[1]])))
        };
        let mut j = 0;
        while j < count {
            let byte = codes[2 * j + 1];
            let (op, info) = (byte & 0xF, byte >> 4);
            match op {
                UWOP_PUSH_NONVOL => size += 8,
                UWOP_ALLOC_LARGE if info == 0 => {
                    size += slot(j + 1)? * 8;
                    j += 1;
                }
                UWOP_ALLOC_LARGE => {
                    size += slot(j + 1)? | (slot(j + 2)? << 16);
                    j += 2;
                }
                UWOP_ALLOC_SMALL => size += u64::from(info) * 8 + 8,
                UWOP_SAVE_NONVOL | UWOP_SAVE_XMM128 => j += 1,
                UWOP_SAVE_NONVOL_FAR | UWOP_SAVE_XMM128_FAR => j += 2,
                UWOP_PUSH_MACHFRAME => size += if info == 0 { 40 } else { 48 },
                _ => {}
            }
            j += 1;
        }
        if flags & UNW_FLAG_CHAININFO == 0 {
            return Ok(Some(size));
        }
        // Chained: the parent RUNTIME_FUNCTION follows the (even-padded) codes.
        let off = u + 4 + 2 * (count as u64 + (count as u64 & 1));
        let parent = program.read(off + 8, 4).ok_or_else(bad)?;
        let rva = u32::from_le_bytes([parent[0], parent[1], parent[2], parent[3]]);
        u = program.image_base + u64::from(rva);
    }
    Err(bad())
}

/// What a function's prologue does to the stack.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prologue {
    /// Bytes pushed and subtracted from RSP.
    pub size: u64,
    /// It calls `__chkstk`.
    pub chkstk: bool,
    /// It subtracts a register from RSP.
    pub dynamic: bool,
}

/// Reads `f`'s prologue: `push`es, `mov eax, N` then `sub rsp, rax` (the `__chkstk` pattern),
/// `sub rsp, N`.
pub fn prologue(g: &Graph<'_>, f: u64) -> Prologue {
    let mut out = Prologue::default();
    let mut pending_eax = None;
    let insns = g.insns.get(&f).map_or(&[][..], |v| &v[..]);
    let is_chkstk = |ins: &Instruction| {
        ins.mnemonic() == Mnemonic::Call
            && ins.op0_kind() == OpKind::NearBranch64
            && g.owner(ins.near_branch_target())
                .is_some_and(|t| g.program.label(t).contains("chkstk"))
    };
    for (i, ins) in insns.iter().enumerate() {
        match ins.mnemonic() {
            Mnemonic::Push => out.size += 8,
            Mnemonic::Sub if ins.op0_register() == Register::RSP => {
                if ins.op1_kind() == OpKind::Register {
                    out.dynamic = true;
                    out.size += pending_eax.unwrap_or(0);
                } else {
                    out.size += ins.immediate(1);
                }
                break;
            }
            Mnemonic::Mov
                if matches!(ins.op0_register(), Register::EAX | Register::RAX)
                    && matches!(
                        ins.op1_kind(),
                        OpKind::Immediate32 | OpKind::Immediate32to64
                    ) =>
            {
                pending_eax = Some(ins.immediate(1));
            }
            Mnemonic::Mov | Mnemonic::Lea if ins.op0_register() == Register::RBP => {}
            _ if is_chkstk(ins) => out.chkstk = true,
            _ if i > 12 => break,
            _ => {}
        }
    }
    for ins in insns {
        if ins.mnemonic() == Mnemonic::Sub
            && ins.op0_register() == Register::RSP
            && ins.op1_kind() == OpKind::Register
        {
            out.dynamic = true;
        }
        if is_chkstk(ins) {
            out.chkstk = true;
        }
    }
    out
}

/// A function's frame and what was noticed about it.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Unwind-info frame (prologue's without unwind info) plus the return address.
    pub bytes: u64,
    /// Findings: `__chkstk`, dynamic allocation (errors when reachable from a root).
    pub findings: Vec<String>,
    /// The prologue disagrees with the unwind information (a note).
    pub mismatch: Option<(u64, u64)>,
}

/// Every function's frame.
///
/// # Errors
/// [`AnalysisError::Unwind`] when a function's unwind information cannot be read.
pub fn frames(g: &Graph<'_>) -> Result<BTreeMap<u64, Frame>, AnalysisError> {
    let mut out = BTreeMap::new();
    for &f in &g.starts {
        let pro = prologue(g, f);
        let mut frame = Frame::default();
        let unwind = match unwind_frame(g.program, f)? {
            None => pro.size,
            Some(u) => {
                if u != pro.size {
                    frame.mismatch = Some((pro.size, u));
                }
                u
            }
        };
        if pro.chkstk {
            frame.findings.push("calls __chkstk".into());
        }
        if pro.dynamic {
            frame
                .findings
                .push("dynamic stack allocation (sub rsp, reg)".into());
        }
        frame.bytes = unwind + 8;
        out.insert(f, frame);
    }
    Ok(out)
}

/// The deepest chain from `root` over [`Graph::calls`]: `Ok((bytes, chain))`, or `Err(cycle
/// member)` when a call chain is recursive.
///
/// # Errors
/// A function on a cycle of [`Graph::calls`] reachable from `root`.
pub fn depth(
    g: &Graph<'_>,
    root: u64,
    frames: &BTreeMap<u64, Frame>,
) -> Result<(u64, Vec<u64>), u64> {
    fn go(
        g: &Graph<'_>,
        f: u64,
        frames: &BTreeMap<u64, Frame>,
        memo: &mut BTreeMap<u64, (u64, Vec<u64>)>,
        on_stack: &mut BTreeSet<u64>,
    ) -> Result<(u64, Vec<u64>), u64> {
        if let Some(m) = memo.get(&f) {
            return Ok(m.clone());
        }
        if !on_stack.insert(f) {
            return Err(f);
        }
        let mut best = (0, vec![]);
        for &callee in g.calls.get(&f).into_iter().flatten() {
            let d = go(g, callee, frames, memo, on_stack)?;
            if d.0 > best.0 {
                best = d;
            }
        }
        on_stack.remove(&f);
        let mut chain = vec![f];
        chain.extend(best.1);
        let r = (frames.get(&f).map_or(0, |x| x.bytes) + best.0, chain);
        memo.insert(f, r.clone());
        Ok(r)
    }
    go(g, root, frames, &mut BTreeMap::new(), &mut BTreeSet::new())
}

/// One root's stack figures.
#[derive(Clone, Debug)]
pub struct RootStack {
    /// The root's title.
    pub title: String,
    /// Functions reachable (over all edges).
    pub reachable: usize,
    /// The largest frame reachable and its function (demangled).
    pub largest: (u64, String),
    /// The deepest chain's bytes and functions, or `None` when recursive.
    pub deepest: Option<(u64, Vec<String>)>,
}

/// The result of the kernel-constraints check.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Functions in the image.
    pub functions: usize,
    /// The largest frames in the image: (bytes, function, notes).
    pub largest: Vec<(u64, String, Vec<String>)>,
    /// Per-root stack figures.
    pub roots: Vec<RootStack>,
    /// Prologue/unwind disagreements (notes, not failures).
    pub notes: Vec<String>,
    /// SSE data-movement instructions (allowed).
    pub sse_data: usize,
    /// SSE floating-point arithmetic instructions (each also a failure).
    pub sse_float: usize,
    /// Everything that fails the check.
    pub failures: Vec<String>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "driver: {} functions; stack frame = prologue pushes + allocation + return address",
            self.functions
        )?;
        writeln!(f, "largest frames in the image:")?;
        for (b, n, notes) in &self.largest {
            write!(f, "  {b:6} B  {n}")?;
            for note in notes {
                write!(f, "  [{note}]")?;
            }
            writeln!(f)?;
        }
        for r in &self.roots {
            write!(
                f,
                "{}: {} functions reachable; largest frame {} B in {}; deepest chain ",
                r.title, r.reachable, r.largest.0, r.largest.1
            )?;
            match &r.deepest {
                Some((b, chain)) => writeln!(f, "{b} B: {}", chain.join(" -> "))?,
                None => writeln!(f, "UNBOUNDED (recursion)")?,
            }
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        let wide = self
            .failures
            .iter()
            .any(|x| x.starts_with("x87") || x.starts_with("MMX") || x.starts_with("AVX"));
        writeln!(
            f,
            "floating point: {} SSE data-movement instructions (copies, zeroing: allowed on \
             x64); {} SSE floating-point instructions; x87/MMX/AVX: {}",
            self.sse_data,
            self.sse_float,
            if wide { "FOUND" } else { "none" }
        )?;
        if self.failures.is_empty() {
            writeln!(f, "kernel constraints hold")?;
        } else {
            writeln!(f, "FAILED: {} finding(s)", self.failures.len())?;
            for x in &self.failures {
                writeln!(f, "  {x}")?;
            }
        }
        Ok(())
    }
}

/// How many of the largest frames the report lists (all with `all`).
const LARGEST_SHOWN: usize = 5;

/// Checks the driver program (names from its PDB) with per-frame `limit`.
///
/// # Errors
/// [`AnalysisError::Unwind`] when unwind information cannot be read.
pub fn check(
    program: &Program,
    roots: &[(&str, &str)],
    limit: u64,
    all: bool,
) -> Result<Report, AnalysisError> {
    let g = Graph::build(program);
    let frames = frames(&g)?;
    let mut r = Report {
        functions: g.starts.len(),
        ..Report::default()
    };
    let bytes = |f: u64| frames.get(&f).map_or(0, |x| x.bytes);
    let mut biggest: Vec<u64> = g.starts.clone();
    biggest.sort_by_key(|&f| std::cmp::Reverse(bytes(f)));
    for &f in biggest
        .iter()
        .take(if all { usize::MAX } else { LARGEST_SHOWN })
    {
        let notes = frames
            .get(&f)
            .map(|x| x.findings.clone())
            .unwrap_or_default();
        r.largest.push((bytes(f), program.pretty(f), notes));
    }
    let mut rooted: Vec<(String, u64)> = vec![];
    for &(title, needle) in roots {
        let found = program.find(needle);
        if found.is_empty() {
            r.failures.push(format!(
                "{title}: not found in the image (renamed, inlined or stripped)"
            ));
        }
        rooted.extend(found.into_iter().map(|a| (title.to_owned(), a)));
    }
    for entry in program.find("DriverEntry") {
        for &f in g.address_taken.get(&entry).into_iter().flatten() {
            rooted.push((
                format!("routine installed by DriverEntry: {}", program.pretty(f)),
                f,
            ));
        }
    }
    for (title, root) in rooted {
        let reach = g.reach(&[root], &g.edges, &|_| false);
        let top = reach
            .order
            .iter()
            .copied()
            .max_by_key(|&f| (bytes(f), std::cmp::Reverse(f)))
            .unwrap_or(root);
        let deepest = match depth(&g, root, &frames) {
            Ok((b, chain)) => Some((b, chain.into_iter().map(|f| program.pretty(f)).collect())),
            Err(cycle) => {
                r.failures.push(format!(
                    "{title}: recursive call chain through {}, stack depth unbounded",
                    program.pretty(cycle)
                ));
                None
            }
        };
        for &f in &reach.order {
            let frame = frames.get(&f).cloned().unwrap_or_default();
            if frame.bytes > limit || !frame.findings.is_empty() {
                let mut msg = format!("{title}: {}: frame {} B", program.pretty(f), frame.bytes);
                if frame.bytes > limit {
                    let _ = write!(msg, " > {limit} B");
                }
                for x in &frame.findings {
                    let _ = write!(msg, "; {x}");
                }
                r.failures.push(msg);
            }
        }
        r.roots.push(RootStack {
            title,
            reachable: reach.order.len(),
            largest: (bytes(top), program.pretty(top)),
            deepest,
        });
    }
    for (&f, frame) in &frames {
        if let Some((pro, unwind)) = frame.mismatch {
            r.notes.push(format!(
                "{}: prologue {pro} B != unwind info {unwind} B",
                program.pretty(f)
            ));
        }
    }
    floating_point(&g, &mut r);
    Ok(r)
}

/// Classifies every instruction of the image (see the module docs).
fn floating_point(g: &Graph<'_>, r: &mut Report) {
    let mut fmt = IntelFormatter::new();
    for (&f, insns) in &g.insns {
        for ins in insns {
            let class = classify(ins);
            if class == FpClass::None {
                continue;
            }
            if class == FpClass::SseData {
                r.sse_data += 1;
                continue;
            }
            let mut text = String::new();
            fmt.format(ins, &mut text);
            let what = format!("{} at {:#x}: {text}", g.program.pretty(f), ins.ip());
            let msg = match class {
                FpClass::State => format!("FP state instruction in {what}"),
                FpClass::X87 => format!("x87 instruction in {what}"),
                FpClass::Mmx => format!("MMX register in {what}"),
                FpClass::Avx => format!(
                    "AVX (VEX/EVEX, YMM/ZMM) instruction in {what} (needs \
                     KeSaveExtendedProcessorState)"
                ),
                FpClass::SseFloat => {
                    r.sse_float += 1;
                    format!("SSE floating-point arithmetic in {what}")
                }
                FpClass::None | FpClass::SseData => continue,
            };
            r.failures.push(msg);
        }
    }
}

/// How an instruction uses floating-point or vector state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpClass {
    /// Not at all.
    None,
    /// Saves, restores or configures FP state (`ldmxcsr`, `fxsave`, `xsave`, `emms`…).
    State,
    /// x87.
    X87,
    /// MMX or 3DNow! registers.
    Mmx,
    /// VEX/EVEX/XOP encoded, or YMM/ZMM/mask registers.
    Avx,
    /// SSE floating-point arithmetic, comparison or conversion.
    SseFloat,
    /// SSE used to move, zero or shuffle data.
    SseData,
}

fn registers(ins: &Instruction) -> Vec<Register> {
    (0..ins.op_count())
        .filter(|&i| ins.op_kind(i) == OpKind::Register)
        .map(|i| ins.op_register(i))
        .collect()
}

/// Classifies one instruction.
pub fn classify(ins: &Instruction) -> FpClass {
    let name = format!("{:?}", ins.mnemonic()).to_ascii_lowercase();
    let regs = registers(ins);
    let features = ins.cpuid_features();
    if ["ldmxcsr", "stmxcsr", "emms", "femms"].contains(&name.as_str())
        || name.starts_with("fxsave")
        || name.starts_with("fxrstor")
        || name.starts_with("xsave")
        || name.starts_with("xrstor")
    {
        return FpClass::State;
    }
    if name.starts_with('f')
        || regs.iter().any(|r| r.is_st())
        || features.iter().any(|c| {
            matches!(
                c,
                CpuidFeature::FPU | CpuidFeature::FPU287 | CpuidFeature::FPU387
            )
        })
    {
        return FpClass::X87;
    }
    if regs.iter().any(|r| r.is_mm())
        || features
            .iter()
            .any(|c| matches!(c, CpuidFeature::MMX | CpuidFeature::D3NOW))
    {
        return FpClass::Mmx;
    }
    if !matches!(ins.encoding(), EncodingKind::Legacy | EncodingKind::D3NOW)
        || regs.iter().any(|r| r.is_ymm() || r.is_zmm() || r.is_k())
    {
        return FpClass::Avx;
    }
    if regs.iter().any(|r| r.is_xmm()) {
        return if is_float_arith(&name) {
            FpClass::SseFloat
        } else {
            FpClass::SseData
        };
    }
    FpClass::None
}

/// SSE instructions that compute on floating-point values, compare them or convert.
fn is_float_arith(m: &str) -> bool {
    const OPS: &[&str] = &[
        "add", "sub", "mul", "div", "sqrt", "min", "max", "rcp", "rsqrt", "round", "hadd", "hsub",
        "addsub", "dp",
    ];
    let typed = ["ss", "sd", "ps", "pd"]
        .iter()
        .find_map(|t| m.strip_suffix(t));
    typed.is_some_and(|stem| OPS.contains(&stem) || stem.starts_with("cmp"))
        || matches!(m, "comiss" | "comisd" | "ucomiss" | "ucomisd")
        || m.starts_with("cvt")
}
