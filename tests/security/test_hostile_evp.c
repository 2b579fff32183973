/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile input through EVP on every backend (cpu, host, cuda with a GPU):
 * ciphertexts longer than the modulus, equal to or above n, all zeros and
 * all ones, too-small output buffers, absurd parameter values and absurd key
 * sizes; shorter ciphertexts are answered as the default provider answers
 * them. Each refusal must be an OpenSSL error, never crash, hang
 * (Check's timeout) or write past the caller's buffer (guard bytes); each
 * success is checked against OpenSSL's default provider, so a silent wrong
 * answer fails too.
 */
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include "sectest.h"

#define GUARD 32
#define GUARD_BYTE 0xA5

static const int all_pads[] = {
    RSA_NO_PADDING, RSA_PKCS1_PADDING, RSA_PKCS1_OAEP_PADDING, RSA_PKCS1_WITH_TLS_PADDING
};
#define NPADS (sizeof(all_pads) / sizeof(all_pads[0]))

static OSSL_LIB_CTX *libctx;
static EVP_PKEY *gkey, *dkey;
static size_t k;

static void setup_backend(int i)
{
    dkey = sec_default_rsa(2048);
    libctx = sec_libctx(sec_backend(i), NULL);
    gkey = sec_to_gpursa(libctx, dkey);
    k = (size_t)EVP_PKEY_get_size(dkey);
}

static void teardown_backend(void)
{
    EVP_PKEY_free(gkey);
    sec_libctx_free(libctx);
    ERR_clear_error();
}

/* A decrypt context on gpursa (or the default) for pad; ir < 0: not set. */
static EVP_PKEY_CTX *dec_ctx(int on_gpursa, int pad, int ir)
{
    EVP_PKEY_CTX *ctx = on_gpursa ? EVP_PKEY_CTX_new_from_pkey(libctx, gkey, "provider=gpursa")
                                  : EVP_PKEY_CTX_new_from_pkey(NULL, dkey, "provider=default");
    unsigned int v = 0x0303, irv = (unsigned)ir;
    OSSL_PARAM params[3], *p = params;

    ck_assert_ptr_nonnull(ctx);
    if (pad == RSA_PKCS1_WITH_TLS_PADDING)
        *p++ = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, &v);
    if (ir >= 0)
        *p++ = OSSL_PARAM_construct_uint("implicit-rejection", &irv);
    *p = OSSL_PARAM_construct_end();
    ck_assert_msg(EVP_PKEY_decrypt_init(ctx) > 0 && EVP_PKEY_CTX_set_rsa_padding(ctx, pad) > 0
                  && EVP_PKEY_CTX_set_params(ctx, params) > 0, "decrypt init, pad %d", pad);
    return ctx;
}

/* Decrypt into a buffer of outsize bytes followed by guard bytes; checks the
 * guard and the reported length. Returns the EVP result. */
static int guarded_decrypt(EVP_PKEY_CTX *ctx, const unsigned char *ct, size_t ctlen,
                           unsigned char *out, size_t outsize, size_t *outlen)
{
    int ret, i;

    memset(out, GUARD_BYTE, outsize + GUARD);
    *outlen = outsize;
    ret = EVP_PKEY_decrypt(ctx, out, outlen, ct, ctlen);
    for (i = 0; i < GUARD; i++)
        ck_assert_msg(out[outsize + i] == GUARD_BYTE, "wrote past a %zu-byte buffer", outsize);
    if (ret > 0)
        ck_assert_msg(*outlen <= outsize, "reported %zu bytes for a %zu-byte buffer",
                      *outlen, outsize);
    return ret;
}

/* ct (k bytes) decrypts on gpursa: must fail loudly for every padding. */
static void assert_rejected_by_all(const unsigned char *ct, size_t ctlen, const char *what)
{
    unsigned char *out = OPENSSL_malloc(2 * k + GUARD);
    size_t i, outlen;
    char msg[128];

    ck_assert_ptr_nonnull(out);
    for (i = 0; i < NPADS; i++) {
        EVP_PKEY_CTX *ctx = dec_ctx(1, all_pads[i], -1);

        snprintf(msg, sizeof(msg), "%s, pad %d", what, all_pads[i]);
        sec_assert_failed_loudly(guarded_decrypt(ctx, ct, ctlen, out, k, &outlen), msg);
        EVP_PKEY_CTX_free(ctx);
    }
    OPENSSL_free(out);
}

