// SPDX-License-Identifier: MIT OR Apache-2.0
//! The example driver that gained counters (`examples/checksum-driver`), executed: its
//! cross-built `checksum_driver.sys` (or the WDK flavour) mapped by the loader, its `DriverEntry`
//! run, its own IOCTLs sent through the loader's I/O manager, its counterset collected through
//! pcw-sim's consumer with every kind of filter, and its `DriverUnload` checked for leftovers.
//!
//! The image is the one `PCW_EXAMPLE_IMAGE` names (the test command sets it after each build).
//! Without it the scenarios are skipped with a note; set to a missing file, they fail. Nothing
//! here comes from the example's source: the device name, IOCTL codes and counter ids are
//! written from its documentation, and the expected checksums come from the crc32fast and
//! adler2 crates.

use pcw_loader::driver::{IRP_MJ_CLOSE, IRP_MJ_CREATE, IRP_MJ_DEVICE_CONTROL};
use pcw_loader::isolate::{image_scenario, start, stop};
use pcw_loader::{LoadedDriver, ntos};
use pcw_sim::kernel_pcw::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Kernel, PCW_ANY_INSTANCE_ID, Request,
};

/// The counterset, its instances (id order) and counter ids, as `checksum_driver.man` has them.
const SET: &str = "Checksum Driver Algorithms";
const INSTANCES: [&str; 2] = ["CRC32", "Adler32"];
const REQUESTS: u16 = 1;
const BYTES: u16 = 2;
const BYTES_PER_SEC: u16 = 3;
const REJECTED: u16 = 4;

const DEVICE: &str = r"\Device\PcwRsChecksum";
const LINK: &str = r"\DosDevices\PcwRsChecksum";
/// `CTL_CODE(FILE_DEVICE_UNKNOWN, 0x900 / 0x901, METHOD_BUFFERED, FILE_ANY_ACCESS)`.
const IOCTL_CRC32: u32 = 0x0022_2400;
const IOCTL_ADLER32: u32 = 0x0022_2404;

/// `ERROR_INSUFFICIENT_BUFFER`, `ERROR_INVALID_FUNCTION`.
const ERROR_INSUFFICIENT_BUFFER: u32 = 122;
const ERROR_INVALID_FUNCTION: u32 = 1;

/// Runs `body` with the image `PCW_EXAMPLE_IMAGE` names in a child process named after the test.
fn scenario(name: &str, body: impl FnOnce(Vec<u8>)) {
    image_scenario("PCW_EXAMPLE_IMAGE", name, body);
}

/// Deterministic pseudo-random bytes.
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[3]
        })
        .collect()
}

/// What each algorithm's instance should show after a sequence of requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Expected {
    requests: u64,
    bytes: u64,
    rejected: u64,
}

/// Sends a request and checks its answer against the reference implementation; returns what
/// it adds to the counters.
fn checksum(driver: &LoadedDriver, code: u32, input: &[u8], out_len: usize, e: &mut Expected) {
    let r = driver.ioctl(code, input, out_len);
    if out_len < 4 {
        assert_eq!(
            (r.ok, r.win32_error, r.output.len()),
            (false, ERROR_INSUFFICIENT_BUFFER, 0),
            "{code:#x} with a {out_len}-byte output: {r}"
        );
        e.rejected += 1;
        return;
    }
    let want = match code {
        IOCTL_CRC32 => crc32fast::hash(input),
        _ => adler2::adler32_slice(input),
    };
    assert!(r.ok, "{code:#x} with {} input bytes: {r}", input.len());
    assert_eq!(r.information, 4);
    assert_eq!(
        r.output,
        want.to_le_bytes(),
        "{code:#x} over {} bytes",
        input.len()
    );
    e.requests += 1;
    e.bytes += input.len() as u64;
}

