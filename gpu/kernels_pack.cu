/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: big-endian byte strings <-> structure-of-arrays limbs,
 * and the wipe of a batch's device buffers.
 *
 * The host copies each caller's string once into pinned staging; turning
 * them into little-endian 32-bit limbs laid out limb-major (limb j of item i
 * at limbs[j * stride + i]) happens here, on the GPU, so that the
 * exponentiation kernels' loads and stores coalesce across a warp. One thread
 * per (item, string, limb); consecutive threads take consecutive limbs of one
 * string, then the item's next string, so the byte-string side is read (or
 * written) contiguously. Each kernel serves a whole batch in one launch: a
 * launch is host time that a small batch pays for every stage.
 */
#include <stdint.h>
#include <stdlib.h>
#include "gpu/gpursa_cuda_kernels.h"

/* nstr strings per item, side by side from bytes + item * pitch; string s
 * to the limb array limbs + s * words * stride. Thread (item, string 0,
 * limb 0) also presets the item's status word, when status is given. */
static __global__ void gpursa_pack_kernel(const unsigned char *__restrict__ bytes, size_t pitch,
                                          uint32_t nstr, uint32_t *__restrict__ limbs,
                                          uint32_t words, uint32_t count, uint32_t stride,
                                          int32_t *__restrict__ status)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t q;
    uint32_t item, str, j;
    uint32_t w;
    const unsigned char *src;

    if (t >= (uint64_t)count * nstr * words)
        return;
    q = t / words;                            /* the string: item * nstr + str */
    j = (uint32_t)(t % words);
    item = (uint32_t)(q / nstr);
    str = (uint32_t)(q % nstr);
    /* Limb j (least significant first) is the word that ends 4*j bytes
     * before the end of the big-endian string. */
    src = bytes + (size_t)item * pitch + (size_t)str * 4 * words + 4 * (size_t)(words - 1 - j);
    w = *(const uint32_t *)src;               /* pitch and nbytes are multiples of 4 */
    limbs[((size_t)str * words + j) * stride + item] = __byte_perm(w, 0, 0x0123);
    if (status != NULL && str == 0 && j == 0)
        status[item] = (int32_t)GPURSA_DEV_ST_PRESET;
}

/* nsrc limb arrays (src.limbs[s]) to nsrc consecutive regions of count
 * strings each: item i of array s at bytes + (s * count + i) * pitch. */
static __global__ void gpursa_unpack_kernel(gpursa_cuda_limb_arrays src,
                                            unsigned char *__restrict__ bytes, size_t pitch,
                                            uint32_t nsrc, uint32_t words, uint32_t count,
                                            uint32_t stride)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t q;
    uint32_t s, item, j;

    if (t >= (uint64_t)nsrc * count * words)
        return;
    q = t / words;                            /* the string: s * count + item */
    j = (uint32_t)(t % words);
    s = (uint32_t)(q / count);
    item = (uint32_t)(q % count);
    *(uint32_t *)(bytes + (size_t)q * pitch + 4 * (size_t)(words - 1 - j)) =
        __byte_perm(src.limbs[s][(size_t)j * stride + item], 0, 0x0123);
}

/* Zeros nwords words from bytes, then the first count columns of rows limb
 * rows from limbs (row k at limbs + k * stride). */
static __global__ void gpursa_wipe_kernel(uint32_t *__restrict__ bytes, uint64_t nwords,
                                          uint32_t *__restrict__ limbs, uint32_t rows,
                                          uint32_t count, uint32_t stride)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (t < nwords) {
        bytes[t] = 0;
        return;
    }
    t -= nwords;
    if (t >= (uint64_t)rows * count)
        return;
    limbs[(size_t)(t / count) * stride + (size_t)(t % count)] = 0;
}

static unsigned gpursa_pack_blocks(uint64_t threads)
{
    return (unsigned)((threads + 255) / 256);
}

cudaError_t gpursa_cuda_pack(const unsigned char *bytes, size_t pitch, uint32_t nstr,
                             uint32_t *limbs, uint32_t nbytes, uint32_t count, uint32_t stride,
                             int32_t *status, cudaStream_t s)
{
    if (nbytes == 0 || nbytes % 4 != 0 || pitch % 4 != 0 || nstr == 0
        || (uint64_t)nstr * nbytes > pitch || count > stride)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    gpursa_pack_kernel<<<gpursa_pack_blocks((uint64_t)count * nstr * (nbytes / 4)), 256, 0, s>>>(
        bytes, pitch, nstr, limbs, nbytes / 4, count, stride, status);
    return cudaGetLastError();
}

cudaError_t gpursa_cuda_unpack(const uint32_t *const *limbs, uint32_t nsrc, unsigned char *bytes,
                               size_t pitch, uint32_t nbytes, uint32_t count, uint32_t stride,
                               cudaStream_t s)
{
    gpursa_cuda_limb_arrays src;

    if (nbytes == 0 || nbytes % 4 != 0 || pitch % 4 != 0 || nbytes > pitch || count > stride
        || nsrc == 0 || nsrc > GPURSA_CUDA_UNPACK_MAX)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    for (uint32_t i = 0; i < GPURSA_CUDA_UNPACK_MAX; i++)
        src.limbs[i] = i < nsrc ? limbs[i] : NULL;
    gpursa_unpack_kernel<<<gpursa_pack_blocks((uint64_t)nsrc * count * (nbytes / 4)), 256, 0, s>>>(
        src, bytes, pitch, nsrc, nbytes / 4, count, stride);
    return cudaGetLastError();
}

cudaError_t gpursa_cuda_wipe(unsigned char *bytes, size_t len, uint32_t *limbs, uint32_t rows,
                             uint32_t count, uint32_t stride, cudaStream_t s)
{
    uint64_t threads;

    if (len % 4 != 0 || (uintptr_t)bytes % 4 != 0 || count > stride)
        return cudaErrorInvalidValue;
    threads = (uint64_t)(len / 4) + (uint64_t)rows * count;
    if (threads == 0)
        return cudaSuccess;
    gpursa_wipe_kernel<<<gpursa_pack_blocks(threads), 256, 0, s>>>(
        (uint32_t *)bytes, (uint64_t)(len / 4), limbs, rows, count, stride);
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
