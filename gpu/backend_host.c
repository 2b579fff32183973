/* SPDX-License-Identifier: Apache-2.0 */
/*
 * backend_host.c - the "host" backend: the kernel arithmetic of
 * gpursa_rsa_op.h compiled for the CPU.  It is the CI backend, the one the
 * tests compare against GMP, and a backend users may pick.  A batch runs
 * synchronously inside batch_submit, split across a few threads when large.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gpu/gpursa_gpu.h"
#include "gpu/gpursa_host_debug.h"
#include "gpu/gpursa_keyconv.h"
#include "gpu/gpursa_rsa_op.h"

#define HOST_KEY_MAGIC 0x6b687372u /* "rshk" */
#define HOST_ITEMS_PER_THREAD 8    /* below this a thread costs more than it gives */

struct gpursa_gpu_device {
    gpursa_variant variant; /* IMAD or XMAD */
    int threads;
    char desc[128];
};

/* Starts like the CUDA backend's key (magic, bits): see gpursa_gpu_run. */
struct gpursa_gpu_key {
    uint32_t magic;
    int bits;
    gpursa_rsa_keydata kd;
};

/* One thread's working copy of an item: the blinded input, r, r^-1 and the
 * result as limbs. Secret; wiped after each item, so nothing of a batch is
 * left in it once the batch is done. */
typedef struct {
    uint32_t c[GPURSA_RSA_MAX_LIMBS], r[GPURSA_RSA_MAX_LIMBS];
    uint32_t rinv[GPURSA_RSA_MAX_LIMBS], out[GPURSA_RSA_MAX_LIMBS];
} host_stage;

struct gpursa_gpu_batch {
    gpursa_gpu_device *dev;
    int bits;
    size_t max_items;
    gpursa_gpu_item *items;
    size_t n;
    int rc;            /* result of the last submit */
    double kernel_s;
    host_stage stage[GPURSA_HOST_MAX_THREADS];   /* one per slice */
};

/* One private operation on byte strings, specialised by size and variant
 * so that the compiler sees constant limb counts. */
typedef int (*host_op_fn)(const gpursa_rsa_keydata *kd, const uint32_t *c,
                          const uint32_t *r, const uint32_t *rinv, uint32_t *out);
#define HOST_OP(NL, V, VN)                                                          \
    static int host_op_##NL##_##VN(const gpursa_rsa_keydata *kd, const uint32_t *c, \
                                   const uint32_t *r, const uint32_t *rinv,         \
                                   uint32_t *out)                                   \
    {                                                                               \
        return gpursa_rsa_op(kd, c, r, rinv, out, NL, V, -1);                       \
    }
HOST_OP(32, GPURSA_VARIANT_IMAD, imad)
HOST_OP(64, GPURSA_VARIANT_IMAD, imad)
HOST_OP(96, GPURSA_VARIANT_IMAD, imad)
HOST_OP(128, GPURSA_VARIANT_IMAD, imad)
HOST_OP(32, GPURSA_VARIANT_XMAD, xmad)
HOST_OP(64, GPURSA_VARIANT_XMAD, xmad)
HOST_OP(96, GPURSA_VARIANT_XMAD, xmad)
HOST_OP(128, GPURSA_VARIANT_XMAD, xmad)
#undef HOST_OP

static host_op_fn host_op_for(int bits, gpursa_variant v)
{
    int x = v == GPURSA_VARIANT_XMAD;
    switch (bits) {
    case 1024: return x ? host_op_32_xmad : host_op_32_imad;
    case 2048: return x ? host_op_64_xmad : host_op_64_imad;
    case 3072: return x ? host_op_96_xmad : host_op_96_imad;
    case 4096: return x ? host_op_128_xmad : host_op_128_imad;
    }
    return NULL;
}

