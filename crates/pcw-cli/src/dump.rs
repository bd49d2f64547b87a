// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw dump FILE [--json]`: decodes a binary `PERF_DATA_BLOCK` — a raw
//! `RegQueryValueEx(HKEY_PERFORMANCE_DATA, …)` reply written to a file — validates it with
//! pcw-core's V1 validator and prints it for a person, or as one JSON document.
//!
//! The whole block is validated before anything is printed ([`DataBlockRef::parse`], the same
//! checks as the simulated Perflib host), so output is all or nothing. pcw-core's validator is
//! the only decoder: this module only formats what it hands out.
//!
//! The file is read in two steps, so that what it is cannot cost more than what it holds: the
//! `PERF_DATA_BLOCK` header first — a wrong signature, byte order or version stops there, after
//! a few dozen bytes, whatever the file's size (`/dev/zero`, a sparse 1 GB file) — then the
//! `TotalByteLength` bytes the header announces, at most a capture's size limit (256 MiB); the
//! bytes after them are counted, not kept.
//!
//! # Exit codes
//!
//! * 0 — the file is a valid block and was printed;
//! * 1 — the file could not be read (missing, a directory, larger than a capture may be), or
//!   stdout could not be written (a closed pipe or a full device included);
//! * 2 — the file is not valid performance data; stderr names the byte offset (decimal and hex,
//!   from the start of the file) and the rule (its stable kebab-case name and a description):
//!   `error: FILE: invalid performance data at offset 20 (0x14): PERF_DATA_BLOCK.TotalByteLength
//!   exceeds the data [data-block-total-length]; the file has 300 bytes, TotalByteLength says
//!   912 (truncated?)` (the part after `;` is added for some rules only).
//!
//! Bytes after `TotalByteLength` are ignored (and counted in `trailing_bytes`).
//!
//! # JSON
//!
//! One object, field names stable (snake case; raw values are numbers, never strings):
//!
//! * `file_size`, `trailing_bytes`;
//! * `header`: `signature` (`"PERF"`), `little_endian`, `version`, `revision`,
//!   `total_byte_length`, `header_length`, `num_object_types`, `default_object`, `system_time`
//!   (`year`, `month`, `day_of_week`, `day`, `hour`, `minute`, `second`, `milliseconds`: the
//!   `SYSTEMTIME`, UTC), `perf_time`, `perf_freq`, `perf_time_100nsec`, `system_name_length`,
//!   `system_name_offset`, `system_name` (the computer name);
//! * `objects`: array of `offset` (from the start of the file), `total_byte_length`,
//!   `definition_length`, `header_length`, `name_title_index`, `help_title_index`,
//!   `detail_level`, `detail_level_name`, `num_counters`, `default_counter` (−1 = none),
//!   `num_instances` (raw), `instance_kind` (`"multi"`, `"single"`, `"metadata-multi"` for −2,
//!   `"metadata-single"` for −3), `code_page`, `perf_time`, `perf_freq`, `counters`,
//!   `instances`;
//! * `counters`: array of `index`, `offset` (of the definition, from the start of the file),
//!   `name_title_index`, `help_title_index`, `counter_type` (raw), `counter_type_name` (the
//!   `winperf.h` name or `"UNKNOWN"`), `size`, `counter_offset` (in the counter block),
//!   `default_scale`, `detail_level`, `detail_level_name`;
//! * `instances`: array of `index`, `offset` (of the instance definition, or of the counter
//!   block for the one instance of a single-instance object), `definition` (`null` for a
//!   single-instance object, else `byte_length`, `parent_object_title_index`,
//!   `parent_object_instance`, `unique_id` (−1 = none), `name_offset`, `name_length`),
//!   `name` (`null` when there is none; UTF-16 decoded with U+FFFD for unpaired surrogates;
//!   for a code-page name, printable ASCII kept and other bytes written `\xNN`),
//!   `block_offset`, `block_length`, `values` (one per counter, by counter index: the raw
//!   value, or `null` for a counter of size 0).
//!
//! A metadata reply has no instances, so its objects have `"instances": []`.

use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;

use pcw_core::counter_type::DetailLevel;
use pcw_core::v1::validate::{DataBlockRef, InstanceRef, ObjectRef, Rule, Violation};
use pcw_core::v1::wire::{self, CounterDefinitionRepr, SystemTime};
use serde::Serialize;

