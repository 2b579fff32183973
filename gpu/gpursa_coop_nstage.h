/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_coop_nstage.h - the modulus-n stages around the CRT kernels
 * (gpursa_cuda_blind, gpursa_cuda_unblind in gpursa_cuda_kernels.h), one
 * thread's part of one item, over the COOP arithmetic of gpursa_coop.h.
 *
 * Why: blinding modulo n before the CRT split and unblinding after Garner's
 * recombination, as OpenSSL and the host backend (gpursa_rsa_op.h) do, so that
 * the private exponentiation never sees the caller's input c:
 *   (the factor stage, gpursa_coop_epow.h: A R mod n, A = r^e mod n)
 *   blind:   c_b = c A mod n, and rinv R mod n over rinv; BADINPUT when c,
 *            r or rinv >= n or r rinv != 1 mod n (then nothing derived from
 *            r, rinv or c is stored)
 *   (the CRT kernel: m = c_b^d mod n)
 *   unblind: out = m rinv mod n, and GPURSA_DEV_ST_UNBLINDED only when the
 *            status word was BLINDED and out < n; else out = 0
 * (R = 2^(32 H), this file's Montgomery radix.) Each product modulo n is one
 * Montgomery multiplication, because one factor of each comes in Montgomery
 * form: A R from the factor stage, rinv R from the blinding stage, which
 * needs it for its own check of r rinv anyway.
 *   (the check stage, gpursa_coop_epow.h: OK only when out^e = c mod n)
 * The two stages that raise to e run on the CRT kernel's halves, where that
 * costs a fraction of what it costs here on the whole modulus.
 *
 * Shape: gpursa_nst<S> runs gpursa_coop<S> with S::H = the limbs of
 * n (its "half" is the whole modulus) and S::L limbs a lane (gpursa_shapes.h), so that a
 * group of T = H / L lanes holds one full-length number. Each group runs its
 * own item (item = thread index / T; T divides 32, so no lane idles and no
 * group straddles two warps), and every shuffle and ballot names only the
 * group's lanes: two items of a warp may have keys of different public
 * exponents, whose loops differ in length.
 *
 * Constant time: as gpursa_coop.h. Control flow and addresses depend only on
 * public values (the shape, the lane, the item index, the test hooks); r, rinv, the CRT result m and every value derived from
 * them (c_b, the checks, the status words) are handled as masks and selects.
 * The input c and the modulus n are public. Local arrays are wiped with
 * volatile stores at the end.
 */
#ifndef GPURSA_COOP_NSTAGE_H
#define GPURSA_COOP_NSTAGE_H

#include "gpu/gpursa_coop.h"

/* The arguments of one launch of either stage (device pointers), as
 * gpursa_cuda_args: the batch's arrays, and the unblinding stage's test hooks.
 * A struct of its own, not gpursa_coop_args: that one is the CRT kernel's
 * and follows what that kernel reads. */
typedef struct {
    const void *const *keys;
    const uint32_t *in, *r, *re;
    uint32_t *rinv;                     /* rinv; the blinding stage leaves rinv R there */
    uint32_t *out;
    int32_t *status;
    uint32_t count, stride;
    int32_t test_skip, test_corrupt;    /* -1, or an item (tests only) */
} gpursa_nst_args;

/* The stages of shape S (gpursa_shapes.h: H the limbs of n) */
template <class S>
struct gpursa_nst {
using K = gpursa_coop<S>;
static constexpr int CO_L = S::L, CO_T = S::T;
static_assert(32 % CO_T == 0, "nstage: a group of T lanes must divide the warp");

/* Thread tid's group context; returns its item (which may lie past the
 * batch's end). */
static GPURSA_DEV uint32_t gpursa_nst_place(gpursa_coop_ctx *c, uint32_t tid)
{
    c->k = (int)(tid % CO_T);
    c->lane = (int)(tid & 31u);
    c->gbase = c->lane - c->k;
    c->mask = K::GMASK << c->gbase;
    return tid / CO_T;
}

/* this lane's slice of item `item` of a SoA array of full-length numbers */
static GPURSA_DEV void gpursa_nst_load_soa(const gpursa_coop_ctx *c, uint32_t *x, const uint32_t *soa,
                                           uint32_t item, uint32_t stride)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        x[l] = soa[(size_t)(c->k * CO_L + l) * stride + item];
}

static GPURSA_DEV void gpursa_nst_store_soa(const gpursa_coop_ctx *c, uint32_t *soa, const uint32_t *x,
                                            uint32_t item, uint32_t stride)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        soa[(size_t)(c->k * CO_L + l) * stride + item] = x[l];
}

/* x &= mask, each word */
static GPURSA_DEV void gpursa_nst_and(uint32_t *x, uint32_t mask)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        x[l] &= mask;
}

static GPURSA_DEV void gpursa_nst_wipe(uint32_t *x)
{
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        ((volatile uint32_t *)x)[l] = 0;
}

