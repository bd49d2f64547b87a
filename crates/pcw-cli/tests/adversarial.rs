// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw` under hostile input and hostile I/O, every subcommand: standard streams whose reader
//! went away or that are full, a disk that fills up mid-write, FIFOs and devices as inputs and
//! outputs, sparse multi-gigabyte files, an output that is an input (by name, hard link or
//! symbolic link), outputs that fail after others were written, and mutated manifests and
//! captures.
//!
//! Every invocation runs under [`run`], which holds the rules for all of them: the process
//! ends by itself within [`TIMEOUT`] (else it is killed and the test fails as a hang), its peak
//! resident memory stays under [`MEMORY_BOUND`] (checked while it runs and from its resource
//! usage at exit), it is not killed by a signal (but one the test sends it, which a command
//! may die of as a shell expects: its status is then read as 128 + the signal's number), and it
//! never exits 101 (a Rust panic). Each
//! test also snapshots its working directory and asserts that no file changed but the declared
//! outputs.
//!
//! A full disk is a file size limit (`RLIMIT_FSIZE`; `SIGXFSZ` keeps its default action, as
//! after `ulimit -f` in a shell, and the command catches it so that the write fails with
//! `EFBIG` as it would with `ENOSPC`): the same failed `write` at the same place, without
//! needing the privileges to mount a small file system. Every child starts with SIGINT,
//! SIGTERM and SIGHUP at their default actions, whatever the test runner inherited (a
//! background job's SIGINT is ignored), but those a test says it starts ignored.

#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The longest any invocation may take.
const TIMEOUT: Duration = Duration::from_secs(60);
/// The most resident memory any invocation may use: the largest input a command reads is a
/// 256 MiB driver image, read once.
const MEMORY_BOUND: u64 = 768 << 20;

/// Where a standard stream goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sink {
    /// A pipe the test reads.
    Capture,
    /// A pipe whose reader is gone: writes fail with `EPIPE`.
    Broken,
    /// `/dev/full`: writes fail with `ENOSPC`.
    Full,
    /// A pipe the test keeps open and never reads: once full, writes wait.
    Stalled,
    /// A file of the working directory, opened for appending (`>> FILE`).
    Append(&'static str),
}

/// How to run `pcw`.
#[derive(Clone, Debug)]
struct Setup {
    dir: PathBuf,
    stdout: Sink,
    stderr: Sink,
    /// `RLIMIT_FSIZE`: the largest file the process may write.
    file_size_limit: Option<u64>,
    /// Signals sent to the process while it runs, each once its time since the start passed.
    signals: Vec<(Duration, i32)>,
    /// Signals the process starts with ignored (`nohup` ignores SIGHUP).
    ignored: Vec<i32>,
}

impl Setup {
    fn in_dir(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            file_size_limit: None,
            signals: Vec::new(),
            ignored: Vec::new(),
        }
    }

    /// Starts the process with `signal` ignored.
    fn ignoring(mut self, signal: i32) -> Self {
        self.ignored.push(signal);
        self
    }

    fn stdout(mut self, sink: Sink) -> Self {
        self.stdout = sink;
        self
    }

    fn stderr(mut self, sink: Sink) -> Self {
        self.stderr = sink;
        self
    }

    fn disk_full_after(mut self, bytes: u64) -> Self {
        self.file_size_limit = Some(bytes);
        self
    }

    /// Sends `signal` once `after` has passed since the start (Ctrl+C is SIGINT).
    fn signal_after(mut self, after: Duration, signal: i32) -> Self {
        self.signals.push((after, signal));
        self
    }
}

/// What an invocation did.
#[derive(Debug)]
struct Ran {
    /// Shown when an assertion fails.
    #[expect(dead_code, reason = "read by Debug in failure messages")]
    args: Vec<String>,
    code: i32,
    stdout: String,
    stderr: String,
    peak_bytes: u64,
    /// From the start to the exit.
    elapsed: Duration,
}

impl Ran {
    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "{self:#?}");
        self
    }

    fn assert_stderr(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "expected {needle:?} on stderr: {self:#?}"
        );
        self
    }
}

fn stdio(sink: Sink, dir: &Path) -> (Stdio, Option<std::io::PipeReader>) {
    match sink {
        // A stalled pipe's reader is held unread ([`held`]), a captured one's drained.
        Sink::Capture | Sink::Stalled => {
            let (reader, writer) = std::io::pipe().unwrap();
            (Stdio::from(writer), Some(reader))
        }
        Sink::Broken => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            (Stdio::from(writer), None)
        }
        Sink::Append(file) => (
            Stdio::from(
                fs::OpenOptions::new()
                    .append(true)
                    .open(dir.join(file))
                    .unwrap(),
            ),
            None,
        ),
        Sink::Full => (
            Stdio::from(
                fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            ),
            None,
        ),
    }
}

/// Whether `setup` sends `signal`: the one way a run may end by a signal.
fn sent(setup: &Setup, signal: i32) -> bool {
    setup.signals.iter().any(|(_, s)| *s == signal)
}

/// A stream's reader split into the one to drain and the one to hold, unread, until the child
/// has ended (a [`Sink::Stalled`] stream's).
fn held(
    sink: Sink,
    reader: Option<std::io::PipeReader>,
) -> (Option<std::io::PipeReader>, Option<std::io::PipeReader>) {
    if sink == Sink::Stalled {
        (None, reader)
    } else {
        (reader, None)
    }
}

fn drain(reader: Option<std::io::PipeReader>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut r) = reader {
            let _ = r.read_to_end(&mut out);
        }
        out
    })
}

