// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-wine-consumer: the V1 consumer `scripts/wine-test.sh` runs under Wine (`docs/wine.md`).
//!
//! The program (`src/main.rs`, Windows targets only) queries `HKEY_PERFORMANCE_DATA` through
//! Wine's real `RegQueryValueExW`, which loads the perf DLL registered under
//! `Services\pcw_driver\Performance`, and then loads the same DLL itself and runs the whole
//! `CollectPerformanceData` contract under pcw-sim's guarded host. This library holds the parts
//! that do not need Windows, so that they are tested on every host:
//!
//! * [`normalize_reply`]: reads a `RegQueryValueExW` reply with pcw-core's decoder, recognising
//!   Wine 8.0's misplaced provider data (`docs/wine.md`) explicitly and nothing else;
//! * [`summarize`]: a one-line description of a decoded reply for the program's output;
//! * [`Report`]: collects deviations as "expected … got …" lines.

use std::fmt::Write as _;

use pcw_core::v1::validate::{DataBlockRef, Expect, ObjectRef, validate_objects};
use pcw_core::v1::wire::{DataBlock, DataBlockRepr};

/// Size of the fixed `PERF_DATA_BLOCK` header, and the distance Wine 8.0 misplaces provider
/// data by.
pub const PERF_DATA_BLOCK_LEN: usize = 88;

/// Where the provider data of a reply was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// At `HeaderLength`, with `TotalByteLength` covering it: the documented layout.
    Documented,
    /// Wine 8.0's `query_perf_data` bug (`docs/wine.md`): the data starts 88 bytes after
    /// `HeaderLength` (those 88 bytes are left as the caller filled them), and
    /// `TotalByteLength`/`*lpcbData` leave its last 88 bytes out.
    Wine80Offset {
        /// Bytes the data ran past the size the caller passed (Wine tells each provider it has
        /// 88 bytes more room than there is, so a provider may legitimately fill that much
        /// past the caller's buffer): 0..=88.
        past_buffer: usize,
    },
}

/// A reply put back into the documented layout, with how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// The reply in the documented layout, `TotalByteLength` bytes.
    pub block: Vec<u8>,
    /// Where the provider data was.
    pub layout: Layout,
}

impl Normalized {
    /// The decoded reply (already checked by [`normalize_reply`]).
    ///
    /// # Errors
    /// Never for a value [`normalize_reply`] returned; the decoder's message otherwise.
    pub fn decode(&self) -> Result<DataBlockRef<'_>, String> {
        DataBlockRef::parse(&self.block).map_err(|v| format!("decoder: {v}"))
    }

    /// The provider data: the bytes after `HeaderLength`.
    pub fn objects(&self) -> &[u8] {
        let header = header_of(&self.block).map_or(0, |h| h.header_length as usize);
        self.block.get(header..).unwrap_or_default()
    }
}

fn header_of(bytes: &[u8]) -> Option<DataBlockRepr> {
    DataBlock::new_checked(bytes)
        .ok()
        .map(|v| DataBlockRepr::parse(&v))
}

