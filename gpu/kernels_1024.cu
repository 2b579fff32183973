/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-1024 (CRT halves of 16 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 4 lanes per CRT half, 8 per item */
#define GPURSA_COOP_H 16
#define GPURSA_COOP_L 4
#define GPURSA_COOP_EPOW 1 /* and the factor and check stages (gpursa_coop_epow.h) */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(1024)
GPURSA_EPOW_EXPORT(1024_int)
#endif
