/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the constant-time decryption decoders (provider/rsa_dec_pad.c),
 * called directly on hand-built encoded blocks. The decoder file is compiled
 * into this program so that its mask helpers can be checked as well.
 *
 * Independent references: the default provider builds OAEP blocks (public
 * encrypt then raw private decrypt) and checks ours; the implicit-rejection
 * vectors of draft-irtf-cfrg-rsa-guidance (as published in OpenSSL's
 * evppkey_rsa_common.txt) pin KDK, PRF and the synthetic message.
 */
#include "provider/rsa_dec_pad.c"

#include <stdint.h>
#include <stdlib.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "ir_vectors.h"
#include "testutil.h"

#define SENTINEL 0xA5

static void rnd(unsigned char *p, size_t n)
{
    ck_assert_int_eq(RAND_bytes(p, (int)n), 1);
}

static void rnd_nonzero(unsigned char *p, size_t n)
{
    size_t i;

    rnd(p, n);
    for (i = 0; i < n; i++)
        while (p[i] == 0)
            rnd(p + i, 1);
}

static size_t rnd_below(size_t n)
{
    uint32_t r;

    rnd((unsigned char *)&r, sizeof(r));
    return n == 0 ? 0 : r % n;
}

/* 00 02 PS 00 M with |PS| = k - 3 - mlen, all non-zero. */
static void build_pkcs1(unsigned char *em, size_t k, const unsigned char *m,
                        size_t mlen)
{
    size_t ps = k - 3 - mlen;

    em[0] = 0;
    em[1] = 2;
    rnd_nonzero(em + 2, ps);
    em[2 + ps] = 0;
    memcpy(em + 3 + ps, m, mlen);
}

static const size_t sizes[] = { 128, 256, 384, 512 };

/* ---- mask helpers ---------------------------------------------------------- */

START_TEST(ct_helpers_match_plain_comparisons)
{
    const size_t v[] = { 0, 1, 2, 7, 8, 255, 256, 0x7fffffff, 0x80000000,
                         SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX - 1, SIZE_MAX };
    size_t i, j;

    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        ck_assert(ct_is_zero(v[i]) == (v[i] == 0 ? SIZE_MAX : 0));
        for (j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
            ck_assert(ct_lt(v[i], v[j]) == (v[i] < v[j] ? SIZE_MAX : 0));
            ck_assert(ct_ge(v[i], v[j]) == (v[i] >= v[j] ? SIZE_MAX : 0));
            ck_assert(ct_eq(v[i], v[j]) == (v[i] == v[j] ? SIZE_MAX : 0));
            ck_assert(ct_select(SIZE_MAX, v[i], v[j]) == v[i]);
            ck_assert(ct_select(0, v[i], v[j]) == v[j]);
        }
    }
}
END_TEST

/* ---- PKCS#1 v1.5 type 2, explicit rejection --------------------------------- */

/* Every message length of a 128-byte block, random lengths of bigger ones. */
START_TEST(pkcs1_valid_every_length)
{
    size_t k = sizes[_i], n, mlen;
    unsigned char em[512], m[512], out[512 + 8];

    for (n = 0; n < (k == 128 ? k - 10 : 40); n++) {
        mlen = k == 128 ? n : (n == 0 ? 0 : n == 1 ? k - 11 : rnd_below(k - 10));
        rnd(m, mlen);
        build_pkcs1(em, k, m, mlen);
        memset(out, SENTINEL, sizeof(out));
        ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, k - 11, em, k), (int)mlen);
        ck_assert_mem_eq(out, m, mlen);
        /* a larger buffer changes nothing; bytes past the message untouched */
        memset(out, SENTINEL, sizeof(out));
        ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, sizeof(out), em, k), (int)mlen);
        ck_assert_mem_eq(out, m, mlen);
        ck_assert_uint_eq(out[mlen], SENTINEL);
    }
}
END_TEST

