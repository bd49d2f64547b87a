// SPDX-License-Identifier: MIT OR Apache-2.0
//! Windows performance counters declared in Rust.
//!
//! [`counters!`] declares a provider — its countersets and their counters — in Rust, and
//! expands to exactly the module pcw-gen generates for the equivalent counter manifest: the
//! kernel-mode register/add layer over pcw-rt (`Publish`, `register_publisher`, …) or the
//! user-mode provider over pcw-um. The manifest itself, its string table (`.rc`, and the
//! `.res` linked into the binary) and the lodctr files come from the same declaration, derived
//! by one build-script call, [`pcw_gen::Config::compile_declarations`], or by
//! `pcw gen --from-rust` — so `lodctr /m:` works with no hand-written XML. An existing manifest
//! is migrated with `pcw gen --to-rust FILE.man`.
//!
//! ```ignore
//! pcw_declare::counters! {
//!     #[provider(name = "Fabrikam Queues", kernel_mode, application_identity = "fabrikam.sys")]
//!     pub mod fabrikam {
//!         #[counterset(name = "Fabrikam Queue", description = "Per queue", instances = multiple)]
//!         struct FabQueue {
//!             #[counter(id = 1, type = perf_counter_rawcount, name = "Depth", description = "Items waiting")]
//!             depth: u32,
//!             #[counter(id = 2, type = perf_counter_bulk_count, name = "Bytes/sec", description = "Bytes moved")]
//!             bytes: u64,
//!         }
//!     }
//! }
//! ```
//!
//! # Why a function-like macro
//!
//! `TraceLogging` moved ETW from manifests to declarations in code, and Rust has two shapes of
//! it: the `tracelogging` crate's `define_provider!` (a function-like macro naming the
//! provider, its GUID derived from the name unless given) and `win_etw`'s
//! `#[trace_logging_provider]` on a trait (one method per event, the fields as parameters).
//! A counter provider is closer to the first: it is one unit — a provider, its countersets,
//! their counters — from which one module, one manifest and one string table come, and
//! Perflib registers it as a whole. A derive on each values struct would scatter the provider
//! over several items that a build script then has to find and join, and could not express a
//! user-mode counterset, which has no values struct at all. So the declaration is one
//! function-like macro whose body reads like the module it generates: the provider as an
//! attribute on `pub mod`, each counterset a `struct` named by its symbol, each counter a field
//! named by the field it reads, with `win_etw`-style attributes carrying what the manifest's
//! XML attributes carry.
//!
//! # Syntax
//!
//! ```text
//! counters! {
//!     #[provider(KEY = VALUE, …)]
//!     pub mod MODULE {
//!         #[counterset(KEY = VALUE, …)]
//!         struct SYMBOL {
//!             #[counter(KEY = VALUE, FLAG, …)]
//!             FIELD: u32 | u64,
//!         }
//!     }
//! }
//! ```
//!
//! Keys are the manifest's attribute names in `snake_case`. Text is a string literal, numbers
//! are integers, symbols and enumerated values are identifiers (`instances = multiple_aggregate`,
//! `type = perf_counter_bulk_count`). `///` comments are allowed anywhere and ignored.
//!
//! | where | key | manifest | default |
//! |---|---|---|---|
//! | `#[provider]` | `name` | `providerName` | required |
//! | | `guid` | `providerGuid` | the ETW name hash of `name` ([`pcw_gen::declare::name_guid`]) |
//! | | `kernel_mode` or `user_mode` (flag) | `providerType` | required |
//! | | `application_identity` | `applicationIdentity` | required |
//! | | `callback = custom` | `callback` | `default` |
//! | | `symbol` | `symbol` | none (a user-mode provider needs one) |
//! | | `resource_base` | `resourceBase` | 1000 |
//! | | `runtime = "path"` | (code generation) | `::pcw_rt` / `::pcw_um` |
//! | | `silo_neutral` (flag) | (code generation) | off |
//! | `#[counterset]` | `name`, `description` | same | required |
//! | | `instances` | same | `single` |
//! | | `guid` | same | the name hash of `<provider name>/<counterset name>` |
//! | | `uri` | same | `<provider symbol, or name>.<SYMBOL>` |
//! | | `name_id`, `description_id` | `nameID`, `descriptionID` | numbered from `resource_base` |
//! | | `structs(NAME = C_TYPE, …)` | `<structs>` | one implicit struct |
//! | `struct SYMBOL` | | counterset `symbol` | |
//! | `#[counter]` | `id`, `type` | same | required |
//! | | `name`, `description` | same | none (base counters may omit them) |
//! | | `detail_level` | `detailLevel` | `standard` |
//! | | `default_scale` | `defaultScale` | 0 |
//! | | `aggregate` | same | none |
//! | | `base_id`, `perf_time_id`, `perf_freq_id`, `multi_counter_id` | `baseID`, … | none |
//! | | `symbol`, `uri`, `struct` | same | none; `<set uri>.<symbol or FIELD>` |
//! | | `name_id`, `description_id` | `nameID`, `descriptionID` | numbered |
//! | | `reference`, `no_display`, `no_digit_grouping`, `display_as_hex`, `display_as_real` (flags) | `<counterAttribute>` | none |
//! | `FIELD: u32` | | `field`, and the value's size | |
//!
//! Giving any `name_id`/`description_id` makes the derived manifest schema 2.0, where every
//! name and description needs its id; otherwise it is schema 1.1 and pcw-gen numbers them.
//! Two counters reading one field name it twice.
//!
//! # Errors
//!
//! A declaration is checked by the manifest analysis itself (the derived manifest is analysed
//! as `pcw lint` analyses a hand-written one), and each problem is a compile error at the
//! declaration token it is about: a duplicate id, an unknown type, a base counter no counter
//! uses, an `aggregate` in a `single` counterset, two countersets with one GUID, a field whose
//! type is not the counter type's size. Warnings of the analysis are errors here, so a derived
//! manifest always lints clean.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;

/// Declares a provider's counters; expands to the module pcw-gen generates for the derived
/// manifest. See the crate documentation for the syntax.
#[proc_macro]
pub fn counters(input: TokenStream) -> TokenStream {
    pcw_gen::declare::expand(input.into()).into()
}
