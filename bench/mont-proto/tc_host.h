/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tc_host.h - host side of the tensor-core form (bench/mont-proto): the two
 * matrices of a modulus as mma B fragments, and GMP helpers shared by the
 * GPU program (mont-proto.cu) and the host model (tc_model.cc).
 */
#ifndef TC_HOST_H
#define TC_HOST_H

#include <gmp.h>
#include <stdint.h>
#include <vector>
#include "tc_algo.h"

/* x as n 32-bit words (x < 2^(32 n)) */
static inline void tc_mpz_words(uint32_t *w, int n, const mpz_t x)
{
    size_t cnt = 0;
    for (int i = 0; i < n; i++)
        w[i] = 0;
    mpz_export(w, &cnt, -1, sizeof(uint32_t), 0, 0, x);
}

static inline void tc_words_mpz(mpz_t x, const uint32_t *w, int n)
{
    mpz_import(x, (size_t)n, -1, sizeof(uint32_t), 0, 0, w);
}

/* The modulus' constants for NB: p's words, and the fragments of
 *   Bq[r][c] = p'_(c-r) for c >= r (p' = -p^-1 mod R, bytes), c < K,
 *   Bp[r][c'] = p_(c-r) for 0 <= c - r < K, c = K - 16 + c' (bytes of p),
 * with rows (k) and columns (n) permuted as tc_algo.h's stages B and C read
 * them: k-tile kt's k-position kp is byte 4 (WT t + 2 kt + kp / 16) + kp % 4,
 * t = (kp % 16) / 4; n-tile n's column nn is lane nn / 2's column 2 n + nn % 2
 * (q: t QCPT + ..., q p: K - 16 + t CCPT + ...). Fragment (n, kt), lane L:
 * b0 bytes i = B[k(kt, 4 (L % 4) + i)][col(n, L / 4)], b1 the same at k + 16. */
template <int NB> struct TcKey {
    typedef TcDims<NB> D;
    std::vector<uint32_t> p;
    std::vector<uint2> bq, bp;

    static int krow(int kt, int kp)
    {
        const int t = (kp % 16) / 4, h = kp / 16, i = kp % 4;
        return 4 * (D::WT * t + 2 * kt + h) + i;
    }

    void build(const mpz_t pm)
    {
        mpz_t r, pinv;
        std::vector<uint32_t> piw(D::W);
        const uint8_t *pb, *qb;
        p.assign(D::W, 0);
        tc_mpz_words(p.data(), D::W, pm);
        mpz_inits(r, pinv, NULL);
        mpz_setbit(r, NB);
        mpz_invert(pinv, pm, r);
        mpz_sub(pinv, r, pinv); /* -p^-1 mod R */
        tc_mpz_words(piw.data(), D::W, pinv);
        mpz_clears(r, pinv, NULL);
        pb = (const uint8_t *)p.data();   /* little-endian host */
        qb = (const uint8_t *)piw.data();
        bq.assign(D::BQ, uint2{0, 0});
        bp.assign(D::BP, uint2{0, 0});
        for (int kind = 0; kind < 2; kind++) {
            const int nt = kind == 0 ? D::NQ : D::NC;
            for (int n = 0; n < nt; n++)
                for (int kt = 0; kt < D::KT; kt++)
                    for (int L = 0; L < 32; L++) {
                        const int nn = L / 4, t = nn / 2, e = nn % 2;
                        const int col = kind == 0 ? D::QCPT * t + 2 * n + e : D::K - 16 + D::CCPT * t + 2 * n + e;
                        uint32_t v[2] = {0, 0};
                        for (int half = 0; half < 2; half++)
                            for (int i = 0; i < 4; i++) {
                                const int row = krow(kt, 16 * half + 4 * (L % 4) + i), dd = col - row;
                                uint32_t byte;
                                if (kind == 0)
                                    byte = dd >= 0 ? qb[dd] : 0u;
                                else
                                    byte = dd >= 0 && dd < D::K ? pb[dd] : 0u;
                                v[half] |= byte << (8 * i);
                            }
                        uint2 &f = (kind == 0 ? bq : bp)[(n * D::KT + kt) * 32 + L];
                        f.x = v[0];
                        f.y = v[1];
                    }
        }
    }
};

/* The expected result of `iters` chained Montgomery steps with radix R:
 * mul: x y^k R^-k, sqr: x^(2^k) R^-(2^k - 1) (mod p) */
static inline void tc_expect(mpz_t out, const mpz_t x, const mpz_t y, const mpz_t p, const mpz_t rinv, int iters, int sq)
{
    mpz_t t, e;
    mpz_inits(t, e, NULL);
    if (sq) {
        mpz_mul(t, x, rinv);
        mpz_mod(t, t, p);
        mpz_set_ui(e, 1);
        mpz_mul_2exp(e, e, (mp_bitcnt_t)iters);
        mpz_powm(t, t, e, p);        /* (x / R)^(2^k) */
        mpz_invert(e, rinv, p);      /* R */
        mpz_mul(t, t, e);
        mpz_mod(out, t, p);
    } else {
        mpz_mul(t, y, rinv);
        mpz_mod(t, t, p);
        mpz_set_ui(e, (unsigned long)iters);
        mpz_powm(t, t, e, p);
        mpz_mul(t, t, x);
        mpz_mod(out, t, p);
    }
    mpz_clears(t, e, NULL);
}

#endif /* TC_HOST_H */
