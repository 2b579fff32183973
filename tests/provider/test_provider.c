/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gpursa provider itself: the operations it answers for (RSA key
 * management, signatures, asymmetric cipher), its parameters (name, version,
 * build info, status, backend, stats counters), the stats line at unload,
 * configuration from openssl.cnf and GPURSA_* environment variables (bad
 * values fail the load with an error naming key and value; the environment
 * wins), and the CPU fallback with and without the default provider loaded
 * by the application.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "config.h"
#include "testutil.h"

static const char *const stat_names[] = {
    "gpursa-ops-gpu", "gpursa-ops-host", "gpursa-ops-cpu", "gpursa-batches",
    "gpursa-batch-items", "gpursa-faults", "gpursa-fallback-small-batch",
    "gpursa-fallback-unsupported-key", "gpursa-fallback-gpu-error",
    "gpursa-fallback-no-device", "gpursa-fallback-inline",
};
#define N_STATS (sizeof(stat_names) / sizeof(stat_names[0]))

static const char *const config_env[] = {
    "GPURSA_BACKEND", "GPURSA_DEVICES", "GPURSA_MAX_BATCH", "GPURSA_MIN_GPU_BATCH",
    "GPURSA_MAX_WAIT_US", "GPURSA_MAX_INFLIGHT", "GPURSA_LOG_LEVEL", "GPURSA_VARIANT",
    "GPURSA_STATS", "GPURSA_CPU_FALLBACK", "GPURSA_DEVICE_BATCHES", "GPURSA_METRICS_FILE",
    "GPURSA_METRICS_INTERVAL_MS", "GPURSA_FALLBACK_PROVIDER", "GPURSA_HOST_THREADS",
    "GPURSA_CUDA_FP64", "GPURSA_CUDA_DEBUG",
};

static void clear_config_env(void)
{
    size_t i;

    for (i = 0; i < sizeof(config_env) / sizeof(config_env[0]); i++)
        unsetenv(config_env[i]);
}

static const char *backend_of(OSSL_PROVIDER *prov)
{
    static char buf[32];
    char *s = NULL;
    OSSL_PARAM params[2];

    params[0] = OSSL_PARAM_construct_utf8_ptr("gpursa-backend", &s, 0);
    params[1] = OSSL_PARAM_construct_end();
    ck_assert_int_eq(OSSL_PROVIDER_get_params(prov, params), 1);
    ck_assert_ptr_nonnull(s);
    snprintf(buf, sizeof(buf), "%s", s);
    return buf;
}

static uint64_t stat_of(OSSL_PROVIDER *prov, const char *name)
{
    uint64_t v = UINT64_MAX;
    OSSL_PARAM params[2];

    params[0] = OSSL_PARAM_construct_uint64(name, &v);
    params[1] = OSSL_PARAM_construct_end();
    ck_assert_int_eq(OSSL_PROVIDER_get_params(prov, params), 1);
    ck_assert_msg(OSSL_PARAM_modified(params), "%s not returned", name);
    return v;
}

START_TEST(test_params_name_version_buildinfo_status)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(ctx, "gpursa");
    char *name = NULL, *version = NULL, *info = NULL;
    int status = 0;
    OSSL_PARAM params[5];

    ck_assert_ptr_nonnull(prov);
    params[0] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0);
    params[1] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0);
    params[2] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &info, 0);
    params[3] = OSSL_PARAM_construct_int(OSSL_PROV_PARAM_STATUS, &status);
    params[4] = OSSL_PARAM_construct_end();
    ck_assert_int_eq(OSSL_PROVIDER_get_params(prov, params), 1);
    ck_assert_ptr_nonnull(strstr(name, "gpursa"));
    ck_assert_str_eq(version, PACKAGE_VERSION);
    ck_assert_str_eq(info, GPURSA_BUILD_INFO);
    ck_assert_int_eq(status, 1);
    ck_assert_str_eq(OSSL_PROVIDER_get0_name(prov), "gpursa");
    ck_assert_str_eq(backend_of(prov), "auto");
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

START_TEST(test_stats_params_start_at_zero_and_are_gettable)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(ctx, "gpursa");
    const OSSL_PARAM *gettable = OSSL_PROVIDER_gettable_params(prov);
    size_t i;

    for (i = 0; i < N_STATS; i++) {
        ck_assert_msg(OSSL_PARAM_locate_const(gettable, stat_names[i]) != NULL,
                      "%s not gettable", stat_names[i]);
        ck_assert_uint_eq(stat_of(prov, stat_names[i]), 0);
    }
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

/* gpursa answers for RSA key management, signatures and the asymmetric
 * cipher under every name the default provider gives RSA keys. */
