/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mont-proto - gate 1 of a tensor-core Montgomery multiplication for batches
 * that share one modulus (doc/design.md, "A tensor-core Montgomery
 * multiplication: gate 1"). Standalone: build.sh compiles it with nvcc and
 * GMP; not part of gpursa's build.
 *
 * For each half size (1024, 1536, 2048 bits: RSA-2048/3072/4096's CRT
 * halves), one random odd modulus p shared by a batch of items, each item
 * runs `iters` chained Montgomery multiplications x = x y / R mod p (or
 * squarings x = x^2 / R) in two forms, timed with CUDA events (median of
 * `reps` launches after one warm-up); every item's result is checked
 * against GMP on the host.
 *
 *   fp64  today's form: gpu/gpursa_coop_fp.h's gpursa_fp_mul / gpursa_fp_sqr in
 *         the lane shapes of gpu/kernels_2048f2.cu (2 lanes of 10 52-bit limbs
 *         per 1024-bit half), kernels_3072fw.cu (3 lanes) and kernels_4096f.cu
 *         (4 lanes), built from those files' own macros (fp64_shape.cu).
 *   tc    the new form (tc_algo.h): R = 2^n, a warp = 32 items.
 *         A  T = x y on the FP64 pipe, one item a lane, product scanning over
 *            52-bit limbs; T's 32-bit words to the lane's row (shared memory).
 *         B  q = (T mod R) p' mod R: mma.m16n8k32 u8 x u8 -> s32, A = T's low
 *            bytes (16 items a tile), B = the Toeplitz matrix of p' = -p^-1
 *            mod R (K x K bytes, K = n/8; fragments in shared memory), 4K/32
 *            x K/8 mma a tile; the column sums (< 2^24) carried into q's bytes
 *            in the accumulators' own lanes (a quad's lanes hold a row's
 *            consecutive columns through a permutation of the matrix's rows
 *            and columns), a look-ahead for the carries between the 4 lanes.
 *         C  U = (T + q p) / R: mma with A = q (the normalised accumulators of
 *            B, as they stand) and the Toeplitz band of p, columns K-16..2K-1
 *            only; the carry out of the low half from its top 4 columns
 *            (exact: tc_algo.h, tc_stage_c), T's high words added in.
 *         D  U < 2p to U mod p (one subtraction, selected), to 52-bit limbs.
 *         Outputs are fully reduced; the algorithm is tc_algo.h, the same
 *         source the host model (tc_model.cc) checks against GMP.
 *
 * PREDICTION (written before any measurement). H200: 132 SMs x 4
 * schedulers at ~1.98 GHz, one warp instruction issued a cycle per
 * scheduler (1.05e12/s); FP64 and the integer ALU 16 lanes a cycle per
 * scheduler (a warp instruction every 2 cycles on each); mma.sync
 * m16n8k32 u8 taken at ~8 cycles a scheduler (~2,048 MAC/clk/SM, and
 * ~495e12 MAC/s expected). Both forms are issue-bound (below), so a rate
 * is 528 schedulers x 1.98e9 / (issue cycles an item), and an item's issue
 * cycles are its thread instructions / 32 for tc (one item a lane) and
 * (lanes an item) x (a lane's instructions) / 32 for fp64.
 * 1. First principles, n = 1024 (F = 20 limbs of 52 bits):
 *   fp64: 2F^2 = 800 limb products (mul), F(F+1)/2 + F^2 = 610 (sqr), at
 *     ~7.4 instructions each (the step as it stands) plus ~150 (settle,
 *     shuffles): mul ~6,070, sqr ~4,660 thread instructions an item.
 *   tc: A 400 (mul) / 210 (sqr) products at 5 (3 FP64 + one three-input
 *     64-bit add per two halves) + column carries and words ~430; B 64 mma
 *     + 64 LDS.64 a 16-item tile (8.5 warp instructions an item = 270);
 *     q's carries ~290; C 72 mma + 72 LDS.64 (~290); U's carries and T's
 *     words ~420; D ~200: mul ~3,900, sqr ~2,950.
 *   Tensor pipe: 136 mma / 16 items x 8 = 68 cycles an item; FP64 pipe
 *   400 x 3 x 2 / 32 = 75 (mul): both under the issue time if overlapped.
 *   -> ratio tc / fp64 ~1.55x (mul), ~1.58x (sqr), ideal.
 * 2. Refined from the compiled code (PTX of the loop bodies, nvcc 13
 *   -O3 sm_90; no SASS disassembler here: moves and 32/64-bit conversions
 *   taken as free, 64-bit shifts and masks as 1.5 instructions, a 64-bit
 *   add (paired three-input) as 1):
 *   fp64 1024, a lane's pass over its 10 limbs (T = 2 passes a
 *     multiplication): PTX 2,048 (mul) / 1,865 (sqr) -> ~1,490 / ~1,360
 *     SASS (7.4 a limb product, as measured before); an item 2 lanes x
 *     (2 passes + settle ~120) = ~6,200 / ~5,680 -> 194 / 178 cycles ->
 *     5.4e9 / 5.9e9 multiplications/s (ideal).
 *   tc 1024: PTX 6,157 (mul) / 4,964 (sqr) an item, of which ~1,570 /
 *     ~1,200 moves and conversions; 1,301 / 921 64-bit adds: the carries
 *     of B and C (64-bit packing of 4 columns a word, the quad look-ahead's
 *     two ripples) cost about as much as the FP64 product's own adds. ->
 *     ~4,830 / ~4,020 SASS -> 151 / 126 cycles -> 6.9e9 / 8.3e9 (ideal).
 *   -> ratio 1.28x (mul), 1.41x (sqr) at 1024 bits, ideal.
 *   1536 / 2048 (tc PTX 11,507 / 18,508 mul; fp64 F = 30 / 40 at 7.4 a
 *   limb product): ideal ratios ~1.5x / ~1.6x, but the tc kernel's shared
 *   memory (matrices 77 / 132 KB, rows 51 / 68 KB a 4-warp block) leaves
 *   one block, 4 warps, an SM (fp64: 16), and 2048's mul spills.
 * 3. Measured prediction. Warps in flight: a batch of N items is N / 32
 *   tc warps and N / 16 fp64 warps (1024 bits; N / 10, N / 8 at 1536, 2048),
 *   over 132 SMs: at 4,096 items ~1 tc warp an SM against ~2, at 16,384
 *   ~4 against ~8, at 65,536 ~16 (capped at 12-16 by registers and shared
 *   memory: 130 registers / 70 KB a 4-warp block, or 128 registers / 105
 *   KB an 8-warp block) against 16. With one warp a scheduler or less, each
 *   form runs at its latency, not its issue rate, and the tc form's chains
 *   are longer (4 __syncwarp and shared-memory round trips a multiplication,
 *   the mma's ~30-cycle latency feeding serial carry chains).
 *   1024 bits: batch 4,096 ~0.4-0.6x; 16,384 ~0.6-0.9x; 65,536 mul
 *   ~1.1-1.25x, sqr ~1.2-1.35x. 1536: ~0.6-0.9x at 65,536 (8 warps an SM
 *   at most: 128-179 KB of shared memory a block), less below; 2048:
 *   ~0.5-0.8x at 65,536 (4 warps an SM, and mul spills).
 *   Gate 1 (>= 1.5x at 1024 bits, batches >= 4,096): predicted to FAIL, at
 *   every batch; at 4,096 and 16,384 by a wide margin.
 *   Absolute (1024, batch 65,536): fp64 ~4.3-4.8e9/s mul, ~4.7-5.3e9 sqr;
 *   tc ~5-6e9 mul, ~6-7e9 sqr.
 *
 * Usage: mont-proto [--bits 1024,1536,2048] [--batch 4096,16384,65536]
 *                   [--iters 256] [--reps 5] [--seed 1]
 * Output: '#' lines (device; each kernel's registers, local and shared memory
 * and blocks an SM), then one line per (bits, op, batch):
 *   bits op batch fp64_Mmul/s tc_Mmul/s tc/fp64 fp64_ms tc_ms threads(fp64/tc)
 *   shape(the fastest tc launch shape) check(ok | WRONG)
 * each followed by '#      tc shapes (Mmul/s): ...' (every shape's rate), and
 * at the end the gate's verdict at 1024 bits (least ratio over the batches
 * and both operations) and the count of results checked and wrong. Exit
 * status 0 only when every result (every form, shape and batch) equals GMP's.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <thread>
#include <vector>
#include "tc_host.h"

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "mont-proto: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

/* the FP64 kernels, one object per shape (fp64_shape.cu) */
#define FPB_DECL(n)                                                                                      \
    extern "C" void fpb_shape_##n(int *f, int *t, int *per_warp);                                        \
    extern "C" int fpb_regs_##n(int sq);                                                                 \
    extern "C" cudaError_t fpb_launch_##n(int sq, const uint64_t *x, const uint64_t *y, const uint64_t *m52, \
                                          uint64_t mp, uint64_t *out, int count, int iters, int threads);
