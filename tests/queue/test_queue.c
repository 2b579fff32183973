/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Queue tests against a fake backend (deterministic timing and failures) and
 * the real host backend. Every result is checked (out^e == in mod n), and
 * the stats must account for every operation exactly once.
 *
 * GPURSA_TEST_SCALE (default 1) divides the stress sizes, for slow runs
 * under ThreadSanitizer or valgrind.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <openssl/async.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "config.h"
#include "queue/gpursa_queue.h"
#include "queue/gpursa_queue_int.h"   /* gpursa_cpu_stat_parse */
#include "bench/gpursa_bench_instant.h"
#include "tests/queue/fake_backend.h"
#ifdef GPURSA_HAVE_CUDA
#include "gpu/gpursa_cuda_debug.h"
#endif

/* ---- keys and the CPU path ------------------------------------------------ */

typedef struct {
    BIGNUM *n, *e, *d, *p, *q, *dp, *dq, *qinv;
    unsigned char buf[7][512];
    gpursa_rsa_key_material km;
    size_t len;
    atomic_long cpu_calls;
} tkey;

static tkey keys[3];             /* 1024, 1024, 2048 bits */
static unsigned cpu_delay_us;    /* makes the CPU path slower (crossover test) */
static int scale = 1;

static void tkey_make(tkey *k, int bits)
{
    EVP_PKEY *pk = EVP_RSA_gen((unsigned)bits);
    const char *names[8] = { OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E,
                             OSSL_PKEY_PARAM_RSA_D, OSSL_PKEY_PARAM_RSA_FACTOR1,
                             OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_EXPONENT1,
                             OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1 };
    BIGNUM **dst[8] = { &k->n, &k->e, &k->d, &k->p, &k->q, &k->dp, &k->dq, &k->qinv };
    size_t lens[7];

    if (pk == NULL)
        abort();
    for (int i = 0; i < 8; i++)
        if (!EVP_PKEY_get_bn_param(pk, names[i], dst[i]))
            abort();
    EVP_PKEY_free(pk);
    k->len = (size_t)BN_num_bytes(k->n);
    {
        BIGNUM *parts[7] = { k->n, k->e, k->p, k->q, k->dp, k->dq, k->qinv };

        for (int i = 0; i < 7; i++)
            lens[i] = (size_t)BN_bn2bin(parts[i], k->buf[i]);
    }
    k->km.n = k->buf[0];    k->km.n_len = lens[0];
    k->km.e = k->buf[1];    k->km.e_len = lens[1];
    k->km.p = k->buf[2];    k->km.p_len = lens[2];
    k->km.q = k->buf[3];    k->km.q_len = lens[3];
    k->km.dp = k->buf[4];   k->km.dp_len = lens[4];
    k->km.dq = k->buf[5];   k->km.dq_len = lens[5];
    k->km.qinv = k->buf[6]; k->km.qinv_len = lens[6];
}

/* The test's CPU path: plain CRT with BN (the provider's is the default
 * provider); it tolerates in == out. */
static int test_cpu(void *arg, const unsigned char *in, unsigned char *out, size_t len)
{
    tkey *k = arg;
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *c, *m1, *m2, *h;
    int ok = 0;

    atomic_fetch_add(&k->cpu_calls, 1);
    if (cpu_delay_us) {
        /* spin on this thread's CPU time: the CPU path costs exactly this
         * much CPU however loaded the machine is */
        struct timespec t0, t1;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        while ((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000
               < (long)cpu_delay_us);
    }
    if (ctx == NULL || len != k->len)
        goto end;
    BN_CTX_start(ctx);
    c = BN_CTX_get(ctx);
    m1 = BN_CTX_get(ctx);
    m2 = BN_CTX_get(ctx);
    h = BN_CTX_get(ctx);
    if (h == NULL || BN_bin2bn(in, (int)len, c) == NULL
        || !BN_mod_exp(m1, c, k->dp, k->p, ctx) || !BN_mod_exp(m2, c, k->dq, k->q, ctx)
        || !BN_mod_sub(h, m1, m2, k->p, ctx) || !BN_mod_mul(h, h, k->qinv, k->p, ctx)
        || !BN_mul(h, h, k->q, ctx) || !BN_add(h, h, m2)
        || BN_bn2binpad(h, out, (int)len) != (int)len)
        goto end2;
    ok = 1;
end2:
    BN_CTX_end(ctx);
end:
    BN_CTX_free(ctx);
    return ok;
}

static void random_input(const tkey *k, unsigned char *in)
{
    RAND_bytes(in, (int)k->len);
    in[0] &= 0x7f;               /* n has its top bit set: in < n */
}

static int result_ok(const tkey *k, const unsigned char *in, const unsigned char *out)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *x = BN_bin2bn(out, (int)k->len, NULL), *c = BN_bin2bn(in, (int)k->len, NULL);
    int ok = ctx != NULL && x != NULL && c != NULL && BN_mod_exp(x, x, k->e, k->n, ctx)
             && BN_cmp(x, c) == 0;

    BN_free(x);
    BN_free(c);
    BN_CTX_free(ctx);
    return ok;
}

/* ---- helpers ------------------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static gpursa_stats stats;
/* Where small batches go in mkq's queues: the flush tests decide by size and
 * deadline alone, whatever else runs on the test machine. */
static gpursa_cpu_fallback mkq_fallback = GPURSA_CPU_FALLBACK_ALWAYS;
/* device_batches of mkq's queues (0: auto) */
static unsigned mkq_device_batches;
/* what mkq's queues open devices with (all zero: the defaults) */
static gpursa_gpu_open_params mkq_gpu;

static gpursa_queue *mkq(const gpursa_gpu_backend_ops *ops, unsigned max_batch,
                         unsigned wait_us, int min_gpu, unsigned inflight)
{
    gpursa_config cfg;
    gpursa_queue *q = NULL;

    gpursa_config_defaults(&cfg);
    cfg.backend = GPURSA_CFG_BACKEND_HOST;
    cfg.max_batch = max_batch;
    cfg.max_wait_us = wait_us;
    cfg.min_gpu_batch = min_gpu;
    cfg.max_inflight = inflight;
    cfg.cpu_fallback = mkq_fallback;
    cfg.device_batches = mkq_device_batches;
    cfg.gpu = mkq_gpu;
    cfg.log_level = getenv("GPURSA_TEST_LOG") ? atoi(getenv("GPURSA_TEST_LOG")) : 0;
    memset(&stats, 0, sizeof(stats));
    ck_assert_int_eq(gpursa_queue_new(&cfg, &stats, ops, &q), 1);
    ck_assert_ptr_nonnull(q);
    return q;
}

static gpursa_queue_key *mkkey(gpursa_queue *q, tkey *k)
{
    gpursa_queue_key *qk = NULL;

    ck_assert_int_eq(gpursa_queue_key_new(q, &k->km, test_cpu, k, &qk), 1);
    return qk;
}

static uint64_t ops_total(void)
{
    return atomic_load(&stats.ops_gpu) + atomic_load(&stats.ops_host)
           + atomic_load(&stats.ops_cpu);
}

static void dump_stats(const char *what)
{
    if (getenv("GPURSA_TEST_LOG") == NULL)
        return;
    fprintf(stderr, "%s: gpu=%llu host=%llu cpu=%llu batches=%llu items=%llu faults=%llu "
            "small=%llu unsup=%llu gpuerr=%llu nodev=%llu inline=%llu\n", what,
            (unsigned long long)stats.ops_gpu, (unsigned long long)stats.ops_host,
            (unsigned long long)stats.ops_cpu, (unsigned long long)stats.batches,
            (unsigned long long)stats.batch_items, (unsigned long long)stats.faults,
            (unsigned long long)stats.fb_small_batch, (unsigned long long)stats.fb_unsupported_key,
            (unsigned long long)stats.fb_gpu_error, (unsigned long long)stats.fb_no_device,
            (unsigned long long)stats.fb_inline);
}

/* One operation with a random input, checked. 1 if right. */
static int one_op(gpursa_queue *q, gpursa_queue_key *qk, tkey *k)
{
    unsigned char in[512], out[512];

    random_input(k, in);
    memset(out, 0xa5, sizeof(out));
    return gpursa_queue_private(q, qk, in, out, k->len) == 1 && result_ok(k, in, out);
}

typedef struct {
    gpursa_queue *q;
    gpursa_queue_key **qk;
    tkey **k;
    int nkeys;
    int ops;
    atomic_long *bad;
    unsigned seed;
} worker_arg;

static void *worker(void *varg)
{
    worker_arg *a = varg;

    for (int i = 0; i < a->ops; i++) {
        int j = (int)(rand_r(&a->seed) % (unsigned)a->nkeys);

        if (!one_op(a->q, a->qk[j], a->k[j]))
            atomic_fetch_add(a->bad, 1);
    }
    return NULL;
}

/* nthreads blocking threads, ops each, over the keys given; returns bad count. */
static long run_threads(gpursa_queue *q, gpursa_queue_key **qk, tkey **k, int nkeys,
                        int nthreads, int ops)
{
    pthread_t th[128];
    worker_arg a[128];
    atomic_long bad = 0;

    ck_assert_int_le(nthreads, 128);
    for (int i = 0; i < nthreads; i++) {
        a[i] = (worker_arg){ q, qk, k, nkeys, ops, &bad, (unsigned)i * 7919u + 1 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &a[i]), 0);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    return atomic_load(&bad);
}

/* Async jobs in this thread: each does ops operations; the loop polls the
 * wait contexts' fds and resumes jobs whose fd is readable. */
typedef struct {
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k;
    int ops;
    int good;
    int pauses_seen;
} job_res;

typedef struct {
    job_res *res;
} job_arg;

static int job_fn(void *varg)
{
    job_res *r = ((job_arg *)varg)->res;

    for (int i = 0; i < r->ops; i++)
        r->good += one_op(r->q, r->qk, r->k);
    return 1;
}

static long run_async_fn(gpursa_queue *q, gpursa_queue_key *qk, tkey *k, int njobs, int ops,
                         int (*fn)(void *))
{
    ASYNC_JOB **job = calloc((size_t)njobs, sizeof(*job));
    ASYNC_WAIT_CTX **ctx = calloc((size_t)njobs, sizeof(*ctx));
    job_res *res = calloc((size_t)njobs, sizeof(*res));
    int *state = calloc((size_t)njobs, sizeof(*state));   /* 0 not started, 1 paused, 2 done */
    struct pollfd *pfd = calloc((size_t)njobs, sizeof(*pfd));
    int *who = calloc((size_t)njobs, sizeof(*who));
    int remaining = njobs;
    long bad = 0;
    uint64_t last_progress = now_ns();

    ck_assert(job && ctx && res && state && pfd && who);
    ck_assert_int_eq(ASYNC_init_thread((size_t)njobs, 0), 1);
    for (int i = 0; i < njobs; i++) {
        ctx[i] = ASYNC_WAIT_CTX_new();
        ck_assert_ptr_nonnull(ctx[i]);
        res[i] = (job_res){ q, qk, k, ops, 0, 0 };
    }
    while (remaining > 0) {
        int np = 0, progressed = 0;

        for (int i = 0; i < njobs; i++) {
            int ret = 0, rc;
            job_arg ja = { &res[i] };

            if (state[i] != 0)
                continue;
            rc = ASYNC_start_job(&job[i], ctx[i], &ret, fn, &ja, sizeof(ja));
            if (rc == ASYNC_PAUSE) {
                state[i] = 1;
            } else if (rc == ASYNC_FINISH) {
                state[i] = 2;
                remaining--;
                progressed = 1;
            } else if (rc == ASYNC_NO_JOBS) {
                break;
            } else {
                ck_abort_msg("ASYNC_start_job failed");
            }
        }
        for (int i = 0; i < njobs; i++) {
            OSSL_ASYNC_FD fd;
            size_t nfd = 0;

            if (state[i] != 1)
                continue;
            /* one stable fd per wait context (plain checks in this loop:
             * each ck_assert writes a file, which would swamp the timing) */
            if (!ASYNC_WAIT_CTX_get_all_fds(ctx[i], NULL, &nfd) || nfd != 1)
                ck_abort_msg("job %d: %zu fds in its wait context", i, nfd);
            ASYNC_WAIT_CTX_get_all_fds(ctx[i], &fd, &nfd);
            pfd[np].fd = fd;
            pfd[np].events = POLLIN;
            pfd[np].revents = 0;
            who[np++] = i;
        }
        if (np > 0 && poll(pfd, (nfds_t)np, 100) > 0) {
            for (int j = 0; j < np; j++) {
                int i = who[j], ret = 0, rc;

                if (!(pfd[j].revents & POLLIN))
                    continue;
                rc = ASYNC_start_job(&job[i], ctx[i], &ret, fn, NULL, 0);
                if (rc == ASYNC_FINISH) {
                    state[i] = 2;
                    remaining--;
                    progressed = 1;
                } else if (rc != ASYNC_PAUSE) {
                    ck_abort_msg("resume of job %d: %d", i, rc);
                }
                progressed = 1;
            }
        }
        if (progressed)
            last_progress = now_ns();
        else if (now_ns() - last_progress > 30000000000ull)
            ck_abort_msg("async jobs stuck");
    }
    for (int i = 0; i < njobs; i++) {
        bad += res[i].ops - res[i].good;
        ASYNC_WAIT_CTX_free(ctx[i]);
    }
    ASYNC_cleanup_thread();
    free(job);
    free(ctx);
    free(res);
    free(state);
    free(pfd);
    free(who);
    return bad;
}

