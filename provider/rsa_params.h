/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa: parameter handling the RSA operations share (signature and
 * asymmetric cipher). Each operation still decides which padding modes and
 * digests it allows; these functions only read, name and fetch.
 */
#ifndef GPURSA_RSA_PARAMS_H
#define GPURSA_RSA_PARAMS_H

#include <stddef.h>
#include <openssl/core.h>
#include <openssl/evp.h>
#include "gpursa_prov.h"

/*
 * A padding-mode parameter as the default provider takes it: an integer
 * (RSA_*_PADDING) or one of the names of OpenSSL's pad-mode table ("pkcs1",
 * "none", "oaep" or its old spelling "oeap", "x931", "pss"). Sets *pad and
 * returns 1, or returns 0 without raising when |p| is neither; the integer is
 * not checked, the caller decides what its operation allows.
 */
int gpursa_rsa_pad_mode_from_param(const OSSL_PARAM *p, int *pad);

/*
 * Writes |pad| into |p|: as the number when |p| is an integer, else as its
 * name. Returns 0 without raising when |pad| has no name (the TLS premaster
 * mode) or |p| cannot hold it.
 */
int gpursa_rsa_pad_mode_to_param(OSSL_PARAM *p, int pad);

/*
 * Reads the optional UTF-8 parameter |key| of |params| into |buf| (|size|
 * bytes, room for the NUL included). Returns 1 when found, 0 when absent,
 * -1 (with a GPURSA_R_BAD_PARAMETER error) when it is not a string that fits.
 */
int gpursa_rsa_string_param(const GPURSA_PROV_CTX *provctx, const OSSL_PARAM params[],
                            const char *key, char *buf, size_t size);

/*
 * Fetches digest |name| from the provider's library context with property
 * query |props|; when that fails and |retry_without_props| is set, once more
 * with none (an operation's "provider=gpursa" matches no digest). Errors of
 * the failed fetches are dropped for one GPURSA_R_BAD_DIGEST error naming
 * the digest. Returns the digest (the caller frees it) or NULL.
 */
EVP_MD *gpursa_rsa_fetch_md(const GPURSA_PROV_CTX *provctx, const char *name,
                            const char *props, int retry_without_props);

#endif /* GPURSA_RSA_PARAMS_H */
