// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fixtures for tests of the V1 writer, the wire format and their consumers: counter
//! definitions, object headers and whole `PERF_DATA_BLOCK`s built one way everywhere.
//!
//! Compiled for this crate's own tests and, behind the `testing` feature, for other crates'
//! tests, benchmarks and fuzz targets; never part of a driver or DLL build.
//!
//! ```
//! use pcw_core::counter_type::CounterType;
//! use pcw_core::testing::{counter, data_block, header, titled_counter};
//! use pcw_core::v1::writer::{InstancesDesc, Mode, ObjectDesc, ObjectSource};
//!
//! // A fraction and its base, then a 64-bit rate, in one single-instance object.
//! let counters = [
//!     titled_counter(1010, CounterType::RawFraction, 4, 4),
//!     counter(CounterType::RawBase, 4, 8),
//!     titled_counter(1012, CounterType::BulkCount, 8, 16),
//! ];
//! let object = ObjectDesc {
//!     header: header(1000, false),
//!     counters: &counters,
//!     instances: InstancesDesc::Single(&[1, 2, 3]),
//! };
//! let sources: [&dyn ObjectSource; 1] = [&object];
//! let block = data_block("HOST", &sources, Mode::Data).unwrap();
//! assert_eq!(&block[..4], b"P\0E\0");
//! ```

use alloc::vec;
use alloc::vec::Vec;

use crate::counter_type::{CounterType, DetailLevel};
use crate::v1::wire::{
    self, DataBlock, DataBlockRepr, PERF_DATA_REVISION, PERF_DATA_VERSION, SystemTime,
};
use crate::v1::writer::{
    CounterSpec, Mode, ObjectHeader, ObjectSource, WriteError, objects_len, write_objects,
};

/// A counter of `counter_type`, `size` bytes at `offset` in the counter block, with no title
/// indexes, default scale 0 and novice detail.
pub const fn counter(counter_type: CounterType, size: u32, offset: u32) -> CounterSpec {
    titled_counter(0, counter_type, size, offset)
}

/// [`counter`] with name title `index` and help title `index + 1`; an `index` of 0 leaves
/// both 0 (an untitled counter such as a base).
pub const fn titled_counter(
    index: u32,
    counter_type: CounterType,
    size: u32,
    offset: u32,
) -> CounterSpec {
    CounterSpec {
        name_title_index: index,
        help_title_index: if index == 0 { 0 } else { index + 1 },
        default_scale: 0,
        detail_level: DetailLevel::Novice,
        counter_type,
        size,
        offset,
    }
}

/// An object header with name title `index` and help title `index + 1`, novice detail,
/// default counter 0, no object time of its own, and `costly` as given.
pub const fn header(index: u32, costly: bool) -> ObjectHeader {
    ObjectHeader {
        name_title_index: index,
        help_title_index: index + 1,
        detail_level: DetailLevel::Novice,
        default_counter: 0,
        perf_time: 0,
        perf_freq: 0,
        costly,
    }
}

/// `sizeof(PERF_DATA_BLOCK)`: where the computer name starts.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`PERF_DATA_BLOCK` is 88 bytes, which fits any integer type"
)]
const NAME_OFFSET: u32 = wire::field::data_block::LEN as u32;

/// The `SystemTime` of every fixture block: 2026-11-22 12:34:56.789 UTC.
pub const SYSTEM_TIME: SystemTime = SystemTime {
    year: 2026,
    month: 11,
    day_of_week: 0,
    day: 22,
    hour: 12,
    minute: 34,
    second: 56,
    milliseconds: 789,
};

