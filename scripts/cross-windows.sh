#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Cross-builds the real Windows artifacts on Linux with Debian's Rust toolchain (rustc-web,
# rust-web-src, lld, the mingw-w64 gcc; see README.md), into target/windows/ with fixed names:
#
#   pcw_driver.sys          the driver (root package), x86_64-pc-windows-msvc, no_std,
#                           build-std core+alloc, linked by lld-link as a native-subsystem driver,
#                           LTO and one codegen unit (a release driver; see driver_build below)
#   checksum_driver.sys     the example driver that gained counters (examples/checksum-driver),
#                           built and linked the same way
#   fresh_driver.sys,       the two driver crates `pcw new` writes under target/scaffold (from a
#   ported_driver.sys       fresh manifest, and from xdp_like.man), built the same way
#   pcw_perfdll.dll         the V1 perf DLL (crates/pcw-perfdll), x86_64-pc-windows-gnu via mingw
#   pcw_wine_consumer.exe   the V1 consumer scripts/wine-test.sh runs under Wine
#   tidal_wine_check.exe    the example user-mode service's Perflib calls, run under Wine
#   c_driver.sys            the C example driver (examples/c-driver), mingw-w64's gcc, and its
#   c_driver_cr8.sys        variant that manages IRQL through CR8 itself (scripts/c-driver.sh)
#
# With --bench-image, builds only target/windows-bench/pcw_driver_64.sys: the driver built the
# same way with its `bench-waves` feature (64 waves rather than 3; scripts/bench.sh measures the
# image's callback at both counts), in a target directory of its own so that nothing of the
# shipped image's build (its .dll, its PDB) is replaced.
#
# Debian's rustc/cargo 1.96 (/usr/bin) is used only here, through PATH and with its own target
# directories under target/ (xwin-msvc, xwin-gnu; xwin-msvc-bench for --bench-image), so the
# rustup toolchain and the host build cache of the other tests are untouched. Missing Debian
# packages are installed first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bench_image=0
for arg in "$@"; do
  case "$arg" in
    --bench-image) bench_image=1 ;;
    *) echo "usage: $0 [--bench-image]" >&2; exit 2 ;;
  esac
done

# shellcheck source=scripts/apt-need.sh
. scripts/apt-need.sh
apt_need rustc-web cargo-web rust-web-src lld gcc-mingw-w64-x86-64 wine64

for tool in /usr/bin/cargo /usr/bin/rustc /usr/bin/lld-link /usr/bin/x86_64-w64-mingw32-gcc; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing although its Debian package is installed" >&2
    exit 1
  fi
done
if [ ! -d /usr/lib/rustlib/src/rust/library ]; then
  echo "error: Debian's Rust library source (package rust-web-src) is missing: /usr/lib/rustlib/src/rust/library" >&2
  exit 1
fi

out=$root/target/windows
mkdir -p "$out"

# Debian's toolchain first in PATH: /usr/bin/cargo ignores rust-toolchain.toml and runs
# /usr/bin/rustc. RUSTC_BOOTSTRAP lets the stable 1.96 compiler take -Zbuild-std. RUSTC and
# RUSTC_WRAPPER are cleared so nothing points cargo back at the rustup toolchain.
debian_cargo() {
  env -u RUSTC -u RUSTC_WRAPPER -u RUSTDOC -u CARGO_BUILD_TARGET \
    PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 /usr/bin/cargo "$@"
}

if [ "$bench_image" = 1 ]; then
  echo "== cross-build: pcw_driver_64.sys, the driver with its bench-waves feature (x86_64-pc-windows-msvc, lld-link /DRIVER, LTO, one codegen unit)"
else
  echo "== cross-build: pcw_driver.sys, checksum_driver.sys (x86_64-pc-windows-msvc, lld-link /DRIVER, LTO, one codegen unit)"
fi
echo "   $(/usr/bin/rustc --version) / $(/usr/bin/cargo --version)"
# RUSTFLAGS replaces the [target.'cfg(windows)'] rustflags of .cargo/config.toml, so
# -C panic=abort is repeated here.
driver_rustflags="-C linker=lld-link -C panic=abort -C link-arg=/DRIVER -C link-arg=/SUBSYSTEM:NATIVE -C link-arg=/ENTRY:DriverEntry -C link-arg=/NODEFAULTLIB -C link-arg=/INTEGRITYCHECK"
# The images are built as release drivers: the release profile's LTO over the whole image, in one
# codegen unit, with line tables (the PDB then names every function the image keeps out of line,
# which is what pcw-pecheck's analyses root and report on: LTO leaves few public symbols). Both
# packages are `cdylib` and `rlib` (the rlib is for the host tests and tools), and rustc does no
# LTO for a build that also emits an rlib, so the image is built with `cargo rustc --crate-type
# cdylib`: the .sys alone. The profile settings come from the environment, for these invocations
# (and the fresh crates' below, which share the target directory) only.
driver_target=$root/target/xwin-msvc
driver_build() {
  RUSTFLAGS="$driver_rustflags" \
    CARGO_PROFILE_RELEASE_LTO=true \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
    CARGO_TARGET_DIR="$driver_target" \
    debian_cargo "$@" \
    --target x86_64-pc-windows-msvc \
    -Zbuild-std=core,alloc,compiler_builtins -Zbuild-std-features=compiler-builtins-mem
}
if [ "$bench_image" = 1 ]; then
  driver_target=$root/target/xwin-msvc-bench
  driver_build rustc --locked -p pcw-driver --features bench-waves --lib --release --crate-type cdylib
  mkdir -p "$root/target/windows-bench"
  cp "$driver_target/x86_64-pc-windows-msvc/release/pcw_driver.dll" "$root/target/windows-bench/pcw_driver_64.sys"
  echo "== built target/windows-bench/pcw_driver_64.sys (64 waves; for scripts/bench.sh only)"
  exit 0
