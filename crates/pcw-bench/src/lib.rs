// SPDX-License-Identifier: MIT OR Apache-2.0
//! pcw-bench: the benchmark scenarios (the driver's callback, the V1 collect, the snapshot
//! codec) set up side by side with the C baselines of `c/` and the `memcpy` floor, shared by the
//! criterion benches (`benches/`) and the instruction-count driver run under callgrind
//! (`src/bin/pcw-bench-cg.rs`, `scripts/bench.sh`).
//!
//! The library defines no PCW symbol. A binary links either pcw-sim, whose `PcwAddInstance`
//! records what it is given, or the no-op PCW of [`noop_pcw!`], which only counts, to isolate
//! the provider's own cost. The C baseline calls the same `PcwAddInstance` as the driver's code.
//! Likewise for user-mode Perflib: pcw-sim's simulated one, or the stand-in of
//! [`noop_perflib!`], called by pcw-um and by the C baseline alike.
//!
//! Apart from those, [`manifests`] writes large, varied counter manifests for the manifest
//! tools' scaling bench (`benches/manifest.rs`; `src/bin/pcw-bench-manifest.rs` writes one to
//! a file, for timing the `pcw` binary).
#![forbid(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_doc,
    clippy::unnecessary_safety_comment,
    reason = "every unsafe block and unsafe fn states its safety argument; no module opts out"
)]

pub mod alloc_count;
pub mod c;
pub mod device;
pub mod manifests;
pub mod scenarios;
pub mod snap;
pub mod um;
pub mod v1;
pub mod waves;

pub use windows_sys;

// The library's own unit tests resolve the driver's PCW and pcw-um's Perflib routines to
// pcw-sim's (a build that keeps every reference, AddressSanitizer's, links them all).
#[cfg(test)]
use pcw_sim as _;

/// Defines the no-op PCW every PCW and `Ke*` import of the driver resolves to in a binary that
/// does not link pcw-sim: `PcwAddInstance` only counts its calls (read them with
/// [`noop_added`]), the clocks return constants, nothing else does anything. Invoke it once, at
/// the root of the binary.
///
/// The routines the callbacks call (`PcwAddInstance`, the clocks, `KeReadStateEvent`) are as
/// opaque to the optimiser as a kernel import is to a driver: never inlined, their arguments
/// taken as read (`black_box`) and their results unknown. Otherwise the release profile's LTO
/// inlines them into our callback and deletes what PCW would read — the name, the value block,
/// the values themselves, the clock arithmetic — which the C baseline (compiled apart) and the
/// shipped image (calling `ntoskrnl.exe`) both do.
#[macro_export]
macro_rules! noop_pcw {
    () => {
        /// No-op `PcwAddInstance`: counts the call.
        ///
        /// # Safety
        /// None needed: nothing is read.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "system" fn PcwAddInstance(
            buffer: $crate::windows_sys::Wdk::Foundation::PPCW_BUFFER,
            name: *const $crate::windows_sys::Win32::Foundation::UNICODE_STRING,
            id: u32,
            count: u32,
            data: *const $crate::windows_sys::Wdk::System::SystemServices::PCW_DATA,
        ) -> $crate::windows_sys::Win32::Foundation::NTSTATUS {
            ::core::hint::black_box((buffer, name, id, count, data));
            $crate::NOOP_ADDED.fetch_add(1, ::core::sync::atomic::Ordering::Relaxed);
            ::core::hint::black_box(0)
        }

        /// No-op `PcwRegister`: hands out a dummy handle.
        ///
        /// # Safety
        /// `registration` is writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "system" fn PcwRegister(
            registration: *mut $crate::windows_sys::Wdk::Foundation::PPCW_REGISTRATION,
            _info: *const $crate::windows_sys::Wdk::System::SystemServices::PCW_REGISTRATION_INFORMATION,
        ) -> $crate::windows_sys::Win32::Foundation::NTSTATUS {
            // SAFETY: writable per this function's contract.
            unsafe { registration.write(1) };
            0
        }

        /// No-op `PcwUnregister`.
        #[unsafe(no_mangle)]
        pub extern "system" fn PcwUnregister(
            _registration: $crate::windows_sys::Wdk::Foundation::PPCW_REGISTRATION,
        ) {
        }

        /// No-op `PcwCreateInstance`: hands out a dummy handle.
        ///
        /// # Safety
        /// `instance` is writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "system" fn PcwCreateInstance(
            instance: *mut $crate::windows_sys::Wdk::Foundation::PPCW_INSTANCE,
            _registration: $crate::windows_sys::Wdk::Foundation::PPCW_REGISTRATION,
            _name: *const $crate::windows_sys::Win32::Foundation::UNICODE_STRING,
            _count: u32,
            _data: *const $crate::windows_sys::Wdk::System::SystemServices::PCW_DATA,
        ) -> $crate::windows_sys::Win32::Foundation::NTSTATUS {
            // SAFETY: writable per this function's contract.
            unsafe { instance.write(1) };
            0
        }

        /// No-op `PcwCloseInstance`.
        #[unsafe(no_mangle)]
        pub extern "system" fn PcwCloseInstance(
            _instance: $crate::windows_sys::Wdk::Foundation::PPCW_INSTANCE,
        ) {
        }

        /// Constant `KeQueryPerformanceCounter` (10 MHz).
        ///
        /// # Safety
        /// `frequency` is NULL or writable.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "system" fn KeQueryPerformanceCounter(frequency: *mut i64) -> i64 {
            if !frequency.is_null() {
                // SAFETY: writable per this function's contract, checked non-NULL.
                unsafe { frequency.write(::core::hint::black_box(10_000_000)) };
            }
            ::core::hint::black_box($crate::NOOP_TIME)
        }

        /// Constant `KeQuerySystemTimePrecise`.
        ///
        /// # Safety
        /// `time` is writable.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "system" fn KeQuerySystemTimePrecise(time: *mut i64) {
            // SAFETY: writable per this function's contract.
            unsafe { time.write(::core::hint::black_box($crate::NOOP_TIME)) };
        }

        /// `KeReadStateEvent`: never signalled.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn KeReadStateEvent(
            event: *const $crate::windows_sys::Wdk::Foundation::KEVENT,
        ) -> i32 {
            ::core::hint::black_box(event);
            ::core::hint::black_box(0)
        }
    };
}

