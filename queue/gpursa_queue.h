/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa queue/ layer: collects raw RSA private operations from many threads
 * and async jobs into batches for the gpu/ backends, with a CPU path for
 * small batches, faults and unsupported keys. No padding, no OpenSSL
 * provider types; the provider hands in a CPU callback for the fallback.
 */
#ifndef GPURSA_QUEUE_H
#define GPURSA_QUEUE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
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

typedef enum {
    GPURSA_CPU_FALLBACK_AUTO = 0,   /* CPU workers while the machine has an idle core */
    GPURSA_CPU_FALLBACK_ALWAYS = 1, /* CPU workers */
    GPURSA_CPU_FALLBACK_NEVER = 2,  /* the device */
} gpursa_cpu_fallback;

/* Runner threads per GPU, hence the most batches in flight on one device. */
#define GPURSA_MAX_DEVICE_BATCHES 16
/* device_batches = auto on a device that other processes share through MPS:
 * batches in flight, unless a batch is full, with GPURSA_SHARED_FULL_BATCH
 * items (or max_batch if fewer) (gpursa_batch_policy.c says why). */
#define GPURSA_SHARED_DEVICE_BATCHES 2
#define GPURSA_SHARED_FULL_BATCH 512
/* There, a batch below this many items waits while another batch of the
 * process is on the device (up to 8 deadlines; gpursa_batch_policy.c). */
#define GPURSA_SHARED_COMPANY 32

#define GPURSA_METRICS_PATH_MAX 1024
#define GPURSA_METRICS_INTERVAL_MIN_MS 10
#define GPURSA_METRICS_INTERVAL_MAX_MS 3600000

/* Configuration: the provider's openssl.cnf section, each overridable by GPURSA_<NAME>. */
typedef struct {
    gpursa_cfg_backend backend;   /* backend = auto|cuda|host|cpu */
    char devices[128];            /* devices = all | comma-separated indices */
    unsigned max_batch;           /* max_batch: items per batch */
    int min_gpu_batch;            /* min_gpu_batch: -1 = measure at start-up */
    unsigned max_wait_us;         /* max_wait_us: flush deadline of the oldest request */
    unsigned max_inflight;        /* max_inflight: requests queued or running, per process */
    int log_level;                /* log_level: 0 error, 1 warn, 2 info, 3 debug */
    gpursa_gpu_open_params gpu;   /* variant = auto|imad|xmad|fast|coop, host_threads,
                                   * cuda_fp64, cuda_debug: what the devices open with */
    gpursa_cpu_fallback cpu_fallback; /* cpu_fallback = auto|always|never: where batches
                                   * below min_gpu_batch go (never: also no lone
                                   * request computes inline) */
    unsigned device_batches;      /* device_batches = auto|1..16: batches in flight on
                                   * each device (0 = auto: 16; when shared through
                                   * MPS, 2 unless a batch is full: 512 items) */
    char metrics_file[GPURSA_METRICS_PATH_MAX]; /* metrics_file: "" = off; an absolute
                                   * path, %p = the process id (gpursa_metrics.c) */
    unsigned metrics_interval_ms; /* metrics_interval_ms: between two writes */
    char fallback_provider[64];   /* fallback_provider: the provider the CPU fallback
                                   * fetches RSA from (the provider layer's; "default") */
    int stats;                    /* stats: 1 the counters on stderr at unload, 2 also
                                   * the stage times (the provider layer's) */
} gpursa_config;

/*
 * One configuration key (gpursa_config.c holds the table of all of them):
 * its name in openssl.cnf, whose environment variable is GPURSA_ and the
 * name in upper case; its default, as written in openssl.cnf; a line on what
 * it means; and its parser: set(cfg, value) sets the key's field and returns
 * 1, or returns 0 with cfg unchanged and what a value must be in why (at
 * most len bytes, NUL-terminated).
 */
typedef struct {
    const char *name;
    const char *dflt;
    const char *meaning;
    int (*set)(gpursa_config *cfg, const char *value, char *why, size_t len);
} gpursa_config_key;

