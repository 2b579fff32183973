/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam of every raw RSA private-key operation. Padding code above calls
 * gpursa_rsa_private_raw, which routes it through queue/ (GPU, host backend
 * or CPU workers); with backend=cpu it runs on the CPU fallback (the default
 * provider in the child libctx, which blinds it).
 */
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "provider/gpursa_prov.h"

/* in < n, comparing big-endian bytes. The input is public (ciphertext or
 * padded message), so a plain comparison is fine. */
static int gpursa_input_below_modulus(const GPURSA_KEY *key, const unsigned char *in,
                                      size_t len)
{
    unsigned char nbuf[16384 / 8];

    if (len > sizeof(nbuf) || BN_bn2binpad(key->n, nbuf, (int)len) != (int)len)
        return 0;
    return memcmp(in, nbuf, len) < 0;
}

/* The queue's view of the key, built on first use: two-prime CRT material
 * for the GPU path, or only n and e (the queue then always uses the CPU).
 * NULL when there is no queue (backend=cpu) or it could not be built. */
static gpursa_queue_key *gpursa_key_qkey(GPURSA_KEY *key)
{
    GPURSA_PROV_CTX *ctx = key->provctx;
    BIGNUM *parts[7] = { key->n, key->e, key->p, key->q, key->dp, key->dq, key->qinv };
    const unsigned char **ptr[7];
    size_t *lens[7], total = 0, off = 0;
    int nparts = key->nprimes == 2 && key->p != NULL && key->q != NULL && key->dp != NULL
                 && key->dq != NULL && key->qinv != NULL ? 7 : 2;
    gpursa_rsa_key_material km;
    gpursa_queue_key *qk = NULL;
    unsigned char *buf;

    if (ctx->queue == NULL || !CRYPTO_THREAD_read_lock(key->lock))
        return NULL;
    qk = key->qkey;
    CRYPTO_THREAD_unlock(key->lock);
    if (qk != NULL)
        return qk;
    memset(&km, 0, sizeof(km));
    ptr[0] = &km.n;    lens[0] = &km.n_len;
    ptr[1] = &km.e;    lens[1] = &km.e_len;
    ptr[2] = &km.p;    lens[2] = &km.p_len;
    ptr[3] = &km.q;    lens[3] = &km.q_len;
    ptr[4] = &km.dp;   lens[4] = &km.dp_len;
    ptr[5] = &km.dq;   lens[5] = &km.dq_len;
    ptr[6] = &km.qinv; lens[6] = &km.qinv_len;
    for (int i = 0; i < nparts; i++)
        total += (size_t)BN_num_bytes(parts[i]);
    if ((buf = OPENSSL_secure_malloc(total + 1)) == NULL)
        return NULL;
    for (int i = 0; i < nparts; i++) {
        *ptr[i] = buf + off;
        *lens[i] = (size_t)BN_bn2bin(parts[i], buf + off);
        off += *lens[i];
    }
    if (!gpursa_queue_key_new(ctx->queue, &km, gpursa_fallback_private_raw, key, &qk))
        qk = NULL;
    OPENSSL_secure_clear_free(buf, total + 1);
    if (qk == NULL || !CRYPTO_THREAD_write_lock(key->lock)) {
        gpursa_queue_key_free(qk);
        return NULL;
    }
    /* Another thread may have built it meanwhile: keep the first. */
    if (key->qkey == NULL) {
        key->qkey = qk;
    } else {
        gpursa_queue_key_free(qk);
        qk = key->qkey;
    }
    CRYPTO_THREAD_unlock(key->lock);
    return qk;
}

int gpursa_rsa_private_raw(GPURSA_KEY *key, const unsigned char *in,
                           unsigned char *out, size_t len)
{
    GPURSA_PROV_CTX *ctx = key->provctx;
    gpursa_queue_key *qk;

    if (!gpursa_key_is_private(key)) {
        GPURSA_RAISE(ctx, GPURSA_R_NOT_PRIVATE_KEY);
        return 0;
    }
    if (len != (size_t)gpursa_key_size(key)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_WRONG_INPUT_LENGTH, "%zu bytes, modulus has %d",
                         len, gpursa_key_size(key));
        return 0;
    }
    /* The queue key keeps n's bytes: no conversion of n per operation (a
     * constant-time BN_bn2binpad was a quarter of the calling thread's
     * queue-path CPU). */
    qk = gpursa_key_qkey(key);
    if (qk != NULL ? !gpursa_queue_key_below_modulus(qk, in, len)
                   : !gpursa_input_below_modulus(key, in, len)) {
        GPURSA_RAISE(ctx, GPURSA_R_INPUT_TOO_LARGE);
        return 0;
    }
    /* Through the queue (GPU, host backend or CPU, it decides and counts). */
    if (qk != NULL) {
        if (!gpursa_queue_private(ctx->queue, qk, in, out, len)) {
            GPURSA_RAISE(ctx, GPURSA_R_PRIVATE_OP_FAILED);
            return 0;
        }
        return 1;
    }
    if (!gpursa_fallback_private_raw(key, in, out, len))
        return 0;
    gpursa_stats_ops(&ctx->stats, GPURSA_PATH_INLINE, len, 1);
    return 1;
}

int gpursa_fallback_private_raw(void *vkey, const unsigned char *in,
                                unsigned char *out, size_t len)
{
    GPURSA_KEY *key = vkey;
    EVP_PKEY_CTX *pctx = gpursa_fallback_pkey_ctx(key);
    size_t outlen = len;
    int ok = 0;

    if (pctx == NULL)
        return 0;
    if (EVP_PKEY_decrypt_init(pctx) <= 0
        || EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_NO_PADDING) <= 0
        || EVP_PKEY_decrypt(pctx, out, &outlen, in, len) <= 0
        || outlen != len) {
        OPENSSL_cleanse(out, len);
        GPURSA_RAISE(key->provctx, GPURSA_R_PRIVATE_OP_FAILED);
        goto end;
    }
    ok = 1;
end:
    EVP_PKEY_CTX_free(pctx);
    return ok;
}

int gpursa_fallback_takes_empty_input(GPURSA_KEY *key)
{
    size_t k = (size_t)gpursa_key_size(key), outlen = k;
    unsigned char *buf = OPENSSL_malloc(k);
    EVP_PKEY_CTX *pctx;
    int ok;

    /* Asked of the default provider itself: whether it refuses an empty
     * ciphertext changed between OpenSSL releases. Its own errors are not
     * the caller's business: only gpursa's refusal is left. */
    ERR_set_mark();
    pctx = gpursa_fallback_pkey_ctx(key);
    ok = buf != NULL && pctx != NULL
        && EVP_PKEY_decrypt_init(pctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_NO_PADDING) > 0
        && EVP_PKEY_decrypt(pctx, buf, &outlen, (const unsigned char *)"", 0) > 0;
    ERR_pop_to_mark();
    EVP_PKEY_CTX_free(pctx);
    OPENSSL_clear_free(buf, k);
    if (!ok)
        GPURSA_RAISE_MSG(key->provctx, GPURSA_R_DATA_TOO_SMALL,
                         "an empty ciphertext (the default provider refuses it too)");
    return ok;
}
