/*
 * Lifecycle: an application that loads default and gpursa into its own
 * library context, uses a gpursa key (so gpursa's CPU fallback runs in its
 * child libctx) and then frees the libctx with OSSL_LIB_CTX_free alone, as
 * OpenSSL documents, must get gpursa torn down: its GPURSA_STATS=1 line is
 * printed at teardown. With OpenSSL 3.0.19 it is not (and LeakSanitizer
 * reports the libctx's providers as leaked); unloading the providers first
 * works around it. Listed in XFAIL_TESTS until fixed: it then XPASSes and
 * must come off that list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>

static int run(int unload_first)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(lc, "default");
    OSSL_PROVIDER *gp = OSSL_PROVIDER_load(lc, "gpursa");
    EVP_PKEY *k = EVP_PKEY_Q_keygen(lc, "provider=default", "RSA", (size_t)1024), *gk = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *c;
    unsigned char md[32] = { 1 }, sig[256];
    size_t siglen = sizeof(sig);
    char path[] = "/tmp/gpursa-libctx-XXXXXX", buf[4096];
    int fd = mkstemp(path), saved, signed_ok;
    ssize_t n;

    if (lc == NULL || dflt == NULL || gp == NULL || k == NULL || fd < 0
        || EVP_PKEY_todata(k, EVP_PKEY_KEYPAIR, &params) <= 0)
        return -1;
    c = EVP_PKEY_CTX_new_from_name(lc, "RSA", "provider=gpursa");
    if (c == NULL || EVP_PKEY_fromdata_init(c) <= 0
        || EVP_PKEY_fromdata(c, &gk, EVP_PKEY_KEYPAIR, params) <= 0)
        return -1;
    EVP_PKEY_CTX_free(c);
    c = EVP_PKEY_CTX_new_from_pkey(lc, gk, "provider=gpursa");
    signed_ok = c != NULL && EVP_PKEY_sign_init(c) > 0
        && EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) > 0
        && EVP_PKEY_sign(c, sig, &siglen, md, sizeof(md)) > 0;
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(gk);
    EVP_PKEY_free(k);
    OSSL_PARAM_free(params);
    if (!signed_ok)
        return -1;
    fflush(stderr);
    saved = dup(2);
    dup2(fd, 2);
    if (unload_first) {
        OSSL_PROVIDER_unload(gp);
        OSSL_PROVIDER_unload(dflt);
    }
    OSSL_LIB_CTX_free(lc);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    unlink(path);
    buf[n > 0 ? n : 0] = '\0';
    return strstr(buf, "gpursa: ops") != NULL;
}

/* Under ASan, LeakSanitizer would abort at exit on the very leak this test
 * is about; the stats line is the check here, so its leak report is off. */
void __lsan_disable(void) __attribute__((weak));

int main(int argc, char **argv)
{
    /* "--unload-first": the workaround, for comparison by hand */
    int unload_first = argc > 1 && strcmp(argv[1], "--unload-first") == 0, r;

    if (__lsan_disable != NULL)
        __lsan_disable();
    setenv("GPURSA_STATS", "1", 1);
    setenv("GPURSA_BACKEND", "cpu", 1);
    r = run(unload_first);
    printf("1..1\n");
    if (r < 0) {
        ERR_print_errors_fp(stdout);
        printf("not ok 1 - setup failed\n");
        return 1;
    }
    printf("%s 1 - OSSL_LIB_CTX_free%s tears gpursa down (stats line printed)\n",
           r ? "ok" : "not ok", unload_first ? " after unloading" : " alone");
    fflush(stdout);
    return 0;
}
