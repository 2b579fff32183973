/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa host backend: a test hook for the key-hygiene tests (tests/gpu),
 * in libgpursa_gpu like the CUDA backend's (gpursa_cuda_debug.h); gpursa.so
 * exports only OSSL_provider_init, so nothing outside the provider calls it.
 */
#ifndef GPURSA_HOST_DEBUG_H
#define GPURSA_HOST_DEBUG_H

#include <stddef.h>
#include "gpu/gpursa_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-thread staging of a host batch (each item's input, r, r^-1 and
 * result as limbs while it is computed): *staging and its *len bytes, to
 * read after a batch. GPURSA_GPU_OK, or GPURSA_GPU_ERR_INVALID. */
int gpursa_host_debug_staging(const gpursa_gpu_batch *b, const unsigned char **staging,
                              size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* GPURSA_HOST_DEBUG_H */
