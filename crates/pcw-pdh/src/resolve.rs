// SPDX-License-Identifier: MIT OR Apache-2.0
//! Path resolution, in PDH's two steps. [`resolve`] checks every path against the catalog when
//! the counters are added: the computer must be [`MACHINE`], the object a counterset, the
//! counter pattern must match a displayed counter, a set whose paths name no instance takes no
//! `(instance)` and a set with instances needs one. [`expand`] then expands instance wildcards
//! against the instances of the priming collection (typeperf expands once, at start), in PDH's
//! order: counters outer, instances inner. [`masks`] says which counters each set's collection
//! must return.

use std::collections::BTreeMap;

use crate::counter_path::{CounterPath, InstanceIndex, InstanceSpec, wildcard_match};
use crate::{Catalog, Error, MACHINE};

/// A path resolved against the catalog, instances not yet expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    /// The path as given.
    pub path: String,
    /// The path parsed.
    pub parsed: CounterPath,
    /// Index of the set in the catalog.
    pub set: usize,
    /// Indices into the set's counters, in manifest order.
    pub counters: Vec<usize>,
}

/// Which instance of a set a column reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The one instance of a single-instance or global-aggregate set.
    Only,
    /// A named instance (including [`crate::TOTAL_INSTANCE`]).
    Named(String),
}

/// One output column: a counter of an instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Full path, as in typeperf's header: `\\PCW-SIM\Object(Instance)\Counter`.
    pub path: String,
    /// Index of the set in the catalog.
    pub set: usize,
    /// Index of the counter in the set.
    pub counter: usize,
    /// The instance it reads.
    pub target: Target,
}

/// Resolves every path's computer, object and counters (no instance expansion yet).
///
/// # Errors
/// [`Error::Path`], [`Error::UnknownComputer`], [`Error::UnknownObject`],
/// [`Error::UnknownCounter`], [`Error::UnexpectedInstance`], [`Error::MissingInstance`] for
/// the first path that has the problem.
pub fn resolve(catalog: &Catalog, paths: &[String]) -> Result<Vec<Selector>, Error> {
    paths
        .iter()
        .map(|path| resolve_one(catalog, path))
        .collect()
}

fn resolve_one(catalog: &Catalog, path: &str) -> Result<Selector, Error> {
    let parsed = CounterPath::parse(path).map_err(|source| Error::Path {
        path: path.to_owned(),
        source,
    })?;
    if let Some(machine) = &parsed.machine
        && !machine.eq_ignore_ascii_case(MACHINE)
    {
        return Err(Error::UnknownComputer {
            path: path.to_owned(),
            machine: machine.clone(),
        });
    }
    let set = catalog
        .find(&parsed.object)
        .ok_or_else(|| Error::UnknownObject {
            path: path.to_owned(),
            object: parsed.object.clone(),
        })?;
    let info = &catalog.sets[set];
    let counters: Vec<usize> = info
        .counters
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.name
                .as_deref()
                .is_some_and(|name| wildcard_match(&parsed.counter, name))
        })
        .map(|(i, _)| i)
        .collect();
    if counters.is_empty() {
        return Err(Error::UnknownCounter {
            path: path.to_owned(),
            object: info.name.clone(),
            counter: parsed.counter.clone(),
        });
    }
    match (&parsed.instance, info.instances.has_instances()) {
        (Some(_), false) => {
            return Err(Error::UnexpectedInstance {
                path: path.to_owned(),
                object: info.name.clone(),
                instance: parsed.instance_text(),
            });
        }
        (None, true) => {
            return Err(Error::MissingInstance {
                path: path.to_owned(),
                object: info.name.clone(),
            });
        }
        _ => {}
    }
    Ok(Selector {
        path: path.to_owned(),
        parsed,
        set,
        counters,
    })
}

/// The most columns one query expands to. A large server's `\Thread(*)\*` is some tens of
/// thousands; a column costs about 150 bytes before any sample, so the bound keeps a query
/// (a counter file of a few MB repeating a wildcard path, say) under 200 MB.
pub const MAX_COLUMNS: usize = 1_000_000;

