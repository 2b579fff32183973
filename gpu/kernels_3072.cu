/* gpursa CUDA backend: the kernels for RSA-3072 (CRT halves of 48 limbs),
 * every variant; one file per size so that nvcc builds them in parallel. */
#include "gpu/kernels_rsa.cuh"

GPURSA_CUDA_SIZE(3072)
