/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: the COOP kernel (gpursa_coop.h) of one modulus size
 * and lane width, its launcher and register query (static: each including
 * file gets its own for the GPURSA_COOP_H / GPURSA_COOP_L it sets).
 */
#ifndef GPURSA_KERNELS_COOP_CUH
#define GPURSA_KERNELS_COOP_CUH

#include "gpu/gpursa_cuda_kernels.h"
#define GPURSA_COOP_THREADS 256 /* a block (below) */
#include "gpu/gpursa_coop.h"

/* ---- 2T threads per item (COOP, gpursa_coop.h) ----------------------------------------- */

/* Registers are few (every number is L limbs a thread), so the occupancy is
 * left to the compiler at 256-thread blocks: 64-thread blocks shorten a lone
 * batch but cost much of the rate under MPS, and a minimum of resident
 * blocks costs spills (doc/design.md, "Why the kernels are shaped as they are"). A file whose
 * kernel holds one block an SM in any case sets GPURSA_COOP_ONE_BLOCK: the
 * FP64 kernels of 8 lanes a half, which run only loads that give each SM at
 * most one block (up to 2,048 items in flight: 128 blocks on 132 SMs, and
 * proportionally fewer items on fewer SMs, gpursa_cuda_load), and those
 * whose registers exceed 128 a thread. Then ptxas may take every register
 * it can use for one block an SM; on its own it aims at more blocks, and
 * then spills, or schedules each limb product's chain of FMAs one after
 * the other to save registers that the SM could not use anyway. */
#if defined(GPURSA_COOP_FP) && GPURSA_COOP_FP_SMEM > 0
/* the FP64 window tables' entries in shared memory (gpursa_coop_fp.h) */
#define GPURSA_COOP_SMEM ((size_t)GPURSA_COOP_THREADS * GPURSA_COOP_FP_SMEM * GPURSA_FP_L * sizeof(double))
#else
#define GPURSA_COOP_SMEM ((size_t)0)
#endif
#ifdef GPURSA_COOP_ONE_BLOCK
#define GPURSA_COOP_BOUNDS __launch_bounds__(GPURSA_COOP_THREADS, 1)
#else
#define GPURSA_COOP_BOUNDS __launch_bounds__(GPURSA_COOP_THREADS)
#endif
static __global__ void GPURSA_COOP_BOUNDS gpursa_coop_kernel(gpursa_coop_args a)
{
    gpursa_coop_item(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

static cudaError_t gpursa_coop_launch(const gpursa_cuda_args *a, cudaStream_t s)
{
    const unsigned threads = GPURSA_COOP_THREADS;
    uint64_t lanes = (uint64_t)32 * ((a->count + GPURSA_COOP_PER_WARP - 1) / GPURSA_COOP_PER_WARP);
    gpursa_coop_args ca;
    if (a->count == 0)
        return cudaSuccess;
    ca.keys = a->keys;
    ca.in = a->in;
    ca.out = a->out;
    ca.count = a->count;
    ca.stride = a->stride;
    gpursa_coop_kernel<<<(unsigned)((lanes + threads - 1) / threads), threads, GPURSA_COOP_SMEM, s>>>(ca);
    return cudaGetLastError();
}

/* Also run where a device opens (gpursa_cuda_device_open, with it current):
 * a kernel's shared memory above 48 KB is allowed there, once per device. */
static int gpursa_coop_regs(void)
{
    cudaFuncAttributes attr;
    if (GPURSA_COOP_SMEM > 48 * 1024
        && cudaFuncSetAttribute(gpursa_coop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)GPURSA_COOP_SMEM) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (cudaFuncGetAttributes(&attr, gpursa_coop_kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.numRegs;
}

/* A file that only adds one lane width of a size exports its launcher and
 * register query under these names (gpursa_cuda_kernels.h declares them). */
#define GPURSA_COOP_EXPORT(launch_fn, regs_fn)                                    \
    cudaError_t launch_fn(const gpursa_cuda_args *a, cudaStream_t s)              \
    {                                                                             \
        return gpursa_coop_launch(a, s);                                          \
    }                                                                             \
    int regs_fn(void)                                                             \
    {                                                                             \
        return gpursa_coop_regs();                                                \
    }


#ifdef GPURSA_COOP_EPOW
/* ---- the factor and check stages on this file's lanes (gpursa_coop_epow.h) --------- */
#include "gpu/gpursa_coop_epow.h"

static __global__ void __launch_bounds__(GPURSA_COOP_THREADS) gpursa_epow_factor_kernel(gpursa_epow_args a)
{
    gpursa_epow_item(&a, blockIdx.x * blockDim.x + threadIdx.x, 0);
}

static __global__ void __launch_bounds__(GPURSA_COOP_THREADS) gpursa_epow_check_kernel(gpursa_epow_args a)
{
    gpursa_epow_item(&a, blockIdx.x * blockDim.x + threadIdx.x, 1);
}

/* The factor stage reads a->r and writes a->out; the check stage reads
 * a->out (o) and a->in (c), and writes a->out and the status words. */
static cudaError_t gpursa_epow_launch(int check, const gpursa_cuda_args *a, cudaStream_t s)
{
    const unsigned threads = GPURSA_COOP_THREADS;
    const uint64_t lanes = (uint64_t)32 * ((a->count + GPURSA_COOP_PER_WARP - 1) / GPURSA_COOP_PER_WARP);
    const unsigned blocks = (unsigned)((lanes + threads - 1) / threads);
    gpursa_epow_args ea;
    if (a->count == 0)
        return cudaSuccess;
    ea.keys = a->keys;
    ea.x = check ? a->out : a->r;
    ea.c = a->in;
    ea.out = a->out;
    ea.status = a->status;
    ea.count = a->count;
    ea.stride = a->stride;
    ea.test_skip = a->test_skip;
    if (check)
        gpursa_epow_check_kernel<<<blocks, threads, 0, s>>>(ea);
    else
        gpursa_epow_factor_kernel<<<blocks, threads, 0, s>>>(ea);
    return cudaGetLastError();
}

/* The larger of the two kernels' registers a thread; 0 when either is not
 * built for this device. */
static int gpursa_epow_regs(void)
{
    return gpursa_cuda_regs_of2((const void *)gpursa_epow_factor_kernel, (const void *)gpursa_epow_check_kernel);
}

/* exported as gpursa_cuda_epow_<NAME> and gpursa_cuda_epow_regs_<NAME> */
#define GPURSA_EPOW_EXPORT(NAME)                                                              \
    cudaError_t gpursa_cuda_epow_##NAME(int check, const gpursa_cuda_args *a, cudaStream_t s) \
    {                                                                                         \
        return gpursa_epow_launch(check, a, s);                                               \
    }                                                                                         \
    int gpursa_cuda_epow_regs_##NAME(void)                                                    \
    {                                                                                         \
        return gpursa_epow_regs();                                                            \
    }
#endif /* GPURSA_COOP_EPOW */

#endif /* GPURSA_KERNELS_COOP_CUH */
