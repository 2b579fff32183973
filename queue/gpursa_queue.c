/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The queue's front: creation (cheap, opens nothing), the lazy per-process
 * runtime (restarted in a child after fork), and the private operation as
 * blocking threads and async jobs call it.
 */
#define _GNU_SOURCE               /* pthread_setname_np */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <openssl/async.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

/* Serialises runtime start-up and the key registries. fork() takes it in the
 * prepare handler, so a child never inherits it locked. */
pthread_mutex_t gpursa_q_global_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint gpursa_fork_gen;
static pthread_once_t gpursa_atfork_once = PTHREAD_ONCE_INIT;

static void gpursa_atfork_prepare(void)
{
    pthread_mutex_lock(&gpursa_q_global_lock);
}

static void gpursa_atfork_parent(void)
{
    pthread_mutex_unlock(&gpursa_q_global_lock);
}

static void gpursa_atfork_child(void)
{
    /* The parent's dispatchers do not exist here: every queue sees a new
     * generation and starts its own runtime on the next operation. */
    atomic_fetch_add(&gpursa_fork_gen, 1);
    pthread_mutex_unlock(&gpursa_q_global_lock);
}

static void gpursa_atfork_register(void)
{
    pthread_atfork(gpursa_atfork_prepare, gpursa_atfork_parent, gpursa_atfork_child);
}

/* Runtimes with threads, under the global lock (see gpursa_qrt.live_next). */
static gpursa_qrt *gpursa_live_rts;
static pthread_once_t gpursa_atexit_once = PTHREAD_ONCE_INIT;

void gpursa_thread_name(const char *name)
{
    pthread_setname_np(pthread_self(), name);
}

void gpursa_thread_state_check(gpursa_qrt *rt, unsigned *seen)
{
    unsigned gen = atomic_load(&rt->tstate_gen);

    if (gen == *seen)
        return;
    *seen = gen;
    OPENSSL_thread_stop();
    pthread_mutex_lock(&rt->tstate_mu);
    rt->tstate_done++;
    pthread_cond_broadcast(&rt->tstate_cond);
    pthread_mutex_unlock(&rt->tstate_mu);
}

/* Asks every runner and CPU worker of rt to drop its OpenSSL state and
 * waits (bounded: exit must never hang) until they did. */
static void gpursa_rt_release_thread_state(gpursa_qrt *rt)
{
    unsigned want, threads = 0;
    struct timespec until;

    for (int i = 0; i < rt->ndev; i++)
        threads += (unsigned)rt->dev[i].nrunners;
    threads += (unsigned)rt->pool.nthreads;
    pthread_mutex_lock(&rt->tstate_mu);
    want = rt->tstate_done + threads;
    pthread_mutex_unlock(&rt->tstate_mu);
    atomic_fetch_add(&rt->tstate_gen, 1);
    /* Under each waiter's own lock, so none misses the request. */
    for (int i = 0; i < rt->ndev; i++) {
        gpursa_dev *d = &rt->dev[i];

        pthread_mutex_lock(&d->mu);
        for (int j = 0; j < d->nrunners; j++)
            pthread_cond_signal(&d->runners[j].cond);
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_lock(&rt->pool.mu);
    pthread_cond_broadcast(&rt->pool.cond);
    pthread_mutex_unlock(&rt->pool.mu);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&rt->tstate_mu);
    while (rt->tstate_done < want)
        if (pthread_cond_timedwait(&rt->tstate_cond, &rt->tstate_mu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&rt->tstate_mu);
}

/* Runs at exit() before OPENSSL_cleanup() (registered after OpenSSL's own
 * handler, so earlier in the LIFO order), or at dlclose() of the module,
 * when no runtime is left. Only this process's runtimes: a parent's (after
 * fork) has no threads here. At dlclose it runs inside the loader's lock
 * (glibc's __cxa_finalize), so it must find nothing to wait for there:
 * OpenSSL unloads a provider only after its teardown freed the queue, which
 * joined the threads and unlisted the runtime. */
static void gpursa_q_atexit(void *unused)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    /* A thread that called exit() while holding the lock must not hang us. */
    if (pthread_mutex_timedlock(&gpursa_q_global_lock, &until) != 0)
        return;
    for (gpursa_qrt *rt = gpursa_live_rts; rt != NULL; rt = rt->live_next)
        if (rt->gen == gpursa_q_fork_gen() && rt->ndev > 0)
            gpursa_rt_release_thread_state(rt);
    pthread_mutex_unlock(&gpursa_q_global_lock);
}

