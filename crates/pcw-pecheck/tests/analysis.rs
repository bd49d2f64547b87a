// SPDX-License-Identifier: MIT OR Apache-2.0
//! The code analyses on crafted programs: x86 assembled with iced-x86's assembler into a
//! `.text` region (one function per 256-byte slot, `int3`-padded), vtables and unwind
//! information written into data regions, names given directly (no PE, no PDB). Each test
//! builds the bug a check exists for and asserts the check names it, beside a control that
//! passes.

#![expect(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "the crafted programs' addresses and offsets are small by construction"
)]

use iced_x86::code_asm::{
    CodeAssembler, dword_ptr, eax, ecx, mm0, mm1, qword_ptr, rax, rcx, rsp, st0, st1, xmm0, xmm1,
    xmmword_ptr, ymm0, ymmword_ptr,
};
use iced_x86::{Code, Decoder, DecoderOptions, Instruction, MemoryOperand, Register};
use pcw_pecheck::code::{Graph, Program, Region, RuntimeFunction};
use pcw_pecheck::constraints::{self, FpClass};
use pcw_pecheck::nopanic::{self, Verdict};

const TEXT: u64 = 0x1_4000_1000;
const RDATA: u64 = 0x1_4000_8000;
const SLOT: u64 = 0x100;

const PANIC: &str = "_ZN4core9panicking5panic17h0123456789abcdefE";
const ALLOC_ERROR: &str = "_ZN5alloc5alloc18handle_alloc_error17h0123456789abcdefE";

fn at(i: usize) -> u64 {
    TEXT + SLOT * i as u64
}

fn asm() -> CodeAssembler {
    CodeAssembler::new(64).unwrap()
}

/// `lea rax, [rip + target]`: takes the address of `target`.
fn lea_rip(a: &mut CodeAssembler, target: u64) {
    a.add_instruction(
        Instruction::with2(
            Code::Lea_r64_m,
            Register::RAX,
            MemoryOperand::with_base_displ(Register::RIP, target as i64),
        )
        .unwrap(),
    )
    .unwrap();
}

/// A program of the functions `(name, code)`; function `i` at `at(i)`; an empty name leaves it
/// unnamed (then it needs a `.pdata` entry to be a function).
fn program(funcs: Vec<(&str, CodeAssembler)>, data: Vec<Region>) -> Program {
    let mut code = vec![0xCC; SLOT as usize * funcs.len()];
    let mut names = vec![];
    for (i, (name, mut a)) in funcs.into_iter().enumerate() {
        let bytes = a.assemble(at(i)).unwrap();
        assert!(bytes.len() < SLOT as usize, "function {i} too long");
        let off = SLOT as usize * i;
        code[off..off + bytes.len()].copy_from_slice(&bytes);
        names.push((at(i), name));
    }
    let mut p = Program::from_code(TEXT, code, data);
    p.image_base = 0x1_4000_0000;
    for (va, name) in names {
        if !name.is_empty() {
            p.add_name(va, name);
        }
    }
    p
}

fn rdata(words: &[u64]) -> Region {
    Region {
        name: ".rdata".into(),
        va: RDATA,
        size: 0x1000,
        data: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
    }
}

fn ret() -> CodeAssembler {
    let mut a = asm();
    a.ret().unwrap();
    a
}

fn calls(target: u64) -> CodeAssembler {
    let mut a = asm();
    a.call(target).unwrap();
    a.ret().unwrap();
    a
}

fn sink() -> CodeAssembler {
    let mut a = asm();
    a.ud2().unwrap();
    a
}

const ROOT: &[(&str, &str)] = &[("entry", "DriverEntry")];

