// SPDX-License-Identifier: MIT OR Apache-2.0
//! The Perflib V1 host (the `CollectPerformanceData` contract): every `HostViolation` is produced
//! by a deliberately broken collect function, the reference provider (pcw-core's `collect`) passes
//! every query kind, and assembled `PERF_DATA_BLOCK`s decode with pcw-core's validator.

use core::ffi::c_void;

use pcw_core::counter_type::CounterType;
use pcw_core::testing::{header, titled_counter as counter};
use pcw_core::v1::collect::{ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::validate::{DataBlockRef, Rule, Violation};
use pcw_core::v1::wire::{self, PERF_NO_UNIQUE_ID};
use pcw_core::v1::writer::{
    CounterSpec, InstanceDesc, InstanceName, InstanceSpec, InstancesDesc, ObjectDesc, ObjectSource,
};
use pcw_sim::v1_host::block::{Grow, Perflib, PerflibError, Placement, QueryValue, SimClock};
use pcw_sim::v1_host::{
    CollectFn, GUARD_LEN, GuardRegion, Host, HostConfig, HostViolation, TestLevel, collect_sources,
};

static SINGLE_COUNTERS: [CounterSpec; 4] = [
    counter(1010, CounterType::Rawcount, 4, 4),
    counter(1012, CounterType::LargeRawcount, 8, 8),
    counter(1014, CounterType::RawFraction, 4, 16),
    counter(0, CounterType::RawBase, 4, 20),
];
static SINGLE: ObjectDesc<'static> = ObjectDesc {
    header: header(1000, false),
    counters: &SINGLE_COUNTERS,
    instances: InstancesDesc::Single(&[7, 0x1_0000_0002, 3, 4]),
};

static MULTI_COUNTERS: [CounterSpec; 2] = [
    counter(1020, CounterType::Counter, 4, 4),
    counter(1022, CounterType::LargeRawcount, 8, 8),
];
static MULTI_INSTANCES: [InstanceDesc<'static>; 3] = [
    InstanceDesc {
        spec: InstanceSpec::named("_Total"),
        values: &[1, 2],
    },
    InstanceDesc {
        spec: InstanceSpec::named("zwölf ✓"),
        values: &[3, 4],
    },
    InstanceDesc {
        spec: InstanceSpec {
            name: InstanceName::None,
            unique_id: 42,
            parent_title_index: 1000,
            parent_instance: 0,
        },
        values: &[5, 6],
    },
];
static MULTI: ObjectDesc<'static> = ObjectDesc {
    header: header(1002, false),
    counters: &MULTI_COUNTERS,
    instances: InstancesDesc::Multi(&MULTI_INSTANCES),
};

static COSTLY_COUNTERS: [CounterSpec; 1] = [counter(1030, CounterType::Rawcount, 4, 4)];
static COSTLY: ObjectDesc<'static> = ObjectDesc {
    header: header(1004, true),
    counters: &COSTLY_COUNTERS,
    instances: InstancesDesc::Single(&[99]),
};

fn sources() -> [&'static dyn ObjectSource; 3] {
    [&SINGLE, &MULTI, &COSTLY]
}

/// The strict host used by our tests: level 1, buffer bytes checked on failure too.
fn strict() -> Host {
    Host::new(HostConfig {
        check_untouched_on_failure: true,
        ..HostConfig::default()
    })
}

type Raw = (*mut u16, *mut *mut c_void, *mut u32, *mut u32);

/// Runs the reference provider on a Global query, then lets `tamper` change the outputs (or
/// the buffer) and the status.
fn tampered(
    capacity: u32,
    config: HostConfig,
    mut tamper: impl FnMut(Raw, u32) -> u32,
) -> Result<pcw_sim::v1_host::CallResult, HostViolation> {
    let objects = sources();
    let mut collect = |q, d, s, c| {
        // SAFETY: the host passes valid pointers, as `collect_sources` requires.
        let status = unsafe { collect_sources(&objects, q, d, s, c) };
        tamper((q, d, s, c), status)
    };
    Host::new(config).call(&mut collect, Some("Global"), capacity)
}

/// [`tampered`] with a `tamper` that leaves the provider's status as it was.
fn keeping_status(
    capacity: u32,
    config: HostConfig,
    mut tamper: impl FnMut(Raw),
) -> Result<pcw_sim::v1_host::CallResult, HostViolation> {
    tampered(capacity, config, |raw, status| {
        tamper(raw);
        status
    })
}

