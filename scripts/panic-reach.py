#!/usr/bin/env python3
"""Which entry points of the cross-built driver can reach Rust's panic machinery (issue 9 §1).

    scripts/panic-reach.py [target/windows/pcw_driver.sys [its .pdb]]

Builds the direct call graph of the `.sys` (every `call`/`jmp`/`jcc` whose target lies in another
function; functions are delimited by the PDB's public symbols and the `.pdata` unwind table) and
reports, for each entry point, either that no panic sink is reachable or the shortest call chain
to one. Sinks: `core::panicking::*`, `handle_alloc_error`, `capacity_overflow`, the alloc error
handlers, `panic_on_ord_violation`, `unwrap_failed`/`expect_failed`, `*_fail`/`*_index_*_fail`.
Indirect calls cannot be followed; the driver makes them only to PCW/kernel imports and to its
own callbacks (both roots here). Needs llvm-objdump and llvm-pdbutil (Debian `llvm`).
Exit status: 0 if every entry point is panic-free, 1 otherwise.
"""
import re
import subprocess
import sys
from collections import deque

ROOTS = {
    "DriverEntry": "DriverEntry",
    "waves::callback": "10pcw_driver5waves8callback",
    "stats::callback": "10pcw_driver5stats8callback",
    "control::device_control": "10pcw_driver7control14device_control",
    "snapshot::write": "10pcw_driver8snapshot5write",
    "driver::load": "10pcw_driver6driver4load",
    "driver::unload": "10pcw_driver6driver6unload",
    "queues::create": "10pcw_driver6queues6create",
    "queues::close_all": "10pcw_driver6queues9close_all",
}
SINK = re.compile(
    r"9panicking|handle_alloc_error|capacity_overflow|alloc_error_handler|panic_on_ord_violation"
    r"|unwrap_failed|expect_failed|_fail[A-Z0-9_]|begin_unwind|panic_bounds_check"
)


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    sys_path = sys.argv[1] if len(sys.argv) > 1 else "target/windows/pcw_driver.sys"
    pdb = sys.argv[2] if len(sys.argv) > 2 else (
        "target/xwin-msvc/x86_64-pc-windows-msvc/release/pcw_driver.pdb")
    text_va = None
    for line in run("llvm-objdump", "-h", sys_path).splitlines():
        f = line.split()
        if len(f) >= 4 and f[1] == ".text":
            text_va = int(f[3], 16)
    names = {}
    for m in re.finditer(r"S_PUB32 \[size = \d+\] `([^`]*)`\s+flags = function, addr = 0001:(\d+)",
                         run("llvm-pdbutil", "dump", "-publics", pdb)):
        names.setdefault(text_va + int(m.group(2)), m.group(1))
    starts = set(names)
    for m in re.finditer(r"StartAddress: 0x([0-9A-Fa-f]+)",
                         run("llvm-readobj", "--unwind", sys_path)):
        starts.add(int(m.group(1), 16))
    starts = sorted(starts)

    def owner(addr):
        lo, hi = 0, len(starts) - 1
        best = None
        while lo <= hi:
            mid = (lo + hi) // 2
            if starts[mid] <= addr:
                best = starts[mid]
                lo = mid + 1
            else:
                hi = mid - 1
        return best

    edges = {s: set() for s in starts}
    insn = re.compile(r"^\s*([0-9a-f]+):\s+(call|jmp|j[a-z]+)[a-z]*\s+0x([0-9a-f]+)")
    for line in run("llvm-objdump", "-d", "--no-show-raw-insn", sys_path).splitlines():
        m = insn.match(line)
        if not m:
            continue
        src, dst = owner(int(m.group(1), 16)), int(m.group(3), 16)
        if src is None or owner(dst) == src:
            continue
        if owner(dst) is not None:
            edges[src].add(owner(dst))

    def label(a):
        return names.get(a, f"fn@{a:#x}")

    sinks = sorted(n for n in names.values() if SINK.search(n))
    print(f"{len(names)} functions in the image, {len(sinks)} of them panic machinery")
    for n in sinks:
        print(f"  sink: {n}")
    failed = False
    for root, needle in ROOTS.items():
        found = [a for a, n in names.items() if needle in n]
        if not found:
            print(f"{root}: inlined or absent (covered by its callers)")
            continue
        start = found[0]
        prev = {start: None}
        queue = deque([start])
        hit = None
        while queue:
            a = queue.popleft()
            if SINK.search(label(a)):
                hit = a
                break
            for b in edges.get(a, ()):
                if b not in prev:
                    prev[b] = a
                    queue.append(b)
        if hit is None:
            print(f"{root}: panic-free ({len(prev)} functions reachable)")
        else:
            failed = True
            chain = []
            while hit is not None:
                chain.append(label(hit))
                hit = prev[hit]
            print(f"{root}: REACHES PANIC via " + " <- ".join(chain))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
