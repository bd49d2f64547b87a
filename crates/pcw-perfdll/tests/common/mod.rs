// SPDX-License-Identifier: MIT OR Apache-2.0
//! Shared by the host tests: loading the cdylib cargo built for this crate, and decoding
//! replies with pcw-core's validator.
//!
//! **Finding the `.so`.** Integration tests depend on the crate's library target, which cargo
//! builds in one rustc run for both crate types, so the cdylib is always next to the rlib in
//! the profile's `deps/` directory (and uplifted into the profile directory). The test binary
//! runs from that same `deps/`, so `current_exe()`'s directory (then its parent) is searched
//! for `{DLL_PREFIX}pcw_perfdll{DLL_SUFFIX}`; this works for any profile and any
//! `CARGO_TARGET_DIR`.
//!
//! **One DLL instance per test.** The DLL keeps its state in statics, and tests run in
//! parallel; each test therefore copies the file to a unique name under
//! `CARGO_TARGET_TMPDIR` and loads the copy, so every test gets its own instance (the dynamic
//! loader identifies objects by file, not by content).

#![allow(
    dead_code,
    reason = "cdylib.rs uses every helper, so an expectation would go unfulfilled there; \
              disclosure.rs and dump.rs use a part each"
)]

use std::ffi::c_void;
use std::path::{Path, PathBuf};

use pcw_core::v1::validate::{self, Expect};
use pcw_sim::v1_host::CollectFn;

/// The ABI of `OpenPerformanceData` (`PM_OPEN_PROC`).
pub(crate) type OpenFn = unsafe extern "system" fn(*mut u16) -> u32;
/// The ABI of `ClosePerformanceData` (`PM_CLOSE_PROC`).
pub(crate) type CloseFn = unsafe extern "system" fn() -> u32;

/// The built cdylib.
pub(crate) fn cdylib_path() -> PathBuf {
    let name = format!(
        "{}pcw_perfdll{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.to_path_buf(), deps.parent().unwrap().to_path_buf()]
        .into_iter()
        .map(|d| d.join(&name))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name} not found next to {}", exe.display()))
}

/// One loaded copy of the DLL and its three exports.
pub(crate) struct Dll {
    // Kept alive while the function pointers are used.
    _lib: libloading::Library,
    pub open: OpenFn,
    pub collect: CollectFn,
    pub close: CloseFn,
    pub path: PathBuf,
}

impl Dll {
    /// Loads a private copy named after `tag`.
    pub(crate) fn load(tag: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pcw-perfdll-copies");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!(
            "{tag}-{}{}",
            std::process::id(),
            std::env::consts::DLL_SUFFIX
        ));
        std::fs::copy(cdylib_path(), &path).unwrap();
        // SAFETY: the library is this crate's own cdylib; its initialisers are Rust std's.
        let lib = unsafe { libloading::Library::new(&path) }.unwrap();
        // SAFETY: the three symbols have exactly these types (the crate's exports).
        let open = unsafe { *lib.get::<OpenFn>(b"OpenPerformanceData\0").unwrap() };
        // SAFETY: as above.
        let collect = unsafe { *lib.get::<CollectFn>(b"CollectPerformanceData\0").unwrap() };
        // SAFETY: as above.
        let close = unsafe { *lib.get::<CloseFn>(b"ClosePerformanceData\0").unwrap() };
        Self {
            _lib: lib,
            open,
            collect,
            close,
            path,
        }
    }

    /// `OpenPerformanceData` with `strings` as the `Linkage\Export` multi-string (`None`:
    /// NULL).
    pub(crate) fn open_with(&self, strings: Option<&[&str]>) -> u32 {
        let mut multi: Option<Vec<u16>> = strings.map(|s| {
            let mut v = Vec::new();
            for e in s {
                v.extend(e.encode_utf16());
                v.push(0);
            }
            v.push(0);
            v
        });
        let p = multi.as_mut().map_or(std::ptr::null_mut(), Vec::as_mut_ptr);
        // SAFETY: NULL or a double-NUL-terminated multi-string alive across the call.
        unsafe { (self.open)(p) }
    }

    /// `ClosePerformanceData`.
    pub(crate) fn close(&self) -> u32 {
        // SAFETY: no pointers involved.
        unsafe { (self.close)() }
    }
}

impl Drop for Dll {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// First Counter the tests install: the objects get 238, 244 and 260 — so that `2380` and
/// `23` are near misses of a real index, which only a whole-token numeric match rejects
/// (`docs/v1-queries.md`).
pub(crate) const FIRST_COUNTER: u32 = 238;
/// First Help.
pub(crate) const FIRST_HELP: u32 = 239;
/// Object indexes with [`FIRST_COUNTER`]: Geometric Waves, Provider Statistics, Dynamic
/// Queues (the generated `.h` offsets 0, 6, 22).
pub(crate) const OBJECTS: [u32; 3] = [238, 244, 260];

/// The synthetic linkage with a fixed clock at `t` (100 ns units), not advancing.
pub(crate) fn synthetic(t: i64) -> Vec<String> {
    vec![
        "source=synthetic".to_owned(),
        format!("first-counter={FIRST_COUNTER}"),
        format!("first-help={FIRST_HELP}"),
        format!("clock={t}"),
    ]
}

/// `Vec<String>` as `&[&str]`.
pub(crate) fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Object title indexes of a reply (validating it).
pub(crate) fn indexes(data: &[u8], objects: u32, expect: Expect) -> Vec<u32> {
    validate::validate_objects(data, objects as usize, expect).unwrap();
    validate::objects(data, 0, expect)
        .map(|o| o.unwrap().header().object_name_title_index)
        .collect()
}

/// Calls a raw collect with a caller-built query pointer (for queries the host cannot pass,
/// such as NULL output pointers).
pub(crate) fn raw_collect(
    f: CollectFn,
    query: *mut u16,
    data: *mut *mut c_void,
    size: *mut u32,
    count: *mut u32,
) -> u32 {
    // SAFETY: every pointer is NULL or valid for the call (the callers build them so).
    unsafe { f(query, data, size, count) }
}
