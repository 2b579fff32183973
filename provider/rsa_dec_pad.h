/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa: constant-time decoding of RSA decryption results.
 *
 * Every decoder takes |em|, the raw RSA result (exactly |k| bytes, the
 * modulus size, big-endian), and writes the message to |to| (|tlen| bytes
 * available). No branch and no memory address depends on the content of
 * |em| until the decoder returns; only the returned length (or failure)
 * is public, as the caller has to act on it.
 *
 * Public-size checks (|k| too small, |tlen| below the largest message the
 * scheme can carry) fail at once with -1: they depend only on the key and
 * the caller's buffer, never on the secret result.
 */
#ifndef GPURSA_RSA_DEC_PAD_H
#define GPURSA_RSA_DEC_PAD_H

#include <stddef.h>
#include <openssl/types.h>
#include <openssl/bn.h>

#define GPURSA_PKCS1_PAD_LEN     11   /* 00 02 PS(>= 8) 00 */
#define GPURSA_TLS_PREMASTER_LEN 48   /* SSL_MAX_MASTER_KEY_LENGTH */
#define GPURSA_KDK_LEN           32   /* SHA-256 output */

/*
 * PKCS#1 v1.5 type 2 without implicit rejection.
 * Needs tlen >= k - 11. Returns the message length, or -1 when the padding
 * is bad (and |to| is left unchanged), or -2 on an internal failure.
 */
int gpursa_dec_pkcs1_type2(unsigned char *to, size_t tlen,
                           const unsigned char *em, size_t k);

/*
 * The implicit-rejection key derivation key (Marvin-attack countermeasure,
 * draft-irtf-cfrg-rsa-guidance): KDK = HMAC-SHA256(SHA256(d as k bytes
 * big-endian), ciphertext left-padded with zeros to k bytes).
 * Returns 1, or 0 on failure.
 */
int gpursa_dec_kdk(OSSL_LIB_CTX *libctx, const BIGNUM *d,
                   const unsigned char *ct, size_t ctlen, size_t k,
                   unsigned char kdk[GPURSA_KDK_LEN]);

/*
 * The draft's PRF: blocks HMAC-SHA256(kdk, I || label || L) for I = 0, 1, ...
 * (I and L two bytes big-endian, L the output length in bits), concatenated
 * and cut to |outlen| bytes. outlen * 8 must fit in 16 bits.
 * Returns 1, or 0 on failure.
 */
int gpursa_dec_prf(OSSL_LIB_CTX *libctx, const unsigned char kdk[GPURSA_KDK_LEN],
                   const char *label, unsigned char *out, size_t outlen);

/*
 * PKCS#1 v1.5 type 2 with implicit rejection: when the padding is bad, the
 * result is a synthetic message derived from |kdk| (deterministic for one
 * key and ciphertext, of a pseudo-random length in 0..k-11) instead of an
 * error. Needs tlen >= k - 11. Returns the length of the real or synthetic
 * message; -1 on public-size errors, -2 on an internal failure.
 */
int gpursa_dec_pkcs1_type2_implicit(OSSL_LIB_CTX *libctx, unsigned char *to,
                                    size_t tlen, const unsigned char *em,
                                    size_t k,
                                    const unsigned char kdk[GPURSA_KDK_LEN]);

/*
 * OAEP (PKCS#1 v2.2, 7.1.2) with digest |md| for the label hash and
 * |mgf1md| for MGF1. Needs k >= 2 * hLen + 2 and tlen >= k - 2 * hLen - 2.
 * Returns the message length, -1 when the decoding fails (|to| unchanged)
 * or a public size is wrong, -2 on an internal failure.
 */
int gpursa_dec_oaep(unsigned char *to, size_t tlen,
                    const unsigned char *em, size_t k,
                    const unsigned char *label, size_t labellen,
                    const EVP_MD *md, const EVP_MD *mgf1md);

/*
 * The TLS RSA key exchange premaster secret (RFC 5246, 7.4.7.1): the block
 * must be 00 02 PS 00 followed by exactly 48 bytes whose first two carry
 * |client_version| (or |alt_version| when non-zero, for clients that send the
 * negotiated version). On any failure the 48 bytes of |random| are returned
 * instead, with no error, so that a Bleichenbacher or Klima-Pokorny-Rosa
 * oracle learns nothing. Needs k >= 11 + 48 and tlen >= 48.
 * Returns 48, or -1 on public-size errors.
 */
int gpursa_dec_tls_premaster(unsigned char *to, size_t tlen,
                             const unsigned char *em, size_t k,
                             unsigned int client_version,
                             unsigned int alt_version,
                             const unsigned char random[GPURSA_TLS_PREMASTER_LEN]);

/* MGF1 (PKCS#1 v2.2, B.2.1): mask of |len| bytes from |seed|. 1 or 0. */
int gpursa_mgf1(unsigned char *mask, size_t len, const unsigned char *seed,
                size_t seedlen, const EVP_MD *md);

#endif /* GPURSA_RSA_DEC_PAD_H */
