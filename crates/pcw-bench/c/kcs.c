// SPDX-License-Identifier: MIT OR Apache-2.0
/* Baseline (a): a PCW provider callback as typical hand-written C providers (KCS style) do it,
 * written for pcw-rs's benchmarks: an array of instances under a reader lock, walked front to back;
 * PcwAddInstance per selected instance; InstanceId found by a linear scan; InstanceMask matched
 * by the naive recursive wildcard matcher; every counter computed whatever CounterMask asks.
 *
 * It serves the same "Geometric Waves" counterset as the driver (two ULONG counters, same
 * values), so both sides hand PCW the same bytes. */
#include "pcw.h"

typedef struct {
    uint32_t Id;
    UNICODE_STRING Name;
    uint32_t Minimum;
    uint32_t Amplitude;
} KCS_INSTANCE;

typedef struct {
    uint32_t Triangle;
    uint32_t Square;
} KCS_WAVE_VALUES;

static KCS_INSTANCE *g_instances;
static size_t g_count;
static volatile int32_t g_lock; /* readers count; a writer would wait for zero */

/* Steps left for the current match; the naive matcher gives up (no match) at zero. */
static uint64_t g_match_budget;
static uint64_t g_match_cap = 1000000;
static uint64_t g_capped;

void kcs_set_instances(KCS_INSTANCE *instances, size_t count) {
    g_instances = instances;
    g_count = count;
}

void kcs_set_match_cap(uint64_t cap) { g_match_cap = cap; }

/* How many matches hit the cap since the last call (and reset). */
uint64_t kcs_take_capped(void) {
    uint64_t c = g_capped;
    g_capped = 0;
    return c;
}

size_t kcs_instance_size(void) { return sizeof(KCS_INSTANCE); }
size_t kcs_mask_information_size(void) { return sizeof(PCW_MASK_INFORMATION); }
size_t kcs_mask_buffer_offset(void) { return offsetof(PCW_MASK_INFORMATION, Buffer); }
size_t kcs_mask_instance_id_offset(void) { return offsetof(PCW_MASK_INFORMATION, InstanceId); }

static uint16_t upcase(uint16_t c) { return (c >= 'a' && c <= 'z') ? (uint16_t)(c - 32) : c; }

/* The textbook recursive matcher: '*' tries every split, exponential in the worst case. */
static int naive_match(const uint16_t *p, size_t pn, const uint16_t *s, size_t sn) {
    if (g_match_budget == 0) {
        return 0;
    }
    if (--g_match_budget == 0) {
        g_capped++;
        return 0;
    }
    if (pn == 0) {
        return sn == 0;
    }
    if (*p == '*') {
        return naive_match(p + 1, pn - 1, s, sn) || (sn > 0 && naive_match(p, pn, s + 1, sn - 1));
    }
    if (sn == 0) {
        return 0;
    }
    if (*p == '?' || upcase(*p) == upcase(*s)) {
        return naive_match(p + 1, pn - 1, s + 1, sn - 1);
    }
    return 0;
}

int kcs_match(const UNICODE_STRING *mask, const UNICODE_STRING *name) {
    g_match_budget = g_match_cap;
    return naive_match(mask->Buffer, mask->Length / 2, name->Buffer, name->Length / 2);
}

static void wave_values(const KCS_INSTANCE *w, int64_t now, KCS_WAVE_VALUES *v) {
    int64_t seconds = now / 10000000;
    int64_t index = seconds % 10;
    if (index < 0) {
        index += 10;
    }
    uint32_t i = (uint32_t)index;
    uint32_t distance = i > 5 ? i - 5 : 5 - i;
    v->Triangle = w->Minimum + w->Amplitude * distance / 5;
    v->Square = w->Minimum + (i < 5 ? w->Amplitude : 0);
}

static NTSTATUS add_one(const PCW_MASK_INFORMATION *m, const KCS_INSTANCE *w, int64_t now,
                        int collect) {
    if (!collect) {
        return PcwAddInstance(m->Buffer, &w->Name, w->Id, 0, NULL);
    }
    KCS_WAVE_VALUES values;
    wave_values(w, now, &values);
    PCW_DATA data = {&values, sizeof values};
    return PcwAddInstance(m->Buffer, &w->Name, w->Id, 1, &data);
}

NTSTATUS kcs_callback(int32_t kind, const PCW_CALLBACK_INFORMATION *info, void *context) {
    (void)context;
    const PCW_MASK_INFORMATION *m;
    int collect;
    if (kind == PcwCallbackCollectData) {
        m = &info->CollectData;
        collect = 1;
    } else if (kind == PcwCallbackEnumerateInstances) {
        m = &info->EnumerateInstances;
        collect = 0;
    } else {
        return 0;
    }
    int64_t now = 0;
    if (collect) {
        KeQuerySystemTimePrecise(&now);
    }
    NTSTATUS status = 0;
    __atomic_fetch_add(&g_lock, 1, __ATOMIC_ACQUIRE);
    if (m->InstanceId != PCW_ANY_INSTANCE_ID) {
        for (size_t i = 0; i < g_count; i++) {
            if (g_instances[i].Id == m->InstanceId) {
                status = add_one(m, &g_instances[i], now, collect);
                break;
            }
        }
    } else {
        for (size_t i = 0; i < g_count; i++) {
            const KCS_INSTANCE *w = &g_instances[i];
            if (m->InstanceMask != NULL && m->InstanceMask->Length != 0 &&
                !kcs_match(m->InstanceMask, &w->Name)) {
                continue;
            }
            status = add_one(m, w, now, collect);
            if (status < 0) {
                break;
            }
        }
    }
    __atomic_fetch_sub(&g_lock, 1, __ATOMIC_RELEASE);
    return status;
}
