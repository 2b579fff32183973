/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpursa-bench: throughput of the gpu/ layer's batched RSA private operation
 * against OpenSSL's default provider on all cores of the same host.
 *
 *   gpursa-bench [--backend host|cuda] [--bits 2048[,3072...]] [--variant auto|imad|xmad|fast|coop|all]
 *                [--batch N | --sweep] [--max-batch N] [--seconds S] [--keys K]
 *                [--pool P] [--threads T] [--no-cpu] [--csv FILE] [--device I]
 *
 * Keys come from OpenSSL's key generation. Inputs, blinding factors and their
 * inverses come from a pool of P random triples reused across a batch (the
 * kernels are constant time, so the values do not change the timing); the
 * expected result of every pool entry comes from the default provider
 * (EVP_PKEY_sign, RSA_NO_PADDING, i.e. c^d mod n), and EVERY GPU result of
 * every timed batch is compared with it, and every in-kernel check status
 * must be OK: a wrong or faulted result makes the run fail (exit 1).
 *
 * Four batches (--inflight) are kept in flight so that the copies, packing
 * and wipes of each, and this thread's checking and refilling, overlap the
 * others' kernels (the provider's queue keeps up to 16 a device: README,
 * device_batches); with two, a large batch's copies, packing and checks are
 * not all covered by the other's kernels (doc/design.md, "What bounds each
 * kernel now").
 * ops/s is items over wall time, and host_ms what this thread spends per
 * batch between a batch's wait and the next submit (checking, refilling,
 * staging). The kernel and transfer times (CUDA events, from the backend)
 * are those of one more batch run alone after the timed ones (kernel_op/s =
 * batch / its kernel time), since batches in flight share the GPU.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "gpu/gpursa_gpu.h"

#define BENCH_MAX_SIZES 4
#define BENCH_MAX_KEYS 16

typedef struct {
    EVP_PKEY *pkey;
    size_t nbytes;
    unsigned char *buf[7];          /* n e p q dp dq qinv, big-endian */
    size_t len[7];
    gpursa_gpu_key *gkey;
} bench_key;

typedef struct {
    size_t count;                   /* entries */
    unsigned char *in, *r, *rinv, *expect;  /* count * nbytes each */
} bench_pool;

typedef struct {
    const char *backend;
    int bits[BENCH_MAX_SIZES];
    int nbits;
    int variants[GPURSA_VARIANT_COUNT_];
    int nvariants;
    size_t batch;
    int sweep;
    size_t max_batch;
    double seconds;
    int keys;
    size_t pool;
    int threads;
    int no_cpu;
    int inflight;
    int device;
    int host_threads;               /* 0: one per CPU */
    gpursa_fp64 cuda_fp64;
    const char *csv;
    int tty;
} bench_opts;