/// Reads the reply of a successful `RegQueryValueExW(HKEY_PERFORMANCE_DATA, …)`.
///
/// `buf` is the caller's whole allocation (the `capacity` bytes passed to the call and any
/// slack after them), filled with `fill` before the call; `size` is the returned `*lpcbData`.
///
/// `TotalByteLength` must equal `size`. A reply with no objects, or whose objects decode at
/// `HeaderLength`, is taken as it is. Otherwise the reply is recognised as Wine 8.0's layout
/// (`docs/wine.md`) only when all of this holds: the 88 bytes at `HeaderLength` are still
/// `fill` (Wine never writes them), the allocation holds `TotalByteLength + 88` bytes, and the
/// reply with those 88 bytes cut out decodes with `NumObjectTypes` objects ending exactly at
/// `TotalByteLength`. Anything else is an error naming what the decoder found at
/// `HeaderLength`: no other difference is excused.
///
/// # Errors
/// A message naming the rule the reply breaks.
pub fn normalize_reply(
    buf: &[u8],
    capacity: usize,
    size: usize,
    fill: u8,
) -> Result<Normalized, String> {
    let reply = buf
        .get(..size)
        .ok_or_else(|| format!("*lpcbData = {size} exceeds the {}-byte buffer", buf.len()))?;
    let header = header_of(reply).ok_or_else(|| {
        format!("*lpcbData = {size} is shorter than the {PERF_DATA_BLOCK_LEN}-byte header")
    })?;
    let total = header.total_byte_length as usize;
    if total != size {
        return Err(format!(
            "TotalByteLength = {total} but *lpcbData = {size}; they must be equal"
        ));
    }
    let documented = DataBlockRef::parse(reply).map(|_| ());
    if documented.is_ok() {
        return Ok(Normalized {
            block: reply.to_vec(),
            layout: Layout::Documented,
        });
    }
    let documented = documented
        .err()
        .map_or_else(String::new, |v| format!("decoder: {v}"));
    if header.num_object_types == 0 {
        return Err(documented);
    }
    // Wine 8.0's `query_perf_data` advances its write pointer by `HeaderLength` from
    // `pdb + 1` instead of from `pdb`, so the first provider writes 88 bytes late, while
    // `TotalByteLength` counts only `HeaderLength` + what the providers returned
    // (`docs/wine.md`, observed with Debian's wine64 8.0). Recognise exactly that layout.
    let h = header.header_length as usize;
    let gap = buf.get(h..h + PERF_DATA_BLOCK_LEN);
    if !gap.is_some_and(|g| g.iter().all(|b| *b == fill)) {
        return Err(documented);
    }
    let Some(shifted) = buf.get(h + PERF_DATA_BLOCK_LEN..total + PERF_DATA_BLOCK_LEN) else {
        return Err(format!(
            "{documented}; and the Wine 8.0 layout would end at {} past the {}-byte allocation",
            total + PERF_DATA_BLOCK_LEN,
            buf.len()
        ));
    };
    let mut block = reply.get(..h).unwrap_or_default().to_vec();
    block.extend_from_slice(shifted);
    if let Err(v) = DataBlockRef::parse(&block) {
        return Err(format!(
            "{documented}; read in Wine 8.0's layout (data at HeaderLength + 88) the decoder \
             says: {v}"
        ));
    }
    Ok(Normalized {
        block,
        layout: Layout::Wine80Offset {
            past_buffer: (total + PERF_DATA_BLOCK_LEN).saturating_sub(capacity),
        },
    })
}

fn object_line(out: &mut String, o: &ObjectRef<'_>) {
    let h = o.header();
    let _ = write!(
        out,
        " [object {} ({} counters, {})]",
        h.object_name_title_index,
        h.num_counters,
        if o.is_single_instance() {
            "single instance".to_owned()
        } else {
            format!("{} instances", h.num_instances)
        }
    );
}

/// A one-line description of a decoded reply: header lengths and each object.
pub fn summarize(block: &DataBlockRef<'_>) -> String {
    let h = block.header();
    let name: String = char::decode_utf16(block.system_name_utf16())
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    let mut out = format!(
        "computer {name:?}, HeaderLength {}, TotalByteLength {}, {} objects:",
        h.header_length, h.total_byte_length, h.num_object_types
    );
    for o in block.objects() {
        object_line(&mut out, &o);
    }
    out
}

/// The object title indexes of a `CollectPerformanceData` reply, validating it.
///
/// # Errors
/// The validator's message.
pub fn collect_indexes(data: &[u8], objects: u32, expect: Expect) -> Result<Vec<u32>, String> {
    validate_objects(data, objects as usize, expect).map_err(|v| format!("validator: {v}"))?;
    Ok(pcw_core::v1::validate::objects(data, 0, expect)
        .flatten()
        .map(|o| o.header().object_name_title_index)
        .collect())
}

/// Counters whose values change from one collection to the next at a fixed clock (the DLL's
/// own statistics): (object name index, counter position in the object's definitions).
pub type Volatile = std::collections::BTreeSet<(u32, usize)>;

