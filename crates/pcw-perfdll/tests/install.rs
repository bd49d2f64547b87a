// SPDX-License-Identifier: MIT OR Apache-2.0
//! Install assets pinned by golden files: the `.reg` fragment written at
//! build time into `OUT_DIR` equals both the golden copy and what [`RegFragment`] writes, and
//! the lodctr `.h`/`.ini` in `OUT_DIR` are pinned too. Bless with
//! `PCW_BLESS=1 cargo test -p pcw-perfdll --test install`.

use std::path::Path;

use pcw_perfdll::install::{DEFAULT_EXPORT, DEFAULT_LIBRARY, RegFragment};

fn out(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("OUT_DIR")).join(name)).unwrap()
}

/// UTF-16LE with a BOM → text.
fn utf16(bytes: &[u8]) -> String {
    assert_eq!(&bytes[..2], [0xFF, 0xFE], "no BOM");
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).unwrap()
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("PCW_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    // Line ends are compared normalised, in case a checkout converts them.
    let expected = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\r\n", "\n");
    assert_eq!(
        actual.replace("\r\n", "\n"),
        expected,
        "{name} differs; bless with PCW_BLESS=1"
    );
}

#[test]
fn the_reg_fragment_is_pinned() {
    let built = out("pcw_perfdll.reg");
    let fragment = RegFragment {
        service: "pcw_driver",
        library: DEFAULT_LIBRARY,
        export: &DEFAULT_EXPORT,
        supports_metadata: true,
    };
    assert_eq!(built, fragment.bytes());
    assert_eq!(built, pcw_perfdll::assets::REG_FRAGMENT);
    let text = utf16(&built);
    assert!(text.starts_with("Windows Registry Editor Version 5.00\r\n"));
    golden("pcw_perfdll.reg", &text);

    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("written.reg");
    fragment.write(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), built);
}

#[test]
fn hex_values_round_trip() {
    // `Library` (REG_EXPAND_SZ) and `Export` (REG_MULTI_SZ) as the UTF-16LE regedit expects.
    let text = RegFragment {
        service: "svc",
        library: "a.dll",
        export: &["x=1", "y"],
        supports_metadata: false,
    }
    .text();
    assert!(
        text.contains("\"Library\"=hex(2):61,00,2e,00,64,00,6c,00,6c,00,00,00\r\n"),
        "{text}"
    );
    assert!(
        text.contains("\"Export\"=hex(7):78,00,3d,00,31,00,00,00,79,00,00,00,00,00\r\n"),
        "{text}"
    );
    assert!(
        text.contains(r"[HKEY_LOCAL_MACHINE\SYSTEM\CurrentControlSet\Services\svc\Performance]")
    );
    assert!(!text.contains("Collect Supports Metadata"));
}

#[test]
fn the_lodctr_files_are_pinned() {
    golden(
        "pcw_driver.h",
        &String::from_utf8(out("pcw_driver.h")).unwrap(),
    );
    let ini = utf16(&out("pcw_driver.ini"));
    assert!(ini.contains("drivername=pcw_driver\r\n"));
    assert!(ini.contains("symbolfile=pcw_driver.h\r\n"));
    golden("pcw_driver.ini", &ini);
}
