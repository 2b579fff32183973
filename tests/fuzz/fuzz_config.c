/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz the provider configuration: values for every gpursa key (and unknown
 * keys) through GPURSA_* environment variables, a generated openssl.cnf
 * section, or both; then load gpursa into a fresh library context. The load
 * must either succeed or fail with an OpenSSL error, never crash or hang;
 * a provider that loaded must then sign correctly (checked by the default
 * provider's verify) or fail with an error.
 *
 * Input: flags (bit0 cnf, bit1 env too, bit2 sign after loading, bit3
 * config_diagnostics in the cnf), a pair
 * count, then per pair a key index and a value (length byte and bytes; a
 * single byte below 0x80 picks a word from the dictionary).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "fuzz_common.h"

static const char *const config_keys[] = {
    "backend", "devices", "max_batch", "min_gpu_batch", "max_wait_us", "max_inflight",
    "log_level", "variant", "cpu_fallback", "stats", "identity", "nonsense", "MAX_BATCH", "log-level",
    "device_batches", "metrics_file", "metrics_interval_ms", "host_threads", "cuda_fp64",
    "cuda_debug",
};
#define NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

static const char *const config_words[] = {
    "auto", "cuda", "host", "cpu", "all", "0", "1", "-1", "2", "3", "4", "64", "8192",
    "1048576", "1048577", "16777216", "16777217", "10000000", "10000001", "-0", "+1",
    " 1", "1 ", "0x10", "1e3", "99999999999999999999", "-99999999999999999999", "",
    "0,1", "0,,1", "1,", ",1", "7", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
    "abc", "imad", "xmad", "fast", "coop", "always", "never", "AUTO", "Host", "yes", "no",
    "true", "${ENV::HOME}", "16", "17",
    "$nonsense", "\"quoted\"", "1;2", "%s%s%s%n",
    /* metrics_file: a working one (%p: removed at unload), and bad ones */
    "/tmp/gpursa-fuzz-metrics-%p.prom", "/nonexistent-gpursa/m.prom", "/tmp/", "m.prom",
    "/tmp/m-%%-%p-%", "9", "10", "3600000", "3600001",
};
#define NWORDS (sizeof(config_words) / sizeof(config_words[0]))

#define MAX_PAIRS 10

typedef struct {
    const char *key;
    char value[256];
} config_pair;

static char cnf_path[64];

static void env_name(char *out, size_t outlen, const char *key)
{
    size_t j;

    snprintf(out, outlen, "GPURSA_%s", key);
    for (j = 7; out[j] != '\0'; j++)
        out[j] = (char)toupper((unsigned char)out[j]);
}

/* A config file whose gpursa section holds the pairs; "module" is never
 * written, so the name resolves through OPENSSL_MODULES to the build tree. */
static int write_cnf(const config_pair *pairs, size_t n, int diagnostics)
{
    FILE *f = fopen(cnf_path, "w");
    size_t i;

    if (f == NULL)
        return 0;
    fprintf(f, "openssl_conf = init\n[init]\nproviders = prov\n%s"
               "[prov]\ndefault = default_sect\ngpursa = gpursa_sect\n"
               "[default_sect]\nactivate = 1\n[gpursa_sect]\nactivate = 1\n",
            diagnostics ? "config_diagnostics = 1\n" : "");
    for (i = 0; i < n; i++)
        fprintf(f, "%s = %s\n", pairs[i].key, pairs[i].value);
    return fclose(f) == 0;
}

static void sign_once(OSSL_LIB_CTX *libctx)
{
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(libctx, "RSA", "provider=gpursa"), *v;
    EVP_PKEY *key = NULL;
    unsigned char md[32] = { 1, 2, 3 }, sig[512];
    size_t siglen = sizeof(sig);

    if (EVP_PKEY_todata(fz_default_key(FZ_KEY_1024), EVP_PKEY_KEYPAIR, &params) <= 0)
        fz_fail("todata");
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0
        || EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_KEYPAIR, params) <= 0) {
        fz_expect_error("key import after a configured load");
        goto end;
    }
    EVP_PKEY_CTX_free(ctx);
    ctx = EVP_PKEY_CTX_new_from_pkey(libctx, key, "provider=gpursa");
    if (ctx == NULL || EVP_PKEY_sign_init(ctx) <= 0
        || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0
        || EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) <= 0
        || EVP_PKEY_sign(ctx, sig, &siglen, md, sizeof(md)) <= 0) {
        fz_expect_error("sign after a configured load");
        goto end;
    }
    v = EVP_PKEY_CTX_new_from_pkey(fz_default_libctx(), fz_default_key(FZ_KEY_1024), NULL);
    if (v == NULL || EVP_PKEY_verify_init(v) <= 0
        || EVP_PKEY_CTX_set_rsa_padding(v, RSA_PKCS1_PADDING) <= 0
        || EVP_PKEY_CTX_set_signature_md(v, EVP_sha256()) <= 0
        || EVP_PKEY_verify(v, sig, siglen, md, sizeof(md)) != 1)
        fz_fail("a configured gpursa signed wrongly");
    EVP_PKEY_CTX_free(v);
