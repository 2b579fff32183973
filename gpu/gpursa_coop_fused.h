/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_coop_fused.h - one whole private operation in one kernel, one
 * thread's part of one item, on the CRT kernel's lanes (gpursa_coop.h: T
 * lanes a half, 2T an item): the five stages that otherwise run as kernels
 * of their own (the factor and check stages, gpursa_coop_epow.h; blinding
 * and unblinding modulo n, gpursa_coop_nstage.h; the CRT exponentiation,
 * gpursa_coop_item) in the order and with the checks they have there:
 *   blind:   BADINPUT when c, r or rinv >= n or r rinv != 1 mod n;
 *            rinv R_n mod n to the rinv array (read again after the
 *            exponentiation, which needs the registers)
 *   factor:  A R_n mod n, A = r^e, from A R_n modulo p and q by Garner
 *   blind:   c_b = c A mod n (nothing derived from c before this step)
 *   CRT:     m_b = c_b^d mod n, m_b = m r
 *   unblind: o = m_b rinv mod n, with o < n
 *   check:   o^e = c modulo p and modulo q; OK only then
 * R_n = 2^(32 nl) = R^2 (R the half's radix).
 *
 * The modulus-n steps run on the item's 2T lanes as one group of a shape
 * with twice the half's limbs (gpursa_shape_whole<S>): lane `sub` of the item
 * holds limbs sub L .. sub L + L - 1 of a full-length number, which are the
 * CRT layout's lo slice on the p lanes and its hi slice on the q lanes, so
 * the layouts convert with one shuffle a limb (or none).
 *
 * Why: as kernels of their own, the four stages around the exponentiation
 * cost the batch their loads, their launches and their own waves on the
 * SMs (3-7 % of a 16,384-item batch at RSA-2048 to 4096); inside the CRT
 * kernel they run on its lanes with its key values at hand.
 *
 * Constant time: as gpursa_coop.h; the status word, r, rinv, A and every
 * check's outcome are masks and selects. Local arrays are wiped at the end.
 */
#ifndef GPURSA_COOP_FUSED_H
#define GPURSA_COOP_FUSED_H

#include "gpu/gpursa_coop_epow.h"

/* The arguments of one launch (device pointers). */
typedef struct {
    const void *const *keys;
    const uint32_t *in, *r;
    uint32_t *rinv;             /* rinv; rinv R_n mod n is left there */
    uint32_t *out;
    int32_t *status;
    uint32_t count, stride;
    int32_t test_skip, test_corrupt;    /* -1, or an item (tests only) */
} gpursa_fused_args;

/* The whole modulus on the lanes of an item of shape S: 2H limbs, L a lane */
template <class S>
struct gpursa_shape_whole : gpursa_shape_lanes<2 * S::H, S::L> {
};

template <class S>
struct gpursa_fused {
using K = gpursa_coop<S>;
using N = gpursa_coop<gpursa_shape_whole<S>>;
using X = gpursa_coop_exp<S>;
static constexpr int CO_H = S::H, CO_L = S::L, CO_T = S::T;

/* this lane's limbs of a full-length number of a SoA array */
static GPURSA_DEV void gpursa_fused_load(uint32_t *x, const uint32_t *soa, uint32_t sub, uint32_t item,
                                         uint32_t stride)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        x[l] = soa[(size_t)(sub * CO_L + l) * stride + item];
}

static GPURSA_DEV void gpursa_fused_store(uint32_t *soa, const uint32_t *x, uint32_t sub, uint32_t item,
                                          uint32_t stride)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        soa[(size_t)(sub * CO_L + l) * stride + item] = x[l];
}

/* whole-modulus limbs v -> the CRT layout's lo and hi slices */
static GPURSA_DEV void gpursa_fused_split(const gpursa_coop_ctx *c, int h, int partner, uint32_t *lo, uint32_t *hi,
                                          const uint32_t *v)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++) {
        const uint32_t t = gpursa_coop_shfl(c, v[l], partner), w = v[l];
        lo[l] = h ? t : w;
        hi[l] = h ? w : t;
    }
}

