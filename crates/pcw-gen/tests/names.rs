// SPDX-License-Identifier: MIT OR Apache-2.0
//! Names that survive every output: arbitrary text — every hostile character class of the
//! display-text policy (`pcw_gen::text`), non-ASCII and astral characters, quotes, backslashes,
//! YAML and template syntax — is put in a manifest as the provider name, the counterset's name,
//! description and uri, and a counter's name and description, for a kernel-mode and a user-mode
//! provider. When the analysis accepts the text, each output is read back with a reader of its
//! own format and must hold exactly that text: the Rust of both generators and the V1 tables
//! (parsed with `syn`), the `.rc` string table, the compiled `.res`, the lodctr `.ini` (read as
//! the profile API reads it, with the `.h` giving the symbols) and the `inspect` JSON. When it
//! refuses the text, there is an error at every attribute holding it, naming the character.
//! The CLI's outputs (YAML exports, `pcw list`) have their own test in pcw-cli.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{h_symbols, ini_profile, rc_strings, res_strings, utf16le};
use pcw_gen::{Config, Diagnostic, Generated, Input};
use proptest::prelude::*;
use serde_json::Value;

/// What the policy table refuses, restated here: controls (C0, DEL, C1), the line and
/// paragraph separators, noncharacters and the replacement character.
fn refused_by_policy(c: char) -> bool {
    let u = u32::from(c);
    c.is_control()
        || c == '\u{2028}'
        || c == '\u{2029}'
        || (0xFDD0..=0xFDEF).contains(&u)
        || u & 0xFFFE == 0xFFFE
        || c == '\u{FFFD}'
}

/// One piece of a name: how the manifest spells it and the text the XML reader gives for it.
#[derive(Clone, Debug)]
struct Piece {
    xml: String,
    text: String,
}

fn literal(text: &str) -> Piece {
    Piece {
        xml: text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('"', "&quot;"),
        text: text.to_owned(),
    }
}

fn reference(c: char) -> Piece {
    Piece {
        xml: format!("&#x{:X};", u32::from(c)),
        text: c.to_string(),
    }
}

/// Whether XML 1.0 lets a character reference name `c`.
fn xml_char(c: char) -> bool {
    !matches!(u32::from(c), 0..=8 | 0xB | 0xC | 0xE..=0x1F | 0xFFFE | 0xFFFF)
}

fn piece() -> impl Strategy<Value = Piece> {
    let plain = prop::sample::select(
        " aZ09\"'\\#:%{}$&*!|>-?[],@`<=;/()_.~^+\u{a0}éß日本😀\u{1d11e}\u{301}\u{200d}\u{e000}"
            .chars()
            .collect::<Vec<_>>(),
    )
    .prop_map(|c| literal(&c.to_string()));
    let any_char = any::<char>().prop_filter("an XML character", |c| xml_char(*c));
    let hostile = prop::sample::select(vec![
        '\t',
        '\n',
        '\r',
        '\u{7f}',
        '\u{80}',
        '\u{85}',
        '\u{9f}',
        '\u{2028}',
        '\u{2029}',
        '\u{fdd0}',
        '\u{fdef}',
        '\u{1fffe}',
        '\u{10ffff}',
        '\u{fffd}',
        '\u{feff}',
        '\u{202e}',
        '\u{2066}',
        '\u{200f}',
    ]);
    // References the XML reader cannot honour: it leaves U+FFFD.
    let lost =
        prop::sample::select(vec!["&#xD800;", "&#xDFFF;", "&#x110000;"]).prop_map(|r| Piece {
            xml: r.to_owned(),
            text: "\u{fffd}".to_owned(),
        });
    let tokens = prop::sample::select(vec![
        "- ",
        "? ",
        ": ",
        "${x}",
        "{{x}}",
        "{}",
        "# c",
        "&a",
        "*a",
        "!t",
        "| ",
        "> ",
        "---",
        "...",
        "%YAML",
        "\"\"",
        "''",
        "\\n",
        "\\u0000",
        "\\\\",
        "r#",
        "*/",
        "/*",
        "//",
        "$(string.x)",
        "\"a\"",
        "[x]",
        "x=y",
        "; c",
        "%s",
        "%1",
        "`",
        "\u{200d}\u{1f3f3}",
    ])
    .prop_map(literal);
    prop_oneof![
        6 => plain,
        2 => any_char.prop_map(reference),
        2 => hostile.prop_map(reference),
        1 => lost,
        3 => tokens,
    ]
}

