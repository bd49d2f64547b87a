#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 30): scripts/fuzz.sh [SECONDS] [TARGET…]
# Needs the nightly toolchain (rustup) and installs cargo-fuzz from crates.io when missing.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-30}
shift || true
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
for t in "${targets[@]}"; do
  # Seed corpora are committed under fuzz/corpus/<target>; new finds are added there too.
  mkdir -p "corpus/$t"
  # The decoder starts from the dump fixtures: well-formed blocks it can mutate into deep cases.
  if [ "$t" = v1_validate ]; then
    cp -n ../crates/pcw-cli/tests/fixtures/*.perf "corpus/$t/" 2>/dev/null || true
  fi
  echo "== fuzzing $t for ${seconds}s"
  cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$seconds" -rss_limit_mb=2048
done
