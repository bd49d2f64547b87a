// SPDX-License-Identifier: MIT OR Apache-2.0
//! The user-mode Rust generator: a pure function from a resolved `providerType="userMode"`
//! [`Manifest`] to a typed module over the user-mode runtime contract (the pcw-um crate by
//! default; see the crate docs, "User-mode providers").

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Callback, Counter, CounterAttribute, Counterset, Instances, Manifest};
use crate::names::{self, Scope, ident};
use crate::render::{self, doc};

/// What the user-mode generator needs besides the manifest.
pub(crate) struct UmOptions<'a> {
    pub(crate) runtime_path: &'a syn::Path,
    pub(crate) module_name: &'a str,
    pub(crate) source_name: &'a str,
}

fn hex(value: u128) -> TokenStream {
    format!("0x{value:032x}")
        .parse()
        .unwrap_or_else(|_| quote!(0))
}

/// `PERF_COUNTERSET_*` instance type of a manifest `instances` value.
pub(crate) fn instance_type(i: Instances) -> u32 {
    match i {
        Instances::Single => 0,
        Instances::Multiple => 2,
        Instances::GlobalAggregate => 4,
        Instances::MultipleAggregate => 6,
        Instances::GlobalAggregateHistory => 0xC,
    }
}

/// `PERF_ATTRIB_*` bits of a counter's attributes.
pub(crate) fn attrib(c: &Counter) -> u64 {
    c.attributes
        .iter()
        .map(|a| match a {
            CounterAttribute::Reference => 1,
            CounterAttribute::NoDisplay => 2,
            CounterAttribute::NoDigitGrouping => 4,
            CounterAttribute::DisplayAsReal => 8,
            CounterAttribute::DisplayAsHex => 16,
        })
        .fold(0, |a, b| a | b)
}

/// The methods of `Instance` besides the accessors.
const INSTANCE_METHODS: [&str; 4] = ["create", "delete", "raw", "into_raw"];

/// The methods a counter's accessor base `acc` gives: `acc` and `set_acc` for a `reference`
/// counter, `set_`, `increment_` and `decrement_acc` otherwise.
fn accessor_methods(acc: &str, by_ref: bool) -> Vec<String> {
    if by_ref {
        vec![acc.to_owned(), format!("set_{acc}")]
    } else {
        ["set", "increment", "decrement"]
            .iter()
            .map(|verb| format!("{verb}_{acc}"))
            .collect()
    }
}

/// The Rust base name of a counter's accessors: its `symbol`, else its `name`, else
/// `counter_<id>`, in `snake_case` (unescaped: the getter escapes it; `counter_` before a
/// leading digit), with `_<id>` when one of its methods would clash with an earlier counter's or
/// `Instance`'s own.
fn accessor_names(set: &Counterset) -> Vec<String> {
    let mut methods = Scope::new(INSTANCE_METHODS);
    set.counters
        .iter()
        .map(|c| {
            let by_ref = c.attributes.contains(&CounterAttribute::Reference);
            let base = [c.symbol.as_deref(), c.name.as_deref()]
                .into_iter()
                .flatten()
                .find_map(names::snake_words)
                // `set_` + `_2nd` would double the underscore: `counter_2nd`.
                .map_or_else(
                    || format!("counter_{}", c.id),
                    |b| {
                        if b.starts_with('_') {
                            format!("counter{b}")
                        } else {
                            b
                        }
                    },
                );
            let next = |n| names::Suffix::Id(c.id).candidate(&base, n);
            let mut n = 0;
            let mut acc = base.clone();
            while !accessor_methods(&acc, by_ref)
                .iter()
                .all(|m| methods.is_free(&names::escape(m)))
            {
                n += 1;
                acc = next(n);
            }
            for m in accessor_methods(&acc, by_ref) {
                methods.take(&names::escape(&m));
            }
            acc
        })
        .collect()
}

