// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw list`: what a provider publishes, as PowerShell's `Get-Counter -ListSet` describes a
//! counterset — name, type, description, counters with their type and help, the paths and the
//! paths with instances.
//!
//! ```text
//! pcw list [PATTERN] [--json] [--manifest FILE [--image SYS]] [--sim-queue NAME]…
//! ```
//!
//! `PATTERN` matches counterset names (`*` and `?`, any case; default `*`). Without
//! `--manifest` the reference driver is loaded under the simulated kernel and its live
//! instances are listed (`--sim-queue` creates dynamic queue instances first); with
//! `--manifest FILE --image SYS`, any driver's image is loaded and the manifest's countersets
//! are listed with its live instances; with `--manifest` alone, the manifest's countersets are
//! listed and instance names, which only exist at run time, are unknown (`instances` is
//! `null`, `paths_with_instances` empty).
//!
//! # The JSON document (`--json`, version 1)
//!
//! ```text
//! {
//!   "format": "pcw-list", "version": 1,
//!   "source": "simulator" | "manifest",
//!   "machine": str?,                      the simulated computer, null for a manifest
//!   "countersets": [{                     manifest order
//!     "name": str,
//!     "counter_set_type": "SingleInstance" | "MultiInstance",   as Get-Counter shows it
//!     "instance_kind": "single" | "multiple" | "globalAggregate" | "multipleAggregate"
//!                      | "globalAggregateHistory",              the manifest's `instances`
//!     "description": str, "guid": str,
//!     "counters": [{ "id": u16, "name": str, "type": str (winperf.h name),
//!                    "manifest_type": str, "help": str, "detail_level": str,
//!                    "default_scale": i32, "aggregate": str? }],   displayed counters only
//!     "paths": [str],                     `\Set(*)\Counter` or `\Set\Counter`
//!     "paths_with_instances": [str],      one per counter and live instance, counters outer
//!     "instances": [str]?,                live instance names (with `_Total`), null if unknown
//!     "warnings": [str]                   instance names PDH or the exporters trip on
//!   }]
//! }
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

use pcw_gen::model::{Aggregate, DetailLevel, Inspect, InspectCounterset, Instances};
use pcw_gen::text::visible;
use pcw_pdh::counter_path::wildcard_match;
use pcw_pdh::listing::{instance_warnings, live_instances, set_paths};
use pcw_pdh::{Catalog, MACHINE, SetInfo};
use pcw_sim::kernel_pcw::Kernel;
use serde::Serialize;

use crate::typeperf::{Error, Target, driver_inspect, manifest_catalog, with_driver};

/// Arguments of `pcw list`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Counterset names to list (`*` and `?` wildcards, any case).
    #[arg(default_value = "*")]
    pattern: String,
    /// Print the `pcw-list` JSON document.
    #[arg(long)]
    json: bool,
    /// List this manifest's countersets instead of the reference driver's (with `--image`, with
    /// the live instances of the driver it declares).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Load this cross-built `.sys` under the simulated kernel and list its live instances
    /// (its countersets are `--manifest`'s; without it, the reference driver's).
    #[arg(long)]
    image: Option<PathBuf>,
    /// Create a dynamic queue of this name in the simulated driver before listing.
    #[arg(long = "sim-queue")]
    sim_queues: Vec<String>,
}

/// The `pcw-list` document.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ListDoc {
    /// `pcw-list`.
    pub format: &'static str,
    /// 1.
    pub version: u32,
    /// `simulator` or `manifest`.
    pub source: &'static str,
    /// The simulated computer's name; `None` for a manifest.
    pub machine: Option<&'static str>,
    /// The matching countersets.
    pub countersets: Vec<ListSet>,
}

/// One counterset, as `Get-Counter -ListSet` describes it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ListSet {
    /// The counterset (object) name.
    pub name: String,
    /// `SingleInstance` or `MultiInstance`: whether paths name an instance.
    pub counter_set_type: &'static str,
    /// The manifest's `instances` value.
    pub instance_kind: Instances,
    /// The counterset's description.
    pub description: String,
    /// The counterset GUID.
    pub guid: String,
    /// The displayed counters.
    pub counters: Vec<ListCounter>,
    /// Paths without instances.
    pub paths: Vec<String>,
    /// Paths with every live instance.
    pub paths_with_instances: Vec<String>,
    /// Live instance names; `None` when unknown (a manifest).
    pub instances: Option<Vec<String>>,
    /// Instance-name warnings.
    pub warnings: Vec<String>,
}

/// One displayed counter.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ListCounter {
    /// Counter id.
    pub id: u16,
    /// Display name.
    pub name: String,
    /// `winperf.h` type name.
    #[serde(rename = "type")]
    pub counter_type: String,
    /// The manifest's `type`.
    pub manifest_type: String,
    /// The help text (the counter's description).
    pub help: String,
    /// `standard` or `advanced`.
    pub detail_level: DetailLevel,
    /// `defaultScale`.
    pub default_scale: i32,
    /// `aggregate`, when given.
    pub aggregate: Option<Aggregate>,
}

