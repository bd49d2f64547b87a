#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The one command that runs every check of pcw-rs, on a fresh Linux machine or in CI:
# formatting, clippy (warnings are errors), the workspace tests, a short run of every fuzz target, and
# the real Windows artifacts: cross-built with Debian's toolchain (installed when missing),
# PE-checked, run in the loader (the C example driver too), the driver's WDK flavour built from wdk-sys's own generated
# bindings and checked the same way, and the perf DLL run under Wine.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every build here starts from scratch in CI: incremental compilation would only add its caches
# (gigabytes) to the disk the stages share.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

target_dir="${CARGO_TARGET_DIR:-$(pwd)/target}"
mkdir -p "$target_dir"
# Free space on the disk the builds share, in GB.
free_gb() { df -P -BG "$target_dir" | awk 'NR == 2 { sub("G", "", $4); print $4 }'; }
# The same in MB, for the full-disk check (df rounds GB up).
free_mb() { df -P -BM "$target_dir" | awk 'NR == 2 { sub("M", "", $4); print $4 }'; }

# Each stage's header says how much disk is left: a stage that dies of a full disk often says
# something else (a linker killed by SIGBUS, a truncated file), and this line tells why.
step() { printf '\n== %s\n   (%s GB free on the disk of %s)\n' "$*" "$(free_gb)" "$target_dir"; }

# In CI (CI=true) a stage's own build directory is removed as soon as no later stage reads it,
# so the run's peak disk use stays about 6 GB lower (docs/test-stages.md gives the figures).
# Run by hand, the command keeps them: a second run reuses them. Only the default directories
# are removed: one named by an override (PCW_ASAN_TARGET_DIR and the like) is the caller's, a
# cache or a corpus kept on purpose.
prune() {
  if [ "${CI:-}" = true ]; then
    for dir in "$@"; do rm -rf "$dir"; done
  fi
}

# What the whole run takes of a fresh machine's disk, measured (README): the peak of its builds
# with pruning, and Debian's packages and toolchains. Less is warned about, not refused: a
# machine that has run it before already holds the packages and caches.
disk_needed_gb=14
if [ "$(free_gb)" -lt "$disk_needed_gb" ]; then
  echo "warning: $(free_gb) GB free on the disk of $target_dir; a run on a fresh machine needs about $disk_needed_gb GB" >&2
fi

# A failure with little disk left names the likely cause.
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ "$(free_mb)" -lt 2048 ]; then
    echo "error: the command failed with $(free_gb) GB free on the disk of $target_dir: a full disk is the likely cause (a run on a fresh machine needs about $disk_needed_gb GB)" >&2
  fi
}
trap on_exit EXIT

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

step "cargo doc (workspace, warnings are errors): every public item's documentation builds and every link in it resolves"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "cargo test (workspace)"
# pcw-perfdll's dump test runs the `pcw` binary; build it once here instead of in a nested build.
cargo build --locked -p pcw-cli --bin pcw
PCW_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/pcw" cargo test --workspace --locked

step "cargo publish --dry-run: the published crates package and build from their tarballs, in dependency order (the runtimes, the generator and its macro, the simulator and consumer, the loader, the test harness, the reference driver and example service the command bundles, the pcw command)"
# Cargo treats a registry crate as immutable: the verification build left in target/package
# and the sources it extracted from its temporary registry into CARGO_HOME (directories named
# `-<hash>`, one per checkout) would be reused by a later run of the same version even after
# our source changed. Start from neither.
published=(pcw-core pcw-io pcw-rt pcw-gen pcw-declare pcw-um pcw-sim pcw-pdh pcw-loader pcw-harness pcw-driver pcw-tidal pcw-cli)
rm -rf "${CARGO_TARGET_DIR:-$(pwd)/target}/package"
for crate in "${published[@]}"; do
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$crate"-[0-9]*
done
cargo publish --dry-run --locked "${published[@]/#/-p}" --features pcw-rt/windows-sys

step "the pcw command installed from its packaged crates into a fresh directory (cargo install --path), then run: a manifest linted, a driver crate created, the bundled driver sampled"
# Each published crate resolves to the tarball the dry run just verified (extracted under
# target/package), never to a registry crate of the same name.
package_dir="${CARGO_TARGET_DIR:-$(pwd)/target}/package"
install_root="$(pwd)/target/pcw-install"
rm -rf "$install_root"
patches=()
for crate in "${published[@]}"; do
  patches+=(--config "patch.crates-io.$crate.path=\"$package_dir/$crate-0.1.0\"")
