// SPDX-License-Identifier: MIT OR Apache-2.0
//! What a test's end found wrong: [`Unclean`] lists, one line each, every counterset still
//! registered, instance still open, kernel object or pool block left behind, and every kernel
//! rule broken; [`finish`] tears a kernel down and reports it.

use std::fmt;

use pcw_sim::kernel_pcw::{Kernel, Teardown};

/// Everything a driver or publisher left behind or did wrong, each item named. `Debug` prints
/// the same lines as `Display`, so a test's `unwrap()` shows them as they read.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Unclean {
    /// One line per problem, e.g. ``counterset `Disk Queues` is still registered``.
    pub problems: Vec<String>,
}

impl Unclean {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }

    /// The problems of a kernel's teardown report.
    pub fn add_teardown(&mut self, report: &Teardown) {
        for name in &report.registrations {
            self.problems
                .push(format!("counterset `{name}` is still registered"));
        }
        for name in &report.instances {
            self.problems.push(format!(
                "instance `{name}` (PcwCreateInstance) is still open"
            ));
        }
        for b in &report.bugchecks {
            self.problems
                .push(format!("real PCW would have bugchecked: {b}"));
        }
        for m in &report.misuse {
            self.problems.push(format!("PCW contract broken: {m}"));
        }
    }

    /// `Ok` when nothing was found.
    ///
    /// # Errors
    /// `self`, when it lists a problem.
    pub fn into_result(self) -> Result<(), Self> {
        if self.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for Unclean {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [] => write!(f, "nothing was left behind"),
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} problems:", many.len())?;
                for p in many {
                    write!(f, "\n  - {p}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Debug for Unclean {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Unclean {}

/// Tears `kernel` down and reports what was still registered or open, and what real PCW would
/// have bugchecked on or a provider should not have done.
///
/// ```
/// let kernel = pcw_harness::Kernel::boot(pcw_harness::BUILD_SERVER_2022);
/// pcw_harness::finish(kernel)?;
/// # Ok::<(), pcw_harness::Unclean>(())
/// ```
///
/// # Errors
/// [`Unclean`], naming each problem.
pub fn finish(kernel: Kernel) -> Result<(), Unclean> {
    let mut unclean = Unclean::default();
    unclean.add_teardown(&kernel.teardown());
    unclean.into_result()
}
