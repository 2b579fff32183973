/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_rsa.c - the whole blinded CRT private operation against GMP.
 *
 * gpursa_rsa_op (gpu/gpursa_rsa_op.h) directly, for every key size and both
 * variants: random and edge inputs (0, 1, n-1, p, q, all-ones, top-bit
 * runs), edge blinding factors, keys with p > q, extreme primes and unequal
 * byte lengths, BADINPUT for c >= n and unusable r / rinv, and FAULT when a
 * bit of the result is flipped before the check.
 *
 * The backend interface (gpursa_gpu_backend_ops) of the backend named by
 * GPURSA_TEST_BACKEND (host by default; cuda on the GPU machine, skipped
 * with 77 when no device): key upload and refusal, batches mixing several
 * keys, per-item status, FAULT from a key whose dp is wrong, batch limits;
 * on CUDA also the fail-closed status words (fault injection through
 * gpursa_cuda_debug_fault_items: an unwritten or out-of-range item is FAULT,
 * on fresh and on reused buffers).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpu/gpursa_cuda_load.h"
#include "gpu/gpursa_cuda_status.h"
#include "gpu/gpursa_host_debug.h"
#include "gpu/gpursa_keyconv.h"
#include "gpu/gpursa_rsa_op.h"
#include "tests/gpu/gpu_testutil.h"
#ifdef GPURSA_HAVE_CUDA
#include "gpu/gpursa_cuda_debug.h"
#endif

static const int key_bits[] = {1024, 2048, 3072, 4096};
static const int variants[] = {GPURSA_VARIANT_IMAD, GPURSA_VARIANT_XMAD};

/* One key per size and shape, generated once (GMP prime search is slow). */
static gt_rsa_key keys[4][3];
static int keys_made;

static gt_rsa_key *get_key(int size_idx, int shape)
{
    if (!(keys_made & (1 << (size_idx * 3 + shape)))) {
        gt_rsa_keygen(&keys[size_idx][shape], key_bits[size_idx],
                      shape == 1 ? 3 : (shape == 2 ? 0xc3f5a7b9e1d20f4bull : 65537), shape);
        keys_made |= 1 << (size_idx * 3 + shape);
    }
    return &keys[size_idx][shape];
}


/* Input number k for key kk: edges, then random below n. */
#define INPUT_EDGES 11
static void make_input(mpz_t c, const gt_rsa_key *kk, int k)
{
    int nl = kk->bits / 32;
    switch (k) {
    case 0: mpz_set_ui(c, 0); break;
    case 1: mpz_set_ui(c, 1); break;
    case 2: mpz_sub_ui(c, kk->n, 1); break;
    case 3: mpz_set(c, kk->p); break;          /* c' == 0 mod p */
    case 4: mpz_mul_ui(c, kk->q, 3); break;    /* c' == 0 mod q */
    case 5: mpz_sub_ui(c, kk->p, 1); break;
    case 6: gt_operand(c, 5, kk->n, nl); break; /* all-ones limbs mod n */
    case 7: gt_operand(c, 6, kk->n, nl); break; /* 0x7fffffff limbs */
    case 8: gt_operand(c, 7, kk->n, nl); break; /* 0x80000000 limbs */
    case 9: gt_operand(c, 8, kk->n, nl); break; /* run of top bits */
    case 10: gt_operand(c, 9, kk->n, nl); break;
    default: mpz_urandomm(c, gt_rand, kk->n); break;
    }
}

/* Run gpursa_rsa_op on limbs; returns the status, out in 'got'. */
static int op_limbs(const gpursa_rsa_keydata *kd, const mpz_t c, const mpz_t r,
                    const mpz_t rinv, mpz_t got, int variant, int fault_bit)
{
    uint32_t lc[GPURSA_RSA_MAX_LIMBS], lr[GPURSA_RSA_MAX_LIMBS];
    uint32_t li[GPURSA_RSA_MAX_LIMBS], lo[GPURSA_RSA_MAX_LIMBS];
    int nl = kd->nl;
    gt_to_limbs(lc, nl, c);
    gt_to_limbs(lr, nl, r);
    gt_to_limbs(li, nl, rinv);
    memset(lo, 0xa5, sizeof(lo));
    int st = gpursa_rsa_op(kd, lc, lr, li, lo, nl, variant, fault_bit);
    gt_from_limbs(got, lo, nl);
    return st;
}

static void run_op(int size_idx, int variant, int shape, int inputs)
{
    gt_rsa_key *kk = get_key(size_idx, shape);
    gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
    mpz_t c, r, rinv, want, got;
    ck_assert_ptr_nonnull(kd);
    mpz_inits(c, r, rinv, want, got, NULL);
    ck_assert_int_eq(gpursa_keyconv_load(kd, &kk->km), GPURSA_GPU_OK);
    ck_assert_int_eq(kd->bits, kk->bits);
    for (int k = 0; k < inputs; k++) {
        make_input(c, kk, k);
        ck_assert(gt_blind_pair(r, rinv, kk->n, k % 4));
        int st = op_limbs(kd, c, r, rinv, got, variant, -1);
        mpz_powm(want, c, kk->d, kk->n);
        if (st != GPURSA_ITEM_OK || mpz_cmp(got, want) != 0)
            ck_abort_msg("rsa_op %d bits variant %s shape %d input #%d: status %d, %s", kk->bits,
                         gpursa_variant_name(variant), shape, k, st,
                         mpz_cmp(got, want) ? "wrong result" : "right result");
    }
    gpursa_keyconv_cleanse(kd, sizeof(*kd));
    free(kd);
    mpz_clears(c, r, rinv, want, got, NULL);
}

/* c >= n, r >= n, rinv >= n, r*rinv != 1: BADINPUT and out zero; then a
 * flipped bit of the recombined result at several positions: FAULT. */
