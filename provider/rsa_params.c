/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa: parameter handling shared by the RSA signature (rsa_sig.c) and
 * asymmetric cipher (rsa_enc.c) operations, so both read padding modes,
 * names and digests the same way the default provider does.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/rsa.h>
#include "rsa_params.h"

#ifndef OSSL_PKEY_RSA_PAD_MODE_OAEP
# define OSSL_PKEY_RSA_PAD_MODE_OAEP "oaep"
#endif

/* One table for both operations. Reading a mode back gives the first name
 * for its number, so "oaep" stays ahead of the historical "oeap". */
static const OSSL_ITEM rsa_pad_names[] = {
    { RSA_PKCS1_PADDING, OSSL_PKEY_RSA_PAD_MODE_PKCSV15 },
    { RSA_NO_PADDING, OSSL_PKEY_RSA_PAD_MODE_NONE },
    { RSA_PKCS1_OAEP_PADDING, OSSL_PKEY_RSA_PAD_MODE_OAEP },
    { RSA_PKCS1_OAEP_PADDING, "oeap" },   /* OpenSSL's historical spelling */
    { RSA_X931_PADDING, OSSL_PKEY_RSA_PAD_MODE_X931 },
    { RSA_PKCS1_PSS_PADDING, OSSL_PKEY_RSA_PAD_MODE_PSS },
    { 0, NULL }
};

int gpursa_rsa_pad_mode_from_param(const OSSL_PARAM *p, int *pad)
{
    /* copied out: the caller's string need not be NUL-terminated, and one
     * longer than every name cannot match */
    char name[16], *pname = name;
    size_t i;

    if (p->data_type == OSSL_PARAM_INTEGER)
        return OSSL_PARAM_get_int(p, pad);
    if (p->data_type != OSSL_PARAM_UTF8_STRING
        || !OSSL_PARAM_get_utf8_string(p, &pname, sizeof(name)))
        return 0;
    for (i = 0; rsa_pad_names[i].ptr != NULL; i++) {
        if (strcmp(name, rsa_pad_names[i].ptr) == 0) {
            *pad = (int)rsa_pad_names[i].id;
            return 1;
        }
    }
    return 0;
}

int gpursa_rsa_pad_mode_to_param(OSSL_PARAM *p, int pad)
{
    size_t i;

    if (p->data_type == OSSL_PARAM_INTEGER)
        return OSSL_PARAM_set_int(p, pad);
    for (i = 0; rsa_pad_names[i].ptr != NULL; i++)
        if ((int)rsa_pad_names[i].id == pad)
            return OSSL_PARAM_set_utf8_string(p, rsa_pad_names[i].ptr);
    return 0;
}

int gpursa_rsa_string_param(const GPURSA_PROV_CTX *provctx, const OSSL_PARAM params[],
                            const char *key, char *buf, size_t size)
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, key);

    if (p == NULL)
        return 0;
    if (!OSSL_PARAM_get_utf8_string(p, &buf, size)) {
        GPURSA_RAISE_MSG(provctx, GPURSA_R_BAD_PARAMETER, "bad %s", key);
        return -1;
    }
    return 1;
}

EVP_MD *gpursa_rsa_fetch_md(const GPURSA_PROV_CTX *provctx, const char *name,
                            const char *props, int retry_without_props)
{
    EVP_MD *md;

    ERR_set_mark();
    md = EVP_MD_fetch(provctx->libctx, name, props);
    if (md == NULL && retry_without_props)
        md = EVP_MD_fetch(provctx->libctx, name, NULL);
    ERR_pop_to_mark();
    if (md == NULL)
        GPURSA_RAISE_MSG(provctx, GPURSA_R_BAD_DIGEST, "digest %s could not be fetched", name);
    return md;
}
