/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_testutil.c - see gpu_testutil.h */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gpu/gpursa_keyconv.h"
#include "gpu/gpursa_rsa_op.h"
#include "tests/gpu/gpu_testutil.h"

gmp_randstate_t gt_rand;

void gt_init(void)
{
    const char *s = getenv("GPURSA_TEST_SEED");
    unsigned long seed = s != NULL ? strtoul(s, NULL, 0) : (unsigned long)time(NULL);
    gmp_randinit_default(gt_rand);
    gmp_randseed_ui(gt_rand, seed);
    fprintf(stderr, "# GPURSA_TEST_SEED=%lu\n", seed);
    if (gt_random_cases(60) != 60)
        fprintf(stderr, "# GPURSA_TEST_SCALE=%s: fewer random cases\n", getenv("GPURSA_TEST_SCALE"));
}

int gt_random_cases(int count)
{
    const char *s = getenv("GPURSA_TEST_SCALE");
    int scale = s != NULL ? atoi(s) : 1;

    if (scale <= 1)
        return count;
    return count / scale > 0 ? count / scale : 1;
}

int gt_blind_pair(mpz_t r, mpz_t rinv, const mpz_t n, int k)
{
    if (k == 1)
        mpz_set_ui(r, 1);
    else if (k == 2)
        mpz_sub_ui(r, n, 1);
    else
        do
            mpz_urandomm(r, gt_rand, n);
        while (mpz_sgn(r) == 0 || !mpz_invert(rinv, r, n));
    return mpz_invert(rinv, r, n) != 0;
}

void gt_to_limbs(uint32_t *a, int n, const mpz_t z)
{
    size_t cnt = 0;
    memset(a, 0, sizeof(uint32_t) * (size_t)n);
    if (mpz_sizeinbase(z, 2) > (size_t)32 * n) {
        fprintf(stderr, "gt_to_limbs: value too large\n");
        abort();
    }
    mpz_export(a, &cnt, -1, sizeof(uint32_t), 0, 0, z);
}

void gt_from_limbs(mpz_t z, const uint32_t *a, int n)
{
    mpz_import(z, (size_t)n, -1, sizeof(uint32_t), 0, 0, a);
}

void gt_to_be(unsigned char *b, size_t len, const mpz_t z)
{
    size_t cnt = (mpz_sizeinbase(z, 2) + 7) / 8;
    memset(b, 0, len);
    if (mpz_sgn(z) == 0)
        return;
    if (cnt > len) {
        fprintf(stderr, "gt_to_be: value too large\n");
        abort();
    }
    mpz_export(b + len - cnt, NULL, 1, 1, 1, 0, z);
}

static void fill_limbs(mpz_t r, int n, uint32_t v)
{
    mpz_set_ui(r, 0);
    for (int i = 0; i < n; i++) {
        mpz_mul_2exp(r, r, 32);
        mpz_add_ui(r, r, v);
    }
}

void gt_operand(mpz_t r, int k, const mpz_t m, int n)
{
    switch (k) {
    case 0: mpz_set_ui(r, 0); break;
    case 1: mpz_set_ui(r, 1); break;
    case 2: mpz_set_ui(r, 2); break;
    case 3: mpz_sub_ui(r, m, 1); break;
    case 4: mpz_sub_ui(r, m, 2); break;
    case 5: fill_limbs(r, n, 0xffffffffu); break;
    case 6: fill_limbs(r, n, 0x7fffffffu); break;
    case 7: fill_limbs(r, n, 0x80000000u); break;
    case 8: /* a run of top bits, then zeros */
        mpz_set_ui(r, 1);
        mpz_mul_2exp(r, r, 32 * n - 40);
        mpz_sub_ui(r, r, 1);
        mpz_mul_2exp(r, r, 40);
        break;
    case 9: mpz_rrandomb(r, gt_rand, 32 * n); break; /* long runs of ones and zeros */
    case 10: mpz_set_ui(r, 1); mpz_mul_2exp(r, r, 32 * n - 1); break;
    case 11: mpz_sub_ui(r, m, 1); mpz_fdiv_q_2exp(r, r, 1); break; /* (m-1)/2 */
    default: mpz_urandomm(r, gt_rand, m); break;
    }
    mpz_mod(r, r, m);
}

