/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa RSA key management through EVP: import/export round trips, bad
 * keys refused with gpursa errors, multi-prime keys, match/eq against the
 * default provider, dup, key parameters, key generation, validation and
 * encoding. The default provider is the reference throughout.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/encoder.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "testutil.h"
#include "provider/gpursa_prov.h"

static OSSL_LIB_CTX *libctx;

static const int sizes[] = { 1024, 2048, 3072, 4096 };

static const char *const rsa_numbers[] = {
    OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_D,
    OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_FACTOR3,
    OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_EXPONENT3,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT1, OSSL_PKEY_PARAM_RSA_COEFFICIENT2,
};
#define N_NUMBERS (sizeof(rsa_numbers) / sizeof(rsa_numbers[0]))


/* Every RSA number of a and b (as exported) is the same. */
static void assert_same_numbers(const EVP_PKEY *a, const EVP_PKEY *b, int selection)
{
    OSSL_PARAM *pa = NULL, *pb = NULL;
    size_t i;

    ck_assert_int_eq(EVP_PKEY_todata(a, selection, &pa), 1);
    ck_assert_int_eq(EVP_PKEY_todata(b, selection, &pb), 1);
    for (i = 0; i < N_NUMBERS; i++)
        ck_assert_msg(tu_bn_param_eq(pa, pb, rsa_numbers[i]), "%s differs", rsa_numbers[i]);
    OSSL_PARAM_free(pa);
    OSSL_PARAM_free(pb);
}

/*
 * Import base's parameters into gpursa with numbers changed: each of the
 * nmod names[i] replaced by values[i], or dropped when that is NULL; a name
 * base lacks is added. Returns the key or NULL.
 */
static EVP_PKEY *import_changed(const OSSL_PARAM *base, int selection, size_t nmod,
                                const char *const names[], const BIGNUM *const values[])
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params;
    EVP_PKEY_CTX *ctx;
    EVP_PKEY *pkey = NULL;
    const OSSL_PARAM *p;
    BIGNUM *bns[32];            /* the builder keeps pointers until to_param */
    size_t nbn = 0, i;

    ck_assert_ptr_nonnull(bld);
    for (p = base; p->key != NULL; p++) {
        BIGNUM *bn = NULL;

        if (p->data_type != OSSL_PARAM_UNSIGNED_INTEGER)
            continue;
        for (i = 0; i < nmod && strcmp(p->key, names[i]) != 0; i++)
            continue;
        if (i < nmod)
            continue;
        ck_assert(OSSL_PARAM_get_BN(p, &bn));
        ck_assert(OSSL_PARAM_BLD_push_BN(bld, p->key, bn));
        ck_assert_uint_lt(nbn, 32);
        bns[nbn++] = bn;
    }
    for (i = 0; i < nmod; i++)
        if (values[i] != NULL)
            ck_assert(OSSL_PARAM_BLD_push_BN(bld, names[i], values[i]));
    params = OSSL_PARAM_BLD_to_param(bld);
    while (nbn > 0)
        BN_free(bns[--nbn]);
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
    if (EVP_PKEY_fromdata(ctx, &pkey, selection, params) <= 0)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
}

/*
 * Import base's parameters into gpursa with one number changed: |name|
 * replaced by |value|, or dropped when value is NULL; |extra| (if not NULL)
 * is added with |extra_value|. Returns the key or NULL.
 */
static EVP_PKEY *import_modified(const OSSL_PARAM *base, int selection, const char *name,
                                 const BIGNUM *value, const char *extra,
                                 const BIGNUM *extra_value)
{
    const char *names[2] = { name, extra };
    const BIGNUM *values[2] = { value, extra_value };

    if (name == NULL)
        return import_changed(base, selection, extra != NULL, names + 1, values + 1);
    return import_changed(base, selection, extra != NULL ? 2 : 1, names, values);
}

static BIGNUM *param_bn(const OSSL_PARAM *params, const char *name)
{
    BIGNUM *bn = NULL;

    ck_assert(OSSL_PARAM_get_BN(OSSL_PARAM_locate_const(params, name), &bn));
    return bn;
}

START_TEST(test_roundtrip_keypair_each_size)
{
    EVP_PKEY *def = tu_default_rsa(libctx, sizes[_i]);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    EVP_PKEY *pub;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx;

    ck_assert_str_eq(tu_provider_of(g), "gpursa");
    ck_assert_int_eq(EVP_PKEY_get_bits(g), sizes[_i]);
    assert_same_numbers(def, g, EVP_PKEY_KEYPAIR);

    /* public half only: no private numbers come back */
    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_PUBLIC_KEY, &params), 1);
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    pub = NULL;
    ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(ctx, &pub, EVP_PKEY_PUBLIC_KEY, params), 1);
    ck_assert_str_eq(tu_provider_of(pub), "gpursa");
    OSSL_PARAM_free(params);
    params = NULL;
    ck_assert_int_eq(EVP_PKEY_todata(pub, EVP_PKEY_KEYPAIR, &params), 1);
    ck_assert_ptr_null(OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_RSA_D));
    ck_assert_ptr_null(OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_RSA_FACTOR1));
    ck_assert_ptr_nonnull(OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_RSA_N));
    assert_same_numbers(def, pub, EVP_PKEY_PUBLIC_KEY);
    OSSL_PARAM_free(params);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pub);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

