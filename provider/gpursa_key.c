/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa's own RSA key: import with checks, export, copy, and the same key
 * in the fallback library context. Private numbers live in secure-heap
 * BIGNUMs and are cleared on free. OSSL_PARAM_BLD puts secure BIGNUMs in a
 * separate secure block that OSSL_PARAM_free clears, so parameter arrays
 * built from our keys do not leave private numbers behind either.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include "provider/gpursa_prov.h"

#define GPURSA_MIN_BITS 512
#define GPURSA_MAX_BITS 16384
/* OpenSSL names up to ten factors; we accept GPURSA_MAX_PRIMES and reject more. */
#define GPURSA_NAMED_PRIMES 10

static const char *const factor_names[GPURSA_NAMED_PRIMES] = {
    OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_FACTOR3,
    OSSL_PKEY_PARAM_RSA_FACTOR4, OSSL_PKEY_PARAM_RSA_FACTOR5, OSSL_PKEY_PARAM_RSA_FACTOR6,
    OSSL_PKEY_PARAM_RSA_FACTOR7, OSSL_PKEY_PARAM_RSA_FACTOR8, OSSL_PKEY_PARAM_RSA_FACTOR9,
    OSSL_PKEY_PARAM_RSA_FACTOR10
};
static const char *const exponent_names[GPURSA_NAMED_PRIMES] = {
    OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_EXPONENT3,
    OSSL_PKEY_PARAM_RSA_EXPONENT4, OSSL_PKEY_PARAM_RSA_EXPONENT5, OSSL_PKEY_PARAM_RSA_EXPONENT6,
    OSSL_PKEY_PARAM_RSA_EXPONENT7, OSSL_PKEY_PARAM_RSA_EXPONENT8, OSSL_PKEY_PARAM_RSA_EXPONENT9,
    OSSL_PKEY_PARAM_RSA_EXPONENT10
};
/* coefficient i belongs to prime i + 1 (coefficient1 = qinv) */
static const char *const coeff_names[GPURSA_NAMED_PRIMES - 1] = {
    OSSL_PKEY_PARAM_RSA_COEFFICIENT1, OSSL_PKEY_PARAM_RSA_COEFFICIENT2,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT3, OSSL_PKEY_PARAM_RSA_COEFFICIENT4,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT5, OSSL_PKEY_PARAM_RSA_COEFFICIENT6,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT7, OSSL_PKEY_PARAM_RSA_COEFFICIENT8,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT9
};

/* The CRT numbers of a key in one uniform shape. */
typedef struct {
    BIGNUM *factor[GPURSA_MAX_PRIMES];
    BIGNUM *exponent[GPURSA_MAX_PRIMES];
    BIGNUM *coeff[GPURSA_MAX_PRIMES - 1];
} key_crt;

static void key_crt_get(const GPURSA_KEY *key, key_crt *c)
{
    int i;

    c->factor[0] = key->p;
    c->factor[1] = key->q;
    c->exponent[0] = key->dp;
    c->exponent[1] = key->dq;
    c->coeff[0] = key->qinv;
    for (i = 0; i < GPURSA_MAX_PRIMES - 2; i++) {
        c->factor[i + 2] = key->mp_prime[i];
        c->exponent[i + 2] = key->mp_exp[i];
        c->coeff[i + 1] = key->mp_coeff[i];
    }
}

static void key_crt_set(GPURSA_KEY *key, const key_crt *c)
{
    int i;

    key->p = c->factor[0];
    key->q = c->factor[1];
    key->dp = c->exponent[0];
    key->dq = c->exponent[1];
    key->qinv = c->coeff[0];
    for (i = 0; i < GPURSA_MAX_PRIMES - 2; i++) {
        key->mp_prime[i] = c->factor[i + 2];
        key->mp_exp[i] = c->exponent[i + 2];
        key->mp_coeff[i] = c->coeff[i + 1];
    }
}

static void key_crt_clear_free(key_crt *c)
{
    int i;

    for (i = 0; i < GPURSA_MAX_PRIMES; i++) {
        BN_clear_free(c->factor[i]);
        BN_clear_free(c->exponent[i]);
        if (i < GPURSA_MAX_PRIMES - 1)
            BN_clear_free(c->coeff[i]);
    }
    memset(c, 0, sizeof(*c));
}

GPURSA_KEY *gpursa_key_new(GPURSA_PROV_CTX *provctx)
{
    GPURSA_KEY *key = OPENSSL_zalloc(sizeof(*key));

    if (key == NULL || (key->lock = CRYPTO_THREAD_lock_new()) == NULL) {
        OPENSSL_free(key);
        GPURSA_RAISE(provctx, GPURSA_R_MALLOC);
        return NULL;
    }
    key->provctx = provctx;
    return key;
}

