/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa RSA asymmetric cipher: decryption with PKCS#1 v1.5 (implicit
 * rejection on by default, as OpenSSL 3.2+), OAEP, the TLS premaster secret
 * padding and no padding; encryption delegated to the default provider.
 * Parameter names and semantics are the default provider's.
 *
 * Decryption runs the raw private-key operation through the seam
 * gpursa_rsa_private_raw() (where the GPU path plugs in) and decodes the
 * block with the constant-time decoders of rsa_dec_pad.c. Every size the
 * caller could get wrong is checked before the private operation, so the
 * only outcome that depends on the secret block is the decoder's answer.
 */
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "gpursa_prov.h"
#include "rsa_dec_pad.h"
#include "rsa_params.h"

/* Added in OpenSSL 3.2; 3.0 headers lack it but the name is the standard one. */
#ifndef OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION
# define OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION "implicit-rejection"
#endif
#define ENC_NAME_SIZE 50        /* OSSL_MAX_NAME_SIZE in OpenSSL's sources */
#define ENC_PROPS_SIZE 256      /* OSSL_MAX_PROPQUERY_SIZE */

static OSSL_FUNC_asym_cipher_newctx_fn enc_newctx;
static OSSL_FUNC_asym_cipher_freectx_fn enc_freectx;
static OSSL_FUNC_asym_cipher_dupctx_fn enc_dupctx;
static OSSL_FUNC_asym_cipher_encrypt_init_fn enc_encrypt_init;
static OSSL_FUNC_asym_cipher_encrypt_fn enc_encrypt;
static OSSL_FUNC_asym_cipher_decrypt_init_fn enc_decrypt_init;
static OSSL_FUNC_asym_cipher_decrypt_fn enc_decrypt;
static OSSL_FUNC_asym_cipher_get_ctx_params_fn enc_get_ctx_params;
static OSSL_FUNC_asym_cipher_gettable_ctx_params_fn enc_gettable_ctx_params;
static OSSL_FUNC_asym_cipher_set_ctx_params_fn enc_set_ctx_params;
static OSSL_FUNC_asym_cipher_settable_ctx_params_fn enc_settable_ctx_params;

/* A digest in use, with the properties it was fetched with (forwarded to
 * the default provider for encryption). */
typedef struct {
    EVP_MD *md;
    char props[ENC_PROPS_SIZE];
} ENC_DIGEST;

typedef struct {
    GPURSA_PROV_CTX *provctx;
    GPURSA_KEY *key;               /* borrowed: the EVP_PKEY keeps it alive */
    int operation;                 /* EVP_PKEY_OP_ENCRYPT / _DECRYPT */
    int pad_mode;
    ENC_DIGEST oaep, mgf1;         /* mgf1.md NULL: MGF1 uses the OAEP digest */
    unsigned char *label;
    size_t labellen;
    unsigned int client_version;   /* TLS premaster: ClientHello version */
    unsigned int alt_version;      /* and the negotiated one, if tolerated */
    unsigned int implicit_rejection;
    EVP_PKEY_CTX *delegate;        /* encryption: the default provider's ctx */
} GPURSA_ENC_CTX;

static void enc_digest_clear(ENC_DIGEST *d)
{
    EVP_MD_free(d->md);
    memset(d, 0, sizeof(*d));
}

static int enc_digest_copy(ENC_DIGEST *dst, const ENC_DIGEST *src)
{
    if (src->md != NULL && !EVP_MD_up_ref(src->md))
        return 0;
    *dst = *src;
    return 1;
}

/* ---- context life cycle ---- */

static void *enc_newctx(void *provctx)
{
    GPURSA_PROV_CTX *pctx = provctx;
    GPURSA_ENC_CTX *ctx = OPENSSL_zalloc(sizeof(*ctx));

    if (ctx == NULL) {
        GPURSA_RAISE(pctx, GPURSA_R_MALLOC);
        return NULL;
    }
    ctx->provctx = pctx;
    ctx->pad_mode = RSA_PKCS1_PADDING;
    ctx->implicit_rejection = 1;
    return ctx;
}

