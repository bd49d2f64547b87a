// SPDX-License-Identifier: MIT OR Apache-2.0
//! The code of an x64 image as functions, decoded instructions and a call graph.
//!
//! A [`Program`] is what the analyses need of an image: its memory (section by section, as
//! mapped at the image base), the `.text` range, a name per function start and the `.pdata`
//! unwind table. [`Program::from_pe`] fills one from a PE32+ file, with names from the driver's
//! PDB ([`Program::add_pdb_publics`]) or from the COFF symbol table mingw's linker keeps in the
//! DLL; tests build one directly from assembled bytes.
//!
//! [`Graph::build`] delimits functions by the names, the `.pdata` entries and the targets of
//! direct calls (a leaf without name or unwind entry is still entered by a `call`), decodes each
//! with `iced-x86`, and records three kinds of edge:
//!
//! * direct: every `call`/`jmp`/`jcc` whose target lies in another function, and a `call` of
//!   the function itself (recursion);
//! * fall-through: a function whose last instruction (trailing `nop`/`int3` padding aside) is
//!   not a `ret`, `jmp` or `ud2` continues into the next one;
//! * address taken: an instruction's RIP-relative operand that is a function start (a function
//!   pointer is formed, so it may be called), or data holding a table there — a Rust vtable
//!   (`drop_in_place` or null, size, power-of-two align, then methods) or an array of function
//!   pointers — whose function entries all become edges.
//!
//! The last kind is how indirect calls are accounted for: a `dyn Trait` call can only run a
//! method of a vtable somebody referenced, and the reference is an edge from the function that
//! made the trait object. A vtable made outside the analysed roots is not seen that way, which
//! is why the no-panic check of the DLL also roots every vtable holding one of its trait
//! implementations.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind};

/// Why an image could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The PE structure could not be read.
    #[error("{path}: not a readable PE32+ image: {detail}")]
    Pe {
        /// The image's path (or a label).
        path: String,
        /// What failed.
        detail: String,
    },
    /// The image has no `.text` section.
    #[error("{0}: no `.text` section")]
    NoText(String),
    /// The PDB could not be read.
    #[error("{path}: cannot read the PDB: {detail}")]
    Pdb {
        /// The PDB's path.
        path: String,
        /// What failed.
        detail: String,
    },
    /// The PDB belongs to another build of the image.
    #[error(
        "{pdb}: its GUID {pdb_guid} is not the one {image} records ({image_guid}): a stale PDB"
    )]
    PdbMismatch {
        /// The PDB's path.
        pdb: String,
        /// The GUID the PDB carries.
        pdb_guid: String,
        /// The image's path.
        image: String,
        /// The GUID the image's `CodeView` record names.
        image_guid: String,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Unwind information points outside the image or is truncated.
    #[error("function at {0:#x}: unwind information unreadable")]
    Unwind(u64),
}

/// One mapped section: its name, virtual address and size, and the bytes the file holds for it
/// (possibly fewer than `size`: the rest is zero-filled at load and not file-backed).
#[derive(Clone, Debug)]
pub struct Region {
    /// The section name.
    pub name: String,
    /// Virtual address (image base included).
    pub va: u64,
    /// Virtual size.
    pub size: u64,
    /// The file-backed bytes.
    pub data: Vec<u8>,
}

/// A `.pdata` entry: a function's begin and end and its unwind information (all VAs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeFunction {
    /// First byte of the function.
    pub begin: u64,
    /// One past its last byte.
    pub end: u64,
    /// Its `UNWIND_INFO`.
    pub unwind: u64,
}

/// What the analyses need of an image.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The image base (RVA 0).
    pub image_base: u64,
    /// The mapped sections.
    pub regions: Vec<Region>,
    /// The code section's start.
    pub text_va: u64,
    /// The code section's size.
    pub text_size: u64,
    /// Function start → (mangled) name. A function named only by a PDB procedure record
    /// (an LTO-internal function of an image built with line tables) has its qualified name
    /// spelled as a mangled path here ([`mangled_like`]), so that the analyses' name patterns
    /// find it, and the qualified name in `display`.
    pub names: BTreeMap<u64, String>,
    /// Function start → the qualified name of a PDB procedure record, for reports.
    pub display: BTreeMap<u64, String>,
    /// The exception table.
    pub pdata: Vec<RuntimeFunction>,
    /// The import address table (start, size): calls through it go to other modules.
    pub iat: Option<(u64, u64)>,
}