static long run_async(gpursa_queue *q, gpursa_queue_key *qk, tkey *k, int njobs, int ops)
{
    return run_async_fn(q, qk, k, njobs, ops, job_fn);
}

static int nop_job_fn(void *varg);

/* ---- flush policy --------------------------------------------------------- */

START_TEST(test_lazy_start_opens_nothing_until_first_op)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    q = mkq(&fake_ops, 16, 1000, 1, 64);
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(atomic_load(&fake.open_attempts), 0);
    ck_assert_int_eq(gpursa_queue_devices(q), 0);
    ck_assert(one_op(q, qk, &keys[0]));
    ck_assert_int_eq(atomic_load(&fake.opens), 1);
    ck_assert_int_eq(gpursa_queue_devices(q), 1);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
}
END_TEST

/* The configuration's gpu/ keys (variant, host_threads, cuda_fp64,
 * cuda_debug) are what the backend opens its device with. */
START_TEST(test_device_opens_with_the_configured_gpu_keys)
{
    static const gpursa_gpu_open_params want = { GPURSA_VARIANT_XMAD, 3, GPURSA_FP64_OFF, 1 };
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    memset(&fake.open_params, 0, sizeof(fake.open_params));
    mkq_gpu = want;
    q = mkq(&fake_ops, 16, 1000, 1, 64);
    mkq_gpu = (gpursa_gpu_open_params){ 0 };
    qk = mkkey(q, &keys[0]);
    ck_assert(one_op(q, qk, &keys[0]));
    ck_assert_int_eq(atomic_load(&fake.opens), 1);
    ck_assert_int_eq(fake.open_params.variant, want.variant);
    ck_assert_int_eq(fake.open_params.host_threads, want.host_threads);
    ck_assert_int_eq(fake.open_params.cuda_fp64, want.cuda_fp64);
    ck_assert_int_eq(fake.open_params.cuda_debug, want.cuda_debug);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_size_flush_full_batch_goes_before_deadline)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    uint64_t t0;

    fake_reset();
    q = mkq(&fake_ops, 8, 10000000, 1, 1024);   /* deadline 10 s */
    qk = mkkey(q, k);
    t0 = now_ns();
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 8, 1), 0);
    ck_assert_msg(now_ns() - t0 < 3000000000ull, "a full batch waited for the deadline");
    ck_assert_int_eq(atomic_load(&fake.batches), 1);
    ck_assert_int_eq(fake.log[0], 8);
    ck_assert_uint_eq(atomic_load(&stats.batches), 1);
    ck_assert_uint_eq(atomic_load(&stats.batch_items), 8);
    ck_assert_uint_eq(ops_total(), 8);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_deadline_flush_partial_batch_after_max_wait)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    uint64_t t0, dt;

    fake_reset();
    q = mkq(&fake_ops, 64, 200000, 1, 1024);    /* deadline 200 ms */
    qk = mkkey(q, k);
    ck_assert(one_op(q, qk, k));                 /* starts the runtime */
    t0 = now_ns();
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 3, 1), 0);
    dt = now_ns() - t0;
    ck_assert_msg(dt >= 190000000ull, "flushed after %llu ns, before the deadline",
                  (unsigned long long)dt);
    ck_assert_msg(dt < 2000000000ull, "flush too late: %llu ns", (unsigned long long)dt);
    ck_assert_int_eq(atomic_load(&fake.batches), 2);
    ck_assert_int_eq(fake.log[0], 1);
    ck_assert_int_eq(fake.log[1], 3);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

static atomic_int sampler_stop;
static atomic_uint sampler_max, sampler_waiting_max;

/* The most requests in flight, and callers held back, seen meanwhile. */
static void *sampler(void *arg)
{
    gpursa_queue *q = arg;

    while (!atomic_load(&sampler_stop)) {
        unsigned v = gpursa_queue_inflight(q), w = gpursa_queue_waiting(q);

        if (v > atomic_load(&sampler_max))
            atomic_store(&sampler_max, v);
        if (w > atomic_load(&sampler_waiting_max))
            atomic_store(&sampler_waiting_max, w);
        usleep(200);
    }
    return NULL;
}

static void sampler_start(pthread_t *th, gpursa_queue *q)
{
    atomic_store(&sampler_stop, 0);
    atomic_store(&sampler_max, 0);
    atomic_store(&sampler_waiting_max, 0);
    ck_assert_int_eq(pthread_create(th, NULL, sampler, q), 0);
}

static void sampler_stop_join(pthread_t th)
{
    atomic_store(&sampler_stop, 1);
    pthread_join(th, NULL);
}

START_TEST(test_backpressure_bounds_inflight_blocking_threads)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    pthread_t th;

    fake_reset();
    fake.batch_delay_us = 20000;
    q = mkq(&fake_ops, 4, 1000, 1, 4);
    qk = mkkey(q, k);
    sampler_start(&th, q);
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 16, 10), 0);
    sampler_stop_join(th);
    ck_assert_uint_le(atomic_load(&sampler_max), 4);
    /* twelve threads or more wait most of the time: the metrics' gauge shows them */
    ck_assert_uint_gt(atomic_load(&sampler_waiting_max), 0);
    ck_assert_uint_le(atomic_load(&sampler_waiting_max), 12);
    ck_assert_uint_eq(gpursa_queue_waiting(q), 0);
    ck_assert_int_le(atomic_load(&fake.max_items), 4);
    ck_assert_uint_eq(ops_total(), 160);
    ck_assert_uint_eq(gpursa_queue_inflight(q), 0);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_backpressure_async_jobs_pause_and_retry)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;

    pthread_t th;

    fake_reset();
    fake.batch_delay_us = 2000;
    q = mkq(&fake_ops, 16, 500, 1, 20);
    qk = mkkey(q, &keys[0]);
    sampler_start(&th, q);
    ck_assert_int_eq(run_async(q, qk, &keys[0], 200, 2), 0);
    sampler_stop_join(th);
    ck_assert_int_le(atomic_load(&fake.max_items), 20);
    /* jobs paused at the bound are callers held back too */
    ck_assert_uint_gt(atomic_load(&sampler_waiting_max), 0);
    ck_assert_uint_eq(gpursa_queue_waiting(q), 0);
    ck_assert_uint_eq(ops_total(), 400);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_crossover_small_batches_run_on_cpu_workers)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    q = mkq(&fake_ops, 64, 200000, 5, 1024);
    qk = mkkey(q, &keys[0]);
    /* A lone caller, nothing known of the arrival rate: no batch of 5 can
     * form in time, so it computes inline. */
    ck_assert(one_op(q, qk, &keys[0]));
    ck_assert_uint_eq(atomic_load(&stats.fb_inline), 1);
    /* Then arrivals come fast (gaps of milliseconds against a 200 ms
     * window): requests queue, but only 2 come: below 5, the CPU workers
     * take them ... */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 2, 1), 0);
    ck_assert_uint_eq(atomic_load(&stats.fb_small_batch), 2);
    ck_assert_int_eq(atomic_load(&fake.batches), 0);
    /* ... and 8 >= 5 go to the device as one batch. */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 8, 1), 0);
    ck_assert_int_eq(atomic_load(&fake.batches), 1);
    ck_assert_int_eq(fake.log[0], 8);
    ck_assert_uint_eq(atomic_load(&stats.ops_gpu), 8);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), 3);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* A group of async jobs in a thread of its own, started after a delay. */
typedef struct {
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k;
    int njobs;
    unsigned delay_ms;
    long bad;
} async_group;

static void *async_group_run(void *arg)
{
    async_group *g = arg;

    usleep(g->delay_ms * 1000u);
    g->bad = run_async(g->q, g->qk, g->k, g->njobs, 1);
    return NULL;
}

/* While the device runs a batch, a batch below the crossover waits (up to
 * 8 deadlines, GPURSA_HOLD_WAITS) for the requests that come next instead
 * of going to the CPU workers at its deadline, and goes to the device with
 * them at their own deadline. A (8) runs 1 s from its deadline at 100 ms; B
 * (2) comes once A is on the device and is below the crossover (4) at its
 * deadline; C (2, 200 ms after B: B is held by then) makes the crossover and
 * D (3) comes within C's deadline: one batch of 7. With the plain deadline B
 * would have gone to the CPU workers; released at the crossover, B and C
 * would have been a batch of 4 cut out of the wave, and D left small again.
 * B waits for A to be on the device and D for C's requests to be queued
 * (events, not times: on a loaded machine a thread may start late, and a
 * late A would take B into its batch, a late C its deadline past D). */
/* Waits (5 s at most: a hang guard, not a timing) until *v reaches want. */
static int await_atomic(atomic_int *v, int want)
{
    uint64_t t0 = now_ns();

    while (atomic_load(v) < want && now_ns() - t0 < 5000000000ull)
        usleep(1000);
    return atomic_load(v) >= want;
}

static void wait_inflight(gpursa_queue *q, unsigned want)
{
    while (gpursa_queue_inflight(q) < want)
        usleep(1000);
}

