// SPDX-License-Identifier: MIT OR Apache-2.0
//! The shipped driver image, executed: `pcw_driver.sys` as cross-built for
//! `x86_64-pc-windows-msvc`, mapped by the loader with its `ntoskrnl.exe` imports bound to the
//! loader's kernel routines over pcw-sim. Each scenario runs in a child process, so a fault in
//! the image fails the test with the signal's name instead of killing the test runner.
//!
//! The image is the one `PCW_DRIVER_IMAGE` names (the test command sets it to
//! `target/windows/pcw_driver.sys` right after the cross-build). Without it the scenarios are
//! skipped with a note; set to a missing file, they fail.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pcw_core::snapshot::{HEADER_LEN, Snapshot, required_len};
use pcw_core::v1::validate::{self, Expect};
use pcw_driver::control::{
    self, DEVICE_NAME, DEVICE_SDDL, IOCTL_PCW_CLOSE_QUEUE, IOCTL_PCW_CREATE_QUEUE,
    IOCTL_PCW_RECORD_QUEUE, IOCTL_PCW_SNAPSHOT, SYMBOLIC_LINK,
};
use pcw_loader::driver::{IRP_MJ_CLOSE, IRP_MJ_CREATE, IRP_MJ_DEVICE_CONTROL};
use pcw_loader::isolate::{
    ScenarioFailure, image_from_env, image_scenario, run_child, start, stop,
};
use pcw_loader::{IoResult, LoadError, LoadedDriver, ntos, security};
use pcw_perfdll::source::{IoctlReply, set_host_ioctl};
use pcw_sim::kernel_pcw::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Kernel, PCW_ANY_INSTANCE_ID, Request,
};
use pcw_sim::v1_host::{Host, HostConfig};

const SETS: [&str; 3] = [
    "Geometric Waves",
    "PCW Provider Statistics",
    "PCW Dynamic Queues",
];

/// Runs `body` with the image `PCW_DRIVER_IMAGE` names in a child process named after the test.
fn scenario(name: &str, body: impl FnOnce(Vec<u8>)) {
    image_scenario("PCW_DRIVER_IMAGE", name, body);
}

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn record_input(id: u32, depth: u32, packets: u64, bytes: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(24);
    v.extend_from_slice(&id.to_le_bytes());
    v.extend_from_slice(&depth.to_le_bytes());
    v.extend_from_slice(&packets.to_le_bytes());
    v.extend_from_slice(&bytes.to_le_bytes());
    v
}

/// The IOCTL's name, for messages.
fn ioctl_name(code: u32) -> String {
    match code {
        IOCTL_PCW_SNAPSHOT => "IOCTL_PCW_SNAPSHOT".into(),
        IOCTL_PCW_CREATE_QUEUE => "IOCTL_PCW_CREATE_QUEUE".into(),
        IOCTL_PCW_CLOSE_QUEUE => "IOCTL_PCW_CLOSE_QUEUE".into(),
        IOCTL_PCW_RECORD_QUEUE => "IOCTL_PCW_RECORD_QUEUE".into(),
        other => format!("IOCTL {other:#010X}"),
    }
}

/// An IOCTL that must succeed; the failure names it.
fn must(driver: &LoadedDriver, code: u32, input: &[u8], out_len: usize) -> IoResult {
    let r = driver.ioctl(code, input, out_len);
    assert!(r.ok, "{} failed through the image: {r}", ioctl_name(code));
    r
}

