/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: test hooks for the key-hygiene tests (tests/gpu).
 * They live in libgpursa_gpu like everything else, but gpursa.so exports only
 * OSSL_provider_init, so nothing outside the provider can call them.
 */
#ifndef GPURSA_CUDA_DEBUG_H
#define GPURSA_CUDA_DEBUG_H

#include <stddef.h>
#include "gpu/gpursa_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* on = 1: from now on key_free wipes a key's device copy as always but keeps
 * the (wiped) allocation instead of freeing it, the last one only, so that
 * gpursa_cuda_debug_read_freed_key can read it back. on = 0: frees what is
 * kept and restores the normal behaviour. */
void gpursa_cuda_debug_keep_freed_keys(int on);

/* Copy the device memory of the last key freed while keeping was on into
 * out (at most cap bytes); *len = its size. GPURSA_GPU_OK, or
 * GPURSA_GPU_ERR_INVALID when nothing is kept. */
int gpursa_cuda_debug_read_freed_key(void *out, size_t cap, size_t *len);

/* The same for a live key (to show the hook reads what the kernels read). */
int gpursa_cuda_debug_read_key(const gpursa_gpu_key *key, void *out, size_t cap, size_t *len);

/* Fault injection for the result-check tests: every later batch of this process has
 * its item `skip` left untouched by every stage around the CRT kernel (its status
 * word stays as the backend preset it: without the preset, a reused batch would read
 * the word of its previous batch) and n added to item `corrupt`'s result before the check
 * of out < n
 * (a result that is right modulo n but not below it). -1 turns each off. */
void gpursa_cuda_debug_fault_items(int skip, int corrupt);

#ifdef __cplusplus
}
#endif
#endif /* GPURSA_CUDA_DEBUG_H */
