// SPDX-License-Identifier: MIT OR Apache-2.0
//! The requests PDH and typeperf send a counterset, run against a driver's: [`answers`]
//! collects it unfiltered, then once per instance (of a large set, [`ASKED`] of them, the first
//! and last among them) by its id, by its name in another case, by
//! a `*` wildcard after its first character and by a `?` wildcard for its first, then with a
//! mask that matches nothing (but for a single-instance set, whose one instance has no name)
//! and with a counter mask of each counter alone (each below 64: the mask's bits). Every callback
//! must succeed and leave out no instance the request selects (its consumer would lose it);
//! with [`Filtering::Exact`] it must also add none the request excludes (PCW drops them, but a
//! callback that says it filters did the work for nothing — pcw-rt's filters exactly). The
//! first request that fails is named, with what it got.
//!
//! A callback that matches masks exactly and case-sensitively, or that ignores `InstanceId`,
//! passes a test that sends only `*`; it does not pass this.

use std::fmt;

use pcw_sim::kernel_pcw::{Collection, Instance, Kernel, Request};

/// What a callback does with `InstanceId` and `InstanceMask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filtering {
    /// It adds exactly the instances the request selects (pcw-rt's callback does).
    Exact,
    /// It may add instances the request excludes and leave them to PCW's own filter, as the
    /// documentation of `PCW_CALLBACK` allows; it must still add every one it selects.
    LeftToPcw,
}

/// The first request a counterset answered wrong, and how.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("counterset `{set}`, {request}: {problem}")]
pub struct Misanswered {
    /// The counterset.
    pub set: String,
    /// The request, in words (`InstanceMask "q*"`, `InstanceId 7`, …).
    pub request: String,
    /// What was wrong with the answer.
    pub problem: String,
}

impl fmt::Debug for Misanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Runs the requests of the module docs against counterset `set` of `kernel`, whose callback
/// filters as `filtering` says; the number of requests made.
///
/// ```
/// use pcw_harness::requests::{Filtering, answers};
///
/// let kernel = pcw_harness::Kernel::boot(pcw_harness::BUILD_SERVER_2022);
/// // In a driver's test, after `register` or `DriverEntry`:
/// // answers(&kernel, "Disk Queues", Filtering::Exact)?;
/// assert!(answers(&kernel, "No Such Set", Filtering::Exact).is_err());
/// pcw_harness::finish(kernel)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Misanswered`], naming the first request answered wrong (a counterset that is not
/// registered is one).
pub fn answers(kernel: &Kernel, set: &str, filtering: Filtering) -> Result<usize, Misanswered> {
    let asker = Asker {
        kernel,
        set,
        filtering,
    };
    let all = asker.ask(&Request::default(), "InstanceMask \"*\"")?;
    let mut made = 1;
    for instance in sample(&all.instances) {
        let by_id = Request {
            instance_id: instance.id,
            ..Request::default()
        };
        asker.ask_for(
            &by_id,
            &format!("InstanceId {}", instance.id),
            &instance.name,
        )?;
        made += 1;
        for mask in masks(&instance.name) {
            let words = format!("InstanceMask {mask:?}");
            let request = Request {
                instance_mask: Some(mask),
                ..Request::default()
            };
            asker.ask_for(&request, &words, &instance.name)?;
            made += 1;
        }
    }
    // A single-instance set's one instance has no name for a mask to match or miss: PDH
    // sends it none but `*`.
    if !matches!(all.instances.as_slice(), [only] if only.name.is_empty()) {
        let words = "a mask that matches no instance";
        let nothing = Request {
            instance_mask: Some("\u{1}no instance is named this\u{1}".to_owned()),
            ..Request::default()
        };
        let got = asker.ask(&nothing, words)?;
        if !got.instances.is_empty() {
            return Err(asker.fail(
                words,
                format!("instances in the answer: {:?}", got.instances),
            ));
        }
        made += 1;
    }
    let ids: std::collections::BTreeSet<u16> = all
        .instances
        .iter()
        .flat_map(|i| i.values.keys().copied())
        .collect();
    for id in ids.into_iter().filter(|id| *id < 64) {
        let words = format!("CounterMask of counter {id} alone");
        let request = Request {
            counter_mask: 1 << id,
            ..Request::default()
        };
        asker.ask(&request, &words)?;
        made += 1;
    }
    Ok(made)
}

/// One counterset's requests and what is wrong with their answers.
struct Asker<'a> {
    kernel: &'a Kernel,
    set: &'a str,
    filtering: Filtering,
}

