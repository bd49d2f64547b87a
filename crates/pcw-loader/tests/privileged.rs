// SPDX-License-Identifier: MIT OR Apache-2.0
//! The privileged instructions the headers inline, on crafted code: each emulated form answers
//! with the IRQL and time the loader keeps, and every other privileged instruction — or a read
//! of a field the loader does not model, or an ordinary fault — stops the scenario with a
//! message naming the instruction, never a signal. Each scenario runs in a child process.

#[expect(
    dead_code,
    reason = "these scenarios run import-free code, so the import and RIP-relative helpers go unused"
)]
mod crafted;
mod run_crafted;

use iced_x86::code_asm::{
    CodeAssembler, ah, al, byte_ptr, cr3, cr8, dword_ptr, eax, ecx, gs, qword_ptr, rax, rcx, rdx,
    word_ptr, xmm0,
};
use pcw_loader::isolate::isolated;
use pcw_loader::ntos;
use pcw_sim::kernel_pcw::{BOOT_SYSTEM_TIME, BUILD_SERVER_2022, Kernel};
use run_crafted::{asm, call, map};

const KUSER: u64 = 0xFFFF_F780_0000_0000;

/// [`run_crafted::expect_stop`] with this file's arguments.
fn expect_stop(scenario: &str, code: impl FnOnce() -> CodeAssembler, needles: &[&str]) {
    run_crafted::expect_stop(scenario, code, (KUSER, 0), needles);
}

#[test]
fn cr8_reads_and_writes_are_this_threads_irql() {
    isolated("cr8_reads_and_writes_are_this_threads_irql", || {
        // set(rcx): mov cr8, rcx; get: mov rax, cr8.
        let mut a = asm();
        a.mov(cr8, rcx).unwrap();
        a.mov(rax, cr8).unwrap();
        a.ret().unwrap();
        let image = map(a);
        assert_eq!(ntos::current_irql(), 0);
        assert_eq!(
            call(&image, 2, 0),
            2,
            "mov rax, cr8 reads what mov cr8 wrote"
        );
        assert_eq!(ntos::current_irql(), 2, "the loader's IRQL is CR8");
        // Another thread has its own IRQL.
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(ntos::current_irql(), 0));
        });
        assert_eq!(call(&image, 0, 0), 0);
        assert_eq!(ntos::current_irql(), 0);
        assert!(ntos::violations().is_empty(), "{:?}", ntos::violations());
        // Reserved bits: flagged.
        call(&image, 0x12, 0);
        let v = ntos::violations();
        assert!(v.iter().any(|v| v.what.contains("reserved bits")), "{v:?}");
    });
}

