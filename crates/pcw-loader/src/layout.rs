// SPDX-License-Identifier: MIT OR Apache-2.0
//! Where the fields of the kernel structures the loader builds or reads live, as byte offsets on
//! x64, taken from the WDK's declarations (wdm.h) and their alignment rules — written here
//! independently of windows-sys and of the driver's own declarations, so that a layout mistake
//! in either shows up as a failing scenario instead of being shared by both sides.
//!
//! The loader allocates these structures as zeroed, 16-byte-aligned byte blocks and reads and
//! writes fields through [`Fields`] at these offsets.

/// `UNICODE_STRING`: `Length` u16, `MaximumLength` u16, `Buffer` pointer.
pub mod unicode_string {
    /// `Length` (bytes in use).
    pub const LENGTH: usize = 0x00;
    /// `MaximumLength`.
    pub const MAXIMUM_LENGTH: usize = 0x02;
    /// `Buffer` (pointer-aligned).
    pub const BUFFER: usize = 0x08;
    /// Size.
    pub const SIZE: usize = 0x10;
}

/// `DRIVER_OBJECT`.
pub mod driver_object {
    /// `Type` (`IO_TYPE_DRIVER` = 4).
    pub const TYPE: usize = 0x00;
    /// `Size`.
    pub const SIZE_FIELD: usize = 0x02;
    /// `DeviceObject`: head of the device list.
    pub const DEVICE_OBJECT: usize = 0x08;
    /// `DriverStart`.
    pub const DRIVER_START: usize = 0x18;
    /// `DriverSize`.
    pub const DRIVER_SIZE: usize = 0x20;
    /// `DriverName` (a `UNICODE_STRING`).
    pub const DRIVER_NAME: usize = 0x38;
    /// `DriverInit`.
    pub const DRIVER_INIT: usize = 0x58;
    /// `DriverUnload`.
    pub const DRIVER_UNLOAD: usize = 0x68;
    /// `MajorFunction[0]`; entry *n* is at `MAJOR_FUNCTION + 8 * n`.
    pub const MAJOR_FUNCTION: usize = 0x70;
    /// `IRP_MJ_MAXIMUM_FUNCTION + 1`.
    pub const MAJOR_FUNCTION_COUNT: usize = 28;
    /// Size.
    pub const SIZE: usize = 0x150;
    /// `IO_TYPE_DRIVER`.
    pub const IO_TYPE_DRIVER: i16 = 4;
}

/// `DEVICE_OBJECT`.
pub mod device_object {
    /// `Type` (`IO_TYPE_DEVICE` = 3).
    pub const TYPE: usize = 0x00;
    /// `Size`.
    pub const SIZE_FIELD: usize = 0x02;
    /// `ReferenceCount`.
    pub const REFERENCE_COUNT: usize = 0x04;
    /// `DriverObject`.
    pub const DRIVER_OBJECT: usize = 0x08;
    /// `NextDevice`.
    pub const NEXT_DEVICE: usize = 0x10;
    /// `Flags`.
    pub const FLAGS: usize = 0x30;
    /// `Characteristics`.
    pub const CHARACTERISTICS: usize = 0x34;
    /// `DeviceExtension`.
    pub const DEVICE_EXTENSION: usize = 0x40;
    /// `DeviceType`.
    pub const DEVICE_TYPE: usize = 0x48;
    /// `StackSize`.
    pub const STACK_SIZE: usize = 0x4C;
    /// Size.
    pub const SIZE: usize = 0x150;
    /// `IO_TYPE_DEVICE`.
    pub const IO_TYPE_DEVICE: i16 = 3;
    /// `DO_DEVICE_INITIALIZING`.
    pub const DO_DEVICE_INITIALIZING: u32 = 0x80;
}

/// `IRP` (followed in memory by its `IO_STACK_LOCATION`s, as `IoAllocateIrp` lays it out).
pub mod irp {
    /// `Type` (`IO_TYPE_IRP` = 6).
    pub const TYPE: usize = 0x00;
    /// `Size`.
    pub const SIZE_FIELD: usize = 0x02;
    /// `AssociatedIrp.SystemBuffer`.
    pub const SYSTEM_BUFFER: usize = 0x18;
    /// `ThreadListEntry`.
    pub const THREAD_LIST_ENTRY: usize = 0x20;
    /// `IoStatus.Status`.
    pub const IO_STATUS_STATUS: usize = 0x30;
    /// `IoStatus.Information`.
    pub const IO_STATUS_INFORMATION: usize = 0x38;
    /// `RequestorMode`.
    pub const REQUESTOR_MODE: usize = 0x40;
    /// `StackCount`.
    pub const STACK_COUNT: usize = 0x42;
    /// `CurrentLocation`.
    pub const CURRENT_LOCATION: usize = 0x43;
    /// `UserBuffer`.
    pub const USER_BUFFER: usize = 0x70;
    /// `Tail.Overlay.CurrentStackLocation`.
    pub const CURRENT_STACK_LOCATION: usize = 0xB8;
    /// Size of the IRP without its stack locations.
    pub const SIZE: usize = 0xD0;
    /// `IO_TYPE_IRP`.
    pub const IO_TYPE_IRP: i16 = 6;
}

