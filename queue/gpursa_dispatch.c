/*
 * Per device: a dispatcher thread that decides when a batch flushes (full,
 * or its oldest request reached max_wait_us) and where it goes (a runner if
 * it reaches the crossover, the CPU workers if not), and a few runner
 * threads, each owning one reusable gpu batch per modulus size and staging
 * buffers. A runner blinds, submits, waits and completes its batch; with
 * several runners, consecutive batches overlap on the device.
 *
 * Failures: a batch that fails to launch, copy or wait completes every
 * request on the CPU workers; device loss (or three failures in a row)
 * takes the device down, and the dispatcher reopens it with exponential
 * back-off once no runner uses it. FAULT items are recomputed on the CPU.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

#define GPURSA_BACKOFF_MIN_MS 10u
#define GPURSA_BACKOFF_MAX_MS 5000u
#define GPURSA_ERRORS_BEFORE_DOWN 3

static const int gpursa_class_bits[GPURSA_NCLASS] = { 1024, 2048, 3072, 4096 };

static void gpursa_pool_drop(gpursa_pair_pool *p);

static const gpursa_gpu_backend_ops *gpursa_dev_ops(const gpursa_dev *d)
{
    return d->rt->q->ops;
}

static void gpursa_abs_deadline(struct timespec *ts, uint64_t ns)
{
    ts->tv_sec = (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
}

/* ---- keys on the device ------------------------------------------------ */

/* The key's GPU copy on this device, uploaded on first use. NULL with
 * *unsupported set when the backend refuses the key, NULL alone on error. */
static gpursa_gpu_key *gpursa_dev_key(gpursa_dev *d, gpursa_queue_key *qk, int *unsupported)
{
    gpursa_qkey_dev *e = &qk->dev[d->slot_no];
    gpursa_gpu_key *gk = NULL;

    *unsupported = 0;
    pthread_mutex_lock(&d->key_mu);
    if (e->rt == d->rt) {
        gk = e->gk;
        *unsupported = e->unsupported;
    } else {
        int rc = gpursa_dev_ops(d)->key_upload(d->gd, &qk->km, &gk);

        if (rc == GPURSA_GPU_OK) {
            e->rt = d->rt;
            e->gk = gk;
            e->unsupported = 0;
        } else {
            gk = NULL;
            if (rc == GPURSA_GPU_ERR_UNSUPPORTED || rc == GPURSA_GPU_ERR_INVALID) {
                e->rt = d->rt;
                e->gk = NULL;
                e->unsupported = 1;
                *unsupported = 1;
                atomic_store_explicit(&qk->refused, 1, memory_order_relaxed);
            }
        }
    }
    pthread_mutex_unlock(&d->key_mu);
    return gk;
}

void gpursa_dev_forget_key(gpursa_dev *d, gpursa_queue_key *qk)
{
    gpursa_qkey_dev *e = &qk->dev[d->slot_no];

    pthread_mutex_lock(&d->key_mu);
    if (e->rt == d->rt && e->gk != NULL && d->gd != NULL)
        gpursa_dev_ops(d)->key_free(d->gd, e->gk);
    e->rt = NULL;
    e->gk = NULL;
    e->unsupported = 0;
    pthread_mutex_unlock(&d->key_mu);
}

static void gpursa_dev_forget_all_keys(gpursa_dev *d)
{
    pthread_mutex_lock(&gpursa_q_global_lock);
    for (gpursa_queue_key *k = d->rt->q->keys; k != NULL; k = k->next)
        gpursa_dev_forget_key(d, k);
    pthread_mutex_unlock(&gpursa_q_global_lock);
}

/* ---- slots ----------------------------------------------------------- */

static int gpursa_slot_reserve(gpursa_slot *s, size_t n)
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

static void gpursa_slot_free_batches(gpursa_slot *s)
{
    for (int c = 0; c < GPURSA_NCLASS; c++) {
        if (s->batch[c] != NULL)
            gpursa_dev_ops(s->dev)->batch_free(s->batch[c]);
        s->batch[c] = NULL;
    }
}

