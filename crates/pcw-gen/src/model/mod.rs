// SPDX-License-Identifier: MIT OR Apache-2.0
//! The data pcw-gen reads and writes: the resolved manifest ([`Manifest`] and what it holds,
//! which [`crate::analyze`] builds and every generator works from), the manifest's enumerated
//! values (one table each: variant, manifest spelling, serde by that spelling, `ALL`), and the
//! `inspect` document ([`Inspect`], which [`crate::Config::inspect`] builds and
//! `pcw inspect --json` prints).
//!
//! The structs of the manifest and of the `inspect` document are `#[non_exhaustive]`: the model
//! grows when the schema or the outputs do ([`Pos`] and [`Guid`] are complete as they are). The enumerations of the Performance Counters Schema are closed, so they are
//! exhaustive (a consumer's `match` names every value), except [`SchemaVersion`], which a later
//! schema extends.
//!
//! # Examples
//!
//! ```
//! use pcw_gen::model::{Instances, Manifest};
//!
//! let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
//! let analysis = pcw_gen::analyze(&pcw_gen::Input::new("fabrikam_v2.man", bytes));
//! let manifest: Manifest = analysis.manifest.expect("a valid manifest");
//! let multi: Vec<&str> = manifest
//!     .provider
//!     .countersets
//!     .iter()
//!     .filter(|set| set.instances == Instances::Multiple)
//!     .map(|set| set.name.as_str())
//!     .collect();
//! assert_eq!(multi, ["Fabrikam Queue"]);
//! ```

mod inspect;
mod manifest;
mod values;

pub use inspect::{
    INSPECT_FORMAT, INSPECT_VERSION, Inspect, InspectCounter, InspectCounterset, InspectField,
    InspectProvider, InspectStruct,
};
pub use manifest::{Counter, Counterset, Field, Guid, Manifest, Pos, Provider, Struct};
pub use values::{
    Aggregate, Callback, CounterAttribute, DetailLevel, Instances, ProviderType, SchemaVersion,
    UnknownValue,
};
