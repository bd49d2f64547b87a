// SPDX-License-Identifier: MIT OR Apache-2.0
//! Every CPU fault the image's own code raises — an invalid opcode, a breakpoint, a divide
//! error, a call through a NULL or wild function pointer — and an image that never returns stop
//! the scenario the loader's one way (exit code 86, `pcw-loader: stopped: …` naming the fault
//! and where in the image), never a signal and never a hang; a fault that is the host's own
//! still ends the process with its signal. Crafted code, each scenario in a child process.

#[expect(
    dead_code,
    reason = "these scenarios run import-free code, so the import helpers go unused"
)]
mod crafted;
mod run_crafted;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use iced_x86::code_asm::{CodeAssembler, eax, ecx, edx, qword_ptr, rax, rcx};
use pcw_loader::isolate::{ScenarioFailure, is_child, run_child};
use pcw_loader::layout::driver_object as drv;
use pcw_loader::{LoadedDriver, driver, ntos};
use run_crafted::{asm, map};

/// [`run_crafted::expect_stop`] with this file's arguments.
fn expect_stop(scenario: &str, code: impl FnOnce() -> CodeAssembler, needles: &[&str]) {
    run_crafted::expect_stop(scenario, code, (0, 0), needles);
}

#[test]
fn ud2_is_an_invalid_opcode_not_a_sigill() {
    expect_stop(
        "ud2_is_an_invalid_opcode_not_a_sigill",
        || {
            let mut a = asm();
            a.nop().unwrap();
            a.ud2().unwrap();
            a.ret().unwrap();
            a
        },
        &["`ud2` at image+0x1001", "invalid opcode"],
    );
}

#[test]
fn int3_is_a_breakpoint_not_a_sigtrap() {
    expect_stop(
        "int3_is_a_breakpoint_not_a_sigtrap",
        || {
            let mut a = asm();
            a.nop().unwrap();
            a.nop().unwrap();
            a.int3().unwrap();
            a.ret().unwrap();
            a
        },
        &["`int3` at image+0x1002", "breakpoint (int3)"],
    );
}

#[test]
fn a_divide_by_zero_is_a_divide_error_not_a_sigfpe() {
    expect_stop(
        "a_divide_by_zero_is_a_divide_error_not_a_sigfpe",
        || {
            let mut a = asm();
            a.mov(eax, 10).unwrap();
            a.xor(edx, edx).unwrap();
            a.xor(ecx, ecx).unwrap();
            a.div(ecx).unwrap();
            a.ret().unwrap();
            a
        },
        &["`div ecx` at image+0x1009", "divide error"],
    );
}

#[test]
fn a_call_through_a_null_pointer_is_named_with_its_caller() {
    expect_stop(
        "a_call_through_a_null_pointer_is_named_with_its_caller",
        || {
            let mut a = asm();
            a.sub(iced_x86::code_asm::rsp, 0x28).unwrap();
            a.xor(eax, eax).unwrap();
            a.call(rax).unwrap();
            a.add(iced_x86::code_asm::rsp, 0x28).unwrap();
            a.ret().unwrap();
            a
        },
        &["call to address 0x0", "`call rax` at image+0x1006"],
    );
}

#[test]
fn a_call_through_a_wild_pointer_is_named_with_its_caller() {
    expect_stop(
        "a_call_through_a_wild_pointer_is_named_with_its_caller",
        || {
            let mut a = asm();
            a.sub(iced_x86::code_asm::rsp, 0x28).unwrap();
            a.mov(rcx, 0x1234_5678_9ABCu64).unwrap();
            a.mov(qword_ptr(iced_x86::code_asm::rsp + 0x20), rcx)
                .unwrap();
            a.call(qword_ptr(iced_x86::code_asm::rsp + 0x20)).unwrap();
            a.add(iced_x86::code_asm::rsp, 0x28).unwrap();
            a.ret().unwrap();
            a
        },
        &["call to address 0x123456789abc", "image+0x1013"],
    );
}

#[test]
fn a_fault_in_the_hosts_own_code_keeps_its_signal() {
    const NAME: &str = "a_fault_in_the_hosts_own_code_keeps_its_signal";
    if is_child(NAME) {
        let mut a = asm();
        a.ret().unwrap();
        let _image = map(a);
        // The host's own breakpoint, with an image mapped: not the image's, so not stopped.
        // SAFETY: raises a signal whose default action ends this child process.
        unsafe { libc::raise(libc::SIGTRAP) };
        unreachable!("SIGTRAP's default action ends the process");
    }
    match run_child(NAME) {
        Err(ScenarioFailure::Signal { number, .. }) => assert_eq!(number, libc::SIGTRAP),
        other => panic!("expected SIGTRAP, got {other:?}"),
    }
}

