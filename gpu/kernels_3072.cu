/* gpursa CUDA backend: the kernels for RSA-3072 (CRT halves of 48 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
/* COOP: 6 limbs per lane, 8 lanes per CRT half, 16 per item */
#define GPURSA_COOP_H 48
#define GPURSA_COOP_L 6
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(3072)