static FILE *csv_fp;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die_ssl(const char *what)
{
    fprintf(stderr, "gpursa-bench: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    exit(2);
}

/* ---- keys and pool ---------------------------------------------------------- */

static unsigned char *bn_pad(const BIGNUM *bn, size_t len)
{
    unsigned char *b = OPENSSL_malloc(len);
    if (b == NULL || BN_bn2binpad(bn, b, (int)len) < 0)
        die_ssl("BN_bn2binpad");
    return b;
}

static void key_make(bench_key *k, int bits)
{
    static const char *names[7] = {
        OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2,
        OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    int i;

    memset(k, 0, sizeof(*k));
    k->pkey = EVP_RSA_gen((unsigned)bits);
    if (k->pkey == NULL)
        die_ssl("EVP_RSA_gen");
    k->nbytes = (size_t)bits / 8;
    for (i = 0; i < 7; i++) {
        BIGNUM *bn = NULL;
        size_t len;
        if (!EVP_PKEY_get_bn_param(k->pkey, names[i], &bn))
            die_ssl("EVP_PKEY_get_bn_param");
        /* n at full length, e minimal, the CRT values at half length */
        len = i == 0 ? k->nbytes : i == 1 ? (size_t)BN_num_bytes(bn) : k->nbytes / 2;
        k->buf[i] = bn_pad(bn, len);
        k->len[i] = len;
        BN_clear_free(bn);
    }
}

static void key_clear(bench_key *k)
{
    int i;
    for (i = 0; i < 7; i++)
        OPENSSL_clear_free(k->buf[i], k->len[i]);
    EVP_PKEY_free(k->pkey);
    memset(k, 0, sizeof(*k));
}

static void key_material(const bench_key *k, gpursa_rsa_key_material *km)
{
    km->n = k->buf[0];    km->n_len = k->len[0];
    km->e = k->buf[1];    km->e_len = k->len[1];
    km->p = k->buf[2];    km->p_len = k->len[2];
    km->q = k->buf[3];    km->q_len = k->len[3];
    km->dp = k->buf[4];   km->dp_len = k->len[4];
    km->dq = k->buf[5];   km->dq_len = k->len[5];
    km->qinv = k->buf[6]; km->qinv_len = k->len[6];
}

/* c^d mod n through the default provider: the oracle for every result. */
static void rsa_raw_sign(EVP_PKEY *pkey, const unsigned char *in, unsigned char *out, size_t nbytes)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, "provider=default");
    size_t outlen = nbytes;

    if (ctx == NULL || EVP_PKEY_sign_init(ctx) <= 0
        || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) <= 0
        || EVP_PKEY_sign(ctx, out, &outlen, in, nbytes) <= 0 || outlen != nbytes)
        die_ssl("EVP_PKEY_sign (RSA_NO_PADDING)");
    EVP_PKEY_CTX_free(ctx);
}

/* Pool entry i belongs to key i % nkeys. */
static void pool_make(bench_pool *p, bench_key *keys, int nkeys, size_t count)
{
    size_t nb = keys[0].nbytes, i;
    BN_CTX *bnctx = BN_CTX_new();
    BIGNUM *n = BN_new(), *c = BN_new(), *r = BN_new(), *ri = BN_new();

    if (bnctx == NULL || n == NULL || c == NULL || r == NULL || ri == NULL)
        die_ssl("BN_new");
    p->count = count;
    p->in = OPENSSL_malloc(count * nb);
    p->r = OPENSSL_malloc(count * nb);
    p->rinv = OPENSSL_malloc(count * nb);
    p->expect = OPENSSL_malloc(count * nb);
    if (p->in == NULL || p->r == NULL || p->rinv == NULL || p->expect == NULL)
        die_ssl("malloc");
    for (i = 0; i < count; i++) {
        const bench_key *k = &keys[i % (size_t)nkeys];
        BN_bin2bn(k->buf[0], (int)nb, n);
        /* A few edge inputs first (0, 1, n-1), random ones after. */
        if (i == 0)
            BN_zero(c);
        else if (i == 1)
            BN_one(c);
        else if (i == 2) {
            BN_copy(c, n);
            BN_sub_word(c, 1);
        } else if (!BN_rand_range(c, n))
            die_ssl("BN_rand_range");
        do {
            if (!BN_rand_range(r, n))
                die_ssl("BN_rand_range");
        } while (BN_is_zero(r) || BN_mod_inverse(ri, r, n, bnctx) == NULL);
        if (BN_bn2binpad(c, p->in + i * nb, (int)nb) < 0 || BN_bn2binpad(r, p->r + i * nb, (int)nb) < 0
            || BN_bn2binpad(ri, p->rinv + i * nb, (int)nb) < 0)
            die_ssl("BN_bn2binpad");
    }
    BN_free(n); BN_free(c); BN_clear_free(r); BN_clear_free(ri);
    BN_CTX_free(bnctx);
}

typedef struct {
    bench_pool *p;
    bench_key *keys;
    int nkeys;
    size_t from, to;
} pool_job;

