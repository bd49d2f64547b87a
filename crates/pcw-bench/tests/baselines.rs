// SPDX-License-Identifier: MIT OR Apache-2.0
//! Checks that the benchmarks compare like with like, and the benchmarks' allocation assertion:
//! the C baselines' layouts match windows-sys; the PerfGen-style C writes the very bytes
//! pcw-core's V1 collect writes; the KCS-style C callback selects the same instances as the
//! driver's for every query; the naive matcher agrees with pcw-core's where it finishes; the
//! user-mode C baseline's Perflib structures are the SDK's and both user-mode providers make one
//! Perflib call per update; and the driver's callback, pcw-core's V1 collect, the snapshot codec
//! and pcw-um's counter updates allocate nothing.

use pcw_bench::alloc_count::{self, CountingAlloc};
use pcw_bench::c::{self, KcsInstance};
use pcw_bench::device::{self, CBuffers, SnapshotBuf};
use pcw_bench::snap::{self, NameLength, SnapshotData};
use pcw_bench::v1::{self, V1Object, bytes_mut, out_buffer};
use pcw_bench::waves::{self, ADVERSARIAL, Call, Names, Population, Query};
use pcw_bench::{noop_added, noop_perflib_calls, um, utf16};
use pcw_core::snapshot::Snapshot;
use pcw_core::v1::collect::Collected;
use windows_sys::Wdk::System::SystemServices::{PCW_CALLBACK_INFORMATION, PCW_MASK_INFORMATION};

pcw_bench::noop_pcw!();
pcw_bench::noop_perflib!();

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn c_layouts_agree_with_windows_sys() {
    // SAFETY: pure functions of the C compiler's layouts.
    let size = unsafe { c::kcs_mask_information_size() };
    assert_eq!(size, size_of::<PCW_MASK_INFORMATION>());
    // SAFETY: as above.
    let buffer = unsafe { c::kcs_mask_buffer_offset() };
    assert_eq!(buffer, std::mem::offset_of!(PCW_MASK_INFORMATION, Buffer));
    // SAFETY: as above.
    let id = unsafe { c::kcs_mask_instance_id_offset() };
    assert_eq!(id, std::mem::offset_of!(PCW_MASK_INFORMATION, InstanceId));
    // SAFETY: as above.
    let instance = unsafe { c::kcs_instance_size() };
    assert_eq!(instance, size_of::<KcsInstance>());
    assert_eq!(
        size_of::<PCW_CALLBACK_INFORMATION>(),
        size_of::<PCW_MASK_INFORMATION>()
    );
}

/// `object`'s snapshot as the driver writes it, in an 8-aligned buffer, and its length.
fn snapshot_of(object: &V1Object) -> (Vec<u64>, usize) {
    let mut words = out_buffer(64 + object.len() * 128);
    let len = object
        .encode_snapshot(bytes_mut(&mut words))
        .expect("room enough");
    (words, len)
}

#[test]
fn perfgen_c_writes_the_bytes_pcw_core_writes() {
    for n in [0, 1, 3, 100, 1000] {
        let object = V1Object::new(n);
        let instances = object.instances();
        let desc = object.desc(&instances);
        let (words, len) = snapshot_of(&object);
        let snapshot = Snapshot::parse(v1::bytes_of(&words, len)).unwrap();
        assert!(snap::dll_check(&snapshot));
        let set_object = object.set_object(&snapshot);
        let mut ours = out_buffer(1024 + n * 128);
        let outcome = v1::collect_ours(&set_object, bytes_mut(&mut ours));
        let Collected::Success { bytes, objects: 1 } = outcome else {
            panic!("{n}: {outcome:?}");
        };
        let mut theirs = out_buffer(1024 + n * 128);
        assert_eq!(v1::collect_c(&object.pg(), bytes_mut(&mut theirs)), bytes);
        assert_eq!(
            bytes_mut(&mut ours)[..bytes],
            bytes_mut(&mut theirs)[..bytes]
        );
        let mut from_desc = out_buffer(1024 + n * 128);
        assert_eq!(
            v1::collect_desc(&desc, bytes_mut(&mut from_desc)).bytes(),
            bytes
        );
        assert_eq!(
            bytes_mut(&mut from_desc)[..bytes],
            bytes_mut(&mut theirs)[..bytes]
        );
        // Too small: all write nothing.
        let mut short = out_buffer(bytes - 8);
        let len = bytes - 8;
        assert_eq!(
            v1::collect_ours(&set_object, &mut bytes_mut(&mut short)[..len]),
            Collected::MoreData
        );
        assert_eq!(
            v1::collect_desc(&desc, &mut bytes_mut(&mut short)[..len]),
            Collected::MoreData
        );
        assert_eq!(
            v1::collect_c(&object.pg(), &mut bytes_mut(&mut short)[..len]),
            0
        );
        assert!(bytes_mut(&mut short).iter().all(|b| *b == 0xA5));
    }
}