#[test]
fn load_run_unload_leaves_nothing() {
    scenario("load_run_unload_leaves_nothing", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        assert_eq!(kernel.countersets(), SETS);
        for set in SETS {
            assert_eq!(
                kernel.registration_info(set).map(|(v, _)| v),
                Some(0x200),
                "{set} registered as PCW_VERSION_2"
            );
        }
        let image = driver.image().expect("an image");
        let imports = image.imports().len();
        let shimmed = ntos::shimmed();
        for import in image.imports() {
            assert!(
                shimmed.iter().any(|s| s.eq_ignore_ascii_case(import)),
                "{import} is bound but not a shim"
            );
        }
        // The control device, its link, and the DACL it declares.
        {
            let (devices, links) = ntos::objects();
            assert_eq!(devices.len(), 1);
            assert_eq!(devices[0].name, DEVICE_NAME);
            assert_eq!(
                links.get(&SYMBOLIC_LINK.to_ascii_lowercase()),
                Some(&DEVICE_NAME.to_owned())
            );
            assert_eq!(
                devices[0].dacl.as_ref(),
                Some(&security::parse_sddl(DEVICE_SDDL).unwrap()),
                "the device's DACL is DEVICE_SDDL"
            );
        }
        for major in [IRP_MJ_CREATE, IRP_MJ_CLOSE, IRP_MJ_DEVICE_CONTROL] {
            assert!(driver.handles(major), "no routine for major {major:#x}");
        }
        assert!(driver.send(IRP_MJ_CREATE).ok);
        let waves = kernel
            .collect("Geometric Waves", &Request::default())
            .unwrap();
        assert_eq!(waves.instances.len(), 3);
        assert!(driver.send(IRP_MJ_CLOSE).ok);
        stop(&driver, kernel);
        println!("figure: {imports} imports bound, all to shims");
    });
}

#[test]
fn falls_back_to_pcw_version_1_on_older_builds() {
    scenario("falls_back_to_pcw_version_1_on_older_builds", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2019);
        let driver = start(&bytes);
        for set in SETS {
            assert_eq!(kernel.registration_info(set).map(|(v, _)| v), Some(0x100));
        }
        stop(&driver, kernel);
    });
}

#[test]
fn driver_entry_rolls_back_at_every_failing_call() {
    scenario("driver_entry_rolls_back_at_every_failing_call", |bytes| {
        let mut injected = Vec::new();
        for n in 0.. {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = LoadedDriver::load(&bytes).unwrap();
            ntos::fail_at(Some(n));
            let status = driver.entry();
            let Some(routine) = ntos::failed() else {
                // Every fallible call of DriverEntry has been failed once: this run succeeds.
                assert_eq!(status, 0);
                stop(&driver, kernel);
                break;
            };
            injected.push(routine);
            if status >= 0 {
                // A failure DriverEntry absorbs (none today) must still unload cleanly.
                stop(&driver, kernel);
                continue;
            }
            assert!(
                driver.unload_routine() == 0,
                "a failed DriverEntry left DriverUnload set"
            );
            let leaks = ntos::leaks();
            assert!(
                leaks.is_empty(),
                "DriverEntry failed at call {n} ({routine}) with {status:#x} and left {leaks:?}"
            );
            assert!(ntos::violations().is_empty(), "{:#?}", ntos::violations());
            let teardown = kernel.teardown();
            assert!(teardown.is_clean(), "fault at {routine}: {teardown:?}");
        }
        assert!(injected.len() >= 6, "{injected:?}");
        println!(
            "figure: {} faults injected into DriverEntry, one per fallible call: {injected:?}",
            injected.len()
        );
    });
}

