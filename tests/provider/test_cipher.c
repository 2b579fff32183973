/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RSA decryption through gpursa, through EVP only, cross-checked against
 * OpenSSL's default provider: default encrypts and gpursa decrypts to the
 * same plaintext (and the reverse) for PKCS#1 v1.5, OAEP with several
 * digests, MGF1 digests and labels, and no padding; the TLS premaster mode;
 * implicit rejection (published vectors and properties); parameters; and
 * bad input, which must get a gpursa error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "provider/gpursa_prov.h"
#include "testutil.h"
#include "ir_vectors.h"

#ifndef OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION
# define OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION "implicit-rejection"
#endif
#define GP "provider=gpursa"
#define DF "provider=default"
#define MAXK 512

static OSSL_LIB_CTX *libctx;

/* One key per size in both providers, made once before Check forks. */
typedef TU_KEY TKEY;

enum { K2048, K3072, K4096, K1024, K2049, NKEYS };
/* 2049 bits: k = 257 and n's top byte is 1, a size that is no multiple of 8 */
static TKEY keys[NKEYS] = { { 2048, NULL, NULL }, { 3072, NULL, NULL },
                            { 4096, NULL, NULL }, { 1024, NULL, NULL },
                            { 2049, NULL, NULL } };
#define NMAIN 3     /* the sizes every mode runs at */

static size_t ksize(const TKEY *t)
{
    return (size_t)EVP_PKEY_get_size(t->d);
}

static void rnd(unsigned char *p, size_t n)
{
    ck_assert_int_eq(RAND_bytes(p, (int)n), 1);
}

static size_t rnd_below(size_t n)
{
    unsigned int r;

    rnd((unsigned char *)&r, sizeof(r));
    return r % n;
}

/* Padding parameters as EVP_PKEY_CTX_set_params takes them. */
enum { IR_UNSET, IR_OFF, IR_ON };
typedef struct {
    int pad;
    const char *md, *mgf1;      /* OAEP only; NULL = default */
    const unsigned char *label;
    size_t labellen;
    int ir;                     /* implicit rejection: IR_UNSET leaves the default */
    unsigned int tls_version;   /* TLS premaster mode: the client version */
} ENCP;

static void set_encp(EVP_PKEY_CTX *ctx, const ENCP *e)
{
    OSSL_PARAM params[7], *p = params;
    int pad = e->pad;
    unsigned int ir = e->ir == IR_ON, tls_version = e->tls_version;

    *p++ = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad);
    if (e->md != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST,
                                                (char *)e->md, 0);
    if (e->mgf1 != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST,
                                                (char *)e->mgf1, 0);
    if (e->label != NULL)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL,
                                                 (void *)e->label, e->labellen);
    if (e->ir != IR_UNSET)
        *p++ = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION, &ir);
    if (e->tls_version != 0)
        *p++ = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION,
                                         &tls_version);
    *p = OSSL_PARAM_construct_end();
    ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, params), 1);
}

/* A ctx for |op| on |pkey| in provider |prov|; the operation must really
 * belong to that provider. */
static EVP_PKEY_CTX *op_ctx(EVP_PKEY *pkey, const char *propq, int decrypt,
                            const ENCP *e)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, pkey, propq);

    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(decrypt ? EVP_PKEY_decrypt_init(ctx) : EVP_PKEY_encrypt_init(ctx), 1);
    ck_assert_str_eq(OSSL_PROVIDER_get0_name(EVP_PKEY_CTX_get0_provider(ctx)),
                     strcmp(propq, GP) == 0 ? "gpursa" : "default");
    if (e != NULL)
        set_encp(ctx, e);
    return ctx;
}

static void encrypt_with(EVP_PKEY *pkey, const char *propq, const ENCP *e,
                         const unsigned char *m, size_t mlen,
                         unsigned char *ct, size_t *ctlen)
{
    EVP_PKEY_CTX *ctx = op_ctx(pkey, propq, 0, e);

    *ctlen = MAXK;
    ck_assert_int_eq(EVP_PKEY_encrypt(ctx, ct, ctlen, m, mlen), 1);
    ck_assert_uint_eq(*ctlen, (size_t)EVP_PKEY_get_size(pkey));
    EVP_PKEY_CTX_free(ctx);
}

/* Decrypt; returns EVP_PKEY_decrypt's result, the output in out/outlen. */
static int decrypt_with(EVP_PKEY *pkey, const char *propq, const ENCP *e,
                        const unsigned char *ct, size_t ctlen,
                        unsigned char *out, size_t outsize, size_t *outlen)
{
    EVP_PKEY_CTX *ctx = op_ctx(pkey, propq, 1, e);
    int r;

    *outlen = outsize;
    r = EVP_PKEY_decrypt(ctx, out, outlen, ct, ctlen);
    EVP_PKEY_CTX_free(ctx);
    return r;
}

/* Default encrypts random messages of random lengths (0 and max included);
 * gpursa decrypts them to the same bytes. Then the reverse direction. */
static void roundtrip(const TKEY *t, const ENCP *e, size_t maxlen, int n)
{
    unsigned char m[MAXK], ct[MAXK], out[MAXK];
    size_t ctlen, outlen, mlen;
    int i;

    for (i = 0; i < n; i++) {
        mlen = i == 0 ? 0 : i == 1 ? maxlen : rnd_below(maxlen + 1);
        rnd(m, mlen);
        encrypt_with(t->d, DF, e, m, mlen, ct, &ctlen);
        ck_assert_int_eq(decrypt_with(t->g, GP, e, ct, ctlen, out, sizeof(out), &outlen), 1);
        ck_assert_uint_eq(outlen, mlen);
        ck_assert_mem_eq(out, m, mlen);

        encrypt_with(t->g, GP, e, m, mlen, ct, &ctlen);
        ck_assert_int_eq(decrypt_with(t->d, DF, e, ct, ctlen, out, sizeof(out), &outlen), 1);
        ck_assert_uint_eq(outlen, mlen);
        ck_assert_mem_eq(out, m, mlen);
    }
}

START_TEST(pkcs1_default_and_gpursa_roundtrip)
{
    const TKEY *t = &keys[_i];
    ENCP e = { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };

    roundtrip(t, &e, ksize(t) - 11, 10);
}
END_TEST

