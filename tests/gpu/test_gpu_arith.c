/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gpu_arith.c - the arithmetic of gpu/gpursa_mont.h against GMP for
 * every limb count gpursa uses and both variants: multiplication, squaring,
 * Montgomery reduction, multiplication and squaring, fixed-window and public
 * exponentiation, on edge-case and random operands and moduli; and the
 * rolled-row and 64-bit-product forms of gpu/gpursa_mont_rows.h at every CRT
 * half size the kernels run (TCase "rows").
 *
 * Built three times: test_gpu_arith (the host code paths, 64-bit limbs for
 * IMAD), test_gpu_arith_host32 (-DGPURSA_MONT_NO_HOST64: the portable
 * 32-bit host code) and test_gpu_arith_chains (-DGPURSA_MONT_EMULATE_DEVICE:
 * the device carry-chain code with an emulated carry flag, so the algorithm
 * the GPU runs is checked here too).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include "gpu/gpursa_mont.h"
#include "gpu/gpursa_mont_rows.h"
#include "tests/gpu/gpu_testutil.h"

static const int sizes[] = {16, 32, 48, 64, 96, 128};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
static const int variants[] = {GPURSA_VARIANT_IMAD, GPURSA_VARIANT_XMAD};

/* Per size: moduli (edge shapes + random) x operands (edges + random).
 * GPURSA_TEST_SCALE divides the random counts (gt_random_cases), never the
 * edge cases: sanitizer builds in CI run the same shapes, fewer of them. */
static int random_moduli = 4, random_operands = 8, random_exponents = 5;
#define RANDOM_MODULI random_moduli
#define RANDOM_OPERANDS random_operands

typedef struct {
    int n, variant;
    mpz_t m, rinv, a, b, want, got, tmp;
    uint32_t lm[GPURSA_MONT_MAX_LIMBS], la[GPURSA_MONT_MAX_LIMBS], lb[GPURSA_MONT_MAX_LIMBS];
    uint32_t lr[2 * GPURSA_MONT_MAX_LIMBS], lt[2 * GPURSA_MONT_MAX_LIMBS];
    uint32_t m0inv;
} ctx;

static void ctx_init(ctx *c, int n, int variant)
{
    c->n = n;
    c->variant = variant;
    mpz_inits(c->m, c->rinv, c->a, c->b, c->want, c->got, c->tmp, NULL);
}
static void ctx_clear(ctx *c)
{
    mpz_clears(c->m, c->rinv, c->a, c->b, c->want, c->got, c->tmp, NULL);
}
/* limbs, m0inv and R^-1 of the modulus c->m */
static void ctx_set_modulus(ctx *c)
{
    gt_to_limbs(c->lm, c->n, c->m);
    c->m0inv = gpursa_mont_m0inv(c->lm[0]);
    mpz_set_ui(c->rinv, 1);
    mpz_mul_2exp(c->rinv, c->rinv, 32 * c->n);
    ck_assert(mpz_invert(c->rinv, c->rinv, c->m));
}
static void ctx_modulus(ctx *c, int k)
{
    gt_modulus(c->m, k, c->n);
    ctx_set_modulus(c);
}
static void ctx_operands(ctx *c, int ka, int kb)
{
    gt_operand(c->a, ka, c->m, c->n);
    gt_operand(c->b, kb, c->m, c->n);
    gt_to_limbs(c->la, c->n, c->a);
    gt_to_limbs(c->lb, c->n, c->b);
}
/* want = x * R^-1 mod m */
static void mont_expect(ctx *c, const mpz_t x)
{
    mpz_mul(c->want, x, c->rinv);
    mpz_mod(c->want, c->want, c->m);
}
static void check_equal(ctx *c, const uint32_t *r, int len, const char *what, int km, int ka,
                        int kb)
{
    gt_from_limbs(c->got, r, len);
    if (mpz_cmp(c->got, c->want) != 0)
        ck_abort_msg("%s n=%d variant=%s modulus#%d operands#%d,#%d: wrong result", what, c->n,
                     gpursa_variant_name(c->variant), km, ka, kb);
}