START_TEST(test_ciphertext_longer_than_modulus_rejected)
{
    unsigned char *ct;
    size_t lens[3], i;
    char what[64];

    setup_backend(_i);
    lens[0] = k + 1;
    lens[1] = k + 64;
    lens[2] = 2 * k;
    ct = OPENSSL_malloc(2 * k + 64);
    ck_assert_ptr_nonnull(ct);
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        /* small values, so only the length is wrong */
        memset(ct, 0, lens[i]);
        ct[lens[i] - 1] = 0x42;
        snprintf(what, sizeof(what), "%zu-byte ciphertext, %zu-byte key", lens[i], k);
        assert_rejected_by_all(ct, lens[i], what);
    }
    OPENSSL_free(ct);
    teardown_backend();
}
END_TEST

/* Shorter than the modulus (an integer below n sent without its leading zero
 * bytes) or empty: gpursa answers as the default provider does, for every
 * padding (PKCS#1 v1.5 with implicit rejection off, so that OpenSSL 3.0's
 * default, which has none, answers the same), never writing past the buffer. */
START_TEST(test_ciphertext_shorter_than_modulus_as_default)
{
    unsigned char *ct, *gout, *dout;
    size_t lens[4], i, p, glen, dlen;
    char what[96];
    int rg, rd;

    setup_backend(_i);
    lens[0] = 0;
    lens[1] = 1;
    lens[2] = k / 2;
    lens[3] = k - 1;
    ct = OPENSSL_malloc(k);
    gout = OPENSSL_malloc(k + GUARD);
    dout = OPENSSL_malloc(k);
    ck_assert(ct != NULL && gout != NULL && dout != NULL);
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        memset(ct, 0, k);
        if (lens[i] > 0)
            ct[lens[i] - 1] = 0x42;
        for (p = 0; p < NPADS; p++) {
            EVP_PKEY_CTX *g = dec_ctx(1, all_pads[p], 0), *d = dec_ctx(0, all_pads[p], 0);

            snprintf(what, sizeof(what), "%zu-byte ciphertext, %zu-byte key, pad %d",
                     lens[i], k, all_pads[p]);
            dlen = k;
            rd = EVP_PKEY_decrypt(d, dout, &dlen, ct, lens[i]);
            ERR_clear_error();
            rg = guarded_decrypt(g, ct, lens[i], gout, k, &glen);
            if (rd <= 0)
                sec_assert_failed_loudly(rg, what);
            ck_assert_msg(rg > 0 || rd <= 0, "%s: default decrypts, gpursa refuses", what);
            if (rg > 0 && all_pads[p] != RSA_PKCS1_WITH_TLS_PADDING)
                ck_assert_msg(glen == dlen && memcmp(gout, dout, dlen) == 0,
                              "%s: output differs from the default's", what);
            EVP_PKEY_CTX_free(g);
            EVP_PKEY_CTX_free(d);
        }
    }
    OPENSSL_free(ct);
    OPENSSL_free(gout);
    OPENSSL_free(dout);
    teardown_backend();
}
END_TEST

/* Whether the k-byte big-endian a is b + 1 */
static int is_one_more(const unsigned char *a, const unsigned char *b, size_t k)
{
    BIGNUM *x = BN_bin2bn(a, (int)k, NULL), *y = BN_bin2bn(b, (int)k, NULL);
    int r;

    ck_assert(x != NULL && y != NULL && BN_add_word(y, 1));
    r = BN_cmp(x, y) == 0;
    BN_free(x);
    BN_free(y);
    return r;
}

