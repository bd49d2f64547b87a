// SPDX-License-Identifier: MIT OR Apache-2.0
//! The routines C drivers import, called the way an image calls them: through the address the
//! loader binds (`ntos::resolve`), as `extern "win64"` functions, with structures laid out at
//! the WDK's offsets. Each checks its documented answer and the misuse it reports. Every test
//! runs in a child process, since the kernel's state is per process.

use std::ffi::c_void;

use pcw_loader::isolate::isolated;
use pcw_loader::ntos::{self, DISPATCH_LEVEL};

/// The shim bound for `ntoskrnl.exe!name`, as a function of type `F`.
fn nt<F: Copy>(name: &str) -> F {
    let address = ntos::resolve("ntoskrnl.exe", name).unwrap_or_else(|| panic!("{name} is bound"));
    assert_eq!(size_of::<F>(), size_of::<usize>());
    // SAFETY: `F` is the routine's win64 signature (each test spells it).
    unsafe { core::mem::transmute_copy::<usize, F>(&address) }
}

/// A `UNICODE_STRING` at the WDK's layout: `Length`, `MaximumLength`, (pad), `Buffer`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Us {
    length: u16,
    maximum: u16,
    buffer: *mut u16,
}

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain([0]).collect()
}

/// The text of a counted string.
fn text(s: &Us) -> String {
    // SAFETY: the shims keep Length within the buffer.
    let units = unsafe { core::slice::from_raw_parts(s.buffer, usize::from(s.length / 2)) };
    String::from_utf16_lossy(units)
}

/// Calls the shim bound for `ntoskrnl.exe!$name` as `extern "win64" fn($t…) -> $r`.
macro_rules! k {
    ($name:literal: fn($($t:ty),*) -> $r:ty $(, $a:expr)*) => {{
        let f: unsafe extern "win64" fn($($t),*) -> $r = nt($name);
        // SAFETY: the routine's win64 signature, with arguments valid for it: each test passes
        // live buffers laid out at the WDK's offsets.
        unsafe { f($($a),*) }
    }};
}

/// Violations so far, as text.
fn flagged() -> Vec<String> {
    ntos::violations().iter().map(ToString::to_string).collect()
}

fn init_us(s: &mut Us, source: *const u16) {
    k!("RtlInitUnicodeString": fn(*mut Us, *const u16) -> (), s, source);
}

fn compare_us(a: &Us, b: &Us, fold: u8) -> i32 {
    k!("RtlCompareUnicodeString": fn(*const Us, *const Us, u8) -> i32, a, b, fold)
}

fn equal_us(a: &Us, b: &Us, fold: u8) -> u8 {
    k!("RtlEqualUnicodeString": fn(*const Us, *const Us, u8) -> u8, a, b, fold)
}

fn empty() -> Us {
    Us {
        length: 0,
        maximum: 0,
        buffer: core::ptr::null_mut(),
    }
}

