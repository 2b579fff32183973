/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa: constant-time decoding of RSA decryption results (PKCS#1 v1.5 type
 * 2 with and without implicit rejection, OAEP, TLS premaster secret).
 *
 * Written from RFC 8017, RFC 5246 7.4.7.1 and draft-irtf-cfrg-rsa-guidance.
 * Rules kept throughout: the secret block is read in full, in a fixed order;
 * decisions about it are all-ones/all-zeros masks combined with AND/OR; the
 * message is moved to the output by a fixed sequence of shifts so that no
 * address depends on where it starts. The value returned to the caller is
 * the only thing that leaves as public, and GPURSA_CT_PUBLIC marks the spot
 * so that the valgrind check (tests/provider/ct_dec_pad.c) can tell a
 * deliberate release from a leak.
 */
#include "config.h"
#include <limits.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "provider/rsa_dec_pad.h"

#ifdef GPURSA_CT_VALGRIND
# include <valgrind/memcheck.h>
# define GPURSA_CT_PUBLIC(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
# define GPURSA_CT_PUBLIC(p, n) ((void)0)
#endif

/* ---- masks: all ones for true, zero for false ----------------------------- */

typedef size_t ct_mask;

/* Hide a value from the optimiser so that mask arithmetic is not turned back
 * into a branch or a conditional move. */
static inline ct_mask ct_barrier(ct_mask a)
{
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(a));
#else
    volatile ct_mask v = a;
    a = v;
#endif
    return a;
}

static inline ct_mask ct_msb(ct_mask a)
{
    return (ct_mask)0 - (a >> (sizeof(a) * 8 - 1));
}

static inline ct_mask ct_is_zero(ct_mask a)
{
    return ct_msb(~a & (a - 1));
}

static inline ct_mask ct_eq(ct_mask a, ct_mask b)
{
    return ct_is_zero(a ^ b);
}

static inline ct_mask ct_lt(ct_mask a, ct_mask b)
{
    return ct_msb(a ^ ((a ^ b) | ((a - b) ^ b)));
}

static inline ct_mask ct_ge(ct_mask a, ct_mask b)
{
    return ~ct_lt(a, b);
}

static inline size_t ct_select(ct_mask m, size_t a, size_t b)
{
    return (ct_barrier(m) & a) | (ct_barrier(~m) & b);
}

static inline unsigned char ct_select_8(ct_mask m, unsigned char a,
                                        unsigned char b)
{
    return (unsigned char)ct_select(m, a, b);
}

/* -1 when !good, else len; the result is released to the caller. */
static int ct_result(ct_mask good, size_t len)
{
    int r = (int)ct_select(good, len, (size_t)-1);

    GPURSA_CT_PUBLIC(&r, sizeof(r));
    return r;
}

/*
 * The message is buf[len - mlen, len) with a secret mlen <= len - lo. Shift
 * it down to buf[lo] in log2(len - lo) passes, each over the whole region
 * (a pass moves by 2^j when bit j of the distance is set), then copy the
 * first min(tlen, len - lo) bytes, writing only bytes below mlen and only
 * when good. |buf| is scratch and is modified.
 */
static void ct_move_message(unsigned char *to, size_t tlen,
                            unsigned char *buf, size_t lo, size_t len,
                            size_t mlen, ct_mask good)
{
    size_t room = len - lo;
    size_t shift = room - mlen;   /* meaningless when !good; harmless */
    size_t step, i;

    for (step = 1; step < room; step <<= 1) {
        ct_mask m = ~ct_is_zero(shift & step);

        for (i = lo; i < len - step; i++)
            buf[i] = ct_select_8(m, buf[i + step], buf[i]);
    }
    if (tlen > room)
        tlen = room;
    for (i = 0; i < tlen; i++) {
        ct_mask m = good & ct_lt(i, mlen);

        to[i] = ct_select_8(m, buf[lo + i], to[i]);
    }
}

/*
 * Index of the first zero byte of em[from, k), or 0 when there is none;
 * constant time.
 */
static size_t ct_first_zero(const unsigned char *em, size_t from, size_t k,
                            ct_mask *found)
{
    size_t idx = 0, i;
    ct_mask seen = 0;

    for (i = from; i < k; i++) {
        ct_mask z = ct_is_zero(em[i]);

        idx = ct_select(~seen & z, i, idx);
        seen |= z;
    }
    *found = seen;
    return idx;
}

/* ---- PKCS#1 v1.5 type 2 ---------------------------------------------------- */