/* OAEP digest / MGF1 digest / label combinations; MGF1 differs from the
 * OAEP digest in half of them. */
static const struct { const char *md, *mgf1; int label; } oaep_cases[] = {
    { NULL, NULL, 0 },              /* SHA-1 both, the default */
    { "SHA1", NULL, 1 },
    { "SHA256", NULL, 1 },
    { "SHA384", NULL, 0 },
    { "SHA512", NULL, 1 },
    { "SHA256", "SHA1", 1 },
    { "SHA1", "SHA512", 0 },
    { "SHA512", "SHA256", 1 },
    { "SHA384", "SHA224", 1 },
};
#define NOAEP (int)(sizeof(oaep_cases) / sizeof(oaep_cases[0]))

START_TEST(oaep_default_and_gpursa_roundtrip)
{
    const TKEY *t = &keys[_i / NOAEP];
    int c = _i % NOAEP;
    unsigned char label[40];
    ENCP e = { RSA_PKCS1_OAEP_PADDING, oaep_cases[c].md, oaep_cases[c].mgf1, NULL, 0,
               IR_UNSET, 0 };
    EVP_MD *md = EVP_MD_fetch(NULL, e.md != NULL ? e.md : "SHA1", NULL);
    size_t h = (size_t)EVP_MD_get_size(md);

    if (oaep_cases[c].label) {
        e.labellen = 1 + rnd_below(sizeof(label));
        rnd(label, e.labellen);
        e.label = label;
    }
    roundtrip(t, &e, ksize(t) - 2 * h - 2, 4);
    EVP_MD_free(md);
}
END_TEST

START_TEST(oaep_wrong_label_or_digest_fails)
{
    const TKEY *t = &keys[K2048];
    unsigned char m[32], ct[MAXK], out[MAXK];
    size_t ctlen, outlen;
    ENCP e = { RSA_PKCS1_OAEP_PADDING, "SHA256", "SHA1", (const unsigned char *)"lbl", 3,
               IR_UNSET, 0 };
    ENCP wrong_label = e, wrong_md = e, wrong_mgf1 = e;

    wrong_label.label = (const unsigned char *)"lbm";
    wrong_md.md = "SHA384";
    wrong_mgf1.mgf1 = "SHA256";
    rnd(m, sizeof(m));
    encrypt_with(t->d, DF, &e, m, sizeof(m), ct, &ctlen);
    ck_assert_int_eq(decrypt_with(t->g, GP, &wrong_label, ct, ctlen, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OAEP_DECODING_ERROR));
    ck_assert_int_eq(decrypt_with(t->g, GP, &wrong_md, ct, ctlen, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OAEP_DECODING_ERROR));
    ck_assert_int_eq(decrypt_with(t->g, GP, &wrong_mgf1, ct, ctlen, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OAEP_DECODING_ERROR));
    ck_assert_int_eq(decrypt_with(t->g, GP, &e, ct, ctlen, out, sizeof(out), &outlen), 1);
    ck_assert_mem_eq(out, m, sizeof(m));
}
END_TEST

/* No padding: the raw value comes back, identical to the default's. */
START_TEST(none_default_and_gpursa_roundtrip)
{
    const TKEY *t = &keys[_i];
    size_t k = ksize(t), ctlen, outlen, outlen2;
    unsigned char m[MAXK], ct[MAXK], out[MAXK], out2[MAXK];
    ENCP e = { RSA_NO_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };
    int i;

    for (i = 0; i < 4; i++) {
        rnd(m, k);
        m[0] = (unsigned char)i;          /* below n; 0 gives leading zeros */
        encrypt_with(t->d, DF, &e, m, k, ct, &ctlen);
        ck_assert_int_eq(decrypt_with(t->g, GP, &e, ct, ctlen, out, k, &outlen), 1);
        ck_assert_uint_eq(outlen, k);
        ck_assert_mem_eq(out, m, k);
        /* any ciphertext: both providers agree */
        rnd(ct, k);
        ct[0] &= 0x3f;
        ck_assert_int_eq(decrypt_with(t->g, GP, &e, ct, k, out, k, &outlen), 1);
        ck_assert_int_eq(decrypt_with(t->d, DF, &e, ct, k, out2, k, &outlen2), 1);
        ck_assert_mem_eq(out, out2, k);
    }
}
END_TEST

/* ---- TLS premaster secret ---------------------------------------------------- */

static int tls_decrypt(const TKEY *t, const unsigned char *ct, size_t ctlen,
                       unsigned int client, unsigned int alt,
                       unsigned char *out, size_t outsize, size_t *outlen)
{
    EVP_PKEY_CTX *ctx = op_ctx(t->g, GP, 1, NULL);
    OSSL_PARAM params[4], *p = params;
    int pad = RSA_PKCS1_WITH_TLS_PADDING, r;

    *p++ = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad);
    if (client != 0)
        *p++ = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, &client);
    if (alt != 0)
        *p++ = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, &alt);
    *p = OSSL_PARAM_construct_end();
    ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, params), 1);
    *outlen = 0;
    ck_assert_int_eq(EVP_PKEY_decrypt(ctx, NULL, outlen, ct, ctlen), 1);
    ck_assert_uint_eq(*outlen, 48);
    *outlen = outsize;
    r = EVP_PKEY_decrypt(ctx, out, outlen, ct, ctlen);
    EVP_PKEY_CTX_free(ctx);
    return r;
}

/* A premaster secret carrying |version|, PKCS#1-encrypted by the default
 * provider (as a TLS client does), of |len| bytes. */
static void tls_client(const TKEY *t, unsigned int version, size_t len,
                       unsigned char *pms, unsigned char *ct, size_t *ctlen)
{
    ENCP e = { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };

    rnd(pms, len);
    pms[0] = (unsigned char)(version >> 8);
    pms[1] = (unsigned char)version;
    encrypt_with(t->d, DF, &e, pms, len, ct, ctlen);
}

