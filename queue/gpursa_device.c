/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The life of one device in a runtime: open it and start its runner and
 * dispatcher threads, keep each key's copy on it, count its failures (loss,
 * or GPURSA_ERRORS_BEFORE_DOWN errors in a row, takes it down: its requests
 * go to the CPU workers), reopen it with exponential back-off once no runner
 * uses it, and stop it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "queue/gpursa_queue_int.h"

#define GPURSA_BACKOFF_MIN_MS 10u
#define GPURSA_BACKOFF_MAX_MS 5000u
#define GPURSA_ERRORS_BEFORE_DOWN 3

/* The key's GPU copy on this device, uploaded on first use. NULL with
 * *unsupported set when the backend refuses the key, NULL alone on error. */
gpursa_gpu_key *gpursa_dev_key(gpursa_dev *d, gpursa_queue_key *qk, int *unsupported)
{
    gpursa_qkey_dev *e = &qk->dev[d->dev_no];
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
    gpursa_qkey_dev *e = &qk->dev[d->dev_no];

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

/* A device that is down keeps no copies of keys: a lost device's are the
 * first to go (the backend wipes what it still can reach), and the next
 * reopen may be seconds away or never succeed. Only when the caller's batch
 * is the last one using the device: a batch in flight still reads its keys.
 * While down no batch is filled, so no key is uploaded until the reopen. */
void gpursa_dev_drop_keys_if_down(gpursa_dev *d)
{
    int drop;

    pthread_mutex_lock(&d->mu);
    drop = d->down && d->busy == 1 && !d->keys_dropped;
    if (drop)
        d->keys_dropped = 1;
    pthread_mutex_unlock(&d->mu);
    if (drop) {
        gpursa_dev_forget_all_keys(d);
        gpursa_log_q(d->rt->q, 2, "device %d: down, its key copies freed", d->index);
    }
}

/* Device failure bookkeeping: loss takes the device down at once, other
 * errors after a few in a row. */
void gpursa_dev_failed(gpursa_dev *d, int rc)
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

/* Closes and reopens a device that went down; no runner uses it now and
 * only this thread fills runners, so batches and keys can go without d->mu. */
void gpursa_dev_reopen(gpursa_dev *d)
{
    const gpursa_gpu_backend_ops *ops = gpursa_dev_ops(d);
    gpursa_queue *q = d->rt->q;
    gpursa_gpu_device *gd = NULL;
    int rc;

    for (int i = 0; i < d->nrunners; i++)
        gpursa_runner_free_batches(&d->runners[i]);
    gpursa_dev_forget_all_keys(d);
    if (d->gd != NULL)
        ops->device_close(d->gd);
    pthread_mutex_lock(&d->key_mu);
    d->gd = NULL;
    pthread_mutex_unlock(&d->key_mu);
    rc = ops->device_open(d->index, &q->cfg.gpu, &gd);
    pthread_mutex_lock(&d->mu);
    if (rc == GPURSA_GPU_OK) {
        d->gd = gd;
        gpursa_dev_set_max_busy(d);
        d->down = 0;
        d->keys_dropped = 0;
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

int gpursa_dev_start(gpursa_qrt *rt, gpursa_dev *d, int index, int nrunners)
{
    gpursa_queue *q = rt->q;
    pthread_condattr_t ca;
    int rc, xo;

    memset(d, 0, sizeof(*d));
    d->rt = rt;
    d->index = index;
    d->dev_no = (int)(d - rt->dev);
    rc = q->ops->device_open(index, &q->cfg.gpu, &d->gd);
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
    for (int si = 0; si < GPURSA_NSIZES; si++)
        atomic_init(&d->xover[si], xo);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->key_mu, NULL);
    pthread_mutex_init(&d->batch_mu, NULL);
    pthread_cond_init(&d->cond, &ca);
    pthread_condattr_destroy(&ca);
    if ((d->runners = calloc((size_t)nrunners, sizeof(*d->runners))) == NULL)
        goto fail;
    for (int i = 0; i < nrunners; i++) {
        gpursa_runner *s = &d->runners[i];

        s->dev = d;
        pthread_cond_init(&s->cond, NULL);
        if ((s->bnctx = BN_CTX_secure_new()) == NULL
            || pthread_create(&s->th, NULL, gpursa_runner_main, s) != 0) {
            BN_CTX_free(s->bnctx);
            s->bnctx = NULL;
            pthread_cond_destroy(&s->cond);
            break;
        }
        d->nrunners++;
    }
    if (d->nrunners == 0)
        goto fail;
    gpursa_dev_set_max_busy(d);
    if (pthread_create(&d->disp, NULL, gpursa_dispatcher, d) != 0)
        goto fail;
    return 1;
fail:
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->nrunners; i++) {
        d->runners[i].quit = 1;
        pthread_cond_signal(&d->runners[i].cond);
    }
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < d->nrunners; i++) {
        pthread_join(d->runners[i].th, NULL);
        gpursa_runner_release(&d->runners[i]);
    }
    free(d->runners);
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
    for (int i = 0; i < d->nrunners; i++) {
        d->runners[i].quit = 1;
        pthread_cond_signal(&d->runners[i].cond);
    }
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->disp, NULL);
    for (int i = 0; i < d->nrunners; i++)
        pthread_join(d->runners[i].th, NULL);
    for (int i = 0; i < d->nrunners; i++)
        gpursa_runner_release(&d->runners[i]);
    free(d->runners);
    d->runners = NULL;
    gpursa_dev_forget_all_keys(d);
    if (d->gd != NULL)
        gpursa_dev_ops(d)->device_close(d->gd);
    d->gd = NULL;
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->key_mu);
    pthread_mutex_destroy(&d->batch_mu);
}
