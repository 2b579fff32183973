/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_rsa_op.h - one whole RSA private operation over gpursa_mont.h, for
 * the host backend and the CUDA kernels alike.
 *
 * API (stable; a change is announced here first)
 * ----------------------------------------------
 *   gpursa_rsa_keydata  the key in limbs plus its Montgomery constants, filled
 *                       once per key by gpursa_keyconv_load() (gpursa_keyconv.h)
 *                       on the host; a plain struct, copy it to the device as is.
 *   int gpursa_rsa_op(kd, c, r, rinv, out, nl, variant, fault_bit)
 *        c, r, rinv, out: nl limbs each (little-endian, see gpursa_mp_from_be)
 *        nl: limbs of n (32, 64, 96, 128), a compile-time constant at the call
 *        site; variant: GPURSA_VARIANT_IMAD or _XMAD (constant too);
 *        fault_bit: -1 normally; >= 0 flips that bit of the recombined result
 *        before unblinding and the check (tests prove the check catches it).
 *        Returns GPURSA_ITEM_OK, _FAULT or _BADINPUT; out is zero unless OK.
 *
 * A kernel (one thread per item):
 *     int st = gpursa_rsa_op(&keys[item.key], c, r, rinv, out, 64,
 *                            GPURSA_VARIANT_IMAD, -1);
 *
 * Steps (all constant time in the secret data; only nl, variant and the
 * public exponent e steer control flow):
 *   b = r^e mod n, c' = c*b mod n                      (blinding)
 *   m1 = (c' mod p)^dp mod p, m2 = (c' mod q)^dq mod q (fixed windows over
 *                                                       all 32*hl bits)
 *   h = qinv*(m1 - m2) mod p, m' = m2 + h*q            (Garner)
 *   out = m'*rinv mod n                                (unblinding)
 *   OK only if out^e mod n == c; BADINPUT if c, r or rinv >= n or
 *   r*rinv != 1 mod n (all evaluated, no early exit).
 */
#ifndef GPURSA_RSA_OP_H
#define GPURSA_RSA_OP_H

#include "gpu/gpursa_mont.h"

#define GPURSA_RSA_MAX_LIMBS GPURSA_MONT_MAX_LIMBS
#define GPURSA_RSA_MAX_HALF (GPURSA_MONT_MAX_LIMBS / 2)
/* 52-bit limbs of a half-length number for the FP64 multiplication
 * (gpursa_coop_fp.h): enough for 32*hl + 2 bits, so that R52 = 2^(52 fl) > 4m
 * (GPURSA_FP_LIMBS_MIN: hl = 32, 48, 64: 20, 30, 40 limbs), rounded up to a
 * multiple of 4 so that 4 or 8 lanes share them evenly (20, 32, 40) */
#define GPURSA_FP_LIMBS_MIN(hl) ((32 * (hl) + 2 + 51) / 52)
#define GPURSA_FP_LIMBS(hl) ((GPURSA_FP_LIMBS_MIN(hl) + 3) / 4 * 4)
#define GPURSA_FP_MAX_LIMBS GPURSA_FP_LIMBS(GPURSA_RSA_MAX_HALF)

