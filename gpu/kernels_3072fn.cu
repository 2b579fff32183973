/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-3072 COOP with the secret exponentiations on
 * FP64 limbs (gpursa_coop_fp.h), for light loads: 8 lanes per
 * CRT half, 16 per item, 4 limbs of 52 bits a lane (32 a half); the 32-bit
 * parts of the operation use the 6-limb lanes of kernels_3072.cu. Its chain
 * per multiplication is the shortest of the FP64 shapes at this size. */
/* the shape: gpursa_shape_3072fn (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_3072fn, gpursa_cuda_launch_3072_fpn, gpursa_cuda_regs_3072_fpn)
GPURSA_EPOW_EXPORT(gpursa_shape_3072fn, 3072_fp)
