// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver↔DLL snapshot format: what `IOCTL_PCW_SNAPSHOT` returns, written by the
//! kernel driver into the caller's output buffer and read back by the V1 perf DLL from bytes it
//! must treat as untrusted.
//!
//! A snapshot is the state of every counterset the driver serves at one instant: a header with
//! the driver's clocks, then one *set* record per counterset, each carrying its counters' sizes,
//! its instances' identities and its *instance* records, in counterset descriptor order. An
//! instance record is byte for byte the V1 instance a perf DLL returns for it:
//! `PERF_INSTANCE_DEFINITION`, name, `PERF_COUNTER_BLOCK`.
//!
//! # Layout
//!
//! Little-endian, explicit offsets ([`field`]), every record starts 8-byte aligned (relative to
//! the start of the snapshot; the reader does not require the slice itself to be aligned).
//!
//! | record | offset | size | field |
//! |---|---|---|---|
//! | header | 0 | 4 | magic, [`SNAPSHOT_MAGIC`] (`"PCWS"`) |
//! | | 4 | 2 | format version, [`SNAPSHOT_VERSION`] |
//! | | 6 | 2 | header length, [`HEADER_LEN`] (40) |
//! | | 8 | 4 | total length of the snapshot, header included (multiple of 8) |
//! | | 12 | 4 | set count (≤ [`MAX_SETS`]) |
//! | | 16 | 8 | `perf_time`: the performance counter (`KeQueryPerformanceCounter`) at the snapshot |
//! | | 24 | 8 | `perf_freq`: its frequency in Hz |
//! | | 32 | 8 | `system_time`: UTC system time, 100 ns since 1601 (`KeQuerySystemTime`) |
//! | set | +0 | 4 | set length: from this record's start to the next set (multiple of 8) |
//! | | +4 | 2 | the counterset's index in the manifest (strictly increasing across sets) |
//! | | +6 | 2 | flags: bit 0 = multi-instance ([`SET_FLAG_MULTI`]); other bits zero |
//! | | +8 | 2 | counter count (≤ [`MAX_COUNTERS`]) |
//! | | +10 | 2 | counter block length: bytes of each instance's `PERF_COUNTER_BLOCK`, as the sizes below lay it out |
//! | | +12 | 4 | instance count (≤ [`MAX_INSTANCES`]; ≤ 1 for a single-instance set) |
//! | | +16 | 1 × counters | counter sizes, one byte per counter in descriptor order: 0, 4 or 8; zero-padded to a multiple of 8 |
//! | | then | 8 × instances | identities: per instance, its id (4 bytes) and its parent (4 bytes: zero-based position of the parent instance in the parent object, [`PARENT_NONE`] for none) |
//! | | then | | the instance records, back to back |
//! | instance | +0 | 4 | `ByteLength`: 24 + the name area |
//! | | +4 | 4 | `ParentObjectTitleIndex`: zero |
//! | | +8 | 4 | `ParentObjectInstance`: zero |
//! | | +12 | 4 | `UniqueID`: −1 (`PERF_NO_UNIQUE_ID`) |
//! | | +16 | 4 | `NameOffset`: 24 |
//! | | +20 | 4 | `NameLength`: 2 × name length in units + 2 (name length ≤ [`MAX_NAME_UNITS`]) |
//! | | +24 | `align8(NameLength)` | name area: the name, UTF-16LE, no unit is 0; then a 0 unit and zero bytes to a multiple of 8 |
//! | | then | counter block length | `PERF_COUNTER_BLOCK`: `ByteLength` (4 bytes, the counter block length), then each counter's value in its low `size` bytes at the offset the V1 layout gives it (after the 4-byte header, each counter aligned to its size, a size of 0 to 4, in order); every other byte zero |
//!
//! A set's records are therefore exactly the instances of the V1 object a perf DLL returns for
//! the counterset when its counter definitions have these sizes at those offsets (the layout
//! `pcw_core::v1::writer::assign_offsets` gives): the DLL copies them as one block
//! (`crate::v1::from_snapshot`), and a set's reply size follows from its length
//! ([`SetView::name_areas_len`]).
//!
//! The format is canonical: every reserved field and padding byte holds its fixed value, the
//! lengths hold the only values consistent with the records, and the records end exactly at the
//! total length, so two equal snapshots have equal bytes (the fuzz target re-encodes what it
//! accepts and compares).
//!
//! ## Choices
//!
//! - **Version 3: records the DLL copies.** The writer, in the driver, lays each instance out
//!   as V1 does, so the DLL's work per instance is a check while parsing and a share of one
//!   copy per set; the identities V1 does not carry (id, parent) sit in a table of their own
//!   instead of inside the records. Version 2 kept one `u64` per counter and an offset table,
//!   so the DLL re-encoded every record; version 1 also placed names differently.
//! - **Sequential access.** Instances are variable-length (names) and there is no offset table:
//!   [`SetView::instances`] walks them, [`SetView::instance`] is O(index). Sets are walked
//!   through their set length: finding a set is O(sets), never O(instances).
//! - **Counter sizes** are carried, not only the count, so a reader checks that the DLL's counter
//!   definitions lay the block out the same way before copying it, and reads values without
//!   knowing the manifest. A value stored in 4 bytes keeps its low 32 bits, as V1 shows it.
//! - **Single-instance sets** carry zero instances (the driver has no data for it yet) or exactly
//!   one, whose values are the counterset's; its id, parent and name are carried verbatim and are
//!   the DLL's to ignore.
//! - **Parent.** The parent object is a property of the manifest, known to the DLL from its tables,
//!   and is not carried here; the parent identity is the instance's zero-based position in that
//!   object or [`PARENT_NONE`]. The reader cannot know the parent object's instance count, so it
//!   does not bound this value. The records' own parent fields are zero, as the DLL returns them.
//! - **Names** have no NUL unit because V1 names are NUL-terminated (an embedded NUL would cut
//!   the name); this also makes a corrupted name length detectable when it stays in the padding.
//! - **Clocks** are carried as the driver read them and are not validated (a zero frequency is
//!   the consumer's concern).
//!
//! # Limits
//!
//! [`MAX_SETS`] sets, [`MAX_COUNTERS`] counters per set, [`MAX_INSTANCES`] instances per set,
//! [`MAX_NAME_UNITS`] UTF-16 units per name, [`MAX_TOTAL_LEN`] bytes in all (the total length is
//! a `u32`).
//!
//! # Writing
//!
//! [`SnapshotWriter`] writes into a caller's buffer without allocating, or only measures.
//! [`SnapshotWriter::instances`] adds a set's instances in one call when the counter count is
//! known where the records are made (the driver's and the benches' sets): its checks are made
//! once per set and its loop only copies each record (testing the name for NUL units as it
//! goes), checks its length and fills its identity;
//! [`SnapshotWriter::instance`] adds one instance of any counter count. When the buffer runs
//! out it keeps counting, so [`SnapshotWriter::finish`] reports the exact size of the whole
//! snapshot in [`SnapshotError::NoSpace`] (the driver returns it with `STATUS_BUFFER_TOO_SMALL`).
//! Every byte up to the returned length is written, padding included, so no earlier buffer
//! content (kernel memory) leaks through; nothing is ever written outside the buffer. When
//! space ran out but the buffer holds at least [`HEADER_LEN`] bytes, those bytes are a header
//! whose total length is the needed size ([`required_len`] reads it back).
//!
//! # Reading
//!
//! [`Snapshot::parse`] checks everything up front — magic, version, every length, count, size,
//! limit, alignment, name, fixed field and padding byte, and that the records end exactly at the
//! total length, which must be the length of the input. Iteration and accessors are then
//! infallible.
//!
//! # Panic freedom
//!
//! Nothing here panics or indexes out of bounds, whatever the bytes or the calls: every field
//! goes through `crate::bytes`, all arithmetic on untrusted values is checked, and views are
//! only handed out over validated bytes.