typedef struct gpursa_rsa_keydata {
    int32_t bits;          /* modulus bits: 1024, 2048, 3072, 4096 */
    int32_t nl;            /* limbs of n */
    int32_t hl;            /* limbs of p, q, dp, dq, qinv: nl / 2 */
    uint32_t n0inv, p0inv, q0inv; /* -m^-1 mod 2^32 */
    uint64_t e;            /* public exponent, odd, < 2^64 */
    uint32_t n[GPURSA_RSA_MAX_LIMBS];
    uint32_t n_rr[GPURSA_RSA_MAX_LIMBS];  /* R_n^2 mod n, R_n = 2^(32 nl) */
    uint32_t p[GPURSA_RSA_MAX_HALF];
    uint32_t p_one[GPURSA_RSA_MAX_HALF];  /* R mod p, R = 2^(32 hl) */
    uint32_t p_rrr[GPURSA_RSA_MAX_HALF];  /* R^3 mod p */
    uint32_t q[GPURSA_RSA_MAX_HALF];
    uint32_t q_one[GPURSA_RSA_MAX_HALF];
    uint32_t q_rrr[GPURSA_RSA_MAX_HALF];
    uint32_t dp[GPURSA_RSA_MAX_HALF];     /* zero-padded to 32*hl bits */
    uint32_t dq[GPURSA_RSA_MAX_HALF];
    uint32_t qinv[GPURSA_RSA_MAX_HALF];   /* q^-1 mod p */
    /* The same primes for the FP64 exponentiation (gpursa_coop_fp.h), fl limbs
     * of 52 bits (each < 2^52, in a uint64_t), R52 = 2^(52 fl): */
    int32_t fl;                           /* GPURSA_FP_LIMBS(hl) */
    uint64_t p0inv52, q0inv52;            /* -m^-1 mod 2^52 */
    uint64_t p52[GPURSA_FP_MAX_LIMBS];
    uint64_t p_fone[GPURSA_FP_MAX_LIMBS]; /* R52 mod p */
    uint64_t p_fin[GPURSA_FP_MAX_LIMBS];  /* R R52^2 mod p: x / R -> x R52 */
    uint64_t q52[GPURSA_FP_MAX_LIMBS];
    uint64_t q_fone[GPURSA_FP_MAX_LIMBS];
    uint64_t q_fin[GPURSA_FP_MAX_LIMBS];
    /* ... and for R52 = 2^(52 fl_min), fl_min = GPURSA_FP_LIMBS_MIN(hl), which
     * kernels take where it is fewer than fl (RSA-3072: 30 limbs, 10 for each
     * of 3 lanes; elsewhere the two sets are equal); p52 and q52 serve both
     * (their limbs from fl_min on are 0): */
    int32_t fl_min;
    uint64_t p_fone_min[GPURSA_FP_MAX_LIMBS];
    uint64_t p_fin_min[GPURSA_FP_MAX_LIMBS];
    uint64_t q_fone_min[GPURSA_FP_MAX_LIMBS];
    uint64_t q_fin_min[GPURSA_FP_MAX_LIMBS];
} gpursa_rsa_keydata;

/* r = (x mod m) in Montgomery form, x of 2*hl limbs (x < m * R): the
 * reduction gives x/R, and a multiplication by R^3 gives x*R. */
GPURSA_HD void gpursa_rsa_to_half(uint32_t *r, const uint32_t *x, const uint32_t *m,
                                  uint32_t m0inv, const uint32_t *rrr, int hl, int variant)
{
    uint32_t t[2 * GPURSA_RSA_MAX_HALF];
    gpursa_mp_copy(t, x, 2 * hl);
    gpursa_mont_redc(t, t, m, m0inv, hl, variant);
    gpursa_mont_mul(r, t, rrr, m, m0inv, hl, variant);
}

