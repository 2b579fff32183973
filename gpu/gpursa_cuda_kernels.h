/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend, internal: how backend_cuda.cu launches the kernels
 * that kernels_<bits>.cu instantiate. Not part of the gpu/ interface.
 *
 * Layout on the device (structure of arrays, so that thread i's loads of
 * limb j sit next to thread i+1's and a warp's accesses coalesce):
 *   limb j (32 bits, little-endian order of limbs) of item i is at
 *   array[j * stride + i], stride >= number of items.
 * The caller's big-endian byte strings travel as they are (one memcpy per
 * item on the host) and the pack/unpack kernels here turn them into limbs
 * and back on the GPU, where a transpose costs nothing next to an
 * exponentiation; one launch each per batch.
 */
#ifndef GPURSA_CUDA_KERNELS_H
#define GPURSA_CUDA_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>
#include "gpu/gpursa_cuda_load.h"
#include "gpu/gpursa_cuda_status.h"   /* the device status words (GPURSA_DEV_ST_*) */
#include "gpu/gpursa_gpu.h"

/* Arguments of one batch launch (all pointers are device pointers). */
typedef struct {
    const void *const *keys;  /* per item: the device copy of its key */
    const uint32_t *in;       /* SoA limbs, stride items */
    const uint32_t *r;
    uint32_t *rinv;           /* the blinding stage leaves rinv R_n mod n here */
    const uint32_t *re;       /* (r^e R_n) mod n: the factor stage's output, the
                               * blinding stage's input */
    uint32_t *out;            /* SoA limbs */
    int32_t *status;          /* per item, gpursa_item_status */
    uint32_t count;           /* items in this launch */
    uint32_t stride;          /* limb stride of the SoA arrays */
    uint32_t load;            /* items this process runs on the device at once, this
                               * launch's included, scaled to a device of
                               * GPURSA_CUDA_REF_SMS SMs (gpursa_cuda_load): where a
                               * size has kernels of several lane widths, the width
                               * follows the load (gpursa_route_pick) */
    uint32_t shared;          /* the device is shared with other processes (MPS), whose
                               * load this process does not see: never the narrowest
                               * lanes, which do the most work per item */
    uint32_t fp64;            /* the device runs FP64 at full rate (sm_80, sm_90): the
                               * FP64-limb kernels may run; elsewhere (sm_75, 86, 89:
                               * 1/32 to 1/64 rate) only the 32-bit ones */
    int32_t test_skip;        /* tests only (gpursa_cuda_debug_fault_items), else -1: the
                               * stages around the CRT kernel leave this item untouched,
                               * so its status word is what the backend preset */
    int32_t test_corrupt;     /* tests only, else -1: the unblinding stage adds n to this
                               * item's result before its check of out < n */
} gpursa_cuda_args;

/* The stages around every private-operation kernel (blinding before the CRT
 * split and unblinding after Garner's recombination, as OpenSSL does), in order:
 *   factor:  reads r; writes A R_n mod n to out, for A = r^e mod n and R_n =
 *            2^bits (gpursa_coop_epow.h, on the CRT kernel's halves:
 *            kernels_route.cu picks the FP64 or the 32-bit one).
 *   blind:   reads in (c), r, rinv, re (A R_n); writes c A mod n to out, rinv R_n
 *            mod n over rinv, and the status word GPURSA_DEV_ST_BLINDED, or
 *            GPURSA_DEV_ST_BADINPUT when c, r or rinv >= n or r rinv != 1 mod n
 *            (out and rinv then hold no secret-derived value)
 *            (gpursa_coop_nstage.h, kernels_nstage_<bits>.cu).
 *   the CRT kernel (gpursa_cuda_launch_<bits>) then reads the blinded value as its in
 *            and writes m = in^d mod n (CRT halves, Garner) to out; no status.
 *   unblind: reads out (m), rinv (rinv R_n) and the status word; writes out = m rinv mod n and
 *            GPURSA_DEV_ST_UNBLINDED only when the status word was BLINDED and
 *            out < n; else out = 0 and the word stays BADINPUT or becomes the preset.
 *   check:   reads out (o), in (the caller's c) and the status word; writes
 *            GPURSA_DEV_ST_OK only when the word was UNBLINDED and o^e = c mod n
 *            (modulo p and q), else out = 0 and the word stays BADINPUT or becomes
 *            the preset (gpursa_coop_epow.h, as the factor stage).
 * bits: 1024, 2048, 3072 or 4096; cudaErrorInvalidValue for another. */