static void enc_freectx(void *vctx)
{
    GPURSA_ENC_CTX *ctx = vctx;

    if (ctx == NULL)
        return;
    EVP_PKEY_CTX_free(ctx->delegate);
    enc_digest_clear(&ctx->oaep);
    enc_digest_clear(&ctx->mgf1);
    OPENSSL_clear_free(ctx->label, ctx->labellen);
    OPENSSL_clear_free(ctx, sizeof(*ctx));
}

static void *enc_dupctx(void *vctx)
{
    GPURSA_ENC_CTX *src = vctx, *dst;

    if ((dst = OPENSSL_zalloc(sizeof(*dst))) == NULL)
        goto malloc_err;
    *dst = *src;
    dst->label = NULL;
    dst->delegate = NULL;
    memset(&dst->oaep, 0, sizeof(dst->oaep));
    memset(&dst->mgf1, 0, sizeof(dst->mgf1));
    if (!enc_digest_copy(&dst->oaep, &src->oaep)
        || !enc_digest_copy(&dst->mgf1, &src->mgf1)
        || (src->label != NULL
            && (dst->label = OPENSSL_memdup(src->label, src->labellen)) == NULL))
        goto malloc_err;
    if (src->delegate != NULL && (dst->delegate = EVP_PKEY_CTX_dup(src->delegate)) == NULL) {
        GPURSA_RAISE_MSG(src->provctx, GPURSA_R_FALLBACK_FAILED,
                         "cannot copy the encryption context");
        goto err;
    }
    return dst;

 malloc_err:
    GPURSA_RAISE(src->provctx, GPURSA_R_MALLOC);
 err:
    enc_freectx(dst);
    return NULL;
}

/* ---- digests ---- */

/* Fetch digest |name| from the provider's library context. */
static int enc_fetch_digest(GPURSA_ENC_CTX *ctx, ENC_DIGEST *out,
                            const char *name, const char *props)
{
    EVP_MD *md = gpursa_rsa_fetch_md(ctx->provctx, name, props, 0);

    if (md == NULL)
        return 0;
    /* OAEP and MGF1 need a fixed-length hash. */
    if ((EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF) != 0 || EVP_MD_get_size(md) <= 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_DIGEST,
                         "digest %s cannot be used with OAEP", name);
        EVP_MD_free(md);
        return 0;
    }
    enc_digest_clear(out);
    out->md = md;
    if (props != NULL)
        strcpy(out->props, props);
    return 1;
}

/* The OAEP digest, SHA-1 unless one was chosen (PKCS#1's default). */
static int enc_oaep_digest(GPURSA_ENC_CTX *ctx)
{
    return ctx->oaep.md != NULL || enc_fetch_digest(ctx, &ctx->oaep, "SHA1", NULL);
}

/* ---- init ---- */

static int enc_init(GPURSA_ENC_CTX *ctx, void *vkey, const OSSL_PARAM params[],
                    int operation)
{
    GPURSA_KEY *key = vkey;

    if (ctx == NULL || key == NULL || key->n == NULL) {
        GPURSA_RAISE_MSG(ctx != NULL ? ctx->provctx : NULL, GPURSA_R_MISSING_KEY_PART,
                         "no RSA key");
        return 0;
    }
    if (operation == EVP_PKEY_OP_DECRYPT && !gpursa_key_is_private(key)) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_NOT_PRIVATE_KEY);
        return 0;
    }
    ctx->key = key;
    ctx->operation = operation;
    ctx->pad_mode = RSA_PKCS1_PADDING;
    ctx->implicit_rejection = 1;
    EVP_PKEY_CTX_free(ctx->delegate);
    ctx->delegate = NULL;
    return enc_set_ctx_params(ctx, params);
}

static int enc_decrypt_init(void *vctx, void *vkey, const OSSL_PARAM params[])
{
    return enc_init(vctx, vkey, params, EVP_PKEY_OP_DECRYPT);
}

