/* gpursa CUDA backend: the kernels for RSA-4096 (CRT halves of 64 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 16 lanes per CRT half, 32 per item */
#define GPURSA_COOP_H 64
#define GPURSA_COOP_L 4
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(4096)
