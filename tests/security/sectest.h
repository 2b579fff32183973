/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for the security suites: gpursa loaded on each backend this
 * machine has (cpu and host always, cuda with a GPU), keys from the default
 * provider imported into gpursa, and the "failed loudly" assertion.
 */
#ifndef GPURSA_SECTEST_H
#define GPURSA_SECTEST_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

/* Backends to test: "cpu", "host", and "cuda" when a GPU is present. */
int sec_nbackends(void);
const char *sec_backend(int i);
/* A fresh libctx with default and gpursa (GPURSA_BACKEND=backend plus any
 * extra NAME=VALUE settings, NULL-terminated, for this load only). */
OSSL_LIB_CTX *sec_libctx(const char *backend, const char *const *extra_env);
/* Unloads gpursa and default, then frees the libctx. */
void sec_libctx_free(OSSL_LIB_CTX *libctx);
/* An RSA key from the default provider (cached per size in this process). */
EVP_PKEY *sec_default_rsa(int bits);
/* That key imported into gpursa's keymgmt in libctx. */
EVP_PKEY *sec_to_gpursa(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey);
/* A provider counter ("gpursa-faults", ...) of gpursa in libctx. */
uint64_t sec_stat(OSSL_LIB_CTX *libctx, const char *name);
/* ret reports failure (<= 0) and an OpenSSL error is queued; clears it. */
void sec_assert_failed_loudly(int ret, const char *what);
/* Run a suite (Check's fork mode as CK_FORK says); the exit status for main. */
struct Suite;
int sec_run(struct Suite *s);
/* The n of a key as k big-endian bytes (k = modulus size); caller frees. */
unsigned char *sec_modulus(EVP_PKEY *pkey, size_t *k);

#endif
