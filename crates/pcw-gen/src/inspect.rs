// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `inspect` model: the resolved layout as a serialisable, versioned
//! document — the machine-readable contract of `pcw inspect --json`, documented field by field
//! at the crate root.

use serde::{Deserialize, Serialize};

use crate::ir::{Aggregate, Instances, Manifest, ProviderType, SchemaVersion};
use crate::resources;
use crate::rust::{self, Options};

/// The value of [`Inspect::format`].
pub const INSPECT_FORMAT: &str = "pcw-gen-inspect";
/// The value of [`Inspect::version`]; bumped on any incompatible change.
pub const INSPECT_VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    pub countersets: Vec<InspectCounterSet>,
}

/// `<provider>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    pub callback: String,
    /// `symbol`.
    pub symbol: Option<String>,
    /// `resourceBase` (schema 1.1).
    pub resource_base: Option<u32>,
}

/// `<counterSet>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InspectCounterSet {
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    pub detail_level: String,
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
    pub attributes: Vec<String>,
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

#[allow(
    clippy::too_many_lines,
    reason = "a field-by-field mapping reads best in one place"
)]
pub(crate) fn build(manifest: &Manifest, opts: &Options, file: &str) -> Inspect {
    let p = &manifest.provider;
    // A user-mode provider has no value structs: its layout is the `PERF_COUNTER_INFO` offsets
    // the generated template registers.
    let user_mode = p.provider_type == ProviderType::UserMode;
    let names = rust::rust_names(manifest, opts);
    let offsets = resources::v1_offsets(manifest);
    let countersets = p
        .countersets
        .iter()
        .zip(names)
        .zip(offsets)
        .map(
            |((set, (module, struct_names)), (set_offset, counter_offsets))| {
                let mut bound_flags = Vec::new();
                let um_offsets = crate::rust_um::counter_offsets(set);
                let structs = set
                    .structs
                    .iter()
                    .filter(|_| !user_mode)
                    .zip(struct_names)
                    .map(|(st, (rust_type, fields))| {
                        let bound = rust::struct_keys(set, st)
                            .iter()
                            .any(|k| opts.bindings.contains_key(k));
                        bound_flags.push(bound);
                        InspectStruct {
                            index: st.index,
                            name: st.name.clone(),
                            c_type: st.c_type.clone(),
                            rust_type,
                            bound,
                            size: (!bound).then_some(st.size),
                            fields: st
                                .fields
                                .iter()
                                .map(|f| InspectField {
                                    name: f.name.clone(),
                                    rust_name: fields.get(&f.name).cloned().unwrap_or_default(),
                                    offset: (!bound).then_some(f.offset),
                                    size: f.size,
                                })
                                .collect(),
                        }
                    })
                    .collect();
                let counters = set
                    .counters
                    .iter()
                    .zip(counter_offsets)
                    .zip(um_offsets)
                    .map(|((c, v1_offset), um_offset)| {
                        let bound = bound_flags
                            .get(usize::from(c.struct_index))
                            .copied()
                            .unwrap_or(false);
                        InspectCounter {
                            id: c.id,
                            name: c.name.clone(),
                            symbol: c.symbol.clone(),
                            uri: c.uri.clone(),
                            type_name: c.type_name.to_owned(),
                            counter_type: c.counter_type.raw(),
                            counter_type_name: c.counter_type.name().to_owned(),
                            size: c.size,
                            struct_index: c.struct_index,
                            field: c.field.clone(),
                            offset: if user_mode {
                                Some(um_offset)
                            } else {
                                (!bound).then_some(c.offset)
                            },
                            detail_level: c.detail_level.manifest_name().unwrap_or("").to_owned(),
                            detail_level_value: c.detail_level.raw(),
                            default_scale: c.default_scale,
                            aggregate: c.aggregate,
                            base_id: c.base_id,
                            perf_time_id: c.perf_time_id,
                            perf_freq_id: c.perf_freq_id,
                            multi_counter_id: c.multi_counter_id,
                            attributes: c
                                .attributes
                                .iter()
                                .map(|a| a.as_str().to_owned())
                                .collect(),
                            name_id: c.name_id,
                            description: c.description.clone(),
                            description_id: c.description_id,
                            v1_offset,
                        }
                    })
                    .collect();
                InspectCounterSet {
                    name: set.name.clone(),
                    symbol: set.symbol.clone(),
                    guid: set.guid.to_string(),
                    uri: set.uri.clone(),
                    instances: set.instances,
                    name_id: set.name_id,
                    description: set.description.clone(),
                    description_id: set.description_id,
                    rust_module: module,
                    v1_offset: set_offset,
                    structs,
                    counters,
                }
            },
        )
        .collect();
    Inspect {
        format: INSPECT_FORMAT.to_owned(),
        version: INSPECT_VERSION,
        file: file.to_owned(),
        schema_version: manifest.schema_version,
        provider: InspectProvider {
            name: p.name.clone(),
            guid: p.guid.to_string(),
            provider_type: p.provider_type,
            application_identity: p.application_identity.clone(),
            callback: if p.custom_callback {
                "custom"
            } else {
                "default"
            }
            .to_owned(),
            symbol: p.symbol.clone(),
            resource_base: p.resource_base,
        },
        countersets,
    }
}

impl Inspect {
    /// Pretty JSON, newline-terminated.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