/// Instances added by one call (the no-op PCW counts them; one test only, so no other thread
/// adds meanwhile).
fn added(f: impl FnOnce() -> i32) -> u64 {
    let before = noop_added();
    assert_eq!(f(), 0);
    noop_added() - before
}

#[test]
fn the_c_callback_selects_what_the_drivers_selects_and_ours_allocates_nothing() {
    // SAFETY: a configuration store.
    unsafe { c::kcs_set_match_cap(1_000_000) };
    for (n, names) in [
        (1, Names::Short),
        (100, Names::Short),
        (30, Names::LongScan),
    ] {
        let population = Population::new(n, names);
        population.install_c();
        let queries = [
            Query::Full,
            Query::Id(population.ids[n / 2]),
            Query::Id(0xFFFF_0000),
            Query::Mask("Large*".into()),
            Query::Mask("*".into()),
            Query::Mask("?mall*".into()),
            Query::Mask(ADVERSARIAL.into()),
            Query::OneCounter,
        ];
        for query in queries {
            let call = Call::new(&query, 1);
            let (ours, allocations) =
                alloc_count::measure(|| added(|| waves::collect_ours(&population, &call)));
            assert_eq!(allocations, 0, "{n} {query:?}");
            let theirs = added(|| waves::collect_c(&call));
            assert_eq!(ours, theirs, "{n} {query:?}");
        }
    }
}

#[test]
fn the_naive_matcher_agrees_where_it_finishes_and_is_capped_on_the_adversarial_mask() {
    // SAFETY: a configuration store (the same value in every test of this binary).
    unsafe { c::kcs_set_match_cap(1_000_000) };
    let names = [
        "Small Wave",
        "small wave 2",
        "Large",
        "",
        "aaab",
        "xaxbx",
        "Ab",
    ];
    let masks = [
        "*", "S*", "?mall*", "*a*b", "*A?", "a*", "", "Large", "*x*x*",
    ];
    for name in names {
        for mask in masks {
            let (m, n) = (utf16(mask), utf16(name));
            assert_eq!(
                waves::match_ours(&m, &n),
                waves::match_c(&m, &n),
                "{mask} {name}"
            );
        }
    }
    // SAFETY: reads and resets a counter.
    unsafe { c::kcs_take_capped() };
    let adversarial = utf16(ADVERSARIAL);
    assert!(!waves::match_c(&adversarial, &Names::LongA.name(1)));
    // SAFETY: as above.
    let capped = unsafe { c::kcs_take_capped() };
    assert_eq!(capped, 1, "the naive matcher explodes");
    assert!(!waves::match_ours(&adversarial, &Names::LongA.name(1)));
    assert!(waves::match_ours(&adversarial, &Names::LongScan.name(1)));
}

#[test]
fn v1_collect_and_the_snapshot_codec_allocate_nothing() {
    for n in [1, 100, 1000] {
        let object = V1Object::new(n);
        let instances = object.instances();
        let desc = object.desc(&instances);
        let mut buf = out_buffer(1024 + n * 128);
        let (outcome, allocations) =
            alloc_count::measure(|| v1::collect_desc(&desc, bytes_mut(&mut buf)));
        assert!(matches!(outcome, Collected::Success { .. }), "{outcome:?}");
        assert_eq!(allocations, 0, "V1 collect, N = {n}");
        let (outcome, allocations) =
            alloc_count::measure(|| v1::collect_desc(&desc, &mut bytes_mut(&mut buf)[..64]));
        assert_eq!(outcome, Collected::MoreData);
        assert_eq!(allocations, 0, "V1 collect, no space, N = {n}");
        let (words, len) = snapshot_of(&object);
        let snapshot = Snapshot::parse(v1::bytes_of(&words, len)).unwrap();
        let set_object = object.set_object(&snapshot);
        let (outcome, allocations) =
            alloc_count::measure(|| v1::collect_ours(&set_object, bytes_mut(&mut buf)));
        assert!(matches!(outcome, Collected::Success { .. }), "{outcome:?}");
        assert_eq!(allocations, 0, "V1 collect from a snapshot, N = {n}");
        let (outcome, allocations) =
            alloc_count::measure(|| v1::collect_ours(&set_object, &mut bytes_mut(&mut buf)[..64]));
        assert_eq!(outcome, Collected::MoreData);
        assert_eq!(
            allocations, 0,
            "V1 collect from a snapshot, no space, N = {n}"
        );

        for names in NameLength::ALL {
            let data = SnapshotData::with_names(n, names);
            let mut buf = out_buffer(data.len());
            let (len, allocations) = alloc_count::measure(|| data.encode(bytes_mut(&mut buf)));
            assert_eq!(len, Ok(data.len()));
            assert_eq!(allocations, 0, "snapshot encode, N = {n}, {names:?}");
            let (sum, allocations) =
                alloc_count::measure(|| snap::decode(&bytes_mut(&mut buf)[..data.len()]));
            assert_eq!(sum, Ok(n as u64 + 1), "{names:?}");
            assert_eq!(allocations, 0, "snapshot decode, N = {n}, {names:?}");
        }
    }
}

