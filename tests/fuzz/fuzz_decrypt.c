/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz RSA decryption through EVP with gpursa: every padding mode (none,
 * PKCS#1 v1.5 with and without implicit rejection, OAEP with any digests and
 * label, the TLS premaster mode with client/negotiated versions, and invalid
 * modes), fuzzed ciphertexts of any length, and output buffers of several
 * sizes. Each result is checked against OpenSSL's default provider.
 *
 * Input: a 12-byte header, then the OAEP label, then the ciphertext.
 *   0 key index          1 flags: bit0 backend host, bit1 pad mode as a name,
 *                                 bit2 params through set_params after init
 *   2 pad (0 none 1 pkcs1 2 oaep 3 tls 4 x931, else that raw number)
 *   3 OAEP digest index  4 MGF1 digest index (0xff: not set)
 *   5 label length (0: not set)
 *   6 implicit rejection (1: off, 2: on, else not set)
 *   7-8 TLS client version  9-10 TLS negotiated version (0: not set)
 *   11 output buffer (0 exact, 1 one short, 2 16 more, 3 one byte)
 */
#include <stdio.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "fuzz_common.h"

#define HEADER_LEN 12

typedef struct {
    int key, backend, pad, pad_as_name, late_params;
    int oaep_md, mgf1_md, implicit_rejection, outbuf;
    unsigned client_version, negotiated_version;
    const uint8_t *label;
    size_t label_len;
    const uint8_t *ct;
    size_t ct_len;
} decrypt_case;

static const char *pad_name(int pad)
{
    switch (pad) {
    case RSA_NO_PADDING: return OSSL_PKEY_RSA_PAD_MODE_NONE;
    case RSA_PKCS1_PADDING: return OSSL_PKEY_RSA_PAD_MODE_PKCSV15;
    case RSA_PKCS1_OAEP_PADDING: return OSSL_PKEY_RSA_PAD_MODE_OAEP;
    case RSA_X931_PADDING: return OSSL_PKEY_RSA_PAD_MODE_X931;
    default: return "pkcs1-tls";   /* no such name: must be rejected */
    }
}

static size_t build_params(const decrypt_case *c, OSSL_PARAM *p, int *pad_int,
                           unsigned *ir, unsigned *cv, unsigned *nv)
{
    size_t n = 0;

    *pad_int = c->pad;
    if (c->pad_as_name)
        p[n++] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE,
                                                  (char *)pad_name(c->pad), 0);
    else
        p[n++] = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, pad_int);
    if (c->oaep_md >= 0)
        p[n++] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST,
                                                  (char *)fz_digest_names[c->oaep_md], 0);
    if (c->mgf1_md >= 0)
        p[n++] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST,
                                                  (char *)fz_digest_names[c->mgf1_md], 0);
    if (c->label_len > 0)
        p[n++] = OSSL_PARAM_construct_octet_string(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL,
                                                   (void *)c->label, c->label_len);
    if (c->implicit_rejection >= 0) {
        *ir = (unsigned)c->implicit_rejection;
        /* the name OpenSSL 3.2 uses; 3.0's default provider ignores it */
        p[n++] = OSSL_PARAM_construct_uint("implicit-rejection", ir);
    }
    if (c->client_version != 0) {
        *cv = c->client_version;
        p[n++] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, cv);
    }
    if (c->negotiated_version != 0) {
        *nv = c->negotiated_version;
        p[n++] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, nv);
    }
    p[n] = OSSL_PARAM_construct_end();
    return n;
}

/* Init a decrypt context with the case's parameters; NULL if refused. */
static EVP_PKEY_CTX *decrypt_ctx(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey,
                                 const char *propq, const decrypt_case *c, int *init_ok)
{
    OSSL_PARAM params[8];
    int pad_int;
    unsigned ir = 0, cv = 0, nv = 0;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, propq);

    *init_ok = 0;
    if (ctx == NULL)
        return NULL;
    build_params(c, params, &pad_int, &ir, &cv, &nv);
    if (c->late_params)
        *init_ok = EVP_PKEY_decrypt_init(ctx) > 0 && EVP_PKEY_CTX_set_params(ctx, params) > 0;
    else
        *init_ok = EVP_PKEY_decrypt_init_ex(ctx, params) > 0;
    return ctx;
}

