/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa gpu/ layer: the one small C interface in front of the backends.
 *
 * A backend runs batches of whole RSA private operations (blinded CRT
 * exponentiation, recombination, unblinding, and the check that the result
 * raised to e gives the input back). Backends:
 *   host - the kernel arithmetic compiled for the CPU (tests, CI, no GPU)
 *   cuda - the CUDA kernels (only when built with CUDA)
 * No OpenSSL and no CUDA types cross this header.
 *
 * Numbers cross it as big-endian byte strings (as BN_bn2binpad writes them),
 * each exactly as long as the field says.
 */
#ifndef GPURSA_GPU_H
#define GPURSA_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of the interface functions. */
typedef enum {
    GPURSA_GPU_OK = 0,
    GPURSA_GPU_ERR_INVALID = -1,     /* bad argument (sizes, NULLs, key not supported) */
    GPURSA_GPU_ERR_NODEV = -2,       /* no such device / backend not built */
    GPURSA_GPU_ERR_NOMEM = -3,       /* host or device allocation failed */
    GPURSA_GPU_ERR_LAUNCH = -4,      /* kernel launch or execution failed */
    GPURSA_GPU_ERR_COPY = -5,        /* host<->device copy failed */
    GPURSA_GPU_ERR_LOST = -6,        /* device lost / sticky error: close and retry later */
    GPURSA_GPU_ERR_UNSUPPORTED = -7, /* key size or variant not supported by this backend */
} gpursa_gpu_rc;

/* Per-item status after a batch completes. */
typedef enum {
    GPURSA_ITEM_PENDING = -1,
    GPURSA_ITEM_OK = 0,        /* out holds the verified result */
    GPURSA_ITEM_FAULT = 1,     /* result failed the out^e == in check; out was wiped */
    GPURSA_ITEM_BADINPUT = 2,  /* in >= n, or r / rinv unusable; out was wiped */
} gpursa_item_status;

typedef enum {
    GPURSA_BACKEND_HOST = 0,
    GPURSA_BACKEND_CUDA = 1,
} gpursa_backend_kind;

/* Kernel variants. AUTO lets the backend pick per device (compute capability). */
typedef enum {
    GPURSA_VARIANT_AUTO = 0,
    GPURSA_VARIANT_IMAD = 1,   /* row-oriented multiply-add carry chains (sm_70+) */
    GPURSA_VARIANT_XMAD = 2,   /* two-pass 16-bit algorithm (Maxwell paper) */
    GPURSA_VARIANT_FAST = 3,   /* 2 threads per item, one per CRT half (kernels_rsa.cuh) */
    GPURSA_VARIANT_COOP = 4,   /* 2T threads per item, T per CRT half (gpursa_coop.h): low latency */
    GPURSA_VARIANT_COUNT_
} gpursa_variant;

/* How the CUDA backend counts a device's FP64 rate (the cuda_fp64 key). */
typedef enum {
    GPURSA_FP64_AUTO = 0, /* the device's own: full rate on sm_80 and sm_90 */
    GPURSA_FP64_OFF = 1,  /* as a device without it: COOP runs 32-bit limbs at every load */
    GPURSA_FP64_ON = 2,   /* as a device with it (where the FP64-limb kernels load) */
} gpursa_fp64;

/* Most worker threads of the host backend. */
#define GPURSA_HOST_MAX_THREADS 16

/* What a device opens with besides its index: the configuration keys of the
 * gpu/ layer. queue/ passes the provider's configuration; tests and bench/
 * fill their own. All zero (or a NULL pointer) is every key's default. */
typedef struct {
    gpursa_variant variant;   /* variant: AUTO lets the backend pick per device and size */
    int host_threads;         /* host_threads (host backend): worker threads, at most
                               * GPURSA_HOST_MAX_THREADS; 0: one per online CPU */
    gpursa_fp64 cuda_fp64;    /* cuda_fp64 (CUDA backend), for tests and experiments */
    int cuda_debug;           /* cuda_debug (CUDA backend): 1 prints every CUDA error
                               * on stderr */
} gpursa_gpu_open_params;

const char *gpursa_variant_name(gpursa_variant v);
int gpursa_variant_from_name(const char *name, gpursa_variant *out); /* 1 ok, 0 unknown */
const char *gpursa_gpu_rc_string(int rc);

/* Two-prime RSA private key, big-endian. p and q each at most half of n's
 * length rounded up to the key size; the backend pads internally. */
