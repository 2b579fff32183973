/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider entry point: OSSL_provider_init, provider parameters
 * (name, version, build info, status, backend, stats counters), the
 * algorithm tables, and the child library context that holds the CPU
 * fallback (key generation, public-key operations, CPU private path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include "config.h"
#include "provider/gpursa_prov.h"

OSSL_provider_init_fn OSSL_provider_init;
static OSSL_FUNC_provider_gettable_params_fn gpursa_gettable_params;
static OSSL_FUNC_provider_get_params_fn gpursa_get_params;
static OSSL_FUNC_provider_query_operation_fn gpursa_query_operation;
static OSSL_FUNC_provider_get_reason_strings_fn gpursa_get_reason_strings;
static OSSL_FUNC_provider_teardown_fn gpursa_teardown;


/*
 * Stats counters as provider parameters, one per gpursa_stats field.
 * X(parameter name, field, summary-line label)
 */
#define GPURSA_STATS_FIELDS(X)                                          \
    X("gpursa-ops-gpu", ops_gpu)                                        \
    X("gpursa-ops-host", ops_host)                                      \
    X("gpursa-ops-cpu", ops_cpu)                                        \
    X("gpursa-batches", batches)                                        \
    X("gpursa-batch-items", batch_items)                                \
    X("gpursa-faults", faults)                                          \
    X("gpursa-fallback-small-batch", fb_small_batch)                    \
    X("gpursa-fallback-unsupported-key", fb_unsupported_key)            \
    X("gpursa-fallback-gpu-error", fb_gpu_error)                        \
    X("gpursa-fallback-no-device", fb_no_device)                        \
    X("gpursa-fallback-inline", fb_inline)

#define GPURSA_STAT_ENTRY(name, field) { name, offsetof(gpursa_stats, field) },
static const struct {
    const char *name;
    size_t offset;
} gpursa_stat_params[] = { GPURSA_STATS_FIELDS(GPURSA_STAT_ENTRY) };
#define GPURSA_NSTATS (sizeof(gpursa_stat_params) / sizeof(gpursa_stat_params[0]))

#define GPURSA_STAT_GETTABLE(name, field) \
    OSSL_PARAM_DEFN(name, OSSL_PARAM_UNSIGNED_INTEGER, NULL, sizeof(uint64_t)),
static const OSSL_PARAM gpursa_param_types[] = {
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN("gpursa-backend", OSSL_PARAM_UTF8_PTR, NULL, 0),
    GPURSA_STATS_FIELDS(GPURSA_STAT_GETTABLE)
    OSSL_PARAM_END
};

static uint64_t gpursa_stat_get(const GPURSA_PROV_CTX *ctx, size_t i)
{
    const atomic_uint_fast64_t *counter = (const atomic_uint_fast64_t *)
        ((const char *)&ctx->stats + gpursa_stat_params[i].offset);

    return (uint64_t)atomic_load(counter);
}

static const OSSL_PARAM *gpursa_gettable_params(void *vctx)
{
    (void)vctx;
    return gpursa_param_types;
}

static int gpursa_get_params(void *vctx, OSSL_PARAM params[])
{
    GPURSA_PROV_CTX *ctx = vctx;
    OSSL_PARAM *p;
    size_t i;

    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, "gpursa RSA GPU offload provider"))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, PACKAGE_VERSION))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, GPURSA_BUILD_INFO))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS);
    if (p != NULL && !OSSL_PARAM_set_int(p, 1))
        return 0;
    p = OSSL_PARAM_locate(params, "gpursa-backend");
    if (p != NULL
        && !OSSL_PARAM_set_utf8_ptr(p, gpursa_config_backend_name(ctx->config.backend)))
        return 0;
    for (i = 0; i < GPURSA_NSTATS; i++) {
        p = OSSL_PARAM_locate(params, gpursa_stat_params[i].name);
        if (p != NULL && !OSSL_PARAM_set_uint64(p, gpursa_stat_get(ctx, i)))
            return 0;
    }
    return 1;
}

