// SPDX-License-Identifier: MIT OR Apache-2.0
//! Tests that run on both builds of a driver: [`scenario`] runs a test's body on the host build
//! in the test's own process, then on the cross-built image an environment variable names in a
//! child process — the test binary run again for that one test — so that a fault in the image
//! fails that test with the signal's name instead of killing the test runner.

pub use pcw_loader::isolate::{ScenarioFailure, is_child, isolated, run_child};

use crate::driver::Driver;

/// Runs `body` on `host` (the driver's host build) and, when the environment variable
/// `image_var` is set, on the image it names ([`Driver::image_from_env`]) in a child process.
/// `test` is the test's name as the test binary knows it (the function's name for a test at
/// the top of an integration-test file), which the child is asked to run.
///
/// Without `image_var` set, the image part is skipped with a note on stderr.
///
/// # Panics
/// When `body` panics on either build (the child's failure, or the signal that killed it, is
/// the panic message), or the image cannot be read.
pub fn scenario(test: &str, host: &Driver, image_var: &str, body: impl Fn(&Driver)) {
    let image = || match Driver::image_from_env(image_var) {
        Ok(image) => image,
        Err(e) => panic!("{e}"),
    };
    if is_child(test) {
        if let Some(image) = image() {
            body(&image);
        }
        return;
    }
    body(host);
    if image().is_none() {
        eprintln!("note: {image_var} is not set; `{test}` ran on the host build only");
        return;
    }
    isolated(test, || {
        unreachable!("the parent never runs the child's body")
    });
}