START_TEST(test_small_batch_waits_for_company_while_device_runs)
{
    static const int njobs[4] = { 8, 2, 2, 3 };
    gpursa_queue *q;
    gpursa_queue_key *qk;
    async_group g[4];
    pthread_t th[4];
    uint64_t small0, cpu0;
    int n0;

    fake_reset();
    q = mkq(&fake_ops, 64, 100000, 4, 1024);     /* deadline 100 ms, crossover 4 */
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(run_async(q, qk, &keys[0], 8, 1), 0);   /* the arrival rate is known */
    small0 = atomic_load(&stats.fb_small_batch);
    cpu0 = atomic_load(&stats.ops_cpu);
    n0 = atomic_load(&fake.nlog);
    fake.batch_delay_us = 1000000;               /* the device takes 1 s a batch */
    for (int i = 0; i < 4; i++) {
        g[i].q = q;
        g[i].qk = qk;
        g[i].k = &keys[0];
        g[i].njobs = njobs[i];
        g[i].delay_ms = i == 2 ? 200 : 0;
        g[i].bad = -1;
        if (i == 1)
            ck_assert(await_atomic(&fake.cur_items, njobs[0]));   /* A is on the device */
        if (i == 3)
            wait_inflight(q, (unsigned)(njobs[0] + njobs[1] + njobs[2]));
        ck_assert_int_eq(pthread_create(&th[i], NULL, async_group_run, &g[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(g[i].bad, 0);
    }
    dump_stats("company");
    ck_assert_uint_eq(atomic_load(&stats.fb_small_batch), small0);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), cpu0);
    ck_assert_int_eq(atomic_load(&fake.nlog) - n0, 2);
    ck_assert_int_eq(fake.log[n0], 8);
    ck_assert_int_eq(fake.log[n0 + 1], 7);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* A device as the batch policy sees it, with no thread: the policy's own
 * decisions, called directly under no lock (nothing else touches it). */
static gpursa_queue pol_q;
static gpursa_qrt pol_rt;
static gpursa_req pol_req[4];
static gpursa_runner pol_runner[2];

static gpursa_dev *policy_dev(int xover)
{
    gpursa_dev *d = &pol_rt.dev[0];

    memset(&pol_q, 0, sizeof(pol_q));
    memset(&pol_rt, 0, sizeof(pol_rt));
    memset(pol_req, 0, sizeof(pol_req));
    memset(pol_runner, 0, sizeof(pol_runner));
    memset(&stats, 0, sizeof(stats));
    ck_assert_int_eq(gpursa_config_defaults(&pol_q.cfg), 1);
    pol_q.cfg.cpu_fallback = GPURSA_CPU_FALLBACK_ALWAYS;   /* no /proc/stat */
    pol_q.stats = &stats;
    pol_rt.q = &pol_q;
    d->rt = &pol_rt;
    d->runners = pol_runner;
    d->nrunners = d->max_busy = 2;
    d->full_batch = pol_q.cfg.max_batch;
    for (int c = 0; c < GPURSA_NSIZES; c++)
        atomic_init(&d->xover[c], xover);
    return d;
}

/* A runner that finishes a batch wakes the dispatcher only when that can
 * change what it does: a flush waiting for a free runner, the reopen of a
 * device gone down once nothing uses it, or a batch held for company now
 * that the device runs nothing of the process. Otherwise (nothing pending,
 * or requests whose deadline stays where it was) the wake-up would find
 * nothing to do. */
START_TEST(test_runner_done_wakes_dispatcher_only_when_it_has_work)
{
    gpursa_dev *d = policy_dev(1);

    ck_assert_int_eq(gpursa_dev_runner_done(d), 0);          /* nothing pending */
    gpursa_list_append(&d->pend[1], &pol_req[0]);
    ck_assert_int_eq(gpursa_dev_runner_done(d), 0);          /* its deadline stands */
    d->wants_runner = 1;
    d->busy = 1;
    ck_assert_int_eq(gpursa_dev_runner_done(d), 1);          /* a flush waits for it */
    ck_assert_int_eq(d->wants_runner, 0);
    ck_assert_int_eq(gpursa_dev_runner_done(d), 0);          /* told once */
    d->down = 1;
    ck_assert_int_eq(gpursa_dev_runner_done(d), 0);          /* another batch still runs */
    d->busy = 0;
    ck_assert_int_eq(gpursa_dev_runner_done(d), 1);          /* the reopen may start */

    /* crossover 4: one request below it waits for company while a batch runs */
    d = policy_dev(4);
    gpursa_list_append(&d->pend[1], &pol_req[0]);
    d->busy = 1;
    ck_assert_int_eq(gpursa_dev_runner_done(d), 0);
    d->busy = 0;
    ck_assert_int_eq(gpursa_dev_runner_done(d), 1);
    for (int i = 1; i < 4; i++)
        gpursa_list_append(&d->pend[1], &pol_req[i]);
    ck_assert_int_eq(gpursa_dev_runner_done(d), 0);          /* at the crossover: no hold */
}
END_TEST

/* A runner whose batch is done takes the next batch due itself, on its own
 * runner, as the dispatcher would have given it; a batch not yet due, or a
 * device that is down, it leaves to the dispatcher. */
START_TEST(test_runner_takes_the_next_batch_due_itself)
{
    gpursa_dev *d = policy_dev(1);
    uint64_t wait_ns = (uint64_t)pol_q.cfg.max_wait_us * 1000u;

    pol_req[0].t_enq_ns = gpursa_now_ns();
    gpursa_list_append(&d->pend[1], &pol_req[0]);
    ck_assert_int_eq(gpursa_dev_runner_next(d, &pol_runner[1]), 0);    /* not due yet */
    ck_assert_int_eq(pol_runner[1].filled, 0);
    pol_req[0].t_enq_ns -= 2 * wait_ns;
    d->down = 1;
    ck_assert_int_eq(gpursa_dev_runner_next(d, &pol_runner[1]), 0);    /* the dispatcher's */
    ck_assert_uint_eq(d->pend[1].count, 1);
    d->down = 0;
    ck_assert_int_eq(gpursa_dev_runner_next(d, &pol_runner[1]), 1);
    ck_assert_int_eq(pol_runner[1].filled, 1);                        /* itself */
    ck_assert_int_eq(pol_runner[0].filled, 0);
    ck_assert_int_eq(pol_runner[1].size_index, 1);
    ck_assert_uint_eq(pol_runner[1].reqs.count, 1);
    ck_assert_ptr_eq(pol_runner[1].reqs.head, &pol_req[0]);
    ck_assert_uint_eq(d->pend[1].count, 0);
    ck_assert_int_eq(d->busy, 1);
    /* a full batch goes before its deadline */
    d->full_batch = 2;
    pol_req[1].t_enq_ns = pol_req[2].t_enq_ns = gpursa_now_ns();
    gpursa_list_append(&d->pend[0], &pol_req[1]);
    gpursa_list_append(&d->pend[0], &pol_req[2]);
    ck_assert_int_eq(gpursa_dev_runner_next(d, &pol_runner[0]), 1);
    ck_assert_uint_eq(pol_runner[0].reqs.count, 2);
    ck_assert_int_eq(d->busy, 2);
}
END_TEST

/* Whether the dispatcher holds key size si's batch for company now. */
static int size_held(gpursa_queue *q, int si)
{
    gpursa_qrt *rt = atomic_load(&q->rt);
    gpursa_dev *d;
    int held;

    if (rt == NULL || rt->ndev == 0)
        return 0;
    d = &rt->dev[0];
    pthread_mutex_lock(&d->mu);
    held = d->held[si];
    pthread_mutex_unlock(&d->mu);
    return held;
}

/* Waits (5 s at most: a hang guard, not a timing) until key size si is held. */
static int await_held(gpursa_queue *q, int si)
{
    uint64_t t0 = now_ns();

    while (!size_held(q, si) && now_ns() - t0 < 5000000000ull)
        usleep(1000);
    return size_held(q, si);
}

/* On a device shared through MPS, with every batch going to the device
 * (min_gpu_batch 1), a small batch waits while another batch of the process
 * is on the device, and leaves with what came meanwhile when that one
 * returns: A (1) is on the device (held there by the fake); B (1) reaches
 * its deadline meanwhile and is held, not sent as a batch of its own while
 * a runner is free; C (1) joins it; A returns, and B and C go as one batch
 * of 2. With the plain deadline the device would have had three batches of
 * one. Events, not times: each step waits for the state it needs. */
START_TEST(test_shared_device_small_batch_waits_for_the_one_in_flight)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    async_group g[3];
    pthread_t th[3];

    fake_reset();
    fake.shared = 1;
    q = mkq(&fake_ops, 64, 1000000, 1, 1024);   /* deadline 1 s: held for 8 s at most */
    qk = mkkey(q, &keys[0]);
    atomic_store(&fake.hold_ok, 1);
    for (int i = 0; i < 3; i++) {
        g[i] = (async_group){ q, qk, &keys[0], 1, 0, -1 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, async_group_run, &g[i]), 0);
        if (i == 0)
            ck_assert(await_atomic(&fake.cur_items, 1));          /* A is on the device */
        if (i == 1)
            ck_assert_msg(await_held(q, 0), "B was not held: %d batches on the device",
                          atomic_load(&fake.cur_batches));
        if (i == 2)
            wait_inflight(q, 3);                                  /* C is queued */
    }
    ck_assert_int_eq(atomic_load(&fake.cur_batches), 1);
    atomic_store(&fake.hold_ok, 0);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(g[i].bad, 0);
    }
    ck_assert_int_eq(atomic_load(&fake.nlog), 2);
    ck_assert_int_eq(fake.log[0], 1);
    ck_assert_int_eq(fake.log[1], 2);
    ck_assert_uint_eq(atomic_load(&stats.ops_gpu), 3);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* The size a batch waits for on a shared device: GPURSA_SHARED_COMPANY with
 * device_batches = auto (max_batch if smaller); none on a device of the
 * process's own or with an explicit device_batches. */
START_TEST(test_shared_device_company_size_follows_device_batches)
{
    gpursa_dev *d = policy_dev(1);

    fake_reset();
    pol_q.ops = &fake_ops;
    fake.shared = 1;
    gpursa_dev_set_max_busy(d);
    ck_assert_uint_eq(d->shared_company, GPURSA_SHARED_COMPANY);
    pol_q.cfg.max_batch = 8;
    gpursa_dev_set_max_busy(d);
    ck_assert_uint_eq(d->shared_company, 8);
    pol_q.cfg.device_batches = 2;
    gpursa_dev_set_max_busy(d);
    ck_assert_uint_eq(d->shared_company, 0);
    pol_q.cfg.device_batches = 0;
    fake.shared = 0;
    gpursa_dev_set_max_busy(d);
    ck_assert_uint_eq(d->shared_company, 0);
}
END_TEST

/* Blocking threads that each pause 0-2 ms between operations: arrivals
 * spread out, so a 0.1 ms deadline cuts them into small batches. */
typedef struct {
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k;
    int ops;
    unsigned seed;
    atomic_long *bad;
} paced_arg;

static void *paced_worker(void *varg)
{
    paced_arg *a = varg;

    for (int i = 0; i < a->ops; i++) {
        usleep(rand_r(&a->seed) % 2000u);
        if (!one_op(a->q, a->qk, a->k))
            atomic_fetch_add(a->bad, 1);
    }
    return NULL;
}

/* 48 paced threads, 6 operations each, against a device that takes 20 ms a
 * batch; returns the mean batch on the device. */
static double run_paced_load(unsigned device_batches, int shared)
{
    enum { NTH = 48, OPS = 6 };
    pthread_t th[NTH];
    paced_arg a[NTH];
    atomic_long bad = 0;
    gpursa_queue *q;
    gpursa_queue_key *qk;
    double mean;

    fake_reset();
    fake.shared = shared;
    fake.batch_delay_us = 20000;
    mkq_device_batches = device_batches;
    q = mkq(&fake_ops, 1024, 100, 1, 4096);
    mkq_device_batches = 0;
    qk = mkkey(q, &keys[0]);
    for (int i = 0; i < NTH; i++) {
        a[i] = (paced_arg){ q, qk, &keys[0], OPS, (unsigned)i * 2654435761u + 1, &bad };
        ck_assert_int_eq(pthread_create(&th[i], NULL, paced_worker, &a[i]), 0);
    }
    for (int i = 0; i < NTH; i++)
        pthread_join(th[i], NULL);
    dump_stats(shared ? "paced, shared device" : "paced");
    ck_assert_int_eq(atomic_load(&bad), 0);
    ck_assert_uint_eq(ops_total(), NTH * OPS);
    ck_assert_int_gt(atomic_load(&fake.batches), 0);
    mean = (double)atomic_load(&fake.items) / atomic_load(&fake.batches);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    return mean;
}

/* device_batches = auto: a device of the process's own takes a batch at
 * every deadline (many small ones in flight at once); a device shared
 * through MPS runs two at most, and what arrives meanwhile leaves as one
 * larger batch when one of them returns. */
