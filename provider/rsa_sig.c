/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa RSA signature: sign, verify, verify-recover, digest-sign and
 * digest-verify with the default provider's parameter names and semantics.
 *
 * Signing pads here (rsa_sig_pad.c) and runs the raw private-key operation
 * through the seam gpursa_rsa_private_raw(), which is where the GPU path
 * plugs in. Everything public (verify, verify-recover) is delegated to the
 * default provider through a context on the same key in the fallback library
 * context; every parameter accepted here is forwarded to it, and the whole
 * state is pushed again right before each delegated operation.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rsa.h>
#include "gpursa_prov.h"
#include "rsa_params.h"
#include "rsa_sig_pad.h"

/* The digest PSS uses when none was chosen (as the default provider does). */
#define SIG_DEFAULT_PSS_DIGEST "SHA1"
#define SIG_NAME_SIZE 50         /* OSSL_MAX_NAME_SIZE in OpenSSL's sources */

static OSSL_FUNC_signature_newctx_fn sig_newctx;
static OSSL_FUNC_signature_freectx_fn sig_freectx;
static OSSL_FUNC_signature_dupctx_fn sig_dupctx;
static OSSL_FUNC_signature_sign_init_fn sig_sign_init;
static OSSL_FUNC_signature_sign_fn sig_sign;
static OSSL_FUNC_signature_verify_init_fn sig_verify_init;
static OSSL_FUNC_signature_verify_fn sig_verify;
static OSSL_FUNC_signature_verify_recover_init_fn sig_verify_recover_init;
static OSSL_FUNC_signature_verify_recover_fn sig_verify_recover;
static OSSL_FUNC_signature_digest_sign_init_fn sig_digest_sign_init;
static OSSL_FUNC_signature_digest_sign_update_fn sig_digest_update;
static OSSL_FUNC_signature_digest_sign_final_fn sig_digest_sign_final;
static OSSL_FUNC_signature_digest_verify_init_fn sig_digest_verify_init;
static OSSL_FUNC_signature_digest_verify_update_fn sig_digest_update;
static OSSL_FUNC_signature_digest_verify_final_fn sig_digest_verify_final;
static OSSL_FUNC_signature_get_ctx_params_fn sig_get_ctx_params;
static OSSL_FUNC_signature_gettable_ctx_params_fn sig_gettable_ctx_params;
static OSSL_FUNC_signature_set_ctx_params_fn sig_set_ctx_params;
static OSSL_FUNC_signature_settable_ctx_params_fn sig_settable_ctx_params;
static OSSL_FUNC_signature_get_ctx_md_params_fn sig_get_ctx_md_params;
static OSSL_FUNC_signature_gettable_ctx_md_params_fn sig_gettable_ctx_md_params;
static OSSL_FUNC_signature_set_ctx_md_params_fn sig_set_ctx_md_params;
static OSSL_FUNC_signature_settable_ctx_md_params_fn sig_settable_ctx_md_params;

/* A digest in use: the fetched method, our table entry, the name as given. */
typedef struct {
    EVP_MD *md;
    const GPURSA_SIG_MD *smd;
    char name[SIG_NAME_SIZE];
} SIG_DIGEST;

typedef struct {
    GPURSA_PROV_CTX *provctx;
    char *propq;
    GPURSA_KEY *key;               /* borrowed: the EVP_PKEY keeps it alive */
    int operation;                 /* EVP_PKEY_OP_SIGN / _VERIFY / _VERIFYRECOVER */
    /* Cleared between digest-sign/verify init and final: the digest that
     * is hashing the message must not change underneath it. */
    unsigned int allow_md : 1;
    unsigned int mgf1_set : 1;     /* MGF1 digest chosen, else it follows md */
    SIG_DIGEST md, mgf1;
    EVP_MD_CTX *mdctx;             /* digest-sign/verify message hash */
    int pad_mode;
    int saltlen;                   /* >= 0 or RSA_PSS_SALTLEN_{DIGEST,AUTO,MAX,AUTO_DIGEST_MAX} */
    EVP_PKEY_CTX *delegate;        /* verify ops: the default provider's ctx */
    /* composite algorithms (RSA-SHA256 ...): the digest and padding are fixed;
     * message: the input is the message, not its digest */
    unsigned int composite : 1;
    unsigned int message : 1;
    unsigned char *vsig;           /* the signature verify_message_final checks */
    size_t vsiglen;
} GPURSA_SIG_CTX;

static void sig_digest_clear(SIG_DIGEST *d)
{
    EVP_MD_free(d->md);
    memset(d, 0, sizeof(*d));
}

static int sig_digest_copy(SIG_DIGEST *dst, const SIG_DIGEST *src)
{
    if (src->md != NULL && !EVP_MD_up_ref(src->md))
        return 0;
    sig_digest_clear(dst);
    *dst = *src;
    return 1;
}

/*
 * The PSS salt length to sign with when the caller sets none: whatever the
 * running libcrypto's default provider uses, so that a signature through
 * gpursa is the one the application's own OpenSSL would make. That is "auto"
 * (the maximum) in OpenSSL 3.0 and "auto-digestmax" (the digest length, capped
 * by the maximum) from 3.1. The default provider is asked once, through a
 * verify context on the first key (its default is the same for signing);
 * without a key, or if asking fails, the running library's version decides.
 */
static int sig_default_saltlen(GPURSA_PROV_CTX *provctx, GPURSA_KEY *key)
{
    int saltlen = atomic_load(&provctx->pss_default_saltlen), pad = RSA_PKCS1_PSS_PADDING;
    OSSL_PARAM set[] = { OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PAD_MODE, &pad), OSSL_PARAM_END };
    OSSL_PARAM get[] = { OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &saltlen),
                         OSSL_PARAM_END };
    EVP_PKEY_CTX *pctx;

    if (saltlen != 0)
        return saltlen;
    if (key != NULL) {
        ERR_set_mark();
        pctx = gpursa_fallback_pkey_ctx(key);
        if (pctx != NULL && EVP_PKEY_verify_init(pctx) > 0
            && EVP_PKEY_CTX_set_params(pctx, set) > 0
            && EVP_PKEY_CTX_get_params(pctx, get) > 0 && saltlen < 0
            && saltlen >= RSA_PSS_SALTLEN_AUTO_DIGEST_MAX) {
            atomic_store(&provctx->pss_default_saltlen, saltlen);
        } else {
            saltlen = 0;
        }
        EVP_PKEY_CTX_free(pctx);
        ERR_pop_to_mark();
        if (saltlen != 0) {
            gpursa_log(provctx, 3, "the default PSS salt length is %d", saltlen);
            return saltlen;
        }
    }
    return OpenSSL_version_num() >= 0x30100000L ? RSA_PSS_SALTLEN_AUTO_DIGEST_MAX
                                                : RSA_PSS_SALTLEN_AUTO;
}

