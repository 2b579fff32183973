/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Key management for "RSA": gpursa's own key struct behind OpenSSL's keymgmt
 * dispatch. Generation and validation are delegated to the default provider
 * in the child library context; everything else works on our numbers.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "provider/gpursa_prov.h"

static OSSL_FUNC_keymgmt_new_fn gpursa_rsa_newdata;
static OSSL_FUNC_keymgmt_free_fn gpursa_rsa_freedata;
static OSSL_FUNC_keymgmt_gen_init_fn gpursa_rsa_gen_init;
static OSSL_FUNC_keymgmt_gen_set_params_fn gpursa_rsa_gen_set_params;
static OSSL_FUNC_keymgmt_gen_settable_params_fn gpursa_rsa_gen_settable_params;
static OSSL_FUNC_keymgmt_gen_fn gpursa_rsa_gen;
static OSSL_FUNC_keymgmt_gen_cleanup_fn gpursa_rsa_gen_cleanup;
static OSSL_FUNC_keymgmt_get_params_fn gpursa_rsa_get_params;
static OSSL_FUNC_keymgmt_gettable_params_fn gpursa_rsa_gettable_params;
static OSSL_FUNC_keymgmt_has_fn gpursa_rsa_has;
static OSSL_FUNC_keymgmt_match_fn gpursa_rsa_match;
static OSSL_FUNC_keymgmt_validate_fn gpursa_rsa_validate;
static OSSL_FUNC_keymgmt_import_fn gpursa_rsa_import;
static OSSL_FUNC_keymgmt_import_types_fn gpursa_rsa_import_types;
static OSSL_FUNC_keymgmt_export_fn gpursa_rsa_export;
static OSSL_FUNC_keymgmt_export_types_fn gpursa_rsa_export_types;
static OSSL_FUNC_keymgmt_dup_fn gpursa_rsa_dup;
static OSSL_FUNC_keymgmt_query_operation_name_fn gpursa_rsa_query_operation_name;

#define GPURSA_RSA_KEY_PARAM_TYPES                                              \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_N, NULL, 0),                              \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_E, NULL, 0),                              \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_D, NULL, 0),                              \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR1, NULL, 0),                        \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR2, NULL, 0),                        \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR3, NULL, 0),                        \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR4, NULL, 0),                        \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR5, NULL, 0),                        \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT1, NULL, 0),                      \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT2, NULL, 0),                      \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT3, NULL, 0),                      \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT4, NULL, 0),                      \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT5, NULL, 0),                      \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_COEFFICIENT1, NULL, 0),                   \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_COEFFICIENT2, NULL, 0),                   \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_COEFFICIENT3, NULL, 0),                   \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_COEFFICIENT4, NULL, 0)

static const OSSL_PARAM gpursa_rsa_key_types[] = {
    GPURSA_RSA_KEY_PARAM_TYPES,
    OSSL_PARAM_END
};

static void *gpursa_rsa_newdata(void *provctx)
{
    return gpursa_key_new(provctx);
}

static void gpursa_rsa_freedata(void *keydata)
{
    gpursa_key_free(keydata);
}

static int gpursa_rsa_has(const void *keydata, int selection)
{
    const GPURSA_KEY *key = keydata;
    int ok = key != NULL;

    if (ok && (selection & OSSL_KEYMGMT_SELECT_KEYPAIR) != 0)
        ok = key->n != NULL && key->e != NULL;
    if (ok && (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) != 0)
        ok = key->d != NULL;
    return ok;
}

/* d1 == d2 without a data-dependent early exit. */
static int gpursa_rsa_secret_eq(const BIGNUM *a, const BIGNUM *b, int len)
{
    unsigned char *x = OPENSSL_secure_malloc(2 * (size_t)len);
    int eq = 0;

    if (x == NULL)
        return 0;
    if (BN_bn2binpad(a, x, len) == len && BN_bn2binpad(b, x + len, len) == len)
        eq = CRYPTO_memcmp(x, x + len, len) == 0;
    OPENSSL_secure_clear_free(x, 2 * (size_t)len);
    return eq;
}

static int gpursa_rsa_match(const void *keydata1, const void *keydata2, int selection)
{
    const GPURSA_KEY *k1 = keydata1, *k2 = keydata2;
    int checked = 0, ok = 1;

    if ((selection & OSSL_KEYMGMT_SELECT_KEYPAIR) == 0)
        return 1;
    if (k1->n == NULL || k2->n == NULL)
        return 0;
    ok = BN_cmp(k1->e, k2->e) == 0;
    if ((selection & OSSL_KEYMGMT_SELECT_PUBLIC_KEY) != 0) {
        ok = ok && BN_cmp(k1->n, k2->n) == 0;
        checked = 1;
    }
    if (!checked && (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) != 0) {
        ok = ok && k1->d != NULL && k2->d != NULL && BN_cmp(k1->n, k2->n) == 0
            && gpursa_rsa_secret_eq(k1->d, k2->d, gpursa_key_size(k1));
        checked = 1;
    }
    return ok && checked;
}