static void gpursa_slot_release(gpursa_slot *s)
{
    gpursa_slot_free_batches(s);
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
 * This slot's reusable batch of class cls. The first batch of a class on a
 * device makes every slot's at once: a batch's pinned staging and device
 * buffers come from cudaHostAlloc / cudaMalloc, which hold up the device's
 * other CUDA calls (other runners' launches and waits) while they run, so
 * one made under load, when a sixteenth runner first gets work, stalled the
 * batches in flight (H100: batch preparation p99.9 41 ms, max 138 ms, and
 * the waits of the others with it; bench/RESULTS.md). The memory is what a
 * busy process would take anyway: nslots batches of max_batch items per
 * modulus size used. A slot whose batch could not be made tries again at
 * its own next batch.
 */
static gpursa_gpu_batch *gpursa_slot_batch(gpursa_slot *s, int cls)
{
    gpursa_dev *d = s->dev;
    gpursa_gpu_batch *b;

    pthread_mutex_lock(&d->batch_mu);
    if (s->batch[cls] == NULL) {
        for (int i = 0; i < d->nslots; i++) {
            gpursa_slot *o = &d->slots[i];

            if (o->batch[cls] == NULL
                && gpursa_dev_ops(d)->batch_new(d->gd, gpursa_class_bits[cls],
                                                d->rt->q->cfg.max_batch,
                                                &o->batch[cls]) != GPURSA_GPU_OK)
                o->batch[cls] = NULL;
        }
    }
    b = s->batch[cls];
    pthread_mutex_unlock(&d->batch_mu);
    return b;
}

/* Device failure bookkeeping: loss takes the device down at once, other
 * errors after a few in a row. */
static void gpursa_dev_failed(gpursa_dev *d, int rc)
{
    gpursa_queue *q = d->rt->q;

    pthread_mutex_lock(&d->mu);
    d->consecutive_errors++;
    if (!d->down && (rc == GPURSA_GPU_ERR_LOST || rc == GPURSA_GPU_ERR_NODEV
                     || d->consecutive_errors >= GPURSA_ERRORS_BEFORE_DOWN)) {
        d->down = 1;
        d->backoff_ms = d->backoff_ms == 0 ? GPURSA_BACKOFF_MIN_MS
                        : d->backoff_ms * 2 > GPURSA_BACKOFF_MAX_MS ? GPURSA_BACKOFF_MAX_MS
                        : d->backoff_ms * 2;
        d->retry_at_ns = gpursa_now_ns() + (uint64_t)d->backoff_ms * 1000000u;
        gpursa_log_q(q, 1, "device %d: %s; using the CPU, reopening in %u ms",
                     d->index, gpursa_gpu_rc_string(rc), d->backoff_ms);
        pthread_cond_signal(&d->cond);
    }
    pthread_mutex_unlock(&d->mu);
}

static double gpursa_time_batch(gpursa_slot *s, gpursa_gpu_batch *b, size_t n, int *ok)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(s->dev);
    uint64_t t0 = gpursa_now_ns();

    *ok = ops->batch_submit(b, s->items, n) == GPURSA_GPU_OK && ops->batch_wait(b) == GPURSA_GPU_OK;
    for (size_t i = 0; *ok && i < n; i++)
        *ok = s->items[i].status == GPURSA_ITEM_OK;
    return (double)(gpursa_now_ns() - t0) * 1e-9;
}

/*
 * min_gpu_batch = -1: time a few CPU operations and a batch of 1 and of L
 * on this device with the first key of this size, fit batch time = a + b*n,
 * and take the smallest n where a batch costs less per item than the CPU:
 * n = a / (cpu - b). Runs once per size, in the runner that got the first
 * batch; meanwhile other batches go to the device.
 */
static void gpursa_measure(gpursa_slot *s, gpursa_queue_key *qk)
{
    gpursa_dev *d = s->dev;
    gpursa_queue *q = d->rt->q;
    size_t len = qk->len, L = q->cfg.max_batch < 32 ? q->cfg.max_batch : 32;
    int cls = s->cls, unsupported, ok = 0, result = 1;
    double cpu = 1e9, t1 = 0, tl = 0, a, b;
    unsigned char *in = NULL, *out = NULL;
    gpursa_gpu_key *gk;
    gpursa_gpu_batch *batch;

    if (L < 2) {
        ok = 1;                          /* no batch to compare: always the device */
        goto end;
    }
    if ((gk = gpursa_dev_key(d, qk, &unsupported)) == NULL
        || (batch = gpursa_slot_batch(s, cls)) == NULL
        || !gpursa_slot_reserve(s, L)
        || (in = malloc(L * len)) == NULL || (out = malloc(len)) == NULL)
        goto end;
    /* Random inputs below n: the blinding generator's r values. */
    if (!gpursa_blind_batch(qk, L, in, s->rinvbuf, s->bnctx)
        || !gpursa_blind_batch(qk, L, s->rbuf, s->rinvbuf, s->bnctx))
        goto end;
    /* The CPU path's cost is CPU time (this thread's: being preempted on
     * a busy machine costs the CPU nothing). */
    for (int i = 0; i < 3; i++) {
        struct timespec a0, a1;
        double t;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a0);
        if (!qk->cpu(qk->cpu_arg, in + (size_t)i * len, out, len))
            goto end;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a1);
        t = (double)(a1.tv_sec - a0.tv_sec) + (double)(a1.tv_nsec - a0.tv_nsec) * 1e-9;
        if (t < cpu)
            cpu = t;
    }
    ERR_clear_error();
    for (size_t i = 0; i < L; i++) {
        s->items[i].key = gk;
        s->items[i].in = in + i * len;
        s->items[i].r = s->rbuf + i * len;
        s->items[i].rinv = s->rinvbuf + i * len;
        s->items[i].out = s->outbuf + i * len;
        s->items[i].status = GPURSA_ITEM_PENDING;
    }
    gpursa_time_batch(s, batch, 1, &ok);               /* warm-up */
    /* Best of two: a preempted run must not decide for the process's life. */
    for (int i = 0; ok && i < 2; i++) {
        double a1 = gpursa_time_batch(s, batch, 1, &ok), al = 0;

        if (ok)
            al = gpursa_time_batch(s, batch, L, &ok);
        if (i == 0 || a1 < t1)
            t1 = a1;
        if (i == 0 || al < tl)
            tl = al;
    }
    if (!ok)
        goto end;
    b = (tl - t1) / (double)(L - 1);
    if (b < 0)
        b = 0;
    a = t1 - b;
    if (a < 0)
        a = 0;
    if (cpu > b) {
        double n = ceil(a / (cpu - b));

        result = n < 1 ? 1 : n > (double)q->cfg.max_batch ? INT_MAX : (int)n;
    } else {
        result = INT_MAX;
    }
    gpursa_log_q(q, 2, "device %d, %d-bit: CPU %.1f us/op, %s batch %.1f us + %.2f us/item: "
                 "min_gpu_batch %d%s", d->index, gpursa_class_bits[cls], cpu * 1e6,
                 q->ops->name, a * 1e6, b * 1e6, result == INT_MAX ? -1 : result,
                 result == INT_MAX ? " (the device never wins: all on the CPU)" : "");