/* Large keys come from fixtures: generating 8192/16384-bit keys takes minutes. */
static EVP_PKEY *load_fixture(const char *file)
{
    const char *top = getenv("GPURSA_TOP_SRCDIR");
    char path[4096];
    EVP_PKEY *pkey = NULL;
    BIO *bio;

    snprintf(path, sizeof(path), "%s/tests/provider/keys/%s", top != NULL ? top : "../..", file);
    bio = BIO_new_file(path, "r");
    ck_assert_msg(bio != NULL, "cannot open %s", path);
    pkey = PEM_read_bio_PrivateKey_ex(bio, NULL, NULL, NULL, libctx, "provider=default");
    BIO_free(bio);
    ck_assert_msg(pkey != NULL, "cannot decode %s", path);
    return pkey;
}

static const char *const fixture_files[] = { "rsa8192.pem", "rsa16384.pem" };
static const int fixture_bits[] = { 8192, 16384 };
#define N_FIXTURES (sizeof(fixture_files) / sizeof(fixture_files[0]))

START_TEST(test_roundtrip_large_fixture_keys)
{
    const char *const *files = fixture_files;
    const int *bits = fixture_bits;
    size_t i;

    for (i = 0; i < N_FIXTURES; i++) {
        EVP_PKEY *def = load_fixture(files[i]);
        EVP_PKEY *g = tu_to_gpursa(libctx, def);

        ck_assert_int_eq(EVP_PKEY_get_bits(g), bits[i]);
        ck_assert_int_eq(EVP_PKEY_get_size(g), bits[i] / 8);
        assert_same_numbers(def, g, EVP_PKEY_KEYPAIR);
        ck_assert_int_eq(EVP_PKEY_eq(g, def), 1);
        EVP_PKEY_free(g);
        EVP_PKEY_free(def);
    }
}
END_TEST

START_TEST(test_bad_keys_refused_with_gpursa_errors)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 2048);
    OSSL_PARAM *base = NULL;
    BIGNUM *n, *p, *bn = BN_new();
    EVP_PKEY *k;

    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_KEYPAIR, &base), 1);
    n = param_bn(base, OSSL_PKEY_PARAM_RSA_N);
    p = param_bn(base, OSSL_PKEY_PARAM_RSA_FACTOR1);
    ERR_clear_error();

    /* even modulus */
    ck_assert(BN_add(bn, n, BN_value_one()));
    k = import_modified(base, EVP_PKEY_PUBLIC_KEY, OSSL_PKEY_PARAM_RSA_N, bn, NULL, NULL);
    ck_assert_ptr_null(k);
    ck_assert(tu_gpursa_error(GPURSA_R_EVEN_MODULUS));

    /* 511-bit modulus: too small */
    ck_assert(BN_rand(bn, 511, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_PUBLIC_KEY, OSSL_PKEY_PARAM_RSA_N, bn,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_KEY_TOO_SMALL));

    /* 16385-bit modulus: too large */
    ck_assert(BN_rand(bn, 16385, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_PUBLIC_KEY, OSSL_PKEY_PARAM_RSA_N, bn,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_KEY_TOO_LARGE));

    /* even e, e = 1 */
    ck_assert(BN_set_word(bn, 65536));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_PUBLIC_KEY, OSSL_PKEY_PARAM_RSA_E, bn,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_KEY));
    ck_assert(BN_set_word(bn, 1));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_E, bn,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_KEY));

    /* private key without n */
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_N, NULL,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_MISSING_KEY_PART));

    /* CRT set incomplete: an exponent missing */
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_EXPONENT2,
                                       NULL, NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_MISSING_KEY_PART));

    /* primes without d */
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_D, NULL,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_MISSING_KEY_PART));

    /* p * q != n */
    ck_assert(BN_add_word(BN_copy(bn, p), 2));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_FACTOR1, bn,
                                       NULL, NULL));
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_KEY));

    /* more primes than OpenSSL's RSA allows */
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, NULL, NULL,
                                       OSSL_PKEY_PARAM_RSA_FACTOR6, p));
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_KEY));

    /* and the unmodified set still imports */
    k = import_modified(base, EVP_PKEY_KEYPAIR, NULL, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(EVP_PKEY_eq(k, def), 1);
    EVP_PKEY_free(k);
    BN_free(bn);
    BN_free(n);
    BN_free(p);
    OSSL_PARAM_free(base);
    EVP_PKEY_free(def);
}
END_TEST

static EVP_PKEY *default_multiprime(int bits, int primes)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=default");
    EVP_PKEY *pkey = NULL;

    ck_assert_int_eq(EVP_PKEY_keygen_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_keygen_primes(ctx, primes), 1);
    ck_assert_int_eq(EVP_PKEY_generate(ctx, &pkey), 1);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

