/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include "testutil.h"

static void tu_die(const char *what)
{
    fprintf(stderr, "testutil: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    abort();
}

/* The providers each tu_libctx loaded: OSSL_LIB_CTX_free alone does not tear
 * down a provider whose OSSL_PROVIDER_load reference is still held. */
static struct { OSSL_LIB_CTX *libctx; OSSL_PROVIDER *def, *gpursa; } tu_loaded[16];
/* tu_default_rsa's keys, per libctx and size */
static struct { OSSL_LIB_CTX *libctx; int bits; EVP_PKEY *pkey; } cache[8];

OSSL_LIB_CTX *tu_libctx(void)
{
    OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *def, *gpursa;
    size_t i;

    if (libctx == NULL
        || (def = OSSL_PROVIDER_load(libctx, "default")) == NULL
        || (gpursa = OSSL_PROVIDER_load(libctx, "gpursa")) == NULL)
        tu_die("loading default and gpursa");
    for (i = 0; i < sizeof(tu_loaded) / sizeof(tu_loaded[0]); i++)
        if (tu_loaded[i].libctx == NULL) {
            tu_loaded[i].libctx = libctx;
            tu_loaded[i].def = def;
            tu_loaded[i].gpursa = gpursa;
            break;
        }
    return libctx;
}

void tu_libctx_free(OSSL_LIB_CTX *libctx)
{
    size_t i;

    for (i = 0; libctx != NULL && i < sizeof(tu_loaded) / sizeof(tu_loaded[0]); i++)
        if (tu_loaded[i].libctx == libctx) {
            OSSL_PROVIDER_unload(tu_loaded[i].gpursa);
            OSSL_PROVIDER_unload(tu_loaded[i].def);
            tu_loaded[i].libctx = NULL;
        }
    for (i = 0; libctx != NULL && i < sizeof(cache) / sizeof(cache[0]); i++)
        if (cache[i].libctx == libctx) {
            EVP_PKEY_free(cache[i].pkey);
            cache[i].pkey = NULL;
            cache[i].libctx = NULL;
        }
    OSSL_LIB_CTX_free(libctx);
}

/*
 * A two-prime key whose n has exactly |bits| bits, from primes of
 * bits - bits / 2 and bits / 2 bits, imported into the default provider.
 * OpenSSL's key generation makes primes of half the size each (FIPS 186-4),
 * so for an odd size it gives n one bit short.
 */
static EVP_PKEY *tu_rsa_from_primes(OSSL_LIB_CTX *libctx, int bits)
{
    BIGNUM *p = BN_new(), *q = BN_new(), *n = BN_new(), *e = BN_new(), *d = BN_new();
    BIGNUM *p1 = BN_new(), *q1 = BN_new(), *phi = BN_new(), *dp = BN_new();
    BIGNUM *dq = BN_new(), *qinv = BN_new();
    BN_CTX *bnctx = BN_CTX_new_ex(libctx);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *pkey = NULL;

    if (qinv == NULL || bnctx == NULL || bld == NULL || !BN_set_word(e, 65537))
        tu_die("allocating the key parts");
    do {
        if (!BN_generate_prime_ex2(p, bits - bits / 2, 0, NULL, NULL, NULL, bnctx)
            || !BN_generate_prime_ex2(q, bits / 2, 0, NULL, NULL, NULL, bnctx)
            || !BN_mul(n, p, q, bnctx) || !BN_sub(p1, p, BN_value_one())
            || !BN_sub(q1, q, BN_value_one()) || !BN_mul(phi, p1, q1, bnctx))
            tu_die("generating primes");
    } while (BN_num_bits(n) != bits || BN_cmp(p, q) == 0
             || BN_mod_inverse(d, e, phi, bnctx) == NULL);
    if (!BN_mod(dp, d, p1, bnctx) || !BN_mod(dq, d, q1, bnctx)
        || BN_mod_inverse(qinv, q, p, bnctx) == NULL
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, d)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR1, p)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR2, q)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT1, dp)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT2, dq)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, qinv)
        || (params = OSSL_PARAM_BLD_to_param(bld)) == NULL
        || (ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=default")) == NULL
        || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_KEYPAIR, params) <= 0
        || EVP_PKEY_get_bits(pkey) != bits)
        tu_die("an RSA key from primes");
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_CTX_free(bnctx);
    BN_free(n);
    BN_free(e);
    BN_clear_free(p);
    BN_clear_free(q);
    BN_clear_free(d);
    BN_clear_free(p1);
    BN_clear_free(q1);
    BN_clear_free(phi);
    BN_clear_free(dp);
    BN_clear_free(dq);
    BN_clear_free(qinv);
    return pkey;
}

