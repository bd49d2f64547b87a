// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fault sweeps (RELIABILITY.md): a failure is injected at every position in turn — each PCW call
//! `DriverEntry` (`lifecycle::load`) makes, each `PcwCreateInstance` of queue creation through the
//! IOCTL path, and each allocation the driver makes in load, queue creation and IOCTL dispatch —
//! and after each the operation must report it, change nothing, and unloading must leave zero
//! registrations, zero instances, no bugcheck (nothing unregistered or closed twice) and no
//! driver allocation still live (nothing leaked, nothing freed twice).
//!
//! Positions are counted on a clean run first and every one of them is failed, each from a
//! freshly booted kernel and a freshly loaded driver (unload frees the registries' tables, so
//! every run starts from the same state and position `n` is always the same allocation).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pcw_driver::control::{
    Completion, IOCTL_PCW_CLOSE_QUEUE, IOCTL_PCW_CREATE_QUEUE, IOCTL_PCW_RECORD_QUEUE,
    IOCTL_PCW_SNAPSHOT, device_control,
};
use pcw_driver::{lifecycle, queues, waves};
use pcw_sim::kernel_pcw::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Kernel, PcwCall, Request, as_provider, in_provider_code,
};
use windows_sys::Win32::Foundation::{
    NTSTATUS, STATUS_INSUFFICIENT_RESOURCES, STATUS_INVALID_PARAMETER_2, STATUS_SUCCESS,
    STATUS_UNSUCCESSFUL,
};

const QUEUES: &str = "PCW Dynamic Queues";
const BUILDS: [u32; 2] = [BUILD_SERVER_2022, BUILD_SERVER_2019];
/// Queues created in the allocation sweep: enough to cross every growth step of the registry's
/// tables (slots 1→2→…→64, the name index 16→64→128) at least once.
const SWEEP_QUEUES: usize = 40;

/// The system allocator, counting the allocations provider code makes on this thread (see
/// [`pcw_sim::kernel_pcw::as_provider`]) and failing the one numbered `FAIL_AT`, if armed.
struct Faulty;