/// The counters whose raw values differ between two replies of the same shape (two
/// consecutive collections of the same query).
///
/// # Errors
/// The validator's message, or which object or instance count differs.
pub fn volatile_counters(
    a: &[u8],
    a_count: u32,
    b: &[u8],
    b_count: u32,
) -> Result<Volatile, String> {
    validate_objects(a, a_count as usize, Expect::Any).map_err(|v| format!("validator: {v}"))?;
    validate_objects(b, b_count as usize, Expect::Any).map_err(|v| format!("validator: {v}"))?;
    let objects_a: Vec<ObjectRef<'_>> = pcw_core::v1::validate::objects(a, 0, Expect::Any)
        .flatten()
        .collect();
    let objects_b: Vec<ObjectRef<'_>> = pcw_core::v1::validate::objects(b, 0, Expect::Any)
        .flatten()
        .collect();
    if objects_a.len() != objects_b.len() {
        return Err(format!(
            "{} objects, then {}",
            objects_a.len(),
            objects_b.len()
        ));
    }
    let mut volatile = Volatile::new();
    for (oa, ob) in objects_a.iter().zip(&objects_b) {
        let index = oa.header().object_name_title_index;
        let counters: Vec<_> = oa.counters().collect();
        let (ia, ib): (Vec<_>, Vec<_>) = (oa.instances().collect(), ob.instances().collect());
        if ia.len() != ib.len() {
            return Err(format!(
                "object {index}: {} instances, then {}",
                ia.len(),
                ib.len()
            ));
        }
        for (position, c) in counters.iter().enumerate() {
            if ia.iter().zip(&ib).any(|(x, y)| x.value(c) != y.value(c)) {
                volatile.insert((index, position));
            }
        }
    }
    Ok(volatile)
}

