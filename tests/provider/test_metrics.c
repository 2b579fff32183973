/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Live metrics (metrics_file, metrics_interval_ms) through the built module:
 * the file exists once gpursa is loaded and is valid Prometheus text
 * exposition format (checked by the strict parser below: names, HELP and
 * TYPE lines, label syntax, one family per name, histogram buckets rising
 * to +Inf = _count); its counters equal gpursa's provider parameters and
 * its GPURSA_STATS=1 line after a known number of operations; it is
 * replaced whole (a reader looping over it while it is rewritten every
 * 10 ms never sees a part); a folder that disappears is logged once and the
 * file comes back with it; a child after fork() writes its own %p file and
 * removes it when it unloads gpursa. Bad values fail the load: the table in
 * test_provider.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <check.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "config.h"
#include "testutil.h"

/* ---- a strict parser of the text exposition format (version 0.0.4) ---- */

#define PM_MAX_SAMPLES 2048
#define PM_MAX_FAMILIES 64

typedef struct {
    char name[96];
    char labels[160];            /* canonical: a="x",b="y" (le kept), "" when none */
    double value;
} pm_sample;

typedef struct {
    char name[96];
    char type[16];
    int help, nsamples;
} pm_family;

typedef struct {
    pm_sample s[PM_MAX_SAMPLES];
    int n;
    pm_family f[PM_MAX_FAMILIES];
    int nf;
    char err[256];
} pm_doc;

static int pm_fail(pm_doc *d, int line, const char *what)
{
    snprintf(d->err, sizeof(d->err), "line %d: %s", line, what);
    return 0;
}

static int pm_name_char(int c, int first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* A metric name at *p (into out); advances *p. */
static int pm_name(const char **p, char *out, size_t outlen)
{
    size_t n = 0;

    if (!pm_name_char((unsigned char)**p, 1))
        return 0;
    while (pm_name_char((unsigned char)**p, 0)) {
        if (n + 1 >= outlen)
            return 0;
        out[n++] = *(*p)++;
    }
    out[n] = '\0';
    return 1;
}

/* {a="x",b="y"}: label names without ':', values with \\ \" \n escapes only,
 * no repeated name, no trailing comma. */
static int pm_labels(const char **p, char *out, size_t outlen)
{
    char seen[8][64];
    int nseen = 0;
    size_t n = 0;

    out[0] = '\0';
    if (**p != '{')
        return 1;
    (*p)++;
    for (;;) {
        char lname[64];
        size_t k = 0;

        if (!isalpha((unsigned char)**p) && **p != '_')
            return 0;
        while (isalnum((unsigned char)**p) || **p == '_') {
            if (k + 1 >= sizeof(lname))
                return 0;
            lname[k++] = *(*p)++;
        }
        lname[k] = '\0';
        if (strncmp(lname, "__", 2) == 0 || nseen == 8)
            return 0;
        for (int i = 0; i < nseen; i++)
            if (strcmp(seen[i], lname) == 0)
                return 0;
        strcpy(seen[nseen++], lname);
        if (*(*p)++ != '=' || *(*p)++ != '"')
            return 0;
        n += (size_t)snprintf(out + n, outlen - n, "%s%s=\"", n ? "," : "", lname);
        while (**p != '"') {
            if (**p == '\0' || **p == '\n')
                return 0;
            if (**p == '\\') {
                (*p)++;
                if (**p != '\\' && **p != '"' && **p != 'n')
                    return 0;
            }
            if (n + 2 >= outlen)
                return 0;
            out[n++] = *(*p)++;
        }
        (*p)++;
        if (n + 2 >= outlen)
            return 0;
        out[n++] = '"';
        out[n] = '\0';
        if (**p == '}') {
            (*p)++;
            return 1;
        }
        if (*(*p)++ != ',' || **p == '}')
            return 0;
    }
}

static int pm_value(const char *s, double *v)
{
    char *end;

    if (strcmp(s, "+Inf") == 0 || strcmp(s, "-Inf") == 0 || strcmp(s, "NaN") == 0) {
        *v = strcmp(s, "NaN") == 0 ? NAN : s[0] == '+' ? INFINITY : -INFINITY;
        return 1;
    }
    if (*s == '\0' || isspace((unsigned char)*s))
        return 0;
    errno = 0;
    *v = strtod(s, &end);
    return errno == 0 && *end == '\0' && isfinite(*v);
}

/* The family a sample name belongs to (the one open last). */
static int pm_sample_of_family(const pm_family *f, const char *name, const char *labels)
{
    size_t fl = strlen(f->name);

    if (strcmp(name, f->name) == 0)
        return strcmp(f->type, "histogram") != 0;
    if (strcmp(f->type, "histogram") != 0 || strncmp(name, f->name, fl) != 0)
        return 0;
    if (strcmp(name + fl, "_bucket") == 0)
        return strstr(labels, "le=\"") != NULL;
    return (strcmp(name + fl, "_sum") == 0 || strcmp(name + fl, "_count") == 0)
           && strstr(labels, "le=\"") == NULL;
}

/* labels without le="...": the series a bucket belongs to; *le its bound */
static void pm_without_le(const char *labels, char *out, size_t outlen, double *le)
{
    const char *p = strstr(labels, "le=\""), *end;
    char bound[64];
    size_t n;

    *le = NAN;
    if (p == NULL || (p != labels && p[-1] != ',')) {
        snprintf(out, outlen, "%s", labels);
        return;
    }
    end = strchr(p + 4, '"');
    snprintf(bound, sizeof(bound), "%.*s", (int)(end - p - 4), p + 4);
    if (!pm_value(bound, le))
        *le = NAN;
    n = (size_t)(p - labels);
    if (n > 0)
        n--;                     /* the comma before le */
    snprintf(out, outlen, "%.*s%s%s", (int)n, labels, n > 0 && end[1] == ',' ? "," : "",
             end[1] == ',' ? end + 2 : "");
}

static const pm_sample *pm_get(const pm_doc *d, const char *name, const char *labels)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->s[i].name, name) == 0 && strcmp(d->s[i].labels, labels) == 0)
            return &d->s[i];
    return NULL;
}