/// The peak resident set (`VmHWM`) of a running process.
fn peak_of(pid: i32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What the child does between fork and exec: SIGXFSZ at its default action, which ends a
/// process at the file-size limit as in a shell after `ulimit -f` (the command itself must catch
/// it to fail cleanly); the stop signals at their defaults, but those `setup` starts ignored;
/// and `setup`'s file-size limit.
fn child_setup(cmd: &mut Command, setup: &Setup) {
    let (limit, ignored) = (setup.file_size_limit, setup.ignored.clone());
    let before_exec = move || {
        for signal in [libc::SIGXFSZ, libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let action = if ignored.contains(&signal) {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            // SAFETY: `signal` is async-signal-safe, and affects only this child, between fork
            // and exec.
            unsafe { libc::signal(signal, action) };
        }
        if let Some(limit) = limit {
            let rl = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            // SAFETY: `setrlimit` is async-signal-safe; `rl` lives across the call.
            if unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &raw const rl) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the closure makes only async-signal-safe calls and touches nothing shared (its
    // list of signals was cloned before the fork; `contains` only reads it).
    unsafe { cmd.pre_exec(before_exec) };
}

/// Runs `pcw args` under `setup` and enforces the rules every invocation obeys (module docs).
fn run(setup: &Setup, args: &[&str]) -> Ran {
    // `PCW_BIN` runs another build of the command (the AddressSanitizer one, or an older one
    // to see which of these checks it fails).
    let bin = std::env::var_os("PCW_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_pcw").into());
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(&setup.dir).stdin(Stdio::null());
    let (out, out_reader) = stdio(setup.stdout, &setup.dir);
    let (err, err_reader) = stdio(setup.stderr, &setup.dir);
    cmd.stdout(out).stderr(err);
    child_setup(&mut cmd, setup);
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by `wait4` below, which also gives its status without `Child::wait`"
    )]
    let child = cmd.spawn().unwrap();
    // The pipes' write ends are in the child only now, so the readers see its end.
    drop(cmd);
    let (out_reader, stalled_out) = held(setup.stdout, out_reader);
    let (err_reader, stalled_err) = held(setup.stderr, err_reader);
    let out_thread = drain(out_reader);
    let err_thread = drain(err_reader);
    let pid = i32::try_from(child.id()).unwrap();
    let start = Instant::now();
    let mut peak = 0;
    let mut signals = setup.signals.clone();
    let (status, rusage) = loop {
        let mut status = 0;
        // SAFETY: `rusage` is plain data the call fills in.
        let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our child, not yet reaped; the out-pointers are valid.
        let reaped = unsafe { libc::wait4(pid, &raw mut status, libc::WNOHANG, &raw mut rusage) };
        if reaped == pid {
            break (status, rusage);
        }
        peak = peak.max(peak_of(pid).unwrap_or(0));
        while let Some(&(after, signal)) = signals.first()
            && start.elapsed() >= after
        {
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(pid, signal) };
            signals.remove(0);
        }
        let over = peak > MEMORY_BOUND;
        let late = start.elapsed() > TIMEOUT;
        if over || late {
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            // SAFETY: as above; blocking until it is gone.
            unsafe { libc::wait4(pid, &raw mut status, 0, std::ptr::null_mut()) };
            panic!(
                "`pcw {}` {}",
                args.join(" "),
                if over {
                    format!("used more than {MEMORY_BOUND} bytes of memory")
                } else {
                    format!("did not finish within {TIMEOUT:?} (hang)")
                }
            );
        }
        thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    drop((stalled_out, stalled_err));
    let stdout = String::from_utf8_lossy(&out_thread.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_thread.join().unwrap()).into_owned();
    // `ru_maxrss` would count the test process itself, which the child was forked from;
    // `VmHWM` starts again at exec and is a high-water mark, so polling it misses only what is
    // allocated in the last poll interval before the exit.
    let _ = rusage;
    let peak_bytes = peak;
    let ran = Ran {
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        // Ended by a signal the test sent: the status a shell reports for it, 128 + its number.
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) && sent(setup, libc::WTERMSIG(status)) {
            128 + libc::WTERMSIG(status)
        } else {
            -1
        },
        stdout,
        stderr,
        peak_bytes,
        elapsed,
    };
    assert!(
        libc::WIFEXITED(status) || ran.code > 128,
        "`pcw {}` was killed by signal {}: {ran:#?}",
        args.join(" "),
        libc::WTERMSIG(status)
    );
    assert_ne!(ran.code, 101, "`pcw {}` panicked: {ran:#?}", args.join(" "));
    assert!(
        ran.peak_bytes <= MEMORY_BOUND,
        "`pcw {}` used {} bytes: {ran:#?}",
        args.join(" "),
        ran.peak_bytes
    );
    ran
}

/// Every file under `dir` and its content (for a file over 1 MiB, its size and modification
/// time: the sparse multi-gigabyte inputs are not read).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let meta = entry.metadata().unwrap();
                let content = if meta.len() > 1 << 20 {
                    format!(
                        "{} bytes, modified {:?}",
                        meta.len(),
                        meta.modified().unwrap()
                    )
                    .into_bytes()
                } else {
                    fs::read(&path).unwrap()
                };
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), content);
            } else {
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), Vec::new());
            }
        }
    }
    out
}

/// Asserts that between `before` and now only the files in `outputs` changed (appeared,
/// disappeared or got new content).
fn assert_only_changed(dir: &Path, before: &BTreeMap<PathBuf, Vec<u8>>, outputs: &[&str]) {
    let after = snapshot(dir);
    let mut changed: Vec<&Path> = Vec::new();
    for (path, bytes) in &after {
        if before.get(path) != Some(bytes) {
            changed.push(path);
        }
    }
    for path in before.keys() {
        if !after.contains_key(path) {
            changed.push(path);
        }
    }
    for path in changed {
        assert!(
            outputs.iter().any(|o| Path::new(o) == path),
            "`{}` changed, but it is not a declared output ({outputs:?})",
            path.display()
        );
    }
}

fn repo_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

