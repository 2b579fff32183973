/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RSA signatures through gpursa, through EVP only, cross-checked against
 * OpenSSL's default provider: gpursa signs and default verifies and the
 * reverse, deterministic schemes give byte-identical signatures, parameters
 * and AlgorithmIdentifiers read back the same, and bad input gets an error.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "testutil.h"

#define GP "provider=gpursa"
#define DF "provider=default"
#define MAXSIG 512
/* EVP's reason for a provider's failed sign, in OpenSSL 3.5's evperr.h */
#ifndef EVP_R_PROVIDER_SIGNATURE_FAILURE
# define EVP_R_PROVIDER_SIGNATURE_FAILURE 234
#endif
/* A UTF-8 parameter from a string literal, with its length. */
#define PSTR(k, v) OSSL_PARAM_utf8_string((k), (char *)(v), sizeof(v) - 1)

static OSSL_LIB_CTX *libctx;

/* One key per size in both providers, generated once before Check forks. */
typedef TU_KEY TKEY;

enum { K2048, K3072, K4096, K1024, K1025, K512, NKEYS };
static TKEY keys[NKEYS] = {
    { 2048, NULL, NULL }, { 3072, NULL, NULL }, { 4096, NULL, NULL },
    { 1024, NULL, NULL }, { 1025, NULL, NULL }, { 512, NULL, NULL },
};
#define NMAIN 3     /* the sizes every scheme is run at */
/* GPURSA_TEST_QUICK=1 (for valgrind runs) keeps to 2048 bits of those. */
static int nmain = NMAIN;

/* Digests RSA signatures accept in both providers. */
static const char *const digests[] = {
    "SHA1", "SHA224", "SHA256", "SHA384", "SHA512", "SHA512-224", "SHA512-256",
    "SHA3-224", "SHA3-256", "SHA3-384", "SHA3-512", "MD5", "RIPEMD160",
};
#define NDIGESTS (sizeof(digests) / sizeof(digests[0]))

/* Signature parameters as the string forms EVP_PKEY_CTX_set_params takes. */
typedef struct {
    const char *pad, *md, *mgf1, *saltlen;
} SIGP;

static EVP_PKEY *key_in(const TKEY *k, int gp)
{
    return gp ? k->g : k->d;
}

static void set_sigp(EVP_PKEY_CTX *pctx, const SIGP *sp, int expect_ok)
{
    OSSL_PARAM params[5], *p = params;
    int r;

    if (sp->pad != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, (char *)sp->pad, 0);
    if (sp->md != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, (char *)sp->md, 0);
    if (sp->mgf1 != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, (char *)sp->mgf1, 0);
    if (sp->saltlen != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, (char *)sp->saltlen, 0);
    *p = OSSL_PARAM_construct_end();
    r = EVP_PKEY_CTX_set_params(pctx, params);
    if (expect_ok)
        ck_assert_msg(r > 0, "set params pad=%s md=%s mgf1=%s salt=%s", sp->pad, sp->md,
                      sp->mgf1, sp->saltlen);
}

/* EVP_PKEY_sign in gpursa (gp) or default; returns the EVP result. */
static int do_sign(EVP_PKEY *pkey, int gp, const SIGP *sp, const unsigned char *tbs,
                   size_t tbslen, unsigned char *sig, size_t *siglen)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, gp ? GP : DF);
    int r;

    ck_assert_ptr_nonnull(pctx);
    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    set_sigp(pctx, sp, 1);
    *siglen = MAXSIG;
    r = EVP_PKEY_sign(pctx, sig, siglen, tbs, tbslen);
    EVP_PKEY_CTX_free(pctx);
    return r;
}

static int do_verify(EVP_PKEY *pkey, int gp, const SIGP *sp, const unsigned char *sig,
                     size_t siglen, const unsigned char *tbs, size_t tbslen)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, gp ? GP : DF);
    int r;

    ck_assert_ptr_nonnull(pctx);
    ck_assert_int_gt(EVP_PKEY_verify_init(pctx), 0);
    set_sigp(pctx, sp, 1);
    r = EVP_PKEY_verify(pctx, sig, siglen, tbs, tbslen);
    EVP_PKEY_CTX_free(pctx);
    ERR_clear_error();
    return r;
}

static size_t hash(const char *md, const unsigned char *msg, size_t len, unsigned char *out)
{
    EVP_MD *m = EVP_MD_fetch(libctx, md, DF);
    unsigned int outlen = 0;

    ck_assert_msg(m != NULL && EVP_Digest(msg, len, out, &outlen, m, NULL) == 1, "hash %s", md);
    EVP_MD_free(m);
    return outlen;
}

static size_t random_message(unsigned char *buf, size_t max)
{
    unsigned int r;
    size_t len;

    ck_assert_int_eq(RAND_bytes((unsigned char *)&r, sizeof(r)), 1);
    len = r % (max + 1);
    ck_assert_int_eq(RAND_bytes(buf, (int)max), 1);
    return len;
}

/*
 * Empties the error queue; true if one of its errors carries a gpursa reason.
 * gpursa's reason need not be the newest: newer OpenSSL (3.5 does) raises its
 * own "provider signature failure" (EVP) on top of the provider's error when
 * a provider's sign fails. Anything else on top of gpursa's error is refused.
 */
static int error_is_gpursa(char *all, size_t allsize)
{
    unsigned long e;
    int found = 0, foreign_after = 0;
    size_t used = 0;

    all[0] = '\0';
    while ((e = ERR_get_error()) != 0) {
        const char *s = ERR_reason_error_string(e);
        int ours = s != NULL && strncmp(s, "gpursa:", 7) == 0;

        if (used < allsize)
            used += (size_t)snprintf(all + used, allsize - used, "%s[%s]",
                                     used ? " " : "", ERR_error_string(e, NULL));
        if (ours)
            found = 1;
        else if (found && !(ERR_GET_LIB(e) == ERR_LIB_EVP
                            && ERR_GET_REASON(e) == EVP_R_PROVIDER_SIGNATURE_FAILURE))
            foreign_after = 1;
    }
    return found && !foreign_after;
}

static void expect_error(const char *what, int gpursa_reason)
{
    char all[1024];

    ck_assert_msg(ERR_peek_last_error() != 0, "%s: no error on the queue", what);
    if (gpursa_reason)
        ck_assert_msg(error_is_gpursa(all, sizeof(all)),
                      "%s: no gpursa reason, or others after it: %s", what, all);
    ERR_clear_error();
}

static uint64_t gpursa_private_ops(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(libctx, "gpursa");
    uint64_t gpu = 0, host = 0, cpu = 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_uint64("gpursa-ops-gpu", &gpu),
        OSSL_PARAM_uint64("gpursa-ops-host", &host),
        OSSL_PARAM_uint64("gpursa-ops-cpu", &cpu),
        OSSL_PARAM_END
    };

    ck_assert_ptr_nonnull(prov);
    ck_assert_int_eq(OSSL_PROVIDER_get_params(prov, params), 1);
    OSSL_PROVIDER_unload(prov);
    return gpu + host + cpu;
}

/* ---- sign/verify both ways, every digest and padding mode ---- */

static void cross_check(const TKEY *k, const SIGP *sign_p, const SIGP *verify_p,
                        const unsigned char *tbs, size_t tbslen, int deterministic)
{
    unsigned char gsig[MAXSIG], dsig[MAXSIG];
    size_t gl, dl, ks = (size_t)EVP_PKEY_get_size(k->d);

    ck_assert_msg(do_sign(k->g, 1, sign_p, tbs, tbslen, gsig, &gl) > 0,
                  "gpursa sign %d md=%s pad=%s salt=%s: %s", k->bits, sign_p->md, sign_p->pad,
                  sign_p->saltlen, ERR_error_string(ERR_peek_last_error(), NULL));
    ck_assert_uint_eq(gl, ks);
    ck_assert_msg(do_verify(k->d, 0, verify_p, gsig, gl, tbs, tbslen) == 1,
                  "default rejects gpursa's %d-bit md=%s pad=%s salt=%s mgf1=%s", k->bits,
                  sign_p->md, sign_p->pad, sign_p->saltlen, sign_p->mgf1);
    ck_assert_int_gt(do_sign(k->d, 0, sign_p, tbs, tbslen, dsig, &dl), 0);
    ck_assert_msg(do_verify(k->g, 1, verify_p, dsig, dl, tbs, tbslen) == 1,
                  "gpursa rejects default's %d-bit md=%s pad=%s salt=%s", k->bits,
                  sign_p->md, sign_p->pad, sign_p->saltlen);
    if (deterministic)
        ck_assert_msg(gl == dl && memcmp(gsig, dsig, gl) == 0,
                      "%d-bit md=%s pad=%s salt=%s: signatures differ", k->bits,
                      sign_p->md, sign_p->pad, sign_p->saltlen);
    /* a flipped bit must not verify on either side */
    gsig[gl / 2] ^= 0x10;
    ck_assert_int_ne(do_verify(k->g, 1, verify_p, gsig, gl, tbs, tbslen), 1);
    ck_assert_int_ne(do_verify(k->d, 0, verify_p, gsig, gl, tbs, tbslen), 1);
}

