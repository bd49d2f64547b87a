#!/usr/bin/env bash
# The one command that runs every check of pcw-rs, on a fresh Linux machine or in CI:
# formatting, clippy (warnings are errors), the workspace tests, and that the fuzz targets build.
# Later stages (the Windows cross-build and the Wine run) are added here as they land.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

need_rust_component() {
  if ! cargo "$1" --version >/dev/null 2>&1; then
    echo "error: 'cargo $1' is missing; install it with: rustup component add $2" >&2
    exit 1
  fi
}
need_rust_component fmt rustfmt
need_rust_component clippy clippy

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (workspace, all targets, -D warnings)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test (workspace)"
# pcw-perfdll's dump test runs the `pcw` binary; build it once here instead of in a nested build.
cargo build --locked -p pcw-cli --bin pcw
PCW_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/pcw" cargo test --workspace --locked

step "fuzz targets build (stable; scripts/fuzz.sh runs them with cargo-fuzz)"
cargo check --manifest-path fuzz/Cargo.toml --bins --locked

echo
echo "all checks passed"
