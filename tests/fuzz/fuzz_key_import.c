/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz key import into gpursa (EVP_PKEY_fromdata) with malformed and hostile
 * n, e, d, factors, exponents and coefficients (off by one, bit flips, zero,
 * one, huge, swapped, wrong types), then use the key. An import that fails
 * must raise an error; a key gpursa accepts must never give a wrong answer:
 * its signatures verify under the n and e it holds, and its decryptions of
 * what (n, e) encrypted give the message back. Failing loudly is fine.
 *
 * Input: flags (bit0 host backend, bits1-2 selection, bit3 sign, bit4
 * decrypt), base key index, then per component an op byte and its operand
 * (see component_value), then the message.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "fuzz_common.h"

static const char *const components[] = {
    OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_D,
    OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_FACTOR3,
    OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_EXPONENT3,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT1, OSSL_PKEY_PARAM_RSA_COEFFICIENT2,
};
#define NCOMP (sizeof(components) / sizeof(components[0]))

/* Inconsistent keys gpursa answered wrongly exactly as the default provider does. */
static unsigned long tolerated_wrong;

static const int selections[] = {
    EVP_PKEY_KEYPAIR, EVP_PKEY_PUBLIC_KEY, OSSL_KEYMGMT_SELECT_PRIVATE_KEY, OSSL_KEYMGMT_SELECT_ALL
};

typedef struct {
    BIGNUM *base[NCOMP];           /* the valid key's parts (NULL if it has none) */
    OSSL_PARAM params[NCOMP + 1];
    unsigned char *blocks[NCOMP];
    size_t block_sizes[NCOMP];
    size_t n;
} import_case;

/* The component's value as chosen by the input; NULL = leave it out. */
static BIGNUM *component_value(import_case *ic, size_t i, fz_input *in, unsigned *type)
{
    uint8_t op = fz_u8(in);
    BIGNUM *v = NULL;
    const uint8_t *raw;
    size_t len;

    *type = OSSL_PARAM_UNSIGNED_INTEGER;
    switch (op % 12) {
    case 1: v = ic->base[i] ? BN_dup(ic->base[i]) : NULL; break;
    case 2:                                     /* one bit flipped */
        if (ic->base[i] && (v = BN_dup(ic->base[i])) != NULL) {
            int bit = fz_u16(in) % (BN_num_bits(v) + 8);

            BN_is_bit_set(v, bit) ? BN_clear_bit(v, bit) : BN_set_bit(v, bit);
        }
        break;
    case 3:                                     /* off by one, either way */
        if (ic->base[i] && (v = BN_dup(ic->base[i])) != NULL)
            (fz_u8(in) & 1) ? BN_add_word(v, 1) : BN_sub_word(v, 1);
        break;
    case 4: v = BN_new(); break;                /* zero */
    case 5: v = BN_new(); if (v) BN_one(v); break;
    case 6:                                     /* raw bytes */
        raw = fz_bytes(in, fz_u16(in) % 1100, &len);
        v = BN_bin2bn(raw, (int)len, NULL);
        break;
    case 7:                                     /* huge: up to 65535 bits of ones */
        v = BN_new();
        if (v != NULL) {
            int bits = fz_u16(in);

            BN_set_bit(v, bits);
            BN_sub_word(v, 1);
        }
        break;
    case 8:                                     /* another component's value */
        op = fz_u8(in) % NCOMP;
        v = ic->base[op] ? BN_dup(ic->base[op]) : NULL;
        break;
    case 9: *type = OSSL_PARAM_UTF8_STRING; v = BN_new(); if (v) BN_set_word(v, 65537); break;
    case 10: *type = OSSL_PARAM_INTEGER;        /* a signed, negative value */
        if (ic->base[i] && (v = BN_dup(ic->base[i])) != NULL)
            BN_set_negative(v, 1);
        break;
    case 11: *type = OSSL_PARAM_OCTET_STRING; v = BN_new(); if (v) BN_set_word(v, 3); break;
    default: break;
    }
    return v;
}

