// SPDX-License-Identifier: MIT OR Apache-2.0
//! V1 order: where each base counter goes so that V1 consumers read it.

use std::collections::{HashMap, HashSet};

use pcw_core::counter_type::CounterType;

use crate::model::Counter;

/// The counters in V1 order: manifest order, except that each base counter (the follower a
/// fraction, average or multi-timer names with `baseID`/`multiCounterID`) is moved right after
/// the first counter naming it. A V2 consumer pairs a counter with its base by id, so a
/// manifest may declare the base anywhere; a V1 consumer reads the base from the counter
/// definition that directly follows, so every V1 emitter (descriptors, the perf DLL's tables)
/// takes this order. Bases nobody names stay where they are.
pub(super) fn v1_order(counters: &[Counter]) -> Vec<Counter> {
    let follower = |c: &Counter| {
        c.counter_type.required_follower()?;
        if c.counter_type.required_base() == Some(CounterType::MultiBase) {
            c.multi_counter_id.or(c.base_id)
        } else {
            c.base_id
        }
    };
    let named: HashSet<u16> = counters.iter().filter_map(follower).collect();
    let moved = |c: &Counter| c.counter_type.is_base() && named.contains(&c.id);
    // Id → the first moved counter with it.
    let mut moved_by_id: HashMap<u16, &Counter> = HashMap::new();
    for c in counters.iter().filter(|c| moved(c)) {
        moved_by_id.entry(c.id).or_insert(c);
    }
    let mut out: Vec<Counter> = Vec::with_capacity(counters.len());
    // The ids in `out`.
    let mut placed: HashSet<u16> = HashSet::with_capacity(counters.len());
    for c in counters.iter().filter(|c| !moved(c)) {
        out.push(c.clone());
        placed.insert(c.id);
        if let Some(base) = follower(c)
            && !placed.contains(&base)
            && let Some(b) = moved_by_id.get(&base)
        {
            out.push((*b).clone());
            placed.insert(base);
        }
    }
    // Nothing is lost, whatever the references say.
    for c in counters {
        if placed.insert(c.id) {
            out.push(c.clone());
        }
    }
    out
}
