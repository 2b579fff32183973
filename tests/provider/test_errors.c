/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa's refusals name what the default provider names. For each bad
 * parameter or input below, the same operation runs on the default provider
 * and on gpursa: both must refuse, and gpursa's reason string must contain
 * the default's (case-insensitive), both read at run time from the running
 * libcrypto, so that log searches and runbooks written for OpenSSL's
 * messages keep finding gpursa's. Each case prints both strings (the TAP log
 * holds the table).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rsa.h>
#include "testutil.h"

static OSSL_LIB_CTX *libctx;

enum { K2048, K1024, K512, NKEYS };
static TU_KEY keys[NKEYS] = { { 2048, NULL, NULL }, { 1024, NULL, NULL }, { 512, NULL, NULL } };

enum { OP_SIGN, OP_DECRYPT };
/* The input of a decryption. */
enum { IN_PKCS1, IN_ONE, IN_N, IN_LONGER };

/*
 * One refusal: the operation, the key, the parameters as "name=value" pairs
 * separated by ';' (typed through the context's settable table; "pad" is
 * the RSA_*_PADDING number), and for the operation itself the input
 * (signing: |tbslen| bytes, 0 for the digest's size; decryption: |in|) and
 * the output buffer (0: the size the operation asks for).
 */
typedef struct {
    const char *what;
    int op, key;
    const char *params;
    size_t tbslen;
    int in;
    size_t outsize;
} ERR_CASE;

