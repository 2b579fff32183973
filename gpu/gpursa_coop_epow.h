/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_coop_epow.h - the two stages of the CUDA path that raise a number to
 * the public exponent e (gpursa_cuda_blind_factor, gpursa_cuda_check in
 * gpursa_cuda_kernels.h), one thread's part of one item, on the CRT kernel's
 * lanes (gpursa_coop.h: T lanes a half, 2T an item):
 *   factor: A R_n mod n, for A = r^e mod n and R_n = R^2 = 2^(32 nl) the
 *           Montgomery radix of the modulus-n stages, from A R_n modulo p and
 *           q by Garner's recombination; the blinding stage then forms
 *           c_b = c A mod n in one Montgomery multiplication
 *           (gpursa_coop_nstage.h)
 *   check:  after the unblinding stage's o = m rinv mod n: GPURSA_DEV_ST_OK
 *           only when the status word is GPURSA_DEV_ST_UNBLINDED and
 *           o^e = c modulo p and modulo q (so modulo n); else o = 0 and the
 *           word stays BADINPUT or becomes the preset.
 *
 * Why on the halves: raising to e (17 multiplications for 65537) on 32-bit
 * limbs of the whole modulus cost about as much again as the blinding and
 * the check on FP64 limbs of each half, where the device has full-rate FP64
 * (S::fp64); each half is a quarter of the work of n, and FP64 limbs
 * take fewer instructions a bit. The private exponentiation itself (the CRT
 * kernel) still sees only the blinded c_b: the factor stage reads r, the
 * blinding's random number, and the check reads the caller's c and the
 * result o it is about to be given, public values both, and reduces them
 * modulo p and q in constant time.
 *
 * Constant time: as gpursa_coop.h. Control flow and addresses depend only on
 * public values (the shape, the lane, the item index, the public exponent e,
 * the test hook); r, A, o and the check's outcome are handled as masks and
 * selects. Local arrays are wiped with volatile stores at the end.
 *
 * Each half's x^e is gpursa_coop_half_exp_public: on 32-bit limbs in
 * gpursa_coop.h (gpursa_coop_int<S>), on FP64 limbs (S::fp64) in
 * gpursa_coop_fp.h; gpursa_coop_exp<S> picks one.
 */
#ifndef GPURSA_COOP_EPOW_H
#define GPURSA_COOP_EPOW_H

#include "gpu/gpursa_coop_fp.h"

/* The arguments of one launch of either stage (device pointers). */
typedef struct {
    const void *const *keys;
    const uint32_t *x;          /* factor: r; check: o */
    const uint32_t *c;          /* check: the caller's c */
    uint32_t *out;              /* factor: A R_n mod n; check: o, or 0 unless OK (may be x) */
    int32_t *status;            /* check: the status words */
    uint32_t count, stride;
    int32_t test_skip;          /* -1, or an item the stage leaves alone (tests only) */
} gpursa_epow_args;


