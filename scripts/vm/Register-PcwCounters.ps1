# SPDX-License-Identifier: MIT OR Apache-2.0
# Registers the driver's countersets with `lodctr /m:<manifest> <directory of pcw_driver.sys>`.
# The directory must be where the INSTALLED driver runs from (its driver-store directory, read
# from the service's ImagePath), because Perflib loads the counter names from that binary; a
# wrong directory is the classic cause of countersets that show up without names or values.
# Idempotent: a previous registration is removed first (the directory changes with each package).
param(
    [Parameter(Mandatory = $true)][string]$Manifest,
    [string]$DriverDir
)
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

$Manifest = (Resolve-Path -LiteralPath $Manifest).Path
if (-not $DriverDir) { $DriverDir = Get-PcwDriverDir }
if (-not (Test-Path -LiteralPath (Join-Path $DriverDir $PcwSysName))) {
    throw "$PcwSysName is not in $DriverDir"
}
Write-Check 'installed driver found' (Join-Path $DriverDir $PcwSysName)

if (Test-Path $PcwV2ProviderKey) {
    Invoke-PcwNative 'unlodctr.exe' @("/m:$Manifest") | Out-Null
    Write-Check 'previous registration removed' $PcwProviderGuid
}
Invoke-PcwNative 'lodctr.exe' @("/m:$Manifest", $DriverDir) | Out-Null
if (-not (Test-Path $PcwV2ProviderKey)) {
    throw "lodctr /m: reported success but $PcwV2ProviderKey does not exist"
}
Write-Check 'lodctr /m: registered the provider' "$PcwProviderGuid -> $DriverDir"
