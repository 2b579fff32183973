/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa signature padding: EMSA-PKCS1-v1_5, EMSA-PSS with MGF1, and the
 * DER AlgorithmIdentifiers of sha*WithRSAEncryption and RSASSA-PSS.
 * Written from RFC 8017 (sections 9.1, 9.2, appendices A.2.3, B.2.1, C).
 */
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "gpursa_prov.h"
#include "rsa_dec_pad.h"   /* gpursa_mgf1, shared with OAEP */
#include "rsa_sig_pad.h"

/* Object identifier contents (without tag and length); longest is 9 bytes. */
#define OID_MAX 9

struct gpursa_sig_md {
    const char *name;              /* canonical OpenSSL name, for EVP_MD_is_a */
    size_t size;                   /* output bytes */
    int digest_info;               /* 0: PKCS#1 v1.5 signs the bare hash (MD5-SHA1) */
    int pss_aid;                   /* RSASSA-PSS params may name this hash */
    unsigned char oid[OID_MAX];    /* the hash's OID (empty if none) */
    size_t oid_len;
    unsigned char sig_oid[OID_MAX];/* <md>WithRSAEncryption (empty if none) */
    size_t sig_oid_len;
};

/* 1.2.840.113549.1.1.x and 2.16.840.1.101.3.4.x.y share their prefixes. */
#define PKCS1_OID_BYTES(x) { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, (x) }
#define PKCS1_OID(x) PKCS1_OID_BYTES(x), 9
#define NIST_HASH_OID(y) { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, (y) }, 9
#define NIST_SIG_OID(y) { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, (y) }, 9

/*
 * The digests the default provider accepts for RSA signatures (its
 * ossl_digest_rsa_sign_get_md_nid list, minus the legacy-only MD2, MD4 and
 * MDC2). RSASSA-PSS params in OpenSSL 3.0 can name SHA-1 and SHA-2 only.
 */
static const GPURSA_SIG_MD sig_mds[] = {
    { "SHA1", 20, 1, 1, { 0x2b, 0x0e, 0x03, 0x02, 0x1a }, 5, PKCS1_OID(0x05) },
    { "SHA2-224", 28, 1, 1, NIST_HASH_OID(0x04), PKCS1_OID(0x0e) },
    { "SHA2-256", 32, 1, 1, NIST_HASH_OID(0x01), PKCS1_OID(0x0b) },
    { "SHA2-384", 48, 1, 1, NIST_HASH_OID(0x02), PKCS1_OID(0x0c) },
    { "SHA2-512", 64, 1, 1, NIST_HASH_OID(0x03), PKCS1_OID(0x0d) },
    { "SHA2-512/224", 28, 1, 1, NIST_HASH_OID(0x05), PKCS1_OID(0x0f) },
    { "SHA2-512/256", 32, 1, 1, NIST_HASH_OID(0x06), PKCS1_OID(0x10) },
    { "SHA3-224", 28, 1, 0, NIST_HASH_OID(0x07), NIST_SIG_OID(0x0d) },
    { "SHA3-256", 32, 1, 0, NIST_HASH_OID(0x08), NIST_SIG_OID(0x0e) },
    { "SHA3-384", 48, 1, 0, NIST_HASH_OID(0x09), NIST_SIG_OID(0x0f) },
    { "SHA3-512", 64, 1, 0, NIST_HASH_OID(0x0a), NIST_SIG_OID(0x10) },
    { "MD5", 16, 1, 0, { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05 }, 8,
      PKCS1_OID(0x04) },
    { "RIPEMD-160", 20, 1, 0, { 0x2b, 0x24, 0x03, 0x02, 0x01 }, 5,
      { 0x2b, 0x24, 0x03, 0x03, 0x01, 0x02 }, 6 },
    /* TLS 1.0/1.1: the 36-byte MD5||SHA1 is signed without a DigestInfo. */
    { "MD5-SHA1", 36, 0, 0, { 0 }, 0, { 0 }, 0 },
};

static const unsigned char oid_rsassa_pss[] = PKCS1_OID_BYTES(0x0a);
static const unsigned char oid_mgf1[] = PKCS1_OID_BYTES(0x08);

const GPURSA_SIG_MD *gpursa_sig_md_find(const EVP_MD *md)
{
    size_t i;

    if (md == NULL)
        return NULL;
    for (i = 0; i < sizeof(sig_mds) / sizeof(sig_mds[0]); i++)
        if (EVP_MD_is_a(md, sig_mds[i].name)
            && (size_t)EVP_MD_get_size(md) == sig_mds[i].size)
            return &sig_mds[i];
    return NULL;
}