FPB_DECL(1024)
FPB_DECL(1536)
FPB_DECL(2048)


/* shared memory of a block of `threads` */
template <int NB> static size_t tc_smem(int threads)
{
    typedef TcDims<NB> D;
    return (size_t)(D::BQ + D::BP) * sizeof(uint2) + D::W * sizeof(uint32_t)
           + (size_t)(threads / 32) * 32 * D::RS * sizeof(uint32_t);
}

/* A block's threads: the most (of max, halved down to 32) that still give
 * every SM a block, so that a small batch is spread over the whole GPU
 * (items_per_warp items a warp) */
static int block_threads(int n, int items_per_warp, int max, int sms)
{
    int t = max;
    while (t > 32 && (n + t / 32 * items_per_warp - 1) / (t / 32 * items_per_warp) < sms)
        t /= 2;
    return t;
}

static int num_sms;

typedef void (*TcKernFn)(const uint32_t *, const uint32_t *, uint32_t *, const uint2 *, const uint2 *,
                         const uint32_t *, int, int);

/* One item a thread: `iters` multiplications of its x by its y (squarings
 * of x), the result's words to out */
template <int NB, bool SQ>
static __device__ __forceinline__ void tc_run(const uint32_t *xin, const uint32_t *yin, uint32_t *out,
                                              const uint2 *gbq, const uint2 *gbp, const uint32_t *gp, int count,
                                              int iters)
{
    typedef TcDims<NB> D;
    extern __shared__ uint4 smem[];
    uint2 *bq = (uint2 *)smem, *bp = bq + D::BQ;
    uint32_t *p = (uint32_t *)(bp + D::BP), *rows = p + D::W + (threadIdx.x / 32) * 32 * D::RS;
    const int raw = blockIdx.x * blockDim.x + threadIdx.x, item = raw < count ? raw : count - 1;
    uint32_t w[D::W];
    double x[D::F], y[D::F];
    for (int i = threadIdx.x; i < D::BQ; i += blockDim.x)
        bq[i] = gbq[i];
    for (int i = threadIdx.x; i < D::BP; i += blockDim.x)
        bp[i] = gbp[i];
    for (int i = threadIdx.x; i < D::W; i += blockDim.x)
        p[i] = gp[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < D::W; i++)
        w[i] = xin[(size_t)item * D::W + i];
    tc_words_to_fp<D::F>(x, w, D::W);
#pragma unroll
    for (int i = 0; i < D::W; i++)
        w[i] = yin[(size_t)item * D::W + i];
    tc_words_to_fp<D::F>(y, w, D::W);
#pragma unroll 1
    for (int it = 0; it < iters; it++)
        tc_mont<NB, SQ>(x, y, rows, bq, bp, p, NULL);
    if (raw < count) {
        uint64_t lim[D::F];
#pragma unroll
        for (int l = 0; l < D::F; l++)
            lim[l] = tc_d2u(x[l]);
#pragma unroll
        for (int i = 0; i < D::W; i++)
            out[(size_t)item * D::W + i] = tc_word_of_limbs(lim, D::F, i);
    }
}