START_TEST(test_multiprime_import_export_and_check)
{
    EVP_PKEY *def = default_multiprime(2048, 3);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx;

    ck_assert_str_eq(tu_provider_of(g), "gpursa");
    ck_assert_int_eq(EVP_PKEY_todata(g, EVP_PKEY_KEYPAIR, &params), 1);
    ck_assert_ptr_nonnull(OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_RSA_FACTOR3));
    ck_assert_ptr_nonnull(OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_RSA_COEFFICIENT2));
    assert_same_numbers(def, g, EVP_PKEY_KEYPAIR);
    /* the fallback copy (built from our numbers) passes the default provider's check */
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, g, NULL);
    ck_assert_int_eq(EVP_PKEY_check(ctx), 1);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

/* Sign through gpursa with a multi-prime key: the fallback computes it, the
 * default provider verifies. */
START_TEST(test_multiprime_signs_via_fallback)
{
    EVP_PKEY *def = default_multiprime(2048, 3);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    unsigned char md[32], sig[256];
    size_t siglen = sizeof(sig);
    EVP_PKEY_CTX *ctx;

    memset(md, 0x5a, sizeof(md));
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, g, "provider=gpursa");
    ck_assert_int_eq(EVP_PKEY_sign_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()), 1);
    ck_assert_int_eq(EVP_PKEY_sign(ctx, sig, &siglen, md, sizeof(md)), 1);
    EVP_PKEY_CTX_free(ctx);
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, def, "provider=default");
    ck_assert_int_eq(EVP_PKEY_verify_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()), 1);
    ck_assert_int_eq(EVP_PKEY_verify(ctx, sig, siglen, md, sizeof(md)), 1);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

START_TEST(test_match_eq_against_default)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 2048);
    EVP_PKEY *other = tu_default_rsa(libctx, 1024);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    EVP_PKEY *g_other = tu_to_gpursa(libctx, other);
    OSSL_PARAM *pub = NULL;
    EVP_PKEY *def_pub = NULL;
    EVP_PKEY_CTX *ctx;

    ck_assert_int_eq(EVP_PKEY_eq(g, def), 1);
    ck_assert_int_eq(EVP_PKEY_eq(def, g), 1);
    ck_assert_int_eq(EVP_PKEY_eq(g, g), 1);
    ck_assert_int_ne(EVP_PKEY_eq(g, other), 1);
    ck_assert_int_ne(EVP_PKEY_eq(g, g_other), 1);
    /* a certificate's public key (default) against the private key in gpursa,
     * as SSL_CTX_check_private_key does */
    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_PUBLIC_KEY, &pub), 1);
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=default");
    ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(ctx, &def_pub, EVP_PKEY_PUBLIC_KEY, pub), 1);
    ck_assert_int_eq(EVP_PKEY_eq(def_pub, g), 1);
    ck_assert_int_eq(EVP_PKEY_eq(g, def_pub), 1);
    ck_assert_int_ne(EVP_PKEY_eq(def_pub, g_other), 1);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(pub);
    EVP_PKEY_free(def_pub);
    EVP_PKEY_free(g_other);
    EVP_PKEY_free(g);
    EVP_PKEY_free(other);
    EVP_PKEY_free(def);
}
END_TEST

START_TEST(test_dup_keeps_every_number)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 2048);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    EVP_PKEY *d = EVP_PKEY_dup(g);

    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(tu_provider_of(d), "gpursa");
    assert_same_numbers(g, d, EVP_PKEY_KEYPAIR);
    /* the copy is independent of the original */
    EVP_PKEY_free(g);
    assert_same_numbers(def, d, EVP_PKEY_KEYPAIR);
    ck_assert_int_eq(EVP_PKEY_eq(d, def), 1);
    EVP_PKEY_free(d);
    EVP_PKEY_free(def);
}
END_TEST

