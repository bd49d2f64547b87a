# SPDX-License-Identifier: MIT OR Apache-2.0
# Run on the test VM, elevated. Stops and unloads the driver, unregisters its counters (V2 and
# V1), removes its package from the driver store, then checks that nothing stays registered:
# no service, no driver-store package, no V2 provider key, no V1 values, no control device, and
# a fresh process sees none of the countersets. Idempotent.
param([string]$Manifest = 'C:\pcw-rs\manifest\pcw_driver.man')
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

Write-Step 'remove'
Remove-PcwDriver $Manifest

Write-Step 'check nothing stays registered'
if (Get-PcwService) { throw "service $PcwServiceName still exists (marked for deletion? close services.msc/regedit and rerun)" }
Write-Check 'no service' $PcwServiceName
if (@(Get-PcwOemInfs).Count -ne 0) { throw "a $PcwInfName package is still in the driver store" }
Write-Check 'no driver-store package' $PcwInfName
if (Test-Path $PcwV2ProviderKey) { throw "$PcwV2ProviderKey still exists" }
Write-Check 'no V2 provider registration' $PcwProviderGuid
if (Test-Path $PcwServiceKey) { throw "$PcwServiceKey still exists" }
Write-Check 'no service key (no V1 Performance values)' $PcwServiceKey
$err = [PcwRs.Native]::TryOpen($PcwDevicePath, 0x80000000)
if ($err -eq 0) { throw "$PcwDevicePath still opens: the driver is still loaded" }
Write-Check 'control device gone' "$PcwDevicePath (Win32 error $err)"
foreach ($set in $PcwCounterSets.Keys) {
    # A child process: this one's PDH may have cached the object list.
    $found = & powershell.exe -NoProfile -Command "@(Get-Counter -ListSet '$set' -ErrorAction SilentlyContinue).Count"
    if ([int]$found -ne 0) { throw "counterset '$set' is still listed by Get-Counter -ListSet" }
    Write-Check 'counterset no longer listed' $set
}
Write-Host 'UNINSTALLED: nothing of pcw_driver stays registered.'