/* good for 00 02 PS 00 M with |PS| >= 8; *msg_index = start of M. */
static ct_mask pkcs1_type2_check(const unsigned char *em, size_t k,
                                 size_t *msg_index)
{
    ct_mask good, found;
    size_t zero_index;

    good = ct_is_zero(em[0]) & ct_eq(em[1], 2);
    zero_index = ct_first_zero(em, 2, k, &found);
    /* PS starts at 2 and needs 8 bytes; no zero at all leaves index 0. */
    good &= found & ct_ge(zero_index, 2 + 8);
    *msg_index = zero_index + 1;
    return good;
}

int gpursa_dec_pkcs1_type2(unsigned char *to, size_t tlen,
                           const unsigned char *em, size_t k)
{
    unsigned char *buf;
    size_t msg_index, mlen;
    ct_mask good;
    int ret;

    if (k < GPURSA_PKCS1_PAD_LEN || tlen < k - GPURSA_PKCS1_PAD_LEN)
        return -1;
    if ((buf = OPENSSL_malloc(k)) == NULL)
        return -2;
    memcpy(buf, em, k);
    good = pkcs1_type2_check(buf, k, &msg_index);
    mlen = k - msg_index;
    good &= ct_ge(tlen, mlen);
    ct_move_message(to, tlen, buf, GPURSA_PKCS1_PAD_LEN, k, mlen, good);
    ret = ct_result(good, mlen);
    OPENSSL_clear_free(buf, k);
    return ret;
}

/* ---- implicit rejection ---------------------------------------------------- */

/*
 * HMAC-SHA256 keyed once. Setting the digest by name fetches it, which costs
 * more than hashing a block, so a context is keyed once and re-initialised
 * (same key, no parameters) for every block. The hash is fixed at SHA-256 so
 * that the synthetic message never changes with configuration: two answers
 * to one ciphertext would tell an attacker it was synthetic.
 */