/* Every pair of edge operands, then random pairs, for every modulus. */
#define NPAIRS (GT_EDGE_COUNT * GT_EDGE_COUNT + RANDOM_OPERANDS)
#define FOR_CASES(c)                                                        \
    for (int km = 0; km < GT_MOD_EDGE_COUNT + RANDOM_MODULI; km++)          \
        for (int pi = 0; pi < NPAIRS && (pi > 0 || (ctx_modulus(c, km), 1)); pi++) \
            for (int ka = pi < GT_EDGE_COUNT * GT_EDGE_COUNT ? pi / GT_EDGE_COUNT : GT_EDGE_COUNT + pi, \
                     kb = pi < GT_EDGE_COUNT * GT_EDGE_COUNT ? pi % GT_EDGE_COUNT : GT_EDGE_COUNT + pi + 1, \
                     once = (ctx_operands(c, ka, kb), 1);                   \
                 once; once = 0)

static void run_mul(int n, int v)
{
    ctx c;
    ctx_init(&c, n, v);
    FOR_CASES(&c) {
        gpursa_mp_mul(c.lr, c.la, c.lb, n, v);
        mpz_mul(c.want, c.a, c.b);
        check_equal(&c, c.lr, 2 * n, "mp_mul", km, ka, kb);
        gpursa_mp_sqr(c.lr, c.la, n, v);
        mpz_mul(c.want, c.a, c.a);
        check_equal(&c, c.lr, 2 * n, "mp_sqr", km, ka, kb);
    }
    /* operands that are not reduced: full 32n-bit all-ones squares */
    mpz_set_ui(c.a, 1);
    mpz_mul_2exp(c.a, c.a, 32 * n);
    mpz_sub_ui(c.a, c.a, 1);
    gt_to_limbs(c.la, n, c.a);
    gpursa_mp_sqr(c.lr, c.la, n, v);
    mpz_mul(c.want, c.a, c.a);
    check_equal(&c, c.lr, 2 * n, "mp_sqr all-ones", -1, -1, -1);
    gpursa_mp_mul(c.lr, c.la, c.la, n, v);
    check_equal(&c, c.lr, 2 * n, "mp_mul all-ones", -1, -1, -1);
    ctx_clear(&c);
}

static void run_mont(int n, int v)
{
    ctx c;
    ctx_init(&c, n, v);
    FOR_CASES(&c) {
        gpursa_mont_mul(c.lr, c.la, c.lb, c.lm, c.m0inv, n, v);
        mpz_mul(c.tmp, c.a, c.b);
        mont_expect(&c, c.tmp);
        check_equal(&c, c.lr, n, "mont_mul", km, ka, kb);
        /* aliasing r == a */
        gpursa_mp_copy(c.lt, c.la, n);
        gpursa_mont_mul(c.lt, c.lt, c.lb, c.lm, c.m0inv, n, v);
        check_equal(&c, c.lt, n, "mont_mul r==a", km, ka, kb);
        gpursa_mont_sqr(c.lr, c.la, c.lm, c.m0inv, n, v);
        mpz_mul(c.tmp, c.a, c.a);
        mont_expect(&c, c.tmp);
        check_equal(&c, c.lr, n, "mont_sqr", km, ka, kb);
        /* reduction of a double-length t < m*R: t = a*R + b covers the top */
        mpz_mul_2exp(c.tmp, c.a, 32 * n);
        mpz_add(c.tmp, c.tmp, c.b);
        gt_to_limbs(c.lt, 2 * n, c.tmp);
        gpursa_mont_redc(c.lr, c.lt, c.lm, c.m0inv, n, v);
        mont_expect(&c, c.tmp);
        check_equal(&c, c.lr, n, "mont_redc", km, ka, kb);
        /* the largest input, m*R - 1 */
        if (ka == 0 && kb == 0) {
            mpz_mul_2exp(c.tmp, c.m, 32 * n);
            mpz_sub_ui(c.tmp, c.tmp, 1);
            gt_to_limbs(c.lt, 2 * n, c.tmp);
            gpursa_mont_redc(c.lr, c.lt, c.lm, c.m0inv, n, v);
            mont_expect(&c, c.tmp);
            check_equal(&c, c.lr, n, "mont_redc(mR-1)", km, ka, kb);
        }
        gpursa_mont_from(c.lr, c.la, c.lm, c.m0inv, n, v);
        mont_expect(&c, c.a);
        check_equal(&c, c.lr, n, "mont_from", km, ka, kb);
    }
    ctx_clear(&c);
}

