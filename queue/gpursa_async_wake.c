/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Waking paused ASYNC jobs. One eventfd per ASYNC_WAIT_CTX, registered under
 * a key only gpursa uses, stable for the wait context's life (applications
 * poll it with epoll). If the application set a wait-context callback, the
 * completion calls it too. The registration's cleanup marks the object dead,
 * closes the fd and drops the wait context's reference; signal and drain use
 * the fd only under the lock while it is open, so a late completion never
 * touches a reused fd number. The fd must close with the wait context: an
 * application may free it with a job still paused and never resume that job
 * (HAProxy does when a client leaves mid-handshake, haproxy issue 3453), and
 * a leaked fd per such client would exhaust HAProxy's fd table.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <openssl/async.h>
#include "queue/gpursa_queue_int.h"

/* Its address is the key of our fd in every wait context. */
static const char gpursa_wake_key[] = "gpursa-queue";

void gpursa_wake_ref(gpursa_wake *w)
{
    atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
}

void gpursa_wake_unref(gpursa_wake *w)
{
    if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (w->fd >= 0)
        close(w->fd);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

static void gpursa_wake_cleanup(ASYNC_WAIT_CTX *ctx, const void *key,
                                OSSL_ASYNC_FD fd, void *data)
{
    gpursa_wake *w = data;

    pthread_mutex_lock(&w->mu);
    w->alive = 0;
    w->cb = NULL;
    w->cbarg = NULL;
    close(w->fd);
    w->fd = -1;
    pthread_mutex_unlock(&w->mu);
    gpursa_wake_unref(w);
}

gpursa_wake *gpursa_wake_for_current_job(void)
{
    ASYNC_JOB *job = ASYNC_get_current_job();
    ASYNC_WAIT_CTX *ctx;
    OSSL_ASYNC_FD fd;
    void *data = NULL;
    gpursa_wake *w;
    ASYNC_callback_fn cb = NULL;
    void *cbarg = NULL;

    if (job == NULL || (ctx = ASYNC_get_wait_ctx(job)) == NULL)
        return NULL;
    if (ASYNC_WAIT_CTX_get_fd(ctx, gpursa_wake_key, &fd, &data) && data != NULL) {
        w = data;
    } else {
        if ((w = calloc(1, sizeof(*w))) == NULL)
            return NULL;
        w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (w->fd < 0) {
            free(w);
            return NULL;
        }
        pthread_mutex_init(&w->mu, NULL);
        w->alive = 1;
        atomic_init(&w->refs, 1);          /* the wait context's reference */
        if (!ASYNC_WAIT_CTX_set_wait_fd(ctx, gpursa_wake_key, w->fd, w,
                                        gpursa_wake_cleanup)) {
            gpursa_wake_unref(w);
            return NULL;
        }
    }
    /* The application may set or change its callback between operations.
     * Only this (the owning) thread writes cb and cbarg, so it may read them
     * without the lock; the lock is taken only for a change, which the
     * completion side reads under it. */
    if (!ASYNC_WAIT_CTX_get_callback(ctx, &cb, &cbarg))
        cb = NULL;
    if (cb == NULL)
        cbarg = NULL;
    if (w->cb != cb || w->cbarg != cbarg) {
        pthread_mutex_lock(&w->mu);
        w->cb = cb;
        w->cbarg = cbarg;
        pthread_mutex_unlock(&w->mu);
    }
    return w;
}

void gpursa_wake_signal(gpursa_wake *w)
{
    static const uint64_t one = 1;

    /* Under the lock so the wait context cannot be freed mid-signal. */
    pthread_mutex_lock(&w->mu);
    if (w->alive) {
        if (write(w->fd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
            /* An eventfd write only fails when the counter would overflow;
             * the fd is readable then anyway. */
        }
        if (w->cb != NULL)
            w->cb(w->cbarg);
    }
    pthread_mutex_unlock(&w->mu);
}

void gpursa_wake_drain(gpursa_wake *w)
{
    uint64_t v;

    /* One read empties an eventfd (not in semaphore mode): no second read
     * to see EAGAIN. */
    pthread_mutex_lock(&w->mu);
    if (w->fd >= 0 && read(w->fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing was signalled (an early resume) */
    }
    pthread_mutex_unlock(&w->mu);
}
