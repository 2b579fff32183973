/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Live metrics: a thread of the process writes gpursa's counters, gauges and
 * histograms in Prometheus' text exposition format (version 0.0.4) to
 * metrics_file every metrics_interval_ms, which node_exporter's textfile
 * collector and other Prometheus scrapers read as they are.
 *
 * The request path gains nothing but relaxed atomic increments (the
 * counters of gpursa_stats, the stage histograms): this thread reads them
 * and takes no lock that a request takes, except each device's own lock
 * for its up/down state, for an instant per interval.
 *
 * Each write goes to a temporary file in the same folder (".NAME.XXXXXX",
 * which a collector reading *.prom ignores) and is renamed over the file, so
 * a reader sees the old file or the new one, never a part. A write that
 * fails (disk full, folder gone) is logged once and tried again at the next
 * interval; the requests never wait for it.
 *
 * fork(): the thread does not exist in the child. The child handler starts
 * a new one there, which first writes after one interval (a child that
 * calls exec or exits at once writes nothing); with %p in the name each
 * process (nginx workers, openssl speed -multi) writes its own file.
 */
#define _GNU_SOURCE               /* mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "config.h"
#include "queue/gpursa_queue_int.h"

struct gpursa_metrics {
    gpursa_config cfg;           /* metrics_file (the pattern), interval, log level */
    gpursa_stats *stats;
    gpursa_queue *q;             /* NULL with backend = cpu */
    char path[GPURSA_METRICS_PATH_MAX];  /* the pattern for this process */
    int per_process;             /* the pattern has %p */
    double start_time;           /* this process's start, seconds since the epoch */
    size_t last_len;             /* the last text's length: the next buffer's size */
    int failing;                 /* the last write failed (logged once) */
    /* under gpursa_metrics_lock */
    pthread_cond_t cond;         /* stop, on CLOCK_MONOTONIC */
    pthread_t th;
    int running;                 /* a thread of this process runs for it */
    int stop;
    struct gpursa_metrics *next; /* gpursa_metrics_live */
};

/* Guards every object's thread state and the list of live objects; fork()
 * takes it in the prepare handler, so the child finds the list consistent. */
static pthread_mutex_t gpursa_metrics_lock = PTHREAD_MUTEX_INITIALIZER;
static gpursa_metrics *gpursa_metrics_live;
static pthread_once_t gpursa_metrics_once = PTHREAD_ONCE_INIT;

int gpursa_metrics_path(const char *pattern, long pid, char *out, size_t outlen)
{
    size_t n = 0;
    int w;

    if (pattern[0] != '/')
        return 0;
    for (const char *p = pattern; *p != '\0'; p++) {
        if (*p == '%') {
            p++;
            if (*p == 'p') {
                w = snprintf(out + n, outlen - n, "%ld", pid);
                if (w < 0 || (size_t)w >= outlen - n)
                    return 0;
                n += (size_t)w;
                continue;
            }
            if (*p != '%')
                return 0;
        }
        if (n + 1 >= outlen)
            return 0;
        out[n++] = *p;
    }
    out[n] = '\0';
    /* a folder and a file name */
    return n > 1 && out[n - 1] != '/';
}

