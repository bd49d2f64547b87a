// SPDX-License-Identifier: MIT OR Apache-2.0
//! Every valid manifest generates code that compiles: the kernel-mode keyword manifest of
//! build.rs (every manifest-derived identifier a Rust keyword, a primitive type, a prelude name
//! or a name the generators use; the user-mode one is `tests/keywords_user.rs`) is compiled
//! into this test (not into the library, whose
//! type names would change the paths the `tests/ui` diagnostics print); here their text parses
//! with `syn`, holds no `compile_error!`, and the escaped and disambiguated names are the
//! documented ones (this file would not compile otherwise).
#![cfg(not(windows))]

use pcw_gen_check::fake_pcw::{self, SERIAL};
// The runtime contract the kernel-mode module names (`::pcw_rt`), with the library's fake PCW
// behind it.
use pcw_gen_check as _;

include!(concat!(env!("OUT_DIR"), "/kernel_keywords.rs"));

use kernel_keywords as k;

/// The generated text, for `syn`.
mod keywords_rs {
    pub const KERNEL: &str = include_str!(concat!(env!("OUT_DIR"), "/kernel_keywords.rs"));
}

#[test]
fn keyword_modules_parse() {
    let text = keywords_rs::KERNEL;
    assert!(!text.contains("compile_error!"), "{text}");
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.items.len(), 1, "one top-level module");
}

#[test]
fn keywords_are_raw_or_suffixed_and_clashes_take_the_counter_id() {
    // Kernel mode: modules (`self` and `Self` both become `self_`, the second `self_2`), id
    // constants from symbols and names, struct types and fields.
    let _ = (
        k::r#type::GUID,
        k::self_::GUID,
        k::self_2::GUID,
        k::r#gen::GUID,
    );
    let _ = (k::u32::GUID, k::str::GUID, k::ids::ids::IDS, k::set::GUID);
    assert_eq!((k::r#type::ids::TYPE, k::r#type::ids::TYPE_1), (0, 1));
    let _ = k::r#type::Type { r#type: 0, f1: 0 };
    let _ = k::self_::Self_ { self_: 0, f1: 0 };
    let _ = k::registration::RegistrationValues {
        registration: 0,
        f1: 0,
    };
    let _ = (
        k::named::ids::SELF,
        k::named::ids::TYPE,
        k::upper::ids::SELF,
    );
    assert_eq!(
        (
            k::clash::ids::BYTES_SEC,
            k::clash::ids::BYTES_SEC_2,
            k::clash::ids::BYTES_SEC_2_3
        ),
        (1, 2, 3)
    );
}

/// A keyword-named kernel set registers and unregisters like any other.
#[test]
fn a_keyword_set_registers() {
    let _guard = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    fake_pcw::reset();
    // SAFETY: no callback, so no context to keep alive.
    let registration = unsafe { k::r#fn::register(None, core::ptr::null_mut()) }.unwrap();
    drop(registration);
}
