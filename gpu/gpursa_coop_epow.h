/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa_coop_epow.h - the two stages of the CUDA path that raise a number to
 * the public exponent e (gpursa_cuda_blind_factor, gpursa_cuda_check in
 * gpursa_cuda_kernels.h), one thread's part of one item, on the CRT kernel's
 * lanes (gpursa_coop.h: T lanes a half, 2T an item):
 *   factor: A = r^e mod n, from r^e mod p and r^e mod q by Garner's
 *           recombination; the blinding stage then forms c_b = c A mod n
 *           (gpursa_coop_nstage.h)
 *   check:  after the unblinding stage's o = m rinv mod n: GPURSA_DEV_ST_OK
 *           only when the status word is GPURSA_DEV_ST_UNBLINDED and
 *           o^e = c modulo p and modulo q (so modulo n); else o = 0 and the
 *           word stays BADINPUT or becomes the preset.
 *
 * Why on the halves: raising to e (17 multiplications for 65537) on 32-bit
 * limbs of the whole modulus cost about as much again as the blinding and
 * the check on FP64 limbs of each half, where the device has full-rate FP64
 * (GPURSA_COOP_FP); each half is a quarter of the work of n, and FP64 limbs
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
 */
#ifndef GPURSA_COOP_EPOW_H
#define GPURSA_COOP_EPOW_H

#ifndef GPURSA_COOP_H_INCLUDED
#error "include gpu/gpursa_coop.h (the CRT kernel's shape) first"
#endif

/* The arguments of one launch of either stage (device pointers). */
typedef struct {
    const void *const *keys;
    const uint32_t *x;          /* factor: r; check: o */
    const uint32_t *c;          /* check: the caller's c */
    uint32_t *out;              /* factor: A; check: o, or 0 unless OK (may be x) */
    int32_t *status;            /* check: the status words */
    uint32_t count, stride;
    int32_t test_skip;          /* -1, or an item the stage leaves alone (tests only) */
} gpursa_epow_args;

#ifdef GPURSA_COOP_FP
/* r = x^e R52 mod m (< 2m, settled lazily) for x R52 (< 2m) and a public e >= 1 */
GPURSA_COOP_FN void gpursa_fp_exp_public(const gpursa_coop_ctx *c, double *r, const double *x, uint64_t e,
                                         const uint64_t *m52, uint64_t mp)
{
    double fm[FP_L];
    int bit = 63;
    while (bit > 0 && !((e >> bit) & 1))
        bit--;
    gpursa_fp_load(c, fm, m52);
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++)
        r[l] = x[l];
    GPURSA_COOP_ROLLED
    while (--bit >= 0) {
        gpursa_fp_sqr(c, r, r, fm, mp);
        if ((e >> bit) & 1)                                  /* e is public */
            gpursa_fp_mul(c, r, r, x, fm, mp);
    }
}
#endif

/* This half's v = x^e: xm = v R mod m and y = v mod m (32-bit slices, < m)
 * for the full-length x = (lo, hi) < m R. t: scratch. */
GPURSA_COOP_FN void gpursa_epow_half(const gpursa_coop_ctx *c, int h, const gpursa_rsa_keydata *kd,
                                     const uint32_t *m, uint32_t m0inv, const uint32_t *lo, const uint32_t *hi,
                                     uint32_t *xm, uint32_t *y, uint32_t *t)
{
#ifdef GPURSA_COOP_FP
    const uint64_t *m52 = h ? kd->q52 : kd->p52;
    const uint64_t mp = h ? kd->q0inv52 : kd->p0inv52;
    double xf[FP_L], rf[FP_L], f[FP_L];
    gpursa_fp_in_full(c, xf, lo, hi, m, m0inv, GPURSA_FP_IN(kd, h), m52, mp);  /* x R52 */
    gpursa_fp_exp_public(c, rf, xf, kd->e, m52, mp);                         /* v R52 */
    gpursa_coop_load(c, t, h ? kd->q_one : kd->p_one);
    gpursa_fp_from32(c, f, t);                                               /* R mod m */
    gpursa_fp_mul_cold(*c, rf, rf, f, m52, mp, 0);
    gpursa_fp_out(c, xm, rf, m);                                             /* v R mod m */
    GPURSA_COOP_UNROLL
    for (int l = 0; l < FP_L; l++) {
        ((volatile double *)xf)[l] = 0;
        ((volatile double *)rf)[l] = 0;
        ((volatile double *)f)[l] = 0;
    }
#else
    uint32_t u[CO_L];
    gpursa_coop_load(c, t, h ? kd->q_rrr : kd->p_rrr);
    gpursa_coop_to_mont(c, u, lo, hi, m, m0inv, t);                         /* x R */
    gpursa_coop_exp_public(c, xm, u, kd->e, m, m0inv);                      /* v R */
    gpursa_coop_wipe(u, CO_L);
#endif
    gpursa_coop_mont(c, y, xm, NULL, NULL, NULL, m, m0inv);                 /* v mod m */
}

