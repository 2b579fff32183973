/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Queue keys: a private copy of the two-prime material in the secure heap
 * (the GPU copy is uploaded from it lazily, per device, by the runner that
 * first needs it), n and a Montgomery context for blinding, and the CPU path. Registered in
 * the queue so teardown and device reopening can free the GPU copies.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "queue/gpursa_queue_int.h"

static unsigned char *gpursa_km_copy(unsigned char **pos, const unsigned char *src,
                                     size_t len)
{
    unsigned char *p = *pos;

    if (len != 0)
        memcpy(p, src, len);
    *pos += len;
    return p;
}

static atomic_uint_fast64_t gpursa_qkey_ids;

/* The material's (pointer, length) pairs. */
static const struct {
    size_t ptr, len;
} gpursa_km_fields[] = {
#define GPURSA_KM_FIELD(f) { offsetof(gpursa_rsa_key_material, f), \
                             offsetof(gpursa_rsa_key_material, f##_len) }
    GPURSA_KM_FIELD(n), GPURSA_KM_FIELD(e), GPURSA_KM_FIELD(p), GPURSA_KM_FIELD(q),
    GPURSA_KM_FIELD(dp), GPURSA_KM_FIELD(dq), GPURSA_KM_FIELD(qinv),
#undef GPURSA_KM_FIELD
};

int gpursa_queue_key_new(gpursa_queue *q, const gpursa_rsa_key_material *km,
                         gpursa_cpu_private_fn cpu, void *cpu_arg,
                         gpursa_queue_key **out)
{
    gpursa_queue_key *qk;
    unsigned char *pos;
    BN_CTX *bnctx = NULL;
    size_t n_len = km->n_len;

    *out = NULL;
    if (q == NULL || cpu == NULL || km->n == NULL || n_len == 0)
        return 0;
    /* Strip leading zero bytes: len is the modulus length the caller uses. */
    if ((qk = calloc(1, sizeof(*qk))) == NULL)
        return 0;
    qk->q = q;
    qk->id = atomic_fetch_add(&gpursa_qkey_ids, 1) + 1;
    qk->cpu = cpu;
    qk->cpu_arg = cpu_arg;
    qk->mat_len = km->n_len + km->e_len + km->p_len + km->q_len + km->dp_len
                  + km->dq_len + km->qinv_len;
    /* The private copy lives in the secure heap (where the application set
     * one up: CRYPTO_secure_malloc_init), as OpenSSL keeps its own. */
    if ((qk->mat = OPENSSL_secure_zalloc(qk->mat_len + 1)) == NULL)
        goto err;
    /* Every field is copied into the one allocation, in order. */
    qk->km = *km;
    pos = qk->mat;
    for (size_t i = 0; i < sizeof(gpursa_km_fields) / sizeof(gpursa_km_fields[0]); i++) {
        const unsigned char **f = (const unsigned char **)((char *)&qk->km
                                                           + gpursa_km_fields[i].ptr);
        size_t flen = *(size_t *)((char *)&qk->km + gpursa_km_fields[i].len);

        if (*f != NULL)
            *f = gpursa_km_copy(&pos, *f, flen);
    }

    if ((qk->n = BN_bin2bn(km->n, (int)n_len, NULL)) == NULL || BN_is_zero(qk->n))
        goto err;
    qk->len = (size_t)BN_num_bytes(qk->n);
    if (qk->len > GPURSA_MAX_KEY_BYTES * 4)
        goto err;
    /* km.n may carry leading zero bytes: n_bytes skips them. */
    qk->n_bytes = qk->km.n + (qk->km.n_len - qk->len);
    qk->n_top = qk->n_bytes[0];
    qk->bits = 0;
    if (km->p != NULL && km->q != NULL && km->dp != NULL && km->dq != NULL
        && km->qinv != NULL && km->e != NULL && BN_is_odd(qk->n))
        qk->bits = gpursa_gpu_key_supported(&qk->km);
    qk->size_index = gpursa_size_index(qk->bits);
    if (qk->size_index < 0 || qk->len > GPURSA_MAX_KEY_BYTES)
        qk->bits = 0;
    if (qk->bits != 0) {
        if ((bnctx = BN_CTX_new()) == NULL || (qk->mont = BN_MONT_CTX_new()) == NULL
            || !BN_MONT_CTX_set(qk->mont, qk->n, bnctx))
            goto err;
        BN_CTX_free(bnctx);
    }
    pthread_mutex_lock(&gpursa_q_global_lock);
    qk->next = q->keys;
    if (q->keys != NULL)
        q->keys->prev = qk;
    q->keys = qk;
    pthread_mutex_unlock(&gpursa_q_global_lock);
    *out = qk;
    return 1;
err:
    BN_CTX_free(bnctx);
    qk->q = NULL;
    gpursa_queue_key_free(qk);
    return 0;
}

void gpursa_queue_key_free(gpursa_queue_key *qk)
{
    gpursa_queue *q;

    if (qk == NULL)
        return;
    q = qk->q;
    if (q != NULL) {
        gpursa_qrt *rt;

        pthread_mutex_lock(&gpursa_q_global_lock);
        if (qk->prev != NULL)
            qk->prev->next = qk->next;
        else
            q->keys = qk->next;
        if (qk->next != NULL)
            qk->next->prev = qk->prev;
        /* GPU copies of this process's runtime; a parent's (after fork)
         * cannot be freed here and are left to the parent. */
        rt = atomic_load(&q->rt);
        if (rt != NULL && rt->gen == gpursa_q_fork_gen())
            for (int i = 0; i < rt->ndev; i++)
                gpursa_dev_forget_key(&rt->dev[i], qk);
        pthread_mutex_unlock(&gpursa_q_global_lock);
    }
    BN_MONT_CTX_free(qk->mont);
    BN_free(qk->n);
    OPENSSL_secure_clear_free(qk->mat, qk->mat_len + 1);
    OPENSSL_cleanse(qk, sizeof(*qk));
    free(qk);
}

int gpursa_queue_key_gpu_bits(const gpursa_queue_key *qk)
{
    return qk != NULL ? qk->bits : 0;
}

int gpursa_queue_key_below_modulus(const gpursa_queue_key *qk, const unsigned char *in,
                                   size_t len)
{
    return qk != NULL && len == qk->len && memcmp(in, qk->n_bytes, len) < 0;
}
