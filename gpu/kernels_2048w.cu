/* gpursa CUDA backend: RSA-2048 COOP with 8 limbs per lane (4 lanes per CRT
 * half, 8 per item), for loads of more than 2,048 items. The same
 * multiplication as 4 limbs per lane does twice the multiply-adds per warp
 * shuffle: 685,150 against 589,082 ops/s at 8,192 items on an H100, but a
 * lone batch takes 7.2 ms instead of 4.6 (bench/RESULTS.md), so the 4-limb
 * kernel keeps the light loads. */
#define GPURSA_COOP_H 32
#define GPURSA_COOP_L 8
#include "gpu/kernels_coop.cuh"

GPURSA_COOP_EXPORT(gpursa_cuda_launch_2048_wide, gpursa_cuda_regs_2048_wide)
