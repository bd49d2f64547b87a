// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-pdh: the consumer's side of performance counters on any host — PDH's cooking of raw
//! samples and a PDH query as typeperf makes one, over the countersets of a counter manifest
//! and the providers running under pcw-sim's kernel PCW ([`pcw_sim::kernel_pcw`]) or user-mode
//! Perflib ([`pcw_sim::usermode`]). `pcw typeperf` parses its arguments, calls this, and
//! prints. The simulator itself knows no manifest; this crate reads one with pcw-gen.
//!
//! One concept a file:
//!
//! * [`cook`]: PDH's counter cooking — raw samples to displayed values with the formulas of
//!   `docs/counter-types.md`, scale, the 100 % cap and PDH's calculation errors;
//! * [`catalog`]: the countersets and counters a manifest declares, as a consumer needs them;
//! * [`counter_path`]: `\\computer\Object(parent/instance#index)\Counter` paths and wildcards;
//! * [`resolve`]: paths resolved against the catalog, instance wildcards expanded into columns;
//! * [`aggregate`]: the `globalAggregate` instance and the `multipleAggregate` `_Total`;
//! * [`sample`]: the sampling loop — add counters, prime, collect, cook, remove;
//! * [`listing`]: `-q`/`-qx` path listings with instance-name warnings;
//! * [`csv`]: typeperf's PDH-CSV (and TSV) output.
//!
//! ```
//! use pcw_gen::model::Instances;
//! use pcw_pdh::{Catalog, listing, resolve};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcw-gen/tests/manifests/contoso_v11.man");
//! let catalog = Catalog::from_manifest(path, &std::fs::read_to_string(path)?)?;
//! let timers = &catalog.sets[catalog.find("contoso timers").unwrap()];
//! assert_eq!(timers.instances, Instances::GlobalAggregate);
//! // A global aggregate is one instance: its paths name none.
//! let selectors = resolve::resolve(&catalog, &[r"\Contoso Timers\% Busy*".to_owned()])?;
//! assert_eq!(selectors[0].counters.len(), 2);
//! assert_eq!(listing::set_paths(timers, None)[0], r"\Contoso Timers\% Busy Time");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(
    unsafe_code,
    reason = "cooking and path resolution work on values pcw-core's safe decoder already produced"
)]

pub mod aggregate;
pub mod catalog;
pub mod cook;
pub mod counter_path;
pub mod csv;
pub mod listing;
pub mod resolve;
pub mod sample;

pub use catalog::{Catalog, CounterInfo, SetInfo};
pub use counter_path::{CounterPath, PathError};
pub use sample::{Row, Sampler, Source, UserMode};

use pcw_gen::text::visible;
use pcw_sim::kernel_pcw::SimError;

/// The simulated computer's name: what `\\computer` may say and what typeperf's header shows.
pub const MACHINE: &str = "PCW-SIM";
/// The name of the aggregate instance of a `multipleAggregate` set.
pub const TOTAL_INSTANCE: &str = "_Total";

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path that does not parse.
    #[error("bad counter path `{}`: {source}", visible(path))]
    Path {
        /// The path as given.
        path: String,
        /// What is wrong.
        source: PathError,
    },
    /// `\\computer` names another machine.
    #[error(
        "counter path `{}`: unknown computer `{}` (the simulated computer is `{MACHINE}`)",
        visible(path),
        visible(machine)
    )]
    UnknownComputer {
        /// The path as given.
        path: String,
        /// The computer it names.
        machine: String,
    },
    /// No counterset has the object's name.
    #[error(
        "counter path `{}`: unknown object `{}`",
        visible(path),
        visible(object)
    )]
    UnknownObject {
        /// The path as given.
        path: String,
        /// The object it names.
        object: String,
    },
    /// No displayed counter of the object matches.
    #[error(
        "counter path `{}`: object `{}` has no counter `{}`",
        visible(path),
        visible(object),
        visible(counter)
    )]
    UnknownCounter {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
        /// The counter name or pattern.
        counter: String,
    },
    /// `(instance)` on a set whose paths name no instance.
    #[error(
        "counter path `{}`: object `{}` is single-instance; remove `({})`",
        visible(path),
        visible(object),
        visible(instance)
    )]
    UnexpectedInstance {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
        /// The instance part given.
        instance: String,
    },
    /// No `(instance)` on a set with instances.
    #[error(
        "counter path `{}`: object `{}` has instances; name one or use `(*)`",
        visible(path),
        visible(object)
    )]
    MissingInstance {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
    },
    /// The instance part matched no instance of the priming collection.
    #[error(
        "counter path `{}`: no instance of `{}` matches `{}`",
        visible(path),
        visible(object),
        visible(instance)
    )]
    NoInstance {
        /// The path as given.
        path: String,
        /// The object.
        object: String,
        /// The instance part given.
        instance: String,
    },
    /// The paths expand to more columns than one query takes ([`resolve::MAX_COLUMNS`]).
    #[error(
        "the counter paths expand to more than {} counters (at `{}`); a query takes at most that \
         many",
        resolve::MAX_COLUMNS,
        visible(path)
    )]
    TooManyColumns {
        /// The path whose expansion passed the limit.
        path: String,
    },
    /// A listing names no counterset.
    #[error(
        "object `{}` not found (the objects are {})",
        visible(object),
        visible(known)
    )]
    NoObject {
        /// The object asked for.
        object: String,
        /// The objects there are, backticked and comma-separated.
        known: String,
    },
    /// The manifest could not be read.
    #[error("the counter manifest: {0}")]
    Manifest(#[from] pcw_gen::Error),
    /// The simulated kernel refused a collection.
    #[error("{0}")]
    Sim(#[from] SimError),
    /// No running user-mode provider registered the counterset.
    #[error("counterset `{}` is not registered by a running user-mode provider", visible(.0))]
    NotRunning(String),
}

impl Error {
    /// The counter path the error is about, as given (for a caller that knows where the path
    /// came from, such as the line of a file of paths).
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::Path { path, .. }
            | Self::UnknownComputer { path, .. }
            | Self::UnknownObject { path, .. }
            | Self::UnknownCounter { path, .. }
            | Self::UnexpectedInstance { path, .. }
            | Self::MissingInstance { path, .. }
            | Self::NoInstance { path, .. }
            | Self::TooManyColumns { path } => Some(path),
            Self::NoObject { .. } | Self::Manifest(_) | Self::Sim(_) | Self::NotRunning(_) => None,
        }
    }
}
