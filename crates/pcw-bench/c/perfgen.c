// SPDX-License-Identifier: MIT OR Apache-2.0
/* Baseline (b): a V1 CollectPerformanceData body as a PerfGen-style C DLL writes it, written for
 * pcw-rs's benchmarks: the PERF_OBJECT_TYPE and PERF_COUNTER_DEFINITIONs as native structs, then
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

/* Baseline (c): the driver -> DLL device path done the plain way, for the same instances as
 * pg_collect's: the driver sizes its snapshot, then writes a header and one record per instance
 * (id, parent, name length, the values, the name with a NUL padded to 8 bytes); the DLL checks
 * every length, fills its own PG_INSTANCE array pointing into the snapshot, and writes the V1
 * object with pg_collect. The records are the plain ones (values as 8-byte words, as the driver
 * holds them), about as many bytes as pcw-core's, whose records are already the V1 instances;
 * the C decoder checks lengths only (not names, padding or reserved fields, which pcw-core's
 * parser checks too). */
#define DP_MAGIC 0x53574350u /* "PCWS" */

typedef struct {
    uint32_t Magic;
    uint32_t TotalLength;
    uint32_t Count;
    uint32_t NumCounters;
} DP_HEADER;

typedef struct {
    uint32_t Id;
    uint32_t Parent;
    uint16_t NameUnits;
    uint16_t Reserved[3];
} DP_RECORD;

_Static_assert(sizeof(DP_HEADER) == 16 && sizeof(DP_RECORD) == 16, "8-aligned records");

static size_t dp_record_len(uint32_t units, uint32_t counters) {
    return sizeof(DP_RECORD) + 8u * counters + ALIGN8((units + 1) * 2u);
}

/* The driver: writes the snapshot of `n` instances into buf; returns its length, or 0 when
 * `len` is too small (the driver then reports the size needed). */
static size_t dp_encode(const PG_INSTANCE *in, size_t n, uint32_t counters, uint8_t *buf,
                        size_t len) {
    size_t total = sizeof(DP_HEADER);
    for (size_t i = 0; i < n; i++) {
        total += dp_record_len(in[i].NameUnits, counters);
    }
    if (total > len) {
        return 0;
    }
    DP_HEADER *h = (DP_HEADER *)buf;
    h->Magic = DP_MAGIC;
    h->TotalLength = (uint32_t)total;
    h->Count = (uint32_t)n;
    h->NumCounters = counters;
    uint8_t *p = buf + sizeof(DP_HEADER);
    for (size_t i = 0; i < n; i++) {
        DP_RECORD *r = (DP_RECORD *)p;
        r->Id = (uint32_t)i;
        r->Parent = 0xFFFFFFFFu;
        r->NameUnits = (uint16_t)in[i].NameUnits;
        r->Reserved[0] = r->Reserved[1] = r->Reserved[2] = 0;
        memcpy(p + sizeof(DP_RECORD), in[i].Values, 8u * counters);
        uint8_t *name = p + sizeof(DP_RECORD) + 8u * counters;
        size_t area = ALIGN8((in[i].NameUnits + 1) * 2u);
        memset(name + area - 8, 0, 8); /* the NUL and the padding */
        memcpy(name, in[i].Name, in[i].NameUnits * 2u);
        p = name + area;
    }
    return total;
}

/* The DLL: checks the snapshot's lengths and fills `out` (room for `cap`) with instances
 * pointing into it; returns the count, or (size_t)-1 for a malformed snapshot. */
static size_t dp_decode(const uint8_t *buf, size_t len, PG_INSTANCE *out, size_t cap) {
    if (len < sizeof(DP_HEADER)) {
        return (size_t)-1;
    }
    const DP_HEADER *h = (const DP_HEADER *)buf;
    if (h->Magic != DP_MAGIC || h->TotalLength != len || h->Count > cap ||
        h->NumCounters > PG_MAX_COUNTERS) {
        return (size_t)-1;
    }
    size_t p = sizeof(DP_HEADER);
    for (uint32_t i = 0; i < h->Count; i++) {
        if (len - p < sizeof(DP_RECORD)) {
            return (size_t)-1;
        }
        const DP_RECORD *r = (const DP_RECORD *)(buf + p);
        if (r->NameUnits > 1023) {
            return (size_t)-1;
        }
        size_t record = dp_record_len(r->NameUnits, h->NumCounters);
        if (len - p < record) {
            return (size_t)-1;
        }
        out[i].Name = (const uint16_t *)(buf + p + sizeof(DP_RECORD) + 8u * h->NumCounters);
        out[i].NameUnits = r->NameUnits;
        out[i].UniqueId = -1;
        memcpy(out[i].Values, buf + p + sizeof(DP_RECORD), 8u * h->NumCounters);
        p += record;
    }
    return p == len ? h->Count : (size_t)-1;
}

/* The whole path: the driver's snapshot of o's instances into `snap` (room for `snap_len`), the
 * DLL's decoding into `scratch` (room for o->NumInstances), then pg_collect into `out`. Returns
 * the V1 bytes written, 0 on any failure. */
size_t dp_path(const PG_OBJECT *o, uint8_t *snap, size_t snap_len, PG_INSTANCE *scratch,
               uint8_t *out, size_t out_len) {
    size_t len = dp_encode(o->Instances, o->NumInstances, o->NumCounters, snap, snap_len);
    if (len == 0) {
        return 0;
    }
    size_t count = dp_decode(snap, len, scratch, o->NumInstances);
    if (count == (size_t)-1) {
        return 0;
    }
    PG_OBJECT decoded = *o;
    decoded.Instances = scratch;
    decoded.NumInstances = count;
    return pg_collect(&decoded, out, out_len);
}
