/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa CUDA backend: gpursa_cuda_backend_ops behind gpu/gpursa_gpu.h.
 *
 * A device is one CUDA device with the kernel variant picked for it. A key
 * is converted once on the host (gpursa_keyconv) and copied to device memory;
 * items carry the device address of their key, so one batch may mix keys of
 * one size. A batch owns pinned staging, device buffers for max_items, one
 * stream and its events: submit and wait allocate nothing.
 *
 * Every CUDA error becomes a gpursa_gpu_rc. Errors that leave the context
 * unusable (illegal address, launch failure, ...) mark the device lost: from
 * then on every call answers GPURSA_GPU_ERR_LOST and the caller reopens it
 * later (doc/design.md, "Batching and fallback": faults and failures).
 */
#include "config.h"

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpursa_gpu.h"
#include "gpu/gpursa_keyconv.h"
#include "gpu/gpursa_cuda_kernels.h"
#include "gpu/gpursa_cuda_debug.h"

#define GPURSA_CUDA_KEY_MAGIC 0x6b435552u   /* "RUCk": catches foreign handles */
#define GPURSA_CUDA_MAX_ITEMS (1u << 24)     /* the kernels index items with 32 bits */
/* Batch-size classes of the completion estimate (gpursa_cuda_class): one per
 * count below 8, then four an octave up to GPURSA_CUDA_MAX_ITEMS */
#define GPURSA_CUDA_CLASSES (8 + 4 * (24 - 2))

/* What the batches of one key size and size class took on the device, from
 * their first stream operation to ev_done, in ns (gpursa_cuda_est_note);
 * mean 0: none yet. Read and written with relaxed atomics by every runner of
 * the device, without a lock: a lost update only delays what it would teach. */
typedef struct {
    int64_t mean;                            /* falls fast, rises slowly: a low quantile */
    int64_t dev;                             /* mean absolute deviation from mean */
} gpursa_cuda_est;

struct gpursa_gpu_device {
    int index;
    gpursa_variant variant;                  /* asked for, or the 2048-bit choice of AUTO */
    gpursa_variant by_size[GPURSA_NSIZES];   /* per modulus size (gpursa_size_bits) */
    int cc_major, cc_minor;
    int sm_count;
    int shared;                              /* contexts on it are shared through MPS */
    int fp64;                                /* FP64 at full rate: the FP64-limb kernels */
    uint32_t inflight[GPURSA_NSIZES];        /* per size: items submitted, not yet waited (atomic) */
    int lost;                                /* set by any sticky CUDA error (atomic) */
    int debug;                               /* cuda_debug: CUDA errors on stderr */
    char desc[256];
    gpursa_cuda_est est[GPURSA_NSIZES][GPURSA_CUDA_CLASSES];  /* batch_wait's sleep */
};

struct gpursa_gpu_key {
    uint32_t magic;
    int bits;
    gpursa_gpu_device *dev;
    void *dkey;                              /* device copy of the converted key */
    size_t size;
};

struct gpursa_gpu_batch {
    gpursa_gpu_device *dev;
    int bits;
    size_t nbytes;                           /* modulus bytes */
    size_t max_items;                        /* as asked */
    size_t stride;                           /* SoA stride: max_items rounded up to 32 */
    uint32_t counted;                        /* items this batch adds to dev->inflight */
    cudaStream_t stream;
    cudaEvent_t ev_start, ev_in, ev_kernel, ev_done;
    /* pinned host staging (key pointers and byte strings in; out bytes, input
     * echo and status words home) and the device buffer between them, laid out
     * per batch as gpursa_cuda_layout says; sized for stride items */
    unsigned char *h_in;                     /* in_len */
    unsigned char *h_out;                    /* home_len */
    unsigned char *d_bytes;                  /* dev_len */
    uint32_t *d_limbs;                       /* in, r, rinv, out: 4 arrays of words*stride;
                                              * the blinding stage overwrites r with c r^e
                                              * and rinv with rinv R */
    gpursa_gpu_item *items;                  /* the submitted batch, until wait */
    size_t count;
    size_t slots;                            /* items the launches ran: count, or the top
                                              * of its size class for a graph (zero-padded) */
    /* The stream operations of a batch of up to GPURSA_CUDA_GRAPH_MAX items,
     * captured once per size class and CRT kernel, replayed with one call;
     * no_graphs after a capture failed (then every batch launches each
     * operation on its own, as larger ones do) */
    cudaGraphExec_t graphs[GPURSA_CUDA_GRAPH_CLASSES][GPURSA_KERNEL_COUNT_ + 1];
    int no_graphs;
    int submitted;                           /* 1 between submit and wait */
    int done;                                /* 1 after wait: poll answers finished */
    int failed;                              /* an error since submit: no item is OK */
    double t_kernel, t_in, t_out;
    int64_t t_submit;                        /* CLOCK_MONOTONIC ns before ev_start was queued */
};

/* ---- errors ----------------------------------------------------------------- */

/* CUDA errors after which the context is unusable until the process resets the
 * device: every later call fails the same way. Among them the loss of the
 * process's MPS server (it ended, or ended this client): the work queued
 * there never completes, so nothing may wait on it any more (a stream or
 * device synchronisation would block for good), and CUDA does not let the
 * process reconnect; a new process (a reloaded nginx worker) can. */
static int gpursa_cuda_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorMpsConnectionFailed:
    case cudaErrorMpsRpcFailure:
    case cudaErrorMpsClientTerminated:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
    case cudaErrorDevicesUnavailable:
    case cudaErrorCudartUnloading:
    case cudaErrorContextIsDestroyed:
    case cudaErrorIncompatibleDriverContext:
    case cudaErrorSystemNotReady:
        return 1;
    default:
        return 0;
    }
}

/* Map a CUDA error to the interface's codes; what the caller was doing
 * decides the default (a failed memcpy is COPY, a failed launch LAUNCH). */
static int gpursa_cuda_rc(gpursa_gpu_device *dev, cudaError_t e, int what)
{
    if (e == cudaSuccess)
        return GPURSA_GPU_OK;
    if (dev != NULL && dev->debug)
        fprintf(stderr, "gpursa cuda: %s (%d)\n", cudaGetErrorString(e), (int)e);
    if (gpursa_cuda_sticky(e)) {
        if (dev != NULL)
            __atomic_store_n(&dev->lost, 1, __ATOMIC_RELEASE);
        return GPURSA_GPU_ERR_LOST;
    }
    switch (e) {
    case cudaErrorMemoryAllocation:
        (void)cudaGetLastError();            /* not sticky: clear it */
        return GPURSA_GPU_ERR_NOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorInitializationError:
        return GPURSA_GPU_ERR_NODEV;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
        (void)cudaGetLastError();
        return GPURSA_GPU_ERR_UNSUPPORTED;
    default:
        (void)cudaGetLastError();
        return what;
    }
}

/* Make dev current in this thread (the runtime's current device is per
 * thread and the queue may call from any). */