START_TEST(test_offers_rsa_keymgmt_signature_asym_cipher)
{
    static const char *const names[] = { "RSA", "rsaEncryption", "1.2.840.113549.1.1.1" };
    OSSL_LIB_CTX *ctx = tu_libctx();
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        EVP_KEYMGMT *km = EVP_KEYMGMT_fetch(ctx, names[i], "provider=gpursa");
        EVP_SIGNATURE *sig = EVP_SIGNATURE_fetch(ctx, names[i], "provider=gpursa");
        EVP_ASYM_CIPHER *ac = EVP_ASYM_CIPHER_fetch(ctx, names[i], "provider=gpursa");

        ck_assert_msg(km != NULL, "no %s key management in gpursa", names[i]);
        ck_assert_msg(sig != NULL, "no %s signature in gpursa", names[i]);
        ck_assert_msg(ac != NULL, "no %s asymmetric cipher in gpursa", names[i]);
        ck_assert_str_eq(OSSL_PROVIDER_get0_name(EVP_KEYMGMT_get0_provider(km)), "gpursa");
        ck_assert_str_eq(OSSL_PROVIDER_get0_name(EVP_SIGNATURE_get0_provider(sig)), "gpursa");
        ck_assert_str_eq(OSSL_PROVIDER_get0_name(EVP_ASYM_CIPHER_get0_provider(ac)), "gpursa");
        EVP_KEYMGMT_free(km);
        EVP_SIGNATURE_free(sig);
        EVP_ASYM_CIPHER_free(ac);
    }
    tu_libctx_free(ctx);
}
END_TEST

/* N raw private operations through gpursa; returns N (asserting success). */
static int run_private_ops(OSSL_LIB_CTX *ctx, int n)
{
    EVP_PKEY *def = tu_default_rsa(ctx, 1024);
    EVP_PKEY *g = tu_to_gpursa(ctx, def);
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_pkey(ctx, g, "provider=gpursa");
    unsigned char in[128], out[128];
    size_t outlen;
    int i;

    ck_assert_int_eq(EVP_PKEY_decrypt_init(pctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_NO_PADDING), 1);
    for (i = 0; i < n; i++) {
        ck_assert_int_eq(RAND_bytes(in, sizeof(in)), 1);
        in[0] &= 0x7f;
        outlen = sizeof(out);
        ck_assert_int_eq(EVP_PKEY_decrypt(pctx, out, &outlen, in, sizeof(in)), 1);
    }
    EVP_PKEY_CTX_free(pctx);
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
    return n;
}

START_TEST(test_stats_count_private_ops)
{
    OSSL_LIB_CTX *ctx = tu_libctx();
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(ctx, "gpursa");
    uint64_t done;
    int n = run_private_ops(ctx, 5);

    done = stat_of(prov, "gpursa-ops-gpu") + stat_of(prov, "gpursa-ops-host")
        + stat_of(prov, "gpursa-ops-cpu");
    ck_assert_uint_eq(done, (uint64_t)n);
    OSSL_PROVIDER_unload(prov);
    tu_libctx_free(ctx);
}
END_TEST

/* GPURSA_STATS=1: one summary line on stderr when the provider unloads. */
START_TEST(test_stats_line_at_unload)
{
    char path[] = "/tmp/gpursa-stats-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    char line[1024] = "";
    OSSL_LIB_CTX *ctx;
    FILE *f;
    unsigned long long gpu, host, cpu;
    int n;

    ck_assert_int_ge(fd, 0);
    setenv("GPURSA_STATS", "1", 1);
    ctx = tu_libctx();          /* tu_libctx_free unloads, so gpursa tears down */
    n = run_private_ops(ctx, 3);
    fflush(stderr);
    dup2(fd, 2);
    tu_libctx_free(ctx);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    close(fd);
    unlink(path);
    ck_assert_msg(strncmp(line, "gpursa: ops gpu=", 16) == 0, "got: %s", line);
    ck_assert_ptr_nonnull(strstr(line, " mean_batch="));
    ck_assert_ptr_nonnull(strstr(line, " fallbacks small_batch="));
    ck_assert_ptr_nonnull(strstr(line, " inline="));
    ck_assert_int_eq(sscanf(line, "gpursa: ops gpu=%llu host=%llu cpu=%llu", &gpu, &host, &cpu),
                     3);
    ck_assert_uint_eq(gpu + host + cpu, (unsigned long long)n);
}
END_TEST

/* ... written by one write(2): where several processes share the file (nginx's
 * workers, one stderr), a line written in pieces gets another's in between.
 * stderr is a datagram socket here, one datagram a write: each line must
 * arrive whole in one. GPURSA_STATS=2 adds a line per stage of the batch's
 * life (START, PREP, ...), each its own write as well. */
