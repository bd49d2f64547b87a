// SPDX-License-Identifier: MIT OR Apache-2.0
//! Whole pipeline: any manifest that validates must generate, and the Rust output must parse
//! and carry no `compile_error!` (a file of one would parse, and fail every build).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = pcw_gen::Input::new("fuzz.man", data);
    if let Ok(generated) = pcw_gen::Config::new().generate(&input) {
        if let Err(e) = syn::parse_file(&generated.rust) {
            panic!("generated code does not parse: {e}\n{}", generated.rust);
        }
        if generated.rust.contains("compile_error!") {
            panic!("a valid manifest generated a compile_error!:\n{}", generated.rust);
        }
        let _ = generated.inspect.to_json();
    }
});