START_TEST(test_ciphertext_at_or_above_modulus_rejected)
{
    unsigned char *n = sec_modulus(sec_default_rsa(2048), &k), *v;
    size_t i;

    setup_backend(_i);
    v = OPENSSL_malloc(k);
    ck_assert_ptr_nonnull(v);
    memcpy(v, n, k);
    assert_rejected_by_all(v, k, "ciphertext == n");
    /* n + 1, the carry taken up through the bytes: n is odd, but its last byte
     * may be 0xff (one key in 128), and then n + 1 ends in 0x00 */
    for (i = k; i-- > 0 && ++v[i] == 0;)
        ;
    ck_assert_msg(is_one_more(v, n, k), "n + 1 formed");
    assert_rejected_by_all(v, k, "ciphertext == n + 1");
    memset(v, 0xff, k);
    assert_rejected_by_all(v, k, "ciphertext all ones");
    /* just above n in the top byte, random below */
    memcpy(v, n, k);
    for (i = 0; i < k && v[i] == 0xff; i++)
        ;
    v[i]++;
    memset(v + i + 1, 0x5a, k - i - 1);
    assert_rejected_by_all(v, k, "ciphertext > n");
    OPENSSL_free(v);
    OPENSSL_free(n);
    teardown_backend();
}
END_TEST

/* Raw RSA on the default provider: the oracle for the no-padding results. */
static void default_raw(const unsigned char *ct, unsigned char *out)
{
    EVP_PKEY_CTX *ctx = dec_ctx(0, RSA_NO_PADDING, -1);
    size_t outlen = k;

    ck_assert(EVP_PKEY_decrypt(ctx, out, &outlen, ct, k) > 0 && outlen == k);
    EVP_PKEY_CTX_free(ctx);
}

START_TEST(test_zero_one_and_n_minus_1_give_right_answers_or_errors)
{
    unsigned char *n, *ct, *out, *want;
    size_t outlen, outlen2;
    EVP_PKEY_CTX *ctx;
    int ret, which;

    setup_backend(_i);
    n = sec_modulus(dkey, &k);
    ct = OPENSSL_malloc(k);
    out = OPENSSL_malloc(k + GUARD);
    want = OPENSSL_malloc(k + GUARD);
    ck_assert(ct != NULL && out != NULL && want != NULL);
    for (which = 0; which < 3; which++) {
        memset(ct, 0, k);
        if (which == 1)
            ct[k - 1] = 1;
        else if (which == 2) {
            memcpy(ct, n, k);
            ct[k - 1]--;              /* n - 1 */
        }
        /* No padding: the raw result is defined (0, 1, n - 1) and must be right. */
        ctx = dec_ctx(1, RSA_NO_PADDING, -1);
        ck_assert_msg(guarded_decrypt(ctx, ct, k, out, k, &outlen) > 0 && outlen == k,
                      "raw decrypt of a small value, case %d", which);
        default_raw(ct, want);
        ck_assert_msg(memcmp(out, want, k) == 0, "raw result differs from default, case %d", which);
        EVP_PKEY_CTX_free(ctx);
        /* OAEP, and PKCS#1 v1.5 with implicit rejection off: a bad padding is an error. */
        ctx = dec_ctx(1, RSA_PKCS1_OAEP_PADDING, -1);
        sec_assert_failed_loudly(guarded_decrypt(ctx, ct, k, out, k, &outlen), "OAEP of 0/1/n-1");
        EVP_PKEY_CTX_free(ctx);
        ctx = dec_ctx(1, RSA_PKCS1_PADDING, 0);
        sec_assert_failed_loudly(guarded_decrypt(ctx, ct, k, out, k, &outlen),
                                 "PKCS#1 v1.5 (no implicit rejection) of 0/1/n-1");
        EVP_PKEY_CTX_free(ctx);
        /* Implicit rejection: a synthetic message, the same each time, or an error. */
        ctx = dec_ctx(1, RSA_PKCS1_PADDING, 1);
        ret = guarded_decrypt(ctx, ct, k, out, k, &outlen);
        if (ret > 0) {
            ck_assert(outlen <= k - 11);
            ck_assert(guarded_decrypt(ctx, ct, k, want, k, &outlen2) > 0);
            ck_assert_msg(outlen2 == outlen && memcmp(out, want, outlen) == 0,
                          "implicit rejection is not deterministic");
        } else {
            sec_assert_failed_loudly(ret, "implicit rejection");
        }
        EVP_PKEY_CTX_free(ctx);
        /* TLS premaster: 48 bytes (random on bad padding), never an overrun. */
        ctx = dec_ctx(1, RSA_PKCS1_WITH_TLS_PADDING, -1);
        ret = guarded_decrypt(ctx, ct, k, out, k, &outlen);
        if (ret > 0)
            ck_assert_uint_eq(outlen, 48);
        else
            sec_assert_failed_loudly(ret, "TLS premaster");
        EVP_PKEY_CTX_free(ctx);
    }
    ERR_clear_error();
    OPENSSL_free(ct);
    OPENSSL_free(out);
    OPENSSL_free(want);
    OPENSSL_free(n);
    teardown_backend();
}
END_TEST

