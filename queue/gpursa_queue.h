/*
 * gpursa queue/ layer: collects raw RSA private operations from many threads
 * and async jobs into batches for the gpu/ backends, with a CPU path for
 * small batches, faults and unsupported keys. No padding, no OpenSSL
 * provider types; the provider hands in a CPU callback for the fallback.
 */
#ifndef GPURSA_QUEUE_H
#define GPURSA_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "gpu/gpursa_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GPURSA_CFG_BACKEND_AUTO = 0, /* cuda if a device is usable, else cpu */
    GPURSA_CFG_BACKEND_CUDA = 1,
    GPURSA_CFG_BACKEND_HOST = 2, /* the kernel arithmetic on CPU threads, batched */
    GPURSA_CFG_BACKEND_CPU = 3,  /* OpenSSL default provider only, no queue */
} gpursa_cfg_backend;

/* Configuration: the provider's openssl.cnf section, each overridable by GPURSA_<NAME>. */
typedef struct {
    gpursa_cfg_backend backend;   /* backend = auto|cuda|host|cpu */
    char devices[128];            /* devices = all | comma-separated indices */
    unsigned max_batch;           /* max_batch: items per batch */
    int min_gpu_batch;            /* min_gpu_batch: -1 = measure at start-up */
    unsigned max_wait_us;         /* max_wait_us: flush deadline of the oldest request */
    unsigned max_inflight;        /* max_inflight: requests queued or running, per process */
    int log_level;                /* log_level: 0 error, 1 warn, 2 info, 3 debug */
    gpursa_variant variant;       /* variant = auto|imad|xmad|fast */
} gpursa_config;

void gpursa_config_defaults(gpursa_config *cfg);

/* Counters, readable as provider parameters and printed at unload with GPURSA_STATS=1. */
typedef struct {
    atomic_uint_fast64_t ops_gpu;      /* completed on a CUDA device */
    atomic_uint_fast64_t ops_host;     /* completed by the host backend (batched arithmetic) */
    atomic_uint_fast64_t ops_cpu;      /* completed by the OpenSSL default provider */
    atomic_uint_fast64_t batches;      /* batches run by a gpu/ backend */
    atomic_uint_fast64_t batch_items;  /* items in those batches (mean = items / batches) */
    atomic_uint_fast64_t faults;       /* results that failed the check, recomputed on the CPU */
    atomic_uint_fast64_t fb_small_batch;     /* fallbacks: batch below min_gpu_batch */
    atomic_uint_fast64_t fb_unsupported_key; /* fallbacks: key the GPU path does not take */
    atomic_uint_fast64_t fb_gpu_error;       /* fallbacks: launch/copy failure, device lost */
    atomic_uint_fast64_t fb_no_device;       /* fallbacks: no usable device / backend cpu */
    atomic_uint_fast64_t fb_inline;          /* fallbacks: blocking caller computed inline */
} gpursa_stats;

typedef struct gpursa_queue gpursa_queue;
typedef struct gpursa_queue_key gpursa_queue_key;

/* CPU path for one raw private operation (the provider's fallback): out = in^d mod n,
 * blinded; in/out are len bytes big-endian. Returns 1 on success, 0 on failure. */
typedef int (*gpursa_cpu_private_fn)(void *arg, const unsigned char *in,
                                     unsigned char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* GPURSA_QUEUE_H */
