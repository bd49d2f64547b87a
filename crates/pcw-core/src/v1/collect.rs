// SPDX-License-Identifier: MIT OR Apache-2.0
//! `CollectPerformanceData` as a pure function (Microsoft: the `PM_COLLECT_PROC` /
//! `CollectPerformanceData` reference page; summary in `docs/v1-format.md`): a query and the
//! caller's buffer in, one of the contract's outcomes out.
//!
//! | outcome | return code | `*lppData` | `*lpcbTotalBytes` | `*lpNumObjectTypes` |
//! |---|---|---|---|---|
//! | [`Collected::Success`] | `ERROR_SUCCESS` | advanced by `bytes` | `bytes` (8-aligned) | `objects` |
//! | [`Collected::MoreData`] | `ERROR_MORE_DATA` | unchanged | 0 | 0 |
//! | [`Collected::NotMine`] | `ERROR_SUCCESS` | unchanged | 0 | 0 |
//! | [`Collected::Failed`] | `ERROR_SUCCESS` (the error goes to the event log) | unchanged | 0 | 0 |
//!
//! On every outcome but `Success` the caller's buffer is left exactly as it was.

use crate::v1::query::{self, ItemList, Query};
use crate::v1::writer::{self, Mode, ObjectSource, WriteError};

/// `ERROR_SUCCESS`.
pub const ERROR_SUCCESS: u32 = 0;
/// `ERROR_MORE_DATA`.
pub const ERROR_MORE_DATA: u32 = 234;

/// Most objects one provider may serve in a reply.
pub const MAX_OBJECTS: usize = 64;

/// The outcome of one collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collected {
    /// Data was written.
    Success {
        /// Bytes written, a multiple of 8.
        bytes: usize,
        /// Objects written.
        objects: usize,
    },
    /// The buffer is too small for the requested objects; nothing was written.
    MoreData,
    /// None of the requested objects is ours (or the query asks for nothing a provider serves).
    NotMine,
    /// Our objects were requested but cannot be written; nothing was written. The contract says
    /// to return `ERROR_SUCCESS` with no data and report the error through the event log.
    Failed(WriteError),
}

impl Collected {
    /// The Win32 code `CollectPerformanceData` returns for this outcome.
    pub const fn status(&self) -> u32 {
        match self {
            Self::MoreData => ERROR_MORE_DATA,
            _ => ERROR_SUCCESS,
        }
    }

    /// Bytes to report through `*lpcbTotalBytes` (and to advance `*lppData` by).
    pub const fn bytes(&self) -> usize {
        match self {
            Self::Success { bytes, .. } => *bytes,
            _ => 0,
        }
    }

    /// Objects to report through `*lpNumObjectTypes`.
    pub const fn objects(&self) -> usize {
        match self {
            Self::Success { objects, .. } => *objects,
            _ => 0,
        }
    }
}

/// Which objects a query selects.
#[derive(Clone, Copy)]
enum Selection<'q> {
    /// The objects whose header's `costly` is this.
    Costly(bool),
    /// The objects whose `ObjectNameTitleIndex` is listed.
    Items(ItemList<'q>),
}

impl Selection<'_> {
    /// Whether `o` is part of the reply.
    #[inline]
    fn wants(&self, o: &dyn ObjectSource) -> bool {
        let (costly, index) = o.selection_key(writer::sealed::Token);
        match self {
            Self::Costly(wanted) => costly == *wanted,
            Self::Items(list) => list.contains(index),
        }
    }
}

