// SPDX-License-Identifier: MIT OR Apache-2.0
//! The disclosure audit of the DLL's whole reply (RELIABILITY.md): every byte
//! `CollectPerformanceData` reports is written by
//! that call, carries the data it should, and is zero where it carries nothing (reserved fields,
//! padding), so no byte of the caller's buffer, of an earlier reply or of the DLL's own memory
//! is handed back to Perflib.
//!
//! Each call goes into a buffer the test keeps across calls and poisons first, alternating two
//! poison bytes (0xA5, 0x5A) from call to call ("collect, re-poison, collect into the same
//! buffer with a different state"):
//!
//! * **Written, not left over**: two DLL instances in lockstep (same state, same query) collect
//!   into buffers holding different poisons; their replies must be byte-identical, so no byte
//!   inside the reported length is one the call did not write (it would differ with the
//!   poison). For the device source, the same instance collects twice from the same driver
//!   state under the two poisons.
//! * **The right data**: every value, name and index is checked against its source (the
//!   synthetic source's formulas; for the device source, the reply for a driver state equals the
//!   reply for that state before a different, longer state was served in between — nothing
//!   stale from the DLL's reused snapshot buffer or from the caller's buffer).
//! * **Zero where there is nothing**: the reserved `ObjectNameTitle`/`ObjectHelpTitle` and
//!   `CounterNameTitle`/`CounterHelpTitle`, the bytes between an instance definition and its
//!   name, the name's NUL and padding, the counter blocks' gaps and tails, and any object tail.
//! * **Nothing outside**: bytes past the reported length keep their poison; a reply without
//!   data (foreign, name-table and unknown-index queries, `ERROR_MORE_DATA`) leaves the whole
//!   buffer as it was.
//!
//! Sources: `source=synthetic` through the built cdylib (as `tests/cdylib.rs` loads it), and
//! `source=device` through the rlib's exports with the driver's real `IOCTL_PCW_SNAPSHOT`
//! under pcw-sim (as `tests/roundtrip.rs`). Every query form of `docs/v1-queries.md` is asked.

mod common;

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::sync::Arc;

use common::{Dll, FIRST_COUNTER, FIRST_HELP, OBJECTS, strs};
use pcw_core::v1::collect::{ERROR_MORE_DATA, ERROR_SUCCESS};
use pcw_core::v1::query::{self, Query};
use pcw_core::v1::validate::{self, Expect};
use pcw_driver::control::{IOCTL_PCW_CREATE_QUEUE, IOCTL_PCW_SNAPSHOT, device_control};
use pcw_driver::lifecycle;
use pcw_perfdll::source::{IoctlReply, set_host_ioctl};
use pcw_perfdll::synthetic::{Clock, QUEUES, Synthetic, WAVES};
use pcw_perfdll::tables::Catalog;
use pcw_sim::kernel_pcw::{BUILD_SERVER_2022, Kernel};
use pcw_sim::v1_host::CollectFn;

/// The two poisons.
const POISONS: [u8; 2] = [0xA5, 0x5A];

/// Every query form of `docs/v1-queries.md` (as `tests/cdylib.rs` asks them).
const QUERIES: [Option<&str>; 29] = [
    Some("Global"),
    Some("global"),
    Some("OLD_Global"),
    Some(""),
    Some(" \t "),
    Some("Costly"),
    Some("MetadataGlobal"),
    Some("OLD_MetadataGlobal"),
    Some("MetadataCostly"),
    Some("Foreigh"),
    Some("Foreign server 238"),
    Some("Counter 9"),
    Some("Counter 009"),
    Some("Help 9"),
    Some("238"),
    Some("244"),
    Some("260"),
    Some("238 244 260"),
    Some("260 238"),
    Some("2380"),
    Some("23"),
    Some("2440 26"),
    Some("0238"),
    Some("000260"),
    Some("\t238\t260\t"),
    Some("238x 244"),
    Some("99999999999 260"),
    Some("2 4 6 8 240"),
    None,
];

/// What one call reported.
#[derive(Clone, PartialEq, Eq)]
struct Reply {
    status: u32,
    count: u32,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {}, {} objects, {} bytes",
            self.status,
            self.count,
            self.bytes.len()
        )
    }
}