use crate::Failure;

/// Arguments of `pcw dump`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The file holding the raw `PERF_DATA_BLOCK`.
    pub file: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Why `pcw dump` failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The file could not be read.
    #[error(transparent)]
    Read(#[from] pcw_io::InputError),
    /// The header of a capture read from a stream announces more bytes than a capture may
    /// have.
    #[error(
        "{}: PERF_DATA_BLOCK.TotalByteLength says {total} bytes; a capture may have at most {limit} bytes",
        pcw_io::text::shown(path)
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// `TotalByteLength`.
        total: u32,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file is not valid performance data.
    #[error(
        "{}: invalid performance data {violation}{context}",
        pcw_io::text::shown(path)
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The first broken rule and its offset.
        violation: Violation,
        /// Extra facts for the reader (empty, or starting with `; `).
        context: String,
    },
    /// The output could not be produced.
    #[error("cannot write the output: {0}")]
    Output(#[source] io::Error),
    /// Standard output or error failed.
    #[error(transparent)]
    Stream(#[from] pcw_io::StreamError),
}

impl Failure for Error {
    fn exit_code(&self) -> u8 {
        match self {
            Self::Invalid { .. } => 2,
            Self::Read(_) | Self::TooLarge { .. } | Self::Output(_) | Self::Stream(_) => 1,
        }
    }
}

/// Runs `pcw dump`.
///
/// # Errors
/// See [`Error`].
pub(crate) fn run(args: &Args) -> Result<(), Error> {
    let (bytes, trailing) = read_capture(&args.file)?;
    let mut dump = decode(&bytes).map_err(|violation| Error::Invalid {
        path: args.file.clone(),
        violation,
        context: context(&bytes, violation),
    })?;
    dump.file_size += trailing;
    dump.trailing_bytes += trailing;
    let mut out = if args.json {
        serde_json::to_string_pretty(&dump).map_err(|e| Error::Output(e.into()))?
    } else {
        render_text(&dump)
    };
    out.push('\n');
    Ok(pcw_io::console::out(&out)?)
}

/// The block's bytes (the header, then as many as its `TotalByteLength` says, or the whole
/// file when it says more than the file has) and the number of bytes after them.
fn read_capture(path: &std::path::Path) -> Result<(Vec<u8>, usize), Error> {
    let kind = pcw_io::input::CAPTURE;
    let mut input = pcw_io::input::Input::open(path, kind)?;
    let mut bytes = Vec::new();
    input.read_up_to(wire::field::data_block::LEN as u64, &mut bytes)?;
    let Ok(view) = wire::DataBlock::new_checked(&bytes[..]) else {
        // Shorter than a header: the whole file, which `decode` reports.
        return Ok((bytes, 0));
    };
    if let Err(v) = DataBlockRef::parse(&bytes) {
        // A header that cannot start a block stops the read here.
        if matches!(
            v.rule,
            Rule::Signature | Rule::NotLittleEndian | Rule::Version
        ) {
            return Ok((bytes, 0));
        }
    }
    let total = view.total_byte_length();
    // A regular file is within the limit already (its size was checked), and a total past its
    // end is reported by `decode`; a stream announcing more than a capture may have is refused
    // before it is read.
    if input.size().is_none() && u64::from(total) > kind.limit {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            total,
            limit: kind.limit,
        });
    }
    let rest = u64::from(total).saturating_sub(bytes.len() as u64);
    input.read_up_to(rest, &mut bytes)?;
    let trailing = input.count_rest()?;
    Ok((bytes, usize::try_from(trailing).unwrap_or(usize::MAX)))
}

/// Facts that make a violation easier to read: for a block cut short, how short.
fn context(bytes: &[u8], violation: Violation) -> String {
    match (violation.rule, wire::DataBlock::new_checked(bytes)) {
        (Rule::DataBlockTotalLength, Ok(view)) => format!(
            "; the file has {} bytes, TotalByteLength says {} (truncated?)",
            bytes.len(),
            view.total_byte_length()
        ),
        (Rule::Truncated, _) if violation.offset == 0 => format!(
            "; the file has {} bytes, a PERF_DATA_BLOCK header needs {}",
            bytes.len(),
            wire::field::data_block::LEN
        ),
        _ => String::new(),
    }
}

