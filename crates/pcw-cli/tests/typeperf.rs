// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw typeperf` through the real binary: the driver loaded under pcw-sim on the real clock,
//! sampled and printed as typeperf's PDH-CSV; errors with exit status 1 and a message naming
//! the path.

use std::process::{Command, Output};

use pcw_driver::waves::WAVES;

fn pcw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcw"))
        .args(args)
        .output()
        .unwrap()
}

/// A strict CSV reader for typeperf's output: one empty line first, then records of quoted
/// fields (`""` for a quote inside), separated by commas, one record a line.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let body = text
        .strip_prefix('\n')
        .expect("typeperf's output starts with an empty line");
    assert!(body.ends_with('\n'), "the last record is terminated");
    body.lines()
        .map(|line| pcw_pdh::csv::parse_row(line).unwrap())
        .collect()
}

/// `MM/DD/YYYY HH:MM:SS.mmm`.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 23
        && b.iter().enumerate().all(|(i, c)| match i {
            2 | 5 => *c == b'/',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn waves_parse_as_csv_and_stay_in_range() {
    let out = pcw(&[
        "typeperf",
        r"\Geometric Waves(*)\*",
        "-sc",
        "3",
        "-si",
        "0.05",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("The command completed successfully."));
    let rows = parse_csv(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(rows.len(), 4, "header and 3 samples: {rows:?}");

    let header = &rows[0];
    assert_eq!(header[0], "(PDH-CSV 4.0)");
    let mut expected = Vec::new();
    for counter in ["Triangle", "Square"] {
        for (name, _) in WAVES {
            expected.push(format!(r"\\PCW-SIM\Geometric Waves({name})\{counter}"));
        }
    }
    assert_eq!(header[1..], expected);

    for row in &rows[1..] {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert!(is_timestamp(&row[0]), "{row:?}");
        for (cell, path) in row[1..].iter().zip(&header[1..]) {
            let value: f64 = cell.parse().unwrap_or_else(|_| panic!("{path}: {cell:?}"));
            assert_eq!(cell, &format!("{value:.6}"), "six decimals");
            let (_, wave) = WAVES
                .iter()
                .find(|(name, _)| path.contains(&format!("({name})")))
                .unwrap();
            let (low, high) = (
                f64::from(wave.minimum),
                f64::from(wave.minimum + wave.amplitude),
            );
            assert!((low..=high).contains(&value), "{path}: {value}");
        }
    }
    // Rows are in time order.
    assert!(rows[1][0] <= rows[2][0] && rows[2][0] <= rows[3][0]);
}

#[test]
fn statistics_and_a_single_instance_path() {
    let out = pcw(&[
        "typeperf",
        r"\\pcw-sim\PCW Provider Statistics\Time Since Load",
        r"\PCW Provider Statistics\Collections/sec",
        r"\Geometric Waves(Small Wave)\Square",
        "-sc",
        "2",
        "-si",
        "0.05",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = parse_csv(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        rows[0],
        [
            "(PDH-CSV 4.0)",
            r"\\PCW-SIM\PCW Provider Statistics\Time Since Load",
            r"\\PCW-SIM\PCW Provider Statistics\Collections/sec",
            r"\\PCW-SIM\Geometric Waves(Small Wave)\Square",
        ]
    );
    assert_eq!(rows.len(), 3);
    let cell = |r: usize, c: usize| -> f64 { rows[r][c].parse().unwrap() };
    // Elapsed time grows by at least the interval; one waves collection per sample, so the
    // rate is one per interval (the real clock: about 20/s, never above).
    assert!(
        cell(1, 1) >= 0.05 && cell(2, 1) >= cell(1, 1) + 0.05,
        "{rows:?}"
    );
    for r in 1..=2 {
        assert!(cell(r, 2) > 0.0 && cell(r, 2) <= 20.0 + 1e-9, "{rows:?}");
    }
}

#[test]
fn errors_name_the_path_and_exit_1() {
    let cases = [
        (r"\No Such Object\*", "unknown object `No Such Object`"),
        (r"\Geometric Waves(*)\Sine", "has no counter `Sine`"),
        (r"\PCW Provider Statistics\Now", "has no counter `Now`"),
        (r"Geometric Waves(*)\*", "bad counter path"),
        (r"\Geometric Waves(*\*", "bad counter path"),
        (r"\Geometric Waves(Tiny Wave)\*", "no instance"),
        (r"\Geometric Waves\Square", "has instances"),
        (r"\\ELSEWHERE\Geometric Waves(*)\*", "unknown computer"),
    ];
    for (path, message) in cases {
        let out = pcw(&["typeperf", path, "-sc", "1", "-si", "0.01"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{path}: {stderr}");
        assert!(out.stdout.is_empty(), "{path}: nothing printed on stdout");
        assert!(stderr.starts_with("error: "), "{path}: {stderr}");
        assert!(stderr.contains(&format!("`{path}`")), "{path}: {stderr}");
        assert!(stderr.contains(message), "{path}: {stderr}");
    }
}

#[test]
fn usage_errors_exit_1() {
    for args in [
        &["typeperf"][..],
        &["typeperf", r"\Geometric Waves(*)\*", "-sc", "0"],
        &["typeperf", r"\Geometric Waves(*)\*", "-si", "fast"],
        &["typeperf", r"\Geometric Waves(*)\*", "-q"],
    ] {
        let out = pcw(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn qx_lists_the_drivers_three_sets_with_instances() {
    let out = pcw(&[
        "typeperf",
        "-qx",
        "--sim-queue",
        "rx0",
        "--sim-queue",
        "tx0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("The command completed successfully."));
    let listed = lines(&out);
    for (wave, _) in WAVES {
        assert!(
            listed.contains(&format!(r"\Geometric Waves({wave})\Triangle")),
            "{listed:?}"
        );
    }
    assert!(listed.contains(&r"\PCW Provider Statistics\Avg. Collect Time".to_owned()));
    for queue in ["rx0", "tx0"] {
        assert!(
            listed.contains(&format!(r"\PCW Dynamic Queues({queue})\Packets/sec")),
            "{listed:?}"
        );
    }
    // Helper counters (bases, time stamps) are never listed.
    assert!(!listed.iter().any(|l| l.ends_with(r"\Now")), "{listed:?}");
    assert_eq!(listed.len(), 2 * 3 + 5 + 3 * 2, "{listed:?}");
}

#[test]
fn q_lists_one_object_without_instances() {
    let out = pcw(&["typeperf", "-q", "geometric waves"]);
    assert!(out.status.success());
    assert_eq!(
        lines(&out),
        [
            r"\Geometric Waves(*)\Triangle",
            r"\Geometric Waves(*)\Square"
        ]
    );
}

#[test]
fn q_on_a_manifest_file() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/xdp_like.man");
    let out = pcw(&[
        "typeperf",
        "-q",
        "Sample XDP LWF Transmit Queue",
        "--manifest",
        manifest,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        lines(&out),
        [
            r"\Sample XDP LWF Transmit Queue(*)\Frames Dropped (NDIS Pause)",
            r"\Sample XDP LWF Transmit Queue(*)\Frames Dropped (NIC Failure)",
        ]
    );
}

#[test]
fn q_of_an_unknown_object_fails() {
    let out = pcw(&["typeperf", "-qx", "No Such Object"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.starts_with(
            "error: object `No Such Object` not found (the objects are `Geometric Waves`"
        ),
        "{stderr}"
    );
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pcw-typeperf-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn counter_file_and_tsv_output_file() {
    let dir = scratch("cf");
    let paths = dir.join("paths.txt");
    let output = dir.join("out.tsv");
    std::fs::write(
        &paths,
        "\\Geometric Waves(Small Wave)\\Square\n\n  \\PCW Provider Statistics\\Time Since Load  \n",
    )
    .unwrap();
    let out = pcw(&[
        "typeperf",
        "-cf",
        paths.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
        "-f",
        "TSV",
        "-sc",
        "2",
        "-si",
        "0.05",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "samples go to the file");
    let text = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let rows: Vec<Vec<&str>> = text
        .strip_prefix('\n')
        .unwrap()
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            r#""(PDH-TSV 4.0)""#,
            r#""\\PCW-SIM\Geometric Waves(Small Wave)\Square""#,
            r#""\\PCW-SIM\PCW Provider Statistics\Time Since Load""#,
        ]
    );
    assert_eq!(rows.len(), 3);
    assert!(
        rows[1..]
            .iter()
            .all(|r| r.len() == 3 && is_timestamp(r[0].trim_matches('"')))
    );
}

#[test]
fn file_and_format_errors() {
    let cases: [&[&str]; 4] = [
        &["typeperf", "-cf", "/nonexistent/paths.txt"],
        &["typeperf", r"\Geometric Waves(*)\*", "-f", "BIN"],
        &[
            "typeperf",
            r"\Geometric Waves(*)\*",
            "-o",
            "/nonexistent/dir/out.csv",
            "-sc",
            "1",
        ],
        &["typeperf", "-q", "--manifest", "/nonexistent/x.man"],
    ];
    for args in cases {
        let out = pcw(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn qx_warns_about_instance_names_on_stderr() {
    let out = pcw(&[
        "typeperf",
        "-qx",
        "PCW Dynamic Queues",
        "--sim-queue",
        "eth0(rx)",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "warning: instance `eth0(rx)` of `PCW Dynamic Queues`: `(` in the name: parentheses delimit the instance in a counter path"
        ),
        "{stderr}"
    );
    assert_eq!(lines(&out)[0], r"\PCW Dynamic Queues(eth0(rx))\Packets/sec");
}

#[test]
fn a_malformed_path_in_a_counter_file_fails() {
    let dir = scratch("bad-cf");
    let paths = dir.join("paths.txt");
    std::fs::write(
        &paths,
        "\\Geometric Waves(*)\\Square\nGeometric Waves(*)\\Triangle\n",
    )
    .unwrap();
    let out = pcw(&["typeperf", "-cf", paths.to_str().unwrap(), "-sc", "1"]);
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    // Named by the file and the line it is on.
    let at = format!("error: {}:2: ", paths.display());
    assert!(
        stderr.starts_with(&format!(
            r"{at}bad counter path `Geometric Waves(*)\Triangle`"
        )),
        "{stderr}"
    );
    // Given on the command line too, it is the command line's: no line of the file is named.
    let dir = scratch("bad-cf-both");
    let paths = dir.join("paths.txt");
    std::fs::write(&paths, "Geometric Waves(*)\\Triangle\n").unwrap();
    let out = pcw(&[
        "typeperf",
        r"Geometric Waves(*)\Triangle",
        "-cf",
        paths.to_str().unwrap(),
        "-sc",
        "1",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(r"error: bad counter path `Geometric Waves(*)\Triangle`"),
        "{stderr}"
    );
}

/// Any driver's image with its manifest: the example driver's, when the test command has built
/// it (`PCW_EXAMPLE_IMAGE`).
#[test]
fn any_driver_s_image_is_sampled_with_its_manifest() {
    let Some(image) = std::env::var_os("PCW_EXAMPLE_IMAGE") else {
        eprintln!("note: PCW_EXAMPLE_IMAGE is not set; sampling the example's image is skipped");
        return;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let image = root.join(image);
    let manifest = root.join("examples/checksum-driver/checksum_driver.man");
    let out = pcw(&[
        "typeperf",
        "--image",
        image.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        r"\Checksum Driver Algorithms(*)\*",
        "-sc",
        "2",
        "-si",
        "0.05",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<String> = lines(&out).into_iter().filter(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    for instance in ["CRC32", "Adler32"] {
        for counter in [
            "Requests",
            "Bytes Checksummed",
            "Bytes/sec",
            "Rejected Requests",
        ] {
            let column = format!(r"\\PCW-SIM\Checksum Driver Algorithms({instance})\{counter}");
            assert!(rows[0].contains(&column), "{column} not in {}", rows[0]);
        }
    }
    assert!(out.stderr.is_empty() || !String::from_utf8_lossy(&out.stderr).contains("warning"));
    // A manifest that says otherwise than the driver registered (counter 4 numbered 9): each
    // difference is a warning, and the sampling goes on.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let renumbered = text.replacen(r#"<counter id="4""#, r#"<counter id="9""#, 1);
    assert_ne!(renumbered, text);
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.man");
    // The image sampled once with `manifest` as its manifest: what it said on stderr.
    let sampled_with = |manifest: String| {
        std::fs::write(&other, manifest).unwrap();
        let out = pcw(&[
            "typeperf",
            "--image",
            image.to_str().unwrap(),
            "--manifest",
            other.to_str().unwrap(),
            r"\Checksum Driver Algorithms(*)\*",
            "-sc",
            "1",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let stderr = sampled_with(renumbered);
    assert!(
        stderr.contains(
            "warning: counter `Rejected Requests` (id 9) of `Checksum Driver Algorithms` is in \
             the manifest but the driver did not register it"
        ) && stderr.contains(
            "warning: the driver registered counter id 4 of `Checksum Driver Algorithms`, which \
             the manifest does not declare"
        ),
        "{stderr}"
    );
    // A manifest whose type gives a counter another size than the driver registered (4 bytes
    // against its 8): the values would be read wrong, and that is a warning too.
    let narrowed = text.replacen(
        r#"descriptionID="118" type="perf_counter_large_rawcount""#,
        r#"descriptionID="118" type="perf_counter_rawcount""#,
        1,
    );
    assert_ne!(narrowed, text);
    let stderr = sampled_with(narrowed);
    assert!(
        stderr.contains(
            "warning: the driver registered counter `Rejected Requests` (id 4) of `Checksum \
             Driver Algorithms` as 8 bytes, but the manifest's `PERF_COUNTER_RAWCOUNT` takes 4"
        ),
        "{stderr}"
    );
}

#[test]
fn a_manifest_samples_only_with_an_image() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/xdp_like.man");
    let out = pcw(&[
        "typeperf",
        "--manifest",
        manifest,
        r"\Sample XDP Receive Queue(*)\*",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`--manifest` samples only with `--image`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
