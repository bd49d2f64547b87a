#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The "manifest tools scaling" part of BENCHMARKS.md's generated section (report.py calls
`section`): the criterion medians and fastest calls of benches/manifest.rs
(`manifest/<operation>/<N>`), its interleaved pairs (`manifest-pair` lines of
criterion-manifest.log), and the
`pcw lint` binary's runs on a generated manifest that scripts/bench.sh records in
manifest-cli.tsv (`lint`, N, wall, user and system seconds per run) and manifest-lint.log (the
last run's output). These are times: what grows linearly is the point, so the table gives the
seconds, the time per counter and the ratio of the two largest N."""

import datetime
import os
import re
import subprocess
import sys

from report_common import END as SECTION_END, exponent, load_criterion, load_fastest

BEGIN = "<!-- bench-manifest:begin -->"
END = "<!-- bench-manifest:end -->"

# (criterion name, what it measures), in table order.
OPERATIONS = [
    ("lint", "lint (`analyze` + fleet lints), kernel mode, schema 2.0"),
    ("generate", "generate (every output), kernel mode, schema 2.0"),
    ("inspect", "inspect (document + JSON), kernel mode, schema 2.0"),
    ("lint-user", "lint, user mode, schema 1.1"),
    ("lint-one-line", "lint, kernel mode, the whole manifest on one line"),
]
TARGET = 2.3


def fmt_seconds(x):
    return "–" if x is None else f"{x:.3f}"


def load_cli(out_dir):
    """The `pcw lint` runs: N, (wall-clock, CPU) seconds of each run, the last run's summary."""
    path = os.path.join(out_dir, "manifest-cli.tsv")
    if not os.path.exists(path):
        return None
    n, runs = None, []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[0] == "lint":
                n = int(parts[1])
                runs.append((float(parts[2]), float(parts[3]) + float(parts[4])))
    summary = ""
    log = os.path.join(out_dir, "manifest-lint.log")
    if os.path.exists(log):
        with open(log) as f:
            lines = [l.strip() for l in f if l.strip()]
        summary = lines[-1] if lines else ""
    return (n, runs, summary) if runs else None


def load_pairs(out_dir):
    """The interleaved pairs benches/manifest.rs prints after criterion's output
    (`manifest-pair`, operation, the two N, their calls' ns), as each pair's ratio (larger N's
    call over the smaller's) by operation, with the two N."""
    path = os.path.join(out_dir, "criterion-manifest.log")
    pairs = {}
    if not os.path.exists(path):
        return pairs
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 6 and parts[0] == "manifest-pair" and int(parts[4]) > 0:
                ns, ratios = pairs.setdefault(parts[1], ((int(parts[2]), int(parts[3])), []))
                ratios.append(int(parts[5]) / int(parts[4]))
    return pairs


def median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def by_operation(times):
    """`manifest/<operation>/<N>` ids' times (ns) as seconds, by operation, then by N."""
    by_op = {}
    for full_id, ns in times.items():
        parts = full_id.split("/")
        if len(parts) == 3 and parts[0] == "manifest" and parts[2].isdigit():
            by_op.setdefault(parts[1], {})[int(parts[2])] = ns / 1e9
    return by_op


def growth(row):
    """The largest N's time over the time of half as many counters (None without that N)."""
    big = max(row)
    half = row.get(big // 2)
    return None if half is None or half == 0 else row[big] / half


def section(out_dir, times, fastest):
    """Markdown lines for the generated section; `times` maps criterion ids to medians (ns),
    `fastest` to their fastest calls (ns)."""

    by_op = by_operation(times)
    fast_by_op = by_operation(fastest)
    cli = load_cli(out_dir)
    if not by_op and cli is None:
        return []
    ns = sorted({n for op in by_op.values() for n in op})
    md = [BEGIN, "", "### Manifest tools scaling", ""]
    md.append("Seconds per call (criterion median of 10 calls, the thread's CPU time) over "
              "generated manifests of N counters (`benches/manifest.rs`, one set per 500 "
              "counters), then the time per counter and the growth from the pair's smaller N "
              f"to its larger, twice as many counters (target ≤ {TARGET:.2f}): the verdict is "
              "the median of the ratios of interleaved pairs (a call on each manifest, one "
              "after the other, the order alternating), which a slow spell of the machine "
              "slows on both sides; beside it their range, and the ratios of the criterion "
              "runs' fastest calls and medians, each size timed minutes apart; last the "
              "least-squares exponent k of the medians, time ∝ N^k.")
    md.append("")
    md.append("| operation | " + " | ".join(f"N={n:,}" for n in ns)
              + " | µs/counter (largest N) | growth, interleaved pairs (range) "
              "| fastest | median | k |")
    md.append("|---|" + "---:|" * len(ns) + "---:|---:|---:|---:|---:|")
    verdicts = []
    pairs = load_pairs(out_dir)
    for op, label in OPERATIONS:
        row = by_op.get(op)
        if not row:
            continue
        big = max(row)
        median_ratio = growth(row)
        fast = fast_by_op.get(op)
        fast_ratio = growth(fast) if fast else None
        k = exponent(sorted(row.items()))
        (small_n, large_n), ratios = pairs.get(op, ((None, None), []))
        pair = median(ratios) if ratios else None
        pair_cell = "–" if pair is None else (
            f"{pair:.2f} ({min(ratios):.2f}–{max(ratios):.2f}, {len(ratios)} pairs)")
        md.append(f"| {label} | " + " | ".join(fmt_seconds(row.get(n)) for n in ns)
                  + f" | {row[big] / big * 1e6:.1f}"
                  + f" | {pair_cell}"
                  + f" | {'–' if fast_ratio is None else f'{fast_ratio:.2f}'}"
                  + f" | {'–' if median_ratio is None else f'{median_ratio:.2f}'}"
                  + f" | {'–' if k is None else f'{k:.2f}'} |")
        if pair is not None:
            verdicts.append(f"{op} {pair:.2f}" + (" met" if pair <= TARGET else " **missed**")
                            + f" ({small_n:,} → {large_n:,} counters, median of "
                            + f"{len(ratios)} pairs)")
        else:
            verdicts.append(f"{op}: no interleaved pairs recorded, **no verdict**")
    md.append("")
    if verdicts:
        md.append(f"- Time for twice the counters within {TARGET:.2f}× (interleaved pairs): "
                  + ", ".join(verdicts))
    if cli is not None:
        n, runs, summary = cli
        runs = sorted(runs)
        wall, cpu = runs[len(runs) // 2]
        md.append(f"- `pcw lint` (release binary, the file read, every diagnostic printed) on "
                  f"a generated {n:,}-counter manifest: {wall:.2f} s wall clock, {cpu:.2f} s "
                  f"of CPU (user + system; the median run of {len(runs)}, by wall clock: "
                  + ", ".join(f"{w:.2f}" for w, _ in runs) + " s)"
                  + (f"; its verdict: `{summary}`" if summary else ""))
    md.append(f"- Run: {run_facts(out_dir)}")
    md.append("")
    md.append(END)
    return md


def run_facts(out_dir):
    """When and where the figures were taken (the table may come from a `--manifest` run,
    apart from the rest of the generated section)."""
    path = os.path.join(out_dir, "manifest-cli.tsv")
    when = datetime.datetime.fromtimestamp(
        os.path.getmtime(path) if os.path.exists(path) else 0, datetime.timezone.utc)
    cpu = "unknown cpu"
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    try:
        rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rustc = "rustc unknown"
    return f"{when:%Y-%m-%dT%H:%MZ}, {cpu}, nproc {os.cpu_count()}, {rustc}"


def main():
    """`report_manifest.py OUT_DIR TARGET [--stdout]`: the table alone (scripts/bench.sh
    --manifest), spliced into BENCHMARKS.md's generated section in place of the previous one
    (or before the section's end), leaving the other figures as they are."""

    out_dir, target = sys.argv[1], sys.argv[2]
    lines = section(out_dir, {k: v for k, v in load_criterion(target).items()
                              if k.startswith("manifest/")}, load_fastest(target, "manifest/"))
    if not lines:
        sys.exit("error: no manifest-tools figures in " + out_dir)
    text = "\n".join(lines) + "\n"
    if "--stdout" in sys.argv:
        sys.stdout.write(text)
        return
    path = "BENCHMARKS.md"
    with open(path) as f:
        doc = f.read()
    if BEGIN in doc and END in doc:
        doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", lambda _: text, doc,
                     flags=re.S)
    elif SECTION_END in doc:
        doc = doc.replace(SECTION_END, text + SECTION_END, 1)
    else:
        sys.exit(f"error: {path} has no generated section ({SECTION_END})")
    with open(path, "w") as f:
        f.write(doc)
    print(f"wrote the manifest tools' table into {path}")


if __name__ == "__main__":
    main()