START_TEST(test_shared_device_keeps_two_batches_in_flight_and_they_grow)
{
    double own = run_paced_load(0, 0);
    int own_max = atomic_load(&fake.max_batches);
    double shared = run_paced_load(0, 1);
    int shared_max = atomic_load(&fake.max_batches);

    ck_assert_msg(own_max > 2, "a device of its own had only %d batches in flight", own_max);
    ck_assert_int_le(shared_max, 2);
    ck_assert_msg(shared >= 2 * own, "mean batch %.1f shared, %.1f on a device of its own",
                  shared, own);
}
END_TEST

/* device_batches = auto on a shared device: a full batch (512 items, or
 * max_batch if fewer) goes at once, however many are in flight; an explicit
 * device_batches = 2 holds it back. 48 blocking threads against batches of
 * at most 8 that take 20 ms each. */
static int run_full_batches(unsigned device_batches)
{
    tkey *k = &keys[0];
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    fake.shared = 1;
    fake.batch_delay_us = 20000;
    mkq_device_batches = device_batches;
    q = mkq(&fake_ops, 8, 100, 1, 4096);
    mkq_device_batches = 0;
    qk = mkkey(q, k);
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 48, 4), 0);
    ck_assert_uint_eq(ops_total(), 48 * 4);
    dump_stats("full batches");
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    return atomic_load(&fake.max_batches);
}

START_TEST(test_shared_device_sends_full_batches_at_once)
{
    int max = run_full_batches(0);

    ck_assert_int_ge(max, 3);
    max = run_full_batches(2);
    ck_assert_int_le(max, 2);
}
END_TEST

/* On a shared device (device_batches = auto) a batch of 512 is full and
 * goes at once; on a device of its own 512 requests wait for the deadline.
 * 512 async requests with a deadline of wait_us: returns the seconds they
 * took, all in one batch. */
static double seconds_for_512(int shared, unsigned wait_us)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    uint64_t t0;
    double dt;

    fake_reset();
    fake.nop = 1;
    fake.shared = shared;
    q = mkq(&fake_ops, 8192, wait_us, 1, 65536);
    qk = mkkey(q, &keys[0]);
    t0 = now_ns();
    ck_assert_int_eq(run_async_fn(q, qk, &keys[0], GPURSA_SHARED_FULL_BATCH, 1, nop_job_fn), 0);
    dt = (double)(now_ns() - t0) * 1e-9;
    ck_assert_uint_eq(ops_total(), GPURSA_SHARED_FULL_BATCH);
    ck_assert_int_eq(atomic_load(&fake.nlog), 1);
    ck_assert_int_eq(fake.log[0], GPURSA_SHARED_FULL_BATCH);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    return dt;
}

/* No upper time bound (how fast 512 jobs run is the machine's business):
 * the shared device's deadline is 10 minutes, so its batch finishes at all
 * only because it is full (were it not, run_async's 30 s guard fails the
 * test); the private device's batch cannot go before its 2 s deadline. */
START_TEST(test_shared_device_batch_of_512_is_full)
{
    double own;

    seconds_for_512(1, 600000000u);
    own = seconds_for_512(0, 2000000u);
    ck_assert_msg(own >= 2.0, "a private device's batch went after %.2f s, before its deadline", own);
}
END_TEST

/* device_batches set: that many batches in flight at most, shared or not. */
START_TEST(test_device_batches_setting_caps_batches_in_flight)
{
    int max;

    run_paced_load(1, 0);
    max = atomic_load(&fake.max_batches);
    ck_assert_int_eq(max, 1);
    run_paced_load(3, 1);
    max = atomic_load(&fake.max_batches);
    ck_assert_int_le(max, 3);
    ck_assert_int_ge(max, 2);
}
END_TEST

START_TEST(test_blocking_callers_wait_when_a_batch_will_form)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];

    fake_reset();
    fake.batch_delay_us = 5000;
    /* A 1 s deadline: a batch is "likely" while arrivals come less than
     * 1 s / 3 apart on average, which holds on any loaded machine (a 50 ms
     * window is too short: threads descheduled on a busy CI host would send
     * too many callers inline). Full batches of 8 never wait for it; only a
     * partial batch at the very end does. */
    q = mkq(&fake_ops, 8, 1000000, 4, 1024);
    qk = mkkey(q, k);
    /* 16 threads back to back: arrivals microseconds apart against the
     * window, so after the first they queue, and batches fill (8) long
     * before the deadline. */
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 16, 20), 0);
    dump_stats("blocking");
    ck_assert_uint_eq(ops_total(), 320);
    ck_assert_msg(atomic_load(&stats.ops_gpu) > 160, "only %llu of 320 on the device",
                  (unsigned long long)atomic_load(&stats.ops_gpu));
    for (int i = 0; i < atomic_load(&fake.nlog) && i < FAKE_MAX_LOG; i++)
        ck_assert_int_ge(fake.log[i], 4);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_crossover_measured_at_startup)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    int x;

    fake_reset();
    /* batch = 20 ms + 50 us/item, CPU 4 ms/op: the device wins from 6
     * items. The fake does no arithmetic here (nop): the queue times batches
     * in wall time, and the fake's own per-item arithmetic, stretched by a
     * loaded machine (a thread with a few % of a core), would add to the
     * per-item cost until the device never wins; the CPU side is spun in
     * CPU time, which load does not stretch. nop answers are not
     * signatures, so the job only counts completions. */
    fake.batch_delay_us = 20000;
    fake.item_delay_us = 50;
    fake.nop = 1;
    cpu_delay_us = 4000;
    q = mkq(&fake_ops, 64, 1000, -1, 1024);
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(gpursa_queue_min_gpu_batch(q, 1024), -1);
    ck_assert_int_eq(run_async_fn(q, qk, &keys[0], 1, 1, nop_job_fn), 0);
    x = gpursa_queue_min_gpu_batch(q, 1024);
    ck_assert_msg(x >= 2 && x <= 12, "measured crossover %d, expected about 5", x);
    /* The device never wins when the CPU is faster than its per-item cost. */
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    cpu_delay_us = 0;
    fake_reset();
    fake.batch_delay_us = 2000;
    fake.item_delay_us = 3000;
    q = mkq(&fake_ops, 64, 1000, -1, 1024);
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(run_async(q, qk, &keys[0], 1, 1), 0);
    ck_assert_int_eq(gpursa_queue_min_gpu_batch(q, 1024), INT_MAX);
    /* no batch can ever reach the crossover: every caller computes inline */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 8, 1), 0);
    ck_assert_uint_eq(atomic_load(&stats.fb_inline), 8);
    ck_assert_uint_eq(atomic_load(&stats.fb_small_batch), 0);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), 8);
    /* a job computed inline never pauses and leaves no fd in its wait
     * context (an application learns of fds only from a pause) */
    {
        ASYNC_JOB *job = NULL;
        ASYNC_WAIT_CTX *ctx = ASYNC_WAIT_CTX_new();
        job_res res = { q, qk, &keys[0], 1, 0, 0 };
        job_arg ja = { &res };
        size_t nfd = 99;
        int ret;

        ck_assert_int_eq(ASYNC_init_thread(1, 0), 1);
        ck_assert_int_eq(ASYNC_start_job(&job, ctx, &ret, job_fn, &ja, sizeof(ja)),
                         ASYNC_FINISH);
        ck_assert_int_eq(res.good, 1);
        ck_assert_int_eq(ASYNC_WAIT_CTX_get_all_fds(ctx, NULL, &nfd), 1);
        ck_assert_uint_eq(nfd, 0);
        ASYNC_WAIT_CTX_free(ctx);
        ASYNC_cleanup_thread();
    }
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* A job alone in its thread (one request in flight, one client), with no
 * batch in sight, yields once and, when no job of another wait context ran
 * meanwhile, computes inline: no hand-off to a CPU worker and back. Jobs of
 * two wait contexts in one thread are multiplexed: they queue (their lone
 * requests reach the CPU workers as small batches, not inline). */
START_TEST(test_async_job_alone_in_its_thread_computes_inline)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    const int ops = 6;
    unsigned long inl, small;

    fake_reset();
    cpu_delay_us = 1000;                 /* 1 ms per CPU op: 2 per 2 ms deadline */
    q = mkq(&fake_ops, 64, 2000, 16, 1024);
    qk = mkkey(q, &keys[0]);
    /* one job: every operation after its first is alone (the first may be
     * too, if its wait context reuses a freed one's address) */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 1, ops), 0);
    inl = atomic_load(&stats.fb_inline);
    small = atomic_load(&stats.fb_small_batch);
    ck_assert_uint_ge(inl, ops - 1);
    ck_assert_uint_eq(inl + small, ops);
    /* two jobs in one thread: each yield lets the other one in, so while
     * both run they queue (once one has finished, the other is alone). How
     * long both run depends on when the CPU workers answer (a loaded or
     * sanitized machine: 5 of 12 queued was seen, 6 or more usually); the
     * first operation of each job always overlaps the other's, and queues. */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 2, ops), 0);
    ck_assert_uint_ge(atomic_load(&stats.fb_small_batch) - small, 2);
    ck_assert_uint_eq(atomic_load(&stats.fb_inline) - inl + atomic_load(&stats.fb_small_batch) - small,
                      2 * ops);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), 3 * ops);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    cpu_delay_us = 0;
}
END_TEST

/* ---- failures ------------------------------------------------------------- */

START_TEST(test_fault_items_recomputed_on_cpu_never_released)
{
    gpursa_queue *q;
    gpursa_queue_key *qk[2];
    tkey *k[2] = { &keys[0], &keys[1] };
    int n = 8 * 100 / scale;

    fake_reset();
    fake.fault_permille = 200;
    q = mkq(&fake_ops, 32, 1000, 1, 1024);
    qk[0] = mkkey(q, k[0]);
    qk[1] = mkkey(q, k[1]);
    ck_assert_int_eq(run_threads(q, qk, k, 2, 8, n / 8), 0);
    ck_assert_uint_eq(ops_total(), (uint64_t)(n / 8 * 8));
    ck_assert(atomic_load(&fake.faults) > 0);
    ck_assert_uint_eq(atomic_load(&stats.faults), (uint64_t)atomic_load(&fake.faults));
    gpursa_queue_key_free(qk[0]);
    gpursa_queue_key_free(qk[1]);
    gpursa_queue_free(q);
}
END_TEST

/* The same through the real CUDA backend (GPURSA_TEST_BACKEND=cuda on a GPU
 * machine; elsewhere nothing runs): with its fault hooks on, every batch's
 * item 0 is left unwritten by the stages around the CRT kernel and item 1 gets a result
 * that is right modulo n but not below it. Every caller still gets the right
 * result (recomputed on the CPU), and the fault counter counts those items:
 * one or two a batch. */
START_TEST(test_cuda_fault_items_recomputed_on_cpu_never_released)
{
#ifdef GPURSA_HAVE_CUDA
    const char *which = getenv("GPURSA_TEST_BACKEND");
    const gpursa_gpu_backend_ops *cuda = gpursa_gpu_backend(GPURSA_BACKEND_CUDA);
    gpursa_queue *q;
    gpursa_queue_key *qk[2];
    tkey *k[2] = { &keys[0], &keys[2] };
    int count = 0;
    long bad;

    if (which == NULL || strcmp(which, "cuda") != 0 || cuda == NULL || cuda->device_count(&count) != GPURSA_GPU_OK
        || count < 1)
        return;
    q = mkq(cuda, 32, 1000, 1, 1024);
    qk[0] = mkkey(q, k[0]);
    qk[1] = mkkey(q, k[1]);
    gpursa_cuda_debug_fault_items(0, 1);
    bad = run_threads(q, qk, k, 2, 8, 50);
    gpursa_cuda_debug_fault_items(-1, -1);
    dump_stats("cuda faults");
    ck_assert_int_eq(bad, 0);
    ck_assert_uint_eq(ops_total(), 8 * 50);
    ck_assert_uint_gt(atomic_load(&stats.batches), 0);
    ck_assert_uint_ge(atomic_load(&stats.faults), atomic_load(&stats.batches));
    ck_assert_uint_le(atomic_load(&stats.faults), 2 * atomic_load(&stats.batches));
    ck_assert_uint_eq(atomic_load(&stats.recomputed), atomic_load(&stats.faults));
    /* hooks off: the same queue runs without faults */
    uint64_t faults = atomic_load(&stats.faults);
    ck_assert_int_eq(run_threads(q, qk, k, 2, 8, 20), 0);
    ck_assert_uint_eq(atomic_load(&stats.faults), faults);
    gpursa_queue_key_free(qk[0]);
    gpursa_queue_key_free(qk[1]);
    gpursa_queue_free(q);
#endif
}
END_TEST

