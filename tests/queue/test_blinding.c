/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The blinding pairs of queue/gpursa_blinding.c (gpursa_blind_batch), checked
 * with BN independently of the code under test: every r in [1, n), r * rinv
 * == 1 mod n, no r twice, exactly len * k bytes written, r spread over
 * [1, n) as a uniform draw would be, both buffers wiped when a call fails.
 *
 * Moduli: RSA moduli (two primes of half the size) and primes whose first
 * byte is 0x80 or 0xff (the edge cases of drawing below n with a masked
 * first byte) at 1024, 2048, 3072 and 4096 bits.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

#define GUARD 64                 /* bytes checked on each side of a buffer */
#define GUARD_BYTE 0xa5

/* A prime of `bits` bits whose first byte is top (the next prime up from a
 * random odd number with that first byte). */
static BIGNUM *prime_with_top(int bits, unsigned top, BN_CTX *ctx)
{
    BIGNUM *p = BN_new();

    ck_assert_ptr_nonnull(p);
    ck_assert(BN_rand(p, bits - 8, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ODD));
    for (int i = 0; i < 8; i++)
        if ((top >> i) & 1)
            ck_assert(BN_set_bit(p, bits - 8 + i));
    for (;;) {
        int r = BN_check_prime(p, ctx, NULL);

        ck_assert_int_ge(r, 0);
        if (r == 1)
            break;
        ck_assert(BN_add_word(p, 2));
    }
    ck_assert_int_eq(BN_num_bits(p), bits);
    return p;
}

static BIGNUM *rsa_modulus(int bits, BN_CTX *ctx)
{
    BIGNUM *p = BN_new(), *q = BN_new(), *n = BN_new();

    ck_assert(p != NULL && q != NULL && n != NULL);
    ck_assert(BN_generate_prime_ex(p, bits / 2, 0, NULL, NULL, NULL));
    ck_assert(BN_generate_prime_ex(q, bits - bits / 2, 0, NULL, NULL, NULL));
    ck_assert(BN_mul(n, p, q, ctx));
    BN_free(p);
    BN_free(q);
    return n;
}

/* The fields of a queue key that gpursa_blind_batch reads (as
 * gpursa_queue_key_new sets them); takes n. */
static void key_set(gpursa_queue_key *qk, BIGNUM *n, BN_CTX *ctx)
{
    unsigned char *nb;

    memset(qk, 0, sizeof(*qk));
    qk->n = n;
    qk->len = (size_t)BN_num_bytes(n);
    qk->bits = BN_num_bits(n);
    ck_assert_ptr_nonnull(nb = malloc(qk->len));
    ck_assert_int_eq(BN_bn2binpad(n, nb, (int)qk->len), (int)qk->len);
    qk->mat = nb;
    qk->n_bytes = nb;
    qk->n_top = nb[0];
    ck_assert_ptr_nonnull(qk->mont = BN_MONT_CTX_new());
    ck_assert(BN_MONT_CTX_set(qk->mont, n, ctx));
}

static void key_free(gpursa_queue_key *qk)
{
    BN_free(qk->n);
    BN_MONT_CTX_free(qk->mont);
    free(qk->mat);
}

/* A runner's scratch for the call (a BN_CTX) and the two
 * buffers of k pairs with guard bytes around them. */
typedef struct {
    size_t k, len;
    BN_CTX *ctx;
    unsigned char *rmem, *rinvmem;   /* GUARD + k * len + GUARD */
    unsigned char *r, *rinv;
} pairs;

static void pairs_new(pairs *p, size_t k, size_t len)
{
    p->k = k;
    p->len = len;
    ck_assert_ptr_nonnull(p->ctx = BN_CTX_secure_new());
    ck_assert_ptr_nonnull(p->rmem = malloc(k * len + 2 * GUARD));
    ck_assert_ptr_nonnull(p->rinvmem = malloc(k * len + 2 * GUARD));
    memset(p->rmem, GUARD_BYTE, k * len + 2 * GUARD);
    memset(p->rinvmem, GUARD_BYTE, k * len + 2 * GUARD);
    p->r = p->rmem + GUARD;
    p->rinv = p->rinvmem + GUARD;
}

