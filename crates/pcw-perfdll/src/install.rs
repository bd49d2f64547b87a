// SPDX-License-Identifier: MIT OR Apache-2.0
//! Install assets: the registry fragment that makes Perflib load the DLL
//! (`docs/v1-format.md`, "Installation": `Services\<svc>\Performance\{Library, Open, Collect,
//! Close}` and `Linkage\Export`), as a `.reg` file for `reg import` / regedit.
//!
//! This file depends on nothing but `std`: `build.rs` includes it with `#[path]` to write
//! `OUT_DIR/pcw_perfdll.reg` at build time, and the crate exports the same functions so that
//! installers and tests can write the fragment for other services or library paths.
//!
//! Format: `Windows Registry Editor Version 5.00` text, CRLF line ends, to be encoded
//! UTF-16LE with a BOM ([`utf16le_with_bom`]) as regedit writes such files. `Library` is a
//! `REG_EXPAND_SZ` (`hex(2):`) so it may name `%SystemRoot%`; `Export` is a `REG_MULTI_SZ`
//! (`hex(7):`), both as UTF-16LE bytes with their NUL terminators.

use std::fmt::Write as _;

/// The exported entry points, as the `Open`, `Collect` and `Close` values name them.
pub const EXPORTS: [(&str, &str); 3] = [
    ("Open", "OpenPerformanceData"),
    ("Collect", "CollectPerformanceData"),
    ("Close", "ClosePerformanceData"),
];

/// Where the DLL is installed by default (`REG_EXPAND_SZ`).
pub const DEFAULT_LIBRARY: &str = r"%SystemRoot%\System32\pcw_perfdll.dll";

/// The default `Linkage\Export`: serve the driver's snapshot device.
pub const DEFAULT_EXPORT: [&str; 1] = ["source=device"];

/// What the fragment registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegFragment<'a> {
    /// The service key name (lodctr's `drivername=`).
    pub service: &'a str,
    /// `Performance\Library`: the DLL's path (environment variables allowed).
    pub library: &'a str,
    /// `Linkage\Export` strings (`key=value`, passed to `OpenPerformanceData`).
    pub export: &'a [&'a str],
    /// Whether to set `Collect Supports Metadata` = 1 (pcw-core answers `MetadataGlobal`).
    pub supports_metadata: bool,
}

/// `"hex(N):aa,bb,…"` of UTF-16LE `units`, wrapped with `\` continuations as regedit does.
fn hex_value(kind: u8, units: &[u16]) -> String {
    let mut out = format!("hex({kind:x}):");
    let mut line_len = out.len();
    let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
    for (i, b) in bytes.iter().enumerate() {
        let last = i + 1 == bytes.len();
        let item = if last {
            format!("{b:02x}")
        } else {
            format!("{b:02x},")
        };
        if line_len + item.len() > 78 && !last {
            out.push_str("\\\r\n  ");
            line_len = 2;
        }
        out.push_str(&item);
        line_len += item.len();
    }
    out
}

/// Quotes a `REG_SZ` string for a `.reg` file (`\` and `"` escaped).
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '\\' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl RegFragment<'_> {
    /// The `.reg` text (CRLF line ends).
    pub fn text(&self) -> String {
        let key = format!(
            r"HKEY_LOCAL_MACHINE\SYSTEM\CurrentControlSet\Services\{}",
            self.service
        );
        let mut out = String::from("Windows Registry Editor Version 5.00\r\n\r\n");
        let _ = write!(out, "[{key}\\Performance]\r\n");
        let library: Vec<u16> = self.library.encode_utf16().chain([0]).collect();
        let _ = write!(out, "\"Library\"={}\r\n", hex_value(2, &library));
        for (value, export) in EXPORTS {
            let _ = write!(out, "{}={}\r\n", quote(value), quote(export));
        }
        if self.supports_metadata {
            out.push_str("\"Collect Supports Metadata\"=dword:00000001\r\n");
        }
        let _ = write!(out, "\r\n[{key}\\Linkage]\r\n");
        let mut export: Vec<u16> = Vec::new();
        for s in self.export {
            export.extend(s.encode_utf16());
            export.push(0);
        }
        export.push(0);
        let _ = write!(out, "\"Export\"={}\r\n", hex_value(7, &export));
        out
    }

    /// The fragment as written to disk: [`RegFragment::text`] in UTF-16LE with a BOM.
    pub fn bytes(&self) -> Vec<u8> {
        utf16le_with_bom(&self.text())
    }

    /// Writes the fragment to `path`.
    ///
    /// # Errors
    /// The file system's.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(path, self.bytes())
    }
}

/// UTF-16LE with a byte order mark.
pub fn utf16le_with_bom(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    out
}