/// Asserts that two replies are identical, naming the first byte that differs.
#[track_caller]
fn assert_same(got: &Reply, want: &Reply, what: &str) {
    assert_eq!(
        (got.status, got.count, got.bytes.len()),
        (want.status, want.count, want.bytes.len()),
        "{what}"
    );
    if let Some(at) = (0..got.bytes.len()).find(|i| got.bytes[*i] != want.bytes[*i]) {
        panic!(
            "{what}: byte {at} is {:#04x}, not {:#04x}",
            got.bytes[at], want.bytes[at]
        );
    }
}

/// Calls `f` with `query` into all of `buf`, checking the pointer side of the contract, and
/// returns the reported bytes.
fn collect_into(f: CollectFn, query: Option<&str>, buf: &mut [u8]) -> Reply {
    let mut units: Option<Vec<u16>> = query.map(|q| q.encode_utf16().chain([0]).collect());
    let name = units.as_mut().map_or(std::ptr::null_mut(), Vec::as_mut_ptr);
    let start = buf.as_mut_ptr();
    let mut data: *mut c_void = start.cast();
    let mut size = u32::try_from(buf.len()).unwrap();
    let mut count = 0xBAAD_F00D_u32;
    // SAFETY: a NUL-terminated query (or NULL), the buffer pointer and its length, and the two
    // counts, all valid and exclusively ours for the call.
    let status = unsafe { f(name, &raw mut data, &raw mut size, &raw mut count) };
    let len = size as usize;
    if status == ERROR_SUCCESS && len > 0 {
        assert!(
            len <= buf.len() && len.is_multiple_of(8),
            "{query:?}: length {len}"
        );
        assert_eq!(
            data.cast::<u8>(),
            start.wrapping_add(len),
            "{query:?}: the pointer moves by the length"
        );
    } else {
        assert!(
            status == ERROR_SUCCESS || status == ERROR_MORE_DATA,
            "{query:?}"
        );
        assert_eq!((size, count), (0, 0), "{query:?}: no data, no counts");
        assert_eq!(data.cast::<u8>(), start, "{query:?}: pointer unchanged");
    }
    Reply {
        status,
        count: if len > 0 { count } else { 0 },
        bytes: buf[..len].to_vec(),
    }
}

/// Calls as [`collect_into`] after poisoning `buf` with `poison`, and checks that nothing
/// outside the reported length changed.
fn collect_poisoned(f: CollectFn, query: Option<&str>, buf: &mut [u8], poison: u8) -> Reply {
    buf.fill(poison);
    let r = collect_into(f, query, buf);
    let after = &buf[r.bytes.len()..];
    assert!(
        after.iter().all(|b| *b == poison),
        "{query:?}: a byte past the reported {} was written",
        r.bytes.len()
    );
    r
}

fn expect_for(query: Option<&str>) -> Expect {
    if query.is_some_and(|q| q.to_ascii_lowercase().contains("metadata")) {
        Expect::Metadata
    } else {
        Expect::Data
    }
}