/* ---- context life cycle ---- */

static void *sig_newctx(void *provctx, const char *propq)
{
    GPURSA_PROV_CTX *pctx = provctx;
    GPURSA_SIG_CTX *ctx = OPENSSL_zalloc(sizeof(*ctx));

    if (ctx == NULL || (propq != NULL && (ctx->propq = OPENSSL_strdup(propq)) == NULL)) {
        OPENSSL_free(ctx);
        GPURSA_RAISE(pctx, GPURSA_R_MALLOC);
        return NULL;
    }
    ctx->provctx = pctx;
    ctx->allow_md = 1;
    ctx->pad_mode = RSA_PKCS1_PADDING;
    ctx->saltlen = sig_default_saltlen(pctx, NULL);
    return ctx;
}

static void sig_freectx(void *vctx)
{
    GPURSA_SIG_CTX *ctx = vctx;

    if (ctx == NULL)
        return;
    EVP_MD_CTX_free(ctx->mdctx);
    EVP_PKEY_CTX_free(ctx->delegate);
    OPENSSL_free(ctx->vsig);
    sig_digest_clear(&ctx->md);
    sig_digest_clear(&ctx->mgf1);
    OPENSSL_free(ctx->propq);
    OPENSSL_clear_free(ctx, sizeof(*ctx));
}

static void *sig_dupctx(void *vctx)
{
    GPURSA_SIG_CTX *src = vctx, *dst;

    if ((dst = OPENSSL_zalloc(sizeof(*dst))) == NULL)
        goto malloc_err;
    *dst = *src;
    dst->propq = NULL;
    dst->mdctx = NULL;
    dst->delegate = NULL;
    dst->vsig = NULL;
    memset(&dst->md, 0, sizeof(dst->md));
    memset(&dst->mgf1, 0, sizeof(dst->mgf1));
    if (!sig_digest_copy(&dst->md, &src->md)
        || !sig_digest_copy(&dst->mgf1, &src->mgf1)
        || (src->propq != NULL && (dst->propq = OPENSSL_strdup(src->propq)) == NULL)
        || (src->vsig != NULL && (dst->vsig = OPENSSL_memdup(src->vsig, src->vsiglen)) == NULL))
        goto malloc_err;
    /* mid-stream dup: the copy continues the same message hash */
    if (src->mdctx != NULL
        && ((dst->mdctx = EVP_MD_CTX_new()) == NULL
            || !EVP_MD_CTX_copy_ex(dst->mdctx, src->mdctx))) {
        GPURSA_RAISE_MSG(src->provctx, GPURSA_R_BAD_DIGEST, "cannot copy the digest state");
        goto err;
    }
    if (src->delegate != NULL && (dst->delegate = EVP_PKEY_CTX_dup(src->delegate)) == NULL) {
        GPURSA_RAISE_MSG(src->provctx, GPURSA_R_FALLBACK_FAILED, "cannot copy the verify context");
        goto err;
    }
    return dst;

 malloc_err:
    GPURSA_RAISE(src->provctx, GPURSA_R_MALLOC);
 err:
    sig_freectx(dst);
    return NULL;
}

/* ---- digests ---- */

/*
 * Fetch |name| for signing (|not_allowed|: the reason raised for a digest RSA
 * signatures cannot use). Digests come from the provider's library context;
 * the operation's property query often reads "provider=gpursa", which no
 * digest satisfies, so when it came from the operation (not from an explicit
 * "properties" parameter) a failed fetch retries without it.
 */
static int sig_fetch_digest(GPURSA_SIG_CTX *ctx, SIG_DIGEST *out,
                            const char *name, const char *props, int not_allowed)
{
    EVP_MD *md;

    if (strlen(name) >= sizeof(out->name)) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_DIGEST, "digest name too long");
        return 0;
    }
    md = gpursa_rsa_fetch_md(ctx->provctx, name, props != NULL ? props : ctx->propq,
                             props == NULL && ctx->propq != NULL);
    if (md == NULL)
        return 0;
    if ((out->smd = gpursa_sig_md_find(md)) == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, not_allowed,
                         "digest %s is not allowed for RSA signatures", name);
        EVP_MD_free(md);
        return 0;
    }
    out->md = md;
    strcpy(out->name, name);
    return 1;
}

/* ---- parameters ---- */

static int sig_parse_pad_mode(GPURSA_SIG_CTX *ctx, const OSSL_PARAM *p, int *pad)
{
    if (!gpursa_rsa_pad_mode_from_param(p, pad))
        goto bad;
    switch (*pad) {
    case RSA_PKCS1_PADDING:
    case RSA_NO_PADDING:
        return 1;
    case RSA_PKCS1_PSS_PADDING:
        if (ctx->operation == EVP_PKEY_OP_SIGN || ctx->operation == EVP_PKEY_OP_VERIFY)
            return 1;
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PADDING_MODE,
                         "PSS padding is for sign and verify only");
        return 0;
    case RSA_X931_PADDING:
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PADDING_MODE,
                         "X9.31 padding is not supported by gpursa");
        return 0;
    default:
        break;
    }
 bad:
    GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PADDING_MODE,
                     "padding mode not allowed for RSA signatures");
    return 0;
}

static int sig_parse_saltlen(GPURSA_SIG_CTX *ctx, const OSSL_PARAM *p, int *saltlen)
{
    if (p->data_type == OSSL_PARAM_INTEGER) {
        if (!OSSL_PARAM_get_int(p, saltlen))
            goto bad;
    } else if (p->data_type == OSSL_PARAM_UTF8_STRING) {
        char s[24], *ps = s;

        if (!OSSL_PARAM_get_utf8_string(p, &ps, sizeof(s)))
            goto bad;

        if (strcmp(s, OSSL_PKEY_RSA_PSS_SALT_LEN_DIGEST) == 0) {
            *saltlen = RSA_PSS_SALTLEN_DIGEST;
        } else if (strcmp(s, OSSL_PKEY_RSA_PSS_SALT_LEN_MAX) == 0) {
            *saltlen = RSA_PSS_SALTLEN_MAX;
        } else if (strcmp(s, OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO) == 0) {
            *saltlen = RSA_PSS_SALTLEN_AUTO;
        } else if (strcmp(s, OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO_DIGEST_MAX) == 0) {
            *saltlen = RSA_PSS_SALTLEN_AUTO_DIGEST_MAX;
        } else {
            char *end;
            long v;

            errno = 0;
            v = strtol(s, &end, 10);
            if (errno != 0 || end == s || *end != '\0' || v < INT_MIN || v > INT_MAX)
                goto bad;
            *saltlen = (int)v;
        }
    } else {
        goto bad;
    }
    /* The special values end at RSA_PSS_SALTLEN_AUTO_DIGEST_MAX (-4). */
    if (*saltlen >= RSA_PSS_SALTLEN_AUTO_DIGEST_MAX)
        return 1;
 bad:
    GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_SALT_LENGTH, "bad PSS salt length");
    return 0;
}

