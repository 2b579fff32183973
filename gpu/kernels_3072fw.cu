/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-3072 COOP with the secret exponentiations on
 * FP64 limbs (gpursa_coop_fp.h), for heavy loads: 3 lanes per
 * CRT half, 6 per item (five items a warp, its last two lanes mirroring
 * lanes of the fifth), 10 limbs of 52 bits a lane (30 a half: the fewest
 * that hold 1,538 bits) and 16 of 32 bits. The lane shape of
 * kernels_4096f.cu, with its barrier and staggered table reads: 30 limbs a
 * half where 4 lanes of 8 need 32, for the same registers. */
/* the shape: gpursa_shape_3072fw (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_3072fw, gpursa_cuda_launch_3072_fpw, gpursa_cuda_regs_3072_fpw)
GPURSA_FUSED_EXPORT(gpursa_shape_3072fw, 3072_fpw)