#[test]
fn a_call_chain_to_panicking_is_found_with_its_chain() {
    // DriverEntry -> helper -(tail jump)-> core::panicking::panic
    let mut helper = asm();
    helper.jmp(at(2)).unwrap();
    let p = program(
        vec![
            ("DriverEntry", calls(at(1))),
            ("helper", helper),
            (PANIC, sink()),
        ],
        vec![],
    );
    let r = nopanic::check_driver(&p, ROOT, false);
    assert!(!r.ok());
    let Verdict::ReachesPanic { chain, .. } = &r.roots[0].verdict else {
        panic!("expected a panic path: {r}");
    };
    assert_eq!(chain, &["core::panicking::panic", "helper", "DriverEntry"]);
    assert!(r.to_string().contains("REACHES PANIC"), "{r}");

    // Control: the same program whose helper returns instead.
    let p = program(
        vec![
            ("DriverEntry", calls(at(1))),
            ("helper", ret()),
            (PANIC, sink()),
        ],
        vec![],
    );
    let r = nopanic::check_driver(&p, ROOT, false);
    assert!(r.ok(), "{r}");
    assert_eq!(
        r.roots[0].verdict,
        Verdict::PanicFree {
            reachable: 2,
            ours: 1,
            allowed_exits: vec![]
        }
    );
}

/// Names a crafted function the way `add_pdb_publics` names one only a PDB procedure record
/// names (an LTO-internal function): its qualified name spelled as a mangled path.
fn name_procedure(p: &mut Program, va: u64, qualified: &str) {
    p.add_name(va, &pcw_pecheck::code::mangled_like(qualified));
    p.display.insert(va, qualified.to_owned());
}

#[test]
fn functions_named_only_by_procedure_records_are_roots_and_sinks_alike() {
    // An LTO image: the callback and the panic paths are named only by qualified names.
    let callback = "pcw_rt::publish::callback<pcw_driver::countersets::pcw_driver::geometric_waves::Set,pcw_driver::waves::Waves>";
    for (sink_name, reaches) in [
        ("core::panicking::panic_fmt", true),
        ("core::slice::index::slice_end_index_len_fail", true),
        ("core::option::unwrap_failed", true),
        ("pcw_core::wildcard::first_unit_rejects", false),
    ] {
        let mut p = program(
            vec![("", calls(at(1))), ("", calls(at(2))), ("", sink())],
            vec![],
        );
        name_procedure(&mut p, at(0), callback);
        name_procedure(&mut p, at(1), "pcw_driver::waves::values_at");
        name_procedure(&mut p, at(2), sink_name);
        let roots = [("pcw_rt::callback", "6pcw_rt7publish8callback")];
        let r = nopanic::check_driver(&p, &roots, false);
        assert_eq!(!r.ok(), reaches, "{sink_name}: {r}");
        if let Verdict::ReachesPanic { chain, .. } = &r.roots[0].verdict {
            assert_eq!(
                chain,
                &[sink_name, "pcw_driver::waves::values_at", callback]
            );
        }
    }
    // A trait method (the example driver's root) by its self type.
    assert!(
        pcw_pecheck::code::mangled_like(
            "<checksum_driver::Algorithms as pcw_rt::publish::Publish<checksum_driver::set::Set> >::visit"
        )
        .contains("10Algorithms")
    );
}

#[test]
fn falling_through_into_the_next_function_is_an_edge() {
    // `before` ends without ret/jmp (a noreturn call LLVM placed last): it runs into `next`.
    let mut before = asm();
    before.xor(eax, eax).unwrap();
    let p = program(
        vec![
            ("DriverEntry", calls(at(1))),
            ("before", before),
            ("next", calls(at(3))),
            (PANIC, sink()),
        ],
        vec![],
    );
    assert!(!nopanic::check_driver(&p, ROOT, false).ok());
}

#[test]
fn a_referenced_vtable_makes_its_methods_reachable() {
    // DriverEntry takes the address of a vtable (drop, size 16, align 8, method); the method
    // panics. Nothing calls it directly: only the address-taken edge finds it.
    let vtable = rdata(&[at(1), 16, 8, at(2)]);
    let mut entry = asm();
    lea_rip(&mut entry, RDATA);
    entry.ret().unwrap();
    let p = program(
        vec![
            ("DriverEntry", entry),
            ("drop", ret()),
            ("method", calls(at(3))),
            (PANIC, sink()),
        ],
        vec![vtable.clone()],
    );
    let g = Graph::build(&p);
    assert_eq!(g.vtables.get(&RDATA), Some(&vec![at(1), at(2)]));
    assert!(!nopanic::check_driver(&p, ROOT, false).ok());

    // Control: without the reference, the method is unreachable.
    let p = program(
        vec![
            ("DriverEntry", ret()),
            ("drop", ret()),
            ("method", calls(at(3))),
            (PANIC, sink()),
        ],
        vec![vtable],
    );
    assert!(nopanic::check_driver(&p, ROOT, false).ok());
}