end:
    if (!ok)
        gpursa_log_q(q, 1, "device %d, %d-bit: crossover measurement failed; "
                     "min_gpu_batch 1", d->index, gpursa_class_bits[cls]);
    if (in != NULL) {
        OPENSSL_cleanse(in, L * len);
        free(in);
    }
    if (out != NULL) {
        OPENSSL_cleanse(out, len);
        free(out);
    }
    if (s->cap >= L) {
        OPENSSL_cleanse(s->rbuf, L * len);
        OPENSSL_cleanse(s->rinvbuf, L * len);
        OPENSSL_cleanse(s->outbuf, L * len);
    }
    atomic_store(&d->xover[cls], ok ? result : 1);
}

/* Moves the items of requests [from, to) into the CPU list (order kept). */
static void gpursa_slot_to_cpu(gpursa_slot *s, size_t from, size_t to, gpursa_req_list *cpu)
{
    for (size_t i = from; i < to; i++)
        gpursa_list_append(cpu, s->rv[i]);
}

/* ---- blinding pairs ------------------------------------------------------ */

static void gpursa_pool_drop(gpursa_pair_pool *p)
{
    if (p->r != NULL) {
        OPENSSL_cleanse(p->r, p->cap * p->len);
        OPENSSL_cleanse(p->rinv, p->cap * p->len);
    }
    free(p->r);
    free(p->rinv);
    memset(p, 0, sizeof(*p));
}

/* The pool of key k, made (evicting the least recently used) if needed. */
static gpursa_pair_pool *gpursa_pool_of(gpursa_slot *s, const gpursa_queue_key *k)
{
    gpursa_pair_pool *lru = &s->pools[0];

    for (int i = 0; i < GPURSA_POOL_KEYS; i++) {
        if (s->pools[i].key_id == k->id)
            return &s->pools[i];
        if (s->pools[i].last_use < lru->last_use)
            lru = &s->pools[i];
    }
    gpursa_pool_drop(lru);
    lru->key_id = k->id;
    lru->len = k->len;
    return lru;
}

/* Room for at least want pairs (a new allocation: pairs never move through
 * realloc, which would leave unwiped copies behind). */
static int gpursa_pool_grow(gpursa_pair_pool *p, size_t want)
{
    unsigned char *r, *rinv;

    if (want <= p->cap)
        return 1;
    if ((r = malloc(want * p->len)) == NULL || (rinv = malloc(want * p->len)) == NULL) {
        free(r);
        return 0;
    }
    if (p->n != 0) {
        memcpy(r, p->r, p->n * p->len);
        memcpy(rinv, p->rinv, p->n * p->len);
    }
    if (p->r != NULL) {
        OPENSSL_cleanse(p->r, p->cap * p->len);
        OPENSSL_cleanse(p->rinv, p->cap * p->len);
    }
    free(p->r);
    free(p->rinv);
    p->r = r;
    p->rinv = rinv;
    p->cap = want;
    return 1;
}

/* Grows the pool of k when a refill starts (see GPURSA_POOL_FIRST) and adds
 * up to max_add pairs towards full: one batch inversion per call. */
static int gpursa_pool_fill(gpursa_slot *s, gpursa_pair_pool *p, gpursa_queue_key *k,
                            size_t max_add)
{
    size_t two_groups = 2 * p->group, add;
    size_t want = p->filling ? p->cap : p->cap == 0 ? GPURSA_POOL_FIRST : 2 * p->cap;
    size_t top = two_groups > GPURSA_POOL ? two_groups : GPURSA_POOL;

    if (want > top)
        want = top;
    if (want < two_groups)
        want = two_groups;
    if (want > s->cap)                   /* no more than the slot's batches hold */
        want = s->cap;
    if (want < p->group || !gpursa_pool_grow(p, want))
        return 0;
    p->filling = 1;
    if ((add = p->cap - p->n) > max_add)
        add = max_add;
    if (add != 0 && !gpursa_blind_batch(k, add, p->r + p->n * p->len,
                                        p->rinv + p->n * p->len, s->bnctx))
        return 0;
    p->n += add;
    if (p->n == p->cap) {
        p->filling = 0;
        p->group = 0;
    }
    return 1;
}

/*
 * Blinding pairs for m items of key k into r / rinv, from this runner's pool
 * for k; each pair leaves the pool once and is wiped there. The pool is
 * topped up while the device computes (gpursa_slot_topup), so a batch
 * normally finds its pairs ready; only a pool that runs dry (a first batch,
 * a burst larger than before) is filled here, on the batch's own time. The
 * pool belongs to the runner thread: no lock.
 */
