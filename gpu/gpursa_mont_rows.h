/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_mont_rows.h - Montgomery multiplication with the row loop rolled,
 * for the one- and two-thread kernels (gpu/kernels_rsa.cuh): IMAD's large CRT
 * halves (48 and 64 limbs: RSA-3072 and RSA-4096), XMAD at every size, and
 * FAST's 64-bit-product forms at every size (below).
 *
 * gpursa_mont.h unrolls every loop so that limb arrays stay in registers.
 * At 64 limbs that makes one multiplication 16,000 multiply-adds of straight
 * code (four times that for the 16-bit variant): more than an instruction
 * cache holds, and ptxas needs tens of minutes per kernel. Here only the
 * inner loops (over j, compile-time indices) are unrolled; the row loop over
 * i runs as a loop, reading b[i] from memory. CIOS keeps the accumulator at
 * n+2 words with fixed indices (each row adds a*b_i and q*m, then drops the
 * zero low word), so the register arrays never need a run-time index.
 *
 *   gpursa_rows_mont_mul_imad  CIOS, 32-bit products with carry chains
 *   gpursa_rows_mont_mul_xmad  CIOS with 16-bit products: per row the aligned
 *                              LL and HH products go to accumulator X, the
 *                              16-bit-offset LH and HL products to U (the two
 *                              passes of Emmart et al. kept per row), and
 *                              V = X + U 2^16 is rebuilt once at the end
 *   gpursa_rows_mont_redc      x / R mod m for x < m R: (x_lo * 1) / R + x_hi
 *   gpursa_rows_mp_mul         r[2n] = a * b (IMAD rows), for Garner
 * Same conventions as gpursa_mont.h (little-endian 32-bit limbs, m odd,
 * m0inv = -m^-1 mod 2^32, inputs < m, outputs fully reduced, constant time,
 * 2 <= n <= GPURSA_MONT_MAX_LIMBS: the local arrays are of that size and
 * nothing checks n; the kernels pass compile-time sizes of 16 to 64).
 */
#ifndef GPURSA_MONT_ROWS_H
#define GPURSA_MONT_ROWS_H

#include "gpu/gpursa_mont.h"

#ifdef __CUDACC__
#define GPURSA_ROLL _Pragma("unroll 1")
#else
#define GPURSA_ROLL
#endif

/* acc[0..n+1] += x * y, x a limb array, y one limb (lo chain, then hi chain
 * one word up). acc[n+1] must have room for the carries (CIOS bound). */