/* Drop every number (private ones wiped), keep the key object. */
static void key_clear(GPURSA_KEY *key)
{
    key_crt c;

    key_crt_get(key, &c);
    key_crt_clear_free(&c);
    key_crt_set(key, &c);
    BN_free(key->n);
    BN_free(key->e);
    BN_clear_free(key->d);
    key->n = key->e = key->d = NULL;
    key->nprimes = 0;
    EVP_PKEY_free(key->fallback);
    key->fallback = NULL;
    gpursa_queue_key_free(key->qkey);   /* wipes its copies, host and device */
    key->qkey = NULL;
}

void gpursa_key_free(GPURSA_KEY *key)
{
    if (key == NULL)
        return;
    key_clear(key);
    CRYPTO_THREAD_lock_free(key->lock);
    OPENSSL_free(key);
}

int gpursa_key_is_private(const GPURSA_KEY *key)
{
    return key != NULL && key->n != NULL && key->d != NULL;
}

int gpursa_key_bits(const GPURSA_KEY *key)
{
    return key != NULL && key->n != NULL ? BN_num_bits(key->n) : 0;
}

int gpursa_key_size(const GPURSA_KEY *key)
{
    return key != NULL && key->n != NULL ? BN_num_bytes(key->n) : 0;
}

int gpursa_key_is_crt2(const GPURSA_KEY *key)
{
    return gpursa_key_is_private(key) && key->nprimes == 2 && key->p != NULL
        && key->q != NULL && key->dp != NULL && key->dq != NULL && key->qinv != NULL;
}

/* Read one number: 1 found, 0 absent, -1 malformed. secret numbers go to
 * the secure heap. */
static int key_param_bn(const OSSL_PARAM params[], const char *name, int secret,
                        BIGNUM **out)
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, name);

    if (p == NULL)
        return 0;
    *out = secret ? BN_secure_new() : BN_new();
    if (*out == NULL || !OSSL_PARAM_get_BN(p, out)) {
        BN_clear_free(*out);
        *out = NULL;
        return -1;
    }
    return 1;
}

/* a == b in time independent of their values; buf holds 2 * len bytes. A
 * value longer than len bytes differs from any that fits. */
static int key_bn_eq_ct(const BIGNUM *a, const BIGNUM *b, unsigned char *buf, int len)
{
    int ra = BN_bn2binpad(a, buf, len), rb = BN_bn2binpad(b, buf + len, len);

    return (ra == len) & (rb == len) & (CRYPTO_memcmp(buf, buf + len, (size_t)len) == 0);
}

/*
 * The CRT parts must agree with each other, as SP 800-56B's checks of them
 * (OpenSSL's ossl_rsa_check_crt_components) and with d: primes pairwise
 * distinct; for each prime r_i, d_i = d mod (r_i - 1) and e * d_i = 1 mod
 * (r_i - 1); the coefficient of q is q^-1 mod p (< p), that of r_i (i >= 3)
 * is (r_1 ... r_{i-1})^-1 mod r_i (< r_i). The default provider takes keys
 * that fail these and recomputes without CRT when a result is wrong; gpursa
 * refuses them at import, so a bad key never reaches a device (where it
 * would fail every check) nor costs a recomputation per operation. Secret
 * values: constant-time arithmetic flags and comparisons; once per key.
 * n is the product of the primes (checked before), so every value fits in
 * n's length.
 */
