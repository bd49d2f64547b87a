// SPDX-License-Identifier: MIT OR Apache-2.0
//! The checksum driver's build script. On a Windows build machine with the WDK, the `wdk`
//! feature has wdk-build configure the kernel-driver link (as windows-drivers-rs's samples do);
//! the Linux stage that builds the WDK flavour (scripts/wdk-build.sh) gives the link its
//! arguments itself. Then pcw-gen compiles the counter manifest into `OUT_DIR`.

fn main() {
    #[cfg(windows)]
    if std::env::var_os("CARGO_FEATURE_WDK").is_some() {
        if let Err(e) = wdk_build::configure_wdk_binary_build() {
            panic!("wdk-build could not configure the WDK build: {e}");
        }
    }
    pcw_gen::compile("checksum_driver.man").unwrap_or_else(|e| panic!("{e}"));
}
