// SPDX-License-Identifier: MIT OR Apache-2.0
//! Maps a PE32+ image into this process the way the kernel's image loader would: every section
//! at its RVA with its own page protection, base relocations applied for wherever the mapping
//! landed (an image whose relocations were stripped is mapped at its preferred base, or refused
//! by name), every import bound by name through a resolver, and MSVC's `/GS` cookie given a
//! random value. Parsing is the `object` crate's; what is checked here is what a loader must
//! refuse before it runs a byte of the image.

use std::collections::BTreeMap;
use std::ffi::c_void;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ExportTarget, ImageNtHeaders, ImageOptionalHeader, Import, PeFile64};

use crate::layout::load_config;

/// Why an image could not be mapped. Each names the problem and where it is.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The bytes are not a well-formed PE32+ file (bad DOS or NT header, truncated tables).
    #[error("bad header: not a well-formed PE32+ image ({0})")]
    BadHeader(#[from] object::Error),
    /// Not an x86-64 image.
    #[error("bad header: machine {0:#06x} is not x86-64 (0x8664)")]
    Machine(u16),
    /// Sections not aligned to whole pages cannot be given their own protection.
    #[error("bad header: section alignment {0:#x} is not a multiple of the 4 KiB page size")]
    SectionAlignment(u32),
    /// A section's virtual range is not inside `SizeOfImage`, or its raw data is not inside
    /// the file.
    #[error("section `{name}` ({what}) lies outside the {limit}")]
    SectionOutOfRange {
        /// Section name.
        name: String,
        /// Which range.
        what: &'static str,
        /// What it should lie within.
        limit: &'static str,
    },
    /// Two sections claim the same addresses.
    #[error("section overlap: `{0}` and `{1}` share addresses")]
    SectionOverlap(String, String),
    /// A section that is both writable and executable.
    #[error("section `{0}` is writable and executable")]
    WritableCode(String),
    /// A relocation that points outside the image or that a PE32+ image must not use.
    #[error("relocation out of range or unsupported: type {kind} at RVA {rva:#x}")]
    Relocation {
        /// RVA of the fixup.
        rva: u32,
        /// `IMAGE_REL_BASED_*` type.
        kind: u16,
    },
    /// The image's header says its relocations were stripped (`IMAGE_FILE_RELOCS_STRIPPED`), so
    /// it can only run at its preferred base, and that base cannot be had.
    #[error("relocations stripped: the image can only run at {base:#x}, {why}")]
    RelocationsStripped {
        /// The preferred base (`ImageBase`).
        base: u64,
        /// Why it cannot be mapped there.
        why: &'static str,
    },
    /// The load configuration directory names a `__security_cookie` outside the image.
    #[error("load configuration: {0}")]
    LoadConfig(String),
    /// The import directory is malformed.
    #[error("import table: {0}")]
    ImportTable(String),
    /// Imports no shim implements, each as `dll!name` (with the reason, when the loader knows
    /// one): every one of them, not only the first.
    #[error("{}", unsupported(.0))]
    UnsupportedImports(Vec<String>),
    /// The entry point is outside the image's code.
    #[error("bad header: entry point RVA {0:#x} is not in an executable section")]
    EntryPoint(u32),
    /// Another image is loaded in this process (the kernel routines' state is per process).
    #[error("another driver image is loaded in this process; unload and drop it first")]
    Busy,
    /// Reserving or protecting memory failed.
    #[error("mapping the image failed: {0}")]
    Map(std::io::Error),
}

/// `unsupported import A` for one, `N unsupported imports: A, B, …` for several.
fn unsupported(imports: &[String]) -> String {
    match imports {
        [one] => format!("unsupported import {one}"),
        many => format!("{} unsupported imports: {}", many.len(), many.join(", ")),
    }
}

/// What a resolver returns for `dll!name`: the address to store in the import address table.
pub type Resolver<'a> = &'a dyn Fn(&str, &str) -> Option<usize>;

/// One section as mapped.
#[derive(Clone, Debug)]
pub struct Section {
    /// Name.
    pub name: String,
    /// RVA.
    pub rva: u32,
    /// Mapped size (rounded to pages).
    pub size: usize,
    /// `PROT_*` it was given.
    pub protection: i32,
}

