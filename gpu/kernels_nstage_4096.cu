/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages of RSA-4096 (kernels_nstage.cuh):
 * 128 limbs of n, 8 limbs a lane, a group of 16 lanes an item. */
#include "gpu/kernels_nstage.cuh"

GPURSA_NSTAGE_SIZE(4096, gpursa_shape_nstage_4096)