cudaError_t gpursa_cuda_blind_factor(int bits, const gpursa_cuda_args *a, cudaStream_t s);
cudaError_t gpursa_cuda_blind(int bits, const gpursa_cuda_args *a, cudaStream_t s);
cudaError_t gpursa_cuda_unblind(int bits, const gpursa_cuda_args *a, cudaStream_t s);
cudaError_t gpursa_cuda_check(int bits, const gpursa_cuda_args *a, cudaStream_t s);
/* Registers per thread of the blinding and unblinding stages' kernels of a size;
 * 0 when not built. */
int gpursa_cuda_nstage_regs(int bits);
/* ... of the factor and check stages' kernels of a size, on FP64 limbs (fp64) or
 * 32-bit ones; 0 when not built or not loadable here. */
int gpursa_cuda_epow_regs(int bits, int fp64);
/* Each file's factor and check stages (check: 0 factor, 1 check), and their
 * registers: kernels_<bits>.cu on 32-bit limbs (_int), kernels_2048f.cu,
 * kernels_3072fn.cu and kernels_4096fn.cu on FP64 limbs (_fp). */
#define GPURSA_CUDA_EPOW_DECLARE(NAME)                                                       \
    cudaError_t gpursa_cuda_epow_##NAME(int check, const gpursa_cuda_args *a, cudaStream_t s); \
    int gpursa_cuda_epow_regs_##NAME(void);
GPURSA_CUDA_EPOW_DECLARE(1024_int)
GPURSA_CUDA_EPOW_DECLARE(2048_int)
GPURSA_CUDA_EPOW_DECLARE(3072_int)
GPURSA_CUDA_EPOW_DECLARE(4096_int)
GPURSA_CUDA_EPOW_DECLARE(2048_fp)
GPURSA_CUDA_EPOW_DECLARE(3072_fp)
GPURSA_CUDA_EPOW_DECLARE(4096_fp)
#undef GPURSA_CUDA_EPOW_DECLARE

/* The whole operation, the five stages above, as one kernel
 * (gpursa_coop_fused.h) on the COOP kernel that the routing table picks for
 * this launch (a->load), where that kernel's shape sets `fused`
 * (gpursa_shapes.h: RSA-3072's and 4096's heavy-load FP64 kernels); reads and
 * writes what the five stages do. cudaErrorNotSupported, having queued
 * nothing, where the picked kernel has no fused form: then the five stages
 * run. */
cudaError_t gpursa_cuda_launch_fused(int bits, const gpursa_cuda_args *a, cudaStream_t s);
#define GPURSA_CUDA_FUSED_DECLARE(NAME)                                                      \
    cudaError_t gpursa_cuda_fused_##NAME(const gpursa_cuda_args *a, cudaStream_t s);        \
    int gpursa_cuda_fused_regs_##NAME(void);
GPURSA_CUDA_FUSED_DECLARE(3072_fpw)
GPURSA_CUDA_FUSED_DECLARE(4096_fp)
#undef GPURSA_CUDA_FUSED_DECLARE

/* Launch the private-operation kernel of one modulus size and variant on
 * stream s. Returns cudaErrorInvalidValue for a size/variant not built. */
cudaError_t gpursa_cuda_launch_1024(gpursa_variant v, const gpursa_cuda_args *a, cudaStream_t s);
cudaError_t gpursa_cuda_launch_2048(gpursa_variant v, const gpursa_cuda_args *a, cudaStream_t s);
cudaError_t gpursa_cuda_launch_3072(gpursa_variant v, const gpursa_cuda_args *a, cudaStream_t s);
cudaError_t gpursa_cuda_launch_4096(gpursa_variant v, const gpursa_cuda_args *a, cudaStream_t s);
/* The COOP kernels, one file each (gpursa_kernel in gpursa_cuda_load.h names
 * them and its table gpursa_routes says which launch runs which): each
 * file's launcher and register query. The 32-bit kernels of each size's own
 * file (kernels_<bits>.cu) are the _int ones. */
#define GPURSA_CUDA_KERNEL_DECLARE(NAME)                                           \
    cudaError_t gpursa_cuda_launch_##NAME(const gpursa_cuda_args *a, cudaStream_t s); \
    int gpursa_cuda_regs_##NAME(void);