static int key_check_crt(GPURSA_PROV_CTX *ctx, const BIGNUM *n, const BIGNUM *e,
                         const BIGNUM *d, const key_crt *c, int nprimes, BN_CTX *bnctx)
{
    int len = BN_num_bytes(n), i, j, ok = 0;
    unsigned char *buf = OPENSSL_secure_malloc(2 * (size_t)len);
    BIGNUM *pm1, *t, *prod;
    const char *why;
    int x, y;                      /* the numbers the message names */

    BN_CTX_start(bnctx);
    pm1 = BN_CTX_get(bnctx);
    t = BN_CTX_get(bnctx);
    prod = BN_CTX_get(bnctx);
    if (buf == NULL || prod == NULL) {
        GPURSA_RAISE(ctx, GPURSA_R_MALLOC);
        goto end;
    }
    BN_set_flags(pm1, BN_FLG_CONSTTIME);
    BN_set_flags(t, BN_FLG_CONSTTIME);
    BN_set_flags(prod, BN_FLG_CONSTTIME);
    BN_set_flags((BIGNUM *)d, BN_FLG_CONSTTIME);
    for (i = 0; i < nprimes; i++) {
        BN_set_flags(c->factor[i], BN_FLG_CONSTTIME);
        BN_set_flags(c->exponent[i], BN_FLG_CONSTTIME);
        if (i > 0)
            BN_set_flags(c->coeff[i - 1], BN_FLG_CONSTTIME);
    }
    if (!BN_one(prod))
        goto internal;
    /* prod: the product of the primes before r_i */
    for (i = 0; i < nprimes; i++) {
        /* coefficient i belongs to prime i + 1, q's (coefficient 1) to p */
        const BIGNUM *m = i == 1 ? c->factor[0] : c->factor[i];

        x = y = i + 1;
        for (j = 0; j < i; j++)
            if (key_bn_eq_ct(c->factor[i], c->factor[j], buf, len)) {
                why = "primes %d and %d are equal";
                x = j + 1;
                goto bad;
            }
        if (BN_copy(pm1, c->factor[i]) == NULL || !BN_sub_word(pm1, 1)
            || !BN_mod(t, d, pm1, bnctx))
            goto internal;
        if (!key_bn_eq_ct(t, c->exponent[i], buf, len)) {
            why = "CRT exponent %d is not d mod (prime %d - 1)";
            goto bad;
        }
        if (!BN_mod_mul(t, e, c->exponent[i], pm1, bnctx))
            goto internal;
        if (!key_bn_eq_ct(t, BN_value_one(), buf, len)) {
            why = "CRT exponent %d times e is not 1 mod (prime %d - 1)";
            goto bad;
        }
        /* coefficient i: q^-1 mod p, or (r_1 ... r_{i-1})^-1 mod r_i */
        if (i > 0) {
            if (!BN_mod(t, c->coeff[i - 1], m, bnctx))
                goto internal;
            if (!key_bn_eq_ct(t, c->coeff[i - 1], buf, len)) {
                why = "CRT coefficient %d is not below prime %d";
                x = i;
                y = i == 1 ? 1 : i + 1;
                goto bad;
            }
            if (!BN_mod_mul(t, c->coeff[i - 1], i == 1 ? c->factor[1] : prod, m, bnctx))
                goto internal;
            if (!key_bn_eq_ct(t, BN_value_one(), buf, len)) {
                why = "CRT coefficient %d is not the inverse prime %d needs";
                x = i;
                y = i == 1 ? 1 : i + 1;
                goto bad;
            }
        }
        if (!BN_mul(prod, prod, c->factor[i], bnctx))
            goto internal;
    }
    ok = 1;
    goto end;
bad:
    GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, why, x, y);
    goto end;
internal:
    GPURSA_RAISE(ctx, GPURSA_R_INTERNAL);
end:
    BN_CTX_end(bnctx);
    OPENSSL_secure_clear_free(buf, 2 * (size_t)len);
    return ok;
}

/* Check the numbers of a key about to be imported; raise and return 0 if bad. */
static int key_check(GPURSA_PROV_CTX *ctx, const BIGNUM *n, const BIGNUM *e,
                     const BIGNUM *d, const key_crt *c, int nprimes)
{
    int bits = BN_num_bits(n);
    BN_CTX *bnctx = NULL;
    BIGNUM *prod = NULL;
    int i, ok = 0;

    if (!BN_is_odd(n)) {
        GPURSA_RAISE(ctx, GPURSA_R_EVEN_MODULUS);
        return 0;
    }
    if (bits < GPURSA_MIN_BITS) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_KEY_TOO_SMALL, "modulus has %d bits", bits);
        return 0;
    }
    if (bits > GPURSA_MAX_BITS) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_KEY_TOO_LARGE, "modulus has %d bits", bits);
        return 0;
    }
    if (!BN_is_odd(e) || BN_num_bits(e) < 2 || BN_cmp(e, n) >= 0) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, "public exponent must be odd, >= 3 and < n");
        return 0;
    }
    if (d != NULL && BN_is_zero(d)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, "private exponent is zero");
        return 0;
    }
    if (nprimes == 0)
        return 1;
    /* The product of the primes must be n, or CRT would give wrong results. */
    if ((bnctx = BN_CTX_secure_new()) == NULL || (prod = BN_secure_new()) == NULL
        || !BN_one(prod)) {
        GPURSA_RAISE(ctx, GPURSA_R_MALLOC);
        goto end;
    }
    for (i = 0; i < nprimes; i++) {
        if (BN_cmp(c->factor[i], BN_value_one()) <= 0) {
            GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, "prime %d is not > 1", i + 1);
            goto end;
        }
        if (!BN_mul(prod, prod, c->factor[i], bnctx)) {
            GPURSA_RAISE(ctx, GPURSA_R_INTERNAL);
            goto end;
        }
    }
    if (BN_cmp(prod, n) != 0) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, "product of the primes differs from n");
        goto end;
    }
    ok = key_check_crt(ctx, n, e, d, c, nprimes, bnctx);
