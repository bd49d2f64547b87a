// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scenarios in child processes. A fault in mapped driver code kills the process it runs in, so
//! each scenario that runs the image runs in a child: the test binary re-runs itself for that
//! one test, and the parent turns the child's end into a result that names the scenario and,
//! for a fault, the signal.

use std::process::Command;

/// Set in the child to the name of the scenario it runs.
pub const SCENARIO_ENV: &str = "PCW_LOADER_SCENARIO";

/// How a scenario's child process ended badly.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioFailure {
    /// Killed by a signal: a fault in the image (or in the loader).
    #[error(
        "scenario `{scenario}` was killed by {signal} (signal {number}): a fault while running the image\n--- its output ---\n{output}"
    )]
    Signal {
        /// Test name.
        scenario: String,
        /// Signal name.
        signal: &'static str,
        /// Signal number.
        number: i32,
        /// What it printed.
        output: String,
    },
    /// Stopped by the loader ([`crate::ntos::STOP_EXIT_CODE`]): the image did something the
    /// loader cannot continue from, named in the first line.
    #[error(
        "scenario `{scenario}` was stopped by the loader: {reason}\n--- its output ---\n{output}"
    )]
    Stopped {
        /// Test name.
        scenario: String,
        /// What the loader said (the text after `pcw-loader: stopped: `).
        reason: String,
        /// What it printed.
        output: String,
    },
    /// Exited non-zero: an assertion failed.
    #[error("scenario `{scenario}` failed (exit code {code})\n--- its output ---\n{output}")]
    Failed {
        /// Test name.
        scenario: String,
        /// Exit code.
        code: i32,
        /// What it printed.
        output: String,
    },
    /// Ran no test: the name does not match a test of this binary.
    #[error("scenario `{0}` is not a test of this binary (the child ran nothing)")]
    NotFound(String),
    /// The child could not be started.
    #[error("could not start scenario `{0}`: {1}")]
    Spawn(String, std::io::Error),
}

fn signal_name(n: i32) -> &'static str {
    match n {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGILL => "SIGILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGKILL => "SIGKILL",
        _ => "a signal",
    }
}

/// Whether this process is the child running `scenario`.
pub fn is_child(scenario: &str) -> bool {
    std::env::var(SCENARIO_ENV).is_ok_and(|s| s == scenario)
}

/// Runs the test `scenario` of the current test binary in a child process and returns what it
/// printed.
///
/// # Errors
/// [`ScenarioFailure`].
pub fn run_child(scenario: &str) -> Result<String, ScenarioFailure> {
    use std::os::unix::process::ExitStatusExt;

    let exe = std::env::current_exe().map_err(|e| ScenarioFailure::Spawn(scenario.into(), e))?;
    let out = Command::new(exe)
        .args([
            scenario,
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "--include-ignored",
        ])
        .env(SCENARIO_ENV, scenario)
        .output()
        .map_err(|e| ScenarioFailure::Spawn(scenario.into(), e))?;
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(number) = out.status.signal() {
        return Err(ScenarioFailure::Signal {
            scenario: scenario.into(),
            signal: signal_name(number),
            number,
            output,
        });
    }
    if out.status.code() == Some(crate::ntos::STOP_EXIT_CODE)
        && let Some(reason) = output.lines().find_map(|l| {
            l.split_once("pcw-loader: stopped: ")
                .map(|(_, reason)| reason)
        })
    {
        return Err(ScenarioFailure::Stopped {
            scenario: scenario.into(),
            reason: reason.to_owned(),
            output,
        });
    }
    if !out.status.success() {
        return Err(ScenarioFailure::Failed {
            scenario: scenario.into(),
            code: out.status.code().unwrap_or(-1),
            output,
        });
    }
    if !output.contains("1 passed") {
        return Err(ScenarioFailure::NotFound(scenario.into()));
    }
    Ok(output)
}

/// The bytes of the image the environment variable `var` names (a relative path is taken from
/// the workspace root, where the test command runs), or `None`, with a note saying which
/// scenarios are skipped, when `var` is not set.
///
/// # Panics
/// When `var` names a file that cannot be read (a test setting).
pub fn image_from_env(var: &str) -> Option<Vec<u8>> {
    let Some(path) = std::env::var_os(var) else {
        eprintln!("note: {var} is not set; the scenarios of that image are skipped");
        return None;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match std::fs::read(root.join(&path)) {
        Ok(bytes) => Some(bytes),
        Err(e) => panic!("{var}={}: {e}", path.to_string_lossy()),
    }
}

/// Runs `body` with the image `var` names ([`image_from_env`]) in a child process named after
/// the scenario ([`isolated`]); does nothing when `var` is not set.
///
/// # Panics
/// As [`image_from_env`] and [`isolated`].
pub fn image_scenario(var: &str, scenario: &str, body: impl FnOnce(Vec<u8>)) {
    let Some(bytes) = image_from_env(var) else {
        return;
    };
    isolated(scenario, || body(bytes));
}

/// In the child for `scenario`, runs `body`; in the parent, runs the child and panics with the
/// failure, naming the scenario and any signal. What the child prints from `figure:` on
/// is repeated by the parent (visible with `--nocapture`).
///
/// # Panics
/// In the parent, with the [`ScenarioFailure`] when the child does not pass.
pub fn isolated(scenario: &str, body: impl FnOnce()) {
    if is_child(scenario) {
        body();
        return;
    }
    match run_child(scenario) {
        Ok(output) => {
            // The harness prints `test NAME ... ` before the test's own output, on one line.
            for line in output
                .lines()
                .filter_map(|l| l.find("figure:").map(|i| &l[i..]))
            {
                println!("{scenario}: {line}");
            }
        }
        Err(e) => panic!("{e}"),
    }
}

/// Maps `bytes` and runs the image's `DriverEntry`, which must succeed: how every scenario
/// starts.
///
/// # Panics
/// When the image does not map, an import does not bind, or `DriverEntry` fails.
pub fn start(bytes: &[u8]) -> crate::LoadedDriver {
    let driver = crate::LoadedDriver::load(bytes).expect("the image maps and every import binds");
    assert_eq!(driver.entry(), 0, "DriverEntry succeeds");
    driver
}

/// Runs the image's `DriverUnload`, then checks what a clean unload leaves: no pool, device,
/// link or other kernel object ([`crate::ntos::leaks`]), no kernel rule broken
/// ([`crate::ntos::violations`]), no counterset still registered, and a simulated PCW with
/// nothing outstanding at teardown.
///
/// # Panics
/// On the first of those that does not hold, naming it.
pub fn stop(driver: &crate::LoadedDriver, kernel: pcw_sim::kernel_pcw::Kernel) {
    assert!(driver.unload(), "DriverEntry set DriverUnload");
    let leaks = crate::ntos::leaks();
    assert!(leaks.is_empty(), "left behind at unload: {leaks:?}");
    let violations = crate::ntos::violations();
    assert!(
        violations.is_empty(),
        "contract violations: {violations:#?}"
    );
    let registered = kernel.countersets();
    assert!(registered.is_empty(), "still registered: {registered:?}");
    let teardown = kernel.teardown();
    assert!(
        teardown.is_clean(),
        "simulated PCW at teardown: {teardown:?}"
    );
}
