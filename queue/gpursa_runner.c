/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runner threads: each owns a batch in flight, with one reusable
 * gpu batch per modulus size and staging buffers grown to the largest batch
 * seen. A runner gathers its requests with their keys' device copies,
 * blinds them, submits, tops up its blinding pairs while the device
 * computes, waits, and completes every request: good results at once, FAULT
 * items and failed batches on the CPU. Several runners per device let
 * consecutive batches overlap on the device. A runner whose batch is done
 * takes the next batch due itself (gpursa_dev_runner_next).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

int gpursa_runner_reserve(gpursa_runner *s, size_t n)
{
    size_t max = s->dev->rt->q->cfg.max_batch, cap;
    size_t kb = GPURSA_MAX_KEY_BYTES;
    void *p;

    if (n <= s->cap)
        return 1;
    cap = s->cap * 2 > n ? s->cap * 2 : n;
    if (cap > max && n <= max)
        cap = max;
    /* Grows a few times at most over the runtime's life, never per batch. */
#define GPURSA_GROW(field, size)                              \
    do {                                                      \
        if ((p = realloc(s->field, (size))) == NULL)          \
            return 0;                                         \
        s->field = p;                                         \
    } while (0)
    GPURSA_GROW(rv, cap * sizeof(*s->rv));
    GPURSA_GROW(wv, cap * sizeof(*s->wv));
    GPURSA_GROW(items, cap * sizeof(*s->items));
    GPURSA_GROW(rbuf, cap * kb);
    GPURSA_GROW(rinvbuf, cap * kb);
    GPURSA_GROW(outbuf, cap * kb);
#undef GPURSA_GROW
    s->cap = cap;
    return 1;
}

void gpursa_runner_free_batches(gpursa_runner *s)
{
    for (int si = 0; si < GPURSA_NSIZES; si++) {
        if (s->batch[si] != NULL)
            gpursa_dev_ops(s->dev)->batch_free(s->batch[si]);
        s->batch[si] = NULL;
    }
}

void gpursa_runner_release(gpursa_runner *s)
{
    gpursa_runner_free_batches(s);
    if (s->cap != 0) {
        OPENSSL_cleanse(s->rbuf, s->cap * GPURSA_MAX_KEY_BYTES);
        OPENSSL_cleanse(s->rinvbuf, s->cap * GPURSA_MAX_KEY_BYTES);
        OPENSSL_cleanse(s->outbuf, s->cap * GPURSA_MAX_KEY_BYTES);
    }
    for (int i = 0; i < GPURSA_POOL_KEYS; i++)
        gpursa_pool_drop(&s->pools[i]);
    free(s->rv);
    free(s->wv);
    free(s->items);
    free(s->rbuf);
    free(s->rinvbuf);
    free(s->outbuf);
    BN_CTX_free(s->bnctx);
    pthread_cond_destroy(&s->cond);
}

/*
 * This runner's reusable batch of key size si. The first batch of a size on a
 * device makes every runner's at once: a batch's pinned staging and device
 * buffers come from cudaHostAlloc / cudaMalloc, which hold up the device's
 * other CUDA calls (other runners' launches and waits) while they run, so
 * one made under load, when a sixteenth runner first gets work, would stall
 * the batches in flight and set the latency tail (doc/design.md, "What the
 * queue's settings rest on"). The memory is what a
 * busy process would take anyway: nrunners batches of max_batch items per
 * modulus size used. A runner whose batch could not be made tries again at
 * its own next batch.
 */
gpursa_gpu_batch *gpursa_runner_batch(gpursa_runner *s, int si)
{
    gpursa_dev *d = s->dev;
    gpursa_gpu_batch *b;

    pthread_mutex_lock(&d->batch_mu);
    if (s->batch[si] == NULL) {
        for (int i = 0; i < d->nrunners; i++) {
            gpursa_runner *o = &d->runners[i];

            if (o->batch[si] == NULL
                && gpursa_dev_ops(d)->batch_new(d->gd, gpursa_size_bits[si],
                                                d->rt->q->cfg.max_batch,
                                                &o->batch[si]) != GPURSA_GPU_OK)
                o->batch[si] = NULL;
        }
    }
    b = s->batch[si];
    pthread_mutex_unlock(&d->batch_mu);
    return b;
}