const char *gpursa_sig_md_name(const GPURSA_SIG_MD *smd)
{
    return smd->name;
}

size_t gpursa_sig_md_size(const GPURSA_SIG_MD *smd)
{
    return smd->size;
}

/* ---- DER, short-form lengths only (everything here is < 128 bytes) ---- */

typedef struct {
    unsigned char *buf;
    size_t size, pos;
    int ok;
} der_out;

static void der_bytes(der_out *d, const unsigned char *p, size_t n)
{
    if (!d->ok || n > d->size - d->pos) {
        d->ok = 0;
        return;
    }
    memcpy(d->buf + d->pos, p, n);
    d->pos += n;
}

/* Opens a constructed or primitive element; returns where its length goes. */
static size_t der_open(der_out *d, unsigned char tag)
{
    unsigned char hdr[2] = { tag, 0 };
    size_t at = d->pos + 1;

    der_bytes(d, hdr, 2);
    return at;
}

/* Closes the element opened at |at| by writing its content length. */
static void der_close(der_out *d, size_t at)
{
    size_t len;

    if (!d->ok)
        return;
    len = d->pos - at - 1;
    if (len > 127) {
        d->ok = 0;
        return;
    }
    d->buf[at] = (unsigned char)len;
}

static void der_oid(der_out *d, const unsigned char *oid, size_t len)
{
    size_t at = der_open(d, 0x06);

    der_bytes(d, oid, len);
    der_close(d, at);
}

static void der_null(der_out *d)
{
    static const unsigned char null[2] = { 0x05, 0x00 };

    der_bytes(d, null, 2);
}

/* A non-negative INTEGER in minimal two's complement. */
static void der_uint(der_out *d, unsigned int v)
{
    unsigned char be[5];
    size_t n = 0, at;
    int shift;

    for (shift = 24; shift >= 0; shift -= 8)
        if (n > 0 || (v >> shift) != 0 || shift == 0)
            be[1 + n++] = (unsigned char)(v >> shift);
    be[0] = 0;
    at = der_open(d, 0x02);
    /* a leading 0x00 keeps a set top bit from reading as negative */
    if (be[1] & 0x80)
        der_bytes(d, be, n + 1);
    else
        der_bytes(d, be + 1, n);
    der_close(d, at);
}

/* AlgorithmIdentifier { oid, NULL }: how OpenSSL writes hash and RSA ids. */
static void der_aid_null(der_out *d, const unsigned char *oid, size_t len)
{
    size_t at = der_open(d, 0x30);

    der_oid(d, oid, len);
    der_null(d);
    der_close(d, at);
}

static int der_finish(const GPURSA_PROV_CTX *provctx, der_out *d, size_t *outlen)
{
    if (!d->ok) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_INTERNAL,
                         "AlgorithmIdentifier does not fit %zu bytes", d->size);
        return 0;
    }
    *outlen = d->pos;
    return 1;
}

/* ---- EMSA-PKCS1-v1_5 ---- */

int gpursa_emsa_pkcs1_encode(const GPURSA_PROV_CTX *provctx,
                             unsigned char *em, size_t emlen,
                             const GPURSA_SIG_MD *smd,
                             const unsigned char *tbs, size_t tbslen)
{
    unsigned char prefix[2 + 2 + 2 + OID_MAX + 2 + 2];
    der_out d = { prefix, sizeof(prefix), 0, 1 };
    size_t tlen, pslen;

    if (smd != NULL && smd->digest_info) {
        size_t seq, aid;

        if (tbslen != smd->size) {
            GPURSA_RAISE_MSG(provctx, GPURSA_R_INVALID_DIGEST_LENGTH,
                             "%s digest is %zu bytes, got %zu", smd->name,
                             smd->size, tbslen);
            return 0;
        }
        /* DigestInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING }:
         * everything but the digest bytes themselves goes into prefix. */
        seq = der_open(&d, 0x30);
        aid = der_open(&d, 0x30);
        der_oid(&d, smd->oid, smd->oid_len);
        der_null(&d);
        der_close(&d, aid);
        der_bytes(&d, (const unsigned char[]){ 0x04, (unsigned char)tbslen }, 2);
        if (!d.ok)
            goto internal;
        d.buf[seq] = (unsigned char)(d.pos - seq - 1 + tbslen);
    }
    tlen = d.pos + tbslen;
    /* 00 01 PS(>= 8 x FF) 00 T */
    if (emlen < 11 || tlen > emlen - 11) {
        if (smd != NULL)
            GPURSA_RAISE_MSG(provctx, GPURSA_R_DIGEST_TOO_BIG_FOR_KEY,
                             "a %zu-byte %s signature block does not fit a "
                             "%zu-byte key", tlen, smd->name, emlen);
        else
            GPURSA_RAISE_MSG(provctx, GPURSA_R_DATA_TOO_LARGE_FOR_KEY_SIZE,
                             "%zu bytes exceed the %zu a %zu-byte key can sign",
                             tbslen, emlen < 11 ? 0 : emlen - 11, emlen);
        return 0;
    }
    pslen = emlen - 3 - tlen;
    em[0] = 0x00;
    em[1] = 0x01;
    memset(em + 2, 0xff, pslen);
    em[2 + pslen] = 0x00;
    memcpy(em + 3 + pslen, prefix, d.pos);
    if (tbslen > 0)
        memcpy(em + 3 + pslen + d.pos, tbs, tbslen);
    return 1;

 internal:
    GPURSA_RAISE(provctx, GPURSA_R_INTERNAL);
    return 0;
}