typedef struct {
    const unsigned char *n;    size_t n_len;
    const unsigned char *e;    size_t e_len;
    const unsigned char *p;    size_t p_len;
    const unsigned char *q;    size_t q_len;
    const unsigned char *dp;   size_t dp_len;
    const unsigned char *dq;   size_t dq_len;
    const unsigned char *qinv; size_t qinv_len;
} gpursa_rsa_key_material;

/* The modulus sizes the GPU path takes, smallest first. A size's index in
 * this table indexes every per-size array of gpu/ and queue/. */
#define GPURSA_NSIZES 4
extern const int gpursa_size_bits[GPURSA_NSIZES];   /* 1024, 2048, 3072, 4096 */
/* The index of bits in gpursa_size_bits, or -1 for a size the GPU path does
 * not take. */
int gpursa_size_index(int bits);

/* A key the GPU path takes: a modulus of one of gpursa_size_bits with p, q of
 * half that size each. Returns the modulus bits, or 0 if not supported. */
int gpursa_gpu_key_supported(const gpursa_rsa_key_material *km);

typedef struct gpursa_gpu_device gpursa_gpu_device;
typedef struct gpursa_gpu_key gpursa_gpu_key;
typedef struct gpursa_gpu_batch gpursa_gpu_batch;

/* One private operation. All numbers are key_bytes long (n's length).
 *   in:   the input c, 0 <= c < n
 *   r:    blinding base, 1 <= r < n, fresh for every operation
 *   rinv: r^-1 mod n
 * The backend computes out = ((c * r^e)^d mod n) * rinv mod n with CRT and
 * releases it only if out^e == c mod n. */
typedef struct {
    const gpursa_gpu_key *key;
    const unsigned char *in;
    const unsigned char *r;
    const unsigned char *rinv;
    unsigned char *out;
    int status;                /* gpursa_item_status, written by the backend */
} gpursa_gpu_item;

/* Backend operations. A backend implements all of them; queue tests may
 * supply a fake one. Every function returns a gpursa_gpu_rc unless noted. */
typedef struct gpursa_gpu_backend_ops {
    const char *name;
    int (*device_count)(int *count);
    int (*device_open)(int index, const gpursa_gpu_open_params *params,
                       gpursa_gpu_device **dev);
    void (*device_close)(gpursa_gpu_device *dev);
    /* Human-readable device description (name, compute capability, variant). */
    const char *(*device_describe)(const gpursa_gpu_device *dev);
    int (*key_upload)(gpursa_gpu_device *dev, const gpursa_rsa_key_material *km,
                      gpursa_gpu_key **key);
    /* Wipes the host copy and the device copy, then frees. NULL is a no-op. */
    void (*key_free)(gpursa_gpu_device *dev, gpursa_gpu_key *key);
    /* A batch object owns reusable (pinned) staging for up to max_items
     * items of one modulus size, and its own stream. */
    int (*batch_new)(gpursa_gpu_device *dev, int modulus_bits, size_t max_items,
                     gpursa_gpu_batch **batch);
    void (*batch_free)(gpursa_gpu_batch *batch);
    /* Start the batch: copy inputs in and launch. Returns at once on the GPU.
     * The items array (and buffers it points at) must stay valid until
     * batch_wait returns. All keys must have the batch's modulus size. */
    int (*batch_submit)(gpursa_gpu_batch *batch, gpursa_gpu_item *items, size_t n);
    /* 1 if finished, 0 if still running, <0 error. Never blocks. */
    int (*batch_poll)(gpursa_gpu_batch *batch);
    /* Block until finished; write out and status of every item. On error
     * return <0: then no item status is OK and no out is valid. */
    int (*batch_wait)(gpursa_gpu_batch *batch);
    /* Kernel and transfer time of the last completed batch, in seconds
     * (0 when the backend cannot tell). */
    void (*batch_times)(const gpursa_gpu_batch *batch, double *kernel_s,
                        double *copy_in_s, double *copy_out_s);
    /* 1 if other processes run work on the device at the same time (NVIDIA
     * MPS), unseen from this one; 0 if not. NULL: never shared. */
    int (*device_shared)(const gpursa_gpu_device *dev);
} gpursa_gpu_backend_ops;

/* The built-in backends; cuda returns NULL when not built with CUDA. */
const gpursa_gpu_backend_ops *gpursa_gpu_backend(gpursa_backend_kind kind);

/* Convenience: run one batch synchronously (batch_new/submit/wait/free). */
int gpursa_gpu_run(const gpursa_gpu_backend_ops *ops, gpursa_gpu_device *dev,
                   gpursa_gpu_item *items, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* GPURSA_GPU_H */
