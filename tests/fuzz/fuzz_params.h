/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz-built OSSL_PARAM arrays with hostile values: any of a harness's
 * parameter names, given as any data type and size. Each value sits in its
 * own exactly-sized heap block so ASan catches a provider reading past it;
 * strings are NUL-terminated just past data_size, as OpenSSL's own
 * OSSL_PARAM_construct_utf8_string leaves them.
 */
#ifndef GPURSA_FUZZ_PARAMS_H
#define GPURSA_FUZZ_PARAMS_H

#include <openssl/params.h>
#include "fuzz_common.h"

#define FZ_MAX_PARAMS 8

typedef struct {
    OSSL_PARAM params[FZ_MAX_PARAMS + 1];
    void *blocks[FZ_MAX_PARAMS];
    size_t n;
} fz_params;

/* Reads a count, then per parameter: name index, type, size, value bytes.
 * A one-byte string value below 0x80 picks a word from dict (valid words
 * reach deeper code than random bytes do). */
void fz_params_read(fz_params *fp, fz_input *in, const char *const *names, size_t nnames,
                    const char *const *dict, size_t ndict);
void fz_params_free(fz_params *fp);

#endif