/* Reads an optional UTF-8 parameter into a caller buffer; NULL if absent. */
static int sig_get_string(GPURSA_SIG_CTX *ctx, const OSSL_PARAM params[],
                          const char *key, char *buf, size_t size, const char **out)
{
    int r = gpursa_rsa_string_param(ctx->provctx, params, key, buf, size);

    *out = r == 1 ? buf : NULL;
    return r >= 0;
}

/* The salt length to verify with as the default provider knows it:
 * "auto-digestmax" verifies as "auto" does, and OpenSSL 3.0 knows only "auto". */
static int sig_delegate_saltlen(int saltlen)
{
    return saltlen == RSA_PSS_SALTLEN_AUTO_DIGEST_MAX ? RSA_PSS_SALTLEN_AUTO : saltlen;
}

/* Hands accepted parameters to the default provider's context as well, minus
 * the property queries, which name providers of our library context; the salt
 * length goes as the number parsed from it. */
static int sig_forward_params(GPURSA_SIG_CTX *ctx, const OSSL_PARAM params[], int saltlen)
{
    OSSL_PARAM *fwd;
    size_t n = 0, i, j = 0;
    int ok;

    saltlen = sig_delegate_saltlen(saltlen);

    for (n = 0; params[n].key != NULL; n++)
        continue;
    if ((fwd = OPENSSL_malloc((n + 1) * sizeof(*fwd))) == NULL) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_MALLOC);
        return 0;
    }
    for (i = 0; i < n; i++)
        if (strcmp(params[i].key, OSSL_SIGNATURE_PARAM_PSS_SALTLEN) == 0)
            fwd[j++] = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &saltlen);
        else if (strcmp(params[i].key, OSSL_SIGNATURE_PARAM_PROPERTIES) != 0
                 && strcmp(params[i].key, OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES) != 0)
            fwd[j++] = params[i];
    fwd[j] = OSSL_PARAM_construct_end();
    ok = EVP_PKEY_CTX_set_params(ctx->delegate, fwd) > 0;
    OPENSSL_free(fwd);
    if (!ok)
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED,
                         "the default provider refused the signature parameters");
    return ok;
}

static int sig_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    GPURSA_SIG_CTX *ctx = vctx;
    const OSSL_PARAM *p;
    char mdname[SIG_NAME_SIZE], mdprops[256], mgfname[SIG_NAME_SIZE], mgfprops[256];
    const char *pmdname, *pmdprops, *pmgfname, *pmgfprops;
    SIG_DIGEST md = { 0 }, mgf1 = { 0 };
    int pad = ctx->pad_mode, saltlen = ctx->saltlen, ok = 0;

    if (params == NULL || params[0].key == NULL)
        return 1;
    if (!sig_get_string(ctx, params, OSSL_SIGNATURE_PARAM_DIGEST, mdname, sizeof(mdname), &pmdname)
        || !sig_get_string(ctx, params, OSSL_SIGNATURE_PARAM_PROPERTIES, mdprops, sizeof(mdprops), &pmdprops)
        || !sig_get_string(ctx, params, OSSL_SIGNATURE_PARAM_MGF1_DIGEST, mgfname, sizeof(mgfname), &pmgfname)
        || !sig_get_string(ctx, params, OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES, mgfprops, sizeof(mgfprops), &pmgfprops))
        return 0;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_PAD_MODE)) != NULL
        && !sig_parse_pad_mode(ctx, p, &pad))
        return 0;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_PSS_SALTLEN)) != NULL) {
        if (pad != RSA_PKCS1_PSS_PADDING) {
            GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_NEEDS_PSS,
                             "a PSS salt length needs PSS padding first");
            return 0;
        }
        if (!sig_parse_saltlen(ctx, p, &saltlen))
            return 0;
    }
    if (pmgfname != NULL && pad != RSA_PKCS1_PSS_PADDING) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_INVALID_MGF1_MD,
                         "an MGF1 digest needs PSS padding");
        return 0;
    }
    /* PSS always has a digest; SHA-1 unless one is chosen. */
    if (pmdname == NULL && ctx->md.md == NULL && pad == RSA_PKCS1_PSS_PADDING)
        pmdname = SIG_DEFAULT_PSS_DIGEST;

    if (pmdname != NULL && !ctx->allow_md) {
        /* inside digest-sign/verify the digest may only be restated */
        if (ctx->md.md == NULL || !EVP_MD_is_a(ctx->md.md, pmdname)) {
            GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_DIGEST,
                             "digest %s cannot replace %s mid-operation", pmdname,
                             ctx->md.name);
            return 0;
        }
        pmdname = NULL;
    }
    if ((pmdname != NULL
         && !sig_fetch_digest(ctx, &md, pmdname, pmdprops, GPURSA_R_DIGEST_NOT_ALLOWED))
        || (pmgfname != NULL
            && !sig_fetch_digest(ctx, &mgf1, pmgfname, pmgfprops,
                                 GPURSA_R_MGF1_DIGEST_NOT_ALLOWED)))
        goto end;
    if (pad == RSA_NO_PADDING && (md.md != NULL || (pmdname == NULL && ctx->md.md != NULL))) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_INVALID_PADDING_MODE,
                         "no padding cannot be combined with a digest");
        goto end;
    }
    if (ctx->delegate != NULL && !sig_forward_params(ctx, params, saltlen))
        goto end;

    ctx->pad_mode = pad;
    ctx->saltlen = saltlen;
    if (mgf1.md != NULL) {
        sig_digest_clear(&ctx->mgf1);
        ctx->mgf1 = mgf1;
        ctx->mgf1_set = 1;
        mgf1.md = NULL;
    }
    if (md.md != NULL) {
        if (!ctx->mgf1_set && !sig_digest_copy(&ctx->mgf1, &md)) {
            GPURSA_RAISE(ctx->provctx, GPURSA_R_INTERNAL);
            goto end;
        }
        sig_digest_clear(&ctx->md);
        ctx->md = md;
        md.md = NULL;
        EVP_MD_CTX_free(ctx->mdctx);
        ctx->mdctx = NULL;
    }
    ok = 1;
 end:
    sig_digest_clear(&md);
    sig_digest_clear(&mgf1);
    return ok;
}

