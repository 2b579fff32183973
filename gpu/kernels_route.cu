/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the COOP kernels by name (gpursa_kernel), and a COOP
 * launch on the kernel the routing table picks (gpursa_cuda_load.h). */
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
    case GPURSA_KERNEL_3072FW: return gpursa_cuda_regs_3072_fpw();
    case GPURSA_KERNEL_4096:   return gpursa_cuda_regs_4096_int();
    case GPURSA_KERNEL_4096FN: return gpursa_cuda_regs_4096_fpn();
    case GPURSA_KERNEL_4096F:  return gpursa_cuda_regs_4096_fp();
    default:                   return 0;
    }
}
