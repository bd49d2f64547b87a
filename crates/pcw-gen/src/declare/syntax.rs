// SPDX-License-Identifier: MIT OR Apache-2.0
//! The declaration's grammar (syn), into the [`Declaration`] model:
//!
//! ```text
//! #[provider(KEY = VALUE, FLAG, …)]
//! pub mod MODULE {
//!     #[counterset(KEY = VALUE, structs(NAME = C_TYPE, …), …)]
//!     struct SYMBOL {
//!         #[counter(KEY = VALUE, FLAG, …)]
//!         FIELD: u32 | u64,
//!         …
//!     }
//!     …
//! }
//! ```
//!
//! Keys are the manifest's attribute names in `snake_case`; values are string literals for
//! text, integers for numbers and identifiers for symbols and enumerated values. `#[doc]`
//! attributes (`///` comments) are allowed everywhere and ignored.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt as _;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser as _};
use syn::{Attribute, Ident, LitInt, LitStr, Token, braced};

use super::model::{Attr, Counter, Declaration, Element, Set, Spanned};
use super::problem::{Problem, from_syn};
use crate::model::{CounterAttribute, ProviderType};

/// What a key's value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string literal, written as is.
    Text,
    /// A braced or bare GUID string.
    Guid,
    /// An integer (negative only where said).
    Int,
    /// A signed integer.
    Signed,
    /// An identifier, written as is.
    Symbol,
    /// An identifier in `snake_case` for a `camelCase` manifest value.
    Enum,
}

/// The keys of `#[provider]`.
const PROVIDER_KEYS: &[(&str, &str, Kind)] = &[
    ("name", "providerName", Kind::Text),
    ("guid", "providerGuid", Kind::Guid),
    ("application_identity", "applicationIdentity", Kind::Text),
    ("callback", "callback", Kind::Enum),
    ("symbol", "symbol", Kind::Symbol),
    ("resource_base", "resourceBase", Kind::Int),
];

/// The keys of `#[counterset]`.
const SET_KEYS: &[(&str, &str, Kind)] = &[
    ("name", "name", Kind::Text),
    ("description", "description", Kind::Text),
    ("guid", "guid", Kind::Guid),
    ("uri", "uri", Kind::Text),
    ("instances", "instances", Kind::Enum),
    ("name_id", "nameID", Kind::Int),
    ("description_id", "descriptionID", Kind::Int),
];

/// The keys of `#[counter]`.
const COUNTER_KEYS: &[(&str, &str, Kind)] = &[
    ("id", "id", Kind::Int),
    ("type", "type", Kind::Symbol),
    ("name", "name", Kind::Text),
    ("description", "description", Kind::Text),
    ("uri", "uri", Kind::Text),
    ("symbol", "symbol", Kind::Symbol),
    ("name_id", "nameID", Kind::Int),
    ("description_id", "descriptionID", Kind::Int),
    ("detail_level", "detailLevel", Kind::Enum),
    ("default_scale", "defaultScale", Kind::Signed),
    ("aggregate", "aggregate", Kind::Enum),
    ("base_id", "baseID", Kind::Int),
    ("perf_time_id", "perfTimeID", Kind::Int),
    ("perf_freq_id", "perfFreqID", Kind::Int),
    ("multi_counter_id", "multiCounterID", Kind::Int),
    ("struct", "struct", Kind::Symbol),
];

/// The counter attribute a `#[counter]` flag stands for: each attribute's manifest name in
/// `snake_case` (`no_display`).
fn counter_flag(key: &str) -> Option<CounterAttribute> {
    CounterAttribute::ALL
        .into_iter()
        .find(|a| snake(a.as_str()) == key)
}

/// The provider type a `#[provider]` flag stands for (`kernel_mode`, `user_mode`).
fn provider_type_flag(key: &str) -> Option<ProviderType> {
    ProviderType::ALL
        .into_iter()
        .find(|t| snake(t.as_str()) == key)
}

/// Every declaration key and the manifest attribute it stands for (for messages).
pub(crate) fn manifest_names() -> impl Iterator<Item = (String, &'static str)> {
    PROVIDER_KEYS
        .iter()
        .chain(SET_KEYS)
        .chain(COUNTER_KEYS)
        .map(|(k, m, _)| ((*k).to_owned(), *m))
        .chain(
            CounterAttribute::ALL
                .into_iter()
                .map(|a| (snake(a.as_str()), a.as_str())),
        )
}

