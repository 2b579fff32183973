/* SPDX-License-Identifier: Apache-2.0 */
/*
 * When a batch flushes and where it goes. Each device's dispatcher thread
 * flushes a modulus size's pending list when it is full or its oldest
 * request reached max_wait_us, to a free runner if it reaches the crossover
 * and to the CPU workers if not; a small batch while the device is busy
 * waits for company first. The submitting side records arrivals (the rate
 * estimate) and decides whether a batch is likely to form at all. Also
 * here: how many batches may be in flight, and when a batch counts as full,
 * on a device of the process's own and on one shared through NVIDIA MPS.
 */
#include <limits.h>
#include <stdint.h>
#include <time.h>
#include "queue/gpursa_queue_int.h"

static void gpursa_abs_deadline(struct timespec *ts, uint64_t ns)
{
    ts->tv_sec = (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
}

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

/* The batch size below which a flush of key size si goes to the CPU
 * workers: the crossover, or 1 (the device takes any batch) with no idle
 * core (cpu_fallback = auto) or never. d->mu held. */
static int gpursa_small_threshold(gpursa_dev *d, int si)
{
    int xo = atomic_load(&d->xover[si]);
    int threshold = xo >= 0 ? xo : 1;

    if (threshold > 1 && threshold != INT_MAX && !gpursa_cpu_spare(d->rt))
        threshold = 1;
    return threshold;
}

/* Key size si's pending list was taken: a new batch starts with the next
 * request (the hold of gpursa_pend_deadline ends). d->mu held. */
static void gpursa_pend_taken(gpursa_dev *d, int si)
{
    d->held[si] = 0;
    d->wave_ns[si] = 0;
}

/* Flushes key size si's pending list (d->mu held). Returns 0 when it needs a free runner. The
 * batch goes to the runner prefer if it is free (the one that calls), else
 * to the first free one. A runner given the batch is returned in *wake, to
 * be signalled once d->mu is released: signalled under it, the runner would
 * wake only to block on the lock the dispatcher still holds, a second
 * context switch per batch. */
static int gpursa_flush(gpursa_dev *d, int si, gpursa_runner *prefer, gpursa_runner **wake)
{
    gpursa_req_list *l = &d->pend[si], out = { 0 };
    gpursa_qrt *rt = d->rt;
    gpursa_stats *st = rt->q->stats;
    int xo = atomic_load(&d->xover[si]);
    int threshold = gpursa_small_threshold(d, si);
    gpursa_runner *s = NULL;

    if (d->down) {
        atomic_fetch_add_explicit(&st->fb_no_device, l->count, memory_order_relaxed);
        gpursa_list_splice(&out, l);
        gpursa_pend_taken(d, si);
        gpursa_cpu_pool_push(rt, &out);
        return 1;
    }
    if (l->count < (size_t)threshold) {
        atomic_fetch_add_explicit(&st->fb_small_batch, l->count, memory_order_relaxed);
        gpursa_list_splice(&out, l);
        gpursa_pend_taken(d, si);
        gpursa_cpu_pool_push(rt, &out);
        return 1;
    }
    if (d->busy >= d->max_busy && !(d->full_skips_cap && l->count >= d->full_batch))
        return 0;
    if (prefer != NULL && !prefer->filled)
        s = prefer;
    for (int i = 0; s == NULL && i < d->nrunners; i++) {
        if (!d->runners[i].filled) {
            s = &d->runners[i];
            break;
        }
    }
    if (s == NULL)
        return 0;
    gpursa_list_take(&s->reqs, l, rt->q->cfg.max_batch);
    if (l->head == NULL)
        l->tail = NULL;
    gpursa_pend_taken(d, si);
    s->size_index = si;
    s->t_flush_ns = rt->q->stats->stages != NULL ? gpursa_now_ns() : 0;
    s->measure = xo == GPURSA_XOVER_UNMEASURED;
    if (s->measure)
        atomic_store(&d->xover[si], GPURSA_XOVER_MEASURING);
    s->filled = 1;
    d->busy++;
    *wake = s;
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
 * kernel uses the GPU far worse than a 500-item one. With many batches in
 * flight a process's deadline cuts its closed loop into small batches; with
 * two, requests gather while both run and leave as one batch when one
 * returns. A process whose own load fills 512-item batches must not be held
 * to two: each runner blinds its own batch, and two runners cannot keep
 * such batches coming. An explicit device_batches is a plain limit, full
 * batches included. Figures: doc/design.md, "What the queue's settings rest on".
 */
void gpursa_dev_set_max_busy(gpursa_dev *d)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(d);
    gpursa_queue *q = d->rt->q;
    int shared = ops->device_shared != NULL && ops->device_shared(d->gd);
    int want = q->cfg.device_batches != 0 ? (int)q->cfg.device_batches
               : shared ? GPURSA_SHARED_DEVICE_BATCHES : d->nrunners;

    d->max_busy = want < d->nrunners ? want : d->nrunners;
    d->full_skips_cap = q->cfg.device_batches == 0 && shared;
    d->full_batch = d->full_skips_cap && q->cfg.max_batch > GPURSA_SHARED_FULL_BATCH
                    ? GPURSA_SHARED_FULL_BATCH : q->cfg.max_batch;
    d->shared_company = !d->full_skips_cap ? 0
                        : d->full_batch < GPURSA_SHARED_COMPANY ? d->full_batch
                        : GPURSA_SHARED_COMPANY;
    gpursa_log_q(q, 2, "device %d: %s; a batch of %zu is full; %d batches in flight at most%s",
                 d->index, shared ? "shared with other processes (MPS)" : "not shared",
                 d->full_batch, d->max_busy, d->full_skips_cap ? " but full ones" : "");
}

static int gpursa_dev_batch_likely(gpursa_dev *d, int si, uint64_t now);

/*
 * A batch below the crossover while the device runs batches of this process
 * waits for company, up to GPURSA_HOLD_WAITS deadlines, and goes to the
 * device with the requests that arrive meanwhile once they reach the
 * crossover (gpursa_dev_submit wakes the dispatcher then); only what is
 * still small after that goes to the CPU workers. Why: in a closed loop
 * (openssl speed, a server's connections) requests come back in waves as
 * batches finish, and a deadline cuts each wave, leaving small remainders.
 * On the CPU workers those remainders take whole cores from the host (under
 * MPS, many processes at once) for no more throughput. Sending them to the
 * device as batches of their own (cpu_fallback = never) is worse: under MPS
 * each small batch holds one of the process's hardware queues for a whole
 * kernel, and the batches behind it wait. A device with nothing running
 * keeps the plain deadline: nothing is coming back.
 *
 * On a device shared through MPS (device_batches = auto) a batch below
 * GPURSA_SHARED_COMPANY items waits the same way whatever the crossover
 * (min_gpu_batch = 1 included), and then goes to the device unless it is
 * below the crossover. There a process is one of many (a worker of async
 * nginx) and often sees a trickle: with its deadline alone it sends a batch
 * of one or two while its other batch runs, and every batch costs the host
 * as much as several of its items (wake-ups of the dispatcher and a runner,
 * the runner's device calls, the completion), where the host's CPU is what
 * such a server runs out of. Held, the requests leave together when the
 * batch in flight returns, about twice as many a batch, at the cost of
 * waiting for it. A process whose load makes batches of
 * GPURSA_SHARED_COMPANY is not held (a batch's fixed cost is small beside
 * its items'); an explicit device_batches turns this off.
 *
 * How long: waves come every few ms, so a short hold misses many; a long
 * one lengthens the round trip of the requests held, which costs a closed
 * loop throughput. Eight deadlines frees most of the cores for little
 * throughput (doc/design.md, "What the queue's settings rest on").
 */
#define GPURSA_HOLD_WAITS 8u
/* The size a batch of key size si waits for while the device runs batches of
 * this process: the crossover (below it the batch would go to the CPU
 * workers) or on a shared device GPURSA_SHARED_COMPANY, the larger; 0: none
 * (a device that never wins takes no batch to wait for). d->mu held. */
static size_t gpursa_pend_company(gpursa_dev *d, int si)
{
    int threshold = gpursa_small_threshold(d, si);
    size_t company = d->shared_company;

    if (threshold == INT_MAX)
        return 0;
    if (d->rt->q->cfg.cpu_fallback != GPURSA_CPU_FALLBACK_NEVER && threshold > 1
        && (size_t)threshold > company)
        company = (size_t)threshold;
    return company;
}

static int gpursa_pend_waits_for_company(gpursa_dev *d, int si)
{
    return d->busy != 0 && d->pend[si].count < gpursa_pend_company(d, si);
}

int gpursa_dev_runner_done(gpursa_dev *d)
{
    if (d->wants_runner || (d->down && d->busy == 0)) {
        d->wants_runner = 0;
        return 1;
    }
    if (d->busy != 0)
        return 0;
    /* The device runs nothing of this process now: a batch that waited for
     * company no longer does (its deadline moves). */
    for (int si = 0; si < GPURSA_NSIZES; si++)
        if (d->pend[si].head != NULL && d->pend[si].count < gpursa_pend_company(d, si))
            return 1;
    return 0;
}

/* The flush time of a key size's pending list. A batch that the arrival rate says will not reach
 * the crossover goes to the CPU workers at once (its oldest request's
 * arrival) instead of after max_wait_us: async callers always queue (they
 * must pause for other jobs to run and arrive at all), so a lone one would
 * otherwise wait the whole deadline for a batch that never forms. The rate
 * estimate corrects itself within a few arrivals once a burst starts.
 * The hold starts at the batch's plain deadline. Once the requests that
 * came meanwhile make the crossover, the batch goes with them at their own
 * deadline (from the first of them): released at the crossover itself it
 * would be a batch of just that size, cut out of the wave. d->mu held. */
static uint64_t gpursa_pend_deadline(gpursa_dev *d, int si, uint64_t now,
                                      uint64_t wait_ns)
{
    uint64_t t = d->pend[si].head->t_enq_ns;

    if (!gpursa_dev_batch_likely(d, si, now))
        return t;
    if (!d->held[si] && now >= t + wait_ns && gpursa_pend_waits_for_company(d, si))
        d->held[si] = 1;
    if (!d->held[si])
        return t + wait_ns;
    if (gpursa_pend_waits_for_company(d, si))
        return t + GPURSA_HOLD_WAITS * wait_ns;
    return (d->wave_ns[si] != 0 ? d->wave_ns[si] : t) + wait_ns;
}

/* Flushes one key size's pending list that is due: full lists first, then
 * those past their deadline, oldest first (d->mu held). A list that needs a runner when
 * none is free is marked in tried[] (and wants_runner set) and does not
 * hold up another that can go (to the CPU workers, say). 1 if one went. */
static int gpursa_flush_due(gpursa_dev *d, uint64_t now, uint64_t wait_ns, int *tried,
                            gpursa_runner *prefer, gpursa_runner **wake)
{
    for (int pass = 0; pass < 2; pass++) {
        for (;;) {
            uint64_t oldest = UINT64_MAX;
            int best = -1;

            for (int si = 0; si < GPURSA_NSIZES; si++) {
                gpursa_req_list *l = &d->pend[si];
                int eligible;

                if (l->head == NULL || tried[si])
                    continue;
                eligible = pass == 0 ? l->count >= d->full_batch
                                     : gpursa_pend_deadline(d, si, now, wait_ns) <= now;
                if (eligible && l->head->t_enq_ns < oldest) {
                    best = si;
                    oldest = l->head->t_enq_ns;
                }
            }
            if (best < 0)
                break;
            tried[best] = 1;
            if (gpursa_flush(d, best, prefer, wake))
                return 1;
            d->wants_runner = 1;
        }
    }
    return 0;
}

int gpursa_dev_runner_next(gpursa_dev *d, gpursa_runner *r)
{
    int tried[GPURSA_NSIZES] = { 0 };
    gpursa_runner *wake = NULL;

    if (d->down || d->quit || r->quit)
        return 0;
    return gpursa_flush_due(d, gpursa_now_ns(), (uint64_t)d->rt->q->cfg.max_wait_us * 1000u,
                            tried, r, &wake) && wake == r;
}

void *gpursa_dispatcher(void *arg)
{
    gpursa_dev *d = arg;
    gpursa_qrt *rt = d->rt;
    uint64_t wait_ns = (uint64_t)rt->q->cfg.max_wait_us * 1000u;

    gpursa_thread_name("gpursa-disp");
    pthread_mutex_lock(&d->mu);
    while (!d->quit) {
        uint64_t now = gpursa_now_ns(), next = UINT64_MAX;
        int tried[GPURSA_NSIZES] = { 0 };
        gpursa_runner *wake = NULL;

        d->wants_runner = 0;

        if (d->down && d->busy == 0 && now >= d->retry_at_ns) {
            pthread_mutex_unlock(&d->mu);
            gpursa_dev_reopen(d);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        if (gpursa_flush_due(d, now, wait_ns, tried, NULL, &wake)) {
            /* The runner's filled flag was set under d->mu, which it reads
             * before it waits: a signal after the unlock is never lost. */
            if (wake != NULL) {
                pthread_mutex_unlock(&d->mu);
                pthread_cond_signal(&wake->cond);
                pthread_mutex_lock(&d->mu);
            }
            continue;
        }
        /* Sleep until the next deadline, a runner frees up, work arrives. */
        for (int si = 0; si < GPURSA_NSIZES; si++) {
            gpursa_req_list *l = &d->pend[si];

            if (l->head != NULL && !tried[si]) {
                uint64_t t = gpursa_pend_deadline(d, si, now, wait_ns);

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

/* Would a batch of key size si reach the crossover before its deadline,
 * counting the requests pending and those the arrival rate promises?
 * d->mu held. */
static int gpursa_dev_batch_likely(gpursa_dev *d, int si, uint64_t now)
{
    uint64_t wait_ns = (uint64_t)d->rt->q->cfg.max_wait_us * 1000u;
    int xo = atomic_load(&d->xover[si]);
    gpursa_req_list *l = &d->pend[si];
    uint64_t end;
    double window, expected;

    if (d->down)
        return 0;
    if (xo <= 1)
        return 1;                        /* any batch goes to the device */
    /* cpu_fallback=never: likewise. (auto decides only where a small batch
     * goes, in gpursa_flush: a lone caller computing inline uses its own
     * thread, which would otherwise block for a whole kernel; nginx's
     * workers are such callers, doc/design.md, "What the queue's settings
     * rest on") */
    if (xo != INT_MAX && d->rt->q->cfg.cpu_fallback == GPURSA_CPU_FALLBACK_NEVER)
        return 1;
    /* A small batch held for company has that much longer (see
     * gpursa_pend_waits_for_company). */
    if (gpursa_pend_waits_for_company(d, si))
        wait_ns *= GPURSA_HOLD_WAITS;
    end = l->head != NULL ? l->head->t_enq_ns + wait_ns : now + wait_ns;
    window = end > now ? (double)(end - now) : 0;
    expected = d->gap_ns[si] > 0 ? window / d->gap_ns[si] : 0;
    return (double)l->count + 1 + expected >= (double)xo;
}

/* Every arrival feeds the rate estimate, queued or not. d->mu held; now
 * read under it, so arrivals are in order (a gap is never negative). */
static void gpursa_dev_arrival(gpursa_dev *d, int si, uint64_t now)
{
    if (d->last_arrival[si] != 0 && now >= d->last_arrival[si]) {
        double gap = (double)(now - d->last_arrival[si]);

        d->gap_ns[si] = d->gap_ns[si] == 0 ? gap : 0.875 * d->gap_ns[si] + 0.125 * gap;
    }
    if (now > d->last_arrival[si])
        d->last_arrival[si] = now;
}

int gpursa_dev_decide(gpursa_dev *d, int si)
{
    uint64_t now;
    int likely;

    pthread_mutex_lock(&d->mu);
    now = gpursa_now_ns();
    gpursa_dev_arrival(d, si, now);
    likely = gpursa_dev_batch_likely(d, si, now);
    pthread_mutex_unlock(&d->mu);
    return likely;
}

int gpursa_dev_submit(gpursa_dev *d, gpursa_req *r, int mode)
{
    int si = r->key->size_index;
    gpursa_req_list *l = &d->pend[si];
    uint64_t now;
    int xo, wake;

    pthread_mutex_lock(&d->mu);
    now = gpursa_now_ns();
    if (mode != GPURSA_SUBMIT_QUEUE)
        gpursa_dev_arrival(d, si, now);
    if (mode == GPURSA_SUBMIT_DECIDE && !gpursa_dev_batch_likely(d, si, now)) {
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    atomic_fetch_add_explicit(&d->load, 1, memory_order_relaxed);
    r->t_enq_ns = now;
    gpursa_list_append(l, r);
    if (d->held[si] && d->wave_ns[si] == 0)
        d->wave_ns[si] = now;
    /* The dispatcher needs to hear of a new deadline, a full batch, or a
     * small batch held for company reaching the crossover or the shared
     * device's company size. Signalled after the unlock: the dispatcher
     * reads the lists under d->mu before it waits, and woken under the lock
     * it would block on it at once. */
    xo = atomic_load(&d->xover[si]);
    wake = l->count == 1 || l->count == d->full_batch || (xo > 1 && l->count == (size_t)xo)
           || l->count == d->shared_company;
    pthread_mutex_unlock(&d->mu);
    if (wake)
        pthread_cond_signal(&d->cond);
    return 1;
}
