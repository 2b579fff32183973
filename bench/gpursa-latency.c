/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa-latency: sign latency and throughput through EVP and the gpursa
 * provider, the way an application sees them.
 *
 *   gpursa-latency [--threads T] [--async-jobs A] [--bits B] [--key PEM]
 *                  [--seconds S] [--warmup S] [--modules DIR]
 *                  [--provider gpursa|default] [--compare-default | --no-compare]
 *                  [--peak | --load F[,F...] [--peak-rate R] | --rate R[,R...] | --inflight N]
 *                  [--arrivals poisson|fixed] [--check | --verify-every K]
 *                  [--csv FILE] [--label TEXT] [--quiet] [--timeline FILE]
 *
 * Each of T threads runs A OpenSSL ASYNC jobs (ASYNC_start_job, then the wait
 * context's fds in epoll, as `openssl speed -async_jobs` does with select);
 * each job signs one SHA-256 digest of random data with EVP_PKEY_sign
 * (RSA PKCS#1 v1.5) through a library context holding default + gpursa, key
 * imported into gpursa, property query "?provider=gpursa".
 *
 * Modes (one or more runs, each one CSV row):
 *   --peak         closed loop: all T*A jobs busy; finds the peak rate.
 *   --load F,...   open loop at F times the peak rate (--peak-rate R, else a
 *                  closed-loop run measures it first and is reported too).
 *   --rate R,...   open loop at R operations/s.
 *   --inflight N   closed loop with N operations in flight in all (ceil(N/T)
 *                  jobs on min(T, N) threads); the default provider is
 *                  measured the same way (--no-compare skips it), so the
 *                  two single-op latencies compare; the two alternate in
 *                  four rounds of S/4 seconds, each pooled.
 * Open loop: arrivals are scheduled (Poisson or fixed gaps) per thread at
 * R/T; an arrival that finds every job of its thread busy waits in a FIFO,
 * and its latency counts from its scheduled time, so a saturated system
 * shows its queueing (no coordinated omission). Latency = completion (the
 * job returned ASYNC_FINISH to its thread) - arrival (open loop) or start
 * (closed loop). Operations that arrive inside the measured window count for
 * latency; those that complete inside it count for throughput.
 *
 * --compare-default also measures the default provider alone, same key,
 * same settings. Signatures are verified with the default provider (public
 * key, EVP_PKEY_verify): every K-th (--verify-every, default 64), or every
 * one with --check. Exit status 1 if any sign or verification failed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#define LT_MAX_RUNS 32
#define LT_DGST_POOL 256            /* digests per thread, reused in turn */
#define LT_DRAIN_LIMIT_NS (30ull * 1000000000ull)  /* in flight after the end: a hang */

/* ---- latency histogram: log-linear, 64 steps per power of two (< 1.6 % error) ---- */
#define LT_HIST_SUB 64
#define LT_HIST_BUCKETS (LT_HIST_SUB * 40)

typedef struct {
    uint64_t n[LT_HIST_BUCKETS];
    uint64_t count, sum_ns, max_ns;
} lt_hist;

static int hist_index(uint64_t v)
{
    int msb, shift;

    if (v < 2 * LT_HIST_SUB)
        return (int)v;
    msb = 63 - __builtin_clzll(v);
    shift = msb - 6;                 /* leaves a mantissa in [64, 128) */
    if (shift + 1 >= LT_HIST_BUCKETS / LT_HIST_SUB)
        return LT_HIST_BUCKETS - 1;
    return (shift + 1) * LT_HIST_SUB + (int)(v >> shift) - LT_HIST_SUB;
}

/* The middle of bucket i, in ns. */
static double hist_value(int i)
{
    int shift;
    uint64_t lo;

    if (i < 2 * LT_HIST_SUB)
        return (double)i;
    shift = i / LT_HIST_SUB - 1;
    lo = (uint64_t)(i - shift * LT_HIST_SUB) << shift;
    return (double)lo + (double)(1ull << shift) / 2.0;
}

static void hist_add(lt_hist *h, uint64_t ns)
{
    h->n[hist_index(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

static void hist_merge(lt_hist *dst, const lt_hist *src)
{
    for (int i = 0; i < LT_HIST_BUCKETS; i++)
        dst->n[i] += src->n[i];
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

/* The q-quantile in µs (0 when empty). */
static double hist_quantile_us(const lt_hist *h, double q)
{
    uint64_t rank, seen = 0;

    if (h->count == 0)
        return 0.0;
    rank = (uint64_t)ceil(q * (double)h->count);
    if (rank == 0)
        rank = 1;
    for (int i = 0; i < LT_HIST_BUCKETS; i++) {
        seen += h->n[i];
        if (seen >= rank) {
            double v = hist_value(i);

            return (v > (double)h->max_ns ? (double)h->max_ns : v) / 1000.0;
        }
    }
    return (double)h->max_ns / 1000.0;
}

/* ---- options and runs ----------------------------------------------------------- */
typedef enum { LT_CLOSED, LT_OPEN } lt_loop;

typedef struct {
    const char *mode;               /* peak, load, rate, inflight */
    const char *provider;           /* gpursa, default */
    lt_loop loop;
    double fraction;                /* load: fraction of the peak; else 0 */
    double rate;                    /* open loop: offered ops/s */
    int threads, jobs;
} lt_spec;

typedef struct {
    int threads, jobs, bits;
    const char *key_file, *modules, *provider, *csv, *label, *timeline;
    double seconds, warmup, peak_rate;
    int compare;                    /* -1 unset */
    int poisson;
    unsigned verify_every;
    int quiet;
    const char *mode;
    double values[LT_MAX_RUNS];
    int nvalues;
    int inflight;
} lt_opts;

/* What one thread needs to sign and verify. */
typedef struct {
    OSSL_LIB_CTX *libctx;           /* where signing happens */
    EVP_PKEY *key;
    const char *propq;
    OSSL_LIB_CTX *vlibctx;          /* default only: verification */
    EVP_PKEY *vkey;
} lt_target;

typedef struct {
    const lt_spec *spec;
    const lt_target *tg;
    unsigned verify_every;
    int poisson;                    /* else fixed gaps */
    uint64_t t_start, t_meas, t_end; /* arrivals begin, measured window */
} lt_run;

typedef struct lt_thread lt_thread;

typedef struct {
    lt_thread *th;
    int idx;
    EVP_PKEY_CTX *ctx;
    ASYNC_WAIT_CTX *wctx;
    ASYNC_JOB *job;                 /* set while paused */
    int fd;                         /* the fd in our epoll set, -1 none */
    uint64_t t0;
    const unsigned char *dgst;
    unsigned char sig[1024];
    size_t siglen;
    int ok;
} lt_slot;

struct lt_thread {
    const lt_run *run;
    int index;
    pthread_t tid;
    lt_slot *slots;
    int nslots;
    int *free_idx, nfree;
    int *nofd_idx, nnofd;           /* paused without an fd: resume at once */
    int ep;
    uint64_t *ring;                 /* arrivals waiting for a free job */
    size_t ring_cap, ring_head, ring_len;
    unsigned char dgst[LT_DGST_POOL][32];
    unsigned dgst_next;
    EVP_PKEY_CTX *vctx;
    uint64_t rng;
    lt_hist hist;
    uint64_t done_in_window, errors, verified, verify_failed, shed, completions;
    int failed_setup, hung;
    uint32_t *tl_n, *tl_max_us;     /* --timeline: per LT_TL_NS of arrival, count and worst */
};

/* --timeline FILE: the measured window in slices of LT_TL_NS by arrival time,
 * each with its operations and their worst latency: shows whether a tail is
 * a few stalls that hit everything in flight, or spread out. */
#define LT_TL_NS 10000000ull
#define LT_TL_SLICES 12000

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die_ssl(const char *what)
{
    fprintf(stderr, "gpursa-latency: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    exit(2);
}

/* xorshift64*: arrival gaps need speed, not secrecy. */
static double rng_unit(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return ((double)((x * 0x2545F4914F6CDD1Dull) >> 11) + 1.0) / 9007199254740993.0;
}

/* ---- the job --------------------------------------------------------------------- */
static int sign_job(void *arg)
{
    lt_slot *s = *(lt_slot **)arg;
    size_t len = sizeof(s->sig);

    s->ok = EVP_PKEY_sign(s->ctx, s->sig, &len, s->dgst, 32) > 0;
    s->siglen = len;
    return 0;
}

static EVP_PKEY_CTX *sign_ctx(OSSL_LIB_CTX *libctx, EVP_PKEY *key, const char *propq, int verify)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, key, propq);

    if (ctx == NULL
        || (verify ? EVP_PKEY_verify_init(ctx) : EVP_PKEY_sign_init(ctx)) <= 0
        || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0
        || EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) <= 0) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static void thread_record(lt_thread *th, lt_slot *s, int ok)
{
    const lt_run *run = th->run;
    uint64_t t = now_ns();

    th->completions++;
    if (!ok) {
        if (th->errors++ == 0) {
            fprintf(stderr, "gpursa-latency: EVP_PKEY_sign failed (first error shown)\n");
            ERR_print_errors_fp(stderr);
        }
    } else {
        if (s->t0 >= run->t_meas && s->t0 < run->t_end) {
            hist_add(&th->hist, t - s->t0);
            if (th->tl_n != NULL && (s->t0 - run->t_meas) / LT_TL_NS < LT_TL_SLICES) {
                size_t b = (size_t)((s->t0 - run->t_meas) / LT_TL_NS);
                uint32_t us = (uint32_t)((t - s->t0) / 1000u);

                th->tl_n[b]++;
                if (us > th->tl_max_us[b])
                    th->tl_max_us[b] = us;
            }
        }
        if (t >= run->t_meas && t < run->t_end)
            th->done_in_window++;
        /* verification after the timestamp: not part of the latency */
        if (run->verify_every != 0 && th->completions % run->verify_every == 0) {
            th->verified++;
            if (EVP_PKEY_verify(th->vctx, s->sig, s->siglen, s->dgst, 32) != 1) {
                if (th->verify_failed++ == 0)
                    fprintf(stderr, "gpursa-latency: a signature did not verify\n");
                ERR_clear_error();
            }
        }
    }
    th->free_idx[th->nfree++] = s->idx;
}

/* Wait for the paused job's fd. Edge-triggered, registered once per fd: the
 * provider writes the eventfd on every completion (each write is an edge)
 * and drains it itself on resume, so no re-arming syscall per operation; an
 * edge for a job that is not paused (a late signal) is ignored. */
static void slot_arm(lt_thread *th, lt_slot *s)
{
    OSSL_ASYNC_FD fds[4];
    size_t n = 0;
    struct epoll_event ev;

    if (!ASYNC_WAIT_CTX_get_all_fds(s->wctx, NULL, &n) || n == 0 || n > 4
        || !ASYNC_WAIT_CTX_get_all_fds(s->wctx, fds, &n)) {
        th->nofd_idx[th->nnofd++] = s->idx;
        return;
    }
    if (fds[0] == s->fd)
        return;
    if (s->fd >= 0)
        epoll_ctl(th->ep, EPOLL_CTL_DEL, s->fd, NULL);
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN | EPOLLET;
    ev.data.u32 = (uint32_t)s->idx;
    s->fd = fds[0];
    if (epoll_ctl(th->ep, EPOLL_CTL_ADD, s->fd, &ev) != 0) {
        s->fd = -1;
        th->nofd_idx[th->nnofd++] = s->idx;   /* cannot wait on it: poll */
    }
}

static void slot_run(lt_thread *th, lt_slot *s)
{
    int ret = 0;

    switch (ASYNC_start_job(&s->job, s->wctx, &ret, sign_job, &s, sizeof(s))) {
    case ASYNC_PAUSE:
        slot_arm(th, s);
        break;
    case ASYNC_FINISH:
        s->job = NULL;
        thread_record(th, s, s->ok);
        break;
    default:                         /* ASYNC_ERR, ASYNC_NO_JOBS */
        s->job = NULL;
        thread_record(th, s, 0);
        break;
    }
}

static void slot_start(lt_thread *th, uint64_t t0)
{
    lt_slot *s = &th->slots[th->free_idx[--th->nfree]];

    s->t0 = t0;
    s->dgst = th->dgst[th->dgst_next++ % LT_DGST_POOL];
    slot_run(th, s);
}

static int thread_setup(lt_thread *th)
{
    const lt_target *tg = th->run->tg;
    int n = th->nslots;

    th->slots = calloc((size_t)n, sizeof(*th->slots));
    th->free_idx = calloc((size_t)n, sizeof(int));
    th->nofd_idx = calloc((size_t)n, sizeof(int));
    th->ring_cap = 1u << 20;
    th->ring = th->run->spec->loop == LT_OPEN ? calloc(th->ring_cap, sizeof(uint64_t)) : NULL;
    th->ep = epoll_create1(EPOLL_CLOEXEC);
    if (th->slots == NULL || th->free_idx == NULL || th->nofd_idx == NULL || th->ep < 0
        || (th->run->spec->loop == LT_OPEN && th->ring == NULL))
        return 0;
    if (!ASYNC_init_thread((size_t)n, (size_t)n))
        return 0;
    if ((th->vctx = sign_ctx(tg->vlibctx, tg->vkey, NULL, 1)) == NULL)
        return 0;
    for (int i = 0; i < n; i++) {
        lt_slot *s = &th->slots[i];

        s->th = th;
        s->idx = i;
        s->fd = -1;
        if ((s->ctx = sign_ctx(tg->libctx, tg->key, tg->propq, 0)) == NULL
            || (s->wctx = ASYNC_WAIT_CTX_new()) == NULL)
            return 0;
        th->free_idx[th->nfree++] = n - 1 - i;
    }
    for (int i = 0; i < LT_DGST_POOL; i++) {
        unsigned char msg[64];

        if (RAND_bytes(msg, sizeof(msg)) != 1
            || !EVP_Q_digest(tg->vlibctx, "SHA256", NULL, msg, sizeof(msg), th->dgst[i], NULL))
            return 0;
    }
    if (RAND_bytes((unsigned char *)&th->rng, sizeof(th->rng)) != 1)
        return 0;
    th->rng |= 1;
    return 1;
}

static void thread_teardown(lt_thread *th)
{
    for (int i = 0; th->slots != NULL && i < th->nslots; i++) {
        EVP_PKEY_CTX_free(th->slots[i].ctx);
        ASYNC_WAIT_CTX_free(th->slots[i].wctx);   /* closes gpursa's eventfd */
    }
    EVP_PKEY_CTX_free(th->vctx);
    if (th->ep >= 0)
        close(th->ep);
    free(th->slots);
    free(th->free_idx);
    free(th->nofd_idx);
    free(th->ring);
    ASYNC_cleanup_thread();
}

static pthread_barrier_t lt_barrier;

static void *thread_main(void *arg)
{
    lt_thread *th = arg;
    const lt_run *run = th->run;
    const lt_spec *sp = run->spec;
    int open = sp->loop == LT_OPEN;
    double gap = open ? 1e9 * sp->threads / sp->rate : 0.0;   /* mean ns between arrivals */
    double next;
    int arriving = 1;
    struct epoll_event evs[256];

    th->failed_setup = !thread_setup(th);
    pthread_barrier_wait(&lt_barrier);    /* main sets the times after this */
    pthread_barrier_wait(&lt_barrier);
    if (th->failed_setup)
        goto out;
    /* a fixed schedule starts at a different phase in every thread */
    next = (double)run->t_start + (open ? gap * rng_unit(&th->rng) : 0.0);
    while (now_ns() < run->t_start)
        ;
    for (;;) {
        uint64_t now = now_ns();
        struct timespec ts, *tsp = NULL;
        int n, nofd;

        if (open) {
            while (arriving && next <= (double)now) {
                uint64_t a = (uint64_t)next;

                if (a >= run->t_end) {
                    arriving = 0;
                    break;
                }
                if (th->ring_len == th->ring_cap)
                    th->shed += a >= run->t_meas;   /* overload beyond the FIFO */
                else
                    th->ring[(th->ring_head + th->ring_len++) % th->ring_cap] = a;
                next += run->poisson ? -log(rng_unit(&th->rng)) * gap : gap;
            }
            while (th->nfree > 0 && th->ring_len > 0) {
                uint64_t a = th->ring[th->ring_head];

                th->ring_head = (th->ring_head + 1) % th->ring_cap;
                th->ring_len--;
                slot_start(th, a);
            }
        } else {
            /* operations that finish without pausing free their job at once:
             * at most one round of the jobs, then look at the fds again */
            for (int k = 0; arriving && th->nfree > 0 && k < th->nslots; k++) {
                uint64_t t = now_ns();

                if (t >= run->t_end)
                    arriving = 0;
                else
                    slot_start(th, t);
            }
        }
        if (!arriving && th->nfree == th->nslots && (!open || th->ring_len == 0))
            break;
        if (now > run->t_end + LT_DRAIN_LIMIT_NS) {
            th->hung = th->nslots - th->nfree;
            break;
        }
        /* sleep until an fd fires or the next arrival (or the end) is due */
        nofd = th->nnofd;
        if (nofd > 0 || (!open && arriving && th->nfree > 0)) {
            ts.tv_sec = 0;
            ts.tv_nsec = 0;
            tsp = &ts;
        } else {
            uint64_t due = UINT64_MAX;

            if (open && arriving)
                due = (uint64_t)next;
            else if (!open && arriving)
                due = run->t_end;
            if (due == UINT64_MAX || due - now > 100000000ull)
                due = now + 100000000ull;   /* wake at least every 100 ms */
            due = due > now ? due - now : 0;
            ts.tv_sec = (time_t)(due / 1000000000ull);
            ts.tv_nsec = (long)(due % 1000000000ull);
            tsp = &ts;
        }
        n = epoll_pwait2(th->ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), tsp, NULL);
        if (n < 0 && errno == ENOSYS)       /* kernel before 5.11: poll in ms */
            n = epoll_wait(th->ep, evs, (int)(sizeof(evs) / sizeof(evs[0])),
                           (int)(tsp->tv_sec * 1000 + tsp->tv_nsec / 1000000));
        for (int i = 0; i < n; i++) {
            lt_slot *s = &th->slots[evs[i].data.u32];

            if (s->job != NULL)
                slot_run(th, s);
        }
        /* slots that paused without an fd before this round: resume them */
        for (int i = 0; i < nofd; i++)
            slot_run(th, &th->slots[th->nofd_idx[i]]);
        if (nofd > 0) {
            memmove(th->nofd_idx, th->nofd_idx + nofd, (size_t)(th->nnofd - nofd) * sizeof(int));
            th->nnofd -= nofd;
        }
    }
out:
    if (th->hung == 0)
        thread_teardown(th);
    return NULL;
}

/* ---- one run: threads, window, totals ------------------------------------------------ */
typedef struct {
    lt_hist hist;
    double achieved, seconds;
    uint64_t ops, errors, verified, verify_failed, shed;
    int hung;
} lt_result;

/* gpursa's counters (provider parameters), to report per run */
#define LT_NSTATS 7
static const char *const lt_stat_names[LT_NSTATS] = {
    "gpursa-ops-gpu", "gpursa-ops-host", "gpursa-ops-cpu", "gpursa-batches",
    "gpursa-batch-items", "gpursa-fallback-inline", "gpursa-faults",
};

static void stats_read(OSSL_PROVIDER *prov, uint64_t v[LT_NSTATS])
{
    OSSL_PARAM p[LT_NSTATS + 1];

    memset(v, 0, LT_NSTATS * sizeof(v[0]));
    if (prov == NULL)
        return;
    for (int i = 0; i < LT_NSTATS; i++)
        p[i] = OSSL_PARAM_construct_uint64(lt_stat_names[i], &v[i]);
    p[LT_NSTATS] = OSSL_PARAM_construct_end();
    if (!OSSL_PROVIDER_get_params(prov, p))
        memset(v, 0, LT_NSTATS * sizeof(v[0]));
}

/* Appends "label,provider,rate,t_ms,ops,max_us" per slice with arrivals. */
static void timeline_write(const lt_opts *o, const lt_spec *sp, const lt_thread *th)
{
    FILE *f = fopen(o->timeline, "a");

    if (f == NULL) {
        fprintf(stderr, "gpursa-latency: cannot open %s: %s\n", o->timeline, strerror(errno));
        return;
    }
    for (size_t b = 0; b < LT_TL_SLICES; b++) {
        uint64_t n = 0;
        uint32_t mx = 0;

        for (int i = 0; i < sp->threads; i++) {
            n += th[i].tl_n[b];
            if (th[i].tl_max_us[b] > mx)
                mx = th[i].tl_max_us[b];
        }
        if (n != 0)
            fprintf(f, "%s,%s,%.0f,%llu,%llu,%u\n", o->label, sp->provider, sp->rate,
                    (unsigned long long)(b * (LT_TL_NS / 1000000u)), (unsigned long long)n, mx);
    }
    fclose(f);
}

static void run_one(const lt_spec *sp, const lt_target *tg, const lt_opts *o, lt_result *res)
{
    lt_run run;
    lt_thread *th = calloc((size_t)sp->threads, sizeof(*th));
    uint64_t t;

    if (th == NULL) {
        fprintf(stderr, "gpursa-latency: out of memory\n");
        exit(2);
    }
    memset(&run, 0, sizeof(run));
    run.spec = sp;
    run.tg = tg;
    run.verify_every = o->verify_every;
    run.poisson = o->poisson;
    pthread_barrier_init(&lt_barrier, NULL, (unsigned)sp->threads + 1);
    for (int i = 0; i < sp->threads; i++) {
        th[i].run = &run;
        th[i].index = i;
        if (o->timeline != NULL
            && ((th[i].tl_n = calloc(LT_TL_SLICES, sizeof(uint32_t))) == NULL
                || (th[i].tl_max_us = calloc(LT_TL_SLICES, sizeof(uint32_t))) == NULL)) {
            fprintf(stderr, "gpursa-latency: out of memory\n");
            exit(2);
        }
        th[i].nslots = sp->jobs;
        th[i].ep = -1;
        if (pthread_create(&th[i].tid, NULL, thread_main, &th[i]) != 0) {
            fprintf(stderr, "gpursa-latency: cannot start thread %d\n", i);
            exit(2);
        }
    }
    pthread_barrier_wait(&lt_barrier);     /* every thread set up */
    t = now_ns() + 1000000;                /* 1 ms to get going */
    run.t_start = t;
    run.t_meas = t + (uint64_t)(o->warmup * 1e9);
    run.t_end = run.t_meas + (uint64_t)(o->seconds * 1e9);
    pthread_barrier_wait(&lt_barrier);
    memset(res, 0, sizeof(*res));
    for (int i = 0; i < sp->threads; i++) {
        if (th[i].failed_setup) {
            fprintf(stderr, "gpursa-latency: thread %d could not set up its jobs\n", i);
            ERR_print_errors_fp(stderr);
            exit(2);
        }
    }
    for (int i = 0; i < sp->threads; i++) {
        pthread_join(th[i].tid, NULL);
        hist_merge(&res->hist, &th[i].hist);
        res->ops += th[i].done_in_window;
        res->errors += th[i].errors;
        res->verified += th[i].verified;
        res->verify_failed += th[i].verify_failed;
        res->shed += th[i].shed;
        res->hung += th[i].hung;
    }
    res->seconds = o->seconds;
    res->achieved = (double)res->ops / o->seconds;
    pthread_barrier_destroy(&lt_barrier);
    if (o->timeline != NULL)
        timeline_write(o, sp, th);
    for (int i = 0; i < sp->threads; i++) {
        free(th[i].tl_n);
        free(th[i].tl_max_us);
    }
    free(th);
}

static FILE *csv_fp;

static void csv_header(void)
{
    fprintf(csv_fp, "label,provider,mode,load,threads,async_jobs,arrivals,offered_ops_s,"
            "achieved_ops_s,ops,mean_us,p50_us,p90_us,p99_us,p999_us,max_us,errors,verified,"
            "verify_failed,shed,seconds,max_wait_us,batches,mean_batch,ops_gpu,ops_host,"
            "ops_cpu,inline,faults\n");
}

static void report(const lt_opts *o, const lt_spec *sp, const lt_result *r,
                   const uint64_t d[LT_NSTATS])
{
    const char *mw = getenv("GPURSA_MAX_WAIT_US");
    double mean_batch = d[3] != 0 ? (double)d[4] / (double)d[3] : 0.0;
    double mean = r->hist.count ? (double)r->hist.sum_ns / (double)r->hist.count / 1000.0 : 0;
    const char *arr = sp->loop == LT_OPEN ? (o->poisson ? "poisson" : "fixed") : "closed";
    char load[32] = "";

    if (sp->fraction > 0)
        snprintf(load, sizeof(load), "%.3f", sp->fraction);
    if (!o->quiet || csv_fp == NULL) {
        printf("%-7s %-8s", sp->provider, sp->mode);
        if (sp->fraction > 0)
            printf(" load=%.2f", sp->fraction);
        printf(" T=%d A=%d", sp->threads, sp->jobs);
        if (sp->loop == LT_OPEN)
            printf(" offered=%.0f/s", sp->rate);
        printf(" achieved=%.0f/s  latency us: p50=%.1f p90=%.1f p99=%.1f p999=%.1f max=%.1f"
               "  verified=%llu/%llu errors=%llu shed=%llu",
               r->achieved, hist_quantile_us(&r->hist, 0.5), hist_quantile_us(&r->hist, 0.9),
               hist_quantile_us(&r->hist, 0.99), hist_quantile_us(&r->hist, 0.999),
               (double)r->hist.max_ns / 1000.0,
               (unsigned long long)(r->verified - r->verify_failed),
               (unsigned long long)r->verified, (unsigned long long)r->errors,
               (unsigned long long)r->shed);
        if (strcmp(sp->provider, "gpursa") == 0)
            printf("  gpursa: gpu=%llu host=%llu cpu=%llu inline=%llu mean_batch=%.1f",
                   (unsigned long long)d[0], (unsigned long long)d[1],
                   (unsigned long long)d[2], (unsigned long long)d[5], mean_batch);
        if (r->hung)
            printf("  HUNG: %d operations never completed", r->hung);
        printf("\n");
        fflush(stdout);
    }
    if (csv_fp == NULL)
        return;
    fprintf(csv_fp, "%s,%s,%s,%s,%d,%d,%s,%.1f,%.1f,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,"
            "%llu,%llu,%llu,%llu,%.3f,%s,%llu,%.2f,%llu,%llu,%llu,%llu,%llu\n",
            o->label, sp->provider, sp->mode, load, sp->threads, sp->jobs, arr,
            sp->loop == LT_OPEN ? sp->rate : 0.0, r->achieved, (unsigned long long)r->ops,
            mean, hist_quantile_us(&r->hist, 0.5), hist_quantile_us(&r->hist, 0.9),
            hist_quantile_us(&r->hist, 0.99), hist_quantile_us(&r->hist, 0.999),
            (double)r->hist.max_ns / 1000.0, (unsigned long long)r->errors,
            (unsigned long long)r->verified, (unsigned long long)r->verify_failed,
            (unsigned long long)r->shed, r->seconds, mw != NULL ? mw : "",
            (unsigned long long)d[3], mean_batch, (unsigned long long)d[0],
            (unsigned long long)d[1], (unsigned long long)d[2], (unsigned long long)d[5],
            (unsigned long long)d[6]);
    fflush(csv_fp);
}

/* One run with gpursa's counters around it, reported. 0 if anything failed
 * or hung (a hung run returns at once: its paused jobs still hold contexts). */
/* One run; d = what gpursa's counters moved by during it. */
static void run_counted(const lt_spec *sp, const lt_target *tg, OSSL_PROVIDER *sprov,
                        const lt_opts *o, lt_result *r, uint64_t d[LT_NSTATS])
{
    uint64_t s0[LT_NSTATS];

    stats_read(sprov, s0);
    run_one(sp, tg, o, r);
    stats_read(sprov, d);
    for (int k = 0; k < LT_NSTATS; k++)
        d[k] -= s0[k];
}

static int measure(const lt_spec *sp, const lt_target *tg, OSSL_PROVIDER *sprov,
                   const lt_opts *o, lt_result *r)
{
    uint64_t d[LT_NSTATS];

    run_counted(sp, tg, sprov, o, r, d);
    report(o, sp, r, d);
    return r->errors == 0 && r->verify_failed == 0 && r->hung == 0;
}

/*
 * --inflight with the default provider compared: the two alternate in
 * LT_ROUNDS rounds of seconds/LT_ROUNDS each (gpursa, default, gpursa, ...)
 * and each provider's rounds are pooled, so that a drift of the machine
 * (clock boost, a neighbour's load) falls on both alike; one run each, one
 * after the other, would put that drift into the ratio (doc/design.md,
 * "What the queue's settings rest on").
 */
#define LT_ROUNDS 4
static int measure_alternating(lt_spec sp[2], const lt_target *tg[2], OSSL_PROVIDER *sprov[2],
                               const lt_opts *o)
{   /* 1 ok, 0 failures, -1 hung */
    lt_opts ro = *o;
    lt_result sum[2], r;
    uint64_t d[2][LT_NSTATS], dr[LT_NSTATS];
    int ok = 1;

    ro.seconds = o->seconds / LT_ROUNDS;
    ro.warmup = o->warmup / LT_ROUNDS;
    memset(sum, 0, sizeof(sum));
    memset(d, 0, sizeof(d));
    for (int round = 0; round < LT_ROUNDS; round++) {
        for (int p = 0; p < 2; p++) {
            run_counted(&sp[p], tg[p], sprov[p], &ro, &r, dr);
            for (int k = 0; k < LT_NSTATS; k++)
                d[p][k] += dr[k];
            hist_merge(&sum[p].hist, &r.hist);
            sum[p].ops += r.ops;
            sum[p].errors += r.errors;
            sum[p].verified += r.verified;
            sum[p].verify_failed += r.verify_failed;
            sum[p].shed += r.shed;
            sum[p].hung += r.hung;
            if (r.hung != 0)
                return -1;               /* paused jobs hold contexts: stop now */
        }
    }
    for (int p = 0; p < 2; p++) {
        sum[p].seconds = ro.seconds * LT_ROUNDS;
        sum[p].achieved = (double)sum[p].ops / sum[p].seconds;
        report(o, &sp[p], &sum[p], d[p]);
        ok &= sum[p].errors == 0 && sum[p].verify_failed == 0;
    }
    return ok;
}

/* ---- keys and library contexts ------------------------------------------------------- */
static EVP_PKEY *key_load_or_make(OSSL_LIB_CTX *dl, const lt_opts *o)
{
    EVP_PKEY *k = NULL;

    if (o->key_file != NULL) {
        FILE *f = fopen(o->key_file, "r");

        if (f == NULL) {
            fprintf(stderr, "gpursa-latency: cannot open %s: %s\n", o->key_file, strerror(errno));
            exit(2);
        }
        k = PEM_read_PrivateKey_ex(f, NULL, NULL, NULL, dl, NULL);
        fclose(f);
        if (k == NULL)
            die_ssl("reading the key");
        return k;
    }
    if ((k = EVP_PKEY_Q_keygen(dl, NULL, "RSA", (size_t)o->bits)) == NULL)
        die_ssl("RSA key generation");
    return k;
}

/* The same key, imported into gpursa's key management. */
static EVP_PKEY *key_into(OSSL_LIB_CTX *libctx, const char *propq, EVP_PKEY *src)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", propq);
    EVP_PKEY *k = NULL;

    if (ctx == NULL || EVP_PKEY_todata(src, EVP_PKEY_KEYPAIR, &params) <= 0
        || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_KEYPAIR, params) <= 0)
        die_ssl("importing the key into gpursa");
    OSSL_PARAM_free(params);
    EVP_PKEY_CTX_free(ctx);
    return k;
}

/* ---- command line --------------------------------------------------------------------- */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpursa-latency [--threads T] [--async-jobs A] [--bits B] [--key PEM]\n"
            "         [--seconds S] [--warmup S] [--modules DIR] [--provider gpursa|default]\n"
            "         [--compare-default | --no-compare]\n"
            "         [--peak | --load F[,F...] [--peak-rate R] | --rate R[,R...] | --inflight N]\n"
            "         [--arrivals poisson|fixed] [--check | --verify-every K]\n"
            "         [--csv FILE] [--label TEXT] [--quiet] [--timeline FILE]\n"
            "Signs SHA-256 digests (RSA PKCS#1 v1.5) through EVP from T threads x A ASYNC\n"
            "jobs and reports latency percentiles and throughput (see the source header).\n");
}

