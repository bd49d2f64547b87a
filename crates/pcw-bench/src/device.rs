// SPDX-License-Identifier: MIT OR Apache-2.0
//! The device path end to end: what a V1 consumer waits for between `CollectPerformanceData`
//! and its reply, minus the kernel transition. The driver writes the snapshot
//! (`IOCTL_PCW_SNAPSHOT`, `SnapshotWriter` as `src/snapshot.rs` drives it), the DLL parses and
//! checks it (`Snapshot::parse`, `pcw_perfdll::objects::check`) and writes the V1 object from
//! it (`SetObject`, `collect`: the object's definitions, then the set's records, which are
//! already V1 instances, copied) — here over one 4-counter set of N instances, the
//! object of [`crate::v1`]. Not included, on either side: the system call and the I/O
//! manager's copy of the `METHOD_BUFFERED` buffer (one `memcpy` of the snapshot).
//!
//! The C baseline (`dp_path` in `c/perfgen.c`) does the same work the plain way: sizes and
//! writes a snapshot of plain records (id, parent, name length, the values as `u64`s, the
//! name), decodes it into its own instance array checking lengths only, and writes V1 with the
//! PerfGen-style `pg_collect`. Both write the same V1 bytes (tested).

use pcw_core::snapshot::{Snapshot, SnapshotError};

use crate::c::{self, PgInstance};
use crate::snap::dll_check;
use crate::v1::{self, V1Object, bytes_mut, bytes_of};

/// The DLL's snapshot buffer: 8-aligned, grown when a snapshot needs more room (the first call
/// here, as the DLL's `SnapshotBuf` does at its first collection), then reused.
#[derive(Debug, Default)]
pub struct SnapshotBuf {
    words: Vec<u64>,
}

/// One device-path collection by pcw-rs: driver snapshot, DLL parse and check, V1 write into
/// `out`; the V1 bytes written (0 on any failure).
#[inline(never)]
pub fn path_ours(object: &V1Object, snap: &mut SnapshotBuf, out: &mut [u8]) -> usize {
    let len = match object.encode_snapshot(bytes_mut(&mut snap.words)) {
        Ok(len) => len,
        Err(SnapshotError::NoSpace { needed }) => {
            snap.words.resize(needed.div_ceil(8), 0);
            match object.encode_snapshot(bytes_mut(&mut snap.words)) {
                Ok(len) => len,
                Err(_) => return 0,
            }
        }
        Err(_) => return 0,
    };
    let Ok(snapshot) = Snapshot::parse(bytes_of(&snap.words, len)) else {
        return 0;
    };
    if !dll_check(&snapshot) {
        return 0;
    }
    v1::collect_ours(&object.set_object(&snapshot), out).bytes()
}

/// What a design that wrote the records in place would still do, for the device path's floor:
/// the driver's snapshot written straight into the buffer the reply goes to (the consumer's,
/// handed down by the DLL) and the DLL's check of it there, with no V1 copy after them.
/// [`path_ours`] minus that copy; not a path of its own (the reply would still need its
/// object's header and definitions in front of the records, and the snapshot's identities
/// moved out of their way), so the time it takes is a lower bound for such a design with
/// today's encode and check. The snapshot's length (0 on any failure); `buf` must hold it.
#[inline(never)]
pub fn in_place_floor(object: &V1Object, buf: &mut [u64]) -> usize {
    let Ok(len) = object.encode_snapshot(bytes_mut(buf)) else {
        return 0;
    };
    match Snapshot::parse(bytes_of(buf, len)) {
        Ok(snapshot) if dll_check(&snapshot) => len,
        _ => 0,
    }
}

/// The C baseline's buffers: its snapshot and its decoded instances, allocated once.
#[derive(Debug)]
pub struct CBuffers {
    snap: Vec<u64>,
    scratch: Vec<PgInstance>,
}

impl CBuffers {
    /// Room for the snapshot of `object` (its instances' records: at most 16 + 32 + 2 048 bytes
    /// each, far less for the short names used) and its decoded instances.
    pub fn new(object: &V1Object) -> Self {
        let pg = object.pg();
        Self {
            snap: vec![0; 2 + object.len() * (6 + object.max_name_words())],
            scratch: vec![
                PgInstance {
                    name: core::ptr::null(),
                    name_units: 0,
                    unique_id: 0,
                    values: [0; 8],
                };
                pg.num_instances
            ],
        }
    }
}

/// One device-path collection by the C baseline; the V1 bytes written (0 on failure).
#[inline(never)]
pub fn path_c(object: &V1Object, buffers: &mut CBuffers, out: &mut [u8]) -> usize {
    let pg = object.pg();
    let snap_len = size_of_val(buffers.snap.as_slice());
    // SAFETY: `pg` points into `object`, alive for the call; each buffer is writable for the
    // length given (`scratch` holds `pg.num_instances` instances, as `CBuffers::new` sized it).
    unsafe {
        c::dp_path(
            &raw const pg,
            buffers.snap.as_mut_ptr().cast::<u8>(),
            snap_len,
            buffers.scratch.as_mut_ptr(),
            out.as_mut_ptr(),
            out.len(),
        )
    }
}