START_TEST(test_stats_line_one_write)
{
    int sv[2], saved = dup(2), whole = 0, stages = 0;
    char d[2048];
    ssize_t k;
    OSSL_LIB_CTX *ctx;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    setenv("GPURSA_STATS", "2", 1);
    setenv("GPURSA_BACKEND", "host", 1);       /* through a batch: its stages are timed */
    setenv("GPURSA_MIN_GPU_BATCH", "1", 1);
    ctx = tu_libctx();
    (void)run_private_ops(ctx, 2);
    fflush(stderr);
    dup2(sv[0], 2);
    tu_libctx_free(ctx);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    while ((k = recv(sv[1], d, sizeof(d) - 1, MSG_DONTWAIT)) > 0) {
        d[k] = '\0';
        if (strncmp(d, "gpursa: ops gpu=", 16) == 0) {
            ck_assert_msg(strstr(d, " inline=") != NULL && d[k - 1] == '\n', "the line in pieces: %s", d);
            whole = 1;
        } else if (strncmp(d, "gpursa: stage ", 14) == 0) {
            ck_assert_msg(strchr(d, '\n') == d + k - 1 && strstr(d, " n=") != NULL
                              && strstr(d, " max=") != NULL && strcmp(d + k - 4, " us\n") == 0,
                          "a stage line not whole in one write: %s", d);
            stages++;
        }
    }
    close(sv[0]);
    close(sv[1]);
    ck_assert_msg(whole, "no stats line");
    ck_assert_msg(stages >= 2, "%d stage lines", stages);
}
END_TEST

static const struct {
    const char *env, *value;
} bad_config[] = {
    { "GPURSA_BACKEND", "gpu" },
    { "GPURSA_BACKEND", "" },
    { "GPURSA_VARIANT", "turbo" },
    { "GPURSA_DEVICES", "0,,1" },
    { "GPURSA_DEVICES", "first" },
    { "GPURSA_MAX_BATCH", "0" },
    { "GPURSA_MAX_BATCH", "1048577" },
    { "GPURSA_MAX_BATCH", "12abc" },
    { "GPURSA_MAX_BATCH", "99999999999999999999999" },
    { "GPURSA_MIN_GPU_BATCH", "-2" },
    { "GPURSA_MAX_WAIT_US", "10000001" },
    { "GPURSA_MAX_WAIT_US", "-1" },
    { "GPURSA_MAX_INFLIGHT", "0" },
    { "GPURSA_MAX_INFLIGHT", "16777217" },
    { "GPURSA_LOG_LEVEL", "4" },
    { "GPURSA_LOG_LEVEL", "debug" },
    { "GPURSA_CPU_FALLBACK", "sometimes" },
    { "GPURSA_CPU_FALLBACK", "" },
    { "GPURSA_DEVICE_BATCHES", "0" },
    { "GPURSA_DEVICE_BATCHES", "17" },
    { "GPURSA_DEVICE_BATCHES", "two" },
    { "GPURSA_METRICS_FILE", "gpursa.prom" },                 /* relative */
    { "GPURSA_METRICS_FILE", "/nonexistent-gpursa/m.prom" },  /* no such folder */
    { "GPURSA_METRICS_FILE", "/dev/null/m.prom" },            /* not a folder */
    { "GPURSA_METRICS_FILE", "/tmp/" },                       /* no file name */
    { "GPURSA_METRICS_FILE", "/tmp/m-%d.prom" },              /* only %p and %% */
    { "GPURSA_FALLBACK_PROVIDER", "" },
    { "GPURSA_FALLBACK_PROVIDER", "default,fips" },           /* not one name */
    { "GPURSA_FALLBACK_PROVIDER", "provider=default" },
    { "GPURSA_FALLBACK_PROVIDER", "gpursa" },                 /* itself */
    { "GPURSA_FALLBACK_PROVIDER",
      "a-provider-name-longer-than-the-sixty-three-bytes-gpursa-takes-x" },
    { "GPURSA_METRICS_FILE", "/tmp/m-%" },
    { "GPURSA_METRICS_INTERVAL_MS", "9" },
    { "GPURSA_METRICS_INTERVAL_MS", "3600001" },
    { "GPURSA_METRICS_INTERVAL_MS", "10s" },
    { "GPURSA_METRICS_INTERVAL_MS", "" },
    { "GPURSA_VARIANT", "" },
    { "GPURSA_HOST_THREADS", "0" },
    { "GPURSA_HOST_THREADS", "17" },
    { "GPURSA_HOST_THREADS", "all" },
    { "GPURSA_CUDA_FP64", "2" },
    { "GPURSA_CUDA_FP64", "01" },
    { "GPURSA_CUDA_FP64", "" },
    { "GPURSA_CUDA_FP64", "true" },
    { "GPURSA_CUDA_DEBUG", "2" },
    { "GPURSA_CUDA_DEBUG", "yes" },
    { "GPURSA_CUDA_DEBUG", "" },
    { "GPURSA_STATS", "3" },
    { "GPURSA_STATS", "-1" },
    { "GPURSA_STATS", "yes" },
    { "GPURSA_STATS", "" },
};