static int gpursa_cuda_enter(gpursa_gpu_device *dev)
{
    if (__atomic_load_n(&dev->lost, __ATOMIC_ACQUIRE))
        return GPURSA_GPU_ERR_LOST;
    return gpursa_cuda_rc(dev, cudaSetDevice(dev->index), GPURSA_GPU_ERR_NODEV);
}

/* ---- devices ------------------------------------------------------------------ */

static int gpursa_cuda_device_count(int *count)
{
    int n = 0;
    cudaError_t e;

    if (count == NULL)
        return GPURSA_GPU_ERR_INVALID;
    *count = 0;
    e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return GPURSA_GPU_ERR_NODEV;          /* no driver or no device: count 0 */
    }
    *count = n;
    return GPURSA_GPU_OK;
}

/* Sizes and variants built into this binary and loadable on the current
 * device: the CRT kernel and the stages around it (a batch runs all five;
 * the factor and check stages' 32-bit kernels, which run where FP64 is
 * not at full rate or did not load). */
static int gpursa_cuda_has(int bits, gpursa_variant v)
{
    return gpursa_cuda_kernel_regs(bits, v) > 0 && gpursa_cuda_nstage_regs(bits) > 0
           && gpursa_cuda_epow_regs(bits, 0) > 0;
}

/* The variant a device runs for one modulus size when the caller leaves it
 * to us: the two-pass algorithm where the multiplier is 16 bits wide (before
 * sm_70); on Hopper the fastest (doc/design.md, "Why the kernels are
 * shaped as they are"): COOP for 2048, 3072 and 4096 (lower latency at every
 * batch size and the higher peak; its FP64-limb kernels run the heavier
 * loads, where FP64 is full rate), FAST for 1024, whose halves' chains are
 * already short. sm_80 (A100, full-rate FP64 like Hopper) runs COOP too, by
 * the same reasoning (not benchmarked there); other devices the row-oriented
 * carry chains, the portable baseline (COOP not benchmarked there either). */
static gpursa_variant gpursa_cuda_auto_variant(int major, int minor, int bits)
{
    if (major < 7)
        return GPURSA_VARIANT_XMAD;
    if ((major >= 9 || (major == 8 && minor == 0)) && bits >= 2048
        && gpursa_cuda_has(bits, GPURSA_VARIANT_COOP))
        return GPURSA_VARIANT_COOP;
    if (major >= 9 && bits <= 2048 && gpursa_cuda_has(bits, GPURSA_VARIANT_FAST))
        return GPURSA_VARIANT_FAST;
    return GPURSA_VARIANT_IMAD;
}

static int gpursa_cuda_device_open(int index, const gpursa_gpu_open_params *params,
                                   gpursa_gpu_device **out)
{
    static const gpursa_gpu_open_params defaults = {};
    struct cudaDeviceProp prop;
    gpursa_gpu_device *dev;
    gpursa_variant variant;
    int count = 0, rc, fp64_lost = 0;

    if (params == NULL)
        params = &defaults;
    variant = params->variant;
    if (out == NULL || variant < GPURSA_VARIANT_AUTO || variant >= GPURSA_VARIANT_COUNT_)
        return GPURSA_GPU_ERR_INVALID;
    *out = NULL;
    if ((rc = gpursa_cuda_device_count(&count)) != GPURSA_GPU_OK)
        return rc;
    if (index < 0 || index >= count)
        return GPURSA_GPU_ERR_NODEV;
    dev = (gpursa_gpu_device *)calloc(1, sizeof(*dev));
    if (dev == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    dev->debug = params->cuda_debug != 0;
    if ((rc = gpursa_cuda_rc(dev, cudaGetDeviceProperties(&prop, index),
                             GPURSA_GPU_ERR_NODEV)) != GPURSA_GPU_OK) {
        free(dev);
        return rc;
    }
    dev->index = index;
    dev->cc_major = prop.major;
    dev->cc_minor = prop.minor;
    /* FP64 at half the FP32 rate (as fast as IMAD) on the data-centre parts,
     * sm_80 and sm_90; 1/32 to 1/64 on sm_75, sm_86, sm_89 (T4, A10, L4), and
     * unknown on newer architectures, which keep the 32-bit kernels. */
    dev->fp64 = (prop.major == 8 && prop.minor == 0) || prop.major == 9;
    /* cuda_fp64 = 0 routes COOP as on a device without it (the 32-bit
     * kernels take every load), = 1 as on one with it, for tests and
     * experiments: the CUDA suite runs the 32-bit kernels on Hopper with it */
    if (params->cuda_fp64 != GPURSA_FP64_AUTO)
        dev->fp64 = params->cuda_fp64 == GPURSA_FP64_ON;
    dev->sm_count = prop.multiProcessorCount;
    /* Create the context now so that the first batch does not pay for it
     * (and the kernel queries below answer for this device). */
    rc = gpursa_cuda_rc(dev, cudaSetDevice(index), GPURSA_GPU_ERR_NODEV);
    if (rc == GPURSA_GPU_OK)
        rc = gpursa_cuda_rc(dev, cudaFree(0), GPURSA_GPU_ERR_NODEV);
    if (rc != GPURSA_GPU_OK) {
        free(dev);
        return rc;
    }
    /* Under MPS other processes use the device too, unseen from here: said
     * in the description, and the RSA-2048 launcher then runs its FP64-limb
     * kernel for every load, however light this process's own: with many
     * processes keeping the device busy, the widest lanes do the same
     * signatures with fewer instructions and less power than the narrow
     * ones that suit a lone light batch (doc/design.md, "Why the kernels are
     * shaped as they are").
     * A driver that does not know the attribute answers an error: not
     * shared. */
    {
        int mps = 0;
        if (cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, index) != cudaSuccess) {
            (void)cudaGetLastError();
            mps = 0;
        }
        dev->shared = mps != 0;
    }
    for (int i = 0; i < GPURSA_NSIZES; i++)
        dev->by_size[i] = variant == GPURSA_VARIANT_AUTO
                              ? gpursa_cuda_auto_variant(prop.major, prop.minor, gpursa_size_bits[i])
                              : variant;
    dev->variant = dev->by_size[gpursa_size_index(2048)];
    /* Load every kernel this device may run now. With CUDA's lazy module
     * loading (the default since CUDA 12.2) a kernel's first launch loads it,
     * which can wait for kernels running on other streams: a queue that first
     * needs its 1,025-item kernel under load stalls every batch in flight,
     * which makes the latency tail at light load (doc/design.md, "What the
     * queue's settings rest on"). A function's attributes query loads it. */
    {
        for (int i = 0; i < GPURSA_NSIZES; i++) {
            (void)gpursa_cuda_kernel_regs(gpursa_size_bits[i], dev->by_size[i]);
            (void)gpursa_cuda_nstage_regs(gpursa_size_bits[i]);
            (void)gpursa_cuda_epow_regs(gpursa_size_bits[i], 0);
        }
        /* Every kernel of the routing table. One that needs full-rate
         * FP64 and does not load on this device, or may not have its
         * shared memory here (its query raises the limit above 48 KB),
         * would fail every batch routed to it: then the 32-bit kernels take
         * every load, as on a device without full-rate FP64. */
        int fp64_loads = 1;
        for (size_t i = 0; i < GPURSA_NROUTES; i++)
            if (gpursa_cuda_route_regs(gpursa_routes[i].kernel) <= 0 && gpursa_routes[i].fp64)
                fp64_loads = 0;
        for (int i = 0; i < GPURSA_NSIZES; i++)         /* the FP64 factor and check stages */
            if (gpursa_cuda_epow_regs(gpursa_size_bits[i], 1) <= 0)
                fp64_loads = 0;
        if (!fp64_loads) {
            fp64_lost = dev->fp64;
            dev->fp64 = 0;
        }
    }
    if (!gpursa_cuda_has(2048, dev->variant) && !gpursa_cuda_has(1024, dev->variant)) {
        free(dev);                            /* no kernel image for this device */
        return GPURSA_GPU_ERR_UNSUPPORTED;
    }
    snprintf(dev->desc, sizeof(dev->desc),
             "cuda:%d %s (sm_%d%d, %d SMs, %.0f MiB), variant %s/%s/%s/%s for 1024/2048/3072/4096, "
             "%d registers (RSA-2048)%s%s",
             index, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
             prop.totalGlobalMem / 1048576.0, gpursa_variant_name(dev->by_size[0]),
             gpursa_variant_name(dev->by_size[1]),
             gpursa_variant_name(dev->by_size[2]), gpursa_variant_name(dev->by_size[3]),
             gpursa_cuda_kernel_regs(2048, dev->variant),
             fp64_lost ? ", 32-bit limbs only (an FP64-limb kernel did not load)"
             : params->cuda_fp64 == GPURSA_FP64_OFF ? ", 32-bit limbs only (cuda_fp64 = 0)"
             : params->cuda_fp64 == GPURSA_FP64_ON ? ", FP64 limbs (cuda_fp64 = 1)" : "",
             dev->shared ? ", shared through MPS" : "");
    *out = dev;
    return GPURSA_GPU_OK;
}

