/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-4096 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop_fp.h), for heavy loads: 4 lanes per
 * CRT half, 8 per item, 10 limbs of 52 bits a lane (40 a half) and 16 of 32
 * bits. The most limb products per shuffle, and the fewest warps (more
 * than 128 registers: one 256-thread block per SM). The squaring's loop and the
 * multiplication's are large here, and pay only with the block's warps kept
 * in the same one (GPURSA_COOP_FP_BARRIER); then the warps that share a
 * scheduler read their window's table entry at different times
 * (GPURSA_COOP_FP_STAGGER). */
#define GPURSA_COOP_H 64
#define GPURSA_COOP_L 16
#define GPURSA_COOP_FP 1
#define GPURSA_COOP_FP_SMEM 8    /* of the window table's 16 entries in shared memory */
#define GPURSA_COOP_FP_BARRIER 1 /* the block's warps meet at each window */
#define GPURSA_COOP_FP_STAGGER 1 /* half of them read the window entry later */
#define GPURSA_COOP_ONE_BLOCK 1   /* more than 128 registers: one block an SM in any case */
/* no GPURSA_COOP_FP_EARLY with the stagger (gpursa_coop_fp.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_4096_fp, gpursa_cuda_regs_4096_fp)
#endif
