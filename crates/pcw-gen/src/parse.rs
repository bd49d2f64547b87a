// SPDX-License-Identifier: MIT OR Apache-2.0
//! XML to the manifest's raw syntax tree: finds `<counters>` in an `<instrumentationManifest>`
//! (beside `<events>` and whatever else is there), keeps every attribute with its position, and
//! collects the `<localization>` string tables. Semantic rules live in `validate`.

use std::collections::BTreeMap;

use roxmltree::{Document, Node, ParsingOptions};

use crate::diag::Sink;
use crate::model::Pos;

/// The counters schema namespace.
pub(crate) const COUNTERS_NS: &str = "http://schemas.microsoft.com/win/2005/12/counters";

/// An attribute with the position of its value.
#[derive(Clone, Debug)]
pub(crate) struct Attr {
    pub(crate) value: String,
    /// Position of the first character of the value (inside the quotes).
    pub(crate) pos: Pos,
}

/// An element's attributes, in document order, plus the element's own position.
#[derive(Clone, Debug, Default)]
pub(crate) struct Attrs {
    pub(crate) pos: Pos,
    list: Vec<(String, Attr)>,
}

impl Attrs {
    pub(crate) fn get(&self, name: &str) -> Option<&Attr> {
        self.list.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RawManifest {
    pub(crate) counters: Option<RawCounters>,
    /// `$(string.id)` table: id → value and position, from the preferred culture.
    pub(crate) strings: BTreeMap<String, Attr>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RawCounters {
    pub(crate) attrs: Attrs,
    pub(crate) providers: Vec<RawProvider>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RawProvider {
    pub(crate) attrs: Attrs,
    pub(crate) sets: Vec<RawSet>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RawSet {
    pub(crate) attrs: Attrs,
    pub(crate) structs: Vec<Attrs>,
    /// Position of each `<structs>` element (more than one is an error).
    pub(crate) structs_elements: Vec<Pos>,
    pub(crate) counters: Vec<RawCounter>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RawCounter {
    pub(crate) attrs: Attrs,
    /// `<counterAttribute name=…>` values.
    pub(crate) attributes: Vec<Attr>,
}

const PROVIDER_ATTRS: &[&str] = &[
    "providerType",
    "providerGuid",
    "providerName",
    "applicationIdentity",
    "callback",
    "symbol",
    "resourceBase",
];
const SET_ATTRS: &[&str] = &[
    "guid",
    "uri",
    "name",
    "nameID",
    "description",
    "descriptionID",
    "symbol",
    "instances",
];
const COUNTER_ATTRS: &[&str] = &[
    "id",
    "uri",
    "name",
    "nameID",
    "description",
    "descriptionID",
    "symbol",
    "type",
    "detailLevel",
    "defaultScale",
    "aggregate",
    "baseID",
    "perfTimeID",
    "perfFreqID",
    "multiCounterID",
    "struct",
    "field",
];
const STRUCT_ATTRS: &[&str] = &["name", "type"];

/// Byte offset → 1-based line and character column, in O(log lines) per lookup whatever the
/// length of the lines (roxmltree's `text_pos_at` rescans the text from its start on every
/// call, and counting a column's characters from the start of its line is as slow on a
/// manifest written on one line). Same positions as roxmltree's.
struct LineIndex<'d> {
    text: &'d str,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    /// Characters before each multiple of [`Self::BLOCK`] bytes.
    block_chars: Vec<usize>,
}

impl<'d> LineIndex<'d> {
    const BLOCK: usize = 64;

    fn new(text: &'d str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut block_chars = Vec::with_capacity(text.len() / Self::BLOCK + 1);
        let mut chars = 0;
        block_chars.push(0);
        for block in text.as_bytes().chunks(Self::BLOCK) {
            chars += char_starts(block);
            block_chars.push(chars);
        }
        Self {
            text,
            line_starts,
            block_chars,
        }
    }

    /// Characters before byte offset `byte` (a char boundary within the text).
    fn chars_before(&self, byte: usize) -> usize {
        let block = byte / Self::BLOCK;
        let from = block * Self::BLOCK;
        let partial = self.text.as_bytes().get(from..byte).map_or(0, char_starts);
        self.block_chars.get(block).copied().unwrap_or(0) + partial
    }

    fn pos(&self, byte: usize) -> Pos {
        let byte = byte.min(self.text.len());
        let line = self
            .line_starts
            .partition_point(|&start| start <= byte)
            .max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let column = if self.text.is_char_boundary(byte) {
            self.chars_before(byte) - self.chars_before(start)
        } else {
            0
        } + 1;
        Pos::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }
}

/// The characters that start in `bytes` (UTF-8: every byte that is not a continuation byte).
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

struct Cx<'d> {
    lines: LineIndex<'d>,
    sink: &'d mut Sink,
}

impl Cx<'_> {
    fn pos(&self, byte: usize) -> Pos {
        self.lines.pos(byte)
    }

    fn node_pos(&self, node: Node<'_, '_>) -> Pos {
        self.pos(node.range().start)
    }

    /// Attributes of `node`, warning about ones not in `known` (namespaced attributes such as
    /// `xmlns:*` or `xml:lang` are skipped: they belong to other schemas).
    fn attrs(&mut self, node: Node<'_, '_>, known: &[&str]) -> Attrs {
        let mut out = Attrs {
            pos: self.node_pos(node),
            list: Vec::new(),
        };
        for a in node.attributes() {
            if a.namespace().is_some() {
                continue;
            }
            let pos = self.pos(a.range_value().start);
            if !known.contains(&a.name()) {
                let name_pos = self.pos(a.range().start);
                let close = known
                    .iter()
                    .find(|k| k.eq_ignore_ascii_case(a.name()))
                    .map(|k| format!("did you mean `{k}`? attribute names are case-sensitive"));
                let message = format!(
                    "unknown attribute `{}` on `<{}>`",
                    a.name(),
                    node.tag_name().name()
                );
                match close {
                    Some(h) => self.sink.warning_hint(name_pos, message, h),
                    None => self.sink.warning_hint(
                        name_pos,
                        message,
                        format!("known attributes: {}", backticked(known)),
                    ),
                }
                continue;
            }
            out.list.push((
                a.name().to_owned(),
                Attr {
                    value: a.value().to_owned(),
                    pos,
                },
            ));
        }
        out
    }

    fn unknown_element(&mut self, node: Node<'_, '_>, parent: &str, known: &[&str]) {
        let pos = self.node_pos(node);
        self.sink.warning_hint(
            pos,
            format!(
                "unexpected element `<{}>` in `<{parent}>`; it is ignored",
                node.tag_name().name()
            ),
            format!("`<{parent}>` may contain {}", backticked(known)),
        );
    }
}

pub(crate) fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Element children of `node` (comments, text and processing instructions skipped).
fn elements<'a, 'input>(node: Node<'a, 'input>) -> impl Iterator<Item = Node<'a, 'input>> {
    node.children().filter(Node::is_element)
}

/// The most attributes one element may have. roxmltree compares each attribute with every
/// earlier one of its element (duplicates are an error), so an element of 80 000 attributes
/// (1 MB) took it a minute; a counter has about fifteen.
const MAX_ATTRIBUTES: usize = 64;

/// The byte offset of the first start tag with more than [`MAX_ATTRIBUTES`] attributes, found
/// in one pass before roxmltree reads the text: a tag's attributes are its `=` signs outside
/// quoted values; comments, CDATA sections, processing instructions and declarations are
/// skipped. (Text that is not well-formed is left to roxmltree to report.)
fn attribute_flood(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let skip_to = |from: usize, end: &str| {
        text.get(from..)
            .and_then(|rest| rest.find(end))
            .map_or(bytes.len(), |i| from + i + end.len())
    };
    let mut at = 0;
    while let Some(open) = text
        .get(at..)
        .and_then(|rest| rest.find('<'))
        .map(|i| at + i)
    {
        let rest = text.get(open..).unwrap_or_default();
        at = if rest.starts_with("<!--") {
            skip_to(open, "-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_to(open, "]]>")
        } else if rest.starts_with("<?") {
            skip_to(open, "?>")
        } else if rest.starts_with("<!") || rest.starts_with("</") {
            skip_to(open, ">")
        } else {
            let (mut quote, mut attributes) = (None, 0usize);
            let mut end = bytes.len();
            for (i, b) in rest.bytes().enumerate().skip(1) {
                match (quote, b) {
                    (None, b'"' | b'\'') => quote = Some(b),
                    (Some(q), _) if q == b => quote = None,
                    (None, b'=') => attributes += 1,
                    (None, b'>' | b'<') => {
                        end = open + i;
                        break;
                    }
                    _ => {}
                }
            }
            if attributes > MAX_ATTRIBUTES {
                return Some(open);
            }
            end
        };
    }
    None
}

/// Parses manifest text into the raw tree. XML syntax errors are reported with the position
/// roxmltree gives; `None` means the text is not well-formed XML.
pub(crate) fn parse(text: &str, sink: &mut Sink) -> Option<RawManifest> {
    let options = ParsingOptions {
        // Manifests do not use DTDs; refusing them also bounds entity expansion.
        allow_dtd: false,
        nodes_limit: 1_000_000,
        ..ParsingOptions::default()
    };
    if let Some(at) = attribute_flood(text) {
        let (line, column) = pcw_io::text::end_of(text.get(..at).unwrap_or_default());
        sink.error(
            Pos::new(line, column),
            format!(
                "an element with more than {MAX_ATTRIBUTES} attributes: a manifest's elements \
                 have a few dozen at most"
            ),
        );
        return None;
    }
    let doc = match Document::parse_with_options(text, options) {
        Ok(doc) => doc,
        Err(e) => {
            sink.error(xml_error_pos(&e, text), xml_error_message(&e));
            return None;
        }
    };
    let mut cx = Cx {
        lines: LineIndex::new(text),
        sink,
    };
    let root = doc.root_element();
    let mut out = RawManifest::default();
    if root.tag_name().name() != "instrumentationManifest" {
        let pos = cx.node_pos(root);
        cx.sink.warning(
            pos,
            format!(
                "the root element is `<{}>`, not `<instrumentationManifest>`",
                root.tag_name().name()
            ),
        );
    }

    // `<counters>` is normally `instrumentationManifest/instrumentation/counters`; accept it
    // anywhere outside `<events>` and `<localization>` so that hand-trimmed files load.
    let mut counters_nodes = Vec::new();
    find_counters(root, &mut counters_nodes);
    let mut counters_iter = counters_nodes.into_iter();
    if let Some(node) = counters_iter.next() {
        out.counters = Some(parse_counters(&mut cx, node));
    } else {
        cx.sink.error_hint(
            Pos::new(1, 1),
            "the manifest has no `<counters>` section",
            "counters live in `<instrumentationManifest><instrumentation><counters schemaVersion=\"2.0\">`",
        );
    }
    for extra in counters_iter {
        let pos = cx.node_pos(extra);
        cx.sink
            .error(pos, "a manifest may contain only one `<counters>` section");
    }

    parse_strings(&mut cx, root, &mut out.strings);
    Some(out)
}

/// Every `<counters>` element below `root` in document order, not looking inside `<counters>`,
/// `<events>` or `<localization>`. A walk from node to node rather than a recursion: a recursion
/// per level overflowed the stack on a file of some 25 000 nested elements (175 KB).
fn find_counters<'a, 'input>(root: Node<'a, 'input>, out: &mut Vec<Node<'a, 'input>>) {
    let mut next = root.first_element_child();
    while let Some(node) = next {
        let descend = match node.tag_name().name() {
            "counters" => {
                out.push(node);
                false
            }
            "events" | "localization" => false,
            _ => true,
        };
        next = descend
            .then(|| node.first_element_child())
            .flatten()
            .or_else(|| {
                // The element after `node`: its next sibling, or that of the nearest ancestor
                // below `root` that has one.
                node.ancestors()
                    .take_while(|up| *up != root)
                    .find_map(|up| up.next_sibling_element())
            });
    }
}

fn parse_counters(cx: &mut Cx<'_>, node: Node<'_, '_>) -> RawCounters {
    let attrs = cx.attrs(node, &["schemaVersion"]);
    if let Some(ns) = node.tag_name().namespace()
        && ns != COUNTERS_NS
    {
        {
            let pos = cx.node_pos(node);
            cx.sink.warning_hint(
                pos,
                format!("`<counters>` is in namespace `{ns}`"),
                format!("the counters schema namespace is `{COUNTERS_NS}`"),
            );
        }
    }
    let mut providers = Vec::new();
    for child in elements(node) {
        if child.tag_name().name() == "provider" {
            providers.push(parse_provider(cx, child));
        } else {
            cx.unknown_element(child, "counters", &["provider"]);
        }
    }
    RawCounters { attrs, providers }
}

fn parse_provider(cx: &mut Cx<'_>, node: Node<'_, '_>) -> RawProvider {
    let attrs = cx.attrs(node, PROVIDER_ATTRS);
    let mut sets = Vec::new();
    for child in elements(node) {
        if child.tag_name().name() == "counterSet" {
            sets.push(parse_set(cx, child));
        } else {
            cx.unknown_element(child, "provider", &["counterSet"]);
        }
    }
    RawProvider { attrs, sets }
}

fn parse_set(cx: &mut Cx<'_>, node: Node<'_, '_>) -> RawSet {
    let attrs = cx.attrs(node, SET_ATTRS);
    let mut set = RawSet {
        attrs,
        ..RawSet::default()
    };
    for child in elements(node) {
        match child.tag_name().name() {
            "structs" => {
                set.structs_elements.push(cx.node_pos(child));
                for s in elements(child) {
                    if s.tag_name().name() == "struct" {
                        let a = cx.attrs(s, STRUCT_ATTRS);
                        set.structs.push(a);
                    } else {
                        cx.unknown_element(s, "structs", &["struct"]);
                    }
                }
            }
            "counter" => {
                let c = parse_counter(cx, child);
                set.counters.push(c);
            }
            _ => cx.unknown_element(child, "counterSet", &["structs", "counter"]),
        }
    }
    set
}

fn parse_counter(cx: &mut Cx<'_>, node: Node<'_, '_>) -> RawCounter {
    let attrs = cx.attrs(node, COUNTER_ATTRS);
    let mut attributes = Vec::new();
    for child in elements(node) {
        if child.tag_name().name() == "counterAttributes" {
            for a in elements(child) {
                if a.tag_name().name() == "counterAttribute" {
                    let at = cx.attrs(a, &["name"]);
                    if let Some(name) = at.get("name") {
                        attributes.push(name.clone());
                    } else {
                        cx.sink.error(at.pos, "`<counterAttribute>` has no `name`");
                    }
                } else {
                    cx.unknown_element(a, "counterAttributes", &["counterAttribute"]);
                }
            }
        } else {
            cx.unknown_element(child, "counter", &["counterAttributes"]);
        }
    }
    RawCounter { attrs, attributes }
}

/// Collects `<localization><resources culture=…><stringTable><string id value/>`; the `en-US`
/// table wins, otherwise the first one.
fn parse_strings(cx: &mut Cx<'_>, root: Node<'_, '_>, out: &mut BTreeMap<String, Attr>) {
    let Some(loc) = root
        .descendants()
        .find(|n| n.is_element() && n.tag_name().name() == "localization")
    else {
        return;
    };
    let resources: Vec<_> = elements(loc)
        .filter(|n| n.tag_name().name() == "resources")
        .collect();
    let chosen = resources
        .iter()
        .find(|r| {
            r.attribute("culture")
                .is_some_and(|c| c.eq_ignore_ascii_case("en-US"))
        })
        .or_else(|| resources.first());
    let Some(res) = chosen else { return };
    for table in elements(*res).filter(|n| n.tag_name().name() == "stringTable") {
        for s in elements(table).filter(|n| n.tag_name().name() == "string") {
            let (Some(id), Some(value)) = (s.attribute_node("id"), s.attribute_node("value"))
            else {
                let pos = cx.node_pos(s);
                cx.sink
                    .warning(pos, "`<string>` without `id` and `value` is ignored");
                continue;
            };
            let pos = cx.pos(value.range_value().start);
            if out.contains_key(id.value()) {
                let id_pos = cx.pos(id.range_value().start);
                cx.sink.warning(
                    id_pos,
                    format!(
                        "string `{}` is defined twice; the first definition is used",
                        id.value()
                    ),
                );
                continue;
            }
            out.insert(
                id.value().to_owned(),
                Attr {
                    value: value.value().to_owned(),
                    pos,
                },
            );
        }
    }
}

/// Where an XML error is. roxmltree gives no position for a few errors; for those the
/// position is where the problem shows: the end of the text for a file cut short (the root
/// element never closed, the text ending inside a tag or with no root at all), the
/// `<!DOCTYPE` for a document type declaration.
fn xml_error_pos(e: &roxmltree::Error, text: &str) -> Pos {
    use roxmltree::Error as E;
    match e {
        E::UnclosedRootNode | E::UnexpectedEndOfStream | E::NoRootNode => {
            let (line, column) = pcw_io::text::end_of(text);
            Pos::new(line, column)
        }
        E::DtdDetected => {
            let at = text.find("<!DOCTYPE").unwrap_or(0);
            let (line, column) = pcw_io::text::end_of(text.get(..at).unwrap_or_default());
            Pos::new(line, column)
        }
        _ => {
            let pos = e.pos();
            Pos::new(pos.row, pos.col)
        }
    }
}

/// roxmltree's message without its trailing position, lowercase, quotes turned to backticks.
fn xml_error_message(e: &roxmltree::Error) -> String {
    match e {
        roxmltree::Error::UnclosedRootNode => {
            return "invalid xml: the text ends before the root element is closed (is the file \
                    cut short?)"
                .to_owned();
        }
        roxmltree::Error::UnexpectedEndOfStream => {
            return "invalid xml: the text ends inside a tag (is the file cut short?)".to_owned();
        }
        roxmltree::Error::DtdDetected => {
            return "invalid xml: a document type declaration (`<!DOCTYPE`); counter manifests \
                    have none"
                .to_owned();
        }
        roxmltree::Error::NodesLimitReached => {
            return "invalid xml: more than 1000000 xml nodes, more than any counter manifest \
                    needs"
                .to_owned();
        }
        _ => {}
    }
    let pos = e.pos();
    let full = e.to_string();
    let suffix = format!(" at {}:{}", pos.row, pos.col);
    let mut msg = full.replace(&suffix, "");
    // Quote style: 'x' → `x`.
    let mut out = String::with_capacity(msg.len() + 16);
    let mut open = false;
    for c in msg.drain(..) {
        if c == '\'' {
            out.push('`');
            open = !open;
        } else {
            out.push(c);
        }
    }
    let mut out = out.replace("XML", "xml");
    if let Some(first) = out.get(..1) {
        let lower = first.to_lowercase();
        out.replace_range(..1, &lower);
    }
    format!("invalid xml: {out}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn xml_errors_have_positions_and_backticks() {
        let mut sink = Sink::new(Path::new("t.man"));
        assert!(parse("<a>\n <b></c></a>", &mut sink).is_none());
        let d = &sink.items[0];
        assert_eq!(d.message, "invalid xml: expected `b` tag, not `c`");
        assert_eq!(d.pos, Pos::new(2, 5));
    }

    #[test]
    fn a_file_cut_short_is_reported_where_it_ends() {
        for (text, pos, says) in [
            (
                "<a>\n  <b>\n  ",
                Pos::new(3, 3),
                "before the root element is closed",
            ),
            ("<a>\n<b x=\"1", Pos::new(2, 8), "ends inside a tag"),
            ("\n\n", Pos::new(3, 1), "does not have a root"),
            (
                "<?xml version=\"1.0\"?>\n<!DOCTYPE a []>\n<a/>",
                Pos::new(2, 1),
                "`<!DOCTYPE`",
            ),
        ] {
            let mut sink = Sink::new(Path::new("t.man"));
            assert!(parse(text, &mut sink).is_none());
            let d = &sink.items[0];
            assert_eq!(d.pos, pos, "{text:?}: {}", d.message);
            assert!(d.message.contains(says), "{text:?}: {}", d.message);
            assert!(!d.message.contains("xML"), "{}", d.message);
        }
    }

    #[test]
    fn positions_agree_with_roxmltree() {
        // Short lines, then one long line with characters of every UTF-8 length across many
        // index blocks.
        let long: String = (0..200).map(|i| ["a", "é", "€", "𝄞"][i % 4]).collect();
        let text = format!("<a>\r\n  <b x='é'/>\n\n\t<c  y=\"1\"/><d z='{long}' w='{long}'/></a>");
        let doc = Document::parse(&text).unwrap();
        let lines = LineIndex::new(&text);
        for byte in (0..=text.len()).filter(|b| text.is_char_boundary(*b)) {
            let r = doc.text_pos_at(byte);
            assert_eq!(lines.pos(byte), Pos::new(r.row, r.col), "byte {byte}");
        }
    }

    #[test]
    fn finds_counters_beside_events_and_strings() {
        let text = r#"<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events"
            xmlns:win="https://manifests.microsoft.com/win/2004/08/windows/events">
          <instrumentation>
            <events><provider name="etw"/></events>
            <counters xmlns="http://schemas.microsoft.com/win/2005/12/counters" schemaVersion="2.0">
              <provider providerGuid="{00000000-0000-0000-0000-000000000001}"/>
            </counters>
          </instrumentation>
          <localization><resources culture="en-US"><stringTable>
            <string id="a" value="A"/>
          </stringTable></resources></localization>
        </instrumentationManifest>"#;
        let mut sink = Sink::new(Path::new("t.man"));
        let m = parse(text, &mut sink).unwrap();
        assert!(sink.items.is_empty(), "{:?}", sink.items);
        assert_eq!(m.counters.unwrap().providers.len(), 1);
        assert_eq!(m.strings["a"].value, "A");
    }
}
