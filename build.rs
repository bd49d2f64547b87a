//! Compiles the driver's counter manifest into its register/add layer (pcw-gen, prost-build
//! style: outputs in `OUT_DIR`, rewritten only when changed). The WDK configuration
//! (`wdk_build::configure_wdk_binary_build`) joins here with the cargo-make flow (issue 8).

use std::process::ExitCode;

fn main() -> ExitCode {
    let result = pcw_gen::Config::new()
        .runtime_path("crate::pcw_rt")
        .bind_struct(
            "DynamicQueues.QueueCounters",
            "crate::queues::QueueCounters",
        )
        .compile("manifest/pcw_driver.man");
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            // pcw-gen renders every diagnostic with file:line:column and a hint.
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