/* 1 if some queued error's data mentions both a and b; empties the queue. */
static int error_data_mentions(const char *a, const char *b)
{
    const char *data;
    int flags, found = 0;

    while (ERR_get_error_all(NULL, NULL, NULL, &data, &flags) != 0)
        if ((flags & ERR_TXT_STRING) != 0 && strstr(data, a) != NULL && strstr(data, b) != NULL)
            found = 1;
    return found;
}

START_TEST(test_bad_config_value_fails_load)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    char key[64], quoted[64];
    size_t i;

    setenv(bad_config[_i].env, bad_config[_i].value, 1);
    ERR_clear_error();
    ck_assert_ptr_null(OSSL_PROVIDER_load(ctx, "gpursa"));
    /* the error names the key (lower case, as in openssl.cnf) and the value */
    for (i = 0; bad_config[_i].env[7 + i] != '\0'; i++)
        key[i] = (char)tolower((unsigned char)bad_config[_i].env[7 + i]);
    key[i] = '\0';
    snprintf(quoted, sizeof(quoted), "\"%s\"", bad_config[_i].value);
    ck_assert_msg(error_data_mentions(key, quoted), "no error naming %s=%s", key, quoted);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

START_TEST(test_good_config_values_load)
{
    static const struct { const char *env, *value; } good[] = {
        { "GPURSA_BACKEND", "cpu" }, { "GPURSA_DEVICES", "0,1,7" },
        { "GPURSA_MAX_BATCH", "1048576" }, { "GPURSA_MIN_GPU_BATCH", "-1" },
        { "GPURSA_MAX_WAIT_US", "0" }, { "GPURSA_MAX_INFLIGHT", "1" },
        { "GPURSA_LOG_LEVEL", "0" }, { "GPURSA_VARIANT", "xmad" },
        { "GPURSA_DEVICE_BATCHES", "16" }, { "GPURSA_METRICS_INTERVAL_MS", "10" },
        { "GPURSA_METRICS_FILE", "" }, { "GPURSA_HOST_THREADS", "16" },
        { "GPURSA_CUDA_FP64", "0" }, { "GPURSA_CUDA_DEBUG", "1" }, { "GPURSA_STATS", "0" },
    };
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov;
    size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        setenv(good[i].env, good[i].value, 1);
    prov = OSSL_PROVIDER_load(ctx, "gpursa");
    ck_assert_ptr_nonnull(prov);
    ck_assert_str_eq(backend_of(prov), "cpu");
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

/* What fn(arg) writes on stderr (malloc'd, NUL-terminated). */
static char *stderr_of(void (*fn)(void *), void *arg)
{
    char path[] = "/tmp/gpursa-stderr-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    char *text;
    long len;
    FILE *f;

    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    unlink(path);
    return text;
}

/* One private operation through gpursa in a fresh library context, then
 * gpursa unloaded. */
static void one_private_op(void *arg)
{
    OSSL_LIB_CTX *ctx = tu_libctx();

    (void)arg;
    run_private_ops(ctx, 1);
    tu_libctx_free(ctx);
}

/* host_threads (GPURSA_HOST_THREADS) is the host backend's thread count: its
 * device description, logged at log_level 2 when it opens, says so. */
START_TEST(test_host_threads_reach_the_host_backend)
{
    static const char *const threads[] = { "1", "7" };
    char want[64], *log;
    size_t i;

    setenv("GPURSA_BACKEND", "host", 1);
    setenv("GPURSA_LOG_LEVEL", "2", 1);
    setenv("GPURSA_MIN_GPU_BATCH", "1", 1);
    setenv("GPURSA_CPU_FALLBACK", "never", 1);   /* the lone request goes to the device */
    for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
        setenv("GPURSA_HOST_THREADS", threads[i], 1);
        log = stderr_of(one_private_op, NULL);
        snprintf(want, sizeof(want), "host CPU, %s thread%s,", threads[i],
                 strcmp(threads[i], "1") == 0 ? "" : "s");
        ck_assert_msg(strstr(log, want) != NULL, "no \"%s\" in: %s", want, log);
        free(log);
    }
}
END_TEST

