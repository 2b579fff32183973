/* gpursa CUDA backend: the kernels for RSA-2048 (CRT halves of 32 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 4 limbs per lane, 8 lanes per CRT half, 16 per item */
#define GPURSA_COOP_H 32
#define GPURSA_COOP_L 4
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(2048)