static void run_exp(int n, int v)
{
    ctx c;
    uint32_t one[GPURSA_MONT_MAX_LIMBS], xm[GPURSA_MONT_MAX_LIMBS], le[GPURSA_MONT_MAX_LIMBS];
    uint32_t *table = malloc(sizeof(uint32_t) * GPURSA_MONT_TABLE_WORDS(n));
    mpz_t e, R;
    ck_assert_ptr_nonnull(table);
    mpz_inits(e, R, NULL);
    ctx_init(&c, n, v);
    /* moduli: all-ones, 0x80000000 limbs + 1, short top limb, random */
    static const int exp_moduli[] = {0, 2, 4, GT_MOD_EDGE_COUNT};
    for (size_t mi = 0; mi < sizeof(exp_moduli) / sizeof(exp_moduli[0]); mi++) {
        int km = exp_moduli[mi];
        ctx_modulus(&c, km);
        mpz_set_ui(R, 1);
        mpz_mul_2exp(R, R, 32 * n);
        mpz_mod(c.tmp, R, c.m);
        gt_to_limbs(one, n, c.tmp);
        for (int k = 0; k < 5 + random_exponents; k++) {
            /* exponents: 0, 1, all ones, top bit only, runs, random; bit
             * lengths that are and are not multiples of the window.  Secret
             * exponents are half-size (n <= 64): full length there, shorter
             * for the moduli n to keep the test quick. */
            int full = n <= 64 ? 32 * n : 320;
            int ebits = (k & 1) ? full : full - 3;
            switch (k) {
            case 0: mpz_set_ui(e, 0); break;
            case 1: mpz_set_ui(e, 1); break;
            case 2: mpz_set_ui(e, 1); mpz_mul_2exp(e, e, ebits); mpz_sub_ui(e, e, 1); break;
            case 3: mpz_set_ui(e, 1); mpz_mul_2exp(e, e, ebits - 1); break;
            case 4: mpz_rrandomb(e, gt_rand, ebits); break;
            default: mpz_urandomb(e, gt_rand, ebits); break;
            }
            gt_operand(c.a, k < 2 ? 3 : (k < 4 ? k + 3 : GT_EDGE_COUNT), c.m, n);
            gt_to_limbs(le, n, e);
            /* x in Montgomery form */
            mpz_mul_2exp(c.tmp, c.a, 32 * n);
            mpz_mod(c.tmp, c.tmp, c.m);
            gt_to_limbs(xm, n, c.tmp);
            gpursa_mont_exp(c.lr, xm, le, ebits, c.lm, c.m0inv, one, n, v, table);
            gpursa_mont_from(c.lr, c.lr, c.lm, c.m0inv, n, v);
            mpz_powm(c.want, c.a, e, c.m);
            check_equal(&c, c.lr, n, "mont_exp", km, k, ebits);
        }
        /* public exponents of up to 64 bits */
        static const uint64_t pub[] = {1, 3, 17, 65537, 0xffffffffffffffffull,
                                       0x8000000000000001ull, 0x123456789abcdefull};
        for (size_t k = 0; k < sizeof(pub) / sizeof(pub[0]); k++) {
            gt_operand(c.a, GT_EDGE_COUNT + (int)k, c.m, n);
            mpz_mul_2exp(c.tmp, c.a, 32 * n);
            mpz_mod(c.tmp, c.tmp, c.m);
            gt_to_limbs(xm, n, c.tmp);
            gpursa_mont_exp_public(c.lr, xm, pub[k], c.lm, c.m0inv, n, v);
            gpursa_mont_from(c.lr, c.lr, c.lm, c.m0inv, n, v);
            mpz_import(e, 1, 1, sizeof(uint64_t), 0, 0, &pub[k]);
            mpz_powm(c.want, c.a, e, c.m);
            check_equal(&c, c.lr, n, "mont_exp_public", km, (int)k, 0);
        }
    }
    ctx_clear(&c);
    mpz_clears(e, R, NULL);
    free(table);
}