/// Every request shape a consumer can send, for one counterset.
fn requests() -> Vec<Request> {
    let mut out = vec![Request::default()];
    for mask in [
        "*Wave",
        "?mall*",
        "LARGE WAVE",
        "m*e",
        "*a*a*a*a*b",
        "queue ?",
        "",
        "*",
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
    for id in [0, 1, 2, 3, 7, 0xFFFF_FFF0, PCW_ANY_INSTANCE_ID] {
        out.push(Request {
            instance_id: id,
            ..Request::default()
        });
    }
    for counter_mask in [0, 1, 2, 0b1010, u64::MAX >> 1] {
        out.push(Request {
            counter_mask,
            ..Request::default()
        });
    }
    out.push(Request {
        collect_multiple: false,
        ..Request::default()
    });
    out.push(Request {
        cancelled: true,
        ..Request::default()
    });
    out
}

/// The same sequence of IOCTLs and collections, as text, whoever answers.
/// An IOCTL as (code, input, output length) → (status, bytes back).
type Ioctl<'a> = &'a dyn Fn(u32, &[u8], usize) -> (i32, Vec<u8>);

fn observe(kernel: &Kernel, ioctl: Ioctl<'_>) -> Vec<String> {
    let mut seen = Vec::new();
    let mut ids = Vec::new();
    for name in ["queue a", "Queue B", "queue c"] {
        let (status, out) = ioctl(IOCTL_PCW_CREATE_QUEUE, &utf16le(name), 4);
        seen.push(format!("create {name}: {status:#x} {out:?}"));
        ids.push(u32::from_le_bytes(out.try_into().unwrap()));
    }
    let (status, _) = ioctl(
        IOCTL_PCW_RECORD_QUEUE,
        &record_input(ids[0], 5, 100, 6400),
        0,
    );
    seen.push(format!("record: {status:#x}"));
    let (status, _) = ioctl(IOCTL_PCW_CLOSE_QUEUE, &ids[2].to_le_bytes(), 0);
    seen.push(format!("close: {status:#x}"));
    for step in 0..3 {
        kernel.advance(7_500_000);
        // In the middle step a consumer watches the statistics, which the driver keeps only
        // then: its counting and timing run, in the image as in the host build.
        if step == 1 {
            kernel.notify(SETS[1], true, u64::MAX).unwrap();
        }
        for set in SETS {
            for (i, request) in requests().iter().enumerate() {
                let c = kernel.collect(set, request).unwrap();
                seen.push(format!("{step} {set} collect #{i}: {c:?}"));
                let e = kernel.enumerate(set, request).unwrap();
                seen.push(format!("{step} {set} enumerate #{i}: {e:?}"));
            }
            for add in [true, false] {
                kernel.notify(set, add, 0b11).unwrap();
            }
        }
        if step == 1 {
            let c = kernel.collect(SETS[1], &Request::default()).unwrap();
            let v = &c.instances[0].values;
            assert!(
                v[&0] > 0 && v[&1] > 0 && v[&3] > 0,
                "collections counted and timed while watched: {v:?}"
            );
            kernel.notify(SETS[1], false, u64::MAX).unwrap();
        }
    }
    for id in &ids[..2] {
        ioctl(IOCTL_PCW_CLOSE_QUEUE, &id.to_le_bytes(), 0);
    }
    seen
}

#[test]
fn callbacks_answer_as_the_host_build_does() {
    scenario("callbacks_answer_as_the_host_build_does", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        let image = observe(&kernel, &|code, input, out_len| {
            let r = driver.ioctl(code, input, out_len);
            (r.status, r.output)
        });
        stop(&driver, kernel);

        let kernel = Kernel::boot(BUILD_SERVER_2022);
        pcw_driver::lifecycle::load().unwrap();
        let host = observe(&kernel, &|code, input, out_len| {
            let mut out = vec![0u8; out_len];
            let c = control::device_control(code, input, &mut out);
            out.truncate(c.information);
            (c.status, out)
        });
        pcw_driver::lifecycle::unload();
        assert!(kernel.teardown().is_clean());

        assert_eq!(image.len(), host.len());
        for (a, b) in image.iter().zip(&host) {
            assert_eq!(a, b, "the image and the host build disagree");
        }
        println!(
            "figure: {} collections/enumerations/IOCTLs equal between image and host build",
            image.len()
        );
    });
}

/// A deterministic sweep of codes near the driver's, input lengths 0..64 with random fill, and
/// random output lengths.
fn sweep() -> Vec<(u32, Vec<u8>, usize)> {
    let mut out = Vec::new();
    // A deterministic sweep of codes near ours, lengths 0..64 and random fill.
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for code in [
        IOCTL_PCW_SNAPSHOT,
        IOCTL_PCW_CREATE_QUEUE,
        IOCTL_PCW_CLOSE_QUEUE,
        IOCTL_PCW_RECORD_QUEUE,
        0x0022_200C,
    ] {
        for len in 0..64usize {
            let input: Vec<u8> = (0..len).map(|_| (next() & 0xFF) as u8).collect();
            out.push((code, input, (next() % 80) as usize));
        }
    }
    out
}