/// Requests of every shape through the image: lengths 0..300 and a few large ones, outputs of
/// 0..8 bytes; returns the counts per algorithm.
fn traffic(driver: &LoadedDriver) -> [Expected; 2] {
    let mut expected = [Expected::default(); 2];
    for (i, code) in [IOCTL_CRC32, IOCTL_ADLER32].into_iter().enumerate() {
        let e = &mut expected[i];
        for len in (0..300).chain([4096, 5552, 5553, 65_536]) {
            let input = bytes(len, len as u64 * 31 + i as u64);
            checksum(driver, code, &input, 4, e);
        }
        for out_len in 0..8 {
            checksum(driver, code, b"123456789", out_len, e);
        }
    }
    // Not the driver's: refused by it, counted nowhere.
    for code in [0x0022_2408, 0x0022_2401, 0, u32::MAX] {
        let r = driver.ioctl(code, b"abc", 4);
        assert_eq!(
            (r.ok, r.win32_error, r.output.len()),
            (false, ERROR_INVALID_FUNCTION, 0),
            "{code:#x}: {r}"
        );
    }
    expected
}

#[test]
fn example_loads_registers_and_unloads_leaving_nothing() {
    scenario(
        "example_loads_registers_and_unloads_leaving_nothing",
        |bytes| {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = start(&bytes);
            assert_eq!(kernel.countersets(), [SET]);
            assert_eq!(
                kernel.registration_info(SET).map(|(v, _)| v),
                Some(0x200),
                "registered as PCW_VERSION_2"
            );
            let ids: Vec<u16> = kernel
                .descriptors(SET)
                .unwrap()
                .iter()
                .map(|d| d.id)
                .collect();
            assert_eq!(ids, [REQUESTS, BYTES, BYTES_PER_SEC, REJECTED]);
            let shimmed = ntos::shimmed();
            for import in driver.image().imports() {
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
            let c = kernel.collect(SET, &Request::default()).unwrap();
            let names: Vec<&str> = c.instances.iter().map(|i| i.name.as_str()).collect();
            assert_eq!(names, INSTANCES);
            assert!(
                c.instances
                    .iter()
                    .all(|i| i.values.values().all(|&v| v == 0)),
                "{c:?}"
            );
            assert!(driver.send(IRP_MJ_CLOSE).ok);
            let imports = driver.image().imports().len();
            stop(&driver, kernel);
            println!("figure: {imports} imports bound, all to shims");
        },
    );
}

#[test]
fn example_falls_back_to_pcw_version_1_on_older_builds() {
    scenario(
        "example_falls_back_to_pcw_version_1_on_older_builds",
        |bytes| {
            let kernel = Kernel::boot(BUILD_SERVER_2019);
            let driver = start(&bytes);
            assert_eq!(kernel.registration_info(SET).map(|(v, _)| v), Some(0x100));
            stop(&driver, kernel);
        },
    );
}

#[test]
fn example_driver_entry_rolls_back_at_every_failing_call() {
    scenario(
        "example_driver_entry_rolls_back_at_every_failing_call",
        |bytes| {
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
            }
            assert_eq!(
                injected,
                ["PcwRegister", "IoCreateDevice", "IoCreateSymbolicLink"]
            );
            println!("figure: DriverEntry failed at each of {injected:?} and rolled back");
        },
    );
}

/// Every counter value of an instance as the manifest defines it, from what was sent.
fn values(e: Expected) -> Vec<(u16, u64)> {
    vec![
        (REQUESTS, e.requests),
        (BYTES, e.bytes),
        (BYTES_PER_SEC, e.bytes),
        (REJECTED, e.rejected),
    ]
}

#[test]
fn example_ioctls_answer_and_counters_count_them() {
    scenario("example_ioctls_answer_and_counters_count_them", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        let expected = traffic(&driver);
        let c = kernel.collect(SET, &Request::default()).unwrap();
        assert!(c.unfiltered.is_empty() && c.missing.is_empty(), "{c:?}");
        assert_eq!(c.instances.len(), 2);
        for (i, instance) in c.instances.iter().enumerate() {
            assert_eq!(
                (instance.name.as_str(), instance.id),
                (INSTANCES[i], u32::try_from(i).unwrap())
            );
            let got: Vec<(u16, u64)> = instance.values.iter().map(|(&k, &v)| (k, v)).collect();
            assert_eq!(got, values(expected[i]), "{}", instance.name);
        }
        stop(&driver, kernel);
        println!(
            "figure: {} checksum requests through the image, counted exactly",
            expected
                .iter()
                .map(|e| e.requests + e.rejected)
                .sum::<u64>()
        );
    });
}

