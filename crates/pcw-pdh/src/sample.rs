// SPDX-License-Identifier: MIT OR Apache-2.0
//! Sampling, in typeperf's order: a [`Sampler`] resolves the paths, tells every sampled set
//! `PcwCallbackAddCounter` with the counters the query needs (PDH does this when a counter is
//! added), collects once — the *priming* collection — and expands instance wildcards against
//! it; then each [`Sampler::sample`] collects every set and cooks every column from the
//! previous and this collection ([`RawSample::for_counter`], [`cook`] with typeperf's
//! [`FORMAT_FLAGS`]). Because of the priming collection the first row already shows rates. A
//! value that cannot be computed (instance gone, negative delta, zero interval) is `None`.
//! [`Sampler::stop`] sends `PcwCallbackRemoveCounter` for every set, and a sampler that fails
//! to start removes what it added.
//!
//! Collections come from a [`Source`]: the simulated kernel's PCW ([`Kernel`]) or the simulated
//! Perflib's user-mode providers ([`UserMode`]); everything after the collection is shared.

use std::collections::BTreeMap;

use crate::cook::{RawSample, SampleTimes, cook, timebase};
use pcw_sim::kernel_pcw::{
    BOOT_SYSTEM_TIME, Collection, Instance, Kernel, PERF_FREQUENCY, Request,
};

use pcw_gen::model::Instances;

use crate::catalog::{CounterInfo, SetInfo};
use crate::csv::FORMAT_FLAGS;
use crate::resolve::{Column, Target, expand, masks, resolve};
use crate::{Catalog, Error};

/// Where collections come from: the simulated kernel's PCW or the simulated Perflib's
/// user-mode providers.
pub trait Source {
    /// Tells the provider a consumer added (`add`) or removed the counters of `mask`.
    ///
    /// # Errors
    /// The set is not registered.
    fn notify(&self, set: &SetInfo, add: bool, mask: u64) -> Result<(), Error>;

    /// Collects one set.
    ///
    /// # Errors
    /// The set is not registered.
    fn collect(&self, set: &SetInfo, request: &Request) -> Result<Collection, Error>;
}

impl Source for Kernel {
    fn notify(&self, set: &SetInfo, add: bool, mask: u64) -> Result<(), Error> {
        Kernel::notify(self, &set.name, add, mask)?;
        Ok(())
    }

    fn collect(&self, set: &SetInfo, request: &Request) -> Result<Collection, Error> {
        Ok(Kernel::collect(self, &set.name, request)?)
    }
}

/// User-mode providers under the simulated Perflib ([`pcw_sim::usermode`]), found by counterset
/// GUID.
#[derive(Clone, Copy, Debug, Default)]
pub struct UserMode;

impl Source for UserMode {
    fn notify(&self, set: &SetInfo, add: bool, mask: u64) -> Result<(), Error> {
        // Perflib sends `PERF_ADD_COUNTER`/`PERF_REMOVE_COUNTER` per counter.
        for c in &set.counters {
            let wanted = 1u64
                .checked_shl(u32::from(c.id))
                .is_none_or(|bit| mask & bit != 0);
            if wanted && pcw_sim::usermode::notify(set.guid, add, u32::from(c.id)).is_none() {
                return Err(Error::NotRunning(set.name.clone()));
            }
        }
        Ok(())
    }

    fn collect(&self, set: &SetInfo, request: &Request) -> Result<Collection, Error> {
        let instances = pcw_sim::usermode::collect(set.guid)
            .ok_or_else(|| Error::NotRunning(set.name.clone()))?;
        let instances = instances
            .into_iter()
            .map(|i| Instance {
                name: i.name,
                id: i.id,
                values: i
                    .values
                    .into_iter()
                    .filter_map(|(id, v)| u16::try_from(id).ok().map(|id| (id, v)))
                    .filter(|(id, _)| {
                        1u64.checked_shl(u32::from(*id))
                            .is_none_or(|bit| request.counter_mask & bit != 0)
                    })
                    .collect(),
            })
            .collect();
        Ok(Collection {
            instances,
            ..Collection::default()
        })
    }
}