std::thread_local! {
    /// Provider allocations (alloc, alloc_zeroed, realloc) attempted since the last `arm`.
    static ATTEMPTS: Cell<usize> = const { Cell::new(0) };
    /// The attempt to fail (0-based), `usize::MAX` for none.
    static FAIL_AT: Cell<usize> = const { Cell::new(usize::MAX) };
    /// How many attempts were failed.
    static INJECTED: Cell<usize> = const { Cell::new(0) };
    /// Provider blocks allocated minus provider blocks freed, on this thread.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Counts one attempt; `true` if it is the one to fail.
fn attempt() -> bool {
    if !in_provider_code() {
        return false;
    }
    let n = ATTEMPTS.with(Cell::get);
    ATTEMPTS.with(|a| a.set(n + 1));
    if n == FAIL_AT.with(Cell::get) {
        INJECTED.with(|i| i.set(i.get() + 1));
        return true;
    }
    false
}

fn track(delta: isize) {
    if in_provider_code() {
        LIVE.with(|l| l.set(l.get() + delta));
    }
}

// SAFETY: forwards to the system allocator, or returns NULL (a permitted answer) for the
// injected failure; the bookkeeping is thread-local cells of plain integers, which neither
// allocate nor have destructors.
unsafe impl GlobalAlloc for Faulty {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if attempt() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout contract is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(1);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if attempt() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout contract is passed on unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            track(1);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if attempt() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract (`ptr` from this allocator with `layout`) is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        track(-1);
        // SAFETY: `ptr` came from this allocator (hence `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Faulty = Faulty;

/// Runs `f` as provider code with the `n`-th allocation failing (`None`: counting only);
/// returns its result, the number of allocations attempted and whether the failure was injected.
fn armed<R>(n: Option<usize>, f: impl FnOnce() -> R) -> (R, usize, bool) {
    ATTEMPTS.with(|a| a.set(0));
    INJECTED.with(|i| i.set(0));
    FAIL_AT.with(|a| a.set(n.unwrap_or(usize::MAX)));
    let r = as_provider(f);
    FAIL_AT.with(|a| a.set(usize::MAX));
    let injected = INJECTED.with(Cell::get);
    assert!(injected <= 1, "one failure injected at most");
    (r, ATTEMPTS.with(Cell::get), injected == 1)
}

/// Boots a kernel with no driver loaded and the live-allocation balance at zero.
fn fresh(build: u32) -> Kernel {
    let k = Kernel::boot(build);
    as_provider(lifecycle::unload);
    LIVE.with(|l| l.set(0));
    k
}

/// Unloads as `DriverUnload` would and checks that nothing is left: no registration, no
/// instance, no bugcheck or misuse, no driver allocation live.
fn unload_clean(k: Kernel, what: &str) {
    as_provider(lifecycle::unload);
    // Checked while this test still holds the kernel: after teardown another test may load.
    assert_eq!(waves::REGISTRY.len(), 0, "{what}: waves left");
    assert_eq!(queues::REGISTRY.len(), 0, "{what}: queues left");
    let report = k.teardown();
    assert!(report.is_clean(), "{what}: {report:?}");
    assert_eq!(LIVE.with(Cell::get), 0, "{what}: driver allocations leaked");
}

fn load() -> Result<(), NTSTATUS> {
    as_provider(lifecycle::load)
}

fn queue_name(i: usize) -> Vec<u8> {
    format!("queue {i}")
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect()
}

/// The create IOCTL with a prepared name (no allocation of the test's own in provider code).
fn create_raw(name: &[u8]) -> Completion {
    let mut out = [0xA5u8; 4];
    device_control(IOCTL_PCW_CREATE_QUEUE, name, &mut out)
}

/// Creates queue `i` as provider code, without faults.
fn create_queue(i: usize) -> Completion {
    let name = queue_name(i);
    as_provider(|| create_raw(&name))
}

fn listed_queues(k: &Kernel) -> usize {
    k.collect(QUEUES, &Request::default())
        .expect("the queue set is registered")
        .instances
        .len()
}

#[test]
fn every_pcw_call_of_driver_entry_fails_in_turn() {
    let mut swept = 0;
    for build in BUILDS {
        // Count the calls of a clean load.
        let k = fresh(build);
        load().expect("a clean load");
        let counts = [
            PcwCall::Register,
            PcwCall::AddInstance,
            PcwCall::CreateInstance,
        ]
        .map(|call| (call, k.calls(call)));
        unload_clean(k, "clean load");
        assert!(counts[0].1 >= 3, "three countersets register: {counts:?}");
        for (call, count) in counts {
            for nth in 0..count {
                let what = format!("build {build}, {call:?} #{nth}");
                let k = fresh(build);
                k.fail(call, nth, STATUS_UNSUCCESSFUL);
                let status = load().expect_err(&what);
                // On the old OS an injected failure of the V2 attempt replaces its
                // INVALID_PARAMETER_2 answer; the status the driver saw is passed up either way.
                assert!(
                    status == STATUS_UNSUCCESSFUL || status == STATUS_INVALID_PARAMETER_2,
                    "{what}: {status:#x}"
                );
                assert!(!lifecycle::is_loaded(), "{what}");
                unload_clean(k, &what);
                swept += 1;
            }
        }
    }
    // 3 calls on the new OS, 6 on the old one (a V2 attempt before each V1 registration).
    assert_eq!(swept, 9);
    eprintln!("PCW call positions failed in DriverEntry: {swept}");
}

#[test]
fn every_allocation_of_driver_entry_fails_in_turn() {
    for build in BUILDS {
        let k = fresh(build);
        let (r, count, _) = armed(None, lifecycle::load);
        r.expect("a clean load");
        unload_clean(k, "clean load");
        assert!(count > 0, "load allocates its waves");
        eprintln!("build {build}: {count} allocation positions failed in DriverEntry");
        for n in 0..count {
            let what = format!("build {build}, allocation #{n} of {count}");
            let k = fresh(build);
            let (r, _, injected) = armed(Some(n), lifecycle::load);
            assert!(injected, "{what}: not reached");
            assert_eq!(r, Err(STATUS_INSUFFICIENT_RESOURCES), "{what}");
            assert!(!lifecycle::is_loaded(), "{what}");
            unload_clean(k, &what);
        }
    }
}

#[test]
fn every_create_instance_of_queue_creation_fails_in_turn() {
    const CREATES: usize = 3;
    let k = fresh(BUILD_SERVER_2022);
    load().expect("a clean load");
    let base = k.calls(PcwCall::CreateInstance);
    for i in 0..CREATES {
        assert_eq!(create_queue(i).status, STATUS_SUCCESS);
    }
    let count = k.calls(PcwCall::CreateInstance) - base;
    unload_clean(k, "clean creates");
    assert_eq!(count, CREATES, "one PcwCreateInstance per queue");
    for nth in 0..count {
        let what = format!("PcwCreateInstance #{nth}");
        let k = fresh(BUILD_SERVER_2022);
        load().expect("a clean load");
        k.fail(PcwCall::CreateInstance, base + nth, STATUS_UNSUCCESSFUL);
        for i in 0..CREATES {
            let c = create_queue(i);
            if i == nth {
                assert_eq!(c.status, STATUS_UNSUCCESSFUL, "{what}");
                assert_eq!(c.information, 0, "{what}");
            } else {
                assert_eq!(c.status, STATUS_SUCCESS, "{what}, queue {i}");
            }
        }
        assert_eq!(queues::REGISTRY.len(), CREATES - 1, "{what}");
        assert_eq!(listed_queues(&k), CREATES - 1, "{what}");
        unload_clean(k, &what);
    }
}

/// Loads and creates `queues` queues, all without faults.
fn loaded_with(queues: usize) {
    load().expect("a clean load");
    for i in 0..queues {
        assert_eq!(create_queue(i).status, STATUS_SUCCESS);
    }
}

#[test]
fn every_allocation_of_queue_creation_through_the_ioctl_fails_in_turn() {
    let mut swept = 0;
    let mut per_queue = Vec::new();
    for q in 0..SWEEP_QUEUES {
        // Allocations made creating queue `q` when `q` queues exist.
        let k = fresh(BUILD_SERVER_2022);
        loaded_with(q);
        let name = queue_name(q);
        let (c, count, _) = armed(None, || create_raw(&name));
        per_queue.push(count);
        assert_eq!(c.status, STATUS_SUCCESS);
        unload_clean(k, "clean creates");
        assert!(count > 0, "a queue allocates its counter block");
        for n in 0..count {
            let what = format!("queue {q}, allocation #{n} of {count}");
            let k = fresh(BUILD_SERVER_2022);
            loaded_with(q);
            let (c, _, injected) = armed(Some(n), || create_raw(&name));
            assert!(injected, "{what}: not reached");
            assert_eq!(
                c,
                Completion {
                    status: STATUS_INSUFFICIENT_RESOURCES,
                    information: 0
                },
                "{what}"
            );
            assert_eq!(queues::REGISTRY.len(), q, "{what}");
            assert_eq!(
                listed_queues(&k),
                q,
                "{what}: the failed queue's instance is closed"
            );
            // The registry still works after the failure.
            assert_eq!(create_queue(q).status, STATUS_SUCCESS);
            unload_clean(k, &what);
            swept += 1;
        }
    }
    assert!(swept >= 2 * SWEEP_QUEUES, "{swept} positions");
    eprintln!(
        "allocation positions failed creating {SWEEP_QUEUES} queues by IOCTL: {swept} {per_queue:?}"
    );
}

#[test]
fn the_other_ioctls_allocate_nothing() {
    let k = fresh(BUILD_SERVER_2022);
    loaded_with(3);
    let mut out = vec![0u8; 64 * 1024];
    let (c, n, _) = armed(None, || device_control(IOCTL_PCW_SNAPSHOT, &[], &mut out));
    assert_eq!((c.status, n), (STATUS_SUCCESS, 0), "snapshot");
    let (c, n, _) = armed(None, || device_control(IOCTL_PCW_SNAPSHOT, &[], &mut []));
    assert_eq!(n, 0, "snapshot sizing: {c:?}");
    let mut record = [0u8; 24];
    record[..4].copy_from_slice(&0u32.to_le_bytes());
    let (c, n, _) = armed(None, || {
        device_control(IOCTL_PCW_RECORD_QUEUE, &record, &mut [])
    });
    assert_eq!((c.status, n), (STATUS_SUCCESS, 0), "record");
    let (c, n, _) = armed(None, || {
        device_control(IOCTL_PCW_CLOSE_QUEUE, &0u32.to_le_bytes(), &mut [])
    });
    assert_eq!((c.status, n), (STATUS_SUCCESS, 0), "close");
    let (c, n, _) = armed(None, || device_control(0x0022_2FFF, &[1, 2, 3], &mut []));
    assert_ne!(c.status, STATUS_SUCCESS);
    assert_eq!(n, 0, "unknown code");
    unload_clean(k, "other ioctls");
}

#[test]
fn load_and_unload_leave_no_driver_allocation_behind() {
    for build in BUILDS {
        let k = fresh(build);
        loaded_with(SWEEP_QUEUES);
        assert!(LIVE.with(Cell::get) > 0);
        unload_clean(k, "load, queues, unload");
    }
}