START_TEST(test_failed_batches_complete_on_cpu_exactly_once)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    int per = 100 / scale;

    fake_reset();
    fake.fail_submit_permille = 150;
    fake.fail_wait_permille = 150;
    q = mkq(&fake_ops, 16, 500, 1, 1024);
    qk = mkkey(q, k);
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 16, per), 0);
    ck_assert_int_eq(run_async(q, qk, k, 64, 2), 0);
    ck_assert_uint_eq(ops_total(), (uint64_t)(16 * per + 128));
    ck_assert(atomic_load(&fake.failed_batches) > 0);
    ck_assert(atomic_load(&stats.fb_gpu_error) > 0);
    ck_assert_uint_eq(gpursa_queue_inflight(q), 0);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_device_loss_reopens_with_backoff)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    uint64_t t0, gpu_before;
    int a;

    fake_reset();
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    qk = mkkey(q, k);
    ck_assert_int_eq(run_async(q, qk, k, 8, 1), 0);
    ck_assert_int_eq(atomic_load(&fake.opens), 1);
    /* Lose the device; the first two reopen attempts fail. */
    atomic_store(&fake.lost_next, 1);
    atomic_store(&fake.open_fail, 2);
    ck_assert_int_eq(run_async(q, qk, k, 8, 1), 0);
    t0 = now_ns();
    gpu_before = atomic_load(&stats.ops_gpu);
    while (atomic_load(&fake.opens) < 2 && now_ns() - t0 < 5000000000ull) {
        ck_assert_int_eq(run_async(q, qk, k, 4, 1), 0);
        usleep(2000);
    }
    ck_assert_int_eq(atomic_load(&fake.opens), 2);
    a = atomic_load(&fake.open_attempts);
    ck_assert_int_eq(a, 4);
    /* back-off doubles: 10, 20, 40 ms */
    {
        uint64_t g1 = fake.open_time_ns[2] - fake.open_time_ns[1];
        uint64_t g2 = fake.open_time_ns[3] - fake.open_time_ns[2];

        /* Lower bounds only, and exact: each attempt's time is taken before
         * the failure that sets the next retry time. How late each attempt
         * comes is up to the scheduler (on a loaded machine the dispatcher
         * can wake tens of ms late), so the two gaps are not compared. */
        ck_assert_msg(g1 >= 20000000ull && g2 >= 40000000ull,
                      "back-off did not grow: %llu then %llu ns",
                      (unsigned long long)g1, (unsigned long long)g2);
    }
    ck_assert(atomic_load(&stats.fb_gpu_error) >= 8 || atomic_load(&stats.fb_no_device) > 0);
    /* Back on the device. */
    ck_assert_int_eq(run_async(q, qk, k, 8, 1), 0);
    ck_assert(atomic_load(&stats.ops_gpu) > gpu_before);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
}
END_TEST

/*
 * A lost device's key copies are wiped and freed as soon as the batch that
 * found the loss is done, before its requests are answered from the CPU:
 * not at the reopen, which backs off and here never succeeds. One batch in
 * flight at a time (device_batches 1), so that batch is the device's last.
 * Two keys of different sizes are on the device; both copies go through
 * the backend's key_free for device 0, and the queue keeps no handle. Once
 * the device is back, a key is uploaded again and used.
 */
START_TEST(test_device_loss_frees_its_key_copies_at_once)
{
    gpursa_queue *q;
    gpursa_queue_key *qk, *qk2;
    uint64_t t0, gpu_before;

    fake_reset();
    mkq_device_batches = 1;
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    mkq_device_batches = 0;
    qk = mkkey(q, &keys[0]);
    qk2 = mkkey(q, &keys[2]);
    ck_assert_int_eq(run_async(q, qk, &keys[0], 8, 1), 0);
    ck_assert_int_eq(run_async(q, qk2, &keys[2], 8, 1), 0);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 2);
    ck_assert_int_eq(atomic_load(&fake.keys_freed_on[0]), 0);
    atomic_store(&fake.open_fail, 1000000);
    atomic_store(&fake.lost_next, 1);
    ck_assert_int_eq(run_async(q, qk, &keys[0], 8, 1), 0);
    ck_assert(atomic_load(&fake.failed_batches) > 0);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
    ck_assert_int_eq(atomic_load(&fake.keys_freed_on[0]), 2);
    pthread_mutex_lock(&gpursa_q_global_lock);
    ck_assert_ptr_null(qk->dev[0].gk);
    ck_assert_ptr_null(qk2->dev[0].gk);
    pthread_mutex_unlock(&gpursa_q_global_lock);
    /* still answered (CPU) while down; back on the device once it reopens */
    ck_assert_int_eq(run_async(q, qk2, &keys[2], 4, 1), 0);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
    atomic_store(&fake.open_fail, 0);
    gpu_before = atomic_load(&stats.ops_gpu);
    t0 = now_ns();
    while (atomic_load(&stats.ops_gpu) == gpu_before && now_ns() - t0 < 30000000000ull) {
        ck_assert_int_eq(run_async(q, qk, &keys[0], 8, 1), 0);
        usleep(2000);
    }
    ck_assert(atomic_load(&stats.ops_gpu) > gpu_before);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 1);
    gpursa_queue_key_free(qk);
    gpursa_queue_key_free(qk2);
    gpursa_queue_free(q);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
}
END_TEST

/* The queue's private copy of a key (p, q, dp, dq, qinv and the rest) is in
 * the secure heap that main set up, and the CPU path still works from it. */
START_TEST(test_key_private_copy_in_secure_heap)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    const gpursa_rsa_key_material *km;

    ck_assert(CRYPTO_secure_malloc_initialized());
    fake_reset();
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    for (int i = 0; i < 3; i++) {
        qk = mkkey(q, &keys[i]);
        km = &qk->km;
        ck_assert(CRYPTO_secure_allocated(qk->mat));
        ck_assert(CRYPTO_secure_allocated(km->p) && CRYPTO_secure_allocated(km->q));
        ck_assert(CRYPTO_secure_allocated(km->dp) && CRYPTO_secure_allocated(km->dq));
        ck_assert(CRYPTO_secure_allocated(km->qinv));
        ck_assert(CRYPTO_secure_allocated(km->qinv + km->qinv_len - 1));
        ck_assert_int_eq(memcmp(km->p, keys[i].km.p, km->p_len), 0);
        ck_assert_int_eq(run_async(q, qk, &keys[i], 4, 1), 0);
        gpursa_queue_key_free(qk);
    }
    gpursa_queue_free(q);
}
END_TEST

static void *one_op_thread(void *arg)
{
    void **a = arg;

    return one_op(a[0], a[1], a[2]) ? arg : NULL;
}

/*
 * The interleaving that once made the queue reopen a lost device three
 * times within microseconds: batch A is on the device, batch B finds the
 * device lost (down, reopen in 10 ms), then A comes back fine. A's success
 * says nothing about the device now and must not reset the back-off: the
 * reopens still wait 10, then 20, then 40 ms.
 */
START_TEST(test_batch_finishing_after_loss_keeps_backoff)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    void *arg[3];
    void *res = NULL;
    pthread_t th;
    uint64_t g1, g2, gpu_before;

    fake_reset();
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    qk = mkkey(q, k);
    arg[0] = q;
    arg[1] = qk;
    arg[2] = k;
    ck_assert(one_op(q, qk, k));
    ck_assert_int_eq(atomic_load(&fake.opens), 1);
    /* A: submitted, held in batch_wait */
    atomic_store(&fake.hold_ok, 1);
    ck_assert_int_eq(pthread_create(&th, NULL, one_op_thread, arg), 0);
    ck_assert(await_atomic(&fake.cur_batches, 1));
    /* B: the device is lost (this caller's answer comes from the CPU once
     * the device is down); the first two reopen attempts fail */
    atomic_store(&fake.open_fail, 2);
    atomic_store(&fake.lost_next, 1);
    ck_assert(one_op(q, qk, k));
    ck_assert_int_eq(atomic_load(&fake.failed_batches), 1);
    ck_assert_uint_eq(atomic_load(&stats.fb_gpu_error), 1);
    /* A comes back fine, after the loss */
    atomic_store(&fake.hold_ok, 0);
    pthread_join(th, &res);
    ck_assert_ptr_eq(res, arg);
    ck_assert_int_eq(atomic_load(&fake.batches), 2);
    gpu_before = atomic_load(&stats.ops_gpu);
    ck_assert(await_atomic(&fake.opens, 2));
    ck_assert_int_eq(atomic_load(&fake.open_attempts), 4);
    g1 = fake.open_time_ns[2] - fake.open_time_ns[1];
    g2 = fake.open_time_ns[3] - fake.open_time_ns[2];
    /* lower bounds: a slow machine only adds */
    ck_assert_msg(g1 >= 20000000ull && g2 >= 40000000ull,
                  "reopen attempts %llu then %llu ns apart, not 20 then 40 ms",
                  (unsigned long long)g1, (unsigned long long)g2);
    /* back on the device */
    ck_assert(one_op(q, qk, k));
    ck_assert(atomic_load(&stats.ops_gpu) > gpu_before);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
}
END_TEST

START_TEST(test_key_refused_by_backend_goes_to_cpu)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    fake.refuse_keys = 1;
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(gpursa_queue_key_gpu_bits(qk), 1024);   /* the size is fine */
    /* the first batch finds out (its requests still answered, on the CPU) ... */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 4, 1), 0);
    /* ... and from then on the key skips the queue */
    ck_assert_int_eq(run_async(q, qk, &keys[0], 4, 1), 0);
    ck_assert_uint_eq(atomic_load(&stats.fb_unsupported_key), 8);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), 8);
    ck_assert_int_eq(atomic_load(&fake.batches), 0);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_no_device_all_on_cpu)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    fake.device_count = 0;
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    qk = mkkey(q, &keys[0]);
    ck_assert(one_op(q, qk, &keys[0]));
    ck_assert_int_eq(run_async(q, qk, &keys[0], 4, 1), 0);
    ck_assert_uint_eq(atomic_load(&stats.fb_no_device), 5);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), 5);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_unsupported_key_goes_to_cpu)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    gpursa_rsa_key_material km = keys[0].km;

    fake_reset();
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    km.p = NULL;                 /* no CRT parts: the GPU path cannot take it */
    km.p_len = 0;
    ck_assert_int_eq(gpursa_queue_key_new(q, &km, test_cpu, &keys[0], &qk), 1);
    ck_assert_int_eq(gpursa_queue_key_gpu_bits(qk), 0);
    ck_assert(one_op(q, qk, &keys[0]));
    ck_assert_uint_eq(atomic_load(&stats.fb_unsupported_key), 1);
    ck_assert_int_eq(atomic_load(&fake.open_attempts), 0);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* A paused job whose wait context the application freed can never be
 * resumed nor discarded (OpenSSL has no call for either): it stays reachable
 * from here, as it would from an application's connection table, so leak
 * checkers (LSan with gcc or clang) do not report its stack by design. */
ASYNC_JOB *volatile gpursa_test_abandoned_job;   /* volatile: the store must stay */

/* ---- async wait-context callbacks ------------------------------------------ */

static int note_ready(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
    return 1;
}

