/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa queue/ internals, shared by the files of this folder only.
 *
 * Shape: a gpursa_queue (created by the provider, cheap) owns at most one
 * live runtime (gpursa_qrt) per process. The runtime holds, per device, a
 * dispatcher thread that decides when a batch flushes and up to
 * GPURSA_MAX_DEVICE_BATCHES runner threads that each blind,
 * submit, wait for and complete one batch at a time, so that batches
 * overlap on the device (device_batches sets how many); and a pool of CPU
 * workers for small batches and failed batches. A child after fork() sees a
 * new fork generation and starts a fresh runtime; it never touches the
 * parent's (its locks may have been held by threads that do not exist).
 */
#ifndef GPURSA_QUEUE_INT_H
#define GPURSA_QUEUE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <openssl/bn.h>
#include "queue/gpursa_queue.h"

#define GPURSA_MAX_DEVICES 16
#define GPURSA_MAX_KEY_BYTES 512
/* Blinding pairs a runner keeps per key. A new pool holds GPURSA_POOL_FIRST
 * (a key used once costs little); each refill doubles it up to GPURSA_POOL,
 * or twice the largest group it served, within the runner's staging size.
 * A refill adds at least half the pool with one inversion (a fraction of a
 * millisecond at 2048 bits) and runs while the device computes. */
#define GPURSA_POOL 1024
#define GPURSA_POOL_FIRST 64
#define GPURSA_POOL_KEYS 8       /* keys a runner keeps pools for (LRU) */

/* crossover values */
#define GPURSA_XOVER_UNMEASURED (-2)
#define GPURSA_XOVER_MEASURING (-1)

typedef struct gpursa_qrt gpursa_qrt;
typedef struct gpursa_dev gpursa_dev;
typedef struct gpursa_wake gpursa_wake;

/* The signal target of an async caller: one per ASYNC_WAIT_CTX, refcounted
 * by the wait context and by every request in flight, so a completion never
 * writes to an fd that was closed (and maybe reused) nor calls back into a
 * wait context that was freed. */
struct gpursa_wake {
    atomic_int refs;
    int fd;                      /* eventfd, closed on the last unref */
    pthread_mutex_t mu;          /* guards alive, cb, cbarg */
    int alive;                   /* 0 once the wait context cleaned up */
    int (*cb)(void *);
    void *cbarg;
};

/* One private operation waiting for an answer. Lives on the caller's stack
 * (a blocking thread or an async job's own stack), so the completion side
 * reads what it needs before it publishes done. */
typedef struct gpursa_req {
    struct gpursa_req *next;
    gpursa_queue_key *key;
    const unsigned char *in;
    unsigned char *out;
    gpursa_wake *wake;           /* async caller: signal here (a ref held); else NULL */
    gpursa_dev *dev;
    uint64_t t_enq_ns;
    atomic_int completed;        /* guards against a second answer */
    atomic_int done;             /* 0 pending, 1 ok, 2 failed: release-stored last */
} gpursa_req;

typedef struct {
    gpursa_req *head, *tail;
    size_t count;
} gpursa_req_list;

/* Per device copy of a queue key: valid only for the runtime it names. */
typedef struct {
    gpursa_qrt *rt;
    gpursa_gpu_key *gk;
    int unsupported;
} gpursa_qkey_dev;

struct gpursa_queue_key {
    gpursa_queue *q;
    uint64_t id;                 /* unique in the process, never reused */
    struct gpursa_queue_key *prev, *next;  /* registry in q, under the global lock */
    gpursa_cpu_private_fn cpu;
    void *cpu_arg;
    size_t len;                  /* modulus bytes */
    int bits;                    /* gpu modulus bits, 0 = CPU only */
    atomic_int refused;          /* a backend refused the upload: CPU only from now */
    int size_index;              /* in gpursa_size_bits; -1 with bits 0 */
    unsigned char *mat;          /* one allocation holding the copied material */
    size_t mat_len;
    gpursa_rsa_key_material km;  /* points into mat */
    BIGNUM *n;
    BN_MONT_CTX *mont;
    unsigned char n_top;         /* n's first byte: masks random r below 2^bits */
    const unsigned char *n_bytes;        /* n, exactly len bytes (into mat) */
    gpursa_qkey_dev dev[GPURSA_MAX_DEVICES];
};

/* Blinding pairs of one key, owned by one runner (no lock). Only the key's
 * id is kept: the key itself is used only while a request of it is in the
 * runner's batch (it cannot be freed then). */
