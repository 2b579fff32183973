/* SPDX-License-Identifier: Apache-2.0 */
/* gpursa CUDA backend: the kernels for RSA-3072 (CRT halves of 48 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 6 limbs per lane, 8 lanes per CRT half, 16 per item. On a device
 * with full-rate FP64 the secret exponentiations run on FP64 limbs instead:
 * on the same lanes (kernels_3072fn.cu) for loads up to 2,048 items, on 3
 * lanes a half (kernels_3072fw.cu) above that and on a device shared
 * through MPS. Each is faster than these 32-bit lanes at every load on
 * Hopper. The 3-lane kernel does the least work per item, and with half
 * its window table in shared memory it is at least as fast as 4 lanes of 8
 * limbs at every load it runs (doc/design.md, "Why the kernels are shaped
 * as they are"). */
#define GPURSA_COOP_H 48
#define GPURSA_COOP_L 6
#define GPURSA_COOP_FP_ABOVE 0
#define GPURSA_COOP_FP_LAUNCH gpursa_cuda_launch_3072_fpn
#define GPURSA_COOP_WIDEST_ABOVE 2048
#define GPURSA_COOP_WIDEST_LAUNCH gpursa_cuda_launch_3072_fpw
#define GPURSA_COOP_SHARED_LAUNCH gpursa_cuda_launch_3072_fpw
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(3072)
#endif