/* One thread's part of either stage (check: 0 factor, 1 check). Every
 * thread of a warp calls it, as gpursa_coop_item: lanes past the batch's
 * end work on its last item, lanes left over on the warp's last one, and
 * neither stores. */
GPURSA_COOP_FN void gpursa_epow_item(const gpursa_epow_args *a, uint32_t tid, int check)
{
    gpursa_coop_ctx c;
    uint32_t sub;
    int spare;
    const uint32_t item_raw = gpursa_coop_place(&c, tid, &sub, &spare);
    const int h = (int)(sub / CO_T);                         /* 0: p, 1: q (public) */
    const int live = item_raw < a->count && !spare && item_raw != (uint32_t)a->test_skip;
    const uint32_t item = item_raw < a->count ? item_raw : a->count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a->keys[item];
    const uint32_t m0inv = h ? kd->q0inv : kd->p0inv;
    uint32_t m[CO_L], lo[CO_L], hi[CO_L], xm[CO_L], y[CO_L], s[CO_L], z[CO_L], pm[CO_L], prrr[CO_L], aux[CO_L];

    gpursa_coop_ctx_at(&c, tid, sub);
    const int partner = gpursa_coop_partner(&c, sub);
    gpursa_coop_load(&c, m, h ? kd->q : kd->p);
    gpursa_coop_load_soa(&c, lo, hi, a->x, item, a->stride);
    if (!check) {
        /* x = r < n < m R: the reduction modulo this half's prime is exact
         * (an r >= n, which the blinding stage refuses, gives some value) */
        gpursa_epow_half(&c, h, kd, m, m0inv, lo, hi, xm, y, s);
        gpursa_coop_garner(&c, h, partner, kd, lo, hi, xm, y, s, z, pm, prrr, aux);
        if (live) {
            GPURSA_COOP_UNROLL
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
        gpursa_epow_half(&c, h, kd, m, m0inv, lo, hi, xm, y, s);
        gpursa_coop_mont(&c, z, y, NULL, NULL, NULL, m, m0inv);             /* o^e / R mod m */
        gpursa_coop_load_soa(&c, pm, prrr, a->c, item, a->stride);         /* c (lo, hi) */
        gpursa_coop_mont(&c, s, pm, prrr, NULL, NULL, m, m0inv);            /* c / R mod m */
        ok = gpursa_coop_eq(&c, z, s);                                       /* this half */
        ok &= gpursa_coop_shfl(&c, ok, partner);                             /* and the other */
        ok &= gpursa_coop_eqw(st, GPURSA_DEV_ST_UNBLINDED);
        st = gpursa_coop_status(ok, st, GPURSA_DEV_ST_OK);
        if (live) {
            GPURSA_COOP_UNROLL
            for (int l = 0; l < CO_L; l++)
                a->out[(size_t)(h * CO_H + c.k * CO_L + l) * a->stride + item] = (h ? hi[l] : lo[l]) & ok;
            if (h == 0 && c.k == 0)
                a->status[item] = (int32_t)st;
        }
    }
    gpursa_coop_wipe(lo, CO_L);
    gpursa_coop_wipe(hi, CO_L);
    gpursa_coop_wipe(xm, CO_L);
    gpursa_coop_wipe(y, CO_L);
    gpursa_coop_wipe(s, CO_L);
    gpursa_coop_wipe(z, CO_L);
    gpursa_coop_wipe(m, CO_L);
    gpursa_coop_wipe(pm, CO_L);
    gpursa_coop_wipe(prrr, CO_L);
    gpursa_coop_wipe(aux, CO_L);
}

#endif /* GPURSA_COOP_EPOW_H */