START_TEST(test_get_params_equal_default)
{
    EVP_PKEY *def = tu_default_rsa(libctx, sizes[_i]);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    char dname[64], gname[64];
    int a, b;

    ck_assert_int_eq(EVP_PKEY_get_bits(g), EVP_PKEY_get_bits(def));
    ck_assert_int_eq(EVP_PKEY_get_security_bits(g), EVP_PKEY_get_security_bits(def));
    ck_assert_int_eq(EVP_PKEY_get_size(g), EVP_PKEY_get_size(def));
    a = EVP_PKEY_get_default_digest_name(def, dname, sizeof(dname));
    ck_assert_int_gt(a, 0);
    ck_assert_int_eq(EVP_PKEY_get_default_digest_name(g, gname, sizeof(gname)), a);
    ck_assert_str_eq(gname, dname);
    ck_assert_int_eq(EVP_PKEY_get_int_param(g, OSSL_PKEY_PARAM_MAX_SIZE, &a), 1);
    ck_assert_int_eq(EVP_PKEY_get_int_param(def, OSSL_PKEY_PARAM_MAX_SIZE, &b), 1);
    ck_assert_int_eq(a, b);
    ck_assert_int_eq(EVP_PKEY_is_a(g, "RSA"), 1);
    ck_assert_int_eq(EVP_PKEY_is_a(g, "rsaEncryption"), 1);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

START_TEST(test_keygen_through_gpursa)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    EVP_PKEY *pkey = NULL;
    BIGNUM *e = BN_new(), *got = NULL;

    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(EVP_PKEY_keygen_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 1024), 1);
    ck_assert(BN_set_word(e, 3));
    ck_assert_int_eq(EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e), 1);
    ck_assert_int_eq(EVP_PKEY_generate(ctx, &pkey), 1);
    ck_assert_str_eq(tu_provider_of(pkey), "gpursa");
    ck_assert_int_eq(EVP_PKEY_get_bits(pkey), 1024);
    ck_assert_int_eq(EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &got), 1);
    ck_assert_int_eq(BN_cmp(got, e), 0);
    EVP_PKEY_CTX_free(ctx);
    /* the generated key is a consistent key pair */
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, NULL);
    ck_assert_int_eq(EVP_PKEY_check(ctx), 1);
    EVP_PKEY_CTX_free(ctx);

    /* absurd sizes are refused before the default provider starts */
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    ck_assert_int_eq(EVP_PKEY_keygen_init(ctx), 1);
    ERR_clear_error();
    ck_assert_int_le(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 1 << 20), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_PARAMETER));
    ck_assert_int_le(EVP_PKEY_CTX_set_rsa_keygen_primes(ctx, 9), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_PARAMETER));
    EVP_PKEY_CTX_free(ctx);
    BN_free(got);
    BN_free(e);
    EVP_PKEY_free(pkey);
}
END_TEST

/* The error queue holds a gpursa BAD_KEY error whose detail contains text
 * (and is emptied). */
static int bad_key_says(const char *text)
{
    const char *data, *reason;
    unsigned long e;
    int flags, found = 0;

    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        reason = ERR_reason_error_string(e);
        if (ERR_GET_REASON(e) == GPURSA_R_BAD_KEY && reason != NULL
            && strncmp(reason, "gpursa:", 7) == 0 && (flags & ERR_TXT_STRING) != 0
            && strstr(data, text) != NULL)
            found = 1;
    }
    return found;
}

/* x = a mod m (a fresh BIGNUM) */
static BIGNUM *bn_mod_of(const BIGNUM *a, const BIGNUM *m)
{
    BN_CTX *bnctx = BN_CTX_new();
    BIGNUM *x = BN_new();

    ck_assert(bnctx != NULL && x != NULL && BN_mod(x, a, m, bnctx));
    BN_CTX_free(bnctx);
    return x;
}

/*
 * CRT parts that contradict each other or d are refused at import with an
 * error naming the part, on random keys: p = q, a flipped bit (random
 * position) in dP, dQ + 1, dP + (p - 1) (congruent, not reduced), qInv + 1,
 * qInv + p (congruent, not below p), p and q swapped with their exponents
 * but qInv kept, d + 2 with dP and dQ recomputed from it (then e * dP != 1).
 * The default provider takes such keys; gpursa's refusal is documented in
 * README (Limitations).
 */
static const int crt_sizes[] = { 1024, 2048 };

