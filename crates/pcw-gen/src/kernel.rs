// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel-mode generator: a pure function from the resolved [`Manifest`] of a
//! `kernelMode` provider to the Rust register/add layer (per counterset the value structs,
//! descriptors, `register`, `add`, `create` and the safe publisher) that calls PCW only through
//! the runtime contract documented at the crate root. Output is deterministic, marked
//! `@generated`, and uses fully qualified paths.

use std::collections::{BTreeMap, HashMap};

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::model::{Counterset, Manifest, Struct};
use crate::names::{self, Scope, Suffix, ident};
use crate::render::{self, doc};

/// What the generator needs besides the manifest (the pure part of [`crate::Config`]).
#[derive(Clone)]
pub(crate) struct Options {
    pub(crate) runtime_path: syn::Path,
    pub(crate) silo_neutral: bool,
    /// Whether to generate the `Set` marker and `register_publisher` (the safe callback).
    pub(crate) publisher: bool,
    pub(crate) module_name: String,
    /// Struct key (see [`crate::Config::bind_struct`]) → user type path.
    pub(crate) bindings: BTreeMap<String, syn::Path>,
    /// Shown in the header comment.
    pub(crate) source_name: String,
}

/// The key a binding uses for a struct: `Set` for an implicit struct or a set's only struct,
/// otherwise `Set.StructName` (both forms work for single-struct sets).
pub(crate) fn struct_keys(set: &Counterset, st: &Struct) -> Vec<String> {
    let mut keys = vec![format!("{}.{}", set.symbol, st.name)];
    if set.structs.len() == 1 {
        keys.push(set.symbol.clone());
    }
    keys
}

/// Rust names chosen for one set's structs, fields and parameters.
struct SetNames {
    module: syn::Ident,
    structs: Vec<StructNames>,
}

struct StructNames {
    ty: TokenStream,
    /// The generated type's ident, or `None` when bound to a user type.
    generated: Option<syn::Ident>,
    param: syn::Ident,
    /// Manifest field → Rust field.
    fields: BTreeMap<String, syn::Ident>,
}

/// Types of a counterset's module: the generated items, then its structs (`Values` for the
/// implicit one; a clash appends `Values`).
const SET_TYPES: [&str; 3] = ["Registration", "Instance", "Set"];
/// Parameters and locals of `add` and `create` besides the value blocks (a clash appends
/// `_values`).
const SET_PARAMS: [&str; 7] = [
    "buffer",
    "name",
    "id",
    "registration",
    "data",
    "handle",
    "status",
];