static int gpursa_slot_pairs(gpursa_slot *s, gpursa_queue_key *k, size_t m,
                             unsigned char *r, unsigned char *rinv)
{
    gpursa_pair_pool *p = gpursa_pool_of(s, k);
    size_t len = k->len;

    p->last_use = s->batch_no;
    if (m > p->group)
        p->group = m;
    if (p->n < m && !gpursa_pool_fill(s, p, k, SIZE_MAX))
        return 0;
    if (m > p->group)                    /* (a fill starts the count again) */
        p->group = m;
    p->n -= m;
    memcpy(r, p->r + p->n * len, m * len);
    memcpy(rinv, p->rinv + p->n * len, m * len);
    OPENSSL_cleanse(p->r + p->n * len, m * len);
    OPENSSL_cleanse(p->rinv + p->n * len, m * len);
    return 1;
}

/*
 * While the device computes: refill the pools this batch drew from once
 * they are half empty, GPURSA_TOPUP_CHUNK pairs at a time, and stop as soon
 * as the batch is done: its answers must not wait for blinding work (on a
 * busy H100 host a whole refill took up to 56 ms, and the batches behind
 * it were the p99.9 of the latency: stage times of bench/RESULTS.md). A
 * refill left unfinished goes on during the next batch. The keys are alive
 * (their requests are in the batch); a failure here only means the next
 * batch fills its own.
 *
 * Each chunk pays one constant-time inversion (0.63 ms at 2048 bits on the
 * development machine): with the three-multiplication pairs of the third
 * session, 128-pair chunks made it 5 of a pair's 13 us and the top-up the
 * runners' largest CPU cost per signature on the GPU host (cpu.topup
 * stage). 512 keeps it near 1 us a pair and a chunk to ~2 ms on the GPU
 * host's cores, below a kernel's 3-5 ms, so answers wait at most about one
 * chunk. Pairs now take two multiplications (gpursa_blinding.c; about 4 us
 * a pair here at 512, bench/RESULTS.md "Blinding pairs"), so a larger chunk
 * may pay now: not yet timed on the GPU host.
 */
#define GPURSA_TOPUP_CHUNK 512
static void gpursa_slot_topup(gpursa_slot *s, size_t n, gpursa_gpu_batch *batch)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(s->dev);

    for (int i = 0; i < GPURSA_POOL_KEYS; i++) {
        gpursa_pair_pool *p = &s->pools[i];

        if (p->key_id == 0 || p->last_use != s->batch_no || (p->n > p->cap / 2 && !p->filling))
            continue;
        for (size_t j = 0; j < n; j++) {
            if (s->rv[j]->key->id == p->key_id) {
                do {
                    if (ops->batch_poll(batch) != 0)
                        return;          /* done (or failed): answers first */
                    if (!gpursa_pool_fill(s, p, s->rv[j]->key, GPURSA_TOPUP_CHUNK)) {
                        ERR_clear_error();
                        break;
                    }
                } while (p->filling);
                break;
            }
        }
    }
}

/* Blinds the n gathered requests: same-key runs are made contiguous, then
 * each run takes its pairs from the runner's pool for that key. Requests
 * whose blinding failed move to cpu; returns the number of items left
 * (compacted). */