/* ---- EMSA-PSS ---- */

/* emLen = ceil((modBits - 1) / 8) */
static size_t pss_emlen(int modbits)
{
    return ((size_t)modbits - 1 + 7) / 8;
}

int gpursa_pss_saltlen(const GPURSA_PROV_CTX *provctx, int saltlen,
                       size_t hlen, int modbits)
{
    size_t emlen, room;

    if (modbits < 2) {
        GPURSA_RAISE(provctx, GPURSA_R_BAD_KEY);
        return -1;
    }
    emlen = pss_emlen(modbits);
    if (emlen < hlen + 2) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_DATA_TOO_LARGE_FOR_KEY_SIZE,
                         "a %zu-byte digest does not fit PSS with a %d-bit key",
                         hlen, modbits);
        return -1;
    }
    room = emlen - hlen - 2;
    switch (saltlen) {
    case RSA_PSS_SALTLEN_DIGEST:
        saltlen = (int)hlen;
        break;
    case RSA_PSS_SALTLEN_AUTO:   /* when signing, auto means the maximum */
    case RSA_PSS_SALTLEN_MAX:
        return (int)room;
    case RSA_PSS_SALTLEN_AUTO_DIGEST_MAX:
        return (int)(hlen < room ? hlen : room);
    default:
        if (saltlen < 0) {
            GPURSA_RAISE_MSG(provctx, GPURSA_R_BAD_SALT_LENGTH,
                             "salt length %d", saltlen);
            return -1;
        }
    }
    if ((size_t)saltlen > room) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_DATA_TOO_LARGE_FOR_KEY_SIZE,
                         "salt length %d exceeds the %zu bytes a %d-bit key "
                         "leaves beside a %zu-byte digest", saltlen, room,
                         modbits, hlen);
        return -1;
    }
    return saltlen;
}

/* out ^= MGF1(seed, outlen), through the MGF1 OAEP decoding uses */
static int mgf1_xor(unsigned char *out, size_t outlen,
                    const unsigned char *seed, size_t seedlen,
                    const EVP_MD *md)
{
    unsigned char *mask = OPENSSL_malloc(outlen);
    size_t i;
    int ok = mask != NULL && gpursa_mgf1(mask, outlen, seed, seedlen, md);

    for (i = 0; ok && i < outlen; i++)
        out[i] ^= mask[i];
    OPENSSL_clear_free(mask, outlen);
    return ok;
}