/// Checks the structure and that every byte carrying nothing is zero; returns how many such
/// bytes there were.
fn check_zero_bytes(r: &Reply, query: Option<&str>) -> usize {
    let data = &r.bytes;
    if data.is_empty() {
        return 0;
    }
    let expect = expect_for(query);
    validate::validate_objects(data, r.count as usize, expect)
        .unwrap_or_else(|v| panic!("{query:?}: {v}"));
    let mut zero: Vec<(usize, usize, &str)> = Vec::new();
    let mut end_of_objects = 0;
    for object in validate::objects(data, 0, expect) {
        let object = object.unwrap();
        let o = object.offset();
        let h = *object.header();
        zero.push((o + 16, 4, "ObjectNameTitle"));
        zero.push((o + 24, 4, "ObjectHelpTitle"));
        let counters: Vec<_> = object.counters().collect();
        for i in 0..counters.len() {
            let c = o + h.header_length as usize + 40 * i;
            zero.push((c + 8, 4, "CounterNameTitle"));
            zero.push((c + 16, 4, "CounterHelpTitle"));
        }
        let definitions_end = o + h.header_length as usize + 40 * counters.len();
        let mut at = o + h.definition_length as usize;
        zero.push((
            definitions_end,
            at - definitions_end,
            "after the definitions",
        ));
        for instance in object.instances() {
            let block_at = if let Some(def) = instance.definition() {
                let i = instance.offset();
                assert_eq!(i, at, "{query:?}: instances are contiguous");
                let name_at = i + def.name_offset as usize;
                let name_end = name_at + def.name_length as usize;
                zero.push((i + 24, name_at - (i + 24), "before the name"));
                if def.name_length >= 2 {
                    zero.push((name_end - 2, 2, "the name's NUL"));
                }
                zero.push((
                    name_end,
                    i + def.byte_length as usize - name_end,
                    "name padding",
                ));
                i + def.byte_length as usize
            } else {
                instance.offset()
            };
            let block = instance.block();
            let mut covered = vec![false; block.len()];
            covered[..4].fill(true);
            for c in &counters {
                let (from, size) = (c.counter_offset as usize, c.counter_size as usize);
                covered[from..from + size].fill(true);
            }
            for (k, _) in covered.iter().enumerate().filter(|(_, c)| !**c) {
                zero.push((block_at + k, 1, "counter block gap"));
            }
            at = block_at + block.len();
        }
        let object_end = o + h.total_byte_length as usize;
        zero.push((at, object_end - at, "object tail"));
        end_of_objects = object_end;
    }
    assert_eq!(
        end_of_objects,
        data.len(),
        "{query:?}: the objects fill the reply"
    );
    let mut total = 0;
    for (from, len, what) in zero {
        let bytes = &data[from..from + len];
        assert!(
            bytes.iter().all(|b| *b == 0),
            "{query:?}: {what} at {from}..{} is not zero: {bytes:02x?}",
            from + len
        );
        total += len;
    }
    total
}

/// Whether the DLL fetches a snapshot for `query` (every query that may concern it, data or
/// not): the synthetic source counts a collection then.
fn fetches(query: Option<&str>) -> bool {
    let units: Option<Vec<u16>> = query.map(|q| q.encode_utf16().collect());
    match query::classify(units.as_deref()) {
        Query::Global | Query::Costly | Query::Metadata { .. } => true,
        Query::Items(list) => OBJECTS.iter().any(|o| list.contains(*o)),
        _ => false,
    }
}

/// Checks every name and value of a data reply against the synthetic source's formulas at the
/// twin's state.
fn check_synthetic_values(r: &Reply, query: Option<&str>, twin: &Synthetic, catalog: &Catalog) {
    if r.bytes.is_empty() || expect_for(query) == Expect::Metadata {
        return;
    }
    for object in validate::objects(&r.bytes, 0, Expect::Data) {
        let object = object.unwrap();
        let index = object.header().object_name_title_index;
        let entry = catalog
            .objects
            .iter()
            .find(|e| e.header.name_title_index == index)
            .unwrap_or_else(|| panic!("{query:?}: object {index} is not ours"));
        let table = entry.table;
        let counters: Vec<_> = object.counters().collect();
        assert_eq!(counters.len(), table.counters.len());
        let names: &[&str] = match table.symbol {
            "GeometricWaves" => &WAVES.map(|w| w.0),
            "DynamicQueues" => &QUEUES,
            _ => &[],
        };
        let instances: Vec<_> = object.instances().collect();
        assert_eq!(instances.len(), names.len().max(1), "{query:?} {index}");
        for (i, instance) in instances.iter().enumerate() {
            if table.has_instances {
                let name = String::from_utf16(&instance.name_utf16().collect::<Vec<_>>()).unwrap();
                assert_eq!(name, names[i], "{query:?}");
                assert_eq!(
                    instance.name_bytes().len(),
                    2 * (name.encode_utf16().count() + 1),
                    "{query:?}: NameLength is the name and its NUL"
                );
            }
            for (c, spec) in counters.iter().zip(table.counters) {
                let mut expected = twin.value(table, spec.field, i);
                if c.counter_size == 4 {
                    expected &= u64::from(u32::MAX);
                }
                assert_eq!(
                    instance.value(c),
                    Some(expected),
                    "{query:?}: {}.{} of instance {i}",
                    table.symbol,
                    spec.field
                );
            }
        }
    }
}