mod check;
mod error;
mod layout;
mod view;
mod writer;

pub use error::SnapshotError;
pub use layout::SnapshotHeader;
pub use view::{InstanceView, Instances, SetView, Sets, Snapshot, required_len};
pub use writer::{CounterSizes, Record, SnapshotWriter};

/// The snapshot's magic number, `"PCWS"`, as stored at offset 0.
pub const SNAPSHOT_MAGIC: [u8; 4] = *b"PCWS";
/// The format version this module writes and reads.
pub const SNAPSHOT_VERSION: u16 = 3;
/// Length of the snapshot header in bytes.
pub const HEADER_LEN: usize = field::header::LEN;
/// Most sets (countersets) in one snapshot.
pub const MAX_SETS: u32 = 1024;
/// Most counters in one set.
pub const MAX_COUNTERS: u16 = 1024;
/// Most instances in one set.
pub const MAX_INSTANCES: u32 = 1 << 20;
/// Most UTF-16 units in an instance name (1024 with V1's terminating NUL).
pub const MAX_NAME_UNITS: u16 = 1023;
/// Largest snapshot: the biggest multiple of 8 that fits the `u32` total length.
pub const MAX_TOTAL_LEN: usize = 0xFFFF_FFF8;
/// Set flag: the counterset is multi-instance.
pub const SET_FLAG_MULTI: u16 = 1;
/// The parent of an instance that has none.
pub const PARENT_NONE: u32 = u32::MAX;

/// Field offsets, in bytes from the start of each record (see the module's layout table).
#[expect(
    missing_docs,
    reason = "each constant is the offset of the field of the layout table of that name"
)]
pub mod field {
    /// Snapshot header offsets.
    pub mod header {
        pub const MAGIC: usize = 0;
        pub const VERSION: usize = 4;
        pub const HEADER_LEN: usize = 6;
        pub const TOTAL_LEN: usize = 8;
        pub const SET_COUNT: usize = 12;
        pub const PERF_TIME: usize = 16;
        pub const PERF_FREQ: usize = 24;
        pub const SYSTEM_TIME: usize = 32;
        pub const LEN: usize = 40;
    }
    /// Set record offsets (the counter sizes follow the fixed part, then the identities).
    pub mod set {
        pub const SET_LEN: usize = 0;
        pub const INDEX: usize = 4;
        pub const FLAGS: usize = 6;
        pub const COUNTER_COUNT: usize = 8;
        pub const BLOCK_LEN: usize = 10;
        pub const INSTANCE_COUNT: usize = 12;
        pub const SIZES: usize = 16;
        pub const LEN: usize = 16;
    }
    /// Offsets in one entry of a set's identity table.
    pub mod identity {
        pub const ID: usize = 0;
        pub const PARENT: usize = 4;
        pub const LEN: usize = 8;
    }
    /// Counter block offsets: a V1 `PERF_COUNTER_BLOCK`, whose values follow its header.
    pub use crate::v1::wire::field::counter_block as block;
    /// Instance record offsets: a V1 `PERF_INSTANCE_DEFINITION`, whose name follows it.
    pub use crate::v1::wire::field::instance_definition as instance;
}

#[cfg(test)]
mod tests;
