#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The benchmarks in one run (BENCHMARKS.md): criterion (times, reported as ratios) for the no-op-PCW
# and pcw-sim benches, then callgrind (instruction counts, deterministic on a noisy machine) on the
# pcw-bench-cg driver, and the generated section of BENCHMARKS.md rewritten from both.
# The manifest tools' scaling (criterion over generated manifests of 16 000 to 128 000 counters,
# then each operation's growth from 64 000 to 128 000 counters timed again in interleaved pairs,
# then the `pcw lint` binary on 100 000; N / 8 with --quick) adds a table of its own; about
# 10 minutes on 2 cores.
#
#   scripts/bench.sh            all N (1, 100, 10 000, 100 000); about 13 minutes on 2 cores
#   scripts/bench.sh --quick    N = 1 and 100 only
#   scripts/bench.sh --stdout   print the report instead of rewriting BENCHMARKS.md
#   scripts/bench.sh --manifest only the manifest tools: rewrites their table alone
#
# Needs valgrind (apt-get install valgrind; its headers give the client requests) and python3.
# The shipped image's figures need target/windows/pcw_driver.sys (scripts/cross-windows.sh, run
# first) and, per instance, the driver built again with 64 waves (cross-windows.sh
# --bench-image, run from here: the same Debian toolchain) and a disassembler (llvm-objdump, or
# the objdump of binutils-mingw-w64, which the cross-build installs) for report.py's check that
# its callback is the shipped one's.
# Not part of scripts/test.sh (CI time).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
report_args=()
manifest_only=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    --stdout) report_args+=(--stdout) ;;
    --manifest) manifest_only=1 ;;
    *) echo "usage: $0 [--quick] [--stdout] [--manifest]" >&2; exit 2 ;;
  esac