/// Every IOCTL input class, through the image and through the host build's dispatch logic:
/// the same status and the same bytes back, and the I/O manager's rules held.
#[test]
fn ioctls_with_every_kind_of_input() {
    scenario("ioctls_with_every_kind_of_input", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);

        // Valid requests.
        let created = must(&driver, IOCTL_PCW_CREATE_QUEUE, &utf16le("rx 0"), 4);
        let id = u32::from_le_bytes(created.output.clone().try_into().unwrap());
        must(
            &driver,
            IOCTL_PCW_RECORD_QUEUE,
            &record_input(id, 3, 10, 640),
            0,
        );
        let queues = kernel
            .collect("PCW Dynamic Queues", &Request::default())
            .unwrap();
        assert_eq!(queues.instances.len(), 1);
        assert_eq!(queues.instances[0].name, "rx 0");

        // Short, oversized, odd, misaligned-length and hostile inputs.
        let mut cases: Vec<(u32, Vec<u8>, usize)> = vec![
            (IOCTL_PCW_CREATE_QUEUE, utf16le("no room"), 3),
            (IOCTL_PCW_CREATE_QUEUE, utf16le("no room"), 0),
            (IOCTL_PCW_CREATE_QUEUE, Vec::new(), 4),
            (IOCTL_PCW_CREATE_QUEUE, vec![b'a'], 4),
            (IOCTL_PCW_CREATE_QUEUE, vec![b'a', 0, 0], 4),
            (IOCTL_PCW_CREATE_QUEUE, vec![0, 0, b'a', 0], 4),
            (IOCTL_PCW_CREATE_QUEUE, [b'a', 0].repeat(1023), 4),
            (IOCTL_PCW_CREATE_QUEUE, [b'a', 0].repeat(1024), 4),
            (IOCTL_PCW_CREATE_QUEUE, vec![0xFF; 4096], 4),
            (IOCTL_PCW_CREATE_QUEUE, utf16le("rx 0"), 4),
            (IOCTL_PCW_CLOSE_QUEUE, vec![1, 2, 3], 0),
            (IOCTL_PCW_CLOSE_QUEUE, vec![0; 5], 0),
            (
                IOCTL_PCW_CLOSE_QUEUE,
                0xDEAD_BEEF_u32.to_le_bytes().to_vec(),
                0,
            ),
            (
                IOCTL_PCW_RECORD_QUEUE,
                record_input(id, 1, 1, 1)[..23].to_vec(),
                0,
            ),
            (
                IOCTL_PCW_RECORD_QUEUE,
                [record_input(id, 1, 1, 1), vec![0]].concat(),
                0,
            ),
            (IOCTL_PCW_RECORD_QUEUE, record_input(0x7777, 1, 1, 1), 0),
            (
                IOCTL_PCW_RECORD_QUEUE,
                record_input(id, u32::MAX, u64::MAX, u64::MAX),
                64,
            ),
            (IOCTL_PCW_SNAPSHOT, vec![0], 4096),
            (IOCTL_PCW_SNAPSHOT, Vec::new(), 0),
            (0x0022_2000, Vec::new(), 16),
            (0x0022_0000 | (0x800 << 2) | 1, Vec::new(), 4096),
            (u32::MAX, vec![0xAA; 64], 64),
        ];
        cases.extend(sweep());
        pcw_driver::lifecycle::load().unwrap();
        // The host build must see the same queue state: give it the same first queue.
        let mut out = [0u8; 4];
        let host_created =
            control::device_control(IOCTL_PCW_CREATE_QUEUE, &utf16le("rx 0"), &mut out);
        assert_eq!(host_created.status, 0);
        for (code, input, out_len) in &cases {
            let r: IoResult = driver.ioctl(*code, input, *out_len);
            let mut out = vec![0u8; *out_len];
            let c = control::device_control(*code, input, &mut out);
            assert_eq!(
                r.status,
                c.status,
                "code {code:#x}, {} input bytes, {out_len} output bytes",
                input.len()
            );
            if *code != IOCTL_PCW_SNAPSHOT {
                let host_bytes = if c.status >= 0 || c.status.cast_unsigned() >> 30 == 2 {
                    &out[..c.information]
                } else {
                    &[][..]
                };
                assert_eq!(r.output, host_bytes, "code {code:#x}");
            }
            assert!(r.information <= *out_len || !r.ok);
        }
        pcw_driver::queues::close_all();
        pcw_driver::lifecycle::unload();
        must(&driver, IOCTL_PCW_CLOSE_QUEUE, &id.to_le_bytes(), 0);
        println!(
            "figure: {} IOCTL inputs through the image, answered as the host build answers",
            cases.len()
        );
        stop(&driver, kernel);
    });
}

