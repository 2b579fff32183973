/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: the COOP kernel (gpursa_coop.h) of a shape S
 * (gpursa_shapes.h), its launcher and register query, templates that each
 * kernels_<x>.cu instantiates for its own shape; where S::epow, the
 * factor and check stages on the same lanes; and where S::fused, the whole
 * operation as one kernel (gpursa_coop_fused.h).
 */
#ifndef GPURSA_KERNELS_COOP_CUH
#define GPURSA_KERNELS_COOP_CUH

#include "gpu/gpursa_cuda_kernels.h"
#include "gpu/gpursa_coop_fp.h"
#include "gpu/gpursa_coop_epow.h"
#include "gpu/gpursa_coop_fused.h"

/* ---- 2T threads per item (COOP, gpursa_coop.h) ----------------------------------------- */

/* Registers are few (every number is L limbs a thread), so the occupancy is
 * left to the compiler at 256-thread blocks (S::threads): 64-thread blocks shorten a lone
 * batch but cost much of the rate under MPS, and a minimum of resident
 * blocks costs spills (doc/design.md, "Why the kernels are shaped as they are"). A shape
 * whose kernel holds one block an SM in any case sets one_block: the
 * FP64 kernels of 8 lanes a half, which run only loads that give each SM at
 * most one block (up to 2,048 items in flight: 128 blocks on 132 SMs, and
 * proportionally fewer items on fewer SMs, gpursa_cuda_load), and those
 * whose registers exceed 128 a thread. Then ptxas may take every register
 * it can use for one block an SM; on its own it aims at more blocks, and
 * then spills, or schedules each limb product's chain of FMAs one after
 * the other to save registers that the SM could not use anyway. */