START_TEST(tls_premaster_valid)
{
    const TKEY *t = &keys[_i];
    unsigned char pms[48], ct[MAXK], out[64];
    size_t ctlen, outlen;

    tls_client(t, 0x0303, 48, pms, ct, &ctlen);
    ck_assert_int_eq(tls_decrypt(t, ct, ctlen, 0x0303, 0, out, sizeof(out), &outlen), 1);
    ck_assert_uint_eq(outlen, 48);
    ck_assert_mem_eq(out, pms, 48);
    /* a client that put the negotiated version, tolerated on request */
    tls_client(t, 0x0301, 48, pms, ct, &ctlen);
    ck_assert_int_eq(tls_decrypt(t, ct, ctlen, 0x0303, 0x0301, out, 48, &outlen), 1);
    ck_assert_uint_eq(outlen, 48);
    ck_assert_mem_eq(out, pms, 48);
}
END_TEST

/* Wrong version or wrong length: 48 random bytes and no error, fresh each
 * time (so nothing tells the caller the check failed). */
START_TEST(tls_premaster_failures_are_random)
{
    const TKEY *t = &keys[_i % NMAIN];
    unsigned char pms[64], ct[MAXK], out1[48], out2[48];
    size_t ctlen, outlen;

    switch (_i / NMAIN) {
    case 0: tls_client(t, 0x0302, 48, pms, ct, &ctlen); break;  /* version */
    case 1: tls_client(t, 0x0301, 48, pms, ct, &ctlen); break;  /* no alt */
    case 2: tls_client(t, 0x0303, 47, pms, ct, &ctlen); break;  /* short */
    case 3: tls_client(t, 0x0303, 49, pms, ct, &ctlen); break;  /* long */
    }
    ck_assert_int_eq(tls_decrypt(t, ct, ctlen, 0x0303, 0, out1, 48, &outlen), 1);
    ck_assert_uint_eq(outlen, 48);
    ck_assert_int_eq(ERR_peek_error(), 0);
    ck_assert_int_eq(tls_decrypt(t, ct, ctlen, 0x0303, 0, out2, 48, &outlen), 1);
    ck_assert(memcmp(out1, pms, 48) != 0);
    ck_assert(memcmp(out2, pms, 48) != 0);
    ck_assert(memcmp(out1, out2, 48) != 0);
}
END_TEST

START_TEST(tls_premaster_errors)
{
    const TKEY *t = &keys[K2048];
    unsigned char pms[48], ct[MAXK], out[64];
    size_t ctlen, outlen;

    tls_client(t, 0x0303, 48, pms, ct, &ctlen);
    /* no client version set */
    ck_assert_int_eq(tls_decrypt(t, ct, ctlen, 0, 0, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_BAD_TLS_VERSION));
    /* less than 48 bytes of output */
    ck_assert_int_eq(tls_decrypt(t, ct, ctlen, 0x0303, 0, out, 47, &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OUTPUT_TOO_SMALL));
}
END_TEST

/* ---- implicit rejection ------------------------------------------------------- */

static EVP_PKEY *vector_key_gpursa(void)
{
    BIO *bio = BIO_new_mem_buf(ir_vector_key_pem, -1);
    EVP_PKEY *d = PEM_read_bio_PrivateKey_ex(bio, NULL, NULL, NULL, libctx, NULL);
    EVP_PKEY *g;

    BIO_free(bio);
    ck_assert_ptr_nonnull(d);
    g = tu_to_gpursa(libctx, d);
    EVP_PKEY_free(d);
    return g;
}

/* The draft's published vectors through EVP with the default settings. */
START_TEST(ir_published_vectors_through_evp)
{
    const struct ir_vector *v = &ir_vectors[_i];
    EVP_PKEY *g = vector_key_gpursa();
    unsigned char *ct, *want = NULL, out[256];
    long ctlen, wantlen = 0;
    size_t outlen;

    ct = OPENSSL_hexstr2buf(v->ciphertext, &ctlen);
    if (!v->hex_plaintext) {
        want = (unsigned char *)OPENSSL_strdup(v->plaintext);
        wantlen = (long)strlen(v->plaintext);
    } else if (v->plaintext[0] != '\0') {
        want = OPENSSL_hexstr2buf(v->plaintext, &wantlen);
    }
    ck_assert_int_eq(decrypt_with(g, GP, NULL, ct, (size_t)ctlen, out, sizeof(out), &outlen), 1);
    ck_assert_msg(outlen == (size_t)wantlen, "%s: %zu bytes, want %ld", v->name, outlen, wantlen);
    if (outlen > 0) /* want is NULL for an empty message: no memcmp with NULL (UBSan) */
        ck_assert_mem_eq(out, want, outlen);
    OPENSSL_free(ct);
    OPENSSL_free(want);
    EVP_PKEY_free(g);
}
END_TEST

static int ir_decrypt(const TKEY *t, int ir, const unsigned char *ct, size_t ctlen,
                      unsigned char *out, size_t *outlen)
{
    EVP_PKEY_CTX *ctx = op_ctx(t->g, GP, 1, NULL);
    OSSL_PARAM params[2];
    unsigned int v = (unsigned int)ir;
    int r;

    if (ir >= 0) {
        params[0] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION, &v);
        params[1] = OSSL_PARAM_construct_end();
        ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, params), 1);
    }
    *outlen = MAXK;
    r = EVP_PKEY_decrypt(ctx, out, outlen, ct, ctlen);
    EVP_PKEY_CTX_free(ctx);
    return r;
}

/* A random ciphertext (almost surely bad padding): with implicit rejection
 * on (default or explicit) no error and the same synthetic message each
 * time, depending on the ciphertext; off: an error. */
START_TEST(ir_on_synthetic_off_error)
{
    const TKEY *t = &keys[_i];
    size_t k = ksize(t), l1, l2, l3;
    unsigned char ct[MAXK], ct2[MAXK], o1[MAXK], o2[MAXK], o3[MAXK];

    rnd(ct, k);
    ct[0] &= 0x3f;
    memcpy(ct2, ct, k);
    ct2[k - 1] ^= 1;
    ck_assert_int_eq(ir_decrypt(t, -1, ct, k, o1, &l1), 1);
    ck_assert_int_eq(ERR_peek_error(), 0);
    ck_assert_uint_le(l1, k - 11);
    ck_assert_int_eq(ir_decrypt(t, 1, ct, k, o2, &l2), 1);
    ck_assert_uint_eq(l2, l1);
    ck_assert_mem_eq(o2, o1, l1);
    ck_assert_int_eq(ir_decrypt(t, 1, ct2, k, o3, &l3), 1);
    ck_assert(l3 != l1 || l1 == 0 || memcmp(o3, o1, l1) != 0);
    ck_assert_int_eq(ir_decrypt(t, 0, ct, k, o3, &l3), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_DECRYPT_FAILED));
}
END_TEST

