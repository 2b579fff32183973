/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stage times of GPU requests (gpursa_stages in gpursa_queue.h): log-linear
 * histograms in microseconds, 8 buckets per power of two (12.5 % steps),
 * exact below 16 µs. Filled with relaxed atomics by the runners; read at
 * unload (GPURSA_STATS=2) and by the metrics thread (metrics_file).
 */
#include "queue/gpursa_queue.h"

static const char *const gpursa_stage_names[GPURSA_NSTAGES] = {
    "wait", "start", "prep", "submit", "topup", "device", "kernel", "done", "total", "cpu",
    "cpu.prep", "cpu.submit", "cpu.topup", "cpu.wait", "cpu.done",
};

static unsigned gpursa_stage_bucket(uint64_t us)
{
    unsigned e, idx;

    if (us < 16)
        return (unsigned)us;
    e = 63u - (unsigned)__builtin_clzll(us);            /* >= 4 */
    idx = 16u + (e - 4u) * 8u + (unsigned)((us >> (e - 3u)) & 7u);
    return idx < GPURSA_STAGE_BUCKETS ? idx : GPURSA_STAGE_BUCKETS - 1;
}

/* The smallest value that lands in bucket idx. */
static uint64_t gpursa_stage_floor(unsigned idx)
{
    unsigned e;

    if (idx < 16)
        return idx;
    e = (idx - 16u) / 8u + 4u;
    return (uint64_t)(8u + (idx - 16u) % 8u) << (e - 3u);
}

void gpursa_stages_add(gpursa_stages *h, int stage, uint64_t us, uint64_t count)
{
    uint64_t m;

    if (h == NULL || stage < 0 || stage >= GPURSA_NSTAGES || count == 0)
        return;
    atomic_fetch_add_explicit(&h->n[stage][gpursa_stage_bucket(us)], count, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us[stage], us * count, memory_order_relaxed);
    m = atomic_load_explicit(&h->max_us[stage], memory_order_relaxed);
    while (us > m && !atomic_compare_exchange_weak_explicit(&h->max_us[stage], &m, us,
                                                            memory_order_relaxed,
                                                            memory_order_relaxed))
        ;
}

const char *gpursa_stages_name(int stage)
{
    return stage >= 0 && stage < GPURSA_NSTAGES ? gpursa_stage_names[stage] : "?";
}

void gpursa_stages_cumulative(const gpursa_stages *h, int stage, unsigned e0, unsigned nbelow,
                              uint64_t *below, uint64_t *count, uint64_t *sum_us)
{
    uint64_t seen = 0;
    unsigned i, k = 0;

    *count = *sum_us = 0;
    if (h == NULL || stage < 0 || stage >= GPURSA_NSTAGES)
        return;
    /* The sum first: an observation counted meanwhile only adds to count. */
    *sum_us = atomic_load_explicit(&h->sum_us[stage], memory_order_relaxed);
    for (i = 0; i < GPURSA_STAGE_BUCKETS; i++) {
        /* buckets below the one where 2^e starts: all values below 2^e */
        while (k < nbelow && gpursa_stage_bucket((uint64_t)1 << (e0 + k)) <= i)
            below[k++] = seen;
        seen += atomic_load_explicit(&h->n[stage][i], memory_order_relaxed);
    }
    while (k < nbelow)
        below[k++] = seen;
    *count = seen;
}

static uint64_t gpursa_stage_quantile(const uint64_t *b, uint64_t total, double q)
{
    uint64_t want = (uint64_t)(q * (double)total), seen = 0;

    for (unsigned i = 0; i < GPURSA_STAGE_BUCKETS; i++) {
        seen += b[i];
        if (seen > want)
            return gpursa_stage_floor(i);
    }
    return gpursa_stage_floor(GPURSA_STAGE_BUCKETS - 1);
}

void gpursa_stages_print(const gpursa_stages *h, const char *prefix)
{
    char body[256];

    if (h == NULL)
        return;
    for (int s = 0; s < GPURSA_NSTAGES; s++) {
        uint64_t b[GPURSA_STAGE_BUCKETS], total = 0;

        for (unsigned i = 0; i < GPURSA_STAGE_BUCKETS; i++)
            total += b[i] = atomic_load_explicit(&h->n[s][i], memory_order_relaxed);
        if (total == 0)
            continue;
        (void)snprintf(body, sizeof(body), "%-6s n=%llu p50=%llu p90=%llu p99=%llu p999=%llu max=%llu us",
                       gpursa_stage_names[s], (unsigned long long)total,
                       (unsigned long long)gpursa_stage_quantile(b, total, 0.5),
                       (unsigned long long)gpursa_stage_quantile(b, total, 0.9),
                       (unsigned long long)gpursa_stage_quantile(b, total, 0.99),
                       (unsigned long long)gpursa_stage_quantile(b, total, 0.999),
                       (unsigned long long)atomic_load_explicit(&h->max_us[s], memory_order_relaxed));
        gpursa_log_line(prefix != NULL ? prefix : "", body);
    }
}
