/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Log hygiene: with log_level 3 (debug) and GPURSA_STATS=1, run key import,
 * signing, every decryption mode (valid and invalid ciphertexts, so the
 * error paths log too) from several threads on each backend, print the
 * OpenSSL error queue, unload the provider, and search everything written to
 * stderr for the private values: d, p, q, dp, dq, qinv and the plaintexts,
 * in hex (either case, whole or any 8-byte window) and in decimal (whole or
 * any 20-digit window). Any hit fails the test.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "sectest.h"

#define NTHREADS 4
#define OPS_PER_THREAD 6
#define HEX_WINDOW 16               /* hex digits: 8 bytes of a secret */
#define DEC_WINDOW 20               /* decimal digits */

static const char plaintext[] = "TOP-SECRET-PLAINTEXT-0123456789";
static const unsigned char premaster[48] = {
    0x03, 0x03, 0x9a, 0x4f, 0x11, 0xe2, 0x7c, 0x5d, 0x80, 0x36, 0xb1, 0x2e, 0xf4, 0x69, 0x0d, 0xc7,
    0x52, 0x18, 0xab, 0x93, 0x6e, 0x27, 0xd4, 0x41, 0xbc, 0x05, 0x7a, 0xe8, 0x31, 0x96, 0x5f, 0x0c,
    0xa3, 0x77, 0x1b, 0xc9, 0x64, 0xf0, 0x2d, 0x88, 0x4e, 0xb6, 0x13, 0xda, 0x59, 0x25, 0xef, 0x71,
};

typedef struct {
    OSSL_LIB_CTX *libctx;
    EVP_PKEY *gkey, *dkey;
} work;

static int decrypt_one(work *w, int pad, const unsigned char *ct, size_t ctlen,
                       unsigned char *out, size_t *outlen)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(w->libctx, w->gkey, "provider=gpursa");
    unsigned int v = 0x0303;
    OSSL_PARAM params[2] = {
        OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, &v),
        OSSL_PARAM_construct_end()
    };
    int ok = ctx != NULL && EVP_PKEY_decrypt_init(ctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(ctx, pad) > 0
        && (pad != RSA_PKCS1_WITH_TLS_PADDING || EVP_PKEY_CTX_set_params(ctx, params) > 0)
        && EVP_PKEY_decrypt(ctx, out, outlen, ct, ctlen) > 0;

    EVP_PKEY_CTX_free(ctx);
    return ok;
}

static size_t encrypt_default(EVP_PKEY *dkey, int pad, const void *msg, size_t len,
                              unsigned char *ct)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, dkey, "provider=default");
    size_t ctlen = 512;

    ck_assert(ctx != NULL && EVP_PKEY_encrypt_init(ctx) > 0
              && EVP_PKEY_CTX_set_rsa_padding(ctx, pad) > 0
              && EVP_PKEY_encrypt(ctx, ct, &ctlen, msg, len) > 0);
    EVP_PKEY_CTX_free(ctx);
    return ctlen;
}