static void gpursa_cuda_device_close(gpursa_gpu_device *dev)
{
    free(dev);
}

static const char *gpursa_cuda_device_describe(const gpursa_gpu_device *dev)
{
    return dev != NULL ? dev->desc : "cuda: no device";
}

/* ---- keys --------------------------------------------------------------------- */

static int gpursa_cuda_key_upload(gpursa_gpu_device *dev, const gpursa_rsa_key_material *km,
                                  gpursa_gpu_key **out)
{
    gpursa_gpu_key *key;
    void *host = NULL;
    size_t size = 0;
    int bits, rc;

    if (dev == NULL || km == NULL || out == NULL)
        return GPURSA_GPU_ERR_INVALID;
    *out = NULL;
    if ((rc = gpursa_cuda_enter(dev)) != GPURSA_GPU_OK)
        return rc;
    bits = gpursa_gpu_key_supported(km);
    if (bits == 0)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    if (!gpursa_cuda_has(bits, dev->by_size[gpursa_size_index(bits)]))
        return GPURSA_GPU_ERR_UNSUPPORTED;
    /* Host-side precomputation (limbs, Montgomery constants) once per key;
     * the kernels read the gpursa_rsa_keydata as it is. */
    host = malloc(sizeof(gpursa_rsa_keydata));
    if (host == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    size = sizeof(gpursa_rsa_keydata);
    rc = gpursa_keyconv_load((gpursa_rsa_keydata *)host, km);
    if (rc != GPURSA_GPU_OK) {
        free(host);                           /* keyconv wiped it */
        return rc;
    }
    key = (gpursa_gpu_key *)calloc(1, sizeof(*key));
    if (key == NULL) {
        gpursa_keyconv_cleanse(host, size);
        free(host);
        return GPURSA_GPU_ERR_NOMEM;
    }
    rc = gpursa_cuda_rc(dev, cudaMalloc(&key->dkey, size), GPURSA_GPU_ERR_NOMEM);
    if (rc == GPURSA_GPU_OK)
        rc = gpursa_cuda_rc(dev, cudaMemcpy(key->dkey, host, size, cudaMemcpyHostToDevice),
                            GPURSA_GPU_ERR_COPY);
    /* the device copy is the one we keep */
    gpursa_keyconv_cleanse(host, size);
    free(host);
    if (rc != GPURSA_GPU_OK) {
        if (key->dkey != NULL) {
            (void)cudaMemset(key->dkey, 0, size);
            (void)cudaFree(key->dkey);
        }
        free(key);
        return rc;
    }
    key->magic = GPURSA_CUDA_KEY_MAGIC;
    key->bits = bits;
    key->dev = dev;
    key->size = size;
    *out = key;
    return GPURSA_GPU_OK;
}

/* Test hooks (gpursa_cuda_debug.h): the last freed key's wiped device
 * memory, kept instead of freed while keeping is on. */
static pthread_mutex_t gpursa_cuda_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static int gpursa_cuda_keep_freed;
static void *gpursa_cuda_kept;
static size_t gpursa_cuda_kept_size;

static void gpursa_cuda_key_free(gpursa_gpu_device *dev, gpursa_gpu_key *key)
{
    if (key == NULL)
        return;
    if (key->dkey != NULL && (dev == NULL || gpursa_cuda_enter(dev) == GPURSA_GPU_OK)) {
        void *old = NULL;

        /* Wipe before free: freed device memory is handed to the next
         * allocation as it is. cudaMemset is ordered after all work on the
         * legacy stream; synchronise so a running batch is done with it. */
        (void)cudaDeviceSynchronize();
        (void)cudaMemset(key->dkey, 0, key->size);
        (void)cudaDeviceSynchronize();
        pthread_mutex_lock(&gpursa_cuda_kept_lock);
        if (gpursa_cuda_keep_freed) {
            old = gpursa_cuda_kept;
            gpursa_cuda_kept = key->dkey;
            gpursa_cuda_kept_size = key->size;
        } else {
            old = key->dkey;
        }
        pthread_mutex_unlock(&gpursa_cuda_kept_lock);
        if (old != NULL)
            (void)cudaFree(old);
    }
    key->magic = 0;
    key->dkey = NULL;
    free(key);
}

void gpursa_cuda_debug_keep_freed_keys(int on)
{
    void *old;

    pthread_mutex_lock(&gpursa_cuda_kept_lock);
    gpursa_cuda_keep_freed = on != 0;
    old = on ? NULL : gpursa_cuda_kept;
    if (!on) {
        gpursa_cuda_kept = NULL;
        gpursa_cuda_kept_size = 0;
    }
    pthread_mutex_unlock(&gpursa_cuda_kept_lock);
    if (old != NULL)
        (void)cudaFree(old);
}

static int gpursa_cuda_debug_read(const void *dptr, size_t size, void *out, size_t cap, size_t *len)
{
    if (dptr == NULL || out == NULL || len == NULL || cap < size)
        return GPURSA_GPU_ERR_INVALID;
    *len = size;
    return cudaMemcpy(out, dptr, size, cudaMemcpyDeviceToHost) == cudaSuccess ? GPURSA_GPU_OK
                                                                              : GPURSA_GPU_ERR_COPY;
}

int gpursa_cuda_debug_read_freed_key(void *out, size_t cap, size_t *len)
{
    int rc;

    pthread_mutex_lock(&gpursa_cuda_kept_lock);
    rc = gpursa_cuda_debug_read(gpursa_cuda_kept, gpursa_cuda_kept_size, out, cap, len);
    pthread_mutex_unlock(&gpursa_cuda_kept_lock);
    return rc;
}

int gpursa_cuda_debug_read_key(const gpursa_gpu_key *key, void *out, size_t cap, size_t *len)
{
    if (key == NULL || key->magic != GPURSA_CUDA_KEY_MAGIC)
        return GPURSA_GPU_ERR_INVALID;
    return gpursa_cuda_debug_read(key->dkey, key->size, out, cap, len);
}

/* Fault injection (gpursa_cuda_debug.h): the items every later batch's
 * unblinding stage leaves unwritten or corrupts; -1: none. */
static int gpursa_cuda_fault_skip = -1, gpursa_cuda_fault_corrupt = -1;

void gpursa_cuda_debug_fault_items(int skip, int corrupt)
{
    __atomic_store_n(&gpursa_cuda_fault_skip, skip < 0 ? -1 : skip, __ATOMIC_RELAXED);
    __atomic_store_n(&gpursa_cuda_fault_corrupt, corrupt < 0 ? -1 : corrupt, __ATOMIC_RELAXED);
}

/* ---- batches ------------------------------------------------------------------ */

static size_t gpursa_cuda_words(const gpursa_gpu_batch *b)
{
    return b->nbytes / 4;
}

/* Where a batch of n items of nb bytes a string lies in h_in, d_bytes and
 * h_out (byte offsets). h_in and d_bytes share their layout, so that one copy
 * takes the key pointers and the strings in:
 *   [0, keys)                   the n key pointers (device addresses)
 *   [keys, status)              the strings: item i's in, r and rinv side by
 *                               side (pitch 3 nb) from keys + 3 nb i
 *   [status, status + 4 n)      d_bytes only: the status words (GPURSA_DEV_ST_*),
 *                               outside the strings: the launch that presets
 *                               them reads the strings
 * The unpack writes the out bytes and the input echo over the last 2 nb n
 * bytes of the strings (consumed by the pack before it), ending where the
 * status words begin, so that one copy of [home, status + 4 n) brings all three
 * to h_out: [0, nb n) out bytes, [nb n, 2 nb n) echo, [2 nb n, 2 nb n + 4 n)
 * status words. nb is a multiple of 4 and the key pointers start the buffers,
 * so every offset is aligned for what lies there. The secrets are the strings
 * (in d_bytes also the results and echo written over them) and h_out's first
 * 2 nb n bytes; the key pointers and status words are not. */
typedef struct {
    size_t keys;                             /* the strings' offset, after the key pointers */
    size_t status;                           /* the status words' offset, after the strings */
    size_t home;                             /* the out bytes' offset in d_bytes */
    size_t home_status;                      /* the status words' offset in h_out */
    size_t in_len;                           /* h_in: bytes copied in (key pointers, strings) */
    size_t dev_len;                          /* d_bytes: in_len and the status words */
    size_t home_len;                         /* h_out: bytes copied out (out, echo, status) */
} gpursa_cuda_layout;

static gpursa_cuda_layout gpursa_cuda_layout_of(size_t nb, size_t n)
{
    gpursa_cuda_layout l;

    l.keys = sizeof(void *) * n;
    l.status = l.keys + 3 * nb * n;
    l.home = l.status - 2 * nb * n;
    l.home_status = 2 * nb * n;
    l.in_len = l.status;
    l.dev_len = l.status + sizeof(int32_t) * n;
    l.home_len = l.home_status + sizeof(int32_t) * n;
    return l;
}

/* ---- completion --------------------------------------------------------------- */

/* The monotonic clock, in ns */
static int64_t gpursa_cuda_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps until t on the monotonic clock (ns); a signal may end it earlier. */
static void gpursa_cuda_sleep_until(int64_t t)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(t / 1000000000);
    ts.tv_nsec = (long)(t % 1000000000);
    (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* The estimate for a batch of n items of size index si, and its spread: the
 * class's, or else the nearest smaller class's that has one (more items take
 * no less time, so a borrowed estimate errs early); 0 when there is none. */
static int64_t gpursa_cuda_est_get(gpursa_gpu_device *dev, int si, size_t n, int64_t *spread)
{
    for (unsigned c = gpursa_cuda_class(n); c > 0; c--) {
        gpursa_cuda_est *e = &dev->est[si][c];
        int64_t m = __atomic_load_n(&e->mean, __ATOMIC_RELAXED);

        if (m > 0) {
            *spread = __atomic_load_n(&e->dev, __ATOMIC_RELAXED);
            return m;
        }
    }
    *spread = 0;
    return 0;
}

/* Learns that a batch of n items of size index si took t ns on the device.
 * The estimate falls by half the difference and rises by an eighth of it, and
 * a sample counts for at most four times the estimate: it sits below the
 * usual time, so that the wait wakes early rather than late; when the device
 * gets faster (under MPS, when other processes' load goes) each batch halves
 * what the wait oversleeps; and one batch held back on the device does not
 * push it far up. */
static void gpursa_cuda_est_note(gpursa_gpu_device *dev, int si, size_t n, int64_t t)
{
    gpursa_cuda_est *e = &dev->est[si][gpursa_cuda_class(n)];
    int64_t m = __atomic_load_n(&e->mean, __ATOMIC_RELAXED);
    int64_t d = __atomic_load_n(&e->dev, __ATOMIC_RELAXED);
    int64_t err;

    if (t <= 0)
        return;                               /* the events' times were not read */
    if (m <= 0) {
        m = t;
        d = t / 8;                            /* no spread seen yet */
    } else {
        if (t > 4 * m)
            t = 4 * m;
        err = t - m;
        m += err < 0 ? err / 2 : err / 8;
        d += ((err < 0 ? -err : err) - d) / 4;
    }
    __atomic_store_n(&e->dev, d, __ATOMIC_RELAXED);
    __atomic_store_n(&e->mean, m > 0 ? m : 1, __ATOMIC_RELAXED);
}

/*
 * Waits for ev_done in the calling thread alone. CUDA serves a host function
 * queued on a stream, and the waiters of a blocking-sync event, from threads
 * of its own, which wake (and poll) for every batch before the waiter wakes;
 * here only the waiter wakes, and only on its own timer. It sleeps until
 * the batch is about due, as the device's earlier batches of its key size
 * and size class predict (gpursa_cuda_est), then queries the event, with
 * short sleeps between queries that grow when the batch is late: one to a
 * few wake-ups of the waiter a batch, none of any other thread, and the
 * results seen at most one short sleep after they are home. The event is
 * queried before any sleep, so a batch done while the runner topped up its
 * pools costs no wake-up at all.
 *
 * The predicted end is the submit time plus the estimate. It errs early
 * twice over: the estimate sits below the usual time (gpursa_cuda_est_note),
 * and it is the device's own time from the batch's first stream operation,
 * which the device runs after submit queued it. The first sleep ends a lead
 * before the predicted end: the estimate's spread, at least 1/32 and at most
 * a quarter of the estimate (and the kernel may end any sleep up to the
 * thread's timer slack late: one more reason to err early). From then on
 * each sleep is half the lead until the predicted end, then a quarter of the
 * time past it, within GPURSA_CUDA_POLL_MIN_NS and GPURSA_CUDA_POLL_MAX_NS:
 * few queries when the batch is on time, and when it is late (a device
 * shared with other processes through MPS) results that wait at most a
 * quarter of its lateness, half the lead or the shortest sleep. The
 * first sleep ends at most GPURSA_CUDA_SLEEP_MAX_NS after submit, whatever
 * the estimate. With no estimate (the first batches of a key size on the
 * device) the queries start at once, each sleep a quarter of the time since
 * submit.
 *
 * The wait is bounded: at most GPURSA_CUDA_STALL_S seconds plus a millisecond
 * an item. A stream stops for good when the process's MPS server ends with
 * work of it queued (CUDA then fails the process's later calls, error 806),
 * and a plain cudaEventSynchronize would wait on it forever, holding the
 * batch's requests and the device's reopen. Each query shows an error as
 * soon as CUDA reports it. Past the bound the device is lost: its items are
 * FAULT, recomputed on the CPU by the queue, and the batch is abandoned
 * (gpursa_cuda_batch_free).
 */
#define GPURSA_CUDA_STALL_S 10
#define GPURSA_CUDA_POLL_MIN_NS 20000         /* 20 us */
#define GPURSA_CUDA_POLL_MAX_NS 1000000       /* 1 ms */
#define GPURSA_CUDA_SLEEP_MAX_NS 100000000    /* 100 ms */
static cudaError_t gpursa_cuda_wait_done(gpursa_gpu_batch *b)
{
    const int64_t until = gpursa_cuda_now_ns()
                          + (GPURSA_CUDA_STALL_S + (int64_t)(b->count / 1000)) * 1000000000;
    int64_t spread = 0, lead = 0, mean, end, wake, now, step;
    cudaError_t e;

    mean = gpursa_cuda_est_get(b->dev, gpursa_size_index(b->bits), b->count, &spread);
    if (mean > 0)
        lead = spread < mean / 32 ? mean / 32 : spread > mean / 4 ? mean / 4 : spread;
    end = b->t_submit + mean;
    wake = end - lead;
    if (wake > b->t_submit + GPURSA_CUDA_SLEEP_MAX_NS)
        wake = b->t_submit + GPURSA_CUDA_SLEEP_MAX_NS;
    for (;;) {
        e = cudaEventQuery(b->ev_done);
        if (e != cudaErrorNotReady)
            return e;                         /* home (cudaSuccess), or the error */
        now = gpursa_cuda_now_ns();
        if (now >= until)
            break;
        if (now < wake) {
            step = wake - now;
        } else {
            step = lead / 2;
            if (now - end > 4 * step)
                step = (now - end) / 4;
            if (step < GPURSA_CUDA_POLL_MIN_NS)
                step = GPURSA_CUDA_POLL_MIN_NS;
            if (step > GPURSA_CUDA_POLL_MAX_NS)
                step = GPURSA_CUDA_POLL_MAX_NS;
        }
        gpursa_cuda_sleep_until(now + step < until ? now + step : until);
    }
    if (b->dev->debug)
        fprintf(stderr, "gpursa cuda: a batch of %zu items not back after %d s: device lost\n",
                b->count, GPURSA_CUDA_STALL_S + (int)(b->count / 1000));
    __atomic_store_n(&b->dev->lost, 1, __ATOMIC_RELEASE);
    return cudaErrorLaunchTimeout;            /* sticky: GPURSA_GPU_ERR_LOST */
}

static void gpursa_cuda_batch_free(gpursa_gpu_batch *b)
{
    int live;

    if (b == NULL)
        return;
    /* On a device that is not lost the stream is synchronised below. On a
     * lost one, a batch abandoned by a wait that gave up at the stall bound,
     * or not waited for since another batch lost the device, may still have
     * work queued on a stream that never moves again, or that moves much
     * later: its copy-out writes the host staging, its kernels and wipe the
     * device buffers. Such a batch is freed only once its stream is seen idle
     * or its context gone (a sticky error: none of its work runs any more),
     * else left as it is: rare, and the process cannot use the device any
     * more anyway. Its inputs and blinding factors are wiped from the host
     * staging first. */
    live = gpursa_cuda_enter(b->dev) == GPURSA_GPU_OK;
    if (!live && b->stream != NULL) {
        cudaError_t e;

        (void)cudaSetDevice(b->dev->index);
        e = cudaStreamQuery(b->stream);
        if (e != cudaSuccess && !gpursa_cuda_sticky(e)) {
            if (b->h_in != NULL)
                memset(b->h_in, 0, gpursa_cuda_layout_of(b->nbytes, b->stride).in_len);
            return;
        }
    }
    __atomic_fetch_sub(&b->dev->inflight[gpursa_size_index(b->bits)], b->counted, __ATOMIC_RELAXED);
    if (live) {
        if (b->stream != NULL)
            (void)cudaStreamSynchronize(b->stream);
        /* The staging held blinded inputs and results: wipe before giving it back. */
        gpursa_cuda_layout cap = gpursa_cuda_layout_of(b->nbytes, b->stride);
        if (b->h_in != NULL)
            memset(b->h_in, 0, cap.in_len);
        if (b->h_out != NULL)
            memset(b->h_out, 0, cap.home_len);
        if (b->d_bytes != NULL)
            (void)cudaMemset(b->d_bytes, 0, cap.dev_len);
        if (b->d_limbs != NULL)
            (void)cudaMemset(b->d_limbs, 0, 4 * b->nbytes * b->stride);
        (void)cudaDeviceSynchronize();
    }
    for (int c = 0; c < GPURSA_CUDA_GRAPH_CLASSES; c++)
        for (int k = 0; k <= GPURSA_KERNEL_COUNT_; k++)
            if (b->graphs[c][k] != NULL)
                (void)cudaGraphExecDestroy(b->graphs[c][k]);
    if (b->h_in != NULL) (void)cudaFreeHost(b->h_in);
    if (b->h_out != NULL) (void)cudaFreeHost(b->h_out);
    if (b->d_bytes != NULL) (void)cudaFree(b->d_bytes);
    if (b->d_limbs != NULL) (void)cudaFree(b->d_limbs);
    if (b->ev_start != NULL) (void)cudaEventDestroy(b->ev_start);
    if (b->ev_in != NULL) (void)cudaEventDestroy(b->ev_in);
    if (b->ev_kernel != NULL) (void)cudaEventDestroy(b->ev_kernel);
    if (b->ev_done != NULL) (void)cudaEventDestroy(b->ev_done);
    if (b->stream != NULL) (void)cudaStreamDestroy(b->stream);
    free(b);
}

static int gpursa_cuda_batch_new(gpursa_gpu_device *dev, int modulus_bits, size_t max_items,
                                 gpursa_gpu_batch **out)
{
    gpursa_gpu_batch *b;
    gpursa_cuda_layout cap;
    size_t nb;
    int rc;

    if (dev == NULL || out == NULL || max_items == 0 || max_items > GPURSA_CUDA_MAX_ITEMS)
        return GPURSA_GPU_ERR_INVALID;
    *out = NULL;
    if (gpursa_size_index(modulus_bits) < 0)
        return GPURSA_GPU_ERR_UNSUPPORTED;
    if ((rc = gpursa_cuda_enter(dev)) != GPURSA_GPU_OK)
        return rc;
    if (!gpursa_cuda_has(modulus_bits, dev->by_size[gpursa_size_index(modulus_bits)]))
        return GPURSA_GPU_ERR_UNSUPPORTED;
    b = (gpursa_gpu_batch *)calloc(1, sizeof(*b));
    if (b == NULL)
        return GPURSA_GPU_ERR_NOMEM;
    b->dev = dev;
    b->bits = modulus_bits;
    b->nbytes = nb = (size_t)modulus_bits / 8;
    b->max_items = max_items;
    /* Round the SoA stride up to 32 items so every limb row starts aligned. */
    max_items = (max_items + 31) & ~(size_t)31;
    b->stride = max_items;
    cap = gpursa_cuda_layout_of(nb, max_items);
#define GPURSA_TRY(call, what) \
    do { if ((rc = gpursa_cuda_rc(dev, (call), (what))) != GPURSA_GPU_OK) goto err; } while (0)
    GPURSA_TRY(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking), GPURSA_GPU_ERR_NOMEM);
    GPURSA_TRY(cudaEventCreate(&b->ev_start), GPURSA_GPU_ERR_NOMEM);
    GPURSA_TRY(cudaEventCreate(&b->ev_in), GPURSA_GPU_ERR_NOMEM);
    GPURSA_TRY(cudaEventCreate(&b->ev_kernel), GPURSA_GPU_ERR_NOMEM);
    /* Queried by the wait (gpursa_cuda_wait_done), never waited on: no
     * blocking sync, which CUDA serves from a thread of its own. */
    GPURSA_TRY(cudaEventCreate(&b->ev_done), GPURSA_GPU_ERR_NOMEM);
    /* sized for stride items: a batch of n <= stride fits in the first bytes of each */
    GPURSA_TRY(cudaHostAlloc((void **)&b->h_in, cap.in_len, cudaHostAllocDefault), GPURSA_GPU_ERR_NOMEM);
    GPURSA_TRY(cudaHostAlloc((void **)&b->h_out, cap.home_len, cudaHostAllocDefault), GPURSA_GPU_ERR_NOMEM);
    GPURSA_TRY(cudaMalloc((void **)&b->d_bytes, cap.dev_len), GPURSA_GPU_ERR_NOMEM);
    GPURSA_TRY(cudaMalloc((void **)&b->d_limbs, 4 * nb * max_items), GPURSA_GPU_ERR_NOMEM);
#undef GPURSA_TRY
    *out = b;
    return GPURSA_GPU_OK;
err:
    gpursa_cuda_batch_free(b);
    return rc;
}

/*
 * A batch's stream operations for `slots` items staged in h_in: one copy
 * each way, one launch for each stage (or one for all of them, where the
 * routed kernel has a fused form), events around them. `load` routes
 * the CRT launch. `capture`: the stream is being captured into a graph,
 * where each event record must be a node of its own (cudaEventRecordExternal,
 * which CUDA refuses outside a capture). *what says which kind of operation
 * failed (GPURSA_GPU_ERR_COPY or _LAUNCH).
 */
static cudaError_t gpursa_cuda_enqueue(gpursa_gpu_batch *b, size_t slots, uint32_t load,
                                       int test_skip, int test_corrupt, int capture, int *what)
{
    gpursa_gpu_device *dev = b->dev;
    const size_t nb = b->nbytes, stride = b->stride, words = gpursa_cuda_words(b);
    const gpursa_cuda_layout lay = gpursa_cuda_layout_of(nb, slots);
    uint32_t *d_in = b->d_limbs, *d_r = d_in + words * stride, *d_rinv = d_r + words * stride,
             *d_out = d_rinv + words * stride;
    int32_t *d_status = (int32_t *)(b->d_bytes + lay.status);
    const unsigned rec = capture ? cudaEventRecordExternal : cudaEventRecordDefault;
    gpursa_cuda_args a;
    cudaError_t e;

    *what = GPURSA_GPU_ERR_COPY;
    e = cudaEventRecordWithFlags(b->ev_start, b->stream, rec);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(b->d_bytes, b->h_in, lay.in_len, cudaMemcpyHostToDevice, b->stream);
    if (e == cudaSuccess)
        e = cudaEventRecordWithFlags(b->ev_in, b->stream, rec);
    if (e != cudaSuccess)
        return e;
    *what = GPURSA_GPU_ERR_LAUNCH;
    /* An item's three strings sit side by side (pitch 3*nb): each gets its
     * own limb array, in, r and rinv being consecutive. The same launch
     * presets every status word to a fault, on every launch: only the check
     * stage writes OK, so an item that no kernel finished (or a word left
     * from an earlier batch) never reads as OK. */
    e = gpursa_cuda_pack(b->d_bytes + lay.keys, 3 * nb, 3, d_in, (uint32_t)nb, (uint32_t)slots,
                         (uint32_t)stride, d_status, b->stream);
    if (e == cudaSuccess) {
        a.keys = (const void *const *)b->d_bytes;
        a.in = d_in;
        a.r = d_r;
        a.rinv = d_rinv;
        a.re = NULL;
        a.out = d_out;
        a.status = d_status;
        a.count = (uint32_t)slots;
        a.stride = (uint32_t)stride;
        a.load = load;
        a.shared = (uint32_t)dev->shared;
        a.fp64 = (uint32_t)dev->fp64;
        a.test_skip = test_skip;
        a.test_corrupt = test_corrupt;
        gpursa_variant v = dev->by_size[gpursa_size_index(b->bits)];
        /* the whole operation in one kernel, where the routed COOP kernel has
         * that form (gpursa_cuda_kernels.h; RSA-3072 and 4096 at heavy loads) */
        if (v == GPURSA_VARIANT_COOP) {
            e = gpursa_cuda_launch_fused(b->bits, &a, b->stream);
            if (e == cudaSuccess)
                goto unpack;
            if (e != cudaErrorNotSupported)
                return e;
            e = cudaSuccess;
        }
        /* A = r^e mod n, blind mod n, m = (c A)^d mod n by CRT, unblind, check
         * out^e = c mod n (gpursa_cuda_kernels.h) */
        e = gpursa_cuda_blind_factor(b->bits, &a, b->stream);           /* r -> A in out */
        if (e == cudaSuccess) {
            a.re = d_out;
            a.out = d_r;                      /* c A mod n over r, which is read first */
            e = gpursa_cuda_blind(b->bits, &a, b->stream);
        }
        if (e == cudaSuccess) {
            a.in = d_r;
            a.out = d_out;
            switch (b->bits) {
            case 1024: e = gpursa_cuda_launch_1024(v, &a, b->stream); break;
            case 2048: e = gpursa_cuda_launch_2048(v, &a, b->stream); break;
            case 3072: e = gpursa_cuda_launch_3072(v, &a, b->stream); break;
            default:   e = gpursa_cuda_launch_4096(v, &a, b->stream); break;
            }
        }
        if (e == cudaSuccess) {
            a.in = d_in;
            a.out = d_out;
            e = gpursa_cuda_unblind(b->bits, &a, b->stream);
        }
        if (e == cudaSuccess)
            e = gpursa_cuda_check(b->bits, &a, b->stream);
    }
    /* The results, then an echo of the input the check stage checked them
     * against: its check (out^e == in mod n) cannot see an input corrupted
     * on its way in (copy, device memory), so batch_wait compares the echo
     * with the caller's. Both end where the status words begin. */
unpack:
    if (e == cudaSuccess) {
        const uint32_t *home[2] = {d_out, d_in};
        e = gpursa_cuda_unpack(home, 2, b->d_bytes + lay.home, nb, (uint32_t)nb, (uint32_t)slots,
                               (uint32_t)stride, b->stream);
    }
    if (e == cudaSuccess)
        e = cudaEventRecordWithFlags(b->ev_kernel, b->stream, rec);
    if (e != cudaSuccess)
        return e;
    /* results, echo and status words in one copy */
    *what = GPURSA_GPU_ERR_COPY;
    e = cudaMemcpyAsync(b->h_out, b->d_bytes + lay.home, lay.home_len, cudaMemcpyDeviceToHost,
                        b->stream);
    if (e == cudaSuccess)
        e = cudaEventRecordWithFlags(b->ev_done, b->stream, rec);
    if (e != cudaSuccess)
        return e;
    /* Wipe the device copies of blinded inputs, blinding factors and results
     * once the results are home; ordered after the copy-out on this stream,
     * so the next batch on it starts after the wipe. One launch: the strings
     * (the results and echo were written over them) and the used columns
     * of every limb row of in, r, rinv and out. A wipe that cannot be
     * queued fails the batch: its device copies would stay. */
    *what = GPURSA_GPU_ERR_LAUNCH;
    return gpursa_cuda_wipe(b->d_bytes + lay.keys, 3 * nb * slots, b->d_limbs,
                            (uint32_t)(4 * words), (uint32_t)slots, (uint32_t)stride, b->stream);
}

/*
 * The graph of a batch of `slots` items (the top of a size class) whose CRT
 * launch the routing table sends to `kernel`: captured from
 * gpursa_cuda_enqueue on first use and kept. Each stream operation costs
 * the host about the same, whatever it moves or computes (more under MPS,
 * where each goes to the MPS server), and a batch of a few items pays for
 * every one; a graph's launch is one call (doc/design.md, "What the queue's
 * settings rest on"). NULL with *e cudaSuccess: no graph for this batch (a
 * capture or instantiation that failed, after which the batch object
 * launches every batch operation by operation); NULL with an error in *e:
 * the error.
 */
static cudaGraphExec_t gpursa_cuda_graph(gpursa_gpu_batch *b, size_t slots, uint32_t load,
                                         gpursa_kernel kernel, cudaError_t *e, int *what)
{
    cudaGraphExec_t *x = &b->graphs[gpursa_cuda_class(slots)][kernel];
    cudaGraph_t g = NULL;
    cudaError_t ec, ee;

    *e = cudaSuccess;
    if (*x != NULL)
        return *x;
    ec = cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal);
    if (ec == cudaSuccess) {
        ec = gpursa_cuda_enqueue(b, slots, load, -1, -1, 1, what);
        ee = cudaStreamEndCapture(b->stream, &g);
        if (ec == cudaSuccess)
            ec = ee;
    }
    if (ec == cudaSuccess)
        ec = cudaGraphInstantiate(x, g, 0);
    if (g != NULL)
        (void)cudaGraphDestroy(g);
    if (ec == cudaSuccess)
        return *x;
    *x = NULL;
    if (gpursa_cuda_sticky(ec)) {
        *e = ec;
        return NULL;
    }
    (void)cudaGetLastError();
    if (b->dev->debug)
        fprintf(stderr, "gpursa cuda: no graph for a batch of %zu items: %s\n", slots,
                cudaGetErrorString(ec));
    b->no_graphs = 1;
    return NULL;
}