static void run_helpers(int n)
{
    mpz_t a, b, want, got;
    uint32_t la[GPURSA_MONT_MAX_LIMBS], lb[GPURSA_MONT_MAX_LIMBS], lr[GPURSA_MONT_MAX_LIMBS];
    unsigned char be[4 * GPURSA_MONT_MAX_LIMBS + 3];
    mpz_inits(a, b, want, got, NULL);
    for (int k = 0; k < 40; k++) {
        mpz_urandomb(a, gt_rand, 32 * n);
        if (k < 4)
            mpz_set(b, a); /* equal operands */
        else
            mpz_rrandomb(b, gt_rand, 32 * n);
        gt_to_limbs(la, n, a);
        gt_to_limbs(lb, n, b);
        uint32_t cy = gpursa_mp_add(lr, la, lb, n);
        mpz_add(want, a, b);
        gt_from_limbs(got, lr, n);
        if (cy)
            mpz_setbit(got, 32 * n);
        ck_assert(mpz_cmp(got, want) == 0);
        uint32_t bw = gpursa_mp_sub(lr, la, lb, n);
        ck_assert_uint_eq(bw, mpz_cmp(a, b) < 0);
        ck_assert_uint_eq(gpursa_mp_lt_mask(la, lb, n), mpz_cmp(a, b) < 0 ? 0xffffffffu : 0);
        ck_assert_uint_eq(gpursa_mp_eq_mask(la, lb, n), mpz_cmp(a, b) == 0 ? 0xffffffffu : 0);
        /* big-endian round trip, with extra leading zero bytes */
        size_t len = 4 * (size_t)n + 3;
        gt_to_be(be, len, a);
        gpursa_mp_from_be(lr, n, be, len);
        ck_assert(gpursa_mp_eq_mask(lr, la, n) == 0xffffffffu);
        unsigned char be2[4 * GPURSA_MONT_MAX_LIMBS + 3];
        gpursa_mp_to_be(be2, len, la, n);
        ck_assert(memcmp(be, be2, len) == 0);
    }
    /* m0inv */
    for (uint32_t m = 1; m < 2000001; m += 2 * 997)
        ck_assert_uint_eq(gpursa_mont_m0inv(m) * m, 0xffffffffu);
    ck_assert_uint_eq(gpursa_mont_m0inv(0xffffffffu) * 0xffffffffu, 0xffffffffu);
    mpz_clears(a, b, want, got, NULL);
}

/* ------------------------------------------------------------------------
 * gpu/gpursa_mont_rows.h: the rolled-row CIOS (IMAD chains, 16-bit XMAD),
 * its reduction and product, and the 64-bit-product ("wide") forms.  The
 * kernels (kernels_rsa.cuh) run them at every CRT half size: IMAD above 32
 * limbs, XMAD at all sizes, FAST in the wide forms (wide_rows above 32
 * limbs, rows_mont_redc and rows_mp_mul there too).  They always run the
 * device carry-chain code, so the three builds of this file run the same
 * code (cheap enough to keep in all three: a host fast path added to the
 * header later would be checked against the device one).
 * ---------------------------------------------------------------------- */