START_TEST(test_async_callback_mode_resumes_jobs)
{
    enum { N = 32 };
    gpursa_queue *q;
    gpursa_queue_key *qk;
    ASYNC_JOB *job[N] = { 0 };
    ASYNC_WAIT_CTX *ctx[N];
    job_res res[N];
    atomic_int ready[N];
    int fin[N] = { 0 }, done = 0;
    uint64_t t0 = now_ns();

    fake_reset();
    fake.batch_delay_us = 2000;
    q = mkq(&fake_ops, 16, 500, 1, 1024);
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(ASYNC_init_thread(N, 0), 1);
    for (int i = 0; i < N; i++) {
        ctx[i] = ASYNC_WAIT_CTX_new();
        atomic_init(&ready[i], 0);
        ck_assert_int_eq(ASYNC_WAIT_CTX_set_callback(ctx[i], note_ready, &ready[i]), 1);
        res[i] = (job_res){ q, qk, &keys[0], 3, 0, 0 };
    }
    for (int i = 0; i < N; i++) {
        int ret, rc;
        job_arg ja = { &res[i] };

        rc = ASYNC_start_job(&job[i], ctx[i], &ret, job_fn, &ja, sizeof(ja));
        ck_assert_int_eq(rc, ASYNC_PAUSE);
    }
    /* Resume only what a callback announced. */
    while (done < N) {
        for (int i = 0; i < N; i++) {
            int ret, rc;

            if (fin[i] || atomic_load(&ready[i]) == 0)
                continue;
            atomic_store(&ready[i], 0);
            rc = ASYNC_start_job(&job[i], ctx[i], &ret, job_fn, NULL, 0);
            if (rc == ASYNC_FINISH) {
                fin[i] = 1;
                done++;
            } else if (rc != ASYNC_PAUSE) {
                ck_abort_msg("resume failed: %d", rc);
            }
        }
        if (now_ns() - t0 > 30000000000ull)
            ck_abort_msg("jobs never called back");
        usleep(100);
    }
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(res[i].good, 3);
        ASYNC_WAIT_CTX_free(ctx[i]);
    }
    ASYNC_cleanup_thread();
    ck_assert_uint_eq(ops_total(), 3 * N);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_async_wait_ctx_freed_while_paused_is_never_signalled)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    ASYNC_JOB *job = NULL;
    ASYNC_WAIT_CTX *ctx;
    job_res res;
    job_arg ja = { &res };
    atomic_int calls;
    OSSL_ASYNC_FD fd;
    size_t nfd = 1;
    int ret;

    fake_reset();
    fake.batch_delay_us = 200000;            /* the answer comes 200 ms later */
    q = mkq(&fake_ops, 16, 500, 1, 1024);
    qk = mkkey(q, &keys[0]);
    atomic_init(&calls, 0);
    res = (job_res){ q, qk, &keys[0], 1, 0, 0 };
    ck_assert_int_eq(ASYNC_init_thread(1, 0), 1);
    ctx = ASYNC_WAIT_CTX_new();
    ck_assert_int_eq(ASYNC_WAIT_CTX_set_callback(ctx, note_ready, &calls), 1);
    ck_assert_int_eq(ASYNC_start_job(&job, ctx, &ret, job_fn, &ja, sizeof(ja)), ASYNC_PAUSE);
    gpursa_test_abandoned_job = job;   /* never finished, by design (see there) */
    ck_assert_int_eq(ASYNC_WAIT_CTX_get_all_fds(ctx, &fd, &nfd), 1);
    /* The application gives up on the job: its wait context goes. */
    ASYNC_WAIT_CTX_free(ctx);
    /* The fd goes with the wait context even though the job is never resumed
     * (OpenSSL cannot resume a job whose wait context was freed): HAProxy
     * abandons such jobs for every client that leaves mid-handshake, and an
     * fd kept per abandoned job would exhaust its fd table. */
    ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
    usleep(600000);
    ck_assert_int_eq(atomic_load(&calls), 0);         /* never called back */
    ck_assert_uint_eq(ops_total(), 1);                /* answered once, to nobody */
    ck_assert_uint_eq(gpursa_queue_inflight(q), 0);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* ---- stress, async, fork ---------------------------------------------------- */

START_TEST(test_stress_64_threads_every_result_checked)
{
    gpursa_queue *q;
    gpursa_queue_key *qk[3];
    tkey *k[3] = { &keys[0], &keys[1], &keys[2] };
    int per = 2000 / scale;

    fake_reset();
    fake.fault_permille = 5;
    q = mkq(&fake_ops, 256, 1000, 1, 4096);
    for (int i = 0; i < 3; i++)
        qk[i] = mkkey(q, k[i]);
    /* mostly 1024-bit; the 2048-bit key rides along in its own size class */
    ck_assert_int_eq(run_threads(q, qk, k, 2, 62, per), 0);
    ck_assert_int_eq(run_threads(q, &qk[2], &k[2], 1, 2, per / 20 + 1), 0);
    ck_assert_uint_eq(ops_total(), (uint64_t)(62 * per + 2 * (per / 20 + 1)));
    ck_assert(atomic_load(&stats.batches) > 0);
    for (int i = 0; i < 3; i++)
        gpursa_queue_key_free(qk[i]);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_async_1024_jobs_one_thread)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    int ops = scale > 1 ? 1 : 4;

    fake_reset();
    q = mkq(&fake_ops, 256, 20000, 1, 65536);
    qk = mkkey(q, &keys[0]);
    ck_assert_int_eq(run_async(q, qk, &keys[0], 1024, ops), 0);
    ck_assert_uint_eq(ops_total(), (uint64_t)(1024 * ops));
    /* no fault was injected: every blinding pair was right */
    ck_assert_uint_eq(atomic_load(&stats.faults), 0);
    /* 1024 requests at once were split into batches of at most max_batch */
    for (int i = 0; i < atomic_load(&fake.nlog) && i < FAKE_MAX_LOG; i++)
        ck_assert_int_le(fake.log[i], 256);
    /* the jobs formed real batches */
    ck_assert_msg(atomic_load(&stats.batch_items) > 4 * atomic_load(&stats.batches),
                  "mean batch %llu/%llu", (unsigned long long)atomic_load(&stats.batch_items),
                  (unsigned long long)atomic_load(&stats.batches));
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

static int child_signs(gpursa_queue *q, gpursa_queue_key *qk, tkey *k)
{
    tkey *kk = k;

    if (run_threads(q, &qk, &kk, 1, 4, 25) != 0)
        return 1;
    if (run_async(q, qk, k, 16, 2) != 0)
        return 2;
    /* the child runs its own dispatcher on its own device handle */
    if (atomic_load(&fake.opens) < 1 || gpursa_queue_devices(q) != 1)
        return 3;
    return 0;
}

START_TEST(test_fork_children_sign_parent_keeps_working)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    pid_t pid[3];

    fake_reset();
    q = mkq(&fake_ops, 16, 500, 1, 1024);
    qk = mkkey(q, k);
    /* A fork before any operation: nothing was opened in the parent. */
    pid[0] = fork();
    if (pid[0] == 0)
        _exit(child_signs(q, qk, k));
    {
        int st;

        ck_assert_int_eq(waitpid(pid[0], &st, 0), pid[0]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: %d", st);
    }
    ck_assert_int_eq(atomic_load(&fake.open_attempts), 0);
#ifdef __SANITIZE_THREAD__
    /* ThreadSanitizer cannot start threads in the child of a threaded
     * process; the rest runs in the ordinary build. */
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
    return;
#endif
    /* The parent uses the queue, then children fork with its threads live. */
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 4, 10), 0);
    for (int i = 1; i < 3; i++) {
        pid[i] = fork();
        if (pid[i] == 0)
            _exit(child_signs(q, qk, k));
    }
    ck_assert_int_eq(run_async(q, qk, k, 32, 2), 0);
    for (int i = 1; i < 3; i++) {
        int st;

        ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d failed: %d", i, st);
    }
    ck_assert_int_eq(atomic_load(&fake.opens), 1);
    ck_assert_uint_eq(ops_total(), 40 + 64);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_two_devices_share_the_work)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];

    fake_reset();
    fake.device_count = 2;
    fake.batch_delay_us = 5000;
    q = mkq(&fake_ops, 16, 500, 1, 4096);
    qk = mkkey(q, k);
    ck_assert_int_eq(run_threads(q, &qk, &k, 1, 32, 10), 0);
    dump_stats("two devices");
    ck_assert_int_eq(gpursa_queue_devices(q), 2);
    ck_assert_int_eq(atomic_load(&fake.opens), 2);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 2);   /* uploaded to each */
    ck_assert_uint_eq(ops_total(), 320);
    gpursa_queue_key_free(qk);
    ck_assert_int_eq(atomic_load(&fake.keys_live), 0);
    gpursa_queue_free(q);
}
END_TEST

/* Jobs that only time the queue: no result check (the fake does no math). */
static int nop_job_fn(void *varg)
{
    job_res *r = ((job_arg *)varg)->res;
    unsigned char in[512], out[512];

    memset(in, 0x11, sizeof(in));
    for (int i = 0; i < r->ops; i++)
        r->good += gpursa_queue_private(r->q, r->qk, in, out, r->k->len) == 1;
    return 1;
}

