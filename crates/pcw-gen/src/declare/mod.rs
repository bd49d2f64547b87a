// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counters declared in Rust: the `counters!` declaration (the pcw-declare crate's macro), the
//! manifest derived from it, and the declaration written for an existing manifest.
//!
//! A declaration says in Rust what a manifest says in XML — provider, countersets, counters —
//! and leaves out what a machine can choose: GUIDs ([`name_guid`]), resource ids, `uri`s and the
//! `detailLevel` of an ordinary counter. It is not compiled by a second generator. Its one
//! parser ([`analyze_declarations`] for a source file, [`expand`] for the macro's tokens) turns
//! it into manifest text, which goes through the same analysis as a hand-written `.man`
//! ([`crate::analyze`]) and the same generators; the diagnostics of that analysis come back at
//! the declaration's tokens (the derived manifest puts each attribute on a line of its own, and
//! every line remembers the token it came from).
//!
//! A declaration is held to a clean manifest: every warning the manifest rules would give the
//! derived manifest is an error of the declaration, so the manifest of a declaration that
//! compiles has no error and no warning of the manifest rules under `pcw lint`. The
//! fleet-readiness advice `pcw lint` adds (how exporters and PDH paths will treat a counterset,
//! [`crate::fleet`]) stays advice, as it is for a hand-written manifest: a `multipleAggregate`
//! counterset, for one, always draws some.
//!
//! The syntax, the defaults and the GUID algorithm are documented in the pcw-declare crate and
//! `docs/declaring-counters-in-rust.md`.
//!
//! # Examples
//!
//! ```
//! let source = br#"pcw_declare::counters! {
//!     #[provider(name = "Tide", application_identity = "tide.exe", user_mode, symbol = Tide)]
//!     pub mod tide {
//!         #[counterset(name = "Tide", description = "Tide levels.", instances = single)]
//!         struct Level {
//!             #[counter(id = 1, type = perf_counter_rawcount, name = "Height", description = "Water height.")]
//!             height: u32,
//!         }
//!     }
//! }"#;
//! let analysis = pcw_gen::declare::analyze_declarations(&pcw_gen::Input::new("tide.rs", source));
//! assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
//! let declared = &analysis.declared[0];
//! assert_eq!(declared.file_name, "tide.man");
//! assert!(declared.manifest.contains(r#"providerName="Tide""#));
//! ```

mod check;
mod expand;
mod guid;
mod model;
pub(crate) mod problem;
mod syntax;
mod to_rust;
mod xml;

use proc_macro2::TokenStream;

use crate::diag::Diagnostic;
use crate::input::Input;

pub use expand::expand;
pub use guid::name_guid;

/// One declaration of a source file, as a manifest.
///
/// # Examples
///
/// ```
/// let source = br#"pcw_declare::counters! {
///     #[provider(name = "Tide", application_identity = "tide.exe", user_mode, symbol = Tide)]
///     pub mod tide {
///         #[counterset(name = "Tide", description = "Tide levels.", instances = single)]
///         struct Level {
///             #[counter(id = 1, type = perf_counter_rawcount, name = "Height", description = "Water height.")]
///             height: u32,
///         }
///     }
/// }"#;
/// let analysis = pcw_gen::declare::analyze_declarations(&pcw_gen::Input::new("tide.rs", source));
/// let declared = &analysis.declared[0];
/// assert_eq!((declared.module.as_str(), declared.runtime.as_deref()), ("tide", None));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Declared {
    /// The generated module's name (`pub mod NAME` in the declaration); outputs are named after
    /// it (`NAME.man`, `NAME.rc` …).
    pub module: String,
    /// The derived manifest's file name, `<module>.man`.
    pub file_name: String,
    /// The derived manifest (UTF-8 XML).
    pub manifest: String,
    /// The runtime path the declaration asks for (`runtime = "…"`), if any.
    pub runtime: Option<String>,
    /// Whether the declaration asks for `silo_neutral` registration.
    pub silo_neutral: bool,
}