end:
    BN_clear_free(prod);
    BN_CTX_free(bnctx);
    return ok;
}

int gpursa_key_fromdata(GPURSA_KEY *key, int selection, const OSSL_PARAM params[])
{
    GPURSA_PROV_CTX *ctx = key->provctx;
    BIGNUM *n = NULL, *e = NULL, *d = NULL;
    key_crt c;
    int nf = 0, ne = 0, nc = 0, i, r;

    memset(&c, 0, sizeof(c));
    if ((selection & OSSL_KEYMGMT_SELECT_KEYPAIR) == 0)
        return 1;               /* RSA has no domain parameters */
    if (key_param_bn(params, OSSL_PKEY_PARAM_RSA_N, 0, &n) < 0
        || key_param_bn(params, OSSL_PKEY_PARAM_RSA_E, 0, &e) < 0)
        goto malformed;
    if (n == NULL || e == NULL) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_MISSING_KEY_PART, "RSA key needs n and e");
        goto err;
    }
    if ((selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) != 0) {
        if (key_param_bn(params, OSSL_PKEY_PARAM_RSA_D, 1, &d) < 0)
            goto malformed;
        /* Factors, exponents and coefficients must come as complete sets. */
        for (i = 0; i < GPURSA_NAMED_PRIMES; i++) {
            BIGNUM *f = NULL, *x = NULL, *t = NULL;
            int rf, rx, rt = 0;

            rf = key_param_bn(params, factor_names[i], 1, &f);
            rx = key_param_bn(params, exponent_names[i], 1, &x);
            if (i > 0)
                rt = key_param_bn(params, coeff_names[i - 1], 1, &t);
            if (rf < 0 || rx < 0 || rt < 0 || i >= GPURSA_MAX_PRIMES) {
                BN_clear_free(f);
                BN_clear_free(x);
                BN_clear_free(t);
                if (rf < 0 || rx < 0 || rt < 0)
                    goto malformed;
                if (rf > 0 || rx > 0 || rt > 0) {
                    GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, "more than %d primes",
                                     GPURSA_MAX_PRIMES);
                    goto err;
                }
                continue;
            }
            c.factor[i] = f;
            c.exponent[i] = x;
            if (i > 0)
                c.coeff[i - 1] = t;
            nf += rf == 1 && nf == i;
            ne += rx == 1 && ne == i;
            nc += rt == 1 && nc == i - 1;
        }
        r = 0;
        for (i = 0; i < GPURSA_MAX_PRIMES; i++)
            r += (c.factor[i] != NULL) + (c.exponent[i] != NULL)
                + (i > 0 && c.coeff[i - 1] != NULL);
        /* All present parts must form a contiguous, complete CRT set. */
        if (r != 0 && (nf < 2 || ne != nf || nc != nf - 1 || r != nf + ne + nc || d == NULL)) {
            GPURSA_RAISE_MSG(ctx, GPURSA_R_MISSING_KEY_PART,
                             "RSA CRT parts incomplete (%d primes, %d exponents, "
                             "%d coefficients%s)", nf, ne, nc, d == NULL ? ", no d" : "");
            goto err;
        }
    }
    if (!key_check(ctx, n, e, d, &c, nf))
        goto err;
    key_clear(key);
    key->n = n;
    key->e = e;
    key->d = d;
    key_crt_set(key, &c);
    key->nprimes = nf;
    return 1;
malformed:
    GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_KEY, "malformed RSA key number");
err:
    BN_free(n);
    BN_free(e);
    BN_clear_free(d);
    key_crt_clear_free(&c);
    return 0;
}

int gpursa_key_todata(const GPURSA_KEY *key, int selection, OSSL_PARAM_BLD *bld)
{
    key_crt c;
    int i;

    if ((selection & OSSL_KEYMGMT_SELECT_KEYPAIR) == 0 || key->n == NULL)
        return 1;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, key->n)
        || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, key->e))
        return 0;
    if ((selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) == 0 || key->d == NULL)
        return 1;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, key->d))
        return 0;
    key_crt_get(key, &c);
    for (i = 0; i < key->nprimes; i++) {
        if (!OSSL_PARAM_BLD_push_BN(bld, factor_names[i], c.factor[i])
            || !OSSL_PARAM_BLD_push_BN(bld, exponent_names[i], c.exponent[i])
            || (i > 0 && !OSSL_PARAM_BLD_push_BN(bld, coeff_names[i - 1], c.coeff[i - 1])))
            return 0;
    }
    return 1;
}