/* The fuzz-chosen buffer size for an operation that asked for k bytes. */
static size_t outbuf_size(int policy, size_t k)
{
    switch (policy) {
    case 1: return k - 1;
    case 2: return k + 16;
    case 3: return 1;
    default: return k;
    }
}

/* PKCS#1 v1.5 type 2 check on the raw decryption (the oracle for TLS mode):
 * 1 if em is 00 02 PS(>= 8 nonzero) 00 M with |M| = mlen. */
static int pkcs1_type2_valid(const unsigned char *em, size_t k, size_t mlen)
{
    size_t i;

    if (k < 11 + mlen || em[0] != 0 || em[1] != 2 || em[k - mlen - 1] != 0)
        return 0;
    for (i = 2; i < k - mlen - 1; i++)
        if (em[i] == 0)
            return 0;
    return 1;
}

static int raw_decrypt(EVP_PKEY *dkey, const decrypt_case *c, unsigned char *em, size_t k)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(fz_default_libctx(), dkey, NULL);
    size_t len = k;
    int ok = ctx != NULL && EVP_PKEY_decrypt_init(ctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0
        && EVP_PKEY_decrypt(ctx, em, &len, c->ct, c->ct_len) > 0 && len == k;

    EVP_PKEY_CTX_free(ctx);
    return ok;
}

