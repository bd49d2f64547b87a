// SPDX-License-Identifier: MIT OR Apache-2.0
/* The few PCW types the C baselines need, declared by hand with the layouts of wdm.h on x64
 * (checked against windows-sys by the pcw-bench tests). Written for pcw-rs; not copied. */
#ifndef PCW_BENCH_PCW_H
#define PCW_BENCH_PCW_H
#include <stddef.h>
#include <stdint.h>

typedef int32_t NTSTATUS;

typedef struct {
    uint16_t Length;        /* bytes */
    uint16_t MaximumLength; /* bytes */
    uint16_t *Buffer;
} UNICODE_STRING;

typedef struct {
    const void *Data;
    uint32_t Size;
} PCW_DATA;

typedef struct {
    uint64_t CounterMask;
    const UNICODE_STRING *InstanceMask;
    uint32_t InstanceId;
    uint8_t CollectMultiple;
    void *Buffer;      /* PPCW_BUFFER */
    void *CancelEvent; /* PKEVENT */
} PCW_MASK_INFORMATION;

typedef union {
    struct {
        uint64_t CounterMask;
        const UNICODE_STRING *InstanceMask;
    } AddCounter;
    PCW_MASK_INFORMATION EnumerateInstances;
    PCW_MASK_INFORMATION CollectData;
} PCW_CALLBACK_INFORMATION;

enum {
    PcwCallbackAddCounter = 0,
    PcwCallbackRemoveCounter = 1,
    PcwCallbackEnumerateInstances = 2,
    PcwCallbackCollectData = 3,
};

#define PCW_ANY_INSTANCE_ID 0xFFFFFFFFu

/* Provided by whatever the binary links: pcw-sim, or the benches' no-op PCW. */
NTSTATUS PcwAddInstance(void *Buffer, const UNICODE_STRING *Name, uint32_t Id, uint32_t Count,
                        const PCW_DATA *Data);
void KeQuerySystemTimePrecise(int64_t *CurrentTime);

#endif