/// A scratch directory holding the driver's manifest (`m.man`), one with a warning
/// (`warn.man`), a valid capture (`c.perf`) and a counter file (`paths.txt`).
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(
        repo_file("manifest/pcw_driver.man"),
        dir.path().join("m.man"),
    )
    .unwrap();
    // A manifest with a warning every manifest command reports: its root element's name.
    let manifest = fs::read_to_string(repo_file("manifest/pcw_driver.man")).unwrap();
    fs::write(
        dir.path().join("warn.man"),
        manifest.replace("instrumentationManifest", "instrumentationManifestX"),
    )
    .unwrap();
    fs::copy(
        repo_file("crates/pcw-cli/tests/fixtures/two_objects.perf"),
        dir.path().join("c.perf"),
    )
    .unwrap();
    fs::write(
        dir.path().join("paths.txt"),
        "\\Geometric Waves(*)\\Triangle\n",
    )
    .unwrap();
    dir
}

/// Invocations that print to standard output, one per subcommand and form.
const STDOUT_COMMANDS: &[&[&str]] = &[
    &["--help"],
    &["dump", "c.perf"],
    &["dump", "c.perf", "--json"],
    &["gen", "m.man"],
    &["inspect", "m.man"],
    &["inspect", "m.man", "--json"],
    &["export", "m.man", "--to", "otel"],
    &["export", "m.man", "--to", "windows-exporter"],
    &["list"],
    &["list", "--json", "--manifest", "m.man"],
    &[
        "typeperf",
        "\\Geometric Waves(*)\\*",
        "-sc",
        "1",
        "-si",
        "0.01",
    ],
    &["typeperf", "-cf", "paths.txt", "-sc", "1", "-si", "0.01"],
    &["typeperf", "-q"],
    &["typeperf", "-qx", "--manifest", "m.man"],
    &[
        "typeperf",
        "-provider",
        "tidal",
        "\\Tidal Moon\\*",
        "-sc",
        "1",
        "-si",
        "0.01",
    ],
    &["typeperf", "-provider", "tidal", "-q"],
];

#[test]
fn a_standard_output_that_fails_ends_every_command_with_status_1() {
    let dir = workdir();
    let before = snapshot(dir.path());
    for args in STDOUT_COMMANDS {
        let ok = run(&Setup::in_dir(dir.path()), args);
        ok.assert_code(0);
        assert!(!ok.stdout.is_empty(), "{ok:#?}");
        for (sink, why) in [
            (Sink::Broken, "Broken pipe"),
            (Sink::Full, "No space left on device"),
        ] {
            run(&Setup::in_dir(dir.path()).stdout(sink), args)
                .assert_code(1)
                .assert_stderr("error: cannot write to standard output: ")
                .assert_stderr(why);
        }
    }
    assert_only_changed(dir.path(), &before, &[]);
}

/// Invocations that print to standard error on success: diagnostics, typeperf's closing
/// messages, an error.
const STDERR_COMMANDS: &[(&[&str], i32)] = &[
    (&["lint", "warn.man"], 0),
    (&["gen", "warn.man", "-o", "out.rs"], 0),
    (
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "1",
            "-si",
            "0.01",
        ],
        0,
    ),
    (&["typeperf", "-qx"], 0),
    (&["lint", "missing.man"], 1),
    (&["dump", "m.man"], 2),
];

#[test]
fn a_standard_error_that_fails_never_passes_for_success() {
    let dir = workdir();
    for (args, code) in STDERR_COMMANDS {
        let ok = run(&Setup::in_dir(dir.path()), args);
        ok.assert_code(*code);
        assert!(!ok.stderr.is_empty(), "{ok:#?}");
        for sink in [Sink::Broken, Sink::Full] {
            let ran = run(&Setup::in_dir(dir.path()).stderr(sink), args);
            assert_ne!(ran.code, 0, "{ran:#?}");
            if *code != 0 {
                assert_eq!(ran.code, *code, "{ran:#?}");
            }
        }
    }
    // The generation whose warnings could not be printed wrote nothing.
    let _ = fs::remove_file(dir.path().join("out.rs"));
    let before = snapshot(dir.path());
    run(
        &Setup::in_dir(dir.path()).stderr(Sink::Full),
        &["gen", "warn.man", "-o", "out.rs"],
    )
    .assert_code(1);
    assert_only_changed(dir.path(), &before, &[]);
}

#[test]
fn a_disk_that_fills_up_leaves_every_output_as_it_was() {
    let dir = workdir();
    fs::write(
        dir.path().join("out.rs"),
        "// the previous good generation\n",
    )
    .unwrap();
    fs::write(dir.path().join("out.rc"), "// the previous string table\n").unwrap();
    fs::write(dir.path().join("old.csv"), "previous samples\n").unwrap();
    let before = snapshot(dir.path());
    let full = Setup::in_dir(dir.path()).disk_full_after(200);
    for args in [
        &["gen", "m.man", "-o", "out.rs", "--rc", "out.rc"][..],
        &["gen", "m.man", "--rc", "new.rc", "-o", "new.rs"],
        &["export", "m.man", "--to", "otel", "-o", "out.yaml"],
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "3",
            "-si",
            "0.01",
            "-o",
            "new.csv",
        ],
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "3",
            "-si",
            "0.01",
            "-o",
            "old.csv",
            "-y",
        ],
    ] {
        run(&full, args)
            .assert_code(1)
            .assert_stderr("File too large");
        assert_only_changed(dir.path(), &before, &[]);
    }
}

