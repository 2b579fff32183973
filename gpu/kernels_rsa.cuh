/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: the private-operation kernels, one thread per item
 * (variants IMAD and XMAD: gpursa_fx1_kernel) and two threads per item
 * (variant FAST: gpursa_fx2_kernel), over the arithmetic of gpursa_mont.h.
 *
 * COOP, 2T threads per private operation: gpursa_coop.h (the size's file
 * names its shape, gpursa_shapes.h).
 *
 * FAST, two threads per private operation.
 * Why: with one thread per operation a batch of B items is B threads, and a
 * Hopper GPU needs some 50-70 thousand threads in flight before its integer
 * units are busy; a server has a few thousand operations in flight. Here the
 * two CRT halves of an item run in two neighbouring lanes of a warp, so the
 * GPU fills with half the batch, and every big number a thread holds is
 * half-length (no full-length Montgomery arithmetic at all).
 *
 * Every kernel here computes m = in^d mod n by CRT and nothing else: in is
 * the blinded input c_b < n that the blinding stage wrote, and the
 * unblinding and check stages after it unblind m, check it and write the status
 * (gpursa_cuda_kernels.h). Lane role h (0: p, 1: q; public) works modulo its
 * prime m:
 *   in_m  the full-length in reduced mod m into Montgomery form (one
 *         reduction, one multiplication by R^3)
 *   y     = in_m^d_m = in^d mod m
 *   Garner in lane p: h = (y_p - y_q) * qinv mod p; out = y_q + q * h
 *   lane p writes the low half of out, lane q the high half (lane p's, by a
 *   shuffle).
 *
 * Code size and registers: every Montgomery operation is one __noinline__
 * function per (size, variant) working on operands in the thread's local
 * memory (16-byte aligned, so they move as 128-bit loads). Fully inlining a
 * whole private operation makes dozens of copies of a 4000-instruction
 * multiplication: 255 registers with spills, minutes of ptxas per kernel and
 * an instruction stream no cache holds. The copy in and out costs about
 * 3 * H loads and stores against ~4H^2 multiply-adds.
 *
 * Constant time: no branch and no address depends on secret values. The
 * role only selects which prime a lane uses; the exponent windows are fixed
 * (all 32*H bits of d_m); the window table is read whole and the entry
 * chosen with masks; final subtractions are masked (gpursa_mont.h).
 */
#ifndef GPURSA_KERNELS_RSA_CUH
#define GPURSA_KERNELS_RSA_CUH

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gpu/gpursa_rsa_op.h"
#include "gpu/gpursa_mont_rows.h"
#ifndef GPURSA_FX_HOST_TEST /* tests/gpu/test_gpu_fx.cc: the kernels alone, on the host */
#include "gpu/gpursa_cuda_kernels.h"
#endif

/* 4 bits: 16 table entries of H limbs. 5 bits saves 3% of the
 * multiplications but doubles the table every window reads in full. */
#define GPURSA_FAST_WINDOW 4

/* ---- Montgomery operations on local-memory operands ------------------------ */

/* IMAD on halves up to 32 limbs uses gpursa_mont.h fully unrolled; larger
 * halves and the 16-bit variant the rolled row loop of gpursa_mont_rows.h
 * (code size: the unrolled two-pass multiplication at 32 limbs alone keeps
 * ptxas busy for more than 15 minutes per architecture). V == FAST selects
 * the 64-bit product ("wide") form of the IMAD arithmetic, gpursa_mont_rows.h. */
#define GPURSA_FX_ROWS(H, V) ((H) > 32 || (V) == GPURSA_VARIANT_XMAD)

template <int H>
static __device__ __forceinline__ void gpursa_fx_load(uint32_t *r, const uint32_t *a)
{
#pragma unroll
    for (int j = 0; j < H; j++)
        r[j] = a[j];
}
template <int H>
static __device__ __forceinline__ void gpursa_fx_store(uint32_t *r, const uint32_t *a)
{
#pragma unroll
    for (int j = 0; j < H; j++)
        r[j] = a[j];
}