GPURSA_HD int gpursa_rsa_op(const gpursa_rsa_keydata *kd, const uint32_t *c,
                            const uint32_t *r, const uint32_t *rinv, uint32_t *out,
                            int nl, int variant, int fault_bit)
{
    const int hl = nl / 2;
    uint32_t a[GPURSA_RSA_MAX_LIMBS], b[GPURSA_RSA_MAX_LIMBS];
    uint32_t t[2 * GPURSA_RSA_MAX_HALF];
    uint32_t m1[GPURSA_RSA_MAX_HALF], m2[GPURSA_RSA_MAX_HALF], x[GPURSA_RSA_MAX_HALF];
    uint32_t table[GPURSA_MONT_TABLE_WORDS(GPURSA_RSA_MAX_HALF)];

    /* input checks as masks: all ones = good */
    uint32_t good = gpursa_mp_lt_mask(c, kd->n, nl) & gpursa_mp_lt_mask(r, kd->n, nl) &
                    gpursa_mp_lt_mask(rinv, kd->n, nl);

    /* blinding: a = r*R, b = r^e*R, a = c * r^e (normal form) */
    gpursa_mont_mul(a, r, kd->n_rr, kd->n, kd->n0inv, nl, variant);
    gpursa_mont_exp_public(b, a, kd->e, kd->n, kd->n0inv, nl, variant);
    gpursa_mont_mul(out, a, rinv, kd->n, kd->n0inv, nl, variant); /* r*rinv */
    gpursa_mp_zero(t, nl);
    t[0] = 1;
    good &= gpursa_mp_eq_mask(out, t, nl);
    gpursa_mont_mul(a, c, b, kd->n, kd->n0inv, nl, variant);

    /* the two half exponentiations */
    gpursa_rsa_to_half(x, a, kd->p, kd->p0inv, kd->p_rrr, hl, variant);
    gpursa_mont_exp(m1, x, kd->dp, 32 * hl, kd->p, kd->p0inv, kd->p_one, hl, variant, table);
    gpursa_rsa_to_half(x, a, kd->q, kd->q0inv, kd->q_rrr, hl, variant);
    gpursa_mont_exp(m2, x, kd->dq, 32 * hl, kd->q, kd->q0inv, kd->q_one, hl, variant, table);

    /* Garner: m2 back to normal form, and to Montgomery form mod p; m1 stays
     * in Montgomery form so that multiplying the difference by the plain
     * qinv gives h in normal form. */
    gpursa_mont_from(m2, m2, kd->q, kd->q0inv, hl, variant);
    gpursa_mp_copy(t, m2, hl);
    gpursa_mp_zero(t + hl, hl);
    gpursa_rsa_to_half(x, t, kd->p, kd->p0inv, kd->p_rrr, hl, variant);
    uint32_t borrow = gpursa_mp_sub(m1, m1, x, hl);
    gpursa_mp_and(x, kd->p, 0u - borrow, hl); /* add p back if it went negative */
    (void)gpursa_mp_add(m1, m1, x, hl);
    gpursa_mont_mul(x, m1, kd->qinv, kd->p, kd->p0inv, hl, variant); /* h */
    gpursa_mp_mul(a, x, kd->q, hl, variant);                          /* h*q */
    gpursa_mp_zero(b, nl);
    gpursa_mp_copy(b, m2, hl);
    (void)gpursa_mp_add(a, a, b, nl);                                 /* m' */
    if (fault_bit >= 0) /* test hook, public */
        a[(fault_bit >> 5) % nl] ^= 1u << (fault_bit & 31);

    /* unblind: out = m' * rinv */
    gpursa_mont_mul(b, a, rinv, kd->n, kd->n0inv, nl, variant);
    gpursa_mont_mul(out, b, kd->n_rr, kd->n, kd->n0inv, nl, variant);

    /* check out^e == c */
    gpursa_mont_mul(a, out, kd->n_rr, kd->n, kd->n0inv, nl, variant);
    gpursa_mont_exp_public(b, a, kd->e, kd->n, kd->n0inv, nl, variant);
    gpursa_mont_from(a, b, kd->n, kd->n0inv, nl, variant);
    uint32_t ok = good & gpursa_mp_eq_mask(a, c, nl);
    GPURSA_UNROLL
    for (int i = 0; i < nl; i++)
        out[i] &= ok;

    /* wipe the secrets left in local arrays */
    gpursa_mp_wipe(m1, hl);
    gpursa_mp_wipe(m2, hl);
    gpursa_mp_wipe(x, hl);
    gpursa_mp_wipe(t, 2 * hl);
    gpursa_mp_wipe(a, nl);
    gpursa_mp_wipe(b, nl);
    gpursa_mp_wipe(table, GPURSA_MONT_TABLE_WORDS(hl));
    /* status from masks; the branch-free value is what callers read */
    return (int)((~good & GPURSA_ITEM_BADINPUT) | (good & ~ok & GPURSA_ITEM_FAULT));
}

#endif /* GPURSA_RSA_OP_H */