static void assert_pkcs1_rejected(const unsigned char *em, size_t k)
{
    unsigned char out[512], ref[512];

    memset(out, SENTINEL, sizeof(out));
    memset(ref, SENTINEL, sizeof(ref));
    ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, sizeof(out), em, k), -1);
    ck_assert_mem_eq(out, ref, sizeof(out));   /* nothing written */
}

START_TEST(pkcs1_every_wrong_header_byte)
{
    size_t k = sizes[_i];
    unsigned char em[512], m[16];
    int v;

    rnd(m, sizeof(m));
    for (v = 1; v < 256; v++) {
        build_pkcs1(em, k, m, sizeof(m));
        em[0] = (unsigned char)v;
        assert_pkcs1_rejected(em, k);
    }
    for (v = 0; v < 256; v++) {
        if (v == 2)
            continue;
        build_pkcs1(em, k, m, sizeof(m));
        em[1] = (unsigned char)v;
        assert_pkcs1_rejected(em, k);
    }
}
END_TEST

START_TEST(pkcs1_no_zero_separator)
{
    size_t k = sizes[_i];
    unsigned char em[512];

    em[0] = 0;
    em[1] = 2;
    rnd_nonzero(em + 2, k - 2);
    assert_pkcs1_rejected(em, k);
}
END_TEST

/* The separator may sit at index 10 (PS of exactly 8) up to k - 1 (empty
 * message); anywhere in 2..9 the PS is shorter than 8 and must fail. */
START_TEST(pkcs1_separator_at_the_limits)
{
    size_t k = sizes[_i], z;
    unsigned char em[512], out[512];

    for (z = 2; z < k; z++) {
        em[0] = 0;
        em[1] = 2;
        rnd_nonzero(em + 2, k - 2);
        em[z] = 0;
        if (z < 10) {
            assert_pkcs1_rejected(em, k);
        } else if (z == 10 || z == k - 1 || z % 37 == 0) {
            ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, k - 11, em, k),
                             (int)(k - 1 - z));
            ck_assert_mem_eq(out, em + z + 1, k - 1 - z);
        }
    }
    /* a later zero inside the message does not move the separator */
    em[0] = 0;
    em[1] = 2;
    rnd_nonzero(em + 2, k - 2);
    em[20] = 0;
    em[30] = 0;
    ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, k - 11, em, k), (int)(k - 21));
    ck_assert_uint_eq(out[9], 0);
}
END_TEST

START_TEST(pkcs1_public_size_checks)
{
    unsigned char em[256], m[4] = { 1, 2, 3, 4 }, out[256];

    build_pkcs1(em, 256, m, sizeof(m));
    /* smaller than the largest possible message: refused before looking */
    ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, 256 - 12, em, 256), -1);
    ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, 256 - 11, em, 256), 4);
    ck_assert_int_eq(gpursa_dec_pkcs1_type2(out, 10, em, 10), -1);
}
END_TEST

/* ---- implicit rejection ----------------------------------------------------- */

/* A straightforward (not constant-time) statement of the draft's rule, as a
 * reference: the last 16-bit candidate, masked to the width of k - 10, that is
 * below k - 10; the message is the tail of PRF("message"). */
static size_t ref_synthetic(const unsigned char kdk[32], size_t k,
                            unsigned char *msg)
{
    unsigned char lens[256], *full = malloc(k);
    size_t max = k - 10, mask = 1, len = 0, i;

    ck_assert_ptr_nonnull(full);
    while (mask < max)
        mask = (mask << 1) | 1;
    ck_assert(gpursa_dec_prf(NULL, kdk, "length", lens, sizeof(lens)));
    ck_assert(gpursa_dec_prf(NULL, kdk, "message", full, k));
    for (i = 0; i < sizeof(lens); i += 2) {
        size_t c = ((size_t)lens[i] << 8 | lens[i + 1]) & mask;

        if (c < max)
            len = c;
    }
    memcpy(msg, full + k - len, len);
    free(full);
    return len;
}

