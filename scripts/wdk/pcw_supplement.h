// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * Declarations the WDK's wdm.h has and Debian's mingw-w64 DDK headers lack, for the Linux build
 * of the driver's WDK flavour (scripts/wdk-build.sh): wdk-sys's own build script runs bindgen over
 * an include tree whose wdm.h is mingw-w64's wdm.h followed by this file, so wdk-sys's generated
 * bindings contain these items exactly as the WDK declares them.
 *
 * Written from the Windows Driver Kit documentation ("PcwRegister function (wdm.h)",
 * "PCW_REGISTRATION_INFORMATION structure (wdm.h)", "PCW_MASK_INFORMATION structure (wdm.h)",
 * "PCW_CALLBACK callback function (wdm.h)", "ExAllocatePool2 function (wdm.h)",
 * "POOL_FLAGS (wdm.h)", "KeQuerySystemTimePrecise function (wdm.h)",
 * "ObSetSecurityObjectByPointer function (ntifs.h)", "ExAcquirePushLockExclusiveEx" and its
 * siblings). The names keep the WDK's spelling: `typedef enum _PCW_CALLBACK_TYPE`, but
 * `typedef enum PCW_REGISTRATION_FLAGS` with no leading underscore.
 *
 * Every structure's size and every field's offset on x64 is asserted below, so a transcription
 * error stops the build (bindgen's clang reports the failed assertion).
 */
#ifndef PCW_RS_WDK_SUPPLEMENT_H
#define PCW_RS_WDK_SUPPLEMENT_H

/* ---- Pool allocation (Windows 10, version 2004) ---- */

typedef ULONG64 POOL_FLAGS;

#define POOL_FLAG_REQUIRED_START 0x0000000000000001ULL
#define POOL_FLAG_USE_QUOTA 0x0000000000000001ULL
#define POOL_FLAG_UNINITIALIZED 0x0000000000000002ULL
#define POOL_FLAG_SESSION 0x0000000000000004ULL
#define POOL_FLAG_CACHE_ALIGNED 0x0000000000000008ULL
#define POOL_FLAG_RESERVED1 0x0000000000000010ULL
#define POOL_FLAG_RAISE_ON_FAILURE 0x0000000000000020ULL
#define POOL_FLAG_NON_PAGED 0x0000000000000040ULL
#define POOL_FLAG_NON_PAGED_EXECUTE 0x0000000000000080ULL
#define POOL_FLAG_PAGED 0x0000000000000100ULL
#define POOL_FLAG_RESERVED2 0x0000000000000200ULL
#define POOL_FLAG_RESERVED3 0x0000000000000400ULL
#define POOL_FLAG_REQUIRED_END 0x0000000080000000ULL
#define POOL_FLAG_OPTIONAL_START 0x0000000100000000ULL
#define POOL_FLAG_SPECIAL_POOL 0x0000000100000000ULL
#define POOL_FLAG_OPTIONAL_END 0x8000000000000000ULL

NTKERNELAPI
PVOID
NTAPI
ExAllocatePool2(
    _In_ POOL_FLAGS Flags,
    _In_ SIZE_T NumberOfBytes,
    _In_ ULONG Tag);

/* ---- Time ---- */

NTKERNELAPI
VOID
NTAPI
KeQuerySystemTimePrecise(
    _Out_ PLARGE_INTEGER CurrentTime);

/* ---- Security (ntifs.h in the WDK) ---- */

NTKERNELAPI
NTSTATUS
ObSetSecurityObjectByPointer(
    _In_ PVOID Object,
    _In_ SECURITY_INFORMATION SecurityInformation,
    _In_ PSECURITY_DESCRIPTOR SecurityDescriptor);

/* ---- Push locks. The WDK's PEX_PUSH_LOCK is a ULONG_PTR pointer; mingw-w64's ntifs.h defines
 * it as a macro after this point, so the parameter is spelled as the type it names. ---- */

NTKERNELAPI VOID FASTCALL ExAcquirePushLockExclusiveEx(_Inout_ PULONG_PTR PushLock, _In_ ULONG Flags);
NTKERNELAPI VOID FASTCALL ExReleasePushLockExclusiveEx(_Inout_ PULONG_PTR PushLock, _In_ ULONG Flags);
NTKERNELAPI VOID FASTCALL ExAcquirePushLockSharedEx(_Inout_ PULONG_PTR PushLock, _In_ ULONG Flags);
NTKERNELAPI VOID FASTCALL ExReleasePushLockSharedEx(_Inout_ PULONG_PTR PushLock, _In_ ULONG Flags);

/* ---- Performance Counters for Windows (PCW) ---- */

typedef struct _PCW_INSTANCE *PPCW_INSTANCE;
typedef struct _PCW_REGISTRATION *PPCW_REGISTRATION;
typedef struct _PCW_BUFFER *PPCW_BUFFER;

typedef struct _PCW_COUNTER_DESCRIPTOR {
    USHORT Id;
    USHORT StructIndex;
    USHORT Offset;
    USHORT Size;
} PCW_COUNTER_DESCRIPTOR, *PPCW_COUNTER_DESCRIPTOR;

typedef struct _PCW_DATA {
    _In_reads_bytes_(Size) const VOID *Data;
    ULONG Size;
} PCW_DATA, *PPCW_DATA;

typedef struct _PCW_COUNTER_INFORMATION {
    ULONG64 CounterMask;
    PCUNICODE_STRING InstanceMask;
} PCW_COUNTER_INFORMATION, *PPCW_COUNTER_INFORMATION;

typedef struct _PCW_MASK_INFORMATION {
    ULONG64 CounterMask;
    PCUNICODE_STRING InstanceMask;
    ULONG InstanceId;
    BOOLEAN CollectMultiple;
    PPCW_BUFFER Buffer;
    PKEVENT CancelEvent;
} PCW_MASK_INFORMATION, *PPCW_MASK_INFORMATION;

typedef union _PCW_CALLBACK_INFORMATION {
    PCW_COUNTER_INFORMATION AddCounter;
    PCW_COUNTER_INFORMATION RemoveCounter;
    PCW_MASK_INFORMATION EnumerateInstances;
    PCW_MASK_INFORMATION CollectData;
} PCW_CALLBACK_INFORMATION, *PPCW_CALLBACK_INFORMATION;

typedef enum _PCW_CALLBACK_TYPE {
    PcwCallbackAddCounter = 0,
    PcwCallbackRemoveCounter,
    PcwCallbackEnumerateInstances,
    PcwCallbackCollectData,
} PCW_CALLBACK_TYPE, *PPCW_CALLBACK_TYPE;

typedef NTSTATUS NTAPI PCW_CALLBACK(
    _In_ PCW_CALLBACK_TYPE Type,
    _In_ PPCW_CALLBACK_INFORMATION Info,
    _In_opt_ PVOID Context);
typedef PCW_CALLBACK *PPCW_CALLBACK;

#define PCW_VERSION_1 0x0100
#define PCW_VERSION_2 0x0200
#define PCW_CURRENT_VERSION PCW_VERSION_2

/* PCW_MASK_INFORMATION.InstanceId when the consumer asks for every instance. */
#define PCW_ANY_INSTANCE_ID 0xFFFFFFFF

typedef enum PCW_REGISTRATION_FLAGS {
    PcwRegistrationNone = 0x0000,
    PcwRegistrationSiloNeutral = 0x0001,
} PCW_REGISTRATION_FLAGS;

typedef struct _PCW_REGISTRATION_INFORMATION {
    ULONG Version;
    PCUNICODE_STRING Name;
    ULONG CounterCount;
    PPCW_COUNTER_DESCRIPTOR Counters;
    PPCW_CALLBACK Callback;
    PVOID CallbackContext;
    PCW_REGISTRATION_FLAGS Flags;
} PCW_REGISTRATION_INFORMATION, *PPCW_REGISTRATION_INFORMATION;

NTKERNELAPI
NTSTATUS
PcwRegister(
    _Outptr_ PPCW_REGISTRATION *Registration,
    _In_ PPCW_REGISTRATION_INFORMATION Info);

NTKERNELAPI
VOID
PcwUnregister(
    _In_ PPCW_REGISTRATION Registration);

NTKERNELAPI
NTSTATUS
PcwCreateInstance(
    _Outptr_ PPCW_INSTANCE *Instance,
    _In_ PPCW_REGISTRATION Registration,
    _In_ PCUNICODE_STRING Name,
    _In_ ULONG Count,
    _In_reads_(Count) PPCW_DATA Data);

NTKERNELAPI
VOID
PcwCloseInstance(
    _In_ PPCW_INSTANCE Instance);

NTKERNELAPI
NTSTATUS
PcwAddInstance(
    _In_ PPCW_BUFFER Buffer,
    _In_ PCUNICODE_STRING Name,
    _In_ ULONG Id,
    _In_ ULONG Count,
    _In_reads_(Count) PPCW_DATA Data);

/* ---- The x64 layouts of the documentation, asserted ---- */

#if defined(_WIN64)
#define PCW_RS_ASSERT_SIZE(type, size) \
    _Static_assert(sizeof(type) == (size), "sizeof(" #type ") is not " #size " bytes on x64")
#define PCW_RS_ASSERT_OFFSET(type, field, offset) \
    _Static_assert(__builtin_offsetof(type, field) == (offset), \
                   #type "." #field " is not at offset " #offset " on x64")

PCW_RS_ASSERT_SIZE(PCW_COUNTER_DESCRIPTOR, 8);
PCW_RS_ASSERT_OFFSET(PCW_COUNTER_DESCRIPTOR, Id, 0);
PCW_RS_ASSERT_OFFSET(PCW_COUNTER_DESCRIPTOR, StructIndex, 2);
PCW_RS_ASSERT_OFFSET(PCW_COUNTER_DESCRIPTOR, Offset, 4);
PCW_RS_ASSERT_OFFSET(PCW_COUNTER_DESCRIPTOR, Size, 6);

PCW_RS_ASSERT_SIZE(PCW_DATA, 16);
PCW_RS_ASSERT_OFFSET(PCW_DATA, Data, 0);
PCW_RS_ASSERT_OFFSET(PCW_DATA, Size, 8);

PCW_RS_ASSERT_SIZE(PCW_COUNTER_INFORMATION, 16);
PCW_RS_ASSERT_OFFSET(PCW_COUNTER_INFORMATION, CounterMask, 0);
PCW_RS_ASSERT_OFFSET(PCW_COUNTER_INFORMATION, InstanceMask, 8);

PCW_RS_ASSERT_SIZE(PCW_MASK_INFORMATION, 40);
PCW_RS_ASSERT_OFFSET(PCW_MASK_INFORMATION, CounterMask, 0);
PCW_RS_ASSERT_OFFSET(PCW_MASK_INFORMATION, InstanceMask, 8);
PCW_RS_ASSERT_OFFSET(PCW_MASK_INFORMATION, InstanceId, 16);
PCW_RS_ASSERT_OFFSET(PCW_MASK_INFORMATION, CollectMultiple, 20);
PCW_RS_ASSERT_OFFSET(PCW_MASK_INFORMATION, Buffer, 24);
PCW_RS_ASSERT_OFFSET(PCW_MASK_INFORMATION, CancelEvent, 32);

PCW_RS_ASSERT_SIZE(PCW_CALLBACK_INFORMATION, 40);
PCW_RS_ASSERT_OFFSET(PCW_CALLBACK_INFORMATION, AddCounter, 0);
PCW_RS_ASSERT_OFFSET(PCW_CALLBACK_INFORMATION, RemoveCounter, 0);
PCW_RS_ASSERT_OFFSET(PCW_CALLBACK_INFORMATION, EnumerateInstances, 0);
PCW_RS_ASSERT_OFFSET(PCW_CALLBACK_INFORMATION, CollectData, 0);

PCW_RS_ASSERT_SIZE(PCW_REGISTRATION_INFORMATION, 56);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, Version, 0);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, Name, 8);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, CounterCount, 16);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, Counters, 24);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, Callback, 32);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, CallbackContext, 40);
PCW_RS_ASSERT_OFFSET(PCW_REGISTRATION_INFORMATION, Flags, 48);

_Static_assert(sizeof(PCW_CALLBACK_TYPE) == 4, "PCW_CALLBACK_TYPE is not a 4-byte enum");
_Static_assert(sizeof(PCW_REGISTRATION_FLAGS) == 4, "PCW_REGISTRATION_FLAGS is not a 4-byte enum");
_Static_assert(sizeof(POOL_FLAGS) == 8, "POOL_FLAGS is not 8 bytes");

#undef PCW_RS_ASSERT_SIZE
#undef PCW_RS_ASSERT_OFFSET
#endif /* _WIN64 */

#endif /* PCW_RS_WDK_SUPPLEMENT_H */
