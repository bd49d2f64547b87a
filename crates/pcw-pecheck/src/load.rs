// SPDX-License-Identifier: MIT OR Apache-2.0
//! Filling a [`Program`] from a PE32+ file, its COFF symbol table or its PDB.

use std::fmt::Write as _;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, PeFile64};
use object::{Object, ObjectSection, ObjectSymbol};

use crate::code::{AnalysisError, Program, Region, RuntimeFunction};

fn pe_error(path: &str, e: impl std::fmt::Display) -> AnalysisError {
    AnalysisError::Pe {
        path: path.to_owned(),
        detail: e.to_string(),
    }
}

fn read_file(path: &str) -> Result<Vec<u8>, AnalysisError> {
    std::fs::read(path).map_err(|source| AnalysisError::Io {
        path: path.to_owned(),
        source,
    })
}

impl Program {
    /// The sections, exception table and import table of a PE32+ image, and, when
    /// `coff_symbols`, the functions its COFF symbol table names in `.text` (what mingw's linker
    /// keeps, every symbol in `.text`: functions, import thunks (typed as data), the constructor
    /// lists and the section symbols that mark where each object's code begins; an MSVC-linked
    /// image has none and takes its names
    /// from the PDB).
    ///
    /// # Errors
    /// [`AnalysisError::Pe`] when the image cannot be read, [`AnalysisError::NoText`] without a
    /// `.text` section.
    pub fn from_pe(path: &str, data: &[u8], coff_symbols: bool) -> Result<Self, AnalysisError> {
        let file = PeFile64::parse(data).map_err(|e| pe_error(path, e))?;
        let base = file.nt_headers().optional_header().image_base();
        let mut program = Self {
            image_base: base,
            ..Self::default()
        };
        for s in file.section_table().iter() {
            let name = String::from_utf8_lossy(s.raw_name())
                .trim_end_matches('\0')
                .to_owned();
            let bytes = s.pe_data(data).map_err(|e| pe_error(path, e))?;
            let va = base + u64::from(s.virtual_address.get(LE));
            let size = u64::from(s.virtual_size.get(LE));
            if name == ".text" && program.text_size == 0 {
                program.text_va = va;
                program.text_size = size;
            }
            program.regions.push(Region {
                name,
                va,
                size,
                data: bytes.to_vec(),
            });
        }
        if program.text_size == 0 {
            return Err(AnalysisError::NoText(path.to_owned()));
        }
        let directory = |index| {
            file.data_directory(index)
                .map(|d| (base + u64::from(d.virtual_address.get(LE)), d.size.get(LE)))
                .filter(|&(_, size)| size != 0)
        };
        program.iat = directory(pe::IMAGE_DIRECTORY_ENTRY_IAT).map(|(va, n)| (va, u64::from(n)));
        if let Some((va, size)) = directory(pe::IMAGE_DIRECTORY_ENTRY_EXCEPTION) {
            let n = usize::try_from(size).unwrap_or(0);
            let table = program
                .read(va, n)
                .ok_or_else(|| pe_error(path, "exception directory not file-backed"))?
                .to_vec();
            for entry in table.chunks_exact(12) {
                let word = |i: usize| {
                    entry
                        .get(i..i + 4)
                        .and_then(|b| b.try_into().ok())
                        .map_or(0, u32::from_le_bytes)
                };
                let (b, e, u) = (word(0), word(4), word(8));
                if b == 0 && e == 0 {
                    break;
                }
                program.pdata.push(RuntimeFunction {
                    begin: base + u64::from(b),
                    end: base + u64::from(e),
                    unwind: base + u64::from(u),
                });
            }
        }
        if coff_symbols {
            for sym in file.symbols() {
                let in_text = sym
                    .section_index()
                    .and_then(|i| file.section_by_index(i).ok())
                    .is_some_and(|s| s.name() == Ok(".text"));
                if in_text {
                    let va = sym.address();
                    if program.in_text(va)
                        && let Ok(name) = sym.name()
                    {
                        program.add_name(va, name);
                    }
                }
            }
        }
        Ok(program)
    }

    /// Reads `path` as a PE32+ image (see [`Program::from_pe`]).
    ///
    /// # Errors
    /// As [`Program::from_pe`], and [`AnalysisError::Io`].
    pub fn open(path: &str, coff_symbols: bool) -> Result<Self, AnalysisError> {
        Self::from_pe(path, &read_file(path)?, coff_symbols)
    }