static double cpu_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The CPU the queue spends per operation at RSA-2048 with async callers:
 * blinding (random r, batch inversion), dispatch, pause/resume and wake-up,
 * for the whole process (the application's job switching included). */
START_TEST(test_cpu_cost_per_op_rsa2048_async)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[2];
    int njobs = 256, ops = 80 / scale + 1;
    double c0, c1, t0;
    uint64_t w0;

    fake_reset();
    fake.nop = 1;
    q = mkq(&fake_ops, 256, 200, 1, 65536);
    qk = mkkey(q, k);
    ck_assert_int_eq(run_async_fn(q, qk, k, 4, 1, nop_job_fn), 0);   /* start-up */
    c0 = cpu_seconds();
    w0 = now_ns();
    ck_assert_int_eq(run_async_fn(q, qk, k, njobs, ops, nop_job_fn), 0);
    c1 = cpu_seconds();
    t0 = (double)(now_ns() - w0) * 1e-9;
    fprintf(stderr, "# queue CPU per op (RSA-2048, %d async jobs, %d ops): %.2f us "
            "CPU, %.2f us wall, mean batch %.1f\n", njobs, njobs * ops,
            (c1 - c0) * 1e6 / (njobs * ops), t0 * 1e6 / (njobs * ops),
            (double)atomic_load(&stats.batch_items) / (double)atomic_load(&stats.batches));
    /* Generous bound for slow CI machines and sanitizers; the figure is
     * printed for the record. */
    ck_assert_msg((c1 - c0) * 1e6 / (njobs * ops) < 200.0 * scale, "queue CPU cost too high");
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* ---- the real host backend ----------------------------------------------------- */

START_TEST(test_host_backend_threads_and_async)
{
    const gpursa_gpu_backend_ops *host = gpursa_gpu_backend(GPURSA_BACKEND_HOST);
    gpursa_queue *q;
    gpursa_queue_key *qk[2];
    tkey *k[2] = { &keys[0], &keys[2] };

    if (host == NULL)
        return;                  /* not built: nothing to test */
    q = mkq(host, 32, 2000, -1, 1024);      /* host: -1 means every batch */
    qk[0] = mkkey(q, k[0]);
    qk[1] = mkkey(q, k[1]);
    ck_assert_int_eq(run_threads(q, qk, k, 2, 4, 6), 0);
    ck_assert_int_eq(run_async(q, qk[0], k[0], 32, 1), 0);
    dump_stats("host");
    ck_assert_uint_eq(ops_total(), 24 + 32);
    ck_assert(atomic_load(&stats.ops_host) > 0);
    ck_assert_uint_eq(atomic_load(&stats.faults), 0);
    gpursa_queue_key_free(qk[0]);
    gpursa_queue_key_free(qk[1]);
    gpursa_queue_free(q);
}
END_TEST

/* ---- blinding pairs ------------------------------------------------------------ */

static void tkey_free(tkey *k)
{
    BIGNUM *b[8] = { k->n, k->e, k->d, k->p, k->q, k->dp, k->dq, k->qinv };

    for (int i = 0; i < 8; i++)
        BN_clear_free(b[i]);
    memset(k, 0, sizeof(*k));
}

/* Each runner keeps pairs for GPURSA_POOL_KEYS keys; with more keys than
 * that in play, pools are evicted and refilled, and batches mix keys. The
 * fake backend unblinds with the rinv it is given, so a pair from the wrong
 * key or a wrong inverse would come back as a fault (and be counted). */
START_TEST(test_blinding_pools_serve_more_keys_than_they_hold)
{
    enum { NK = GPURSA_POOL_KEYS + 2 };
    tkey extra[NK - 2];
    tkey *k[NK];
    gpursa_queue_key *qk[NK];
    gpursa_queue *q;
    int per = 120 / scale + 1;

    memset(extra, 0, sizeof(extra));     /* tkey_make fills NULL BIGNUMs */
    for (int i = 0; i < NK - 2; i++)
        tkey_make(&extra[i], 1024);
    k[0] = &keys[0];
    k[1] = &keys[1];
    for (int i = 2; i < NK; i++)
        k[i] = &extra[i - 2];
    fake_reset();
    fake.batch_delay_us = 300;
    q = mkq(&fake_ops, 64, 1000, 1, 4096);
    for (int i = 0; i < NK; i++)
        qk[i] = mkkey(q, k[i]);
    ck_assert_int_eq(run_threads(q, qk, k, NK, 16, per), 0);
    dump_stats("pools");
    ck_assert_uint_eq(ops_total(), (uint64_t)(16 * per));
    ck_assert_uint_eq(atomic_load(&stats.faults), 0);
    ck_assert(atomic_load(&stats.ops_gpu) > 0);
    for (int i = 0; i < NK; i++)
        gpursa_queue_key_free(qk[i]);
    gpursa_queue_free(q);
    for (int i = 0; i < NK - 2; i++)
        tkey_free(&extra[i]);
}
END_TEST

/* ---- the benchmark-only instant backend (bench/) --------------------------------- */

/* Straight through the ops table: inputs repeated inside a batch and across
 * batches (cache hits) and new ones (computed, checked, stored) all come
 * back right. */
START_TEST(test_instant_backend_cached_answers_are_right)
{
    const gpursa_gpu_backend_ops *ops = gpursa_bench_instant_backend();
    static const int pick[6] = { 0, 1, 0, 2, 1, 0 };
    tkey *k = &keys[2];
    gpursa_gpu_device *dev = NULL;
    gpursa_gpu_key *gk = NULL;
    gpursa_gpu_batch *b = NULL;
    unsigned char in[3][512], out[6][512], r[512] = { 1 }, rinv[512] = { 1 };
    gpursa_gpu_item it[6];

    ck_assert_int_eq(ops->device_open(0, NULL, &dev), GPURSA_GPU_OK);
    ck_assert_int_eq(ops->key_upload(dev, &k->km, &gk), GPURSA_GPU_OK);
    ck_assert_int_eq(ops->batch_new(dev, 2048, 8, &b), GPURSA_GPU_OK);
    for (int i = 0; i < 3; i++)
        random_input(k, in[i]);
    for (int round = 0; round < 2; round++) {
        memset(out, 0, sizeof(out));
        for (int i = 0; i < 6; i++)
            it[i] = (gpursa_gpu_item){ gk, in[pick[i]], r, rinv, out[i], GPURSA_ITEM_PENDING };
        ck_assert_int_eq(ops->batch_submit(b, it, 6), GPURSA_GPU_OK);
        ck_assert_int_eq(ops->batch_wait(b), GPURSA_GPU_OK);
        for (int i = 0; i < 6; i++) {
            ck_assert_int_eq(it[i].status, GPURSA_ITEM_OK);
            ck_assert_msg(result_ok(k, in[pick[i]], out[i]), "round %d item %d", round, i);
        }
    }
    ops->batch_free(b);
    ops->key_free(dev, gk);
    ops->device_close(dev);
}
END_TEST

/* Through the queue, from async jobs, every result checked. */
START_TEST(test_instant_backend_through_the_queue)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[2];

    q = mkq(gpursa_bench_instant_backend(), 64, 2000, 1, 4096);
    qk = mkkey(q, k);
    ck_assert_int_eq(run_async(q, qk, k, 32, 2), 0);
    ck_assert_uint_eq(ops_total(), 64);
    ck_assert(atomic_load(&stats.ops_gpu) > 0);
    ck_assert_uint_eq(atomic_load(&stats.faults), 0);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

/* cpu_fallback = never: what would have gone to the CPU (a lone blocking
 * caller inline, a batch below min_gpu_batch) goes to the device. */
START_TEST(test_cpu_fallback_never_keeps_small_batches_on_the_device)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;

    fake_reset();
    mkq_fallback = GPURSA_CPU_FALLBACK_NEVER;
    q = mkq(&fake_ops, 64, 2000, 5, 1024);
    mkq_fallback = GPURSA_CPU_FALLBACK_ALWAYS;
    qk = mkkey(q, &keys[0]);
    ck_assert(one_op(q, qk, &keys[0]));
    ck_assert_int_eq(run_async(q, qk, &keys[0], 2, 1), 0);
    ck_assert_uint_eq(atomic_load(&stats.fb_inline), 0);
    ck_assert_uint_eq(atomic_load(&stats.fb_small_batch), 0);
    ck_assert_uint_eq(atomic_load(&stats.ops_cpu), 0);
    ck_assert_int_ge(atomic_load(&fake.batches), 2);
    ck_assert_uint_eq(atomic_load(&stats.ops_gpu) + atomic_load(&stats.ops_host), 3);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_cpu_stat_line_parsed)
{
    uint64_t busy = 0, total = 0;

    /* user nice system idle iowait irq softirq steal (guest columns ignored) */
    ck_assert_int_eq(gpursa_cpu_stat_parse("cpu  100 2 30 500 7 1 2 3 9 9\n", &busy, &total), 1);
    ck_assert_uint_eq(total, 100 + 2 + 30 + 500 + 7 + 1 + 2 + 3);
    ck_assert_uint_eq(busy, total - 500 - 7);
    ck_assert_int_eq(gpursa_cpu_stat_parse("cpu 10 0 5 85\n", &busy, &total), 1);
    ck_assert_uint_eq(total, 100);
    ck_assert_uint_eq(busy, 15);
    ck_assert_int_eq(gpursa_cpu_stat_parse("cpu0 10 0 5 85\n", &busy, &total), 0);
    ck_assert_int_eq(gpursa_cpu_stat_parse("intr 12345\n", &busy, &total), 0);
    ck_assert_int_eq(gpursa_cpu_stat_parse("cpu 10 0 5\n", &busy, &total), 0);
    ck_assert_int_eq(gpursa_cpu_stat_parse("cpu x y z w\n", &busy, &total), 0);
    ck_assert_int_eq(gpursa_cpu_stat_parse(NULL, &busy, &total), 0);
}
END_TEST

START_TEST(test_backend_cpu_means_no_queue)
{
    gpursa_config cfg;
    gpursa_queue *q = (gpursa_queue *)&cfg;

    gpursa_config_defaults(&cfg);
    cfg.backend = GPURSA_CFG_BACKEND_CPU;
    ck_assert_int_eq(gpursa_queue_new(&cfg, &stats, NULL, &q), 1);
    ck_assert_ptr_null(q);
}
END_TEST

/* The configuration table: every default parses with its key's own parser
 * (gpursa_config_defaults applies them); names are unique, lower case, and
 * short enough for the environment variable buffer of the provider; a value
 * no key takes leaves the configuration as it was and says what a value must
 * be. */
START_TEST(test_config_table_defaults_parse_and_bad_values_change_nothing)
{
    gpursa_config cfg, before;
    const gpursa_config_key *k, *o;
    char why[256];
    int n = 0;

    ck_assert_int_eq(gpursa_config_defaults(&cfg), 1);
    for (k = gpursa_config_keys; k->name != NULL; k++, n++) {
        ck_assert_msg(k->name[0] != '\0' && strspn(k->name, "abcdefghijklmnopqrstuvwxyz0123456789_")
                      == strlen(k->name) && strlen(k->name) < 56, "key \"%s\"", k->name);
        for (o = gpursa_config_keys; o != k; o++)
            ck_assert_str_ne(o->name, k->name);
        ck_assert_ptr_eq(gpursa_config_key_find(k->name), k);
        ck_assert_ptr_nonnull(k->meaning);
        memcpy(&before, &cfg, sizeof(cfg));
        ck_assert_msg(k->set(&cfg, k->dflt, why, sizeof(why)) == 1, "%s: default \"%s\"",
                      k->name, k->dflt);
        ck_assert_int_eq(memcmp(&before, &cfg, sizeof(cfg)), 0);
        why[0] = '\0';
        ck_assert_msg(k->set(&cfg, "\x01", why, sizeof(why)) == 0, "%s took \\x01", k->name);
        ck_assert_int_eq(memcmp(&before, &cfg, sizeof(cfg)), 0);
        ck_assert_msg(why[0] != '\0', "%s: no expectation", k->name);
    }
    ck_assert_int_ge(n, 13);
    ck_assert_ptr_null(gpursa_config_key_find("MAX_BATCH"));
    ck_assert_ptr_null(gpursa_config_key_find("nonsense"));
    /* the messages name what a value must be */
    ck_assert_int_eq(gpursa_config_key_find("variant")->set(&cfg, "turbo", why, sizeof(why)), 0);
    ck_assert_str_eq(why, "auto, imad, xmad, fast or coop");
    ck_assert_int_eq(gpursa_config_key_find("max_batch")->set(&cfg, "0", why, sizeof(why)), 0);
    ck_assert_str_eq(why, "an integer in 1..1048576");
    ck_assert_int_eq(gpursa_config_key_find("device_batches")->set(&cfg, "x", why, sizeof(why)), 0);
    ck_assert_str_eq(why, "auto or an integer in 1..16");
    ck_assert_int_eq(gpursa_config_key_find("cuda_fp64")->set(&cfg, "2", why, sizeof(why)), 0);
    ck_assert_str_eq(why, "auto, 0 or 1");
    /* the gpu/ keys land where the devices open from */
    ck_assert_int_eq(gpursa_config_key_find("host_threads")->set(&cfg, "5", why, sizeof(why)), 1);
    ck_assert_int_eq(gpursa_config_key_find("cuda_fp64")->set(&cfg, "0", why, sizeof(why)), 1);
    ck_assert_int_eq(gpursa_config_key_find("cuda_debug")->set(&cfg, "1", why, sizeof(why)), 1);
    ck_assert_int_eq(gpursa_config_key_find("variant")->set(&cfg, "coop", why, sizeof(why)), 1);
    ck_assert_int_eq(cfg.gpu.host_threads, 5);
    ck_assert_int_eq(cfg.gpu.cuda_fp64, GPURSA_FP64_OFF);
    ck_assert_int_eq(cfg.gpu.cuda_debug, 1);
    ck_assert_int_eq(cfg.gpu.variant, GPURSA_VARIANT_COOP);
    ck_assert_int_eq(gpursa_config_key_find("cuda_fp64")->set(&cfg, "1", why, sizeof(why)), 1);
    ck_assert_int_eq(cfg.gpu.cuda_fp64, GPURSA_FP64_ON);
    ck_assert_int_eq(gpursa_config_key_find("host_threads")->set(&cfg, "auto", why, sizeof(why)), 1);
    ck_assert_int_eq(cfg.gpu.host_threads, 0);
    /* the defaults: what a zeroed gpursa_gpu_open_params means */
    ck_assert_int_eq(gpursa_config_defaults(&cfg), 1);
    ck_assert_int_eq(cfg.gpu.variant, GPURSA_VARIANT_AUTO);
    ck_assert_int_eq(cfg.gpu.host_threads, 0);
    ck_assert_int_eq(cfg.gpu.cuda_fp64, GPURSA_FP64_AUTO);
    ck_assert_int_eq(cfg.gpu.cuda_debug, 0);
}
END_TEST