/// Expands instance wildcards against the instances the priming collection returned
/// (`primed`: their names as a consumer sees them, by set index); columns in PDH's order.
///
/// # Errors
/// [`Error::NoInstance`] when a path's instance part matches no instance;
/// [`Error::TooManyColumns`] past [`MAX_COLUMNS`].
pub fn expand(
    catalog: &Catalog,
    selectors: &[Selector],
    primed: &BTreeMap<usize, Vec<String>>,
) -> Result<Vec<Column>, Error> {
    // The columns counted before any is made: a query past the bound is refused without
    // building the million columns first.
    let mut total = 0usize;
    for selector in selectors {
        let each = match &selector.parsed.instance {
            None => 1,
            Some(spec) => primed.get(&selector.set).map_or(0, |names| {
                names.iter().filter(|n| instance_matches(spec, n)).count()
            }),
        };
        if each == 0 {
            // The first path that matches nothing is the error, as it was before the count.
            return Err(Error::NoInstance {
                path: selector.path.clone(),
                object: catalog.sets[selector.set].name.clone(),
                instance: selector.parsed.instance_text(),
            });
        }
        total = total.saturating_add(selector.counters.len().saturating_mul(each));
        if total > MAX_COLUMNS {
            return Err(Error::TooManyColumns {
                path: selector.path.clone(),
            });
        }
    }
    let mut columns = Vec::with_capacity(total);
    for selector in selectors {
        let info = &catalog.sets[selector.set];
        let targets: Vec<(Target, Option<String>)> = match &selector.parsed.instance {
            None => vec![(Target::Only, None)],
            Some(spec) => {
                // At least one: the count above refused a path that matches none.
                let names = primed.get(&selector.set).map_or(&[][..], Vec::as_slice);
                names
                    .iter()
                    .filter(|n| instance_matches(spec, n))
                    .map(|n| (Target::Named(n.clone()), Some(n.clone())))
                    .collect()
            }
        };
        for &counter in &selector.counters {
            for (target, instance) in &targets {
                let full = CounterPath {
                    machine: Some(MACHINE.to_owned()),
                    object: info.name.clone(),
                    instance: instance.as_ref().map(|name| InstanceSpec {
                        parent: None,
                        name: name.clone(),
                        index: None,
                    }),
                    counter: info.counters[counter].name.clone().unwrap_or_default(),
                };
                columns.push(Column {
                    path: full.to_string(),
                    set: selector.set,
                    counter,
                    target: target.clone(),
                });
            }
        }
    }
    Ok(columns)
}

/// Whether instance `name` of the priming collection is one `spec` selects. No parent
/// instances in PCW, and names are unique, so only index 0 exists.
fn instance_matches(spec: &InstanceSpec, name: &str) -> bool {
    matches!(
        spec.index,
        None | Some(InstanceIndex::Any | InstanceIndex::Number(0))
    ) && spec.parent.is_none()
        && wildcard_match(&spec.name, name)
}

