/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the modulus-n stages of RSA-3072 (kernels_nstage.cuh):
 * 96 limbs of n, 6 limbs a lane, a group of 16 lanes an item. */
#include "gpu/kernels_nstage.cuh"

GPURSA_NSTAGE_SIZE(3072, gpursa_shape_nstage_3072)
