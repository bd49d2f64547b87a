// SPDX-License-Identifier: MIT OR Apache-2.0
//! A small reader of INF files (the `.inx` templates stampinf takes), enough to check a driver
//! package: `[Section]` headers, `key = value[, value…]` entries and bare lines (file lists),
//! `;` comments outside quotes, `"…"` quoting with `""` for a quote, `\` line continuation.
//! Section and key names compare case-insensitively, as Windows setup compares them.

use std::fmt;

/// One entry of a section: `key = values` or a bare line (`key` is `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line of the entry's first line.
    pub line: usize,
    /// The key, as written, or `None` for a bare line.
    pub key: Option<String>,
    /// The comma-separated fields (of the value, or of the whole bare line), trimmed and
    /// unquoted; `[""]` for `key =` with nothing after it.
    pub values: Vec<String>,
}

impl Entry {
    /// The first field, or `""`.
    pub fn first(&self) -> &str {
        self.values.first().map_or("", String::as_str)
    }
}

/// A `[Section]` and its entries, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets, as written.
    pub name: String,
    /// 1-based line of the header.
    pub line: usize,
    /// The entries.
    pub entries: Vec<Entry>,
}

impl Section {
    /// Every entry with this key (case-insensitive).
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| {
            e.key
                .as_deref()
                .is_some_and(|k| k.eq_ignore_ascii_case(key))
        })
    }

    /// The first entry with this key.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| {
            e.key
                .as_deref()
                .is_some_and(|k| k.eq_ignore_ascii_case(key))
        })
    }

    /// The bare lines' first fields (file lists such as a `CopyFiles` section).
    pub fn bare(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| e.key.is_none())
            .map(Entry::first)
    }
}

/// A parsed INF file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inf {
    /// The sections, in file order.
    pub sections: Vec<Section>,
    /// The text of every comment (after the `;`), in file order.
    pub comments: Vec<String>,
}

/// Why a file is not a well-formed INF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Splits a logical line into its text and its comment, honouring quotes.
fn split_comment(line: &str, number: usize) -> Result<(&str, Option<&str>), ParseError> {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => return Ok((&line[..i], Some(&line[i + 1..]))),
            _ => {}
        }
    }
    if quoted {
        return Err(ParseError {
            line: number,
            message: "unterminated quoted string".to_owned(),
        });
    }
    Ok((line, None))
}

/// Splits `text` at commas outside quotes; each field trimmed, quotes removed, `""` → `"`.
fn fields(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut field).trim().to_owned()),
            c => field.push(c),
        }
    }
    out.push(field.trim().to_owned());
    out
}

