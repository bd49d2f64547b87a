#!/usr/bin/env python3
"""Which entry points of the cross-built artifacts can reach Rust's panic machinery (issue 9 §1).

    scripts/panic-reach.py [--driver SYS PDB] [--dll DLL] [--list]

With no option both artifacts are checked at their default paths (target/windows/, the driver's
PDB under target/xwin-msvc/). The call graph is `scripts/pe_image.py`'s: direct calls and jumps,
fall-through, and address-taken functions and vtables (how `dyn` calls are followed).

* The driver (`.sys` + PDB): rooted at `DriverEntry`, the PCW callbacks, the IOCTL dispatch, the
  snapshot encoder, load/unload and queue creation/closing.
* The perf DLL (mingw keeps its COFF symbol table): rooted at `CollectPerformanceData` and
  `ClosePerformanceData`, each alone and both together with every function of the vtables that
  hold one of the DLL's trait implementations (`drop_in_place` included): the `dyn
  SnapshotSource` they call and drop is built by `OpenPerformanceData`, whose own code they do
  not reach. Open is checked too, with the allocation-failure exits of Rust's infallible
  allocation accepted (`ALLOC_FAILURE`). The DLL is a `std` cdylib: its image holds panic
  machinery (std's own code); the claim is that none of it is reachable from these roots.

Sinks: `core::panicking::*`/`std::panicking::*`, the panic handler and `rust_panic`,
`handle_alloc_error`, `capacity_overflow`, the alloc error handlers, `panic_on_ord_violation`,
`unwrap_failed`/`expect_failed`, `*_fail`, `panic_bounds_check`, and — for the DLL — std's
fatal-error exits (`abort_internal`, `process::abort`): a perf DLL that aborts kills the
consumer it was loaded into (perfmon, WMI, a service) just as a panic would.

`--list` prints every function reachable from each root. Exit status: 0 if every root is
panic-free, 1 otherwise. Needs llvm-objdump, llvm-nm, llvm-cxxfilt and llvm-pdbutil (`llvm`).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pe_image import Image  # noqa: E402

DRIVER_ROOTS = {
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
DLL_EXPORTS = ["CollectPerformanceData", "OpenPerformanceData", "ClosePerformanceData"]
# Trait implementations (v0 mangling: `_RNvX…` impl paths naming the trait).
DLL_TRAIT_IMPLS = re.compile(r"^_RNv[XY].*(?:12ObjectSource|14SnapshotSource|6Logger3log)")
SINK = re.compile(
    r"9panicking|handle_alloc_error|capacity_overflow|alloc_error_handler|panic_on_ord_violation"
    r"|unwrap_failed|expect_failed|_fail(?:[A-Z0-9_.]|$)|begin_unwind|panic_bounds_check|rust_panic"
    r"|__rust_start_panic|rust_begin_unwind"
)
FATAL = re.compile(r"abort_internal|7process5abort")
# The exits of Rust's infallible allocation (`handle_alloc_error`, and `capacity_overflow` via
# RawVec's `handle_error`): accepted in OpenPerformanceData only.
ALLOC_FAILURE = re.compile(r"handle_alloc_error|capacity_overflow|7raw_vec12handle_error")


def check(img, roots, sink, listing, allowed=None):
    """Prints, per root, panic-free or the shortest chain to a sink; returns whether all are
    panic-free. Functions matching `allowed` are accepted exits: recorded, not walked into."""
    ok = True
    for title, starts in roots:
        if not starts:
            print(f"{title}: inlined or absent (covered by its callers)")
            continue
        edges = img.edges
        if allowed is not None:
            edges = {a: set() if allowed.search(img.label(a)) else e for a, e in edges.items()}
        prev = img.reach(starts, edges)
        hit = next((a for a in prev if sink.search(img.label(a))
                    and not (allowed and allowed.search(img.label(a)))), None)
        exits = sorted({img.pretty(a) for a in prev if allowed and allowed.search(img.label(a))})
        if hit is None:
            n_ours = sum(1 for a in prev if ours(img.label(a)))
            print(f"{title}: panic-free ({len(prev)} functions reachable, "
                  f"{n_ours} of them pcw-rs code)"
                  + (f"; allowed exits reached: {', '.join(exits)}" if exits else ""))
            if listing:
                for n in sorted(img.pretty(a) for a in prev):
                    print(f"    {n}")
        else:
            ok = False
            chain = [img.pretty(a) for a in img.chain_addrs(prev, hit)]
            print(f"{title}: REACHES PANIC via\n      " + "\n   <- ".join(chain))
            frontier(img, prev, sink, edges)
    return ok


def ours(name):
    return "pcw_" in name or name in DLL_EXPORTS or name == "DriverEntry"


def frontier(img, prev, sink, edges):
    """Every call from pcw-rs code into other code (std, core, alloc) that can reach a sink:
    the places to fix."""
    bad = set()
    reverse = {}
    for a in prev:
        for b in edges.get(a, ()):
            reverse.setdefault(b, set()).add(a)
    todo = [a for a in prev if sink.search(img.label(a))]
    bad.update(todo)
    while todo:
        b = todo.pop()
        for a in reverse.get(b, ()):
            if a not in bad and not ours(img.label(a)):
                bad.add(a)
                todo.append(a)
    pairs = sorted({(img.pretty(a), img.pretty(b)) for a in prev if ours(img.label(a))
                    for b in edges.get(a, ()) if b in bad})
    print(f"    {len(pairs)} calls from pcw-rs code into code that reaches a sink:")
    for a, b in pairs:
        print(f"      {a}\n        -> {b}")


def sinks_in(img, sink):
    return sorted(n for n in img.names.values() if sink.search(n))


def driver(sys_path, pdb, listing):
    img = Image(sys_path, pdb)
    sinks = sinks_in(img, SINK)
    print(f"== {sys_path}: {len(img.starts)} functions, {len(sinks)} of them panic machinery")
    for a in sorted(a for a, n in img.names.items() if SINK.search(n)):
        print(f"  sink: {img.pretty(a)}")
    roots = []
    for title, needle in DRIVER_ROOTS.items():
        found = [a for a, n in img.names.items() if needle in n]
        roots.append((title, found[:1]))
    return check(img, roots, SINK, listing)


def dll(dll_path, listing):
    img = Image(dll_path)
    sink = re.compile(f"{SINK.pattern}|{FATAL.pattern}")
    sinks = sinks_in(img, sink)
    print(f"== {dll_path}: {len(img.starts)} functions, {len(sinks)} of them panic machinery "
          "(std's; present, to be unreachable)")
    by_name = {n: a for a, n in img.names.items()}
    missing = [e for e in DLL_EXPORTS if e not in by_name]
    if missing:
        print(f"error: {dll_path} has no symbol {', '.join(missing)} (stripped?)")
        return False
    # A `dyn` call runs a method (or the drop) of a vtable made wherever the trait object was
    # built — for the snapshot source, in Open. So every vtable in the image that holds one of
    # the DLL's trait implementations is a root, whole (drop_in_place included).
    impls = {a for a, n in img.names.items() if DLL_TRAIT_IMPLS.search(n)}
    vtables = [fns for fns in img.vtables.values() if impls & set(fns)]
    dyn_roots = sorted({f for fns in vtables for f in fns} | impls)
    collect, open_, close = (by_name[e] for e in DLL_EXPORTS)
    ok = check(img, [
        ("CollectPerformanceData", [collect]),
        ("ClosePerformanceData", [close]),
        (f"CollectPerformanceData + ClosePerformanceData + {len(dyn_roots)} functions of the "
         f"{len(vtables)} vtables of the DLL's trait objects", [collect, close] + dyn_roots),
    ], sink, listing)
    # Open builds the DLL's state with Rust's ordinary (infallible) allocation; an allocation
    # failure there aborts, like any allocation failure in a Rust program. Everything else is
    # held to the same standard.
    ok &= check(img, [("OpenPerformanceData (allocation failure excepted)", [open_])], sink,
                listing, allowed=ALLOC_FAILURE)
    prev = img.reach([collect, close] + dyn_roots)
    sites = [(img.pretty(f), a, i) for f in prev for a, i in img.indirect[f]
             if i.startswith("call") or "ptr" in i]
    print(f"indirect calls in code reachable from Collect/Close: {len(sites)} (their targets: the "
          "vtables above and the address-taken functions)")
    if listing:
        for f, a, i in sites:
            print(f"    {a:#x} {i}  in {f}")
    return ok


def main():
    args = sys.argv[1:]
    listing = "--list" in args
    args = [a for a in args if a != "--list"]
    sys_path = "target/windows/pcw_driver.sys"
    pdb = "target/xwin-msvc/x86_64-pc-windows-msvc/release/pcw_driver.pdb"
    dll_path = "target/windows/pcw_perfdll.dll"
    do_driver = do_dll = True
    if args:
        do_driver = do_dll = False
        while args:
            a = args.pop(0)
            if a == "--driver" and len(args) >= 2:
                sys_path, pdb = args.pop(0), args.pop(0)
                do_driver = True
            elif a == "--dll" and args:
                dll_path = args.pop(0)
                do_dll = True
            else:
                print(__doc__.strip().splitlines()[2], file=sys.stderr)
                sys.exit(2)
    ok = True
    if do_driver:
        ok &= driver(sys_path, pdb, listing)
    if do_dll:
        ok &= dll(dll_path, listing)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
