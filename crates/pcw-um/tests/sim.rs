// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-um against pcw-sim's simulated Perflib: what a service publishes is what a consumer
//! collects, and every misuse is a typed error.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use pcw_sim::usermode;
use pcw_um::{
    ATTRIB_BY_REFERENCE, CounterInfo, CounterSetInfo, Error, Notifications, Provider, Request,
};

// Links pcw-sim's `#[no_mangle]` Perflib into this test binary.
use pcw_sim as _;

const fn counter(id: u32, size: u32, attrib: u64) -> CounterInfo {
    CounterInfo {
        id,
        counter_type: if size == 8 { 0x0001_0100 } else { 0x0001_0000 },
        attrib,
        size,
        detail_level: 100,
        scale: 0,
        offset: 0,
    }
}

static MULTI: CounterSetInfo = CounterSetInfo {
    guid: 0x1111_0000_0000_0000_0000_0000_0000_0001,
    instance_type: 2,
    counters: &[
        counter(1, 4, 0),
        counter(2, 8, 0),
        counter(3, 4, ATTRIB_BY_REFERENCE),
    ],
};
static SINGLE: CounterSetInfo = CounterSetInfo {
    guid: 0x1111_0000_0000_0000_0000_0000_0000_0002,
    instance_type: 0,
    counters: &[counter(1, 8, ATTRIB_BY_REFERENCE)],
};

#[test]
fn values_and_references_reach_the_consumer() {
    let provider = Provider::start(
        0x1111_0000_0000_0000_0000_0000_0000_0000,
        &[&MULTI, &SINGLE],
    )
    .unwrap();
    let a = provider.create_instance(&MULTI, "alpha", 0).unwrap();
    let b = provider.create_instance(&MULTI, "beta", 1).unwrap();
    a.set_u32(1, 7).unwrap();
    a.increment_u32(1, 5).unwrap();
    a.decrement_u32(1, 2).unwrap();
    a.set_u64(2, 1 << 40).unwrap();
    a.increment_u64(2, 3).unwrap();
    a.reference_u32(3).unwrap().store(99, Ordering::Relaxed);
    b.set_u32(1, 1).unwrap();
    let got = usermode::collect(MULTI.guid).unwrap();
    assert_eq!(got.len(), 2);
    let alpha = got.iter().find(|i| i.name == "alpha").unwrap();
    assert_eq!(alpha.values[&1], 10);
    assert_eq!(alpha.values[&2], (1 << 40) + 3);
    assert_eq!(alpha.values[&3], 99, "read through the reference");
    // The reference follows the atomic without another call.
    a.reference_u32(3).unwrap().fetch_add(1, Ordering::Relaxed);
    let again = usermode::collect(MULTI.guid).unwrap();
    assert_eq!(
        again.iter().find(|i| i.name == "alpha").unwrap().values[&3],
        100
    );

    let only = provider.create_instance(&SINGLE, "_Default", 0).unwrap();
    only.reference_u64(1)
        .unwrap()
        .store(u64::MAX - 1, Ordering::Relaxed);
    assert_eq!(
        usermode::collect(SINGLE.guid).unwrap()[0].values[&1],
        u64::MAX - 1
    );

    b.delete().unwrap();
    assert_eq!(usermode::collect(MULTI.guid).unwrap().len(), 1);
    drop((a, only));
    drop(provider);
    assert!(
        usermode::collect(MULTI.guid).is_none(),
        "stopping unregisters the sets"
    );
}

static CHECKED: CounterSetInfo = CounterSetInfo {
    guid: 0x2222_0000_0000_0000_0000_0000_0000_0001,
    instance_type: 2,
    counters: &[
        counter(1, 4, 0),
        counter(2, 8, 0),
        counter(3, 4, ATTRIB_BY_REFERENCE),
    ],
};
static SINGLE_CHECKED: CounterSetInfo = CounterSetInfo {
    guid: 0x2222_0000_0000_0000_0000_0000_0000_0002,
    instance_type: 0,
    counters: &[counter(1, 4, 0)],
};