void gt_modulus(mpz_t m, int k, int n)
{
    switch (k) {
    case 0: fill_limbs(m, n, 0xffffffffu); break; /* 2^(32n) - 1 */
    case 1: mpz_set_ui(m, 1); mpz_mul_2exp(m, m, 32 * n - 1); mpz_add_ui(m, m, 1); break;
    case 2: fill_limbs(m, n, 0x80000000u); mpz_add_ui(m, m, 1); break;
    case 3: fill_limbs(m, n, 0x7fffffffu); break;
    case 4: /* top limb small: a prime-like modulus shorter than n limbs */
        mpz_urandomb(m, gt_rand, 32 * n - 37);
        mpz_setbit(m, 32 * n - 38);
        break;
    case 5: mpz_rrandomb(m, gt_rand, 32 * n); mpz_setbit(m, 32 * n - 1); break;
    default: mpz_urandomb(m, gt_rand, 32 * n); mpz_setbit(m, 32 * n - 1); break;
    }
    mpz_setbit(m, 0);
}

static void random_prime(mpz_t p, int bits, int shape_hi, const mpz_t e)
{
    mpz_t g, pm1;
    mpz_inits(g, pm1, NULL);
    for (;;) {
        if (shape_hi == 1) { /* just above 2^(bits-1)+2^(bits-2): p*q keeps the top bit */
            mpz_set_ui(p, 3);
            mpz_mul_2exp(p, p, bits - 2);
            mpz_urandomb(g, gt_rand, 40);
            mpz_add(p, p, g);
        } else if (shape_hi == 2) { /* just below 2^bits */
            mpz_set_ui(p, 1);
            mpz_mul_2exp(p, p, bits);
            mpz_urandomb(g, gt_rand, 40);
            mpz_sub(p, p, g);
            mpz_sub_ui(p, p, 1ul << 41);
        } else {
            mpz_urandomb(p, gt_rand, bits);
            mpz_setbit(p, bits - 1);
            mpz_setbit(p, bits - 2);
        }
        mpz_nextprime(p, p);
        mpz_sub_ui(pm1, p, 1);
        mpz_gcd(g, pm1, e);
        if (mpz_sizeinbase(p, 2) == (size_t)bits && mpz_cmp_ui(g, 1) == 0)
            break;
    }
    mpz_clears(g, pm1, NULL);
}

void gt_rsa_key_encode(gt_rsa_key *k, int shape)
{
    mpz_t *v[7] = {&k->n, &k->e, &k->p, &k->q, &k->dp, &k->dq, &k->qinv};
    size_t len[7];
    size_t nb = (size_t)k->bits / 8, hb = nb / 2;
    len[0] = nb;
    len[1] = (mpz_sizeinbase(k->e, 2) + 7) / 8;
    for (int i = 2; i < 7; i++)
        len[i] = hb;
    if (shape == 2) { /* unequal byte lengths for p and q */
        len[2] = hb + 2;
        len[3] = (mpz_sizeinbase(k->q, 2) + 7) / 8;
        len[4] = (mpz_sizeinbase(k->dp, 2) + 7) / 8;
    }
    for (int i = 0; i < 7; i++) {
        free(k->buf[i]);
        k->buf[i] = malloc(len[i] ? len[i] : 1);
        gt_to_be(k->buf[i], len[i], *v[i]);
    }
    k->km = (gpursa_rsa_key_material){
        k->buf[0], len[0], k->buf[1], len[1], k->buf[2], len[2], k->buf[3], len[3],
        k->buf[4], len[4], k->buf[5], len[5], k->buf[6], len[6]};
}

void gt_rsa_keygen(gt_rsa_key *k, int bits, uint64_t e, int shape)
{
    mpz_t pm1, qm1, phi;
    memset(k, 0, sizeof(*k));
    k->bits = bits;
    mpz_inits(k->n, k->e, k->d, k->p, k->q, k->dp, k->dq, k->qinv, pm1, qm1, phi, NULL);
    mpz_import(k->e, 1, 1, sizeof(e), 0, 0, &e);
    do {
        random_prime(k->p, bits / 2, shape ? 1 : 0, k->e);
        random_prime(k->q, bits / 2, shape ? 2 : 0, k->e);
        mpz_mul(k->n, k->p, k->q);
    } while (mpz_sizeinbase(k->n, 2) != (size_t)bits || mpz_cmp(k->p, k->q) == 0);
    if (shape == 2)
        mpz_swap(k->p, k->q); /* p > q */
    mpz_sub_ui(pm1, k->p, 1);
    mpz_sub_ui(qm1, k->q, 1);
    mpz_mul(phi, pm1, qm1);
    mpz_invert(k->d, k->e, phi);
    mpz_mod(k->dp, k->d, pm1);
    mpz_mod(k->dq, k->d, qm1);
    mpz_invert(k->qinv, k->q, k->p);
    mpz_clears(pm1, qm1, phi, NULL);
    gt_rsa_key_encode(k, shape);
}

