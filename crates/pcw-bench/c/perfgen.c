/* Baseline (b): a V1 CollectPerformanceData body as a PerfGen-style C DLL writes it, written for
 * pcw-rs (issue 7): the PERF_OBJECT_TYPE and PERF_COUNTER_DEFINITIONs as native structs, then
 * per instance a PERF_INSTANCE_DEFINITION, the name with its NUL and padding, and a
 * PERF_COUNTER_BLOCK with the values stored at their offsets. The size is computed first and
 * nothing is written when the buffer is too small (ERROR_MORE_DATA), like pcw-core's writer, and
 * padding is zeroed, so both produce the same bytes (checked by the pcw-bench tests). */
#include <stdint.h>
#include <string.h>

typedef struct {
    uint32_t TotalByteLength;
    uint32_t DefinitionLength;
    uint32_t HeaderLength;
    uint32_t ObjectNameTitleIndex;
    uint32_t ObjectNameTitle; /* DWORD on _WIN64 */
    uint32_t ObjectHelpTitleIndex;
    uint32_t ObjectHelpTitle;
    uint32_t DetailLevel;
    uint32_t NumCounters;
    int32_t DefaultCounter;
    int32_t NumInstances;
    uint32_t CodePage;
    int64_t PerfTime;
    int64_t PerfFreq;
} PERF_OBJECT_TYPE;

typedef struct {
    uint32_t ByteLength;
    uint32_t CounterNameTitleIndex;
    uint32_t CounterNameTitle;
    uint32_t CounterHelpTitleIndex;
    uint32_t CounterHelpTitle;
    int32_t DefaultScale;
    uint32_t DetailLevel;
    uint32_t CounterType;
    uint32_t CounterSize;
    uint32_t CounterOffset;
} PERF_COUNTER_DEFINITION;

typedef struct {
    uint32_t ByteLength;
    uint32_t ParentObjectTitleIndex;
    uint32_t ParentObjectInstance;
    int32_t UniqueID;
    uint32_t NameOffset;
    uint32_t NameLength;
} PERF_INSTANCE_DEFINITION;

typedef struct {
    uint32_t ByteLength;
} PERF_COUNTER_BLOCK;

_Static_assert(sizeof(PERF_OBJECT_TYPE) == 64, "PERF_OBJECT_TYPE");
_Static_assert(sizeof(PERF_COUNTER_DEFINITION) == 40, "PERF_COUNTER_DEFINITION");
_Static_assert(sizeof(PERF_INSTANCE_DEFINITION) == 24, "PERF_INSTANCE_DEFINITION");

#define PG_MAX_COUNTERS 8

typedef struct {
    const uint16_t *Name;
    uint32_t NameUnits;
    int32_t UniqueId;
    uint64_t Values[PG_MAX_COUNTERS];
} PG_INSTANCE;

typedef struct {
    uint32_t NameTitleIndex;
    uint32_t HelpTitleIndex;
    int32_t DefaultScale;
    uint32_t DetailLevel;
    uint32_t CounterType;
    uint32_t Size;
    uint32_t Offset;
} PG_COUNTER;

typedef struct {
    uint32_t NameTitleIndex;
    uint32_t HelpTitleIndex;
    uint32_t DetailLevel;
    int32_t DefaultCounter;
    int64_t PerfTime;
    int64_t PerfFreq;
    const PG_COUNTER *Counters;
    uint32_t NumCounters;
    uint32_t BlockLength; /* 8-aligned PERF_COUNTER_BLOCK + values */
    const PG_INSTANCE *Instances;
    size_t NumInstances;
} PG_OBJECT;

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

static size_t instance_def_len(const PG_INSTANCE *i) {
    return ALIGN8(sizeof(PERF_INSTANCE_DEFINITION) + (i->NameUnits + 1) * 2u);
}

/* Writes the object into buf; returns the bytes written, or 0 with nothing written when `len`
 * is too small (the DLL then returns ERROR_MORE_DATA). */
