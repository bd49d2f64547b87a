// SPDX-License-Identifier: MIT OR Apache-2.0
//! Crafted PE32+ images for the loader's tests, written with `object`'s PE writer: a `.text`
//! section of assembled code at RVA 0x1000, a `.data` section at 0x2000, imports in `.idata` at
//! 0x3000, and optionally base relocations, a load configuration directory and the
//! relocations-stripped flag. Code is assembled at its RVA with RIP-relative references, so it
//! runs wherever the image is mapped.

#![expect(
    clippy::cast_possible_truncation,
    reason = "a crafted image is a few KiB, so its offsets and lengths fit the PE format's `u32`s"
)]

use iced_x86::code_asm::CodeAssembler;
use iced_x86::{Code, Instruction, MemoryOperand, Register};
use object::pe;
use object::write::pe::{NtHeaders, Writer};

/// Where `.text` starts.
pub(crate) const TEXT: u32 = 0x1000;
/// Where `.data` starts.
pub(crate) const DATA: u32 = 0x2000;
/// Where `.idata` starts.
pub(crate) const IDATA: u32 = 0x3000;

/// What to put in a crafted image.
#[derive(Clone, Debug)]
#[expect(
    clippy::struct_field_names,
    reason = "`image_base` is the optional header's `ImageBase`, named as the PE format names it"
)]
pub(crate) struct Image {
    /// `.text`: the entry point is its first byte.
    pub code: Vec<u8>,
    /// `.data` (read-write), at least one byte.
    pub data: Vec<u8>,
    /// `(dll, routine)` imports, in order.
    pub imports: Vec<(String, String)>,
    /// `ImageBase`.
    pub image_base: u64,
    /// `IMAGE_FILE_RELOCS_STRIPPED`.
    pub relocs_stripped: bool,
    /// RVAs of 64-bit absolute addresses to relocate (`IMAGE_REL_BASED_DIR64`).
    pub relocations: Vec<u32>,
    /// A load configuration directory in `.data` at this offset, whose `SecurityCookie` is the
    /// VA of `.data` + the second value.
    pub load_config: Option<(u32, u32)>,
}

impl Default for Image {
    fn default() -> Self {
        Self {
            code: vec![0xC3],
            data: vec![0; 16],
            imports: Vec::new(),
            image_base: 0x1_4000_0000,
            relocs_stripped: false,
            relocations: Vec::new(),
            load_config: None,
        }
    }
}

/// The `.idata` layout of `imports`: descriptors, then per DLL its lookup table, its address
/// table, its hint/name entries and its name. Returns the bytes and the RVA of each import's
/// address-table slot, in order.
fn import_section(imports: &[(String, String)]) -> (Vec<u8>, Vec<u32>) {
    let mut dlls: Vec<(String, Vec<(usize, String)>)> = Vec::new();
    for (i, (dll, name)) in imports.iter().enumerate() {
        match dlls.iter_mut().find(|(d, _)| d == dll) {
            Some((_, names)) => names.push((i, name.clone())),
            None => dlls.push((dll.clone(), vec![(i, name.clone())])),
        }
    }
    let mut out = vec![0u8; 20 * (dlls.len() + 1)];
    let mut slots = vec![0u32; imports.len()];
    for (d, (dll, names)) in dlls.iter().enumerate() {
        let lookup = out.len();
        out.resize(lookup + 8 * (names.len() + 1), 0);
        let iat = out.len();
        out.resize(iat + 8 * (names.len() + 1), 0);
        for (k, (i, name)) in names.iter().enumerate() {
            let hint = out.len() as u64;
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(name.as_bytes());
            out.push(0);
            if out.len() % 2 == 1 {
                out.push(0);
            }
            let entry = (u64::from(IDATA) + hint).to_le_bytes();
            out[lookup + 8 * k..lookup + 8 * k + 8].copy_from_slice(&entry);
            out[iat + 8 * k..iat + 8 * k + 8].copy_from_slice(&entry);
            slots[*i] = IDATA + iat as u32 + 8 * k as u32;
        }
        let name_at = out.len() as u32;
        out.extend_from_slice(dll.as_bytes());
        out.push(0);
        let desc = 20 * d;
        let put = |out: &mut Vec<u8>, at: usize, v: u32| {
            out[at..at + 4].copy_from_slice(&v.to_le_bytes());
        };
        put(&mut out, desc, IDATA + lookup as u32);
        put(&mut out, desc + 12, IDATA + name_at);
        put(&mut out, desc + 16, IDATA + iat as u32);
    }
    (out, slots)
}

/// The RVA of the address-table slot of each of `imports`, as [`Image::build`] lays them out.
pub(crate) fn slots(imports: &[(&str, &str)]) -> Vec<u32> {
    let owned: Vec<(String, String)> = imports
        .iter()
        .map(|(d, n)| ((*d).to_owned(), (*n).to_owned()))
        .collect();
    import_section(&owned).1
}

