# SPDX-License-Identifier: MIT OR Apache-2.0
"""What report.py and report_manifest.py share: the markers of BENCHMARKS.md's generated
section, criterion's results, and the growth exponent of a cost over N."""

import glob
import json
import math
import os

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"


def benchmarks(target):
    """Each criterion benchmark of the last run: its id and the folder of its results."""
    for path in glob.glob(os.path.join(target, "criterion", "*", "new", "benchmark.json")):
        with open(path) as f:
            yield json.load(f)["full_id"], os.path.dirname(path)


def load_criterion(target):
    times = {}
    for full_id, folder in benchmarks(target):
        with open(os.path.join(folder, "estimates.json")) as f:
            times[full_id] = json.load(f)["median"]["point_estimate"]
    return times


def load_fastest(target, prefix):
    """The fastest sample of each criterion benchmark whose id starts with `prefix`: its time per
    iteration (ns), from the raw samples criterion keeps beside its estimates."""
    fastest = {}
    for full_id, folder in benchmarks(target):
        if not full_id.startswith(prefix):
            continue
        with open(os.path.join(folder, "sample.json")) as f:
            sample = json.load(f)
        per_iter = [t / i for t, i in zip(sample["times"], sample["iters"]) if i]
        if per_iter:
            fastest[full_id] = min(per_iter)
    return fastest


def exponent(points):
    """Least-squares slope of log(cost) over log(N), N >= 100."""
    pts = [(math.log(n), math.log(c)) for n, c in points if n >= 100 and c and c > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return None if den == 0 else sum((p[0] - mx) * (p[1] - my) for p in pts) / den
