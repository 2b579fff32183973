/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-4096 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop_fp.h), for middling loads: 8 lanes
 * per CRT half, 16 per item, 5 limbs of 52 bits a lane (40 a half), the
 * lane shape of the RSA-2048 FP64 kernel; the 32-bit parts of the operation
 * use 8-limb lanes. */
#define GPURSA_COOP_H 64
#define GPURSA_COOP_L 8
#define GPURSA_COOP_FP 1
#define GPURSA_COOP_FP_EARLY 1 /* lane 0's carry ahead of m q */
#define GPURSA_COOP_ONE_BLOCK 1
#define GPURSA_COOP_EPOW 1 /* and the factor and check stages (gpursa_coop_epow.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_4096_fpn, gpursa_cuda_regs_4096_fpn)
GPURSA_EPOW_EXPORT(4096_fp)
#endif