/// A decoded block: what both output forms print.
#[derive(Debug, Serialize)]
pub(crate) struct Dump {
    file_size: usize,
    trailing_bytes: usize,
    header: BlockHeader,
    objects: Vec<Object>,
}

#[derive(Debug, Serialize)]
struct BlockHeader {
    signature: &'static str,
    little_endian: u32,
    version: u32,
    revision: u32,
    total_byte_length: u32,
    header_length: u32,
    num_object_types: u32,
    default_object: i32,
    system_time: Time,
    perf_time: i64,
    perf_freq: i64,
    perf_time_100nsec: i64,
    system_name_length: u32,
    system_name_offset: u32,
    system_name: String,
}

#[derive(Debug, Serialize)]
struct Time {
    year: u16,
    month: u16,
    day_of_week: u16,
    day: u16,
    hour: u16,
    minute: u16,
    second: u16,
    milliseconds: u16,
}

#[derive(Debug, Serialize)]
struct Object {
    offset: usize,
    total_byte_length: u32,
    definition_length: u32,
    header_length: u32,
    name_title_index: u32,
    help_title_index: u32,
    detail_level: u32,
    detail_level_name: &'static str,
    num_counters: u32,
    default_counter: i32,
    num_instances: i32,
    instance_kind: &'static str,
    code_page: u32,
    perf_time: i64,
    perf_freq: i64,
    counters: Vec<CounterDef>,
    instances: Vec<Instance>,
}

#[derive(Debug, Serialize)]
struct CounterDef {
    index: usize,
    offset: usize,
    name_title_index: u32,
    help_title_index: u32,
    counter_type: u32,
    counter_type_name: &'static str,
    size: u32,
    counter_offset: u32,
    default_scale: i32,
    detail_level: u32,
    detail_level_name: &'static str,
}

#[derive(Debug, Serialize)]
struct Instance {
    index: usize,
    offset: usize,
    definition: Option<InstanceDefinition>,
    name: Option<String>,
    block_offset: usize,
    block_length: usize,
    values: Vec<Option<u64>>,
}

#[derive(Debug, Serialize)]
struct InstanceDefinition {
    byte_length: u32,
    parent_object_title_index: u32,
    parent_object_instance: u32,
    unique_id: i32,
    name_offset: u32,
    name_length: u32,
}

/// Validates `bytes` as a whole `PERF_DATA_BLOCK` and decodes it.
///
/// # Errors
/// The first [`Violation`] the validator finds.
pub(crate) fn decode(bytes: &[u8]) -> Result<Dump, Violation> {
    let block = DataBlockRef::parse(bytes)?;
    let h = block.header();
    let header = BlockHeader {
        signature: "PERF",
        little_endian: h.little_endian,
        version: h.version,
        revision: h.revision,
        total_byte_length: h.total_byte_length,
        header_length: h.header_length,
        num_object_types: h.num_object_types,
        default_object: h.default_object,
        system_time: time(h.system_time),
        perf_time: h.perf_time,
        perf_freq: h.perf_freq,
        perf_time_100nsec: h.perf_time_100nsec,
        system_name_length: h.system_name_length,
        system_name_offset: h.system_name_offset,
        system_name: char::decode_utf16(block.system_name_utf16())
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
    };
    let total = h.total_byte_length as usize;
    Ok(Dump {
        file_size: bytes.len(),
        trailing_bytes: bytes.len().saturating_sub(total),
        header,
        objects: block.objects().map(|o| object(&o)).collect(),
    })
}

fn time(t: SystemTime) -> Time {
    Time {
        year: t.year,
        month: t.month,
        day_of_week: t.day_of_week,
        day: t.day,
        hour: t.hour,
        minute: t.minute,
        second: t.second,
        milliseconds: t.milliseconds,
    }
}

fn detail_name(d: DetailLevel) -> &'static str {
    match d {
        DetailLevel::Novice => "novice",
        DetailLevel::Advanced => "advanced",
        DetailLevel::Expert => "expert",
        DetailLevel::Wizard => "wizard",
        DetailLevel::Unknown(_) => "unknown",
    }
}

fn instance_kind(num_instances: i32) -> &'static str {
    match num_instances {
        wire::PERF_NO_INSTANCES => "single",
        wire::PERF_METADATA_MULTIPLE_INSTANCES => "metadata-multi",
        wire::PERF_METADATA_NO_INSTANCES => "metadata-single",
        _ => "multi",
    }
}

