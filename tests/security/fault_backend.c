/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault-injecting wrapper around a real gpu/ backend (see fault_backend.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "fault_backend.h"

fault_state fault;
static const gpursa_gpu_backend_ops *real;
static atomic_ulong item_counter;

/* Our batch: the real one plus shadow items pointing at corrupted copies. */
struct gpursa_gpu_batch {
    gpursa_gpu_batch *real;
    size_t bytes, max_items;
    gpursa_gpu_item *orig, *shadow;
    unsigned char *bad_rinv;        /* max_items * bytes */
    unsigned char *flags;           /* 1: this item was corrupted */
    size_t n;
};

void fault_reset(void)
{
    memset(&fault, 0, sizeof(fault));
    atomic_store(&item_counter, 0);
}

static int f_device_count(int *count) { return real->device_count(count); }
static int f_device_open(int i, const gpursa_gpu_open_params *p, gpursa_gpu_device **d)
{
    return real->device_open(i, p, d);
}
static void f_device_close(gpursa_gpu_device *d) { real->device_close(d); }
static const char *f_describe(const gpursa_gpu_device *d) { return real->device_describe(d); }

/* Each uploaded key has a twin on the device whose dp differs in one bit:
 * an item run with the twin gets a wrong CRT half mod p, a computation fault
 * only the result check can see. */
#define MAX_KEYS 64
static struct {
    gpursa_gpu_key *good, *bent;
} twins[MAX_KEYS];
static pthread_mutex_t twins_lock = PTHREAD_MUTEX_INITIALIZER;

static gpursa_gpu_key *twin_of(const gpursa_gpu_key *good)
{
    gpursa_gpu_key *bent = NULL;
    int i;

    pthread_mutex_lock(&twins_lock);
    for (i = 0; i < MAX_KEYS; i++)
        if (twins[i].good == good)
            bent = twins[i].bent;
    pthread_mutex_unlock(&twins_lock);
    return bent;
}

static int f_key_upload(gpursa_gpu_device *dev, const gpursa_rsa_key_material *km,
                        gpursa_gpu_key **key)
{
    gpursa_rsa_key_material bent = *km;
    gpursa_gpu_key *twin = NULL;
    unsigned char dp[1024];
    int rc, i;

    if (atomic_load(&fault.fail_key_upload) > 0 && atomic_fetch_sub(&fault.fail_key_upload, 1) > 0) {
        atomic_fetch_add(&fault.nomem, 1);
        return GPURSA_GPU_ERR_NOMEM;
    }
    if ((rc = real->key_upload(dev, km, key)) != GPURSA_GPU_OK || km->dp_len > sizeof(dp))
        return rc;
    memcpy(dp, km->dp, km->dp_len);
    dp[km->dp_len / 2] ^= 0x08;
    bent.dp = dp;
    rc = real->key_upload(dev, &bent, &twin);
    memset(dp, 0, sizeof(dp));
    if (rc != GPURSA_GPU_OK) {
        real->key_free(dev, *key);
        *key = NULL;
        return rc;
    }
    pthread_mutex_lock(&twins_lock);
    for (i = 0; i < MAX_KEYS && twins[i].good != NULL; i++)
        ;
    if (i < MAX_KEYS) {
        twins[i].good = *key;
        twins[i].bent = twin;
        twin = NULL;
    }
    pthread_mutex_unlock(&twins_lock);
    real->key_free(dev, twin);              /* no room: no twin for this key */
    return GPURSA_GPU_OK;
}

static void f_key_free(gpursa_gpu_device *dev, gpursa_gpu_key *key)
{
    int i;

    pthread_mutex_lock(&twins_lock);
    for (i = 0; i < MAX_KEYS; i++)
        if (key != NULL && twins[i].good == key) {
            real->key_free(dev, twins[i].bent);
            twins[i].good = twins[i].bent = NULL;
        }
    pthread_mutex_unlock(&twins_lock);
    real->key_free(dev, key);
}

static int f_batch_new(gpursa_gpu_device *dev, int bits, size_t max_items, gpursa_gpu_batch **out)
{
    gpursa_gpu_batch *b;
    int rc;

    *out = NULL;
    if (atomic_load(&fault.fail_batch_new) > 0 && atomic_fetch_sub(&fault.fail_batch_new, 1) > 0) {
        atomic_fetch_add(&fault.nomem, 1);
        return GPURSA_GPU_ERR_NOMEM;
    }
    if ((b = calloc(1, sizeof(*b))) == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    b->bytes = (size_t)bits / 8;
    b->max_items = max_items;
    b->shadow = calloc(max_items, sizeof(*b->shadow));
    b->bad_rinv = malloc(max_items * b->bytes);
    b->flags = calloc(max_items, 1);
    rc = b->shadow == NULL || b->bad_rinv == NULL || b->flags == NULL ? GPURSA_GPU_ERR_NOMEM
        : real->batch_new(dev, bits, max_items, &b->real);
    if (rc != GPURSA_GPU_OK) {
        free(b->shadow);
        free(b->bad_rinv);
        free(b->flags);
        free(b);
        return rc;
    }
    *out = b;
    return GPURSA_GPU_OK;
}

static void f_batch_free(gpursa_gpu_batch *b)
{
    if (b == NULL)
        return;
    real->batch_free(b->real);
    free(b->shadow);
    free(b->bad_rinv);
    free(b->flags);
    free(b);
}

static int f_batch_submit(gpursa_gpu_batch *b, gpursa_gpu_item *items, size_t n)
{
    size_t i;

    if (n > b->max_items)
        return GPURSA_GPU_ERR_INVALID;
    b->orig = items;
    b->n = n;
    for (i = 0; i < n; i++) {
        gpursa_gpu_key *twin = twin_of(items[i].key);
        int pick = fault.corrupt_every != 0
            && atomic_fetch_add(&item_counter, 1) % fault.corrupt_every == 0;

        b->shadow[i] = items[i];
        b->flags[i] = 0;
        if (twin != NULL && (fault.corrupt_key || (pick && fault.corrupt_what == 0))) {
            b->shadow[i].key = twin;                /* computed with a wrong dp */
            b->flags[i] = 1;
        } else if (pick && fault.corrupt_what == 1) {
            /* a wrong unblinding factor: the backend must refuse it */
            unsigned char *bad = b->bad_rinv + i * b->bytes;

            memcpy(bad, items[i].rinv, b->bytes);
            bad[b->bytes - 1] ^= 0x01;
            b->shadow[i].rinv = bad;
            b->flags[i] = 1;
        }
        if (b->flags[i])
            atomic_fetch_add(&fault.corrupted, 1);
    }
    atomic_fetch_add(&fault.items, (long)n);
    return real->batch_submit(b->real, b->shadow, n);
}

static int f_batch_poll(gpursa_gpu_batch *b) { return real->batch_poll(b->real); }

static int f_batch_wait(gpursa_gpu_batch *b)
{
    int rc = real->batch_wait(b->real);
    size_t i;

    for (i = 0; i < b->n; i++) {
        b->orig[i].status = b->shadow[i].status;
        if (b->shadow[i].status == GPURSA_ITEM_FAULT)
            atomic_fetch_add(&fault.faults_seen, 1);
        else if (b->shadow[i].status == GPURSA_ITEM_BADINPUT)
            atomic_fetch_add(&fault.badinput_seen, 1);
        if (b->flags[i] && b->shadow[i].status == GPURSA_ITEM_OK)
            atomic_fetch_add(&fault.corrupted_released, 1);
    }
    if (rc == GPURSA_GPU_OK && atomic_load(&fault.lose_batches) > 0
        && atomic_fetch_sub(&fault.lose_batches, 1) > 0) {
        /* the device is gone: as the interface says, nothing is valid */
        for (i = 0; i < b->n; i++) {
            b->orig[i].status = GPURSA_ITEM_PENDING;
            memset(b->orig[i].out, 0, b->bytes);
        }
        atomic_fetch_add(&fault.lost, 1);
        return GPURSA_GPU_ERR_LOST;
    }
    return rc;
}

static void f_batch_times(const gpursa_gpu_batch *b, double *k, double *ci, double *co)
{
    real->batch_times(b->real, k, ci, co);
}

static const gpursa_gpu_backend_ops fault_ops = {
    .name = "fault-injecting",
    .device_count = f_device_count,
    .device_open = f_device_open,
    .device_close = f_device_close,
    .device_describe = f_describe,
    .key_upload = f_key_upload,
    .key_free = f_key_free,
    .batch_new = f_batch_new,
    .batch_free = f_batch_free,
    .batch_submit = f_batch_submit,
    .batch_poll = f_batch_poll,
    .batch_wait = f_batch_wait,
    .batch_times = f_batch_times,
};

const gpursa_gpu_backend_ops *fault_backend(const gpursa_gpu_backend_ops *r)
{
    real = r;
    return &fault_ops;
}
