# SPDX-License-Identifier: MIT OR Apache-2.0
# Run on the test VM, elevated, after Install-PcwDriver.ps1. Checks what a user of the driver
# sees, and prints each check:
#   1. typeperf "\Geometric Waves(*)\*" -sc 3: the three waves, Triangle and Square, in range
#   2. Get-Counter: the same six values, in range
#   3. PCW Provider Statistics: Collections and Instances Returned increase between samples
#   4. every counterset of the manifest is listed, with the counters the checks use
#   5. the control device: opens, and which security descriptor it carries
#   6. V1: RegQueryValueEx(HKEY_PERFORMANCE_DATA) through pcw_perfdll.dll returns the same
#      objects and waves (skipped when the DLL is not registered, unless -RequireV1)
#   7. unless -KeepInstalled: Uninstall-PcwDriver.ps1 (stop, unload, nothing stays registered)
param(
    [string]$Manifest = 'C:\pcw-rs\manifest\pcw_driver.man',
    [string]$PerfDllDir = 'C:\pcw-rs\perfdll',
    [switch]$RequireV1,
    [switch]$KeepInstalled
)
. (Join-Path $PSScriptRoot 'Common.ps1')
Assert-PcwAdmin

function Assert-WaveValue([string]$Source, [string]$Wave, [string]$Counter, [double]$Value) {
    $range = $PcwWaves[$Wave]
    if ($Value -lt $range[0] -or $Value -gt $range[1]) {
        throw "${Source}: $Wave\$Counter = $Value is outside [$($range[0]), $($range[1])]"
    }
}

$service = Get-PcwService
if (-not $service -or $service.Status -ne 'Running') { throw "$PcwServiceName is not running: run Install-PcwDriver.ps1" }
Write-Check 'driver running' $PcwServiceName

Write-Step '1. typeperf "\Geometric Waves(*)\*" -sc 3'
$lines = Invoke-PcwNative 'typeperf.exe' @('\Geometric Waves(*)\*', '-sc', '3')
$rows = @($lines | Where-Object { $_.StartsWith('"') } | ConvertFrom-Csv)
if ($rows.Count -ne 3) { throw "typeperf returned $($rows.Count) samples, expected 3" }
$seen = 0
foreach ($column in $rows[0].PSObject.Properties.Name) {
    if ($column -notmatch '\\Geometric Waves\((.+)\)\\(.+)$') { continue }
    $wave = $Matches[1]; $counter = $Matches[2]
    if (-not $PcwWaves.Contains($wave) -or $PcwWaveCounters -notcontains $counter) { throw "unexpected typeperf column $column" }
    foreach ($row in $rows) {
        Assert-WaveValue 'typeperf' $wave $counter ([double]::Parse($row.$column, [Globalization.CultureInfo]::CurrentCulture))
    }
    $seen++
}
if ($seen -ne $PcwWaves.Count * $PcwWaveCounters.Count) { throw "typeperf showed $seen wave counters, expected 6" }
Write-Check 'typeperf: 3 waves x 2 counters, 3 samples, all in range'

Write-Step '2. Get-Counter'
$samples = (Get-Counter -Counter '\Geometric Waves(*)\*' -SampleInterval 1 -MaxSamples 2).CounterSamples
foreach ($wave in $PcwWaves.Keys) {
    foreach ($counter in $PcwWaveCounters) {
        $mine = @($samples | Where-Object { $_.InstanceName -eq $wave -and $_.Path -like "*\$counter" })
        if ($mine.Count -ne 2) { throw "Get-Counter: $wave\$counter has $($mine.Count) samples, expected 2" }
        foreach ($s in $mine) {
            if ($s.Status -ne 0) { throw "Get-Counter: $($s.Path) status $($s.Status)" }
            Assert-WaveValue 'Get-Counter' $wave $counter $s.CookedValue
        }
    }
}
Write-Check 'Get-Counter: 3 waves x 2 counters, in range'

