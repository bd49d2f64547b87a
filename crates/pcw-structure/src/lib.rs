// SPDX-License-Identifier: MIT OR Apache-2.0
//! The import graph of a crate's source files, and the circles in it.
//!
//! A crate's modules are found as rustc finds them: from the crate root (`lib.rs`, `main.rs`,
//! or a binary's file), through every `mod x;` declaration whatever its `cfg` (`#[path]`
//! honoured), skipping `#[cfg(test)]` items. Each file's references to other modules of the
//! crate — `use` trees and paths written out in code, starting with `crate::`, `super::`,
//! `self::` or the name of a child module — are resolved to the file that defines the longest
//! module prefix of the path. That gives an arrow from the file to that file, labelled with the
//! names it takes, except:
//!
//! * an arrow from a module to one of its own descendants (a parent declaring, re-exporting or
//!   calling into what it contains) is containment, not a dependency, and is left out;
//! * an arrow from a file to itself is left out.
//!
//! A circle is a strongly connected set of two or more files: each reaches every other through
//! the arrows. [`circles`] lists them with the arrows that tie each.
#![forbid(
    unsafe_code,
    reason = "a source-text analysis; parsing and graph walks need no raw memory access"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

/// A module path inside one crate, without the leading `crate`.
type ModPath = Vec<String>;

/// One source file of a crate and the module it defines.
#[derive(Clone, Debug)]
struct SourceFile {
    path: PathBuf,
    module: ModPath,
    /// The file's items, `#[cfg(test)]` ones removed.
    tokens: TokenStream,
    /// Child modules declared inline (`mod x { … }`), as module paths.
    inline: Vec<ModPath>,
}

/// An arrow: `from` takes `names` from `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrow {
    /// The importing file.
    pub from: PathBuf,
    /// The file imported from.
    pub to: PathBuf,
    /// The last segment of each path that makes the arrow.
    pub names: BTreeSet<String>,
}

/// A set of files that import each other in a circle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circle {
    /// The files, sorted.
    pub files: Vec<PathBuf>,
    /// The arrows between them.
    pub arrows: Vec<Arrow>,
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "a circle of {} files:", self.files.len())?;
        for a in &self.arrows {
            let names: Vec<&str> = a.names.iter().map(String::as_str).collect();
            writeln!(
                f,
                "  {} -> {}: {}",
                a.from.display(),
                a.to.display(),
                names.join(", ")
            )?;
        }
        Ok(())
    }
}

/// Why a crate could not be read.
#[derive(Debug)]
pub struct ReadError(pub String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Reads the crate whose root file is `root`: every file of its module tree.
fn read_crate(root: &Path) -> Result<Vec<SourceFile>, ReadError> {
    let mut files = Vec::new();
    let mut queue = vec![(root.to_path_buf(), ModPath::new(), true)];
    while let Some((path, module, owns_dir)) = queue.pop() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ReadError(format!("{}: {e}", path.display())))?;
        let file =
            syn::parse_file(&text).map_err(|e| ReadError(format!("{}: {e}", path.display())))?;
        // Where `mod x;` finds `x.rs`: beside a root or `mod.rs`, else in a folder named
        // after the file.
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let child_dir = if owns_dir {
            dir.clone()
        } else {
            dir.join(path.file_stem().unwrap_or_default())
        };
        let mut tokens = TokenStream::new();
        let mut inline = Vec::new();
        collect_items(
            &file.items,
            &module,
            &mut tokens,
            &mut inline,
            &mut |name, attrs, inner_module| {
                let flat = child_dir.join(format!("{name}.rs"));
                let target = if let Some(p) = path_attr(attrs) {
                    (dir.join(p), true)
                } else if flat.exists() {
                    (flat, false)
                } else {
                    (child_dir.join(name).join("mod.rs"), true)
                };
                queue.push((target.0, inner_module, target.1));
            },
        );
        files.push(SourceFile {
            path,
            module,
            tokens,
            inline,
        });
    }
    Ok(files)
}

