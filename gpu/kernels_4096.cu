/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-4096 (CRT halves of 64 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 16 lanes per CRT half, 32 per item: the shortest
 * chain of the 32-bit kernels, for every load on devices without full-rate
 * FP64. Which COOP kernel runs a launch: gpursa_routes (gpursa_cuda_load.h). */
#define GPURSA_COOP_H 64
#define GPURSA_COOP_L 4
#define GPURSA_COOP_EPOW 1 /* and the factor and check stages (gpursa_coop_epow.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(4096)
GPURSA_EPOW_EXPORT(4096_int)
#endif
