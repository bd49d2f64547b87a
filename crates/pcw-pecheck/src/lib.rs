// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-pecheck: the PE facts of the Windows artifacts that `scripts/cross-windows.sh` builds on
//! Linux, one function per fact.
//!
//! [`Image::parse`] reads a PE32+ file once (with the `object` crate's PE reader) into the
//! handful of facts the checks need: subsystem, `DllCharacteristics`, entry point, sections,
//! imports (ordinary and delay-load), exports and whether a TLS directory exists. Each check
//! returns `Ok(())` or a [`Fact`] whose message names the fact that does not hold and what was
//! found instead. [`check_driver`] and [`check_perf_dll`] run every check for one artifact and
//! return all failures, not just the first.
//!
//! What is checked, and why:
//!
//! * the driver (`pcw_driver.sys`): subsystem `NATIVE`; the entry point is `DriverEntry` (the
//!   image's `AddressOfEntryPoint` equals the RVA of its `DriverEntry` export: the Rust cdylib
//!   exports every `#[no_mangle] pub extern` function, so the export is the linker's own record
//!   of where the symbol went); `FORCE_INTEGRITY` and `NX_COMPAT` (a signed driver must carry
//!   both); imports only from `ntoskrnl.exe` and `HAL.dll`, among them the PCW and I/O manager
//!   routines [`DRIVER_REQUIRED_IMPORTS`] names; no section both writable and executable; no TLS
//!   directory (the kernel loader does not run TLS callbacks or allocate TLS for drivers);
//! * the perf DLL (`pcw_perfdll.dll`): exports exactly [`PERF_DLL_EXPORTS`] and imports only
//!   from [`PERF_DLL_ALLOWED_IMPORTS`], the system DLLs a mingw `std` build needs plus
//!   `advapi32.dll` for the registry and event log.
//!
//! Beside these header facts, four modules analyse the code (the binary `pcw-pecheck` runs
//! them on the cross-built artifacts):
//!
//! * [`code`]: functions, instructions (decoded with `iced-x86`) and the call graph of an
//!   image, with names from the driver's PDB (`pdb`) or the DLL's COFF symbol table;
//! * [`nopanic`]: no entry point of the driver, nor the DLL's Collect/Close (nor Open, but for
//!   allocation failure), reaches Rust's panic machinery; a root that is not found fails;
//! * [`strings`]: the counter names and descriptions of the manifest are in the driver's
//!   `RT_STRING` resources under their ids, as `lodctr /m:` reads them;
//! * [`constraints`]: the driver's stack frames (1 KiB per frame from every entry point, no
//!   recursion, no `__chkstk` or dynamic allocation) and no x87/MMX/AVX or floating-point math.
#![forbid(
    unsafe_code,
    reason = "images, PDBs and manifests are read as bytes through `object`, `pdb` and `iced-x86`; \
              the checker touches no raw memory of its own"
)]

pub mod code;
pub mod constraints;
mod load;
pub mod nopanic;
pub mod strings;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ExportTarget, ImageNtHeaders, ImageOptionalHeader, Import, PeFile64};

/// DLLs the driver may import from (compared case-insensitively).
pub const DRIVER_ALLOWED_IMPORTS: &[&str] = &["ntoskrnl.exe", "hal.dll"];

/// Routines the driver must import: PCW registration and instances, the I/O manager calls of
/// its control device, and the call that puts `DEVICE_SDDL` on that device.
pub const DRIVER_REQUIRED_IMPORTS: &[&str] = &[
    "PcwRegister",
    "PcwUnregister",
    "PcwAddInstance",
    "PcwCreateInstance",
    "PcwCloseInstance",
    "IoCreateDevice",
    "IoCreateSymbolicLink",
    "IoDeleteDevice",
    "IoDeleteSymbolicLink",
    "IofCompleteRequest",
    "ObSetSecurityObjectByPointer",
];

/// The driver's entry point symbol (`/ENTRY:DriverEntry`).
pub const DRIVER_ENTRY: &str = "DriverEntry";

/// Exactly what the perf DLL exports (Perflib finds them through `Performance\Open`, `Collect`
/// and `Close`).
pub const PERF_DLL_EXPORTS: &[&str] = &[
    "OpenPerformanceData",
    "CollectPerformanceData",
    "ClosePerformanceData",
];