/// `data` with the values of the `volatile` counters zeroed in every counter block.
fn masked(data: &[u8], count: u32, volatile: &Volatile) -> Result<Vec<u8>, String> {
    validate_objects(data, count as usize, Expect::Any).map_err(|v| format!("validator: {v}"))?;
    let mut out = data.to_vec();
    let base = data.as_ptr() as usize;
    for o in pcw_core::v1::validate::objects(data, 0, Expect::Any).flatten() {
        let index = o.header().object_name_title_index;
        let counters: Vec<_> = o.counters().collect();
        for instance in o.instances() {
            // The block is a slice of `data`: its offset is the distance between the two.
            let block = instance.block().as_ptr() as usize - base;
            for (position, c) in counters.iter().enumerate() {
                if volatile.contains(&(index, position)) {
                    let at = block + c.counter_offset as usize;
                    let end = at + c.counter_size as usize;
                    if let Some(bytes) = out.get_mut(at..end) {
                        bytes.fill(0);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Compares two `CollectPerformanceData` replies byte for byte, except the values of the
/// `volatile` counters.
///
/// # Errors
/// What differs: the lengths, the object counts, or the first differing byte with its
/// neighbourhood.
pub fn compare_replies(
    expected: &[u8],
    expected_count: u32,
    got: &[u8],
    got_count: u32,
    volatile: &Volatile,
) -> Result<(), String> {
    if (expected.len(), expected_count) != (got.len(), got_count) {
        return Err(format!(
            "expected {} bytes in {expected_count} objects, got {} bytes in {got_count} objects",
            expected.len(),
            got.len()
        ));
    }
    let e = masked(expected, expected_count, volatile).map_err(|m| format!("expected: {m}"))?;
    let g = masked(got, got_count, volatile).map_err(|m| format!("got: {m}"))?;
    match e.iter().zip(&g).position(|(x, y)| x != y) {
        None => Ok(()),
        Some(at) => {
            let window = at.saturating_sub(8)..(at + 8).min(e.len());
            Err(format!(
                "first difference at byte {at}: expected {:02x?}, got {:02x?} (bytes {}..{})",
                e.get(window.clone()).unwrap_or_default(),
                g.get(window.clone()).unwrap_or_default(),
                window.start,
                window.end
            ))
        }
    }
}

/// Deviations found, as "what: expected …, got …" lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Every deviation, in the order found.
    pub failures: Vec<String>,
    /// Checks that passed.
    pub passed: usize,
}

impl Report {
    /// Records `what` as a deviation unless `expected == got`.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "callers compare temporaries; taking them by value keeps every call site short"
    )]
    pub fn expect_eq<T: PartialEq + core::fmt::Debug>(&mut self, what: &str, expected: T, got: T) {
        if expected == got {
            self.passed += 1;
        } else {
            self.fail(format!("{what}: expected {expected:?}, got {got:?}"));
        }
    }

    /// Records `what` as a deviation when `result` is an error.
    pub fn expect_ok<T>(&mut self, what: &str, result: Result<T, String>) -> Option<T> {
        match result {
            Ok(v) => {
                self.passed += 1;
                Some(v)
            }
            Err(e) => {
                self.fail(format!("{what}: {e}"));
                None
            }
        }
    }

    /// Records a deviation.
    pub fn fail(&mut self, line: String) {
        println!("FAIL {line}");
        self.failures.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::c_void;
    use pcw_sim::v1_host::block::{Perflib, Placement, QueryValue};

    /// A capture the project wrote itself: one object block after a header.
    const FIXTURE: &[u8] = include_bytes!("../../pcw-cli/tests/fixtures/fraction.perf");
    const FILL: u8 = 0x77;

    fn fixture_objects() -> (Vec<u8>, u32) {
        let block = DataBlockRef::parse(FIXTURE).unwrap();
        let h = block.header();
        (
            FIXTURE[h.header_length as usize..h.total_byte_length as usize].to_vec(),
            h.num_object_types,
        )
    }

    /// A Perflib whose one provider returns the fixture's objects, placed as `placement` says.
    fn query(placement: Placement, capacity: usize, slack: usize) -> (Vec<u8>, QueryValue) {
        let (objects, count) = fixture_objects();
        let mut perflib = Perflib::new("WINEHOST");
        perflib.placement = placement;
        perflib.add_provider(
            "fixture",
            move |_q, data: *mut *mut c_void, size: *mut u32, n| {
                // SAFETY: the host passes valid pointers with `*size` writable bytes at `*data`.
                let room = unsafe { size.read() } as usize;
                if room < objects.len() {
                    // SAFETY: as above.
                    unsafe { size.write(0) };
                    // SAFETY: as above.
                    unsafe { n.write(0) };
                    return 234;
                }
                // SAFETY: as above.
                let start = unsafe { data.read() }.cast::<u8>();
                // SAFETY: `room >= objects.len()` bytes are writable at `start`.
                unsafe { core::ptr::copy_nonoverlapping(objects.as_ptr(), start, objects.len()) };
                // SAFETY: as above.
                unsafe { data.write(start.wrapping_add(objects.len()).cast()) };
                // SAFETY: as above.
                unsafe { size.write(u32::try_from(objects.len()).unwrap()) };
                // SAFETY: as above.
                unsafe { n.write(count) };
                0
            },
        );
        let mut buf = vec![FILL; capacity + slack];
        let r = perflib
            .query_value(Some("Global"), Some(&mut buf[..capacity + slack]))
            .unwrap();
        (buf, r)
    }

    #[test]
    fn documented_layout_is_taken_as_it_is() {
        let (buf, r) = query(Placement::Windows, 4096, 0);
        let QueryValue::Data { size } = r else {
            panic!("{r:?}")
        };
        let n = normalize_reply(&buf, 4096, size, FILL).unwrap();
        assert_eq!(n.layout, Layout::Documented);
        assert_eq!(n.objects(), fixture_objects().0);
        let block = n.decode().unwrap();
        assert!(summarize(&block).starts_with("computer \"WINEHOST\""));
    }

    #[test]
    fn wine_layout_is_recognised_and_normalised_to_the_documented_one() {
        let (wine, r) = query(Placement::WineCompat, 4096, 0);
        let QueryValue::Data { size } = r else {
            panic!("{r:?}")
        };
        let n = normalize_reply(&wine, 4096, size, FILL).unwrap();
        assert_eq!(n.layout, Layout::Wine80Offset { past_buffer: 0 });
        let (doc, _) = query(Placement::Windows, 4096, 0);
        let documented = normalize_reply(&doc, 4096, size, FILL).unwrap();
        // Same bytes but DefaultObject (offset 32), which Wine writes as 0 and Windows as 238.
        assert_eq!(n.block.len(), documented.block.len());
        assert_eq!(n.block[..32], documented.block[..32]);
        assert_eq!(n.block[36..], documented.block[36..]);
        assert_eq!(n.objects(), documented.objects());
    }

    #[test]
    fn wine_layout_past_the_buffer_is_measured() {
        let (objects, _) = fixture_objects();
        // Header 88 + "WINEHOST\0" (18) rounded to 112; room for the objects exactly, so Wine's
        // placement runs 88 bytes past what the caller passed (the slack absorbs it).
        let capacity = 112 + objects.len();
        let (wine, r) = query(Placement::WineCompat, capacity, PERF_DATA_BLOCK_LEN);
        let QueryValue::Data { size } = r else {
            panic!("{r:?}")
        };
        let n = normalize_reply(&wine, capacity, size, FILL).unwrap();
        assert_eq!(
            n.layout,
            Layout::Wine80Offset {
                past_buffer: PERF_DATA_BLOCK_LEN
            }
        );
    }

    #[test]
    fn other_differences_are_not_excused() {
        let (mut wine, r) = query(Placement::WineCompat, 4096, 0);
        let QueryValue::Data { size } = r else {
            panic!("{r:?}")
        };
        // A byte written into Wine's gap: not the known layout any more.
        let h = 112;
        wine[h + 5] = 0;
        let e = normalize_reply(&wine, 4096, size, FILL).unwrap_err();
        assert!(e.starts_with("decoder:"), "{e}");
        // A size that disagrees with TotalByteLength.
        let (doc, _) = query(Placement::Windows, 4096, 0);
        let e = normalize_reply(&doc, 4096, size - 8, FILL).unwrap_err();
        assert!(e.contains("TotalByteLength"), "{e}");
        // A reply too short for the header.
        let e = normalize_reply(&doc, 4096, 40, FILL).unwrap_err();
        assert!(e.contains("shorter than"), "{e}");
    }

    #[test]
    fn report_collects_deviations() {
        let mut r = Report::default();
        r.expect_eq("count", 3, 3);
        r.expect_eq("status", 0, 234);
        assert_eq!(r.passed, 1);
        assert_eq!(r.failures, ["status: expected 0, got 234"]);
        assert_eq!(r.expect_ok::<u8>("decode", Err("bad".into())), None);
        assert_eq!(r.failures.len(), 2);
    }

    #[test]
    fn replies_compare_except_volatile_counters() {
        let (objects, count) = fixture_objects();
        let none = Volatile::new();
        compare_replies(&objects, count, &objects, count, &none).unwrap();
        // Change the first counter value of the first object's first instance.
        let o = pcw_core::v1::validate::objects(&objects, 0, Expect::Any)
            .next()
            .unwrap()
            .unwrap();
        let index = o.header().object_name_title_index;
        let c = o.counters().next().unwrap();
        let instance = o.instances().next().unwrap();
        let at = instance.block().as_ptr() as usize - objects.as_ptr() as usize
            + c.counter_offset as usize;
        let mut changed = objects.clone();
        changed[at] ^= 0x5a;
        let e = compare_replies(&objects, count, &changed, count, &none).unwrap_err();
        assert!(
            e.starts_with(&format!("first difference at byte {at}")),
            "{e}"
        );
        let volatile = volatile_counters(&objects, count, &changed, count).unwrap();
        assert_eq!(volatile, Volatile::from([(index, 0)]));
        compare_replies(&objects, count, &changed, count, &volatile).unwrap();
        // A length difference is never masked.
        let e = compare_replies(&objects, count, &objects[..8], count, &volatile).unwrap_err();
        assert!(e.starts_with("expected"), "{e}");
    }

    #[test]
    fn collect_indexes_validates() {
        let (objects, count) = fixture_objects();
        let idx = collect_indexes(&objects, count, Expect::Data).unwrap();
        assert_eq!(idx.len(), count as usize);
        assert!(collect_indexes(&objects, count + 1, Expect::Data).is_err());
    }
}
