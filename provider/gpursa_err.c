/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Errors and logging. Errors go through the core's error functions so they
 * carry the provider's library code and our reason strings; log lines go to
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
    { GPURSA_R_INPUT_TOO_LARGE, "gpursa: input is not smaller than the modulus" },
    { GPURSA_R_WRONG_INPUT_LENGTH, "gpursa: input length differs from the modulus length" },
    { GPURSA_R_OUTPUT_TOO_SMALL, "gpursa: output buffer too small" },
    { GPURSA_R_BAD_PADDING_MODE, "gpursa: unsupported padding mode" },
    { GPURSA_R_BAD_DIGEST, "gpursa: unsupported or invalid digest" },
    { GPURSA_R_BAD_SALT_LENGTH, "gpursa: invalid PSS salt length" },
    { GPURSA_R_BAD_PARAMETER, "gpursa: invalid parameter" },
    { GPURSA_R_DECRYPT_FAILED, "gpursa: decryption failed" },
    { GPURSA_R_PRIVATE_OP_FAILED, "gpursa: RSA private-key operation failed" },
    { GPURSA_R_FALLBACK_FAILED, "gpursa: the fallback (default provider) failed" },
    { GPURSA_R_NOT_PRIVATE_KEY, "gpursa: operation needs a private key" },
    { GPURSA_R_OPERATION_NOT_SUPPORTED, "gpursa: operation not supported" },
    { GPURSA_R_GPU_ERROR, "gpursa: GPU error" },
    { GPURSA_R_BAD_TLS_VERSION, "gpursa: bad TLS client version in premaster secret" },
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
    static const char *const names[] = { "error", "warning", "info", "debug" };
    int allowed = ctx != NULL ? ctx->config.log_level : 1;
    va_list ap;

    if (level > allowed || level < 0 || level > 3)
        return;
    va_start(ap, fmt);
    fprintf(stderr, "gpursa: %s: ", names[level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
