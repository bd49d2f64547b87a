// SPDX-License-Identifier: MIT OR Apache-2.0
//! Crafted code run by the loader's tests: assembled, mapped as an image of its own, called
//! at its entry, and, in a child scenario, expected to be stopped by the loader.

use iced_x86::code_asm::CodeAssembler;
use pcw_loader::MappedImage;
use pcw_loader::isolate::{ScenarioFailure, is_child, run_child};
use pcw_loader::ntos;

use crate::crafted;

/// A 64-bit assembler.
pub(crate) fn asm() -> CodeAssembler {
    CodeAssembler::new(64).unwrap()
}

/// Maps `code` as a crafted image.
pub(crate) fn map(code: CodeAssembler) -> MappedImage {
    let bytes = crafted::Image {
        code: crafted::assemble(code),
        ..crafted::Image::default()
    }
    .build();
    MappedImage::map(&bytes, &ntos::resolve).expect("the crafted image maps")
}

type Entry = unsafe extern "win64" fn(u64, u64) -> u64;

/// Calls the image's entry with two arguments.
pub(crate) fn call(image: &MappedImage, a: u64, b: u64) -> u64 {
    // SAFETY: the crafted code follows the win64 convention and touches only its registers,
    // the emulated state, or faults before it touches anything else.
    let f = unsafe { core::mem::transmute::<usize, Entry>(image.entry_point()) };
    // SAFETY: as above.
    unsafe { f(a, b) }
}

/// Runs `code` with the arguments `args` in the child `scenario` and expects the loader to
/// stop it with a reason containing each of `needles`.
pub(crate) fn expect_stop(
    scenario: &str,
    code: impl FnOnce() -> CodeAssembler,
    args: (u64, u64),
    needles: &[&str],
) {
    if is_child(scenario) {
        let image = map(code());
        call(&image, args.0, args.1);
        panic!("the image returned");
    }
    match run_child(scenario) {
        Err(ScenarioFailure::Stopped { reason, .. }) => {
            for needle in needles {
                assert!(reason.contains(needle), "`{needle}` not in: {reason}");
            }
        }
        other => panic!("expected the loader to stop {scenario}, got {other:?}"),
    }
}