/// Defines the stand-in Perflib (user-mode V2 provider functions, perflib.h) that pcw-um and the
/// C baseline of `c/um.c` call in a binary that does not link pcw-sim: every call succeeds and
/// does nothing else; the setters count their calls (read them with [`noop_perflib_calls`]);
/// `PerfCreateInstance` hands out one static block (header and counter data, see
/// [`noop_block`]) for every instance. Invoke it once, at the root of the binary, beside
/// [`noop_pcw!`].
///
/// As with the no-op PCW, the functions are opaque to the optimiser (never inlined, arguments
/// black-boxed, results unknown), as `advapi32.dll`'s are to a provider: what is measured is the
/// provider's own work around the calls.
#[macro_export]
macro_rules! noop_perflib {
    () => {
        $crate::noop_perflib!(@setters
            PerfSetULongCounterValue u32,
            PerfSetULongLongCounterValue u64,
            PerfIncrementULongCounterValue u32,
            PerfIncrementULongLongCounterValue u64,
            PerfDecrementULongCounterValue u32,
            PerfDecrementULongLongCounterValue u64,
        );

        /// Stand-in `PerfStartProviderEx`: hands out a dummy handle.
        ///
        /// # Safety
        /// `handle` is writable.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "system" fn PerfStartProviderEx(
            guid: *const $crate::windows_sys::core::GUID,
            context: *const $crate::windows_sys::Win32::System::Performance::PERF_PROVIDER_CONTEXT,
            handle: *mut $crate::windows_sys::Win32::Foundation::HANDLE,
        ) -> u32 {
            ::core::hint::black_box((guid, context));
            // SAFETY: writable per this function's contract.
            unsafe { handle.write(::core::ptr::without_provenance_mut(0x5010)) };
            0
        }

        /// Stand-in `PerfSetCounterSetInfo`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn PerfSetCounterSetInfo(
            handle: $crate::windows_sys::Win32::Foundation::HANDLE,
            template: *mut $crate::windows_sys::Win32::System::Performance::PERF_COUNTERSET_INFO,
            size: u32,
        ) -> u32 {
            ::core::hint::black_box((handle, template, size));
            ::core::hint::black_box(0)
        }

        /// Stand-in `PerfCreateInstance`: the static block of [`noop_block`].
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn PerfCreateInstance(
            handle: $crate::windows_sys::Win32::Foundation::HANDLE,
            set: *const $crate::windows_sys::core::GUID,
            name: *const u16,
            id: u32,
        ) -> *mut $crate::windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE {
            ::core::hint::black_box((handle, set, name, id));
            ::core::hint::black_box($crate::noop_block())
        }

        /// Stand-in `PerfDeleteInstance`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn PerfDeleteInstance(
            handle: $crate::windows_sys::Win32::Foundation::HANDLE,
            block: *const $crate::windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE,
        ) -> u32 {
            ::core::hint::black_box((handle, block));
            ::core::hint::black_box(0)
        }

        /// Stand-in `PerfSetCounterRefValue`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn PerfSetCounterRefValue(
            handle: $crate::windows_sys::Win32::Foundation::HANDLE,
            block: *mut $crate::windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE,
            id: u32,
            address: *const ::core::ffi::c_void,
        ) -> u32 {
            ::core::hint::black_box((handle, block, id, address));
            ::core::hint::black_box(0)
        }

        /// Stand-in `PerfStopProvider`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn PerfStopProvider(
            handle: $crate::windows_sys::Win32::Foundation::HANDLE,
        ) -> u32 {
            ::core::hint::black_box(handle);
            ::core::hint::black_box(0)
        }

        /// Stand-in `GetLastError`: never an error (no stand-in call fails).
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "system" fn GetLastError() -> u32 {
            ::core::hint::black_box(0)
        }
    };
    (@setters $($name:ident $ty:ty,)*) => {
        $(
            /// Stand-in value setter: counts the call.
            #[unsafe(no_mangle)]
            #[inline(never)]
            pub extern "system" fn $name(
                handle: $crate::windows_sys::Win32::Foundation::HANDLE,
                block: *mut $crate::windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE,
                id: u32,
                value: $ty,
            ) -> u32 {
                ::core::hint::black_box((handle, block, id, value));
                $crate::NOOP_PERFLIB_CALLS.fetch_add(1, ::core::sync::atomic::Ordering::Relaxed);
                ::core::hint::black_box(0)
            }
        )*
    };
}