/// The counter mask each selected set's collection needs: its counters and their helpers (bit
/// *x* for counter id *x*; an id of 64 or above cannot be expressed, so such a set asks for
/// every counter).
pub fn masks(catalog: &Catalog, selectors: &[Selector]) -> BTreeMap<usize, u64> {
    let mut masks = BTreeMap::new();
    for selector in selectors {
        let info = &catalog.sets[selector.set];
        let mask = masks.entry(selector.set).or_insert(0u64);
        for &i in &selector.counters {
            for id in info.counters[i].ids() {
                *mask |= 1u64.checked_shl(u32::from(id)).unwrap_or(u64::MAX);
            }
        }
    }
    masks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::instance;
    use crate::catalog::tests::contoso;
    use crate::cook::SampleTimes;
    use crate::sample::{SetSample, instance_names};
    use pcw_sim::kernel_pcw::Collection;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    fn primed(catalog: &Catalog, set: usize, names: &[&str]) -> BTreeMap<usize, Vec<String>> {
        let collection = Collection {
            instances: names.iter().map(|n| instance(n, &[(5, 1)])).collect(),
            ..Collection::default()
        };
        let sample = SetSample::new(&catalog.sets[set], collection, SampleTimes::default());
        instance_names(&[(set, sample)].into_iter().collect())
    }

    #[test]
    fn resolution_errors() {
        let catalog = contoso("multipleAggregate");
        let err = |path: &str| resolve(&catalog, &args(&[path])).unwrap_err();
        assert!(matches!(err(r"\Nope\*"), Error::UnknownObject { .. }));
        assert!(matches!(
            err(r"\Contoso Timers(*)\Sine"),
            Error::UnknownCounter { .. }
        ));
        assert!(matches!(err(r"Contoso Timers\x"), Error::Path { .. }));
        assert!(matches!(
            err(r"\\OTHER\Contoso Timers(*)\*"),
            Error::UnknownComputer { .. }
        ));
        assert!(matches!(
            err(r"\Contoso History(x)\*"),
            Error::UnexpectedInstance { .. }
        ));
        assert!(matches!(
            err(r"\Contoso Timers\% Busy Time"),
            Error::MissingInstance { .. }
        ));
        assert_eq!(
            err(r"\Contoso History(a (b))\*").to_string(),
            r"counter path `\Contoso History(a (b))\*`: object `Contoso History` is single-instance; remove `(a (b))`"
        );
        // The computer is the simulated one, in any case.
        assert!(resolve(&catalog, &args(&[r"\\pcw-sim\Contoso History\*"])).is_ok());
    }

    #[test]
    fn global_aggregate_paths_have_no_instance() {
        let catalog = contoso("globalAggregate");
        let set = catalog.find("Contoso Timers").unwrap();
        let selectors = resolve(&catalog, &args(&[r"\Contoso Timers\% Busy*"])).unwrap();
        let columns = expand(&catalog, &selectors, &primed(&catalog, set, &["a", "b"])).unwrap();
        let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                r"\\PCW-SIM\Contoso Timers\% Busy Time",
                r"\\PCW-SIM\Contoso Timers\% Busy Time (100ns)"
            ]
        );
        assert!(columns.iter().all(|c| c.target == Target::Only));
        assert!(matches!(
            resolve(&catalog, &args(&[r"\Contoso Timers(_Total)\% Busy Time"])),
            Err(Error::UnexpectedInstance { .. })
        ));
    }

    #[test]
    fn wildcards_expand_counters_outer_instances_inner() {
        let catalog = contoso("multipleAggregate");
        let set = catalog.find("Contoso Timers").unwrap();
        let primed = primed(&catalog, set, &["disk0", "disk1"]);
        let selectors = resolve(&catalog, &args(&[r"\Contoso Timers(*)\% Busy*"])).unwrap();
        let columns = expand(&catalog, &selectors, &primed).unwrap();
        let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                r"\\PCW-SIM\Contoso Timers(disk0)\% Busy Time",
                r"\\PCW-SIM\Contoso Timers(disk1)\% Busy Time",
                r"\\PCW-SIM\Contoso Timers(_Total)\% Busy Time",
                r"\\PCW-SIM\Contoso Timers(disk0)\% Busy Time (100ns)",
                r"\\PCW-SIM\Contoso Timers(disk1)\% Busy Time (100ns)",
                r"\\PCW-SIM\Contoso Timers(_Total)\% Busy Time (100ns)",
            ]
        );
        // `(_total)` in any case selects the aggregate; `#0` is the one copy of a name.
        for spec in ["_total", "disk1#0"] {
            let path = format!(r"\Contoso Timers({spec})\% Busy Time");
            let selectors = resolve(&catalog, &[path]).unwrap();
            assert_eq!(expand(&catalog, &selectors, &primed).unwrap().len(), 1);
        }
        for spec in ["tape*", "disk1#1", "parent/disk0"] {
            let path = format!(r"\Contoso Timers({spec})\% Busy Time");
            let selectors = resolve(&catalog, &[path]).unwrap();
            assert!(
                matches!(
                    expand(&catalog, &selectors, &primed),
                    Err(Error::NoInstance { .. })
                ),
                "{spec}"
            );
        }
        // A million columns and more are refused; a path matching nothing before them is
        // still the error reported.
        let wide = vec![r"\Contoso Timers(*)\*".to_owned(); MAX_COLUMNS / 8];
        let selectors = resolve(&catalog, &wide).unwrap();
        assert!(matches!(
            expand(&catalog, &selectors, &primed),
            Err(Error::TooManyColumns { .. })
        ));
        let mut first_matches_nothing = vec![r"\Contoso Timers(tape*)\% Busy Time".to_owned()];
        first_matches_nothing.extend(wide);
        let selectors = resolve(&catalog, &first_matches_nothing).unwrap();
        assert!(matches!(
            expand(&catalog, &selectors, &primed),
            Err(Error::NoInstance { .. })
        ));
    }

    #[test]
    fn masks_cover_counters_and_their_helpers() {
        let catalog = contoso("multipleAggregate");
        let set = catalog.find("Contoso Timers").unwrap();
        // `% Object Busy` (id 5) reads its time and frequency from ids 7 and 8.
        let selectors = resolve(&catalog, &args(&[r"\Contoso Timers(*)\% Object Busy"])).unwrap();
        assert_eq!(
            masks(&catalog, &selectors),
            [(set, (1 << 5) | (1 << 7) | (1 << 8))]
                .into_iter()
                .collect()
        );
    }
}
