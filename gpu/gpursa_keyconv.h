/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_keyconv.h - host-side key preparation shared by the host and CUDA
 * backends: validates a gpursa_rsa_key_material for the GPU path and fills a
 * gpursa_rsa_keydata (limbs and Montgomery constants, gpursa_rsa_op.h).
 */
#ifndef GPURSA_KEYCONV_H
#define GPURSA_KEYCONV_H

#include "gpu/gpursa_gpu.h"
#include "gpu/gpursa_rsa_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Modulus bits (1024, 2048, 3072, 4096) if the key fits the GPU path: n of
 * exactly that size and odd, p and q odd, > 1, at most half the limbs
 * each, dp, dq, qinv fitting the half size, e odd and at most 64 bits.
 * 0 otherwise.  Does not check that the numbers belong together. */
int gpursa_keyconv_bits(const gpursa_rsa_key_material *km);

/* Fill kd from km.  GPURSA_GPU_OK, GPURSA_GPU_ERR_UNSUPPORTED (shape not
 * supported, see above) or GPURSA_GPU_ERR_INVALID (NULL pointers, or
 * p*q != n, or qinv*q != 1 mod p).  kd is wiped on failure. */
int gpursa_keyconv_load(gpursa_rsa_keydata *kd, const gpursa_rsa_key_material *km);

/* Zero memory holding secrets so that the compiler keeps the stores. */
void gpursa_keyconv_cleanse(void *p, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* GPURSA_KEYCONV_H */
