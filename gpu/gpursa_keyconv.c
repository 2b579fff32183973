/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_keyconv.c - key validation and Montgomery precomputation, run once
 * per key at upload.  Constant time in the secret values like the kernels
 * (doublings with masked subtraction), although it runs only once per key.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>
#include "gpu/gpursa_keyconv.h"

void gpursa_keyconv_cleanse(void *p, size_t len)
{
    /* a volatile function pointer: the compiler cannot prove memset dead */
    static void *(*const volatile do_memset)(void *, int, size_t) = memset;
    if (p != NULL)
        do_memset(p, 0, len);
}

/* Length without leading zero bytes (public lengths). */
static size_t be_len(const unsigned char *b, size_t len)
{
    size_t i = 0;
    while (i < len && b[i] == 0)
        i++;
    return len - i;
}

static int be_bits(const unsigned char *b, size_t len)
{
    size_t l = be_len(b, len);
    if (l == 0)
        return 0;
    int bits = (int)(8 * (l - 1));
    for (unsigned v = b[len - l]; v != 0; v >>= 1)
        bits++;
    return bits;
}

static int be_odd(const unsigned char *b, size_t len)
{
    return len > 0 && (b[len - 1] & 1);
}

int gpursa_keyconv_bits(const gpursa_rsa_key_material *km)
{
    if (km == NULL || km->n == NULL || km->e == NULL || km->p == NULL || km->q == NULL ||
        km->dp == NULL || km->dq == NULL || km->qinv == NULL)
        return 0;
    int bits = be_bits(km->n, km->n_len);
    if (gpursa_size_index(bits) < 0)
        return 0;
    int half = bits / 2;
    if (!be_odd(km->n, km->n_len) || !be_odd(km->e, km->e_len) ||
        be_bits(km->e, km->e_len) > 64)
        return 0;
    if (!be_odd(km->p, km->p_len) || !be_odd(km->q, km->q_len) ||
        be_bits(km->p, km->p_len) < 2 || be_bits(km->q, km->q_len) < 2 ||
        be_bits(km->p, km->p_len) > half || be_bits(km->q, km->q_len) > half ||
        be_bits(km->dp, km->dp_len) > half || be_bits(km->dq, km->dq_len) > half ||
        be_bits(km->qinv, km->qinv_len) > half)
        return 0;
    return bits;
}

/* r = 2^k mod m by k doublings, each with a masked subtraction.  r < m
 * holds throughout, so 2r < 2m fits n limbs plus the carry bit. */
static void pow2_mod(uint32_t *r, int k, const uint32_t *m, int n)
{
    uint32_t d[GPURSA_MONT_MAX_LIMBS];
    gpursa_mp_zero(r, n);
    r[0] = 1;
    for (int i = 0; i < k; i++) {
        uint32_t carry = gpursa_mp_add(r, r, r, n);
        uint32_t borrow = gpursa_mp_sub(d, r, m, n);
        /* take the difference when 2r >= m: carry out, or no borrow */
        uint32_t take = 0u - (carry | (borrow ^ 1));
        gpursa_mp_select(r, d, r, take, n);
    }
    gpursa_keyconv_cleanse(d, sizeof(d));
}

/* R mod m, R^2 mod m and R^3 mod m for R = 2^(32n). */
static void mont_consts(uint32_t *one, uint32_t *rr, uint32_t *rrr, const uint32_t *m,
                        uint32_t m0inv, int n)
{
    pow2_mod(rr, 64 * n, m, n);
    if (one != NULL)
        gpursa_mont_from(one, rr, m, m0inv, n, GPURSA_VARIANT_IMAD);
    if (rrr != NULL)
        gpursa_mont_mul(rrr, rr, rr, m, m0inv, n, GPURSA_VARIANT_IMAD);
}

/* x (n limbs of 32 bits) as fl limbs of 52 bits */
static void to_limbs52(uint64_t *r, const uint32_t *x, int n, int fl)
{
    for (int i = 0; i < fl; i++) {
        uint64_t v = 0;
        for (int b = 0; b < 52; b++) {
            int bit = 52 * i + b;
            if (bit < 32 * n)
                v |= (uint64_t)((x[bit / 32] >> (bit % 32)) & 1u) << b;
        }
        r[i] = v;
    }
}

/* The FP64 constants of one prime m (n limbs, odd) that depend on the limb
 * count fl: R52 mod m and R R52^2 mod m = 2^(2*52 fl + 32 n) mod m, as fl
 * limbs of 52 bits. */
static void fp_rconsts(uint64_t *one, uint64_t *in, const uint32_t *m, int n, int fl)
{
    uint32_t t[GPURSA_MONT_MAX_LIMBS / 2];
    pow2_mod(t, 52 * fl, m, n);
    to_limbs52(one, t, n, fl);
    pow2_mod(t, 2 * 52 * fl + 32 * n, m, n);
    to_limbs52(in, t, n, fl);
    gpursa_keyconv_cleanse(t, sizeof(t));
}