static int gpursa_cuda_batch_submit(gpursa_gpu_batch *b, gpursa_gpu_item *items, size_t n)
{
    gpursa_gpu_device *dev;
    gpursa_cuda_layout lay;
    cudaGraphExec_t graph = NULL;
    size_t i, nb, slots = n, top = gpursa_cuda_class_top(n);
    const void **h_keys;
    cudaError_t e = cudaSuccess;
    int rc, si, test_skip, test_corrupt, what = GPURSA_GPU_ERR_LAUNCH;
    uint32_t load;

    if (b == NULL || items == NULL || n == 0 || n > b->max_items || b->submitted)
        return GPURSA_GPU_ERR_INVALID;
    dev = b->dev;
    nb = b->nbytes;
    /* Check every item before touching anything: a bad one fails the call. */
    for (i = 0; i < n; i++) {
        const gpursa_gpu_key *k = items[i].key;
        if (k == NULL || k->magic != GPURSA_CUDA_KEY_MAGIC || k->dev != dev || k->bits != b->bits
            || items[i].in == NULL || items[i].r == NULL || items[i].rinv == NULL
            || items[i].out == NULL)
            return GPURSA_GPU_ERR_INVALID;
    }
    for (i = 0; i < n; i++)
        items[i].status = GPURSA_ITEM_PENDING;
    if ((rc = gpursa_cuda_enter(dev)) != GPURSA_GPU_OK)
        return rc;
    si = gpursa_size_index(b->bits);
    load = gpursa_cuda_load(__atomic_load_n(&dev->inflight[si], __ATOMIC_RELAXED) + (uint32_t)n,
                            dev->sm_count);
    test_skip = __atomic_load_n(&gpursa_cuda_fault_skip, __ATOMIC_RELAXED);
    test_corrupt = __atomic_load_n(&gpursa_cuda_fault_corrupt, __ATOMIC_RELAXED);
    /* A small batch runs as the graph of its size class, padded to the
     * class's top with items of zeros (the first item's key; they come out
     * BADINPUT and nobody reads them): a few items more cost a kernel that
     * occupies a fraction of the device nothing. The fault-injection hooks
     * change the kernels' arguments: their batches launch directly. */
    if (!b->no_graphs && n <= GPURSA_CUDA_GRAPH_MAX && test_skip < 0 && test_corrupt < 0
        && top <= b->stride) {
        gpursa_kernel k = dev->by_size[si] != GPURSA_VARIANT_COOP
                              ? GPURSA_KERNEL_COUNT_
                              : gpursa_route_pick(b->bits, load, dev->shared, dev->fp64);
        /* captured over staging of the class's layout: the same every replay;
         * a capture queues nothing, so a failed one leaves nothing to undo */
        graph = gpursa_cuda_graph(b, top, load, k, &e, &what);
        if (e != cudaSuccess)
            return gpursa_cuda_rc(dev, e, what);
        if (graph != NULL)
            slots = top;
    }
    lay = gpursa_cuda_layout_of(nb, slots);

    /* Stage: the key pointers, then three byte strings per item as the
     * caller gave them (gpursa_cuda_layout); a graph's padding items get the
     * first item's key and strings of zeros. */
    h_keys = (const void **)b->h_in;
    for (i = 0; i < n; i++) {
        unsigned char *s = b->h_in + lay.keys + 3 * nb * i;
        memcpy(s, items[i].in, nb);
        memcpy(s + nb, items[i].r, nb);
        memcpy(s + 2 * nb, items[i].rinv, nb);
        h_keys[i] = items[i].key->dkey;
    }
    for (; i < slots; i++) {
        memset(b->h_in + lay.keys + 3 * nb * i, 0, 3 * nb);
        h_keys[i] = items[0].key->dkey;
    }

    /* The wait's prediction counts from here (gpursa_cuda_wait_done). */
    b->t_submit = gpursa_cuda_now_ns();
    if (graph != NULL) {
        what = GPURSA_GPU_ERR_LAUNCH;
        e = cudaGraphLaunch(graph, b->stream);
    } else {
        e = gpursa_cuda_enqueue(b, slots, load, test_skip, test_corrupt, 0, &what);
    }
    if (e != cudaSuccess) {
        rc = gpursa_cuda_rc(dev, e, what);
        goto fail;
    }
    b->counted = (uint32_t)n;
    __atomic_fetch_add(&dev->inflight[si], b->counted, __ATOMIC_RELAXED);
    b->items = items;
    b->count = n;
    b->slots = slots;
    b->submitted = 1;
    b->done = 0;
    b->failed = 0;
    return GPURSA_GPU_OK;
fail:
    (void)cudaStreamSynchronize(b->stream);
    memset(b->h_in + lay.keys, 0, 3 * nb * slots);
    return rc;
}

