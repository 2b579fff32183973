/* SPDX-License-Identifier: Apache-2.0 */
/* The fake backend (see fake_backend.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include "tests/queue/fake_backend.h"

fake_state fake;

struct gpursa_gpu_device {
    int index;
};

struct gpursa_gpu_key {
    BIGNUM *n, *e, *p, *q, *dp, *dq, *qinv;
    size_t len;
};

struct gpursa_gpu_batch {
    size_t max;
    int bits;
    gpursa_gpu_item *items;
    size_t n;
    uint64_t start_ns;
    int fail;                    /* rc to return from wait */
    BN_CTX *ctx;
};

static uint64_t fake_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned fake_rand(void)
{
    static _Thread_local unsigned seed;

    if (seed == 0)
        seed = (unsigned)fake_now() ^ (unsigned)(uintptr_t)&seed;
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % 1000u;
}

void fake_reset(void)
{
    memset(&fake, 0, sizeof(fake));
    fake.device_count = 1;
}

static int fake_device_count(int *count)
{
    *count = fake.device_count;
    return GPURSA_GPU_OK;
}

static int fake_device_open(int index, const gpursa_gpu_open_params *params,
                            gpursa_gpu_device **dev)
{
    int a = atomic_fetch_add(&fake.open_attempts, 1);

    if (a < FAKE_MAX_OPENS)
        fake.open_time_ns[a] = fake_now();
    if (index < 0 || index >= fake.device_count)
        return GPURSA_GPU_ERR_NODEV;
    if (atomic_load(&fake.open_fail) > 0 && atomic_fetch_sub(&fake.open_fail, 1) > 0)
        return GPURSA_GPU_ERR_NODEV;
    if ((*dev = calloc(1, sizeof(**dev))) == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    (*dev)->index = index;
    fake.open_params = *params;
    atomic_fetch_add(&fake.opens, 1);
    return GPURSA_GPU_OK;
}

static void fake_device_close(gpursa_gpu_device *dev)
{
    free(dev);
}

static const char *fake_device_describe(const gpursa_gpu_device *dev)
{
    return "fake device";
}

static int fake_key_upload(gpursa_gpu_device *dev, const gpursa_rsa_key_material *km,
                           gpursa_gpu_key **key)
{
    gpursa_gpu_key *k;

    if (fake.refuse_keys)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    if ((k = calloc(1, sizeof(*k))) == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    k->n = BN_bin2bn(km->n, (int)km->n_len, NULL);
    k->e = BN_bin2bn(km->e, (int)km->e_len, NULL);
    k->p = BN_bin2bn(km->p, (int)km->p_len, NULL);
    k->q = BN_bin2bn(km->q, (int)km->q_len, NULL);
    k->dp = BN_bin2bn(km->dp, (int)km->dp_len, NULL);
    k->dq = BN_bin2bn(km->dq, (int)km->dq_len, NULL);
    k->qinv = BN_bin2bn(km->qinv, (int)km->qinv_len, NULL);
    k->len = (size_t)BN_num_bytes(k->n);
    atomic_fetch_add(&fake.keys_live, 1);
    *key = k;
    return GPURSA_GPU_OK;
}

static void fake_key_free(gpursa_gpu_device *dev, gpursa_gpu_key *k)
{
    if (k == NULL)
        return;
    BN_free(k->n);
    BN_free(k->e);
    BN_clear_free(k->p);
    BN_clear_free(k->q);
    BN_clear_free(k->dp);
    BN_clear_free(k->dq);
    BN_clear_free(k->qinv);
    free(k);
    atomic_fetch_sub(&fake.keys_live, 1);
    if (dev != NULL && dev->index >= 0 && dev->index < FAKE_MAX_DEVICES)
        atomic_fetch_add(&fake.keys_freed_on[dev->index], 1);
}

static int fake_batch_new(gpursa_gpu_device *dev, int bits, size_t max, gpursa_gpu_batch **b)
{
    if ((*b = calloc(1, sizeof(**b))) == NULL || ((*b)->ctx = BN_CTX_new()) == NULL) {
        free(*b);
        return GPURSA_GPU_ERR_NOMEM;
    }
    (*b)->max = max;
    (*b)->bits = bits;
    return GPURSA_GPU_OK;
}

static void fake_batch_free(gpursa_gpu_batch *b)
{
    if (b == NULL)
        return;
    BN_CTX_free(b->ctx);
    free(b);
}

/* *cur += n, and *max raised to the new value if it is higher. */
static void fake_count_up(atomic_int *cur, atomic_int *max, int n)
{
    int now = atomic_fetch_add(cur, n) + n, seen = atomic_load(max);

    while (now > seen && !atomic_compare_exchange_weak(max, &seen, now))
        ;
}

static int fake_batch_submit(gpursa_gpu_batch *b, gpursa_gpu_item *items, size_t n)
{
    if (n == 0 || n > b->max)
        return GPURSA_GPU_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if ((int)BN_num_bits(items[i].key->n) != b->bits)
            return GPURSA_GPU_ERR_INVALID;
    if (atomic_load(&fake.lost_next) > 0 && atomic_fetch_sub(&fake.lost_next, 1) > 0) {
        atomic_fetch_add(&fake.failed_batches, 1);
        return GPURSA_GPU_ERR_LOST;
    }
    if (fake_rand() < fake.fail_submit_permille) {
        atomic_fetch_add(&fake.failed_batches, 1);
        return GPURSA_GPU_ERR_LAUNCH;
    }
    b->items = items;
    b->n = n;
    b->start_ns = fake_now();
    b->fail = fake_rand() < fake.fail_wait_permille ? GPURSA_GPU_ERR_COPY : GPURSA_GPU_OK;
    fake_count_up(&fake.cur_items, &fake.max_items, (int)n);
    fake_count_up(&fake.cur_batches, &fake.max_batches, 1);
    return GPURSA_GPU_OK;
}

static int fake_batch_poll(gpursa_gpu_batch *b)
{
    return fake_now() >= b->start_ns + (uint64_t)(fake.batch_delay_us
                                                  + fake.item_delay_us * b->n) * 1000u;
}

/* out = ((c * r^e)^d mod n) * rinv mod n with CRT, released if out^e == c. */
static int fake_item(gpursa_gpu_item *it, BN_CTX *ctx)
{
    const gpursa_gpu_key *k = it->key;
    int len = (int)k->len, st = GPURSA_ITEM_BADINPUT;
    BIGNUM *c, *r, *ri, *x, *m1, *m2, *h;

    BN_CTX_start(ctx);
    c = BN_CTX_get(ctx);
    r = BN_CTX_get(ctx);
    ri = BN_CTX_get(ctx);
    x = BN_CTX_get(ctx);
    m1 = BN_CTX_get(ctx);
    m2 = BN_CTX_get(ctx);
    h = BN_CTX_get(ctx);
    if (h == NULL)
        goto end;
    BN_bin2bn(it->in, len, c);
    BN_bin2bn(it->r, len, r);
    BN_bin2bn(it->rinv, len, ri);
    if (BN_cmp(c, k->n) >= 0 || BN_is_zero(r) || BN_cmp(r, k->n) >= 0 || BN_cmp(ri, k->n) >= 0)
        goto end;
    if (!BN_mod_exp(x, r, k->e, k->n, ctx) || !BN_mod_mul(x, x, c, k->n, ctx)
        || !BN_mod_exp(m1, x, k->dp, k->p, ctx) || !BN_mod_exp(m2, x, k->dq, k->q, ctx)
        || !BN_mod_sub(h, m1, m2, k->p, ctx) || !BN_mod_mul(h, h, k->qinv, k->p, ctx)
        || !BN_mul(h, h, k->q, ctx) || !BN_add(x, h, m2)
        || !BN_mod_mul(x, x, ri, k->n, ctx) || !BN_mod_exp(h, x, k->e, k->n, ctx))
        goto end;
    st = BN_cmp(h, c) == 0 ? GPURSA_ITEM_OK : GPURSA_ITEM_FAULT;
    if (st == GPURSA_ITEM_OK && fake_rand() < fake.fault_permille)
        st = GPURSA_ITEM_FAULT;
    if (st == GPURSA_ITEM_OK)
        BN_bn2binpad(x, it->out, len);
end:
    if (st != GPURSA_ITEM_OK) {
        memset(it->out, 0, (size_t)len);
        if (st == GPURSA_ITEM_FAULT)
            atomic_fetch_add(&fake.faults, 1);
    }
    BN_CTX_end(ctx);
    return st;
}

static int fake_batch_wait(gpursa_gpu_batch *b)
{
    uint64_t end = b->start_ns + (uint64_t)(fake.batch_delay_us
                                            + fake.item_delay_us * b->n) * 1000u;
    int rc = b->fail;

    for (size_t i = 0; i < b->n; i++) {
        if (rc == GPURSA_GPU_OK && fake.nop) {
            memcpy(b->items[i].out, b->items[i].in, b->items[i].key->len);
            b->items[i].status = GPURSA_ITEM_OK;
            continue;
        }
        b->items[i].status = rc == GPURSA_GPU_OK ? fake_item(&b->items[i], b->ctx)
                                                  : GPURSA_ITEM_PENDING;
    }
    for (uint64_t now = fake_now(); now < end; now = fake_now())
        usleep((useconds_t)((end - now) / 1000u) + 1);
    while (rc == GPURSA_GPU_OK && atomic_load(&fake.hold_ok))
        usleep(100);
    atomic_fetch_sub(&fake.cur_items, (int)b->n);
    atomic_fetch_sub(&fake.cur_batches, 1);
    if (rc != GPURSA_GPU_OK) {
        for (size_t i = 0; i < b->n; i++)
            memset(b->items[i].out, 0, b->items[i].key->len);
        atomic_fetch_add(&fake.failed_batches, 1);
        return rc;
    }
    {
        int slot = atomic_fetch_add(&fake.nlog, 1);

        if (slot < FAKE_MAX_LOG)
            fake.log[slot] = (int)b->n;
    }
    atomic_fetch_add(&fake.batches, 1);
    atomic_fetch_add(&fake.items, (long)b->n);
    return GPURSA_GPU_OK;
}

static void fake_batch_times(const gpursa_gpu_batch *b, double *k, double *ci, double *co)
{
    *k = *ci = *co = 0;
}

static int fake_device_shared(const gpursa_gpu_device *dev)
{
    (void)dev;
    return fake.shared;
}

const gpursa_gpu_backend_ops fake_ops = {
    "fake",
    fake_device_count,
    fake_device_open,
    fake_device_close,
    fake_device_describe,
    fake_key_upload,
    fake_key_free,
    fake_batch_new,
    fake_batch_free,
    fake_batch_submit,
    fake_batch_poll,
    fake_batch_wait,
    fake_batch_times,
    fake_device_shared,
};