/// The raw values of one set in one collection, aggregates added, with the collection's
/// time fields.
#[derive(Clone, Debug, PartialEq)]
pub struct SetSample {
    /// `PERF_DATA_BLOCK` time fields at collection (object time and frequency are those of
    /// the block; counters with `perfTimeID`/`perfFreqID` use their helpers instead).
    pub times: SampleTimes,
    /// Instances as a consumer sees them ([`SetInfo::consumer_view`]).
    pub instances: Vec<Instance>,
}

impl SetSample {
    /// The consumer's view of a collection of `set`.
    pub fn new(set: &SetInfo, collection: Collection, times: SampleTimes) -> Self {
        Self {
            times,
            instances: set.consumer_view(collection.instances),
        }
    }

    fn instance(&self, target: &Target) -> Option<&Instance> {
        match target {
            Target::Only => self.instances.first(),
            Target::Named(name) => self
                .instances
                .iter()
                .find(|i| i.name.eq_ignore_ascii_case(name)),
        }
    }
}

/// The names of the instances of each set (by set index) of a collection, as
/// [`expand`] takes them.
pub fn instance_names(sets: &BTreeMap<usize, SetSample>) -> BTreeMap<usize, Vec<String>> {
    sets.iter()
        .map(|(&set, s)| (set, s.instances.iter().map(|i| i.name.clone()).collect()))
        .collect()
}

/// One collection of every sampled set, and when it was taken.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Simulated system time (`FILETIME`) at collection.
    pub system_time: i64,
    /// By set index.
    pub sets: BTreeMap<usize, SetSample>,
}

/// A column's raw sample, as `pcw typeperf --raw` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawValues {
    /// `FirstValue` of the `PDH_RAW_COUNTER`.
    pub first: i64,
    /// `SecondValue`.
    pub second: i64,
    /// The counter's time base; `None` when its type uses none.
    pub time_base: Option<i64>,
}

/// One sample: when it was taken and every column's cooked value and raw sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Simulated system time (`FILETIME`) of the collection.
    pub system_time: i64,
    /// Cooked values, one per column; `None` when PDH could not compute one.
    pub values: Vec<Option<f64>>,
    /// Raw samples, one per column; `None` when the instance or counter was not collected.
    pub raw: Vec<Option<RawValues>>,
}

/// The raw sample PDH would hold for `counter` of `instance`.
fn raw_sample(
    counter: &CounterInfo,
    instance: &Instance,
    times: &SampleTimes,
) -> Option<RawSample> {
    let value = *instance.values.get(&counter.id)?;
    let helper = |id: Option<u16>| id.and_then(|id| instance.values.get(&id).copied());
    let follower = helper(counter.base_id)
        .or_else(|| helper(counter.multi_id))
        .or_else(|| helper(counter.perf_time_id));
    let mut times = *times;
    if let (Some(time), Some(freq)) = (helper(counter.perf_time_id), helper(counter.perf_freq_id)) {
        times.object_time = time.cast_signed();
        times.object_freq = freq.cast_signed();
    }
    RawSample::for_counter(counter.counter_type, value, follower, &times).ok()
}

/// The raw sample of `column` in `frame`.
fn column_sample(catalog: &Catalog, column: &Column, frame: &Frame) -> Option<RawSample> {
    let counter = &catalog.sets[column.set].counters[column.counter];
    let set = frame.sets.get(&column.set)?;
    raw_sample(counter, set.instance(&column.target)?, &set.times)
}