/* The stages of shape S (gpursa_shapes.h: the CRT kernel's) */
template <class S>
struct gpursa_epow {
using K = gpursa_coop<S>;
using X = gpursa_coop_exp<S>;                    /* a half's x^e: 32-bit or FP64 limbs */
static constexpr int CO_H = S::H, CO_L = S::L, CO_T = S::T;

/* One thread's part of either stage (check: 0 factor, 1 check). Every
 * thread of a warp calls it, as gpursa_coop_item: lanes past the batch's
 * end work on its last item, lanes left over on the warp's last one, and
 * neither stores. */
static GPURSA_DEV void gpursa_epow_item(const gpursa_epow_args *a, uint32_t tid, int check)
{
    gpursa_coop_ctx c;
    uint32_t sub;
    int spare;
    const uint32_t item_raw = K::gpursa_coop_place(&c, tid, &sub, &spare);
    const int h = (int)(sub / CO_T);                         /* 0: p, 1: q (public) */
    const int live = item_raw < a->count && !spare && item_raw != (uint32_t)a->test_skip;
    const uint32_t item = item_raw < a->count ? item_raw : a->count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a->keys[item];
    const uint32_t m0inv = h ? kd->q0inv : kd->p0inv;
    uint32_t m[CO_L], lo[CO_L], hi[CO_L], xm[CO_L], y[CO_L], s[CO_L], z[CO_L], pm[CO_L], prrr[CO_L], aux[CO_L];

    K::gpursa_coop_ctx_at(&c, tid, sub);
    const int partner = K::gpursa_coop_partner(&c, sub);
    K::gpursa_coop_load(&c, m, h ? kd->q : kd->p);
    K::gpursa_coop_load_soa(&c, lo, hi, a->x, item, a->stride);
    if (!check) {
        /* x = r < n < m R: the reduction modulo this half's prime is exact
         * (an r >= n, which the blinding stage refuses, gives some value).
         * Scaled by R_n = R^2: Garner's recombination is linear, so it
         * gives A R_n mod n from A R_n modulo p and q. */
        X::gpursa_coop_half_exp_public(&c, h, kd, m, m0inv, lo, hi, xm, y, s, 1);
        K::gpursa_coop_garner(&c, h, partner, kd, lo, hi, xm, y, s, z, pm, prrr, aux);
        if (live) {
            GPURSA_UNROLL
            for (int l = 0; l < CO_L; l++)
                a->out[(size_t)(h * CO_H + c.k * CO_L + l) * a->stride + item] = h ? hi[l] : lo[l];
        }
    } else {
        /* the status word as it was: the item's first lane (p group, lane 0)
         * overwrites it at the end, so every lane takes it from a shuffle
         * here rather than from a load the compiler might move after that
         * store */
        const int first = c.gbase - (h ? CO_T : 0);
        uint32_t st = gpursa_coop_shfl(&c, (uint32_t)a->status[item], first), ok;
        /* o < n (the unblinding stage checked it) < m R: exact reductions */
        X::gpursa_coop_half_exp_public(&c, h, kd, m, m0inv, lo, hi, xm, y, s, 0);
        K::gpursa_coop_mont(&c, z, y, NULL, NULL, NULL, m, m0inv);             /* o^e / R mod m */
        K::gpursa_coop_load_soa(&c, pm, prrr, a->c, item, a->stride);         /* c (lo, hi) */
        K::gpursa_coop_mont(&c, s, pm, prrr, NULL, NULL, m, m0inv);            /* c / R mod m */
        ok = K::gpursa_coop_eq(&c, z, s);                                       /* this half */
        ok &= gpursa_coop_shfl(&c, ok, partner);                             /* and the other */
        ok &= K::gpursa_coop_eqw(st, GPURSA_DEV_ST_UNBLINDED);
        st = K::gpursa_coop_status(ok, st, GPURSA_DEV_ST_OK);
        if (live) {
            GPURSA_UNROLL
            for (int l = 0; l < CO_L; l++)
                a->out[(size_t)(h * CO_H + c.k * CO_L + l) * a->stride + item] = (h ? hi[l] : lo[l]) & ok;
            if (h == 0 && c.k == 0)
                a->status[item] = (int32_t)st;
        }
    }
    K::gpursa_coop_wipe(lo, CO_L);
    K::gpursa_coop_wipe(hi, CO_L);
    K::gpursa_coop_wipe(xm, CO_L);
    K::gpursa_coop_wipe(y, CO_L);
    K::gpursa_coop_wipe(s, CO_L);
    K::gpursa_coop_wipe(z, CO_L);
    K::gpursa_coop_wipe(m, CO_L);
    K::gpursa_coop_wipe(pm, CO_L);
    K::gpursa_coop_wipe(prrr, CO_L);
    K::gpursa_coop_wipe(aux, CO_L);
}

};

#endif /* GPURSA_COOP_EPOW_H */