static size_t gpursa_slot_blind(gpursa_slot *s, size_t n, gpursa_req_list *cpu)
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
        if (gpursa_slot_pairs(s, k, end - pos, s->rbuf + kept * len,
                              s->rinvbuf + kept * len)) {
            for (size_t i = pos; i < end; i++, kept++) {
                s->rv[kept] = s->rv[i];
                s->items[kept] = s->items[i];
            }
        } else {
            gpursa_slot_to_cpu(s, pos, end, cpu);
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

static void gpursa_slot_stages(gpursa_slot *s, gpursa_stages *h, size_t n, const gpursa_marks *m,
                               double kernel_s)
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

static void gpursa_slot_run(gpursa_slot *s)
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
    if (!gpursa_slot_reserve(s, total > GPURSA_POOL ? total : GPURSA_POOL)
        || (batch = gpursa_slot_batch(s, s->cls)) == NULL) {
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
    n = gpursa_slot_blind(s, n, &cpu);
    if (n == 0)
        goto end;

    gpursa_mark(stages, &mk, GPURSA_MARK_PREP);
    rc = ops->batch_submit(batch, s->items, n);
    gpursa_mark(stages, &mk, GPURSA_MARK_SUB);
    if (rc == GPURSA_GPU_OK) {
        gpursa_slot_topup(s, n, batch);  /* CPU work while the device computes */
        gpursa_mark(stages, &mk, GPURSA_MARK_TOP);
        rc = ops->batch_wait(batch);
        gpursa_mark(stages, &mk, GPURSA_MARK_HOME);
        if (stages != NULL && ops->batch_times != NULL)
            ops->batch_times(batch, &kernel_s, NULL, NULL);
    }
    if (rc != GPURSA_GPU_OK) {
        atomic_fetch_add_explicit(&st->fb_gpu_error, n, memory_order_relaxed);
        gpursa_slot_to_cpu(s, 0, n, &cpu);
        gpursa_dev_failed(d, rc);
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
    atomic_fetch_add_explicit(&st->batches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->batch_items, n, memory_order_relaxed);
    {
        gpursa_req_list redo = { 0 };
        size_t good = 0;

        /* Counted before any caller can see its answer (and read the stats). */
        for (size_t i = 0; i < n; i++)
            good += s->items[i].status == GPURSA_ITEM_OK;
        atomic_fetch_add_explicit(rt->counts_host ? &st->ops_host : &st->ops_gpu, good,
                                  memory_order_relaxed);
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
            gpursa_slot_stages(s, stages, good, &mk, kernel_s);
        }
        gpursa_req_complete_ok(rt, d, s->rv, good, s->wv);
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

static void *gpursa_runner(void *arg)
{
    gpursa_slot *s = arg;
    gpursa_dev *d = s->dev;
    unsigned tstate_seen = 0;

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
        gpursa_slot_run(s);
        pthread_mutex_lock(&d->mu);
        s->filled = 0;
        s->measure = 0;
        d->busy--;
        pthread_cond_signal(&d->cond);
    }
    pthread_mutex_unlock(&d->mu);
    OPENSSL_thread_stop();
    return NULL;
}

/* ---- dispatcher -------------------------------------------------------- */

/* Takes up to max requests from the front of l into dst. */
static void gpursa_list_take(gpursa_req_list *dst, gpursa_req_list *l, size_t max)
{
    if (l->count <= max) {
        gpursa_list_splice(dst, l);
        return;
    }
    for (size_t i = 0; i < max; i++) {
        gpursa_req *r = l->head;

        l->head = r->next;
        l->count--;
        gpursa_list_append(dst, r);
    }
}

/* The size below which a flush of class c goes to the CPU workers: the
 * crossover, or 1 (the device takes any batch) with no idle core
 * (cpu_fallback = auto) or never. d->mu held. */
static int gpursa_small_threshold(gpursa_dev *d, int c)
{
    int xo = atomic_load(&d->xover[c]);
    int threshold = xo >= 0 ? xo : 1;

    if (threshold > 1 && threshold != INT_MAX && !gpursa_cpu_spare(d->rt))
        threshold = 1;
    return threshold;
}

/* Class c's pending list was taken: a new batch starts with the next
 * request (the hold of gpursa_class_deadline ends). d->mu held. */
static void gpursa_class_taken(gpursa_dev *d, int c)
{
    d->held[c] = 0;
    d->wave_ns[c] = 0;
}

/* Flushes class c (d->mu held). Returns 0 when it needs a free runner. */
static int gpursa_flush(gpursa_dev *d, int c)
{
    gpursa_req_list *l = &d->pend[c], out = { 0 };
    gpursa_qrt *rt = d->rt;
    gpursa_stats *st = rt->q->stats;
    int xo = atomic_load(&d->xover[c]);
    int threshold = gpursa_small_threshold(d, c);
    gpursa_slot *s = NULL;

    if (d->down) {
        atomic_fetch_add_explicit(&st->fb_no_device, l->count, memory_order_relaxed);
        gpursa_list_splice(&out, l);
        gpursa_class_taken(d, c);
        gpursa_cpu_pool_push(rt, &out);
        return 1;
    }
    if (l->count < (size_t)threshold) {
        atomic_fetch_add_explicit(&st->fb_small_batch, l->count, memory_order_relaxed);
        gpursa_list_splice(&out, l);
        gpursa_class_taken(d, c);
        gpursa_cpu_pool_push(rt, &out);
        return 1;
    }
    if (d->busy >= d->max_busy && !(d->full_skips_cap && l->count >= d->full_batch))
        return 0;
    for (int i = 0; i < d->nslots; i++) {
        if (!d->slots[i].filled) {
            s = &d->slots[i];
            break;
        }
    }
    if (s == NULL)
        return 0;
    gpursa_list_take(&s->reqs, l, rt->q->cfg.max_batch);
    if (l->head == NULL)
        l->tail = NULL;
    gpursa_class_taken(d, c);
    s->cls = c;
    s->t_flush_ns = rt->q->stats->stages != NULL ? gpursa_now_ns() : 0;
    s->measure = xo == GPURSA_XOVER_UNMEASURED;
    if (s->measure)
        atomic_store(&d->xover[c], GPURSA_XOVER_MEASURING);
    s->filled = 1;
    d->busy++;
    pthread_cond_signal(&s->cond);
    return 1;
}

/*
 * When a batch is full and how many may be in flight on the device (after
 * each open; d->mu held or the dispatcher not yet running). A batch of
 * max_batch items is full. device_batches = auto: every runner on a device
 * of this process's own, so that consecutive batches overlap and a small
 * one never waits for a runner. On a device that other processes share
 * through NVIDIA MPS: two, and a batch of 512 items is full (max_batch if
 * smaller) and goes at once however many are in flight. There the GPU runs
 * every process's kernels side by side and is saturated by their sum, and
 * what matters is how much work each kernel carries: a ~100-item RSA-2048
 * kernel uses the GPU far worse than a 500-item one (16 processes on an
 * H100, 2 batches in flight each: 696,000 ops/s at 128 items a batch,
 * 1,082,000 at 512). With 16 batches in flight a process's deadline cut its
 * closed loop into ~110-item batches; with two, requests gather while both
 * run and leave as one batch when one returns (openssl speed -multi 16
 * -async_jobs 960: 551,000-580,000 sign/s with 16, 774,000 with 1,
 * 775,000-789,000 with 2, 769,000 with 3; bench/RESULTS.md, seventh
 * session). A process whose own load fills 512-item batches must not be held
 * to two: each runner blinds its own batch, and one process with 16 threads
 * x 960 jobs held to two (device_batches = 2, a device of its own) made
 * 6,800-item batches at 252,000 sign/s against 700,000 with 16. An explicit
 * device_batches is a plain limit, full batches included.
 */
static void gpursa_dev_set_max_busy(gpursa_dev *d)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(d);
    gpursa_queue *q = d->rt->q;
    int shared = ops->device_shared != NULL && ops->device_shared(d->gd);
    int want = q->cfg.device_batches != 0 ? (int)q->cfg.device_batches
               : shared ? GPURSA_SHARED_DEVICE_BATCHES : d->nslots;

    d->max_busy = want < d->nslots ? want : d->nslots;
    d->full_skips_cap = q->cfg.device_batches == 0 && shared;
    d->full_batch = d->full_skips_cap && q->cfg.max_batch > GPURSA_SHARED_FULL_BATCH
                    ? GPURSA_SHARED_FULL_BATCH : q->cfg.max_batch;
    gpursa_log_q(q, 2, "device %d: %s; a batch of %zu is full; %d batches in flight at most%s",
                 d->index, shared ? "shared with other processes (MPS)" : "not shared",
                 d->full_batch, d->max_busy, d->full_skips_cap ? " but full ones" : "");
}

/* Closes and reopens a device that went down; no runner uses it now and
 * only this thread fills runners, so batches and keys can go without d->mu. */
static void gpursa_dev_reopen(gpursa_dev *d)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(d);
    gpursa_queue *q = d->rt->q;
    gpursa_gpu_device *gd = NULL;
    int rc;

    for (int i = 0; i < d->nslots; i++)
        gpursa_slot_free_batches(&d->slots[i]);
    gpursa_dev_forget_all_keys(d);
    if (d->gd != NULL)
        ops->device_close(d->gd);
    pthread_mutex_lock(&d->key_mu);
    d->gd = NULL;
    pthread_mutex_unlock(&d->key_mu);
    rc = ops->device_open(d->index, q->cfg.variant, &gd);
    pthread_mutex_lock(&d->mu);
    if (rc == GPURSA_GPU_OK) {
        d->gd = gd;
        gpursa_dev_set_max_busy(d);
        d->down = 0;
        d->consecutive_errors = 0;
        atomic_fetch_add(&d->opens, 1);
        gpursa_log_q(q, 1, "device %d: reopened", d->index);
    } else {
        d->backoff_ms = d->backoff_ms * 2 > GPURSA_BACKOFF_MAX_MS ? GPURSA_BACKOFF_MAX_MS
                        : d->backoff_ms * 2;
        d->retry_at_ns = gpursa_now_ns() + (uint64_t)d->backoff_ms * 1000000u;
        gpursa_log_q(q, 1, "device %d: reopen failed (%s); next try in %u ms", d->index,
                     gpursa_gpu_rc_string(rc), d->backoff_ms);
    }
    pthread_mutex_unlock(&d->mu);
}

