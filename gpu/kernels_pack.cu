/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: big-endian byte strings <-> structure-of-arrays limbs,
 * and the wipe of a batch's device buffers.
 *
 * The host copies each caller's string once into pinned staging; turning
 * them into little-endian 32-bit limbs laid out limb-major (limb j of item i
 * at limbs[j * stride + i]) happens here, on the GPU, so that the
 * exponentiation kernels' loads and stores coalesce across a warp. A block
 * moves a tile of GPURSA_PACK_TILE items of one string through shared
 * memory, so that both sides coalesce: the byte strings are read (or
 * written) a string after another, each contiguous, and the limb arrays are
 * written (or read) limb row by limb row, GPURSA_PACK_TILE consecutive
 * items a row. (One thread a limb straight through would write each limb
 * row 4 bytes at a time, a whole memory sector per word.) Each kernel serves
 * a whole batch in one launch: a launch is host time that a small batch
 * pays for every stage.
 */
#include <stdint.h>
#include <stdlib.h>
#include "gpu/gpursa_cuda_kernels.h"

#define GPURSA_PACK_TILE 32          /* items a block: a warp's width of a limb row */
#define GPURSA_PACK_THREADS 256
#define GPURSA_PACK_MAX_WORDS 128    /* the limbs of RSA-4096, the largest size */

/* A tile: limb j of the block's item i at tile[i][j]; rows padded by one
 * word, so that a warp reading one limb of 32 items hits 32 banks. */
typedef uint32_t gpursa_pack_tile_t[GPURSA_PACK_TILE][GPURSA_PACK_MAX_WORDS + 1];

/* Block (x, s): items x * TILE .. of string s; nstr strings per item, side by
 * side from bytes + item * pitch; string s to the limb array limbs + s *
 * words * stride. The blocks of string 0 also preset their items' status
 * words, when status is given. */
static __global__ void __launch_bounds__(GPURSA_PACK_THREADS)
gpursa_pack_kernel(const unsigned char *__restrict__ bytes, size_t pitch, uint32_t *__restrict__ limbs,
                   uint32_t words, uint32_t count, uint32_t stride, int32_t *__restrict__ status)
{
    __shared__ gpursa_pack_tile_t tile;
    const uint32_t item0 = blockIdx.x * GPURSA_PACK_TILE, str = blockIdx.y;
    const uint32_t n = count - item0 < GPURSA_PACK_TILE ? count - item0 : GPURSA_PACK_TILE;
    const unsigned char *base = bytes + (size_t)item0 * pitch + (size_t)str * 4 * words;

    /* Word w of a big-endian string (from its start) is limb words - 1 - w,
     * its bytes reversed. pitch and nbytes are multiples of 4. */
    for (uint32_t t = threadIdx.x; t < n * words; t += GPURSA_PACK_THREADS) {
        const uint32_t i = t / words, w = t % words;
        const uint32_t v = *(const uint32_t *)(base + (size_t)i * pitch + 4 * (size_t)w);
        tile[i][words - 1 - w] = __byte_perm(v, 0, 0x0123);
    }
    __syncthreads();
    for (uint32_t t = threadIdx.x; t < GPURSA_PACK_TILE * words; t += GPURSA_PACK_THREADS) {
        const uint32_t i = t % GPURSA_PACK_TILE, j = t / GPURSA_PACK_TILE;
        if (i < n)
            limbs[((size_t)str * words + j) * stride + item0 + i] = tile[i][j];
    }
    if (status != NULL && str == 0 && threadIdx.x < n)
        status[item0 + threadIdx.x] = (int32_t)GPURSA_DEV_ST_PRESET;
}

/* Block (x, s): items x * TILE .. of limb array src.limbs[s], to the region
 * of array s: item i of array s at bytes + (s * count + i) * pitch. */
static __global__ void __launch_bounds__(GPURSA_PACK_THREADS)
gpursa_unpack_kernel(gpursa_cuda_limb_arrays src, unsigned char *__restrict__ bytes, size_t pitch,
                     uint32_t words, uint32_t count, uint32_t stride)
{
    __shared__ gpursa_pack_tile_t tile;
    const uint32_t item0 = blockIdx.x * GPURSA_PACK_TILE, s = blockIdx.y;
    const uint32_t n = count - item0 < GPURSA_PACK_TILE ? count - item0 : GPURSA_PACK_TILE;
    const uint32_t *limbs = src.limbs[s];
    unsigned char *base = bytes + ((size_t)s * count + item0) * pitch;

    for (uint32_t t = threadIdx.x; t < GPURSA_PACK_TILE * words; t += GPURSA_PACK_THREADS) {
        const uint32_t i = t % GPURSA_PACK_TILE, j = t / GPURSA_PACK_TILE;
        if (i < n)
            tile[i][j] = limbs[(size_t)j * stride + item0 + i];
    }
    __syncthreads();
    for (uint32_t t = threadIdx.x; t < n * words; t += GPURSA_PACK_THREADS) {
        const uint32_t i = t / words, w = t % words;
        *(uint32_t *)(base + (size_t)i * pitch + 4 * (size_t)w) = __byte_perm(tile[i][words - 1 - w], 0, 0x0123);
    }
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
    return (unsigned)((threads + GPURSA_PACK_THREADS - 1) / GPURSA_PACK_THREADS);
}

/* Tiles of GPURSA_PACK_TILE items along x, one string or limb array each along y */
static dim3 gpursa_pack_grid(uint32_t count, uint32_t arrays)
{
    return dim3((count + GPURSA_PACK_TILE - 1) / GPURSA_PACK_TILE, arrays, 1);
}

cudaError_t gpursa_cuda_pack(const unsigned char *bytes, size_t pitch, uint32_t nstr,
                             uint32_t *limbs, uint32_t nbytes, uint32_t count, uint32_t stride,
                             int32_t *status, cudaStream_t s)
{
    if (nbytes == 0 || nbytes % 4 != 0 || nbytes / 4 > GPURSA_PACK_MAX_WORDS || pitch % 4 != 0
        || nstr == 0 || nstr > 65535 || (uint64_t)nstr * nbytes > pitch || count > stride)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    gpursa_pack_kernel<<<gpursa_pack_grid(count, nstr), GPURSA_PACK_THREADS, 0, s>>>(
        bytes, pitch, limbs, nbytes / 4, count, stride, status);
    return cudaGetLastError();
}

cudaError_t gpursa_cuda_unpack(const uint32_t *const *limbs, uint32_t nsrc, unsigned char *bytes,
                               size_t pitch, uint32_t nbytes, uint32_t count, uint32_t stride,
                               cudaStream_t s)
{
    gpursa_cuda_limb_arrays src;

    if (nbytes == 0 || nbytes % 4 != 0 || nbytes / 4 > GPURSA_PACK_MAX_WORDS || pitch % 4 != 0
        || nbytes > pitch || count > stride || nsrc == 0 || nsrc > GPURSA_CUDA_UNPACK_MAX)
        return cudaErrorInvalidValue;
    if (count == 0)
        return cudaSuccess;
    for (uint32_t i = 0; i < GPURSA_CUDA_UNPACK_MAX; i++)
        src.limbs[i] = i < nsrc ? limbs[i] : NULL;
    gpursa_unpack_kernel<<<gpursa_pack_grid(count, nsrc), GPURSA_PACK_THREADS, 0, s>>>(
        src, bytes, pitch, nbytes / 4, count, stride);
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
    gpursa_wipe_kernel<<<gpursa_pack_blocks(threads), GPURSA_PACK_THREADS, 0, s>>>(
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
