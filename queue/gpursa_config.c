/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The configuration keys (README.md, "Configuration"): one table of every key,
 * its default and its parser. The provider reads the keys from openssl.cnf
 * and GPURSA_<NAME> (provider/gpursa_config.c); the defaults are the same
 * table's, parsed by the same functions.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "queue/gpursa_queue.h"

static const char *const backend_names[] = { "auto", "cuda", "host", "cpu" };
static const char *const cpu_fallback_names[] = { "auto", "always", "never" };
static const char *const cuda_fp64_names[] = { "auto", "0", "1" };   /* gpursa_fp64 */

const char *gpursa_config_backend_name(gpursa_cfg_backend b)
{
    if ((unsigned)b < sizeof(backend_names) / sizeof(backend_names[0]))
        return backend_names[b];
    return "?";
}

/* "a, b or c" into why. */
static void config_expect_names(const char *const *names, int count, char *why, size_t len)
{
    size_t n = 0;
    int i;

    why[0] = '\0';
    for (i = 0; i < count && n < len; i++)
        n += (size_t)snprintf(why + n, len - n, "%s%s",
                              i == 0 ? "" : i == count - 1 ? " or " : ", ", names[i]);
}

/* Index of value in names[], or -1 with "a, b or c" in why. */
static int config_enum(const char *value, const char *const *names, int count, char *why,
                       size_t len)
{
    int i;

    for (i = 0; i < count; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    config_expect_names(names, count, why, len);
    return -1;
}

/* set_<name>: cfg->field = the index of value in names[], as type. */
#define CONFIG_SET_ENUM(name, field, type, names)                                         \
    static int set_##name(gpursa_config *cfg, const char *value, char *why, size_t len)    \
    {                                                                                      \
        int i = config_enum(value, (names), (int)(sizeof(names) / sizeof((names)[0])),     \
                            why, len);                                                     \
                                                                                           \
        if (i < 0)                                                                         \
            return 0;                                                                      \
        cfg->field = (type)i;                                                              \
        return 1;                                                                          \
    }

CONFIG_SET_ENUM(backend, backend, gpursa_cfg_backend, backend_names)
CONFIG_SET_ENUM(cpu_fallback, cpu_fallback, gpursa_cpu_fallback, cpu_fallback_names)
CONFIG_SET_ENUM(cuda_fp64, gpu.cuda_fp64, gpursa_fp64, cuda_fp64_names)

/* A whole decimal integer in [lo, hi], no sign games, no trailing junk; or,
 * when autov, "auto" for 0. 0 with "an integer in lo..hi" (after "auto or "
 * when autov) in why. */
static int config_long(const char *value, long lo, long hi, int autov, long *out, char *why,
                       size_t len)
{
    char *end;
    long v;

    if (autov && strcmp(value, "auto") == 0) {
        *out = 0;
        return 1;
    }
    if (*value != '\0' && !isspace((unsigned char)*value)) {
        errno = 0;
        v = strtol(value, &end, 10);
        if (errno == 0 && *end == '\0' && v >= lo && v <= hi) {
            *out = v;
            return 1;
        }
    }
    snprintf(why, len, "%san integer in %ld..%ld", autov ? "auto or " : "", lo, hi);
    return 0;
}

/* set_<name>: cfg->field = an integer of config_long(lo, hi, autov), as type. */
#define CONFIG_SET_INT(name, field, type, lo, hi, autov)                                  \
    static int set_##name(gpursa_config *cfg, const char *value, char *why, size_t len)    \
    {                                                                                      \
        long v;                                                                            \
                                                                                           \
        if (!config_long(value, (lo), (hi), (autov), &v, why, len))                        \
            return 0;                                                                      \
        cfg->field = (type)v;                                                              \
        return 1;                                                                          \
    }

CONFIG_SET_INT(max_batch, max_batch, unsigned, 1, 1048576, 0)
CONFIG_SET_INT(min_gpu_batch, min_gpu_batch, int, -1, 1048576, 0)
CONFIG_SET_INT(max_wait_us, max_wait_us, unsigned, 0, 10000000, 0)
CONFIG_SET_INT(max_inflight, max_inflight, unsigned, 1, 16777216, 0)
CONFIG_SET_INT(device_batches, device_batches, unsigned, 1, GPURSA_MAX_DEVICE_BATCHES, 1)
CONFIG_SET_INT(log_level, log_level, int, 0, 3, 0)
CONFIG_SET_INT(metrics_interval_ms, metrics_interval_ms, unsigned,
               GPURSA_METRICS_INTERVAL_MIN_MS, GPURSA_METRICS_INTERVAL_MAX_MS, 0)
CONFIG_SET_INT(host_threads, gpu.host_threads, int, 1, GPURSA_HOST_MAX_THREADS, 1)
CONFIG_SET_INT(cuda_debug, gpu.cuda_debug, int, 0, 1, 0)
CONFIG_SET_INT(stats, stats, int, 0, 2, 0)

/* "all" or a comma-separated list of device indices. */
static int set_devices(gpursa_config *cfg, const char *value, char *why, size_t len)
{
    const char *p = value;

    snprintf(why, len, "all or comma-separated device indices");
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
    if (strlen(value) >= sizeof(cfg->devices))
        return 0;
    strcpy(cfg->devices, value);
    return 1;
}

static int set_metrics_file(gpursa_config *cfg, const char *value, char *why, size_t len)
{
    char path[GPURSA_METRICS_PATH_MAX];

    /* "" turns it off (GPURSA_METRICS_FILE= over openssl.cnf). Checked here
     * (the folder takes files) so a typo fails the load, not every write for
     * the life of the server. */
    if (value[0] != '\0'
        && (strlen(value) >= sizeof(cfg->metrics_file)
            || !gpursa_metrics_path(value, 0, path, sizeof(path)))) {
        snprintf(why, len, "an absolute file path of at most %zu bytes (%%p: the process id, "
                 "%%%%: a %%)", sizeof(cfg->metrics_file) - 1);
        return 0;
    }
    if (value[0] != '\0' && !gpursa_metrics_probe(value)) {
        snprintf(why, len, "a file in a folder this process can write (%s)", strerror(errno));
        return 0;
    }
    strcpy(cfg->metrics_file, value);
    return 1;
}

static int set_fallback_provider(gpursa_config *cfg, const char *value, char *why, size_t len)
{
    /* a provider name as a property value takes: letters, digits, - _ . */
    if (value[0] == '\0' || strlen(value) >= sizeof(cfg->fallback_provider)
        || strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789-_.") != strlen(value)) {
        snprintf(why, len, "a provider name of at most %zu letters, digits, '-', '_' or '.' "
                 "(e.g. default, fips)", sizeof(cfg->fallback_provider) - 1);
        return 0;
    }
    strcpy(cfg->fallback_provider, value);
    return 1;
}

static int set_variant(gpursa_config *cfg, const char *value, char *why, size_t len)
{
    const char *names[GPURSA_VARIANT_COUNT_];
    int i;

    /* the gpu layer owns the variant names */
    if (gpursa_variant_from_name(value, &cfg->gpu.variant))
        return 1;
    for (i = 0; i < GPURSA_VARIANT_COUNT_; i++)
        names[i] = gpursa_variant_name((gpursa_variant)i);
    config_expect_names(names, GPURSA_VARIANT_COUNT_, why, len);
    return 0;
}

/*
 * Every key, in README.md's order (its Configuration table lists the same
 * names and defaults: tests/queue/readme_config.sh). The default is written
 * as in openssl.cnf and parsed like any value.
 */
const gpursa_config_key gpursa_config_keys[] = {
    { "backend", "auto", "auto | cuda | host | cpu: where private operations run",
      set_backend },
    { "devices", "all", "all, or comma-separated CUDA device indices", set_devices },
    { "max_batch", "8192", "most operations in one batch", set_max_batch },
    { "min_gpu_batch", "-1", "smallest batch run on the GPU; -1 measures it at start-up",
      set_min_gpu_batch },
    /* kernels of a few ms: waiting longer is latency (doc/design.md) */
    { "max_wait_us", "500", "longest a request waits for its batch to fill (µs)",
      set_max_wait_us },
    { "max_inflight", "65536", "operations queued or running before callers wait",
      set_max_inflight },
    { "cpu_fallback", "auto", "auto | always | never: where batches below min_gpu_batch go",
      set_cpu_fallback },
    /* auto: GPURSA_MAX_DEVICE_BATCHES, or GPURSA_SHARED_DEVICE_BATCHES under MPS */
    { "device_batches", "auto", "batches in flight on each GPU: auto or 1..16",
      set_device_batches },
    { "log_level", "1", "0 error, 1 warning, 2 info, 3 debug (stderr)", set_log_level },
    { "stats", "0", "1: a summary line on stderr at unload; 2: also where GPU requests "
      "spent their time", set_stats },
    { "metrics_file", "", "live metrics in Prometheus' text format to this file; empty: off",
      set_metrics_file },
    { "metrics_interval_ms", "10000", "milliseconds between two writes of metrics_file",
      set_metrics_interval_ms },
    { "fallback_provider", "default", "the provider the CPU fallback fetches RSA from",
      set_fallback_provider },
    { "variant", "auto", "GPU kernel variant: auto | imad | xmad | fast | coop", set_variant },
    { "host_threads", "auto", "host backend: worker threads, auto (one per CPU) or 1..16",
      set_host_threads },
    { "cuda_fp64", "auto", "auto | 0 | 1: count the GPU as without or with full-rate FP64",
      set_cuda_fp64 },
    { "cuda_debug", "0", "1: print every CUDA error on stderr", set_cuda_debug },
    { NULL, NULL, NULL, NULL },
};

const gpursa_config_key *gpursa_config_key_find(const char *name)
{
    const gpursa_config_key *k;

    for (k = gpursa_config_keys; k->name != NULL; k++)
        if (strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

int gpursa_config_defaults(gpursa_config *cfg)
{
    const gpursa_config_key *k;
    char why[256];

    memset(cfg, 0, sizeof(*cfg));
    for (k = gpursa_config_keys; k->name != NULL; k++)
        if (!k->set(cfg, k->dflt, why, sizeof(why)))
            return 0;
    return 1;
}