/* r = a * b / R mod m. b is read row by row from memory (one limb per row)
 * so that only a, m and the accumulator occupy registers. */
template <int H, int V>
static __device__ __noinline__ void gpursa_fx_mul(uint32_t *r, const uint32_t *a, const uint32_t *b,
                                                  const uint32_t *m, uint32_t m0inv)
{
    uint32_t ra[H], rm[H], rr[H];
    gpursa_fx_load<H>(ra, a);
    gpursa_fx_load<H>(rm, m);
    if constexpr (V == GPURSA_VARIANT_FAST && H > 32)
        gpursa_wide_rows_mont_mul(rr, ra, b, rm, m0inv, H);
    else if constexpr (V == GPURSA_VARIANT_FAST)
        gpursa_wide_mont_mul(rr, ra, b, rm, m0inv, H);
    else if constexpr (GPURSA_FX_ROWS(H, V))
        gpursa_rows_mont_mul(rr, ra, b, rm, m0inv, H, V);
    else
        gpursa_mont_mul(rr, ra, b, rm, m0inv, H, V);
    gpursa_fx_store<H>(r, rr);
}

/* r = a^2 / R mod m */
template <int H, int V>
static __device__ __noinline__ void gpursa_fx_sqr(uint32_t *r, const uint32_t *a, const uint32_t *m,
                                                  uint32_t m0inv)
{
    uint32_t ra[H], rm[H], rr[H];
    gpursa_fx_load<H>(ra, a);
    gpursa_fx_load<H>(rm, m);
    if constexpr (V == GPURSA_VARIANT_FAST && H > 32)
        gpursa_wide_rows_mont_mul(rr, ra, a, rm, m0inv, H);
    else if constexpr (V == GPURSA_VARIANT_FAST)
        gpursa_wide_mont_sqr(rr, ra, rm, m0inv, H);
    else if constexpr (GPURSA_FX_ROWS(H, V))
        gpursa_rows_mont_mul(rr, ra, a, rm, m0inv, H, V);   /* rows: a * a, b from memory */
    else
        gpursa_mont_sqr(rr, ra, rm, m0inv, H, V);
    gpursa_fx_store<H>(r, rr);
}

/* r = x / R mod m for a full-length x (2H limbs) < m R */
template <int H, int V>
static __device__ __noinline__ void gpursa_fx_redc(uint32_t *r, const uint32_t *x, const uint32_t *m,
                                                   uint32_t m0inv)
{
    uint32_t rm[H], rr[H];
    gpursa_fx_load<H>(rm, m);
    if constexpr (GPURSA_FX_ROWS(H, V)) {
        gpursa_rows_mont_redc(rr, x, rm, m0inv, H, V);
    } else if constexpr (V == GPURSA_VARIANT_FAST) {
        uint32_t t[2 * H];
        gpursa_fx_load<2 * H>(t, x);
        gpursa_wide_mont_redc(rr, t, rm, m0inv, H);
    } else {
        uint32_t t[2 * H];
        gpursa_fx_load<2 * H>(t, x);
        gpursa_mont_redc(rr, t, rm, m0inv, H, V);
    }
    gpursa_fx_store<H>(r, rr);
}

/* r[2H] = a * b */
template <int H, int V>
static __device__ __noinline__ void gpursa_fx_mpmul(uint32_t *r, const uint32_t *a, const uint32_t *b)
{
    uint32_t ra[H];
    gpursa_fx_load<H>(ra, a);
    if constexpr (GPURSA_FX_ROWS(H, V)) {
        gpursa_rows_mp_mul(r, ra, b, H);
    } else {
        uint32_t rb[H], rr[2 * H];
        gpursa_fx_load<H>(rb, b);
        gpursa_mp_mul(rr, ra, rb, H, V);
        gpursa_fx_store<2 * H>(r, rr);
    }
}