static void *pool_expect_thread(void *arg)
{
    pool_job *j = arg;
    size_t nb = j->keys[0].nbytes, i;
    for (i = j->from; i < j->to; i++)
        rsa_raw_sign(j->keys[i % (size_t)j->nkeys].pkey, j->p->in + i * nb, j->p->expect + i * nb, nb);
    return NULL;
}

static void pool_expect(bench_pool *p, bench_key *keys, int nkeys, int threads)
{
    pthread_t tid[256];
    pool_job jobs[256];
    int t;

    if (threads > 256)
        threads = 256;
    for (t = 0; t < threads; t++) {
        jobs[t].p = p;
        jobs[t].keys = keys;
        jobs[t].nkeys = nkeys;
        jobs[t].from = p->count * (size_t)t / (size_t)threads;
        jobs[t].to = p->count * (size_t)(t + 1) / (size_t)threads;
        if (pthread_create(&tid[t], NULL, pool_expect_thread, &jobs[t]) != 0) {
            perror("pthread_create");
            exit(2);
        }
    }
    for (t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
}

static void pool_clear(bench_pool *p, size_t nb)
{
    OPENSSL_clear_free(p->in, p->count * nb);
    OPENSSL_clear_free(p->r, p->count * nb);
    OPENSSL_clear_free(p->rinv, p->count * nb);
    OPENSSL_clear_free(p->expect, p->count * nb);
    memset(p, 0, sizeof(*p));
}

/* ---- the default provider on all cores --------------------------------------- */

typedef struct {
    const bench_key *key;
    double seconds;
    unsigned long ops;
} cpu_job;

static void *cpu_thread(void *arg)
{
    cpu_job *j = arg;
    const bench_key *k = j->key;
    size_t nb = k->nbytes, outlen;
    unsigned char *der = NULL, *in = malloc(nb), *out = malloc(nb);
    const unsigned char *dp;
    EVP_PKEY *own = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    double t0, end;
    int len;

    /* Each thread its own key object, as `openssl speed -multi` has one per
     * process: no shared blinding state between threads. */
    len = i2d_PrivateKey(k->pkey, &der);
    dp = der;
    if (len <= 0 || (own = d2i_PrivateKey(EVP_PKEY_RSA, NULL, &dp, len)) == NULL)
        die_ssl("i2d/d2i_PrivateKey");
    ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, "provider=default");
    if (ctx == NULL || in == NULL || out == NULL || EVP_PKEY_sign_init(ctx) <= 0
        || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) <= 0)
        die_ssl("EVP_PKEY_sign_init");
    memset(in, 0x5a, nb);
    in[0] = 0x01;                   /* below n */
    t0 = now_s();
    end = t0 + j->seconds;
    while (now_s() < end) {
        int i;
        for (i = 0; i < 8; i++) {
            outlen = nb;
            if (EVP_PKEY_sign(ctx, out, &outlen, in, nb) <= 0)
                die_ssl("EVP_PKEY_sign");
            j->ops++;
        }
    }
    j->seconds = now_s() - t0;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(own);
    OPENSSL_clear_free(der, (size_t)len);
    free(in);
    free(out);
    return NULL;
}

static double cpu_measure(const bench_key *k, int threads, double seconds)
{
    pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
    cpu_job *jobs = calloc((size_t)threads, sizeof(*jobs));
    double rate = 0.0;
    int t;

    if (tid == NULL || jobs == NULL) {
        perror("calloc");
        exit(2);
    }
    for (t = 0; t < threads; t++) {
        jobs[t].key = k;
        jobs[t].seconds = seconds;
        if (pthread_create(&tid[t], NULL, cpu_thread, &jobs[t]) != 0) {
            perror("pthread_create");
            exit(2);
        }
    }
    for (t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        rate += jobs[t].ops / jobs[t].seconds;
    }
    free(tid);
    free(jobs);
    return rate;
}

/* ---- the GPU side --------------------------------------------------------------- */

typedef struct {
    gpursa_gpu_batch *b;
    gpursa_gpu_item *items;
    unsigned char *out;
    size_t n;
    int busy;
} bench_slot;