/// The non-test items of a module, their `mod x;` declarations handed to `declare`.
fn collect_items(
    items: &[syn::Item],
    module: &ModPath,
    tokens: &mut TokenStream,
    inline: &mut Vec<ModPath>,
    declare: &mut dyn FnMut(&str, &[syn::Attribute], ModPath),
) {
    for item in items {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::ExternCrate(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::ForeignMod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::TraitAlias(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Union(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => &[],
        };
        if is_cfg_test(attrs) {
            continue;
        }
        if let syn::Item::Mod(m) = item {
            let mut inner = module.clone();
            inner.push(m.ident.to_string());
            match &m.content {
                None => declare(&m.ident.to_string(), &m.attrs, inner),
                Some((_, items)) => {
                    inline.push(inner.clone());
                    collect_items(items, &inner, tokens, inline, declare);
                }
            }
            continue;
        }
        item.to_tokens(tokens);
    }
}

/// Every path in `tokens` that starts with one of `starts` (or `crate`, `super`, `self`),
/// expanded through `::{…}` groups.
fn paths_in(tokens: TokenStream, starts: &BTreeSet<String>, out: &mut Vec<Vec<String>>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while let Some(tree) = trees.get(i) {
        match tree {
            TokenTree::Group(g) => paths_in(g.stream(), starts, out),
            TokenTree::Ident(id) => {
                let name = id.to_string();
                let follows = matches!(
                    (trees.get(i + 1), trees.get(i + 2)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':'
                );
                // Not the tail of a longer path (`x::crate` does not occur; `a::super` neither).
                let after_colons = i >= 1
                    && matches!(trees.get(i - 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                let start =
                    matches!(name.as_str(), "crate" | "super" | "self") || starts.contains(&name);
                if start && follows && !after_colons {
                    i = take_path(&trees, i, Vec::new(), out);
                    continue;
                }
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
        i += 1;
    }
}

/// Reads the path starting at `trees[i]` onto `prefix`, pushes every full path it names, and
/// returns the index after it.
fn take_path(
    trees: &[TokenTree],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match trees.get(i) {
            Some(TokenTree::Ident(id)) => {
                prefix.push(id.to_string());
                i += 1;
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                // `{a, b::c, self}`: each comma-separated part continues the prefix.
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut j = 0;
                while j < inner.len() {
                    j = take_path(&inner, j, prefix.clone(), out);
                    while let Some(t) = inner.get(j) {
                        j += 1;
                        if matches!(t, TokenTree::Punct(p) if p.as_char() == ',') {
                            break;
                        }
                    }
                }
                return i + 1;
            }
            _ => {
                out.push(prefix);
                return i;
            }
        }
        let colons = matches!(
            (trees.get(i), trees.get(i + 1)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                if a.as_char() == ':' && b.as_char() == ':'
        );
        if !colons {
            out.push(prefix);
            return i;
        }
        i += 2;
    }
}

/// The arrows between the files of the crate rooted at `root`.
///
/// # Errors
/// A file that cannot be read or parsed.
pub fn arrows(root: &Path) -> Result<Vec<Arrow>, ReadError> {
    let files = read_crate(root)?;
    // Which file defines each module (inline modules belong to their file).
    let mut owner: BTreeMap<ModPath, usize> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        owner.insert(f.module.clone(), i);
        for m in &f.inline {
            owner.insert(m.clone(), i);
        }
    }
    let mut arrows: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        // Children of this module may be named without `self::` (edition 2018 paths).
        let children: BTreeSet<String> = owner
            .keys()
            .filter(|m| m.len() == f.module.len() + 1 && m.starts_with(&f.module))
            .filter_map(|m| m.last().cloned())
            .collect();
        let mut paths = Vec::new();
        paths_in(f.tokens.clone(), &children, &mut paths);
        for p in paths {
            let Some(absolute) = absolute(&f.module, &p) else {
                continue;
            };
            // The longest module prefix defined by a file.
            let Some((module, &target)) = (0..=absolute.len())
                .rev()
                .find_map(|n| absolute.get(..n).and_then(|m| owner.get_key_value(m)))
            else {
                continue;
            };
            let contained = module.starts_with(&f.module) && module.len() > f.module.len();
            if target == i || contained {
                continue;
            }
            let name = absolute.last().cloned().unwrap_or_default();
            arrows.entry((i, target)).or_default().insert(name);
        }
    }
    Ok(arrows
        .into_iter()
        .filter_map(|((a, b), names)| {
            Some(Arrow {
                from: files.get(a)?.path.clone(),
                to: files.get(b)?.path.clone(),
                names,
            })
        })
        .collect())
}

/// `path` as seen from `module`, made absolute (without `crate`); `None` for another crate's.
fn absolute(module: &ModPath, path: &[String]) -> Option<ModPath> {
    let mut out = module.clone();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            out.clear();
            rest = path.get(1..)?;
        }
        Some("super" | "self") => {
            while let Some(seg) = rest.first() {
                match seg.as_str() {
                    "super" => {
                        out.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = rest.get(1..)?;
            }
        }
        Some(_) => {}
        None => return None,
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

/// The circles among `arrows` (Tarjan's strongly connected components of two or more files).
pub fn circles(arrows: &[Arrow]) -> Vec<Circle> {
    let nodes: BTreeSet<&PathBuf> = arrows.iter().flat_map(|a| [&a.from, &a.to]).collect();
    let index: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let nodes: Vec<&PathBuf> = nodes.into_iter().collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for a in arrows {
        if let (Some(&f), Some(&t)) = (index.get(&a.from), index.get(&a.to))
            && let Some(out) = next.get_mut(f)
        {
            out.push(t);
        }
    }
    let components = tarjan(&next);
    let mut out = Vec::new();
    for component in components.into_iter().filter(|c| c.len() > 1) {
        let members: BTreeSet<&PathBuf> = component
            .iter()
            .filter_map(|&i| nodes.get(i).copied())
            .collect();
        out.push(Circle {
            files: members.iter().map(|p| (*p).clone()).collect(),
            arrows: arrows
                .iter()
                .filter(|a| members.contains(&a.from) && members.contains(&a.to))
                .cloned()
                .collect(),
        });
    }
    out.sort_by(|a, b| a.files.cmp(&b.files));
    out
}

/// Strongly connected components of a graph given as adjacency lists (iterative Tarjan).
fn tarjan(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if index.get(root) != Some(&usize::MAX) {
            continue;
        }
        // (node, position in its adjacency list)
        let mut work = vec![(root, 0)];
        while let Some(&mut (v, ref mut pos)) = work.last_mut() {
            if *pos == 0 && index.get(v) == Some(&usize::MAX) {
                if let (Some(iv), Some(lv), Some(sv)) =
                    (index.get_mut(v), low.get_mut(v), on_stack.get_mut(v))
                {
                    *iv = counter;
                    *lv = counter;
                    *sv = true;
                }
                counter += 1;
                stack.push(v);
            }
            let edges = next.get(v).map_or(&[][..], Vec::as_slice);
            if let Some(&w) = edges.get(*pos) {
                *pos += 1;
                if index.get(w) == Some(&usize::MAX) {
                    work.push((w, 0));
                } else if on_stack.get(w) == Some(&true) {
                    let iw = index.get(w).copied().unwrap_or(usize::MAX);
                    if let Some(lv) = low.get_mut(v) {
                        *lv = (*lv).min(iw);
                    }
                }
                continue;
            }
            work.pop();
            let lv = low.get(v).copied().unwrap_or(0);
            if let Some(&(parent, _)) = work.last()
                && let Some(lp) = low.get_mut(parent)
            {
                *lp = (*lp).min(lv);
            }
            if Some(&lv) == index.get(v) {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    if let Some(s) = on_stack.get_mut(w) {
                        *s = false;
                    }
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn names(c: &Circle, dir: &Path) -> Vec<String> {
        c.files
            .iter()
            .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn finds_a_circle_through_use_trees_paths_and_super() {
        let dir = std::env::temp_dir().join(format!("pcw-structure-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(
            &dir,
            &[
                (
                    "lib.rs",
                    "mod a; mod b; pub mod c; mod d;\n#[cfg(test)] mod t;",
                ),
                ("a.rs", "use crate::{b::{B, other}, c};\npub struct A;"),
                (
                    "b.rs",
                    "pub struct B; fn f() { let _ = crate::c::sub::deep(); }",
                ),
                (
                    "c/mod.rs",
                    "pub mod sub; pub use sub::deep; // containment, no arrow",
                ),
                ("c/sub.rs", "pub fn deep() { let _ = super::super::a::A; }"),
                ("d.rs", "use super::a::A; // an arrow out, none back"),
            ],
        );
        let arrows = arrows(&dir.join("lib.rs")).unwrap();
        let found = circles(&arrows);
        assert_eq!(found.len(), 1, "{arrows:#?}");
        assert_eq!(names(&found[0], &dir), ["a.rs", "b.rs", "c/sub.rs"]);
        let text = found[0].to_string();
        assert!(text.contains("a.rs -> "), "{text}");
        assert!(text.contains("b.rs: B, other"), "{text}");
        // Breaking one arrow breaks the circle.
        write(&dir, &[("c/sub.rs", "pub fn deep() {}")]);
        assert!(circles(&arrows_of(&dir)).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn arrows_of(dir: &Path) -> Vec<Arrow> {
        arrows(&dir.join("lib.rs")).unwrap()
    }

    #[test]
    fn test_modules_and_other_crates_make_no_arrows() {
        let dir = std::env::temp_dir().join(format!("pcw-structure-t{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(
            &dir,
            &[
                ("lib.rs", "mod a; mod b; #[path = \"real_c.rs\"] mod c;"),
                (
                    "a.rs",
                    "use other_crate::b::X; #[cfg(test)] mod tests { use crate::b::B; }",
                ),
                ("b.rs", "pub struct B; use crate::a; fn f() { c::g() }"),
                ("real_c.rs", "pub fn g() { crate::a::h() }"),
            ],
        );
        let arrows = arrows(&dir.join("lib.rs")).unwrap();
        assert!(circles(&arrows).is_empty(), "{arrows:#?}");
        assert!(
            arrows
                .iter()
                .any(|a| a.to.ends_with("real_c.rs") || a.from.ends_with("real_c.rs"))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
