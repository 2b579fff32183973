/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU workers: batches below the crossover, requests of failed batches and
 * requests of a device that is down run here, off the dispatcher and the
 * runners, each through the key's CPU path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
    /* (before any request can reach a dispatcher: the runtime is not
     * published yet, and only a key size with requests asks gpursa_cpu_spare) */
    pthread_mutex_init(&p->load_mu, NULL);
    p->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    atomic_init(&p->spare, 1);
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
    pthread_mutex_destroy(&p->load_mu);
}

int gpursa_cpu_stat_parse(const char *line, uint64_t *busy, uint64_t *total)
{
    unsigned long long v[8] = { 0 };
    int n;

    if (line == NULL || strncmp(line, "cpu ", 4) != 0)
        return 0;
    n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]);
    if (n < 4)
        return 0;
    *total = 0;
    for (int i = 0; i < n; i++)
        *total += v[i];
    *busy = *total - v[3] - v[4];        /* less idle and iowait */
    return 1;
}

#define GPURSA_LOAD_PERIOD_NS 100000000u

int gpursa_cpu_spare(gpursa_qrt *rt)
{
    gpursa_cpu_pool *p = &rt->pool;
    uint64_t now, busy, total;
    char line[256];
    FILE *f;

    switch (rt->q->cfg.cpu_fallback) {
    case GPURSA_CPU_FALLBACK_ALWAYS: return 1;
    case GPURSA_CPU_FALLBACK_NEVER:  return 0;
    default: break;
    }
    now = gpursa_now_ns();
    /* One caller samples; the others read the last answer. */
    if (now - atomic_load_explicit(&p->load_at_ns, memory_order_relaxed) < GPURSA_LOAD_PERIOD_NS
        || pthread_mutex_trylock(&p->load_mu) != 0)
        return atomic_load_explicit(&p->spare, memory_order_relaxed);
    if (now - atomic_load_explicit(&p->load_at_ns, memory_order_relaxed) >= GPURSA_LOAD_PERIOD_NS
        && p->ncpu > 0
        && (f = fopen("/proc/stat", "r")) != NULL) {
        if (fgets(line, sizeof(line), f) != NULL && gpursa_cpu_stat_parse(line, &busy, &total)) {
            if (p->load_total != 0 && total > p->load_total) {
                double dt = (double)(total - p->load_total), db = (double)(busy - p->load_busy);
                double idle_cores = (1.0 - db / dt) * (double)p->ncpu;

                atomic_store_explicit(&p->spare, idle_cores >= 1.0, memory_order_relaxed);
            }
            p->load_busy = busy;
            p->load_total = total;
        }
        fclose(f);
        atomic_store_explicit(&p->load_at_ns, now, memory_order_relaxed);
    }
    pthread_mutex_unlock(&p->load_mu);
    return atomic_load_explicit(&p->spare, memory_order_relaxed);
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