impl Image {
    /// The PE file.
    pub(crate) fn build(&self) -> Vec<u8> {
        let (idata, _) = import_section(&self.imports);
        let mut data = self.data.clone();
        if let Some((at, cookie)) = self.load_config {
            let at = at as usize;
            if data.len() < at + 0x140 {
                data.resize(at + 0x140, 0);
            }
            data[at..at + 4].copy_from_slice(&0x140u32.to_le_bytes());
            let va = self.image_base + u64::from(DATA) + u64::from(cookie);
            data[at + 0x58..at + 0x60].copy_from_slice(&va.to_le_bytes());
        }
        let mut out = Vec::new();
        let mut w = Writer::new(true, 0x1000, 0x200, &mut out);
        w.reserve_dos_header_and_stub();
        w.reserve_nt_headers(16);
        let has_relocs =
            !self.relocations.is_empty() || (self.load_config.is_some() && !self.relocs_stripped);
        w.reserve_section_headers(3 + u16::from(has_relocs));
        let text = w.reserve_text_section(self.code.len() as u32);
        let data_range = w.reserve_data_section(data.len() as u32, data.len() as u32);
        let idata_range = w.reserve_idata_section(idata.len().max(1) as u32);
        assert_eq!(
            (
                text.virtual_address,
                data_range.virtual_address,
                idata_range.virtual_address
            ),
            (TEXT, DATA, IDATA),
            "sections of at most one page each"
        );
        if !self.imports.is_empty() {
            w.set_data_directory(
                pe::IMAGE_DIRECTORY_ENTRY_IMPORT,
                IDATA,
                20 * (self.imports.len() as u32 + 1),
            );
        }
        if let Some((at, _)) = self.load_config {
            w.set_data_directory(pe::IMAGE_DIRECTORY_ENTRY_LOAD_CONFIG, DATA + at, 0x140);
        }
        let mut relocations = self.relocations.clone();
        if let Some((at, _)) = self.load_config
            && !self.relocs_stripped
        {
            // The SecurityCookie field holds a VA: relocated like any absolute address.
            relocations.push(DATA + at + 0x58);
        }
        relocations.sort_unstable();
        for rva in &relocations {
            w.add_reloc(*rva, pe::IMAGE_REL_BASED_DIR64);
        }
        if has_relocs {
            w.reserve_reloc_section();
        }
        w.write_dos_header_and_stub().unwrap();
        let mut characteristics = pe::IMAGE_FILE_EXECUTABLE_IMAGE
            | pe::IMAGE_FILE_LARGE_ADDRESS_AWARE
            | pe::IMAGE_FILE_DLL;
        if self.relocs_stripped {
            characteristics |= pe::IMAGE_FILE_RELOCS_STRIPPED;
        }
        w.write_nt_headers(NtHeaders {
            machine: pe::IMAGE_FILE_MACHINE_AMD64,
            time_date_stamp: 0,
            characteristics,
            major_linker_version: 14,
            minor_linker_version: 0,
            address_of_entry_point: TEXT,
            image_base: self.image_base,
            major_operating_system_version: 10,
            minor_operating_system_version: 0,
            major_image_version: 0,
            minor_image_version: 0,
            major_subsystem_version: 10,
            minor_subsystem_version: 0,
            subsystem: pe::IMAGE_SUBSYSTEM_NATIVE,
            dll_characteristics: pe::IMAGE_DLLCHARACTERISTICS_NX_COMPAT,
            size_of_stack_reserve: 0x4_0000,
            size_of_stack_commit: 0x1000,
            size_of_heap_reserve: 0,
            size_of_heap_commit: 0,
        });
        w.write_section_headers();
        w.write_section(text.file_offset, &self.code);
        w.write_section(data_range.file_offset, &data);
        w.write_section(idata_range.file_offset, &idata);
        if has_relocs {
            w.write_reloc_section();
        }
        out
    }
}

/// `code`, assembled at `.text`'s RVA.
pub(crate) fn assemble(mut code: CodeAssembler) -> Vec<u8> {
    code.assemble(u64::from(TEXT)).unwrap()
}

/// `call qword ptr [rip + slot]`: calls the import whose address-table slot is at RVA `slot`.
pub(crate) fn call_import(a: &mut CodeAssembler, slot: u32) {
    a.add_instruction(
        Instruction::with1(
            Code::Call_rm64,
            MemoryOperand::with_base_displ(Register::RIP, i64::from(slot)),
        )
        .unwrap(),
    )
    .unwrap();
}

/// `lea reg, [rip + rva]`: the address of `rva` in the mapped image.
pub(crate) fn lea_rip(a: &mut CodeAssembler, reg: Register, rva: u32) {
    a.add_instruction(
        Instruction::with2(
            Code::Lea_r64_m,
            reg,
            MemoryOperand::with_base_displ(Register::RIP, i64::from(rva)),
        )
        .unwrap(),
    )
    .unwrap();
}