static const OSSL_PARAM sig_settable[] = {
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PROPERTIES, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
    OSSL_PARAM_END
};

/* During digest-sign/verify the digest is fixed, so it is not offered. */
static const OSSL_PARAM sig_settable_no_digest[] = {
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *sig_settable_ctx_params(void *vctx, void *provctx)
{
    GPURSA_SIG_CTX *ctx = vctx;

    return ctx != NULL && !ctx->allow_md ? sig_settable_no_digest : sig_settable;
}

/* The salt length a signature made now would carry; an explicit length is
 * reported as set, as the default provider does, even where signing with it
 * would fail. */
static int sig_effective_saltlen(GPURSA_SIG_CTX *ctx)
{
    if (ctx->saltlen >= 0)
        return ctx->saltlen;
    if (ctx->md.md == NULL) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_BAD_DIGEST);
        return -1;
    }
    return gpursa_pss_saltlen(ctx->provctx, ctx->saltlen,
                              (size_t)EVP_MD_get_size(ctx->md.md),
                              gpursa_key_bits(ctx->key));
}

static int sig_get_aid(GPURSA_SIG_CTX *ctx, OSSL_PARAM *p)
{
    unsigned char aid[GPURSA_SIG_AID_MAX];
    size_t aidlen;
    int saltlen;

    if (ctx->key == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_KEY, "no key");
        return 0;
    }
    switch (ctx->pad_mode) {
    case RSA_PKCS1_PADDING:
        if (!gpursa_sig_aid_pkcs1(ctx->provctx, ctx->md.smd, aid, sizeof(aid), &aidlen))
            return 0;
        break;
    case RSA_PKCS1_PSS_PADDING:
        if ((saltlen = sig_effective_saltlen(ctx)) < 0
            || !gpursa_sig_aid_pss(ctx->provctx, ctx->md.smd,
                                   ctx->mgf1.smd != NULL ? ctx->mgf1.smd : ctx->md.smd,
                                   saltlen, aid, sizeof(aid), &aidlen))
            return 0;
        break;
    default:
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "no AlgorithmIdentifier without padding");
        return 0;
    }
    return OSSL_PARAM_set_octet_string(p, aid, aidlen);
}

static int sig_get_ctx_params(void *vctx, OSSL_PARAM *params)
{
    GPURSA_SIG_CTX *ctx = vctx;
    OSSL_PARAM *p;

    if (ctx == NULL)
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_ALGORITHM_ID)) != NULL
        && !sig_get_aid(ctx, p))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_PAD_MODE)) != NULL
        && !gpursa_rsa_pad_mode_to_param(p, ctx->pad_mode))
        goto bad;
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_DIGEST)) != NULL
        && !OSSL_PARAM_set_utf8_string(p, ctx->md.name))
        goto bad;
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_MGF1_DIGEST)) != NULL
        && !OSSL_PARAM_set_utf8_string(p, ctx->mgf1.name))
        goto bad;
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_PSS_SALTLEN)) != NULL) {
        if (p->data_type == OSSL_PARAM_INTEGER) {
            if (!OSSL_PARAM_set_int(p, ctx->saltlen))
                goto bad;
        } else {
            char num[16];
            const char *s = num;

            switch (ctx->saltlen) {
            case RSA_PSS_SALTLEN_DIGEST:
                s = OSSL_PKEY_RSA_PSS_SALT_LEN_DIGEST;
                break;
            case RSA_PSS_SALTLEN_MAX:
                s = OSSL_PKEY_RSA_PSS_SALT_LEN_MAX;
                break;
            case RSA_PSS_SALTLEN_AUTO:
                s = OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO;
                break;
            case RSA_PSS_SALTLEN_AUTO_DIGEST_MAX:
                s = OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO_DIGEST_MAX;
                break;
            default:
                BIO_snprintf(num, sizeof(num), "%d", ctx->saltlen);
            }
            if (!OSSL_PARAM_set_utf8_string(p, s))
                goto bad;
        }
    }
    return 1;
 bad:
    GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER, "cannot return %s", p->key);
    return 0;
}

static const OSSL_PARAM sig_gettable[] = {
    OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_ALGORITHM_ID, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *sig_gettable_ctx_params(void *vctx, void *provctx)
{
    return sig_gettable;
}

/* ---- md params: passed through to the message digest ---- */

static int sig_get_ctx_md_params(void *vctx, OSSL_PARAM *params)
{
    GPURSA_SIG_CTX *ctx = vctx;

    return ctx->mdctx != NULL && EVP_MD_CTX_get_params(ctx->mdctx, params);
}

static const OSSL_PARAM *sig_gettable_ctx_md_params(void *vctx)
{
    GPURSA_SIG_CTX *ctx = vctx;

    return ctx->md.md == NULL ? NULL : EVP_MD_gettable_ctx_params(ctx->md.md);
}

static int sig_set_ctx_md_params(void *vctx, const OSSL_PARAM params[])
{
    GPURSA_SIG_CTX *ctx = vctx;

    return ctx->mdctx != NULL && EVP_MD_CTX_set_params(ctx->mdctx, params);
}

static const OSSL_PARAM *sig_settable_ctx_md_params(void *vctx)
{
    GPURSA_SIG_CTX *ctx = vctx;

    return ctx->md.md == NULL ? NULL : EVP_MD_settable_ctx_params(ctx->md.md);
}

/* ---- init ---- */

static int sig_init(GPURSA_SIG_CTX *ctx, void *vkey, const OSSL_PARAM params[], int operation)
{
    GPURSA_KEY *key = vkey != NULL ? vkey : ctx->key;
    int ok;

    if (key == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_KEY, "no key");
        return 0;
    }
    if (gpursa_key_size(key) <= 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_MISSING_KEY_PART, "the key has no modulus");
        return 0;
    }
    if (operation == EVP_PKEY_OP_SIGN && !gpursa_key_is_private(key)) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_NOT_PRIVATE_KEY);
        return 0;
    }
    ctx->key = key;
    ctx->operation = operation;
    ctx->allow_md = 1;
    ctx->composite = 0;
    ctx->message = 0;
    OPENSSL_free(ctx->vsig);
    ctx->vsig = NULL;
    ctx->vsiglen = 0;
    ctx->pad_mode = RSA_PKCS1_PADDING;
    ctx->saltlen = sig_default_saltlen(ctx->provctx, key);
    EVP_PKEY_CTX_free(ctx->delegate);
    ctx->delegate = NULL;
    if (operation != EVP_PKEY_OP_SIGN) {
        if ((ctx->delegate = gpursa_fallback_pkey_ctx(key)) == NULL)
            return 0;
        ok = operation == EVP_PKEY_OP_VERIFY ? EVP_PKEY_verify_init(ctx->delegate)
                                             : EVP_PKEY_verify_recover_init(ctx->delegate);
        if (ok <= 0) {
            GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED,
                             "the default provider cannot verify with this key");
            return 0;
        }
    }
    return sig_set_ctx_params(ctx, params);
}

