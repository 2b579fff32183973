/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: the modulus-n stages (gpursa_coop_nstage.h) of one
 * modulus size, their kernels, launchers and register query, templates over
 * the shape (gpursa_shapes.h) that kernels_nstage_<bits>.cu instantiates:
 * H = the limbs of n, L limbs a lane; a group of T = H / L lanes runs one item.
 * gpursa_cuda_blind / _unblind / _nstage_regs (gpursa_cuda_kernels.h) pick a
 * size's launcher (kernels_nstage.cu).
 */
#ifndef GPURSA_KERNELS_NSTAGE_CUH
#define GPURSA_KERNELS_NSTAGE_CUH

#include "gpu/gpursa_cuda_kernels.h"

/* Every size's launchers and register query (kernels_nstage_<bits>.cu). */
#define GPURSA_NSTAGE_DECLARE(BITS)                                                           \
    cudaError_t gpursa_cuda_blind_##BITS(const gpursa_cuda_args *a, cudaStream_t s);          \
    cudaError_t gpursa_cuda_unblind_##BITS(const gpursa_cuda_args *a, cudaStream_t s);        \
    int gpursa_cuda_nstage_regs_##BITS(void);
GPURSA_NSTAGE_DECLARE(1024)
GPURSA_NSTAGE_DECLARE(2048)
GPURSA_NSTAGE_DECLARE(3072)
GPURSA_NSTAGE_DECLARE(4096)

#include "gpu/gpursa_coop_nstage.h"

template <class S>
static __global__ void __launch_bounds__(S::threads) gpursa_nst_blind_kernel(gpursa_nst_args a)
{
    gpursa_nst<S>::gpursa_nst_blind(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

template <class S>
static __global__ void __launch_bounds__(S::threads) gpursa_nst_unblind_kernel(gpursa_nst_args a)
{
    gpursa_nst<S>::gpursa_nst_unblind(&a, blockIdx.x * blockDim.x + threadIdx.x);
}

/* Whole warps of T-lane groups (the threads past the batch's end run its last
 * item and store nothing), in blocks of S::threads. */
template <class S>
static cudaError_t gpursa_nst_launch(int unblind, const gpursa_cuda_args *a, cudaStream_t s)
{
    const unsigned threads = S::threads, per_warp = 32 / S::T;
    const uint64_t lanes = (uint64_t)32 * ((a->count + per_warp - 1) / per_warp);
    const unsigned blocks = (unsigned)((lanes + threads - 1) / threads);
    gpursa_nst_args na;
    if (a->count == 0)
        return cudaSuccess;
    na.keys = a->keys;
    na.in = a->in;
    na.r = a->r;
    na.rinv = a->rinv;
    na.re = a->re;
    na.out = a->out;
    na.status = a->status;
    na.count = a->count;
    na.stride = a->stride;
    na.test_skip = a->test_skip;
    na.test_corrupt = a->test_corrupt;
    if (unblind)
        gpursa_nst_unblind_kernel<S><<<blocks, threads, 0, s>>>(na);
    else
        gpursa_nst_blind_kernel<S><<<blocks, threads, 0, s>>>(na);
    return cudaGetLastError();
}

/* The larger of the two kernels' registers a thread; 0 when either is not
 * built for this device. */
template <class S>
static int gpursa_nst_regs(void)
{
    return gpursa_cuda_regs_of2((const void *)gpursa_nst_blind_kernel<S>, (const void *)gpursa_nst_unblind_kernel<S>);
}

#define GPURSA_NSTAGE_SIZE(BITS, S)                                                           \
    static_assert(32 * S::H == BITS, "nstage: S::H is the limbs of n");                      \
    cudaError_t gpursa_cuda_blind_##BITS(const gpursa_cuda_args *a, cudaStream_t s)           \
    {                                                                                         \
        return gpursa_nst_launch<S>(0, a, s);                                                 \
    }                                                                                         \
    cudaError_t gpursa_cuda_unblind_##BITS(const gpursa_cuda_args *a, cudaStream_t s)         \
    {                                                                                         \
        return gpursa_nst_launch<S>(1, a, s);                                                 \
    }                                                                                         \
    int gpursa_cuda_nstage_regs_##BITS(void)                                                  \
    {                                                                                         \
        return gpursa_nst_regs<S>();                                                          \
    }

#endif /* GPURSA_KERNELS_NSTAGE_CUH */