/* The C++ ABI's exit registration, tied to this module by its hidden
 * __dso_handle: glibc runs it at the module's dlclose() (then never at exit)
 * or at exit() if the module is still loaded. Not atexit(): glibc's is the
 * same call, linked into each module, but a sanitizer runtime linked first
 * (ThreadSanitizer) interposes its own atexit, which drops the module, and
 * the handler of an unloaded gpursa.so would then be called unmapped at
 * exit. TSan's __cxa_atexit passes the handle on. */
extern void *__dso_handle __attribute__((visibility("hidden")));
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void gpursa_atexit_register(void)
{
    __cxa_atexit(gpursa_q_atexit, NULL, &__dso_handle);
}

unsigned gpursa_q_fork_gen(void)
{
    return atomic_load(&gpursa_fork_gen);
}

uint64_t gpursa_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gpursa_log_line(const char *head, const char *body)
{
    char line[1024];
    const char *p = line;
    int n = snprintf(line, sizeof(line) - 1, "%s%s", head, body);
    size_t left = n < 0 ? 0 : (size_t)n < sizeof(line) - 1 ? (size_t)n : sizeof(line) - 2;

    line[left++] = '\n';
    fflush(stderr);
    while (left > 0) {
        ssize_t k = write(STDERR_FILENO, p, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        p += k;
        left -= (size_t)k;
    }
}

void gpursa_log_vline(const char *head, const char *fmt, va_list ap)
{
    char body[1024];

    vsnprintf(body, sizeof(body), fmt, ap);
    gpursa_log_line(head, body);
}

void gpursa_log_cfg(const gpursa_config *cfg, int level, const char *fmt, ...)
{
    static const char *const heads[] = { "gpursa[error]: ", "gpursa[warn]: ", "gpursa[info]: ",
                                         "gpursa[debug]: " };
    va_list ap;

    if (level > cfg->log_level)
        return;
    va_start(ap, fmt);
    gpursa_log_vline(heads[level < 0 ? 0 : level > 3 ? 3 : level], fmt, ap);
    va_end(ap);
}

void gpursa_list_append(gpursa_req_list *l, gpursa_req *r)
{
    r->next = NULL;
    if (l->tail != NULL)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
    l->count++;
}

void gpursa_list_splice(gpursa_req_list *dst, gpursa_req_list *src)
{
    if (src->head == NULL)
        return;
    if (dst->tail != NULL)
        dst->tail->next = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    dst->count += src->count;
    src->head = src->tail = NULL;
    src->count = 0;
}

static void gpursa_futex_wake(atomic_int *addr)
{
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits until *addr != 0; timeout_ns 0 = no timeout per sleep. */
static void gpursa_futex_wait_done(atomic_int *addr, long timeout_ns)
{
    struct timespec ts = { 0, timeout_ns };

    while (atomic_load_explicit(addr, memory_order_acquire) == 0)
        syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, 0, timeout_ns ? &ts : NULL, NULL, 0);
}

static void gpursa_inflight_release(gpursa_qrt *rt, unsigned n)
{
    atomic_fetch_sub(&rt->inflight, n);
    if (atomic_load(&rt->bp_waiters) > 0) {
        pthread_mutex_lock(&rt->bp_mu);
        pthread_cond_broadcast(&rt->bp_cond);
        pthread_mutex_unlock(&rt->bp_mu);
    }
}

static int gpursa_inflight_try(gpursa_qrt *rt)
{
    unsigned max = rt->q->cfg.max_inflight;
    unsigned cur = atomic_load(&rt->inflight);

    if (max == 0) {                      /* unbounded */
        atomic_fetch_add(&rt->inflight, 1);
        return 1;
    }
    while (cur < max)
        if (atomic_compare_exchange_weak(&rt->inflight, &cur, cur + 1))
            return 1;
    return 0;
}

static void gpursa_inflight_wait(gpursa_qrt *rt)
{
    if (gpursa_inflight_try(rt))
        return;
    pthread_mutex_lock(&rt->bp_mu);
    atomic_fetch_add(&rt->bp_waiters, 1);
    while (!gpursa_inflight_try(rt))
        pthread_cond_wait(&rt->bp_cond, &rt->bp_mu);
    atomic_fetch_sub(&rt->bp_waiters, 1);
    pthread_mutex_unlock(&rt->bp_mu);
}

static void gpursa_req_claim(gpursa_req *r)
{
    if (atomic_exchange(&r->completed, 1) != 0)
        abort();                         /* a second answer is a bug: never hide it */
}

/* Publishes the answer. The wake to signal is returned (read first: once
 * done is visible the caller may return and its stack, the request, is
 * gone); a blocking caller is woken here. */
static gpursa_wake *gpursa_req_publish(gpursa_req *r, int ok)
{
    gpursa_wake *w = r->wake;

    atomic_store_explicit(&r->done, ok ? 1 : 2, memory_order_release);
    if (w == NULL)
        gpursa_futex_wake(&r->done);
    return w;
}

void gpursa_req_complete(gpursa_qrt *rt, gpursa_req *r, int ok)
{
    gpursa_dev *d = r->dev;
    gpursa_wake *w;

    gpursa_req_claim(r);
    if (!ok)
        OPENSSL_cleanse(r->out, r->key->len);
    /* Counted out before the caller can see its answer: a caller that
     * returns finds the in-flight count without itself. */
    if (d != NULL)
        atomic_fetch_sub(&d->load, 1);
    gpursa_inflight_release(rt, 1);
    if ((w = gpursa_req_publish(r, ok)) != NULL) {
        gpursa_wake_signal(w);
        gpursa_wake_unref(w);
    }
}

void gpursa_req_complete_ok(gpursa_qrt *rt, gpursa_dev *d, gpursa_req **rv, size_t n,
                            gpursa_wake **wv)
{
    gpursa_wake *prev = NULL;

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        gpursa_req_claim(rv[i]);
    /* The shared counters once per batch, before any answer is visible. */
    atomic_fetch_sub(&d->load, (long)n);
    gpursa_inflight_release(rt, (unsigned)n);
    for (size_t i = 0; i < n; i++)
        wv[i] = gpursa_req_publish(rv[i], 1);
    /* One eventfd write per wait context and batch. Each request holds its
     * own reference, so a wake stays alive while a later entry names it. */
    for (size_t i = 0; i < n; i++) {
        if (wv[i] == NULL)
            continue;
        if (wv[i] != prev)
            gpursa_wake_signal(wv[i]);
        prev = wv[i];
        gpursa_wake_unref(wv[i]);
    }
}

void gpursa_req_cpu(gpursa_qrt *rt, gpursa_req *r)
{
    gpursa_queue_key *qk = r->key;
    int ok = qk->cpu(qk->cpu_arg, r->in, r->out, qk->len);
    gpursa_stages *stages = rt->q->stats->stages;

    if (ok)
        gpursa_stats_ops(rt->q->stats, GPURSA_PATH_CPU, qk->len, 1);
    if (stages != NULL && r->t_enq_ns != 0)   /* before the answer: r may go then */
        gpursa_stages_add(stages, GPURSA_STAGE_CPU,
                          (gpursa_now_ns() - r->t_enq_ns) / 1000u, 1);
    gpursa_req_complete(rt, r, ok);
}

static int gpursa_cpu_inline(gpursa_queue *q, gpursa_queue_key *qk,
                             const unsigned char *in, unsigned char *out,
                             atomic_uint_fast64_t *reason)
{
    int ok;

    atomic_fetch_add_explicit(reason, 1, memory_order_relaxed);
    ok = qk->cpu(qk->cpu_arg, in, out, qk->len);
    if (ok)
        gpursa_stats_ops(q->stats, GPURSA_PATH_INLINE, qk->len, 1);
    return ok;
}

static int gpursa_parse_devices(const char *spec, int count, int *idx)
{
    int n = 0;
    const char *p = spec;

    if (spec[0] == '\0' || strcmp(spec, "all") == 0) {
        for (int i = 0; i < count && i < GPURSA_MAX_DEVICES; i++)
            idx[n++] = i;
        return n;
    }
    while (*p != '\0' && n < GPURSA_MAX_DEVICES) {
        char *end;
        long v = strtol(p, &end, 10);

        if (end == p)
            break;
        if (v >= 0 && v < count) {
            int dup = 0;

            for (int i = 0; i < n; i++)
                dup |= idx[i] == (int)v;
            if (!dup)
                idx[n++] = (int)v;
        }
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return n;
}

static int gpursa_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* Called with the global lock held. */
static gpursa_qrt *gpursa_rt_start(gpursa_queue *q, unsigned gen)
{
    gpursa_qrt *rt = calloc(1, sizeof(*rt));
    int count = 0, idx[GPURSA_MAX_DEVICES], nidx, ncpu = gpursa_ncpu();
    int host = q->ops == gpursa_gpu_backend(GPURSA_BACKEND_HOST);
    int nrunners;

    if (rt == NULL)
        return NULL;
    rt->q = q;
    rt->gen = gen;
    rt->counts_host = host;
    pthread_mutex_init(&rt->bp_mu, NULL);
    pthread_cond_init(&rt->bp_cond, NULL);
    pthread_mutex_init(&rt->tstate_mu, NULL);
    pthread_cond_init(&rt->tstate_cond, NULL);
    pthread_once(&gpursa_atexit_once, gpursa_atexit_register);
    if (q->ops->device_count(&count) != GPURSA_GPU_OK)
        count = 0;
    nidx = gpursa_parse_devices(q->cfg.devices, count, idx);
    /* The host backend computes a batch inside batch_submit, spread over
     * its own threads (one per core): two runners keep a batch forming
     * while one computes. On a GPU, batches in flight overlap copy-in,
     * compute, copy-out and each runner's host work (blinding, checks,
     * completions): sixteen, since a COOP kernel takes about the same time
     * for 1 to 2,048 RSA-2048 items, so concurrent small batches cost the
     * GPU nothing, and with max_wait_us 500 a busy process flushes a batch
     * every millisecond or so, more than eight runners keep up with
     * (doc/design.md, "What the queue's settings rest on"). */
    nrunners = host ? 2 : GPURSA_MAX_DEVICE_BATCHES;
    for (int i = 0; i < nidx; i++)
        if (gpursa_dev_start(rt, &rt->dev[rt->ndev], idx[i], nrunners))
            rt->ndev++;
    if (rt->ndev > 0 && !gpursa_cpu_pool_start(rt, ncpu < 2 ? 2 : ncpu > 64 ? 64 : ncpu)) {
        atomic_store(&rt->stop, 1);
        for (int i = 0; i < rt->ndev; i++)
            gpursa_dev_stop(&rt->dev[i]);
        rt->ndev = 0;
    }
    if (rt->ndev == 0)
        gpursa_log_q(q, q->cfg.backend == GPURSA_CFG_BACKEND_AUTO ? 2 : 1,
                     "%s backend: no usable device (%d found, devices=%s): using the CPU",
                     q->ops->name, count, q->cfg.devices);
    else
        gpursa_log_q(q, 2, "%s backend: %d device(s), %d batches in flight each, max_batch %u, "
                     "max_wait_us %u, max_inflight %u", q->ops->name, rt->ndev, nrunners,
                     q->cfg.max_batch, q->cfg.max_wait_us, q->cfg.max_inflight);
    rt->live_next = gpursa_live_rts;
    gpursa_live_rts = rt;
    return rt;
}

static void gpursa_rt_stop(gpursa_qrt *rt)
{
    pthread_mutex_lock(&gpursa_q_global_lock);
    for (gpursa_qrt **p = &gpursa_live_rts; *p != NULL; p = &(*p)->live_next) {
        if (*p == rt) {
            *p = rt->live_next;
            break;
        }
    }
    pthread_mutex_unlock(&gpursa_q_global_lock);
    atomic_store(&rt->stop, 1);
    for (int i = 0; i < rt->ndev; i++)
        gpursa_dev_stop(&rt->dev[i]);
    if (rt->ndev > 0)
        gpursa_cpu_pool_stop(rt);
    pthread_cond_destroy(&rt->bp_cond);
    pthread_mutex_destroy(&rt->bp_mu);
    pthread_cond_destroy(&rt->tstate_cond);
    pthread_mutex_destroy(&rt->tstate_mu);
    free(rt);
}

static gpursa_qrt *gpursa_rt_get(gpursa_queue *q)
{
    gpursa_qrt *rt = atomic_load_explicit(&q->rt, memory_order_acquire);
    unsigned gen = gpursa_q_fork_gen();

    if (rt != NULL && rt->gen == gen)
        return rt;
    pthread_mutex_lock(&gpursa_q_global_lock);
    gen = gpursa_q_fork_gen();
    rt = atomic_load(&q->rt);
    /* A runtime of another generation is the parent's: abandoned, never
     * touched (its locks may be held by threads that do not exist here). */
    if (rt == NULL || rt->gen != gen) {
        rt = gpursa_rt_start(q, gen);
        atomic_store_explicit(&q->rt, rt, memory_order_release);
    }
    pthread_mutex_unlock(&gpursa_q_global_lock);
    return rt;
}

int gpursa_queue_new(const gpursa_config *cfg, gpursa_stats *stats,
                     const gpursa_gpu_backend_ops *ops, gpursa_queue **out)
{
    gpursa_queue *q;

    *out = NULL;
    pthread_once(&gpursa_atfork_once, gpursa_atfork_register);
    if (ops == NULL) {
        switch (cfg->backend) {
        case GPURSA_CFG_BACKEND_CPU:
            return 1;
        case GPURSA_CFG_BACKEND_HOST:
            ops = gpursa_gpu_backend(GPURSA_BACKEND_HOST);
            break;
        case GPURSA_CFG_BACKEND_CUDA:
        case GPURSA_CFG_BACKEND_AUTO:
        default:
            ops = gpursa_gpu_backend(GPURSA_BACKEND_CUDA);
            if (ops == NULL && cfg->backend == GPURSA_CFG_BACKEND_CUDA && cfg->log_level >= 0)
                gpursa_log_line("gpursa[error]: ", "backend=cuda, but gpursa was built without CUDA: using the CPU");
            if (ops == NULL)
                return 1;
            break;
        }
        if (ops == NULL)
            return 0;
    }
    if ((q = calloc(1, sizeof(*q))) == NULL)
        return 0;
    q->cfg = *cfg;
    if (q->cfg.max_batch == 0)
        q->cfg.max_batch = 1;
    q->stats = stats;
    q->ops = ops;
    atomic_init(&q->rt, NULL);
    if (stats == NULL) {
        free(q);
        return 0;
    }
    *out = q;
    return 1;
}

void gpursa_queue_free(gpursa_queue *q)
{
    gpursa_qrt *rt;

    if (q == NULL)
        return;
    /* Detached first, so a key freed meanwhile never looks into it. */
    pthread_mutex_lock(&gpursa_q_global_lock);
    rt = atomic_exchange(&q->rt, NULL);
    pthread_mutex_unlock(&gpursa_q_global_lock);
    /* Stopping frees the GPU copies of registered keys; it takes the global
     * lock itself, so it runs outside it. */
    if (rt != NULL && rt->gen == gpursa_q_fork_gen())
        gpursa_rt_stop(rt);
    pthread_mutex_lock(&gpursa_q_global_lock);
    for (gpursa_queue_key *k = q->keys; k != NULL; k = k->next)
        k->q = NULL;                     /* orphaned: their free only wipes host memory */
    pthread_mutex_unlock(&gpursa_q_global_lock);
    free(q);
}

static gpursa_dev *gpursa_pick_device(gpursa_qrt *rt)
{
    gpursa_dev *best = &rt->dev[0];
    long best_load = atomic_load_explicit(&best->load, memory_order_relaxed);

    for (int i = 1; i < rt->ndev; i++) {
        long l = atomic_load_explicit(&rt->dev[i].load, memory_order_relaxed);

        if (l < best_load) {
            best = &rt->dev[i];
            best_load = l;
        }
    }
    return best;
}

/* Which wait context this thread's previous operation ran in, and how many
 * times that changed: a thread multiplexing jobs (openssl speed -async_jobs
 * N, a busy HAProxy thread) changes wait context all the time. */
static _Thread_local const ASYNC_WAIT_CTX *gpursa_tl_ctx;
static _Thread_local unsigned long gpursa_tl_switches;

/* 1 when the current job runs in the same wait context as this thread's
 * previous operation. A wait context freed and another allocated at its
 * address counts as the same, which is right: they ran one after the other. */
static int gpursa_job_same_ctx(void)
{
    ASYNC_JOB *job = ASYNC_get_current_job();
    const ASYNC_WAIT_CTX *ctx = job != NULL ? ASYNC_get_wait_ctx(job) : NULL;

    if (ctx == gpursa_tl_ctx)
        return 1;
    gpursa_tl_ctx = ctx;
    gpursa_tl_switches++;
    return 0;
}

static int gpursa_private_async(gpursa_qrt *rt, gpursa_dev *d, gpursa_req *r)
{
    gpursa_wake *w;
    int same = gpursa_job_same_ctx(), counted = 0;

    /* A job always queues, unlike a blocking caller: only its pause lets the
     * application start the other jobs whose requests make a batch. Had it
     * computed inline whenever no batch seemed likely, a single-threaded
     * application (openssl speed -async_jobs N) would run every job inline,
     * one after another, and never show the queue a second request. A lone
     * request instead reaches the CPU workers after a short grace (see
     * gpursa_pend_deadline). Where the device can never win (crossover
     * "never"), queueing gains nothing: compute inline, without a pause. The
     * arrival feeds the rate estimate either way (for a queued request in
     * the same lock as the enqueue: one lock per operation). */
    if (atomic_load(&d->xover[r->key->size_index]) == INT_MAX
        || (w = gpursa_wake_for_current_job()) == NULL) {
        gpursa_dev_decide(d, r->key->size_index);
        return 0;                        /* caller computes inline */
    }
    /* The job's own reference: it drains the fd after every resume, even if
     * the application freed the wait context meanwhile. */
    gpursa_wake_ref(w);
    /* A job in the same wait context as this thread's last operation, with
     * no batch in sight, may be alone (one request in flight, one client):
     * then the hand-off to a CPU worker and back only adds latency. It
     * yields once (fd signalled, so the application resumes it at once); if
     * no job of another wait context ran an operation meanwhile, it is
     * alone and computes inline. */
    if (same && !gpursa_dev_decide(d, r->key->size_index)) {
        unsigned long before = gpursa_tl_switches;

        counted = 1;
        gpursa_wake_signal(w);
        if (ASYNC_pause_job()) {
            gpursa_wake_drain(w);
            if (gpursa_tl_switches == before) {
                gpursa_wake_unref(w);
                return 0;                /* alone: caller computes inline */
            }
        }
    }
    /* Back-pressure: let the application run other jobs and come back. */
    if (!gpursa_inflight_try(rt)) {
        atomic_fetch_add(&rt->bp_paused, 1);
        do {
            gpursa_wake_signal(w);
            if (!ASYNC_pause_job()) {
                gpursa_inflight_wait(rt);
                break;
            }
            gpursa_wake_drain(w);
        } while (!gpursa_inflight_try(rt));
        atomic_fetch_sub(&rt->bp_paused, 1);
    }
    r->wake = w;
    gpursa_wake_ref(w);                  /* the request's, for the completion */
    gpursa_dev_submit(d, r, counted ? GPURSA_SUBMIT_QUEUE : GPURSA_SUBMIT_ARRIVAL);
    /* Resumes can be early (another operation of the job's wait context, the
     * application polling): drain, then check the done flag. Pause at least
     * once even when the answer is already there (the fd is signalled then):
     * applications learn of our fd only from a pause (SSL_ERROR_WANT_ASYNC),
     * and HAProxy removes every fd of the wait context from its poller when
     * the connection closes, aborting on one it was never told of. */
    do {
        if (!ASYNC_pause_job()) {
            gpursa_futex_wait_done(&r->done, 200000);
            break;
        }
        gpursa_wake_drain(w);
    } while (atomic_load_explicit(&r->done, memory_order_acquire) == 0);
    gpursa_wake_unref(w);
    return 1;
}

int gpursa_queue_private(gpursa_queue *q, gpursa_queue_key *qk,
                         const unsigned char *in, unsigned char *out, size_t len)
{
    gpursa_qrt *rt;
    gpursa_dev *d;
    gpursa_req r;

    if (q == NULL || qk == NULL || in == NULL || out == NULL || len != qk->len)
        return 0;
    if (qk->bits == 0 || atomic_load_explicit(&qk->refused, memory_order_relaxed))
        return gpursa_cpu_inline(q, qk, in, out, &q->stats->fb_unsupported_key);
    rt = gpursa_rt_get(q);
    if (rt == NULL || rt->ndev == 0)
        return gpursa_cpu_inline(q, qk, in, out, &q->stats->fb_no_device);
    d = gpursa_pick_device(rt);

    memset(&r, 0, sizeof(r));
    r.key = qk;
    r.in = in;
    r.out = out;
    r.dev = d;
    atomic_init(&r.completed, 0);
    atomic_init(&r.done, 0);

    if (ASYNC_get_current_job() != NULL) {
        if (!gpursa_private_async(rt, d, &r))
            return gpursa_cpu_inline(q, qk, in, out, &q->stats->fb_inline);
    } else {
        /* A blocking thread waits only if a batch will form in time. */
        gpursa_inflight_wait(rt);
        if (!gpursa_dev_submit(d, &r, GPURSA_SUBMIT_DECIDE)) {
            gpursa_inflight_release(rt, 1);
            return gpursa_cpu_inline(q, qk, in, out, &q->stats->fb_inline);
        }
        gpursa_futex_wait_done(&r.done, 0);
    }
    return atomic_load_explicit(&r.done, memory_order_acquire) == 1;
}

int gpursa_queue_min_gpu_batch(gpursa_queue *q, int modulus_bits)
{
    gpursa_qrt *rt;
    int si = gpursa_size_index(modulus_bits);

    if (q == NULL || si < 0)
        return -1;
    rt = atomic_load_explicit(&q->rt, memory_order_acquire);
    if (rt == NULL || rt->gen != gpursa_q_fork_gen() || rt->ndev == 0)
        return q->cfg.min_gpu_batch;
    {
        int v = atomic_load(&rt->dev[0].xover[si]);

        return v < 0 ? -1 : v;
    }
}

unsigned gpursa_queue_inflight(gpursa_queue *q)
{
    gpursa_qrt *rt = q != NULL ? atomic_load_explicit(&q->rt, memory_order_acquire) : NULL;

    return rt != NULL && rt->gen == gpursa_q_fork_gen() ? atomic_load(&rt->inflight) : 0;
}

/* This process's runtime, or NULL (none started yet, or the parent's). */
static gpursa_qrt *gpursa_rt_current(gpursa_queue *q)
{
    gpursa_qrt *rt = q != NULL ? atomic_load_explicit(&q->rt, memory_order_acquire) : NULL;

    return rt != NULL && rt->gen == gpursa_q_fork_gen() ? rt : NULL;
}

int gpursa_queue_devices(gpursa_queue *q)
{
    gpursa_qrt *rt = gpursa_rt_current(q);

    return rt != NULL ? rt->ndev : 0;
}

unsigned gpursa_queue_waiting(gpursa_queue *q)
{
    gpursa_qrt *rt = gpursa_rt_current(q);

    return rt != NULL ? (unsigned)atomic_load(&rt->bp_waiters) + atomic_load(&rt->bp_paused) : 0;
}

int gpursa_queue_device_state(gpursa_queue *q, int i, int *index, int *up, uint64_t *reopens)
{
    gpursa_qrt *rt = gpursa_rt_current(q);
    uint64_t opens;
    gpursa_dev *d;

    if (rt == NULL || i < 0 || i >= rt->ndev)
        return 0;
    d = &rt->dev[i];
    *index = d->index;
    pthread_mutex_lock(&d->mu);
    *up = !d->down;
    pthread_mutex_unlock(&d->mu);
    opens = atomic_load(&d->opens);      /* the first open counts 1 */
    *reopens = opens > 0 ? opens - 1 : 0;
    return 1;
}

const char *gpursa_queue_backend_name(gpursa_queue *q)
{
    return q != NULL ? q->ops->name : "cpu";
}
