// SPDX-License-Identifier: MIT OR Apache-2.0
//! `tidal-service [SECONDS]`: runs the example service (a tick every 100 ms) for SECONDS
//! (default 3). Off Windows the counters go to pcw-sim's simulated Perflib, and once a second
//! the service prints what a consumer collects from it there.
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

use std::time::{Duration, Instant};

fn main() -> std::process::ExitCode {
    let seconds: u64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 3,
        Some(Ok(s)) => s,
        Some(Err(_)) => {
            eprintln!("error: usage: tidal-service [SECONDS]");
            return std::process::ExitCode::FAILURE;
        }
    };
    let service = match pcw_tidal::Service::start(Duration::from_millis(100)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let end = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_secs(1));
        #[cfg(not(windows))]
        for (name, guid) in [
            ("Tidal Harbors", pcw_tidal::counters::tidal_harbors::GUID),
            ("Tidal Moon", pcw_tidal::counters::tidal_moon::GUID),
        ] {
            for i in pcw_sim::usermode::collect(guid).unwrap_or_default() {
                println!("{name}({}): {:?}", i.name, i.values);
            }
        }
    }
    match service.stop() {
        Ok(ticks) => {
            println!("published {ticks} ticks");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
