/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: the provider's openssl.cnf section, read through the core's
 * get_params, then GPURSA_<NAME> environment variables on top (so a quick
 * experiment needs no config edit). A bad value fails the provider load with
 * an error that names the key, the value and where it came from.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "provider/gpursa_prov.h"

static const char *const backend_names[] = { "auto", "cuda", "host", "cpu" };

const char *gpursa_config_backend_name(gpursa_cfg_backend b)
{
    if ((unsigned)b < sizeof(backend_names) / sizeof(backend_names[0]))
        return backend_names[b];
    return "?";
}

/* Index of value in names[], or -1. */
static int config_enum(const char *value, const char *const *names, int count)
{
    int i;

    for (i = 0; i < count; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return -1;
}

/* A whole decimal integer in [lo, hi]; no sign games, no trailing junk. */
static int config_long(const char *value, long lo, long hi, long *out)
{
    char *end;
    long v;

    if (*value == '\0' || isspace((unsigned char)*value))
        return 0;
    errno = 0;
    v = strtol(value, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* "all" or a comma-separated list of device indices. */
static int config_devices(const char *value, char *out, size_t outlen)
{
    const char *p = value;

    if (strcmp(value, "all") == 0)
        goto ok;
    if (*p == '\0')
        return 0;
    while (*p != '\0') {
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
        if (*p == ',') {
            p++;
            if (*p == '\0')
                return 0;
        } else if (*p != '\0') {
            return 0;
        }
    }
ok:
    if (strlen(value) >= outlen)
        return 0;
    strcpy(out, value);
    return 1;
}

static int config_bad(GPURSA_PROV_CTX *ctx, const char *key, const char *value,
                      const char *origin, const char *expect)
{
    GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG,
                     "invalid value \"%s\" for %s (from %s): expected %s",
                     value, key, origin, expect);
    gpursa_log(NULL, 0, "invalid value \"%s\" for %s (from %s): expected %s",
               value, key, origin, expect);
    return 0;
}

int gpursa_config_set(GPURSA_PROV_CTX *ctx, gpursa_config *cfg,
                      const char *key, const char *value, const char *origin)
{
    long v;
    int i;

    if (strcmp(key, "backend") == 0) {
        if ((i = config_enum(value, backend_names, 4)) < 0)
            return config_bad(ctx, key, value, origin, "auto, cuda, host or cpu");
        cfg->backend = (gpursa_cfg_backend)i;
    } else if (strcmp(key, "variant") == 0) {
        /* the gpu layer owns the variant names */
        if (!gpursa_variant_from_name(value, &cfg->variant))
            return config_bad(ctx, key, value, origin, "auto, imad, xmad or fast");
    } else if (strcmp(key, "devices") == 0) {
        if (!config_devices(value, cfg->devices, sizeof(cfg->devices)))
            return config_bad(ctx, key, value, origin,
                              "all or comma-separated device indices");
    } else if (strcmp(key, "max_batch") == 0) {
        if (!config_long(value, 1, 1048576, &v))
            return config_bad(ctx, key, value, origin, "an integer in 1..1048576");
        cfg->max_batch = (unsigned)v;
    } else if (strcmp(key, "min_gpu_batch") == 0) {
        if (!config_long(value, -1, 1048576, &v))
            return config_bad(ctx, key, value, origin,
                              "an integer in -1..1048576 (-1: measure)");
        cfg->min_gpu_batch = (int)v;
    } else if (strcmp(key, "max_wait_us") == 0) {
        if (!config_long(value, 0, 10000000, &v))
            return config_bad(ctx, key, value, origin, "an integer in 0..10000000");
        cfg->max_wait_us = (unsigned)v;
    } else if (strcmp(key, "max_inflight") == 0) {
        if (!config_long(value, 1, 16777216, &v))
            return config_bad(ctx, key, value, origin, "an integer in 1..16777216");
        cfg->max_inflight = (unsigned)v;
    } else if (strcmp(key, "cpu_fallback") == 0) {
        static const char *const fb_names[] = { "auto", "always", "never" };

        if ((i = config_enum(value, fb_names, 3)) < 0)
            return config_bad(ctx, key, value, origin, "auto, always or never");
        cfg->cpu_fallback = (gpursa_cpu_fallback)i;
    } else if (strcmp(key, "device_batches") == 0) {
        if (strcmp(value, "auto") == 0)
            v = 0;
        else if (!config_long(value, 1, GPURSA_MAX_DEVICE_BATCHES, &v))
            return config_bad(ctx, key, value, origin, "auto or an integer in 1..16");
        cfg->device_batches = (unsigned)v;
    } else if (strcmp(key, "metrics_file") == 0) {
        char path[GPURSA_METRICS_PATH_MAX], why[160];

        /* "" turns it off (GPURSA_METRICS_FILE= over openssl.cnf). Checked
         * here (the folder takes files) so a typo fails the load, not every
         * write for the life of the server. */
        if (value[0] != '\0'
            && (strlen(value) >= sizeof(cfg->metrics_file)
                || !gpursa_metrics_path(value, 0, path, sizeof(path))))
            return config_bad(ctx, key, value, origin, "an absolute file path of at most "
                              "1023 bytes (%p: the process id, %%: a %)");
        if (value[0] != '\0' && !gpursa_metrics_probe(value)) {
            snprintf(why, sizeof(why), "a file in a folder this process can write (%s)",
                     strerror(errno));
            return config_bad(ctx, key, value, origin, why);
        }
        strcpy(cfg->metrics_file, value);
    } else if (strcmp(key, "metrics_interval_ms") == 0) {
        if (!config_long(value, GPURSA_METRICS_INTERVAL_MIN_MS, GPURSA_METRICS_INTERVAL_MAX_MS,
                         &v))
            return config_bad(ctx, key, value, origin, "an integer in 10..3600000");
        cfg->metrics_interval_ms = (unsigned)v;
    } else if (strcmp(key, "fallback_provider") == 0) {
        /* a provider name as a property value takes: letters, digits, - _ . */
        if (value[0] == '\0' || strlen(value) >= sizeof(cfg->fallback_provider)
            || strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789-_.") != strlen(value))
            return config_bad(ctx, key, value, origin, "a provider name of at most 63 "
                              "letters, digits, '-', '_' or '.' (e.g. default, fips)");
        strcpy(cfg->fallback_provider, value);
    } else if (strcmp(key, "log_level") == 0) {
        if (!config_long(value, 0, 3, &v))
            return config_bad(ctx, key, value, origin,
                              "an integer in 0..3 (0 error .. 3 debug)");
        cfg->log_level = (int)v;
    } else {
        return config_bad(ctx, key, value, origin, "a known gpursa key");
    }
    return 1;
}

static const char *const config_keys[] = {
    "backend", "devices", "max_batch", "min_gpu_batch", "max_wait_us",
    "max_inflight", "log_level", "variant", "cpu_fallback", "device_batches",
    "metrics_file", "metrics_interval_ms", "fallback_provider"
};
#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

int gpursa_config_load(GPURSA_PROV_CTX *ctx, gpursa_config *cfg)
{
    const char *cnf[CONFIG_NKEYS] = { NULL };
    OSSL_PARAM params[CONFIG_NKEYS + 1];
    char envname[64];
    size_t i, j;

    gpursa_config_defaults(cfg);
    for (i = 0; i < CONFIG_NKEYS; i++)
        params[i] = OSSL_PARAM_construct_utf8_ptr(config_keys[i], (char **)&cnf[i], 0);
    params[i] = OSSL_PARAM_construct_end();
    /* Keys absent from the section are simply left unset by the core. */
    if (ctx->core_get_params != NULL && !ctx->core_get_params(ctx->handle, params)) {
        GPURSA_RAISE_MSG(ctx, GPURSA_R_BAD_CONFIG, "cannot read the provider's config section");
        return 0;
    }
    for (i = 0; i < CONFIG_NKEYS; i++) {
        const char *value = cnf[i];
        const char *origin = "openssl.cnf";

        /* GPURSA_MAX_BATCH and friends win over openssl.cnf */
        strcpy(envname, "GPURSA_");
        for (j = 0; config_keys[i][j] != '\0'; j++)
            envname[7 + j] = (char)toupper((unsigned char)config_keys[i][j]);
        envname[7 + j] = '\0';
        if (gpursa_getenv(envname) != NULL) {
            value = gpursa_getenv(envname);
            origin = envname;
        }
        if (value != NULL && !gpursa_config_set(ctx, cfg, config_keys[i], value, origin))
            return 0;
    }
    return 1;
}
