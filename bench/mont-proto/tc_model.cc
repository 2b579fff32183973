/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tc_model.cc - the host model of bench/mont-proto's tensor-core Montgomery
 * multiplication: tc_algo.h compiled for the host, each of a warp's 32
 * lanes a thread, the warp's mma, shuffles, ballots and __syncwarp emulated
 * in lock step (the PTX fragment layouts of mma.m16n8k32 .u8), every result
 * checked against GMP. Moduli: random odd ones with the top bit set, and
 * 2^NB - 1, 2^(NB-1) + 1, 2^NB - 2^(NB/2) - 1 (long runs of ones and zeros);
 * operands: 0, 1, p - 1, p - 2, words of all ones, random.
 *   usage: tc-model [seed]     (prints one line per case, exit 0 when all pass)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include "tc_host.h"

static pthread_barrier_t emu_bar;
static thread_local int emu_lane;
static uint32_t emu_v[32], emu_a[32][4], emu_b[32][2];

uint32_t tc_emu_lane(void) { return (uint32_t)emu_lane; }
void tc_emu_sync(void) { pthread_barrier_wait(&emu_bar); }

uint32_t tc_emu_shfl(uint32_t v, int src)
{
    uint32_t r;
    emu_v[emu_lane] = v;
    tc_emu_sync();
    r = emu_v[src & 31];
    tc_emu_sync();
    return r;
}

uint32_t tc_emu_ballot(int pred)
{
    uint32_t r = 0;
    emu_v[emu_lane] = pred != 0;
    tc_emu_sync();
    for (int l = 0; l < 32; l++)
        r |= emu_v[l] << l;
    tc_emu_sync();
    return r;
}

static uint32_t emu_byte(uint32_t w, int i) { return (w >> (8 * i)) & 255u; }

/* A[row][k] and B[k][n] of the tile, from the lanes' fragments */
static uint32_t emu_A(int row, int k)
{
    const int g = row & 7, lane = 4 * g + (k % 16) / 4, reg = (row >= 8) + 2 * (k >= 16);
    return emu_byte(emu_a[lane][reg], k % 4);
}

static uint32_t emu_B(int k, int n)
{
    const int lane = 4 * n + (k % 16) / 4;
    return emu_byte(emu_b[lane][k >= 16], k % 4);
}

void tc_emu_mma(uint32_t *d, const uint32_t *a, uint32_t b0, uint32_t b1)
{
    const int g = emu_lane / 4, t = emu_lane % 4;
    for (int i = 0; i < 4; i++)
        emu_a[emu_lane][i] = a[i];
    emu_b[emu_lane][0] = b0;
    emu_b[emu_lane][1] = b1;
    tc_emu_sync();
    for (int r = 0; r < 4; r++) {
        const int row = g + 8 * (r / 2), n = 2 * t + r % 2;
        int32_t s = (int32_t)d[r];
        for (int k = 0; k < 32; k++)
            s += (int32_t)(emu_A(row, k) * emu_B(k, n));
        d[r] = (uint32_t)s;
    }
    tc_emu_sync();
}

template <int NB> struct Warp {
    typedef TcDims<NB> D;
    const TcKey<NB> *key;
    std::vector<uint32_t> rows;
    double x[32][D::F], y[32][D::F];
    uint32_t out[32][D::W];
    int iters, sq;
};

template <int NB> struct LaneArg {
    Warp<NB> *w;
    int lane;
};

template <int NB> static void *lane_main(void *arg)
{
    LaneArg<NB> *la = (LaneArg<NB> *)arg;
    Warp<NB> *w = la->w;
    emu_lane = la->lane;
    for (int it = 0; it < w->iters; it++) {
        uint32_t *wout = it == w->iters - 1 ? w->out[emu_lane] : NULL;
        if (w->sq)
            tc_mont<NB, true>(w->x[emu_lane], w->y[emu_lane], w->rows.data(), w->key->bq.data(), w->key->bp.data(),
                              w->key->p.data(), wout);
        else
            tc_mont<NB, false>(w->x[emu_lane], w->y[emu_lane], w->rows.data(), w->key->bq.data(), w->key->bp.data(),
                               w->key->p.data(), wout);
    }
    return NULL;
}

/* operand for lane l (of 32): edge values first, then random below p */
static void pick(mpz_t v, const mpz_t p, int l, int nb, gmp_randstate_t rs)
{
    switch (l) {
    case 0: mpz_set_ui(v, 0); break;
    case 1: mpz_set_ui(v, 1); break;
    case 2: mpz_sub_ui(v, p, 1); break;
    case 3: mpz_sub_ui(v, p, 2); break;
    case 4: /* the low words all ones */
        mpz_set_ui(v, 1);
        mpz_mul_2exp(v, v, (mp_bitcnt_t)(nb - 32));
        mpz_sub_ui(v, v, 1);
        break;
    case 5: /* every other word all ones */
        mpz_set_ui(v, 0);
        for (int i = 0; i < nb - 64; i += 64)
            for (int b = 0; b < 32; b++)
                mpz_setbit(v, (mp_bitcnt_t)(i + b));
        break;
    default: mpz_urandomm(v, rs, p);
    }
    mpz_mod(v, v, p);
}