fn object(o: &ObjectRef<'_>) -> Object {
    let h = o.header();
    let defs: Vec<CounterDefinitionRepr> = o.counters().collect();
    let counters = defs
        .iter()
        .enumerate()
        .map(|(index, c)| CounterDef {
            index,
            offset: o.offset()
                + wire::field::object_type::LEN
                + index * wire::field::counter_definition::LEN,
            name_title_index: c.counter_name_title_index,
            help_title_index: c.counter_help_title_index,
            counter_type: c.counter_type.raw(),
            counter_type_name: c.counter_type.name(),
            size: c.counter_size,
            counter_offset: c.counter_offset,
            default_scale: c.default_scale,
            detail_level: c.detail_level.raw(),
            detail_level_name: detail_name(c.detail_level),
        })
        .collect();
    let instances = o
        .instances()
        .enumerate()
        .map(|(index, i)| instance(index, &i, h.code_page, &defs))
        .collect();
    Object {
        offset: o.offset(),
        total_byte_length: h.total_byte_length,
        definition_length: h.definition_length,
        header_length: h.header_length,
        name_title_index: h.object_name_title_index,
        help_title_index: h.object_help_title_index,
        detail_level: h.detail_level.raw(),
        detail_level_name: detail_name(h.detail_level),
        num_counters: h.num_counters,
        default_counter: h.default_counter,
        num_instances: h.num_instances,
        instance_kind: instance_kind(h.num_instances),
        code_page: h.code_page,
        perf_time: h.perf_time,
        perf_freq: h.perf_freq,
        counters,
        instances,
    }
}

fn instance(
    index: usize,
    i: &InstanceRef<'_>,
    code_page: u32,
    counters: &[CounterDefinitionRepr],
) -> Instance {
    let definition = i.definition().map(|d| InstanceDefinition {
        byte_length: d.byte_length,
        parent_object_title_index: d.parent_object_title_index,
        parent_object_instance: d.parent_object_instance,
        unique_id: d.unique_id,
        name_offset: d.name_offset,
        name_length: d.name_length,
    });
    let name = match &definition {
        Some(d) if d.name_length > 0 => Some(if code_page == 0 {
            char::decode_utf16(i.name_utf16())
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect()
        } else {
            code_page_name(i.name_bytes())
        }),
        _ => None,
    };
    let block_offset = i.offset() + definition.as_ref().map_or(0, |d| d.byte_length as usize);
    Instance {
        index,
        offset: i.offset(),
        definition,
        name,
        block_offset,
        block_length: i.block().len(),
        values: counters.iter().map(|c| i.value(c)).collect(),
    }
}

