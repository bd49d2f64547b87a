// SPDX-License-Identifier: MIT OR Apache-2.0
/* The few Perflib V2 (perflib.h) types and functions the user-mode C baseline needs, declared by
 * hand with the x64 layouts of the Windows SDK (checked against windows-sys by the pcw-bench
 * tests). Written for pcw-rs; not copied. The functions are whatever the binary links: pcw-sim's
 * simulated Perflib, or the benches' stand-in of `pcw_bench::noop_perflib!`. */
#ifndef PCW_BENCH_PERFLIB_H
#define PCW_BENCH_PERFLIB_H
#include <stddef.h>
#include <stdint.h>

typedef void *HANDLE;

typedef struct {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID;

typedef struct {
    GUID CounterSetGuid;
    uint32_t dwSize;
    uint32_t InstanceId;
    uint32_t InstanceNameOffset;
    uint32_t InstanceNameSize;
} PERF_COUNTERSET_INSTANCE;

typedef struct {
    GUID CounterSetGuid;
    GUID ProviderGuid;
    uint32_t NumCounters;
    uint32_t InstanceType;
} PERF_COUNTERSET_INFO;

typedef struct {
    uint32_t CounterId;
    uint32_t Type;
    uint64_t Attrib;
    uint32_t Size;
    uint32_t DetailLevel;
    int32_t Scale;
    uint32_t Offset;
} PERF_COUNTER_INFO;

typedef uint32_t (*PERFLIBREQUEST)(uint32_t RequestCode, void *Buffer, uint32_t BufferSize);

typedef struct {
    uint32_t ContextSize;
    uint32_t Reserved;
    PERFLIBREQUEST ControlCallback;
    void *MemAllocRoutine;
    void *MemFreeRoutine;
    void *pMemContext;
} PERF_PROVIDER_CONTEXT;

#define ERROR_SUCCESS 0u
#define PERF_COUNTERSET_MULTI_INSTANCES 2u
#define PERF_ATTRIB_BY_REFERENCE 1ull

uint32_t PerfStartProviderEx(const GUID *ProviderGuid, const PERF_PROVIDER_CONTEXT *Context,
                             HANDLE *Provider);
uint32_t PerfStopProvider(HANDLE Provider);
uint32_t PerfSetCounterSetInfo(HANDLE Provider, PERF_COUNTERSET_INFO *Template,
                               uint32_t TemplateSize);
PERF_COUNTERSET_INSTANCE *PerfCreateInstance(HANDLE Provider, const GUID *CounterSetGuid,
                                             const uint16_t *Name, uint32_t Id);
uint32_t PerfDeleteInstance(HANDLE Provider, PERF_COUNTERSET_INSTANCE *InstanceBlock);
uint32_t PerfSetULongCounterValue(HANDLE Provider, PERF_COUNTERSET_INSTANCE *Instance,
                                  uint32_t CounterId, uint32_t Value);
uint32_t PerfSetULongLongCounterValue(HANDLE Provider, PERF_COUNTERSET_INSTANCE *Instance,
                                      uint32_t CounterId, uint64_t Value);
uint32_t PerfIncrementULongCounterValue(HANDLE Provider, PERF_COUNTERSET_INSTANCE *Instance,
                                        uint32_t CounterId, uint32_t Value);
uint32_t PerfSetCounterRefValue(HANDLE Provider, PERF_COUNTERSET_INSTANCE *Instance,
                                uint32_t CounterId, void *Address);
uint32_t GetLastError(void);

#endif