/* pad: 1 PKCS#1 v1.5, 3 none, 4 OAEP, 5 X9.31, 6 PSS, 7 TLS premaster */
static const ERR_CASE cases[] = {
    /* signature: digests */
    { "unknown digest", OP_SIGN, K2048, "digest=NOT-A-DIGEST", 0, 0, 0 },
    { "XOF digest", OP_SIGN, K2048, "digest=SHAKE256", 0, 0, 0 },
    { "digest too big for the key", OP_SIGN, K512, "digest=SHA512;pad=1", 0, 0, 0 },
    { "input is not the digest's size", OP_SIGN, K2048, "digest=SHA256", 31, 0, 0 },
    /* signature: padding modes */
    { "OAEP padding for a signature", OP_SIGN, K2048, "pad=4", 0, 0, 0 },
    { "no padding with a digest", OP_SIGN, K2048, "digest=SHA256;pad=3", 0, 0, 0 },
    { "no padding, input shorter than k", OP_SIGN, K2048, "pad=3", 255, 0, 0 },
    { "no padding, input longer than k", OP_SIGN, K2048, "pad=3", 257, 0, 0 },
    { "PKCS#1 v1.5 without digest, input too long", OP_SIGN, K2048, "pad=1", 246,
      0, 0 },
    /* signature: PSS */
    { "PSS salt length below -4", OP_SIGN, K2048, "pad=6;digest=SHA256;saltlen=-5", 0,
      0, 0 },
    { "PSS salt length without PSS", OP_SIGN, K2048, "pad=1;saltlen=20", 0, 0, 0 },
    { "PSS salt too long for the key", OP_SIGN, K1024,
      "pad=6;digest=SHA512;saltlen=100", 0, 0, 0 },
    { "PSS digest too big for the key", OP_SIGN, K512, "pad=6;digest=SHA512", 0, 0, 0 },
    { "PSS with an MGF1 digest that is not allowed", OP_SIGN, K2048,
      "pad=6;digest=SHA256;mgf1-digest=SHAKE256", 0, 0, 0 },
    { "PSS with an unknown MGF1 digest", OP_SIGN, K2048,
      "pad=6;digest=SHA256;mgf1-digest=NOT-A-DIGEST", 0, 0, 0 },
    { "MGF1 digest without PSS", OP_SIGN, K2048, "pad=1;mgf1-digest=SHA256", 0, 0,
      0 },
    { "signature buffer too small", OP_SIGN, K2048, "digest=SHA256", 0, 0, 255 },
    /* asymmetric cipher */
    { "unknown OAEP digest", OP_DECRYPT, K2048, "pad=4;digest=NOT-A-DIGEST", 0, 0, 0 },
    { "unknown MGF1 digest for OAEP", OP_DECRYPT, K2048, "pad=4;mgf1-digest=NOT-A-DIGEST",
      0, 0, 0 },
    { "PSS padding for decryption", OP_DECRYPT, K2048, "pad=6", 0, 0, 0 },
    { "X9.31 padding for decryption", OP_DECRYPT, K2048, "pad=5", 0, 0, 0 },
    { "OAEP with a wrong label", OP_DECRYPT, K2048, "pad=4;oaep-label=6c6162656c", 0,
      IN_PKCS1, 0 },
    { "PKCS#1 v1.5, bad padding, implicit rejection off", OP_DECRYPT, K2048,
      "pad=1;implicit-rejection=0", 0, IN_ONE, 0 },
    { "ciphertext value n", OP_DECRYPT, K2048, "pad=3", 0, IN_N, 0 },
    { "ciphertext longer than the modulus", OP_DECRYPT, K2048, "pad=3", 0, IN_LONGER, 0 },
    { "output buffer too small", OP_DECRYPT, K2048, "pad=3", 0, IN_PKCS1, 10 },
    { "PKCS#1 v1.5, output buffer too small", OP_DECRYPT, K2048, "pad=1", 0, IN_PKCS1, 10 },
    { "TLS premaster without a client version", OP_DECRYPT, K2048, "pad=7", 0, IN_PKCS1, 0 },
    { "TLS premaster, output buffer too small", OP_DECRYPT, K2048,
      "pad=7;tls-client-version=771", 0, IN_PKCS1, 47 },
    { "OAEP digest too large for the key", OP_DECRYPT, K512, "pad=4;digest=SHA512", 0,
      IN_PKCS1, 0 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* Set one "name=value" on ctx; the value is typed by the settable table. */
static int set_one(EVP_PKEY_CTX *ctx, const char *name, const char *value)
{
    OSSL_PARAM params[2];
    int found = 0, r;

    ck_assert_msg(OSSL_PARAM_allocate_from_text(&params[0], EVP_PKEY_CTX_settable_params(ctx),
                                                name, value, strlen(value), &found) == 1
                  || !found, "cannot type %s=%s", name, value);
    if (!found) {
        /* a parameter this provider has no name for is not a refusal here */
        ERR_clear_error();
        return 1;
    }
    params[1] = OSSL_PARAM_construct_end();
    r = EVP_PKEY_CTX_set_params(ctx, params);
    OPENSSL_free(params[0].data);
    return r;
}

/* Set the case's parameters in order; 0 at the first one refused. */
static int set_all(EVP_PKEY_CTX *ctx, const char *spec)
{
    char buf[256], *item, *save = NULL, *eq;

    snprintf(buf, sizeof(buf), "%s", spec);
    for (item = strtok_r(buf, ";", &save); item != NULL; item = strtok_r(NULL, ";", &save)) {
        eq = strchr(item, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        /* Padding modes by number through the EVP helper: the TLS mode has
         * no name, and the names differ between operations. */
        if (strcmp(item, "pad") == 0) {
            if (EVP_PKEY_CTX_set_rsa_padding(ctx, atoi(eq + 1)) <= 0)
                return 0;
            continue;
        }
        if (set_one(ctx, item, eq + 1) <= 0)
            return 0;
    }
    return 1;
}

/* A ciphertext for |c| on the key: a PKCS#1 v1.5 encryption (by the
 * default provider), 1, n itself, or k + 1 bytes. */
static size_t make_input(const ERR_CASE *c, EVP_PKEY *d, unsigned char *ct)
{
    size_t k = (size_t)EVP_PKEY_get_size(d), len = 512;
    BIGNUM *n = NULL;
    EVP_PKEY_CTX *ctx;

    switch (c->in) {
    case IN_ONE:
        memset(ct, 0, k);
        ct[k - 1] = 1;
        return k;
    case IN_N:
    case IN_LONGER:
        ck_assert(EVP_PKEY_get_bn_param(d, OSSL_PKEY_PARAM_RSA_N, &n));
        ck_assert_int_eq(BN_bn2binpad(n, ct + 1, (int)k), (int)k);
        BN_free(n);
        if (c->in == IN_N) {
            memmove(ct, ct + 1, k);
            return k;
        }
        ct[0] = 0;
        ct[1] = 0;              /* below n, only too long */
        return k + 1;
    default:
        ctx = EVP_PKEY_CTX_new_from_pkey(libctx, d, "provider=default");
        ck_assert(ctx != NULL && EVP_PKEY_encrypt_init(ctx) == 1
                  && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1);
        ck_assert_int_eq(EVP_PKEY_encrypt(ctx, ct, &len, (const unsigned char *)"48", 2), 1);
        EVP_PKEY_CTX_free(ctx);
        return len;
    }
}

/*
 * Run case |c| with |pkey| on provider |propq|; returns the reason string of
 * the refusal (the provider's own: gpursa's for gpursa, the first error on
 * the queue for the default), or NULL if the operation succeeded.
 */
static const char *run_case(const ERR_CASE *c, EVP_PKEY *pkey, EVP_PKEY *d,
                            const char *propq, int gpursa)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, propq);
    unsigned char in[1024], out[1024];
    size_t inlen, outlen = 0;
    const char *reason = NULL;
    unsigned long e;
    int ok;

    ck_assert_ptr_nonnull(ctx);
    ERR_clear_error();
    ok = (c->op == OP_SIGN ? EVP_PKEY_sign_init(ctx) : EVP_PKEY_decrypt_init(ctx)) == 1;
    ck_assert_str_eq(OSSL_PROVIDER_get0_name(EVP_PKEY_CTX_get0_provider(ctx)),
                     gpursa ? "gpursa" : "default");
    ok = ok && set_all(ctx, c->params);
    if (ok && c->op == OP_SIGN) {
        const EVP_MD *md = NULL;

        if (EVP_PKEY_CTX_get_signature_md(ctx, &md) <= 0)
            md = NULL;
        ERR_clear_error();
        inlen = c->tbslen != 0 ? c->tbslen : md != NULL ? (size_t)EVP_MD_get_size(md) : 32;
        memset(in, 0x11, inlen);
        in[0] = 0;              /* for no padding: a value below n */
        ok = EVP_PKEY_sign(ctx, NULL, &outlen, in, inlen) == 1;
        outlen = c->outsize != 0 ? c->outsize : outlen;
        ok = ok && EVP_PKEY_sign(ctx, out, &outlen, in, inlen) == 1;
    } else if (ok) {
        inlen = make_input(c, d, in);
        ok = EVP_PKEY_decrypt(ctx, NULL, &outlen, in, inlen) == 1;
        outlen = c->outsize != 0 ? c->outsize : outlen;
        ok = ok && EVP_PKEY_decrypt(ctx, out, &outlen, in, inlen) == 1;
    }
    EVP_PKEY_CTX_free(ctx);
    if (ok) {
        ERR_clear_error();
        return NULL;
    }
    while ((e = ERR_get_error()) != 0) {
        const char *s = ERR_reason_error_string(e);

        if (s == NULL)
            continue;
        if (gpursa ? strncmp(s, "gpursa:", 7) == 0 : reason == NULL)
            reason = s;
    }
    /* "": refused with no reason string (the default does so for some
     * padding modes); gpursa's own errors always have one */
    return reason != NULL ? reason : "";
}

/* needle within haystack, ignoring case */
static int contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle), i, j;

    for (i = 0; haystack[i] != '\0'; i++) {
        for (j = 0; j < n && haystack[i + j] != '\0'
             && tolower((unsigned char)haystack[i + j]) == tolower((unsigned char)needle[j]); j++)
            ;
        if (j == n)
            return 1;
    }
    return n == 0;
}