static void pairs_free(pairs *p)
{
    BN_CTX_free(p->ctx);
    free(p->rmem);
    free(p->rinvmem);
}

static int pairs_make(pairs *p, gpursa_queue_key *qk)
{
    return gpursa_blind_batch(qk, p->k, p->r, p->rinv, p->ctx);
}

static void assert_guards_intact(const pairs *p)
{
    const unsigned char *m[2] = { p->rmem, p->rinvmem };

    for (int b = 0; b < 2; b++)
        for (size_t i = 0; i < GUARD; i++) {
            ck_assert_uint_eq(m[b][i], GUARD_BYTE);
            ck_assert_uint_eq(m[b][GUARD + p->k * p->len + i], GUARD_BYTE);
        }
}

static int cmp_len;
static int cmp_bytes(const void *a, const void *b)
{
    return memcmp(a, b, (size_t)cmp_len);
}

/* Every pair: 1 <= r < n, 1 <= rinv < n, r * rinv == 1 mod n; no r twice. */
static void assert_pairs_valid(const pairs *p, const gpursa_queue_key *qk, BN_CTX *ctx)
{
    BIGNUM *r = BN_new(), *ri = BN_new(), *prod = BN_new();
    unsigned char *sorted = malloc(p->k * p->len);

    ck_assert(r != NULL && ri != NULL && prod != NULL && sorted != NULL);
    assert_guards_intact(p);
    for (size_t i = 0; i < p->k; i++) {
        ck_assert_ptr_nonnull(BN_bin2bn(p->r + i * p->len, (int)p->len, r));
        ck_assert_ptr_nonnull(BN_bin2bn(p->rinv + i * p->len, (int)p->len, ri));
        ck_assert_msg(!BN_is_zero(r) && BN_cmp(r, qk->n) < 0, "r[%zu] not in [1, n)", i);
        ck_assert_msg(!BN_is_zero(ri) && BN_cmp(ri, qk->n) < 0, "rinv[%zu] not in [1, n)", i);
        ck_assert(BN_mod_mul(prod, r, ri, qk->n, ctx));
        ck_assert_msg(BN_is_one(prod), "r[%zu] * rinv[%zu] != 1 mod n (%d bits, %zu pairs)",
                      i, i, qk->bits, p->k);
    }
    memcpy(sorted, p->r, p->k * p->len);
    cmp_len = (int)p->len;
    qsort(sorted, p->k, p->len, cmp_bytes);
    for (size_t i = 1; i < p->k; i++)
        ck_assert_msg(memcmp(sorted + (i - 1) * p->len, sorted + i * p->len, p->len) != 0,
                      "the same r twice");
    BN_free(r);
    BN_free(ri);
    BN_free(prod);
    OPENSSL_cleanse(sorted, p->k * p->len);
    free(sorted);
}

static const int sizes[] = { 1024, 2048, 3072, 4096 };
static const size_t chunks[] = { 1, 2, 7, 512 };

/* The moduli of one size: kind 0 an RSA modulus, 1 a prime 0x80.., 2 a prime 0xff.. */
static BIGNUM *modulus(int bits, int kind, BN_CTX *ctx)
{
    return kind == 0 ? rsa_modulus(bits, ctx) : prime_with_top(bits, kind == 1 ? 0x80 : 0xff,
                                                               ctx);
}