#[test]
fn a_missing_root_fails() {
    let p = program(vec![("something_else", ret())], vec![]);
    let r = nopanic::check_driver(&p, ROOT, false);
    assert_eq!(r.roots[0].verdict, Verdict::Missing);
    assert!(!r.ok());
    assert!(r.to_string().contains("NOT FOUND"), "{r}");

    let k = constraints::check(&p, ROOT, constraints::FRAME_LIMIT, false).unwrap();
    assert!(
        k.failures.iter().any(|f| f.contains("entry: not found")),
        "{k}"
    );

    // The DLL: no exports at all fails every root.
    let r = nopanic::check_dll(&p, false);
    assert!(!r.ok());
    assert!(r.roots.iter().any(|x| x.verdict == Verdict::Missing));
}

const FETCH: &str = "_RNvXs_NtCs1a_11pcw_perfdll6sourceNtB4_3Dev14SnapshotSource5fetch";

/// Open: makes the trait object (takes the vtable's address) and calls `then`.
fn open(then: u64) -> CodeAssembler {
    let mut a = asm();
    lea_rip(&mut a, RDATA);
    a.call(then).unwrap();
    a.ret().unwrap();
    a
}

/// A DLL: Collect, Close, Open (making the trait object, then calling `open_calls`), a
/// `SnapshotSource::fetch` that calls `fetch_calls`, its vtable in `.rdata`, and the sinks.
fn dll(open_calls: u64, fetch_calls: u64) -> Program {
    program(
        vec![
            ("CollectPerformanceData", ret()),
            ("ClosePerformanceData", ret()),
            ("OpenPerformanceData", open(open_calls)),
            (FETCH, calls(fetch_calls)),
            ("drop_source", ret()),
            (PANIC, sink()),
            (ALLOC_ERROR, sink()),
            ("harmless", ret()),
        ],
        vec![rdata(&[at(4), 24, 8, at(3)])],
    )
}

#[test]
fn the_dll_roots_its_exports_and_their_trait_object_vtables_and_open_may_not_abort() {
    // fetch panics: Collect and Close alone reach nothing (they do not reference its vtable),
    // Open, which builds the trait object and so references the vtable, does, and so do the
    // three together with the vtables of the trait objects.
    let r = nopanic::check_dll(&dll(at(7), at(5)), false);
    assert!(r.roots[..2].iter().all(nopanic::RootReport::ok), "{r}");
    assert!(
        matches!(r.roots[2].verdict, Verdict::ReachesPanic { .. }),
        "{r}"
    );
    assert!(
        r.roots[3].title.contains("2 functions of the 1 vtables"),
        "{r}"
    );
    assert!(
        matches!(r.roots[3].verdict, Verdict::ReachesPanic { .. }),
        "{r}"
    );
    assert!(!r.ok());

    // Open reaching handle_alloc_error (an infallible allocation, which aborts) fails, as a
    // panic does ...
    for sink in [at(6), at(5)] {
        let r = nopanic::check_dll(&dll(sink, at(7)), false);
        assert_eq!(r.roots[2].title, "OpenPerformanceData", "{r}");
        assert!(
            matches!(r.roots[2].verdict, Verdict::ReachesPanic { .. }),
            "{r}"
        );
        assert!(!r.ok());
    }
    // ... and an Open reaching neither passes.
    let r = nopanic::check_dll(&dll(at(7), at(7)), false);
    assert!(r.ok(), "{r}");
}

/// Unwind information at `RDATA + off`: version 1, one `UWOP_ALLOC_LARGE` (16-bit slot) of
/// `bytes` after a 7-byte `sub rsp, imm32`.
fn unwind_alloc(bytes: u64) -> Vec<u8> {
    let slot = (bytes / 8) as u16;
    let mut v = vec![1, 7, 2, 0, 7, 0x01];
    v.extend(slot.to_le_bytes());
    v
}