fn set_names(set: &Counterset, module: &str, opts: &Options) -> SetNames {
    let mut types = Scope::new(SET_TYPES);
    let mut params = Scope::new(SET_PARAMS);
    let implicit =
        set.structs.len() == 1 && set.structs.first().is_some_and(|s| s.c_type.is_none());
    let structs = set
        .structs
        .iter()
        .map(|st| {
            let bound = struct_keys(set, st)
                .iter()
                .find_map(|k| opts.bindings.get(k).cloned());
            let tbase = if implicit {
                "Values".to_owned()
            } else {
                names::camel_words(st.c_type.as_deref().unwrap_or(&st.name))
                    .unwrap_or_else(|| "Values".to_owned())
            };
            let tname = types.claim(&tbase, Suffix::Repeat("Values"));
            let pbase = if implicit {
                "values".to_owned()
            } else {
                names::snake_words(&st.name).unwrap_or_else(|| "values".to_owned())
            };
            let pname = params.claim(&pbase, Suffix::Repeat("_values"));
            let fields = st
                .fields
                .iter()
                .map(|f| (f.name.clone(), ident(&names::snake(&f.name))))
                .collect();
            let generated_ident = ident(&tname);
            let (ty, generated) = match bound {
                Some(path) => (quote!(#path), None),
                None => (quote!(#generated_ident), Some(generated_ident)),
            };
            StructNames {
                ty,
                generated,
                param: ident(&pname),
                fields,
            }
        })
        .collect();
    SetNames {
        module: ident(module),
        structs,
    }
}

/// A set's module name and, per struct, its Rust type and manifest field → Rust field names.
pub(crate) type SetRustNames = (String, Vec<(String, BTreeMap<String, String>)>);

/// Rust names per counterset, for `inspect`: the module and each struct's type (generated
/// name or bound path) and field names.
pub(crate) fn rust_names(manifest: &Manifest, opts: &Options) -> Vec<SetRustNames> {
    let modules = names::set_modules(manifest);
    manifest
        .provider
        .countersets
        .iter()
        .zip(&modules)
        .map(|(set, module)| {
            let n = set_names(set, module, opts);
            let structs = n
                .structs
                .iter()
                .map(|s| {
                    let fields = s
                        .fields
                        .iter()
                        .map(|(k, v)| (k.clone(), v.to_string()))
                        .collect();
                    (s.ty.to_string().replace(' ', ""), fields)
                })
                .collect();
            (n.module.to_string(), structs)
        })
        .collect()
}

/// Generates the Rust module for `manifest`.
pub(crate) fn generate(manifest: &Manifest, opts: &Options) -> String {
    generate_with(manifest, opts, false)
}

/// [`generate`]; `whole`: the file's tokens made and formatted at once, the text the
/// counterset by counterset and chunk by chunk formatting must give (the tests compare them).
#[expect(
    clippy::too_many_lines,
    reason = "the shared part of the generated module is one template"
)]
fn generate_with(manifest: &Manifest, opts: &Options, whole: bool) -> String {
    let rt = &opts.runtime_path;
    let module = ident(&opts.module_name);
    let modules = names::set_modules(manifest);
    // Each counterset's tokens are made when `render::module_file` formats them.
    let mut sets = manifest
        .provider
        .countersets
        .iter()
        .zip(&modules)
        .map(|(set, module)| {
            let n = set_names(set, module, opts);
            gen_set(set, &n, opts, render::Lists::new(whole))
        });
    let provider = &manifest.provider;
    let module_doc = doc(&format!(
        "Counters of provider `{}` (`{}`), generated by pcw-gen from `{}`.\n\n\
         Every PCW call goes through the runtime module `{}` (see the pcw-gen crate docs).",
        provider.name,
        provider.guid,
        opts.source_name,
        quote!(#rt).to_string().replace(' ', ""),
    ));
    let provider_guid = guid_expr(rt, provider.guid.0);
    let app = &provider.application_identity;
    let provider_name = &provider.name;
    let sets_marker = if whole {
        let all = sets.by_ref().map(|(tokens, _)| tokens);
        quote! { #(#all)* }
    } else {
        render::sets_marker()
    };

    let file = quote! {
        #module_doc
        #[allow(
            dead_code,
            reason = "a driver uses only the helpers of the countersets and models it needs"
        )]
        #[allow(
            unused_qualifications,
            reason = "paths are fully qualified so the code does not depend on the includer's imports"
        )]
        #[allow(
            clippy::cast_possible_truncation,
            reason = "offsets, sizes and lengths are checked against their field widths at compile time"
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
            clippy::too_many_arguments,
            reason = "`add` and `create` take one value block per manifest struct, like CTRPP's helpers"
        )]
        pub mod #module {
            /// `providerGuid`.
            pub const PROVIDER_GUID: #rt::GUID = #provider_guid;
            /// `providerName`.
            pub const PROVIDER_NAME: &str = #provider_name;
            /// `applicationIdentity`: the binary `lodctr /m:` looks for the string resources in.
            pub const APPLICATION_IDENTITY: &str = #app;

            /// `size_of` a field, for descriptors (`RTL_FIELD_SIZE`) and binding checks.
            const fn field_size<T, F>(_field: fn(&T) -> &F) -> usize {
                ::core::mem::size_of::<F>()
            }

            /// Fails compilation with `what` unless `actual == expected`.
            const fn assert_size(actual: usize, expected: usize, what: &str) {
                assert!(actual == expected, "{}", what);
            }

            /// Fails compilation with `what` unless `size` fits a `u16` offset.
            const fn assert_fits_u16(size: usize, what: &str) {
                assert!(size <= 0xFFFF, "{}", what);
            }

            /// `PcwRegister` with `PCW_VERSION_2`, retried with `PCW_VERSION_1` (and no flags)
            /// when the system rejects the version with `STATUS_INVALID_PARAMETER_2`
            /// (Windows builds before 10.0.19645).
            ///
            /// # Safety
            ///
            /// `info` must describe a valid registration: a live name, `CounterCount`
            /// descriptors at `Counters`, and a callback and context that stay valid until
            /// the returned handle is unregistered.
            unsafe fn register_with_fallback(
                info: &mut #rt::PCW_REGISTRATION_INFORMATION,
            ) -> ::core::result::Result<#rt::PPCW_REGISTRATION, #rt::NTSTATUS> {
                let mut handle = #rt::NULL_REGISTRATION;
                __pcw_safety!("`handle` is a writable local and `info` is valid per this function's contract.");
                let mut status = unsafe { #rt::PcwRegister(&raw mut handle, &raw mut *info) };
                if status == #rt::STATUS_INVALID_PARAMETER_2 {
                    info.Version = #rt::PCW_VERSION_1;
                    info.Flags = #rt::PcwRegistrationNone;
                    handle = #rt::NULL_REGISTRATION;
                    __pcw_safety!("as above; only the version and flags changed.");
                    status = unsafe { #rt::PcwRegister(&raw mut handle, &raw mut *info) };
                }
                if status < 0 {
                    ::core::result::Result::Err(status)
                } else {
                    ::core::result::Result::Ok(handle)
                }
            }

            /// An instance created with `PcwCreateInstance`; closed (`PcwCloseInstance`) on
            /// drop, never with a NULL handle.
            #[derive(Debug)]
            pub struct Instance {
                handle: #rt::PPCW_INSTANCE,
            }

            __pcw_safety!("a PCW instance handle is an opaque kernel reference, not tied to the thread that created it, and `Instance` only hands it to `PcwCloseInstance`.");
            unsafe impl ::core::marker::Send for Instance {}
            __pcw_safety!("a shared `&Instance` only reads the handle's value; closing it takes `self` or `&mut self`, so no two threads can close it.");
            unsafe impl ::core::marker::Sync for Instance {}

            impl Instance {
                /// The raw handle (NULL if PCW returned success without one).
                pub fn handle(&self) -> #rt::PPCW_INSTANCE {
                    self.handle
                }

                /// Closes the instance now (the same as dropping it).
                pub fn close(self) {
                    ::core::mem::drop(self);
                }
            }

            impl ::core::ops::Drop for Instance {
                fn drop(&mut self) {
                    if self.handle != #rt::NULL_INSTANCE {
                        __pcw_safety!("the handle came from a successful `PcwCreateInstance` and is closed exactly once: it is reset to NULL right after.");
                        unsafe { #rt::PcwCloseInstance(self.handle) };
                        self.handle = #rt::NULL_INSTANCE;
                    }
                }
            }

            #sets_marker
        }
    };
    if whole {
        render::file(file, &opts.source_name)
    } else {
        render::module_file(file, &module, sets, &opts.source_name)
    }
}