/// What the strict host reports after `tamper` changed the outputs of a `capacity`-byte call.
fn violation(capacity: u32, tamper: impl FnMut(Raw)) -> HostViolation {
    keeping_status(capacity, strict_config(), tamper).unwrap_err()
}

fn start(d: *mut *mut c_void) -> *mut u8 {
    // SAFETY: `d` is the host's valid pointer to the buffer pointer.
    unsafe { d.read() }.cast()
}

fn set_ptr(d: *mut *mut c_void, p: *mut u8) {
    // SAFETY: `d` is the host's valid pointer to the buffer pointer.
    unsafe { d.write(p.cast()) };
}

fn size(s: *mut u32) -> u32 {
    // SAFETY: `s` is the host's valid pointer to the size.
    unsafe { s.read() }
}

fn set_size(s: *mut u32, v: u32) {
    // SAFETY: `s` is the host's valid pointer to the size.
    unsafe { s.write(v) };
}

fn set_count(c: *mut u32, v: u32) {
    // SAFETY: `c` is the host's valid pointer to the count.
    unsafe { c.write(v) };
}

/// Where the reply starts: the provider has moved `*d` past the `*s` bytes it wrote.
fn reply_start(d: *mut *mut c_void, s: *mut u32) -> *mut u8 {
    start(d).wrapping_sub(size(s) as usize)
}

/// Writes `value` at `offset` from the buffer start (inside the host's guarded allocation).
fn poke(base: *mut u8, offset: isize, value: u8) {
    // SAFETY: tests poke only inside the buffer or its 1 KiB guard regions, all one allocation.
    unsafe { base.wrapping_offset(offset).write(value) };
}

fn strict_config() -> HostConfig {
    strict().config
}

const BIG: u32 = 4096;

#[test]
fn reference_provider_passes_every_query_kind() {
    let objects = sources();
    let host = strict();
    let global = host.call_sources(&objects, Some("Global"), BIG).unwrap();
    assert_eq!(global.status, ERROR_SUCCESS);
    assert_eq!(
        global.num_object_types, 2,
        "Global: the two non-costly objects"
    );
    assert_eq!(global.summary.unwrap().instances, 1 + 3);

    let items = host.call_sources(&objects, Some("1004 1002"), BIG).unwrap();
    assert_eq!(items.num_object_types, 2);
    let costly = host.call_sources(&objects, Some("Costly"), BIG).unwrap();
    assert_eq!(costly.num_object_types, 1);
    let meta = host
        .call_sources(&objects, Some("MetadataGlobal"), BIG)
        .unwrap();
    assert_eq!(meta.num_object_types, 2);
    assert_eq!(
        meta.summary.unwrap().instances,
        0,
        "metadata has no instances"
    );
    assert!(meta.data.len() < global.data.len());

    for no_data in [
        Some("Foreign"),
        Some("Foreigh \\\\host 1000"),
        None,
        Some("23"),
    ] {
        let r = host.call_sources(&objects, no_data, BIG).unwrap();
        assert_eq!(r.status, ERROR_SUCCESS, "{no_data:?}");
        assert!(r.data.is_empty(), "{no_data:?}");
        assert_eq!(r.num_object_types, 0, "{no_data:?}");
        assert!(r.buffer.iter().all(|b| *b == 0xA5), "{no_data:?}");
    }
    let empty = host.call_sources(&objects, Some(""), BIG).unwrap();
    assert_eq!(empty.data, global.data, "an empty query is Global");

    // Too small by one byte: ERROR_MORE_DATA, buffer untouched (checked by the strict host).
    let needed = u32::try_from(global.data.len()).unwrap();
    let more = host
        .call_sources(&objects, Some("Global"), needed - 1)
        .unwrap();
    assert_eq!(more.status, ERROR_MORE_DATA);
    assert!(more.is_more_data() && more.data.is_empty());
    let exact = host.call_sources(&objects, Some("Global"), needed).unwrap();
    assert_eq!(exact.data, global.data);
}

