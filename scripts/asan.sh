#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The workspace tests under AddressSanitizer (RELIABILITY.md): nightly `-Zsanitizer=address`,
# `--target` given explicitly so that build scripts and proc-macros are built without the flag,
# in their own target directory (target/asan; PCW_ASAN_TARGET_DIR overrides). Covers the
# simulator's raw-pointer paths (PCW buffers, Perflib's guarded host), the perf DLL's exported
# functions (its cdylib, instrumented too, dlopen'ed by pcw-perfdll's tests: the test
# executables export the ASan runtime's symbols with --export-dynamic so that the DLL resolves
# them) and the driver's callbacks and IOCTL dispatch. LeakSanitizer is on; scripts/lsan.supp
# lists the deliberate leaks of test code, each with its reason.
# No crate is excluded. Extra arguments go to `cargo test` (e.g. `-p pcw-sim`).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "error: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 1
fi
host=x86_64-unknown-linux-gnu
dir="${PCW_ASAN_TARGET_DIR:-$(pwd)/target/asan}"
export CARGO_TARGET_DIR="$dir"
export RUSTFLAGS="-Zsanitizer=address -Clink-arg=-Wl,--export-dynamic"
export RUSTDOCFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$(pwd)/scripts/lsan.supp:print_suppressions=0"
# pcw-perfdll's dump test runs the `pcw` binary; the instrumented one.
cargo +nightly build --locked --target "$host" -p pcw-cli --bin pcw
PCW_BIN="$dir/$host/debug/pcw" cargo +nightly test --locked --target "$host" --workspace "$@"
