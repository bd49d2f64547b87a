// SPDX-License-Identifier: MIT OR Apache-2.0
//! A counters driver written in C, executed: `examples/c-driver/c_driver.c` built with
//! mingw-w64 (`scripts/c-driver.sh`), mapped by the loader, its `DriverEntry` run, its queues
//! recorded through its IOCTL, its two countersets collected through pcw-sim's consumer with
//! every kind of filter, its `DriverEntry` failed at each fallible call, and its `DriverUnload`
//! checked for leftovers — the scenarios the Rust drivers run.
//!
//! The image is the one `PCW_C_DRIVER_IMAGE` names: `target/windows/c_driver.sys`, or its
//! variant `c_driver_cr8.sys`, which reads and writes CR8 itself and is linked without
//! relocations (the test command runs this file once for each). Without it the scenarios are
//! skipped with a note; set to a missing file, they fail. Counter ids come from the driver's
//! manifest, read with pcw-gen; the expected values from what the tests send.

use std::sync::atomic::{AtomicUsize, Ordering};

use pcw_loader::driver::{IRP_MJ_CLOSE, IRP_MJ_CREATE, IRP_MJ_DEVICE_CONTROL, REGISTRY_PATH};
use pcw_loader::isolate::{image_scenario, start, stop};
use pcw_loader::{LoadedDriver, ntos};
use pcw_sim::kernel_pcw::{
    BOOT_SYSTEM_TIME, BUILD_SERVER_2019, BUILD_SERVER_2022, Kernel, PCW_ANY_INSTANCE_ID, Request,
};

const QUEUES: &str = "C Driver Queues";
const GLOBAL: &str = "C Driver Global";
/// The queues: name and id, in the order the driver adds them.
const INSTANCES: [(&str, u32); 4] = [("rx 0", 10), ("rx 1", 11), ("tx 0", 20), ("Tx Large 1", 21)];
const PACKETS: u16 = 1;
const BYTES: u16 = 2;
const BYTES_PER_SEC: u16 = 3;
const DEPTH: u16 = 4;

const DEVICE: &str = r"\Device\PcwRsCDriver";
const LINK: &str = r"\DosDevices\PcwRsCDriver";
/// `CTL_CODE(FILE_DEVICE_UNKNOWN, 0x910, METHOD_BUFFERED, FILE_ANY_ACCESS)`.
const IOCTL_RECORD: u32 = 0x0022_2440;

fn scenario(name: &str, body: impl FnOnce(Vec<u8>)) {
    image_scenario("PCW_C_DRIVER_IMAGE", name, body);
}

/// The counter ids of `set` in the driver's manifest.
fn manifest_ids(set: &str) -> Vec<u16> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/c-driver/c_driver.man");
    let bytes = std::fs::read(&path).unwrap();
    let analysis = pcw_gen::analyze(&pcw_gen::Input::new(&path, &bytes));
    let manifest = analysis.manifest.expect("the C driver's manifest is valid");
    manifest
        .provider
        .countersets
        .iter()
        .find(|s| s.name == set)
        .unwrap_or_else(|| panic!("{set} is in the manifest"))
        .counters
        .iter()
        .map(|c| c.id)
        .collect()
}

/// What a queue holds: packets, bytes and depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Queue {
    packets: u64,
    bytes: u64,
    depth: u32,
}

/// The queues as the driver starts them: bytes above 2^32.
fn initial() -> [Queue; 4] {
    core::array::from_fn(|i| Queue {
        packets: 0,
        bytes: ((i as u64 + 1) << 32) + 7 * i as u64,
        depth: 3 * u32::try_from(i).unwrap(),
    })
}

/// A queue's counter values, as the manifest defines them.
fn values(q: Queue) -> Vec<(u16, u64)> {
    vec![
        (PACKETS, q.packets),
        (BYTES, q.bytes),
        (BYTES_PER_SEC, q.bytes),
        (DEPTH, u64::from(q.depth)),
    ]
}

