//! The snapshot scenario (the driver↔DLL path of the V1 shim): N instances of a 4-counter set
//! encoded with `pcw_core::snapshot::SnapshotWriter` (what the driver does for
//! `IOCTL_PCW_SNAPSHOT`) and decoded with `Snapshot::parse` plus a walk over every instance's
//! name and values (what the DLL does before writing V1 objects), each compared with a `memcpy`
//! of the snapshot's bytes.

use pcw_core::snapshot::{PARENT_NONE, Snapshot, SnapshotError, SnapshotHeader, SnapshotWriter};

use crate::utf16;

/// Counters per instance.
pub const COUNTERS: u16 = 4;

/// The data to encode.
pub struct SnapshotData {
    names: Vec<Vec<u16>>,
    values: Vec<[u64; COUNTERS as usize]>,
}

const HEADER: SnapshotHeader = SnapshotHeader {
    perf_time: 123_456_789,
    perf_freq: 10_000_000,
    system_time: crate::NOOP_TIME,
};

impl SnapshotData {
    /// `n` instances named `Queue 000000`, ….
    pub fn new(n: usize) -> Self {
        Self {
            names: (0..n).map(|i| utf16(&format!("Queue {i:06}"))).collect(),
            values: (0..n as u64).map(|i| [i, i * 3, i << 33, !i]).collect(),
        }
    }

    /// The bytes the snapshot takes.
    ///
    /// # Panics
    /// If the data cannot be encoded (a bench setup error).
    pub fn len(&self) -> usize {
        let mut w = SnapshotWriter::measuring(HEADER);
        self.write(&mut w).expect("measurable");
        w.finish().expect("measurable")
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn write(&self, w: &mut SnapshotWriter<'_>) -> Result<(), SnapshotError> {
        let count = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        w.begin_set(0, true, COUNTERS, count)?;
        for (i, (name, values)) in self.names.iter().zip(&self.values).enumerate() {
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            w.instance(id, PARENT_NONE, name, values)?;
        }
        Ok(())
    }

    /// Encodes into `buf`; the bytes written.
    ///
    /// # Errors
    /// As `SnapshotWriter`.
    #[inline(never)]
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, SnapshotError> {
        let mut w = SnapshotWriter::new(buf, HEADER);
        self.write(&mut w)?;
        w.finish()
    }
}

/// Parses `bytes` and reads every instance's name and values; returns a checksum so nothing
/// is optimised away.
///
/// # Errors
/// As `Snapshot::parse`.
#[inline(never)]
pub fn decode(bytes: &[u8]) -> Result<u64, SnapshotError> {
    let snapshot = Snapshot::parse(bytes)?;
    let mut sum = 0u64;
    for set in snapshot.sets() {
        for instance in set.instances() {
            sum = sum.wrapping_add(u64::from(instance.id()));
            sum = sum.wrapping_add(instance.name_utf16().map(u64::from).sum::<u64>());
            sum = sum.wrapping_add(instance.values().fold(0, u64::wrapping_add));
        }
    }
    Ok(sum)
}
