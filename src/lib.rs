//! pcw-driver: the kernel-mode PCW counterset provider (WDM).
//!
//! The driver's code (`DriverEntry`, the generated countersets, the `PCW_CALLBACK`, the control
//! device) arrives with the driver issue; until then this crate only fixes the workspace's
//! root package and its dependency on the shared runtime, `pcw-core`.
#![no_std]