/* Synthetic lengths spread over [0, k - 11] (8 draws all equal would be a
 * fixed length: probability ~245^-7). */
START_TEST(ir_synthetic_lengths_vary)
{
    const TKEY *t = &keys[K2048];
    size_t k = ksize(t), len, first = 0;
    unsigned char ct[MAXK], out[MAXK];
    int i, differ = 0;

    for (i = 0; i < 8; i++) {
        rnd(ct, k);
        ct[0] &= 0x3f;
        ck_assert_int_eq(ir_decrypt(t, -1, ct, k, out, &len), 1);
        ck_assert_uint_le(len, k - 11);
        if (i == 0)
            first = len;
        differ |= len != first;
    }
    ck_assert(differ);
}
END_TEST

/* ---- ciphertexts shorter than the modulus ----------------------------------- */

/*
 * A ciphertext is an integer below n; some senders strip its leading zero
 * bytes. gpursa must take such input exactly as the running libcrypto's
 * default provider does, in every padding mode and on every backend a
 * machine without a GPU has. Expectations come from the default provider at
 * run time, never from a version number.
 */
static const char *const short_backends[] = { "host", "cpu" };

/* The (key, backend) runs: the host backend's RSA-3072 and 4096 last, in a
 * test case of their own tagged "host-large": the same single operations as
 * its RSA-1024 and 2048 runs, only longer arithmetic (the ThreadSanitizer
 * tree, where that arithmetic is slowest, leaves them out). */
static const struct { int key, backend; } short_runs[] = {
    { K2048, 0 }, { K2048, 1 }, { K3072, 1 }, { K4096, 1 }, { K1024, 0 },
    { K1024, 1 }, { K2049, 0 }, { K2049, 1 }, { K3072, 0 }, { K4096, 0 },
};
#define NSHORT_RUNS (int)(sizeof(short_runs) / sizeof(short_runs[0]))
#define NSHORT_HOST_LARGE 2

static const unsigned char short_label[] = "a label for OAEP";
static const ENCP short_modes[] = {
    { RSA_NO_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 },
    { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 },
    { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_OFF, 0 },
    { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_ON, 0 },
    { RSA_PKCS1_OAEP_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 },
    { RSA_PKCS1_OAEP_PADDING, "SHA256", "SHA1", short_label, sizeof(short_label) - 1,
      IR_UNSET, 0 },
    { RSA_PKCS1_WITH_TLS_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0x0303 },
};
#define NSHORT_MODES (sizeof(short_modes) / sizeof(short_modes[0]))

/* The keys of one test: the default's and gpursa's in the libctx of a
 * backend, n, and what that default provider does: implicit rejection,
 * an empty ciphertext taken as 0. */
typedef struct {
    EVP_PKEY *d, *g;
    BIGNUM *n;
    size_t k;
    int default_ir, default_takes_empty;
} SHORT_KEYS;

static int default_has_implicit_rejection(EVP_PKEY *d)
{
    ENCP pk = { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };
    EVP_PKEY_CTX *ctx = op_ctx(d, DF, 1, &pk);
    int has = OSSL_PARAM_locate_const(EVP_PKEY_CTX_gettable_params(ctx),
                                      OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION) != NULL;

    EVP_PKEY_CTX_free(ctx);
    return has;
}

/* gpursa on |backend| in a fresh libctx (it reads GPURSA_BACKEND at load). */
static OSSL_LIB_CTX *backend_libctx(const char *backend)
{
    OSSL_LIB_CTX *ctx;
    OSSL_PROVIDER *prov;
    OSSL_PARAM params[2];
    char *name = NULL;

    setenv("GPURSA_BACKEND", backend, 1);
    ctx = tu_libctx();
    unsetenv("GPURSA_BACKEND");
    prov = OSSL_PROVIDER_load(ctx, "gpursa");
    params[0] = OSSL_PARAM_construct_utf8_ptr("gpursa-backend", &name, 0);
    params[1] = OSSL_PARAM_construct_end();
    ck_assert_int_eq(OSSL_PROVIDER_get_params(prov, params), 1);
    ck_assert_str_eq(name, backend);
    OSSL_PROVIDER_unload(prov);
    return ctx;
}

/* The encryption a sender does for mode |e|: TLS clients use PKCS#1 v1.5. */
static ENCP sender_params(const ENCP *e)
{
    ENCP s = *e;

    if (s.pad == RSA_PKCS1_WITH_TLS_PADDING)
        s.pad = RSA_PKCS1_PADDING;
    s.ir = IR_UNSET;
    s.tls_version = 0;
    return s;
}

/*
 * A ciphertext made by the default provider whose top |j| bytes are zero:
 * valid padding for mode |e| around a random message (for TLS, a premaster
 * secret with the right version; for no padding, any value below n), the
 * message in m[*mlen]. Fresh encryptions of one message until one starts
 * with j zero bytes: 2^excess tries are expected, excess being how many
 * bits n is longer than 8 * (k - j); 24 * 2^excess tries miss with
 * probability e^-24. Returns 0 when that is too many tries (> 2^10 expected).
 */