end:
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(key);
    OSSL_PARAM_free(params);
    ERR_clear_error();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = { data, size };
    config_pair pairs[MAX_PAIRS];
    size_t n, i, len;
    uint8_t flags;
    int use_cnf, use_env, loaded;
    OSSL_LIB_CTX *libctx;
    OSSL_PROVIDER *prov = NULL, *dflt = NULL;
    char name[64];

    if (size < 2)
        return 0;
    if (cnf_path[0] == '\0')
        snprintf(cnf_path, sizeof(cnf_path), "/tmp/gpursa-fuzz-%ld.cnf", (long)getpid());
    flags = fz_u8(&in);
    use_cnf = flags & 1;
    use_env = !use_cnf || (flags & 2);
    n = fz_u8(&in) % (MAX_PAIRS + 1);
    for (i = 0; i < n; i++) {
        const uint8_t *raw;
        size_t j;

        pairs[i].key = config_keys[fz_u8(&in) % NKEYS];
        raw = fz_bytes(&in, fz_u8(&in), &len);
        if (len == 1 && raw[0] < 0x80) {
            snprintf(pairs[i].value, sizeof(pairs[i].value), "%s", config_words[raw[0] % NWORDS]);
        } else {
            /* no NUL (env) and no line breaks (one cnf line per value) */
            for (j = 0; j < len; j++)
                pairs[i].value[j] = raw[j] == 0 || raw[j] == '\n' || raw[j] == '\r'
                    ? ' ' : (char)raw[j];
            pairs[i].value[len] = '\0';
            /* Random bytes must not name a writable folder (the fuzzer runs
             * as root): under a missing one they reach the path parser and
             * the folder check, and nothing is written. */
            if (strcmp(pairs[i].key, "metrics_file") == 0) {
                char v[sizeof(pairs[i].value)];

                snprintf(v, sizeof(v), "/nonexistent-gpursa-fuzz/%s", pairs[i].value);
                memcpy(pairs[i].value, v, sizeof(v));
            }
        }
    }
    if (use_env)
        for (i = 0; i < n; i++) {
            env_name(name, sizeof(name), pairs[i].key);
            setenv(name, pairs[i].value, 1);
        }

    if ((libctx = OSSL_LIB_CTX_new()) == NULL)
        fz_fail("OSSL_LIB_CTX_new");
    if (use_cnf) {
        if (!write_cnf(pairs, n, flags & 8))
            fz_fail("cannot write %s", cnf_path);
        loaded = OSSL_LIB_CTX_load_config(libctx, cnf_path) > 0;
        if (!loaded)
            fz_expect_error("loading a config that activates gpursa");
        else if ((flags & 8) && !OSSL_PROVIDER_available(libctx, "gpursa"))
            fz_fail("config loaded with config_diagnostics but gpursa is not available");
        /* Without config_diagnostics OpenSSL ignores a module that fails to
         * activate (documented in config(5)): then only "no crash" holds. */
        loaded = loaded && OSSL_PROVIDER_available(libctx, "gpursa");
        unlink(cnf_path);
    } else {
        loaded = (prov = OSSL_PROVIDER_load(libctx, "gpursa")) != NULL
                 && (dflt = OSSL_PROVIDER_load(libctx, "default")) != NULL;
        if (prov == NULL)
            fz_expect_error("OSSL_PROVIDER_load(gpursa)");
    }
    ERR_clear_error();
    if (loaded && (flags & 4))
        sign_once(libctx);
    if (prov != NULL)
        OSSL_PROVIDER_unload(prov);
    /* Unloaded explicitly: left to OSSL_LIB_CTX_free, OpenSSL 3.0 leaks the
     * default provider object once gpursa's child libctx has referenced it
     * (reported; tests/security covers the plain load/unload cycle). */
    if (dflt != NULL)
        OSSL_PROVIDER_unload(dflt);
    OSSL_LIB_CTX_free(libctx);
    for (i = 0; i < n; i++) {
        env_name(name, sizeof(name), pairs[i].key);
        unsetenv(name);
    }
    ERR_clear_error();
    return 0;
}
