// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * A counters driver written the way C kernel providers are: a WDM driver with a control device,
 * an IOCTL that records queue traffic under a spin lock, and two countersets (c_driver.man) —
 * "C Driver Queues", answered by a PCW_CALLBACK that honours InstanceId, InstanceMask and
 * CounterMask, and "C Driver Global", a single instance created with PcwCreateInstance.
 *
 * It uses what C drivers usually use: DbgPrint/DbgPrintEx, ExAllocatePoolWithTag, the
 * Rtl*String* routines, memset, KeInitializeSpinLock/KeAcquireSpinLock/KeReleaseSpinLock, and
 * the headers' inline KeGetCurrentIrql (a CR8 read), KeQuerySystemTime (a KUSER_SHARED_DATA read)
 * and KeGetCurrentThread (a gs: read). Built with mingw-w64 by scripts/c-driver.sh; run by the
 * loader in crates/pcw-loader/tests/c_driver.rs.
 *
 * C_DRIVER_RAW_IRQL builds the variant that manages IRQL itself: CR8 read with inline assembly,
 * and KeRaiseIrql/KeLowerIrql (inline CR8 writes) around KeAcquireSpinLockAtDpcLevel.
 */

#include <ntddk.h>

#include "pcw_supplement.h"

#define C_DRIVER_TAG ((ULONG)0x76724443) /* "CDrv" in memory, as the tag 'vrDC' */
#define QUEUE_COUNT 4
#define NAME_CHARS 16
#define DPFLTR_IHVDRIVER_ID 77
#define DPFLTR_INFO_LEVEL 3
#ifndef STATUS_INVALID_PARAMETER_2
#define STATUS_INVALID_PARAMETER_2 ((NTSTATUS)0xC00000F0L)
#endif
#ifndef NonPagedPoolNx
#define NonPagedPoolNx ((POOL_TYPE)512)
#endif

/* CTL_CODE(FILE_DEVICE_UNKNOWN, 0x910, METHOD_BUFFERED, FILE_ANY_ACCESS) */
#define IOCTL_C_DRIVER_RECORD 0x00222440

/* What IOCTL_C_DRIVER_RECORD takes. */
typedef struct _RECORD_INPUT {
    ULONG Queue;
    ULONG Depth;
    ULONG64 Packets;
    ULONG64 Bytes;
} RECORD_INPUT;

/* "C Driver Queues": one block per instance. */
typedef struct _QUEUE_VALUES {
    ULONG64 Packets;
    ULONG64 Bytes;
    ULONG Depth;
    ULONG Reserved;
} QUEUE_VALUES;

/* "C Driver Global": the block PcwCreateInstance publishes. */
typedef struct _GLOBAL_VALUES {
    ULONG64 Collections;
    ULONG64 LoadTime;
    ULONG Queues;
    ULONG LoadIrql;
} GLOBAL_VALUES;

typedef struct _QUEUE {
    UNICODE_STRING Name;
    WCHAR NameBuffer[NAME_CHARS];
    ULONG Id;
    QUEUE_VALUES Values;
} QUEUE;

typedef struct _C_DRIVER {
    KSPIN_LOCK Lock;
    QUEUE Queues[QUEUE_COUNT];
    GLOBAL_VALUES Global;
    PPCW_REGISTRATION QueuesSet;
    PPCW_REGISTRATION GlobalSet;
    PPCW_INSTANCE GlobalInstance;
    PDEVICE_OBJECT Device;
} C_DRIVER;

static C_DRIVER *Driver;

static const PCW_COUNTER_DESCRIPTOR QueueCounters[] = {
    {1, 0, FIELD_OFFSET(QUEUE_VALUES, Packets), sizeof(ULONG64)},
    {2, 0, FIELD_OFFSET(QUEUE_VALUES, Bytes), sizeof(ULONG64)},
    {3, 0, FIELD_OFFSET(QUEUE_VALUES, Bytes), sizeof(ULONG64)},
    {4, 0, FIELD_OFFSET(QUEUE_VALUES, Depth), sizeof(ULONG)},
};

static const PCW_COUNTER_DESCRIPTOR GlobalCounters[] = {
    {1, 0, FIELD_OFFSET(GLOBAL_VALUES, Queues), sizeof(ULONG)},
    {2, 0, FIELD_OFFSET(GLOBAL_VALUES, Collections), sizeof(ULONG64)},
    {3, 0, FIELD_OFFSET(GLOBAL_VALUES, LoadTime), sizeof(ULONG64)},
    {4, 0, FIELD_OFFSET(GLOBAL_VALUES, LoadIrql), sizeof(ULONG)},
};

