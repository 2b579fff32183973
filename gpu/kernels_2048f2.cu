/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: RSA-2048 COOP with the secret exponentiations on
 * FP64 limbs (gpursa_coop_fp.h), for heavy loads: 2 lanes per
 * CRT half, 4 per item, 10 limbs of 52 bits a lane (20 a half) and 16 of 32
 * bits: the lane shape of kernels_4096f.cu at half the length, with its
 * barrier. Against kernels_2048f.cu's 4 lanes of 5 limbs a half does half
 * the CIOS steps, each with twice the limb products, so the step's fixed
 * part (its shuffles, q, the shift) is paid half as often; at more than 128
 * registers an SM holds one 64-item block instead of two of 32, so it runs only loads
 * that keep the SMs busy (kernels_2048.cu; doc/design.md,
 * "Why the kernels are shaped as they are"), and is built for one block an SM. */
/* the shape: gpursa_shape_2048f2 (gpursa_shapes.h) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_shape_2048f2, gpursa_cuda_launch_2048_fp2, gpursa_cuda_regs_2048_fp2)
