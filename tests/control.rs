// SPDX-License-Identifier: MIT OR Apache-2.0
//! The control device's IOCTL logic under the simulated kernel, with well-formed and hostile
//! inputs: every request either does what it says or is refused with the right `NTSTATUS` and
//! changes nothing.

use pcw_core::snapshot::{HEADER_LEN, required_len};
use pcw_driver::control::{
    Completion, IOCTL_PCW_CLOSE_QUEUE, IOCTL_PCW_CREATE_QUEUE, IOCTL_PCW_RECORD_QUEUE,
    IOCTL_PCW_SNAPSHOT, device_control,
};
use pcw_driver::{lifecycle, queues};
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Kernel, Request};
use windows_sys::Win32::Foundation::{
    STATUS_BUFFER_OVERFLOW, STATUS_BUFFER_TOO_SMALL, STATUS_INVALID_DEVICE_REQUEST,
    STATUS_INVALID_PARAMETER, STATUS_NOT_FOUND, STATUS_OBJECT_NAME_COLLISION, STATUS_SUCCESS,
};

const QUEUES: &str = "PCW Dynamic Queues";

fn boot() -> Kernel {
    let k = Kernel::boot(BUILD_SERVER_2022);
    lifecycle::unload();
    lifecycle::load().unwrap();
    k
}

fn shutdown(k: Kernel) {
    lifecycle::unload();
    let report = k.teardown();
    assert!(report.is_clean(), "{report:?}");
}

