// SPDX-License-Identifier: MIT OR Apache-2.0
//! Host check of pcw-gen's generated code (a test crate compiles the generated code and runs
//! it against the FFI facade's host binding): [`pcw_rt`] implements
//! pcw-gen's runtime contract over windows-sys exactly as a driver's facade would,
//! [`fake_pcw`] provides the `PcwRegister`… symbols those windows-sys imports resolve to on a
//! non-Windows host and records every call, [`wdk_style_rt`] shows the same contract met by
//! bindgen-style (wdk-sys) bindings, and the generated modules for the golden manifests are
//! included below.

pub mod fake_pcw;
pub mod pcw_rt;
pub mod stats;
pub mod wdk_style_rt;

include!(concat!(env!("OUT_DIR"), "/fabrikam_v2.rs"));
include!(concat!(env!("OUT_DIR"), "/contoso_v11.rs"));
include!(concat!(env!("OUT_DIR"), "/bound/fabrikam_v2.rs"));
#[cfg(not(windows))]
include!(concat!(env!("OUT_DIR"), "/wdk/fabrikam_v2.rs"));
/// The `inspect` documents of the three configurations, written by build.rs.
pub mod inspect_json {
    /// `fabrikam_v2.man`, default configuration.
    pub const FABRIKAM_V2: &str =
        include_str!(concat!(env!("OUT_DIR"), "/fabrikam_v2.inspect.json"));
    /// `contoso_v11.man`, default configuration.
    pub const CONTOSO_V11: &str =
        include_str!(concat!(env!("OUT_DIR"), "/contoso_v11.inspect.json"));
    /// `fabrikam_v2.man` with bound structs and silo-neutral registration.
    pub const FABRIKAM_BOUND: &str =
        include_str!(concat!(env!("OUT_DIR"), "/fabrikam_bound.inspect.json"));
}
