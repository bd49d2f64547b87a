// SPDX-License-Identifier: MIT OR Apache-2.0
//! Criterion benches of the driver's callback vs the KCS-style C callback, both registered with
//! pcw-sim's kernel PCW and collected through it (`Kernel::collect`): the whole query as the
//! simulator runs it, whose own cost (it records every instance, allocating) dominates. The
//! provider-only comparison is `benches/noop.rs`. Likewise the user-mode providers (pcw-um and
//! the C baseline of `c/um.c`) collected through pcw-sim's simulated Perflib
//! (`usermode::collect`). `PCW_BENCH_QUICK=1` runs N = 1 and 100 only.

use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use pcw_bench::waves::{Names, Population, registry_callback};
use pcw_bench::{c, um};
use pcw_driver::countersets::pcw_driver::geometric_waves as set;
use pcw_driver::ffi::{self, PcwCallback};
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Kernel, Request};
use pcw_sim::usermode;

/// Registers `callback` under `name` with the Geometric Waves descriptors.
fn register(name: &str, callback: PcwCallback, context: *const c_void) -> isize {
    let units: Vec<u16> = name.encode_utf16().collect();
    let mut unicode = ffi::unicode(&units);
    let info = ffi::PCW_REGISTRATION_INFORMATION {
        Version: ffi::PCW_VERSION_2,
        Name: &raw mut unicode,
        CounterCount: u32::try_from(set::DESCRIPTORS.len()).expect("two counters"),
        Counters: set::DESCRIPTORS.as_ptr().cast_mut(),
        Callback: ffi::pcw_callback(Some(callback)),
        CallbackContext: context.cast_mut(),
        Flags: ffi::PcwRegistrationNone,
    };
    let mut handle = ffi::NULL_REGISTRATION;
    // SAFETY: the information block, its name and the static descriptors live across the call.
    let status = unsafe { ffi::PcwRegister(&raw mut handle, &raw const info) };
    assert_eq!(status, 0, "PcwRegister {name}");
    handle
}

unsafe extern "system" fn c_callback(
    kind: i32,
    info: *const ffi::PCW_CALLBACK_INFORMATION,
    context: *const c_void,
) -> i32 {
    // SAFETY: forwarded from PCW unchanged.
    unsafe { c::kcs_callback(kind, info, context.cast_mut()) }
}

fn main() {
    let quick = std::env::var_os("PCW_BENCH_QUICK").is_some();
    let mut crit = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(300))
        .without_plots()
        .configure_from_args();
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    for n in [1usize, 100, 10_000] {
        if quick && n > 100 {
            continue;
        }
        let population = Population::new(n, Names::Short);
        population.install_c();
        let ours = register(
            "Bench Waves Rust",
            registry_callback,
            (&raw const population.registry).cast(),
        );
        let theirs = register("Bench Waves C", c_callback, std::ptr::null());
        let request = Request::default();
        for (side, set_name) in [("ours", "Bench Waves Rust"), ("c", "Bench Waves C")] {
            let collected = kernel.collect(set_name, &request).expect("collects");
            assert_eq!(collected.instances.len(), n, "{side}");
            crit.bench_function(&format!("sim/full/{n}/{side}"), |b| {
                b.iter(|| black_box(kernel.collect(set_name, &request)));
            });
        }
        for handle in [ours, theirs] {
            // SAFETY: registered above, unregistered once.
            unsafe { ffi::PcwUnregister(handle) };
        }
    }
    for n in [1usize, 100, 10_000] {
        if quick && n > 100 {
            continue;
        }
        let provider = um::start();
        let ours = um::instances(&provider, n);
        let theirs = um::CProvider::start(n);
        for (i, (instance, (block, _))) in ours.iter().zip(&theirs.instances).enumerate() {
            let v = u32::try_from(i).expect("few");
            assert!(um::update_ours(instance, v, u64::from(v) << 3));
            // SAFETY: the C provider's live handle and one of its instances.
            assert!(unsafe { um::update_c(theirs.handle(), *block, v, u64::from(v) << 3) });
        }
        for (side, set) in [("ours", um::SET.guid), ("c", um::C_SET)] {
            let collected = usermode::collect(set).expect("collects");
            assert_eq!(collected.len(), n, "{side}");
            crit.bench_function(&format!("sim/um-collect/{n}/{side}"), |b| {
                b.iter(|| black_box(usermode::collect(set)));
            });
        }
    }
    crit.final_summary();
}