START_TEST(gpursa_refusal_names_the_defaults_reason)
{
    const ERR_CASE *c = &cases[_i];
    const TU_KEY *key = &keys[c->key];
    const char *dreason, *greason;

    dreason = run_case(c, key->d, key->d, "provider=default", 0);
    greason = run_case(c, key->g, key->d, "provider=gpursa", 1);
    printf("# %-48s | default: %-36s | gpursa: %s\n", c->what,
           dreason == NULL ? "(accepted)" : *dreason == '\0' ? "(no reason string)" : dreason,
           greason != NULL ? greason : "(accepted)");
    fflush(stdout);
    ck_assert_msg(dreason != NULL, "%s: the default provider accepts it", c->what);
    ck_assert_msg(greason != NULL, "%s: gpursa accepts it", c->what);
    ck_assert_msg(strncmp(greason, "gpursa:", 7) == 0, "%s: no gpursa error", c->what);
    ck_assert_msg(contains_nocase(greason, dreason), "%s: gpursa says \"%s\", the default \"%s\"",
                  c->what, greason, dreason);
}
END_TEST

static Suite *make_errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("refusals");

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, gpursa_refusal_names_the_defaults_reason, 0, (int)NCASES);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_with_keys(make_errors_suite, CK_NORMAL, &libctx, keys, NKEYS, NULL);
}
