// SPDX-License-Identifier: MIT OR Apache-2.0
/* A stand-in for bcryptprimitives.dll in the Wine prefix of scripts/wine-test.sh only.
 *
 * Rust's std on Windows (1.78 and later) draws random bytes from bcryptprimitives.dll!ProcessPrng,
 * which every Windows 10 and later has. Wine 8.0 (Debian 12's wine64) ships no
 * bcryptprimitives.dll at all, so any Rust std DLL fails to load there. This file gives the
 * prefix the one export std needs, on top of RtlGenRandom (advapi32!SystemFunction036, which
 * Wine has). wine-test.sh builds and installs it only when Wine lacks its own. Nothing here is
 * shipped; it changes nothing the perf DLL does. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