START_TEST(test_too_small_output_buffer_is_an_error)
{
    unsigned char msg[16] = "sixteen byte msg", ct[512], out[512 + GUARD];
    size_t ctlen = sizeof(ct), outlen, sizes[] = { 0, 1, 15 }, i;
    EVP_PKEY_CTX *e, *ctx;

    setup_backend(_i);
    e = EVP_PKEY_CTX_new_from_pkey(NULL, dkey, "provider=default");
    ck_assert(e != NULL && EVP_PKEY_encrypt_init(e) > 0
              && EVP_PKEY_CTX_set_rsa_padding(e, RSA_PKCS1_OAEP_PADDING) > 0
              && EVP_PKEY_encrypt(e, ct, &ctlen, msg, sizeof(msg)) > 0);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        ctx = dec_ctx(1, RSA_PKCS1_OAEP_PADDING, -1);
        sec_assert_failed_loudly(guarded_decrypt(ctx, ct, ctlen, out, sizes[i], &outlen),
                                 "OAEP into a too-small buffer");
        EVP_PKEY_CTX_free(ctx);
    }
    /* raw output needs all k bytes */
    ctx = dec_ctx(1, RSA_NO_PADDING, -1);
    sec_assert_failed_loudly(guarded_decrypt(ctx, ct, ctlen, out, k - 1, &outlen),
                             "raw decrypt into k-1 bytes");
    EVP_PKEY_CTX_free(ctx);
    /* the exact size still works and gives the message back */
    ctx = dec_ctx(1, RSA_PKCS1_OAEP_PADDING, -1);
    ck_assert(guarded_decrypt(ctx, ct, ctlen, out, k, &outlen) > 0);
    ck_assert(outlen == sizeof(msg) && memcmp(out, msg, sizeof(msg)) == 0);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_CTX_free(e);
    teardown_backend();
}
END_TEST

START_TEST(test_huge_oaep_label_round_trips_and_mismatch_fails)
{
    size_t labellen = 1 << 20, ctlen, outlen;
    unsigned char *label = OPENSSL_malloc(labellen), *l2, ct[512], out[512 + GUARD];
    unsigned char msg[] = "label test";
    EVP_PKEY_CTX *e, *ctx;

    setup_backend(_i);
    ck_assert_ptr_nonnull(label);
    memset(label, 'L', labellen);
    e = EVP_PKEY_CTX_new_from_pkey(NULL, dkey, "provider=default");
    ctlen = sizeof(ct);
    l2 = OPENSSL_memdup(label, labellen);
    ck_assert(e != NULL && EVP_PKEY_encrypt_init(e) > 0
              && EVP_PKEY_CTX_set_rsa_padding(e, RSA_PKCS1_OAEP_PADDING) > 0
              && EVP_PKEY_CTX_set0_rsa_oaep_label(e, l2, (int)labellen) > 0
              && EVP_PKEY_encrypt(e, ct, &ctlen, msg, sizeof(msg)) > 0);
    ctx = dec_ctx(1, RSA_PKCS1_OAEP_PADDING, -1);
    l2 = OPENSSL_memdup(label, labellen);
    ck_assert(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l2, (int)labellen) > 0);
    ck_assert_msg(guarded_decrypt(ctx, ct, ctlen, out, k, &outlen) > 0, "1 MiB label");
    ck_assert(outlen == sizeof(msg) && memcmp(out, msg, outlen) == 0);
    EVP_PKEY_CTX_free(ctx);
    label[labellen - 1] = 'M';
    ctx = dec_ctx(1, RSA_PKCS1_OAEP_PADDING, -1);
    l2 = OPENSSL_memdup(label, labellen);
    ck_assert(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l2, (int)labellen) > 0);
    sec_assert_failed_loudly(guarded_decrypt(ctx, ct, ctlen, out, k, &outlen),
                             "OAEP with a label differing in its last byte");
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_CTX_free(e);
    OPENSSL_free(label);
    teardown_backend();
}
END_TEST