/* Encode v as the param type says, in an exactly-sized block. */
static void push_param(import_case *ic, const char *name, const BIGNUM *v, unsigned type)
{
    size_t len = (size_t)BN_num_bytes(v) + 1;  /* room for a sign bit */
    unsigned char *block;
    OSSL_PARAM *p = &ic->params[ic->n];

    if (type == OSSL_PARAM_UTF8_STRING)
        len = 6;                                /* the number as text: "65537" */
    if ((block = OPENSSL_zalloc(len)) == NULL)
        abort();
    ic->block_sizes[ic->n] = len;
    if (type == OSSL_PARAM_UTF8_STRING) {
        memcpy(block, "65537", 6);
        len = 5;
    } else if (type == OSSL_PARAM_INTEGER) {
        /* two's complement, native (little-endian) order */
        BIGNUM *mag = BN_dup(v);
        size_t j;

        BN_set_negative(mag, 0);
        BN_bn2lebinpad(mag, block, (int)len);
        for (j = 0; j < len; j++)
            block[j] = (unsigned char)~block[j];
        for (j = 0; j < len && ++block[j] == 0; j++)
            ;
        BN_free(mag);
    } else {
        BN_bn2nativepad(v, block, (int)len);
    }
    p->key = name;
    p->data_type = type;
    p->data = block;
    p->data_size = len;
    p->return_size = OSSL_PARAM_UNMODIFIED;
    ic->blocks[ic->n++] = block;
}

/* (n, e) of the imported key as a public key in the default provider. */
static EVP_PKEY *public_of(EVP_PKEY *gkey)
{
    BIGNUM *n = NULL, *e = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(fz_default_libctx(), "RSA", NULL);
    EVP_PKEY *pub = NULL;

    if (EVP_PKEY_get_bn_param(gkey, OSSL_PKEY_PARAM_RSA_N, &n)
        && EVP_PKEY_get_bn_param(gkey, OSSL_PKEY_PARAM_RSA_E, &e)
        && bld != NULL && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n)
        && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e)
        && (params = OSSL_PARAM_BLD_to_param(bld)) != NULL
        && ctx != NULL && EVP_PKEY_fromdata_init(ctx) > 0)
        EVP_PKEY_fromdata(ctx, &pub, EVP_PKEY_PUBLIC_KEY, params);
    BN_free(n);
    BN_free(e);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    return pub;
}

/* PKCS#1 v1.5 SHA-256 signature of md32 by key in libctx (propq); 1 if it verifies under pub. */
static int sign_verifies(OSSL_LIB_CTX *libctx, EVP_PKEY *key, const char *propq, EVP_PKEY *pub,
                         const unsigned char *md32, int *signed_ok)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(libctx, key, propq), *v = NULL;
    unsigned char sig[8192];
    size_t siglen = sizeof(sig);
    int ok = 0;

    *signed_ok = ctx != NULL && EVP_PKEY_sign_init(ctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0
        && EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) > 0
        && EVP_PKEY_sign(ctx, sig, &siglen, md32, 32) > 0;
    if (*signed_ok) {
        v = EVP_PKEY_CTX_new_from_pkey(fz_default_libctx(), pub, NULL);
        ok = v != NULL && EVP_PKEY_verify_init(v) > 0
            && EVP_PKEY_CTX_set_rsa_padding(v, RSA_PKCS1_PADDING) > 0
            && EVP_PKEY_CTX_set_signature_md(v, EVP_sha256()) > 0
            && EVP_PKEY_verify(v, sig, siglen, md32, 32) == 1;
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_CTX_free(v);
    return ok;
}

/* Does OpenSSL's default provider, given the same parts, sign correctly? */
static int default_signs_correctly(const OSSL_PARAM *params, int selection, EVP_PKEY *pub,
                                   const unsigned char *md32)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(fz_default_libctx(), "RSA", NULL);
    EVP_PKEY *dkey = NULL;
    int signed_ok = 0, ok;

    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &dkey, selection, (OSSL_PARAM *)params) <= 0)
        ok = -1;                    /* the default refuses the key outright */
    else
        ok = sign_verifies(fz_default_libctx(), dkey, NULL, pub, md32, &signed_ok)
             || !signed_ok ? 1 : 0;
    EVP_PKEY_free(dkey);
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

/*
 * Sign a SHA-256 digest with gpursa; a signature must verify under (n, e).
 * One exception is tolerated unless FUZZ_STRICT_KEYS is set: a key whose
 * parts contradict each other and that OpenSSL's default provider also signs
 * wrongly with (n, e and a wrong d, no CRT parts: the default computes
 * c^d mod n and does not check it). gpursa then answers as OpenSSL does.
 * CRT parts that contradict each other or d are refused at import.
 */