done
[ "$manifest_only" = 1 ] || command -v valgrind >/dev/null || { echo "error: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }

target="${CARGO_TARGET_DIR:-target}"
out="$target/pcw-bench-run"   # raw outputs of the last run: rows.tsv, cg.out.*, logs
rm -rf "$out"
mkdir -p "$out"

step() { printf '\n== %s\n' "$*" >&2; }
# The machine's load, recorded in the report: criterion's times are only as steady as the
# machine is quiet (the instruction counts do not depend on it).
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# The manifest tools' scaling: benches/manifest.rs (criterion), then `pcw lint` three times on a
# generated manifest; report_manifest.py reads manifest-cli.tsv and the last run's output.
manifest_tools() {
  step "manifest tools (criterion over generated manifests, then the pcw binary)"
  local env_=() n=100000
  [ ${#quick[@]} -gt 0 ] && env_=(PCW_BENCH_QUICK=1) && n=12500
  rm -rf "$target"/criterion/manifest_*   # a --manifest run keeps the other benches' results
  : >"$out/criterion-manifest.log"
  # One process per operation: measured in one process, whichever operation ran after a heavier
  # one grew more than 2.3x from 64 000 to 128 000 counters on the heap that one left (lint
  # 2.58x after generate and inspect; generate 2.48x and inspect 2.40x after lint; each about
  # 2.1x alone).
  local op
  for op in manifest/lint/ manifest/inspect/ manifest/generate/ manifest/lint-; do
    env "${env_[@]}" cargo bench -q -p pcw-bench --bench manifest -- "$op" \
      >>"$out/criterion-manifest.log" 2>&1 || { cat "$out/criterion-manifest.log" >&2; exit 1; }
  done
  cargo build -q --release -p pcw-cli -p pcw-bench --bin pcw --bin pcw-bench-manifest
  "$target/release/pcw-bench-manifest" "$n" >"$out/manifest-$n.man"
  for _ in 1 2 3; do
    # `pcw lint` exits 1 on an error; the generated manifest has none (`set -e` checks).
    TIMEFORMAT="lint	$n	%R	%U	%S"
    { time "$target/release/pcw" lint "$out/manifest-$n.man" >/dev/null 2>"$out/manifest-lint.log"; } \
      2>>"$out/manifest-cli.tsv"
  done
  rm "$out/manifest-$n.man"
}
if [ "$manifest_only" = 1 ]; then
  manifest_tools
  python3 crates/pcw-bench/report_manifest.py "$out" "$target" "${report_args[@]}"
  exit 0
fi

step "criterion (no-op PCW, then pcw-sim)"
rm -rf "$target/criterion"
bench_env=()
[ ${#quick[@]} -gt 0 ] && bench_env=(PCW_BENCH_QUICK=1)
env "${bench_env[@]}" cargo bench -q -p pcw-bench --bench noop >"$out/criterion-noop.log" 2>&1 \
  || { cat "$out/criterion-noop.log" >&2; exit 1; }
env "${bench_env[@]}" cargo bench -q -p pcw-bench --bench sim >"$out/criterion-sim.log" 2>&1 \
  || { cat "$out/criterion-sim.log" >&2; exit 1; }

step "callgrind (instruction counts)"
cargo build -q --release -p pcw-bench --bin pcw-bench-cg
# --skip-plt=no: with callgrind's default, cases whose code calls through the PLT (the C
# baselines' calls into libc) were charged over a thousand instructions too many in some dumps
# (the C V1 collect at N = 1 read 2 548 instead of 346; the C device path 1 692 instead of 591).
valgrind --tool=callgrind --skip-plt=no --callgrind-out-file="$out/cg.out" \
  "$target/release/pcw-bench-cg" "${quick[@]}" >"$out/rows.tsv" 2>"$out/valgrind.log" \
  || { tail -20 "$out/valgrind.log" >&2; exit 1; }

step "callgrind: the shipped image's callback (crates/pcw-loader's pcw-image-cg), and the same image with 64 waves"
# The shipped image has 3 waves, so its figure per call mixes what each instance costs with what
# the call costs once. The image built with the driver's `bench-waves` feature (64 waves, the same
# callback; report.py checks that its machine code is the shipped image's) gives the difference.
image=target/windows/pcw_driver.sys
image64=target/windows-bench/pcw_driver_64.sys
if [ -f "$image" ]; then
  cargo build -q --release -p pcw-loader --bin pcw-image-cg
  # The shipped image is whatever scripts/cross-windows.sh last built: say so when the sources
  # are newer (report.py then finds the benchmark image's callback different, and says why).
  if [ -n "$(find src crates/pcw-rt/src crates/pcw-core/src Cargo.lock -newer "$image" -print -quit)" ]; then
    echo "warning: $image is older than the driver's sources; run scripts/cross-windows.sh first" >&2
  fi
  runs=("image:$image")
  if scripts/cross-windows.sh --bench-image >"$out/cross-bench-image.log" 2>&1; then
    runs+=("image64:$image64")
  else
    tail -20 "$out/cross-bench-image.log" >&2
    echo "note: the 64-wave image did not build; the image is measured per call only" >&2
  fi
  for run in "${runs[@]}"; do
    name=${run%%:*} path=${run#*:}
    valgrind --tool=callgrind --skip-plt=no --toggle-collect=pcw_image_cg_measure \
      --callgrind-out-file="$out/cg.$name.out" "$target/release/pcw-image-cg" "$path" \
      >>"$out/rows.tsv" 2>"$out/valgrind-$name.log" \
      || { tail -20 "$out/valgrind-$name.log" >&2; exit 1; }
    callgrind_annotate --inclusive=yes "$out/cg.$name.out" >"$out/cg.$name.annotate.txt" 2>/dev/null
  done
  cp "$image" "$out/image.sys"
  [ ${#runs[@]} -lt 2 ] || cp "$image64" "$out/image64.sys"
else
  echo "note: $image is missing (run scripts/cross-windows.sh first); the shipped image is not measured" >&2
fi

{
  echo "command: scripts/bench.sh ${*:-}"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), nproc $(nproc)"
  echo "rustc: $(rustc --version)"
  echo "cc: $(cc --version | head -1) (C baselines at -O2)"
  echo "valgrind: $(valgrind --version)"
  echo "load average (1, 5, 15 min): $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
} >"$out/machine.txt"

manifest_tools

step "report"
python3 crates/pcw-bench/report.py "$out" "$target" "$out/machine.txt" "${report_args[@]}"