fn record(queue: u32, depth: u32, packets: u64, bytes: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(24);
    v.extend_from_slice(&queue.to_le_bytes());
    v.extend_from_slice(&depth.to_le_bytes());
    v.extend_from_slice(&packets.to_le_bytes());
    v.extend_from_slice(&bytes.to_le_bytes());
    v
}

/// Records traffic through the image and in `expected`.
fn send(
    driver: &LoadedDriver,
    expected: &mut [Queue; 4],
    queue: u32,
    depth: u32,
    packets: u64,
    bytes: u64,
) {
    let r = driver.ioctl(IOCTL_RECORD, &record(queue, depth, packets, bytes), 0);
    assert!(r.ok, "record on queue {queue}: {r}");
    let q = &mut expected[queue as usize];
    q.packets += packets;
    q.bytes += bytes;
    q.depth = depth;
}

/// Whether the image's header says its relocations were stripped, and its `ImageBase`.
fn stripped_base(bytes: &[u8]) -> Option<u64> {
    let lfanew = u32::from_le_bytes(bytes[0x3C..0x40].try_into().unwrap()) as usize;
    let characteristics = u16::from_le_bytes([bytes[lfanew + 22], bytes[lfanew + 23]]);
    let optional = lfanew + 24;
    (characteristics & 1 != 0)
        .then(|| u64::from_le_bytes(bytes[optional + 24..optional + 32].try_into().unwrap()))
}

/// What the driver printed from load to unload, formatted as the kernel formats it; returns
/// the number of lines.
fn check_debug_log(load_time: u64) -> usize {
    // What the driver printed, formatted as the kernel formats it.
    let log: Vec<String> = ntos::debug_log().into_iter().map(|l| l.text).collect();
    let first = format!("c_driver: loading from {REGISTRY_PATH} at IRQL 0, thread ");
    assert!(log[0].starts_with(&first), "{log:#?}");
    let thread = log[0][first.len()..].trim_end();
    assert!(
        thread.len() == 16 && u64::from_str_radix(thread, 16).is_ok_and(|t| t != 0),
        "KeGetCurrentThread as %p: {thread}"
    );
    let queues: Vec<String> = INSTANCES
        .iter()
        .zip(initial())
        .map(|((name, id), q)| format!("c_driver: queue {name} id {id} bytes {}\n", q.bytes))
        .collect();
    assert_eq!(log[1..5], queues);
    assert_eq!(
        log[5],
        format!("c_driver: loaded at {load_time} with 4 queues\n")
    );
    assert_eq!(log[6], "c_driver: unloading after 1 collections\n");
    assert_eq!(log.len(), 7, "{log:#?}");
    log.len()
}