static const struct {
    PCWSTR Direction;
    ULONG Index;
    ULONG Id;
} QueueNames[QUEUE_COUNT] = {
    {L"rx ", 0, 10},
    {L"rx ", 1, 11},
    {L"tx ", 0, 20},
    {L"Tx Large ", 1, 21},
};

/* The current IRQL: the header's inline CR8 read, or, in the raw variant, our own. */
static KIRQL CurrentIrql(void)
{
#ifdef C_DRIVER_RAW_IRQL
    ULONG64 cr8;
    __asm__ __volatile__("mov %%cr8, %0" : "=r"(cr8));
    return (KIRQL)cr8;
#else
    return KeGetCurrentIrql();
#endif
}

/* Takes the driver's lock; returns the IRQL to go back to. */
static KIRQL Lock(void)
{
    KIRQL old;
#ifdef C_DRIVER_RAW_IRQL
    KeRaiseIrql(DISPATCH_LEVEL, &old);
    KeAcquireSpinLockAtDpcLevel(&Driver->Lock);
#else
    KeAcquireSpinLock(&Driver->Lock, &old);
#endif
    return old;
}

static void Unlock(KIRQL old)
{
#ifdef C_DRIVER_RAW_IRQL
    KeReleaseSpinLockFromDpcLevel(&Driver->Lock);
    KeLowerIrql(old);
#else
    KeReleaseSpinLock(&Driver->Lock, old);
#endif
}

/* PCW's name match: '*' any run, '?' one character, letters compared upper-cased. */
static BOOLEAN Matches(PCWSTR pattern, USHORT patternLength, PCWSTR name, USHORT nameLength)
{
    USHORT p = 0, n = 0, starP = 0xFFFF, starN = 0;
    while (n < nameLength) {
        if (p < patternLength && pattern[p] == L'*') {
            starP = ++p;
            starN = n;
        } else if (p < patternLength &&
                   (pattern[p] == L'?' ||
                    RtlUpcaseUnicodeChar(pattern[p]) == RtlUpcaseUnicodeChar(name[n]))) {
            p++;
            n++;
        } else if (starP != 0xFFFF) {
            p = starP;
            n = ++starN;
        } else {
            return FALSE;
        }
    }
    while (p < patternLength && pattern[p] == L'*') {
        p++;
    }
    return p == patternLength;
}

/* Whether a request selects a queue: its id (or any) and its name (or every name). */
static BOOLEAN Selected(const PCW_MASK_INFORMATION *request, const QUEUE *queue)
{
    const UNICODE_STRING *mask = request->InstanceMask;
    if (request->InstanceId != PCW_ANY_INSTANCE_ID && request->InstanceId != queue->Id) {
        return FALSE;
    }
    if (mask == NULL || mask->Length == 0 || (mask->Length == 2 && mask->Buffer[0] == L'*')) {
        return TRUE;
    }
    return Matches(mask->Buffer, mask->Length / 2, queue->Name.Buffer, queue->Name.Length / 2);
}

