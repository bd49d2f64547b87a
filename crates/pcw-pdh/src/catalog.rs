// SPDX-License-Identifier: MIT OR Apache-2.0
//! The counter catalog: the countersets a consumer can name, read from a counter manifest with
//! pcw-gen's `inspect` — per set its name, GUID, how its instances are presented and
//! its counters with the facts cooking needs (type, scale, base and time helpers, how an
//! aggregate combines them), with pcw-gen's typed [`Instances`] and [`Aggregate`].
//!
//! Counters without a display name — bases, time stamps and `noDisplay` helpers — stay in the
//! catalog (cooking reads them) but have no [`CounterInfo::name`], so no path names them and no
//! listing shows them.

use pcw_core::counter_type::CounterType;

use pcw_gen::model::{Aggregate, CounterAttribute, Instances};

use crate::Error;
use pcw_gen::text::visible;

/// One counter as the manifest declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterInfo {
    /// Descriptor id.
    pub id: u16,
    /// Display name; `None` for helper counters, which are never listed.
    pub name: Option<String>,
    /// V1 counter type.
    pub counter_type: CounterType,
    /// The value's size in bytes, as the manifest's type and field give it (what the driver's
    /// `PCW_COUNTER_DESCRIPTOR.Size` should say).
    pub size: u32,
    /// `defaultScale`.
    pub scale: i32,
    /// `baseID`.
    pub base_id: Option<u16>,
    /// `perfTimeID`.
    pub perf_time_id: Option<u16>,
    /// `perfFreqID`.
    pub perf_freq_id: Option<u16>,
    /// `multiCounterID`.
    pub multi_id: Option<u16>,
    /// The manifest's `aggregate` attribute: how an aggregate instance combines it (summed
    /// when absent, see [`SetInfo::aggregate_of`]).
    pub aggregate: Option<Aggregate>,
}

impl CounterInfo {
    /// The ids this counter's cooking reads: itself and its helpers.
    pub fn ids(&self) -> impl Iterator<Item = u16> {
        [
            Some(self.id),
            self.base_id,
            self.perf_time_id,
            self.perf_freq_id,
            self.multi_id,
        ]
        .into_iter()
        .flatten()
    }
}

/// One counterset as the manifest declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct SetInfo {
    /// The registered name, which is the object name in paths.
    pub name: String,
    /// The counterset GUID (big-endian), which identifies a user-mode set.
    pub guid: u128,
    /// How instances are presented; whether paths name one is
    /// [`Instances::has_instances`].
    pub instances: Instances,
    /// Counters in manifest order.
    pub counters: Vec<CounterInfo>,
}

impl SetInfo {
    /// The counter with descriptor id `id`.
    pub fn counter(&self, id: u16) -> Option<&CounterInfo> {
        self.counters.iter().find(|c| c.id == id)
    }
}

/// The countersets a consumer can name, from a counter manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    /// In manifest order.
    pub sets: Vec<SetInfo>,
}

impl Catalog {
    /// Reads a manifest's countersets with pcw-gen; `file` names the manifest in diagnostics.
    ///
    /// # Errors
    /// [`Error::Manifest`] when the manifest does not compile.
    pub fn from_manifest(file: &str, text: &str) -> Result<Self, Error> {
        let inspect = pcw_gen::Config::new().inspect(&pcw_gen::Input::new(file, text))?;
        Ok(Self::from_inspect(inspect))
    }

    /// The countersets of a manifest already read with pcw-gen's `inspect`.
    pub fn from_inspect(inspect: pcw_gen::model::Inspect) -> Self {
        let sets = inspect
            .countersets
            .into_iter()
            .map(|set| SetInfo {
                guid: pcw_gen::model::Guid::parse_braced(&set.guid).map_or(0, |g| g.0),
                instances: set.instances,
                name: set.name,
                counters: set
                    .counters
                    .into_iter()
                    .map(|c| CounterInfo {
                        id: c.id,
                        // Base and `noDisplay` counters are helpers, never listed, even when
                        // the manifest names them (as Microsoft's user-mode samples do).
                        name: c.name.filter(|_| {
                            !CounterType::from_raw(c.counter_type).is_base()
                                && !c.attributes.contains(&CounterAttribute::NoDisplay)
                        }),
                        counter_type: CounterType::from_raw(c.counter_type),
                        size: c.size,
                        scale: c.default_scale,
                        base_id: c.base_id,
                        perf_time_id: c.perf_time_id,
                        perf_freq_id: c.perf_freq_id,
                        multi_id: c.multi_counter_id,
                        aggregate: c.aggregate,
                    })
                    .collect(),
            })
            .collect();
        Self { sets }
    }

