#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Runs every cargo-fuzz target for SECONDS each (default 30): scripts/fuzz.sh [SECONDS] [TARGET…]
#
# Needs the nightly toolchain (rustup) and cargo-fuzz (installed from crates.io when missing).
# The tree is never written to: each target's run corpus and crash artifacts live under
# $PCW_FUZZ_DIR (default target/fuzz-run/<target>/); the committed seed corpus of every target
# (fuzz/corpus/<target>, minimised with `cargo fuzz cmin`) and the project's own fixtures
# (copied at run time, see `seed` below) are read-only inputs. Every target is run even if an
# earlier one crashes; the script then exits non-zero and names the crashing targets and their
# artifacts. Each run's libFuzzer log is kept in $PCW_FUZZ_DIR/<target>.log and a one-line
# summary (executions, cov, ft, corpus) is printed. scripts/test.sh (CI) runs it for 10 s.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds=${1:-30}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS] [TARGET…]  (SECONDS a positive integer, got '$seconds')" >&2
  exit 2
fi
shift || true
run_dir="${PCW_FUZZ_DIR:-$root/target/fuzz-run}"
build_dir="${PCW_FUZZ_TARGET_DIR:-$root/target/fuzz}"
cd "$root/fuzz"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "error: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz from crates.io" >&2
  cargo install cargo-fuzz --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
known=$(cargo +nightly fuzz list)
for t in "${targets[@]}"; do
  if ! grep -qx -- "$t" <<<"$known"; then
    echo "error: no fuzz target '$t' (targets: $(tr '\n' ' ' <<<"$known"))" >&2
    exit 2
  fi
done

# Seeds from the project's own fixtures, copied into the run corpus (never into the tree).
seed() {
  local t=$1 dest=$2
  case "$t" in
    v1_validate) cp -n "$root"/crates/pcw-cli/tests/fixtures/*.perf "$dest/" 2>/dev/null || true ;;
    manifest_analyze | manifest_generate)
      cp -n "$root"/manifest/*.man "$dest/" 2>/dev/null || true
      for m in "$root"/crates/pcw-gen/tests/manifests/*.man; do
        [ -e "$m" ] && cp -n "$m" "$dest/$(basename "$(dirname "$m")")_$(basename "$m")"
      done
      ;;
  esac
}

echo "== building ${#targets[@]} fuzz targets (cargo +nightly fuzz build, $build_dir)"
for t in "${targets[@]}"; do
  cargo +nightly fuzz build --target-dir "$build_dir" "$t"
done

failed=()
summary=()
for t in "${targets[@]}"; do
  work="$run_dir/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  seed "$t" "$work/corpus"
  inputs=("$work/corpus")
  if [ ! -d "$root/fuzz/corpus/$t" ]; then
    echo "error: no committed seed corpus fuzz/corpus/$t (every target needs one)" >&2
    exit 2
  fi
  inputs+=("$root/fuzz/corpus/$t")
  echo "== fuzzing $t for ${seconds}s (log: $run_dir/$t.log)"
  set +e
  cargo +nightly fuzz run --target-dir "$build_dir" "$t" "${inputs[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" >"$run_dir/$t.log" 2>&1
  rc=$?
  set -e
  last=$(grep -E '^#[0-9]+' "$run_dir/$t.log" | tail -n 1 || true)
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$run_dir/$t.log" | grep -Eo '[0-9]+$' || true)
  line="$t: rc=$rc execs=${execs:-?} last: ${last:-?}"
  summary+=("$line")
  if [ $rc -ne 0 ]; then
    failed+=("$t")
    tail -n 40 "$run_dir/$t.log" >&2
    echo "!! $t failed; artifacts: $(ls "$work/artifacts" | tr '\n' ' ')" >&2
  fi
done

echo
echo "== fuzz summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "error: fuzz targets failed: ${failed[*]} (inputs under $run_dir/<target>/artifacts)" >&2
  exit 1
fi