START_TEST(test_import_refuses_contradicting_crt_parts)
{
    EVP_PKEY *def = tu_default_rsa(libctx, crt_sizes[_i]), *k;
    OSSL_PARAM *base = NULL;
    BIGNUM *n, *p, *q, *d, *dp, *dq, *qinv, *x, *pm1, *qm1;
    BN_CTX *bnctx = BN_CTX_new();
    int bit;

    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_KEYPAIR, &base), 1);
    n = param_bn(base, OSSL_PKEY_PARAM_RSA_N);
    d = param_bn(base, OSSL_PKEY_PARAM_RSA_D);
    p = param_bn(base, OSSL_PKEY_PARAM_RSA_FACTOR1);
    q = param_bn(base, OSSL_PKEY_PARAM_RSA_FACTOR2);
    dp = param_bn(base, OSSL_PKEY_PARAM_RSA_EXPONENT1);
    dq = param_bn(base, OSSL_PKEY_PARAM_RSA_EXPONENT2);
    qinv = param_bn(base, OSSL_PKEY_PARAM_RSA_COEFFICIENT1);
    x = BN_new();
    pm1 = BN_dup(p);
    qm1 = BN_dup(q);
    ck_assert(x != NULL && pm1 != NULL && qm1 != NULL && BN_sub_word(pm1, 1)
              && BN_sub_word(qm1, 1));

    /* p = q: n = p^2, the exponents and coefficient of p's */
    {
        const char *const names[] = {
            OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_EXPONENT2
        };
        const BIGNUM *values[] = { x, p, dp };

        ck_assert(BN_sqr(x, p, bnctx));
        ck_assert_ptr_null(import_changed(base, EVP_PKEY_KEYPAIR, 3, names, values));
        ck_assert(bad_key_says("primes 1 and 2 are equal"));
    }
    /* one number changed at a time */
    {
        struct {
            const char *name, *text;
            BIGNUM *v;
        } one[] = {
            /* one bit of dP flipped, at a random position below its length */
            { OSSL_PKEY_PARAM_RSA_EXPONENT1, "CRT exponent 1 is not d mod (prime 1 - 1)",
              BN_dup(dp) },
            { OSSL_PKEY_PARAM_RSA_EXPONENT2, "CRT exponent 2 is not d mod (prime 2 - 1)",
              BN_dup(dq) },                                     /* dQ + 1 */
            /* dP + (p - 1): the same exponent mod p - 1, not reduced */
            { OSSL_PKEY_PARAM_RSA_EXPONENT1, "CRT exponent 1 is not d mod (prime 1 - 1)",
              BN_dup(dp) },
            { OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
              "CRT coefficient 1 is not the inverse prime 1 needs", BN_dup(qinv) },  /* + 1 */
            /* qInv + p: the same inverse mod p, not below p */
            { OSSL_PKEY_PARAM_RSA_COEFFICIENT1, "CRT coefficient 1 is not below prime 1",
              BN_dup(qinv) },
        };
        size_t i;

        ck_assert(RAND_bytes((unsigned char *)&bit, sizeof(bit)) == 1);
        bit = (int)((unsigned)bit % (unsigned)BN_num_bits(dp));
        ck_assert(BN_is_bit_set(one[0].v, bit) ? BN_clear_bit(one[0].v, bit)
                                               : BN_set_bit(one[0].v, bit));
        ck_assert(BN_add_word(one[1].v, 1) && BN_add(one[2].v, one[2].v, pm1)
                  && BN_add_word(one[3].v, 1) && BN_add(one[4].v, one[4].v, p));
        for (i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
            ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, one[i].name, one[i].v,
                                               NULL, NULL));
            ck_assert_msg(bad_key_says(one[i].text), "case %zu (dP bit %d): no error \"%s\"",
                          i, bit, one[i].text);
            BN_clear_free(one[i].v);
        }
    }
    /* p and q swapped with their exponents, qInv (q^-1 mod p) kept */
    {
        const char *const names[] = {
            OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2,
            OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2
        };
        const BIGNUM *values[] = { q, p, dq, dp };

        ck_assert_ptr_null(import_changed(base, EVP_PKEY_KEYPAIR, 4, names, values));
        ck_assert(bad_key_says("CRT coefficient 1 is not"));
    }
    /* d + 2 and the exponents that follow from it: they agree with d, not e */
    {
        const char *const names[] = {
            OSSL_PKEY_PARAM_RSA_D, OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2
        };
        BIGNUM *d2 = BN_dup(d), *dp2, *dq2;

        ck_assert(d2 != NULL && BN_add_word(d2, 2));
        dp2 = bn_mod_of(d2, pm1);
        dq2 = bn_mod_of(d2, qm1);
        {
            const BIGNUM *values[] = { d2, dp2, dq2 };

            ck_assert_ptr_null(import_changed(base, EVP_PKEY_KEYPAIR, 3, names, values));
        }
        ck_assert(bad_key_says("CRT exponent 1 times e is not 1 mod (prime 1 - 1)"));
        BN_clear_free(d2);
        BN_clear_free(dp2);
        BN_clear_free(dq2);
    }
    /* and the key as it is still imports */
    k = import_changed(base, EVP_PKEY_KEYPAIR, 0, NULL, NULL);
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(EVP_PKEY_eq(k, def), 1);
    EVP_PKEY_free(k);
    BN_CTX_free(bnctx);
    BN_free(n);
    BN_clear_free(d);
    BN_clear_free(p);
    BN_clear_free(q);
    BN_clear_free(dp);
    BN_clear_free(dq);
    BN_clear_free(qinv);
    BN_clear_free(x);
    BN_clear_free(pm1);
    BN_clear_free(qm1);
    OSSL_PARAM_free(base);
    EVP_PKEY_free(def);
}
END_TEST

/* A three-prime key: the third prime's exponent off by one, its coefficient
 * ((r_1 r_2)^-1 mod r_3) off by one: each refused. */
START_TEST(test_import_refuses_contradicting_multiprime_parts)
{
    EVP_PKEY *def = default_multiprime(2048, 3), *k;
    OSSL_PARAM *base = NULL;
    BIGNUM *x, *d3, *t3;

    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_KEYPAIR, &base), 1);
    d3 = param_bn(base, OSSL_PKEY_PARAM_RSA_EXPONENT3);
    t3 = param_bn(base, OSSL_PKEY_PARAM_RSA_COEFFICIENT2);
    x = BN_dup(d3);
    ck_assert(x != NULL && BN_add_word(x, 1));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_EXPONENT3,
                                       x, NULL, NULL));
    ck_assert(bad_key_says("CRT exponent 3 is not d mod (prime 3 - 1)"));
    ck_assert(BN_copy(x, t3) != NULL && BN_add_word(x, 1));
    ck_assert_ptr_null(import_modified(base, EVP_PKEY_KEYPAIR,
                                       OSSL_PKEY_PARAM_RSA_COEFFICIENT2, x, NULL, NULL));
    ck_assert(bad_key_says("CRT coefficient 2 is not the inverse prime 3 needs"));
    k = import_changed(base, EVP_PKEY_KEYPAIR, 0, NULL, NULL);
    ck_assert_ptr_nonnull(k);
    EVP_PKEY_free(k);
    BN_clear_free(x);
    BN_clear_free(d3);
    BN_clear_free(t3);
    OSSL_PARAM_free(base);
    EVP_PKEY_free(def);
}
END_TEST

