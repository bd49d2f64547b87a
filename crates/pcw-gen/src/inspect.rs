// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `inspect` document of a manifest ([`crate::model::Inspect`]): the resolved model with
//! the names the kernel-mode generator gives its items, the lodctr offsets and the user-mode
//! template offsets, as `pcw inspect --json` prints it.

use crate::kernel::{self, Options};
use crate::model::{
    INSPECT_FORMAT, INSPECT_VERSION, Inspect, InspectCounter, InspectCounterset, InspectField,
    InspectProvider, InspectStruct, Manifest, ProviderType,
};
use crate::resources;

#[allow(
    clippy::too_many_lines,
    reason = "a field-by-field mapping reads best in one place"
)]
pub(crate) fn build(manifest: &Manifest, opts: &Options, file: &str) -> Inspect {
    let p = &manifest.provider;
    // A user-mode provider has no value structs: its layout is the `PERF_COUNTER_INFO` offsets
    // the generated template registers.
    let user_mode = p.provider_type == ProviderType::UserMode;
    let names = kernel::rust_names(manifest, opts);
    let offsets = resources::v1_offsets(manifest);
    let countersets = p
        .countersets
        .iter()
        .zip(names)
        .zip(offsets)
        .map(
            |((set, (module, struct_names)), (set_offset, counter_offsets))| {
                let mut bound_flags = Vec::new();
                let um_offsets = crate::user_mode::counter_offsets(set);
                let structs = set
                    .structs
                    .iter()
                    .filter(|_| !user_mode)
                    .zip(struct_names)
                    .map(|(st, (rust_type, fields))| {
                        let bound = kernel::struct_keys(set, st)
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
                            detail_level: c.detail_level,
                            detail_level_value: c.detail_level.level().raw(),
                            default_scale: c.default_scale,
                            aggregate: c.aggregate,
                            base_id: c.base_id,
                            perf_time_id: c.perf_time_id,
                            perf_freq_id: c.perf_freq_id,
                            multi_counter_id: c.multi_counter_id,
                            attributes: c.attributes.clone(),
                            name_id: c.name_id,
                            description: c.description.clone(),
                            description_id: c.description_id,
                            v1_offset,
                        }
                    })
                    .collect();
                InspectCounterset {
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
            callback: p.callback,
            symbol: p.symbol.clone(),
            resource_base: p.resource_base,
        },
        countersets,
    }
}
