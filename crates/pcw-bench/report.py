#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Turns one run of scripts/bench.sh into the generated section of BENCHMARKS.md.

Inputs: the callgrind driver's rows (rows.tsv), its callgrind dumps (cg.out.*), criterion's
estimates (<target>/criterion/*/new/{benchmark,estimates}.json) and a machine description.
Output: markdown between `<!-- bench:begin -->` and `<!-- bench:end -->` in BENCHMARKS.md
(or on stdout with --stdout). Only ratios and instruction counts are reported, never times,
except in the manifest tools' scaling table (report_manifest.py), whose point is how time grows.
"""

import glob
import os
import re
import sys

import report_manifest

from report_common import BEGIN, END, exponent, load_criterion, load_fastest


def load_rows(path):
    rows = {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] != "case":
                continue
            label, reps, units, added, allocs, capped = parts[1:7]
            rows[label] = dict(
                reps=int(reps), units=int(units), added=int(added),
                allocs=int(allocs), capped=int(capped))
    return rows


def load_dumps(directory):
    ir = {}
    for path in glob.glob(os.path.join(directory, "cg.out.*")):
        label, total = None, None
        with open(path) as f:
            for line in f:
                prefix = "desc: Trigger: Client Request: "
                if line.startswith(prefix):
                    label = line[len(prefix):].strip()
                elif line.startswith("summary:") or line.startswith("totals:"):
                    total = int(line.split()[1])
        if label is not None and total is not None:
            ir[label] = total
    return ir


def self_costs(path):
    """Instructions (Ir) of each function of one callgrind dump, its own only (not its
    callees'): what a routine's body costs. Handles compressed and uncompressed names."""
    names, costs = {}, {}
    fn, npos, after_call = None, 1, False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("positions:"):
                npos = len(line.split()) - 1
                continue
            if line.startswith(("fn=", "cfn=")):
                spec = line.split("=", 1)[1]
                m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
                name = spec if m is None else (m.group(2) or names.get(m.group(1), spec))
                if m is not None and m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("fn="):
                    fn = name
                continue
            if line.startswith("calls="):
                after_call = True
                continue
            if not line or not (line[0].isdigit() or line[0] in "+-*"):
                continue
            parts = line.split()
            if after_call:
                after_call = False  # the call's inclusive cost, not this function's own
                continue
            if fn is not None and len(parts) > npos:
                costs[fn] = costs.get(fn, 0) + int(parts[npos])
    return costs


def dump_of(directory, label):
    """The callgrind dump of the case `label`, if there is one."""
    for path in glob.glob(os.path.join(directory, "cg.out.*")):
        with open(path) as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request: "):
                    if line.split(": ", 3)[-1].strip() == label:
                        return path
                    break
    return None


# The no-op PCW's routines the callback calls (pcw_bench::noop_pcw!): their bodies stand for
# the kernel's, like the loader's routines on the image's side.
NOOP_ROUTINES = ("PcwAddInstance", "KeQuerySystemTimePrecise", "KeQueryPerformanceCounter",
                 "KeReadStateEvent")
# The measuring loops around the driver's callback, left out of "the driver's own code" on each
# side: pcw-bench-cg's loop and the host case's closure (which calls the callback through a
# pointer, as PCW does), and pcw-image-cg's measured function (which calls the image's).
HARNESS = ("pcw_bench_cg::main", "pcw_bench::scenarios::driver_host_case::{{closure}}",
           "pcw_image_cg_measure")


def calls_into(path, prefix):
    """Instructions spent in calls to functions named `prefix`… from functions not so named,
    callees included (the inclusive cost callgrind records with each call)."""
    names = {}
    fn = cfn = None
    after_call, total = False, 0

    def name_of(spec):
        m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
        if m is None:
            return spec
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), spec)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = name_of(line[3:])
            elif line.startswith("cfn="):
                cfn = name_of(line[4:])
            elif line.startswith("calls="):
                after_call = True
            elif after_call and line and (line[0].isdigit() or line[0] in "+-*"):
                after_call = False
                if cfn is not None and cfn.startswith(prefix) and not (fn or "").startswith(prefix):
                    total += int(line.split()[1])
    return total


def load_image(directory, name="image"):
    """One image run's callgrind total (`cg.NAME.out`), the part spent in the loader's kernel
    routines (every call from outside `pcw_loader::ntos` into it, with what those routines
    call) and the part in the measuring loop (`HARNESS`)."""
    path = os.path.join(directory, f"cg.{name}.out")
    if not os.path.exists(path):
        return None
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    if total is None:
        return None
    harness = sum(v for k, v in self_costs(path).items() if k in HARNESS)
    return total, calls_into(path, "pcw_loader::ntos::"), harness


def callback_rva(directory, name):
    """The callback's RVA that `pcw-image-cg` printed for the run `name`."""
    try:
        with open(os.path.join(directory, f"valgrind-{name}.log")) as f:
            m = re.search(r"\(RVA (0x[0-9a-f]+)\)", f.read())
    except OSError:
        return None
    return None if m is None else int(m.group(1), 16)


def pe_layout(image):
    """The image's bytes, preferred base and exception directory (`.pdata`: one
    RUNTIME_FUNCTION of three 32-bit RVAs per function) as (begin, end) RVA pairs."""
    import struct
    with open(image, "rb") as f:
        data = f.read()
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    sections, opt_len = struct.unpack_from("<H", data, pe + 6)[0], struct.unpack_from("<H", data, pe + 20)[0]
    opt = pe + 24
    if struct.unpack_from("<H", data, opt)[0] != 0x20B:
        return None
    base = struct.unpack_from("<Q", data, opt + 24)[0]
    dir_rva, dir_len = struct.unpack_from("<II", data, opt + 112 + 3 * 8)
    functions = []
    for i in range(sections):
        _, vsize, vaddr, raw_len, raw_at = struct.unpack_from("<8sIIII", data, opt + opt_len + 40 * i)
        if vaddr <= dir_rva < vaddr + max(vsize, raw_len):
            at = raw_at + dir_rva - vaddr
            functions = [struct.unpack_from("<II", data, at + 12 * k) for k in range(dir_len // 12)]
    return base, functions


def function_at(image, rva):
    """The [begin, end) RVAs of the function of `image` holding `rva`, from its `.pdata`."""
    layout = pe_layout(image)
    if layout is None:
        return None
    return next(((b, e) for b, e in layout[1] if b <= rva < e), None)


def disassembly(tool, image, base, span):
    """The instructions of `image` in the RVA range `span`, each as (rva, mnemonic, operands),
    in AT&T syntax (both llvm-objdump and binutils' objdump print it)."""
    import subprocess
    text = subprocess.run(
        [tool, "-d", "--no-show-raw-insn", f"--start-address={base + span[0]:#x}",
         f"--stop-address={base + span[1]:#x}", image],
        capture_output=True, text=True, check=False).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m:
            operands = re.sub(r"\s*#.*$|\s*<[^>]*>", "", m.group(3)).strip()
            out.append((int(m.group(1), 16) - base, m.group(2), operands))
    return out


# A `%rip`-relative displacement, as llvm-objdump (decimal or hexadecimal) and binutils' objdump
# (hexadecimal) print it.
RIP = r"-?(?:0x[0-9a-f]+|\d+)\(%rip\)"


def same_code(image_a, image_b, rva_a, rva_b):
    """Whether the function at `rva_a` in `image_a` and the one at `rva_b` in `image_b` are the
    same instructions, and so is every function of the image they call directly, followed in
    the order of the calls: equal mnemonics and operands, immediates and offsets included, but
    with a `%rip`-relative displacement (data may sit elsewhere in the other image) and a branch
    or call target (compared as its place in the function, or by following the call) left out.
    Returns (verdict, instructions compared), or (None, reason) when it cannot be told."""
    import shutil
    tool = shutil.which("llvm-objdump") or shutil.which("x86_64-w64-mingw32-objdump")
    if tool is None:
        return None, "no disassembler (llvm-objdump or binutils-mingw-w64's objdump)"
    if rva_a is None or rva_b is None:
        return None, "no callback address in pcw-image-cg's output"
    layouts = (pe_layout(image_a), pe_layout(image_b))
    if None in layouts:
        return None, "an image is not PE32+"
    todo, seen, compared = [(rva_a, rva_b)], set(), 0
    while todo:
        pair = todo.pop()
        if pair in seen:
            continue
        seen.add(pair)
        listings = []
        for image, (base, functions), rva in zip((image_a, image_b), layouts, pair):
            span = next(((b, e) for b, e in functions if b <= rva < e), None)
            if span is None:
                # A leaf function needs no `.pdata` entry: compared up to the next function
                # that has one (what lies between, padding included, must match too).
                end = min((b for b, _ in functions if b > rva), default=None)
                span = None if end is None or end - rva > 0x4000 else (rva, end)
            if span is None or span[0] != rva:
                return None, f"no function starts at RVA {rva:#x}"
            listings.append((span, disassembly(tool, image, base, span), base, functions))
        (span_a, insns_a, base_a, _), (span_b, insns_b, base_b, _) = listings
        if not insns_a or len(insns_a) != len(insns_b):
            return False, compared
        for (at_a, op_a, args_a), (at_b, op_b, args_b) in zip(insns_a, insns_b):
            if op_a != op_b:
                return False, compared
            if op_a.startswith("j") or op_a.startswith("call"):
                ta = re.fullmatch(r"(?:0x)?([0-9a-f]+)", args_a)
                tb = re.fullmatch(r"(?:0x)?([0-9a-f]+)", args_b)
                if ta is None or tb is None:
                    if re.sub(RIP, "", args_a) != re.sub(RIP, "", args_b):
                        return False, compared
                    continue
                ta, tb = int(ta.group(1), 16) - base_a, int(tb.group(1), 16) - base_b
                inside_a, inside_b = span_a[0] <= ta < span_a[1], span_b[0] <= tb < span_b[1]
                if inside_a != inside_b:
                    return False, compared
                if inside_a:
                    if ta - span_a[0] != tb - span_b[0]:
                        return False, compared
                elif op_a.startswith("call"):
                    todo.append((ta, tb))
                continue
            if re.sub(RIP, "", args_a) != re.sub(RIP, "", args_b):
                return False, compared
        compared += len(insns_a)
    return True, compared


def split(label):
    scenario, variant, n, side = label.split("/")
    return scenario, variant, int(n), side


def fmt_ratio(x):
    return "–" if x is None else f"{x:.2f}"


def fmt_count(x):
    if x is None:
        return "–"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def main():
    out_dir, target, machine = sys.argv[1], sys.argv[2], sys.argv[3]
    to_stdout = "--stdout" in sys.argv
    rows = load_rows(os.path.join(out_dir, "rows.tsv"))
    ir = load_dumps(out_dir)
    times = load_criterion(target)
    manifest_fastest = load_fastest(target, "manifest/")

    def per_call(label):
        r = rows.get(label)
        if r is None or label not in ir:
            return None
        return ir[label] / r["reps"]

    def per_unit(label):
        c = per_call(label)
        return None if c is None else c / rows[label]["units"]

    def t(label):
        return times.get(label)

    def ratio(a, b):
        return None if a is None or b is None or b == 0 else a / b

    md = []
    md.append(BEGIN)
    md.append("")
    md.append("_Generated by `scripts/bench.sh`; do not edit by hand._")
    md.append("")
    md.append("### Machine")
    md.append("")
    with open(machine) as f:
        for line in f:
            md.append(f"- {line.strip()}")
    md.append("")

    # ---- callback
    variants = []
    for label in rows:
        s, v, n, side = split(label)
        if s == "callback" and v not in variants:
            variants.append(v)
    # The sizes of the no-op-PCW scenarios (the shipped-image comparison's rows, at N = 3, have
    # no `ours` side and are reported on their own below).
    ns = sorted({split(l)[2] for l in rows if l.startswith("callback/") and l.endswith("/ours")})
    md.append("### Callback, no-op PCW (provider cost only)")
    md.append("")
    md.append("Instructions per instance (callgrind; per call for `id`, which adds one "
              "instance), ours / C as instructions (Ir) and as criterion median time.")
    md.append("")
    md.append("| query | N | ours Ir/inst | C Ir/inst | ours/C (Ir) | ours/C (time) | added | C capped |")
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for v in variants:
        for n in ns:
            o, c = f"callback/{v}/{n}/ours", f"callback/{v}/{n}/c"
            if o not in rows:
                continue
            capped = rows.get(c, {}).get("capped", 0)
            md.append(
                f"| `{v}` | {n:,} | {fmt_count(per_unit(o))} | {fmt_count(per_unit(c))} | "
                f"{fmt_ratio(ratio(per_unit(o), per_unit(c)))} | {fmt_ratio(ratio(t(o), t(c)))} | "
                f"{rows[o]['added']:,} | {capped:,} |")
    md.append("")
    md.append("Growth of the cost of one call with N, as the least-squares exponent k of "
              "cost ∝ N^k over N ≥ 100 (instructions):")
    md.append("")
    md.append("| query | ours k | C k |")
    md.append("|---|---:|---:|")
    for v in variants:
        ko = exponent([(n, per_call(f"callback/{v}/{n}/ours")) for n in ns])
        kc = exponent([(n, per_call(f"callback/{v}/{n}/c")) for n in ns])
        if ko is None and kc is None:
            continue
        md.append(f"| `{v}` | {fmt_ratio(ko)} | {fmt_ratio(kc)} |")
    md.append("")

    # ---- targets
    def verdict(r, target):
        return "" if r is None else (" — **met**" if r <= target else " — **missed**")

    def met(ok):
        return "**met**" if ok else "**missed**"

    def rs(pairs):
        return ", ".join(f"N={n:,}: {fmt_ratio(r)}" for n, r in pairs)

    def profile(label, top=4):
        """The case's heaviest functions, by their own instructions per call, from its dump."""
        path = dump_of(out_dir, label)
        r = rows.get(label)
        if path is None or r is None:
            return "no callgrind dump"
        costs = sorted(self_costs(path).items(), key=lambda kv: -kv[1])[:top]
        return f"`{label}` per call: " + ", ".join(
            f"`{short(fn)}` {fmt_count(c / r['reps'])}" for fn, c in costs)

    def short(fn):
        """A callgrind function name without its object file and generic arguments."""
        fn = fn.split("'", 1)[0]
        depth, out = 0, []
        for ch in fn:
            depth += ch == "<"
            if depth == 0:
                out.append(ch)
            depth -= ch == ">" and depth > 0
        return "".join(out)[-60:]

    def worst(pairs, pattern):
        """The label (`pattern` with N filled in) of the N with the highest ratio."""
        n = max(pairs, key=lambda p: -1 if p[1] is None else p[1])[0]
        return pattern.format(n)

    def miss_note(ok, label):
        return "" if ok else f"<br>profile: {profile(label)}; what would close it: " \
            f"\"Reading the results against the targets\" above"

    md.append("### Targets of this wave (issue text: the targets are the floor)")
    md.append("")
    md.append("| # | target | result | verdict |")
    md.append("|---|---|---|---|")
    # 1. Small N at or below C.
    for v in [v for v in variants if not v.startswith("mask-adversarial") and "-long-" not in v]:
        pairs = [(n, ratio(per_call(f"callback/{v}/{n}/ours"), per_call(f"callback/{v}/{n}/c")))
                 for n in ns if f"callback/{v}/{n}/ours" in rows]
        if not pairs:
            continue
        ok = all(r is not None and r <= 1.0 for _, r in pairs)
        n1 = per_call(f"callback/{v}/1/ours"), per_call(f"callback/{v}/1/c")
        md.append(f"| 1 | callback `{v}`: ours/C instructions per call ≤ 1.00 at every N | "
                  f"{rs(pairs)} (N=1: {fmt_count(n1[0])} against {fmt_count(n1[1])}) | {met(ok)}"
                  f"{miss_note(ok, worst(pairs, f'callback/{v}/{{}}/ours'))} |")
    for scen, name in [("v1/collect", "V1 collect"), ("device/path", "device path")]:
        pairs_t = [(n, ratio(t(f"{scen}/{n}/ours"), t(f"{scen}/{n}/c"))) for n in (1, 100)
                   if f"{scen}/{n}/ours" in rows]
        pairs_i = [(n, ratio(per_call(f"{scen}/{n}/ours"), per_call(f"{scen}/{n}/c")))
                   for n in (1, 100) if f"{scen}/{n}/ours" in rows]
        if not pairs_t:
            continue
        ok = all(r is not None and r <= 1.0 for _, r in pairs_t)
        md.append(f"| 1 | {name}: ours/C time ≤ 1.00 at N = 1 and 100 | time {rs(pairs_t)}; "
                  f"instructions {rs(pairs_i)} | {met(ok)}"
                  f"{miss_note(ok, worst(pairs_t, scen + '/{}/ours'))} |")
    allocs = {l: r["allocs"] for l, r in rows.items()
              if not l.endswith("/c") and not l.endswith("/memcpy") and not l.endswith("/c-direct")
              and not l.startswith("um/create-delete/")}
    bad = {l: a for l, a in allocs.items() if a}
    md.append(f"| 1 | zero allocations (callgrind driver, one call of each of our cases; "
              f"pcw-um's instance creation excepted, which allocates its reference counters) | "
              f"{len(allocs) - len(bad)} of {len(allocs)} cases allocate nothing"
              + ("" if not bad else ": " + ", ".join(f"`{l}` {a}" for l, a in bad.items()))
              + f" | {met(not bad)} |")
    # 2. The image. Each side's own instructions per call (the kernel routines and the measuring
    # loops left out) at 3 waves (the shipped image) and at 64 (the `bench-waves` image); per
    # instance is the difference over the 61 waves more, per call the 3-wave figure.
    # The two sizes are the rows' (pcw-image-cg labels a run by the instances it added).
    image_ns = sorted(split(l)[2] for l in rows if l.startswith("callback/driver/") and l.endswith("/image"))
    small_n, big_n = (image_ns[0], image_ns[-1]) if len(image_ns) == 2 else (None, None)

    def image_own(name):
        run = load_image(out_dir, name)
        n = small_n if name == "image" else big_n
        row = rows.get(f"callback/driver/{n}/image")
        if run is None or row is None:
            return None
        total, shims, harness = run
        return (total - shims - harness) / row["reps"]

    def host_own(n):
        label = f"callback/driver/{n}/host"
        dump = dump_of(out_dir, label)
        if per_call(label) is None or not dump:
            return None
        left_out = sum(v for k, v in self_costs(dump).items()
                       if k in NOOP_ROUTINES or k in HARNESS)
        return per_call(label) - left_out / rows[label]["reps"]

    img3, img64 = image_own("image"), image_own("image64")
    host3, host64 = (host_own(small_n), host_own(big_n)) if small_n else (None, None)
    if None not in (img3, img64, host3, host64):
        more = big_n - small_n
        same, compared = same_code(os.path.join(out_dir, "image.sys"),
                                   os.path.join(out_dir, "image64.sys"),
                                   callback_rva(out_dir, "image"), callback_rva(out_dir, "image64"))
        img_inst, host_inst = (img64 - img3) / more, (host64 - host3) / more
        r = ratio(img_inst, host_inst)
        ok = r is not None and r <= 1.0 and same is True
        code = (f"the {big_n}-wave image's callback, and every function it calls, is the shipped "
                f"image's instruction for instruction ({compared:,} instructions compared)"
                if same is True else
                f"**the {big_n}-wave image's callback differs from the shipped image's** (the "
                "shipped `.sys` may be older than the tree: run `scripts/cross-windows.sh`): the "
                "per-instance figure is not the shipped image's" if same is False else
                f"the two images' callbacks could not be compared: {compared}")
        md.append(f"| 2 | shipped image (LTO, one codegen unit) / host build, the driver's own "
                  f"instructions per instance ≤ 1.00 | {fmt_count(img_inst)} against "
                  f"{fmt_count(host_inst)} = {fmt_ratio(r)} (each build's cost at {big_n} waves "
                  f"less its cost at {small_n}, over {more}; {code}); per call of {small_n} waves "
                  f"{fmt_count(img3)} against {fmt_count(host3)} = {fmt_ratio(ratio(img3, host3))}, "
                  f"of which once a call (the {small_n}-wave cost less {small_n} instances) "
                  f"{fmt_count(img3 - small_n * img_inst)} against "
                  f"{fmt_count(host3 - small_n * host_inst)} | {met(ok)}"
                  + ("" if ok else "<br>profile: the image's own code "
                     f"{fmt_count(img3)} per call at {small_n} waves, {fmt_count(img64)} at "
                     f"{big_n}, beside " + profile(f"callback/driver/{small_n}/host")
                     + "; what would close it: \"Reading the results against the targets\" "
                     "above") + " |")
    else:
        missing = [what for what, v in (("the shipped image's run", img3),
                                        ("the benchmark image's run", img64),
                                        ("the host build's small case", host3),
                                        ("the host build's large case", host64)) if v is None]
        md.append("| 2 | shipped image / host build ≤ 1.00 | not measured by this run (missing: "
                  + ", ".join(missing) + "; see `scripts/bench.sh`'s output) | – |")
    # 3. Device path and codec against memcpy.
    if "device/path/10000/ours" in rows:
        pairs = [(n, ratio(t(f"device/path/{n}/ours"), t(f"device/path/{n}/memcpy")))
                 for n in (100, 10_000, 100_000) if f"device/path/{n}/ours" in rows]
        cpairs = [(n, ratio(t(f"device/path/{n}/c"), t(f"device/path/{n}/memcpy")))
                  for n in (100, 10_000, 100_000) if f"device/path/{n}/c" in rows]
        fpairs = [(n, ratio(t(f"device/in-place/{n}/ours"), t(f"device/path/{n}/memcpy")))
                  for n in (100, 10_000, 100_000) if f"device/in-place/{n}/ours" in rows]
        r = dict(pairs).get(10_000)
        md.append(f"| 3 | device path / `memcpy` of the V1 output, time ≤ 3.00 at N = 10 000 | "
                  f"{rs(pairs)}; the plain C path {rs(cpairs)}"
                  + (f"; the floor of a design writing the records in place (encode and check, "
                     f"no copy) {rs(fpairs)}" if fpairs else "")
                  + f" | {met(r is not None and r <= 3.0)}"
                  f"{miss_note(r is not None and r <= 3.0, 'device/path/10000/ours')} |")
    if "snapshot/encode/10000/ours" in rows:
        m = t("snapshot/memcpy/10000/memcpy")
        re_, rd_ = ratio(t("snapshot/encode/10000/ours"), m), ratio(t("snapshot/decode/10000/ours"), m)
        ok = re_ is not None and rd_ is not None and re_ <= 2.0 and rd_ <= 2.0
        md.append(f"| 3 | snapshot codec / `memcpy` of the snapshot, time ≤ 2.00 each at "
                  f"N = 10 000 | encode {fmt_ratio(re_)}, decode {fmt_ratio(rd_)} | {met(ok)}"
                  + ("" if ok else f"<br>profile: {profile('snapshot/encode/10000/ours')}; "
                     f"{profile('snapshot/decode/10000/ours')}; what would close it: "
                     "\"Reading the results against the targets\" above") + " |")
    # 4. The user-mode provider.
    if "um/update/1/ours" in rows:
        r = ratio(per_unit("um/update/1/ours"), per_unit("um/update/1/c"))
        md.append(f"| 4 | pcw-um counter update / C's Perflib call, instructions per update ≤ 1.00; "
                  f"zero allocations on the update path (asserted by "
                  f"`pcw_um_updates_allocate_nothing_and_call_perflib_once_each_as_c_does`) | "
                  f"{fmt_count(per_unit('um/update/1/ours'))} against "
                  f"{fmt_count(per_unit('um/update/1/c'))} = {fmt_ratio(r)}; allocations "
                  f"{rows['um/update/1/ours']['allocs']} | "
                  f"{met(r is not None and r <= 1.0 and rows['um/update/1/ours']['allocs'] == 0)}"
                  f"{miss_note(r is not None and r <= 1.0, 'um/update/1/ours')} |")
    md.append("")
    md.append("Earlier waves' targets:")
    md.append("")
    lo, hi = per_call("callback/id/100/ours"), per_call(f"callback/id/{max(ns)}/ours")
    r = ratio(hi, lo)
    md.append(f"- InstanceId filter constant: ours N={max(ns):,} / N=100 = {fmt_ratio(r)} "
              f"(target ≤ 1.20)" + ("" if r is None else (" — **met**" if r <= 1.2 else " — **missed**"))
              + f"; the C linear scan: {fmt_ratio(ratio(per_call(f'callback/id/{max(ns)}/c'), per_call('callback/id/100/c')))}")
    for fam in ["long-a", "long-scan"]:
        a, s = per_call(f"match/adversarial-{fam}/1/ours"), per_call(f"match/*-{fam}/1/ours")
        ca = per_call(f"match/adversarial-{fam}/1/c")
        capped = rows.get(f"match/adversarial-{fam}/1/c", {}).get("capped", 0)
        cb_n = max((n for n in ns if f"callback/mask-adversarial-{fam}/{n}/ours" in rows), default=None)
        cb = None
        if cb_n is not None:
            cb = ratio(per_unit(f"callback/mask-adversarial-{fam}/{cb_n}/ours"),
                       per_unit(f"callback/mask-*-{fam}/{cb_n}/ours"))
        # The target compares the matcher on the two masks over the same name; the callback
        # ratio is shown too, but there `*` never reaches the matcher (a match-all mask is
        # recognised once per query), so it compares with ~35 instructions of plain callback.
        m = ratio(a, s)
        adv = "" if m is None else (" — **met**" if m <= 20 else " — **missed**")
        md.append(
            f"- Adversarial mask over a 1000-unit `{fam}` name: matcher alone {fmt_count(a)} Ir "
            f"vs {fmt_count(s)} for `*` = {fmt_ratio(m)} (target ≤ 20){adv}; whole callback "
            f"per instance, adversarial / `*` = {fmt_ratio(cb)} at N={cb_n} (there `*` skips the "
            f"matcher). Naive C matcher: "
            f"{fmt_count(ca)} Ir" + (", **stopped at its cap** of `C_MATCH_CAP` recursive "
                                      "steps (a lower bound; it would not finish)" if capped else ", finished"))
    for v1n, target in [(10_000, 1.5), (100_000, 1.3)]:
        if f"v1/collect/{v1n}/ours" not in rows:
            continue
        rt = ratio(t(f"v1/collect/{v1n}/ours"), t(f"v1/collect/{v1n}/memcpy"))
        rd = ratio(t(f"v1/collect/{v1n}/ours-desc"), t(f"v1/collect/{v1n}/memcpy"))
        rc = ratio(t(f"v1/collect/{v1n}/c"), t(f"v1/collect/{v1n}/memcpy"))
        md.append(f"- V1 collect at N={v1n:,}, 4 counters, from the DLL's snapshot source, "
                  f"ours/memcpy time = {fmt_ratio(rt)} (target ≤ {target:.2f})" + verdict(rt, target)
                  + f"; from fixed data (`ObjectDesc`, sizing pass): {fmt_ratio(rd)}; the C "
                  f"baseline/memcpy: {fmt_ratio(rc)}")
    image_ir = load_image(out_dir)
    host = per_unit(f"callback/driver/{small_n}/host")
    if img3 is not None and host3 is not None and image_ir is not None:
        total = image_ir[0]
        img = total / rows[f"callback/driver/{small_n}/image"]["reps"] / small_n
        md.append(f"- Shipped image (`target/windows/pcw_driver.sys` run by `crates/pcw-loader`, "
                  f"its Geometric Waves callback over its 3 waves, full request, kernel routines "
                  f"in the loader's benchmark mode) against the host build (the same callback "
                  f"over the same 3 waves, no-op PCW, called through a pointer as the image's is), "
                  f"the driver's own code on both sides (the loader's routines, the no-op PCW's "
                  f"and the measuring loops left out), per call divided by the 3 waves: "
                  f"{fmt_count(img3 / small_n)} instructions against {fmt_count(host3 / small_n)} = "
                  f"{fmt_ratio(ratio(img3, host3))} (earlier target ≤ 1.10)"
                  + verdict(ratio(img3, host3), 1.1) + f"; with them, {fmt_count(img)} "
                  f"against {fmt_count(host)} = {fmt_ratio(ratio(img, host))} (the loader's "
                  f"routines are `extern \"win64\"` functions running on Linux, not the kernel's)"
                  + (f"; the KCS-style C callback over 3 instances, full request, with its no-op "
                     f"PCW: {fmt_count(per_unit('callback/driver/3/c'))} per instance (the host "
                     f"build with its no-op PCW / C = "
                     f"{fmt_ratio(ratio(host, per_unit('callback/driver/3/c')))})"
                     if per_unit('callback/driver/3/c') is not None else "")
                  + ". Profiles: `cg.image.annotate.txt`, `cg.image64.annotate.txt`")
    md.append("")

    # ---- matcher
    md.append("### Matcher alone, one 1000-unit name")
    md.append("")
    md.append("| mask / name | ours Ir | naive C Ir | C capped |")
    md.append("|---|---:|---:|---:|")
    for label in rows:
        s, v, n, side = split(label)
        if s == "match" and side == "ours":
            c = f"match/{v}/{n}/c"
            md.append(f"| `{v}` | {fmt_count(per_call(label))} | {fmt_count(per_call(c))} | "
                      f"{'yes' if rows.get(c, {}).get('capped') else 'no'} |")
    md.append("")

    # ---- V1
    v1ns = sorted({split(l)[2] for l in rows if l.startswith("v1/")})
    md.append("### V1 collect (`Global`, one object, 4 counters)")
    md.append("")
    md.append("memcpy is compared in time only: valgrind counts every iteration of the "
              "`rep movsb` glibc uses for some sizes as one instruction, so its instruction "
              "count is not a cost.")
    md.append("")
    md.append("`ours` reads the DLL's source (a parsed snapshot, whose records are already the V1 "
              "instances: the object's definitions, then one copy of the set's records — a "
              "`memcpy`, so its instruction count undercounts as `memcpy`'s does; compare times); "
              "`desc` reads fixed data (`ObjectDesc`: names and values behind pointers, a sizing "
              "pass first, then the per-instance writer).")
    md.append("")
    md.append("| N | ours Ir/inst | desc Ir/inst | C Ir/inst | ours/C (Ir) | ours/C (time) | ours/memcpy (time) | desc/memcpy (time) | C/memcpy (time) |")
    md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in v1ns:
        o, d, c, m = (f"v1/collect/{n}/{s}" for s in ("ours", "ours-desc", "c", "memcpy"))
        md.append(f"| {n:,} | {fmt_count(per_unit(o))} | {fmt_count(per_unit(d))} | "
                  f"{fmt_count(per_unit(c))} | "
                  f"{fmt_ratio(ratio(per_unit(o), per_unit(c)))} | "
                  f"{fmt_ratio(ratio(t(o), t(c)))} | {fmt_ratio(ratio(t(o), t(m)))} | "
                  f"{fmt_ratio(ratio(t(d), t(m)))} | {fmt_ratio(ratio(t(c), t(m)))} |")
    md.append("")
    md.append("Growth exponents (instructions per call, N ≥ 100): "
              + ", ".join(f"{s} {fmt_ratio(exponent([(n, per_call(f'v1/collect/{n}/{s}')) for n in v1ns]))}"
                          for s in ("ours", "ours-desc", "c")))
    md.append("")

    # ---- device path
    dns = sorted({split(l)[2] for l in rows if l.startswith("device/")})
    if dns:
        md.append("### Device path end to end (driver snapshot + DLL parse + V1 write), 4 counters")
        md.append("")
        md.append("memcpy: of the V1 output. Neither side includes the system call or the I/O "
                  "manager's copy of the buffered IOCTL's output. Our V1 write copies the "
                  "snapshot's records with one `memcpy` per set, which valgrind undercounts. "
                  "In place: the two passes a design writing the records straight into the "
                  "reply's buffer would keep (the driver's encode there and the DLL's check "
                  "there, `device::in_place_floor`), a lower bound for it.")
        md.append("")
        md.append("| N | ours Ir/inst | C Ir/inst | ours/C (Ir) | ours/C (time) | ours/memcpy (time) | C/memcpy (time) | in place Ir/inst | in place/memcpy (time) |")
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in dns:
            o, c, m = (f"device/path/{n}/{s}" for s in ("ours", "c", "memcpy"))
            f = f"device/in-place/{n}/ours"
            md.append(f"| {n:,} | {fmt_count(per_unit(o))} | {fmt_count(per_unit(c))} | "
                      f"{fmt_ratio(ratio(per_unit(o), per_unit(c)))} | "
                      f"{fmt_ratio(ratio(t(o), t(c)))} | {fmt_ratio(ratio(t(o), t(m)))} | "
                      f"{fmt_ratio(ratio(t(c), t(m)))} | "
                      f"{fmt_count(per_unit(f)) if f in rows else '–'} | "
                      f"{fmt_ratio(ratio(t(f), t(m))) if f in rows else '–'} |")
        md.append("")

    # ---- snapshot
    sns = sorted({split(l)[2] for l in rows if l.startswith("snapshot/")})
    md.append("### Snapshot codec (driver → DLL), 4 counters")
    md.append("")
    md.append("decode: what the DLL does before writing (`Snapshot::parse`, which checks every "
              "byte, and its own check of the sets' kinds); memcpy: of the snapshot.")
    md.append("")
    md.append("| N | encode Ir/inst | decode Ir/inst | encode/memcpy (time) | decode/memcpy (time) |")
    md.append("|---:|---:|---:|---:|---:|")
    for n in sns:
        e, d, m = f"snapshot/encode/{n}/ours", f"snapshot/decode/{n}/ours", f"snapshot/memcpy/{n}/memcpy"
        md.append(f"| {n:,} | {fmt_count(per_unit(e))} | {fmt_count(per_unit(d))} | "
                  f"{fmt_ratio(ratio(t(e), t(m)))} | {fmt_ratio(ratio(t(d), t(m)))} |")
    md.append("")

    # ---- names of other lengths
    lengths = [("", "12"), ("-short", "4"), ("-long", "43")]
    if any(l.startswith("snapshot/encode-") for l in rows):
        md.append("### Names of other lengths: codec and device path")
        md.append("")
        md.append("The tables above name their instances `Queue 000000` (12 UTF-16 units), "
                  "which the writer copies inline; `Q000` (4 units) and "
                  "`Queue 000000 of the receive side of adapter` (43 units) take its other "
                  "copies. Same calls, same 4 counters.")
        md.append("")
        md.append("| name units | N | encode Ir/inst | decode Ir/inst | encode/memcpy (time) | "
                  "decode/memcpy (time) | device path ours Ir/inst | C Ir/inst | ours/C (Ir) | "
                  "ours/C (time) |")
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for suffix, units in lengths:
            for n in sns:
                e, d, m = (f"snapshot/{v}{suffix}/{n}/{s}"
                           for v, s in (("encode", "ours"), ("decode", "ours"), ("memcpy", "memcpy")))
                o, c = (f"device/path{suffix}/{n}/{s}" for s in ("ours", "c"))
                if e not in rows:
                    continue
                md.append(f"| {units} | {n:,} | {fmt_count(per_unit(e))} | {fmt_count(per_unit(d))} | "
                          f"{fmt_ratio(ratio(t(e), t(m)))} | {fmt_ratio(ratio(t(d), t(m)))} | "
                          f"{fmt_count(per_unit(o))} | {fmt_count(per_unit(c))} | "
                          f"{fmt_ratio(ratio(per_unit(o), per_unit(c)))} | "
                          f"{fmt_ratio(ratio(t(o), t(c)))} |")
        md.append("")

    # ---- user-mode provider
    if any(l.startswith("um/") for l in rows):
        md.append("### User-mode provider (pcw-um) against the Perflib C way, stand-in Perflib")
        md.append("")
        md.append("Per unit: per update for `update` (three: Depth set, Bytes set, Packets + 1), "
                  "per store for `store`, per instance made and deleted for `create-delete`. "
                  "The stand-in Perflib (`pcw_bench::noop_perflib!`) does nothing and is called "
                  "by both sides; `c-direct` stores into the instance block's counter data "
                  "instead of calling the setters, `store/lookup` looks the reference counter "
                  "up by id (what pcw-gen's typed code does) before storing.")
        md.append("")
        md.append("| case | side | Ir/unit | / C (Ir) | / C (time) | allocations |")
        md.append("|---|---|---:|---:|---:|---:|")
        for label in rows:
            sc, v, n, side = split(label)
            if sc != "um":
                continue
            c = f"um/{v}/{n}/c"
            md.append(f"| `{v}` | `{side}` | {fmt_count(per_unit(label))} | "
                      f"{fmt_ratio(ratio(per_unit(label), per_unit(c)))} | "
                      f"{fmt_ratio(ratio(t(label), t(c)))} | {rows[label]['allocs']} |")
        md.append("")
        um_sim = sorted({split(l)[2] for l in times if l.startswith("sim/um-collect/")})
        if um_sim:
            md.append("A collection of each provider's set through pcw-sim's simulated Perflib "
                      "(`usermode::collect`, which reads every instance's values and allocates "
                      "its result; criterion time, ours / C): "
                      + ", ".join(f"N={n:,}: {fmt_ratio(ratio(t(f'sim/um-collect/{n}/ours'), t(f'sim/um-collect/{n}/c')))}"
                                  for n in um_sim) + ".")
            md.append("")

    # ---- sim
    sim = sorted({split(l)[2] for l in times if l.startswith("sim/full/")})
    if sim:
        md.append("### Callback under pcw-sim's PCW (criterion time, ours / C)")
        md.append("")
        md.append("| N | ours/C |")
        md.append("|---:|---:|")
        for n in sim:
            md.append(f"| {n:,} | {fmt_ratio(ratio(t(f'sim/full/{n}/ours'), t(f'sim/full/{n}/c')))} |")
        md.append("")
    # The manifest tools' scaling (benches/manifest.rs and the `pcw lint` binary), a table of
    # its own: report_manifest.py.
    md.extend(report_manifest.section(out_dir, times, manifest_fastest))
    md.append(END)
    text = "\n".join(md) + "\n"

    if to_stdout:
        sys.stdout.write(text)
        return
    path = "BENCHMARKS.md"
    doc = open(path).read() if os.path.exists(path) else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN in doc and END in doc:
        doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", lambda _: text, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(doc)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
