/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/mont-proto: today's FP64 Montgomery multiplication, gpursa_coop_fp.h's
 * gpursa_fp_mul / gpursa_fp_sqr, in the lane shape of one of gpursa's FP64
 * kernels: build.sh compiles this file once per shape with
 *   -DFPB_SHAPE=<the kernel's type in gpu/gpursa_shapes.h> -DFPB_SFX=<bits>
 * (as tests/gpu/Makefile.am builds its shape tests), so the kernel's own
 * shape (lanes, limbs, fp_early) configures the code measured.
 * One item is one CRT half's multiplication: T lanes (a group), 32 / T items
 * a warp (T = 3: ten, the two lanes left over compute on garbage and store
 * nothing); each item runs `iters` chained multiplications x = x y / R52
 * (or squarings), R52 = 2^(52 F), inputs below p, lazy limbs (<= 2^52).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include "gpu/gpursa_coop_fp.h"

#define FPB_CAT2(a, b) a##b
#define FPB_CAT(a, b) FPB_CAT2(a, b)
#define FPB_FN(name) FPB_CAT(name, FPB_SFX)

typedef gpursa_coop_fp<FPB_SHAPE> F;
enum { CO_T = FPB_SHAPE::T, FP_F = F::FP_F, FP_L = F::FP_L, FPB_PER_WARP = 32 / CO_T };

template <int SQ>
static __global__ void __launch_bounds__(256) fpb_kernel(const uint64_t *xin, const uint64_t *yin, const uint64_t *m52,
                                                         uint64_t mp, uint64_t *out, int count, int iters)
{
    const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x, lane = tid & 31u;
    const uint32_t grp = lane / CO_T < FPB_PER_WARP ? lane / CO_T : FPB_PER_WARP; /* FPB_PER_WARP: left over */
    const uint32_t raw = (tid >> 5) * FPB_PER_WARP + grp;
    const int live = grp < FPB_PER_WARP && raw < (uint32_t)count;
    const uint32_t item = raw < (uint32_t)count ? raw : (uint32_t)count - 1;
    gpursa_coop_ctx c;
    double x[FP_L], y[FP_L], m[FP_L];
    c.lane = (int)lane;
    c.k = (int)(lane - grp * CO_T);
    c.gbase = (int)(grp * CO_T);
    c.mask = 0xffffffffu;
    for (int l = 0; l < FP_L; l++) {
        x[l] = gpursa_fp_u52(xin[(size_t)item * FP_F + c.k * FP_L + l]);
        y[l] = gpursa_fp_u52(yin[(size_t)item * FP_F + c.k * FP_L + l]);
        m[l] = gpursa_fp_u52(m52[c.k * FP_L + l]);
    }
#pragma unroll 1
    for (int it = 0; it < iters; it++) {
        if (SQ)
            F::gpursa_fp_sqr(&c, x, x, m, mp);
        else
            F::gpursa_fp_mul(&c, x, x, y, m, mp);
    }
    if (live)
        for (int l = 0; l < FP_L; l++)
            out[(size_t)item * FP_F + c.k * FP_L + l] = gpursa_fp_d2u52(x[l]);
}

/* limbs of a value (F), lanes an item (T) and items a warp of this shape */
extern "C" void FPB_FN(fpb_shape_)(int *f, int *t, int *per_warp)
{
    *f = FP_F;
    *t = CO_T;
    *per_warp = FPB_PER_WARP;
}

extern "C" int FPB_FN(fpb_regs_)(int sq)
{
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, sq ? fpb_kernel<1> : fpb_kernel<0>) != cudaSuccess)
        return -1;
    return a.numRegs;
}

/* threads: a block's (32..256, a multiple of 32) */
extern "C" cudaError_t FPB_FN(fpb_launch_)(int sq, const uint64_t *x, const uint64_t *y, const uint64_t *m52,
                                            uint64_t mp, uint64_t *out, int count, int iters, int threads)
{
    const int per_block = threads / 32 * FPB_PER_WARP;
    const int blocks = (count + per_block - 1) / per_block;
    if (sq)
        fpb_kernel<1><<<blocks, threads>>>(x, y, m52, mp, out, count, iters);
    else
        fpb_kernel<0><<<blocks, threads>>>(x, y, m52, mp, out, count, iters);
    return cudaGetLastError();
}