Write-Step '3. PCW Provider Statistics'
$statPaths = $PcwStatCounters | ForEach-Object { "\PCW Provider Statistics\$_" }
# The driver keeps its statistics only while a consumer has them added: one query samples them
# beside the waves, so that the waves are collected while it watches. Three samples: whatever
# order PCW collects the two sets in within a sample, a waves collection falls between the
# first sample's statistics and the last's.
$samples = Get-Counter -Counter ($statPaths + '\Geometric Waves(*)\*') -SampleInterval 1 -MaxSamples 3
$before = $samples[0].CounterSamples
$after = $samples[2].CounterSamples
foreach ($name in @('Collections/sec', 'Instances Returned')) {
    $b = ($before | Where-Object { $_.Path -like "*\$name" }).RawValue
    $a = ($after | Where-Object { $_.Path -like "*\$name" }).RawValue
    if ($a -le $b) { throw "PCW Provider Statistics\$name did not increase ($b -> $a)" }
    Write-Check "statistics: $name increases" "$b -> $a"
}
$uptime = ($after | Where-Object { $_.Path -like '*\Time Since Load' }).CookedValue
if ($uptime -le 0) { throw "Time Since Load is $uptime" }
Write-Check 'statistics: Time Since Load' "$uptime s"

Write-Step '4. countersets'
foreach ($set in $PcwCounterSets.Keys) {
    $listed = Get-Counter -ListSet $set
    Write-Check 'listed' "$set ($($listed.CounterSetType))"
}
$queuePaths = (Get-Counter -ListSet 'PCW Dynamic Queues').Counter
foreach ($counter in $PcwQueueCounters) {
    if (-not ($queuePaths | Where-Object { $_ -like "*\$counter" })) { throw "PCW Dynamic Queues has no $counter" }
}
Write-Check 'PCW Dynamic Queues counters' ($PcwQueueCounters -join ', ')

Write-Step '5. control device'
$err = [PcwRs.Native]::TryOpen($PcwDevicePath, 0x80000000)
if ($err -ne 0) { throw "cannot open $PcwDevicePath (Win32 error $err)" }
Write-Check 'opens for reading' $PcwDevicePath
try {
    $sddl = [PcwRs.Native]::DeviceSddl($PcwDevicePath)
    if ($sddl -match ';;;WD\)') {
        throw "$PcwDevicePath carries the default descriptor $sddl (Everyone has access), not DEVICE_SDDL $PcwDeviceSddl: the driver's ObSetSecurityObjectByPointer call did not take effect"
    } else {
        Write-Check 'device DACL' "$sddl (DEVICE_SDDL is $PcwDeviceSddl)"
    }
} catch {
    Write-Warning "could not read the device's security descriptor: $_"
}

Write-Step '6. V1 through pcw_perfdll.dll'
$perfKey = "$PcwServiceKey\Performance"
if ((Test-Path $perfKey) -and $null -ne (Get-ItemProperty $perfKey).PSObject.Properties['First Counter']) {
    $first = [int](Get-ItemProperty $perfKey).'First Counter'
    $symbols = Read-PcwSymbols (Join-Path $PerfDllDir 'pcw_driver.h')
    $indexes = [ordered]@{}
    foreach ($set in $PcwCounterSets.Keys) { $indexes[$set] = $first + $symbols[$PcwCounterSets[$set]] }
    $objects = [PcwRs.Native]::QueryV1(($indexes.Values -join ' '))
    foreach ($set in $indexes.Keys) {
        $object = $objects | Where-Object { $_.NameIndex -eq $indexes[$set] }
        if (-not $object) { throw "V1: object $set (index $($indexes[$set])) is missing" }
        Write-Check 'V1 object' "$set (index $($indexes[$set]), $($object.NumCounters) counters, $($object.NumInstances) instances)"
    }
    $waves = $objects | Where-Object { $_.NameIndex -eq $indexes['Geometric Waves'] }
    foreach ($wave in $PcwWaves.Keys) {
        if ($waves.Instances -notcontains $wave) { throw "V1: Geometric Waves has no instance $wave" }
        foreach ($counter in $PcwWaveCounters) {
            $index = $first + $symbols["WAVE_$($counter.ToUpperInvariant())"]
            Assert-WaveValue 'V1' $wave $counter $waves.Values[$wave][$index]
        }
    }
    Write-Check 'V1: the same three waves, values in range'
} elseif ($RequireV1) {
    throw 'V1: pcw_perfdll.dll is not registered (Register-PcwPerfDll.ps1)'
} else {
    Write-Host '[skip] V1: pcw_perfdll.dll is not registered'
}

if (-not $KeepInstalled) {
    Write-Step '7. unload and unregister'
    & (Join-Path $PSScriptRoot 'Uninstall-PcwDriver.ps1') -Manifest $Manifest
}
Write-Host 'VERIFIED.'