START_TEST(test_pkcs1_every_digest_cross_and_identical)
{
    const TKEY *k = &keys[_i];
    unsigned char msg[300], tbs[EVP_MAX_MD_SIZE];
    size_t i, mlen, tlen;
    uint64_t ops = gpursa_private_ops();

    for (i = 0; i < NDIGESTS; i++) {
        SIGP sp = { "pkcs1", digests[i], NULL, NULL };

        mlen = random_message(msg, sizeof(msg));
        tlen = hash(digests[i], msg, mlen, tbs);
        cross_check(k, &sp, &sp, tbs, tlen, 1);
    }
    /* TLS 1.0/1.1 style: 36 bytes of MD5||SHA1 without DigestInfo */
    {
        SIGP sp = { "pkcs1", "MD5-SHA1", NULL, NULL };

        mlen = random_message(msg, sizeof(msg));
        tlen = hash("MD5-SHA1", msg, mlen, tbs);
        ck_assert_uint_eq(tlen, 36);
        cross_check(k, &sp, &sp, tbs, tlen, 1);
    }
    /* the private operations really ran in gpursa */
    ck_assert_uint_ge(gpursa_private_ops() - ops, NDIGESTS + 1);
}
END_TEST

START_TEST(test_pss_every_digest_and_saltlen_cross)
{
    static const char *const salts[] = { "digest", "max", "auto", "0", "1", "20", "-1", "-3" };
    const TKEY *k = &keys[_i];
    unsigned char msg[200], tbs[EVP_MAX_MD_SIZE];
    size_t i, s, mlen, tlen;

    for (i = 0; i < NDIGESTS; i++) {
        for (s = 0; s < sizeof(salts) / sizeof(salts[0]); s++) {
            SIGP sp = { "pss", digests[i], NULL, salts[s] };
            SIGP autov = { "pss", digests[i], NULL, "auto" };

            mlen = random_message(msg, sizeof(msg));
            tlen = hash(digests[i], msg, mlen, tbs);
            /* salt length 0 makes PSS deterministic */
            cross_check(k, &sp, &sp, tbs, tlen, strcmp(salts[s], "0") == 0);
            /* 3.0's "auto" on verify recovers whatever salt was used */
            cross_check(k, &sp, &autov, tbs, tlen, strcmp(salts[s], "0") == 0);
        }
    }
}
END_TEST

/* The salt length a context holds, as the number (EVP_PKEY_CTX_get_rsa_pss_saltlen
 * reads OpenSSL 3.5's "auto-digestmax" as 0). */
static int saltlen_int(EVP_PKEY_CTX *pctx)
{
    int salt = 0;
    OSSL_PARAM p[] = { OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &salt), OSSL_PARAM_END };

    ck_assert_int_gt(EVP_PKEY_CTX_get_params(pctx, p), 0);
    return salt;
}

/* Whether the running default provider knows OpenSSL 3.1's "auto-digestmax"
 * (3.0 reads any unknown word as the number 0). */
static int default_has_auto_digestmax(void)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, keys[K2048].d, DF);
    OSSL_PARAM p[] = { PSTR(OSSL_SIGNATURE_PARAM_PAD_MODE, "pss"),
                       PSTR(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, "auto-digestmax"), OSSL_PARAM_END };
    int r;

    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    r = EVP_PKEY_CTX_set_params(pctx, p) > 0 && saltlen_int(pctx) == -4;
    EVP_PKEY_CTX_free(pctx);
    ERR_clear_error();
    return r;
}

/* The salt length the default provider signs with when none is set (a
 * RSA_PSS_SALTLEN_* value), as it reports it. */
static int default_pss_saltlen(void)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, keys[K2048].d, DF);
    int salt;

    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING), 0);
    salt = saltlen_int(pctx);
    EVP_PKEY_CTX_free(pctx);
    return salt;
}

/* Signs with gpursa and checks, through the default provider verifying with
 * an explicit salt length, that the salt was exactly |want| bytes long. */
static void expect_salt_bytes(const TKEY *k, const char *md, const char *salt, int want,
                              const unsigned char *tbs, size_t tbslen)
{
    unsigned char sig[MAXSIG];
    char n[16];
    size_t sl;

    ck_assert_msg(do_sign(k->g, 1, &(SIGP){ "pss", md, NULL, salt }, tbs, tbslen, sig, &sl) > 0,
                  "gpursa sign %d-bit %s salt %s", k->bits, md, salt ? salt : "(default)");
    snprintf(n, sizeof(n), "%d", want);
    ck_assert_msg(do_verify(k->d, 0, &(SIGP){ "pss", md, NULL, n }, sig, sl, tbs, tbslen) == 1,
                  "%d-bit %s salt %s: not %d bytes", k->bits, md, salt ? salt : "(default)",
                  want);
    snprintf(n, sizeof(n), "%d", want + 1);
    ck_assert_int_ne(do_verify(k->d, 0, &(SIGP){ "pss", md, NULL, n }, sig, sl, tbs, tbslen), 1);
}

/*
 * "auto-digestmax" (OpenSSL 3.1+) signs with a salt as long as the digest,
 * or the maximum when that is smaller, and gpursa accepts it whatever
 * OpenSSL runs it. With no salt length set, gpursa's salt is as long as the
 * running default provider's: the maximum on 3.0, the digest's length from
 * 3.1 on.
 */
START_TEST(test_pss_auto_digestmax_and_default_salt)
{
    /* the small keys, where the maximum is below the digest length, once */
    const TKEY *all[] = { &keys[_i], &keys[K1024], &keys[K1025], &keys[K512] };
    size_t nkeys = _i == 0 ? sizeof(all) / sizeof(all[0]) : 1;
    int dflt = default_pss_saltlen(), has_dm = default_has_auto_digestmax();
    unsigned char msg[100], tbs[EVP_MAX_MD_SIZE], sig[MAXSIG];
    size_t i, j, tlen, sl;

    /* the default is one of the two that OpenSSL 3.x versions have used */
    ck_assert_msg(dflt == RSA_PSS_SALTLEN_AUTO || dflt == -4, "default salt %d", dflt);
    for (j = 0; j < nkeys; j++) {
        const TKEY *k = all[j];
        int emlen = (k->bits - 1 + 7) / 8;

        for (i = 0; i < NDIGESTS; i++) {
            int hlen, room;

            tlen = hash(digests[i], msg, random_message(msg, sizeof(msg)), tbs);
            hlen = (int)tlen;
            room = emlen - hlen - 2;
            if (room < 0)
                continue;   /* the digest does not fit PSS with this key */
            expect_salt_bytes(k, digests[i], "auto-digestmax", hlen < room ? hlen : room,
                              tbs, tlen);
            expect_salt_bytes(k, digests[i], NULL,
                              dflt == RSA_PSS_SALTLEN_AUTO || hlen > room ? room : hlen,
                              tbs, tlen);
            /* verifying with "auto-digestmax" accepts any salt length */
            ck_assert_int_gt(do_sign(k->d, 0, &(SIGP){ "pss", digests[i], NULL, "max" }, tbs,
                                     tlen, sig, &sl), 0);
            ck_assert_int_eq(do_verify(k->g, 1, &(SIGP){ "pss", digests[i], NULL,
                                                         "auto-digestmax" },
                                       sig, sl, tbs, tlen), 1);
            ck_assert_int_gt(do_sign(k->d, 0, &(SIGP){ "pss", digests[i], NULL, "0" }, tbs,
                                     tlen, sig, &sl), 0);
            ck_assert_int_eq(do_verify(k->g, 1, &(SIGP){ "pss", digests[i], NULL,
                                                         "auto-digestmax" },
                                       sig, sl, tbs, tlen), 1);
            if (has_dm)
                cross_check(k, &(SIGP){ "pss", digests[i], NULL, "auto-digestmax" },
                            &(SIGP){ "pss", digests[i], NULL, "auto-digestmax" }, tbs, tlen, 0);
        }
    }
}
END_TEST

START_TEST(test_pss_mgf1_digests_cross)
{
    static const char *const mgfs[] = { "SHA1", "SHA256", "SHA512", "SHA3-256" };
    const TKEY *k = &keys[_i];
    unsigned char msg[64], tbs[EVP_MAX_MD_SIZE];
    size_t i, j, tlen;

    for (i = 0; i < NDIGESTS; i += 2) {
        for (j = 0; j < sizeof(mgfs) / sizeof(mgfs[0]); j++) {
            SIGP sp = { "pss", digests[i], mgfs[j], "digest" };
            SIGP zero = { "pss", digests[i], mgfs[j], "0" };

            tlen = hash(digests[i], msg, random_message(msg, sizeof(msg)), tbs);
            cross_check(k, &sp, &sp, tbs, tlen, 0);
            cross_check(k, &zero, &zero, tbs, tlen, 1);
        }
    }
}
END_TEST