/* Every key; a row with name NULL ends it. */
extern const gpursa_config_key gpursa_config_keys[];
/* The row of name, or NULL when gpursa has no such key. */
const gpursa_config_key *gpursa_config_key_find(const char *name);
/* Every key at its default (the table's, parsed by its set): 1, or 0 when a
 * default does not parse. */
int gpursa_config_defaults(gpursa_config *cfg);
/* backend's name as the key takes it: "auto", "cuda", "host", "cpu". */
const char *gpursa_config_backend_name(gpursa_cfg_backend b);

/* Where an operation was computed, for the counters by key size: a gpu/
 * backend (CUDA or host), the CPU workers, or the calling thread itself. */
enum { GPURSA_PATH_GPU, GPURSA_PATH_HOST, GPURSA_PATH_CPU, GPURSA_PATH_INLINE, GPURSA_NPATHS };
/* Batch sizes: at most 1, 2, 4, ..., 2^20 items (max_batch's largest), more. */
#define GPURSA_BATCH_BUCKETS 22

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
    atomic_uint_fast64_t recomputed;         /* results of a batch that failed (faults,
                                              * bad items) recomputed on the CPU */
    /* ops_gpu + ops_host + ops_cpu again, by path and key size (ops_cpu is
     * GPURSA_PATH_CPU + GPURSA_PATH_INLINE): gpursa_stats_ops counts both.
     * The sizes are gpursa_size_bits' and, at index GPURSA_NSIZES, any other. */
    atomic_uint_fast64_t ops_by_size[GPURSA_NPATHS][GPURSA_NSIZES + 1];
    atomic_uint_fast64_t batch_sizes[GPURSA_BATCH_BUCKETS]; /* batches by size (not cumulative) */
    struct gpursa_stages *stages;            /* NULL, or where GPU batches' stage times go */
} gpursa_stats;

/* Counts n operations of a key of len modulus bytes computed on path:
 * ops_gpu, ops_host or ops_cpu, and ops_by_size. Relaxed atomics. */
void gpursa_stats_ops(gpursa_stats *st, int path, size_t len, uint64_t n);
/* Counts one batch of n items run by a gpu/ backend: batches, batch_items,
 * batch_sizes. */
void gpursa_stats_batch(gpursa_stats *st, size_t n);
/* The batch_sizes bucket of a batch of n items. */
unsigned gpursa_stats_batch_bucket(size_t n);

/*
 * Where a GPU request's time goes, for finding a latency tail (the provider
 * records them with GPURSA_STATS=2 and prints them at unload). Per request:
 * WAIT (queued until its batch is handed to a runner: the deadline, or no
 * free runner), TOTAL (queued until its answer is published). Per batch:
 * START (handed over until the runner runs), PREP (gather, blinding pairs,
 * staging), SUBMIT (the backend's submit call), TOPUP (refilling blinding
 * pools while the device computes), DEVICE (submitted until the results are
 * home: copies, kernel, queueing on the device), KERNEL (the kernel alone,
 * the backend's own timing), DONE (checks, copy-out, publishing, wakes).
 * CPU: a request of a batch that went to the CPU workers (below the
 * crossover, failed, device down), queued until answered.
 */
enum {
    GPURSA_STAGE_WAIT, GPURSA_STAGE_START, GPURSA_STAGE_PREP, GPURSA_STAGE_SUBMIT,
    GPURSA_STAGE_TOPUP, GPURSA_STAGE_DEVICE, GPURSA_STAGE_KERNEL, GPURSA_STAGE_DONE,
    GPURSA_STAGE_TOTAL, GPURSA_STAGE_CPU,
    /* the runner's own CPU time per batch in prep, submit, topup, the wait, done */
    GPURSA_STAGE_CPU_PREP, GPURSA_STAGE_CPU_SUBMIT, GPURSA_STAGE_CPU_TOPUP,
    GPURSA_STAGE_CPU_WAIT, GPURSA_STAGE_CPU_DONE, GPURSA_NSTAGES
};
#define GPURSA_STAGE_BUCKETS 256
typedef struct gpursa_stages {
    atomic_uint_fast64_t n[GPURSA_NSTAGES][GPURSA_STAGE_BUCKETS];   /* log-linear in µs */
    atomic_uint_fast64_t max_us[GPURSA_NSTAGES];
    atomic_uint_fast64_t sum_us[GPURSA_NSTAGES];
} gpursa_stages;