static const OSSL_ALGORITHM gpursa_keymgmt[] = {
    { GPURSA_RSA_NAMES, GPURSA_PROPS, gpursa_rsa_keymgmt_functions, "gpursa RSA keys" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM gpursa_asym_cipher[] = {
    { GPURSA_RSA_NAMES, GPURSA_PROPS, gpursa_rsa_asym_cipher_functions, "gpursa RSA decryption" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *gpursa_query_operation(void *vctx, int operation_id,
                                                    int *no_cache)
{
    (void)vctx;
    *no_cache = 0;
    switch (operation_id) {
    case OSSL_OP_KEYMGMT:
        return gpursa_keymgmt;
    case OSSL_OP_SIGNATURE:
        return gpursa_rsa_signature_algorithms;
    case OSSL_OP_ASYM_CIPHER:
        return gpursa_asym_cipher;
    }
    return NULL;
}

static const OSSL_ITEM *gpursa_get_reason_strings(void *vctx)
{
    (void)vctx;
    return gpursa_reason_strings();
}

/* The one summary line of doc/design.md, "Observability" (GPURSA_STATS), at unload,
 * in one write (gpursa_log_line). */
static void gpursa_print_stats(const GPURSA_PROV_CTX *ctx)
{
    const gpursa_stats *s = &ctx->stats;
    uint64_t batches = atomic_load(&s->batches);
    uint64_t items = atomic_load(&s->batch_items);
    double mean = batches != 0 ? (double)items / (double)batches : 0.0;
    char body[512];

    snprintf(body, sizeof(body),
             "ops gpu=%llu host=%llu cpu=%llu batches=%llu mean_batch=%.1f"
             " faults=%llu fallbacks small_batch=%llu unsupported_key=%llu"
             " gpu_error=%llu no_device=%llu inline=%llu",
             (unsigned long long)atomic_load(&s->ops_gpu),
             (unsigned long long)atomic_load(&s->ops_host),
             (unsigned long long)atomic_load(&s->ops_cpu),
             (unsigned long long)batches, mean,
             (unsigned long long)atomic_load(&s->faults),
             (unsigned long long)atomic_load(&s->fb_small_batch),
             (unsigned long long)atomic_load(&s->fb_unsupported_key),
             (unsigned long long)atomic_load(&s->fb_gpu_error),
             (unsigned long long)atomic_load(&s->fb_no_device),
             (unsigned long long)atomic_load(&s->fb_inline));
    gpursa_log_line("gpursa: ", body);
}

static void gpursa_ctx_free(GPURSA_PROV_CTX *ctx)
{
    if (ctx == NULL)
        return;
    gpursa_metrics_stop(ctx->metrics);   /* first: its thread reads the queue */
    gpursa_queue_free(ctx->queue);       /* joins its threads, wipes GPU keys */
    OSSL_PROVIDER_unload(ctx->fallback_default);
    OSSL_LIB_CTX_free(ctx->libctx);
    CRYPTO_THREAD_lock_free(ctx->fallback_lock);
    OPENSSL_free(ctx->stats.stages);
    OPENSSL_free(ctx);
}

static void gpursa_teardown(void *vctx)
{
    GPURSA_PROV_CTX *ctx = vctx;

    if (ctx == NULL)
        return;
    if (ctx->config.stats >= 1)
        gpursa_print_stats(ctx);
    if (ctx->config.stats >= 2)
        gpursa_stages_print(ctx->stats.stages, "gpursa: stage ");
    gpursa_ctx_free(ctx);
}

/* Is RSA (key management and the private operation) reachable in the
 * fallback libctx, in fallback_provider? */
static int gpursa_fallback_fetchable(const GPURSA_PROV_CTX *ctx)
{
    EVP_KEYMGMT *km = EVP_KEYMGMT_fetch(ctx->libctx, "RSA", ctx->fallback_propq);
    EVP_ASYM_CIPHER *ac = EVP_ASYM_CIPHER_fetch(ctx->libctx, "RSA", ctx->fallback_propq);
    int ok = km != NULL && ac != NULL;

    EVP_KEYMGMT_free(km);
    EVP_ASYM_CIPHER_free(ac);
    return ok;
}

/*
 * The fallback fetches everything it computes (key generation and import,
 * verification, encryption, the raw decryption, key checks) with
 * "provider=<fallback_provider>": never from whichever other RSA provider
 * the application happens to load (a second gpursa, a hardware token).
 * The child libctx mirrors the application's providers. When the
 * fallback provider is "default" and the application did not load it (e.g.
 * `-provider gpursa` alone), load it into the child ourselves; any other
 * must be loaded by the application. Checked lazily, at each use until it
 * succeeds, because the application may load it after gpursa.
 */
int gpursa_prov_fallback_ready(GPURSA_PROV_CTX *ctx)
{
    int ready;

    if (!CRYPTO_THREAD_read_lock(ctx->fallback_lock))
        goto internal;
    ready = ctx->fallback_ready;
    CRYPTO_THREAD_unlock(ctx->fallback_lock);
    if (ready)
        return 1;
    if (!CRYPTO_THREAD_write_lock(ctx->fallback_lock))
        goto internal;
    if (!ctx->fallback_ready) {
        ERR_set_mark();
        if (gpursa_fallback_fetchable(ctx)) {
            ctx->fallback_ready = 1;
        } else if (ctx->fallback_default == NULL
                   && strcmp(ctx->config.fallback_provider, "default") == 0) {
            ctx->fallback_default = OSSL_PROVIDER_load(ctx->libctx, "default");
            if (ctx->fallback_default != NULL && gpursa_fallback_fetchable(ctx)) {
                ctx->fallback_ready = 1;
                gpursa_log(ctx, 3, "loaded the default provider for the CPU fallback");
            }
        }
        ERR_pop_to_mark();
    }
    ready = ctx->fallback_ready;
    CRYPTO_THREAD_unlock(ctx->fallback_lock);
    if (!ready)
        GPURSA_RAISE_MSG(ctx, GPURSA_R_FALLBACK_PROVIDER,
                         "fallback_provider \"%s\": no provider of that name with RSA key "
                         "management and RSA decryption is loaded", ctx->config.fallback_provider);
    return ready;
internal:
    GPURSA_RAISE(ctx, GPURSA_R_INTERNAL);
    return 0;
}

/* One of the core's string parameters (OSSL_PROV_PARAM_CORE_*), or NULL. */
static const char *gpursa_core_param(const GPURSA_PROV_CTX *ctx, const char *key)
{
    const char *value = NULL;
    OSSL_PARAM params[2];

    params[0] = OSSL_PARAM_construct_utf8_ptr(key, (char **)&value, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (ctx->core_get_params == NULL || !ctx->core_get_params(ctx->handle, params))
        return NULL;
    return value;
}

/* The running libcrypto, as the core reports it (OpenSSL_version when a
 * core does not): 3.0.8 or later, or gpursa refuses to load. */
static int gpursa_core_version_ok(GPURSA_PROV_CTX *ctx)
{
    const char *version = gpursa_core_param(ctx, OSSL_PROV_PARAM_CORE_VERSION);

    if (version == NULL)
        version = OpenSSL_version(OPENSSL_VERSION_STRING);
    if (gpursa_openssl_version_ok(version))
        return 1;
    GPURSA_RAISE_MSG(ctx, GPURSA_R_OLD_OPENSSL, "libcrypto %s: gpursa needs OpenSSL 3.0.8 or "
                     "later (its CPU fallback decrypts with it); upgrade OpenSSL",
                     version != NULL ? version : "(unknown)");
    return 0;
}

/* fallback_provider must name another provider than this one. */
static int gpursa_fallback_name_ok(GPURSA_PROV_CTX *ctx)
{
    const char *name = gpursa_core_param(ctx, OSSL_PROV_PARAM_CORE_PROV_NAME);

    if (name == NULL || strcmp(name, ctx->config.fallback_provider) != 0)
        return 1;
    GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG, "fallback_provider \"%s\": that is this "
                     "provider itself; name one that computes RSA on the CPU (e.g. default)",
                     name);
    return 0;
}

static const OSSL_DISPATCH gpursa_dispatch[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))gpursa_teardown },
    { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))gpursa_gettable_params },
    { OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))gpursa_get_params },
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))gpursa_query_operation },
    { OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))gpursa_get_reason_strings },
    { 0, NULL }
};