    /// What the driver registered in `kernel` that this catalog (another driver's manifest, as
    /// `--image` with `--manifest` reads it) does not say, set by set: a counter the manifest
    /// declares that the driver did not register (PDH shows its column blank), one the driver
    /// registered that the manifest does not declare (no path reaches it), and one registered
    /// with another size than the manifest's type gives it (its values are read wrong: a
    /// 64-bit count registered as 4 bytes loses its high half). Sets the driver did not
    /// register are not here: asking for one is an error of its own.
    pub fn mismatches(&self, kernel: &pcw_sim::kernel_pcw::Kernel) -> Vec<String> {
        let mut found = Vec::new();
        for set in &self.sets {
            let Some(registered) = kernel.descriptors(&set.name) else {
                continue;
            };
            let name = visible(&set.name);
            for counter in &set.counters {
                if !registered.iter().any(|d| d.id == counter.id) {
                    found.push(format!(
                        "counter `{}` (id {}) of `{name}` is in the manifest but the driver did \
                         not register it: its column stays blank",
                        visible(counter.name.as_deref().unwrap_or_default()),
                        counter.id
                    ));
                }
            }
            for d in &registered {
                match set.counter(d.id) {
                    None => found.push(format!(
                        "the driver registered counter id {} of `{name}`, which the manifest \
                         does not declare: no counter path reaches it",
                        d.id
                    )),
                    Some(c) if u32::from(d.size) != c.size => found.push(format!(
                        "the driver registered counter `{}` (id {}) of `{name}` as {} bytes, \
                         but the manifest's `{}` takes {}: its values are read wrong",
                        visible(c.name.as_deref().unwrap_or_default()),
                        d.id,
                        d.size,
                        c.counter_type.name(),
                        c.size
                    )),
                    Some(_) => {}
                }
            }
        }
        found
    }

    /// The index of the set named `object` (any case).
    pub fn find(&self, object: &str) -> Option<usize> {
        self.sets
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(object))
    }

    /// The set `object` names (any case), or every set when `None`.
    ///
    /// # Errors
    /// [`Error::NoObject`] when no set has that name.
    pub fn select(&self, object: Option<&str>) -> Result<Vec<&SetInfo>, Error> {
        match object {
            None => Ok(self.sets.iter().collect()),
            Some(object) => self
                .find(object)
                .map(|i| vec![&self.sets[i]])
                .ok_or_else(|| Error::NoObject {
                    object: object.to_owned(),
                    known: self
                        .sets
                        .iter()
                        .map(|s| format!("`{}`", s.name))
                        .collect::<Vec<_>>()
                        .join(", "),
                }),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// pcw-gen's globalAggregate test manifest (contoso), with its timers set presented as
    /// `kind` instead.
    pub(crate) fn contoso(kind: &str) -> Catalog {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../pcw-gen/tests/manifests/contoso_v11.man"
        ))
        .unwrap()
        .replace(
            "instances=\"globalAggregate\"",
            &format!("instances=\"{kind}\""),
        );
        Catalog::from_manifest("contoso_v11.man", &text).unwrap()
    }

    #[test]
    fn helpers_have_no_name_and_kinds_follow_the_manifest() {
        let catalog = contoso("multipleAggregate");
        let timers = &catalog.sets[catalog.find("contoso TIMERS").unwrap()];
        assert_eq!(timers.instances, Instances::MultipleAggregate);
        assert!(timers.instances.has_instances());
        // `% Object Busy` (id 5) reads its object time and frequency from ids 7 and 8, which
        // are time-stamp helpers without a display name.
        let busy = timers.counter(5).unwrap();
        assert_eq!(busy.ids().collect::<Vec<_>>(), [5, 7, 8]);
        assert_eq!(timers.counter(7).unwrap().name, None);
        let global = contoso("globalAggregate");
        let timers = &global.sets[global.find("Contoso Timers").unwrap()];
        assert_eq!(timers.instances, Instances::GlobalAggregate);
        assert!(!timers.instances.has_instances());
    }

    #[test]
    fn select_names_the_objects_there_are() {
        let catalog = contoso("multipleAggregate");
        assert_eq!(catalog.select(None).unwrap().len(), catalog.sets.len());
        assert_eq!(
            catalog.select(Some("contoso history")).unwrap()[0].name,
            "Contoso History"
        );
        let err = catalog.select(Some("Nope")).unwrap_err();
        assert!(matches!(err, Error::NoObject { .. }));
        assert!(
            err.to_string()
                .starts_with("object `Nope` not found (the objects are `"),
            "{err}"
        );
    }
}
