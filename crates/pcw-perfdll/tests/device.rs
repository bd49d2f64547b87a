// SPDX-License-Identifier: MIT OR Apache-2.0
//! `source=device` through the rlib's exports, with `IOCTL_PCW_SNAPSHOT` replaced by an
//! in-process function ([`set_host_ioctl`]) as on every host but Windows: the device path
//! yields byte-identical V1 replies to the synthetic path for the same snapshot, grows its
//! buffer on `TooSmall`, and refuses (logs, serves nothing) snapshots that are malformed, of
//! another version, or that disagree with the manifest.
//!
//! The rlib's state is process-global, so these tests take a lock.

use std::sync::{Arc, Mutex, MutexGuard};

use pcw_core::snapshot::{PARENT_NONE, SnapshotHeader, SnapshotWriter};
use pcw_core::v1::collect::ERROR_SUCCESS;
use pcw_perfdll::log::{EventKind, recent};
use pcw_perfdll::source::{IoctlReply, set_host_ioctl};
use pcw_perfdll::synthetic::{Clock, Synthetic};
use pcw_perfdll::{ClosePerformanceData, CollectPerformanceData, OpenPerformanceData};
use pcw_sim::v1_host::{CallResult, Host, HostConfig};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn open(strings: &[&str]) -> u32 {
    let mut v: Vec<u16> = Vec::new();
    for s in strings {
        v.extend(s.encode_utf16());
        v.push(0);
    }
    v.push(0);
    // SAFETY: a double-NUL-terminated multi-string alive across the call.
    unsafe { OpenPerformanceData(v.as_mut_ptr()) }
}

fn close() {
    // SAFETY: no pointers.
    assert_eq!(unsafe { ClosePerformanceData() }, 0);
}

fn global() -> CallResult {
    let host = Host::new(HostConfig {
        check_untouched_on_failure: true,
        ..HostConfig::default()
    });
    // SAFETY: the export honours the pointer contract (checked by the host).
    unsafe { host.call_extern(CollectPerformanceData, Some("Global"), 1 << 16) }.unwrap()
}

const DEVICE: [&str; 3] = ["source=device", "first-counter=238", "first-help=239"];

/// Installs an IOCTL that answers with `bytes` (any content).
fn answer_with(bytes: Vec<u8>) {
    set_host_ioctl(Some(Arc::new(move |out: &mut [u8]| {
        if out.len() < bytes.len() {
            return IoctlReply::TooSmall(bytes.len());
        }
        out[..bytes.len()].copy_from_slice(&bytes);
        IoctlReply::Done(bytes.len())
    })));
}

fn synthetic_snapshot(t: i64) -> Vec<u8> {
    let mut s = Synthetic::new(Clock::Fixed { now: t, step: 0 });
    s.tick();
    let mut buf = vec![0u8; 1 << 16];
    let len = s.encode(&mut buf).unwrap();
    buf.truncate(len);
    buf
}

fn last_event() -> Option<(EventKind, u32)> {
    recent().last().map(|e| (e.kind, e.code))
}

#[test]
fn device_replies_equal_synthetic_replies_for_the_same_snapshot() {
    let _g = lock();
    assert_eq!(
        open(&["source=synthetic", "first-counter=238", "clock=30000000"]),
        0
    );
    let synthetic = global();
    close();
    assert_eq!(synthetic.num_object_types, 3);

    answer_with(synthetic_snapshot(30_000_000));
    assert_eq!(open(&DEVICE), 0);
    let device = global();
    close();
    set_host_ioctl(None);
    assert_eq!(device.data, synthetic.data);
    assert_eq!(device.num_object_types, 3);
}