/* Batches in flight at most (--inflight) */
#define BENCH_MAX_INFLIGHT 4

typedef struct {
    double wall;                              /* seconds, the timed batches */
    double host;                              /* seconds of it spent here between a batch's
                                               * wait and the next submit, all batches */
    double kernel, copy_in, copy_out;         /* seconds, one batch run alone */
    size_t items, batches, bad, faults;
} bench_result;

static void slot_fill(bench_slot *s, const bench_pool *p, bench_key *keys, int nkeys, size_t nb,
                      size_t n, size_t offset)
{
    size_t i;
    s->n = n;
    for (i = 0; i < n; i++) {
        size_t e = (offset + i) % p->count;
        gpursa_gpu_item *it = &s->items[i];
        it->key = keys[e % (size_t)nkeys].gkey;
        it->in = p->in + e * nb;
        it->r = p->r + e * nb;
        it->rinv = p->rinv + e * nb;
        it->out = s->out + i * nb;
        it->status = GPURSA_ITEM_PENDING;
        /* poison: an output the backend forgot to write cannot match */
        s->out[i * nb] ^= 0xa5;
    }
}

/* Every result against the oracle, every status OK. */
static void slot_check(const bench_slot *s, const bench_pool *p, size_t nb, size_t offset,
                       bench_result *res)
{
    size_t i;
    for (i = 0; i < s->n; i++) {
        size_t e = (offset + i) % p->count;
        if (s->items[i].status != GPURSA_ITEM_OK) {
            res->faults++;
            if (res->faults <= 3)
                fprintf(stderr, "gpursa-bench: item %zu status %d\n", i, s->items[i].status);
        } else if (memcmp(s->out + i * nb, p->expect + e * nb, nb) != 0) {
            res->bad++;
            if (res->bad <= 3)
                fprintf(stderr, "gpursa-bench: item %zu (pool %zu) WRONG result\n", i, e);
        }
    }
}

