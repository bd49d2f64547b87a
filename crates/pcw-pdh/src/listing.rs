// SPDX-License-Identifier: MIT OR Apache-2.0
//! Listing counter paths, as `typeperf -q`/`-qx` and `Get-Counter -ListSet` do: without
//! instances (`\Object(*)\Counter`, or `\Object\Counter` for sets whose paths name no
//! instance), or one path per live instance (counters outer, instances inner, `_Total` last for
//! a `multipleAggregate` set), with warnings about instance names PDH or the exporters
//! mishandle. Helper counters without a name are never listed.

use pcw_sim::kernel_pcw::{Kernel, Request};

use pcw_gen::model::Instances;
use pcw_gen::text::visible;

use crate::catalog::{Catalog, SetInfo};
use crate::counter_path::CounterPath;
use crate::{Error, TOTAL_INSTANCE};

/// The instances a consumer lists for `set` right now (PDH's `PdhEnumObjectItems`): the
/// provider's instances from `PcwCallbackEnumerateInstances`, plus [`TOTAL_INSTANCE`] for a
/// `multipleAggregate` set; empty for sets whose paths name no instance.
///
/// # Errors
/// [`Error::Sim`] when the set is not registered.
pub fn live_instances(kernel: &Kernel, set: &SetInfo) -> Result<Vec<String>, Error> {
    if !set.instances.has_instances() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = kernel
        .enumerate(&set.name, &Request::default())?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    if set.instances == Instances::MultipleAggregate {
        names.push(TOTAL_INSTANCE.to_owned());
    }
    Ok(names)
}

/// The paths of one set: without instances (`(*)` for sets with instances) when `instances`
/// is `None`, else one per counter and instance, counters outer (as sampling expands them).
pub fn set_paths(set: &SetInfo, instances: Option<&[String]>) -> Vec<String> {
    let mut paths = Vec::new();
    for name in set.counters.iter().filter_map(|c| c.name.as_deref()) {
        match (set.instances.has_instances(), instances) {
            (false, _) => paths.push(CounterPath::listed(&set.name, None, name)),
            (true, None) => paths.push(CounterPath::listed(&set.name, Some("*"), name)),
            (true, Some(list)) => {
                for instance in list {
                    paths.push(CounterPath::listed(&set.name, Some(instance), name));
                }
            }
        }
    }
    paths
}

/// Warnings about run-time instance names (PDH path characters, the exporters' `_Total` rule,
/// duplicates), one line each.
pub fn instance_warnings(set: &SetInfo, instances: &[String]) -> Vec<String> {
    let mut warnings = Vec::new();
    for name in instances.iter().filter(|n| n.as_str() != TOTAL_INSTANCE) {
        for issue in pcw_gen::fleet::instance_name_issues(name) {
            warnings.push(format!(
                "instance `{}` of `{}`: {issue}",
                visible(name),
                visible(&set.name)
            ));
        }
    }
    for dup in pcw_gen::fleet::duplicate_instances(instances.iter().map(String::as_str)) {
        warnings.push(format!(
            "instance `{}` of `{}` appears more than once: PDH numbers the copies `#1`, `#2` and exporters merge or drop them",
            visible(&dup),
            visible(&set.name)
        ));
    }
    warnings
}

/// The listing of one set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetListing {
    /// Its paths, in order.
    pub paths: Vec<String>,
    /// Warnings about its live instance names.
    pub warnings: Vec<String>,
}

/// `-q`/`-qx`: the paths of the set `object` names (any case) or of every set, one set at a
/// time. With `instances` and a kernel, the live instances are listed; without a kernel (a
/// manifest) instance names are unknown, so `(*)` paths are listed as without `instances`.
///
/// # Errors
/// [`Error::NoObject`] at once; an enumeration's [`Error::Sim`] in the item of its set.
pub fn list<'a>(
    kernel: Option<&'a Kernel>,
    catalog: &'a Catalog,
    object: Option<&str>,
    instances: bool,
) -> Result<impl Iterator<Item = Result<SetListing, Error>> + 'a, Error> {
    let sets = catalog.select(object)?;
    Ok(sets.into_iter().map(move |set| {
        let (live, warnings) = match kernel {
            Some(kernel) if instances => {
                let live = live_instances(kernel, set)?;
                let warnings = instance_warnings(set, &live);
                (Some(live), warnings)
            }
            _ => (None, Vec::new()),
        };
        Ok(SetListing {
            paths: set_paths(set, live.as_deref()),
            warnings,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::tests::contoso;

    #[test]
    fn q_on_a_manifest() {
        let catalog = contoso("multipleAggregate");
        let listed: Vec<SetListing> = list(None, &catalog, None, true)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(listed.iter().all(|s| s.warnings.is_empty()));
        let lines: Vec<String> = listed.into_iter().flat_map(|s| s.paths).collect();
        assert!(!lines.is_empty());
        // Instance names are run-time values: from a manifest `-qx` lists `(*)`; the
        // single-instance set has no instance part at all.
        assert_eq!(lines[0], r"\Contoso Timers(*)\% Busy Time");
        assert!(
            lines.contains(&r"\Contoso History\Resets".to_owned()),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .all(|l| l.contains("(*)") != l.starts_with(r"\Contoso History\")),
            "{lines:?}"
        );
        assert!(matches!(
            list(None, &catalog, Some("Nope"), false).map(|_| ()),
            Err(Error::NoObject { .. })
        ));
    }

    #[test]
    fn paths_with_instances_end_with_the_total() {
        let catalog = contoso("multipleAggregate");
        let set = &catalog.sets[catalog.find("Contoso Timers").unwrap()];
        let live = ["disk0".to_owned(), TOTAL_INSTANCE.to_owned()];
        assert_eq!(
            set_paths(set, Some(&live))[..2],
            [
                r"\Contoso Timers(disk0)\% Busy Time",
                r"\Contoso Timers(_Total)\% Busy Time"
            ]
        );
    }

    #[test]
    fn instance_names_pdh_mishandles_are_warned_about() {
        let catalog = contoso("multipleAggregate");
        let set = &catalog.sets[catalog.find("Contoso Timers").unwrap()];
        let names = ["a#1".to_owned(), "b".to_owned(), "B".to_owned()];
        let warnings = instance_warnings(set, &names);
        assert_eq!(
            warnings[0],
            "instance `a#1` of `Contoso Timers`: `#` in the name: PDH reads `#n` as a duplicate-instance index"
        );
        assert!(
            warnings.last().unwrap().contains("appears more than once"),
            "{warnings:?}"
        );
    }
}
