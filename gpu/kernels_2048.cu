/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-2048 (CRT halves of 32 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 8 lanes per CRT half, 16 per item, for devices
 * without full-rate FP64. Loads (items in flight on the device) of up to
 * 1,024 items go to the 2-limb kernel (kernels_2048n.cu), heavier ones on a
 * device with full-rate FP64 to the FP64-limb kernels: 4 lanes a half
 * (kernels_2048f.cu) up to 6,000, 2 lanes (kernels_2048f2.cu) above: fewer
 * instructions an item, but 64 items a block and one block an SM, so
 * lighter loads would leave SMs idle. From 1,025 items on, the 4-lane FP64
 * kernel finishes a batch sooner than this one (its block of 32 items takes
 * less time than this one's of 16) and signs more a second at every load
 * (doc/design.md, "Why the kernels are shaped as they are") */
#define GPURSA_COOP_H 32
#define GPURSA_COOP_L 4
#define GPURSA_COOP_NARROW_UPTO 1024
#define GPURSA_COOP_NARROW_LAUNCH gpursa_cuda_launch_2048_narrow
#define GPURSA_COOP_WIDEST_ABOVE 6000
#define GPURSA_COOP_WIDEST_LAUNCH gpursa_cuda_launch_2048_fp2
#define GPURSA_COOP_WIDE_ABOVE 1024
#define GPURSA_COOP_WIDE_LAUNCH gpursa_cuda_launch_2048_fp
/* Under MPS the other processes' load is unseen and each process's batches
 * are small: the FP64 4-lane kernel then signs more than this one and than
 * the FP64 2-lane one, whose lone batch also takes longer (doc/design.md,
 * "Why the kernels are shaped as they are") */
#define GPURSA_COOP_SHARED_LAUNCH gpursa_cuda_launch_2048_fp
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(2048)
#endif
