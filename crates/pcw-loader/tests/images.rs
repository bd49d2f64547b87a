// SPDX-License-Identifier: MIT OR Apache-2.0
//! Images as C toolchains make them, crafted: relocation-stripped images mapped at their
//! preferred base (and refused by name when it cannot be had), base relocations applied, MSVC's
//! `/GS` cookie initialised as the kernel's loader does, `__C_specific_handler` bound, and an
//! image with several routines the loader lacks refused with all of them.

mod crafted;

use iced_x86::Register;
use iced_x86::code_asm::{CodeAssembler, rax};
use pcw_loader::isolate::{ScenarioFailure, is_child, isolated, run_child};
use pcw_loader::{LoadError, LoadedDriver, MappedImage, ntos};

/// Code returning its own address: `lea rax, [rip + .text]; ret`.
fn where_am_i() -> Vec<u8> {
    let mut a = CodeAssembler::new(64).unwrap();
    crafted::lea_rip(&mut a, Register::RAX, crafted::TEXT);
    a.ret().unwrap();
    crafted::assemble(a)
}

fn call0(image: &MappedImage) -> u64 {
    // SAFETY: crafted win64 code with no arguments.
    let f = unsafe {
        core::mem::transmute::<usize, unsafe extern "win64" fn() -> u64>(image.entry_point())
    };
    // SAFETY: as above.
    unsafe { f() }
}

#[test]
fn a_relocation_stripped_image_runs_at_its_preferred_base() {
    isolated(
        "a_relocation_stripped_image_runs_at_its_preferred_base",
        || {
            // Above AddressSanitizer's shadow memory, so that the scenario runs under it too.
            let base = 0x6000_0000_0000u64;
            let bytes = crafted::Image {
                code: where_am_i(),
                image_base: base,
                relocs_stripped: true,
                ..crafted::Image::default()
            }
            .build();
            let image = MappedImage::map(&bytes, &ntos::resolve).expect("mapped at its base");
            assert_eq!(image.base() as u64, base);
            assert_eq!(call0(&image), base + u64::from(crafted::TEXT));
        },
    );
}

#[test]
fn a_relocation_stripped_image_whose_base_is_taken_is_refused_by_name() {
    // Above AddressSanitizer's shadow memory, so that the scenario runs under it too.
    let base = 0x6000_1000_0000u64;
    // SAFETY: an anonymous mapping at a fixed address nothing else uses in this test process.
    let taken = unsafe {
        libc::mmap(
            base as *mut libc::c_void,
            0x1000,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    assert_eq!(taken as u64, base);
    let bytes = crafted::Image {
        image_base: base,
        relocs_stripped: true,
        ..crafted::Image::default()
    }
    .build();
    let e = MappedImage::map(&bytes, &ntos::resolve).unwrap_err();
    assert_eq!(
        e.to_string(),
        "relocations stripped: the image can only run at 0x600010000000, which is in use in \
         this process"
    );
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(taken, 0x1000) };
    let bytes = crafted::Image {
        image_base: 0xFFFF_F800_0000_0000,
        relocs_stripped: true,
        ..crafted::Image::default()
    }
    .build();
    let e = MappedImage::map(&bytes, &ntos::resolve).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::RelocationsStripped {
                base: 0xFFFF_F800_0000_0000,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .ends_with("which is not a user-space address this process can map")
    );
}

#[test]
fn base_relocations_are_applied_wherever_the_image_lands() {
    // .data[0..8] holds the VA of .text at the preferred base, with a DIR64 relocation.
    let preferred = 0x1_4000_0000u64;
    let mut data = (preferred + u64::from(crafted::TEXT))
        .to_le_bytes()
        .to_vec();
    data.resize(16, 0);
    let bytes = crafted::Image {
        data,
        image_base: preferred,
        relocations: vec![crafted::DATA],
        ..crafted::Image::default()
    }
    .build();
    let image = MappedImage::map(&bytes, &ntos::resolve).unwrap();
    assert_ne!(image.base() as u64, preferred, "mapped elsewhere");
    // SAFETY: .data of the mapped image, readable.
    let value = unsafe { ((image.base() + crafted::DATA as usize) as *const u64).read_unaligned() };
    assert_eq!(value, image.base() as u64 + u64::from(crafted::TEXT));
}

/// The x64 compilers' default `__security_cookie`.
const DEFAULT_COOKIE: u64 = 0x0000_2B99_2DDF_A232;

fn cookie_image(value: u64) -> Vec<u8> {
    let mut data = vec![0u8; 0x200];
    data[0x180..0x188].copy_from_slice(&value.to_le_bytes());
    crafted::Image {
        data,
        load_config: Some((0, 0x180)),
        ..crafted::Image::default()
    }
    .build()
}

#[test]
fn the_gs_cookie_is_initialised_as_the_kernel_does() {
    let mut seen = Vec::new();
    for _ in 0..4 {
        let image = MappedImage::map(&cookie_image(DEFAULT_COOKIE), &ntos::resolve).unwrap();
        let (at, value) = image
            .security_cookie()
            .expect("the load config names a cookie");
        assert_eq!(at, image.base() + crafted::DATA as usize + 0x180);
        // SAFETY: the cookie inside the mapped image.
        let stored = unsafe { (at as *const u64).read_unaligned() };
        assert_eq!(stored, value);
        assert_ne!(value, DEFAULT_COOKIE);
        assert_ne!(value, 0);
        assert_eq!(value >> 48, 0, "48 bits, as on x64: {value:#x}");
        seen.push(value);
    }
    seen.dedup();
    assert!(seen.len() > 1, "random per load: {seen:x?}");
    // A cookie the image set itself is kept.
    let image = MappedImage::map(&cookie_image(0x1234), &ntos::resolve).unwrap();
    assert_eq!(image.security_cookie().map(|c| c.1), Some(0x1234));
    // One outside the image is refused.
    let mut bytes = cookie_image(DEFAULT_COOKIE);
    let at = bytes
        .windows(8)
        .position(|w| w == (0x1_4000_0000u64 + 0x2180).to_le_bytes())
        .unwrap();
    bytes[at..at + 8].copy_from_slice(&0x7_0000_0000u64.to_le_bytes());
    let e = MappedImage::map(&bytes, &ntos::resolve).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("load configuration: `SecurityCookie` "),
        "{e}"
    );
}