/* No digest: the input is signed as-is in a type-1 block, up to k - 11. */
START_TEST(test_pkcs1_raw_input_identical)
{
    const TKEY *k = &keys[_i];
    SIGP sp = { "pkcs1", NULL, NULL, NULL };
    unsigned char msg[MAXSIG], sig[MAXSIG], rec[MAXSIG];
    size_t ks = (size_t)EVP_PKEY_get_size(k->d), lens[] = { 0, 1, 20, 36, ks - 11 }, i, sl, rl;
    EVP_PKEY_CTX *pctx;

    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        ck_assert_int_eq(RAND_bytes(msg, (int)lens[i] + 1), 1);
        if (lens[i] > 0) {
            cross_check(k, &sp, &sp, msg, lens[i], 1);
        } else {
            /* the default provider's verify refuses an empty input (its
             * RSA_public_decrypt returns 0), so only compare signatures */
            ck_assert_int_gt(do_sign(k->g, 1, &sp, msg, 0, sig, &sl), 0);
            ck_assert_int_gt(do_sign(k->d, 0, &sp, msg, 0, rec, &rl), 0);
            ck_assert_uint_eq(sl, rl);
            ck_assert_mem_eq(sig, rec, sl);
        }
        /* verify-recover through gpursa gives the input back */
        ck_assert_int_gt(do_sign(k->g, 1, &sp, msg, lens[i], sig, &sl), 0);
        pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);
        ck_assert_int_gt(EVP_PKEY_verify_recover_init(pctx), 0);
        rl = sizeof(rec);
        ck_assert_int_gt(EVP_PKEY_verify_recover(pctx, rec, &rl, sig, sl), 0);
        ck_assert_uint_eq(rl, lens[i]);
        ck_assert_mem_eq(rec, msg, rl);
        EVP_PKEY_CTX_free(pctx);
    }
    /* one byte more than fits */
    ck_assert_int_le(do_sign(k->g, 1, &sp, msg, ks - 10, sig, &sl), 0);
    expect_error("raw input k-10", 1);
}
END_TEST

START_TEST(test_no_padding_identical_and_bounds)
{
    const TKEY *k = &keys[_i];
    SIGP sp = { "none", NULL, NULL, NULL };
    unsigned char in[MAXSIG], gsig[MAXSIG], dsig[MAXSIG];
    size_t ks = (size_t)EVP_PKEY_get_size(k->d), gl, dl;
    int n;

    for (n = 0; n < 4; n++) {
        ck_assert_int_eq(RAND_bytes(in, (int)ks), 1);
        in[0] = 0x00;       /* below n */
        if (n == 1)
            memset(in, 0, ks);  /* zero signs to zero */
        ck_assert_int_gt(do_sign(k->g, 1, &sp, in, ks, gsig, &gl), 0);
        ck_assert_int_gt(do_sign(k->d, 0, &sp, in, ks, dsig, &dl), 0);
        ck_assert_uint_eq(gl, dl);
        ck_assert_mem_eq(gsig, dsig, gl);
        ck_assert_int_eq(do_verify(k->d, 0, &sp, gsig, gl, in, ks), 1);
        ck_assert_int_eq(do_verify(k->g, 1, &sp, dsig, dl, in, ks), 1);
    }
    /* wrong lengths and an input >= n */
    ck_assert_int_le(do_sign(k->g, 1, &sp, in, ks - 1, gsig, &gl), 0);
    expect_error("none, k-1 bytes", 1);
    ck_assert_int_le(do_sign(k->g, 1, &sp, in, ks + 1, gsig, &gl), 0);
    expect_error("none, k+1 bytes", 1);
    memset(in, 0xff, ks);
    ck_assert_int_le(do_sign(k->g, 1, &sp, in, ks, gsig, &gl), 0);
    expect_error("none, input >= n", 1);
}
END_TEST

/* ---- digest-sign / digest-verify ---- */

static int digest_sign(EVP_PKEY *pkey, int gp, const SIGP *sp, const unsigned char *msg,
                       size_t len, int oneshot, unsigned char *sig, size_t *siglen)
{
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    size_t off = 0, n, need = 0;
    int r = 0;

    ck_assert_int_gt(EVP_DigestSignInit_ex(mctx, &pctx, sp->md, libctx, gp ? GP : DF,
                                           pkey, NULL), 0);
    set_sigp(pctx, &(SIGP){ sp->pad, NULL, sp->mgf1, sp->saltlen }, 1);
    if (oneshot) {
        *siglen = MAXSIG;
        r = EVP_DigestSign(mctx, sig, siglen, msg, len);
    } else {
        /* random chunks, a size query, then the signature */
        while (off < len) {
            n = 1 + (size_t)(rand() % 97);
            n = n > len - off ? len - off : n;
            ck_assert_int_eq(EVP_DigestSignUpdate(mctx, msg + off, n), 1);
            off += n;
        }
        ck_assert_int_eq(EVP_DigestSignFinal(mctx, NULL, &need), 1);
        ck_assert_uint_eq(need, (size_t)EVP_PKEY_get_size(pkey));
        *siglen = need;
        r = EVP_DigestSignFinal(mctx, sig, siglen);
    }
    EVP_MD_CTX_free(mctx);
    return r;
}

static int digest_verify(EVP_PKEY *pkey, int gp, const SIGP *sp, const unsigned char *msg,
                         size_t len, int oneshot, const unsigned char *sig, size_t siglen)
{
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    size_t half = len / 2;
    int r;

    ck_assert_int_gt(EVP_DigestVerifyInit_ex(mctx, &pctx, sp->md, libctx, gp ? GP : DF,
                                             pkey, NULL), 0);
    set_sigp(pctx, &(SIGP){ sp->pad, NULL, sp->mgf1, sp->saltlen }, 1);
    if (oneshot) {
        r = EVP_DigestVerify(mctx, sig, siglen, msg, len);
    } else {
        ck_assert_int_eq(EVP_DigestVerifyUpdate(mctx, msg, half), 1);
        ck_assert_int_eq(EVP_DigestVerifyUpdate(mctx, msg + half, len - half), 1);
        r = EVP_DigestVerifyFinal(mctx, sig, siglen);
    }
    EVP_MD_CTX_free(mctx);
    ERR_clear_error();
    return r;
}

START_TEST(test_digest_sign_verify_oneshot_and_streaming)
{
    static const SIGP sps[] = {
        { "pkcs1", "SHA256", NULL, NULL }, { "pkcs1", "SHA1", NULL, NULL },
        { "pkcs1", "SHA384", NULL, NULL }, { "pkcs1", "SHA512", NULL, NULL },
        { "pkcs1", "SHA3-256", NULL, NULL }, { "pkcs1", "SHA512-256", NULL, NULL },
        { "pss", "SHA256", NULL, "digest" }, { "pss", "SHA384", "SHA1", "max" },
        { "pss", "SHA512", NULL, "auto" }, { "pss", "SHA256", NULL, "0" },
        { "pss", "SHA1", "SHA256", "17" },
    };
    const TKEY *k = &keys[_i];
    unsigned char msg[5000], gsig[MAXSIG], dsig[MAXSIG];
    size_t i, len, gl, dl;
    int oneshot;

    for (i = 0; i < sizeof(sps) / sizeof(sps[0]); i++) {
        int det = strcmp(sps[i].pad, "pkcs1") == 0
                  || (sps[i].saltlen != NULL && strcmp(sps[i].saltlen, "0") == 0);

        for (oneshot = 0; oneshot < 2; oneshot++) {
            len = random_message(msg, sizeof(msg) - 1);
            ck_assert_msg(digest_sign(k->g, 1, &sps[i], msg, len, oneshot, gsig, &gl) > 0,
                          "gpursa digest-sign %s/%s", sps[i].pad, sps[i].md);
            ck_assert_uint_eq(gl, (size_t)EVP_PKEY_get_size(k->d));
            ck_assert_int_gt(digest_sign(k->d, 0, &sps[i], msg, len, !oneshot, dsig, &dl), 0);
            ck_assert_msg(digest_verify(k->d, 0, &sps[i], msg, len, oneshot, gsig, gl) == 1,
                          "default rejects gpursa digest-sign %s/%s", sps[i].pad, sps[i].md);
            ck_assert_msg(digest_verify(k->g, 1, &sps[i], msg, len, !oneshot, dsig, dl) == 1,
                          "gpursa rejects default digest-sign %s/%s", sps[i].pad, sps[i].md);
            if (det)
                ck_assert_mem_eq(gsig, dsig, gl);
            /* another message must not verify */
            msg[len] ^= 1;
            ck_assert_int_ne(digest_verify(k->g, 1, &sps[i], msg, len + 1, oneshot, dsig, dl), 1);
        }
    }
}
END_TEST

