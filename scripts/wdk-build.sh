#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Builds the WDK flavour of the repository's drivers on Linux, for x86_64-pc-windows-msvc, linked
# by lld-link into target/windows/wdk/:
#   pcw_driver.sys        the driver, `--features wdk` (wdk, wdk-sys, wdk-alloc, wdk-panic, pcw-rt
#                         over wdk-sys)
#   checksum_driver.sys   the example driver (examples/checksum-driver), `--features wdk`
#                         (wdk-sys, wdk-panic, pcw-rt over wdk-sys)
# One cargo invocation each, in one target directory: wdk-sys's build script (bindgen) runs once.
#
# wdk-sys's bindings are generated the way a Windows user's `cargo make` generates them: by the
# wdk-sys version in Cargo.lock, through its own build script and windows-drivers-rs's bindgen
# configuration. Only the headers differ: a WDK-shaped tree (target/wdk-stage/wdk) assembled here
# from Debian's mingw-w64 DDK headers, whose wdm.h is followed by scripts/wdk/pcw_supplement.h
# (what mingw-w64 lacks, written from the DDI documentation, with its x64 layouts asserted). So any
# name or type the driver's FFI facade (src/ffi/wdk_sys.rs), the example's kernel module
# (examples/checksum-driver/src/kernel.rs) or pcw-rt's wdk-sys binding uses that
# the generated bindings do not have fails this script with rustc's message.
#
# What is set up, all under target/ (never committed):
#   target/wdk-stage/wdk/                 WDKContentRoot: Include/<ver>/{km,km/crt,shared}, Lib/<ver>/km/x64
#   target/wdk-stage/wdk-build-0.6.0/     wdk-build 0.6.0 from the cargo registry, with the precise
#                                         Linux-host edits of `patch_wdk_build` below
#   target/wdk-stage/lock/Cargo.lock      the lockfile cargo uses for this build (see `lockfile`)
#   target/xwin-wdk/                      CARGO_TARGET_DIR
#
# Environment of the build (what an eWDK prompt gives wdk-build on Windows):
#   WDKContentRoot              the tree above
#   LIBCLANG_PATH               Debian's libclang, for bindgen
#   BINDGEN_EXTRA_CLANG_ARGS_x86_64_pc_windows_msvc
#                               mingw-w64's headers test __GNUC__ for their MSVC-compatible paths;
#                               clang's own intrinsics headers come from its resource directory
#                               (wdk-build disables bindgen's include detection)
#   PCW_WDK_CROSS_STAGE=1       lets the driver's build.rs accept `wdk` off Windows: it skips
#                               wdk_build::configure_wdk_binary_build (a Windows-host build
#                               dependency) because this script gives the link its arguments
# Debian's rustc/cargo 1.96 are used as in scripts/cross-windows.sh (-Zbuild-std needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# shellcheck source=scripts/apt-need.sh
. scripts/apt-need.sh
apt_need rustc-web cargo-web rust-web-src lld gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev \
  clang libclang-dev llvm

for tool in /usr/bin/cargo /usr/bin/rustc /usr/bin/lld-link /usr/bin/clang /usr/bin/llvm-dlltool \
  /usr/bin/llvm-ar; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing although its Debian package is installed" >&2
    exit 1
  fi
done
mingw=/usr/share/mingw-w64/include
if [ ! -f "$mingw/ddk/wdm.h" ]; then
  echo "error: mingw-w64's DDK headers are missing: $mingw/ddk/wdm.h (package mingw-w64-x86-64-dev)" >&2
  exit 1
fi

debian_cargo() {
  env -u RUSTC -u RUSTC_WRAPPER -u RUSTDOC -u CARGO_BUILD_TARGET \
    PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 /usr/bin/cargo "$@"
}

stage=$root/target/wdk-stage
target_dir=$root/target/xwin-wdk
out=$root/target/windows/wdk
# The SDK version of the assembled tree (wdk-build takes the newest under Lib/).
ver=10.0.26100.0
mkdir -p "$stage" "$out"

# Writes stdin to $1 only when the content differs, so a warm run leaves every input of wdk-sys's
# build script untouched and cargo does not regenerate the bindings.
write_if_changed() {
  local tmp
  tmp=$(mktemp)
  cat >"$tmp"
  if cmp -s "$tmp" "$1"; then
    rm -f "$tmp"
  else
    chmod 644 "$tmp"
    mv "$tmp" "$1"
  fi
}