static void run_bad(int size_idx, int variant)
{
    gt_rsa_key *kk = get_key(size_idx, 0);
    gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
    mpz_t c, r, rinv, got, x;
    ck_assert_ptr_nonnull(kd);
    mpz_inits(c, r, rinv, got, x, NULL);
    ck_assert_int_eq(gpursa_keyconv_load(kd, &kk->km), GPURSA_GPU_OK);
    ck_assert(gt_blind_pair(r, rinv, kk->n, 0));
    for (int k = 0; k < 4; k++) {
        switch (k) {
        case 0: mpz_set(c, kk->n); break;                               /* smallest bad */
        case 1: mpz_add_ui(c, kk->n, 1); break;
        case 2: mpz_set_ui(c, 1); mpz_mul_2exp(c, c, kk->bits); mpz_sub_ui(c, c, 1); break;
        case 3: mpz_mul_2exp(c, kk->n, 0); mpz_setbit(c, kk->bits - 1); break;
        }
        if (mpz_sizeinbase(c, 2) > (size_t)kk->bits)
            continue;
        ck_assert_int_eq(op_limbs(kd, c, r, rinv, got, variant, -1), GPURSA_ITEM_BADINPUT);
        ck_assert(mpz_sgn(got) == 0);
    }
    mpz_sub_ui(c, kk->n, 1); /* largest good input */
    ck_assert_int_eq(op_limbs(kd, c, r, rinv, got, variant, -1), GPURSA_ITEM_OK);
    /* r >= n, rinv >= n, rinv not the inverse */
    mpz_add(x, r, kk->n);
    if (mpz_sizeinbase(x, 2) <= (size_t)kk->bits) {
        ck_assert_int_eq(op_limbs(kd, c, x, rinv, got, variant, -1), GPURSA_ITEM_BADINPUT);
        ck_assert(mpz_sgn(got) == 0);
    }
    mpz_set(x, kk->n);
    ck_assert_int_eq(op_limbs(kd, c, r, x, got, variant, -1), GPURSA_ITEM_BADINPUT);
    mpz_add_ui(x, rinv, 1);
    mpz_mod(x, x, kk->n);
    ck_assert_int_eq(op_limbs(kd, c, r, x, got, variant, -1), GPURSA_ITEM_BADINPUT);
    ck_assert(mpz_sgn(got) == 0);
    mpz_set_ui(x, 0);
    ck_assert_int_eq(op_limbs(kd, c, x, x, got, variant, -1), GPURSA_ITEM_BADINPUT);
    /* faults anywhere in the result are caught and the output wiped */
    int positions[] = {0, 1, 31, 32, 77, kk->bits / 2, kk->bits - 2, kk->bits - 1};
    for (size_t i = 0; i < sizeof(positions) / sizeof(positions[0]); i++) {
        mpz_urandomm(c, gt_rand, kk->n);
        ck_assert_int_eq(op_limbs(kd, c, r, rinv, got, variant, positions[i]),
                         GPURSA_ITEM_FAULT);
        ck_assert(mpz_sgn(got) == 0);
    }
    gpursa_keyconv_cleanse(kd, sizeof(*kd));
    free(kd);
    mpz_clears(c, r, rinv, got, x, NULL);
}

/* _i: size index * 2 + variant index; edge inputs, then random ones (fewer
 * with GPURSA_TEST_SCALE) */
START_TEST(test_op_random_and_edges)
{
    run_op(_i / 2, variants[_i % 2], 0, INPUT_EDGES + gt_random_cases(6));
}
END_TEST
START_TEST(test_op_small_e_extreme_primes)
{
    run_op(_i / 2, variants[_i % 2], 1, INPUT_EDGES + gt_random_cases(2));
}
END_TEST
START_TEST(test_op_p_gt_q_64bit_e_unequal_lengths)
{
    run_op(_i / 2, variants[_i % 2], 2, INPUT_EDGES + gt_random_cases(2));
}
END_TEST
START_TEST(test_op_badinput_and_fault) { run_bad(_i / 2, variants[_i % 2]); }
END_TEST

/* ---- key support and conversion --------------------------------------- */

START_TEST(test_key_supported)
{
    gt_rsa_key *kk = get_key(_i, 0);
    gpursa_rsa_key_material km = kk->km;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), kk->bits);
    ck_assert_int_eq(gpursa_gpu_key_supported(&get_key(_i, 2)->km), kk->bits);
    ck_assert_int_eq(gpursa_gpu_key_supported(NULL), 0);
    /* n one byte shorter (a 1016-bit-class modulus), n with an extra bit */
    km.n = kk->km.n + 1;
    km.n_len = kk->km.n_len - 1;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), 0);
    unsigned char *big = calloc(1, kk->km.n_len + 1);
    memcpy(big + 1, kk->km.n, kk->km.n_len);
    big[0] = 1;
    km.n = big;
    km.n_len = kk->km.n_len + 1;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), 0);
    /* leading zero bytes do not matter */
    big[0] = 0;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), kk->bits);
    km = kk->km;
    /* even e, e over 64 bits, even p, p longer than the half */
    unsigned char e2[9] = {1, 0, 0, 0, 0, 0, 0, 0, 1}, e0[3] = {1, 0, 0};
    km.e = e0;
    km.e_len = 3;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), 0);
    km.e = e2;
    km.e_len = 9;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), 0);
    km.e_len = 8; /* the last 8 bytes: e = 1, odd, fits */
    km.e = e2 + 1;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), kk->bits);
    km = kk->km;
    unsigned char *p2 = malloc(km.p_len);
    memcpy(p2, km.p, km.p_len);
    p2[km.p_len - 1] ^= 1;
    km.p = p2;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), 0);
    km.p = big; /* n as p: longer than half */
    km.p_len = kk->km.n_len + 1;
    ck_assert_int_eq(gpursa_gpu_key_supported(&km), 0);
    /* a supported shape whose numbers do not belong together: refused */
    km = kk->km;
    p2[km.p_len - 1] ^= 1;
    p2[km.p_len - 1] ^= 2;
    km.p = p2;
    gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
    ck_assert_int_eq(gpursa_keyconv_load(kd, &km), GPURSA_GPU_ERR_INVALID);
    km = kk->km;
    km.qinv = kk->km.dq; /* wrong qinv */
    km.qinv_len = kk->km.dq_len;
    ck_assert_int_eq(gpursa_keyconv_load(kd, &km), GPURSA_GPU_ERR_INVALID);
    free(kd);
    free(p2);
    free(big);
}
END_TEST

START_TEST(test_keyconv_constants)
{
    gt_rsa_key *kk = get_key(_i, 2);
    gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
    mpz_t R, x, got;
    mpz_inits(R, x, got, NULL);
    ck_assert_int_eq(gpursa_keyconv_load(kd, &kk->km), GPURSA_GPU_OK);
    int hl = kd->hl, nl = kd->nl;
    ck_assert_int_eq(nl, kk->bits / 32);
    ck_assert_int_eq(hl, nl / 2);
    gt_from_limbs(got, kd->p, hl);
    ck_assert(mpz_cmp(got, kk->p) == 0);
    gt_from_limbs(got, kd->dq, hl);
    ck_assert(mpz_cmp(got, kk->dq) == 0);
    ck_assert_uint_eq(kd->p0inv * kd->p[0], 0xffffffffu);
    ck_assert_uint_eq(kd->n0inv * kd->n[0], 0xffffffffu);
    /* R mod p, R^3 mod p, R_n^2 mod n */
    mpz_set_ui(R, 1);
    mpz_mul_2exp(R, R, 32 * hl);
    mpz_mod(x, R, kk->p);
    gt_from_limbs(got, kd->p_one, hl);
    ck_assert(mpz_cmp(got, x) == 0);
    mpz_powm_ui(x, R, 3, kk->q);
    gt_from_limbs(got, kd->q_rrr, hl);
    ck_assert(mpz_cmp(got, x) == 0);
    mpz_mul_2exp(R, R, 32 * hl);
    mpz_powm_ui(x, R, 2, kk->n);
    gt_from_limbs(got, kd->n_rr, nl);
    ck_assert(mpz_cmp(got, x) == 0);
    ck_assert(mpz_cmp_ui(kk->e, 0) > 0);
    ck_assert(mpz_get_ui(kk->e) == (unsigned long)kd->e || sizeof(unsigned long) < 8);
    mpz_clears(R, x, got, NULL);
    free(kd);
}
END_TEST

/* ---- the backend interface --------------------------------------------- */

static const gpursa_gpu_backend_ops *ops;
static int backend_skip;

typedef struct {
    size_t len;
    unsigned char *in, *r, *rinv, *out;
    mpz_t want;
    int expect;
} item_data;