static int sig_sign_init(void *vctx, void *vkey, const OSSL_PARAM params[])
{
    return sig_init(vctx, vkey, params, EVP_PKEY_OP_SIGN);
}

static int sig_verify_init(void *vctx, void *vkey, const OSSL_PARAM params[])
{
    return sig_init(vctx, vkey, params, EVP_PKEY_OP_VERIFY);
}

static int sig_verify_recover_init(void *vctx, void *vkey, const OSSL_PARAM params[])
{
    return sig_init(vctx, vkey, params, EVP_PKEY_OP_VERIFYRECOVER);
}

/* ---- sign ---- */

static int sig_sign(void *vctx, unsigned char *sig, size_t *siglen, size_t sigsize,
                    const unsigned char *tbs, size_t tbslen)
{
    GPURSA_SIG_CTX *ctx = vctx;
    unsigned char *em = NULL;
    size_t k;
    int ok = 0;

    if (ctx->key == NULL || ctx->operation != EVP_PKEY_OP_SIGN) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "the context was not initialised for signing");
        return 0;
    }
    k = (size_t)gpursa_key_size(ctx->key);
    if (sig == NULL) {
        *siglen = k;
        return 1;
    }
    if (sigsize < k) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_INVALID_SIGNATURE_SIZE,
                         "signature buffer is %zu bytes, needs %zu", sigsize, k);
        return 0;
    }
    if (tbs == NULL && tbslen != 0) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_BAD_PARAMETER);
        return 0;
    }
    if (ctx->md.smd != NULL && tbslen != gpursa_sig_md_size(ctx->md.smd)) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_INVALID_DIGEST_LENGTH,
                         "%s digest is %zu bytes, got %zu", ctx->md.name,
                         gpursa_sig_md_size(ctx->md.smd), tbslen);
        return 0;
    }
    if ((em = OPENSSL_malloc(k)) == NULL) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_MALLOC);
        return 0;
    }
    switch (ctx->pad_mode) {
    case RSA_PKCS1_PADDING:
        /* with a digest, tbs is the hash (DigestInfo-wrapped); without, raw */
        ok = gpursa_emsa_pkcs1_encode(ctx->provctx, em, k, ctx->md.smd, tbs, tbslen);
        break;
    case RSA_PKCS1_PSS_PADDING:
        ok = gpursa_emsa_pss_encode(ctx->provctx, em, gpursa_key_bits(ctx->key),
                                    ctx->md.md,
                                    ctx->mgf1.md != NULL ? ctx->mgf1.md : ctx->md.md,
                                    tbs, tbslen, ctx->saltlen);
        break;
    case RSA_NO_PADDING:
        if (tbslen != k) {
            GPURSA_RAISE_MSG(ctx->provctx, tbslen < k ? GPURSA_R_DATA_TOO_SMALL_FOR_KEY_SIZE
                             : GPURSA_R_DATA_TOO_LARGE_FOR_KEY_SIZE,
                             "unpadded input must be the key size, %zu bytes, got %zu",
                             k, tbslen);
            break;
        }
        memcpy(em, tbs, k);
        ok = 1;
        break;
    default:
        GPURSA_RAISE(ctx->provctx, GPURSA_R_BAD_PADDING_MODE);
        break;
    }
    /* the seam checks em < n and raises its own error */
    ok = ok && gpursa_rsa_private_raw(ctx->key, em, sig, k);
    OPENSSL_clear_free(em, k);
    if (ok)
        *siglen = k;
    return ok;
}

/* ---- verify (delegated) ---- */

/*
 * Pushes the complete state to the default provider's context right before
 * it verifies: a context re-initialised or dup'ed, or a digest set before
 * init, must not leave the two sides disagreeing.
 */
static int sig_sync_delegate(GPURSA_SIG_CTX *ctx)
{
    OSSL_PARAM params[5], *p = params;
    int pad = ctx->pad_mode, saltlen = sig_delegate_saltlen(ctx->saltlen);

    if (ctx->delegate == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "the context was not initialised for verifying");
        return 0;
    }
    *p++ = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_PAD_MODE, &pad);
    if (ctx->md.md != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST,
                                                ctx->md.name, 0);
    if (pad == RSA_PKCS1_PSS_PADDING) {
        *p++ = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &saltlen);
        if (ctx->mgf1.md != NULL)
            *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST,
                                                    ctx->mgf1.name, 0);
    }
    *p = OSSL_PARAM_construct_end();
    if (EVP_PKEY_CTX_set_params(ctx->delegate, params) <= 0) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED,
                         "the default provider refused the signature parameters");
        return 0;
    }
    return 1;
}

static int sig_verify(void *vctx, const unsigned char *sig, size_t siglen,
                      const unsigned char *tbs, size_t tbslen)
{
    GPURSA_SIG_CTX *ctx = vctx;
    int r;

    if (ctx->operation != EVP_PKEY_OP_VERIFY) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "the context was not initialised for verifying");
        return 0;
    }
    if (!sig_sync_delegate(ctx))
        return 0;
    /* 0, a mismatch, leaves the default provider's reason on the queue;
     * below 0 the delegated context itself failed */
    r = EVP_PKEY_verify(ctx->delegate, sig, siglen, tbs, tbslen);
    if (r < 0)
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_FALLBACK_FAILED, "delegated verify failed");
    return r > 0;
}

