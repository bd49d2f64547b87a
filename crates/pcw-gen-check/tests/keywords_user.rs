// SPDX-License-Identifier: MIT OR Apache-2.0
//! Every valid user-mode manifest generates code that compiles: build.rs's user-mode keyword
//! manifest (every derived identifier a Rust keyword, a primitive type, a prelude name or a
//! name the generator uses) compiled here over pcw-um, whose Perflib functions resolve to
//! pcw-sim's simulated ones (a test binary of its own: the kernel-mode one links the library's
//! fake PCW, which would clash with the simulator's kernel symbols). Its text parses with
//! `syn`, holds no `compile_error!`, and the escaped and disambiguated names are the documented
//! ones (this file would not compile otherwise).
#![cfg(not(windows))]

// The simulated Perflib the generated module's runtime calls into.
use pcw_sim as _;

include!(concat!(env!("OUT_DIR"), "/user_keywords.rs"));

use user_keywords as u;

const TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/user_keywords.rs"));

#[test]
fn the_keyword_module_parses() {
    assert!(!TEXT.contains("compile_error!"), "{TEXT}");
    let file = syn::parse_file(TEXT).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.items.len(), 1, "one top-level module");
}

#[test]
fn keywords_are_raw_or_suffixed_and_clashes_take_the_counter_id() {
    // The reference counter's getter is the raw keyword; the value counter's setter
    // would clash with its setter and takes its id.
    let _: for<'a> fn(
        &'a u::r#type::Instance<'static>,
    ) -> Result<&'a std::sync::atomic::AtomicU64, pcw_um::Error> = u::r#type::Instance::r#type;
    let _: fn(&u::r#type::Instance<'static>, u64) -> Result<(), pcw_um::Error> =
        u::r#type::Instance::set_type;
    let _: fn(&u::r#type::Instance<'static>, u32) -> Result<(), pcw_um::Error> =
        u::r#type::Instance::increment_type_2;
    let _ = (u::self_::Instance::self_, u::r#fn::Instance::r#fn);
    assert_eq!((u::r#type::ids::TYPE, u::r#type::ids::TYPE_2), (1, 2));
    let _ = (
        u::clash::Instance::set_bytes_sec,
        u::clash::Instance::set_bytes_sec_2,
        u::clash::Instance::set_bytes_sec_3,
        u::clash::Instance::set_set_bytes_sec_3,
        u::clash::Instance::increment_counter_2nd_pass,
        u::clash::Instance::counter_3rd_pass,
    );
}

#[test]
fn the_keyword_provider_starts_under_the_simulated_perflib() {
    let provider = u::start().unwrap();
    drop(provider);
}