template <int NB> static int run_case(const mpz_t p, const char *name, int iters, int sq, gmp_randstate_t rs)
{
    typedef TcDims<NB> D;
    TcKey<NB> key;
    Warp<NB> *w = new Warp<NB>();
    mpz_t xs[32], ys[32], r, rinv, e, got;
    pthread_t th[32];
    LaneArg<NB> la[32];
    int bad = 0;
    key.build(p);
    w->key = &key;
    w->rows.assign(32 * D::RS, 0xdeadbeefu);
    w->iters = iters;
    w->sq = sq;
    mpz_inits(r, rinv, e, got, NULL);
    mpz_setbit(r, NB);
    mpz_invert(rinv, r, p);
    for (int l = 0; l < 32; l++) {
        uint32_t wv[D::W];
        mpz_inits(xs[l], ys[l], NULL);
        pick(xs[l], p, l, NB, rs);
        pick(ys[l], p, (l * 7 + 3) % 32, NB, rs);
        tc_mpz_words(wv, D::W, xs[l]);
        tc_words_to_fp<D::F>(w->x[l], wv, D::W);
        tc_mpz_words(wv, D::W, ys[l]);
        tc_words_to_fp<D::F>(w->y[l], wv, D::W);
    }
    pthread_barrier_init(&emu_bar, NULL, 32);
    for (int l = 0; l < 32; l++) {
        la[l].w = w;
        la[l].lane = l;
        pthread_create(&th[l], NULL, lane_main<NB>, &la[l]);
    }
    for (int l = 0; l < 32; l++)
        pthread_join(th[l], NULL);
    pthread_barrier_destroy(&emu_bar);
    for (int l = 0; l < 32; l++) {
        tc_expect(e, xs[l], ys[l], p, rinv, iters, sq);
        tc_words_mpz(got, w->out[l], D::W);
        if (mpz_cmp(e, got) != 0) {
            if (bad < 3)
                gmp_printf("  lane %d: x %Zx\n    got %Zx\n    exp %Zx\n", l, xs[l], got, e);
            bad++;
        }
        mpz_clears(xs[l], ys[l], NULL);
    }
    printf("%s %4d-bit %-24s %s iters %d: %s (%d/32 wrong)\n", bad ? "FAIL" : "ok  ", NB, name, sq ? "sqr" : "mul",
           iters, bad ? "WRONG" : "all 32 equal GMP", bad);
    mpz_clears(r, rinv, e, got, NULL);
    delete w;
    return bad != 0;
}

template <int NB> static int run_size(gmp_randstate_t rs, int nrand)
{
    mpz_t p;
    int fails = 0;
    mpz_init(p);
    for (int c = 0; c < 3 + nrand; c++) {
        const char *name = "random odd, top bit set";
        mpz_set_ui(p, 0);
        if (c == 0) {
            mpz_setbit(p, NB);
            mpz_sub_ui(p, p, 1);
            name = "2^n - 1";
        } else if (c == 1) {
            mpz_setbit(p, NB - 1);
            mpz_add_ui(p, p, 1);
            name = "2^(n-1) + 1";
        } else if (c == 2) {
            mpz_setbit(p, NB);
            mpz_sub_ui(p, p, 1);
            mpz_clrbit(p, NB / 2);
            name = "2^n - 2^(n/2) - 1";
        } else {
            mpz_urandomb(p, rs, NB);
            mpz_setbit(p, NB - 1);
            mpz_setbit(p, 0);
        }
        for (int sq = 0; sq < 2; sq++) {
            fails += run_case<NB>(p, name, 1, sq, rs);
            fails += run_case<NB>(p, name, 3, sq, rs);
        }
    }
    mpz_clear(p);
    return fails;
}

int main(int argc, char **argv)
{
    gmp_randstate_t rs;
    int fails = 0;
    gmp_randinit_default(rs);
    gmp_randseed_ui(rs, argc > 1 ? strtoul(argv[1], NULL, 0) : 1);
    fails += run_size<512>(rs, 3);
    fails += run_size<1024>(rs, 2);
    fails += run_size<1536>(rs, 1);
    fails += run_size<2048>(rs, 1);
    printf("%s: %d failing case(s)\n", fails ? "FAIL" : "PASS", fails);
    gmp_randclear(rs);
    return fails != 0;
}
