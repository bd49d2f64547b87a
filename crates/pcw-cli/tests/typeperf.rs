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
        .map(|line| pcw_sim::typeperf::parse_row(line).unwrap())
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