impl Declared {
    /// The derived manifest as an [`Input`], labelled with [`Declared::file_name`]: what every
    /// operation on a manifest takes ([`Declared::config`] gives the configuration).
    ///
    /// # Examples
    ///
    /// ```
    /// let source = br#"pcw_declare::counters! {
    ///     #[provider(name = "Tide", application_identity = "tide.exe", user_mode, symbol = Tide)]
    ///     pub mod tide {
    ///         #[counterset(name = "Tide", description = "Tide levels.", instances = single)]
    ///         struct Level {
    ///             #[counter(id = 1, type = perf_counter_rawcount, name = "Height", description = "Water height.")]
    ///             height: u32,
    ///         }
    ///     }
    /// }"#;
    /// let analysis = pcw_gen::declare::analyze_declarations(&pcw_gen::Input::new("tide.rs", source));
    /// let input = analysis.declared[0].input();
    /// assert_eq!(input.path(), std::path::Path::new("tide.man"));
    /// assert!(pcw_gen::lint(&input).iter().all(|d| !d.is_error()));
    /// ```
    pub fn input(&self) -> Input<'_> {
        Input::new(&self.file_name, &self.manifest)
    }
}

/// The result of reading the declarations of one Rust source file.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("empty.rs", "fn main() {}");
/// let analysis = pcw_gen::declare::analyze_declarations(&input);
/// assert!(analysis.has_errors() && analysis.declared.is_empty());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeclarationAnalysis {
    /// Every `counters!` invocation of the file, in file order, with its derived manifest
    /// (present whenever the declaration could be read, even when the manifest has problems).
    pub declared: Vec<Declared>,
    /// Every problem, at `file:line:column` of the source file; all are errors (a warning of
    /// the derived manifest is an error of its declaration).
    pub diagnostics: Vec<Diagnostic>,
}

impl DeclarationAnalysis {
    /// Whether any declaration has a problem.
    ///
    /// # Examples
    ///
    /// ```
    /// let input = pcw_gen::Input::new("bad.rs", "pcw_declare::counters! { pub mod m {} }");
    /// assert!(pcw_gen::declare::analyze_declarations(&input).has_errors());
    /// ```
    pub fn has_errors(&self) -> bool {
        !self.diagnostics.is_empty()
    }
}

/// Reads every `counters!` invocation of a Rust source file (an item of the file or of an
/// inline module at any depth; the macro may be named through any path ending in `counters`)
/// and derives its manifest. The rest of the file is only lexed, not parsed: a syntax error
/// there is the compiler's to report, and no nesting of it can exhaust the stack.
/// Pure: the input's path only labels the diagnostics. Bytes are decoded as every pcw input is
/// (UTF-8 or UTF-16, with or without BOM).
///
/// # Examples
///
/// ```
/// let source = br#"pcw_declare::counters! {
///     #[provider(name = "Tide", application_identity = "tide.exe", user_mode, symbol = Tide)]
///     pub mod tide {
///         #[counterset(name = "Tide", description = "Tide levels.", instances = single)]
///         struct Level {
///             #[counter(id = 1, type = perf_counter_rawcount, name = "Height", description = "Water height.")]
///             height: u32,
///         }
///     }
/// }"#;
/// let analysis = pcw_gen::declare::analyze_declarations(&pcw_gen::Input::new("tide.rs", source));
/// assert_eq!(analysis.declared.len(), 1);
/// assert!(analysis.declared[0].manifest.contains(r#"schemaVersion="1.1""#));
/// ```
pub fn analyze_declarations(input: &Input<'_>) -> DeclarationAnalysis {
    let file = input.path();
    let mut out = DeclarationAnalysis {
        declared: Vec::new(),
        diagnostics: Vec::new(),
    };
    let text = match pcw_io::text::decode(input.bytes()) {
        Ok((text, _)) => text,
        Err(e) => {
            out.diagnostics.push(problem::at_start(file, e.message()));
            return out;
        }
    };
    // The file is read as proc-macro2's tokens, which it lexes without recursion, and only the
    // `counters!` invocations are looked for in them: syn's parser of the whole file recursed
    // once or more per level of brackets, generics, references, unary operators or closures,
    // and a file of a few hundred such levels overflowed the stack. (A syntax error elsewhere
    // in the file is the compiler's to report; one in a declaration is reported here.)
    let tokens = match without_shebang(&text).parse::<TokenStream>() {
        Ok(tokens) => tokens,
        Err(e) => {
            let found = problem::Problem::new(e.span(), format!("the file is not Rust: {e}"));
            out.diagnostics.push(found.diagnostic(file));
            return out;
        }
    };
    if let Some(found) = too_deep(&tokens) {
        out.diagnostics.push(found.diagnostic(file));
        return out;
    }
    let macros = collect_macros(tokens);
    if macros.is_empty() {
        out.diagnostics.push(problem::at_start(
            file,
            "the file has no `counters!` declaration".to_owned(),
        ));
        return out;
    }
    for tokens in macros {
        let (declared, found) = derive_tokens(tokens);
        out.diagnostics
            .extend(found.into_iter().map(|p| p.diagnostic(file)));
        out.declared.extend(declared);
    }
    out.diagnostics.sort_by_key(|d| d.pos);
    out
}