#[test]
fn strings_are_initialised_copied_and_appended_as_the_rtl_routines_do() {
    isolated(
        "strings_are_initialised_copied_and_appended_as_the_rtl_routines_do",
        || {
            let source = wide("Queue 7");
            let mut s = Us {
                length: 9,
                maximum: 9,
                buffer: core::ptr::null_mut(),
            };
            init_us(&mut s, source.as_ptr());
            assert_eq!(
                (s.length, s.maximum, s.buffer.cast_const()),
                (14, 16, source.as_ptr())
            );
            init_us(&mut s, core::ptr::null());
            assert_eq!(
                (s.length, s.maximum, s.buffer),
                (0, 0, core::ptr::null_mut())
            );

            // Copy: what fits, NUL-terminated when there is room.
            let mut from = empty();
            init_us(&mut from, source.as_ptr());
            let mut room = [0xFFFFu16; 5];
            let mut to = Us {
                length: 0,
                maximum: 10,
                buffer: room.as_mut_ptr(),
            };
            k!("RtlCopyUnicodeString": fn(*mut Us, *const Us) -> (), &raw mut to, &raw const from);
            assert_eq!(text(&to), "Queue", "cut at MaximumLength");
            assert_eq!(room[4], u16::from(b'e'), "no room for a terminator");
            let mut room = [0xFFFFu16; 16];
            let mut to = Us {
                length: 0,
                maximum: 32,
                buffer: room.as_mut_ptr(),
            };
            k!("RtlCopyUnicodeString": fn(*mut Us, *const Us) -> (), &raw mut to, &raw const from);
            assert_eq!((text(&to).as_str(), room[7]), ("Queue 7", 0));

            // Append: all or nothing.
            let tail = wide(" rx");
            let status = k!("RtlAppendUnicodeToString": fn(*mut Us, *const u16) -> i32, &raw mut to, tail.as_ptr());
            assert_eq!(status, 0);
            assert_eq!(text(&to), "Queue 7 rx");
            let long = wide(&"x".repeat(10));
            let status = k!("RtlAppendUnicodeToString": fn(*mut Us, *const u16) -> i32, &raw mut to, long.as_ptr());
            assert_eq!(
                status.cast_unsigned(),
                0xC000_0023,
                "STATUS_BUFFER_TOO_SMALL"
            );
            assert_eq!(text(&to), "Queue 7 rx", "unchanged");
            assert!(flagged().is_empty(), "{:?}", flagged());
        },
    );
}

#[test]
fn strings_compare_and_convert_as_the_rtl_routines_do() {
    isolated("strings_compare_and_convert_as_the_rtl_routines_do", || {
        let (a, b, c) = (wide("queue 7"), wide("QUEUE 7"), wide("queue 7 rx"));
        let (mut sa, mut sb, mut sc) = (empty(), empty(), empty());
        init_us(&mut sa, a.as_ptr());
        init_us(&mut sb, b.as_ptr());
        init_us(&mut sc, c.as_ptr());
        assert_eq!(equal_us(&sa, &sb, 1), 1);
        assert_eq!(equal_us(&sa, &sb, 0), 0);
        assert_eq!(compare_us(&sa, &sb, 1), 0);
        assert!(compare_us(&sa, &sb, 0) > 0, "'q' > 'Q'");
        assert!(compare_us(&sa, &sc, 1) < 0, "a prefix sorts first");

        let mut value = 0u32;
        for (input, base, want) in [
            ("  -0x1F", 0, 31u32.wrapping_neg()),
            ("ff", 16, 255),
            ("0b101", 0, 5),
            ("123abc", 10, 123),
            ("", 10, 0),
        ] {
            let w = wide(input);
            init_us(&mut sa, w.as_ptr());
            let status = k!("RtlUnicodeStringToInteger": fn(*const Us, u32, *mut u32) -> i32, &raw const sa, base, &raw mut value);
            assert_eq!(status, 0, "{input}");
            assert_eq!(value, want, "{input:?} base {base}");
        }
        let status = k!("RtlUnicodeStringToInteger": fn(*const Us, u32, *mut u32) -> i32, &raw const sa, 7, &raw mut value);
        assert_eq!(
            status.cast_unsigned(),
            0xC000_000D,
            "base 7: STATUS_INVALID_PARAMETER"
        );
        let mut room = [0u16; 8];
        let mut out = Us {
            length: 0,
            maximum: 16,
            buffer: room.as_mut_ptr(),
        };
        let status =
            k!("RtlIntegerToUnicodeString": fn(u32, u32, *mut Us) -> i32, 48_879, 16, &raw mut out);
        assert_eq!(status, 0);
        assert_eq!(text(&out), "BEEF");
        let mut small = Us {
            length: 0,
            maximum: 4,
            buffer: room.as_mut_ptr(),
        };
        let status = k!("RtlIntegerToUnicodeString": fn(u32, u32, *mut Us) -> i32, 12_345, 10, &raw mut small);
        assert_eq!(
            status.cast_unsigned(),
            0x8000_0005,
            "STATUS_BUFFER_OVERFLOW"
        );
        assert!(flagged().is_empty(), "{:?}", flagged());

        // A malformed string is reported.
        let bad = Us {
            length: 10,
            maximum: 4,
            buffer: room.as_mut_ptr(),
        };
        equal_us(&bad, &sa, 1);
        assert!(
            flagged()
                .iter()
                .any(|v| v.contains("Length 10 exceeds MaximumLength 4")),
            "{:?}",
            flagged()
        );
    });
}

