// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw-pecheck`: the code analyses of the cross-built artifacts.
//!
//! ```text
//! pcw-pecheck no-panic [--driver SYS PDB] [--dll DLL] [--list] [--root TITLE=PART]...
//! pcw-pecheck kernel-constraints SYS PDB [--limit BYTES] [--all] [--root TITLE=PART]...
//! pcw-pecheck strings SYS MANIFEST
//! ```
//!
//! `--root TITLE=PART` (repeatable) replaces the driver's default roots (`pcw_driver`'s entry
//! points) with the functions whose mangled name contains `PART`, reported as `TITLE`: how
//! another driver image, such as the example's, is checked.
//!
//! `no-panic` reports, per root, "panic-free" or the shortest chain to a sink and every call
//! from pcw-rs code into code that reaches one; a root missing from the image fails. `--list`
//! prints every function reachable from each root. `kernel-constraints` reports the frames and
//! chains of the driver's entry points and its floating-point use; `--limit` changes the
//! per-frame limit (1024 bytes), `--all` lists every function's frame. `strings` compares the
//! names and descriptions of a schema 2.0 manifest with the image's `RT_STRING` resources,
//! which `lodctr /m:` reads them from, and names every id missing or different. Exit status 0 when every
//! check holds, 1 when one fails, 2 on bad usage or an unreadable input.
#![forbid(
    unsafe_code,
    reason = "argument parsing and reporting over the library's safe analyses"
)]

use std::process::ExitCode;

use pcw_pecheck::code::{AnalysisError, Program};
use pcw_pecheck::{constraints, nopanic, strings};

const USAGE: &str = "usage: pcw-pecheck no-panic [--driver SYS PDB] [--dll DLL] [--list] \
                     [--root TITLE=PART]...\n       \
                     pcw-pecheck kernel-constraints SYS PDB [--limit BYTES] [--all] \
                     [--root TITLE=PART]...\n       \
                     pcw-pecheck strings SYS MANIFEST";

/// Takes every `--root TITLE=PART` out of `rest`.
fn take_roots<'a>(rest: &mut Vec<&'a str>) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut roots = Vec::new();
    while let Some(i) = rest.iter().position(|a| *a == "--root") {
        let v = rest.get(i + 1).ok_or("--root needs TITLE=PART")?;
        let root = v
            .split_once('=')
            .filter(|(title, part)| !title.is_empty() && !part.is_empty())
            .ok_or_else(|| format!("--root: `{v}` is not TITLE=PART"))?;
        roots.push(root);
        rest.drain(i..i + 2);
    }
    Ok(roots)
}

fn driver(sys: &str, pdb: &str) -> Result<Program, AnalysisError> {
    let mut p = Program::open(sys, false)?;
    p.add_pdb_publics(sys, pdb)?;
    Ok(p)
}

fn run(args: &[String]) -> Result<bool, String> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    let mut rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let flag = |rest: &mut Vec<&str>, f: &str| {
        let had = rest.contains(&f);
        rest.retain(|a| *a != f);
        had
    };
    match cmd.as_str() {
        "no-panic" => {
            let list = flag(&mut rest, "--list");
            let roots = take_roots(&mut rest)?;
            let (mut drv, mut dll) = (None, None);
            let mut it = rest.into_iter();
            while let Some(a) = it.next() {
                match (a, it.next()) {
                    ("--driver", Some(sys)) => {
                        drv = Some((sys, it.next().ok_or("--driver needs SYS and PDB")?));
                    }
                    ("--dll", Some(d)) => dll = Some(d),
                    _ => return Err(format!("unexpected argument `{a}`\n{USAGE}")),
                }
            }
            if drv.is_none() && dll.is_none() {
                return Err(format!("no-panic needs --driver or --dll\n{USAGE}"));
            }
            let mut ok = true;
            if let Some((sys, pdb)) = drv {
                let p = driver(sys, pdb).map_err(|e| e.to_string())?;
                let roots = if roots.is_empty() {
                    nopanic::DRIVER_ROOTS
                } else {
                    &roots[..]
                };
                let r = nopanic::check_driver(&p, roots, list);
                print!("== {sys}\n{r}");
                ok &= r.ok();
            }
            if let Some(d) = dll {
                let p = Program::open(d, true).map_err(|e| e.to_string())?;
                let r = nopanic::check_dll(&p, list);
                print!("== {d}\n{r}");
                ok &= r.ok();
            }
            Ok(ok)
        }
        "kernel-constraints" => {
            let all = flag(&mut rest, "--all");
            let roots = take_roots(&mut rest)?;
            let mut limit = constraints::FRAME_LIMIT;
            if let Some(i) = rest.iter().position(|a| *a == "--limit") {
                let v = rest.get(i + 1).ok_or("--limit needs a number of bytes")?;
                limit = v
                    .parse()
                    .map_err(|_| format!("--limit: `{v}` is not a number of bytes"))?;
                rest.drain(i..i + 2);
            }
            let [sys, pdb] = rest[..] else {
                return Err(format!("kernel-constraints needs SYS and PDB\n{USAGE}"));
            };
            let p = driver(sys, pdb).map_err(|e| e.to_string())?;
            let roots = if roots.is_empty() {
                constraints::ROOTS
            } else {
                &roots[..]
            };
            let r = constraints::check(&p, roots, limit, all).map_err(|e| e.to_string())?;
            print!("== {sys}\n{r}");
            Ok(r.failures.is_empty())
        }
        "strings" => {
            let [sys, manifest] = rest[..] else {
                return Err(format!("strings needs SYS and MANIFEST\n{USAGE}"));
            };
            let image = std::fs::read(sys).map_err(|e| format!("{sys}: {e}"))?;
            let xml = std::fs::read_to_string(manifest).map_err(|e| format!("{manifest}: {e}"))?;
            let found = strings::image_strings(&image).map_err(|e| format!("{sys}: {e}"))?;
            let expected =
                strings::manifest_strings(&xml).map_err(|e| format!("{manifest}: {e}"))?;
            let mismatches = strings::compare(&expected, &found);
            println!("== {sys} against {manifest}");
            for m in &mismatches {
                println!("  FAILED: {m}");
            }
            println!(
                "  {} of the manifest's {} strings in the image's RT_STRING resources",
                expected.len() - mismatches.len(),
                expected.len()
            );
            Ok(mismatches.is_empty())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