/* Garner's output (lo: low half in the p group, hi: high half) -> v */
static GPURSA_DEV void gpursa_fused_join(int h, uint32_t *v, const uint32_t *lo, const uint32_t *hi)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        v[l] = h ? hi[l] : lo[l];
}

/* Where an item's lanes sit: the CRT kernel's context c, the whole
 * modulus' cn, and the item's public facts */
typedef struct {
    gpursa_coop_ctx c, cn;
    uint32_t sub, item;
    int h, partner, live;
} gpursa_fused_at;

/* Before the exponentiation: the blinding's checks (*bad all ones when c,
 * r or rinv >= n or r rinv != 1 mod n), rinv R_n to the rinv array, A R_n
 * by the factor, and c_b = c A mod n (0 when bad) in the CRT layout (lo, hi).
 * Not inlined, nor is gpursa_fused_post: the exponentiation between them then
 * compiles as in the CRT kernel alone (gpursa_coop_item), whose FP64 loops'
 * registers and schedule the other steps would otherwise change. */
static GPURSA_COLD void gpursa_fused_pre(const gpursa_fused_args *a, const gpursa_fused_at *w,
                                         const gpursa_rsa_keydata *kd, uint32_t *lo, uint32_t *hi, uint32_t *bad)
{
    const gpursa_coop_ctx *c = &w->c, *cn = &w->cn;
    const int h = w->h, partner = w->partner;
    const uint32_t sub = w->sub, item = w->item;
    const uint32_t m0inv = h ? kd->q0inv : kd->p0inv;
    uint32_t m[CO_L], pm[CO_L], prrr[CO_L], aux[CO_L], x[CO_L], y[CO_L], z[CO_L], s[CO_L], b;

    N::gpursa_coop_load(cn, z, kd->n);
    N::gpursa_coop_load(cn, s, kd->n_rr);
    gpursa_fused_load(x, a->in, sub, item, a->stride);                    /* c */
    b = ~N::gpursa_coop_lt(cn, x, z);
    gpursa_fused_load(lo, a->r, sub, item, a->stride);                    /* r */
    b |= ~N::gpursa_coop_lt(cn, lo, z);
    gpursa_fused_load(y, a->rinv, sub, item, a->stride);
    b |= ~N::gpursa_coop_lt(cn, y, z);
    N::gpursa_coop_mul(cn, y, y, s, z, kd->n0inv);                       /* rinv R_n */
    N::gpursa_coop_mul(cn, s, lo, y, z, kd->n0inv);                      /* r rinv */
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        hi[l] = (sub == 0 && l == 0) ? 1u : 0u;                           /* 1 (public) */
    b |= ~N::gpursa_coop_eq(cn, s, hi);
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        y[l] &= ~b;
    if (w->live)
        gpursa_fused_store(a->rinv, y, sub, item, a->stride);

    /* factor: A R_n mod n from A R_n modulo p and q (r < n < m R: the
     * reductions are exact) */
    gpursa_fused_split(c, h, partner, lo, hi, lo);
    K::gpursa_coop_load(c, m, h ? kd->q : kd->p);
    X::gpursa_coop_half_exp_public(c, h, kd, m, m0inv, lo, hi, x, y, s, 1);
    K::gpursa_coop_garner(c, h, partner, kd, lo, hi, x, y, s, z, pm, prrr, aux);
    gpursa_fused_join(h, y, lo, hi);                                      /* A R_n */

    /* c_b = c A mod n */
    N::gpursa_coop_load(cn, z, kd->n);
    gpursa_fused_load(x, a->in, sub, item, a->stride);
    N::gpursa_coop_mul(cn, x, x, y, z, kd->n0inv);
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        x[l] &= ~b;
    gpursa_fused_split(c, h, partner, lo, hi, x);
    *bad = b;
    K::gpursa_coop_wipe(x, CO_L);
    K::gpursa_coop_wipe(y, CO_L);
    K::gpursa_coop_wipe(z, CO_L);
    K::gpursa_coop_wipe(s, CO_L);
    K::gpursa_coop_wipe(m, CO_L);
    K::gpursa_coop_wipe(pm, CO_L);
    K::gpursa_coop_wipe(prrr, CO_L);
    K::gpursa_coop_wipe(aux, CO_L);
}

