#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Runs the cross-built V1 perf DLL under Wine's real Perflib consumer (docs/wine.md):
# a fresh WINEPREFIX under target/, the DLL registered under
# HKLM\System\CurrentControlSet\Services\pcw_driver\{Performance,Linkage}, then
# target/windows/pcw_wine_consumer.exe (crates/pcw-wine-consumer), which queries
# RegQueryValueExW(HKEY_PERFORMANCE_DATA), loads the DLL itself and runs the Collect contract,
# and exits non-zero on any deviation. Then target/windows/tidal_wine_check.exe: the example
# user-mode service's Perflib V2 provider calls (crates/pcw-tidal), each function resolved at
# run time, every call Wine implements required to succeed and every function it lacks named.
# Run scripts/cross-windows.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# shellcheck source=scripts/apt-need.sh
. scripts/apt-need.sh
apt_need wine64 gcc-mingw-w64-x86-64

wine=/usr/lib/wine/wine64
wineserver=/usr/lib/wine/wineserver64
for f in "$wine" "$wineserver"; do
  if [ ! -x "$f" ]; then
    echo "error: $f is missing although Debian package wine64 is installed" >&2
    exit 1
  fi
done
dll=$root/target/windows/pcw_perfdll.dll
exe=$root/target/windows/pcw_wine_consumer.exe
um=$root/target/windows/tidal_wine_check.exe
for f in "$dll" "$exe" "$um"; do
  if [ ! -f "$f" ]; then
    echo "error: $f is missing; run scripts/cross-windows.sh first" >&2
    exit 1
  fi
done

export WINEPREFIX=$root/target/wine-prefix
export WINEARCH=win64
export WINEDEBUG=-all
# No Mono/Gecko installers when the prefix is created.
export WINEDLLOVERRIDES="mscoree,mshtml="
rm -rf "$WINEPREFIX"
# Stop this prefix's wineserver (and with it every Wine process of the prefix) on exit.
trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT

echo "== Wine: fresh prefix target/wine-prefix ($("$wine" --version))"
"$wine" wineboot --init >/dev/null 2>&1
"$wineserver" -w

# Rust's std imports bcryptprimitives.dll!ProcessPrng (present on every Windows 10+); Wine 8.0
# has no such DLL, so give this prefix a stand-in (scripts/wine/bcryptprimitives.c) unless the
# installed Wine has its own.
if [ ! -e /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/bcryptprimitives.dll ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
    scripts/wine/bcryptprimitives.c -ladvapi32
  echo "   Wine has no bcryptprimitives.dll: installed the ProcessPrng stand-in (scripts/wine/bcryptprimitives.c)"
fi

# The DLL by its Unix path through Wine's Z: drive.
dll_win="Z:${dll//\//\\}"
svc='HKLM\System\CurrentControlSet\Services\pcw_driver'
reg() {
  if ! "$wine" reg add "$@" /f >/dev/null; then
    echo "error: wine reg add $* failed" >&2
    exit 1
  fi
}
reg "$svc\\Performance" /v Library /t REG_SZ /d "$dll_win"
reg "$svc\\Performance" /v Open /t REG_SZ /d OpenPerformanceData
reg "$svc\\Performance" /v Collect /t REG_SZ /d CollectPerformanceData
reg "$svc\\Performance" /v Close /t REG_SZ /d ClosePerformanceData
# Synthetic data at a fixed clock (2026-01-01T00:00:03Z as a FILETIME, not advancing), so the
# replies through Wine and through the DLL directly are comparable byte for byte. Indexes
# from 1000: Wine serves no lodctr names, so any free even index does.
reg "$svc\\Linkage" /v Export /t REG_MULTI_SZ /s '|' \
  /d 'source=synthetic|first-counter=1000|first-help=1001|clock=134116992030000000'
echo "   registered $svc: Library=$dll_win, Linkage\\Export=source=synthetic first-counter=1000 first-help=1001 clock=…"

echo "== Wine: pcw_wine_consumer.exe"
"$wine" "$exe"

echo "== Wine: tidal_wine_check.exe (user-mode Perflib V2 provider calls)"
um_log=$root/target/wine-tidal.log
"$wine" "$um" | tee "$um_log"
# Wine 8.0's advapi32 exports no value setters: the check must say so by name.
if ! grep -Eq '^(MISSING|exported) +PerfSetULongCounterValue$' "$um_log"; then
  echo "error: tidal_wine_check.exe did not report PerfSetULongCounterValue" >&2
  exit 1
fi
