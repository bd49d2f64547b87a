// SPDX-License-Identifier: MIT OR Apache-2.0
//! The counters alone, without the driver around them: the `Publish` impl registered with the
//! simulated kernel through the generated `register_publisher` and collected as PCW collects
//! it — what a driver of any model (WDM, KMDF, …) can test of its counters, since the counters
//! part is the same `Publish` impl whatever creates the devices.

use checksum_driver::control::{Algorithm, IOCTL_CHECKSUM_ADLER32, device_control};
use checksum_driver::counters;
use checksum_driver::counters::generated::checksum_driver::checksum_algorithms::ids;
use pcw_harness::{BUILD_SERVER_2022, Kernel, Request, finish};

const SET: &str = "Checksum Driver Algorithms";

/// Held for the whole of each test: both use the driver's one registration slot, which only
/// `DriverEntry` and `DriverUnload` touch, never at once, as a real driver's are. (A handle
/// left in the slot by another test's kernel can no longer name this test's registration: the
/// simulated kernels of one process never hand out the same handle twice.)
static DRIVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn driver() -> std::sync::MutexGuard<'static, ()> {
    DRIVER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn the_publisher_alone_offers_one_instance_per_algorithm() {
    let _driver = driver();
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    for algorithm in Algorithm::ALL {
        algorithm.stats().reset();
    }
    counters::register().unwrap();
    let mut out = [0u8; 4];
    assert_eq!(
        device_control(IOCTL_CHECKSUM_ADLER32, b"abc", &mut out).status,
        0
    );
    let c = kernel.collect(SET, &Request::default()).unwrap();
    let got: Vec<(&str, u64)> = c
        .instances
        .iter()
        .map(|i| (i.name.as_str(), i.values[&ids::BYTES]))
        .collect();
    assert_eq!(got, [("CRC32", 0), ("Adler32", 3)]);
    let adler = Request {
        instance_mask: Some("adler*".to_owned()),
        counter_mask: 1 << ids::REQUESTS,
        ..Request::default()
    };
    let c = kernel.collect(SET, &adler).unwrap();
    assert_eq!(c.instances.len(), 1);
    assert_eq!(
        c.instances[0].values.iter().collect::<Vec<_>>(),
        [(&ids::REQUESTS, &1)]
    );
    counters::unregister();
    finish(kernel).unwrap();
}

/// What `finish` says about a publisher that is never unregistered.
#[test]
fn a_registration_left_open_is_named_at_the_end() {
    let _driver = driver();
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    counters::register().unwrap();
    let e = finish(kernel).unwrap_err();
    assert_eq!(
        e.to_string(),
        "counterset `Checksum Driver Algorithms` is still registered"
    );
    // The simulated kernel was reset; the driver's slot still holds the leaked registration.
    // Releasing it under the next kernel is the same leak, already named: not a fault of the
    // test that releases it.
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    counters::unregister();
    finish(kernel).unwrap();
}
