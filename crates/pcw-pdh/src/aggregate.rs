// SPDX-License-Identifier: MIT OR Apache-2.0
//! Aggregation: how a consumer sees an aggregate counterset. A `globalAggregate` set is shown
//! as one instance (no parentheses in its paths) and a `multipleAggregate` set gains a
//! [`TOTAL_INSTANCE`]; their values are the provider's instances combined per counter as the
//! manifest's `aggregate` attribute says (`sum`, `avg`, `min`, `max`; counters without the
//! attribute are summed; `undefined` has no value, a blank cell). Raw values are combined, then
//! cooked, so a summed rate is the rate of the sum. Time and frequency counters named by
//! `perfTimeID`/`perfFreqID` are combined with `max`.

use pcw_gen::model::{Aggregate, Instances};

use pcw_sim::kernel_pcw::Instance;

use crate::TOTAL_INSTANCE;
use crate::catalog::SetInfo;

/// Combines the instances' raw values of one counter as `aggregate` says; `None` for no values
/// or `undefined`. Sums wrap as the counters do; the mean is rounded down.
pub fn combine(aggregate: Aggregate, values: &[u64]) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    match aggregate {
        Aggregate::Sum => Some(values.iter().fold(0u64, |a, v| a.wrapping_add(*v))),
        Aggregate::Avg => {
            let sum: u128 = values.iter().map(|v| u128::from(*v)).sum();
            u64::try_from(sum / values.len() as u128).ok()
        }
        Aggregate::Min => values.iter().copied().min(),
        Aggregate::Max => values.iter().copied().max(),
        Aggregate::Undefined => None,
    }
}

impl SetInfo {
    /// How an aggregate combines counter `id`: `max` for the time and frequency helpers,
    /// otherwise the counter's own attribute, `sum` when it has none.
    pub fn aggregate_of(&self, id: u16) -> Aggregate {
        let is_clock = self
            .counters
            .iter()
            .any(|c| c.perf_time_id == Some(id) || c.perf_freq_id == Some(id));
        if is_clock {
            return Aggregate::Max;
        }
        self.counter(id)
            .and_then(|c| c.aggregate)
            .unwrap_or(Aggregate::Sum)
    }

    /// The instances a consumer sees in a collection of this set: the provider's as they are
    /// for `single` and `multiple` sets, the one combined instance (named `""`) for a global
    /// aggregate, the provider's plus [`TOTAL_INSTANCE`] for a multiple aggregate.
    pub fn consumer_view(&self, mut instances: Vec<Instance>) -> Vec<Instance> {
        match self.instances {
            Instances::Single | Instances::Multiple => instances,
            Instances::GlobalAggregate | Instances::GlobalAggregateHistory => {
                vec![self.combined("", &instances)]
            }
            Instances::MultipleAggregate => {
                let total = self.combined(TOTAL_INSTANCE, &instances);
                instances.push(total);
                instances
            }
        }
    }

    /// Combines the instances' raw values counter by counter into an instance named `name`.
    fn combined(&self, name: &str, instances: &[Instance]) -> Instance {
        let mut ids: Vec<u16> = instances
            .iter()
            .flat_map(|i| i.values.keys().copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let values = ids
            .into_iter()
            .filter_map(|id| {
                let raw: Vec<u64> = instances
                    .iter()
                    .filter_map(|i| i.values.get(&id).copied())
                    .collect();
                combine(self.aggregate_of(id), &raw).map(|v| (id, v))
            })
            .collect();
        Instance {
            name: name.to_owned(),
            id: 0,
            values,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::catalog::tests::contoso;

    /// An instance with the given (counter id, raw value) pairs.
    pub(crate) fn instance(name: &str, values: &[(u16, u64)]) -> Instance {
        Instance {
            name: name.to_owned(),
            id: 0,
            values: values.iter().copied().collect(),
        }
    }

    #[test]
    fn combine_each_way() {
        let v = [7, 2, 9];
        assert_eq!(combine(Aggregate::Sum, &v), Some(18));
        assert_eq!(combine(Aggregate::Avg, &v), Some(6));
        assert_eq!(combine(Aggregate::Min, &v), Some(2));
        assert_eq!(combine(Aggregate::Max, &v), Some(9));
        assert_eq!(combine(Aggregate::Undefined, &v), None);
        assert_eq!(combine(Aggregate::Sum, &[]), None);
        // Sums wrap like the counters; the mean does not overflow.
        assert_eq!(combine(Aggregate::Sum, &[u64::MAX, 2]), Some(1));
        assert_eq!(
            combine(Aggregate::Avg, &[u64::MAX, u64::MAX]),
            Some(u64::MAX)
        );
    }

    #[test]
    fn aggregation_follows_the_manifest() {
        let catalog = contoso("globalAggregate");
        let info = &catalog.sets[catalog.find("Contoso Timers").unwrap()];
        assert_eq!(info.instances, Instances::GlobalAggregate);
        // id 1 avg, 2 max, 3 min, 4 undefined, 5 sum with perfTime 7 / perfFreq 8 (max).
        let a = instance(
            "a",
            &[
                (1, 10),
                (2, 10),
                (3, 10),
                (4, 10),
                (5, 10),
                (7, 900),
                (8, 1000),
            ],
        );
        let b = instance(
            "b",
            &[
                (1, 21),
                (2, 30),
                (3, 2),
                (4, 5),
                (5, 5),
                (7, 1000),
                (8, 1000),
            ],
        );
        let seen = info.consumer_view(vec![a.clone(), b.clone()]);
        assert_eq!(seen.len(), 1);
        let want: BTreeMap<u16, u64> = [(1, 15), (2, 30), (3, 2), (5, 15), (7, 1000), (8, 1000)]
            .into_iter()
            .collect();
        assert_eq!(seen[0].values, want);
        // A multiple aggregate keeps the provider's instances and adds the total.
        let multiple = contoso("multipleAggregate");
        let info = &multiple.sets[multiple.find("Contoso Timers").unwrap()];
        let seen = info.consumer_view(vec![a, b]);
        let names: Vec<&str> = seen.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["a", "b", TOTAL_INSTANCE]);
        assert_eq!(seen[2].values, want);
    }
}