fn guid_expr(rt: &syn::Path, value: u128) -> TokenStream {
    let lit = Literal::u128_unsuffixed(value);
    let hex: TokenStream = format!("0x{value:032x}")
        .parse()
        .unwrap_or_else(|_| quote!(#lit));
    quote! { #rt::guid_from_u128(#hex) }
}

#[expect(
    clippy::too_many_lines,
    reason = "one quote! block per counterset reads best whole"
)]
fn gen_set(
    set: &Counterset,
    n: &SetNames,
    opts: &Options,
    mut lists: render::Lists,
) -> (TokenStream, render::Lists) {
    let rt = &opts.runtime_path;
    let module = &n.module;
    let set_doc = doc(&format!(
        "Counterset `{}` (`{}`, `{}` instances): {}",
        set.name,
        set.guid,
        set.instances.as_str(),
        set.description
    ));
    let guid = guid_expr(rt, set.guid.0);
    let name = &set.name;
    let uri = &set.uri;
    let name_utf16: Vec<u16> = set.name.encode_utf16().collect();
    let name_len = Literal::usize_unsuffixed(name_utf16.len());
    let name_units = name_utf16.iter().map(|u| Literal::u16_unsuffixed(*u));
    let name_bytes = Literal::usize_unsuffixed(name_utf16.len() * 2);
    let multi = set.instances.is_multi();
    let instances = set.instances.as_str();

    // Counter id constants: the symbol, else the name, else the field, else `COUNTER_<id>`, in
    // `SCREAMING_SNAKE_CASE`; a clash gets `_<id>`.
    let mut used = Scope::default();
    let mut mask: u64 = 0;
    let ids = set.counters.iter().map(|c| {
        let base = [
            c.symbol.as_deref(),
            c.name.as_deref(),
            Some(c.field.as_str()),
        ]
        .into_iter()
        .flatten()
        .find_map(names::screaming_words)
        .unwrap_or_else(|| format!("COUNTER_{}", c.id));
        let cname = used.claim(&base, Suffix::Id(c.id));
        if c.id < 64 {
            mask |= 1u64 << c.id;
        }
        let id = Literal::u16_unsuffixed(c.id);
        let cid = ident(&cname);
        let d = doc(&format!(
            "Counter `{}`: `{}`, {} bytes, field `{}`.",
            c.name.as_deref().unwrap_or(&c.uri),
            c.type_name,
            c.size,
            c.field
        ));
        quote! { #d pub const #cid: u16 = #id; }
    });
    let ids = lists.items(ids.collect());
    let mask_lit: TokenStream = format!("0x{mask:016x}").parse().unwrap_or_default();

    // Structs.
    let mut structs = Vec::new();
    let mut checks = Vec::new();
    // (struct index, field) → the counters stored in it, in order.
    let mut users: HashMap<(u16, &str), Vec<String>> = HashMap::new();
    for c in &set.counters {
        users
            .entry((c.struct_index, c.field.as_str()))
            .or_default()
            .push(format!("`{}` (`{}`)", c.id, c.type_name));
    }
    for (st, sn) in set.structs.iter().zip(&n.structs) {
        let ty = &sn.ty;
        if let Some(gen_ident) = &sn.generated {
            let fields = st.fields.iter().map(|f| {
                let fid = sn
                    .fields
                    .get(&f.name)
                    .cloned()
                    .unwrap_or_else(|| ident("_"));
                let fty = if f.size == 8 {
                    quote!(u64)
                } else {
                    quote!(u32)
                };
                let users = users
                    .get(&(st.index, f.name.as_str()))
                    .map(|u| u.join(", "))
                    .unwrap_or_default();
                let d = doc(&format!(
                    "Manifest field `{}`, offset {}: counter {users}.",
                    f.name, f.offset,
                ));
                quote! { #d pub #fid: #fty, }
            });
            let fields = lists.fields(fields.collect());
            let d = doc(&match &st.c_type {
                Some(c) => format!(
                    "Value block `{}` (C type `{c}`): `StructIndex` {}, {} bytes.",
                    st.name, st.index, st.size
                ),
                None => format!(
                    "The counterset's value block: `StructIndex` {}, {} bytes.",
                    st.index, st.size
                ),
            });
            let size = Literal::usize_unsuffixed(st.size as usize);
            let size_msg = format!(
                "pcw-gen: `{gen_ident}` is not the {} bytes `inspect` reports",
                st.size
            );
            structs.push(quote! {
                #d
                #[repr(C)]
                #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
                pub struct #gen_ident { #fields }
                // The layout `inspect` reports (natural alignment, as on every Windows target).
                #[cfg(any(windows, target_pointer_width = "64"))]
                const _: () = super::assert_size(::core::mem::size_of::<#gen_ident>(), #size, #size_msg);
            });
        } else {
            // Bound user type: every field must exist (offset_of! and the closure below fail
            // to compile otherwise) with the manifest's size.
            for f in &st.fields {
                let fid = sn
                    .fields
                    .get(&f.name)
                    .cloned()
                    .unwrap_or_else(|| ident("_"));
                let size = Literal::usize_unsuffixed(f.size as usize);
                let msg = format!(
                    "pcw-gen: field `{fid}` of the type bound to struct `{}` must be {} bytes (manifest field `{}`)",
                    st.name, f.size, f.name
                );
                checks.push(quote! {
                    const _: () = super::assert_size(super::field_size(|s: &#ty| &s.#fid), #size, #msg);
                });
            }
            let msg = format!(
                "pcw-gen: the type bound to struct `{}` is larger than `PCW_COUNTER_DESCRIPTOR.Offset` can address",
                st.name
            );
            checks.push(quote! {
                const _: () = super::assert_fits_u16(::core::mem::size_of::<#ty>(), #msg);
            });
        }
    }

    // Descriptors.
    let descriptors = set.counters.iter().map(|c| {
        let sn = n.structs.get(usize::from(c.struct_index));
        let ty = sn.map(|s| s.ty.clone()).unwrap_or_default();
        let fid = sn
            .and_then(|s| s.fields.get(&c.field).cloned())
            .unwrap_or_else(|| ident("_"));
        let id = Literal::u16_unsuffixed(c.id);
        let si = Literal::u16_unsuffixed(c.struct_index);
        quote! {
            #rt::PCW_COUNTER_DESCRIPTOR {
                Id: #id,
                StructIndex: #si,
                Offset: ::core::mem::offset_of!(#ty, #fid) as u16,
                Size: super::field_size(|s: &#ty| &s.#fid) as u16,
            },
        }
    });
    let descriptors = lists.elements(descriptors.collect());
    let count = Literal::usize_unsuffixed(set.counters.len());
    let nstructs = Literal::usize_unsuffixed(set.structs.len());

    let params: Vec<TokenStream> = n
        .structs
        .iter()
        .map(|s| {
            let p = &s.param;
            let ty = &s.ty;
            quote!(#p: &#ty)
        })
        .collect();
    let raw_params: Vec<TokenStream> = n
        .structs
        .iter()
        .map(|s| {
            let p = &s.param;
            let ty = &s.ty;
            quote!(#p: *const #ty)
        })
        .collect();
    let data_from_refs = n.structs.iter().map(|s| {
        let p = &s.param;
        let ty = &s.ty;
        quote! {
            #rt::PCW_DATA {
                Data: ::core::ptr::from_ref::<#ty>(#p).cast(),
                Size: ::core::mem::size_of::<#ty>() as u32,
            },
        }
    });
    let data_from_ptrs = n.structs.iter().map(|s| {
        let p = &s.param;
        let ty = &s.ty;
        quote! {
            #rt::PCW_DATA {
                Data: #p.cast(),
                Size: ::core::mem::size_of::<#ty>() as u32,
            },
        }
    });
    let flags = if opts.silo_neutral {
        quote!(#rt::PcwRegistrationSiloNeutral)
    } else {
        quote!(#rt::PcwRegistrationNone)
    };
    let name_doc = if multi {
        "Instance names must be unique within the counterset (PCW compares them case-insensitively) and non-empty."
    } else {
        "This is a `single` counterset: pass an empty name."
    };
    let add_doc = doc(&format!(
        "Adds one instance to a collect request (`PcwAddInstance`) from inside the callback.\n\n\
         {name_doc} `id` must be unique and stable across calls (unlike the KCS sample, which \
         gives every instance 0).\n\n\
         # Safety\n\n`buffer` must be the `Buffer` of the `PCW_CALLBACK_INFORMATION` that PCW \
         passed to the callback now running."
    ));
    let create_doc = doc(&format!(
        "Creates an instance PCW reads by itself (`PcwCreateInstance`).\n\n{name_doc}\n\n\
         # Errors\n\nThe `NTSTATUS` of `PcwCreateInstance` when it fails.\n\n\
         # Safety\n\nEvery value block pointer must be valid for reads of its type until the \
         returned [`super::Instance`] is dropped (or the registration is unregistered): PCW \
         reads the blocks at any time in between. Close the instance before freeing them."
    ));
    let checks = quote! { #(#checks)* };
    let publisher = if opts.publisher {
        gen_publisher(set, n, rt)
    } else {
        TokenStream::new()
    };

    let tokens = quote! {
        #set_doc
        pub mod #module {
            /// The counterset `guid`.
            pub const GUID: #rt::GUID = #guid;
            /// The counterset `name`, which is also the name given to `PcwRegister`.
            pub const NAME: &str = #name;
            /// The counterset `uri`.
            pub const URI: &str = #uri;
            /// `instances` as written in the manifest.
            pub const INSTANCES: &str = #instances;
            /// Whether consumers may see several instances (`instances` is not `single`).
            pub const MULTI_INSTANCE: bool = #multi;
            /// `NAME` in UTF-16, without a terminator.
            static NAME_UTF16: [u16; #name_len] = [#(#name_units),*];
            /// `CounterMask` bits of every counter with an id below 64.
            pub const COUNTER_MASK: u64 = #mask_lit;
            /// Number of value blocks (`PCW_DATA` entries) per instance.
            pub const STRUCT_COUNT: usize = #nstructs;

            /// Counter ids (`PCW_COUNTER_DESCRIPTOR.Id`).
            pub mod ids {
                #ids
            }

            #(#structs)*
            #checks

            /// The counter descriptors, in manifest order (`CTRPP`'s `Descriptors[]`).
            pub static DESCRIPTORS: [#rt::PCW_COUNTER_DESCRIPTOR; #count] = [
                #descriptors
            ];

            /// A live registration of this counterset; unregistered on drop, never with a
            /// NULL handle.
            #[derive(Debug)]
            pub struct Registration {
                handle: #rt::PPCW_REGISTRATION,
            }

            __pcw_safety!("a PCW registration handle is an opaque kernel reference, not tied to the thread that registered, and `Registration` only hands it to `PcwCreateInstance` and `PcwUnregister`.");
            unsafe impl ::core::marker::Send for Registration {}
            __pcw_safety!("a shared `&Registration` only reads the handle's value, which `PcwCreateInstance` may use from any thread at once; unregistering takes `self` or `&mut self`.");
            unsafe impl ::core::marker::Sync for Registration {}

            impl Registration {
                /// The raw handle (NULL if PCW returned success without one).
                pub fn handle(&self) -> #rt::PPCW_REGISTRATION {
                    self.handle
                }

                /// Unregisters now (the same as dropping the registration).
                pub fn unregister(self) {
                    ::core::mem::drop(self);
                }
            }

            impl ::core::ops::Drop for Registration {
                fn drop(&mut self) {
                    if self.handle != #rt::NULL_REGISTRATION {
                        __pcw_safety!("the handle came from a successful `PcwRegister` and is unregistered exactly once: it is reset to NULL right after.");
                        unsafe { #rt::PcwUnregister(self.handle) };
                        self.handle = #rt::NULL_REGISTRATION;
                    }
                }
            }

            /// Registers the counterset (`PcwRegister`): `PCW_VERSION_2`, falling back to
            /// `PCW_VERSION_1` on systems that reject it.
            ///
            /// # Errors
            ///
            /// The `NTSTATUS` of `PcwRegister` when registration fails.
            ///
            /// # Safety
            ///
            /// `callback` (if any) must be safe to call with `context` from any thread until
            /// the returned [`Registration`] is dropped, and `context` must stay valid as
            /// long.
            pub unsafe fn register(
                callback: ::core::option::Option<#rt::PcwCallback>,
                context: *mut ::core::ffi::c_void,
            ) -> ::core::result::Result<Registration, #rt::NTSTATUS> {
                let mut name = #rt::UNICODE_STRING {
                    Length: #name_bytes,
                    MaximumLength: #name_bytes,
                    Buffer: NAME_UTF16.as_ptr().cast_mut(),
                };
                let mut info = #rt::PCW_REGISTRATION_INFORMATION {
                    Version: #rt::PCW_VERSION_2,
                    Name: &raw mut name,
                    CounterCount: DESCRIPTORS.len() as u32,
                    Counters: DESCRIPTORS.as_ptr().cast_mut(),
                    Callback: #rt::pcw_callback(callback),
                    CallbackContext: context,
                    Flags: #flags,
                };
                __pcw_safety!("`info` points at this counterset's static name and descriptors (PCW copies both during the call and never writes through them); the callback contract is this function's.");
                let handle = unsafe { super::register_with_fallback(&mut info) }?;
                ::core::result::Result::Ok(Registration { handle })
            }

            #add_doc
            pub unsafe fn add(
                buffer: #rt::PPCW_BUFFER,
                name: &#rt::UNICODE_STRING,
                id: u32,
                #(#params),*
            ) -> #rt::NTSTATUS {
                let mut data = [#(#data_from_refs)*];
                __pcw_safety!("`buffer` is the collect buffer per this function's contract; `name` and the value blocks are live references for the duration of the call, in which PCW copies them.");
                unsafe {
                    #rt::PcwAddInstance(buffer, name, id, data.len() as u32, data.as_mut_ptr())
                }
            }

            /// Reports one instance's name and id without values (`PcwAddInstance` with no
            /// data), for `PcwCallbackEnumerateInstances`.
            ///
            /// # Safety
            ///
            /// As for [`add`].
            pub unsafe fn enumerate(
                buffer: #rt::PPCW_BUFFER,
                name: &#rt::UNICODE_STRING,
                id: u32,
            ) -> #rt::NTSTATUS {
                __pcw_safety!("as in `add`; a zero count with a NULL data pointer is what EnumerateInstances expects.");
                unsafe { #rt::PcwAddInstance(buffer, name, id, 0, ::core::ptr::null_mut()) }
            }

            #publisher

            #create_doc
            pub unsafe fn create(
                registration: &Registration,
                name: &#rt::UNICODE_STRING,
                #(#raw_params),*
            ) -> ::core::result::Result<super::Instance, #rt::NTSTATUS> {
                let mut data = [#(#data_from_ptrs)*];
                let mut handle = #rt::NULL_INSTANCE;
                __pcw_safety!("`handle` is a writable local, `registration` is live, `name` is copied during the call, and the blocks' lifetime is this function's contract.");
                let status = unsafe {
                    #rt::PcwCreateInstance(
                        &raw mut handle,
                        registration.handle,
                        name,
                        data.len() as u32,
                        data.as_mut_ptr(),
                    )
                };
                if status < 0 {
                    ::core::result::Result::Err(status)
                } else {
                    ::core::result::Result::Ok(super::Instance { handle })
                }
            }
        }
    };
    (tokens, lists)
}

/// The safe callback of one counterset: the `Set` marker, its `Counterset` impl, and
/// `register_publisher`.
fn gen_publisher(set: &Counterset, n: &SetNames, rt: &syn::Path) -> TokenStream {
    let types: Vec<&TokenStream> = n.structs.iter().map(|s| &s.ty).collect();
    let (values_ty, blocks) = if let [only] = types.as_slice() {
        (quote!(#only), vec![quote!(values)])
    } else {
        let blocks = (0..types.len())
            .map(|i| {
                let i = syn::Index::from(i);
                quote!(&values.#i)
            })
            .collect();
        (quote!((#(#types),*)), blocks)
    };
    let values_doc = doc(if types.len() == 1 {
        "The value block."
    } else {
        "The value blocks, in `StructIndex` order."
    });
    let set_doc = doc(&format!(
        "The counterset `{}` as a type: implement `Publish<Set>` (the runtime's trait) for the \
         type that holds the driver's instances, and register it with [`register_publisher`].",
        set.name
    ));
    quote! {
        #set_doc
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Set;

        impl #rt::Counterset for Set {
            #values_doc
            type Values = #values_ty;

            unsafe fn add(
                buffer: #rt::PPCW_BUFFER,
                name: &#rt::UNICODE_STRING,
                id: u32,
                values: &Self::Values,
            ) -> #rt::NTSTATUS {
                __pcw_safety!("the buffer contract is the trait's, the same as `add`'s.");
                unsafe { add(buffer, name, id, #(#blocks),*) }
            }
        }

        impl #rt::ValuesOf<Set> for #values_ty {
            fn values(&self) -> &Self {
                self
            }
        }

        /// Registers the counterset (as [`register`]) with the runtime's safe callback:
        /// PCW's queries are answered from `publisher`'s instances — `InstanceId`,
        /// `InstanceMask`, `CounterMask`, enumeration, the cancel event and the first
        /// `PcwAddInstance` failure are handled by the runtime.
        ///
        /// # Errors
        ///
        /// The `NTSTATUS` of `PcwRegister` when registration fails.
        pub fn register_publisher<P>(
            publisher: &'static P,
        ) -> ::core::result::Result<Registration, #rt::NTSTATUS>
        where
            P: #rt::Publish<Set> + ::core::marker::Sync,
        {
            let context = ::core::ptr::from_ref::<P>(publisher).cast_mut().cast();
            __pcw_safety!("the callback only reads `publisher` through a shared reference, which is `'static` and `Sync`, so it is valid from any thread for as long as the registration lives.");
            unsafe { register(::core::option::Option::Some(#rt::callback::<Set, P>), context) }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::path::Path;

    use crate::{Config, Input};

    /// A kernel-mode manifest: a set of `big` counters over two structs (a pair sharing a
    /// field, names and descriptions on every third; the set's name and description spell the
    /// formatter's markers), then a set with the implicit struct.
    fn manifest(big: usize) -> String {
        let mut counters = String::new();
        let mut rid = 10;
        for id in 0..big {
            let field = if id == 5 { 4 } else { id };
            let _ = write!(
                counters,
                r#"<counter id="{id}" uri="T.C{id}" type="perf_counter_large_rawcount" detailLevel="standard" field="F{field}" struct="Block{}""#,
                field % 2
            );
            if id % 3 == 0 {
                let _ = write!(
                    counters,
                    r#" name="Count {id}" nameID="{rid}" description="What counter {id} counts." descriptionID="{}"/>"#,
                    rid + 1
                );
                rid += 2;
            } else {
                counters.push_str(
                    r#"><counterAttributes><counterAttribute name="noDisplay"/></counterAttributes></counter>"#,
                );
            }
            counters.push('\n');
        }
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
 <instrumentation>
  <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="2.0">
   <provider providerType="kernelMode" applicationIdentity="t.sys" providerName="T" providerGuid="{{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d4c}}" callback="custom">
    <counterSet guid="{{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d01}}" uri="T.Big" symbol="Big" name="Big __pcw_list_0_!();" nameID="1" description="Many counters; the markers __pcw_list_0_!(); __pcw_list_1_: u8, __pcw_begin!(); __pcw_end!(); __pcw_sets!(); in text stay text." descriptionID="2" instances="multiple">
     <structs><struct name="Block0" type="T_BLOCK0"/><struct name="Block1" type="T_BLOCK1"/></structs>
{counters}    </counterSet>
    <counterSet guid="{{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d02}}" uri="T.Small" symbol="Small" name="Small" nameID="3" description="Two counters." descriptionID="4" instances="single">
     <counter id="0" uri="T.S0" type="perf_counter_rawcount" detailLevel="standard" field="A" name="A" nameID="5" description="a" descriptionID="6"/>
     <counter id="1" uri="T.S1" type="perf_counter_rawcount" detailLevel="standard" field="B" name="B" nameID="7" description="b" descriptionID="8"/>
    </counterSet>
   </provider>
  </counters>
 </instrumentation>
</instrumentationManifest>
"#
        )
    }

    /// Formatting each counterset and each chunk of its long lists apart gives the text of the
    /// whole file formatted at once, for lists of one chunk, of several and of one more than a
    /// whole number of chunks.
    #[test]
    fn chunked_formatting_is_the_whole_files() {
        for big in [3, 2 * super::render::CHUNK + 1, 700] {
            let text = manifest(big);
            let input = Input::new("chunks.man", &text);
            let (manifest, _) = Config::resolved(&input).unwrap_or_else(|e| panic!("{e}"));
            let opts = Config::new()
                .options(&manifest, Path::new("chunks.man"))
                .unwrap_or_else(|e| panic!("{e}"));
            let chunked = super::generate_with(&manifest, &opts, false);
            let whole = super::generate_with(&manifest, &opts, true);
            assert!(!whole.contains("compile_error!"), "{whole}");
            assert!(whole.contains(&format!("pub const COUNT_{}: u16", (big - 1) / 3 * 3)));
            if let Some((line, (c, w))) = chunked
                .lines()
                .zip(whole.lines())
                .enumerate()
                .find(|(_, (c, w))| c != w)
            {
                panic!(
                    "{big} counters: line {}:\n  chunked: {c}\n  whole:   {w}",
                    line + 1
                );
            }
            assert_eq!(chunked.len(), whole.len(), "{big} counters");
        }
    }
}
