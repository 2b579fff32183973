/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-4096 COOP with the secret exponentiations on
 * FP64 limbs (gpursa_coop_fp.h), for middling loads: 8 lanes
 * per CRT half, 16 per item, 5 limbs of 52 bits a lane (40 a half), the
 * lane shape of the RSA-2048 FP64 kernel; the 32-bit parts of the operation
 * use 8-limb lanes. */
/* the shape: gpursa_shape_4096fn (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_4096fn, gpursa_cuda_launch_4096_fpn, gpursa_cuda_regs_4096_fpn)
GPURSA_EPOW_EXPORT(gpursa_shape_4096fn, 4096_fp)