static void item_make(item_data *d, gpursa_gpu_item *it, const gpursa_gpu_key *key,
                      gt_rsa_key *kk, int k, int expect)
{
    mpz_t c, r, rinv;
    mpz_inits(c, r, rinv, d->want, NULL);
    d->len = (size_t)kk->bits / 8;
    d->in = malloc(d->len);
    d->r = malloc(d->len);
    d->rinv = malloc(d->len);
    d->out = malloc(d->len);
    make_input(c, kk, k);
    ck_assert(gt_blind_pair(r, rinv, kk->n, k % 3));
    if (expect == GPURSA_ITEM_BADINPUT)
        mpz_add_ui(c, kk->n, (unsigned long)k % 3); /* c >= n, still fits */
    if (mpz_sizeinbase(c, 2) > (size_t)kk->bits)
        mpz_set(c, kk->n);
    gt_to_be(d->in, d->len, c);
    gt_to_be(d->r, d->len, r);
    gt_to_be(d->rinv, d->len, rinv);
    memset(d->out, 0x5a, d->len);
    mpz_powm(d->want, c, kk->d, kk->n);
    d->expect = expect;
    *it = (gpursa_gpu_item){key, d->in, d->r, d->rinv, d->out, GPURSA_ITEM_PENDING};
    mpz_clears(c, r, rinv, NULL);
}

/* d, it: a copy of item src (same key, input, blinding factors and expected
 * result) with buffers of its own, the output not yet written */
static void item_copy(item_data *d, gpursa_gpu_item *it, const item_data *src, const gpursa_gpu_item *sit)
{
    *d = *src;
    d->in = malloc(d->len);
    d->r = malloc(d->len);
    d->rinv = malloc(d->len);
    d->out = malloc(d->len);
    memcpy(d->in, src->in, d->len);
    memcpy(d->r, src->r, d->len);
    memcpy(d->rinv, src->rinv, d->len);
    memset(d->out, 0x5a, d->len);
    mpz_init_set(d->want, src->want);
    *it = (gpursa_gpu_item){sit->key, d->in, d->r, d->rinv, d->out, GPURSA_ITEM_PENDING};
}

static void item_check(item_data *d, const gpursa_gpu_item *it, size_t idx)
{
    mpz_t got;
    mpz_init(got);
    mpz_import(got, d->len, 1, 1, 1, 0, d->out);
    if (it->status != d->expect)
        ck_abort_msg("item %zu: status %d, expected %d", idx, it->status, d->expect);
    if (d->expect == GPURSA_ITEM_OK)
        ck_assert_msg(mpz_cmp(got, d->want) == 0, "item %zu: wrong result", idx);
    else
        ck_assert_msg(mpz_sgn(got) == 0, "item %zu: output not wiped", idx);
    mpz_clear(got);
    free(d->in);
    free(d->r);
    free(d->rinv);
    free(d->out);
    mpz_clear(d->want);
}

/* Host backend: after a batch, its per-thread staging (each item's input,
 * r, r^-1 and result as limbs) holds nothing of it: every byte zero. */
static void assert_host_staging_wiped(const gpursa_gpu_batch *batch)
{
    const unsigned char *staging = NULL;
    size_t len = 0;

    if (ops != gpursa_gpu_backend(GPURSA_BACKEND_HOST))
        return;
    ck_assert_int_eq(gpursa_host_debug_staging(batch, &staging, &len), GPURSA_GPU_OK);
    ck_assert_uint_gt(len, 0);
    for (size_t i = 0; i < len; i++)
        if (staging[i] != 0)
            ck_abort_msg("host batch staging: byte %zu of %zu is 0x%02x after the batch", i,
                         len, staging[i]);
}

/* cuda_fp64 of the devices open_dev opens (AUTO: the device's own rate) */
static gpursa_fp64 open_fp64;

static gpursa_gpu_device *open_dev(gpursa_variant v)
{
    gpursa_gpu_device *dev = NULL;
    gpursa_gpu_open_params params = { .variant = v, .cuda_fp64 = open_fp64 };
    int rc = ops->device_open(0, &params, &dev);
    if (rc == GPURSA_GPU_ERR_UNSUPPORTED)
        return NULL;
    ck_assert_msg(rc == GPURSA_GPU_OK, "device_open: %s", gpursa_gpu_rc_string(rc));
    ck_assert_ptr_nonnull(ops->device_describe(dev));
    return dev;
}

/* A batch of one size class with items of three keys (random, p > q with
 * a 64-bit e, extreme primes with e = 3), edge and random inputs, some
 * BADINPUT, and items of a fourth key whose dp is wrong: FAULT. Items from
 * `distinct` on repeat the first `distinct` (each result still checked):
 * the CUDA backend picks its kernel by the items in flight, and the heavy
 * loads' kernels need batches of thousands, more than GMP's reference
 * results for each would be worth. */