static EVP_MAC_CTX *hmac_sha256_new(OSSL_LIB_CTX *libctx,
                                    const unsigned char *key, size_t keylen)
{
    EVP_MAC *mac = EVP_MAC_fetch(libctx, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac == NULL ? NULL : EVP_MAC_CTX_new(mac);
    OSSL_PARAM params[2];

    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                                 (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    if (ctx != NULL && !EVP_MAC_init(ctx, key, keylen, params)) {
        EVP_MAC_CTX_free(ctx);
        ctx = NULL;
    }
    EVP_MAC_free(mac);
    return ctx;
}

/* out = HMAC(key of ctx, data1 || data2); 1 or 0. */
static int hmac_sha256_block(EVP_MAC_CTX *ctx,
                             const unsigned char *d1, size_t l1,
                             const unsigned char *d2, size_t l2,
                             unsigned char out[GPURSA_KDK_LEN])
{
    size_t outl = 0;

    return EVP_MAC_init(ctx, NULL, 0, NULL)
        && (l1 == 0 || EVP_MAC_update(ctx, d1, l1))
        && (l2 == 0 || EVP_MAC_update(ctx, d2, l2))
        && EVP_MAC_final(ctx, out, &outl, GPURSA_KDK_LEN)
        && outl == GPURSA_KDK_LEN;
}

int gpursa_dec_kdk(OSSL_LIB_CTX *libctx, const BIGNUM *d,
                   const unsigned char *ct, size_t ctlen, size_t k,
                   unsigned char kdk[GPURSA_KDK_LEN])
{
    unsigned char *buf = NULL;
    unsigned char d_hash[GPURSA_KDK_LEN];
    EVP_MAC_CTX *hmac = NULL;
    EVP_MD *sha256 = NULL;
    int ok = 0;

    if (d == NULL || ctlen > k || k > INT_MAX)
        return 0;
    /* k bytes hold d big-endian, then (reused) the zero prefix of ct. */
    if ((buf = OPENSSL_zalloc(k)) == NULL)
        return 0;
    if (BN_bn2binpad(d, buf, (int)k) != (int)k
        || (sha256 = EVP_MD_fetch(libctx, "SHA256", NULL)) == NULL
        || !EVP_Digest(buf, k, d_hash, NULL, sha256, NULL)
        || (hmac = hmac_sha256_new(libctx, d_hash, sizeof(d_hash))) == NULL)
        goto end;
    OPENSSL_cleanse(buf, k);
    ok = hmac_sha256_block(hmac, buf, k - ctlen, ct, ctlen, kdk);
 end:
    OPENSSL_cleanse(d_hash, sizeof(d_hash));
    OPENSSL_clear_free(buf, k);
    EVP_MAC_CTX_free(hmac);
    EVP_MD_free(sha256);
    return ok;
}

/* The PRF with a context keyed with the KDK. */
static int prf_blocks(EVP_MAC_CTX *hmac, const char *label,
                      unsigned char *out, size_t outlen)
{
    unsigned char block[GPURSA_KDK_LEN];
    unsigned char msg[2 + 64 + 2];
    size_t llen = strlen(label), pos, n;
    unsigned int iter = 0, bits = (unsigned int)(outlen * 8);
    int ok = 1;

    if (outlen == 0 || outlen > 0xffff / 8 || llen > 64)
        return 0;
    /* I || label || L, with I updated per block */
    memcpy(msg + 2, label, llen);
    msg[2 + llen] = (unsigned char)(bits >> 8);
    msg[2 + llen + 1] = (unsigned char)bits;
    for (pos = 0; ok && pos < outlen; pos += n, iter++) {
        msg[0] = (unsigned char)(iter >> 8);
        msg[1] = (unsigned char)iter;
        ok = hmac_sha256_block(hmac, msg, llen + 4, NULL, 0, block);
        n = outlen - pos < sizeof(block) ? outlen - pos : sizeof(block);
        memcpy(out + pos, block, n);
    }
    OPENSSL_cleanse(block, sizeof(block));
    return ok;
}

int gpursa_dec_prf(OSSL_LIB_CTX *libctx, const unsigned char kdk[GPURSA_KDK_LEN],
                   const char *label, unsigned char *out, size_t outlen)
{
    EVP_MAC_CTX *hmac = hmac_sha256_new(libctx, kdk, GPURSA_KDK_LEN);
    int ok = hmac != NULL && prf_blocks(hmac, label, out, outlen);

    EVP_MAC_CTX_free(hmac);
    return ok;
}

/* Length candidates drawn for the synthetic message: a candidate is kept
 * only when below the limit, so with 128 of them the chance that none fits
 * (and the length falls back to 0) is below 2^-128 for any key size. */
#define IR_LEN_CANDIDATES 128

int gpursa_dec_pkcs1_type2_implicit(OSSL_LIB_CTX *libctx, unsigned char *to,
                                    size_t tlen, const unsigned char *em,
                                    size_t k,
                                    const unsigned char kdk[GPURSA_KDK_LEN])
{
    unsigned char lens[IR_LEN_CANDIDATES * 2];
    unsigned char *synth = NULL;
    EVP_MAC_CTX *hmac = NULL;
    size_t max_len, len_mask, synth_len = 0, synth_index, msg_index, i, j;
    ct_mask good;
    int ret = -2;

    if (k < GPURSA_PKCS1_PAD_LEN || tlen < k - GPURSA_PKCS1_PAD_LEN)
        return -1;
    if ((synth = OPENSSL_malloc(k)) == NULL)
        return -2;
    if ((hmac = hmac_sha256_new(libctx, kdk, GPURSA_KDK_LEN)) == NULL
        || !prf_blocks(hmac, "message", synth, k)
        || !prf_blocks(hmac, "length", lens, sizeof(lens)))
        goto end;

    /* A synthetic length is uniform in [0, k - 11]: candidates are masked to
     * the bit width of k - 10 and those not below it are skipped; the last
     * one that fits wins. */
    max_len = k - 2 - 8;
    len_mask = max_len;
    for (i = 1; i < sizeof(len_mask) * 8; i <<= 1)
        len_mask |= len_mask >> i;
    for (i = 0; i < sizeof(lens); i += 2) {
        size_t cand = (((size_t)lens[i] << 8) | lens[i + 1]) & len_mask;

        synth_len = ct_select(ct_lt(cand, max_len), cand, synth_len);
    }
    synth_index = k - synth_len;

    good = pkcs1_type2_check(em, k, &msg_index);
    good &= ct_ge(tlen, k - msg_index);
    msg_index = ct_select(good, msg_index, synth_index);
    /* From here the length is the answer the caller gets whatever the
     * padding was, so it is public; |good| stays secret: both sources are
     * read at every position. */
    GPURSA_CT_PUBLIC(&msg_index, sizeof(msg_index));
    for (i = msg_index, j = 0; i < k && j < tlen; i++, j++)
        to[j] = ct_select_8(good, em[i], synth[i]);
    ret = (int)j;
 end:
    EVP_MAC_CTX_free(hmac);
    OPENSSL_cleanse(lens, sizeof(lens));
    OPENSSL_clear_free(synth, k);
    return ret;
}

/* ---- OAEP ---------------------------------------------------------------- */

int gpursa_mgf1(unsigned char *mask, size_t len, const unsigned char *seed,
                size_t seedlen, const EVP_MD *md)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char block[EVP_MAX_MD_SIZE], cnt[4];
    int mdlen = EVP_MD_get_size(md);
    size_t pos, n;
    unsigned long c;
    int ok = ctx != NULL && mdlen > 0;

    for (pos = 0, c = 0; ok && pos < len; pos += n, c++) {
        cnt[0] = (unsigned char)(c >> 24);
        cnt[1] = (unsigned char)(c >> 16);
        cnt[2] = (unsigned char)(c >> 8);
        cnt[3] = (unsigned char)c;
        ok = EVP_DigestInit_ex(ctx, md, NULL)
            && EVP_DigestUpdate(ctx, seed, seedlen)
            && EVP_DigestUpdate(ctx, cnt, sizeof(cnt))
            && EVP_DigestFinal_ex(ctx, block, NULL);
        n = len - pos < (size_t)mdlen ? len - pos : (size_t)mdlen;
        memcpy(mask + pos, block, n);
    }
    OPENSSL_cleanse(block, sizeof(block));
    EVP_MD_CTX_free(ctx);
    return ok;
}

int gpursa_dec_oaep(unsigned char *to, size_t tlen,
                    const unsigned char *em, size_t k,
                    const unsigned char *label, size_t labellen,
                    const EVP_MD *md, const EVP_MD *mgf1md)
{
    unsigned char seed[EVP_MAX_MD_SIZE], lhash[EVP_MAX_MD_SIZE];
    unsigned char *db = NULL;
    int mdsize = md == NULL ? 0 : EVP_MD_get_size(md);
    size_t hlen, dblen, one_index = 0, mlen, i;
    ct_mask good, found = 0;
    int ret = -2;

    if (mgf1md == NULL)
        mgf1md = md;
    if (mdsize <= 0)
        return -2;
    hlen = (size_t)mdsize;
    /* EM = 00 || maskedSeed (hLen) || maskedDB (k - hLen - 1) and DB needs
     * lHash || 01 at least. */
    if (k < 2 * hlen + 2 || tlen < k - 2 * hlen - 2)
        return -1;
    dblen = k - hlen - 1;
    if ((db = OPENSSL_malloc(dblen)) == NULL)
        return -2;
    if (!EVP_Digest(label, labellen, lhash, NULL, md, NULL)
        || !gpursa_mgf1(seed, hlen, em + 1 + hlen, dblen, mgf1md))
        goto end;
    for (i = 0; i < hlen; i++)
        seed[i] ^= em[1 + i];
    if (!gpursa_mgf1(db, dblen, seed, hlen, mgf1md))
        goto end;
    for (i = 0; i < dblen; i++)
        db[i] ^= em[1 + hlen + i];

    /* Checks folded into one mask, never reported separately (Manger's
     * attack needs only to know whether the first byte was zero). */
    good = ct_is_zero(em[0]);
    good &= ct_is_zero((ct_mask)CRYPTO_memcmp(db, lhash, hlen));
    /* PS is zeros up to the first 01 */
    for (i = hlen; i < dblen; i++) {
        ct_mask one = ct_eq(db[i], 1), zero = ct_is_zero(db[i]);

        one_index = ct_select(~found & one, i, one_index);
        found |= one;
        good &= found | zero;
    }
    good &= found;
    mlen = dblen - (one_index + 1);
    good &= ct_ge(tlen, mlen);
    ct_move_message(to, tlen, db, hlen + 1, dblen, mlen, good);
    ret = ct_result(good, mlen);
 end:
    OPENSSL_cleanse(seed, sizeof(seed));
    OPENSSL_clear_free(db, dblen);
    return ret;
}

/* ---- TLS premaster secret ----------------------------------------------------- */

int gpursa_dec_tls_premaster(unsigned char *to, size_t tlen,
                             const unsigned char *em, size_t k,
                             unsigned int client_version,
                             unsigned int alt_version,
                             const unsigned char random[GPURSA_TLS_PREMASTER_LEN])
{
    size_t pm = k - GPURSA_TLS_PREMASTER_LEN, i;
    ct_mask good, version_good;

    if (k < GPURSA_PKCS1_PAD_LEN + GPURSA_TLS_PREMASTER_LEN
        || tlen < GPURSA_TLS_PREMASTER_LEN)
        return -1;
    /* The layout is fixed: 00 02, non-zero PS up to pm - 1, 00 at pm - 1. */
    good = ct_is_zero(em[0]) & ct_eq(em[1], 2);
    for (i = 2; i < pm - 1; i++)
        good &= ~ct_is_zero(em[i]);
    good &= ct_is_zero(em[pm - 1]);

    version_good = ct_eq(em[pm], (client_version >> 8) & 0xff)
        & ct_eq(em[pm + 1], client_version & 0xff);
    /* alt_version comes from configuration, not from the secret. */
    if (alt_version != 0)
        version_good |= ct_eq(em[pm], (alt_version >> 8) & 0xff)
            & ct_eq(em[pm + 1], alt_version & 0xff);
    good &= version_good;

    for (i = 0; i < GPURSA_TLS_PREMASTER_LEN; i++)
        to[i] = ct_select_8(good, em[pm + i], random[i]);
    return GPURSA_TLS_PREMASTER_LEN;
}
