// SPDX-License-Identifier: MIT OR Apache-2.0
//! The routines the loader deliberately does not provide, each with the reason an image that
//! imports it is refused with. A counters driver needs none of them.

/// Routines drivers commonly import that the loader deliberately lacks, with the reason: an
/// image importing one is refused with it.
pub static REFUSED: &[(&str, &str)] = &[
    ("KeInitializeTimer", "timers are not emulated"),
    ("KeInitializeTimerEx", "timers are not emulated"),
    ("KeSetTimer", "timers are not emulated"),
    ("KeSetTimerEx", "timers are not emulated"),
    ("KeCancelTimer", "timers are not emulated"),
    ("ExAllocateTimer", "timers are not emulated"),
    ("ExSetTimer", "timers are not emulated"),
    ("KeInitializeDpc", "DPCs are not emulated"),
    ("KeInsertQueueDpc", "DPCs are not emulated"),
    ("KeRemoveQueueDpc", "DPCs are not emulated"),
    ("KeFlushQueuedDpcs", "DPCs are not emulated"),
    ("IoAllocateWorkItem", "work items are not emulated"),
    ("IoQueueWorkItem", "work items are not emulated"),
    ("IoFreeWorkItem", "work items are not emulated"),
    ("ExQueueWorkItem", "work items are not emulated"),
    ("PsCreateSystemThread", "system threads are not emulated"),
    ("PsTerminateSystemThread", "system threads are not emulated"),
    (
        "KeInitializeMutex",
        "mutexes are not emulated (events and spin locks are)",
    ),
    (
        "KeReleaseMutex",
        "mutexes are not emulated (events and spin locks are)",
    ),
    (
        "ExAcquireFastMutex",
        "fast mutexes are not emulated (push locks and spin locks are)",
    ),
    (
        "ExReleaseFastMutex",
        "fast mutexes are not emulated (push locks and spin locks are)",
    ),
    ("KeInitializeSemaphore", "semaphores are not emulated"),
    ("KeReleaseSemaphore", "semaphores are not emulated"),
    (
        "ExInitializeResourceLite",
        "ERESOURCEs are not emulated (push locks are)",
    ),
    ("ZwOpenKey", "the registry is not emulated"),
    ("ZwCreateKey", "the registry is not emulated"),
    ("ZwQueryValueKey", "the registry is not emulated"),
    ("ZwSetValueKey", "the registry is not emulated"),
    ("ZwClose", "handles are not emulated"),
    ("ExRaiseStatus", "exceptions are not dispatched"),
    ("RtlRaiseException", "exceptions are not dispatched"),
];