/// A name in an unknown code page: up to the first NUL, printable ASCII as is, any other byte
/// as `\xNN`.
fn code_page_name(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes.iter().take_while(|b| **b != 0) {
        if b.is_ascii_graphic() || b == b' ' {
            s.push(char::from(b));
        } else {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    s
}

/// The text form (no trailing newline).
pub(crate) fn render_text(d: &Dump) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = text(&mut s, d);
    while s.ends_with('\n') {
        s.pop();
    }
    s
}

fn text(s: &mut String, d: &Dump) -> std::fmt::Result {
    let h = &d.header;
    let t = &h.system_time;
    write!(s, "PERF_DATA_BLOCK ({} bytes in file", d.file_size)?;
    if d.trailing_bytes > 0 {
        write!(s, ", {} trailing bytes ignored", d.trailing_bytes)?;
    }
    writeln!(s, ")")?;
    writeln!(s, "  Signature        {}", h.signature)?;
    writeln!(s, "  LittleEndian     {}", h.little_endian)?;
    writeln!(s, "  Version          {}.{}", h.version, h.revision)?;
    writeln!(s, "  TotalByteLength  {}", h.total_byte_length)?;
    writeln!(s, "  HeaderLength     {}", h.header_length)?;
    writeln!(s, "  NumObjectTypes   {}", h.num_object_types)?;
    writeln!(s, "  DefaultObject    {}", h.default_object)?;
    writeln!(
        s,
        "  SystemTime       {:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} UTC (day of week {})",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds, t.day_of_week
    )?;
    writeln!(s, "  PerfTime         {}", h.perf_time)?;
    writeln!(s, "  PerfFreq         {}", h.perf_freq)?;
    writeln!(s, "  PerfTime100nSec  {}", h.perf_time_100nsec)?;
    writeln!(
        s,
        "  SystemName       {:?} ({} bytes at offset {})",
        h.system_name, h.system_name_length, h.system_name_offset
    )?;
    for (index, o) in d.objects.iter().enumerate() {
        writeln!(s)?;
        object_text(s, index, o)?;
    }
    Ok(())
}

fn object_text(s: &mut String, index: usize, o: &Object) -> std::fmt::Result {
    writeln!(
        s,
        "object {index} at offset {} (0x{:x}): name {}, help {}",
        o.offset, o.offset, o.name_title_index, o.help_title_index
    )?;
    writeln!(
        s,
        "  TotalByteLength {}, DefinitionLength {}, HeaderLength {}",
        o.total_byte_length, o.definition_length, o.header_length
    )?;
    writeln!(
        s,
        "  DetailLevel      {} ({})",
        o.detail_level, o.detail_level_name
    )?;
    writeln!(s, "  NumCounters      {}", o.num_counters)?;
    let default = if o.default_counter == -1 {
        " (none)"
    } else {
        ""
    };
    writeln!(s, "  DefaultCounter   {}{default}", o.default_counter)?;
    let kind = match o.instance_kind {
        "single" => " (single instance)",
        "metadata-multi" => " (metadata: multi-instance)",
        "metadata-single" => " (metadata: single instance)",
        _ => "",
    };
    writeln!(s, "  NumInstances     {}{kind}", o.num_instances)?;
    let utf16 = if o.code_page == 0 { " (UTF-16)" } else { "" };
    writeln!(s, "  CodePage         {}{utf16}", o.code_page)?;
    writeln!(
        s,
        "  PerfTime         {}, PerfFreq {}",
        o.perf_time, o.perf_freq
    )?;
    writeln!(s, "  counters:")?;
    for c in &o.counters {
        writeln!(
            s,
            "    [{}] name {} help {}: {} (0x{:08x}), size {}, offset {}, scale {}, detail {} ({})",
            c.index,
            c.name_title_index,
            c.help_title_index,
            c.counter_type_name,
            c.counter_type,
            c.size,
            c.counter_offset,
            c.default_scale,
            c.detail_level,
            c.detail_level_name
        )?;
    }
    if o.instances.is_empty() {
        writeln!(s, "  instances: none")?;
    } else {
        writeln!(s, "  instances:")?;
    }
    for i in &o.instances {
        instance_text(s, i)?;
    }
    Ok(())
}

/// Values per line in the text form.
const VALUES_PER_LINE: usize = 8;

fn instance_text(s: &mut String, i: &Instance) -> std::fmt::Result {
    match &i.definition {
        None => writeln!(
            s,
            "    (single instance) block at offset {} (0x{:x}), {} bytes",
            i.block_offset, i.block_offset, i.block_length
        )?,
        Some(d) => {
            let name = i
                .name
                .as_ref()
                .map_or_else(|| "(no name)".to_owned(), |n| format!("{n:?}"));
            let unique = if d.unique_id == wire::PERF_NO_UNIQUE_ID {
                "none".to_owned()
            } else {
                d.unique_id.to_string()
            };
            writeln!(
                s,
                "    #{} {name} at offset {} (0x{:x}): unique id {unique}, parent object {} \
                 instance {}",
                i.index, i.offset, i.offset, d.parent_object_title_index, d.parent_object_instance
            )?;
            writeln!(
                s,
                "      ByteLength {}, NameOffset {}, NameLength {}; block at offset {} (0x{:x}), \
                 {} bytes",
                d.byte_length,
                d.name_offset,
                d.name_length,
                i.block_offset,
                i.block_offset,
                i.block_length
            )?;
        }
    }
    write!(s, "      values:")?;
    for (index, v) in i.values.iter().enumerate() {
        if index > 0 && index % VALUES_PER_LINE == 0 {
            write!(s, "\n             ")?;
        }
        match v {
            Some(v) => write!(s, " [{index}] {v}")?,
            None => write!(s, " [{index}] -")?,
        }
    }
    writeln!(s)
}