static void *worker(void *arg)
{
    work *w = arg;
    unsigned char ct[512], out[512], sig[512], md[32] = { 0x11 };
    size_t ctlen, outlen, siglen;
    int i;

    for (i = 0; i < OPS_PER_THREAD; i++) {
        EVP_PKEY_CTX *s = EVP_PKEY_CTX_new_from_pkey(w->libctx, w->gkey, "provider=gpursa");

        siglen = sizeof(sig);
        if (s == NULL || EVP_PKEY_sign_init(s) <= 0
            || EVP_PKEY_CTX_set_rsa_padding(s, i & 1 ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING) <= 0
            || EVP_PKEY_CTX_set_signature_md(s, EVP_sha256()) <= 0
            || EVP_PKEY_sign(s, sig, &siglen, md, sizeof(md)) <= 0)
            ERR_print_errors_fp(stderr);
        EVP_PKEY_CTX_free(s);

        ctlen = encrypt_default(w->dkey, RSA_PKCS1_OAEP_PADDING, plaintext, sizeof(plaintext), ct);
        outlen = sizeof(out);
        if (!decrypt_one(w, RSA_PKCS1_OAEP_PADDING, ct, ctlen, out, &outlen))
            ERR_print_errors_fp(stderr);
        ctlen = encrypt_default(w->dkey, RSA_PKCS1_PADDING, plaintext, sizeof(plaintext), ct);
        outlen = sizeof(out);
        if (!decrypt_one(w, RSA_PKCS1_PADDING, ct, ctlen, out, &outlen))
            ERR_print_errors_fp(stderr);
        ctlen = encrypt_default(w->dkey, RSA_PKCS1_PADDING, premaster, sizeof(premaster), ct);
        outlen = sizeof(out);
        if (!decrypt_one(w, RSA_PKCS1_WITH_TLS_PADDING, ct, ctlen, out, &outlen))
            ERR_print_errors_fp(stderr);
        /* error paths: a corrupted OAEP ciphertext, a wrong length */
        ctlen = encrypt_default(w->dkey, RSA_PKCS1_OAEP_PADDING, plaintext, sizeof(plaintext), ct);
        ct[ctlen / 2] ^= 1;
        outlen = sizeof(out);
        decrypt_one(w, RSA_PKCS1_OAEP_PADDING, ct, ctlen, out, &outlen);
        decrypt_one(w, RSA_NO_PADDING, ct, ctlen - 1, out, &outlen);
        ERR_print_errors_fp(stderr);
    }
    return NULL;
}

/* Append s and its lower-case form to the needle list. */
typedef struct {
    char **s;
    size_t n, cap;
} needles;

static void add_needle(needles *nd, const char *s, size_t len)
{
    if (nd->n == nd->cap) {
        nd->cap = nd->cap ? 2 * nd->cap : 256;
        nd->s = realloc(nd->s, nd->cap * sizeof(char *));
        ck_assert_ptr_nonnull(nd->s);
    }
    nd->s[nd->n] = strndup(s, len);
    ck_assert_ptr_nonnull(nd->s[nd->n]);
    nd->n++;
}

/* The whole string and every window of w characters (step 1). */
static void add_windows(needles *nd, const char *s, size_t w)
{
    size_t len = strlen(s), i;

    if (len <= w) {
        add_needle(nd, s, len);
        return;
    }
    for (i = 0; i + w <= len; i++)
        add_needle(nd, s + i, w);
}

static void add_secret_bytes(needles *nd, const unsigned char *b, size_t len)
{
    char *hex = OPENSSL_buf2hexstr(b, (long)len), *plain, *lower;
    size_t i, j;

    ck_assert_ptr_nonnull(hex);
    /* OPENSSL_buf2hexstr writes AB:CD:..; logs might use either form */
    plain = malloc(2 * len + 1);
    lower = malloc(2 * len + 1);
    ck_assert(plain != NULL && lower != NULL);
    for (i = j = 0; hex[i] != '\0'; i++)
        if (hex[i] != ':')
            plain[j++] = hex[i];
    plain[j] = '\0';
    for (i = 0; i <= j; i++)
        lower[i] = (char)tolower((unsigned char)plain[i]);
    add_windows(nd, plain, HEX_WINDOW);
    add_windows(nd, lower, HEX_WINDOW);
    add_windows(nd, hex, HEX_WINDOW + HEX_WINDOW / 2);   /* with colons */
    OPENSSL_free(hex);
    free(plain);
    free(lower);
}

