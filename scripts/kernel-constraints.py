#!/usr/bin/env python3
"""Kernel constraints of the cross-built driver (issue 9 §7): stack frames and floating point.

    scripts/kernel-constraints.py [target/windows/pcw_driver.sys [its .pdb]] [--all]

Stack. Every function's fixed frame is read from its x64 unwind information (`.pdata`/`.xdata`:
the pushes and allocations its prologue makes, which the kernel's unwinder and `!analyze` rely
on), checked against the prologue's own `push`/`sub rsp, N` instructions, plus 8 bytes of return
address. Any `__chkstk` call (frames of a page or more) or `sub rsp, <register>` (a dynamic
allocation) is reported as such. For each root the script walks the call graph
(`scripts/pe_image.py`) and reports the largest frame reachable and the deepest call chain (sum
of frames along call, tail-jump and fall-through edges; a cycle — recursion — makes the depth
unbounded). It FAILS when any function reachable from a root — the PCW callbacks
(`waves::callback`, `stats::callback`), `DriverEntry`, the IRP dispatch and unload routines it
installs — has a frame over 1 KiB (the WDK code analysis threshold, C6262), or a root's chain is
unbounded. The callbacks are the hard case; the other roots run at PASSIVE_LEVEL at the top of a
thread's stack, but a frame over 1 KiB there was a real finding once (the IOCTL path's 2 KiB
arrays) and stays an error. The x64 kernel stack is 24 KiB (`KERNEL_STACK_SIZE`),
shared with whoever called PCW: the callbacks run on the stack of the thread that queried the
counters, under Perflib's and PCW's own frames.

Floating point. "Using Floating Point in a WDM Driver" (Microsoft Learn): on x64, kernel code must
not touch the MMX/x87 registers; the compiler uses SSE for floating point and the system takes care
of the SSE state, so SSE needs no KeSaveExtendedProcessorState; AVX (YMM/ZMM, and any VEX/EVEX
encoded instruction) needs KeSaveExtendedProcessorState and cannot be used in an ISR. So this
script FAILS on any x87, MMX or AVX instruction and on `ldmxcsr`/`fxsave`-style state
manipulation anywhere in the image. SSE floating-point arithmetic (`addsd`, `cvtsi2sd`,
`ucomiss`, …) is allowed by that document, but this driver computes nothing in floating point, so
one showing up means a float path crept in (float formatting, `as f64`) — it FAILS too, naming the
function, unless the function is listed in FLOAT_OK with a reason. SSE used as the compiler does
for copying and zeroing memory (16-byte `movups`/`movaps`/`movdqu`, `xorps`/`pxor`, `movq`,
shuffles) is counted and allowed.

Exit status 0 when nothing fails. `--all` lists every function's frame.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pe_image import Image  # noqa: E402

LIMIT = 1024
CALLBACK_ROOTS = {
    "waves::callback": "10pcw_driver5waves8callback",
    "stats::callback": "10pcw_driver5stats8callback",
}
INFO_ROOTS = {  # held to the same limit as the callbacks
    "DriverEntry": "DriverEntry",
    "control::device_control": "10pcw_driver7control14device_control",
    "driver::unload": "10pcw_driver6driver6unload",
}
# Functions allowed to do SSE floating-point arithmetic, with the reason. Empty: the driver has
# no floating point.
FLOAT_OK = {}

XMM = re.compile(r"\bxmm\d+\b")
WIDE = re.compile(r"\b[yz]mm\d+\b|\bk[0-7]\b")
MMX = re.compile(r"(?<![xyz])\bmm[0-7]\b")
X87_OPERAND = re.compile(r"\bst\(\d\)|\bst\b")
# x87 mnemonics all start with f (fld, fstp, fild, fistp, fadd, fxch, fnstcw, fldcw, fwait,
# fxsave, ...); no other x64 instruction does except femms (3DNow!, MMX state).
X87 = re.compile(r"^f[a-z0-9]*$")
STATE = re.compile(r"^(ldmxcsr|stmxcsr|fxsave|fxsave64|fxrstor|fxrstor64|xsave\w*|xrstor\w*|emms)$")
# SSE instructions that compute on floating-point values (scalar or packed single/double), and
# conversions to/from them. Moves, logic and shuffles of these types are data movement.
FLOAT_ARITH = re.compile(
    r"^(add|sub|mul|div|sqrt|min|max|rcp|rsqrt|round|hadd|hsub|addsub|dp)(ss|sd|ps|pd)$"
    r"|^(u?comis[sd])$|^cmp\w*(ss|sd|ps|pd)$"
    r"|^cvt\w+$"
)


def find(img, needle):
    return next((a for a, n in img.names.items() if needle in n), None)


def prologue(img, fn):
    """(bytes pushed + allocated by the prologue, `__chkstk` called, dynamic rsp adjustment)."""
    size = 0
    chkstk = False
    dynamic = False
    pending_eax = None
    for i, (_addr, mnem, ops) in enumerate(img.insns[fn]):
        if mnem == "push":
            size += 8
        elif mnem == "sub" and ops.startswith("rsp, "):
            arg = ops[5:]
            if arg.isdigit():
                size += int(arg)
            elif arg.startswith("0x"):
                size += int(arg, 16)
            else:
                dynamic = True
                if pending_eax is not None:
                    size += pending_eax
            break
        elif mnem == "mov" and re.match(r"^e?ax, (\d+|0x[0-9a-f]+)$", ops):
            v = ops.split(", ")[1]
            pending_eax = int(v, 0)
        elif mnem == "call" and "chkstk" in ops:
            chkstk = True
        elif mnem in ("mov", "lea") and ops.startswith("rbp, "):
            continue
        elif i > 12:
            break
    for _addr, mnem, ops in img.insns[fn]:
        if mnem == "sub" and re.match(r"^rsp, [a-z]", ops):
            dynamic = True
        if mnem == "call" and "chkstk" in ops:
            chkstk = True
    return size, chkstk, dynamic


def depth(img, root, frames):
    """Deepest chain from `root`: (bytes, chain) or (None, cycle) when recursive."""
    memo = {}
    onstack = set()

    def go(fn):
        if fn in memo:
            return memo[fn]
        if fn in onstack:
            raise RecursionError(fn)
        onstack.add(fn)
        best, best_chain = 0, []
        for callee in img.calls.get(fn, ()):
            d, c = go(callee)
            if d > best:
                best, best_chain = d, c
        onstack.discard(fn)
        memo[fn] = (frames[fn] + best, [fn] + best_chain)
        return memo[fn]

    sys.setrecursionlimit(10000)
    try:
        return go(root)
    except RecursionError as e:
        return None, [e.args[0]] if e.args else []


def main():
    args = [a for a in sys.argv[1:] if a != "--all"]
    show_all = "--all" in sys.argv[1:]
    sys_path = args[0] if args else "target/windows/pcw_driver.sys"
    pdb = args[1] if len(args) > 1 else (
        "target/xwin-msvc/x86_64-pc-windows-msvc/release/pcw_driver.pdb")
    img = Image(sys_path, pdb)
    failures = []

    # ---- stack frames ----
    frames = {}
    notes = {}
    for fn in img.starts:
        unwind = img.frame(fn)
        pro, chkstk, dynamic = prologue(img, fn)
        if unwind is None:
            # No unwind info: a leaf that must not move RSP (x64 ABI); trust the prologue.
            unwind = pro
        elif pro != unwind:
            notes.setdefault(fn, []).append(f"prologue {pro} B != unwind info {unwind} B")
        if chkstk:
            notes.setdefault(fn, []).append("calls __chkstk")
        if dynamic:
            notes.setdefault(fn, []).append("dynamic stack allocation (sub rsp, reg)")
        frames[fn] = unwind + 8  # + the return address its caller pushed
    print(f"== {sys_path}: {len(img.starts)} functions; stack frame = prologue pushes + "
          "allocation + return address")
    biggest = sorted(img.starts, key=lambda f: -frames[f])
    print("largest frames in the image:")
    for fn in biggest[: len(biggest) if show_all else 5]:
        print(f"  {frames[fn]:6d} B  {img.pretty(fn)}"
              + "".join(f"  [{n}]" for n in notes.get(fn, [])))

    entry = find(img, "DriverEntry")
    # The dispatch and unload routines DriverEntry installs are internal (no symbol after LTO):
    # every function whose address DriverEntry takes.
    routines = {f"routine installed by DriverEntry: {img.pretty(f)}": f
                for f in sorted(img.address_taken.get(entry, ()))}
    for group, roots, fatal in (("PCW callback", CALLBACK_ROOTS, True),
                                ("load, unload, IRP", {**INFO_ROOTS, **routines}, True)):
        for title, needle in roots.items():
            root = needle if isinstance(needle, int) else find(img, needle)
            if root is None:
                print(f"{title}: not found in the image", file=sys.stderr)
                failures.append(f"{title} not found")
                continue
            reach = img.reach([root])
            top = max(reach, key=lambda f: frames[f])
            total, chain = depth(img, root, frames)
            print(f"{title} ({group}): {len(reach)} functions reachable; largest frame "
                  f"{frames[top]} B in {img.pretty(top)}; deepest chain "
                  + (f"{total} B: " + " -> ".join(img.pretty(f) for f in chain)
                     if total is not None else "UNBOUNDED (recursion through "
                     + ", ".join(img.pretty(f) for f in chain) + ")"))
            for fn in reach:
                bad = [n for n in notes.get(fn, []) if not n.startswith("prologue")]
                over = frames[fn] > LIMIT
                if over or bad:
                    msg = (f"{title}: {img.pretty(fn)}: frame {frames[fn]} B"
                           + (f" > {LIMIT} B" if over else "") + "".join(f"; {n}" for n in bad))
                    if fatal:
                        failures.append(msg)
                    else:
                        print(f"  warning: {msg}")
            if total is None and fatal:
                failures.append(f"{title}: recursive call chain, stack depth unbounded")
    for fn, ns in notes.items():
        for n in ns:
            if n.startswith("prologue"):
                print(f"  note: {img.pretty(fn)}: {n}")

    # ---- floating point ----
    counts = {"sse-data": 0, "sse-float": 0}
    float_fns = {}
    for fn in img.starts:
        for addr, mnem, ops in img.insns[fn]:
            where = f"{img.pretty(fn)} at {addr:#x}: {mnem} {ops}".rstrip()
            if STATE.match(mnem):
                failures.append(f"FP state instruction in {where}")
            elif X87.match(mnem) or X87_OPERAND.search(ops):
                failures.append(f"x87 instruction in {where}")
            elif MMX.search(ops):
                failures.append(f"MMX register in {where}")
            elif WIDE.search(ops) or mnem.startswith("vzero") or (mnem.startswith("v")
                                                                and XMM.search(ops)):
                failures.append(f"AVX (VEX/EVEX, YMM/ZMM) instruction in {where} "
                                "(needs KeSaveExtendedProcessorState)")
            elif XMM.search(ops):
                if FLOAT_ARITH.match(mnem):
                    counts["sse-float"] += 1
                    float_fns.setdefault(fn, []).append(where)
                else:
                    counts["sse-data"] += 1
    print(f"floating point: {counts['sse-data']} SSE data-movement instructions (copies, "
          f"zeroing: allowed on x64); {counts['sse-float']} SSE floating-point instructions; "
          "x87/MMX/AVX: " + ("none" if not any("x87" in f or "MMX" in f or "AVX" in f
                                            for f in failures) else "FOUND"))
    for fn, wheres in float_fns.items():
        reason = FLOAT_OK.get(img.pretty(fn))
        if reason:
            print(f"  allowed float arithmetic in {img.pretty(fn)}: {reason}")
        else:
            failures.extend(f"SSE floating-point arithmetic in {w}" for w in wheres)

    if failures:
        print(f"\nFAILED: {len(failures)} finding(s)", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        sys.exit(1)
    print(f"kernel constraints hold: no frame over {LIMIT} B reachable from the callbacks, "
          "DriverEntry or its routines, no x87/MMX/AVX, no floating-point arithmetic")


if __name__ == "__main__":
    main()