static int enc_encrypt_init(void *vctx, void *vkey, const OSSL_PARAM params[])
{
    GPURSA_ENC_CTX *ctx = vctx;

    if (!enc_init(ctx, vkey, params, EVP_PKEY_OP_ENCRYPT))
        return 0;
    if ((ctx->delegate = gpursa_fallback_pkey_ctx(ctx->key)) == NULL)
        return 0;
    if (EVP_PKEY_encrypt_init(ctx->delegate) <= 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED,
                         "the default provider refused encryption");
        EVP_PKEY_CTX_free(ctx->delegate);
        ctx->delegate = NULL;
        return 0;
    }
    return 1;
}

/* ---- encryption: delegated ---- */

/* Push the whole state to the delegate right before it encrypts. */
static int enc_push_params(GPURSA_ENC_CTX *ctx)
{
    OSSL_PARAM params[7], *p = params;
    int pad = ctx->pad_mode;

    *p++ = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad);
    if (pad == RSA_PKCS1_OAEP_PADDING) {
        const EVP_MD *mgf1;

        if (!enc_oaep_digest(ctx))
            return 0;
        mgf1 = ctx->mgf1.md != NULL ? ctx->mgf1.md : ctx->oaep.md;
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST,
                                                (char *)EVP_MD_get0_name(ctx->oaep.md), 0);
        if (ctx->oaep.props[0] != '\0')
            *p++ = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST_PROPS,
                                                    ctx->oaep.props, 0);
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST,
                                                (char *)EVP_MD_get0_name(mgf1), 0);
        if (ctx->mgf1.md != NULL && ctx->mgf1.props[0] != '\0')
            *p++ = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST_PROPS,
                                                    ctx->mgf1.props, 0);
        /* An empty label still has to replace an earlier one, and a NULL
         * buffer is refused, so it points at an empty string. */
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL,
                                                 ctx->label != NULL ? ctx->label
                                                 : (unsigned char *)"", ctx->labellen);
    }
    *p = OSSL_PARAM_construct_end();
    if (EVP_PKEY_CTX_set_params(ctx->delegate, params) <= 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED,
                         "the default provider refused the encryption parameters");
        return 0;
    }
    return 1;
}

static int enc_encrypt(void *vctx, unsigned char *out, size_t *outlen,
                       size_t outsize, const unsigned char *in, size_t inlen)
{
    GPURSA_ENC_CTX *ctx = vctx;
    size_t len = outsize;

    if (ctx->operation != EVP_PKEY_OP_ENCRYPT || ctx->delegate == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "not initialised for encryption");
        return 0;
    }
    if (out == NULL) {
        *outlen = (size_t)gpursa_key_size(ctx->key);
        return 1;
    }
    if (!enc_push_params(ctx))
        return 0;
    if (EVP_PKEY_encrypt(ctx->delegate, out, &len, in, inlen) <= 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED, "encryption failed");
        return 0;
    }
    *outlen = len;
    return 1;
}

/* ---- decryption ---- */

/*
 * The largest message the padding mode can carry: the output must hold it
 * before decoding starts, because a constant-time decoder cannot stop half
 * way once it knows the real length. Raises and returns 0 when the key is
 * too small for the mode.
 */
static size_t enc_max_message(GPURSA_ENC_CTX *ctx, size_t k)
{
    size_t hlen;

    switch (ctx->pad_mode) {
    case RSA_NO_PADDING:
        return k;
    case RSA_PKCS1_PADDING:
        if (k >= GPURSA_PKCS1_PAD_LEN + 1)
            return k - GPURSA_PKCS1_PAD_LEN;
        break;
    case RSA_PKCS1_WITH_TLS_PADDING:
        if (k >= GPURSA_PKCS1_PAD_LEN + GPURSA_TLS_PREMASTER_LEN)
            return GPURSA_TLS_PREMASTER_LEN;
        break;
    case RSA_PKCS1_OAEP_PADDING:
        if (!enc_oaep_digest(ctx))
            return 0;
        hlen = (size_t)EVP_MD_get_size(ctx->oaep.md);
        if (k >= 2 * hlen + 2 + 1)
            return k - 2 * hlen - 2;
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OAEP_DECODING_ERROR,
                         "OAEP with %s needs a modulus of more than %zu bytes",
                         EVP_MD_get0_name(ctx->oaep.md), 2 * hlen + 2);
        return 0;
    default:
        GPURSA_RAISE(ctx->provctx, GPURSA_R_BAD_PADDING_MODE);
        return 0;
    }
    GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_KEY_TOO_SMALL,
                     "a %zu-byte modulus is too small for this padding", k);
    return 0;
}

