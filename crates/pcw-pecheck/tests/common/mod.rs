// SPDX-License-Identifier: MIT OR Apache-2.0
//! A tiny PE32+ writer for the checker's tests: just enough of the format (headers, a `.text`
//! and an `.rdata` section, import, export and TLS directories) to craft images that break one
//! fact at a time.

#![allow(
    dead_code,
    reason = "crafted.rs uses every part, so an expectation would go unfulfilled there; \
              artifacts.rs uses only `put16`"
)]
#![expect(
    clippy::cast_possible_truncation,
    reason = "a crafted image is a few KiB, so its offsets and lengths fit the PE format's `u32`s"
)]

/// What to put in a crafted image.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    pub subsystem: u16,
    pub dll_characteristics: u16,
    /// `AddressOfEntryPoint`.
    pub entry: u32,
    /// `.text` characteristics.
    pub text_characteristics: u32,
    /// (DLL, functions) in order.
    pub imports: Vec<(String, Vec<String>)>,
    /// (name, RVA).
    pub exports: Vec<(String, u32)>,
    pub tls: bool,
}

/// `IMAGE_SCN_CNT_CODE | MEM_EXECUTE | MEM_READ`.
pub(crate) const TEXT_RX: u32 = 0x6000_0020;
/// `IMAGE_SCN_MEM_WRITE`.
pub(crate) const MEM_WRITE: u32 = 0x8000_0000;
const RDATA: u32 = 0x4000_0040;
const TEXT_RVA: u32 = 0x1000;
const RDATA_RVA: u32 = 0x2000;
const RDATA_RAW: u32 = 0x400;
const RDATA_SIZE: usize = 0x1000;

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

impl Spec {
    /// An image with every fact of the driver (`pcw_driver.sys`) holding.
    pub(crate) fn driver() -> Self {
        let mut ntoskrnl = owned(pcw_pecheck::DRIVER_REQUIRED_IMPORTS);
        ntoskrnl.push("ExAllocatePool2".to_owned());
        Self {
            subsystem: 1,
            dll_characteristics: 0x01e0,
            entry: TEXT_RVA + 0x40,
            text_characteristics: TEXT_RX,
            imports: vec![
                ("ntoskrnl.exe".to_owned(), ntoskrnl),
                ("HAL.dll".to_owned(), owned(&["KeQueryPerformanceCounter"])),
            ],
            exports: vec![("DriverEntry".to_owned(), TEXT_RVA + 0x40)],
            tls: false,
        }
    }

    /// An image with every fact of the perf DLL (`pcw_perfdll.dll`) holding.
    pub(crate) fn perf_dll() -> Self {
        Self {
            subsystem: 3,
            dll_characteristics: 0x0160,
            entry: TEXT_RVA,
            text_characteristics: TEXT_RX,
            imports: vec![
                (
                    "KERNEL32.dll".to_owned(),
                    owned(&["CreateFileW", "DeviceIoControl"]),
                ),
                ("ADVAPI32.dll".to_owned(), owned(&["RegOpenKeyExW"])),
                ("msvcrt.dll".to_owned(), owned(&["memcpy"])),
            ],
            exports: vec![
                ("ClosePerformanceData".to_owned(), TEXT_RVA + 0x10),
                ("CollectPerformanceData".to_owned(), TEXT_RVA + 0x20),
                ("OpenPerformanceData".to_owned(), TEXT_RVA + 0x30),
            ],
            tls: false,
        }
    }

    /// Adds `function` imported from `dll` (a new DLL entry when `dll` is not listed yet).
    pub(crate) fn import(mut self, dll: &str, function: &str) -> Self {
        if let Some((_, fs)) = self.imports.iter_mut().find(|(d, _)| d == dll) {
            fs.push(function.to_owned());
        } else {
            self.imports
                .push((dll.to_owned(), vec![function.to_owned()]));
        }
        self
    }

    /// Removes `function` from every DLL's imports.
    pub(crate) fn without_import(mut self, function: &str) -> Self {
        for (_, fs) in &mut self.imports {
            fs.retain(|f| f != function);
        }
        self
    }

    /// Adds an export.
    pub(crate) fn export(mut self, name: &str, rva: u32) -> Self {
        self.exports.push((name.to_owned(), rva));
        self
    }