START_TEST(ir_valid_padding_unaffected)
{
    size_t k = sizes[_i], n, mlen;
    unsigned char em[512], m[512], out[512], kdk[32];

    for (n = 0; n < 30; n++) {
        mlen = n == 0 ? 0 : n == 1 ? k - 11 : rnd_below(k - 10);
        rnd(m, mlen);
        rnd(kdk, sizeof(kdk));
        build_pkcs1(em, k, m, mlen);
        ck_assert_int_eq(gpursa_dec_pkcs1_type2_implicit(NULL, out, k - 11, em, k, kdk),
                         (int)mlen);
        ck_assert_mem_eq(out, m, mlen);
    }
}
END_TEST

START_TEST(ir_invalid_gives_deterministic_synthetic)
{
    size_t k = sizes[_i], kind, slen;
    unsigned char em[512], m[8] = "secret!", out1[512], out2[512], ref[512];
    unsigned char kdk[32], kdk2[32];
    int r1, r2;

    for (kind = 0; kind < 5; kind++) {
        build_pkcs1(em, k, m, sizeof(m));
        switch (kind) {
        case 0: em[0] = 1; break;                           /* first byte */
        case 1: em[1] = 1; break;                           /* second byte */
        case 2: rnd_nonzero(em + 2, k - 2); break;          /* no separator */
        case 3: em[5] = 0; break;                           /* PS of 3 */
        case 4: em[9] = 0; break;                           /* PS of 7 */
        }
        rnd(kdk, sizeof(kdk));
        slen = ref_synthetic(kdk, k, ref);
        r1 = gpursa_dec_pkcs1_type2_implicit(NULL, out1, k - 11, em, k, kdk);
        r2 = gpursa_dec_pkcs1_type2_implicit(NULL, out2, k - 11, em, k, kdk);
        ck_assert_int_eq(r1, (int)slen);
        ck_assert_int_eq(r2, r1);
        ck_assert_mem_eq(out1, ref, slen);
        ck_assert_mem_eq(out2, out1, slen);
        ck_assert_int_le(r1, (int)(k - 11));
        /* another key or ciphertext (another KDK) gives another message */
        memcpy(kdk2, kdk, sizeof(kdk));
        kdk2[31] ^= 1;
        r2 = gpursa_dec_pkcs1_type2_implicit(NULL, out2, k - 11, em, k, kdk2);
        ck_assert(r2 != r1 || r1 == 0 || memcmp(out1, out2, (size_t)r1) != 0);
    }
}
END_TEST

/* Lengths cover [0, k - 11] and nothing else. With k = 16 there are six
 * values; 3000 draws miss one with probability about 6 * (5/6)^3000. */
START_TEST(ir_length_distribution)
{
    unsigned char em[256], out[256], kdk[32];
    int seen[6] = { 0 }, i, r;
    double sum = 0;

    memset(em, 0xff, sizeof(em));                   /* never valid */
    for (i = 0; i < 3000; i++) {
        rnd(kdk, sizeof(kdk));
        r = gpursa_dec_pkcs1_type2_implicit(NULL, out, 5, em, 16, kdk);
        ck_assert_int_ge(r, 0);
        ck_assert_int_le(r, 5);
        seen[r]++;
    }
    for (i = 0; i < 6; i++)
        ck_assert_int_gt(seen[i], 0);
    /* k = 256: uniform on [0, 245], mean 122.5, sd of the mean of 400 ~3.6 */
    for (i = 0; i < 400; i++) {
        rnd(kdk, sizeof(kdk));
        r = gpursa_dec_pkcs1_type2_implicit(NULL, out, 245, em, 256, kdk);
        ck_assert_int_ge(r, 0);
        ck_assert_int_le(r, 245);
        sum += r;
    }
    ck_assert(sum / 400 > 122.5 - 20 && sum / 400 < 122.5 + 20);
}
END_TEST

