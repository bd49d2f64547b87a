# SPDX-License-Identifier: MIT OR Apache-2.0
# Shared names and helpers of the pcw-rs VM scripts; dot-sourced by each of them.
#
# Every name below must agree with manifest\pcw_driver.man, inf\pcw_driver.inx, src\control.rs,
# src\waves.rs and crates\pcw-perfdll (service key, .h symbols); crates\pcw-packaging's tests
# compare them on every `cargo test`. Windows PowerShell 5.1 or PowerShell 7, elevated.

Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'

$PcwServiceName  = 'pcw_driver'                                # INF AddService, lodctr drivername
$PcwSysName      = 'pcw_driver.sys'                            # manifest applicationIdentity
$PcwInfName      = 'pcw_driver.inf'
$PcwCatName      = 'pcw_driver.cat'
$PcwManifestName = 'pcw_driver.man'
$PcwProviderGuid = '{8d0c6f52-3a41-4e2b-9b57-1f6a2c3d4e50}'    # manifest providerGuid
$PcwDevicePath   = '\\.\PcwRs'                                 # src\control.rs SYMBOLIC_LINK
$PcwDeviceSddl   = 'D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GR;;;MU)'   # src\control.rs DEVICE_SDDL
$PcwTestCertName = 'WDRLocalTestCert.cer'                      # written by cargo make (wdk-build)
$PcwPerfDllName  = 'pcw_perfdll.dll'
$PcwVmRoot       = 'C:\pcw-rs'                                 # where deploy-vm puts everything

# Counterset name -> V1 object symbol in pcw_driver.h (the manifest symbol, upper case).
$PcwCounterSets = [ordered]@{
    'Geometric Waves'         = 'GEOMETRICWAVES'
    'PCW Provider Statistics' = 'PROVIDERSTATISTICS'
    'PCW Dynamic Queues'      = 'DYNAMICQUEUES'
}
# Wave instance -> (lowest, highest) value, from src\waves.rs (minimum, minimum + amplitude).
$PcwWaves = [ordered]@{
    'Small Wave'  = @(40, 60)
    'Medium Wave' = @(30, 70)
    'Large Wave'  = @(20, 80)
}
$PcwWaveCounters = @('Triangle', 'Square')

$PcwPerflibKey    = 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion\Perflib'
$PcwV2ProviderKey = "$PcwPerflibKey\_V2Providers\$PcwProviderGuid"
$PcwServiceKey    = "HKLM:\SYSTEM\CurrentControlSet\Services\$PcwServiceName"

function Write-Check([string]$What, [string]$Detail = '') {
    if ($Detail) { Write-Host "[ok] ${What}: $Detail" } else { Write-Host "[ok] $What" }
}

function Write-Step([string]$What) { Write-Host "== $What" }

function Assert-PcwAdmin {
    $principal = [Security.Principal.WindowsPrincipal][Security.Principal.WindowsIdentity]::GetCurrent()
    if (-not $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) {
        throw 'run this script from an elevated PowerShell (Run as administrator)'
    }
}

# Runs a native tool, echoes its output, and throws unless its exit code is allowed. (Native
# stderr under $ErrorActionPreference = 'Stop' would otherwise abort Windows PowerShell 5.1.)
function Invoke-PcwNative {
    param([string]$Exe, [string[]]$Arguments, [int[]]$AllowedExitCodes = @(0), [switch]$Quiet)
    $saved = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        $output = @(& $Exe @Arguments 2>&1 | ForEach-Object { "$_" })
        $code = $LASTEXITCODE
    } finally {
        $ErrorActionPreference = $saved
    }
    if (-not $Quiet) { $output | ForEach-Object { Write-Host "   | $_" } }
    if ($AllowedExitCodes -notcontains $code) {
        throw "$Exe $($Arguments -join ' ') failed with exit code $code"
    }
    return , $output
}

# Whether test signing is active in the running boot (not merely configured for the next one).
function Test-PcwTestSigningActive {
    $options = (Get-ItemProperty 'HKLM:\SYSTEM\CurrentControlSet\Control').SystemStartOptions
    return ($options -match 'TESTSIGNING')
}