unsafe extern "system" fn exported_collect(
    name: *mut u16,
    data: *mut *mut c_void,
    size: *mut u32,
    count: *mut u32,
) -> u32 {
    let objects: [&dyn ObjectSource; 2] = [&SINGLE, &MULTI];
    // SAFETY: the caller (the host) passes pointers valid as `CollectPerformanceData` requires.
    unsafe { collect_sources(&objects, name, data, size, count) }
}

#[test]
fn an_extern_system_function_plugs_in() {
    let f: CollectFn = exported_collect;
    // SAFETY: `exported_collect` stays inside the buffer (it is pcw-core's writer).
    let r = unsafe { strict().call_extern(f, Some("Global"), BIG) }.unwrap();
    assert_eq!(r.num_object_types, 2);
    let mut perflib = Perflib::new("HOST");
    // SAFETY: as above.
    unsafe { perflib.add_extern("exported", f) };
    let block = perflib.query(Some("Global"), Grow::default()).unwrap();
    assert_eq!(DataBlockRef::parse(&block).unwrap().objects().count(), 2);
}

#[test]
fn unknown_return_code() {
    let err = tampered(BIG, strict_config(), |_, _| 5).unwrap_err();
    assert_eq!(err, HostViolation::UnexpectedStatus { status: 5 });
}

#[test]
fn more_data_with_a_size() {
    let err = violation(8, |(_, _, s, _)| set_size(s, 8));
    assert_eq!(err, HostViolation::SizeOnMoreData { size: 8 });
}

#[test]
fn more_data_with_a_moved_pointer() {
    let err = violation(8, |(_, d, _, _)| set_ptr(d, start(d).wrapping_add(8)));
    assert_eq!(err, HostViolation::PointerMovedWithoutData { moved: 8 });
}

#[test]
fn more_data_with_a_count() {
    let err = violation(8, |(_, _, _, c)| set_count(c, 2));
    assert_eq!(
        err,
        HostViolation::CountWithoutData {
            status: ERROR_MORE_DATA,
            count: 2
        }
    );
}

#[test]
fn count_left_as_garbage_on_no_data() {
    // A provider that returns "not mine" without writing *lpNumObjectTypes.
    let mut collect = |_q, _d, s: *mut u32, _c| {
        set_size(s, 0);
        ERROR_SUCCESS
    };
    let err = strict()
        .call(&mut collect, Some("Global"), BIG)
        .unwrap_err();
    assert_eq!(
        err,
        HostViolation::CountWithoutData {
            status: ERROR_SUCCESS,
            count: HostConfig::default().garbage_count
        }
    );
}

#[test]
fn buffer_modified_then_more_data() {
    let scribble = |(_, d, _, _): Raw| poke(start(d), 3, 0);
    assert_eq!(
        violation(16, scribble),
        HostViolation::BufferModifiedWithoutData {
            offset: 3,
            before: 0xA5,
            after: 0
        }
    );
    // The V1 contract constrains only the pointer: without the strict option this passes, as on
    // Windows.
    let lax = HostConfig {
        check_untouched_on_failure: false,
        ..strict_config()
    };
    let r = keeping_status(16, lax, scribble).unwrap();
    assert!(r.is_more_data());
}

#[test]
fn write_past_the_end_hits_the_suffix_guard() {
    // The buffer ends at BIG.
    let err = violation(BIG, |(_, d, s, _)| {
        poke(reply_start(d, s), isize::try_from(BIG).unwrap() + 5, 0x00);
    });
    assert_eq!(
        err,
        HostViolation::GuardModified {
            region: GuardRegion::Suffix,
            offset: 5,
            before: HostConfig::default().guard_pattern[1],
            after: 0
        }
    );
}

/// Bytes of the Global reply of `sources()`.
fn size_of_reply() -> usize {
    strict()
        .call_sources(&sources(), Some("Global"), BIG)
        .unwrap()
        .data
        .len()
}

#[test]
fn write_before_the_start_hits_the_prefix_guard() {
    let err = violation(BIG, |(_, d, s, _)| poke(reply_start(d, s), -1, 0x11));
    assert_eq!(
        err,
        HostViolation::GuardModified {
            region: GuardRegion::Prefix,
            offset: GUARD_LEN - 1,
            before: HostConfig::default().guard_pattern[3],
            after: 0x11
        }
    );
}