/// Cooks one row: every column from the older and newer frames.
pub fn cook_row(
    catalog: &Catalog,
    columns: &[Column],
    older: Option<&Frame>,
    newer: &Frame,
) -> Vec<Option<f64>> {
    columns
        .iter()
        .map(|column| {
            let counter = &catalog.sets[column.set].counters[column.counter];
            let new = column_sample(catalog, column, newer)?;
            let old = older.and_then(|frame| column_sample(catalog, column, frame));
            cook(
                counter.counter_type,
                counter.scale,
                old.as_ref(),
                &new,
                FORMAT_FLAGS,
            )
            .ok()
        })
        .collect()
}

/// The raw sample of every column in `frame`.
pub fn raw_row(catalog: &Catalog, columns: &[Column], frame: &Frame) -> Vec<Option<RawValues>> {
    columns
        .iter()
        .map(|column| {
            let counter = &catalog.sets[column.set].counters[column.counter];
            column_sample(catalog, column, frame).map(|raw| RawValues {
                first: raw.first_value,
                second: raw.second_value,
                time_base: timebase(counter.counter_type, &raw.times),
            })
        })
        .collect()
}

/// Collects every set of `masks` once, each with its mask; the kernel keeps the clock.
///
/// # Errors
/// The source's collection errors.
pub fn collect_frame(
    clock: &Kernel,
    source: &dyn Source,
    catalog: &Catalog,
    masks: &BTreeMap<usize, u64>,
) -> Result<Frame, Error> {
    let mut sets = BTreeMap::new();
    let mut system_time = None;
    for (&set, &mask) in masks {
        let info = &catalog.sets[set];
        let perf_time = clock.perf_counter();
        let time_100ns = BOOT_SYSTEM_TIME + perf_time.saturating_mul(10_000_000) / PERF_FREQUENCY;
        system_time.get_or_insert(time_100ns);
        let request = Request {
            counter_mask: mask,
            collect_multiple: info.instances != Instances::Single,
            ..Request::default()
        };
        let collection = source.collect(info, &request)?;
        let times = SampleTimes {
            perf_time,
            perf_freq: PERF_FREQUENCY,
            perf_time_100ns: time_100ns,
            object_time: perf_time,
            object_freq: PERF_FREQUENCY,
        };
        sets.insert(set, SetSample::new(info, collection, times));
    }
    Ok(Frame {
        system_time: system_time.unwrap_or(BOOT_SYSTEM_TIME),
        sets,
    })
}

/// A running query: counters added, primed, columns expanded.
pub struct Sampler<'a> {
    clock: &'a Kernel,
    source: &'a dyn Source,
    catalog: &'a Catalog,
    /// The counter mask of every sampled set, which is also what was added.
    masks: BTreeMap<usize, u64>,
    columns: Vec<Column>,
    previous: Frame,
}

impl<'a> Sampler<'a> {
    /// Resolves `paths`, adds the counters (`PcwCallbackAddCounter`), primes and expands.
    /// `clock` keeps the time (and is the source for the kernel's countersets).
    ///
    /// # Errors
    /// Every resolution and expansion [`Error`], and the source's errors. Counters added before
    /// the error are removed again.
    pub fn start(
        clock: &'a Kernel,
        source: &'a dyn Source,
        catalog: &'a Catalog,
        paths: &[String],
    ) -> Result<Self, Error> {
        let selectors = resolve(catalog, paths)?;
        let masks = masks(catalog, &selectors);
        let mut added = Vec::new();
        let started = (|| {
            for (&set, &mask) in &masks {
                source.notify(&catalog.sets[set], true, mask)?;
                added.push((set, mask));
            }
            let previous = collect_frame(clock, source, catalog, &masks)?;
            let columns = expand(catalog, &selectors, &instance_names(&previous.sets))?;
            Ok((previous, columns))
        })();
        match started {
            Ok((previous, columns)) => Ok(Self {
                clock,
                source,
                catalog,
                masks,
                columns,
                previous,
            }),
            Err(e) => {
                for (set, mask) in added {
                    // The first error is the one to report.
                    let _ = source.notify(&catalog.sets[set], false, mask);
                }
                Err(e)
            }
        }
    }