START_TEST(prf_blocks_are_hmac_of_counter_label_bits)
{
    unsigned char kdk[32], out[72], mac[32], in[2 + 7 + 2];
    size_t maclen;

    rnd(kdk, sizeof(kdk));
    ck_assert(gpursa_dec_prf(NULL, kdk, "message", out, sizeof(out)));
    memcpy(in + 2, "message", 7);
    in[9] = (72 * 8) >> 8;
    in[10] = (72 * 8) & 0xff;
    for (unsigned int blk = 0; blk < 3; blk++) {
        in[0] = 0;
        in[1] = (unsigned char)blk;
        ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, kdk, 32,
                                        in, sizeof(in), mac, sizeof(mac), &maclen));
        ck_assert_mem_eq(out + 32 * blk, mac, blk == 2 ? 8 : 32);
    }
    ck_assert(!gpursa_dec_prf(NULL, kdk, "x", out, 0));
    ck_assert(!gpursa_dec_prf(NULL, kdk, "x", out, 8192));
}
END_TEST

START_TEST(kdk_is_hmac_of_hashed_exponent)
{
    BIGNUM *d = BN_new();
    unsigned char dbuf[128], ct[128], hash[32], kdk[32], mac[32];
    size_t maclen;

    ck_assert(BN_rand(d, 1000, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY));
    ck_assert_int_eq(BN_bn2binpad(d, dbuf, 128), 128);
    ck_assert(EVP_Q_digest(NULL, "SHA256", NULL, dbuf, 128, hash, NULL));
    rnd(ct, sizeof(ct));
    ct[0] = 0;                  /* a short ciphertext is left-padded */
    ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, hash, 32,
                                    ct, 128, mac, 32, &maclen));
    ck_assert(gpursa_dec_kdk(NULL, d, ct, 128, 128, kdk));
    ck_assert_mem_eq(kdk, mac, 32);
    ck_assert(gpursa_dec_kdk(NULL, d, ct + 1, 127, 128, kdk));
    ck_assert_mem_eq(kdk, mac, 32);
    ck_assert(!gpursa_dec_kdk(NULL, d, ct, 129, 128, kdk));
    BN_free(d);
}
END_TEST

static EVP_PKEY *vector_key(void)
{
    BIO *bio = BIO_new_mem_buf(ir_vector_key_pem, -1);
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);

    BIO_free(bio);
    ck_assert_ptr_nonnull(pkey);
    return pkey;
}

static size_t hex2bin(const char *hex, unsigned char *out)
{
    long len = 0;
    unsigned char *b = OPENSSL_hexstr2buf(hex, &len);

    if (*hex == '\0')
        return 0;
    ck_assert_ptr_nonnull(b);
    memcpy(out, b, (size_t)len);
    OPENSSL_free(b);
    return (size_t)len;
}

START_TEST(ir_published_vectors)
{
    const struct ir_vector *v = &ir_vectors[_i];
    EVP_PKEY *pkey = vector_key();
    BIGNUM *d = NULL;
    unsigned char ct[256], em[256], kdk[32], out[256], want[256];
    size_t ctlen, wantlen;
    int r;

    ck_assert(EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_D, &d));
    ctlen = hex2bin(v->ciphertext, ct);
    ck_assert_uint_eq(ctlen, 256);
    tu_raw_private_op(NULL, pkey, "provider=default", ct, ctlen, em, 256);
    ck_assert(gpursa_dec_kdk(NULL, d, ct, ctlen, 256, kdk));
    r = gpursa_dec_pkcs1_type2_implicit(NULL, out, 245, em, 256, kdk);
    if (v->hex_plaintext) {
        wantlen = hex2bin(v->plaintext, want);
    } else {
        wantlen = strlen(v->plaintext);
        memcpy(want, v->plaintext, wantlen);
    }
    ck_assert_msg(r == (int)wantlen, "%s: length %d, want %zu", v->name, r, wantlen);
    ck_assert_mem_eq(out, want, wantlen);
    BN_free(d);
    EVP_PKEY_free(pkey);
}
END_TEST

/* ---- OAEP ---------------------------------------------------------------------- */

/* Our own EME-OAEP encoder for structural variations; test_oaep_encoder
 * checks it against the default provider. ps_byte/sep_byte let a test plant
 * errors. */
