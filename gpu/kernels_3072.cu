/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-3072 (CRT halves of 48 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 6 limbs per lane, 8 lanes per CRT half, 16 per item: the kernel of
 * every load on devices without full-rate FP64. Which COOP kernel runs a
 * launch: gpursa_routes (gpursa_cuda_load.h). */
#define GPURSA_COOP_H 48
#define GPURSA_COOP_L 6
#define GPURSA_COOP_EPOW 1 /* and the factor and check stages (gpursa_coop_epow.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(3072)
GPURSA_EPOW_EXPORT(3072_int)
#endif
