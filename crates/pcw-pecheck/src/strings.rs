// SPDX-License-Identifier: MIT OR Apache-2.0
//! The counter names in the driver's resources: `lodctr /m:` and every PCW consumer read the
//! counterset and counter names and descriptions from the string table of the binary the
//! manifest's `applicationIdentity` names, under the manifest's `nameID`/`descriptionID`. A
//! `.sys` without them registers counters that show no names.
//!
//! Both sides are read here without the generator that produced them: [`image_strings`] walks
//! the image's resource directory (`object`'s PE reader) to its `RT_STRING` blocks and decodes
//! them as the resource format lays them out (block `b` holds ids `16 (b - 1)` to `16 b - 1`,
//! each a 16-bit length in UTF-16 units and the units); [`manifest_strings`] reads the manifest's
//! XML (`roxmltree`) for its `name`/`nameID` and `description`/`descriptionID` attributes,
//! resolving `$(string.Id)` references through the manifest's string table. [`compare`] reports
//! every id whose string is missing or differs.

use std::collections::BTreeMap;

use object::LittleEndian as LE;
use object::read::pe::{PeFile64, ResourceDirectoryEntryData, ResourceNameOrId};

/// Resource type of a string table block (`RT_STRING`).
pub const RT_STRING: u16 = 6;

/// What is wrong with the image's strings, or why they could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StringsError {
    /// The image's resources cannot be read.
    #[error("not a readable PE32+ image with resources: {0}")]
    Malformed(String),
    /// The manifest cannot be read.
    #[error("manifest: {0}")]
    Manifest(String),
}

/// One difference between the manifest's strings and the image's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// The image has no string for the id.
    #[error("string {id}: missing from the image's resources (the manifest says {expected:?})")]
    Missing {
        /// The resource id.
        id: u32,
        /// The manifest's text.
        expected: String,
    },
    /// The image's string differs from the manifest's.
    #[error("string {id}: the image has {found:?}, the manifest says {expected:?}")]
    Differs {
        /// The resource id.
        id: u32,
        /// The manifest's text.
        expected: String,
        /// The image's text.
        found: String,
    },
}

fn malformed(what: &str, e: &impl std::fmt::Display) -> StringsError {
    StringsError::Malformed(format!("{what}: {e}"))
}

/// Every string of the image's `RT_STRING` resources by id, whatever the language (the first
/// language of each block wins, as the resource loader's fallback would find one). An image
/// without resources, or without string tables, has none.
///
/// # Errors
/// [`StringsError::Malformed`] when the headers, the resource directory or a block cannot be
/// read.
pub fn image_strings(data: &[u8]) -> Result<BTreeMap<u32, String>, StringsError> {
    let file = PeFile64::parse(data).map_err(|e| malformed("headers", &e))?;
    let sections = file.section_table();
    let Some(dir) = file
        .data_directories()
        .resource_directory(data, &sections)
        .map_err(|e| malformed("resource directory", &e))?
    else {
        return Ok(BTreeMap::new());
    };
    let root = dir.root().map_err(|e| malformed("resource root", &e))?;
    let mut out = BTreeMap::new();
    for ty in root.entries {
        if !matches!(ty.name_or_id(), ResourceNameOrId::Id(RT_STRING)) {
            continue;
        }
        let ResourceDirectoryEntryData::Table(blocks) =
            ty.data(dir).map_err(|e| malformed("RT_STRING table", &e))?
        else {
            return Err(StringsError::Malformed(
                "RT_STRING is data, not a table of blocks".into(),
            ));
        };
        for block in blocks.entries {
            let ResourceNameOrId::Id(block_id) = block.name_or_id() else {
                return Err(StringsError::Malformed(
                    "an RT_STRING block is named, not numbered".into(),
                ));
            };
            let ResourceDirectoryEntryData::Table(languages) = block
                .data(dir)
                .map_err(|e| malformed("string block languages", &e))?
            else {
                return Err(StringsError::Malformed(format!(
                    "string block {block_id} has no language table"
                )));
            };
            let Some(first) = languages.entries.first() else {
                continue;
            };
            let ResourceDirectoryEntryData::Data(entry) = first
                .data(dir)
                .map_err(|e| malformed("string block data entry", &e))?
            else {
                return Err(StringsError::Malformed(format!(
                    "string block {block_id}'s language entry is a table, not data"
                )));
            };
            let (rva, size) = (entry.offset_to_data.get(LE), entry.size.get(LE));
            let bytes = sections
                .pe_data_at(data, rva)
                .and_then(|d| d.get(..usize::try_from(size).ok()?))
                .ok_or_else(|| {
                    StringsError::Malformed(format!(
                        "string block {block_id}: {size} bytes at RVA {rva:#x} are not in the image"
                    ))
                })?;
            decode_block(block_id, bytes, &mut out)?;
        }
    }
    Ok(out)
}

/// The 16 strings of block `block_id` (each a `u16` length and that many UTF-16 units; a
/// length of zero is an absent id).
fn decode_block(
    block_id: u16,
    bytes: &[u8],
    out: &mut BTreeMap<u32, String>,
) -> Result<(), StringsError> {
    let short = || StringsError::Malformed(format!("string block {block_id} is cut short"));
    if block_id == 0 {
        return Err(StringsError::Malformed(
            "string block 0 does not exist".into(),
        ));
    }
    let mut units = bytes
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]));
    for index in 0..16u32 {
        let len = units.next().ok_or_else(short)?;
        let text: Vec<u16> = units.by_ref().take(usize::from(len)).collect();
        if text.len() != usize::from(len) {
            return Err(short());
        }
        if len > 0 {
            let id = (u32::from(block_id) - 1) * 16 + index;
            out.insert(id, String::from_utf16_lossy(&text));
        }
    }
    Ok(())
}

