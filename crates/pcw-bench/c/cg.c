// SPDX-License-Identifier: MIT OR Apache-2.0
/* Callgrind client requests for pcw-bench's instruction-count mode; no-ops outside valgrind
 * and when the valgrind headers are missing. */
#ifdef PCW_BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

void pcw_bench_cg_zero(void) {
#ifdef PCW_BENCH_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
}

void pcw_bench_cg_dump(const char *label) {
#ifdef PCW_BENCH_HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS_AT(label);
#else
    (void)label;
#endif
}

int pcw_bench_cg_available(void) {
#ifdef PCW_BENCH_HAVE_CALLGRIND
    return 1;
#else
    return 0;
#endif
}
