// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-gen: the counter manifest compiler (CTRPP equivalent). It turns a counter
//! manifest (`.man`) into a Rust register/add layer for a kernel-mode PCW provider (or a typed
//! user-mode provider), the `.rc` string table the provider links, and the lodctr `.ini`/`.h`
//! pair for the V1 shim.
//!
//! # The API
//!
//! A build script calls [`compile`] (or a [`Config`] and its [`Config::compile`]). Everything
//! else reads an [`Input`] — a file ([`Input::read`]) or bytes in hand ([`Input::new`]) — with
//! one entry point per operation:
//!
//! | operation | entry point | result |
//! |---|---|---|
//! | analyse (the verdict) | [`analyze`] | [`Analysis`]: the [`model::Manifest`] and every [`Diagnostic`] |
//! | lint (`pcw lint`) | [`lint`] | the analysis's diagnostics and the [`fleet`] advice |
//! | generate (`pcw gen`) | [`Config::generate`] | [`Generated`]: Rust, `.rc`, `.res`, `.ini`, `.h`, the `inspect` document |
//! | inspect (`pcw inspect`) | [`Config::inspect`] | [`model::Inspect`] |
//! | V1 tables (the perf DLL) | [`Config::v1_tables`] | Rust |
//! | write the outputs (`build.rs`) | [`compile`], [`Config::compile`] | [`Written`] |
//! | counters declared in Rust | [`declare`] | the derived manifest, its outputs, the declaration of a manifest |
//!
//! [`model`] holds the data: the resolved manifest, the manifest's enumerated values (one table
//! each) and the `inspect` document. [`text`] is the display-text policy, [`fleet`] the names
//! consumers derive. Every failure is an [`Error`].
//!
//! ```
//! let input = pcw_gen::Input::new("contoso_v11.man", include_str!("../tests/manifests/contoso_v11.man"));
//! assert!(pcw_gen::lint(&input).iter().all(|d| !d.is_error()));
//! let generated = pcw_gen::Config::new().generate(&input)?;
//! assert!(generated.rust.contains("pub mod contoso_v11"));
//! # Ok::<(), pcw_gen::Error>(())
//! ```
//!
//! The pipeline is: bytes (UTF-8 or UTF-16 with or without BOM) → XML (roxmltree, positions
//! kept) → validation of every rule, all problems of a file reported in one run
//! ([`Diagnostic`]) → the resolved model ([`model::Manifest`]) → pure generators
//! ([`Config::generate`]) → files written only when changed ([`Config::compile`]).
//!
//! [`analyze`] is the one analysis: `pcw lint`, [`Config::generate`] and [`Config::inspect`] all
//! take their verdict from it, so a manifest lint accepts generates, and one it refuses fails
//! generation with the same diagnostics (a test runs both over every manifest of the repository
//! and the fuzz corpora). Only [`Config::v1_tables`] refuses more, and lint warns about each of
//! those cases.
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
//! crate's `counters!` macro calls [`declare::expand`], and a build script calls
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
//! # The `inspect` document
//!
//! [`Config::inspect`] (and `pcw inspect FILE --json`) produce a [`model::Inspect`], serialised
//! with serde: format `pcw-gen-inspect`, version 1 ([`model::INSPECT_VERSION`], bumped on an
//! incompatible change). The types document it field by field; its JSON schema,
//! `inspect.schema.json` at the crate's root, is checked against the document of every
//! manifest of the repository.
//!
//! Offsets and sizes of generated structs assume natural alignment (`u64` on 8 bytes), true on
//! every Windows target; the generated code asserts the struct sizes at compile time there.
//!
//! # Diagnostics and the CLI
//!
//! [`lint`] returns every diagnostic of a file, with the fleet-readiness warnings of [`fleet`]
//! ([`Diagnostic::render_all`] renders them with a summary line; `pcw lint` exits 1 when any
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
//! counter definition that directly follows. The resolved model ([`model::Counterset::counters`]), and
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
//! object has instances ([`model::Instances::has_instances`]), its detail level (the lowest of its
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
//! offset from 0 (base counters get no title index in V1). Its symbols, which the `.ini` keys
//! repeat, are uppercase: a counterset's `symbol`; a counter's `symbol`, else the set's symbol
//! and the `SCREAMING_SNAKE_CASE` of its name (else its field) joined by `_`. A symbol that is
//! taken already gets `_2`, `_3`, … (the first free one), so every symbol is unique.
//!
//! The `.rc` is UTF-8 and starts with `#pragma code_page(65001)`, so that `rc.exe` (and
//! `windres`, `llvm-rc`) read non-ASCII names as written; strings escape `"` as `""` and `\` as
//! `\\`. lodctr reads the `.ini` through the profile API, which trims blanks around a value and
//! drops one pair of enclosing quotes; a name or help text that starts or ends with a blank or
//! a quote is therefore written between double quotes.
#![forbid(
    unsafe_code,
    reason = "manifest text in, generated text out: parsing, analysis and rendering touch no raw memory"
)]

mod analysis;
mod config;
pub mod declare;
mod diag;
mod error;
pub mod fleet;
mod input;
mod inspect;
mod kernel;
pub mod model;
mod names;
mod parse;
mod render;
mod resources;
mod source;
pub mod text;
mod user_mode;
mod v1_tables;
mod validate;

pub use analysis::{Analysis, analyze, lint, metric_name_warnings};
pub use config::{Config, Generated, Written, compile};
pub use diag::{Diagnostic, Severity};
pub use error::Error;
pub use input::Input;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
