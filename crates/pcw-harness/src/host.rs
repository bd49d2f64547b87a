// SPDX-License-Identifier: MIT OR Apache-2.0
//! The kernel routines a driver's host build calls, as `#[no_mangle] extern "system"`
//! functions: a driver compiled for the host declares them through windows-sys (or its own
//! `extern` blocks), and in a test binary that links this crate the symbols resolve here. Each
//! one forwards to pcw-loader's implementation of the routine — the one a cross-built image's
//! import is bound to — so the host build and the image run against the same I/O manager,
//! pool, locks, contract checks and fault injection.
//!
//! The PCW routines (`PcwRegister` …) and the clock (`KeQueryPerformanceCounter`,
//! `KeQuerySystemTimePrecise`, `KeReadStateEvent`) are pcw-sim's own `#[no_mangle]` functions
//! and are not repeated here. A routine missing from both lists is a link error naming it.

use core::ffi::c_void;

/// The loader's shim of `name`.
fn shim(name: &str) -> usize {
    let found = ["ntoskrnl.exe", "hal.dll"]
        .into_iter()
        .find_map(|dll| pcw_loader::ntos::resolve(dll, name));
    if let Some(address) = found {
        return address;
    }
    // Called from a driver's kernel code, which cannot take an unwinding panic.
    eprintln!("pcw-harness: the loader does not implement `{name}`, which the host build calls");
    std::process::abort();
}

macro_rules! forward {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?; )*) => {
        $(
            $(#[$doc])*
            ///
            /// # Safety
            /// The kernel routine's contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "system" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the loader's shim of this routine, whose signature this is, in its
                // win64 convention.
                let routine = unsafe {
                    core::mem::transmute::<usize, unsafe extern "win64" fn($($ty),*) $(-> $ret)?>(
                        shim(stringify!($name)),
                    )
                };
                // SAFETY: the arguments as the driver passed them (this function's contract).
                unsafe { routine($($arg),*) }
            }
        )*

        /// The routines forwarded to the loader, by name.
        pub const FORWARDED: &[&str] = &[$(stringify!($name)),*];
    };
}

forward! {
    /// `IoCreateDevice`.
    fn IoCreateDevice(
        driver: *mut c_void,
        extension_size: u32,
        name: *const c_void,
        device_type: u32,
        characteristics: u32,
        exclusive: u8,
        device: *mut *mut c_void
    ) -> i32;
    /// `IoDeleteDevice`.
    fn IoDeleteDevice(device: *mut c_void);
    /// `IoCreateSymbolicLink`.
    fn IoCreateSymbolicLink(link: *const c_void, target: *const c_void) -> i32;
    /// `IoDeleteSymbolicLink`.
    fn IoDeleteSymbolicLink(link: *const c_void) -> i32;
    /// `IofCompleteRequest`.
    fn IofCompleteRequest(irp: *mut c_void, boost: i8);
    /// `ObSetSecurityObjectByPointer`.
    fn ObSetSecurityObjectByPointer(object: *mut c_void, information: u32, descriptor: *const c_void) -> i32;
    /// `ExAllocatePool2`.
    fn ExAllocatePool2(flags: u64, size: usize, tag: u32) -> *mut c_void;
    /// `ExFreePoolWithTag`.
    fn ExFreePoolWithTag(block: *mut c_void, tag: u32);
    /// `ExFreePool`.
    fn ExFreePool(block: *mut c_void);
    /// `KeEnterCriticalRegion`.
    fn KeEnterCriticalRegion();
    /// `KeLeaveCriticalRegion`.
    fn KeLeaveCriticalRegion();
    /// `ExAcquirePushLockExclusiveEx`.
    fn ExAcquirePushLockExclusiveEx(lock: *mut usize, flags: u32);
    /// `ExReleasePushLockExclusiveEx`.
    fn ExReleasePushLockExclusiveEx(lock: *mut usize, flags: u32);
    /// `ExAcquirePushLockSharedEx`.
    fn ExAcquirePushLockSharedEx(lock: *mut usize, flags: u32);
    /// `ExReleasePushLockSharedEx`.
    fn ExReleasePushLockSharedEx(lock: *mut usize, flags: u32);
}

#[cfg(test)]
mod tests {
    use super::FORWARDED;

    #[test]
    fn every_forwarded_routine_is_one_the_loader_implements() {
        for name in FORWARDED {
            assert!(
                ["ntoskrnl.exe", "hal.dll"]
                    .into_iter()
                    .any(|dll| pcw_loader::ntos::resolve(dll, name).is_some()),
                "`{name}` is forwarded but the loader does not implement it"
            );
        }
    }
}