/* metrics_file: %p is the process id, %% a %; a %p file goes at unload. */
START_TEST(test_metrics_file_name_expands)
{
    char dir[] = "/tmp/gpursa-metrics-name-XXXXXX", pattern[96], file[96];
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(pattern, sizeof(pattern), "%s/100%%%%-%%p.prom", dir);
    snprintf(file, sizeof(file), "%s/100%%-%ld.prom", dir, (long)getpid());
    setenv("GPURSA_BACKEND", "cpu", 1);
    setenv("GPURSA_METRICS_FILE", pattern, 1);
    prov = OSSL_PROVIDER_load(ctx, "gpursa");
    ck_assert_ptr_nonnull(prov);
    ck_assert_msg(access(file, R_OK) == 0, "%s: not there", file);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
    ck_assert_int_ne(access(file, F_OK), 0);
    ck_assert_int_eq(rmdir(dir), 0);            /* nothing else left in it */
}
END_TEST

/* Load an openssl.cnf whose provider list is |provs| (lines of the
 * [provs] section) followed by |sections| into ctx; 1 when it loaded. */
static int load_cnf(OSSL_LIB_CTX *ctx, const char *provs, const char *sections)
{
    char path[] = "/tmp/gpursa-cnf-XXXXXX";
    int fd = mkstemp(path), ok;
    FILE *f = fdopen(fd, "w");

    ck_assert_ptr_nonnull(f);
    fprintf(f, "openssl_conf = init\n[init]\nproviders = provs\n[provs]\n%s\n%s\n", provs,
            sections);
    fclose(f);
    ERR_clear_error();
    ok = OSSL_LIB_CTX_load_config(ctx, path) == 1;
    unlink(path);
    return ok;
}

/* Load gpursa through an openssl.cnf whose gpursa section holds |section|. */
static OSSL_PROVIDER *load_with_cnf(OSSL_LIB_CTX *ctx, const char *section)
{
    char sections[1024];

    snprintf(sections, sizeof(sections), "[gpursa_sect]\nactivate = 1\n%s\n", section);
    /* A provider that fails to activate from the config is not available;
     * loading it again by hand would bypass its config section. */
    if (load_cnf(ctx, "gpursa = gpursa_sect", sections) && OSSL_PROVIDER_available(ctx, "gpursa"))
        return OSSL_PROVIDER_load(ctx, "gpursa");
    return NULL;
}

START_TEST(test_cnf_values_are_read)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov = load_with_cnf(ctx, "backend = host\nmax_batch = 512\n");

    ck_assert_ptr_nonnull(prov);
    ck_assert_str_eq(backend_of(prov), "host");
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);

    ctx = OSSL_LIB_CTX_new();
    /* (the config module keeps its own error, so only the failure is checked here;
     * the error text is checked through the environment above) */
    ck_assert_ptr_null(load_with_cnf(ctx, "max_wait_us = 99999999\n"));
    OSSL_LIB_CTX_free(ctx);
    ctx = OSSL_LIB_CTX_new();
    ck_assert_ptr_null(load_with_cnf(ctx, "metrics_file = /nonexistent-gpursa/m.prom\n"));
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

/* metrics_file from openssl.cnf: the file is there once gpursa is loaded. */
START_TEST(test_cnf_metrics_file_is_written)
{
    char dir[] = "/tmp/gpursa-cnf-metrics-XXXXXX", section[256], file[128];
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/gpursa.prom", dir);
    snprintf(section, sizeof(section), "backend = cpu\nmetrics_file = %s\n"
             "metrics_interval_ms = 60000\n", file);
    prov = load_with_cnf(ctx, section);
    ck_assert_ptr_nonnull(prov);
    ck_assert_int_eq(access(file, R_OK), 0);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
    unlink(file);
    ck_assert_int_eq(rmdir(dir), 0);            /* nothing else left in it */
}
END_TEST

/* gpursa loaded through an openssl.cnf section (arg), then unloaded. */
static void load_unload_with_cnf(void *arg)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov = load_with_cnf(ctx, arg);

    ck_assert_ptr_nonnull(prov);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}

/* stats = 1 in openssl.cnf: the summary line at unload; without it, none. */
START_TEST(test_cnf_stats_prints_the_line_at_unload)
{
    char *log = stderr_of(load_unload_with_cnf, "backend = cpu\nstats = 1\n");

    ck_assert_msg(strstr(log, "gpursa: ops gpu=") != NULL, "no stats line in: %s", log);
    free(log);
    log = stderr_of(load_unload_with_cnf, "backend = cpu\n");
    ck_assert_msg(strstr(log, "gpursa: ops") == NULL, "a stats line without stats: %s", log);
    free(log);
}
END_TEST

/* stats = 2 (GPURSA_STATS=2): the stage times of GPU requests follow the
 * summary line. */