static double pm_val(const pm_doc *d, const char *name, const char *labels)
{
    const pm_sample *s = pm_get(d, name, labels);

    ck_assert_msg(s != NULL, "no sample %s{%s}", name, labels);
    return s->value;
}

/* Histograms: per series, le rising, counts not falling, +Inf last = _count, a _sum. */
static int pm_check_histograms(pm_doc *d)
{
    for (int i = 0; i < d->n; i++) {
        char series[160], other[160], name[128];
        const pm_sample *s = &d->s[i], *c;
        size_t bl = strlen(s->name);
        double le, prev_le = -INFINITY, prev = 0, le2;

        if (bl < 7 || strcmp(s->name + bl - 7, "_bucket") != 0)
            continue;
        pm_without_le(s->labels, series, sizeof(series), &le);
        if (i > 0 && strcmp(d->s[i - 1].name, s->name) == 0) {
            pm_without_le(d->s[i - 1].labels, other, sizeof(other), &le2);
            if (strcmp(other, series) == 0)
                continue;        /* not the first bucket of its series */
        }
        for (int j = i; j < d->n && strcmp(d->s[j].name, s->name) == 0; j++) {
            pm_without_le(d->s[j].labels, other, sizeof(other), &le);
            if (strcmp(other, series) != 0)
                break;
            if (isnan(le) || !(le > prev_le) || d->s[j].value < prev)
                return pm_fail(d, 0, "histogram buckets not rising");
            prev_le = le;
            prev = d->s[j].value;
        }
        if (!isinf(prev_le))
            return pm_fail(d, 0, "histogram without a +Inf bucket last");
        snprintf(name, sizeof(name), "%.*s_count", (int)(bl - 7), s->name);
        if ((c = pm_get(d, name, series)) == NULL || c->value != prev)
            return pm_fail(d, 0, "+Inf bucket differs from _count");
        snprintf(name, sizeof(name), "%.*s_sum", (int)(bl - 7), s->name);
        if (pm_get(d, name, series) == NULL)
            return pm_fail(d, 0, "histogram without _sum");
    }
    return 1;
}