EVP_PKEY *tu_default_rsa(OSSL_LIB_CTX *libctx, int bits)
{
    EVP_PKEY_CTX *gctx;
    EVP_PKEY *pkey = NULL;
    size_t i;

    for (i = 0; i < sizeof(cache) / sizeof(cache[0]); i++)
        if (cache[i].pkey != NULL && cache[i].libctx == libctx && cache[i].bits == bits) {
            EVP_PKEY_up_ref(cache[i].pkey);
            return cache[i].pkey;
        }
    gctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=default");
    if (gctx == NULL || EVP_PKEY_keygen_init(gctx) <= 0
        || EVP_PKEY_CTX_set_rsa_keygen_bits(gctx, bits) <= 0
        || EVP_PKEY_generate(gctx, &pkey) <= 0)
        tu_die("default RSA keygen");
    EVP_PKEY_CTX_free(gctx);
    if (EVP_PKEY_get_bits(pkey) != bits) {
        EVP_PKEY_free(pkey);
        pkey = tu_rsa_from_primes(libctx, bits);
    }
    for (i = 0; i < sizeof(cache) / sizeof(cache[0]); i++)
        if (cache[i].pkey == NULL) {
            cache[i].libctx = libctx;
            cache[i].bits = bits;
            cache[i].pkey = pkey;
            EVP_PKEY_up_ref(pkey);
            break;
        }
    return pkey;
}

EVP_PKEY *tu_import(OSSL_LIB_CTX *libctx, const EVP_PKEY *pkey, const char *propq)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *out = NULL;

    if (EVP_PKEY_todata(pkey, EVP_PKEY_KEYPAIR, &params) <= 0)
        tu_die("EVP_PKEY_todata");
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", propq);
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &out, EVP_PKEY_KEYPAIR, params) <= 0)
        tu_die(propq);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return out;
}

EVP_PKEY *tu_to_gpursa(OSSL_LIB_CTX *libctx, const EVP_PKEY *pkey)
{
    return tu_import(libctx, pkey, "provider=gpursa");
}

const char *tu_provider_of(const EVP_PKEY *pkey)
{
    const OSSL_PROVIDER *prov = EVP_PKEY_get0_provider(pkey);

    return prov == NULL ? "legacy" : OSSL_PROVIDER_get0_name(prov);
}

int tu_gpursa_error(int reason)
{
    unsigned long e;
    int found = 0;

    /* Walk the whole queue: the gpursa error may sit under OpenSSL's own. */
    while ((e = ERR_get_error()) != 0) {
        const char *s = ERR_reason_error_string(e);

        if (ERR_GET_REASON(e) == reason && s != NULL && strncmp(s, "gpursa:", 7) == 0)
            found = 1;
    }
    return found;
}

void tu_raw_private_op(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey, const char *propq,
                       const unsigned char *in, size_t inlen, unsigned char *out, size_t k)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, propq);
    size_t outlen = k;

    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(EVP_PKEY_decrypt_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING), 1);
    ck_assert_int_eq(EVP_PKEY_decrypt(ctx, out, &outlen, in, inlen), 1);
    ck_assert_uint_eq(outlen, k);
    EVP_PKEY_CTX_free(ctx);
}

int tu_bn_param_eq(const OSSL_PARAM *a, const OSSL_PARAM *b, const char *name)
{
    const OSSL_PARAM *pa = OSSL_PARAM_locate_const(a, name);
    const OSSL_PARAM *pb = OSSL_PARAM_locate_const(b, name);
    BIGNUM *x = NULL, *y = NULL;
    int eq;

    if (pa == NULL || pb == NULL)
        return pa == pb;
    eq = OSSL_PARAM_get_BN(pa, &x) && OSSL_PARAM_get_BN(pb, &y) && BN_cmp(x, y) == 0;
    BN_clear_free(x);
    BN_clear_free(y);
    return eq;
}

int tu_run_with_keys(Suite *(*make_suite)(void), enum print_output mode,
                     OSSL_LIB_CTX **libctx, TU_KEY *keys, size_t nkeys,
                     int (*want)(size_t i))
{
    SRunner *sr;
    size_t i;
    int failed;

    *libctx = tu_libctx();
    for (i = 0; i < nkeys; i++) {
        if (want != NULL && !want(i))
            continue;
        keys[i].d = tu_default_rsa(*libctx, keys[i].bits);
        keys[i].g = tu_to_gpursa(*libctx, keys[i].d);
    }
    sr = srunner_create(make_suite());
    srunner_run_all(sr, mode);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    for (i = 0; i < nkeys; i++) {
        EVP_PKEY_free(keys[i].d);
        EVP_PKEY_free(keys[i].g);
        keys[i].d = keys[i].g = NULL;
    }
    tu_libctx_free(*libctx);
    *libctx = NULL;
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
