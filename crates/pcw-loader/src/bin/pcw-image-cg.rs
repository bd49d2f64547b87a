// SPDX-License-Identifier: MIT OR Apache-2.0
//! Instruction counts of the shipped image's Geometric Waves callback, for `scripts/bench.sh`:
//! loads the cross-built `.sys` given as the argument, runs `DriverEntry` against the simulated
//! kernel, then calls the image's own `PCW_CALLBACK` (the one `DriverEntry` registered first)
//! with a `CollectData` request for every counter and instance, `REPS` times inside
//! [`pcw_image_cg_measure`], with `PcwAddInstance` in the loader's benchmark mode (it only
//! counts). Run under `valgrind --tool=callgrind --toggle-collect=pcw_image_cg_measure`, the
//! total is the image's cost for those calls, comparable with the host build's
//! `callback/driver/N/host` case of `pcw-bench-cg` (the same callback code over the same N
//! waves, over a no-op PCW): N is 3 for the shipped image, 64 for the image built with the
//! driver's `bench-waves` feature (`scripts/cross-windows.sh --bench-image`).
//!
//! Prints one line in `pcw-bench-cg`'s format: `case`, `callback/driver/N/image` with N the
//! instances one call added, repetitions, instances per call,
//! `PcwAddInstance` calls in one call, allocations (0: the image allocates through the loader's
//! pool, and the callback never does), capped names (0).
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

use std::process::ExitCode;

use pcw_loader::{LoadedDriver, ntos};
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Kernel};

/// Calls per measurement.
const REPS: usize = 200;

/// The measured region: `reps` calls of the image's callback.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn pcw_image_cg_measure(
    request: &ntos::CollectRequest,
    callback: usize,
    context: usize,
    reps: usize,
) -> i32 {
    let mut status = 0;
    for _ in 0..reps {
        // SAFETY: the image's registered callback and context; benchmark mode is on.
        status |= unsafe { request.call(callback, context) };
    }
    status
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: pcw-image-cg PATH_TO_pcw_driver.sys");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    let driver = match LoadedDriver::load(&bytes) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let status = driver.entry();
    if status < 0 {
        eprintln!(
            "error: DriverEntry failed with {:#010X}",
            status.cast_unsigned()
        );
        return ExitCode::FAILURE;
    }
    let (Some(&callback), Some(&context)) =
        (ntos::callbacks().first(), ntos::callback_contexts().first())
    else {
        eprintln!("error: the image registered no callback");
        return ExitCode::FAILURE;
    };
    let base = driver.image().map_or(0, pcw_loader::MappedImage::base);
    eprintln!(
        "image base {base:#x}, callback {callback:#x} (RVA {:#x})",
        callback - base
    );
    ntos::count_add_instance_only(true);
    let request = ntos::CollectRequest::everything(1);
    let before = ntos::counted_add_instances();
    // The warm-up call stays outside the measured function.
    // SAFETY: the image's registered callback and context; benchmark mode is on.
    let warm = unsafe { request.call(callback, context) };
    let added = ntos::counted_add_instances() - before;
    let status = pcw_image_cg_measure(&request, callback, context, REPS);
    ntos::count_add_instance_only(false);
    if warm != 0 || status != 0 {
        eprintln!(
            "error: the callback failed: {:#010X}",
            (warm | status).cast_unsigned()
        );
        return ExitCode::FAILURE;
    }
    println!("case\tcallback/driver/{added}/image\t{REPS}\t{added}\t{added}\t0\t0");
    driver.unload();
    drop(driver);
    let teardown = kernel.teardown();
    if !teardown.is_clean() || !ntos::leaks().is_empty() {
        eprintln!("error: the image left {:?} / {:?}", teardown, ntos::leaks());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
