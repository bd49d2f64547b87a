// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-gen: the counter manifest compiler (CTRPP equivalent). It turns a counter
//! manifest (`.man`) into a Rust register/add layer for a kernel-mode PCW provider, the `.rc`
//! string table the provider links, and the lodctr `.ini`/`.h` pair for the V1 shim.
//!
//! The pipeline is: bytes ([`analyze`]: UTF-8 or UTF-16 with or without BOM) → XML
//! (roxmltree, positions kept) → validation of every rule, all problems of a file reported in
//! one run ([`Diagnostic`]) → the resolved model ([`Manifest`]) → pure generators
//! ([`Config::generate`]) → files written only when changed ([`Config::compile`]).
//!
//! [`analyze`] is the one analysis: `pcw lint`, [`Config::check`], [`Config::generate`] and
//! [`Config::inspect`] all take their verdict from it, so a manifest lint accepts generates, and
//! one it refuses fails generation with the same diagnostics (a test runs both over every
//! manifest of the repository and the fuzz corpora). Only [`Config::v1_tables`] refuses more, and
//! lint warns about each of those cases.
//!
//! # Display text
//!
//! Names, descriptions, URIs, `providerName` and `applicationIdentity` reach string literals,
//! doc comments, the `.rc` and `.res`, the lodctr `.ini`, JSON and the exporters' YAML. The
//! [`text`] module's table says which characters a manifest may use in them (controls, line
//! separators, noncharacters and the replacement character are errors naming the character and
//! why, at the attribute) and how each output carries the rest exactly.
//!
//! # build.rs
//!
//! ```no_run
//! // build.rs of a driver
//! fn main() -> Result<(), pcw_gen::Error> {
//!     pcw_gen::Config::new()
//!         .silo_neutral(true)
//!         .bind_struct("FabQueue", "crate::stats::QueueStats")
//!         .compile("manifest/fabrikam.man")?;
//!     Ok(())
//! }
//! ```
//!
//! ```ignore
//! // src/counters.rs
//! include!(concat!(env!("OUT_DIR"), "/fabrikam.rs")); // defines `pub mod fabrikam`
//! ```
//!
//! [`compile`] is the one-line form with the defaults. `compile` prints
//! `cargo:rerun-if-changed=<manifest>` and one `cargo:warning` line per manifest warning; a
//! manifest error fails the build with every diagnostic rendered as
//! `file:line:column: error: message` plus a `= hint:` line. Building for a Windows target,
//! it also links the counter names and descriptions into the binary: it writes the
//! string table compiled (`<stem>.res`, no resource compiler needed) and passes it to the
//! linker (for a GNU target as an object converted by binutils' `windres`), since `lodctr /m:` and every consumer read those strings from the resources of the
//! binary the manifest's `applicationIdentity` names ([`Config::link_resources`]).
//!
//! # Counters declared in Rust
//!
//! A provider may declare its counters in Rust instead of writing a manifest: the pcw-declare
//! crate's `counters!` macro calls [`expand_declaration`], and a build script calls
//! [`Config::compile_declarations`] on the same source file. [`declare`] reads the declaration
//! into manifest text (defaults filled in: GUIDs by [`declare::name_guid`], resource ids,
//! `uri`s), which [`analyze`] checks like any manifest, its diagnostics mapped back to the
//! declaration's tokens; the generators below then produce exactly the code, string table and
//! lodctr files the equivalent manifest gives. [`declare::to_rust`] writes the declaration of an
//! existing manifest (`pcw gen --to-rust`).
//!
//! # What is generated
//!
//! One `pub mod <module>` (default: the manifest file stem) with a scoped, reasoned
//! `#[allow]` list, and in it one module per counterset (the `snake_case` of its `symbol`; a
//! second set whose symbol gives the same module gets `_2`, a third `_3`):
//!
//! * `GUID`, `NAME` (the name given to `PcwRegister`), `URI`, `INSTANCES`, `MULTI_INSTANCE`,
//!   `COUNTER_MASK` (bits of every id below 64), `STRUCT_COUNT`, and `ids::*` counter-id
//!   constants;
//! * a `#[repr(C)]` struct per `<struct>` (or one `Values` struct when the set declares none):
//!   fields in order of first appearance among the set's counters, `u32` for 4-byte types and
//!   `u64` for 8-byte types, named with the `snake_case` of `field`; counters naming the same
//!   field share it. With [`Config::bind_struct`] a user type is used instead and the code
//!   checks at compile time that every field exists with the manifest's size;
//! * `DESCRIPTORS`: `PCW_COUNTER_DESCRIPTOR { Id, StructIndex, Offset: offset_of!, Size }` in
//!   V1 order (see "Counter order" below);
//! * `register(callback, context) -> Result<Registration, NTSTATUS>`: `PCW_VERSION_2` (with
//!   `PcwRegistrationSiloNeutral` when configured), retried with `PCW_VERSION_1` and no flags
//!   when `PcwRegister` returns `STATUS_INVALID_PARAMETER_2`. `Registration` unregisters on
//!   drop and never calls `PcwUnregister` with a NULL handle;
//! * `add(buffer, name, id, &block…)` (callback model, one reference per struct),
//!   `enumerate(buffer, name, id)` (no data, for `PcwCallbackEnumerateInstances`), and
//!   `create(&registration, name, *const block…) -> Result<Instance, NTSTATUS>`
//!   (`PcwCreateInstance` model; `Instance` closes on drop, never with NULL).
//! * the safe callback (unless [`Config::publisher`] turns it off): a marker type `Set`
//!   implementing the runtime's `Counterset` (`type Values` = the set's value block, or a tuple
//!   of its blocks in `StructIndex` order; it implements the runtime's `ValuesOf<Set>`) and
//!   `register_publisher(&'static P)` for any
//!   `P: Publish<Set> + Sync`, which registers the runtime's generic `callback::<Set, P>` with
//!   the publisher as its context. Implementing `Publish` for another set's marker is a
//!   compile error naming both types; returning another set's values from the visitor's
//!   closure is a type mismatch.
//!
//! A `userMode` provider gets a different module: see "User-mode providers" below.
//!
//! Identifiers are ASCII words of the manifest's symbols, names and fields. A Rust keyword
//! (strict, reserved, and edition 2024's `gen`) becomes a raw identifier (`r#type`); `self`,
//! `Self`, `super`, `crate` and `_`, which cannot be raw, get a trailing `_`. Within each
//! namespace of each generated scope no two items share a name: a struct type that clashes with
//! another or with `Registration`, `Instance`, `Set` gets `Values` appended, a parameter that
//! clashes with `add`'s and `create`'s own gets `_values`, and an id constant that clashes gets
//! the counter's id (`BYTES_SEC_2`); both generators use the same rules. Fields are the
//! exception: two fields of a struct whose `snake_case` is the same are an error, since a type
//! bound with [`Config::bind_struct`] must have exactly the manifest's fields.
//!
//! # Runtime contract
//!
//! Generated code never names windows-sys or wdk-sys. It reaches PCW only through a runtime
//! module at [`Config::runtime_path`]: by default `::pcw_rt`, the pcw-rt crate, which
//! implements the contract for both bindings (its `windows-sys` or `wdk-sys` feature), so a
//! driver needs one dependency and no hand-written glue. A driver with its own FFI facade gives
//! that module's absolute path instead. The module must provide exactly these items, which map
//! 1:1 onto the DDIs; each is a `use` or alias of the binding except the last four, which hide
//! the two bindings' differences:
//!
//! | item | kind | requirement |
//! |---|---|---|
//! | `NTSTATUS` | type | `i32`; negative means failure |
//! | `GUID` | type | the binding's `GUID` |
//! | `UNICODE_STRING` | struct | fields `Length: u16`, `MaximumLength: u16`, `Buffer: *mut u16` |
//! | `PCW_COUNTER_DESCRIPTOR` | struct | fields `Id`, `StructIndex`, `Offset`, `Size`, all `u16` |
//! | `PCW_DATA` | struct | fields `Data: *const c_void`, `Size: u32` |
//! | `PCW_REGISTRATION_INFORMATION` | struct | fields `Version: u32`, `Name` (a `*const` or `*mut UNICODE_STRING`), `CounterCount: u32`, `Counters: *mut PCW_COUNTER_DESCRIPTOR`, `Callback`, `CallbackContext: *mut c_void`, `Flags` (the Windows 10 2004+ layout) |
//! | `PPCW_REGISTRATION`, `PPCW_INSTANCE`, `PPCW_BUFFER` | types | `Copy + PartialEq` handles (`isize` in windows-sys, `*mut _PCW_…` in wdk-sys) |
//! | `PCW_VERSION_1`, `PCW_VERSION_2` | `u32` consts | `0x100`, `0x200` |
//! | `STATUS_INVALID_PARAMETER_2` | `NTSTATUS` const | `0xC00000F0` |
//! | `PcwRegistrationNone`, `PcwRegistrationSiloNeutral` | consts | of the type of `Flags` |
//! | `PcwRegister` | `unsafe fn(*mut PPCW_REGISTRATION, *const PCW_REGISTRATION_INFORMATION) -> NTSTATUS` | called with `*mut` arguments (which coerce to `*const`) |
//! | `PcwUnregister` | `unsafe fn(PPCW_REGISTRATION)` | |
//! | `PcwAddInstance` | `unsafe fn(PPCW_BUFFER, *const UNICODE_STRING, u32, u32, *const PCW_DATA) -> NTSTATUS` | the data pointer is passed as `*mut` |
//! | `PcwCreateInstance` | `unsafe fn(*mut PPCW_INSTANCE, PPCW_REGISTRATION, *const UNICODE_STRING, u32, *const PCW_DATA) -> NTSTATUS` | as above |
//! | `PcwCloseInstance` | `unsafe fn(PPCW_INSTANCE)` | |
//! | `NULL_REGISTRATION`, `NULL_INSTANCE` | consts | the NULL handle values (`0` or `null_mut()`) |
//! | `PcwCallback` | type | the real callback function-pointer type (not an `Option`) |
//! | `pcw_callback` | `fn(Option<PcwCallback>) -> <type of Callback>` | windows-sys: transmute to its zero-argument `PPCW_CALLBACK`; wdk-sys: identity |
//! | `guid_from_u128` | `const fn(u128) -> GUID` | big-endian value, as `GUID::from_u128` in windows-sys |
//! | `Counterset`, `ValuesOf`, `Publish`, `callback` | traits, and an `unsafe extern "system" fn` generic over `<S: Counterset, P: Publish<S>>` | only with [`Config::publisher`] (the default): pcw-rt's, over the same binding types as the rest of the module |
//!
//! The `pcw-gen-check` crate compiles generated code against pcw-rt's windows-sys contract and
//! against the same contract met by bindings in wdk-sys's bindgen shapes (`src/wdk_style_rt.rs`:
//! pointer handles, `*mut` `Info`/`Data` typedefs, constified enum modules, an `extern "C"`
//! callback); the same generated code compiles and runs against both.
//!
//! # User-mode providers
//!
//! For `providerType="userMode"` the same manifest gives one `pub mod <module>` over a
//! user-mode runtime at [`Config::user_mode_runtime_path`] (default `::pcw_um`, the pcw-um
//! crate, whose FFI facade names windows-sys' `Win32_System_Performance` bindings):
//!
//! * `PROVIDER_GUID` (a `u128`), `PROVIDER_NAME`, `APPLICATION_IDENTITY`, `COUNTER_SETS` (every
//!   template) and `start()` (`PerfStartProviderEx`, then `PerfSetCounterSetInfo` per set; the
//!   returned provider calls `PerfStopProvider` on drop); with `callback="custom"` also
//!   `start_with(handler)`, which routes Perflib's notifications to a `Notifications` trait
//!   object;
//! * per counterset a module with `GUID`, `NAME`, `URI`, `ids::*`, `INFO` (the
//!   `PERF_COUNTERSET_INFO` template: instance type from `instances`, per counter its id, V1
//!   type, `PERF_ATTRIB_*` bits from the counter attributes, size, detail level, scale and an
//!   offset — a pointer-sized slot for `reference` counters, the value's size otherwise), and
//!   `Instance<'p>`: `create` (`PerfCreateInstance`; a `single` set's one instance is named
//!   `_Default`), `delete`, and per counter typed accessors named after its `symbol` (else its
//!   name): `set_x`/`increment_x`/`decrement_x` for value counters (`u32` or `u64` by size,
//!   `PerfSetULongCounterValue` …), and `x()` (the `AtomicU32`/`AtomicU64` Perflib reads
//!   through `PerfSetCounterRefValue`) plus `set_x` for `reference` counters. `x` is escaped
//!   like every identifier (`r#type()`); when one of a counter's methods would clash with an
//!   earlier counter's or with `create`, `delete`, `raw`, `x` gets the counter's id
//!   (`set_bytes_sec_2`).
//!
//! The runtime must provide `CounterInfo` and `CounterSetInfo` (the fields the generated
//! statics fill), `Provider::{start, start_with, create_instance}`, `Instance` with the
//! `set_`/`increment_`/`decrement_` `u32`/`u64` methods, `reference_u32`/`reference_u64` and
//! `delete`, `Error` and `Notifications` — what pcw-um implements.
//!
//! Value blocks do not exist in Perflib's user-mode API: `<structs>` in a `userMode` manifest is
//! an error of the analysis (so of `pcw lint` too) at the `<structs>` element.
//!
//! # The `inspect` document (JSON schema, version 1)
//!
//! [`Config::inspect`] (and `pcw inspect FILE --json`) produce an [`Inspect`], serialised with
//! serde. Types: `str`, `u16`/`u32`/`i32` numbers, `bool`, `T?` = the value or `null`, `[T]` =
//! array. Fields are never omitted.
//!
//! ```text
//! {
//!   "format": "pcw-gen-inspect",          str, constant
//!   "version": 1,                         u32, bumped on incompatible change
//!   "file": str,                          the manifest path as given
//!   "schema_version": "1.1" | "2.0",
//!   "provider": {
//!     "name": str, "guid": str (lowercase "{8-4-4-4-12}"),
//!     "provider_type": "kernelMode" | "userMode", "application_identity": str,
//!     "callback": "custom" | "default", "symbol": str?, "resource_base": u32?
//!   },
//!   "countersets": [{                     manifest order
//!     "name": str, "symbol": str, "guid": str, "uri": str,
//!     "instances": "single" | "multiple" | "globalAggregate" | "multipleAggregate"
//!                  | "globalAggregateHistory",
//!     "name_id": u32, "description": str, "description_id": u32,
//!     "rust_module": str,                 module inside the generated top-level module
//!     "v1_offset": u32,                   lodctr `.h` offset: name index = First Counter +
//!                                         v1_offset, help index = First Help + v1_offset
//!     "structs": [{                       StructIndex order
//!       "index": u16, "name": str, "c_type": str?, "rust_type": str, "bound": bool,
//!       "size": u32?,                     null when bound to a user type
//!       "fields": [{ "name": str, "rust_name": str, "offset": u32? (null when bound), "size": u32 }]
//!     }],
//!     "counters": [{                      V1 order = descriptor order
//!       "id": u16, "name": str?, "symbol": str?, "uri": str,
//!       "type_name": str (manifest type), "counter_type": u32 (V1 CounterType value),
//!       "counter_type_name": str (winperf.h name),
//!       "size": u32, "struct_index": u16, "field": str, "offset": u32? (null when bound),
//!       "detail_level": "standard" | "advanced", "detail_level_value": 100 | 200,
//!       "default_scale": i32, "aggregate": str?,
//!       "base_id": u16?, "perf_time_id": u16?, "perf_freq_id": u16?, "multi_counter_id": u16?,
//!       "attributes": [str], "name_id": u32?, "description": str?, "description_id": u32?,
//!       "v1_offset": u32?                 lodctr `.h` offset as for the set; null for base
//!                                         counters (no title index in V1)
//!     }]
//!   }]
//! }
//! ```
//!
//! Offsets and sizes of generated structs assume natural alignment (`u64` on 8 bytes), true on
//! every Windows target; the generated code asserts the struct sizes at compile time there.
//!
//! # Diagnostics and the CLI
//!
//! [`lint_files`] returns every diagnostic of every file, with the fleet-readiness warnings of
//! [`fleet::check`] ([`render_all`] renders them with a summary line; exit 1 when any
//! [`Diagnostic::is_error`]). [`Config::generate`] returns all
//! outputs as values for `pcw gen`; [`Generated::ini`] is already UTF-16LE with a BOM.
//! Comments in every output (the Rust, `.rc` and `.h` headers, doc comments) show a name's
//! invisible characters as `\u{…}` ([`text::visible`]).
//!
//! # Counter order
//!
//! A V2 consumer pairs a fraction, average or multi-timer with its base by `baseID`
//! (`multiCounterID`), so a manifest may declare the base anywhere in its counterset, before the
//! counter naming it as Microsoft's user-mode samples do. A V1 consumer reads the base from the
//! counter definition that directly follows. The resolved model ([`CounterSet::counters`]), and
//! with it every output (descriptors, the `inspect` document that the perf DLL's tables are
//! built from), lists counters in *V1 order*: manifest order, with each base counter moved right
//! after the first counter naming it. A base named by two counters can follow only one of them;
//! that is the one case V1 consumers would misread, and it is a warning. The lodctr `.h`/`.ini`
//! give base counters no entry, so their order does not depend on where bases are.
//!
//! # V1 tables
//!
//! [`Config::v1_tables`] gives what a V1 perf DLL needs to serve the countersets as
//! `PERF_OBJECT_TYPE`s: self-contained Rust to `include!`, with `ObjectTable` and
//! `CounterTable`, `SERVICE` (the lodctr `drivername=`) and `OBJECTS`, one per counterset in
//! manifest order, counters in V1 order. Each carries lodctr symbol offsets (the `.h` values;
//! none for base counters), the V1 counter type, size, detail level and scale, whether the
//! object has instances ([`Instances::has_instances`]), its detail level (the lowest of its
//! counters'), `DefaultCounter` (−1 when the first counter is a base) and the positions of the
//! counters holding its `PerfTime`/`PerfFreq`. What V1 cannot express is an error here, not a
//! misread later: a base counter shared by two counters (a warning for every other output),
//! and counters naming different time or frequency counters.
//!
//! # Resource ids and lodctr files
//!
//! Schema 2.0 takes `nameID`/`descriptionID` as written. For schema 1.1 pcw-gen numbers the
//! strings itself, in manifest order from `resourceBase` (default
//! 1000, a pcw-gen choice): set name, set description, then each named counter's name and
//! description. The lodctr `.h` gives every counterset and every non-base counter an even
//! offset from 0 (base counters get no title index in V1).
//!
//! The `.rc` is UTF-8 and starts with `#pragma code_page(65001)`, so that `rc.exe` (and
//! `windres`, `llvm-rc`) read non-ASCII names as written; strings escape `"` as `""` and `\` as
//! `\\`. lodctr reads the `.ini` through the profile API, which trims blanks around a value and
//! drops one pair of enclosing quotes; a name or help text that starts or ends with a blank or
//! a quote is therefore written between double quotes.
#![forbid(unsafe_code)]