static void run_backend_batch_rep(int size_idx, gpursa_variant v, size_t nitems, size_t distinct)
{
    /* GPURSA_TEST_SCALE: fewer items, never below 9 (every key, a BADINPUT
     * item and the host backend's thread split at 8+ stay covered) */
    if (nitems > 9)
        nitems = 9 + (size_t)gt_random_cases((int)nitems - 9);
    gpursa_gpu_device *dev = open_dev(v);
    if (dev == NULL)
        return; /* variant not offered by this backend */
    gt_rsa_key *kk[3] = {get_key(size_idx, 0), get_key(size_idx, 2), get_key(size_idx, 1)};
    gpursa_gpu_key *key[4];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(ops->key_upload(dev, &kk[i]->km, &key[i]), GPURSA_GPU_OK);
    /* the faulty key: dp + 2 (still the same shape) */
    gt_rsa_key bad;
    gt_rsa_keygen(&bad, key_bits[size_idx], 65537, 0);
    mpz_add_ui(bad.dp, bad.dp, 2);
    gt_rsa_key_encode(&bad, 0);
    ck_assert_int_eq(ops->key_upload(dev, &bad.km, &key[3]), GPURSA_GPU_OK);

    gpursa_gpu_item *items = calloc(nitems, sizeof(*items));
    item_data *data = calloc(nitems, sizeof(*data));
    for (size_t i = 0; i < nitems; i++) {
        int which = (int)(i % 4);
        if (i >= distinct) {
            item_copy(&data[i], &items[i], &data[i % distinct], &items[i % distinct]);
            continue;
        }
        int expect = which == 3 ? GPURSA_ITEM_FAULT
                     : (i % 7 == 5) ? GPURSA_ITEM_BADINPUT : GPURSA_ITEM_OK;
        gt_rsa_key *owner = which == 3 ? &bad : kk[which];
        /* a wrong dp still gives right answers for c = 0, 1 or c = 0 mod p:
         * the faulty key's items take random inputs */
        int input = which == 3 ? INPUT_EDGES + (int)i : (int)(i % (INPUT_EDGES + 3));
        item_make(&data[i], &items[i], key[which], owner, input, expect);
    }
    gpursa_gpu_batch *batch = NULL;
    ck_assert_int_eq(ops->batch_new(dev, key_bits[size_idx], nitems, &batch), GPURSA_GPU_OK);
    ck_assert_int_eq(ops->batch_submit(batch, items, nitems), GPURSA_GPU_OK);
    int polled = ops->batch_poll(batch);
    ck_assert(polled == 0 || polled == 1);
    ck_assert_int_eq(ops->batch_wait(batch), GPURSA_GPU_OK);
    ck_assert_int_eq(ops->batch_poll(batch), 1);
    double ks = -1, ci = -1, co = -1;
    ops->batch_times(batch, &ks, &ci, &co);
    ck_assert(ks >= 0 && ci >= 0 && co >= 0);
    for (size_t i = 0; i < nitems; i++)
        item_check(&data[i], &items[i], i);
    assert_host_staging_wiped(batch);

    /* the batch is reusable; too many items is refused */
    for (size_t i = 0; i < 2 && i < nitems; i++)
        item_make(&data[i], &items[i], key[0], kk[0], (int)i + 1, GPURSA_ITEM_OK);
    ck_assert_int_eq(ops->batch_submit(batch, items, nitems < 2 ? nitems : 2), GPURSA_GPU_OK);
    ck_assert_int_eq(ops->batch_wait(batch), GPURSA_GPU_OK);
    for (size_t i = 0; i < 2 && i < nitems; i++)
        item_check(&data[i], &items[i], i);
    assert_host_staging_wiped(batch);
    ck_assert_int_ne(ops->batch_submit(batch, items, nitems + 1), GPURSA_GPU_OK);
    ops->batch_free(batch);

    /* a key of another size in a batch is refused */
    if (nitems >= 1) {
        gt_rsa_key *other = get_key((size_idx + 1) % 4, 0);
        gpursa_gpu_key *okey = NULL;
        ck_assert_int_eq(ops->key_upload(dev, &other->km, &okey), GPURSA_GPU_OK);
        item_make(&data[0], &items[0], okey, other, 1, GPURSA_ITEM_OK);
        ck_assert_int_eq(ops->batch_new(dev, key_bits[size_idx], 1, &batch), GPURSA_GPU_OK);
        ck_assert_int_ne(ops->batch_submit(batch, items, 1), GPURSA_GPU_OK);
        ops->batch_free(batch);
        free(data[0].in); free(data[0].r); free(data[0].rinv); free(data[0].out);
        mpz_clear(data[0].want);
        ops->key_free(dev, okey);
    }
    /* gpursa_gpu_run: the synchronous helper */
    item_make(&data[0], &items[0], key[1], kk[1], 2, GPURSA_ITEM_OK);
    item_make(&data[1], &items[1], key[2], kk[2], 17, GPURSA_ITEM_OK);
    ck_assert_int_eq(gpursa_gpu_run(ops, dev, items, 2), GPURSA_GPU_OK);
    item_check(&data[0], &items[0], 0);
    item_check(&data[1], &items[1], 1);

    for (int i = 0; i < 4; i++)
        ops->key_free(dev, key[i]);
    ops->key_free(dev, NULL);
    gt_rsa_key_free(&bad);
    free(items);
    free(data);
    ops->device_close(dev);
}

/* CUDA COOP picks a kernel by the items in flight (kernels_<bits>.cu; a lone
 * batch's load is its size), so each kernel gets a batch of a load that
 * routes to it. On a device with full-rate FP64: RSA-2048 32-bit limbs, 2 a
 * lane, up to 1,024 (a batch of 300), then FP64 limbs on 4 lanes a CRT half up
 * to 6,000 (2,600) and on 2 above (7,000); RSA-3072 FP64 limbs on 8 lanes a
 * half up to 2,048 (300), on 3 above (4,000); RSA-4096 FP64 limbs on 8 lanes a
 * half up to 2,048 (300), on 4 above (2,500): cuda_heavy. With
 * cuda_fp64 = 0, as on a device without it (newer than Hopper; a T4, A10
 * or L4 with variant = coop): RSA-2048 32-bit limbs, 4 a lane, above 1,024
 * (1,500), RSA-3072's and 4096's 32-bit kernels at every load (300):
 * cuda_no_fp64. n items, of which the first `distinct` are made and the rest
 * repeat them. */
typedef struct { size_t n, distinct; } cuda_load;
static const cuda_load cuda_heavy[4][2] = {
    {{0, 0}},
    {{2600, 2600}, {7000, 300}},
    {{4000, 300}},
    {{2500, 300}},
};
static const cuda_load cuda_no_fp64[4] = {{0, 0}, {1500, 300}, {300, 300}, {300, 300}};

static void run_backend_batch(int size_idx, gpursa_variant v, size_t nitems)
{
    run_backend_batch_rep(size_idx, v, nitems, nitems);
}

START_TEST(test_backend_batch_mixed_keys)
{
    if (backend_skip)
        return;
    static const gpursa_variant vs[] = {GPURSA_VARIANT_AUTO, GPURSA_VARIANT_IMAD,
                                        GPURSA_VARIANT_XMAD, GPURSA_VARIANT_FAST,
                                        GPURSA_VARIANT_COOP};
    /* host: modest batches (every item runs on this CPU); threads split at 8+ */
    int cuda = getenv("GPURSA_TEST_BACKEND") && strcmp(getenv("GPURSA_TEST_BACKEND"), "cuda") == 0;
    size_t n = cuda ? 300 : (_i / 5 < 2 ? 24 : 9);
    if (cuda && vs[_i % 5] == GPURSA_VARIANT_COOP) {
        const cuda_load *h = cuda_heavy[_i / 5], *nf = &cuda_no_fp64[_i / 5];
        for (size_t j = 0; j < 2 && h[j].n != 0; j++)
            run_backend_batch_rep(_i / 5, GPURSA_VARIANT_COOP, h[j].n, h[j].distinct);
        if (nf->n != 0) {
            open_fp64 = GPURSA_FP64_OFF;
            gpursa_gpu_device *dev = open_dev(GPURSA_VARIANT_COOP);
            ck_assert_ptr_nonnull(dev);
            /* the routing took it (else the FP64 kernels would run again) */
            ck_assert_ptr_nonnull(strstr(ops->device_describe(dev), "32-bit limbs only (cuda_fp64 = 0)"));
            ops->device_close(dev);
            run_backend_batch_rep(_i / 5, GPURSA_VARIANT_COOP, nf->n, nf->distinct);
            open_fp64 = GPURSA_FP64_AUTO;
        }
    }
    if (!cuda && _i / 5 == 1 && vs[_i % 5] == GPURSA_VARIANT_AUTO)
        run_backend_batch_rep(1, GPURSA_VARIANT_AUTO, 20, 7);    /* the repeats, on the host too */
    run_backend_batch(_i / 5, vs[_i % 5], n);
}
END_TEST

/* One batch object, reused for batches of few items whose counts fall in the
 * same size class and in others, in turn: the CUDA backend runs each as the
 * graph of its class (captured on first use, replayed after, padded to the
 * class's top), so a replay must compute its own items, never the ones the
 * graph was captured with or the padding. Two keys, an input >= n in every
 * batch of 6 or more. GPURSA_TEST_SCALE (the sanitizer trees, where only
 * the host backend runs) thins the larger batches as run_backend_batch_rep
 * does, never below 9 items: the same sequence of reuses, the host
 * backend's thread split still reached. */