START_TEST(test_validate_detects_wrong_d)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 1024);
    EVP_PKEY *g = tu_to_gpursa(libctx, def), *bad;
    OSSL_PARAM *base = NULL;
    BIGNUM *d;
    EVP_PKEY_CTX *ctx;

    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, g, NULL);
    ck_assert_int_eq(EVP_PKEY_check(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_pairwise_check(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_public_check(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_private_check(ctx), 1);
    EVP_PKEY_CTX_free(ctx);

    /* d off by two: with the CRT parts import refuses it (they no longer
     * agree with d); without them import takes it, and the key pair is
     * inconsistent, which the check must say */
    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_KEYPAIR, &base), 1);
    d = param_bn(base, OSSL_PKEY_PARAM_RSA_D);
    ck_assert(BN_add_word(d, 2));
    bad = import_modified(base, EVP_PKEY_KEYPAIR, OSSL_PKEY_PARAM_RSA_D, d, NULL, NULL);
    ck_assert_ptr_null(bad);
    ck_assert(bad_key_says("CRT exponent 1 is not d mod (prime 1 - 1)"));
    {
        const char *const crt[] = {
            OSSL_PKEY_PARAM_RSA_D, OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2,
            OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2,
            OSSL_PKEY_PARAM_RSA_COEFFICIENT1
        };
        const BIGNUM *const v[] = { d, NULL, NULL, NULL, NULL, NULL };

        bad = import_changed(base, EVP_PKEY_KEYPAIR, 6, crt, v);
    }
    ck_assert_ptr_nonnull(bad);
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, bad, NULL);
    ck_assert_int_ne(EVP_PKEY_check(ctx), 1);
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    BN_free(d);
    OSSL_PARAM_free(base);
    EVP_PKEY_free(bad);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

START_TEST(test_encoders_write_gpursa_keys)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 2048);
    EVP_PKEY *g = tu_to_gpursa(libctx, def), *back = NULL;
    OSSL_ENCODER_CTX *ectx;
    OSSL_DECODER_CTX *dctx;
    unsigned char *der = NULL;
    const unsigned char *cp;
    size_t derlen = 0;
    BIO *mem = BIO_new(BIO_s_mem());

    ectx = OSSL_ENCODER_CTX_new_for_pkey(g, EVP_PKEY_KEYPAIR, "DER", "PrivateKeyInfo", NULL);
    ck_assert_ptr_nonnull(ectx);
    ck_assert_int_gt(OSSL_ENCODER_CTX_get_num_encoders(ectx), 0);
    ck_assert_int_eq(OSSL_ENCODER_to_data(ectx, &der, &derlen), 1);
    OSSL_ENCODER_CTX_free(ectx);
    dctx = OSSL_DECODER_CTX_new_for_pkey(&back, "DER", NULL, "RSA", EVP_PKEY_KEYPAIR,
                                         libctx, "provider=default");
    cp = der;
    ck_assert_int_eq(OSSL_DECODER_from_data(dctx, &cp, &derlen), 1);
    ck_assert_int_eq(EVP_PKEY_eq(back, def), 1);
    assert_same_numbers(back, def, EVP_PKEY_KEYPAIR);
    OSSL_DECODER_CTX_free(dctx);
    /* text output, as `openssl pkey -text` prints it */
    ck_assert_int_eq(EVP_PKEY_print_private(mem, g, 0, NULL), 1);
    ck_assert_int_gt(BIO_pending(mem), 1000);
    BIO_free(mem);
    OPENSSL_free(der);
    EVP_PKEY_free(back);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

/* The raw private operation (the seam) through the asymmetric cipher with
 * no padding, against the default provider; and its input checks. */