/* A temporary name next to path: "FOLDER/.NAME.XXXXXX". */
static int gpursa_metrics_tmpname(const char *path, char *out, size_t outlen)
{
    const char *slash = strrchr(path, '/');
    int w = snprintf(out, outlen, "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);

    if (w < 0 || (size_t)w >= outlen) {
        errno = ENAMETOOLONG;
        return 0;
    }
    return 1;
}

int gpursa_metrics_probe(const char *pattern)
{
    char path[GPURSA_METRICS_PATH_MAX], tmp[GPURSA_METRICS_PATH_MAX + 16];
    int fd;

    if (!gpursa_metrics_path(pattern, (long)getpid(), path, sizeof(path))) {
        errno = EINVAL;
        return 0;
    }
    if (!gpursa_metrics_tmpname(path, tmp, sizeof(tmp)))
        return 0;
    if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
        return 0;
    close(fd);
    unlink(tmp);
    return 1;
}

/* Seconds since the epoch when this process started (/proc), else now. */
static double gpursa_process_start(void)
{
    char buf[1024], *p;
    unsigned long long ticks = 0, btime = 0;
    long hz = sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/self/stat", "re");
    int field, ok = 0;

    if (f != NULL) {
        /* after "pid (comm) ", whose comm may hold spaces: field 22 is starttime */
        if (fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL) {
            for (field = 2; p != NULL && field < 22; field++)
                p = strchr(p + 1, ' ');
            ok = p != NULL && sscanf(p + 1, "%llu", &ticks) == 1;
        }
        fclose(f);
    }
    if (ok && (f = fopen("/proc/stat", "re")) != NULL) {
        ok = 0;
        while (fgets(buf, sizeof(buf), f) != NULL)
            if (sscanf(buf, "btime %llu", &btime) == 1) {
                ok = 1;
                break;
            }
        fclose(f);
    }
    if (ok && hz > 0)
        return (double)btime + (double)ticks / (double)hz;
    return (double)time(NULL);
}

/* ---- the text ---- */

typedef struct {
    char *buf;
    size_t len, cap;             /* len counts what did not fit too */
} gpursa_text;

static void gpursa_put(gpursa_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gpursa_put(gpursa_text *t, const char *fmt, ...)
{
    va_list ap;
    int w;

    va_start(ap, fmt);
    w = vsnprintf(t->len < t->cap ? t->buf + t->len : NULL, t->len < t->cap ? t->cap - t->len : 0,
                  fmt, ap);
    va_end(ap);
    if (w > 0)
        t->len += (size_t)w;
}

static void gpursa_family(gpursa_text *t, const char *name, const char *type, const char *help)
{
    gpursa_put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Microseconds as seconds, exactly. */
static void gpursa_put_us(gpursa_text *t, uint64_t us)
{
    gpursa_put(t, "%llu.%06llu", (unsigned long long)(us / 1000000u),
               (unsigned long long)(us % 1000000u));
}

/* Histogram bounds of the stage times: 2^4 .. 2^24 microseconds (16 µs to
 * 16.8 s), exact bucket bounds of the stages' log-linear histograms. */
#define GPURSA_LAT_E0 4u
#define GPURSA_LAT_N 21u

/* One histogram of stage s: name{label="value",le=...}; label may be NULL. */
static void gpursa_put_stage(gpursa_text *t, const gpursa_stages *h, int s, const char *name,
                             const char *label, const char *value)
{
    uint64_t below[GPURSA_LAT_N], count, sum_us;
    char lab[96] = "";

    gpursa_stages_cumulative(h, s, GPURSA_LAT_E0, GPURSA_LAT_N, below, &count, &sum_us);
    if (label != NULL)
        snprintf(lab, sizeof(lab), "%s=\"%s\",", label, value);
    for (unsigned i = 0; i < GPURSA_LAT_N; i++) {
        gpursa_put(t, "%s_bucket{%sle=\"", name, lab);
        gpursa_put_us(t, (uint64_t)1 << (GPURSA_LAT_E0 + i));
        gpursa_put(t, "\"} %llu\n", (unsigned long long)below[i]);
    }
    gpursa_put(t, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, lab, (unsigned long long)count);
    if (label != NULL)
        snprintf(lab, sizeof(lab), "{%s=\"%s\"}", label, value);
    gpursa_put(t, "%s_sum%s ", name, lab);
    gpursa_put_us(t, sum_us);
    gpursa_put(t, "\n%s_count%s %llu\n", name, lab, (unsigned long long)count);
}

#define GPURSA_LOAD(x) ((unsigned long long)atomic_load_explicit(&(x), memory_order_relaxed))

static void gpursa_put_counters(gpursa_text *t, gpursa_stats *st)
{
    static const char *const paths[GPURSA_NPATHS] = { "gpu", "host", "cpu", "inline" };
    static const struct {
        const char *reason;
        size_t off;
    } fb[] = {
        { "small_batch", offsetof(gpursa_stats, fb_small_batch) },
        { "unsupported_key", offsetof(gpursa_stats, fb_unsupported_key) },
        { "gpu_error", offsetof(gpursa_stats, fb_gpu_error) },
        { "no_device", offsetof(gpursa_stats, fb_no_device) },
        { "inline", offsetof(gpursa_stats, fb_inline) },
    };
    unsigned long long cum = 0, b[GPURSA_BATCH_BUCKETS];

    gpursa_family(t, "gpursa_operations_total", "counter",
                  "RSA private-key operations completed, by where they ran (gpu: a CUDA "
                  "device; host: the host backend; cpu: CPU workers; inline: the calling "
                  "thread) and modulus size (other: sizes the GPU path does not take).");
    for (int p = 0; p < GPURSA_NPATHS; p++)
        for (int s = 0; s <= GPURSA_NSIZES; s++) {
            if (s < GPURSA_NSIZES)
                gpursa_put(t, "gpursa_operations_total{path=\"%s\",key_bits=\"%d\"} %llu\n",
                           paths[p], gpursa_size_bits[s], GPURSA_LOAD(st->ops_by_size[p][s]));
            else
                gpursa_put(t, "gpursa_operations_total{path=\"%s\",key_bits=\"other\"} %llu\n",
                           paths[p], GPURSA_LOAD(st->ops_by_size[p][s]));
        }
    gpursa_family(t, "gpursa_fallbacks_total", "counter",
                  "Operations that went to the CPU instead of a device, by reason.");
    for (size_t i = 0; i < sizeof(fb) / sizeof(fb[0]); i++)
        gpursa_put(t, "gpursa_fallbacks_total{reason=\"%s\"} %llu\n", fb[i].reason,
                   GPURSA_LOAD(*(atomic_uint_fast64_t *)((char *)st + fb[i].off)));
    gpursa_family(t, "gpursa_faults_detected_total", "counter",
                  "Device results that failed the check out^e == in (never released).");
    gpursa_put(t, "gpursa_faults_detected_total %llu\n", GPURSA_LOAD(st->faults));
    gpursa_family(t, "gpursa_faults_recomputed_total", "counter",
                  "Operations of a device batch recomputed on the CPU after a failed result.");
    gpursa_put(t, "gpursa_faults_recomputed_total %llu\n", GPURSA_LOAD(st->recomputed));
    gpursa_family(t, "gpursa_batches_total", "counter", "Batches run by a gpu/ backend.");
    gpursa_put(t, "gpursa_batches_total %llu\n", GPURSA_LOAD(st->batches));
    /* The buckets first and the count from them: +Inf equals _count. */
    for (unsigned i = 0; i < GPURSA_BATCH_BUCKETS; i++)
        b[i] = GPURSA_LOAD(st->batch_sizes[i]);
    gpursa_family(t, "gpursa_batch_size", "histogram", "Operations per batch.");
    for (unsigned i = 0; i < GPURSA_BATCH_BUCKETS - 1; i++) {
        cum += b[i];
        gpursa_put(t, "gpursa_batch_size_bucket{le=\"%llu\"} %llu\n", 1ull << i, cum);
    }
    cum += b[GPURSA_BATCH_BUCKETS - 1];
    gpursa_put(t, "gpursa_batch_size_bucket{le=\"+Inf\"} %llu\n", cum);
    gpursa_put(t, "gpursa_batch_size_sum %llu\ngpursa_batch_size_count %llu\n",
               GPURSA_LOAD(st->batch_items), cum);
}

static void gpursa_put_queue(gpursa_text *t, gpursa_queue *q)
{
    int ndev = gpursa_queue_devices(q), index, up;
    uint64_t reopens;

    gpursa_family(t, "gpursa_requests_in_flight", "gauge",
                  "Operations queued or running in the batching queue now.");
    gpursa_put(t, "gpursa_requests_in_flight %u\n", gpursa_queue_inflight(q));
    gpursa_family(t, "gpursa_requests_waiting", "gauge",
                  "Callers held back now because max_inflight operations are in flight.");
    gpursa_put(t, "gpursa_requests_waiting %u\n", gpursa_queue_waiting(q));
    gpursa_family(t, "gpursa_device_up", "gauge",
                  "1 while the device takes batches, 0 while it is down (batches go to the "
                  "CPU until it reopens).");
    for (int i = 0; i < ndev; i++)
        if (gpursa_queue_device_state(q, i, &index, &up, &reopens))
            gpursa_put(t, "gpursa_device_up{device=\"%d\"} %d\n", index, up);
    gpursa_family(t, "gpursa_device_reopens_total", "counter",
                  "Times the device was reopened after it went down.");
    for (int i = 0; i < ndev; i++)
        if (gpursa_queue_device_state(q, i, &index, &up, &reopens))
            gpursa_put(t, "gpursa_device_reopens_total{device=\"%d\"} %llu\n", index,
                       (unsigned long long)reopens);
}

static void gpursa_put_stages(gpursa_text *t, const gpursa_stages *h, const char *gpu_path)
{
    static const int batch_wall[] = {
        GPURSA_STAGE_START, GPURSA_STAGE_PREP, GPURSA_STAGE_SUBMIT, GPURSA_STAGE_TOPUP,
        GPURSA_STAGE_DEVICE, GPURSA_STAGE_KERNEL, GPURSA_STAGE_DONE,
    };
    static const struct {
        int stage;
        const char *name;
    } batch_cpu[] = {
        { GPURSA_STAGE_CPU_PREP, "prep" }, { GPURSA_STAGE_CPU_SUBMIT, "submit" },
        { GPURSA_STAGE_CPU_TOPUP, "topup" }, { GPURSA_STAGE_CPU_WAIT, "wait" },
        { GPURSA_STAGE_CPU_DONE, "done" },
    };

    gpursa_family(t, "gpursa_request_wait_seconds", "histogram",
                  "Time a device request waited in the queue until its batch was handed "
                  "to a runner.");
    gpursa_put_stage(t, h, GPURSA_STAGE_WAIT, "gpursa_request_wait_seconds", NULL, NULL);
    gpursa_family(t, "gpursa_request_duration_seconds", "histogram",
                  "Time from queueing a request to its answer, by where it ran (requests "
                  "computed on the calling thread are not queued).");
    gpursa_put_stage(t, h, GPURSA_STAGE_TOTAL, "gpursa_request_duration_seconds", "path",
                     gpu_path);
    gpursa_put_stage(t, h, GPURSA_STAGE_CPU, "gpursa_request_duration_seconds", "path", "cpu");
    gpursa_family(t, "gpursa_batch_stage_seconds", "histogram",
                  "Wall time of a batch's stages: start (handed over until run), prep, "
                  "submit, topup, device (submitted until the results are home), kernel, "
                  "done (checks and answers).");
    for (size_t i = 0; i < sizeof(batch_wall) / sizeof(batch_wall[0]); i++)
        gpursa_put_stage(t, h, batch_wall[i], "gpursa_batch_stage_seconds", "stage",
                         gpursa_stages_name(batch_wall[i]));
    gpursa_family(t, "gpursa_batch_stage_cpu_seconds", "histogram",
                  "CPU time of the runner thread in a batch's stages.");
    for (size_t i = 0; i < sizeof(batch_cpu) / sizeof(batch_cpu[0]); i++)
        gpursa_put_stage(t, h, batch_cpu[i].stage, "gpursa_batch_stage_cpu_seconds", "stage",
                         batch_cpu[i].name);
}

size_t gpursa_metrics_format(gpursa_metrics *m, char *buf, size_t len)
{
    gpursa_text t = { buf, 0, len };
    const char *backend = gpursa_queue_backend_name(m->q);

    gpursa_family(&t, "gpursa_info", "gauge", "gpursa's version and backend.");
    gpursa_put(&t, "gpursa_info{version=\"%s\",backend=\"%s\"} 1\n", PACKAGE_VERSION, backend);
    gpursa_family(&t, "gpursa_process_start_time_seconds", "gauge",
                  "Start time of the process since the Unix epoch in seconds.");
    gpursa_put(&t, "gpursa_process_start_time_seconds %.2f\n", m->start_time);
    gpursa_put_counters(&t, m->stats);
    if (m->q != NULL)
        gpursa_put_queue(&t, m->q);
    if (m->stats->stages != NULL)
        gpursa_put_stages(&t, m->stats->stages, strcmp(backend, "host") == 0 ? "host" : "gpu");
    /* A reader can tell the whole text (comments are ignored by parsers). */
    gpursa_put(&t, "# EOF\n");
    if (len > 0 && t.len >= len)
        buf[len - 1] = '\0';
    return t.len;
}

/* ---- the file ---- */

static int gpursa_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return 0;
        }
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

/* Writes the file once: 1, or 0 with errno set. Only one thread writes for
 * m at a time (its thread, or the starter and stopper outside its life). */
static int gpursa_metrics_write(gpursa_metrics *m)
{
    char tmp[GPURSA_METRICS_PATH_MAX + 16];
    size_t cap = m->last_len + m->last_len / 2 + 4096, len;
    char *buf = NULL;
    int fd = -1, err;

    for (;;) {
        char *nb = realloc(buf, cap);

        if (nb == NULL) {
            free(buf);
            errno = ENOMEM;
            return 0;
        }
        buf = nb;
        len = gpursa_metrics_format(m, buf, cap);
        if (len < cap)
            break;
        cap = len + 4096;
    }
    m->last_len = len;
    if (!gpursa_metrics_tmpname(m->path, tmp, sizeof(tmp)))
        goto fail;
    if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
        goto fail;
    /* mkostemp makes it 0600; collectors often run as another user */
    if (fchmod(fd, 0644) != 0 || !gpursa_write_all(fd, buf, len) || close(fd) != 0) {
        fd = -1;
        goto fail_unlink;
    }
    fd = -1;
    if (rename(tmp, m->path) != 0)
        goto fail_unlink;
    free(buf);
    return 1;
fail_unlink:
    err = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = err;
fail:
    err = errno;
    free(buf);
    errno = err;
    return 0;
}

/* A periodic write: a failure is logged once, until a write succeeds again. */
static void gpursa_metrics_tick(gpursa_metrics *m)
{
    if (gpursa_metrics_write(m)) {
        if (m->failing)
            gpursa_log_cfg(&m->cfg, 1, "metrics_file %s: written again", m->path);
        m->failing = 0;
    } else if (!m->failing) {
        m->failing = 1;
        gpursa_log_cfg(&m->cfg, 1, "metrics_file %s: cannot write (%s); trying again every "
                       "%u ms", m->path, strerror(errno), m->cfg.metrics_interval_ms);
    }
}

static void *gpursa_metrics_main(void *arg)
{
    gpursa_metrics *m = arg;
    struct timespec until;

    gpursa_thread_name("gpursa-metrics");
    pthread_mutex_lock(&gpursa_metrics_lock);
    while (!m->stop) {
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += m->cfg.metrics_interval_ms / 1000;
        until.tv_nsec += (long)(m->cfg.metrics_interval_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!m->stop && pthread_cond_timedwait(&m->cond, &gpursa_metrics_lock, &until) == 0)
            ;
        if (m->stop)
            break;
        pthread_mutex_unlock(&gpursa_metrics_lock);
        gpursa_metrics_tick(m);
        pthread_mutex_lock(&gpursa_metrics_lock);
    }
    pthread_mutex_unlock(&gpursa_metrics_lock);
    return NULL;
}

/* Starts m's thread (gpursa_metrics_lock held) with every signal blocked:
 * the application's signals (nginx's master waits for them in sigsuspend)
 * must reach its own threads. 1, or 0 with errno set. */
static int gpursa_metrics_thread(gpursa_metrics *m)
{
    sigset_t all, old;
    pthread_condattr_t ca;
    int rc;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cond, &ca);
    pthread_condattr_destroy(&ca);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&m->th, NULL, gpursa_metrics_main, m);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&m->cond);
        errno = rc;
        return 0;
    }
    m->running = 1;
    return 1;
}

