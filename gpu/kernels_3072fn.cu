/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-3072 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop_fp.h), for light loads: 8 lanes per
 * CRT half, 16 per item, 4 limbs of 52 bits a lane (32 a half); the 32-bit
 * parts of the operation use the 6-limb lanes of kernels_3072.cu. Its chain
 * per multiplication is the shortest of the FP64 shapes at this size. */
#define GPURSA_COOP_H 48
#define GPURSA_COOP_L 6
#define GPURSA_COOP_FP 1
#define GPURSA_COOP_FP_EARLY 1 /* lane 0's carry ahead of m q */
#define GPURSA_COOP_ONE_BLOCK 1
#define GPURSA_COOP_EPOW 1 /* and the factor and check stages (gpursa_coop_epow.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_3072_fpn, gpursa_cuda_regs_3072_fpn)
GPURSA_EPOW_EXPORT(3072_fp)
#endif