static void build_oaep(unsigned char *em, size_t k, const EVP_MD *md,
                       const EVP_MD *mgf1, const unsigned char *label,
                       size_t llen, const unsigned char *m, size_t mlen,
                       unsigned char ps_byte, unsigned char sep_byte)
{
    size_t h = (size_t)EVP_MD_get_size(md), dblen = k - h - 1, i;
    unsigned char db[512], seed[64], mask[512];

    ck_assert(EVP_Digest(label, llen, db, NULL, md, NULL));
    memset(db + h, ps_byte, dblen - h - mlen - 1);
    db[dblen - mlen - 1] = sep_byte;
    memcpy(db + dblen - mlen, m, mlen);
    rnd(seed, h);
    ck_assert(gpursa_mgf1(mask, dblen, seed, h, mgf1));
    for (i = 0; i < dblen; i++)
        db[i] ^= mask[i];
    ck_assert(gpursa_mgf1(mask, h, db, dblen, mgf1));
    for (i = 0; i < h; i++)
        seed[i] ^= mask[i];
    em[0] = 0;
    memcpy(em + 1, seed, h);
    memcpy(em + 1 + h, db, dblen);
}

static const char *const mds[] = { "SHA1", "SHA224", "SHA256", "SHA384", "SHA512" };

static void set_oaep(EVP_PKEY_CTX *ctx, const char *md, const char *mgf1,
                     const unsigned char *label, size_t llen)
{
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_oaep_md_name(ctx, md, NULL), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_mgf1_md_name(ctx, mgf1, NULL), 1);
    if (llen > 0) {
        unsigned char *l = OPENSSL_memdup(label, llen);

        ck_assert_int_eq(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l, (int)llen), 1);
    }
}

/* The default provider OAEP-encrypts; the raw block decodes with ours. */
START_TEST(oaep_decodes_default_provider_blocks)
{
    EVP_PKEY *pkey = vector_key();
    const char *md = mds[_i % 5], *mgf1 = mds[(_i / 5 + _i) % 5];
    EVP_MD *dmd = EVP_MD_fetch(NULL, md, NULL), *dmgf1 = EVP_MD_fetch(NULL, mgf1, NULL);
    size_t h = (size_t)EVP_MD_get_size(dmd), max = 256 - 2 * h - 2, n;
    unsigned char m[256], label[32], ct[256], em[256], out[256];

    for (n = 0; n < 6; n++) {
        size_t mlen = n == 0 ? 0 : n == 1 ? max : rnd_below(max + 1);
        size_t llen = n % 2 ? 0 : 1 + rnd_below(sizeof(label));
        size_t ctlen = sizeof(ct);
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, "provider=default");

        rnd(m, mlen);
        rnd(label, llen);
        ck_assert_int_eq(EVP_PKEY_encrypt_init(ctx), 1);
        set_oaep(ctx, md, mgf1, label, llen);
        ck_assert_int_eq(EVP_PKEY_encrypt(ctx, ct, &ctlen, m, mlen), 1);
        EVP_PKEY_CTX_free(ctx);
        tu_raw_private_op(NULL, pkey, "provider=default", ct, ctlen, em, 256);
        memset(out, SENTINEL, sizeof(out));
        ck_assert_int_eq(gpursa_dec_oaep(out, max, em, 256, label, llen, dmd, dmgf1),
                         (int)mlen);
        ck_assert_mem_eq(out, m, mlen);
        /* the wrong label, digest or MGF1 digest must fail */
        label[0] ^= 1;
        ck_assert_int_eq(gpursa_dec_oaep(out, max, em, 256, label, llen ? llen : 1,
                                         dmd, dmgf1), -1);
        if (strcmp(md, mgf1) != 0)
            ck_assert_int_eq(gpursa_dec_oaep(out, 256, em, 256, label, llen,
                                             dmgf1, dmd), -1);
    }
    EVP_MD_free(dmd);
    EVP_MD_free(dmgf1);
    EVP_PKEY_free(pkey);
}
END_TEST