static int gpursa_dev_batch_likely(gpursa_dev *d, int cls, uint64_t now);

/* A class's flush time. A batch that the arrival rate says will not reach
 * the crossover goes to the CPU workers at once instead of after
 * max_wait_us: async callers always queue (they must pause for other jobs
 * to run and arrive at all), so a lone one would otherwise wait the whole
 * deadline for a batch that never forms. The rate estimate corrects itself
 * within a few arrivals once a burst starts. d->mu held. */
#define GPURSA_LONE_GRACE_NS 0u

/*
 * A batch below the crossover while the device runs batches of this process
 * waits for company, up to GPURSA_HOLD_WAITS deadlines, and goes to the
 * device with the requests that arrive meanwhile once they reach the
 * crossover (gpursa_dev_submit wakes the dispatcher then); only what is
 * still small after that goes to the CPU workers. Why: in a closed loop
 * (openssl speed, a server's connections) requests come back in waves as
 * batches finish, and a deadline cuts each wave, leaving small remainders.
 * 16 processes under MPS sent 2.5 % of their signatures to the CPU workers
 * that way, ~0.4 ms of a core each: a third of the host's cores for no more
 * throughput. Sending them to the device as batches of their own
 * (cpu_fallback = never) was worse: under MPS each small batch holds one of
 * the process's hardware queues for a whole kernel, and batches waited
 * 41 ms there instead of 13 (bench/RESULTS.md, fourth session). A device
 * with nothing running keeps the plain deadline: nothing is coming back.
 *
 * How long: waves come every few ms, so a short hold misses many. Measured
 * (H100, 16 processes under MPS, -async_jobs 512, two runs each): holding
 * 4 / 8 / 16 deadlines left 3,500-5,600 / 300-3,000 / 20-220 small-batch
 * fallbacks per process in 10 s, 13.1 / 10.4-11.8 / 8.6-10.0 of 16 cores
 * busy, 496-498k / 489-492k / 463-487k sign/s (the longer hold makes those
 * requests' round trip longer, and openssl speed keeps a fixed number in
 * flight); p99 at 160,000/s in one process 6.3 / 5.7 / 6.3 ms. 8 frees
 * ~2.5 cores for ~1.5 % of that benchmark's throughput.
 */
#define GPURSA_HOLD_WAITS 8u
static int gpursa_class_waits_for_company(gpursa_dev *d, int cls)
{
    int threshold;

    if (d->busy == 0 || d->rt->q->cfg.cpu_fallback == GPURSA_CPU_FALLBACK_NEVER)
        return 0;
    threshold = gpursa_small_threshold(d, cls);
    return threshold > 1 && threshold != INT_MAX && d->pend[cls].count < (size_t)threshold;
}

/* The hold starts at the batch's plain deadline. Once the requests that
 * came meanwhile make the crossover, the batch goes with them at their own
 * deadline (from the first of them): released at the crossover itself it
 * would be a batch of just that size, cut out of the wave. */