/* ... and the rest: its 52-bit limbs and -m^-1 mod 2^52 */
static void fp_consts(uint64_t *m52, uint64_t *m0inv52, uint64_t *one, uint64_t *in,
                      const uint32_t *m, int n, int fl)
{
    uint64_t m0 = (uint64_t)m[0] | ((uint64_t)m[1] << 32), x = m0;  /* m0 x = 1 mod 8 */
    for (int i = 0; i < 5; i++)                                      /* 3 -> 96 bits */
        x *= 2 - m0 * x;
    *m0inv52 = (0 - x) & ((1ull << 52) - 1);
    to_limbs52(m52, m, n, fl);
    fp_rconsts(one, in, m, n, fl);
}

int gpursa_keyconv_load(gpursa_rsa_keydata *kd, const gpursa_rsa_key_material *km)
{
    if (kd == NULL || km == NULL)
        return GPURSA_GPU_ERR_INVALID;
    memset(kd, 0, sizeof(*kd));
    int bits = gpursa_keyconv_bits(km);
    if (bits == 0)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    int nl = bits / 32, hl = nl / 2;
    kd->bits = bits;
    kd->nl = nl;
    kd->hl = hl;
    size_t elen = be_len(km->e, km->e_len);
    kd->e = 0;
    for (size_t i = km->e_len - elen; i < km->e_len; i++)
        kd->e = (kd->e << 8) | km->e[i];

    /* lengths beyond the limbs are leading zeros (checked above) */
#define LOAD(dst, lim, src, slen)                                              \
    do {                                                                       \
        size_t l_ = be_len(src, slen);                                         \
        gpursa_mp_from_be(dst, lim, (src) + (slen) - l_, l_);                  \
    } while (0)
    LOAD(kd->n, nl, km->n, km->n_len);
    LOAD(kd->p, hl, km->p, km->p_len);
    LOAD(kd->q, hl, km->q, km->q_len);
    LOAD(kd->dp, hl, km->dp, km->dp_len);
    LOAD(kd->dq, hl, km->dq, km->dq_len);
    LOAD(kd->qinv, hl, km->qinv, km->qinv_len);
#undef LOAD

    uint32_t rr[GPURSA_MONT_MAX_LIMBS / 2];
    kd->n0inv = gpursa_mont_m0inv(kd->n[0]);
    kd->p0inv = gpursa_mont_m0inv(kd->p[0]);
    kd->q0inv = gpursa_mont_m0inv(kd->q[0]);
    mont_consts(NULL, kd->n_rr, NULL, kd->n, kd->n0inv, nl);
    mont_consts(kd->p_one, rr, kd->p_rrr, kd->p, kd->p0inv, hl);
    mont_consts(kd->q_one, rr, kd->q_rrr, kd->q, kd->q0inv, hl);
    kd->fl = GPURSA_FP_LIMBS(hl);
    fp_consts(kd->p52, &kd->p0inv52, kd->p_fone, kd->p_fin, kd->p, hl, kd->fl);
    fp_consts(kd->q52, &kd->q0inv52, kd->q_fone, kd->q_fin, kd->q, hl, kd->fl);
    kd->fl_min = GPURSA_FP_LIMBS_MIN(hl);                      /* p52, q52 serve it too */
    fp_rconsts(kd->p_fone_min, kd->p_fin_min, kd->p, hl, kd->fl_min);
    fp_rconsts(kd->q_fone_min, kd->q_fin_min, kd->q, hl, kd->fl_min);

    /* The numbers must belong together, or every result would fail the
     * check: p*q == n, qinv < p and qinv*q == 1 mod p. */
    uint32_t t[GPURSA_MONT_MAX_LIMBS], u[GPURSA_MONT_MAX_LIMBS / 2], one[GPURSA_MONT_MAX_LIMBS / 2];
    gpursa_mp_mul(t, kd->p, kd->q, hl, GPURSA_VARIANT_IMAD);
    uint32_t ok = gpursa_mp_eq_mask(t, kd->n, nl) & gpursa_mp_lt_mask(kd->qinv, kd->p, hl) &
                  gpursa_mp_lt_mask(kd->dp, kd->p, hl) & gpursa_mp_lt_mask(kd->dq, kd->q, hl);
    /* qinv * (q*R) * R^-1 = qinv*q mod p, compared with 1 */
    gpursa_mp_copy(t, kd->q, hl);
    gpursa_mp_zero(t + hl, hl);
    gpursa_mont_redc(t, t, kd->p, kd->p0inv, hl, GPURSA_VARIANT_IMAD); /* q/R mod p */
    gpursa_mont_mul(t, t, kd->p_rrr, kd->p, kd->p0inv, hl, GPURSA_VARIANT_IMAD); /* q*R */
    gpursa_mont_mul(u, kd->qinv, t, kd->p, kd->p0inv, hl, GPURSA_VARIANT_IMAD);
    gpursa_mp_zero(one, hl);
    one[0] = 1;
    ok &= gpursa_mp_eq_mask(u, one, hl);
    gpursa_keyconv_cleanse(t, sizeof(t));
    gpursa_keyconv_cleanse(u, sizeof(u));
    gpursa_keyconv_cleanse(rr, sizeof(rr));
    if (!ok) {
        gpursa_keyconv_cleanse(kd, sizeof(*kd));
        return GPURSA_GPU_ERR_INVALID;
    }
    return GPURSA_GPU_OK;
}