/// The synthetic source through the built cdylib: two instances in lockstep, every query form
/// (twice, in two orders, so each follows replies of other shapes), each call into the same
/// buffer re-poisoned with the other poison than the call before, and opposite poisons in the
/// two instances.
#[test]
fn synthetic_replies_disclose_nothing() {
    const T0: i64 = 130_000_000;
    const STEP: i64 = 37_000_000;
    let linkage = vec![
        "source=synthetic".to_owned(),
        format!("first-counter={FIRST_COUNTER}"),
        format!("first-help={FIRST_HELP}"),
        format!("clock={T0}"),
        format!("clock-step={STEP}"),
    ];
    let (x, y) = (Dll::load("disclosure-x"), Dll::load("disclosure-y"));
    assert_eq!(x.open_with(Some(&strs(&linkage))), 0);
    assert_eq!(y.open_with(Some(&strs(&linkage))), 0);
    let catalog = Catalog::new(FIRST_COUNTER, FIRST_HELP).unwrap();
    let mut twin = Synthetic::new(Clock::Fixed {
        now: T0,
        step: STEP,
    });
    let (mut bx, mut by) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    let order: Vec<Option<&str>> = QUERIES
        .iter()
        .chain(QUERIES.iter().rev())
        .copied()
        .collect();
    let (mut calls, mut with_data, mut zero_bytes, mut more_data) = (0, 0, 0, 0);
    let mut forms_with_data = BTreeSet::new();
    for (k, query) in order.iter().copied().enumerate() {
        let (px, py) = (POISONS[k % 2], POISONS[(k + 1) % 2]);
        let rx = collect_poisoned(x.collect, query, &mut bx, px);
        let ry = collect_poisoned(y.collect, query, &mut by, py);
        calls += 2;
        let what = format!("{query:?}: a byte of the reply was not written by the call");
        assert_same(&rx, &ry, &what);
        if fetches(query) {
            twin.tick();
        }
        if rx.bytes.is_empty() {
            assert!(
                bx.iter().all(|b| *b == px),
                "{query:?}: no data, buffer untouched"
            );
        } else {
            with_data += 1;
            forms_with_data.insert(query);
            zero_bytes += check_zero_bytes(&rx, query);
            check_synthetic_values(&rx, query, &twin, &catalog);
            // One byte short: ERROR_MORE_DATA, the buffer untouched (both instances, to keep
            // them in lockstep).
            let short = rx.bytes.len() - 1;
            for (dll, buf, p) in [(&x, &mut bx, px), (&y, &mut by, py)] {
                let r = collect_poisoned(dll.collect, query, &mut buf[..short], p);
                assert_eq!((r.status, r.bytes.len()), (ERROR_MORE_DATA, 0), "{query:?}");
                assert!(buf[..short].iter().all(|b| *b == p), "{query:?}: touched");
            }
            calls += 2;
            more_data += 2;
            twin.tick();
        }
    }
    assert_eq!(x.close(), 0);
    assert_eq!(y.close(), 0);
    // Every form that selects an object got data: 15 data and 2 metadata forms of the 29 (the
    // others are costly, foreign, name-table and unknown-index queries, and NULL).
    assert_eq!(forms_with_data.len(), 17, "{forms_with_data:?}");
    eprintln!(
        "disclosure: synthetic: {calls} calls, {with_data} replies with data checked byte for \
         byte ({zero_bytes} reserved/padding bytes zero), {more_data} ERROR_MORE_DATA untouched"
    );
}

fn queue(name: &str) -> [u8; 4] {
    let input: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut out = [0u8; 4];
    assert_eq!(
        device_control(IOCTL_PCW_CREATE_QUEUE, &input, &mut out).status,
        0
    );
    out
}

fn close_queue(id: [u8; 4]) {
    use pcw_driver::control::IOCTL_PCW_CLOSE_QUEUE;
    assert_eq!(
        device_control(IOCTL_PCW_CLOSE_QUEUE, &id, &mut []).status,
        0
    );
}

