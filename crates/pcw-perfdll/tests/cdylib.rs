// SPDX-License-Identifier: MIT OR Apache-2.0
//! The built cdylib itself, loaded with `libloading` and called through its C exports under
//! pcw-sim's Perflib host (guard regions, test level 1, and the stricter "buffer untouched
//! when no data" check): the V1 shim's acceptance on the synthetic source.

mod common;

use std::ffi::c_void;

use common::{Dll, FIRST_COUNTER, FIRST_HELP, OBJECTS, indexes, raw_collect, strs, synthetic};
use pcw_core::v1::collect::{ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::validate::{self, Expect};
use pcw_sim::stress_scale;
use pcw_sim::v1_host::{Host, HostConfig};

fn strict_host() -> Host {
    Host::new(HostConfig {
        check_untouched_on_failure: true,
        ..HostConfig::default()
    })
}

/// Every query form of `docs/v1-queries.md` with the objects it must select.
fn queries() -> Vec<(Option<&'static str>, Vec<u32>, Expect)> {
    let all = OBJECTS.to_vec();
    let none = Vec::new();
    let d = Expect::Data;
    vec![
        (Some("Global"), all.clone(), d),
        (Some("global"), all.clone(), d),
        (Some("OLD_Global"), all.clone(), d),
        (Some(""), all.clone(), d),
        (Some(" \t "), all.clone(), d),
        (Some("Costly"), none.clone(), d),
        (Some("MetadataGlobal"), all.clone(), Expect::Metadata),
        (Some("OLD_MetadataGlobal"), all.clone(), Expect::Metadata),
        (Some("MetadataCostly"), none.clone(), d),
        (Some("Foreigh"), none.clone(), d),
        (Some("Foreign server 238"), none.clone(), d),
        (Some("Counter 9"), none.clone(), d),
        (Some("Counter 009"), none.clone(), d),
        (Some("Help 9"), none.clone(), d),
        (Some("238"), vec![238], d),
        (Some("244"), vec![244], d),
        (Some("260"), vec![260], d),
        (Some("238 244 260"), all.clone(), d),
        (Some("260 238"), vec![238, 260], d),
        (Some("2380"), none.clone(), d),
        (Some("23"), none.clone(), d),
        (Some("2440 26"), none.clone(), d),
        (Some("0238"), vec![238], d),
        (Some("000260"), vec![260], d),
        (Some("\t238\t260\t"), vec![238, 260], d),
        (Some("238x 244"), vec![244], d),
        (Some("99999999999 260"), vec![260], d),
        (Some("2 4 6 8 240"), none.clone(), d),
        (None, none, d),
    ]
}

#[test]
fn every_query_at_every_buffer_size() {
    let dll = Dll::load("every-query");
    assert_eq!(dll.open_with(Some(&strs(&synthetic(30_000_000)))), 0);
    let host = strict_host();
    for (query, expected, expect) in queries() {
        // SAFETY: the export honours the pointer contract (what this test checks).
        let full = unsafe { host.call_extern(dll.collect, query, 1 << 20) }
            .unwrap_or_else(|v| panic!("{query:?}: {v}"));
        assert_eq!(full.status, ERROR_SUCCESS, "{query:?}");
        let needed = full.data.len();
        if expected.is_empty() {
            assert_eq!((needed, full.num_object_types), (0, 0), "{query:?}");
        } else {
            assert_eq!(
                indexes(&full.data, full.num_object_types, expect),
                expected,
                "{query:?}"
            );
        }
        for size in 0..=needed + 64 {
            let capacity = u32::try_from(size).unwrap();
            // SAFETY: as above.
            let r = unsafe { host.call_extern(dll.collect, query, capacity) }
                .unwrap_or_else(|v| panic!("{query:?} at {size} bytes: {v}"));
            if size < needed {
                assert_eq!(r.status, ERROR_MORE_DATA, "{query:?} at {size}");
                assert!(r.data.is_empty());
            } else {
                assert_eq!(r.status, ERROR_SUCCESS, "{query:?} at {size}");
                assert_eq!(r.data.len(), needed, "{query:?} at {size}");
                if needed > 0 {
                    assert_eq!(
                        indexes(&r.data, r.num_object_types, expect),
                        expected,
                        "{query:?} at {size}"
                    );
                }
            }
        }
    }
    assert_eq!(dll.close(), 0);
}

/// The generated lodctr `.h` (what `lodctr` assigns indexes from).
fn symbol_offsets() -> Vec<(String, u32)> {
    let h = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/pcw_driver.h")).unwrap();
    h.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| {
            let mut it = l.split_whitespace();
            (
                it.next().unwrap().to_owned(),
                it.next().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn indexes_come_from_the_symbol_file_and_values_from_the_clock() {
    let dll = Dll::load("values");
    // 3 s into the period.
    assert_eq!(dll.open_with(Some(&strs(&synthetic(30_000_000)))), 0);
    let host = strict_host();
    // SAFETY: see `every_query_at_every_buffer_size`.
    let r = unsafe { host.call_extern(dll.collect, Some("Global"), 1 << 16) }.unwrap();
    validate::validate_objects(&r.data, 3, Expect::Data).unwrap();
    let objects: Vec<_> = validate::objects(&r.data, 0, Expect::Data)
        .map(Result::unwrap)
        .collect();

    // Every object and non-base counter has First Counter + its `.h` offset, in `.h` order;
    // help indexes are First Help + the same offset; base counters have 0.
    let offsets = symbol_offsets();
    let mut seen = Vec::new();
    for o in &objects {
        let h = o.header();
        assert_eq!(h.object_help_title_index, h.object_name_title_index + 1);
        seen.push(h.object_name_title_index);
        for c in o.counters() {
            if c.counter_type.is_base() {
                assert_eq!(
                    (c.counter_name_title_index, c.counter_help_title_index),
                    (0, 0)
                );
            } else {
                assert_eq!(
                    c.counter_help_title_index - FIRST_HELP,
                    c.counter_name_title_index - FIRST_COUNTER
                );
                seen.push(c.counter_name_title_index);
            }
        }
    }
    let expected: Vec<u32> = offsets.iter().map(|(_, o)| FIRST_COUNTER + o).collect();
    assert_eq!(seen, expected, "{offsets:?}");

    let values = |o: &validate::ObjectRef<'_>| -> Vec<(String, Vec<u64>)> {
        let counters: Vec<_> = o.counters().collect();
        o.instances()
            .map(|i| {
                let name = String::from_utf16(&i.name_utf16().collect::<Vec<_>>()).unwrap();
                (name, counters.iter().map(|c| i.value(c).unwrap()).collect())
            })
            .collect()
    };
    let wave = |n: &str, v: [u64; 2]| (n.to_owned(), v.to_vec());
    assert_eq!(
        values(&objects[0]),
        [
            wave("Small Wave", [48, 60]),
            wave("Medium Wave", [46, 70]),
            wave("Large Wave", [44, 80])
        ]
    );
    assert_eq!(
        values(&objects[1]),
        [(
            String::new(),
            vec![1, 3, 1000, 1, 0, 3, 30_000_000, 30_000_000, 10_000_000]
        )]
    );
    // PERF_ELAPSED_TIME reads the object's PerfTime/PerfFreq: the `Now`/`Frequency` counters.
    assert_eq!(
        (objects[1].header().perf_time, objects[1].header().perf_freq),
        (30_000_000, 10_000_000)
    );
    assert_eq!(
        values(&objects[2]),
        [
            ("Queue A".to_owned(), vec![300, 153_600, 3]),
            ("Queue B".to_owned(), vec![600, 307_200, 4])
        ]
    );
    assert_eq!(dll.close(), 0);
}

#[test]
fn open_is_reference_counted_and_close_releases() {
    let dll = Dll::load("refcount");
    let host = strict_host();
    let global = |dll: &Dll| {
        // SAFETY: see `every_query_at_every_buffer_size`.
        let r = unsafe { host.call_extern(dll.collect, Some("Global"), 1 << 16) }.unwrap();
        r.num_object_types
    };
    assert_eq!(global(&dll), 0, "no data before Open");
    let linkage = synthetic(0);
    for _ in 0..3 {
        assert_eq!(dll.open_with(Some(&strs(&linkage))), 0);
    }
    // Later Opens count but do not reconfigure.
    assert_eq!(dll.open_with(Some(&["source=device"])), 0);
    assert_eq!(global(&dll), 3);
    for _ in 0..3 {
        assert_eq!(dll.close(), 0);
        assert_eq!(global(&dll), 3, "still open");
    }
    assert_eq!(dll.close(), 0);
    assert_eq!(global(&dll), 0, "released by the last Close");
    assert_eq!(dll.close(), 0, "an unbalanced Close is harmless");
    // Reopening configures afresh.
    assert_eq!(dll.open_with(Some(&strs(&linkage))), 0);
    assert_eq!(global(&dll), 3);
    assert_eq!(dll.close(), 0);
}

#[test]
fn null_and_bad_arguments_fail_early_without_data() {
    let dll = Dll::load("nulls");
    assert_eq!(dll.open_with(Some(&strs(&synthetic(0)))), 0);
    let mut query: Vec<u16> = "Global\0".encode_utf16().collect();
    let mut buf = vec![0xA5u8; 4096];
    let start: *mut c_void = buf.as_mut_ptr().cast();
    let mut data = start;
    let (mut size, mut count) = (4096u32, 77u32);
    let q = query.as_mut_ptr();
    let null = std::ptr::null_mut::<*mut c_void>();
    let null32 = std::ptr::null_mut::<u32>();
    // NULL lppData / lpcbTotalBytes / lpNumObjectTypes: nothing written but the zeros.
    assert_eq!(
        raw_collect(dll.collect, q, null, &raw mut size, &raw mut count),
        0
    );
    assert_eq!((size, count), (0, 0));
    (size, count) = (4096, 77);
    assert_eq!(
        raw_collect(dll.collect, q, &raw mut data, null32, &raw mut count),
        0
    );
    assert_eq!((data, count), (start, 0));
    assert_eq!(
        raw_collect(dll.collect, q, &raw mut data, &raw mut size, null32),
        0
    );
    assert_eq!((data, size), (start, 0));
    // NULL query: the CollectPerformanceData page's note — fail early, as "not mine".
    (size, count) = (4096, 77);
    assert_eq!(
        raw_collect(
            dll.collect,
            std::ptr::null_mut(),
            &raw mut data,
            &raw mut size,
            &raw mut count
        ),
        0
    );
    assert_eq!((data, size, count), (start, 0, 0));
    // NULL buffer pointer with a size: a buffer of 0 bytes.
    let mut no_buf: *mut c_void = std::ptr::null_mut();
    (size, count) = (4096, 77);
    assert_eq!(
        raw_collect(
            dll.collect,
            q,
            &raw mut no_buf,
            &raw mut size,
            &raw mut count
        ),
        ERROR_MORE_DATA
    );
    assert_eq!((no_buf, size, count), (std::ptr::null_mut(), 0, 0));
    assert!(buf.iter().all(|b| *b == 0xA5));
    // A NULL Open context is allowed (no Linkage\Export): counts as one more Open.
    assert_eq!(dll.open_with(None), 0);
    assert_eq!(dll.close(), 0);
    assert_eq!(dll.close(), 0);
}

#[test]
fn malformed_linkage_fails_open() {
    let dll = Dll::load("bad-linkage");
    assert_eq!(dll.open_with(Some(&["source=pipe"])), 13);
    assert_eq!(dll.open_with(Some(&["first-counter=-4"])), 13);
    // A failed Open does not count: nothing is served.
    // SAFETY: see `every_query_at_every_buffer_size`.
    let r = unsafe { strict_host().call_extern(dll.collect, Some("Global"), 4096) }.unwrap();
    assert_eq!((r.status, r.num_object_types), (ERROR_SUCCESS, 0));
}

fn log_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn recoverable_failures_open_successfully_log_and_serve_nothing() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let host = strict_host();

    // The device source with no driver (no IOCTL on this host): Open succeeds (a failing Open
    // would get the DLL disabled), every Collect retries, answers "not mine", and the failure
    // is logged once.
    let dll = Dll::load("no-device");
    let log = dir.join(format!("no-device-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let linkage = [
        "source=device".to_owned(),
        format!("first-counter={FIRST_COUNTER}"),
        format!("log-file={}", log.display()),
    ];
    assert_eq!(dll.open_with(Some(&strs(&linkage))), 0);
    for _ in 0..3 {
        // SAFETY: see `every_query_at_every_buffer_size`.
        let r = unsafe { host.call_extern(dll.collect, Some("Global"), 4096) }.unwrap();
        assert_eq!((r.status, r.num_object_types, r.data.len()), (0, 0, 0));
    }
    // Queries that cannot be ours do not even reach the source.
    // SAFETY: as above.
    let r = unsafe { host.call_extern(dll.collect, Some("2380"), 4096) }.unwrap();
    assert_eq!(r.num_object_types, 0);
    assert_eq!(
        log_lines(&log),
        ["1002 SourceUnavailable 2 pcw_perfdll: the data source is unavailable; no data served"]
    );
    assert_eq!(dll.close(), 0);

    // No First Counter anywhere: Open succeeds, nothing is served, NoIndexes is logged.
    let dll = Dll::load("no-indexes");
    let log = dir.join(format!("no-indexes-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let linkage = [
        "source=synthetic".to_owned(),
        format!("log-file={}", log.display()),
    ];
    assert_eq!(dll.open_with(Some(&strs(&linkage))), 0);
    // SAFETY: as above.
    let r = unsafe { host.call_extern(dll.collect, Some("Global"), 4096) }.unwrap();
    assert_eq!((r.status, r.num_object_types), (0, 0));
    let lines = log_lines(&log);
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.starts_with("1001 NoIndexes")),
        "{lines:?}"
    );
    assert_eq!(dll.close(), 0);
}

#[test]
fn eight_threads_open_collect_close_concurrently() {
    let dll = Dll::load("threads");
    let linkage = synthetic(0);
    let host = strict_host();
    // SAFETY: see `every_query_at_every_buffer_size`.
    let needed = unsafe {
        assert_eq!(dll.open_with(Some(&strs(&linkage))), 0);
        let r = host
            .call_extern(dll.collect, Some("Global"), 1 << 16)
            .unwrap();
        assert_eq!(dll.close(), 0);
        r.data.len()
    };
    let served = std::sync::atomic::AtomicUsize::new(0);
    let rounds = 150 * stress_scale();
    std::thread::scope(|s| {
        for t in 0..8usize {
            let (dll, linkage, served) = (&dll, &linkage, &served);
            s.spawn(move || {
                let queries = [
                    Some("Global"),
                    Some("238 260"),
                    Some("MetadataGlobal"),
                    Some("23"),
                    None,
                ];
                for i in 0..rounds {
                    // Thread 7 collects without holding an Open: it sees the DLL come and go.
                    let holds = t != 7;
                    if holds {
                        assert_eq!(dll.open_with(Some(&strs(linkage))), 0);
                    }
                    let query = queries[(t + i) % queries.len()];
                    // Every other call has room; the others try sizes around the needed one.
                    let size = if i % 2 == 0 {
                        needed + 64
                    } else {
                        (i * 37 + t * 11) % (needed + 64)
                    };
                    let capacity = u32::try_from(size).unwrap();
                    // SAFETY: see `every_query_at_every_buffer_size`.
                    let r = unsafe { host.call_extern(dll.collect, query, capacity) }
                        .unwrap_or_else(|v| panic!("thread {t} #{i} {query:?}/{capacity}: {v}"));
                    if r.status == ERROR_SUCCESS && !r.data.is_empty() {
                        let expect = if query == Some("MetadataGlobal") {
                            Expect::Metadata
                        } else {
                            Expect::Data
                        };
                        let got = indexes(&r.data, r.num_object_types, expect);
                        assert!(got == OBJECTS || got == [238, 260], "{got:?}");
                        served.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    if holds {
                        assert_eq!(dll.close(), 0);
                    }
                }
            });
        }
    });
    // Enough replies carried data for the check to mean something.
    let served = served.into_inner();
    assert!(served > 100);
    eprintln!(
        "stress: cdylib: {} Open/Collect/Close rounds by 8 threads, {served} with data",
        8 * rounds
    );
}