#[test]
fn wrong_pointer() {
    let err = violation(BIG, |(_, d, _, _)| set_ptr(d, start(d).wrapping_add(8)));
    let n = size_of_reply();
    assert_eq!(
        err,
        HostViolation::PointerSizeMismatch {
            offset: isize::try_from(n + 8).unwrap(),
            size: u32::try_from(n).unwrap()
        }
    );
}

#[test]
fn wrong_size_consistent_with_the_pointer_fails_the_structure_check() {
    let grow = |(_, d, s, _): Raw| {
        set_ptr(d, start(d).wrapping_add(8));
        set_size(s, size(s) + 8);
    };
    let n = size_of_reply();
    assert_eq!(
        violation(BIG, grow),
        HostViolation::Structure(Violation {
            offset: n,
            rule: Rule::Truncated
        })
    );
    // At level 2 the contents are not looked at.
    let level2 = HostConfig {
        test_level: TestLevel::Two,
        ..strict_config()
    };
    let r = keeping_status(BIG, level2, grow).unwrap();
    assert_eq!(r.data.len(), n + 8);
}

#[test]
fn size_larger_than_the_buffer() {
    let err = violation(BIG, |(_, _, s, _)| set_size(s, BIG + 8));
    assert_eq!(
        err,
        HostViolation::SizeExceedsBuffer {
            size: BIG + 8,
            capacity: BIG
        }
    );
}

#[test]
fn size_not_8_aligned() {
    let err = violation(BIG, |(_, d, s, _)| {
        set_ptr(d, start(d).wrapping_sub(4));
        set_size(s, size(s) - 4);
    });
    let n = u32::try_from(size_of_reply()).unwrap();
    assert_eq!(err, HostViolation::SizeUnaligned { size: n - 4 });
}

#[test]
fn pointer_before_the_buffer() {
    let err = violation(BIG, |(_, d, s, _)| {
        set_ptr(d, reply_start(d, s).wrapping_sub(16));
    });
    assert_eq!(err, HostViolation::PointerBeforeBuffer { offset: -16 });
}

#[test]
fn pointer_in_the_suffix_guard_is_an_overrun_and_past_it_heap_corruption() {
    let at = |extra: usize| {
        move |(_, d, s, _): Raw| set_ptr(d, reply_start(d, s).wrapping_add(BIG as usize + extra))
    };
    assert_eq!(
        violation(BIG, at(8)),
        HostViolation::BufferOverrun {
            offset: isize::try_from(BIG + 8).unwrap(),
            capacity: BIG
        }
    );
    assert_eq!(
        violation(BIG, at(GUARD_LEN + 8)),
        HostViolation::PointerPastGuard {
            offset: isize::try_from(BIG as usize + GUARD_LEN + 8).unwrap(),
            limit: BIG as usize + GUARD_LEN
        }
    );
}

#[test]
fn count_disagreeing_with_the_objects() {
    let err = violation(BIG, |(_, _, _, c)| set_count(c, 3));
    assert!(
        matches!(
            err,
            HostViolation::Structure(Violation {
                rule: Rule::ObjectCount,
                ..
            })
        ),
        "{err}"
    );
}

#[test]
fn broken_instance_length_is_a_structure_violation_at_level_1_only() {
    // The first instance of the second object: SINGLE is 64 + 4*40 + 24 = 248 bytes; MULTI's
    // definitions are 64 + 2*40 = 144 bytes.
    let first_instance = 248 + 144;
    // ByteLength 25: not a multiple of 8.
    let corrupt = move |(_, d, s, _): Raw| poke(reply_start(d, s), first_instance, 25);
    assert_eq!(
        violation(BIG, corrupt),
        HostViolation::Structure(Violation {
            offset: usize::try_from(first_instance).unwrap(),
            rule: Rule::InstanceLength
        })
    );
    for level in [TestLevel::Two, TestLevel::Three, TestLevel::Four] {
        let config = HostConfig {
            test_level: level,
            ..strict_config()
        };
        assert!(keeping_status(BIG, config, corrupt).is_ok());
    }
}