static int parse_values(const char *s, lt_opts *o)
{
    char *end;

    o->nvalues = 0;
    while (*s != '\0' && o->nvalues < LT_MAX_RUNS) {
        double v = strtod(s, &end);

        if (end == s || !(v > 0))
            return 0;
        o->values[o->nvalues++] = v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s != '\0')
            return 0;
    }
    return *s == '\0' && o->nvalues > 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (end == s || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

static void parse_opts(int argc, char **argv, lt_opts *o)
{
    enum { O_PEAK = 256, O_LOAD, O_RATE, O_INFLIGHT, O_PEAKRATE, O_CMP, O_NOCMP, O_CHECK,
           O_VEVERY, O_ARR, O_MOD, O_PROV, O_WARM, O_LABEL, O_KEY, O_QUIET, O_TL };
    static const struct option lo[] = {
        { "threads", required_argument, NULL, 't' },
        { "async-jobs", required_argument, NULL, 'a' },
        { "bits", required_argument, NULL, 'b' },
        { "seconds", required_argument, NULL, 's' },
        { "csv", required_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { "key", required_argument, NULL, O_KEY },
        { "timeline", required_argument, NULL, O_TL },
        { "warmup", required_argument, NULL, O_WARM },
        { "modules", required_argument, NULL, O_MOD },
        { "provider", required_argument, NULL, O_PROV },
        { "peak", no_argument, NULL, O_PEAK },
        { "load", required_argument, NULL, O_LOAD },
        { "rate", required_argument, NULL, O_RATE },
        { "inflight", required_argument, NULL, O_INFLIGHT },
        { "peak-rate", required_argument, NULL, O_PEAKRATE },
        { "compare-default", no_argument, NULL, O_CMP },
        { "no-compare", no_argument, NULL, O_NOCMP },
        { "check", no_argument, NULL, O_CHECK },
        { "verify-every", required_argument, NULL, O_VEVERY },
        { "arrivals", required_argument, NULL, O_ARR },
        { "label", required_argument, NULL, O_LABEL },
        { "quiet", no_argument, NULL, O_QUIET },
        { NULL, 0, NULL, 0 }
    };
    int c, v;

    memset(o, 0, sizeof(*o));
    o->threads = 1;
    o->jobs = 64;
    o->bits = 2048;
    o->seconds = 5;
    o->warmup = 1;
    o->provider = "gpursa";
    o->compare = -1;
    o->poisson = 1;
    o->verify_every = 64;
    o->label = "";
    o->mode = "peak";
    while ((c = getopt_long(argc, argv, "t:a:b:s:c:h", lo, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!parse_int(optarg, 1, 1024, &o->threads))
                goto bad;
            break;
        case 'a':
            if (!parse_int(optarg, 1, 65536, &o->jobs))
                goto bad;
            break;
        case 'b':
            if (!parse_int(optarg, 512, 16384, &o->bits))
                goto bad;
            break;
        case 's':
            if ((o->seconds = atof(optarg)) <= 0)
                goto bad;
            break;
        case O_WARM:
            if ((o->warmup = atof(optarg)) < 0)
                goto bad;
            break;
        case 'c': o->csv = optarg; break;
        case O_KEY: o->key_file = optarg; break;
        case O_MOD: o->modules = optarg; break;
        case O_LABEL: o->label = optarg; break;
        case O_QUIET: o->quiet = 1; break;
        case O_PROV:
            if (strcmp(optarg, "gpursa") != 0 && strcmp(optarg, "default") != 0)
                goto bad;
            o->provider = optarg;
            break;
        case O_PEAK: o->mode = "peak"; break;
        case O_LOAD:
            o->mode = "load";
            if (!parse_values(optarg, o))
                goto bad;
            for (int i = 0; i < o->nvalues; i++)
                if (o->values[i] > 4)
                    goto bad;
            break;
        case O_RATE:
            o->mode = "rate";
            if (!parse_values(optarg, o))
                goto bad;
            break;
        case O_INFLIGHT:
            o->mode = "inflight";
            if (!parse_int(optarg, 1, 1 << 20, &o->inflight))
                goto bad;
            break;
        case O_PEAKRATE:
            if ((o->peak_rate = atof(optarg)) <= 0)
                goto bad;
            break;
        case O_CMP: o->compare = 1; break;
        case O_TL: o->timeline = optarg; break;
        case O_NOCMP: o->compare = 0; break;
        case O_CHECK: o->verify_every = 1; break;
        case O_VEVERY:
            if (!parse_int(optarg, 0, 1 << 30, &v))
                goto bad;
            o->verify_every = (unsigned)v;
            break;
        case O_ARR:
            if (strcmp(optarg, "poisson") == 0)
                o->poisson = 1;
            else if (strcmp(optarg, "fixed") == 0)
                o->poisson = 0;
            else
                goto bad;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (optind != argc)
        goto bad_args;
    if (o->compare < 0)
        o->compare = strcmp(o->mode, "inflight") == 0;
    return;
bad:
    fprintf(stderr, "gpursa-latency: bad value '%s' for an option\n", optarg);
bad_args:
    usage(stderr);
    exit(2);
}

/* File descriptors: one eventfd per wait context, T*A of them. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv)
{
    lt_opts o;
    OSSL_LIB_CTX *gl = NULL, *dl;
    OSSL_PROVIDER *gprov = NULL, *gdef = NULL, *ddef;
    EVP_PKEY *dkey, *gkey = NULL;
    lt_target tg_default, tg_gpursa;
    const char *provs[2];
    int nprov = 0, failed = 0;

    parse_opts(argc, argv, &o);
    raise_fd_limit();

    /* default only: the baseline and the verifier */
    if ((dl = OSSL_LIB_CTX_new()) == NULL || (ddef = OSSL_PROVIDER_load(dl, "default")) == NULL)
        die_ssl("loading the default provider");
    dkey = key_load_or_make(dl, &o);
    tg_default = (lt_target){ dl, dkey, NULL, dl, dkey };

    if (strcmp(o.provider, "gpursa") == 0) {
        if ((gl = OSSL_LIB_CTX_new()) == NULL)
            die_ssl("OSSL_LIB_CTX_new");
        if (o.modules != NULL && !OSSL_PROVIDER_set_default_search_path(gl, o.modules))
            die_ssl("setting the module path");
        if ((gdef = OSSL_PROVIDER_load(gl, "default")) == NULL
            || (gprov = OSSL_PROVIDER_load(gl, "gpursa")) == NULL)
            die_ssl("loading gpursa (set OPENSSL_MODULES or --modules)");
        gkey = key_into(gl, "provider=gpursa", dkey);
        tg_gpursa = (lt_target){ gl, gkey, "?provider=gpursa", dl, dkey };
        provs[nprov++] = "gpursa";
        if (o.compare)
            provs[nprov++] = "default";
    } else {
        provs[nprov++] = "default";
    }

    if (o.csv != NULL) {
        if ((csv_fp = fopen(o.csv, "a+")) == NULL) {
            fprintf(stderr, "gpursa-latency: cannot open %s: %s\n", o.csv, strerror(errno));
            return 2;
        }
        fseek(csv_fp, 0, SEEK_END);
        if (ftell(csv_fp) == 0)
            csv_header();
    }

    if (strcmp(o.mode, "inflight") == 0 && nprov == 2) {
        lt_spec sp[2];
        const lt_target *tg[2] = { &tg_gpursa, &tg_default };
        OSSL_PROVIDER *sprov[2] = { gprov, NULL };

        for (int p = 0; p < 2; p++) {
            memset(&sp[p], 0, sizeof(sp[p]));
            sp[p].provider = provs[p];
            sp[p].mode = o.mode;
            sp[p].loop = LT_CLOSED;
            sp[p].threads = o.threads < o.inflight ? o.threads : o.inflight;
            sp[p].jobs = (o.inflight + sp[p].threads - 1) / sp[p].threads;
        }
        int rc = measure_alternating(sp, tg, sprov, &o);

        if (rc < 0) {
            fprintf(stderr, "gpursa-latency: operations hung; stopping\n");
            return 1;
        }
        failed |= !rc;
        nprov = 0;                       /* done */
    }
    for (int p = 0; p < nprov; p++) {
        const lt_target *tg = strcmp(provs[p], "gpursa") == 0 ? &tg_gpursa : &tg_default;
        OSSL_PROVIDER *sprov = tg == &tg_gpursa ? gprov : NULL;
        lt_spec sp;
        lt_result r;
        double peak = o.peak_rate;
        int nruns;

        memset(&sp, 0, sizeof(sp));
        sp.provider = provs[p];
        sp.threads = o.threads;
        sp.jobs = o.jobs;
        if (strcmp(o.mode, "inflight") == 0) {
            /* N in flight in all: ceil(N/T) jobs on each of min(T, N) threads */
            sp.threads = o.threads < o.inflight ? o.threads : o.inflight;
            sp.jobs = (o.inflight + sp.threads - 1) / sp.threads;
        }
        nruns = strcmp(o.mode, "load") == 0 || strcmp(o.mode, "rate") == 0 ? o.nvalues : 1;
        /* the peak first when --load has no --peak-rate (or for the baseline) */
        if (strcmp(o.mode, "load") == 0 && (peak <= 0 || p > 0)) {
            sp.mode = "peak";
            sp.loop = LT_CLOSED;
            failed |= !measure(&sp, tg, sprov, &o, &r);
            if (r.hung != 0)
                return 1;
            peak = r.achieved;
        }
        for (int i = 0; i < nruns; i++) {
            sp.mode = o.mode;
            sp.loop = LT_CLOSED;
            sp.fraction = 0;
            sp.rate = 0;
            if (strcmp(o.mode, "load") == 0) {
                sp.loop = LT_OPEN;
                sp.fraction = o.values[i];
                sp.rate = o.values[i] * peak;
            } else if (strcmp(o.mode, "rate") == 0) {
                sp.loop = LT_OPEN;
                sp.rate = o.values[i];
            }
            if (sp.loop == LT_OPEN && !(sp.rate > 0)) {
                fprintf(stderr, "gpursa-latency: no peak rate to take a fraction of\n");
                return 2;
            }
            failed |= !measure(&sp, tg, sprov, &o, &r);
            if (r.hung != 0) {
                /* paused jobs still reference the contexts: do not free them */
                fprintf(stderr, "gpursa-latency: operations hung; stopping\n");
                return 1;
            }
        }
    }

    if (csv_fp != NULL)
        fclose(csv_fp);
    EVP_PKEY_free(gkey);
    EVP_PKEY_free(dkey);
    if (gprov != NULL) {
        OSSL_PROVIDER_unload(gprov);   /* prints gpursa's stats line with GPURSA_STATS=1 */
        OSSL_PROVIDER_unload(gdef);
        OSSL_LIB_CTX_free(gl);
    }
    OSSL_PROVIDER_unload(ddef);
    OSSL_LIB_CTX_free(dl);
    return failed ? 1 : 0;
}
