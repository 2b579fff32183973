/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-4096 COOP with the secret exponentiations on
 * FP64 limbs (gpursa_coop_fp.h), for heavy loads: 4 lanes per
 * CRT half, 8 per item, 10 limbs of 52 bits a lane (40 a half) and 16 of 32
 * bits. The most limb products per shuffle, and the fewest warps (more
 * than 128 registers: one 256-thread block per SM). The squaring's loop and the
 * multiplication's are large here, and pay only with the block's warps kept
 * in the same one (fp_barrier); then the warps that share a
 * scheduler read their window's table entry at different times
 * (fp_stagger). */
/* the shape: gpursa_shape_4096f (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_4096f, gpursa_cuda_launch_4096_fp, gpursa_cuda_regs_4096_fp)
GPURSA_FUSED_EXPORT(gpursa_shape_4096f, 4096_fp)