/* EVP_MD_CTX_copy_ex in the middle of a message continues it in both copies. */
START_TEST(test_ctx_dup_mid_stream)
{
    const TKEY *k = &keys[K2048];
    SIGP sp = { "pkcs1", "SHA256", NULL, NULL };
    unsigned char msg[3000], sig1[MAXSIG], sig2[MAXSIG], ref[MAXSIG];
    size_t l1 = MAXSIG, l2 = MAXSIG, rl;
    EVP_MD_CTX *a = EVP_MD_CTX_new(), *b = EVP_MD_CTX_new();

    ck_assert_int_eq(RAND_bytes(msg, sizeof(msg)), 1);
    ck_assert_int_gt(EVP_DigestSignInit_ex(a, NULL, "SHA256", libctx, GP, k->g, NULL), 0);
    ck_assert_int_eq(EVP_DigestSignUpdate(a, msg, 1000), 1);
    ck_assert_int_eq(EVP_MD_CTX_copy_ex(b, a), 1);
    /* a continues with 1000..3000, b with 2000..3000 */
    ck_assert_int_eq(EVP_DigestSignUpdate(a, msg + 1000, 2000), 1);
    ck_assert_int_eq(EVP_DigestSignUpdate(b, msg + 2000, 1000), 1);
    ck_assert_int_eq(EVP_DigestSignFinal(a, sig1, &l1), 1);
    ck_assert_int_eq(EVP_DigestSignFinal(b, sig2, &l2), 1);
    ck_assert_int_gt(digest_sign(k->d, 0, &sp, msg, 3000, 1, ref, &rl), 0);
    ck_assert_mem_eq(sig1, ref, rl);
    memmove(msg + 1000, msg + 2000, 1000);
    ck_assert_int_gt(digest_sign(k->d, 0, &sp, msg, 2000, 1, ref, &rl), 0);
    ck_assert_mem_eq(sig2, ref, rl);

    /* the same for digest-verify */
    EVP_MD_CTX_free(a);
    EVP_MD_CTX_free(b);
    a = EVP_MD_CTX_new();
    b = EVP_MD_CTX_new();
    ck_assert_int_gt(EVP_DigestVerifyInit_ex(a, NULL, "SHA256", libctx, GP, k->g, NULL), 0);
    ck_assert_int_eq(EVP_DigestVerifyUpdate(a, msg, 1000), 1);
    ck_assert_int_eq(EVP_MD_CTX_copy_ex(b, a), 1);
    ck_assert_int_eq(EVP_DigestVerifyUpdate(a, msg + 1000, 1000), 1);
    ck_assert_int_eq(EVP_DigestVerifyUpdate(b, msg + 1000, 999), 1);
    ck_assert_int_eq(EVP_DigestVerifyFinal(a, sig2, l2), 1);
    ck_assert_int_ne(EVP_DigestVerifyFinal(b, sig2, l2), 1);
    ERR_clear_error();
    EVP_MD_CTX_free(a);
    EVP_MD_CTX_free(b);
}
END_TEST

/* EVP_PKEY_CTX_dup of a configured PSS sign context keeps its parameters. */
START_TEST(test_pkey_ctx_dup_keeps_params)
{
    const TKEY *k = &keys[K2048];
    SIGP sp = { "pss", "SHA384", "SHA256", "0" };
    unsigned char tbs[48], sig[MAXSIG], ref[MAXSIG];
    size_t sl = sizeof(sig), rl;
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP), *dup;

    ck_assert_int_eq(RAND_bytes(tbs, sizeof(tbs)), 1);
    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    set_sigp(pctx, &sp, 1);
    ck_assert_ptr_nonnull(dup = EVP_PKEY_CTX_dup(pctx));
    EVP_PKEY_CTX_free(pctx);
    ck_assert_int_gt(EVP_PKEY_sign(dup, sig, &sl, tbs, sizeof(tbs)), 0);
    EVP_PKEY_CTX_free(dup);
    ck_assert_int_gt(do_sign(k->d, 0, &sp, tbs, sizeof(tbs), ref, &rl), 0);
    ck_assert_mem_eq(sig, ref, rl);
}
END_TEST

/* ---- parameters read back ---- */

static int get_aid(EVP_PKEY_CTX *pctx, unsigned char *aid, size_t *len)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_ALGORITHM_ID, aid, 128),
        OSSL_PARAM_END
    };
    int r = EVP_PKEY_CTX_get_params(pctx, params);

    *len = params[0].return_size;
    ERR_clear_error();
    return r > 0;
}

static int sign_ctx_aid(const TKEY *k, int gp, const SIGP *sp, unsigned char *aid, size_t *len)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, key_in(k, gp), gp ? GP : DF);
    int r;

    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    set_sigp(pctx, sp, 1);
    r = get_aid(pctx, aid, len);
    EVP_PKEY_CTX_free(pctx);
    return r;
}

START_TEST(test_algorithm_id_matches_default)
{
    /* "auto-digestmax" last: compared only where the default provider has it */
    static const char *const salts[] = { NULL, "digest", "max", "auto", "0", "20", "32", "300",
                                         "auto-digestmax" };
    static const char *const mgfs[] = { NULL, "SHA1", "SHA256", "SHA512" };
    const size_t nsalts = sizeof(salts) / sizeof(salts[0]) - !default_has_auto_digestmax();
    const TKEY *k = &keys[_i];
    unsigned char ga[128], da[128];
    size_t gl, dl, i, j, s;
    int gr, dr, compared = 0;

    for (i = 0; i <= NDIGESTS; i++) {
        const char *md = i < NDIGESTS ? digests[i] : "MD5-SHA1";
        SIGP sp = { "pkcs1", md, NULL, NULL };

        gr = sign_ctx_aid(k, 1, &sp, ga, &gl);
        dr = sign_ctx_aid(k, 0, &sp, da, &dl);
        ck_assert_msg(gr == dr, "pkcs1 %s: gpursa %d default %d", md, gr, dr);
        if (dr) {
            ck_assert_uint_eq(gl, dl);
            ck_assert_mem_eq(ga, da, gl);
            compared++;
        }
        for (j = 0; j < sizeof(mgfs) / sizeof(mgfs[0]); j++) {
            for (s = 0; s < nsalts; s++) {
                SIGP pp = { "pss", md, mgfs[j], salts[s] };

                gr = sign_ctx_aid(k, 1, &pp, ga, &gl);
                dr = sign_ctx_aid(k, 0, &pp, da, &dl);
                ck_assert_msg(gr == dr, "pss %s mgf1 %s salt %s: gpursa %d default %d", md,
                              mgfs[j], salts[s], gr, dr);
                if (dr) {
                    ck_assert_uint_eq(gl, dl);
                    ck_assert_mem_eq(ga, da, gl);
                    compared++;
                }
            }
        }
    }
    /* no digest, and no padding: compare what each side says (or refuses) */
    {
        static const SIGP bare[] = { { "pkcs1", NULL, NULL, NULL }, { "none", NULL, NULL, NULL } };

        for (i = 0; i < 2; i++) {
            gr = sign_ctx_aid(k, 1, &bare[i], ga, &gl);
            dr = sign_ctx_aid(k, 0, &bare[i], da, &dl);
            ck_assert_msg(gr == dr, "%s without digest: gpursa %d default %d", bare[i].pad, gr, dr);
            if (dr) {
                ck_assert_uint_eq(gl, dl);
                ck_assert_mem_eq(ga, da, gl);
            }
        }
    }
    ck_assert_int_gt(compared, 100);
    /* the same through a digest-sign context, as X.509 signing reads it */
    {
        EVP_MD_CTX *mctx = EVP_MD_CTX_new(), *dctx = EVP_MD_CTX_new();
        EVP_PKEY_CTX *gp = NULL, *dp = NULL;

        ck_assert_int_gt(EVP_DigestSignInit_ex(mctx, &gp, "SHA384", libctx, GP, k->g, NULL), 0);
        ck_assert_int_gt(EVP_DigestSignInit_ex(dctx, &dp, "SHA384", libctx, DF, k->d, NULL), 0);
        ck_assert_int_eq(get_aid(gp, ga, &gl), 1);
        ck_assert_int_eq(get_aid(dp, da, &dl), 1);
        ck_assert_uint_eq(gl, dl);
        ck_assert_mem_eq(ga, da, gl);
        set_sigp(gp, &(SIGP){ "pss", NULL, NULL, "digest" }, 1);
        set_sigp(dp, &(SIGP){ "pss", NULL, NULL, "digest" }, 1);
        ck_assert_int_eq(get_aid(gp, ga, &gl), 1);
        ck_assert_int_eq(get_aid(dp, da, &dl), 1);
        ck_assert_uint_eq(gl, dl);
        ck_assert_mem_eq(ga, da, gl);
        EVP_MD_CTX_free(mctx);
        EVP_MD_CTX_free(dctx);
    }
}
END_TEST

