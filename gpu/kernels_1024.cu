/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-1024 (CRT halves of 16 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 4 lanes per CRT half, 8 per item */
/* the shape: gpursa_shape_1024 (gpursa_shapes.h) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(1024, gpursa_shape_1024)
GPURSA_EPOW_EXPORT(gpursa_shape_1024, 1024_int)