START_TEST(test_backend_small_batches_replayed)
{
    static const size_t counts[] = {10, 11, 10, 3, 37, 40, 37, 1, 11, 200, 255, 200};
    const size_t ncounts = sizeof(counts) / sizeof(counts[0]);

    if (backend_skip)
        return;
    gpursa_gpu_device *dev = open_dev(GPURSA_VARIANT_AUTO);
    ck_assert_ptr_nonnull(dev);
    gt_rsa_key *kk[2] = {get_key(_i, 0), get_key(_i, 1)};
    gpursa_gpu_key *key[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(ops->key_upload(dev, &kk[i]->km, &key[i]), GPURSA_GPU_OK);
    gpursa_gpu_batch *batch = NULL;
    ck_assert_int_eq(ops->batch_new(dev, key_bits[_i], 256, &batch), GPURSA_GPU_OK);
    gpursa_gpu_item *items = calloc(256, sizeof(*items));
    item_data *data = calloc(256, sizeof(*data));
    ck_assert(items != NULL && data != NULL);
    for (size_t t = 0; t < ncounts; t++) {
        size_t n = counts[t] > 9 ? 9 + (size_t)gt_random_cases((int)counts[t] - 9) : counts[t];
        for (size_t i = 0; i < n; i++) {
            int expect = (i % 7 == 5) ? GPURSA_ITEM_BADINPUT : GPURSA_ITEM_OK;
            item_make(&data[i], &items[i], key[(i + t) % 2], kk[(i + t) % 2],
                      (int)(t * 7 + i), expect);
        }
        ck_assert_int_eq(ops->batch_submit(batch, items, n), GPURSA_GPU_OK);
        ck_assert_int_eq(ops->batch_wait(batch), GPURSA_GPU_OK);
        for (size_t i = 0; i < n; i++)
            item_check(&data[i], &items[i], i);
        assert_host_staging_wiped(batch);
    }
    ops->batch_free(batch);
    for (int i = 0; i < 2; i++)
        ops->key_free(dev, key[i]);
    free(items);
    free(data);
    ops->device_close(dev);
}
END_TEST

/* Key hygiene on the device: the hook reads a live key's device copy (it is
 * the key: not all zero), then keeps the allocation a key_free releases and
 * reads it back: every byte zero. CUDA backend only (the host backend's key
 * is host memory, wiped by gpursa_keyconv_cleanse before free). */
START_TEST(test_backend_device_key_wiped_on_free)
{
#ifdef GPURSA_HAVE_CUDA
    const char *which = getenv("GPURSA_TEST_BACKEND");
    gpursa_gpu_device *dev;
    gpursa_gpu_key *key = NULL;
    unsigned char *buf;
    size_t cap = 1 << 16, len = 0, nonzero = 0;

    if (backend_skip || which == NULL || strcmp(which, "cuda") != 0)
        return;
    dev = open_dev(GPURSA_VARIANT_AUTO);
    ck_assert_ptr_nonnull(dev);
    buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(ops->key_upload(dev, &get_key(1, 0)->km, &key), GPURSA_GPU_OK);
    ck_assert_int_eq(gpursa_cuda_debug_read_key(key, buf, cap, &len), GPURSA_GPU_OK);
    ck_assert_uint_ge(len, sizeof(gpursa_rsa_keydata));
    for (size_t i = 0; i < len; i++)
        nonzero += buf[i] != 0;
    ck_assert_uint_gt(nonzero, len / 8);
    gpursa_cuda_debug_keep_freed_keys(1);
    ops->key_free(dev, key);
    memset(buf, 0xa5, cap);
    ck_assert_int_eq(gpursa_cuda_debug_read_freed_key(buf, cap, &len), GPURSA_GPU_OK);
    ck_assert_uint_ge(len, sizeof(gpursa_rsa_keydata));
    for (size_t i = 0; i < len; i++)
        if (buf[i] != 0)
            ck_abort_msg("freed key: device byte %zu of %zu is 0x%02x", i, len, buf[i]);
    gpursa_cuda_debug_keep_freed_keys(0);
    ck_assert_int_eq(gpursa_cuda_debug_read_freed_key(buf, cap, &len), GPURSA_GPU_ERR_INVALID);
    free(buf);
    ops->device_close(dev);
#endif
}
END_TEST

/* ---- the CUDA backend's result check fails closed ------------------------ */

#ifdef GPURSA_HAVE_CUDA
/* One batch of nitems on `batch` (its first `distinct` items made, the
 * others repeating them; item i: key i % 3) with the fault hooks set to
 * (skip, corrupt) for its launch: items skip and corrupt come back FAULT
 * with a zeroed output, every other OK with the reference result. The hooks
 * are off again before anything is checked (CK_FORK=no on the GPU: a failed
 * check must not leave them on for the tests after it). */
static void run_fault_round(gpursa_gpu_batch *batch, gpursa_gpu_key **key, gt_rsa_key **kk, size_t nitems,
                            size_t distinct, int skip, int corrupt)
{
    gpursa_gpu_item *items = calloc(nitems, sizeof(*items));
    item_data *data = calloc(nitems, sizeof(*data));
    ck_assert(items != NULL && data != NULL);
    for (size_t i = 0; i < nitems; i++) {
        if (i >= distinct)
            item_copy(&data[i], &items[i], &data[i % distinct], &items[i % distinct]);
        else
            item_make(&data[i], &items[i], key[i % 3], kk[i % 3], (int)(i % (INPUT_EDGES + 3)),
                      GPURSA_ITEM_OK);
        data[i].expect = (int)i == skip || (int)i == corrupt ? GPURSA_ITEM_FAULT : GPURSA_ITEM_OK;
    }
    gpursa_cuda_debug_fault_items(skip, corrupt);
    int rc = ops->batch_submit(batch, items, nitems);
    gpursa_cuda_debug_fault_items(-1, -1);
    ck_assert_int_eq(rc, GPURSA_GPU_OK);
    ck_assert_int_eq(ops->batch_wait(batch), GPURSA_GPU_OK);
    for (size_t i = 0; i < nitems; i++)
        item_check(&data[i], &items[i], i);
    free(items);
    free(data);
}

/* A newly opened device and a new batch (fresh device buffers, which
 * cudaMalloc typically hands out zeroed), variant v, nitems: the first batch
 * with its last item left unwritten by the stages around the CRT kernel and item 0's
 * result made >= n reports both FAULT; the hooks off, the same batch object
 * all OK (every status word OK now). With `again`, the hooks on once more
 * (the middle item unwritten, the last one out of range): FAULT again, since
 * the words the last batch left OK are preset, not reused; then off, all OK. */
static void run_fault_batches(int size_idx, gpursa_variant v, size_t nitems, size_t distinct, int again)
{
    gpursa_gpu_device *dev = open_dev(v);
    if (dev == NULL)
        return;
    gt_rsa_key *kk[3] = {get_key(size_idx, 0), get_key(size_idx, 2), get_key(size_idx, 1)};
    gpursa_gpu_key *key[3];
    gpursa_gpu_batch *batch = NULL;
    const int last = (int)nitems - 1, mid = (int)(nitems / 2);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(ops->key_upload(dev, &kk[i]->km, &key[i]), GPURSA_GPU_OK);
    ck_assert_int_eq(ops->batch_new(dev, key_bits[size_idx], nitems, &batch), GPURSA_GPU_OK);
    run_fault_round(batch, key, kk, nitems, distinct, last, 0);
    run_fault_round(batch, key, kk, nitems, distinct, -1, -1);
    if (again) {
        run_fault_round(batch, key, kk, nitems, distinct, mid, last);
        run_fault_round(batch, key, kk, nitems, distinct, -1, -1);
    }
    ops->batch_free(batch);
    for (int i = 0; i < 3; i++)
        ops->key_free(dev, key[i]);
    ops->device_close(dev);
}
#endif

/* CUDA only: an item that no kernel finished, or whose result is right
 * modulo n but not below it, is a FAULT with a zeroed output and never OK;
 * the other items of its batch are right. Per key size (_i): the variant
 * AUTO picks, and COOP with a light load (its narrow kernel) and with the
 * heavy loads that route to each of the size's other kernels (as
 * test_backend_batch_mixed_keys; the FP64-limb ones on a device with
 * full-rate FP64, else the 32-bit ones). */
START_TEST(test_backend_cuda_fault_items_fail_closed)
{
#ifdef GPURSA_HAVE_CUDA
    const char *which = getenv("GPURSA_TEST_BACKEND");
    if (backend_skip || which == NULL || strcmp(which, "cuda") != 0)
        return;
    /* the heavy loads' batches with 64 distinct items (GMP's references) */
    run_fault_batches(_i, GPURSA_VARIANT_AUTO, 33, 33, 1);
    run_fault_batches(_i, GPURSA_VARIANT_COOP, 20, 20, 1);
    for (size_t j = 0; j < 2 && cuda_heavy[_i][j].n != 0; j++)
        run_fault_batches(_i, GPURSA_VARIANT_COOP, cuda_heavy[_i][j].n, 64, 0);
    if (cuda_no_fp64[_i].n != 0) {
        open_fp64 = GPURSA_FP64_OFF;
        run_fault_batches(_i, GPURSA_VARIANT_COOP, cuda_no_fp64[_i].n, 64, 0);
        open_fp64 = GPURSA_FP64_AUTO;
    }
#endif
}
END_TEST

START_TEST(test_backend_refusals)
{
    if (backend_skip)
        return;
    gpursa_gpu_device *dev = open_dev(GPURSA_VARIANT_AUTO);
    gpursa_gpu_key *key = (gpursa_gpu_key *)1;
    gpursa_gpu_batch *batch = (gpursa_gpu_batch *)1;
    int count = 0;
    ck_assert_int_eq(ops->device_count(&count), GPURSA_GPU_OK);
    ck_assert_int_ge(count, 1);
    gpursa_gpu_device *nodev = NULL;
    ck_assert_int_ne(ops->device_open(count, NULL, &nodev), GPURSA_GPU_OK);
    /* unsupported key: n one byte short */
    gpursa_rsa_key_material km = get_key(0, 0)->km;
    km.n++;
    km.n_len--;
    ck_assert_int_eq(ops->key_upload(dev, &km, &key), GPURSA_GPU_ERR_UNSUPPORTED);
    ck_assert_ptr_null(key);
    ck_assert_int_ne(ops->key_upload(dev, NULL, &key), GPURSA_GPU_OK);
    ck_assert_int_ne(ops->batch_new(dev, 1536, 4, &batch), GPURSA_GPU_OK);
    ck_assert_int_ne(ops->batch_new(dev, 2048, 0, &batch), GPURSA_GPU_OK);
    ck_assert_int_eq(gpursa_gpu_run(ops, dev, NULL, 0), GPURSA_GPU_OK);
    ops->device_close(dev);
}
END_TEST

START_TEST(test_names_and_strings)
{
    gpursa_variant v = GPURSA_VARIANT_AUTO;
    for (int i = 0; i < GPURSA_VARIANT_COUNT_; i++) {
        ck_assert_int_eq(gpursa_variant_from_name(gpursa_variant_name((gpursa_variant)i), &v), 1);
        ck_assert_int_eq(v, i);
    }
    ck_assert_int_eq(gpursa_variant_from_name("XMAD", &v), 1);
    ck_assert_int_eq(v, GPURSA_VARIANT_XMAD);
    ck_assert_int_eq(gpursa_variant_from_name("bogus", &v), 0);
    ck_assert_int_eq(gpursa_variant_from_name(NULL, &v), 0);
    ck_assert_str_eq(gpursa_variant_name(GPURSA_VARIANT_COUNT_), "unknown");
    for (int rc = 0; rc >= -7; rc--)
        ck_assert_str_ne(gpursa_gpu_rc_string(rc), "unknown error");
    ck_assert_str_eq(gpursa_gpu_rc_string(-99), "unknown error");
    ck_assert_ptr_nonnull(gpursa_gpu_backend(GPURSA_BACKEND_HOST));
#ifdef GPURSA_HAVE_CUDA
    ck_assert_ptr_nonnull(gpursa_gpu_backend(GPURSA_BACKEND_CUDA));
#else
    ck_assert_ptr_null(gpursa_gpu_backend(GPURSA_BACKEND_CUDA));
#endif
}
END_TEST

/* The size classes of a batch (gpursa_cuda_load.h): every count up to 2^16,
 * and the octave boundaries up to 2^24, against their definition: classes
 * rise by one from count to count's class top, a class's top is its largest
 * count, a batch padded to it has less than a quarter more items, and the
 * graphs' classes (counts up to GPURSA_CUDA_GRAPH_MAX) fit their table. */
static void check_size_class(size_t n)
{
    unsigned c = gpursa_cuda_class(n);
    size_t top = gpursa_cuda_class_top(n);

    ck_assert_uint_ge(top, n);
    ck_assert_uint_eq(gpursa_cuda_class(top), c);
    ck_assert_uint_eq(gpursa_cuda_class(top + 1), c + 1);
    ck_assert_uint_eq(gpursa_cuda_class_top(top), top);
    if (n < 8)
        ck_assert_uint_eq(top, n);
    else
        ck_assert_msg(4 * (top - n) < n, "class top %zu of %zu: a quarter more or above", top, n);
}

START_TEST(test_cuda_size_classes)
{
    unsigned prev = 0;

    for (size_t n = 1; n <= (size_t)1 << 16; n++) {
        unsigned c = gpursa_cuda_class(n);

        ck_assert_uint_le(prev, c);
        ck_assert_uint_le(c, prev + 1);
        prev = c;
        check_size_class(n);
    }
    for (size_t k = 17; k < 24; k++)
        for (size_t d = 0; d < 3; d++) {
            check_size_class(((size_t)1 << k) - 1 + d);
            check_size_class(((size_t)5 << (k - 2)) - 1 + d);
        }
    /* the classes 1-7, then 8-9, 10-11, 12-13, 14-15, 16-19, ... */
    ck_assert_uint_eq(gpursa_cuda_class_top(8), 9);
    ck_assert_uint_eq(gpursa_cuda_class_top(11), 11);
    ck_assert_uint_eq(gpursa_cuda_class_top(100), 111);
    ck_assert_uint_eq(gpursa_cuda_class_top(GPURSA_CUDA_GRAPH_MAX), GPURSA_CUDA_GRAPH_MAX);
    ck_assert_uint_eq(gpursa_cuda_class(GPURSA_CUDA_GRAPH_MAX), GPURSA_CUDA_GRAPH_CLASSES - 1);
}
END_TEST

/* The CUDA launchers' load, in items on a 132-SM device: the same count on
 * such a device, more on fewer SMs and fewer on more (rounded up, so a
 * lone item is never a load of 0), and nothing that wraps. */
START_TEST(test_cuda_load_by_sms)
{
    ck_assert_uint_eq(gpursa_cuda_load(0, 132), 0);
    ck_assert_uint_eq(gpursa_cuda_load(1, 132), 1);
    ck_assert_uint_eq(gpursa_cuda_load(6000, 132), 6000);
    ck_assert_uint_eq(gpursa_cuda_load(6001, GPURSA_CUDA_REF_SMS), 6001);
    /* H100 PCIe (114 SMs): 5,181 items in flight count as 6,000, 5,182 as
     * 6,001 (RSA-2048's 2-lane kernel runs loads above 6,000) */
    ck_assert_uint_eq(gpursa_cuda_load(5181, 114), 6000);
    ck_assert_uint_eq(gpursa_cuda_load(5182, 114), 6001);
    ck_assert_uint_eq(gpursa_cuda_load(1, 114), 2);
    /* A100 (108), B200-like (148), T4 (40) */
    ck_assert_uint_eq(gpursa_cuda_load(2048, 108), 2504);
    ck_assert_uint_eq(gpursa_cuda_load(2048, 148), 1827);
    ck_assert_uint_eq(gpursa_cuda_load(1, 148), 1);
    ck_assert_uint_eq(gpursa_cuda_load(1024, 40), 3380);
    /* an unknown count leaves the load as it is; a huge one saturates */
    ck_assert_uint_eq(gpursa_cuda_load(777, 0), 777);
    ck_assert_uint_eq(gpursa_cuda_load(777, -1), 777);
    ck_assert_uint_eq(gpursa_cuda_load(UINT32_MAX, 1), UINT32_MAX);
    ck_assert_uint_eq(gpursa_cuda_load(UINT32_MAX / 132 + 1, 1), UINT32_MAX);
    ck_assert_uint_eq(gpursa_cuda_load(UINT32_MAX / 132, 1), (uint32_t)(UINT32_MAX / 132 * 132));
}
END_TEST

/* The COOP routing table: each size's kernel at the edges of its load
 * ranges, on devices with and without full-rate FP64, alone and under MPS;
 * every launch of a size finds a kernel of that size, and none that needs
 * FP64 runs on a device without it. */
#define PICK(bits, load, shared, fp64) gpursa_route_pick((bits), (load), (shared), (fp64))
START_TEST(test_cuda_routes)
{
    static const struct { int bits; gpursa_kernel k; int fp64; } kernels[] = {
        { 1024, GPURSA_KERNEL_1024, 0 },   { 2048, GPURSA_KERNEL_2048, 0 },
        { 2048, GPURSA_KERNEL_2048N, 0 },  { 2048, GPURSA_KERNEL_2048F, 1 },
        { 2048, GPURSA_KERNEL_2048F2, 1 }, { 3072, GPURSA_KERNEL_3072, 0 },
        { 3072, GPURSA_KERNEL_3072FN, 1 }, { 3072, GPURSA_KERNEL_3072FW, 1 },
        { 4096, GPURSA_KERNEL_4096, 0 },   { 4096, GPURSA_KERNEL_4096FN, 1 },
        { 4096, GPURSA_KERNEL_4096F, 1 },
    };
    static const uint32_t loads[] = { 1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 5999,
                                      6000, 6001, 16384, UINT32_MAX };
    static const int sizes[] = { 1024, 2048, 3072, 4096 };

    /* RSA-2048, alone with FP64: 2-limb lanes up to 1,024, FP64 4 lanes to
     * 6,000, 2 lanes above */
    ck_assert_int_eq(PICK(2048, 1, 0, 1), GPURSA_KERNEL_2048N);
    ck_assert_int_eq(PICK(2048, 1024, 0, 1), GPURSA_KERNEL_2048N);
    ck_assert_int_eq(PICK(2048, 1025, 0, 1), GPURSA_KERNEL_2048F);
    ck_assert_int_eq(PICK(2048, 6000, 0, 1), GPURSA_KERNEL_2048F);
    ck_assert_int_eq(PICK(2048, 6001, 0, 1), GPURSA_KERNEL_2048F2);
    /* under MPS the FP64 4-lane kernel at every load, never the narrowest */
    ck_assert_int_eq(PICK(2048, 1, 1, 1), GPURSA_KERNEL_2048F);
    ck_assert_int_eq(PICK(2048, 16384, 1, 1), GPURSA_KERNEL_2048F);
    /* without FP64: 2-limb lanes alone up to 1,024, else 4-limb lanes */
    ck_assert_int_eq(PICK(2048, 1024, 0, 0), GPURSA_KERNEL_2048N);
    ck_assert_int_eq(PICK(2048, 1025, 0, 0), GPURSA_KERNEL_2048);
    ck_assert_int_eq(PICK(2048, 1, 1, 0), GPURSA_KERNEL_2048);
    ck_assert_int_eq(PICK(2048, 16384, 0, 0), GPURSA_KERNEL_2048);
    /* RSA-3072: FP64 8 lanes up to 2,048, 3 lanes above and under MPS */
    ck_assert_int_eq(PICK(3072, 1, 0, 1), GPURSA_KERNEL_3072FN);
    ck_assert_int_eq(PICK(3072, 2048, 0, 1), GPURSA_KERNEL_3072FN);
    ck_assert_int_eq(PICK(3072, 2049, 0, 1), GPURSA_KERNEL_3072FW);
    ck_assert_int_eq(PICK(3072, 1, 1, 1), GPURSA_KERNEL_3072FW);
    ck_assert_int_eq(PICK(3072, 1, 1, 0), GPURSA_KERNEL_3072);
    ck_assert_int_eq(PICK(3072, 16384, 0, 0), GPURSA_KERNEL_3072);
    /* RSA-4096: FP64 8 lanes up to 2,048, 4 lanes above and under MPS */
    ck_assert_int_eq(PICK(4096, 1, 0, 1), GPURSA_KERNEL_4096FN);
    ck_assert_int_eq(PICK(4096, 2048, 0, 1), GPURSA_KERNEL_4096FN);
    ck_assert_int_eq(PICK(4096, 2049, 0, 1), GPURSA_KERNEL_4096F);
    ck_assert_int_eq(PICK(4096, 1, 1, 1), GPURSA_KERNEL_4096F);
    ck_assert_int_eq(PICK(4096, 1, 0, 0), GPURSA_KERNEL_4096);
    ck_assert_int_eq(PICK(4096, 1, 1, 0), GPURSA_KERNEL_4096);
    /* RSA-1024 and sizes without a table */
    ck_assert_int_eq(PICK(1024, 16384, 1, 1), GPURSA_KERNEL_1024);
    ck_assert_int_eq(PICK(1536, 1, 0, 1), GPURSA_KERNEL_COUNT_);
    ck_assert_int_eq(PICK(0, 1, 0, 0), GPURSA_KERNEL_COUNT_);

    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (size_t li = 0; li < sizeof(loads) / sizeof(loads[0]); li++)
            for (int shared = 0; shared < 2; shared++)
                for (int fp64 = 0; fp64 < 2; fp64++) {
                    gpursa_kernel k = PICK(sizes[si], loads[li], shared, fp64);
                    size_t ki = 0;
                    while (ki < sizeof(kernels) / sizeof(kernels[0]) && kernels[ki].k != k)
                        ki++;
                    ck_assert_msg(ki < sizeof(kernels) / sizeof(kernels[0]),
                                  "RSA-%d, load %u: no kernel", sizes[si], loads[li]);
                    ck_assert_int_eq(kernels[ki].bits, sizes[si]);
                    ck_assert_msg(fp64 || !kernels[ki].fp64, "RSA-%d, load %u: FP64 kernel without FP64",
                                  sizes[si], loads[li]);
                    ck_assert_msg(!shared || k != GPURSA_KERNEL_2048N, "2-limb lanes under MPS");
                }
    /* every row's fp64 flag says what its kernel needs */
    for (size_t i = 0; i < GPURSA_NROUTES; i++)
        for (size_t ki = 0; ki < sizeof(kernels) / sizeof(kernels[0]); ki++)
            if (kernels[ki].k == gpursa_routes[i].kernel) {
                ck_assert_int_eq(gpursa_routes[i].fp64, kernels[ki].fp64);
                ck_assert_int_eq(gpursa_routes[i].bits, kernels[ki].bits);
            }
}
END_TEST
#undef PICK

/* host_threads: the host backend runs that many worker threads (its
 * description says so), 0 one per online CPU, never more than
 * GPURSA_HOST_MAX_THREADS nor fewer than one. */
START_TEST(test_host_threads_as_opened)
{
    const gpursa_gpu_backend_ops *host = gpursa_gpu_backend(GPURSA_BACKEND_HOST);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int all = cpus < 1 ? 1 : cpus > GPURSA_HOST_MAX_THREADS ? GPURSA_HOST_MAX_THREADS : (int)cpus;
    static const int asked[] = {1, 3, 16, 0, 99, -4};
    char want[64];

    for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
        gpursa_gpu_open_params params = { .host_threads = asked[i] };
        gpursa_gpu_device *dev = NULL;
        int n = asked[i] == 0 ? all : asked[i] < 1 ? 1
                : asked[i] > GPURSA_HOST_MAX_THREADS ? GPURSA_HOST_MAX_THREADS : asked[i];

        ck_assert_int_eq(host->device_open(0, &params, &dev), GPURSA_GPU_OK);
        snprintf(want, sizeof(want), "host CPU, %d thread%s,", n, n == 1 ? "" : "s");
        ck_assert_msg(strstr(host->device_describe(dev), want) != NULL, "host_threads %d: %s",
                      asked[i], host->device_describe(dev));
        host->device_close(dev);
    }
}
END_TEST