/// Every request shape a consumer can send.
fn requests() -> Vec<Request> {
    let mut out = vec![Request::default()];
    for mask in [
        "CRC32", "crc32", "ADLER*", "*32", "?d*", "*r*", "x*", "", "*", "CRC3", "CRC32?",
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
    for id in [0, 1, 2, 7, 0xFFFF_FFFE, PCW_ANY_INSTANCE_ID] {
        out.push(Request {
            instance_id: id,
            ..Request::default()
        });
        out.push(Request {
            instance_id: id,
            instance_mask: Some("a*".to_owned()),
            ..Request::default()
        });
    }
    for counter_mask in [0, 1 << REQUESTS, (1 << BYTES) | (1 << REJECTED), u64::MAX] {
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
fn example_counters_honour_every_filter() {
    scenario("example_counters_honour_every_filter", |bytes| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = start(&bytes);
        let expected = traffic(&driver);
        let mut checked = 0;
        for request in requests() {
            let want: Vec<(String, u32)> = (0u32..)
                .zip(INSTANCES)
                .filter(|&(id, name)| {
                    let units: Vec<u16> = name.encode_utf16().collect();
                    request.selects(&units, id)
                })
                .map(|(id, name)| (name.to_owned(), id))
                .collect();
            let c = kernel.collect(SET, &request).unwrap();
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
                let all = values(expected[instance.id as usize]);
                let selected: Vec<(u16, u64)> = all
                    .into_iter()
                    .filter(|(id, _)| request.counter_mask & (1 << id) != 0)
                    .collect();
                let got: Vec<(u16, u64)> = instance.values.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(got, selected, "{request:?} {}", instance.name);
            }
            let listed = kernel.enumerate(SET, &request).unwrap();
            assert_eq!(listed, want, "enumerate {request:?}");
            checked += 1;
        }
        // A cancelled query: no instance is required, none may be wrong.
        let c = kernel
            .collect(
                SET,
                &Request {
                    cancelled: true,
                    ..Request::default()
                },
            )
            .unwrap();
        assert!(c.unfiltered.is_empty(), "{c:?}");
        stop(&driver, kernel);
        println!("figure: {checked} filter shapes collected and enumerated through the image");
    });
}

/// The example image needs no base relocations (all its code is RIP-relative), so it has no
/// relocation directory and loads anywhere. With `IMAGE_FILE_RELOCS_STRIPPED` set in its header it
/// may only run at its preferred base: the loader maps it exactly there, where it runs as
/// anywhere else — and refuses it by name when that address is taken.
#[test]
fn example_relocations_stripped_in_the_header_runs_at_its_preferred_base() {
    scenario(
        "example_relocations_stripped_in_the_header_runs_at_its_preferred_base",
        |mut bytes| {
            let lfanew = u32::from_le_bytes(bytes[0x3C..0x40].try_into().unwrap()) as usize;
            // FileHeader.Characteristics: after "PE\0\0" (4), Machine … SizeOfOptionalHeader (18).
            let at = lfanew + 4 + 18;
            let characteristics = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            bytes[at..at + 2].copy_from_slice(&(characteristics | 0x0001).to_le_bytes());
            // OptionalHeader.ImageBase (PE32+): 24 bytes into the optional header.
            let optional = lfanew + 24;
            let preferred =
                u64::from_le_bytes(bytes[optional + 24..optional + 32].try_into().unwrap());

            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = start(&bytes);
            assert_eq!(
                driver.image().base() as u64,
                preferred,
                "mapped at ImageBase"
            );
            let c = kernel.collect(SET, &Request::default()).unwrap();
            assert_eq!(c.instances.len(), INSTANCES.len());
            stop(&driver, kernel);
            drop(driver);

            // The same address taken: refused, naming it.
            // SAFETY: an anonymous mapping at the address the image just released.
            let taken = unsafe {
                libc::mmap(
                    preferred as *mut libc::c_void,
                    0x1000,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            assert_eq!(taken as u64, preferred);
            let e = LoadedDriver::load(&bytes).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "relocations stripped: the image can only run at {preferred:#x}, which is \
                     in use in this process"
                )
            );
        },
    );
}