START_TEST(test_blind_pairs_are_inverse_pairs_below_n_and_distinct)
{
    int bits = sizes[_i / 3], kind = _i % 3;
    BN_CTX *ctx = BN_CTX_new();
    gpursa_queue_key qk;

    ck_assert_ptr_nonnull(ctx);
    key_set(&qk, modulus(bits, kind, ctx), ctx);
    ck_assert_uint_eq(qk.len, (size_t)bits / 8);
    if (kind != 0)
        ck_assert_uint_eq(qk.n_top, kind == 1 ? 0x80 : 0xff);
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        pairs p;

        pairs_new(&p, chunks[c], qk.len);
        ck_assert_msg(pairs_make(&p, &qk), "gpursa_blind_batch failed (%d bits, %zu pairs)",
                      bits, chunks[c]);
        assert_pairs_valid(&p, &qk, ctx);
        /* A second call on the same buffers: valid again, and fresh. */
        {
            unsigned char *first = malloc(p.k * p.len);

            ck_assert_ptr_nonnull(first);
            memcpy(first, p.r, p.k * p.len);
            ck_assert(pairs_make(&p, &qk));
            assert_pairs_valid(&p, &qk, ctx);
            for (size_t i = 0; i < p.k; i++)
                ck_assert(memcmp(first + i * p.len, p.r + i * p.len, p.len) != 0);
            free(first);
        }
        pairs_free(&p);
    }
    key_free(&qk);
    BN_CTX_free(ctx);
}
END_TEST

/*
 * r and rinv spread over [1, n) as uniform draws: of 4096 values, the share
 * above n/2, the share of odd values and the mean of r/n each within about
 * 6 standard deviations of a uniform draw's (a masked first byte that lets
 * values pile up low, a stuck bit, or r taken from a narrower range fail).
 * In groups of 512, and one by one, where r is the DRBG's draw itself.
 */
START_TEST(test_blind_values_spread_over_the_range)
{
    int kind = _i % 3;
    const size_t total = 4096, k = _i < 3 ? 512 : 1, calls = total / k;
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *half = BN_new(), *v = BN_new(), *q = BN_new(), *rem = BN_new();
    BIGNUM *scale = BN_new();
    gpursa_queue_key qk;
    pairs p;
    size_t above[2] = { 0, 0 }, odd[2] = { 0, 0 };
    double mean[2] = { 0, 0 };

    ck_assert(ctx != NULL && half != NULL && v != NULL && q != NULL && rem != NULL
              && scale != NULL);
    key_set(&qk, modulus(2048, kind, ctx), ctx);
    ck_assert(BN_rshift1(half, qk.n));
    ck_assert(BN_set_word(scale, 1u << 20));
    pairs_new(&p, k, qk.len);
    for (size_t c = 0; c < calls; c++) {
        ck_assert(pairs_make(&p, &qk));
        assert_guards_intact(&p);
        for (size_t i = 0; i < k; i++) {
            const unsigned char *b[2] = { p.r + i * p.len, p.rinv + i * p.len };

            for (int w = 0; w < 2; w++) {
                ck_assert_ptr_nonnull(BN_bin2bn(b[w], (int)p.len, v));
                above[w] += BN_cmp(v, half) > 0;
                odd[w] += BN_is_odd(v);
                /* floor(v * 2^20 / n) / 2^20: v/n to 20 bits */
                ck_assert(BN_mul(q, v, scale, ctx));
                ck_assert(BN_div(q, rem, q, qk.n, ctx));
                mean[w] += (double)BN_get_word(q) / (double)(1u << 20);
            }
        }
    }
    for (int w = 0; w < 2; w++) {
        double share = (double)above[w] / (double)total, o = (double)odd[w] / (double)total;
        double m = mean[w] / (double)total;

        /* sd of a share: 0.5 / sqrt(4096) = 0.0078; of the mean: 0.0045 */
        ck_assert_msg(share > 0.453 && share < 0.547, "%s above n/2: %.4f",
                      w == 0 ? "r" : "rinv", share);
        ck_assert_msg(o > 0.453 && o < 0.547, "%s odd: %.4f", w == 0 ? "r" : "rinv", o);
        ck_assert_msg(m > 0.473 && m < 0.527, "%s mean/n: %.4f", w == 0 ? "r" : "rinv", m);
    }
    pairs_free(&p);
    key_free(&qk);
    BN_free(half);
    BN_free(v);
    BN_free(q);
    BN_free(rem);
    BN_free(scale);
    BN_CTX_free(ctx);
}
END_TEST

