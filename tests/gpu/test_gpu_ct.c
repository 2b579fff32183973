/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_ct.c - constant-time check of the host build of the kernel
 * arithmetic, meant to run under valgrind memcheck (test_gpu_ct.sh).
 *
 * The secrets (p, q, dp, dq, qinv and the constants derived from p and q,
 * the input, the blinding factors; for gpu/gpursa_mont_rows.h the operands,
 * modulus and m0inv) are marked undefined with
 * VALGRIND_MAKE_MEM_UNDEFINED.  Memcheck then reports any conditional jump
 * or memory address that depends on them, and --error-exitcode makes that a
 * failure.  Results are marked defined again before they are compared with
 * GMP, so the comparison itself is not reported.  Without valgrind the
 * client requests do nothing and the program just checks the results.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu/gpursa_keyconv.h"
#include "gpu/gpursa_rsa_op.h"
#include "gpu/gpursa_mont_rows.h"
#include "tests/gpu/gpu_ct.h"
#include "tests/gpu/gpu_testutil.h"

static int failures;

static void expect(int ok, const char *what, int bits, int variant)
{
    if (!ok) {
        fprintf(stderr, "FAIL %s %d bits %s\n", what, bits, gpursa_variant_name(variant));
        failures++;
    }
}

/* The half-size exponentiation alone: base and exponent and modulus secret. */
static void ct_exp(gt_rsa_key *k, const gpursa_rsa_keydata *kd0, int variant)
{
    gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
    int hl = kd0->hl;
    uint32_t x[GPURSA_RSA_MAX_HALF], r[GPURSA_RSA_MAX_HALF];
    uint32_t *table = malloc(sizeof(uint32_t) * GPURSA_MONT_TABLE_WORDS(hl));
    mpz_t base, want, got;
    mpz_inits(base, want, got, NULL);
    memcpy(kd, kd0, sizeof(*kd));
    mpz_urandomm(base, gt_rand, k->p);
    /* base in Montgomery form */
    mpz_mul_2exp(want, base, 32 * hl);
    mpz_mod(want, want, k->p);
    gt_to_limbs(x, hl, want);
    gt_mark_key_secret(kd);
    SECRET(x, sizeof(uint32_t) * hl);
    gpursa_mont_exp(r, x, kd->dp, 32 * hl, kd->p, kd->p0inv, kd->p_one, hl, variant, table);
    gpursa_mont_from(r, r, kd->p, kd->p0inv, hl, variant);
    PUBLIC(r, sizeof(uint32_t) * hl);
    gt_from_limbs(got, r, hl);
    mpz_powm(want, base, k->dp, k->p);
    expect(mpz_cmp(got, want) == 0, "mont_exp", k->bits, variant);
    mpz_clears(base, want, got, NULL);
    free(table);
    free(kd);
}

/* The whole operation: key secrets, input and blinding factors secret. */
static void ct_op(gt_rsa_key *k, const gpursa_rsa_keydata *kd0, int variant, int fault_bit)
{
    gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
    int nl = kd0->nl;
    uint32_t c[GPURSA_RSA_MAX_LIMBS], r[GPURSA_RSA_MAX_LIMBS];
    uint32_t ri[GPURSA_RSA_MAX_LIMBS], out[GPURSA_RSA_MAX_LIMBS];
    mpz_t x, rr, rinv, want, got;
    mpz_inits(x, rr, rinv, want, got, NULL);
    memcpy(kd, kd0, sizeof(*kd));
    mpz_urandomm(x, gt_rand, k->n);
    do
        mpz_urandomm(rr, gt_rand, k->n);
    while (!mpz_invert(rinv, rr, k->n));
    gt_to_limbs(c, nl, x);
    gt_to_limbs(r, nl, rr);
    gt_to_limbs(ri, nl, rinv);
    gt_mark_key_secret(kd);
    SECRET(c, sizeof(uint32_t) * nl);
    SECRET(r, sizeof(uint32_t) * nl);
    SECRET(ri, sizeof(uint32_t) * nl);
    int st = gpursa_rsa_op(kd, c, r, ri, out, nl, variant, fault_bit);
    PUBLIC(&st, sizeof(st));
    PUBLIC(out, sizeof(uint32_t) * nl);
    gt_from_limbs(got, out, nl);
    mpz_powm(want, x, k->d, k->n);
    if (fault_bit < 0)
        expect(st == GPURSA_ITEM_OK && mpz_cmp(got, want) == 0, "rsa_op", k->bits, variant);
    else
        expect(st == GPURSA_ITEM_FAULT && mpz_sgn(got) == 0, "rsa_op fault", k->bits, variant);
    mpz_clears(x, rr, rinv, want, got, NULL);
    free(kd);
}

/* gpu/gpursa_mont_rows.h, the arithmetic of the kernels' rolled-row and
 * 64-bit-product forms (IMAD above 32 limbs, XMAD, FAST), at a CRT half of n
 * limbs: operands, modulus, m0inv and the value reduced are secret.  One call
 * of each function is enough: memcheck reports a branch or an address that
 * depends on undefined bits whatever their values. */
static void rows_expect(const uint32_t *r, int len, const mpz_t want, const char *what, int n)
{
    mpz_t got;
    mpz_init(got);
    PUBLIC(r, sizeof(uint32_t) * len);
    gt_from_limbs(got, r, len);
    if (mpz_cmp(got, want) != 0) {
        fprintf(stderr, "FAIL %s n=%d\n", what, n);
        failures++;
    }
    mpz_clear(got);
}