/* The CUDA backend's status words fail closed: OK only for the word the
 * check stage writes, and only with the echo equal to the caller's
 * input; BADINPUT as the blinding stage writes it; the preset (its byte
 * in every byte, as the pack kernel writes it), zeroed memory, the blinding stage's word,
 * the item statuses' own values and random words: FAULT. */
START_TEST(test_cuda_status_word_fails_closed)
{
    uint32_t preset;
    memset(&preset, GPURSA_DEV_ST_PRESET_BYTE, sizeof(preset));
    ck_assert_uint_eq(preset, GPURSA_DEV_ST_PRESET);
    ck_assert_int_eq(gpursa_cuda_item_status(GPURSA_DEV_ST_OK, 1), GPURSA_ITEM_OK);
    ck_assert_int_eq(gpursa_cuda_item_status(GPURSA_DEV_ST_OK, 0), GPURSA_ITEM_FAULT);
    ck_assert_int_eq(gpursa_cuda_item_status(GPURSA_DEV_ST_BADINPUT, 1), GPURSA_ITEM_BADINPUT);
    ck_assert_int_eq(gpursa_cuda_item_status(GPURSA_DEV_ST_BADINPUT, 0), GPURSA_ITEM_FAULT);
    const uint32_t faults[] = {preset, 0, GPURSA_DEV_ST_BLINDED, GPURSA_DEV_ST_UNBLINDED, (uint32_t)GPURSA_ITEM_OK,
                               (uint32_t)GPURSA_ITEM_FAULT, (uint32_t)GPURSA_ITEM_BADINPUT,
                               (uint32_t)GPURSA_ITEM_PENDING, 0xffffffffu, GPURSA_DEV_ST_OK ^ 1u,
                               GPURSA_DEV_ST_OK ^ 0x80000000u, GPURSA_DEV_ST_BADINPUT ^ 0x100u};
    for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
        for (int echo = 0; echo < 2; echo++)
            ck_assert_msg(gpursa_cuda_item_status(faults[i], echo) == GPURSA_ITEM_FAULT, "word %#x, echo %d",
                          (unsigned)faults[i], echo);
    for (int i = 0; i < 1000; i++) {
        uint32_t w = (uint32_t)gmp_urandomb_ui(gt_rand, 32);
        int want = w == GPURSA_DEV_ST_OK ? GPURSA_ITEM_OK
                   : w == GPURSA_DEV_ST_BADINPUT ? GPURSA_ITEM_BADINPUT : GPURSA_ITEM_FAULT;
        ck_assert_int_eq(gpursa_cuda_item_status(w, 1), want);
    }
}
END_TEST