template <class S>
static __global__ void __launch_bounds__(S::threads) gpursa_coop_kernel(gpursa_coop_args a)
{
    gpursa_coop<S>::gpursa_coop_item(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

template <class S>
static __global__ void __launch_bounds__(S::threads, 1) gpursa_coop_kernel_one_block(gpursa_coop_args a)
{
    gpursa_coop<S>::gpursa_coop_item(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

/* S's kernel (S::one_block picks the launch bounds; only that one is built) */
template <class S>
static const void *gpursa_coop_kernel_of(void)
{
    if constexpr (S::one_block)
        return (const void *)gpursa_coop_kernel_one_block<S>;
    else
        return (const void *)gpursa_coop_kernel<S>;
}

/* The FP64 window tables' entries in shared memory (gpursa_coop_fp.h) */
template <class S>
static constexpr size_t gpursa_coop_smem()
{
    if constexpr (S::fp64)
        return gpursa_coop_fp<S>::SMEM_BYTES;
    else
        return 0;
}

template <class S>
static cudaError_t gpursa_coop_launch(const gpursa_cuda_args *a, cudaStream_t s)
{
    const unsigned threads = S::threads;
    uint64_t lanes = (uint64_t)32 * ((a->count + S::PER_WARP - 1) / S::PER_WARP);
    gpursa_coop_args ca;
    if (a->count == 0)
        return cudaSuccess;
    ca.keys = a->keys;
    ca.in = a->in;
    ca.out = a->out;
    ca.count = a->count;
    ca.stride = a->stride;
    const unsigned blocks = (unsigned)((lanes + threads - 1) / threads);
    if constexpr (S::one_block)
        gpursa_coop_kernel_one_block<S><<<blocks, threads, gpursa_coop_smem<S>(), s>>>(ca);
    else
        gpursa_coop_kernel<S><<<blocks, threads, gpursa_coop_smem<S>(), s>>>(ca);
    return cudaGetLastError();
}

/* Also run where a device opens (gpursa_cuda_device_open, with it current):
 * a kernel's shared memory above 48 KB is allowed there, once per device. */
template <class S>
static int gpursa_coop_regs(void)
{
    cudaFuncAttributes attr;
    if (gpursa_coop_smem<S>() > 48 * 1024
        && cudaFuncSetAttribute(gpursa_coop_kernel_of<S>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)gpursa_coop_smem<S>()) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (cudaFuncGetAttributes(&attr, gpursa_coop_kernel_of<S>()) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.numRegs;
}

/* ---- the factor and check stages on S's lanes (gpursa_coop_epow.h), where S::epow ---- */

template <class S>
static __global__ void __launch_bounds__(S::threads) gpursa_epow_factor_kernel(gpursa_epow_args a)
{
    gpursa_epow<S>::gpursa_epow_item(&a, blockIdx.x * blockDim.x + threadIdx.x, 0);
}

template <class S>
static __global__ void __launch_bounds__(S::threads) gpursa_epow_check_kernel(gpursa_epow_args a)
{
    gpursa_epow<S>::gpursa_epow_item(&a, blockIdx.x * blockDim.x + threadIdx.x, 1);
}

/* The factor stage reads a->r and writes a->out; the check stage reads
 * a->out (o) and a->in (c), and writes a->out and the status words. */
template <class S>
static cudaError_t gpursa_epow_launch(int check, const gpursa_cuda_args *a, cudaStream_t s)
{
    static_assert(S::epow, "the factor and check stages are built on the shapes that set epow");
    const unsigned threads = S::threads;
    const uint64_t lanes = (uint64_t)32 * ((a->count + S::PER_WARP - 1) / S::PER_WARP);
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
        gpursa_epow_check_kernel<S><<<blocks, threads, 0, s>>>(ea);
    else
        gpursa_epow_factor_kernel<S><<<blocks, threads, 0, s>>>(ea);
    return cudaGetLastError();
}

/* The larger of the two kernels' registers a thread; 0 when either is not
 * built for this device. */
template <class S>
static int gpursa_epow_regs(void)
{
    return gpursa_cuda_regs_of2((const void *)gpursa_epow_factor_kernel<S>,
                                (const void *)gpursa_epow_check_kernel<S>);
}

/* A file that adds one COOP shape S exports its launcher and register query
 * under the names gpursa_cuda_kernels.h declares. */
#define GPURSA_COOP_EXPORT(S, launch_fn, regs_fn)                                 \
    cudaError_t launch_fn(const gpursa_cuda_args *a, cudaStream_t s)              \
    {                                                                             \
        return gpursa_coop_launch<S>(a, s);                                       \
    }                                                                             \
    int regs_fn(void)                                                             \
    {                                                                             \
        return gpursa_coop_regs<S>();                                             \
    }

/* ... and where S::epow its factor and check stages, as gpursa_cuda_epow_<NAME>
 * and gpursa_cuda_epow_regs_<NAME> */
#define GPURSA_EPOW_EXPORT(S, NAME)                                                           \
    cudaError_t gpursa_cuda_epow_##NAME(int check, const gpursa_cuda_args *a, cudaStream_t s) \
    {                                                                                         \
        return gpursa_epow_launch<S>(check, a, s);                                            \
    }                                                                                         \
    int gpursa_cuda_epow_regs_##NAME(void)                                                    \
    {                                                                                         \
        return gpursa_epow_regs<S>();                                                         \
    }

/* ---- the whole operation in one kernel (gpursa_coop_fused.h) ------------------------- */

template <class S>
static __global__ void __launch_bounds__(S::threads) gpursa_fused_kernel(gpursa_fused_args a)
{
    gpursa_fused<S>::gpursa_fused_item(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

template <class S>
static __global__ void __launch_bounds__(S::threads, 1) gpursa_fused_kernel_one_block(gpursa_fused_args a)
{
    gpursa_fused<S>::gpursa_fused_item(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

template <class S>
static const void *gpursa_fused_kernel_of(void)
{
    if constexpr (S::one_block)
        return (const void *)gpursa_fused_kernel_one_block<S>;
    else
        return (const void *)gpursa_fused_kernel<S>;
}

template <class S>
static cudaError_t gpursa_fused_launch(const gpursa_cuda_args *a, cudaStream_t s)
{
    const unsigned threads = S::threads;
    const uint64_t lanes = (uint64_t)32 * ((a->count + S::PER_WARP - 1) / S::PER_WARP);
    const unsigned blocks = (unsigned)((lanes + threads - 1) / threads);
    gpursa_fused_args fa;
    static_assert(S::fused, "the fused kernel is built on the shapes that set fused");
    if (a->count == 0)
        return cudaSuccess;
    fa.keys = a->keys;
    fa.in = a->in;
    fa.r = a->r;
    fa.rinv = a->rinv;
    fa.out = a->out;
    fa.status = a->status;
    fa.count = a->count;
    fa.stride = a->stride;
    fa.test_skip = a->test_skip;
    fa.test_corrupt = a->test_corrupt;
    if constexpr (S::one_block)
        gpursa_fused_kernel_one_block<S><<<blocks, threads, gpursa_coop_smem<S>(), s>>>(fa);
    else
        gpursa_fused_kernel<S><<<blocks, threads, gpursa_coop_smem<S>(), s>>>(fa);
    return cudaGetLastError();
}

/* as gpursa_coop_regs: allows the shared memory, then the registers */
template <class S>
static int gpursa_fused_regs(void)
{
    cudaFuncAttributes attr;
    if (gpursa_coop_smem<S>() > 48 * 1024
        && cudaFuncSetAttribute(gpursa_fused_kernel_of<S>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)gpursa_coop_smem<S>()) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (cudaFuncGetAttributes(&attr, gpursa_fused_kernel_of<S>()) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.numRegs;
}

#define GPURSA_FUSED_EXPORT(S, NAME)                                                          \
    cudaError_t gpursa_cuda_fused_##NAME(const gpursa_cuda_args *a, cudaStream_t s)          \
    {                                                                                         \
        return gpursa_fused_launch<S>(a, s);                                                  \
    }                                                                                         \
    int gpursa_cuda_fused_regs_##NAME(void)                                                   \
    {                                                                                         \
        return gpursa_fused_regs<S>();                                                        \
    }

#endif /* GPURSA_KERNELS_COOP_CUH */
