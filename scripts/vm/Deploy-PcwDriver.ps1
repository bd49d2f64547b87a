# SPDX-License-Identifier: MIT OR Apache-2.0
# Run on the development machine (cargo make deploy-vm). Stages the signed driver package, the
# counter manifest, the V1 DLL and these scripts into target\pcw-vm, copies them to C:\pcw-rs on
# the test VM, enables test signing there (the reboot is explicit: -Reboot restarts a Hyper-V
# VM and waits, otherwise the script stops and says so), then runs Install-PcwDriver.ps1 there.
# Idempotent: every run replaces C:\pcw-rs and reinstalls.
param(
    [Parameter(Mandatory = $true)][string]$RepoRoot,
    [Parameter(Mandatory = $true)][string]$PackageDir,
    [string]$VMName = $(if ($env:PCW_VM_NAME) { $env:PCW_VM_NAME } else { 'pcw-rs-test' }),
    [string]$ComputerName = $env:PCW_VM_COMPUTER,
    [pscredential]$Credential,
    [switch]$Reboot,
    [switch]$SkipPerfDll
)
. (Join-Path $PSScriptRoot 'Common.ps1')

Write-Step 'stage'
foreach ($file in @($PcwInfName, $PcwSysName, $PcwCatName, $PcwTestCertName)) {
    if (-not (Test-Path -LiteralPath (Join-Path $PackageDir $file))) {
        throw "$file is missing in ${PackageDir}: run ``cargo make`` (eWDK prompt) first"
    }
}
$stage = Join-Path $RepoRoot 'target\pcw-vm'
if (Test-Path $stage) { Remove-Item -Recurse -Force $stage }
New-Item -ItemType Directory -Force -Path "$stage\package", "$stage\manifest", "$stage\scripts" | Out-Null
Copy-Item -Path (Join-Path $PackageDir '*') -Destination "$stage\package" -Recurse
Copy-Item -LiteralPath (Join-Path $RepoRoot "manifest\$PcwManifestName") -Destination "$stage\manifest"
Copy-Item -Path (Join-Path $PSScriptRoot '*.ps1') -Destination "$stage\scripts"
if (-not $SkipPerfDll) { Build-PcwPerfDllAssets $RepoRoot "$stage\perfdll" }
Write-Check 'staged' $stage

if (-not $Credential) { $Credential = Get-PcwVmCredential }
$session = New-PcwVmSession $VMName $ComputerName $Credential
try {
    Write-Step "copy to $PcwVmRoot on the VM"
    Invoke-Command -Session $session -ScriptBlock {
        param($root)
        if (Test-Path $root) { Remove-Item -Recurse -Force $root }
        New-Item -ItemType Directory -Path $root | Out-Null
    } -ArgumentList $PcwVmRoot
    Copy-Item -ToSession $session -Path "$stage\*" -Destination $PcwVmRoot -Recurse
    Write-Check 'copied' $PcwVmRoot

    Write-Step 'test signing on the VM'
    $code = Invoke-Command -Session $session -ScriptBlock {
        param($root)
        Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force
        & "$root\scripts\Enable-TestSigning.ps1" | Out-Host
        $LASTEXITCODE
    } -ArgumentList $PcwVmRoot
    if ($code -eq 3010) {
        if (-not $Reboot) {
            throw "test signing was enabled on the VM and needs a reboot: Restart-VM $VMName (or rerun with -Reboot), then cargo make deploy-vm again"
        }
        Remove-PSSession $session
        if ($ComputerName) {
            Restart-Computer -ComputerName $ComputerName -Credential $Credential -Force -Wait -For PowerShell
        } else {
            Restart-VM -Name $VMName -Force -Wait -For Heartbeat
        }
        $session = New-PcwVmSession $VMName $ComputerName $Credential
        Write-Check 'VM rebooted'
    } elseif ($code -ne 0) {
        throw "Enable-TestSigning.ps1 failed on the VM (exit code $code)"
    }

    Write-Step 'install on the VM'
    $perfDir = if ($SkipPerfDll) { '' } else { "$PcwVmRoot\perfdll" }
    Invoke-Command -Session $session -ScriptBlock {
        param($root, $perfDir)
        Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force
        $ErrorActionPreference = 'Stop'
        & "$root\scripts\Install-PcwDriver.ps1" -PackageDir "$root\package" `
            -Manifest "$root\manifest\pcw_driver.man" -PerfDllDir $perfDir
    } -ArgumentList $PcwVmRoot, $perfDir
    Write-Host "DEPLOYED to $(if ($ComputerName) { $ComputerName } else { $VMName }): now cargo make verify-vm"
} finally {
    if ($session) { Remove-PSSession $session -ErrorAction SilentlyContinue }
}