done
# A debug build in the workspace's target directory: the third-party crates the workspace tests
# already built are reused (only the packaged crates of ours are compiled again), which keeps
# the stage to a minute instead of a whole release build with LTO.
cargo install --debug --offline --path "$package_dir/pcw-cli-0.1.0" --root "$install_root" "${patches[@]}"
installed="$install_root/bin/pcw"
"$installed" --version
"$installed" lint examples/checksum-driver/checksum_driver.man
scratch=$(mktemp -d)
"$installed" new "$scratch/installed-driver"
test -f "$scratch/installed-driver/installed_driver.man"
rm -rf "$scratch"
"$installed" typeperf "\Geometric Waves(*)\Triangle" -sc 2 -si 0.1 >/dev/null
# The packaged crates' verification builds; the installed command stays.
prune "$package_dir"

step "benches: build them and run each scenario once, untimed (criterion's test mode; scripts/bench.sh measures)"
cargo test --locked -p pcw-bench --benches

step "fuzz: every cargo-fuzz target for ${PCW_CI_FUZZ_SECONDS:=10} s from its committed seeds (scripts/fuzz.sh)"
# cargo-fuzz has no --locked: check fuzz/Cargo.lock first, so the build cannot quietly change it.
cargo metadata --manifest-path fuzz/Cargo.toml --locked --format-version 1 >/dev/null
bash scripts/fuzz.sh "$PCW_CI_FUZZ_SECONDS"
[ -n "${PCW_FUZZ_TARGET_DIR:-}" ] || prune "$(pwd)/target/fuzz"
[ -n "${PCW_FUZZ_DIR:-}" ] || prune "$(pwd)/target/fuzz-run"

step "AddressSanitizer: the workspace tests under nightly -Zsanitizer=address (scripts/asan.sh)"
bash scripts/asan.sh
# Its instrumented builds (about 4 GB), and the workspace tests' compile-fail crates.
[ -n "${PCW_ASAN_TARGET_DIR:-}" ] || prune "$(pwd)/target/asan"
prune "$target_dir/tests/trybuild"

step "loom: the registry's lock and the statistics' AddCounter gating, every interleaving of small cases (scripts/loom.sh)"
bash scripts/loom.sh
[ -n "${PCW_LOOM_TARGET_DIR:-}" ] || prune "$(pwd)/target/loom" "$(pwd)/target/loom-driver"

step "stress: the concurrent tests in release mode for a fixed iteration count (scripts/stress.sh)"
bash scripts/stress.sh
[ -n "${PCW_STRESS_TARGET_DIR:-}" ] || prune "$target_dir/stress"

step "Windows artifacts: cross-build with Debian's toolchain (scripts/cross-windows.sh)"
bash scripts/cross-windows.sh
# The mingw builds: their artifacts are in target/windows. (The MSVC and WDK builds stay: the
# analyses read their PDBs.)
prune "$(pwd)/target/xwin-gnu"

step "PE checks of target/windows, the counter names in both drivers' string resources included (crates/pcw-pecheck: tests/artifacts.rs, tests/analysis_artifacts.rs)"
PCW_WINDOWS_ARTIFACTS=target/windows \
  PCW_DRIVER_PDB=target/xwin-msvc/x86_64-pc-windows-msvc/release/pcw_driver.pdb \
  cargo test -p pcw-pecheck --test artifacts --test analysis_artifacts --locked

step "the shipped .sys executed: DriverEntry, callbacks, IOCTLs and DriverUnload of target/windows/pcw_driver.sys in the loader (crates/pcw-loader)"
PCW_DRIVER_IMAGE=target/windows/pcw_driver.sys cargo test -p pcw-loader --locked -- --nocapture

step "the example driver that gained counters: its tests through pcw-harness on target/windows/checksum_driver.sys (DriverEntry, IOCTLs, filtered collections, typeperf, DriverUnload), the installed pcw sampling it, then no panic and kernel constraints (pcw-pecheck --root)"
PCW_EXAMPLE_IMAGE=target/windows/checksum_driver.sys cargo test -p checksum-driver --locked -- --nocapture
"$installed" typeperf --image target/windows/checksum_driver.sys \
  --manifest examples/checksum-driver/checksum_driver.man "\Checksum Driver Algorithms(*)\*" -sc 2 -si 0.1
# pcw's own test of sampling another driver's image with its manifest (and with one that
# differs from what the image registers), skipped in the workspace run, which has no image yet.
PCW_EXAMPLE_IMAGE=target/windows/checksum_driver.sys cargo test -p pcw-cli --test typeperf --locked \
  any_driver_s_image_is_sampled_with_its_manifest
# The example's entry points for the code analyses: DriverEntry (from which the analyses also
# follow every routine it installs) and its Publish impl, which the PCW callback calls.
example_roots=(--root DriverEntry=DriverEntry --root 'the Publish impl (Algorithms::visit)=10Algorithms')
example_pdb=target/xwin-msvc/x86_64-pc-windows-msvc/release/checksum_driver.pdb
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- no-panic \
  --driver target/windows/checksum_driver.sys "$example_pdb" "${example_roots[@]}"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- kernel-constraints \
  target/windows/checksum_driver.sys "$example_pdb" "${example_roots[@]}"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- strings \
  target/windows/checksum_driver.sys examples/checksum-driver/checksum_driver.man

