// SPDX-License-Identifier: MIT OR Apache-2.0
//! The V1 round trip on the host: the driver's real code under pcw-sim's kernel →
//! `IOCTL_PCW_SNAPSHOT` (the driver's `control::device_control`, installed as the device
//! source's in-process IOCTL) → the DLL's exports → V1 blocks whose raw values equal what the
//! driver's PCW callback hands the simulated kernel at the same (frozen) instant.

use std::sync::Arc;

use pcw_core::v1::validate::{self, Expect};
use pcw_driver::control::{IOCTL_PCW_CREATE_QUEUE, IOCTL_PCW_SNAPSHOT, device_control};
use pcw_driver::lifecycle;
use pcw_perfdll::source::{IoctlReply, set_host_ioctl};
use pcw_perfdll::{ClosePerformanceData, CollectPerformanceData, OpenPerformanceData};
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Kernel, Request};
use pcw_sim::stress_scale;
use pcw_sim::v1_host::{Host, HostConfig};

fn install_driver_ioctl() {
    set_host_ioctl(Some(Arc::new(|out: &mut [u8]| {
        let c = device_control(IOCTL_PCW_SNAPSHOT, &[], out);
        IoctlReply::from_completion(c.status, c.information, out)
    })));
}

/// Name → raw values of one V1 object.
fn v1_instances(object: &validate::ObjectRef<'_>) -> Vec<(String, Vec<u64>)> {
    let counters: Vec<_> = object.counters().collect();
    object
        .instances()
        .map(|i| {
            let name = String::from_utf16(&i.name_utf16().collect::<Vec<_>>()).unwrap();
            (name, counters.iter().map(|c| i.value(c).unwrap()).collect())
        })
        .collect()
}

/// Name → raw values (counter id order) of what the driver's callback handed PCW.
fn pcw_instances(k: &Kernel, set: &str) -> Vec<(String, Vec<u64>)> {
    k.collect(set, &Request::default())
        .unwrap()
        .instances
        .into_iter()
        .map(|i| (i.name, i.values.into_values().collect()))
        .collect()
}

#[test]
fn driver_snapshot_ioctl_dll_v1_values_equal_pcw_values() {
    let k = Kernel::boot(BUILD_SERVER_2022);
    lifecycle::unload();
    lifecycle::load().unwrap();
    k.advance(33_000_000);
    for name in ["Queue One", "Queue Two"] {
        let input: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut out = [0u8; 4];
        assert_eq!(
            device_control(IOCTL_PCW_CREATE_QUEUE, &input, &mut out).status,
            0
        );
    }
    install_driver_ioctl();

    let mut linkage: Vec<u16> = "source=device\0first-counter=238\0\0"
        .encode_utf16()
        .collect();
    // SAFETY: a double-NUL-terminated multi-string alive across the call.
    assert_eq!(unsafe { OpenPerformanceData(linkage.as_mut_ptr()) }, 0);
    let host = Host::new(HostConfig {
        check_untouched_on_failure: true,
        ..HostConfig::default()
    });
    // SAFETY: the export honours the pointer contract (checked by the host).
    let r = unsafe { host.call_extern(CollectPerformanceData, Some("238 260"), 1 << 16) }.unwrap();
    // SAFETY: no pointers.
    assert_eq!(unsafe { ClosePerformanceData() }, 0);
    set_host_ioctl(None);

    validate::validate_objects(&r.data, 2, Expect::Data).unwrap();
    let objects: Vec<_> = validate::objects(&r.data, 0, Expect::Data)
        .map(Result::unwrap)
        .collect();
    let waves = v1_instances(&objects[0]);
    assert_eq!(waves.len(), 3, "{waves:?}");
    assert_eq!(waves, pcw_instances(&k, "Geometric Waves"));
    let queues = v1_instances(&objects[1]);
    assert_eq!(queues.len(), 2, "{queues:?}");
    assert_eq!(queues, pcw_instances(&k, "PCW Dynamic Queues"));

    lifecycle::unload();
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
}

