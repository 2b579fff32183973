/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-4096 (CRT halves of 64 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 16 lanes per CRT half, 32 per item: the shortest
 * chain of the 32-bit kernels, for devices without full-rate FP64. With it
 * the secret exponentiations run on FP64 limbs instead: 8 lanes a half
 * (kernels_4096fn.cu) up to 2,048 items, a lone item included (that kernel
 * finishes one sooner than these 32-bit lanes), 4 lanes a half
 * (kernels_4096f.cu) above that and on a device shared through MPS
 * (doc/design.md, "Why the kernels are shaped as they are"). */
#define GPURSA_COOP_H 64
#define GPURSA_COOP_L 4
#define GPURSA_COOP_FP_ABOVE 0
#define GPURSA_COOP_FP_LAUNCH gpursa_cuda_launch_4096_fpn
#define GPURSA_COOP_WIDE_ABOVE 2048
#define GPURSA_COOP_WIDE_LAUNCH gpursa_cuda_launch_4096_fp
#define GPURSA_COOP_SHARED_LAUNCH gpursa_cuda_launch_4096_fp
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(4096)
#endif
