//! On a Windows build machine with the WDK, the `wdk` feature has wdk-build configure the
//! kernel-driver link; then pcw-gen compiles the counter manifest into `OUT_DIR` (and, building
//! for Windows, hands the linker the counter names as a string table).

fn main() {
    #[cfg(windows)]
    if std::env::var_os("CARGO_FEATURE_WDK").is_some() {
        if let Err(e) = wdk_build::configure_wdk_binary_build() {
            panic!("wdk-build could not configure the WDK build: {e}");
        }
    }
    pcw_gen::compile("{{snake}}.man").unwrap_or_else(|e| panic!("{e}"));
}