/// A manifest with the name in six attributes, each value starting on its own line; the
/// positions of those values (line, column).
fn manifest(user_mode: bool, name_xml: &str) -> (String, Vec<(u32, u32)>) {
    let mut lines: Vec<String> = Vec::new();
    let mut at = Vec::new();
    let mut hostile = |lines: &mut Vec<String>, prefix: &str, suffix: &str| {
        at.push((
            u32::try_from(lines.len() + 1).unwrap(),
            u32::try_from(prefix.chars().count() + 1).unwrap(),
        ));
        lines.push(format!("{prefix}{name_xml}{suffix}"));
    };
    let (kind, app) = if user_mode {
        ("userMode", "names.exe")
    } else {
        ("kernelMode", "names.sys")
    };
    lines.push(r#"<?xml version="1.0" encoding="UTF-8"?>"#.to_owned());
    lines.push(
        r#"<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">"#
            .to_owned(),
    );
    lines.push(" <instrumentation>".to_owned());
    lines.push(
        r#"  <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="1.1">"#
            .to_owned(),
    );
    lines.push(format!(
        r#"   <provider providerType="{kind}" applicationIdentity="{app}" symbol="NamesProvider""#
    ));
    hostile(&mut lines, r#"    providerName=""#, r#"""#);
    lines.push(r#"    providerGuid="{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d4c}">"#.to_owned());
    lines.push(
        r#"    <counterSet guid="{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d01}" symbol="NamesSet" instances="multiple""#
            .to_owned(),
    );
    hostile(&mut lines, r#"     name=""#, r#"""#);
    hostile(&mut lines, r#"     description=""#, r#"""#);
    hostile(&mut lines, r#"     uri=""#, r#"">"#);
    lines.push(
        r#"     <counter id="1" uri="Names.One" symbol="ONE" field="One" type="perf_counter_rawcount" detailLevel="standard""#
            .to_owned(),
    );
    hostile(&mut lines, r#"      name=""#, r#"""#);
    hostile(&mut lines, r#"      description=""#, r#""/>"#);
    lines.push(
        r#"     <counter id="2" uri="Names.Two" symbol="TWO" field="Two" name="Second counter" description="plain" type="perf_counter_large_rawcount" detailLevel="standard"/>"#
            .to_owned(),
    );
    lines.push("    </counterSet>".to_owned());
    lines.push("   </provider>".to_owned());
    lines.push("  </counters>".to_owned());
    lines.push(" </instrumentation>".to_owned());
    lines.push("</instrumentationManifest>".to_owned());
    (lines.join("\n"), at)
}

/// The string value of `const NAME: &str = "…";` among `items`.
fn const_str(items: &[syn::Item], name: &str) -> String {
    for item in items {
        if let syn::Item::Const(c) = item
            && c.ident == name
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &*c.expr
        {
            return s.value();
        }
    }
    panic!("no `const {name}: &str`");
}

/// The items of `mod name` among `items`.
fn module<'a>(items: &'a [syn::Item], name: &str) -> &'a [syn::Item] {
    for item in items {
        if let syn::Item::Mod(m) = item
            && m.ident == name
        {
            return &m.content.as_ref().expect("an inline module").1;
        }
    }
    panic!("no `mod {name}`");
}

/// `static NAME_UTF16: [u16; N] = [...]` decoded.
fn name_utf16(items: &[syn::Item]) -> String {
    for item in items {
        if let syn::Item::Static(s) = item
            && s.ident == "NAME_UTF16"
            && let syn::Expr::Array(array) = &*s.expr
        {
            let units: Vec<u16> = array
                .elems
                .iter()
                .map(|e| match e {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i.base10_parse().unwrap(),
                    other => panic!("not a u16 literal: {}", quote::quote!(#other)),
                })
                .collect();
            return String::from_utf16(&units).unwrap();
        }
    }
    panic!("no `NAME_UTF16`");
}

/// Every string literal of a Rust file, read back by `syn`.
fn string_literals(code: &str) -> Vec<String> {
    fn walk(tokens: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for t in tokens {
            match t {
                proc_macro2::TokenTree::Group(g) => walk(g.stream(), out),
                proc_macro2::TokenTree::Literal(l) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                        out.push(s.value());
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(code.parse().expect("tokens"), &mut out);
    out
}

/// What rustc refuses or lints in source text outside escapes: a bare CR, bidi controls.
fn assert_rustc_clean(code: &str) {
    for (i, c) in code.char_indices() {
        assert!(
            c != '\r' && !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
            "U+{:04X} at byte {i} of the generated code",
            u32::from(c)
        );
    }
    assert!(!code.contains("compile_error!"), "{code}");
}

/// The text survives every output of an accepted manifest.
fn check_outputs(user_mode: bool, name: &str, generated: &Generated, v1: &str) {
    // Rust.
    assert_rustc_clean(&generated.rust);
    let file = syn::parse_file(&generated.rust).expect("the generated code parses");
    let top = module(&file.items, "names");
    assert_eq!(const_str(top, "PROVIDER_NAME"), name);
    let set = module(top, "names_set");
    assert_eq!(const_str(set, "NAME"), name);
    assert_eq!(const_str(set, "URI"), name);
    if !user_mode {
        assert_eq!(name_utf16(set), name);
    }
    assert_rustc_clean(v1);
    syn::parse_file(v1).expect("the v1 tables parse");
    assert!(string_literals(v1).iter().any(|s| s == name), "{v1}");

    // The string table, as a script and compiled.
    let inspect = &generated.inspect;
    let set_doc = &inspect.countersets[0];
    let counter = set_doc.counters.iter().find(|c| c.id == 1).unwrap();
    let rc = rc_strings(&generated.rc);
    assert!(
        generated.rc.contains("#pragma code_page(65001)"),
        "{}",
        generated.rc
    );
    assert_eq!(res_strings(&generated.res), rc);
    for id in [
        set_doc.name_id,
        set_doc.description_id,
        counter.name_id.unwrap(),
        counter.description_id.unwrap(),
    ] {
        let text = rc.iter().find(|(i, _)| *i == id).map(|(_, t)| t.as_str());
        assert_eq!(text, Some(name), "string {id} of\n{}", generated.rc);
    }

    // lodctr's pair.
    let symbols = h_symbols(&generated.symbols_h);
    let ini = ini_profile(&utf16le(&generated.ini));
    let symbol_at = |offset: u32| {
        symbols
            .iter()
            .find(|(_, o)| **o == offset)
            .map(|(s, _)| s.clone())
            .unwrap()
    };
    let set_symbol = symbol_at(set_doc.v1_offset);
    let counter_symbol = symbol_at(counter.v1_offset.unwrap());
    for (section, key) in [
        ("objects", format!("{set_symbol}_009_NAME")),
        ("text", format!("{set_symbol}_009_NAME")),
        ("text", format!("{set_symbol}_009_HELP")),
        ("text", format!("{counter_symbol}_009_NAME")),
        ("text", format!("{counter_symbol}_009_HELP")),
    ] {
        assert_eq!(
            ini[section].get(&key).map(String::as_str),
            Some(name),
            "[{section}] {key}"
        );
    }

    // The inspect document.
    let json: Value = serde_json::from_str(&inspect.to_json()).unwrap();
    let set = &json["countersets"][0];
    let counter = &set["counters"][0];
    for value in [
        &json["provider"]["name"],
        &set["name"],
        &set["description"],
        &set["uri"],
        &counter["name"],
        &counter["description"],
    ] {
        assert_eq!(value.as_str(), Some(name));
    }
}

fn errors_at(diagnostics: &[Diagnostic], pos: (u32, u32)) -> Vec<&Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.is_error() && (d.pos.line, d.pos.column) == pos)
        .collect()
}

/// The verdict for one text in both kinds of provider.
fn check(pieces: &[Piece]) {
    let name: String = pieces.iter().map(|p| p.text.as_str()).collect();
    let xml: String = pieces.iter().map(|p| p.xml.as_str()).collect();
    let refused = name.chars().find(|c| refused_by_policy(*c));
    for user_mode in [false, true] {
        let (text, places) = manifest(user_mode, &xml);
        let path = Path::new("names.man");
        let analysis = pcw_gen::analyze(&Input::new(path, text.as_bytes()));
        let generated = Config::new().generate(&Input::new(path, text.as_bytes()));
        // Whatever the manifest holds, a diagnostic is one line and its hint another.
        for d in &analysis.diagnostics {
            let rendered = d.render();
            let lines: Vec<&str> = rendered.split('\n').collect();
            assert!(
                lines.len() == 1 + usize::from(d.hint.is_some())
                    && !lines.iter().any(|l| l.chars().any(refused_by_policy)),
                "{rendered:?}"
            );
        }
        if let Some(c) = refused {
            let code = format!("U+{:04X}", u32::from(c));
            for place in &places {
                let here = errors_at(&analysis.diagnostics, *place);
                assert!(
                    here.iter().any(|d| d.message.contains(&code)),
                    "no error naming {code} at {place:?} for {name:?}:\n{}",
                    Diagnostic::render_all(&analysis.diagnostics)
                );
            }
            let Err(pcw_gen::Error::Manifest { diagnostics }) = generated else {
                panic!("{name:?} was generated");
            };
            assert_eq!(diagnostics, analysis.diagnostics);
            continue;
        }
        // A whole value `$(string.x)` refers to the string table, which has no `x`.
        if name.starts_with("$(string.") && name.ends_with(')') {
            assert!(analysis.has_errors());
            continue;
        }
        // The second counter's name, compared case-insensitively.
        if name.to_lowercase() == "second counter" {
            continue;
        }
        assert!(
            !analysis.has_errors(),
            "{name:?} refused:\n{}",
            Diagnostic::render_all(&analysis.diagnostics)
        );
        let generated = generated.unwrap_or_else(|e| panic!("{e}"));
        let v1 = Config::new()
            .v1_tables(&Input::new(path, text.as_bytes()))
            .unwrap_or_else(|e| panic!("{e}"));
        check_outputs(user_mode, &name, &generated, &v1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn names_survive_every_output_or_are_refused_where_they_are(
        pieces in prop::collection::vec(piece(), 1..8),
    ) {
        check(&pieces);
    }
}

/// The cases of the issue and one of each class, whatever the random cases draw.
#[test]
fn known_hostile_names() {
    let p = |xml: &str, text: &str| Piece {
        xml: xml.to_owned(),
        text: text.to_owned(),
    };
    let cases = [
        vec![p("Water&#13;evil: 1&#10;Level", "Water\revil: 1\nLevel")],
        vec![p("tab&#9;here", "tab\there")],
        vec![p("lost &#xD800; half", "lost \u{fffd} half")],
        vec![reference('\u{85}')],
        vec![reference('\u{2028}')],
        vec![reference('\u{fdd0}')],
        vec![reference('\u{1fffe}')],
        vec![literal(" padded ")],
        vec![literal("\"quoted\"")],
        vec![literal("'single'")],
        vec![literal("- item: #1 & *alias !tag | > ${x} {{y}} % \\ \\n")],
        vec![reference('\u{202e}'), literal("evil")],
        vec![reference('\u{feff}'), literal("bom")],
        vec![literal("日本語 😀 \u{1d11e} e\u{301}")],
        // A reference to a string the table lacks, its id holding the refused character.
        vec![literal("$(string.x)"), reference('\t'), literal(")")],
        vec![literal("$(string.x)"), reference('\u{2029}'), literal(")")],
    ];
    for pieces in &cases {
        check(pieces);
    }
}

/// Lodctr symbols that clash are numbered: `k` unnamed counters sharing a field all derive
/// `NAMESSET_SHARED`, and get `_2`, `_3`, … after the first (skipping a number a `symbol`
/// holds), so the `.h` and `.ini` grow in proportion to `k`, every symbol is unique, and the
/// `.ini` keys are the `.h` symbols.
#[test]
fn clashing_lodctr_symbols_are_numbered() {
    let k = 300;
    let mut counters = String::from(
        r#"<counter id="0" uri="S.Taken" symbol="NamesSet_Shared_2" field="Own" type="perf_counter_rawcount" detailLevel="standard" name="Taken" description="Holds the second."/>"#,
    );
    for id in 1..=k {
        let _ = write!(
            counters,
            r#"<counter id="{id}" uri="S.C{id}" field="Shared" type="perf_counter_rawcount" detailLevel="standard"><counterAttributes><counterAttribute name="noDisplay"/></counterAttributes></counter>"#
        );
    }
    let manifest = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
 <instrumentation>
  <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="1.1">
   <provider providerType="kernelMode" applicationIdentity="names.sys" providerName="Names" providerGuid="{{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d4c}}">
    <counterSet guid="{{6b1e0c2d-3b4f-4a6e-8d7c-9b0a1f2e3d01}}" symbol="NamesSet" uri="Names.Set" name="Names" description="Clashing symbols." instances="multiple">
     {counters}
    </counterSet>
   </provider>
  </counters>
 </instrumentation>
</instrumentationManifest>
"#
    );
    let generated = Config::new()
        .generate(&Input::new("clash.man", &manifest))
        .unwrap_or_else(|e| panic!("{e}"));
    let symbols = h_symbols(&generated.symbols_h);
    let mut expected = vec![
        ("NAMESSET".to_owned(), 0),
        ("NAMESSET_SHARED_2".to_owned(), 2),
        ("NAMESSET_SHARED".to_owned(), 4),
    ];
    expected.extend((2..=k).map(|n| (format!("NAMESSET_SHARED_{}", n + 1), 2 * n + 2)));
    assert_eq!(
        symbols,
        expected.into_iter().collect(),
        "{}",
        generated.symbols_h
    );
    // Each `#define` line is at most `#define NAMESSET_SHARED_301 602` long.
    assert!(
        generated.symbols_h.len() < 400 + 40 * (k as usize + 2),
        "{} bytes",
        generated.symbols_h.len()
    );
    let ini = ini_profile(&utf16le(&generated.ini));
    for symbol in symbols.keys() {
        for key in [format!("{symbol}_009_NAME"), format!("{symbol}_009_HELP")] {
            assert!(ini["text"].contains_key(&key), "{key}");
        }
    }
    assert_eq!(ini["text"].len(), 2 * symbols.len());
}
