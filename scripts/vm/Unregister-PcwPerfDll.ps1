# SPDX-License-Identifier: MIT OR Apache-2.0
# Undoes Register-PcwPerfDll.ps1, elevated: `unlodctr pcw_driver` (frees the V1 name indexes),
# removes the Performance and Linkage keys and the DLL. Idempotent.
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

$perfKey = "$PcwServiceKey\Performance"
if ((Test-Path $perfKey) -and $null -ne (Get-ItemProperty $perfKey).PSObject.Properties['First Counter']) {
    Invoke-PcwNative 'unlodctr.exe' @($PcwServiceName) | Out-Null
    Write-Check 'unlodctr' $PcwServiceName
}
foreach ($key in @($perfKey, "$PcwServiceKey\Linkage")) {
    if (Test-Path $key) { Remove-Item -Path $key -Recurse -Force; Write-Check 'removed' $key }
}
$dll = Join-Path $env:SystemRoot "System32\$PcwPerfDllName"
if (Test-Path -LiteralPath $dll) {
    try {
        Remove-Item -LiteralPath $dll -Force
        Write-Check 'removed' $dll
    } catch {
        Write-Warning "$dll is still loaded by a Perflib host (e.g. WmiPrvSE); it is unregistered and can be deleted after a reboot"
    }
}
Write-Check 'V1 registration absent' $perfKey