/* Moves the items of requests [from, to) into the CPU list (order kept). */
static void gpursa_runner_to_cpu(gpursa_runner *s, size_t from, size_t to, gpursa_req_list *cpu)
{
    for (size_t i = from; i < to; i++)
        gpursa_list_append(cpu, s->rv[i]);
}

/* Blinds the n gathered requests: same-key runs are made contiguous, then
 * each run takes its pairs from the runner's pool for that key. Requests
 * whose blinding failed move to cpu; returns the number of items left
 * (compacted). */
static size_t gpursa_runner_blind(gpursa_runner *s, size_t n, gpursa_req_list *cpu)
{
    size_t len = s->rv[0]->key->len, pos = 0, kept = 0;

    while (pos < n) {
        gpursa_queue_key *k = s->rv[pos]->key;
        size_t end = pos + 1;

        for (size_t j = end; j < n; j++) {
            if (s->rv[j]->key == k) {
                gpursa_req *tr = s->rv[end];
                gpursa_gpu_item ti = s->items[end];

                s->rv[end] = s->rv[j];
                s->items[end] = s->items[j];
                s->rv[j] = tr;
                s->items[j] = ti;
                end++;
            }
        }
        if (gpursa_runner_pairs(s, k, end - pos, s->rbuf + kept * len,
                                s->rinvbuf + kept * len)) {
            for (size_t i = pos; i < end; i++, kept++) {
                s->rv[kept] = s->rv[i];
                s->items[kept] = s->items[i];
            }
        } else {
            gpursa_runner_to_cpu(s, pos, end, cpu);
        }
        pos = end;
    }
    for (size_t i = 0; i < kept; i++) {
        s->items[i].in = s->rv[i]->in;
        s->items[i].r = s->rbuf + i * len;
        s->items[i].rinv = s->rinvbuf + i * len;
        s->items[i].out = s->outbuf + i * len;
        s->items[i].status = GPURSA_ITEM_PENDING;
    }
    return kept;
}

/* Stage times (GPURSA_STATS=2): microseconds from a to b. */
static uint64_t gpursa_us(uint64_t a_ns, uint64_t b_ns)
{
    return b_ns > a_ns ? (b_ns - a_ns) / 1000u : 0;
}

/* The marks of a batch's stages: wall and this thread's CPU time. */
enum { GPURSA_MARK_RUN, GPURSA_MARK_PREP, GPURSA_MARK_SUB, GPURSA_MARK_TOP, GPURSA_MARK_HOME,
       GPURSA_MARK_DONE, GPURSA_NMARKS };
typedef struct {
    uint64_t t[GPURSA_NMARKS], c[GPURSA_NMARKS];
} gpursa_marks;

