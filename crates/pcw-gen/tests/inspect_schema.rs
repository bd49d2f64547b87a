// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `inspect` document against its published JSON schema, `inspect.schema.json` (JSON
//! Schema 2020-12): the document of every manifest of the repository validates, the schema's
//! enumerations are the model's tables, and the schema is strict enough that a field added to,
//! dropped from or misspelled in a document fails it — so the schema and the types cannot drift
//! apart unnoticed.

mod common;

use std::path::PathBuf;

use common::tracked_manifests;
use pcw_gen::model::{
    Aggregate, Callback, CounterAttribute, DetailLevel, Instances, ProviderType, SchemaVersion,
};
use pcw_gen::{Config, Input};
use serde_json::{Value, json};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> Value {
    let text = std::fs::read_to_string(crate_dir().join("inspect.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Validates `doc` against the schema; the error names the failing location.
fn validate(doc: &Value) -> Result<(), String> {
    let url = "https://docs.rs/pcw-gen/inspect.schema.json";
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource(url, schema()).unwrap();
    let index = compiler.compile(url, &mut schemas).unwrap();
    schemas.validate(doc, index).map_err(|e| format!("{e:#}"))
}

/// The documents of every tracked manifest of the repository that generates (the `pcw new` template
/// has placeholders), with the default configuration and with every struct bound to a user
/// type (bound structs have no sizes or offsets).
fn documents() -> Vec<(String, Value)> {
    let mut docs = Vec::new();
    for path in tracked_manifests() {
        let input = Input::read(&path).unwrap();
        let Ok(doc) = Config::new().inspect(&input) else {
            assert!(
                path.ends_with("templates/driver/manifest.man"),
                "{} does not inspect",
                path.display()
            );
            continue;
        };
        let mut bound = Config::new();
        for set in &doc.countersets {
            for st in &set.structs {
                bound.bind_struct(format!("{}.{}", set.symbol, st.name), "crate::Bound");
            }
        }
        let shown = path.display().to_string();
        let json = |d: &pcw_gen::model::Inspect| serde_json::from_str(&d.to_json()).unwrap();
        docs.push((shown.clone(), json(&doc)));
        docs.push((
            format!("{shown} (bound)"),
            json(&bound.inspect(&input).unwrap()),
        ));
    }
    docs
}

#[test]
fn every_manifest_s_document_follows_the_schema() {
    let docs = documents();
    assert!(docs.len() >= 20, "only {} documents", docs.len());
    for (name, doc) in &docs {
        validate(doc).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // The documents exercise every kind of value the schema allows.
    let all = serde_json::to_string(&docs.iter().map(|(_, d)| d).collect::<Vec<_>>()).unwrap();
    for seen in [
        r#""bound":true"#,
        r#""bound":false"#,
        r#""provider_type":"userMode""#,
        r#""provider_type":"kernelMode""#,
        r#""schema_version":"1.1""#,
        r#""schema_version":"2.0""#,
        r#""v1_offset":null"#,
    ] {
        assert!(all.contains(seen), "no document has {seen}");
    }
}

/// Each enumeration of the schema is its table in `pcw_gen::model`, value for value, in order.
#[test]
fn the_schema_s_enumerations_are_the_model_s_tables() {
    fn spellings<T: std::fmt::Display>(all: &[T]) -> Value {
        all.iter().map(ToString::to_string).collect()
    }
    let schema = schema();
    for (def, values) in [
        ("SchemaVersion", spellings(&SchemaVersion::ALL)),
        ("ProviderType", spellings(&ProviderType::ALL)),
        ("Callback", spellings(&Callback::ALL)),
        ("Instances", spellings(&Instances::ALL)),
        ("DetailLevel", spellings(&DetailLevel::ALL)),
        ("Aggregate", spellings(&Aggregate::ALL)),
        ("CounterAttribute", spellings(&CounterAttribute::ALL)),
    ] {
        assert_eq!(schema["$defs"][def]["enum"], values, "`$defs/{def}`");
    }
    let levels: Vec<u32> = DetailLevel::ALL.iter().map(|l| l.level().raw()).collect();
    assert_eq!(
        schema["$defs"]["counter"]["properties"]["detail_level_value"]["enum"],
        json!(levels)
    );
}

/// What a case of [`the_schema_refuses_what_the_types_would_not_write`] does to a document.
type Breakage = (&'static str, fn(&mut Value));

/// A document that is not exactly the types' shape fails: an extra field, a missing one, a
/// value outside an enumeration, a wrong type, at every level of the document.
#[test]
fn the_schema_refuses_what_the_types_would_not_write() {
    let (_, doc) = documents()
        .into_iter()
        .find(|(name, _)| name.ends_with("fabrikam_v2.man"))
        .unwrap();
    validate(&doc).unwrap();
    let broken: [Breakage; 8] = [
        ("an extra top-level field", |d| d["extra"] = json!(1)),
        ("an extra counter field", |d| {
            d["countersets"][0]["counters"][0]["unit"] = json!("ms");
        }),
        ("a missing provider field", |d| {
            d["provider"].as_object_mut().unwrap().remove("symbol");
        }),
        ("a missing field of a field", |d| {
            d["countersets"][0]["structs"][0]["fields"][0]
                .as_object_mut()
                .unwrap()
                .remove("rust_name");
        }),
        ("an unknown instances value", |d| {
            d["countersets"][0]["instances"] = json!("Multiple");
        }),
        ("an unknown attribute", |d| {
            d["countersets"][0]["counters"][0]["attributes"] = json!(["bold"]);
        }),
        ("an id past 16 bits", |d| {
            d["countersets"][0]["counters"][0]["id"] = json!(65536);
        }),
        ("another version", |d| d["version"] = json!(2)),
    ];
    for (what, breaks) in broken {
        let mut d = doc.clone();
        breaks(&mut d);
        assert!(validate(&d).is_err(), "{what} passes the schema");
    }
}