static void read_params(EVP_PKEY_CTX *pctx, char *md, char *mgf1, char *pad, int *padn,
                        char *salt, int *saltn)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, md, 50),
        OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, mgf1, 50),
        OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, pad, 50),
        OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, salt, 50),
        OSSL_PARAM_END
    };
    OSSL_PARAM nums[] = {
        OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PAD_MODE, padn),
        OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, saltn),
        OSSL_PARAM_END
    };

    ck_assert_int_gt(EVP_PKEY_CTX_get_params(pctx, params), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_get_params(pctx, nums), 0);
}

START_TEST(test_get_params_match_default)
{
    static const SIGP sps[] = {
        { NULL, NULL, NULL, NULL }, { "pkcs1", "SHA256", NULL, NULL },
        { "pss", NULL, NULL, NULL }, { "pss", "SHA512", NULL, "digest" },
        { "pss", "SHA256", "SHA384", "max" }, { "pss", "SHA1", NULL, "auto" },
        { "pss", "SHA224", NULL, "42" }, { "none", NULL, NULL, NULL },
    };
    const TKEY *k = &keys[K2048];
    size_t i;
    int gp, op;

    for (op = 0; op < 2; op++) {
        for (i = 0; i < sizeof(sps) / sizeof(sps[0]); i++) {
            char md[2][50], mgf1[2][50], pad[2][50], salt[2][50];
            int padn[2], saltn[2];

            for (gp = 0; gp < 2; gp++) {
                EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, key_in(k, gp),
                                                                gp ? GP : DF);

                ck_assert_int_gt(op ? EVP_PKEY_verify_init(pctx) : EVP_PKEY_sign_init(pctx), 0);
                set_sigp(pctx, &sps[i], 1);
                read_params(pctx, md[gp], mgf1[gp], pad[gp], &padn[gp], salt[gp], &saltn[gp]);
                EVP_PKEY_CTX_free(pctx);
            }
            ck_assert_str_eq(md[0], md[1]);
            ck_assert_str_eq(mgf1[0], mgf1[1]);
            ck_assert_str_eq(pad[0], pad[1]);
            ck_assert_str_eq(salt[0], salt[1]);
            ck_assert_int_eq(padn[0], padn[1]);
            ck_assert_int_eq(saltn[0], saltn[1]);
        }
    }
}
END_TEST

/* Integer forms of pad mode and salt length, as legacy callers send them. */
START_TEST(test_int_params_and_ctrl_api)
{
    const TKEY *k = &keys[K2048];
    unsigned char tbs[32], gsig[MAXSIG], dsig[MAXSIG];
    size_t gl = MAXSIG, dl;
    int pad = RSA_PKCS1_PSS_PADDING, salt = 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PAD_MODE, &pad),
        PSTR(OSSL_SIGNATURE_PARAM_DIGEST, "SHA256"),
        OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &salt),
        OSSL_PARAM_END
    };
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);

    ck_assert_int_eq(RAND_bytes(tbs, sizeof(tbs)), 1);
    ck_assert_int_gt(EVP_PKEY_sign_init_ex(pctx, params), 0);
    ck_assert_int_gt(EVP_PKEY_sign(pctx, gsig, &gl, tbs, sizeof(tbs)), 0);
    ck_assert_int_gt(do_sign(k->d, 0, &(SIGP){ "pss", "SHA256", NULL, "0" }, tbs, sizeof(tbs),
                             dsig, &dl), 0);
    ck_assert_mem_eq(gsig, dsig, dl);
    /* the ctrl-style helpers, translated by libcrypto */
    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_signature_md(pctx, EVP_sha256()), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 0), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, "SHA256", NULL), 0);
    gl = MAXSIG;
    ck_assert_int_gt(EVP_PKEY_sign(pctx, gsig, &gl, tbs, sizeof(tbs)), 0);
    ck_assert_mem_eq(gsig, dsig, dl);
    ck_assert_int_gt(EVP_PKEY_CTX_get_rsa_pss_saltlen(pctx, &salt), 0);
    ck_assert_int_eq(salt, 0);
    EVP_PKEY_CTX_free(pctx);
}
END_TEST

/* ---- buffers ---- */

START_TEST(test_size_query_and_short_buffer)
{
    const TKEY *k = &keys[_i];
    unsigned char tbs[32] = { 1 }, sig[MAXSIG];
    size_t ks = (size_t)EVP_PKEY_get_size(k->d), len = 0;
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();

    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    set_sigp(pctx, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, 1);
    ck_assert_int_gt(EVP_PKEY_sign(pctx, NULL, &len, tbs, sizeof(tbs)), 0);
    ck_assert_uint_eq(len, ks);
    len = ks - 1;
    ck_assert_int_le(EVP_PKEY_sign(pctx, sig, &len, tbs, sizeof(tbs)), 0);
    expect_error("sign into k-1 bytes", 1);
    len = ks;
    ck_assert_int_gt(EVP_PKEY_sign(pctx, sig, &len, tbs, sizeof(tbs)), 0);
    EVP_PKEY_CTX_free(pctx);

    ck_assert_int_gt(EVP_DigestSignInit_ex(mctx, NULL, "SHA256", libctx, GP, k->g, NULL), 0);
    ck_assert_int_eq(EVP_DigestSignUpdate(mctx, tbs, sizeof(tbs)), 1);
    len = 0;
    ck_assert_int_eq(EVP_DigestSignFinal(mctx, NULL, &len), 1);
    ck_assert_uint_eq(len, ks);
    len = ks - 1;
    ck_assert_int_ne(EVP_DigestSignFinal(mctx, sig, &len), 1);
    expect_error("digest-sign into k-1 bytes", 1);
    EVP_MD_CTX_free(mctx);

    /* verify-recover asks for the size the same way */
    pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);
    ck_assert_int_gt(EVP_PKEY_verify_recover_init(pctx), 0);
    len = 0;
    ck_assert_int_gt(EVP_PKEY_verify_recover(pctx, NULL, &len, sig, ks), 0);
    ck_assert_uint_eq(len, ks);
    EVP_PKEY_CTX_free(pctx);
}
END_TEST

/* ---- verify-recover ---- */

START_TEST(test_verify_recover_matches_default)
{
    const TKEY *k = &keys[_i];
    unsigned char tbs[32], sig[MAXSIG], grec[MAXSIG], drec[MAXSIG];
    size_t sl, gl, dl;
    int gp, withmd;

    ck_assert_int_eq(RAND_bytes(tbs, sizeof(tbs)), 1);
    ck_assert_int_gt(do_sign(k->d, 0, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, tbs,
                             sizeof(tbs), sig, &sl), 0);
    for (withmd = 0; withmd < 2; withmd++) {
        for (gp = 0; gp < 2; gp++) {
            EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, key_in(k, gp), gp ? GP : DF);
            size_t *l = gp ? &gl : &dl;

            ck_assert_int_gt(EVP_PKEY_verify_recover_init(pctx), 0);
            if (withmd)
                set_sigp(pctx, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, 1);
            *l = MAXSIG;
            ck_assert_int_gt(EVP_PKEY_verify_recover(pctx, gp ? grec : drec, l, sig, sl), 0);
            /* PSS cannot recover */
            set_sigp(pctx, &(SIGP){ "pss", NULL, NULL, NULL }, 0);
            if (gp)
                expect_error("PSS verify-recover", 1);
            ERR_clear_error();
            EVP_PKEY_CTX_free(pctx);
        }
        ck_assert_uint_eq(gl, dl);
        ck_assert_mem_eq(grec, drec, gl);
        /* with the digest set the digest comes back, else the DigestInfo */
        ck_assert_uint_eq(gl, withmd ? 32 : 51);
        ck_assert_mem_eq(grec + gl - 32, tbs, 32);
    }
}
END_TEST

/* ---- bad input ---- */

static void expect_set_fails(const TKEY *k, const char *what, const OSSL_PARAM *params)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);

    ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
    ck_assert_msg(EVP_PKEY_CTX_set_params(pctx, params) <= 0, "%s was accepted", what);
    expect_error(what, 1);
    EVP_PKEY_CTX_free(pctx);
}

static void expect_sign_fails(const TKEY *k, const char *what, const SIGP *sp, size_t tbslen)
{
    unsigned char tbs[MAXSIG] = { 0 }, sig[MAXSIG];
    size_t sl;

    ck_assert_msg(do_sign(k->g, 1, sp, tbs, tbslen, sig, &sl) <= 0, "%s signed", what);
    expect_error(what, 1);
}