static int valid_short_ciphertext(const SHORT_KEYS *sk, const ENCP *e, size_t j,
                                  unsigned char *m, size_t *mlen, unsigned char *ct)
{
    int excess = EVP_PKEY_get_bits(sk->d) - 8 * (int)(sk->k - j);
    ENCP s = sender_params(e);
    EVP_PKEY_CTX *ctx;
    long tries;
    size_t ctlen, i;

    if (excess > 10)
        return 0;
    switch (e->pad) {
    case RSA_NO_PADDING:
        /* any value of k - j bytes is below n: the "message" is its plaintext */
        memset(ct, 0, j);
        rnd(ct + j, sk->k - j);
        *mlen = 0;
        return 1;
    case RSA_PKCS1_WITH_TLS_PADDING:
        *mlen = 48;
        break;
    default:
        *mlen = 1 + rnd_below(16);
        break;
    }
    rnd(m, *mlen);
    if (e->tls_version != 0) {
        m[0] = (unsigned char)(e->tls_version >> 8);
        m[1] = (unsigned char)e->tls_version;
    }
    ctx = op_ctx(sk->d, DF, 0, &s);
    for (tries = 24L << (excess > 0 ? excess : 0); tries > 0; tries--) {
        ctlen = MAXK;
        ck_assert_int_eq(EVP_PKEY_encrypt(ctx, ct, &ctlen, m, *mlen), 1);
        ck_assert_uint_eq(ctlen, sk->k);
        for (i = 0; i < j && ct[i] == 0; i++)
            ;
        if (i == j)
            break;
    }
    EVP_PKEY_CTX_free(ctx);
    ck_assert_msg(tries > 0, "no ciphertext with %zu zero bytes in front", j);
    return 1;
}

/* A ciphertext the default provider's raw operation takes: at most k bytes
 * (an empty one where it takes that) and a value below n. */
static int below_modulus(const SHORT_KEYS *sk, const unsigned char *ct, size_t len)
{
    BIGNUM *c = BN_bin2bn(ct, (int)len, NULL);
    int below;

    ck_assert_ptr_nonnull(c);
    below = len <= sk->k && BN_cmp(c, sk->n) < 0;
    BN_free(c);
    return below;
}

/*
 * ct[len] through both providers in mode |e|: gpursa's answer is the
 * default's (same bytes, or both refuse, gpursa with an error of its own).
 * Where the default provider has no implicit rejection (OpenSSL 3.0) and
 * gpursa uses it, a padding failure is gpursa's synthetic message instead,
 * which must be the one of the ciphertext padded to k bytes. |valid|: the
 * ciphertext came from a real encryption (the TLS mode's output is random
 * otherwise, so only its length is compared).
 */
static void assert_short_as_default(const SHORT_KEYS *sk, const ENCP *e,
                                    const unsigned char *ct, size_t len, int valid,
                                    const char *what)
{
    unsigned char dout[MAXK], gout[MAXK], padded[MAXK], pout[MAXK];
    size_t dlen, glen, plen;
    int rd, rg;

    rd = decrypt_with(sk->d, DF, e, ct, len, dout, sizeof(dout), &dlen);
    ERR_clear_error();
    rg = decrypt_with(sk->g, GP, e, ct, len, gout, sizeof(gout), &glen);
    if (rg != 1)
        ck_assert_msg(ERR_peek_error() != 0, "%s: gpursa refused with no error", what);
    ERR_clear_error();
    if (rd == 1 && e->pad == RSA_PKCS1_WITH_TLS_PADDING && !valid) {
        ck_assert_msg(rg == 1 && glen == 48 && dlen == 48, "%s: TLS mode", what);
    } else if (rd == 1) {
        ck_assert_msg(rg == 1, "%s: default decrypts, gpursa refuses", what);
        ck_assert_msg(glen == dlen && memcmp(gout, dout, dlen) == 0,
                      "%s: %zu bytes differ from the default's %zu", what, glen, dlen);
    } else if (e->pad == RSA_PKCS1_PADDING && e->ir != IR_OFF && !sk->default_ir
               && below_modulus(sk, ct, len) && (len > 0 || sk->default_takes_empty)) {
        memset(padded, 0, sk->k - len);
        memcpy(padded + sk->k - len, ct, len);
        ck_assert_msg(rg == 1, "%s: no synthetic message", what);
        ck_assert_int_eq(decrypt_with(sk->g, GP, e, padded, sk->k, pout, sizeof(pout),
                                      &plen), 1);
        ck_assert_msg(glen == plen && memcmp(gout, pout, plen) == 0,
                      "%s: synthetic message differs from the padded ciphertext's", what);
    } else {
        ck_assert_msg(rg != 1, "%s: default refuses, gpursa decrypts", what);
    }
}

/* The size query and every buffer size around a mode's limits give what
 * the same ciphertext padded to k bytes gets: the same result and error. */
static void assert_short_sizes(const SHORT_KEYS *sk, const ENCP *e,
                               const unsigned char *ct, size_t len)
{
    const size_t k = sk->k;
    const size_t sizes[] = { 0, 1, 47, 48, k - 2 * 20 - 3, k - 2 * 20 - 2, k - 2 * 32 - 3,
                             k - 2 * 32 - 2, k - 12, k - 11, k - 1, k };
    unsigned char full[MAXK], out[MAXK];
    EVP_PKEY_CTX *ctx = op_ctx(sk->g, GP, 1, e);
    size_t qshort = 0, qfull = 0, ls, lf, i;
    unsigned long es, ef;
    int rs, rf;

    memset(full, 0, k - len);
    memcpy(full + k - len, ct, len);
    ck_assert_int_eq(EVP_PKEY_decrypt(ctx, NULL, &qshort, ct, len), 1);
    ck_assert_int_eq(EVP_PKEY_decrypt(ctx, NULL, &qfull, full, k), 1);
    ck_assert_uint_eq(qshort, qfull);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        ls = lf = sizes[i];
        rs = EVP_PKEY_decrypt(ctx, out, &ls, ct, len);
        es = ERR_peek_last_error();
        ERR_clear_error();
        rf = EVP_PKEY_decrypt(ctx, out, &lf, full, k);
        ef = ERR_peek_last_error();
        ERR_clear_error();
        ck_assert_msg(rs == rf && es == ef, "%zu-byte buffer: %d (%lx) for %zu bytes, "
                      "%d (%lx) for %zu", sizes[i], rs, es, len, rf, ef, k);
        if (rs == 1)
            ck_assert_uint_eq(ls, lf);
    }
    EVP_PKEY_CTX_free(ctx);
}