#[test]
fn fifos_and_devices_as_outputs_are_written_and_never_read() {
    let dir = workdir();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        thread::spawn(move || fs::read(fifo).unwrap())
    };
    run(&Setup::in_dir(dir.path()), &["gen", "m.man", "-o", "fifo"]).assert_code(0);
    let read = String::from_utf8(reader.join().unwrap()).unwrap();
    assert!(read.contains("@generated"), "{read}");
    // The generated code through /dev/stdout, a pipe: written once, not read back.
    let ran = run(
        &Setup::in_dir(dir.path()),
        &["gen", "m.man", "-o", "/dev/stdout"],
    );
    ran.assert_code(0);
    assert!(ran.stdout.contains("@generated"));
    // A full device as an output fails, and the other outputs of the command stay unwritten.
    let before = snapshot(dir.path());
    run(
        &Setup::in_dir(dir.path()),
        &["gen", "m.man", "--rc", "x.rc", "-o", "/dev/full"],
    )
    .assert_code(1)
    .assert_stderr("cannot write `/dev/full`: No space left on device");
    run(
        &Setup::in_dir(dir.path()),
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "1",
            "-si",
            "0.01",
            "-o",
            "/dev/full",
        ],
    )
    .assert_code(1)
    .assert_stderr("No space left on device");
    assert_only_changed(dir.path(), &before, &[]);
}

#[test]
fn a_fifo_as_an_input_is_read() {
    let dir = workdir();
    let fifo = dir.path().join("in.man");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let manifest = fs::read(dir.path().join("m.man")).unwrap();
    let writer = thread::spawn(move || {
        let mut f = fs::OpenOptions::new().write(true).open(fifo).unwrap();
        f.write_all(&manifest).unwrap();
    });
    run(&Setup::in_dir(dir.path()), &["lint", "in.man"]).assert_code(0);
    writer.join().unwrap();
}

#[test]
fn devices_and_huge_files_as_inputs_are_refused_within_the_memory_bound() {
    let dir = workdir();
    let sparse = dir.path().join("sparse");
    fs::File::create(&sparse).unwrap().set_len(2 << 30).unwrap();
    // A counter file of one wildcard path repeated (4.4 MB): its lines expand to 1.2 million
    // columns, past what one query takes, and are refused before the columns are made (a
    // 13 MB one took 985 MB before).
    fs::write(
        dir.path().join("many.txt"),
        "\\Geometric Waves(*)\\*\n".repeat(200_000),
    )
    .unwrap();
    fs::write(
        dir.path().join("bad.txt"),
        "\\Geometric Waves(*)\\Triangle\r\n\r\n\\Nope\\x\r\n",
    )
    .unwrap();
    let before = snapshot(dir.path());
    for input in ["/dev/zero", "sparse"] {
        let cases: [(&[&str], i32, &str); 10] = [
            (&["lint", input], 1, "a manifest may have at most 128 MiB"),
            (&["gen", input], 1, "a manifest may have at most 128 MiB"),
            (
                &["inspect", input],
                1,
                "a manifest may have at most 128 MiB",
            ),
            (
                &["export", input, "--to", "otel"],
                1,
                "a manifest may have at most 128 MiB",
            ),
            (
                &["list", "--manifest", input],
                1,
                "a manifest may have at most 128 MiB",
            ),
            (
                &["typeperf", "-q", "--manifest", input],
                1,
                "a manifest may have at most 128 MiB",
            ),
            (
                &["typeperf", "-cf", input],
                1,
                "a counter file may have at most 16 MiB",
            ),
            (
                &["typeperf", "--image", input, "-q"],
                1,
                "a driver image may have at most 256 MiB",
            ),
            (
                &["typeperf", "-qx", "--image", input],
                1,
                "a driver image may have at most 256 MiB",
            ),
            // A sparse capture is refused by its size; /dev/zero by its first bytes.
            if input == "sparse" {
                (&["dump", input], 1, "a capture may have at most 256 MiB")
            } else {
                (
                    &["dump", input],
                    2,
                    "invalid performance data at offset 0 (0x0)",
                )
            },
        ];
        for (args, code, message) in cases {
            let ran = run(&Setup::in_dir(dir.path()), args);
            ran.assert_code(code).assert_stderr(message);
            if input == "sparse" {
                // Refused by its size: nothing of it is read.
                assert!(ran.peak_bytes < 64 << 20, "{ran:#?}");
            }
        }
    }
    for (args, message) in [
        (
            &["lint", "."][..],
            "the manifest is a directory, not a file",
        ),
        (&["dump", "."], "is a directory, not a file"),
        (&["typeperf", "-cf", "."], "is a directory, not a file"),
        (&["lint", "/dev/null"], "does not have a root"),
        (&["typeperf", "-cf", "/dev/null"], "has no counter path"),
        (
            &["typeperf", "-cf", "many.txt", "-sc", "1"],
            "expand to more than 1000000 counters",
        ),
        // A path of the file that fails is named by its line (blank lines counted).
        (
            &["typeperf", "-cf", "bad.txt", "-sc", "1"],
            "error: bad.txt:3: counter path `\\Nope\\x`: unknown object `Nope`",
        ),
    ] {
        run(&Setup::in_dir(dir.path()), args)
            .assert_code(1)
            .assert_stderr(message);
    }
    run(&Setup::in_dir(dir.path()), &["dump", "/dev/null"])
        .assert_code(2)
        .assert_stderr("a PERF_DATA_BLOCK header needs");
    assert_only_changed(dir.path(), &before, &[]);
}

