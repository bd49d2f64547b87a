// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `NTSTATUS` values the driver returns beyond those of the PCW contract, as ntstatus.h
//! defines them (the same in every binding).

use super::NTSTATUS;

/// `STATUS_UNSUCCESSFUL`.
pub const STATUS_UNSUCCESSFUL: NTSTATUS = 0xC000_0001_u32.cast_signed();
/// `STATUS_INVALID_PARAMETER`.
pub const STATUS_INVALID_PARAMETER: NTSTATUS = 0xC000_000D_u32.cast_signed();
/// `STATUS_INVALID_DEVICE_REQUEST`.
pub const STATUS_INVALID_DEVICE_REQUEST: NTSTATUS = 0xC000_0010_u32.cast_signed();
/// `STATUS_BUFFER_TOO_SMALL`.
pub const STATUS_BUFFER_TOO_SMALL: NTSTATUS = 0xC000_0023_u32.cast_signed();
/// `STATUS_BUFFER_OVERFLOW` (a warning: the I/O manager still copies `Information` bytes back).
pub const STATUS_BUFFER_OVERFLOW: NTSTATUS = 0x8000_0005_u32.cast_signed();
/// `STATUS_NOT_FOUND`.
pub const STATUS_NOT_FOUND: NTSTATUS = 0xC000_0225_u32.cast_signed();
/// `STATUS_INVALID_DEVICE_STATE`.
pub const STATUS_INVALID_DEVICE_STATE: NTSTATUS = 0xC000_0184_u32.cast_signed();
/// `STATUS_DEVICE_NOT_READY`.
pub const STATUS_DEVICE_NOT_READY: NTSTATUS = 0xC000_00A3_u32.cast_signed();