step "the scaffold: the crates pcw new wrote under target/scaffold (a fresh manifest, xdp_like.man and clashing_symbols.man), their own tests on their host builds and on the first two's images"
(cd target/scaffold && \
  FRESH_DRIVER_IMAGE="$(pwd)/../windows/fresh_driver.sys" \
  PORTED_DRIVER_IMAGE="$(pwd)/../windows/ported_driver.sys" \
  CARGO_TARGET_DIR="$(pwd)/.." cargo test --offline --workspace -- --nocapture)
for driver in fresh_driver ported_driver; do
  cargo run -q -p pcw-cli --bin pcw --locked -- typeperf -qx --image "target/windows/$driver.sys" \
    --manifest "target/scaffold/${driver/_/-}/$driver.man"
done

step "the C example driver (examples/c-driver, built with mingw-w64 by scripts/c-driver.sh during the cross-build): target/windows/c_driver.sys and its CR8 variant, linked without relocations, in the loader (crates/pcw-loader/tests/c_driver.rs) and through pcw-harness (crates/pcw-harness/tests/c_driver.rs), then sampled by the installed pcw"
PCW_C_DRIVER_IMAGE=target/windows/c_driver.sys cargo test -p pcw-loader --test c_driver --locked -- --nocapture
PCW_C_DRIVER_IMAGE=target/windows/c_driver_cr8.sys cargo test -p pcw-loader --test c_driver --locked -- --nocapture
# As a C driver's author tests it, through pcw-harness's public API and its manifest alone.
PCW_C_DRIVER_IMAGE=target/windows/c_driver.sys cargo test -p pcw-harness --test c_driver --locked -- --nocapture
# The installed command samples the C driver's image with its manifest, as a C driver's author would:
# the queue whose byte count starts at 2^32 must read exactly that.
c_sample=$("$installed" typeperf --image target/windows/c_driver_cr8.sys \
  --manifest examples/c-driver/c_driver.man "\C Driver Queues(*)\Bytes" "\C Driver Global\*" -sc 2 -si 0.1)
printf '%s\n' "$c_sample"
if ! grep -q '"4294967296.000000"' <<<"$c_sample"; then
  echo "error: pcw typeperf on c_driver_cr8.sys did not read rx 0's bytes as 4294967296" >&2
  exit 1
fi

step "no panic: nothing in the .sys, nor the DLL's Collect/Close, reaches Rust's panic machinery; a missing root fails (pcw-pecheck no-panic)"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- no-panic \
  --driver target/windows/pcw_driver.sys target/xwin-msvc/x86_64-pc-windows-msvc/release/pcw_driver.pdb \
  --dll target/windows/pcw_perfdll.dll

step "kernel constraints: stack frames <= 1 KiB from every entry point, no x87/MMX/AVX or float math in the .sys (pcw-pecheck kernel-constraints)"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- kernel-constraints \
  target/windows/pcw_driver.sys target/xwin-msvc/x86_64-pc-windows-msvc/release/pcw_driver.pdb

step "the WDK flavour built on Linux: --features wdk from wdk-sys's own generated bindings into target/windows/wdk/{pcw_driver,checksum_driver}.sys (scripts/wdk-build.sh)"
bash scripts/wdk-build.sh

step "the WDK images checked like the windows-sys ones: PE facts and counter-name resources, the loader scenarios (both drivers), no panic, kernel constraints"
wdk_pdb=target/xwin-wdk/x86_64-pc-windows-msvc/release/pcw_driver.pdb
# Only the driver's artifact tests: target/windows/wdk holds no perf DLL.
PCW_WINDOWS_ARTIFACTS=target/windows/wdk cargo test -p pcw-pecheck --test artifacts --locked driver_artifact
PCW_DRIVER_IMAGE=target/windows/wdk/pcw_driver.sys cargo test -p pcw-loader --locked -- --nocapture
PCW_EXAMPLE_IMAGE=target/windows/wdk/checksum_driver.sys cargo test -p checksum-driver --test driver --locked -- --nocapture
example_wdk_pdb=target/xwin-wdk/x86_64-pc-windows-msvc/release/checksum_driver.pdb
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- no-panic \
  --driver target/windows/wdk/checksum_driver.sys "$example_wdk_pdb" "${example_roots[@]}"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- kernel-constraints \
  target/windows/wdk/checksum_driver.sys "$example_wdk_pdb" "${example_roots[@]}"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- no-panic \
  --driver target/windows/wdk/pcw_driver.sys "$wdk_pdb"
cargo run -q -p pcw-pecheck --bin pcw-pecheck --locked -- kernel-constraints \
  target/windows/wdk/pcw_driver.sys "$wdk_pdb"

step "Wine: the perf DLL under Wine's Perflib and the real PE loader (scripts/wine-test.sh)"
bash scripts/wine-test.sh

echo
echo "all checks passed"