    /// The columns, in PDH's order; their paths are typeperf's header.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Collects every set and cooks every column against the previous collection.
    ///
    /// # Errors
    /// The source's collection errors.
    pub fn sample(&mut self) -> Result<Row, Error> {
        let frame = collect_frame(self.clock, self.source, self.catalog, &self.masks)?;
        let row = Row {
            system_time: frame.system_time,
            values: cook_row(self.catalog, &self.columns, Some(&self.previous), &frame),
            raw: raw_row(self.catalog, &self.columns, &frame),
        };
        self.previous = frame;
        Ok(row)
    }

    /// Removes the counters from every set (`PcwCallbackRemoveCounter`).
    ///
    /// # Errors
    /// The first error of the removals; every removal is tried.
    pub fn stop(self) -> Result<(), Error> {
        let mut result = Ok(());
        for (&set, &mask) in &self.masks {
            let removed = self.source.notify(&self.catalog.sets[set], false, mask);
            if result.is_ok() {
                result = removed;
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::instance;
    use crate::catalog::tests::contoso;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn multiple_aggregate_has_a_total_that_cooks() {
        let catalog = contoso("multipleAggregate");
        let set = catalog.find("Contoso Timers").unwrap();
        let info = &catalog.sets[set];
        let times = |perf_time| SampleTimes {
            perf_time,
            perf_freq: 1000,
            perf_time_100ns: perf_time * 10_000,
            object_time: perf_time,
            object_freq: 1000,
        };
        // "% Object Busy" (id 5, perf_obj_time_timer, aggregate sum, object time from ids 7/8).
        let frame = |t: u64, busy: [u64; 2]| {
            let collection = Collection {
                instances: vec![
                    instance("disk0", &[(5, busy[0]), (7, t), (8, 1000)]),
                    instance("disk1", &[(5, busy[1]), (7, t), (8, 1000)]),
                ],
                ..Collection::default()
            };
            Frame {
                system_time: BOOT_SYSTEM_TIME,
                sets: [(set, SetSample::new(info, collection, times(0)))]
                    .into_iter()
                    .collect(),
            }
        };
        let older = frame(1000, [0, 0]);
        let newer = frame(2000, [250, 500]);
        let selectors = resolve(&catalog, &args(&[r"\Contoso Timers(*)\% Object Busy"])).unwrap();
        let columns = expand(&catalog, &selectors, &instance_names(&older.sets)).unwrap();
        let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                r"\\PCW-SIM\Contoso Timers(disk0)\% Object Busy",
                r"\\PCW-SIM\Contoso Timers(disk1)\% Object Busy",
                r"\\PCW-SIM\Contoso Timers(_Total)\% Object Busy",
            ]
        );
        // 100 · ΔN / ΔobjectTime: 25 %, 50 %, and the summed total 75 %.
        let row = cook_row(&catalog, &columns, Some(&older), &newer);
        assert_eq!(row, [Some(25.0), Some(50.0), Some(75.0)]);
        // The raw sample: the value and the object time it was taken at.
        let raw = raw_row(&catalog, &columns, &newer);
        assert_eq!(raw[2].map(|r| (r.first, r.second)), Some((750, 2000)));
        // A `(_Total)` path selects only the aggregate.
        let selectors =
            resolve(&catalog, &args(&[r"\Contoso Timers(_total)\% Object Busy"])).unwrap();
        let columns = expand(&catalog, &selectors, &instance_names(&older.sets)).unwrap();
        assert_eq!(columns.len(), 1);
        assert_eq!(
            cook_row(&catalog, &columns, Some(&older), &newer),
            [Some(75.0)]
        );
        // An instance that is gone has neither a value nor a raw sample.
        let gone = Frame {
            system_time: BOOT_SYSTEM_TIME,
            sets: BTreeMap::new(),
        };
        assert_eq!(cook_row(&catalog, &columns, Some(&older), &gone), [None]);
        assert_eq!(raw_row(&catalog, &columns, &gone), [None]);
    }
}
