/* gpursa CUDA backend: RSA-3072 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop.h), for loads of 2,049 to 8,192
 * items: 4 lanes per CRT half, 8 per item, 8 limbs of 52 bits a lane (32 a
 * half) and 12 of 32 bits. ptxas gives it 251-254 registers, one 256-thread
 * block per SM. */
#define GPURSA_COOP_H 48
#define GPURSA_COOP_L 12
#define GPURSA_COOP_FP 1
#define GPURSA_COOP_FP_W 3       /* a window table of half the size */
#ifndef GPURSA_COOP_SHAPE_ONLY /* the host tests take the shape above (tests/gpu/Makefile.am) */
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_3072_fp, gpursa_cuda_regs_3072_fp)
#endif