#[test]
fn kuser_shared_data_reads_are_the_simulated_clock() {
    isolated("kuser_shared_data_reads_are_the_simulated_clock", || {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        // rcx = field address; every load form the emulation takes, one per `rdx` selector.
        let mut a = asm();
        let mut forms: Vec<iced_x86::code_asm::CodeLabel> =
            (0..7).map(|_| a.create_label()).collect();
        for (i, label) in forms.iter().enumerate() {
            a.cmp(rdx, i32::try_from(i).unwrap()).unwrap();
            a.je(*label).unwrap();
        }
        a.ud2().unwrap();
        a.set_label(&mut forms[0]).unwrap();
        a.mov(rax, qword_ptr(rcx)).unwrap();
        a.ret().unwrap();
        a.set_label(&mut forms[1]).unwrap();
        a.mov(eax, dword_ptr(rcx)).unwrap();
        a.ret().unwrap();
        a.set_label(&mut forms[2]).unwrap();
        a.xor(eax, eax).unwrap();
        a.movzx(eax, byte_ptr(rcx)).unwrap();
        a.ret().unwrap();
        a.set_label(&mut forms[3]).unwrap();
        a.movq(xmm0, qword_ptr(rcx)).unwrap();
        a.movq(rax, xmm0).unwrap();
        a.ret().unwrap();
        a.set_label(&mut forms[4]).unwrap();
        a.mov(rax, 0x1111_1111_1111_1111u64).unwrap();
        a.mov(ah, byte_ptr(rcx)).unwrap();
        a.ret().unwrap();
        a.set_label(&mut forms[5]).unwrap();
        a.movsxd(rax, dword_ptr(rcx)).unwrap();
        a.ret().unwrap();
        a.set_label(&mut forms[6]).unwrap();
        a.mov(rax, 0x1111_1111_1111_1111u64).unwrap();
        a.mov(al, byte_ptr(rcx + 1)).unwrap();
        a.ret().unwrap();
        let image = map(a);
        let read = |field: u64, form: u64| call(&image, KUSER + field, form);
        assert_eq!(
            read(0x14, 0),
            BOOT_SYSTEM_TIME.cast_unsigned(),
            "SystemTime"
        );
        assert_eq!(read(0x08, 0), 0, "InterruptTime at boot");
        kernel.advance(25_000_000);
        assert_eq!(read(0x14, 0), BOOT_SYSTEM_TIME.cast_unsigned() + 25_000_000);
        assert_eq!(
            read(0x14, 3),
            BOOT_SYSTEM_TIME.cast_unsigned() + 25_000_000,
            "movq xmm"
        );
        assert_eq!(read(0x08, 0), 25_000_000, "InterruptTime");
        assert_eq!(read(0x320, 0), 25_000_000 / 156_250, "TickCount");
        assert_eq!(read(0x320, 1), 160, "TickCount, 32 bits");
        assert_eq!(read(0x26C, 2), 10, "NtMajorVersion, movzx");
        assert_eq!(
            read(0x26C, 4),
            0x1111_1111_1111_0A11,
            "NtMajorVersion into ah"
        );
        assert_eq!(read(0x3C0, 5), 4, "ActiveProcessorCount, movsxd");
        assert_eq!(
            read(0x14, 6),
            0x1111_1111_1111_1100 | ((BOOT_SYSTEM_TIME.cast_unsigned() + 25_000_000) >> 8 & 0xFF),
            "SystemTime byte 1 into al"
        );
        // The moffs form, `mov rax, [KUSER + 0x14]`, as a constant address.
        let mut a = asm();
        a.add_instruction(
            iced_x86::Instruction::with2(
                iced_x86::Code::Mov_RAX_moffs64,
                iced_x86::Register::RAX,
                iced_x86::MemoryOperand::with_displ(KUSER + 0x14, 8),
            )
            .unwrap(),
        )
        .unwrap();
        a.ret().unwrap();
        let moffs = map(a);
        assert_eq!(
            call(&moffs, 0, 0),
            BOOT_SYSTEM_TIME.cast_unsigned() + 25_000_000
        );
        assert!(ntos::violations().is_empty(), "{:?}", ntos::violations());
        assert!(kernel.teardown().is_clean());
    });
}

#[test]
fn gs_reads_are_a_per_thread_kpcr() {
    isolated("gs_reads_are_a_per_thread_kpcr", || {
        let mut a = asm();
        let mut forms: Vec<iced_x86::code_asm::CodeLabel> =
            (0..4).map(|_| a.create_label()).collect();
        for (i, label) in forms.iter().enumerate() {
            a.cmp(rcx, i32::try_from(i).unwrap()).unwrap();
            a.je(*label).unwrap();
        }
        a.ud2().unwrap();
        // KeGetCurrentThread.
        a.set_label(&mut forms[0]).unwrap();
        a.mov(rax, qword_ptr(0x188).gs()).unwrap();
        a.ret().unwrap();
        // KeGetPcr()->Prcb.CurrentThread, through the Self pointer.
        a.set_label(&mut forms[1]).unwrap();
        a.mov(rax, qword_ptr(0x18).gs()).unwrap();
        a.mov(rax, qword_ptr(rax + 0x188)).unwrap();
        a.ret().unwrap();
        // mingw-w64's KeGetCurrentProcessorNumber.
        a.set_label(&mut forms[2]).unwrap();
        a.movzx(eax, word_ptr(0x184).gs()).unwrap();
        a.ret().unwrap();
        // The WDK's.
        a.set_label(&mut forms[3]).unwrap();
        a.mov(eax, dword_ptr(0x1A4).gs()).unwrap();
        a.ret().unwrap();
        let image = map(a);
        let thread = call(&image, 0, 0);
        assert_ne!(thread, 0);
        assert_eq!(call(&image, 0, 0), thread, "stable on one thread");
        assert_eq!(
            call(&image, 1, 0),
            thread,
            "the same through KeGetPcr()->Self"
        );
        let other = std::thread::scope(|s| s.spawn(|| call(&image, 0, 0)).join().unwrap());
        assert_ne!(other, thread, "each thread its own KTHREAD");
        assert!(call(&image, 2, 0) < u64::from(ntos::PROCESSORS));
        assert!(call(&image, 3, 0) < u64::from(ntos::PROCESSORS));
        let _ = gs;
    });
}

