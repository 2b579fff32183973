/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-2048 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop_fp.h): 4 lanes per CRT half, 8 per
 * item, 5 limbs of 52 bits a lane (20 a half); the 32-bit parts of the
 * operation use 8-limb lanes (32-bit limbs). */
#define GPURSA_COOP_H 32
#define GPURSA_COOP_L 8
#define GPURSA_COOP_FP 1
#define GPURSA_COOP_FP_SMEM 8    /* of the table's 16 entries in shared memory */
#define GPURSA_COOP_FP_EARLY 1   /* lane 0's carry ahead of m q */
#define GPURSA_COOP_EPOW 1 /* and the factor and check stages (gpursa_coop_epow.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_2048_fp, gpursa_cuda_regs_2048_fp)
GPURSA_EPOW_EXPORT(2048_fp)
#endif
