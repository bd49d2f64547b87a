// SPDX-License-Identifier: MIT OR Apache-2.0
//! `pcw new` as a user runs it: the crate's files, all or nothing, an existing directory
//! refused unless `--force`, a manifest it cannot use refused by name, and the driver models it
//! does not make refused with what differs. (That the crates it writes pass their tests and
//! build into images is the test command's scaffold stage.)

mod common;

use std::fs;

use common::pcw;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn writes_a_driver_crate_and_refuses_to_overwrite_it() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("my-driver");
    let out = pcw(&["new", dest.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for file in [
        "Cargo.toml",
        "build.rs",
        "Makefile.toml",
        "my_driver.inx",
        "my_driver.man",
        ".cargo/config.toml",
        "src/lib.rs",
        "src/kernel.rs",
        "src/counters.rs",
        "src/wdm.rs",
        "tests/driver.rs",
        "tests/requests.rs",
    ] {
        assert!(dest.join(file).is_file(), "{file} missing");
    }
    let cargo = fs::read_to_string(dest.join("Cargo.toml")).unwrap();
    assert!(cargo.contains("name = \"my-driver\""), "{cargo}");
    // Without `--pcw-rs` it depends on the registry's versions, and says how to use a checkout.
    assert!(
        cargo.contains(&format!("version = \"{}\"", env!("CARGO_PKG_VERSION"))),
        "{cargo}"
    );
    assert!(
        stderr(&out).contains("from the package registry")
            && stderr(&out).contains("`--pcw-rs DIR`"),
        "{}",
        stderr(&out)
    );
    assert!(cargo.contains("driver-type = \"WDM\""), "{cargo}");
    // Fresh GUIDs every time.
    let other = dir.path().join("other-driver");
    assert!(pcw(&["new", other.to_str().unwrap()]).status.success());
    let guid = |m: &str| m.split("providerGuid=\"").nth(1).unwrap()[..38].to_owned();
    assert_ne!(
        guid(&fs::read_to_string(dest.join("my_driver.man")).unwrap()),
        guid(&fs::read_to_string(other.join("other_driver.man")).unwrap())
    );
    // An existing directory: refused, untouched; replaced whole with `--force`.
    fs::write(dest.join("mine.txt"), "keep").unwrap();
    let out = pcw(&["new", dest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("already exists; add `--force` to replace it"),
        "{}",
        stderr(&out)
    );
    assert!(dest.join("mine.txt").exists());
    let out = pcw(&["new", dest.to_str().unwrap(), "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dest.join("mine.txt").exists());
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        2,
        "nothing staged is left"
    );
}

#[test]
fn an_existing_manifest_gets_a_publisher_per_counterset() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("ported");
    let manifest = common::crate_file("tests/fixtures/xdp_like.man");
    let out = pcw(&["new", dest.to_str().unwrap(), "--manifest", &manifest]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs::read(dest.join("ported.man")).unwrap(),
        fs::read(&manifest).unwrap()
    );
    let counters = fs::read_to_string(dest.join("src/counters.rs")).unwrap();
    for set in ["rx_queue", "lwf_rx_queue", "lwf_tx_queue"] {
        assert!(
            counters.contains(&format!("impl Publish<generated::ported::{set}::Set> for")),
            "{set}"
        );
    }
    assert!(!dest.join("tests/requests.rs").exists());
    assert!(
        stderr(&out).contains("`applicationIdentity` is `xdp_like.sys`"),
        "{}",
        stderr(&out)
    );
}

/// A counterset named with a bidi control (which lint accepts, with its non-ASCII warning):
/// `counters.rs` carries the name in a doc comment, where rustc refuses the raw character, so
/// the crate would not build. It is written escaped, as pcw-gen writes it.
#[test]
fn a_name_with_a_bidi_control_is_escaped_in_the_publishers_comments() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = fs::read_to_string(common::crate_file("tests/fixtures/xdp_like.man")).unwrap();
    let tricky = manifest.replace(
        "name=\"Sample XDP Receive Queue\"",
        "name=\"Sample XDP &#x202E;Receive Queue\"",
    );
    assert_ne!(tricky, manifest);
    let path = dir.path().join("rtl.man");
    fs::write(&path, tricky).unwrap();
    let dest = dir.path().join("rtl");
    let out = pcw(&[
        "new",
        dest.to_str().unwrap(),
        "--manifest",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let counters = fs::read_to_string(dest.join("src/counters.rs")).unwrap();
    assert!(!counters.contains('\u{202e}'), "{counters}");
    assert!(
        counters.contains("/// `Sample XDP \\u{202e}Receive Queue` ("),
        "{counters}"
    );
}

#[test]
fn what_it_cannot_make_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let tidal = common::crate_file("../pcw-gen/tests/manifests/tidal_user.man");
    let not_xml = common::crate_file("Cargo.toml");
    let refusals: [(Vec<String>, &str); 14] = [
        (
            vec![at("k"), "--kmdf".into()],
            "KMDF driver gets its counters the same way",
        ),
        (vec![at("u"), "--umdf".into()], "Perflib V2"),
        (vec![at("Bad Name")], "cannot name a driver crate"),
        (vec![at("fn")], "cannot name a driver crate"),
        (vec![at(&"a".repeat(65))], "it has 65 characters"),
        (vec![at(&"é".repeat(40))], "use lower-case words"),
        (
            vec![at("pcw-rt")],
            "the name of a crate the driver depends on",
        ),
        (
            vec![at("windows-sys")],
            "the name of a crate the driver depends on",
        ),
        (vec![at("counters")], "the crate's module of counters"),
        (vec![at("con")], "Windows reserves it for a device"),
        (vec![at("lpt9")], "Windows reserves it for a device"),
        (
            vec![at("elsewhere"), "--pcw-rs".into(), at("nowhere")],
            "is not a pcw-rs checkout",
        ),
        (
            vec![at("um"), "--manifest".into(), tidal],
            "declares a user-mode provider",
        ),
        (
            vec![at("broken"), "--manifest".into(), not_xml],
            "Cargo.toml",
        ),
    ];
    for (args, says) in refusals {
        let args: Vec<&str> = ["new"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .collect();
        let out = pcw(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_relative_pcw_rs_checkout_is_named_from_where_pcw_ran() {
    // Cargo reads a dependency's relative path from the new crate's directory: the crate names
    // the checkout by its absolute path.
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("near-driver");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pcw"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["new", dest.to_str().unwrap(), "--pcw-rs", "../.."])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = fs::read_to_string(dest.join("Cargo.toml")).unwrap();
    let rt = std::path::absolute(root.join("crates/pcw-rt")).unwrap();
    assert!(
        manifest.contains(&format!("path = \"{}\"", rt.display())),
        "{manifest}"
    );
}
