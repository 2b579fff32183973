/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages of RSA-3072 (kernels_nstage.cuh):
 * 96 limbs of n, 6 limbs a lane, a group of 16 lanes an item. */
#define GPURSA_COOP_H 96
#define GPURSA_COOP_L 6
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_nstage.cuh"

GPURSA_NSTAGE_SIZE(3072)
#endif
