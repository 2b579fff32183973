/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz RSA signing with gpursa under arbitrary OSSL_PARAM values: padding
 * mode, digest and MGF1 digest names, PSS salt length, property strings,
 * each given as any type and size, through EVP_PKEY_sign (prehashed input)
 * and EVP_DigestSign (message). A signature gpursa returns must verify under
 * OpenSSL's default provider with the same parameters, and a deterministic
 * one (PKCS#1 v1.5, none, X9.31) must equal the default's byte for byte.
 *
 * Input: key index; flags (bit0 host backend, bit1 DigestSign, bit2 params
 * after init); digest index for DigestSign (0xff: none); the parameters
 * (see fuzz_params.h); the rest is the message or digest to sign.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "fuzz_common.h"
#include "fuzz_params.h"

static const char *const sign_param_names[] = {
    OSSL_SIGNATURE_PARAM_PAD_MODE, OSSL_SIGNATURE_PARAM_DIGEST,
    OSSL_SIGNATURE_PARAM_PSS_SALTLEN, OSSL_SIGNATURE_PARAM_MGF1_DIGEST,
    OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES, OSSL_SIGNATURE_PARAM_PROPERTIES,
    OSSL_SIGNATURE_PARAM_DIGEST_SIZE, "no-such-param",
};

static const char *const sign_words[] = {
    "pss", "pkcs1", "none", "x931", "oaep", "digest", "max", "auto",
    "auto-digestmax", "-1", "-2", "-3", "-4", "0", "20", "32", "64", "94", "222", "4096",
    "2147483647", "-2147483648", "99999999999999999999", "provider=default",
    "provider=gpursa", "fips=yes", "?provider=gpursa", "provider=", "=", "",
    "SHA1", "SHA256", "SHA2-256", "SHA384", "SHA512", "SHA224", "SHA3-256", "MD5",
    "MD5-SHA1", "SHAKE128", "SHA512-256", "NOSUCH",
};

typedef struct {
    int key, backend, digest_sign, late_params;
    const char *mdname;
    fz_params fp;
    const uint8_t *msg;
    size_t msg_len;
} sign_case;

static int sig_init(EVP_PKEY_CTX **pctx, EVP_MD_CTX **mctx, OSSL_LIB_CTX *libctx,
                    EVP_PKEY *pkey, const char *propq, sign_case *c, int verify)
{
    OSSL_PARAM *params = c->fp.params;
    int ok;

    *pctx = NULL;
    *mctx = NULL;
    if (c->digest_sign) {
        if ((*mctx = EVP_MD_CTX_new()) == NULL)
            return 0;
        ok = verify
            ? EVP_DigestVerifyInit_ex(*mctx, pctx, c->mdname, libctx, propq, pkey,
                                      c->late_params ? NULL : params) > 0
            : EVP_DigestSignInit_ex(*mctx, pctx, c->mdname, libctx, propq, pkey,
                                    c->late_params ? NULL : params) > 0;
        return ok && (!c->late_params || EVP_PKEY_CTX_set_params(*pctx, params) > 0);
    }
    if ((*pctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, propq)) == NULL)
        return 0;
    if (c->late_params)
        return (verify ? EVP_PKEY_verify_init(*pctx) : EVP_PKEY_sign_init(*pctx)) > 0
            && EVP_PKEY_CTX_set_params(*pctx, params) > 0;
    return (verify ? EVP_PKEY_verify_init_ex(*pctx, params)
                   : EVP_PKEY_sign_init_ex(*pctx, params)) > 0;
}

static void sig_free(EVP_PKEY_CTX *pctx, EVP_MD_CTX *mctx)
{
    if (mctx != NULL)
        EVP_MD_CTX_free(mctx);  /* owns pctx */
    else
        EVP_PKEY_CTX_free(pctx);
}

/* Sign with the case's parameters; returns a malloc'd signature or NULL. */
static unsigned char *do_sign(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey, const char *propq,
                              sign_case *c, size_t *siglen, int *init_ok, int is_gpursa)
{
    EVP_PKEY_CTX *pctx;
    EVP_MD_CTX *mctx;
    unsigned char *sig = NULL;
    size_t cap = 0;
    int ok;

    *init_ok = sig_init(&pctx, &mctx, libctx, pkey, propq, c, 0);
    if (!*init_ok) {
        if (is_gpursa)
            fz_expect_error("gpursa sign init");
        goto end;
    }
    ok = mctx != NULL ? EVP_DigestSign(mctx, NULL, &cap, c->msg, c->msg_len) > 0
                      : EVP_PKEY_sign(pctx, NULL, &cap, c->msg, c->msg_len) > 0;
    if (!ok) {
        if (is_gpursa)
            fz_expect_error("gpursa signature size query");
        goto end;
    }
    if (cap == 0 || cap > 4096)
        fz_fail("signature size query said %zu", cap);
    if ((sig = OPENSSL_malloc(cap)) == NULL)
        fz_fail("malloc");
    *siglen = cap;
    ok = mctx != NULL ? EVP_DigestSign(mctx, sig, siglen, c->msg, c->msg_len) > 0
                      : EVP_PKEY_sign(pctx, sig, siglen, c->msg, c->msg_len) > 0;
    if (!ok) {
        if (is_gpursa)
            fz_expect_error("gpursa sign");
        OPENSSL_free(sig);
        sig = NULL;
    } else if (*siglen > cap) {
        fz_fail("sign wrote %zu bytes into a %zu-byte buffer", *siglen, cap);
    }
end:
    sig_free(pctx, mctx);
    ERR_clear_error();
    return sig;
}