/* After the exponentiation (x = m_b R mod m, this half's): Garner's
 * recombination, the unblinding (o = m_b rinv mod n, o < n), the check (o^e
 * = c modulo p and q) and the stores: o where OK, else 0, and the status word. */
static GPURSA_COLD void gpursa_fused_post(const gpursa_fused_args *a, const gpursa_fused_at *w,
                                          const gpursa_rsa_keydata *kd, const uint32_t *xin, uint32_t bad)
{
    const gpursa_coop_ctx *c = &w->c, *cn = &w->cn;
    const int h = w->h, partner = w->partner;
    const uint32_t sub = w->sub, item = w->item;
    const uint32_t m0inv = h ? kd->q0inv : kd->p0inv;
    /* test hook (public): all ones for the item whose result gets n added */
    const uint32_t corrupt = item == (uint32_t)a->test_corrupt ? 0xffffffffu : 0u;
    uint32_t m[CO_L], pm[CO_L], prrr[CO_L], aux[CO_L], lo[CO_L], hi[CO_L], x[CO_L], y[CO_L], z[CO_L], s[CO_L];
    uint32_t ok, st;

    K::gpursa_coop_load(c, m, h ? kd->q : kd->p);
    K::gpursa_coop_mont(c, y, xin, NULL, NULL, NULL, m, m0inv);            /* m_b mod m */
    K::gpursa_coop_copy(x, xin);
    K::gpursa_coop_garner(c, h, partner, kd, lo, hi, x, y, s, z, pm, prrr, aux);
    gpursa_fused_join(h, x, lo, hi);                                       /* m r */

    /* unblind */
    N::gpursa_coop_load(cn, z, kd->n);
    gpursa_fused_load(y, a->rinv, sub, item, a->stride);                  /* rinv R_n */
    N::gpursa_coop_mul(cn, s, x, y, z, kd->n0inv);                        /* o */
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        x[l] = z[l] & corrupt;
    ok = ~(0u - N::gpursa_coop_add_group(cn, s, x));                              /* o (+ n): no carry out */
    ok &= N::gpursa_coop_lt(cn, s, z) & ~bad;

    /* check: o^e = c modulo p and q (o < n, c < n: exact reductions) */
    gpursa_fused_split(c, h, partner, lo, hi, s);
    X::gpursa_coop_half_exp_public(c, h, kd, m, m0inv, lo, hi, x, y, z, 0);
    K::gpursa_coop_mont(c, z, y, NULL, NULL, NULL, m, m0inv);             /* o^e / R mod m */
    K::gpursa_coop_load_soa(c, pm, prrr, a->in, item, a->stride);          /* c (lo, hi) */
    K::gpursa_coop_mont(c, aux, pm, prrr, NULL, NULL, m, m0inv);          /* c / R mod m */
    {
        uint32_t e = K::gpursa_coop_eq(c, z, aux);                        /* this half */
        ok &= e & gpursa_coop_shfl(c, e, partner);                        /* and the other */
    }
    st = (ok & GPURSA_DEV_ST_OK) | (~ok & ((bad & GPURSA_DEV_ST_BADINPUT) | (~bad & GPURSA_DEV_ST_PRESET)));
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        s[l] &= ok;
    if (w->live) {
        gpursa_fused_store(a->out, s, sub, item, a->stride);
        if (sub == 0)
            a->status[item] = (int32_t)st;
    }
    K::gpursa_coop_wipe(lo, CO_L);
    K::gpursa_coop_wipe(hi, CO_L);
    K::gpursa_coop_wipe(x, CO_L);
    K::gpursa_coop_wipe(y, CO_L);
    K::gpursa_coop_wipe(z, CO_L);
    K::gpursa_coop_wipe(s, CO_L);
    K::gpursa_coop_wipe(m, CO_L);
    K::gpursa_coop_wipe(pm, CO_L);
    K::gpursa_coop_wipe(prrr, CO_L);
    K::gpursa_coop_wipe(aux, CO_L);
}