/// An image mapped and bound, ready to run. Unmapped on drop.
#[derive(Debug)]
pub struct MappedImage {
    base: *mut u8,
    size: usize,
    entry_rva: u32,
    exports: BTreeMap<String, u32>,
    sections: Vec<Section>,
    imports: Vec<String>,
}

// SAFETY: the mapping is plain memory owned by this value; the code in it is what is shared
// between threads, as a driver's image is in the kernel.
unsafe impl Send for MappedImage {}
// SAFETY: as above; `&MappedImage` only reads its own fields and computes addresses.
unsafe impl Sync for MappedImage {}

const PAGE: usize = 4096;

fn round_up(v: usize, to: usize) -> usize {
    v.div_ceil(to) * to
}

fn protection(characteristics: u32) -> i32 {
    let mut prot = libc::PROT_NONE;
    if characteristics & pe::IMAGE_SCN_MEM_READ.0 != 0 {
        prot |= libc::PROT_READ;
    }
    if characteristics & pe::IMAGE_SCN_MEM_WRITE.0 != 0 {
        prot |= libc::PROT_WRITE;
    }
    if characteristics & pe::IMAGE_SCN_MEM_EXECUTE.0 != 0 {
        prot |= libc::PROT_EXEC | libc::PROT_READ;
    }
    prot
}