int gpursa_emsa_pss_encode(const GPURSA_PROV_CTX *provctx,
                           unsigned char *em, int modbits,
                           const EVP_MD *md, const EVP_MD *mgf1md,
                           const unsigned char *mhash, size_t mhashlen,
                           int saltlen)
{
    static const unsigned char zeros[8] = { 0 };
    EVP_MD_CTX *mctx = NULL;
    int hlen = EVP_MD_get_size(md), slen, ok = 0;
    size_t emlen, dblen, pslen;
    unsigned char *salt, *h;

    if (hlen <= 0 || (size_t)hlen != mhashlen) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_INVALID_DIGEST_LENGTH,
                         "digest is %d bytes, got %zu", hlen, mhashlen);
        return 0;
    }
    slen = gpursa_pss_saltlen(provctx, saltlen, (size_t)hlen, modbits);
    if (slen < 0)
        return 0;
    /* A modulus of 8k+1 bits leaves emLen one byte short of its size. */
    emlen = pss_emlen(modbits);
    if ((modbits & 7) == 1)
        *em++ = 0x00;
    dblen = emlen - (size_t)hlen - 1;
    pslen = dblen - (size_t)slen - 1;
    h = em + dblen;
    /* DB = PS || 0x01 || salt, built in place; the salt doubles as M' input */
    memset(em, 0, pslen);
    em[pslen] = 0x01;
    salt = em + pslen + 1;
    if (slen > 0 && RAND_bytes_ex(provctx->libctx, salt, (size_t)slen, 0) <= 0) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_INTERNAL, "no random salt");
        goto end;
    }
    /* H = Hash(00*8 || mHash || salt) */
    if ((mctx = EVP_MD_CTX_new()) == NULL
        || !EVP_DigestInit_ex2(mctx, md, NULL)
        || !EVP_DigestUpdate(mctx, zeros, sizeof(zeros))
        || !EVP_DigestUpdate(mctx, mhash, mhashlen)
        || !EVP_DigestUpdate(mctx, salt, (size_t)slen)
        || !EVP_DigestFinal_ex(mctx, h, NULL)) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_BAD_DIGEST, "hashing M' failed");
        goto end;
    }
    if (!mgf1_xor(em, dblen, h, (size_t)hlen, mgf1md)) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_BAD_DIGEST, "MGF1 failed");
        goto end;
    }
    /* clear the bits above emBits = modBits - 1 */
    em[0] &= (unsigned char)(0xff >> ((8 * emlen - ((size_t)modbits - 1)) & 7));
    em[emlen - 1] = 0xbc;
    ok = 1;
 end:
    EVP_MD_CTX_free(mctx);
    return ok;
}

/* ---- AlgorithmIdentifiers ---- */

int gpursa_sig_aid_pkcs1(const GPURSA_PROV_CTX *provctx,
                         const GPURSA_SIG_MD *smd,
                         unsigned char *out, size_t outsize, size_t *outlen)
{
    der_out d = { out, outsize, 0, 1 };

    if (smd == NULL || smd->sig_oid_len == 0) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "no PKCS#1 v1.5 AlgorithmIdentifier for %s",
                         smd == NULL ? "a raw signature" : smd->name);
        return 0;
    }
    der_aid_null(&d, smd->sig_oid, smd->sig_oid_len);
    return der_finish(provctx, &d, outlen);
}

int gpursa_sig_aid_pss(const GPURSA_PROV_CTX *provctx,
                       const GPURSA_SIG_MD *smd, const GPURSA_SIG_MD *mgf1,
                       int saltlen,
                       unsigned char *out, size_t outsize, size_t *outlen)
{
    der_out d = { out, outsize, 0, 1 };
    size_t aid, params, at, mgf;

    if (smd == NULL || mgf1 == NULL || !smd->pss_aid || !mgf1->pss_aid) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_OPERATION_NOT_SUPPORTED,
                         "RSASSA-PSS parameters cannot name %s / MGF1 %s",
                         smd == NULL ? "no digest" : smd->name,
                         mgf1 == NULL ? "no digest" : mgf1->name);
        return 0;
    }
    if (saltlen < 0) {
        GPURSA_RAISE(provctx, GPURSA_R_BAD_SALT_LENGTH);
        return 0;
    }
    /* RSASSA-PSS-params leaves out every field equal to its default:
     * SHA-1, MGF1 with SHA-1, salt length 20, trailer field 1. */
    aid = der_open(&d, 0x30);
    der_oid(&d, oid_rsassa_pss, sizeof(oid_rsassa_pss));
    params = der_open(&d, 0x30);
    if (strcmp(smd->name, "SHA1") != 0) {
        at = der_open(&d, 0xa0);
        der_aid_null(&d, smd->oid, smd->oid_len);
        der_close(&d, at);
    }
    if (strcmp(mgf1->name, "SHA1") != 0) {
        at = der_open(&d, 0xa1);
        mgf = der_open(&d, 0x30);
        der_oid(&d, oid_mgf1, sizeof(oid_mgf1));
        der_aid_null(&d, mgf1->oid, mgf1->oid_len);
        der_close(&d, mgf);
        der_close(&d, at);
    }
    if (saltlen != 20) {
        at = der_open(&d, 0xa2);
        der_uint(&d, (unsigned int)saltlen);
        der_close(&d, at);
    }
    der_close(&d, params);
    der_close(&d, aid);
    return der_finish(provctx, &d, outlen);
}