/* Zero N words that nothing reads again. Every array these kernels wipe
 * lives in local memory (the Montgomery operations take it by pointer), and
 * gpursa_mem_wipe's stores reach it: a C volatile store there compiles to a
 * plain st.local that ptxas may drop as dead. */
template <int N>
static __device__ __forceinline__ void gpursa_fx_wipe(uint32_t *p)
{
    gpursa_mem_wipe(p, N);
}

/* x (2H limbs, < m R) into Montgomery form mod m: x/R * R^3 / R = x R */
template <int H, int V>
static __device__ __forceinline__ void gpursa_fx_to_mont(uint32_t *r, const uint32_t *x2h, const uint32_t *m,
                                                         uint32_t m0inv, const uint32_t *rrr)
{
    __align__(16) uint32_t t[H];
    gpursa_fx_redc<H, V>(t, x2h, m, m0inv);
    gpursa_fx_mul<H, V>(r, t, rrr, m, m0inv);
    gpursa_fx_wipe<H>(t);
}

/* r = table[idx] reading every entry (idx secret) */
template <int H, int W>
static __device__ __forceinline__ void gpursa_fx_select(uint32_t *r, const uint32_t *table, uint32_t idx)
{
    uint32_t acc[H];
#pragma unroll
    for (int j = 0; j < H; j++)
        acc[j] = 0;
#pragma unroll 1
    for (int k = 0; k < (1 << W); k++) {
        uint32_t mask = (uint32_t)(((uint64_t)(idx ^ (uint32_t)k) - 1) >> 32);
#pragma unroll
        for (int j = 0; j < H; j++)
            acc[j] |= table[k * H + j] & mask;
    }
    gpursa_fx_store<H>(r, acc);
}

/* r = x^d mod m over all 32H bits of d (fixed windows of W bits), Montgomery
 * form in and out; one = R mod m. */
template <int H, int V, int W>
static __device__ __forceinline__ void gpursa_fx_exp(uint32_t *r, const uint32_t *x, const uint32_t *d,
                                                     const uint32_t *m, uint32_t m0inv, const uint32_t *one,
                                                     uint32_t *table)
{
    const int bits = 32 * H;
    __align__(16) uint32_t sel[H];
    gpursa_fx_store<H>(table, one);
    gpursa_fx_store<H>(table + H, x);
#pragma unroll 1
    for (int k = 2; k < (1 << W); k++) {             /* k public */
        if (k & 1)
            gpursa_fx_mul<H, V>(table + k * H, table + (k - 1) * H, x, m, m0inv);
        else
            gpursa_fx_sqr<H, V>(table + k * H, table + (k / 2) * H, m, m0inv);
    }
    int top = bits % W ? bits % W : W;
    int pos = bits - top;
    gpursa_fx_select<H, W>(r, table, gpursa_exp_window(d, bits, pos, top));
#pragma unroll 1
    while (pos > 0) {                                  /* pos public */
        pos -= W;
#pragma unroll 1
        for (int s = 0; s < W; s++)
            gpursa_fx_sqr<H, V>(r, r, m, m0inv);
        gpursa_fx_select<H, W>(sel, table, gpursa_exp_window(d, bits, pos, W));
        gpursa_fx_mul<H, V>(r, r, sel, m, m0inv);
    }
    gpursa_fx_wipe<H>(sel);
}

template <int H>
static __device__ __forceinline__ void gpursa_fx_load_soa(uint32_t *x, const uint32_t *soa, uint32_t item,
                                                          uint32_t stride)
{
#pragma unroll
    for (int j = 0; j < 2 * H; j++)
        x[j] = soa[(size_t)j * stride + item];
}

/* ---- the private operation in phases ---------------------------------------------- */

/* The key values of one CRT half (role h: 0 = p, 1 = q; public). */
typedef struct {
    const uint32_t *m, *rrr, *one, *d;
    uint32_t m0inv;
} gpursa_fx_half;