mod config;
pub mod declare;
mod diag;
mod expand;
pub mod fleet;
mod inspect;
mod ir;
mod names;
mod parse;
mod resources;
mod rust;
mod rust_um;
mod source;
pub mod text;
mod v1;
mod validate;

pub use config::{Config, Error, Generated, Written, compile, lint_files};
pub use diag::{Diagnostic, Pos, Severity, render_all};
pub use expand::expand_declaration;
pub use inspect::{
    INSPECT_FORMAT, INSPECT_VERSION, Inspect, InspectCounter, InspectCounterSet, InspectField,
    InspectProvider, InspectStruct,
};
pub use ir::{
    Aggregate, Counter, CounterAttribute, CounterSet, Field, Guid, Instances, Manifest, Provider,
    ProviderType, SchemaVersion, Struct,
};

use std::path::Path;

/// The result of reading one manifest: the resolved model when there is no error, and every
/// diagnostic (errors and warnings) in file order.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The validated manifest; `None` when any error was reported.
    pub manifest: Option<Manifest>,
    /// All diagnostics, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Analysis {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses and validates manifest bytes (any supported encoding). Pure: `file` is only used to
/// label diagnostics. Never panics, whatever the input (fuzzed and property-tested).
pub fn analyze(file: &Path, bytes: &[u8]) -> Analysis {
    let mut sink = diag::Sink::new(file);
    let manifest = source::decode(bytes, &mut sink)
        .and_then(|text| parse::parse(&text, &mut sink))
        .and_then(|raw| validate::validate(&raw, &mut sink));
    let manifest = if sink.has_errors() { None } else { manifest };
    Analysis {
        manifest,
        diagnostics: sink.into_sorted(),
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