typedef struct {
    uint64_t key_id;             /* gpursa_queue_key.id (never reused), 0 = free */
    uint64_t last_use;           /* runner batch_no of the last batch that used it */
    size_t len, n, cap;          /* bytes per number, pairs held, room */
    size_t group;                /* the largest group served since the last refill */
    int filling;                 /* a refill is under way (topped up in chunks) */
    unsigned char *r, *rinv;     /* cap * len each */
} gpursa_pair_pool;

/* A runner thread and its batch in preparation or on the device, reused for
 * the runtime's life. */
typedef struct gpursa_runner {
    gpursa_dev *dev;
    pthread_t th;
    pthread_cond_t cond;         /* with dev->mu: the dispatcher filled it */
    int filled;                  /* 1 while it holds a batch */
    int measure;                 /* time the crossover first */
    int quit;                    /* under dev->mu: the runner exits */
    int size_index;              /* the batch's key size (gpursa_size_bits) */
    uint64_t t_flush_ns;         /* when the dispatcher handed it the batch (stage times) */
    gpursa_req_list reqs;        /* the requests, in order */
    gpursa_gpu_batch *batch[GPURSA_NSIZES];
    /* staging, grown on demand to the largest batch seen */
    size_t cap;
    gpursa_req **rv;
    gpursa_wake **wv;            /* completion scratch */
    gpursa_gpu_item *items;
    unsigned char *rbuf, *rinvbuf, *outbuf;
    BN_CTX *bnctx;
    /* blinding pairs made ahead, per key (see gpursa_runner_pairs) */
    uint64_t batch_no;           /* batches run: the pools' LRU clock */
    gpursa_pair_pool pools[GPURSA_POOL_KEYS];
} gpursa_runner;

struct gpursa_dev {
    gpursa_qrt *rt;
    int index;                   /* backend device index */
    int dev_no;                  /* position in rt->dev[] */
    gpursa_gpu_device *gd;
    pthread_mutex_t mu;          /* pending lists, runners, state */
    pthread_cond_t cond;         /* dispatcher: work arrived, a runner freed, stop */
    pthread_mutex_t key_mu;      /* uploads into gpursa_queue_key.dev[dev_no] */
    pthread_mutex_t batch_mu;    /* the runners' batch[] (gpursa_runner_batch) */
    pthread_t disp;
    gpursa_req_list pend[GPURSA_NSIZES];
    atomic_int xover[GPURSA_NSIZES];
    double gap_ns[GPURSA_NSIZES];      /* mean gap between arrivals (EWMA) */
    uint64_t last_arrival[GPURSA_NSIZES];
    /* A small batch held past its deadline for company (gpursa_batch_policy.c):
     * held, and when the first request after that came (0: none yet). */
    int held[GPURSA_NSIZES];
    uint64_t wave_ns[GPURSA_NSIZES];
    atomic_long load;            /* requests queued or running here */
    int quit;                    /* under mu: the dispatcher exits */
    int wants_runner;            /* under mu: a flush waits for a runner to finish */
    int nrunners;
    int busy;                    /* runners filled */
    size_t full_batch;           /* items that make a batch full: it goes at once */
    int max_busy;                /* batches in flight at most (device_batches) ... */
    int full_skips_cap;          /* ... but full ones (device_batches = auto, shared) */
    size_t shared_company;       /* then: below this a batch waits for company (0: never) */
    gpursa_runner *runners;
    /* failure handling */
    int down;                    /* no batches until reopened */
    int keys_dropped;            /* under mu: down, and its key copies freed */
    int consecutive_errors;
    uint64_t retry_at_ns;
    unsigned backoff_ms;
    atomic_uint_fast64_t opens;  /* successful opens (tests) */
};

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    gpursa_req_list list;
    int nthreads;
    pthread_t *th;
    int stop;
    /* Is a core idle? (cpu_fallback = auto; gpursa_cpu_spare) */
    pthread_mutex_t load_mu;
    atomic_uint_fast64_t load_at_ns;             /* the last /proc/stat sample */
    uint64_t load_busy, load_total;              /* (under load_mu) */
    int ncpu;
    atomic_int spare;
} gpursa_cpu_pool;

