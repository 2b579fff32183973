/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: big-endian byte strings <-> structure-of-arrays limbs.
 *
 * The host copies each caller's string once into pinned staging; turning
 * them into little-endian 32-bit limbs laid out limb-major (limb j of item i
 * at limbs[j * stride + i]) happens here, on the GPU, so that the
 * exponentiation kernels' loads and stores coalesce across a warp. One thread
 * per (item, limb); consecutive threads take consecutive limbs of one item,
 * so the byte-string side is read (or written) contiguously.
 */
#include <stdint.h>
#include <stdlib.h>
#include "gpu/gpursa_cuda_kernels.h"

static __global__ void gpursa_pack_kernel(const unsigned char *__restrict__ bytes, size_t pitch,
                                          uint32_t *__restrict__ limbs, uint32_t words,
                                          uint32_t count, uint32_t stride)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t item, j;
    uint32_t w;
    const unsigned char *src;

    if (t >= (uint64_t)count * words)
        return;
    item = (uint32_t)(t / words);
    j = (uint32_t)(t % words);
    /* Limb j (least significant first) is the word that ends 4*j bytes
     * before the end of the big-endian string. */
    src = bytes + (size_t)item * pitch + 4 * (size_t)(words - 1 - j);
    w = *(const uint32_t *)src;               /* pitch and nbytes are multiples of 4 */
    limbs[(size_t)j * stride + item] = __byte_perm(w, 0, 0x0123);
}

static __global__ void gpursa_unpack_kernel(const uint32_t *__restrict__ limbs,
                                            unsigned char *__restrict__ bytes, size_t pitch,
                                            uint32_t words, uint32_t count, uint32_t stride)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t item, j;

    if (t >= (uint64_t)count * words)
        return;
    item = (uint32_t)(t / words);
    j = (uint32_t)(t % words);
    *(uint32_t *)(bytes + (size_t)item * pitch + 4 * (size_t)(words - 1 - j)) =
        __byte_perm(limbs[(size_t)j * stride + item], 0, 0x0123);
}

static unsigned gpursa_pack_blocks(uint32_t count, uint32_t words)
{
    return (unsigned)(((uint64_t)count * words + 255) / 256);
}

cudaError_t gpursa_cuda_pack(const unsigned char *bytes, size_t pitch, uint32_t *limbs,
                             uint32_t nbytes, uint32_t count, uint32_t stride, cudaStream_t s)
{
    if (nbytes % 4 != 0 || pitch % 4 != 0 || count > stride)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    gpursa_pack_kernel<<<gpursa_pack_blocks(count, nbytes / 4), 256, 0, s>>>(
        bytes, pitch, limbs, nbytes / 4, count, stride);
    return cudaGetLastError();
}

cudaError_t gpursa_cuda_unpack(const uint32_t *limbs, unsigned char *bytes, size_t pitch,
                               uint32_t nbytes, uint32_t count, uint32_t stride, cudaStream_t s)
{
    if (nbytes % 4 != 0 || pitch % 4 != 0 || count > stride)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    gpursa_unpack_kernel<<<gpursa_pack_blocks(count, nbytes / 4), 256, 0, s>>>(
        limbs, bytes, pitch, nbytes / 4, count, stride);
    return cudaGetLastError();
}

int gpursa_cuda_kernel_regs(int bits, gpursa_variant v)
{
    switch (bits) {
    case 1024: return gpursa_cuda_regs_1024(v);
    case 2048: return gpursa_cuda_regs_2048(v);
    case 3072: return gpursa_cuda_regs_3072(v);
    case 4096: return gpursa_cuda_regs_4096(v);
    default: return 0;
    }
}