static GPURSA_DEV void gpursa_fused_item(const gpursa_fused_args *a, uint32_t tid)
{
    gpursa_fused_at w;
    int spare;
    const uint32_t item_raw = K::gpursa_coop_place(&w.c, tid, &w.sub, &spare);
    const int h = (int)(w.sub / CO_T);                       /* 0: p, 1: q (public) */
    const uint32_t item = item_raw < a->count ? item_raw : a->count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a->keys[item];
    const uint32_t m0inv = h ? kd->q0inv : kd->p0inv;
    const uint32_t *dexp = h ? kd->dq : kd->dp;
    uint32_t m[CO_L], lo[CO_L], hi[CO_L], x[CO_L], y[CO_L], bad;

    w.h = h;
    w.item = item;
    w.live = item_raw < a->count && !spare && item_raw != (uint32_t)a->test_skip;
    K::gpursa_coop_ctx_at(&w.c, tid, w.sub);
    w.partner = K::gpursa_coop_partner(&w.c, w.sub);
    w.cn = w.c;
    w.cn.k = (int)w.sub;
    w.cn.gbase = w.c.lane - (int)w.sub;
    gpursa_fused_pre(a, &w, kd, lo, hi, &bad);

    /* m_b = c_b^d mod n by CRT: gpursa_coop_item's steps, written out in this
     * item as in that one (gpursa_coop_item says why they are not a function) */
    const gpursa_coop_ctx c = w.c;
    K::gpursa_coop_load(&c, m, h ? kd->q : kd->p);
    if constexpr (S::fp64) {
        using F = gpursa_coop_fp<S>;
        const uint64_t *m52 = h ? kd->q52 : kd->p52, *fin = GPURSA_FP_IN(F::FP_FULL, kd, h);
        uint64_t mp = h ? kd->q0inv52 : kd->p0inv52;
        double cf[F::FP_L], rf[F::FP_L], t[F::FP_L];
        F::gpursa_fp_in_full(&c, cf, lo, hi, m, m0inv, fin, m52, mp);      /* in R52 */
        F::gpursa_fp_exp(&c, rf, cf, dexp, m52, mp, GPURSA_FP_ONE(F::FP_FULL, kd, h), tid); /* in^d R52 */
        kd = (const gpursa_rsa_keydata *)K::gpursa_coop_opaque(kd);
        K::gpursa_coop_load(&c, m, h ? kd->q : kd->p);
        m52 = h ? kd->q52 : kd->p52;
        mp = h ? kd->q0inv52 : kd->p0inv52;
        K::gpursa_coop_load(&c, y, h ? kd->q_one : kd->p_one);
        F::gpursa_fp_from32(&c, t, y);                                       /* R mod m */
        F::gpursa_fp_mul_cold(c, rf, rf, t, m52, mp, 0);
        F::gpursa_fp_out(&c, x, rf, m);                                      /* in^d R mod m */
        GPURSA_UNROLL
        for (int l = 0; l < F::FP_L; l++) {
            ((volatile double *)cf)[l] = 0;
            ((volatile double *)rf)[l] = 0;
            ((volatile double *)t)[l] = 0;
        }
    } else {
        uint32_t rrr[CO_L], one[CO_L], table[(1 << S::W) * CO_L];
        K::gpursa_coop_load(&c, rrr, h ? kd->q_rrr : kd->p_rrr);
        K::gpursa_coop_load(&c, one, h ? kd->q_one : kd->p_one);
        K::gpursa_coop_to_mont(&c, y, lo, hi, m, m0inv, rrr);              /* in R mod m */
        K::gpursa_coop_exp(&c, x, y, dexp, m, m0inv, one, table);          /* in^d R mod m */
        gpursa_mem_wipe(table, (1 << S::W) * CO_L);
        K::gpursa_coop_wipe(rrr, CO_L);
        K::gpursa_coop_wipe(one, CO_L);
    }
    gpursa_fused_post(a, &w, kd, x, bad);
    K::gpursa_coop_wipe(lo, CO_L);
    K::gpursa_coop_wipe(hi, CO_L);
    K::gpursa_coop_wipe(x, CO_L);
    K::gpursa_coop_wipe(y, CO_L);
    K::gpursa_coop_wipe(m, CO_L);
}
};

#endif /* GPURSA_COOP_FUSED_H */