/// Parses the tokens of one `counters!` invocation.
pub(crate) fn parse(tokens: TokenStream) -> Result<Declaration, Vec<Problem>> {
    let mut problems = Vec::new();
    let parsed = (|input: ParseStream<'_>| declaration(input, &mut problems)).parse2(tokens);
    match parsed {
        Ok(d) if problems.is_empty() => Ok(d),
        Ok(_) => Err(problems),
        Err(e) => {
            problems.extend(from_syn(e));
            Err(problems)
        }
    }
}

fn declaration(input: ParseStream<'_>, problems: &mut Vec<Problem>) -> syn::Result<Declaration> {
    let attrs = input.call(Attribute::parse_outer)?;
    let mut provider = None;
    let mut runtime = None;
    let mut silo_neutral = false;
    for attr in without_docs(&attrs) {
        if attr.path().is_ident("provider") && provider.is_none() {
            let (elem, rt, silo) = provider_attr(attr, problems);
            runtime = rt;
            silo_neutral = silo;
            provider = Some(elem);
        } else {
            problems.push(Problem::hint(
                attr_span(attr),
                format!("unexpected attribute `#[{}]`", path_text(attr)),
                "a declaration starts with one `#[provider(…)]`",
            ));
        }
    }
    let vis: syn::Visibility = input.parse()?;
    let mod_token: Token![mod] = input.parse()?;
    if !matches!(vis, syn::Visibility::Public(_)) {
        problems.push(Problem::hint(
            mod_token.span,
            "the generated module is public: write `pub mod`",
            "the module a manifest generates is `pub mod`; a declaration says so",
        ));
    }
    let name = Ident::parse_any(input)?;
    let module = Spanned {
        value: name.unraw().to_string(),
        span: name.span(),
    };
    if !crate::names::is_rust_ident(&module.value) {
        problems.push(Problem::new(
            module.span,
            format!(
                "module name `{}` is not a plain rust identifier",
                module.value
            ),
        ));
    }
    let Some(provider) = provider else {
        return Err(syn::Error::new(
            name.span(),
            "the declaration has no `#[provider(…)]` before `pub mod`",
        ));
    };
    let body;
    braced!(body in input);
    let mut sets = Vec::new();
    while !body.is_empty() {
        sets.push(set(&body, problems)?);
    }
    if !input.is_empty() {
        return Err(
            input.error("one `counters!` declares one provider: nothing may follow its module")
        );
    }
    Ok(Declaration {
        module,
        provider,
        runtime,
        silo_neutral,
        sets,
    })
}

/// `#[provider(…)]`: the `<provider>` element, the `runtime` and whether `silo_neutral`.
fn provider_attr(
    attr: &Attribute,
    problems: &mut Vec<Problem>,
) -> (Element, Option<Spanned<String>>, bool) {
    let mut runtime = None;
    let mut silo_neutral = false;
    let mut elem = Element::new(attr_span(attr));
    let mut mode: Option<Span> = None;
    let result = attr.parse_nested_meta(|meta| {
        let key = key(&meta)?;
        if let Some(provider_type) = provider_type_flag(&key.value) {
            flag(&meta)?;
            if mode.is_some() {
                return Err(meta.error("the provider is `kernel_mode` or `user_mode`, not both"));
            }
            mode = Some(key.span);
            elem.attrs.push(Attr {
                name: ProviderType::ATTRIBUTE,
                value: provider_type.as_str().to_owned(),
                span: key.span,
            });
            return Ok(());
        }
        match key.value.as_str() {
            "silo_neutral" => {
                flag(&meta)?;
                silo_neutral = true;
                Ok(())
            }
            "runtime" => {
                let lit: LitStr = meta.value()?.parse()?;
                runtime = Some(Spanned {
                    value: lit.value(),
                    span: lit.span(),
                });
                Ok(())
            }
            _ => keyed(&meta, &key, PROVIDER_KEYS, "provider", &mut elem),
        }
    });
    if let Err(e) = result {
        problems.extend(from_syn(e));
    }
    if mode.is_none() {
        problems.push(Problem::hint(
            elem.span,
            "`#[provider]` does not say whether it is `kernel_mode` or `user_mode`",
            "add `kernel_mode` (a driver, over pcw-rt) or `user_mode` (a service, over pcw-um)",
        ));
    }
    (elem, runtime, silo_neutral)
}

fn set(input: ParseStream<'_>, problems: &mut Vec<Problem>) -> syn::Result<Set> {
    let attrs = input.call(Attribute::parse_outer)?;
    input.parse::<Token![struct]>()?;
    let symbol = Ident::parse_any(input)?;
    let mut elem = Element::new(symbol.span());
    elem.attrs.push(Attr {
        name: "symbol",
        value: symbol.unraw().to_string(),
        span: symbol.span(),
    });
    let mut structs = Vec::new();
    let mut seen = false;
    for attr in without_docs(&attrs) {
        if attr.path().is_ident("counterset") && !seen {
            seen = true;
            let result = attr.parse_nested_meta(|meta| {
                let key = key(&meta)?;
                if key.value == "structs" {
                    return meta.parse_nested_meta(|inner| {
                        let name = key_of(&inner)?;
                        let ty = Ident::parse_any(inner.value()?)?;
                        let mut st = Element::new(name.span);
                        st.attrs.push(Attr {
                            name: "name",
                            value: name.value,
                            span: name.span,
                        });
                        st.attrs.push(Attr {
                            name: "type",
                            value: ty.unraw().to_string(),
                            span: ty.span(),
                        });
                        structs.push(st);
                        Ok(())
                    });
                }
                keyed(&meta, &key, SET_KEYS, "counterset", &mut elem)
            });
            if let Err(e) = result {
                problems.extend(from_syn(e));
            }
        } else {
            problems.push(Problem::hint(
                attr_span(attr),
                format!(
                    "unexpected attribute `#[{}]` on a counterset",
                    path_text(attr)
                ),
                "a counterset has one `#[counterset(…)]`",
            ));
        }
    }
    if !seen {
        problems.push(Problem::hint(
            symbol.span(),
            format!("`struct {symbol}` has no `#[counterset(…)]`"),
            "say at least its `name`, `description` and `instances`",
        ));
    }
    let body;
    braced!(body in input);
    let mut counters = Vec::new();
    while !body.is_empty() {
        counters.push(counter(&body, problems)?);
        if body.is_empty() {
            break;
        }
        body.parse::<Token![,]>()?;
    }
    Ok(Set {
        elem,
        structs,
        counters,
    })
}

fn counter(input: ParseStream<'_>, problems: &mut Vec<Problem>) -> syn::Result<Counter> {
    let attrs = input.call(Attribute::parse_outer)?;
    let field = Ident::parse_any(input)?;
    input.parse::<Token![:]>()?;
    let ty: Ident = input.parse()?;
    if ty != "u32" && ty != "u64" {
        problems.push(Problem::hint(
            ty.span(),
            format!("a counter's value is `u32` or `u64`, not `{ty}`"),
            "4-byte counter types are `u32`, 8-byte ones `u64`",
        ));
    }
    let mut elem = Element::new(field.span());
    let mut attributes: Vec<Spanned<String>> = Vec::new();
    let mut seen = false;
    for attr in without_docs(&attrs) {
        if attr.path().is_ident("counter") && !seen {
            seen = true;
            let result = attr.parse_nested_meta(|meta| {
                let key = key(&meta)?;
                if let Some(attribute) = counter_flag(&key.value) {
                    flag(&meta)?;
                    let name = attribute.as_str();
                    if attributes.iter().any(|a| a.value == name) {
                        return Err(meta.error(format!("`{}` is given twice", key.value)));
                    }
                    attributes.push(Spanned {
                        value: name.to_owned(),
                        span: key.span,
                    });
                    return Ok(());
                }
                keyed(&meta, &key, COUNTER_KEYS, "counter", &mut elem)
            });
            if let Err(e) = result {
                problems.extend(from_syn(e));
            }
        } else {
            problems.push(Problem::hint(
                attr_span(attr),
                format!("unexpected attribute `#[{}]` on a counter", path_text(attr)),
                "a counter has one `#[counter(…)]`",
            ));
        }
    }
    if !seen {
        problems.push(Problem::hint(
            field.span(),
            format!("`{field}` has no `#[counter(…)]`"),
            "say at least its `id` and `type`",
        ));
    }
    elem.attrs.push(Attr {
        name: "field",
        value: field.unraw().to_string(),
        span: field.span(),
    });
    Ok(Counter {
        elem,
        attributes,
        field: Spanned {
            value: field.unraw().to_string(),
            span: field.span(),
        },
        ty: Spanned {
            value: ty.to_string(),
            span: ty.span(),
        },
    })
}

/// A `KEY = VALUE` of `table` into `elem`, in manifest spelling.
fn keyed(
    meta: &ParseNestedMeta<'_>,
    key: &Spanned<String>,
    table: &[(&str, &'static str, Kind)],
    what: &str,
    elem: &mut Element,
) -> syn::Result<()> {
    let Some((_, name, kind)) = table.iter().find(|(k, _, _)| *k == key.value) else {
        let known: Vec<String> = table.iter().map(|(k, _, _)| format!("`{k}`")).collect();
        return Err(meta.error(format!(
            "unknown key `{}` in `#[{what}]`; expected one of {}",
            key.value,
            known.join(", ")
        )));
    };
    if elem.get(name).is_some() {
        return Err(meta.error(format!("`{}` is given twice", key.value)));
    }
    let input = meta.value().map_err(|_| {
        meta.error(format!(
            "`{}` needs a value: `{} = …`",
            key.value, key.value
        ))
    })?;
    let (value, span) = match kind {
        Kind::Text | Kind::Guid => {
            let lit: LitStr = input.parse().map_err(|e| {
                syn::Error::new(e.span(), format!("`{}` takes a string literal", key.value))
            })?;
            let mut v = lit.value();
            if *kind == Kind::Guid && !v.starts_with('{') {
                v = format!("{{{v}}}");
            }
            (v, lit.span())
        }
        Kind::Int | Kind::Signed => {
            let minus = if *kind == Kind::Signed {
                input.parse::<Option<Token![-]>>()?
            } else {
                None
            };
            let lit: LitInt = input.parse().map_err(|e| {
                syn::Error::new(e.span(), format!("`{}` takes an integer", key.value))
            })?;
            let sign = if minus.is_some() { "-" } else { "" };
            (format!("{sign}{}", lit.base10_digits()), lit.span())
        }
        Kind::Symbol | Kind::Enum => {
            let ident = Ident::parse_any(input).map_err(|e| {
                syn::Error::new(e.span(), format!("`{}` takes an identifier", key.value))
            })?;
            let text = ident.unraw().to_string();
            let v = if *kind == Kind::Enum {
                camel(&text)
            } else {
                text
            };
            (v, ident.span())
        }
    };
    elem.attrs.push(Attr { name, value, span });
    Ok(())
}

/// `multiple_aggregate` → `multipleAggregate`.
pub(crate) fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `multipleAggregate` → `multiple_aggregate`.
pub(crate) fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn key(meta: &ParseNestedMeta<'_>) -> syn::Result<Spanned<String>> {
    key_of(meta)
}

fn key_of(meta: &ParseNestedMeta<'_>) -> syn::Result<Spanned<String>> {
    match meta.path.get_ident() {
        Some(i) => Ok(Spanned {
            value: i.unraw().to_string(),
            span: i.span(),
        }),
        None => Err(meta.error("expected a key such as `name`")),
    }
}

fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.is_empty() || meta.input.peek(Token![,]) {
        Ok(())
    } else {
        Err(meta.error("this key is a flag: it takes no value"))
    }
}

fn without_docs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| !a.path().is_ident("doc"))
}

fn attr_span(attr: &Attribute) -> Span {
    attr.path()
        .segments
        .first()
        .map_or_else(Span::call_site, |s| s.ident.span())
}

fn path_text(attr: &Attribute) -> String {
    let path = attr.path();
    quote::quote!(#path).to_string().replace(' ', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_conversions_round_trip() {
        for v in crate::model::Instances::ALL {
            assert_eq!(camel(&snake(v.as_str())), v.as_str());
        }
        assert_eq!(snake("globalAggregateHistory"), "global_aggregate_history");
        assert_eq!(camel("no_display"), "noDisplay");
        assert_eq!(camel("_x"), "_x");
    }
}