fn record(id: [u8; 4], packets: u64, bytes: u64) {
    use pcw_driver::control::IOCTL_PCW_RECORD_QUEUE;
    let mut input = id.to_vec();
    input.extend_from_slice(&3u32.to_le_bytes());
    input.extend_from_slice(&packets.to_le_bytes());
    input.extend_from_slice(&bytes.to_le_bytes());
    assert_eq!(
        device_control(IOCTL_PCW_RECORD_QUEUE, &input, &mut []).status,
        0
    );
}

/// The device source (the driver's real snapshot IOCTL under pcw-sim, through the rlib's
/// exports): for every query form, state A under both poisons, then state B (a longer queue
/// name added: every later object and instance moves), then state A again into the same buffer
/// — with the other poison, and once without re-poisoning at all, so the buffer still holds
/// B's reply. Every A reply must equal the first, byte for byte.
#[test]
fn device_replies_disclose_nothing() {
    use pcw_perfdll::{ClosePerformanceData, CollectPerformanceData, OpenPerformanceData};

    let kernel = Kernel::boot(BUILD_SERVER_2022);
    lifecycle::unload();
    lifecycle::load().unwrap();
    kernel.advance(47_000_000);
    let one = queue("q one");
    record(one, 12, 0x1234_5678_9ABC);
    let two = queue("q two");
    record(two, 7, 0xFFFF_FFFF_FFFF);
    set_host_ioctl(Some(Arc::new(|out: &mut [u8]| {
        let c = device_control(IOCTL_PCW_SNAPSHOT, &[], out);
        IoctlReply::from_completion(c.status, c.information, out)
    })));
    let mut linkage: Vec<u16> = "source=device\0first-counter=238\0first-help=239\0\0"
        .encode_utf16()
        .collect();
    // SAFETY: a double-NUL-terminated multi-string alive across the call.
    assert_eq!(unsafe { OpenPerformanceData(linkage.as_mut_ptr()) }, 0);
    let collect: CollectFn = CollectPerformanceData;
    let mut buf = vec![0u8; 1 << 16];
    let (mut calls, mut zero_bytes) = (0, 0);
    let mut forms_with_data = BTreeSet::new();
    let long_name = "a queue with a much longer name than the others, moving what follows it";
    for query in QUERIES {
        let [first, second] = POISONS;
        // State A under both poisons: every reported byte was written by the call.
        let reply_a = collect_poisoned(collect, query, &mut buf, first);
        assert_same(
            &collect_poisoned(collect, query, &mut buf, second),
            &reply_a,
            &format!("{query:?}: a byte of the reply was not written by the call"),
        );
        zero_bytes += check_zero_bytes(&reply_a, query);
        if !reply_a.bytes.is_empty() {
            forms_with_data.insert(query);
        }
        // State B: a third queue with a long name, under both poisons.
        let long = queue(long_name);
        record(long, 99, 0xABAB_ABAB);
        let reply_b = collect_poisoned(collect, query, &mut buf, first);
        assert_same(
            &collect_poisoned(collect, query, &mut buf, second),
            &reply_b,
            &format!("{query:?}: state B, a byte not written by the call"),
        );
        zero_bytes += check_zero_bytes(&reply_b, query);
        close_queue(long);
        // Back to A, re-poisoned with the other poison: the reply before B, nothing of B's
        // snapshot (still in the DLL's reused buffer) in it.
        assert_same(
            &collect_poisoned(collect, query, &mut buf, first),
            &reply_a,
            &format!("{query:?}: stale data after a longer state"),
        );
        // B again, then A into the buffer B's reply is still in, not re-poisoned.
        let long = queue(long_name);
        let _ = collect_poisoned(collect, query, &mut buf, second);
        close_queue(long);
        assert_same(
            &collect_into(collect, query, &mut buf),
            &reply_a,
            &format!("{query:?}: stale data from the caller's buffer"),
        );
        calls += 7;
    }
    // SAFETY: no pointers.
    assert_eq!(unsafe { ClosePerformanceData() }, 0);
    set_host_ioctl(None);
    lifecycle::unload();
    let report = kernel.teardown();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(forms_with_data.len(), 17, "{forms_with_data:?}");
    eprintln!(
        "disclosure: device: {calls} calls over {} query forms, {zero_bytes} reserved/padding \
         bytes zero",
        QUERIES.len()
    );
}
