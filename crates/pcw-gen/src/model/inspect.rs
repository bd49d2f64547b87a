// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `inspect` document: the resolved layout of a manifest as a serialisable, versioned
//! document — the machine-readable contract of `pcw inspect --json` and
//! [`crate::Config::inspect`]. Its JSON schema is `inspect.schema.json` at the crate's root
//! (JSON Schema 2020-12), which a test checks every manifest of the repository against.
//!
//! Fields are never omitted: an absent value is `null`. Enumerated values are spelled as in
//! the manifest.

use serde::{Deserialize, Serialize};

use super::values::{Aggregate, Callback, CounterAttribute, DetailLevel, Instances};
use super::values::{ProviderType, SchemaVersion};

/// The value of [`Inspect::format`].
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::model::INSPECT_FORMAT, "pcw-gen-inspect");
/// ```
pub const INSPECT_FORMAT: &str = "pcw-gen-inspect";
/// The value of [`Inspect::version`]; bumped on any incompatible change.
///
/// # Examples
///
/// ```
/// assert_eq!(pcw_gen::model::INSPECT_VERSION, 1);
/// ```
pub const INSPECT_VERSION: u32 = 1;

/// The whole document.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
/// let doc = pcw_gen::Config::new().inspect(&input)?;
/// assert_eq!(doc.format, pcw_gen::model::INSPECT_FORMAT);
/// assert_eq!(doc.countersets.len(), 2);
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Inspect {
    /// Always [`INSPECT_FORMAT`].
    pub format: String,
    /// Always [`INSPECT_VERSION`] for this crate version.
    pub version: u32,
    /// The manifest as given to the tool.
    pub file: String,
    /// `"1.1"` or `"2.0"`.
    pub schema_version: SchemaVersion,
    /// The provider.
    pub provider: InspectProvider,
    /// The countersets, in manifest order.
    pub countersets: Vec<InspectCounterset>,
}

/// `<provider>`.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
/// let doc = pcw_gen::Config::new().inspect(&input)?;
/// assert_eq!(doc.provider.name, "Fabrikam Queue Driver");
/// assert_eq!(doc.provider.guid, "{0c7b3f4e-5d21-4a8e-b6f0-7e2d9a1c4b35}");
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InspectProvider {
    /// `providerName`.
    pub name: String,
    /// `providerGuid`, lowercase braced.
    pub guid: String,
    /// `"kernelMode"` or `"userMode"`.
    pub provider_type: ProviderType,
    /// `applicationIdentity`.
    pub application_identity: String,
    /// `"custom"` or `"default"`.
    pub callback: Callback,
    /// `symbol`.
    pub symbol: Option<String>,
    /// `resourceBase` (schema 1.1).
    pub resource_base: Option<u32>,
}

/// `<counterSet>`.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
/// let doc = pcw_gen::Config::new().inspect(&input)?;
/// let queue = &doc.countersets[0];
/// assert_eq!((queue.symbol.as_str(), queue.rust_module.as_str()), ("FabQueue", "fab_queue"));
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InspectCounterset {
    /// `name` (string references resolved); the name passed to `PcwRegister`.
    pub name: String,
    /// `symbol`.
    pub symbol: String,
    /// `guid`, lowercase braced.
    pub guid: String,
    /// `uri`.
    pub uri: String,
    /// `instances`: `single`, `multiple`, `globalAggregate`, `multipleAggregate` or
    /// `globalAggregateHistory`. Whether consumers see named instances is
    /// [`Instances::has_instances`].
    pub instances: Instances,
    /// Resource id of the name.
    pub name_id: u32,
    /// `description`.
    pub description: String,
    /// Resource id of the description.
    pub description_id: u32,
    /// The generated module (`<module>::<rust_module>`).
    pub rust_module: String,
    /// The object's lodctr symbol offset (the `.h` value): `ObjectNameTitleIndex` =
    /// First Counter + `v1_offset`, `ObjectHelpTitleIndex` = First Help + `v1_offset`.
    pub v1_offset: u32,
    /// Value blocks in `StructIndex` order.
    pub structs: Vec<InspectStruct>,
    /// Counters in manifest (= descriptor) order.
    pub counters: Vec<InspectCounter>,
}