static const int rows_sizes[] = {16, 32, 48, 64};
#define NROWS_SIZES (int)(sizeof(rows_sizes) / sizeof(rows_sizes[0]))
/* the dispatchers (rows_mont_mul, rows_mont_redc) as each kernel calls them */
static const int rows_variants[] = {GPURSA_VARIANT_IMAD, GPURSA_VARIANT_XMAD,
                                    GPURSA_VARIANT_FAST};
#define NROWS_VARIANTS (int)(sizeof(rows_variants) / sizeof(rows_variants[0]))

/* Moduli: gt_modulus's edge shapes, 2^(32n-1) + small and 2^(32n) - small,
 * then random (odd, top bit set).  Per modulus every pair of edge operands,
 * then random pairs.  Random counts are scaled by GPURSA_TEST_SCALE (main). */
#define ROWS_MOD_EDGE_COUNT (GT_MOD_EDGE_COUNT + 2)
#define ROWS_EDGE_PAIRS (GT_EDGE_COUNT * GT_EDGE_COUNT)
static int rows_random_moduli = 6, rows_random_pairs = 40, rows_random_products = 300;

static void rows_modulus(ctx *c, int k)
{
    int bits = 32 * c->n;
    if (k == GT_MOD_EDGE_COUNT) { /* 2^(32n-1) + an odd value of up to 40 bits */
        mpz_urandomb(c->m, gt_rand, 40);
        mpz_setbit(c->m, bits - 1);
        mpz_setbit(c->m, 0);
    } else if (k == GT_MOD_EDGE_COUNT + 1) { /* 2^(32n) - an odd value of up to 41 bits */
        mpz_urandomb(c->tmp, gt_rand, 40);
        mpz_mul_2exp(c->tmp, c->tmp, 1);
        mpz_add_ui(c->tmp, c->tmp, 1);
        mpz_set_ui(c->m, 0);
        mpz_setbit(c->m, bits);
        mpz_sub(c->m, c->m, c->tmp);
    } else {
        gt_modulus(c->m, k < GT_MOD_EDGE_COUNT ? k : GT_MOD_EDGE_COUNT, c->n);
    }
    ck_assert(mpz_odd_p(c->m) && mpz_sizeinbase(c->m, 2) <= (size_t)bits);
    ctx_set_modulus(c);
}

/* Operand pair pi of a modulus: edge pairs (ka, kb both < GT_EDGE_COUNT),
 * then random ones (gt_operand draws a fresh value for k >= GT_EDGE_COUNT). */
static void rows_operands(ctx *c, int pi, int *ka, int *kb)
{
    *ka = pi < ROWS_EDGE_PAIRS ? pi / GT_EDGE_COUNT : GT_EDGE_COUNT + pi;
    *kb = pi < ROWS_EDGE_PAIRS ? pi % GT_EDGE_COUNT : GT_EDGE_COUNT + pi + 1;
    ctx_operands(c, *ka, *kb);
}

/* A Montgomery result: fully reduced (< m, asserted on its own so that a
 * missing final subtraction says so), then equal to c->want. */
static void rows_check(ctx *c, const uint32_t *r, const char *what, int km, int ka, int kb)
{
    gt_from_limbs(c->got, r, c->n);
    if (mpz_cmp(c->got, c->m) >= 0)
        ck_abort_msg("%s n=%d modulus#%d operands#%d,#%d: result not fully reduced (>= m)",
                     what, c->n, km, ka, kb);
    if (mpz_cmp(c->got, c->want) != 0)
        ck_abort_msg("%s n=%d modulus#%d operands#%d,#%d: wrong result", what, c->n, km, ka,
                     kb);
}
/* A plain product of 2n limbs, equal to c->want. */
static void rows_check_product(ctx *c, const uint32_t *r, const char *what, int ka, int kb)
{
    gt_from_limbs(c->got, r, 2 * c->n);
    if (mpz_cmp(c->got, c->want) != 0)
        ck_abort_msg("%s n=%d operands#%d,#%d: wrong product", what, c->n, ka, kb);
}