/// `IO_STACK_LOCATION`.
pub mod stack_location {
    /// `MajorFunction`.
    pub const MAJOR_FUNCTION: usize = 0x00;
    /// `Parameters.DeviceIoControl.OutputBufferLength`.
    pub const OUTPUT_BUFFER_LENGTH: usize = 0x08;
    /// `Parameters.DeviceIoControl.InputBufferLength` (`POINTER_ALIGNMENT`).
    pub const INPUT_BUFFER_LENGTH: usize = 0x10;
    /// `Parameters.DeviceIoControl.IoControlCode` (`POINTER_ALIGNMENT`).
    pub const IO_CONTROL_CODE: usize = 0x18;
    /// `Parameters.DeviceIoControl.Type3InputBuffer`.
    pub const TYPE3_INPUT_BUFFER: usize = 0x20;
    /// `DeviceObject`.
    pub const DEVICE_OBJECT: usize = 0x28;
    /// `FileObject`.
    pub const FILE_OBJECT: usize = 0x30;
    /// Size.
    pub const SIZE: usize = 0x48;
}

/// `PCW_REGISTRATION_INFORMATION`.
pub mod pcw_registration {
    /// `Version`.
    pub const VERSION: usize = 0x00;
    /// `Name` (`PCUNICODE_STRING`).
    pub const NAME: usize = 0x08;
    /// `CounterCount`.
    pub const COUNTER_COUNT: usize = 0x10;
    /// `Counters` (`PCW_COUNTER_DESCRIPTOR*`).
    pub const COUNTERS: usize = 0x18;
    /// `Callback`.
    pub const CALLBACK: usize = 0x20;
    /// `CallbackContext`.
    pub const CALLBACK_CONTEXT: usize = 0x28;
    /// `Flags` (version 2 only).
    pub const FLAGS: usize = 0x30;
    /// Size.
    pub const SIZE: usize = 0x38;
}

/// `PCW_CALLBACK_INFORMATION`, a union: `AddCounter`/`RemoveCounter` (`PCW_COUNTER_INFORMATION`),
/// `EnumerateInstances` (`PCW_MASK_INFORMATION` read for its `Buffer` only by providers, but the
/// union is 40 bytes) and `CollectData` (`PCW_MASK_INFORMATION`).
pub mod pcw_callback_information {
    /// `PCW_COUNTER_INFORMATION.CounterMask` / `PCW_MASK_INFORMATION.CounterMask`.
    pub const COUNTER_MASK: usize = 0x00;
    /// `InstanceMask` (`PCUNICODE_STRING`).
    pub const INSTANCE_MASK: usize = 0x08;
    /// `InstanceId`.
    pub const INSTANCE_ID: usize = 0x10;
    /// `CollectMultiple` (`BOOLEAN`).
    pub const COLLECT_MULTIPLE: usize = 0x14;
    /// `Buffer` (`PPCW_BUFFER`).
    pub const BUFFER: usize = 0x18;
    /// `CancelEvent` (`PKEVENT`).
    pub const CANCEL_EVENT: usize = 0x20;
    /// Size.
    pub const SIZE: usize = 0x28;
}

/// `KEVENT`: a `DISPATCHER_HEADER` and nothing else.
pub mod kevent {
    /// `Header.Type`: `EventNotificationObject` (0) or `EventSynchronizationObject` (1).
    pub const TYPE: usize = 0x00;
    /// `Header.Size`, in 4-byte units.
    pub const SIZE_FIELD: usize = 0x02;
    /// `Header.SignalState` (`LONG`).
    pub const SIGNAL_STATE: usize = 0x04;
    /// `Header.WaitListHead` (`LIST_ENTRY`).
    pub const WAIT_LIST_HEAD: usize = 0x08;
    /// Size.
    pub const SIZE: usize = 0x18;
}

/// `KLOCK_QUEUE_HANDLE`: a `KSPIN_LOCK_QUEUE` (`Next`, `Lock`) and the IRQL to return to.
pub mod lock_queue_handle {
    /// `LockQueue.Next`.
    pub const NEXT: usize = 0x00;
    /// `LockQueue.Lock`.
    pub const LOCK: usize = 0x08;
    /// `OldIrql`.
    pub const OLD_IRQL: usize = 0x10;
    /// Size.
    pub const SIZE: usize = 0x18;
}