/* The kernel at most TH threads a block, leaving the registers to ptxas'
 * own choice (MB = 0), or with at least MB blocks an SM (a register budget) */
template <int NB, bool SQ, int TH>
static __global__ void __launch_bounds__(TH) tc_kernel(const uint32_t *xin, const uint32_t *yin, uint32_t *out,
                                                       const uint2 *gbq, const uint2 *gbp, const uint32_t *gp,
                                                       int count, int iters)
{
    tc_run<NB, SQ>(xin, yin, out, gbq, gbp, gp, count, iters);
}

template <int NB, bool SQ, int TH, int MB>
static __global__ void __launch_bounds__(TH, MB) tc_kernel_mb(const uint32_t *xin, const uint32_t *yin,
                                                              uint32_t *out, const uint2 *gbq, const uint2 *gbp,
                                                              const uint32_t *gp, int count, int iters)
{
    tc_run<NB, SQ>(xin, yin, out, gbq, gbp, gp, count, iters);
}

template <int NB, bool SQ, int TH, int MB> struct TcK {
    static TcKernFn get(void) { return tc_kernel_mb<NB, SQ, TH, MB>; }
};
template <int NB, bool SQ, int TH> struct TcK<NB, SQ, TH, 0> {
    static TcKernFn get(void) { return tc_kernel<NB, SQ, TH>; }
};