static int sig_verify_recover(void *vctx, unsigned char *rout, size_t *routlen,
                              size_t routsize, const unsigned char *sig, size_t siglen)
{
    GPURSA_SIG_CTX *ctx = vctx;
    size_t outlen = routsize;

    if (ctx->key == NULL || ctx->operation != EVP_PKEY_OP_VERIFYRECOVER) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "the context was not initialised for verify-recover");
        return 0;
    }
    if (rout == NULL) {
        *routlen = (size_t)gpursa_key_size(ctx->key);
        return 1;
    }
    if (!sig_sync_delegate(ctx)
        || EVP_PKEY_verify_recover(ctx->delegate, rout, &outlen, sig, siglen) <= 0)
        return 0;
    *routlen = outlen;
    return 1;
}

/* ---- digest-sign / digest-verify ---- */

/* Starts hashing the message with the context's digest. */
static int sig_start_hash(GPURSA_SIG_CTX *ctx, const OSSL_PARAM params[])
{
    if (ctx->md.md == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_DIGEST, "no digest for digest-sign/verify");
        return 0;
    }
    if ((ctx->mdctx == NULL && (ctx->mdctx = EVP_MD_CTX_new()) == NULL)
        || !EVP_DigestInit_ex2(ctx->mdctx, ctx->md.md, params)) {
        EVP_MD_CTX_free(ctx->mdctx);
        ctx->mdctx = NULL;
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_DIGEST, "cannot start %s", ctx->md.name);
        return 0;
    }
    return 1;
}

static int sig_digest_init(GPURSA_SIG_CTX *ctx, const char *mdname, void *vkey,
                           const OSSL_PARAM params[], int operation)
{
    if (!sig_init(ctx, vkey, params, operation))
        return 0;
    if (mdname != NULL && mdname[0] != '\0'
        && (ctx->md.md == NULL || !EVP_MD_is_a(ctx->md.md, mdname))) {
        OSSL_PARAM set[2] = {
            OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST,
                                             (char *)mdname, 0),
            OSSL_PARAM_END
        };

        if (!sig_set_ctx_params(ctx, set))
            return 0;
    }
    if (!sig_start_hash(ctx, params))
        return 0;
    ctx->allow_md = 0;
    return 1;
}

static int sig_digest_sign_init(void *vctx, const char *mdname, void *vkey,
                                const OSSL_PARAM params[])
{
    return sig_digest_init(vctx, mdname, vkey, params, EVP_PKEY_OP_SIGN);
}

static int sig_digest_verify_init(void *vctx, const char *mdname, void *vkey,
                                  const OSSL_PARAM params[])
{
    return sig_digest_init(vctx, mdname, vkey, params, EVP_PKEY_OP_VERIFY);
}

static int sig_digest_update(void *vctx, const unsigned char *data, size_t datalen)
{
    GPURSA_SIG_CTX *ctx = vctx;

    if (ctx->mdctx == NULL || ctx->allow_md) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "no digest-sign/verify in progress");
        return 0;
    }
    if (!EVP_DigestUpdate(ctx->mdctx, data, datalen)) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_BAD_DIGEST);
        return 0;
    }
    return 1;
}

/* Ends the message hash; the digest may change again afterwards. */
static int sig_digest_final(GPURSA_SIG_CTX *ctx, unsigned char *digest, size_t *dlen)
{
    unsigned int len = 0;

    if (ctx->mdctx == NULL || ctx->allow_md) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "no digest-sign/verify in progress");
        return 0;
    }
    ctx->allow_md = 1;
    if (!EVP_DigestFinal_ex(ctx->mdctx, digest, &len)) {
        GPURSA_RAISE(ctx->provctx, GPURSA_R_BAD_DIGEST);
        return 0;
    }
    *dlen = len;
    return 1;
}

static int sig_digest_sign_final(void *vctx, unsigned char *sig, size_t *siglen,
                                 size_t sigsize)
{
    GPURSA_SIG_CTX *ctx = vctx;
    unsigned char digest[EVP_MAX_MD_SIZE];
    size_t dlen;
    int ok;

    /* a size query leaves the hash running */
    if (sig == NULL)
        return sig_sign(ctx, NULL, siglen, 0, NULL, 0);
    if (!sig_digest_final(ctx, digest, &dlen))
        return 0;
    ok = sig_sign(ctx, sig, siglen, sigsize, digest, dlen);
    OPENSSL_cleanse(digest, sizeof(digest));
    return ok;
}

static int sig_digest_verify_final(void *vctx, const unsigned char *sig, size_t siglen)
{
    GPURSA_SIG_CTX *ctx = vctx;
    unsigned char digest[EVP_MAX_MD_SIZE];
    size_t dlen;

    return sig_digest_final(ctx, digest, &dlen)
           && sig_verify(ctx, sig, siglen, digest, dlen);
}

const OSSL_DISPATCH gpursa_rsa_signature_functions[] = {
    { OSSL_FUNC_SIGNATURE_NEWCTX, (void (*)(void))sig_newctx },
    { OSSL_FUNC_SIGNATURE_FREECTX, (void (*)(void))sig_freectx },
    { OSSL_FUNC_SIGNATURE_DUPCTX, (void (*)(void))sig_dupctx },
    { OSSL_FUNC_SIGNATURE_SIGN_INIT, (void (*)(void))sig_sign_init },
    { OSSL_FUNC_SIGNATURE_SIGN, (void (*)(void))sig_sign },
    { OSSL_FUNC_SIGNATURE_VERIFY_INIT, (void (*)(void))sig_verify_init },
    { OSSL_FUNC_SIGNATURE_VERIFY, (void (*)(void))sig_verify },
    { OSSL_FUNC_SIGNATURE_VERIFY_RECOVER_INIT, (void (*)(void))sig_verify_recover_init },
    { OSSL_FUNC_SIGNATURE_VERIFY_RECOVER, (void (*)(void))sig_verify_recover },
    { OSSL_FUNC_SIGNATURE_DIGEST_SIGN_INIT, (void (*)(void))sig_digest_sign_init },
    { OSSL_FUNC_SIGNATURE_DIGEST_SIGN_UPDATE, (void (*)(void))sig_digest_update },
    { OSSL_FUNC_SIGNATURE_DIGEST_SIGN_FINAL, (void (*)(void))sig_digest_sign_final },
    { OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_INIT, (void (*)(void))sig_digest_verify_init },
    { OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_UPDATE, (void (*)(void))sig_digest_update },
    { OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_FINAL, (void (*)(void))sig_digest_verify_final },
    { OSSL_FUNC_SIGNATURE_GET_CTX_PARAMS, (void (*)(void))sig_get_ctx_params },
    { OSSL_FUNC_SIGNATURE_GETTABLE_CTX_PARAMS, (void (*)(void))sig_gettable_ctx_params },
    { OSSL_FUNC_SIGNATURE_SET_CTX_PARAMS, (void (*)(void))sig_set_ctx_params },
    { OSSL_FUNC_SIGNATURE_SETTABLE_CTX_PARAMS, (void (*)(void))sig_settable_ctx_params },
    { OSSL_FUNC_SIGNATURE_GET_CTX_MD_PARAMS, (void (*)(void))sig_get_ctx_md_params },
    { OSSL_FUNC_SIGNATURE_GETTABLE_CTX_MD_PARAMS, (void (*)(void))sig_gettable_ctx_md_params },
    { OSSL_FUNC_SIGNATURE_SET_CTX_MD_PARAMS, (void (*)(void))sig_set_ctx_md_params },
    { OSSL_FUNC_SIGNATURE_SETTABLE_CTX_MD_PARAMS, (void (*)(void))sig_settable_ctx_md_params },
    { 0, NULL }
};

