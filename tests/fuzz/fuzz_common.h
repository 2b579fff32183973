/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the gpursa fuzz harnesses: library contexts with the build-tree
 * gpursa on a chosen backend, the committed fixed keys in both providers,
 * a cursor over the fuzz input, and the oracle's abort.
 *
 * Every harness checks more than "no crash": a failing operation must leave
 * an OpenSSL error, and a result gpursa returns is cross-checked against
 * OpenSSL's default provider, so a silent wrong answer aborts too.
 */
#ifndef GPURSA_FUZZ_COMMON_H
#define GPURSA_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

/* Backends a harness can pick; each gets its own libctx (config is read at load). */
enum { FZ_BACKEND_CPU = 0, FZ_BACKEND_HOST = 1, FZ_NBACKENDS = 2 };
enum { FZ_KEY_1024 = 0, FZ_KEY_2048 = 1, FZ_KEY_1024_3PRIME = 2, FZ_NKEYS = 3 };

/* Loads everything once (LLVMFuzzerInitialize, defined in fuzz_common.c). */
void fz_init(void);
int LLVMFuzzerInitialize(int *argc, char ***argv);
/* libctx with only the default provider (the oracle). */
OSSL_LIB_CTX *fz_default_libctx(void);
/* libctx with default and gpursa loaded, gpursa on the given backend. */
OSSL_LIB_CTX *fz_gpursa_libctx(int backend);
/* The fixed key: in the default provider, or imported into gpursa's keymgmt. */
EVP_PKEY *fz_default_key(int key);
EVP_PKEY *fz_gpursa_key(int backend, int key);
const char *fz_backend_name(int backend);

/* Cursor over the fuzz input; reads past the end give zeros / empty. */
typedef struct {
    const uint8_t *p;
    size_t left;
} fz_input;

uint8_t fz_u8(fz_input *in);
uint16_t fz_u16(fz_input *in);
uint32_t fz_u32(fz_input *in);
/* Up to n bytes (fewer at the end of input); *got says how many. */
const uint8_t *fz_bytes(fz_input *in, size_t n, size_t *got);

/* Names a harness picks from: valid digests, odd ones, and nonsense. */
extern const char *const fz_digest_names[];
extern const size_t fz_n_digest_names;

/* The oracle failed: print why and the OpenSSL error queue, then abort(). */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A gpursa operation returned failure: it must have raised an OpenSSL error. */
void fz_expect_error(const char *what);

#endif
