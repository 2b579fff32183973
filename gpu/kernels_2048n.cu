/* gpursa CUDA backend: RSA-2048 COOP with 2 limbs per lane (16 lanes per CRT
 * half, a whole warp per item), for loads of up to 1,024 items: the
 * shortest chain per multiplication, so a lone batch takes 3.1 ms instead of
 * the 4-limb kernel's 4.6, and up to 1,024 items it is also the faster one
 * (412,144 against 385,022 ops/s at 1,024 on an H100, bench/RESULTS.md). */
#define GPURSA_COOP_H 32
#define GPURSA_COOP_L 2
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_2048_narrow, gpursa_cuda_regs_2048_narrow)
#endif