/* Sign init + params; returns the sign result (init failure counts as failure). */
static int sign_with(const OSSL_PARAM *params, const unsigned char *tbs, size_t tbslen,
                     unsigned char *sig, size_t sigsize, size_t *siglen)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, gkey, "provider=gpursa");
    int ret;

    ck_assert_ptr_nonnull(ctx);
    *siglen = sigsize;
    ret = EVP_PKEY_sign_init_ex(ctx, params);
    if (ret > 0)
        ret = EVP_PKEY_sign(ctx, sig, siglen, tbs, tbslen);
    EVP_PKEY_CTX_free(ctx);
    return ret;
}

START_TEST(test_absurd_signature_parameters_rejected)
{
    static const struct { const char *pad, *md, *mgf1; int saltlen; size_t tbslen; } bad[] = {
        { "pss", "SHA256", NULL, -100, 32 },
        { "pss", "SHA256", NULL, 1 << 30, 32 },
        { "pss", "SHA256", NULL, 2048 / 8, 32 },        /* salt as long as the key */
        { "pss", "SHA256", "NOSUCHDIGEST", -1, 32 },
        { "pkcs1", "SHA1000", NULL, 0, 32 },
        { "pkcs1", "", NULL, 0, 32 },
        { "pkcs1", "SHA256", NULL, 0, 31 },              /* wrong digest length */
        { "pkcs1", "SHA256", NULL, 0, 1 << 20 },
        { "oaep", "SHA256", NULL, 0, 32 },               /* not a signature padding */
        { "nonsense", "SHA256", NULL, 0, 32 },
        { "none", NULL, NULL, 0, 1 << 20 },
        { "none", NULL, NULL, 0, 255 },
    };
    unsigned char *tbs = OPENSSL_zalloc(1 << 20), sig[512 + GUARD];
    size_t i, siglen;

    setup_backend(_i);
    ck_assert_ptr_nonnull(tbs);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        OSSL_PARAM params[5], *p = params;
        int salt = bad[i].saltlen;
        char what[96];

        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, (char *)bad[i].pad, 0);
        if (bad[i].md != NULL)
            *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, (char *)bad[i].md, 0);
        if (bad[i].mgf1 != NULL)
            *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST,
                                                    (char *)bad[i].mgf1, 0);
        if (strcmp(bad[i].pad, "pss") == 0)
            *p++ = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &salt);
        *p = OSSL_PARAM_construct_end();
        memset(sig + k, GUARD_BYTE, GUARD);
        snprintf(what, sizeof(what), "sign case %zu (%s, %s, saltlen %d, %zu-byte input)", i,
                 bad[i].pad, bad[i].md ? bad[i].md : "-", salt, bad[i].tbslen);
        sec_assert_failed_loudly(sign_with(params, tbs, bad[i].tbslen, sig, k, &siglen), what);
        for (siglen = 0; siglen < GUARD; siglen++)
            ck_assert(sig[k + siglen] == GUARD_BYTE);
    }
    OPENSSL_free(tbs);
    teardown_backend();
}
END_TEST

START_TEST(test_signature_buffer_too_small_is_an_error)
{
    OSSL_PARAM params[3];
    unsigned char md[32] = { 7 }, sig[512 + GUARD];
    size_t siglen, g;

    setup_backend(_i);
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, "pkcs1", 0);
    params[1] = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, "SHA256", 0);
    params[2] = OSSL_PARAM_construct_end();
    memset(sig, GUARD_BYTE, sizeof(sig));
    sec_assert_failed_loudly(sign_with(params, md, sizeof(md), sig, k - 1, &siglen),
                             "signature into k-1 bytes");
    for (g = k - 1; g < sizeof(sig); g++)
        ck_assert_msg(sig[g] == GUARD_BYTE, "wrote past a %zu-byte signature buffer", k - 1);
    ck_assert(sign_with(params, md, sizeof(md), sig, k, &siglen) > 0 && siglen == k);
    teardown_backend();
}
END_TEST