impl MappedImage {
    /// Maps `file` and binds its imports through `resolve`.
    ///
    /// # Errors
    /// [`LoadError`], naming the first problem found (or every unsupported import at once).
    #[expect(
        clippy::too_many_lines,
        reason = "one pass of checks in the order a loader makes them, then the mapping"
    )]
    pub fn map(file: &[u8], resolve: Resolver<'_>) -> Result<Self, LoadError> {
        let pe_file = PeFile64::parse(file)?;
        let nt = pe_file.nt_headers();
        let machine = nt.file_header().machine.get(LE);
        if machine != pe::IMAGE_FILE_MACHINE_AMD64 {
            return Err(LoadError::Machine(machine.0));
        }
        let optional = nt.optional_header();
        let alignment = optional.section_alignment();
        if alignment == 0 || !(alignment as usize).is_multiple_of(PAGE) {
            return Err(LoadError::SectionAlignment(alignment));
        }
        let size = round_up(optional.size_of_image() as usize, PAGE);
        let headers = optional.size_of_headers() as usize;
        if headers > file.len() || headers > size {
            return Err(LoadError::SectionOutOfRange {
                name: "headers".into(),
                what: "SizeOfHeaders",
                limit: "file",
            });
        }

        // Check every section before touching memory.
        let mut ranges: Vec<(usize, usize, String)> = Vec::new();
        let mut sections = Vec::new();
        for header in pe_file.section_table().iter() {
            let name = String::from_utf8_lossy(header.raw_name())
                .trim_end_matches('\0')
                .to_owned();
            let rva = header.virtual_address.get(LE) as usize;
            let vsize = header.virtual_size.get(LE) as usize;
            let raw_size = header.size_of_raw_data.get(LE) as usize;
            let raw_at = header.pointer_to_raw_data.get(LE) as usize;
            let span = round_up(vsize.max(raw_size.min(vsize.max(1))), PAGE);
            if rva < headers || rva.checked_add(span).is_none_or(|end| end > size) {
                return Err(LoadError::SectionOutOfRange {
                    name,
                    what: "virtual range",
                    limit: "image (SizeOfImage)",
                });
            }
            if raw_size > 0
                && raw_at
                    .checked_add(raw_size)
                    .is_none_or(|end| end > file.len())
            {
                return Err(LoadError::SectionOutOfRange {
                    name,
                    what: "raw data",
                    limit: "file",
                });
            }
            if let Some((_, _, other)) = ranges
                .iter()
                .find(|(start, end, _)| rva < *end && *start < rva + span)
            {
                return Err(LoadError::SectionOverlap(other.clone(), name));
            }
            let characteristics = header.characteristics.get(LE).0;
            if characteristics & pe::IMAGE_SCN_MEM_WRITE.0 != 0
                && characteristics & pe::IMAGE_SCN_MEM_EXECUTE.0 != 0
            {
                return Err(LoadError::WritableCode(name));
            }
            ranges.push((rva, rva + span, name.clone()));
            sections.push((
                Section {
                    name,
                    rva: header.virtual_address.get(LE),
                    size: span,
                    protection: protection(characteristics),
                },
                raw_at,
                raw_size.min(vsize.max(raw_size)),
            ));
        }
        let entry_rva = optional.address_of_entry_point();
        let in_code = sections.iter().any(|(s, _, _)| {
            s.protection & libc::PROT_EXEC != 0
                && (s.rva
                    ..s.rva
                        .saturating_add(u32::try_from(s.size).unwrap_or(u32::MAX)))
                    .contains(&entry_rva)
        });
        if !in_code {
            return Err(LoadError::EntryPoint(entry_rva));
        }

        let stripped = nt
            .file_header()
            .characteristics
            .get(LE)
            .contains(pe::IMAGE_FILE_RELOCS_STRIPPED);
        let base = if stripped {
            map_at(optional.image_base(), size)?
        } else {
            // SAFETY: an anonymous private mapping of `size` bytes; no address hint.
            let base = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    size,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(LoadError::Map(std::io::Error::last_os_error()));
            }
            base
        };
        let mut image = Self {
            base: base.cast(),
            size,
            entry_rva,
            exports: BTreeMap::new(),
            sections: sections.iter().map(|(s, _, _)| s.clone()).collect(),
            imports: Vec::new(),
        };
        let memory = image.memory_mut();
        memory[..headers].copy_from_slice(&file[..headers]);
        for (section, raw_at, raw_size) in &sections {
            let at = section.rva as usize;
            let n = (*raw_size).min(section.size);
            memory[at..at + n].copy_from_slice(&file[*raw_at..*raw_at + n]);
        }

        image.relocate(&pe_file, file)?;
        image.bind(&pe_file, file, resolve)?;
        image.init_security_cookie(&pe_file)?;
        if let Some(table) = pe_file.export_table()? {
            for export in table.exports()? {
                if let (Some(name), ExportTarget::Address(rva)) = (export.name, export.target) {
                    image
                        .exports
                        .insert(String::from_utf8_lossy(name).into_owned(), rva);
                }
            }
        }
        image.protect()?;
        crate::ntos::cpu::register(image.base(), image.size, image.symbols(&pe_file));
        Ok(image)
    }

    /// The names of the image's code, for the loader's messages: the function symbols of a COFF
    /// symbol table (mingw-w64 keeps one unless the image is stripped) and, beside them, its
    /// exports, as `(rva, name)`; nothing without a symbol table.
    fn symbols(&self, pe_file: &PeFile64<'_>) -> Vec<(u32, String)> {
        use object::{Object, ObjectSymbol, SymbolKind};
        let base = pe_file.relative_address_base();
        let mut out: Vec<(u32, String)> = pe_file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
            .filter_map(|s| {
                let rva = u32::try_from(s.address().checked_sub(base)?).ok()?;
                Some((rva, s.name().ok()?.to_owned()))
            })
            .filter(|(rva, name)| (*rva as usize) < self.size && !name.is_empty())
            .collect();
        // Exports alone would name every routine after the nearest export below it (an image
        // built with LTO by MSVC's linker exports only `DriverEntry`, so every fault would read
        // `DriverEntry+…`): they join a symbol table, whose other routines bound them, or
        // nothing is named and the RVA (for the PDB) is the place.
        if out.is_empty() {
            return out;
        }
        out.extend(self.exports.iter().map(|(name, rva)| (*rva, name.clone())));
        out.sort_unstable();
        out.dedup_by_key(|(rva, _)| *rva);
        out
    }

    fn memory_mut(&mut self) -> &mut [u8] {
        // SAFETY: `base` is a live RW mapping of `size` bytes owned by `self` (protections are
        // applied only after the last use of this view, in `protect`).
        unsafe { core::slice::from_raw_parts_mut(self.base, self.size) }
    }

    fn relocate(&mut self, pe_file: &PeFile64<'_>, file: &[u8]) -> Result<(), LoadError> {
        let preferred = pe_file.nt_headers().optional_header().image_base();
        let delta = (self.base as u64).wrapping_sub(preferred);
        // As the Windows loader does: an image whose header says its relocations were stripped
        // runs only at its preferred base; one without a relocation directory but without that
        // flag has no absolute addresses to fix (all of a small driver's code can be
        // RIP-relative) and runs anywhere as it is.
        let stripped = pe_file
            .nt_headers()
            .file_header()
            .characteristics
            .get(LE)
            .contains(pe::IMAGE_FILE_RELOCS_STRIPPED);
        if delta != 0 && stripped {
            return Err(LoadError::RelocationsStripped {
                base: preferred,
                why: "and it was mapped elsewhere",
            });
        }
        let mut blocks = pe_file
            .data_directories()
            .relocation_blocks(file, &pe_file.section_table())?;
        let Some(blocks) = blocks.as_mut() else {
            return Ok(());
        };
        let size = self.size;
        let memory = self.memory_mut();
        while let Some(block) = blocks.next()? {
            for reloc in block {
                let rva = reloc.virtual_address;
                let at = rva as usize;
                match reloc.typ {
                    pe::IMAGE_REL_BASED_ABSOLUTE => {}
                    pe::IMAGE_REL_BASED_DIR64 if at.checked_add(8).is_some_and(|e| e <= size) => {
                        let mut word = [0u8; 8];
                        word.copy_from_slice(&memory[at..at + 8]);
                        let value = u64::from_le_bytes(word).wrapping_add(delta);
                        memory[at..at + 8].copy_from_slice(&value.to_le_bytes());
                    }
                    other => {
                        return Err(LoadError::Relocation { rva, kind: other.0 });
                    }
                }
            }
        }
        Ok(())
    }

    fn bind(
        &mut self,
        pe_file: &PeFile64<'_>,
        file: &[u8],
        resolve: Resolver<'_>,
    ) -> Result<(), LoadError> {
        let bad = |e: object::Error| LoadError::ImportTable(e.to_string());
        let Some(table) = pe_file
            .data_directories()
            .import_table(file, &pe_file.section_table())
            .map_err(bad)?
        else {
            return Ok(());
        };
        let mut missing = Vec::new();
        let mut descriptors = table.descriptors().map_err(bad)?;
        let size = self.size;
        while let Some(descriptor) = descriptors.next().map_err(bad)? {
            let dll = String::from_utf8_lossy(table.name(descriptor.name.get(LE)).map_err(bad)?)
                .into_owned();
            let lookup = match descriptor.original_first_thunk.get(LE) {
                0 => descriptor.first_thunk.get(LE),
                rva => rva,
            };
            let iat = descriptor.first_thunk.get(LE) as usize;
            let mut thunks = table.thunks(lookup).map_err(bad)?;
            let mut index = 0usize;
            while let Some(thunk) = thunks.next::<pe::ImageNtHeaders64>().map_err(bad)? {
                let name = match table.import::<pe::ImageNtHeaders64>(thunk).map_err(bad)? {
                    Import::Name(_, name) => String::from_utf8_lossy(name).into_owned(),
                    Import::Ordinal(ordinal) => format!("#{ordinal}"),
                };
                let slot = iat + 8 * index;
                if slot.checked_add(8).is_none_or(|end| end > size) {
                    return Err(LoadError::ImportTable(format!(
                        "the address table slot of {dll}!{name} at RVA {slot:#x} is outside \
                         the image"
                    )));
                }
                match resolve(&dll.to_ascii_lowercase(), &name) {
                    Some(address) => {
                        let memory = self.memory_mut();
                        memory[slot..slot + 8].copy_from_slice(&(address as u64).to_le_bytes());
                    }
                    None => missing.push(format!("{dll}!{name}")),
                }
                self.imports.push(format!("{dll}!{name}"));
                index += 1;
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(LoadError::UnsupportedImports(missing))
        }
    }

    /// Initialises MSVC's `/GS` cookie as the kernel's loader does: when the load configuration
    /// directory names a `__security_cookie` that still holds the compiler's default value, it
    /// gets a random one (48 bits, as on x64, never the default) before any of the image's code
    /// runs. A cookie that is not the default is left as it is.
    fn init_security_cookie(&mut self, pe_file: &PeFile64<'_>) -> Result<(), LoadError> {
        /// The x64 compilers' default `__security_cookie`.
        const DEFAULT_COOKIE: u64 = 0x0000_2B99_2DDF_A232;
        let Some(directory) = pe_file
            .data_directories()
            .get(pe::IMAGE_DIRECTORY_ENTRY_LOAD_CONFIG)
        else {
            return Ok(());
        };
        let (rva, len) = (
            directory.virtual_address.get(LE) as usize,
            directory.size.get(LE) as usize,
        );
        if rva == 0 || len == 0 {
            return Ok(());
        }
        let field = rva + load_config::SECURITY_COOKIE;
        if len < load_config::SECURITY_COOKIE + 8 || field + 8 > self.size {
            // Too short to name a cookie (or outside the image): there is none to initialise.
            return Ok(());
        }
        let base = self.base() as u64;
        let end = base + self.size as u64;
        let memory = self.memory_mut();
        let mut declared = [0u8; 4];
        declared.copy_from_slice(&memory[rva..rva + 4]);
        let declared = u32::from_le_bytes(declared) as usize;
        if declared != 0 && declared < load_config::SECURITY_COOKIE + 8 {
            return Ok(());
        }
        let mut va = [0u8; 8];
        va.copy_from_slice(&memory[field..field + 8]);
        let va = u64::from_le_bytes(va);
        if va == 0 {
            return Ok(());
        }
        if va < base || va.saturating_add(8) > end {
            return Err(LoadError::LoadConfig(format!(
                "`SecurityCookie` {va:#x} is outside the image ({base:#x}..{end:#x})"
            )));
        }
        let at = usize::try_from(va - base).unwrap_or(0);
        let mut value = [0u8; 8];
        value.copy_from_slice(&memory[at..at + 8]);
        let mut value = u64::from_le_bytes(value);
        if value == DEFAULT_COOKIE {
            // The loop below replaces it: a fresh value, never the default or zero.
            while value == DEFAULT_COOKIE || value == 0 {
                let mut random = [0u8; 8];
                // SAFETY: fills a buffer we own; a short read leaves zeros, which loop again.
                unsafe { libc::getrandom(random.as_mut_ptr().cast(), 8, 0) };
                value = u64::from_le_bytes(random) & 0x0000_FFFF_FFFF_FFFF;
            }
            memory[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        Ok(())
    }

    fn protect(&self) -> Result<(), LoadError> {
        let headers = [(0usize, PAGE, libc::PROT_READ)];
        let sections = self
            .sections
            .iter()
            .map(|s| (s.rva as usize, s.size, s.protection));
        for (at, len, prot) in headers.into_iter().chain(sections) {
            // SAFETY: a page-aligned range inside this image's own mapping.
            let rc = unsafe { libc::mprotect(self.base.wrapping_add(at).cast(), len, prot) };
            if rc != 0 {
                return Err(LoadError::Map(std::io::Error::last_os_error()));
            }
        }
        Ok(())
    }

    /// The image's base address.
    pub fn base(&self) -> usize {
        self.base as usize
    }

    /// The mapped size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether `address` lies inside the image.
    pub fn contains(&self, address: usize) -> bool {
        (self.base()..self.base() + self.size).contains(&address)
    }

    /// The entry point's address.
    pub fn entry_point(&self) -> usize {
        self.base() + self.entry_rva as usize
    }

    /// An exported name's address.
    pub fn export(&self, name: &str) -> Option<usize> {
        self.exports
            .get(name)
            .map(|rva| self.base() + *rva as usize)
    }

    /// The sections as mapped.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The image's `/GS` security cookie, if its load configuration names one: its address and
    /// the value it holds now. Read from the mapped headers, so that the image keeps no copy.
    pub fn security_cookie(&self) -> Option<(usize, u64)> {
        // e_lfanew, then the PE32+ optional header's data directory (entry 10, load config).
        let lfanew = usize::try_from(self.read_u32(0x3C)?).ok()?;
        let directory = lfanew + 24 + 112 + 8 * pe::IMAGE_DIRECTORY_ENTRY_LOAD_CONFIG;
        let rva = usize::try_from(self.read_u32(directory)?).ok()?;
        let len = usize::try_from(self.read_u32(directory + 4)?).ok()?;
        if rva == 0 || len < load_config::SECURITY_COOKIE + 8 {
            return None;
        }
        let va = usize::try_from(self.read_u64(rva + load_config::SECURITY_COOKIE)?).ok()?;
        if va == 0 || !self.contains(va) {
            return None;
        }
        Some((va, self.read_u64(va - self.base())?))
    }

    /// `N` bytes at `rva`, if inside the headers or a readable section.
    fn read<const N: usize>(&self, rva: usize) -> Option<[u8; N]> {
        let end = rva.checked_add(N)?;
        let readable = end <= PAGE
            || self.sections.iter().any(|s| {
                s.protection & libc::PROT_READ != 0
                    && s.rva as usize <= rva
                    && end <= s.rva as usize + s.size
            });
        if !readable {
            return None;
        }
        let mut out = [0u8; N];
        // SAFETY: inside the headers or a readable section of the mapping (checked above).
        unsafe { core::ptr::copy_nonoverlapping(self.base.wrapping_add(rva), out.as_mut_ptr(), N) };
        Some(out)
    }

    fn read_u32(&self, rva: usize) -> Option<u32> {
        self.read(rva).map(u32::from_le_bytes)
    }

    fn read_u64(&self, rva: usize) -> Option<u64> {
        self.read(rva).map(u64::from_le_bytes)
    }

    /// Every import the image binds, as `dll!name`, in table order.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// Overwrites code or data at `address` (tests use it to make a routine fault).
    ///
    /// # Safety
    /// No thread may be running the bytes being replaced.
    ///
    /// # Panics
    /// If the range is not inside the image.
    pub unsafe fn patch(&self, address: usize, bytes: &[u8]) {
        assert!(self.contains(address) && self.contains(address + bytes.len() - 1));
        let page = address & !(PAGE - 1);
        let len = round_up(address + bytes.len() - page, PAGE);
        let section = self
            .sections
            .iter()
            .find(|s| {
                let start = self.base() + s.rva as usize;
                (start..start + s.size).contains(&address)
            })
            .map_or(libc::PROT_READ, |s| s.protection);
        // SAFETY: pages of this image's mapping; made writable for the copy, then restored.
        unsafe {
            libc::mprotect(page as *mut c_void, len, libc::PROT_READ | libc::PROT_WRITE);
        }
        // SAFETY: the range is inside the mapping (asserted) and writable just above.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, bytes.len()) };
        // SAFETY: as above.
        unsafe {
            libc::mprotect(page as *mut c_void, len, section);
        }
    }
}

/// Maps `size` bytes at exactly `base` for an image whose relocations were stripped, or says why
/// that address cannot be had.
fn map_at(base: u64, size: usize) -> Result<*mut c_void, LoadError> {
    /// The end of the user half of the x86-64 address space.
    const USER_END: u64 = 0x0000_8000_0000_0000;
    let refuse = |why| Err(LoadError::RelocationsStripped { base, why });
    if !base.is_multiple_of(PAGE as u64) {
        return refuse("which is not page-aligned");
    }
    if base < 0x1_0000 || base.saturating_add(size as u64) > USER_END {
        return refuse("which is not a user-space address this process can map");
    }
    // SAFETY: an anonymous private mapping at `base`, which MAP_FIXED_NOREPLACE refuses to
    // place over anything already mapped.
    let at = unsafe {
        libc::mmap(
            base as *mut c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return if std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
            refuse("which is in use in this process")
        } else {
            Err(LoadError::Map(std::io::Error::last_os_error()))
        };
    }
    if at as u64 != base {
        // A kernel without MAP_FIXED_NOREPLACE took the address as a hint.
        // SAFETY: the mapping just made, unmapped once.
        unsafe { libc::munmap(at, size) };
        return refuse("which is in use in this process");
    }
    Ok(at)
}

impl Drop for MappedImage {
    fn drop(&mut self) {
        crate::ntos::cpu::unregister(self.base());
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.size) };
    }
}