START_TEST(short_ciphertext_decrypts_as_default)
{
    const TKEY *t = &keys[short_runs[_i].key];
    const char *backend = short_backends[short_runs[_i].backend];
    OSSL_LIB_CTX *main_libctx = libctx;
    unsigned char ct[MAXK + 1], m[64], raw[MAXK];
    ENCP none = { RSA_NO_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };
    SHORT_KEYS sk;
    size_t mi, j, len, mlen;
    char what[160];

    libctx = backend_libctx(backend);
    sk.d = tu_import(libctx, t->d, DF);
    sk.g = tu_to_gpursa(libctx, t->d);
    sk.k = ksize(t);
    ck_assert_int_eq(EVP_PKEY_get_bits(t->d), t->bits);
    sk.n = NULL;
    ck_assert(EVP_PKEY_get_bn_param(t->d, OSSL_PKEY_PARAM_RSA_N, &sk.n));
    sk.default_ir = default_has_implicit_rejection(sk.d);
    sk.default_takes_empty = decrypt_with(sk.d, DF, &none, (const unsigned char *)"", 0,
                                          raw, sizeof(raw), &mlen) == 1;
    ERR_clear_error();
    for (mi = 0; mi < NSHORT_MODES; mi++) {
        const ENCP *e = &short_modes[mi];

#define SHORT_CASE(desc, c, l, valid)                                               \
        do {                                                                        \
            snprintf(what, sizeof(what), "%s, %d-bit key, mode %zu, %zu of %zu bytes: %s", \
                     backend, t->bits, mi, (size_t)(l), sk.k, desc);                \
            assert_short_as_default(&sk, e, c, l, valid, what);                     \
        } while (0)
        for (j = 0; j <= 3; j++) {
            len = sk.k - j;
            /* valid padding, from the default provider's encryption */
            if (valid_short_ciphertext(&sk, e, j, m, &mlen, ct)) {
                SHORT_CASE("valid", ct + j, len, 1);
                if (e->pad != RSA_NO_PADDING) {
                    unsigned char out[MAXK];
                    size_t outlen;

                    ck_assert_int_eq(decrypt_with(sk.g, GP, e, ct + j, len, out,
                                                  sizeof(out), &outlen), 1);
                    ck_assert_uint_eq(outlen, mlen);
                    ck_assert_mem_eq(out, m, mlen);
                }
                assert_short_sizes(&sk, e, ct + j, len);
            }
            /* random values of the shorter length (at j = 0 some are >= n) */
            rnd(ct, len);
            SHORT_CASE("random", ct, len, 0);
            assert_short_sizes(&sk, e, ct, len);
            memset(ct, 0, len);
            SHORT_CASE("c = 0", ct, len, 0);
            ct[len - 1] = 1;
            SHORT_CASE("c = 1", ct, len, 0);
            rnd(ct + len - 2, 2);
            SHORT_CASE("c < 2^16", ct, len, 0);
            memset(ct, 0xff, len);
            SHORT_CASE("largest value of the length", ct, len, 0);
        }
        /* what the default refuses gpursa refuses: longer than k, >= n;
         * and an empty ciphertext as the default takes it */
        rnd(ct, sk.k + 1);
        ct[0] = 0;
        ct[1] &= 0x3f;
        SHORT_CASE("one byte longer than k", ct, sk.k + 1, 0);
        ck_assert_int_eq(BN_bn2binpad(sk.n, ct, (int)sk.k), (int)sk.k);
        SHORT_CASE("c = n", ct, sk.k, 0);
        SHORT_CASE("empty", (const unsigned char *)"", 0, 0);
#undef SHORT_CASE
    }
    BN_free(sk.n);
    EVP_PKEY_free(sk.d);
    EVP_PKEY_free(sk.g);
    tu_libctx_free(libctx);
    libctx = main_libctx;
}
END_TEST

/* ---- bad input ------------------------------------------------------------------- */

START_TEST(bad_ciphertext_lengths_and_values)
{
    const TKEY *t = &keys[_i];
    size_t k = ksize(t), outlen;
    unsigned char ct[MAXK + 1], out[MAXK];
    BIGNUM *n = NULL;
    ENCP none = { RSA_NO_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };

    /* shorter ones are integers below n: short_ciphertext_decrypts_as_default */
    rnd(ct, sizeof(ct));
    ct[0] = 0;
    ck_assert_int_eq(decrypt_with(t->g, GP, NULL, ct, k + 1, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_DATA_GREATER_THAN_MOD_LEN));
    /* c = n and c = 2^(8k) - 1 are not ciphertexts */
    ck_assert(EVP_PKEY_get_bn_param(t->d, OSSL_PKEY_PARAM_RSA_N, &n));
    ck_assert_int_eq(BN_bn2binpad(n, ct, (int)k), (int)k);
    ck_assert_int_eq(decrypt_with(t->g, GP, NULL, ct, k, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_INPUT_TOO_LARGE));
    memset(ct, 0xff, k);
    ck_assert_int_eq(decrypt_with(t->g, GP, &none, ct, k, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_INPUT_TOO_LARGE));
    BN_free(n);
}
END_TEST

/* The output must hold the largest message of the mode before decoding. */
START_TEST(output_too_small)
{
    const TKEY *t = &keys[K2048];
    size_t k = ksize(t), outlen;
    unsigned char m[8] = "short!!", ct[MAXK], out[MAXK];
    ENCP pk = { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };
    ENCP oaep = { RSA_PKCS1_OAEP_PADDING, "SHA256", NULL, NULL, 0, IR_UNSET, 0 };
    ENCP none = { RSA_NO_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };

    encrypt_with(t->d, DF, &pk, m, sizeof(m), ct, &outlen);
    ck_assert_int_eq(decrypt_with(t->g, GP, &pk, ct, k, out, k - 12, &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OUTPUT_TOO_SMALL));
    ck_assert_int_eq(decrypt_with(t->g, GP, &pk, ct, k, out, k - 11, &outlen), 1);
    ck_assert_uint_eq(outlen, sizeof(m));

    encrypt_with(t->d, DF, &oaep, m, sizeof(m), ct, &outlen);
    ck_assert_int_eq(decrypt_with(t->g, GP, &oaep, ct, k, out, k - 2 * 32 - 3, &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OUTPUT_TOO_SMALL));
    ck_assert_int_eq(decrypt_with(t->g, GP, &oaep, ct, k, out, k - 2 * 32 - 2, &outlen), 1);
    ck_assert_uint_eq(outlen, sizeof(m));

    ck_assert_int_eq(decrypt_with(t->g, GP, &none, ct, k, out, k - 1, &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OUTPUT_TOO_SMALL));
}
END_TEST

