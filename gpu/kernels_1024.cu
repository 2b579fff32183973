/* gpursa CUDA backend: the kernels for RSA-1024 (CRT halves of 16 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(1024)
