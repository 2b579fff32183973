/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages of RSA-2048 (kernels_nstage.cuh):
 * 64 limbs of n, 8 limbs a lane, a group of 8 lanes an item. */
#include "gpu/kernels_nstage.cuh"

GPURSA_NSTAGE_SIZE(2048, gpursa_shape_nstage_2048)