/* Adds one (or count) observation of us microseconds to a stage. */
void gpursa_stages_add(gpursa_stages *h, int stage, uint64_t us, uint64_t count);
/* Writes "name n=... p50=... p90=... p99=... p999=... max=..." per stage
 * (microseconds) to stderr, prefixed by prefix, each line one write(2)
 * (gpursa_log_line). */
void gpursa_stages_print(const gpursa_stages *h, const char *prefix);
/* The stage's name as gpursa_stages_print writes it. */
const char *gpursa_stages_name(int stage);
/* Observations of a stage below 2^e microseconds (4 <= e <= 33: bucket
 * bounds of the log-linear histogram), and all of them (*count) with their
 * sum (*sum_us), read once each for a consistent cumulative histogram:
 * below[i] for e = e0 + i, i < nbelow. */
void gpursa_stages_cumulative(const gpursa_stages *h, int stage, unsigned e0, unsigned nbelow,
                              uint64_t *below, uint64_t *count, uint64_t *sum_us);

typedef struct gpursa_queue gpursa_queue;
typedef struct gpursa_queue_key gpursa_queue_key;

/* CPU path for one raw private operation (the provider's fallback): out = in^d mod n,
 * blinded; in/out are len bytes big-endian. Returns 1 on success, 0 on failure. */
typedef int (*gpursa_cpu_private_fn)(void *arg, const unsigned char *in,
                                     unsigned char *out, size_t len);

/*
 * The queue. Creating it is cheap and opens nothing: the backend, devices and
 * threads start on the first gpursa_queue_private() of a process (and again
 * in a child after fork(), which never inherits the parent's dispatcher).
 *
 * ops: NULL picks the backend from cfg->backend (host, cuda, auto = cuda);
 * tests and benchmarks pass their own. Returns 1 and sets *out, or 0 on
 * failure. With backend=cpu (or auto/cuda when CUDA is not built) it returns
 * 1 and sets *out = NULL: the caller then uses its CPU path directly (ops
 * given: backend does not choose). stats must outlive
 * the queue; it is updated with relaxed atomics.
 */
int gpursa_queue_new(const gpursa_config *cfg, gpursa_stats *stats,
                     const gpursa_gpu_backend_ops *ops, gpursa_queue **out);
/* Stops the threads, frees the GPU keys of live queue keys, closes devices.
 * No operation may be running. Queue keys must be freed before (or are
 * orphaned: their later free only wipes host memory). NULL is a no-op. */
void gpursa_queue_free(gpursa_queue *q);

/*
 * A key as the queue sees it: a copy of the two-prime material (wiped on
 * free), the CPU path for it, and per device the uploaded GPU key (uploaded
 * on first use on that device). Keys the GPU path does not take
 * (gpursa_gpu_key_supported() == 0) are accepted and always use cpu().
 * cpu(cpu_arg, ...) must be callable from any thread for as long as the
 * queue key lives. Returns 1 and sets *out, 0 on failure.
 */
int gpursa_queue_key_new(gpursa_queue *q, const gpursa_rsa_key_material *km,
                         gpursa_cpu_private_fn cpu, void *cpu_arg,
                         gpursa_queue_key **out);
void gpursa_queue_key_free(gpursa_queue_key *qk);
/* Modulus bits the GPU path takes for this key, 0 when it always uses the CPU. */
int gpursa_queue_key_gpu_bits(const gpursa_queue_key *qk);
/* 1 if in (len bytes, big-endian, len = the modulus length) is below n:
 * a plain comparison with the modulus bytes the key keeps (the input is
 * public), so callers need not convert n for every operation. */
