/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-3072 (CRT halves of 48 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 6 limbs per lane, 8 lanes per CRT half, 16 per item: the kernel of
 * every load on devices without full-rate FP64. Which COOP kernel runs a
 * launch: gpursa_routes (gpursa_cuda_load.h). */
/* the shape: gpursa_shape_3072 (gpursa_shapes.h) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(3072, gpursa_shape_3072)
GPURSA_EPOW_EXPORT(gpursa_shape_3072, 3072_int)
