# SPDX-License-Identifier: MIT OR Apache-2.0
# Run on the test VM, elevated. Makes Windows load test-signed kernel drivers (the package
# `cargo make` signs with WDRLocalTestCert): `bcdedit /set testsigning on`, which takes effect
# at the NEXT boot. Idempotent. Exit codes: 0 = active in this boot; 3010 = configured, a
# reboot is required (done here only with -Reboot).
param([switch]$Reboot)
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

if (Test-PcwTestSigningActive) {
    Write-Check 'test signing is active in this boot' '(SystemStartOptions has TESTSIGNING)'
    exit 0
}

$bcd = Invoke-PcwNative 'bcdedit.exe' @('/enum', '{current}') -Quiet
$configured = [bool]($bcd | Where-Object { $_ -match '^testsigning\s+(Yes|On|True)\s*$' })
if (-not $configured) {
    $secureBoot = $false
    try { $secureBoot = Confirm-SecureBootUEFI } catch { $secureBoot = $false } # BIOS VMs throw
    if ($secureBoot) {
        throw 'Secure Boot is on, so bcdedit cannot enable test signing: turn it off in the VM ' +
            'settings (Hyper-V: Set-VMFirmware -VMName <vm> -EnableSecureBoot Off), then rerun'
    }
    Invoke-PcwNative 'bcdedit.exe' @('/set', 'testsigning', 'on') | Out-Null
    Write-Check 'bcdedit /set testsigning on' 'configured for the next boot'
} else {
    Write-Check 'test signing is configured' 'not active until the next boot'
}

if ($Reboot) {
    Write-Host 'REBOOTING now so that test signing takes effect.'
    Restart-Computer -Force
    exit 3010
}
Write-Host 'REBOOT REQUIRED: restart this machine (Restart-VM <vm> on the host) before installing the driver.'
exit 3010