#[test]
fn snapshot_buffers_of_every_size() {
    scenario("snapshot_buffers_of_every_size", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        let created = must(&driver, IOCTL_PCW_CREATE_QUEUE, &utf16le("rx 0"), 4);
        let id = u32::from_le_bytes(created.output.try_into().unwrap());
        // A snapshot at every buffer size: what a DeviceIoControl caller sees.
        let full = must(&driver, IOCTL_PCW_SNAPSHOT, &[], 1 << 16);
        let needed = full.information;
        Snapshot::parse(&full.output).expect("the image's snapshot parses");
        for size in 0..needed + 24 {
            let r = driver.ioctl(IOCTL_PCW_SNAPSHOT, &[], size);
            if size < HEADER_LEN {
                assert_eq!(
                    (r.ok, r.win32_error, r.output.len()),
                    (false, 122, 0),
                    "{size}"
                );
            } else if size < needed {
                assert_eq!((r.ok, r.win32_error), (false, 234), "size {size}: {r:?}");
                assert_eq!(r.output.len(), HEADER_LEN);
                assert_eq!(required_len(&r.output), Ok(needed));
                assert_eq!(
                    IoctlReply::from_win32(r.ok, r.win32_error, &r.output),
                    IoctlReply::TooSmall(needed),
                    "the V1 DLL reads the size it needs"
                );
            } else {
                assert!(r.ok && r.output.len() == needed, "size {size}: {r:?}");
            }
        }

        println!(
            "figure: {} snapshot buffer sizes through the image",
            needed + 24
        );
        must(&driver, IOCTL_PCW_CLOSE_QUEUE, &id.to_le_bytes(), 0);
        stop(&driver, kernel);
    });
}