/* a * b / R mod m in every form, and a * a / R mod m as the kernels square:
 * the rows and wide_rows forms get a and a copy of a (kernels_rsa.cuh,
 * gpursa_fx_sqr: the register copy and the operand in memory), wide_mont_sqr
 * gets a.  The kernels never alias r with a or b at this level (r, a and m
 * are register copies), so aliasing is not tested. */
static void run_rows_mont_mul(int n)
{
    ctx c;
    uint32_t ac[GPURSA_MONT_MAX_LIMBS];
    char what[64];
    ctx_init(&c, n, GPURSA_VARIANT_IMAD);
    for (int km = 0; km < ROWS_MOD_EDGE_COUNT + rows_random_moduli; km++) {
        rows_modulus(&c, km);
        for (int pi = 0, ka, kb; pi < ROWS_EDGE_PAIRS + rows_random_pairs; pi++) {
            rows_operands(&c, pi, &ka, &kb);
            mpz_mul(c.tmp, c.a, c.b);
            mont_expect(&c, c.tmp);
            gpursa_rows_mont_mul_imad(c.lr, c.la, c.lb, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "rows_mont_mul_imad", km, ka, kb);
            gpursa_rows_mont_mul_xmad(c.lr, c.la, c.lb, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "rows_mont_mul_xmad", km, ka, kb);
            for (int vi = 0; vi < NROWS_VARIANTS; vi++) {
                gpursa_rows_mont_mul(c.lr, c.la, c.lb, c.lm, c.m0inv, n, rows_variants[vi]);
                snprintf(what, sizeof(what), "rows_mont_mul(%s)",
                         gpursa_variant_name(rows_variants[vi]));
                rows_check(&c, c.lr, what, km, ka, kb);
            }
            gpursa_wide_mont_mul(c.lr, c.la, c.lb, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "wide_mont_mul", km, ka, kb);
            gpursa_wide_rows_mont_mul(c.lr, c.la, c.lb, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "wide_rows_mont_mul", km, ka, kb);
            /* squares: once per edge operand, and for every random one */
            if (pi < ROWS_EDGE_PAIRS && ka != kb)
                continue;
            mpz_mul(c.tmp, c.a, c.a);
            mont_expect(&c, c.tmp);
            gpursa_mp_copy(ac, c.la, n);
            gpursa_rows_mont_mul_imad(c.lr, c.la, ac, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "rows_mont_mul_imad(a, a)", km, ka, ka);
            gpursa_rows_mont_mul_xmad(c.lr, c.la, ac, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "rows_mont_mul_xmad(a, a)", km, ka, ka);
            gpursa_wide_rows_mont_mul(c.lr, c.la, ac, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "wide_rows_mont_mul(a, a)", km, ka, ka);
            gpursa_wide_mont_sqr(c.lr, c.la, c.lm, c.m0inv, n);
            rows_check(&c, c.lr, "wide_mont_sqr", km, ka, ka);
            ck_assert(gpursa_mp_eq_mask(ac, c.la, n) == 0xffffffffu); /* inputs kept */
        }
    }
    ctx_clear(&c);
}

/* x / R mod m for x of 2n limbs below m R: x = a R + b (low half reduced)
 * and x = a R + (R - 1 - b) (low half mostly >= m, all ones for b = 0): the
 * kernels reduce full-length values c < n = p q < p R, whose low half is
 * anything.  And the largest, m R - 1.  rows_mont_redc must leave x alone
 * (the kernels pass their operand in memory); wide_mont_redc destroys its
 * input (the kernels pass a copy). */