static __device__ __forceinline__ gpursa_fx_half gpursa_fx_half_of(const gpursa_rsa_keydata *kd, int h)
{
    gpursa_fx_half k;
    k.m = h ? kd->q : kd->p;
    k.rrr = h ? kd->q_rrr : kd->p_rrr;
    k.one = h ? kd->q_one : kd->p_one;
    k.d = h ? kd->dq : kd->dp;
    k.m0inv = h ? kd->q0inv : kd->p0inv;
    return k;
}

/* Phase 1, one CRT half: x = in^d R mod m for the item's blinded input
 * (in < n < m R: its reduction mod m is exact; an item the blinding stage
 * refused may hold anything below R^2, which the same code turns into a
 * value that the stages after it discard). t2, y: scratch. */
template <int H, int V, int W>
static __device__ __forceinline__ void gpursa_fx_half_exp(uint32_t *x, const gpursa_fx_half &k,
                                                          const gpursa_cuda_args &a, uint32_t item,
                                                          uint32_t *t2, uint32_t *y, uint32_t *table)
{
    gpursa_fx_load_soa<H>(t2, a.in, item, a.stride);
    gpursa_fx_to_mont<H, V>(y, t2, k.m, k.m0inv, k.rrr);               /* y = in R mod m */
    gpursa_fx_exp<H, V, W>(x, y, k.d, k.m, k.m0inv, k.one, table);
}

/* x (Montgomery form mod m, destroyed) to normal form s. */
template <int H, int V>
static __device__ __forceinline__ void gpursa_fx_from_mont(uint32_t *s, const uint32_t *x, const gpursa_fx_half &k,
                                                           uint32_t *t2)
{
#pragma unroll
    for (int j = 0; j < H; j++) {
        t2[j] = x[j];
        t2[H + j] = 0;
    }
    gpursa_fx_redc<H, V>(s, t2, k.m, k.m0inv);
}

/* Phase 2, Garner modulo p = kp.m: xp = in^d R mod p (Montgomery, destroyed),
 * sq = in^d mod q (normal form). out[2H] = sq + q ((xp - sq) qinv mod p). */
template <int H, int V>
static __device__ __forceinline__ void gpursa_fx_garner(uint32_t *out, uint32_t *xp, const uint32_t *sq,
                                                        const gpursa_fx_half &kp, const uint32_t *q,
                                                        const uint32_t *qinv, uint32_t *y)
{
    uint32_t cf = 0, borrow, mask;
    /* sq < q < R < p R: reduce it mod p into Montgomery form */
#pragma unroll
    for (int j = 0; j < H; j++) {
        out[j] = sq[j];
        out[H + j] = 0;
    }
    gpursa_fx_to_mont<H, V>(y, out, kp.m, kp.m0inv, kp.rrr);
    borrow = gpursa_mp_sub(xp, xp, y, H);
    mask = 0u - borrow;
    xp[0] = gpursa_add_cc(xp[0], kp.m[0] & mask, &cf);
#pragma unroll
    for (int j = 1; j < H; j++)
        xp[j] = gpursa_addc_cc(xp[j], kp.m[j] & mask, &cf);
    gpursa_fx_mul<H, V>(y, xp, qinv, kp.m, kp.m0inv);                 /* h, normal form */
    gpursa_fx_mpmul<H, V>(out, q, y);
    cf = 0;
    out[0] = gpursa_add_cc(out[0], sq[0], &cf);
#pragma unroll
    for (int j = 1; j < H; j++)
        out[j] = gpursa_addc_cc(out[j], sq[j], &cf);
#pragma unroll
    for (int j = H; j < 2 * H; j++)
        out[j] = gpursa_addc_cc(out[j], 0, &cf);
}

/* 4 blocks of 128 threads per SM: at most 128 registers, 16 warps an SM. */
#define GPURSA_FX_MINBLOCKS 4