impl Program {
    /// A program of one `.text` region at `text_va` holding `code`, plus `data` regions.
    pub fn from_code(text_va: u64, code: Vec<u8>, data: Vec<Region>) -> Self {
        let size = code.len() as u64;
        let mut regions = vec![Region {
            name: ".text".into(),
            va: text_va,
            size,
            data: code,
        }];
        regions.extend(data);
        Self {
            regions,
            text_va,
            text_size: size,
            ..Self::default()
        }
    }

    /// Names the function at `va`. Several names for one address (aliases such as
    /// `.weak.memset.default.…` beside `memset`): the first that does not start with a dot wins.
    pub fn add_name(&mut self, va: u64, name: &str) {
        match self.names.get(&va) {
            Some(old) if !old.starts_with('.') || name.starts_with('.') => {}
            _ => {
                self.names.insert(va, name.to_owned());
            }
        }
    }

    /// Whether `va` is in the code section.
    pub fn in_text(&self, va: u64) -> bool {
        va >= self.text_va && va - self.text_va < self.text_size
    }

    /// `n` file-backed bytes at `va`, if the image holds them.
    pub fn read(&self, va: u64, n: usize) -> Option<&[u8]> {
        let r = self
            .regions
            .iter()
            .find(|r| va >= r.va && va - r.va < r.size)?;
        let off = usize::try_from(va - r.va).ok()?;
        r.data.get(off..off.checked_add(n)?)
    }

    /// The little-endian 64-bit word at `va`.
    pub fn qword(&self, va: u64) -> Option<u64> {
        let b = self.read(va, 8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    fn text(&self) -> &[u8] {
        self.regions
            .iter()
            .find(|r| r.va == self.text_va && r.name == ".text")
            .map_or(&[][..], |r| &r.data[..])
    }

    /// Every function start whose name contains `needle`, in address order.
    pub fn find(&self, needle: &str) -> Vec<u64> {
        self.names
            .iter()
            .filter(|(_, n)| n.contains(needle))
            .map(|(&a, _)| a)
            .collect()
    }

    /// The mangled name, or `fn@ADDR` for a function without one (LTO-internal).
    pub fn label(&self, va: u64) -> String {
        self.names
            .get(&va)
            .cloned()
            .unwrap_or_else(|| format!("fn@{va:#x}"))
    }

    /// The demangled name (`rustc-demangle`, without the hash), or `fn@ADDR`.
    pub fn pretty(&self, va: u64) -> String {
        if let Some(d) = self.display.get(&va) {
            return d.clone();
        }
        self.names.get(&va).map_or_else(
            || format!("fn@{va:#x}"),
            |n| format!("{:#}", rustc_demangle::demangle(n)),
        )
    }
}

/// A qualified Rust name as a PDB procedure record spells it (`core::panicking::panic_fmt`,
/// `pcw_rt::publish::callback<pcw_driver::waves::Waves>`) in the form of a mangled path: each
/// identifier, in order, preceded by its length (`4core9panicking9panic_fmt`, `6pcw_rt7publish8callback10pcw_driver5waves5Waves`), which is how identifiers appear in legacy
/// and v0 mangled names, so the same name patterns match both.
pub fn mangled_like(qualified: &str) -> String {
    let mut out = String::with_capacity(qualified.len() + 8);
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    for word in qualified
        .split(|c: char| !ident(c))
        .filter(|w| !w.is_empty())
    {
        let _ = write!(out, "{}{word}", word.len());
    }
    out
}

/// Functions, instructions and edges of a [`Program`].
#[derive(Debug)]
pub struct Graph<'p> {
    /// The program analysed.
    pub program: &'p Program,
    /// Function starts, ascending: the names, `.pdata` begins and direct call targets inside
    /// `.text`.
    pub starts: Vec<u64>,
    /// Each function's instructions, in order.
    pub insns: BTreeMap<u64, Vec<Instruction>>,
    /// Control transfers (call, tail jump, branch, fall-through): what nests stack frames.
    pub calls: BTreeMap<u64, BTreeSet<u64>>,
    /// `calls` plus the address-taken functions: what can run.
    pub edges: BTreeMap<u64, BTreeSet<u64>>,
    /// The address-taken part of `edges`.
    pub address_taken: BTreeMap<u64, BTreeSet<u64>>,
    /// Rust vtables found (data VA → drop and methods).
    pub vtables: BTreeMap<u64, Vec<u64>>,
    /// Indirect calls and jumps not through the import table: (address, function).
    pub indirect: BTreeMap<u64, Vec<u64>>,
}

/// The longest vtable or function-pointer array read.
const TABLE_WORDS: u64 = 256;

impl<'p> Graph<'p> {
    /// Delimits, decodes and links the functions of `program`.
    pub fn build(program: &'p Program) -> Self {
        let mut starts: BTreeSet<u64> = program.names.keys().copied().collect();
        starts.extend(program.pdata.iter().map(|p| p.begin));
        let starts: Vec<u64> = starts.into_iter().filter(|&a| program.in_text(a)).collect();
        let mut g = Self {
            program,
            insns: BTreeMap::new(),
            calls: BTreeMap::new(),
            edges: BTreeMap::new(),
            address_taken: BTreeMap::new(),
            vtables: BTreeMap::new(),
            indirect: BTreeMap::new(),
            starts,
        };
        // A `call` enters a function: its target is a start even without a name or `.pdata`
        // entry (an LTO-internal leaf that never moves RSP has neither).
        loop {
            g.decode();
            let mut found: Vec<u64> = g
                .insns
                .values()
                .flatten()
                .filter(|i| i.flow_control() == FlowControl::Call)
                .filter(|i| i.op0_kind() == OpKind::NearBranch64)
                .map(Instruction::near_branch_target)
                .filter(|&t| program.in_text(t) && !g.is_start(t))
                .collect();
            if found.is_empty() {
                break;
            }
            found.extend(g.starts.iter().copied());
            found.sort_unstable();
            found.dedup();
            g.starts = found;
        }
        g.link();
        g
    }

