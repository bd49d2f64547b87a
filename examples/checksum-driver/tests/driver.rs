// SPDX-License-Identifier: MIT OR Apache-2.0
//! The example driver, executed through pcw-harness's public API: its host build (the kernel
//! side compiled for this host) and, when `PCW_EXAMPLE_IMAGE` names one, its cross-built
//! `checksum_driver.sys` (or the WDK flavour) in a child process. Each test runs its body on
//! both: `DriverEntry`, the IOCTLs through the I/O manager, the counterset collected with every
//! kind of filter and sampled as typeperf samples it, `DriverEntry` failing at each fallible
//! kernel call, and `DriverUnload` leaving nothing behind.
//!
//! The device, IOCTL codes and counter ids are the driver's own constants; the expected
//! checksums come from the crc32fast and adler2 crates, not from the driver.

use std::time::Duration;

use checksum_driver::control::{
    DEVICE_NAME, IOCTL_CHECKSUM_ADLER32, IOCTL_CHECKSUM_CRC32, SYMBOLIC_LINK,
};
use checksum_driver::counters::generated::checksum_driver::checksum_algorithms::ids;
use pcw_harness::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Counters, Driver, Kernel, Loaded, PCW_ANY_INSTANCE_ID,
    Request, fault_sweep, scenario,
};

/// The counterset and its instances (id order), as `checksum_driver.man` and the driver have
/// them.
const SET: &str = "Checksum Driver Algorithms";
const INSTANCES: [&str; 2] = ["CRC32", "Adler32"];
const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/checksum_driver.man");
/// The environment variable naming the cross-built image.
const IMAGE: &str = "PCW_EXAMPLE_IMAGE";

/// `ERROR_INSUFFICIENT_BUFFER`, `ERROR_INVALID_FUNCTION`.
const ERROR_INSUFFICIENT_BUFFER: u32 = 122;
const ERROR_INVALID_FUNCTION: u32 = 1;

/// The host build.
fn host() -> Driver {
    Driver::host(checksum_driver::kernel::driver_entry)
}

/// Runs `body` on the host build, then on the image `PCW_EXAMPLE_IMAGE` names (in a child).
fn on_both(test: &str, body: impl Fn(&Driver)) {
    scenario(test, &host(), IMAGE, body);
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

/// Sends a request and checks its answer against the reference implementation; adds it to `e`.
fn checksum(driver: &Loaded, code: u32, input: &[u8], out_len: usize, e: &mut Expected) {
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
        IOCTL_CHECKSUM_CRC32 => crc32fast::hash(input),
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

/// Requests of every shape: lengths 0..300 and a few large ones, outputs of 0..8 bytes, and
/// codes that are not the driver's; returns the counts per algorithm.
fn traffic(driver: &Loaded) -> [Expected; 2] {
    let mut expected = [Expected::default(); 2];
    for (i, code) in [IOCTL_CHECKSUM_CRC32, IOCTL_CHECKSUM_ADLER32]
        .into_iter()
        .enumerate()
    {
        let e = &mut expected[i];
        for len in (0..300).chain([4096, 5552, 5553, 65_536]) {
            let input = bytes(len, len as u64 * 31 + i as u64);
            checksum(driver, code, &input, 4, e);
        }
        for out_len in 0..8 {
            checksum(driver, code, b"123456789", out_len, e);
        }
    }
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

/// Every counter value of an instance as the manifest defines it, from what was sent.
fn values(e: Expected) -> Vec<(u16, u64)> {
    vec![
        (ids::REQUESTS, e.requests),
        (ids::BYTES, e.bytes),
        (ids::BYTES_PER_SEC, e.bytes),
        (ids::REJECTED, e.rejected),
    ]
}

#[test]
fn loads_registers_and_unloads_leaving_nothing() {
    on_both("loads_registers_and_unloads_leaving_nothing", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
        assert_eq!(kernel.countersets(), [SET]);
        assert_eq!(
            kernel.registration_info(SET).map(|(v, _)| v),
            Some(0x200),
            "registered as PCW_VERSION_2"
        );
        let registered: Vec<u16> = kernel
            .descriptors(SET)
            .unwrap()
            .iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(
            registered,
            [ids::REQUESTS, ids::BYTES, ids::BYTES_PER_SEC, ids::REJECTED]
        );
        assert_eq!(driver.devices(), [DEVICE_NAME]);
        assert_eq!(
            driver.links().get(&SYMBOLIC_LINK.to_ascii_lowercase()),
            Some(&DEVICE_NAME.to_owned())
        );
        assert!(driver.create().ok);
        let c = kernel.collect(SET, &Request::default()).unwrap();
        let names: Vec<&str> = c.instances.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, INSTANCES);
        assert!(
            c.instances
                .iter()
                .all(|i| i.values.values().all(|&v| v == 0)),
            "{c:?}"
        );
        assert!(driver.close().ok);
        driver.unload(kernel).unwrap();
    });
}

#[test]
fn falls_back_to_pcw_version_1_on_older_builds() {
    on_both("falls_back_to_pcw_version_1_on_older_builds", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2019);
        let driver = build.start().unwrap();
        assert_eq!(kernel.registration_info(SET).map(|(v, _)| v), Some(0x100));
        driver.unload(kernel).unwrap();
    });
}

#[test]
fn driver_entry_rolls_back_at_every_failing_call() {
    on_both("driver_entry_rolls_back_at_every_failing_call", |build| {
        let faults = fault_sweep(build, BUILD_SERVER_2022).unwrap();
        let routines: Vec<&str> = faults.iter().map(|f| f.routine.as_str()).collect();
        assert_eq!(
            routines,
            ["PcwRegister", "IoCreateDevice", "IoCreateSymbolicLink"],
            "{}",
            build.describe()
        );
        assert!(faults.iter().all(|f| f.status < 0), "{faults:?}");
    });
}

