// SPDX-License-Identifier: MIT OR Apache-2.0
//! The Windows-only edges of the DLL (compiled with `cfg(windows)`; cross-built, not run, on
//! other hosts): the service's lodctr indexes in the registry, the Application event log, and
//! the driver's snapshot device.

pub mod device;
pub mod eventlog;
pub mod registry;