link_if_missing() { [ -L "$2" ] || ln -s "$1" "$2"; }

echo "== wdk-build stage: WDK-shaped include tree and import libraries (target/wdk-stage/wdk)"
wdk=$stage/wdk
inc=$wdk/Include/$ver
lib=$wdk/Lib/$ver/km/x64
mkdir -p "$inc/km/crt" "$inc/shared" "$lib"
# km/: mingw-w64's DDK headers; wdm.h is mingw-w64's followed by the supplement (ntddk.h and
# ntifs.h include <wdm.h>, so every header wdk-sys reads sees it).
for f in "$mingw"/ddk/*.h; do
  name=${f##*/}
  [ "$name" = wdm.h ] || link_if_missing "$f" "$inc/km/$name"
done
printf '/* mingw-w64 wdm.h, then what it lacks (scripts/wdk/pcw_supplement.h) */\n#include "%s"\n#include "pcw_supplement.h"\n' \
  "$mingw/ddk/wdm.h" | write_if_changed "$inc/km/wdm.h"
write_if_changed "$inc/km/pcw_supplement.h" <scripts/wdk/pcw_supplement.h
# shared/: the rest of mingw-w64 (ntdef.h, ntstatus.h, guiddef.h, …). km/crt/ stays empty:
# clang's resource directory provides the C headers the DDK includes.
for f in "$mingw"/*; do
  name=${f##*/}
  [ "$name" = ddk ] || link_if_missing "$f" "$inc/shared/$name"
done

# Import libraries. wdk-sys links ntoskrnl, hal, wmilib and BufferOverflowFastFailK from
# Lib/<ver>/km/x64; mingw-w64's libntoskrnl.a lacks the Pcw* exports (and the other routines the
# supplement declares), so the import libraries are generated from module-definition files
# listing the routines the drivers import, with the module each one comes from in the WDK.
# wmilib and BufferOverflowFastFailK provide nothing this driver calls: empty archives.
write_if_changed "$stage/ntoskrnl.def" <<'EOF'
LIBRARY ntoskrnl.exe
EXPORTS
    ExAcquirePushLockExclusiveEx
    ExAcquirePushLockSharedEx
    ExAllocatePool2
    ExFreePool
    ExFreePoolWithTag
    ExReleasePushLockExclusiveEx
    ExReleasePushLockSharedEx
    IoCreateDevice
    IoCreateSymbolicLink
    IoDeleteDevice
    IoDeleteSymbolicLink
    IofCompleteRequest
    KeBugCheckEx
    KeEnterCriticalRegion
    KeLeaveCriticalRegion
    KeQuerySystemTimePrecise
    KeReadStateEvent
    ObSetSecurityObjectByPointer
    PcwAddInstance
    PcwCloseInstance
    PcwCreateInstance
    PcwRegister
    PcwUnregister
EOF
write_if_changed "$stage/hal.def" <<'EOF'
LIBRARY hal.dll
EXPORTS
    KeQueryPerformanceCounter
EOF
for m in ntoskrnl hal; do
  if [ ! -f "$lib/$m.lib" ] || [ "$stage/$m.def" -nt "$lib/$m.lib" ]; then
    llvm-dlltool -m i386:x86-64 -d "$stage/$m.def" -l "$lib/$m.lib"
  fi
done
for m in wmilib BufferOverflowFastFailK; do
  [ -f "$lib/$m.lib" ] || llvm-ar rc "$lib/$m.lib"
done