static void rows_redc_case(ctx *c, const mpz_t x, const char *shape, int km, int ka, int kb)
{
    uint32_t lx[2 * GPURSA_MONT_MAX_LIMBS];
    char what[64];
    int n = c->n;
    gt_to_limbs(lx, 2 * n, x);
    mont_expect(c, x);
    for (int vi = 0; vi < NROWS_VARIANTS; vi++) {
        gpursa_rows_mont_redc(c->lr, lx, c->lm, c->m0inv, n, rows_variants[vi]);
        snprintf(what, sizeof(what), "rows_mont_redc(%s) x=%s",
                 gpursa_variant_name(rows_variants[vi]), shape);
        rows_check(c, c->lr, what, km, ka, kb);
        gt_from_limbs(c->got, lx, 2 * n);
        ck_assert_msg(mpz_cmp(c->got, x) == 0, "%s n=%d: input changed", what, n);
    }
    gpursa_mp_copy(c->lt, lx, 2 * n);
    gpursa_wide_mont_redc(c->lr, c->lt, c->lm, c->m0inv, n);
    snprintf(what, sizeof(what), "wide_mont_redc x=%s", shape);
    rows_check(c, c->lr, what, km, ka, kb);
}

static void run_rows_redc(int n)
{
    ctx c;
    mpz_t x;
    ctx_init(&c, n, GPURSA_VARIANT_IMAD);
    mpz_init(x);
    for (int km = 0; km < ROWS_MOD_EDGE_COUNT + rows_random_moduli; km++) {
        rows_modulus(&c, km);
        for (int pi = 0, ka, kb; pi < ROWS_EDGE_PAIRS + rows_random_pairs; pi++) {
            rows_operands(&c, pi, &ka, &kb);
            mpz_mul_2exp(x, c.a, 32 * n);
            mpz_add(x, x, c.b);
            rows_redc_case(&c, x, "aR+b", km, ka, kb);
            mpz_mul_2exp(x, c.a, 32 * n);
            mpz_setbit(x, 32 * n); /* a R + R - 1 - b = (a + 1) R - 1 - b */
            mpz_sub_ui(x, x, 1);
            mpz_sub(x, x, c.b);
            ck_assert(mpz_cmp(x, c.a) >= 0); /* the high half is still a */
            rows_redc_case(&c, x, "aR+R-1-b", km, ka, kb);
        }
        mpz_mul_2exp(x, c.m, 32 * n);
        mpz_sub_ui(x, x, 1);
        rows_redc_case(&c, x, "mR-1", km, -1, -1);
    }
    mpz_clear(x);
    ctx_clear(&c);
}

/* Plain products a * b (rows_mp_mul) and a * a (wide_mp_sqr) of n-limb
 * values of any size: the kernels' Garner step multiplies q (not reduced mod
 * p) by h < p.  Values 0-7 fixed shapes, 8 long runs of ones and zeros, 9
 * random: all pairs, then random pairs of the last two kinds. */
#define ROWS_MP_EDGE_COUNT 10
static void rows_mp_operand(mpz_t z, int k, int n)
{
    int bits = 32 * n;
    mpz_set_ui(z, 0);
    switch (k) {
    case 0: break;
    case 1: mpz_set_ui(z, 1); break;
    case 2: mpz_set_ui(z, 0xffffffffu); break;
    case 3: mpz_setbit(z, bits); mpz_sub_ui(z, z, 1); break;          /* all ones */
    case 4: mpz_setbit(z, bits - 1); break;
    case 5: mpz_setbit(z, bits - 1); mpz_sub_ui(z, z, 1); break;
    case 6: /* every other limb all ones, the low one included */
        for (int i = 0; i < n; i += 2) {
            mpz_mul_2exp(z, z, 64);
            mpz_add_ui(z, z, 0xffffffffu);
        }
        break;
    case 7: mpz_setbit(z, bits); mpz_sub_ui(z, z, 1); mpz_clrbit(z, 0); break;
    case 8: mpz_rrandomb(z, gt_rand, bits); break;
    default: mpz_urandomb(z, gt_rand, bits); break;
    }
}

