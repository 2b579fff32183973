/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The counters of gpursa_stats that more than one place updates: operations
 * by path and key size, batches by size. Relaxed atomics: each counter is
 * exact on its own; a reader sees them a few increments apart at most.
 */
#include <limits.h>
#include "queue/gpursa_queue.h"

/* The ops_by_size index of a modulus of len bytes. */
static int gpursa_stats_size_index(size_t len)
{
    int si = len <= INT_MAX / 8 ? gpursa_size_index((int)(len * 8)) : -1;

    return si >= 0 ? si : GPURSA_NSIZES;
}

void gpursa_stats_ops(gpursa_stats *st, int path, size_t len, uint64_t n)
{
    atomic_uint_fast64_t *total;

    if (st == NULL || n == 0 || path < 0 || path >= GPURSA_NPATHS)
        return;
    total = path == GPURSA_PATH_GPU ? &st->ops_gpu
            : path == GPURSA_PATH_HOST ? &st->ops_host : &st->ops_cpu;
    atomic_fetch_add_explicit(total, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->ops_by_size[path][gpursa_stats_size_index(len)], n,
                              memory_order_relaxed);
}

unsigned gpursa_stats_batch_bucket(size_t n)
{
    unsigned b = n <= 1 ? 0u : 64u - (unsigned)__builtin_clzll((unsigned long long)(n - 1));

    return b < GPURSA_BATCH_BUCKETS - 1 ? b : GPURSA_BATCH_BUCKETS - 1;
}

void gpursa_stats_batch(gpursa_stats *st, size_t n)
{
    if (st == NULL)
        return;
    atomic_fetch_add_explicit(&st->batches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->batch_items, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->batch_sizes[gpursa_stats_batch_bucket(n)], 1,
                              memory_order_relaxed);
}
