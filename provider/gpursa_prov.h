/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa provider: shared declarations of the OpenSSL-facing layer.
 * One prefix (gpursa_), one raise macro, one key struct of our own.
 */
#ifndef GPURSA_PROV_H
#define GPURSA_PROV_H

#include <stddef.h>
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include "queue/gpursa_queue.h"

#define GPURSA_PROV_NAME "gpursa"
#define GPURSA_RSA_NAMES "RSA:rsaEncryption:1.2.840.113549.1.1.1"
#define GPURSA_PROPS "provider=gpursa"

/* Reason codes; strings in gpursa_err.c. */
enum {
    GPURSA_R_INTERNAL = 1,
    GPURSA_R_MALLOC,
    GPURSA_R_BAD_CONFIG,
    GPURSA_R_MISSING_KEY_PART,
    GPURSA_R_BAD_KEY,
    GPURSA_R_KEY_TOO_SMALL,
    GPURSA_R_KEY_TOO_LARGE,
    GPURSA_R_EVEN_MODULUS,
    GPURSA_R_INPUT_TOO_LARGE,     /* input >= n */
    GPURSA_R_WRONG_INPUT_LENGTH,
    GPURSA_R_OUTPUT_TOO_SMALL,
    GPURSA_R_BAD_PADDING_MODE,
    GPURSA_R_BAD_DIGEST,
    GPURSA_R_BAD_SALT_LENGTH,
    GPURSA_R_BAD_PARAMETER,
    GPURSA_R_DECRYPT_FAILED,      /* PKCS#1 v1.5 padding check failed (constant time) */
    GPURSA_R_PRIVATE_OP_FAILED,
    GPURSA_R_FALLBACK_FAILED,     /* the default provider refused */
    GPURSA_R_NOT_PRIVATE_KEY,
    GPURSA_R_OPERATION_NOT_SUPPORTED,
    GPURSA_R_GPU_ERROR,
    GPURSA_R_BAD_TLS_VERSION,
    GPURSA_R_DATA_TOO_SMALL,      /* empty ciphertext, refused as default does */
    /* Refusals the default provider also makes, named by its reason text. */
    GPURSA_R_DIGEST_NOT_ALLOWED,
    GPURSA_R_MGF1_DIGEST_NOT_ALLOWED,
    GPURSA_R_INVALID_MGF1_MD,
    GPURSA_R_DIGEST_TOO_BIG_FOR_KEY,
    GPURSA_R_INVALID_DIGEST_LENGTH,
    GPURSA_R_INVALID_PADDING_MODE,
    GPURSA_R_UNKNOWN_PADDING_TYPE,
    GPURSA_R_DATA_TOO_SMALL_FOR_KEY_SIZE,
    GPURSA_R_DATA_TOO_LARGE_FOR_KEY_SIZE,
    GPURSA_R_NEEDS_PSS,
    GPURSA_R_INVALID_SIGNATURE_SIZE,
    GPURSA_R_OAEP_DECODING_ERROR,
    GPURSA_R_DATA_GREATER_THAN_MOD_LEN,
    GPURSA_R_OLD_OPENSSL,         /* libcrypto older than 3.0.8 */
    GPURSA_R_FALLBACK_PROVIDER,   /* fallback_provider not loaded, or without RSA */
    GPURSA_R_MAX_
};

typedef struct gpursa_prov_ctx GPURSA_PROV_CTX;