START_TEST(test_bad_parameters_give_errors)
{
    const TKEY *k = &keys[K2048];
    int i100 = -100, i5 = -5, imax = INT_MAX, ibad = 1234, x931 = RSA_X931_PADDING, pss = RSA_PKCS1_PSS_PADDING;
    struct {
        const char *what;
        OSSL_PARAM p[3];
    } cases[] = {
        { "saltlen int -100", { OSSL_PARAM_int("pad-mode", &pss), OSSL_PARAM_int("saltlen", &i100), OSSL_PARAM_END } },
        { "saltlen -100", { PSTR("pad-mode", "pss"), PSTR("saltlen", "-100"), OSSL_PARAM_END } },
        { "saltlen -5", { PSTR("pad-mode", "pss"), PSTR("saltlen", "-5"), OSSL_PARAM_END } },
        { "saltlen int -5", { OSSL_PARAM_int("pad-mode", &pss), OSSL_PARAM_int("saltlen", &i5), OSSL_PARAM_END } },
        { "saltlen auto-digestmaxx", { PSTR("pad-mode", "pss"), PSTR("saltlen", "auto-digestmaxx"), OSSL_PARAM_END } },
        { "saltlen junk", { PSTR("pad-mode", "pss"), PSTR("saltlen", "12abc"), OSSL_PARAM_END } },
        { "saltlen empty", { PSTR("pad-mode", "pss"), PSTR("saltlen", ""), OSSL_PARAM_END } },
        { "saltlen 1e30", { PSTR("pad-mode", "pss"), PSTR("saltlen", "1000000000000000000000000000000"), OSSL_PARAM_END } },
        { "saltlen without PSS", { PSTR("saltlen", "20"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "mgf1 without PSS", { PSTR("mgf1-digest", "SHA256"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "digest nonsense", { PSTR("digest", "nonsense"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "digest SHAKE256", { PSTR("digest", "SHAKE256"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "digest name overlong", { PSTR("digest", "SHA256SHA256SHA256SHA256SHA256SHA256SHA256SHA256SHA256"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "mgf1 nonsense", { PSTR("pad-mode", "pss"), PSTR("mgf1-digest", "nonsense"), OSSL_PARAM_END } },
        { "pad nonsense", { PSTR("pad-mode", "nonsense"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "pad x931", { PSTR("pad-mode", "x931"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "pad x931 int", { OSSL_PARAM_int("pad-mode", &x931), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "pad oaep", { PSTR("pad-mode", "oaep"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "pad oeap", { PSTR("pad-mode", "oeap"), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "pad int 1234", { OSSL_PARAM_int("pad-mode", &ibad), OSSL_PARAM_END, OSSL_PARAM_END } },
        { "none with a digest", { PSTR("pad-mode", "none"), PSTR("digest", "SHA256"), OSSL_PARAM_END } },
        { "digest properties nobody has", { PSTR("digest", "SHA256"), PSTR("properties", "provider=nowhere"), OSSL_PARAM_END } },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_set_fails(k, cases[i].what, cases[i].p);
    /* none then a digest in a second call */
    {
        EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);

        ck_assert_int_gt(EVP_PKEY_sign_init(pctx), 0);
        set_sigp(pctx, &(SIGP){ "none", NULL, NULL, NULL }, 1);
        set_sigp(pctx, &(SIGP){ NULL, "SHA256", NULL, NULL }, 0);
        expect_error("digest after none", 1);
        EVP_PKEY_CTX_free(pctx);
    }
    /* accepted at set time, refused when signing */
    {
        OSSL_PARAM p[] = { OSSL_PARAM_int("pad-mode", &pss), OSSL_PARAM_int("saltlen", &imax),
                           OSSL_PARAM_END };
        EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);
        unsigned char tbs[20] = { 0 }, sig[MAXSIG];
        size_t sl = sizeof(sig);

        ck_assert_int_gt(EVP_PKEY_sign_init_ex(pctx, p), 0);
        ck_assert_int_le(EVP_PKEY_sign(pctx, sig, &sl, tbs, sizeof(tbs)), 0);
        expect_error("saltlen INT_MAX", 1);
        EVP_PKEY_CTX_free(pctx);
    }
    /* digest length must match the digest */
    expect_sign_fails(k, "SHA256 with 31 bytes", &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, 31);
    expect_sign_fails(k, "SHA256 with 33 bytes", &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, 33);
    expect_sign_fails(k, "PSS SHA256 with 0 bytes", &(SIGP){ "pss", "SHA256", NULL, NULL }, 0);
    expect_sign_fails(k, "MD5-SHA1 with 35 bytes", &(SIGP){ "pkcs1", "MD5-SHA1", NULL, NULL }, 35);
    /* PSS salt at and past the limit: 256 - 32 - 2 = 222 for SHA-256 */
    expect_sign_fails(k, "PSS salt 223", &(SIGP){ "pss", "SHA256", NULL, "223" }, 32);
    {
        unsigned char tbs[32] = { 7 };

        cross_check(k, &(SIGP){ "pss", "SHA256", NULL, "222" },
                    &(SIGP){ "pss", "SHA256", NULL, "222" }, tbs, 32, 0);
    }
}
END_TEST

/* Digests too big for small keys. */
START_TEST(test_small_keys_and_big_digests)
{
    const TKEY *k1024 = &keys[K1024], *k512 = &keys[K512], *k1025 = &keys[K1025];
    unsigned char tbs[64] = { 3 };
    size_t i;

    /* 1024 bits, SHA-512: 128 - 64 - 2 = 62 bytes of salt at most */
    cross_check(k1024, &(SIGP){ "pss", "SHA512", NULL, "max" },
                &(SIGP){ "pss", "SHA512", NULL, "auto" }, tbs, 64, 0);
    cross_check(k1024, &(SIGP){ "pss", "SHA512", NULL, "62" },
                &(SIGP){ "pss", "SHA512", NULL, "62" }, tbs, 64, 0);
    expect_sign_fails(k1024, "1024-bit PSS SHA-512 salt 63", &(SIGP){ "pss", "SHA512", NULL, "63" }, 64);
    expect_sign_fails(k1024, "1024-bit PSS SHA-512 salt 1000", &(SIGP){ "pss", "SHA512", NULL, "1000" }, 64);
    /* 512 bits: a SHA-512 DigestInfo (83 bytes) and PSS (66 bytes) do not fit */
    expect_sign_fails(k512, "512-bit PKCS1 SHA-512", &(SIGP){ "pkcs1", "SHA512", NULL, NULL }, 64);
    expect_sign_fails(k512, "512-bit PSS SHA-512", &(SIGP){ "pss", "SHA512", NULL, "0" }, 64);
    expect_sign_fails(k512, "512-bit PSS SHA-384 max", &(SIGP){ "pss", "SHA384", NULL, "15" }, 48);
    cross_check(k512, &(SIGP){ "pss", "SHA384", NULL, "max" },
                &(SIGP){ "pss", "SHA384", NULL, "auto" }, tbs, 48, 0);
    cross_check(k512, &(SIGP){ "pkcs1", "SHA256", NULL, NULL },
                &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, tbs, 32, 1);
    /* 1025 bits: the PSS encoding is one byte shorter than the modulus, so
     * SHA-512 with a 64-byte salt no longer fits (128 - 64 - 2 < 64) */
    expect_sign_fails(k1025, "1025-bit PSS SHA-512 salt digest", &(SIGP){ "pss", "SHA512", NULL, "digest" }, 64);
    for (i = 0; i < 8; i++) {
        static const char *const s[] = { "0", "max", "digest", "auto" };

        ck_assert_int_eq(RAND_bytes(tbs, sizeof(tbs)), 1);
        cross_check(k1025, &(SIGP){ "pss", i & 1 ? "SHA384" : "SHA256", NULL, s[i / 2] },
                    &(SIGP){ "pss", i & 1 ? "SHA384" : "SHA256", NULL, "auto" }, tbs,
                    i & 1 ? 48 : 32, i / 2 == 0);
        cross_check(k1025, &(SIGP){ "pkcs1", "SHA256", NULL, NULL },
                    &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, tbs, 32, 1);
    }
}
END_TEST

START_TEST(test_public_key_cannot_sign)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", GP);
    EVP_PKEY *pub = NULL;
    unsigned char tbs[32] = { 0 }, sig[MAXSIG];
    size_t sl;

    ck_assert_int_gt(EVP_PKEY_todata(keys[K2048].d, EVP_PKEY_PUBLIC_KEY, &params), 0);
    ck_assert_int_gt(EVP_PKEY_fromdata_init(pctx), 0);
    ck_assert_int_gt(EVP_PKEY_fromdata(pctx, &pub, EVP_PKEY_PUBLIC_KEY, params), 0);
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    pctx = EVP_PKEY_CTX_new_from_pkey(libctx, pub, GP);
    ck_assert_int_le(EVP_PKEY_sign_init(pctx), 0);
    ck_assert_ptr_nonnull(strstr(ERR_reason_error_string(ERR_peek_last_error()), "private key"));
    ERR_clear_error();
    EVP_PKEY_CTX_free(pctx);
    /* but it verifies */
    ck_assert_int_gt(do_sign(keys[K2048].d, 0, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, tbs, 32,
                             sig, &sl), 0);
    ck_assert_int_eq(do_verify(pub, 1, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, sig, sl, tbs, 32), 1);
    EVP_PKEY_free(pub);
}
END_TEST

START_TEST(test_garbage_signatures_do_not_verify)
{
    const TKEY *k = &keys[K2048];
    unsigned char tbs[32] = { 9 }, sig[MAXSIG], rec[MAXSIG];
    size_t ks = (size_t)EVP_PKEY_get_size(k->d), lens[] = { 0, 1, ks - 1, ks + 1, ks }, i, rl;
    static const SIGP sps[] = { { "pkcs1", "SHA256", NULL, NULL }, { "pss", "SHA256", NULL, "auto" },
                                { "pkcs1", NULL, NULL, NULL }, { "none", NULL, NULL, NULL } };
    size_t s;
    EVP_PKEY_CTX *pctx;

    for (s = 0; s < sizeof(sps) / sizeof(sps[0]); s++) {
        for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            ck_assert_int_eq(RAND_bytes(sig, sizeof(sig)), 1);
            ck_assert_int_ne(do_verify(k->g, 1, &sps[s], sig, lens[i], tbs, 32), 1);
            memset(sig, 0xff, sizeof(sig));
            ck_assert_int_ne(do_verify(k->g, 1, &sps[s], sig, lens[i], tbs, 32), 1);
        }
    }
    pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);
    ck_assert_int_gt(EVP_PKEY_verify_recover_init(pctx), 0);
    rl = sizeof(rec);
    ck_assert_int_le(EVP_PKEY_verify_recover(pctx, rec, &rl, sig, ks), 0);
    ERR_clear_error();
    EVP_PKEY_CTX_free(pctx);
}
END_TEST

/* Digest changes are refused while a digest-sign is hashing. */
START_TEST(test_digest_fixed_during_digest_sign)
{
    const TKEY *k = &keys[K2048];
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    unsigned char sig[MAXSIG], msg[10] = { 1 };
    size_t sl = sizeof(sig);

    ck_assert_int_gt(EVP_DigestSignInit_ex(mctx, &pctx, "SHA256", libctx, GP, k->g, NULL), 0);
    ck_assert_int_eq(EVP_DigestSignUpdate(mctx, msg, sizeof(msg)), 1);
    set_sigp(pctx, &(SIGP){ NULL, "SHA384", NULL, NULL }, 0);
    expect_error("digest change mid digest-sign", 1);
    set_sigp(pctx, &(SIGP){ NULL, "SHA256", NULL, NULL }, 1);  /* restating is fine */
    ck_assert_int_eq(EVP_DigestSignFinal(mctx, sig, &sl), 1);
    ck_assert_int_eq(digest_verify(k->d, 0, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, msg,
                                   sizeof(msg), 1, sig, sl), 1);
    /* no digest named: the key's default digest (SHA-256) */
    ck_assert_int_gt(EVP_DigestSignInit_ex(mctx, NULL, NULL, libctx, GP, k->g, NULL), 0);
    sl = sizeof(sig);
    ck_assert_int_eq(EVP_DigestSign(mctx, sig, &sl, msg, sizeof(msg)), 1);
    ck_assert_int_eq(digest_verify(k->d, 0, &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, msg,
                                   sizeof(msg), 1, sig, sl), 1);
    /* a nonsense digest at digest-sign init */
    ck_assert_int_le(EVP_DigestSignInit_ex(mctx, NULL, "nonsense", libctx, GP, k->g, NULL), 0);
    ERR_clear_error();
    EVP_MD_CTX_free(mctx);
}
END_TEST

/* Digest parameters pass through the signature context to its digest. */
START_TEST(test_md_params_pass_through)
{
    const TKEY *k = &keys[K2048];
    EVP_MD_CTX *mctx = EVP_MD_CTX_new();
    const OSSL_PARAM *settable;
    unsigned char ms[48] = { 5 }, sig[MAXSIG];
    size_t sl = sizeof(sig);
    OSSL_PARAM set[] = {
        OSSL_PARAM_octet_string(OSSL_DIGEST_PARAM_SSL3_MS, ms, sizeof(ms)),
        OSSL_PARAM_END
    };

    /* SHA-1 is the digest with a settable parameter (SSLv3's master secret) */
    ck_assert_int_gt(EVP_DigestSignInit_ex(mctx, NULL, "SHA1", libctx, GP, k->g, NULL), 0);
    ck_assert_ptr_nonnull(settable = EVP_MD_CTX_settable_params(mctx));
    ck_assert_ptr_nonnull(OSSL_PARAM_locate_const(settable, OSSL_DIGEST_PARAM_SSL3_MS));
    ck_assert_int_eq(EVP_MD_CTX_set_params(mctx, set), 1);
    ck_assert_int_eq(EVP_DigestSignUpdate(mctx, ms, 10), 1);
    ck_assert_int_eq(EVP_DigestSignFinal(mctx, sig, &sl), 1);
    EVP_MD_CTX_free(mctx);
}
END_TEST

/* Multi-prime keys sign through the fallback and still match default. */
START_TEST(test_multi_prime_key)
{
    EVP_PKEY_CTX *gctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", DF);
    TKEY k = { 2048, NULL, NULL };
    unsigned char tbs[32];

    ck_assert_int_gt(EVP_PKEY_keygen_init(gctx), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_rsa_keygen_bits(gctx, 2048), 0);
    ck_assert_int_gt(EVP_PKEY_CTX_set_rsa_keygen_primes(gctx, 3), 0);
    ck_assert_int_gt(EVP_PKEY_generate(gctx, &k.d), 0);
    EVP_PKEY_CTX_free(gctx);
    k.g = tu_to_gpursa(libctx, k.d);
    ck_assert_int_eq(RAND_bytes(tbs, sizeof(tbs)), 1);
    cross_check(&k, &(SIGP){ "pkcs1", "SHA256", NULL, NULL },
                &(SIGP){ "pkcs1", "SHA256", NULL, NULL }, tbs, 32, 1);
    cross_check(&k, &(SIGP){ "pss", "SHA256", NULL, "digest" },
                &(SIGP){ "pss", "SHA256", NULL, "auto" }, tbs, 32, 0);
    EVP_PKEY_free(k.d);
    EVP_PKEY_free(k.g);
}
END_TEST

#ifdef OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT
/* ---- composite algorithms (OpenSSL 3.4+): "RSA-SHA256" fetched as a signature ---- */

/* name, digest: every composite RSA algorithm gpursa offers */
static const char *const sigalgs[][2] = {
    { "RSA-SHA1", "SHA1" }, { "RSA-SHA224", "SHA224" }, { "RSA-SHA2-256", "SHA256" },
    { "sha384WithRSAEncryption", "SHA384" }, { "RSA-SHA512", "SHA512" },
    { "RSA-SHA512-224", "SHA512-224" }, { "RSA-SHA2-512/256", "SHA512-256" },
    { "RSA-SHA3-224", "SHA3-224" }, { "RSA-SHA3-256", "SHA3-256" },
    { "RSA-SHA3-384", "SHA3-384" }, { "1.2.840.113549.1.1.11", "SHA256" },
    { "RSA-SHA3-512", "SHA3-512" }, { "RSA-RIPEMD160", "RIPEMD160" },
};

/* Signs |msg| (or, message == 0, its digest |tbs|) with composite |alg| in
 * gpursa (gp) or default, in a single call or, streaming, in two updates. */
static size_t alg_sign(const TKEY *k, int gp, const char *alg, int message, int streaming,
                       const unsigned char *in, size_t inlen, unsigned char *sig)
{
    EVP_SIGNATURE *s = EVP_SIGNATURE_fetch(libctx, alg, gp ? GP : DF);
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, key_in(k, gp), gp ? GP : DF);
    size_t sl = MAXSIG;

    ck_assert_msg(s != NULL, "fetch %s from %s", alg, gp ? "gpursa" : "default");
    ck_assert_str_eq(OSSL_PROVIDER_get0_name(EVP_SIGNATURE_get0_provider(s)),
                     gp ? "gpursa" : "default");
    if (message) {
        ck_assert_int_gt(EVP_PKEY_sign_message_init(pctx, s, NULL), 0);
        if (streaming) {
            ck_assert_int_gt(EVP_PKEY_sign_message_update(pctx, in, inlen / 2), 0);
            ck_assert_int_gt(EVP_PKEY_sign_message_update(pctx, in + inlen / 2,
                                                          inlen - inlen / 2), 0);
            ck_assert_int_gt(EVP_PKEY_sign_message_final(pctx, sig, &sl), 0);
        } else {
            ck_assert_int_gt(EVP_PKEY_sign(pctx, sig, &sl, in, inlen), 0);
        }
    } else {
        ck_assert_int_gt(EVP_PKEY_sign_init_ex2(pctx, s, NULL), 0);
        ck_assert_msg(EVP_PKEY_sign(pctx, sig, &sl, in, inlen) > 0, "%s sign: %s", alg,
                      ERR_error_string(ERR_peek_last_error(), NULL));
    }
    EVP_PKEY_CTX_free(pctx);
    EVP_SIGNATURE_free(s);
    return sl;
}

/* Verifies with composite |alg|: the message through verify_message_final
 * (signature set as a parameter), or the digest through EVP_PKEY_verify. */
static int alg_verify(const TKEY *k, int gp, const char *alg, int message,
                      const unsigned char *in, size_t inlen,
                      const unsigned char *sig, size_t sl)
{
    EVP_SIGNATURE *s = EVP_SIGNATURE_fetch(libctx, alg, gp ? GP : DF);
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, key_in(k, gp), gp ? GP : DF);
    int r;

    ck_assert_ptr_nonnull(s);
    if (message) {
        ck_assert_int_gt(EVP_PKEY_verify_message_init(pctx, s, NULL), 0);
        ck_assert_int_gt(EVP_PKEY_CTX_set_signature(pctx, sig, sl), 0);
        ck_assert_int_gt(EVP_PKEY_verify_message_update(pctx, in, inlen), 0);
        r = EVP_PKEY_verify_message_final(pctx);
    } else {
        ck_assert_int_gt(EVP_PKEY_verify_init_ex2(pctx, s, NULL), 0);
        r = EVP_PKEY_verify(pctx, sig, sl, in, inlen);
    }
    EVP_PKEY_CTX_free(pctx);
    EVP_SIGNATURE_free(s);
    ERR_clear_error();
    return r;
}

/*
 * Every composite algorithm in gpursa: signs the message (one-shot and
 * streaming) and its digest, byte-identical to the default provider's
 * PKCS#1 v1.5 signature; each side verifies the other's; a flipped bit
 * fails; and gpursa did the private operations.
 */
START_TEST(test_composite_sigalgs_cross_and_identical)
{
    const TKEY *k = &keys[_i];
    unsigned char msg[300], tbs[EVP_MAX_MD_SIZE], gsig[MAXSIG], dsig[MAXSIG];
    size_t i, mlen, tlen, gl, dl, n = sizeof(sigalgs) / sizeof(sigalgs[0]);
    uint64_t ops = gpursa_private_ops();
    int message;

    for (i = 0; i < n; i++) {
        mlen = random_message(msg, sizeof(msg));
        tlen = hash(sigalgs[i][1], msg, mlen, tbs);
        for (message = 0; message < 2; message++) {
            const unsigned char *in = message ? msg : tbs;
            size_t inlen = message ? mlen : tlen;

            gl = alg_sign(k, 1, sigalgs[i][0], message, 0, in, inlen, gsig);
            dl = alg_sign(k, 0, sigalgs[i][0], message, 0, in, inlen, dsig);
            ck_assert_uint_eq(gl, dl);
            ck_assert_msg(memcmp(gsig, dsig, gl) == 0, "%s %s: signatures differ",
                          sigalgs[i][0], message ? "message" : "digest");
            ck_assert_int_eq(alg_verify(k, 0, sigalgs[i][0], message, in, inlen, gsig, gl), 1);
            ck_assert_int_eq(alg_verify(k, 1, sigalgs[i][0], message, in, inlen, dsig, dl), 1);
            gsig[gl / 3] ^= 0x01;
            ck_assert_int_ne(alg_verify(k, 1, sigalgs[i][0], message, in, inlen, gsig, gl), 1);
            ck_assert_int_ne(alg_verify(k, 0, sigalgs[i][0], message, in, inlen, gsig, gl), 1);
        }
        gl = alg_sign(k, 1, sigalgs[i][0], 1, 1, msg, mlen, gsig);
        ck_assert_mem_eq(gsig, dsig, gl);
        /* the plain RSA signature with that digest is the same signature */
        ck_assert_int_gt(do_sign(k->d, 0, &(SIGP){ "pkcs1", sigalgs[i][1], NULL, NULL }, tbs,
                                 tlen, dsig, &dl), 0);
        ck_assert_mem_eq(gsig, dsig, gl);
    }
    ck_assert_uint_ge(gpursa_private_ops() - ops, 3 * n);
}
END_TEST

/* A composite algorithm's digest and padding are fixed: parameters that would
 * change them are refused with gpursa's error, and a wrong digest length too. */
START_TEST(test_composite_sigalgs_refuse_params)
{
    const TKEY *k = &keys[K2048];
    EVP_SIGNATURE *s = EVP_SIGNATURE_fetch(libctx, "RSA-SHA256", GP);
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(libctx, k->g, GP);
    OSSL_PARAM pss[] = { PSTR("pad-mode", "pss"), OSSL_PARAM_END };
    OSSL_PARAM md[] = { PSTR("digest", "SHA384"), OSSL_PARAM_END };
    unsigned char tbs[33] = { 0 }, sig[MAXSIG];
    size_t sl = sizeof(sig);

    ck_assert_ptr_nonnull(s);
    ck_assert_int_le(EVP_PKEY_sign_init_ex2(pctx, s, pss), 0);
    expect_error("RSA-SHA256 with pad-mode pss", 1);
    ck_assert_int_gt(EVP_PKEY_sign_init_ex2(pctx, s, NULL), 0);
    ck_assert_int_le(EVP_PKEY_CTX_set_params(pctx, md), 0);
    expect_error("RSA-SHA256 with digest SHA384", 1);
    ck_assert_int_le(EVP_PKEY_sign(pctx, sig, &sl, tbs, 33), 0);
    expect_error("RSA-SHA256 with a 33-byte digest", 1);
    /* verify_message_final without a signature */
    ck_assert_int_gt(EVP_PKEY_verify_message_init(pctx, s, NULL), 0);
    ck_assert_int_gt(EVP_PKEY_verify_message_update(pctx, tbs, 5), 0);
    ck_assert_int_le(EVP_PKEY_verify_message_final(pctx), 0);
    expect_error("verify_message_final without a signature", 0);
    EVP_PKEY_CTX_free(pctx);
    EVP_SIGNATURE_free(s);
}
END_TEST
#endif /* OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT */

Suite *make_signature_suite(void)
{
    Suite *s = suite_create("signature");
    TCase *tc;

#define ADD(fn, loop)                                  \
    tc = tcase_create(#fn);                            \
    tcase_set_timeout(tc, 600);                        \
    if (loop)                                          \
        tcase_add_loop_test(tc, fn, 0, nmain);         \
    else                                               \
        tcase_add_test(tc, fn);                        \
    suite_add_tcase(s, tc)

    ADD(test_pkcs1_every_digest_cross_and_identical, 1);
    ADD(test_pss_every_digest_and_saltlen_cross, 1);
    ADD(test_pss_auto_digestmax_and_default_salt, 1);
    ADD(test_pss_mgf1_digests_cross, 1);
    ADD(test_pkcs1_raw_input_identical, 1);
    ADD(test_no_padding_identical_and_bounds, 1);
    ADD(test_digest_sign_verify_oneshot_and_streaming, 1);
    ADD(test_ctx_dup_mid_stream, 0);
    ADD(test_pkey_ctx_dup_keeps_params, 0);
    ADD(test_algorithm_id_matches_default, 1);
    ADD(test_get_params_match_default, 0);
    ADD(test_int_params_and_ctrl_api, 0);
    ADD(test_size_query_and_short_buffer, 1);
    ADD(test_verify_recover_matches_default, 1);
    ADD(test_bad_parameters_give_errors, 0);
    ADD(test_small_keys_and_big_digests, 0);
    ADD(test_public_key_cannot_sign, 0);
    ADD(test_garbage_signatures_do_not_verify, 0);
    ADD(test_digest_fixed_during_digest_sign, 0);
    ADD(test_md_params_pass_through, 0);
    ADD(test_multi_prime_key, 0);
#ifdef OSSL_FUNC_SIGNATURE_SIGN_MESSAGE_INIT
    ADD(test_composite_sigalgs_cross_and_identical, 1);
    ADD(test_composite_sigalgs_refuse_params, 0);
#endif
#undef ADD
    return s;
}

/* Quick runs leave out the main sizes past the first. */
static int key_wanted(size_t i)
{
    return i < (size_t)nmain || i >= NMAIN;
}

int main(void)
{
    if (getenv("GPURSA_TEST_QUICK") != NULL && strcmp(getenv("GPURSA_TEST_QUICK"), "1") == 0)
        nmain = 1;
    return tu_run_with_keys(make_signature_suite, CK_ENV, &libctx, keys, NKEYS, key_wanted);
}