/* ---- live metrics (queue/gpursa_metrics.c) ------------------------------ */

static char metrics_dir[64];

/* A metrics writer for q's stats: its %p file, in a fresh folder, is written
 * at start and then only after an hour, so the tests read the text itself. */
static gpursa_metrics *mkmetrics(gpursa_queue *q)
{
    gpursa_config cfg;
    gpursa_metrics *m = NULL;

    gpursa_config_defaults(&cfg);
    strcpy(metrics_dir, "/tmp/gpursa-qmetrics-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(metrics_dir));
    snprintf(cfg.metrics_file, sizeof(cfg.metrics_file), "%s/m-%%p.prom", metrics_dir);
    cfg.metrics_interval_ms = GPURSA_METRICS_INTERVAL_MAX_MS;
    ck_assert_int_eq(gpursa_metrics_start(&cfg, &stats, q, &m), 1);
    return m;
}

/* Stops it: its %p file goes, so the folder is empty. */
static void metrics_free(gpursa_metrics *m)
{
    gpursa_metrics_stop(m);
    ck_assert_int_eq(rmdir(metrics_dir), 0);
}

/* The value of the sample whose name and labels are series; -1 if none. */
static long long metric(gpursa_metrics *m, const char *series)
{
    static char buf[1 << 18];
    char key[256];
    const char *p;

    ck_assert_uint_lt(gpursa_metrics_format(m, buf, sizeof(buf)), sizeof(buf));
    snprintf(key, sizeof(key), "\n%s ", series);
    if ((p = strstr(buf, key)) == NULL)
        return -1;
    return strtoll(p + strlen(key), NULL, 10);
}

START_TEST(test_metrics_match_counters_and_batch_sizes)
{
    gpursa_queue *q;
    gpursa_queue_key *qk[2];
    tkey *k[2] = { &keys[0], &keys[2] };
    gpursa_metrics *m;
    long long cum = 0, b1024 = 0, b2048 = 0;
    char series[128];
    int n = 8 * 100 / scale, nb;

    fake_reset();
    fake.fault_permille = 100;
    q = mkq(&fake_ops, 32, 1000, 1, 1024);
    qk[0] = mkkey(q, k[0]);
    qk[1] = mkkey(q, k[1]);
    m = mkmetrics(q);
    ck_assert_int_eq(run_threads(q, qk, k, 2, 8, n / 8), 0);
    for (int p = 0; p < 4; p++) {
        static const char *const paths[] = { "gpu", "host", "cpu", "inline" };

        snprintf(series, sizeof(series), "gpursa_operations_total{path=\"%s\",key_bits=\"1024\"}",
                 paths[p]);
        b1024 += metric(m, series);
        snprintf(series, sizeof(series), "gpursa_operations_total{path=\"%s\",key_bits=\"2048\"}",
                 paths[p]);
        b2048 += metric(m, series);
    }
    ck_assert(b1024 > 0 && b2048 > 0);
    ck_assert_int_eq(b1024 + b2048, n / 8 * 8);
    ck_assert_int_eq(metric(m, "gpursa_operations_total{path=\"gpu\",key_bits=\"1024\"}")
                     + metric(m, "gpursa_operations_total{path=\"gpu\",key_bits=\"2048\"}"),
                     (long long)atomic_load(&stats.ops_gpu));
    /* every faulty result counted, and recomputed on the CPU */
    ck_assert(atomic_load(&fake.faults) > 0);
    ck_assert_int_eq(metric(m, "gpursa_faults_detected_total"), atomic_load(&fake.faults));
    ck_assert_int_eq(metric(m, "gpursa_faults_recomputed_total"), atomic_load(&fake.faults));
    /* the batch sizes: the backend's own log of every batch, cumulated */
    nb = atomic_load(&fake.batches);
    ck_assert_int_eq(metric(m, "gpursa_batches_total"), nb);
    for (unsigned i = 0; i <= 20; i++) {
        long long want = 0;

        for (int j = 0; j < nb; j++)
            want += fake.log[j] <= (1 << i);
        snprintf(series, sizeof(series), "gpursa_batch_size_bucket{le=\"%u\"}", 1u << i);
        ck_assert_int_eq(metric(m, series), want);
        cum = want;
    }
    ck_assert_int_eq(metric(m, "gpursa_batch_size_bucket{le=\"+Inf\"}"), cum);
    ck_assert_int_eq(metric(m, "gpursa_batch_size_count"), nb);
    ck_assert_int_eq(metric(m, "gpursa_batch_size_sum"), atomic_load(&fake.items));
    ck_assert_int_eq(metric(m, "gpursa_requests_in_flight"), 0);
    ck_assert_int_eq(metric(m, "gpursa_info{version=\"" PACKAGE_VERSION "\",backend=\"fake\"}"), 1);
    metrics_free(m);
    gpursa_queue_key_free(qk[0]);
    gpursa_queue_key_free(qk[1]);
    gpursa_queue_free(q);
}
END_TEST

START_TEST(test_metrics_device_down_then_reopened)
{
    gpursa_queue *q;
    gpursa_queue_key *qk;
    tkey *k = &keys[0];
    gpursa_metrics *m;
    uint64_t t0;

    fake_reset();
    q = mkq(&fake_ops, 8, 500, 1, 1024);
    qk = mkkey(q, k);
    m = mkmetrics(q);
    ck_assert_int_eq(metric(m, "gpursa_device_up{device=\"0\"}"), -1);   /* not started */
    ck_assert_int_eq(run_async(q, qk, k, 8, 1), 0);
    ck_assert_int_eq(metric(m, "gpursa_device_up{device=\"0\"}"), 1);
    ck_assert_int_eq(metric(m, "gpursa_device_reopens_total{device=\"0\"}"), 0);
    /* lost, and it does not come back while reopening fails */
    atomic_store(&fake.open_fail, 1000000);
    atomic_store(&fake.lost_next, 1);
    ck_assert_int_eq(run_async(q, qk, k, 8, 1), 0);
    ck_assert_int_eq(metric(m, "gpursa_device_up{device=\"0\"}"), 0);
    ck_assert_int_eq(metric(m, "gpursa_device_reopens_total{device=\"0\"}"), 0);
    atomic_store(&fake.open_fail, 0);
    t0 = now_ns();
    while (atomic_load(&fake.opens) < 2 && now_ns() - t0 < 30000000000ull) {
        ck_assert_int_eq(run_async(q, qk, k, 4, 1), 0);
        usleep(2000);
    }
    ck_assert_int_eq(atomic_load(&fake.opens), 2);
    ck_assert_int_eq(metric(m, "gpursa_device_up{device=\"0\"}"), 1);
    ck_assert_int_eq(metric(m, "gpursa_device_reopens_total{device=\"0\"}"), 1);
    metrics_free(m);
    gpursa_queue_key_free(qk);
    gpursa_queue_free(q);
}
END_TEST

static Suite *queue_suite(void)
{
    Suite *s = suite_create("queue");
    TCase *tc;

    tc = tcase_create("flush");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lazy_start_opens_nothing_until_first_op);
    tcase_add_test(tc, test_device_opens_with_the_configured_gpu_keys);
    tcase_add_test(tc, test_size_flush_full_batch_goes_before_deadline);
    tcase_add_test(tc, test_deadline_flush_partial_batch_after_max_wait);
    tcase_add_test(tc, test_backpressure_bounds_inflight_blocking_threads);
    tcase_add_test(tc, test_backpressure_async_jobs_pause_and_retry);
    tcase_add_test(tc, test_crossover_small_batches_run_on_cpu_workers);
    tcase_add_test(tc, test_small_batch_waits_for_company_while_device_runs);
    tcase_add_test(tc, test_runner_done_wakes_dispatcher_only_when_it_has_work);
    tcase_add_test(tc, test_runner_takes_the_next_batch_due_itself);
    tcase_add_test(tc, test_shared_device_small_batch_waits_for_the_one_in_flight);
    tcase_add_test(tc, test_shared_device_company_size_follows_device_batches);
    tcase_add_test(tc, test_shared_device_keeps_two_batches_in_flight_and_they_grow);
    tcase_add_test(tc, test_device_batches_setting_caps_batches_in_flight);
    tcase_add_test(tc, test_shared_device_sends_full_batches_at_once);
    tcase_add_test(tc, test_shared_device_batch_of_512_is_full);
    tcase_add_test(tc, test_blocking_callers_wait_when_a_batch_will_form);
    tcase_add_test(tc, test_crossover_measured_at_startup);
    tcase_add_test(tc, test_backend_cpu_means_no_queue);
    tcase_add_test(tc, test_cpu_fallback_never_keeps_small_batches_on_the_device);
    tcase_add_test(tc, test_cpu_stat_line_parsed);
    suite_add_tcase(s, tc);

    tc = tcase_create("config");
    tcase_add_test(tc, test_config_table_defaults_parse_and_bad_values_change_nothing);
    suite_add_tcase(s, tc);

    tc = tcase_create("failures");
    tcase_add_test(tc, test_device_loss_frees_its_key_copies_at_once);
    tcase_add_test(tc, test_key_private_copy_in_secure_heap);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fault_items_recomputed_on_cpu_never_released);
    tcase_add_test(tc, test_cuda_fault_items_recomputed_on_cpu_never_released);
    tcase_add_test(tc, test_failed_batches_complete_on_cpu_exactly_once);
    tcase_add_test(tc, test_device_loss_reopens_with_backoff);
    tcase_add_test(tc, test_batch_finishing_after_loss_keeps_backoff);
    tcase_add_test(tc, test_key_refused_by_backend_goes_to_cpu);
    tcase_add_test(tc, test_no_device_all_on_cpu);
    tcase_add_test(tc, test_unsupported_key_goes_to_cpu);
    suite_add_tcase(s, tc);

    tc = tcase_create("metrics");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_metrics_match_counters_and_batch_sizes);
    tcase_add_test(tc, test_metrics_device_down_then_reopened);
    suite_add_tcase(s, tc);

    tc = tcase_create("async");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_async_callback_mode_resumes_jobs);
    tcase_add_test(tc, test_async_wait_ctx_freed_while_paused_is_never_signalled);
    tcase_add_test(tc, test_async_job_alone_in_its_thread_computes_inline);
    suite_add_tcase(s, tc);

    tc = tcase_create("stress");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_stress_64_threads_every_result_checked);
    tcase_add_test(tc, test_async_1024_jobs_one_thread);
    tcase_add_test(tc, test_fork_children_sign_parent_keeps_working);
    tcase_add_test(tc, test_two_devices_share_the_work);
    suite_add_tcase(s, tc);

    tc = tcase_create("perf");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_cpu_cost_per_op_rsa2048_async);
    suite_add_tcase(s, tc);

    tc = tcase_create("host");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_host_backend_threads_and_async);
    tcase_add_test(tc, test_blinding_pools_serve_more_keys_than_they_hold);
    tcase_add_test(tc, test_instant_backend_cached_answers_are_right);
    tcase_add_test(tc, test_instant_backend_through_the_queue);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    if (getenv("GPURSA_TEST_SCALE") != NULL && atoi(getenv("GPURSA_TEST_SCALE")) > 0)
        scale = atoi(getenv("GPURSA_TEST_SCALE"));
    /* The queue keeps its private key copies in the secure heap, as any
     * application that sets one up (test_key_private_copy_in_secure_heap). */
    if (!CRYPTO_secure_malloc_init(1 << 20, 16))
        fprintf(stderr, "# no secure heap: its test will fail\n");
    tkey_make(&keys[0], 1024);
    tkey_make(&keys[1], 1024);
    tkey_make(&keys[2], 2048);
    sr = srunner_create(queue_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
