/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-2048 COOP with 2 limbs per lane (16 lanes per CRT
 * half, a whole warp per item), for loads of up to 1,024 items: the
 * shortest chain per multiplication, so a lone batch finishes sooner than on
 * the 4-limb kernel, and up to 1,024 items it is also the faster one on
 * Hopper (doc/design.md, "Why the kernels are shaped as they are"). */
/* the shape: gpursa_shape_2048n (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_2048n, gpursa_cuda_launch_2048_narrow, gpursa_cuda_regs_2048_narrow)