START_TEST(test_stats_2_adds_the_stage_times)
{
    char *log;

    setenv("GPURSA_STATS", "2", 1);
    setenv("GPURSA_BACKEND", "host", 1);
    setenv("GPURSA_MIN_GPU_BATCH", "1", 1);
    setenv("GPURSA_CPU_FALLBACK", "never", 1);   /* the lone request goes to the device */
    log = stderr_of(one_private_op, NULL);
    ck_assert_msg(strstr(log, "gpursa: ops gpu=") != NULL, "no stats line in: %s", log);
    ck_assert_msg(strstr(log, "gpursa: stage total  n=1 ") != NULL, "no stage times in: %s", log);
    free(log);
}
END_TEST

START_TEST(test_env_overrides_cnf)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov;

    /* a bad cnf value replaced by a good environment value loads */
    setenv("GPURSA_BACKEND", "cpu", 1);
    setenv("GPURSA_MAX_BATCH", "64", 1);
    prov = load_with_cnf(ctx, "backend = host\nmax_batch = lots\n");
    ck_assert_ptr_nonnull(prov);
    ck_assert_str_eq(backend_of(prov), "cpu");
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

/* Key generation and the private operation with gpursa loaded before
 * "default", or without "default" at all: the fallback finds or loads it. */
static void keygen_and_check(OSSL_LIB_CTX *ctx)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_name(ctx, "RSA", "provider=gpursa");
    EVP_PKEY *pkey = NULL;

    ck_assert_ptr_nonnull(pctx);
    ck_assert_int_eq(EVP_PKEY_keygen_init(pctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_keygen_bits(pctx, 1024), 1);
    ck_assert_int_eq(EVP_PKEY_generate(pctx, &pkey), 1);
    ck_assert_str_eq(tu_provider_of(pkey), "gpursa");
    EVP_PKEY_CTX_free(pctx);
    pctx = EVP_PKEY_CTX_new_from_pkey(ctx, pkey, "provider=gpursa");
    ck_assert_int_eq(EVP_PKEY_check(pctx), 1);
    EVP_PKEY_CTX_free(pctx);
    EVP_PKEY_free(pkey);
}

START_TEST(test_fallback_without_default_provider)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(ctx, "gpursa");

    ck_assert_ptr_nonnull(prov);
    ck_assert_int_eq(OSSL_PROVIDER_available(ctx, "default"), 0);
    keygen_and_check(ctx);
    /* the application's libctx still has no default provider */
    ck_assert_int_eq(OSSL_PROVIDER_available(ctx, "default"), 0);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

START_TEST(test_fallback_with_default_loaded_after)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(ctx, "gpursa");
    OSSL_PROVIDER *def = OSSL_PROVIDER_load(ctx, "default");

    ck_assert_ptr_nonnull(prov);
    ck_assert_ptr_nonnull(def);
    keygen_and_check(ctx);
    run_private_ops(ctx, 2);
    OSSL_PROVIDER_unload(def);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

/*
 * "otherrsa": another RSA provider for the fallback tests, built in by the
 * test (OSSL_PROVIDER_add_builtin): the default provider's RSA key
 * management, asymmetric cipher and signature under "provider=otherrsa",
 * counting every context and key it makes. It stands for whatever else an
 * application loads (a hardware token's provider, a second gpursa).
 */
static OSSL_PROVIDER *other_base;               /* the default provider it wraps */
static int other_calls;
static OSSL_FUNC_keymgmt_new_fn *other_km_new;
static OSSL_FUNC_asym_cipher_newctx_fn *other_ac_newctx;
static OSSL_FUNC_signature_newctx_fn *other_sig_newctx;
static OSSL_DISPATCH other_fns[3][64];
static OSSL_ALGORITHM other_algs[3][2];
static const int other_ops[3] = { OSSL_OP_KEYMGMT, OSSL_OP_ASYM_CIPHER, OSSL_OP_SIGNATURE };

static void *other_km_new_counted(void *provctx)
{
    __atomic_add_fetch(&other_calls, 1, __ATOMIC_RELAXED);
    return other_km_new(provctx);
}

static void *other_ac_newctx_counted(void *provctx)
{
    __atomic_add_fetch(&other_calls, 1, __ATOMIC_RELAXED);
    return other_ac_newctx(provctx);
}

static void *other_sig_newctx_counted(void *provctx, const char *propq)
{
    __atomic_add_fetch(&other_calls, 1, __ATOMIC_RELAXED);
    return other_sig_newctx(provctx, propq);
}

static const OSSL_ALGORITHM *other_query(void *provctx, int op, int *no_cache)
{
    *no_cache = 0;
    for (int i = 0; i < 3; i++)
        if (other_ops[i] == op)
            return other_algs[i];
    return NULL;
}

static const OSSL_DISPATCH other_dispatch[] = {
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))other_query },
    { 0, NULL }
};