/* Parses text; 1, or 0 with d->err. The file must end with "# EOF\n". */
static int pm_parse(pm_doc *d, const char *text)
{
    const char *p = text;
    pm_family *cur = NULL;
    int line = 0, eof = 0;

    memset(d, 0, sizeof(*d));
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        char buf[1024], name[96], labels[160], type[16];
        const char *q = buf;

        line++;
        if (nl == NULL)
            return pm_fail(d, line, "no newline at the end");
        if (eof)
            return pm_fail(d, line, "text after # EOF");
        if ((size_t)(nl - p) >= sizeof(buf))
            return pm_fail(d, line, "line too long");
        memcpy(buf, p, (size_t)(nl - p));
        buf[nl - p] = '\0';
        p = nl + 1;
        if (strcmp(buf, "# EOF") == 0) {
            eof = 1;
            continue;
        }
        if (strncmp(buf, "# HELP ", 7) == 0 || strncmp(buf, "# TYPE ", 7) == 0) {
            int help = buf[2] == 'H';

            q = buf + 7;
            if (!pm_name(&q, name, sizeof(name)) || *q++ != ' ' || *q == '\0')
                return pm_fail(d, line, "bad HELP or TYPE line");
            if (strncmp(name, "gpursa_", 7) != 0)
                return pm_fail(d, line, "name without the gpursa_ prefix");
            if (cur == NULL || strcmp(cur->name, name) != 0) {
                for (int i = 0; i < d->nf; i++)
                    if (strcmp(d->f[i].name, name) == 0)
                        return pm_fail(d, line, "a family given twice");
                if (d->nf == PM_MAX_FAMILIES || !help)
                    return pm_fail(d, line, "a family must start with its HELP line");
                cur = &d->f[d->nf++];
                snprintf(cur->name, sizeof(cur->name), "%s", name);
            }
            if (help) {
                if (cur->help++ || cur->type[0] != '\0' || cur->nsamples)
                    return pm_fail(d, line, "HELP repeated or late");
                continue;
            }
            if (cur->type[0] != '\0' || cur->nsamples || sscanf(q, "%15s", type) != 1
                || strlen(q) != strlen(type))
                return pm_fail(d, line, "TYPE repeated, late or malformed");
            if (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "histogram"))
                return pm_fail(d, line, "unexpected TYPE");
            if (strcmp(type, "counter") == 0
                && (strlen(name) < 6 || strcmp(name + strlen(name) - 6, "_total") != 0))
                return pm_fail(d, line, "a counter's name must end in _total");
            snprintf(cur->type, sizeof(cur->type), "%s", type);
            continue;
        }
        if (buf[0] == '#' || buf[0] == '\0')
            return pm_fail(d, line, "a comment or empty line");
        if (!pm_name(&q, name, sizeof(name)) || !pm_labels(&q, labels, sizeof(labels))
            || *q++ != ' ')
            return pm_fail(d, line, "bad sample name or labels");
        if (cur == NULL || cur->type[0] == '\0' || !pm_sample_of_family(cur, name, labels))
            return pm_fail(d, line, "a sample outside its family, or before its TYPE");
        if (pm_get(d, name, labels) != NULL)
            return pm_fail(d, line, "the same series twice");
        if (d->n == PM_MAX_SAMPLES)
            return pm_fail(d, line, "too many samples");
        snprintf(d->s[d->n].name, sizeof(d->s[d->n].name), "%s", name);
        snprintf(d->s[d->n].labels, sizeof(d->s[d->n].labels), "%s", labels);
        if (!pm_value(q, &d->s[d->n].value))
            return pm_fail(d, line, "bad value (no timestamps are written)");
        if (strcmp(cur->type, "gauge") != 0
            && (d->s[d->n].value < 0 || d->s[d->n].value != floor(d->s[d->n].value))
            && !strstr(name, "_sum"))
            return pm_fail(d, line, "a count that is not a whole number");
        d->n++;
        cur->nsamples++;
    }
    if (!eof)
        return pm_fail(d, line, "no # EOF at the end");
    for (int i = 0; i < d->nf; i++)
        if (d->f[i].type[0] == '\0')
            return pm_fail(d, 0, "a family without TYPE");
    return pm_check_histograms(d);
}