static void check_case(const decrypt_case *c)
{
    EVP_PKEY *gkey = fz_gpursa_key(c->backend, c->key), *dkey = fz_default_key(c->key);
    EVP_PKEY_CTX *gctx, *dctx;
    size_t k = (size_t)EVP_PKEY_get_size(dkey), gsize, glen, dlen = k, glen2;
    unsigned char *gout, *gout2, *dout, *em;
    int g_init, d_init, g_ok, d_ok, ir_on;

    gctx = decrypt_ctx(fz_gpursa_libctx(c->backend), gkey, "provider=gpursa", c, &g_init);
    if (!g_init) {
        fz_expect_error("gpursa decrypt init");
        EVP_PKEY_CTX_free(gctx);
        return;
    }
    /* out == NULL asks for the size */
    if (EVP_PKEY_decrypt(gctx, NULL, &gsize, c->ct, c->ct_len) <= 0) {
        fz_expect_error("gpursa decrypt size query");
        EVP_PKEY_CTX_free(gctx);
        return;
    }
    if (gsize == 0 || gsize > 16 * k)
        fz_fail("size query said %zu for a %zu-byte key", gsize, k);
    glen = outbuf_size(c->outbuf, gsize);
    gout = OPENSSL_malloc(glen);   /* exact size: ASan catches any overrun */
    gout2 = OPENSSL_malloc(glen);
    dout = OPENSSL_malloc(k);
    em = OPENSSL_malloc(k);
    if (gout == NULL || gout2 == NULL || dout == NULL || em == NULL)
        fz_fail("malloc");
    gsize = glen;
    g_ok = EVP_PKEY_decrypt(gctx, gout, &glen, c->ct, c->ct_len) > 0;
    if (!g_ok)
        fz_expect_error("gpursa decrypt");
    else if (glen > gsize)
        fz_fail("decrypt wrote %zu bytes into a %zu-byte buffer", glen, gsize);
    ERR_clear_error();

    /* Longer than the modulus is an error, as with the default provider;
     * shorter ones (an integer below n without its leading zero bytes) are
     * compared with the default provider below, like k-byte ones. */
    if (c->ct_len > k) {
        if (g_ok)
            fz_fail("accepted a %zu-byte ciphertext for a %zu-byte key", c->ct_len, k);
        goto done;
    }
    if (c->outbuf != 0 && c->outbuf != 2)
        goto done;              /* short buffers: only "no overrun" is checked */

    dctx = decrypt_ctx(fz_default_libctx(), dkey, NULL, c, &d_init);
    d_ok = d_init && EVP_PKEY_decrypt(dctx, dout, &dlen, c->ct, c->ct_len) > 0;
    EVP_PKEY_CTX_free(dctx);
    ERR_clear_error();
    if (!d_init)
        goto done;              /* parameters the default refuses: nothing to compare */

    ir_on = c->implicit_rejection != 0;   /* on unless explicitly off */
    if (c->pad == RSA_PKCS1_WITH_TLS_PADDING && !c->pad_as_name) {
        /* On bad padding both return 48 random bytes; compare only valid ones. */
        if (g_ok != d_ok)
            fz_fail("TLS mode: gpursa %s, default %s", g_ok ? "ok" : "failed",
                    d_ok ? "ok" : "failed");
        if (g_ok && glen != 48)
            fz_fail("TLS mode returned %zu bytes", glen);
        if (g_ok && raw_decrypt(dkey, c, em, k) && pkcs1_type2_valid(em, k, 48)
            && em[k - 48] == (c->client_version >> 8) && em[k - 47] == (c->client_version & 0xff)
            && memcmp(gout, em + k - 48, 48) != 0)
            fz_fail("TLS mode: valid premaster decrypted differently");
    } else if (c->pad == RSA_PKCS1_PADDING && ir_on && !d_ok) {
        /* Implicit rejection (OpenSSL 3.2 behaviour, not in 3.0's default):
         * a bad padding gives a synthetic message, the same every time. */
        if (g_ok) {
            EVP_PKEY_CTX *g2 = decrypt_ctx(fz_gpursa_libctx(c->backend), gkey,
                                           "provider=gpursa", c, &g_init);

            glen2 = gsize;
            if (!g_init || EVP_PKEY_decrypt(g2, gout2, &glen2, c->ct, c->ct_len) <= 0)
                fz_fail("implicit rejection: second decrypt failed");
            if (glen2 != glen || memcmp(gout, gout2, glen) != 0)
                fz_fail("implicit rejection: synthetic message not deterministic");
            if (glen > k - 11)
                fz_fail("implicit rejection: %zu-byte message from a %zu-byte key", glen, k);
            EVP_PKEY_CTX_free(g2);
        }
    } else {
        if (g_ok != d_ok)
            fz_fail("pad %d: gpursa %s, default %s", c->pad, g_ok ? "ok" : "failed",
                    d_ok ? "ok" : "failed");
        if (g_ok && (glen != dlen || memcmp(gout, dout, glen) != 0))
            fz_fail("pad %d: gpursa and default decrypt to different plaintexts", c->pad);
    }
done:
    ERR_clear_error();
    EVP_PKEY_CTX_free(gctx);
    OPENSSL_clear_free(gout, gsize);
    OPENSSL_clear_free(gout2, gsize);
    OPENSSL_clear_free(dout, k);
    OPENSSL_clear_free(em, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int pads[] = { RSA_NO_PADDING, RSA_PKCS1_PADDING, RSA_PKCS1_OAEP_PADDING,
                                RSA_PKCS1_WITH_TLS_PADDING, RSA_X931_PADDING };
    fz_input in = { data, size };
    decrypt_case c;
    uint8_t flags, pad, md;

    if (size < HEADER_LEN)
        return 0;
    memset(&c, 0, sizeof(c));
    c.key = fz_u8(&in) % FZ_NKEYS;
    flags = fz_u8(&in);
    c.backend = flags & 1;
    c.pad_as_name = (flags >> 1) & 1;
    c.late_params = (flags >> 2) & 1;
    pad = fz_u8(&in);
    c.pad = pad < 5 ? pads[pad] : (int)(int8_t)pad;
    md = fz_u8(&in);
    c.oaep_md = md == 0xff ? -1 : (int)(md % fz_n_digest_names);
    md = fz_u8(&in);
    c.mgf1_md = md == 0xff ? -1 : (int)(md % fz_n_digest_names);
    c.label_len = fz_u8(&in);
    c.implicit_rejection = fz_u8(&in);
    c.implicit_rejection = c.implicit_rejection == 1 ? 0 : c.implicit_rejection == 2 ? 1 : -1;
    c.client_version = fz_u16(&in);
    c.negotiated_version = fz_u16(&in);
    c.outbuf = fz_u8(&in) % 4;
    c.label = fz_bytes(&in, c.label_len, &c.label_len);
    c.ct = fz_bytes(&in, in.left, &c.ct_len);
    check_case(&c);
    return 0;
}