/// Answers one `CollectPerformanceData` call for `objects` into `buf`.
///
/// `Global` selects the objects whose header is not `costly`, `Costly` the others, an item list
/// the objects whose `ObjectNameTitleIndex` is listed, the metadata queries the same sets as
/// definitions only. At most [`MAX_OBJECTS`] objects are considered.
pub fn collect(query: Option<&[u16]>, objects: &[&dyn ObjectSource], buf: &mut [u8]) -> Collected {
    let (mode, wanted) = match query::classify(query) {
        Query::Global => (Mode::Data, Selection::Costly(false)),
        Query::Costly => (Mode::Data, Selection::Costly(true)),
        Query::Metadata { costly } => (Mode::Metadata, Selection::Costly(costly)),
        Query::Items(list) => (Mode::Data, Selection::Items(list)),
        Query::Null | Query::Foreign | Query::NameTable => return Collected::NotMine,
    };
    // The selection is the objects `wanted` accepts, asked once each here: a bit per object of
    // the first 64 (the writer's two passes test the bits), counted.
    let mut selected = 0u64;
    let mut count = 0usize;
    let mut last = None;
    for (i, o) in objects.iter().enumerate() {
        if wanted.wants(*o) {
            count += 1;
            last = Some(*o);
            if let Some(bit) = 1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)) {
                selected |= bit;
            }
        }
    }
    if count == 0 {
        return Collected::NotMine;
    }
    if count > MAX_OBJECTS {
        return Collected::Failed(WriteError::TooManyObjects);
    }
    // One object (the usual reply) written in one go; more objects than bits: the writer asks
    // `wanted` itself.
    let written = if let (1, Some(object)) = (count, last) {
        writer::write_one(object, mode, buf)
    } else if objects.len() <= 64 {
        writer::write_selected(objects, |i, _| selected >> i & 1 != 0, mode, buf)
    } else {
        writer::write_selected(objects, |_, o| wanted.wants(o), mode, buf)
    };
    match written {
        Ok(w) => Collected::Success {
            bytes: w.bytes,
            objects: w.objects,
        },
        Err(WriteError::NoSpace { .. }) => Collected::MoreData,
        Err(e) => Collected::Failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_type::CounterType;
    use crate::testing::{counter, header};
    use crate::v1::validate::{self, Expect};
    use crate::v1::writer::{CounterSpec, InstancesDesc, ObjectDesc};

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    const COUNTERS: [CounterSpec; 1] = [counter(CounterType::Rawcount, 4, 4)];

    fn object(index: u32, costly: bool) -> ObjectDesc<'static> {
        ObjectDesc {
            header: header(index, costly),
            counters: &COUNTERS,
            instances: InstancesDesc::Single(&[42]),
        }
    }

    fn run(query: Option<&str>, size: usize) -> (Collected, Vec<u8>) {
        let a = object(238, false);
        let b = object(2380, false);
        let c = object(740, true);
        let objects: [&dyn ObjectSource; 3] = [&a, &b, &c];
        let units: Option<Vec<u16>> = query.map(|q| q.encode_utf16().chain([0]).collect());
        let mut buf = vec![0xEEu8; size];
        let out = collect(units.as_deref(), &objects, &mut buf);
        (out, buf)
    }

    fn indexes(buf: &[u8], out: Collected) -> Vec<u32> {
        let bytes = &buf[..out.bytes()];
        validate::validate_objects(bytes, out.objects(), Expect::Any).unwrap();
        validate::objects(bytes, 0, Expect::Any)
            .map(|o| o.unwrap().header().object_name_title_index)
            .collect()
    }

    #[test]
    fn selection_follows_the_query() {
        let cases: [(Option<&str>, &[u32]); 11] = [
            (Some("Global"), &[238, 2380]),
            (Some("global"), &[238, 2380]),
            (Some(""), &[238, 2380]),
            (Some("Costly"), &[740]),
            (Some("238"), &[238]),
            (Some("2380 740"), &[2380, 740]),
            (Some("0238\t9999"), &[238]),
            (Some("MetadataGlobal"), &[238, 2380]),
            (Some("MetadataCostly"), &[740]),
            (Some("OLD_Global"), &[238, 2380]),
            (Some("740 238"), &[238, 740]),
        ];
        for (query, expected) in cases {
            let (out, buf) = run(query, 4096);
            assert_eq!(out.status(), ERROR_SUCCESS, "{query:?}");
            assert_eq!(out.bytes() % 8, 0);
            assert_eq!(indexes(&buf, out), expected, "{query:?}");
        }
    }

    #[test]
    fn metadata_replies_carry_no_instances() {
        let (out, buf) = run(Some("MetadataGlobal"), 4096);
        let bytes = &buf[..out.bytes()];
        validate::validate_objects(bytes, 2, Expect::Metadata).unwrap();
        assert_eq!(out.bytes(), 2 * 104);
    }

    #[test]
    fn not_mine_leaves_everything_alone() {
        for query in [
            None,
            Some("23"),
            Some("Foreign"),
            Some("Foreigh"),
            Some("Counter 9"),
            Some("G"),
        ] {
            let (out, buf) = run(query, 4096);
            assert_eq!(out, Collected::NotMine, "{query:?}");
            assert_eq!(
                (out.status(), out.bytes(), out.objects()),
                (ERROR_SUCCESS, 0, 0)
            );
            assert!(buf.iter().all(|b| *b == 0xEE));
        }
    }

    #[test]
    fn more_data_at_every_short_size() {
        // Two objects, and one (written in one go), first and last of the list.
        for (query, objects) in [("Global", 2), ("Costly", 1), ("238", 1), ("2380", 1)] {
            let (full, _) = run(Some(query), 4096);
            let needed = full.bytes();
            assert_eq!(needed, objects * 112, "{query}");
            for size in 0..needed {
                let (out, buf) = run(Some(query), size);
                assert_eq!(out, Collected::MoreData, "{query}");
                assert_eq!(
                    (out.status(), out.bytes(), out.objects()),
                    (ERROR_MORE_DATA, 0, 0)
                );
                assert!(buf.iter().all(|b| *b == 0xEE), "{query}: size {size}");
            }
            let (out, _) = run(Some(query), needed);
            assert_eq!(
                out,
                Collected::Success {
                    bytes: needed,
                    objects
                },
                "{query}"
            );
        }
    }

    #[test]
    fn too_many_objects_fail_instead_of_being_dropped() {
        let objects: Vec<ObjectDesc<'static>> = (0..=MAX_OBJECTS as u32)
            .map(|i| object(2 * i, false))
            .collect();
        let refs: Vec<&dyn ObjectSource> = objects.iter().map(|o| o as &dyn ObjectSource).collect();
        let mut buf = vec![0u8; 64 * 1024];
        assert_eq!(collect(None, &refs, &mut buf), Collected::NotMine);
        let global: Vec<u16> = "Global".encode_utf16().collect();
        assert_eq!(
            collect(Some(&global), &refs, &mut buf),
            Collected::Failed(WriteError::TooManyObjects)
        );
        assert!(buf.iter().all(|b| *b == 0));
        let fits = &refs[..MAX_OBJECTS];
        assert!(matches!(
            collect(Some(&global), fits, &mut buf),
            Collected::Success {
                objects: MAX_OBJECTS,
                ..
            }
        ));
    }

    #[test]
    fn a_bad_description_fails_quietly() {
        let bad = [CounterSpec {
            offset: 2,
            ..COUNTERS[0]
        }];
        let obj = ObjectDesc {
            counters: &bad,
            ..object(238, false)
        };
        let mut buf = [0xEEu8; 256];
        let out = collect(
            Some(&[u16::from(b'2'), u16::from(b'3'), u16::from(b'8')]),
            &[&obj],
            &mut buf,
        );
        assert!(matches!(
            out,
            Collected::Failed(WriteError::CounterOffsetInHeader { counter: 0 })
        ));
        assert_eq!(
            (out.status(), out.bytes(), out.objects()),
            (ERROR_SUCCESS, 0, 0)
        );
        assert!(buf.iter().all(|b| *b == 0xEE));
    }
}