fn raise(irql: u8) -> u8 {
    k!("KfRaiseIrql": fn(u8) -> u8, irql)
}

fn lower(irql: u8) {
    k!("KeLowerIrql": fn(u8) -> (), irql);
}

type Args7 = (u64, u64, u64, u64, u64, u64, u64);

fn dbg_print(format: &core::ffi::CStr, a: Args7) -> i32 {
    k!("DbgPrint": fn(*const core::ffi::c_char, u64, u64, u64, u64, u64, u64, u64) -> i32,
        format.as_ptr(), a.0, a.1, a.2, a.3, a.4, a.5, a.6)
}

#[test]
fn debug_print_formats_with_the_kernels_conventions() {
    isolated("debug_print_formats_with_the_kernels_conventions", || {
        let name = wide("Large Wave");
        let counted = Us {
            length: 20,
            maximum: 22,
            buffer: name.as_ptr().cast_mut(),
        };
        // Seven arguments: four in registers, three on the stack.
        let status = dbg_print(
            c"%d|%5s|%wZ|%ws|%I64x|%llu|%p|%%\n",
            (
                (-42i32).cast_unsigned().into(),
                c"rx".as_ptr() as u64,
                &raw const counted as u64,
                name.as_ptr() as u64,
                0x1_2345_6789_ABCD,
                u64::MAX,
                0xFFFF_F800_0000_1000,
            ),
        );
        assert_eq!(status, 0);
        // Floats travel in the integer slots too, as a variadic win64 call passes them.
        k!("DbgPrintEx": fn(u32, u32, *const core::ffi::c_char, u64, u64, u64, u64) -> i32,
            77, 1, c"%-4c|%5.1f|%#x|%08.3f\n".as_ptr(), u64::from(b'Z'), 2.3f64.to_bits(), 0x1F,
            (-1.5f64).to_bits());
        let log = ntos::debug_log();
        assert_eq!(log.len(), 2);
        assert_eq!(
            log[0].text,
            "-42|   rx|Large Wave|Large Wave|123456789abcd|18446744073709551615|FFFFF80000001000|%\n"
        );
        assert_eq!((log[0].component, log[0].level), (101, 3));
        assert_eq!(log[1].text, "Z   |  2.3|0x1f|-001.500\n");
        assert_eq!((log[1].component, log[1].level), (77, 1));

        // _vsnwprintf over a va_list: the length, or -1 when cut; NUL only when it fits.
        let format = wide("if_%u_queue_%u%s");
        let suffix = wide("_rx");
        let args = [3u64, 11, suffix.as_ptr() as u64];
        let mut out = [0xFFFFu16; 32];
        let n = k!("_vsnwprintf": fn(*mut u16, usize, *const u16, *const u64) -> i32,
            out.as_mut_ptr(), 32, format.as_ptr(), args.as_ptr());
        assert_eq!(n, 16);
        assert_eq!(String::from_utf16_lossy(&out[..16]), "if_3_queue_11_rx");
        assert_eq!(out[16], 0);
        let mut out = [0xFFFFu16; 8];
        let n = k!("_vsnwprintf": fn(*mut u16, usize, *const u16, *const u64) -> i32,
            out.as_mut_ptr(), 8, format.as_ptr(), args.as_ptr());
        assert_eq!(n, -1);
        assert_eq!(String::from_utf16_lossy(&out), "if_3_que");
        assert!(flagged().is_empty(), "{:?}", flagged());

        // A Unicode conversion above PASSIVE_LEVEL, and %n, are reported.
        let old = raise(DISPATCH_LEVEL);
        dbg_print(c"%ws\n", (name.as_ptr() as u64, 0, 0, 0, 0, 0, 0));
        lower(old);
        let mut sink = 0u32;
        dbg_print(c"%n", ((&raw mut sink) as u64, 0, 0, 0, 0, 0, 0));
        assert_eq!(sink, 0, "%n writes nothing");
        let v = flagged();
        assert!(
            v.iter()
                .any(|v| v.contains("Unicode conversion at DISPATCH_LEVEL")),
            "{v:?}"
        );
        assert!(
            v.iter().any(|v| v.contains("`%n` is not supported")),
            "{v:?}"
        );
    });
}