#[test]
fn cli_is_refused_by_name() {
    expect_stop(
        "cli_is_refused_by_name",
        || {
            let mut a = asm();
            a.nop().unwrap();
            a.cli().unwrap();
            a.ret().unwrap();
            a
        },
        &[
            "`cli` at image+0x1001",
            "privileged instruction the loader does not emulate",
        ],
    );
}

#[test]
fn wrmsr_is_refused_by_name() {
    expect_stop(
        "wrmsr_is_refused_by_name",
        || {
            let mut a = asm();
            a.wrmsr().unwrap();
            a.ret().unwrap();
            a
        },
        &["`wrmsr` at image+0x1000"],
    );
}

#[test]
fn other_control_registers_are_refused_by_name() {
    expect_stop(
        "other_control_registers_are_refused_by_name",
        || {
            let mut a = asm();
            a.mov(rax, cr3).unwrap();
            a.ret().unwrap();
            a
        },
        &["`mov rax,cr3`"],
    );
}

#[test]
fn fastfail_is_named() {
    expect_stop(
        "fastfail_is_named",
        || {
            let mut a = asm();
            a.mov(ecx, 7).unwrap();
            a.int(0x29).unwrap();
            a.ret().unwrap();
            a
        },
        &["__fastfail(0x7)"],
    );
}

#[test]
fn an_unmodelled_kuser_field_is_refused_by_offset() {
    expect_stop(
        "an_unmodelled_kuser_field_is_refused_by_offset",
        || {
            // NtBuildNumber (+0x260) is not modelled.
            let mut a = asm();
            a.mov(eax, dword_ptr(rcx + 0x260)).unwrap();
            a.ret().unwrap();
            a
        },
        &["KUSER_SHARED_DATA+0x260", "does not model"],
    );
}

#[test]
fn a_write_to_kuser_shared_data_is_refused() {
    expect_stop(
        "a_write_to_kuser_shared_data_is_refused",
        || {
            let mut a = asm();
            a.mov(dword_ptr(rcx + 0x14), eax).unwrap();
            a.ret().unwrap();
            a
        },
        &["only loads into a register from KUSER_SHARED_DATA"],
    );
}

#[test]
fn an_unmodelled_gs_offset_is_refused_by_offset() {
    expect_stop(
        "an_unmodelled_gs_offset_is_refused_by_offset",
        || {
            let mut a = asm();
            a.mov(rax, qword_ptr(0x30).gs()).unwrap();
            a.ret().unwrap();
            a
        },
        &["gs:[0x30]", "does not model"],
    );
}

#[test]
fn a_null_read_in_the_image_is_named_not_a_signal() {
    expect_stop(
        "a_null_read_in_the_image_is_named_not_a_signal",
        || {
            let mut a = asm();
            a.xor(eax, eax).unwrap();
            a.mov(eax, dword_ptr(rax)).unwrap();
            a.ret().unwrap();
            a
        },
        &[
            "`mov eax,[rax]` at image+0x1002",
            "a fault in the image",
            "fault address 0x0",
        ],
    );
}
