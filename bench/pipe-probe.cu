/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/pipe-probe.cu - how many 32x32-bit integer products (IMAD lo + IMAD.HI)
 * and how many FP64 fused multiply-adds (DFMA) the GPU issues per second, each
 * alone and both in one kernel, to see whether the FP64 pipe adds to the
 * integer one. A probe for kernel design (doc/design.md, "Why FP64 limbs"),
 * not part of the provider.
 *
 *   nvcc -O3 -arch=sm_90 -o pipe-probe bench/pipe-probe.cu && ./pipe-probe
 *
 * Each thread runs CHAINS independent chains (enough independent work to
 * hide latency), ITERS steps each; the results are folded into one word per
 * thread and stored, so nothing is optimised away. Timed with CUDA events,
 * median of 5 launches after a warm-up.
 */
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <cuda_runtime.h>

#define CHAINS 8
#define ITERS 4096

#define CK(x)                                                                      \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));               \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* mode 1: integer products (IMAD + IMAD.HI); 2: FP64 FMAs; 3: both,
 * interleaved; 4: IMAD alone (low halves); 8: IMAD.WIDE (64-bit products) */
template <int MODE>
__global__ void probe(uint64_t *out, uint32_t seed)
{
    uint32_t x[CHAINS], h[CHAINS];
    double d[CHAINS];
    const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t y = seed * 2654435761u + tid;
    const double dy = 1.0000001 + (double)(tid & 7) * 1e-9, dz = 1e-300;
#pragma unroll
    for (int c = 0; c < CHAINS; c++) {
        x[c] = tid * 97u + (uint32_t)c * 1315423911u + seed;
        h[c] = 0;
        d[c] = (double)(x[c] | 1u);
    }
#pragma unroll 4
    for (int i = 0; i < ITERS; i++) {
#pragma unroll
        for (int c = 0; c < CHAINS; c++) {
            if (MODE & 1) {
                h[c] = __umulhi(x[c], y) + h[c];          /* IMAD.HI */
                x[c] = x[c] * y + h[c];                   /* IMAD */
            }
            if (MODE & 2)
                d[c] = fma(d[c], dy, dz);                 /* DFMA */
            if (MODE & 4)
                x[c] = x[c] * y + h[c] + (uint32_t)c;     /* IMAD */
            if (MODE & 8) {
                uint64_t w = (uint64_t)x[c] * y + h[c];   /* IMAD.WIDE.U32 */
                x[c] = (uint32_t)w;
                h[c] = (uint32_t)(w >> 32);
            }
        }
    }
    uint64_t acc = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; c++)
        acc ^= (uint64_t)x[c] ^ ((uint64_t)h[c] << 32) ^ (uint64_t)__double_as_longlong(d[c]);
    out[tid] = acc;
}

template <int MODE>
static float run(uint64_t *out, unsigned blocks, unsigned threads)
{
    cudaEvent_t a, b;
    float t[5];
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    probe<MODE><<<blocks, threads>>>(out, 1);                 /* warm-up */
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    for (int k = 0; k < 5; k++) {
        CK(cudaEventRecord(a));
        probe<MODE><<<blocks, threads>>>(out, (uint32_t)k + 2);
        CK(cudaGetLastError());
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&t[k], a, b));
    }
    std::sort(t, t + 5);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return t[2];
}

int main(void)
{
    cudaDeviceProp p;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&p, dev));
    const unsigned threads = 256, blocks = (unsigned)p.multiProcessorCount * 8;
    const double n = (double)blocks * threads * CHAINS * ITERS;
    uint64_t *out;
    CK(cudaMalloc(&out, sizeof(uint64_t) * blocks * threads));
    float t1 = run<1>(out, blocks, threads), t2 = run<2>(out, blocks, threads),
          t3 = run<3>(out, blocks, threads), t4 = run<4>(out, blocks, threads),
          t8 = run<8>(out, blocks, threads);
    printf("device: %s, %d SMs, %d threads a block, %u blocks, %d chains x %d steps a thread\n",
           p.name, p.multiProcessorCount, threads, blocks, CHAINS, ITERS);
    printf("integer 32x32 products (IMAD + IMAD.HI) alone: %.3f ms, %.1f G products/s\n", t1,
           n / t1 / 1e6);
    printf("FP64 FMAs alone:                              %.3f ms, %.1f G DFMA/s\n", t2,
           n / t2 / 1e6);
    printf("both in one kernel:                           %.3f ms (alone, one after the other: "
           "%.3f ms) -> %.2fx\n", t3, t1 + t2, (t1 + t2) / t3);
    printf("IMAD alone (low halves only):                 %.3f ms, %.1f G/s\n", t4, n / t4 / 1e6);
    printf("IMAD.WIDE (both halves in one instruction):   %.3f ms, %.1f G products/s\n", t8,
           n / t8 / 1e6);
    CK(cudaFree(out));
    return 0;
}
