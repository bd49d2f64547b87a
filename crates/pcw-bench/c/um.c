// SPDX-License-Identifier: MIT OR Apache-2.0
/* Baseline (d): a user-mode Perflib V2 provider as Microsoft's samples write it, written for
 * pcw-rs's benchmarks: a counterset template as a static structure registered with
 * PerfSetCounterSetInfo, instances made with PerfCreateInstance (a reference counter bound with
 * PerfSetCounterRefValue to a field of the provider's own structure), values updated with
 * PerfSetULongCounterValue and friends, each call's status checked, and the reference counter
 * updated with a plain store into that structure.
 *
 * The counterset, "Bench Queue": 1 Depth (4-byte value), 2 Bytes (8-byte value), 3 Packets
 * (4-byte value, incremented), 4 Level (4-byte reference). */
#include "perflib.h"

typedef struct {
    uint32_t Level;
} UM_C_REFS;

/* The counter data as the template lays it out (CTRPP's values structure). */
typedef struct {
    uint32_t Depth;
    uint32_t Packets;
    uint64_t Bytes;
    uint32_t Level;
} UM_C_VALUES;

/* The template CTRPP-style: the set's header, then its counters, in one structure. */
typedef struct {
    PERF_COUNTERSET_INFO Set;
    PERF_COUNTER_INFO Counters[4];
} UM_C_TEMPLATE;

#define RAWCOUNT 0x00010000u
#define LARGE_RAWCOUNT 0x00010100u
#define COUNTER_COUNTER 0x10410400u

size_t um_c_template_size(void) { return sizeof(UM_C_TEMPLATE); }
size_t um_c_counter_info_size(void) { return sizeof(PERF_COUNTER_INFO); }
size_t um_c_context_size(void) { return sizeof(PERF_PROVIDER_CONTEXT); }
size_t um_c_instance_size(void) { return sizeof(PERF_COUNTERSET_INSTANCE); }

/* PerfStartProviderEx and PerfSetCounterSetInfo; the provider handle, or NULL. */
HANDLE um_c_start(const GUID *provider, const GUID *set) {
    PERF_PROVIDER_CONTEXT context = {sizeof context, 0, 0, 0, 0, 0};
    HANDLE handle = 0;
    if (PerfStartProviderEx(provider, &context, &handle) != ERROR_SUCCESS) {
        return 0;
    }
    UM_C_TEMPLATE t = {
        {*set, *provider, 4, PERF_COUNTERSET_MULTI_INSTANCES},
        {
            {1, RAWCOUNT, 0, 4, 100, 0, offsetof(UM_C_VALUES, Depth)},
            {2, LARGE_RAWCOUNT, 0, 8, 100, 0, offsetof(UM_C_VALUES, Bytes)},
            {3, COUNTER_COUNTER, 0, 4, 100, 0, offsetof(UM_C_VALUES, Packets)},
            {4, RAWCOUNT, PERF_ATTRIB_BY_REFERENCE, 4, 100, 0, offsetof(UM_C_VALUES, Level)},
        },
    };
    if (PerfSetCounterSetInfo(handle, &t.Set, sizeof t) != ERROR_SUCCESS) {
        PerfStopProvider(handle);
        return 0;
    }
    return handle;
}

/* PerfCreateInstance, its reference counter bound to `refs->Level`; NULL on failure. */
PERF_COUNTERSET_INSTANCE *um_c_create(HANDLE h, const GUID *set, const uint16_t *name,
                                      uint32_t id, UM_C_REFS *refs) {
    PERF_COUNTERSET_INSTANCE *instance = PerfCreateInstance(h, set, name, id);
    if (instance == 0) {
        return 0;
    }
    if (PerfSetCounterRefValue(h, instance, 4, &refs->Level) != ERROR_SUCCESS) {
        PerfDeleteInstance(h, instance);
        return 0;
    }
    return instance;
}

/* One instance made and deleted: the status of the first call that failed, else 0. */
uint32_t um_c_create_delete(HANDLE h, const GUID *set, const uint16_t *name, uint32_t id,
                            UM_C_REFS *refs) {
    PERF_COUNTERSET_INSTANCE *instance = um_c_create(h, set, name, id, refs);
    if (instance == 0) {
        return GetLastError();
    }
    return PerfDeleteInstance(h, instance);
}

/* Three updates through Perflib, each status checked: Depth set, Bytes set, Packets + 1. */
uint32_t um_c_update(HANDLE h, PERF_COUNTERSET_INSTANCE *instance, uint32_t depth,
                     uint64_t bytes) {
    uint32_t status = PerfSetULongCounterValue(h, instance, 1, depth);
    if (status != ERROR_SUCCESS) {
        return status;
    }
    status = PerfSetULongLongCounterValue(h, instance, 2, bytes);
    if (status != ERROR_SUCCESS) {
        return status;
    }
    return PerfIncrementULongCounterValue(h, instance, 3, 1);
}

/* The reference counter updated the samples' way: a store into the provider's structure. */
void um_c_store(UM_C_REFS *refs, uint32_t level) { refs->Level = level; }

/* The documented alternative to the setters: stores straight into the instance block's raw
 * counter data (here Depth, Bytes and Packets + 1, at their template offsets past the block's
 * header), unchecked and without a call. */
void um_c_update_direct(PERF_COUNTERSET_INSTANCE *instance, uint32_t depth, uint64_t bytes) {
    UM_C_VALUES *values = (UM_C_VALUES *)(instance + 1);
    values->Depth = depth;
    values->Bytes = bytes;
    values->Packets += 1;
}