#ifdef OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT
/*
 * ---- composite signature algorithms (OpenSSL 3.4+): "RSA-SHA256" & co ----
 *
 * An application may fetch the signature algorithm by its full name and sign
 * through EVP_PKEY_sign_init_ex2 (tbs is the digest) or
 * EVP_PKEY_sign_message_init (tbs is the message), and verify alike. They are
 * PKCS#1 v1.5 with a fixed digest, as in the default provider: the same
 * context as above, initialised with the digest fixed and the padding and
 * digest parameters closed; the only parameter is the signature that
 * EVP_PKEY_verify_message_final checks.
 */

static OSSL_FUNC_signature_query_key_types_fn sig_alg_key_types;
static OSSL_FUNC_signature_sign_fn sig_alg_sign;
static OSSL_FUNC_signature_verify_fn sig_alg_verify;
static OSSL_FUNC_signature_verify_message_final_fn sig_alg_verify_message_final;
static OSSL_FUNC_signature_set_ctx_params_fn sig_alg_set_ctx_params;
static OSSL_FUNC_signature_settable_ctx_params_fn sig_alg_settable_ctx_params;

static int sig_alg_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    GPURSA_SIG_CTX *ctx = vctx;
    const OSSL_PARAM *p;

    if (params == NULL || params[0].key == NULL)
        return 1;
    p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_SIGNATURE);
    if (p == NULL || !ctx->message || ctx->operation != EVP_PKEY_OP_VERIFY) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER,
                         "%s takes no parameters but the signature to verify",
                         ctx->md.name);
        return 0;
    }
    OPENSSL_free(ctx->vsig);
    ctx->vsig = NULL;
    ctx->vsiglen = 0;
    if (!OSSL_PARAM_get_octet_string(p, (void **)&ctx->vsig, 0, &ctx->vsiglen)) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER, "cannot read the signature");
        return 0;
    }
    return 1;
}

static const OSSL_PARAM sig_alg_settable[] = {
    OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_SIGNATURE, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *sig_alg_settable_ctx_params(void *vctx, void *provctx)
{
    GPURSA_SIG_CTX *ctx = vctx;

    return ctx != NULL && ctx->message && ctx->operation == EVP_PKEY_OP_VERIFY
           ? sig_alg_settable : NULL;
}

static const char **sig_alg_key_types(void)
{
    static const char *types[] = { "RSA", NULL };

    return types;
}

/* Init for the composite algorithm of digest |mdname|; |message|: the input
 * is the message (sign/verify_message_init), else its digest. */
static int sig_alg_init(void *vctx, void *vkey, const OSSL_PARAM params[],
                        int operation, int message, const char *mdname)
{
    GPURSA_SIG_CTX *ctx = vctx;
    OSSL_PARAM md[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, (char *)mdname, 0),
        OSSL_PARAM_END
    };

    if (!sig_init(ctx, vkey, md, operation) || (message && !sig_start_hash(ctx, NULL)))
        return 0;
    ctx->allow_md = 0;
    ctx->composite = 1;
    ctx->message = message;
    return sig_alg_set_ctx_params(ctx, params);
}

/* One-shot: a digest, or with sign_message_init the whole message. */
static int sig_alg_sign(void *vctx, unsigned char *sig, size_t *siglen, size_t sigsize,
                        const unsigned char *tbs, size_t tbslen)
{
    GPURSA_SIG_CTX *ctx = vctx;

    if (!ctx->message || sig == NULL)
        return sig_sign(ctx, sig, siglen, sigsize, tbs, tbslen);
    return sig_digest_update(ctx, tbs, tbslen)
           && sig_digest_sign_final(ctx, sig, siglen, sigsize);
}

static int sig_alg_verify(void *vctx, const unsigned char *sig, size_t siglen,
                          const unsigned char *tbs, size_t tbslen)
{
    GPURSA_SIG_CTX *ctx = vctx;

    if (!ctx->message)
        return sig_verify(ctx, sig, siglen, tbs, tbslen);
    return sig_digest_update(ctx, tbs, tbslen)
           && sig_digest_verify_final(ctx, sig, siglen);
}

static int sig_alg_verify_message_final(void *vctx)
{
    GPURSA_SIG_CTX *ctx = vctx;

    if (ctx->vsig == NULL) {
        GPURSA_RAISE_MSG(ctx->provctx, GPURSA_R_BAD_PARAMETER, "no signature to verify");
        return 0;
    }
    return sig_digest_verify_final(ctx, ctx->vsig, ctx->vsiglen);
}