const TAG: u32 = u32::from_le_bytes(*b"CDrv");
const NON_PAGED_POOL_NX: u32 = 0x200;
const POOL_ZERO_ALLOCATION: u32 = 0x400;
const POOL_RAISE_IF_ALLOCATION_FAILURE: u32 = 0x10;

fn alloc(pool_type: u32, size: usize, tag: u32) -> *mut u8 {
    k!("ExAllocatePoolWithTag": fn(u32, usize, u32) -> *mut u8, pool_type, size, tag)
}

fn free(p: *mut u8, tag: u32) {
    k!("ExFreePoolWithTag": fn(*mut u8, u32) -> (), p, tag);
}

/// The `n` bytes at `p`.
fn bytes_at<'a>(p: *const u8, n: usize) -> &'a [u8] {
    // SAFETY: the tests pass blocks of at least `n` bytes that outlive the view.
    unsafe { core::slice::from_raw_parts(p, n) }
}

#[test]
fn pool_with_tag_checks_its_pool_type() {
    isolated("pool_with_tag_checks_its_pool_type", || {
        let p = alloc(NON_PAGED_POOL_NX, 16, TAG);
        assert_eq!(
            bytes_at(p, 16),
            [0xCD; 16],
            "uninitialised pool is poisoned"
        );
        let z = alloc(NON_PAGED_POOL_NX | POOL_ZERO_ALLOCATION, 16, TAG);
        assert_eq!(bytes_at(z, 16), [0; 16], "what ExAllocatePoolZero asks for");
        assert_eq!(
            ntos::leaks().pool,
            [("CDrv".to_owned(), 16), ("CDrv".to_owned(), 16)]
        );
        free(p, TAG);
        free(z, TAG);
        assert!(
            ntos::leaks().is_empty() && flagged().is_empty(),
            "{:?}",
            flagged()
        );

        // Misuse, each reported (the blocks stay allocated, and are reported as such).
        alloc(0, 8, TAG); // NonPagedPool: executable
        alloc(2, 8, TAG); // NonPagedPoolMustSucceed
        alloc(NON_PAGED_POOL_NX, 8, 0x0102_0304); // a non-printable tag
        let old = raise(DISPATCH_LEVEL);
        let paged = alloc(1, 8, TAG); // PagedPool at DISPATCH_LEVEL
        lower(old);
        free(paged, u32::from_le_bytes(*b"Othr"));
        let v = flagged();
        for want in [
            "executable non-paged pool (pool type 0x0",
            "must-succeed pool type 0x2",
            "pool tag 0x01020304 has a byte outside printable ASCII",
            "ExAllocatePoolWithTag: paged pool at DISPATCH_LEVEL",
            "allocated with tag `CDrv` freed with tag `Othr`",
        ] {
            assert!(v.iter().any(|v| v.contains(want)), "`{want}` not in {v:#?}");
        }
        assert_eq!(ntos::leaks().pool.len(), 3);

        // Fault injection fails a plain allocation, never one that would raise instead.
        ntos::fail_at(Some(0));
        let raised = alloc(NON_PAGED_POOL_NX | POOL_RAISE_IF_ALLOCATION_FAILURE, 8, TAG);
        assert!(!raised.is_null());
        assert!(alloc(NON_PAGED_POOL_NX, 8, TAG).is_null());
        assert_eq!(ntos::failed(), Some("ExAllocatePoolWithTag"));
    });
}