static void run_item(gpursa_gpu_item *it, int bits, host_op_fn op, host_stage *st)
{
    int nl = bits / 32;
    size_t len = (size_t)bits / 8;
    const gpursa_gpu_key *key = it->key;

    gpursa_mp_from_be(st->c, nl, it->in, len);
    gpursa_mp_from_be(st->r, nl, it->r, len);
    gpursa_mp_from_be(st->rinv, nl, it->rinv, len);
    int status = op(&key->kd, st->c, st->r, st->rinv, st->out);
    gpursa_mp_to_be(it->out, len, st->out, nl); /* zero unless OK */
    it->status = status;
    gpursa_keyconv_cleanse(st, sizeof(*st));
}

struct host_slice {
    gpursa_gpu_item *items;
    size_t n;
    int bits;
    host_op_fn op;
    host_stage *stage;
};

static void *run_slice(void *arg)
{
    struct host_slice *s = arg;
    for (size_t i = 0; i < s->n; i++)
        run_item(&s->items[i], s->bits, s->op, s->stage);
    return NULL;
}

int gpursa_host_debug_staging(const gpursa_gpu_batch *b, const unsigned char **staging,
                              size_t *len)
{
    if (b == NULL || staging == NULL || len == NULL)
        return GPURSA_GPU_ERR_INVALID;
    *staging = (const unsigned char *)b->stage;
    *len = sizeof(b->stage);
    return GPURSA_GPU_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- backend operations ---------------------------------------------- */

static int host_device_count(int *count)
{
    if (count == NULL)
        return GPURSA_GPU_ERR_INVALID;
    *count = 1;
    return GPURSA_GPU_OK;
}

/* host_threads: n, or 0 for one per online CPU; 1 to GPURSA_HOST_MAX_THREADS */
static int host_threads(int n)
{
    long t = n != 0 ? n : sysconf(_SC_NPROCESSORS_ONLN);
    if (t < 1)
        t = 1;
    if (t > GPURSA_HOST_MAX_THREADS)
        t = GPURSA_HOST_MAX_THREADS;
    return (int)t;
}

static int host_device_open(int index, const gpursa_gpu_open_params *params,
                            gpursa_gpu_device **dev)
{
    static const gpursa_gpu_open_params defaults;
    gpursa_variant variant;

    if (dev == NULL)
        return GPURSA_GPU_ERR_INVALID;
    *dev = NULL;
    if (params == NULL)
        params = &defaults;
    if (index != 0)
        return GPURSA_GPU_ERR_NODEV;
    /* AUTO: IMAD, the faster one with 64-bit products on a CPU */
    variant = params->variant == GPURSA_VARIANT_AUTO ? GPURSA_VARIANT_IMAD : params->variant;
    if (variant != GPURSA_VARIANT_IMAD && variant != GPURSA_VARIANT_XMAD)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    gpursa_gpu_device *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    d->variant = variant;
    d->threads = host_threads(params->host_threads);
    snprintf(d->desc, sizeof(d->desc), "host CPU, %d thread%s, variant %s", d->threads,
             d->threads == 1 ? "" : "s", gpursa_variant_name(variant));
    *dev = d;
    return GPURSA_GPU_OK;
}

static void host_device_close(gpursa_gpu_device *dev)
{
    free(dev);
}

static const char *host_device_describe(const gpursa_gpu_device *dev)
{
    return dev != NULL ? dev->desc : "host CPU";
}

static int host_key_upload(gpursa_gpu_device *dev, const gpursa_rsa_key_material *km,
                           gpursa_gpu_key **key)
{
    if (dev == NULL || km == NULL || key == NULL)
        return GPURSA_GPU_ERR_INVALID;
    *key = NULL;
    gpursa_gpu_key *k = calloc(1, sizeof(*k));
    if (k == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    int rc = gpursa_keyconv_load(&k->kd, km);
    if (rc != GPURSA_GPU_OK) {
        free(k); /* keyconv wiped kd */
        return rc;
    }
    k->magic = HOST_KEY_MAGIC;
    k->bits = k->kd.bits;
    *key = k;
    return GPURSA_GPU_OK;
}

static void host_key_free(gpursa_gpu_device *dev, gpursa_gpu_key *key)
{
    (void)dev;
    if (key == NULL)
        return;
    gpursa_keyconv_cleanse(key, sizeof(*key));
    free(key);
}

static int host_batch_new(gpursa_gpu_device *dev, int modulus_bits, size_t max_items,
                          gpursa_gpu_batch **batch)
{
    if (dev == NULL || batch == NULL || max_items == 0)
        return GPURSA_GPU_ERR_INVALID;
    *batch = NULL;
    if (host_op_for(modulus_bits, dev->variant) == NULL)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    gpursa_gpu_batch *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    b->dev = dev;
    b->bits = modulus_bits;
    b->max_items = max_items;
    *batch = b;
    return GPURSA_GPU_OK;
}

static void host_batch_free(gpursa_gpu_batch *batch)
{
    if (batch != NULL)
        gpursa_keyconv_cleanse(batch->stage, sizeof(batch->stage));
    free(batch);
}

static int host_batch_submit(gpursa_gpu_batch *b, gpursa_gpu_item *items, size_t n)
{
    if (b == NULL || (n > 0 && items == NULL) || n > b->max_items)
        return GPURSA_GPU_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        const gpursa_gpu_key *k = items[i].key;
        if (k == NULL || k->magic != HOST_KEY_MAGIC || k->bits != b->bits ||
            items[i].in == NULL || items[i].r == NULL || items[i].rinv == NULL ||
            items[i].out == NULL)
            return GPURSA_GPU_ERR_INVALID;
    }
    host_op_fn op = host_op_for(b->bits, b->dev->variant);
    b->items = items;
    b->n = n;
    double t0 = now_s();

    size_t nt = n / HOST_ITEMS_PER_THREAD;
    if (nt > (size_t)b->dev->threads)
        nt = (size_t)b->dev->threads;
    if (nt < 2) {
        struct host_slice s = {items, n, b->bits, op, &b->stage[0]};
        run_slice(&s);
    } else {
        pthread_t th[GPURSA_HOST_MAX_THREADS];
        struct host_slice s[GPURSA_HOST_MAX_THREADS];
        size_t started = 0, pos = 0;
        for (size_t t = 0; t < nt; t++) {
            size_t cnt = n / nt + (t < n % nt);
            s[t] = (struct host_slice){items + pos, cnt, b->bits, op, &b->stage[t]};
            pos += cnt;
            /* the calling thread takes the last slice */
            if (t + 1 < nt && pthread_create(&th[t], NULL, run_slice, &s[t]) == 0)
                started = t + 1;
            else
                break;
        }
        /* slices whose thread could not start run here */
        for (size_t t = started; t < nt; t++)
            run_slice(&s[t]);
        for (size_t t = 0; t < started; t++)
            pthread_join(th[t], NULL);
    }
    b->kernel_s = now_s() - t0;
    b->rc = GPURSA_GPU_OK;
    return GPURSA_GPU_OK;
}

static int host_batch_poll(gpursa_gpu_batch *b)
{
    if (b == NULL)
        return GPURSA_GPU_ERR_INVALID;
    return b->rc < 0 ? b->rc : 1;
}

static int host_batch_wait(gpursa_gpu_batch *b)
{
    if (b == NULL)
        return GPURSA_GPU_ERR_INVALID;
    return b->rc;
}

static void host_batch_times(const gpursa_gpu_batch *b, double *kernel_s, double *copy_in_s,
                             double *copy_out_s)
{
    if (kernel_s != NULL)
        *kernel_s = b != NULL ? b->kernel_s : 0;
    if (copy_in_s != NULL)
        *copy_in_s = 0;
    if (copy_out_s != NULL)
        *copy_out_s = 0;
}

const gpursa_gpu_backend_ops gpursa_host_backend_ops = {
    .name = "host",
    .device_count = host_device_count,
    .device_open = host_device_open,
    .device_close = host_device_close,
    .device_describe = host_device_describe,
    .key_upload = host_key_upload,
    .key_free = host_key_free,
    .batch_new = host_batch_new,
    .batch_free = host_batch_free,
    .batch_submit = host_batch_submit,
    .batch_poll = host_batch_poll,
    .batch_wait = host_batch_wait,
    .batch_times = host_batch_times,
};
