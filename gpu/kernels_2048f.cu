/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-2048 COOP with the secret exponentiations on
 * FP64 limbs (gpursa_coop_fp.h): 4 lanes per CRT half, 8 per
 * item, 5 limbs of 52 bits a lane (20 a half); the 32-bit parts of the
 * operation use 8-limb lanes (32-bit limbs). */
/* the shape: gpursa_shape_2048f (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_2048f, gpursa_cuda_launch_2048_fp, gpursa_cuda_regs_2048_fp)
GPURSA_EPOW_EXPORT(gpursa_shape_2048f, 2048_fp)