void gt_rsa_key_free(gt_rsa_key *k)
{
    mpz_clears(k->n, k->e, k->d, k->p, k->q, k->dp, k->dq, k->qinv, NULL);
    for (int i = 0; i < 7; i++)
        free(k->buf[i]);
    memset(k, 0, sizeof(*k));
}

void gt_rsa_keys_make(gt_rsa_key *keys, gpursa_rsa_keydata **kds, int count, int bits)
{
    for (int s = 0; s < count; s++) {
        gt_rsa_keygen(&keys[s], bits, s == 1 ? 3 : 65537, s);
        kds[s] = malloc(sizeof(*kds[s]));
        if (kds[s] == NULL || gpursa_keyconv_load(kds[s], &keys[s].km) != GPURSA_GPU_OK)
            abort();
    }
}

void gt_rsa_keys_free(gt_rsa_key *keys, gpursa_rsa_keydata **kds, int count)
{
    for (int s = 0; s < count; s++) {
        gpursa_keyconv_cleanse(kds[s], sizeof(*kds[s]));
        free(kds[s]);
        gt_rsa_key_free(&keys[s]);
    }
}

const gpursa_gpu_backend_ops *gt_backend(int *skip)
{
    const char *b = getenv("GPURSA_TEST_BACKEND");
    *skip = 0;
    if (b == NULL || strcmp(b, "host") == 0)
        return gpursa_gpu_backend(GPURSA_BACKEND_HOST);
    if (strcmp(b, "cuda") == 0) {
        const gpursa_gpu_backend_ops *ops = gpursa_gpu_backend(GPURSA_BACKEND_CUDA);
        int count = 0;
        if (ops == NULL || ops->device_count(&count) != GPURSA_GPU_OK || count < 1) {
            *skip = 1;
            return NULL;
        }
        return ops;
    }
    fprintf(stderr, "GPURSA_TEST_BACKEND=%s: unknown (host or cuda)\n", b);
    abort();
}

void gt_batch_init(gt_batch *b, int count, uint32_t stride, int nl)
{
    const size_t words = (size_t)nl * stride;
    b->count = count;
    b->nl = nl;
    b->stride = stride;
    b->keys = (const void **)calloc(stride, sizeof(*b->keys));
    b->in = (uint32_t *)calloc(words, 4);
    b->r = (uint32_t *)calloc(words, 4);
    b->rinv = (uint32_t *)calloc(words, 4);
    b->out = (uint32_t *)malloc(words * 4);
    b->status = (int32_t *)malloc((size_t)stride * 4);
    if (b->keys == NULL || b->in == NULL || b->r == NULL || b->rinv == NULL || b->out == NULL
        || b->status == NULL)
        abort();
    memset(b->out, 0xa5, words * 4);
    memset(b->status, 0x5a, (size_t)stride * 4);
}

int gt_batch_first_written(const gt_batch *b, int from)
{
    for (int i = from; i < (int)b->stride; i++) {
        if (b->status[i] != GT_STATUS_CANARY)
            return i;
        for (int j = 0; j < b->nl; j++)
            if (b->out[(size_t)j * b->stride + i] != 0xa5a5a5a5u)
                return i;
    }
    return -1;
}

void gt_batch_free(gt_batch *b)
{
    free(b->keys);
    free(b->in);
    free(b->r);
    free(b->rinv);
    free(b->out);
    free(b->status);
}

void gt_soa_set(uint32_t *soa, const gt_batch *b, int item, const mpz_t z)
{
    uint32_t l[GPURSA_RSA_MAX_LIMBS];
    gt_to_limbs(l, b->nl, z);
    for (int j = 0; j < b->nl; j++)
        soa[(size_t)j * b->stride + item] = l[j];
}

void gt_soa_get(mpz_t z, const uint32_t *soa, const gt_batch *b, int item)
{
    uint32_t l[GPURSA_RSA_MAX_LIMBS];
    for (int j = 0; j < b->nl; j++)
        l[j] = soa[(size_t)j * b->stride + item];
    gt_from_limbs(z, l, b->nl);
}
