/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unload_exit: sign through gpursa (so that the queue, its threads and its
 * exit handler start), unload the provider and its library context, then
 * return from main: the process must exit cleanly. The queue's exit handler
 * belongs to gpursa.so; registered without its module (TSan's atexit
 * interceptor did so) it ran at exit after the module was unmapped and
 * crashed. Run by test_unload_exit.sh; useful under the sanitizer trees.
 * `unload_exit MODULEDIR` loads gpursa from MODULEDIR: test_setgid_env.sh
 * runs a setgid copy, where libcrypto ignores OPENSSL_MODULES.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>

int main(int argc, char **argv)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    int dir_ok = ctx != NULL
                 && (argc < 2 || OSSL_PROVIDER_set_default_search_path(ctx, argv[1]));
    OSSL_PROVIDER *def = dir_ok ? OSSL_PROVIDER_load(ctx, "default") : NULL;
    OSSL_PROVIDER *g = dir_ok ? OSSL_PROVIDER_load(ctx, "gpursa") : NULL;
    EVP_PKEY *pk = NULL;
    EVP_PKEY_CTX *sc = NULL;
    unsigned char md[32], sig[512];
    size_t siglen = sizeof(sig);
    int ok;

    memset(md, 0x5a, sizeof(md));
    if (def == NULL || g == NULL) {
        ERR_print_errors_fp(stderr);
        return 2;
    }
    pk = EVP_PKEY_Q_keygen(ctx, "provider=default", "RSA", (size_t)2048);
    sc = pk != NULL ? EVP_PKEY_CTX_new_from_pkey(ctx, pk, "provider=gpursa") : NULL;
    ok = sc != NULL && EVP_PKEY_sign_init(sc) > 0
         && EVP_PKEY_CTX_set_rsa_padding(sc, RSA_PKCS1_PADDING) > 0
         && EVP_PKEY_CTX_set_signature_md(sc, EVP_sha256()) > 0
         && EVP_PKEY_sign(sc, sig, &siglen, md, sizeof(md)) > 0;
    if (ok)
        printf("signed %zu bytes\n", siglen);
    else
        ERR_print_errors_fp(stderr);
    EVP_PKEY_CTX_free(sc);
    EVP_PKEY_free(pk);
    OSSL_PROVIDER_unload(g);
    OSSL_PROVIDER_unload(def);
    OSSL_LIB_CTX_free(ctx);
    return ok ? 0 : 1;
}