    fn decode(&mut self) {
        self.insns.clear();
        let text = self.program.text();
        let text_end = self.program.text_va + text.len() as u64;
        for (i, &start) in self.starts.iter().enumerate() {
            let end = self
                .starts
                .get(i + 1)
                .copied()
                .unwrap_or(text_end)
                .min(text_end);
            let lo = usize::try_from(start - self.program.text_va).unwrap_or(usize::MAX);
            let hi = usize::try_from(end.saturating_sub(self.program.text_va)).unwrap_or(0);
            let bytes = text.get(lo..hi).unwrap_or(&[]);
            let decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
            self.insns.insert(start, decoder.into_iter().collect());
        }
    }

    /// The function holding `va`.
    pub fn owner(&self, va: u64) -> Option<u64> {
        let i = self.starts.partition_point(|&s| s <= va);
        i.checked_sub(1).and_then(|i| self.starts.get(i).copied())
    }

    /// Whether `va` is a function start.
    pub fn is_start(&self, va: u64) -> bool {
        self.starts.binary_search(&va).is_ok()
    }

    fn in_iat(&self, va: u64) -> bool {
        self.program.iat.is_some_and(|(s, n)| va >= s && va - s < n)
    }

    /// Function entries of a vtable or function-pointer array at data address `va`.
    fn table_targets(&mut self, va: u64) -> Vec<u64> {
        let words: Vec<u64> = (0..TABLE_WORDS)
            .map_while(|i| self.program.qword(va + 8 * i))
            .collect();
        if let [drop, size, align, first, ..] = words[..]
            && (drop == 0 || self.is_start(drop))
            && (1..=4096).contains(&align)
            && align.is_power_of_two()
            && size % align == 0
            && self.is_start(first)
        {
            let mut found: Vec<u64> = if drop == 0 { vec![] } else { vec![drop] };
            found.extend(words[3..].iter().take_while(|&&w| self.is_start(w)));
            self.vtables.insert(va, found.clone());
            return found;
        }
        words
            .into_iter()
            .take_while(|&w| self.is_start(w))
            .collect()
    }

