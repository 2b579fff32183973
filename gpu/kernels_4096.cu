/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-4096 (CRT halves of 64 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 16 lanes per CRT half, 32 per item: the shortest
 * chain of the 32-bit kernels, for every load on devices without full-rate
 * FP64. Which COOP kernel runs a launch: gpursa_routes (gpursa_cuda_load.h). */
/* the shape: gpursa_shape_4096 (gpursa_shapes.h) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(4096, gpursa_shape_4096)
GPURSA_EPOW_EXPORT(gpursa_shape_4096, 4096_int)