size_t pg_collect(const PG_OBJECT *o, uint8_t *buf, size_t len) {
    if (o->NumCounters > PG_MAX_COUNTERS) {
        return 0;
    }
    size_t defs = sizeof(PERF_OBJECT_TYPE) + o->NumCounters * sizeof(PERF_COUNTER_DEFINITION);
    size_t total = defs;
    for (size_t i = 0; i < o->NumInstances; i++) {
        total += instance_def_len(&o->Instances[i]) + o->BlockLength;
    }
    if (total > len) {
        return 0;
    }

    PERF_OBJECT_TYPE *obj = (PERF_OBJECT_TYPE *)buf;
    obj->TotalByteLength = (uint32_t)total;
    obj->DefinitionLength = (uint32_t)defs;
    obj->HeaderLength = sizeof(PERF_OBJECT_TYPE);
    obj->ObjectNameTitleIndex = o->NameTitleIndex;
    obj->ObjectNameTitle = 0;
    obj->ObjectHelpTitleIndex = o->HelpTitleIndex;
    obj->ObjectHelpTitle = 0;
    obj->DetailLevel = o->DetailLevel;
    obj->NumCounters = o->NumCounters;
    obj->DefaultCounter = o->DefaultCounter;
    obj->NumInstances = (int32_t)o->NumInstances;
    obj->CodePage = 0;
    obj->PerfTime = o->PerfTime;
    obj->PerfFreq = o->PerfFreq;

    PERF_COUNTER_DEFINITION *cd = (PERF_COUNTER_DEFINITION *)(buf + sizeof(PERF_OBJECT_TYPE));
    for (uint32_t c = 0; c < o->NumCounters; c++) {
        const PG_COUNTER *s = &o->Counters[c];
        cd[c].ByteLength = sizeof(PERF_COUNTER_DEFINITION);
        cd[c].CounterNameTitleIndex = s->NameTitleIndex;
        cd[c].CounterNameTitle = 0;
        cd[c].CounterHelpTitleIndex = s->HelpTitleIndex;
        cd[c].CounterHelpTitle = 0;
        cd[c].DefaultScale = s->DefaultScale;
        cd[c].DetailLevel = s->DetailLevel;
        cd[c].CounterType = s->CounterType;
        cd[c].CounterSize = s->Size;
        cd[c].CounterOffset = s->Offset;
    }

    uint8_t *p = buf + defs;
    for (size_t i = 0; i < o->NumInstances; i++) {
        const PG_INSTANCE *in = &o->Instances[i];
        size_t def_len = instance_def_len(in);
        PERF_INSTANCE_DEFINITION *id = (PERF_INSTANCE_DEFINITION *)p;
        id->ByteLength = (uint32_t)def_len;
        id->ParentObjectTitleIndex = 0;
        id->ParentObjectInstance = 0;
        id->UniqueID = in->UniqueId;
        id->NameOffset = sizeof(PERF_INSTANCE_DEFINITION);
        id->NameLength = (in->NameUnits + 1) * 2u;
        size_t name_bytes = in->NameUnits * 2u;
        memcpy(p + sizeof(PERF_INSTANCE_DEFINITION), in->Name, name_bytes);
        size_t used = sizeof(PERF_INSTANCE_DEFINITION) + name_bytes;
        memset(p + used, 0, def_len - used); /* the NUL and the padding */
        p += def_len;

        memset(p, 0, o->BlockLength);
        ((PERF_COUNTER_BLOCK *)p)->ByteLength = o->BlockLength;
        for (uint32_t c = 0; c < o->NumCounters; c++) {
            const PG_COUNTER *s = &o->Counters[c];
            if (s->Size == 4) {
                *(uint32_t *)(p + s->Offset) = (uint32_t)in->Values[c];
            } else if (s->Size == 8) {
                *(uint64_t *)(p + s->Offset) = in->Values[c];
            }
        }
        p += o->BlockLength;
    }
    return total;
}

/* The physical floor: the same number of bytes, copied. */
void pg_memcpy(uint8_t *dst, const uint8_t *src, size_t len) { memcpy(dst, src, len); }