#[test]
fn misuse_is_a_typed_error() {
    let provider = Provider::start(
        0x2222_0000_0000_0000_0000_0000_0000_0000,
        &[&CHECKED, &SINGLE_CHECKED],
    )
    .unwrap();
    let i = provider.create_instance(&CHECKED, "x", 0).unwrap();
    assert!(matches!(
        i.set_u64(1, 1),
        Err(Error::WrongSize {
            id: 1,
            size: 4,
            given: 8
        })
    ));
    assert!(matches!(
        i.set_u32(2, 1),
        Err(Error::WrongSize {
            id: 2,
            size: 8,
            given: 4
        })
    ));
    assert!(matches!(
        i.set_u32(9, 1),
        Err(Error::UnknownCounter { id: 9, .. })
    ));
    assert!(matches!(
        i.set_u32(3, 1),
        Err(Error::Reference {
            id: 3,
            by_reference: true
        })
    ));
    assert!(matches!(
        i.reference_u32(1),
        Err(Error::Reference {
            id: 1,
            by_reference: false
        })
    ));
    assert!(matches!(
        i.reference_u64(3),
        Err(Error::WrongSize { id: 3, .. })
    ));
    // Perflib's own checks, through the simulator: a duplicate instance and a second
    // instance of a single-instance set are `ERROR_ALREADY_EXISTS` (183).
    let dup = provider.create_instance(&CHECKED, "X", 0).unwrap_err();
    assert!(
        matches!(
            dup,
            Error::Win32 {
                operation: "PerfCreateInstance",
                code: 183
            }
        ),
        "{dup}"
    );
    let _one = provider
        .create_instance(&SINGLE_CHECKED, "_Default", 0)
        .unwrap();
    let two = provider
        .create_instance(&SINGLE_CHECKED, "other", 0)
        .unwrap_err();
    assert!(matches!(two, Error::Win32 { code: 183, .. }));
    assert!(matches!(
        provider.create_instance(&CHECKED, "", 1),
        Err(Error::InstanceName(_))
    ));
    assert!(matches!(
        provider.create_instance(&MULTI, "y", 1),
        Err(Error::UnknownCounterSet(_))
    ));
    // A second provider registering the same counterset: `ERROR_ALREADY_EXISTS` from
    // `PerfSetCounterSetInfo`; and the same provider GUID twice from `PerfStartProviderEx`.
    let e = Provider::start(0x2222_0000_0000_0000_0000_0000_0000_00ff, &[&CHECKED]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Win32 {
                operation: "PerfSetCounterSetInfo",
                code: 183
            }
        ),
        "{e}"
    );
    let e = Provider::start(0x2222_0000_0000_0000_0000_0000_0000_0000, &[]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Win32 {
                operation: "PerfStartProviderEx",
                code: 183
            }
        ),
        "{e}"
    );
}

static WIDE: CounterSetInfo = CounterSetInfo {
    guid: 0x4444_0000_0000_0000_0000_0000_0000_0001,
    instance_type: 2,
    counters: &[
        counter(63, 4, 0),
        counter(64, 8, 0),
        counter(200, 4, 0),
        counter(5, 8, ATTRIB_BY_REFERENCE),
    ],
};

/// Reference counters with ids below 64 only: their slots go by id.
static LOW_REFS: CounterSetInfo = CounterSetInfo {
    guid: 0x4444_0000_0000_0000_0000_0000_0000_0003,
    instance_type: 2,
    counters: &[counter(63, 4, 0), counter(5, 8, ATTRIB_BY_REFERENCE)],
};

/// Reference counters with an id from 64 up: their slots go by template position.
static HIGH_REFS: CounterSetInfo = CounterSetInfo {
    guid: 0x4444_0000_0000_0000_0000_0000_0000_0002,
    instance_type: 2,
    counters: &[
        counter(9, 4, 0),
        counter(3, 8, ATTRIB_BY_REFERENCE),
        counter(70, 4, ATTRIB_BY_REFERENCE),
        counter(2, 4, ATTRIB_BY_REFERENCE),
    ],
};