#[test]
fn c_driver_loads_registers_and_unloads_leaving_nothing() {
    scenario(
        "c_driver_loads_registers_and_unloads_leaving_nothing",
        |bytes| {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            kernel.advance(12_345_678);
            let driver = start(&bytes);
            if let Some(base) = stripped_base(&bytes) {
                assert_eq!(
                    driver.image().expect("an image").base() as u64,
                    base,
                    "mapped at its ImageBase"
                );
            }
            assert_eq!(kernel.countersets(), [QUEUES, GLOBAL]);
            for set in [QUEUES, GLOBAL] {
                assert_eq!(
                    kernel.registration_info(set).map(|(v, _)| v),
                    Some(0x200),
                    "{set}"
                );
                let ids: Vec<u16> = kernel
                    .descriptors(set)
                    .unwrap()
                    .iter()
                    .map(|d| d.id)
                    .collect();
                assert_eq!(
                    ids,
                    manifest_ids(set),
                    "{set}: the image registers the manifest's ids"
                );
            }
            let shimmed = ntos::shimmed();
            for import in driver.image().expect("an image").imports() {
                assert!(
                    shimmed.iter().any(|s| s.eq_ignore_ascii_case(import)),
                    "{import} is bound but not a shim"
                );
            }
            let (devices, links) = ntos::objects();
            assert_eq!(devices.len(), 1);
            assert_eq!(devices[0].name, DEVICE);
            assert_eq!(
                links.get(&LINK.to_ascii_lowercase()),
                Some(&DEVICE.to_owned())
            );
            for major in [IRP_MJ_CREATE, IRP_MJ_CLOSE, IRP_MJ_DEVICE_CONTROL] {
                assert!(driver.handles(major), "no routine for major {major:#x}");
            }
            assert!(driver.send(IRP_MJ_CREATE).ok);

            let c = kernel.collect(QUEUES, &Request::default()).unwrap();
            assert!(c.unfiltered.is_empty() && c.missing.is_empty(), "{c:?}");
            let got: Vec<(&str, u32)> = c
                .instances
                .iter()
                .map(|i| (i.name.as_str(), i.id))
                .collect();
            assert_eq!(got, INSTANCES);
            for (instance, q) in c.instances.iter().zip(initial()) {
                let got: Vec<(u16, u64)> = instance.values.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(
                    got,
                    values(q),
                    "{}: 64-bit values above 2^32",
                    instance.name
                );
            }
            let g = kernel.collect(GLOBAL, &Request::default()).unwrap();
            assert_eq!(g.instances.len(), 1);
            assert_eq!(g.instances[0].name, "");
            let load_time = BOOT_SYSTEM_TIME.cast_unsigned() + 12_345_678;
            let want: Vec<(u16, u64)> = vec![(1, 4), (2, 1), (3, load_time), (4, 0)];
            let got: Vec<(u16, u64)> = g.instances[0]
                .values
                .iter()
                .map(|(&k, &v)| (k, v))
                .collect();
            assert_eq!(
                got, want,
                "queues, collections, load time (KeQuerySystemTime), load IRQL"
            );
            assert!(driver.send(IRP_MJ_CLOSE).ok);
            // The headers' inline privileged instructions ran, emulated: KeGetCurrentIrql (CR8),
            // KeQuerySystemTime (KUSER_SHARED_DATA), KeGetCurrentThread (gs:); the raw variant
            // also raised and lowered IRQL through CR8 around its spin lock.
            let record = driver.ioctl(IOCTL_RECORD, &record(0, 0, 0, 0), 0);
            assert!(record.ok, "{record}");
            let emulated = ntos::emulated();
            assert!(emulated[0].1 >= 2, "{emulated:?}");
            assert!(emulated[2].1 >= 1 && emulated[3].1 >= 1, "{emulated:?}");
            if stripped_base(&bytes).is_some() {
                assert!(emulated[1].1 >= 4, "{emulated:?}");
            }
            let imports = driver.image().expect("an image").imports().len();
            stop(&driver, kernel);

            let lines = check_debug_log(load_time);
            println!(
                "figure: {imports} imports bound, all to shims; {lines} debug lines; emulated \
                 {emulated:?}"
            );
        },
    );
}

#[test]
fn c_driver_falls_back_to_pcw_version_1_on_older_builds() {
    scenario(
        "c_driver_falls_back_to_pcw_version_1_on_older_builds",
        |bytes| {
            let kernel = Kernel::boot(BUILD_SERVER_2019);
            let driver = start(&bytes);
            for set in [QUEUES, GLOBAL] {
                assert_eq!(
                    kernel.registration_info(set).map(|(v, _)| v),
                    Some(0x100),
                    "{set}"
                );
            }
            stop(&driver, kernel);
        },
    );
}