/// A file name, a counter path or an argument holding a line break (or a tab, or a line
/// separator) is quoted on its line: no message of any command starts a line with what
/// follows the break, and the message shows the break as `\u{a}`. A file named like this,
/// checked into a repository, would otherwise let whoever named it forge lines of a CI log.
#[test]
fn file_names_and_arguments_with_line_breaks_stay_on_their_line() {
    let dir = workdir();
    let forged = "x\nforged: error: injected\u{2028}\t.man";
    fs::copy(dir.path().join("warn.man"), dir.path().join(forged)).unwrap();
    let missing = "gone\nforged: error: injected.txt";
    let unwritable = "no\nforged: dir/out.rs";
    let before = snapshot(dir.path());
    for (args, code) in [
        (&["lint", forged][..], 0),
        (&["lint", missing], 1),
        // The service name given, so that the refusal is the output's, not the stem's.
        (&["gen", forged, "--driver-name", "x", "-o", unwritable], 1),
        (&["inspect", missing], 1),
        (&["export", missing, "--to", "otel"], 1),
        (&["dump", missing], 1),
        (&["typeperf", "-cf", missing, "-sc", "1"], 1),
        (&["list", "--manifest", missing], 1),
        (
            &[
                "typeperf",
                "--image",
                missing,
                "\\Geometric Waves(*)\\*",
                "-sc",
                "1",
            ],
            1,
        ),
        (
            &["typeperf", "\\Geometric Waves(a\nforged)\\x", "-sc", "1"],
            1,
        ),
        (&["typeperf", "-sc", "1\nforged"], 1),
        (&["list", "no\nforged*"], 1),
        (
            &[
                "export",
                "m.man",
                "--to",
                "otel",
                "--interval",
                "1s\nforged",
            ],
            1,
        ),
        (&["gen", "m.man", "--module", "m\nforged", "-o", "x.rs"], 1),
        (
            &["gen", "m.man", "--runtime-path", "a\nforged", "-o", "x.rs"],
            1,
        ),
        // An instance name reaches the listing's warnings (a driver names its instances).
        (
            &[
                "typeperf",
                "--sim-queue",
                "q#1\nforged: error: x",
                "-qx",
                "PCW Dynamic Queues",
            ],
            0,
        ),
    ] {
        let ran = run(&Setup::in_dir(dir.path()), args);
        assert!(ran.code == code && !ran.stderr.is_empty(), "{ran:#?}");
        assert!(
            ran.stderr.lines().all(|l| !l.starts_with("forged")),
            "a line forged by a file name: {ran:#?}"
        );
        assert!(
            ran.stderr.contains("\\u{a}forged"),
            "the name's line break shown as \\u{{a}}: {ran:#?}"
        );
    }
    assert_only_changed(dir.path(), &before, &[]);
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = workdir();
    fs::hard_link(dir.path().join("m.man"), dir.path().join("hard.man")).unwrap();
    std::os::unix::fs::symlink("m.man", dir.path().join("soft.man")).unwrap();
    let before = snapshot(dir.path());
    for args in [
        &["gen", "m.man", "-o", "m.man"][..],
        &["gen", "m.man", "--rc", "./m.man"],
        &["gen", "m.man", "--res", "hard.man"],
        &["gen", "m.man", "--ini", "soft.man", "--symbols", "x.h"],
        &[
            "gen",
            "m.man",
            "-o",
            "x.rs",
            "--symbols",
            "m.man",
            "--ini",
            "x.ini",
        ],
        &["export", "m.man", "--to", "otel", "-o", "m.man"],
        &[
            "export",
            "m.man",
            "--to",
            "windows-exporter",
            "-o",
            "soft.man",
        ],
        &[
            "typeperf",
            "-cf",
            "paths.txt",
            "-o",
            "paths.txt",
            "-y",
            "-sc",
            "1",
        ],
        &[
            "typeperf",
            "-cf",
            "paths.txt",
            "-o",
            "./paths.txt",
            "-y",
            "-sc",
            "1",
        ],
    ] {
        run(&Setup::in_dir(dir.path()), args)
            .assert_code(1)
            .assert_stderr("is also an input of this command")
            .assert_stderr("refusing to overwrite it");
    }
    for args in [
        &[
            "gen",
            "m.man",
            "--rc",
            "x.rc",
            "--ini",
            "x.rc",
            "--symbols",
            "x.h",
        ][..],
        &["gen", "m.man", "-o", "y.rs", "--rc", "sub/../y.rs"],
    ] {
        run(&Setup::in_dir(dir.path()), args)
            .assert_code(1)
            .assert_stderr("is named as two outputs");
    }
    // Standard output appended to an input by the shell (`pcw gen m.man >> m.man`): refused
    // at the first write, the input unchanged.
    for (args, input) in [
        (&["gen", "m.man"][..], "m.man"),
        (&["inspect", "m.man"], "m.man"),
        (&["typeperf", "-cf", "paths.txt", "-sc", "1"], "paths.txt"),
    ] {
        run(&Setup::in_dir(dir.path()).stdout(Sink::Append(input)), args)
            .assert_code(1)
            .assert_stderr(&format!(
                "cannot write to standard output: it is `{input}`, an input of this command"
            ));
    }
    assert_only_changed(dir.path(), &before, &[]);
}

#[test]
fn a_generation_whose_last_output_fails_writes_none() {
    let dir = workdir();
    fs::write(dir.path().join("out.rs"), "// previous\n").unwrap();
    let before = snapshot(dir.path());
    run(
        &Setup::in_dir(dir.path()),
        &[
            "gen",
            "m.man",
            "-o",
            "out.rs",
            "--rc",
            "new.rc",
            "--res",
            "new.res",
            "--ini",
            "new.ini",
            "--symbols",
            "missing/dir/new.h",
        ],
    )
    .assert_code(1)
    .assert_stderr("cannot write `missing/dir/new.h`");
    assert_only_changed(dir.path(), &before, &[]);
    // And all of them when every one can be written; a second run changes nothing.
    let args = [
        "gen",
        "m.man",
        "-o",
        "out.rs",
        "--rc",
        "new.rc",
        "--res",
        "new.res",
        "--ini",
        "new.ini",
        "--symbols",
        "new.h",
    ];
    run(&Setup::in_dir(dir.path()), &args).assert_code(0);
    assert_only_changed(
        dir.path(),
        &before,
        &["out.rs", "new.rc", "new.res", "new.ini", "new.h"],
    );
    let written = snapshot(dir.path());
    run(&Setup::in_dir(dir.path()), &args).assert_code(0);
    assert_only_changed(dir.path(), &written, &[]);
}