/* The parser rejects what it must. */
START_TEST(test_parser_rejects_malformed_text)
{
    static const char head[] = "# HELP gpursa_x_total X.\n# TYPE gpursa_x_total counter\n";
    static const char *const bad[] = {
        "gpursa_x_total 1\n",                                  /* no EOF */
        "gpursa_x_total{a=\"1\",} 1\n# EOF\n",                 /* trailing comma */
        "gpursa_x_total{a=1} 1\n# EOF\n",                      /* unquoted */
        "gpursa_x_total{a=\"1\",a=\"2\"} 1\n# EOF\n",          /* repeated label */
        "gpursa_x_total 1.5\n# EOF\n",                         /* not whole */
        "gpursa_x_total abc\n# EOF\n",
        "gpursa_y_total 1\n# EOF\n",                           /* outside its family */
        "gpursa_x_total 1\ngpursa_x_total 2\n# EOF\n",         /* twice */
        "gpursa_x_total 1\n# EOF\ngpursa_x_total 1\n",         /* after EOF */
        "gpursa_x_total 1\n# EOF",                             /* cut */
        "gpursa_x_total 1\n\n# EOF\n",
    };
    static const char *const hist_bad[] = {
        /* falling counts, +Inf != count, no +Inf, no sum, le not rising */
        "gpursa_h_bucket{le=\"1\"} 2\ngpursa_h_bucket{le=\"2\"} 1\n"
        "gpursa_h_bucket{le=\"+Inf\"} 2\ngpursa_h_sum 1\ngpursa_h_count 2\n",
        "gpursa_h_bucket{le=\"1\"} 1\ngpursa_h_bucket{le=\"+Inf\"} 2\n"
        "gpursa_h_sum 1\ngpursa_h_count 3\n",
        "gpursa_h_bucket{le=\"1\"} 1\ngpursa_h_sum 1\ngpursa_h_count 1\n",
        "gpursa_h_bucket{le=\"1\"} 1\ngpursa_h_bucket{le=\"+Inf\"} 1\ngpursa_h_count 1\n",
        "gpursa_h_bucket{le=\"2\"} 1\ngpursa_h_bucket{le=\"1\"} 1\n"
        "gpursa_h_bucket{le=\"+Inf\"} 1\ngpursa_h_sum 1\ngpursa_h_count 1\n",
    };
    static const char hist_head[] = "# HELP gpursa_h H.\n# TYPE gpursa_h histogram\n";
    static const char good_hist[] =
        "gpursa_h_bucket{s=\"a\",le=\"1\"} 1\ngpursa_h_bucket{s=\"a\",le=\"2\"} 3\n"
        "gpursa_h_bucket{s=\"a\",le=\"+Inf\"} 3\ngpursa_h_sum{s=\"a\"} 2.5\n"
        "gpursa_h_count{s=\"a\"} 3\n"
        "gpursa_h_bucket{s=\"b\",le=\"1\"} 0\ngpursa_h_bucket{s=\"b\",le=\"+Inf\"} 0\n"
        "gpursa_h_sum{s=\"b\"} 0\ngpursa_h_count{s=\"b\"} 0\n";
    char text[2048];
    pm_doc *d = malloc(sizeof(*d));

    ck_assert_ptr_nonnull(d);
    snprintf(text, sizeof(text), "%sgpursa_x_total{a=\"q\\\"\"} 1\n# EOF\n", head);
    ck_assert_msg(pm_parse(d, text), "%s", d->err);
    ck_assert_msg(!pm_parse(d, "# TYPE gpursa_x_total counter\ngpursa_x_total 1\n# EOF\n"),
                  "TYPE without HELP accepted");
    ck_assert_msg(!pm_parse(d, "# HELP gpursa_x X.\n# TYPE gpursa_x counter\ngpursa_x 1\n# EOF\n"),
                  "counter without _total accepted");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text), "%s%s", head, bad[i]);
        ck_assert_msg(!pm_parse(d, text), "accepted: %s", bad[i]);
    }
    snprintf(text, sizeof(text), "%s%s# EOF\n", hist_head, good_hist);
    ck_assert_msg(pm_parse(d, text), "%s", d->err);
    ck_assert(pm_val(d, "gpursa_h_count", "s=\"a\"") == 3);
    for (size_t i = 0; i < sizeof(hist_bad) / sizeof(hist_bad[0]); i++) {
        snprintf(text, sizeof(text), "%s%s# EOF\n", hist_head, hist_bad[i]);
        ck_assert_msg(!pm_parse(d, text), "accepted: %s", hist_bad[i]);
    }
    free(d);
}
END_TEST

/* ---- the module ---- */

static char dir[64];
static char file[128];

static void setup(void)
{
    strcpy(dir, "/tmp/gpursa-metrics-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/gpursa.prom", dir);
    setenv("GPURSA_BACKEND", "host", 1);
    setenv("GPURSA_MIN_GPU_BATCH", "1", 1);
    setenv("GPURSA_METRICS_FILE", file, 1);
    setenv("GPURSA_METRICS_INTERVAL_MS", "10", 1);
    unsetenv("GPURSA_STATS");
}

/* Empties and removes the folder (again while a writer adds a temporary
 * file meanwhile). 1 when it is gone. */