/// The `PERF_COUNTER_INFO.Offset` of each counter of a user-mode counterset, in counter order:
/// each value in a slot of its own (8 bytes for a reference counter, which Perflib reads through
/// a pointer; else the value's size), aligned to the slot. The generated template and `inspect`
/// both take the layout from here.
pub(crate) fn counter_offsets(set: &Counterset) -> Vec<u32> {
    let mut offset: u32 = 0;
    set.counters
        .iter()
        .map(|c| {
            let slot = if c.attributes.contains(&CounterAttribute::Reference) {
                8
            } else {
                c.size
            };
            offset = offset.next_multiple_of(slot);
            let at = offset;
            offset += slot;
            at
        })
        .collect()
}

#[expect(
    clippy::too_many_lines,
    reason = "the counterset's generated module is one `quote!` template, read in the order of its output"
)]
fn gen_set(set: &Counterset, module: &syn::Ident, rt: &syn::Path) -> TokenStream {
    let guid = hex(set.guid.0);
    let name = &set.name;
    let uri = &set.uri;
    let instances = set.instances.as_str();
    let multi = set.instances.is_multi();
    let itype = instance_type(set.instances);
    let accessors = accessor_names(set);
    let set_doc = doc(&format!(
        "Counterset `{}` (`{}`, `instances=\"{}\"`).\n\n{}",
        set.name, set.guid, instances, set.description
    ));

    let offsets = counter_offsets(set);
    let mut infos = Vec::new();
    let mut ids = Vec::new();
    let mut methods = Vec::new();
    for ((c, acc), offset) in set.counters.iter().zip(&accessors).zip(offsets) {
        let id = u32::from(c.id);
        let const_name = ident(&names::escape(&acc.to_uppercase()));
        let by_ref = c.attributes.contains(&CounterAttribute::Reference);
        let (ty, size, detail, scale, attrib) = (
            c.counter_type.raw(),
            c.size,
            c.detail_level.level().raw(),
            c.default_scale,
            attrib(c),
        );
        infos.push(quote! {
            #rt::CounterInfo {
                id: ids::#const_name,
                counter_type: #ty,
                attrib: #attrib,
                size: #size,
                detail_level: #detail,
                scale: #scale,
                offset: #offset,
            },
        });
        let label = c.name.as_deref().unwrap_or(&c.uri);
        let id_doc = doc(&format!("Counter `{label}` (`{}`).", c.type_name));
        ids.push(quote! { #id_doc pub const #const_name: u32 = #id; });
        let (int, atomic, set_fn, inc_fn, dec_fn, get_ref) = if size == 8 {
            (
                quote!(u64),
                quote!(::std::sync::atomic::AtomicU64),
                quote!(set_u64),
                quote!(increment_u64),
                quote!(decrement_u64),
                quote!(reference_u64),
            )
        } else {
            (
                quote!(u32),
                quote!(::std::sync::atomic::AtomicU32),
                quote!(set_u32),
                quote!(increment_u32),
                quote!(decrement_u32),
                quote!(reference_u32),
            )
        };
        let setter = ident(&format!("set_{acc}"));
        if by_ref {
            let getter = ident(&names::escape(acc));
            let get_doc = doc(&format!(
                "The atomic `{label}` is read from (a `reference` counter: \
                 `PerfSetCounterRefValue` points Perflib at it, and it lives as long as the \
                 instance).\n\n# Errors\n\nNone for an instance of this counterset; the \
                 runtime's checks are kept."
            ));
            let set_doc = doc(&format!(
                "Stores `value` in `{label}`'s atomic.\n\n# Errors\n\nAs [`Self::{getter}`]."
            ));
            methods.push(quote! {
                #get_doc
                pub fn #getter(&self) -> ::core::result::Result<&#atomic, #rt::Error> {
                    self.0.#get_ref(ids::#const_name)
                }
                #set_doc
                pub fn #setter(&self, value: #int) -> ::core::result::Result<(), #rt::Error> {
                    self.#getter()?.store(value, ::std::sync::atomic::Ordering::Relaxed);
                    ::core::result::Result::Ok(())
                }
            });
        } else {
            let inc = ident(&format!("increment_{acc}"));
            let dec = ident(&format!("decrement_{acc}"));
            let set_doc = doc(&format!(
                "Sets `{label}`.\n\n# Errors\n\nThe Perflib call's Win32 error."
            ));
            let inc_doc = doc(&format!(
                "Adds `by` to `{label}`.\n\n# Errors\n\nThe Perflib call's Win32 error."
            ));
            let dec_doc = doc(&format!(
                "Subtracts `by` from `{label}`.\n\n# Errors\n\nThe Perflib call's Win32 error."
            ));
            methods.push(quote! {
                #set_doc
                pub fn #setter(&self, value: #int) -> ::core::result::Result<(), #rt::Error> {
                    self.0.#set_fn(ids::#const_name, value)
                }
                #inc_doc
                pub fn #inc(&self, by: #int) -> ::core::result::Result<(), #rt::Error> {
                    self.0.#inc_fn(ids::#const_name, by)
                }
                #dec_doc
                pub fn #dec(&self, by: #int) -> ::core::result::Result<(), #rt::Error> {
                    self.0.#dec_fn(ids::#const_name, by)
                }
            });
        }
    }

    let create = if multi {
        quote! {
            /// Creates an instance (`PerfCreateInstance`): a unique, non-empty `name` and an
            /// `id`. Deleted when dropped.
            ///
            /// # Errors
            ///
            /// The runtime's error (a bad name, or `PerfCreateInstance`'s Win32 error, e.g.
            /// `ERROR_ALREADY_EXISTS` for a duplicate).
            pub fn create(
                provider: &'p #rt::Provider,
                name: &str,
                id: u32,
            ) -> ::core::result::Result<Self, #rt::Error> {
                provider.create_instance(&INFO, name, id).map(Self)
            }
        }
    } else {
        quote! {
            /// Creates the counterset's one instance (`PerfCreateInstance` with the name
            /// `_Default`, as CTRPP's samples name it). Deleted when dropped.
            ///
            /// # Errors
            ///
            /// `PerfCreateInstance`'s Win32 error (`ERROR_ALREADY_EXISTS` when it exists).
            pub fn create(provider: &'p #rt::Provider) -> ::core::result::Result<Self, #rt::Error> {
                provider.create_instance(&INFO, "_Default", 0).map(Self)
            }
        }
    };
    let count = set.counters.len();

    quote! {
        #set_doc
        pub mod #module {
            /// The counterset `guid` (big-endian, as `GUID::from_u128`).
            pub const GUID: u128 = #guid;
            /// The counterset `name`.
            pub const NAME: &str = #name;
            /// The counterset `uri`.
            pub const URI: &str = #uri;
            /// `instances` as written in the manifest.
            pub const INSTANCES: &str = #instances;
            /// Whether consumers may see several instances (`instances` is not `single`).
            pub const MULTI_INSTANCE: bool = #multi;

            /// Counter ids (`PERF_COUNTER_INFO.CounterId`).
            pub mod ids {
                #(#ids)*
            }

            /// The counters' `PERF_COUNTER_INFO`s, in the resolved order.
            static COUNTERS: [#rt::CounterInfo; #count] = [#(#infos)*];

            /// The template given to `PerfSetCounterSetInfo`.
            pub static INFO: #rt::CounterSetInfo = #rt::CounterSetInfo {
                guid: GUID,
                instance_type: #itype,
                counters: &COUNTERS,
            };

            /// An instance of this counterset, with one typed accessor per counter. It
            /// borrows the provider, so it cannot outlive `PerfStopProvider`.
            #[derive(Debug)]
            pub struct Instance<'p>(#rt::Instance<'p>);

            impl<'p> Instance<'p> {
                #create

                /// `PerfDeleteInstance` now, reporting its result.
                ///
                /// # Errors
                ///
                /// `PerfDeleteInstance`'s Win32 error.
                pub fn delete(self) -> ::core::result::Result<(), #rt::Error> {
                    self.0.delete()
                }

                /// The untyped runtime instance.
                pub fn raw(&self) -> &#rt::Instance<'p> {
                    &self.0
                }

                #(#methods)*
            }
        }
    }
}