/// `KUSER_SHARED_DATA`, the page the kernel maps read-only at `KI_USER_SHARED_DATA`
/// (`0xFFFFF78000000000` on x64). Times are `KSYSTEM_TIME`s: `LowPart` (u32), `High1Time`
/// (i32), `High2Time` (i32), so a 64-bit read at the field's offset is the whole value.
pub mod kuser_shared_data {
    /// `KI_USER_SHARED_DATA` on x64.
    pub const ADDRESS: u64 = 0xFFFF_F780_0000_0000;
    /// `TickCountLowDeprecated` (u32).
    pub const TICK_COUNT_LOW_DEPRECATED: usize = 0x000;
    /// `TickCountMultiplier` (u32).
    pub const TICK_COUNT_MULTIPLIER: usize = 0x004;
    /// `InterruptTime` (`KSYSTEM_TIME`): 100 ns units since boot.
    pub const INTERRUPT_TIME: usize = 0x008;
    /// `SystemTime` (`KSYSTEM_TIME`): 100 ns units since 1601, UTC.
    pub const SYSTEM_TIME: usize = 0x014;
    /// `TimeZoneBias` (`KSYSTEM_TIME`).
    pub const TIME_ZONE_BIAS: usize = 0x020;
    /// `NtMajorVersion` (u32).
    pub const NT_MAJOR_VERSION: usize = 0x26C;
    /// `NtMinorVersion` (u32).
    pub const NT_MINOR_VERSION: usize = 0x270;
    /// `KdDebuggerEnabled` (u8).
    pub const KD_DEBUGGER_ENABLED: usize = 0x2D4;
    /// `TickCount` (`KSYSTEM_TIME`, read as `TickCountQuad`): clock ticks since boot.
    pub const TICK_COUNT: usize = 0x320;
    /// `ActiveProcessorCount` (u32).
    pub const ACTIVE_PROCESSOR_COUNT: usize = 0x3C0;
    /// The page.
    pub const SIZE: usize = 0x1000;
}

/// The `KPCR` (with its `KPRCB` at `0x180`) that `gs:` addresses on x64, as far as the headers'
/// inline routines read it.
pub mod kpcr {
    /// `Self`: the KPCR's own address (`KeGetPcr`).
    pub const SELF: usize = 0x18;
    /// `CurrentPrcb`.
    pub const CURRENT_PRCB: usize = 0x20;
    /// `Prcb`, the embedded `KPRCB`.
    pub const PRCB: usize = 0x180;
    /// `Prcb.LegacyNumber` (u8; mingw-w64's `KeGetCurrentProcessorNumber` reads a word here).
    pub const LEGACY_NUMBER: usize = 0x184;
    /// `Prcb.CurrentThread` (`KeGetCurrentThread`).
    pub const CURRENT_THREAD: usize = 0x188;
    /// `Prcb.Number` (u32; the WDK's `KeGetCurrentProcessorNumber`).
    pub const NUMBER: usize = 0x1A4;
    /// How much of it the loader keeps per thread.
    pub const SIZE: usize = 0x200;
}

/// `IMAGE_LOAD_CONFIG_DIRECTORY64`, as far as the loader reads it.
pub mod load_config {
    /// `Size`.
    pub const SIZE_FIELD: usize = 0x00;
    /// `SecurityCookie`: the VA of the image's `__security_cookie`.
    pub const SECURITY_COOKIE: usize = 0x58;
}

/// A structure in memory, read and written field by field at byte offsets. Every access is
/// bounds-checked against the size given at construction.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    base: *mut u8,
    len: usize,
}

impl Fields {
    /// A view of `len` bytes at `base`.
    ///
    /// # Safety
    /// `base .. base + len` stays readable (and writable, if `put*` is used) while the view is
    /// used, and nothing else accesses it concurrently in a conflicting way.
    pub unsafe fn new(base: *mut u8, len: usize) -> Self {
        Self { base, len }
    }

    /// The start of the structure.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    fn check(&self, at: usize, n: usize) {
        assert!(
            at.checked_add(n).is_some_and(|end| end <= self.len),
            "field at {at:#x} (+{n}) outside a {:#x}-byte structure",
            self.len
        );
    }

    /// `N` bytes at `at`.
    pub fn get<const N: usize>(&self, at: usize) -> [u8; N] {
        self.check(at, N);
        let mut out = [0u8; N];
        // SAFETY: in bounds (checked); readable per `new`'s contract; unaligned is fine.
        unsafe { core::ptr::copy_nonoverlapping(self.base.wrapping_add(at), out.as_mut_ptr(), N) };
        out
    }

    /// Writes `bytes` at `at`.
    pub fn put<const N: usize>(&self, at: usize, bytes: [u8; N]) {
        self.check(at, N);
        // SAFETY: in bounds (checked); writable per `new`'s contract.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.wrapping_add(at), N) };
    }

    /// A `u16` field.
    pub fn get_u16(&self, at: usize) -> u16 {
        u16::from_le_bytes(self.get(at))
    }

    /// A `u32` field.
    pub fn get_u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.get(at))
    }

    /// A pointer-sized field.
    pub fn get_usize(&self, at: usize) -> usize {
        usize::from_le_bytes(self.get(at))
    }

    /// Writes a `u8` field.
    pub fn put_u8(&self, at: usize, value: u8) {
        self.put(at, [value]);
    }

    /// Writes a `u16` field.
    pub fn put_u16(&self, at: usize, value: u16) {
        self.put(at, value.to_le_bytes());
    }

    /// Writes a `u32` field.
    pub fn put_u32(&self, at: usize, value: u32) {
        self.put(at, value.to_le_bytes());
    }

    /// Writes a pointer-sized field.
    pub fn put_usize(&self, at: usize, value: usize) {
        self.put(at, value.to_le_bytes());
    }
}