START_TEST(bad_padding_modes)
{
    const TKEY *t = &keys[K2048];
    EVP_PKEY_CTX *ctx = op_ctx(t->g, GP, 1, NULL);
    OSSL_PARAM params[2];
    /* X9.31 is a signature padding: OpenSSL calls it an unknown padding type here */
    const int bad[] = { RSA_X931_PADDING, RSA_PKCS1_PSS_PADDING, 0, 99, -1 };
    static const struct { const char *key, *value; int reason; } bad_strings[] = {
        { OSSL_ASYM_CIPHER_PARAM_PAD_MODE, "x931", GPURSA_R_UNKNOWN_PADDING_TYPE },
        { OSSL_ASYM_CIPHER_PARAM_PAD_MODE, "pss", GPURSA_R_BAD_PADDING_MODE },
        { OSSL_ASYM_CIPHER_PARAM_PAD_MODE, "", GPURSA_R_BAD_PADDING_MODE },
        { OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, "NOT-A-DIGEST", GPURSA_R_BAD_DIGEST },
        { OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, "SHAKE256", GPURSA_R_BAD_DIGEST },
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int pad = bad[i];

        params[0] = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad);
        params[1] = OSSL_PARAM_construct_end();
        ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, params), 0);
        ck_assert(tu_gpursa_error(bad[i] == RSA_X931_PADDING ? GPURSA_R_UNKNOWN_PADDING_TYPE
                                  : GPURSA_R_BAD_PADDING_MODE));
    }
    for (i = 0; i < sizeof(bad_strings) / sizeof(bad_strings[0]); i++) {
        params[0] = OSSL_PARAM_construct_utf8_string(bad_strings[i].key,
                                                     (char *)bad_strings[i].value, 0);
        ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, params), 0);
        ck_assert_msg(tu_gpursa_error(bad_strings[i].reason), "%s", bad_strings[i].value);
    }
    EVP_PKEY_CTX_free(ctx);
}
END_TEST

/* OAEP with SHA-512 needs k >= 130: a 1024-bit key (k = 128) cannot. */
START_TEST(oaep_digest_too_large_for_key)
{
    const TKEY *t = &keys[K1024];
    unsigned char ct[MAXK], out[MAXK];
    size_t outlen;
    ENCP e = { RSA_PKCS1_OAEP_PADDING, "SHA512", NULL, NULL, 0, IR_UNSET, 0 };

    rnd(ct, 128);
    ct[0] = 0;
    ck_assert_int_eq(decrypt_with(t->g, GP, &e, ct, 128, out, sizeof(out), &outlen), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_OAEP_DECODING_ERROR));
}
END_TEST

START_TEST(decrypt_needs_private_key)
{
    const TKEY *t = &keys[K2048];
    OSSL_PARAM *pub = NULL;
    EVP_PKEY_CTX *fctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", GP), *ctx;
    EVP_PKEY *g = NULL;
    unsigned char m[4] = "abc", ct[MAXK];
    size_t ctlen;
    ENCP pk = { RSA_PKCS1_PADDING, NULL, NULL, NULL, 0, IR_UNSET, 0 };

    ck_assert_int_eq(EVP_PKEY_todata(t->d, EVP_PKEY_PUBLIC_KEY, &pub), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata_init(fctx), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(fctx, &g, EVP_PKEY_PUBLIC_KEY, pub), 1);
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, g, GP);
    ck_assert_int_le(EVP_PKEY_decrypt_init(ctx), 0);
    ck_assert(tu_gpursa_error(GPURSA_R_NOT_PRIVATE_KEY));
    /* but it encrypts (delegated), and the private key decrypts */
    encrypt_with(g, GP, &pk, m, sizeof(m), ct, &ctlen);
    {
        unsigned char out[MAXK];
        size_t outlen;

        ck_assert_int_eq(decrypt_with(t->g, GP, &pk, ct, ctlen, out, sizeof(out), &outlen), 1);
        ck_assert_mem_eq(out, m, sizeof(m));
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_CTX_free(fctx);
    EVP_PKEY_free(g);
    OSSL_PARAM_free(pub);
}
END_TEST

/* ---- parameters --------------------------------------------------------------------- */