/// A value block.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
/// let doc = pcw_gen::Config::new().inspect(&input)?;
/// let block = &doc.countersets[0].structs[0];
/// assert_eq!((block.rust_type.as_str(), block.size), ("FabrikamQueueData", Some(72)));
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InspectStruct {
    /// `StructIndex`.
    pub index: u16,
    /// `<struct name>`, or the counterset symbol for the implicit struct.
    pub name: String,
    /// `<struct type>`; `null` for the implicit struct.
    pub c_type: Option<String>,
    /// The Rust type the descriptors use: a generated type name, or the bound path.
    pub rust_type: String,
    /// Whether `rust_type` is a user type bound with `Config::bind_struct`.
    pub bound: bool,
    /// `size_of` the generated struct; `null` when bound (the user type decides).
    pub size: Option<u32>,
    /// Fields in order of first appearance.
    pub fields: Vec<InspectField>,
}

/// A field of a value block.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
/// let doc = pcw_gen::Config::new().inspect(&input)?;
/// let field = &doc.countersets[0].structs[0].fields[3];
/// assert_eq!((field.rust_name.as_str(), field.offset), ("bytes_total", Some(24)));
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InspectField {
    /// `field` as written in the manifest.
    pub name: String,
    /// The Rust field name.
    pub rust_name: String,
    /// Byte offset in the generated struct; `null` when bound.
    pub offset: Option<u32>,
    /// Size in bytes (4 or 8).
    pub size: u32,
}

/// `<counter>` and its descriptor.
///
/// # Examples
///
/// ```
/// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
/// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
/// let doc = pcw_gen::Config::new().inspect(&input)?;
/// let depth = &doc.countersets[0].counters[0];
/// assert_eq!(depth.counter_type_name, "PERF_COUNTER_RAWCOUNT");
/// assert_eq!((depth.offset, depth.v1_offset), (Some(0), Some(2)));
/// # Ok::<(), pcw_gen::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InspectCounter {
    /// `id` = `PCW_COUNTER_DESCRIPTOR.Id`.
    pub id: u16,
    /// `name`, resolved; `null` for unnamed (base/helper) counters.
    pub name: Option<String>,
    /// `symbol`.
    pub symbol: Option<String>,
    /// `uri`.
    pub uri: String,
    /// The manifest type name (`perf_counter_rawcount`).
    pub type_name: String,
    /// The V1 `CounterType` value.
    pub counter_type: u32,
    /// The `winperf.h` name (`PERF_COUNTER_RAWCOUNT`).
    pub counter_type_name: String,
    /// `PCW_COUNTER_DESCRIPTOR.Size`.
    pub size: u32,
    /// `PCW_COUNTER_DESCRIPTOR.StructIndex`.
    pub struct_index: u16,
    /// The manifest `field`.
    pub field: String,
    /// `PCW_COUNTER_DESCRIPTOR.Offset`; `null` when the struct is bound to a user type.
    pub offset: Option<u32>,
    /// `standard` or `advanced`.
    pub detail_level: DetailLevel,
    /// The `PERF_DETAIL_*` value (100 or 200).
    pub detail_level_value: u32,
    /// `defaultScale`.
    pub default_scale: i32,
    /// `aggregate`.
    pub aggregate: Option<Aggregate>,
    /// `baseID`.
    pub base_id: Option<u16>,
    /// `perfTimeID`.
    pub perf_time_id: Option<u16>,
    /// `perfFreqID`.
    pub perf_freq_id: Option<u16>,
    /// `multiCounterID`.
    pub multi_counter_id: Option<u16>,
    /// `counterAttribute` names.
    pub attributes: Vec<CounterAttribute>,
    /// Resource id of the name.
    pub name_id: Option<u32>,
    /// `description`.
    pub description: Option<String>,
    /// Resource id of the description.
    pub description_id: Option<u32>,
    /// The counter's lodctr symbol offset (the `.h` value): `CounterNameTitleIndex` =
    /// First Counter + `v1_offset`, `CounterHelpTitleIndex` = First Help + `v1_offset`;
    /// `null` for a base counter, which has no title index in V1.
    pub v1_offset: Option<u32>,
}

impl Inspect {
    /// Pretty JSON, newline-terminated: what `pcw inspect --json` prints.
    ///
    /// # Examples
    ///
    /// ```
    /// let bytes = include_bytes!("../../tests/manifests/fabrikam_v2.man");
    /// let input = pcw_gen::Input::new("fabrikam_v2.man", bytes);
    /// let json = pcw_gen::Config::new().inspect(&input)?.to_json();
    /// assert!(json.starts_with("{\n  \"format\": \"pcw-gen-inspect\",\n"));
    /// # Ok::<(), pcw_gen::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