/* Decode the raw block |em| into |out| by the padding mode; returns the
 * message length or a negative decoder status. */
static int enc_decode(GPURSA_ENC_CTX *ctx, unsigned char *out, size_t outsize,
                      const unsigned char *em, size_t k,
                      const unsigned char *in)
{
    OSSL_LIB_CTX *libctx = ctx->provctx->libctx;
    unsigned char kdk[GPURSA_KDK_LEN], rnd[GPURSA_TLS_PREMASTER_LEN];
    int r = -2;

    switch (ctx->pad_mode) {
    case RSA_NO_PADDING:
        memcpy(out, em, k);
        return (int)k;
    case RSA_PKCS1_PADDING:
        if (!ctx->implicit_rejection)
            return gpursa_dec_pkcs1_type2(out, outsize, em, k);
        /* The synthetic message is keyed by d and the ciphertext. */
        if (ctx->key->d != NULL && gpursa_dec_kdk(libctx, ctx->key->d, in, k, k, kdk))
            r = gpursa_dec_pkcs1_type2_implicit(libctx, out, outsize, em, k, kdk);
        OPENSSL_cleanse(kdk, sizeof(kdk));
        return r;
    case RSA_PKCS1_OAEP_PADDING:
        return gpursa_dec_oaep(out, outsize, em, k, ctx->label, ctx->labellen,
                               ctx->oaep.md,
                               ctx->mgf1.md != NULL ? ctx->mgf1.md : ctx->oaep.md);
    case RSA_PKCS1_WITH_TLS_PADDING:
        /* Drawn before the check, used only if it fails. */
        if (RAND_priv_bytes_ex(libctx, rnd, sizeof(rnd), 0) > 0)
            r = gpursa_dec_tls_premaster(out, outsize, em, k, ctx->client_version,
                                         ctx->alt_version, rnd);
        OPENSSL_cleanse(rnd, sizeof(rnd));
        return r;
    default:
        return -2;
    }
}

static int enc_decrypt(void *vctx, unsigned char *out, size_t *outlen,
                       size_t outsize, const unsigned char *in, size_t inlen)
{
    GPURSA_ENC_CTX *ctx = vctx;
    size_t k, need;
    unsigned char *em = NULL, *ct;
    int r;

    if (ctx->operation != EVP_PKEY_OP_DECRYPT || ctx->key == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "not initialised for decryption");
        return 0;
    }
    k = (size_t)gpursa_key_size(ctx->key);
    if (out == NULL) {
        *outlen = ctx->pad_mode == RSA_PKCS1_WITH_TLS_PADDING ? GPURSA_TLS_PREMASTER_LEN : k;
        return 1;
    }
    if ((need = enc_max_message(ctx, k)) == 0)
        return 0;
    if (ctx->pad_mode == RSA_PKCS1_WITH_TLS_PADDING && ctx->client_version == 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_TLS_VERSION,
                         "the TLS client version must be set");
        return 0;
    }
    if (outsize < need) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OUTPUT_TOO_SMALL,
                         "%zu bytes, the padding mode needs %zu", outsize, need);
        return 0;
    }
    if (inlen > k) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_DATA_GREATER_THAN_MOD_LEN,
                         "%zu bytes, the modulus has %zu", inlen, k);
        return 0;
    }
    if (inlen == 0 && !gpursa_fallback_takes_empty_input(ctx->key))
        return 0;
    /* A ciphertext is an integer below n: one sent without its leading zero
     * bytes is the same integer, so it is left-padded to k bytes and every
     * path (raw operation, implicit rejection's KDK over the k-byte
     * ciphertext) sees exactly what a full-length one gives. */
    if ((em = OPENSSL_secure_malloc(2 * k)) == NULL) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_MALLOC);
        return 0;
    }
    ct = em + k;
    memset(ct, 0, k - inlen);
    if (inlen > 0)
        memcpy(ct + k - inlen, in, inlen);
    if (!gpursa_rsa_private_raw(ctx->key, ct, em, k)) {
        OPENSSL_secure_clear_free(em, 2 * k);
        return 0;
    }
    r = enc_decode(ctx, out, outsize, em, k, ct);
    OPENSSL_secure_clear_free(em, 2 * k);
    if (r == -1) {
        /* Only reached without implicit rejection (or with a public size
         * problem the checks above already exclude). The padding mode is
         * public: the reason names it, as OpenSSL's does. */
        GPURSA_RAISE(ctx->provctx, ctx->pad_mode == RSA_PKCS1_OAEP_PADDING
                     ? GPURSA_R_OAEP_DECODING_ERROR : GPURSA_R_DECRYPT_FAILED);
        return 0;
    }
    if (r < 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_INTERNAL, "decoding failed");
        return 0;
    }
    *outlen = (size_t)r;
    return 1;
}

