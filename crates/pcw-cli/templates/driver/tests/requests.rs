//! The counters of `{{snake}}.man` as `pcw new` wrote it: the control device's requests,
//! counted by the driver and cooked by PDH — `Requests/sec` a rate, `Device Requests` a count.

use std::time::Duration;

use pcw_harness::{BUILD_SERVER_2022, Counters, Driver, Kernel};

const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/{{snake}}.man");

fn on_both(test: &str, body: impl Fn(&Driver)) {
    let host = Driver::host({{snake}}::kernel::driver_entry);
    pcw_harness::scenario(test, &host, "{{upper}}_IMAGE", body);
}

#[test]
fn requests_are_counted_and_cooked() {
    on_both("requests_are_counted_and_cooked", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
        let counters = Counters::from_manifest(&kernel, MANIFEST).unwrap();
        // Before each 2-second sample: 4 opens and closes and 2 control requests.
        let samples = counters
            .typeperf_with(&[r"\{{display}}(*)\*"], 3, Duration::from_secs(2), |_| {
                for _ in 0..4 {
                    assert!(driver.create().ok);
                    assert!(driver.close().ok);
                }
                for _ in 0..2 {
                    assert!(!driver.ioctl(0x0022_2000, &[], 0).ok);
                }
            })
            .unwrap();
        assert_eq!(samples.cooked(r"\{{display}}(Create)\Requests/sec"), [Some(2.0); 3]);
        assert_eq!(samples.cooked(r"\{{display}}(Device Control)\Requests/sec"), [Some(1.0); 3]);
        assert_eq!(
            samples.cooked(r"\{{display}}(Close)\Device Requests"),
            [Some(4.0), Some(8.0), Some(12.0)]
        );
        drop(counters);
        driver.unload(kernel).unwrap();
    });
}