static void gpursa_metrics_prepare(void)
{
    pthread_mutex_lock(&gpursa_metrics_lock);
}

static void gpursa_metrics_parent(void)
{
    pthread_mutex_unlock(&gpursa_metrics_lock);
}

/* The parent's threads are gone here: each live object gets this process's
 * file name and start time, and a thread of its own. */
static void gpursa_metrics_child(void)
{
    long pid = (long)getpid();
    double start = gpursa_process_start();

    for (gpursa_metrics *m = gpursa_metrics_live; m != NULL; m = m->next) {
        m->running = 0;
        m->failing = 0;
        m->start_time = start;
        gpursa_metrics_path(m->cfg.metrics_file, pid, m->path, sizeof(m->path));
        if (!m->stop && !gpursa_metrics_thread(m))
            gpursa_log_cfg(&m->cfg, 1, "metrics_file %s: no thread in this process (%s)",
                           m->path, strerror(errno));
    }
    pthread_mutex_unlock(&gpursa_metrics_lock);
}

static void gpursa_metrics_atfork(void)
{
    pthread_atfork(gpursa_metrics_prepare, gpursa_metrics_parent, gpursa_metrics_child);
}

int gpursa_metrics_start(const gpursa_config *cfg, gpursa_stats *stats, gpursa_queue *q,
                         gpursa_metrics **out)
{
    gpursa_metrics *m;
    int err;

    *out = NULL;
    if (stats == NULL) {
        errno = EINVAL;
        return 0;
    }
    pthread_once(&gpursa_metrics_once, gpursa_metrics_atfork);
    if ((m = calloc(1, sizeof(*m))) == NULL)
        return 0;
    m->cfg = *cfg;
    m->stats = stats;
    m->q = q;
    m->per_process = strstr(cfg->metrics_file, "%p") != NULL;
    m->start_time = gpursa_process_start();
    if (!gpursa_metrics_path(cfg->metrics_file, (long)getpid(), m->path, sizeof(m->path))) {
        free(m);
        errno = EINVAL;
        return 0;
    }
    /* The file exists once the provider is loaded, or the load fails. */
    if (!gpursa_metrics_write(m))
        goto fail;
    pthread_mutex_lock(&gpursa_metrics_lock);
    if (!gpursa_metrics_thread(m)) {
        pthread_mutex_unlock(&gpursa_metrics_lock);
        goto fail;
    }
    m->next = gpursa_metrics_live;
    gpursa_metrics_live = m;
    pthread_mutex_unlock(&gpursa_metrics_lock);
    *out = m;
    return 1;
fail:
    err = errno;
    free(m);
    errno = err;
    return 0;
}

void gpursa_metrics_stop(gpursa_metrics *m)
{
    int running;

    if (m == NULL)
        return;
    pthread_mutex_lock(&gpursa_metrics_lock);
    m->stop = 1;
    running = m->running;
    if (running)
        pthread_cond_signal(&m->cond);
    for (gpursa_metrics **p = &gpursa_metrics_live; *p != NULL; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    pthread_mutex_unlock(&gpursa_metrics_lock);
    if (running) {
        pthread_join(m->th, NULL);
        pthread_cond_destroy(&m->cond);
    }
    /* A process's own file goes with it; a shared name keeps the last values. */
    if (m->per_process)
        unlink(m->path);
    else if (!gpursa_metrics_write(m))
        gpursa_log_cfg(&m->cfg, 1, "metrics_file %s: last write failed (%s)", m->path,
                       strerror(errno));
    free(m);
}