#[test]
fn typeperf_output_files_follow_typeperf() {
    let dir = workdir();
    fs::write(dir.path().join("existing.csv"), "earlier samples\n").unwrap();
    let before = snapshot(dir.path());
    // A path that does not resolve creates nothing and keeps an existing file, with or
    // without -y.
    for args in [
        &["typeperf", "\\Nope(*)\\*", "-o", "existing.csv", "-sc", "1"][..],
        &[
            "typeperf",
            "\\Nope(*)\\*",
            "-o",
            "existing.csv",
            "-y",
            "-sc",
            "1",
        ],
        &["typeperf", "\\Nope(*)\\*", "-o", "new.csv", "-sc", "1"],
    ] {
        run(&Setup::in_dir(dir.path()), args).assert_code(1);
        assert_only_changed(dir.path(), &before, &[]);
    }
    // An existing file needs -y.
    run(
        &Setup::in_dir(dir.path()),
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-o",
            "existing.csv",
            "-sc",
            "1",
            "-si",
            "0.01",
        ],
    )
    .assert_code(1)
    .assert_stderr("`existing.csv` already exists; add `-y` to overwrite it");
    assert_only_changed(dir.path(), &before, &[]);
    run(
        &Setup::in_dir(dir.path()),
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-o",
            "existing.csv",
            "-y",
            "-sc",
            "1",
            "-si",
            "0.01",
        ],
    )
    .assert_code(0);
    let csv = fs::read_to_string(dir.path().join("existing.csv")).unwrap();
    assert!(csv.contains("(PDH-CSV 4.0)"), "{csv}");
    assert_only_changed(dir.path(), &before, &["existing.csv"]);
}

/// Checks a typeperf CSV or TSV document as a whole: the empty line typeperf starts with, the
/// header tagged for its format, and every row complete (the header's number of fields, each
/// line terminated). Returns the number of sample rows.
fn complete_samples(text: &str, separator: char, tag: &str) -> usize {
    let body = text
        .strip_prefix('\n')
        .unwrap_or_else(|| panic!("no leading empty line: {text:?}"));
    assert!(body.ends_with('\n'), "the last row is cut: {text:?}");
    let rows: Vec<Vec<&str>> = body.lines().map(|l| l.split(separator).collect()).collect();
    assert_eq!(rows[0][0], format!("\"{tag}\""), "{text}");
    for row in &rows {
        assert_eq!(row.len(), rows[0].len(), "a row is incomplete: {text}");
        assert!(
            row.iter()
                .all(|f| f.len() >= 2 && f.starts_with('"') && f.ends_with('"')),
            "{text}"
        );
    }
    rows.len() - 1
}

/// typeperf run until Ctrl+C keeps the samples taken in its `-o` file: so does `pcw typeperf`
/// stopped by SIGINT, SIGTERM or SIGHUP (a closed terminal), and it exits 128 + the signal's
/// number. The file is complete (header and whole rows), replaces the old one, and no
/// temporary file stays beside it.
#[test]
fn an_interrupted_typeperf_keeps_the_samples_taken_in_its_file() {
    for (signal, format, file, tag) in [
        (libc::SIGINT, "CSV", "out.csv", "(PDH-CSV 4.0)"),
        (libc::SIGTERM, "TSV", "out.tsv", "(PDH-TSV 4.0)"),
        // A closed terminal or ssh session.
        (libc::SIGHUP, "CSV", "hup.csv", "(PDH-CSV 4.0)"),
    ] {
        let dir = workdir();
        fs::write(dir.path().join(file), "old\n").unwrap();
        let before = snapshot(dir.path());
        let args = [
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "100",
            "-si",
            "0.1",
            "-o",
            file,
            "-f",
            format,
            "-y",
        ];
        let setup = Setup::in_dir(dir.path()).signal_after(Duration::from_millis(1500), signal);
        let ran = run(&setup, &args);
        ran.assert_code(128 + signal)
            .assert_stderr("Exiting, please wait...")
            .assert_stderr(&format!("samples taken, kept in `{file}`"));
        assert!(ran.stdout.is_empty(), "{ran:#?}");
        assert!(ran.elapsed < Duration::from_secs(8), "{ran:#?}");
        let text = fs::read_to_string(dir.path().join(file)).unwrap();
        let separator = if format == "TSV" { '\t' } else { ',' };
        let rows = complete_samples(&text, separator, tag);
        assert!((1..100).contains(&rows), "{rows} rows: {text}");
        assert!(
            ran.stderr.contains(&format!("{rows} of 100 samples taken")),
            "{ran:#?}"
        );
        // Only the destination changed: no `.out.csv.XXXXXX.tmp` beside it.
        assert_only_changed(dir.path(), &before, &[file]);
    }
}

/// Under `nohup` (SIGHUP ignored at the start) a closed terminal does not stop the run: the
/// signal stays ignored, every sample is taken and the command succeeds.
#[test]
fn a_run_started_with_sighup_ignored_keeps_sampling_through_a_hangup() {
    let dir = workdir();
    let setup = Setup::in_dir(dir.path())
        .ignoring(libc::SIGHUP)
        .signal_after(Duration::from_millis(700), libc::SIGHUP);
    let ran = run(
        &setup,
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "4",
            "-si",
            "0.4",
            "-o",
            "kept.csv",
        ],
    );
    ran.assert_code(0);
    let text = fs::read_to_string(dir.path().join("kept.csv")).unwrap();
    assert_eq!(complete_samples(&text, ',', "(PDH-CSV 4.0)"), 4, "{text}");
}