static int remove_dir(void)
{
    for (int tries = 0; tries < 100; tries++) {
        DIR *dh = opendir(dir);
        struct dirent *e;
        char path[sizeof(dir) + 260];

        if (dh == NULL)
            return errno == ENOENT;
        while ((e = readdir(dh)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(dh);
        if (rmdir(dir) == 0)
            return 1;
    }
    return 0;
}

static void teardown(void)
{
    remove_dir();
}

/* The whole file, or NULL when it does not exist. Caller frees. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t cap = 1 << 16, n = 0, r;
    char *buf;

    if (f == NULL)
        return NULL;
    buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap)
            ck_assert_ptr_nonnull(buf = realloc(buf, cap *= 2));
    }
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Parses the file now; fails the test unless it is there and valid. */
static void parse_file(pm_doc *d, const char *path)
{
    char *text = slurp(path);

    ck_assert_msg(text != NULL, "%s: %s", path, strerror(errno));
    ck_assert_msg(pm_parse(d, text), "%s: %s", path, d->err);
    free(text);
}

static uint64_t param(OSSL_PROVIDER *prov, const char *name)
{
    uint64_t v = UINT64_MAX;
    OSSL_PARAM p[2] = { OSSL_PARAM_uint64(name, &v), OSSL_PARAM_END };

    ck_assert_int_eq(OSSL_PROVIDER_get_params(prov, p), 1);
    return v;
}

/* Sum of a family's samples whose labels contain want (NULL: all). */
static double pm_sum(const pm_doc *d, const char *name, const char *want)
{
    double t = 0;

    for (int i = 0; i < d->n; i++)
        if (strcmp(d->s[i].name, name) == 0 && (want == NULL || strstr(d->s[i].labels, want)))
            t += d->s[i].value;
    return t;
}

typedef struct {
    OSSL_LIB_CTX *lc;
    EVP_PKEY *key;
    int n, bad;
} signer_arg;

static void *signer(void *varg)
{
    signer_arg *a = varg;
    unsigned char md[32], sig[256];

    for (int i = 0; i < a->n; i++) {
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(a->lc, a->key, "provider=gpursa");
        size_t siglen = sizeof(sig);

        RAND_bytes(md, sizeof(md));
        if (c == NULL || EVP_PKEY_sign_init(c) <= 0
            || EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) <= 0
            || EVP_PKEY_sign(c, sig, &siglen, md, sizeof(md)) <= 0)
            a->bad++;
        EVP_PKEY_CTX_free(c);
    }
    return NULL;
}

/* threads x n signatures with one 1024-bit key in gpursa; returns the total. */
static int sign_many(OSSL_LIB_CTX *lc, int threads, int n)
{
    EVP_PKEY *def = tu_default_rsa(lc, 1024), *g = tu_to_gpursa(lc, def);
    pthread_t th[8];
    signer_arg a[8];

    ck_assert_int_le(threads, 8);
    for (int i = 0; i < threads; i++) {
        a[i] = (signer_arg){ lc, g, n, 0 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, signer, &a[i]), 0);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(a[i].bad, 0);
    }
    EVP_PKEY_free(g);
    EVP_PKEY_free(def);
    return threads * n;
}

/* The file's counters equal the parameters (1), or not yet (0). */
static int counters_match(const pm_doc *d, OSSL_PROVIDER *prov, char *why, size_t whylen)
{
    static const struct { const char *param, *name, *labels; } one[] = {
        { "gpursa-faults", "gpursa_faults_detected_total", "" },
        { "gpursa-batches", "gpursa_batches_total", "" },
        { "gpursa-batches", "gpursa_batch_size_count", "" },
        { "gpursa-batch-items", "gpursa_batch_size_sum", "" },
        { "gpursa-fallback-small-batch", "gpursa_fallbacks_total", "reason=\"small_batch\"" },
        { "gpursa-fallback-unsupported-key", "gpursa_fallbacks_total",
          "reason=\"unsupported_key\"" },
        { "gpursa-fallback-gpu-error", "gpursa_fallbacks_total", "reason=\"gpu_error\"" },
        { "gpursa-fallback-no-device", "gpursa_fallbacks_total", "reason=\"no_device\"" },
        { "gpursa-fallback-inline", "gpursa_fallbacks_total", "reason=\"inline\"" },
    };
    struct { const char *param; double file; } sums[] = {
        { "gpursa-ops-gpu", pm_sum(d, "gpursa_operations_total", "path=\"gpu\"") },
        { "gpursa-ops-host", pm_sum(d, "gpursa_operations_total", "path=\"host\"") },
        { "gpursa-ops-cpu", pm_sum(d, "gpursa_operations_total", "path=\"cpu\"")
                            + pm_sum(d, "gpursa_operations_total", "path=\"inline\"") },
    };

    for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
        const pm_sample *s = pm_get(d, one[i].name, one[i].labels);
        uint64_t want = param(prov, one[i].param);

        ck_assert_msg(s != NULL, "no %s{%s}", one[i].name, one[i].labels);
        if (s->value != (double)want) {
            snprintf(why, whylen, "%s{%s} %.0f, %s %llu", one[i].name, one[i].labels,
                     s->value, one[i].param, (unsigned long long)want);
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
        uint64_t want = param(prov, sums[i].param);

        if (sums[i].file != (double)want) {
            snprintf(why, whylen, "operations %.0f, %s %llu", sums[i].file, sums[i].param,
                     (unsigned long long)want);
            return 0;
        }
    }
    return 1;
}