/* Our test encoder is right: the default provider decrypts what it builds. */
START_TEST(oaep_test_encoder_agrees_with_default)
{
    EVP_PKEY *pkey = vector_key();
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL), *mgf1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    unsigned char em[256], ct[256], out[256], m[20], label[5] = "label";
    size_t ctlen = sizeof(ct), outlen = sizeof(out);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, "provider=default");

    rnd(m, sizeof(m));
    build_oaep(em, 256, md, mgf1, label, sizeof(label), m, sizeof(m), 0, 1);
    ck_assert_int_eq(EVP_PKEY_encrypt_init(ctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING), 1);
    ck_assert_int_eq(EVP_PKEY_encrypt(ctx, ct, &ctlen, em, 256), 1);
    ck_assert_int_eq(EVP_PKEY_decrypt_init(ctx), 1);
    set_oaep(ctx, "SHA256", "SHA1", label, sizeof(label));
    ck_assert_int_eq(EVP_PKEY_decrypt(ctx, out, &outlen, ct, ctlen), 1);
    ck_assert_uint_eq(outlen, sizeof(m));
    ck_assert_mem_eq(out, m, sizeof(m));
    EVP_PKEY_CTX_free(ctx);
    EVP_MD_free(md);
    EVP_MD_free(mgf1);
    EVP_PKEY_free(pkey);
}
END_TEST

START_TEST(oaep_structure_errors)
{
    EVP_MD *md = EVP_MD_fetch(NULL, mds[_i], NULL);
    size_t k = 256, h = (size_t)EVP_MD_get_size(md), max = k - 2 * h - 2;
    unsigned char em[256], out[256], ref[256], m[256], label[3] = "abc";

    rnd(m, sizeof(m));
    memset(ref, SENTINEL, sizeof(ref));
#define REJECT() do { memset(out, SENTINEL, sizeof(out)); \
        ck_assert_int_eq(gpursa_dec_oaep(out, sizeof(out), em, k, label, 3, md, md), -1); \
        ck_assert_mem_eq(out, ref, sizeof(out)); } while (0)
    /* limits that are valid: empty message, maximum message (no PS) */
    build_oaep(em, k, md, md, label, 3, m, 0, 0, 1);
    ck_assert_int_eq(gpursa_dec_oaep(out, max, em, k, label, 3, md, md), 0);
    build_oaep(em, k, md, md, label, 3, m, max, 0, 1);
    ck_assert_int_eq(gpursa_dec_oaep(out, max, em, k, label, 3, md, md), (int)max);
    ck_assert_mem_eq(out, m, max);
    /* first byte not zero */
    build_oaep(em, k, md, md, label, 3, m, 10, 0, 1);
    em[0] = 1;
    REJECT();
    /* a non-zero byte in PS */
    build_oaep(em, k, md, md, label, 3, m, 10, 2, 1);
    REJECT();
    /* separator 02 instead of 01 */
    build_oaep(em, k, md, md, label, 3, m, 10, 0, 2);
    REJECT();
    /* no separator at all: PS zeros through the end */
    build_oaep(em, k, md, md, label, 3, m, 0, 0, 0);
    REJECT();
    /* lHash of another label */
    build_oaep(em, k, md, md, (const unsigned char *)"abd", 3, m, 10, 0, 1);
    REJECT();
    /* public size checks */
    build_oaep(em, k, md, md, label, 3, m, 10, 0, 1);
    ck_assert_int_eq(gpursa_dec_oaep(out, max - 1, em, k, label, 3, md, md), -1);
    ck_assert_int_eq(gpursa_dec_oaep(out, sizeof(out), em, 2 * h + 1, label, 3, md, md), -1);
#undef REJECT
    EVP_MD_free(md);
}
END_TEST

/* ---- TLS premaster ---------------------------------------------------------------- */

static void build_tls(unsigned char *em, size_t k, unsigned int version,
                      unsigned char *pms)
{
    rnd(pms, 48);
    pms[0] = (unsigned char)(version >> 8);
    pms[1] = (unsigned char)version;
    build_pkcs1(em, k, pms, 48);
}

