/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Blinding pairs (r, r^-1 mod n) made ahead: each runner keeps a pool per
 * key (GPURSA_POOL_KEYS, least recently used evicted), draws a batch's pairs
 * from it, and refills it in chunks while the device computes. A pool
 * belongs to its runner thread, so nothing here takes a lock.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "queue/gpursa_queue_int.h"

void gpursa_pool_drop(gpursa_pair_pool *p)
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
static gpursa_pair_pool *gpursa_pool_of(gpursa_runner *s, const gpursa_queue_key *k)
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
static int gpursa_pool_fill(gpursa_runner *s, gpursa_pair_pool *p, gpursa_queue_key *k,
                            size_t max_add)
{
    size_t two_groups = 2 * p->group, add;
    size_t want = p->filling ? p->cap : p->cap == 0 ? GPURSA_POOL_FIRST : 2 * p->cap;
    size_t top = two_groups > GPURSA_POOL ? two_groups : GPURSA_POOL;

    if (want > top)
        want = top;
    if (want < two_groups)
        want = two_groups;
    if (want > s->cap)                   /* no more than the runner's batches hold */
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
 * topped up while the device computes (gpursa_runner_topup), so a batch
 * normally finds its pairs ready; only a pool that runs dry (a first batch,
 * a burst larger than before) is filled here, on the batch's own time. The
 * pool belongs to the runner thread: no lock.
 */
int gpursa_runner_pairs(gpursa_runner *s, gpursa_queue_key *k, size_t m,
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
 * as the batch is done: its answers must not wait for blinding work (a
 * whole refill can take longer than a kernel, and the batches behind it
 * would make the latency tail). A refill left unfinished goes on during the
 * next batch. The keys are alive (their requests are in the batch); a
 * failure here only means the next batch fills its own.
 *
 * Each chunk pays one constant-time inversion, so small chunks make the
 * inversion a large part of a pair's cost; 512 pairs keep it small while a
 * chunk stays shorter than a kernel, so answers wait at most about one
 * chunk (doc/design.md, "What the queue's settings rest on").
 */
#define GPURSA_TOPUP_CHUNK 512
void gpursa_runner_topup(gpursa_runner *s, size_t n, gpursa_gpu_batch *batch)
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
