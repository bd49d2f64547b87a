# SPDX-License-Identifier: MIT OR Apache-2.0
# Run on the development machine (cargo make verify-vm): runs Verify-PcwDriver.ps1 on the test
# VM that deploy-vm installed, which checks typeperf, Get-Counter, the statistics and V1, and
# then unloads the driver and checks that nothing stays registered (-KeepInstalled keeps it).
param(
    [string]$VMName = $(if ($env:PCW_VM_NAME) { $env:PCW_VM_NAME } else { 'pcw-rs-test' }),
    [string]$ComputerName = $env:PCW_VM_COMPUTER,
    [pscredential]$Credential,
    [switch]$KeepInstalled
)
. (Join-Path $PSScriptRoot 'Common.ps1')

if (-not $Credential) { $Credential = Get-PcwVmCredential }
$session = New-PcwVmSession $VMName $ComputerName $Credential
try {
    Invoke-Command -Session $session -ScriptBlock {
        param($root, $keep)
        Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force
        $ErrorActionPreference = 'Stop'
        & "$root\scripts\Verify-PcwDriver.ps1" -Manifest "$root\manifest\pcw_driver.man" `
            -PerfDllDir "$root\perfdll" -KeepInstalled:$keep
    } -ArgumentList $PcwVmRoot, $KeepInstalled.IsPresent
} finally {
    Remove-PSSession $session -ErrorAction SilentlyContinue
}
