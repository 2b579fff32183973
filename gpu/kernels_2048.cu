/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-2048 (CRT halves of 32 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 8 lanes per CRT half, 16 per item: the kernel of
 * loads above 1,024 on devices without full-rate FP64 and of every load
 * under MPS there. Which COOP kernel runs a launch: gpursa_routes
 * (gpursa_cuda_load.h). */
/* the shape: gpursa_shape_2048 (gpursa_shapes.h) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(2048, gpursa_shape_2048)
GPURSA_EPOW_EXPORT(gpursa_shape_2048, 2048_int)