#[test]
fn eight_collectors_while_queues_churn_through_ioctls() {
    scenario(
        "eight_collectors_while_queues_churn_through_ioctls",
        |bytes| {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = start(&bytes);
            let running = AtomicBool::new(true);
            let collections = AtomicUsize::new(0);
            let rounds = 40 * pcw_sim::stress_scale();
            std::thread::scope(|s| {
                let churners: Vec<_> = (0..2)
                    .map(|t| {
                        let (driver, running) = (&driver, &running);
                        s.spawn(move || {
                            let mut n = 0u32;
                            while running.load(Ordering::Relaxed) && n < 2000 {
                                let name = format!("churn {t} {}", n % 7);
                                let r = driver.ioctl(IOCTL_PCW_CREATE_QUEUE, &utf16le(&name), 4);
                                if r.ok {
                                    let id = u32::from_le_bytes(r.output.try_into().unwrap());
                                    let rec = record_input(id, n, u64::from(n), u64::from(n) * 64);
                                    must(driver, IOCTL_PCW_RECORD_QUEUE, &rec, 0);
                                    let snap = driver.ioctl(IOCTL_PCW_SNAPSHOT, &[], 1 << 16);
                                    Snapshot::parse(&snap.output).unwrap();
                                    assert!(
                                        driver
                                            .ioctl(IOCTL_PCW_CLOSE_QUEUE, &id.to_le_bytes(), 0)
                                            .ok
                                    );
                                }
                                n += 1;
                            }
                        })
                    })
                    .collect();
                let collectors: Vec<_> = (0..8)
                    .map(|_| {
                        let (kernel, collections) = (&kernel, &collections);
                        s.spawn(move || {
                            for _ in 0..rounds {
                                for set in SETS {
                                    let c = kernel.collect(set, &Request::default()).unwrap();
                                    assert!(c.unfiltered.is_empty() && c.missing.is_empty());
                                    collections.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        })
                    })
                    .collect();
                for c in collectors {
                    c.join().unwrap();
                }
                running.store(false, Ordering::Relaxed);
                for c in churners {
                    c.join().unwrap();
                }
            });
            println!(
                "figure: {} collections by 8 threads while 2 threads churned queues",
                collections.load(Ordering::Relaxed)
            );
            stop(&driver, kernel);
        },
    );
}

#[test]
fn image_snapshot_through_the_v1_dll_passes_perflib_checks() {
    scenario(
        "image_snapshot_through_the_v1_dll_passes_perflib_checks",
        |bytes| {
            use pcw_perfdll::{ClosePerformanceData, CollectPerformanceData, OpenPerformanceData};

            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = Arc::new(start(&bytes));
            kernel.advance(33_000_000);
            for name in ["Queue One", "Queue Two"] {
                must(&driver, IOCTL_PCW_CREATE_QUEUE, &utf16le(name), 4);
            }
            let calls = Arc::new(AtomicUsize::new(0));
            {
                let (driver, calls) = (Arc::clone(&driver), Arc::clone(&calls));
                set_host_ioctl(Some(Arc::new(move |out: &mut [u8]| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    out.fill(0xA5);
                    let r = driver.ioctl(IOCTL_PCW_SNAPSHOT, &[], out.len());
                    out[..r.output.len()].copy_from_slice(&r.output);
                    IoctlReply::from_win32(r.ok, r.win32_error, &out[..r.output.len()])
                })));
            }
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
            let r = unsafe { host.call_extern(CollectPerformanceData, Some("Global"), 1 << 16) }
                .expect("the DLL's reply passes the host's test-level-1 checks");
            // SAFETY: no pointers.
            assert_eq!(unsafe { ClosePerformanceData() }, 0);
            set_host_ioctl(None);
            assert!(
                calls.load(Ordering::Relaxed) >= 1,
                "the DLL asked the image"
            );
            validate::validate_objects(&r.data, 3, Expect::Data).unwrap();
            let objects: Vec<_> = validate::objects(&r.data, 0, Expect::Data)
                .map(Result::unwrap)
                .collect();
            let names: Vec<usize> = objects.iter().map(|o| o.instances().count()).collect();
            assert_eq!(names, [3, 1, 2], "waves, statistics (_Total), queues");
            let driver = Arc::into_inner(driver).unwrap();
            stop(&driver, kernel);
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Bad images and faults: clear failures, never a crash of the test binary.

#[test]
fn a_corrupted_header_is_a_named_error() {
    let Some(mut bytes) = image_from_env("PCW_DRIVER_IMAGE") else {
        return;
    };
    let lfanew = u32::from_le_bytes(bytes[0x3C..0x40].try_into().unwrap()) as usize;
    let original = bytes.clone();
    bytes[lfanew] = b'X'; // "PE\0\0" → "XE\0\0"
    let e = LoadedDriver::load(&bytes).unwrap_err();
    assert!(matches!(e, LoadError::BadHeader(_)), "{e}");
    assert!(e.to_string().starts_with("bad header"), "{e}");

    let mut bytes = original.clone();
    bytes[0x3C..0x40].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = LoadedDriver::load(&bytes).unwrap_err();
    assert!(e.to_string().starts_with("bad header"), "{e}");

    // SectionAlignment (optional header + 32) below a page.
    let mut bytes = original.clone();
    let at = lfanew + 24 + 32;
    bytes[at..at + 4].copy_from_slice(&0x200u32.to_le_bytes());
    let e = LoadedDriver::load(&bytes).unwrap_err();
    assert!(matches!(e, LoadError::SectionAlignment(0x200)), "{e}");

    // The second section's VirtualAddress moved one page into the first (the code, which is
    // several pages long).
    let mut bytes = original;
    let optional_len = usize::from(u16::from_le_bytes([bytes[lfanew + 20], bytes[lfanew + 21]]));
    let table = lfanew + 24 + optional_len;
    let first_va = u32::from_le_bytes(bytes[table + 12..table + 16].try_into().unwrap());
    bytes[table + 40 + 12..table + 40 + 16].copy_from_slice(&(first_va + 0x1000).to_le_bytes());
    let e = LoadedDriver::load(&bytes).unwrap_err();
    assert!(matches!(e, LoadError::SectionOverlap(..)), "{e}");
    assert!(e.to_string().contains("section overlap"), "{e}");

    for junk in [&b""[..], b"MZ", &[0u8; 4096][..]] {
        let e = LoadedDriver::load(junk).unwrap_err();
        assert!(e.to_string().starts_with("bad header"), "{e}");
    }
}

#[test]
fn an_unknown_import_is_named() {
    let Some(mut bytes) = image_from_env("PCW_DRIVER_IMAGE") else {
        return;
    };
    let name = b"KeReadStateEvent\0";
    let at = bytes
        .windows(name.len())
        .position(|w| w == name)
        .expect("the image imports KeReadStateEvent by name");
    bytes[at + name.len() - 2] = b'X';
    let e = LoadedDriver::load(&bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsupported import ntoskrnl.exe!KeReadStateEvenX"
    );
    // The failed load left the process free to load again.
    drop(LoadedDriver::load(&image_from_env("PCW_DRIVER_IMAGE").unwrap()).unwrap());
}

/// Run only as the child of `a_faulting_callback_fails_the_scenario_not_the_runner`.
#[test]
#[ignore = "a deliberately crashing child; run by a_faulting_callback_fails_the_scenario_not_the_runner"]
fn faulting_callback_child() {
    if !pcw_loader::isolate::is_child("faulting_callback_child") {
        return;
    }
    let bytes = image_from_env("PCW_DRIVER_IMAGE").unwrap();
    let kernel = Kernel::boot(BUILD_SERVER_2022);
    let driver = start(&bytes);
    let callback = ntos::callbacks()[0];
    let image = driver.image().expect("an image");
    // SAFETY: no thread runs the callback while it is patched; `ud2` makes it fault.
    unsafe { image.patch(callback, &[0x0F, 0x0B]) };
    let _ = kernel.collect(SETS[0], &Request::default());
    unreachable!("the patched callback returned");
}

#[test]
fn a_faulting_callback_fails_the_scenario_not_the_runner() {
    if image_from_env("PCW_DRIVER_IMAGE").is_none() {
        return;
    }
    // The loader stops the child and names the fault and its place; the runner goes on.
    match run_child("faulting_callback_child") {
        Err(ScenarioFailure::Stopped {
            scenario, reason, ..
        }) => {
            assert_eq!(scenario, "faulting_callback_child");
            assert!(
                reason.starts_with("`ud2` at image+0x") && reason.ends_with("invalid opcode"),
                "{reason}"
            );
            // The image (MSVC, LTO) has no symbol table: no routine is named after the one
            // export below the callback.
            assert!(!reason.contains("DriverEntry+"), "{reason}");
        }
        other => panic!("expected the loader to stop the child, got {other:?}"),
    }
}