/// Generates the user-mode module.
pub(crate) fn generate(manifest: &Manifest, opts: &UmOptions<'_>) -> String {
    let rt = opts.runtime_path;
    let module = ident(opts.module_name);
    let provider = &manifest.provider;
    let modules: Vec<syn::Ident> = names::set_modules(manifest)
        .iter()
        .map(|m| ident(m))
        .collect();
    // Each counterset's tokens are made when `render::module_file` formats them.
    let sets = provider
        .countersets
        .iter()
        .zip(&modules)
        .map(|(set, m)| (gen_set(set, m, rt), render::Lists::default()));
    let sets_marker = render::sets_marker();
    let n = modules.len();
    let provider_guid = hex(provider.guid.0);
    let provider_name = &provider.name;
    let app = &provider.application_identity;
    let module_doc = doc(&format!(
        "User-mode counters of provider `{}` (`{}`), generated by pcw-gen from `{}`.\n\n\
         Every Perflib call goes through the runtime `{}` (see the pcw-gen crate docs).",
        provider.name,
        provider.guid,
        opts.source_name,
        quote!(#rt).to_string().replace(' ', ""),
    ));
    let start_with = if provider.callback == Callback::Custom {
        quote! {
            /// Starts the provider as [`start`] does and routes Perflib's notifications for its
            /// countersets (`callback="custom"`: `PERF_ADD_COUNTER`, `PERF_REMOVE_COUNTER`,
            /// `PERF_ENUM_INSTANCES`, `PERF_COLLECT_START`, `PERF_COLLECT_END`) to `handler`.
            ///
            /// # Errors
            ///
            /// As [`start`].
            pub fn start_with(
                handler: ::std::sync::Arc<dyn #rt::Notifications>,
            ) -> ::core::result::Result<#rt::Provider, #rt::Error> {
                #rt::Provider::start_with(PROVIDER_GUID, &COUNTER_SETS, handler)
            }
        }
    } else {
        TokenStream::new()
    };
    let file = quote! {
        #module_doc
        #[allow(
            dead_code,
            reason = "a service uses only the countersets and counters it needs"
        )]
        #[allow(
            unused_qualifications,
            reason = "paths are fully qualified so the code does not depend on the includer's imports"
        )]
        #[allow(
            clippy::unreadable_literal,
            reason = "guids are written as one hexadecimal literal, as in the manifest"
        )]
        #[allow(
            clippy::doc_markdown,
            reason = "names and descriptions are copied from the manifest as written"
        )]
        #[allow(
            clippy::module_inception,
            reason = "a counterset whose symbol is `ids` holds a module `ids` of counter ids"
        )]
        #[allow(
            clippy::should_implement_trait,
            reason = "a `reference` counter's getter is named after the counter, which may be `clone` or `deref`"
        )]
        pub mod #module {
            /// `providerGuid` (big-endian, as `GUID::from_u128`).
            pub const PROVIDER_GUID: u128 = #provider_guid;
            /// `providerName`.
            pub const PROVIDER_NAME: &str = #provider_name;
            /// `applicationIdentity`.
            pub const APPLICATION_IDENTITY: &str = #app;

            /// Every counterset's template, in manifest order.
            pub static COUNTER_SETS: [&#rt::CounterSetInfo; #n] = [#(&#modules::INFO),*];

            /// Starts the provider (`PerfStartProviderEx`, then `PerfSetCounterSetInfo` for
            /// every counterset); `PerfStopProvider` runs when the returned provider drops.
            ///
            /// # Errors
            ///
            /// The runtime's error naming the Perflib call that failed and its Win32 code.
            pub fn start() -> ::core::result::Result<#rt::Provider, #rt::Error> {
                #rt::Provider::start(PROVIDER_GUID, &COUNTER_SETS)
            }

            #start_with

            #sets_marker
        }
    };
    render::module_file(file, &module, sets, opts.source_name)
}
