// SPDX-License-Identifier: MIT OR Apache-2.0
//! Build-time tables and install assets from the driver's counter manifest, all from pcw-gen:
//!
//! * `OUT_DIR/tables.rs`: pcw-gen's V1 tables (`Config::v1_tables`) — per counterset the
//!   object's lodctr symbol offset, whether it has instances and its detail level, per counter
//!   (V1 order) its symbol offset, V1 type, size, detail level and scale — which
//!   `src/tables.rs` includes and turns into `PERF_OBJECT_TYPE`/`PERF_COUNTER_DEFINITION`
//!   fields at Open; a manifest V1 cannot express fails the build with pcw-gen's diagnostics;
//! * `OUT_DIR/pcw_driver.ini` and `pcw_driver.h`: the lodctr pair, byte for byte what
//!   `pcw gen` writes for the same manifest (so index = First Counter + offset agrees);
//! * `OUT_DIR/pcw_perfdll.reg`: the `Performance`/`Linkage` registry fragment
//!   (`src/install.rs`, included here by path).

#[path = "src/install.rs"]
#[expect(
    dead_code,
    unreachable_pub,
    reason = "the library's public `install` module, compiled into the build script as well: the \
              script writes the default fragment and leaves the rest to the library's users"
)]
mod install;

use std::path::{Path, PathBuf};

use pcw_gen::Error;

/// The manifest, relative to this crate.
const MANIFEST: &str = "../../manifest/pcw_driver.man";
/// The service key (lodctr `drivername=`): the driver's service.
const SERVICE: &str = "pcw_driver";

fn main() -> Result<(), Error> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join(MANIFEST);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or(Error::NoOutDir)?);
    println!("cargo:rerun-if-changed={}", manifest.display());
    println!("cargo:rerun-if-changed=src/install.rs");
    let bytes = pcw_io::input::read(&manifest, pcw_io::input::MANIFEST)?;
    // Labelled with the bare file name, as `pcw gen` run in `manifest/` would.
    let input = pcw_gen::Input::new("pcw_driver.man", &bytes);
    let mut config = pcw_gen::Config::new();
    config.driver_name(SERVICE);
    let generated = config.generate(&input)?;
    // All outputs or none, each rewritten only when it changed.
    let mut outputs = pcw_io::Outputs::new();
    outputs
        .add(&out.join("tables.rs"), config.v1_tables(&input)?)?
        .add(&out.join("pcw_driver.ini"), generated.ini)?
        .add(&out.join("pcw_driver.h"), generated.symbols_h)?;
    let reg = install::RegFragment {
        service: SERVICE,
        library: install::DEFAULT_LIBRARY,
        export: &install::DEFAULT_EXPORT,
        supports_metadata: true,
    };
    outputs.add(&out.join("pcw_perfdll.reg"), reg.bytes())?;
    outputs.commit()?;
    Ok(())
}
