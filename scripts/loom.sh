#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The loom models (RELIABILITY.md): every interleaving, up to LOOM_MAX_PREEMPTIONS
# (default 3) preemptions, of small concurrent cases —
#   * the instance registry and its SpinRwLock: create/close/collect
#     (`registry::loom_model` in crates/pcw-core/src/registry.rs);
#   * the driver's statistics: AddCounter/RemoveCounter gating of the collection timing,
#     collections and readers (`loom_model` in src/stats/collect.rs, compiled by tests/loom_stats.rs).
# Every model is a `loom_*` test, selected by the filter below.
# `--cfg loom` (pcw-core) and `--cfg loom_driver` (the driver) swap loom's atomics, cell and spin
# hint into those modules; the ordinary build is untouched. Their own target directories keep
# the cfg change from invalidating the main cache.
set -euo pipefail
cd "$(dirname "$0")/.."
flags="${RUSTFLAGS:-}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
target="${PCW_LOOM_TARGET_DIR:-$(pwd)/target/loom}"
RUSTFLAGS="--cfg loom $flags" CARGO_TARGET_DIR="$target" \
  cargo test --release --locked -p pcw-core --lib loom_ -- --test-threads=1 "$@"
# The driver's statistics under `--cfg loom_driver`: pcw-core, an ordinary dependency there,
# keeps its own atomics.
RUSTFLAGS="--cfg loom_driver $flags" CARGO_TARGET_DIR="$target-driver" \
  cargo test --release --locked -p pcw-driver --test loom_stats loom_ -- --test-threads=1 "$@"