#[test]
fn a_growing_snapshot_grows_the_buffer() {
    let _g = lock();
    // Pad the snapshot past the 64 KiB buffer Open allocates with a set of 2000 long names.
    let mut buf = vec![0u8; 1 << 20];
    let mut w = SnapshotWriter::new(&mut buf, SnapshotHeader::default());
    w.begin_set(0, true, &[4, 4], 2000).unwrap();
    let name: Vec<u16> = "w".repeat(40).encode_utf16().collect();
    for i in 0..2000 {
        w.instance(i, PARENT_NONE, &name, &[u64::from(i), 0])
            .unwrap();
    }
    let len = w.finish().unwrap();
    buf.truncate(len);
    assert!(len > 64 * 1024);
    answer_with(buf);
    assert_eq!(open(&DEVICE), 0);
    let host = Host::default();
    // SAFETY: as in `global`.
    let r = unsafe { host.call_extern(CollectPerformanceData, Some("238"), 1 << 20) }.unwrap();
    close();
    set_host_ioctl(None);
    assert_eq!((r.status, r.num_object_types), (ERROR_SUCCESS, 1));
    assert_eq!(r.summary.unwrap().instances, 2000);
}

#[test]
fn bad_snapshots_are_refused_and_logged() {
    let _g = lock();
    let good = synthetic_snapshot(0);
    let mut bad_magic = good.clone();
    bad_magic[0] ^= 0xFF;
    let mut version_1 = good.clone();
    version_1[4] = 1;
    let mut version_2 = good.clone();
    version_2[4] = 2;
    let mut version_4 = good.clone();
    version_4[4] = 4;
    let truncated = good[..good.len() - 8].to_vec();
    // Geometric Waves announced single-instance: disagrees with the manifest.
    let mut wrong_kind = vec![0u8; 4096];
    let mut w = SnapshotWriter::new(&mut wrong_kind, SnapshotHeader::default());
    w.begin_set(0, false, &[4, 4], 1).unwrap();
    w.instance(0, PARENT_NONE, &[], &[1, 2]).unwrap();
    let n = w.finish().unwrap();
    wrong_kind.truncate(n);
    for (what, bytes) in [
        ("bad magic", bad_magic),
        ("version 1 (names before values)", version_1),
        ("version 2 (values as u64s, an offset table)", version_2),
        ("version 4", version_4),
        ("truncated", truncated),
        ("wrong kind", wrong_kind),
    ] {
        answer_with(bytes);
        assert_eq!(open(&DEVICE), 0);
        let r = global();
        close();
        assert_eq!(
            (r.status, r.num_object_types, r.data.len()),
            (0, 0, 0),
            "{what}"
        );
        assert_eq!(
            last_event().map(|e| e.0),
            Some(EventKind::BadData),
            "{what}"
        );
    }
    set_host_ioctl(None);
}

#[test]
fn a_set_with_the_wrong_counter_layout_is_not_written() {
    // Geometric Waves has two 4-byte counters: a third counter, or 8-byte ones, lay the
    // counter blocks out otherwise than the DLL's definitions say.
    for sizes in [&[4u8, 4, 4][..], &[8, 8], &[4, 8]] {
        let _g = lock();
        let mut bytes = vec![0u8; 4096];
        let mut w = SnapshotWriter::new(&mut bytes, SnapshotHeader::default());
        w.begin_set(0, true, sizes, 1).unwrap();
        w.instance(0, PARENT_NONE, &[0x41], &vec![1; sizes.len()])
            .unwrap();
        let n = w.finish().unwrap();
        bytes.truncate(n);
        answer_with(bytes);
        assert_eq!(open(&DEVICE), 0);
        let r = global();
        close();
        set_host_ioctl(None);
        assert_eq!((r.status, r.num_object_types), (0, 0), "{sizes:?}");
        assert_eq!(last_event(), Some((EventKind::WriteFailed, 0)), "{sizes:?}");
    }
}

#[test]
fn an_unreachable_driver_is_retried_at_every_collect() {
    let _g = lock();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    set_host_ioctl(Some(Arc::new(move |_: &mut [u8]| {
        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        IoctlReply::Failed(5)
    })));
    assert_eq!(open(&DEVICE), 0);
    for _ in 0..3 {
        assert_eq!(global().num_object_types, 0);
    }
    assert_eq!(last_event(), Some((EventKind::SourceUnavailable, 5)));
    // The driver comes up: the next collection serves.
    answer_with(synthetic_snapshot(0));
    assert_eq!(global().num_object_types, 3);
    close();
    set_host_ioctl(None);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 3);
}