/// The manifest's strings by resource id: `name`/`nameID` and `description`/`descriptionID`
/// of every `counterSet` and `counter` (schema 2.0, where the ids are explicit), with
/// `$(string.Id)` resolved through the manifest's `<string id value>` entries.
///
/// # Errors
/// [`StringsError::Manifest`] when the XML cannot be parsed, an id is not a number, a string
/// reference is undefined, or the manifest has no explicit ids at all (schema 1.1 numbers its
/// strings implicitly; this check needs them spelt out).
pub fn manifest_strings(xml: &str) -> Result<BTreeMap<u32, String>, StringsError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| StringsError::Manifest(e.to_string()))?;
    let table: BTreeMap<&str, &str> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "string")
        .filter_map(|n| Some((n.attribute("id")?, n.attribute("value")?)))
        .collect();
    let resolve = |v: &str| -> Result<String, StringsError> {
        match v
            .strip_prefix("$(string.")
            .and_then(|r| r.strip_suffix(')'))
        {
            Some(id) => table.get(id).map(|s| (*s).to_owned()).ok_or_else(|| {
                StringsError::Manifest(format!("`$(string.{id})` is not in the string table"))
            }),
            None => Ok(v.to_owned()),
        }
    };
    let mut out = BTreeMap::new();
    for n in doc
        .descendants()
        .filter(|n| matches!(n.tag_name().name(), "counterSet" | "counter"))
    {
        for (text, id) in [("name", "nameID"), ("description", "descriptionID")] {
            let (Some(t), Some(i)) = (n.attribute(text), n.attribute(id)) else {
                continue;
            };
            let parsed = i
                .strip_prefix("0x")
                .map_or_else(|| i.parse(), |h| u32::from_str_radix(h, 16))
                .map_err(|_| {
                    StringsError::Manifest(format!(
                        "line {}: `{id}` `{i}` is not a number",
                        doc.text_pos_at(n.range().start).row
                    ))
                })?;
            out.insert(parsed, resolve(t)?);
        }
    }
    if out.is_empty() {
        return Err(StringsError::Manifest(
            "no `nameID`/`descriptionID` attributes: the check needs a schema 2.0 manifest".into(),
        ));
    }
    Ok(out)
}

/// Every id of `expected` whose string `found` lacks or holds differently, in id order.
pub fn compare(expected: &BTreeMap<u32, String>, found: &BTreeMap<u32, String>) -> Vec<Mismatch> {
    expected
        .iter()
        .filter_map(|(&id, text)| match found.get(&id) {
            None => Some(Mismatch::Missing {
                id,
                expected: text.clone(),
            }),
            Some(f) if f != text => Some(Mismatch::Differs {
                id,
                expected: text.clone(),
                found: f.clone(),
            }),
            Some(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(strings: &[(usize, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..16 {
            let s = strings.iter().find(|(j, _)| *j == i).map_or("", |(_, s)| s);
            let units: Vec<u16> = s.encode_utf16().collect();
            out.extend_from_slice(&u16::try_from(units.len()).unwrap().to_le_bytes());
            for u in units {
                out.extend_from_slice(&u.to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn a_block_holds_sixteen_ids_from_sixteen_times_its_number_less_one() {
        let mut out = BTreeMap::new();
        decode_block(2, &block(&[(0, "sixteen"), (15, "thirty-one")]), &mut out).unwrap();
        let expected: BTreeMap<u32, String> =
            [(16, "sixteen".to_owned()), (31, "thirty-one".to_owned())].into();
        assert_eq!(out, expected);
    }

    #[test]
    fn a_block_cut_short_is_refused() {
        let mut bytes = block(&[(15, "last")]);
        bytes.truncate(bytes.len() - 2);
        let e = decode_block(1, &bytes, &mut BTreeMap::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a readable PE32+ image with resources: string block 1 is cut short"
        );
    }

    #[test]
    fn manifest_strings_resolve_references_and_take_hex_ids() {
        let xml = r#"<instrumentationManifest><counters><provider>
            <counterSet name="$(string.Set)" nameID="0x10" description="d" descriptionID="3">
              <counter name="C" nameID="5"/>
            </counterSet></provider></counters>
            <localization><resources><stringTable><string id="Set" value="My Set"/></stringTable></resources></localization>
            </instrumentationManifest>"#;
        let got = manifest_strings(xml).unwrap();
        let expected: BTreeMap<u32, String> = [
            (3, "d".to_owned()),
            (5, "C".to_owned()),
            (16, "My Set".to_owned()),
        ]
        .into();
        assert_eq!(got, expected);
    }

    #[test]
    fn compare_names_every_missing_and_different_string() {
        let expected: BTreeMap<u32, String> = [
            (1, "a".to_owned()),
            (2, "b".to_owned()),
            (3, "c".to_owned()),
        ]
        .into();
        let found: BTreeMap<u32, String> = [(1, "a".to_owned()), (2, "B".to_owned())].into();
        let got: Vec<String> = compare(&expected, &found)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                r#"string 2: the image has "B", the manifest says "b""#,
                r#"string 3: missing from the image's resources (the manifest says "c")"#,
            ]
        );
    }
}