static int gpursa_cuda_batch_poll(gpursa_gpu_batch *b)
{
    cudaError_t e;

    if (b == NULL)
        return GPURSA_GPU_ERR_INVALID;
    if (!b->submitted)
        return b->done ? 1 : GPURSA_GPU_ERR_INVALID;
    if (__atomic_load_n(&b->dev->lost, __ATOMIC_ACQUIRE))
        return GPURSA_GPU_ERR_LOST;
    e = cudaEventQuery(b->ev_done);
    if (e == cudaSuccess)
        return 1;
    if (e == cudaErrorNotReady)
        return 0;
    return gpursa_cuda_rc(b->dev, e, GPURSA_GPU_ERR_LAUNCH);
}

static float gpursa_cuda_elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0.0f;
    }
    return ms;
}

/* 1 if the n bytes are equal; reads all of them (the input is secret). */
static int gpursa_cuda_same_bytes(const unsigned char *a, const unsigned char *b, size_t n)
{
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static int gpursa_cuda_batch_wait(gpursa_gpu_batch *b)
{
    gpursa_cuda_layout lay;
    const int32_t *h_status;
    size_t i, nb, n;
    cudaError_t e;
    int rc;

    if (b == NULL || !b->submitted)
        return GPURSA_GPU_ERR_INVALID;
    nb = b->nbytes;
    n = b->count;
    lay = gpursa_cuda_layout_of(nb, b->slots);
    h_status = (const int32_t *)(b->h_out + lay.home_status);
    rc = gpursa_cuda_enter(b->dev);
    if (rc == GPURSA_GPU_OK) {
        /* A kernel fault surfaces here. The device wipe queued after the
         * copy-out is not waited for: the next use of this batch's device
         * buffers is ordered after it on its stream, the host staging is
         * not its, and on a busy device a wipe kernel waits for other
         * streams' blocks to be dispatched first, which would hold back
         * results that are already home. */
        e = gpursa_cuda_wait_done(b);
        rc = gpursa_cuda_rc(b->dev, e, GPURSA_GPU_ERR_LAUNCH);
    }
    __atomic_fetch_sub(&b->dev->inflight[gpursa_size_index(b->bits)], b->counted, __ATOMIC_RELAXED);
    b->counted = 0;
    if (rc == GPURSA_GPU_OK) {
        for (i = 0; i < n; i++) {
            gpursa_gpu_item *it = &b->items[i];
            it->status = gpursa_cuda_item_status((uint32_t)h_status[i],
                                                 gpursa_cuda_same_bytes(b->h_out + nb * (b->slots + i), it->in, nb));
            if (it->status == GPURSA_ITEM_OK)
                memcpy(it->out, b->h_out + nb * i, nb);
            else
                memset(it->out, 0, nb);
        }
        b->t_in = gpursa_cuda_elapsed(b->ev_start, b->ev_in) * 1e-3;
        b->t_kernel = gpursa_cuda_elapsed(b->ev_in, b->ev_kernel) * 1e-3;
        b->t_out = gpursa_cuda_elapsed(b->ev_kernel, b->ev_done) * 1e-3;
        gpursa_cuda_est_note(b->dev, gpursa_size_index(b->bits), n,
                             (int64_t)(gpursa_cuda_elapsed(b->ev_start, b->ev_done) * 1e6));
    } else {
        for (i = 0; i < n; i++) {
            memset(b->items[i].out, 0, nb);
            b->items[i].status = GPURSA_ITEM_FAULT;
        }
        b->t_in = b->t_kernel = b->t_out = 0.0;
    }
    /* Staging held blinded inputs, blinding factors and results (the key
     * pointers and status words are no secret). */
    memset(b->h_in + lay.keys, 0, 3 * nb * b->slots);
    memset(b->h_out, 0, lay.home_status);
    b->submitted = 0;
    b->done = 1;
    b->items = NULL;
    b->count = 0;
    b->slots = 0;
    return rc;
}

static void gpursa_cuda_batch_times(const gpursa_gpu_batch *b, double *kernel_s, double *copy_in_s,
                                    double *copy_out_s)
{
    if (kernel_s != NULL) *kernel_s = b != NULL ? b->t_kernel : 0.0;
    if (copy_in_s != NULL) *copy_in_s = b != NULL ? b->t_in : 0.0;
    if (copy_out_s != NULL) *copy_out_s = b != NULL ? b->t_out : 0.0;
}

static int gpursa_cuda_device_shared(const gpursa_gpu_device *dev)
{
    return dev != NULL && dev->shared;
}

extern "C" const gpursa_gpu_backend_ops gpursa_cuda_backend_ops = {
    "cuda",
    gpursa_cuda_device_count,
    gpursa_cuda_device_open,
    gpursa_cuda_device_close,
    gpursa_cuda_device_describe,
    gpursa_cuda_key_upload,
    gpursa_cuda_key_free,
    gpursa_cuda_batch_new,
    gpursa_cuda_batch_free,
    gpursa_cuda_batch_submit,
    gpursa_cuda_batch_poll,
    gpursa_cuda_batch_wait,
    gpursa_cuda_batch_times,
    gpursa_cuda_device_shared,
};
