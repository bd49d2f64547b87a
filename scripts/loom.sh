#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The loom models (RELIABILITY.md): every interleaving, up to LOOM_MAX_PREEMPTIONS
# (default 3) preemptions, of small concurrent cases —
#   * the instance registry and its SpinRwLock: create/close/collect
#     (`registry::loom_model` in crates/pcw-core/src/registry.rs);
#   * the driver's statistics: AddCounter/RemoveCounter gating of the collection timing,
#     collections and readers (`stats::collect::loom_model` in src/stats/collect.rs, the driver).
# Every model is a `loom_*` test of pcw-core's or the driver's lib, selected by the filter below.
# `--cfg loom` swaps loom's atomics, cell and spin hint into those modules; the ordinary build is
# untouched. Its own target directory keeps the cfg change from invalidating the main cache.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
CARGO_TARGET_DIR="${PCW_LOOM_TARGET_DIR:-$(pwd)/target/loom}" \
  cargo test --release --locked -p pcw-core -p pcw-driver --lib loom_ -- --test-threads=1 "$@"
