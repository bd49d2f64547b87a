// SPDX-License-Identifier: MIT OR Apache-2.0
//! Integration tests of `pcw dump`, run through the real binary.
//!
//! * The fixtures in `tests/fixtures/*.perf` are `PERF_DATA_BLOCK`s written by pcw-core's V1
//!   writer behind a header assembled here; [`fixtures_are_what_the_writer_produces`] checks
//!   the committed bytes are exactly what the writer produces today, so they cannot rot.
//! * `tests/fixtures/*.txt` and `*.json` are the expected outputs (golden files).
//! * Corrupted variants are made here by patching a good fixture; each must exit 2 and name
//!   the broken rule and its offset.
//!
//! `PCW_BLESS=1 cargo test -p pcw-cli --test dump` rewrites fixtures and golden files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

use pcw_core::counter_type::{CounterType, DetailLevel};
use pcw_core::testing;
use pcw_core::v1::validate::DataBlockRef;
use pcw_core::v1::wire;
use pcw_core::v1::writer::{
    CounterSpec, InstanceDesc, InstanceName, InstanceSpec, InstancesDesc, Mode, ObjectDesc,
    ObjectHeader, ObjectSource, assign_offsets,
};

// ---------------------------------------------------------------------------------------------
// Fixture construction.

const COMPUTER: &str = "PCW-TEST";

/// A whole `PERF_DATA_BLOCK`: header + computer name + zeroed padding + the writer's objects.
fn block(objects: &[&dyn ObjectSource], mode: Mode) -> Vec<u8> {
    testing::data_block(COMPUTER, objects, mode).expect("fixture description is writable")
}

/// A counter at offset 0 (`laid_out` places it) with a scale and detail level.
fn counter(
    name: u32,
    counter_type: CounterType,
    size: u32,
    scale: i32,
    detail: DetailLevel,
) -> CounterSpec {
    CounterSpec {
        default_scale: scale,
        detail_level: detail,
        ..testing::titled_counter(name, counter_type, size, 0)
    }
}

fn header(name: u32, detail: DetailLevel, default_counter: i32) -> ObjectHeader {
    ObjectHeader {
        detail_level: detail,
        default_counter,
        ..testing::header(name, false)
    }
}

fn laid_out(mut counters: Vec<CounterSpec>) -> Vec<CounterSpec> {
    assign_offsets(&mut counters).expect("valid sizes");
    counters
}

/// A single-instance object ("Memory"-like).
fn single_counters() -> Vec<CounterSpec> {
    use DetailLevel::Novice;
    laid_out(vec![
        counter(10, CounterType::Rawcount, 4, 0, Novice),
        counter(12, CounterType::LargeRawcount, 8, -3, Novice),
        counter(14, CounterType::Counter, 4, 0, DetailLevel::Advanced),
        counter(16, CounterType::RawcountHex, 4, 0, DetailLevel::Wizard),
    ])
}
const SINGLE_VALUES: [u64; 4] = [42, 0x1_0000_0002, 1000, 0xdead_beef];

/// A multi-instance object ("Process"-like) with UTF-16 names beyond ASCII.
fn multi_counters() -> Vec<CounterSpec> {
    use DetailLevel::Novice;
    laid_out(vec![
        counter(232, CounterType::Rawcount, 4, 0, Novice),
        counter(234, CounterType::LargeRawcount, 8, -6, Novice),
        counter(236, CounterType::Timer100ns, 8, 0, DetailLevel::Expert),
    ])
}
const MULTI_NAMES: [&str; 4] = ["_Total", "Ünïcødé", "日本語", "emoji 😀"];
const MULTI_VALUES: [[u64; 3]; 6] = [
    [6, 6000, 600_000],
    [1, 1000, 100_000],
    [2, 2000, 200_000],
    [3, u64::MAX, 300_000],
    [0, 0, 0],
    [4, 4000, 0],
];
fn multi_instances() -> Vec<InstanceDesc<'static>> {
    let mut list: Vec<InstanceDesc<'static>> = MULTI_NAMES
        .iter()
        .zip(&MULTI_VALUES)
        .map(|(name, values)| InstanceDesc {
            spec: InstanceSpec::named(name),
            values,
        })
        .collect();
    // Identified by unique id, no name.
    list.push(InstanceDesc {
        spec: InstanceSpec {
            name: InstanceName::None,
            unique_id: 7,
            parent_title_index: 0,
            parent_instance: 0,
        },
        values: &MULTI_VALUES[4],
    });
    // A child of instance 1 of object 238.
    list.push(InstanceDesc {
        spec: InstanceSpec {
            name: InstanceName::Str("child"),
            unique_id: wire::PERF_NO_UNIQUE_ID,
            parent_title_index: 238,
            parent_instance: 1,
        },
        values: &MULTI_VALUES[5],
    });
    list
}