GPURSA_HD void gpursa_rows_addmul_imad(uint32_t *acc, const uint32_t *x, uint32_t y, int n)
{
    uint32_t cf = 0;
    acc[0] = gpursa_madlo_cc(x[0], y, acc[0], &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        acc[j] = gpursa_madclo_cc(x[j], y, acc[j], &cf);
    acc[n] = gpursa_addc_cc(acc[n], 0, &cf);
    acc[n + 1] = gpursa_addc(acc[n + 1], 0, &cf);
    acc[1] = gpursa_madhi_cc(x[0], y, acc[1], &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        acc[j + 1] = gpursa_madchi_cc(x[j], y, acc[j + 1], &cf);
    acc[n + 1] = gpursa_addc(acc[n + 1], 0, &cf);
}

GPURSA_HD void gpursa_rows_mont_mul_imad(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                         const uint32_t *m, uint32_t m0inv, int n)
{
    uint32_t acc[GPURSA_MONT_MAX_LIMBS + 2];
    gpursa_mp_zero(acc, n + 2);
    GPURSA_ROLL
    for (int i = 0; i < n; i++) {
        gpursa_rows_addmul_imad(acc, a, b[i], n);
        gpursa_rows_addmul_imad(acc, m, acc[0] * m0inv, n);   /* word 0 becomes 0 */
        GPURSA_UNROLL
        for (int j = 0; j <= n; j++)
            acc[j] = acc[j + 1];
        acc[n + 1] = 0;
    }
    gpursa_mont_final_sub(r, acc, acc[n], m, n);
}

/* X += aligned parts (LL at word j, HH at word j+1) and U += the 16-bit
 * offset parts (LH + HL at word j) of x * y; lead is added to word 0 of X
 * with the first LL (LL + lead < 2^32 for lead <= 2^16). */
GPURSA_HD void gpursa_rows_addmul_xmad(uint32_t *X, uint32_t *U, const uint32_t *x, uint32_t y,
                                       uint32_t lead, int n)
{
    uint32_t cf = 0;
    X[0] = gpursa_add_cc(X[0], gpursa_mul16_ll(x[0], y) + lead, &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        X[j] = gpursa_addc_cc(X[j], gpursa_mul16_ll(x[j], y), &cf);
    X[n] = gpursa_addc_cc(X[n], 0, &cf);
    X[n + 1] = gpursa_addc(X[n + 1], 0, &cf);
    X[1] = gpursa_add_cc(X[1], gpursa_mul16_hh(x[0], y), &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        X[j + 1] = gpursa_addc_cc(X[j + 1], gpursa_mul16_hh(x[j], y), &cf);
    X[n + 1] = gpursa_addc(X[n + 1], 0, &cf);
    U[0] = gpursa_add_cc(U[0], gpursa_mul16_lh(x[0], y), &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        U[j] = gpursa_addc_cc(U[j], gpursa_mul16_lh(x[j], y), &cf);
    U[n] = gpursa_addc_cc(U[n], 0, &cf);
    U[n + 1] = gpursa_addc(U[n + 1], 0, &cf);
    U[0] = gpursa_add_cc(U[0], gpursa_mul16_hl(x[0], y), &cf);
    GPURSA_UNROLL
    for (int j = 1; j < n; j++)
        U[j] = gpursa_addc_cc(U[j], gpursa_mul16_hl(x[j], y), &cf);
    U[n] = gpursa_addc_cc(U[n], 0, &cf);
    U[n + 1] = gpursa_addc(U[n + 1], 0, &cf);
}

GPURSA_HD void gpursa_rows_mont_mul_xmad(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                         const uint32_t *m, uint32_t m0inv, int n)
{
    uint32_t X[GPURSA_MONT_MAX_LIMBS + 2], U[GPURSA_MONT_MAX_LIMBS + 2];
    uint32_t cf = 0, lead = 0, q, c;
    gpursa_mp_zero(X, n + 2);
    gpursa_mp_zero(U, n + 2);
    GPURSA_ROLL
    for (int i = 0; i < n; i++) {
        gpursa_rows_addmul_xmad(X, U, a, b[i], lead, n);
        /* the low word of V = X + U 2^16 decides q */
        q = (X[0] + (U[0] << 16)) * m0inv;
        gpursa_rows_addmul_xmad(X, U, m, q, 0, n);
        /* V's low word is now zero: its carry and U[0]'s high half move up */
        (void)gpursa_add_cc(X[0], U[0] << 16, &cf);
        c = gpursa_addc(0, 0, &cf);
        lead = c + (U[0] >> 16);
        GPURSA_UNROLL
        for (int j = 0; j <= n; j++) {
            X[j] = X[j + 1];
            U[j] = U[j + 1];
        }
        X[n + 1] = 0;
        U[n + 1] = 0;
    }
    /* V = X + lead + U 2^16, below 2m: n words and a top word */
    X[0] = gpursa_add_cc(X[0], lead, &cf);
    GPURSA_UNROLL
    for (int j = 1; j <= n; j++)
        X[j] = gpursa_addc_cc(X[j], 0, &cf);
    X[0] = gpursa_add_cc(X[0], U[0] << 16, &cf);
    GPURSA_UNROLL
    for (int j = 1; j <= n; j++)
        X[j] = gpursa_addc_cc(X[j], gpursa_funnel16(U[j - 1], U[j]), &cf);
    gpursa_mont_final_sub(r, X, X[n], m, n);
}

GPURSA_HD void gpursa_rows_mont_mul(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                    const uint32_t *m, uint32_t m0inv, int n, int variant)
{
    if (variant == GPURSA_VARIANT_XMAD)
        gpursa_rows_mont_mul_xmad(r, a, b, m, m0inv, n);
    else
        gpursa_rows_mont_mul_imad(r, a, b, m, m0inv, n);
}

/* r = x / R mod m, x of 2n limbs below m R: x_lo / R (a multiplication by 1)
 * plus x_hi (< m), one masked subtraction. x_lo may be m or more, outside the
 * multiplication's "inputs < m": CIOS still gives x_lo / R below m + 1 for
 * x_lo < R, reduced by its final subtraction, so s + x_hi stays below 2m. */
GPURSA_HD void gpursa_rows_mont_redc(uint32_t *r, const uint32_t *x, const uint32_t *m,
                                     uint32_t m0inv, int n, int variant)
{
    uint32_t one[GPURSA_MONT_MAX_LIMBS], lo[GPURSA_MONT_MAX_LIMBS], s[GPURSA_MONT_MAX_LIMBS];
    uint32_t top;
    gpursa_mp_zero(one, n);
    one[0] = 1;
    gpursa_mp_copy(lo, x, n);
    gpursa_rows_mont_mul(s, lo, one, m, m0inv, n, variant);
    top = gpursa_mp_add(s, s, x + n, n);
    gpursa_mont_final_sub(r, s, top, m, n);
}

/* r[2n] = a * b, rows rolled: the low word of the running sum leaves for
 * r[i] after each row. */
GPURSA_HD void gpursa_rows_mp_mul(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    uint32_t acc[GPURSA_MONT_MAX_LIMBS + 2];
    gpursa_mp_zero(acc, n + 2);
    GPURSA_ROLL
    for (int i = 0; i < n; i++) {
        gpursa_rows_addmul_imad(acc, a, b[i], n);
        r[i] = acc[0];
        GPURSA_UNROLL
        for (int j = 0; j <= n; j++)
            acc[j] = acc[j + 1];
        acc[n + 1] = 0;
    }
    GPURSA_UNROLL
    for (int j = 0; j < n; j++)
        r[n + j] = acc[j];
}

/* ------------------------------------------------------------------------
 * 64-bit product formulation ("wide"): each limb product is one
 * mul.wide.u32 (a 32x32->64 multiply-add, IMAD.WIDE on sm_70+) plus 64-bit
 * additions, instead of a lo and a hi multiply-add in carry chains. On GPUs
 * whose carry-chain multiply-adds issue at half rate the wide form moves the
 * additions to the integer ALU pipe. t = a*b + c + d never overflows 64 bits
 * for 32-bit a, b, c, d. Loops carry GPURSA_UNROLL: for halves up to 32
 * limbs the caller unrolls; above that FAST takes gpursa_wide_rows_mont_mul,
 * whose rows stay rolled (gpursa_fx_mul in kernels_rsa.cuh, H > 32).
 * ---------------------------------------------------------------------- */

/* gcc cannot see that acc[0..n+1] is zeroed before it is read when n is not a
 * constant (in the kernels it is); the code is right for every n >= 2. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* r = a * b / R mod m, CIOS */
GPURSA_HD void gpursa_wide_mont_mul(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                    const uint32_t *m, uint32_t m0inv, int n)
{
    uint32_t acc[GPURSA_MONT_MAX_LIMBS + 2];
    gpursa_mp_zero(acc, n + 2);
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint64_t c = 0;
        uint32_t bi = b[i], q;
        GPURSA_UNROLL
        for (int j = 0; j < n; j++) {
            c = (uint64_t)a[j] * bi + acc[j] + (c >> 32);
            acc[j] = (uint32_t)c;
        }
        c = (uint64_t)acc[n] + (c >> 32);
        acc[n] = (uint32_t)c;
        acc[n + 1] = (uint32_t)(c >> 32);
        q = acc[0] * m0inv;
        c = (uint64_t)q * m[0] + acc[0];              /* low word becomes 0 */
        GPURSA_UNROLL
        for (int j = 1; j < n; j++) {
            c = (uint64_t)q * m[j] + acc[j] + (c >> 32);
            acc[j - 1] = (uint32_t)c;
        }
        c = (uint64_t)acc[n] + (c >> 32);
        acc[n - 1] = (uint32_t)c;
        acc[n] = acc[n + 1] + (uint32_t)(c >> 32);
    }
    gpursa_mont_final_sub(r, acc, acc[n], m, n);
}

/* r[2n] = a * a: off-diagonal products once, doubled by a shift, plus the squares */
GPURSA_HD void gpursa_wide_mp_sqr(uint32_t *r, const uint32_t *a, int n)
{
    uint64_t c;
    gpursa_mp_zero(r, 2 * n);
    GPURSA_UNROLL
    for (int i = 0; i < n - 1; i++) {
        c = 0;
        GPURSA_UNROLL
        for (int j = i + 1; j < n; j++) {
            c = (uint64_t)a[j] * a[i] + r[i + j] + (c >> 32);
            r[i + j] = (uint32_t)c;
        }
        r[i + n] = (uint32_t)(c >> 32);
    }
    r[2 * n - 1] = r[2 * n - 2] >> 31;
    GPURSA_UNROLL
    for (int k = 2 * n - 2; k > 0; k--)
        r[k] = (r[k] << 1) | (r[k - 1] >> 31);
    r[0] <<= 1;
    c = 0;
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        c = (uint64_t)a[i] * a[i] + r[2 * i] + (c >> 32);
        r[2 * i] = (uint32_t)c;
        c = (uint64_t)r[2 * i + 1] + (c >> 32);
        r[2 * i + 1] = (uint32_t)c;
    }
}

/* r = t / R mod m for t[2n] < m R (t destroyed) */
GPURSA_HD void gpursa_wide_mont_redc(uint32_t *r, uint32_t *t, const uint32_t *m, uint32_t m0inv,
                                     int n)
{
    uint32_t pend = 0;
    GPURSA_UNROLL
    for (int i = 0; i < n; i++) {
        uint32_t q = t[i] * m0inv;
        uint64_t c = (uint64_t)q * m[0] + t[i];
        GPURSA_UNROLL
        for (int j = 1; j < n; j++) {
            c = (uint64_t)q * m[j] + t[i + j] + (c >> 32);
            t[i + j] = (uint32_t)c;
        }
        c = (uint64_t)t[i + n] + (c >> 32) + pend;
        t[i + n] = (uint32_t)c;
        pend = (uint32_t)(c >> 32);
    }
    gpursa_mont_final_sub(r, t + n, pend, m, n);
}

GPURSA_HD void gpursa_wide_mont_sqr(uint32_t *r, const uint32_t *a, const uint32_t *m,
                                    uint32_t m0inv, int n)
{
    uint32_t t[2 * GPURSA_MONT_MAX_LIMBS];
    gpursa_wide_mp_sqr(t, a, n);
    gpursa_wide_mont_redc(r, t, m, m0inv, n);
}

/* the CIOS above with the row loop rolled (large halves; b from memory) */
GPURSA_HD void gpursa_wide_rows_mont_mul(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                         const uint32_t *m, uint32_t m0inv, int n)
{
    uint32_t acc[GPURSA_MONT_MAX_LIMBS + 2];
    gpursa_mp_zero(acc, n + 2);
    GPURSA_ROLL
    for (int i = 0; i < n; i++) {
        uint64_t c = 0;
        uint32_t bi = b[i], q;
        GPURSA_UNROLL
        for (int j = 0; j < n; j++) {
            c = (uint64_t)a[j] * bi + acc[j] + (c >> 32);
            acc[j] = (uint32_t)c;
        }
        c = (uint64_t)acc[n] + (c >> 32);
        acc[n] = (uint32_t)c;
        acc[n + 1] = (uint32_t)(c >> 32);
        q = acc[0] * m0inv;
        c = (uint64_t)q * m[0] + acc[0];
        GPURSA_UNROLL
        for (int j = 1; j < n; j++) {
            c = (uint64_t)q * m[j] + acc[j] + (c >> 32);
            acc[j - 1] = (uint32_t)c;
        }
        c = (uint64_t)acc[n] + (c >> 32);
        acc[n - 1] = (uint32_t)c;
        acc[n] = acc[n + 1] + (uint32_t)(c >> 32);
    }
    gpursa_mont_final_sub(r, acc, acc[n], m, n);
}
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic pop
#endif

#endif /* GPURSA_MONT_ROWS_H */