/* ---- parameters ---- */

static int enc_parse_pad_mode(GPURSA_ENC_CTX *ctx, const OSSL_PARAM *p, int *pad)
{
    if (!gpursa_rsa_pad_mode_from_param(p, pad))
        goto bad;
    switch (*pad) {
    case RSA_PKCS1_PADDING:
    case RSA_NO_PADDING:
    case RSA_PKCS1_OAEP_PADDING:
    case RSA_PKCS1_WITH_TLS_PADDING:
        return 1;
    case RSA_X931_PADDING:
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_UNKNOWN_PADDING_TYPE,
                         "X9.31 padding is for signatures only");
        return 0;
    default:
        break;
    }
 bad:
    GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PADDING_MODE,
                     "padding mode not allowed for RSA encryption");
    return 0;
}

/* digest + digest-props, or mgf1-digest + mgf1-digest-props */
static int enc_set_digest(GPURSA_ENC_CTX *ctx, const OSSL_PARAM params[],
                          const char *name_key, const char *props_key,
                          ENC_DIGEST *d)
{
    char name[ENC_NAME_SIZE], props[ENC_PROPS_SIZE];
    int rn, rp;

    if ((rn = gpursa_rsa_string_param(ctx->provctx, params, name_key, name, sizeof(name))) <= 0)
        return rn == 0;
    if ((rp = gpursa_rsa_string_param(ctx->provctx, params, props_key, props, sizeof(props))) < 0)
        return 0;
    return enc_fetch_digest(ctx, d, name, rp == 1 ? props : NULL);
}

static int enc_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    GPURSA_ENC_CTX *ctx = vctx;
    const OSSL_PARAM *p;
    int pad;

    if (ctx == NULL)
        return 0;
    if (params == NULL)
        return 1;
    if (!enc_set_digest(ctx, params, OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST,
                        OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST_PROPS, &ctx->oaep)
        || !enc_set_digest(ctx, params, OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST,
                           OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST_PROPS, &ctx->mgf1))
        return 0;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_ASYM_CIPHER_PARAM_PAD_MODE)) != NULL) {
        if (!enc_parse_pad_mode(ctx, p, &pad))
            return 0;
        ctx->pad_mode = pad;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL)) != NULL) {
        void *label = NULL;
        size_t len = 0;

        if (!OSSL_PARAM_get_octet_string(p, &label, 0, &len)) {
            GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER, "bad OAEP label");
            return 0;
        }
        OPENSSL_clear_free(ctx->label, ctx->labellen);
        ctx->label = label;
        ctx->labellen = label != NULL ? len : 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION)) != NULL
        && !OSSL_PARAM_get_uint(p, &ctx->client_version))
        goto bad_uint;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION)) != NULL
        && !OSSL_PARAM_get_uint(p, &ctx->alt_version))
        goto bad_uint;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION)) != NULL
        && !OSSL_PARAM_get_uint(p, &ctx->implicit_rejection))
        goto bad_uint;
    /* Versions are 16-bit protocol numbers. */
    if (ctx->client_version > 0xffff || ctx->alt_version > 0xffff) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER, "TLS version out of range");
        ctx->client_version = ctx->alt_version = 0;
        return 0;
    }
    return 1;
 bad_uint:
    GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER, "bad %s", p->key);
    return 0;
}