# wdk-build 0.6.0 as published does not compile on a Linux host. The smallest change that lets
# it run here, applied to a copy in target/ and given to cargo as a command-line [patch] (the
# manifest and the registry stay untouched); each edit fails the script unless it matches
# exactly where expected:
#   Cargo.toml    the `windows` crate becomes a Windows-only dependency (it reads the registry to
#                 find an installed WDK; `windows-future` does not compile on Linux)
#   utils.rs      the registry lookup is compiled on Windows only; elsewhere it finds nothing, so
#                 WDKContentRoot (set below) is the only way to the kit
#   utils.rs      set_var/remove_var are `compile_error!` off Windows; their Windows bodies are
#                 used everywhere (only cargo-make's tasks call them, never a build script)
#   cargo_make.rs std::os::windows::fs::symlink_file -> std::os::unix::fs::symlink (cargo-make
#                 tasks only, never run here; it just has to compile)
patch_wdk_build() {
  local dir=$1
  # subst FILE COUNT REGEX REPLACEMENT: REGEX (perl, multi-line mode) must match exactly COUNT
  # times; every match is replaced by REPLACEMENT, taken literally. (The published sources have
  # CRLF line ends, hence the \r?.)
  subst() {
    local n
    n=$(PAT=$3 perl -0777 -ne 'my $c = () = /$ENV{PAT}/gm; print $c' "$1")
    if [ "$n" != "$2" ]; then
      echo "error: patching wdk-build: \`$3\` matches $n times in ${1#"$dir"/}, expected $2 (a wdk-build other than 0.6.0?)" >&2
      exit 1
    fi
    PAT=$3 REP=$4 perl -0777 -pi -e 's/$ENV{PAT}/$ENV{REP}/gm' "$1"
  }
  subst "$dir/Cargo.toml" 1 '^\[dependencies\.windows\](?=\r?$)' "[target.'cfg(windows)'.dependencies.windows]"
  subst "$dir/src/utils.rs" 1 '^use windows::\{(?=\r?$)' $'#[cfg(windows)]\nuse windows::{'
  subst "$dir/src/utils.rs" 1 '^fn read_registry_key_string_value\((?=\r?$)' \
    $'#[cfg(windows)]\nfn read_registry_key_string_value('
  subst "$dir/src/utils.rs" 1 '^use crate::\{ConfigError, CpuArchitecture, IoError, TwoPartVersion\};(?=\r?$)' \
    $'use crate::{ConfigError, CpuArchitecture, IoError, TwoPartVersion};\n
// pcw-rs Linux stage: no registry off Windows (WDKContentRoot is set).
#[cfg(not(windows))]
const HKEY_LOCAL_MACHINE: () = ();
#[cfg(not(windows))]
macro_rules! s {
    ($s:literal) => {
        ()
    };
}
#[cfg(not(windows))]
fn read_registry_key_string_value(_: (), _: (), _: ()) -> Option<String> {
    None
}'
  subst "$dir/src/utils.rs" 1 '^#\[cfg\(target_os = "windows"\)\]\r?\npub fn set_var' $'#[cfg(all())]\npub fn set_var'
  subst "$dir/src/utils.rs" 1 '^#\[cfg\(not\(target_os = "windows"\)\)\]\r?\npub fn set_var' $'#[cfg(any())]\npub fn set_var'
  subst "$dir/src/utils.rs" 1 '^#\[cfg\(target_os = "windows"\)\]\r?\npub fn remove_var' $'#[cfg(all())]\npub fn remove_var'
  subst "$dir/src/utils.rs" 1 '^#\[cfg\(not\(target_os = "windows"\)\)\]\r?\npub fn remove_var' $'#[cfg(any())]\npub fn remove_var'
  subst "$dir/src/cargo_make.rs" 2 'std::os::windows::fs::symlink_file' 'std::os::unix::fs::symlink'
}

echo "== wdk-build stage: wdk-build 0.6.0 with its Linux-host edits (target/wdk-stage/wdk-build-0.6.0)"
# The registry sources of every crate of the lockfile for every platform, wdk-build's among them
# (wdk-build's own `cargo metadata`, run from wdk-sys's build script, reads them all).
debian_cargo fetch --locked -q
registry_src=${CARGO_HOME:-$HOME/.cargo}/registry/src
wdk_build_src=$(find "$registry_src" -mindepth 2 -maxdepth 2 -type d -name wdk-build-0.6.0 | head -n 1)
if [ -z "$wdk_build_src" ]; then
  echo "error: wdk-build 0.6.0 is not in $registry_src after \`cargo fetch\` (is Cargo.lock's wdk-build still 0.6.0?)" >&2
  exit 1
fi
rm -rf "$stage/wdk-build.new"
cp -R "$wdk_build_src" "$stage/wdk-build.new"
patch_wdk_build "$stage/wdk-build.new"
# Replaced only when the result differs, so cargo's fingerprints (mtimes) survive a warm run.
if [ -d "$stage/wdk-build-0.6.0" ] && diff -rq "$stage/wdk-build.new" "$stage/wdk-build-0.6.0" >/dev/null; then
  rm -rf "$stage/wdk-build.new"
else
  rm -rf "$stage/wdk-build-0.6.0"
  mv "$stage/wdk-build.new" "$stage/wdk-build-0.6.0"
fi

