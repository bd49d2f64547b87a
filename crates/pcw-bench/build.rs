// SPDX-License-Identifier: MIT OR Apache-2.0
//! Compiles the C baselines (c/kcs.c, c/perfgen.c, c/um.c) at -O2 and the callgrind client-request
//! shim.

fn main() {
    for f in [
        "c/pcw.h",
        "c/perflib.h",
        "c/kcs.c",
        "c/perfgen.c",
        "c/um.c",
        "c/cg.c",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    let mut build = cc::Build::new();
    build
        .files(["c/kcs.c", "c/perfgen.c", "c/um.c", "c/cg.c"])
        .opt_level(2)
        .debug(true)
        .warnings(true)
        .flag_if_supported("-std=c11")
        .flag_if_supported("-fno-strict-aliasing");
    if std::path::Path::new("/usr/include/valgrind/callgrind.h").exists() {
        build.define("PCW_BENCH_HAVE_CALLGRIND", None);
    }
    build.compile("pcw_bench_c");
}