impl Asker<'_> {
    fn fail(&self, request: &str, problem: String) -> Misanswered {
        Misanswered {
            set: self.set.to_owned(),
            request: request.to_owned(),
            problem,
        }
    }

    /// The collection `request` (`words` says it) gets, if the callback succeeded, added
    /// nothing it excludes (as [`Filtering`] says) and left out nothing it selects.
    fn ask(&self, request: &Request, words: &str) -> Result<Collection, Misanswered> {
        let c = self
            .kernel
            .collect(self.set, request)
            .map_err(|e| self.fail(words, e.to_string()))?;
        if let Some(status) = c.statuses.iter().find(|s| **s < 0) {
            return Err(self.fail(
                words,
                format!(
                    "the callback failed with NTSTATUS {:#010X}{}",
                    status.cast_unsigned(),
                    status_hint(*status)
                ),
            ));
        }
        if self.filtering == Filtering::Exact && !c.unfiltered.is_empty() {
            return Err(self.fail(
                words,
                format!(
                    "the callback added instances it excludes: {:?}",
                    c.unfiltered
                ),
            ));
        }
        if !c.missing.is_empty() {
            return Err(self.fail(
                words,
                format!(
                    "the callback left out instances it selects: {:?}",
                    c.missing
                ),
            ));
        }
        Ok(c)
    }

    /// As [`Asker::ask`], and the instance named `name` is in the answer.
    fn ask_for(&self, request: &Request, words: &str, name: &str) -> Result<(), Misanswered> {
        let got = self.ask(request, words)?;
        if got.instances.iter().any(|i| i.name == name) {
            Ok(())
        } else {
            Err(self.fail(words, format!("instance `{name}` is not in the answer")))
        }
    }
}

/// What a failing status of a callback most likely means, for the statuses PCW's routines
/// return (a callback usually passes on what `PcwAddInstance` said).
fn status_hint(status: i32) -> &'static str {
    match status.cast_unsigned() {
        0xC000_0206 => {
            " (STATUS_INVALID_BUFFER_SIZE: PcwAddInstance refused a data block shorter than the \
             counters registered read; the kernel's teardown names the instance and counter)"
        }
        0xC000_00F0 => " (STATUS_INVALID_PARAMETER_2: PcwAddInstance refused the instance's name)",
        0xC000_0001 => " (STATUS_UNSUCCESSFUL)",
        _ => "",
    }
}

/// How many instances of a set are asked for one by one, at most: each costs a few
/// collections of the whole set, so a set of thousands would take minutes.
pub const ASKED: usize = 16;

/// The instances asked for one by one: all of a small set; of a larger one the first, the last
/// and others evenly spaced between, [`ASKED`] in all.
fn sample(instances: &[Instance]) -> impl Iterator<Item = &Instance> {
    let n = instances.len();
    let step = n.div_ceil(ASKED).max(1);
    instances
        .iter()
        .enumerate()
        .filter(move |(i, _)| i % step == 0 || *i + 1 == n)
        .map(|(_, instance)| instance)
}

/// The masks a name is asked for by: the name with its ASCII letters in the other case, its
/// first character then `*`, and then the rest after one `?` for each UTF-16 unit of its first
/// character (PCW's `?` matches one unit). None for the empty name of a single-instance set.
fn masks(name: &str) -> Vec<String> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Vec::new();
    };
    let rest = chars.as_str();
    let question = "?".repeat(first.len_utf16());
    let swapped: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    vec![swapped, format!("{first}*"), format!("{question}{rest}")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masks_change_case_and_use_each_wildcard() {
        assert_eq!(masks("Disk q0"), ["dISK Q0", "D*", "?isk q0"]);
        assert_eq!(masks("\u{1d538}q"), ["\u{1d538}Q", "\u{1d538}*", "??q"]);
        assert!(masks("").is_empty());
    }

    #[test]
    fn a_large_set_is_sampled_with_its_first_and_last_instance() {
        let instance = |id| Instance {
            name: format!("q{id}"),
            id,
            values: std::collections::BTreeMap::new(),
        };
        for n in [0, 1, 15, 16, 17, 1000] {
            let all: Vec<Instance> = (0..n).map(instance).collect();
            let ids: Vec<u32> = sample(&all).map(|i| i.id).collect();
            assert!(
                ids.len() <= ASKED + 1 && ids.len() <= all.len(),
                "{n}: {ids:?}"
            );
            if n <= 16 {
                assert_eq!(ids.len(), all.len());
            } else {
                assert_eq!((ids[0], ids[ids.len() - 1]), (0, n - 1));
            }
        }
    }
}
