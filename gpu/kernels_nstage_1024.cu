/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages of RSA-1024 (kernels_nstage.cuh):
 * 32 limbs of n, 4 limbs a lane, a group of 8 lanes an item. */
#include "gpu/kernels_nstage.cuh"

GPURSA_NSTAGE_SIZE(1024, gpursa_shape_nstage_1024)