/* The provider context: one per loaded instance of the provider. */
struct gpursa_prov_ctx {
    const OSSL_CORE_HANDLE *handle;
    OSSL_LIB_CTX *libctx;          /* child of the application's libctx */
    gpursa_config config;
    gpursa_stats stats;
    gpursa_queue *queue;           /* NULL while backend=cpu or before first use */
    gpursa_metrics *metrics;       /* the metrics_file thread, NULL when off */
    /* core error functions, captured at init */
    OSSL_FUNC_core_new_error_fn *core_new_error;
    OSSL_FUNC_core_set_error_debug_fn *core_set_error_debug;
    OSSL_FUNC_core_vset_error_fn *core_vset_error;
    OSSL_FUNC_core_get_params_fn *core_get_params;
    /* "provider=<fallback_provider>": every fetch of the CPU fallback */
    char fallback_propq[80];
    /* "default" loaded into libctx by us when the application had not loaded it */
    OSSL_PROVIDER *fallback_default;
    void *fallback_lock;           /* CRYPTO_RWLOCK for fallback_ready/fallback_default */
    int fallback_ready;            /* RSA is fetchable from fallback_provider */
    /* the PSS salt length the default provider signs with when none is set
     * (RSA_PSS_SALTLEN_*); 0 until asked, by the first signature context */
    atomic_int pss_default_saltlen;
};

/* Make sure the fallback libctx can do RSA in fallback_provider (loads
 * "default" into it when that is the one and the application did not load
 * it). 1 ok, 0 with an error naming fallback_provider raised. */
int gpursa_prov_fallback_ready(GPURSA_PROV_CTX *ctx);

/* 1 when version ("3.0.8", the core's OSSL_PROV_PARAM_CORE_VERSION) is an
 * OpenSSL whose RSA decryption gpursa may fall back to: 3.0.8 or later
 * (constant-time since CVE-2022-4304's fix); 0 for older or unparsable. */
int gpursa_openssl_version_ok(const char *version);

/* Configuration: fill cfg from the provider's openssl.cnf section (through
 * core get_params) and GPURSA_<NAME> environment variables, on top of the
 * defaults. 0 with an error raised when a value is invalid. */
int gpursa_config_load(GPURSA_PROV_CTX *ctx, gpursa_config *cfg);
/* Parse one key's value (as read from the cnf or the environment); 0 with an
 * error naming the key and value when it is invalid or the key unknown. */
int gpursa_config_set(GPURSA_PROV_CTX *ctx, gpursa_config *cfg,
                      const char *key, const char *value, const char *origin);
/* The gpu/ backend the queue runs on, or NULL to let the queue pick one from
 * cfg. gpursa.so links gpursa_prov_backend.c (NULL); a build of the provider
 * for a benchmark links one of its own (bench/gpursa_instant_prov.c). */
const gpursa_gpu_backend_ops *gpursa_prov_backend(const gpursa_config *cfg);

/* Raise an OpenSSL error with a gpursa reason; extra printf-style detail optional. */
void gpursa_raise(const GPURSA_PROV_CTX *ctx, const char *file, int line,
                  const char *func, int reason, const char *fmt, ...);
#define GPURSA_RAISE(ctx, reason) \
    gpursa_raise((ctx), OPENSSL_FILE, OPENSSL_LINE, OPENSSL_FUNC, (reason), NULL)
#define GPURSA_RAISE_MSG(ctx, reason, ...) \
    gpursa_raise((ctx), OPENSSL_FILE, OPENSSL_LINE, OPENSSL_FUNC, (reason), __VA_ARGS__)
const OSSL_ITEM *gpursa_reason_strings(void);

/* Log at a level (0 error .. 3 debug) to stderr when config.log_level allows.
 * Never pass key material or plaintexts. */
void gpursa_log(const GPURSA_PROV_CTX *ctx, int level, const char *fmt, ...);

/*
 * Our own RSA key. Two-prime keys may go to the GPU; multi-prime keys and
 * anything else stay on the fallback. Private parts are wiped on free.
 */
#define GPURSA_MAX_PRIMES 5        /* as OpenSSL's RSA_MAX_PRIME_NUM */

