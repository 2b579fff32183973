/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BENCHMARK ONLY: the "instant" gpu/ backend. It measures what the queue and
 * everything above it cost on the CPU per operation, without a GPU and
 * without the exponentiation: a batch completes as soon as it is submitted
 * (or after a fixed, configurable delay that costs no CPU, to model a GPU's
 * latency), each result copied from a cache keyed by (key, whole input).
 *
 * GPURSA_BENCH_INSTANT_SHARED=1 makes the device report itself shared with
 * other processes, as a GPU under NVIDIA MPS does, so that the queue takes
 * its policy for shared devices (gpursa_dev_set_max_busy).
 *
 * Results are still right: a cache miss computes the answer with OpenSSL's
 * BN (CRT with constant-time exponentiations) and checks out^e == in before
 * it is stored, and a hit requires the whole input to match byte for byte.
 * What it does not do is use the blinding pair: r and rinv are ignored, so
 * this backend proves nothing about blinding or the kernels, and a miss
 * costs a full CPU exponentiation. It suits workloads that repeat inputs,
 * like `openssl speed` (the same padded digest over and over).
 *
 * It is never reachable from the installed module: only bench/instant/gpursa.so,
 * the provider built around it (gpursa_instant_prov.c) for
 * bench/queue-cpu-cost.py, runs on it. tests/queue checks its answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include "bench/gpursa_bench_instant.h"

#define GPURSA_INSTANT_SLOTS 8192        /* cache slots per key (power of two), half usable */

struct gpursa_gpu_device {
    int index;
    unsigned delay_us;                    /* modelled batch latency, no CPU spent */
    int shared;                           /* reported as shared (MPS) */
};

typedef struct {
    int used;
    uint64_t hash;
    unsigned char *in, *out;              /* len bytes each, in one allocation */
} gpursa_instant_entry;

struct gpursa_gpu_key {
    size_t len;
    BIGNUM *n, *e, *p, *q, *dp, *dq, *qinv;
    BN_MONT_CTX *mont_p, *mont_q;
    pthread_mutex_t mu;                   /* the cache: runners share keys */
    size_t nused;
    gpursa_instant_entry slot[GPURSA_INSTANT_SLOTS];
};

struct gpursa_gpu_batch {
    gpursa_gpu_device *dev;
    size_t len, max;
    gpursa_gpu_item *items;
    size_t n;
    uint64_t done_at_ns;
    BN_CTX *bnctx;
};

static int gpursa_instant_device_count(int *count)
{
    *count = 1;
    return GPURSA_GPU_OK;
}