static Suite *make_rsa_op_suite(void)
{
    Suite *s = suite_create("gpu_rsa_op");
    TCase *tc = tcase_create("rsa_op");
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, test_op_random_and_edges, 0, 8);
    tcase_add_loop_test(tc, test_op_small_e_extreme_primes, 0, 8);
    tcase_add_loop_test(tc, test_op_p_gt_q_64bit_e_unequal_lengths, 0, 8);
    tcase_add_loop_test(tc, test_op_badinput_and_fault, 0, 8);
    tcase_add_loop_test(tc, test_key_supported, 0, 4);
    tcase_add_loop_test(tc, test_keyconv_constants, 0, 4);
    tcase_add_test(tc, test_names_and_strings);
    tcase_add_test(tc, test_cuda_load_by_sms);
    tcase_add_test(tc, test_cuda_size_classes);
    tcase_add_test(tc, test_cuda_routes);
    tcase_add_test(tc, test_host_threads_as_opened);
    tcase_add_test(tc, test_cuda_status_word_fails_closed);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *make_backend_suite(void)
{
    Suite *s = suite_create("gpu_backend");
    TCase *tc = tcase_create("backend");
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, test_backend_batch_mixed_keys, 0, 20);
    tcase_add_loop_test(tc, test_backend_small_batches_replayed, 0, 4);
    tcase_add_test(tc, test_backend_refusals);
    tcase_add_test(tc, test_backend_device_key_wiped_on_free);
    tcase_add_loop_test(tc, test_backend_cuda_fault_items_fail_closed, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    gt_init();
    /* keys before the forks, so each test does not redo the prime search */
    for (int i = 0; i < 4; i++)
        for (int shape = 0; shape < 3; shape++)
            (void)get_key(i, shape);
    ops = gt_backend(&backend_skip);
    const char *which = getenv("GPURSA_TEST_BACKEND");
    int cuda = which != NULL && strcmp(which, "cuda") == 0;
    if (cuda && backend_skip) {
        fprintf(stderr, "# GPURSA_TEST_BACKEND=cuda: no CUDA backend or device, skipping\n");
        return 77;
    }
    /* On the GPU the header suite has already run on the host build; the
     * backend suite is what changes. */
    SRunner *sr = srunner_create(make_backend_suite());
    if (!cuda)
        srunner_add_suite(sr, make_rsa_op_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
