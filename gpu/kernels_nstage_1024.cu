/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages of RSA-1024 (kernels_nstage.cuh):
 * 32 limbs of n, 4 limbs a lane, a group of 8 lanes an item. */
#define GPURSA_COOP_H 32
#define GPURSA_COOP_L 4
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_nstage.cuh"

GPURSA_NSTAGE_SIZE(1024)
#endif