/* The tc kernel in one launch shape (TH, MB): resources, and a launch */
struct TcBufs {
    const uint32_t *x, *y, *p;
    uint32_t *out;
    const uint2 *bq, *bp;
};

struct TcVar {
    int th, mb;
    void (*info)(int sq, cudaFuncAttributes *fa, int *blocks, size_t *smem);
    void (*launch)(int sq, int blocks, int threads, const TcBufs &b, int n, int iters);
};

template <int NB, int TH, int MB> static void tcv_info(int sq, cudaFuncAttributes *fa, int *blocks, size_t *smem)
{
    const TcKernFn k = sq ? TcK<NB, true, TH, MB>::get() : TcK<NB, false, TH, MB>::get();
    *smem = tc_smem<NB>(TH);
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*smem));
    CK(cudaFuncGetAttributes(fa, k));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k, TH, *smem));
}

template <int NB, int TH, int MB>
static void tcv_launch(int sq, int blocks, int threads, const TcBufs &b, int n, int iters)
{
    const TcKernFn k = sq ? TcK<NB, true, TH, MB>::get() : TcK<NB, false, TH, MB>::get();
    k<<<blocks, threads, tc_smem<NB>(threads)>>>(b.x, b.y, b.out, b.bq, b.bp, b.p, n, iters);
}

#define TCV(nb, th, mb) TcVar{th, mb, tcv_info<nb, th, mb>, tcv_launch<nb, th, mb>}

struct Opts {
    std::vector<int> bits, batch;
    int iters = 256, reps = 5;
    unsigned long seed = 1;
};

static std::vector<int> parse_list(const char *s)
{
    std::vector<int> v;
    while (*s) {
        v.push_back(atoi(s));
        s = strchr(s, ',');
        if (!s)
            break;
        s++;
    }
    return v;
}

/* Run fn(i) for i in [0, n) on every host core */
template <class Fn> static void parallel_for(int n, Fn fn)
{
    int nt = (int)std::thread::hardware_concurrency();
    std::vector<std::thread> th;
    nt = nt < 1 ? 1 : nt > 64 ? 64 : nt;
    for (int t = 0; t < nt; t++)
        th.emplace_back([=] {
            for (int i = t; i < n; i += nt)
                fn(i);
        });
    for (auto &x : th)
        x.join();
}

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* the launch `reps` times after a warm-up; median milliseconds */
template <class Fn> static float time_launch(int reps, Fn launch)
{
    cudaEvent_t a, b;
    std::vector<float> ms;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; r++) {
        float t;
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return median(ms);
}

static int total_items, total_wrong;
static double gate_min = 1e30; /* the least tc / fp64 ratio at 1024 bits */