fn acquire(lock: usize) -> u8 {
    k!("KeAcquireSpinLockRaiseToDpc": fn(*mut usize) -> u8, lock as *mut usize)
}

fn release(lock: usize, old: u8) {
    k!("KeReleaseSpinLock": fn(*mut usize, u8) -> (), lock as *mut usize, old);
}

#[test]
fn spin_locks_exclude_raise_irql_and_report_misuse() {
    isolated("spin_locks_exclude_raise_irql_and_report_misuse", || {
        let mut lock_word = 0usize;
        let lock = &raw mut lock_word as usize;
        // Mutual exclusion: 4 threads add under the lock, non-atomically.
        let mut total = 0u64;
        let counter = &raw mut total as usize;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(move || {
                    for _ in 0..2_000 {
                        let old = acquire(lock);
                        assert_eq!((old, ntos::current_irql()), (0, DISPATCH_LEVEL));
                        let c = counter as *mut u64;
                        // SAFETY: the counter is only touched under the lock.
                        let value = unsafe { c.read_volatile() };
                        // SAFETY: as above.
                        unsafe { c.write_volatile(value + 1) };
                        release(lock, old);
                        assert_eq!(ntos::current_irql(), 0);
                    }
                });
            }
        });
        assert_eq!(total, 8_000);
        assert!(flagged().is_empty(), "{:?}", flagged());

        // A recursive acquire is reported instead of hanging; so is a release by a thread that
        // does not hold the lock, and an AtDpcLevel call at PASSIVE_LEVEL.
        let old = acquire(lock);
        acquire(lock);
        assert_eq!(ntos::leaks().spin_locks, [lock]);
        std::thread::scope(|s| {
            s.spawn(|| release(lock, 0));
        });
        release(lock, old);
        k!("KeAcquireSpinLockAtDpcLevel": fn(*mut usize) -> (), lock as *mut usize);
        let v = flagged();
        for want in [
            "acquired again by the thread holding it (a deadlock)",
            "released by a thread that does not hold it",
            "KeAcquireSpinLockAtDpcLevel: called at PASSIVE_LEVEL; it must be called at \
             DISPATCH_LEVEL",
        ] {
            assert!(v.iter().any(|v| v.contains(want)), "`{want}` not in {v:#?}");
        }
    });
}

#[test]
fn a_routine_called_above_its_irql_is_reported() {
    isolated("a_routine_called_above_its_irql_is_reported", || {
        let s = empty();
        let mut lock_word = 0usize;
        let lock = &raw mut lock_word as usize;
        let old = acquire(lock);
        compare_us(&s, &s, 1);
        release(lock, old);
        assert_eq!(
            flagged(),
            [
                "RtlCompareUnicodeString: called at DISPATCH_LEVEL; it must be called at or below \
              PASSIVE_LEVEL"
            ]
        );
    });
}

fn wait(event: usize, timeout: Option<&i64>) -> i32 {
    let timeout = timeout.map_or(core::ptr::null(), core::ptr::from_ref);
    k!("KeWaitForSingleObject": fn(*mut u8, u32, u8, u8, *const i64) -> i32,
        event as *mut u8, 0, 0, 0, timeout)
}

fn set_event(event: usize) -> i32 {
    k!("KeSetEvent": fn(*mut u8, i32, u8) -> i32, event as *mut u8, 0, 0)
}

fn read_event(event: usize) -> i32 {
    k!("KeReadStateEvent": fn(*mut u8) -> i32, event as *mut u8)
}

fn init_event(event: usize, kind: u32, state: u8) {
    k!("KeInitializeEvent": fn(*mut u8, u32, u8) -> (), event as *mut u8, kind, state);
}