/// DLLs the perf DLL may import from (compared case-insensitively): what Rust's `std` imports
/// under mingw (measured on the cross-build of `scripts/cross-windows.sh`: `kernel32`, `ntdll`,
/// `msvcrt`, `ws2_32`, `userenv`, `bcryptprimitives` and the `api-ms-win` synch set), plus
/// `advapi32.dll` for the registry (`First Counter`) and the event log the DLL reports failures to.
pub const PERF_DLL_ALLOWED_IMPORTS: &[&str] = &[
    "kernel32.dll",
    "ntdll.dll",
    "msvcrt.dll",
    "ws2_32.dll",
    "userenv.dll",
    "bcryptprimitives.dll",
    "api-ms-win-core-synch-l1-2-0.dll",
    "advapi32.dll",
];

/// A PE fact that does not hold; the message names the fact and what was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fact {
    /// The bytes are not a PE32+ image this crate can read.
    #[error("not a readable PE32+ image: {0}")]
    Malformed(String),
    /// The optional header's subsystem is not the expected one.
    #[error("subsystem: expected {expected} ({expected_value}), found {found} ({found_value})")]
    Subsystem {
        /// Name of the expected subsystem.
        expected: &'static str,
        /// Its value.
        expected_value: u16,
        /// Name of the subsystem found.
        found: &'static str,
        /// Its value.
        found_value: u16,
    },
    /// The entry point symbol is not exported, so where it is cannot be told.
    #[error(
        "entry point: `{symbol}` is not exported, so AddressOfEntryPoint {entry:#x} cannot be shown to be it"
    )]
    EntrySymbolMissing {
        /// The symbol.
        symbol: &'static str,
        /// `AddressOfEntryPoint`.
        entry: u32,
    },
    /// `AddressOfEntryPoint` is not the entry point symbol's address.
    #[error("entry point: AddressOfEntryPoint is {entry:#x} but `{symbol}` is at {symbol_rva:#x}")]
    EntryPoint {
        /// The symbol.
        symbol: &'static str,
        /// `AddressOfEntryPoint`.
        entry: u32,
        /// The symbol's RVA.
        symbol_rva: u32,
    },
    /// A required `DllCharacteristics` flag is clear.
    #[error("DllCharacteristics: {flag} ({value:#06x}) is not set (found {found:#06x})")]
    DllCharacteristic {
        /// The flag's name.
        flag: &'static str,
        /// The flag's value.
        value: u16,
        /// All the characteristics found.
        found: u16,
    },
    /// An import from a DLL that is not allowed.
    #[error(
        "imports: `{function}` is imported from `{dll}`, which is not allowed (allowed: {allowed})"
    )]
    ImportNotAllowed {
        /// The DLL, as the image names it.
        dll: String,
        /// One function imported from it.
        function: String,
        /// The allowed DLLs, comma-separated.
        allowed: String,
    },
    /// Functions that must be imported are not.
    #[error("imports: not imported: {functions}")]
    ImportMissing {
        /// The functions, each in backticks, comma-separated.
        functions: String,
    },
    /// A section is both writable and executable.
    #[error(
        "sections: `{section}` is both writable and executable (characteristics {characteristics:#010x})"
    )]
    WritableExecutable {
        /// The section's name.
        section: String,
        /// Its characteristics.
        characteristics: u32,
    },
    /// The image has a TLS directory.
    #[error("TLS: the image has a TLS directory (RVA {rva:#x}, {size} bytes)")]
    Tls {
        /// The directory's RVA.
        rva: u32,
        /// Its size.
        size: u32,
    },
    /// The exports are not exactly the expected set.
    #[error("exports: expected exactly {expected}; unexpected: {extra}; missing: {missing}")]
    Exports {
        /// The expected names, comma-separated.
        expected: String,
        /// Exported names not expected (or `none`).
        extra: String,
        /// Expected names not exported (or `none`).
        missing: String,
    },
}

/// One section's name and characteristics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The name (8 bytes at most, NULs trimmed; lossy UTF-8).
    pub name: String,
    /// `IMAGE_SCN_*` flags.
    pub characteristics: u32,
}

/// One imported function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The DLL as the image names it.
    pub dll: String,
    /// The function name, or `#ordinal` for an import by ordinal.
    pub function: String,
    /// Whether it comes from the delay-load table.
    pub delay_load: bool,
}

/// One exported name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The name.
    pub name: String,
    /// Its RVA, or `None` for a forwarder.
    pub rva: Option<u32>,
}

