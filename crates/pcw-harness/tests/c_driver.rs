// SPDX-License-Identifier: MIT OR Apache-2.0
//! A C driver tested through the harness as its author would test it: the `.sys` mingw-w64 built
//! from `examples/c-driver` (`PCW_C_DRIVER_IMAGE` names it; the test command sets it), loaded,
//! checked against its manifest, asked what PDH asks, failed at each kernel call of its
//! `DriverEntry`, and unloaded. Nothing here knows the driver beyond its manifest.

#![cfg(all(target_arch = "x86_64", unix))]

use pcw_harness::requests::{Filtering, answers};
use pcw_harness::{BUILD_SERVER_2022, Counters, Driver, Kernel, fault_sweep};

/// The driver's manifest.
const MANIFEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/c-driver/c_driver.man"
);

/// The image, or `None` (with a note) when the environment does not name one.
fn image() -> Option<Driver> {
    let driver = Driver::image_from_env("PCW_C_DRIVER_IMAGE").unwrap();
    if driver.is_none() {
        eprintln!("note: PCW_C_DRIVER_IMAGE is not set; the C driver's tests are skipped");
    }
    driver
}

#[test]
fn a_c_driver_registers_what_its_manifest_declares_and_answers_every_request() {
    let Some(driver) = image() else { return };
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    let loaded = driver.start().unwrap();
    let counters = Counters::from_manifest(&kernel, MANIFEST).unwrap();
    // Every counter id and size the manifest declares, registered as declared.
    let mismatches = counters.catalog().mismatches(&kernel);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    for set in &counters.catalog().sets {
        // The C driver filters in its callback, as it says it does.
        answers(&kernel, &set.name, Filtering::Exact).unwrap();
    }
    drop(counters);
    loaded.unload(kernel).unwrap();
}

#[test]
fn a_c_driver_rolls_back_at_every_failing_call() {
    let Some(driver) = image() else { return };
    let faults = fault_sweep(&driver, BUILD_SERVER_2022).unwrap();
    assert!(
        faults.iter().any(|f| f.routine == "PcwRegister"),
        "{faults:?}"
    );
}