GPURSA_CUDA_KERNEL_DECLARE(1024_int)
GPURSA_CUDA_KERNEL_DECLARE(2048_int)
GPURSA_CUDA_KERNEL_DECLARE(2048_narrow)
GPURSA_CUDA_KERNEL_DECLARE(2048_fp)
GPURSA_CUDA_KERNEL_DECLARE(2048_fp2)
GPURSA_CUDA_KERNEL_DECLARE(3072_int)
GPURSA_CUDA_KERNEL_DECLARE(3072_fpn)
GPURSA_CUDA_KERNEL_DECLARE(3072_fpw)
GPURSA_CUDA_KERNEL_DECLARE(4096_int)
GPURSA_CUDA_KERNEL_DECLARE(4096_fp)
GPURSA_CUDA_KERNEL_DECLARE(4096_fpn)
#undef GPURSA_CUDA_KERNEL_DECLARE

/* A COOP launch of a bits-bit modulus on the kernel gpursa_route_pick names
 * for its load and device (kernels_route.cu). */
cudaError_t gpursa_cuda_launch_routed(int bits, const gpursa_cuda_args *a, cudaStream_t s);
/* Registers per thread of kernel k; 0 when it is not built for this device
 * or cannot run here (an FP64 kernel's shared memory above 48 KB refused). */
int gpursa_cuda_route_regs(gpursa_kernel k);

/* Big-endian byte strings to SoA limbs, one launch for a batch: count items,
 * item i's nstr strings of nbytes each side by side from bytes[i * pitch]
 * (nstr * nbytes <= pitch), string s to the limb array limbs + s * (nbytes / 4)
 * * stride (the arrays consecutive, as in, r and rinv are). With status
 * non-NULL the same launch presets status[0 .. count) to GPURSA_DEV_ST_PRESET,
 * every word of them on every launch. nbytes and pitch are multiples of 4,
 * nbytes at most 512 (RSA-4096: the shared-memory tile's width); else
 * cudaErrorInvalidValue, as for unpack. */
cudaError_t gpursa_cuda_pack(const unsigned char *bytes, size_t pitch, uint32_t nstr,
                             uint32_t *limbs, uint32_t nbytes, uint32_t count, uint32_t stride,
                             int32_t *status, cudaStream_t s);
/* ... and back: nsrc (<= GPURSA_CUDA_UNPACK_MAX) limb arrays, limbs[s] on the
 * device (the host array limbs lists them), to nsrc consecutive regions of
 * count strings, item i of array s at bytes[(s * count + i) * pitch]. */
#define GPURSA_CUDA_UNPACK_MAX 4
typedef struct {
    const uint32_t *limbs[GPURSA_CUDA_UNPACK_MAX];
} gpursa_cuda_limb_arrays;
cudaError_t gpursa_cuda_unpack(const uint32_t *const *limbs, uint32_t nsrc, unsigned char *bytes,
                               size_t pitch, uint32_t nbytes, uint32_t count, uint32_t stride,
                               cudaStream_t s);
/* Zeros len bytes from bytes (len and the address multiples of 4) and the
 * first count columns of rows limb rows from limbs (row k at limbs + k *
 * stride), in one launch: a batch's wipe of its device buffers. */
cudaError_t gpursa_cuda_wipe(unsigned char *bytes, size_t len, uint32_t *limbs, uint32_t rows,
                             uint32_t count, uint32_t stride, cudaStream_t s);

/* Registers per thread of a kernel; 0 when that size/variant is not built
 * for this device (the backend refuses it then). */
int gpursa_cuda_regs_1024(gpursa_variant v);
int gpursa_cuda_regs_2048(gpursa_variant v);
int gpursa_cuda_regs_3072(gpursa_variant v);
int gpursa_cuda_regs_4096(gpursa_variant v);
int gpursa_cuda_kernel_regs(int bits, gpursa_variant v);

/* The larger of two kernels' registers a thread (a stage's pair of kernels);
 * 0 when either is not built for this device. */
static inline int gpursa_cuda_regs_of2(const void *k1, const void *k2)
{
    cudaFuncAttributes a1, a2;
    if (cudaFuncGetAttributes(&a1, k1) != cudaSuccess || cudaFuncGetAttributes(&a2, k2) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a1.numRegs > a2.numRegs ? a1.numRegs : a2.numRegs;
}

#endif /* GPURSA_CUDA_KERNELS_H */
