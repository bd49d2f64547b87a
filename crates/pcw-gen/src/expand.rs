// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `counters!` macro's expansion: a declaration's tokens in, the generated module out —
//! [`Config::generate_declared`] on its derived manifest, so exactly the code the equivalent
//! manifest generates.

use proc_macro2::{Span, TokenStream};

use crate::config::Config;
use crate::declare::{derive_tokens, problem::Problem};

/// Expands one `counters!` declaration (what the pcw-declare crate's macro calls): the
/// generated module, or a `compile_error!` at the declaration token of each problem (a warning
/// of the derived manifest included).
pub fn expand_declaration(input: TokenStream) -> TokenStream {
    let (declared, found) = derive_tokens(input);
    if !found.is_empty() {
        return found.iter().map(Problem::compile_error).collect();
    }
    let Some(declared) = declared else {
        return TokenStream::new();
    };
    let generated = Config::for_declaration(&declared).generate_declared(&declared);
    match generated {
        Ok(g) => g.rust.parse().unwrap_or_else(|e: proc_macro2::LexError| {
            Problem::new(
                Span::call_site(),
                format!("pcw-gen produced code that does not lex: {e}"),
            )
            .compile_error()
        }),
        Err(e) => Problem::new(Span::call_site(), e.to_string()).compile_error(),
    }
}