fn framed(bytes: i32, callee: Option<u64>) -> CodeAssembler {
    let mut a = asm();
    a.sub(rsp, bytes).unwrap();
    if let Some(c) = callee {
        a.call(c).unwrap();
    }
    a.add(rsp, bytes).unwrap();
    a.ret().unwrap();
    a
}

const CALLBACK: &[(&str, &str)] = &[("callback", "5waves8callback")];

/// callback (64 B frame) -> helper (`frame` bytes), both with `.pdata` and unwind info.
fn stack_program(frame: i32) -> Program {
    let mut unwind = unwind_alloc(64);
    unwind.extend(unwind_alloc(u64::try_from(frame).unwrap()));
    let mut p = program(
        vec![
            (
                "_ZN10pcw_driver5waves8callback17h0123456789abcdefE",
                framed(64, Some(at(1))),
            ),
            ("helper", framed(frame, None)),
        ],
        vec![Region {
            name: ".rdata".into(),
            va: RDATA,
            size: 0x1000,
            data: unwind,
        }],
    );
    p.pdata = vec![
        RuntimeFunction {
            begin: at(0),
            end: at(0) + 0x20,
            unwind: RDATA,
        },
        RuntimeFunction {
            begin: at(1),
            end: at(1) + 0x20,
            unwind: RDATA + 8,
        },
    ];
    p
}

#[test]
fn a_two_kib_frame_reachable_from_a_callback_is_flagged() {
    let r = constraints::check(
        &stack_program(2048),
        CALLBACK,
        constraints::FRAME_LIMIT,
        false,
    )
    .unwrap();
    assert_eq!(
        r.failures,
        vec!["callback: helper: frame 2056 B > 1024 B".to_owned()],
        "{r}"
    );
    assert_eq!(r.roots[0].deepest.as_ref().unwrap().0, 72 + 2056);

    // Control: 512 bytes pass, and the prologue agrees with the unwind information.
    let r = constraints::check(
        &stack_program(512),
        CALLBACK,
        constraints::FRAME_LIMIT,
        false,
    )
    .unwrap();
    assert!(r.failures.is_empty(), "{r}");
    assert!(r.notes.is_empty(), "{r}");
    assert_eq!(r.roots[0].largest, (520, "helper".to_owned()));
    assert_eq!(r.roots[0].deepest.as_ref().unwrap().0, 72 + 520);
}

#[test]
fn the_unwind_information_is_the_frame_when_the_prologue_disagrees() {
    // The unwind info says 2 KiB, the code subtracts 64: the unwind info wins, a note says so.
    let mut p = stack_program(64);
    let mut unwind = unwind_alloc(64);
    unwind.extend(unwind_alloc(2048));
    p.regions[1].data = unwind;
    let r = constraints::check(&p, CALLBACK, constraints::FRAME_LIMIT, false).unwrap();
    assert_eq!(r.failures.len(), 1, "{r}");
    assert_eq!(
        r.notes,
        vec!["helper: prologue 64 B != unwind info 2048 B".to_owned()]
    );
}

#[test]
fn recursion_and_dynamic_allocation_are_flagged() {
    // The callback calls itself: unbounded depth.
    let p = program(
        vec![(
            "_ZN10pcw_driver5waves8callback17h0123456789abcdefE",
            calls(at(0)),
        )],
        vec![],
    );
    let r = constraints::check(&p, CALLBACK, constraints::FRAME_LIMIT, false).unwrap();
    assert!(r.roots[0].deepest.is_none());
    assert!(r.failures.iter().any(|f| f.contains("unbounded")), "{r}");

    // `mov eax, N; call __chkstk; sub rsp, rax`.
    let mut f = asm();
    f.mov(eax, 0x3000).unwrap();
    f.call(at(1)).unwrap();
    f.sub(rsp, rax).unwrap();
    f.ret().unwrap();
    let p = program(
        vec![
            ("_ZN10pcw_driver5waves8callback17h0123456789abcdefE", f),
            ("__chkstk", ret()),
        ],
        vec![],
    );
    let r = constraints::check(&p, CALLBACK, constraints::FRAME_LIMIT, false).unwrap();
    assert!(
        r.failures.iter().any(|f| f.contains("calls __chkstk")
            && f.contains("dynamic stack allocation")
            && f.contains("12296 B > 1024 B")),
        "{r}"
    );
}