#[test]
fn c_driver_entry_rolls_back_at_every_failing_call() {
    scenario("c_driver_entry_rolls_back_at_every_failing_call", |bytes| {
        let mut injected = Vec::new();
        for n in 0.. {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = LoadedDriver::load(&bytes).unwrap();
            ntos::fail_at(Some(n));
            let status = driver.entry();
            let Some(routine) = ntos::failed() else {
                assert_eq!(status, 0);
                stop(&driver, kernel);
                break;
            };
            injected.push(routine);
            assert!(status < 0, "DriverEntry absorbed a failing {routine}");
            assert_eq!(
                driver.unload_routine(),
                0,
                "a failed DriverEntry set DriverUnload"
            );
            let leaks = ntos::leaks();
            assert!(leaks.is_empty(), "failing {routine} left {leaks:?}");
            assert!(ntos::violations().is_empty(), "{:#?}", ntos::violations());
            let teardown = kernel.teardown();
            assert!(teardown.is_clean(), "failing {routine}: {teardown:?}");
            // The driver says why, through DbgPrint.
            let log: Vec<String> = ntos::debug_log().into_iter().map(|l| l.text).collect();
            let why = if routine == "ExAllocatePoolWithTag" {
                "c_driver: no memory for 384 bytes\n".to_owned()
            } else {
                format!(
                    "c_driver: DriverEntry fails with {:#x}\n",
                    status.cast_unsigned()
                )
            };
            assert_eq!(log.last(), Some(&why), "{log:#?}");
            if routine == "PcwRegister" {
                let set = if injected.len() == 2 { QUEUES } else { GLOBAL };
                let line = format!("c_driver: PcwRegister({set}) failed with 0xc000009a\n");
                assert!(log.contains(&line), "{log:#?}");
            }
            drop(driver);
        }
        assert_eq!(
            injected,
            [
                "ExAllocatePoolWithTag",
                "PcwRegister",
                "PcwRegister",
                "PcwCreateInstance",
                "IoCreateDevice",
                "IoCreateSymbolicLink"
            ]
        );
        println!("figure: DriverEntry failed at each of {injected:?} and rolled back");
    });
}

#[test]
fn c_driver_records_traffic_and_refuses_bad_requests() {
    scenario(
        "c_driver_records_traffic_and_refuses_bad_requests",
        |bytes| {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = start(&bytes);
            let mut expected = initial();
            for round in 0..50u64 {
                for queue in 0..4u32 {
                    send(
                        &driver,
                        &mut expected,
                        queue,
                        queue + 1,
                        round + 1,
                        (round << 33) + 1500,
                    );
                }
            }
            for (input, out, status) in [
                (record(4, 0, 1, 1), 0, 0xC000_000D_u32), // no such queue
                (record(0, 0, 1, 1)[..23].to_vec(), 0, 0xC000_0004), // STATUS_INFO_LENGTH_MISMATCH
                (Vec::new(), 16, 0xC000_0004),
            ] {
                let r = driver.ioctl(IOCTL_RECORD, &input, out);
                assert_eq!(
                    (r.ok, r.status.cast_unsigned(), r.output.len()),
                    (false, status, 0),
                    "{r}"
                );
            }
            let r = driver.ioctl(IOCTL_RECORD + 4, &record(0, 0, 1, 1), 0);
            assert_eq!(
                r.status.cast_unsigned(),
                0xC000_0010,
                "STATUS_INVALID_DEVICE_REQUEST"
            );
            let c = kernel.collect(QUEUES, &Request::default()).unwrap();
            for (instance, q) in c.instances.iter().zip(expected) {
                let got: Vec<(u16, u64)> = instance.values.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(got, values(q), "{}", instance.name);
            }
            stop(&driver, kernel);
        },
    );
}

/// Every request shape a consumer can send.
fn requests() -> Vec<Request> {
    let mut out = vec![Request::default()];
    for mask in [
        "rx 0", "RX 1", "rx*", "*1", "?x ?", "t*", "*large*", "*a*e*", "x*", "", "*", "rx",
        "rx 0?", "?", "**",
    ] {
        out.push(Request {
            instance_mask: Some(mask.to_owned()),
            ..Request::default()
        });
    }
    out.push(Request {
        instance_mask: None,
        ..Request::default()
    });
    for id in [10, 11, 20, 21, 0, 7, 0xFFFF_FFFE, PCW_ANY_INSTANCE_ID] {
        out.push(Request {
            instance_id: id,
            ..Request::default()
        });
        out.push(Request {
            instance_id: id,
            instance_mask: Some("t*".to_owned()),
            ..Request::default()
        });
    }
    for counter_mask in [
        0,
        1 << PACKETS,
        (1 << BYTES) | (1 << DEPTH),
        1 << BYTES_PER_SEC,
        u64::MAX,
    ] {
        out.push(Request {
            counter_mask,
            ..Request::default()
        });
    }
    out.push(Request {
        collect_multiple: false,
        ..Request::default()
    });
    out
}

