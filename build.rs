// SPDX-License-Identifier: MIT OR Apache-2.0
//! The driver's build script, in three steps:
//!
//! 1. With the `wdk` feature on a Windows build machine, `wdk_build::configure_wdk_binary_build`
//!    (windows-drivers-rs): WDK library paths and the kernel-driver link arguments. The feature
//!    is read from `CARGO_FEATURE_WDK` and the dependency only exists on Windows hosts, so no
//!    Linux build (host tests, the lld-link cross-build) ever compiles or runs it here. Off
//!    Windows `wdk` is an error, unless `PCW_WDK_CROSS_STAGE=1` says the Linux WDK stage
//!    (scripts/wdk-build.sh) is building and linking it.
//! 2. Always: pcw-gen compiles `manifest/pcw_driver.man` into the driver's register/add layer
//!    (prost-build style: outputs in `OUT_DIR`, rewritten only when changed), plus the `.rc`
//!    string table, the same table compiled (`.res`) and the lodctr `.ini`/`.h` pair.
//! 3. Building for Windows (MSVC), on any host: pcw-gen passes the `.res` (counterset and counter
//!    names and descriptions under their manifest `nameID`/`descriptionID`) to the linker, which
//!    puts it in the `.sys`'s resources, because `lodctr /m:` and every consumer load those
//!    strings from the binary the manifest's `applicationIdentity` names. No resource compiler
//!    is involved: pcw-gen writes the `.res` itself.

use std::process::ExitCode;

fn main() -> ExitCode {
    let wdk = std::env::var_os("CARGO_FEATURE_WDK").is_some();
    let windows_target = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "windows");
    if wdk && let Err(e) = configure_wdk(windows_target) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    let written = pcw_gen::Config::new()
        .runtime_path("crate::ffi")
        .bind_struct(
            "DynamicQueues.QueueCounters",
            "crate::queues::QueueCounters",
        )
        .compile("manifest/pcw_driver.man");
    // On success pcw-gen has also linked the string table into the `.sys` (step 3).
    match written {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            // pcw-gen renders every diagnostic with file:line:column and a hint.
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Step 1: wdk-build's configuration, on a Windows host with the WDK.
#[cfg(windows)]
fn configure_wdk(windows_target: bool) -> Result<(), String> {
    if !windows_target {
        return Err("error: the `wdk` feature builds the driver for a Windows target only".into());
    }
    wdk_build::configure_wdk_binary_build()
        .map_err(|e| format!("error: wdk-build could not configure the WDK build: {e}"))
}

/// Step 1 off Windows: the WDK (and wdk-build, a Windows-only build dependency) is not there,
/// so `wdk` is refused — except in the Linux stage that builds the WDK flavour from wdk-sys's
/// generated bindings (scripts/wdk-build.sh), which sets `PCW_WDK_CROSS_STAGE=1` and gives the
/// link the library directory and the kernel-driver arguments itself.
#[cfg(not(windows))]
fn configure_wdk(windows_target: bool) -> Result<(), String> {
    println!("cargo:rerun-if-env-changed=PCW_WDK_CROSS_STAGE");
    if std::env::var_os("PCW_WDK_CROSS_STAGE").is_some_and(|v| v == "1") {
        if !windows_target {
            return Err(
                "error: the `wdk` feature builds the driver for a Windows target only".into(),
            );
        }
        return Ok(());
    }
    Err(
        "error: the `wdk` feature needs a Windows build machine with the WDK (eWDK prompt, \
         `cargo make`); Linux builds the driver without it (scripts/cross-windows.sh), and \
         scripts/wdk-build.sh builds this flavour with PCW_WDK_CROSS_STAGE=1"
            .into(),
    )
}