static void progress(const bench_opts *o, const char *label, double frac)
{
    int w = 30, i, fill;
    if (!o->tty)
        return;
    if (frac > 1.0)
        frac = 1.0;
    fill = (int)(frac * w);
    fprintf(stderr, "\r%-28s [", label);
    for (i = 0; i < w; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%%", (int)(frac * 100));
    fflush(stderr);
}

static int run_gpu(const bench_opts *o, const gpursa_gpu_backend_ops *ops, gpursa_gpu_device *dev,
                   int bits, bench_key *keys, int nkeys, const bench_pool *p, size_t batch,
                   const char *label, bench_result *res)
{
    bench_slot s[BENCH_MAX_INFLIGHT];
    size_t nb = (size_t)bits / 8, offset = 0, sub_off[BENCH_MAX_INFLIGHT] = {0};
    double t0, tend, kt, ci, co, th;
    int i, rc = 0, cur;

    memset(res, 0, sizeof(*res));
    memset(s, 0, sizeof(s));
    for (i = 0; i < o->inflight; i++) {
        rc = ops->batch_new(dev, bits, batch, &s[i].b);
        if (rc != GPURSA_GPU_OK) {
            fprintf(stderr, "gpursa-bench: batch_new(%d, %zu): %s\n", bits, batch, gpursa_gpu_rc_string(rc));
            goto out;
        }
        s[i].items = calloc(batch, sizeof(gpursa_gpu_item));
        s[i].out = calloc(batch, nb);
        if (s[i].items == NULL || s[i].out == NULL) {
            rc = GPURSA_GPU_ERR_NOMEM;
            goto out;
        }
    }
    /* Warm-up batch (module load, first-touch of staging), not timed but checked. */
    slot_fill(&s[0], p, keys, nkeys, nb, batch, 0);
    if ((rc = ops->batch_submit(s[0].b, s[0].items, batch)) != GPURSA_GPU_OK
        || (rc = ops->batch_wait(s[0].b)) != GPURSA_GPU_OK) {
        fprintf(stderr, "gpursa-bench: warm-up batch: %s\n", gpursa_gpu_rc_string(rc));
        goto out;
    }
    slot_check(&s[0], p, nb, 0, res);

    t0 = now_s();
    tend = t0 + o->seconds;
    cur = 0;
    /* Keep o->inflight batches in flight, taken in turn; stop submitting
     * when time is up, after at least two timed batches, and collect the
     * ones still in flight. */
    for (;;) {
        bench_slot *sl = &s[cur];
        th = 0.0;
        if (sl->busy) {
            rc = ops->batch_wait(sl->b);
            th = now_s();
            if (rc != GPURSA_GPU_OK) {
                fprintf(stderr, "gpursa-bench: batch_wait: %s\n", gpursa_gpu_rc_string(rc));
                goto out;
            }
            sl->busy = 0;
            ops->batch_times(sl->b, &kt, &ci, &co);
            (void)kt; (void)ci; (void)co;
            res->items += sl->n;
            res->batches++;
            slot_check(sl, p, nb, sub_off[cur], res);
            progress(o, label, (now_s() - t0) / o->seconds);
        }
        if (now_s() >= tend && res->batches >= 2) {
            int busy = 0;
            for (i = 0; i < o->inflight; i++)
                busy |= s[i].busy;
            if (!busy)
                break;
            cur = (cur + 1) % o->inflight;
            continue;
        }
        offset = (offset + 7919) % p->count;  /* vary which pool entries go where */
        slot_fill(sl, p, keys, nkeys, nb, batch, offset);
        sub_off[cur] = offset;
        rc = ops->batch_submit(sl->b, sl->items, batch);
        if (rc != GPURSA_GPU_OK) {
            fprintf(stderr, "gpursa-bench: batch_submit: %s\n", gpursa_gpu_rc_string(rc));
            goto out;
        }
        sl->busy = 1;
        if (th > 0.0)
            res->host += now_s() - th;
        cur = (cur + 1) % o->inflight;
    }
    res->wall = now_s() - t0;
    /* Kernel and copy times of one batch alone: batches in flight share the
     * GPU, and each one's events span the others' kernels. */
    slot_fill(&s[0], p, keys, nkeys, nb, batch, 0);
    if ((rc = ops->batch_submit(s[0].b, s[0].items, batch)) != GPURSA_GPU_OK
        || (rc = ops->batch_wait(s[0].b)) != GPURSA_GPU_OK) {
        fprintf(stderr, "gpursa-bench: lone batch: %s\n", gpursa_gpu_rc_string(rc));
        goto out;
    }
    slot_check(&s[0], p, nb, 0, res);
    ops->batch_times(s[0].b, &res->kernel, &res->copy_in, &res->copy_out);
    if (o->tty)
        fprintf(stderr, "\r%*s\r", 72, "");
out:
    for (i = 0; i < BENCH_MAX_INFLIGHT; i++) {
        if (s[i].busy)
            (void)ops->batch_wait(s[i].b);
        if (s[i].b != NULL)
            ops->batch_free(s[i].b);
        free(s[i].items);
        if (s[i].out != NULL)
            OPENSSL_clear_free(s[i].out, batch * nb);
    }
    return rc;
}

/* ---- options ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpursa-bench [options]\n"
            "  --backend host|cuda     gpu/ backend (default cuda)\n"
            "  --bits LIST             modulus sizes, e.g. 2048 or 1024,2048,3072,4096 (default 2048)\n"
            "  --variant LIST|all      auto, imad, xmad, fast, coop (default auto)\n"
            "  --batch N               items per batch (default 65536)\n"
            "  --sweep                 batch sizes 1, 2, 4, ... up to --max-batch\n"
            "  --max-batch N           largest batch of the sweep (default 1048576)\n"
            "  --seconds S             timed duration per point (default 2)\n"
            "  --keys K                distinct keys per batch (default 1)\n"
            "  --pool P                distinct inputs, each checked against OpenSSL (default 1024)\n"
            "  --threads T             CPU threads for the default provider (default: all cores)\n"
            "  --no-cpu                skip the default-provider measurement\n"
            "  --device I              device index (default 0)\n"
            "  --inflight N            batches in flight, 1 to 4 (default 4: copies overlap compute)\n"
            "  --host-threads N        host backend: worker threads (default: one per CPU, at most 16)\n"
            "  --cuda-fp64 auto|0|1    cuda: count the device as without (0) or with (1) full-rate\n"
            "                          FP64, as the cuda_fp64 key does (default auto)\n"
            "  --csv FILE              append one CSV row per point\n");
}

static int parse_list_int(const char *s, int *out, int max)
{
    int n = 0;
    char *end;
    while (*s != '\0' && n < max) {
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0)
            return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return n;
}

static int parse_variants(const char *s, int *out)
{
    char buf[128], *tok, *save = NULL;
    int n = 0;
    gpursa_variant v;

    if (strcmp(s, "all") == 0) {
        out[n++] = GPURSA_VARIANT_IMAD;
        out[n++] = GPURSA_VARIANT_XMAD;
        out[n++] = GPURSA_VARIANT_FAST;
        out[n++] = GPURSA_VARIANT_COOP;
        return n;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok != NULL && n < GPURSA_VARIANT_COUNT_;
         tok = strtok_r(NULL, ",", &save)) {
        if (gpursa_variant_from_name(tok, &v) != 1)
            return -1;
        out[n++] = v;
    }
    return n;
}

static void parse_opts(int argc, char **argv, bench_opts *o)
{
    static const struct option lo[] = {
        {"backend", required_argument, NULL, 'B'}, {"bits", required_argument, NULL, 'b'},
        {"variant", required_argument, NULL, 'v'}, {"batch", required_argument, NULL, 'n'},
        {"sweep", no_argument, NULL, 'S'},         {"max-batch", required_argument, NULL, 'M'},
        {"seconds", required_argument, NULL, 's'}, {"keys", required_argument, NULL, 'k'},
        {"pool", required_argument, NULL, 'p'},    {"threads", required_argument, NULL, 't'},
        {"no-cpu", no_argument, NULL, 'C'},        {"device", required_argument, NULL, 'd'},
        {"csv", required_argument, NULL, 'c'},     {"help", no_argument, NULL, 'h'},
        {"inflight", required_argument, NULL, 'i'},
        {"host-threads", required_argument, NULL, 'T'}, {"cuda-fp64", required_argument, NULL, 'F'},
        {NULL, 0, NULL, 0},
    };
    int c;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);

    memset(o, 0, sizeof(*o));
    o->backend = "cuda";
    o->bits[0] = 2048;
    o->nbits = 1;
    o->variants[0] = GPURSA_VARIANT_AUTO;
    o->nvariants = 1;
    o->batch = 65536;
    o->max_batch = 1u << 20;
    o->seconds = 2.0;
    o->keys = 1;
    o->pool = 1024;
    o->threads = nproc > 0 ? (int)nproc : 1;
    o->inflight = BENCH_MAX_INFLIGHT;
    o->tty = isatty(2);
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'B': o->backend = optarg; break;
        case 'b':
            o->nbits = parse_list_int(optarg, o->bits, BENCH_MAX_SIZES);
            if (o->nbits <= 0) { fprintf(stderr, "bad --bits\n"); exit(2); }
            break;
        case 'v':
            o->nvariants = parse_variants(optarg, o->variants);
            if (o->nvariants <= 0) { fprintf(stderr, "bad --variant\n"); exit(2); }
            break;
        case 'n': o->batch = strtoul(optarg, NULL, 0); break;
        case 'S': o->sweep = 1; break;
        case 'M': o->max_batch = strtoul(optarg, NULL, 0); break;
        case 's': o->seconds = strtod(optarg, NULL); break;
        case 'k': o->keys = atoi(optarg); break;
        case 'p': o->pool = strtoul(optarg, NULL, 0); break;
        case 't': o->threads = atoi(optarg); break;
        case 'C': o->no_cpu = 1; break;
        case 'd': o->device = atoi(optarg); break;
        case 'i': o->inflight = atoi(optarg); break;
        case 'c': o->csv = optarg; break;
        case 'T': o->host_threads = atoi(optarg); break;
        case 'F':
            if (strcmp(optarg, "auto") == 0 || strcmp(optarg, "0") == 0 || strcmp(optarg, "1") == 0)
                o->cuda_fp64 = optarg[0] == 'a' ? GPURSA_FP64_AUTO
                               : optarg[0] == '0' ? GPURSA_FP64_OFF : GPURSA_FP64_ON;
            else { fprintf(stderr, "bad --cuda-fp64\n"); exit(2); }
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (o->batch == 0 || o->max_batch == 0 || o->seconds <= 0 || o->keys < 1
        || o->keys > BENCH_MAX_KEYS || o->pool < 3 || o->threads < 1 || o->inflight < 1
        || o->inflight > BENCH_MAX_INFLIGHT || o->host_threads < 0
        || o->host_threads > GPURSA_HOST_MAX_THREADS) {
        usage(stderr);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    const gpursa_gpu_backend_ops *ops;
    gpursa_backend_kind kind;
    int bi, vi, k, failed = 0;
    char stamp[32];
    time_t tnow = time(NULL);

    parse_opts(argc, argv, &o);
    if (strcmp(o.backend, "cuda") == 0)
        kind = GPURSA_BACKEND_CUDA;
    else if (strcmp(o.backend, "host") == 0)
        kind = GPURSA_BACKEND_HOST;
    else {
        fprintf(stderr, "gpursa-bench: unknown backend %s\n", o.backend);
        return 2;
    }
    ops = gpursa_gpu_backend(kind);
    if (ops == NULL) {
        fprintf(stderr, "gpursa-bench: backend %s not built\n", o.backend);
        return 77;
    }
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&tnow));
    if (o.csv != NULL) {
        int fresh = access(o.csv, F_OK) != 0;
        csv_fp = fopen(o.csv, "a");
        if (csv_fp == NULL) {
            fprintf(stderr, "gpursa-bench: %s: %s\n", o.csv, strerror(errno));
            return 2;
        }
        if (fresh)
            fprintf(csv_fp, "date,backend,device,variant,bits,batch,batches,items,wall_s,ops_per_s,"
                            "kernel_ms,copy_in_ms,copy_out_ms,kernel_ops_per_s,wrong,faults,"
                            "cpu_threads,cpu_ops_per_s\n");
    }

    for (bi = 0; bi < o.nbits; bi++) {
        int bits = o.bits[bi];
        bench_key keys[BENCH_MAX_KEYS];
        bench_pool pool;
        double cpu_rate = 0.0;
        size_t pool_n = o.pool;

        fprintf(stderr, "gpursa-bench: RSA-%d: generating %d key(s) and a pool of %zu checked inputs\n",
                bits, o.keys, pool_n);
        for (k = 0; k < o.keys; k++)
            key_make(&keys[k], bits);
        pool_make(&pool, keys, o.keys, pool_n);
        pool_expect(&pool, keys, o.keys, o.threads);
        if (!o.no_cpu) {
            cpu_rate = cpu_measure(&keys[0], o.threads, o.seconds < 2.0 ? 2.0 : o.seconds);
            printf("RSA-%d default provider, %d threads: %.0f ops/s\n", bits, o.threads, cpu_rate);
            fflush(stdout);
        }
        for (vi = 0; vi < o.nvariants; vi++) {
            gpursa_gpu_device *dev = NULL;
            const char *desc;
            size_t batch;
            gpursa_gpu_open_params op = { (gpursa_variant)o.variants[vi], o.host_threads,
                                          o.cuda_fp64, 0 };
            int rc = ops->device_open(o.device, &op, &dev);

            if (rc != GPURSA_GPU_OK) {
                fprintf(stderr, "gpursa-bench: device_open(%d, %s): %s\n", o.device,
                        gpursa_variant_name((gpursa_variant)o.variants[vi]), gpursa_gpu_rc_string(rc));
                if (kind == GPURSA_BACKEND_CUDA && rc == GPURSA_GPU_ERR_NODEV)
                    return 77;
                failed = 1;
                continue;
            }
            desc = ops->device_describe(dev);
            for (k = 0; k < o.keys; k++) {
                gpursa_rsa_key_material km;
                key_material(&keys[k], &km);
                rc = ops->key_upload(dev, &km, &keys[k].gkey);
                if (rc != GPURSA_GPU_OK) {
                    fprintf(stderr, "gpursa-bench: key_upload: %s\n", gpursa_gpu_rc_string(rc));
                    break;
                }
            }
            printf("RSA-%d on %s\n%10s %10s %12s %10s %10s %10s %12s %10s %s\n", bits, desc, "batch",
                   "batches", "ops/s", "kernel_ms", "in_ms", "out_ms", "kernel_op/s", "host_ms",
                   "verified");
            for (batch = o.sweep ? 1 : o.batch; rc == GPURSA_GPU_OK && batch <= (o.sweep ? o.max_batch : o.batch);
                 batch *= 2) {
                bench_result r;
                char label[64];
                double kms, ims, oms, rate, krate;

                snprintf(label, sizeof(label), "RSA-%d %s batch %zu", bits,
                         gpursa_variant_name((gpursa_variant)o.variants[vi]), batch);
                rc = run_gpu(&o, ops, dev, bits, keys, o.keys, &pool, batch, label, &r);
                if (rc != GPURSA_GPU_OK) {
                    failed = 1;
                    break;
                }
                rate = r.items / r.wall;
                kms = r.kernel * 1e3;
                ims = r.copy_in * 1e3;
                oms = r.copy_out * 1e3;
                krate = r.kernel > 0 ? batch / r.kernel : 0.0;
                printf("%10zu %10zu %12.0f %10.3f %10.3f %10.3f %12.0f %10.3f %s\n", batch, r.batches, rate,
                       kms, ims, oms, krate, r.batches > 0 ? r.host / (double)r.batches * 1e3 : 0.0,
                       r.bad == 0 && r.faults == 0 ? "all OK" : "FAILED");
                fflush(stdout);
                if (r.bad != 0 || r.faults != 0) {
                    fprintf(stderr, "gpursa-bench: %zu wrong results, %zu faults in %zu items\n",
                            r.bad, r.faults, r.items);
                    failed = 1;
                }
                if (csv_fp != NULL) {
                    char cdesc[256], *c;
                    snprintf(cdesc, sizeof(cdesc), "%s", desc);
                    for (c = cdesc; *c != '\0'; c++)
                        if (*c == ',' || *c == '"')
                            *c = ';';
                    fprintf(csv_fp, "%s,%s,%s,%s,%d,%zu,%zu,%zu,%.4f,%.1f,%.4f,%.4f,%.4f,%.1f,%zu,%zu,%d,%.1f\n",
                            stamp, o.backend, cdesc, gpursa_variant_name((gpursa_variant)o.variants[vi]),
                            bits, batch, r.batches, r.items, r.wall, rate, kms, ims, oms, krate, r.bad,
                            r.faults, o.no_cpu ? 0 : o.threads, cpu_rate);
                    fflush(csv_fp);
                }
            }
            for (k = 0; k < o.keys; k++) {
                ops->key_free(dev, keys[k].gkey);
                keys[k].gkey = NULL;
            }
            ops->device_close(dev);
        }
        pool_clear(&pool, (size_t)bits / 8);
        for (k = 0; k < o.keys; k++)
            key_clear(&keys[k]);
    }
    if (csv_fp != NULL)
        fclose(csv_fp);
    return failed ? 1 : 0;
}
