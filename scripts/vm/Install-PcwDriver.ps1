# SPDX-License-Identifier: MIT OR Apache-2.0
# Run on the test VM, elevated. Installs the signed driver package and registers its counters:
#   1. test signing active in this boot (Enable-TestSigning.ps1 + reboot otherwise)
#   2. WDRLocalTestCert trusted (LocalMachine Root and TrustedPublisher)
#   3. any previous installation removed (counters, service, driver-store packages)
#   4. pnputil /add-driver pcw_driver.inf /install (primitive driver: adds the kernel service)
#   5. lodctr /m:pcw_driver.man <driver-store directory of pcw_driver.sys>
#   6. sc start pcw_driver, and the control device \\.\PcwRs answers
#   7. with -PerfDllDir: the V1 DLL (Register-PcwPerfDll.ps1)
# Idempotent: running it again reinstalls from scratch.
param(
    [Parameter(Mandatory = $true)][string]$PackageDir,
    [Parameter(Mandatory = $true)][string]$Manifest,
    [string]$PerfDllDir
)
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

Write-Step '1. test signing'
if (-not (Test-PcwTestSigningActive)) {
    throw 'test signing is not active: run Enable-TestSigning.ps1, reboot, then run this again'
}
Write-Check 'test signing active'

Write-Step '2. package files and test certificate'
foreach ($file in @($PcwInfName, $PcwSysName, $PcwCatName, $PcwTestCertName)) {
    if (-not (Test-Path -LiteralPath (Join-Path $PackageDir $file))) {
        throw "$file is missing in $PackageDir (build the package with ``cargo make`` first)"
    }
}
$Manifest = (Resolve-Path -LiteralPath $Manifest).Path
Write-Check 'package complete' $PackageDir
$certPath = Join-Path $PackageDir $PcwTestCertName
$cert = New-Object System.Security.Cryptography.X509Certificates.X509Certificate2($certPath)
foreach ($store in @('Root', 'TrustedPublisher')) {
    if (Test-Path "Cert:\LocalMachine\$store\$($cert.Thumbprint)") {
        Write-Check "certificate already trusted in LocalMachine\$store" $cert.Subject
    } else {
        Import-Certificate -FilePath $certPath -CertStoreLocation "Cert:\LocalMachine\$store" | Out-Null
        Write-Check "certificate imported into LocalMachine\$store" "$($cert.Subject) $($cert.Thumbprint)"
    }
}

Write-Step '3. previous installation'
Remove-PcwDriver $Manifest
Write-Check 'nothing of a previous installation is left'

Write-Step '4. pnputil /add-driver /install'
Invoke-PcwNative 'pnputil.exe' @('/add-driver', (Join-Path $PackageDir $PcwInfName), '/install') -AllowedExitCodes @(0, 3010) | Out-Null
$oems = @(Get-PcwOemInfs)
if ($oems.Count -ne 1) { throw "expected one $PcwInfName package in the driver store, found $($oems.Count)" }
if (-not (Get-PcwService)) { throw "the package is in the driver store but service $PcwServiceName was not created" }
$driverDir = Get-PcwDriverDir
Write-Check 'driver package installed' "$($oems[0]); service $PcwServiceName runs $driverDir\$PcwSysName"

Write-Step '5. lodctr /m:'
& (Join-Path $PSScriptRoot 'Register-PcwCounters.ps1') -Manifest $Manifest -DriverDir $driverDir

Write-Step '6. sc start'
Invoke-PcwNative 'sc.exe' @('start', $PcwServiceName) | Out-Null
(Get-PcwService).WaitForStatus('Running', [TimeSpan]::FromSeconds(30))
Write-Check 'driver loaded' "$PcwServiceName is Running"
$err = [PcwRs.Native]::TryOpen($PcwDevicePath, 0x80000000)
if ($err -ne 0) { throw "cannot open $PcwDevicePath for reading (Win32 error $err)" }
Write-Check 'control device opens for reading' $PcwDevicePath

if ($PerfDllDir) {
    Write-Step '7. V1 perf DLL'
    & (Join-Path $PSScriptRoot 'Register-PcwPerfDll.ps1') -AssetDir $PerfDllDir
}
Write-Host 'INSTALLED: typeperf "\Geometric Waves(*)\*" -sc 3 should now show three waves.'