START_TEST(test_raw_private_op_matches_default)
{
    EVP_PKEY *def = tu_default_rsa(libctx, sizes[_i]);
    EVP_PKEY *g = tu_to_gpursa(libctx, def);
    size_t len = (size_t)EVP_PKEY_get_size(def), glen, dlen;
    unsigned char in[512], gout[512], dout[512];
    EVP_PKEY_CTX *gctx, *dctx;
    int round;

    gctx = EVP_PKEY_CTX_new_from_pkey(libctx, g, "provider=gpursa");
    dctx = EVP_PKEY_CTX_new_from_pkey(libctx, def, "provider=default");
    ck_assert_int_eq(EVP_PKEY_decrypt_init(gctx), 1);
    ck_assert_int_eq(EVP_PKEY_decrypt_init(dctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(gctx, RSA_NO_PADDING), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(dctx, RSA_NO_PADDING), 1);
    for (round = 0; round < 8; round++) {
        ck_assert_int_eq(RAND_bytes(in, (int)len), 1);
        in[0] &= 0x7f;          /* below n: n's top bit is set */
        if (round == 0)
            memset(in, 0, len);
        if (round == 1) {
            memset(in, 0, len);
            in[len - 1] = 1;
        }
        glen = dlen = len;
        ck_assert_int_eq(EVP_PKEY_decrypt(gctx, gout, &glen, in, len), 1);
        ck_assert_int_eq(EVP_PKEY_decrypt(dctx, dout, &dlen, in, len), 1);
        ck_assert_uint_eq(glen, len);
        ck_assert_mem_eq(gout, dout, len);
    }
    /* input >= n is an error, never a result */
    memset(in, 0xff, len);
    glen = len;
    ERR_clear_error();
    ck_assert_int_le(EVP_PKEY_decrypt(gctx, gout, &glen, in, len), 0);
    ck_assert(ERR_peek_error() != 0);
    ERR_clear_error();
    EVP_PKEY_CTX_free(gctx);
    EVP_PKEY_CTX_free(dctx);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

/* The raw private operation at the large sizes (CPU path): equal to default's. */
START_TEST(test_raw_private_op_large_fixture_keys)
{
    size_t i;

    for (i = 0; i < N_FIXTURES; i++) {
        EVP_PKEY *def = load_fixture(fixture_files[i]);
        EVP_PKEY *g = tu_to_gpursa(libctx, def);
        size_t len = (size_t)fixture_bits[i] / 8, glen = len, dlen = len;
        unsigned char *in = OPENSSL_malloc(len), *gout = OPENSSL_malloc(len);
        unsigned char *dout = OPENSSL_malloc(len);
        EVP_PKEY_CTX *gctx = EVP_PKEY_CTX_new_from_pkey(libctx, g, "provider=gpursa");
        EVP_PKEY_CTX *dctx = EVP_PKEY_CTX_new_from_pkey(libctx, def, "provider=default");

        ck_assert_int_eq(RAND_bytes(in, (int)len), 1);
        in[0] &= 0x7f;
        ck_assert_int_eq(EVP_PKEY_decrypt_init(gctx), 1);
        ck_assert_int_eq(EVP_PKEY_decrypt_init(dctx), 1);
        ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(gctx, RSA_NO_PADDING), 1);
        ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(dctx, RSA_NO_PADDING), 1);
        ck_assert_int_eq(EVP_PKEY_decrypt(gctx, gout, &glen, in, len), 1);
        ck_assert_int_eq(EVP_PKEY_decrypt(dctx, dout, &dlen, in, len), 1);
        ck_assert_uint_eq(glen, len);
        ck_assert_mem_eq(gout, dout, len);
        EVP_PKEY_CTX_free(gctx);
        EVP_PKEY_CTX_free(dctx);
        OPENSSL_free(in);
        OPENSSL_free(gout);
        OPENSSL_free(dout);
        EVP_PKEY_free(g);
        EVP_PKEY_free(def);
    }
}
END_TEST

/* A private key of n, e and d only (no CRT numbers): imported, exported as
 * such, and its private operation (non-CRT, on the fallback) equals default's. */
START_TEST(test_private_key_without_crt_numbers)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 2048), *g = NULL, *dnc = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *base = NULL, *params, *out = NULL;
    BIGNUM *n, *e, *d;
    EVP_PKEY_CTX *ctx;
    unsigned char in[256], gout[256], dout[256];

    ck_assert_int_eq(EVP_PKEY_todata(def, EVP_PKEY_KEYPAIR, &base), 1);
    n = param_bn(base, OSSL_PKEY_PARAM_RSA_N);
    e = param_bn(base, OSSL_PKEY_PARAM_RSA_E);
    d = param_bn(base, OSSL_PKEY_PARAM_RSA_D);
    ck_assert(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n));
    ck_assert(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e));
    ck_assert(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, d));
    params = OSSL_PARAM_BLD_to_param(bld);
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa");
    ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(ctx, &g, EVP_PKEY_KEYPAIR, params), 1);
    EVP_PKEY_CTX_free(ctx);
    ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=default");
    ck_assert_int_eq(EVP_PKEY_fromdata_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(ctx, &dnc, EVP_PKEY_KEYPAIR, params), 1);
    EVP_PKEY_CTX_free(ctx);
    ck_assert_int_eq(EVP_PKEY_todata(g, EVP_PKEY_KEYPAIR, &out), 1);
    ck_assert_ptr_nonnull(OSSL_PARAM_locate(out, OSSL_PKEY_PARAM_RSA_D));
    ck_assert_ptr_null(OSSL_PARAM_locate(out, OSSL_PKEY_PARAM_RSA_FACTOR1));
    ck_assert_int_eq(EVP_PKEY_eq(g, def), 1);
    ck_assert_int_eq(RAND_bytes(in, sizeof(in)), 1);
    in[0] &= 0x7f;
    tu_raw_private_op(libctx, g, "provider=gpursa", in, sizeof(in), gout, sizeof(gout));
    tu_raw_private_op(libctx, dnc, "provider=default", in, sizeof(in), dout, sizeof(dout));
    ck_assert_mem_eq(gout, dout, sizeof(dout));
    OSSL_PARAM_free(out);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    OSSL_PARAM_free(base);
    BN_free(n);
    BN_free(e);
    BN_clear_free(d);
    EVP_PKEY_free(dnc);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
}
END_TEST