/// The `PERF_DATA_BLOCK` header of a fixture block with the given lengths and object count:
/// little-endian, version 1 revision 1, default object 238, [`SYSTEM_TIME`], a 10 MHz
/// `PerfFreq` with `PerfTime` 123456789012, `PerfTime100nSec` 134082476967890000, and the
/// computer name right after the header.
pub const fn data_block_header(
    total_byte_length: u32,
    header_length: u32,
    num_object_types: u32,
    system_name_length: u32,
) -> DataBlockRepr {
    DataBlockRepr {
        little_endian: 1,
        version: PERF_DATA_VERSION,
        revision: PERF_DATA_REVISION,
        total_byte_length,
        header_length,
        num_object_types,
        default_object: 238,
        system_time: SYSTEM_TIME,
        perf_time: 123_456_789_012,
        perf_freq: 10_000_000,
        perf_time_100nsec: 134_082_476_967_890_000,
        system_name_length,
        system_name_offset: NAME_OFFSET,
    }
}

/// A whole `PERF_DATA_BLOCK` as a registry query returns it: [`data_block_header`], the
/// computer name (UTF-16LE with its NUL), zeros up to the next multiple of 8, then `sources`
/// written by the V1 writer in `mode`.
///
/// # Errors
/// The writer's error for a description it cannot write, or [`WriteError::TooLarge`] when
/// the block's length does not fit a `u32`.
pub fn data_block(
    computer: &str,
    sources: &[&dyn ObjectSource],
    mode: Mode,
) -> Result<Vec<u8>, WriteError> {
    let mut objects = vec![0u8; objects_len(sources, mode)?];
    let written = write_objects(sources, mode, &mut objects)?;
    objects.truncate(written.bytes);
    let count = u32::try_from(written.objects).map_err(|_| WriteError::TooLarge)?;
    data_block_of(computer, &objects, count)
}

/// [`data_block`] around objects already in wire form: `num_objects` objects in `objects`.
///
/// # Errors
/// [`WriteError::TooLarge`] when the block's length does not fit a `u32`.
pub fn data_block_of(
    computer: &str,
    objects: &[u8],
    num_objects: u32,
) -> Result<Vec<u8>, WriteError> {
    let name: Vec<u16> = computer.encode_utf16().chain([0]).collect();
    let name_len = name.len() * 2;
    let header_len =
        crate::align8(wire::field::data_block::LEN + name_len).ok_or(WriteError::TooLarge)?;
    let len = |n: usize| u32::try_from(n).map_err(|_| WriteError::TooLarge);
    let repr = data_block_header(
        len(header_len + objects.len())?,
        len(header_len)?,
        num_objects,
        len(name_len)?,
    );
    let mut buf = vec![0u8; header_len];
    // `header_len` holds the fixed header and the name, so the split and the view succeed.
    if let Some((fixed, rest)) = buf.split_at_mut_checked(wire::field::data_block::LEN) {
        if let Ok(mut view) = DataBlock::new_checked(fixed) {
            repr.emit(&mut view);
        }
        for (unit, at) in name.iter().zip(rest.chunks_exact_mut(2)) {
            at.copy_from_slice(&unit.to_le_bytes());
        }
    }
    buf.extend_from_slice(objects);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::validate::DataBlockRef;
    use crate::v1::writer::{InstancesDesc, ObjectDesc};

    #[test]
    fn data_block_parses_back_with_its_header_and_objects() {
        let counters = [
            titled_counter(1010, CounterType::RawFraction, 4, 4),
            counter(CounterType::RawBase, 4, 8),
        ];
        let object = ObjectDesc {
            header: header(1000, false),
            counters: &counters,
            instances: InstancesDesc::Single(&[1, 2]),
        };
        let sources: [&dyn ObjectSource; 1] = [&object];
        // "HOST" + NUL is 10 bytes: 88 + 10 rounds up to a 104-byte header.
        let block = data_block("HOST", &sources, Mode::Data).unwrap();
        let parsed = DataBlockRef::parse(&block).unwrap();
        let h = *parsed.header();
        assert_eq!(
            h,
            data_block_header(u32::try_from(block.len()).unwrap(), 104, 1, 10)
        );
        assert_eq!(parsed.objects().count(), 1);
        assert_eq!(&block[88..98], b"H\0O\0S\0T\0\0\0");
        assert_eq!(&block[98..104], &[0; 6], "padding is zeroed");
        assert_eq!(counters[1].help_title_index, 0, "an untitled base");
        assert_eq!(counters[0].help_title_index, 1011);
    }
}