static int gpursa_rsa_import(void *keydata, int selection, const OSSL_PARAM params[])
{
    if (keydata == NULL)
        return 0;
    return gpursa_key_fromdata(keydata, selection, params);
}

static int gpursa_rsa_export(void *keydata, int selection, OSSL_CALLBACK *param_cb,
                             void *cbarg)
{
    GPURSA_KEY *key = keydata;
    OSSL_PARAM_BLD *bld;
    OSSL_PARAM *params = NULL;
    int ok = 0;

    /* A public key exports what it has even when the private part is asked
     * for too (exports to other providers ask for everything). */
    if (key == NULL || !gpursa_rsa_has(key, OSSL_KEYMGMT_SELECT_PUBLIC_KEY))
        return 0;
    if ((bld = OSSL_PARAM_BLD_new()) == NULL
        || !gpursa_key_todata(key, selection, bld)
        || (params = OSSL_PARAM_BLD_to_param(bld)) == NULL) {
        GPURSA_RAISE(key->provctx, GPURSA_R_MALLOC);
        goto end;
    }
    ok = param_cb(params, cbarg);
end:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return ok;
}

static const OSSL_PARAM *gpursa_rsa_import_types(int selection)
{
    return (selection & OSSL_KEYMGMT_SELECT_KEYPAIR) != 0 ? gpursa_rsa_key_types : NULL;
}

static const OSSL_PARAM *gpursa_rsa_export_types(int selection)
{
    return gpursa_rsa_import_types(selection);
}

static void *gpursa_rsa_dup(const void *keydata, int selection)
{
    return keydata == NULL ? NULL : gpursa_key_dup(keydata, selection);
}

static const OSSL_PARAM *gpursa_rsa_gettable_params(void *provctx)
{
    static const OSSL_PARAM types[] = {
        OSSL_PARAM_int(OSSL_PKEY_PARAM_BITS, NULL),
        OSSL_PARAM_int(OSSL_PKEY_PARAM_SECURITY_BITS, NULL),
        OSSL_PARAM_int(OSSL_PKEY_PARAM_MAX_SIZE, NULL),
        OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_DEFAULT_DIGEST, NULL, 0),
        GPURSA_RSA_KEY_PARAM_TYPES,
        OSSL_PARAM_END
    };

    return types;
}

/* Copy the RSA numbers that params asks for (encoders read them this way). */
static int gpursa_rsa_get_numbers(const GPURSA_KEY *key, OSSL_PARAM params[])
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *all = NULL, *p;
    const OSSL_PARAM *q;
    int ok = 0;

    if (bld == NULL || !gpursa_key_todata(key, OSSL_KEYMGMT_SELECT_KEYPAIR, bld)
        || (all = OSSL_PARAM_BLD_to_param(bld)) == NULL) {
        GPURSA_RAISE(key->provctx, GPURSA_R_MALLOC);
        goto end;
    }
    for (q = all; q->key != NULL; q++) {
        BIGNUM *bn = NULL;

        if ((p = OSSL_PARAM_locate(params, q->key)) == NULL)
            continue;
        if (!OSSL_PARAM_get_BN(q, &bn) || !OSSL_PARAM_set_BN(p, bn)) {
            BN_clear_free(bn);
            goto end;
        }
        BN_clear_free(bn);
    }
    ok = 1;
end:
    OSSL_PARAM_free(all);
    OSSL_PARAM_BLD_free(bld);
    return ok;
}

static int gpursa_rsa_get_params(void *keydata, OSSL_PARAM params[])
{
    GPURSA_KEY *key = keydata;
    int bits = gpursa_key_bits(key);
    OSSL_PARAM *p;

    if (key == NULL)
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_BITS)) != NULL
        && !OSSL_PARAM_set_int(p, bits))
        return 0;
    /* The default provider's figure (SP 800-56B formula), from the same key there. */
    if ((p = OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_SECURITY_BITS)) != NULL) {
        EVP_PKEY *fb = gpursa_key_fallback(key);

        if (fb == NULL || !OSSL_PARAM_set_int(p, EVP_PKEY_get_security_bits(fb)))
            return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_MAX_SIZE)) != NULL
        && !OSSL_PARAM_set_int(p, gpursa_key_size(key)))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_DEFAULT_DIGEST)) != NULL
        && !OSSL_PARAM_set_utf8_string(p, "SHA256"))
        return 0;
    /* Copy numbers out only when asked: libcrypto asks for the sizes alone
     * every time a key is created. */
    for (p = params; p->key != NULL; p++)
        if (OSSL_PARAM_locate_const(gpursa_rsa_key_types, p->key) != NULL)
            return gpursa_rsa_get_numbers(key, params);
    return 1;
}