fn name_bytes(name: &str) -> Vec<u8> {
    name.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn create(name: &str) -> (Completion, [u8; 4]) {
    let mut out = [0xA5u8; 4];
    let c = device_control(IOCTL_PCW_CREATE_QUEUE, &name_bytes(name), &mut out);
    (c, out)
}

fn record(id: u32, depth: u32, packets: u64, bytes: u64) -> Completion {
    let mut input = Vec::new();
    input.extend_from_slice(&id.to_le_bytes());
    input.extend_from_slice(&depth.to_le_bytes());
    input.extend_from_slice(&packets.to_le_bytes());
    input.extend_from_slice(&bytes.to_le_bytes());
    device_control(IOCTL_PCW_RECORD_QUEUE, &input, &mut [])
}

fn queue_names(k: &Kernel) -> Vec<String> {
    k.collect(QUEUES, &Request::default())
        .unwrap()
        .instances
        .into_iter()
        .map(|i| i.name)
        .collect()
}

#[test]
fn create_record_close_through_ioctls() {
    let k = boot();
    let (c, out) = create("nic 0");
    assert_eq!(
        c,
        Completion {
            status: STATUS_SUCCESS,
            information: 4
        }
    );
    let id = u32::from_le_bytes(out);
    assert_eq!(record(id, 7, 3, 4500).status, STATUS_SUCCESS);
    let collected = k.collect(QUEUES, &Request::default()).unwrap();
    let values = &collected.instances[0].values;
    assert_eq!((values[&0], values[&1], values[&2]), (3, 4500, 7));
    assert_eq!(create("NIC 0").0.status, STATUS_OBJECT_NAME_COLLISION);
    let c = device_control(IOCTL_PCW_CLOSE_QUEUE, &id.to_le_bytes(), &mut []);
    assert_eq!(c.status, STATUS_SUCCESS);
    assert!(queue_names(&k).is_empty());
    let again = device_control(IOCTL_PCW_CLOSE_QUEUE, &id.to_le_bytes(), &mut []);
    assert_eq!(again.status, STATUS_NOT_FOUND);
    assert_eq!(record(id, 1, 1, 1).status, STATUS_NOT_FOUND);
    shutdown(k);
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one table of hostile requests, one line each"
)]
fn hostile_inputs_are_refused_and_change_nothing() {
    let k = boot();
    let (c, out) = create("keep");
    assert_eq!(c.status, STATUS_SUCCESS);
    let keep = u32::from_le_bytes(out);
    assert_eq!(record(keep, 1, 10, 100).status, STATUS_SUCCESS);
    let before = k.collect(QUEUES, &Request::default()).unwrap();

    let long = name_bytes(&"x".repeat(1024));
    let mut with_nul = name_bytes("a");
    with_nul.extend_from_slice(&[0, 0]);
    let odd = vec![b'a'; 3];
    let mut small_out = [0u8; 3];
    let cases: Vec<(u32, Vec<u8>, usize, Completion)> = vec![
        // Create: empty, odd length, too long, embedded NUL, output too small.
        (
            IOCTL_PCW_CREATE_QUEUE,
            vec![],
            4,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CREATE_QUEUE,
            odd,
            4,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CREATE_QUEUE,
            long,
            4,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CREATE_QUEUE,
            with_nul,
            4,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CREATE_QUEUE,
            name_bytes("new"),
            3,
            Completion {
                status: STATUS_BUFFER_TOO_SMALL,
                information: 0,
            },
        ),
        // Close: short, long, unknown id.
        (
            IOCTL_PCW_CLOSE_QUEUE,
            vec![1, 0, 0],
            0,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CLOSE_QUEUE,
            vec![0; 8],
            0,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CLOSE_QUEUE,
            0xDEAD_BEEFu32.to_le_bytes().to_vec(),
            0,
            Completion {
                status: STATUS_NOT_FOUND,
                information: 0,
            },
        ),
        // Record: short, long.
        (
            IOCTL_PCW_RECORD_QUEUE,
            vec![0; 23],
            0,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_RECORD_QUEUE,
            vec![0; 25],
            0,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        // Snapshot with an input; unknown codes, including a neighbour of ours and METHOD_NEITHER.
        (
            IOCTL_PCW_SNAPSHOT,
            vec![0],
            4096,
            Completion {
                status: STATUS_INVALID_PARAMETER,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_SNAPSHOT + 4 * 0x10,
            vec![],
            0,
            Completion {
                status: STATUS_INVALID_DEVICE_REQUEST,
                information: 0,
            },
        ),
        (
            IOCTL_PCW_CREATE_QUEUE | 3,
            name_bytes("x"),
            4,
            Completion {
                status: STATUS_INVALID_DEVICE_REQUEST,
                information: 0,
            },
        ),
        (
            0,
            vec![],
            0,
            Completion {
                status: STATUS_INVALID_DEVICE_REQUEST,
                information: 0,
            },
        ),
    ];
    for (i, (code, input, out_len, expected)) in cases.into_iter().enumerate() {
        let mut out = vec![0x5Au8; out_len];
        let got = device_control(code, &input, &mut out);
        assert_eq!(got, expected, "case {i}");
        assert!(
            out.iter().all(|b| *b == 0x5A),
            "case {i} wrote to the output"
        );
    }
    let c = device_control(IOCTL_PCW_CREATE_QUEUE, &name_bytes("new"), &mut small_out);
    assert_eq!(c.status, STATUS_BUFFER_TOO_SMALL);
    assert_eq!(
        k.collect(QUEUES, &Request::default()).unwrap(),
        before,
        "nothing changed"
    );
    assert_eq!(queues::REGISTRY.len(), 1);
    shutdown(k);
}

#[test]
fn random_inputs_never_misbehave() {
    // A cheap deterministic sweep over codes near ours and input lengths 0..64 with a
    // pseudo-random fill: every completion is a known status, and Information never exceeds the
    // output buffer (the I/O manager would copy that many bytes back to the caller).
    let k = boot();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
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
        0x0022_2000,
    ] {
        for len in 0..64usize {
            let input: Vec<u8> = (0..len).map(|_| (next() & 0xFF) as u8).collect();
            let mut out = vec![0u8; (next() % 64) as usize];
            let c = device_control(code, &input, &mut out);
            assert!(
                [
                    STATUS_SUCCESS,
                    STATUS_INVALID_PARAMETER,
                    STATUS_NOT_FOUND,
                    STATUS_BUFFER_TOO_SMALL,
                    STATUS_BUFFER_OVERFLOW,
                    STATUS_INVALID_DEVICE_REQUEST,
                    STATUS_OBJECT_NAME_COLLISION
                ]
                .contains(&c.status),
                "{code:#x} {len}: {c:?}"
            );
            assert!(c.information <= out.len(), "{code:#x} {len}: {c:?}");
        }
    }
    queues::close_all();
    shutdown(k);
}

fn snapshot_bytes(out_len: usize, poison: u8) -> (Completion, Vec<u8>) {
    let mut out = vec![poison; out_len];
    let c = device_control(IOCTL_PCW_SNAPSHOT, &[], &mut out);
    (c, out)
}

#[test]
fn the_snapshot_carries_exactly_what_the_callbacks_hand_pcw() {
    use pcw_core::snapshot::Snapshot;
    let k = boot();
    let (_, out) = create("eth 0");
    let id = u32::from_le_bytes(out);
    assert_eq!(record(id, 9, 1234, 99_000).status, STATUS_SUCCESS);
    k.advance(3 * 10_000_000);
    // The manual clock does not move between these calls: the same instant for both views.
    let waves = k.collect("Geometric Waves", &Request::default()).unwrap();
    let stats = k
        .collect("PCW Provider Statistics", &Request::default())
        .unwrap();
    let queues_seen = k.collect(QUEUES, &Request::default()).unwrap();
    let (c, bytes) = snapshot_bytes(4096, 0xA5);
    assert_eq!(c.status, STATUS_SUCCESS);
    let snap = Snapshot::parse(&bytes[..c.information]).expect("the driver writes valid snapshots");
    let sets: Vec<_> = snap.sets().collect();
    assert_eq!(
        sets.iter()
            .map(|s| (s.index(), s.multi()))
            .collect::<Vec<_>>(),
        [(0, true), (1, false), (2, true)]
    );
    for (set, collected) in sets.iter().zip([&waves, &stats, &queues_seen]) {
        let instances: Vec<_> = set.instances().collect();
        assert_eq!(instances.len(), collected.instances.len());
        for (inst, pcw) in instances.iter().zip(&collected.instances) {
            assert_eq!(
                String::from_utf16(&inst.name_utf16().collect::<Vec<_>>()).unwrap(),
                pcw.name
            );
            // PCW's values are keyed by counter id, the snapshot's are in descriptor order.
            let pcw_values: Vec<u64> = pcw.values.values().copied().collect();
            assert_eq!(
                inst.values().collect::<Vec<_>>(),
                pcw_values,
                "{}",
                pcw.name
            );
        }
    }
    // Created instances get PCW-assigned ids, callback instances keep the driver's ids.
    let wave_ids: Vec<u32> = sets[0].instances().map(|i| i.id()).collect();
    assert_eq!(
        wave_ids,
        waves.instances.iter().map(|i| i.id).collect::<Vec<_>>()
    );
    assert_eq!(snap.header().perf_freq, 10_000_000);
    assert_eq!(
        snap.header().system_time,
        pcw_sim::kernel_pcw::BOOT_SYSTEM_TIME + 3 * 10_000_000
    );
    queues::close_all();
    shutdown(k);
}

#[test]
fn a_snapshot_reads_the_statistics_as_watching_kept_them_and_changes_nothing() {
    use pcw_core::snapshot::Snapshot;
    const WAVES: &str = "Geometric Waves";
    const STATS: &str = "PCW Provider Statistics";
    // The statistics are kept while a PCW consumer watches them. A V1 consumer reads them
    // through the snapshot, which sends no AddCounter: it sees what the watching kept, and its
    // reading keeps nothing more (any V1 query of the system's objects reaches the DLL).
    let collections = || {
        let (c, bytes) = snapshot_bytes(4096, 0);
        assert_eq!(c.status, STATUS_SUCCESS);
        let snap = Snapshot::parse(&bytes[..c.information]).expect("a valid snapshot");
        let stats = snap.sets().nth(1).expect("the statistics' set");
        let values: Vec<u64> = stats
            .instances()
            .next()
            .expect("one instance")
            .values()
            .collect();
        values[0]
    };
    let k = boot();
    k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(collections(), 0, "not counted: nobody watched");
    k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(collections(), 0, "a snapshot does not start the counting");
    k.notify(STATS, true, u64::MAX).unwrap();
    for _ in 0..2 {
        k.collect(WAVES, &Request::default()).unwrap();
    }
    k.notify(STATS, false, u64::MAX).unwrap();
    k.collect(WAVES, &Request::default()).unwrap();
    assert_eq!(collections(), 2, "the collections made while watched");
    shutdown(k);
}

#[test]
fn snapshot_buffers_of_every_size() {
    let k = boot();
    let (c, reference) = snapshot_bytes(4096, 0);
    let needed = c.information;
    assert_eq!(c.status, STATUS_SUCCESS);
    for size in 0..needed + 16 {
        let (a, bytes_a) = snapshot_bytes(size, 0xA5);
        let (b, bytes_b) = snapshot_bytes(size, 0x5A);
        assert_eq!(a, b);
        if size < HEADER_LEN {
            // No room even for the header: an error, so the I/O manager copies nothing back.
            assert_eq!(
                a,
                Completion {
                    status: STATUS_BUFFER_TOO_SMALL,
                    information: 0
                },
                "size {size}"
            );
        } else if size < needed {
            // A warning with the header only: the caller gets ERROR_MORE_DATA and the header,
            // whose total length is the size it needs.
            assert_eq!(
                a,
                Completion {
                    status: STATUS_BUFFER_OVERFLOW,
                    information: HEADER_LEN
                },
                "size {size}"
            );
            assert_eq!(
                required_len(&bytes_a[..HEADER_LEN]),
                Ok(needed),
                "size {size}"
            );
        } else {
            assert_eq!(
                a,
                Completion {
                    status: STATUS_SUCCESS,
                    information: needed
                }
            );
            assert_eq!(&bytes_a[..needed], &bytes_b[..needed], "every byte written");
            assert_eq!(&bytes_a[..needed], &reference[..needed]);
            assert!(
                bytes_a[needed..].iter().all(|b| *b == 0xA5),
                "nothing past the snapshot"
            );
        }
    }
    shutdown(k);
}

#[test]
fn misaligned_inputs_are_read_byte_by_byte() {
    // METHOD_BUFFERED system buffers are aligned, but the dispatch logic must not rely on it.
    let k = boot();
    let (_, out) = create("odd");
    let id = u32::from_le_bytes(out);
    let mut raw = vec![0u8; 1];
    raw.extend_from_slice(&id.to_le_bytes());
    raw.extend_from_slice(&5u32.to_le_bytes());
    raw.extend_from_slice(&11u64.to_le_bytes());
    raw.extend_from_slice(&22u64.to_le_bytes());
    let input = &raw[1..];
    assert_ne!(
        input.as_ptr() as usize % 8,
        0,
        "the input really is misaligned"
    );
    assert_eq!(
        device_control(IOCTL_PCW_RECORD_QUEUE, input, &mut []).status,
        STATUS_SUCCESS
    );
    let c = k.collect(QUEUES, &Request::default()).unwrap();
    let v = &c.instances[0].values;
    assert_eq!((v[&0], v[&1], v[&2]), (11, 22, 5));
    queues::close_all();
    shutdown(k);
}