#[test]
fn events_signal_and_wait() {
    isolated("events_signal_and_wait", || {
        let mut block = [0u64; 3];
        let event = block.as_mut_ptr() as usize;
        let (zero, ten_ms) = (0i64, -100_000i64);
        init_event(event, 1, 0); // SynchronizationEvent, not signalled
        assert_eq!(bytes_at(event as *const u8, 1), [1], "Header.Type");
        assert_eq!(wait(event, Some(&zero)), 0x102, "STATUS_TIMEOUT");
        let started = std::time::Instant::now();
        assert_eq!(wait(event, Some(&ten_ms)), 0x102);
        assert!(started.elapsed() >= std::time::Duration::from_millis(10));
        assert_eq!(set_event(event), 0);
        assert_eq!(read_event(event), 1);
        assert_eq!(wait(event, Some(&zero)), 0);
        assert_eq!(
            read_event(event),
            0,
            "a synchronization event resets on the wait it satisfies"
        );
        // Another thread's KeSetEvent ends an infinite wait.
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                set_event(event);
            });
            assert_eq!(wait(event, None), 0);
        });
        init_event(event, 0, 1); // NotificationEvent, signalled: stays signalled
        assert_eq!(wait(event, Some(&zero)), 0);
        assert_eq!(wait(event, Some(&zero)), 0);
        assert!(flagged().is_empty(), "{:?}", flagged());
    });
}

#[test]
fn memory_routines_and_system_routine_addresses() {
    isolated("memory_routines_and_system_routine_addresses", || {
        let mut buffer = *b"abcdefgh";
        let p = buffer.as_mut_ptr().cast::<c_void>();
        let same = k!("RtlCompareMemory": fn(*const c_void, *const c_void, usize) -> usize,
            p, b"abcXefgh".as_ptr().cast(), 8);
        assert_eq!(same, 3);
        k!("memcpy": fn(*mut c_void, *const c_void, usize) -> *mut c_void,
            p.cast::<u8>().wrapping_add(2).cast(), p, 4);
        assert_eq!(&buffer, b"ababcdgh", "done as a move");
        assert!(
            flagged()
                .iter()
                .any(|v| v.contains("overlapping 4-byte ranges")),
            "{:?}",
            flagged()
        );
        for (name, want) in [
            ("PcwRegister", ntos::resolve("ntoskrnl.exe", "PcwRegister")),
            (
                "ExAllocatePool2",
                ntos::resolve("ntoskrnl.exe", "ExAllocatePool2"),
            ),
            ("NtQuerySystemInformation", None),
        ] {
            let mut w = wide(name);
            let s = Us {
                length: u16::try_from(2 * (w.len() - 1)).unwrap(),
                maximum: u16::try_from(2 * w.len()).unwrap(),
                buffer: w.as_mut_ptr(),
            };
            let got = k!("MmGetSystemRoutineAddress": fn(*const Us) -> usize, &raw const s);
            assert_eq!(got, want.unwrap_or(0), "{name}");
        }
    });
}

/// PCW's cancel events come from pcw-sim as windows-sys `KEVENT`s and are read by the loader's
/// `KeReadStateEvent` at the WDK's offsets: the two layouts must agree.
#[test]
fn the_event_layout_is_the_one_pcw_sim_uses() {
    use pcw_loader::layout::kevent;
    use windows_sys::Wdk::Foundation::{DISPATCHER_HEADER, KEVENT};
    assert_eq!(size_of::<KEVENT>(), kevent::SIZE);
    assert_eq!(
        core::mem::offset_of!(KEVENT, Header)
            + core::mem::offset_of!(DISPATCHER_HEADER, SignalState),
        kevent::SIGNAL_STATE
    );
    assert_eq!(
        core::mem::offset_of!(KEVENT, Header)
            + core::mem::offset_of!(DISPATCHER_HEADER, WaitListHead),
        kevent::WAIT_LIST_HEAD
    );
}