fn class(build: impl FnOnce(&mut CodeAssembler)) -> FpClass {
    let mut a = asm();
    build(&mut a);
    let bytes = a.assemble(TEXT).unwrap();
    let ins = Decoder::with_ip(64, &bytes, TEXT, DecoderOptions::NONE).decode();
    constraints::classify(&ins)
}

#[test]
fn floating_point_instructions_are_classified() {
    assert_eq!(class(|a| a.fld(qword_ptr(rax)).unwrap()), FpClass::X87);
    assert_eq!(class(|a| a.fxch(st0, st1).unwrap()), FpClass::X87);
    assert_eq!(class(|a| a.fadd_2(st0, st1).unwrap()), FpClass::X87);
    assert_eq!(class(|a| a.paddd(mm0, mm1).unwrap()), FpClass::Mmx);
    assert_eq!(class(|a| a.emms().unwrap()), FpClass::State);
    assert_eq!(
        class(|a| a.ldmxcsr(dword_ptr(rax)).unwrap()),
        FpClass::State
    );
    assert_eq!(
        class(|a| a.vmovups(ymm0, ymmword_ptr(rax)).unwrap()),
        FpClass::Avx
    );
    assert_eq!(class(|a| a.vxorps(xmm0, xmm0, xmm0).unwrap()), FpClass::Avx);
    assert_eq!(class(|a| a.addsd(xmm0, xmm1).unwrap()), FpClass::SseFloat);
    assert_eq!(class(|a| a.cvtsi2sd(xmm0, rcx).unwrap()), FpClass::SseFloat);
    assert_eq!(class(|a| a.ucomiss(xmm0, xmm1).unwrap()), FpClass::SseFloat);
    assert_eq!(
        class(|a| a.movups(xmm0, xmmword_ptr(rax)).unwrap()),
        FpClass::SseData
    );
    assert_eq!(class(|a| a.xorps(xmm0, xmm0).unwrap()), FpClass::SseData);
    assert_eq!(class(|a| a.movq(xmm0, rcx).unwrap()), FpClass::SseData);
    assert_eq!(class(|a| a.mov(ecx, eax).unwrap()), FpClass::None);
}

/// An SSE copy: `movups xmm0, [rax]`.
fn copy_of() -> CodeAssembler {
    let mut a = asm();
    a.movups(xmm0, xmmword_ptr(rax)).unwrap();
    a.ret().unwrap();
    a
}

#[test]
fn an_x87_instruction_anywhere_in_the_image_fails_the_check() {
    // Not reachable from any root: the floating-point check covers the whole image.
    let mut x87 = asm();
    x87.fld(qword_ptr(rax)).unwrap();
    x87.ret().unwrap();
    let funcs = |odd: CodeAssembler| {
        vec![
            (
                "_ZN10pcw_driver5waves8callback17h0123456789abcdefE",
                copy_of(),
            ),
            ("odd", odd),
        ]
    };
    let r = constraints::check(
        &program(funcs(x87), vec![]),
        CALLBACK,
        constraints::FRAME_LIMIT,
        false,
    )
    .unwrap();
    assert_eq!(r.failures.len(), 1, "{r}");
    assert!(
        r.failures[0].starts_with("x87 instruction in odd at 0x140001100: fld"),
        "{r}"
    );
    assert!(r.to_string().contains("x87/MMX/AVX: FOUND"));

    // Control: SSE copies only.
    let r = constraints::check(
        &program(funcs(copy_of()), vec![]),
        CALLBACK,
        constraints::FRAME_LIMIT,
        false,
    )
    .unwrap();
    assert!(r.failures.is_empty(), "{r}");
    assert_eq!(r.sse_data, 2);
}