struct gpursa_qrt {
    gpursa_queue *q;
    unsigned gen;                /* fork generation it was started in */
    int ndev;
    gpursa_dev dev[GPURSA_MAX_DEVICES];
    gpursa_cpu_pool pool;
    atomic_uint inflight;
    atomic_int bp_waiters;       /* blocking callers held back by max_inflight */
    atomic_uint bp_paused;       /* jobs paused by max_inflight (gpursa_queue_waiting) */
    pthread_mutex_t bp_mu;
    pthread_cond_t bp_cond;
    atomic_int stop;             /* set once at queue free */
    int counts_host;             /* the backend is the host one: ops_host */
    /* OpenSSL keeps per-thread state (DRBGs, error queue) that only
     * OPENSSL_thread_stop() frees, and it does nothing once OPENSSL_cleanup()
     * has begun, which is where a provider loaded for the whole process is
     * torn down. So at exit() (an atexit handler that runs before OpenSSL's)
     * every runner and CPU worker drops its state first. */
    struct gpursa_qrt *live_next;        /* live runtimes, under the global lock */
    atomic_uint tstate_gen;              /* bumped: drop the per-thread state */
    pthread_mutex_t tstate_mu;
    pthread_cond_t tstate_cond;
    unsigned tstate_done;                /* threads that did, cumulative */
};

struct gpursa_queue {
    gpursa_config cfg;
    gpursa_stats *stats;
    const gpursa_gpu_backend_ops *ops;
    _Atomic(gpursa_qrt *) rt;
    gpursa_queue_key *keys;      /* registry, under the global lock */
};