/// Fraction/base pairs and 8-byte counters, with two instances.
fn fraction_counters() -> Vec<CounterSpec> {
    use CounterType as T;
    use DetailLevel::{Advanced, Novice};
    laid_out(vec![
        counter(300, T::RawFraction, 4, 2, Novice),
        counter(0, T::RawBase, 4, 0, Novice),
        counter(302, T::LargeRawFraction, 8, 2, Advanced),
        counter(0, T::LargeRawBase, 8, 0, Advanced),
        counter(304, T::BulkCount, 8, -1, Novice),
        counter(306, T::AverageTimer, 4, 0, Novice),
        counter(0, T::AverageBase, 4, 0, Novice),
        counter(308, T::AverageBulk, 8, 0, Advanced),
        counter(0, T::AverageBase, 4, 0, Advanced),
        counter(310, T::SampleFraction, 4, 2, Novice),
        counter(0, T::SampleBase, 4, 0, Novice),
        counter(312, T::NoData, 0, 0, Novice),
    ])
}
const FRACTION_VALUES: [[u64; 12]; 2] = [
    [
        1,
        4,
        3,
        8,
        0x0123_4567_89ab_cdef,
        500,
        5,
        1 << 40,
        9,
        7,
        10,
        0,
    ],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
];

/// Every fixture: file stem and bytes.
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    let single_c = single_counters();
    let single = ObjectDesc {
        header: header(4, DetailLevel::Novice, 0),
        counters: &single_c,
        instances: InstancesDesc::Single(&SINGLE_VALUES),
    };
    let multi_c = multi_counters();
    let multi_i = multi_instances();
    let multi = ObjectDesc {
        header: header(230, DetailLevel::Novice, 2),
        counters: &multi_c,
        instances: InstancesDesc::Multi(&multi_i),
    };
    let fraction_c = fraction_counters();
    let fraction_i = [
        InstanceDesc {
            spec: InstanceSpec::named("disk 0"),
            values: &FRACTION_VALUES[0],
        },
        InstanceDesc {
            spec: InstanceSpec::named("disk 1"),
            values: &FRACTION_VALUES[1],
        },
    ];
    let fraction = ObjectDesc {
        header: ObjectHeader {
            perf_time: 987_654_321,
            perf_freq: 1_000_000,
            ..header(298, DetailLevel::Novice, -1)
        },
        counters: &fraction_c,
        instances: InstancesDesc::Multi(&fraction_i),
    };
    let empty_multi = ObjectDesc {
        header: header(400, DetailLevel::Advanced, -1),
        counters: &multi_c,
        instances: InstancesDesc::Multi(&[]),
    };
    vec![
        ("single", block(&[&single], Mode::Data)),
        ("multi", block(&[&multi], Mode::Data)),
        ("fraction", block(&[&fraction], Mode::Data)),
        ("two_objects", block(&[&single, &multi], Mode::Data)),
        ("multi_empty", block(&[&empty_multi], Mode::Data)),
        ("metadata", block(&[&single, &multi], Mode::Metadata)),
        ("empty", block(&[], Mode::Data)),
    ]
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn bless() -> bool {
    std::env::var_os("PCW_BLESS").is_some_and(|v| v == "1")
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// With `PCW_BLESS=1`, writes every fixture once before any test reads one.
fn ensure_fixtures() {
    static BLESS: Once = Once::new();
    BLESS.call_once(|| {
        if bless() {
            std::fs::create_dir_all(fixture_dir()).unwrap();
            for (name, bytes) in fixtures() {
                std::fs::write(fixture_dir().join(format!("{name}.perf")), bytes).unwrap();
            }
        }
    });
}

fn fixture(name: &str) -> Vec<u8> {
    ensure_fixtures();
    let path = fixture_dir().join(format!("{name}.perf"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn pcw(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcw"))
        .args(args)
        .output()
        .expect("run pcw")
}

fn dump_file(path: &Path, json: bool) -> Output {
    let mut args = vec!["dump".as_ref(), path.as_os_str()];
    if json {
        args.push("--json".as_ref());
    }
    pcw(&args)
}

/// Writes `bytes` to a fresh file under the test's temporary directory.
fn temp_file(tag: &str, bytes: &[u8]) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dump-{}-{n}-{tag}.perf", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn dump_bytes(tag: &str, bytes: &[u8], json: bool) -> Output {
    let path = temp_file(tag, bytes);
    let out = dump_file(&path, json);
    let _ = std::fs::remove_file(&path);
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8 output")
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn add_u32(bytes: &mut [u8], at: usize, delta: i64) {
    let v = i64::from(get_u32(bytes, at)) + delta;
    put_u32(bytes, at, u32::try_from(v).unwrap());
}

/// Where things are in a valid block, found with the validator.
struct Layout {
    objects: Vec<ObjectAt>,
}

/// Offsets (from the start of the file) inside one object.
struct ObjectAt {
    at: usize,
    def_len: usize,
    instances: Vec<InstanceAt>,
}

/// Offsets of one instance: its definition (or block, for a single instance) and its block.
struct InstanceAt {
    at: usize,
    block: usize,
}

fn layout(bytes: &[u8]) -> Layout {
    let block = DataBlockRef::parse(bytes).expect("fixture is valid");
    Layout {
        objects: block
            .objects()
            .map(|o| {
                let def_len = o.header().definition_length as usize;
                let instances = o
                    .instances()
                    .map(|i| {
                        let block_at =
                            i.offset() + i.definition().map_or(0, |d| d.byte_length as usize);
                        InstanceAt {
                            at: i.offset(),
                            block: block_at,
                        }
                    })
                    .collect();
                ObjectAt {
                    at: o.offset(),
                    def_len,
                    instances,
                }
            })
            .collect(),
    }
}

// Field offsets used by the corruptions.
use wire::field::{counter_block as cb, counter_definition as cd, data_block as db};
use wire::field::{instance_definition as id, object_type as ot};

fn counter_at(object: usize, index: usize) -> usize {
    object + ot::LEN + index * cd::LEN
}

/// Asserts `out` is a clean "invalid data" failure naming `rule` at `offset`.
fn assert_invalid(case: &str, out: &Output, rule: &str, offset: usize) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{case}: stderr {stderr}");
    assert!(out.stdout.is_empty(), "{case}: printed before failing");
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    assert!(stderr.starts_with("error: "), "{case}: {stderr}");
    assert!(
        stderr.contains(&format!("[{rule}]")),
        "{case}: expected rule {rule}: {stderr}"
    );
    assert!(
        stderr.contains(&format!("at offset {offset} (0x{offset:x})")),
        "{case}: expected offset {offset}: {stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// Fixtures and golden outputs.

const NAMES: [&str; 7] = [
    "single",
    "multi",
    "fraction",
    "two_objects",
    "multi_empty",
    "metadata",
    "empty",
];

#[test]
fn fixtures_are_what_the_writer_produces() {
    let all = fixtures();
    assert_eq!(
        all.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        NAMES,
        "NAMES lists every fixture"
    );
    for (name, bytes) in all {
        assert_eq!(
            fixture(name),
            bytes,
            "{name}.perf differs from what the writer produces now; \
             rerun with PCW_BLESS=1 if the change is intended"
        );
        DataBlockRef::parse(&bytes).unwrap_or_else(|v| panic!("{name}: {v}"));
    }
}

#[test]
fn golden_outputs() {
    ensure_fixtures();
    for name in NAMES {
        let path = fixture_dir().join(format!("{name}.perf"));
        for (json, ext) in [(false, "txt"), (true, "json")] {
            let out = dump_file(&path, json);
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
            assert!(out.stderr.is_empty(), "{name}: {}", text(&out.stderr));
            let got = text(&out.stdout);
            let golden = fixture_dir().join(format!("{name}.{ext}"));
            if bless() {
                std::fs::write(&golden, &got).unwrap();
            } else {
                let want = std::fs::read_to_string(&golden)
                    .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
                assert_eq!(
                    got, want,
                    "{name}.{ext}: output changed; rerun with PCW_BLESS=1 if intended"
                );
            }
        }
    }
}

fn json(name: &str) -> serde_json::Value {
    let out = dump_file(&fixture_dir().join(format!("{name}.perf")), true);
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The JSON says what the writer was told (independently of the golden files).
#[test]
fn json_reports_what_was_written() {
    ensure_fixtures();
    let v = json("multi");
    assert_eq!(v["header"]["signature"], "PERF");
    assert_eq!(v["header"]["system_name"], COMPUTER);
    assert_eq!(v["header"]["header_length"], 112);
    assert_eq!(v["trailing_bytes"], 0);
    let objects = v["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1);
    let o = &objects[0];
    assert_eq!(o["name_title_index"], 230);
    assert_eq!(o["instance_kind"], "multi");
    assert_eq!(o["num_instances"], 6);
    assert_eq!(o["default_counter"], 2);
    let counters = o["counters"].as_array().unwrap();
    let types: Vec<_> = counters.iter().map(|c| &c["counter_type_name"]).collect();
    assert_eq!(
        types,
        [
            "PERF_COUNTER_RAWCOUNT",
            "PERF_COUNTER_LARGE_RAWCOUNT",
            "PERF_100NSEC_TIMER"
        ]
    );
    let instances = o["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 6);
    for (i, name) in MULTI_NAMES.iter().enumerate() {
        assert_eq!(instances[i]["name"], *name);
        assert_eq!(instances[i]["definition"]["unique_id"], -1);
    }
    assert_eq!(instances[4]["name"], serde_json::Value::Null);
    assert_eq!(instances[4]["definition"]["unique_id"], 7);
    assert_eq!(instances[5]["definition"]["parent_object_title_index"], 238);
    assert_eq!(instances[5]["definition"]["parent_object_instance"], 1);
    for (i, values) in MULTI_VALUES.iter().enumerate() {
        assert_eq!(instances[i]["values"], serde_json::json!(values), "{i}");
    }

    let v = json("single");
    let o = &v["objects"][0];
    assert_eq!(o["instance_kind"], "single");
    assert_eq!(o["instances"][0]["definition"], serde_json::Value::Null);
    assert_eq!(
        o["instances"][0]["values"],
        serde_json::json!(SINGLE_VALUES)
    );

    let v = json("fraction");
    let o = &v["objects"][0];
    let mut values: Vec<serde_json::Value> = FRACTION_VALUES[0]
        .iter()
        .map(|n| serde_json::json!(n))
        .collect();
    values[11] = serde_json::Value::Null; // PERF_COUNTER_NODATA has size 0
    assert_eq!(
        o["instances"][0]["values"],
        serde_json::Value::Array(values)
    );
    assert_eq!(o["perf_time"], 987_654_321);
    assert_eq!(o["counters"][3]["counter_type_name"], "PERF_LARGE_RAW_BASE");
    assert_eq!(o["counters"][3]["size"], 8);

    let v = json("two_objects");
    assert_eq!(v["objects"].as_array().unwrap().len(), 2);
    assert_eq!(v["header"]["num_object_types"], 2);

    let v = json("metadata");
    let kinds: Vec<_> = v["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["instance_kind"].clone(),
                o["instances"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (serde_json::json!("metadata-single"), 0),
            (serde_json::json!("metadata-multi"), 0)
        ]
    );

    let v = json("empty");
    assert_eq!(v["objects"], serde_json::json!([]));
    assert_eq!(v["header"]["total_byte_length"], 112);

    let v = json("multi_empty");
    assert_eq!(v["objects"][0]["num_instances"], 0);
    assert_eq!(v["objects"][0]["instances"], serde_json::json!([]));
}

#[test]
fn trailing_bytes_are_ignored_and_reported() {
    let mut bytes = fixture("single");
    bytes.extend_from_slice(&[0xA5; 16]);
    let out = dump_bytes("trailing", &bytes, false);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("16 trailing bytes ignored"));
}

/// `NameOffset` is meaningless when `NameLength` is 0: a wild value is accepted and the
/// instances after it are still printed (regression test for pcw-core's instance iterator,
/// which used to stop there).
#[test]
fn unnamed_instance_with_wild_name_offset() {
    let mut bytes = fixture("multi");
    let l = layout(&bytes);
    let unnamed = l.objects[0].instances[4].at;
    assert_eq!(get_u32(&bytes, unnamed + id::NAME_LENGTH), 0);
    put_u32(&mut bytes, unnamed + id::NAME_OFFSET, 0xffff_fff0);
    let out = dump_bytes("wild-name-offset", &bytes, true);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let instances = v["objects"][0]["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 6);
    assert_eq!(instances[5]["name"], "child");
}

/// Names in a code page (`CodePage != 0`) are bytes: printable ASCII is kept, other bytes are
/// shown as `\xNN`, and the NUL rule of UTF-16 names does not apply.
#[test]
fn code_page_names_are_shown_as_bytes() {
    let mut bytes = fixture("multi");
    let l = layout(&bytes);
    let obj = &l.objects[0];
    put_u32(&mut bytes, obj.at + ot::CODE_PAGE, 1252);
    let inst = obj.instances[0].at;
    bytes[inst + 24..inst + 29].copy_from_slice(b"caf\xe9\0");
    put_u32(&mut bytes, inst + id::NAME_LENGTH, 5);
    let out = dump_bytes("code-page", &bytes, true);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["objects"][0]["code_page"], 1252);
    assert_eq!(v["objects"][0]["instances"][0]["name"], "caf\\xe9");
    let out = dump_bytes("code-page", &bytes, false);
    assert!(text(&out.stdout).contains("CodePage         1252\n"));
}

// ---------------------------------------------------------------------------------------------
// Corrupted variants.

/// Every cut of a valid file fails cleanly: `truncated` at 0 inside the 88-byte header,
/// `data-block-total-length` at 20 after it.
#[test]
fn truncated_anywhere() {
    for name in ["two_objects", "multi"] {
        let bytes = fixture(name);
        for cut in 0..bytes.len() {
            let out = dump_bytes("cut", &bytes[..cut], cut % 2 == 0);
            let case = format!("{name} cut at {cut}");
            if cut < db::LEN {
                assert_invalid(&case, &out, "truncated", 0);
            } else {
                assert_invalid(
                    &case,
                    &out,
                    "data-block-total-length",
                    db::TOTAL_BYTE_LENGTH,
                );
                let says = format!(
                    "the file has {cut} bytes, TotalByteLength says {}",
                    bytes.len()
                );
                assert!(text(&out.stderr).contains(&says), "{case}");
            }
        }
    }
}

/// Cuts whose `TotalByteLength` was fixed up to match (a writer that lost data but kept the
/// header consistent): the failure is found inside the objects, never a panic.
#[test]
fn truncated_with_consistent_total() {
    let bytes = fixture("two_objects");
    let l = layout(&bytes);
    let header_len = get_u32(&bytes, db::HEADER_LENGTH) as usize;
    for cut in header_len..bytes.len() {
        let mut cut_bytes = bytes[..cut].to_vec();
        put_u32(
            &mut cut_bytes,
            db::TOTAL_BYTE_LENGTH,
            u32::try_from(cut).unwrap(),
        );
        let out = dump_bytes("cut-total", &cut_bytes, false);
        let case = format!("two_objects cut at {cut} with TotalByteLength fixed");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        // The object that the cut falls in is the one reported.
        let obj = l.objects.iter().rev().find(|o| o.at <= cut).unwrap().at;
        if cut == obj {
            // The cut falls between objects: the count is wrong.
            assert_invalid(&case, &out, "object-count", db::NUM_OBJECT_TYPES);
        } else if cut - obj < ot::LEN {
            assert_invalid(&case, &out, "truncated", obj);
        } else {
            assert_invalid(&case, &out, "object-length-out-of-bounds", obj);
        }
    }
}

struct Case {
    name: &'static str,
    fixture: &'static str,
    /// Patches the bytes and returns the expected (rule, offset).
    patch: fn(&mut Vec<u8>, &Layout) -> (&'static str, usize),
}

const CASES: &[Case] = &[
    Case {
        name: "bad signature",
        fixture: "single",
        patch: |b, _| {
            b[0] = b'X';
            ("signature", 0)
        },
    },
    Case {
        name: "wrong object count (one too many)",
        fixture: "two_objects",
        patch: |b, _| {
            add_u32(b, db::NUM_OBJECT_TYPES, 1);
            ("object-count", db::NUM_OBJECT_TYPES)
        },
    },
    Case {
        name: "wrong object count (zero)",
        fixture: "two_objects",
        patch: |b, _| {
            put_u32(b, db::NUM_OBJECT_TYPES, 0);
            ("object-count", db::NUM_OBJECT_TYPES)
        },
    },
    Case {
        name: "data block header length",
        fixture: "single",
        patch: |b, _| {
            add_u32(b, db::HEADER_LENGTH, 8);
            ("data-block-header-length", db::HEADER_LENGTH)
        },
    },
    Case {
        name: "object TotalByteLength not 8-aligned",
        fixture: "two_objects",
        patch: |b, l| {
            let obj = l.objects[0].at;
            add_u32(b, obj + ot::TOTAL_BYTE_LENGTH, 4);
            ("object-length-unaligned", obj)
        },
    },
    Case {
        name: "last object TotalByteLength past the end",
        fixture: "two_objects",
        patch: |b, l| {
            let obj = l.objects[1].at;
            add_u32(b, obj + ot::TOTAL_BYTE_LENGTH, 8);
            ("object-length-out-of-bounds", obj)
        },
    },
    Case {
        name: "object TotalByteLength shorter than its instances",
        fixture: "two_objects",
        patch: |b, l| {
            let obj = &l.objects[0];
            let len = get_u32(b, obj.at + ot::TOTAL_BYTE_LENGTH);
            put_u32(b, obj.at + ot::TOTAL_BYTE_LENGTH, len - 8);
            // The single counter block no longer fits its object.
            ("instance-chain", obj.instances[0].block)
        },
    },
    Case {
        name: "DefinitionLength",
        fixture: "multi",
        patch: |b, l| {
            let obj = l.objects[0].at;
            add_u32(b, obj + ot::DEFINITION_LENGTH, 40);
            ("definition-length", obj)
        },
    },
    Case {
        name: "object HeaderLength",
        fixture: "multi",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(b, obj + ot::HEADER_LENGTH, 72);
            ("object-header-length", obj)
        },
    },
    Case {
        name: "NumInstances -5",
        fixture: "multi",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(b, obj + ot::NUM_INSTANCES, (-5i32).cast_unsigned());
            ("num-instances", obj)
        },
    },
    Case {
        name: "DefaultCounter out of range",
        fixture: "multi",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(b, obj + ot::DEFAULT_COUNTER, 3);
            ("default-counter", obj)
        },
    },
    Case {
        name: "misaligned instance ByteLength",
        fixture: "multi",
        patch: |b, l| {
            let inst = l.objects[0].instances[1].at;
            add_u32(b, inst + id::BYTE_LENGTH, 4);
            ("instance-length", inst)
        },
    },
    Case {
        name: "name outside instance",
        fixture: "multi",
        patch: |b, l| {
            let inst = l.objects[0].instances[2].at;
            let len = get_u32(b, inst + id::BYTE_LENGTH);
            put_u32(b, inst + id::NAME_LENGTH, len - 24 + 2);
            ("name-outside-instance", inst)
        },
    },
    Case {
        name: "NameOffset inside the fixed part",
        fixture: "multi",
        patch: |b, l| {
            let inst = l.objects[0].instances[0].at;
            put_u32(b, inst + id::NAME_OFFSET, 20);
            ("name-outside-instance", inst)
        },
    },
    Case {
        name: "name without NUL",
        fixture: "multi",
        patch: |b, l| {
            let inst = l.objects[0].instances[0].at;
            let nul = inst + 24 + get_u32(b, inst + id::NAME_LENGTH) as usize - 2;
            b[nul] = b'X';
            ("name-not-terminated", inst)
        },
    },
    Case {
        name: "counter outside block",
        fixture: "single",
        patch: |b, l| {
            let obj = &l.objects[0];
            let block = obj.instances[0].block;
            let block_len = get_u32(b, block + cb::BYTE_LENGTH);
            put_u32(b, counter_at(obj.at, 1) + cd::COUNTER_OFFSET, block_len);
            ("counter-outside-block", block)
        },
    },
    Case {
        name: "counter inside the block header",
        fixture: "single",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(b, counter_at(obj, 0) + cd::COUNTER_OFFSET, 0);
            ("counter-outside-block", counter_at(obj, 0))
        },
    },
    Case {
        name: "counter size disagrees with its type",
        fixture: "single",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(b, counter_at(obj, 0) + cd::COUNTER_SIZE, 8);
            ("counter-size", counter_at(obj, 0))
        },
    },
    Case {
        name: "counter ByteLength",
        fixture: "single",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(b, counter_at(obj, 2) + cd::BYTE_LENGTH, 41);
            ("counter-byte-length", counter_at(obj, 2))
        },
    },
    Case {
        name: "base counter missing after its fraction",
        fixture: "fraction",
        patch: |b, l| {
            let obj = l.objects[0].at;
            put_u32(
                b,
                counter_at(obj, 1) + cd::COUNTER_TYPE,
                CounterType::Rawcount.raw(),
            );
            ("base-not-following", counter_at(obj, 0))
        },
    },
    Case {
        name: "counter block ByteLength not 8-aligned",
        fixture: "multi",
        patch: |b, l| {
            let block = l.objects[0].instances[3].block;
            add_u32(b, block + cb::BYTE_LENGTH, 4);
            ("block-length", block)
        },
    },
    Case {
        name: "NumInstances -3 (metadata) with a counter block left over",
        fixture: "single",
        patch: |b, l| {
            // NumInstances −3 says "definitions only", so the counter block is left over.
            let obj = &l.objects[0];
            put_u32(b, obj.at + ot::NUM_INSTANCES, (-3i32).cast_unsigned());
            ("instance-chain", obj.at + obj.def_len)
        },
    },
];

#[test]
fn corrupted_variants_name_rule_and_offset() {
    for case in CASES {
        let mut bytes = fixture(case.fixture);
        let l = layout(&bytes);
        let (rule, offset) = (case.patch)(&mut bytes, &l);
        for json in [false, true] {
            let out = dump_bytes("corrupt", &bytes, json);
            assert_invalid(case.name, &out, rule, offset);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Operational errors and usage.

#[test]
fn missing_file_exits_1() {
    let out = dump_file(Path::new("/nonexistent/pcw-dump-test.perf"), false);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: cannot read the capture `/nonexistent/pcw-dump-test.perf`"));
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    assert_eq!(pcw(&[]).status.code(), Some(1));
    assert_eq!(pcw(&["dump".as_ref()]).status.code(), Some(1));
    assert_eq!(
        pcw(&["dump".as_ref(), "x".as_ref(), "--bogus".as_ref()])
            .status
            .code(),
        Some(1)
    );
    let help = pcw(&["dump".as_ref(), "--help".as_ref()]);
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("--json"));
}

// ---------------------------------------------------------------------------------------------
// Real captures from Windows.

/// Every file in the directory named by `PCW_REAL_CAPTURES` (raw `RegQueryValueExW(
/// HKEY_PERFORMANCE_DATA, …)` buffers saved on a Windows machine) must dump with exit 0, in text
/// and JSON, listing exactly `NumObjectTypes` objects. No capture from a real machine can be
/// committed here (the public ones carry no licence), so this test runs on demand:
/// `PCW_REAL_CAPTURES=/path/to/captures cargo test -p pcw-cli --test dump -- --ignored`.
#[test]
#[ignore = "needs PCW_REAL_CAPTURES, a directory of captures from a Windows machine"]
fn real_windows_captures() {
    let dir = std::env::var_os("PCW_REAL_CAPTURES")
        .expect("set PCW_REAL_CAPTURES to a directory of HKEY_PERFORMANCE_DATA captures");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("readable capture directory") {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let Ok(block) = DataBlockRef::parse(&bytes) else {
            continue; // not a capture (a README, a script): the dump below would say why
        };
        seen += 1;
        let out = Command::new(env!("CARGO_BIN_EXE_pcw"))
            .args(["dump", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let objects = json["objects"].as_array().unwrap();
        assert_eq!(
            objects.len(),
            block.header().num_object_types as usize,
            "{}",
            path.display()
        );
        assert_eq!(objects.len(), block.objects().count());
        let text = Command::new(env!("CARGO_BIN_EXE_pcw"))
            .arg("dump")
            .arg(&path)
            .output()
            .unwrap();
        assert!(text.status.success());
    }
    assert!(seen > 0, "no capture in {}", dir.to_string_lossy());
}