#define SIG_ALG(id, MD)                                                                    \
    static int sig_##id##_sign_init(void *c, void *k, const OSSL_PARAM p[])               \
    { return sig_alg_init(c, k, p, EVP_PKEY_OP_SIGN, 0, MD); }                             \
    static int sig_##id##_sign_message_init(void *c, void *k, const OSSL_PARAM p[])       \
    { return sig_alg_init(c, k, p, EVP_PKEY_OP_SIGN, 1, MD); }                             \
    static int sig_##id##_verify_init(void *c, void *k, const OSSL_PARAM p[])             \
    { return sig_alg_init(c, k, p, EVP_PKEY_OP_VERIFY, 0, MD); }                           \
    static int sig_##id##_verify_message_init(void *c, void *k, const OSSL_PARAM p[])     \
    { return sig_alg_init(c, k, p, EVP_PKEY_OP_VERIFY, 1, MD); }                           \
    static const OSSL_DISPATCH sig_##id##_functions[] = {                                  \
        { OSSL_FUNC_SIGNATURE_NEWCTX, (void (*)(void))sig_newctx },                        \
        { OSSL_FUNC_SIGNATURE_FREECTX, (void (*)(void))sig_freectx },                      \
        { OSSL_FUNC_SIGNATURE_DUPCTX, (void (*)(void))sig_dupctx },                        \
        { OSSL_FUNC_SIGNATURE_QUERY_KEY_TYPES, (void (*)(void))sig_alg_key_types },        \
        { OSSL_FUNC_SIGNATURE_SIGN_INIT, (void (*)(void))sig_##id##_sign_init },           \
        { OSSL_FUNC_SIGNATURE_SIGN, (void (*)(void))sig_alg_sign },                        \
        { OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT,                                           \
          (void (*)(void))sig_##id##_sign_message_init },                                  \
        { OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_UPDATE, (void (*)(void))sig_digest_update },    \
        { OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_FINAL, (void (*)(void))sig_digest_sign_final }, \
        { OSSL_FUNC_SIGNATURE_VERIFY_INIT, (void (*)(void))sig_##id##_verify_init },       \
        { OSSL_FUNC_SIGNATURE_VERIFY, (void (*)(void))sig_alg_verify },                    \
        { OSSL_FUNC_SIGNATURE_VERIFY_MESSAGE_INIT,                                         \
          (void (*)(void))sig_##id##_verify_message_init },                                \
        { OSSL_FUNC_SIGNATURE_VERIFY_MESSAGE_UPDATE, (void (*)(void))sig_digest_update },  \
        { OSSL_FUNC_SIGNATURE_VERIFY_MESSAGE_FINAL,                                        \
          (void (*)(void))sig_alg_verify_message_final },                                  \
        { OSSL_FUNC_SIGNATURE_GET_CTX_PARAMS, (void (*)(void))sig_get_ctx_params },        \
        { OSSL_FUNC_SIGNATURE_GETTABLE_CTX_PARAMS, (void (*)(void))sig_gettable_ctx_params }, \
        { OSSL_FUNC_SIGNATURE_SET_CTX_PARAMS, (void (*)(void))sig_alg_set_ctx_params },    \
        { OSSL_FUNC_SIGNATURE_SETTABLE_CTX_PARAMS,                                         \
          (void (*)(void))sig_alg_settable_ctx_params },                                   \
        { 0, NULL }                                                                        \
    };

SIG_ALG(sha1, "SHA1")
SIG_ALG(sha224, "SHA2-224")
SIG_ALG(sha256, "SHA2-256")
SIG_ALG(sha384, "SHA2-384")
SIG_ALG(sha512, "SHA2-512")
SIG_ALG(sha512_224, "SHA2-512/224")
SIG_ALG(sha512_256, "SHA2-512/256")
SIG_ALG(sha3_224, "SHA3-224")
SIG_ALG(sha3_256, "SHA3-256")
SIG_ALG(sha3_384, "SHA3-384")
SIG_ALG(sha3_512, "SHA3-512")
SIG_ALG(ripemd160, "RIPEMD160")
#endif /* OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT */

/* The names are the default provider's (OpenSSL 3.5), alias for alias: a
 * provider naming an algorithm differently from another breaks both. */
const OSSL_ALGORITHM gpursa_rsa_signature_algorithms[] = {
    { GPURSA_RSA_NAMES, GPURSA_PROPS, gpursa_rsa_signature_functions, "gpursa RSA signatures" },
#ifdef OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT
    { "RSA-SHA1:RSA-SHA-1:sha1WithRSAEncryption:1.2.840.113549.1.1.5", GPURSA_PROPS,
      sig_sha1_functions, "gpursa RSA-SHA1" },
    { "RSA-SHA2-224:RSA-SHA224:sha224WithRSAEncryption:1.2.840.113549.1.1.14", GPURSA_PROPS,
      sig_sha224_functions, "gpursa RSA-SHA2-224" },
    { "RSA-SHA2-256:RSA-SHA256:sha256WithRSAEncryption:1.2.840.113549.1.1.11", GPURSA_PROPS,
      sig_sha256_functions, "gpursa RSA-SHA2-256" },
    { "RSA-SHA2-384:RSA-SHA384:sha384WithRSAEncryption:1.2.840.113549.1.1.12", GPURSA_PROPS,
      sig_sha384_functions, "gpursa RSA-SHA2-384" },
    { "RSA-SHA2-512:RSA-SHA512:sha512WithRSAEncryption:1.2.840.113549.1.1.13", GPURSA_PROPS,
      sig_sha512_functions, "gpursa RSA-SHA2-512" },
    { "RSA-SHA2-512/224:RSA-SHA512-224:sha512-224WithRSAEncryption:1.2.840.113549.1.1.15",
      GPURSA_PROPS, sig_sha512_224_functions, "gpursa RSA-SHA2-512/224" },
    { "RSA-SHA2-512/256:RSA-SHA512-256:sha512-256WithRSAEncryption:1.2.840.113549.1.1.16",
      GPURSA_PROPS, sig_sha512_256_functions, "gpursa RSA-SHA2-512/256" },
    { "RSA-SHA3-224:id-rsassa-pkcs1-v1_5-with-sha3-224:2.16.840.1.101.3.4.3.13", GPURSA_PROPS,
      sig_sha3_224_functions, "gpursa RSA-SHA3-224" },
    { "RSA-SHA3-256:id-rsassa-pkcs1-v1_5-with-sha3-256:2.16.840.1.101.3.4.3.14", GPURSA_PROPS,
      sig_sha3_256_functions, "gpursa RSA-SHA3-256" },
    { "RSA-SHA3-384:id-rsassa-pkcs1-v1_5-with-sha3-384:2.16.840.1.101.3.4.3.15", GPURSA_PROPS,
      sig_sha3_384_functions, "gpursa RSA-SHA3-384" },
    { "RSA-SHA3-512:id-rsassa-pkcs1-v1_5-with-sha3-512:2.16.840.1.101.3.4.3.16", GPURSA_PROPS,
      sig_sha3_512_functions, "gpursa RSA-SHA3-512" },
    { "RSA-RIPEMD160:ripemd160WithRSA:1.3.36.3.3.1.2", GPURSA_PROPS,
      sig_ripemd160_functions, "gpursa RSA-RIPEMD160" },
#endif
    { NULL, NULL, NULL, NULL }
};
