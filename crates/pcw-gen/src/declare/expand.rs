// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `counters!` macro's expansion: a declaration's tokens in, the generated module out —
//! [`crate::Config::generate`] on its derived manifest, so exactly the code the equivalent
//! manifest generates.

use proc_macro2::{Span, TokenStream};

use super::derive_tokens;
use super::problem::Problem;

/// Expands one `counters!` declaration (what the pcw-declare crate's macro calls): the
/// generated module, or a `compile_error!` at the declaration token of each problem (a warning
/// of the derived manifest included).
///
/// # Examples
///
/// ```
/// let tokens: proc_macro2::TokenStream = r#"
///     #[provider(name = "Tide", application_identity = "tide.exe", user_mode, symbol = Tide)]
///     pub mod tide {
///         #[counterset(name = "Tide", description = "Tide levels.", instances = single)]
///         struct Level {
///             #[counter(id = 1, type = perf_counter_rawcount, name = "Height", description = "Water height.")]
///             height: u32,
///         }
///     }
/// "#
/// .parse()?;
/// let module = pcw_gen::declare::expand(tokens).to_string();
/// assert!(module.contains("pub mod tide"));
/// assert!(!module.contains("compile_error"));
/// # Ok::<(), proc_macro2::LexError>(())
/// ```
pub fn expand(input: TokenStream) -> TokenStream {
    let (declared, found) = derive_tokens(input);
    if !found.is_empty() {
        return found.iter().map(Problem::compile_error).collect();
    }
    let Some(declared) = declared else {
        return TokenStream::new();
    };
    match declared.config().generate(&declared.input()) {
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