fn describe(set: &InspectCounterset, info: &SetInfo, instances: Option<Vec<String>>) -> ListSet {
    let warnings = instances
        .as_deref()
        .map(|live| instance_warnings(info, live))
        .unwrap_or_default();
    let has_instances = set.instances.has_instances();
    ListSet {
        name: set.name.clone(),
        counter_set_type: if has_instances {
            "MultiInstance"
        } else {
            "SingleInstance"
        },
        instance_kind: set.instances,
        description: set.description.clone(),
        guid: set.guid.clone(),
        counters: set
            .counters
            .iter()
            .filter_map(|c| {
                Some(ListCounter {
                    id: c.id,
                    name: c.name.clone()?,
                    counter_type: c.counter_type_name.clone(),
                    manifest_type: c.type_name.clone(),
                    help: c.description.clone().unwrap_or_default(),
                    detail_level: c.detail_level,
                    default_scale: c.default_scale,
                    aggregate: c.aggregate,
                })
            })
            .collect(),
        paths: set_paths(info, None),
        paths_with_instances: match &instances {
            Some(live) if has_instances => set_paths(info, Some(live)),
            _ => Vec::new(),
        },
        instances,
        warnings,
    }
}

/// The document for the sets of `inspect`/`catalog` whose name matches `pattern`; with a
/// kernel, the live instances are listed.
///
/// # Errors
/// Collection errors.
pub(crate) fn document(
    inspect: &Inspect,
    catalog: &Catalog,
    kernel: Option<&Kernel>,
    pattern: &str,
) -> Result<ListDoc, Error> {
    let mut countersets = Vec::new();
    for (set, info) in inspect.countersets.iter().zip(&catalog.sets) {
        if !wildcard_match(pattern, &set.name) {
            continue;
        }
        let instances = match kernel {
            Some(kernel) => Some(live_instances(kernel, info)?),
            None => None,
        };
        countersets.push(describe(set, info, instances));
    }
    Ok(ListDoc {
        format: "pcw-list",
        version: 1,
        source: if kernel.is_some() {
            "simulator"
        } else {
            "manifest"
        },
        machine: kernel.map(|_| MACHINE),
        countersets,
    })
}

/// `{a, b, c}` as PowerShell prints a list property.
fn braces(items: &[String]) -> String {
    let items: Vec<_> = items.iter().map(|i| visible(i)).collect();
    format!("{{{}}}", items.join(", "))
}

/// The document as `Get-Counter -ListSet … | Format-List` shows it, plus the counters. Names,
/// help texts and instance names (which a provider chooses at run time) are printed with
/// [`visible`]: a control character or line separator shows as `\u{…}` instead of moving the
/// terminal's cursor or starting a line that looks like another property.
pub(crate) fn render_text(doc: &ListDoc) -> String {
    let mut out = String::new();
    for set in &doc.countersets {
        let _ = writeln!(out, "CounterSetName     : {}", visible(&set.name));
        let _ = writeln!(
            out,
            "CounterSetType     : {} ({})",
            set.counter_set_type, set.instance_kind
        );
        let _ = writeln!(out, "Description        : {}", visible(&set.description));
        let _ = writeln!(out, "Paths              : {}", braces(&set.paths));
        let _ = writeln!(
            out,
            "PathsWithInstances : {}",
            braces(&set.paths_with_instances)
        );
        if let Some(instances) = &set.instances {
            let _ = writeln!(out, "Instances          : {}", braces(instances));
        }
        let _ = writeln!(out, "Counters           :");
        for c in &set.counters {
            let _ = writeln!(out, "    {} ({})", visible(&c.name), c.counter_type);
            if !c.help.is_empty() {
                let _ = writeln!(out, "        {}", visible(&c.help));
            }
        }
        for w in &set.warnings {
            let _ = writeln!(out, "Warning            : {}", visible(w));
        }
        out.push('\n');
    }
    out
}

/// `pcw list`.
///
/// # Errors
/// Manifest, file and simulator errors; [`Error::Usage`] when nothing matches.
pub(crate) fn run(args: &Args) -> Result<(), Error> {
    let target = Target {
        image: args
            .image
            .as_deref()
            .map(|p| p.to_str().unwrap_or_default()),
        manifest: args.manifest.as_deref(),
        queues: &args.sim_queues,
    };
    if let Some(image) = &args.image
        && image.to_str().is_none()
    {
        return Err(Error::Usage(format!(
            "--image {}: the path is not valid unicode",
            pcw_io::text::shown(image)
        )));
    }
    let doc = match (&args.manifest, &args.image) {
        (Some(path), None) => {
            let (inspect, catalog) = manifest_catalog(path)?;
            document(&inspect, &catalog, None, &args.pattern)?
        }
        (Some(path), Some(_)) => {
            let (inspect, _) = manifest_catalog(path)?;
            with_driver(&target, |kernel, catalog| {
                document(&inspect, catalog, Some(kernel), &args.pattern)
            })?
        }
        (None, _) => {
            let inspect = driver_inspect()?;
            with_driver(&target, |kernel, catalog| {
                document(&inspect, catalog, Some(kernel), &args.pattern)
            })?
        }
    };
    if doc.countersets.is_empty() {
        return Err(Error::Usage(format!(
            "no counterset matches `{}`",
            visible(&args.pattern)
        )));
    }
    let text = if args.json {
        serde_json::to_string_pretty(&doc).map_err(|e| Error::Usage(e.to_string()))? + "\n"
    } else {
        render_text(&doc)
    };
    Ok(pcw_io::console::out(&text)?)
}