/// A long interval ends at once on Ctrl+C (the wait between samples is not a plain sleep);
/// a burst of signals, some during the commit, leaves a complete file all the same; and
/// without `-o` the samples on stdout stop cleanly too.
#[test]
fn an_interrupt_ends_a_long_interval_at_once_and_a_burst_of_them_is_harmless() {
    let dir = workdir();
    let before = snapshot(dir.path());
    let mut setup = Setup::in_dir(dir.path());
    for i in 0..40 {
        let signal = if i % 2 == 0 {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        setup = setup.signal_after(Duration::from_millis(1000 + i), signal);
    }
    let ran = run(
        &setup,
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "3",
            "-si",
            "30",
            "-o",
            "new.csv",
        ],
    );
    assert!(matches!(ran.code, 130 | 143), "{ran:#?}");
    assert!(ran.elapsed < Duration::from_secs(10), "{ran:#?}");
    ran.assert_stderr("0 of 3 samples taken, kept in `new.csv`");
    let text = fs::read_to_string(dir.path().join("new.csv")).unwrap();
    assert_eq!(complete_samples(&text, ',', "(PDH-CSV 4.0)"), 0, "{text}");
    assert_only_changed(dir.path(), &before, &["new.csv"]);

    let setup = Setup::in_dir(dir.path()).signal_after(Duration::from_secs(1), libc::SIGINT);
    let ran = run(
        &setup,
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "3",
            "-si",
            "30",
        ],
    );
    ran.assert_code(130)
        .assert_stderr("error: interrupted by SIGINT: 0 of 3 samples taken\n");
    assert!(ran.elapsed < Duration::from_secs(10), "{ran:#?}");
    assert_eq!(
        complete_samples(&ran.stdout, ',', "(PDH-CSV 4.0)"),
        0,
        "{ran:#?}"
    );
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A signal while a command waits where nothing looks at it — opening a FIFO output that has no
/// reader, reading a FIFO input that has no writer, writing to a pipe nobody reads — ends the
/// command with 128 + the signal's number, and leaves no temporary file of its outputs beside
/// the user's files (`gen` had staged three, typeperf its `-o`).
#[test]
fn a_signal_during_a_wait_ends_the_command_and_leaves_no_temporary() {
    let dir = workdir();
    mkfifo(&dir.path().join("out.fifo"));
    mkfifo(&dir.path().join("in.man"));
    let before = snapshot(dir.path());
    let at = |signal| Setup::in_dir(dir.path()).signal_after(Duration::from_millis(700), signal);
    let ran = run(
        &at(libc::SIGINT),
        &[
            "gen",
            "m.man",
            "-o",
            "out.rs",
            "--ini",
            "x.ini",
            "--symbols",
            "x.h",
            "--rc",
            "out.fifo",
        ],
    );
    ran.assert_code(130);
    assert_only_changed(dir.path(), &before, &[]);
    // typeperf's own handler only records the signal for its sampling loop; a FIFO input with
    // no writer, read after `-o`'s file was staged, is a wait that loop never sees.
    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let ran = run(
            &at(signal),
            &["typeperf", "-qx", "--manifest", "in.man", "-o", "list.txt"],
        );
        ran.assert_code(code);
        assert!(ran.elapsed < Duration::from_secs(10), "{ran:#?}");
        assert_only_changed(dir.path(), &before, &[]);
    }
    // Samples written to a pipe nobody reads: the write that fills it waits.
    let ran = run(
        &Setup::in_dir(dir.path())
            .stdout(Sink::Stalled)
            .signal_after(Duration::from_secs(2), libc::SIGTERM),
        &[
            "typeperf",
            "\\Geometric Waves(*)\\*",
            "-sc",
            "1000000",
            "-si",
            "0.001",
        ],
    );
    ran.assert_code(143);
    assert!(ran.elapsed < Duration::from_secs(10), "{ran:#?}");
    assert_only_changed(dir.path(), &before, &[]);
}

/// `pcw new --force` over a directory named through itself (`d/../d`) replaces it, and one
/// that holds the current directory is refused; neither leaves a staged directory behind.
#[test]
fn new_replaces_a_directory_named_through_itself_and_never_the_current_one() {
    let dir = workdir();
    let d = dir.path().join("d");
    fs::create_dir(&d).unwrap();
    fs::write(d.join("old.txt"), "old").unwrap();
    run(
        &Setup::in_dir(dir.path()),
        &["new", "d/../d", "--force", "--manifest", "m.man"],
    )
    .assert_code(0);
    assert!(d.join("Cargo.toml").is_file() && !d.join("old.txt").exists());
    let before = snapshot(dir.path());
    run(&Setup::in_dir(&d), &["new", "../d", "--force"])
        .assert_code(1)
        .assert_stderr("holds the current directory");
    assert_only_changed(dir.path(), &before, &[]);
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".pcw-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// typeperf writes its `-q`/`-qx` listing to `-o FILE` (`typeperf -qx PhysicalDisk -o
/// counters.txt`): the same lines as on stdout, through the same all-or-nothing output, an
/// existing file only with `-y`; options that only sampling uses are refused.
#[test]
fn a_listing_goes_to_its_output_file() {
    let dir = workdir();
    let listed = run(&Setup::in_dir(dir.path()), &["typeperf", "-q"]);
    listed.assert_code(0);
    let before = snapshot(dir.path());
    let ran = run(
        &Setup::in_dir(dir.path()),
        &["typeperf", "-q", "-o", "list.txt"],
    );
    ran.assert_code(0)
        .assert_stderr("The command completed successfully.");
    assert!(ran.stdout.is_empty(), "{ran:#?}");
    assert_eq!(
        fs::read_to_string(dir.path().join("list.txt")).unwrap(),
        listed.stdout
    );
    assert_only_changed(dir.path(), &before, &["list.txt"]);
    let written = snapshot(dir.path());
    run(
        &Setup::in_dir(dir.path()),
        &["typeperf", "-qx", "-o", "list.txt"],
    )
    .assert_code(1)
    .assert_stderr("`list.txt` already exists; add `-y` to overwrite it");
    for args in [
        &["typeperf", "-qx", "-o", "list.txt", "-y", "-sc", "2"][..],
        &["typeperf", "-q", "-si", "1", "-o", "list.txt", "-y"],
        &["typeperf", "-q", "-o", "list.txt", "-y", "-f", "TSV"],
        &["typeperf", "-q", "--raw", "-o", "list.txt", "-y"],
    ] {
        run(&Setup::in_dir(dir.path()), args)
            .assert_code(1)
            .assert_stderr("is for sampling; `-q`/`-qx` list counter paths");
    }
    assert_only_changed(dir.path(), &written, &[]);
    let ran = run(
        &Setup::in_dir(dir.path()),
        &["typeperf", "-qx", "Geometric Waves", "-o", "list.txt", "-y"],
    );
    ran.assert_code(0);
    let text = fs::read_to_string(dir.path().join("list.txt")).unwrap();
    assert!(
        text.starts_with("\\Geometric Waves(Small Wave)\\Triangle\n"),
        "{text}"
    );
    assert_only_changed(dir.path(), &written, &["list.txt"]);
}

/// An instance name with a line break stays on its line of the `-qx` listing, shown as
/// `pcw list` shows it (`\u{a}`), on stdout and in an `-o` file.
#[test]
fn a_forged_instance_name_stays_on_its_listing_line() {
    let dir = workdir();
    let forged = "q#1\nerror: forged line";
    for output in [None, Some("list.txt")] {
        let mut args = vec![
            "typeperf",
            "--sim-queue",
            forged,
            "-qx",
            "PCW Dynamic Queues",
        ];
        if let Some(file) = output {
            args.extend(["-o", file, "-y"]);
        }
        let ran = run(&Setup::in_dir(dir.path()), &args);
        ran.assert_code(0);
        let text = match output {
            Some(file) => fs::read_to_string(dir.path().join(file)).unwrap(),
            None => ran.stdout.clone(),
        };
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "\\PCW Dynamic Queues(q#1\\u{a}error: forged line)\\Packets/sec",
                "\\PCW Dynamic Queues(q#1\\u{a}error: forged line)\\Bytes Total",
                "\\PCW Dynamic Queues(q#1\\u{a}error: forged line)\\Depth",
            ],
            "{ran:#?}"
        );
    }
    let list = run(
        &Setup::in_dir(dir.path()),
        &["list", "--sim-queue", forged, "PCW Dynamic Queues"],
    );
    list.assert_code(0);
    assert!(
        list.stdout
            .contains("\\PCW Dynamic Queues(q#1\\u{a}error: forged line)\\Packets/sec"),
        "{list:#?}"
    );
}