#[test]
fn c_driver_counters_honour_every_filter() {
    scenario("c_driver_counters_honour_every_filter", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        let mut expected = initial();
        send(&driver, &mut expected, 2, 9, 1000, 1 << 40);
        let mut checked = 0;
        for request in requests() {
            let want: Vec<(String, u32)> = INSTANCES
                .iter()
                .filter(|(name, id)| {
                    let units: Vec<u16> = name.encode_utf16().collect();
                    request.selects(&units, *id)
                })
                .map(|(name, id)| ((*name).to_owned(), *id))
                .collect();
            let c = kernel.collect(QUEUES, &request).unwrap();
            assert!(
                c.unfiltered.is_empty(),
                "{request:?}: the callback added instances the request excludes: {:?}",
                c.unfiltered
            );
            assert!(
                c.missing.is_empty(),
                "{request:?}: left out {:?}",
                c.missing
            );
            let got: Vec<(String, u32)> =
                c.instances.iter().map(|i| (i.name.clone(), i.id)).collect();
            assert_eq!(got, want, "{request:?}");
            for instance in &c.instances {
                let index = INSTANCES
                    .iter()
                    .position(|(_, id)| *id == instance.id)
                    .unwrap();
                let selected: Vec<(u16, u64)> = values(expected[index])
                    .into_iter()
                    .filter(|(id, _)| request.counter_mask & (1 << id) != 0)
                    .collect();
                let got: Vec<(u16, u64)> = instance.values.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(got, selected, "{request:?} {}", instance.name);
            }
            let listed = kernel.enumerate(QUEUES, &request).unwrap();
            assert_eq!(listed, want, "enumerate {request:?}");
            checked += 1;
        }
        // A cancelled query: the callback stops; nothing it added may be wrong.
        let c = kernel
            .collect(
                QUEUES,
                &Request {
                    cancelled: true,
                    ..Request::default()
                },
            )
            .unwrap();
        assert!(c.unfiltered.is_empty(), "{c:?}");
        stop(&driver, kernel);
        println!("figure: {checked} filter shapes collected and enumerated through the C image");
    });
}

#[test]
fn c_driver_collectors_and_recorders_in_parallel() {
    scenario("c_driver_collectors_and_recorders_in_parallel", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        let collections = AtomicUsize::new(0);
        let rounds = 200 * pcw_sim::stress_scale();
        std::thread::scope(|s| {
            for t in 0..2u32 {
                let driver = &driver;
                s.spawn(move || {
                    for _ in 0..rounds {
                        for queue in [t, t + 2] {
                            let r = driver.ioctl(IOCTL_RECORD, &record(queue, 1, 1, 1 << 32), 0);
                            assert!(r.ok, "{r}");
                        }
                    }
                });
            }
            for _ in 0..4 {
                let (kernel, collections) = (&kernel, &collections);
                s.spawn(move || {
                    for _ in 0..rounds / 4 {
                        let c = kernel.collect(QUEUES, &Request::default()).unwrap();
                        assert_eq!(c.instances.len(), 4);
                        assert!(c.unfiltered.is_empty() && c.missing.is_empty());
                        collections.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        let c = kernel.collect(QUEUES, &Request::default()).unwrap();
        for (instance, q) in c.instances.iter().zip(initial()) {
            let rounds = u64::try_from(rounds).unwrap();
            assert_eq!(instance.values[&PACKETS], rounds, "{}", instance.name);
            assert_eq!(
                instance.values[&BYTES],
                q.bytes + (rounds << 32),
                "{}",
                instance.name
            );
        }
        let g = kernel.collect(GLOBAL, &Request::default()).unwrap();
        let n = collections.load(Ordering::Relaxed) + 1;
        assert_eq!(
            g.instances[0].values[&2],
            u64::try_from(n).unwrap(),
            "collections counted"
        );
        stop(&driver, kernel);
        println!(
            "figure: {n} collections by 4 threads while 2 threads recorded through the C image"
        );
    });
}