#[test]
fn the_counting_allocator_sees_allocations() {
    let ((), allocations) = alloc_count::measure(|| {
        std::hint::black_box(vec![1u8; 16]);
    });
    assert_eq!(allocations, 2, "one alloc and one free");
}

#[test]
fn the_device_path_writes_the_c_baselines_bytes_and_allocates_only_on_its_first_call() {
    for (names, n) in NameLength::ALL
        .into_iter()
        .flat_map(|names| [0, 1, 100, 1000].map(|n| (names, n)))
    {
        let object = V1Object::with_names(n, names);
        let mut snap = SnapshotBuf::default();
        let mut ours = out_buffer(1024 + n * 256);
        let (first, allocations) =
            alloc_count::measure(|| device::path_ours(&object, &mut snap, bytes_mut(&mut ours)));
        assert!(first > 0, "{n}");
        assert!(allocations > 0, "the first call sizes the snapshot buffer");
        for call in 0..3 {
            let (bytes, allocations) = alloc_count::measure(|| {
                device::path_ours(&object, &mut snap, bytes_mut(&mut ours))
            });
            assert_eq!(bytes, first);
            assert_eq!(
                allocations, 0,
                "device path, N = {n}, call {call} after the first"
            );
        }
        let mut theirs = out_buffer(1024 + n * 256);
        let mut buffers = CBuffers::new(&object);
        assert_eq!(
            device::path_c(&object, &mut buffers, bytes_mut(&mut theirs)),
            first
        );
        assert_eq!(
            bytes_mut(&mut ours)[..first],
            bytes_mut(&mut theirs)[..first]
        );
        // The same bytes as a V1 collect from the fixed description.
        let instances = object.instances();
        let mut direct = out_buffer(1024 + n * 256);
        assert_eq!(
            v1::collect_desc(&object.desc(&instances), bytes_mut(&mut direct)).bytes(),
            first
        );
        assert_eq!(
            bytes_mut(&mut direct)[..first],
            bytes_mut(&mut ours)[..first]
        );
        // A reply buffer too small: nothing written, no allocation.
        let mut short = out_buffer(first - 8);
        let (bytes, allocations) = alloc_count::measure(|| {
            device::path_ours(&object, &mut snap, &mut bytes_mut(&mut short)[..first - 8])
        });
        assert_eq!((bytes, allocations), (0, 0));
        assert!(bytes_mut(&mut short).iter().all(|b| *b == 0xA5));
    }
}

#[test]
fn the_user_mode_c_baseline_uses_the_sdks_layouts() {
    use windows_sys::Win32::System::Performance::{
        PERF_COUNTER_INFO, PERF_COUNTERSET_INFO, PERF_COUNTERSET_INSTANCE, PERF_PROVIDER_CONTEXT,
    };
    // SAFETY: pure functions of the C compiler's layouts.
    let sizes = [
        unsafe { c::um_c_template_size() },
        // SAFETY: as above.
        unsafe { c::um_c_counter_info_size() },
        // SAFETY: as above.
        unsafe { c::um_c_context_size() },
        // SAFETY: as above.
        unsafe { c::um_c_instance_size() },
    ];
    assert_eq!(
        sizes,
        [
            size_of::<PERF_COUNTERSET_INFO>() + 4 * size_of::<PERF_COUNTER_INFO>(),
            size_of::<PERF_COUNTER_INFO>(),
            size_of::<PERF_PROVIDER_CONTEXT>(),
            size_of::<PERF_COUNTERSET_INSTANCE>(),
        ]
    );
}

#[test]
fn pcw_um_updates_allocate_nothing_and_call_perflib_once_each_as_c_does() {
    let provider = um::start();
    let instances = um::instances(&provider, 1);
    let instance = &instances[0];
    let c = um::CProvider::start(1);
    let calls = |f: &mut dyn FnMut() -> bool| {
        let before = noop_perflib_calls();
        let (ok, allocations) = alloc_count::measure(f);
        (ok, allocations, noop_perflib_calls() - before)
    };
    assert_eq!(
        calls(&mut || um::update_ours(instance, 7, 1 << 40)),
        (true, 0, 3)
    );
    assert_eq!(
        // SAFETY: the C provider's live handle and one of its instances.
        calls(&mut || unsafe { um::update_c(c.handle(), c.instances[0].0, 7, 1 << 40) }),
        (true, 0, 3)
    );
    // Every setter, and the reference counter's lookup and store.
    let (ok, allocations, made) = calls(&mut || {
        instance.set_u32(um::ids::DEPTH, 1).is_ok()
            && instance.increment_u32(um::ids::PACKETS, 2).is_ok()
            && instance.decrement_u32(um::ids::PACKETS, 1).is_ok()
            && instance.set_u64(um::ids::BYTES, 3).is_ok()
            && instance.increment_u64(um::ids::BYTES, 4).is_ok()
            && instance.decrement_u64(um::ids::BYTES, 5).is_ok()
            && um::store_looked_up(instance, 9)
    });
    assert_eq!((ok, allocations, made), (true, 0, 6));
}
