# SPDX-License-Identifier: MIT OR Apache-2.0
# V1 (legacy) registration of pcw_perfdll.dll, elevated: copies the DLL to System32 (the
# `Library` value of the generated .reg fragment), imports the fragment (Performance\Library,
# Open/Collect/Close, Linkage\Export = source=device), and runs `lodctr pcw_driver.ini`, which
# writes First/Last Counter/Help under the driver's service key. The driver must be installed
# first (the values live under its service key). Idempotent: re-registers from scratch.
# -AssetDir: a directory with pcw_perfdll.dll, pcw_perfdll.reg, pcw_driver.ini, pcw_driver.h
# (deploy-vm stages one); without it the DLL is built here from -RepoRoot.
param([string]$AssetDir, [string]$RepoRoot)
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

if (-not $AssetDir) {
    if (-not $RepoRoot) { $RepoRoot = (Resolve-Path (Join-Path $PSScriptRoot '..\..')).Path }
    $AssetDir = Join-Path $RepoRoot 'target\pcw-perfdll'
    Build-PcwPerfDllAssets $RepoRoot $AssetDir
}
foreach ($asset in @($PcwPerfDllName, 'pcw_perfdll.reg', 'pcw_driver.ini', 'pcw_driver.h')) {
    if (-not (Test-Path -LiteralPath (Join-Path $AssetDir $asset))) { throw "$asset is missing in $AssetDir" }
}
if (-not (Test-Path $PcwServiceKey)) {
    throw "service $PcwServiceName is not installed; install the driver first (Install-PcwDriver.ps1)"
}
if (Test-Path "$PcwServiceKey\Performance") { & (Join-Path $PSScriptRoot 'Unregister-PcwPerfDll.ps1') }

$target = Join-Path $env:SystemRoot "System32\$PcwPerfDllName"
Copy-Item -LiteralPath (Join-Path $AssetDir $PcwPerfDllName) -Destination $target -Force
Write-Check 'DLL copied' $target
Invoke-PcwNative 'reg.exe' @('import', (Join-Path $AssetDir 'pcw_perfdll.reg')) | Out-Null
Push-Location $AssetDir   # lodctr finds the .ini's symbolfile (pcw_driver.h) next to it
try { Invoke-PcwNative 'lodctr.exe' @((Join-Path $AssetDir 'pcw_driver.ini')) | Out-Null } finally { Pop-Location }

$perf = Get-ItemProperty "$PcwServiceKey\Performance"
foreach ($value in @('Library', 'Open', 'Collect', 'Close', 'First Counter', 'Last Counter', 'First Help', 'Last Help')) {
    if ($null -eq $perf.PSObject.Properties[$value]) { throw "Performance\$value was not written" }
}
$export = (Get-ItemProperty "$PcwServiceKey\Linkage").Export
Write-Check 'V1 registered' ("Library={0}; First Counter={1}; Last Counter={2}; Export={3}" -f `
    $perf.Library, $perf.'First Counter', $perf.'Last Counter', ($export -join ','))