#[test]
fn levels_3_and_4_check_nothing() {
    for level in [TestLevel::Three, TestLevel::Four] {
        let config = HostConfig {
            test_level: level,
            ..strict_config()
        };
        let r = tampered(BIG, config, |(_, d, _, _), _| {
            poke(start(d), -1, 0);
            77
        })
        .unwrap();
        assert_eq!(r.status, 77);
    }
    // Level 2 still checks guards.
    let config = HostConfig {
        test_level: TestLevel::Two,
        ..strict_config()
    };
    let err =
        keeping_status(BIG, config, |(_, d, s, _)| poke(reply_start(d, s), -1, 0)).unwrap_err();
    assert!(matches!(
        err,
        HostViolation::GuardModified {
            region: GuardRegion::Prefix,
            ..
        }
    ));
    assert_eq!(TestLevel::from_value(2), Some(TestLevel::Two));
    assert_eq!(TestLevel::from_value(0), None);
    assert_eq!(TestLevel::default(), TestLevel::One);
}

#[test]
fn violations_say_what_and_where() {
    let cases = [
        (
            HostViolation::GuardModified {
                region: GuardRegion::Suffix,
                offset: 5,
                before: 0xFD,
                after: 0,
            },
            "suffix guard region modified at byte 5",
        ),
        (
            HostViolation::PointerSizeMismatch {
                offset: 16,
                size: 8,
            },
            "offset 16",
        ),
        (
            HostViolation::Structure(Violation {
                offset: 392,
                rule: Rule::InstanceLength,
            }),
            "at offset 392 (0x188)",
        ),
        (
            HostViolation::UnexpectedStatus { status: 5 },
            "only ERROR_SUCCESS (0) and ERROR_MORE_DATA (234)",
        ),
    ];
    for (v, text) in cases {
        let shown = v.to_string();
        assert!(shown.contains(text), "{shown}");
    }
}

// --- PERF_DATA_BLOCK assembly -------------------------------------------------------------

const NAME: &str = "SIM-HOST1"; // 10 units with the NUL: 20 bytes, HeaderLength 112

