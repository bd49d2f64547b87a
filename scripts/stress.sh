#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The concurrent stress tests in release mode, for a fixed iteration count (RELIABILITY.md): every
# test that runs threads against each other, with its round counts multiplied by
# PCW_STRESS_SCALE (default 200; plain `cargo test` runs them at scale 1):
#   pcw-core    registry::tests::readers_run_while_writers_churn        4 × 1000·scale reads
#   pcw-sim     kernel_pcw concurrent_collection_from_eight_threads         8 × 200·scale collections
#   pcw-driver  driver eight_collectors_while_queues_come_and_go         8 × 50·scale collections
#   pcw-perfdll cdylib eight_threads_open_collect_close_concurrently     8 × 150·scale Open/Collect/Close
#   pcw-perfdll roundtrip eight_threads_open_collect_close_while_the_driver_churns
#                                                                        8 × 20·scale Open/Collect/Close
# Readers and collectors run their fixed count; the churning thread runs for as long as any of
# them does (and at least its own minimum), so every collection races the churn. Each test
# prints what it did ("stress: …").
#
# Profile `stress` (Cargo.toml): the release profile without LTO. Only these test targets are
# built. Its own target directory: the profile shares nothing with the debug builds anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
export PCW_STRESS_SCALE="${PCW_STRESS_SCALE:-200}"
export CARGO_TARGET_DIR="${PCW_STRESS_TARGET_DIR:-${CARGO_TARGET_DIR:-$(pwd)/target}}"
cargo test --profile stress --locked -p pcw-core --lib -- --exact --nocapture \
  registry::tests::readers_run_while_writers_churn
cargo test --profile stress --locked -p pcw-sim -p pcw-driver -p pcw-perfdll \
  --test kernel_pcw --test driver --test cdylib --test roundtrip -- --exact --nocapture \
  concurrent_collection_from_eight_threads \
  eight_collectors_while_queues_come_and_go \
  eight_threads_open_collect_close_concurrently \
  eight_threads_open_collect_close_while_the_driver_churns