/// Calls of the stand-in Perflib's value setters so far (see [`noop_perflib!`]).
pub static NOOP_PERFLIB_CALLS: core::sync::atomic::AtomicU64 =
    core::sync::atomic::AtomicU64::new(0);

/// Calls of the stand-in Perflib's value setters so far.
pub fn noop_perflib_calls() -> u64 {
    NOOP_PERFLIB_CALLS.load(core::sync::atomic::Ordering::Relaxed)
}

/// The stand-in `PerfCreateInstance`'s block: a `PERF_COUNTERSET_INSTANCE` header followed by
/// room for a counterset's counter data (the C baseline's direct stores land there).
struct NoopBlock(core::cell::UnsafeCell<[u64; 32]>);

// SAFETY: the block is only written through raw pointers by benchmarks, like memory Perflib
// hands a provider; nothing reads it back.
unsafe impl Sync for NoopBlock {}

static NOOP_BLOCK: NoopBlock = NoopBlock(core::cell::UnsafeCell::new([0; 32]));

/// The address the stand-in `PerfCreateInstance` returns for every instance.
pub fn noop_block() -> *mut windows_sys::Win32::System::Performance::PERF_COUNTERSET_INSTANCE {
    NOOP_BLOCK.0.get().cast()
}

/// Calls of the no-op `PcwAddInstance` so far (see [`noop_pcw!`]).
pub static NOOP_ADDED: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// The no-op PCW's clocks: 2026-01-01 in 100 ns units since 1601, plus 3 s.
pub const NOOP_TIME: i64 = 134_116_992_000_000_000 + 30_000_000;

/// Calls of the no-op `PcwAddInstance` so far.
pub fn noop_added() -> u64 {
    NOOP_ADDED.load(core::sync::atomic::Ordering::Relaxed)
}

/// UTF-16 units of `s`.
pub fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// The instance counts every scenario is measured at (BENCHMARKS.md).
pub const SIZES: [usize; 4] = [1, 100, 10_000, 100_000];
