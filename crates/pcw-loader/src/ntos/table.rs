// SPDX-License-Identifier: MIT OR Apache-2.0
//! The table of every routine the loader implements ([`ROUTINES`]), with what the image may
//! import it from, its limits and the contract its shim checks: the one list the loader binds
//! imports from, `MmGetSystemRoutineAddress` answers from and `docs/loader-routines.md` is
//! generated from.

use super::irql::{APC_LEVEL, DISPATCH_LEVEL, HIGH_LEVEL, PASSIVE_LEVEL};
use super::state::violation;
use super::{
    clock, debug_print, format, io, memory, pcw, pool, processor, push_lock, runtime, state,
    strings, sync,
};

/// `ntoskrnl.exe`.
const NT: &[&str] = &["ntoskrnl.exe"];
/// `hal.dll` only.
const HAL: &[&str] = &["hal.dll"];
/// The HAL routines that `ntoskrnl.exe` has also exported since the HAL and the kernel were
/// merged (Windows 8): import libraries differ on which module they name.
const HAL_NT: &[&str] = &["hal.dll", "ntoskrnl.exe"];
/// Any IRQL.
const ANY: u8 = HIGH_LEVEL;

/// A shim's address, for the table (a function pointer of any signature).
#[derive(Clone, Copy, Debug)]
pub struct Shim(*const ());

// SAFETY: the address of a function, never dereferenced as data; functions are shared by every
// thread.
unsafe impl Sync for Shim {}

/// One routine the loader implements.
#[derive(Debug)]
pub struct Routine {
    /// Its exported name.
    pub name: &'static str,
    /// The modules (lower case) an image may import it from: those that export it on Windows.
    pub modules: &'static [&'static str],
    /// What it is about, for the generated table (`pool`, `strings`, …).
    pub concept: &'static str,
    /// The highest IRQL it may be called at ([`PASSIVE_LEVEL`] … [`HIGH_LEVEL`]); a call above
    /// it is a [`Violation`](super::state::Violation).
    pub max_irql: u8,
    /// Whether it can fail, and so whether a fault injection counts it.
    pub fallible: bool,
    /// What its shim checks and how it answers, in a sentence or a few.
    pub contract: &'static str,
    shim: Shim,
}

impl Routine {
    /// The shim's address: what the image's import address table receives.
    pub fn address(&self) -> usize {
        self.shim.0 as usize
    }
}

/// A table row.
const fn routine(
    name: &'static str,
    modules: &'static [&'static str],
    concept: &'static str,
    max_irql: u8,
    fallible: bool,
    contract: &'static str,
    shim: *const (),
) -> Routine {
    Routine {
        name,
        modules,
        concept,
        max_irql,
        fallible,
        contract,
        shim: Shim(shim),
    }
}