static int other_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                      const OSSL_DISPATCH **out, void **provctx)
{
    for (int i = 0; i < 3; i++) {
        const OSSL_ALGORITHM *a;
        const OSSL_DISPATCH *f;
        int nc, n = 0;

        for (a = OSSL_PROVIDER_query_operation(other_base, other_ops[i], &nc);
             a != NULL && a->algorithm_names != NULL; a++)
            if (strncmp(a->algorithm_names, "RSA:", 4) == 0)
                break;
        if (a == NULL || a->algorithm_names == NULL)
            return 0;
        for (f = a->implementation; f->function_id != 0 && n < 63; f++, n++) {
            other_fns[i][n] = *f;
            if (i == 0 && f->function_id == OSSL_FUNC_KEYMGMT_NEW) {
                other_km_new = OSSL_FUNC_keymgmt_new(f);
                other_fns[i][n].function = (void (*)(void))other_km_new_counted;
            } else if (i == 1 && f->function_id == OSSL_FUNC_ASYM_CIPHER_NEWCTX) {
                other_ac_newctx = OSSL_FUNC_asym_cipher_newctx(f);
                other_fns[i][n].function = (void (*)(void))other_ac_newctx_counted;
            } else if (i == 2 && f->function_id == OSSL_FUNC_SIGNATURE_NEWCTX) {
                other_sig_newctx = OSSL_FUNC_signature_newctx(f);
                other_fns[i][n].function = (void (*)(void))other_sig_newctx_counted;
            }
        }
        other_fns[i][n] = (OSSL_DISPATCH){ 0, NULL };
        other_algs[i][0] = (OSSL_ALGORITHM){ a->algorithm_names, "provider=otherrsa",
                                             other_fns[i], "RSA, counted" };
        other_algs[i][1] = (OSSL_ALGORITHM){ NULL, NULL, NULL, NULL };
    }
    *out = other_dispatch;
    *provctx = OSSL_PROVIDER_get0_provider_ctx(other_base);
    return 1;
}

/*
 * gpursa (backend cpu: every private operation is the fallback's) with two
 * other RSA providers loaded, otherrsa first: its fallback fetches with
 * "provider=<fallback_provider>", so by default it lands on default and
 * never on otherrsa, whose counter stays zero; with fallback_provider =
 * otherrsa (loaded after gpursa) all of it lands there. Key generation,
 * the key's check, raw decryptions, a signature and its verification.
 */
static void two_rsa_providers(const char *fallback, int *gpursa_ops, int *other_ops_seen)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *def, *other, *g;
    EVP_PKEY *d, *k;
    EVP_PKEY_CTX *pctx;
    unsigned char md[32] = { 1 }, sig[256];
    size_t siglen = sizeof(sig);

    setenv("GPURSA_BACKEND", "cpu", 1);
    if (fallback != NULL)
        setenv("GPURSA_FALLBACK_PROVIDER", fallback, 1);
    __atomic_store_n(&other_calls, 0, __ATOMIC_RELAXED);
    ck_assert_ptr_nonnull(other_base = OSSL_PROVIDER_load(NULL, "default"));
    ck_assert_int_eq(OSSL_PROVIDER_add_builtin(ctx, "otherrsa", other_init), 1);
    if (fallback != NULL) {
        g = OSSL_PROVIDER_load(ctx, "gpursa");
        other = OSSL_PROVIDER_load(ctx, "otherrsa");
    } else {
        other = OSSL_PROVIDER_load(ctx, "otherrsa");
        g = OSSL_PROVIDER_load(ctx, "gpursa");
    }
    def = OSSL_PROVIDER_load(ctx, "default");
    ck_assert(other != NULL && g != NULL && def != NULL);
    keygen_and_check(ctx);
    *gpursa_ops = run_private_ops(ctx, 4);
    ck_assert_uint_eq(stat_of(g, "gpursa-ops-cpu"), (uint64_t)*gpursa_ops);
    d = tu_default_rsa(ctx, 1024);
    k = tu_to_gpursa(ctx, d);
    pctx = EVP_PKEY_CTX_new_from_pkey(ctx, k, "provider=gpursa");
    ck_assert_int_eq(EVP_PKEY_sign_init(pctx), 1);
    ck_assert_int_eq(EVP_PKEY_sign(pctx, sig, &siglen, md, sizeof(md)), 1);
    ck_assert_int_eq(EVP_PKEY_verify_init(pctx), 1);
    ck_assert_int_eq(EVP_PKEY_verify(pctx, sig, siglen, md, sizeof(md)), 1);
    EVP_PKEY_CTX_free(pctx);
    EVP_PKEY_free(k);
    EVP_PKEY_free(d);
    *other_ops_seen = __atomic_load_n(&other_calls, __ATOMIC_RELAXED);
    OSSL_PROVIDER_unload(def);
    OSSL_PROVIDER_unload(g);
    OSSL_PROVIDER_unload(other);
    OSSL_LIB_CTX_free(ctx);
    OSSL_PROVIDER_unload(other_base);
}