START_TEST(params_read_back_and_dup)
{
    const TKEY *t = &keys[K2048];
    EVP_PKEY_CTX *ctx = op_ctx(t->g, GP, 1, NULL), *dup;
    const OSSL_PARAM *known;
    const char *names[] = { OSSL_ASYM_CIPHER_PARAM_PAD_MODE, OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST,
                            OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL,
                            OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION,
                            OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION,
                            OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION };
    char padname[16], md[32], mgf1[32];
    int pad = 0, i;
    unsigned int cv = 0, av = 0, ir = 7;
    void *label = NULL;
    size_t labellen = 0, outlen, ctlen;
    unsigned char m[10] = "0123456789", ct[MAXK], out[MAXK];
    ENCP e = { RSA_PKCS1_OAEP_PADDING, "SHA384", "SHA224", (const unsigned char *)"the label",
               9, IR_UNSET, 0 };
    OSSL_PARAM get[3];

    /* defaults: PKCS#1 v1.5 with implicit rejection */
    get[0] = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad);
    get[1] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION, &ir);
    get[2] = OSSL_PARAM_construct_end();
    ck_assert_int_eq(EVP_PKEY_CTX_get_params(ctx, get), 1);
    ck_assert_int_eq(pad, RSA_PKCS1_PADDING);
    ck_assert_uint_eq(ir, 1);

    for (i = 0; i < 2; i++) {
        known = i == 0 ? EVP_PKEY_CTX_gettable_params(ctx) : EVP_PKEY_CTX_settable_params(ctx);
        for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
            ck_assert_msg(OSSL_PARAM_locate_const(known, names[j]) != NULL, "%s", names[j]);
    }
    set_encp(ctx, &e);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING), 1);
    {
        OSSL_PARAM set[3];

        cv = 0x0303;
        av = 0x0301;
        set[0] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, &cv);
        set[1] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, &av);
        set[2] = OSSL_PARAM_construct_end();
        ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, set), 1);
        cv = av = 0;
    }
    {
        OSSL_PARAM all[8];

        all[0] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, padname, sizeof(padname));
        all[1] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, md, sizeof(md));
        all[2] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, mgf1, sizeof(mgf1));
        all[3] = OSSL_PARAM_construct_octet_ptr(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL, &label, 0);
        all[4] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, &cv);
        all[5] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, &av);
        all[6] = OSSL_PARAM_construct_uint(OSSL_ASYM_CIPHER_PARAM_IMPLICIT_REJECTION, &ir);
        all[7] = OSSL_PARAM_construct_end();
        ck_assert_int_eq(EVP_PKEY_CTX_get_params(ctx, all), 1);
        labellen = all[3].return_size;
    }
    ck_assert_str_eq(padname, "oaep");
    ck_assert_str_eq(md, "SHA2-384");
    ck_assert_str_eq(mgf1, "SHA2-224");
    ck_assert_uint_eq(labellen, 9);
    ck_assert_mem_eq(label, "the label", 9);
    ck_assert_uint_eq(cv, 0x0303);
    ck_assert_uint_eq(av, 0x0301);
    /* the EVP helpers read the same */
    ck_assert_int_gt(EVP_PKEY_CTX_get_rsa_padding(ctx, &pad), 0);   /* 3.0 returns the name length */
    ck_assert_int_eq(pad, RSA_PKCS1_OAEP_PADDING);
    ck_assert_int_eq(EVP_PKEY_CTX_get0_rsa_oaep_label(ctx, (unsigned char **)&label), 9);

    /* a duplicate carries the whole state and decrypts */
    encrypt_with(t->d, DF, &e, m, sizeof(m), ct, &ctlen);
    dup = EVP_PKEY_CTX_dup(ctx);
    ck_assert_ptr_nonnull(dup);
    EVP_PKEY_CTX_free(ctx);
    outlen = sizeof(out);
    ck_assert_int_eq(EVP_PKEY_decrypt(dup, out, &outlen, ct, ctlen), 1);
    ck_assert_uint_eq(outlen, sizeof(m));
    ck_assert_mem_eq(out, m, sizeof(m));
    /* size query: the modulus size */
    outlen = 0;
    ck_assert_int_eq(EVP_PKEY_decrypt(dup, NULL, &outlen, ct, ctlen), 1);
    ck_assert_uint_eq(outlen, ksize(t));
    EVP_PKEY_CTX_free(dup);
}
END_TEST

START_TEST(pad_mode_strings)
{
    const TKEY *t = &keys[K2048];
    /* "oeap" is OpenSSL's historical spelling; a mode reads back by its name */
    static const struct { const char *name; int pad; const char *back; } modes[] = {
        { "pkcs1", RSA_PKCS1_PADDING, "pkcs1" }, { "none", RSA_NO_PADDING, "none" },
        { "oaep", RSA_PKCS1_OAEP_PADDING, "oaep" }, { "oeap", RSA_PKCS1_OAEP_PADDING, "oaep" },
    };
    size_t i;

    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        EVP_PKEY_CTX *ctx = op_ctx(t->g, GP, 1, NULL);
        OSSL_PARAM p[2];
        char name[16] = "";
        int pad = -1;

        p[0] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE,
                                                (char *)modes[i].name, 0);
        p[1] = OSSL_PARAM_construct_end();
        ck_assert_int_eq(EVP_PKEY_CTX_set_params(ctx, p), 1);
        p[0] = OSSL_PARAM_construct_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad);
        ck_assert_int_eq(EVP_PKEY_CTX_get_params(ctx, p), 1);
        ck_assert_int_eq(pad, modes[i].pad);
        p[0] = OSSL_PARAM_construct_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, name, sizeof(name));
        ck_assert_int_eq(EVP_PKEY_CTX_get_params(ctx, p), 1);
        ck_assert_str_eq(name, modes[i].back);
        EVP_PKEY_CTX_free(ctx);
    }
}
END_TEST

static Suite *make_cipher_suite(void)
{
    Suite *s = suite_create("cipher");
    TCase *tc;

    tc = tcase_create("roundtrip");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, pkcs1_default_and_gpursa_roundtrip, 0, NMAIN);
    tcase_add_loop_test(tc, oaep_default_and_gpursa_roundtrip, 0, NMAIN * NOAEP);
    tcase_add_test(tc, oaep_wrong_label_or_digest_fails);
    tcase_add_loop_test(tc, none_default_and_gpursa_roundtrip, 0, NMAIN);
    suite_add_tcase(s, tc);

    tc = tcase_create("tls");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, tls_premaster_valid, 0, NMAIN);
    tcase_add_loop_test(tc, tls_premaster_failures_are_random, 0, NMAIN * 4);
    tcase_add_test(tc, tls_premaster_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("implicit_rejection");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ir_published_vectors_through_evp, 0, (int)IR_NVECTORS);
    tcase_add_loop_test(tc, ir_on_synthetic_off_error, 0, NMAIN);
    tcase_add_test(tc, ir_synthetic_lengths_vary);
    suite_add_tcase(s, tc);

    tc = tcase_create("short_ciphertext");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, short_ciphertext_decrypts_as_default, 0,
                        NSHORT_RUNS - NSHORT_HOST_LARGE);
    suite_add_tcase(s, tc);
    tc = tcase_create("short_ciphertext_host_large");
    tcase_set_tags(tc, "host-large");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, short_ciphertext_decrypts_as_default,
                        NSHORT_RUNS - NSHORT_HOST_LARGE, NSHORT_RUNS);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, bad_ciphertext_lengths_and_values, 0, NMAIN);
    tcase_add_test(tc, output_too_small);
    tcase_add_test(tc, bad_padding_modes);
    tcase_add_test(tc, oaep_digest_too_large_for_key);
    tcase_add_test(tc, decrypt_needs_private_key);
    suite_add_tcase(s, tc);

    tc = tcase_create("params");
    tcase_add_test(tc, params_read_back_and_dup);
    tcase_add_test(tc, pad_mode_strings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_with_keys(make_cipher_suite, CK_NORMAL, &libctx, keys, NKEYS, NULL);
}