#[test]
fn reference_slots_by_id_or_by_template_position_hold_what_is_stored() {
    let provider = Provider::start(
        0x4444_0000_0000_0000_0000_0000_0000_0010,
        &[&LOW_REFS, &HIGH_REFS],
    )
    .unwrap();
    let by_id = provider.create_instance(&LOW_REFS, "by id", 1).unwrap();
    let by_position = provider
        .create_instance(&HIGH_REFS, "by position", 1)
        .unwrap();
    by_id.reference_u64(5).unwrap().store(55, Ordering::Relaxed);
    by_position.set_u32(9, 99).unwrap();
    by_position
        .reference_u64(3)
        .unwrap()
        .store(33, Ordering::Relaxed);
    by_position
        .reference_u32(70)
        .unwrap()
        .store(70, Ordering::Relaxed);
    by_position
        .reference_u32(2)
        .unwrap()
        .store(22, Ordering::Relaxed);
    for (i, id, size) in [
        (&by_position, 3, 4),
        (&by_position, 70, 8),
        (&by_position, 2, 8),
    ] {
        let wrong = if size == 4 {
            i.reference_u32(id).err()
        } else {
            i.reference_u64(id).err()
        };
        assert!(matches!(wrong, Some(Error::WrongSize { .. })), "{id}");
    }
    assert!(matches!(
        by_position.reference_u32(9),
        Err(Error::Reference { id: 9, .. })
    ));
    assert!(matches!(
        by_id.reference_u32(63),
        Err(Error::Reference { id: 63, .. })
    ));
    let low = &usermode::collect(LOW_REFS.guid).unwrap()[0];
    assert_eq!(low.values[&5], 55);
    let high = &usermode::collect(HIGH_REFS.guid).unwrap()[0];
    assert_eq!(
        (
            high.values[&9],
            high.values[&3],
            high.values[&70],
            high.values[&2]
        ),
        (99, 33, 70, 22)
    );
}

#[test]
fn the_setters_check_ids_below_64_by_bit_and_others_by_template_and_names_of_every_form_are_taken()
{
    let provider = Provider::start(0x4444_0000_0000_0000_0000_0000_0000_0000, &[&WIDE]).unwrap();
    let i = provider.create_instance(&WIDE, "w", 0).unwrap();
    // Ids from 64 up take the template's lookup; below, the bit test: both check alike.
    i.set_u32(63, 7).unwrap();
    i.set_u64(64, 1 << 40).unwrap();
    i.set_u32(200, 9).unwrap();
    assert!(matches!(
        i.set_u64(63, 1),
        Err(Error::WrongSize { id: 63, .. })
    ));
    assert!(matches!(
        i.set_u32(64, 1),
        Err(Error::WrongSize { id: 64, .. })
    ));
    assert!(matches!(
        i.set_u64(5, 1),
        Err(Error::Reference { id: 5, .. })
    ));
    assert!(matches!(
        i.set_u32(62, 1),
        Err(Error::UnknownCounter { id: 62, .. })
    ));
    i.increment_u32(63, 3).unwrap();
    i.decrement_u64(64, 1).unwrap();
    i.set_u32(200, 11).unwrap();
    // The 8-byte reference counter's slot is read whole.
    i.reference_u64(5)
        .unwrap()
        .store(u64::MAX - 1, Ordering::Relaxed);
    assert!(matches!(
        i.reference_u32(5),
        Err(Error::WrongSize { id: 5, .. })
    ));
    assert!(matches!(
        i.reference_u64(64),
        Err(Error::Reference { id: 64, .. })
    ));
    let got = &usermode::collect(WIDE.guid).unwrap()[0];
    assert_eq!(
        (
            got.values[&63],
            got.values[&64],
            got.values[&200],
            got.values[&5]
        ),
        (10, (1 << 40) - 1, 11, u64::MAX - 1)
    );
    // Names short and long, ASCII or not, reach Perflib whole; one of 1023 units is taken; of
    // 1024, or with a NUL, refused.
    for (k, name) in [
        "q".repeat(127),
        "q".repeat(128),
        "Wärme 7".to_owned(),
        // U+0100 is C4 80 in UTF-8: a byte of 0x80 after a lead byte, and DEL (0x7F), ASCII.
        "\u{100}x".to_owned(),
        "del \u{7f}".to_owned(),
        "n".repeat(1023),
    ]
    .iter()
    .enumerate()
    {
        let id = u32::try_from(k).unwrap() + 1;
        let made = provider.create_instance(&WIDE, name, id).unwrap();
        let seen = usermode::collect(WIDE.guid).unwrap();
        assert!(seen.iter().any(|s| s.id == id && s.name == *name), "{name}");
        drop(made);
    }
    assert!(matches!(
        provider.create_instance(&WIDE, &"n".repeat(1024), 2),
        Err(Error::InstanceName(_))
    ));
    for name in ["a\0b", "\0", "ab\0"] {
        assert!(
            matches!(
                provider.create_instance(&WIDE, name, 3),
                Err(Error::InstanceName(_))
            ),
            "{name:?}"
        );
    }
}