static int gpursa_rsa_validate(const void *keydata, int selection, int checktype)
{
    GPURSA_KEY *key = (GPURSA_KEY *)keydata;
    EVP_PKEY_CTX *pctx;
    int ok;

    if ((selection & OSSL_KEYMGMT_SELECT_KEYPAIR) == 0)
        return 1;
    if (!gpursa_rsa_has(key, selection))
        return 0;
    if ((pctx = gpursa_fallback_pkey_ctx(key)) == NULL)
        return 0;
    if ((selection & OSSL_KEYMGMT_SELECT_KEYPAIR) == OSSL_KEYMGMT_SELECT_KEYPAIR)
        ok = checktype == OSSL_KEYMGMT_VALIDATE_QUICK_CHECK ? EVP_PKEY_pairwise_check(pctx)
                                                            : EVP_PKEY_check(pctx);
    else if ((selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) != 0)
        ok = EVP_PKEY_private_check(pctx);
    else
        ok = checktype == OSSL_KEYMGMT_VALIDATE_QUICK_CHECK ? EVP_PKEY_public_check_quick(pctx)
                                                            : EVP_PKEY_public_check(pctx);
    EVP_PKEY_CTX_free(pctx);
    return ok > 0;
}

/* Key generation: the default provider generates, we import the result. */
typedef struct {
    GPURSA_PROV_CTX *provctx;
    int selection;
    EVP_PKEY_CTX *pctx;            /* keygen context in the fallback libctx */
    OSSL_CALLBACK *cb;
    void *cbarg;
} gpursa_rsa_gen_ctx;

static void *gpursa_rsa_gen_init(void *provctx, int selection, const OSSL_PARAM params[])
{
    GPURSA_PROV_CTX *ctx = provctx;
    gpursa_rsa_gen_ctx *gctx;

    if (!gpursa_prov_fallback_ready(ctx))
        return NULL;
    if ((gctx = OPENSSL_zalloc(sizeof(*gctx))) == NULL) {
        GPURSA_RAISE(ctx, GPURSA_R_MALLOC);
        return NULL;
    }
    gctx->provctx = ctx;
    gctx->selection = selection;
    gctx->pctx = EVP_PKEY_CTX_new_from_name(ctx->libctx, "RSA", ctx->fallback_propq);
    if (gctx->pctx == NULL || EVP_PKEY_keygen_init(gctx->pctx) <= 0) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_FALLBACK_FAILED, "cannot start RSA key generation");
        gpursa_rsa_gen_cleanup(gctx);
        return NULL;
    }
    if (!gpursa_rsa_gen_set_params(gctx, params)) {
        gpursa_rsa_gen_cleanup(gctx);
        return NULL;
    }
    return gctx;
}

static int gpursa_rsa_gen_set_params(void *genctx, const OSSL_PARAM params[])
{
    gpursa_rsa_gen_ctx *gctx = genctx;
    const OSSL_PARAM *p;
    size_t v;

    if (params == NULL)
        return 1;
    /* Refuse absurd sizes here: the default provider would try for hours. */
    if ((p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_RSA_BITS)) != NULL
        && (!OSSL_PARAM_get_size_t(p, &v) || v < 512 || v > 16384)) {
        GPURSA_RAISE_MSG(gctx->provctx, GPURSA_R_BAD_PARAMETER, "bits must be 512..16384");
        return 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_RSA_PRIMES)) != NULL
        && (!OSSL_PARAM_get_size_t(p, &v) || v < 2 || v > GPURSA_MAX_PRIMES)) {
        GPURSA_RAISE_MSG(gctx->provctx, GPURSA_R_BAD_PARAMETER, "primes must be 2..%d",
                         GPURSA_MAX_PRIMES);
        return 0;
    }
    if (EVP_PKEY_CTX_set_params(gctx->pctx, params) <= 0) {
        GPURSA_RAISE_MSG(gctx->provctx, GPURSA_R_BAD_PARAMETER, "RSA key generation parameter");
        return 0;
    }
    return 1;
}

static const OSSL_PARAM *gpursa_rsa_gen_settable_params(void *genctx, void *provctx)
{
    static const OSSL_PARAM types[] = {
        OSSL_PARAM_size_t(OSSL_PKEY_PARAM_RSA_BITS, NULL),
        OSSL_PARAM_size_t(OSSL_PKEY_PARAM_RSA_PRIMES, NULL),
        OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_E, NULL, 0),
        OSSL_PARAM_END
    };

    return types;
}