static int enc_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    GPURSA_ENC_CTX *ctx = vctx;
    OSSL_PARAM *p;

    if (ctx == NULL)
        return 0;
    /* The TLS mode has no name: only the number can be read. */
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_PAD_MODE)) != NULL
        && !gpursa_rsa_pad_mode_to_param(p, ctx->pad_mode))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST)) != NULL
        && !OSSL_PARAM_set_utf8_string(p, ctx->oaep.md == NULL ? ""
                                       : EVP_MD_get0_name(ctx->oaep.md)))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST)) != NULL) {
        const EVP_MD *mgf1 = ctx->mgf1.md != NULL ? ctx->mgf1.md : ctx->oaep.md;

        if (!OSSL_PARAM_set_utf8_string(p, mgf1 == NULL ? "" : EVP_MD_get0_name(mgf1)))
            return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL)) != NULL
        && !OSSL_PARAM_set_octet_ptr(p, ctx->label, ctx->labellen))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION)) != NULL
        && !OSSL_PARAM_set_uint(p, ctx->client_version))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION)) != NULL
        && !OSSL_PARAM_set_uint(p, ctx->alt_version))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION)) != NULL
        && !OSSL_PARAM_set_uint(p, ctx->implicit_rejection))
        return 0;
    return 1;
}

static const OSSL_PARAM enc_gettable[] = {
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL, OSSL_PARAM_OCTET_PTR, NULL, 0),
    OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, NULL),
    OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, NULL),
    OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM enc_settable[] = {
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST_PROPS, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST_PROPS, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL, NULL, 0),
    OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, NULL),
    OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, NULL),
    OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM *enc_gettable_ctx_params(void *vctx, void *provctx)
{
    return enc_gettable;
}

static const OSSL_PARAM *enc_settable_ctx_params(void *vctx, void *provctx)
{
    return enc_settable;
}

const OSSL_DISPATCH gpursa_rsa_asym_cipher_functions[] = {
    { OSSL_FUNC_ASYM_CIPHER_NEWCTX, (void (*)(void))enc_newctx },
    { OSSL_FUNC_ASYM_CIPHER_FREECTX, (void (*)(void))enc_freectx },
    { OSSL_FUNC_ASYM_CIPHER_DUPCTX, (void (*)(void))enc_dupctx },
    { OSSL_FUNC_ASYM_CIPHER_ENCRYPT_INIT, (void (*)(void))enc_encrypt_init },
    { OSSL_FUNC_ASYM_CIPHER_ENCRYPT, (void (*)(void))enc_encrypt },
    { OSSL_FUNC_ASYM_CIPHER_DECRYPT_INIT, (void (*)(void))enc_decrypt_init },
    { OSSL_FUNC_ASYM_CIPHER_DECRYPT, (void (*)(void))enc_decrypt },
    { OSSL_FUNC_ASYM_CIPHER_GET_CTX_PARAMS, (void (*)(void))enc_get_ctx_params },
    { OSSL_FUNC_ASYM_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))enc_gettable_ctx_params },
    { OSSL_FUNC_ASYM_CIPHER_SET_CTX_PARAMS, (void (*)(void))enc_set_ctx_params },
    { OSSL_FUNC_ASYM_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))enc_settable_ctx_params },
    { 0, NULL }
};