/* A modulus with the factor 3: a third of the draws are not invertible, so
 * the group's inversion fails; the call says so and leaves both buffers
 * zeroed (no half-made pairs, no secrets), guards untouched. An even modulus
 * is refused the same way. */
START_TEST(test_blind_failure_wipes_both_buffers)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *n = BN_new(), *p = BN_new();
    gpursa_queue_key qk;
    pairs pr;
    int failed = 0;

    ck_assert(ctx != NULL && n != NULL && p != NULL);
    ck_assert(BN_generate_prime_ex(p, 2046, 0, NULL, NULL, NULL));
    ck_assert(BN_mul_word(p, 3));
    ck_assert(BN_copy(n, p));
    key_set(&qk, n, ctx);
    pairs_new(&pr, 64, qk.len);
    /* 64 draws all prime to 3: probability (2/3)^64 per call. */
    for (int t = 0; t < 4; t++) {
        if (!pairs_make(&pr, &qk)) {
            failed++;
            for (size_t i = 0; i < pr.k * pr.len; i++) {
                ck_assert_uint_eq(pr.r[i], 0);
                ck_assert_uint_eq(pr.rinv[i], 0);
            }
            assert_guards_intact(&pr);
        }
    }
    ck_assert_int_ge(failed, 3);
    ERR_clear_error();
    pairs_free(&pr);
    key_free(&qk);

    /* even n: refused before anything is written */
    ck_assert_ptr_nonnull(n = BN_new());
    ck_assert(BN_rand(n, 2048, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY));
    ck_assert(BN_clear_bit(n, 0));
    memset(&qk, 0, sizeof(qk));
    qk.n = n;
    qk.len = (size_t)BN_num_bytes(n);
    {
        unsigned char nb[256];

        ck_assert_int_eq(BN_bn2binpad(n, nb, 256), 256);
        qk.n_bytes = nb;
        qk.n_top = nb[0];
        pairs_new(&pr, 4, qk.len);
        ck_assert(!pairs_make(&pr, &qk));
        assert_guards_intact(&pr);
        pairs_free(&pr);
    }
    BN_free(n);
    BN_free(p);
    BN_CTX_free(ctx);
}
END_TEST

/* No pairs asked for: success, nothing touched. */
START_TEST(test_blind_zero_pairs_is_a_no_op)
{
    BN_CTX *ctx = BN_CTX_new();
    gpursa_queue_key qk;
    unsigned char r[8], rinv[8];

    ck_assert_ptr_nonnull(ctx);
    key_set(&qk, rsa_modulus(1024, ctx), ctx);
    memset(r, GUARD_BYTE, sizeof(r));
    memset(rinv, GUARD_BYTE, sizeof(rinv));
    ck_assert(gpursa_blind_batch(&qk, 0, r, rinv, ctx));
    for (size_t i = 0; i < sizeof(r); i++)
        ck_assert(r[i] == GUARD_BYTE && rinv[i] == GUARD_BYTE);
    key_free(&qk);
    BN_CTX_free(ctx);
}
END_TEST

static Suite *blinding_suite(void)
{
    Suite *s = suite_create("blinding");
    TCase *tc = tcase_create("pairs");

    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_blind_pairs_are_inverse_pairs_below_n_and_distinct, 0,
                        (int)(3 * sizeof(sizes) / sizeof(sizes[0])));
    tcase_add_loop_test(tc, test_blind_values_spread_over_the_range, 0, 6);
    tcase_add_test(tc, test_blind_failure_wipes_both_buffers);
    tcase_add_test(tc, test_blind_zero_pairs_is_a_no_op);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(blinding_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
