/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages' launchers by modulus size
 * (gpursa_cuda_kernels.h; each size's in kernels_nstage_<bits>.cu). */
#include "gpu/kernels_nstage.cuh"

cudaError_t gpursa_cuda_blind(int bits, const gpursa_cuda_args *a, cudaStream_t s)
{
    switch (bits) {
    case 1024: return gpursa_cuda_blind_1024(a, s);
    case 2048: return gpursa_cuda_blind_2048(a, s);
    case 3072: return gpursa_cuda_blind_3072(a, s);
    case 4096: return gpursa_cuda_blind_4096(a, s);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t gpursa_cuda_unblind(int bits, const gpursa_cuda_args *a, cudaStream_t s)
{
    switch (bits) {
    case 1024: return gpursa_cuda_unblind_1024(a, s);
    case 2048: return gpursa_cuda_unblind_2048(a, s);
    case 3072: return gpursa_cuda_unblind_3072(a, s);
    case 4096: return gpursa_cuda_unblind_4096(a, s);
    default: return cudaErrorInvalidValue;
    }
}

int gpursa_cuda_nstage_regs(int bits)
{
    switch (bits) {
    case 1024: return gpursa_cuda_nstage_regs_1024();
    case 2048: return gpursa_cuda_nstage_regs_2048();
    case 3072: return gpursa_cuda_nstage_regs_3072();
    case 4096: return gpursa_cuda_nstage_regs_4096();
    default: return 0;
    }
}