/// Every routine the loader implements: the one list of them.
pub static ROUTINES: &[Routine] = &[
    // Pool.
    routine(
        "ExAllocatePool2",
        NT,
        "pool",
        DISPATCH_LEVEL,
        true,
        "exactly one pool type among `POOL_FLAG_NON_PAGED`, `_NON_PAGED_EXECUTE`, `_PAGED`; no \
         executable pool; a non-zero tag; zeroed unless `POOL_FLAG_UNINITIALIZED` (then filled \
         with 0xCD); NULL for 0 bytes; the block tracked until freed",
        pool::ex_allocate_pool2 as *const (),
    ),
    routine(
        "ExAllocatePoolWithTag",
        NT,
        "pool",
        DISPATCH_LEVEL,
        true,
        "a `POOL_TYPE` that is not executable (`NonPagedPoolNx`, `PagedPool`, their cache-aligned \
         forms), not must-succeed, not session; paged pool only at or below `APC_LEVEL`; a \
         non-zero tag of printable ASCII; zero bytes flagged; zeroed with \
         `POOL_ZERO_ALLOCATION` (what the WDK's inline `ExAllocatePoolZero` passes), else \
         filled with 0xCD; never failed by fault injection with `POOL_RAISE_IF_ALLOCATION_FAILURE` \
         (the exception it would raise cannot be delivered)",
        pool::ex_allocate_pool_with_tag as *const (),
    ),
    routine(
        "ExAllocatePool",
        NT,
        "pool",
        DISPATCH_LEVEL,
        true,
        "`ExAllocatePoolWithTag` with the tag `None`, as Windows tags it",
        pool::ex_allocate_pool as *const (),
    ),
    routine(
        "ExFreePoolWithTag",
        NT,
        "pool",
        DISPATCH_LEVEL,
        false,
        "a block this driver allocated and has not freed (a double free or a foreign pointer is \
         flagged), freed under the tag it was allocated with; paged blocks at or below \
         `APC_LEVEL`",
        pool::ex_free_pool_with_tag as *const (),
    ),
    routine(
        "ExFreePool",
        NT,
        "pool",
        DISPATCH_LEVEL,
        false,
        "a block this driver allocated and has not freed; no tag to compare",
        pool::ex_free_pool as *const (),
    ),
    // Critical regions and push locks.
    routine(
        "KeEnterCriticalRegion",
        NT,
        "push locks",
        APC_LEVEL,
        false,
        "counts this thread's critical-region depth",
        push_lock::ke_enter_critical_region as *const (),
    ),
    routine(
        "KeLeaveCriticalRegion",
        NT,
        "push locks",
        APC_LEVEL,
        false,
        "leaving a region that was not entered is flagged",
        push_lock::ke_leave_critical_region as *const (),
    ),
    routine(
        "ExAcquirePushLockExclusiveEx",
        NT,
        "push locks",
        APC_LEVEL,
        false,
        "inside a critical region; an aligned, non-NULL lock word; waits for every holder",
        push_lock::ex_acquire_push_lock_exclusive_ex as *const (),
    ),
    routine(
        "ExReleasePushLockExclusiveEx",
        NT,
        "push locks",
        APC_LEVEL,
        false,
        "inside a critical region; the lock held exclusively",
        push_lock::ex_release_push_lock_exclusive_ex as *const (),
    ),
    routine(
        "ExAcquirePushLockSharedEx",
        NT,
        "push locks",
        APC_LEVEL,
        false,
        "inside a critical region; an aligned, non-NULL lock word; waits for an exclusive holder",
        push_lock::ex_acquire_push_lock_shared_ex as *const (),
    ),
    routine(
        "ExReleasePushLockSharedEx",
        NT,
        "push locks",
        APC_LEVEL,
        false,
        "inside a critical region; the lock held shared",
        push_lock::ex_release_push_lock_shared_ex as *const (),
    ),
    // Clock.
    routine(
        "KeQueryPerformanceCounter",
        HAL_NT,
        "time",
        HIGH_LEVEL,
        false,
        "the simulated performance counter (10 MHz since boot); the frequency written when the \
         pointer is not NULL",
        clock::ke_query_performance_counter as *const (),
    ),
    routine(
        "KeQueryTimeIncrement",
        NT,
        "time",
        ANY,
        false,
        "156 250 (15.625 ms in 100 ns units, Windows' default clock interval)",
        clock::ke_query_time_increment as *const (),
    ),
    routine(
        "KeQueryInterruptTimePrecise",
        NT,
        "time",
        ANY,
        false,
        "interrupt time (100 ns units since boot, from the simulated performance counter); the \
         counter written to the non-NULL `QpcTimeStamp`",
        clock::ke_query_interrupt_time_precise as *const (),
    ),
    routine(
        "KeQueryUnbiasedInterruptTime",
        NT,
        "time",
        ANY,
        false,
        "interrupt time (the simulated machine never sleeps, so there is no bias)",
        clock::ke_query_unbiased_interrupt_time as *const (),
    ),
    routine(
        "KeQuerySystemTimePrecise",
        NT,
        "time",
        HIGH_LEVEL,
        false,
        "the simulated system time (100 ns units since 1601)",
        clock::ke_query_system_time_precise as *const (),
    ),
    routine(
        "KeReadStateEvent",
        NT,
        "events",
        HIGH_LEVEL,
        false,
        "a non-NULL event; its signal state",
        sync::ke_read_state_event as *const (),
    ),
    // PCW.
    routine(
        "PcwRegister",
        NT,
        "PCW",
        APC_LEVEL,
        true,
        "the registration information re-read at the WDK's offsets and forwarded to the \
         simulated PCW, which checks version, name, descriptors and callback; the callback is \
         only ever called as `extern \"win64\"`",
        pcw::pcw_register as *const (),
    ),
    routine(
        "PcwUnregister",
        NT,
        "PCW",
        APC_LEVEL,
        false,
        "a live registration (a stale one is a simulated bugcheck)",
        pcw::pcw_unregister as *const (),
    ),
    routine(
        "PcwAddInstance",
        NT,
        "PCW",
        APC_LEVEL,
        true,
        "the buffer of the collection in progress; the instance's name and data blocks re-read \
         at the WDK's offsets; PCW's own filter applied again and compared",
        pcw::pcw_add_instance as *const (),
    ),
    routine(
        "PcwCreateInstance",
        NT,
        "PCW",
        APC_LEVEL,
        true,
        "a live registration, a non-NULL out-pointer; the data blocks read at each collection \
         until closed",
        pcw::pcw_create_instance as *const (),
    ),
    routine(
        "PcwCloseInstance",
        NT,
        "PCW",
        APC_LEVEL,
        false,
        "a live instance (closing one twice is a simulated bugcheck)",
        pcw::pcw_close_instance as *const (),
    ),
    // The I/O manager.
    routine(
        "IoCreateDevice",
        NT,
        "I/O manager",
        PASSIVE_LEVEL,
        true,
        "the driver object `DriverEntry` received; a non-NULL out-pointer; a name no other \
         device has (`STATUS_OBJECT_NAME_COLLISION`); the device linked into the driver's list",
        io::io_create_device as *const (),
    ),
    routine(
        "IoDeleteDevice",
        NT,
        "I/O manager",
        PASSIVE_LEVEL,
        false,
        "a device of this driver, not deleted before; no symbolic link may still name it",
        io::io_delete_device as *const (),
    ),
    routine(
        "IoCreateSymbolicLink",
        NT,
        "I/O manager",
        PASSIVE_LEVEL,
        true,
        "a link to an existing device; an unused link name",
        io::io_create_symbolic_link as *const (),
    ),
    routine(
        "IoDeleteSymbolicLink",
        NT,
        "I/O manager",
        PASSIVE_LEVEL,
        false,
        "`STATUS_OBJECT_NAME_NOT_FOUND` for a link that does not exist",
        io::io_delete_symbolic_link as *const (),
    ),
    routine(
        "IofCompleteRequest",
        NT,
        "I/O manager",
        DISPATCH_LEVEL,
        false,
        "an IRP in flight, completed exactly once",
        io::iof_complete_request as *const (),
    ),
    routine(
        "ObSetSecurityObjectByPointer",
        NT,
        "I/O manager",
        PASSIVE_LEVEL,
        true,
        "`DACL_SECURITY_INFORMATION`, a device of this driver, a well-formed self-relative \
         descriptor (decoded and kept for comparison with the driver's SDDL)",
        io::ob_set_security_object_by_pointer as *const (),
    ),
    // IRQL, spin locks and events.
    routine(
        "KeGetCurrentIrql",
        NT,
        "IRQL and spin locks",
        ANY,
        false,
        "this thread's IRQL (the headers usually inline a CR8 read instead, emulated)",
        sync::ke_get_current_irql as *const (),
    ),
    routine(
        "KfRaiseIrql",
        NT,
        "IRQL and spin locks",
        ANY,
        false,
        "raises this thread's IRQL; a lower new IRQL is flagged; returns the old one",
        sync::kf_raise_irql as *const (),
    ),
    routine(
        "KeRaiseIrqlToDpcLevel",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "raises to `DISPATCH_LEVEL`; returns the old IRQL",
        sync::ke_raise_irql_to_dpc_level as *const (),
    ),
    routine(
        "KeLowerIrql",
        NT,
        "IRQL and spin locks",
        ANY,
        false,
        "lowers this thread's IRQL; a higher new IRQL, or going below `DISPATCH_LEVEL` with a \
         spin lock held, is flagged",
        sync::ke_lower_irql as *const (),
    ),
    routine(
        "KeAcquireSpinLockRaiseToDpc",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "an aligned, non-NULL `KSPIN_LOCK`, taken atomically after raising to `DISPATCH_LEVEL`; \
         returns the old IRQL; acquiring a lock this thread holds (a deadlock) is flagged \
         instead of hanging; what `KeAcquireSpinLock` expands to on x64",
        sync::ke_acquire_spin_lock_raise_to_dpc as *const (),
    ),
    routine(
        "KeReleaseSpinLock",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "called at `DISPATCH_LEVEL` by the thread holding the lock; `NewIrql` not above \
         `DISPATCH_LEVEL`; releases, then lowers to `NewIrql`",
        sync::ke_release_spin_lock as *const (),
    ),
    routine(
        "KfAcquireSpinLock",
        HAL,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "the x86 HAL's `KeAcquireSpinLock`, checked as `KeAcquireSpinLockRaiseToDpc`",
        sync::kf_acquire_spin_lock as *const (),
    ),
    routine(
        "KfReleaseSpinLock",
        HAL,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "the x86 HAL's `KeReleaseSpinLock`, checked as `KeReleaseSpinLock`",
        sync::kf_release_spin_lock as *const (),
    ),
    routine(
        "KeAcquireSpinLockAtDpcLevel",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "called at exactly `DISPATCH_LEVEL`; takes the lock without changing IRQL",
        sync::ke_acquire_spin_lock_at_dpc_level as *const (),
    ),
    routine(
        "KeReleaseSpinLockFromDpcLevel",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "called at exactly `DISPATCH_LEVEL` by the thread holding the lock",
        sync::ke_release_spin_lock_from_dpc_level as *const (),
    ),
    routine(
        "KeTryToAcquireSpinLockAtDpcLevel",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "called at exactly `DISPATCH_LEVEL`; TRUE when the lock was free and is now held",
        sync::ke_try_to_acquire_spin_lock_at_dpc_level as *const (),
    ),
    routine(
        "KeAcquireInStackQueuedSpinLock",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "as `KeAcquireSpinLockRaiseToDpc`, with the lock and the old IRQL kept in the caller's \
         `KLOCK_QUEUE_HANDLE`",
        sync::ke_acquire_in_stack_queued_spin_lock as *const (),
    ),
    routine(
        "KeReleaseInStackQueuedSpinLock",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "the handle's lock, held by this thread, released at `DISPATCH_LEVEL`; back to the \
         handle's IRQL",
        sync::ke_release_in_stack_queued_spin_lock as *const (),
    ),
    routine(
        "KeAcquireInStackQueuedSpinLockAtDpcLevel",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "called at exactly `DISPATCH_LEVEL`; the lock kept in the handle",
        sync::ke_acquire_in_stack_queued_spin_lock_at_dpc_level as *const (),
    ),
    routine(
        "KeReleaseInStackQueuedSpinLockFromDpcLevel",
        NT,
        "IRQL and spin locks",
        DISPATCH_LEVEL,
        false,
        "called at exactly `DISPATCH_LEVEL`; the handle's lock, held by this thread",
        sync::ke_release_in_stack_queued_spin_lock_from_dpc_level as *const (),
    ),
    routine(
        "KeInitializeEvent",
        NT,
        "events",
        ANY,
        false,
        "an aligned, non-NULL `KEVENT`; `NotificationEvent` (0) or `SynchronizationEvent` (1); \
         header written at the WDK's offsets",
        sync::ke_initialize_event as *const (),
    ),
    routine(
        "KeSetEvent",
        NT,
        "events",
        DISPATCH_LEVEL,
        false,
        "signals; returns the previous state; `Wait = TRUE` is flagged (not emulated)",
        sync::ke_set_event as *const (),
    ),
    routine(
        "KeResetEvent",
        NT,
        "events",
        DISPATCH_LEVEL,
        false,
        "clears; returns the previous state",
        sync::ke_reset_event as *const (),
    ),
    routine(
        "KeClearEvent",
        NT,
        "events",
        DISPATCH_LEVEL,
        false,
        "clears",
        sync::ke_clear_event as *const (),
    ),
    routine(
        "KeWaitForSingleObject",
        NT,
        "events",
        DISPATCH_LEVEL,
        false,
        "an event (other dispatcher objects are flagged); at or below `APC_LEVEL`, or \
         `DISPATCH_LEVEL` with a zero timeout; relative and absolute timeouts in host time; a \
         synchronization event reset by the wait it satisfies; no alertable waits; a wait \
         without timeout that lasts 10 s is flagged as a hang and returns `STATUS_TIMEOUT`",
        sync::ke_wait_for_single_object as *const (),
    ),
    // Processors.
    routine(
        "KeQueryActiveProcessorCount",
        NT,
        "processors",
        ANY,
        false,
        "4 processors in one group; the affinity mask written when the pointer is not NULL",
        processor::ke_query_active_processor_count as *const (),
    ),
    routine(
        "KeQueryActiveProcessorCountEx",
        NT,
        "processors",
        ANY,
        false,
        "4 for group 0 or `ALL_PROCESSOR_GROUPS`; another group is flagged (0)",
        processor::ke_query_active_processor_count_ex as *const (),
    ),
    routine(
        "KeQueryMaximumProcessorCount",
        NT,
        "processors",
        ANY,
        false,
        "4",
        processor::ke_query_maximum_processor_count as *const (),
    ),
    routine(
        "KeQueryMaximumProcessorCountEx",
        NT,
        "processors",
        ANY,
        false,
        "4 for group 0 or `ALL_PROCESSOR_GROUPS`; another group is flagged (0)",
        processor::ke_query_maximum_processor_count_ex as *const (),
    ),
    routine(
        "KeGetCurrentProcessorNumberEx",
        NT,
        "processors",
        ANY,
        false,
        "the calling thread's processor (its host CPU modulo 4), also written as a \
         `PROCESSOR_NUMBER` in group 0 when the pointer is not NULL",
        processor::ke_get_current_processor_number_ex as *const (),
    ),
    // Strings.
    routine(
        "RtlInitUnicodeString",
        NT,
        "strings",
        DISPATCH_LEVEL,
        false,
        "a non-NULL destination; `Length` the source's bytes without the terminator, \
         `MaximumLength` with it, `Buffer` the source itself (NULL source: all zero); a source \
         too long for the u16 lengths is flagged",
        strings::rtl_init_unicode_string as *const (),
    ),
    routine(
        "RtlInitString",
        NT,
        "strings",
        DISPATCH_LEVEL,
        false,
        "as `RtlInitUnicodeString`, for a `STRING` over bytes",
        strings::rtl_init_string as *const (),
    ),
    routine(
        "RtlInitAnsiString",
        NT,
        "strings",
        DISPATCH_LEVEL,
        false,
        "as `RtlInitString`, for an `ANSI_STRING`",
        strings::rtl_init_ansi_string as *const (),
    ),
    routine(
        "RtlCopyUnicodeString",
        NT,
        "strings",
        DISPATCH_LEVEL,
        false,
        "well-formed strings (`Length` ≤ `MaximumLength`, even counts, a buffer when not empty); \
         copies what fits in the destination's `MaximumLength`, NUL-terminated when there is \
         room; a NULL source empties the destination",
        strings::rtl_copy_unicode_string as *const (),
    ),
    routine(
        "RtlAppendUnicodeToString",
        NT,
        "strings",
        DISPATCH_LEVEL,
        false,
        "a well-formed destination; appends the whole NUL-terminated source or returns \
         `STATUS_BUFFER_TOO_SMALL` and changes nothing; NUL-terminated when there is room",
        strings::rtl_append_unicode_to_string as *const (),
    ),
    routine(
        "RtlAppendUnicodeStringToString",
        NT,
        "strings",
        DISPATCH_LEVEL,
        false,
        "as `RtlAppendUnicodeToString`, with a well-formed counted source",
        strings::rtl_append_unicode_string_to_string as *const (),
    ),
    routine(
        "RtlCompareUnicodeString",
        NT,
        "strings",
        PASSIVE_LEVEL,
        false,
        "well-formed strings; unit by unit (upcased when asked, as PCW's instance filter \
         upcases), then by length; negative, zero or positive",
        strings::rtl_compare_unicode_string as *const (),
    ),
    routine(
        "RtlEqualUnicodeString",
        NT,
        "strings",
        APC_LEVEL,
        false,
        "well-formed strings; same length and the same units (upcased when asked)",
        strings::rtl_equal_unicode_string as *const (),
    ),
    routine(
        "RtlPrefixUnicodeString",
        NT,
        "strings",
        APC_LEVEL,
        false,
        "well-formed strings; whether the first is a prefix of the second",
        strings::rtl_prefix_unicode_string as *const (),
    ),
    routine(
        "RtlUpcaseUnicodeChar",
        NT,
        "strings",
        PASSIVE_LEVEL,
        false,
        "pcw-core's upcasing (`wildcard::upcase`), the one PCW's filter uses",
        strings::rtl_upcase_unicode_char as *const (),
    ),
    routine(
        "RtlUnicodeStringToInteger",
        NT,
        "strings",
        PASSIVE_LEVEL,
        false,
        "base 0 (a `0x`/`0o`/`0b` prefix, else 10), 2, 8, 10 or 16, else \
         `STATUS_INVALID_PARAMETER`; leading blanks and a sign skipped; digits up to the first \
         that is not one",
        strings::rtl_unicode_string_to_integer as *const (),
    ),
    routine(
        "RtlIntegerToUnicodeString",
        NT,
        "strings",
        PASSIVE_LEVEL,
        false,
        "base 0 (10), 2, 8, 10 or 16 (upper-case digits), else `STATUS_INVALID_PARAMETER`; \
         `STATUS_BUFFER_OVERFLOW` when the digits do not fit `MaximumLength`",
        strings::rtl_integer_to_unicode_string as *const (),
    ),
    // Formatting.
    routine(
        "_vsnwprintf",
        NT,
        "formatting",
        DISPATCH_LEVEL,
        false,
        "printf with the kernel's conventions (see the notes below) into at most `count` wide \
         characters; NUL-terminated when shorter; the length, or -1 when cut (what ntstrsafe's \
         `RtlStringCch…PrintfW` and `RtlUnicodeStringPrintf` call)",
        format::vsnwprintf as *const (),
    ),
    routine(
        "_vsnprintf",
        NT,
        "formatting",
        DISPATCH_LEVEL,
        false,
        "as `_vsnwprintf`, over bytes",
        format::vsnprintf_narrow as *const (),
    ),
    routine(
        "_snwprintf",
        NT,
        "formatting",
        DISPATCH_LEVEL,
        false,
        "as `_vsnwprintf`, with the arguments in the call",
        format::snwprintf as *const (),
    ),
    routine(
        "_snprintf",
        NT,
        "formatting",
        DISPATCH_LEVEL,
        false,
        "as `_vsnprintf`, with the arguments in the call",
        format::snprintf as *const (),
    ),
    // Debug output.
    routine(
        "DbgPrint",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "the format formatted into the debug log (`ntos::debug_log`) as component 101 \
         (`DPFLTR_DEFAULT_ID`), level 3; at most 512 bytes per call; Unicode conversions only \
         at `PASSIVE_LEVEL`; `%n` and unknown conversions flagged",
        debug_print::dbg_print as *const (),
    ),
    routine(
        "DbgPrintEx",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "as `DbgPrint`, with its component and level recorded",
        debug_print::dbg_print_ex as *const (),
    ),
    routine(
        "vDbgPrintEx",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "as `DbgPrintEx`, over a `va_list`",
        debug_print::v_dbg_print_ex as *const (),
    ),
    routine(
        "vDbgPrintExWithPrefix",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "as `vDbgPrintEx`, the prefix printed first",
        debug_print::v_dbg_print_ex_with_prefix as *const (),
    ),
    routine(
        "DbgBreakPoint",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "flagged: with no kernel debugger attached Windows bugchecks",
        runtime::dbg_break_point as *const (),
    ),
    routine(
        "RtlAssert",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "a checked build's failed `ASSERT`: flagged with its expression, file, line and message",
        runtime::rtl_assert as *const (),
    ),
    routine(
        "KeBugCheckEx",
        NT,
        "debug output",
        HIGH_LEVEL,
        false,
        "stops the process (exit code 86) naming the bugcheck code and parameters",
        runtime::ke_bug_check_ex as *const (),
    ),
    // Memory.
    routine(
        "memset",
        NT,
        "memory",
        ANY,
        false,
        "a NULL pointer with a non-zero length is flagged and the call skipped",
        memory::memset as *const (),
    ),
    routine(
        "memcpy",
        NT,
        "memory",
        ANY,
        false,
        "NULL pointers with a non-zero length flagged (call skipped); overlapping ranges flagged \
         (done as a move)",
        memory::memcpy as *const (),
    ),
    routine(
        "memmove",
        NT,
        "memory",
        ANY,
        false,
        "NULL pointers with a non-zero length flagged (call skipped); overlap allowed",
        memory::memmove as *const (),
    ),
    routine(
        "memcmp",
        NT,
        "memory",
        ANY,
        false,
        "NULL pointers with a non-zero length flagged (0); the difference of the first unequal \
         bytes",
        memory::memcmp as *const (),
    ),
    routine(
        "RtlCompareMemory",
        NT,
        "memory",
        ANY,
        false,
        "the number of leading bytes that match",
        memory::rtl_compare_memory as *const (),
    ),
    routine(
        "RtlCopyMemory",
        NT,
        "memory",
        ANY,
        false,
        "as `memcpy`",
        memory::rtl_copy_memory as *const (),
    ),
    routine(
        "RtlMoveMemory",
        NT,
        "memory",
        ANY,
        false,
        "as `memmove`",
        memory::rtl_move_memory as *const (),
    ),
    routine(
        "RtlZeroMemory",
        NT,
        "memory",
        ANY,
        false,
        "as `memset` with 0",
        memory::rtl_zero_memory as *const (),
    ),
    routine(
        "RtlFillMemory",
        NT,
        "memory",
        ANY,
        false,
        "as `memset`",
        memory::rtl_fill_memory as *const (),
    ),
    routine(
        "strlen",
        NT,
        "memory",
        ANY,
        false,
        "a non-NULL string terminated within 1 MiB",
        memory::strlen as *const (),
    ),
    routine(
        "wcslen",
        NT,
        "memory",
        ANY,
        false,
        "a non-NULL wide string terminated within 1 Mi characters",
        memory::wcslen as *const (),
    ),
    // Compiler support and the loader itself.
    routine(
        "__C_specific_handler",
        NT,
        "compiler support",
        ANY,
        false,
        "bound so that MSVC images with `__try` load; never called, since the loader dispatches \
         no exceptions (a call is flagged)",
        runtime::c_specific_handler as *const (),
    ),
    routine(
        "KeSaveFloatingPointState",
        NT,
        "compiler support",
        DISPATCH_LEVEL,
        false,
        "nothing to save on x64 (the thread's floating-point state is its own); \
         `STATUS_SUCCESS`; counted so that each restore has its save",
        runtime::ke_save_floating_point_state as *const (),
    ),
    routine(
        "KeRestoreFloatingPointState",
        NT,
        "compiler support",
        DISPATCH_LEVEL,
        false,
        "a restore without a save on this thread is flagged; `STATUS_SUCCESS`",
        runtime::ke_restore_floating_point_state as *const (),
    ),
    routine(
        "MmGetSystemRoutineAddress",
        NT,
        "compiler support",
        PASSIVE_LEVEL,
        false,
        "a well-formed name; the address of the routine of that name in this table (as the \
         image would bind it from `ntoskrnl.exe` or `hal.dll`), NULL for any other",
        mm_get_system_routine_address as *const (),
    ),
];

/// `MmGetSystemRoutineAddress`: a routine of this table by name.
unsafe extern "win64" fn mm_get_system_routine_address(name: *const u8) -> usize {
    state::enter("MmGetSystemRoutineAddress");
    // SAFETY: the image's UNICODE_STRING (the DDI's contract).
    let Some(units) = (unsafe { state::read_unicode(name) }) else {
        violation("MmGetSystemRoutineAddress", "NULL SystemRoutineName");
        return 0;
    };
    let name = String::from_utf16_lossy(&units);
    ROUTINES
        .iter()
        .find(|r| r.name == name)
        .map_or(0, Routine::address)
}