/* Progress from the default provider's generator to the application's callback. */
static int gpursa_rsa_gen_progress(EVP_PKEY_CTX *pctx)
{
    gpursa_rsa_gen_ctx *gctx = EVP_PKEY_CTX_get_app_data(pctx);
    int potential = EVP_PKEY_CTX_get_keygen_info(pctx, 0);
    int iteration = EVP_PKEY_CTX_get_keygen_info(pctx, 1);
    OSSL_PARAM params[3];

    params[0] = OSSL_PARAM_construct_int(OSSL_GEN_PARAM_POTENTIAL, &potential);
    params[1] = OSSL_PARAM_construct_int(OSSL_GEN_PARAM_ITERATION, &iteration);
    params[2] = OSSL_PARAM_construct_end();
    return gctx->cb(params, gctx->cbarg);
}

static void *gpursa_rsa_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg)
{
    gpursa_rsa_gen_ctx *gctx = genctx;
    OSSL_PARAM *params = NULL;
    EVP_PKEY *pkey = NULL;
    GPURSA_KEY *key;

    if ((key = gpursa_key_new(gctx->provctx)) == NULL)
        return NULL;
    if ((gctx->selection & OSSL_KEYMGMT_SELECT_KEYPAIR) == 0)
        return key;
    if (cb != NULL) {
        gctx->cb = cb;
        gctx->cbarg = cbarg;
        EVP_PKEY_CTX_set_app_data(gctx->pctx, gctx);
        EVP_PKEY_CTX_set_cb(gctx->pctx, gpursa_rsa_gen_progress);
    }
    if (EVP_PKEY_generate(gctx->pctx, &pkey) <= 0
        || EVP_PKEY_todata(pkey, EVP_PKEY_KEYPAIR, &params) <= 0) {
        GPURSA_RAISE_MSG(gctx->provctx, GPURSA_R_FALLBACK_FAILED, "RSA key generation failed");
        goto err;
    }
    if (!gpursa_key_fromdata(key, OSSL_KEYMGMT_SELECT_KEYPAIR, params))
        goto err;
    key->fallback = pkey;          /* already the same key in the fallback libctx */
    OSSL_PARAM_free(params);
    return key;
err:
    OSSL_PARAM_free(params);
    EVP_PKEY_free(pkey);
    gpursa_key_free(key);
    return NULL;
}

static void gpursa_rsa_gen_cleanup(void *genctx)
{
    gpursa_rsa_gen_ctx *gctx = genctx;

    if (gctx == NULL)
        return;
    EVP_PKEY_CTX_free(gctx->pctx);
    OPENSSL_free(gctx);
}

static const char *gpursa_rsa_query_operation_name(int operation_id)
{
    return "RSA";
}

const OSSL_DISPATCH gpursa_rsa_keymgmt_functions[] = {
    { OSSL_FUNC_KEYMGMT_NEW, (void (*)(void))gpursa_rsa_newdata },
    { OSSL_FUNC_KEYMGMT_FREE, (void (*)(void))gpursa_rsa_freedata },
    { OSSL_FUNC_KEYMGMT_GEN_INIT, (void (*)(void))gpursa_rsa_gen_init },
    { OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS, (void (*)(void))gpursa_rsa_gen_set_params },
    { OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS, (void (*)(void))gpursa_rsa_gen_settable_params },
    { OSSL_FUNC_KEYMGMT_GEN, (void (*)(void))gpursa_rsa_gen },
    { OSSL_FUNC_KEYMGMT_GEN_CLEANUP, (void (*)(void))gpursa_rsa_gen_cleanup },
    { OSSL_FUNC_KEYMGMT_GET_PARAMS, (void (*)(void))gpursa_rsa_get_params },
    { OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS, (void (*)(void))gpursa_rsa_gettable_params },
    { OSSL_FUNC_KEYMGMT_HAS, (void (*)(void))gpursa_rsa_has },
    { OSSL_FUNC_KEYMGMT_MATCH, (void (*)(void))gpursa_rsa_match },
    { OSSL_FUNC_KEYMGMT_VALIDATE, (void (*)(void))gpursa_rsa_validate },
    { OSSL_FUNC_KEYMGMT_IMPORT, (void (*)(void))gpursa_rsa_import },
    { OSSL_FUNC_KEYMGMT_IMPORT_TYPES, (void (*)(void))gpursa_rsa_import_types },
    { OSSL_FUNC_KEYMGMT_EXPORT, (void (*)(void))gpursa_rsa_export },
    { OSSL_FUNC_KEYMGMT_EXPORT_TYPES, (void (*)(void))gpursa_rsa_export_types },
    { OSSL_FUNC_KEYMGMT_DUP, (void (*)(void))gpursa_rsa_dup },
    { OSSL_FUNC_KEYMGMT_QUERY_OPERATION_NAME,
      (void (*)(void))gpursa_rsa_query_operation_name },
    { 0, NULL }
};