typedef struct gpursa_key {
    GPURSA_PROV_CTX *provctx;
    BIGNUM *n, *e, *d;             /* d may be NULL for public keys */
    BIGNUM *p, *q, *dp, *dq, *qinv;/* NULL unless a CRT private key */
    int nprimes;                   /* 2 normally; >2 multi-prime (fallback only) */
    EVP_PKEY *fallback;            /* the same key in the fallback libctx (default provider) */
    gpursa_queue_key *qkey;        /* the queue's handle (GPU copies), NULL if none */
    void *lock;                    /* CRYPTO_RWLOCK guarding lazy fields */
    /* primes 3..nprimes of a multi-prime key: r_i, d_i, t_i */
    BIGNUM *mp_prime[GPURSA_MAX_PRIMES - 2];
    BIGNUM *mp_exp[GPURSA_MAX_PRIMES - 2];
    BIGNUM *mp_coeff[GPURSA_MAX_PRIMES - 2];
} GPURSA_KEY;

GPURSA_KEY *gpursa_key_new(GPURSA_PROV_CTX *provctx);
void gpursa_key_free(GPURSA_KEY *key);
int gpursa_key_is_private(const GPURSA_KEY *key);
int gpursa_key_bits(const GPURSA_KEY *key);
int gpursa_key_size(const GPURSA_KEY *key);   /* modulus bytes */
/* The key in the fallback library context, built on first use (not up-ref'd). */
EVP_PKEY *gpursa_key_fallback(GPURSA_KEY *key);
/* 1 when the key may go to the GPU path: two-prime with full CRT parts. */
int gpursa_key_is_crt2(const GPURSA_KEY *key);
/* Load key parts from params (selection as in keymgmt import); checks the
 * key (modulus odd, size 512..16384 bits, e odd >= 3, all parts present,
 * product of primes == n, CRT parts that agree with each other and with d:
 * distinct primes, exponents d mod (prime - 1) inverting e, coefficients
 * reduced and inverting what they must). 0 with a gpursa error raised. */
int gpursa_key_fromdata(GPURSA_KEY *key, int selection, const OSSL_PARAM params[]);
/* Push the parts selection asks for (n, e, d, factors, exponents,
 * coefficients) to bld. */
int gpursa_key_todata(const GPURSA_KEY *key, int selection, OSSL_PARAM_BLD *bld);
/* A copy of the parts selection asks for. */
GPURSA_KEY *gpursa_key_dup(const GPURSA_KEY *key, int selection);

/*
 * The seam: every raw RSA private-key operation goes through here.
 * out = in^d mod n, blinded; in and out are exactly gpursa_key_size(key) bytes
 * big-endian; in must be < n (checked: error, not a wrong answer).
 * Returns 1 on success, 0 with an OpenSSL error raised.
 */
int gpursa_rsa_private_raw(GPURSA_KEY *key, const unsigned char *in,
                           unsigned char *out, size_t len);

/* The CPU fallback for the same operation (default provider, blinded);
 * matches gpursa_cpu_private_fn with arg = GPURSA_KEY *. */
int gpursa_fallback_private_raw(void *key, const unsigned char *in,
                                unsigned char *out, size_t len);

/* A context for a delegated operation on the key in the fallback libctx. */
EVP_PKEY_CTX *gpursa_fallback_pkey_ctx(GPURSA_KEY *key);

/* 1 if the running libcrypto's default provider decrypts an empty ciphertext
 * (the integer 0; OpenSSL 3.0 does, later releases refuse it); else 0 with
 * GPURSA_R_DATA_TOO_SMALL raised. */
int gpursa_fallback_takes_empty_input(GPURSA_KEY *key);

/* Dispatch tables. */
extern const OSSL_DISPATCH gpursa_rsa_keymgmt_functions[];
extern const OSSL_DISPATCH gpursa_rsa_signature_functions[];
/* "RSA", and with OpenSSL 3.4+ headers the composite RSA-<digest> algorithms */
extern const OSSL_ALGORITHM gpursa_rsa_signature_algorithms[];
extern const OSSL_DISPATCH gpursa_rsa_asym_cipher_functions[];

#endif /* GPURSA_PROV_H */