/* ---- one thread per item (IMAD, XMAD) ------------------------------------------------ */

template <int H, int V>
static __global__ void __launch_bounds__(128, GPURSA_FX_MINBLOCKS)
gpursa_fx1_kernel(gpursa_cuda_args a)
{
    const int W = GPURSA_FAST_WINDOW;
    const uint32_t item = blockIdx.x * blockDim.x + threadIdx.x;
    if (item >= a.count)
        return;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a.keys[item];
    const gpursa_fx_half kp = gpursa_fx_half_of(kd, 0), kq = gpursa_fx_half_of(kd, 1);
    __align__(16) uint32_t out[2 * H], t2[2 * H];
    __align__(16) uint32_t xp[H], sq[H], y[H];
    __align__(16) uint32_t table[(1 << W) * H];

    gpursa_fx_half_exp<H, V, W>(y, kq, a, item, t2, xp, table);
    gpursa_fx_from_mont<H, V>(sq, y, kq, t2);
    gpursa_fx_half_exp<H, V, W>(xp, kp, a, item, t2, y, table);
    gpursa_fx_garner<H, V>(out, xp, sq, kp, kd->q, kd->qinv, y);
#pragma unroll
    for (int j = 0; j < 2 * H; j++)
        a.out[(size_t)j * a.stride + item] = out[j];
    gpursa_fx_wipe<(1 << W) * H>(table);
    gpursa_fx_wipe<2 * H>(out);
    gpursa_fx_wipe<2 * H>(t2);
    gpursa_fx_wipe<H>(xp);
    gpursa_fx_wipe<H>(sq);
    gpursa_fx_wipe<H>(y);
}

/* ---- two threads per item (FAST) ----------------------------------------------------- */

template <int H, int V>
static __global__ void __launch_bounds__(128, GPURSA_FX_MINBLOCKS)
gpursa_fx2_kernel(gpursa_cuda_args a)
{
    const int W = GPURSA_FAST_WINDOW;
    const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t item_raw = tid >> 1;
    const int h = (int)(tid & 1);                     /* role: public */
    const int live = item_raw < a.count;
    /* Lanes past the end run on the last item so that every lane of the
     * warp reaches the shuffles; they store nothing. */
    const uint32_t item = live ? item_raw : a.count - 1;
    const gpursa_rsa_keydata *kd = (const gpursa_rsa_keydata *)a.keys[item];
    const gpursa_fx_half k = gpursa_fx_half_of(kd, h), kp = gpursa_fx_half_of(kd, 0);
    __align__(16) uint32_t out[2 * H], t2[2 * H];
    __align__(16) uint32_t x[H], s[H], y[H];
    __align__(16) uint32_t table[(1 << W) * H];

    gpursa_fx_half_exp<H, V, W>(x, k, a, item, t2, y, table);
    /* lane q hands in^d mod q (normal form) to lane p */
    gpursa_fx_from_mont<H, V>(y, x, k, t2);
#pragma unroll
    for (int j = 0; j < H; j++)
        s[j] = __shfl_xor_sync(0xffffffffu, y[j], 1);
    /* lane p recombines; lane q computes a value it discards (same code, so
     * the pair stays converged for the shuffles) and takes the high half of
     * lane p's */
    gpursa_fx_garner<H, V>(out, x, s, kp, kd->q, kd->qinv, y);
#pragma unroll
    for (int j = H; j < 2 * H; j++) {
        uint32_t v = __shfl_xor_sync(0xffffffffu, out[j], 1);
        out[j] = h ? v : out[j];
    }
    if (live) {
#pragma unroll
        for (int j = 0; j < H; j++)
            a.out[(size_t)(h * H + j) * a.stride + item] = out[h * H + j];
    }
    gpursa_fx_wipe<(1 << W) * H>(table);
    gpursa_fx_wipe<2 * H>(out);
    gpursa_fx_wipe<2 * H>(t2);
    gpursa_fx_wipe<H>(x);
    gpursa_fx_wipe<H>(s);
    gpursa_fx_wipe<H>(y);
}