int gpursa_queue_key_below_modulus(const gpursa_queue_key *qk, const unsigned char *in,
                                   size_t len);

/*
 * One raw private operation: out = in^d mod n, len = modulus bytes, in < n
 * (the caller checks). A caller computes inline on the CPU (fb_inline) when
 * no batch would reach the crossover before the deadline; otherwise a
 * blocking thread waits, and a caller inside an OpenSSL ASYNC job pauses and
 * is resumed through its wait context (eventfd, or the context's callback).
 * in and out may be the same buffer if the CPU path allows it (the GPU path
 * does). Returns 1 on success, 0 on failure (out wiped). Errors the CPU path
 * raises on a worker thread are cleared there: the caller raises its own.
 */
int gpursa_queue_private(gpursa_queue *q, gpursa_queue_key *qk,
                         const unsigned char *in, unsigned char *out, size_t len);

/* Observability, for provider parameters and tests. */
/* The batch size below which batches of that modulus size run on the CPU:
 * the configured value, or the measured one; -1 while not measured yet;
 * INT_MAX when the GPU never wins. */
int gpursa_queue_min_gpu_batch(gpursa_queue *q, int modulus_bits);
/* Requests queued or running now in this process. */
unsigned gpursa_queue_inflight(gpursa_queue *q);
/* Number of devices the running dispatcher uses (0 before the first operation
 * or when none opened). */
int gpursa_queue_devices(gpursa_queue *q);
/* Callers held back by max_inflight now (blocking threads and paused jobs). */
unsigned gpursa_queue_waiting(gpursa_queue *q);
/* The i-th device of the running dispatcher (i < gpursa_queue_devices()):
 * its backend index, 1 while up (0 down: batches go to the CPU until it
 * reopens), times it was reopened. 0 when there is no such device. */
int gpursa_queue_device_state(gpursa_queue *q, int i, int *index, int *up, uint64_t *reopens);
/* Writes head, then body, then a newline to stderr with one write(2) (the line cut
 * at 1 KB): processes that share a stderr (nginx's workers) each get their lines
 * whole, where a stdio call may write a line in pieces. */
void gpursa_log_line(const char *head, const char *body);
/* The same with the body formatted from fmt and ap (vsnprintf). */
void gpursa_log_vline(const char *head, const char *fmt, va_list ap);
/* The backend's name ("cuda", "host"), or "cpu" without a queue. */
const char *gpursa_queue_backend_name(gpursa_queue *q);

/*
 * Live metrics (gpursa_metrics.c): a thread of the process writes the
 * counters, gauges and histograms in Prometheus' text format to
 * cfg->metrics_file every cfg->metrics_interval_ms, atomically (a temporary
 * file in the same folder, then rename). A child after fork() starts its own
 * thread, writing its own file when the name has %p.
 */
typedef struct gpursa_metrics gpursa_metrics;
/* pattern with %p replaced by pid and %% by %: 1, or 0 when it is not an
 * absolute path, has another % sequence or does not fit in outlen. */
int gpursa_metrics_path(const char *pattern, long pid, char *out, size_t outlen);
/* Can this process write files in pattern's folder? 1, or 0 with errno set. */
int gpursa_metrics_probe(const char *pattern);
/* Writes the file once, then starts the thread. stats (and q, which may be
 * NULL) must outlive it. 1 and *out, or 0 with errno set (nothing started). */
int gpursa_metrics_start(const gpursa_config *cfg, gpursa_stats *stats, gpursa_queue *q,
                         gpursa_metrics **out);
/* Stops and joins the thread; then a file named with %p is removed (its
 * process is going), any other gets a last write. NULL is a no-op. */
void gpursa_metrics_stop(gpursa_metrics *m);
/* The exposition text now, into buf (NUL-terminated): its length, or the
 * length it needs (>= len) when buf is too small. */
size_t gpursa_metrics_format(gpursa_metrics *m, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* GPURSA_QUEUE_H */