/// Writes the declaration equivalent to a manifest (`pcw gen --to-rust`): every GUID, `uri`,
/// symbol and resource numbering of the manifest kept, counters in the manifest's order, the
/// module named after the file stem as [`crate::Config`] names it. Deriving a manifest from it
/// gives the same resolved model ([`crate::model::Manifest`], positions aside).
///
/// # Errors
///
/// [`crate::Error::Manifest`] when the manifest has errors.
///
/// # Examples
///
/// ```
/// let input = pcw_gen::Input::new("contoso_v11.man", include_str!("../../tests/manifests/contoso_v11.man"));
/// let declaration = pcw_gen::declare::to_rust(&input)?;
/// assert!(declaration.contains("pcw_declare::counters! {"));
/// assert!(declaration.contains("pub mod contoso_v11 {"));
/// # Ok::<(), pcw_gen::Error>(())
/// ```
pub fn to_rust(input: &Input<'_>) -> Result<String, crate::Error> {
    let file = input.path();
    let analysis = crate::analyze(input);
    let Some(m) = analysis.manifest else {
        return Err(crate::Error::Manifest {
            diagnostics: analysis.diagnostics,
        });
    };
    let stem = file.file_stem().map_or_else(
        || "manifest".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    Ok(to_rust::write(&m, &crate::names::snake(&stem)))
}

/// Parses one declaration and derives its manifest, checked: the problems of the declaration
/// and of the derived manifest (warnings and fleet warnings included).
pub(crate) fn derive_tokens(tokens: TokenStream) -> (Option<Declared>, Vec<problem::Problem>) {
    if let Some(found) = too_deep(&tokens) {
        return (None, vec![found]);
    }
    let decl = match syntax::parse(tokens) {
        Ok(d) => d,
        Err(found) => return (None, found),
    };
    let derived = match xml::write(&decl) {
        Ok(d) => d,
        Err(found) => return (None, found),
    };
    let found = check::check(&decl, &derived);
    let declared = Declared {
        file_name: format!("{}.man", decl.module.value),
        module: decl.module.value.clone(),
        manifest: derived.text,
        runtime: decl.runtime.as_ref().map(|r| r.value.clone()),
        silo_neutral: decl.silo_neutral,
    };
    (Some(declared), found)
}

/// The most brackets, parentheses and braces a file or declaration may nest. Real Rust code
/// nests a few dozen; syn's parser, which recurses for each level, then stays within a 2 MiB
/// thread stack even unoptimised (measured: 700 nested parentheses overflowed the main
/// thread's 8 MiB in a debug build).
const MAX_NESTING: usize = 128;

/// The first group nested deeper than [`MAX_NESTING`] in `tokens`, as a problem at its opening
/// bracket. A walk with its own stack: no recursion, whatever the depth.
fn too_deep(tokens: &TokenStream) -> Option<problem::Problem> {
    let mut open = vec![tokens.clone().into_iter()];
    while let Some(level) = open.last_mut() {
        match level.next() {
            Some(proc_macro2::TokenTree::Group(group)) => {
                if open.len() > MAX_NESTING {
                    return Some(problem::Problem::hint(
                        group.span_open(),
                        format!("brackets nested more than {MAX_NESTING} deep"),
                        "pcw-gen reads files whose parentheses, brackets and braces nest at \
                         most that deep; move the declaration to a file of its own",
                    ));
                }
                open.push(group.stream().into_iter());
            }
            Some(_) => {}
            None => {
                open.pop();
            }
        }
    }
    None
}

/// `text` with a first line of `#!…` (a script's interpreter line, not an inner attribute
/// `#![…]`) blanked, its positions kept, as the compiler ignores it.
fn without_shebang(text: &str) -> std::borrow::Cow<'_, str> {
    let Some(rest) = text.strip_prefix("#!") else {
        return text.into();
    };
    if rest.trim_start().starts_with('[') {
        return text.into();
    }
    let end = text.find('\n').unwrap_or(text.len());
    let blank: String = text
        .get(..end)
        .unwrap_or_default()
        .chars()
        .map(|_| ' ')
        .collect();
    format!("{blank}{}", text.get(end..).unwrap_or_default()).into()
}

