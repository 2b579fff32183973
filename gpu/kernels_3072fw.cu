/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-3072 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop_fp.h), for heavy loads: 3 lanes per
 * CRT half, 6 per item (five items a warp, its last two lanes mirroring
 * lanes of the fifth), 10 limbs of 52 bits a lane (30 a half: the fewest
 * that hold 1,538 bits) and 16 of 32 bits. The lane shape of
 * kernels_4096f.cu, with its barrier and staggered table reads: 30 limbs a
 * half where 4 lanes of 8 need 32, for the same registers. */
#define GPURSA_COOP_H 48
#define GPURSA_COOP_L 16
#define GPURSA_COOP_FP 1
#define GPURSA_COOP_FP_SMEM 8    /* of the window table's 16 entries in shared memory */
#define GPURSA_COOP_FP_BARRIER 1 /* the block's warps meet at each window */
#define GPURSA_COOP_FP_STAGGER 1 /* half of them read the window entry later */
#define GPURSA_COOP_ONE_BLOCK 1   /* more than 128 registers: one block an SM in any case */
/* no GPURSA_COOP_FP_EARLY with the stagger (gpursa_coop_fp.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_3072_fpw, gpursa_cuda_regs_3072_fpw)
#endif
