/* gpursa CUDA backend: the kernels for RSA-4096 (CRT halves of 64 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(4096)
