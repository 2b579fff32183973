/* gpursa CUDA backend: RSA-4096 COOP with the secret exponentiations on
 * FP64 limbs (GPURSA_COOP_FP, gpursa_coop.h), for heavy loads: 4 lanes per
 * CRT half, 8 per item, 10 limbs of 52 bits a lane (40 a half) and 16 of 32
 * bits. The most limb products per shuffle, and the fewest warps (255
 * registers, a few spilled: one 256-thread block per SM). */
#define GPURSA_COOP_H 64
#define GPURSA_COOP_L 16
#define GPURSA_COOP_FP 1
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_4096_fp, gpursa_cuda_regs_4096_fp)