/// Deterministic mutants of `bytes`: cut at evenly spaced points, bytes overwritten, and
/// hostile text spliced in.
fn mutants(bytes: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let len = bytes.len().max(1);
    for i in 0..count {
        let at = usize::try_from(next() % len as u64).unwrap();
        let mut m = bytes.to_vec();
        match i % 4 {
            0 => m.truncate(len * i / count),
            1 => {
                for _ in 0..4 {
                    let at = usize::try_from(next() % len as u64).unwrap();
                    if let Some(b) = m.get_mut(at) {
                        *b = u8::try_from(next() & 0xFF).unwrap();
                    }
                }
            }
            2 => {
                let junk: &[&[u8]] = &[
                    b"&#13;",
                    b"\0",
                    b"\xFF\xFE",
                    b"<!DOCTYPE x>",
                    b"\"'<>&",
                    b"]]>",
                ];
                let piece = junk[i % junk.len()];
                let at = at.min(m.len());
                m.splice(at..at, piece.iter().copied());
            }
            _ => {
                let at = at.min(m.len());
                m.drain(at..(at + 64).min(m.len()));
            }
        }
        out.push(m);
    }
    out
}

#[test]
fn mutated_manifests_never_crash_any_manifest_command() {
    let dir = workdir();
    let sources = [
        "manifest/pcw_driver.man",
        "crates/pcw-gen/tests/manifests/northwind_user.man",
        "crates/pcw-gen/tests/manifests/contoso_v11.man",
    ];
    let mut n = 0;
    for source in sources {
        let bytes = fs::read(repo_file(source)).unwrap();
        for m in mutants(&bytes, 24) {
            let name = format!("mutant{n}.man");
            n += 1;
            fs::write(dir.path().join(&name), &m).unwrap();
            let before = snapshot(dir.path());
            let lint = run(&Setup::in_dir(dir.path()), &["lint", &name]);
            for args in [
                &["gen", &name][..],
                &["inspect", &name, "--json"],
                &["export", &name, "--to", "otel"],
                &["list", "--manifest", &name],
                &["typeperf", "-q", "--manifest", &name],
            ] {
                let ran = run(&Setup::in_dir(dir.path()), args);
                assert!(matches!(ran.code, 0 | 1), "{ran:#?}");
                // What lint refuses, nothing else accepts.
                if lint.code == 1 {
                    assert_eq!(
                        ran.code, 1,
                        "lint refused `{name}` but: {ran:#?}\n{lint:#?}"
                    );
                }
            }
            assert_only_changed(dir.path(), &before, &[]);
        }
    }
}

#[test]
fn mutated_captures_are_refused_by_dump_with_an_offset() {
    let dir = workdir();
    let mut n = 0;
    for fixture in ["two_objects", "multi", "single", "fraction"] {
        let bytes = fs::read(repo_file(&format!(
            "crates/pcw-cli/tests/fixtures/{fixture}.perf"
        )))
        .unwrap();
        for m in mutants(&bytes, 16) {
            let name = format!("mutant{n}.perf");
            n += 1;
            fs::write(dir.path().join(&name), &m).unwrap();
            let ran = run(&Setup::in_dir(dir.path()), &["dump", &name, "--json"]);
            match ran.code {
                0 => assert!(ran.stdout.starts_with('{'), "{ran:#?}"),
                2 => assert!(
                    ran.stderr.contains("invalid performance data at offset"),
                    "{ran:#?}"
                ),
                _ => panic!("{ran:#?}"),
            }
        }
    }
}