    /// Names the functions from the public symbols of `pdb_path` (the `S_PUB32` records flagged
    /// as functions), then those only its modules' procedure records name (`S_GPROC32` and
    /// `S_LPROC32`: an image built with LTO keeps few public symbols, and with line tables
    /// every function it keeps out of line has such a record; see [`crate::code::mangled_like`]),
    /// after checking the PDB is the one the image at `image_path` records.
    ///
    /// # Errors
    /// [`AnalysisError::Pdb`] when the PDB cannot be read, [`AnalysisError::PdbMismatch`] when
    /// its GUID differs from the image's `CodeView` record.
    pub fn add_pdb_publics(
        &mut self,
        image_path: &str,
        pdb_path: &str,
    ) -> Result<(), AnalysisError> {
        let err = |e: pdb::Error| AnalysisError::Pdb {
            path: pdb_path.to_owned(),
            detail: e.to_string(),
        };
        let image = read_file(image_path)?;
        let file = PeFile64::parse(&*image).map_err(|e| pe_error(image_path, e))?;
        let base = file.nt_headers().optional_header().image_base();
        let recorded = file
            .pdb_info()
            .map_err(|e| pe_error(image_path, e))?
            .map(|info| info.guid());
        let f = std::fs::File::open(pdb_path).map_err(|source| AnalysisError::Io {
            path: pdb_path.to_owned(),
            source,
        })?;
        let mut pdb = pdb::PDB::open(f).map_err(err)?;
        let info = pdb.pdb_information().map_err(err)?;
        if let Some(guid) = recorded {
            // The CodeView GUID is stored as the Windows `GUID` struct (little-endian fields).
            let image_guid = uuid_le(guid);
            let pdb_guid = info.guid.hyphenated().to_string();
            if image_guid != pdb_guid {
                return Err(AnalysisError::PdbMismatch {
                    pdb: pdb_path.to_owned(),
                    pdb_guid,
                    image: image_path.to_owned(),
                    image_guid,
                });
            }
        }
        let map = pdb.address_map().map_err(err)?;
        let symbols = pdb.global_symbols().map_err(err)?;
        let mut iter = symbols.iter();
        while let Some(sym) = pdb::FallibleIterator::next(&mut iter).map_err(err)? {
            if let Ok(pdb::SymbolData::Public(p)) = sym.parse()
                && p.function
                && let Some(rva) = p.offset.to_rva(&map)
            {
                let va = base + u64::from(rva.0);
                if self.in_text(va) {
                    self.add_name(va, &p.name.to_string());
                }
            }
        }
        let dbi = pdb.debug_information().map_err(err)?;
        let mut modules = dbi.modules().map_err(err)?;
        while let Some(module) = pdb::FallibleIterator::next(&mut modules).map_err(err)? {
            let Some(info) = pdb.module_info(&module).map_err(err)? else {
                continue;
            };
            let mut symbols = info.symbols().map_err(err)?;
            while let Some(sym) = pdb::FallibleIterator::next(&mut symbols).map_err(err)? {
                if let Ok(pdb::SymbolData::Procedure(p)) = sym.parse()
                    && let Some(rva) = p.offset.to_rva(&map)
                {
                    let va = base + u64::from(rva.0);
                    if self.in_text(va) && !self.names.contains_key(&va) {
                        let qualified = p.name.to_string();
                        self.add_name(va, &crate::code::mangled_like(&qualified));
                        self.display.insert(va, qualified.into_owned());
                    }
                }
            }
        }
        Ok(())
    }
}

/// A `CodeView` GUID (16 bytes, `Data1`..`Data3` little-endian) in hyphenated form.
fn uuid_le(g: [u8; 16]) -> String {
    let hex = |b: &[u8]| {
        b.iter().fold(String::new(), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
    };
    let rev = |b: &[u8]| b.iter().rev().copied().collect::<Vec<u8>>();
    format!(
        "{}-{}-{}-{}-{}",
        hex(&rev(&g[0..4])),
        hex(&rev(&g[4..6])),
        hex(&rev(&g[6..8])),
        hex(&g[8..10]),
        hex(&g[10..16])
    )
}
