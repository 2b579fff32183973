/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tc_algo.h - the tensor-core Montgomery multiplication of bench/mont-proto
 * (mont-proto.cu describes the algorithm and its cost model): one source for
 * the GPU kernel (nvcc) and for the host model (tc_model.cc), where each of
 * a warp's 32 lanes is a host thread and the warp's collective operations
 * (mma, shuffle, ballot, __syncwarp) are emulated in lock step, so the exact
 * code that runs on the GPU is checked against GMP without one.
 *
 * Shapes (NB: bits of the modulus p, a multiple of 256; R = 2^NB):
 *   K = NB/8 bytes, W = NB/32 words, F = 52-bit limbs of a value (20/30/40)
 *   KT = K/32 k-tiles of an m16n8k32 mma, WT = W/4 words of a row per quad lane
 *   NQ = K/8 n-tiles of q = T mod R times p' (all K columns of q)
 *   NC = (K+16)/8 n-tiles of q p: columns K-16 .. 2K-1 (16 below R: the
 *        carry out of the low half, see tc_stage_c)
 * A warp holds 32 items (one a lane for the FP64 product T = a b, two
 * m16 tiles of 16 rows for the tensor-core steps).
 */
#ifndef TC_ALGO_H
#define TC_ALGO_H

#include <stdint.h>

#ifdef __CUDACC__
#define TC_FN static __device__ __forceinline__
#define TC_UNROLL _Pragma("unroll")
#else
#define TC_FN static inline
#define TC_UNROLL
/* the host model's warp (tc_model.cc): lane of the calling thread, and the
 * collective operations, called by all 32 lanes in the same order */
uint32_t tc_emu_lane(void);
uint32_t tc_emu_shfl(uint32_t v, int src);
uint32_t tc_emu_ballot(int pred);
void tc_emu_sync(void);
void tc_emu_mma(uint32_t *d, const uint32_t *a, uint32_t b0, uint32_t b1);
typedef struct {
    uint32_t x, y;
} uint2;
#endif

template <int NB> struct TcDims {
    static constexpr int K = NB / 8, W = NB / 32, F = (NB + 2 + 51) / 52;
    static constexpr int KT = K / 32, WT = W / 4, NQ = K / 8, NC = (K + 16) / 8;
    static constexpr int QCPT = K / 4;        /* q columns a quad lane holds */
    static constexpr int CCPT = (K + 16) / 4; /* q p columns a quad lane holds */
    static constexpr int UT = CCPT / 4;       /* ... as 4-column word slots */
    static constexpr int RS = 2 * W + 4;      /* words of a row in shared memory */
    static constexpr int BQ = KT * NQ * 32, BP = KT * NC * 32; /* uint2 fragments */
    static_assert(NB % 256 == 0 && NB >= 512, "the sizes are multiples of 256 bits, from 512");
};

/* ---- lane-level primitives ------------------------------------------------------- */

#ifdef __CUDACC__
TC_FN uint32_t tc_lane(void) { return threadIdx.x & 31u; }
TC_FN uint32_t tc_shfl(uint32_t v, int src) { return __shfl_sync(0xffffffffu, v, src); }
TC_FN uint32_t tc_ballot(int p) { return __ballot_sync(0xffffffffu, p); }
TC_FN void tc_sync(void) { __syncwarp(); }
/* d += a b: an m16n8k32 tile, u8 inputs, s32 accumulators (PTX fragment
 * layouts: a0/a2 row g, a1/a3 row g + 8, a0/a1 k 4t..4t+3, a2/a3 k 16+4t..;
 * b0 k 4t.., b1 k 16+4t.., n g; d0/d1 row g n 2t, 2t+1, d2/d3 row g + 8;
 * g = lane / 4, t = lane % 4) */