/* One size: both forms, both operations, every batch */
template <int NB> static void run_size(const Opts &o, gmp_randstate_t rs, void (*fshape)(int *, int *, int *),
                                       int (*fregs)(int),
                                       cudaError_t (*flaunch)(int, const uint64_t *, const uint64_t *,
                                                              const uint64_t *, uint64_t, uint64_t *, int, int, int),
                                       const std::vector<TcVar> &tv)
{
    typedef TcDims<NB> D;
    const int nmax = *std::max_element(o.batch.begin(), o.batch.end());
    int F, T, fper;
    mpz_t p, r, r52, rinv, rinv52, t;
    std::vector<__mpz_struct> xs(nmax), ys(nmax);
    std::vector<uint32_t> xw((size_t)nmax * D::W), yw((size_t)nmax * D::W), ow((size_t)nmax * D::W);
    std::vector<uint64_t> xf, yf, of, m52;
    uint64_t mp;
    TcKey<NB> key;
    uint32_t *dxw, *dyw, *dow, *dp;
    uint2 *dbq, *dbp;
    uint64_t *dxf, *dyf, *dof, *dm;
    TcBufs tb;

    fshape(&F, &T, &fper);
    mpz_inits(p, r, r52, rinv, rinv52, t, NULL);
    mpz_urandomb(p, rs, NB);
    mpz_setbit(p, NB - 1);
    mpz_setbit(p, 0);
    mpz_setbit(r, NB);
    mpz_setbit(r52, 52 * F);
    mpz_invert(rinv, r, p);
    mpz_invert(rinv52, r52, p);
    key.build(p);
    xf.assign((size_t)nmax * F, 0);
    yf.assign((size_t)nmax * F, 0);
    of.assign((size_t)nmax * F, 0);
    m52.assign(F, 0);
    {
        size_t cnt;
        mpz_export(m52.data(), &cnt, -1, 8, 0, 12, p);
        mpz_setbit(t, 52);
        mpz_invert(t, p, t);            /* p^-1 mod 2^52 */
        mp = ((1ull << 52) - mpz_get_ui(t)) & ((1ull << 52) - 1);
    }
    for (int i = 0; i < nmax; i++) {
        size_t cnt;
        mpz_inits(&xs[i], &ys[i], NULL);
        /* edge operands first: 0, 1, p - 1, low words all ones */
        if (i < 4) {
            mpz_set_ui(&xs[i], i == 1);
            if (i == 2)
                mpz_sub_ui(&xs[i], p, 1);
            if (i == 3) {
                mpz_setbit(&xs[i], NB - 32);
                mpz_sub_ui(&xs[i], &xs[i], 1);
            }
        } else
            mpz_urandomm(&xs[i], rs, p);
        if (i >= 4 && i < 8)
            mpz_sub_ui(&ys[i], p, (unsigned long)(i - 3));
        else
            mpz_urandomm(&ys[i], rs, p);
        tc_mpz_words(&xw[(size_t)i * D::W], D::W, &xs[i]);
        tc_mpz_words(&yw[(size_t)i * D::W], D::W, &ys[i]);
        mpz_export(&xf[(size_t)i * F], &cnt, -1, 8, 0, 12, &xs[i]);
        mpz_export(&yf[(size_t)i * F], &cnt, -1, 8, 0, 12, &ys[i]);
    }
    CK(cudaMalloc(&dxw, xw.size() * 4));
    CK(cudaMalloc(&dyw, yw.size() * 4));
    CK(cudaMalloc(&dow, ow.size() * 4));
    CK(cudaMalloc(&dp, D::W * 4));
    CK(cudaMalloc(&dbq, key.bq.size() * sizeof(uint2)));
    CK(cudaMalloc(&dbp, key.bp.size() * sizeof(uint2)));
    CK(cudaMalloc(&dxf, xf.size() * 8));
    CK(cudaMalloc(&dyf, yf.size() * 8));
    CK(cudaMalloc(&dof, of.size() * 8));
    CK(cudaMalloc(&dm, (size_t)F * 8));
    CK(cudaMemcpy(dxw, xw.data(), xw.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dyw, yw.data(), yw.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dp, key.p.data(), D::W * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dbq, key.bq.data(), key.bq.size() * sizeof(uint2), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dbp, key.bp.data(), key.bp.size() * sizeof(uint2), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dxf, xf.data(), xf.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dyf, yf.data(), yf.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dm, m52.data(), (size_t)F * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(dow, 0, ow.size() * 4));
    tb.x = dxw, tb.y = dyw, tb.p = dp, tb.out = dow, tb.bq = dbq, tb.bp = dbp;
    for (int sq = 0; sq < 2; sq++) {
        printf("# %4d %s  fp64: %d lanes an item, %d limbs, %d registers, %d items a warp\n", NB, sq ? "sqr" : "mul", T,
               F, fregs(sq), fper);
        for (const TcVar &v : tv) {
            cudaFuncAttributes fa;
            int tcb = 0;
            size_t smem;
            v.info(sq, &fa, &tcb, &smem);
            printf("# %4d %s  tc %dx%d: %d registers, %d B local, %zu B shared a %d-thread block, %d blocks (%d "
                   "warps) an SM\n",
                   NB, sq ? "sqr" : "mul", v.th, v.mb, fa.numRegs, (int)fa.localSizeBytes, smem, v.th, tcb,
                   tcb * v.th / 32);
        }
    }
    fflush(stdout);
    for (int sq = 0; sq < 2; sq++) {
        /* the expected results, per radix (R for tc, R52 for fp64) */
        std::vector<__mpz_struct> e(nmax), e52(nmax);
        parallel_for(nmax, [&](int i) {
            mpz_inits(&e[i], &e52[i], NULL);
            tc_expect(&e[i], &xs[i], &ys[i], p, rinv, o.iters, sq);
            tc_expect(&e52[i], &xs[i], &ys[i], p, rinv52, o.iters, sq);
        });
        for (int n : o.batch) {
            const int fpt = block_threads(n, fper, 256, num_sms);
            float ms_fp, ms_tc = 0;
            std::vector<int> bad_fp(n), bad_tc(n);
            int nbad_fp = 0, nbad_tc = 0, tct = 0, best = 0;
            char vrates[256] = "";
            CK(cudaMemset(dof, 0, (size_t)n * F * 8)); /* no result of an earlier run is checked */
            ms_fp = time_launch(o.reps, [&] { CK(flaunch(sq, dxf, dyf, dm, mp, dof, n, o.iters, fpt)); });
            CK(cudaMemcpy(of.data(), dof, (size_t)n * F * 8, cudaMemcpyDeviceToHost));
            parallel_for(n, [&](int i) {
                mpz_t v, lim;
                mpz_inits(v, lim, NULL);
                /* fp64: lazy limbs (<= 2^52), a value below 2p equal to e52 mod p */
                for (int l = F - 1; l >= 0; l--) {
                    mpz_mul_2exp(v, v, 52);
                    mpz_set_ui(lim, (unsigned long)of[(size_t)i * F + l]);
                    mpz_add(v, v, lim);
                }
                mpz_mul_2exp(lim, p, 1);
                bad_fp[i] = mpz_cmp(v, lim) >= 0;
                mpz_mod(v, v, p);
                bad_fp[i] |= mpz_cmp(v, &e52[i]) != 0;
                mpz_clears(v, lim, NULL);
            });
            for (int i = 0; i < n; i++)
                nbad_fp += bad_fp[i];
            total_items += n;
            /* each tc launch shape, each checked; the fastest is the tc form's rate */
            for (size_t vi = 0; vi < tv.size(); vi++) {
                const TcVar &v = tv[vi];
                const int th = block_threads(n, 32, v.th, num_sms), blocks = (n + th - 1) / th;
                const float ms = time_launch(o.reps, [&] { v.launch(sq, blocks, th, tb, n, o.iters); });
                const size_t at = strlen(vrates);
                CK(cudaMemcpy(ow.data(), dow, (size_t)n * D::W * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemset(dow, 0, (size_t)n * D::W * 4)); /* the next shape writes its own */
                parallel_for(n, [&](int i) {
                    /* tc: fully reduced, equal to e */
                    mpz_t v2;
                    mpz_init(v2);
                    tc_words_mpz(v2, &ow[(size_t)i * D::W], D::W);
                    bad_tc[i] = mpz_cmp(v2, &e[i]) != 0;
                    mpz_clear(v2);
                });
                for (int i = 0; i < n; i++)
                    nbad_tc += bad_tc[i];
                total_items += n;
                snprintf(vrates + at, sizeof(vrates) - at, " %dx%d(%d threads): %.1f", v.th, v.mb, th,
                         (double)n * o.iters / (ms * 1e3));
                if (vi == 0 || ms < ms_tc)
                    ms_tc = ms, tct = th, best = (int)vi;
            }
            total_wrong += nbad_fp + nbad_tc;
            {
                const double r_fp = (double)n * o.iters / (ms_fp * 1e3), r_tc = (double)n * o.iters / (ms_tc * 1e3);
                printf("%5d  %s  %6d  %10.1f  %10.1f  %6.2f  %8.3f  %8.3f  %3d/%3d  %3dx%d  %s\n", NB,
                       sq ? "sqr" : "mul", n, r_fp, r_tc, r_tc / r_fp, ms_fp, ms_tc, fpt, tct, tv[best].th, tv[best].mb,
                       nbad_fp + nbad_tc == 0 ? "ok" : "WRONG");
                printf("#      tc shapes (Mmul/s):%s\n", vrates);
                if (nbad_fp + nbad_tc)
                    printf("#      wrong: fp64 %d of %d, tc %d of %d (all shapes)\n", nbad_fp, n, nbad_tc,
                           n * (int)tv.size());
                if (NB == 1024)
                    gate_min = std::min(gate_min, r_tc / r_fp);
            }
            fflush(stdout);
        }
        for (int i = 0; i < nmax; i++)
            mpz_clears(&e[i], &e52[i], NULL);
    }
    for (int i = 0; i < nmax; i++)
        mpz_clears(&xs[i], &ys[i], NULL);
    mpz_clears(p, r, r52, rinv, rinv52, t, NULL);
    cudaFree(dxw), cudaFree(dyw), cudaFree(dow), cudaFree(dp), cudaFree(dbq), cudaFree(dbp);
    cudaFree(dxf), cudaFree(dyf), cudaFree(dof), cudaFree(dm);
}

int main(int argc, char **argv)
{
    Opts o;
    gmp_randstate_t rs;
    cudaDeviceProp prop;
    int dev, clk = 0;
    o.bits = {1024, 1536, 2048};
    o.batch = {4096, 16384, 65536};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--bits") && v)
            o.bits = parse_list(v), i++;
        else if (!strcmp(a, "--batch") && v)
            o.batch = parse_list(v), i++;
        else if (!strcmp(a, "--iters") && v)
            o.iters = atoi(v), i++;
        else if (!strcmp(a, "--reps") && v)
            o.reps = atoi(v), i++;
        else if (!strcmp(a, "--seed") && v)
            o.seed = strtoul(v, NULL, 0), i++;
        else {
            fprintf(stderr, "usage: mont-proto [--bits 1024,1536,2048] [--batch 4096,16384,65536] [--iters 256] "
                            "[--reps 5] [--seed 1]\n");
            return 2;
        }
    }
    if (o.iters < 1 || o.reps < 1 || o.batch.empty()) {
        fprintf(stderr, "mont-proto: iters, reps and the batches must be positive\n");
        return 2;
    }
    for (int n : o.batch)
        if (n < 1) {
            fprintf(stderr, "mont-proto: a batch must be positive\n");
            return 2;
        }
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    num_sms = prop.multiProcessorCount;
    (void)cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
    printf("# mont-proto: %s, %d SMs, %d MHz; %d chained Montgomery multiplications an item, median of %d launches "
           "after a warm-up\n",
           prop.name, prop.multiProcessorCount, clk / 1000, o.iters, o.reps);
    printf("# rates in millions of Montgomery multiplications per second (batch x iters / time)\n");
    gmp_randinit_default(rs);
    gmp_randseed_ui(rs, o.seed);
    printf("# bits  op   batch  fp64_Mmul/s   tc_Mmul/s  tc/fp64   fp64_ms     tc_ms  threads  shape  check\n");
    printf("# threads: a block's, fp64/tc, the most that still give every SM a block; tc: the fastest of its\n"
           "# launch shapes (TH x MB: at most TH threads a block, at least MB blocks an SM, 0: registers as\n"
           "# ptxas chooses), all checked\n");
    for (int b : o.bits) {
        if (b == 1024)
            run_size<1024>(o, rs, fpb_shape_1024, fpb_regs_1024, fpb_launch_1024,
                           {TCV(1024, 128, 0), TCV(1024, 256, 2)});
        else if (b == 1536)
            run_size<1536>(o, rs, fpb_shape_1536, fpb_regs_1536, fpb_launch_1536,
                           {TCV(1536, 128, 0), TCV(1536, 256, 0)});
        else if (b == 2048)
            run_size<2048>(o, rs, fpb_shape_2048, fpb_regs_2048, fpb_launch_2048, {TCV(2048, 128, 0)});
        else
            fprintf(stderr, "mont-proto: %d bits: not a size of this program (1024, 1536, 2048)\n", b);
    }
    gmp_randclear(rs);
    if (gate_min < 1e30)
        printf("# gate 1 (1024 bits, every batch here, mul and sqr: tc >= 1.5x fp64): %s (least ratio %.2f)\n",
               gate_min >= 1.5 ? "PASS" : "FAIL", gate_min);
    printf("# checked against GMP: %d results, %d wrong\n", total_items, total_wrong);
    return total_wrong != 0;
}
