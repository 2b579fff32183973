/*
 * CPU workers: batches below the crossover, requests of failed batches and
 * requests of a device that is down run here, off the dispatcher and the
 * runners, each through the key's CPU path.
 */
#include <stdlib.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

static void *gpursa_cpu_worker(void *arg)
{
    gpursa_qrt *rt = arg;
    gpursa_cpu_pool *p = &rt->pool;
    unsigned tstate_seen = 0;

    gpursa_thread_name("gpursa-cpu");
    pthread_mutex_lock(&p->mu);
    for (;;) {
        gpursa_req *r;

        while (p->list.head == NULL && !p->stop && tstate_seen == atomic_load(&rt->tstate_gen))
            pthread_cond_wait(&p->cond, &p->mu);
        if (tstate_seen != atomic_load(&rt->tstate_gen)) {
            pthread_mutex_unlock(&p->mu);
            gpursa_thread_state_check(rt, &tstate_seen);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->list.head == NULL)
            break;                      /* stopping and drained */
        r = p->list.head;
        p->list.head = r->next;
        if (p->list.head == NULL)
            p->list.tail = NULL;
        p->list.count--;
        pthread_mutex_unlock(&p->mu);
        gpursa_req_cpu(rt, r);
        /* Errors the CPU path raised belong to no caller here. */
        ERR_clear_error();
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    OPENSSL_thread_stop();
    return NULL;
}

int gpursa_cpu_pool_start(gpursa_qrt *rt, int nthreads)
{
    gpursa_cpu_pool *p = &rt->pool;

    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->th = calloc((size_t)nthreads, sizeof(*p->th));
    if (p->th == NULL)
        return 0;
    for (int i = 0; i < nthreads; i++) {
        if (pthread_create(&p->th[i], NULL, gpursa_cpu_worker, rt) != 0)
            break;
        p->nthreads++;
    }
    return p->nthreads > 0;
}

void gpursa_cpu_pool_stop(gpursa_qrt *rt)
{
    gpursa_cpu_pool *p = &rt->pool;

    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->th[i], NULL);
    free(p->th);
    p->th = NULL;
    p->nthreads = 0;
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->mu);
}

void gpursa_cpu_pool_push(gpursa_qrt *rt, gpursa_req_list *l)
{
    gpursa_cpu_pool *p = &rt->pool;
    size_t n = l->count;

    if (l->head == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    gpursa_list_splice(&p->list, l);
    if (n > 1)
        pthread_cond_broadcast(&p->cond);
    else
        pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->mu);
}