static void use_sign(int backend, EVP_PKEY *gkey, EVP_PKEY *pub, const unsigned char *md32,
                     const OSSL_PARAM *params, int selection)
{
    int signed_ok, dflt;

    if (sign_verifies(fz_gpursa_libctx(backend), gkey, "provider=gpursa", pub, md32, &signed_ok))
        return;
    if (!signed_ok) {
        fz_expect_error("gpursa sign with an imported key");
    } else {
        dflt = default_signs_correctly(params, selection, pub, md32);
        if (dflt != 0 || getenv("FUZZ_STRICT_KEYS") != NULL)
            fz_fail("gpursa accepted a key and signed with it, but the signature does not "
                    "verify under the key's own n, e (default provider: %s)",
                    dflt < 0 ? "refuses the key" : dflt ? "signs correctly" : "also wrong");
        if (tolerated_wrong++ == 0)
            fprintf(stderr, "note: an inconsistent key without CRT parts "
                    "signs wrongly, as with OpenSSL's default provider; FUZZ_STRICT_KEYS=1 "
                    "makes this fatal\n");
    }
    ERR_clear_error();
}

/* Encrypt under (n, e), decrypt with gpursa: a success must give msg back. */
static void use_decrypt(int backend, EVP_PKEY *gkey, EVP_PKEY *pub, const unsigned char *msg)
{
    EVP_PKEY_CTX *e = EVP_PKEY_CTX_new_from_pkey(fz_default_libctx(), pub, NULL);
    EVP_PKEY_CTX *d = EVP_PKEY_CTX_new_from_pkey(fz_gpursa_libctx(backend), gkey,
                                                 "provider=gpursa");
    unsigned char ct[8192], pt[8192];
    size_t ctlen = sizeof(ct), ptlen = sizeof(pt);

    if (e != NULL && d != NULL && EVP_PKEY_encrypt_init(e) > 0
        && EVP_PKEY_CTX_set_rsa_padding(e, RSA_PKCS1_OAEP_PADDING) > 0
        && EVP_PKEY_encrypt(e, ct, &ctlen, msg, 16) > 0
        && EVP_PKEY_decrypt_init(d) > 0
        && EVP_PKEY_CTX_set_rsa_padding(d, RSA_PKCS1_OAEP_PADDING) > 0) {
        if (EVP_PKEY_decrypt(d, pt, &ptlen, ct, ctlen) > 0) {
            if (ptlen != 16 || memcmp(pt, msg, 16) != 0)
                fz_fail("gpursa accepted a key and decrypted a wrong plaintext");
        } else {
            fz_expect_error("gpursa decrypt with an imported key");
        }
    }
    EVP_PKEY_CTX_free(e);
    EVP_PKEY_CTX_free(d);
    ERR_clear_error();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = { data, size };
    import_case ic;
    uint8_t flags;
    int backend, key, selection;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *gkey = NULL, *pub = NULL;
    unsigned char msg[32] = { 0 };
    const uint8_t *m;
    size_t i, mlen;

    if (size < 2)
        return 0;
    memset(&ic, 0, sizeof(ic));
    flags = fz_u8(&in);
    backend = flags & 1;
    selection = selections[(flags >> 1) & 3];
    key = fz_u8(&in) % FZ_NKEYS;
    for (i = 0; i < NCOMP; i++) {
        EVP_PKEY_get_bn_param(fz_default_key(key), components[i], &ic.base[i]);
    }
    ERR_clear_error();
    for (i = 0; i < NCOMP; i++) {
        unsigned type;
        BIGNUM *v = component_value(&ic, i, &in, &type);

        if (v != NULL)
            push_param(&ic, components[i], v, type);
        BN_clear_free(v);
    }
    ic.params[ic.n] = OSSL_PARAM_construct_end();
    m = fz_bytes(&in, sizeof(msg), &mlen);
    memcpy(msg, m, mlen);

    ctx = EVP_PKEY_CTX_new_from_name(fz_gpursa_libctx(backend), "RSA", "provider=gpursa");
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0)
        fz_fail("gpursa fromdata init");
    if (EVP_PKEY_fromdata(ctx, &gkey, selection, ic.params) <= 0) {
        fz_expect_error("gpursa key import");
    } else if ((pub = public_of(gkey)) != NULL) {
        if (flags & 8)
            use_sign(backend, gkey, pub, msg, ic.params, selection);
        if (flags & 16)
            use_decrypt(backend, gkey, pub, msg);
    }
    ERR_clear_error();
    EVP_PKEY_free(gkey);
    EVP_PKEY_free(pub);
    EVP_PKEY_CTX_free(ctx);
    for (i = 0; i < NCOMP; i++) {
        BN_clear_free(ic.base[i]);
        if (i < ic.n)
            OPENSSL_clear_free(ic.blocks[i], ic.block_sizes[i]);
    }
    return 0;
}
