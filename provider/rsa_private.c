/*
 * The seam of every raw RSA private-key operation. Padding code above calls
 * gpursa_rsa_private_raw; the queue/GPU path will be routed in here. For
 * now every operation runs on the CPU fallback (the default provider in the
 * child libctx, which blinds it).
 */
#include <string.h>
#include <openssl/crypto.h>
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

int gpursa_rsa_private_raw(GPURSA_KEY *key, const unsigned char *in,
                           unsigned char *out, size_t len)
{
    GPURSA_PROV_CTX *ctx = key->provctx;

    if (!gpursa_key_is_private(key)) {
        GPURSA_RAISE(ctx, GPURSA_R_NOT_PRIVATE_KEY);
        return 0;
    }
    if (len != (size_t)gpursa_key_size(key)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_WRONG_INPUT_LENGTH, "%zu bytes, modulus has %d",
                         len, gpursa_key_size(key));
        return 0;
    }
    if (!gpursa_input_below_modulus(key, in, len)) {
        GPURSA_RAISE(ctx, GPURSA_R_INPUT_TOO_LARGE);
        return 0;
    }
    /* The queue issue routes supported keys to gpursa_queue_private here. */
    if (!gpursa_fallback_private_raw(key, in, out, len))
        return 0;
    atomic_fetch_add(&ctx->stats.ops_cpu, 1);
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
