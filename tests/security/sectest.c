/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for the security suites (see sectest.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "config.h"
#include "sectest.h"

static const char *backends[3];
static int nbackends = -1;

int sec_nbackends(void)
{
    if (nbackends < 0) {
        nbackends = 0;
        backends[nbackends++] = "cpu";
        backends[nbackends++] = "host";
#ifdef GPURSA_HAVE_CUDA
        /* CUDA only where a GPU is; elsewhere its cases are not run. */
        if (access("/dev/nvidia0", F_OK) == 0)
            backends[nbackends++] = "cuda";
#endif
    }
    return nbackends;
}

const char *sec_backend(int i)
{
    return i < sec_nbackends() ? backends[i] : "cpu";
}

OSSL_LIB_CTX *sec_libctx(const char *backend, const char *const *extra_env)
{
    OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
    size_t i;

    /* gpursa reads GPURSA_* when it is loaded into a libctx */
    setenv("GPURSA_BACKEND", backend, 1);
    for (i = 0; extra_env != NULL && extra_env[i] != NULL; i += 2)
        setenv(extra_env[i], extra_env[i + 1], 1);
    ck_assert_ptr_nonnull(libctx);
    ck_assert_msg(OSSL_PROVIDER_load(libctx, "default") != NULL, "load default");
    if (OSSL_PROVIDER_load(libctx, "gpursa") == NULL) {
        ERR_print_errors_fp(stderr);
        ck_abort_msg("load gpursa with backend %s (OPENSSL_MODULES=%s)", backend,
                     getenv("OPENSSL_MODULES"));
    }
    unsetenv("GPURSA_BACKEND");
    for (i = 0; extra_env != NULL && extra_env[i] != NULL; i += 2)
        unsetenv(extra_env[i]);
    return libctx;
}

/*
 * The providers are unloaded explicitly (each OSSL_PROVIDER_load took a
 * reference): left to OSSL_LIB_CTX_free alone, once gpursa's fallback has
 * run, gpursa is never torn down and the libctx leaks (test_libctx_free
 * shows it; LeakSanitizer would fail every suite here on it).
 */
void sec_libctx_free(OSSL_LIB_CTX *libctx)
{
    OSSL_PROVIDER *prov;

    if (libctx == NULL)
        return;
    /* OSSL_PROVIDER_load of a loaded provider returns it with one more reference */
    if ((prov = OSSL_PROVIDER_load(libctx, "gpursa")) != NULL) {
        OSSL_PROVIDER_unload(prov);
        OSSL_PROVIDER_unload(prov);
    }
    if ((prov = OSSL_PROVIDER_load(libctx, "default")) != NULL) {
        OSSL_PROVIDER_unload(prov);
        OSSL_PROVIDER_unload(prov);
    }
    OSSL_LIB_CTX_free(libctx);
}

EVP_PKEY *sec_default_rsa(int bits)
{
    static struct { int bits; EVP_PKEY *pkey; } cache[4];
    EVP_PKEY_CTX *gctx;
    EVP_PKEY *pkey = NULL;
    size_t i;

    for (i = 0; i < sizeof(cache) / sizeof(cache[0]); i++)
        if (cache[i].pkey != NULL && cache[i].bits == bits)
            return cache[i].pkey;
    /* plain abort, not ck_assert: main() calls this before Check runs tests */
    gctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", "provider=default");
    if (gctx == NULL || EVP_PKEY_keygen_init(gctx) <= 0
        || EVP_PKEY_CTX_set_rsa_keygen_bits(gctx, bits) <= 0
        || EVP_PKEY_generate(gctx, &pkey) <= 0) {
        ERR_print_errors_fp(stderr);
        abort();
    }
    EVP_PKEY_CTX_free(gctx);
    for (i = 0; i < sizeof(cache) / sizeof(cache[0]); i++)
        if (cache[i].pkey == NULL) {
            cache[i].bits = bits;
            cache[i].pkey = pkey;
            break;
        }
    return pkey;                    /* owned by the cache for the process */
}

EVP_PKEY *sec_to_gpursa(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx;
    EVP_PKEY *out = NULL;

    ck_assert(EVP_PKEY_todata(pkey, EVP_PKEY_KEYPAIR, &params) > 0);
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    ck_assert_msg(ctx != NULL && EVP_PKEY_fromdata_init(ctx) > 0
                  && EVP_PKEY_fromdata(ctx, &out, EVP_PKEY_KEYPAIR, params) > 0,
                  "import a valid key into gpursa");
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return out;
}

uint64_t sec_stat(OSSL_LIB_CTX *libctx, const char *name)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(libctx, "gpursa");   /* a reference */
    uint64_t v = 0;
    OSSL_PARAM params[2];

    ck_assert_ptr_nonnull(prov);
    params[0] = OSSL_PARAM_construct_uint64(name, &v);
    params[1] = OSSL_PARAM_construct_end();
    ck_assert_msg(OSSL_PROVIDER_get_params(prov, params) == 1 && OSSL_PARAM_modified(params),
                  "provider parameter %s", name);
    OSSL_PROVIDER_unload(prov);
    return v;
}

void sec_assert_failed_loudly(int ret, const char *what)
{
    ck_assert_msg(ret <= 0, "%s: succeeded, must fail", what);
    ck_assert_msg(ERR_peek_error() != 0, "%s: failed without an OpenSSL error", what);
    ERR_clear_error();
}

unsigned char *sec_modulus(EVP_PKEY *pkey, size_t *k)
{
    BIGNUM *n = NULL;
    unsigned char *buf;

    *k = (size_t)EVP_PKEY_get_size(pkey);
    ck_assert(EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n) == 1);
    buf = OPENSSL_malloc(*k);
    ck_assert(buf != NULL && BN_bn2binpad(n, buf, (int)*k) == (int)*k);
    BN_free(n);
    return buf;
}

int sec_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
