/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_gpu.c - the backend-independent part of gpu/gpursa_gpu.h: names,
 * return-code strings, the key-size test, backend lookup and the
 * synchronous batch helper.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdint.h>
#include <strings.h>
#include "gpu/gpursa_gpu.h"
#include "gpu/gpursa_keyconv.h"

extern const gpursa_gpu_backend_ops gpursa_host_backend_ops;
#ifdef GPURSA_HAVE_CUDA
extern const gpursa_gpu_backend_ops gpursa_cuda_backend_ops;
#endif

static const char *const variant_names[GPURSA_VARIANT_COUNT_] = {
    [GPURSA_VARIANT_AUTO] = "auto",
    [GPURSA_VARIANT_IMAD] = "imad",
    [GPURSA_VARIANT_XMAD] = "xmad",
    [GPURSA_VARIANT_FAST] = "fast",
    [GPURSA_VARIANT_COOP] = "coop",
};

const char *gpursa_variant_name(gpursa_variant v)
{
    if ((int)v < 0 || v >= GPURSA_VARIANT_COUNT_)
        return "unknown";
    return variant_names[v];
}

int gpursa_variant_from_name(const char *name, gpursa_variant *out)
{
    if (name == NULL)
        return 0;
    for (int v = 0; v < GPURSA_VARIANT_COUNT_; v++) {
        if (strcasecmp(name, variant_names[v]) == 0) {
            if (out != NULL)
                *out = (gpursa_variant)v;
            return 1;
        }
    }
    return 0;
}

const char *gpursa_gpu_rc_string(int rc)
{
    switch (rc) {
    case GPURSA_GPU_OK:              return "ok";
    case GPURSA_GPU_ERR_INVALID:     return "invalid argument";
    case GPURSA_GPU_ERR_NODEV:       return "no such device or backend";
    case GPURSA_GPU_ERR_NOMEM:       return "out of memory";
    case GPURSA_GPU_ERR_LAUNCH:      return "kernel launch or execution failed";
    case GPURSA_GPU_ERR_COPY:        return "host/device copy failed";
    case GPURSA_GPU_ERR_LOST:        return "device lost";
    case GPURSA_GPU_ERR_UNSUPPORTED: return "key size or variant not supported";
    default:                         return "unknown error";
    }
}

const int gpursa_size_bits[GPURSA_NSIZES] = { 1024, 2048, 3072, 4096 };

int gpursa_size_index(int bits)
{
    for (int i = 0; i < GPURSA_NSIZES; i++)
        if (gpursa_size_bits[i] == bits)
            return i;
    return -1;
}

int gpursa_gpu_key_supported(const gpursa_rsa_key_material *km)
{
    return gpursa_keyconv_bits(km);
}

const gpursa_gpu_backend_ops *gpursa_gpu_backend(gpursa_backend_kind kind)
{
    switch (kind) {
    case GPURSA_BACKEND_HOST:
        return &gpursa_host_backend_ops;
    case GPURSA_BACKEND_CUDA:
#ifdef GPURSA_HAVE_CUDA
        return &gpursa_cuda_backend_ops;
#else
        return NULL;
#endif
    }
    return NULL;
}

/* The built-in backends' key structs both begin with a magic word and the
 * modulus bits; that is how the helper learns the batch's modulus size. */
struct gpursa_gpu_key_head {
    uint32_t magic;
    int bits;
};

int gpursa_gpu_run(const gpursa_gpu_backend_ops *ops, gpursa_gpu_device *dev,
                   gpursa_gpu_item *items, size_t n)
{
    gpursa_gpu_batch *batch = NULL;
    if (ops == NULL || (n > 0 && items == NULL))
        return GPURSA_GPU_ERR_INVALID;
    if (n == 0)
        return GPURSA_GPU_OK;
    for (size_t i = 0; i < n; i++)
        items[i].status = GPURSA_ITEM_PENDING;
    if (items[0].key == NULL)
        return GPURSA_GPU_ERR_INVALID;
    int bits = ((const struct gpursa_gpu_key_head *)(const void *)items[0].key)->bits;
    if (gpursa_size_index(bits) < 0)
        return GPURSA_GPU_ERR_INVALID;
    int rc = ops->batch_new(dev, bits, n, &batch);
    if (rc != GPURSA_GPU_OK)
        return rc;
    rc = ops->batch_submit(batch, items, n);
    if (rc == GPURSA_GPU_OK)
        rc = ops->batch_wait(batch);
    ops->batch_free(batch);
    return rc;
}