static int default_verify(sign_case *c, const unsigned char *sig, size_t siglen)
{
    EVP_PKEY_CTX *pctx;
    EVP_MD_CTX *mctx;
    int ok = sig_init(&pctx, &mctx, fz_default_libctx(), fz_default_key(c->key), NULL, c, 1);

    if (ok)
        ok = mctx != NULL ? EVP_DigestVerify(mctx, sig, siglen, c->msg, c->msg_len) == 1
                          : EVP_PKEY_verify(pctx, sig, siglen, c->msg, c->msg_len) == 1;
    sig_free(pctx, mctx);
    ERR_clear_error();
    return ok;
}

/* gpursa reads OpenSSL 3.1's PSS salt mode "auto-digestmax" on any version
 * (README, "Supported platforms"); a 3.0 default provider reads that word as
 * the number 0. On 3.0 a case that sets it is therefore verified as its
 * meaning, "auto" (any salt length), verifies: 1 if the case sets it there and
 * gpursa's signature verifies so. */
static int verifies_as_auto_digestmax(sign_case *c, const unsigned char *sig, size_t siglen)
{
    static char auto_word[] = OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO;
    sign_case as = *c;
    int found = 0;
    size_t i;

    if (OpenSSL_version_num() >= 0x30100000L)
        return 0;
    for (i = 0; i < as.fp.n; i++) {
        OSSL_PARAM *p = &as.fp.params[i];
        const char *v = p->data_type == OSSL_PARAM_UTF8_STRING ? p->data
                        : p->data_type == OSSL_PARAM_UTF8_PTR ? *(const char **)p->data : NULL;

        if (strcmp(p->key, OSSL_SIGNATURE_PARAM_PSS_SALTLEN) == 0 && v != NULL
            && strcmp(v, "auto-digestmax") == 0) {
            *p = OSSL_PARAM_construct_utf8_string(p->key, auto_word, 0);
            found = 1;
        }
    }
    return found && default_verify(&as, sig, siglen);
}

static void check_case(sign_case *c)
{
    unsigned char *gsig, *dsig;
    size_t glen = 0, dlen = 0;
    int g_init, d_init;

    gsig = do_sign(fz_gpursa_libctx(c->backend), fz_gpursa_key(c->backend, c->key),
                   "provider=gpursa", c, &glen, &g_init, 1);
    if (gsig == NULL)
        return;
    dsig = do_sign(fz_default_libctx(), fz_default_key(c->key), NULL, c, &dlen, &d_init, 0);
    if (!default_verify(c, gsig, glen)) {
        /* Only a combination the default provider signs and verifies itself
         * is a fair test: then gpursa's signature must verify too. */
        if (dsig != NULL && default_verify(c, dsig, dlen)
            && !verifies_as_auto_digestmax(c, gsig, glen))
            fz_fail("gpursa signature does not verify (default's does)");
    } else if (dsig != NULL && default_verify(c, dsig, dlen) && glen == dlen
               && memcmp(gsig, dsig, glen) != 0) {
        /* PSS is randomised: two valid signatures may differ. Anything else is
         * deterministic, so must be identical. Verify recovers the pad mode. */
        EVP_PKEY_CTX *pctx;
        EVP_MD_CTX *mctx;
        int pad = 0;

        if (sig_init(&pctx, &mctx, fz_default_libctx(), fz_default_key(c->key), NULL, c, 1)
            && EVP_PKEY_CTX_get_rsa_padding(pctx, &pad) > 0 && pad != RSA_PKCS1_PSS_PADDING)
            fz_fail("deterministic padding %d: gpursa and default signatures differ", pad);
        sig_free(pctx, mctx);
    }
    ERR_clear_error();
    OPENSSL_free(gsig);
    OPENSSL_free(dsig);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = { data, size };
    sign_case c;
    uint8_t flags, md;

    if (size < 4)
        return 0;
    memset(&c, 0, sizeof(c));
    c.key = fz_u8(&in) % FZ_NKEYS;
    flags = fz_u8(&in);
    c.backend = flags & 1;
    c.digest_sign = (flags >> 1) & 1;
    c.late_params = (flags >> 2) & 1;
    md = fz_u8(&in);
    c.mdname = md == 0xff ? NULL : fz_digest_names[md % fz_n_digest_names];
    fz_params_read(&c.fp, &in, sign_param_names,
                   sizeof(sign_param_names) / sizeof(sign_param_names[0]),
                   sign_words, sizeof(sign_words) / sizeof(sign_words[0]));
    c.msg = fz_bytes(&in, in.left, &c.msg_len);
    check_case(&c);
    fz_params_free(&c.fp);
    return 0;
}