# The lockfile. A path [patch] changes wdk-build's entry in the lockfile (no registry source, no
# checksum), so this build resolves against a copy of the committed Cargo.lock
# (-Zlockfile-path), never rewriting it. The copy is then compared with the committed one: the
# only difference allowed is those two lines of wdk-build's entry, so every other crate is exactly
# the committed version, and the build itself runs with --locked against the copy. The copy is
# outside target/xwin-wdk on purpose: wdk-build finds the workspace by looking for a Cargo.lock
# above OUT_DIR.
mkdir -p "$stage/lock"
lockfile=$stage/lock/Cargo.lock
cp Cargo.lock "$lockfile"
patch_args=(
  -Zlockfile-path
  --config "resolver.lockfile-path='$lockfile'"
  --config "patch.crates-io.wdk-build.path='$stage/wdk-build-0.6.0'"
)
debian_cargo metadata --format-version 1 "${patch_args[@]}" >/dev/null
expected_lock=$(awk '
  /^\[\[package\]\]$/ { in_wdk_build = 0 }
  /^name = "wdk-build"$/ { in_wdk_build = 1 }
  in_wdk_build && (/^source = / || /^checksum = /) { next }
  { print }' Cargo.lock)
if ! diff -u <(printf '%s\n' "$expected_lock") "$lockfile" >"$stage/lock/unexpected.diff"; then
  echo "error: with wdk-build patched, cargo resolved more than wdk-build differently from Cargo.lock:" >&2
  cat "$stage/lock/unexpected.diff" >&2
  exit 1
fi

echo "== wdk-build stage: cargo build --features wdk (x86_64-pc-windows-msvc; wdk-sys generates its bindings)"
echo "   $(/usr/bin/rustc --version) / $(/usr/bin/cargo --version) / $(clang --version | head -n 1)"
resource_dir=$(clang -print-resource-dir)
libclang_dir=$(dirname "$(dirname "$resource_dir")")
if ! compgen -G "$libclang_dir/libclang*.so*" >/dev/null; then
  echo "error: no libclang next to clang's resource directory ($libclang_dir; package libclang-dev)" >&2
  exit 1
fi
# cargo warns that the wdk-build patch "was not used in the crate graph": that is -Zbuild-std's
# separate resolution of the standard library, which has no wdk-build; the driver's graph uses it.
# RUSTFLAGS replaces .cargo/config.toml's Windows rustflags, so panic=abort is repeated. The link
# arguments are those of cross-windows.sh (wdk-build's WDM set, less /KERNEL and /IGNORE, which
# are MSVC link.exe's), plus the import libraries' directory; +crt-static is what wdk-build checks
# for a kernel driver.
# Release drivers as in cross-windows.sh: the release profile's LTO in one codegen unit, with line
# tables for pcw-pecheck, the image alone (`cargo rustc --crate-type cdylib`: rustc does no LTO
# for a build that also emits the packages' rlib).
wdk_cargo_build() {
  RUSTFLAGS="-C target-feature=+crt-static -C linker=lld-link -C panic=abort -L native=$lib -C link-arg=/DRIVER -C link-arg=/SUBSYSTEM:NATIVE -C link-arg=/ENTRY:DriverEntry -C link-arg=/NODEFAULTLIB -C link-arg=/INTEGRITYCHECK" \
    WDKContentRoot="$wdk" \
    LIBCLANG_PATH="$libclang_dir" \
    BINDGEN_EXTRA_CLANG_ARGS_x86_64_pc_windows_msvc="-D__GNUC__=4 -D__GNUC_MINOR__=9 -isystem $resource_dir/include" \
    PCW_WDK_CROSS_STAGE=1 \
    CARGO_PROFILE_RELEASE_LTO=true \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
    CARGO_TARGET_DIR="$target_dir" \
    debian_cargo rustc --locked "${patch_args[@]}" --lib --release --features wdk \
    --crate-type cdylib \
    --target x86_64-pc-windows-msvc \
    -Zbuild-std=core,alloc,compiler_builtins -Zbuild-std-features=compiler-builtins-mem "$@"
}
wdk_cargo_build -p pcw-driver
# The example in a cargo invocation of its own, so that cargo does not unify pcw-core's features
# with the driver's (the example has no allocator; pcw-core's `alloc` would need one).
wdk_cargo_build -p checksum-driver
for driver in pcw_driver checksum_driver; do
  cp "$target_dir/x86_64-pc-windows-msvc/release/$driver.dll" "$out/$driver.sys"
  printf '== built: target/windows/wdk/%s.sys %d bytes\n' "$driver" "$(stat -c %s "$out/$driver.sys")"
done