/// A counterset given to `Provider::start`, and a different `CounterSetInfo` with its GUID
/// (never given to Perflib).
static REGISTERED: CounterSetInfo = CounterSetInfo {
    guid: 0x4545_0000_0000_0000_0000_0000_0000_0001,
    instance_type: 2,
    counters: &[counter(64, 8, 0), counter(3, 4, ATTRIB_BY_REFERENCE)],
};
static REGISTERED_AGAIN: CounterSetInfo = CounterSetInfo {
    guid: REGISTERED.guid,
    instance_type: 2,
    counters: &[counter(1, 4, 0)],
};

#[test]
fn an_instance_follows_the_template_perflib_was_given_for_its_guid() {
    let provider =
        Provider::start(0x4545_0000_0000_0000_0000_0000_0000_0000, &[&REGISTERED]).unwrap();
    let i = provider
        .create_instance(&REGISTERED_AGAIN, "again", 0)
        .unwrap();
    // Perflib checks ids against `REGISTERED`, so the instance does too: its 8-byte counter 64
    // is one, and its reference counter 3 has a slot Perflib reads; `REGISTERED_AGAIN`'s
    // counter 1 is not one.
    assert!(std::ptr::eq(i.counter_set(), &raw const REGISTERED));
    i.set_u64(64, 7).unwrap();
    i.reference_u32(3).unwrap().store(33, Ordering::Relaxed);
    assert!(matches!(
        i.set_u32(1, 1),
        Err(Error::UnknownCounter { id: 1, .. })
    ));
    let got = &usermode::collect(REGISTERED.guid).unwrap()[0];
    assert_eq!((got.values[&64], got.values[&3]), (7, 33));
}

#[derive(Default)]
struct Log(Mutex<Vec<Request>>);

impl Notifications for Log {
    fn notify(&self, request: Request) -> u32 {
        self.0.lock().unwrap().push(request);
        0
    }
}

static NOTIFIED: CounterSetInfo = CounterSetInfo {
    guid: 0x3333_0000_0000_0000_0000_0000_0000_0001,
    instance_type: 0,
    counters: &[counter(1, 4, 0)],
};

#[test]
fn custom_callback_notifications_reach_the_trait() {
    let log = Arc::new(Log::default());
    let provider = Provider::start_with(
        0x3333_0000_0000_0000_0000_0000_0000_0000,
        &[&NOTIFIED],
        log.clone(),
    )
    .unwrap();
    let set = NOTIFIED.guid;
    assert_eq!(usermode::notify(set, true, 1), Some(0));
    usermode::collect(set).unwrap();
    assert_eq!(usermode::notify(set, false, 1), Some(0));
    assert_eq!(
        *log.0.lock().unwrap(),
        [
            Request::AddCounter { set, counter: 1 },
            Request::CollectStart { set },
            Request::CollectEnd { set },
            Request::RemoveCounter { set, counter: 1 },
        ]
    );
    drop(provider);
    assert_eq!(usermode::notify(set, true, 1), None);
}