/// Index of the first `=` outside quotes.
fn equals(text: &str) -> Option<usize> {
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '=' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

impl Inf {
    /// Parses INF text (a UTF-8 string; a leading BOM is ignored).
    ///
    /// # Errors
    /// An entry before the first section, a malformed or repeated section header, or an
    /// unterminated quote.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut inf = Inf::default();
        let mut pending = String::new();
        let mut pending_line = 0;
        for (index, raw) in text.lines().enumerate() {
            let number = index + 1;
            let (body, comment) = split_comment(raw, number)?;
            if let Some(comment) = comment {
                inf.comments.push(comment.trim().to_owned());
            }
            if pending.is_empty() {
                pending_line = number;
            }
            let body = body.trim_end();
            if let Some(continued) = body.strip_suffix('\\') {
                pending.push_str(continued);
                continue;
            }
            pending.push_str(body);
            let logical = std::mem::take(&mut pending);
            inf.line(logical.trim(), pending_line)?;
        }
        if !pending.is_empty() {
            inf.line(pending.trim(), pending_line)?;
        }
        Ok(inf)
    }

    fn line(&mut self, text: &str, number: usize) -> Result<(), ParseError> {
        if text.is_empty() {
            return Ok(());
        }
        let error = |message: String| ParseError {
            line: number,
            message,
        };
        if let Some(header) = text.strip_prefix('[') {
            let name = header
                .strip_suffix(']')
                .ok_or_else(|| error(format!("section header `{text}` lacks its `]`")))?
                .trim();
            if name.is_empty() {
                return Err(error("empty section name".to_owned()));
            }
            if let Some(previous) = self.section(name) {
                return Err(error(format!(
                    "section `[{name}]` repeats the one of line {}",
                    previous.line
                )));
            }
            self.sections.push(Section {
                name: name.to_owned(),
                line: number,
                entries: Vec::new(),
            });
            return Ok(());
        }
        let section = self
            .sections
            .last_mut()
            .ok_or_else(|| error(format!("`{text}` comes before any section")))?;
        let entry = match equals(text) {
            Some(at) => Entry {
                line: number,
                key: Some(text[..at].trim().to_owned()),
                values: fields(&text[at + 1..]),
            },
            None => Entry {
                line: number,
                key: None,
                values: fields(text),
            },
        };
        section.entries.push(entry);
        Ok(())
    }

    /// The section with this name (case-insensitive).
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The first field of `key` in `section`.
    pub fn value(&self, section: &str, key: &str) -> Option<&str> {
        self.section(section)?.get(key).map(Entry::first)
    }

    /// `%token%` expanded from `[Strings]` (numeric DIRIDs such as `%13%` stay as written).
    pub fn expand(&self, value: &str) -> Option<String> {
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find('%') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            let end = after.find('%')?;
            let token = &after[..end];
            if token.chars().all(|c| c.is_ascii_digit()) {
                out.push('%');
                out.push_str(token);
                out.push('%');
            } else {
                out.push_str(self.value("Strings", token)?);
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\u{feff}; header comment\r\n\
        [Version]\r\n\
        Signature = \"$WINDOWS NT$\" ; trailing\r\n\
        DriverVer =\r\n\
        \r\n\
        [Files]\r\n\
        a.sys\r\n\
        b.sys ; second\r\n\
        [Svc]\r\n\
        AddService = svc, 0x2, \\\r\n    Svc.Install\r\n\
        Text = \"a;b, \"\"c\"\"\", %13%\\x\r\n\
        [Strings]\r\n\
        Name = \"N\"\r\n";

    #[test]
    fn parses_sections_entries_and_comments() {
        let inf = Inf::parse(SAMPLE).unwrap();
        let names: Vec<_> = inf.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Version", "Files", "Svc", "Strings"]);
        assert_eq!(inf.value("version", "SIGNATURE"), Some("$WINDOWS NT$"));
        assert_eq!(inf.value("Version", "DriverVer"), Some(""));
        assert_eq!(
            inf.section("Files").unwrap().bare().collect::<Vec<_>>(),
            ["a.sys", "b.sys"]
        );
        let add = inf.section("Svc").unwrap().get("AddService").unwrap();
        assert_eq!(add.values, ["svc", "0x2", "Svc.Install"]);
        assert_eq!(add.line, 10);
        let text = inf.section("Svc").unwrap().get("text").unwrap();
        assert_eq!(text.values, ["a;b, \"c\"", "%13%\\x"]);
        assert_eq!(inf.comments, ["header comment", "trailing", "second"]);
    }

    #[test]
    fn expands_strings_but_not_dirids() {
        let inf = Inf::parse(SAMPLE).unwrap();
        assert_eq!(inf.expand("%Name%-%13%").as_deref(), Some("N-%13%"));
        assert_eq!(inf.expand("%Missing%"), None);
        assert_eq!(inf.expand("%unterminated"), None);
    }

    #[test]
    fn rejects_malformed_files() {
        for (text, line) in [
            ("key = 1\n", 1),
            ("[A]\n[a]\n", 2),
            ("[A\n", 1),
            ("[]\n", 1),
            ("[A]\nk = \"open\n", 2),
        ] {
            let e = Inf::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }
}
