// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-gen's runtime contract over windows-sys's `Wdk` bindings, from the `pcw-rt` crate: the
//! same items a driver's facade re-exports (the driver's own facade, `src/ffi/`, does exactly
//! this), so the generated code is checked against the contract drivers really use.

pub use pcw_rt::*;