/// Concurrency on the device path: 8 threads each Open → Collect → Close
/// the DLL a fixed number of rounds (device source = the driver's IOCTL under pcw-sim) while
/// another thread creates, records on and closes queues in the driver for as long as any of
/// them runs. Every reply passes the host's checks and validates; no object is torn (queue
/// values are written so a torn read shows).
#[test]
fn eight_threads_open_collect_close_while_the_driver_churns() {
    use pcw_driver::control::{IOCTL_PCW_CLOSE_QUEUE, IOCTL_PCW_RECORD_QUEUE};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let k = Kernel::boot(BUILD_SERVER_2022);
    lifecycle::unload();
    lifecycle::load().unwrap();
    install_driver_ioctl();
    let rounds = 20 * stress_scale();
    let done = AtomicUsize::new(0);
    let replies = AtomicUsize::new(0);
    let churned = std::thread::scope(|s| {
        for t in 0..8 {
            let (done, replies) = (&done, &replies);
            s.spawn(move || {
                let host = Host::new(HostConfig {
                    check_untouched_on_failure: true,
                    ..HostConfig::default()
                });
                for _ in 0..rounds {
                    let mut linkage: Vec<u16> = "source=device\0first-counter=238\0\0"
                        .encode_utf16()
                        .collect();
                    // SAFETY: a double-NUL-terminated multi-string alive across the call.
                    assert_eq!(unsafe { OpenPerformanceData(linkage.as_mut_ptr()) }, 0);
                    let query = if t % 2 == 0 { "Global" } else { "260" };
                    // SAFETY: the export honours the pointer contract (checked by the host).
                    let r =
                        unsafe { host.call_extern(CollectPerformanceData, Some(query), 1 << 16) }
                            .expect("no host violation");
                    // SAFETY: no pointers.
                    assert_eq!(unsafe { ClosePerformanceData() }, 0);
                    if r.num_object_types > 0 {
                        let objects: Vec<_> = validate::objects(&r.data, 0, Expect::Data)
                            .map(Result::unwrap)
                            .collect();
                        for o in objects
                            .iter()
                            .filter(|o| o.header().object_name_title_index == 260)
                        {
                            for (name, values) in v1_instances(o) {
                                // Bytes Total only ever holds k·0x0101…: all eight bytes equal.
                                let b = values[1].to_le_bytes();
                                assert!(b.iter().all(|x| *x == b[0]), "torn {name}: {b:?}");
                            }
                        }
                        replies.fetch_add(1, Ordering::Relaxed);
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        s.spawn(|| {
            let mut round = 0u32;
            while round < 200 || done.load(Ordering::Relaxed) < 8 {
                let name: Vec<u8> = format!("churn {}", round % 3)
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes)
                    .collect();
                let mut out = [0u8; 4];
                if device_control(IOCTL_PCW_CREATE_QUEUE, &name, &mut out).status == 0 {
                    let mut record = Vec::new();
                    record.extend_from_slice(&out);
                    record.extend_from_slice(&7u32.to_le_bytes());
                    record.extend_from_slice(&1u64.to_le_bytes());
                    record.extend_from_slice(&0x0101_0101_0101_0101u64.to_le_bytes());
                    assert_eq!(
                        device_control(IOCTL_PCW_RECORD_QUEUE, &record, &mut []).status,
                        0
                    );
                    assert_eq!(
                        device_control(IOCTL_PCW_CLOSE_QUEUE, &out, &mut []).status,
                        0
                    );
                }
                round += 1;
            }
            round
        })
        .join()
        .unwrap()
    });
    set_host_ioctl(None);
    let replies = replies.load(Ordering::Relaxed);
    assert_eq!(replies, 8 * rounds, "every reply carried data");
    eprintln!(
        "stress: roundtrip: {replies} Open/Collect/Close rounds by 8 threads during {churned} \
         churn rounds"
    );
    lifecycle::unload();
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
}