static int key_copy_bn(BIGNUM **dst, const BIGNUM *src, int secret)
{
    if (src == NULL)
        return 1;
    *dst = secret ? BN_secure_new() : BN_new();
    return *dst != NULL && BN_copy(*dst, src) != NULL;
}

GPURSA_KEY *gpursa_key_dup(const GPURSA_KEY *src, int selection)
{
    GPURSA_KEY *key = gpursa_key_new(src->provctx);
    key_crt s, c;
    int i, ok = 1;

    if (key == NULL)
        return NULL;
    memset(&c, 0, sizeof(c));
    if ((selection & OSSL_KEYMGMT_SELECT_KEYPAIR) != 0)
        ok = key_copy_bn(&key->n, src->n, 0) && key_copy_bn(&key->e, src->e, 0);
    if (ok && (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) != 0 && src->d != NULL) {
        ok = key_copy_bn(&key->d, src->d, 1);
        key_crt_get(src, &s);
        for (i = 0; ok && i < src->nprimes; i++)
            ok = key_copy_bn(&c.factor[i], s.factor[i], 1)
                && key_copy_bn(&c.exponent[i], s.exponent[i], 1)
                && (i == 0 || key_copy_bn(&c.coeff[i - 1], s.coeff[i - 1], 1));
        key_crt_set(key, &c);
        key->nprimes = src->nprimes;
    }
    if (!ok) {
        GPURSA_RAISE(src->provctx, GPURSA_R_MALLOC);
        gpursa_key_free(key);
        return NULL;
    }
    return key;
}

EVP_PKEY *gpursa_key_fallback(GPURSA_KEY *key)
{
    GPURSA_PROV_CTX *ctx = key->provctx;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pctx = NULL;
    EVP_PKEY *pkey = NULL;
    int selection;

    if (!CRYPTO_THREAD_read_lock(key->lock))
        goto internal;
    pkey = key->fallback;
    CRYPTO_THREAD_unlock(key->lock);
    if (pkey != NULL)
        return pkey;
    if (key->n == NULL) {
        GPURSA_RAISE(ctx, GPURSA_R_MISSING_KEY_PART);
        return NULL;
    }
    if (!gpursa_prov_fallback_ready(ctx))
        return NULL;
    selection = key->d != NULL ? OSSL_KEYMGMT_SELECT_KEYPAIR : OSSL_KEYMGMT_SELECT_PUBLIC_KEY;
    if ((bld = OSSL_PARAM_BLD_new()) == NULL
        || !gpursa_key_todata(key, selection, bld)
        || (params = OSSL_PARAM_BLD_to_param(bld)) == NULL) {
        GPURSA_RAISE(ctx, GPURSA_R_MALLOC);
        goto end;
    }
    pctx = EVP_PKEY_CTX_new_from_name(ctx->libctx, "RSA", ctx->fallback_propq);
    if (pctx == NULL || EVP_PKEY_fromdata_init(pctx) <= 0
        || EVP_PKEY_fromdata(pctx, &pkey, selection, params) <= 0) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_FALLBACK_FAILED, "cannot build the fallback key");
        goto end;
    }
    if (!CRYPTO_THREAD_write_lock(key->lock)) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
        goto internal;
    }
    /* Another thread may have built it meanwhile: keep the first. */
    if (key->fallback == NULL) {
        key->fallback = pkey;
    } else {
        EVP_PKEY_free(pkey);
        pkey = key->fallback;
    }
    CRYPTO_THREAD_unlock(key->lock);
end:
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
internal:
    GPURSA_RAISE(ctx, GPURSA_R_INTERNAL);
    goto end;
}

EVP_PKEY_CTX *gpursa_fallback_pkey_ctx(GPURSA_KEY *key)
{
    EVP_PKEY *pkey = gpursa_key_fallback(key);
    EVP_PKEY_CTX *pctx;

    if (pkey == NULL)
        return NULL;
    pctx = EVP_PKEY_CTX_new_from_pkey(key->provctx->libctx, pkey, key->provctx->fallback_propq);
    if (pctx == NULL)
        GPURSA_RAISE(key->provctx, GPURSA_R_FALLBACK_FAILED);
    return pctx;
}
