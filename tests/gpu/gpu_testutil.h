/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_testutil.h - GMP oracle helpers for the gpu/ tests: conversions
 * between mpz_t and limbs / big-endian bytes, edge-case generators, RSA key
 * generation with GMP, and the backend choice (GPURSA_TEST_BACKEND).
 */
#ifndef GPU_TESTUTIL_H
#define GPU_TESTUTIL_H

#include <gmp.h>
#include <stdint.h>
#include "gpu/gpursa_gpu.h"

extern gmp_randstate_t gt_rand;
void gt_init(void); /* seeds from GPURSA_TEST_SEED or the time, prints the seed */
/* count random cases divided by GPURSA_TEST_SCALE (default 1), at least one;
 * edge cases are never scaled.  For slow runs (sanitizer builds in CI). */
int gt_random_cases(int count);

void gt_to_limbs(uint32_t *a, int n, const mpz_t z);   /* z < 2^(32n) */
void gt_from_limbs(mpz_t z, const uint32_t *a, int n);
void gt_to_be(unsigned char *b, size_t len, const mpz_t z);

/* Blinding pair for modulus n: r random in [1, n) with its inverse rinv, or
 * for k = 1 r = 1 and for k = 2 r = n - 1 (edge values). 1 when rinv exists. */
int gt_blind_pair(mpz_t r, mpz_t rinv, const mpz_t n, int k);

/* Operand number k (0 .. GT_EDGE_COUNT-1 edge cases, then random) for a
 * modulus m of n limbs: 0, 1, 2, m-1, m-2, all-ones limbs, 0x7FFFFFFF and
 * 0x80000000 limbs, runs of top bits, 2^(32n-1), reduced mod m. */
#define GT_EDGE_COUNT 12
void gt_operand(mpz_t r, int k, const mpz_t m, int n);
/* Modulus number k of n limbs, odd: edge shapes then random. */
#define GT_MOD_EDGE_COUNT 6
void gt_modulus(mpz_t m, int k, int n);

typedef struct {
    int bits;
    mpz_t n, e, d, p, q, dp, dq, qinv;
    unsigned char *buf[7];
    gpursa_rsa_key_material km;
} gt_rsa_key;

/* Generate a two-prime key with |n| = bits, p and q of bits/2 bits each.
 * shape 0: random; 1: p just above 2^(h-1), q just below 2^h (p < q);
 * 2: like 1 with p > q swapped; p's byte string is given with two extra
 * leading zero bytes and q's without its leading zero bytes (unequal lengths). */
void gt_rsa_keygen(gt_rsa_key *k, int bits, uint64_t e, int shape);
void gt_rsa_key_free(gt_rsa_key *k);
/* count keys of `bits` bits, key s of shape s with e = 3 for s = 1 and 65537
 * for the others, and each one's device form (gpursa_keyconv_load) in kds[s];
 * aborts on failure. _free wipes and frees both. */
struct gpursa_rsa_keydata;
void gt_rsa_keys_make(gt_rsa_key *keys, struct gpursa_rsa_keydata **kds, int count, int bits);
void gt_rsa_keys_free(gt_rsa_key *keys, struct gpursa_rsa_keydata **kds, int count);
/* Rebuild the byte strings of km from the mpz values (after tampering). */
void gt_rsa_key_encode(gt_rsa_key *k, int shape);

/* A batch as the kernels take it (gpursa_cuda_args): per item a key pointer,
 * and the input, the blinding pair and the output in structure-of-arrays
 * layout (limb j of item i at array[j * stride + i], nl limbs an item), and
 * a status. out and status start as canaries (bytes 0xa5 and 0x5a), so that a
 * test sees what a kernel did not write; stride >= count leaves columns past
 * the batch for such canaries. */
typedef struct {
    int count, nl;
    uint32_t stride;
    const void **keys;
    uint32_t *in, *r, *rinv, *out;
    int32_t *status;
} gt_batch;
#define GT_STATUS_CANARY ((int32_t)0x5a5a5a5a)
void gt_batch_init(gt_batch *b, int count, uint32_t stride, int nl);
void gt_batch_free(gt_batch *b);
/* The first item from `from` on (below stride) whose status or an output word
 * is no longer its canary, or -1 when none was written. */
int gt_batch_first_written(const gt_batch *b, int from);
/* item's value of one of the batch's arrays, to and from z (z < 2^(32 nl)) */
void gt_soa_set(uint32_t *soa, const gt_batch *b, int item, const mpz_t z);
void gt_soa_get(mpz_t z, const uint32_t *soa, const gt_batch *b, int item);

/* Backend under test: GPURSA_TEST_BACKEND=host (default) or cuda.  Returns
 * NULL and sets *skip when cuda is asked for and absent. */
const gpursa_gpu_backend_ops *gt_backend(int *skip);

#endif