/// The tokens of every `counters!` invocation that is an item of the file or of an inline
/// module (`mod name { … }`), in the file's order, as syn would find them among the file's
/// items: a path ending in `counters`, `!` and a delimited group, where an item starts (the
/// file's start, or after `;`, a braced group, an attribute or a visibility). A walk with its
/// own stack of the modules it is in.
fn collect_macros(file: TokenStream) -> Vec<TokenStream> {
    use proc_macro2::{Delimiter, TokenTree};
    let mut out = Vec::new();
    // Each module being read: its tokens, the next one's index, whether an item starts there.
    let mut modules = vec![(file.into_iter().collect::<Vec<TokenTree>>(), 0usize, true)];
    while let Some((items, i, item_start)) = modules.last_mut() {
        let Some(token) = items.get(*i) else {
            modules.pop();
            continue;
        };
        let punct = |at: usize, c: char| matches!(items.get(at), Some(TokenTree::Punct(p)) if p.as_char() == c);
        let ident = |at: usize, name: &str| matches!(items.get(at), Some(TokenTree::Ident(id)) if id == name);
        let group = |at: usize, delimiter: Delimiter| match items.get(at) {
            Some(TokenTree::Group(g)) if g.delimiter() == delimiter => Some(g.stream()),
            _ => None,
        };
        // An attribute (`#[…]`, `#![…]`) or a visibility (`pub`, `pub(crate)`) keeps the
        // position where an item starts.
        if punct(*i, '#') {
            let at = if punct(*i + 1, '!') { *i + 2 } else { *i + 1 };
            if group(at, Delimiter::Bracket).is_some() {
                *i = at + 1;
                continue;
            }
        }
        if *item_start && ident(*i, "pub") {
            *i += if group(*i + 1, Delimiter::Parenthesis).is_some() {
                2
            } else {
                1
            };
            continue;
        }
        if *item_start {
            // A path (`counters`, `pcw_declare::counters`, `::pcw_declare::counters`).
            let mut at = *i;
            if punct(at, ':') && punct(at + 1, ':') {
                at += 2;
            }
            while matches!(items.get(at), Some(TokenTree::Ident(_)))
                && punct(at + 1, ':')
                && punct(at + 2, ':')
            {
                at += 3;
            }
            if ident(at, "counters")
                && punct(at + 1, '!')
                && let Some(TokenTree::Group(body)) = items.get(at + 2)
            {
                out.push(body.stream());
                *i = at + 3;
                continue;
            }
            // `mod name { … }`: its items, then the rest of this module.
            if ident(*i, "mod")
                && matches!(items.get(*i + 1), Some(TokenTree::Ident(_)))
                && let Some(body) = group(*i + 2, Delimiter::Brace)
            {
                *i += 3;
                modules.push((body.into_iter().collect(), 0, true));
                continue;
            }
        }
        *item_start = match token {
            TokenTree::Punct(p) => p.as_char() == ';',
            TokenTree::Group(g) => g.delimiter() == Delimiter::Brace,
            _ => false,
        };
        *i += 1;
    }
    out
}