static void gpursa_mark(gpursa_stages *h, gpursa_marks *m, int at)
{
    struct timespec ts;

    if (h == NULL)
        return;
    m->t[at] = gpursa_now_ns();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    m->c[at] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void gpursa_runner_stages(gpursa_runner *s, gpursa_stages *h, size_t n,
                                 const gpursa_marks *m, double kernel_s)
{
    static const int wall[][3] = {
        { GPURSA_STAGE_PREP, GPURSA_MARK_RUN, GPURSA_MARK_PREP },
        { GPURSA_STAGE_SUBMIT, GPURSA_MARK_PREP, GPURSA_MARK_SUB },
        { GPURSA_STAGE_TOPUP, GPURSA_MARK_SUB, GPURSA_MARK_TOP },
        { GPURSA_STAGE_DEVICE, GPURSA_MARK_SUB, GPURSA_MARK_HOME },
        { GPURSA_STAGE_DONE, GPURSA_MARK_HOME, GPURSA_MARK_DONE },
    };
    static const int cpu[][3] = {
        { GPURSA_STAGE_CPU_PREP, GPURSA_MARK_RUN, GPURSA_MARK_PREP },
        { GPURSA_STAGE_CPU_SUBMIT, GPURSA_MARK_PREP, GPURSA_MARK_SUB },
        { GPURSA_STAGE_CPU_TOPUP, GPURSA_MARK_SUB, GPURSA_MARK_TOP },
        { GPURSA_STAGE_CPU_WAIT, GPURSA_MARK_TOP, GPURSA_MARK_HOME },
        { GPURSA_STAGE_CPU_DONE, GPURSA_MARK_HOME, GPURSA_MARK_DONE },
    };

    gpursa_stages_add(h, GPURSA_STAGE_START, gpursa_us(s->t_flush_ns, m->t[GPURSA_MARK_RUN]), 1);
    for (size_t i = 0; i < sizeof(wall) / sizeof(wall[0]); i++)
        gpursa_stages_add(h, wall[i][0], gpursa_us(m->t[wall[i][1]], m->t[wall[i][2]]), 1);
    for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
        gpursa_stages_add(h, cpu[i][0], gpursa_us(m->c[cpu[i][1]], m->c[cpu[i][2]]), 1);
    gpursa_stages_add(h, GPURSA_STAGE_KERNEL, (uint64_t)(kernel_s * 1e6), 1);
    for (size_t i = 0; i < n; i++)
        gpursa_stages_add(h, GPURSA_STAGE_TOTAL, gpursa_us(s->rv[i]->t_enq_ns, m->t[GPURSA_MARK_DONE]), 1);
}

static void gpursa_runner_run(gpursa_runner *s)
{
    gpursa_dev *d = s->dev;
    gpursa_qrt *rt = d->rt;
    gpursa_queue *q = rt->q;
    gpursa_stats *st = q->stats;
    gpursa_stages *stages = st->stages;
    gpursa_marks mk = { { 0 }, { 0 } };
    double kernel_s = 0;
    const gpursa_gpu_backend_ops *ops = q->ops;
    gpursa_req_list cpu = { 0 };
    gpursa_gpu_batch *batch;
    gpursa_queue_key *last_key = NULL;
    gpursa_gpu_key *last_gk = NULL;
    size_t n = 0, total = s->reqs.count, len;
    int rc, unsupported = 0;

    gpursa_mark(stages, &mk, GPURSA_MARK_RUN);
    s->batch_no++;
    if (s->measure)
        gpursa_measure(s, s->reqs.head->key);
    if (!gpursa_runner_reserve(s, total > GPURSA_POOL ? total : GPURSA_POOL)
        || (batch = gpursa_runner_batch(s, s->size_index)) == NULL) {
        atomic_fetch_add_explicit(&st->fb_gpu_error, total, memory_order_relaxed);
        gpursa_cpu_pool_push(rt, &s->reqs);
        return;
    }
    /* Gather, with each key's GPU copy (uploaded on first use). */
    for (gpursa_req *r = s->reqs.head, *next; r != NULL; r = next) {
        next = r->next;
        if (r->key != last_key) {
            last_key = r->key;
            last_gk = gpursa_dev_key(d, r->key, &unsupported);
        }
        if (last_gk == NULL) {
            atomic_fetch_add_explicit(unsupported ? &st->fb_unsupported_key : &st->fb_gpu_error,
                                      1, memory_order_relaxed);
            gpursa_list_append(&cpu, r);
            continue;
        }
        s->rv[n] = r;
        s->items[n].key = last_gk;
        n++;
        if (stages != NULL)
            gpursa_stages_add(stages, GPURSA_STAGE_WAIT, gpursa_us(r->t_enq_ns, s->t_flush_ns), 1);
    }
    s->reqs.head = s->reqs.tail = NULL;
    s->reqs.count = 0;
    if (n == 0)
        goto end;
    len = s->rv[0]->key->len;
    n = gpursa_runner_blind(s, n, &cpu);
    if (n == 0)
        goto end;

    gpursa_mark(stages, &mk, GPURSA_MARK_PREP);
    rc = ops->batch_submit(batch, s->items, n);
    gpursa_mark(stages, &mk, GPURSA_MARK_SUB);
    if (rc == GPURSA_GPU_OK) {
        gpursa_runner_topup(s, n, batch);  /* CPU work while the device computes */
        gpursa_mark(stages, &mk, GPURSA_MARK_TOP);
        rc = ops->batch_wait(batch);
        gpursa_mark(stages, &mk, GPURSA_MARK_HOME);
        if (stages != NULL && ops->batch_times != NULL)
            ops->batch_times(batch, &kernel_s, NULL, NULL);
    }
    if (rc != GPURSA_GPU_OK) {
        atomic_fetch_add_explicit(&st->fb_gpu_error, n, memory_order_relaxed);
        gpursa_runner_to_cpu(s, 0, n, &cpu);
        gpursa_dev_failed(d, rc);
        gpursa_dev_drop_keys_if_down(d);   /* before the requests go to the CPU */
        OPENSSL_cleanse(s->outbuf, n * len);
        goto wipe;
    }
    /* A good batch ends a run of errors and the back-off, but not while the
     * device is down: this batch went out before another runner's batch
     * found the device lost, and the reopen (which waits for it) must still
     * back off from where the loss left it, not retry at once. */
    pthread_mutex_lock(&d->mu);
    if (!d->down) {
        d->consecutive_errors = 0;
        d->backoff_ms = 0;
    }
    pthread_mutex_unlock(&d->mu);
    gpursa_stats_batch(st, n);
    {
        gpursa_req_list redo = { 0 };
        size_t good = 0;

        /* Counted before any caller can see its answer (and read the stats). */
        for (size_t i = 0; i < n; i++)
            good += s->items[i].status == GPURSA_ITEM_OK;
        gpursa_stats_ops(st, rt->counts_host ? GPURSA_PATH_HOST : GPURSA_PATH_GPU, len, good);
        /* Good results first, all at once (rv is compacted in place); the
         * rest are never released but recomputed on the CPU, here (rare). */
        good = 0;
        for (size_t i = 0; i < n; i++) {
            gpursa_req *r = s->rv[i];

            if (s->items[i].status == GPURSA_ITEM_OK) {
                memcpy(r->out, s->outbuf + i * len, len);
                s->rv[good++] = r;
            } else {
                if (s->items[i].status == GPURSA_ITEM_FAULT)
                    atomic_fetch_add_explicit(&st->faults, 1, memory_order_relaxed);
                gpursa_list_append(&redo, r);
            }
        }
        /* Before the answers go out: a caller may free its request then. */
        if (stages != NULL) {
            gpursa_mark(stages, &mk, GPURSA_MARK_DONE);
            gpursa_runner_stages(s, stages, good, &mk, kernel_s);
        }
        gpursa_req_complete_ok(rt, d, s->rv, good, s->wv);
        atomic_fetch_add_explicit(&st->recomputed, redo.count, memory_order_relaxed);
        for (gpursa_req *r = redo.head, *next; r != NULL; r = next) {
            next = r->next;
            gpursa_req_cpu(rt, r);
            ERR_clear_error();
        }
    }
    OPENSSL_cleanse(s->outbuf, n * len);
wipe:
    OPENSSL_cleanse(s->rbuf, n * len);
    OPENSSL_cleanse(s->rinvbuf, n * len);
end:
    gpursa_cpu_pool_push(rt, &cpu);
}

void *gpursa_runner_main(void *arg)
{
    gpursa_runner *s = arg;
    gpursa_dev *d = s->dev;
    unsigned tstate_seen = 0;
    int measured;

    gpursa_thread_name("gpursa-run");
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!s->filled && !s->quit && tstate_seen == atomic_load(&d->rt->tstate_gen))
            pthread_cond_wait(&s->cond, &d->mu);
        if (tstate_seen != atomic_load(&d->rt->tstate_gen)) {
            pthread_mutex_unlock(&d->mu);
            gpursa_thread_state_check(d->rt, &tstate_seen);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        if (!s->filled)
            break;
        pthread_mutex_unlock(&d->mu);
        gpursa_runner_run(s);
        gpursa_dev_drop_keys_if_down(d);   /* the last batch of a device gone down */
        pthread_mutex_lock(&d->mu);
        s->filled = 0;
        d->busy--;
        measured = s->measure;
        s->measure = 0;
        /* A crossover just measured changes every deadline of its key size:
         * the dispatcher decides again then. */
        if (!measured && gpursa_dev_runner_next(d, s))
            continue;
        if (measured || gpursa_dev_runner_done(d))
            pthread_cond_signal(&d->cond);
    }
    pthread_mutex_unlock(&d->mu);
    OPENSSL_thread_stop();
    return NULL;
}