static uint64_t gpursa_class_deadline(gpursa_dev *d, int cls, uint64_t now,
                                      uint64_t wait_ns)
{
    uint64_t t = d->pend[cls].head->t_enq_ns;

    if (!gpursa_dev_batch_likely(d, cls, now))
        return t + GPURSA_LONE_GRACE_NS;
    if (!d->held[cls] && now >= t + wait_ns && gpursa_class_waits_for_company(d, cls))
        d->held[cls] = 1;
    if (!d->held[cls])
        return t + wait_ns;
    if (gpursa_class_waits_for_company(d, cls))
        return t + GPURSA_HOLD_WAITS * wait_ns;
    return (d->wave_ns[cls] != 0 ? d->wave_ns[cls] : t) + wait_ns;
}

static void *gpursa_dispatcher(void *arg)
{
    gpursa_dev *d = arg;
    gpursa_qrt *rt = d->rt;
    uint64_t wait_ns = (uint64_t)rt->q->cfg.max_wait_us * 1000u;

    gpursa_thread_name("gpursa-disp");
    pthread_mutex_lock(&d->mu);
    while (!d->quit) {
        uint64_t now = gpursa_now_ns(), next = UINT64_MAX;
        int flushed = 0, tried[GPURSA_NCLASS] = { 0 };

        if (d->down && d->busy == 0 && now >= d->retry_at_ns) {
            pthread_mutex_unlock(&d->mu);
            gpursa_dev_reopen(d);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        /* Full classes first, then those past their deadline, oldest first.
         * A class that needs a runner when none is free does not hold up
         * another that can go (to the CPU workers, say). */
        for (int pass = 0; pass < 2 && !flushed; pass++) {
            for (;;) {
                uint64_t oldest = UINT64_MAX;
                int best = -1;

                for (int c = 0; c < GPURSA_NCLASS; c++) {
                    gpursa_req_list *l = &d->pend[c];
                    int eligible;

                    if (l->head == NULL || tried[c])
                        continue;
                    eligible = pass == 0 ? l->count >= d->full_batch
                                         : gpursa_class_deadline(d, c, now, wait_ns) <= now;
                    if (eligible && l->head->t_enq_ns < oldest) {
                        best = c;
                        oldest = l->head->t_enq_ns;
                    }
                }
                if (best < 0)
                    break;
                tried[best] = 1;
                if (gpursa_flush(d, best)) {
                    flushed = 1;
                    break;
                }
            }
        }
        if (flushed)
            continue;
        /* Sleep until the next deadline, a runner frees up, work arrives. */
        for (int c = 0; c < GPURSA_NCLASS; c++) {
            gpursa_req_list *l = &d->pend[c];

            if (l->head != NULL && !tried[c]) {
                uint64_t t = gpursa_class_deadline(d, c, now, wait_ns);

                if (t < next)
                    next = t;
            }
        }
        if (d->down && d->busy == 0 && d->retry_at_ns < next)
            next = d->retry_at_ns;
        if (next == UINT64_MAX) {
            pthread_cond_wait(&d->cond, &d->mu);
        } else {
            struct timespec ts;

            gpursa_abs_deadline(&ts, next);
            pthread_cond_timedwait(&d->cond, &d->mu, &ts);
        }
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---- the submitting side ----------------------------------------------- */

/* Would a batch of class cls reach the crossover before its deadline,
 * counting the requests pending and those the arrival rate promises?
 * d->mu held. */
static int gpursa_dev_batch_likely(gpursa_dev *d, int cls, uint64_t now)
{
    uint64_t wait_ns = (uint64_t)d->rt->q->cfg.max_wait_us * 1000u;
    int xo = atomic_load(&d->xover[cls]);
    gpursa_req_list *l = &d->pend[cls];
    uint64_t end;
    double window, expected;

    if (d->down)
        return 0;
    if (xo <= 1)
        return 1;                        /* any batch goes to the device */
    /* cpu_fallback=never: likewise. (auto decides only where a small batch
     * goes, in gpursa_flush: a lone caller computing inline uses its own
     * thread, which would otherwise block; nginx's workers are such callers,
     * and on a busy host the device's few ms per lone signature made them
     * slower, bench/RESULTS.md) */
    if (xo != INT_MAX && d->rt->q->cfg.cpu_fallback == GPURSA_CPU_FALLBACK_NEVER)
        return 1;
    /* A small batch held for company has that much longer (see
     * gpursa_class_waits_for_company). */
    if (gpursa_class_waits_for_company(d, cls))
        wait_ns *= GPURSA_HOLD_WAITS;
    end = l->head != NULL ? l->head->t_enq_ns + wait_ns : now + wait_ns;
    window = end > now ? (double)(end - now) : 0;
    expected = d->gap_ns[cls] > 0 ? window / d->gap_ns[cls] : 0;
    return (double)l->count + 1 + expected >= (double)xo;
}

/* Every arrival feeds the rate estimate, queued or not. d->mu held; now
 * read under it, so arrivals are in order (a gap is never negative). */
static void gpursa_dev_arrival(gpursa_dev *d, int cls, uint64_t now)
{
    if (d->last_arrival[cls] != 0 && now >= d->last_arrival[cls]) {
        double gap = (double)(now - d->last_arrival[cls]);

        d->gap_ns[cls] = d->gap_ns[cls] == 0 ? gap : 0.875 * d->gap_ns[cls] + 0.125 * gap;
    }
    if (now > d->last_arrival[cls])
        d->last_arrival[cls] = now;
}

int gpursa_dev_decide(gpursa_dev *d, int cls)
{
    uint64_t now;
    int likely;

    pthread_mutex_lock(&d->mu);
    now = gpursa_now_ns();
    gpursa_dev_arrival(d, cls, now);
    likely = gpursa_dev_batch_likely(d, cls, now);
    pthread_mutex_unlock(&d->mu);
    return likely;
}

int gpursa_dev_submit(gpursa_dev *d, gpursa_req *r, int mode)
{
    int cls = r->key->cls;
    gpursa_req_list *l = &d->pend[cls];
    uint64_t now;
    int xo;

    pthread_mutex_lock(&d->mu);
    now = gpursa_now_ns();
    if (mode != GPURSA_SUBMIT_QUEUE)
        gpursa_dev_arrival(d, cls, now);
    if (mode == GPURSA_SUBMIT_DECIDE && !gpursa_dev_batch_likely(d, cls, now)) {
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    atomic_fetch_add_explicit(&d->load, 1, memory_order_relaxed);
    r->t_enq_ns = now;
    gpursa_list_append(l, r);
    if (d->held[cls] && d->wave_ns[cls] == 0)
        d->wave_ns[cls] = now;
    /* The dispatcher needs to hear of a new deadline, a full batch, or a
     * small batch held for company reaching the crossover. */
    xo = atomic_load(&d->xover[cls]);
    if (l->count == 1 || l->count == d->full_batch || (xo > 1 && l->count == (size_t)xo))
        pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->mu);
    return 1;
}

/* ---- start / stop ------------------------------------------------------ */

int gpursa_dev_start(gpursa_qrt *rt, gpursa_dev *d, int index, int nslots)
{
    gpursa_queue *q = rt->q;
    pthread_condattr_t ca;
    int rc, xo;

    memset(d, 0, sizeof(*d));
    d->rt = rt;
    d->index = index;
    d->slot_no = (int)(d - rt->dev);
    rc = q->ops->device_open(index, q->cfg.variant, &d->gd);
    if (rc != GPURSA_GPU_OK) {
        gpursa_log_q(q, 1, "%s device %d: open failed (%s)", q->ops->name, index,
                     gpursa_gpu_rc_string(rc));
        d->gd = NULL;
        return 0;
    }
    atomic_store(&d->opens, 1);
    if (q->ops->device_describe != NULL)
        gpursa_log_q(q, 2, "device %d: %s", index, q->ops->device_describe(d->gd));
    /* Host backend: batching is what is being exercised, so measuring a
     * crossover against the CPU makes no sense there. */
    xo = q->cfg.min_gpu_batch >= 0 ? (q->cfg.min_gpu_batch < 1 ? 1 : q->cfg.min_gpu_batch)
         : rt->counts_host ? 1 : GPURSA_XOVER_UNMEASURED;
    for (int c = 0; c < GPURSA_NCLASS; c++)
        atomic_init(&d->xover[c], xo);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->key_mu, NULL);
    pthread_mutex_init(&d->batch_mu, NULL);
    pthread_cond_init(&d->cond, &ca);
    pthread_condattr_destroy(&ca);
    if ((d->slots = calloc((size_t)nslots, sizeof(*d->slots))) == NULL)
        goto fail;
    for (int i = 0; i < nslots; i++) {
        gpursa_slot *s = &d->slots[i];

        s->dev = d;
        pthread_cond_init(&s->cond, NULL);
        if ((s->bnctx = BN_CTX_secure_new()) == NULL
            || pthread_create(&s->th, NULL, gpursa_runner, s) != 0) {
            BN_CTX_free(s->bnctx);
            s->bnctx = NULL;
            pthread_cond_destroy(&s->cond);
            break;
        }
        d->nslots++;
    }
    if (d->nslots == 0)
        goto fail;
    gpursa_dev_set_max_busy(d);
    if (pthread_create(&d->disp, NULL, gpursa_dispatcher, d) != 0)
        goto fail;
    return 1;
fail:
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->nslots; i++) {
        d->slots[i].quit = 1;
        pthread_cond_signal(&d->slots[i].cond);
    }
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < d->nslots; i++) {
        pthread_join(d->slots[i].th, NULL);
        gpursa_slot_release(&d->slots[i]);
    }
    free(d->slots);
    q->ops->device_close(d->gd);
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->key_mu);
    pthread_mutex_destroy(&d->batch_mu);
    memset(d, 0, sizeof(*d));
    return 0;
}

void gpursa_dev_stop(gpursa_dev *d)
{
    pthread_mutex_lock(&d->mu);
    d->quit = 1;
    pthread_cond_broadcast(&d->cond);
    for (int i = 0; i < d->nslots; i++) {
        d->slots[i].quit = 1;
        pthread_cond_signal(&d->slots[i].cond);
    }
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->disp, NULL);
    for (int i = 0; i < d->nslots; i++)
        pthread_join(d->slots[i].th, NULL);
    for (int i = 0; i < d->nslots; i++)
        gpursa_slot_release(&d->slots[i]);
    free(d->slots);
    d->slots = NULL;
    gpursa_dev_forget_all_keys(d);
    if (d->gd != NULL)
        gpursa_dev_ops(d)->device_close(d->gd);
    d->gd = NULL;
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->key_mu);
    pthread_mutex_destroy(&d->batch_mu);
}