    fn link(&mut self) {
        let starts = self.starts.clone();
        for (i, &f) in starts.iter().enumerate() {
            let insns = self.insns.remove(&f).unwrap_or_default();
            let (mut calls, mut taken, mut indirect) = (BTreeSet::new(), BTreeSet::new(), vec![]);
            for ins in &insns {
                let fc = ins.flow_control();
                let branch = matches!(
                    fc,
                    FlowControl::Call
                        | FlowControl::UnconditionalBranch
                        | FlowControl::ConditionalBranch
                );
                if branch && ins.op0_kind() == OpKind::NearBranch64 {
                    if let Some(dst) = self.owner(ins.near_branch_target()) {
                        // A jump back into the function is a loop; a `call` of itself is
                        // recursion (a nested frame).
                        if dst != f || fc == FlowControl::Call {
                            calls.insert(dst);
                        }
                    }
                    continue;
                }
                let through_iat =
                    ins.is_ip_rel_memory_operand() && self.in_iat(ins.ip_rel_memory_address());
                if matches!(fc, FlowControl::IndirectCall | FlowControl::IndirectBranch)
                    && !through_iat
                    && (fc == FlowControl::IndirectCall || ins.op0_kind() == OpKind::Memory)
                {
                    indirect.push(ins.ip());
                }
                if ins.is_ip_rel_memory_operand() {
                    let va = ins.ip_rel_memory_address();
                    let targets = if self.is_start(va) {
                        vec![va]
                    } else if self.program.in_text(va) {
                        vec![]
                    } else {
                        self.table_targets(va)
                    };
                    taken.extend(targets.into_iter().filter(|&t| t != f));
                }
            }
            let last = insns
                .iter()
                .rev()
                .find(|x| !matches!(x.mnemonic(), Mnemonic::Nop | Mnemonic::Int3));
            let ends = last.is_some_and(|x| {
                matches!(
                    x.mnemonic(),
                    Mnemonic::Ret | Mnemonic::Retf | Mnemonic::Jmp | Mnemonic::Ud2
                )
            });
            if last.is_some()
                && !ends
                && let Some(&next) = starts.get(i + 1)
            {
                calls.insert(next);
            }
            self.insns.insert(f, insns);
            let mut edges = calls.clone();
            edges.extend(taken.iter().copied());
            self.calls.insert(f, calls);
            self.edges.insert(f, edges);
            self.address_taken.insert(f, taken);
            self.indirect.insert(f, indirect);
        }
    }

    /// Breadth-first over `edges`, skipping the successors of functions `stop` accepts:
    /// every reachable function with its predecessor (`None` for a root), in visiting order.
    pub fn reach(
        &self,
        roots: &[u64],
        edges: &BTreeMap<u64, BTreeSet<u64>>,
        stop: &dyn Fn(u64) -> bool,
    ) -> Reach {
        let mut prev = BTreeMap::new();
        let mut order = vec![];
        let mut queue = VecDeque::new();
        for &r in roots {
            if let std::collections::btree_map::Entry::Vacant(e) = prev.entry(r) {
                e.insert(None);
                order.push(r);
                queue.push_back(r);
            }
        }
        while let Some(a) = queue.pop_front() {
            if stop(a) {
                continue;
            }
            for &b in edges.get(&a).into_iter().flatten() {
                if let std::collections::btree_map::Entry::Vacant(e) = prev.entry(b) {
                    e.insert(Some(a));
                    order.push(b);
                    queue.push_back(b);
                }
            }
        }
        Reach { prev, order }
    }
}

/// What [`Graph::reach`] found.
#[derive(Clone, Debug)]
pub struct Reach {
    /// Function → the function it was first reached from.
    pub prev: BTreeMap<u64, Option<u64>>,
    /// Functions in visiting order (breadth-first: the first hit has the shortest chain).
    pub order: Vec<u64>,
}

impl Reach {
    /// The chain from `a` back to its root.
    pub fn chain(&self, mut a: u64) -> Vec<u64> {
        let mut out = vec![a];
        while let Some(&Some(p)) = self.prev.get(&a) {
            out.push(p);
            a = p;
        }
        out
    }
}