# The directory pcw_driver.sys runs from: the service's ImagePath, normally
# \SystemRoot\System32\DriverStore\FileRepository\pcw_driver.inf_<arch>_<hash>\pcw_driver.sys
# (DIRID 13). This is the directory `lodctr /m:` needs.
function Get-PcwDriverDir {
    $image = (Get-ItemProperty $PcwServiceKey -ErrorAction SilentlyContinue).ImagePath
    if (-not $image) { throw "service $PcwServiceName is not installed (no ImagePath)" }
    $path = $image -replace '^\\\?\?\\', ''
    $path = $path -replace '^\\SystemRoot\\', "$env:SystemRoot\"
    if (-not [IO.Path]::IsPathRooted($path)) { $path = Join-Path $env:SystemRoot $path }
    if (-not (Test-Path -LiteralPath $path)) { throw "ImagePath $image does not exist ($path)" }
    if ((Split-Path -Leaf $path) -ne $PcwSysName) { throw "ImagePath $image is not $PcwSysName" }
    return (Split-Path -Parent $path)
}

# Published names (oemNN.inf) of every pcw_driver.inf package in the driver store.
function Get-PcwOemInfs {
    Get-WindowsDriver -Online | Where-Object {
        (Split-Path -Leaf $_.OriginalFileName) -eq $PcwInfName
    } | ForEach-Object { $_.Driver }
}

function Get-PcwService { Get-Service -Name $PcwServiceName -ErrorAction SilentlyContinue }