static void ct_rows(int n)
{
    uint32_t m[GPURSA_MONT_MAX_LIMBS], a[GPURSA_MONT_MAX_LIMBS], b[GPURSA_MONT_MAX_LIMBS];
    uint32_t x[2 * GPURSA_MONT_MAX_LIMBS], t[2 * GPURSA_MONT_MAX_LIMBS];
    uint32_t r[2 * GPURSA_MONT_MAX_LIMBS], m0inv;
    mpz_t zm, za, zb, zx, rinv, mul, sqr, red, prod, psqr;
    mpz_inits(zm, za, zb, zx, rinv, mul, sqr, red, prod, psqr, NULL);
    /* modulus odd with its top bit set, a, b < m, x < m R */
    mpz_urandomb(zm, gt_rand, 32 * n);
    mpz_setbit(zm, 32 * n - 1);
    mpz_setbit(zm, 0);
    mpz_urandomm(za, gt_rand, zm);
    mpz_urandomm(zb, gt_rand, zm);
    mpz_mul_2exp(zx, zm, 32 * n);
    mpz_urandomm(zx, gt_rand, zx);
    gt_to_limbs(m, n, zm);
    gt_to_limbs(a, n, za);
    gt_to_limbs(b, n, zb);
    gt_to_limbs(x, 2 * n, zx);
    m0inv = gpursa_mont_m0inv(m[0]);
    /* expected: a b / R, a^2 / R, x / R (mod m), a b, a^2 */
    mpz_set_ui(rinv, 0);
    mpz_setbit(rinv, 32 * n);
    if (!mpz_invert(rinv, rinv, zm))
        abort();
    mpz_mul(prod, za, zb);
    mpz_mul(mul, prod, rinv);
    mpz_mod(mul, mul, zm);
    mpz_mul(psqr, za, za);
    mpz_mul(sqr, psqr, rinv);
    mpz_mod(sqr, sqr, zm);
    mpz_mul(red, zx, rinv);
    mpz_mod(red, red, zm);
    SECRET(m, sizeof(uint32_t) * n);
    SECRET(a, sizeof(uint32_t) * n);
    SECRET(b, sizeof(uint32_t) * n);
    SECRET(x, sizeof(uint32_t) * 2 * n);
    SECRET(&m0inv, sizeof(m0inv));

    gpursa_rows_mont_mul_imad(r, a, b, m, m0inv, n);
    rows_expect(r, n, mul, "rows_mont_mul_imad", n);
    gpursa_rows_mont_mul_xmad(r, a, b, m, m0inv, n);
    rows_expect(r, n, mul, "rows_mont_mul_xmad", n);
    gpursa_wide_mont_mul(r, a, b, m, m0inv, n);
    rows_expect(r, n, mul, "wide_mont_mul", n);
    gpursa_wide_rows_mont_mul(r, a, b, m, m0inv, n);
    rows_expect(r, n, mul, "wide_rows_mont_mul", n);
    gpursa_wide_mont_sqr(r, a, m, m0inv, n);
    rows_expect(r, n, sqr, "wide_mont_sqr", n);
    /* through the dispatcher gpursa_rows_mont_mul, as the kernels call it */
    gpursa_rows_mont_redc(r, x, m, m0inv, n, GPURSA_VARIANT_IMAD);
    rows_expect(r, n, red, "rows_mont_redc imad", n);
    gpursa_rows_mont_redc(r, x, m, m0inv, n, GPURSA_VARIANT_XMAD);
    rows_expect(r, n, red, "rows_mont_redc xmad", n);
    memcpy(t, x, sizeof(uint32_t) * 2 * n); /* destroyed; the copy stays secret */
    gpursa_wide_mont_redc(r, t, m, m0inv, n);
    rows_expect(r, n, red, "wide_mont_redc", n);
    gpursa_rows_mp_mul(r, a, b, n);
    rows_expect(r, 2 * n, prod, "rows_mp_mul", n);
    gpursa_wide_mp_sqr(r, a, n);
    rows_expect(r, 2 * n, psqr, "wide_mp_sqr", n);

    gpursa_mp_wipe(t, 2 * n);
    mpz_clears(zm, za, zb, zx, rinv, mul, sqr, red, prod, psqr, NULL);
}

int main(int argc, char **argv)
{
    /* sizes to run: default 1024 and 2048 (valgrind is ~50x slower) */
    int sizes[4] = {1024, 2048, 0, 0};
    int nsizes = 2;
    if (argc > 1) {
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 4; i++)
            sizes[nsizes++] = atoi(argv[i]);
    }
    gt_init();
    /* the rows arithmetic at every CRT half size the kernels run: cheap, so
     * whatever RSA sizes were asked for */
    for (int n = 16; n <= 64; n += 16)
        ct_rows(n);
    for (int s = 0; s < nsizes; s++) {
        gt_rsa_key k;
        gpursa_rsa_keydata *kd = malloc(sizeof(*kd));
        gt_rsa_keygen(&k, sizes[s], 65537, 0);
        if (gpursa_keyconv_load(kd, &k.km) != GPURSA_GPU_OK) {
            fprintf(stderr, "key load failed\n");
            return 1;
        }
        for (int v = GPURSA_VARIANT_IMAD; v <= GPURSA_VARIANT_XMAD; v++) {
            ct_exp(&k, kd, v);
            ct_op(&k, kd, v, -1);
            ct_op(&k, kd, v, 5);
        }
        gpursa_keyconv_cleanse(kd, sizeof(*kd));
        free(kd);
        gt_rsa_key_free(&k);
    }
    if (failures == 0)
        printf("constant-time runs completed, results correct%s\n",
               RUNNING_ON_VALGRIND ? " (under valgrind)" : "");
    return failures == 0 ? 0 : 1;
}