START_TEST(tls_premaster_cases)
{
    size_t k = sizes[_i];
    unsigned char em[512], pms[48], rand48[48], out[64];
    int kind;

    rnd(rand48, sizeof(rand48));
    build_tls(em, k, 0x0303, pms);
    ck_assert_int_eq(gpursa_dec_tls_premaster(out, 48, em, k, 0x0303, 0, rand48), 48);
    ck_assert_mem_eq(out, pms, 48);
    /* the negotiated version is accepted only as alt_version */
    build_tls(em, k, 0x0301, pms);
    ck_assert_int_eq(gpursa_dec_tls_premaster(out, 48, em, k, 0x0303, 0x0301, rand48), 48);
    ck_assert_mem_eq(out, pms, 48);
    for (kind = 0; kind < 9; kind++) {
        build_tls(em, k, 0x0303, pms);
        switch (kind) {
        case 0: em[0] = 1; break;
        case 1: em[1] = 1; break;
        case 2: em[2] = 0; break;                     /* zero at PS start */
        case 3: em[k - 50] = 0; break;                /* zero at PS end */
        case 4: em[k - 49] = 7; break;                /* no separator */
        case 5: em[k - 48] = 0x02; break;             /* version major */
        case 6: em[k - 47] = 0x01; break;             /* version minor */
        case 7: em[k - 47] = 0x02; break;             /* neither version */
        case 8: build_tls(em, k, 0x0301, pms); break; /* no alt given */
        }
        memset(out, 0, sizeof(out));
        ck_assert_int_eq(gpursa_dec_tls_premaster(out, sizeof(out), em, k, 0x0303,
                                                  kind == 7 ? 0x0301 : 0, rand48), 48);
        ck_assert_msg(memcmp(out, rand48, 48) == 0, "case %d not randomised", kind);
    }
    ck_assert_int_eq(gpursa_dec_tls_premaster(out, 47, em, k, 0x0303, 0, rand48), -1);
    ck_assert_int_eq(gpursa_dec_tls_premaster(out, 48, em, 58, 0x0303, 0, rand48), -1);
}
END_TEST

static Suite *make_dec_pad_suite(void)
{
    Suite *s = suite_create("dec_pad");
    TCase *tc;
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));

    tc = tcase_create("ct");
    tcase_add_test(tc, ct_helpers_match_plain_comparisons);
    suite_add_tcase(s, tc);

    tc = tcase_create("pkcs1");
    tcase_add_loop_test(tc, pkcs1_valid_every_length, 0, nsizes);
    tcase_add_loop_test(tc, pkcs1_every_wrong_header_byte, 0, nsizes);
    tcase_add_loop_test(tc, pkcs1_no_zero_separator, 0, nsizes);
    tcase_add_loop_test(tc, pkcs1_separator_at_the_limits, 0, nsizes);
    tcase_add_test(tc, pkcs1_public_size_checks);
    suite_add_tcase(s, tc);

    tc = tcase_create("implicit_rejection");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ir_valid_padding_unaffected, 0, nsizes);
    tcase_add_loop_test(tc, ir_invalid_gives_deterministic_synthetic, 0, nsizes);
    tcase_add_test(tc, ir_length_distribution);
    tcase_add_test(tc, prf_blocks_are_hmac_of_counter_label_bits);
    tcase_add_test(tc, kdk_is_hmac_of_hashed_exponent);
    tcase_add_loop_test(tc, ir_published_vectors, 0, (int)IR_NVECTORS);
    suite_add_tcase(s, tc);

    tc = tcase_create("oaep");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, oaep_decodes_default_provider_blocks, 0, 25);
    tcase_add_test(tc, oaep_test_encoder_agrees_with_default);
    tcase_add_loop_test(tc, oaep_structure_errors, 0, 5);
    suite_add_tcase(s, tc);

    tc = tcase_create("tls");
    tcase_add_loop_test(tc, tls_premaster_cases, 0, nsizes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_dec_pad_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
