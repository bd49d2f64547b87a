//! {{name}}'s tests, run by `cargo test` on Linux through pcw-harness: the counters alone, then
//! the driver's host build — and, when `{{upper}}_IMAGE` names the cross-built `.sys`, that
//! image in a child process — under a simulated kernel.

use std::time::Duration;

use pcw_harness::requests::{Filtering, answers};
use pcw_harness::{BUILD_SERVER_2022, Counters, Driver, Kernel, fault_sweep, finish};
use {{snake}}::{DEVICE_NAME, SYMBOLIC_LINK, counters};

/// The counter manifest.
const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/{{snake}}.man");
/// The environment variable naming the cross-built image.
const IMAGE: &str = "{{upper}}_IMAGE";

/// Runs `body` on the host build, then on the image `{{upper}}_IMAGE` names (in a child
/// process, so that a fault in it fails this test only).
fn on_both(test: &str, body: impl Fn(&Driver)) {
    let host = Driver::host({{snake}}::kernel::driver_entry);
    pcw_harness::scenario(test, &host, IMAGE, body);
}

#[test]
fn the_counters_alone_register_and_answer_every_collection() {
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    counters::register().unwrap();
    let declared = Counters::from_manifest(&kernel, MANIFEST).unwrap();
    // What was registered is what the manifest declares: every counter id, every size.
    let mismatches = declared.catalog().mismatches(&kernel);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    for set in &declared.catalog().sets {
        // The requests PDH sends (each instance by id, by name in another case, by `*` and `?`
        // wildcards, a mask matching nothing), each answered with exactly what it selects.
        answers(&kernel, &set.name, Filtering::Exact).unwrap();
    }
    drop(declared);
    counters::unregister();
    finish(kernel).unwrap();
}

#[test]
fn loads_registers_every_counterset_and_unloads_leaving_nothing() {
    on_both("loads_registers_every_counterset_and_unloads_leaving_nothing", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
        let declared = Counters::from_manifest(&kernel, MANIFEST).unwrap();
        let names: Vec<&str> = declared.catalog().sets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(kernel.countersets(), names);
        assert_eq!(driver.devices(), [DEVICE_NAME]);
        assert_eq!(
            driver.links().get(&SYMBOLIC_LINK.to_ascii_lowercase()),
            Some(&DEVICE_NAME.to_owned())
        );
        assert!(driver.create().ok);
        // No control code is the device's yet: ERROR_INVALID_FUNCTION, nothing copied back.
        let r = driver.ioctl(0x0022_2000, b"ping", 4);
        assert_eq!((r.ok, r.win32_error, r.output.len()), (false, 1, 0), "{r}");
        assert!(driver.close().ok);
        drop(declared);
        driver.unload(kernel).unwrap();
    });
}

#[test]
fn driver_entry_rolls_back_at_every_failing_call() {
    on_both("driver_entry_rolls_back_at_every_failing_call", |build| {
        let faults = fault_sweep(build, BUILD_SERVER_2022).unwrap();
        let routines: Vec<&str> = faults.iter().map(|f| f.routine.as_str()).collect();
        // Each counterset's registration, then the device and its link.
        let (registrations, device) = routines.split_at(routines.len() - 2);
        assert_eq!(device, ["IoCreateDevice", "IoCreateSymbolicLink"], "{routines:?}");
        assert!(
            !registrations.is_empty() && registrations.iter().all(|r| *r == "PcwRegister"),
            "{routines:?}"
        );
        assert!(faults.iter().all(|f| f.status < 0), "{faults:?}");
    });
}

#[test]
fn typeperf_lists_and_samples_every_counter() {
    on_both("typeperf_lists_and_samples_every_counter", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
        let counters = Counters::from_manifest(&kernel, MANIFEST).unwrap();
        let listed = counters.list(None).unwrap();
        let (paths, warnings) = counters.list_instances(None).unwrap();
        assert!(!listed.is_empty() && !paths.is_empty(), "{listed:?} {paths:?}");
        assert!(warnings.is_empty(), "{warnings:?}");
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let samples = counters
            .typeperf_with(&paths, 2, Duration::from_secs(1), |_| {
                assert!(driver.create().ok);
                assert!(driver.close().ok);
            })
            .unwrap();
        assert_eq!(samples.columns.len(), paths.len());
        // Every column has a value, but an aggregate instance's counter that does not
        // aggregate (`aggregate="undefined"`), which PDH leaves blank.
        for (i, column) in samples.columns.iter().enumerate() {
            let blank = counters.aggregates_to_blank(column);
            for row in &samples.rows {
                assert_eq!(row.raw[i].is_none(), blank, "`{column}`: {:?}", row.raw[i]);
            }
        }
        drop(counters);
        driver.unload(kernel).unwrap();
    });
}