/// Runs the test `scenario` in a child with `PCW_LOADER_TIMEOUT` set to `limit` and returns
/// its exit status and what it printed. A child still running after 60 s is killed and the
/// test fails: the limit did not stop it.
fn run_with_limit(scenario: &str, limit: &str) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([scenario, "--exact", "--nocapture", "--test-threads=1"])
        .env(pcw_loader::isolate::SCENARIO_ENV, scenario)
        .env("PCW_LOADER_TIMEOUT", limit)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "`{scenario}` still running after 60 s with PCW_LOADER_TIMEOUT={limit}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, printed)
}

/// A crafted driver whose `DriverEntry` sets `MajorFunction[IRP_MJ_CREATE]` to a routine that
/// spins forever when `spin_in_entry` is false, and spins itself when it is true.
fn spinning_driver(spin_in_entry: bool) -> LoadedDriver {
    let mut a = asm();
    let mut spin = a.create_label();
    if spin_in_entry {
        a.jmp(spin).unwrap();
    }
    a.lea(rax, qword_ptr(spin)).unwrap();
    let slot = i32::try_from(drv::MAJOR_FUNCTION + 8 * usize::from(driver::IRP_MJ_CREATE)).unwrap();
    a.mov(qword_ptr(rcx + slot), rax).unwrap();
    a.xor(eax, eax).unwrap();
    a.ret().unwrap();
    a.set_label(&mut spin).unwrap();
    a.pause().unwrap();
    a.jmp(spin).unwrap();
    let bytes = crafted::Image {
        code: crafted::assemble(a),
        ..crafted::Image::default()
    }
    .build();
    LoadedDriver::load(&bytes).expect("the crafted driver loads")
}

#[test]
fn a_driver_entry_that_never_returns_is_stopped_at_the_limit() {
    const NAME: &str = "a_driver_entry_that_never_returns_is_stopped_at_the_limit";
    if is_child(NAME) {
        let driver = spinning_driver(true);
        driver.entry();
        panic!("DriverEntry returned");
    }
    let started = Instant::now();
    let (status, stderr) = run_with_limit(NAME, "1");
    assert_eq!(
        status.code(),
        Some(ntos::STOP_EXIT_CODE),
        "{status:?}: {stderr}"
    );
    assert!(
        stderr.contains("pcw-loader: stopped: DriverEntry did not return within 1 s"),
        "{stderr}"
    );
    assert!(stderr.contains("PCW_LOADER_TIMEOUT"), "{stderr}");
    assert!(stderr.contains("image+0x"), "where it was: {stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped at about the limit, not later"
    );
}

#[test]
fn a_dispatch_routine_that_never_returns_is_stopped_at_the_limit() {
    const NAME: &str = "a_dispatch_routine_that_never_returns_is_stopped_at_the_limit";
    if is_child(NAME) {
        let driver = spinning_driver(false);
        assert_eq!(driver.entry(), 0, "DriverEntry returns at once");
        driver.send(driver::IRP_MJ_CREATE);
        panic!("the dispatch routine returned");
    }
    let (status, stderr) = run_with_limit(NAME, "0.5");
    assert_eq!(
        status.code(),
        Some(ntos::STOP_EXIT_CODE),
        "{status:?}: {stderr}"
    );
    assert!(
        stderr.contains("the IRP_MJ_CREATE dispatch routine did not return within 0.5 s"),
        "{stderr}"
    );
}

#[test]
fn a_call_that_returns_in_time_is_not_stopped() {
    const NAME: &str = "a_call_that_returns_in_time_is_not_stopped";
    if is_child(NAME) {
        let driver = spinning_driver(false);
        for _ in 0..1000 {
            assert_eq!(driver.entry(), 0);
        }
        // Past the limit with no call in the image: nothing to stop.
        std::thread::sleep(Duration::from_millis(700));
        assert_eq!(driver.entry(), 0);
        return;
    }
    let (status, stderr) = run_with_limit(NAME, "0.3");
    assert!(
        status.success(),
        "{status:?} {:?}: {stderr}",
        status.signal()
    );
    assert!(stderr.contains("1 passed"), "the scenario ran: {stderr}");
}