__attribute__((visibility("default")))
int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
    GPURSA_PROV_CTX *ctx;
    const OSSL_DISPATCH *f;

    ctx = OPENSSL_zalloc(sizeof(*ctx));
    if (ctx == NULL)
        return 0;
    ctx->handle = handle;
    for (f = in; f->function_id != 0; f++) {
        switch (f->function_id) {
        case OSSL_FUNC_CORE_GET_PARAMS:
            ctx->core_get_params = OSSL_FUNC_core_get_params(f);
            break;
        case OSSL_FUNC_CORE_NEW_ERROR:
            ctx->core_new_error = OSSL_FUNC_core_new_error(f);
            break;
        case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
            ctx->core_set_error_debug = OSSL_FUNC_core_set_error_debug(f);
            break;
        case OSSL_FUNC_CORE_VSET_ERROR:
            ctx->core_vset_error = OSSL_FUNC_core_vset_error(f);
            break;
        default:
            break;
        }
    }
    if (!gpursa_core_version_ok(ctx))
        goto err;
    if (!gpursa_config_load(ctx, &ctx->config) || !gpursa_fallback_name_ok(ctx))
        goto err;
    snprintf(ctx->fallback_propq, sizeof(ctx->fallback_propq), "provider=%s",
             ctx->config.fallback_provider);
    ctx->fallback_lock = CRYPTO_THREAD_lock_new();
    if (ctx->fallback_lock == NULL) {
        GPURSA_RAISE(ctx, GPURSA_R_MALLOC);
        goto err;
    }
    /* The child libctx sees the application's providers, gpursa included
     * (sharing this context), hence fallback_propq on every fetch. */
    ctx->libctx = OSSL_LIB_CTX_new_child(handle, in);
    if (ctx->libctx == NULL) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_INTERNAL, "cannot create the fallback library context");
        goto err;
    }
    /* stats = 2: also where GPU requests spend their time (printed at unload
     * with the counters; a few clock reads per batch and request). The
     * metrics file has them as latency histograms. */
    if ((ctx->config.stats >= 2 || ctx->config.metrics_file[0] != '\0')
        && (ctx->stats.stages = OPENSSL_zalloc(sizeof(*ctx->stats.stages))) == NULL) {
        GPURSA_RAISE(ctx, GPURSA_R_MALLOC);
        goto err;
    }
    /* Opens nothing yet: devices and threads start at the first operation. */
    if (!gpursa_queue_new(&ctx->config, &ctx->stats, gpursa_prov_backend(&ctx->config),
                          &ctx->queue)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG, "cannot set up the batching queue");
        goto err;
    }
    if (ctx->config.metrics_file[0] != '\0'
        && !gpursa_metrics_start(&ctx->config, &ctx->stats, ctx->queue, &ctx->metrics)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG, "metrics_file \"%s\": cannot write it: %s",
                         ctx->config.metrics_file, strerror(errno));
        goto err;
    }
    gpursa_log(ctx, 2, "loaded, backend=%s max_batch=%u max_wait_us=%u",
               gpursa_config_backend_name(ctx->config.backend),
               ctx->config.max_batch, ctx->config.max_wait_us);
    *out = gpursa_dispatch;
    *provctx = ctx;
    return 1;
err:
    gpursa_ctx_free(ctx);
    return 0;
}
