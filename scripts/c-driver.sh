#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Builds the C example driver (examples/c-driver) with mingw-w64, as a C counters provider is
# built off Windows: mingw-w64's DDK headers plus scripts/wdk/pcw_supplement.h (the PCW
# declarations they lack), no C runtime, the native subsystem, DriverEntry as the entry point,
# imports from mingw-w64's ntoskrnl.exe and hal.dll import libraries. Two images:
#
#   target/windows/c_driver.sys      linked as a DLL, with base relocations
#   target/windows/c_driver_cr8.sys  C_DRIVER_RAW_IRQL: reads CR8 with inline assembly and raises
#                                    and lowers IRQL with the headers' inline CR8 writes; linked
#                                    as an executable without relocations
#                                    (IMAGE_FILE_RELOCS_STRIPPED) at ImageBase 0x150000000
#
# Called by scripts/cross-windows.sh; installs the Debian packages it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/apt-need.sh
. scripts/apt-need.sh
apt_need gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev

ddk=/usr/share/mingw-w64/include/ddk
if [ ! -f "$ddk/ntddk.h" ]; then
  echo "error: mingw-w64's DDK headers are missing: $ddk/ntddk.h" >&2
  exit 1
fi
out=target/windows
mkdir -p "$out"

# -fno-builtin: zeroing and copies become calls to the kernel's memset/memcpy, as MSVC's do.
# -Wno-array-bounds: mingw-w64's __readgsqword (KeGetCurrentThread) reads through a constant
# address, which GCC 12 takes for an empty array.
cflags=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wno-array-bounds -fno-stack-protector -fno-builtin
  -I"$ddk" -Iscripts/wdk)
ldflags=(-nostdlib -Wl,--subsystem,native -e DriverEntry)
libs=(-lntoskrnl -lhal)

echo "== C driver: target/windows/c_driver.sys, c_driver_cr8.sys ($(x86_64-w64-mingw32-gcc --version | head -n 1), mingw-w64 DDK headers)"
x86_64-w64-mingw32-gcc "${cflags[@]}" "${ldflags[@]}" -shared \
  -o "$out/c_driver.sys" examples/c-driver/c_driver.c "${libs[@]}"
x86_64-w64-mingw32-gcc "${cflags[@]}" -DC_DRIVER_RAW_IRQL "${ldflags[@]}" \
  -Wl,--disable-dynamicbase -Wl,--disable-reloc-section -Wl,--image-base,0x150000000 \
  -o "$out/c_driver_cr8.sys" examples/c-driver/c_driver.c "${libs[@]}"
for f in c_driver.sys c_driver_cr8.sys; do
  printf '   target/windows/%-22s %8d bytes\n' "$f" "$(stat -c %s "$out/$f")"
done