/// The facts of one PE32+ image the checks look at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// `IMAGE_SUBSYSTEM_*`.
    pub subsystem: u16,
    /// `IMAGE_DLLCHARACTERISTICS_*`.
    pub dll_characteristics: u16,
    /// `AddressOfEntryPoint` (RVA).
    pub entry_point: u32,
    /// The sections, in order.
    pub sections: Vec<Section>,
    /// Every imported function.
    pub imports: Vec<Imported>,
    /// Every exported name.
    pub exports: Vec<Exported>,
    /// The TLS data directory (RVA, size) when present.
    pub tls: Option<(u32, u32)>,
}

fn malformed(what: &str, e: &object::read::Error) -> Fact {
    Fact::Malformed(format!("{what}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn import_name(import: Import<'_>) -> String {
    match import {
        Import::Name(_, name) => text(name),
        Import::Ordinal(ordinal) => format!("#{ordinal}"),
    }
}

impl Image {
    /// Reads the facts of a PE32+ image.
    ///
    /// # Errors
    /// [`Fact::Malformed`] when the bytes are not a PE32+ image or a table cannot be read.
    pub fn parse(data: &[u8]) -> Result<Self, Fact> {
        let file = PeFile64::parse(data).map_err(|e| malformed("headers", &e))?;
        let optional = file.nt_headers().optional_header();
        let sections = file
            .section_table()
            .iter()
            .map(|s| Section {
                name: text(s.raw_name()).trim_end_matches('\0').to_owned(),
                characteristics: s.characteristics.get(LE).0,
            })
            .collect();
        let mut imports = read_imports(&file)?;
        imports.extend(read_delay_load_imports(&file)?);
        let exports = read_exports(&file)?;
        let tls = file
            .data_directory(pe::IMAGE_DIRECTORY_ENTRY_TLS)
            .map(|d| (d.virtual_address.get(LE), d.size.get(LE)))
            .filter(|&(rva, size)| rva != 0 || size != 0);
        Ok(Self {
            subsystem: optional.subsystem().0,
            dll_characteristics: optional.dll_characteristics().0,
            entry_point: optional.address_of_entry_point(),
            sections,
            imports,
            exports,
            tls,
        })
    }
}

/// The ordinary import table.
fn read_imports(file: &PeFile64<'_>) -> Result<Vec<Imported>, Fact> {
    let mut imports = Vec::new();
    if let Some(table) = file
        .import_table()
        .map_err(|e| malformed("import table", &e))?
    {
        let mut descriptors = table
            .descriptors()
            .map_err(|e| malformed("import descriptors", &e))?;
        while let Some(d) = descriptors
            .next()
            .map_err(|e| malformed("import descriptor", &e))?
        {
            let dll = text(
                table
                    .name(d.name.get(LE))
                    .map_err(|e| malformed("import DLL name", &e))?,
            );
            // The lookup table, or the address table when a linker left the former out.
            let list = match d.original_first_thunk.get(LE) {
                0 => d.first_thunk.get(LE),
                rva => rva,
            };
            let mut thunks = table
                .thunks(list)
                .map_err(|e| malformed("import thunks", &e))?;
            while let Some(thunk) = thunks
                .next::<pe::ImageNtHeaders64>()
                .map_err(|e| malformed("import thunk", &e))?
            {
                let import = table
                    .import::<pe::ImageNtHeaders64>(thunk)
                    .map_err(|e| malformed("import name", &e))?;
                imports.push(Imported {
                    dll: dll.clone(),
                    function: import_name(import),
                    delay_load: false,
                });
            }
        }
    }
    Ok(imports)
}

/// The delay-load import table.
fn read_delay_load_imports(file: &PeFile64<'_>) -> Result<Vec<Imported>, Fact> {
    let mut imports = Vec::new();
    if let Some(table) = file
        .delay_load_import_table()
        .map_err(|e| malformed("delay-load import table", &e))?
    {
        let mut descriptors = table
            .descriptors()
            .map_err(|e| malformed("delay-load descriptors", &e))?;
        while let Some(d) = descriptors
            .next()
            .map_err(|e| malformed("delay-load descriptor", &e))?
        {
            let dll = text(
                table
                    .name(d.dll_name_rva.get(LE))
                    .map_err(|e| malformed("delay-load DLL name", &e))?,
            );
            let mut thunks = table
                .thunks(d.import_name_table_rva.get(LE))
                .map_err(|e| malformed("delay-load thunks", &e))?;
            while let Some(thunk) = thunks
                .next::<pe::ImageNtHeaders64>()
                .map_err(|e| malformed("delay-load thunk", &e))?
            {
                let import = table
                    .import::<pe::ImageNtHeaders64>(thunk)
                    .map_err(|e| malformed("delay-load name", &e))?;
                imports.push(Imported {
                    dll: dll.clone(),
                    function: import_name(import),
                    delay_load: true,
                });
            }
        }
    }
    Ok(imports)
}

/// The named exports.
fn read_exports(file: &PeFile64<'_>) -> Result<Vec<Exported>, Fact> {
    let mut exports = Vec::new();
    if let Some(table) = file
        .export_table()
        .map_err(|e| malformed("export table", &e))?
    {
        for export in table.exports().map_err(|e| malformed("exports", &e))? {
            let Some(name) = export.name else { continue };
            exports.push(Exported {
                name: text(name),
                rva: match export.target {
                    ExportTarget::Address(rva) => Some(rva),
                    _ => None,
                },
            });
        }
    }
    Ok(exports)
}

/// The name of an `IMAGE_SUBSYSTEM_*` value.
pub const fn subsystem_name(value: u16) -> &'static str {
    match pe::Subsystem(value) {
        pe::IMAGE_SUBSYSTEM_NATIVE => "NATIVE",
        pe::IMAGE_SUBSYSTEM_WINDOWS_GUI => "WINDOWS_GUI",
        pe::IMAGE_SUBSYSTEM_WINDOWS_CUI => "WINDOWS_CUI",
        pe::IMAGE_SUBSYSTEM_EFI_APPLICATION => "EFI_APPLICATION",
        pe::IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER => "EFI_BOOT_SERVICE_DRIVER",
        pe::IMAGE_SUBSYSTEM_EFI_RUNTIME_DRIVER => "EFI_RUNTIME_DRIVER",
        pe::IMAGE_SUBSYSTEM_UNKNOWN => "UNKNOWN",
        _ => "other",
    }
}

/// The subsystem is `expected`.
///
/// # Errors
/// [`Fact::Subsystem`].
pub fn subsystem_is(image: &Image, expected: u16) -> Result<(), Fact> {
    if image.subsystem == expected {
        return Ok(());
    }
    Err(Fact::Subsystem {
        expected: subsystem_name(expected),
        expected_value: expected,
        found: subsystem_name(image.subsystem),
        found_value: image.subsystem,
    })
}

/// `AddressOfEntryPoint` is the RVA of the export named `symbol`.
///
/// # Errors
/// [`Fact::EntrySymbolMissing`] or [`Fact::EntryPoint`].
pub fn entry_point_is(image: &Image, symbol: &'static str) -> Result<(), Fact> {
    let entry = image.entry_point;
    let Some(symbol_rva) = image
        .exports
        .iter()
        .find(|e| e.name == symbol)
        .and_then(|e| e.rva)
    else {
        return Err(Fact::EntrySymbolMissing { symbol, entry });
    };
    if symbol_rva == entry {
        Ok(())
    } else {
        Err(Fact::EntryPoint {
            symbol,
            entry,
            symbol_rva,
        })
    }
}

/// Every flag of `flags` (name, value) is set in `DllCharacteristics`.
///
/// # Errors
/// [`Fact::DllCharacteristic`] for the first flag that is clear.
pub fn dll_characteristics_include(
    image: &Image,
    flags: &[(&'static str, u16)],
) -> Result<(), Fact> {
    let found = image.dll_characteristics;
    match flags.iter().find(|(_, value)| found & value != *value) {
        None => Ok(()),
        Some(&(flag, value)) => Err(Fact::DllCharacteristic { flag, value, found }),
    }
}

/// `FORCE_INTEGRITY` (signature checked at load) and `NX_COMPAT` (DEP).
pub const DRIVER_DLL_CHARACTERISTICS: &[(&str, u16)] = &[
    (
        "FORCE_INTEGRITY",
        pe::IMAGE_DLLCHARACTERISTICS_FORCE_INTEGRITY.0,
    ),
    ("NX_COMPAT", pe::IMAGE_DLLCHARACTERISTICS_NX_COMPAT.0),
];

/// Every import (ordinary and delay-load) comes from a DLL of `allowed` (case-insensitive).
///
/// # Errors
/// [`Fact::ImportNotAllowed`] naming the first DLL outside the list and a function from it.
pub fn imports_only_from(image: &Image, allowed: &[&str]) -> Result<(), Fact> {
    match image
        .imports
        .iter()
        .find(|i| !allowed.iter().any(|a| a.eq_ignore_ascii_case(&i.dll)))
    {
        None => Ok(()),
        Some(i) => Err(Fact::ImportNotAllowed {
            dll: i.dll.clone(),
            function: i.function.clone(),
            allowed: allowed.join(", "),
        }),
    }
}

/// Each function of `required` is imported (from any DLL; [`imports_only_from`] checks which).
///
/// # Errors
/// [`Fact::ImportMissing`] naming every one that is not.
pub fn imports_include(image: &Image, required: &[&str]) -> Result<(), Fact> {
    let missing: Vec<String> = required
        .iter()
        .filter(|r| !image.imports.iter().any(|i| i.function == **r))
        .map(|r| format!("`{r}`"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Fact::ImportMissing {
            functions: missing.join(", "),
        })
    }
}

/// No section is both writable and executable (`MEM_WRITE` with `MEM_EXECUTE` or `CNT_CODE`).
///
/// # Errors
/// [`Fact::WritableExecutable`] for the first such section.
pub fn no_writable_executable_section(image: &Image) -> Result<(), Fact> {
    let exec = pe::IMAGE_SCN_MEM_EXECUTE.0 | pe::IMAGE_SCN_CNT_CODE.0;
    let write = pe::IMAGE_SCN_MEM_WRITE.0;
    match image
        .sections
        .iter()
        .find(|s| s.characteristics & write != 0 && s.characteristics & exec != 0)
    {
        None => Ok(()),
        Some(s) => Err(Fact::WritableExecutable {
            section: s.name.clone(),
            characteristics: s.characteristics,
        }),
    }
}

/// The image has no TLS directory.
///
/// # Errors
/// [`Fact::Tls`].
pub fn no_tls(image: &Image) -> Result<(), Fact> {
    match image.tls {
        None => Ok(()),
        Some((rva, size)) => Err(Fact::Tls { rva, size }),
    }
}

/// The exported names are exactly `expected` (in any order).
///
/// # Errors
/// [`Fact::Exports`] listing the unexpected and the missing names.
pub fn exports_exactly(image: &Image, expected: &[&str]) -> Result<(), Fact> {
    let extra: Vec<&str> = image
        .exports
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| !expected.contains(n))
        .collect();
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|n| !image.exports.iter().any(|e| e.name == *n))
        .collect();
    if extra.is_empty() && missing.is_empty() {
        return Ok(());
    }
    let list = |v: &[&str]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    Err(Fact::Exports {
        expected: expected.join(", "),
        extra: list(&extra),
        missing: list(&missing),
    })
}

/// Every check of the driver image (`pcw_driver.sys`); all failures, in check order.
///
/// # Errors
/// The facts that do not hold (a single [`Fact::Malformed`] when the image cannot be read).
pub fn check_driver(data: &[u8]) -> Result<Image, Vec<Fact>> {
    let image = Image::parse(data).map_err(|f| vec![f])?;
    let failures: Vec<Fact> = [
        subsystem_is(&image, pe::IMAGE_SUBSYSTEM_NATIVE.0),
        entry_point_is(&image, DRIVER_ENTRY),
        dll_characteristics_include(&image, DRIVER_DLL_CHARACTERISTICS),
        imports_only_from(&image, DRIVER_ALLOWED_IMPORTS),
        imports_include(&image, DRIVER_REQUIRED_IMPORTS),
        no_writable_executable_section(&image),
        no_tls(&image),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    if failures.is_empty() {
        Ok(image)
    } else {
        Err(failures)
    }
}

/// Every check of the perf DLL image (`pcw_perfdll.dll`); all failures, in check order.
///
/// # Errors
/// The facts that do not hold (a single [`Fact::Malformed`] when the image cannot be read).
pub fn check_perf_dll(data: &[u8]) -> Result<Image, Vec<Fact>> {
    let image = Image::parse(data).map_err(|f| vec![f])?;
    let failures: Vec<Fact> = [
        exports_exactly(&image, PERF_DLL_EXPORTS),
        imports_only_from(&image, PERF_DLL_ALLOWED_IMPORTS),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    if failures.is_empty() {
        Ok(image)
    } else {
        Err(failures)
    }
}