static int gpursa_instant_device_open(int index, const gpursa_gpu_open_params *params,
                                      gpursa_gpu_device **dev)
{
    const char *d = getenv("GPURSA_BENCH_INSTANT_US");
    const char *sh = getenv("GPURSA_BENCH_INSTANT_SHARED");

    (void)params;
    if (index != 0)
        return GPURSA_GPU_ERR_NODEV;
    if ((*dev = calloc(1, sizeof(**dev))) == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    (*dev)->index = index;
    (*dev)->delay_us = d != NULL ? (unsigned)strtoul(d, NULL, 10) : 0;
    (*dev)->shared = sh != NULL && strcmp(sh, "1") == 0;
    return GPURSA_GPU_OK;
}

static void gpursa_instant_device_close(gpursa_gpu_device *dev)
{
    free(dev);
}

static const char *gpursa_instant_describe(const gpursa_gpu_device *dev)
{
    (void)dev;
    return "BENCHMARK-ONLY instant backend: results from a cache, no exponentiation";
}

static int gpursa_instant_shared(const gpursa_gpu_device *dev)
{
    return dev->shared;
}

static void gpursa_instant_key_free(gpursa_gpu_device *dev, gpursa_gpu_key *k)
{
    (void)dev;
    if (k == NULL)
        return;
    for (size_t i = 0; i < GPURSA_INSTANT_SLOTS; i++) {
        if (k->slot[i].in != NULL) {
            OPENSSL_cleanse(k->slot[i].in, 2 * k->len);
            free(k->slot[i].in);
        }
    }
    BN_MONT_CTX_free(k->mont_p);
    BN_MONT_CTX_free(k->mont_q);
    BN_free(k->n);
    BN_free(k->e);
    BN_clear_free(k->p);
    BN_clear_free(k->q);
    BN_clear_free(k->dp);
    BN_clear_free(k->dq);
    BN_clear_free(k->qinv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

static int gpursa_instant_key_upload(gpursa_gpu_device *dev, const gpursa_rsa_key_material *km,
                                     gpursa_gpu_key **out)
{
    gpursa_gpu_key *k;
    BN_CTX *ctx = NULL;
    int rc = GPURSA_GPU_ERR_NOMEM;

    *out = NULL;
    if (gpursa_gpu_key_supported(km) == 0)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    if ((k = calloc(1, sizeof(*k))) == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    pthread_mutex_init(&k->mu, NULL);
    if ((ctx = BN_CTX_new()) == NULL
        || (k->n = BN_bin2bn(km->n, (int)km->n_len, NULL)) == NULL
        || (k->e = BN_bin2bn(km->e, (int)km->e_len, NULL)) == NULL
        || (k->p = BN_secure_new()) == NULL || (k->q = BN_secure_new()) == NULL
        || (k->dp = BN_secure_new()) == NULL || (k->dq = BN_secure_new()) == NULL
        || (k->qinv = BN_secure_new()) == NULL
        || BN_bin2bn(km->p, (int)km->p_len, k->p) == NULL
        || BN_bin2bn(km->q, (int)km->q_len, k->q) == NULL
        || BN_bin2bn(km->dp, (int)km->dp_len, k->dp) == NULL
        || BN_bin2bn(km->dq, (int)km->dq_len, k->dq) == NULL
        || BN_bin2bn(km->qinv, (int)km->qinv_len, k->qinv) == NULL
        || (k->mont_p = BN_MONT_CTX_new()) == NULL || (k->mont_q = BN_MONT_CTX_new()) == NULL
        || !BN_MONT_CTX_set(k->mont_p, k->p, ctx) || !BN_MONT_CTX_set(k->mont_q, k->q, ctx))
        goto err;
    k->len = (size_t)BN_num_bytes(k->n);
    BN_CTX_free(ctx);
    *out = k;
    return GPURSA_GPU_OK;
err:
    BN_CTX_free(ctx);
    gpursa_instant_key_free(dev, k);
    return rc;
}

static int gpursa_instant_batch_new(gpursa_gpu_device *dev, int bits, size_t max_items,
                                    gpursa_gpu_batch **out)
{
    gpursa_gpu_batch *b;

    *out = NULL;
    if ((bits != 1024 && bits != 2048 && bits != 3072 && bits != 4096) || max_items == 0)
        return GPURSA_GPU_ERR_INVALID;
    if ((b = calloc(1, sizeof(*b))) == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    if ((b->bnctx = BN_CTX_secure_new()) == NULL) {
        free(b);
        return GPURSA_GPU_ERR_NOMEM;
    }
    b->dev = dev;
    b->len = (size_t)bits / 8;
    b->max = max_items;
    *out = b;
    return GPURSA_GPU_OK;
}

static void gpursa_instant_batch_free(gpursa_gpu_batch *b)
{
    if (b == NULL)
        return;
    BN_CTX_free(b->bnctx);
    free(b);
}

/* 64-bit hash of the input (FNV-1a over 8-byte words, then a final mix):
 * picks the slot; the whole input is compared before a hit counts. */
static uint64_t gpursa_instant_hash(const unsigned char *in, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t w;

        memcpy(&w, in + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < len; i++)
        h = (h ^ in[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* out = in^d mod n by CRT, released only if out^e == in. 1 ok, 0 fault. */
static int gpursa_instant_compute(const gpursa_gpu_key *k, const unsigned char *in,
                                  unsigned char *out, BN_CTX *ctx)
{
    BIGNUM *c, *m1, *m2, *h;
    int ok = 0;

    BN_CTX_start(ctx);
    c = BN_CTX_get(ctx);
    m1 = BN_CTX_get(ctx);
    m2 = BN_CTX_get(ctx);
    h = BN_CTX_get(ctx);
    if (h == NULL || BN_bin2bn(in, (int)k->len, c) == NULL || BN_cmp(c, k->n) >= 0
        || !BN_nnmod(m1, c, k->p, ctx)
        || !BN_mod_exp_mont_consttime(m1, m1, k->dp, k->p, ctx, k->mont_p)
        || !BN_nnmod(m2, c, k->q, ctx)
        || !BN_mod_exp_mont_consttime(m2, m2, k->dq, k->q, ctx, k->mont_q)
        || !BN_mod_sub(h, m1, m2, k->p, ctx) || !BN_mod_mul(h, h, k->qinv, k->p, ctx)
        || !BN_mul(h, h, k->q, ctx) || !BN_add(h, h, m2)
        || !BN_mod_exp(m1, h, k->e, k->n, ctx) || BN_cmp(m1, c) != 0
        || BN_bn2binpad(h, out, (int)k->len) != (int)k->len)
        goto end;
    ok = 1;
end:
    BN_clear(m1);
    BN_clear(m2);
    BN_clear(h);
    BN_CTX_end(ctx);
    if (!ok)
        OPENSSL_cleanse(out, k->len);
    return ok;
}

/* One item: a cache hit is a copy; a miss computes, checks and stores. */
static int gpursa_instant_item(gpursa_gpu_key *k, const unsigned char *in, unsigned char *out,
                               BN_CTX *ctx)
{
    uint64_t h = gpursa_instant_hash(in, k->len);
    size_t mask = GPURSA_INSTANT_SLOTS - 1, i = (size_t)h & mask;
    unsigned char *mem;

    pthread_mutex_lock(&k->mu);
    for (size_t probe = 0; probe < GPURSA_INSTANT_SLOTS; probe++, i = (i + 1) & mask) {
        gpursa_instant_entry *e = &k->slot[i];

        if (!e->used)
            break;
        if (e->hash == h && memcmp(e->in, in, k->len) == 0) {
            memcpy(out, e->out, k->len);
            pthread_mutex_unlock(&k->mu);
            return GPURSA_ITEM_OK;
        }
    }
    pthread_mutex_unlock(&k->mu);
    if (!gpursa_instant_compute(k, in, out, ctx))
        return GPURSA_ITEM_FAULT;
    /* Stored while the table is at most half full (short probes); beyond
     * that every new input costs a CPU exponentiation, still right. */
    if ((mem = malloc(2 * k->len)) == NULL)
        return GPURSA_ITEM_OK;
    memcpy(mem, in, k->len);
    memcpy(mem + k->len, out, k->len);
    pthread_mutex_lock(&k->mu);
    if (k->nused < GPURSA_INSTANT_SLOTS / 2) {
        for (i = (size_t)h & mask; k->slot[i].used; i = (i + 1) & mask)
            if (k->slot[i].hash == h && memcmp(k->slot[i].in, in, k->len) == 0)
                break;                    /* another runner stored it meanwhile */
        if (!k->slot[i].used) {
            k->slot[i].used = 1;
            k->slot[i].hash = h;
            k->slot[i].in = mem;
            k->slot[i].out = mem + k->len;
            k->nused++;
            mem = NULL;
        }
    }
    pthread_mutex_unlock(&k->mu);
    if (mem != NULL) {
        OPENSSL_cleanse(mem, 2 * k->len);
        free(mem);
    }
    return GPURSA_ITEM_OK;
}

static uint64_t gpursa_instant_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int gpursa_instant_submit(gpursa_gpu_batch *b, gpursa_gpu_item *items, size_t n)
{
    if (n == 0 || n > b->max)
        return GPURSA_GPU_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (items[i].key == NULL || items[i].key->len != b->len)
            return GPURSA_GPU_ERR_INVALID;
    b->items = items;
    b->n = n;
    b->done_at_ns = gpursa_instant_now() + (uint64_t)b->dev->delay_us * 1000u;
    return GPURSA_GPU_OK;
}

static int gpursa_instant_poll(gpursa_gpu_batch *b)
{
    return gpursa_instant_now() >= b->done_at_ns;
}

static int gpursa_instant_wait(gpursa_gpu_batch *b)
{
    uint64_t now = gpursa_instant_now();

    /* The modelled device latency: the runner sleeps, as it would in
     * cudaStreamSynchronize with blocking sync. */
    if (now < b->done_at_ns) {
        struct timespec ts = { (time_t)((b->done_at_ns - now) / 1000000000u),
                               (long)((b->done_at_ns - now) % 1000000000u) };

        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    for (size_t i = 0; i < b->n; i++) {
        gpursa_gpu_item *it = &b->items[i];

        it->status = gpursa_instant_item((gpursa_gpu_key *)it->key, it->in, it->out,
                                         b->bnctx);
    }
    b->items = NULL;
    b->n = 0;
    return GPURSA_GPU_OK;
}

static void gpursa_instant_times(const gpursa_gpu_batch *b, double *kernel_s,
                                 double *copy_in_s, double *copy_out_s)
{
    (void)b;
    *kernel_s = *copy_in_s = *copy_out_s = 0;
}

static const gpursa_gpu_backend_ops gpursa_instant_ops = {
    "instant (benchmark only)",
    gpursa_instant_device_count,
    gpursa_instant_device_open,
    gpursa_instant_device_close,
    gpursa_instant_describe,
    gpursa_instant_key_upload,
    gpursa_instant_key_free,
    gpursa_instant_batch_new,
    gpursa_instant_batch_free,
    gpursa_instant_submit,
    gpursa_instant_poll,
    gpursa_instant_wait,
    gpursa_instant_times,
    gpursa_instant_shared,
};

const gpursa_gpu_backend_ops *gpursa_bench_instant_backend(void)
{
    return &gpursa_instant_ops;
}