    /// The image's bytes.
    pub(crate) fn build(&self) -> Vec<u8> {
        let mut rdata = Rdata::default();
        let import_dir = (!self.imports.is_empty()).then(|| rdata.imports(&self.imports));
        let export_dir = (!self.exports.is_empty()).then(|| rdata.exports(&self.exports));
        let tls_dir = self.tls.then(|| (rdata.put(&[0u8; 40], 8), 40u32));
        assert!(rdata.bytes.len() <= RDATA_SIZE, "crafted .rdata too large");

        let mut f = vec![0u8; RDATA_RAW as usize + RDATA_SIZE];
        f[0..2].copy_from_slice(b"MZ");
        put32(&mut f, 0x3c, 0x40);
        f[0x40..0x44].copy_from_slice(b"PE\0\0");
        // COFF file header.
        put16(&mut f, 0x44, 0x8664);
        put16(&mut f, 0x46, 2);
        put16(&mut f, 0x54, 240);
        put16(&mut f, 0x56, 0x2022);
        // Optional header (PE32+).
        let o = 0x58;
        put16(&mut f, o, 0x20b);
        put32(&mut f, o + 4, 0x200);
        put32(&mut f, o + 8, RDATA_SIZE as u32);
        put32(&mut f, o + 16, self.entry);
        put32(&mut f, o + 20, TEXT_RVA);
        put64(&mut f, o + 24, 0x1_4000_0000);
        put32(&mut f, o + 32, 0x1000);
        put32(&mut f, o + 36, 0x200);
        put16(&mut f, o + 40, 6);
        put16(&mut f, o + 48, 6);
        put32(&mut f, o + 56, 0x3000);
        put32(&mut f, o + 60, 0x200);
        put16(&mut f, o + 68, self.subsystem);
        put16(&mut f, o + 70, self.dll_characteristics);
        put64(&mut f, o + 72, 0x10_0000);
        put64(&mut f, o + 80, 0x1000);
        put64(&mut f, o + 88, 0x10_0000);
        put64(&mut f, o + 96, 0x1000);
        put32(&mut f, o + 108, 16);
        let dirs = o + 112;
        for (index, dir) in [(0, export_dir), (1, import_dir), (9, tls_dir)] {
            if let Some((rva, size)) = dir {
                put32(&mut f, dirs + 8 * index, rva);
                put32(&mut f, dirs + 8 * index + 4, size);
            }
        }
        // Section headers.
        let s = o + 240;
        section(
            &mut f,
            s,
            b".text",
            TEXT_RVA,
            0x200,
            0x200,
            self.text_characteristics,
        );
        section(
            &mut f,
            s + 40,
            b".rdata",
            RDATA_RVA,
            RDATA_SIZE as u32,
            RDATA_RAW,
            RDATA,
        );
        // .text: `ret` everywhere.
        f[0x200..0x400].fill(0xc3);
        f[RDATA_RAW as usize..RDATA_RAW as usize + rdata.bytes.len()].copy_from_slice(&rdata.bytes);
        f
    }
}

fn section(f: &mut [u8], at: usize, name: &[u8], rva: u32, size: u32, raw: u32, ch: u32) {
    f[at..at + name.len()].copy_from_slice(name);
    put32(f, at + 8, size);
    put32(f, at + 12, rva);
    put32(f, at + 16, size);
    put32(f, at + 20, raw);
    put32(f, at + 36, ch);
}

pub(crate) fn put16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn put32(f: &mut [u8], at: usize, v: u32) {
    f[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(f: &mut [u8], at: usize, v: u64) {
    f[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// The `.rdata` section being laid out; offsets become RVAs by adding `RDATA_RVA`.
#[derive(Default)]
struct Rdata {
    bytes: Vec<u8>,
}

impl Rdata {
    /// Appends `data` aligned to `align`; returns its RVA.
    fn put(&mut self, data: &[u8], align: usize) -> u32 {
        while !self.bytes.len().is_multiple_of(align) {
            self.bytes.push(0);
        }
        let rva = RDATA_RVA + self.bytes.len() as u32;
        self.bytes.extend_from_slice(data);
        rva
    }

    fn cstr(&mut self, s: &str) -> u32 {
        let mut b = s.as_bytes().to_vec();
        b.push(0);
        self.put(&b, 2)
    }

    fn patch32(&mut self, rva: u32, v: u32) {
        put32(&mut self.bytes, (rva - RDATA_RVA) as usize, v);
    }

    /// The import directory: descriptors, then per DLL a lookup table, an address table, the
    /// hint/name entries and the DLL name. Returns (RVA, size) of the descriptors.
    fn imports(&mut self, imports: &[(String, Vec<String>)]) -> (u32, u32) {
        let size = (20 * (imports.len() + 1)) as u32;
        let descriptors = self.put(&vec![0u8; size as usize], 4);
        for (i, (dll, functions)) in imports.iter().enumerate() {
            let hint_names: Vec<u32> = functions
                .iter()
                .map(|f| {
                    let mut b = vec![0u8, 0u8];
                    b.extend_from_slice(f.as_bytes());
                    b.push(0);
                    self.put(&b, 2)
                })
                .collect();
            let mut table = Vec::new();
            for rva in hint_names {
                table.extend_from_slice(&u64::from(rva).to_le_bytes());
            }
            table.extend_from_slice(&[0u8; 8]);
            let lookup = self.put(&table, 8);
            let address = self.put(&table, 8);
            let name = self.cstr(dll);
            let d = descriptors + 20 * i as u32;
            self.patch32(d, lookup);
            self.patch32(d + 12, name);
            self.patch32(d + 16, address);
        }
        (descriptors, size)
    }

    /// The export directory with names in the order given. Returns (RVA, size).
    fn exports(&mut self, exports: &[(String, u32)]) -> (u32, u32) {
        let dir = self.put(&[0u8; 40], 4);
        let n = exports.len() as u32;
        let mut functions = Vec::new();
        let mut ordinals = Vec::new();
        for (i, (_, rva)) in exports.iter().enumerate() {
            functions.extend_from_slice(&rva.to_le_bytes());
            ordinals.extend_from_slice(&(i as u16).to_le_bytes());
        }
        let name_rvas: Vec<u32> = exports.iter().map(|(name, _)| self.cstr(name)).collect();
        let mut names = Vec::new();
        for rva in name_rvas {
            names.extend_from_slice(&rva.to_le_bytes());
        }
        let functions = self.put(&functions, 4);
        let names = self.put(&names, 4);
        let ordinals = self.put(&ordinals, 2);
        let dll_name = self.cstr("crafted.dll");
        self.patch32(dir + 12, dll_name);
        self.patch32(dir + 16, 1);
        self.patch32(dir + 20, n);
        self.patch32(dir + 24, n);
        self.patch32(dir + 28, functions);
        self.patch32(dir + 32, names);
        self.patch32(dir + 36, ordinals);
        let end = RDATA_RVA + self.bytes.len() as u32;
        (dir, end - dir)
    }
}