static void add_secret_bn(needles *nd, const BIGNUM *bn)
{
    unsigned char buf[1024];
    int len = BN_bn2bin(bn, buf);
    char *dec = BN_bn2dec(bn);

    ck_assert(len > 0 && dec != NULL);
    add_secret_bytes(nd, buf, (size_t)len);
    add_windows(nd, dec, DEC_WINDOW);
    OPENSSL_free(dec);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long len;

    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    ck_assert(buf != NULL && fread(buf, 1, (size_t)len, f) == (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_no_private_value_in_debug_logs)
{
    static const char *const env[] = {
        "GPURSA_LOG_LEVEL", "3", "GPURSA_MIN_GPU_BATCH", "1", NULL
    };
    static const char *const parts[] = {
        OSSL_PKEY_PARAM_RSA_D, OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2,
        OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2,
        OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    char logpath[] = "/tmp/gpursa-loghygiene-XXXXXX";
    int fd = mkstemp(logpath), saved, t;
    size_t i;
    pthread_t th[NTHREADS];
    work w;
    needles nd = { NULL, 0, 0 };
    char *log;

    ck_assert(fd >= 0);
    w.dkey = sec_default_rsa(2048);
    /* everything gpursa (and our error printing) writes from here goes to the file */
    fflush(stderr);
    saved = dup(2);
    ck_assert(saved >= 0 && dup2(fd, 2) == 2);
    setenv("GPURSA_STATS", "1", 1);    /* read at unload: the summary line */
    w.libctx = sec_libctx(sec_backend(_i), env);
    w.gkey = sec_to_gpursa(w.libctx, w.dkey);
    for (t = 0; t < NTHREADS; t++)
        ck_assert(pthread_create(&th[t], NULL, worker, &w) == 0);
    for (t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    ERR_print_errors_fp(stderr);
    EVP_PKEY_free(w.gkey);
    sec_libctx_free(w.libctx);        /* unload: the stats line */
    unsetenv("GPURSA_STATS");
    fflush(stderr);
    ck_assert(dup2(saved, 2) == 2);
    close(saved);
    close(fd);

    log = read_file(logpath);
    unlink(logpath);
    /* the capture works and debug logging is on: gpursa said something */
    ck_assert_msg(strstr(log, "gpursa") != NULL, "nothing logged at log_level 3 (%s)",
                  sec_backend(_i));
    ck_assert_msg(strstr(log, "gpursa: ops") != NULL, "no GPURSA_STATS line at unload (%s)",
                  sec_backend(_i));
    for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        BIGNUM *bn = NULL;

        ck_assert(EVP_PKEY_get_bn_param(w.dkey, parts[i], &bn) == 1);
        add_secret_bn(&nd, bn);
        BN_clear_free(bn);
    }
    add_windows(&nd, plaintext, 12);
    add_secret_bytes(&nd, (const unsigned char *)plaintext, sizeof(plaintext) - 1);
    add_secret_bytes(&nd, premaster, sizeof(premaster));
    /* the matcher itself: a log line carrying part of p in lower case is caught */
    {
        BIGNUM *p = NULL;
        char *hex, planted[256];
        size_t hit = 0;

        ck_assert(EVP_PKEY_get_bn_param(w.dkey, OSSL_PKEY_PARAM_RSA_FACTOR1, &p) == 1);
        hex = BN_bn2hex(p);
        for (i = 0; hex[i] != '\0'; i++)
            hex[i] = (char)tolower((unsigned char)hex[i]);
        snprintf(planted, sizeof(planted), "gpursa: debug: key p=...%.40s...", hex + 30);
        for (i = 0; i < nd.n; i++)
            hit += strstr(planted, nd.s[i]) != NULL;
        ck_assert_msg(hit > 0, "the matcher misses a planted secret");
        OPENSSL_free(hex);
        BN_free(p);
    }
    if (getenv("GPURSA_TEST_SHOW_LOG") != NULL)
        printf("# captured log (%s):\n%s\n", sec_backend(_i), log);
    for (i = 0; i < nd.n; i++) {
        ck_assert_msg(strstr(log, nd.s[i]) == NULL,
                      "backend %s: a private value appears in the log: \"%s\"\nlog:\n%.4000s",
                      sec_backend(_i), nd.s[i], log);
        free(nd.s[i]);
    }
    free(nd.s);
    free(log);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("log_hygiene");
    TCase *tc = tcase_create("log_hygiene");
    sec_default_rsa(2048);
    tcase_set_timeout(tc, 180);
    tcase_add_loop_test(tc, test_no_private_value_in_debug_logs, 0, sec_nbackends());
    suite_add_tcase(s, tc);
    return sec_run(s);
}
