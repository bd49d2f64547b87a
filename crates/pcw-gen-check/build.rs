// SPDX-License-Identifier: MIT OR Apache-2.0
//! Generates the code under test from pcw-gen's golden manifests, through the same build API a
//! driver uses, plus the `inspect` document of each configuration for the tests to compare
//! against.

use std::path::{Path, PathBuf};

use pcw_gen::Config;

fn run() -> Result<(), pcw_gen::Error> {
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcw-gen/tests/manifests");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or(pcw_gen::Error::NoOutDir)?);
    println!("cargo:rerun-if-changed=build.rs");

    let fabrikam = manifests.join("fabrikam_v2.man");
    let contoso = manifests.join("contoso_v11.man");
    let mut bound = Config::new();
    bound
        .silo_neutral(true)
        .module_name("fabrikam_bound")
        .bind_struct("FabDriver", "crate::stats::DriverStats")
        .bind_struct("FabQueue.QueueData", "crate::stats::QueueStats")
        .out_dir(out.join("bound"));

    let mut wdk_style = Config::new();
    wdk_style
        .runtime_path("crate::wdk_style_rt")
        .publisher(false)
        .module_name("fabrikam_wdk")
        .silo_neutral(true)
        .out_dir(out.join("wdk"));

    // The one-liner, as a driver's build.rs would call it.
    pcw_gen::compile(&fabrikam)?;
    pcw_gen::compile(&contoso)?;
    bound.compile(&fabrikam)?;
    wdk_style.compile(&fabrikam)?;

    for (config, manifest, name) in [
        (&Config::new(), &fabrikam, "fabrikam_v2"),
        (&Config::new(), &contoso, "contoso_v11"),
        (&bound, &fabrikam, "fabrikam_bound"),
    ] {
        let bytes = pcw_io::input::read(manifest, pcw_io::input::MANIFEST)?;
        let inspect = config.inspect(manifest, &bytes)?;
        let mut outputs = pcw_io::Outputs::new();
        outputs.add(&out.join(format!("{name}.inspect.json")), inspect.to_json())?;
        outputs.commit()?;
    }
    Ok(())
}

// pcw-gen's `Error` prints its rendered diagnostics for `Debug` too, so the build script can
// return it.
fn main() -> Result<(), pcw_gen::Error> {
    run()
}
