// SPDX-License-Identifier: MIT OR Apache-2.0
//! Derives the service's manifest (`tidal_service.man`), its string table (`.rc`, and the `.res`
//! linked into the executable on Windows) and the lodctr files from the `counters!` declaration
//! in `src/declaration.rs`; the macro itself expands the code.

fn main() -> Result<(), pcw_gen::Error> {
    pcw_gen::Config::new().compile_declarations("src/declaration.rs")?;
    Ok(())
}