fn perflib<'a>(a: &'a [&'a dyn ObjectSource], b: &'a [&'a dyn ObjectSource]) -> Perflib<'a> {
    let mut p = Perflib::new(NAME);
    p.host = strict();
    p.add_sources("first", a);
    p.add_sources("second", b);
    p
}

#[test]
fn data_block_is_assembled_like_windows() {
    let a: [&dyn ObjectSource; 2] = [&SINGLE, &COSTLY];
    let b: [&dyn ObjectSource; 1] = [&MULTI];
    let mut p = perflib(&a, &b);
    p.clock = SimClock::default();
    let mut buf = vec![0x77u8; 8192];
    let QueryValue::Data { size } = p.query_value(Some("Global"), Some(&mut buf)).unwrap() else {
        panic!("more data")
    };
    let block = DataBlockRef::parse(&buf[..size]).unwrap();
    let h = block.header();
    assert_eq!(h.header_length, 112);
    assert_eq!(h.system_name_offset, 88);
    assert_eq!(h.system_name_length, 20);
    assert_eq!(h.total_byte_length as usize, size);
    assert_eq!(h.num_object_types, 2);
    assert_eq!(h.default_object, 238);
    assert_eq!(h.perf_freq, 10_000_000);
    assert_eq!(h.perf_time, SimClock::default().perf_time);
    assert_eq!(h.system_time, SimClock::default().system_time);
    assert_eq!(
        String::from_utf16(&block.system_name_utf16().collect::<Vec<_>>()).unwrap(),
        NAME
    );
    assert_eq!(&buf[108..112], &[0x77; 4], "header padding left untouched");
    assert!(
        buf[size..].iter().all(|b| *b == 0x77),
        "nothing after the reply"
    );
    let indexes: Vec<u32> = block
        .objects()
        .map(|o| o.header().object_name_title_index)
        .collect();
    assert_eq!(indexes, [1000, 1002], "providers concatenated in order");

    // The clock is the caller's.
    p.clock.advance(10_000_000);
    let again = p.query(Some("Global"), Grow::default()).unwrap();
    let h2 = *DataBlockRef::parse(&again).unwrap().header();
    assert_eq!(h2.perf_time, h.perf_time + 10_000_000);
    assert_eq!(h2.perf_time_100nsec, h.perf_time_100nsec + 10_000_000);
    assert_eq!(again[112..], buf[112..size], "same objects");
}

#[test]
fn small_buffers_get_more_data_and_the_grow_loop_converges() {
    let a: [&dyn ObjectSource; 2] = [&SINGLE, &COSTLY];
    let b: [&dyn ObjectSource; 1] = [&MULTI];
    let mut p = perflib(&a, &b);
    let full = p.query(Some("Global"), Grow::default()).unwrap();
    assert_eq!(
        p.query_value(Some("Global"), None).unwrap(),
        QueryValue::MoreData
    );
    for len in [0, 10, 87, 88, 111, 112, full.len() - 8, full.len() - 1] {
        let mut buf = vec![0u8; len];
        assert_eq!(
            p.query_value(Some("Global"), Some(&mut buf)).unwrap(),
            QueryValue::MoreData,
            "{len}"
        );
    }
    let grown = p
        .query(
            Some("Global"),
            Grow {
                initial: 0,
                increment: 24,
                limit: 1 << 20,
                fill: 0xCC,
            },
        )
        .unwrap();
    assert_eq!(grown[..108], full[..108]);
    assert_eq!(&grown[108..112], &[0xCC; 4], "the padding is the caller's");
    assert_eq!(grown[112..], full[112..]);
    let err = p
        .query(
            Some("Global"),
            Grow {
                initial: 0,
                increment: 8,
                limit: 64,
                fill: 0,
            },
        )
        .unwrap_err();
    assert_eq!(err, PerflibError::BufferLimit { limit: 64 });
    // NULL, empty, Costly, metadata and no-match queries all assemble valid blocks.
    for q in [
        None,
        Some(""),
        Some("Costly"),
        Some("MetadataGlobal"),
        Some("5"),
    ] {
        let block = p.query(q, Grow::default()).unwrap();
        let parsed = DataBlockRef::parse(&block).unwrap();
        let n = parsed.header().num_object_types;
        match q {
            None | Some("") => assert_eq!(block, full),
            Some("Costly") => assert_eq!(n, 1),
            Some("MetadataGlobal") => assert_eq!(n, 2),
            _ => assert_eq!((n, block.len()), (0, 112)),
        }
    }
}

#[test]
fn a_bad_provider_is_named() {
    let a: [&dyn ObjectSource; 1] = [&SINGLE];
    let mut p = Perflib::new(NAME);
    p.add_sources("good", &a);
    p.add_provider("bad", |_, _, _, _| 9);
    let err = p.query(Some("Global"), Grow::default()).unwrap_err();
    assert_eq!(
        err,
        PerflibError::Provider {
            provider: "bad".into(),
            index: 1,
            violation: HostViolation::UnexpectedStatus { status: 9 }
        }
    );
    assert!(
        err.to_string()
            .starts_with("provider `bad` (#1): collect returned 9")
    );
}

#[test]
fn wine_compat_reproduces_the_offset_bug() {
    let a: [&dyn ObjectSource; 1] = [&SINGLE];
    let b: [&dyn ObjectSource; 1] = [&MULTI];
    let mut windows = perflib(&a, &b);
    let correct = windows.query(Some("Global"), Grow::default()).unwrap();
    let mut wine = perflib(&a, &b);
    wine.placement = Placement::WineCompat;
    let mut buf = vec![0x77u8; correct.len() + wire::field::data_block::LEN];
    let QueryValue::Data { size } = wine.query_value(Some("Global"), Some(&mut buf)).unwrap()
    else {
        panic!("more data")
    };
    assert_eq!(
        size,
        correct.len(),
        "TotalByteLength leaves out the last 88 bytes"
    );
    assert_eq!(
        &buf[112..200],
        &[0x77; 88],
        "an 88-byte gap the caller never had written"
    );
    assert_eq!(buf[200..], correct[112..], "the objects, 88 bytes late");
    assert_eq!(
        u32::from_le_bytes(buf[32..36].try_into().unwrap()),
        0,
        "DefaultObject"
    );
    assert!(
        DataBlockRef::parse(&buf[..size]).is_err(),
        "a correct reader rejects it"
    );

    // With exactly the room Windows needs, Wine writes past the buffer.
    let mut exact = vec![0u8; correct.len()];
    let err = wine
        .query_value(Some("Global"), Some(&mut exact))
        .unwrap_err();
    assert!(matches!(err, PerflibError::WineOverrun { len, .. } if len == correct.len()));
    let _ = PERF_NO_UNIQUE_ID;
}
