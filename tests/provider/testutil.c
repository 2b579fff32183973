#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "testutil.h"

static void tu_die(const char *what)
{
    fprintf(stderr, "testutil: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    abort();
}

OSSL_LIB_CTX *tu_libctx(void)
{
    OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();

    if (libctx == NULL
        || OSSL_PROVIDER_load(libctx, "default") == NULL
        || OSSL_PROVIDER_load(libctx, "gpursa") == NULL)
        tu_die("loading default and gpursa");
    return libctx;
}

void tu_libctx_free(OSSL_LIB_CTX *libctx)
{
    OSSL_LIB_CTX_free(libctx);
}

EVP_PKEY *tu_default_rsa(OSSL_LIB_CTX *libctx, int bits)
{
    static struct { OSSL_LIB_CTX *libctx; int bits; EVP_PKEY *pkey; } cache[8];
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

EVP_PKEY *tu_to_gpursa(OSSL_LIB_CTX *libctx, const EVP_PKEY *pkey)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *out = NULL;

    if (EVP_PKEY_todata(pkey, EVP_PKEY_KEYPAIR, &params) <= 0)
        tu_die("EVP_PKEY_todata");
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &out, EVP_PKEY_KEYPAIR, params) <= 0)
        tu_die("EVP_PKEY_fromdata into gpursa");
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return out;
}

const char *tu_provider_of(const EVP_PKEY *pkey)
{
    const OSSL_PROVIDER *prov = EVP_PKEY_get0_provider(pkey);

    return prov == NULL ? "legacy" : OSSL_PROVIDER_get0_name(prov);
}