/* gpursa_queue.c */
extern pthread_mutex_t gpursa_q_global_lock;
unsigned gpursa_q_fork_gen(void);
uint64_t gpursa_now_ns(void);
/* A log line on stderr when cfg->log_level (or q's) allows level. */
void gpursa_log_cfg(const gpursa_config *cfg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define gpursa_log_q(q, level, ...) gpursa_log_cfg(&(q)->cfg, (level), __VA_ARGS__)
void gpursa_req_complete(gpursa_qrt *rt, gpursa_req *r, int ok);
/* Completes n requests of device d whose results are in their out buffers:
 * shared counters once, then every done, then one signal per wake in a row
 * (wv: n entries of scratch). */
void gpursa_req_complete_ok(gpursa_qrt *rt, gpursa_dev *d, gpursa_req **rv, size_t n,
                            gpursa_wake **wv);
/* Runs the CPU path for one request and completes it; counts ops_cpu. */
void gpursa_req_cpu(gpursa_qrt *rt, gpursa_req *r);
void gpursa_list_append(gpursa_req_list *l, gpursa_req *r);
void gpursa_list_splice(gpursa_req_list *dst, gpursa_req_list *src);
/* Names the calling thread (visible in top -H, perf, /proc: bench/queue-cpu-cost.py). */
void gpursa_thread_name(const char *name);
/* A runner or CPU worker, holding no lock: if a release was asked since
 * *seen, drops this thread's OpenSSL state and reports it. */
void gpursa_thread_state_check(gpursa_qrt *rt, unsigned *seen);

/* gpursa_cpu_pool.c */
int gpursa_cpu_pool_start(gpursa_qrt *rt, int nthreads);
void gpursa_cpu_pool_stop(gpursa_qrt *rt);
/* Hands every request of the list to the CPU workers (the list is emptied). */
void gpursa_cpu_pool_push(gpursa_qrt *rt, gpursa_req_list *l);
/* 1 when batches below the crossover may go to the CPU workers:
 * cpu_fallback = always, or auto while the machine
 * had at least one idle core over the last ~100 ms (/proc/stat, sampled at
 * most that often; a machine without it counts as idle). On a machine whose
 * cores are all busy (a server signing from every core, many processes
 * under MPS) the CPU path would take a core's worth of time per operation
 * from the application, where the device takes a few microseconds. */
int gpursa_cpu_spare(gpursa_qrt *rt);
/* The aggregate "cpu ..." line of /proc/stat into busy and total ticks
 * (idle = idle + iowait). 1 on success. */
int gpursa_cpu_stat_parse(const char *line, uint64_t *busy, uint64_t *total);

/* The backend of the runtime's queue. */
static inline const gpursa_gpu_backend_ops *gpursa_dev_ops(const gpursa_dev *d)
{
    return d->rt->q->ops;
}

/* gpursa_device.c */
int gpursa_dev_start(gpursa_qrt *rt, gpursa_dev *d, int index, int nrunners);
void gpursa_dev_stop(gpursa_dev *d);
void gpursa_dev_forget_key(gpursa_dev *d, gpursa_queue_key *qk);
/* The key's GPU copy on this device, uploaded on first use. NULL with
 * *unsupported set when the backend refuses the key, NULL alone on error. */
gpursa_gpu_key *gpursa_dev_key(gpursa_dev *d, gpursa_queue_key *qk, int *unsupported);
/* A batch failed with rc: counts towards taking the device down. */
void gpursa_dev_failed(gpursa_dev *d, int rc);
/* The dispatcher, once a device that went down has no runner busy. */
void gpursa_dev_reopen(gpursa_dev *d);
/* Called by a runner whose batch on d is done (still counted in d->busy):
 * when d is down and no other batch uses it, its key copies are wiped and
 * freed now, not at the next reopen attempt. */
void gpursa_dev_drop_keys_if_down(gpursa_dev *d);

/* gpursa_batch_policy.c */
/* Puts the request on the device's pending list (one lock). DECIDE records
 * the arrival first and queues only if a batch would reach the crossover
 * before the deadline (else returns 0 and queues nothing); ARRIVAL records
 * it and queues. No lock held. */
enum { GPURSA_SUBMIT_QUEUE = 0, GPURSA_SUBMIT_DECIDE = 1, GPURSA_SUBMIT_ARRIVAL = 2 };
int gpursa_dev_submit(gpursa_dev *d, gpursa_req *r, int mode);
/* The decision alone (records the arrival): 1 if a batch is likely. */
int gpursa_dev_decide(gpursa_dev *d, int si);
/* A runner finished its batch (d->mu held, d->busy already counted down):
 * 1 when the dispatcher must hear of it, because a flush waits for a free
 * runner, the device is down and now unused (its reopen), or a key
 * size's deadline depends on the device running nothing of this process. Any
 * other wake-up would find nothing to do. */
int gpursa_dev_runner_done(gpursa_dev *d);
/* Before that: runner r (free now) takes the next batch due itself, as
 * the dispatcher would have given it (full lists first, then those past
 * their deadline): 1 when r holds it, 0 when none went to it. A
 * batch that leaves as its predecessor returns then costs no wake-up of the
 * dispatcher nor of a runner. */
int gpursa_dev_runner_next(gpursa_dev *d, gpursa_runner *r);
/* Batches in flight at most and the size of a full batch, after each open. */
void gpursa_dev_set_max_busy(gpursa_dev *d);
/* The device's dispatcher thread (arg: the gpursa_dev). */
void *gpursa_dispatcher(void *arg);

/* gpursa_runner.c */
/* A runner thread (arg: its gpursa_runner). */
void *gpursa_runner_main(void *arg);
/* Staging for at least n items. 1 ok, 0 out of memory. */
int gpursa_runner_reserve(gpursa_runner *s, size_t n);
/* This runner's reusable batch of key size si (made on first use); NULL on failure. */
gpursa_gpu_batch *gpursa_runner_batch(gpursa_runner *s, int si);
void gpursa_runner_free_batches(gpursa_runner *s);
/* Frees everything the runner owns, wiping its buffers and pools. */
void gpursa_runner_release(gpursa_runner *s);

/* gpursa_crossover.c */
/* Measures the crossover of the runner's key size with key qk; stores it in
 * the device's xover[] (1 if the measurement failed). */
void gpursa_measure(gpursa_runner *s, gpursa_queue_key *qk);

/* gpursa_pair_pool.c */
void gpursa_pool_drop(gpursa_pair_pool *p);
/* m pairs of key k into r / rinv (m * k->len bytes each). 1 ok, 0 fail. */
int gpursa_runner_pairs(gpursa_runner *s, gpursa_queue_key *k, size_t m,
                        unsigned char *r, unsigned char *rinv);
/* While batch (the runner's n requests) computes: refills the pools it drew from. */
void gpursa_runner_topup(gpursa_runner *s, size_t n, gpursa_gpu_batch *batch);

/* gpursa_blinding.c */
/* Fills items[i].r / rinv (into rbuf / rinvbuf) for n requests, all of the
 * same key, with fresh random r and one inversion for all. 1 ok, 0 fail. */
int gpursa_blind_batch(gpursa_queue_key *qk, size_t n, unsigned char *rbuf,
                       unsigned char *rinvbuf, BN_CTX *ctx);

/* gpursa_async_wake.c */
/* The wake object of the current job's wait context (created and registered
 * on first use); a new reference is NOT taken. NULL on failure. */
gpursa_wake *gpursa_wake_for_current_job(void);
void gpursa_wake_ref(gpursa_wake *w);
void gpursa_wake_unref(gpursa_wake *w);
void gpursa_wake_signal(gpursa_wake *w);
void gpursa_wake_drain(gpursa_wake *w);

#endif /* GPURSA_QUEUE_INT_H */
