// SPDX-License-Identifier: MIT OR Apache-2.0
//! Generates the service's counter module from `tidal_service.man` with pcw-gen.

fn main() -> Result<(), pcw_gen::Error> {
    pcw_gen::Config::new().compile("tidal_service.man")?;
    Ok(())
}