/* Several threads share one gpursa key: eq, dup, export and the raw private
 * operation, each checked against single-threaded results. */
typedef struct {
    EVP_PKEY *g, *def;
    const unsigned char *in, *expect;
    size_t len;
    int failures;
} shared_key_job;

static void *shared_key_worker(void *arg)
{
    shared_key_job *job = arg;
    unsigned char out[256];
    int i;

    for (i = 0; i < 20; i++) {
        EVP_PKEY *d = EVP_PKEY_dup(job->g);
        OSSL_PARAM *params = NULL;
        EVP_PKEY_CTX *ctx;
        size_t outlen = sizeof(out);

        if (d == NULL || EVP_PKEY_eq(d, job->def) != 1 || EVP_PKEY_eq(job->g, job->def) != 1
            || EVP_PKEY_todata(job->g, EVP_PKEY_KEYPAIR, &params) != 1)
            job->failures++;
        OSSL_PARAM_free(params);
        EVP_PKEY_free(d);
        ctx = EVP_PKEY_CTX_new_from_pkey(libctx, job->g, "provider=gpursa");
        if (ctx == NULL || EVP_PKEY_decrypt_init(ctx) != 1
            || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) != 1
            || EVP_PKEY_decrypt(ctx, out, &outlen, job->in, job->len) != 1
            || outlen != job->len || memcmp(out, job->expect, job->len) != 0)
            job->failures++;
        EVP_PKEY_CTX_free(ctx);
    }
    return NULL;
}

START_TEST(test_one_key_shared_by_threads)
{
    EVP_PKEY *def = tu_default_rsa(libctx, 2048);
    unsigned char in[256], expect[256];
    shared_key_job jobs[4];
    pthread_t tid[4];
    int i;

    ck_assert_int_eq(RAND_bytes(in, sizeof(in)), 1);
    in[0] &= 0x7f;
    tu_raw_private_op(libctx, def, "provider=default", in, sizeof(in), expect, sizeof(expect));
    memset(jobs, 0, sizeof(jobs));
    jobs[0].g = tu_to_gpursa(libctx, def);
    for (i = 0; i < 4; i++) {
        jobs[i].g = jobs[0].g;
        jobs[i].def = def;
        jobs[i].in = in;
        jobs[i].expect = expect;
        jobs[i].len = sizeof(in);
        ck_assert_int_eq(pthread_create(&tid[i], NULL, shared_key_worker, &jobs[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_join(tid[i], NULL), 0);
        ck_assert_int_eq(jobs[i].failures, 0);
    }
    EVP_PKEY_free(jobs[0].g);
    EVP_PKEY_free(def);
}
END_TEST

static Suite *make_keymgmt_suite(void)
{
    Suite *s = suite_create("keymgmt");
    TCase *tc = tcase_create("keymgmt");
    int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_roundtrip_keypair_each_size, 0, nsizes);
    tcase_add_test(tc, test_roundtrip_large_fixture_keys);
    tcase_add_test(tc, test_bad_keys_refused_with_gpursa_errors);
    tcase_add_test(tc, test_multiprime_import_export_and_check);
    tcase_add_test(tc, test_match_eq_against_default);
    tcase_add_test(tc, test_dup_keeps_every_number);
    tcase_add_loop_test(tc, test_get_params_equal_default, 0, nsizes);
    tcase_add_test(tc, test_keygen_through_gpursa);
    tcase_add_test(tc, test_validate_detects_wrong_d);
    tcase_add_loop_test(tc, test_import_refuses_contradicting_crt_parts, 0,
                        (int)(sizeof(crt_sizes) / sizeof(crt_sizes[0])));
    tcase_add_test(tc, test_import_refuses_contradicting_multiprime_parts);
    tcase_add_test(tc, test_encoders_write_gpursa_keys);
    tcase_add_test(tc, test_multiprime_signs_via_fallback);
    tcase_add_test(tc, test_private_key_without_crt_numbers);
    tcase_add_test(tc, test_one_key_shared_by_threads);
    tcase_add_loop_test(tc, test_raw_private_op_matches_default, 0, nsizes);
    tcase_add_test(tc, test_raw_private_op_large_fixture_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    size_t i;
    int failed;

    /* One libctx and one key per size, made before Check forks each test, so
     * every test reuses them (tu_default_rsa caches per libctx). */
    libctx = tu_libctx();
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        EVP_PKEY_free(tu_default_rsa(libctx, sizes[i]));
    sr = srunner_create(make_keymgmt_suite());

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    tu_libctx_free(libctx);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