START_TEST(test_fallback_goes_to_default_not_another_rsa_provider)
{
    int n, other;

    two_rsa_providers(NULL, &n, &other);
    ck_assert_msg(other == 0, "otherrsa made %d keys or contexts for gpursa's fallback", other);
}
END_TEST

START_TEST(test_fallback_provider_named_and_loaded_later)
{
    int n, other;

    two_rsa_providers("otherrsa", &n, &other);
    ck_assert_int_ge(other, n);
}
END_TEST

/* fallback_provider names a provider that is not loaded: gpursa loads (the
 * provider may come later), and each fallback operation fails with an error
 * naming the key and the value. */
START_TEST(test_fallback_provider_not_loaded_fails_with_clear_error)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *def = OSSL_PROVIDER_load(ctx, "default"), *prov;
    EVP_PKEY_CTX *pctx;
    EVP_PKEY *pkey = NULL, *d, *g;
    unsigned char in[128] = { 0x11 }, out[128];
    size_t outlen = sizeof(out);

    setenv("GPURSA_BACKEND", "cpu", 1);
    setenv("GPURSA_FALLBACK_PROVIDER", "nothere", 1);
    prov = OSSL_PROVIDER_load(ctx, "gpursa");
    ck_assert_ptr_nonnull(prov);
    pctx = EVP_PKEY_CTX_new_from_name(ctx, "RSA", "provider=gpursa");
    ck_assert_ptr_nonnull(pctx);
    ERR_clear_error();
    ck_assert(EVP_PKEY_keygen_init(pctx) <= 0 || EVP_PKEY_generate(pctx, &pkey) <= 0);
    ck_assert_ptr_null(pkey);
    ck_assert(error_data_mentions("fallback_provider", "\"nothere\""));
    EVP_PKEY_CTX_free(pctx);
    /* a key imported into gpursa needs no fallback; its private operation does */
    d = tu_default_rsa(ctx, 1024);
    g = tu_to_gpursa(ctx, d);
    pctx = EVP_PKEY_CTX_new_from_pkey(ctx, g, "provider=gpursa");
    ck_assert_int_eq(EVP_PKEY_decrypt_init(pctx), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_NO_PADDING), 1);
    ERR_clear_error();
    ck_assert_int_le(EVP_PKEY_decrypt(pctx, out, &outlen, in, sizeof(in)), 0);
    ck_assert(error_data_mentions("fallback_provider", "\"nothere\""));
    EVP_PKEY_CTX_free(pctx);
    EVP_PKEY_free(g);
    EVP_PKEY_free(d);
    OSSL_PROVIDER_unload(prov);
    OSSL_PROVIDER_unload(def);
    OSSL_LIB_CTX_free(ctx);
}
END_TEST

static Suite *make_provider_suite(void)
{
    Suite *s = suite_create("provider");
    TCase *tc = tcase_create("provider");

    tcase_set_timeout(tc, 60);
    /* also without fork (CK_FORK=no) no test's variables reach the next */
    tcase_add_checked_fixture(tc, clear_config_env, clear_config_env);
    tcase_add_test(tc, test_offers_rsa_keymgmt_signature_asym_cipher);
    tcase_add_test(tc, test_params_name_version_buildinfo_status);
    tcase_add_test(tc, test_stats_params_start_at_zero_and_are_gettable);
    tcase_add_test(tc, test_stats_line_at_unload);
    tcase_add_test(tc, test_stats_line_one_write);
    tcase_add_loop_test(tc, test_bad_config_value_fails_load, 0,
                        (int)(sizeof(bad_config) / sizeof(bad_config[0])));
    tcase_add_test(tc, test_good_config_values_load);
    tcase_add_test(tc, test_metrics_file_name_expands);
    tcase_add_test(tc, test_cnf_values_are_read);
    tcase_add_test(tc, test_env_overrides_cnf);
    tcase_add_test(tc, test_cnf_stats_prints_the_line_at_unload);
    tcase_add_test(tc, test_cnf_metrics_file_is_written);
    tcase_add_test(tc, test_fallback_without_default_provider);
    tcase_add_test(tc, test_fallback_with_default_loaded_after);
    tcase_add_test(tc, test_fallback_goes_to_default_not_another_rsa_provider);
    tcase_add_test(tc, test_fallback_provider_named_and_loaded_later);
    tcase_add_test(tc, test_fallback_provider_not_loaded_fails_with_clear_error);
    tcase_add_test(tc, test_stats_count_private_ops);
    tcase_add_test(tc, test_host_threads_reach_the_host_backend);
    tcase_add_test(tc, test_stats_2_adds_the_stage_times);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    clear_config_env();
    sr = srunner_create(make_provider_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