/* Import n, e, d, p, q, dp, dq, qinv given as BIGNUMs (NULL = leave out). */
static int import_parts(BIGNUM *const parts[8], int selection)
{
    static const char *const names[8] = {
        OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_D,
        OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2,
        OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2,
        OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    EVP_PKEY *out = NULL;
    int i, ret;

    ck_assert(bld != NULL && ctx != NULL);
    for (i = 0; i < 8; i++)
        if (parts[i] != NULL)
            ck_assert(OSSL_PARAM_BLD_push_BN(bld, names[i], parts[i]));
    params = OSSL_PARAM_BLD_to_param(bld);
    ck_assert(params != NULL && EVP_PKEY_fromdata_init(ctx) > 0);
    ret = EVP_PKEY_fromdata(ctx, &out, selection, params);
    EVP_PKEY_free(out);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    return ret;
}

START_TEST(test_absurd_key_sizes_rejected)
{
    BIGNUM *parts[8] = { NULL }, *big = BN_new(), *e = BN_new(), *even = NULL, *one = BN_new();
    int i;

    setup_backend(_i);
    ck_assert(big != NULL && e != NULL && one != NULL && BN_set_word(e, 65537) && BN_one(one));
    /* a 32768-bit odd "modulus" with private parts: far above the 16384-bit limit */
    ck_assert(BN_rand(big, 32768, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD));
    for (i = 0; i < 8; i++)
        parts[i] = i == 1 ? e : big;
    sec_assert_failed_loudly(import_parts(parts, EVP_PKEY_KEYPAIR), "32768-bit private key");
    /* tiny modulus */
    ck_assert(BN_set_word(big, 0xC5));
    sec_assert_failed_loudly(import_parts(parts, EVP_PKEY_KEYPAIR), "8-bit private key");
    /* n = 0 and n = 1 */
    parts[0] = one;
    sec_assert_failed_loudly(import_parts(parts, EVP_PKEY_KEYPAIR), "n = 1");
    /* an even modulus from a real key's n + 1 */
    ck_assert(EVP_PKEY_get_bn_param(dkey, OSSL_PKEY_PARAM_RSA_N, &even));
    ck_assert(BN_add_word(even, 1));
    for (i = 0; i < 8; i++)
        parts[i] = NULL;
    parts[0] = even;
    parts[1] = e;
    parts[2] = e;
    sec_assert_failed_loudly(import_parts(parts, EVP_PKEY_KEYPAIR), "even modulus");
    /* e as large as n */
    ck_assert(EVP_PKEY_get_bn_param(dkey, OSSL_PKEY_PARAM_RSA_N, &big));
    parts[0] = big;
    parts[1] = big;
    parts[2] = e;
    sec_assert_failed_loudly(import_parts(parts, EVP_PKEY_KEYPAIR), "e == n");
    BN_free(big);
    BN_free(e);
    BN_free(even);
    BN_free(one);
    teardown_backend();
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile_evp");
    TCase *tc = tcase_create("hostile");
    int n = sec_nbackends();

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_ciphertext_longer_than_modulus_rejected, 0, n);
    tcase_add_loop_test(tc, test_ciphertext_shorter_than_modulus_as_default, 0, n);
    tcase_add_loop_test(tc, test_ciphertext_at_or_above_modulus_rejected, 0, n);
    tcase_add_loop_test(tc, test_zero_one_and_n_minus_1_give_right_answers_or_errors, 0, n);
    tcase_add_loop_test(tc, test_too_small_output_buffer_is_an_error, 0, n);
    tcase_add_loop_test(tc, test_huge_oaep_label_round_trips_and_mismatch_fails, 0, n);
    tcase_add_loop_test(tc, test_absurd_signature_parameters_rejected, 0, n);
    tcase_add_loop_test(tc, test_signature_buffer_too_small_is_an_error, 0, n);
    tcase_add_loop_test(tc, test_absurd_key_sizes_rejected, 0, n);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    sec_default_rsa(2048);          /* once, before Check forks the tests */
    return sec_run(hostile_suite());
}