/* Waits (bounded: 30 s) for a write that shows every counter as the
 * parameters have it; the operations are over, so the next write does. */
static void wait_counters(pm_doc *d, OSSL_PROVIDER *prov)
{
    char why[256] = "";

    for (int i = 0; i < 3000; i++) {
        parse_file(d, file);
        if (counters_match(d, prov, why, sizeof(why)))
            return;
        usleep(10000);
    }
    ck_abort_msg("the file's counters never matched the parameters: %s", why);
}

START_TEST(test_file_at_load_is_valid)
{
    OSSL_LIB_CTX *lc = tu_libctx();
    pm_doc *d = malloc(sizeof(*d));
    struct stat st;

    ck_assert_ptr_nonnull(d);
    /* there at once: written before the load returned */
    ck_assert_int_eq(stat(file, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    parse_file(d, file);
    ck_assert(pm_val(d, "gpursa_info", "version=\"" PACKAGE_VERSION "\",backend=\"host\"") == 1);
    ck_assert(pm_val(d, "gpursa_operations_total", "path=\"host\",key_bits=\"2048\"") == 0);
    ck_assert(pm_val(d, "gpursa_operations_total", "path=\"inline\",key_bits=\"other\"") == 0);
    ck_assert(pm_val(d, "gpursa_requests_in_flight", "") == 0);
    ck_assert(pm_val(d, "gpursa_request_duration_seconds_count", "path=\"host\"") == 0);
    /* process start: within the last day, not in the future */
    ck_assert(pm_val(d, "gpursa_process_start_time_seconds", "") <= (double)time(NULL) + 1);
    ck_assert(pm_val(d, "gpursa_process_start_time_seconds", "") > (double)time(NULL) - 86400);
    tu_libctx_free(lc);
    free(d);
}
END_TEST

START_TEST(test_counters_equal_parameters)
{
    OSSL_LIB_CTX *lc = tu_libctx();
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(lc, "gpursa");
    pm_doc *d = malloc(sizeof(*d));
    int n;

    ck_assert_ptr_nonnull(d);
    n = sign_many(lc, 6, 25);
    wait_counters(d, prov);
    ck_assert_uint_eq(param(prov, "gpursa-ops-gpu") + param(prov, "gpursa-ops-host")
                      + param(prov, "gpursa-ops-cpu"), (uint64_t)n);
    /* every signature was at 1024 bits */
    ck_assert(pm_sum(d, "gpursa_operations_total", "key_bits=\"1024\"") == n);
    /* a request that went to the host backend is counted in its latency histogram */
    ck_assert(pm_val(d, "gpursa_request_duration_seconds_count", "path=\"host\"")
              == (double)param(prov, "gpursa-ops-host"));
    ck_assert(pm_val(d, "gpursa_device_up", "device=\"0\"") == 1);
    ck_assert(pm_val(d, "gpursa_device_reopens_total", "device=\"0\"") == 0);
    ck_assert(pm_val(d, "gpursa_requests_in_flight", "") == 0);
    ck_assert(pm_val(d, "gpursa_requests_waiting", "") == 0);
    OSSL_PROVIDER_unload(prov);
    tu_libctx_free(lc);
    free(d);
}
END_TEST

/* GPURSA_STATS=1: the last write at unload has the stats line's numbers
 * (backend cpu: every operation on the calling thread). */
START_TEST(test_last_write_equals_stats_line)
{
    char err[] = "/tmp/gpursa-metrics-err-XXXXXX", line[1024] = "";
    int fd = mkstemp(err), saved = dup(2), n;
    unsigned long long gpu, host, cpu, batches, faults, fb[5];
    double mean;
    OSSL_LIB_CTX *lc;
    pm_doc *d = malloc(sizeof(*d));
    FILE *f;

    ck_assert_ptr_nonnull(d);
    ck_assert_int_ge(fd, 0);
    setenv("GPURSA_STATS", "1", 1);
    setenv("GPURSA_BACKEND", "cpu", 1);
    setenv("GPURSA_METRICS_INTERVAL_MS", "3600000", 1);    /* only the load's and the last */
    lc = tu_libctx();
    n = sign_many(lc, 4, 10);
    fflush(stderr);
    dup2(fd, 2);
    tu_libctx_free(lc);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fdopen(fd, "r");
    rewind(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    unlink(err);
    ck_assert_int_eq(sscanf(line, "gpursa: ops gpu=%llu host=%llu cpu=%llu batches=%llu "
                            "mean_batch=%lf faults=%llu fallbacks small_batch=%llu "
                            "unsupported_key=%llu gpu_error=%llu no_device=%llu inline=%llu",
                            &gpu, &host, &cpu, &batches, &mean, &faults, &fb[0], &fb[1], &fb[2],
                            &fb[3], &fb[4]), 11);
    ck_assert_uint_eq(cpu, (unsigned long long)n);
    parse_file(d, file);
    ck_assert(pm_val(d, "gpursa_operations_total", "path=\"inline\",key_bits=\"1024\"") == n);
    ck_assert(pm_val(d, "gpursa_info", "version=\"" PACKAGE_VERSION "\",backend=\"cpu\"") == 1);
    ck_assert(pm_sum(d, "gpursa_operations_total", "path=\"gpu\"") == gpu);
    ck_assert(pm_sum(d, "gpursa_operations_total", "path=\"host\"") == host);
    ck_assert(pm_sum(d, "gpursa_operations_total", "path=\"cpu\"")
              + pm_sum(d, "gpursa_operations_total", "path=\"inline\"") == cpu);
    ck_assert(pm_val(d, "gpursa_batches_total", "") == batches);
    ck_assert(pm_val(d, "gpursa_faults_detected_total", "") == faults);
    ck_assert(pm_val(d, "gpursa_fallbacks_total", "reason=\"small_batch\"") == fb[0]);
    ck_assert(pm_val(d, "gpursa_fallbacks_total", "reason=\"unsupported_key\"") == fb[1]);
    ck_assert(pm_val(d, "gpursa_fallbacks_total", "reason=\"gpu_error\"") == fb[2]);
    ck_assert(pm_val(d, "gpursa_fallbacks_total", "reason=\"no_device\"") == fb[3]);
    ck_assert(pm_val(d, "gpursa_fallbacks_total", "reason=\"inline\"") == fb[4]);
    free(d);
}
END_TEST

typedef struct {
    int reads;
    atomic_int versions, failed, stop;
    char err[400];               /* read after the join */
} reader_arg;

/* Reads and parses the file until told to stop (after at least 200 new
 * versions of it); a part of a file fails the parse. */
static void *reader(void *varg)
{
    reader_arg *a = varg;
    pm_doc *d = malloc(sizeof(*d));
    ino_t last = 0;
    struct stat st;

    while (d != NULL && !atomic_load(&a->stop)) {
        char *text = slurp(file);

        if (text == NULL) {
            snprintf(a->err, sizeof(a->err), "the file was missing");
            atomic_store(&a->failed, 1);
            break;
        }
        a->reads++;
        if (!pm_parse(d, text)) {
            snprintf(a->err, sizeof(a->err), "read %d: %s (%zu bytes)", a->reads, d->err,
                     strlen(text));
            atomic_store(&a->failed, 1);
            free(text);
            break;
        }
        free(text);
        if (stat(file, &st) == 0 && st.st_ino != last) {
            last = st.st_ino;
            atomic_fetch_add(&a->versions, 1);
        }
    }
    free(d);
    return NULL;
}

START_TEST(test_reader_never_sees_a_part)
{
    OSSL_LIB_CTX *lc = tu_libctx();
    reader_arg a = { 0 };
    pthread_t th;
    DIR *dh;
    struct dirent *e;
    int left = 0;

    ck_assert_int_eq(pthread_create(&th, NULL, reader, &a), 0);
    /* signatures meanwhile, so every version differs */
    while (atomic_load(&a.versions) < 200 && !atomic_load(&a.failed))
        sign_many(lc, 2, 5);
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    ck_assert_msg(a.err[0] == '\0', "%s", a.err);
    tu_libctx_free(lc);
    /* no temporary file left behind */
    ck_assert_ptr_nonnull(dh = opendir(dir));
    while ((e = readdir(dh)) != NULL)
        left += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    closedir(dh);
    ck_assert_int_eq(left, 1);
}
END_TEST

/* Lines of path that contain what. */
static int count_lines(const char *path, const char *what)
{
    char *text = slurp(path), *p;
    int n = 0;

    for (p = text; p != NULL && (p = strstr(p, what)) != NULL; p++)
        n++;
    free(text);
    return n;
}

/* The folder goes away: one warning, the file back once the folder is. */
START_TEST(test_lost_folder_logged_once_and_retried)
{
    char err[] = "/tmp/gpursa-metrics-err-XXXXXX";
    int fd = mkstemp(err), saved = dup(2), i;
    OSSL_LIB_CTX *lc = tu_libctx();
    struct stat st;

    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    dup2(fd, 2);
    ck_assert_int_eq(remove_dir(), 1);
    for (i = 0; i < 3000 && count_lines(err, "cannot write") == 0; i++)
        usleep(10000);
    /* twenty more intervals: still one warning */
    usleep(200000);
    ck_assert_int_eq(count_lines(err, "cannot write"), 1);
    ck_assert_int_eq(count_lines(err, "No such file or directory"), 1);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    for (i = 0; i < 3000 && stat(file, &st) != 0; i++)
        usleep(10000);
    ck_assert_int_eq(stat(file, &st), 0);
    for (i = 0; i < 3000 && count_lines(err, "written again") == 0; i++)
        usleep(10000);
    ck_assert_int_eq(count_lines(err, "written again"), 1);
    tu_libctx_free(lc);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unlink(err);
}
END_TEST

/* %p: the child after fork() writes its own file, with its own counters on
 * top of what it inherited, and removes it when it unloads gpursa; the
 * parent's stays. */
START_TEST(test_fork_child_writes_its_own_file)
{
    char pattern[128], mine[128], childs[128];
    OSSL_LIB_CTX *lc;
    pid_t pid;
    int status;

    snprintf(pattern, sizeof(pattern), "%s/gpursa-%%p.prom", dir);
    snprintf(mine, sizeof(mine), "%s/gpursa-%ld.prom", dir, (long)getpid());
    setenv("GPURSA_METRICS_FILE", pattern, 1);
    lc = tu_libctx();
    ck_assert_int_eq(access(mine, R_OK), 0);
    sign_many(lc, 1, 2);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        pm_doc *d = malloc(sizeof(*d));
        char path[128];
        int i, n = sign_many(lc, 3, 4);

        snprintf(path, sizeof(path), "%s/gpursa-%ld.prom", dir, (long)getpid());
        /* written by the child's own thread, one interval after the fork */
        for (i = 0; i < 3000 && (access(path, R_OK) != 0
                                 || pm_sum((parse_file(d, path), d), "gpursa_operations_total",
                                           NULL) < 2 + n); i++)
            usleep(10000);
        if (i == 3000)
            _exit(3);
        tu_libctx_free(lc);
        _exit(access(path, F_OK) == 0 ? 4 : 0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    snprintf(childs, sizeof(childs), "%s/gpursa-%ld.prom", dir, (long)pid);
    ck_assert_int_ne(access(childs, F_OK), 0);
    ck_assert_int_eq(access(mine, R_OK), 0);
    tu_libctx_free(lc);
    /* the parent's own file goes when it unloads */
    ck_assert_int_ne(access(mine, F_OK), 0);
}
END_TEST

static Suite *make_metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tp = tcase_create("parser"), *tc = tcase_create("file"), *tf = tcase_create("fork");

    tcase_add_test(tp, test_parser_rejects_malformed_text);
    suite_add_tcase(s, tp);
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_file_at_load_is_valid);
    tcase_add_test(tc, test_counters_equal_parameters);
    tcase_add_test(tc, test_last_write_equals_stats_line);
    tcase_add_test(tc, test_reader_never_sees_a_part);
    tcase_add_test(tc, test_lost_folder_logged_once_and_retried);
    suite_add_tcase(s, tc);
    /* ThreadSanitizer cannot follow a child that starts a thread after a
     * threaded parent forked: tests/ci-security.sh excludes the tag there. */
    tcase_set_tags(tf, "fork");
    tcase_set_timeout(tf, 120);
    tcase_add_checked_fixture(tf, setup, teardown);
    tcase_add_test(tf, test_fork_child_writes_its_own_file);
    suite_add_tcase(s, tf);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_metrics_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
