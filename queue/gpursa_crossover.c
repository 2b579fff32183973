/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The crossover (min_gpu_batch = -1): the smallest batch on which a device
 * costs less per item than the CPU, measured once per modulus size on each
 * device by the runner that gets the first batch of that size. Below it, the
 * batch policy sends small batches to the CPU workers.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

static double gpursa_time_batch(gpursa_runner *s, gpursa_gpu_batch *b, size_t n, int *ok)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(s->dev);
    uint64_t t0 = gpursa_now_ns();

    *ok = ops->batch_submit(b, s->items, n) == GPURSA_GPU_OK && ops->batch_wait(b) == GPURSA_GPU_OK;
    for (size_t i = 0; *ok && i < n; i++)
        *ok = s->items[i].status == GPURSA_ITEM_OK;
    return (double)(gpursa_now_ns() - t0) * 1e-9;
}

/*
 * min_gpu_batch = -1: time a few CPU operations and a batch of 1 and of L
 * on this device with the first key of this size, fit batch time = a + b*n,
 * and take the smallest n where a batch costs less per item than the CPU:
 * n = a / (cpu - b). Runs once per size, in the runner that got the first
 * batch; meanwhile other batches go to the device.
 */
void gpursa_measure(gpursa_runner *s, gpursa_queue_key *qk)
{
    gpursa_dev *d = s->dev;
    gpursa_queue *q = d->rt->q;
    size_t len = qk->len, L = q->cfg.max_batch < 32 ? q->cfg.max_batch : 32;
    int si = s->size_index, unsupported, ok = 0, result = 1;
    double cpu = 1e9, t1 = 0, tl = 0, a, b;
    unsigned char *in = NULL, *out = NULL;
    gpursa_gpu_key *gk;
    gpursa_gpu_batch *batch;

    if (L < 2) {
        ok = 1;                          /* no batch to compare: always the device */
        goto end;
    }
    if ((gk = gpursa_dev_key(d, qk, &unsupported)) == NULL
        || (batch = gpursa_runner_batch(s, si)) == NULL
        || !gpursa_runner_reserve(s, L)
        || (in = malloc(L * len)) == NULL || (out = malloc(len)) == NULL)
        goto end;
    /* Random inputs below n: the blinding generator's r values. */
    if (!gpursa_blind_batch(qk, L, in, s->rinvbuf, s->bnctx)
        || !gpursa_blind_batch(qk, L, s->rbuf, s->rinvbuf, s->bnctx))
        goto end;
    /* The CPU path's cost is CPU time (this thread's: being preempted on
     * a busy machine costs the CPU nothing). */
    for (int i = 0; i < 3; i++) {
        struct timespec a0, a1;
        double t;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a0);
        if (!qk->cpu(qk->cpu_arg, in + (size_t)i * len, out, len))
            goto end;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a1);
        t = (double)(a1.tv_sec - a0.tv_sec) + (double)(a1.tv_nsec - a0.tv_nsec) * 1e-9;
        if (t < cpu)
            cpu = t;
    }
    ERR_clear_error();
    for (size_t i = 0; i < L; i++) {
        s->items[i].key = gk;
        s->items[i].in = in + i * len;
        s->items[i].r = s->rbuf + i * len;
        s->items[i].rinv = s->rinvbuf + i * len;
        s->items[i].out = s->outbuf + i * len;
        s->items[i].status = GPURSA_ITEM_PENDING;
    }
    gpursa_time_batch(s, batch, 1, &ok);               /* warm-up */
    /* Best of two: a preempted run must not decide for the process's life. */
    for (int i = 0; ok && i < 2; i++) {
        double a1 = gpursa_time_batch(s, batch, 1, &ok), al = 0;

        if (ok)
            al = gpursa_time_batch(s, batch, L, &ok);
        if (i == 0 || a1 < t1)
            t1 = a1;
        if (i == 0 || al < tl)
            tl = al;
    }
    if (!ok)
        goto end;
    b = (tl - t1) / (double)(L - 1);
    if (b < 0)
        b = 0;
    a = t1 - b;
    if (a < 0)
        a = 0;
    if (cpu > b) {
        double n = ceil(a / (cpu - b));

        result = n < 1 ? 1 : n > (double)q->cfg.max_batch ? INT_MAX : (int)n;
    } else {
        result = INT_MAX;
    }
    gpursa_log_q(q, 2, "device %d, %d-bit: CPU %.1f us/op, %s batch %.1f us + %.2f us/item: "
                 "min_gpu_batch %d%s", d->index, gpursa_size_bits[si], cpu * 1e6,
                 q->ops->name, a * 1e6, b * 1e6, result == INT_MAX ? -1 : result,
                 result == INT_MAX ? " (the device never wins: all on the CPU)" : "");
end:
    if (!ok)
        gpursa_log_q(q, 1, "device %d, %d-bit: crossover measurement failed; "
                     "min_gpu_batch 1", d->index, gpursa_size_bits[si]);
    if (in != NULL) {
        OPENSSL_cleanse(in, L * len);
        free(in);
    }
    if (out != NULL) {
        OPENSSL_cleanse(out, len);
        free(out);
    }
    if (s->cap >= L) {
        OPENSSL_cleanse(s->rbuf, L * len);
        OPENSSL_cleanse(s->rinvbuf, L * len);
        OPENSSL_cleanse(s->outbuf, L * len);
    }
    atomic_store(&d->xover[si], ok ? result : 1);
}