static NTSTATUS NTAPI QueuesCallback(PCW_CALLBACK_TYPE type, PPCW_CALLBACK_INFORMATION info,
                                     PVOID context)
{
    QUEUE_VALUES values[QUEUE_COUNT];
    const PCW_MASK_INFORMATION *request;
    PCW_DATA data;
    KIRQL old;
    ULONG i;
    NTSTATUS status;

    UNREFERENCED_PARAMETER(context);
    if (CurrentIrql() > APC_LEVEL) {
        DbgPrint("c_driver: callback at IRQL %u\n", (ULONG)CurrentIrql());
        return STATUS_UNSUCCESSFUL;
    }
    if (type != PcwCallbackEnumerateInstances && type != PcwCallbackCollectData) {
        return STATUS_SUCCESS;
    }
    request = type == PcwCallbackCollectData ? &info->CollectData : &info->EnumerateInstances;

    /* Copy the values under the lock; PcwAddInstance is called at PASSIVE_LEVEL, after it. */
    old = Lock();
    for (i = 0; i < QUEUE_COUNT; i++) {
        values[i] = Driver->Queues[i].Values;
    }
    if (type == PcwCallbackCollectData) {
        Driver->Global.Collections++;
    }
    Unlock(old);

    for (i = 0; i < QUEUE_COUNT; i++) {
        QUEUE *queue = &Driver->Queues[i];
        if (request->CancelEvent != NULL && KeReadStateEvent(request->CancelEvent)) {
            return STATUS_CANCELLED;
        }
        if (!Selected(request, queue)) {
            continue;
        }
        if (type == PcwCallbackEnumerateInstances) {
            status = PcwAddInstance(request->Buffer, &queue->Name, queue->Id, 0, NULL);
        } else {
            /* Only the counters asked for; the others stay 0. */
            QUEUE_VALUES wanted;
            RtlZeroMemory(&wanted, sizeof(wanted));
            if (request->CounterMask & (1ULL << 1)) {
                wanted.Packets = values[i].Packets;
            }
            if (request->CounterMask & ((1ULL << 2) | (1ULL << 3))) {
                wanted.Bytes = values[i].Bytes;
            }
            if (request->CounterMask & (1ULL << 4)) {
                wanted.Depth = values[i].Depth;
            }
            data.Data = &wanted;
            data.Size = sizeof(wanted);
            status = PcwAddInstance(request->Buffer, &queue->Name, queue->Id, 1, &data);
        }
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI Complete(PIRP irp, NTSTATUS status, ULONG_PTR information)
{
    irp->IoStatus.Status = status;
    irp->IoStatus.Information = information;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return status;
}

static NTSTATUS NTAPI CreateClose(PDEVICE_OBJECT device, PIRP irp)
{
    UNREFERENCED_PARAMETER(device);
    return Complete(irp, STATUS_SUCCESS, 0);
}

static NTSTATUS NTAPI DeviceControl(PDEVICE_OBJECT device, PIRP irp)
{
    PIO_STACK_LOCATION stack = IoGetCurrentIrpStackLocation(irp);
    const RECORD_INPUT *input = irp->AssociatedIrp.SystemBuffer;
    QUEUE_VALUES *values;
    KIRQL old;

    UNREFERENCED_PARAMETER(device);
    if (stack->Parameters.DeviceIoControl.IoControlCode != IOCTL_C_DRIVER_RECORD) {
        return Complete(irp, STATUS_INVALID_DEVICE_REQUEST, 0);
    }
    if (stack->Parameters.DeviceIoControl.InputBufferLength != sizeof(RECORD_INPUT)) {
        return Complete(irp, STATUS_INFO_LENGTH_MISMATCH, 0);
    }
    if (input->Queue >= QUEUE_COUNT) {
        return Complete(irp, STATUS_INVALID_PARAMETER, 0);
    }
    values = &Driver->Queues[input->Queue].Values;
    old = Lock();
    values->Packets += input->Packets;
    values->Bytes += input->Bytes;
    values->Depth = input->Depth;
    Unlock(old);
    return Complete(irp, STATUS_SUCCESS, 0);
}

static UNICODE_STRING DeviceName = RTL_CONSTANT_STRING(L"\\Device\\PcwRsCDriver");
static UNICODE_STRING LinkName = RTL_CONSTANT_STRING(L"\\DosDevices\\PcwRsCDriver");

/* Undoes whatever DriverEntry got done, in reverse; every field is NULL or live. */
static void Teardown(void)
{
    if (Driver == NULL) {
        return;
    }
    if (Driver->Device != NULL) {
        IoDeleteSymbolicLink(&LinkName);
        IoDeleteDevice(Driver->Device);
    }
    if (Driver->GlobalInstance != NULL) {
        PcwCloseInstance(Driver->GlobalInstance);
    }
    if (Driver->GlobalSet != NULL) {
        PcwUnregister(Driver->GlobalSet);
    }
    if (Driver->QueuesSet != NULL) {
        PcwUnregister(Driver->QueuesSet);
    }
    ExFreePoolWithTag(Driver, C_DRIVER_TAG);
    Driver = NULL;
}

static void NTAPI Unload(PDRIVER_OBJECT driverObject)
{
    UNREFERENCED_PARAMETER(driverObject);
    DbgPrint("c_driver: unloading after %I64u collections\n", Driver->Global.Collections);
    Teardown();
}

/* PcwRegister as version 2, falling back to version 1 on builds before 10.0.19645. */
static NTSTATUS Register(PPCW_REGISTRATION *registration, PCWSTR name,
                         const PCW_COUNTER_DESCRIPTOR *counters, ULONG count,
                         PPCW_CALLBACK callback)
{
    PCW_REGISTRATION_INFORMATION info;
    UNICODE_STRING setName;
    NTSTATUS status;

    RtlInitUnicodeString(&setName, name);
    RtlZeroMemory(&info, sizeof(info));
    info.Version = PCW_VERSION_2;
    info.Name = &setName;
    info.CounterCount = count;
    info.Counters = (PPCW_COUNTER_DESCRIPTOR)counters;
    info.Callback = callback;
    status = PcwRegister(registration, &info);
    if (status == STATUS_INVALID_PARAMETER_2) {
        info.Version = PCW_VERSION_1;
        status = PcwRegister(registration, &info);
    }
    if (!NT_SUCCESS(status)) {
        *registration = NULL;
        DbgPrint("c_driver: PcwRegister(%ws) failed with %#lx\n", name, (ULONG)status);
    }
    return status;
}

NTSTATUS NTAPI DriverEntry(PDRIVER_OBJECT driverObject, PUNICODE_STRING registryPath)
{
    KIRQL irql = CurrentIrql();
    LARGE_INTEGER now;
    UNICODE_STRING number;
    PCW_DATA global;
    NTSTATUS status;
    ULONG i;

    DbgPrint("c_driver: loading from %wZ at IRQL %u, thread %p\n", registryPath, (ULONG)irql,
             KeGetCurrentThread());
    if (irql != PASSIVE_LEVEL) {
        return STATUS_UNSUCCESSFUL;
    }
    Driver = ExAllocatePoolWithTag(NonPagedPoolNx, sizeof(*Driver), C_DRIVER_TAG);
    if (Driver == NULL) {
        DbgPrint("c_driver: no memory for %Iu bytes\n", sizeof(*Driver));
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    RtlZeroMemory(Driver, sizeof(*Driver));
    KeInitializeSpinLock(&Driver->Lock);
    KeQuerySystemTime(&now);
    Driver->Global.LoadTime = (ULONG64)now.QuadPart;
    Driver->Global.LoadIrql = irql;
    Driver->Global.Queues = QUEUE_COUNT;

    for (i = 0; i < QUEUE_COUNT; i++) {
        QUEUE *queue = &Driver->Queues[i];
        WCHAR digits[12];
        queue->Name.Buffer = queue->NameBuffer;
        queue->Name.Length = 0;
        queue->Name.MaximumLength = sizeof(queue->NameBuffer);
        number.Buffer = digits;
        number.Length = 0;
        number.MaximumLength = sizeof(digits);
        RtlAppendUnicodeToString(&queue->Name, QueueNames[i].Direction);
        RtlIntegerToUnicodeString(QueueNames[i].Index, 10, &number);
        RtlAppendUnicodeStringToString(&queue->Name, &number);
        queue->Id = QueueNames[i].Id;
        /* Bytes start above 2^32, so that a 32-bit truncation anywhere shows. */
        queue->Values.Bytes = ((ULONG64)(i + 1) << 32) + 7 * i;
        queue->Values.Depth = 3 * i;
        DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_INFO_LEVEL, "c_driver: queue %wZ id %lu bytes %I64u\n",
                   &queue->Name, queue->Id, queue->Values.Bytes);
    }

    status = Register(&Driver->QueuesSet, L"C Driver Queues", QueueCounters,
                      RTL_NUMBER_OF(QueueCounters), QueuesCallback);
    if (NT_SUCCESS(status)) {
        status = Register(&Driver->GlobalSet, L"C Driver Global", GlobalCounters,
                          RTL_NUMBER_OF(GlobalCounters), NULL);
    }
    if (NT_SUCCESS(status)) {
        UNICODE_STRING single = RTL_CONSTANT_STRING(L"");
        global.Data = &Driver->Global;
        global.Size = sizeof(Driver->Global);
        status = PcwCreateInstance(&Driver->GlobalInstance, Driver->GlobalSet, &single, 1, &global);
        if (!NT_SUCCESS(status)) {
            Driver->GlobalInstance = NULL;
        }
    }
    if (NT_SUCCESS(status)) {
        status = IoCreateDevice(driverObject, 0, &DeviceName, FILE_DEVICE_UNKNOWN,
                                FILE_DEVICE_SECURE_OPEN, FALSE, &Driver->Device);
        if (!NT_SUCCESS(status)) {
            Driver->Device = NULL;
        }
    }
    if (NT_SUCCESS(status)) {
        status = IoCreateSymbolicLink(&LinkName, &DeviceName);
        if (!NT_SUCCESS(status)) {
            IoDeleteDevice(Driver->Device);
            Driver->Device = NULL;
        }
    }
    if (!NT_SUCCESS(status)) {
        DbgPrint("c_driver: DriverEntry fails with %#lx\n", (ULONG)status);
        Teardown();
        return status;
    }
    driverObject->MajorFunction[IRP_MJ_CREATE] = CreateClose;
    driverObject->MajorFunction[IRP_MJ_CLOSE] = CreateClose;
    driverObject->MajorFunction[IRP_MJ_DEVICE_CONTROL] = DeviceControl;
    driverObject->DriverUnload = Unload;
    DbgPrint("c_driver: loaded at %I64u with %lu queues\n", Driver->Global.LoadTime,
             Driver->Global.Queues);
    return STATUS_SUCCESS;
}