TC_FN void tc_mma(uint32_t *d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
TC_FN uint64_t tc_bits(double x) { return (uint64_t)__double_as_longlong(x); }
TC_FN double tc_from_bits(uint64_t v) { return __longlong_as_double((long long)v); }
#else
TC_FN uint32_t tc_lane(void) { return tc_emu_lane(); }
TC_FN uint32_t tc_shfl(uint32_t v, int src) { return tc_emu_shfl(v, src); }
TC_FN uint32_t tc_ballot(int p) { return tc_emu_ballot(p); }
TC_FN void tc_sync(void) { tc_emu_sync(); }
TC_FN void tc_mma(uint32_t *d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1)
{
    const uint32_t a[4] = {a0, a1, a2, a3};
    tc_emu_mma(d, a, b0, b1);
}
TC_FN uint64_t tc_bits(double x) { return __builtin_bit_cast(uint64_t, x); }
TC_FN double tc_from_bits(uint64_t v) { return __builtin_bit_cast(double, v); }
#endif

#define TC_M52 ((1ull << 52) - 1)
#define TC_HI_BIAS 0x4670000000000000ull /* bits of 2^104 */
#define TC_LO_BIAS 0x4330000000000000ull /* bits of 2^52 */

/* an integer below 2^52 as a double, and back */
TC_FN double tc_u52(uint64_t v) { return tc_from_bits(v + TC_LO_BIAS) - 0x1p52; }
TC_FN uint64_t tc_d2u(double x) { return tc_bits(x + 0x1p52) - TC_LO_BIAS; }

/* the halves of a b (a, b < 2^52) plus the exponent bits of their doubles:
 * hi = HI_BIAS + floor(ab / 2^52), lo = LO_BIAS + ab mod 2^52 (the FMA
 * pair of gpursa_coop_fp.h's gpursa_fp_prod; 128-bit integers on the host) */
TC_FN void tc_prod(double a, double b, uint64_t *hi, uint64_t *lo)
{
#ifdef __CUDACC__
    double h = __fma_rz(a, b, 0x1p104);
    double l = __fma_rn(a, b, __dsub_rn(0x1p104 + 0x1p52, h));
    *hi = tc_bits(h);
    *lo = tc_bits(l);
#else
    unsigned __int128 p = (unsigned __int128)tc_d2u(a) * tc_d2u(b);
    *hi = (uint64_t)(p >> 52) + TC_HI_BIAS;
    *lo = ((uint64_t)p & TC_M52) + TC_LO_BIAS;
#endif
}

/* 32-bit word w of a number whose 52-bit limbs are lim (nl of them) */
TC_FN uint32_t tc_word_of_limbs(const uint64_t *lim, int nl, int w)
{
    const int b = 32 * w, l = b / 52, s = b % 52;
    uint64_t v = lim[l] >> s;
    if (s + 32 > 52 && l + 1 < nl)
        v |= lim[l + 1] << (52 - s);
    return (uint32_t)v;
}

/* 52-bit limb l of a number of nw 32-bit words */
TC_FN uint64_t tc_limb_of_words(const uint32_t *w, int nw, int l)
{
    const int b = 52 * l, i = b / 32, s = b % 32;
    uint64_t v = (uint64_t)w[i] >> s;
    if (i + 1 < nw)
        v |= (uint64_t)w[i + 1] << (32 - s);
    if (s > 12 && i + 2 < nw)
        v |= (uint64_t)w[i + 2] << (64 - s);
    return v & TC_M52;
}

/* x (nw words, below 2^(52 F)) as F doubles */
template <int F> TC_FN void tc_words_to_fp(double *x, const uint32_t *w, int nw)
{
    TC_UNROLL
    for (int l = 0; l < F; l++)
        x[l] = (52 * l < 32 * nw) ? tc_u52(tc_limb_of_words(w, nw, l)) : 0.0;
}

/* ---- stage A: T = a b (a^2 for SQ) on the FP64 pipe, one item a lane ------------ *
 * Product scanning over 64-bit column sums: the lo halves of a_i b_j go to
 * column i + j, the hi halves to column i + j + 1; the exponent bits enter
 * every sum and are taken off once per column (their count is public). A
 * column is then carried into the next one and leaves as a limb below 2^52;
 * T's 32-bit words go to the lane's row in shared memory as soon as the
 * limbs under them are final. A column holds at most 2F halves of at most
 * 2^53 (doubled in a squaring): below 2^60, no overflow. */
template <int NB, bool SQ> TC_FN void tc_stage_a(const double *x, const double *y, uint32_t *row)
{
    typedef TcDims<NB> D;
    uint64_t carry = 0, nxt = 0, prev = 0, nhi = 0;
    TC_UNROLL
    for (int c = 0; c < 2 * D::F; c++) {
        uint64_t cur = nxt, nlo = 0, nh = 0, limb, pl = 0, ph = 0;
        int held = 0;
        nxt = 0;
        TC_UNROLL
        for (int i = 0; i < D::F; i++) {
            const int j = c - i;
            uint64_t hi, lo;
            if (j < 0 || j >= D::F || (SQ && i > j))
                continue;
            tc_prod(x[i], SQ ? x[j] : y[j], &hi, &lo);
            if (SQ && i < j) {
                lo += lo;
                hi += hi;
                nlo += 2;
                nh += 2;
            } else {
                nlo += 1;
                nh += 1;
            }
            if (held) { /* two products a three-input add */
                cur += pl + lo;
                nxt += ph + hi;
                held = 0;
            } else {
                pl = lo;
                ph = hi;
                held = 1;
            }
        }
        if (held) {
            cur += pl;
            nxt += ph;
        }
        cur -= nlo * TC_LO_BIAS + nhi * TC_HI_BIAS;
        nhi = nh;
        cur += carry;
        limb = cur & TC_M52;
        carry = cur >> 52;
        /* words whose last bit is in limb c: (32 w + 31) / 52 == c */
        TC_UNROLL
        for (int w = (52 * c) / 32 - 1; w <= (52 * c + 51) / 32; w++) {
            if (w < 0 || w >= 2 * D::W || (32 * w + 31) / 52 != c)
                continue;
            {
                const uint64_t two[2] = {prev, limb};
                const int b = 32 * w - 52 * (c - 1);        /* bit offset in prev:limb */
                uint32_t v;
                if (b >= 52)
                    v = (uint32_t)(limb >> (b - 52));
                else
                    v = (uint32_t)((two[0] >> b) | (two[1] << (52 - b)));
                row[w] = v;
            }
        }
        prev = limb;
    }
}

/* ---- carries across a quad's four lanes -------------------------------------------- *
 * Lane t of a quad holds words of one number, lane t's above lane t-1's, plus a
 * carry out cout (below 2^32) of its own words. Adds lane t-1's cout into
 * lane t's words, then the 0/1 carries that leave: with G the lanes that
 * generate one and P the lanes whose words are all ones, the lanes that
 * receive one are ((G << 1) + P) ^ P (gpursa_coop_resolve's look-ahead).
 * Returns what leaves the quad's top lane: its cout plus the last carry. */
template <int N> TC_FN uint32_t tc_add_word(uint32_t *w, uint32_t cin)
{
    uint64_t s = cin;
    TC_UNROLL
    for (int i = 0; i < N; i++) {
        s += w[i];
        w[i] = (uint32_t)s;
        s >>= 32;
    }
    return (uint32_t)s;
}

template <int N> TC_FN uint32_t tc_quad_carry(uint32_t *w, uint32_t cout)
{
    const uint32_t lane = tc_lane(), t = lane & 3u, sh = lane & ~3u;
    uint32_t cin = tc_shfl(cout, t == 0 ? (int)lane : (int)lane - 1), g, all = 0xffffffffu, G, P, Kc;
    cin = t == 0 ? 0u : cin;
    g = tc_add_word<N>(w, cin);
    TC_UNROLL
    for (int i = 0; i < N; i++)
        all &= w[i];
    G = (tc_ballot(g != 0) >> sh) & 15u;
    P = (tc_ballot(all == 0xffffffffu) >> sh) & 15u;
    Kc = ((G << 1) + P) ^ P;
    (void)tc_add_word<N>(w, (Kc >> t) & 1u);
    return cout + ((Kc >> 4) & 1u);
}

/* d = n-tile n of the product of the lane's A words (ag: row g, ah: row g + 8;
 * k-tile kt's a0/a2 are words 2 kt, 2 kt + 1) and the fragments bf */
template <int KT>
TC_FN void tc_tile(uint32_t *d, const uint32_t *ag, const uint32_t *ah, const uint2 *bf, int n, uint32_t lane)
{
    d[0] = d[1] = d[2] = d[3] = 0;
    TC_UNROLL
    for (int kt = 0; kt < KT; kt++) {
        const uint2 b = bf[(n * KT + kt) * 32 + lane];
        tc_mma(d, ag[2 * kt], ah[2 * kt], ag[2 * kt + 1], ah[2 * kt + 1], b.x, b.y);
    }
}

/* A tile's columns (d: two of row g, two of row g + 8) into 4-column word
 * slots: an even tile's pair as p = d0 + d1 2^8, an odd one's added on top */
TC_FN void tc_slot_lo(const uint32_t *d, uint64_t *pg, uint64_t *ph)
{
    *pg = (uint64_t)d[0] + ((uint64_t)d[1] << 8);
    *ph = (uint64_t)d[2] + ((uint64_t)d[3] << 8);
}

TC_FN void tc_slot_hi(const uint32_t *d, uint64_t *zg, uint64_t *zh)
{
    *zg += ((uint64_t)d[0] << 16) + ((uint64_t)d[1] << 24);
    *zh += ((uint64_t)d[2] << 16) + ((uint64_t)d[3] << 24);
}

/* ---- stage B: q = (T mod R) p' mod R on the tensor cores --------------------------- *
 * rows: the m16 tile's 16 rows (T's words, RS apart). Quad lane t holds words
 * t WT .. t WT + WT - 1 of rows g and g + 8 as the A fragments: k-tile kt's
 * a0/a2 are its words 2 kt and 2 kt + 1 (the B matrices' rows are permuted
 * to match, tc_host.h). The n-tiles' columns are permuted so that lane t's
 * accumulators are q's columns t QCPT + 2 n + {0,1}: each lane carries its
 * own run of columns into words, and those are the A fragments of stage C
 * as they stand. Column sums are below K 255^2 < 2^24. */
template <int NB> TC_FN void tc_stage_b(const uint32_t *rows, const uint2 *bq, uint32_t *qg, uint32_t *qh)
{
    typedef TcDims<NB> D;
    const uint32_t lane = tc_lane(), g = lane >> 2, t = lane & 3u;
    uint32_t ag[D::WT], ah[D::WT];
    uint64_t cg = 0, ch = 0, pg = 0, ph = 0;
    TC_UNROLL
    for (int m = 0; m < D::WT; m++) {
        ag[m] = rows[g * D::RS + t * D::WT + m];
        ah[m] = rows[(g + 8) * D::RS + t * D::WT + m];
    }
    TC_UNROLL
    for (int n = 0; n < D::NQ; n++) {
        uint32_t d[4];
        tc_tile<D::KT>(d, ag, ah, bq, n, lane);
        if (n % 2 == 0) {
            tc_slot_lo(d, &pg, &ph);
        } else {
            uint64_t zg = cg + pg, zh = ch + ph;
            tc_slot_hi(d, &zg, &zh);
            qg[n / 2] = (uint32_t)zg;
            qh[n / 2] = (uint32_t)zh;
            cg = zg >> 32;
            ch = zh >> 32;
        }
    }
    /* q mod R: what leaves the top lane is dropped */
    (void)tc_quad_carry<D::WT>(qg, (uint32_t)cg);
    (void)tc_quad_carry<D::WT>(qh, (uint32_t)ch);
}

/* ---- stage C: U = (T + q p) / R on the tensor cores -------------------------------- *
 * Columns K-16 .. 2K-1 of q p, quad lane t holding t CCPT + 2 n + {0,1} above
 * K - 16, in 4-column word slots. Since T + q p = 0 mod R, the low half
 * T_lo + L (L: the columns below K, unnormalised) is X R for an integer X,
 *   X = sum_{c<K} v_c 2^(8(c-K)),  v_c = column c + byte c of T,
 * and the slot of columns K-4..K-1 gives it: with Z = that slot packed plus
 * T's word W-1, X - Z/2^32 lies in [0, 2^24 2^-40 / (1 - 2^-8)), so
 * X = ceil(Z / 2^32); columns below K-4 are not needed. X is then the carry
 * into the high half, U = T_hi + (columns >= K) + X, below 2p for a, b < p
 * (q < R), so U has W words and a top bit; the row's words 0..W take it.
 * Lane 0's slots 0..2 (columns K-16..K-5) are computed and dropped. */
template <int NB> TC_FN void tc_stage_c(uint32_t *rows, const uint2 *bp, const uint32_t *qg, const uint32_t *qh)
{
    typedef TcDims<NB> D;
    const uint32_t lane = tc_lane(), g = lane >> 2, t = lane & 3u;
    const int u0 = (int)((D::K + 16) * t / 16) - 4; /* the first U word of lane t > 0 */
    uint32_t tg[D::UT], th[D::UT], ug[D::UT], uh[D::UT];
    uint64_t cg = 0, ch = 0, pg = 0, ph = 0;
    /* T's words this lane adds: slot m takes T word W + u0 + m (lane 0: W - 1
     * at slot 3, W + m - 4 above it, none below) */
    TC_UNROLL
    for (int m = 0; m < D::UT; m++) {
        const int idx = t == 0 ? (m == 3 ? D::W - 1 : D::W + m - 4) : D::W + u0 + m;
        const int ok = t != 0 || m >= 3;
        tg[m] = ok ? rows[g * D::RS + idx] : 0u;
        th[m] = ok ? rows[(g + 8) * D::RS + idx] : 0u;
    }
    TC_UNROLL
    for (int n = 0; n < D::NC; n++) {
        uint32_t d[4];
        tc_tile<D::KT>(d, qg, qh, bp, n, lane);
        if (n % 2 == 0) {
            tc_slot_lo(d, &pg, &ph);
        } else {
            const int m = n / 2;
            uint64_t zg = cg + pg + tg[m], zh = ch + ph + th[m];
            tc_slot_hi(d, &zg, &zh);
            if (m < 3) {                /* lane 0: columns below K-4, not needed */
                ug[m] = t == 0 ? 0u : (uint32_t)zg;
                uh[m] = t == 0 ? 0u : (uint32_t)zh;
                cg = t == 0 ? 0u : zg >> 32;
                ch = t == 0 ? 0u : zh >> 32;
            } else if (m == 3) {        /* lane 0: X = ceil(Z / 2^32) */
                ug[m] = t == 0 ? 0u : (uint32_t)zg;
                uh[m] = t == 0 ? 0u : (uint32_t)zh;
                cg = t == 0 ? (zg + 0xffffffffull) >> 32 : zg >> 32;
                ch = t == 0 ? (zh + 0xffffffffull) >> 32 : zh >> 32;
            } else {
                ug[m] = (uint32_t)zg;
                uh[m] = (uint32_t)zh;
                cg = zg >> 32;
                ch = zh >> 32;
            }
        }
    }
    {
        const uint32_t topg = tc_quad_carry<D::UT>(ug, (uint32_t)cg);
        const uint32_t toph = tc_quad_carry<D::UT>(uh, (uint32_t)ch);
        tc_sync(); /* every lane has read its rows' T words */
        TC_UNROLL
        for (int m = 0; m < D::UT; m++) {
            if (t == 0 && m < 4)
                continue;
            const int idx = t == 0 ? m - 4 : u0 + m;
            rows[g * D::RS + idx] = ug[m];
            rows[(g + 8) * D::RS + idx] = uh[m];
        }
        if (t == 3) {
            rows[g * D::RS + D::W] = topg;
            rows[(g + 8) * D::RS + D::W] = toph;
        }
    }
}

/* ---- stage D: the lane's item from its row: U < 2p to U mod p, as F doubles ------ */
template <int NB> TC_FN void tc_stage_d(const uint32_t *row, const uint32_t *p, double *x, uint32_t *wout)
{
    typedef TcDims<NB> D;
    uint32_t u[D::W], d[D::W], keep;
    uint64_t bw = 0;
    TC_UNROLL
    for (int w = 0; w < D::W; w++) {
        u[w] = row[w];
        bw = (uint64_t)u[w] - p[w] - (bw >> 63);
        d[w] = (uint32_t)bw;
    }
    /* U < p (no top bit, a borrow out): keep U */
    keep = 0u - (uint32_t)((row[D::W] == 0) & (uint32_t)(bw >> 63));
    TC_UNROLL
    for (int w = 0; w < D::W; w++)
        u[w] = (u[w] & keep) | (d[w] & ~keep);
    tc_words_to_fp<D::F>(x, u, D::W);
    if (wout != NULL) {
        TC_UNROLL
        for (int w = 0; w < D::W; w++)
            wout[w] = u[w];
    }
}

/* One Montgomery multiplication x = x y / R mod p (x = x^2 / R for SQ) for the
 * warp's 32 items, x, y < p (F doubles each, limbs below 2^52); rows: the
 * warp's 32 rows of RS words; bq, bp: the two matrices' fragments; p: W words
 * (all in shared memory). wout (or NULL): the result's words. */
template <int NB, bool SQ>
TC_FN void tc_mont(double *x, const double *y, uint32_t *rows, const uint2 *bq, const uint2 *bp, const uint32_t *p,
                   uint32_t *wout)
{
    typedef TcDims<NB> D;
    const uint32_t lane = tc_lane();
    tc_stage_a<NB, SQ>(x, y, rows + lane * D::RS);
    tc_sync();
    TC_UNROLL
    for (int mt = 0; mt < 2; mt++) {
        uint32_t qg[D::WT], qh[D::WT];
        tc_stage_b<NB>(rows + mt * 16 * D::RS, bq, qg, qh);
        tc_stage_c<NB>(rows + mt * 16 * D::RS, bp, qg, qh);
    }
    tc_sync();
    tc_stage_d<NB>(rows + lane * D::RS, p, x, wout);
    tc_sync(); /* the rows are written again by the next stage A */
}

#endif /* TC_ALGO_H */
