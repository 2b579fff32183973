/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Errors and logging. Errors go through the core's error functions so they
 * carry the provider's library code and our reason strings. Where the
 * default provider refuses the same thing, the reason string contains its
 * reason text ("gpursa: invalid mgf1 md"), so that searches for OpenSSL's
 * messages find gpursa's (tests/provider/test_errors.c); log lines go to
 * stderr, gated by config.log_level, and never contain key material.
 */
#include <stdarg.h>
#include <stdio.h>
#include <openssl/err.h>
#include "provider/gpursa_prov.h"

static const OSSL_ITEM gpursa_reasons[] = {
    { GPURSA_R_INTERNAL, "gpursa: internal error" },
    { GPURSA_R_MALLOC, "gpursa: out of memory" },
    { GPURSA_R_BAD_CONFIG, "gpursa: invalid configuration value" },
    { GPURSA_R_MISSING_KEY_PART, "gpursa: RSA key is missing a part" },
    { GPURSA_R_BAD_KEY, "gpursa: invalid RSA key" },
    { GPURSA_R_KEY_TOO_SMALL, "gpursa: RSA modulus too small (< 512 bits)" },
    { GPURSA_R_KEY_TOO_LARGE, "gpursa: RSA modulus too large (> 16384 bits)" },
    { GPURSA_R_EVEN_MODULUS, "gpursa: RSA modulus is even" },
    { GPURSA_R_INPUT_TOO_LARGE, "gpursa: data too large for modulus" },
    { GPURSA_R_WRONG_INPUT_LENGTH, "gpursa: input length differs from the modulus length" },
    { GPURSA_R_OUTPUT_TOO_SMALL, "gpursa: bad length: output buffer too small" },
    { GPURSA_R_BAD_PADDING_MODE, "gpursa: illegal or unsupported padding mode" },
    { GPURSA_R_BAD_DIGEST, "gpursa: unsupported or invalid digest" },
    { GPURSA_R_BAD_SALT_LENGTH, "gpursa: invalid salt length" },
    { GPURSA_R_BAD_PARAMETER, "gpursa: invalid parameter" },
    { GPURSA_R_DECRYPT_FAILED, "gpursa: pkcs decoding error" },
    { GPURSA_R_PRIVATE_OP_FAILED, "gpursa: RSA private-key operation failed" },
    { GPURSA_R_FALLBACK_FAILED, "gpursa: the fallback (default provider) failed" },
    { GPURSA_R_NOT_PRIVATE_KEY, "gpursa: operation needs a private key" },
    { GPURSA_R_OPERATION_NOT_SUPPORTED, "gpursa: operation not supported" },
    { GPURSA_R_GPU_ERROR, "gpursa: GPU error" },
    { GPURSA_R_BAD_TLS_VERSION, "gpursa: bad TLS client version in premaster secret" },
    { GPURSA_R_DATA_TOO_SMALL, "gpursa: data too small" },
    { GPURSA_R_DIGEST_NOT_ALLOWED, "gpursa: digest not allowed" },
    { GPURSA_R_MGF1_DIGEST_NOT_ALLOWED, "gpursa: invalid mgf1 md: digest not allowed" },
    { GPURSA_R_INVALID_MGF1_MD, "gpursa: invalid mgf1 md" },
    { GPURSA_R_DIGEST_TOO_BIG_FOR_KEY, "gpursa: digest too big for rsa key" },
    { GPURSA_R_INVALID_DIGEST_LENGTH, "gpursa: invalid digest length" },
    { GPURSA_R_INVALID_PADDING_MODE, "gpursa: invalid padding mode" },
    { GPURSA_R_UNKNOWN_PADDING_TYPE, "gpursa: unknown padding type" },
    { GPURSA_R_DATA_TOO_SMALL_FOR_KEY_SIZE, "gpursa: data too small for key size" },
    { GPURSA_R_DATA_TOO_LARGE_FOR_KEY_SIZE, "gpursa: data too large for key size" },
    { GPURSA_R_NEEDS_PSS, "gpursa: not supported without PSS padding" },
    { GPURSA_R_INVALID_SIGNATURE_SIZE, "gpursa: invalid signature size" },
    { GPURSA_R_OAEP_DECODING_ERROR, "gpursa: oaep decoding error" },
    { GPURSA_R_DATA_GREATER_THAN_MOD_LEN, "gpursa: data greater than mod len" },
    { GPURSA_R_OLD_OPENSSL, "gpursa: OpenSSL older than 3.0.8 (RSA decryption not constant time, CVE-2022-4304)" },
    { GPURSA_R_FALLBACK_PROVIDER, "gpursa: fallback_provider is not loaded or has no RSA" },
    { 0, NULL }
};

const OSSL_ITEM *gpursa_reason_strings(void)
{
    return gpursa_reasons;
}

void gpursa_raise(const GPURSA_PROV_CTX *ctx, const char *file, int line,
                  const char *func, int reason, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (ctx != NULL && ctx->core_new_error != NULL && ctx->core_vset_error != NULL) {
        ctx->core_new_error(ctx->handle);
        if (ctx->core_set_error_debug != NULL)
            ctx->core_set_error_debug(ctx->handle, file, line, func);
        ctx->core_vset_error(ctx->handle, (uint32_t)reason, fmt, ap);
    } else {
        /* No provider context (should not happen): still leave an error. */
        ERR_new();
        ERR_set_debug(file, line, func);
        ERR_vset_error(ERR_LIB_PROV, ERR_R_INTERNAL_ERROR, fmt, ap);
    }
    va_end(ap);
}

void gpursa_log(const GPURSA_PROV_CTX *ctx, int level, const char *fmt, ...)
{
    static const char *const heads[] = { "gpursa: error: ", "gpursa: warning: ", "gpursa: info: ",
                                         "gpursa: debug: " };
    int allowed = ctx != NULL ? ctx->config.log_level : 1;
    va_list ap;

    if (level > allowed || level < 0 || level > 3)
        return;
    va_start(ap, fmt);
    gpursa_log_vline(heads[level], fmt, ap);
    va_end(ap);
}