fi
driver_build rustc --locked -p pcw-driver --lib --release --crate-type cdylib
# The example in a cargo invocation of its own: in one with the driver, cargo would unify
# pcw-core's features and give the example (which has no allocator) pcw-core's `alloc`.
driver_build rustc --locked -p checksum-driver --lib --release --crate-type cdylib
for driver in pcw_driver checksum_driver; do
  cp "$root/target/xwin-msvc/x86_64-pc-windows-msvc/release/$driver.dll" "$out/$driver.sys"
done

# A fresh crate per manifest, outside this workspace: one manifest, pcw-gen as its only
# build-dependency (build.rs is one call), pcw-rt as its only dependency, and a lib.rs that only
# includes the generated module (every non-generic item of it is compiled into the rlib), with no
# FFI of its own. Both must compile for the driver target: the driver's own manifest, and a manifest in
# the style of a public driver's (XDP's per-queue sets, multipleAggregate). They resolve against
# a copy of this workspace's Cargo.lock, offline (every crate they use is already fetched), so
# they build exactly the versions the drivers do.
echo "== fresh crates: one manifest (or one declaration) + pcw-gen + pcw-rt each, x86_64-pc-windows-msvc, no hand-written FFI"
fresh=$root/target/fresh-crates
rm -rf "$fresh"
mkdir -p "$fresh"
cat >"$fresh/Cargo.toml" <<'TOML'
[workspace]
resolver = "3"
members = ["driver-manifest", "xdp-like-manifest", "declared-kernel"]
TOML
cp Cargo.lock "$fresh/Cargo.lock"
for crate in driver-manifest:manifest/pcw_driver.man xdp-like-manifest:crates/pcw-cli/tests/fixtures/xdp_like.man; do
  name=${crate%%:*}
  manifest=${crate#*:}
  stem=$(basename "$manifest" .man)
  mkdir -p "$fresh/$name/src"
  cp "$manifest" "$fresh/$name/$stem.man"
  cat >"$fresh/$name/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
pcw-rt = { path = "$root/crates/pcw-rt", features = ["windows-sys"] }

[build-dependencies]
pcw-gen = { path = "$root/crates/pcw-gen" }
TOML
  cat >"$fresh/$name/build.rs" <<RS
fn main() {
    pcw_gen::compile("$stem.man").unwrap();
}
RS
  cat >"$fresh/$name/src/lib.rs" <<RS
#![no_std]
//! Counters of \`$stem.man\`, with no hand-written FFI.

include!(concat!(env!("OUT_DIR"), "/$stem.rs"));
RS
done
# A fresh crate whose counters are declared in Rust, not in a manifest: the declaration is what
# `pcw gen --to-rust` writes for the checksum example's manifest, the macro (pcw-declare) expands
# the register/add layer, and build.rs derives the manifest, `.rc`/`.res` and lodctr files from
# the same file.
mkdir -p "$fresh/declared-kernel/src"
cargo run --locked -q -p pcw-cli -- gen --to-rust examples/checksum-driver/checksum_driver.man -o "$fresh/declared-kernel/src/counters.rs"
cat >"$fresh/declared-kernel/Cargo.toml" <<TOML
[package]
name = "declared-kernel"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
pcw-rt = { path = "$root/crates/pcw-rt", features = ["windows-sys"] }
pcw-declare = { path = "$root/crates/pcw-declare" }

[build-dependencies]
pcw-gen = { path = "$root/crates/pcw-gen" }
TOML
cat >"$fresh/declared-kernel/build.rs" <<'RS'
fn main() {
    pcw_gen::Config::new().compile_declarations("src/counters.rs").unwrap();
}
RS
cat >"$fresh/declared-kernel/src/lib.rs" <<'RS'
#![no_std]
//! Counters declared in Rust (`src/counters.rs`), with no manifest and no hand-written FFI.

include!("counters.rs");
RS
# The drivers' flags, profile settings and target directory (the fresh workspace has its own
# release profile, so its crates and the standard library are compiled once for it: about 2 min
# of CPU from cold, seconds when warm).
driver_build build --offline --release --manifest-path "$fresh/Cargo.toml" --workspace --lib

# `pcw new` twice, outside this workspace: a driver crate from a fresh manifest and one from an
# existing manifest (xdp_like.man, a C driver's counters being ported), each depending on this
# checkout's crates by path (`--pcw-rs`). Their images are built like the drivers' above; the
# test command then runs each crate's own tests on its host build and on its image. Like the
# fresh crates they share a copy of this workspace's Cargo.lock, offline.
echo "== scaffold: pcw new (a fresh manifest, xdp_like.man and clashing_symbols.man), x86_64-pc-windows-msvc"
scaffold=$root/target/scaffold
rm -rf "$scaffold"
mkdir -p "$scaffold"
cat >"$scaffold/Cargo.toml" <<'TOML'
[workspace]
resolver = "3"
members = ["fresh-driver", "ported-driver", "clashing-driver"]
TOML
cp Cargo.lock "$scaffold/Cargo.lock"
cargo run -q --locked -p pcw-cli --bin pcw -- new "$scaffold/fresh-driver" --pcw-rs "$root"
cargo run -q --locked -p pcw-cli --bin pcw -- new "$scaffold/ported-driver" --pcw-rs "$root" \
  --manifest crates/pcw-cli/tests/fixtures/xdp_like.man
# A third from countersets whose symbols name what a driver crate's Rust already uses (a
# one-letter symbol, `Slot`, `core`, `register`, `generated`): the test command builds it and
# runs its tests on the host; its image would add nothing the other two do not check.
cargo run -q --locked -p pcw-cli --bin pcw -- new "$scaffold/clashing-driver" --pcw-rs "$root" \
  --manifest crates/pcw-cli/tests/fixtures/clashing_symbols.man
driver_build build --offline --release --manifest-path "$scaffold/Cargo.toml" --workspace \
  --exclude clashing-driver --lib
for driver in fresh_driver ported_driver; do
  cp "$root/target/xwin-msvc/x86_64-pc-windows-msvc/release/$driver.dll" "$out/$driver.sys"
done

# The DLL, the consumer and the example service in one cargo invocation: one resolution and one
# build of std for all.
echo "== cross-build: pcw_perfdll.dll, pcw_wine_consumer.exe, tidal_wine_check.exe (x86_64-pc-windows-gnu, mingw)"
RUSTFLAGS="-C panic=abort" \
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
  CARGO_TARGET_DIR="$root/target/xwin-gnu" \
  debian_cargo build --locked --release --target x86_64-pc-windows-gnu \
  -Zbuild-std=std,panic_abort -p pcw-perfdll -p pcw-wine-consumer -p pcw-tidal
gnu_out=$root/target/xwin-gnu/x86_64-pc-windows-gnu/release
cp "$gnu_out/pcw_perfdll.dll" "$out/pcw_perfdll.dll"
cp "$gnu_out/pcw-wine-consumer.exe" "$out/pcw_wine_consumer.exe"
cp "$gnu_out/tidal-wine-check.exe" "$out/tidal_wine_check.exe"

# A fresh user-mode crate declared in Rust, for the service target: the declaration of a
# user-mode manifest of pcw-gen's tests, expanded over pcw-um, its string table converted by
# windres and linked.
echo "== fresh crate: a user-mode counterset declared in Rust, x86_64-pc-windows-gnu"
fresh_gnu=$root/target/fresh-crates-gnu
rm -rf "$fresh_gnu"
mkdir -p "$fresh_gnu/declared-user/src"
cat >"$fresh_gnu/Cargo.toml" <<'TOML'
[workspace]
resolver = "3"
members = ["declared-user"]
TOML
cp Cargo.lock "$fresh_gnu/Cargo.lock"
cargo run --locked -q -p pcw-cli -- gen --to-rust crates/pcw-gen/tests/manifests/northwind_user.man -o "$fresh_gnu/declared-user/src/counters.rs"
cat >"$fresh_gnu/declared-user/Cargo.toml" <<TOML
[package]
name = "declared-user"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
pcw-um = { path = "$root/crates/pcw-um" }
pcw-declare = { path = "$root/crates/pcw-declare" }

[build-dependencies]
pcw-gen = { path = "$root/crates/pcw-gen" }
TOML
cat >"$fresh_gnu/declared-user/build.rs" <<'RS'
fn main() {
    pcw_gen::Config::new().compile_declarations("src/counters.rs").unwrap();
}
RS
cat >"$fresh_gnu/declared-user/src/lib.rs" <<'RS'
//! A user-mode provider declared in Rust (`src/counters.rs`), over pcw-um.

include!("counters.rs");
RS
RUSTFLAGS="-C panic=abort" \
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
  CARGO_TARGET_DIR="$root/target/xwin-gnu" \
  debian_cargo build --offline --release --manifest-path "$fresh_gnu/Cargo.toml" --workspace --lib \
  --target x86_64-pc-windows-gnu -Zbuild-std=std,panic_abort

bash scripts/c-driver.sh

echo "== built:"
for f in pcw_driver.sys checksum_driver.sys fresh_driver.sys ported_driver.sys pcw_perfdll.dll pcw_wine_consumer.exe tidal_wine_check.exe c_driver.sys c_driver_cr8.sys; do
  printf '   target/windows/%-22s %8d bytes\n' "$f" "$(stat -c %s "$out/$f")"
done
