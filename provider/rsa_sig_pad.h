/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa signature padding: EMSA-PKCS1-v1_5 and EMSA-PSS encoding (RFC 8017
 * section 9) and the DER AlgorithmIdentifiers of the signature schemes.
 * Only encoding lives here: verification is delegated to the default
 * provider, so nothing in this file ever parses an untrusted encoding.
 */
#ifndef GPURSA_RSA_SIG_PAD_H
#define GPURSA_RSA_SIG_PAD_H

#include <stddef.h>
#include <openssl/evp.h>
#include "provider/gpursa_prov.h"

/* A digest the RSA signature code accepts (a static table entry). */
typedef struct gpursa_sig_md GPURSA_SIG_MD;

/* The table entry for |md|, or NULL if RSA signatures may not use it. */
const GPURSA_SIG_MD *gpursa_sig_md_find(const EVP_MD *md);
/* Canonical name ("SHA2-256", ...) and output length of a table entry. */
const char *gpursa_sig_md_name(const GPURSA_SIG_MD *smd);
size_t gpursa_sig_md_size(const GPURSA_SIG_MD *smd);

/*
 * EMSA-PKCS1-v1_5: em (emlen bytes, the modulus size) = 00 01 FF..FF 00 || T
 * with at least 8 bytes of FF. T is DigestInfo(smd, tbs) when smd is set and
 * has a DigestInfo (tbs must then be the digest), or tbs itself otherwise
 * (MD5-SHA1 and raw signing). Returns 1, or 0 with a gpursa error raised.
 */
int gpursa_emsa_pkcs1_encode(const GPURSA_PROV_CTX *provctx,
                             unsigned char *em, size_t emlen,
                             const GPURSA_SIG_MD *smd,
                             const unsigned char *tbs, size_t tbslen);

/* OpenSSL 3.1's PSS salt mode "auto-digestmax": the digest length, capped by
 * the maximum, when signing; any length when verifying. gpursa accepts it
 * whatever the headers it was built with. */
#ifndef RSA_PSS_SALTLEN_AUTO_DIGEST_MAX
# define RSA_PSS_SALTLEN_AUTO_DIGEST_MAX -4
#endif
#ifndef OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO_DIGEST_MAX
# define OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO_DIGEST_MAX "auto-digestmax"
#endif

/*
 * The salt length PSS signing will use for |saltlen| (a length >= 0 or one of
 * RSA_PSS_SALTLEN_DIGEST, _AUTO, _MAX, _AUTO_DIGEST_MAX; AUTO means MAX when
 * signing, AUTO_DIGEST_MAX the digest length or MAX if smaller) with an
 * hlen-byte digest and a modbits-bit modulus. Returns -1 with a gpursa error
 * raised when the encoding cannot hold it (emLen < hLen + sLen + 2).
 */
int gpursa_pss_saltlen(const GPURSA_PROV_CTX *provctx, int saltlen,
                       size_t hlen, int modbits);

/*
 * EMSA-PSS with MGF1: em is the modulus size in bytes (a leading zero byte
 * when modbits - 1 is a multiple of 8), mhash the hlen-byte message digest.
 * The salt comes from the provider's library context. Returns 1, or 0 with a
 * gpursa error raised.
 */
int gpursa_emsa_pss_encode(const GPURSA_PROV_CTX *provctx,
                           unsigned char *em, int modbits,
                           const EVP_MD *md, const EVP_MD *mgf1md,
                           const unsigned char *mhash, size_t mhashlen,
                           int saltlen);

/*
 * DER AlgorithmIdentifier of the signature, as X.509 and CMS want it:
 * <md>WithRSAEncryption (NULL parameters) for PKCS#1 v1.5, or id-RSASSA-PSS
 * with its RSASSA-PSS-params (defaults omitted) for PSS, saltlen >= 0.
 * Returns 1 with *outlen set, or 0 with a gpursa error raised.
 */
int gpursa_sig_aid_pkcs1(const GPURSA_PROV_CTX *provctx,
                         const GPURSA_SIG_MD *smd,
                         unsigned char *out, size_t outsize, size_t *outlen);
int gpursa_sig_aid_pss(const GPURSA_PROV_CTX *provctx,
                       const GPURSA_SIG_MD *smd, const GPURSA_SIG_MD *mgf1,
                       int saltlen,
                       unsigned char *out, size_t outsize, size_t *outlen);

/* Room for any AlgorithmIdentifier above. */
#define GPURSA_SIG_AID_MAX 128

#endif /* GPURSA_RSA_SIG_PAD_H */