#[test]
fn ioctls_answer_and_counters_count_them() {
    on_both("ioctls_answer_and_counters_count_them", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
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
        driver.unload(kernel).unwrap();
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
    for counter_mask in [
        0,
        1 << ids::REQUESTS,
        (1 << ids::BYTES) | (1 << ids::REJECTED),
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
fn counters_honour_every_filter() {
    on_both("counters_honour_every_filter", |build| {
        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = build.start().unwrap();
        let expected = traffic(&driver);
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
                let selected: Vec<(u16, u64)> = values(expected[instance.id as usize])
                    .into_iter()
                    .filter(|(id, _)| request.counter_mask & (1 << id) != 0)
                    .collect();
                let got: Vec<(u16, u64)> = instance.values.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(got, selected, "{request:?} {}", instance.name);
            }
            assert_eq!(
                kernel.enumerate(SET, &request).unwrap(),
                want,
                "enumerate {request:?}"
            );
        }
        // A cancelled query: no instance is required, none may be wrong.
        let cancelled = Request {
            cancelled: true,
            ..Request::default()
        };
        let c = kernel.collect(SET, &cancelled).unwrap();
        assert!(c.unfiltered.is_empty(), "{c:?}");
        driver.unload(kernel).unwrap();
    });
}

#[test]
fn typeperf_samples_the_counters_the_requests_moved() {
    on_both(
        "typeperf_samples_the_counters_the_requests_moved",
        |build| {
            let kernel = Kernel::boot(BUILD_SERVER_2022);
            let driver = build.start().unwrap();
            let counters = Counters::from_manifest(&kernel, MANIFEST).unwrap();
            // 1000 bytes to CRC-32 before each 2-second sample, none to Adler-32.
            let samples = counters
                .typeperf_with(
                    &[r"\Checksum Driver Algorithms(*)\*"],
                    3,
                    Duration::from_secs(2),
                    |_| {
                        let r = driver.ioctl(IOCTL_CHECKSUM_CRC32, &[7; 1000], 4);
                        assert!(r.ok, "{r}");
                    },
                )
                .unwrap();
            assert_eq!(samples.columns.len(), 8, "{:?}", samples.columns);
            assert_eq!(
                samples.cooked(r"\Checksum Driver Algorithms(CRC32)\Bytes/sec"),
                [Some(500.0); 3]
            );
            assert_eq!(
                samples.cooked(r"\Checksum Driver Algorithms(CRC32)\Requests"),
                [Some(1.0), Some(2.0), Some(3.0)]
            );
            assert_eq!(
                samples.cooked(r"\Checksum Driver Algorithms(Adler32)\Bytes/sec"),
                [Some(0.0); 3]
            );
            let raw = samples.raw(r"\Checksum Driver Algorithms(CRC32)\Bytes/sec");
            assert_eq!(raw[2].map(|r| r.first), Some(3000));
            assert!(
                samples
                    .csv()
                    .contains(r#""\\PCW-SIM\Checksum Driver Algorithms(CRC32)\Requests""#)
            );
            let (listed, warnings) = counters.list_instances(None).unwrap();
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(listed.len(), 8);
            assert_eq!(listed[0], r"\Checksum Driver Algorithms(CRC32)\Requests");
            assert_eq!(
                counters.list(Some("checksum driver algorithms")).unwrap()[0],
                r"\Checksum Driver Algorithms(*)\Requests"
            );
            driver.unload(kernel).unwrap();
        },
    );
}

/// The example image needs no base relocations (all its code is RIP-relative), so it has no
/// relocation directory and loads anywhere. With `IMAGE_FILE_RELOCS_STRIPPED` set in its header it
/// may only run at its preferred base: the loader maps it exactly there, where it runs as
/// anywhere else — and refuses it by name when that address is taken.
#[test]
fn an_image_whose_relocations_were_stripped_runs_at_its_preferred_base() {
    let test = "an_image_whose_relocations_were_stripped_runs_at_its_preferred_base";
    let Some(image) = Driver::image_from_env(IMAGE).unwrap() else {
        return;
    };
    pcw_harness::isolate::isolated(test, || {
        let mut bytes = image.image_bytes().unwrap().to_vec();
        let lfanew = u32::from_le_bytes(bytes[0x3C..0x40].try_into().unwrap()) as usize;
        // FileHeader.Characteristics: after "PE\0\0" (4), Machine … SizeOfOptionalHeader (18).
        let at = lfanew + 4 + 18;
        let characteristics = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        bytes[at..at + 2].copy_from_slice(&(characteristics | 0x0001).to_le_bytes());
        // OptionalHeader.ImageBase (PE32+): 24 bytes into the optional header.
        let optional = lfanew + 24;
        let preferred = u64::from_le_bytes(bytes[optional + 24..optional + 32].try_into().unwrap());
        let stripped = Driver::image(bytes);

        let kernel = Kernel::boot(BUILD_SERVER_2022);
        let driver = stripped.start().unwrap();
        assert_eq!(
            driver.image_base(),
            usize::try_from(preferred).ok(),
            "mapped at ImageBase"
        );
        let c = kernel.collect(SET, &Request::default()).unwrap();
        assert_eq!(c.instances.len(), INSTANCES.len());
        driver.unload(kernel).unwrap();

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
        let e = stripped.load().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the image: relocations stripped: the image can only run at {preferred:#x}, which \
                 is in use in this process"
            )
        );
    });
}