#[test]
fn c_specific_handler_binds() {
    let bytes = crafted::Image {
        imports: vec![("ntoskrnl.exe".into(), "__C_specific_handler".into())],
        ..crafted::Image::default()
    }
    .build();
    let image = MappedImage::map(&bytes, &ntos::resolve).unwrap();
    assert_eq!(image.imports(), ["ntoskrnl.exe!__C_specific_handler"]);
}

#[test]
fn every_missing_import_is_named_at_once() {
    let bytes = crafted::Image {
        imports: [
            ("ntoskrnl.exe", "PcwRegister"),
            ("ntoskrnl.exe", "KeSetTimer"),
            ("ntoskrnl.exe", "NoSuchRoutine"),
            ("HAL.dll", "KeQueryPerformanceCounter"),
            ("hal.dll", "HalMakeBeep"),
            ("ntoskrnl.exe", "KfAcquireSpinLock"),
        ]
        .iter()
        .map(|(d, n)| ((*d).to_owned(), (*n).to_owned()))
        .collect(),
        ..crafted::Image::default()
    }
    .build();
    let e = LoadedDriver::load(&bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "4 unsupported imports: ntoskrnl.exe!KeSetTimer (timers are not emulated), \
         ntoskrnl.exe!NoSuchRoutine, ntoskrnl.exe!KfAcquireSpinLock, hal.dll!HalMakeBeep"
    );
}

#[test]
fn ke_bug_check_ex_stops_the_image_by_name() {
    const NAME: &str = "ke_bug_check_ex_stops_the_image_by_name";
    if is_child(NAME) {
        let slots = crafted::slots(&[("ntoskrnl.exe", "KeBugCheckEx")]);
        let mut a = CodeAssembler::new(64).unwrap();
        a.sub(iced_x86::code_asm::rsp, 0x38).unwrap();
        a.mov(iced_x86::code_asm::ecx, 0xDEADu32).unwrap();
        a.mov(iced_x86::code_asm::edx, 1).unwrap();
        a.xor(iced_x86::code_asm::r8d, iced_x86::code_asm::r8d)
            .unwrap();
        a.xor(iced_x86::code_asm::r9d, iced_x86::code_asm::r9d)
            .unwrap();
        a.mov(
            iced_x86::code_asm::qword_ptr(iced_x86::code_asm::rsp + 0x20),
            rax,
        )
        .unwrap();
        crafted::call_import(&mut a, slots[0]);
        a.int3().unwrap();
        let bytes = crafted::Image {
            code: crafted::assemble(a),
            imports: vec![("ntoskrnl.exe".into(), "KeBugCheckEx".into())],
            ..crafted::Image::default()
        }
        .build();
        let image = MappedImage::map(&bytes, &ntos::resolve).unwrap();
        call0(&image);
        unreachable!("KeBugCheckEx returned");
    }
    match run_child(NAME) {
        Err(ScenarioFailure::Stopped { reason, .. }) => {
            assert!(
                reason.starts_with("the image called KeBugCheckEx(0xDEAD, 0x1, 0x0, 0x0,"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}