#ifndef GPURSA_FX_HOST_TEST
#include "gpu/kernels_coop.cuh"

/* ---- launch --------------------------------------------------------------------------- */

template <int H, int V, int LANES>
static cudaError_t gpursa_fx_launch(const gpursa_cuda_args *a, cudaStream_t s)
{
    const unsigned threads = 128;
    uint64_t lanes = (uint64_t)LANES * a->count;
    unsigned blocks = (unsigned)((lanes + threads - 1) / threads);
    if (a->count == 0)
        return cudaSuccess;
    /* if constexpr: only the kernel of this lane count is instantiated */
    if constexpr (LANES == 2)
        gpursa_fx2_kernel<H, V><<<blocks, threads, 0, s>>>(*a);
    else
        gpursa_fx1_kernel<H, V><<<blocks, threads, 0, s>>>(*a);
    return cudaGetLastError();
}

template <int H, int V, int LANES>
static int gpursa_fx_regs(void)
{
    cudaFuncAttributes attr;
    cudaError_t e;
    if constexpr (LANES == 2)
        e = cudaFuncGetAttributes(&attr, gpursa_fx2_kernel<H, V>);
    else
        e = cudaFuncGetAttributes(&attr, gpursa_fx1_kernel<H, V>);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.numRegs;
}


/* Define the launcher and register query of one modulus size (H limbs per
 * CRT half) for kernels_<bits>.cu, and export the file's own COOP kernel
 * (32-bit limbs, shape S) as gpursa_cuda_launch_<bits>_int: the variant COOP runs
 * the kernel the routing table picks (gpursa_cuda_launch_routed). */
#define GPURSA_CUDA_SIZE(BITS, S)                                                           \
    cudaError_t gpursa_cuda_launch_##BITS(gpursa_variant v, const gpursa_cuda_args *a,       \
                                          cudaStream_t s)                                   \
    {                                                                                       \
        switch (v) {                                                                        \
        case GPURSA_VARIANT_IMAD: return gpursa_fx_launch<BITS / 64, GPURSA_VARIANT_IMAD, 1>(a, s); \
        case GPURSA_VARIANT_XMAD: return gpursa_fx_launch<BITS / 64, GPURSA_VARIANT_XMAD, 1>(a, s); \
        case GPURSA_VARIANT_FAST: return gpursa_fx_launch<BITS / 64, GPURSA_VARIANT_FAST, 2>(a, s); \
        case GPURSA_VARIANT_COOP: return gpursa_cuda_launch_routed(BITS, a, s);             \
        default: return cudaErrorInvalidValue;                                              \
        }                                                                                   \
    }                                                                                       \
    int gpursa_cuda_regs_##BITS(gpursa_variant v)                                            \
    {                                                                                       \
        switch (v) {                                                                        \
        case GPURSA_VARIANT_IMAD: return gpursa_fx_regs<BITS / 64, GPURSA_VARIANT_IMAD, 1>(); \
        case GPURSA_VARIANT_XMAD: return gpursa_fx_regs<BITS / 64, GPURSA_VARIANT_XMAD, 1>(); \
        case GPURSA_VARIANT_FAST: return gpursa_fx_regs<BITS / 64, GPURSA_VARIANT_FAST, 2>(); \
        case GPURSA_VARIANT_COOP: return gpursa_coop_regs<S>();                             \
        default: return 0;                                                                  \
        }                                                                                   \
    }                                                                                       \
    static_assert(64 * S::H == BITS && !S::fp64, "the size's 32-bit COOP shape");             \
    GPURSA_COOP_EXPORT(S, gpursa_cuda_launch_##BITS##_int, gpursa_cuda_regs_##BITS##_int)
#endif /* GPURSA_FX_HOST_TEST */

#endif /* GPURSA_KERNELS_RSA_CUH */
