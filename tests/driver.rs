// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver's real code under the simulated kernel PCW (pcw-sim): registration through the
//! generated layer, the Geometric Waves callback with every filter, the statistics set, the
//! dynamic `PcwCreateInstance` set, fault injection at each registration, the V2→V1 fallback, and
//! concurrent collection while instances come and go.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use pcw_driver::{lifecycle, queues, waves};
use pcw_sim::kernel_pcw::{
    BUILD_SERVER_2019, BUILD_SERVER_2022, Kernel, PcwCall, Request, Teardown,
};
use pcw_sim::stress_scale;
use windows_sys::Wdk::System::SystemServices::{PCW_VERSION_1, PCW_VERSION_2};
use windows_sys::Win32::Foundation::{STATUS_INSUFFICIENT_RESOURCES, STATUS_UNSUCCESSFUL};

const WAVES: &str = "Geometric Waves";
const STATS: &str = "PCW Provider Statistics";
const QUEUES: &str = "PCW Dynamic Queues";

/// Counts allocations made by provider code (inside a callback, outside the simulator's DDIs).
struct CountingAlloc;

static PROVIDER_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; the counter is a plain atomic.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if pcw_sim::kernel_pcw::in_provider_code() {
            PROVIDER_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same layout contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if pcw_sim::kernel_pcw::in_provider_code() {
            PROVIDER_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn boot(build: u32) -> Kernel {
    let k = Kernel::boot(build);
    // A test that failed earlier may have left the driver loaded against the previous kernel.
    lifecycle::unload();
    lifecycle::load().expect("the driver loads");
    k
}

fn shutdown(k: Kernel) -> Teardown {
    lifecycle::unload();
    k.teardown()
}

fn names(c: &pcw_sim::kernel_pcw::Collection) -> Vec<&str> {
    c.instances.iter().map(|i| i.name.as_str()).collect()
}

fn mask(m: &str) -> Request {
    Request {
        instance_mask: Some(m.to_owned()),
        ..Request::default()
    }
}

/// A descriptor as (id, offset, size).
type Descriptor = (u16, u16, u16);

/// The manifest's layout as pcw-gen's `inspect` reports it: (set name, descriptors).
fn inspected() -> Vec<(String, Vec<Descriptor>)> {
    let doc = pcw_gen::Config::new()
        .inspect(&pcw_gen::Input::new("pcw_driver.man", pcw_driver::MANIFEST))
        .unwrap();
    doc.countersets
        .iter()
        .map(|s| {
            let counters = s
                .counters
                .iter()
                .map(|c| {
                    // A bound struct's layout is the driver's type: inspect reports no offset,
                    // so take the bound field's.
                    let offset = c.offset.map_or_else(
                        || match c.field.as_str() {
                            "Packets" => std::mem::offset_of!(queues::QueueCounters, packets),
                            "Bytes" => std::mem::offset_of!(queues::QueueCounters, bytes),
                            "Depth" => std::mem::offset_of!(queues::QueueCounters, depth),
                            other => panic!("unexpected bound field {other}"),
                        },
                        |o| o as usize,
                    );
                    (
                        c.id,
                        u16::try_from(offset).unwrap(),
                        u16::try_from(c.size).unwrap(),
                    )
                })
                .collect();
            (s.name.clone(), counters)
        })
        .collect()
}

#[test]
fn load_registers_every_set_with_the_manifests_layout_and_unload_cleans_up() {
    let k = boot(BUILD_SERVER_2022);
    assert_eq!(k.countersets(), [WAVES, STATS, QUEUES]);
    for (name, counters) in inspected() {
        assert_eq!(
            k.registration_info(&name),
            Some((PCW_VERSION_2, 0)),
            "{name}"
        );
        let registered: Vec<(u16, u16, u16)> = k
            .descriptors(&name)
            .unwrap()
            .iter()
            .map(|d| (d.id, d.offset, d.size))
            .collect();
        assert_eq!(registered, counters, "{name}: descriptors match inspect");
    }
    assert!(lifecycle::is_loaded());
    lifecycle::load().expect("a second load is a no-op");
    lifecycle::unload();
    // Checked while this test still holds the kernel: after teardown another test may load.
    assert!(!lifecycle::is_loaded());
    assert_eq!(waves::REGISTRY.len(), 0);
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn falls_back_to_version_1_on_an_older_os() {
    let k = boot(BUILD_SERVER_2019);
    for name in [WAVES, STATS, QUEUES] {
        assert_eq!(k.registration_info(name), Some((PCW_VERSION_1, 0)));
    }
    let c = k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(c.instances.len(), 3);
    assert!(shutdown(k).is_clean());
}

#[test]
fn a_failed_registration_at_any_step_leaves_nothing_registered() {
    // Each of the three registrations fails in turn; on the old OS each set takes two calls.
    for (build, calls) in [(BUILD_SERVER_2022, 3), (BUILD_SERVER_2019, 6)] {
        for nth in 0..calls {
            let k = Kernel::boot(build);
            lifecycle::unload();
            k.fail(PcwCall::Register, nth, STATUS_INSUFFICIENT_RESOURCES);
            let status = lifecycle::load().expect_err("the injected failure surfaces");
            // On the old OS a failed V2 attempt is answered by INVALID_PARAMETER_2 first, so an
            // injected failure on an even call replaces that answer; either way load fails.
            assert!(
                status == STATUS_INSUFFICIENT_RESOURCES
                    || status == windows_sys::Win32::Foundation::STATUS_INVALID_PARAMETER_2,
                "build {build}, call {nth}: {status:#x}"
            );
            assert!(!lifecycle::is_loaded());
            assert_eq!(
                waves::REGISTRY.len(),
                0,
                "waves removed after a failed load"
            );
            let report = shutdown(k);
            assert!(report.is_clean(), "build {build}, call {nth}: {report:?}");
        }
    }
}

#[test]
fn enumerate_lists_names_and_stable_distinct_ids_and_collect_adds_values() {
    let k = boot(BUILD_SERVER_2022);
    let listed = k.enumerate(WAVES, &Request::default()).unwrap();
    let listed_names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(listed_names, ["Small Wave", "Medium Wave", "Large Wave"]);
    let ids: BTreeSet<u32> = listed.iter().map(|(_, id)| *id).collect();
    assert_eq!(
        ids.len(),
        3,
        "distinct ids (the KCS sample gives every instance 0)"
    );
    assert!(ids.iter().all(|id| *id < 0xFFFF_FFFE));

    k.advance(2 * 10_000_000); // two seconds into the ten-second period
    let c = k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(
        c.instances
            .iter()
            .map(|i| (i.name.clone(), i.id))
            .collect::<Vec<_>>(),
        listed
    );
    let now = pcw_sim::kernel_pcw::BOOT_SYSTEM_TIME + 2 * 10_000_000;
    for (inst, (_, wave)) in c.instances.iter().zip(waves::WAVES) {
        let expected = waves::values(wave, now, u64::MAX);
        assert_eq!(
            inst.values[&1],
            u64::from(expected.triangle),
            "{}",
            inst.name
        );
        assert_eq!(inst.values[&2], u64::from(expected.square), "{}", inst.name);
        assert!(c.unfiltered.is_empty());
    }
    // Ids stay the same on the next query.
    let again = k.enumerate(WAVES, &Request::default()).unwrap();
    assert_eq!(again, listed);
    assert!(shutdown(k).is_clean());
}

#[test]
fn the_callback_applies_every_filter_itself() {
    let k = boot(BUILD_SERVER_2022);
    let listed = k.enumerate(WAVES, &Request::default()).unwrap();
    let cases: [(Request, &[&str]); 8] = [
        (mask("*Wave"), &["Small Wave", "Medium Wave", "Large Wave"]),
        (mask("?mall*"), &["Small Wave"]),
        (mask("*"), &["Small Wave", "Medium Wave", "Large Wave"]),
        (mask("LARGE WAVE"), &["Large Wave"]),
        (mask("*a*a*a*a*a*a*a*a*b"), &[]),
        (mask("m*e"), &["Medium Wave"]),
        (
            Request {
                instance_mask: None,
                ..Request::default()
            },
            &["Small Wave", "Medium Wave", "Large Wave"],
        ),
        (
            Request {
                instance_id: 0xFFFF_FFF0,
                ..Request::default()
            },
            &[],
        ),
    ];
    for (request, expected) in cases {
        for enumerate in [false, true] {
            let c = if enumerate {
                let e = k.enumerate(WAVES, &request).unwrap();
                pcw_sim::kernel_pcw::Collection {
                    instances: e
                        .into_iter()
                        .map(|(name, id)| pcw_sim::kernel_pcw::Instance {
                            name,
                            id,
                            values: std::collections::BTreeMap::default(),
                        })
                        .collect(),
                    ..Default::default()
                }
            } else {
                k.collect(WAVES, &request).unwrap()
            };
            assert_eq!(names(&c), expected, "{request:?} (enumerate: {enumerate})");
            assert!(
                c.unfiltered.is_empty(),
                "the callback filtered {request:?} itself"
            );
        }
    }
    for (name, id) in &listed {
        for m in [None, Some("*"), Some("*wave")] {
            let request = Request {
                instance_id: *id,
                instance_mask: m.map(str::to_owned),
                ..Request::default()
            };
            let c = k.collect(WAVES, &request).unwrap();
            assert_eq!(names(&c), [name.as_str()]);
            assert!(c.unfiltered.is_empty() && c.missing.is_empty());
        }
        // An id and a mask that disagree select nothing.
        let request = Request {
            instance_id: *id,
            instance_mask: Some("nothing*".into()),
            ..Request::default()
        };
        assert!(k.collect(WAVES, &request).unwrap().instances.is_empty());
    }
    // Counter masks: the requested counter only.
    for (bit, id) in [(0b10u64, 1u16), (0b100, 2)] {
        let c = k
            .collect(
                WAVES,
                &Request {
                    counter_mask: bit,
                    ..Request::default()
                },
            )
            .unwrap();
        assert!(
            c.instances
                .iter()
                .all(|i| i.values.keys().copied().eq([id]))
        );
    }
    assert!(shutdown(k).is_clean());
}

#[test]
fn a_cancelled_query_stops_before_adding_anything() {
    let k = boot(BUILD_SERVER_2022);
    let request = Request {
        cancelled: true,
        ..Request::default()
    };
    let c = k.collect(WAVES, &request).unwrap();
    assert!(c.instances.is_empty());
    assert_eq!(
        c.statuses,
        [windows_sys::Win32::Foundation::STATUS_CANCELLED]
    );
    assert_eq!(
        k.collect(WAVES, &Request::default())
            .unwrap()
            .instances
            .len(),
        3
    );
    assert!(shutdown(k).is_clean());
}

#[test]
fn the_first_failed_add_ends_the_collection_and_is_its_status() {
    let k = boot(BUILD_SERVER_2022);
    // pcw-sim first lists every instance unfiltered (3 adds), then runs the request: its second
    // PcwAddInstance fails. The first wave is added, the callback stops there (no add of the
    // third) and returns the failure.
    // A consumer watches the statistics, which are kept only then.
    assert_eq!(k.notify(STATS, true, u64::MAX).unwrap().len(), 1);
    let before = k.calls(PcwCall::AddInstance);
    k.fail(
        PcwCall::AddInstance,
        before + 3 + 1,
        STATUS_INSUFFICIENT_RESOURCES,
    );
    let c = k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(names(&c), ["Small Wave"]);
    assert_eq!(c.statuses, [STATUS_INSUFFICIENT_RESOURCES]);
    assert_eq!(
        k.calls(PcwCall::AddInstance),
        before + 3 + 2,
        "no add after the failure"
    );
    // The statistics count the failed add as considered, not returned: 2 of the 3 waves
    // considered (the loop stopped at the failure), 1 returned.
    let v = &k.collect(STATS, &Request::default()).unwrap().instances[0].values;
    assert_eq!(v[&0], 1, "collections");
    assert_eq!(v[&1], 1, "instances returned");
    assert_eq!(
        (v[&4], v[&5]),
        (1, 2),
        "filtered (not returned) out of considered"
    );
    k.notify(STATS, false, u64::MAX).unwrap();
    assert!(shutdown(k).is_clean());
}

#[test]
fn every_counter_mask_gets_the_values_it_asks_for_in_both_halves_of_the_period() {
    // Each pair of counters a mask can ask for takes a loop of its own in the driver's
    // callback; the values each returns must be those of a full collection at the same time
    // (PCW hands a consumer only the counters it asked for).
    let k = boot(BUILD_SERVER_2022);
    let mut elapsed = 0;
    for second in [2, 7] {
        k.advance(second * 10_000_000 - elapsed);
        elapsed = second * 10_000_000;
        let now = pcw_sim::kernel_pcw::BOOT_SYSTEM_TIME + elapsed;
        for counter_mask in [0b110u64, 0b10, 0b100, 0, 0b1, 0b1010, u64::MAX >> 1] {
            let c = k
                .collect(
                    WAVES,
                    &Request {
                        counter_mask,
                        ..Request::default()
                    },
                )
                .unwrap();
            assert_eq!(c.instances.len(), 3, "mask {counter_mask:#b}");
            for (inst, (_, wave)) in c.instances.iter().zip(waves::WAVES) {
                let full = waves::values(wave, now, u64::MAX);
                let mut expected = std::collections::BTreeMap::new();
                if counter_mask & 0b10 != 0 {
                    expected.insert(1u16, u64::from(full.triangle));
                }
                if counter_mask & 0b100 != 0 {
                    expected.insert(2u16, u64::from(full.square));
                }
                assert_eq!(
                    inst.values, expected,
                    "{} at {second} s, mask {counter_mask:#b}",
                    inst.name
                );
            }
        }
    }
    assert!(shutdown(k).is_clean());
}

#[test]
fn counter_mask_skips_unrequested_work() {
    let wave = waves::WAVES[2].1;
    let only_triangle = waves::values(wave, 0, 0b10);
    assert_eq!(only_triangle.square, 0, "the square value is not computed");
    assert_eq!(only_triangle.triangle, wave.minimum + wave.amplitude);
    let both = waves::values(wave, 7 * 10_000_000, u64::MAX);
    assert_eq!(both.square, wave.minimum, "second half of the period: low");
    assert_eq!(both.triangle, wave.minimum + wave.amplitude * 2 / 5);
}

#[test]
fn the_adversarial_mask_against_a_long_name_finishes() {
    let k = boot(BUILD_SERVER_2022);
    let long: Vec<u16> = std::iter::repeat_n(u16::from(b'a'), 1000).collect();
    // The waves are frozen while the driver is loaded: a change is refused.
    assert_eq!(
        waves::add(&long, waves::WAVES[0].1),
        Err(pcw_driver::ffi::status::STATUS_INVALID_DEVICE_STATE)
    );
    // SAFETY: this test runs no collection or request while the waves are thawed.
    unsafe { waves::REGISTRY.thaw() };
    let id = waves::add(&long, waves::WAVES[0].1).unwrap();
    waves::REGISTRY.freeze();
    let started = std::time::Instant::now();
    let c = k.collect(WAVES, &mask("*a*a*a*a*a*a*a*a*b")).unwrap();
    assert!(c.instances.is_empty());
    let c = k.collect(WAVES, &mask("*a*a*a*a*a*a*a*a*a")).unwrap();
    assert_eq!(c.instances.len(), 1);
    assert_eq!(c.instances[0].id, id);
    // Not a timing test: an exponential matcher would not come back at all.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(!waves::remove(id), "frozen");
    // SAFETY: as above.
    unsafe { waves::REGISTRY.thaw() };
    assert!(waves::remove(id));
    waves::REGISTRY.freeze();
    assert!(shutdown(k).is_clean());
}

#[test]
fn statistics_count_and_time_collections_only_while_watched() {
    let k = boot(BUILD_SERVER_2022);
    let unwatched = |k: &Kernel| {
        for _ in 0..3 {
            k.collect(WAVES, &Request::default()).unwrap();
        }
    };
    unwatched(&k);
    let stats = k.collect(STATS, &Request::default()).unwrap();
    assert_eq!(
        names(&stats),
        [""],
        "a single-instance set has one blank-named instance"
    );
    let v = &stats.instances[0].values;
    assert_eq!(
        (v[&0], v[&1], v[&3], v[&5]),
        (0, 0, 0, 0),
        "nothing kept while nobody watches"
    );

    assert_eq!(k.notify(STATS, true, u64::MAX).unwrap().len(), 1);
    for _ in 0..4 {
        k.collect(WAVES, &mask("Small*")).unwrap();
    }
    let v = &k.collect(STATS, &Request::default()).unwrap().instances[0].values;
    assert_eq!(v[&0], 4, "collections");
    assert_eq!(v[&1], 4, "instances returned: one per collection");
    assert_eq!((v[&4], v[&5]), (8, 12), "filtered out of considered");
    assert_eq!(v[&3], 4, "each timed");
    k.notify(STATS, false, u64::MAX).unwrap();
    unwatched(&k);
    let after = &k.collect(STATS, &Request::default()).unwrap().instances[0].values;
    assert_eq!(
        (after[&0], after[&1], after[&3]),
        (4, 4, 4),
        "nothing kept after the consumer left"
    );

    k.advance(30 * 10_000_000);
    let v = &k.collect(STATS, &Request::default()).unwrap().instances[0].values;
    assert_eq!(v[&8], 10_000_000, "frequency");
    assert_eq!(
        v[&7] - v[&6],
        30 * 10_000_000,
        "now - loaded at: thirty seconds"
    );
    assert!(shutdown(k).is_clean());
}

#[test]
fn dynamic_queues_are_read_live_and_closed_before_freed() {
    let k = boot(BUILD_SERVER_2022);
    let rx: Vec<u16> = "rx 0".encode_utf16().collect();
    let tx: Vec<u16> = "tx 0".encode_utf16().collect();
    let a = queues::create(&rx).unwrap();
    let b = queues::create(&tx).unwrap();
    assert_eq!(
        queues::create(&"RX 0".encode_utf16().collect::<Vec<_>>()),
        Err(queues::QueueError::NameTaken)
    );
    assert!(queues::record(a, 10, 1500, 3));
    assert!(queues::record(a, 5, 500, 1));
    let c = k.collect(QUEUES, &Request::default()).unwrap();
    assert_eq!(names(&c), ["rx 0", "tx 0"]);
    assert_eq!(c.instances[0].values[&0], 15);
    assert_eq!(c.instances[0].values[&1], 2000);
    assert_eq!(c.instances[0].values[&2], 1);
    assert_eq!(c.instances[1].values[&0], 0);
    assert!(queues::close(b));
    assert!(!queues::close(b), "closed once");
    assert!(!queues::record(b, 1, 1, 1));
    assert_eq!(
        names(&k.collect(QUEUES, &Request::default()).unwrap()),
        ["rx 0"]
    );
    // `a` is still open at unload: unload closes it before unregistering.
    lifecycle::unload();
    assert_eq!(queues::create(&rx), Err(queues::QueueError::NotLoaded));
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn a_failed_create_instance_leaves_nothing_behind() {
    let k = boot(BUILD_SERVER_2022);
    k.fail(PcwCall::CreateInstance, 0, STATUS_UNSUCCESSFUL);
    let name: Vec<u16> = "q".encode_utf16().collect();
    assert_eq!(
        queues::create(&name),
        Err(queues::QueueError::Pcw(STATUS_UNSUCCESSFUL))
    );
    assert_eq!(queues::REGISTRY.len(), 0);
    let id = queues::create(&name).unwrap();
    assert!(queues::close(id));
    assert!(shutdown(k).is_clean());
}

/// Eight collectors, each a fixed number of rounds, while another thread creates and closes
/// queues, records on the stable ones and adds and removes a statistics consumer for as long as
/// any collector runs (so every collection races the churn).
#[test]
fn eight_collectors_while_queues_come_and_go() {
    let k = boot(BUILD_SERVER_2022);
    let stable: Vec<u32> = (0..4)
        .map(|i| queues::create(&format!("stable {i}").encode_utf16().collect::<Vec<_>>()).unwrap())
        .collect();
    let rounds = 50 * stress_scale();
    let done = AtomicUsize::new(0);
    let churned = std::thread::scope(|s| {
        for t in 0..8 {
            let (k, done) = (&k, &done);
            s.spawn(move || {
                for _ in 0..rounds {
                    let set = [QUEUES, WAVES, QUEUES, STATS][t % 4];
                    let c = k.collect(set, &Request::default()).unwrap();
                    if set == QUEUES {
                        let stable_seen: Vec<&str> = names(&c)
                            .into_iter()
                            .filter(|n| n.starts_with("stable"))
                            .collect();
                        assert_eq!(
                            stable_seen,
                            ["stable 0", "stable 1", "stable 2", "stable 3"]
                        );
                        let unique: BTreeSet<&str> = names(&c).into_iter().collect();
                        assert_eq!(unique.len(), c.instances.len(), "no duplicated instance");
                        for i in &c.instances {
                            // Writers only ever store values whose eight bytes are equal: a torn
                            // 64-bit read would mix two of them.
                            let bytes = i.values[&1].to_le_bytes();
                            assert!(bytes.iter().all(|b| *b == bytes[0]), "torn read: {bytes:?}");
                        }
                    } else if set == STATS {
                        // The statistics' promises (pcw_core::stats) under real threads.
                        let v = &c.instances[0].values;
                        assert!(v[&3] <= v[&0], "timed ≤ collections: {v:?}");
                        assert!(v[&4] <= v[&5], "filtered ≤ considered: {v:?}");
                        assert!(
                            v[&5] - v[&4] <= v[&1],
                            "considered − filtered ≤ returned: {v:?}"
                        );
                    } else {
                        assert_eq!(c.instances.len(), 3);
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        s.spawn(|| {
            let mut round = 0u64;
            while round < 250 || done.load(Ordering::Relaxed) < 8 {
                let name: Vec<u16> = format!("churn {}", round % 5).encode_utf16().collect();
                if let Ok(id) = queues::create(&name) {
                    assert!(queues::close(id));
                }
                // Move bytes from k·0x0101… to (k+1)·0x0101…, every byte at once; from all
                // 0xFF, add 1 to wrap to all 0x00 (a carry between bytes would show as torn).
                let delta = if round % 256 == 255 {
                    1
                } else {
                    0x0101_0101_0101_0101
                };
                for id in &stable {
                    assert!(queues::record(*id, 0, delta, 0));
                }
                k.notify(STATS, round.is_multiple_of(2), u64::MAX).unwrap();
                round += 1;
            }
            if round % 2 == 1 {
                // The last round added a consumer: remove it.
                k.notify(STATS, false, u64::MAX).unwrap();
            }
            round
        })
        .join()
        .unwrap()
    });
    // Every consumer removed: nothing is timed any more.
    let timed = |k: &Kernel| k.collect(STATS, &Request::default()).unwrap().instances[0].values[&3];
    let before = timed(&k);
    k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(timed(&k), before, "no consumer left, so not timed");
    eprintln!(
        "stress: driver: {} collections by 8 threads during {churned} churn rounds",
        8 * rounds
    );
    for id in stable {
        assert!(queues::close(id));
    }
    assert!(shutdown(k).is_clean());
}

#[test]
fn the_callbacks_allocate_nothing() {
    let k = boot(BUILD_SERVER_2022);
    k.notify(STATS, true, u64::MAX).unwrap();
    PROVIDER_ALLOCATIONS.store(0, Ordering::Relaxed);
    for request in [
        Request::default(),
        mask("?mall*"),
        Request {
            instance_id: 1,
            ..Request::default()
        },
    ] {
        k.collect(WAVES, &request).unwrap();
        k.enumerate(WAVES, &request).unwrap();
    }
    k.collect(STATS, &Request::default()).unwrap();
    k.enumerate(STATS, &Request::default()).unwrap();
    k.notify(STATS, false, u64::MAX).unwrap();
    assert_eq!(PROVIDER_ALLOCATIONS.load(Ordering::Relaxed), 0);
    assert!(shutdown(k).is_clean());
}

/// A provider callback that allocates, to show the counting allocator sees provider code.
unsafe extern "system" fn allocating_callback(
    _kind: i32,
    _info: *const windows_sys::Wdk::System::SystemServices::PCW_CALLBACK_INFORMATION,
    _context: *const std::ffi::c_void,
) -> i32 {
    std::hint::black_box(vec![0u8; 64]);
    0
}

#[test]
fn the_allocation_counter_sees_provider_allocations() {
    use pcw_driver::ffi;
    let k = Kernel::boot(BUILD_SERVER_2022);
    let name: Vec<u16> = "Allocating".encode_utf16().collect();
    let mut unicode = ffi::unicode(&name);
    let info = ffi::PCW_REGISTRATION_INFORMATION {
        Version: PCW_VERSION_2,
        Name: &raw mut unicode,
        CounterCount: 0,
        Counters: std::ptr::null_mut(),
        Callback: ffi::pcw_callback(Some(allocating_callback)),
        CallbackContext: std::ptr::null_mut(),
        Flags: 0,
    };
    let mut handle = ffi::NULL_REGISTRATION;
    // SAFETY: the information block and the name live across the call.
    let status = unsafe { ffi::PcwRegister(&raw mut handle, &raw const info) };
    assert_eq!(status, 0);
    PROVIDER_ALLOCATIONS.store(0, Ordering::Relaxed);
    k.collect("Allocating", &Request::default()).unwrap();
    assert!(
        PROVIDER_ALLOCATIONS.load(Ordering::Relaxed) >= 2,
        "one alloc and one free"
    );
    // SAFETY: registered just above.
    unsafe { ffi::PcwUnregister(handle) };
    assert!(k.teardown().is_clean());
}
