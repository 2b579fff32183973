/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the COOP kernels by name (gpursa_kernel), a COOP
 * launch on the kernel the routing table picks (gpursa_cuda_load.h), the
 * whole operation in one kernel where the picked kernel has that form, and
 * each size's factor and check stages (gpursa_coop_epow.h) on FP64 or
 * 32-bit limbs. */
#include "gpu/gpursa_cuda_kernels.h"

cudaError_t gpursa_cuda_launch_routed(int bits, const gpursa_cuda_args *a, cudaStream_t s)
{
    switch (gpursa_route_pick(bits, a->load, a->shared != 0, a->fp64 != 0)) {
    case GPURSA_KERNEL_1024:   return gpursa_cuda_launch_1024_int(a, s);
    case GPURSA_KERNEL_2048:   return gpursa_cuda_launch_2048_int(a, s);
    case GPURSA_KERNEL_2048N:  return gpursa_cuda_launch_2048_narrow(a, s);
    case GPURSA_KERNEL_2048F:  return gpursa_cuda_launch_2048_fp(a, s);
    case GPURSA_KERNEL_2048F2: return gpursa_cuda_launch_2048_fp2(a, s);
    case GPURSA_KERNEL_3072:   return gpursa_cuda_launch_3072_int(a, s);
    case GPURSA_KERNEL_3072FN: return gpursa_cuda_launch_3072_fpn(a, s);
    case GPURSA_KERNEL_3072FW: return gpursa_cuda_launch_3072_fpw(a, s);
    case GPURSA_KERNEL_4096:   return gpursa_cuda_launch_4096_int(a, s);
    case GPURSA_KERNEL_4096FN: return gpursa_cuda_launch_4096_fpn(a, s);
    case GPURSA_KERNEL_4096F:  return gpursa_cuda_launch_4096_fp(a, s);
    default:                   return cudaErrorInvalidValue;
    }
}

cudaError_t gpursa_cuda_launch_fused(int bits, const gpursa_cuda_args *a, cudaStream_t s)
{
    switch (gpursa_route_pick(bits, a->load, a->shared != 0, a->fp64 != 0)) {
    case GPURSA_KERNEL_3072FW: return gpursa_cuda_fused_3072_fpw(a, s);
    case GPURSA_KERNEL_4096F:  return gpursa_cuda_fused_4096_fp(a, s);
    default:                   return cudaErrorNotSupported;
    }
}

int gpursa_cuda_route_regs(gpursa_kernel k)
{
    switch (k) {
    case GPURSA_KERNEL_1024:   return gpursa_cuda_regs_1024_int();
    case GPURSA_KERNEL_2048:   return gpursa_cuda_regs_2048_int();
    case GPURSA_KERNEL_2048N:  return gpursa_cuda_regs_2048_narrow();
    case GPURSA_KERNEL_2048F:  return gpursa_cuda_regs_2048_fp();
    case GPURSA_KERNEL_2048F2: return gpursa_cuda_regs_2048_fp2();
    case GPURSA_KERNEL_3072:   return gpursa_cuda_regs_3072_int();
    case GPURSA_KERNEL_3072FN: return gpursa_cuda_regs_3072_fpn();
    /* a fused kernel (gpursa_cuda_launch_fused) runs in place of the CRT kernel:
     * both must load (this also allows their shared memory) */
    case GPURSA_KERNEL_3072FW: return gpursa_cuda_fused_regs_3072_fpw() ? gpursa_cuda_regs_3072_fpw() : 0;
    case GPURSA_KERNEL_4096:   return gpursa_cuda_regs_4096_int();
    case GPURSA_KERNEL_4096FN: return gpursa_cuda_regs_4096_fpn();
    case GPURSA_KERNEL_4096F:  return gpursa_cuda_fused_regs_4096_fp() ? gpursa_cuda_regs_4096_fp() : 0;
    default:                   return 0;
    }
}

/* The factor (check 0) and check (1) stages of a size: on FP64 limbs where the
 * device runs FP64 at full rate (a->fp64), else on 32-bit limbs. */
static cudaError_t gpursa_cuda_epow(int bits, int check, const gpursa_cuda_args *a, cudaStream_t s)
{
    switch (bits) {
    case 1024: return gpursa_cuda_epow_1024_int(check, a, s);
    case 2048: return a->fp64 ? gpursa_cuda_epow_2048_fp(check, a, s) : gpursa_cuda_epow_2048_int(check, a, s);
    case 3072: return a->fp64 ? gpursa_cuda_epow_3072_fp(check, a, s) : gpursa_cuda_epow_3072_int(check, a, s);
    case 4096: return a->fp64 ? gpursa_cuda_epow_4096_fp(check, a, s) : gpursa_cuda_epow_4096_int(check, a, s);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t gpursa_cuda_blind_factor(int bits, const gpursa_cuda_args *a, cudaStream_t s)
{
    return gpursa_cuda_epow(bits, 0, a, s);
}

cudaError_t gpursa_cuda_check(int bits, const gpursa_cuda_args *a, cudaStream_t s)
{
    return gpursa_cuda_epow(bits, 1, a, s);
}

int gpursa_cuda_epow_regs(int bits, int fp64)
{
    switch (bits) {
    case 1024: return gpursa_cuda_epow_regs_1024_int();              /* 32-bit limbs only */
    case 2048: return fp64 ? gpursa_cuda_epow_regs_2048_fp() : gpursa_cuda_epow_regs_2048_int();
    case 3072: return fp64 ? gpursa_cuda_epow_regs_3072_fp() : gpursa_cuda_epow_regs_3072_int();
    case 4096: return fp64 ? gpursa_cuda_epow_regs_4096_fp() : gpursa_cuda_epow_regs_4096_int();
    default: return 0;
    }
}