static void run_rows_mp(int n)
{
    ctx c;
    uint32_t lr[2 * GPURSA_MONT_MAX_LIMBS];
    ctx_init(&c, n, GPURSA_VARIANT_IMAD);
    int edge_pairs = ROWS_MP_EDGE_COUNT * ROWS_MP_EDGE_COUNT;
    for (int pi = 0; pi < edge_pairs + rows_random_products; pi++) {
        int ka = pi < edge_pairs ? pi / ROWS_MP_EDGE_COUNT : 8 + (pi & 1);
        int kb = pi < edge_pairs ? pi % ROWS_MP_EDGE_COUNT : 8 + ((pi >> 1) & 1);
        rows_mp_operand(c.a, ka, n);
        rows_mp_operand(c.b, kb, n);
        gt_to_limbs(c.la, n, c.a);
        gt_to_limbs(c.lb, n, c.b);
        mpz_mul(c.want, c.a, c.b);
        gpursa_rows_mp_mul(lr, c.la, c.lb, n);
        rows_check_product(&c, lr, "rows_mp_mul", ka, kb);
        if (pi < edge_pairs && ka != kb)
            continue;
        mpz_mul(c.want, c.a, c.a);
        gpursa_wide_mp_sqr(lr, c.la, n);
        rows_check_product(&c, lr, "wide_mp_sqr", ka, ka);
        gpursa_rows_mp_mul(lr, c.la, c.la, n);
        rows_check_product(&c, lr, "rows_mp_mul(a, a)", ka, ka);
    }
    ctx_clear(&c);
}

/* _i is the loop index of tcase_add_loop_test: size index * 2 + variant */
START_TEST(test_mul_sqr) { run_mul(sizes[_i / 2], variants[_i % 2]); }
END_TEST
START_TEST(test_mont_mul_sqr_redc) { run_mont(sizes[_i / 2], variants[_i % 2]); }
END_TEST
START_TEST(test_mont_exp) { run_exp(sizes[_i / 2], variants[_i % 2]); }
END_TEST
START_TEST(test_add_sub_compare_bytes) { run_helpers(sizes[_i]); }
END_TEST
/* _i: index into rows_sizes */
START_TEST(test_rows_mont_mul_sqr) { run_rows_mont_mul(rows_sizes[_i]); }
END_TEST
START_TEST(test_rows_redc) { run_rows_redc(rows_sizes[_i]); }
END_TEST
START_TEST(test_rows_mp_mul_sqr) { run_rows_mp(rows_sizes[_i]); }
END_TEST

static Suite *make_arith_suite(void)
{
    Suite *s = suite_create("gpu_arith");
    TCase *tc = tcase_create("arith");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_add_sub_compare_bytes, 0, NSIZES);
    tcase_add_loop_test(tc, test_mul_sqr, 0, 2 * NSIZES);
    tcase_add_loop_test(tc, test_mont_mul_sqr_redc, 0, 2 * NSIZES);
    tcase_add_loop_test(tc, test_mont_exp, 0, 2 * NSIZES);
    suite_add_tcase(s, tc);
    /* gpursa_mont_rows.h (CK_RUN_CASE=rows runs these alone) */
    TCase *tr = tcase_create("rows");
    tcase_set_timeout(tr, 600);
    tcase_add_loop_test(tr, test_rows_mont_mul_sqr, 0, NROWS_SIZES);
    tcase_add_loop_test(tr, test_rows_redc, 0, NROWS_SIZES);
    tcase_add_loop_test(tr, test_rows_mp_mul_sqr, 0, NROWS_SIZES);
    suite_add_tcase(s, tr);
    return s;
}

int main(void)
{
    gt_init();
    random_moduli = gt_random_cases(random_moduli);
    random_operands = gt_random_cases(random_operands);
    random_exponents = gt_random_cases(random_exponents);
    rows_random_moduli = gt_random_cases(rows_random_moduli);
    rows_random_pairs = gt_random_cases(rows_random_pairs);
    rows_random_products = gt_random_cases(rows_random_products);
    SRunner *sr = srunner_create(make_arith_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