/* The blinding stage, thread tid (every thread of a warp calls it: lanes
 * past the batch's end work on their last item and store nothing). */
static GPURSA_DEV void gpursa_nst_blind(const gpursa_nst_args *a, uint32_t tid)
{
    gpursa_coop_ctx c;
    const uint32_t item_raw = gpursa_nst_place(&c, tid);
    const int live = item_raw < a->count && item_raw != (uint32_t)a->test_skip;
    const uint32_t item = item_raw < a->count ? item_raw : a->count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a->keys[item];
    uint32_t n[CO_L], rr[CO_L], x[CO_L], r[CO_L], y[CO_L], bad;

    K::gpursa_coop_load(&c, n, kd->n);
    K::gpursa_coop_load(&c, rr, kd->n_rr);
    gpursa_nst_load_soa(&c, x, a->in, item, a->stride);                  /* c */
    bad = ~K::gpursa_coop_lt(&c, x, n);
    gpursa_nst_load_soa(&c, r, a->r, item, a->stride);
    bad |= ~K::gpursa_coop_lt(&c, r, n);
    gpursa_nst_load_soa(&c, y, a->rinv, item, a->stride);
    bad |= ~K::gpursa_coop_lt(&c, y, n);
    K::gpursa_coop_mul(&c, y, y, rr, n, kd->n0inv);                         /* rinv R */
    K::gpursa_coop_mul(&c, rr, r, y, n, kd->n0inv);                         /* r rinv mod n */
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        r[l] = (c.k == 0 && l == 0) ? 1u : 0u;                            /* 1 (public) */
    bad |= ~K::gpursa_coop_eq(&c, rr, r);
    /* A R mod n from the factor stage (< n: Garner's output; what a faulty
     * factor stage leaves gives a c_b that the check refuses) */
    gpursa_nst_load_soa(&c, r, a->re, item, a->stride);
    K::gpursa_coop_mul(&c, x, x, r, n, kd->n0inv);                          /* c A mod n */
    gpursa_nst_and(x, ~bad);
    gpursa_nst_and(y, ~bad);
    if (live) {
        gpursa_nst_store_soa(&c, a->out, x, item, a->stride);
        gpursa_nst_store_soa(&c, a->rinv, y, item, a->stride);
        if (c.k == 0)
            a->status[item] = (int32_t)((bad & GPURSA_DEV_ST_BADINPUT) | (~bad & GPURSA_DEV_ST_BLINDED));
    }
    gpursa_nst_wipe(x);
    gpursa_nst_wipe(r);
    gpursa_nst_wipe(y);
    gpursa_nst_wipe(rr);
}

/* The unblinding stage, thread tid (as gpursa_nst_blind). */
static GPURSA_DEV void gpursa_nst_unblind(const gpursa_nst_args *a, uint32_t tid)
{
    gpursa_coop_ctx c;
    const uint32_t item_raw = gpursa_nst_place(&c, tid);
    const int live = item_raw < a->count && item_raw != (uint32_t)a->test_skip;
    const uint32_t item = item_raw < a->count ? item_raw : a->count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a->keys[item];
    /* test hook (public): all ones for the item whose result gets n added */
    const uint32_t corrupt = item == (uint32_t)a->test_corrupt ? 0xffffffffu : 0u;
    uint32_t n[CO_L], o[CO_L], x[CO_L], y[CO_L], st, ok;

    K::gpursa_coop_load(&c, n, kd->n);
    /* the status word as it was: lane 0 of the group overwrites it at the end,
     * so every lane takes it from a shuffle here rather than from a load the
     * compiler might move after that store */
    st = gpursa_coop_shfl(&c, (uint32_t)a->status[item], c.gbase);
    gpursa_nst_load_soa(&c, x, a->out, item, a->stride);                 /* m */
    gpursa_nst_load_soa(&c, y, a->rinv, item, a->stride);                /* rinv R */
    K::gpursa_coop_mul(&c, o, x, y, n, kd->n0inv);                          /* m rinv mod n */
    GPURSA_UNROLL
    for (int l = 0; l < CO_L; l++)
        x[l] = n[l] & corrupt;
    ok = ~(0u - K::gpursa_coop_add_group(&c, o, x));                               /* o (+ n): no carry out */
    ok &= K::gpursa_coop_lt(&c, o, n);                                       /* ... and o < n */
    ok &= K::gpursa_coop_eqw(st, GPURSA_DEV_ST_BLINDED);
    gpursa_nst_and(o, ok);
    st = K::gpursa_coop_status(ok, st, GPURSA_DEV_ST_UNBLINDED);
    if (live) {
        gpursa_nst_store_soa(&c, a->out, o, item, a->stride);
        if (c.k == 0)
            a->status[item] = (int32_t)st;
    }
    gpursa_nst_wipe(o);
    gpursa_nst_wipe(x);
    gpursa_nst_wipe(y);
}

};

#endif /* GPURSA_COOP_NSTAGE_H */