# Device access and V1 performance data, by P/Invoke (no extra module needed on the VM).
if (-not ('PcwRs.Native' -as [type])) {
    Add-Type -TypeDefinition @'
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;
namespace PcwRs {
public sealed class V1Object {
    public int NameIndex; public int NumCounters; public int NumInstances;
    public List<string> Instances = new List<string>();
    // instance name -> (counter name index -> first DWORD of its value)
    public Dictionary<string, Dictionary<int, long>> Values = new Dictionary<string, Dictionary<int, long>>();
}
public static class Native {
    [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
    static extern IntPtr CreateFileW(string name, uint access, uint share, IntPtr sa, uint disposition, uint flags, IntPtr template);
    [DllImport("kernel32.dll")] static extern bool CloseHandle(IntPtr h);
    [DllImport("advapi32.dll")]
    static extern uint GetSecurityInfo(IntPtr h, int type, uint info, IntPtr o, IntPtr g, IntPtr d, IntPtr s, out IntPtr sd);
    [DllImport("advapi32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
    static extern bool ConvertSecurityDescriptorToStringSecurityDescriptorW(IntPtr sd, uint rev, uint info, out IntPtr str, IntPtr len);
    [DllImport("kernel32.dll")] static extern IntPtr LocalFree(IntPtr p);
    [DllImport("advapi32.dll", CharSet = CharSet.Unicode)]
    static extern int RegQueryValueExW(IntPtr key, string value, IntPtr reserved, out uint type, byte[] data, ref uint size);
    [DllImport("advapi32.dll")] static extern int RegCloseKey(IntPtr key);
    static readonly IntPtr HKEY_PERFORMANCE_DATA = new IntPtr(unchecked((int)0x80000004));

    // Opens the device with `access` (0x80000000 GENERIC_READ, 0x40000000 GENERIC_WRITE,
    // 0x00020000 READ_CONTROL); returns the Win32 error (0 = opened).
    public static int TryOpen(string path, uint access) {
        IntPtr h = CreateFileW(path, access, 3, IntPtr.Zero, 3, 0, IntPtr.Zero);
        if (h == new IntPtr(-1)) return Marshal.GetLastWin32Error();
        CloseHandle(h);
        return 0;
    }

    // The device object's DACL as SDDL (SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION).
    public static string DeviceSddl(string path) {
        IntPtr h = CreateFileW(path, 0x00020000, 3, IntPtr.Zero, 3, 0, IntPtr.Zero);
        if (h == new IntPtr(-1)) throw new System.ComponentModel.Win32Exception(Marshal.GetLastWin32Error());
        try {
            IntPtr sd;
            uint rc = GetSecurityInfo(h, 6, 4, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out sd);
            if (rc != 0) throw new System.ComponentModel.Win32Exception((int)rc);
            IntPtr str;
            if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, 1, 4, out str, IntPtr.Zero)) {
                LocalFree(sd);
                throw new System.ComponentModel.Win32Exception(Marshal.GetLastWin32Error());
            }
            string s = Marshal.PtrToStringUni(str);
            LocalFree(str); LocalFree(sd);
            return s;
        } finally { CloseHandle(h); }
    }

    // RegQueryValueExW(HKEY_PERFORMANCE_DATA, query): Perflib loads the V1 DLLs, calls
    // Open/Collect and returns the PERF_DATA_BLOCK (offsets as in docs/v1-format.md).
    public static List<V1Object> QueryV1(string query) {
        uint size = 64 * 1024; byte[] buf; int rc; uint type;
        while (true) {
            buf = new byte[size]; uint got = size;
            rc = RegQueryValueExW(HKEY_PERFORMANCE_DATA, query, IntPtr.Zero, out type, buf, ref got);
            if (rc == 234) { size *= 2; continue; } // ERROR_MORE_DATA
            if (rc != 0) throw new System.ComponentModel.Win32Exception(rc);
            break;
        }
        RegCloseKey(HKEY_PERFORMANCE_DATA);
        if (Encoding.Unicode.GetString(buf, 0, 8) != "PERF") throw new Exception("no PERF signature");
        int header = BitConverter.ToInt32(buf, 24), count = BitConverter.ToInt32(buf, 28);
        var objects = new List<V1Object>();
        int obj = header;
        for (int i = 0; i < count; i++) {
            var o = new V1Object();
            int total = BitConverter.ToInt32(buf, obj), definition = BitConverter.ToInt32(buf, obj + 4);
            int defs = obj + BitConverter.ToInt32(buf, obj + 8);
            o.NameIndex = BitConverter.ToInt32(buf, obj + 12);
            o.NumCounters = BitConverter.ToInt32(buf, obj + 32);
            o.NumInstances = BitConverter.ToInt32(buf, obj + 40);
            var counters = new List<int[]>(); // name index, offset
            for (int c = 0; c < o.NumCounters; c++) {
                int d = defs + 40 * c;
                counters.Add(new int[] { BitConverter.ToInt32(buf, d + 4), BitConverter.ToInt32(buf, d + 36) });
            }
            int inst = obj + definition;
            int n = o.NumInstances < 0 ? 1 : o.NumInstances;
            for (int k = 0; k < n; k++) {
                string name = "";
                int block = inst;
                if (o.NumInstances >= 0) {
                    int nameOffset = BitConverter.ToInt32(buf, inst + 16), nameLength = BitConverter.ToInt32(buf, inst + 20);
                    if (nameLength > 2) name = Encoding.Unicode.GetString(buf, inst + nameOffset, nameLength - 2);
                    block = inst + BitConverter.ToInt32(buf, inst);
                }
                var values = new Dictionary<int, long>();
                foreach (var c in counters) values[c[0]] = BitConverter.ToUInt32(buf, block + c[1]);
                o.Instances.Add(name); o.Values[name] = values;
                inst = block + BitConverter.ToInt32(buf, block);
            }
            objects.Add(o);
            obj += total;
        }
        return objects;
    }
}
}
'@
}

# The V1 symbol offsets of pcw_driver.h (`#define SYMBOL offset`).
function Read-PcwSymbols([string]$HeaderPath) {
    $symbols = @{}
    foreach ($line in Get-Content -LiteralPath $HeaderPath) {
        if ($line -match '^#define\s+(\w+)\s+(\d+)\s*$') { $symbols[$Matches[1]] = [int]$Matches[2] }
    }
    return $symbols
}

# Removes everything the install scripts add, in reverse order; each step only if needed.
function Remove-PcwDriver([string]$Manifest) {
    if (Test-Path "$PcwServiceKey\Performance") {
        & (Join-Path $PSScriptRoot 'Unregister-PcwPerfDll.ps1')
    }
    if (Test-Path $PcwV2ProviderKey) {
        if (-not (Test-Path -LiteralPath $Manifest)) { throw "unlodctr /m: needs the manifest; $Manifest is missing" }
        Invoke-PcwNative 'unlodctr.exe' @("/m:$Manifest") | Out-Null
        Write-Check 'counter manifest unregistered' $Manifest
    }
    $service = Get-PcwService
    if ($service -and $service.Status -ne 'Stopped') {
        Invoke-PcwNative 'sc.exe' @('stop', $PcwServiceName) -AllowedExitCodes @(0, 1062) | Out-Null
        $service.WaitForStatus('Stopped', [TimeSpan]::FromSeconds(30))
        Write-Check 'driver stopped and unloaded' $PcwServiceName
    }
    foreach ($oem in @(Get-PcwOemInfs)) {
        Invoke-PcwNative 'pnputil.exe' @('/delete-driver', $oem, '/uninstall', '/force') | Out-Null
        Write-Check 'driver package removed from the driver store' $oem
    }
    if (Get-PcwService) {
        Invoke-PcwNative 'sc.exe' @('delete', $PcwServiceName) -AllowedExitCodes @(0, 1060, 1072) | Out-Null
        Write-Check 'service deleted' $PcwServiceName
    }
}

# Counter names the checks use, per counterset (manifest `name`s).
$PcwStatCounters  = @('Collections/sec', 'Instances Returned', 'Time Since Load')
$PcwQueueCounters = @('Packets/sec', 'Bytes Total', 'Depth')

# Builds pcw-perfdll (release) and copies the DLL and its build-time install assets (the .reg
# fragment, the lodctr .ini and its .h) into $Destination.
function Build-PcwPerfDllAssets([string]$RepoRoot, [string]$Destination) {
    Write-Step 'cargo build --release -p pcw-perfdll'
    Push-Location $RepoRoot
    try {
        $lines = Invoke-PcwNative 'cargo' @('build', '--release', '-p', 'pcw-perfdll', '--message-format=json') -Quiet
    } finally { Pop-Location }
    $outDir = $null; $dll = $null
    foreach ($line in $lines) {
        if (-not $line.StartsWith('{')) { continue }
        $msg = $line | ConvertFrom-Json
        if ($msg.reason -eq 'build-script-executed' -and $msg.package_id -match 'pcw-perfdll') { $outDir = $msg.out_dir }
        if ($msg.reason -eq 'compiler-artifact' -and $msg.target.name -eq 'pcw_perfdll') {
            $dll = @($msg.filenames | Where-Object { $_ -like '*.dll' }) | Select-Object -First 1
        }
    }
    if (-not $outDir -or -not $dll) { throw 'cargo did not report pcw-perfdll''s OUT_DIR and DLL' }
    New-Item -ItemType Directory -Force -Path $Destination | Out-Null
    Copy-Item -LiteralPath $dll -Destination (Join-Path $Destination $PcwPerfDllName) -Force
    foreach ($asset in @('pcw_perfdll.reg', 'pcw_driver.ini', 'pcw_driver.h')) {
        Copy-Item -LiteralPath (Join-Path $outDir $asset) -Destination $Destination -Force
    }
    Write-Check 'V1 assets staged' $Destination
}

# The test VM's administrator credential: PCW_VM_USER/PCW_VM_PASSWORD, else a prompt.
function Get-PcwVmCredential {
    if ($env:PCW_VM_USER -and $env:PCW_VM_PASSWORD) {
        $secure = ConvertTo-SecureString $env:PCW_VM_PASSWORD -AsPlainText -Force
        return New-Object System.Management.Automation.PSCredential($env:PCW_VM_USER, $secure)
    }
    return Get-Credential -Message 'administrator account on the test VM'
}

# A PowerShell session on the test VM: WinRM when a computer name is given, else PowerShell
# Direct to the Hyper-V VM of that name (run on the Hyper-V host, elevated).
function New-PcwVmSession([string]$VMName, [string]$ComputerName, [pscredential]$Credential) {
    if ($ComputerName) {
        Write-Step "WinRM session to $ComputerName"
        return New-PSSession -ComputerName $ComputerName -Credential $Credential
    }
    Write-Step "PowerShell Direct session to VM $VMName"
    return New-PSSession -VMName $VMName -Credential $Credential
}
